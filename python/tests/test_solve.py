"""clmg.solve and clmg.Solver against SciPy's direct solver and pyamg."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import clmg
from conftest import convection_diffusion, poisson3d, pyamg_or_skip, rhs


def relative_error(x, reference):
    return np.linalg.norm(x - reference) / np.linalg.norm(reference)


SPD_CONFIGS = [
    {},  # krylov auto (CG here), Jacobi
    {"precond": "amg"},
    {"precond": "amg", "mg_smoother": "chebyshev"},
    {"precond": "amg", "amg_coarsening": "classical"},
    {"precond": "amg", "precision": "mixed"},
    {"krylov": "none", "precond": "amg", "maxit": 200},  # AMG cycles alone
    {"krylov": "gmres", "precond": "amg"},
    {"krylov": "bicgstab", "precond": "jacobi"},
]


@pytest.mark.parametrize("config", SPD_CONFIGS, ids=lambda c: " ".join(f"{k}={v}" for k, v in c.items()) or "defaults")
def test_spd_against_spsolve(ctx, spd_matrix, config):
    b = rhs(spd_matrix.shape[0])
    reference = spla.spsolve(spd_matrix.tocsc(), b)
    x, info = clmg.solve(spd_matrix, b, context=ctx, tol=1e-10, **config)
    assert info.converged and info.status == "success", info.message
    assert info.true_relative_residual <= 1e-9
    # cond(A) is about 440 here: 1e-10 in the residual is 1e-7 at worst in x
    assert relative_error(x, reference) <= 1e-6
    assert info.residuals[-1] <= 1e-10
    assert info.iterations >= 1 and len(info.residuals) >= info.iterations


@pytest.mark.parametrize("config", [{}, {"precond": "amg"}, {"krylov": "bicgstab"},
                                    {"krylov": "gmres", "restart": 10, "precond": "amg"}],
                         ids=["gmres-jacobi", "gmres-amg", "bicgstab", "gmres10-amg"])
def test_nonsymmetric_against_spsolve(ctx, nonsymmetric_matrix, config):
    A = nonsymmetric_matrix
    b = rhs(A.shape[0], 1)
    reference = spla.spsolve(A.tocsc(), b)
    x, info = clmg.solve(A, b, context=ctx, tol=1e-10, maxit=2000, **config)
    assert info.converged, info.message
    assert info.true_relative_residual <= 1e-9
    assert relative_error(x, reference) <= 1e-6
    if "krylov" not in config:
        assert info.view["method"].startswith("gmres")  # krylov=auto on a nonsymmetric matrix


def test_nonsymmetric_built_in_python(ctx):
    A = convection_diffusion(24)
    b = rhs(A.shape[0], 2)
    x, info = clmg.solve(A, b, context=ctx, precond="amg", tol=1e-10)
    assert info.converged
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) <= 1e-6


def test_poisson3d_against_pyamg(ctx):
    pyamg = pyamg_or_skip()
    A = poisson3d(12)
    b = rhs(A.shape[0], 3)
    ml = pyamg.smoothed_aggregation_solver(A)
    pyamg_residuals = []
    x_pyamg = ml.solve(b, tol=1e-10, accel="cg", residuals=pyamg_residuals)
    x, info = clmg.solve(A, b, context=ctx, precond="amg", tol=1e-10)
    assert info.converged
    assert relative_error(x, x_pyamg) <= 1e-7
    # both AMG-preconditioned CG: the same order of iterations
    assert info.iterations <= 3 * (len(pyamg_residuals) - 1)


def test_elasticity_against_spsolve_and_pyamg(ctx, elasticity):
    pyamg = pyamg_or_skip()
    p = elasticity
    A, b = p.A, p.b
    assert p.block_size == 3 and A.shape[0] == 3 * p.coordinates.shape[0]
    reference = spla.spsolve(A.tocsc(), b)
    amg = clmg.amg(A, context=ctx, amg_block_size=3, amg_coordinates=p.coordinates, tol=1e-10)
    x, info = amg.solve(b)
    assert info.converged
    assert relative_error(x, reference) <= 1e-6
    # the rigid-body modes as near-nullspace: fewer iterations than the constants
    plain = clmg.amg(A, context=ctx, amg_block_size=3, tol=1e-10)
    _, plain_info = plain.solve(b)
    assert plain_info.converged
    assert info.iterations < plain_info.iterations
    # pyamg with the same near-nullspace
    B = rigid_body_modes(p.coordinates)
    ml = pyamg.smoothed_aggregation_solver(A, B=B)
    x_pyamg = ml.solve(b, tol=1e-10, accel="cg")
    assert relative_error(x, x_pyamg) <= 1e-6


def rigid_body_modes(coordinates):
    """The six rigid-body modes of 3D elasticity, unknowns x, y, z per node."""
    nodes = coordinates.shape[0]
    x, y, z = (coordinates - coordinates.mean(axis=0)).T
    B = np.zeros((3 * nodes, 6))
    for c in range(3):
        B[c::3, c] = 1.0
    B[0::3, 3], B[1::3, 3] = -y, x  # rotation about z
    B[1::3, 4], B[2::3, 4] = -z, y  # about x
    B[0::3, 5], B[2::3, 5] = z, -x  # about y
    return B


@pytest.mark.parametrize("kind,level", [("dg-diffusion", 8), ("q2-jump", 3)])
def test_spd_problems(ctx, kind, level):
    p = clmg.problems.spd(kind, level=level)
    x, info = clmg.solve(p.A, p.b, context=ctx, precond="amg", tol=1e-10, maxit=500)
    assert info.converged
    assert relative_error(x, spla.spsolve(p.A.tocsc(), p.b)) <= 1e-5


def test_float_precision(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    x, info = clmg.solve(spd_matrix, b, context=ctx, precision="float", precond="amg")
    assert info.converged
    assert info.view["precision"] == "float"
    assert info.true_relative_residual <= 2e-5  # float's default tolerance, 1e-5


def test_info(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    solver = clmg.Solver(spd_matrix, {"precond": "amg"}, context=ctx)
    x, info = solver.solve(b)
    assert info.converged
    assert info.setup_time > 0 and info.solve_time > 0 and info.compile_time >= 0
    assert info.view["options"]["krylov"] == "cg"  # auto, resolved
    assert info.view["preconditioner"] == "amg"
    assert len(info.view["hierarchy"]) >= 2
    assert np.all(np.diff(info.residuals) < info.residuals[:-1])  # CG+AMG: monotone here
    assert info.residuals[-1] <= 1e-8  # the default tolerance
    assert "cg" in solver.view_text()
    assert abs(info.final_residual - info.true_residual) <= 1e-6 * np.linalg.norm(b)
    # a second solve reuses the setup
    x2, info2 = solver.solve(2 * b)
    assert np.allclose(x2, 2 * x, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("precision", ["double", "mixed", "float"])
def test_true_residual_is_the_hosts(ctx, spd_matrix, nonsymmetric_matrix, precision):
    """info.true_residual (computed on the device for double and mixed
    solvers, on the host for float ones) is ||b - A x|| in double, for a
    converged solve, a short one (maxit 2) and a second solve of the same
    solver, whose device vectors are reused."""
    if precision != "float" and not ctx.device["has_fp64"]:
        pytest.skip("no fp64")
    for A in (spd_matrix, nonsymmetric_matrix):
        b = rhs(A.shape[0], 2)
        solver = clmg.Solver(A, context=ctx, precision=precision, precond="amg")
        short = clmg.Solver(A, context=ctx, precision=precision, precond="amg", maxit=2)
        for s, scale in ((solver, 1.0), (solver, 3.0), (short, 1.0)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", clmg.ConvergenceWarning)
                x, info = s.solve(scale * b)
            host = np.linalg.norm(scale * b - A @ x)
            assert info.true_residual == pytest.approx(host, rel=1e-6)
            assert info.true_relative_residual == pytest.approx(
                host / np.linalg.norm(scale * b), rel=1e-6
            )
            assert info.converged == (s is solver)
            if s is short:
                assert info.iterations == 2
        # the device computes it for double vectors only (mixed solves in double)
        raw = solver._c.solve(b, np.zeros(A.shape[0]), None)
        assert np.isfinite(raw["true_residual"]) == (precision != "float")


def test_initial_guess(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    exact = spla.spsolve(spd_matrix.tocsc(), b)
    x, info = clmg.solve(spd_matrix, b, exact, context=ctx)
    assert info.converged and info.iterations == 0
    assert np.allclose(x, exact)


def test_input_formats_give_one_solution(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    x_ref, _ = clmg.solve(spd_matrix, b, context=ctx, tol=1e-12)
    coo = sp.coo_array(spd_matrix)
    # duplicates: every entry split in two halves
    doubled = sp.coo_array(
        (np.concatenate([coo.data / 2, coo.data / 2]),
         (np.concatenate([coo.row, coo.row]), np.concatenate([coo.col, coo.col]))),
        shape=coo.shape,
    )
    int64 = sp.csr_array(spd_matrix)
    int64.indices = int64.indices.astype(np.int64)
    int64.indptr = int64.indptr.astype(np.int64)
    inputs = {
        "csr": spd_matrix,
        "csc": sp.csc_array(spd_matrix),
        "coo": coo,
        "coo-duplicates": doubled,
        "csr_matrix": sp.csr_matrix(spd_matrix),
        "float32": spd_matrix.astype(np.float32),
        "int64-indices": int64,
        "dense": spd_matrix.toarray(),
        "dense-list": None,
    }
    small = spd_matrix[:50, :50]
    for name, A in inputs.items():
        if A is None:
            continue
        x, info = clmg.solve(A, b, context=ctx, tol=1e-12)
        assert info.converged, name
        assert relative_error(x, x_ref) <= 1e-9, name
    x_list, info = clmg.solve(small.toarray().tolist(), np.ones(50).tolist(), context=ctx)
    assert info.converged
    assert relative_error(x_list, spla.spsolve(small.tocsc(), np.ones(50))) <= 1e-6
    # b as a column, and of integers
    x_col, info = clmg.solve(spd_matrix, b.reshape(-1, 1), context=ctx, tol=1e-12)
    assert relative_error(x_col, x_ref) <= 1e-9
    ones = np.ones(spd_matrix.shape[0], dtype=np.int32)
    x_int, _ = clmg.solve(spd_matrix, ones, context=ctx)
    assert relative_error(x_int, spla.spsolve(spd_matrix.tocsc(), ones.astype(float))) <= 1e-6
    # the caller's matrix is left as it was
    assert not doubled.has_canonical_format or doubled.nnz == 2 * coo.nnz


def test_options_spellings(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    spellings = [
        dict(options="krylov=cg precond=amg mg.smoother=chebyshev mg.steps=2"),
        dict(options={"krylov": "cg", "precond": "amg", "mg.smoother": "chebyshev", "mg.steps": 2}),
        dict(options={"krylov": "cg", "precond": "amg", "mg": {"smoother": "chebyshev", "steps": 2}}),
        dict(krylov="cg", precond="amg", mg_smoother="chebyshev", mg_steps=2),
        dict(options="krylov=cg precond=amg mg.smoother=jacobi", mg_smoother="chebyshev", mg_steps=2),
    ]
    iterations = set()
    for spelling in spellings:
        x, info = clmg.solve(spd_matrix, b, context=ctx, **spelling)
        assert info.converged
        opts = info.view["options"]
        assert opts["mg"]["smoother"] == "chebyshev" and opts["mg"]["steps"] == 2, spelling
        iterations.add(info.iterations)
    assert len(iterations) == 1
    assert clmg.check_options(mg_smoother="chebyshev", tol=1e-6) == {"mg": {"smoother": "chebyshev"}, "tol": 1e-6}
    keys = {k["key"] for k in clmg.option_keys()}
    assert {"krylov", "precond", "tol", "mg.smoother", "amg.coarsening"} <= keys


def test_monitor(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    seen = []
    x, info = clmg.solve(spd_matrix, b, context=ctx, precond="amg",
                         monitor=lambda it, r: seen.append((it, r)))
    assert info.converged
    # the start (iteration 0, relative residual 1), then every iteration
    assert [it for it, _ in seen] == list(range(info.iterations + 1))
    assert np.allclose([r for _, r in seen], info.residuals)
    # a true return stops the solve: not converged, with a warning
    with pytest.warns(clmg.ConvergenceWarning):
        x, info = clmg.solve(spd_matrix, b, context=ctx, monitor=lambda it, r: it >= 2)
    assert not info.converged and info.iterations == 2
    # an exception in the monitor stops the solve and is raised
    def fail(it, r):
        raise KeyError("from the monitor")
    with pytest.raises(KeyError, match="from the monitor"):
        clmg.solve(spd_matrix, b, context=ctx, monitor=fail)


def test_not_converged(ctx, spd_matrix):
    b = rhs(spd_matrix.shape[0])
    with pytest.warns(clmg.ConvergenceWarning, match="iteration"):
        x, info = clmg.solve(spd_matrix, b, context=ctx, maxit=3)
    assert not info.converged and info.status == "not converged" and info.iterations == 3
    assert info.message
    # x is the last iterate: better than the start
    assert info.true_relative_residual < 1
