/* Vanka smoothing (lib/solve/smoothers/vanka.c): block Gauss-Seidel over
 * the cells of a saddle-point system, colour by colour, as in Bauer,
 * Klement, Oberhuber and Zabka, "Implementation of the Vanka-type multigrid
 * solver for the finite element approximation of the Navier-Stokes
 * equations on GPU" (section 5.4). The cells of one colour share no
 * unknown. A colour takes two launches: vanka_correction gives every cell
 * of the colour its local correction d = A_KK^-1 (b - A x)_K from the x of
 * before the colour (the paper's rule: old off-cell values within a
 * colour), written aside; vanka_update then adds omega d to x, where no two
 * cells of the colour meet.
 *
 * A cell's VANKA_BLOCK unknowns, stored inverses and corrections are laid
 * out by colour and, within a colour, entry-major (entry j of cell c at
 * j * count + c): work-items of neighbouring cells read neighbouring words
 * (on CPUs the inverses are per cell: VANKA_INVERSE).
 * The matrix rows of a cell's unknowns are packed per cell the same way
 * (the paper's "GPU specific redundant data ... to achieve coalesced
 * accesses"): row j of cell c has VANKA_ROW_SLOTS slots (VANKA_SLOT), a
 * column and a value each, short rows
 * padded with value 0 at the row's own unknown; vanka_pack refills the
 * values from the CSR values at every setup. A work-item's loads of one
 * slot then sit next to its neighbours' instead of in scattered CSR rows.
 * Stored inverses (SI) are made by vanka_inverses at every setup and read;
 * without them (NSI) each work-item extracts A_KK from its packed rows and
 * solves by Gaussian elimination with partial pivoting, skipping a pivot
 * that the host would have skipped (an unknown the cell cannot move). */

#ifndef VANKA_BLOCK
#define VANKA_BLOCK 7
#endif
#ifndef VANKA_ROW_SLOTS
#define VANKA_ROW_SLOTS 7
#endif

/* Slot s of row j of the cell at position `cell` of a colour of `count`:
 * entry-major on GPUs (neighbouring work-items, neighbouring words), a
 * cell's slots together on CPUs (-DCLMG_CPU: a work-item walks a run of
 * cells, so its reads stream; entry-major ran the sweep 1.6x slower on
 * pocl). lib/solve/smoothers/vanka.c packs by the same rule. */
#ifdef CLMG_CPU
#define VANKA_SLOT(j, s, cell, count) (((cell) * VANKA_BLOCK + (j)) * VANKA_ROW_SLOTS + (s))
#else
#define VANKA_SLOT(j, s, cell, count) (((j) * VANKA_ROW_SLOTS + (s)) * (count) + (cell))
#endif

/* Entry (i, j) of the stored inverse of the cell at position `cell` of a
 * colour, by the same rule: a cell's 49 entries together on CPUs (the
 * entry-major layout made vanka_inverses write, and the sweep read, one
 * cache line per entry there), entry-major on GPUs. */
#ifdef CLMG_CPU
#define VANKA_INVERSE(i, j, cell, count) (((cell) * VANKA_BLOCK + (i)) * VANKA_BLOCK + (j))
#else
#define VANKA_INVERSE(i, j, cell, count) (((i) * VANKA_BLOCK + (j)) * (count) + (cell))
#endif

/* The packed values from the CSR values: slot k takes val[source[k]], a
 * padding slot (source -1) 0. */
kernel void vanka_pack(ulong n, global const long *source, global const real *val,
                       global real *packed) {
  GRID_LOOP(k, n) {
    const long from = source[k];
    packed[k] = from >= 0 ? val[from] : (real)0;
  }
}

/* The block A_KK from the cell's packed rows (a padding slot adds 0). */
inline void vanka_block(const int *unknowns, ulong cell, ulong count, global const int *col,
                        global const real *val, real m[VANKA_BLOCK][VANKA_BLOCK]) {
  for (int i = 0; i < VANKA_BLOCK; ++i) {
    for (int j = 0; j < VANKA_BLOCK; ++j)
      m[i][j] = 0;
    for (int s = 0; s < VANKA_ROW_SLOTS; ++s) {
      const ulong k = VANKA_SLOT(i, s, cell, count);
      for (int j = 0; j < VANKA_BLOCK; ++j)
        if (col[k] == unknowns[j])
          m[i][j] += val[k];
    }
  }
}

/* Forward elimination with partial pivoting of m (overwritten), applied to
 * `rhs` right-hand sides held row by row (r[a * rhs + i]: row a of right-hand
 * side i; one right-hand side is a plain vector). skipped[c]: column c's
 * best pivot is at most VANKA_TINY times the block's largest entry, and its
 * unknown is left unchanged (0), as the host does. Each right-hand side
 * sees the same operations in the same order whatever `rhs` is. */
