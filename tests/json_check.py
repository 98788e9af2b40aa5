#!/usr/bin/env python3
"""Every clmg subcommand with --json, on success and on failure, must print
exactly one JSON object on stdout that a parser reads, with the keys a
pipeline relies on: "status" and "message" always; "setup_s", "kernels_s",
"solve_s" as numbers in every solver report; "format" as a name plus
"format_description"; with --view a "hierarchy" array and
"operator_complexity". Errors carry "status" ("usage_error" or the library's
status string) and the exit code. Also checks the first-run message on
stderr: said once when kernels are compiled, not when they come from the
cache, not with --quiet, and never on stdout.

Usage: json_check.py PATH/TO/clmg   (the device comes from CLMG_DEVICE)
"""
import json
import os
import subprocess
import sys
import tempfile

FORMATS = {"csr", "ellr", "sell", "csr-adaptive"}
failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def run(clmg, args, env=None):
    result = subprocess.run([clmg] + args, capture_output=True, text=True, env=env, timeout=240)
    return result.returncode, result.stdout, result.stderr


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import result_schema  # noqa: E402  (docs/result.schema.json)


def parse_one(case, stdout):
    """The whole of stdout as one JSON object (a second object fails), which
    must follow the result schema (docs/result.schema.json)."""
    try:
        value = json.loads(stdout)
    except json.JSONDecodeError as error:
        fail(case, f"stdout is not one JSON value ({error}): {stdout[:400]!r}")
        return None
    if not isinstance(value, dict):
        fail(case, f"stdout is JSON but not an object: {stdout[:200]!r}")
        return None
    for problem in result_schema.problems(value):
        fail(case, f"not the result schema {problem}")
    return value


def need(case, obj, key, kind):
    if key not in obj:
        fail(case, f'key "{key}" missing')
        return None
    value = obj[key]
    if kind is not None and not (isinstance(value, kind) and not isinstance(value, bool)
                                 if kind in (int, float, (int, float)) else isinstance(value, kind)):
        fail(case, f'key "{key}" is {value!r}, expected {kind}')
        return None
    return value


NUMBER = (int, float)


def check(clmg, case, args, rc, status, keys=(), extra=None, env=None):
    """Runs clmg ARGS; expects exit code rc and the JSON status; checks keys."""
    code, out, err = run(clmg, args, env)
    if code != rc:
        fail(case, f"exit code {code}, expected {rc}; stderr: {err.strip()[:400]}")
    obj = parse_one(case, out)
    if obj is None:
        return None
    got = need(case, obj, "status", str)
    if got is not None and got != status:
        fail(case, f'status "{got}", expected "{status}"')
    message = need(case, obj, "message", str)
    if message is not None and status != "success" and not message:
        fail(case, "a failure with an empty message")
    if rc != 0 and "exit_code" in obj and obj["exit_code"] != rc:
        fail(case, f'exit_code {obj["exit_code"]} in the object, {code} from the process')
    for key, kind in keys:
        need(case, obj, key, kind)
    if extra is not None:
        extra(case, obj)
    print(f"ok   {case}", flush=True)
    return obj


def error_keys():
    return (("exit_code", int), ("command", str))


REPORT = (("setup_s", NUMBER), ("kernels_s", NUMBER), ("solve_s", NUMBER), ("converged", bool),
          ("iterations", int), ("relative_residual", NUMBER), ("device", dict))
FORMAT = (("format", str), ("format_description", str))


def format_is_name(case, obj):
    if obj.get("format") not in FORMATS:
        fail(case, f'format "{obj.get("format")}" is not a format name {sorted(FORMATS)}')
    if obj.get("format_description") == obj.get("format"):
        fail(case, "format_description says no more than format")


SOLVER_PHASES = ("checks_s", "matrix_s", "nullspace_s", "preconditioner_s", "kernels_s")


def solver_setup(checker):
    """checker, then the solver's setup phases of --view: five numbers of
    seconds that add up to at most build_s (neither counts compilation)."""
    def both(case, obj):
        checker(case, obj)
        phases = need(case, obj, "solver_setup", dict)
        if phases is None:
            return
        if sorted(phases) != sorted(SOLVER_PHASES):
            fail(case, f"solver_setup has {sorted(phases)}, not {sorted(SOLVER_PHASES)}")
        total = 0
        for key in SOLVER_PHASES:
            value = need(case, phases, key, NUMBER)
            if value is not None and value < 0:
                fail(case, f"solver_setup.{key} is negative")
            total += value or 0
        build = obj.get("build_s")
        if isinstance(build, NUMBER) and total > build + 1e-6:
            fail(case, f"solver_setup adds up to {total} s, more than build_s {build} s")
    return both


