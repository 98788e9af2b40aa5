#!/usr/bin/env python3
"""The perf programs' output options, at tiny sizes on the test device (pocl
in CI): with --json --output FILE each prints one JSON document on stdout
and nothing else (the table goes nowhere) and writes the same document to
FILE, with its results present; without --json the table is on stdout; the
old spelling --json FILE still writes FILE, with a note on stderr; --help
explains both options; bad uses are refused with exit status 2. The Python
scripts of perf/ (perf/perf_output.py) take the same options: dfg2_analysis.py
on a lift of known period, dfg_validation.py on clmg flow's smallest DFG runs, cusparse_spmv.py's SciPy backend on clmg_perf_spmv's
matrix, scaling_table.py on clmg_perf_scaling's line (with MPI).

Usage: perf_check.py PERF_DIR [MPIEXEC [MPIEXEC_FLAGS...]]
(the device comes from CLMG_DEVICE; with MPIEXEC, clmg_perf_scaling too)
"""
import json
import math
import os
import subprocess
import sys
import tempfile

failures = []

# Each program at the smallest sizes it takes, and the key of its results.
PROGRAMS = {
    "clmg_perf_blas1": (["--max-n", "1e4", "--min-time", "0.01", "--trials", "1", "--precision",
                         "double", "--backend", "native"], "rows"),
    "clmg_perf_spmv": (["--nnz", "2000", "--min-time", "0.01", "--trials", "1", "--precision",
                        "double", "--matrices", "lap2d5,irregular"], "rows"),
    "clmg_perf_gmg": (["--q1-levels", "3:4", "--q2-levels", "3:3", "--numberings", "2lv,cm",
                       "--sweep", "no", "--min-time", "0.01", "--trials", "1"], "solve"),
    "clmg_perf_homg": (["--n-min", "16", "--n-max", "32", "--min-time", "0.01", "--trials", "1"],
                       "steps"),
    "clmg_perf_assembly": (["--quick"], "rows"),
    "clmg_perf_amg": (["--regular-levels", "1:1", "--blobs-level", "-1", "--irregular-n", "0"],
                      "results"),
    "clmg_perf_flow": (["--levels", "1:2", "--min-time", "0.01", "--trials", "1"], "finest"),
    "clmg_perf_upload": (["--bytes", "1e6", "--reps", "1"], "rows"),
}
OLD_SPELLING_NOTE = "--json FILE is now --output FILE"
# programs whose every result row has the "options" string of its solver
ECHO_OPTIONS = ("clmg_perf_gmg", "clmg_perf_amg")


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def run(command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def parses(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def check_program(name, command, args, key, tmp):
    path = os.path.join(tmp, name + ".json")
    # --json and --output together: the same document on stdout and in FILE
    code, out, err = run(command + args + ["--json", "--output", path])
    printed = parses(out)
    if code != 0:
        fail(name, f"--json --output: exit status {code}: {err[-600:]}")
    elif printed is None:
        fail(name, f"--json: stdout is not one JSON document: {out[:300]!r}")
    elif not os.path.exists(path):
        fail(name, "--output: no file")
    else:
        with open(path, encoding="utf-8") as f:
            written = json.load(f)
        if written != printed:
            fail(name, "--output's file and --json's stdout differ")
        results = printed.get(key)
        if not isinstance(results, list) or not results:
            fail(name, f"no results under '{key}': {str(printed)[:300]}")
        if OLD_SPELLING_NOTE in err:
            fail(name, "a note on the old spelling without it")
        # the solvers built through the options layer echo their options string
        if name in ECHO_OPTIONS and any(not isinstance(r.get("options"), str)
                                        or "krylov=" not in r["options"]
                                        for r in results or []):
            fail(name, f"a row without its solver's options: {str(results)[:300]}")
        print(f"ok   {name}: --json and --output, {len(results or [])} {key}", flush=True)
    # --help explains both
    code, out, _ = run(command + ["--help"])
    if code != 0 or "--output FILE" not in out or "--json" not in out:
        fail(name, f"--help (exit status {code}) does not explain --output FILE and --json")
    # bad uses: --output without its file, an unknown option
    for bad in (["--output"], ["--output="], ["--json="], ["--no-such-option"]):
        code, _, err = run(command + bad)
        if code != 2 or not err.strip():
            fail(name, f"{' '.join(bad)}: exit status {code}, stderr {err!r}, expected 2 and a "
                       "message")


def check_old_spelling(name, command, args, tmp):
    """--json FILE (and --json=FILE) write FILE with a note; the table is on stdout."""
    for form in ("separate", "equals"):
        path = os.path.join(tmp, f"{name}-old-{form}.json")
        spelling = ["--json", path] if form == "separate" else ["--json=" + path]
        code, out, err = run(command + args + spelling)
        if code != 0:
            fail(f"{name} {spelling[0]}", f"exit status {code}: {err[-600:]}")
            continue
        if OLD_SPELLING_NOTE not in err:
            fail(f"{name} {spelling[0]}", f"no note on the old spelling on stderr: {err!r}")
        if parses(out) is not None or not out.strip():
            fail(f"{name} {spelling[0]}", f"stdout is not the table: {out[:300]!r}")
        if not os.path.exists(path) or parses(open(path, encoding="utf-8").read()) is None:
            fail(f"{name} {spelling[0]}", "the file is missing or not JSON")
    print(f"ok   {name}: the old spelling --json FILE", flush=True)


SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "perf")


def check_script(name, args, tmp, table_word):
    """A perf/ script (perf/perf_output.py): --json --output FILE prints the
    document that FILE gets and no table; without --json the table (with
    table_word) is on stdout; the old --json FILE writes FILE with a note;
    an empty --output or --json= is refused with exit status 2."""
    command = [sys.executable, os.path.join(SCRIPTS, name)] + args
    path = os.path.join(tmp, name + ".json")
    code, out, err = run(command + ["--json", "--output", path])
    printed = parses(out)
    if code != 0 or printed is None or not os.path.exists(path):
        fail(name, f"--json --output: exit status {code}, stdout {out[:300]!r}, {err[-600:]}")
        return None
    with open(path, encoding="utf-8") as f:
        if json.load(f) != printed:
            fail(name, "--output's file and --json's stdout differ")
    code, out, err = run(command + ["--output", path])
    if code != 0 or table_word not in out or OLD_SPELLING_NOTE in err:
        fail(name, f"--output alone: exit status {code}, stdout {out[:300]!r}")
    old = os.path.join(tmp, name + "-old.json")
    code, out, err = run(command + ["--json", old])
    if code != 0 or OLD_SPELLING_NOTE not in err or table_word not in out \
            or not os.path.exists(old):
        fail(name, f"old --json FILE: exit status {code}, stderr {err[-300:]!r}")
    for bad in (["--output="], ["--json="]):
        code, _, err = run(command + bad)
        if code != 2 or not err.strip():
            fail(name, f"{bad[0]}: exit status {code}, stderr {err!r}, expected 2 and a message")
    code, out, _ = run(command[:2] + ["--help"])
    if code != 0 or "--output FILE" not in out or "--json" not in out:
        fail(name, f"--help (exit status {code}) does not explain --output FILE and --json")
    print(f"ok   perf/{name}: --json, --output and the old --json FILE", flush=True)
    return printed


def check_scripts(perf_dir, tmp):
    # DFG 2D-2 from a lift of period 1/3 (Strouhal 0.1 / period = 0.3)
    csv_path = os.path.join(tmp, "dfg2.csv")
    with open(csv_path, "w", encoding="utf-8") as f:
        f.write("time,drag,lift\n")
        for k in range(2000):
            t = 0.005 * k
            f.write(f"{t},{3.23 + 0.01 * math.sin(6 * math.pi * t)},"
                    f"{math.sin(6 * math.pi * t + 0.1)}\n")
    result = check_script("dfg2_analysis.py", [csv_path], tmp, "strouhal")
    if result is not None and abs(result["strouhal"] - 0.3) > 1e-3:
        fail("dfg2_analysis.py", f"Strouhal {result['strouhal']} of a lift of period 1/3")
    # the DFG validation's runs of clmg flow at the smallest size (far outside the intervals)
    clmg = os.path.join(perf_dir, os.pardir, "apps", "clmg")
    if os.path.exists(clmg):
        result = check_script("dfg_validation.py", ["--clmg", clmg, "--level", "0", "--cases",
                                                    "dfg1,dfg3", "--dt3", "2"], tmp, "dfg3")
        if result is not None and (sorted(result["cases"]) != ["dfg1", "dfg3"]
                                   or result["all_inside"]):
            fail("dfg_validation.py", f"cases or intervals at level 0: {str(result)[:300]}")
    # the SciPy backend of the cuSPARSE baseline, merged with clmg_perf_spmv's rows
    try:
        import scipy  # noqa: F401
    except ImportError:
        print("skip perf/cusparse_spmv.py: no SciPy", flush=True)
        return
    mtx = os.path.join(tmp, "mtx")
    spmv = os.path.join(tmp, "spmv-for-baseline.json")
    code, _, err = run([os.path.join(perf_dir, "clmg_perf_spmv"), "--nnz", "2000", "--min-time",
                        "0.01", "--trials", "1", "--precision", "double", "--matrices", "lap2d5",
                        "--write-mtx", mtx, "--output", spmv])
    if code != 0:
        fail("clmg_perf_spmv --write-mtx", f"exit status {code}: {err[-600:]}")
        return
    baseline = check_script("cusparse_spmv.py", ["--mtx-dir", mtx, "--backend", "scipy",
                                                  "--min-time", "0.001", "--min-reps", "1",
                                                  "--trials", "1", "--precision", "double",
                                                  "--clmg-json", spmv], tmp, "lap2d5")
    if baseline is not None and (baseline.get("failures") or not baseline.get("comparison")):
        fail("cusparse_spmv.py", f"failures or no comparison: {str(baseline)[:300]}")


def check_scaling(perf_dir, mpiexec, tmp):
    name = "clmg_perf_scaling"
    command = mpiexec + ["-n", "1", os.path.join(perf_dir, name)]
    args = ["--problem", "box2:4:2", "--min-time", "0.01"]
    path = os.path.join(tmp, "scaling.jsonl")
    # --output appends a line per run; --json prints the run's line alone
    for run_number in (1, 2):
        code, out, err = run(command + args + ["--json", "--output", path])
        if code != 0:
            fail(name, f"exit status {code}: {err[-600:]}")
            return
        printed = parses(out)
        if printed is None or printed.get("ranks") != 1:
            fail(name, f"--json: stdout is not the run's JSON line: {out[:300]!r}")
        lines = open(path, encoding="utf-8").read().splitlines()
        if len(lines) != run_number or parses(lines[-1]) != printed:
            fail(name, f"--output: {len(lines)} lines after {run_number} runs, or the last one "
                       "is not what --json printed")
    code, out, _ = run(command + ["--help"])
    if code != 0 or "--output FILE" not in out or "--json" not in out:
        fail(name, f"--help (exit status {code}) does not explain --output FILE and --json")
    print(f"ok   {name}: --json and --output (appended)", flush=True)
    tables = check_script("scaling_table.py", [path], tmp, "scaling")
    if tables is not None and set(tables) != {"strong", "weak"}:
        fail("scaling_table.py", f"not the strong and weak tables: {str(tables)[:300]}")


def main():
    perf_dir = sys.argv[1]
    mpiexec = sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        for name, (args, key) in PROGRAMS.items():
            check_program(name, [os.path.join(perf_dir, name)], args, key, tmp)
        check_old_spelling("clmg_perf_blas1", [os.path.join(perf_dir, "clmg_perf_blas1")],
                           PROGRAMS["clmg_perf_blas1"][0], tmp)
        if mpiexec and os.path.exists(os.path.join(perf_dir, "clmg_perf_scaling")):
            check_scaling(perf_dir, mpiexec, tmp)
        check_scripts(perf_dir, tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("perf programs' output options: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
