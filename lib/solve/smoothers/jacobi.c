/* Damped Jacobi, x <- x + omega D^-1 (b - A x): the smoother of the
 * FE-GMG paper (Geveler et al. 2011), one fused SpMV pass per step; with a
 * fixed omega, or with omega = scale / lambda_max(D^-1 A) from an estimate
 * on each level (as pyamg's and PETSc GAMG's smoothers take it): the
 * damping that keeps the smoother convergent, and a multigrid cycle with it
 * symmetric positive definite, on matrices whose diagonal does not
 * dominate (elasticity, high-order and DG discretisations). */
#include "solve/internal.h"

#include <stdlib.h>

/* power steps of the estimate */
enum { ESTIMATE_ITERATIONS = 12 };

static clmg_status jacobi_weights(clmg_context *context, const clmg_operator *a, double omega,
                                  clmg_vector *w, double *in_use) {
  *in_use = omega;
  return clmg_operator_diagonal_weights(context, a, "jacobi", omega, 0, w);
}

static clmg_status estimated_weights(clmg_context *context, const clmg_operator *a, double scale,
                                     clmg_vector *w, double *in_use) {
  double lambda = 0;
  clmg_status status = clmg_operator_diagonal_weights(context, a, "jacobi", 1.0, 0, w);
  /* the estimate is collective where the operator is distributed */
  status = clmg_context_agree_local(context, status);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_lambda_max(context, a, w, ESTIMATE_ITERATIONS, "jacobi", &lambda);
  if (status == CLMG_SUCCESS) {
    *in_use = scale / lambda;
    status = clmg_scal(*in_use, w);
  }
  return status;
}

clmg_status clmg_smoother_jacobi(clmg_context *context, double omega, clmg_smoother *smoother) {
  return clmg_diagonal_smoother(context, "jacobi", omega > 0 ? omega : 0.7, jacobi_weights,
                                smoother);
}

clmg_status clmg_smoother_jacobi_estimated(clmg_context *context, double scale,
                                           clmg_smoother *smoother) {
  return clmg_diagonal_smoother(context, "jacobi-rho", scale > 0 ? scale : 4.0 / 3.0,
                                estimated_weights, smoother);
}
