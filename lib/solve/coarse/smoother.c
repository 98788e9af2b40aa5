/* A fixed number of smoother steps from zero as the coarse solve: for a
 * coarse level too large for the dense inverse (whose setup grows with the
 * cube of its rows) where an approximate correction will do, such as a
 * Vanka-smoothed saddle-point level. The smoother's setup is the solver's,
 * so clmg_multigrid_refresh renews it. */
#include "solve/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct smoother_coarse {
  clmg_smoother smoother;
  int steps;
} smoother_coarse;

static void smoother_coarse_destroy(void *data) {
  smoother_coarse *c = data;
  if (!c)
    return;
  clmg_smoother_destroy(&c->smoother);
  free(c);
}

static clmg_status smoother_coarse_setup(void *data, const clmg_operator *a) {
  smoother_coarse *c = data;
  return c->smoother.setup ? c->smoother.setup(c->smoother.data, a) : CLMG_SUCCESS;
}

static clmg_status smoother_coarse_solve(void *data, const clmg_operator *a, const clmg_vector *b,
                                         clmg_vector *x) {
  smoother_coarse *c = data;
  return c->smoother.apply(c->smoother.data, a, b, x, c->steps, 1);
}

static double smoother_coarse_bytes(void *data, const clmg_operator *a) {
  smoother_coarse *c = data;
  return c->smoother.bytes ? c->smoother.bytes(c->smoother.data, a, c->steps, 1) : 0.0;
}

clmg_status clmg_coarse_solver_smoother(clmg_smoother *smoother, int steps,
                                        clmg_coarse_solver *solver) {
  if (!smoother || !smoother->apply || !solver || steps < 1)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(solver, 0, sizeof *solver);
  smoother_coarse *c = malloc(sizeof *c);
  if (!c)
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  c->smoother = *smoother;
  c->steps = steps;
  memset(smoother, 0, sizeof *smoother);
  solver->data = c;
  solver->name = "smoother steps";
  solver->setup = smoother_coarse_setup;
  solver->solve = smoother_coarse_solve;
  solver->bytes = smoother_coarse_bytes;
  solver->destroy = smoother_coarse_destroy;
  return CLMG_SUCCESS;
}
