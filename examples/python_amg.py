#!/usr/bin/env python3
"""clmg from Python: a Matrix Market system solved on the device, and clmg's
AMG as the preconditioner of SciPy's own CG.

    CLMG_DEVICE=pocl python3 examples/python_amg.py [FILE.mtx] ["key=value ..."]

Default FILE: examples/data/poisson2d_32.mtx; b = 1. Needs the clmg package
(pip install ./python, or PYTHONPATH=build/python after the CMake build).
Exits 0 when both solves converged.
"""

import inspect
import pathlib
import sys

import numpy as np
import scipy.io
import scipy.sparse.linalg as spla

import clmg


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "data" / "poisson2d_32.mtx"
    options = sys.argv[2] if len(sys.argv) > 2 else None
    A = scipy.io.mmread(path).tocsr()
    b = np.ones(A.shape[0])
    print(f"device: {clmg.context().device['name']}")

    # 1. the whole solve on the device, composed by the options layer
    x, info = clmg.solve(A, b, options=options, precond="amg", tol=1e-10)
    print(f"clmg.solve: {info.view['method']} + {info.view['preconditioner']}, "
          f"{info.iterations} iterations, true residual {info.true_relative_residual:.2e}, "
          f"setup {info.setup_time:.3f} s, solve {info.solve_time:.3f} s")

    # 2. the AMG hierarchy (it stays on the device) as M in SciPy's CG
    M = clmg.amg(A, options)
    iterations = []
    # SciPy >= 1.12 spells the tolerance rtol, older ones tol
    tolerance = {"rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol": 1e-10, "atol": 0.0}
    y, code = spla.cg(A, b, M=M, callback=lambda xk: iterations.append(1), **tolerance)
    residual = np.linalg.norm(b - A @ y) / np.linalg.norm(b)
    print(f"scipy cg with M = clmg.amg(A) ({M.levels} levels): {len(iterations)} iterations, "
          f"residual {residual:.2e}")
    return 0 if info.converged and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
