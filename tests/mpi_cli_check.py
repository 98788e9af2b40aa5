#!/usr/bin/env python3
"""clmg under mpirun: `clmg solve` and `clmg poisson` on 2 and 3 ranks give
the serial run's iteration counts (+-1) and meet the tolerance, with the
partition in --json; a bad matrix file fails on every rank with the
reader's message and exit status 1; a command that runs on one process
only refuses several ranks with exit status 2.

Usage: mpi_cli_check.py MPIEXEC PATH/TO/clmg [MPIEXEC FLAGS...]
(the device comes from CLMG_DEVICE)
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import result_schema  # noqa: E402  (docs/result.schema.json)

failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def run(command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def laplacian_mtx(path, m):
    """The 5-point Laplacian of an m x m grid, numbered row by row."""
    entries = []
    for i in range(m):
        for j in range(m):
            row = i * m + j
            entries.append((row, row, 4.0))
            for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                ii, jj = i + di, j + dj
                if 0 <= ii < m and 0 <= jj < m:
                    entries.append((row, ii * m + jj, -1.0))
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{m * m} {m * m} {len(entries)}\n")
        for r, c, v in entries:
            f.write(f"{r + 1} {c + 1} {v}\n")


def solve_json(case, command):
    code, out, err = run(command)
    if code != 0:
        fail(case, f"exit status {code}: {err[-600:]}")
        return None
    try:
        value = json.loads(out)
    except json.JSONDecodeError as error:
        fail(case, f"stdout is not one JSON object ({error}): {out[:300]!r}")
        return None
    for problem in result_schema.problems(value):
        fail(case, f"not the result schema {problem}")
    return value


def main():
    mpiexec, clmg = sys.argv[1], sys.argv[2]
    flags = sys.argv[3:]
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as scratch:
        matrix = os.path.join(scratch, "laplacian.mtx")
        laplacian_mtx(matrix, 40)
        for method in ("cg", "gmres", "bicgstab"):
            args = ["solve", matrix, "--method", method, "--json", "--quiet"]
            serial = solve_json(f"solve {method} serial", [clmg] + args)
            for ranks in (2, 3):
                case = f"solve {method} on {ranks} ranks"
                result = solve_json(case, [mpiexec, "-n", str(ranks)] + flags + [clmg] + args)
                if not serial or not result:
                    continue
                if not result["converged"] or result["true_relative_residual"] > 1.001e-8:
                    fail(case, f"converged {result['converged']}, true relative residual "
                         f"{result['true_relative_residual']}")
                if abs(result["iterations"] - serial["iterations"]) > 1:
                    fail(case, f"{result['iterations']} iterations, serial {serial['iterations']}")
                if result.get("ranks") != ranks or len(result.get("partition", [])) != ranks:
                    fail(case, f"ranks {result.get('ranks')}, partition {result.get('partition')}")
                elif sum(p["rows"] for p in result["partition"]) != 1600:
                    fail(case, f"the partition's rows do not add up: {result['partition']}")
                if result["error_vs_ones"]["max_abs"] > 1e-5:
                    fail(case, f"error vs ones {result['error_vs_ones']}")

        # --cells-per-rank 8: the coarse mesh (8 cells) is split, levels 2 to 5 built in parts
        args = ["poisson", "--level", "5", "--json", "--quiet"]
        serial = solve_json("poisson serial", [clmg] + args + ["--assembly", "host"])
        for ranks in (2, 3):
            case = f"poisson on {ranks} ranks"
            result = solve_json(case, [mpiexec, "-n", str(ranks)] + flags + [clmg] + args +
                                ["--cells-per-rank", "8", "--view"])
            if result:
                hierarchy, halo = result.get("hierarchy", []), result.get("halo_per_level", [])
                if (len(hierarchy) != result["levels"] or len(halo) != result["levels"]
                        or hierarchy[-1]["rows"] != result["unknowns"] or halo[-1] <= 0):
                    fail(case, f"--view: hierarchy {hierarchy}, halo per level {halo}")
                pieces = result.get("pieces", [])
                owned = sum(piece["owned_cells"] for piece in pieces)
                if (result.get("partition_level") != 1 or len(pieces) != ranks
                        or owned != result.get("partition_cells")):
                    fail(case, f"partition level {result.get('partition_level')}, pieces {pieces}")
                for piece in pieces:  # each rank assembled only a part of the finest level
                    if not 0 < piece["piece_dofs"] < result["unknowns"]:
                        fail(case, f"rank {piece['rank']} assembled {piece['piece_dofs']} of "
                             f"{result['unknowns']} DOFs")
            if serial and result:
                if not result["converged"] or result["relative_residual"] > 1e-8:
                    fail(case, f"converged {result['converged']}, residual "
                         f"{result['relative_residual']}")
                if abs(result["iterations"] - serial["iterations"]) > 1:
                    fail(case, f"{result['iterations']} cycles, serial {serial['iterations']}")
                if result["unknowns"] != serial["unknowns"]:
                    fail(case, f"{result['unknowns']} unknowns, serial {serial['unknowns']}")

        bad = os.path.join(scratch, "bad.mtx")
        with open(bad, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1.0\n")
        code, out, err = run([mpiexec, "-n", "2"] + flags + [clmg, "solve", bad])
        if code != 1 or "bad.mtx:3" not in err:
            fail("bad file on 2 ranks", f"exit status {code}, stderr {err[-400:]!r}")
        code, out, err = run([mpiexec, "-n", "2"] + flags + [clmg, "homg", "--n", "17"])
        if code != 2 or "runs on one process" not in err:
            fail("homg on 2 ranks", f"exit status {code}, stderr {err[-400:]!r}")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("mpi_cli_check: all cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
