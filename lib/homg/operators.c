/* The structured grid as operators (include/clmg/homg.h): the five-point
 * operator, full weighting and bilinear interpolation behind clmg_operator,
 * matrix-free, one launch of a cl/homg.cl kernel per call. They are what
 * the multigrid engine needs to run HOMG's classic V-cycle and FMG as it
 * runs every other hierarchy (lib/homg/homg.c builds it from them). */
#include "homg/internal.h"

#include <stdlib.h>
#include <string.h>

typedef enum grid_operator_kind {
  GRID_STENCIL,
  GRID_RESTRICTION,
  GRID_INTERPOLATION
} grid_operator_kind;

typedef struct grid_operator {
  grid_kernels kernels;
  grid_operator_kind kind;
  size_t n;          /* points per side of the fine grid */
  size_t rows, cols; /* of the operator, for the vector checks */
  const char *name;
} grid_operator;

/* A vector of a call: the operator's context and precision and `length`
 * entries. The engine always passes fitting ones; a caller applying the
 * operator directly gets a message instead of a write past a buffer. */
static clmg_status check_vector(const grid_operator *g, const clmg_vector *v, size_t length,
                                const char *role) {
  if (!v)
    return clmg_fail(g->kernels.context, CLMG_ERROR_INVALID_ARGUMENT, "%s operator: %s is NULL",
                     g->name, role);
  if (v->context != g->kernels.context || v->type != g->kernels.type || v->length != length)
    return clmg_fail(g->kernels.context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s operator: %s must be a %s vector of %zu entries in the operator's "
                     "context (it has %zu %s entries)",
                     g->name, role, clmg_dtype_name(g->kernels.type), length, v->length,
                     clmg_dtype_name(v->type));
  return CLMG_SUCCESS;
}

static clmg_status grid_apply(void *data, double alpha, const clmg_vector *x, double beta,
                              clmg_vector *y) {
  const grid_operator *g = data;
  clmg_status status = check_vector(g, x, g->cols, "x");
  if (status == CLMG_SUCCESS)
    status = check_vector(g, y, g->rows, "y");
  if (status != CLMG_SUCCESS)
    return status;
  switch (g->kind) {
  case GRID_STENCIL:
    return grid_stencil_apply(&g->kernels, g->n, alpha, grid_ref_of(x), beta, grid_ref_of(y));
  case GRID_RESTRICTION:
    return grid_restrict(&g->kernels, (g->n + 1) / 2, g->n, 0, alpha, beta, grid_ref_of(x),
                         grid_ref_of(y));
  case GRID_INTERPOLATION:
    return grid_interpolate(&g->kernels, (g->n + 1) / 2, alpha, beta, grid_ref_of(x),
                            grid_ref_of(y));
  }
  return CLMG_ERROR_INVALID_ARGUMENT;
}

static clmg_status stencil_defect(void *data, const clmg_vector *b, const clmg_vector *x,
                                  clmg_vector *r) {
  const grid_operator *g = data;
  clmg_status status = check_vector(g, b, g->rows, "b");
  if (status == CLMG_SUCCESS)
    status = check_vector(g, x, g->cols, "x");
  if (status == CLMG_SUCCESS)
    status = check_vector(g, r, g->rows, "r");
  if (status != CLMG_SUCCESS)
    return status;
  return grid_stencil_defect(&g->kernels, g->n, grid_ref_of(b), grid_ref_of(x), grid_ref_of(r));
}

static clmg_status stencil_diagonal(void *data, clmg_vector *diagonal) {
  const grid_operator *g = data;
  clmg_status status = check_vector(g, diagonal, g->rows, "the diagonal");
  if (status != CLMG_SUCCESS)
    return status;
  return grid_stencil_diagonal(&g->kernels, g->n, grid_ref_of(diagonal));
}

static clmg_status stencil_weighted_step(void *data, const clmg_vector *w, const clmg_vector *b,
                                         const clmg_vector *x, clmg_vector *x_new) {
  const grid_operator *g = data;
  const clmg_vector *v[] = {w, b, x, x_new};
  const char *roles[] = {"w", "b", "x", "x_new"};
  for (int i = 0; i < 4; ++i) {
    clmg_status status = check_vector(g, v[i], g->rows, roles[i]);
    if (status != CLMG_SUCCESS)
      return status;
  }
  return grid_stencil_weighted_step(&g->kernels, g->n, grid_ref_of(w), grid_ref_of(b),
                                    grid_ref_of(x), grid_ref_of(x_new));
}

static void grid_operator_destroy(void *data) {
  free(data);
}

/* Checks the arguments and fills op with a grid operator of `kind` on the
 * n x n grid (the fine one for the transfers). Operators read no
 * coefficients from memory, so they leave op->bytes unset (0): the engine's
 * traffic count of their vectors is all they move. */
static clmg_status make_grid_operator(clmg_context *context, const char *who, size_t n,
                                      clmg_dtype precision, grid_operator_kind kind,
                                      clmg_operator *op) {
  if (!context || !op)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(op, 0, sizeof *op);
  clmg_clear_message(context);
  int odd = kind != GRID_STENCIL;
  if (n < 3 || n > GRID_MAX_N || (odd && n % 2 == 0))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: a grid of n = %zu points per side; n must be %sfrom 3 to %zu", who, n,
                     odd ? "odd and " : "", GRID_MAX_N);
  if (precision != CLMG_DOUBLE && precision != CLMG_FLOAT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: precision must be double or float, not %s", who,
                     clmg_dtype_name(precision));
  if (precision == CLMG_DOUBLE && !clmg_context_device(context)->has_fp64)
    return clmg_fail_no_fp64(context, who);
  grid_operator *g = calloc(1, sizeof *g);
  if (!g)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "%s: no host memory", who);
  clmg_status status = grid_kernels_load(context, precision, &g->kernels);
  if (status != CLMG_SUCCESS) {
    free(g);
    return status;
  }
  size_t nc = (n + 1) / 2;
  static const char *const names[] = {"stencil5", "full weighting", "bilinear interpolation"};
  g->kind = kind;
  g->n = n;
  g->rows = kind == GRID_RESTRICTION ? nc * nc : n * n;
  g->cols = kind == GRID_INTERPOLATION ? nc * nc : n * n;
  g->name = names[kind];
  op->data = g;
  op->context = context;
  op->rows = g->rows;
  op->cols = g->cols;
  op->precision = precision;
  op->name = g->name;
  op->apply = grid_apply;
  if (kind == GRID_STENCIL) {
    op->defect = stencil_defect;
    op->diagonal = stencil_diagonal;
    op->weighted_step = stencil_weighted_step;
  }
  op->destroy = grid_operator_destroy;
  return CLMG_SUCCESS;
}

clmg_status clmg_grid_operator(clmg_context *context, size_t n, clmg_dtype precision,
                               clmg_operator *op) {
  return make_grid_operator(context, "clmg_grid_operator", n, precision, GRID_STENCIL, op);
}

clmg_status clmg_grid_restriction_operator(clmg_context *context, size_t n, clmg_dtype precision,
                                           clmg_operator *op) {
  return make_grid_operator(context, "clmg_grid_restriction_operator", n, precision,
                            GRID_RESTRICTION, op);
}

clmg_status clmg_grid_interpolation_operator(clmg_context *context, size_t n, clmg_dtype precision,
                                             clmg_operator *op) {
  return make_grid_operator(context, "clmg_grid_interpolation_operator", n, precision,
                            GRID_INTERPOLATION, op);
}
