"""Bad input and library failures: clear exceptions with the library's message."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import clmg
from conftest import rhs


def test_complex_refused(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    with pytest.raises(TypeError, match="complex"):
        clmg.solve(spd_matrix.astype(np.complex128), b, context=ctx)
    with pytest.raises(TypeError, match="complex"):
        clmg.solve(spd_matrix.toarray() * (1 + 0j), b, context=ctx)
    with pytest.raises(TypeError, match="complex"):
        clmg.solve(spd_matrix, b + 0j, context=ctx)
    with pytest.raises(TypeError, match="complex"):
        clmg.amg(spd_matrix.astype(np.complex64), context=ctx)


def test_shapes_and_values(ctx, spd_matrix):
    n = spd_matrix.shape[0]
    b = rhs(n)
    with pytest.raises(ValueError, match="square"):
        clmg.solve(sp.csr_array(np.ones((5, 4))), np.ones(5), context=ctx)
    with pytest.raises(ValueError, match="shape"):
        clmg.solve(spd_matrix, b[:-1], context=ctx)
    with pytest.raises(ValueError, match="shape"):
        clmg.solve(spd_matrix, np.ones((n, 2)), context=ctx)
    with pytest.raises(ValueError, match="shape"):
        clmg.solve(spd_matrix, b, np.zeros(3), context=ctx)
    with pytest.raises(ValueError, match="2-D"):
        clmg.solve(np.ones(3), np.ones(3), context=ctx)
    with pytest.raises(ValueError, match="no rows"):
        clmg.solve(sp.csr_array((0, 0)), np.ones(0), context=ctx)
    bad = spd_matrix.copy()
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        clmg.solve(bad, b, context=ctx)
    with pytest.raises(ValueError, match="not finite"):
        clmg.solve(spd_matrix, np.full(n, np.inf), context=ctx)
    with pytest.raises(TypeError, match="expected real numbers"):
        clmg.solve(np.array([["a", "b"], ["c", "d"]]), np.ones(2), context=ctx)
    with pytest.raises(TypeError, match="LinearOperator"):
        clmg.solve(spla.aslinearoperator(spd_matrix), b, context=ctx)


def test_singular_matrix_message(ctx):
    A = sp.csr_array(np.array([[2.0, -1.0, 0.0], [0.0, 0.0, 0.0], [0.0, -1.0, 2.0]]))
    with pytest.raises(clmg.ClmgError) as caught:
        clmg.solve(A, np.ones(3), context=ctx)
    message, status = caught.value.args
    assert "row" in message and status == "invalid argument"


def test_option_errors(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    with pytest.raises(TypeError, match="unknown option 'mg_smothr'"):
        clmg.solve(spd_matrix, b, context=ctx, mg_smothr="jacobi")
    # the library's own messages: the valid values, the valid keys
    with pytest.raises(clmg.ClmgError, match="chebyshev"):
        clmg.solve(spd_matrix, b, context=ctx, precond="amg", mg_smoother="nope")
    with pytest.raises(clmg.ClmgError, match="krylov"):
        clmg.solve(spd_matrix, b, context=ctx, options={"krylv": "cg"})
    with pytest.raises(clmg.ClmgError, match="tol"):
        clmg.solve(spd_matrix, b, context=ctx, tol=-1)
    with pytest.raises(clmg.ClmgError, match="key=value"):
        clmg.solve(spd_matrix, b, context=ctx, options="krylov")
    with pytest.raises(TypeError, match="string, number or boolean"):
        clmg.solve(spd_matrix, b, context=ctx, tol=[1e-8])
    with pytest.raises(TypeError, match="options must be"):
        clmg.solve(spd_matrix, b, context=ctx, options=3)
    with pytest.raises(ValueError, match="2-D array"):
        clmg.amg(spd_matrix, context=ctx, amg_coordinates=np.zeros((2, 2, 2)))
    with pytest.raises(clmg.ClmgError, match="coordinates"):
        clmg.amg(spd_matrix, context=ctx, amg_coordinates=np.zeros((7, 3)))
    with pytest.raises(clmg.ClmgError):
        clmg.problems.spd("elasticity-p1", level=0)
    with pytest.raises(ValueError, match="unknown problem"):
        clmg.problems.spd("no-such-problem")


def test_memory_limit(device, spd_matrix):
    small = clmg.Context(device, memory_limit=4096)
    with pytest.raises(clmg.ClmgError) as caught:
        clmg.solve(spd_matrix, rhs(spd_matrix.shape[0]), context=small)
    assert caught.value.args[1] == "out of device memory"
    assert "4096" in caught.value.args[0] or "4 KiB" in caught.value.args[0] or "limit" in caught.value.args[0]


def test_without_fp64(device, spd_matrix):
    no_fp64 = clmg.Context(device, disable_fp64=True)
    assert not no_fp64.device["has_fp64"]
    with pytest.raises(clmg.ClmgError) as caught:
        clmg.solve(spd_matrix, rhs(spd_matrix.shape[0]), context=no_fp64)
    assert caught.value.args[1] == "unsupported by the device"
    x, info = clmg.solve(spd_matrix, rhs(spd_matrix.shape[0]), context=no_fp64, precision="float")
    assert info.converged


def test_library_errors_do_not_print(device):
    """A failing call says nothing on stdout or stderr: the message is in the exception."""
    code = (
        "import clmg, numpy as np, scipy.sparse as sp\n"
        "try:\n"
        "    clmg.solve(sp.eye(4), np.ones(4), mg_smoother='x', precond='amg')\n"
        "except clmg.ClmgError as e:\n"
        "    pass\n"
        "try:\n"
        "    clmg.Context('no-such-device-anywhere')\n"
        "except clmg.ClmgError as e:\n"
        "    pass\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""


def test_binding_checks_csr_arrays(ctx):
    """The C module checks the CSR arrays it is given (clmg_csr's contract)
    before the library reads them: the Python layer always passes canonical
    ones, but the module is the boundary."""
    from clmg import _clmg

    def make(indptr, indices, rows=2):
        return _clmg.Solver(ctx._c, rows, np.array(indptr, np.int64), np.array(indices, np.int32),
                            np.ones(len(indices)))

    assert make([0, 1, 2], [0, 1]) is not None
    with pytest.raises(ValueError, match="decreases"):
        make([0, 2, 1], [0])
    with pytest.raises(ValueError, match="out of range"):
        make([0, 1, 2], [0, 7])
    with pytest.raises(ValueError, match="out of range"):
        make([0, 1, 2], [-1, 1])
    with pytest.raises(ValueError, match="sorted and unique"):
        make([0, 2, 3], [1, 0, 1])
    with pytest.raises(ValueError, match="sorted and unique"):
        make([0, 2, 3], [0, 0, 1])
    with pytest.raises(ValueError, match="start at 0"):
        make([0, 1, -3], [0, 1])
    with pytest.raises(ValueError, match="int64"):
        _clmg.Solver(ctx._c, 2, b"abc", b"", b"")
    with pytest.raises(ValueError, match="rows"):
        _clmg.Solver(ctx._c, 2**40, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0))
