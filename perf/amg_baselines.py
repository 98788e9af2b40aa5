#!/usr/bin/env python3
"""The baselines of clmg's AMG on the same matrices, side by side: pyamg's
smoothed aggregation as a CG preconditioner and hypre's BoomerAMG-PCG on
this machine's CPU, and hypre's BoomerAMG-PCG on the GPU (clmg_hypre_pcg
built against a CUDA hypre), with clmg's AMG-CG beside them.

    clmg_perf_amg --write-mtx DIR --output amg.json ...
    perf/amg_baselines.py DIR [--hypre build/perf/clmg_hypre_pcg]
        [--hypre-gpu build-hypre-gpu/perf/clmg_hypre_pcg] [--clmg-json amg.json]
        [--clmg build/apps/clmg] [--device nvidia] [--cpu-max-rows N] [--output FILE] [--json]

For every A-NAME.mtx with its b-NAME.mtx in DIR (and coords-NAME.mtx, the
node coordinates of a vector problem with 3 DOFs a node, e.g. elasticity
from clmg_perf_spd_problems) it prints the setup time, the iterations and
the solve time to a relative residual of 1e-8 (pyamg: its own residual
history, which it computes from x; hypre: the residual clmg_hypre_pcg
recomputes from x), with each solver's version and settings:

  - pyamg: smoothed_aggregation_solver with its defaults (symmetric
    strength, theta 0; standard aggregation; Jacobi-smoothed prolongator;
    symmetric Gauss-Seidel pre- and post-smoothing; coarse solve by pinv
    below 10 rows), accel='cg'; with coordinates the matrix as 3 x 3 blocks
    and the six rigid-body modes as B (amg_testset's pyamg_solve);
  - hypre on the CPU (--hypre) and on the GPU (--hypre-gpu): clmg_hypre_pcg's
    settings (perf/hypre_pcg.c), with coordinates BoomerAMG's systems AMG
    for 3 unknowns a node (--num-functions 3); the GPU program's setup and
    solve are its last run of two (the first pays for CUDA's lazy loading of
    kernels and hypre's handles), and the matrix and vectors are on the GPU
    before the setup starts;
  - clmg: clmg_perf_amg's own AMG rows for the matrix (--clmg-json: the
    fastest converged AMG-CG variant by setup + solve; its setup is timed on
    the second build, after the kernels are compiled), else `clmg solve
    --precond amg` (--clmg; with --coordinates where there are coordinates),
    run twice, the second reported, its setup the upload and build (build_s:
    reading the files excluded).

pyamg and CPU hypre run only on matrices of at most --cpu-max-rows rows
(default: all). Last, a table per matrix: clmg's setup, solve and
iterations against hypre-GPU's, and the ratio (clmg setup + solve) /
(hypre-GPU setup + solve) against issue 30's goal of at most 0.5.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import warnings

import perf_output  # perf/perf_output.py: --output FILE and --json

GOAL = 0.5
TIMEOUT_S = 900


def pyamg_run(a, b, coords):
    """pyamg's smoothed aggregation with its defaults and CG (amg_testset's
    pyamg_solve, the one place both scripts run it)."""
    from amg_testset import pyamg_solve, rigid_body_modes
    if coords is not None:
        result = pyamg_solve(a, b, rigid_body_modes(coords), 3)
        settings = "pyamg defaults, accel cg, 3 x 3 blocks, rigid-body modes as B"
    else:
        result = pyamg_solve(a, b)
        settings = "pyamg defaults, accel cg"
    result.update({"solver": "pyamg smoothed aggregation + CG", "settings": settings,
                   "relative_residual": result["true_relative_residual"]})
    return result


def run_json(command, solver):
    """Runs a program that prints one JSON object; its object, or an error."""
    try:
        completed = subprocess.run(command, capture_output=True, text=True, check=False,
                                   timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"solver": solver, "status": "error", "message": f"over {TIMEOUT_S} s"}
    try:
        return json.loads(completed.stdout)
    except json.JSONDecodeError:
        return {"solver": solver, "status": "error",
                "message": (completed.stderr or completed.stdout).strip()[-500:]}


def hypre_run(program, a_path, b_path, label, functions):
    command = [program, a_path, b_path, "--tol", "1e-8"]
    if functions > 1:
        command += ["--num-functions", str(functions)]
    result = run_json(command, "hypre BoomerAMG-PCG")
    result["solver"] = label
    return result


def clmg_solve_run(clmg, a_path, b_path, coords_path, device):
    """`clmg solve --precond amg` twice (the first compiles or loads the
    kernels the matrix's levels need); the second's numbers."""
    command = [clmg, "solve", a_path, b_path, "--precond", "amg", "--tol", "1e-8",
               "--maxit", "2000", "--json", "--quiet"]
    if coords_path:
        command += ["--coordinates", coords_path]
    if device:
        command += ["--device", device]
    result = {}
    for _ in range(2):
        result = run_json(command, "clmg AMG-CG")
        if "build_s" not in result:
            return {"solver": "clmg AMG-CG (clmg solve)", "status": "error",
                    "message": f"{result.get('status', '')}: {result.get('message', '')}"}
    return {"solver": "clmg AMG-CG (clmg solve)", "variant": "clmg solve --precond amg",
            "setup_s": result["build_s"], "solve_s": result.get("solve_s"),
            "iterations": result.get("iterations"),
            "relative_residual": result.get("true_relative_residual"),
            "converged": bool(result.get("converged")), "read_s": result.get("read_s"),
            "kernels_s": result.get("kernels_s"), "status": result.get("status")}


def clmg_from_json(rows, name):
    """The fastest converged AMG-CG row of clmg_perf_amg for the matrix."""
    best = None
    for row in rows:
        if row.get("matrix") != name or not str(row.get("solver", "")).startswith("amg"):
            continue
        if not row.get("converged") or row.get("setup_s") is None or row.get("solve_s") is None:
            continue
        if best is None or row["setup_s"] + row["solve_s"] < best["setup_s"] + best["solve_s"]:
            best = row
    if best is None:
        return None
    return {"solver": "clmg AMG-CG (clmg_perf_amg)",
            "variant": f"{best['solver']} {best.get('precision', '')}".strip(),
            "setup_s": best["setup_s"], "solve_s": best["solve_s"],
            "iterations": best["iterations"], "relative_residual": best["relative_residual"],
            "converged": True, "levels": best.get("levels"),
            "operator_complexity": best.get("operator_complexity")}


def fmt(value, spec):
    """value formatted by spec, or "-" as wide when there is none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, spec)
    width = "".join(c for c in spec.split(".")[0] if c.isdigit())
    return "-".rjust(int(width) if width else 1)


