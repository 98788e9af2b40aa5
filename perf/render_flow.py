#!/usr/bin/env python3
"""Draws the velocity magnitude of a `clmg flow --vtk` step (a .vtu of
quadratic triangles: velocity at the vertices and edge midpoints) as a PNG,
for the picture of the DFG 2D-2 vortex street in docs/flow.md.

    python3 perf/render_flow.py dfg2_0600.vtu docs/images/dfg2-vortex-street.png

Reads the .vtu with meshio; draws with numpy and writes the PNG with zlib
(no matplotlib): each quadratic triangle is cut into its 4 linear ones
through the edge midpoints, and each pixel whose centre lies in one gets the
linear interpolant of |u| there, coloured by a viridis-like map from 0 to
the largest |u| (or --vmax); pixels outside the domain (the cylinder) are
light grey. --width sets the image's width in pixels (the height follows the
domain's aspect ratio).
"""
import argparse
import struct
import sys
import zlib

import numpy as np

# viridis at 9 stops (matplotlib's values), interpolated linearly
_STOPS = np.array([
    [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
    [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]], dtype=float)


def colour(values):
    """values in [0, 1] -> uint8 RGB."""
    position = np.clip(values, 0.0, 1.0) * (len(_STOPS) - 1)
    low = np.minimum(position.astype(int), len(_STOPS) - 2)
    weight = (position - low)[..., None]
    return np.round(_STOPS[low] * (1 - weight) + _STOPS[low + 1] * weight).astype(np.uint8)


def write_png(path, rgb):
    """A truecolour PNG of an (h, w, 3) uint8 array."""
    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[row].tobytes() for row in range(height))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def rasterise(points, triangles, values, width):
    """Pixels (h, w) of the linear interpolant of values on the triangles,
    NaN outside; the y axis points up."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    scale = (width - 1) / (hi[0] - lo[0])
    height = int(round((hi[1] - lo[1]) * scale)) + 1
    image = np.full((height, width), np.nan)
    px = (points[:, 0] - lo[0]) * scale
    py = (hi[1] - points[:, 1]) * scale  # row 0 at the top
    for tri in triangles:
        x, y, v = px[tri], py[tri], values[tri]
        c0, c1 = int(np.ceil(x.min())), int(np.floor(x.max()))
        r0, r1 = int(np.ceil(y.min())), int(np.floor(y.max()))
        if c1 < c0 or r1 < r0:
            continue
        cols, rows = np.meshgrid(np.arange(c0, c1 + 1), np.arange(r0, r1 + 1))
        det = (y[1] - y[2]) * (x[0] - x[2]) + (x[2] - x[1]) * (y[0] - y[2])
        if det == 0:
            continue
        l0 = ((y[1] - y[2]) * (cols - x[2]) + (x[2] - x[1]) * (rows - y[2])) / det
        l1 = ((y[2] - y[0]) * (cols - x[2]) + (x[0] - x[2]) * (rows - y[2])) / det
        l2 = 1.0 - l0 - l1
        inside = (l0 >= -1e-9) & (l1 >= -1e-9) & (l2 >= -1e-9)
        image[rows[inside], cols[inside]] = (l0 * v[0] + l1 * v[1] + l2 * v[2])[inside]
    return image


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vtu", help="a .vtu of clmg flow --vtk")
    parser.add_argument("png", help="the picture to write")
    parser.add_argument("--width", type=int, default=1100, help="pixels across (default 1100)")
    parser.add_argument("--vmax", type=float, default=None,
                        help="|u| of the brightest colour (default: the largest)")
    args = parser.parse_args(argv)
    import meshio

    mesh = meshio.read(args.vtu)
    blocks = [block for block in mesh.cells if block.type in ("triangle6", "triangle")]
    if not blocks or "velocity" not in mesh.point_data:
        sys.exit(f"{args.vtu}: expected triangles with point data 'velocity'")
    points = mesh.points[:, :2]
    u = np.asarray(mesh.point_data["velocity"])[:, :2]
    speed = np.hypot(u[:, 0], u[:, 1])
    linear = []
    for block in blocks:
        t = block.data
        if block.type == "triangle":
            linear.append(t)
        else:  # VTK's order: corners 0, 1, 2, then the midpoints of 01, 12, 20
            linear += [t[:, [0, 3, 5]], t[:, [3, 1, 4]], t[:, [5, 4, 2]], t[:, [3, 4, 5]]]
    triangles = np.concatenate(linear)
    image = rasterise(points, triangles, speed, args.width)
    vmax = args.vmax if args.vmax else float(np.nanmax(image))
    rgb = colour(np.nan_to_num(image / vmax))
    rgb[np.isnan(image)] = (220, 220, 220)
    write_png(args.png, rgb)
    print(f"{args.png}: {rgb.shape[1]} x {rgb.shape[0]}, |u| from 0 to {vmax:.4g}")


if __name__ == "__main__":
    main()
