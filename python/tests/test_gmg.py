"""clmg.poisson_multigrid: the geometric multigrid of the finite-element
Poisson problem (clmg/fe_solve.h's stages) as a SciPy LinearOperator."""

import warnings

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import clmg
from conftest import scipy_tolerance


@pytest.fixture(scope="module")
def gmg(ctx):
    return clmg.poisson_multigrid(level=5, mesh="circle", element="q1", context=ctx)


def counted_cg(A, b, M, tolerance):
    count = [0]

    def callback(_):
        count[0] += 1

    x, code = spla.cg(A, b, M=M, callback=callback, **scipy_tolerance(tolerance), maxiter=500)
    return x, code, count[0]


@pytest.mark.parametrize("level, element", [(5, "q1"), (6, "q1"), (4, "q2")])
def test_preconditions_scipy_cg(ctx, level, element):
    M = clmg.poisson_multigrid(level=level, element=element, context=ctx)
    A, b = M.A, M.b
    assert A.shape == M.shape and b.shape == (A.shape[0],)
    assert abs(A - A.T).max() == 0  # Dirichlet rows and columns eliminated
    x, code, iterations = counted_cg(A, b, M, 1e-10)
    assert code == 0
    assert iterations <= 20  # about 8 at these levels
    # the true residual, recomputed here
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    _, _, plain = counted_cg(A, b, None, 1e-10)
    assert iterations * 5 < plain  # the cycle does the work


def test_operator_facts(gmg):
    assert isinstance(gmg, spla.LinearOperator) and isinstance(gmg, clmg.Multigrid)
    assert gmg.dtype == np.float64
    n = gmg.A.shape[0]
    assert gmg.shape == (n, n) and n == gmg.unknowns == gmg.points.shape[0]
    assert gmg.levels == 5 and gmg.coarse_unknowns < n
    assert gmg.view["options"]["krylov"] == "cg"
    assert repr(gmg).startswith(f"<clmg.PoissonMultigrid q1 {n} rows, 5 levels, krylov cg")
    # the problem's own b (f = 1, g on the circle) and initial guess (g on Dirichlet rows)
    dirichlet = np.diff(gmg.A.indptr) == 1
    assert dirichlet.any()
    assert np.array_equal(gmg.x0[dirichlet], gmg.b[dirichlet])
    assert np.all(gmg.x0[~dirichlet] == 0)


def test_cycle_is_symmetric_and_contracts(gmg):
    A = gmg.A
    n = A.shape[0]
    rng = np.random.default_rng(3)
    u, v = rng.standard_normal(n), rng.standard_normal(n)
    Mu, Mv = gmg @ u, gmg @ v
    assert abs(Mu @ v - u @ Mv) <= 1e-10 * abs(Mu @ v)
    # M r is close to A^-1 r in the energy norm (one V-cycle from zero)
    y = spla.spsolve(A.tocsc(), u)
    e = y - Mu
    assert np.sqrt(e @ (A @ e)) < 0.5 * np.sqrt(y @ (A @ y))
    # positive definite on these vectors, as CG needs
    assert Mu @ u > 0 and Mv @ v > 0


def test_matvec_is_one_cycle(ctx, gmg):
    """M @ r equals one cycle from zero of the same hierarchy as the
    library's solver runs it (krylov=none, maxit=1)."""
    r = np.random.default_rng(4).standard_normal(gmg.shape[0])
    z = gmg @ r
    cycles = clmg.poisson_multigrid(level=5, context=ctx, krylov="none")
    with pytest.warns(clmg.ConvergenceWarning):
        x, info = cycles.solve(r, tol=1e-14, maxit=1)
    assert info.iterations == 1
    assert np.linalg.norm(z - x) <= 1e-12 * np.linalg.norm(z)
    # the input is not changed; (n, 1) works as LinearOperator takes it
    r_copy = r.copy()
    assert np.array_equal(gmg.matvec(r.reshape(-1, 1)).ravel(), z)
    assert np.array_equal(r, r_copy)


def test_float32_and_complex_input(gmg):
    r = np.random.default_rng(5).standard_normal(gmg.shape[0])
    r32 = r.astype(np.float32)
    z32 = gmg @ r32
    assert z32.dtype == np.float64  # cast to the operator's dtype
    assert np.array_equal(z32, gmg @ r32.astype(np.float64))
    with pytest.raises(TypeError, match="complex"):
        gmg @ (1j * r)
    with pytest.raises(ValueError, match="entries"):
        gmg._matvec(r[:-1])


def test_host_numbering_gives_the_same_operator(ctx, gmg):
    """A host numbering (Cuthill-McKee) permutes the hierarchy; A, b and
    M @ r in the nodes' numbering are the 2LV ones."""
    cm = clmg.poisson_multigrid(level=5, numbering="cm", context=ctx)
    assert cm._perm is not None
    assert np.allclose(cm.points, gmg.points)
    assert abs(cm.A - gmg.A).max() <= 1e-12
    assert np.allclose(cm.b, gmg.b, rtol=1e-12, atol=1e-14)
    r = np.random.default_rng(6).standard_normal(gmg.shape[0])
    assert np.linalg.norm(cm @ r - gmg @ r) <= 1e-10 * np.linalg.norm(gmg @ r)
    x, info = cm.solve(gmg.b, tol=1e-10)
    assert info.converged
    assert np.linalg.norm(gmg.b - gmg.A @ x) <= 1e-9 * np.linalg.norm(gmg.b)