def hierarchy(levels):
    def checker(case, obj):
        format_is_name(case, obj)
        levels_list = need(case, obj, "hierarchy", list)
        complexity = need(case, obj, "operator_complexity", NUMBER)
        if levels_list is None:
            return
        if levels is not None and len(levels_list) != levels(obj):
            fail(case, f"hierarchy has {len(levels_list)} levels, expected {levels(obj)}")
        total = 0
        for k, level in enumerate(levels_list):
            for key, kind in (("rows", int), ("nonzeros", int), ("format", str),
                              ("format_description", str)):
                need(f"{case} level {k}", level, key, kind)
            for key in ("smoother", "coarse_solver"):
                if key not in level:
                    fail(f"{case} level {k}", f'key "{key}" missing')
            if level.get("format") not in FORMATS:
                fail(f"{case} level {k}", f'format "{level.get("format")}"')
            total += level.get("nonzeros", 0)
        finest = levels_list[-1]
        if finest.get("rows") != obj.get("rows", obj.get("unknowns")):
            fail(case, "the last level is not the finest")
        if finest.get("nonzeros") != obj.get("nonzeros"):
            fail(case, "the finest level's nonzeros differ from the report's")
        if complexity is not None and finest.get("nonzeros"):
            expected = total / finest["nonzeros"]
            if abs(complexity - expected) > 1e-12 * expected:
                fail(case, f"operator_complexity {complexity}, levels give {expected}")
    return checker


