/** @file
 * clmg structured grids and the high-occupancy multigrid (HOMG).
 *
 * Structured grids: an n x n grid of the unit square [0,1]^2 with spacing
 * h = 1/(n-1), stored row-major with x fastest (point (i, j), at (i h, j h),
 * has index j n + i) in a double or float clmg_vector of n^2 elements.
 * Boundary points hold Dirichlet values. The operator is the five-point
 * Laplacian in its positive definite form,
 *   (A u)_ij = (4 u_ij - u_i-1,j - u_i+1,j - u_i,j-1 - u_i,j+1) / h^2  ~  -laplace(u),
 * so every solver here solves -laplace(u) = f. (The HOMG paper writes
 * laplace(u) = f: its source is the negative of clmg's; see
 * clmg_homg_paper_problem.)
 *
 * HOMG (Becerra-Sagredo, Málaga, Mandujano, "A novel and scalable multigrid
 * algorithm for many-core architectures"): every step of a cycle acts on
 * the whole grid; the points of the current level relax while all other
 * points interpolate from the previous step, in one kernel. The steps follow
 * the modified full multigrid cycle (MFMG): two steps on the coarsest level,
 * twice as many on each finer level, at most MaxI. Cycles restart on the
 * residual equation until a tolerance is met. The fused step is HOMG's own;
 * the classic V-cycle and FMG, the baseline, run the multigrid engine
 * (multigrid.h) on the grid's operators (clmg_grid_operator and its
 * transfers).
 *
 * Levels are numbered as the engine numbers them: 0 is the coarsest grid
 * (3 x 3 nested, one interior point), levels - 1 the finest (spacing h);
 * level l has spacing 2^(levels-1-l) h.
 *
 * Grid sizes: n = 2^k + 1 (nested levels of 2^(k-m) + 1 points per side) or,
 * for HOMG only, n = 2^k (the paper's four-subdomain strategy, section 3).
 *
 * Work units (WU): one WU is one pass of a kernel over the whole n x n grid;
 * a kernel on a coarse level of nc x nc points counts nc^2 / n^2. */
#ifndef CLMG_HOMG_H
#define CLMG_HOMG_H

#include "clmg/operator.h"
#include "clmg/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- structured-grid kernels (one launch each) ----
 * All vectors share one context and type (double or float) and hold n^2
 * elements, n >= 3 (coarse grids nc^2 with n = 2 nc - 1). */

/** One damped Jacobi sweep of A u = b: at interior points
 *   J(u) = u + omega/4 (h^2 b + u_W + u_E + u_S + u_N - 4 u),
 * at boundary points J(u) = u. u NULL stands for u = 0. accumulate = 0
 * writes out = J(u) everywhere; accumulate != 0 adds J(u) to out at interior
 * points and leaves out's boundary (the last sweep of a correction adds it to
 * the solution in the same pass). out must not be u. */
CLMG_API clmg_status clmg_grid_jacobi(size_t n, double omega, const clmg_vector *u,
                                      const clmg_vector *b, int accumulate, clmg_vector *out);

/** r = b - A u at interior points, 0 on the boundary. r may be NULL (not
 * stored); norm, when not NULL, receives ||r||_2. */
CLMG_API clmg_status clmg_grid_residual(size_t n, const clmg_vector *u, const clmg_vector *b,
                                        clmg_vector *r, double *norm);

/** Full-weighting restriction of an n x n grid (n odd) to nc = (n+1)/2:
 * coarse(a,b) = [4 v(2a,2b) + 2 (edge neighbours) + (corner neighbours)] / 16
 * at interior points, 0 on the boundary. */
CLMG_API clmg_status clmg_grid_restrict(size_t n, const clmg_vector *fine, clmg_vector *coarse);

/** The full-weighting restriction of the residual b - A u of an n x n grid,
 * without storing the residual (one pass over u and b). */
CLMG_API clmg_status clmg_grid_restrict_residual(size_t n, const clmg_vector *u,
                                                 const clmg_vector *b, clmg_vector *coarse);

