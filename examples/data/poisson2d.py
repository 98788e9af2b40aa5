#!/usr/bin/env python3
"""Writes the 2-D Poisson matrix (five-point Laplacian) as a Matrix Market file.

  examples/data/poisson2d.py N [FILE]      (default: N = 32, FILE = stdout)

The matrix is -Laplace(u) on an N x N interior grid of the unit square with
zero Dirichlet values eliminated, scaled by h^2: 4 on the diagonal, -1 for
each of the (up to four) grid neighbours, N^2 unknowns numbered row by row.
It is symmetric positive definite; only the lower triangle is stored
("symmetric"), as the Matrix Market format allows. examples/data/poisson2d_32.mtx
is `examples/data/poisson2d.py 32 examples/data/poisson2d_32.mtx`.
"""

import sys


def main() -> int:
    if len(sys.argv) > 3 or (len(sys.argv) > 1 and not sys.argv[1].isdigit()):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    if n < 1:
        print("poisson2d.py: N must be at least 1", file=sys.stderr)
        return 2
    entries = []  # (row, col, value), 1-based, lower triangle, row by row
    for j in range(n):
        for i in range(n):
            k = j * n + i + 1
            if j > 0:
                entries.append((k, k - n, -1))
            if i > 0:
                entries.append((k, k - 1, -1))
            entries.append((k, k, 4))
    lines = [
        "%%MatrixMarket matrix coordinate integer symmetric",
        f"% 2-D Poisson, five-point Laplacian on a {n} x {n} interior grid of the unit square,",
        "% zero Dirichlet values eliminated, scaled by h^2 (4 on the diagonal, -1 off it).",
        "% Symmetric positive definite: solve it with CG (examples/cg_matrix_market.c).",
        f"% Written by examples/data/poisson2d.py {n}.",
        f"{n * n} {n * n} {len(entries)}",
    ]
    lines += [f"{r} {c} {v}" for r, c, v in entries]
    text = "\n".join(lines) + "\n"
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", encoding="ascii") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
