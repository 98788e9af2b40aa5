/* Conjugate gradients, plain and preconditioned, in the Chronopoulos-Gear
 * form (Chronopoulos & Gear 1989; Ghysels & Vanroose 2014, Alg. 2): the
 * same iterates as Hestenes-Stiefel CG in exact arithmetic, but all inner
 * products of an iteration are taken together, so the host reads back once:
 *   (gamma, delta, rr) = (r . u, w . u, r . r)    one reduction, one read-back
 *   beta = gamma / gamma_old;  alpha = gamma / (delta - beta gamma / alpha_old)
 *   p = u + beta p; s = w + beta s; x += alpha p; r -= alpha s   one pass
 *   u = M^-1 r;  w = A u                          preconditioner, one SpMV
 * Here s = A p and delta - beta gamma / alpha_old = p . A p. Without a
 * preconditioner u is r. The traffic equals that of the textbook PCG (13
 * vector passes with M, 12 without), with one synchronisation instead of two.
 *
 * The stopping rule is on the recursively updated residual,
 * ||r|| <= max(relative_tolerance ||b||, absolute_tolerance); r . r comes
 * with the other two products, so the test costs nothing. Converged means
 * the residual recomputed from x meets it and x . x (in the same
 * reduction) is finite. */
#include "solve/krylov_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clmg_krylov_options_defaults(clmg_krylov_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->relative_tolerance = 1e-8;
  options->absolute_tolerance = 0.0;
  options->max_iterations = 1000;
  options->gmres_restart = 30;
}

double clmg_default_tolerance(clmg_dtype precision) {
  return precision == CLMG_FLOAT ? CLMG_FLOAT_DEFAULT_TOLERANCE : 1e-8;
}

static const char *const method_names[] = {"auto", "cg", "bicgstab", "gmres"};

const char *clmg_krylov_method_name(clmg_krylov_method method) {
  return (unsigned)method < 4 ? method_names[method] : "unknown";
}

int clmg_krylov_method_parse(const char *name, clmg_krylov_method *method) {
  for (unsigned i = 0; name && method && i < 4; ++i)
    if (strcmp(name, method_names[i]) == 0) {
      *method = (clmg_krylov_method)i;
      return 1;
    }
  return 0;
}

static clmg_status bicgstab_solve(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                  const clmg_preconditioner *preconditioner,
                                  const clmg_krylov_options *options, clmg_krylov_result *result,
                                  void *unused, double b_norm) {
  (void)unused;
  (void)b_norm; /* the method takes its own */
  return clmg_bicgstab_solve(a, b, x, preconditioner, options, result);
}

clmg_status clmg_krylov_solve(clmg_krylov_method method, const clmg_operator *a,
                              const clmg_vector *b, clmg_vector *x,
                              const clmg_preconditioner *preconditioner,
                              const clmg_krylov_options *options, clmg_krylov_result *result) {
  clmg_krylov_result unused;
  if (!result)
    result = &unused;
  clmg_status status;
  switch (method) {
  case CLMG_KRYLOV_CG:
    status = clmg_cg_operator(a, b, x, preconditioner, options, result);
    break;
  case CLMG_KRYLOV_BICGSTAB:
    status = krylov_solve_scaled(bicgstab_solve, NULL, a, b, x, preconditioner, options, result);
    break;
  case CLMG_KRYLOV_AUTO:
  case CLMG_KRYLOV_GMRES:
    status = krylov_solve_scaled(clmg_gmres_method, NULL, a, b, x, preconditioner, options, result);
    break;
  default:
    memset(result, 0, sizeof *result);
    status = a && a->context ? clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                                         "krylov solve: unknown method %d", (int)method)
                             : CLMG_ERROR_INVALID_ARGUMENT;
  }
  if (result == &unused)
    clmg_krylov_result_free(&unused);
  return status;
}

