/* The diagonal smoothers' common part: x <- x + W (b - A x) with a fixed
 * diagonal W, one fused operator pass per step (the operator's
 * weighted_step). Jacobi (W = omega D^-1) and SPAI-0 differ only in W. */
#include "solve/internal.h"

#include "la/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct diagonal_smoother {
  clmg_context *context;
  double parameter; /* what weights() takes: omega, or its scale */
  double omega;     /* the damping in use (after setup) */
  clmg_diagonal_weights weights;
  size_t n;
  clmg_vector *w, *next, *work; /* work: only when the operator has no fused step */
} diagonal_smoother;

static void diagonal_destroy(void *data) {
  diagonal_smoother *s = data;
  if (!s)
    return;
  clmg_vector_destroy(s->w);
  clmg_vector_destroy(s->next);
  clmg_vector_destroy(s->work);
  free(s);
}

/* The operator's missing diagonal (or row norms), as a message. */
static clmg_status no_diagonal(clmg_context *context, const clmg_operator *a, const char *smoother,
                               int row_squares) {
  return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                   "the %s smoother needs the diagonal%s of a square operator; the %s operator "
                   "(%zu x %zu) has none",
                   smoother, row_squares ? " and the row norms" : "", a->name ? a->name : "given",
                   a->rows, a->cols);
}

static clmg_status zero_diagonal(clmg_context *context, size_t row, const char *smoother) {
  return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                   "row %zu has a zero diagonal entry; the %s smoother needs a nonzero diagonal",
                   row + 1, smoother);
}

clmg_status clmg_operator_diagonal_weights(clmg_context *context, const clmg_operator *a,
                                           const char *smoother, double alpha, int row_squares,
                                           clmg_vector *w) {
  if (!a->diagonal || (row_squares && !a->row_sum_squares) || a->rows != a->cols)
    return no_diagonal(context, a, smoother, row_squares);
  clmg_status status = a->diagonal(a->data, w);
  size_t zero_row = SIZE_MAX;
  if (!row_squares) {
    if (status == CLMG_SUCCESS)
      status = clmg_quotient(alpha, NULL, w, w, &zero_row);
    return status == CLMG_SUCCESS && zero_row != SIZE_MAX
               ? zero_diagonal(context, zero_row, smoother)
               : status;
  }
  clmg_vector *squares = NULL, *inverse = NULL;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, a->precision, a->rows, &squares);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, a->precision, a->rows, &inverse);
  if (status == CLMG_SUCCESS) /* only for its search of a zero diagonal entry */
    status = clmg_quotient(1.0, NULL, w, inverse, &zero_row);
  if (status == CLMG_SUCCESS && zero_row != SIZE_MAX)
    status = zero_diagonal(context, zero_row, smoother);
  if (status == CLMG_SUCCESS)
    status = a->row_sum_squares(a->data, squares);
  if (status == CLMG_SUCCESS) /* a nonzero diagonal entry makes its row norm nonzero */
    status = clmg_quotient(alpha, w, squares, w, &zero_row);
  clmg_vector_destroy(squares);
  clmg_vector_destroy(inverse);
  return status;
}

