/* SPAI-0: x <- x + omega M (b - A x) with M = diag(a_ii / sum_j a_ij^2), the
 * diagonal M minimising ||I - M A||_F (Bröker, Grote et al.). Unlike Jacobi
 * it needs no damping for diagonally dominant matrices (default omega 1). */
#include "solve/internal.h"

#include <stdlib.h>

static clmg_status spai0_weights(clmg_context *context, const clmg_operator *a, double omega,
                                 double *w) {
  double *row_squares = clmg_alloc_array(a->rows, sizeof *row_squares);
  if (!row_squares)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "spai0 smoother: row norms");
  clmg_status status = clmg_operator_host_diagonal(context, a, "spai0", w, row_squares);
  for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; ++i)
    w[i] = omega * w[i] / row_squares[i];
  free(row_squares);
  return status;
}

clmg_status clmg_smoother_spai0(clmg_context *context, double omega, clmg_smoother *smoother) {
  return clmg_diagonal_smoother(context, "spai0", omega > 0 ? omega : 1.0, spai0_weights, smoother);
}