void clmg_krylov_result_free(clmg_krylov_result *result) {
  if (!result)
    return;
  free(result->history);
  result->history = NULL;
  result->history_length = 0;
}

/* ---- preconditioners ---- */

static clmg_status jacobi_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  return clmg_pointwise_multiply((const clmg_vector *)data, r, z);
}

static void jacobi_destroy(void *data) {
  clmg_vector_destroy(data);
}

clmg_status clmg_preconditioner_jacobi(const clmg_matrix *a, clmg_preconditioner *preconditioner) {
  if (!a || !preconditioner)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(preconditioner, 0, sizeof *preconditioner);
  clmg_context *context = clmg_matrix_context(a);
  clmg_clear_message(context);
  if (clmg_matrix_rows(a) != clmg_matrix_cols(a))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "jacobi preconditioner: the matrix is %zu x %zu, not square",
                     clmg_matrix_rows(a), clmg_matrix_cols(a));
  clmg_vector *inverse_diagonal = NULL;
  clmg_status status =
      clmg_vector_create(context, clmg_matrix_precision(a), clmg_matrix_rows(a), &inverse_diagonal);
  if (status == CLMG_SUCCESS)
    status = clmg_matrix_inverse_diagonal(a, inverse_diagonal);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(inverse_diagonal);
    return status;
  }
  preconditioner->apply = jacobi_apply;
  preconditioner->data = inverse_diagonal;
  preconditioner->destroy = jacobi_destroy;
  preconditioner->name = "jacobi";
  return CLMG_SUCCESS;
}

void clmg_preconditioner_destroy(clmg_preconditioner *preconditioner) {
  if (!preconditioner)
    return;
  if (preconditioner->destroy)
    preconditioner->destroy(preconditioner->data);
  memset(preconditioner, 0, sizeof *preconditioner);
}

/* ---- CG ---- */

/* Everything one solve needs besides its arguments: work vectors (allocated
 * once per solve), the residual history and the scalars of the recurrence. */
typedef struct cg_state {
  clmg_context *context;
  const clmg_preconditioner *preconditioner; /* NULL: plain CG */
  clmg_vector *r, *u, *w, *p, *s;            /* u is r when there is no preconditioner */
  int borrowed;                              /* the vectors belong to a clmg_cg_workspace */
  clmg_krylov_result *result;
  int keep_history;
  size_t history_capacity;
  double b_norm; /* ||b|| when the caller has it, NAN otherwise */
} cg_state;

/* Prefixes the message a failed call left in the context with where in the
 * solve it failed, so "spmv: ..." reads "cg iteration 7: spmv: ...". */
static clmg_status failed_at(cg_state *s, clmg_status status, const char *step, int iteration) {
  if (clmg_failure_agreed(s->context)) /* every process's: "rank R: ..." as it is */
    return status;
  char inner[CLMG_MESSAGE_SIZE];
  snprintf(inner, sizeof inner, "%s", clmg_context_message(s->context));
  const char *separator = inner[0] ? ": " : ""; /* a user's preconditioner may leave none */
  if (iteration > 0)
    return clmg_fail(s->context, status, "cg iteration %d: %s%s%s", iteration, step, separator,
                     inner);
  return clmg_fail(s->context, status, "cg setup: %s%s%s", step, separator, inner);
}

clmg_status clmg_history_append(clmg_context *context, clmg_krylov_result *result, size_t *capacity,
                                double relative_residual) {
  if (result->history_length == *capacity) {
    size_t grown_capacity = *capacity ? 2 * *capacity : 64;
    double *grown = realloc(result->history, grown_capacity * sizeof *grown);
    if (!grown)
      return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "no memory for a residual history of %zu entries", grown_capacity);
    result->history = grown;
    *capacity = grown_capacity;
  }
  result->history[result->history_length++] = relative_residual;
  return CLMG_SUCCESS;
}

static clmg_status record_history(cg_state *s, double relative_residual) {
  if (!s->keep_history)
    return CLMG_SUCCESS;
  return clmg_history_append(s->context, s->result, &s->history_capacity, relative_residual);
}

