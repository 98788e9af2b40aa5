#!/usr/bin/env python3
"""Compares `clmg flow --case cavity --profile FILE` centrelines with Ghia,
Ghia and Shin, "High-Re solutions for incompressible flow using the
Navier-Stokes equations and a multigrid method" (J. Comput. Phys. 48, 1982),
Tables I and II: u on the vertical centreline x = 0.5 and v on the
horizontal one y = 0.5, for Re = 100 and 1000. Prints each reference point
with the clmg value (linear interpolation of the profile's 129 points) and
the largest difference; --output FILE writes them as JSON, --json prints
the JSON instead of the table (the old --json FILE still writes FILE, with
a note, until 0.3.0).

Usage: cavity_ghia.py PROFILE.csv --re 100|1000 [--output FILE] [--json] [--png FILE]
"""
import argparse
import csv
import sys

import perf_output  # perf/perf_output.py: --output FILE and --json

# y, u on x = 0.5 (Table I)
GHIA_U = {
    100: [(1.0, 1.0), (0.9766, 0.84123), (0.9688, 0.78871), (0.9609, 0.73722), (0.9531, 0.68717),
          (0.8516, 0.23151), (0.7344, 0.00332), (0.6172, -0.13641), (0.5, -0.20581),
          (0.4531, -0.2109), (0.2813, -0.15662), (0.1719, -0.1015), (0.1016, -0.06434),
          (0.0703, -0.04775), (0.0625, -0.04192), (0.0547, -0.03717), (0.0, 0.0)],
    1000: [(1.0, 1.0), (0.9766, 0.65928), (0.9688, 0.57492), (0.9609, 0.51117), (0.9531, 0.46604),
           (0.8516, 0.33304), (0.7344, 0.18719), (0.6172, 0.05702), (0.5, -0.0608),
           (0.4531, -0.10648), (0.2813, -0.27805), (0.1719, -0.38289), (0.1016, -0.2973),
           (0.0703, -0.2222), (0.0625, -0.20196), (0.0547, -0.18109), (0.0, 0.0)],
}
# x, v on y = 0.5 (Table II)
GHIA_V = {
    100: [(1.0, 0.0), (0.9688, -0.05906), (0.9609, -0.07391), (0.9531, -0.08864),
          (0.9453, -0.10313), (0.9063, -0.16914), (0.8594, -0.22445), (0.8047, -0.24533),
          (0.5, 0.05454), (0.2344, 0.17527), (0.2266, 0.17507), (0.1563, 0.16077),
          (0.0938, 0.12317), (0.0781, 0.1089), (0.0703, 0.10091), (0.0625, 0.09233), (0.0, 0.0)],
    1000: [(1.0, 0.0), (0.9688, -0.21388), (0.9609, -0.27669), (0.9531, -0.33714),
           (0.9453, -0.39188), (0.9063, -0.5155), (0.8594, -0.42665), (0.8047, -0.31966),
           (0.5, 0.02526), (0.2344, 0.32235), (0.2266, 0.33075), (0.1563, 0.37095),
           (0.0938, 0.32627), (0.0781, 0.30353), (0.0703, 0.29012), (0.0625, 0.27485),
           (0.0, 0.0)],
}


def read_profile(path):
    lines = {"x=0.5": [], "y=0.5": []}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            lines[row["line"]].append((float(row["s"]), float(row["u"]), float(row["v"])))
    for key in lines:
        lines[key].sort()
        if len(lines[key]) < 2:
            sys.exit(f"{path}: no {key} line")
    return lines


def interpolate(points, s, column):
    """The profile's column (0: u, 1: v) at position s, linearly between its
    points; the end value outside them."""
    for (s0, *v0), (s1, *v1) in zip(points, points[1:]):
        if s0 <= s <= s1:
            t = 0.0 if s1 == s0 else (s - s0) / (s1 - s0)
            return v0[column] + t * (v1[column] - v0[column])
    return points[-1][1 + column] if s > points[-1][0] else points[0][1 + column]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile")
    parser.add_argument("--re", type=int, choices=(100, 1000), required=True)
    perf_output.add_arguments(parser)
    parser.add_argument("--png")
    args = perf_output.parse(parser, "cavity_ghia")
    lines = read_profile(args.profile)
    rows = []
    for name, table, line, column in (("u(0.5, y)", GHIA_U, "x=0.5", 0),
                                      ("v(x, 0.5)", GHIA_V, "y=0.5", 1)):
        for s, ref in table[args.re]:
            value = interpolate(lines[line], s, column)
            rows.append({"quantity": name, "s": s, "ghia": ref, "clmg": value,
                         "difference": value - ref})
    worst = max(abs(r["difference"]) for r in rows)
    with perf_output.table(args):
        print(f"Lid-driven cavity, Re = {args.re}: clmg against Ghia, Ghia and Shin (1982)")
        print(f"{'quantity':<10} {'s':>7} {'Ghia':>9} {'clmg':>9} {'diff':>9}")
        for r in rows:
            print(f"{r['quantity']:<10} {r['s']:7.4f} {r['ghia']:9.5f} {r['clmg']:9.5f} "
                  f"{r['difference']:9.5f}")
        print(f"largest difference: {worst:.5f}")
    status = perf_output.write("cavity_ghia", args,
                               {"re": args.re, "points": rows, "max_abs_difference": worst})
    if args.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib missing: no PNG", file=sys.stderr)
            return status
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
        for ax, (line, table, column, label) in zip(
                axes, (("x=0.5", GHIA_U, 0, "u on x = 0.5"), ("y=0.5", GHIA_V, 1, "v on y = 0.5"))):
            pts = lines[line]
            ax.plot([p[0] for p in pts], [p[1 + column] for p in pts], label="clmg")
            ax.plot([s for s, _ in table[args.re]], [v for _, v in table[args.re]], "o",
                    label="Ghia et al. 1982")
            ax.set_title(f"{label}, Re = {args.re}")
            ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=100)
    return status


if __name__ == "__main__":
    sys.exit(main())
