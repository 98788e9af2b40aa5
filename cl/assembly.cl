/* P1 assembly of the Helmholtz problem on simplices (lib/fe/p1_assembly_device.c),
 * after the patch scheme of Fu et al. 2014, section 4. Built with
 * -DP1_DIM=2 or 3, and -DP1_LOCAL_ATOMICS where the device can add reals
 * atomically in local memory (always for float, cl_khr_int64_base_atomics
 * for double).
 *
 * Device arrays, structure of arrays so that neighbouring work-items read
 * neighbouring words:
 *   coords[c * num_vertices + v]   coordinate c of vertex v
 *   cell_vertex[k * num_cells + e] vertex k of cell e (cells ordered by patch)
 *   cell_slot[e]                   first slot of cell e's entries that go
 *                                  through global memory
 *   cell_material[e]               index into sigma_table (has_material)
 * A cell's rows that go through slots are numbered in local vertex order;
 * row r of them owns P1_STRIDE slots from cell_slot[e] + r * P1_STRIDE: its
 * P1_CORNERS matrix entries, then its load. */

#define P1_CORNERS (P1_DIM + 1)
#define P1_STRIDE (P1_DIM + 2)

/* Volume of the cell and gradients of its barycentric coordinates: the rows
 * of the inverse of [x1 - x0, ..., xd - x0], the first one minus their sum
 * (the host's clmg_p1_simplex). */
inline real p1_geometry(const real x[P1_CORNERS][P1_DIM], real g[P1_CORNERS][P1_DIM]) {
#if P1_DIM == 2
  const real e1x = x[1][0] - x[0][0], e1y = x[1][1] - x[0][1];
  const real e2x = x[2][0] - x[0][0], e2y = x[2][1] - x[0][1];
  const real det = e1x * e2y - e1y * e2x;
  g[1][0] = e2y / det;
  g[1][1] = -e2x / det;
  g[2][0] = -e1y / det;
  g[2][1] = e1x / det;
  g[0][0] = -g[1][0] - g[2][0];
  g[0][1] = -g[1][1] - g[2][1];
  return det / 2;
#else
  real e[3][3], cross[3][3];
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c)
      e[k][c] = x[k + 1][c] - x[0][c];
  for (int k = 0; k < 3; ++k) {
    const int p = (k + 1) % 3, q = (k + 2) % 3;
    cross[k][0] = e[p][1] * e[q][2] - e[p][2] * e[q][1];
    cross[k][1] = e[p][2] * e[q][0] - e[p][0] * e[q][2];
    cross[k][2] = e[p][0] * e[q][1] - e[p][1] * e[q][0];
  }
  const real det = e[0][0] * cross[0][0] + e[0][1] * cross[0][1] + e[0][2] * cross[0][2];
  for (int c = 0; c < 3; ++c) {
    g[0][c] = 0;
    for (int k = 0; k < 3; ++k) {
      g[k + 1][c] = cross[k][c] / det;
      g[0][c] -= g[k + 1][c];
    }
  }
  return det / 6;
#endif
}

/* Cell e's vertices, the gradients of its barycentric coordinates, its
 * volume and sigma: what every entry of its element matrix needs. */
inline real p1_cell(ulong e, ulong num_cells, global const int *cell_vertex,
                    global const int *cell_material, uint has_material,
                    global const real *sigma_table, global const real *coords, ulong num_vertices,
                    int v[P1_CORNERS], real g[P1_CORNERS][P1_DIM], real *sigma) {
  real x[P1_CORNERS][P1_DIM];
  for (int k = 0; k < P1_CORNERS; ++k) {
    v[k] = cell_vertex[k * num_cells + e];
    for (int c = 0; c < P1_DIM; ++c)
      x[k][c] = coords[c * num_vertices + v[k]];
  }
  *sigma = sigma_table[has_material ? cell_material[e] : 0];
  return p1_geometry(x, g);
}

/* Entry (k, l) of A^e = sigma S^e + lambda M^e (the host's clmg_p1_element). */
inline real p1_entry(const real g[P1_CORNERS][P1_DIM], real volume, real sigma, real lambda, int k,
                     int l) {
  const real mass = volume / ((P1_DIM + 1) * (P1_DIM + 2));
  real dot = 0;
  for (int c = 0; c < P1_DIM; ++c)
    dot += g[k][c] * g[l][c];
  return sigma * volume * dot + lambda * mass * (k == l ? 2 : 1);
}

