/* Operators (include/clmg/operator.h): the composed fallbacks every solver
 * calls through, the device-matrix operator and the block operator. */
#include "solve/internal.h"

#include <stdlib.h>
#include <string.h>

void clmg_operator_destroy(clmg_operator *op) {
  if (!op)
    return;
  if (op->destroy)
    op->destroy(op->data);
  memset(op, 0, sizeof *op);
}

static clmg_status check_vector(const clmg_operator *op, const clmg_vector *v, size_t length,
                                const char *role, const char *who) {
  if (!v)
    return clmg_fail(op->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", who, role);
  if (clmg_vector_context(v) != op->context || clmg_vector_length(v) != length ||
      clmg_vector_type(v) != op->precision)
    return clmg_fail(op->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: %s must be a %s vector of %zu entries in the operator's context (it has "
                     "%zu %s entries)",
                     who, role, clmg_dtype_name(op->precision), length, clmg_vector_length(v),
                     clmg_dtype_name(clmg_vector_type(v)));
  return CLMG_SUCCESS;
}

clmg_status clmg_operator_check(const clmg_operator *op, const clmg_vector *x, const clmg_vector *y,
                                const char *who) {
  if (!op || !op->context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!op->apply)
    return clmg_fail(op->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: the %s operator has no apply",
                     who, op->name ? op->name : "given");
  clmg_status status = x ? check_vector(op, x, op->cols, "x", who) : CLMG_SUCCESS;
  if (status == CLMG_SUCCESS && y)
    status = check_vector(op, y, op->rows, "y", who);
  return status;
}

clmg_status clmg_operator_apply(const clmg_operator *op, double alpha, const clmg_vector *x,
                                double beta, clmg_vector *y) {
  if (!op || !op->apply)
    return CLMG_ERROR_INVALID_ARGUMENT;
  return op->apply(op->data, alpha, x, beta, y);
}

clmg_status clmg_operator_defect(const clmg_operator *op, const clmg_vector *b,
                                 const clmg_vector *x, clmg_vector *r) {
  if (!op || !op->apply)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (op->defect)
    return op->defect(op->data, b, x, r);
  clmg_status status = clmg_hold(op->context, clmg_copy(b, r));
  return status == CLMG_SUCCESS ? op->apply(op->data, -1.0, x, 1.0, r) : status;
}

static clmg_status need_work(const clmg_operator *op, const clmg_vector *work, const char *what) {
  if (work)
    return CLMG_SUCCESS;
  return clmg_fail(op->context, CLMG_ERROR_INVALID_ARGUMENT,
                   "%s: the %s operator has no fused kernel for it and no work vector was given",
                   what, op->name ? op->name : "given");
}

clmg_status clmg_operator_weighted_step(const clmg_operator *op, const clmg_vector *w,
                                        const clmg_vector *b, const clmg_vector *x,
                                        clmg_vector *x_new, clmg_vector *work) {
  if (!op || !op->apply)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (op->weighted_step)
    return op->weighted_step(op->data, w, b, x, x_new);
  /* x_new = x + w .* (b - A x): defect, scale, add */
  clmg_status status = need_work(op, work, "weighted step");
  if (status == CLMG_SUCCESS)
    status = clmg_operator_defect(op, b, x, work);
  if (status == CLMG_SUCCESS)
    status = clmg_pointwise_multiply(w, work, work);
  if (status == CLMG_SUCCESS)
    status = clmg_waxpby(1.0, x, 1.0, work, x_new);
  return status;
}

clmg_status clmg_operator_weighted_step_from_zero(const clmg_operator *op, const clmg_vector *w,
                                                  const clmg_vector *b, clmg_vector *x_new,
                                                  clmg_vector *work) {
  if (!op || !op->apply)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (op->weighted_step_from_zero) {
    clmg_status status = op->weighted_step_from_zero(op->data, w, b, x_new);
    if (status != CLMG_ERROR_UNSUPPORTED)
      return status;
    clmg_clear_message(op->context);
  }
  /* y = w .* b in work; then x_new = y + w .* (b - A y) */
  clmg_status status = need_work(op, work, "weighted step from zero");
  if (status == CLMG_SUCCESS) /* distributed, held back: the defect still exchanges its halo */
    status = clmg_hold(op->context, clmg_pointwise_multiply(w, b, work));
  if (status == CLMG_SUCCESS && op->weighted_step)
    return op->weighted_step(op->data, w, b, work, x_new);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_defect(op, b, work, x_new);
  if (status == CLMG_SUCCESS)
    status = clmg_pointwise_multiply(w, x_new, x_new);
  if (status == CLMG_SUCCESS)
    status = clmg_axpy(1.0, work, x_new);
  return status;
}

clmg_status clmg_operator_scaled_defect(const clmg_operator *op, double alpha, const clmg_vector *w,
                                        const clmg_vector *b, const clmg_vector *x, double beta,
                                        clmg_vector *d, clmg_vector *work) {
  if (!op || !op->apply)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (op->scaled_defect)
    return op->scaled_defect(op->data, alpha, w, b, x, beta, d);
  clmg_status status = need_work(op, work, "scaled defect");
  if (status == CLMG_SUCCESS)
    status = clmg_operator_defect(op, b, x, work);
  if (status == CLMG_SUCCESS)
    status = clmg_pointwise_multiply(w, work, work);
  if (status == CLMG_SUCCESS)
    status = beta == 0 ? clmg_waxpby(alpha, work, 0.0, work, d) : clmg_axpby(alpha, work, beta, d);
  return status;
}

double clmg_operator_bytes(const clmg_operator *op) {
  return op && op->bytes ? op->bytes(op->data) : 0.0;
}

/* ---- a device matrix ---- */

typedef struct matrix_operator {
  clmg_matrix *matrix;
  int owned;
} matrix_operator;

static clmg_status matrix_apply(void *data, double alpha, const clmg_vector *x, double beta,
                                clmg_vector *y) {
  return clmg_spmv(alpha, ((matrix_operator *)data)->matrix, x, beta, y);
}
static clmg_status matrix_defect(void *data, const clmg_vector *b, const clmg_vector *x,
                                 clmg_vector *r) {
  return clmg_defect(((matrix_operator *)data)->matrix, b, x, r);
}
static clmg_status matrix_diagonal(void *data, clmg_vector *diagonal) {
  return clmg_matrix_diagonal(((matrix_operator *)data)->matrix, diagonal);
}
static clmg_status matrix_row_sum_squares(void *data, clmg_vector *out) {
  return clmg_matrix_row_sum_squares(((matrix_operator *)data)->matrix, out);
}
static clmg_status matrix_weighted_step(void *data, const clmg_vector *w, const clmg_vector *b,
                                        const clmg_vector *x, clmg_vector *x_new) {
  return clmg_jacobi_step(((matrix_operator *)data)->matrix, 1.0, w, b, x, x_new);
}
static clmg_status matrix_weighted_step_from_zero(void *data, const clmg_vector *w,
                                                  const clmg_vector *b, clmg_vector *x_new) {
  return clmg_jacobi_step_from_zero(((matrix_operator *)data)->matrix, 1.0, w, b, x_new);
}
static clmg_status matrix_scaled_defect(void *data, double alpha, const clmg_vector *w,
                                        const clmg_vector *b, const clmg_vector *x, double beta,
                                        clmg_vector *d) {
  return clmg_scaled_defect(((matrix_operator *)data)->matrix, alpha, w, b, x, beta, d);
}
static double matrix_bytes(void *data) {
  return (double)clmg_matrix_device_bytes(((matrix_operator *)data)->matrix);
}
static void matrix_destroy(void *data) {
  matrix_operator *m = data;
  if (m && m->owned)
    clmg_matrix_destroy(m->matrix);
  free(m);
}

clmg_status clmg_operator_from_matrix(clmg_matrix *matrix, int take_ownership, clmg_operator *op) {
  if (!matrix || !op)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(op, 0, sizeof *op);
  clmg_context *context = clmg_matrix_context(matrix);
  matrix_operator *m = malloc(sizeof *m);
  if (!m)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "matrix operator");
  m->matrix = matrix;
  m->owned = take_ownership != 0;
  op->data = m;
  op->context = context;
  op->rows = clmg_matrix_rows(matrix);
  op->cols = clmg_matrix_cols(matrix);
  op->precision = clmg_matrix_precision(matrix);
  op->name = "matrix";
  op->apply = matrix_apply;
  op->defect = matrix_defect;
  if (op->rows == op->cols) {
    op->diagonal = matrix_diagonal;
    op->row_sum_squares = matrix_row_sum_squares;
    op->weighted_step = matrix_weighted_step;
    op->weighted_step_from_zero = matrix_weighted_step_from_zero;
    op->scaled_defect = matrix_scaled_defect;
  }
  op->bytes = matrix_bytes;
  op->destroy = matrix_destroy;
  return CLMG_SUCCESS;
}

