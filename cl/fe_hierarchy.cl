/* Geometric multigrid hierarchies of Q1/Q2 finite elements assembled on the
 * device (lib/fe/hierarchy_device.c): per level the CSR pattern of the
 * Poisson matrix after symmetric Dirichlet elimination, its values and right-hand side, and the prolongation from
 * nodal interpolation (Geveler et al. 2011, sections 2.3 and 3).
 *
 * The element matrices are computed once per cell (fe_element_matrices);
 * every other kernel owns rows: one work-item builds one row from the cells
 * around its DOF (fe_poisson_rows: its length, then its columns, values and
 * right-hand side), so no two work-items write the same place and no
 * floating-point atomics are needed. A row's cells come in increasing
 * order, so each entry sums its cells' contributions in the order of the
 * host reference (lib/fe/assembly.c), whose quadrature tables the element
 * matrices use.
 *
 * Build options: FE_DIM (2 or 3), FE_DOFS (DOFs per cell), FE_POINTS
 * (quadrature points per cell). The tables (weights, basis values and
 * gradients, the corners' gradients for the multilinear geometry) come from
 * the host, in the layout of TABLE_* below. */

#ifndef FE_DIM
#define FE_DIM 2
#endif
#ifndef FE_DOFS
#define FE_DOFS 4
#endif
#ifndef FE_POINTS
#define FE_POINTS 9
#endif
#define FE_CORNERS (1 << FE_DIM)

#define TABLE_WEIGHT(q) (q)
#define TABLE_PHI(q, i) (FE_POINTS + (q) * FE_DOFS + (i))
#define TABLE_DPHI(q, i, r) (FE_POINTS * (1 + FE_DOFS) + ((q) * FE_DOFS + (i)) * FE_DIM + (r))
#define TABLE_CORNER_DPHI(q, v, r)                                                                 \
  (FE_POINTS * (1 + FE_DOFS + FE_DOFS * FE_DIM) + ((q) * FE_CORNERS + (v)) * FE_DIM + (r))

/* ---- element matrices ---- */

/* What is kept per cell, FE_RECORD reals in a row: the upper triangle of
 * its symmetric element matrix, row by row ((i, j) with i <= j at
 * UPPER(i, j)), then its load vector (at FE_UPPER + i): what a row reads
 * of a cell lies together. */
#define FE_UPPER (FE_DOFS * (FE_DOFS + 1) / 2)
#define UPPER(i, j) ((i) * FE_DOFS - (i) * ((i) - 1) / 2 + ((j) - (i)))
#define FE_RECORD (FE_UPPER + FE_DOFS)

/* Cells a work-item computes at once: on CPUs (-DCLMG_CPU) a vector of
 * FE_LANES cells, so that each operation below is one SIMD instruction
 * (pocl does not vectorise the work-items' loops over their runs: the
 * scalar kernel took 37% of the hierarchy's kernel time on pocl); on GPUs
 * one cell, the work-items being the lanes. The arithmetic per lane is the
 * scalar one. */
#define FE_CAT_(a, b) a##b
#define FE_CAT(a, b) FE_CAT_(a, b)
#ifdef CLMG_CPU
#define FE_LANES 8
typedef FE_CAT(REAL, 8) fe_vreal;
#define FE_VLOAD(p) vload8(0, p)
#define FE_VSTORE(v, p) vstore8(v, 0, p)
#define FE_ANY_NOT_POSITIVE(det) any(!((det) > (fe_vreal)0))
#else
#define FE_LANES 1
typedef real fe_vreal;
#define FE_VLOAD(p) (*(p))
#define FE_VSTORE(v, p) (*(p) = (v))
#define FE_ANY_NOT_POSITIVE(det) (!((det) > 0))
#endif

/* The element matrices of cells first .. first + count - 1 (count <=
 * FE_LANES; the lanes past count repeat the last cell and are not
 * stored). Returns 0 when a cell has a non-positive Jacobian determinant. */
