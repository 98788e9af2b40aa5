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

/* The steps' coefficients: step k is d = beta d + alpha W (b - A x),
 * x += d. The interval's centre theta and half-width delta and the
 * recurrence's rho, which chebyshev_coefficient advances: start with
 * *rho = 0 for step 0 (alpha = 1 / theta, beta = 0). */
typedef struct chebyshev_interval {
  double theta, delta, sigma;
} chebyshev_interval;

static chebyshev_interval interval_of(const chebyshev_smoother *s) {
  double upper = s->lambda_max, lower = upper * s->lower_ratio;
  chebyshev_interval c = {0.5 * (upper + lower), 0.5 * (upper - lower), 0};
  c.sigma = c.theta / c.delta;
  return c;
}

static void chebyshev_coefficient(const chebyshev_interval *c, int k, double *rho, double *alpha,
                                  double *beta) {
  if (k == 0) {
    *rho = 1.0 / c->sigma;
    *alpha = 1.0 / c->theta;
    *beta = 0.0;
    return;
  }
  double rho_next = 1.0 / (2.0 * c->sigma - *rho);
  *alpha = 2.0 * rho_next / c->delta;
  *beta = rho_next * *rho;
  *rho = rho_next;
}

static clmg_status chebyshev_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                                   clmg_vector *x, int steps, int x_is_zero) {
  chebyshev_smoother *s = data;
  chebyshev_interval c = interval_of(s);
  double rho = 0, alpha = 0, beta = 0;
  chebyshev_coefficient(&c, 0, &rho, &alpha, &beta);
  clmg_status status;
  /* distributed, a failed step is held back (clmg_hold): the later steps
   * still exchange their halos */
  clmg_context *context = s->context;
  if (x_is_zero) { /* d = W b / theta; x = d */
    status = clmg_hold(context, clmg_pointwise_multiply(s->w, b, s->d));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_scal(alpha, s->d));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_copy(s->d, x));
  } else {
    status =
        clmg_hold(context, clmg_operator_scaled_defect(a, alpha, s->w, b, x, 0.0, s->d, s->work));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_axpy(1.0, s->d, x));
  }
  for (int k = 1; k < steps && status == CLMG_SUCCESS; ++k) {
    chebyshev_coefficient(&c, k, &rho, &alpha, &beta);
    status =
        clmg_hold(context, clmg_operator_scaled_defect(a, alpha, s->w, b, x, beta, s->d, s->work));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_axpy(1.0, s->d, x));
  }
  return status;
}

int clmg_chebyshev_smoother_polynomial(const clmg_smoother *smoother, int steps,
                                       const clmg_vector **w, double *alpha, double *beta) {
  if (smoother->apply != chebyshev_apply)
    return 0;
  const chebyshev_smoother *s = smoother->data;
  chebyshev_interval c = interval_of(s);
  double rho = 0;
  for (int k = 0; k < steps; ++k)
    chebyshev_coefficient(&c, k, &rho, &alpha[k], &beta[k]);
  *w = s->w;
  return 1;
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
