#!/usr/bin/env python3
"""Every file the clmg command writes replaces an earlier file only once it
is complete. Each case first runs the command normally over a small "old"
file at the output path (it must succeed and replace it; this also fills
the kernel caches, so that the second run writes nothing but its output),
then puts the old file back and runs the command again under a file size
limit smaller than the output (RLIMIT_FSIZE, with SIGXFSZ ignored so that
writes fail with EFBIG: a full disk). That run must exit non-zero (not die
of a signal), name the path and the reason on stderr, leave the old file
byte for byte as it was and leave no other file (a temporary) behind.

Usage: output_check.py PATH/TO/clmg   (the device comes from CLMG_DEVICE)
"""
import errno
import os
import resource
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MATRIX = os.path.join(HERE, os.pardir, "examples", "data", "poisson2d_32.mtx")
OLD = b"an earlier file: keep me\n"
failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def limited(size):
    """A preexec_fn: writes past `size` bytes fail with EFBIG. The ignored
    SIGXFSZ stays ignored across exec."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    return apply


# The size limit stops every write, pocl's kernel binaries too: with its
# kernel cache off (POCL_KERNEL_CACHE=0, as in sanitizer builds) pocl writes
# them afresh in every run and aborts. With the cache, the first, unlimited
# run fills it and the limited run writes nothing but its output.
ENV = dict(os.environ)
ENV.pop("POCL_KERNEL_CACHE", None)


def run(clmg, args, cwd, preexec_fn=None):
    return subprocess.run([clmg] + args, cwd=cwd, capture_output=True, text=True, timeout=240,
                          env=ENV, preexec_fn=preexec_fn)


def put_old(directory, outputs):
    for name in outputs:
        with open(os.path.join(directory, name), "wb") as f:
            f.write(OLD)


def check(clmg, case, args, outputs, limit):
    """args: the command line, outputs: the files it writes (relative to its
    working directory), limit: a file size smaller than each of them."""
    failed_before = len(failures)
    with tempfile.TemporaryDirectory(prefix="output_check-") as directory:
        put_old(directory, outputs)
        result = run(clmg, args, directory)
        if result.returncode != 0:
            fail(case, f"the unlimited run exited with {result.returncode}: {result.stderr[-600:]}")
            return
        for name in outputs:
            size = os.path.getsize(os.path.join(directory, name))
            if size <= limit:
                fail(case, f"{name} has {size} bytes, not more than the limit {limit}")
                return

        put_old(directory, outputs)
        before = sorted(os.listdir(directory))
        result = run(clmg, args, directory, preexec_fn=limited(limit))
        if result.returncode < 0:
            fail(case, f"killed by signal {-result.returncode}")
        elif result.returncode == 0:
            fail(case, "exited with 0 although its output could not be written")
        if not any(name in result.stderr for name in outputs):
            fail(case, f"stderr names none of {outputs}: {result.stderr[-600:]!r}")
        if os.strerror(errno.EFBIG) not in result.stderr:
            fail(case, f"stderr does not say {os.strerror(errno.EFBIG)!r}: "
                       f"{result.stderr[-600:]!r}")
        for name in outputs:
            try:
                with open(os.path.join(directory, name), "rb") as f:
                    content = f.read()
            except FileNotFoundError:
                fail(case, f"{name} was removed")
                continue
            if content != OLD:
                fail(case, f"{name} was changed: {len(content)} bytes, {content[:40]!r}")
        after = sorted(os.listdir(directory))
        if after != before:
            fail(case, f"files appeared or vanished: {sorted(set(after) ^ set(before))}")
    if len(failures) == failed_before:
        print(f"ok   {case}", flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    clmg = os.path.abspath(sys.argv[1])
    homg = ["homg", "--n", "33", "--cycles", "1", "--quiet"]
    check(clmg, "homg --vtk", homg + ["--vtk", "out.vtk"], ["out.vtk"], 2048)
    check(clmg, "homg --png", homg + ["--png", "out.png"], ["out.png"], 2048)
    check(clmg, "homg --snapshots", homg + ["--snapshots", "snap"], ["snap-0001.vtk"], 2048)
    check(clmg, "homg --snapshots png", homg + ["--snapshots", "snap", "--snapshot-format", "png"],
          ["snap-0001.png"], 2048)
    check(clmg, "solve -o", ["solve", os.path.abspath(MATRIX), "--quiet", "-o", "x.mtx"],
          ["x.mtx"], 4096)
    check(clmg, "poisson --vtk", ["poisson", "--level", "4", "--quiet", "--vtk", "u.vtu"],
          ["u.vtu"], 4096)
    check(clmg, "poisson --vtk-ascii",
          ["poisson", "--level", "4", "--quiet", "--vtk", "u.vtu", "--vtk-ascii"], ["u.vtu"], 4096)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all output files kept on failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
