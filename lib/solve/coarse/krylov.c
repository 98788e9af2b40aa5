/* A Krylov coarse solve to a relative tolerance (Geveler et al. 2011's coarse
 * solver: Jacobi-PCG to 1e-2), Jacobi-preconditioned when the operator has
 * a diagonal. The work vectors are made once at setup: the coarse solve
 * runs once per cycle, and allocations there would cost a synchronisation
 * each (GMRES and BiCGStab make theirs per solve). CG's SPD assumption lives
 * here, in the solver that needs it. */
#include "solve/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct krylov_coarse {
  clmg_context *context;
  clmg_krylov_method method;
  double relative_tolerance;
  int max_iterations;
  clmg_vector *inverse_diagonal; /* NULL: unpreconditioned */
  clmg_preconditioner jacobi;
  clmg_cg_workspace workspace;
} krylov_coarse;

static void krylov_coarse_release(krylov_coarse *s) {
  clmg_vector_destroy(s->inverse_diagonal);
  s->inverse_diagonal = NULL;
  memset(&s->jacobi, 0, sizeof s->jacobi);
  clmg_cg_workspace_destroy(&s->workspace);
}

static void krylov_coarse_destroy(void *data) {
  krylov_coarse *s = data;
  if (!s)
    return;
  krylov_coarse_release(s);
  free(s);
}

static clmg_status jacobi_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  return clmg_pointwise_multiply((const clmg_vector *)data, r, z);
}

static clmg_status krylov_coarse_setup(void *data, const clmg_operator *a) {
  krylov_coarse *s = data;
  krylov_coarse_release(s);
  clmg_status status = CLMG_SUCCESS;
  if (a->diagonal) {
    double *d = clmg_alloc_array(a->rows, sizeof *d);
    if (!d)
      return clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "coarse solver: diagonal");
    status = clmg_operator_host_diagonal(s->context, a, "coarse Jacobi", d, NULL);
    for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; ++i)
      d[i] = 1.0 / d[i];
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(s->context, a->precision, a->rows, &s->inverse_diagonal);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_upload_doubles(s->inverse_diagonal, d);
    free(d);
    s->jacobi.apply = jacobi_apply;
    s->jacobi.data = s->inverse_diagonal;
    s->jacobi.name = "jacobi";
  }
  if (status == CLMG_SUCCESS && s->method == CLMG_KRYLOV_CG)
    status = clmg_cg_workspace_create(s->context, a->precision, a->rows, &s->workspace);
  return status;
}

static clmg_status krylov_coarse_solve(void *data, const clmg_operator *a, const clmg_vector *b,
                                       clmg_vector *x) {
  krylov_coarse *s = data;
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = s->relative_tolerance;
  options.max_iterations = s->max_iterations;
  clmg_krylov_result result = {0};
  const clmg_preconditioner *m = s->inverse_diagonal ? &s->jacobi : NULL;
  /* distributed, a failure held back (clmg_hold): the solve's first
   * reduction ends it on every process */
  clmg_status status = clmg_hold(s->context, clmg_vector_fill(x, 0.0));
  if (status == CLMG_SUCCESS)
    status = s->method == CLMG_KRYLOV_CG
                 ? clmg_cg_in_workspace(a, b, x, m, &options, &result, &s->workspace)
                 : clmg_krylov_solve(s->method, a, b, x, m, &options, &result);
  clmg_krylov_result_free(&result);
  /* an inexact coarse solve still corrects: running out of iterations is not fatal */
  if (status == CLMG_ERROR_NOT_CONVERGED && !clmg_failure_agreed(s->context)) {
    clmg_clear_message(s->context);
    status = CLMG_SUCCESS;
  }
  return status;
}

/* One CG iteration reads A and about 13 vectors. */
static double krylov_coarse_bytes(void *data, const clmg_operator *a) {
  (void)data;
  return clmg_operator_bytes(a) + 13.0 * (double)a->rows * (double)clmg_dtype_size(a->precision);
}

clmg_status clmg_coarse_solver_krylov(clmg_context *context, clmg_krylov_method method,
                                      double relative_tolerance, int max_iterations,
                                      clmg_coarse_solver *solver) {
  if (!context || !solver)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(solver, 0, sizeof *solver);
  if (method == CLMG_KRYLOV_AUTO)
    method = CLMG_KRYLOV_CG;
  if (!(relative_tolerance > 0) || max_iterations < 1 || (unsigned)method > CLMG_KRYLOV_GMRES)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Krylov coarse solver: tolerance %g must be > 0, iterations %d >= 1, and the "
                     "method known",
                     relative_tolerance, max_iterations);
  krylov_coarse *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Krylov coarse solver");
  s->context = context;
  s->method = method;
  s->relative_tolerance = relative_tolerance;
  s->max_iterations = max_iterations;
  solver->data = s;
  solver->name = "pcg";
  solver->setup = krylov_coarse_setup;
  solver->solve = krylov_coarse_solve;
  solver->bytes = krylov_coarse_bytes;
  solver->destroy = krylov_coarse_destroy;
  return CLMG_SUCCESS;
}
