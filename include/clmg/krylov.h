/** @file
 * clmg Krylov solvers: CG for symmetric positive definite operators,
 * BiCGStab and restarted GMRES(m) for general ones, all on clmg_operator
 * (clmg_cg also takes a device matrix directly). The preconditioner is an
 * interface (a function and its data), so Jacobi, the multigrid cycle and
 * later AMG plug in the same way, in the Krylov method's precision or in
 * another one (clmg_preconditioner_in_precision). */
#ifndef CLMG_KRYLOV_H
#define CLMG_KRYLOV_H

#include "clmg/operator.h"

#ifdef __cplusplus
extern "C" {
#endif

/** z = M^-1 r. Must not read z before writing it. Called once per iteration. */
typedef clmg_status (*clmg_preconditioner_apply)(void *data, const clmg_vector *r, clmg_vector *z);

/** A preconditioner M: its apply and data, filled by the library (Jacobi, a multigrid
 * cycle, a mixed-precision wrapper) or by a caller. */
typedef struct clmg_preconditioner {
  clmg_preconditioner_apply apply; /**< z = M^-1 r; required */
  void *data;                      /**< passed to apply, destroy and explain */
  void (*destroy)(void *data);     /**< may be NULL */
  const char *name;                /**< for reports, e.g. "jacobi" */
  /** Optional: after a Krylov method found the preconditioner not SPD (a
   * breakdown), writes what in it is to blame and what to try (a
   * multigrid cycle names the level whose smoother diverges). */
  void (*explain)(void *data, char *text, size_t size);
} clmg_preconditioner;

/** Jacobi: z = D^-1 r. The preconditioner keeps its own copy of D^-1 on the
 * device; release it with clmg_preconditioner_destroy. */
CLMG_API clmg_status clmg_preconditioner_jacobi(const clmg_matrix *a,
                                                clmg_preconditioner *preconditioner);
/** Calls the preconditioner's destroy (when set) on its data and zeroes the struct; NULL
 * and an all-zero preconditioner are fine. */
CLMG_API void clmg_preconditioner_destroy(clmg_preconditioner *preconditioner);

/** Mixed precision: wraps `inner`, which works on vectors of inner_type, as a
 * preconditioner on vectors of outer_type (n entries): r is converted to
 * inner_type, inner runs, z is converted back, so a float multigrid cycle
 * can precondition a double Krylov method. The wrapper takes ownership of
 * inner (and destroys it with itself). */
CLMG_API clmg_status clmg_preconditioner_in_precision(clmg_context *context, size_t n,
                                                      clmg_dtype outer_type, clmg_dtype inner_type,
                                                      clmg_preconditioner *inner,
                                                      clmg_preconditioner *preconditioner);

/** Called after every iteration when set; returning nonzero stops the solve
 * (the result then says not converged). */
typedef int (*clmg_krylov_monitor)(void *data, int iteration, double relative_residual);

/** The Krylov methods of clmg_krylov_solve.
 *
 * CLMG_KRYLOV_AUTO is resolved by what is known of A, in one place: a
 * solver made by the options layer (clmg/solver.h, krylov=auto) takes CG
 * when A is symmetric with a positive diagonal and GMRES otherwise
 * (clmg_solver_auto_method; around a caller's operator, CG where the caller
 * says it is symmetric). Where nothing is known of A it is GMRES: clmg_krylov_solve
 * given AUTO directly. A multigrid hierarchy's Krylov coarse solve
 * (clmg_multigrid_options.coarse_method) takes it as CG, the coarse
 * operators of clmg's SPD hierarchies; say GMRES there for others. */
typedef enum clmg_krylov_method {
  CLMG_KRYLOV_AUTO = 0, /**< resolved as above */
  CLMG_KRYLOV_CG,       /**< conjugate gradients, for symmetric positive definite A and M */
  CLMG_KRYLOV_BICGSTAB, /**< BiCGStab, for any square A */
  CLMG_KRYLOV_GMRES     /**< restarted (flexible) GMRES(m), for any square A */
} clmg_krylov_method;

/** The method's name: "auto", "cg", "bicgstab" or "gmres" ("unknown" for any other
 * value); a static string. */
CLMG_API const char *clmg_krylov_method_name(clmg_krylov_method method);
/** "auto", "cg", "bicgstab", "gmres"; returns 0 if unknown. */
CLMG_API int clmg_krylov_method_parse(const char *name, clmg_krylov_method *method);

/** When a Krylov solve stops and what it records; fill it with
 * clmg_krylov_options_defaults. */
typedef struct clmg_krylov_options {
  double relative_tolerance;   /**< stop when ||r|| <= tol * ||b|| (default 1e-8) */
  double absolute_tolerance;   /**< or when ||r|| <= this (default 0) */
  int max_iterations;          /**< default 1000 */
  int keep_history;            /**< nonzero: record ||r||/||b|| per iteration */
  clmg_krylov_monitor monitor; /**< called after every iteration when set (default NULL) */
  void *monitor_data;          /**< passed to monitor */
  int gmres_restart;           /**< GMRES(m): Krylov vectors before a restart (default 30) */
} clmg_krylov_options;

/** The defaults: relative tolerance 1e-8, 1000 iterations, GMRES(30). A
 * solver given NULL options uses them, except that a solve in float aims at
 * 1e-5: float's rounding floor lies near 1e-7, out of reach of 1e-8. */
CLMG_API void clmg_krylov_options_defaults(clmg_krylov_options *options);
/** The default relative tolerance for a solve in `precision`: 1e-8 in
 * double, 1e-5 in float. */
CLMG_API double clmg_default_tolerance(clmg_dtype precision);

/** What a Krylov solve reports. */
typedef struct clmg_krylov_result {
  int iterations;           /**< iterations made */
  int converged;            /**< 1 when the recomputed residual met the tolerance */
  double initial_residual;  /**< ||b - A x0|| */
  double final_residual;    /**< ||b - A x||, recomputed from x when the method stopped on it */
  double relative_residual; /**< final_residual / ||b|| (or / initial if b = 0) */
  double *history;          /**< malloc'ed when keep_history; history[k] after k its */
  size_t history_length;    /**< entries of history */
} clmg_krylov_result;

/** Frees the result's history and zeroes history and history_length (the other fields
 * stay); NULL does nothing. */
CLMG_API void clmg_krylov_result_free(clmg_krylov_result *result);

/** Solves A x = b for symmetric positive definite A, x holding the initial
 * guess. preconditioner NULL: plain CG. Reads back one scalar pair per
 * iteration. Returns CLMG_SUCCESS when converged, CLMG_ERROR_NOT_CONVERGED
 * when max_iterations ran out (x then holds the last iterate), and
 * CLMG_ERROR_INVALID_ARGUMENT when a breakdown shows A or M is not SPD. */
CLMG_API clmg_status clmg_cg(const clmg_matrix *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result);

/** Solves A x = b with `method` on an operator (CLMG_KRYLOV_AUTO means GMRES
 * here: it assumes nothing of A). x holds the initial guess. Every method
 * stops only when the residual b - A x recomputed from x meets the
 * tolerance; when the recurrence says converged but the recomputed residual
 * does not, it restarts from x. CG and BiCGStab are right- or left-
 * preconditioned as their recurrences need; GMRES is right-preconditioned,
 * so its residual is that of the unpreconditioned system. Returns as clmg_cg
 * does; a breakdown (a zero inner product BiCGStab cannot pass) is
 * CLMG_ERROR_NOT_CONVERGED with a message saying so. */
CLMG_API clmg_status clmg_krylov_solve(clmg_krylov_method method, const clmg_operator *a,
                                       const clmg_vector *b, clmg_vector *x,
                                       const clmg_preconditioner *preconditioner,
                                       const clmg_krylov_options *options,
                                       clmg_krylov_result *result);

#ifdef __cplusplus
}
#endif

#endif