clmg_matrix *clmg_operator_matrix(const clmg_operator *op) {
  return op && op->apply == matrix_apply ? ((matrix_operator *)op->data)->matrix : NULL;
}

/* ---- a block operator ---- */

typedef struct block_operator {
  int row_blocks, col_blocks;
  size_t *row_offsets, *col_offsets; /* blocks + 1 entries each */
  clmg_operator *blocks;             /* row-major */
  int owned;
} block_operator;

static void block_destroy(void *data) {
  block_operator *b = data;
  if (!b)
    return;
  if (b->owned)
    for (int k = 0; k < b->row_blocks * b->col_blocks; ++k)
      clmg_operator_destroy(&b->blocks[k]);
  free(b->blocks);
  free(b->row_offsets);
  free(b->col_offsets);
  free(b);
}

/* Views of the fields of x and y (host handles only: no device memory). */
static clmg_status make_views(const clmg_vector *v, const size_t *offsets, int count,
                              clmg_vector **views) {
  for (int i = 0; i < count; ++i) {
    clmg_status status =
        clmg_vector_view((clmg_vector *)v, offsets[i], offsets[i + 1] - offsets[i], &views[i]);
    if (status != CLMG_SUCCESS)
      return status;
  }
  return CLMG_SUCCESS;
}

