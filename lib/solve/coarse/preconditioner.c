/* Any preconditioner as the coarse solve: x = M^-1 b (an AMG V-cycle on a
 * coarse level, a user's direct solver, ...). */
#include "solve/internal.h"

#include <stdlib.h>
#include <string.h>

static void wrapped_destroy(void *data) {
  clmg_preconditioner_destroy(data);
  free(data);
}

static clmg_status wrapped_setup(void *data, const clmg_operator *a) {
  (void)data;
  (void)a;
  return CLMG_SUCCESS; /* the preconditioner was made for this operator */
}

static clmg_status wrapped_solve(void *data, const clmg_operator *a, const clmg_vector *b,
                                 clmg_vector *x) {
  (void)a;
  clmg_preconditioner *m = data;
  return m->apply(m->data, b, x);
}

clmg_status clmg_coarse_solver_preconditioner(clmg_preconditioner *preconditioner,
                                              clmg_coarse_solver *solver) {
  if (!preconditioner || !solver || !preconditioner->apply)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(solver, 0, sizeof *solver);
  clmg_preconditioner *kept = malloc(sizeof *kept);
  if (!kept)
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  *kept = *preconditioner;
  memset(preconditioner, 0, sizeof *preconditioner);
  solver->data = kept;
  solver->name = kept->name ? kept->name : "preconditioner";
  solver->setup = wrapped_setup;
  solver->solve = wrapped_solve;
  solver->destroy = wrapped_destroy;
  return CLMG_SUCCESS;
}
