/** @file
 * clmg operators: the seam between solvers and storage.
 *
 * A Krylov method, a smoother or the multigrid engine sees a level's matrix
 * only through this interface: apply (y = alpha A x + beta y), the defect
 * (r = b - A x), its sizes, precision and traffic, and optionally its
 * diagonal and fused smoother kernels. Nothing above an operator reads its
 * storage, so a device sparse matrix, a block operator over several fields,
 * a matrix-free stencil or an operator written by the caller (a distributed
 * one that exchanges halos inside apply) all plug in the same way.
 *
 * An operator is a plain struct of function pointers with a `data` pointer,
 * like clmg_preconditioner: fill one in to implement your own. Optional
 * entries are NULL when absent; clmg_operator_defect() and friends supply
 * the composed fallback. */
#ifndef CLMG_OPERATOR_H
#define CLMG_OPERATOR_H

#include "clmg/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A linear operator A as the solvers see it: a struct of function pointers with their
 * data, filled by the library (clmg_operator_from_matrix, clmg_operator_block, the grid
 * operators) or by a caller. */
typedef struct clmg_operator {
  void *data;            /**< passed to every entry below */
  clmg_context *context; /**< the context of the vectors it takes */
  size_t rows;           /**< the entries of y (and of b, r, d) */
  size_t cols;           /**< the entries of x */
  clmg_dtype precision;  /**< of the vectors it takes (CLMG_DOUBLE or CLMG_FLOAT) */
  const char *name;      /**< for reports: "matrix", "block", "stencil5", ... */

  /** y = alpha A x + beta y; beta == 0: y is not read. y must not alias x.
   * Required. */
  clmg_status (*apply)(void *data, double alpha, const clmg_vector *x, double beta, clmg_vector *y);
  /** r = b - A x in one pass. Optional (fallback: r = b, then apply(-1, x, 1, r)). */
  clmg_status (*defect)(void *data, const clmg_vector *b, const clmg_vector *x, clmg_vector *r);
  /** diagonal[i] = a_ii (0 where the operator has none). Optional: an
   * operator without it cannot be used with diagonal smoothers. */
  clmg_status (*diagonal)(void *data, clmg_vector *diagonal);
  /** out[i] = sum_j a_ij^2 (for SPAI-0). Optional. */
  clmg_status (*row_sum_squares)(void *data, clmg_vector *out);
  /** x_new = x + w .* (b - A x) in one pass (x_new does not alias x). Optional
   * (fallback: defect into a work vector, then a pointwise update). */
  clmg_status (*weighted_step)(void *data, const clmg_vector *w, const clmg_vector *b,
                               const clmg_vector *x, clmg_vector *x_new);
  /** d = beta d + alpha w .* (b - A x) in one pass (beta == 0: d is not read;
   * d does not alias x). Optional (fallback as for weighted_step). */
  clmg_status (*scaled_defect)(void *data, double alpha, const clmg_vector *w, const clmg_vector *b,
                               const clmg_vector *x, double beta, clmg_vector *d);
  /** x_new = y + w .* (b - A y) with y = w .* b: two weighted steps from a
   * zero guess in one pass, y never stored (x_new does not alias b or w).
   * Optional (fallback: y into a work vector, then weighted_step); may
   * return CLMG_ERROR_UNSUPPORTED for the fallback to take over. */
  clmg_status (*weighted_step_from_zero)(void *data, const clmg_vector *w, const clmg_vector *b,
                                         clmg_vector *x_new);
  /** The fewest bytes one application reads besides its vectors (matrix
   * arrays, stencil coefficients). Optional (0). */
  double (*bytes)(void *data);
  /** Releases data when the operator owns it; NULL for a borrowed one. */
  void (*destroy)(void *data);
} clmg_operator;

/** Releases what the operator owns (calls its destroy) and zeroes it; NULL
 * and an all-zero operator are fine. */
CLMG_API void clmg_operator_destroy(clmg_operator *op);

