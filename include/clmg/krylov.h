/* clmg Krylov solvers: CG and preconditioned CG. The preconditioner is an
 * interface (a function and its data), so Jacobi now and the multigrid and
 * AMG preconditioners of later layers plug in the same way. */
#ifndef CLMG_KRYLOV_H
#define CLMG_KRYLOV_H

#include "clmg/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* z = M^-1 r. Must not read z before writing it. Called once per iteration. */
typedef clmg_status (*clmg_preconditioner_apply)(void *data, const clmg_vector *r, clmg_vector *z);

typedef struct clmg_preconditioner {
  clmg_preconditioner_apply apply;
  void *data;
  void (*destroy)(void *data); /* may be NULL */
  const char *name;            /* for reports, e.g. "jacobi" */
} clmg_preconditioner;

/* Jacobi: z = D^-1 r. The preconditioner keeps its own copy of D^-1 on the
 * device; release it with clmg_preconditioner_destroy. */
CLMG_API clmg_status clmg_preconditioner_jacobi(const clmg_matrix *a,
                                                clmg_preconditioner *preconditioner);
CLMG_API void clmg_preconditioner_destroy(clmg_preconditioner *preconditioner);

/* Called after every iteration when set; returning nonzero stops the solve
 * (the result then says not converged). */
typedef int (*clmg_krylov_monitor)(void *data, int iteration, double relative_residual);

typedef struct clmg_krylov_options {
  double relative_tolerance; /* stop when ||r|| <= tol * ||b|| (default 1e-8) */
  double absolute_tolerance; /* or when ||r|| <= this (default 0) */
  int max_iterations;        /* default 1000 */
  int keep_history;          /* nonzero: record ||r||/||b|| per iteration */
  clmg_krylov_monitor monitor;
  void *monitor_data;
} clmg_krylov_options;

CLMG_API void clmg_krylov_options_defaults(clmg_krylov_options *options);

typedef struct clmg_krylov_result {
  int iterations;
  int converged;
  double initial_residual;  /* ||b - A x0|| */
  double final_residual;    /* ||b - A x|| as tracked by the method */
  double relative_residual; /* final_residual / ||b|| (or / initial if b = 0) */
  double *history;          /* malloc'ed when keep_history; history[k] after k its */
  size_t history_length;
} clmg_krylov_result;

CLMG_API void clmg_krylov_result_free(clmg_krylov_result *result);

/* Solves A x = b for symmetric positive definite A, x holding the initial
 * guess. preconditioner NULL: plain CG. Reads back one scalar pair per
 * iteration. Returns CLMG_SUCCESS when converged, CLMG_ERROR_NOT_CONVERGED
 * when max_iterations ran out (x then holds the last iterate), and
 * CLMG_ERROR_INVALID_ARGUMENT when a breakdown shows A or M is not SPD. */
CLMG_API clmg_status clmg_cg(const clmg_matrix *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result);

#ifdef __cplusplus
}
#endif

#endif