clmg_status clmg_operator_lambda_max(clmg_context *context, const clmg_operator *a,
                                     const clmg_vector *w, int iterations, const char *smoother,
                                     double *lambda_max) {
  clmg_vector *x = NULL, *product = NULL;
  clmg_status status = clmg_vector_create_unset(context, a->precision, a->rows, &x);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_fill_pseudo_random(x, 0x9e3779b97f4a7c15ull + (uint64_t)a->rows, 0, 0.5, 1.5);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, a->precision, a->rows, &product);
  double norm = 0, lambda = 0;
  if (!clmg_context_is_distributed(context)) {
    /* the steps' sums of squares stay on the device, which normalises x by
     * them: one read after the last step, not one per step */
    clmg_vector *sums = NULL;
    double *squares = NULL;
    size_t steps = iterations > 0 ? (size_t)iterations : 0;
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, a->precision, steps + 1, &sums);
    if (status == CLMG_SUCCESS && !(squares = clmg_alloc_array(steps + 1, sizeof *squares)))
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                         "%s smoother: no host memory for the eigenvalue estimate", smoother);
    if (status == CLMG_SUCCESS)
      status = clmg_sumsq_to_device(x, sums, 0);
    for (size_t k = 0; status == CLMG_SUCCESS && k < steps; ++k) {
      status = clmg_scal_inverse_sqrt(sums, k, x);
      if (status == CLMG_SUCCESS)
        status = clmg_operator_apply(a, 1.0, x, 0.0, product);
      if (status == CLMG_SUCCESS)
        status = clmg_pointwise_multiply(w, product, x);
      if (status == CLMG_SUCCESS)
        status = clmg_sumsq_to_device(x, sums, k + 1);
    }
    if (status == CLMG_SUCCESS)
      status = clmg_vector_download_doubles(sums, squares);
    /* the host loop's stop: the first norm that is not positive */
    if (status == CLMG_SUCCESS)
      norm = sqrt(squares[0]);
    for (size_t k = 0; status == CLMG_SUCCESS && k < steps && norm > 0; ++k)
      lambda = norm = sqrt(squares[k + 1]);
    free(squares);
    clmg_vector_destroy(sums);
  } else {
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(x, &norm);
    for (int k = 0; status == CLMG_SUCCESS && k < iterations && norm > 0; ++k) {
      status = clmg_scal(1.0 / norm, x);
      if (status == CLMG_SUCCESS)
        status = clmg_operator_apply(a, 1.0, x, 0.0, product);
      if (status == CLMG_SUCCESS)
        status = clmg_pointwise_multiply(w, product, x);
      if (status == CLMG_SUCCESS)
        status = clmg_nrm2(x, &norm);
      lambda = norm;
    }
  }
  clmg_vector_destroy(x);
  clmg_vector_destroy(product);
  if (status != CLMG_SUCCESS)
    return status;
  if (!(lambda > 0) || !isfinite(lambda))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s smoother: the eigenvalue estimate of D^-1 A is %g; the smoother needs a "
                     "positive definite operator",
                     smoother, lambda);
  *lambda_max = 1.1 * lambda;
  return CLMG_SUCCESS;
}

clmg_status clmg_operator_host_diagonal(clmg_context *context, const clmg_operator *a,
                                        const char *smoother, double *diagonal,
                                        double *row_squares) {
  if (!a->diagonal || (row_squares && !a->row_sum_squares) || a->rows != a->cols)
    return no_diagonal(context, a, smoother, row_squares != NULL);
  clmg_vector *device = NULL;
  clmg_status status = clmg_vector_create(context, a->precision, a->rows, &device);
  if (status == CLMG_SUCCESS)
    status = a->diagonal(a->data, device);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(device, diagonal);
  if (status == CLMG_SUCCESS && row_squares)
    status = a->row_sum_squares(a->data, device);
  if (status == CLMG_SUCCESS && row_squares)
    status = clmg_vector_download_doubles(device, row_squares);
  clmg_vector_destroy(device);
  if (status != CLMG_SUCCESS)
    return status;
  for (size_t i = 0; i < a->rows; ++i)
    if (diagonal[i] == 0)
      return zero_diagonal(context, i, smoother);
  return CLMG_SUCCESS;
}

static clmg_status make_or_keep(clmg_context *context, const clmg_operator *a, clmg_vector **v) {
  if (*v && clmg_vector_length(*v) == a->rows && clmg_vector_type(*v) == a->precision)
    return CLMG_SUCCESS;
  clmg_vector_destroy(*v);
  *v = NULL;
  return clmg_vector_create(context, a->precision, a->rows, v);
}

static clmg_status diagonal_setup(void *data, const clmg_operator *a) {
  diagonal_smoother *s = data;
  clmg_status status = make_or_keep(s->context, a, &s->w);
  if (status == CLMG_SUCCESS)
    status = s->weights(s->context, a, s->parameter, s->w, &s->omega);
  if (status == CLMG_SUCCESS)
    status = make_or_keep(s->context, a, &s->next);
  if (status == CLMG_SUCCESS && !a->weighted_step)
    status = make_or_keep(s->context, a, &s->work);
  s->n = a->rows;
  return status;
}