/** Checks that op is complete (apply set, sizes and context) and that x and y
 * fit it: x has cols entries, y rows, both of op's precision and context.
 * `who` prefixes the message ("gmres", "multigrid level 3"). */
CLMG_API clmg_status clmg_operator_check(const clmg_operator *op, const clmg_vector *x,
                                         const clmg_vector *y, const char *who);

/** The calls every solver makes; each uses the operator's own entry when set
 * and the composed fallback otherwise. `work` is a vector of op->rows entries
 * the fallbacks may overwrite (NULL: the fallback needs none or the call
 * fails with CLMG_ERROR_INVALID_ARGUMENT). */
CLMG_API clmg_status clmg_operator_apply(const clmg_operator *op, double alpha,
                                         const clmg_vector *x, double beta, clmg_vector *y);
/** r = b - A x: op's defect, else r = b then apply(-1, x, 1, r). */
CLMG_API clmg_status clmg_operator_defect(const clmg_operator *op, const clmg_vector *b,
                                          const clmg_vector *x, clmg_vector *r);
/** x_new = x + w .* (b - A x): op's weighted_step, else the defect into work, scaled and
 * added (work needed). */
CLMG_API clmg_status clmg_operator_weighted_step(const clmg_operator *op, const clmg_vector *w,
                                                 const clmg_vector *b, const clmg_vector *x,
                                                 clmg_vector *x_new, clmg_vector *work);
/** Two weighted steps from x = 0: x_new = y + w .* (b - A y) with y = w .* b. op's
 * weighted_step_from_zero, else (or when it returns CLMG_ERROR_UNSUPPORTED) y into work
 * and one weighted step (work needed). */
CLMG_API clmg_status clmg_operator_weighted_step_from_zero(const clmg_operator *op,
                                                           const clmg_vector *w,
                                                           const clmg_vector *b, clmg_vector *x_new,
                                                           clmg_vector *work);
/** d = beta d + alpha w .* (b - A x) (beta == 0: d is not read): op's scaled_defect,
 * else the defect into work, scaled and combined (work needed). */
CLMG_API clmg_status clmg_operator_scaled_defect(const clmg_operator *op, double alpha,
                                                 const clmg_vector *w, const clmg_vector *b,
                                                 const clmg_vector *x, double beta, clmg_vector *d,
                                                 clmg_vector *work);
/** The bytes one application reads besides its vectors (op's bytes entry; 0 without it
 * or for NULL). */
CLMG_API double clmg_operator_bytes(const clmg_operator *op);

/** A device sparse matrix as an operator (every format, every fused kernel).
 * The operator borrows the matrix: destroy the matrix after the operator.
 * With take_ownership nonzero, destroying the operator destroys the matrix. */
CLMG_API clmg_status clmg_operator_from_matrix(clmg_matrix *matrix, int take_ownership,
                                               clmg_operator *op);
/** The matrix behind an operator made by clmg_operator_from_matrix, else NULL
 * (for reports and for setups that need entries, e.g. a Galerkin product). */
CLMG_API clmg_matrix *clmg_operator_matrix(const clmg_operator *op);

/** A block operator over several fields: x = [x_0; ...; x_{nc-1}] and
 * y = [y_0; ...; y_{nr-1}] are split into consecutive views of
 * col_sizes[j] and row_sizes[i] entries, and y_i = alpha sum_j A_ij x_j +
 * beta y_i. blocks[i * num_col_blocks + j] is A_ij; an operator whose apply is
 * NULL is a zero block. The block operator borrows the blocks (they must
 * outlive it) unless take_ownership is nonzero. Its diagonal is that of the
 * diagonal blocks (0 where a diagonal block is zero or has no diagonal). */
CLMG_API clmg_status clmg_operator_block(clmg_context *context, int num_row_blocks,
                                         int num_col_blocks, const size_t *row_sizes,
                                         const size_t *col_sizes, const clmg_operator *blocks,
                                         int take_ownership, clmg_operator *op);

#ifdef __cplusplus
}
#endif

#endif