/* Cell e's vertices, element matrix A^e and load b^e of f = 1. */
inline void p1_element(ulong e, ulong num_cells, global const int *cell_vertex,
                       global const int *cell_material, uint has_material,
                       global const real *sigma_table, real lambda, global const real *coords,
                       ulong num_vertices, int v[P1_CORNERS], real a[P1_CORNERS][P1_CORNERS],
                       real load[P1_CORNERS]) {
  real g[P1_CORNERS][P1_DIM], sigma;
  const real volume = p1_cell(e, num_cells, cell_vertex, cell_material, has_material, sigma_table,
                              coords, num_vertices, v, g, &sigma);
  for (int k = 0; k < P1_CORNERS; ++k) {
    for (int l = 0; l < P1_CORNERS; ++l)
      a[k][l] = p1_entry(g, volume, sigma, lambda, k, l);
    load[k] = volume / P1_CORNERS;
  }
}

/* The rows path: work-item i owns row i and sums, cell by cell in the
 * order of row_cells (increasing cell), that cell's row of A^e into its
 * CSR entries (found by binary search in the sorted row) and its load into
 * b[i]. Each entry has one writer and a fixed order of terms: no atomics,
 * no slots, and the same sums on every run. row_cells[t] = cell *
 * P1_CORNERS + the row's local vertex in the cell. The rows are the
 * vertices (num_rows = num_vertices). */
kernel void p1_rows(ulong num_cells, global const int *cell_vertex, global const uint *cell_slot,
                    global const int *cell_material, uint has_material,
                    global const real *sigma_table, real lambda, global const real *coords,
                    ulong num_rows, global const uint *row_cells_start,
                    global const uint *row_cells, global const long *row_ptr,
                    global const int *col, global real *values, global real *b, ulong b_offset,
                    uint with_b) {
  (void)cell_slot; /* the element kernels' common arguments; rows use no slots */
  GRID_LOOP(i, num_rows) {
    const long begin = row_ptr[i], end = row_ptr[i + 1];
    for (long k = begin; k < end; ++k)
      values[k] = 0;
    real load = 0;
    for (uint t = row_cells_start[i]; t < row_cells_start[i + 1]; ++t) {
      const uint entry = row_cells[t];
      const ulong e = entry / P1_CORNERS;
      const int place = (int)(entry % P1_CORNERS);
      int v[P1_CORNERS];
      real g[P1_CORNERS][P1_DIM], sigma;
      const real volume = p1_cell(e, num_cells, cell_vertex, cell_material, has_material,
                                  sigma_table, coords, num_rows, v, g, &sigma);
      for (int l = 0; l < P1_CORNERS; ++l) {
        long low = begin, high = end - 1;
        while (low < high) {
          const long middle = (low + high) / 2;
          if (col[middle] < v[l])
            low = middle + 1;
          else
            high = middle;
        }
        values[low] += p1_entry(g, volume, sigma, lambda, place, l);
      }
      load += volume / P1_CORNERS;
    }
    if (with_b)
      b[b_offset + i] = load;
  }
}

/* The gather path: every entry of cell e to its slots (cell_slot[e] =
 * e * P1_CORNERS * P1_STRIDE), one work-item per cell, no atomics. */
kernel void p1_cell_slots(ulong num_cells, global const int *cell_vertex,
                          global const uint *cell_slot, global const int *cell_material,
                          uint has_material, global const real *sigma_table, real lambda,
                          global const real *coords, ulong num_vertices, global real *slots) {
  GRID_LOOP(e, num_cells) {
    int v[P1_CORNERS];
    real a[P1_CORNERS][P1_CORNERS], load[P1_CORNERS];
    p1_element(e, num_cells, cell_vertex, cell_material, has_material, sigma_table, lambda, coords,
               num_vertices, v, a, load);
    global real *s = slots + cell_slot[e];
    for (int k = 0; k < P1_CORNERS; ++k, s += P1_STRIDE) {
      for (int l = 0; l < P1_CORNERS; ++l)
        s[l] = a[k][l];
      s[P1_CORNERS] = load[k];
    }
  }
}

/* target[position j] (= position[j], or j when identity) gets the sum of
 * its slots slot_index[first[j] .. first[j + 1]), added to what it holds
 * when accumulate. One work-item per target entry: no races. */
kernel void p1_gather(ulong count, global const long *position, uint identity,
                      global const uint *first, global const uint *slot_index,
                      global const real *slots, global real *target, ulong target_offset,
                      uint accumulate) {
  target += target_offset;
  GRID_LOOP(j, count) {
    real sum = 0;
    for (uint k = first[j]; k < first[j + 1]; ++k)
      sum += slots[slot_index[k]];
    const ulong p = identity ? j : (ulong)position[j];
    target[p] = accumulate ? target[p] + sum : sum;
  }
}

/* Symmetric elimination of u = 0 on the vertices with mask[v] != 0: their
 * rows and columns become those of the identity, b is 0 there. */
