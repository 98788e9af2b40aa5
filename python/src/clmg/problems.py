"""Test problems assembled by the library, as SciPy matrices and NumPy arrays.

:func:`spd` gives clmg's SPD test set (include/clmg/spd_problems.h): 3D
linear elasticity with P1 or P2 tetrahedra, SIPG discontinuous Galerkin
diffusion and Q2 Poisson with a jumping coefficient, with their right-hand
sides and the positions of their nodes (for rigid-body modes).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from . import _clmg

__all__ = ["SPDProblem", "spd"]


@dataclasses.dataclass
class SPDProblem:
    """An assembled SPD test problem."""

    kind: str  #: "elasticity-p1", "elasticity-p2", "dg-diffusion" or "q2-jump"
    A: sp.csr_array  #: rows x rows, symmetric positive definite
    b: np.ndarray  #: the right-hand side
    coordinates: np.ndarray  #: nodes x dim: each node's position
    block_size: int  #: unknowns per node, interleaved (3 for elasticity)
    dim: int  #: 2 or 3


def spd(
    kind: str = "elasticity-p1",
    level: int = 8,
    *,
    poisson_ratio: float = 0.3,
    jump: float = 1e4,
    distortion: float = 0.1,
    seed: int = 1,
) -> SPDProblem:
    """clmg_spd_problem_create: ``kind`` at ``level`` cells per side of the
    box (elasticity-p1 has 3 (level + 1)^3 rows). Bad values raise ClmgError
    with the library's message."""
    p = _clmg.spd_problem(kind, level, poisson_ratio, jump, distortion, seed)
    rows = p["rows"]
    A = sp.csr_array(
        (
            np.frombuffer(p["data"], dtype=np.float64),
            np.frombuffer(p["indices"], dtype=np.int32),
            np.frombuffer(p["indptr"], dtype=np.int64),
        ),
        shape=(rows, rows),
    )
    coordinates = np.frombuffer(p["coordinates"], dtype=np.float64).reshape(p["nodes"], p["dim"])
    return SPDProblem(
        kind=kind,
        A=A,
        b=np.frombuffer(p["b"], dtype=np.float64).copy(),
        coordinates=coordinates.copy(),
        block_size=p["block_size"],
        dim=p["dim"],
    )