inline int element_block(ulong first, uint count, global const int *cell_vertices,
                         global const real *coords, global const real *table, real source,
                         global real *elements) {
  fe_vreal corner[FE_CORNERS][FE_DIM];
  for (int v = 0; v < FE_CORNERS; ++v)
    for (int a = 0; a < FE_DIM; ++a) {
      real lane[FE_LANES];
      for (uint l = 0; l < FE_LANES; ++l) {
        const ulong cell = first + min(l, count - 1);
        lane[l] = coords[(long)cell_vertices[cell * FE_CORNERS + v] * FE_DIM + a];
      }
      corner[v][a] = FE_VLOAD(lane);
    }
  fe_vreal upper[FE_UPPER], cell_load[FE_DOFS];
  for (int k = 0; k < FE_UPPER; ++k)
    upper[k] = 0;
  for (int i = 0; i < FE_DOFS; ++i)
    cell_load[i] = 0;
  int positive = 1;
  for (int q = 0; q < FE_POINTS; ++q) {
    fe_vreal jac[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int v = 0; v < FE_CORNERS; ++v)
      for (int a = 0; a < FE_DIM; ++a)
        for (int b = 0; b < FE_DIM; ++b)
          jac[a][b] += corner[v][a] * table[TABLE_CORNER_DPHI(q, v, b)];
    fe_vreal inv[3][3], det;
#if FE_DIM == 2
    det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
    inv[0][0] = jac[1][1] / det;
    inv[0][1] = -jac[0][1] / det;
    inv[1][0] = -jac[1][0] / det;
    inv[1][1] = jac[0][0] / det;
#else
    const fe_vreal c00 = jac[1][1] * jac[2][2] - jac[1][2] * jac[2][1];
    const fe_vreal c01 = jac[1][2] * jac[2][0] - jac[1][0] * jac[2][2];
    const fe_vreal c02 = jac[1][0] * jac[2][1] - jac[1][1] * jac[2][0];
    det = jac[0][0] * c00 + jac[0][1] * c01 + jac[0][2] * c02;
    inv[0][0] = c00 / det;
    inv[1][0] = c01 / det;
    inv[2][0] = c02 / det;
    inv[0][1] = (jac[0][2] * jac[2][1] - jac[0][1] * jac[2][2]) / det;
    inv[1][1] = (jac[0][0] * jac[2][2] - jac[0][2] * jac[2][0]) / det;
    inv[2][1] = (jac[0][1] * jac[2][0] - jac[0][0] * jac[2][1]) / det;
    inv[0][2] = (jac[0][1] * jac[1][2] - jac[0][2] * jac[1][1]) / det;
    inv[1][2] = (jac[0][2] * jac[1][0] - jac[0][0] * jac[1][2]) / det;
    inv[2][2] = (jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0]) / det;
#endif
    if (FE_ANY_NOT_POSITIVE(det))
      positive = 0;
    const fe_vreal scale = table[TABLE_WEIGHT(q)] * det;
    fe_vreal gradient[FE_DOFS][FE_DIM];
    for (int i = 0; i < FE_DOFS; ++i)
      for (int c = 0; c < FE_DIM; ++c) {
        fe_vreal sum = 0;
        for (int r = 0; r < FE_DIM; ++r)
          sum += inv[r][c] * table[TABLE_DPHI(q, i, r)];
        gradient[i][c] = sum;
      }
    for (int i = 0; i < FE_DOFS; ++i)
      for (int j = i; j < FE_DOFS; ++j) {
        fe_vreal dot = 0;
        for (int c = 0; c < FE_DIM; ++c)
          dot += gradient[i][c] * gradient[j][c];
        upper[UPPER(i, j)] += scale * dot;
      }
    const fe_vreal f = source * scale;
    for (int i = 0; i < FE_DOFS; ++i)
      cell_load[i] += f * table[TABLE_PHI(q, i)];
  }
  /* lane-major in private memory, then each cell's entries in a row */
  real lanes[FE_LANES];
  for (int k = 0; k < FE_UPPER; ++k) {
    FE_VSTORE(upper[k], lanes);
    for (uint l = 0; l < count; ++l)
      elements[(first + l) * FE_RECORD + k] = lanes[l];
  }
  for (int i = 0; i < FE_DOFS; ++i) {
    FE_VSTORE(cell_load[i], lanes);
    for (uint l = 0; l < count; ++l)
      elements[(first + l) * FE_RECORD + FE_UPPER + i] = lanes[l];
  }
  return positive;
}

/* The element stiffness matrix (upper triangle) and load vector of every
 * cell (FE_RECORD reals a cell), the geometry evaluated once per cell and
 * quadrature point as on the host; bad[0] = 1 marks a cell with a
 * non-positive Jacobian determinant. */