/** Bilinear interpolation of an nc x nc grid to n = 2 nc - 1 at every point:
 * fine = P coarse, or fine += P coarse when accumulate != 0. */
CLMG_API clmg_status clmg_grid_interpolate(size_t nc, const clmg_vector *coarse, int accumulate,
                                           clmg_vector *fine);

/* ---- the grid as operators (include/clmg/operator.h) ----
 * Matrix-free, one launch per call; each fills *op with an operator it owns
 * (release it with clmg_operator_destroy, or hand it to
 * clmg_multigrid_create_from_levels, which takes it over). The classic
 * V-cycle and FMG below run the multigrid engine on them. */

/** A of the n x n grid (n^2 x n^2), 3 <= n <= 32769: the five-point
 * Laplacian above at interior points and identity rows on the boundary
 * points, whose values are Dirichlet data. The identity rows are how
 * clmg_grid_jacobi treats the boundary: a Jacobi sweep of the engine leaves
 * a boundary where b = x unchanged, and a correction that is 0 there stays
 * 0 (so the defect of the correction equations the classic methods solve
 * is 0 on the boundary, as clmg_grid_residual's is). Provides apply
 * (y = alpha A x + beta y), defect (r = b - A x), the diagonal (4/h^2 inside,
 * 1 on the boundary) and a fused Jacobi step (x + w .* (b - A x)). */
CLMG_API clmg_status clmg_grid_operator(clmg_context *context, size_t n, clmg_dtype precision,
                                        clmg_operator *op);

/** The transfers between the n x n grid (n odd) and nc = (n+1)/2, as
 * operators applying y = alpha T x + beta y (beta == 0: y is not read):
 * full weighting R (nc^2 x n^2, clmg_grid_restrict: 0 on the coarse
 * boundary) and bilinear interpolation P (n^2 x nc^2, clmg_grid_interpolate).
 * Both take the fine grid's n, so one level of a hierarchy names both. */
CLMG_API clmg_status clmg_grid_restriction_operator(clmg_context *context, size_t n,
                                                    clmg_dtype precision, clmg_operator *op);
/** Bilinear interpolation P from nc = (n+1)/2 to the n x n grid (n odd) as an operator
 * (n^2 x nc^2, clmg_grid_interpolate), y = alpha P x + beta y; see
 * clmg_grid_restriction_operator. */
CLMG_API clmg_status clmg_grid_interpolation_operator(clmg_context *context, size_t n,
                                                      clmg_dtype precision, clmg_operator *op);

/* ---- the solver ---- */

/** The solver clmg_homg_solve runs. */
typedef enum clmg_homg_method {
  CLMG_HOMG_MFMG = 0, /**< HOMG steps in MFMG cycles */
  CLMG_HOMG_VCYCLE,   /**< classic V(pre, post) cycles */
  CLMG_HOMG_FMG       /**< classic full multigrid (one V-cycle per level), then V-cycles */
} clmg_homg_method;

/** "homg", "vcycle", "fmg"; parse also accepts "mfmg". Parse returns 0 for
 * an unknown name. */
CLMG_API const char *clmg_homg_method_name(clmg_homg_method method);
/** Sets *method from "homg" (or "mfmg"), "vcycle" or "fmg" and returns 1; 0 for an
 * unknown or NULL name. */
CLMG_API int clmg_homg_method_parse(const char *name, clmg_homg_method *method);

/** The order of the levels in one HOMG cycle (each visit of level m takes
 * min(2 * 2^k, MaxI) steps, k levels above the coarsest: two on the
 * coarsest, doubling per finer level, at most MaxI). The paper (section 2)
 * lets the cycle "go back to a coarser level or descend to a finer level in
 * a chosen pattern"; its Fig. 1 is not in the text, so these are readings:
 *  ASCENT    coarsest to finest once; every point off the level takes the
 *            interpolated values of the level's points (the first reading);
 *  SAWTOOTH  each new finer level k is followed by one visit of the level
 *            below it and k again (k, k-1, k), but for the finest; steps off
 *            the level add the interpolated variations of the level's points
 *            (e += P (relax(e) - e)), so finer detail survives a return;
 *            the default: one cycle's L1 errors 5.7% (MaxI 4) and 1.7%
 *            (MaxI 32) on the paper's test, where it reports 5% and 1.6%;
 *  VSHAPE    after each new finer level a V back to the coarsest and up
 *            again (FMG with V-cycles), with variations.
 * docs/homg.md gives the table of every reading. */