def test_solve_against_spsolve(gmg):
    A = gmg.A
    reference = spla.spsolve(A.tocsc(), gmg.b)
    x, info = gmg.solve(tol=1e-11)  # the problem's own b and initial guess
    assert info.converged and 1 <= info.iterations <= 20
    assert info.true_relative_residual <= 1e-10
    assert np.linalg.norm(gmg.b - A @ x) <= 1e-10 * np.linalg.norm(gmg.b)
    assert np.linalg.norm(x - reference) <= 1e-8 * np.linalg.norm(reference)
    # any b, from zero
    b = np.random.default_rng(7).standard_normal(A.shape[0])
    x, info = gmg.solve(b, tol=1e-11)
    assert info.converged
    assert np.linalg.norm(x - spla.spsolve(A.tocsc(), b)) <= 1e-8 * np.linalg.norm(x)
    # the per-solve limits do not stay
    assert gmg.view["options"]["tol"] == pytest.approx(1e-8)
    with pytest.warns(clmg.ConvergenceWarning):
        _, short = gmg.solve(b, maxit=2)
    assert not short.converged and short.iterations == 2
    assert gmg.view["options"]["maxit"] == 200


def test_precisions(ctx, gmg):
    r = np.random.default_rng(8).standard_normal(gmg.shape[0])
    z = gmg @ r
    for precision in ("float", "mixed"):
        M = clmg.poisson_multigrid(level=5, context=ctx, precision=precision)
        assert np.linalg.norm(M @ r - z) <= 1e-5 * np.linalg.norm(z)  # a float cycle
    mixed = clmg.poisson_multigrid(level=5, context=ctx, precision="mixed")
    x, info = mixed.solve(tol=1e-10)
    assert info.converged and info.true_relative_residual <= 1e-10


def test_monitor(ctx, gmg):
    calls = []
    x, info = gmg.solve(tol=1e-10, monitor=lambda i, r: calls.append((i, r)))
    assert info.converged
    assert [i for i, _ in calls] == list(range(info.iterations + 1))
    assert np.allclose([r for _, r in calls], info.residuals)
    # the object's monitor, and a true return stops the solve
    stops = []
    M = clmg.poisson_multigrid(
        level=4, context=ctx, monitor=lambda i, r: stops.append(i) or i >= 2
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clmg.ConvergenceWarning)
        _, info = M.solve(tol=1e-12)
    assert not info.converged and stops == [0, 1, 2] and info.iterations == 2
    # an exception in the monitor comes out of the solve

    def failing(i, r):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        gmg.solve(monitor=failing)


def test_bad_arguments(ctx, gmg):
    with pytest.raises(TypeError, match="level must be an integer"):
        clmg.poisson_multigrid(level="5", context=ctx)
    with pytest.raises(ValueError, match="level must be 1 to 16"):
        clmg.poisson_multigrid(level=0, context=ctx)
    with pytest.raises(ValueError, match="unknown element"):
        clmg.poisson_multigrid(element="q3", context=ctx)
    with pytest.raises(TypeError, match="mesh must be"):
        clmg.poisson_multigrid(mesh=3, context=ctx)
    with pytest.raises(ValueError, match="unknown mesh"):
        clmg.poisson_multigrid(mesh="square", context=ctx)
    with pytest.raises(TypeError, match="unknown option"):
        clmg.poisson_multigrid(level=3, context=ctx, no_such_option=1)
    with pytest.raises(ValueError, match="krylov=gmres"):
        clmg.poisson_multigrid(level=3, context=ctx, krylov="gmres")
    with pytest.raises(ValueError, match="2lv numbering only"):
        clmg.poisson_multigrid(level=3, context=ctx, numbering="cm", assembly="device")
    with pytest.raises(clmg.ClmgError):
        clmg.poisson_multigrid(level=3, context=ctx, mg_smoother="no-such-smoother")
    with pytest.raises(TypeError, match="monitor must be callable"):
        clmg.poisson_multigrid(level=3, context=ctx, monitor=3)
    n = gmg.shape[0]
    with pytest.raises(ValueError, match="tol must be a finite number above 0"):
        gmg.solve(tol=0)
    with pytest.raises(TypeError, match="tol must be a number"):
        gmg.solve(tol="1e-8")
    with pytest.raises(ValueError, match="maxit must be at least 1"):
        gmg.solve(maxit=0)
    with pytest.raises(TypeError, match="maxit must be an integer"):
        gmg.solve(maxit=2.5)
    with pytest.raises(ValueError, match="shape"):
        gmg.solve(np.ones(n + 1))
    with pytest.raises(ValueError, match="not finite"):
        gmg.solve(np.full(n, np.nan))
    with pytest.raises(TypeError, match="monitor must be callable"):
        gmg.solve(monitor="no")
    with pytest.raises(ValueError):
        gmg @ np.ones(n + 1)
    # the object still works after the refusals
    x, info = gmg.solve(tol=1e-10)
    assert info.converged
