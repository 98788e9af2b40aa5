/* Test matrices for the benchmarks: stencil Laplacians, finite-element
 * stiffness patterns and an irregular matrix, generated on the host as
 * clmg_csr.
 *
 * Every matrix is symmetric, has positive diagonal and nonpositive
 * off-diagonal entries, and is diagonally dominant (strictly in the rows
 * next to an eliminated Dirichlet boundary or shifted on purpose, weakly
 * elsewhere, irreducibly overall): a nonsingular M-matrix, so CG, Jacobi
 * and multigrid can solve with it. The off-diagonal values are random
 * (variable coefficients), never all equal, so a kernel that reads a wrong
 * value or drops an entry shows in the result. The same seed gives the same
 * matrix on every machine. */
#ifndef CLMG_PERF_MATRICES_H
#define CLMG_PERF_MATRICES_H

#include <stddef.h>
#include <stdint.h>

#include "clmg.h"

/* ---- generators with explicit sizes ----
 * `seed` selects the random coefficients. On failure *out is left empty and
 * error (if not NULL) says why. */

/* 2D Laplacians on an m x m grid of unknowns (lexicographic numbering,
 * Dirichlet boundary eliminated): 5-point (rows of at most 5) and 9-point
 * (rows of at most 9). */
clmg_status perf_laplace2d_5pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error);
clmg_status perf_laplace2d_9pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error);
/* 3D Laplacians on an m x m x m grid: 7-point and 27-point. */
clmg_status perf_laplace3d_7pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error);
clmg_status perf_laplace3d_27pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error);

/* The Q1 (bilinear) Poisson stiffness matrix of a uniform mesh of
 * elements x elements squares on the unit square, assembled element by
 * element with a random diffusion coefficient per element; Dirichlet vertices
 * eliminated. (elements-1)^2 unknowns, rows of at most 9. */
clmg_status perf_fe_q1(size_t elements, uint64_t seed, clmg_csr *out, clmg_error *error);

/* The Q2 (biquadratic) stiffness pattern of a uniform mesh of
 * elements x elements squares: 9 DOFs per element (4 vertices, 4 edge
 * midpoints, 1 cell centre), numbered as finite-element codes do: vertices,
 * then horizontal edges, vertical edges, cells (each block lexicographic).
 * Interior rows hold 25 (vertex), 15 (edge) or 9 (cell) entries. The element
 * couplings are random negative numbers (the true Q2 stiffness has positive
 * off-diagonal entries and is not diagonally dominant); Dirichlet DOFs are
 * eliminated. (2 elements - 1)^2 unknowns. */
clmg_status perf_fe_q2(size_t elements, uint64_t seed, clmg_csr *out, clmg_error *error);

/* An irregular matrix of `rows` rows: each row couples to 1 to 8 random
 * partners (half near the diagonal, half anywhere), mirrored for symmetry,
 * so rows hold about 10 entries with a wide spread; plus `dense_rows` rows
 * (and their mirrored columns) that couple to about rows/10 columns spread
 * over the whole range. Every diagonal is shifted up by 0.1 to 0.2 so the
 * graph Laplacian becomes nonsingular. */
clmg_status perf_irregular(size_t rows, size_t dense_rows, uint64_t seed, clmg_csr *out,
                           clmg_error *error);

/* ---- the catalogue: named kinds sized by a target number of nonzeros ---- */

typedef struct perf_matrix_kind {
  const char *name;        /* short, for tables and file names: "lap2d5", ... */
  const char *description; /* one line */
  /* Generates the matrix of this kind whose nonzero count is closest to
   * target_nnz (within a few percent; boundary rows are shorter), and writes
   * the instance's size ("632 x 632 grid") into detail. */
  clmg_status (*generate)(size_t target_nnz, uint64_t seed, clmg_csr *out, char *detail,
                          size_t detail_size, clmg_error *error);
} perf_matrix_kind;

/* The kinds, in a fixed order; *count gets their number. */
const perf_matrix_kind *perf_matrix_kinds(size_t *count);
/* The kind with this name, or NULL. */
const perf_matrix_kind *perf_matrix_find(const char *name);

/* Row-length statistics of a, for reports. */
typedef struct perf_row_lengths {
  size_t min;
  size_t max;
  double mean;
} perf_row_lengths;

perf_row_lengths perf_matrix_row_lengths(const clmg_csr *a);

#endif