typedef enum clmg_homg_schedule_type {
  CLMG_HOMG_SCHEDULE_SAWTOOTH = 0,
  CLMG_HOMG_SCHEDULE_ASCENT,
  CLMG_HOMG_SCHEDULE_VSHAPE
} clmg_homg_schedule_type;

/** "sawtooth", "ascent", "vshape"; parse returns 0 for an unknown name. */
CLMG_API const char *clmg_homg_schedule_name(clmg_homg_schedule_type schedule);
/** Sets *schedule from "sawtooth", "ascent" or "vshape" and returns 1; 0 for an unknown
 * or NULL name. */
CLMG_API int clmg_homg_schedule_parse(const char *name, clmg_homg_schedule_type *schedule);

/** Where a HOMG step stands, for clmg_homg_monitor. */
typedef struct clmg_homg_step_info {
  int cycle;         /**< from 1 */
  int step;          /**< from 1, within the cycle */
  int steps;         /**< steps per cycle */
  int level;         /**< 0 the coarsest, levels - 1 the finest (spacing h) */
  double work_units; /**< since the start of the solve */
} clmg_homg_step_info;

/** Called after every HOMG step when set. The current approximation is
 * x + correction; correction is NULL after the last step of a cycle, which
 * adds it to x. Both may be read (e.g. downloaded) but not changed. */
typedef void (*clmg_homg_monitor)(void *data, const clmg_homg_step_info *info, const clmg_vector *x,
                                  const clmg_vector *correction);

/** How clmg_homg solves; fill it with clmg_homg_options_defaults. */
typedef struct clmg_homg_options {
  clmg_homg_method method;      /**< default CLMG_HOMG_MFMG */
  clmg_dtype precision;         /**< CLMG_DOUBLE (default) or CLMG_FLOAT */
  int max_iterations_per_level; /**< MaxI of the MFMG cycle, >= 1 (default 32) */
  double omega;                 /**< damped-Jacobi weight in (0, 1] (default 0.8) */
  int pre_smoothing;            /**< V-cycle and FMG sweeps before ... (default 2) */
  int post_smoothing;           /**< ... and after the coarse correction (default 2) */
  int max_cycles;               /**< at most this many cycles (default 50) */
  /** Stop when ||f - A x|| <= relative_tolerance ||f|| (interior points;
   * default 1e-10; 0: off) or, when an exact solution is given, when the
   * normalised L1 error is <= error_tolerance (default 0: off). With both off
   * the solve runs max_cycles cycles. */
  double relative_tolerance;
  double error_tolerance; /**< the L1 error to stop at (see relative_tolerance; 0: off) */
  /** > 1: also stop, counted as converged, when a cycle after the first cuts
   * the residual by less than this factor (the first may cut the error and
   * hardly the residual): the rounding floor of the precision is reached
   * (in float it is about 1e-5 at n = 65 and grows as n^2). 0: off (default). */
  double stagnation_factor;
  /** MFMG: record the L1 error after every step of the first cycle (needs the
   * exact solution; one reduction per step). */
  int record_steps;
  clmg_homg_monitor monitor;        /**< MFMG: called after every step (may be NULL) */
  void *monitor_data;               /**< passed to monitor */
  clmg_homg_schedule_type schedule; /**< MFMG: the cycle's pattern (default SAWTOOTH) */
} clmg_homg_options;

/** The defaults given with each field: MFMG in double, MaxI 32, omega 0.8, V(2,2) for the
 * classic methods, at most 50 cycles to a relative residual of 1e-10, the sawtooth
 * schedule, no error tolerance, stagnation test, step record or monitor. A NULL options
 * does nothing. */