kernel void fe_element_matrices(ulong cells, global const int *cell_vertices,
                                global const real *coords, global const real *table, real source,
                                global real *elements, global int *bad) {
  int positive = 1;
#ifdef CLMG_CPU
  WORK_ITEM_RANGE(cells);
  for (ulong first = begin_; first < end_; first += FE_LANES)
    positive &= element_block(first, (uint)min((ulong)FE_LANES, end_ - first), cell_vertices,
                              coords, table, source, elements);
#else
  GRID_LOOP(cell, cells) {
    positive &= element_block(cell, 1, cell_vertices, coords, table, source, elements);
  }
#endif
  if (!positive)
    bad[0] = 1;
}

/* ---- the rows: pattern, values and right-hand side ---- */

/* The smallest DOF above `last` that shares a cell with DOF i and is not
 * eliminated (INT_MAX when none is left): walking this from -1 lists the
 * row's columns in order without a scratch array. */
inline int next_column(long begin, long end, global const long *list,
                       global const int *cell_dofs, global const uint *eliminated, int last) {
  int next = INT_MAX;
  for (long k = begin; k < end; ++k) {
    global const int *dofs = cell_dofs + (list[k] / FE_DOFS) * FE_DOFS;
    for (int j = 0; j < FE_DOFS; ++j) {
      const int c = dofs[j];
      if (c > last && c < next && !eliminated[c])
        next = c;
    }
  }
  return next;
}

/* Rows of DOFs in at most this many cells (every DOF of a regular mesh:
 * 4 quadrilaterals, 8 hexahedra) gather their columns once into a private
 * sorted list; DOFs in more cells walk next_column instead. */
#define FE_PRIVATE_CELLS 8

/* Position of column c in the sorted row [begin, end) (it is there: the
 * pattern comes from the same cells). */
inline long find_column(global const int *col, long begin, long end, int c) {
  while (begin < end) {
    const long middle = begin + (end - begin) / 2;
    if (col[middle] < c)
      begin = middle + 1;
    else
      end = middle;
  }
  return begin;
}

/* The rows of the matrix, a work-item a row: their lengths (fill == 0),
 * or (fill == 1) their columns and values from the element matrices and,
 * when want_b, b = the element loads + the source's integral (has_load) -
 * the eliminated columns times g, and x0 = g on eliminated rows, 0
 * elsewhere. An eliminated (Dirichlet) DOF keeps its diagonal (1) only; the
 * others lose the eliminated columns. Each entry sums its cells in
 * increasing order, as the host does; the values are summed in the sorted
 * list the columns are gathered in, without searching the row for each
 * contribution. */
