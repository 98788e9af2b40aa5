#!/usr/bin/env python3
"""clmg bench on the test device (pocl in CI): a --quick run writes a JSON
report that parses and verifies, with every stage present and every result
checked; its HTML page is self-contained; --compare prints two reports side
by side; a corrupted input (--inject-fault) makes the run report failure
(exit status 1, FAILED, no figure of merit) instead of a figure; bad reports
and bad options are refused with messages.

Usage: bench_check.py PATH/TO/clmg   (the device comes from CLMG_DEVICE)
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import result_schema  # noqa: E402  (docs/result.schema.json)

STAGES = {"copy", "blas1", "spmv", "gmg", "hpcg", "amg", "assembly", "flow", "homg"}
failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def run(clmg, args):
    result = subprocess.run([clmg, "bench"] + args, capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def finite(value):
    return isinstance(value, (int, float)) and math.isfinite(value)


def check_report(case, path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if report.get("program") != "clmg bench" or report.get("schema_version") != 1:
        fail(case, f"not a clmg bench report: {str(report)[:200]}")
    if report.get("verified") is not True or report.get("failures"):
        fail(case, f"not verified: {report.get('failures')}")
    if not finite(report.get("copy_gb_s")) or report["copy_gb_s"] <= 0:
        fail(case, f"copy bandwidth {report.get('copy_gb_s')}")
    for key in ("name", "platform", "driver_version", "opencl_version"):
        if not report.get("device", {}).get(key):
            fail(case, f"device.{key} missing")
    stages = {r["stage"] for r in report["results"]}
    if stages != STAGES:
        fail(case, f"stages {sorted(stages)}, expected {sorted(STAGES)}")
    names = set()
    for r in report["results"]:
        what = f"{r['stage']} {r['name']}"
        if what in names:
            fail(case, f"{what} twice")
        names.add(what)
        if r["verified"] is not True or not r["check"]:
            fail(case, f"{what} not verified: {r['check']}")
        for key in ("time_s", "gb_s", "ratio_to_copy"):
            if not finite(r[key]) or r[key] <= 0:
                fail(case, f"{what}: {key} = {r[key]}")
        if r["iterations"] is not None and (not finite(r["solve_s"]) or r["iterations"] < 1):
            fail(case, f"{what}: a solver without solve time or iterations")
        if r["iterations"] is not None and not (isinstance(r.get("options"), str)
                                                and "=" in r["options"]):
            fail(case, f"{what}: a solver without its options string: {r.get('options')!r}")
    fom = report["figure_of_merit"]
    if not finite(fom["bandwidth_ratio_geomean"]) or not finite(fom["hpcg_like_gflops"]):
        fail(case, f"figure of merit {fom}")
    if fom["results_in_mean"] != len(report["results"]) - 1:  # all but the copy
        fail(case, f"{fom['results_in_mean']} results in the mean of {len(report['results'])}")
    return report


def rerun_gmg(clmg, path):
    """The gmg result's options rerun by `clmg poisson --set` on its level
    solve the same system in the same cycles to the same residual."""
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    gmg = [r for r in report["results"] if r["stage"] == "gmg"]
    match = re.search(r"level (\d+)", gmg[0]["problem"]) if gmg else None
    if not match or not gmg[0].get("options"):
        fail("gmg rerun", f"no level or options in {gmg}")
        return
    result = subprocess.run([clmg, "poisson", "--level", match.group(1), "--set",
                             gmg[0]["options"], "--json"], capture_output=True, text=True,
                            timeout=600)
    try:
        poisson = json.loads(result.stdout)
    except json.JSONDecodeError:
        fail("gmg rerun", f"exit {result.returncode}: {result.stderr[-600:]}")
        return
    if result.returncode != 0 or poisson.get("iterations") != gmg[0]["iterations"]:
        fail("gmg rerun", f"clmg poisson --set '{gmg[0]['options']}': exit "
             f"{result.returncode}, {poisson.get('iterations')} cycles, bench "
             f"{gmg[0]['iterations']}")
    else:
        print(f"ok   bench gmg rerun by clmg poisson --set: {poisson['iterations']} cycles",
              flush=True)


def main():
    clmg = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        good, bad, page = (os.path.join(tmp, n) for n in ("a.json", "b.json", "a.html"))
        code, out, err = run(clmg, ["--quick", "--output", good, "--html", page])
        if code != 0:
            fail("quick run", f"exit {code}: {err[-2000:]}")
        else:
            check_report("quick run", good)
            for word in ("figure of merit", "HPCG-like", "verified: yes"):
                if word not in out:
                    fail("quick run", f"'{word}' not in the table")
            for stage in STAGES - {"copy"}:
                if f"bench: {stage}" not in err and f"bench: {stage}-like" not in err:
                    fail("quick run", f"no progress line for {stage}")
            rerun_gmg(clmg, good)
            with open(page, encoding="utf-8") as f:
                html = f.read()
            if "<svg" not in html or "http://" in html.replace("http://www.w3.org", ""):
                fail("html", "no inline chart, or a reference to the network")

        # a wrong result is a failure, never a figure
        code, out, err = run(clmg, ["--quick", "--stage", "blas1", "--inject-fault",
                                    "--json", bad])
        if code != 1 or "FAILED" not in out or "FAILED" not in err:
            fail("inject fault", f"exit {code}, stdout {out[-600:]!r}")
        if "--json FILE is now --output FILE" not in err:  # the old spelling, with its note
            fail("old spelling --json FILE", f"no note on stderr: {err[-400:]!r}")

        # --json alone: the report on stdout, as one object of the result schema
        code, out, err = run(clmg, ["--quick", "--stage", "blas1", "--json"])
        try:
            report = json.loads(out)
        except json.JSONDecodeError as error:
            fail("--json", f"stdout is not one JSON object ({error}): {out[:300]!r}")
            report = None
        if report is not None:
            for problem in result_schema.problems(report):
                fail("--json", f"not the result schema {problem}")
            if code != 0 or report.get("command") != "bench" or report.get("status") != "success":
                fail("--json", f"exit {code}, {str(report)[:300]}")
            else:
                print("ok   bench --json on stdout", flush=True)
        if os.path.exists(bad):
            with open(bad, encoding="utf-8") as f:
                report = json.load(f)
            dots = [r for r in report["results"] if r["name"].startswith("dot")]
            if report["verified"] is not False or not report["failures"]:
                fail("inject fault", "the report says verified")
            if not dots or any(r["verified"] or r["time_s"] is not None for r in dots):
                fail("inject fault", f"the dot results: {dots}")
            if report["figure_of_merit"]["bandwidth_ratio_geomean"] is not None:
                fail("inject fault", "a figure of merit from a failed run")
        else:
            fail("inject fault", "no JSON report written")

        if os.path.exists(good) and os.path.exists(bad):
            code, out, err = run(clmg, ["--compare", good, bad, "--html", page])
            if code != 0:
                fail("compare", f"exit {code}: {err}")
            for word in ("dot double" if "dot double" in open(good).read() else "dot float",
                         "FAILED", "spmv"):
                if word not in out:
                    fail("compare", f"'{word}' not in {out[:1500]!r}")

        broken = os.path.join(tmp, "broken.json")
        with open(broken, "w") as f:
            f.write('{"program": "clmg bench",\n "schema_version": 1,\n "results": [1, }')
        code, out, err = run(clmg, ["--compare", broken])
        if code != 1 or "broken.json:3:" not in err:
            fail("compare: malformed report", f"exit {code}, stderr {err!r}")
        code, out, err = run(clmg, ["--compare", os.path.join(tmp, "missing.json")])
        if code != 1 or "missing.json" not in err:
            fail("compare: missing report", f"exit {code}, stderr {err!r}")
        for args in (["--size", "huge"], ["--stage", "nope"], ["--compare"], ["stray"],
                     ["--html", page], ["--trials", "0"]):
            code, out, err = run(clmg, args)
            if code != 2 or not err:
                fail(f"usage {args}", f"exit {code}, stderr {err!r}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("bench checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
