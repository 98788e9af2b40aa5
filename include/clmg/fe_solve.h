/** @file
 * The finite-element Poisson problem of clmg/fem.h composed and solved in
 * one place, from an options database (clmg/solver.h): the level hierarchy
 * assembled on the device or the host, the geometric multigrid on it, for
 * precision=mixed the finest matrix in double for the outer CG, the solver
 * (multigrid cycles or CG preconditioned by one cycle), the right-hand side
 * and the initial guess. What `clmg poisson` and Python's clmg.poisson run.
 *
 * In one call: clmg_poisson_problem_solve. In stages, for a caller that
 * reports between them: clmg_fe_poisson_create (options and hierarchy),
 * clmg_fe_poisson_setup (multigrid, solver, kernels), clmg_fe_poisson_solve,
 * clmg_fe_poisson_fetch (the solution, the right-hand side and the mesh on
 * the host), clmg_fe_poisson_destroy. Every failure returns a status with
 * the context's message. */
#ifndef CLMG_FE_SOLVE_H
#define CLMG_FE_SOLVE_H

#include "clmg/fem.h"
#include "clmg/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where the hierarchy is assembled. */
typedef enum clmg_fe_assembly {
  CLMG_FE_ASSEMBLY_AUTO = 0, /**< the device for the 2LV numbering, else the host */
  CLMG_FE_ASSEMBLY_DEVICE,   /**< clmg_fe_poisson_hierarchy_device (2LV only) */
  CLMG_FE_ASSEMBLY_HOST      /**< clmg_fe_poisson_hierarchy (every numbering; the reference) */
} clmg_fe_assembly;

/** What to solve; fill it with clmg_fe_poisson_spec_defaults. */
typedef struct clmg_fe_poisson_spec {
  const clmg_mesh *coarse;      /**< the coarse quadrilateral or hexahedral mesh (borrowed) */
  int level;                    /**< the finest level, 1 = the coarse mesh (default 1) */
  int degree;                   /**< 1 (Q1, the default) or 2 (Q2) */
  clmg_poisson_problem problem; /**< f and g (default clmg_poisson_problem_unit_source) */
  clmg_numbering numbering;     /**< the DOF numbering (default 2LV) */
  clmg_fe_assembly assembly;    /**< where the hierarchy is assembled (default AUTO) */
  uint64_t seed;                /**< the random STO numbering's seed (default 1) */
  size_t coarse_max_rows;       /**< solve directly on the finest level with at most this
                                     many rows, dropping the coarser ones (0, the default:
                                     the coarse mesh is the coarse level) */
  int paper_smoothing;          /**< nonzero: BLOOD's smoothing of Geveler et al. 2011 (64+64
                                     Jacobi steps at omega 0.5) where the options set no
                                     mg.steps, mg.pre, mg.post or mg.omega */
  int keep_matrix;              /**< nonzero: clmg_fe_poisson_fetch also gives the finest
                                     matrix on the host */
} clmg_fe_poisson_spec;

/** The defaults given with each field of clmg_fe_poisson_spec (coarse NULL). */
CLMG_API void clmg_fe_poisson_spec_defaults(clmg_fe_poisson_spec *spec);

/** The Poisson problem's defaults written into `options` where they are not set: precision
 * float on a device without fp64 (double or mixed asked there is CLMG_ERROR_UNSUPPORTED),
 * krylov none (cg for precision=mixed), maxit 200, and with paper_smoothing BLOOD's 64+64
 * steps at omega 0.5; then the hierarchy's options (clmg_options_multigrid, its AUTOs
 * recorded in options) into *multigrid with the format and the precision of the cycle
 * (float for mixed). A krylov other than none or cg, or mixed with none, is
 * CLMG_ERROR_INVALID_ARGUMENT. Failures leave the message on the context. */
CLMG_API clmg_status clmg_fe_poisson_options(clmg_options *options, clmg_context *context,
                                             int paper_smoothing,
                                             clmg_multigrid_options *multigrid);

/** Sizes and where the time went, filled as the stages run (wall seconds). */
typedef struct clmg_fe_poisson_info {
  size_t unknowns;        /**< rows of the finest level */
  size_t nonzeros;        /**< entries of the finest matrix */
  int levels;             /**< levels assembled (the multigrid may drop some: coarse_max_rows) */
  size_t coarse_unknowns; /**< rows of the coarsest level (after setup: the multigrid's) */
  size_t direct_rows;     /**< rows of the level the coarse solver gets (coarse_max_rows) */
  int on_device;          /**< 1: assembled on the device */
  int mixed;              /**< 1: a float cycle inside double CG */
  int use_cg;             /**< 1: CG preconditioned by one cycle; 0: cycles */
  double tolerance;       /**< the relative tolerance the solver uses */
  double assembly_s;      /**< building the hierarchy (clmg_fe_poisson_create) */
  double upload_s;        /**< the multigrid hierarchy and b on the device */
  double kernels_s;       /**< the solver's setup: compiling (or loading) the kernels */
  /** the device assembly's parts (clmg_fe_device_hierarchy's refine_s, number_s,
   * dirichlet_s, device_s); NaN with host assembly */
  double refine_s;
  double numbering_s;       /**< see refine_s */
  double dirichlet_s;       /**< see refine_s */
  double device_assembly_s; /**< see refine_s */
} clmg_fe_poisson_info;