static void free_views(clmg_vector **views, int count) {
  for (int i = 0; i < count; ++i)
    clmg_vector_destroy(views[i]);
}

enum { MAX_FIELDS = 16 };

static clmg_status block_apply(void *data, double alpha, const clmg_vector *x, double beta,
                               clmg_vector *y) {
  block_operator *b = data;
  clmg_vector *xs[MAX_FIELDS] = {0}, *ys[MAX_FIELDS] = {0};
  clmg_status status = make_views(x, b->col_offsets, b->col_blocks, xs);
  if (status == CLMG_SUCCESS)
    status = make_views(y, b->row_offsets, b->row_blocks, ys);
  for (int i = 0; i < b->row_blocks && status == CLMG_SUCCESS; ++i) {
    double row_beta = beta; /* the first nonzero block takes beta, the rest add */
    for (int j = 0; j < b->col_blocks && status == CLMG_SUCCESS; ++j) {
      const clmg_operator *block = &b->blocks[i * b->col_blocks + j];
      if (!block->apply)
        continue;
      status = block->apply(block->data, alpha, xs[j], row_beta, ys[i]);
      row_beta = 1.0;
    }
    if (status == CLMG_SUCCESS && row_beta != 1.0)
      status = row_beta == 0 ? clmg_vector_fill(ys[i], 0.0) : clmg_scal(row_beta, ys[i]);
  }
  free_views(xs, b->col_blocks);
  free_views(ys, b->row_blocks);
  return status;
}

