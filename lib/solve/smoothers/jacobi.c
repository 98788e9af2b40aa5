/* Damped Jacobi, x <- x + omega D^-1 (b - A x): the smoother of the
 * FE-GMG paper (Geveler et al. 2011), one fused SpMV pass per step. */
#include "solve/internal.h"

#include <stdlib.h>

static clmg_status jacobi_weights(clmg_context *context, const clmg_operator *a, double omega,
                                  double *w) {
  clmg_status status = clmg_operator_host_diagonal(context, a, "jacobi", w, NULL);
  for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; ++i)
    w[i] = omega / w[i];
  return status;
}

clmg_status clmg_smoother_jacobi(clmg_context *context, double omega, clmg_smoother *smoother) {
  return clmg_diagonal_smoother(context, "jacobi", omega > 0 ? omega : 0.7, jacobi_weights,
                                smoother);
}