def write_laplacian(path, n, nonsymmetric=False):
    """The 1-D Laplacian (or a convection-diffusion variant) as Matrix Market."""
    entries = []
    for i in range(n):
        entries.append((i, i, 2.0))
        if i > 0:
            entries.append((i, i - 1, -1.3 if nonsymmetric else -1.0))
        if i + 1 < n:
            entries.append((i, i + 1, -0.7 if nonsymmetric else -1.0))
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{n} {n} {len(entries)}\n")
        for i, j, v in entries:
            f.write(f"{i + 1} {j + 1} {v}\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    clmg = sys.argv[1]
    scratch = tempfile.mkdtemp(prefix="clmg-json-")
    spd = os.path.join(scratch, "lap.mtx")
    nonsym = os.path.join(scratch, "cd.mtx")
    write_laplacian(spd, 40)
    write_laplacian(nonsym, 40, nonsymmetric=True)
    vtu = os.path.join(scratch, "circle.vtu")
    missing = os.path.join(scratch, "missing")
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    unwritable = os.path.join(missing, "dir", "out")

    def says(*words):
        def checker(case, obj):
            message = obj.get("message", "")
            for word in words:
                if word not in message:
                    fail(case, f'message does not say "{word}": {message!r}')
        return checker


    # ---- the top level and info
    code, out, err = run(clmg, ["--version", "--json"])
    obj = parse_one("--version", out)
    if code != 0 or (obj is not None and not isinstance(obj.get("version"), str)):
        fail("--version", f"exit {code}, {out!r}")
    check(clmg, "unknown command", ["--json", "nosuch"], 2, "usage_error", error_keys())
    check(clmg, "no command", ["--json"], 2, "usage_error", error_keys())

    def info_sizes(buffer):
        def checker(case, obj):
            devices = need(case, obj, "devices", list) or []
            for device in devices:
                for key in ("global_mem_bytes", "max_alloc_bytes", "local_mem_bytes"):
                    value = need(case, device, key, int)
                    if value is not None and value <= 0:
                        fail(case, f"{key} = {value}")
            size = need(case, obj, "bandwidth_buffer_bytes", int)
            if size is not None and (size <= 0 or (buffer and size != buffer)):
                fail(case, f"bandwidth_buffer_bytes = {size}, expected {buffer or 'a real size'}")
            if "kernel_cache_dir" not in obj:
                fail(case, "kernel_cache_dir missing")
        return checker

    check(clmg, "info", ["info", "--json", "--bandwidth-mib", "1"], 0, "success",
          (("copy_bandwidth_gb_s", NUMBER), ("devices", list), ("selected", dict)),
          info_sizes(1 << 20))
    check(clmg, "info (default buffer)", ["info", "--json"], 0, "success", (), info_sizes(None))
    check(clmg, "info: bad option", ["info", "--json", "--bogus"], 2, "usage_error", error_keys())
    check(clmg, "info: bad number", ["info", "--json", "--bandwidth-mib", "x"], 2, "usage_error",
          error_keys())
    check(clmg, "info: missing device", ["info", "--json", "--device", "no-such-device-name"], 1,
          "device not found", error_keys())

    # ---- solve
    check(clmg, "solve", ["solve", spd, "--json"], 0, "success",
          REPORT + FORMAT + (("history", list), ("true_relative_residual", NUMBER)),
          format_is_name)
    check(clmg, "solve --view", ["solve", spd, "--json", "--view", "--format", "ellr"], 0,
          "success", REPORT + FORMAT, hierarchy(lambda obj: 1))
    check(clmg, "solve amg --view", ["solve", spd, "--json", "--view", "--precond", "amg"], 0,
          "success", REPORT + FORMAT, solver_setup(hierarchy(None)))
    check(clmg, "solve gmres", ["solve", nonsym, "--json", "--quiet"], 0, "success",
          REPORT + FORMAT, format_is_name)
    check(clmg, "solve: not converged", ["solve", spd, "--json", "--maxit", "1"], 1,
          "not converged", REPORT + FORMAT)
    check(clmg, "solve: missing file", ["solve", missing + ".mtx", "--json"], 1,
          "input/output error", error_keys())
    check(clmg, "solve: bad option", ["solve", spd, "--json", "--bogus"], 2, "usage_error",
          error_keys())
    check(clmg, "solve: option without argument", ["solve", spd, "--json", "--tol"], 2,
          "usage_error", error_keys())
    check(clmg, "solve: bad value", ["solve", spd, "--json", "--method", "nope"], 2,
          "usage_error", error_keys())
    check(clmg, "solve: no matrix", ["solve", "--json"], 2, "usage_error", error_keys())
    check(clmg, "solve: not SPD for CG", ["solve", nonsym, "--json", "--method", "cg"], 1,
          "invalid argument", error_keys())
    # the options layer: --set and flags become keys; the result echoes the
    # resolved options, which repeat the run from a file
    def resolved(case, obj):
        options = obj.get("options", {})
        if options.get("krylov") != "cg" or options.get("mg", {}).get("cycle") != "w" or \
                options.get("mg", {}).get("smoother") != "jacobi-rho":
            fail(case, f"the echoed options are not the resolved ones: {options}")
    first = check(clmg, "solve --set",
                  ["solve", spd, "--json", "--quiet", "--precond", "amg", "--set",
                   "mg.cycle=w mg.smoother=jacobi-rho"], 0, "success",
                  REPORT + (("options", dict),), resolved)
    if first is not None:
        options_file = os.path.join(scratch, "options.json")
        with open(options_file, "w") as f:
            json.dump(first["options"], f)
        again = check(clmg, "solve --options (the echoed options)",
                      ["solve", spd, "--json", "--quiet", "--options", options_file], 0,
                      "success", REPORT, resolved)
        if again is not None and again["iterations"] != first["iterations"]:
            fail("solve --options", f'{again["iterations"]} iterations, the run it repeats '
                 f'took {first["iterations"]}')
        # a flag overrides the file
        check(clmg, "solve --options then a flag",
              ["solve", spd, "--json", "--quiet", "--options", options_file, "--precond", "jacobi"],
              0, "success", REPORT,
              lambda case, obj: obj["preconditioner"] == "jacobi" or fail(case, "the flag lost"))
        with open(options_file, "w") as f:
            f.write('{"mg": {"smother": "jacobi"}}')
        check(clmg, "solve --options: unknown key", ["solve", spd, "--json", "--options",
                                                     options_file], 1, "invalid argument",
              error_keys(), says("mg.smother", "mg.smoother"))
    check(clmg, "solve --set: unknown value", ["solve", spd, "--json", "--set", "krylov=minres"], 2,
          "usage_error", error_keys(), says("minres", "gmres"))
    check(clmg, "solve --smoother: unknown", ["solve", spd, "--json", "--smoother", "foo"], 2,
          "usage_error", error_keys(), says("foo", "chebyshev"))
    # refused before the solve (the output is checked first): an error object
    check(clmg, "solve: unwritable output", ["solve", spd, "--json", "-o", unwritable], 1,
          "input/output error", error_keys())

    # ---- poisson
    def levels_of(obj):
        return obj["levels"]

    obj = check(clmg, "poisson --view --vtk",
                ["poisson", "--level", "3", "--json", "--view", "--vtk", vtu], 0, "success",
                REPORT + FORMAT + (("levels", int), ("unknowns", int), ("nonzeros", int),
                                   ("cycle_s", NUMBER), ("history", list)),
                hierarchy(levels_of))
    with open(vtu, "rb") as f:
        head = f.read(2048)
    if b'<AppendedData encoding="raw">' not in head or b'header_type="UInt64"' not in head:
        fail("poisson --vtk", "the default .vtu is not binary (raw appended, UInt64 headers)")
    if obj is not None and f'NumberOfPoints="{obj["unknowns"]}"'.encode() not in head:
        fail("poisson --vtk", "NumberOfPoints is not the number of unknowns")
    check(clmg, "poisson --vtk-ascii",
          ["poisson", "--level", "2", "--json", "--vtk", vtu, "--vtk-ascii"], 0, "success",
          REPORT + FORMAT, format_is_name)
    with open(vtu, "rb") as f:
        text = f.read()
    if b'format="ascii"' not in text or b"AppendedData" in text:
        fail("poisson --vtk-ascii", "the .vtu is not ASCII")
    check(clmg, "poisson: q2 cg", ["poisson", "--level", "2", "--element", "q2", "--method", "cg",
                                   "--json", "--quiet"], 0, "success", REPORT + FORMAT,
          format_is_name)
    def profile_is_sane(case, obj):
        lines = obj["profile"]
        if not 1 <= len(lines) <= 3:
            fail(case, f"{len(lines)} profile lines, asked for at most 3")
        for line in lines:
            if not line.get("kernel") or not line.get("launches", 0) >= 1 \
                    or not line.get("seconds", -1) >= 0:
                fail(case, f"a profile line without kernel, launches or seconds: {line}")
        if not obj["profile_kernels_s"] >= sum(line["seconds"] for line in lines) * (1 - 1e-12):
            fail(case, "profile_kernels_s is less than its first lines together")
        if not obj["device_busy"] > 0:
            fail(case, f"device_busy {obj['device_busy']}")

    check(clmg, "poisson --profile", ["poisson", "--level", "3", "--json", "--quiet",
                                      "--profile", "3"], 0, "success",
          REPORT + (("profile", list), ("profile_kernels_s", NUMBER), ("device_busy", NUMBER)),
          profile_is_sane)
    check(clmg, "poisson: bad profile", ["poisson", "--json", "--profile", "0"], 2,
          "usage_error", error_keys())
    check(clmg, "poisson: not converged", ["poisson", "--level", "3", "--maxit", "1", "--json"], 1,
          "not converged", REPORT + FORMAT)
    check(clmg, "poisson: missing mesh", ["poisson", "--json", "--mesh", missing + ".msh"], 1,
          "input/output error", error_keys())
    check(clmg, "poisson: bad level", ["poisson", "--json", "--level", "99"], 2, "usage_error",
          error_keys())
    check(clmg, "poisson: bad vtk format", ["poisson", "--json", "--vtk-format", "hdf5"], 2,
          "usage_error", error_keys())
    check(clmg, "poisson: unwritable vtu",
          ["poisson", "--level", "2", "--json", "--vtk", unwritable + ".vtu"], 1,
          "input/output error", REPORT + FORMAT)

    # clmg poisson through the options layer: its echoed options repeat the run
    first = check(clmg, "poisson --set", ["poisson", "--level", "3", "--json", "--quiet", "--set",
                                          "mg.smoother=chebyshev mg.pre=2 mg.post=2"], 0,
                  "success", REPORT + (("options", dict),))
    if first is not None:
        options_file = os.path.join(scratch, "poisson-options.json")
        with open(options_file, "w") as f:
            json.dump(first["options"], f)
        again = check(clmg, "poisson --options (the echoed options)",
                      ["poisson", "--level", "3", "--json", "--quiet", "--options", options_file],
                      0, "success", REPORT)
        if again is not None and (again["iterations"] != first["iterations"] or
                                  again["smoother"] != "chebyshev"):
            fail("poisson --options", f'{again["iterations"]} iterations with '
                 f'{again["smoother"]}, the run it repeats: {first["iterations"]}')

    # ---- one vocabulary: the old spellings still run, with a note on stderr;
    # --version after any command
    for args, old, new in ((["poisson", "--level", "2", "--krylov", "cg"], "--krylov", "--method"),
                           (["homg", "--n", "17", "--cycles", "2"], "--cycles", "--maxit"),
                           (["flow", "--level", "1", "--steady", "--max-iterations", "2"],
                            "--max-iterations", "--maxit")):
        code, out, err = run(clmg, args + ["--json", "--quiet"])
        obj = parse_one(f"old spelling {old}", out)
        if obj is None or obj.get("command") != args[0] or f"{old} is now {new}" not in err:
            fail(f"old spelling {old}", f"exit {code}, stderr {err.strip()[:300]!r}")
        else:
            print(f"ok   old spelling {old}", flush=True)
    for command in ("solve", "poisson", "info", "bench"):
        code, out, err = run(clmg, [command, "--version", "--json"])
        obj = parse_one(f"{command} --version", out)
        if code != 0 or obj is None or obj.get("version") is None:
            fail(f"{command} --version", f"exit {code}: {out[:200]!r} {err[:200]!r}")
        else:
            print(f"ok   {command} --version", flush=True)

    code, out, err = run(clmg, ["help", "options"])
    if code != 0 or "mg.smoother" not in out or "amg.coarsening" not in out or "default" not in out:
        fail("help options", f"exit {code}: {out[:300]!r}")
    else:
        print("ok   help options", flush=True)

    # ---- honest results: a failure names its reason, success means the true
    # residual meets the tolerance, and the rate is not diluted by a stall
    def true_residual_meets(case, obj):
        true = obj.get("true_relative_residual")
        tolerance = obj.get("relative_tolerance")
        if not isinstance(true, NUMBER) or not tolerance or true > tolerance:
            fail(case, f'converged, but the true residual is {true!r} '
                       f'(tolerance {tolerance!r})')

    check(clmg, "solve float: default tolerance", ["solve", spd, "--json", "--precision", "float"],
          0, "success", REPORT, true_residual_meets)
    check(clmg, "solve float: below float's reach",
          ["solve", spd, "--json", "--precision", "float", "--tol", "1e-12"], 1, "not converged",
          REPORT, says("rounding floor"))
    # multigrid cycles alone (--method none; the default is CG around a float cycle)
    check(clmg, "poisson: diverges",
          ["poisson", "--level", "4", "--method", "none", "--omega", "2", "--json"], 1,
          "not converged", REPORT, says("diverged"))
    check(clmg, "poisson: iteration limit",
          ["poisson", "--level", "4", "--method", "none", "--maxit", "2", "--json"], 1,
          "not converged", REPORT, says("iteration limit"))
    check(clmg, "poisson: no smoothing", ["poisson", "--level", "4", "--method", "none", "--pre",
                                          "0", "--post", "0", "--json"], 1, "not converged",
          REPORT, says("stalled"))
    check(clmg, "poisson: the default CG's iteration limit",
          ["poisson", "--level", "4", "--maxit", "2", "--json"], 1, "not converged", REPORT,
          says("not converged after 2 iterations"))
    check(clmg, "poisson cg float: below float's reach",
          ["poisson", "--level", "5", "--method", "cg", "--precision", "float", "--tol", "1e-10",
           "--json"], 1, "not converged", REPORT, says("rounding floor"))

    def rate_before_stall(case, obj):
        says("rounding floor")(case, obj)
        cycles, rate = obj.get("rate_iterations"), obj.get("rate")
        if not isinstance(cycles, int) or cycles >= obj["iterations"]:
            fail(case, f"rate_iterations {cycles!r} of {obj['iterations']} cycles: the stall "
                       "counts in the rate")
        history = obj.get("history", [])
        if isinstance(cycles, int) and 0 < cycles < len(history):
            expected = (history[cycles] / history[0]) ** (1.0 / cycles)
            if not isinstance(rate, NUMBER) or abs(rate - expected) > 1e-6 * expected:
                fail(case, f"rate {rate!r}, expected {expected} from the history")
    check(clmg, "poisson float: stalls at the rounding floor",
          ["poisson", "--level", "5", "--precision", "float", "--tol", "1e-10", "--json"], 1,
          "not converged", REPORT + (("rate", NUMBER), ("history", list)), rate_before_stall)

    # ---- helmholtz
    def counts(nodes, elements):
        def checker(case, obj):
            if obj.get("nodes") != nodes or obj.get("elements") != elements:
                fail(case, f'nodes {obj.get("nodes")}, elements {obj.get("elements")}; expected '
                           f'{nodes} and {elements}')
            true = obj.get("true_relative_residual")
            if obj.get("converged") and (not isinstance(true, NUMBER) or
                                         true > obj.get("relative_tolerance", 0)):
                fail(case, f"converged at a true residual of {true!r}")
        return checker
    helmholtz_keys = REPORT + FORMAT + (("nodes", int), ("elements", int), ("nonzeros", int),
                                        ("assembly_s", NUMBER), ("true_relative_residual", NUMBER))
    check(clmg, "helmholtz", ["helmholtz", "--mesh", "regular:0", "--json", "--quiet"], 0,
          "success", helmholtz_keys, counts(729, 3072))
    check(clmg, "helmholtz host, two materials",
          ["helmholtz", "--mesh", "blobs2d:1", "--sigma", "1=1,2=100", "--assembly", "host",
           "--rhs", "ones", "--json", "--quiet"], 0, "success", helmholtz_keys, counts(81, 128))
    check(clmg, "helmholtz --no-solve", ["helmholtz", "--mesh", "regular:0", "--no-solve",
                                         "--json"], 0, "success",
          (("nodes", int), ("elements", int), ("nonzeros", int), ("assembly_s", NUMBER)))
    check(clmg, "helmholtz: unknown material",
          ["helmholtz", "--mesh", "blobs:0", "--sigma", "1=1", "--json"], 1, "invalid argument",
          error_keys(), says("material id 2"))
    check(clmg, "helmholtz: quadrilateral mesh",
          ["helmholtz", "--mesh", os.path.join(data, "quads_22.msh"), "--json"], 1,
          "invalid argument", error_keys(), says("triangles or tetrahedra"))
    check(clmg, "helmholtz: bad sigma", ["helmholtz", "--sigma", "x", "--json"], 2, "usage_error",
          error_keys())
    check(clmg, "helmholtz: missing mesh", ["helmholtz", "--mesh", missing + ".msh", "--json"], 1,
          "input/output error", error_keys())

    # ---- homg
    homg_keys = (("setup_s", NUMBER), ("kernels_s", NUMBER), ("solve_s", NUMBER),
                 ("converged", bool), ("cycles", int), ("history", list), ("schedule", str))
    check(clmg, "homg", ["homg", "--n", "17", "--json"], 0, "success", homg_keys)
    check(clmg, "homg: not converged", ["homg", "--n", "17", "--cycles", "1", "--tol", "1e-12",
                                        "--json"], 1, "not converged", homg_keys)
    # an error target alone (the warm-up on a small grid ignores it)
    check(clmg, "homg: --error-tol", ["homg", "--n", "33", "--error-tol", "2e-3", "--json"], 0,
          "success", homg_keys)
    check(clmg, "homg: bad method", ["homg", "--json", "--method", "nope"], 2, "usage_error",
          error_keys())
    check(clmg, "homg: bad schedule", ["homg", "--json", "--schedule", "nope"], 2, "usage_error",
          error_keys())
    check(clmg, "homg: schedule of fmg", ["homg", "--json", "--method", "fmg", "--schedule",
                                          "ascent"], 2, "usage_error", error_keys())
    check(clmg, "homg: unwritable png", ["homg", "--n", "17", "--json", "--png",
                                         unwritable + ".png"], 1, "input/output error", homg_keys)

    # clmg homg through the options layer: a file of keys runs as the flags do,
    # the echoed options repeat the run, bad keys and values are bad usage
    def same_run(what, keys):
        def checker(case, obj):
            for key in keys:
                if obj.get(key) != what.get(key):
                    fail(case, f'{key} is {obj.get(key)!r}, the run it repeats had '
                               f'{what.get(key)!r}')
        return checker

    def echoes(expected):
        def checker(case, obj):
            options = obj.get("options")
            if not isinstance(options, dict):
                fail(case, f"no options object: {options!r}")
                return
            for path, value in expected.items():
                got = options
                for part in path.split("."):
                    got = got.get(part) if isinstance(got, dict) else None
                if got != value:
                    fail(case, f"options.{path} is {got!r}, expected {value!r}")
        return checker

    homg_run = ("cycles", "iterations", "work_units", "l1_error", "relative_residual", "method",
                "maxi", "omega", "pre_smoothing", "post_smoothing", "relative_tolerance")
    first = check(clmg, "homg flags", ["homg", "--n", "17", "--maxi", "4", "--smoothing", "1,3",
                                       "--omega", "0.7", "--maxit", "3", "--json", "--quiet"], 0,
                  "success", homg_keys + (("options", dict),),
                  echoes({"homg.maxi": 4, "mg.pre": 1, "mg.post": 3, "mg.omega": 0.7, "maxit": 3,
                          "tol": 0, "homg.method": "homg", "mg.smoother": "jacobi"}))
    if first is not None:
        options_file = os.path.join(scratch, "homg-options.json")
        with open(options_file, "w") as f:
            json.dump({"homg": {"maxi": 4}, "mg": {"pre": 1, "post": 3, "omega": 0.7},
                       "maxit": 3}, f)
        check(clmg, "homg --options (the flags' keys)",
              ["homg", "--n", "17", "--options", options_file, "--json", "--quiet"], 0, "success",
              homg_keys, same_run(first, homg_run))
        with open(options_file, "w") as f:
            json.dump(first["options"], f)
        check(clmg, "homg --options (the echoed options)",
              ["homg", "--n", "17", "--options", options_file, "--json", "--quiet"], 0, "success",
              homg_keys, same_run(first, homg_run))
        check(clmg, "homg --options then a flag",
              ["homg", "--n", "17", "--options", options_file, "--maxi", "2", "--json",
               "--quiet"], 0, "success", homg_keys,
              lambda case, obj: obj.get("maxi") == 2 or fail(case, "the flag lost"))
        check(clmg, "homg --set (the flags' keys)",
              ["homg", "--n", "17", "--set", "homg.maxi=4 mg.pre=1 mg.post=3 mg.omega=0.7 maxit=3",
               "--json", "--quiet"], 0, "success", homg_keys, same_run(first, homg_run))
        with open(options_file, "w") as f:
            json.dump({"homg": {"method": "vcycle"}}, f)
        check(clmg, "homg --options: vcycle with --steps",
              ["homg", "--n", "17", "--options", options_file, "--steps", "--json"], 2,
              "usage_error", error_keys(), says("--steps"))
    check(clmg, "homg --set: unknown key", ["homg", "--json", "--set", "homg.maxx=4"], 2,
          "usage_error", error_keys(), says("homg.maxx", "homg.maxi"))
    check(clmg, "homg --set: unknown value", ["homg", "--json", "--set", "homg.method=nope"], 2,
          "usage_error", error_keys(), says("nope", "vcycle"))
    check(clmg, "homg --set: not its smoother", ["homg", "--json", "--set",
                                                 "mg.smoother=chebyshev"], 2, "usage_error",
          error_keys(), says("mg.smoother", "jacobi"))
    check(clmg, "homg --set: not key=value", ["homg", "--json", "--set", "maxit"], 2,
          "usage_error", error_keys(), says("key=value"))
    check(clmg, "homg --omega: above 1", ["homg", "--json", "--omega", "1.5"], 2, "usage_error",
          error_keys(), says("omega"))
    code, out, err = run(clmg, ["homg", "--n", "17", "--json", "--quiet", "--set", "krylov=cg"])
    if code != 0 or "warning: krylov: set, but clmg homg does not read it" not in err:
        fail("homg: unused key", f"exit {code}, stderr {err.strip()[:300]!r}")
    else:
        print("ok   homg: unused key", flush=True)

    # ---- flow
    flow_keys = (("unknowns", int), ("levels", int), ("nonlinear_iterations", int),
                 ("linear_iterations", int), ("converged", bool), ("setup_s", NUMBER),
                 ("solve_s", NUMBER), ("drag_coefficient", None), ("lift_coefficient", None),
                 ("pressure_difference", None))

    def dfg_numbers(case, obj):
        for key in ("drag_coefficient", "lift_coefficient", "pressure_difference"):
            if not isinstance(obj.get(key), (int, float)):
                fail(case, f'"{key}" is {obj.get(key)!r}, expected a number for a DFG case')
        if obj.get("converged") is not True:
            fail(case, "not converged")

    check(clmg, "flow cavity", ["flow", "--case", "cavity", "--level", "1", "--json"], 0,
          "success", flow_keys)
    check(clmg, "flow dfg1", ["flow", "--case", "dfg1", "--level", "0", "--json"], 0, "success",
          flow_keys, dfg_numbers)
    check(clmg, "flow: not converged", ["flow", "--case", "cavity", "--level", "1",
                                        "--maxit", "1", "--json"], 1, "not converged",
          flow_keys)
    # a Gmsh case with every boundary condition, a body and pressure points
    obstacle = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "data",
                            "channel_obstacle.msh")
    gmsh_flags = ["flow", "--case", obstacle, "--walls", "3", "--slip", "4", "--outflow", "2",
                  "--inflow", "1", "--inflow-profile", "parabolic", "--inflow-peak", "1.5",
                  "--level", "0", "--steps", "2", "--json"]
    check(clmg, "flow gmsh with a body", gmsh_flags + ["--body", "3", "--reference-length", "0.1",
                                                       "--pressure-points", "0.14,0.2,0.26,0.2"],
          0, "success", flow_keys, dfg_numbers)
    check(clmg, "flow gmsh: a tag with no condition", gmsh_flags[:6] + gmsh_flags[8:], 2,
          "usage_error", ())
    check(clmg, "flow: bad case", ["flow", "--case", "nope", "--json"], 2, "usage_error", ())
    check(clmg, "flow: missing mesh", ["flow", "--case", missing + ".msh", "--walls", "1",
                                       "--inflow", "2", "--json"], 1, "input/output error", ())
    check(clmg, "flow: unwritable vtk", ["flow", "--case", "cavity", "--level", "0", "--vtk",
                                         unwritable + "/out", "--json"], 1, "input/output error",
          ())

    # clmg flow through the options layer, as clmg homg
    flow_run = ("nonlinear_iterations", "linear_iterations", "nonlinear_residual", "smoother",
                "unknowns")
    first = check(clmg, "flow flags", ["flow", "--case", "cavity", "--level", "1", "--smoother",
                                       "vanka-nsi", "--tol", "1e-6", "--maxit", "30", "--json",
                                       "--quiet"], 0, "success", flow_keys + (("options", dict),),
                  echoes({"mg.smoother": "vanka-nsi", "flow.nonlinear_tol": 1e-6,
                          "flow.nonlinear_maxit": 30, "krylov": "gmres", "mg.cycle": "f",
                          "maxit": 100}))
    if first is not None:
        options_file = os.path.join(scratch, "flow-options.json")
        with open(options_file, "w") as f:
            json.dump({"mg": {"smoother": "vanka-nsi"},
                       "flow": {"nonlinear_tol": 1e-6, "nonlinear_maxit": 30}}, f)
        check(clmg, "flow --options (the flags' keys)",
              ["flow", "--case", "cavity", "--level", "1", "--options", options_file, "--json",
               "--quiet"], 0, "success", flow_keys, same_run(first, flow_run))
        with open(options_file, "w") as f:
            json.dump(first["options"], f)
        check(clmg, "flow --options (the echoed options)",
              ["flow", "--case", "cavity", "--level", "1", "--options", options_file, "--json",
               "--quiet"], 0, "success", flow_keys, same_run(first, flow_run))
        check(clmg, "flow --options then a flag",
              ["flow", "--case", "cavity", "--level", "1", "--options", options_file, "--smoother",
               "vanka-si", "--json", "--quiet"], 0, "success", flow_keys,
              lambda case, obj: obj.get("smoother") == "vanka-si" or fail(case, "the flag lost"))
        check(clmg, "flow --set (the flags' keys)",
              ["flow", "--case", "cavity", "--level", "1", "--set",
               "mg.smoother=vanka-nsi flow.nonlinear_tol=1e-6 flow.nonlinear_maxit=30", "--json",
               "--quiet"], 0, "success", flow_keys, same_run(first, flow_run))
        with open(options_file, "w") as f:
            f.write('{"mg": {"smoother": "chebyshev"}}')
        check(clmg, "flow --options: not its smoother",
              ["flow", "--level", "0", "--options", options_file, "--json"], 2, "usage_error",
              error_keys(), says("chebyshev", "vanka-si"))
    check(clmg, "flow: time scheme and upwind", ["flow", "--case", "dfg2", "--level", "0",
                                                 "--steps", "2", "--time-scheme", "fs-theta",
                                                 "--upwind", "weighted", "--set",
                                                 "flow.upwind_parameter=0.2", "--json", "--quiet"],
          0, "success", flow_keys + (("time_scheme", str), ("upwind", str)),
          echoes({"flow.time_scheme": "fs-theta", "flow.upwind": "weighted",
                  "flow.upwind_parameter": 0.2}))
    check(clmg, "flow --linearisation newton",
          ["flow", "--case", "cavity", "--level", "2", "--re", "400", "--linearisation", "newton",
           "--json", "--quiet"], 0, "success",
          flow_keys + (("newton_steps", int), ("linearisation", str)),
          lambda case, obj: (echoes({"flow.linearisation": "newton"})(case, obj),
                             obj["newton_steps"] > 0 or fail(case, "no Newton step"),
                             obj["linearisation"] == "newton" or fail(case, "not newton")))
    check(clmg, "flow --linearisation newton: time steps",
          ["flow", "--case", "dfg2", "--level", "0", "--steps", "2", "--linearisation", "newton",
           "--json"], 2, "usage_error", error_keys(), says("newton", "steady"))
    check(clmg, "flow --linearisation: a bad name",
          ["flow", "--linearisation", "secant", "--json"], 2, "usage_error", error_keys(),
          says("secant", "picard", "newton"))
    check(clmg, "flow dfg3: its defaults", ["flow", "--case", "dfg3", "--level", "0", "--dt", "2",
                                            "--json", "--quiet"], 0, "success", flow_keys,
          echoes({"flow.time_scheme": "crank-nicolson", "flow.upwind": "weighted"}))
    check(clmg, "flow: upwind parameter without weighted",
          ["flow", "--case", "cavity", "--json", "--set", "flow.upwind_parameter=0.5"], 2,
          "usage_error", error_keys(), says("flow.upwind_parameter", "weighted"))
    check(clmg, "flow --set: a key's cycle", ["flow", "--case", "cavity", "--level", "1", "--set",
                                              "mg.cycle=v mg.steps=1", "--json", "--quiet"], 0,
          "success", flow_keys, echoes({"mg.cycle": "v", "mg.pre": 1, "mg.post": 1}))
    check(clmg, "flow --set: unknown key", ["flow", "--json", "--set", "flow.tol=1e-6"], 2,
          "usage_error", error_keys(), says("flow.tol", "flow.nonlinear_tol"))
    check(clmg, "flow --set: bad value", ["flow", "--json", "--set", "maxit=many"], 2,
          "usage_error", error_keys(), says("maxit", "integer"))
    check(clmg, "flow --set: not its Krylov method", ["flow", "--json", "--set", "krylov=cg"], 2,
          "usage_error", error_keys(), says("krylov=cg", "gmres"))
    check(clmg, "flow --smoother: unknown", ["flow", "--json", "--smoother", "foo"], 2,
          "usage_error", error_keys(), says("foo", "vanka-nsi"))

    # ---- the first-run message: stderr only, once, only when compiling
    env = dict(os.environ)
    env["CLMG_CACHE_DIR"] = os.path.join(scratch, "fresh-cache")
    args = ["poisson", "--level", "2", "--json"]
    code, out, err = run(clmg, args, env)
    parse_one("first run", out)
    said = err.count("compiling OpenCL kernels")
    if code != 0 or said != 1 or env["CLMG_CACHE_DIR"] not in err:
        fail("first run", f"exit {code}; expected one first-run line naming the cache: {err!r}")
    if "compiling" in out:
        fail("first run", "the first-run message went to stdout")
    code, out, err = run(clmg, args, env)
    if "compiling OpenCL kernels" in err:
        fail("second run", f"the kernels came from the cache, yet: {err!r}")
    env["CLMG_CACHE_DIR"] = os.path.join(scratch, "quiet-cache")
    code, out, err = run(clmg, args + ["--quiet"], env)
    if "compiling" in err:
        fail("first run --quiet", f"said: {err!r}")
    print("ok   first-run message", flush=True)

    subprocess.run(["rm", "-rf", scratch], check=False)
    if failures:
        print(f"\n{len(failures)} failure(s)")
        sys.exit(1)
    print("\nall JSON outputs parse and carry their keys")


if __name__ == "__main__":
    main()