CLMG_API void clmg_homg_options_defaults(clmg_homg_options *options);

/** The state after a cycle (cycle 0: the initial guess). Counts are
 * cumulative from the start of the solve. */
typedef struct clmg_homg_record {
  int cycle;                /**< the cycle this record follows (0: the initial guess) */
  int iterations;           /**< HOMG steps, or relaxation sweeps on all levels */
  double work_units;        /**< see the top of this file */
  double l1_error;          /**< sum |x - u| / sum |u| over the grid; NaN without u */
  double relative_residual; /**< ||f - A x|| / ||f|| */
  double seconds;           /**< wall time, including this record's read-back */
} clmg_homg_record;

/** What clmg_homg_solve reports. */
typedef struct clmg_homg_result {
  int cycles;                /**< cycles made */
  int iterations;            /**< HOMG steps, or relaxation sweeps on all levels, in all */
  int converged;             /**< a tolerance was met, or the residual stagnated */
  int stagnated;             /**< stopped by stagnation_factor */
  double work_units;         /**< work units in all (see the top of this file) */
  double l1_error;           /**< sum |x - u| / sum |u| at the end; NaN without u */
  double relative_residual;  /**< ||f - A x|| / ||f|| at the end */
  double initial_residual;   /**< ||f - A x0|| */
  double time_s;             /**< the whole solve */
  clmg_homg_record *history; /**< malloc'ed; [k] after cycle k, [0] the initial guess */
  size_t history_length;     /**< entries of history */
  clmg_homg_record *steps;   /**< record_steps: [k] after step k+1 of cycle 1 */
  size_t steps_length;       /**< entries of steps */
} clmg_homg_result;

/** Frees the result's history and steps and zeroes them and their lengths (the other
 * fields stay); NULL does nothing. */
CLMG_API void clmg_homg_result_free(clmg_homg_result *result);

/** A structured-grid solver for one grid size: its device arrays, kernels and, for the
 * classic methods, its engine hierarchy (opaque). */
typedef struct clmg_homg clmg_homg;

/** Prepares a solver for n x n grids: n = 2^k + 1 (nested; all methods) or
 * n = 2^k (four subdomains; HOMG only), 3 <= n <= 32769. Allocates the
 * device arrays and compiles the kernels. options may be NULL (defaults).
 * A grid whose arrays do not fit (clmg_homg_memory_need) fails with
 * CLMG_ERROR_OUT_OF_DEVICE_MEMORY before anything is allocated. */
CLMG_API clmg_status clmg_homg_create(clmg_context *context, size_t n,
                                      const clmg_homg_options *options, clmg_homg **homg);
/** Frees the solver's device arrays and engine hierarchy. NULL does nothing. */
CLMG_API void clmg_homg_destroy(clmg_homg *homg);

/** The memory clmg_homg_create(context, n, options) needs, without
 * allocating anything: *device_bytes in all (exact for the homg method; for
 * vcycle and fmg an upper bound, with the engine's smoother and coarse
 * solve at their peak), *largest_allocation the largest single buffer, and
 * *host_bytes the host memory it takes while it builds (both may be NULL).
 * n and the options are checked as clmg_homg_create checks them, which
 * itself checks this need against the context's memory before its first
 * allocation (clmg_context_check_memory). Add the grids you allocate
 * yourself to check a whole run up front. */
CLMG_API clmg_status clmg_homg_memory_need(clmg_context *context, size_t n,
                                           const clmg_homg_options *options, uint64_t *device_bytes,
                                           uint64_t *largest_allocation, uint64_t *host_bytes);

/** Solves A x = f on the device. x holds the initial guess and, on its
 * boundary, the Dirichlet values (kept). exact, when not NULL, is the
 * solution the L1 error is measured against. result may be NULL; otherwise
 * free it with clmg_homg_result_free. Returns CLMG_ERROR_NOT_CONVERGED when
 * a tolerance was set and max_cycles ran out (x then holds the last iterate). */