/* Checks the arguments and makes the work vectors. */
static clmg_status cg_begin(const clmg_operator *a, const clmg_vector *b, const clmg_vector *x,
                            const clmg_preconditioner *preconditioner,
                            const clmg_krylov_options *options, cg_state *s) {
  clmg_context *context = s->context;
  if (!a || !a->apply || !x)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "cg: NULL %s", x ? "operator" : "x");
  if (a->context != context || clmg_vector_context(x) != context)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "cg: the matrix and the vectors belong to different contexts");
  size_t n = a->rows;
  if (a->cols != n)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "cg: the matrix is %zu x %zu; CG needs a square (SPD) matrix", n, a->cols);
  clmg_dtype type = a->precision;
  const clmg_vector *given[] = {b, x};
  const char *names[] = {"b", "x"};
  for (int i = 0; i < 2; ++i) {
    if (clmg_vector_length(given[i]) != n)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "cg: %s has %zu elements, the %zu x %zu matrix needs %zu", names[i],
                       clmg_vector_length(given[i]), n, n, n);
    if (clmg_vector_type(given[i]) != type)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "cg: %s is %s but the matrix is %s",
                       names[i], clmg_dtype_name(clmg_vector_type(given[i])),
                       clmg_dtype_name(type));
  }
  if (preconditioner && !preconditioner->apply)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "cg: the preconditioner has no apply function");
  if (!(options->relative_tolerance >= 0) || !(options->absolute_tolerance >= 0) ||
      options->max_iterations < 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "cg: tolerances and max_iterations must be >= 0 (got relative %g, "
                     "absolute %g, max_iterations %d)",
                     options->relative_tolerance, options->absolute_tolerance,
                     options->max_iterations);

  /* p and s start at zero, so the first update (beta = 0) is p = u, s = w */
  if (s->borrowed) {
    clmg_status status = clmg_vector_fill(s->p, 0.0);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_fill(s->s, 0.0);
    if (!preconditioner)
      s->u = s->r;
    return status == CLMG_SUCCESS ? status
                                  : clmg_hold(context, failed_at(s, status, "work vectors", 0));
  }
  clmg_vector **work[] = {&s->r, &s->w, &s->p, &s->s, &s->u};
  int count = preconditioner ? 5 : 4;
  for (int i = 0; i < count; ++i) {
    clmg_status status = clmg_vector_create(context, type, n, work[i]);
    if (status != CLMG_SUCCESS) /* agreed on before the solve (cg_solve_unscaled) */
      return clmg_hold(context, failed_at(s, status, "work vectors", 0));
  }
  if (!preconditioner)
    s->u = s->r;
  return CLMG_SUCCESS;
}

static void cg_end(cg_state *s) {
  if (s->borrowed)
    return;
  if (s->u != s->r)
    clmg_vector_destroy(s->u);
  clmg_vector_destroy(s->r);
  clmg_vector_destroy(s->w);
  clmg_vector_destroy(s->p);
  clmg_vector_destroy(s->s);
}

/* u = M^-1 r (nothing without a preconditioner), then w = A u. */
static clmg_status precondition_and_multiply(const clmg_operator *a, cg_state *s, int iteration) {
  clmg_status status = CLMG_SUCCESS;
  if (s->preconditioner) {
    status = s->preconditioner->apply(s->preconditioner->data, s->r, s->u);
    if (status != CLMG_SUCCESS) /* distributed, held: A u still exchanges its halo */
      status = clmg_hold(
          s->context,
          failed_at(s, status, s->preconditioner->name ? s->preconditioner->name : "preconditioner",
                    iteration));
    if (status != CLMG_SUCCESS)
      return status;
  }
  status = clmg_operator_apply(a, 1.0, s->u, 0.0, s->w);
  return status == CLMG_SUCCESS ? status
                                : clmg_hold(s->context, failed_at(s, status, "w = A u", iteration));
}

