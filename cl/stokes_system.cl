/* The Crouzeix-Raviart (P1nc/P0) Stokes system's pattern and constant
 * values made on the device (lib/flow/stokes_system_device.c): viscosity,
 * the reaction's lumped mass, the pressure coupling and the identity rows of
 * the Dirichlet unknowns, no wind. lib/flow/stokes.c (stokes_pattern,
 * assemble_cell) is the reference: the same area and gradients
 * (clmg_p1_simplex), the same products, and every entry summed from 0 over
 * its cells in increasing cell order as the host's element loop adds them,
 * so the arrays are the host's bit for bit (no contraction into fused
 * multiply-adds, see the pragma).
 *
 * One work-item owns one row (stokes_system_rows): it gathers the row's
 * couplings from the cells of its edge (the edge-to-cell adjacency, cells
 * ascending), sorts them by column (stably: equal columns keep the host's
 * order of addition) and merges repeats. With fill 0 it writes the row's
 * length, with fill 1 its columns and values from row_ptr[i]; no two
 * work-items write the same place, so no floating-point atomics. */

#pragma OPENCL FP_CONTRACT OFF

/* A velocity row couples with at most 2 cells of its edge, per cell with 3
 * edges of its component, the cell's pressure and, with the Newton
 * pattern, 3 edges of the other component. */
#define STOKES_ROW_CAPACITY 14

/* Per triangle: its area and the gradients of its barycentric coordinates
 * (7 reals: area, then d lambda_c / dx, d lambda_c / dy for c = 0, 1, 2),
 * clmg_p1_simplex's arithmetic. bad: the smallest triangle that is
 * inverted or degenerate (left as it was when none is). */
kernel void stokes_cell_geometry(ulong cells, global const int *cell_vertices,
                                 global const real *coords, global real *geometry,
                                 global int *bad) {
  GRID_LOOP(k, cells) {
    const int v0 = cell_vertices[3 * k], v1 = cell_vertices[3 * k + 1],
              v2 = cell_vertices[3 * k + 2];
    const real x0 = coords[2 * v0], y0 = coords[2 * v0 + 1];
    const real e1x = coords[2 * v1] - x0, e1y = coords[2 * v1 + 1] - y0;
    const real e2x = coords[2 * v2] - x0, e2y = coords[2 * v2 + 1] - y0;
    const real det = e1x * e2y - e1y * e2x;
    const real area = det / 2.0;
    global real *g = geometry + 7 * k;
    g[0] = area;
    if (!(area > 0.0)) { /* refused: the rows' count pass reads zeros */
      atomic_min(bad, (int)k);
      for (int c = 1; c < 7; ++c)
        g[c] = 0.0;
      continue;
    }
    const real g1x = e2y / det, g1y = -e2x / det, g2x = -e1y / det, g2y = e1x / det;
    g[1] = -g1x - g2x;
    g[2] = -g1y - g2y;
    g[3] = g1x;
    g[4] = g1y;
    g[5] = g2x;
    g[6] = g2y;
  }
}

/* Row i of the system of num_edges edges (2 num_edges velocities, then one
 * pressure per cell): start and list the edge-to-cell adjacency (entries
 * 3 cell + local corner, ascending), dirichlet the 2 num_edges velocity flags,
 * newton: the Newton pattern (the other component on the edges of the
 * row's cells, values 0). too_many: set to the first edge with more than 2
 * cells seen (a triangle mesh's edge has at most 2). */
kernel void stokes_system_rows(ulong n, ulong num_edges, global const long *start,
                               global const long *list, global const int *cell_edges,
                               global const uint *dirichlet, uint newton, uint fill,
                               global uint *length, global const long *row_ptr, global int *col,
                               global real *val, global const real *geometry, real viscosity,
                               real reaction, global int *too_many) {
  GRID_LOOP(i, n) {
    int cols[STOKES_ROW_CAPACITY];
    real vals[STOKES_ROW_CAPACITY];
    uint count = 0;
    const ulong ne = num_edges;
    if (i < 2 * ne && dirichlet[i]) {
      cols[0] = (int)i;
      vals[0] = 1.0;
      count = 1;
    } else if (i < 2 * ne) {
      const ulong component = i >= ne, e = i - component * ne;
      const long begin = start[e], end = start[e + 1];
      if (end - begin > 2) {
        atomic_min(too_many, (int)e);
        if (!fill)
          length[i] = 0;
        continue;
      }
      for (long q = begin; q < end; ++q) {
        const long k = list[q] / 3;
        const int own = (int)(list[q] % 3);
        global const real *g = geometry + 7 * k;
        const real area = g[0], mass = area / 3.0;
        const real gx = g[1 + 2 * own], gy = g[2 + 2 * own];
        for (int j = 0; j < 3; ++j) {
          const ulong c = component * ne + (ulong)cell_edges[3 * k + j];
          if (dirichlet[c])
            continue;
          real value = 4.0 * viscosity * area * (gx * g[1 + 2 * j] + gy * g[2 + 2 * j]);
          if (j == own)
            value += reaction * mass;
          cols[count] = (int)c;
          vals[count++] = value;
        }
        cols[count] = (int)(2 * ne + (ulong)k);
        vals[count++] = 2.0 * area * (component ? gy : gx);
      }
      for (long q = begin; newton && q < end; ++q) {
        const long k = list[q] / 3;
        for (int j = 0; j < 3; ++j) {
          const ulong c = (1 - component) * ne + (ulong)cell_edges[3 * k + j];
          if (dirichlet[c])
            continue;
          cols[count] = (int)c;
          vals[count++] = 0.0;
        }
      }
    } else {
      const ulong k = i - 2 * ne;
      global const real *g = geometry + 7 * k;
      const real area = g[0];
      for (int component = 0; component < 2; ++component)
        for (int j = 0; j < 3; ++j) {
          const ulong c = component * ne + (ulong)cell_edges[3 * k + j];
          if (dirichlet[c])
            continue;
          cols[count] = (int)c;
          vals[count++] = 2.0 * area * g[1 + 2 * j + component];
        }
    }
    /* stable insertion sort by column, then repeats summed from 0 in the
     * order they were added */
    for (uint a = 1; a < count; ++a) {
      const int c = cols[a];
      const real v = vals[a];
      uint b = a;
      for (; b > 0 && cols[b - 1] > c; --b) {
        cols[b] = cols[b - 1];
        vals[b] = vals[b - 1];
      }
      cols[b] = c;
      vals[b] = v;
    }
    uint distinct = 0;
    const long out = fill ? row_ptr[i] : 0;
    real sum = 0.0;
    for (uint a = 0; a < count; ++a) {
      sum += vals[a];
      if (a + 1 < count && cols[a + 1] == cols[a])
        continue;
      if (fill) {
        col[out + distinct] = cols[a];
        val[out + distinct] = sum;
      }
      distinct++;
      sum = 0.0;
    }
    if (!fill)
      length[i] = distinct;
  }
}