inline void vanka_eliminate(real m[VANKA_BLOCK][VANKA_BLOCK], real *r, const int rhs,
                            int *skipped) {
  real largest = 0;
  for (int i = 0; i < VANKA_BLOCK; ++i)
    for (int j = 0; j < VANKA_BLOCK; ++j)
      largest = fmax(largest, fabs(m[i][j]));
  const real tiny = (real)VANKA_TINY * largest;
  for (int c = 0; c < VANKA_BLOCK; ++c) {
    int pivot = c;
    for (int i = c + 1; i < VANKA_BLOCK; ++i)
      if (fabs(m[i][c]) > fabs(m[pivot][c]))
        pivot = i;
    skipped[c] = !(fabs(m[pivot][c]) > tiny);
    if (skipped[c])
      continue;
    if (pivot != c) {
      for (int j = 0; j < VANKA_BLOCK; ++j) {
        const real t = m[c][j];
        m[c][j] = m[pivot][j];
        m[pivot][j] = t;
      }
      for (int i = 0; i < rhs; ++i) {
        const real t = r[c * rhs + i];
        r[c * rhs + i] = r[pivot * rhs + i];
        r[pivot * rhs + i] = t;
      }
    }
    for (int a = c + 1; a < VANKA_BLOCK; ++a) {
      const real factor = m[a][c] / m[c][c];
      for (int j = c; j < VANKA_BLOCK; ++j)
        m[a][j] -= factor * m[c][j];
      for (int i = 0; i < rhs; ++i)
        r[a * rhs + i] -= factor * r[c * rhs + i];
    }
  }
}

/* d = the solution for right-hand side i of vanka_eliminate's system. */
inline void vanka_back_substitute(real m[VANKA_BLOCK][VANKA_BLOCK], const int *skipped,
                                  const real *r, const int rhs, const int i, real *d) {
  for (int c = VANKA_BLOCK - 1; c >= 0; --c) {
    if (skipped[c]) {
      d[c] = 0;
      continue;
    }
    real sum = r[c * rhs + i];
    for (int j = c + 1; j < VANKA_BLOCK; ++j)
      sum -= m[c][j] * d[j];
    d[c] = sum / m[c][c];
  }
}

/* d = m^-1 r by elimination with partial pivoting (m and r overwritten); a
 * column whose best pivot is at most VANKA_TINY times the block's largest
 * entry leaves its unknown unchanged (d = 0 there), as the host does. */
inline void vanka_solve_block(real m[VANKA_BLOCK][VANKA_BLOCK], real *r, real *d) {
  int skipped[VANKA_BLOCK];
  vanka_eliminate(m, r, 1, skipped);
  vanka_back_substitute(m, skipped, r, 1, 0, d);
}

/* The stored inverses of the `count` cells of one colour (Algorithm 1 of
 * Bauer et al., by elimination): column i of A_KK^-1 solves A_KK d = e_i.
 * One elimination carries the identity's columns along: each column sees
 * the operations vanka_solve_block does on its right-hand side (the same
 * pivots, skipped columns and factors, which depend on A_KK only), so the
 * inverse is the seven solves' bit for bit at a seventh of the
 * elimination. */
kernel void vanka_inverses(ulong first, ulong count, global const int *cell_unknowns,
                           global const int *col, global const real *val, global real *inverse) {
  cell_unknowns += first * VANKA_BLOCK;
  col += first * VANKA_BLOCK * VANKA_ROW_SLOTS;
  val += first * VANKA_BLOCK * VANKA_ROW_SLOTS;
  inverse += first * VANKA_BLOCK * VANKA_BLOCK;
  GRID_LOOP(cell, count) {
    int unknowns[VANKA_BLOCK];
    for (int j = 0; j < VANKA_BLOCK; ++j)
      unknowns[j] = cell_unknowns[j * count + cell];
    real m[VANKA_BLOCK][VANKA_BLOCK], r[VANKA_BLOCK][VANKA_BLOCK];
    vanka_block(unknowns, cell, count, col, val, m);
    for (int a = 0; a < VANKA_BLOCK; ++a)
      for (int i = 0; i < VANKA_BLOCK; ++i)
        r[a][i] = a == i ? (real)1 : (real)0;
    /* one elimination for the seven columns (row a of r: r[a][i] of column i) */
    int skipped[VANKA_BLOCK];
    vanka_eliminate(m, &r[0][0], VANKA_BLOCK, skipped);
    for (int i = 0; i < VANKA_BLOCK; ++i) {
      real d[VANKA_BLOCK];
      vanka_back_substitute(m, skipped, &r[0][0], VANKA_BLOCK, i, d);
      for (int row = 0; row < VANKA_BLOCK; ++row)
        inverse[VANKA_INVERSE(row, i, cell, count)] = d[row];
    }
  }
}

/* The corrections of the `count` cells of one colour, which starts at cell
 * `first` of the colour order (stored == 0: NSI, inverse is not read). */
/* The local correction d = A_KK^-1 (b - A x)_K of the cell at position
 * `cell` of a colour of `count` cells into `correction` (cell_unknowns,
 * col, val and inverse at the colour's first cell). */
