/* clmg multigrid: ONE cycle engine for every hierarchy (geometric, algebraic,
 * saddle-point). A hierarchy is a list of levels, each {A, P, R, smoother},
 * given as host CSR matrices and uploaded once; a cycle is then a sequence
 * of SpMV-family kernels and vector updates on the device (seed 000, section
 * 2.1). The engine runs as a solver (cycles until a tolerance) or as a
 * preconditioner for CG (one cycle from a zero guess). */
#ifndef CLMG_MULTIGRID_H
#define CLMG_MULTIGRID_H

#include "clmg/krylov.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clmg_cycle_type { CLMG_CYCLE_V = 0, CLMG_CYCLE_W, CLMG_CYCLE_F } clmg_cycle_type;

typedef enum clmg_smoother_type {
  CLMG_SMOOTHER_JACOBI = 0, /* x += omega D^-1 (b - A x) (seed 000) */
  CLMG_SMOOTHER_CHEBYSHEV,  /* Chebyshev polynomial in D^-1 A, degree = steps */
  CLMG_SMOOTHER_SPAI0       /* x += omega M (b - A x), M = diag(a_ii / sum_j a_ij^2) */
} clmg_smoother_type;

typedef enum clmg_coarse_solver_type {
  CLMG_COARSE_AUTO = 0, /* direct when the coarsest level has <= direct_max_rows rows, else PCG */
  CLMG_COARSE_PCG,      /* Jacobi-PCG to coarse_relative_tolerance (seed 000: 1e-2) */
  CLMG_COARSE_DIRECT    /* explicit inverse, factored once on the host, applied as GEMV */
} clmg_coarse_solver_type;

CLMG_API const char *clmg_cycle_type_name(clmg_cycle_type type);
CLMG_API int clmg_cycle_type_parse(const char *name, clmg_cycle_type *type); /* "v", "w", "f" */
CLMG_API const char *clmg_smoother_type_name(clmg_smoother_type type);
/* "jacobi", "chebyshev", "spai0"; returns 0 if unknown. */
CLMG_API int clmg_smoother_type_parse(const char *name, clmg_smoother_type *type);

typedef struct clmg_multigrid_options {
  clmg_cycle_type cycle;       /* default V */
  int pre_smoothing;           /* steps before restriction (default 4) */
  int post_smoothing;          /* steps after prolongation (default 4) */
  clmg_smoother_type smoother; /* default Jacobi */
  double omega; /* Jacobi / SPAI-0 damping; 0 (default): 0.7 for Jacobi, 1 for SPAI-0 */
  double chebyshev_lower_ratio;     /* Chebyshev interval [lambda_max * ratio, lambda_max] (default
                                       1/30) */
  int eigen_iterations;             /* power steps for lambda_max(D^-1 A) (default 12) */
  clmg_coarse_solver_type coarse;   /* default AUTO */
  size_t direct_max_rows;           /* AUTO's limit for the direct solve (default 2048) */
  double coarse_relative_tolerance; /* PCG coarse solve (default 1e-2) */
  int coarse_max_iterations;        /* PCG coarse solve (default 1000) */
  clmg_matrix_options matrix;       /* format and precision of every level's matrices */
} clmg_multigrid_options;

CLMG_API void clmg_multigrid_options_defaults(clmg_multigrid_options *options);

typedef struct clmg_multigrid clmg_multigrid;

/* Builds the hierarchy on the device. Level 0 is the coarsest, level
 * num_levels - 1 the finest. a[l] is square; p[l] (l >= 1) maps level l - 1
 * to level l (rows of level l, columns of level l - 1); r[l] is the
 * restriction (rows of level l - 1); r may be NULL or r[l] empty (rows == 0),
 * then R = P^T is formed here. p[0] and r[0] are not read. The host matrices
 * stay the caller's. A zero diagonal, mismatched sizes or a singular coarse
 * matrix (direct solve) fail with a message naming the level. */
CLMG_API clmg_status clmg_multigrid_create(clmg_context *context, int num_levels, const clmg_csr *a,
                                           const clmg_csr *p, const clmg_csr *r,
                                           const clmg_multigrid_options *options,
                                           clmg_multigrid **multigrid);
CLMG_API void clmg_multigrid_destroy(clmg_multigrid *multigrid);

CLMG_API int clmg_multigrid_levels(const clmg_multigrid *multigrid);
/* The finest level's device matrix (for CG with the multigrid preconditioner). */
CLMG_API const clmg_matrix *clmg_multigrid_matrix(const clmg_multigrid *multigrid, int level);
/* Largest eigenvalue estimate of D^-1 A on a level (0 unless Chebyshev). */
CLMG_API double clmg_multigrid_lambda_max(const clmg_multigrid *multigrid, int level);
/* The coarse solver in use: "direct" or "pcg". */
CLMG_API const char *clmg_multigrid_coarse_solver(const clmg_multigrid *multigrid);

/* The fewest bytes one iteration of clmg_multigrid_solve must move through
 * device memory: the cycle (every matrix read once per SpMV-family kernel,
 * every vector once per read or write, coarse levels as often as the cycle
 * visits them) plus the defect and its norm after it; a PCG coarse solve
 * counts one iteration. Divided by the copy bandwidth, this is the cycle's
 * bandwidth floor. */
CLMG_API double clmg_multigrid_iteration_bytes(const clmg_multigrid *multigrid);

/* One cycle on the finest level: x is improved in place (b and x have the
 * matrix precision and the finest level's size). */
CLMG_API clmg_status clmg_multigrid_cycle(clmg_multigrid *multigrid, const clmg_vector *b,
                                          clmg_vector *x);

/* Multigrid as a solver: cycles from the initial guess x until
 * ||b - A x|| <= tol ||b|| (options as for CG; iterations count cycles, the
 * history holds the relative residual after each cycle). Reads back one
 * scalar per cycle. */
CLMG_API clmg_status clmg_multigrid_solve(clmg_multigrid *multigrid, const clmg_vector *b,
                                          clmg_vector *x, const clmg_krylov_options *options,
                                          clmg_krylov_result *result);

/* One cycle from a zero initial guess as a preconditioner for clmg_cg. The
 * preconditioner borrows the hierarchy: destroy the preconditioner first. */
CLMG_API clmg_status clmg_multigrid_preconditioner(clmg_multigrid *multigrid,
                                                   clmg_preconditioner *preconditioner);

#ifdef __cplusplus
}
#endif

#endif
