#!/usr/bin/env python3
"""clmg from Python against the Python baselines, on the same matrices in the
same run: clmg.solve (AMG-CG on the OpenCL device) against pyamg (smoothed
aggregation with its defaults as a CG preconditioner, on the CPU) and, where
CuPy imports (a CUDA GPU), CuPy's cupyx.scipy.sparse.linalg.cg with a
Jacobi preconditioner; all to a relative residual of 1e-8.

    PYTHONPATH=build/python perf/python_baselines.py [--size small|large]
        [--device nvidia] [--output FILE] [--json]

The matrices are clmg's own finite-element problems, made through the
package: the Q1 Poisson matrix of CIRCLE (clmg.poisson(return_matrix=True),
Dirichlet rows eliminated; large: level 10, 2,101,248 rows; small: level
7) and the P1 Helmholtz matrix of the Regular tetrahedra (clmg.helmholtz,
sigma 1, lambda 1; large: regular:4, 2,146,689 rows; small: regular:2),
each with its own right-hand side.

For each solver: setup and solve seconds, iterations and the true relative
residual ||b - A x|| / ||b|| recomputed on the host in double from the
returned x. clmg.solve runs twice and reports the second call (the first
compiles the kernels or loads them from the cache); its setup is the
library's (info.setup_time: upload, AMG setup; kernels excluded), and the
Python overhead is the call's wall time minus the library's setup, kernel
and solve seconds (converting and checking the matrix, building the
options, reading the result). CuPy's setup is the upload of A and b and the
inverted diagonal, its solve the CG (synchronized). Ratios: clmg's setup +
solve over each baseline's, and clmg's time per iteration over the floor of
one SpMV of A (12 bytes a nonzero, 8 per row offset, x read and y written:
the least one CG iteration moves) at the copy bandwidth clmg measures on
its device in the same run (Context.copy_bandwidth).
"""
import argparse
import inspect
import os
import sys
import time

import numpy as np

import perf_output  # perf/perf_output.py: --output FILE and --json

SIZES = {"small": {"poisson_level": 7, "regular": 2}, "large": {"poisson_level": 10, "regular": 4}}
TOLERANCE = 1e-8


def matrices(clmg, context, size):
    levels = SIZES[size]
    p = clmg.poisson(level=levels["poisson_level"], return_matrix=True, context=context)
    yield f"poisson-q1-circle-L{levels['poisson_level']}", p.A, p.b
    h = clmg.helmholtz(f"regular:{levels['regular']}", solve=False, context=context)
    yield f"helmholtz-p1-regular{levels['regular']}", h.A, h.b


def true_residual(a, b, x):
    return float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))


def spmv_floor_s(a, gb_per_s):
    """One SpMV's bytes (values and columns, row offsets, x and y) at gb_per_s."""
    rows, nnz = a.shape[0], a.nnz
    return (12.0 * nnz + 8.0 * (rows + 1) + 16.0 * rows) / (gb_per_s * 1e9)


def run_clmg(clmg, context, a, b):
    for _ in range(2):  # the second call: kernels compiled
        start = time.perf_counter()
        x, info = clmg.solve(a, b, precond="amg", krylov="cg", tol=TOLERANCE, context=context)
        wall = time.perf_counter() - start
    library = info.setup_time + info.compile_time + info.solve_time
    return {"solver": "clmg", "version": clmg.__version__,
            "device": context.device["name"], "setup_s": info.setup_time,
            "compile_s": info.compile_time, "solve_s": info.solve_time,
            "iterations": info.iterations,
            "true_relative_residual": true_residual(a, b, x),
            "converged": info.converged, "call_s": wall,
            "python_overhead_s": wall - library,
            "levels": len(info.view.get("levels", [])) or None}


def run_pyamg(a, b):
    from amg_testset import pyamg_solve  # pyamg's defaults, as amg_baselines.py runs it
    return pyamg_solve(a.tocsr(), b)


