/* Shared parts of the Krylov methods (lib/solve/krylov_common.c). */
#ifndef CLMG_SOLVE_KRYLOV_COMMON_H
#define CLMG_SOLVE_KRYLOV_COMMON_H

#include "solve/internal.h"

typedef struct krylov_run {
  const char *method;
  clmg_context *context;
  clmg_krylov_options options; /* the caller's or the defaults */
  clmg_krylov_result *result;
  size_t history_capacity;
  double b_norm, target; /* stop when ||b - A x|| <= target */
} krylov_run;

/* Checks the arguments, computes ||b|| (unless b_norm, the caller's, is
 * not NAN) and the target. */
clmg_status krylov_begin(const char *method, const clmg_operator *a, const clmg_vector *b,
                         clmg_vector *x, const clmg_preconditioner *preconditioner,
                         const clmg_krylov_options *options, clmg_krylov_result *result,
                         double b_norm, krylov_run *run);
/* Records ||r|| after `iteration` iterations (history, monitor); *stop is
 * the monitor's wish to stop. */
clmg_status krylov_record(krylov_run *run, int iteration, double r_norm, int *stop);
/* r = b - A x and its norm; a non-finite norm fails. */
clmg_status krylov_true_residual(krylov_run *run, const clmg_operator *a, const clmg_vector *b,
                                 const clmg_vector *x, clmg_vector *r, double *r_norm);
/* Prefixes the context's message with the method, the iteration and the step. */
clmg_status krylov_failed_at(krylov_run *run, clmg_status status, const char *step, int iteration);
/* CLMG_ERROR_NOT_CONVERGED with the reason and the figures. */
clmg_status krylov_not_converged(krylov_run *run, const char *why);

/* *overflows: whether an entry of x 2^exponent is not finite (x is read
 * back to the host: for the rare case where a norm of x left the range). */
clmg_status krylov_any_overflow(const clmg_vector *x, int exponent, int *overflows);

/* One method's solve, as krylov_solve_scaled calls it; b_norm is ||b|| when
 * krylov_solve_scaled has it (b unscaled), NAN when the method must take it. */
typedef clmg_status (*krylov_method_solve)(const clmg_operator *a, const clmg_vector *b,
                                           clmg_vector *x,
                                           const clmg_preconditioner *preconditioner,
                                           const clmg_krylov_options *options,
                                           clmg_krylov_result *result, void *method_data,
                                           double b_norm);
/* Runs `solve` on A (x/s) = b/s when ||b|| lies far from 1 (outside
 * [2^-30, 2^30]), with s the power of two nearest ||b||, so that the inner
 * products of the method neither underflow nor overflow (a b of 1e-200 has
 * r.r = 1e-400), then scales x and the reported residuals back. Powers of
 * two scale exactly: the iterates are those of the unscaled solve wherever
 * that one stays in range. */
clmg_status krylov_solve_scaled(krylov_method_solve solve, void *method_data,
                                const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                const clmg_preconditioner *preconditioner,
                                const clmg_krylov_options *options, clmg_krylov_result *result);

#endif
