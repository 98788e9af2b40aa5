#!/usr/bin/env python3
"""Under an address-space limit (RLIMIT_AS, as `ulimit -v` sets) clmg ends
with an error message and exit status 1, or succeeds, but never by a signal:
not its own, and not one of the OpenCL driver it loads (pocl with LLVM
aborts or crashes when it runs out, so clmg checks for room first; see
clmg_address_space_has_room in lib/core/context.c).

Runs clmg info, solve, poisson and homg on the device of CLMG_DEVICE, first
without a limit (which must succeed, and fills the kernel caches), then under
each limit; then once more under the largest limit with empty kernel caches,
so that the driver compiles under the limit too.

Usage: memory_limits.py PATH/TO/clmg SOURCE_DIR
Not for sanitizer builds: AddressSanitizer maps terabytes of shadow memory.
"""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
LIMITS_MIB = [64, 256, 512, 768, 1024]
failures = []


def commands(source_dir):
    matrix = os.path.join(source_dir, "examples", "data", "poisson2d_32.mtx")
    return [
        ["info"],
        ["solve", matrix, "--quiet"],
        ["poisson", "--level", "5", "--quiet"],
        ["homg", "--n", "64", "--quiet"],
    ]


def limit_address_space(limit_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


def describe(returncode):
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"


def run(clmg, args, limit_mib, env, label):
    limit = None if limit_mib is None else limit_mib * MIB
    start = time.monotonic()
    result = subprocess.run(
        [clmg] + args,
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        timeout=240,
        preexec_fn=None if limit is None else limit_address_space(limit),
    )
    seconds = time.monotonic() - start
    case = f"{label} clmg {' '.join(args[:1])}"
    last_line = (result.stderr.strip().splitlines() or [""])[-1]
    print(f"{case}: {describe(result.returncode)} in {seconds:.1f} s  {last_line[:160]}", flush=True)
    if result.returncode < 0 or result.returncode >= 128:
        failures.append(f"{case}: ended by {describe(result.returncode)}; stderr: {result.stderr[-600:]}")
    elif limit is None and result.returncode != 0:
        failures.append(f"{case}: fails without a limit ({describe(result.returncode)}): {last_line}")
    elif result.returncode not in (0, 1):
        failures.append(f"{case}: {describe(result.returncode)}, expected 0 or 1: {last_line}")
    elif result.returncode == 1 and not result.stderr.strip().startswith("clmg"):
        failures.append(f"{case}: failed without a clmg message: {result.stderr[-600:]!r}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    clmg, source_dir = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    for args in commands(source_dir):
        run(clmg, args, None, env, "no limit:")
    for limit_mib in LIMITS_MIB:
        for args in commands(source_dir):
            run(clmg, args, limit_mib, env, f"{limit_mib} MiB:")
    # Empty caches: clmg's binary cache and pocl's kernel cache.
    with tempfile.TemporaryDirectory(prefix="clmg-memory-limits-") as empty:
        cold = dict(env, CLMG_CACHE_DIR=os.path.join(empty, "clmg"), XDG_CACHE_HOME=empty)
        run(clmg, commands(source_dir)[1], LIMITS_MIB[-1], cold, f"{LIMITS_MIB[-1]} MiB, empty caches:")
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for failure in failures:
            print(f"  {failure}")
        sys.exit(1)
    print("no command ended by a signal")


if __name__ == "__main__":
    main()