static clmg_status not_spd_preconditioner(cg_state *s, int iteration, double rz) {
  const char *name = s->preconditioner->name ? s->preconditioner->name : "the preconditioner";
  char why[640] = "";
  if (s->preconditioner->explain)
    s->preconditioner->explain(s->preconditioner->data, why, sizeof why);
  return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                   "cg breakdown at iteration %d: r.z = %g with r != 0; the preconditioner (%s) "
                   "is not symmetric positive definite%s%s",
                   iteration, rz, name, why[0] ? ": " : "", why);
}

static clmg_status cg_run(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                          const clmg_krylov_options *options, cg_state *s) {
  clmg_krylov_result *result = s->result;
  double b_norm = s->b_norm;
  clmg_status status = isnan(b_norm) ? clmg_nrm2(b, &b_norm) : CLMG_SUCCESS;
  if (status != CLMG_SUCCESS)
    return failed_at(s, status, "||b||", 0);
  if (!isfinite(b_norm))
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT, "cg: b holds Inf or NaN");
  if (b_norm == 0) {
    /* A x = 0 has the solution x = 0 for nonsingular A, exactly. */
    result->converged = 1;
    status = clmg_hold(s->context, clmg_vector_fill(x, 0.0));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(s->context, record_history(s, 0.0));
    if (status == CLMG_SUCCESS && options->monitor)
      options->monitor(options->monitor_data, 0, 0.0);
    return status;
  }
  status = clmg_operator_defect(a, b, x, s->r);
  if (status != CLMG_SUCCESS)
    status = clmg_hold(s->context, failed_at(s, status, "r = b - A x", 0));
  if (status != CLMG_SUCCESS)
    return status;
  status = precondition_and_multiply(a, s, 0);
  if (status != CLMG_SUCCESS)
    return status;

  double threshold = fmax(options->relative_tolerance * b_norm, options->absolute_tolerance);
  double gamma_old = 1, alpha_old = 1;
  int first = 1, restarts_left = 3; /* first: p and s are 0 (start or restart) */
  int restarted = 0;                /* this iteration's residual is recorded already, from x */
  for (int iteration = 0;; ++iteration) {
    double gamma = 0, delta = 0, rr = 0;
    status = clmg_dot3(s->r, s->u, s->w, &gamma, &delta, &rr);
    if (status != CLMG_SUCCESS)
      return failed_at(s, status, "r.u, w.u, r.r", iteration);
    if (!isfinite(rr) && iteration == 0)
      return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "cg: the initial residual b - A x0 holds Inf or NaN");
    if (!isfinite(rr))
      return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "cg iteration %d: the residual became Inf or NaN; the matrix or the "
                       "preconditioner is not symmetric positive definite, or badly scaled",
                       iteration);
    double r_norm = sqrt(rr);
    if (iteration == 0 && first)
      result->initial_residual = r_norm;
    int restart = 0;
    if (r_norm <= threshold) {
      /* The recurrence says converged; only the residual of x counts, and
       * x . x comes with it (one read-back): an x of Inf can leave a
       * residual read as small, so x must be finite too. */
      double rx = 0, xx = 0, true_rr = 0;
      status = clmg_hold(s->context, clmg_operator_defect(a, b, x, s->r));
      if (status == CLMG_SUCCESS)
        status = clmg_dot3(s->r, x, x, &rx, &xx, &true_rr);
      if (status != CLMG_SUCCESS)
        return failed_at(s, status, "true residual", iteration);
      r_norm = sqrt(true_rr);
      int x_bad = !isfinite(xx) && r_norm <= threshold;
      if (x_bad && isinf(xx)) { /* entries past sqrt(DBL_MAX) square to Inf: each looked at */
        status = krylov_any_overflow(x, 0, &x_bad);
        if (status != CLMG_SUCCESS)
          return failed_at(s, status, "x", iteration);
      }
      if (x_bad)
        return clmg_fail(s->context, CLMG_ERROR_NOT_CONVERGED,
                         "cg iteration %d: the residual recomputed from x is %.3e, but x holds "
                         "Inf or NaN (x . x = %g)",
                         iteration, r_norm, xx);
      restart = r_norm > threshold;
    }
    result->iterations = iteration;
    result->final_residual = r_norm;
    result->relative_residual = r_norm / b_norm;
    int stop = 0;
    if (!restarted) {
      status = clmg_hold(s->context, record_history(s, result->relative_residual));
      if (status != CLMG_SUCCESS)
        return status;
      if (options->monitor)
        stop = options->monitor(options->monitor_data, iteration, result->relative_residual);
    }
    restarted = 0;
    if (r_norm <= threshold) {
      result->converged = 1;
      return CLMG_SUCCESS;
    }
    if (restart) {
      if (restarts_left-- == 0 || iteration == options->max_iterations)
        return clmg_fail(s->context, CLMG_ERROR_NOT_CONVERGED,
                         "cg: stalled at the rounding floor: the recurrence reached the "
                         "tolerance %g, but the residual recomputed from x is %.3e relative "
                         "(after %d iterations, %s arithmetic)",
                         options->relative_tolerance, result->relative_residual, iteration,
                         clmg_dtype_name(a->precision));
      /* restart from x: r is b - A x; p = s = 0, u = M^-1 r, w = A u */
      status = clmg_hold(s->context, clmg_vector_fill(s->p, 0.0));
      if (status == CLMG_SUCCESS)
        status = clmg_hold(s->context, clmg_vector_fill(s->s, 0.0));
      if (status == CLMG_SUCCESS)
        status = precondition_and_multiply(a, s, iteration);
      if (status != CLMG_SUCCESS)
        return status;
      first = 1;
      restarted = 1;
      --iteration; /* the restart is not an iteration */
      continue;
    }
    if (stop)
      return clmg_fail(s->context, CLMG_ERROR_NOT_CONVERGED,
                       "cg: stopped by the monitor after %d iterations (relative residual %g)",
                       iteration, result->relative_residual);
    if (iteration == options->max_iterations)
      return clmg_fail(s->context, CLMG_ERROR_NOT_CONVERGED,
                       "cg: not converged after %d iterations (relative residual %g, tolerance %g)",
                       options->max_iterations, result->relative_residual,
                       options->relative_tolerance);
    if (s->preconditioner && !(gamma > 0))
      return not_spd_preconditioner(s, iteration, gamma);

    double beta = first ? 0.0 : gamma / gamma_old;
    double p_ap = first ? delta : delta - beta * gamma / alpha_old;
    first = 0;
    /* For SPD A, p.Ap > 0 whenever r != 0; !(p_ap > 0) also catches NaN. */
    if (!(p_ap > 0))
      return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "cg breakdown at iteration %d: p.Ap = %g <= 0; the matrix is not "
                       "symmetric positive definite",
                       iteration + 1, p_ap);
    double alpha = gamma / p_ap;
    status = clmg_cg_step(alpha, beta, s->u, s->w, s->p, s->s, x, s->r);
    if (status != CLMG_SUCCESS)
      status = clmg_hold(s->context, failed_at(s, status, "p, s, x, r update", iteration + 1));
    if (status != CLMG_SUCCESS)
      return status;
    status = precondition_and_multiply(a, s, iteration + 1);
    if (status != CLMG_SUCCESS)
      return status;
    gamma_old = gamma;
    alpha_old = alpha;
  }
}