static clmg_status block_diagonal(void *data, clmg_vector *diagonal) {
  block_operator *b = data;
  clmg_vector *ds[MAX_FIELDS] = {0};
  clmg_status status = make_views(diagonal, b->row_offsets, b->row_blocks, ds);
  for (int i = 0; i < b->row_blocks && status == CLMG_SUCCESS; ++i) {
    const clmg_operator *block = &b->blocks[i * b->col_blocks + i];
    status = block->diagonal ? block->diagonal(block->data, ds[i]) : clmg_vector_fill(ds[i], 0.0);
  }
  free_views(ds, b->row_blocks);
  return status;
}

static double block_bytes(void *data) {
  block_operator *b = data;
  double bytes = 0;
  for (int k = 0; k < b->row_blocks * b->col_blocks; ++k)
    bytes += clmg_operator_bytes(&b->blocks[k]);
  return bytes;
}

clmg_status clmg_operator_block(clmg_context *context, int num_row_blocks, int num_col_blocks,
                                const size_t *row_sizes, const size_t *col_sizes,
                                const clmg_operator *blocks, int take_ownership,
                                clmg_operator *op) {
  if (!context || !op)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(op, 0, sizeof *op);
  clmg_clear_message(context);
  if (num_row_blocks < 1 || num_col_blocks < 1 || num_row_blocks > MAX_FIELDS ||
      num_col_blocks > MAX_FIELDS || !row_sizes || !col_sizes || !blocks)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "block operator: %d x %d blocks; between 1 and %d per side, with their sizes "
                     "and operators",
                     num_row_blocks, num_col_blocks, MAX_FIELDS);
  clmg_dtype precision = CLMG_DOUBLE;
  int have_block = 0;
  for (int i = 0; i < num_row_blocks; ++i)
    for (int j = 0; j < num_col_blocks; ++j) {
      const clmg_operator *block = &blocks[i * num_col_blocks + j];
      if (!block->apply)
        continue;
      if (block->rows != row_sizes[i] || block->cols != col_sizes[j] || block->context != context)
        return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                         "block operator: block (%d, %d) is %zu x %zu, but its place needs %zu x "
                         "%zu in the same context",
                         i, j, block->rows, block->cols, row_sizes[i], col_sizes[j]);
      if (have_block && block->precision != precision)
        return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                         "block operator: block (%d, %d) is %s, the others %s", i, j,
                         clmg_dtype_name(block->precision), clmg_dtype_name(precision));
      precision = block->precision;
      have_block = 1;
    }
  if (!have_block)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "block operator: every block is zero");

  block_operator *b = calloc(1, sizeof *b);
  size_t count = (size_t)num_row_blocks * (size_t)num_col_blocks;
  if (b) {
    b->blocks = calloc(count, sizeof *b->blocks);
    b->row_offsets = calloc((size_t)num_row_blocks + 1, sizeof *b->row_offsets);
    b->col_offsets = calloc((size_t)num_col_blocks + 1, sizeof *b->col_offsets);
  }
  if (!b || !b->blocks || !b->row_offsets || !b->col_offsets) {
    block_destroy(b);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "block operator");
  }
  b->row_blocks = num_row_blocks;
  b->col_blocks = num_col_blocks;
  memcpy(b->blocks, blocks, count * sizeof *blocks);
  b->owned = take_ownership != 0;
  for (int i = 0; i < num_row_blocks; ++i)
    b->row_offsets[i + 1] = b->row_offsets[i] + row_sizes[i];
  for (int j = 0; j < num_col_blocks; ++j)
    b->col_offsets[j + 1] = b->col_offsets[j] + col_sizes[j];

  op->data = b;
  op->context = context;
  op->rows = b->row_offsets[num_row_blocks];
  op->cols = b->col_offsets[num_col_blocks];
  op->precision = precision;
  op->name = "block";
  op->apply = block_apply;
  if (num_row_blocks == num_col_blocks)
    op->diagonal = block_diagonal;
  op->bytes = block_bytes;
  op->destroy = block_destroy;
  return CLMG_SUCCESS;
}
