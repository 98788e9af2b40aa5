#!/usr/bin/env python3
"""The scaling tables of clmg_perf_scaling's JSON lines (perf/scaling.sh).

Strong scaling: a problem's runs on 1, 2, 4 ... ranks; speed-up and
efficiency of the multigrid cycle and the PCG iteration against 1 rank.
Weak scaling: runs whose unknowns per rank are (about) equal, grouped by
the problem's family (box2, box3, circle); the efficiency is the 1-rank
time per unknown over the N-rank time per unknown of a rank, so slightly
unequal sizes do not count as scaling.
Per run: the distributed SpMV against the local SpMV of the same rows
(their ratio: what the halo exchange adds), the halo per SpMV and per
cycle, one reduction, and the SpMV's bandwidth as a fraction of the copy
bandwidth rank 0 measured alone.

--output FILE writes both tables as JSON, --json prints the JSON instead of
the tables (the old --json FILE still writes FILE, with a note, until 0.3.0).

Usage: scaling_table.py FILE.jsonl [--output FILE] [--json]
"""
import argparse
import json
import sys
from collections import defaultdict

import perf_output  # perf/perf_output.py: --output FILE and --json


def load(path):
    runs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                runs.append(json.loads(line))
    # the last run of each (problem, ranks) counts
    latest = {}
    for run in runs:
        latest[(run["problem"], run["ranks"])] = run
    return list(latest.values())


def per(run, key, count_key):
    return run[key] / max(1, run[count_key])


def row(run):
    cycle = per(run, "mg_s", "mg_cycles")
    iteration = per(run, "cg_s", "cg_iterations")
    return {
        "problem": run["problem"],
        "ranks": run["ranks"],
        "unknowns": run["unknowns"],
        "per_rank": run["unknowns"] / run["ranks"],
        "spmv_ms": 1e3 * run["spmv_s"],
        "spmv_ratio": run["spmv_s"] / run["local_spmv_s"],
        "wait_ms": 1e3 * run.get("local_spmv_wait_s", float("nan")),
        "spmv_of_copy": run["spmv_bytes"] / run["spmv_s"] / 1e9 / run["copy_gb_s"],
        "halo_kb_spmv": 8e-3 * run["halo_values_spmv"],
        "halo_kb_cycle": 8e-3 * run["halo_values_cycle"],
        "allreduce_us": 1e6 * run["allreduce_s"],
        "cg_iterations": run["cg_iterations"],
        "cg_ms": 1e3 * iteration,
        "mg_cycles": run["mg_cycles"],
        "cycle_ms": 1e3 * cycle,
        "mg_s": run["mg_s"],
        "mg_converged": bool(run["mg_converged"]),
        "cg_converged": bool(run["cg_converged"]),
        # what communication adds to an SpMV, and a PCG iteration's reduction
        "exchange_fraction": max(0.0, run["spmv_s"] - run["local_spmv_s"]) / run["spmv_s"],
        "reduction_fraction": run["allreduce_s"] / iteration if iteration > 0 else 0.0,
    }


def print_runs(title, rows, extra):
    print(f"\n{title}")
    header = ("problem", "ranks", "unknowns/rank", "SpMV ms", "dist/local", "local+wait ms", "of copy",
              "halo KB/SpMV", "halo KB/cycle", "reduce us", "PCG its", "ms/it",
              "cycles", "ms/cycle", "MG s") + tuple(name for name, _ in extra)
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for r in rows:
        cells = [r["problem"], str(r["ranks"]), f"{r['per_rank']:.0f}", f"{r['spmv_ms']:.3f}",
                 f"{r['spmv_ratio']:.3f}", f"{r['wait_ms']:.3f}", f"{r['spmv_of_copy']:.2f}", f"{r['halo_kb_spmv']:.1f}",
                 f"{r['halo_kb_cycle']:.1f}", f"{r['allreduce_us']:.1f}", str(r["cg_iterations"]),
                 f"{r['cg_ms']:.3f}", str(r["mg_cycles"]), f"{r['cycle_ms']:.3f}",
                 f"{r['mg_s']:.3f}"] + [fn(r) for _, fn in extra]
        if not r["mg_converged"]:
            cells[0] += " (MG NOT converged)"
        if not r["cg_converged"]:
            cells[9] += " (capped)"
        print(" | ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", metavar="FILE.jsonl", help="clmg_perf_scaling's JSON lines")
    perf_output.add_arguments(parser)
    args = perf_output.parse(parser, "scaling_table")
    rows = [row(run) for run in load(args.runs)]
    with perf_output.table(args):
        strong, weak = tables(rows)
    return perf_output.write("scaling_table", args, {"strong": strong, "weak": weak})


def tables(rows):
    """Prints the strong and the weak scaling tables; returns their rows."""
    by_problem = defaultdict(list)
    for r in rows:
        by_problem[r["problem"]].append(r)
    strong = []
    for problem, group in by_problem.items():
        group.sort(key=lambda r: r["ranks"])
        base = next((r for r in group if r["ranks"] == 1), None)
        if base is None or len(group) < 2:
            continue
        for r in group:
            r["cycle_speedup"] = base["cycle_ms"] / r["cycle_ms"]
            r["cycle_efficiency"] = r["cycle_speedup"] / r["ranks"]
            r["cg_speedup"] = base["cg_ms"] / r["cg_ms"]
            strong.append(r)
    print_runs("Strong scaling (one problem, more ranks)", strong,
               [("cycle speed-up", lambda r: f"{r['cycle_speedup']:.2f}"),
                ("cycle efficiency", lambda r: f"{r['cycle_efficiency']:.2f}"),
                ("PCG speed-up", lambda r: f"{r['cg_speedup']:.2f}")])
    families = defaultdict(list)
    for r in rows:
        family = r["problem"].split(":")[0]
        families[family].append(r)
    weak = []
    for family, group in families.items():
        ones = [r for r in group if r["ranks"] == 1]
        if not ones:
            continue
        # the 1-rank run closest in size per rank to each other run
        for r in sorted(group, key=lambda r: (r["ranks"], r["per_rank"])):
            base = min(ones, key=lambda b: abs(b["per_rank"] - r["per_rank"]) / b["per_rank"])
            if abs(base["per_rank"] - r["per_rank"]) / base["per_rank"] > 0.5:
                continue
            if any(r is s for s in strong) and r["ranks"] > 1 and r["per_rank"] < 0.6 * base["per_rank"]:
                continue
            r["weak_efficiency"] = (base["cycle_ms"] / base["per_rank"]) / (r["cycle_ms"] / r["per_rank"])
            weak.append(r)
    print_runs("Weak scaling (unknowns per rank held about fixed)", weak,
               [("cycle efficiency", lambda r: f"{r['weak_efficiency']:.2f}")])
    return strong, weak


if __name__ == "__main__":
    sys.exit(main())