/* CG with the work vectors of `workspace` (NULL: allocated for this solve). */
static clmg_status cg_solve_unscaled(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                     const clmg_preconditioner *preconditioner,
                                     const clmg_krylov_options *options, clmg_krylov_result *result,
                                     void *workspace_data, double b_norm) {
  clmg_cg_workspace *workspace = workspace_data;
  clmg_krylov_result unused;
  if (!result)
    result = &unused;
  memset(result, 0, sizeof *result);
  clmg_context *context = clmg_vector_context(b);
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT; /* no context to hold a message */
  clmg_clear_message(context);
  clmg_krylov_options defaults;
  if (!options) {
    clmg_krylov_options_defaults(&defaults);
    if (a && a->precision == CLMG_FLOAT)
      defaults.relative_tolerance = CLMG_FLOAT_DEFAULT_TOLERANCE;
    options = &defaults;
  }

  cg_state state = {0};
  state.context = context;
  state.preconditioner = preconditioner;
  state.result = result;
  state.keep_history = options->keep_history;
  state.b_norm = b_norm;
  if (workspace) {
    state.borrowed = 1;
    state.r = workspace->r;
    state.u = workspace->u;
    state.w = workspace->w;
    state.p = workspace->p;
    state.s = workspace->s;
  }
  clmg_context_enter(context);
  clmg_status status = cg_begin(a, b, x, preconditioner, options, &state);
  /* a process without its work vectors goes no further: agreed first */
  if (!state.borrowed)
    status = clmg_context_settle(context, status);
  if (status == CLMG_SUCCESS)
    status = cg_run(a, b, x, options, &state);
  cg_end(&state);
  if (result == &unused)
    clmg_krylov_result_free(&unused);
  return clmg_context_leave(context, status);
}

