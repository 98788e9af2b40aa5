#!/usr/bin/env python3
"""Launch latency of the multigrid cycle: `clmg poisson` (CIRCLE, Q1, double
V(4,4) cycles alone unless --set says otherwise) per level with the coarse tail as the device table sets it and switched off
(CLMG_DEVICE_PARAMS=tail_rows=0), and any other tail sizes asked for; each
with the fused kernels above the tail (lib/solve/fused_level.c) as the
device table sets them, off, or up to other row limits (--fused).

For each run: the solve's time per cycle, the device commands and host
waits per cycle (the JSON's commands_per_iteration, host_waits_per_iteration),
and the cycle against its bandwidth floor: the bytes a cycle must move
(iteration_bytes) over the copy bandwidth `clmg info` measures on the same
device in the same run. Each configuration runs --trials times, the trials
interleaved (one run of every configuration in turn); the fastest solve
counts.

--versus DEV also runs each level on a second device (the device table's
tail and fused kernels, the same --set) and prints how many times faster
the first device's cycle is, and the smallest level from which it is at
least --speedup (5) times faster (issue 33: the H200 against pocl on its
host's cores from at most 30k unknowns).

Usage:
  perf/latency.py --clmg build/apps/clmg [--device DEV] [--levels 5:10]
                  [--tails device,0,8192] [--fused device,off,R:S] [--trials 3]
                  [--set "K=V ..."] [--versus DEV [--speedup 5]]
                  [--output FILE] [--json]
"""
import argparse
import json
import os
import subprocess
import sys


