#!/usr/bin/env python3
"""Writes channel_obstacle.msh (Gmsh 4.1 ASCII): a channel [0, 2.2] x [0, 0.41]
with a square obstacle [0.15, 0.25] x [0.15, 0.25] (a square version of the
DFG cylinder, a little below the channel's middle, so that the wake sheds),
in triangles for `clmg flow` (examples/flow_obstacle.sh). Physical groups of
the boundary lines: 1 inflow (x = 0), 2 outflow (x = 2.2), 3 obstacle,
4 channel walls (y = 0 and y = 0.41); 5 the fluid. The structured grid is
0.05 wide up to x = 0.7, then grows; each quadrilateral is cut along the
diagonal that alternates like a union jack.

Usage: python3 examples/data/channel_obstacle.py [OUT.msh]
"""
import os
import sys

LENGTH, HEIGHT = 2.2, 0.41
OBSTACLE = (0.15, 0.25)  # [a, b]^2


def grid_lines():
    xs = [0.05 * i for i in range(15)]  # 0 .. 0.7
    width = 0.06
    while xs[-1] + width < LENGTH - 0.04:
        xs.append(xs[-1] + width)
        width *= 1.12
    xs.append(LENGTH)
    ys = [0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.355, HEIGHT]
    return xs, ys


def build():
    xs, ys = grid_lines()
    nx, ny = len(xs), len(ys)
    a, b = OBSTACLE

    def inside(i, j):  # the cell [xs[i], xs[i+1]] x [ys[j], ys[j+1]] is the obstacle
        cx, cy = 0.5 * (xs[i] + xs[i + 1]), 0.5 * (ys[j] + ys[j + 1])
        return a < cx < b and a < cy < b

    node = {}
    coords = []

    def vertex(i, j):
        if (i, j) not in node:
            node[(i, j)] = len(coords) + 1
            coords.append((xs[i], ys[j]))
        return node[(i, j)]

    triangles = []
    for j in range(ny - 1):
        for i in range(nx - 1):
            if inside(i, j):
                continue
            v00, v10 = vertex(i, j), vertex(i + 1, j)
            v01, v11 = vertex(i, j + 1), vertex(i + 1, j + 1)
            if (i + j) % 2 == 0:
                triangles += [(v00, v10, v11), (v00, v11, v01)]
            else:
                triangles += [(v00, v10, v01), (v10, v11, v01)]
    lines = {1: [], 2: [], 3: [], 4: []}
    for j in range(ny - 1):
        lines[1].append((node[(0, j)], node[(0, j + 1)]))
        lines[2].append((node[(nx - 1, j)], node[(nx - 1, j + 1)]))
    for i in range(nx - 1):
        lines[4].append((node[(i, 0)], node[(i + 1, 0)]))
        lines[4].append((node[(i, ny - 1)], node[(i + 1, ny - 1)]))
    # the obstacle's sides: edges between a fluid cell and an obstacle cell
    for j in range(ny - 1):
        for i in range(nx - 1):
            if not inside(i, j):
                continue
            if not inside(i - 1, j):
                lines[3].append((node[(i, j)], node[(i, j + 1)]))
            if not inside(i + 1, j):
                lines[3].append((node[(i + 1, j)], node[(i + 1, j + 1)]))
            if not inside(i, j - 1):
                lines[3].append((node[(i, j)], node[(i + 1, j)]))
            if not inside(i, j + 1):
                lines[3].append((node[(i, j + 1)], node[(i + 1, j + 1)]))
    return coords, triangles, lines


def write(path):
    coords, triangles, lines = build()
    names = {1: "inflow", 2: "outflow", 3: "obstacle", 4: "walls", 5: "fluid"}
    out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$PhysicalNames", "5"]
    out += [f'{1 if t < 5 else 2} {t} "{names[t]}"' for t in range(1, 6)]
    out += ["$EndPhysicalNames", "$Entities", "0 4 1 0"]
    for t in range(1, 5):  # one curve entity per group, its physical tag = its tag
        xy = [coords[v - 1] for e in lines[t] for v in e]
        x0, y0 = min(p[0] for p in xy), min(p[1] for p in xy)
        x1, y1 = max(p[0] for p in xy), max(p[1] for p in xy)
        out.append(f"{t} {x0:.17g} {y0:.17g} 0 {x1:.17g} {y1:.17g} 0 1 {t} 0")
    out.append(f"1 0 0 0 {LENGTH} {HEIGHT} 0 1 5 4 1 2 3 4")
    out += ["$EndEntities", "$Nodes", f"1 {len(coords)} 1 {len(coords)}", f"2 1 0 {len(coords)}"]
    out += [str(k + 1) for k in range(len(coords))]
    out += [f"{x:.17g} {y:.17g} 0" for x, y in coords]
    out.append("$EndNodes")
    count = len(triangles) + sum(len(v) for v in lines.values())
    out += ["$Elements", f"5 {count} 1 {count}"]
    tag = 1
    for t in range(1, 5):
        out.append(f"1 {t} 1 {len(lines[t])}")
        for e in lines[t]:
            out.append(f"{tag} {e[0]} {e[1]}")
            tag += 1
    out.append(f"2 1 2 {len(triangles)}")
    for tri in triangles:
        out.append(f"{tag} {tri[0]} {tri[1]} {tri[2]}")
        tag += 1
    out.append("$EndElements")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return len(coords), len(triangles)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "channel_obstacle.msh")
    vertices, cells = write(target)
    print(f"{target}: {vertices} vertices, {cells} triangles")
