/* The library's smoothers by clmg_smoother_type: the one table a new
 * built-in smoother is added to (its own file implements it). */
#include "solve/internal.h"

#include <string.h>

static clmg_status make_jacobi(void *data, clmg_context *context, int level, const clmg_operator *a,
                               clmg_smoother *smoother) {
  (void)level;
  (void)a;
  return clmg_smoother_jacobi(context, ((const clmg_multigrid_options *)data)->omega, smoother);
}

static clmg_status make_spai0(void *data, clmg_context *context, int level, const clmg_operator *a,
                              clmg_smoother *smoother) {
  (void)level;
  (void)a;
  return clmg_smoother_spai0(context, ((const clmg_multigrid_options *)data)->omega, smoother);
}

static clmg_status make_chebyshev(void *data, clmg_context *context, int level,
                                  const clmg_operator *a, clmg_smoother *smoother) {
  (void)level;
  (void)a;
  const clmg_multigrid_options *o = data;
  return clmg_smoother_chebyshev(context, o->chebyshev_lower_ratio, o->eigen_iterations, smoother);
}

static clmg_status make_jacobi_rho(void *data, clmg_context *context, int level,
                                   const clmg_operator *a, clmg_smoother *smoother) {
  (void)level;
  (void)a;
  return clmg_smoother_jacobi_estimated(context, ((const clmg_multigrid_options *)data)->omega,
                                        smoother);
}

static const struct {
  const char *name;
  clmg_smoother_factory factory;
} builtin[] = {
    [CLMG_SMOOTHER_JACOBI] = {"jacobi", make_jacobi},
    [CLMG_SMOOTHER_CHEBYSHEV] = {"chebyshev", make_chebyshev},
    [CLMG_SMOOTHER_SPAI0] = {"spai0", make_spai0},
    [CLMG_SMOOTHER_JACOBI_RHO] = {"jacobi-rho", make_jacobi_rho},
};

enum { BUILTIN_COUNT = sizeof builtin / sizeof builtin[0] };

clmg_smoother_factory clmg_builtin_smoother_factory(clmg_smoother_type type) {
  return (unsigned)type < BUILTIN_COUNT ? builtin[type].factory : NULL;
}

const char *clmg_smoother_type_name(clmg_smoother_type type) {
  return (unsigned)type < BUILTIN_COUNT ? builtin[type].name : "unknown";
}

int clmg_smoother_type_parse(const char *name, clmg_smoother_type *type) {
  for (unsigned i = 0; name && type && i < BUILTIN_COUNT; ++i)
    if (strcmp(name, builtin[i].name) == 0) {
      *type = (clmg_smoother_type)i;
      return 1;
    }
  return 0;
}

void clmg_smoother_destroy(clmg_smoother *smoother) {
  if (!smoother)
    return;
  if (smoother->destroy)
    smoother->destroy(smoother->data);
  memset(smoother, 0, sizeof *smoother);
}

int clmg_smoother_polynomial(const clmg_smoother *smoother, int steps, const clmg_vector **w,
                             double *alpha, double *beta) {
  return clmg_diagonal_smoother_polynomial(smoother, steps, w, alpha, beta) ||
         clmg_chebyshev_smoother_polynomial(smoother, steps, w, alpha, beta);
}