def run_json(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{' '.join(command)}: no JSON on stdout (exit {done.returncode})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clmg", default="build/apps/clmg", help="the clmg command")
    parser.add_argument("--device", default=None, help="device string (default: clmg's)")
    parser.add_argument("--levels", default="5:10", help="CIRCLE levels A:B (default 5:10)")
    parser.add_argument("--tails", default="device,0",
                        help="tail sizes in rows, comma-separated: device (the device "
                             "table's), 0 (off), or a number (default device,0)")
    parser.add_argument("--fused", default="device",
                        help="fused kernels, comma-separated: device (the device table's), off, "
                             "or R:S (fused_restrict_rows R, fused_smooth_rows S) (default device)")
    parser.add_argument("--trials", type=int, default=3, help="solves per configuration (3)")
    parser.add_argument("--set", default="krylov=none precision=double",
                        help="solver options for every run (clmg poisson --set; default "
                        "\"krylov=none precision=double\": V(4,4) cycles alone, the cycle the "
                        "tables measure, not clmg poisson's default CG around a float cycle)")
    parser.add_argument("--versus", default=None,
                        help="a second device to run every level on (e.g. pocl)")
    parser.add_argument("--speedup", type=float, default=5.0,
                        help="with --versus: the speed-up whose smallest level is reported (5)")
    parser.add_argument("--output", help="write the results as JSON to FILE")
    parser.add_argument("--json", action="store_true", help="print the JSON on stdout, no table")
    args = parser.parse_args()
    first, last = (int(x) for x in args.levels.split(":"))
    device = ["--device", args.device] if args.device else []

    info = run_json([args.clmg, "info", "--json"] + device)
    bandwidth = info.get("copy_bandwidth_gb_s") or 0.0
    versus_bandwidth = 0.0
    if args.versus:
        versus_info = run_json([args.clmg, "info", "--json", "--device", args.versus])
        versus_bandwidth = versus_info.get("copy_bandwidth_gb_s") or 0.0
    # every configuration's command and environment; the trials interleave
    # them (one run of each in turn), so that a busy machine's slow spells
    # fall on all of them alike
    configs = []
    for level in range(first, last + 1):
        for tail, fused in [(t, f) for t in args.tails.split(",") for f in args.fused.split(",")]:
            env = dict(os.environ)
            params = [env.get("CLMG_DEVICE_PARAMS", "")]
            if tail != "device":
                params.append(f"tail_rows={tail}")
            if fused == "off":
                params.append("fused_restrict_rows=0,fused_smooth_rows=0")
            elif fused != "device":
                restrict_rows, smooth_rows = fused.split(":")
                params.append(f"fused_restrict_rows={int(restrict_rows)},"
                              f"fused_smooth_rows={int(smooth_rows)}")
            env["CLMG_DEVICE_PARAMS"] = ",".join(x for x in params if x)
            command = [args.clmg, "poisson", "--level", str(level), "--json", "--quiet"] + device
            if args.set:
                command += ["--set", args.set]
            configs.append({"level": level, "tail": tail, "fused": fused, "command": command,
                            "env": env, "best": None, "device": args.device or "default",
                            "bandwidth": bandwidth, "versus": False})
        if args.versus:
            command = [args.clmg, "poisson", "--level", str(level), "--json", "--quiet",
                       "--device", args.versus]
            if args.set:
                command += ["--set", args.set]
            configs.append({"level": level, "tail": "device", "fused": "device",
                            "command": command, "env": dict(os.environ), "best": None,
                            "device": args.versus, "bandwidth": versus_bandwidth,
                            "versus": True})
    for _ in range(args.trials):
        for c in configs:
            result = run_json(c["command"], c["env"])
            if result.get("status") != "success":
                raise SystemExit(f"level {c['level']}, tail {c['tail']}, fused {c['fused']}, "
                                 f"device {c['device']}: {result.get('message')}")
            if c["best"] is None or result["solve_s"] < c["best"]["solve_s"]:
                c["best"] = result
    rows = []
    for c in configs:
        best = c["best"]
        cycles = max(best["iterations"], 1)
        cycle_s = best["solve_s"] / cycles
        floor_s = (best.get("iteration_bytes", 0) / (c["bandwidth"] * 1e9)
                   if c["bandwidth"] else 0.0)
        rows.append({
            "device": c["device"], "versus": c["versus"],
            "level": c["level"], "unknowns": best["unknowns"], "tail_rows": c["tail"],
            "fused": c["fused"], "iterations": best["iterations"], "solve_s": best["solve_s"],
            "cycle_s": cycle_s, "commands_per_iteration": best["commands_per_iteration"],
            "host_waits_per_iteration": best["host_waits_per_iteration"],
            "iteration_bytes": best.get("iteration_bytes"),
            "x_floor": cycle_s / floor_s if floor_s > 0 else None,
            "options": best.get("options"),
        })
    document = {"device": info.get("selected", info.get("devices")),
                "copy_bandwidth_gb_s": bandwidth, "trials": args.trials, "results": rows}
    if args.versus:
        document["versus"] = versus(rows, args)
        document["versus_copy_bandwidth_gb_s"] = versus_bandwidth
    text = json.dumps(document, indent=1)
    if args.output:
        with open(args.output + ".part", "w") as out:
            out.write(text + "\n")
        os.replace(args.output + ".part", args.output)
    if args.json:
        print(text)
        return
    print(f"copy bandwidth {bandwidth:.1f} GB/s"
          + (f"; {args.versus}: {versus_bandwidth:.1f} GB/s" if args.versus else ""))
    print(f"{'device':>8} {'level':>5} {'unknowns':>10} {'tail':>7} {'fused':>11} {'its':>4} "
          f"{'solve ms':>9} {'cycle ms':>9} {'cmds/it':>8} {'waits/it':>8} {'x floor':>8}")
    for r in rows:
        floor = f"{r['x_floor']:8.2f}" if r["x_floor"] else f"{'-':>8}"
        print(f"{r['device'][:8]:>8} {r['level']:>5} {r['unknowns']:>10} {r['tail_rows']:>7} "
              f"{r['fused']:>11} "
              f"{r['iterations']:>4} "
              f"{1e3 * r['solve_s']:9.3f} {1e3 * r['cycle_s']:9.4f} "
              f"{r['commands_per_iteration']:8.1f} {r['host_waits_per_iteration']:8.1f} {floor}")
    if args.versus:
        v = document["versus"]
        print(f"\nsolve time per level against {args.versus} (the device table's tail and fused "
              "kernels on both):")
        for r in v["levels"]:
            print(f"  level {r['level']:>2} ({r['unknowns']:>9} unknowns): {r['speedup']:7.2f}x")
        if v["from_unknowns"] is not None:
            print(f"at least {args.speedup:g}x faster than {args.versus} from level "
                  f"{v['from_level']} ({v['from_unknowns']} unknowns) on")
        else:
            print(f"at least {args.speedup:g}x faster than {args.versus}: at no level measured")


def versus(rows, args):
    """The first device's solve time per level against --versus's (both
    with the device table's tail and fused kernels, the same iterations'
    work), and the smallest level from which the speed-up stays at least
    --speedup."""
    first = {r["level"]: r for r in rows
             if not r["versus"] and r["tail_rows"] == "device" and r["fused"] == "device"}
    second = {r["level"]: r for r in rows if r["versus"]}
    levels = []
    for level in sorted(set(first) & set(second)):
        a, b = first[level], second[level]
        levels.append({"level": level, "unknowns": a["unknowns"],
                       "speedup": b["cycle_s"] / a["cycle_s"] if a["cycle_s"] > 0 else None})
    from_level = None
    for r in reversed(levels):  # the smallest level from which every larger one holds
        if r["speedup"] is None or r["speedup"] < args.speedup:
            break
        from_level = r
    return {"speedup_asked": args.speedup, "levels": levels,
            "from_level": from_level["level"] if from_level else None,
            "from_unknowns": from_level["unknowns"] if from_level else None}


if __name__ == "__main__":
    main()
