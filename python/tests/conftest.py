"""Shared matrices and the device of the clmg Python tests.

The device is $CLMG_DEVICE (ctest sets it to CLMG_TEST_DEVICE, pocl by
default), else the library's default. The pyamg comparisons skip without
pyamg unless CLMG_REQUIRE_PYAMG=1 (CI sets it).
"""

import os
import pathlib

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import clmg

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "examples" / "data"


def pyamg_or_skip():
    if os.environ.get("CLMG_REQUIRE_PYAMG") == "1":
        import pyamg  # noqa: F401  (an ImportError fails the test)

        return pyamg
    return pytest.importorskip("pyamg")


def poisson2d(n):
    """The 5-point Laplacian on an n x n grid (Dirichlet), SPD."""
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = sp.eye(n)
    return sp.csr_array(sp.kron(t, eye) + sp.kron(eye, t))


def poisson3d(n):
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = sp.eye(n)
    return sp.csr_array(
        sp.kron(sp.kron(t, eye), eye) + sp.kron(sp.kron(eye, t), eye) + sp.kron(sp.kron(eye, eye), t)
    )


def convection_diffusion(n, peclet=50.0):
    """-Laplace(u) + c . grad(u) with first-order upwinding: nonsymmetric."""
    h = 1.0 / (n + 1)
    c = peclet * h
    lower = -(1 + c) * np.ones(n - 1)
    upper = -np.ones(n - 1)
    t = sp.diags([lower, (2 + c) * np.ones(n), upper], offsets=[-1, 0, 1])
    s = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = sp.eye(n)
    return sp.csr_array(sp.kron(eye, t) + sp.kron(s, eye))


@pytest.fixture(scope="session")
def device():
    return os.environ.get("CLMG_DEVICE")


@pytest.fixture(scope="session")
def ctx(device):
    return clmg.context(device)


@pytest.fixture(scope="session")
def spd_matrix():
    return poisson2d(32)


@pytest.fixture(scope="session")
def nonsymmetric_matrix():
    return sp.csr_array(scipy.io.mmread(DATA / "convection_diffusion_pe100.mtx"))


@pytest.fixture(scope="session")
def elasticity():
    return clmg.problems.spd("elasticity-p1", level=6)


def rhs(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n)


def scipy_tolerance(tolerance):
    """SciPy's Krylov methods take rtol since 1.12 and tol before."""
    import inspect

    import scipy.sparse.linalg as spla

    name = "rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol"
    return {name: tolerance, "atol": 0.0}
