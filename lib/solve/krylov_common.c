/* What BiCGStab and GMRES share: argument checks, ||b||, the stopping
 * target, the residual history, the monitor and the true-residual test. */
#include "solve/krylov_common.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

clmg_status krylov_begin(const char *method, const clmg_operator *a, const clmg_vector *b,
                         clmg_vector *x, const clmg_preconditioner *preconditioner,
                         const clmg_krylov_options *options, clmg_krylov_result *result,
                         double b_norm, krylov_run *run) {
  memset(run, 0, sizeof *run);
  memset(result, 0, sizeof *result);
  run->method = method;
  run->result = result;
  clmg_krylov_options_defaults(&run->options);
  if (options)
    run->options = *options;
  else if (a && a->precision == CLMG_FLOAT)
    run->options.relative_tolerance = CLMG_FLOAT_DEFAULT_TOLERANCE;
  clmg_context *context = a ? a->context : clmg_vector_context(b);
  run->context = context;
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (!a || !a->apply)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s: the operator has no apply", method);
  if (a->rows != a->cols)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the operator is %zu x %zu; it must be square", method, a->rows, a->cols);
  clmg_status status = clmg_operator_check(a, x, b, method);
  if (status != CLMG_SUCCESS)
    return status;
  if (preconditioner && !preconditioner->apply)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the preconditioner has no apply function", method);
  const clmg_krylov_options *o = &run->options;
  if (!(o->relative_tolerance >= 0) || !(o->absolute_tolerance >= 0) || o->max_iterations < 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: tolerances and max_iterations must be >= 0 (got relative %g, absolute "
                     "%g, max_iterations %d)",
                     method, o->relative_tolerance, o->absolute_tolerance, o->max_iterations);
  run->b_norm = b_norm;
  status = isnan(b_norm) ? clmg_nrm2(b, &run->b_norm) : CLMG_SUCCESS;
  if (status != CLMG_SUCCESS)
    return status;
  if (!isfinite(run->b_norm))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s: b holds Inf or NaN", method);
  run->target = fmax(o->relative_tolerance * run->b_norm, o->absolute_tolerance);
  return CLMG_SUCCESS;
}

clmg_status krylov_record(krylov_run *run, int iteration, double r_norm, int *stop) {
  clmg_krylov_result *result = run->result;
  double scale = run->b_norm > 0 ? run->b_norm : 1.0;
  if (iteration == 0 && result->history_length == 0)
    result->initial_residual = r_norm;
  result->iterations = iteration;
  result->final_residual = r_norm;
  result->relative_residual = r_norm / scale;
  *stop = 0;
  if (run->options.keep_history) {
    /* A restart from x records its iteration again, now with the residual
     * recomputed from x: it replaces the recurrence's entry, so history[k]
     * stays the residual after k iterations. */
    if (iteration > 0 && result->history_length == (size_t)iteration + 1) {
      result->history[iteration] = result->relative_residual;
    } else {
      clmg_status status = clmg_history_append(run->context, result, &run->history_capacity,
                                               result->relative_residual);
      status = clmg_hold(run->context, status); /* distributed: the next reduction ends it */
      if (status != CLMG_SUCCESS)
        return status;
    }
  }
  if (run->options.monitor)
    *stop = run->options.monitor(run->options.monitor_data, iteration, result->relative_residual);
  return CLMG_SUCCESS;
}

clmg_status krylov_true_residual(krylov_run *run, const clmg_operator *a, const clmg_vector *b,
                                 const clmg_vector *x, clmg_vector *r, double *r_norm) {
  clmg_status status = clmg_hold(run->context, clmg_operator_defect(a, b, x, r));
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(r, r_norm);
  if (status == CLMG_SUCCESS && !isfinite(*r_norm))
    status = clmg_fail(run->context, CLMG_ERROR_NOT_CONVERGED,
                       "%s: the residual became Inf or NaN (the method diverged or the operator "
                       "is singular)",
                       run->method);
  return status;
}

clmg_status krylov_failed_at(krylov_run *run, clmg_status status, const char *step, int iteration) {
  if (clmg_failure_agreed(run->context)) /* every process's: "rank R: ..." as it is */
    return status;
  char inner[CLMG_MESSAGE_SIZE];
  snprintf(inner, sizeof inner, "%s", clmg_context_message(run->context));
  return clmg_fail(run->context, status, "%s iteration %d: %s%s%s", run->method, iteration, step,
                   inner[0] ? ": " : "", inner);
}

clmg_status krylov_not_converged(krylov_run *run, const char *why) {
  return clmg_fail(run->context, CLMG_ERROR_NOT_CONVERGED,
                   "%s: %s after %d iterations (relative residual %.3e of x, tolerance %g)",
                   run->method, why, run->result->iterations, run->result->relative_residual,
                   run->options.relative_tolerance);
}

/* *overflows 1 when an entry of x times 2^exponent is not finite (x read
 * back: the rare case of a solution near the largest double). */
clmg_status krylov_any_overflow(const clmg_vector *x, int exponent, int *overflows) {
  size_t n = clmg_vector_length(x);
  double *host = clmg_alloc_array(n ? n : 1, sizeof *host);
  if (!host)
    return clmg_fail(clmg_vector_context(x), CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory to check %zu solution entries", n);
  clmg_status status = clmg_vector_download_doubles(x, host);
  *overflows = 0;
  for (size_t i = 0; status == CLMG_SUCCESS && i < n && !*overflows; i++)
    *overflows = !isfinite(ldexp(host[i], exponent));
  free(host);
  return status;
}

/* The binary exponent of ||b|| where the norm itself exceeds the largest
 * double though b may be finite (entries near it): measured on b 2^-512;
 * 0 where b holds Inf or NaN (the method reports it). */
static int beyond_largest_exponent(const clmg_vector *b) {
  enum { SHIFT = 512 };
  clmg_vector *copy = NULL;
  double norm = 0;
  int exponent = 0;
  clmg_status status =
      clmg_vector_create(clmg_vector_context(b), clmg_vector_type(b), clmg_vector_length(b), &copy);
  if (status == CLMG_SUCCESS)
    status = clmg_copy(b, copy);
  if (status == CLMG_SUCCESS)
    status = clmg_scal(ldexp(1.0, -SHIFT), copy);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(copy, &norm);
  clmg_vector_destroy(copy);
  if (status == CLMG_SUCCESS && isfinite(norm) && norm > 0) {
    frexp(norm, &exponent);
    exponent += SHIFT;
  }
  return exponent;
}

clmg_status krylov_solve_scaled(krylov_method_solve solve, void *method_data,
                                const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                const clmg_preconditioner *preconditioner,
                                const clmg_krylov_options *options, clmg_krylov_result *result) {
  enum { LARGEST_UNSCALED_EXPONENT = 30 };
  clmg_context *context = clmg_vector_context(b);
  double b_norm = 0;
  int exponent = 0, have_norm = 0;
  /* Anything unusual (NULL or mismatched arguments) is the method's to report. */
  if (a && context && x && clmg_vector_context(x) == context &&
      clmg_vector_type(b) == clmg_vector_type(x) &&
      clmg_vector_length(b) == clmg_vector_length(x) && clmg_nrm2(b, &b_norm) == CLMG_SUCCESS) {
    have_norm = 1;
    if (isfinite(b_norm) && b_norm > 0)
      frexp(b_norm, &exponent);
    else if (isinf(b_norm))
      exponent = beyond_largest_exponent(b);
  }
  if (abs(exponent) <= LARGEST_UNSCALED_EXPONENT) /* the norm passed on: one read-back less */
    return solve(a, b, x, preconditioner, options, result, method_data, have_norm ? b_norm : NAN);

  /* 2^e itself overflows for ||b|| near DBL_MAX (e = 1024): x goes back up
   * in two halves */
  const double down = ldexp(1.0, -exponent);
  const double up_first = ldexp(1.0, exponent / 2), up_second = ldexp(1.0, exponent - exponent / 2);
  clmg_vector *b_scaled = NULL;
  clmg_status status =
      clmg_vector_create(context, clmg_vector_type(b), clmg_vector_length(b), &b_scaled);
  if (status == CLMG_SUCCESS)
    status = clmg_copy(b, b_scaled);
  if (status == CLMG_SUCCESS)
    status = clmg_scal(down, b_scaled);
  if (status == CLMG_SUCCESS)
    status = clmg_scal(down, x);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(b_scaled);
    if (result)
      memset(result, 0, sizeof *result);
    return status;
  }
  clmg_krylov_options scaled_options;
  if (options) { /* NULL keeps the per-precision defaults; their absolute tolerance is 0 */
    scaled_options = *options;
    scaled_options.absolute_tolerance *= down;
    options = &scaled_options;
  }
  status = solve(a, b_scaled, x, preconditioner, options, result, method_data, NAN);
  clmg_vector_destroy(b_scaled);
  char message[CLMG_MESSAGE_SIZE];
  snprintf(message, sizeof message, "%s", clmg_context_message(context));
  /* a solution that overflows once scaled back is no success: |x_i| <=
   * ||x||, so a finite ||x|| 2^e clears every entry; else each is looked at */
  double x_norm = 0;
  clmg_status scale_back = CLMG_SUCCESS;
  int overflows = 0;
  if (status == CLMG_SUCCESS)
    scale_back = clmg_nrm2(x, &x_norm);
  if (status == CLMG_SUCCESS && scale_back == CLMG_SUCCESS && !isfinite(ldexp(x_norm, exponent)))
    scale_back = krylov_any_overflow(x, exponent, &overflows);
  if (scale_back == CLMG_SUCCESS) /* x holds the last iterate even on failure */
    scale_back = clmg_scal(up_first, x);
  if (scale_back == CLMG_SUCCESS)
    scale_back = clmg_scal(up_second, x);
  if (result) {
    result->initial_residual = ldexp(result->initial_residual, exponent);
    result->final_residual = ldexp(result->final_residual, exponent);
  }
  if (scale_back != CLMG_SUCCESS)
    return scale_back;
  if (status != CLMG_SUCCESS) /* the method's message, not clmg_scal's cleared one */
    return clmg_fail(context, status, "%s", message);
  if (overflows) {
    if (result)
      result->converged = 0;
    return clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                     "the solution does not fit in %s: the method converged on b scaled by "
                     "2^%d, but an entry of x overflows once scaled back",
                     clmg_dtype_name(clmg_vector_type(x)), -exponent);
  }
  return status;
}