/** What a solve gave; free it with clmg_fe_poisson_result_free. */
typedef struct clmg_fe_poisson_result {
  clmg_krylov_result solve;  /**< iterations, convergence, residuals, the history per iteration */
  clmg_status status;        /**< the solve's status (CLMG_ERROR_NOT_CONVERGED when short) */
  char message[1024];        /**< why, when status is not CLMG_SUCCESS */
  double solve_s;            /**< the solve, to its last wait */
  clmg_counters counts;      /**< the solve's device commands and host waits */
  clmg_fe_poisson_info info; /**< sizes and the setup's times */
  /* filled by clmg_fe_poisson_fetch: */
  size_t n;       /**< entries of u and b */
  double *u;      /**< the solution in the mesh's numbering (the finest level's nodes) */
  double *b;      /**< the right-hand side in the mesh's numbering */
  clmg_mesh mesh; /**< a copy of the finest level's mesh */
  /** keep_matrix: the finest matrix on the host, in the hierarchy's numbering: row i is the
   * mesh's node perm[i] (perm NULL: the mesh's own numbering) */
  clmg_csr matrix;
  int32_t *perm; /**< see matrix */
} clmg_fe_poisson_result;

/** Frees what the result holds and zeroes it; NULL is fine. */
CLMG_API void clmg_fe_poisson_result_free(clmg_fe_poisson_result *result);

/** The composed problem: its hierarchy, multigrid, solver and vectors. */
typedef struct clmg_fe_poisson clmg_fe_poisson;

/** Checks the spec, resolves a copy of `options` (clmg_fe_poisson_options; NULL: the
 * defaults) and builds the level hierarchy. Bad specs (level < 1 or above 16, degree not 1
 * or 2, device assembly with another numbering than 2LV) are CLMG_ERROR_INVALID_ARGUMENT.
 * *out is NULL on failure; the message is the context's. */
CLMG_API clmg_status clmg_fe_poisson_create(clmg_context *context, const clmg_fe_poisson_spec *spec,
                                            const clmg_options *options, clmg_fe_poisson **out);
/** Builds the multigrid on the hierarchy (the levels' matrices then held by it alone), the
 * solver around it, b and the initial guess (g on Dirichlet DOFs, 0 elsewhere); the
 * solver's setup runs one iteration on scratch vectors, so every kernel of the solve is
 * compiled (or loaded from the cache) here. */
CLMG_API clmg_status clmg_fe_poisson_setup(clmg_fe_poisson *problem);
/** Solves from the initial guess (after clmg_fe_poisson_setup), calling monitor (may be NULL)
 * after every iteration; fills result's solve, status, message, solve_s, counts and info
 * (result is overwritten: zero it or free it first). CLMG_ERROR_NOT_CONVERGED is returned,
 * with the last iterate kept, when maxit ran out. */
CLMG_API clmg_status clmg_fe_poisson_solve(clmg_fe_poisson *problem, clmg_krylov_monitor monitor,
                                           void *monitor_data, clmg_fe_poisson_result *result);
/** After a solve: the solution and b in the mesh's numbering, a copy of the finest mesh and,
 * with keep_matrix, the finest matrix, into result (what it held of them is freed). */
CLMG_API clmg_status clmg_fe_poisson_fetch(clmg_fe_poisson *problem,
                                           clmg_fe_poisson_result *result);
/** Sizes and times so far. */
CLMG_API const clmg_fe_poisson_info *clmg_fe_poisson_get_info(const clmg_fe_poisson *problem);
/** The resolved options (after clmg_fe_poisson_create). */
CLMG_API const clmg_options *clmg_fe_poisson_options_used(const clmg_fe_poisson *problem);
/** The resolved multigrid options (the cycle's smoother, steps, format, precision). */
CLMG_API const clmg_multigrid_options *
clmg_fe_poisson_multigrid_options(const clmg_fe_poisson *problem);
/** The multigrid (after clmg_fe_poisson_setup; NULL before). */
CLMG_API clmg_multigrid *clmg_fe_poisson_multigrid(const clmg_fe_poisson *problem);
/** The solver (after clmg_fe_poisson_setup; NULL before). */
CLMG_API clmg_solver *clmg_fe_poisson_solver(const clmg_fe_poisson *problem);
/** Frees everything the problem made; NULL is fine. Destroy it before its context. */
CLMG_API void clmg_fe_poisson_destroy(clmg_fe_poisson *problem);

/** The whole run in one call: create, setup, solve and fetch; the problem is freed on
 * return. A solve that stops short of the tolerance returns CLMG_ERROR_NOT_CONVERGED with
 * the result filled (x the last iterate); any other failure leaves the result zeroed. */
CLMG_API clmg_status clmg_poisson_problem_solve(clmg_context *context,
                                                const clmg_fe_poisson_spec *spec,
                                                const clmg_options *options,
                                                clmg_krylov_monitor monitor, void *monitor_data,
                                                clmg_fe_poisson_result *result);

#ifdef __cplusplus
}
#endif

#endif