kernel void fe_poisson_rows(ulong n, global const long *start, global const long *list,
                            global const int *cell_dofs, global const uint *eliminated, uint fill,
                            global uint *length, global const long *row_ptr, global int *col,
                            global real *val, global const real *elements, global const real *g,
                            uint want_b, uint has_load, global const real *load, global real *b,
                            global real *x0) {
  GRID_LOOP(i, n) {
    if (eliminated[i]) {
      if (!fill) {
        length[i] = 1;
        continue;
      }
      col[row_ptr[i]] = (int)i;
      val[row_ptr[i]] = 1;
      if (want_b) {
        b[i] = g[i];
        x0[i] = g[i];
      }
      continue;
    }
    const long begin = start[i], end = start[i + 1];
    uint count = 0;
    real rhs = 0;
    if (end - begin <= FE_PRIVATE_CELLS) {
      int sorted[FE_PRIVATE_CELLS * FE_DOFS];
      real sums[FE_PRIVATE_CELLS * FE_DOFS], diagonal = 0;
      for (long e = begin; e < end; ++e) {
        const long cell = list[e] / FE_DOFS;
        const int node = (int)(list[e] % FE_DOFS);
        global const int *dofs = cell_dofs + cell * FE_DOFS;
        global const real *record = elements + cell * FE_RECORD;
        if (fill) {
          rhs += record[FE_UPPER + node];
          diagonal += record[UPPER(node, node)];
        }
        for (int j = 0; j < FE_DOFS; ++j) {
          if (j == node) /* DOF i itself: the diagonal, placed at the end */
            continue;
          const int c = dofs[j];
          const real value =
              fill ? (j >= node ? record[UPPER(node, j)] : record[UPPER(j, node)]) : 0;
          if (eliminated[c]) {
            if (fill && want_b)
              rhs -= value * g[c];
            continue;
          }
          uint p = count;
          while (p > 0 && sorted[p - 1] > c)
            --p;
          if (p > 0 && sorted[p - 1] == c) {
            --p;
          } else if (fill) {
            for (uint q = count; q > p; --q) {
              sorted[q] = sorted[q - 1];
              sums[q] = sums[q - 1];
            }
            sorted[p] = c;
            sums[p] = 0;
            ++count;
          } else { /* counting moves no sums */
            for (uint q = count; q > p; --q)
              sorted[q] = sorted[q - 1];
            sorted[p] = c;
            ++count;
          }
          if (fill)
            sums[p] += value;
        }
      }
      if (fill) {
        uint p = count;
        while (p > 0 && sorted[p - 1] > (int)i)
          --p;
        for (uint q = count; q > p; --q) {
          sorted[q] = sorted[q - 1];
          sums[q] = sums[q - 1];
        }
        sorted[p] = (int)i;
        sums[p] = diagonal;
        for (uint k = 0; k <= count; ++k) {
          col[row_ptr[i] + k] = sorted[k];
          val[row_ptr[i] + k] = sums[k];
        }
      }
      ++count; /* the diagonal */
    } else {
      int column = next_column(begin, end, list, cell_dofs, eliminated, -1);
      while (column != INT_MAX) {
        if (fill)
          col[row_ptr[i] + count] = column;
        ++count;
        column = next_column(begin, end, list, cell_dofs, eliminated, column);
      }
      /* the values by search in the columns just written (rare rows) */
      const long row_begin = fill ? row_ptr[i] : 0, row_end = row_begin + count;
      for (long k = row_begin; fill && k < row_end; ++k)
        val[k] = 0;
      for (long e = begin; fill && e < end; ++e) {
        const long cell = list[e] / FE_DOFS;
        const int node = (int)(list[e] % FE_DOFS);
        global const real *record = elements + cell * FE_RECORD;
        global const int *dofs = cell_dofs + cell * FE_DOFS;
        rhs += record[FE_UPPER + node];
        for (int j = 0; j < FE_DOFS; ++j) {
          const real value = j >= node ? record[UPPER(node, j)] : record[UPPER(j, node)];
          const int c = dofs[j];
          if (eliminated[c]) {
            if (want_b)
              rhs -= value * g[c];
          } else {
            val[find_column(col, row_begin, row_end, c)] += value;
          }
        }
      }
    }
    if (!fill) {
      length[i] = count;
    } else if (want_b) {
      b[i] = rhs + (has_load ? load[i] : 0);
      x0[i] = 0;
    }
  }
}

/* ---- prolongation ---- */

/* Row i of P: coarse basis function j of the parent of fine cell f at the
 * fine node (f, node), from the host's table (children x FE_DOFS x FE_DOFS
 * values, already without rounding noise: 0 there); fine Dirichlet rows are
 * empty and coarse Dirichlet columns dropped. Lengths (fill == 0) or sorted
 * columns and values (fill == 1). */
kernel void fe_prolongation(ulong n, global const long *start, global const long *list,
                            global const uint *fine_eliminated, global const int *coarse_cell_dofs,
                            global const uint *coarse_eliminated, global const real *transfer,
                            uint fill, global uint *length, global const long *row_ptr,
                            global int *col, global real *val) {
  GRID_LOOP(i, n) {
    uint count = 0;
    int columns[FE_DOFS];
    real values[FE_DOFS];
    if (!fine_eliminated[i]) {
      const long source = list[start[i]]; /* the first cell that meets DOF i */
      const long fine_cell = source / FE_DOFS;
      const int node = (int)(source % FE_DOFS);
      const long parent = fine_cell / FE_CORNERS;
      const int child = (int)(fine_cell % FE_CORNERS);
      global const real *weights = transfer + ((long)child * FE_DOFS + node) * FE_DOFS;
      global const int *dofs = coarse_cell_dofs + parent * FE_DOFS;
      for (int j = 0; j < FE_DOFS; ++j) {
        const int c = dofs[j];
        if (weights[j] == 0 || coarse_eliminated[c])
          continue;
        uint p = count++;
        while (p > 0 && columns[p - 1] > c) {
          columns[p] = columns[p - 1];
          values[p] = values[p - 1];
          --p;
        }
        columns[p] = c;
        values[p] = weights[j];
      }
    }
    if (fill) {
      for (uint k = 0; k < count; ++k) {
        col[row_ptr[i] + k] = columns[k];
        val[row_ptr[i] + k] = values[k];
      }
    } else {
      length[i] = count;
    }
  }
}
