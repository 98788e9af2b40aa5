#!/usr/bin/env python3
"""Writes the simplex test meshes tests/data/{tris,tets}_{22,41}.msh.

tris: [0,3] x [0,2] in 3 x 2 unit squares, each cut into 2 triangles along
  (x0,y0)-(x1,y1); physical surfaces 5 (x < 1) and 6 (x > 1); physical
  lines 11 (bottom), 12 (right), 13 (top); the left side is not listed.
tets: [0,2]^3 in 2^3 unit cubes of 6 Kuhn tetrahedra each; physical
  volumes 7 (z < 1) and 8 (z > 1); physical surfaces 21 (z = 0) and 22
  (z = 2); the other sides are not listed.
Every third cell is listed with its first two nodes swapped (negative
orientation), as Gmsh files may; 2.2 numbers the nodes sparsely and lists
them out of order. Run from the repository root: python3 tests/data/make_simplex_msh.py
"""


def grid(shape):
    """Nodes of a structured grid: tag -> (x, y, z), tags 1.. in lexicographic order."""
    nodes, tag = {}, 1
    nx, ny, nz = shape
    for k in range(nz + 1):
        for j in range(ny + 1):
            for i in range(nx + 1):
                nodes[(i, j, k)] = tag
                tag += 1
    return nodes


KUHN = [(0, 1, 3, 7), (0, 5, 1, 7), (0, 3, 2, 7), (0, 2, 6, 7), (0, 4, 5, 7), (0, 6, 4, 7)]


def corner(i, j, k, c):
    return (i + (c & 1), j + (c >> 1 & 1), k + (c >> 2 & 1))


def tris():
    nodes = grid((3, 2, 0))
    cells, faces = [], []  # (entity, physical, nodes)
    for j in range(2):
        for i in range(3):
            q = [nodes[corner(i, j, 0, c)] for c in range(4)]
            group = 5 if i < 1 else 6
            cells.append((group - 4, group, (q[0], q[1], q[3])))
            cells.append((group - 4, group, (q[0], q[3], q[2])))
    for i in range(3):
        faces.append((1, 11, (nodes[(i, 0, 0)], nodes[(i + 1, 0, 0)])))
        faces.append((3, 13, (nodes[(i + 1, 2, 0)], nodes[(i, 2, 0)])))
    for j in range(2):
        faces.append((2, 12, (nodes[(3, j, 0)], nodes[(3, j + 1, 0)])))
    cells.sort(key=lambda cell: cell[0])  # by entity, as 4.1's blocks list them
    return nodes, cells, faces, 2


def tets():
    nodes = grid((2, 2, 2))
    cells, faces = [], []
    for k in range(2):
        for j in range(2):
            for i in range(2):
                h = [nodes[corner(i, j, k, c)] for c in range(8)]
                for t in KUHN:
                    cells.append((k + 1, 7 + k, tuple(h[c] for c in t)))
    for j in range(2):
        for i in range(2):
            for z, entity, group in ((0, 1, 21), (2, 2, 22)):
                q = [nodes[(i + (c & 1), j + (c >> 1), z)] for c in range(4)]
                faces.append((entity, group, (q[0], q[1], q[3])))
                faces.append((entity, group, (q[0], q[3], q[2])))
    return nodes, cells, faces, 3


def coords(key, dim):
    return key if dim == 3 else (key[0], key[1], 0)


def swapped(cells):
    return [(e, g, (n[1], n[0]) + n[2:]) if index % 3 == 0 else (e, g, n)
            for index, (e, g, n) in enumerate(cells)]


def write22(path, mesh):
    nodes, cells, faces, dim = mesh
    cells = swapped(cells)
    sparse = {tag: 10 * tag + 7 for tag in nodes.values()}
    lines = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$Nodes", str(len(nodes))]
    for key, tag in sorted(nodes.items(), key=lambda item: -item[1]):
        lines.append("%d %g %g %g" % ((sparse[tag],) + coords(key, dim)))
    lines += ["$EndNodes", "$Elements", str(len(faces) + len(cells))]
    number = 1
    for kind, elements in ((1 if dim == 2 else 2, faces), (2 if dim == 2 else 4, cells)):
        for entity, group, n in elements:
            lines.append("%d %d 2 %d %d %s" % (number, kind, group, entity,
                                                " ".join(str(sparse[t]) for t in n)))
            number += 1
    lines.append("$EndElements")
    open(path, "w").write("\n".join(lines) + "\n")


def write41(path, mesh):
    nodes, cells, faces, dim = mesh
    cells = swapped(cells)
    face_entities = sorted({(e, g) for e, g, _ in faces})
    cell_entities = sorted({(e, g) for e, g, _ in cells})
    box = "0 0 0 3 2 0" if dim == 2 else "0 0 0 2 2 2"
    counts = [0, 0, 0, 0]
    counts[dim - 1] = len(face_entities)
    counts[dim] = len(cell_entities)
    lines = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$Entities", " ".join(map(str, counts))]
    for entities in (face_entities, cell_entities):
        for entity, group in entities:
            lines.append("%d %s 1 %d 0" % (entity, box, group))
    lines += ["$EndEntities", "$Nodes", "1 %d 1 %d" % (len(nodes), len(nodes)),
              "%d 1 0 %d" % (dim, len(nodes))]
    ordered = sorted(nodes.items(), key=lambda item: item[1])
    lines += [str(tag) for _, tag in ordered]
    lines += ["%g %g %g" % coords(key, dim) for key, _ in ordered]
    lines.append("$EndNodes")
    blocks = []
    for entity_dim, kind, entities, elements in (
            (dim - 1, 1 if dim == 2 else 2, face_entities, faces),
            (dim, 2 if dim == 2 else 4, cell_entities, cells)):
        for entity, group in entities:
            blocks.append((entity_dim, entity, kind,
                           [n for e, g, n in elements if (e, g) == (entity, group)]))
    total = sum(len(b[3]) for b in blocks)
    lines += ["$Elements", "%d %d 1 %d" % (len(blocks), total, total)]
    number = 1
    for entity_dim, entity, kind, elements in blocks:
        lines.append("%d %d %d %d" % (entity_dim, entity, kind, len(elements)))
        for n in elements:
            lines.append("%d %s" % (number, " ".join(map(str, n))))
            number += 1
    lines.append("$EndElements")
    open(path, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    for name, mesh in (("tris", tris()), ("tets", tets())):
        write22("tests/data/%s_22.msh" % name, mesh)
        write41("tests/data/%s_41.msh" % name, mesh)
