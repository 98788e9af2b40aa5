#!/usr/bin/env python3
"""Hostile input at the command line: the cases of a fault hunt, each a
regression test. Every run must end quickly, with the exit status and the
message it should have, never by a signal, and inside the address space it
is given (where the sanitizers do not reserve more):

- unbounded input: /dev/zero and files without line ends as the matrix,
  the right-hand side and the mesh fail at once, naming the file and line;
- non-finite and underflowing values in a matrix file are refused with
  file:line;
- a right-hand side near the largest double is solved, and x is finite and
  right (it was Inf, reported as converged);
- a solution that overflows double is reported as not converged;
- a run whose finest level cannot fit is refused before the work, with the
  estimate and the limit;
- a run ended by SIGTERM leaves the earlier output file and no temporary;
- boundary tags that match no face, contradicting options and an output
  over its own input are bad usage, named.

Usage: cli_hostile.py PATH/TO/clmg   (the device comes from CLMG_DEVICE)
"""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

failures = []
SANITIZED = os.environ.get("CLMG_SANITIZED") == "1"


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def run(clmg, args, address_space=None, timeout=120):
    def limit():
        if address_space is not None and not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, resource.RLIM_INFINITY))

    start = time.monotonic()
    try:
        result = subprocess.run([clmg] + args, capture_output=True, text=True,
                                timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, "", f"(still running after {timeout} s: killed)", time.monotonic() - start
    return result.returncode, result.stdout, result.stderr, time.monotonic() - start


def expect(case, clmg, args, code, needles, seconds=30, address_space=None):
    got, out, err, took = run(clmg, args, address_space, timeout=max(60, 3 * seconds))
    if got is None:
        fail(case, err)
    elif got < 0:
        fail(case, f"killed by signal {-got}: {err[-400:]!r}")
    elif got != code:
        fail(case, f"exit status {got}, expected {code}: {(err or out)[-400:]!r}")
    else:
        missing = [n for n in needles if n not in err + out]
        if missing:
            fail(case, f"the output lacks {missing}: {(err or out)[-400:]!r}")
        elif took > seconds:
            fail(case, f"took {took:.1f} s, more than {seconds} s")
        else:
            print(f"ok   {case} ({took:.2f} s)", flush=True)
    return out, err


def write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    clmg = sys.argv[1]
    gigabyte = 1 << 30
    with tempfile.TemporaryDirectory(prefix="clmg-hostile-") as work:
        def path(name):
            return os.path.join(work, name)

        tri = path("tri.mtx")
        write(tri, "%%MatrixMarket matrix coordinate real general\n3 3 7\n"
                   "1 1 4\n1 2 -1\n2 1 -1\n2 2 4\n2 3 -1\n3 2 -1\n3 3 4\n")
        # unbounded input: fails at once in 1 GB of address space
        if os.access("/dev/zero", os.R_OK):
            expect("solve /dev/zero", clmg, ["solve", "/dev/zero"], 1,
                   ["/dev/zero:1:", "banner line of at most 1024 bytes"], seconds=10,
                   address_space=gigabyte)
            expect("solve A /dev/zero (right-hand side)", clmg, ["solve", tri, "/dev/zero"], 1,
                   ["right-hand side", "/dev/zero:1:"], seconds=10, address_space=gigabyte)
            expect("poisson --mesh /dev/zero", clmg, ["poisson", "--mesh", "/dev/zero"], 1,
                   ["/dev/zero:1:", "NUL byte"], seconds=10, address_space=gigabyte)
        sparse = path("sparse.msh")
        with open(sparse, "w", encoding="ascii") as f:
            f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        os.truncate(sparse, 4 * gigabyte)  # a header, then NUL bytes (a sparse file)
        expect("poisson --mesh header + 4 GB of NUL bytes", clmg, ["poisson", "--mesh", sparse],
               1, ["sparse.msh:4:", "NUL byte"], seconds=10, address_space=gigabyte)
        os.remove(sparse)
        long_line = path("long.mtx")
        with open(long_line, "w", encoding="ascii") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 ")
            f.write("7" * (3 << 20))
        expect("solve, a data line of 3 MB", clmg, ["solve", long_line], 1,
               ["long.mtx:4:", "at most 1048576 bytes"], seconds=10, address_space=gigabyte)
        # non-finite values: refused with file:line
        for value, words in (("nan", "expected a finite real value, found 'nan'"),
                             ("-inf", "expected a finite real value, found '-inf'"),
                             ("2.5e-400", "underflows to 0"),
                             ("1e999", "within double range")):
            bad = path("value.mtx")
            write(bad, "%%MatrixMarket matrix coordinate real general\n2 2 2\n"
                       f"1 1 4\n2 2 {value}\n")
            expect(f"solve, a matrix value {value}", clmg, ["solve", bad], 1,
                   ["value.mtx:4:", words])
            write(bad, f"%%MatrixMarket matrix array real general\n3 1\n1\n{value}\n1\n")
            expect(f"solve, a right-hand side value {value}", clmg, ["solve", tri, bad], 1,
                   ["value.mtx:4:", words])
        # b near the largest double: x is finite and right
        big = path("big_b.mtx")
        write(big, "%%MatrixMarket matrix array real general\n3 1\n1e308\n1e308\n1e308\n")
        x_path = path("x.mtx")
        expect("solve, b = 1e308", clmg, ["solve", tri, big, "-o", x_path, "--quiet"], 0,
               ["converged          yes"])
        if os.path.exists(x_path):
            with open(x_path, encoding="ascii") as f:
                lines = [line for line in f if not line.startswith("%")]
            x = [float(v) for v in lines[1:]]
            exact = [5 / 14 * 1e308, 6 / 14 * 1e308, 5 / 14 * 1e308]
            if len(x) != 3 or any(abs(a - e) > 1e-10 * abs(e) for a, e in zip(x, exact)):
                fail("solve, b = 1e308", f"x = {x}, expected {exact}")
        # a solution beyond the largest double: not converged, with the reason
        small = path("small.mtx")
        write(small, "%%MatrixMarket matrix coordinate real general\n3 3 3\n"
                     "1 1 1e-10\n2 2 1e-10\n3 3 1e-10\n")
        expect("solve, x beyond the largest double", clmg, ["solve", small, big, "--quiet"], 1,
               ["does not fit in double"])
    # silent nonsense: tags that match no face, options that contradict each
    # other, an output over its own input (bad usage, exit status 2)
    with tempfile.TemporaryDirectory(prefix="clmg-hostile-") as work:
        matrix = os.path.join(work, "A.mtx")
        write(matrix, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n2 2 2\n")
        data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tris_22.msh")
        obstacle = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "data", "channel_obstacle.msh")
        for args, words in (
                (["helmholtz", "--mesh", "regular:1", "--dirichlet", "1,999"],
                 ["--dirichlet 999: no boundary face of regular:1 has that tag (its tags: 1)"]),
                (["flow", "--case", data, "--walls", "1", "--inflow", "99"],
                 ["--inflow 99: no boundary face", "its tags: 1, 11, 12, 13"]),
                (["flow", "--case", obstacle, "--walls", "3", "--slip", "4", "--inflow", "1"],
                 ["boundary tag 2 of the mesh has no condition"]),
                (["flow", "--case", obstacle, "--walls", "3,4", "--slip", "4", "--outflow", "2",
                  "--inflow", "1"], ["tag 4 is both a wall and a slip tag"]),
                (["flow", "--case", obstacle, "--walls", "3", "--slip", "4", "--outflow", "2,9",
                  "--inflow", "1"], ["--outflow 9: no boundary face", "its tags: 1, 2, 3, 4"]),
                (["flow", "--case", obstacle, "--walls", "3", "--slip", "4", "--outflow", "2",
                  "--inflow", "1", "--body", "5"], ["--body 5: no boundary face"]),
                (["flow", "--case", obstacle, "--walls", "1", "--slip", "4", "--outflow", "2",
                  "--inflow", "3"], ["the inflow tag 3", "one straight segment"]),
                (["flow", "--case", obstacle, "--walls", "3", "--slip", "4", "--outflow", "2",
                  "--inflow", "1", "--pressure-points", "1,2,nan,4"],
                 ["--pressure-points needs four numbers"]),
                (["flow", "--case", "dfg1", "--slip", "3"], ["are for a .msh case, not dfg1"]),
                (["flow", "--steady", "--steps", "5"], ["--steady", "give one or the other"]),
                (["poisson", "--precision", "mixed", "--method", "none"], ["--method none"]),
                (["helmholtz", "--no-solve", "-o", os.path.join(work, "u.mtx")],
                 ["--no-solve does not compute"]),
                (["solve", matrix, "-o", os.path.join(work, ".", "A.mtx")],
                 ["is the matrix file: the solution would overwrite its input"])):
            expect(" ".join(a if not a.startswith("/") else os.path.basename(a) for a in args),
                   clmg, args, 2, words)
        with open(matrix, encoding="ascii") as f:
            if "2 2 2" not in f.read():
                fail("solve -o over its input", "the matrix file changed")
    # an interrupted run leaves the earlier output and no temporary
    with tempfile.TemporaryDirectory(prefix="clmg-hostile-") as work:
        csv = os.path.join(work, "steps.csv")
        write(csv, "the earlier file\n")
        process = subprocess.Popen([clmg, "flow", "--case", "dfg2", "--level", "2", "--dt",
                                    "0.005", "--steps", "100000", "--csv", csv, "--quiet"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        left = sorted(os.listdir(work))
        with open(csv, encoding="ascii") as f:
            kept = f.read()
        if code != -signal.SIGTERM or left != ["steps.csv"] or kept != "the earlier file\n":
            fail("flow --csv, SIGTERM", f"exit {code}, files {left}, contents {kept[:60]!r}")
        else:
            print("ok   flow --csv, SIGTERM: the earlier file, no temporary", flush=True)
    # an empty row (singular), and an output that cannot be written: said
    # before any solve
    with tempfile.TemporaryDirectory(prefix="clmg-hostile-") as work:
        empty = os.path.join(work, "empty.mtx")
        write(empty, "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n3 1 0\n")
        expect("solve, a row without a nonzero entry", clmg, ["solve", empty, "--quiet"], 1,
               ["row 3 of", "has no nonzero entry: the matrix is singular"])
        poisson = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                               "data", "poisson2d_32.mtx")
        expect("solve -o into a missing directory", clmg,
               ["solve", poisson, "-o", os.path.join(work, "missing", "x.mtx"), "--quiet"], 1,
               ["cannot open", "for writing: No such file or directory"], seconds=5)
    # a mesh scaled to the ends of double's range: said as such, not as an
    # inverted cell
    here = os.path.dirname(os.path.abspath(__file__))
    for scale, words in (("1e300", "overflow double"), ("1e-300", "underflows double")):
        mesh = os.path.join(here, "fuzz", "regressions", "gmsh", f"scaled-{scale}.msh")
        expect(f"poisson --mesh scaled-{scale}.msh", clmg,
               ["poisson", "--mesh", mesh, "--level", "2", "--quiet"], 1, [words])
    # a long wait announced: a forced direct solve of a large coarse level
    process = subprocess.Popen([clmg, "poisson", "--level", "6", "--coarse", "direct",
                                "--coarse-rows", "9000"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    said = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "dense matrix" not in said:
        line = process.stderr.readline()
        if not line:
            break
        said += line
    process.kill()
    process.wait()
    if "factors the 8448-row coarse level as a dense matrix" not in said:
        fail("poisson --coarse direct, 8,448 coarse rows", f"not announced: {said[-300:]!r}")
    else:
        print("ok   poisson --coarse direct, 8,448 coarse rows: announced", flush=True)
    # sizes known before the work: refused at once with the estimate
    for args in (["poisson", "--level", "12"], ["poisson", "--level", "9", "--element", "q2"],
                 ["helmholtz", "--mesh", "regular:5"], ["flow", "--level", "10"]):
        expect(" ".join(args) + " --memory-limit 256M", clmg,
               args + ["--memory-limit", "256M", "--quiet"], 1,
               ["unknowns on the finest level", "needs"], seconds=10)
    if failures:
        print(f"{len(failures)} case(s) failed")
        return 1
    print("all cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
