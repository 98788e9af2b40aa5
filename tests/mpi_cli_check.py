#!/usr/bin/env python3
"""clmg under mpirun: `clmg solve` and `clmg poisson` on 2 and 3 ranks give
the serial run's iteration counts (+-1) and meet the tolerance, with the
partition in --json; the solver from --set or --options (the options
database) is the one the flags make, and the "options" the JSON echoes
repeat the run; --precond amg (the distributed AMG) converges within 1.5 x
+ 3 of the serial AMG's iterations; what a distributed solve cannot honour
(precision=mixed, amg.* without precond=amg, classical AMG) is refused by
name with exit status 2; a bad
matrix file fails on every rank with the reader's message and exit
status 1; a command that runs on one process only refuses several ranks
with exit status 2.

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
        # the pieces built on the device (the default where it has fp64) and on the host
        for ranks, where in ((2, None), (2, "host"), (3, None)):
            case = f"poisson on {ranks} ranks" + (f", pieces on the {where}" if where else "")
            result = solve_json(case, [mpiexec, "-n", str(ranks)] + flags + [clmg] + args +
                                ["--cells-per-rank", "8", "--view"] +
                                (["--assembly", where] if where else []))
            if result:
                expected = where or ("device" if result["device"]["has_fp64"] else "host")
                if result.get("piece_assembly") != expected or not result.get("piece_s", -1) > 0:
                    fail(case, f"pieces built on the {result.get('piece_assembly')} in "
                         f"{result.get('piece_s')} s, expected the {expected}")
                # build_s is the distributed matrices and the solver's setup
                matrices, solver = result.get("matrices_s", -1), result.get("solver_s", -1)
                if (not 0 < matrices <= result["build_s"] or not 0 <= solver <= result["build_s"]
                        or abs(matrices + solver - result["build_s"]) > 1e-9):
                    fail(case, f"matrices_s {matrices} + solver_s {solver}, build_s "
                         f"{result['build_s']}")
                # setup_phases: each rank's steps, within the phases they are part of
                phases = result.get("setup_phases", [])
                if [phase.get("rank") for phase in phases] != list(range(ranks)):
                    fail(case, f"setup_phases for ranks {[p.get('rank') for p in phases]}")
                eps = 1e-4  # (the library's clock and the app's)
                for phase in phases:
                    piece_parts = (phase["piece_assembly_s"] + phase["piece_fetch_s"] +
                                   phase["piece_download_s"] + phase["piece_meshes_s"])
                    matrix_parts = (phase["matrix_check_s"] + phase["matrix_split_s"] +
                                    phase["halo_plan_s"] + phase["matrix_device_s"])
                    on_device = expected == "device"
                    if (min(v for k, v in phase.items() if k != "rank") < 0
                            or piece_parts > phase["piece_s"] + eps
                            or (phase["piece_assembly_s"] > 0) != on_device
                            or not 0 < matrix_parts <= phase["matrices_s"] + eps
                            or phase["whole_s"] + phase["piece_s"] + phase["numbering_s"]
                            + phase["rows_s"] > phase["hierarchy_s"] + eps
                            or not phase["numbering_s"] > 0 or not phase["rows_s"] > 0):
                        fail(case, f"setup_phases of rank {phase['rank']}: {phase}")
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

        # the options database: flags, --set, an --options file and the echo
        # of a run's "options" make the same solver
        mpi2 = [mpiexec, "-n", "2"] + flags + [clmg]
        options_file = os.path.join(scratch, "gmres.json")
        with open(options_file, "w") as f:
            json.dump({"krylov": "gmres", "restart": 10, "tol": 1e-9}, f)
        base = ["solve", matrix, "--json", "--quiet"]
        spellings = {
            "flags": ["--method", "gmres", "--restart", "10", "--tol", "1e-9"],
            "--set": ["--set", "krylov=gmres restart=10 tol=1e-9"],
            "--options": ["--options", options_file],
        }
        results = {name: solve_json(f"solve {name} on 2 ranks", mpi2 + base + extra)
                   for name, extra in spellings.items()}
        flagged = results["flags"]
        for name, result in results.items():
            if not result or not flagged:
                continue
            options = result.get("options", {})
            if (result["method"] != "gmres" or result["restart"] != 10
                    or options.get("krylov") != "gmres" or options.get("restart") != 10
                    or options.get("tol") != 1e-9 or options.get("precond") != "jacobi"):
                fail(f"solve {name} on 2 ranks", f"method {result['method']}, restart "
                     f"{result['restart']}, options {options}")
            if (result["iterations"] != flagged["iterations"]
                    or result["true_relative_residual"] > 1.001e-9):
                fail(f"solve {name} on 2 ranks", f"{result['iterations']} iterations (flags: "
                     f"{flagged['iterations']}), true relative residual "
                     f"{result['true_relative_residual']}")
        if flagged:
            echo = os.path.join(scratch, "echo.json")
            with open(echo, "w") as f:
                json.dump(flagged["options"], f)
            again = solve_json("solve --options ECHO on 2 ranks", mpi2 + base + ["--options", echo])
            if again and again["iterations"] != flagged["iterations"]:
                fail("solve --options ECHO on 2 ranks",
                     f"{again['iterations']} iterations, the echoed run {flagged['iterations']}")

        args = ["poisson", "--level", "4", "--json", "--quiet"]
        by_flags = solve_json("poisson flags on 2 ranks",
                              mpi2 + args + ["--method", "cg", "--cycle", "w", "--pre", "2"])
        by_set = solve_json("poisson --set on 2 ranks",
                            mpi2 + args + ["--set", "krylov=cg mg.cycle=w mg.pre=2"])
        serial = solve_json("poisson --set serial",
                            [clmg] + args + ["--assembly", "host", "--set",
                                             "krylov=cg mg.cycle=w mg.pre=2"])
        for case, result in (("poisson flags on 2 ranks", by_flags),
                             ("poisson --set on 2 ranks", by_set)):
            if not result or not serial:
                continue
            options = result.get("options", {})
            mg = options.get("mg", {})
            if (result["iteration_kind"] != "krylov" or options.get("krylov") != "cg"
                    or options.get("precond") != "multigrid" or mg.get("cycle") != "w"
                    or mg.get("pre") != 2):
                fail(case, f"iteration kind {result['iteration_kind']}, options {options}")
            if (not result["converged"] or abs(result["iterations"] - serial["iterations"]) > 1
                    or result["relative_residual"] > 1e-8):
                fail(case, f"{result['iterations']} iterations (serial {serial['iterations']}), "
                     f"residual {result['relative_residual']}")

        # the distributed AMG: mpirun -np 2 clmg solve A.mtx --precond amg
        args = ["solve", matrix, "--precond", "amg", "--json", "--quiet"]
        serial = solve_json("solve amg serial", [clmg] + args)
        for ranks in (2, 3):
            case = f"solve --precond amg on {ranks} ranks"
            result = solve_json(case, [mpiexec, "-n", str(ranks)] + flags + [clmg] + args)
            if not serial or not result:
                continue
            if (not result["converged"] or result["true_relative_residual"] > 1.001e-8
                    or result["error_vs_ones"]["max_abs"] > 1e-5):
                fail(case, f"converged {result['converged']}, true relative residual "
                     f"{result['true_relative_residual']}, error {result['error_vs_ones']}")
            if (result["preconditioner"] != "amg"
                    or result["iterations"] > 1.5 * serial["iterations"] + 3):
                fail(case, f"preconditioner {result['preconditioner']}, {result['iterations']} "
                     f"iterations, serial {serial['iterations']}")

        # what a distributed solve cannot honour: refused by name, exit status 2
        amg_file = os.path.join(scratch, "amg.json")
        with open(amg_file, "w") as f:
            json.dump({"amg": {"max_levels": 4}}, f)
        refusals = [
            (["solve", matrix, "--precond", "amg", "--set", "amg.coarsening=classical"],
             "amg.coarsening=classical"),
            (["solve", matrix, "--set", "precond=amg", "--set", "amg.block_size=2"],
             "amg.block_size=2"),
            (["solve", matrix, "--precond", "amg", "--set", "mg.smoother=patch"],
             "mg.smoother=patch"),
            (["solve", matrix, "--set", "precision=mixed"], "precision=mixed"),
            (["solve", matrix, "--options", amg_file], "amg.max_levels"),
            (["solve", matrix, "--set", "precond=multigrid"], "precond=multigrid"),
            (["poisson", "--level", "3", "--precision", "mixed"], "precision=mixed"),
            (["poisson", "--level", "3", "--set", "amg.coarsening=classical"],
             "amg.coarsening"),
            (["solve", matrix, "--set", "mg.smooth=jacobi"], "unknown option 'mg.smooth'"),
        ]
        for command, named in refusals:
            case = "refused on 2 ranks: " + " ".join(command[2 if command[0] == "solve" else 1:])
            code, out, err = run(mpi2 + command + ["--json"])
            if code != 2 or named not in err:
                fail(case, f"exit status {code}, stderr {err[-400:]!r}")
                continue
            try:
                value = json.loads(out)
            except json.JSONDecodeError as error:
                fail(case, f"stdout is not one JSON object ({error}): {out[:300]!r}")
                continue
            for problem in result_schema.problems(value):
                fail(case, f"not the result schema {problem}")
            if value.get("status") != "usage_error" or named not in value.get("message", ""):
                fail(case, f"JSON {value}")

        bad = os.path.join(scratch, "bad.mtx")
        with open(bad, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1.0\n")
        code, out, err = run([mpiexec, "-n", "2"] + flags + [clmg, "solve", bad])
        if code != 1 or "bad.mtx:3" not in err:
            fail("bad file on 2 ranks", f"exit status {code}, stderr {err[-400:]!r}")
        # the matrix is read in parts: a bad line far into the file is reported
        # with its line in the whole file by whichever rank parsed it
        with open(matrix) as f:
            lines = f.read().split("\n")
        bad_line = 3 * len(lines) // 4
        lines[bad_line - 1] = "1 two 3.0"
        middle = os.path.join(scratch, "bad-middle.mtx")
        with open(middle, "w") as f:
            f.write("\n".join(lines))
        code, out, err = run([mpiexec, "-n", "3"] + flags + [clmg, "solve", middle])
        if code != 1 or f"bad-middle.mtx:{bad_line}: expected a column index" not in err:
            fail("bad line in the middle on 3 ranks", f"exit status {code}, stderr {err[-400:]!r}")
        # the ranks check A together: --method cg refuses a nonsymmetric matrix
        # with an indefinite diagonal (row 3 on the second rank), auto picks GMRES
        # for it and CG for the Laplacian, as the serial command does
        nonsymmetric = os.path.join(scratch, "nonsymmetric.mtx")
        with open(nonsymmetric, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 5\n"
                    "1 1 4\n2 2 4\n3 3 -4\n1 2 1\n2 3 -1\n")
        code, out, err = run([mpiexec, "-n", "2"] + flags + [clmg, "solve", nonsymmetric,
                                                               "--method", "cg"])
        if (code != 1 or "nonsymmetric.mtx is not symmetric" not in err
                or "1 diagonal entry of" not in err or "(the first: row 3, a_ii = -4)" not in err):
            fail("cg on a nonsymmetric matrix on 2 ranks", f"exit status {code}, stderr {err[-600:]!r}")
        for path, method in ((nonsymmetric, "gmres"), (matrix, "cg")):
            case = f"krylov auto on 2 ranks: {os.path.basename(path)}"
            result = solve_json(case, mpi2 + ["solve", path, "--json", "--quiet"])
            if result and result.get("method") != method:
                fail(case, f"method {result.get('method')}, expected {method}")
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
