#!/usr/bin/env python3
"""Device faults at the command line: memory that does not suffice (the
--memory-limit option and CLMG_MEMORY_LIMIT, the device's largest
allocation, the address space left to the process on a CPU device) and a
device without double precision (CLMG_DISABLE_FP64). Each must end with
exit status 1 (bad usage: 2), never a signal, quickly, and with a message
that gives the numbers or the way out (--precision float).

Usage: cli_faults.py PATH/TO/clmg   (the device comes from CLMG_DEVICE)
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import result_schema  # noqa: E402  (docs/result.schema.json)

failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def run(clmg, args, env_extra=None, address_space=None, timeout=240):
    env = dict(os.environ)
    env.update(env_extra or {})

    def limit():
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, resource.RLIM_INFINITY))

    start = time.monotonic()
    try:
        result = subprocess.run([clmg] + args, capture_output=True, text=True, env=env,
                                timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, "", f"(still running after {timeout} s: killed)", time.monotonic() - start
    return result.returncode, result.stdout, result.stderr, time.monotonic() - start


def exact(n):
    """How clmg writes a byte count: 1,073,741,824 bytes."""
    return f"{n:,} bytes"


def expect(case, clmg, args, code, needles, env_extra=None, seconds=None, address_space=None):
    """Runs clmg; checks the exit status, that stderr holds every needle,
    and the time. Returns (stdout, stderr)."""
    # a run expected to fail fast that goes on is cut short
    timeout = max(60, 3 * seconds) if seconds is not None else 240
    got, out, err, took = run(clmg, args, env_extra, address_space, timeout)
    if got is None:
        fail(case, err)
    elif got < 0:
        fail(case, f"killed by signal {-got}: {err[-600:]!r}")
    elif got != code:
        fail(case, f"exit {got}, expected {code}: {err[-600:]!r}")
    for needle in needles:
        if needle not in err:
            fail(case, f"stderr lacks {needle!r}: {err[-800:]!r}")
    if seconds is not None and took > seconds:
        fail(case, f"took {took:.1f} s, expected under {seconds} s")
    if not any(case in f for f in failures):
        print(f"ok   {case} ({took:.2f} s)", flush=True)
    return out, err


def json_object(case, out):
    try:
        value = json.loads(out)
    except json.JSONDecodeError as error:
        fail(case, f"stdout is not one JSON object ({error}): {out[:300]!r}")
        return {}
    for problem in result_schema.problems(value):
        fail(case, f"not the result schema {problem}")
    return value if isinstance(value, dict) else {}


def device_info(clmg):
    code, out, err, _ = run(clmg, ["info", "--json", "--bandwidth-mib", "1"])
    if code != 0:
        sys.exit(f"clmg info failed: {err}")
    info = json.loads(out)
    return next(d for d in info["devices"] if d.get("selected"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    clmg = sys.argv[1]
    device = device_info(clmg)
    sanitized = "ASAN_OPTIONS" in os.environ

    # ---- memory: the limit ----
    # n = 8193 needs 3.4 GB of device memory in double: refused at once, the
    # need and the limit in the message, before any host array is filled.
    out, err = expect("homg over --memory-limit", clmg,
                      ["homg", "--n", "8193", "--memory-limit", "1G"], 1,
                      ["memory limit", exact(1 << 30), "n = 8193"], seconds=20)
    needs = re.findall(r"needs ([\d,]+) bytes", err)
    if not needs or int(needs[0].replace(",", "")) <= 1 << 30:
        fail("homg over --memory-limit", f"no need above the limit in {err!r}")
    out, err = expect("homg over --memory-limit, JSON", clmg,
                      ["homg", "--n", "8193", "--memory-limit", "1G", "--json"], 1, [],
                      seconds=20)
    obj = json_object("homg over --memory-limit, JSON", out)
    if obj.get("status") != "out of device memory" or exact(1 << 30) not in obj.get("message", ""):
        fail("homg over --memory-limit, JSON", f"object {obj!r}")
    expect("homg over CLMG_MEMORY_LIMIT", clmg, ["homg", "--n", "4097"], 1,
           ["CLMG_MEMORY_LIMIT=64M", exact(64 << 20)], env_extra={"CLMG_MEMORY_LIMIT": "64M"},
           seconds=20)
    # refused before the work, from the estimate of the finest level
    expect("poisson over --memory-limit", clmg,
           ["poisson", "--level", "4", "--memory-limit", "16K"], 1,
           ["memory limit", exact(16 << 10), "unknowns on the finest level"], seconds=60)
    expect("poisson (level 6) over --memory-limit 1M", clmg,
           ["poisson", "--memory-limit", "1M"], 1, ["memory limit", exact(1 << 20)], seconds=60)
    expect("poisson within --memory-limit", clmg,
           ["poisson", "--level", "3", "--memory-limit", "1M", "--quiet"], 0, [])
    for command in (["info"], ["solve", "a.mtx"], ["poisson"], ["homg"]):
        expect(f"{command[0]} --memory-limit 12X", clmg, command + ["--memory-limit", "12X"], 2,
               ["--memory-limit", "12X"])
    expect("clmg --memory-limit before the command", clmg,
           ["--memory-limit", "16K", "poisson", "--level", "4"], 1, [exact(16 << 10)])
    expect("CLMG_MEMORY_LIMIT not a size", clmg, ["poisson", "--level", "2"], 1,
           ["CLMG_MEMORY_LIMIT", "lots"], env_extra={"CLMG_MEMORY_LIMIT": "lots"})

    # ---- memory: the device's largest allocation ----
    # n = 32769 in double takes one 8,590,458,888-byte grid: where that is
    # more than one allocation may be, the two numbers must read apart (they
    # once both read "8.59 GB"), and at once (it took 24 s and 17 GB).
    grid = 32769 * 32769 * 8
    if grid > device["max_alloc_bytes"]:
        out, err = expect("homg n = 32769 over the largest allocation", clmg,
                          ["homg", "--n", "32769"], 1,
                          [exact(grid), exact(device["max_alloc_bytes"]),
                           "largest single allocation"], seconds=20)
        forms = re.findall(r" bytes \(([^)]*)\)", err)
        if len(forms) < 2 or forms[0] == forms[1]:
            fail("homg n = 32769 over the largest allocation", f"sizes read alike: {err!r}")
    else:
        print("skip homg n = 32769: the device allocates 8.6 GB at once")

    # ---- memory: the host's, behind a CPU device ----
    # With 4 GB of address space the n = 8193 run (5 GB with its host
    # grids) fails up front, where pocl asserted in clEnqueueFillBuffer.
    # ASan reserves terabytes of address space: no such limit there.
    if device["is_cpu"] and sys.platform.startswith("linux") and not sanitized:
        expect("homg under RLIMIT_AS", clmg, ["homg", "--n", "8193"], 1,
               ["RLIMIT_AS", "host memory", "n = 8193"], address_space=4 << 30, seconds=60)
    else:
        print("skip homg under RLIMIT_AS (not a CPU device, or a sanitizer build)")

    # ---- no double precision ----
    scratch = tempfile.mkdtemp(prefix="clmg-faults-")
    matrix = os.path.join(scratch, "lap.mtx")
    with open(matrix, "w") as f:
        n = 30
        entries = [(i, i, 2.0) for i in range(n)] + [(i, i + 1, -1.0) for i in range(n - 1)] + \
                  [(i + 1, i, -1.0) for i in range(n - 1)]
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{n} {n} {len(entries)}\n")
        f.writelines(f"{i + 1} {j + 1} {v}\n" for i, j, v in entries)
    no_fp64 = {"CLMG_DISABLE_FP64": "1"}
    hint = ["no double precision (cl_khr_fp64", "CLMG_DISABLE_FP64", "--precision float"]
    expect("poisson --precision double without fp64", clmg,
           ["poisson", "--level", "4", "--precision", "double"], 1, hint, env_extra=no_fp64,
           seconds=60)
    out, err = expect("poisson --precision double without fp64, JSON", clmg,
                      ["poisson", "--level", "4", "--precision", "double", "--json"], 1, [],
                      env_extra=no_fp64)
    obj = json_object("poisson --precision double without fp64, JSON", out)
    if obj.get("status") != "unsupported by the device" or "--precision float" not in obj.get(
            "message", ""):
        fail("poisson --precision double without fp64, JSON", f"object {obj!r}")
    expect("poisson --precision mixed without fp64", clmg,
           ["poisson", "--level", "3", "--precision", "mixed"], 1, hint, env_extra=no_fp64)
    expect("homg --precision double without fp64", clmg,
           ["homg", "--n", "17", "--precision", "double"], 1, hint, env_extra=no_fp64)
    expect("solve --precision double without fp64", clmg,
           ["solve", matrix, "--precision", "double"], 1, hint, env_extra=no_fp64)
    # The default precision is double only where the device has it.
    for name, args in (("poisson", ["poisson", "--level", "4"]),
                       ("homg", ["homg", "--n", "17"]),
                       ("solve", ["solve", matrix])):
        out, err = expect(f"{name} without fp64 computes in float", clmg, args + ["--json"], 0,
                          ["computing in float"], env_extra=no_fp64)
        obj = json_object(f"{name} without fp64 computes in float", out)
        if obj.get("precision") != "float":
            fail(f"{name} without fp64 computes in float", f"precision {obj.get('precision')!r}")
    expect("CLMG_DISABLE_FP64 not a switch", clmg, ["poisson", "--level", "2"], 1,
           ["CLMG_DISABLE_FP64"], env_extra={"CLMG_DISABLE_FP64": "maybe"})
    subprocess.run(["rm", "-rf", scratch], check=False)

    if failures:
        print(f"\n{len(failures)} failure(s)")
        sys.exit(1)
    print("\nevery fault ends in a message, not a signal")


if __name__ == "__main__":
    main()
