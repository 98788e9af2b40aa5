#!/usr/bin/env python3
"""clmg's AMG against pyamg on the SPD test set, side by side in one run.

    perf/amg_testset.py [--size small|medium|large] [--clmg build/apps/clmg]
        [--problems build/perf/clmg_perf_spd_problems] [--device STR]
        [--smoothers jacobi-rho,chebyshev,gauss-seidel] [--output FILE] [--json]

For every problem of the test set (clmg/spd_problems.h: P1 and P2 linear
elasticity on tetrahedra, Poisson ratio 0.3 and 0.45; interior-penalty DG
diffusion on triangles; Q2 on distorted hexahedra with coefficient jumps of
1e4) it writes the matrix, right-hand side and node coordinates with
clmg_perf_spd_problems, then solves A x = b to a relative residual of 1e-8:

  - pyamg: smoothed_aggregation_solver with its defaults (for elasticity the
    matrix as 3 x 3 blocks with the six rigid-body modes as B, as pyamg's
    documentation does it), accel='cg';
  - clmg: `clmg solve --precond amg` with each smoother (for elasticity with
    --coordinates, which gives block size 3 and the rigid-body modes), its
    iterations, setup and solve times and the true residual from its JSON.

It prints a table with clmg's iterations against the issue's bound, 1.3 x
pyamg's + 2 ("ok" or "MISSED"), and writes the rows as JSON. Setup and
solve times are wall-clock on the machine it runs on (pyamg on the CPU,
clmg on the device it selects); clmg's setup includes reading the files,
pyamg's does not. For clmg each iteration's time is also given against its
floor ("x floor"): the bytes a CG iteration with the AMG cycle must move
(clmg solve's iteration_bytes) at the copy bandwidth `clmg info` measures
on the same device at the start of the run.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import perf_output  # perf/perf_output.py: --output FILE and --json

SIZES = {
    # (problem, level, extra generator options)
    "small": [("elasticity-p1", 6, []), ("elasticity-p1", 6, ["--poisson-ratio", "0.45"]),
              ("elasticity-p2", 3, []), ("dg-diffusion", 16, []), ("q2-jump", 4, [])],
    "medium": [("elasticity-p1", 16, []), ("elasticity-p1", 16, ["--poisson-ratio", "0.45"]),
               ("elasticity-p2", 8, []), ("dg-diffusion", 64, []), ("q2-jump", 12, [])],
    "large": [("elasticity-p1", 32, []), ("elasticity-p1", 32, ["--poisson-ratio", "0.45"]),
              ("elasticity-p2", 16, []), ("dg-diffusion", 128, []), ("q2-jump", 24, [])],
}


def rigid_body_modes(coords):
    """The six rigid-body modes of 3D elasticity for DOF 3 node + c."""
    import numpy as np
    n = coords.shape[0]
    x, y, z = (coords[:, d] - coords[:, d].mean() for d in range(3))
    b = np.zeros((3 * n, 6))
    for c in range(3):
        b[c::3, c] = 1.0
    b[0::3, 3], b[1::3, 3] = -y, x
    b[1::3, 4], b[2::3, 4] = -z, y
    b[0::3, 5], b[2::3, 5] = z, -x
    return b


def pyamg_solve(a, b, candidates=None, block=1):
    """pyamg's smoothed aggregation with its defaults (B: the candidates,
    the matrix as block x block blocks) as a CG preconditioner to 1e-8:
    setup and solve times, iterations, the true residual."""
    import numpy as np
    import pyamg
    start = time.perf_counter()
    matrix = a.tobsr(blocksize=(block, block)) if block > 1 else a
    solver = pyamg.smoothed_aggregation_solver(matrix, B=candidates)
    setup = time.perf_counter() - start
    residuals = []
    start = time.perf_counter()
    x = solver.solve(b, tol=1e-8, accel="cg", maxiter=5000, residuals=residuals)
    solve = time.perf_counter() - start
    relative = float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))
    return {"solver": "pyamg", "version": pyamg.__version__, "rows": a.shape[0],
            "nonzeros": int(a.nnz), "setup_s": setup, "solve_s": solve,
            "iterations": len(residuals) - 1, "true_relative_residual": relative,
            "levels": len(solver.levels),
            "operator_complexity": float(solver.operator_complexity()),
            "converged": relative <= 1e-8}


def pyamg_run(prefix, elasticity):
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    a = sp.csr_matrix(scipy.io.mmread(prefix + ".mtx"))
    b = np.asarray(scipy.io.mmread(prefix + "_b.mtx")).ravel()
    if not elasticity:
        return pyamg_solve(a, b)
    coords = np.asarray(scipy.io.mmread(prefix + "_coords.mtx"))
    return pyamg_solve(a, b, rigid_body_modes(coords), 3)


def copy_bandwidth(clmg, device):
    """The device's copy bandwidth in GB/s, measured by `clmg info` now."""
    command = [clmg, "info", "--json"] + (["--device", device] if device else [])
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    try:
        return float(json.loads(completed.stdout)["copy_bandwidth_gb_s"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def clmg_run(clmg, prefix, elasticity, smoother, device, bandwidth):
    command = [clmg, "solve", prefix + ".mtx", prefix + "_b.mtx", "--precond", "amg",
               "--smoother", smoother, "--tol", "1e-8", "--maxit", "2000", "--json", "--quiet",
               "--view"]
    if elasticity:
        command += ["--coordinates", prefix + "_coords.mtx"]
    if device:
        command += ["--device", device]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    try:
        result = json.loads(completed.stdout)
    except json.JSONDecodeError:
        return {"solver": f"clmg {smoother}", "status": "error",
                "message": (completed.stderr or completed.stdout).strip()[:300]}
    floor_s = ratio = None
    its, solve_s = result.get("iterations"), result.get("solve_s")
    if bandwidth and result.get("iteration_bytes") and its and solve_s:
        floor_s = result["iteration_bytes"] / (bandwidth * 1e9)
        ratio = solve_s / its / floor_s
    return {"solver": f"clmg {smoother}", "status": result.get("status"),
            "iteration_bytes": result.get("iteration_bytes"), "floor_s": floor_s,
            "ratio_to_floor": ratio,
            "message": result.get("message", ""), "iterations": result.get("iterations"),
            "setup_s": result.get("setup_s"), "solve_s": result.get("solve_s"),
            "true_relative_residual": result.get("true_relative_residual"),
            "operator_complexity": result.get("operator_complexity"),
            "converged": result.get("converged", False),
            "device": result.get("device", {}).get("name")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--clmg", default="build/apps/clmg")
    parser.add_argument("--problems", default="build/perf/clmg_perf_spd_problems")
    parser.add_argument("--device", help="clmg's device (default: its own choice)")
    parser.add_argument("--smoothers", default="jacobi-rho,chebyshev,gauss-seidel")
    perf_output.add_arguments(parser)
    options = perf_output.parse(parser, "amg_testset")
    with perf_output.table(options):
        status, document = run(options)
    return status or perf_output.write("amg_testset", options, document)


def run(options):
    """The table on stdout; (exit status, the JSON document)."""
    try:
        import pyamg  # noqa: F401
        import scipy  # noqa: F401
    except ImportError as missing:
        print(f"amg_testset: {missing}; pip install pyamg scipy", file=sys.stderr)
        return 1, None
    for program in (options.clmg, options.problems):
        if not os.access(program, os.X_OK):
            print(f"amg_testset: {program} is not an executable (build clmg first, or pass "
                  "--clmg / --problems)", file=sys.stderr)
            return 1, None
    rows = []
    missed = 0
    bandwidth = copy_bandwidth(options.clmg, options.device)
    print(f"copy bandwidth (clmg info): "
          f"{f'{bandwidth:.2f} GB/s' if bandwidth else 'not measured'}")
    print(f"{'problem':28s} {'rows':>8s} {'solver':18s} {'its':>5s} {'bound':>5s} "
          f"{'setup s':>8s} {'solve s':>8s} {'x floor':>7s} {'op.cx':>6s} {'residual':>9s}  "
          f"verdict")
    with tempfile.TemporaryDirectory(prefix="clmg-amg-testset-") as work:
        for problem, level, extra in SIZES[options.size]:
            name = f"{problem} L{level}" + (f" nu {extra[1]}" if extra else "")
            prefix = os.path.join(work, f"{problem}-{level}-{len(rows)}")
            subprocess.run([options.problems, problem, "--level", str(level), *extra, "-o",
                            prefix], check=True, capture_output=True)
            elasticity = problem.startswith("elasticity")
            reference = pyamg_run(prefix, elasticity)
            bound = 1.3 * reference["iterations"] + 2
            results = [reference] + [clmg_run(options.clmg, prefix, elasticity, s, options.device,
                                              bandwidth)
                                     for s in options.smoothers.split(",")]
            for result in results:
                result.update({"problem": problem, "level": level, "options": " ".join(extra),
                               "rows": reference["rows"], "bound": bound})
                if result["solver"] == "pyamg":
                    verdict = "reference"
                elif not result.get("converged"):
                    verdict = "FAILED: " + str(result.get("message", ""))[:60]
                    missed += 1
                elif result["iterations"] <= bound:
                    verdict = "ok"
                else:
                    verdict = "MISSED"
                    missed += 1
                result["verdict"] = verdict
                rows.append(result)
                its = result.get("iterations")
                ratio = f"{result['ratio_to_floor']:.2f}" if result.get("ratio_to_floor") else "-"
                print(f"{name:28s} {reference['rows']:8d} {result['solver']:18s} "
                      f"{its if its is not None else -1:5d} {bound:5.0f} "
                      f"{result.get('setup_s') or 0:8.3f} {result.get('solve_s') or 0:8.3f} "
                      f"{ratio:>7s} "
                      f"{result.get('operator_complexity') or 0:6.2f} "
                      f"{result.get('true_relative_residual') or float('nan'):9.2e}  {verdict}")
                sys.stdout.flush()
    print(f"{missed} clmg run(s) over the bound or failed")
    return 0, {"benchmark": "amg_testset", "size": options.size,
               "copy_bandwidth_gb_s": bandwidth, "rows": rows}


if __name__ == "__main__":
    sys.exit(main())