CLMG_API clmg_status clmg_homg_solve(clmg_homg *homg, const clmg_vector *f, clmg_vector *x,
                                     const clmg_vector *exact, clmg_homg_result *result);

/** Facts about a solver (clmg_homg_get_info). */
typedef struct clmg_homg_info {
  size_t n;            /**< points per side of the grid */
  double h;            /**< the spacing, 1/(n-1) */
  int levels;          /**< level 0 (the coarsest, spacing 2^(levels-1) h) to levels-1 (h) */
  int four_subdomains; /**< n = 2^k */
  int steps_per_cycle; /**< MFMG steps per cycle (0 for the classic methods) */
  /** HOMG's own arrays; the classic methods' engine hierarchy (its work
   * vectors and smoother weights, about 5.7 n^2 values) is not counted */
  uint64_t device_bytes;
} clmg_homg_info;

/** Fills *info with the solver's grid, levels, steps per cycle and device bytes;
 * CLMG_ERROR_INVALID_ARGUMENT for a NULL argument. */
CLMG_API clmg_status clmg_homg_get_info(const clmg_homg *homg, clmg_homg_info *info);

/** The level of every step of one MFMG cycle, coarsest first: *count entries,
 * at most capacity written (levels may be NULL to ask for the count). */
CLMG_API clmg_status clmg_homg_schedule(const clmg_homg *homg, int *levels, size_t capacity,
                                        size_t *count);

/* ---- building blocks (tests, benchmarks) ---- */

/** Takes `source` (n^2) as the right-hand side of the steps and computes its
 * restrictions to every level (nested partial full-weighting reductions). */
CLMG_API clmg_status clmg_homg_set_source(clmg_homg *homg, const clmg_vector *source);

/** One fused HOMG step at `level` on A e = source: out = step(in). in NULL
 * stands for a zero iterate. The finest level (levels - 1) is a damped
 * Jacobi sweep. out must not be in. */
CLMG_API clmg_status clmg_homg_step(clmg_homg *homg, int level, const clmg_vector *in,
                                    clmg_vector *out);

/** The step of the returning schedules at a coarse `level` (0 to levels -
 * 2): out = in + P (relax(in) - in) at interior points, 0 on the boundary,
 * where relax is the fused step's relaxation of the level's points and P
 * its interpolation from them (so out = relax(in) at the level's points).
 * in NULL stands for 0; out may be in (then the step goes through a work
 * array on GPUs, which run it out of place in one pass; CPUs run it in
 * place, in is first copied to out otherwise). */
CLMG_API clmg_status clmg_homg_variation_step(clmg_homg *homg, int level, const clmg_vector *in,
                                              clmg_vector *out);

/** The fewest bytes a step at `level` moves (the model in cl/homg.cl): every
 * point written, the level's points of the previous iterate and their
 * source read; 3 n^2 values on the finest level. */
CLMG_API clmg_status clmg_homg_step_bytes(const clmg_homg *homg, int level, uint64_t *bytes);
/** The same for clmg_homg_variation_step (the returning schedules' steps on
 * coarse levels): every point read and written, and the source of the
 * level's points read: 2 n^2 values plus 1 per level point. GPUs run the
 * step in that one pass (out of place); the CPU kernels take two passes
 * and move 3 values more per level point (the variations written and read
 * back, the level's points read again). */
CLMG_API clmg_status clmg_homg_variation_step_bytes(const clmg_homg *homg, int level,
                                                    uint64_t *bytes);

/** The test problem of the paper (eqs. 4-6) on the n x n grid of the unit
 * square: u = -x^2 y^2 (1 - x^2)(1 - y^2), zero on the boundary, and the
 * source of -laplace(u) = f in clmg's sign convention,
 *   f = 2 [(1 - 6x^2) y^2 (1 - y^2) + (1 - 6y^2) x^2 (1 - x^2)]
 * (the paper's eq. 6 is -f, for laplace(u) = f). Either array may be NULL. */
CLMG_API void clmg_homg_paper_problem(size_t n, double *f, double *u);

#ifdef __cplusplus
}
#endif

#endif