static clmg_status cg_solve(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                            const clmg_preconditioner *preconditioner,
                            const clmg_krylov_options *options, clmg_krylov_result *result,
                            clmg_cg_workspace *workspace) {
  return krylov_solve_scaled(cg_solve_unscaled, workspace, a, b, x, preconditioner, options,
                             result);
}

clmg_status clmg_cg(const clmg_matrix *a, const clmg_vector *b, clmg_vector *x,
                    const clmg_preconditioner *preconditioner, const clmg_krylov_options *options,
                    clmg_krylov_result *result) {
  if (result)
    memset(result, 0, sizeof *result);
  clmg_operator op;
  clmg_status status =
      a ? clmg_operator_from_matrix((clmg_matrix *)a, 0, &op)
        : clmg_fail(clmg_vector_context(b), CLMG_ERROR_INVALID_ARGUMENT, "cg: NULL matrix");
  if (status != CLMG_SUCCESS)
    return status;
  status = cg_solve(&op, b, x, preconditioner, options, result, NULL);
  clmg_operator_destroy(&op);
  return status;
}

clmg_status clmg_cg_operator(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result) {
  return cg_solve(a, b, x, preconditioner, options, result, NULL);
}

clmg_status clmg_cg_workspace_create(clmg_context *context, clmg_dtype type, size_t n,
                                     clmg_cg_workspace *workspace) {
  memset(workspace, 0, sizeof *workspace);
  clmg_vector **work[] = {&workspace->r, &workspace->u, &workspace->w, &workspace->p,
                          &workspace->s};
  for (int i = 0; i < 5; ++i) {
    clmg_status status = clmg_vector_create(context, type, n, work[i]);
    if (status != CLMG_SUCCESS) {
      clmg_cg_workspace_destroy(workspace);
      return status;
    }
  }
  return CLMG_SUCCESS;
}

void clmg_cg_workspace_destroy(clmg_cg_workspace *workspace) {
  clmg_vector_destroy(workspace->r);
  clmg_vector_destroy(workspace->u);
  clmg_vector_destroy(workspace->w);
  clmg_vector_destroy(workspace->p);
  clmg_vector_destroy(workspace->s);
  memset(workspace, 0, sizeof *workspace);
}

clmg_status clmg_cg_in_workspace(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                 const clmg_preconditioner *preconditioner,
                                 const clmg_krylov_options *options, clmg_krylov_result *result,
                                 clmg_cg_workspace *workspace) {
  return cg_solve(a, b, x, preconditioner, options, result, workspace);
}