kernel void p1_dirichlet(ulong rows, global const long *row_ptr, global const int *col,
                         global const uint *mask, global real *values, global real *b,
                         ulong b_offset, uint has_b) {
  GRID_LOOP(i, rows) {
    const uint own = mask[i];
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (own || mask[col[k]])
        values[k] = col[k] == (int)i ? 1 : 0;
    if (has_b && own)
      b[b_offset + i] = 0;
  }
}

#ifdef P1_LOCAL_ATOMICS
/* Reals in local memory are kept as words of their size, for the atomic
 * compare-and-swap: OpenCL 1.2 has no atomic add of reals. */
#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef ulong word;
#define AS_REAL(w) as_double(w)
#define AS_WORD(r) as_ulong(r)
#define CMPXCHG atom_cmpxchg
#else
typedef uint word;
#define AS_REAL(w) as_float(w)
#define AS_WORD(r) as_uint(r)
#define CMPXCHG atomic_cmpxchg
#endif

inline void local_add(volatile local word *p, real value) {
  word old = *p, assumed;
  do {
    assumed = old;
    old = CMPXCHG(p, assumed, AS_WORD(AS_REAL(assumed) + value));
  } while (old != assumed);
}

/* The first k in [low, high) with columns[k] >= j: j's place in its row. */
inline uint find_column(local const int *columns, uint low, uint high, int j) {
  while (low < high) {
    const uint middle = (low + high) / 2;
    if (columns[middle] < j)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

/* One work-group per patch: rows [first_row[p], first_row[p + 1]) and cells
 * [first_cell[p], first_cell[p + 1]). The patch's values, loads, columns
 * and row offsets live in local memory (scratch: as many bytes as the
 * largest patch needs) while the cells accumulate into
 * them; entries of rows outside the patch go to the cell's slots. The
 * patch's values and loads are then written back contiguously (every row
 * belongs to one patch: the write-back overwrites, p1_gather adds the slots
 * afterwards). */
kernel void p1_patch_assemble(global const uint *first_row, global const uint *first_cell,
                              ulong num_cells, global const int *cell_vertex,
                              global const uint *cell_slot, global const int *cell_material,
                              uint has_material, global const real *sigma_table, real lambda,
                              global const real *coords, ulong num_vertices,
                              global const long *row_ptr, global const int *col,
                              global real *values, global real *b, ulong b_offset, uint compute_b,
                              global real *slots, local word *scratch) {
  const uint p = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  const uint row0 = first_row[p], rows = first_row[p + 1] - row0;
  const long base = row_ptr[row0];
  const uint entries = (uint)(row_ptr[row0 + rows] - base);
  /* the patch's share of local memory, words first (alignment) */
  local word *local_val = scratch, *local_load = scratch + entries;
  local int *local_col = (local int *)(local_load + rows);
  local uint *local_offset = (local uint *)(local_col + entries);
  for (uint t = lid; t < entries; t += size) {
    local_col[t] = col[base + t];
    local_val[t] = AS_WORD((real)0);
  }
  for (uint r = lid; r <= rows; r += size)
    local_offset[r] = (uint)(row_ptr[row0 + r] - base);
  for (uint r = lid; r < rows; r += size)
    local_load[r] = AS_WORD((real)0);
  barrier(CLK_LOCAL_MEM_FENCE);

  for (uint e = first_cell[p] + lid; e < first_cell[p + 1]; e += size) {
    int v[P1_CORNERS];
    real a[P1_CORNERS][P1_CORNERS], load[P1_CORNERS];
    p1_element(e, num_cells, cell_vertex, cell_material, has_material, sigma_table, lambda, coords,
               num_vertices, v, a, load);
    global real *s = slots + cell_slot[e];
    for (int k = 0; k < P1_CORNERS; ++k) {
      const uint row = (uint)v[k] - row0; /* wraps below row0: outside */
      if (row < rows) {
        const uint low = local_offset[row], high = local_offset[row + 1];
        for (int l = 0; l < P1_CORNERS; ++l)
          local_add(local_val + find_column(local_col, low, high, v[l]), a[k][l]);
        if (compute_b)
          local_add(local_load + row, load[k]);
      } else {
        for (int l = 0; l < P1_CORNERS; ++l)
          s[l] = a[k][l];
        s[P1_CORNERS] = load[k];
        s += P1_STRIDE;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  for (uint t = lid; t < entries; t += size)
    values[base + t] = AS_REAL(local_val[t]);
  if (compute_b)
    for (uint r = lid; r < rows; r += size)
      b[b_offset + row0 + r] = AS_REAL(local_load[r]);
}
#endif
