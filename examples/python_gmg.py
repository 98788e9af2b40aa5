#!/usr/bin/env python3
"""clmg's geometric multigrid from Python: the FE Poisson problem's hierarchy
on the device as the preconditioner of SciPy's CG, and the same hierarchy in
the library's own CG.

    CLMG_DEVICE=pocl python3 examples/python_gmg.py [LEVEL] [q1|q2]

Default: level 6, Q1 on CIRCLE. Needs the clmg package (pip install ./python,
or PYTHONPATH=build/python after the CMake build). Exits 0 when both solves
converged.
"""

import inspect
import sys

import numpy as np
import scipy.sparse.linalg as spla

import clmg


def main() -> int:
    level = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    element = sys.argv[2] if len(sys.argv) > 2 else "q1"
    M = clmg.poisson_multigrid(level=level, mesh="circle", element=element)
    print(f"device: {clmg.context().device['name']}; {M!r}")

    # 1. one V-cycle of the geometric hierarchy per application, in SciPy's CG
    iterations = []
    # SciPy >= 1.12 spells the tolerance rtol, older ones tol
    name = "rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol"
    x, code = spla.cg(M.A, M.b, M=M, callback=lambda xk: iterations.append(1),
                      **{name: 1e-10, "atol": 0.0})
    residual = np.linalg.norm(M.b - M.A @ x) / np.linalg.norm(M.b)
    print(f"scipy cg with M = clmg.poisson_multigrid: {len(iterations)} iterations, "
          f"residual {residual:.2e}")

    # 2. the library's CG with the same hierarchy, on the device
    y, info = M.solve(tol=1e-10, monitor=lambda i, r: print(f"  {i:3d} {r:.3e}"))
    print(f"M.solve: {info.iterations} iterations, true residual "
          f"{info.true_relative_residual:.2e}, |x - y| / |y| "
          f"{np.linalg.norm(x - y) / np.linalg.norm(y):.1e}")
    return 0 if info.converged and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
