"""clmg.amg as a SciPy LinearOperator preconditioner (M=) in SciPy's own Krylov methods."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import clmg
from conftest import rhs, scipy_tolerance


def scipy_solve(method, A, b, M=None, **kwargs):
    count = [0]

    def callback(_):
        count[0] += 1

    x, code = method(A, b, M=M, callback=callback, **kwargs)
    return x, code, count[0]


def test_amg_in_scipy_cg(ctx, spd_matrix):
    A = spd_matrix
    b = rhs(A.shape[0])
    M = clmg.amg(A, context=ctx)
    assert isinstance(M, spla.LinearOperator) and M.shape == A.shape and M.dtype == np.float64
    assert M.levels >= 2
    assert repr(M).startswith("<clmg.Multigrid 1024 rows, krylov cg, precond amg")
    x, code, iterations = scipy_solve(spla.cg, A, b, M=M, **scipy_tolerance(1e-10), maxiter=200)
    assert code == 0
    assert np.linalg.norm(b - A @ x) <= 1e-9 * np.linalg.norm(b)
    assert np.linalg.norm(x - spla.spsolve(A.tocsc(), b)) <= 1e-6 * np.linalg.norm(x)
    _, code_plain, plain = scipy_solve(spla.cg, A, b, **scipy_tolerance(1e-10), maxiter=2000)
    assert code_plain == 0
    assert iterations * 4 < plain  # one AMG cycle per application does its work
    # the same hierarchy solves on the device too
    x_device, info = M.solve(b)
    assert info.converged
    assert np.linalg.norm(x_device - x) <= 1e-6 * np.linalg.norm(x)


def test_amg_in_scipy_gmres(ctx, nonsymmetric_matrix):
    A = nonsymmetric_matrix
    b = rhs(A.shape[0], 5)
    M = clmg.amg(A, context=ctx)
    x, code = spla.gmres(A, b, M=M, **scipy_tolerance(1e-10), restart=30, maxiter=50)
    assert code == 0
    _, code_plain = spla.gmres(A, b, **scipy_tolerance(1e-10), restart=30, maxiter=2)
    assert code_plain != 0  # 60 iterations without M do not reach it
    assert np.linalg.norm(b - A @ x) <= 1e-9 * np.linalg.norm(b)


def test_preconditioner_is_one_cycle(ctx, spd_matrix):
    """M @ r equals one multigrid cycle from zero, as the device solver with
    krylov=none and maxit=1 computes it from the same options."""
    A = spd_matrix
    r = rhs(A.shape[0], 7)
    M = clmg.amg(A, context=ctx)
    z = M @ r
    cycles = clmg.amg(A, context=ctx, krylov="none", maxit=1, tol=1e-14)
    with pytest.warns(clmg.ConvergenceWarning):
        x, info = cycles.solve(r)
    assert info.iterations == 1
    assert np.linalg.norm(z - x) <= 1e-12 * np.linalg.norm(x)
    # a cycle reduces the error of A z = r
    assert np.linalg.norm(r - A @ z) < 0.5 * np.linalg.norm(r)
    # shapes as LinearOperator takes them; the input is not changed
    r_copy = r.copy()
    assert np.array_equal(M.matvec(r.reshape(-1, 1)).ravel(), z)
    assert np.array_equal(M @ r.astype(np.float32), M @ r.astype(np.float32).astype(np.float64))
    assert np.array_equal(r, r_copy)
    # mixed precision: a float cycle, z close to the double one
    Mf = clmg.amg(A, context=ctx, precision="mixed")
    assert np.linalg.norm(Mf @ r - z) <= 1e-4 * np.linalg.norm(z)


def test_amg_options(ctx, spd_matrix):
    M = clmg.amg(spd_matrix, context=ctx, mg_smoother="chebyshev", amg_coarse_rows=50)
    assert M.view["options"]["mg"]["smoother"] == "chebyshev"
    assert M.view["hierarchy"][-1]["rows"] <= 50 or M.view["hierarchy"][0]["rows"] <= 50
    with pytest.raises(ValueError, match="precond must be amg"):
        clmg.amg(spd_matrix, context=ctx, precond="jacobi")
    with pytest.raises(clmg.ClmgError, match="chebyshev"):
        clmg.amg(spd_matrix, context=ctx, mg_smoother="no-such-smoother")
    with pytest.raises(TypeError, match="complex"):
        clmg.amg(spd_matrix, context=ctx) @ (1j * np.ones(spd_matrix.shape[0]))