inline void vanka_cell_correction(ulong cell, ulong count, global const int *cell_unknowns,
                                  global const int *col, global const real *val,
                                  global const real *inverse, uint stored, global const real *b,
                                  global const real *x, global real *correction) {
  int unknowns[VANKA_BLOCK];
  real r[VANKA_BLOCK], d[VANKA_BLOCK];
  for (int j = 0; j < VANKA_BLOCK; ++j) {
    unknowns[j] = cell_unknowns[j * count + cell];
    real sum = b[unknowns[j]];
    for (int s = 0; s < VANKA_ROW_SLOTS; ++s) {
      const ulong k = VANKA_SLOT(j, s, cell, count);
      sum -= val[k] * x[col[k]];
    }
    r[j] = sum;
  }
  if (stored) {
    for (int i = 0; i < VANKA_BLOCK; ++i) {
      real sum = 0;
      for (int j = 0; j < VANKA_BLOCK; ++j)
        sum += inverse[VANKA_INVERSE(i, j, cell, count)] * r[j];
      d[i] = sum;
    }
  } else {
    real m[VANKA_BLOCK][VANKA_BLOCK];
    vanka_block(unknowns, cell, count, col, val, m);
    vanka_solve_block(m, r, d);
  }
  for (int j = 0; j < VANKA_BLOCK; ++j)
    correction[j * count + cell] = d[j];
}

/* x += omega d on the cell at position `cell` of a colour of `count`. */
inline void vanka_cell_update(ulong cell, ulong count, global const int *cell_unknowns,
                              global const real *correction, real omega, global real *x) {
  for (int j = 0; j < VANKA_BLOCK; ++j)
    x[cell_unknowns[j * count + cell]] += omega * correction[j * count + cell];
}

kernel void vanka_correction(ulong first, ulong count, global const int *cell_unknowns,
                             global const int *col, global const real *val,
                             global const real *inverse, uint stored, global const real *b,
                             ulong b_offset, global const real *x, ulong x_offset,
                             global real *correction) {
  b += b_offset;
  x += x_offset;
  cell_unknowns += first * VANKA_BLOCK;
  col += first * VANKA_BLOCK * VANKA_ROW_SLOTS;
  val += first * VANKA_BLOCK * VANKA_ROW_SLOTS;
  inverse += first * VANKA_BLOCK * VANKA_BLOCK;
  GRID_LOOP(cell, count) {
    vanka_cell_correction(cell, count, cell_unknowns, col, val, inverse, stored, b, x, correction);
  }
}

/* x += omega d on the cells of one colour. */
kernel void vanka_update(ulong first, ulong count, global const int *cell_unknowns,
                         global const real *correction, real omega, global real *x,
                         ulong x_offset) {
  x += x_offset;
  cell_unknowns += first * VANKA_BLOCK;
  GRID_LOOP(cell, count) {
    vanka_cell_update(cell, count, cell_unknowns, correction, omega, x);
  }
}

/* A small smoother's whole application in ONE launch of one work-group
 * (lib/solve/smoothers/vanka.c runs it where the cells are at most the
 * device's tail_rows, as the coarse tail runs small levels): x = 0 first
 * when `zero` (n entries), then `steps` sweeps, each colour by colour as
 * vanka_correction and vanka_update do it, the group's barriers in place of
 * the launches between them. colour_start: num_colours + 1 offsets. The
 * arithmetic is that of the two kernels, cell by cell. */
kernel void vanka_sweeps(uint steps, uint num_colours, global const ulong *colour_start,
                         global const int *cell_unknowns, global const int *col,
                         global const real *val, global const real *inverse, uint stored,
                         global const real *b, ulong b_offset, global real *x, ulong x_offset,
                         global real *correction, real omega, uint zero, ulong n) {
  b += b_offset;
  x += x_offset;
  const ulong item = get_local_id(0), items = get_local_size(0);
  if (zero) {
    for (ulong i = item; i < n; i += items)
      x[i] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  for (uint step = 0; step < steps; ++step)
    for (uint k = 0; k < num_colours; ++k) {
      const ulong first = colour_start[k], count = colour_start[k + 1] - first;
      global const int *unknowns = cell_unknowns + first * VANKA_BLOCK;
      for (ulong cell = item; cell < count; cell += items)
        vanka_cell_correction(cell, count, unknowns, col + first * VANKA_BLOCK * VANKA_ROW_SLOTS,
                              val + first * VANKA_BLOCK * VANKA_ROW_SLOTS,
                              inverse + first * VANKA_BLOCK * VANKA_BLOCK, stored, b, x,
                              correction);
      barrier(CLK_GLOBAL_MEM_FENCE);
      for (ulong cell = item; cell < count; cell += items)
        vanka_cell_update(cell, count, unknowns, correction, omega, x);
      barrier(CLK_GLOBAL_MEM_FENCE);
    }
}
