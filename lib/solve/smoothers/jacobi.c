/* Damped Jacobi, x <- x + omega D^-1 (b - A x): the smoother of the
 * FE-GMG paper (Geveler et al. 2011), one fused SpMV pass per step. */
#include "solve/internal.h"

#include <stdlib.h>

static clmg_status jacobi_weights(clmg_context *context, const clmg_operator *a, double omega,
                                  clmg_vector *w) {
  return clmg_operator_diagonal_weights(context, a, "jacobi", omega, 0, w);
}

clmg_status clmg_smoother_jacobi(clmg_context *context, double omega, clmg_smoother *smoother) {
  return clmg_diagonal_smoother(context, "jacobi", omega > 0 ? omega : 0.7, jacobi_weights,
                                smoother);
}
