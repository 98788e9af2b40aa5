#!/usr/bin/env python3
"""The DFG 2D-2 benchmark values from `clmg flow --case dfg2 --csv FILE`:
over the last --periods periods of the lift (found from its upward zero
crossings), the largest drag and lift coefficients and the Strouhal number
St = D f / U_mean (D = 0.1, U_mean = 1, f the lift's frequency). Reference intervals of Schaefer and Turek, "Benchmark
computations of laminar flow around a cylinder" (1996): c_D,max in
[3.22, 3.24], c_L,max in [0.99, 1.01], St in [0.295, 0.305].

--output FILE writes the values as JSON, --json prints the JSON instead of
the table (the old --json FILE still writes FILE, with a note, until 0.3.0).

Usage: dfg2_analysis.py FILE.csv [--periods N] [--output FILE] [--json]
"""
import argparse
import csv
import sys

import perf_output  # perf/perf_output.py: --output FILE and --json

REFERENCE = {"drag_max": (3.22, 3.24), "lift_max": (0.99, 1.01), "strouhal": (0.295, 0.305)}


def read_csv(path):
    """The time, drag and lift columns of a `clmg flow --csv` file."""
    t, drag, lift = [], [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t.append(float(row["time"]))
            drag.append(float(row["drag"]))
            lift.append(float(row["lift"]))
    return t, drag, lift


def analyse(t, drag, lift, periods):
    """The values over the last `periods` lift periods; ValueError when the
    lift has fewer."""
    ups = [t[k - 1] + (t[k] - t[k - 1]) * (-lift[k - 1]) / (lift[k] - lift[k - 1])
           for k in range(1, len(t)) if lift[k - 1] < 0 <= lift[k]]
    if len(ups) < periods + 1:
        raise ValueError(f"{len(ups) - 1 if ups else 0} lift periods, need {periods}: "
                         "run longer (the shedding starts after t of about 3)")
    start = ups[-1 - periods]
    period = (ups[-1] - start) / periods
    window = [k for k in range(len(t)) if t[k] >= start]
    return {
        "drag_max": max(drag[k] for k in window),
        "lift_max": max(lift[k] for k in window),
        "strouhal": 0.1 / period,
        "period": period,
        "time_window": [start, ups[-1]],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--periods", type=int, default=3)
    perf_output.add_arguments(parser)
    args = perf_output.parse(parser, "dfg2_analysis")
    try:
        result = analyse(*read_csv(args.csv), args.periods)
    except ValueError as e:
        sys.exit(f"{args.csv}: {e}")
    start, end = result["time_window"]
    with perf_output.table(args):
        print(f"DFG 2D-2 over t in [{start:.4f}, {end:.4f}] ({args.periods} periods):")
        for key in ("drag_max", "lift_max", "strouhal"):
            low, high = REFERENCE[key]
            inside = "inside" if low <= result[key] <= high else "outside"
            print(f"  {key:<9} {result[key]:.4f}   reference [{low}, {high}]: {inside}")
    return perf_output.write("dfg2_analysis", args, result)


if __name__ == "__main__":
    sys.exit(main())