def run_cupy(a, b):
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla
    keyword = "rtol" if "rtol" in inspect.signature(cspla.cg).parameters else "tol"
    for _ in range(2):  # the second: CuPy's kernels compiled
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        a_gpu = csp.csr_matrix(a.tocsr())
        b_gpu = cupy.asarray(b)
        inverse = 1.0 / a_gpu.diagonal()
        m = cspla.LinearOperator(a_gpu.shape, matvec=lambda r: inverse * r, dtype=a_gpu.dtype)
        cupy.cuda.Device().synchronize()
        setup = time.perf_counter() - start
        iterations = [0]

        def count(_):
            iterations[0] += 1

        start = time.perf_counter()
        x_gpu, _ = cspla.cg(a_gpu, b_gpu, M=m, maxiter=100000, callback=count,
                            atol=0.0, **{keyword: TOLERANCE})
        cupy.cuda.Device().synchronize()
        solve = time.perf_counter() - start
    x = cupy.asnumpy(x_gpu)
    relative = true_residual(a, b, x)
    return {"solver": "cupy-cg-jacobi", "version": cupy.__version__,
            "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
            "setup_s": setup, "solve_s": solve, "iterations": iterations[0],
            "true_relative_residual": relative, "converged": relative <= TOLERANCE * 1.01}


def cupy_available():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return True
    except Exception:  # no CuPy, or no CUDA device
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), default="large",
                        help="large: about 2 million rows (a GPU); small: tens of thousands")
    parser.add_argument("--device", help="clmg's device string (default: $CLMG_DEVICE, else "
                                         "the first GPU, else the first CPU)")
    parser.add_argument("--no-pyamg", action="store_true", help="skip pyamg")
    parser.add_argument("--no-cupy", action="store_true", help="skip CuPy even where it imports")
    perf_output.add_arguments(parser)
    args = perf_output.parse(parser, "python_baselines.py")
    import clmg
    context = clmg.context(args.device)
    use_cupy = not args.no_cupy and cupy_available()
    copy_gb_s = context.copy_bandwidth()
    document = {"copy_bandwidth_gb_s": copy_gb_s, "program": "python_baselines.py", "size": args.size, "tolerance": TOLERANCE,
                "clmg_version": clmg.__version__, "device": context.device["name"],
                "cupy": use_cupy, "matrices": []}
    with perf_output.table(args):
        print(f"clmg {clmg.__version__} on {context.device['name']}; pyamg on the CPU"
              + ("; CuPy on the GPU" if use_cupy else "; no CuPy (no CUDA GPU)"))
        print(f"{'matrix':28} {'solver':15} {'rows':>9} {'setup_s':>9} {'solve_s':>9} "
              f"{'iters':>6} {'true_res':>9} {'ratio':>7}")
        for name, a, b in matrices(clmg, context, args.size):
            entry = {"name": name, "rows": a.shape[0], "nonzeros": int(a.nnz), "runs": []}
            entry["runs"].append(run_clmg(clmg, context, a, b))
            if not args.no_pyamg:
                entry["runs"].append(run_pyamg(a, b))
            if use_cupy:
                entry["runs"].append(run_cupy(a, b))
            ours = entry["runs"][0]["setup_s"] + entry["runs"][0]["solve_s"]
            for run in entry["runs"]:
                total = run["setup_s"] + run["solve_s"]
                run["clmg_ratio"] = ours / total if total > 0 else None
                print(f"{name:28} {run['solver']:15} {a.shape[0]:9d} {run['setup_s']:9.4f} "
                      f"{run['solve_s']:9.4f} {run['iterations']:6d} "
                      f"{run['true_relative_residual']:9.2e} {run['clmg_ratio']:7.3f}")
            ours_run = entry["runs"][0]
            per_iteration = ours_run["solve_s"] / max(ours_run["iterations"], 1)
            ours_run["x_spmv_floor"] = per_iteration / spmv_floor_s(a, copy_gb_s)
            print(f"{'':28} clmg.solve call {ours_run['call_s']:.4f} s, Python overhead "
                  f"{1e3 * ours_run['python_overhead_s']:.2f} ms, an iteration "
                  f"{ours_run['x_spmv_floor']:.1f}x one SpMV's floor at {copy_gb_s:.1f} GB/s")
            document["matrices"].append(entry)
        print("ratio: clmg's (setup + solve) / the solver's")
    return perf_output.write("python_baselines.py", args, document)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
