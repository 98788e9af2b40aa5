/* Chebyshev smoothing: the Chebyshev polynomial of degree `steps` in
 * W A, W = D^-1, on [ratio lambda_max, lambda_max] (Saad, Iterative Methods
 * for Sparse Linear Systems, Alg. 12.1), two launches per step (the fused
 * scaled defect d = beta d + alpha W (b - A x), then x += d). lambda_max
 * comes from power steps at setup, raised by 10%: the interval must cover
 * the spectrum's top, and the power method approaches it from below
 * (clmg_operator_lambda_max). */
#include "solve/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct chebyshev_smoother {
  clmg_context *context;
  double lower_ratio;
  int eigen_iterations;
  double lambda_max;
  clmg_vector *w, *d, *work; /* work: only when the operator has no fused kernel */
} chebyshev_smoother;

static void chebyshev_destroy(void *data) {
  chebyshev_smoother *s = data;
  if (!s)
    return;
  clmg_vector_destroy(s->w);
  clmg_vector_destroy(s->d);
  clmg_vector_destroy(s->work);
  free(s);
}

static clmg_status remake(clmg_context *context, const clmg_operator *a, clmg_vector **v) {
  clmg_vector_destroy(*v);
  *v = NULL;
  return clmg_vector_create(context, a->precision, a->rows, v);
}

static clmg_status chebyshev_setup(void *data, const clmg_operator *a) {
  chebyshev_smoother *s = data;
  clmg_status status = remake(s->context, a, &s->w);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_diagonal_weights(s->context, a, "chebyshev", 1.0, 0, s->w);
  if (status == CLMG_SUCCESS)
    status = remake(s->context, a, &s->d);
  if (status == CLMG_SUCCESS && !a->scaled_defect)
    status = remake(s->context, a, &s->work);
  /* the estimate is collective where the operator is distributed */
  status = clmg_context_agree_local(s->context, status);
  return status == CLMG_SUCCESS ? clmg_operator_lambda_max(s->context, a, s->w, s->eigen_iterations,
                                                           "chebyshev", &s->lambda_max)
                                : status;
}

static clmg_status chebyshev_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                                   clmg_vector *x, int steps, int x_is_zero) {
  chebyshev_smoother *s = data;
  double upper = s->lambda_max, lower = upper * s->lower_ratio;
  double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
  double sigma = theta / delta, rho = 1.0 / sigma;
  clmg_status status;
  if (x_is_zero) { /* d = W b / theta; x = d */
    status = clmg_pointwise_multiply(s->w, b, s->d);
    if (status == CLMG_SUCCESS)
      status = clmg_scal(1.0 / theta, s->d);
    if (status == CLMG_SUCCESS)
      status = clmg_copy(s->d, x);
  } else {
    status = clmg_operator_scaled_defect(a, 1.0 / theta, s->w, b, x, 0.0, s->d, s->work);
    if (status == CLMG_SUCCESS)
      status = clmg_axpy(1.0, s->d, x);
  }
  for (int k = 1; k < steps && status == CLMG_SUCCESS; ++k) {
    double rho_next = 1.0 / (2.0 * sigma - rho);
    status = clmg_operator_scaled_defect(a, 2.0 * rho_next / delta, s->w, b, x, rho_next * rho,
                                         s->d, s->work);
    if (status == CLMG_SUCCESS)
      status = clmg_axpy(1.0, s->d, x);
    rho = rho_next;
  }
  return status;
}

/* A step reads x, b, W, d and writes d, then reads d and x and writes x;
 * from a zero guess the first reads b and W and writes d and x. */
static double chebyshev_bytes(void *data, const clmg_operator *a, int steps, int x_is_zero) {
  (void)data;
  double real = (double)clmg_dtype_size(a->precision), n = (double)a->rows;
  double step = clmg_operator_bytes(a) + 8.0 * n * real;
  if (!x_is_zero || steps == 0)
    return steps * step;
  return 4.0 * n * real + (steps - 1) * step;
}

static double chebyshev_parameter(void *data) {
  return ((chebyshev_smoother *)data)->lambda_max;
}

clmg_status clmg_smoother_chebyshev(clmg_context *context, double lower_ratio, int eigen_iterations,
                                    clmg_smoother *smoother) {
  if (!context || !smoother)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(smoother, 0, sizeof *smoother);
  if (lower_ratio == 0)
    lower_ratio = 0.3;
  if (eigen_iterations == 0)
    eigen_iterations = 12;
  if (!(lower_ratio > 0 && lower_ratio < 1) || eigen_iterations < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "chebyshev smoother: lower ratio %g must lie in (0, 1) and eigen iterations "
                     "%d be >= 1",
                     lower_ratio, eigen_iterations);
  chebyshev_smoother *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "chebyshev smoother");
  s->context = context;
  s->lower_ratio = lower_ratio;
  s->eigen_iterations = eigen_iterations;
  smoother->data = s;
  smoother->name = "chebyshev";
  smoother->setup = chebyshev_setup;
  smoother->apply = chebyshev_apply;
  smoother->bytes = chebyshev_bytes;
  smoother->parameter = chebyshev_parameter;
  smoother->destroy = chebyshev_destroy;
  return CLMG_SUCCESS;
}