/* zero guess: x holds nothing and is taken as 0, so the first sweep is
 * W b, and with two or more sweeps the first two are one pass when the
 * operator has weighted_step_from_zero (and supports it for this matrix).
 * Sweeps alternate between x and `next`; the first pass writes where the
 * count makes the last land in x. */
static clmg_status diagonal_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                                  clmg_vector *x, int steps, int x_is_zero) {
  diagonal_smoother *s = data;
  clmg_vector *current = x, *next = s->next;
  clmg_status status = CLMG_SUCCESS;
  int k = 0;
  if (x_is_zero && steps > 0) {
    if (steps >= 2 && a->weighted_step_from_zero) {
      current = (steps - 2) % 2 == 1 ? s->next : x;
      status = a->weighted_step_from_zero(a->data, s->w, b, current);
      if (status == CLMG_SUCCESS)
        k = 2;
      else if (status == CLMG_ERROR_UNSUPPORTED) { /* the two sweeps apart, below */
        clmg_clear_message(s->context);
        status = CLMG_SUCCESS;
      } else { /* distributed, held back (clmg_hold): the sweeps still exchange halos */
        status = clmg_hold(s->context, status);
        k = 2;
      }
    }
    if (k == 0 && status == CLMG_SUCCESS) {
      current = (steps - 1) % 2 == 1 ? s->next : x;
      status = clmg_hold(s->context, clmg_pointwise_multiply(s->w, b, current));
      k = 1;
    }
    next = current == x ? s->next : x;
  }
  for (; k < steps && status == CLMG_SUCCESS; ++k) {
    status = clmg_hold(s->context, clmg_operator_weighted_step(a, s->w, b, current, next, s->work));
    clmg_vector *t = current;
    current = next;
    next = t;
  }
  if (status == CLMG_SUCCESS && current != x)
    status = clmg_copy(current, x);
  return status;
}

/* A step reads x, b, W and writes x besides the operator; from a zero
 * guess the first two steps can read b and W and write x once (one sweep
 * alone is the pointwise W b): the floor counts that. */
static double diagonal_bytes(void *data, const clmg_operator *a, int steps, int x_is_zero) {
  (void)data;
  double real = (double)clmg_dtype_size(a->precision), n = (double)a->rows;
  double step = clmg_operator_bytes(a) + 4.0 * n * real;
  if (!x_is_zero || steps == 0)
    return steps * step;
  if (steps == 1)
    return 3.0 * n * real;
  return clmg_operator_bytes(a) + 3.0 * n * real + (steps - 2) * step;
}

int clmg_diagonal_smoother_polynomial(const clmg_smoother *smoother, int steps,
                                      const clmg_vector **w, double *alpha, double *beta) {
  if (smoother->apply != diagonal_apply)
    return 0;
  for (int k = 0; k < steps; ++k) {
    alpha[k] = 1.0; /* W holds the damping */
    beta[k] = 0.0;
  }
  *w = ((const diagonal_smoother *)smoother->data)->w;
  return 1;
}

static double diagonal_damping(void *data) {
  return ((diagonal_smoother *)data)->omega;
}

clmg_status clmg_diagonal_smoother(clmg_context *context, const char *name, double omega,
                                   clmg_diagonal_weights weights, clmg_smoother *smoother) {
  if (!context || !smoother)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(smoother, 0, sizeof *smoother);
  if (!(omega > 0) || !isfinite(omega))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s smoother: omega is %g; it must be positive", name, omega);
  diagonal_smoother *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "%s smoother", name);
  s->context = context;
  s->parameter = s->omega = omega;
  s->weights = weights;
  smoother->data = s;
  smoother->name = name;
  smoother->setup = diagonal_setup;
  smoother->apply = diagonal_apply;
  smoother->bytes = diagonal_bytes;
  smoother->damping = diagonal_damping;
  smoother->destroy = diagonal_destroy;
  return CLMG_SUCCESS;
}
