#!/usr/bin/env python3
"""The baselines of clmg_perf_amg on the same matrices: pyamg's smoothed
aggregation as a CG preconditioner, and hypre's BoomerAMG-PCG (the program
clmg_hypre_pcg, built with clmg when hypre is found), each on this
machine's CPU.

    clmg_perf_amg --write-mtx DIR ...
    perf/amg_baselines.py DIR [--hypre build/perf/clmg_hypre_pcg] [--json FILE]

For every A-NAME.mtx with its b-NAME.mtx in DIR it prints the setup time,
the iterations and the solve time to a relative residual of 1e-8 (pyamg:
its own residual history, which it computes from x; hypre: the residual
clmg_hypre_pcg recomputes), with each solver's version and settings. pyamg
runs with its defaults (symmetric strength, theta 0; standard aggregation;
Jacobi-smoothed prolongator; symmetric Gauss-Seidel pre- and post-smoothing;
coarse solve by pinv below 10 rows) and accel='cg'.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time


def pyamg_run(a, b):
    """pyamg's smoothed aggregation with its defaults and CG (amg_testset's
    pyamg_solve, the one place both scripts run it)."""
    from amg_testset import pyamg_solve
    result = pyamg_solve(a, b)
    result.update({"solver": "pyamg smoothed aggregation + CG",
                   "settings": "pyamg defaults, accel cg",
                   "relative_residual": result["true_relative_residual"]})
    return result


def hypre_run(program, a_path, b_path):
    completed = subprocess.run([program, a_path, b_path, "--tol", "1e-8"], capture_output=True,
                               text=True, check=False)
    try:
        result = json.loads(completed.stdout)
    except json.JSONDecodeError:
        return {"solver": "hypre BoomerAMG-PCG", "status": "error",
                "message": (completed.stderr or completed.stdout).strip()[:500]}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="where clmg_perf_amg --write-mtx wrote the matrices")
    parser.add_argument("--hypre", help="the clmg_hypre_pcg program (default: none)")
    parser.add_argument("--json", help="write the results as JSON to this file")
    options = parser.parse_args()
    try:
        import scipy.io
        import scipy.sparse
        import pyamg  # noqa: F401
    except ImportError as missing:
        print(f"amg_baselines: {missing}; install pyamg and scipy (pip install pyamg)",
              file=sys.stderr)
        return 1
    paths = sorted(glob.glob(os.path.join(options.directory, "A-*.mtx")))
    if not paths:
        print(f"amg_baselines: no A-*.mtx in {options.directory}", file=sys.stderr)
        return 1
    rows = []
    print(f"{'matrix':24s} {'rows':>9s} {'solver':26s} {'setup s':>9s} {'its':>5s} "
          f"{'solve s':>9s} {'residual':>9s}")
    for a_path in paths:
        name = os.path.basename(a_path)[2:-4]
        b_path = os.path.join(options.directory, f"b-{name}.mtx")
        a = scipy.sparse.csr_matrix(scipy.io.mmread(a_path))
        b = scipy.io.mmread(b_path).ravel() if os.path.exists(b_path) else None
        if b is None:
            print(f"amg_baselines: {b_path} is missing", file=sys.stderr)
            return 1
        results = [pyamg_run(a, b)]
        if options.hypre:
            results.append(hypre_run(options.hypre, a_path, b_path))
        for result in results:
            result.update({"matrix": name, "rows": a.shape[0], "nonzeros": a.nnz})
            rows.append(result)
            if "setup_s" in result:
                print(f"{name:24s} {a.shape[0]:9d} {result['solver'][:26]:26s} "
                      f"{result['setup_s']:9.4f} {result['iterations']:5d} "
                      f"{result['solve_s']:9.4f} {result['relative_residual']:9.2e}")
            else:
                print(f"{name:24s} {a.shape[0]:9d} {result['solver'][:26]:26s} "
                      f"error: {result.get('message', '')}")
            sys.stdout.flush()
    if options.json:
        with open(options.json + ".tmp", "w", encoding="utf-8") as out:
            json.dump({"benchmark": "amg_baselines", "results": rows}, out, indent=1)
        os.replace(options.json + ".tmp", options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