def print_row(name, rows, result):
    solver = result.get("solver", "")[:30]
    if "setup_s" in result and result.get("status") != "error":
        print(f"{name:26s} {rows:9d} {solver:30s} {fmt(result['setup_s'], '9.4f')} "
              f"{fmt(result.get('iterations'), '5d')} {fmt(result.get('solve_s'), '9.4f')} "
              f"{fmt(result.get('relative_residual'), '9.2e')}")
    else:
        print(f"{name:26s} {rows:9d} {solver:30s} {result.get('status', 'error')}: "
              f"{str(result.get('message', ''))[:120]}")
    sys.stdout.flush()


def comparison_table(compared):
    """clmg against hypre on the GPU, per matrix, with the ratio against the goal."""
    print()
    print(f"clmg AMG-CG against hypre BoomerAMG-PCG on the GPU (goal: clmg setup + solve "
          f"<= {GOAL} x hypre-GPU's)")
    print(f"{'matrix':26s} {'rows':>9s} | {'clmg setup':>10s} {'solve':>8s} {'its':>4s} "
          f"| {'hypre-GPU setup':>15s} {'solve':>8s} {'its':>4s} | {'ratio':>6s}  goal  "
          f"clmg variant")
    for name, rows, clmg, gpu in compared:
        ok_c = clmg is not None and clmg.get("setup_s") is not None
        ok_g = gpu is not None and gpu.get("status") == "ok"
        ratio = None
        if ok_c and ok_g and clmg.get("solve_s") is not None:
            ratio = (clmg["setup_s"] + clmg["solve_s"]) / (gpu["setup_s"] + gpu["solve_s"])
        verdict = "-" if ratio is None else ("met" if ratio <= GOAL else "MISSED")
        print(f"{name:26s} {rows:9d} | "
              f"{fmt(clmg.get('setup_s') if ok_c else None, '10.4f')} "
              f"{fmt(clmg.get('solve_s') if ok_c else None, '8.4f')} "
              f"{fmt(clmg.get('iterations') if ok_c else None, '4d')} | "
              f"{fmt(gpu.get('setup_s') if ok_g else None, '15.4f')} "
              f"{fmt(gpu.get('solve_s') if ok_g else None, '8.4f')} "
              f"{fmt(gpu.get('iterations') if ok_g else None, '4d')} | "
              f"{fmt(ratio, '6.2f')}  {verdict:7s} {clmg.get('variant', '') if ok_c else ''}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="where clmg_perf_amg --write-mtx wrote the matrices")
    parser.add_argument("--hypre", help="clmg_hypre_pcg on the CPU (default: none)")
    parser.add_argument("--hypre-gpu", help="clmg_hypre_pcg built against a CUDA hypre "
                        "(default: none)")
    parser.add_argument("--clmg-json", help="clmg_perf_amg's JSON: clmg's AMG rows")
    parser.add_argument("--clmg", help="the clmg program, for matrices without a row in "
                        "--clmg-json (clmg solve --precond amg)")
    parser.add_argument("--device", help="clmg's device (default: its own choice)")
    parser.add_argument("--cpu-max-rows", type=int, default=0,
                        help="run pyamg and CPU hypre only up to this many rows (0: all)")
    perf_output.add_arguments(parser)
    options = perf_output.parse(parser, "amg_baselines")
    with perf_output.table(options):
        status, results = run(options)
    if status != 0:
        return status
    return perf_output.write("amg_baselines", options, {"benchmark": "amg_baselines",
                                                         "goal_ratio": GOAL, "results": results})


def run(options):
    """The table on stdout; (exit status, the result rows)."""
    # SciPy's announcement that mmread will return sparse arrays: noise here
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import numpy as np
        import scipy.io
        import scipy.sparse
        import pyamg  # noqa: F401
        have_pyamg = True
    except ImportError as missing:
        print(f"amg_baselines: {missing}: no pyamg column (pip install pyamg)", file=sys.stderr)
        have_pyamg = False
        import numpy as np
        import scipy.io
        import scipy.sparse
    paths = sorted(glob.glob(os.path.join(options.directory, "A-*.mtx")))
    if not paths:
        print(f"amg_baselines: no A-*.mtx in {options.directory}", file=sys.stderr)
        return 1, None
    clmg_rows = []
    if options.clmg_json:
        try:
            with open(options.clmg_json, encoding="utf-8") as source:
                clmg_rows = json.load(source).get("results", [])
        except (OSError, json.JSONDecodeError) as error:
            print(f"amg_baselines: {options.clmg_json}: {error}; no clmg rows from it",
                  file=sys.stderr)
    results = []
    compared = []
    print(f"{'matrix':26s} {'rows':>9s} {'solver':30s} {'setup s':>9s} {'its':>5s} "
          f"{'solve s':>9s} {'residual':>9s}")
    for a_path in paths:
        name = os.path.basename(a_path)[2:-4]
        b_path = os.path.join(options.directory, f"b-{name}.mtx")
        coords_path = os.path.join(options.directory, f"coords-{name}.mtx")
        if not os.path.exists(b_path):
            print(f"amg_baselines: {b_path} is missing", file=sys.stderr)
            return 1, None
        if not os.path.exists(coords_path):
            coords_path = None
        functions = 3 if coords_path else 1  # elasticity: 3 DOFs a node
        # the header alone (a large matrix is read only where pyamg runs)
        rows, _, entries, _, _, symmetry = scipy.io.mminfo(a_path)
        cpu = options.cpu_max_rows <= 0 or rows <= options.cpu_max_rows
        matrix_results = []
        nonzeros = None
        if have_pyamg and cpu:
            a = scipy.sparse.csr_matrix(scipy.io.mmread(a_path))
            nonzeros = int(a.nnz)
            b = np.asarray(scipy.io.mmread(b_path)).ravel()
            coords = np.asarray(scipy.io.mmread(coords_path)) if coords_path else None
            matrix_results.append(pyamg_run(a, b, coords))
            del a
        if options.hypre and cpu:
            matrix_results.append(hypre_run(options.hypre, a_path, b_path,
                                            "hypre BoomerAMG-PCG (CPU)", functions))
        if not cpu:
            matrix_results.append({"solver": "pyamg and CPU hypre", "status": "skipped",
                                   "message": f"over --cpu-max-rows {options.cpu_max_rows}"})
        gpu = None
        if options.hypre_gpu:
            gpu = hypre_run(options.hypre_gpu, a_path, b_path, "hypre BoomerAMG-PCG (GPU)",
                            functions)
            matrix_results.append(gpu)
        clmg = clmg_from_json(clmg_rows, name)
        if clmg is None and options.clmg:
            clmg = clmg_solve_run(options.clmg, a_path, b_path, coords_path, options.device)
        if clmg is not None:
            matrix_results.append(clmg)
        for result in matrix_results:
            result.update({"matrix": name, "rows": rows,
                           "nonzeros": nonzeros or result.get("nonzeros"),
                           "stored_entries": entries, "symmetry": symmetry})
            results.append(result)
            print_row(name, rows, result)
        if options.hypre_gpu or clmg is not None:
            compared.append((name, rows, clmg or {}, gpu))
    if compared:
        comparison_table(compared)
    return 0, results


if __name__ == "__main__":
    sys.exit(main())
