/* SPAI-0: x <- x + omega M (b - A x) with M = diag(a_ii / sum_j a_ij^2), the
 * diagonal M minimising ||I - M A||_F (Bröker, Grote et al.). Unlike Jacobi
 * it needs no damping for diagonally dominant matrices (default omega 1). */
#include "solve/internal.h"

#include <stdlib.h>

static clmg_status spai0_weights(clmg_context *context, const clmg_operator *a, double omega,
                                 clmg_vector *w, double *in_use) {
  *in_use = omega;
  return clmg_operator_diagonal_weights(context, a, "spai0", omega, 1, w);
}

clmg_status clmg_smoother_spai0(clmg_context *context, double omega, clmg_smoother *smoother) {
  return clmg_diagonal_smoother(context, "spai0", omega > 0 ? omega : 1.0, spai0_weights, smoother);
}
