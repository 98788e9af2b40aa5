#!/usr/bin/env python3
"""The perf programs' output options, at tiny sizes on the test device (pocl
in CI): with --json --output FILE each prints one JSON document on stdout
and nothing else (the table goes nowhere) and writes the same document to
FILE, with its results present; without --json the table is on stdout; the
old spelling --json FILE still writes FILE, with a note on stderr; --help
explains both options; bad uses are refused with exit status 2.

Usage: perf_check.py PERF_DIR [MPIEXEC [MPIEXEC_FLAGS...]]
(the device comes from CLMG_DEVICE; with MPIEXEC, clmg_perf_scaling too)
"""
import json
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
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("perf programs' output options: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
