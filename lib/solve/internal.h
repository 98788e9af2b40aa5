/* Internal interface of the solve layer (Krylov methods, the multigrid
 * engine, smoothers, coarse solvers): what its files share. Not installed. */
#ifndef CLMG_SOLVE_INTERNAL_H
#define CLMG_SOLVE_INTERNAL_H

#include "clmg/krylov.h"
#include "clmg/multigrid.h"
#include "clmg/operator.h"
#include "la/internal.h"

/* Appends one relative residual to result->history (capacity: its allocated
 * length, kept by the solver). */
clmg_status clmg_history_append(clmg_context *context, clmg_krylov_result *result, size_t *capacity,
                                double relative_residual);

/* ---- CG with caller-owned work vectors (lib/solve/krylov.c) ----
 * For solvers that run CG many times on one matrix (the multigrid coarse
 * solve, once per cycle): the five vectors are made once, where clmg_cg
 * makes (and zeroes, with a synchronisation each) its own on every call. */
typedef struct clmg_cg_workspace {
  clmg_vector *r, *u, *w, *p, *s;
} clmg_cg_workspace;

clmg_status clmg_cg_workspace_create(clmg_context *context, clmg_dtype type, size_t n,
                                     clmg_cg_workspace *workspace);
void clmg_cg_workspace_destroy(clmg_cg_workspace *workspace);
/* clmg_cg on the workspace's vectors (of the matrix's size and precision). */
clmg_status clmg_cg_in_workspace(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                 const clmg_preconditioner *preconditioner,
                                 const clmg_krylov_options *options, clmg_krylov_result *result,
                                 clmg_cg_workspace *workspace);

/* ---- GMRES with a work space kept across solves (lib/solve/gmres.c) ----
 * For solvers that run GMRES many times on systems of one shape (the flow
 * solver, two linear solves per time step): the Krylov bases (n (m + 1)
 * and, preconditioned, n m entries), the residual and the host arrays are
 * made by the first solve and reused by the next, where clmg_krylov_solve
 * makes (and zeroes, with a synchronisation each) and frees them on every
 * call. A solve of another shape (rows, precision, restart length, with or
 * without a preconditioner) makes them again. */
typedef struct clmg_gmres_workspace clmg_gmres_workspace;

/* An empty workspace; CLMG_ERROR_OUT_OF_HOST_MEMORY without memory. */
clmg_status clmg_gmres_workspace_create(clmg_gmres_workspace **workspace);
/* Frees it and its vectors (NULL: nothing). */
void clmg_gmres_workspace_destroy(clmg_gmres_workspace *workspace);
/* clmg_krylov_solve(CLMG_KRYLOV_GMRES, ...) in the workspace's vectors. */
clmg_status clmg_gmres_in_workspace(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                    const clmg_preconditioner *preconditioner,
                                    const clmg_krylov_options *options, clmg_krylov_result *result,
                                    clmg_gmres_workspace *workspace);

/* The relative tolerance of a solve in float when the caller gives no
 * options: float's rounding floor lies near 1e-7 relative, so 1e-8 cannot
 * be met (double's default is 1e-8). */
#define CLMG_FLOAT_DEFAULT_TOLERANCE 1e-5

/* CG on an operator (clmg_cg wraps its matrix into one). */
clmg_status clmg_cg_operator(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result);
/* BiCGStab and GMRES (lib/solve/bicgstab.c, gmres.c); same contract as
 * clmg_krylov_solve. */
clmg_status clmg_bicgstab_solve(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                const clmg_preconditioner *preconditioner,
                                const clmg_krylov_options *options, clmg_krylov_result *result);
clmg_status clmg_gmres_solve(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result);
/* GMRES as krylov_solve_scaled runs a method (lib/solve/krylov_common.h):
 * in the workspace given (NULL: its own vectors for this solve), with
 * ||b|| when the wrapper took it (NAN: GMRES takes it). */
clmg_status clmg_gmres_method(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                              const clmg_preconditioner *preconditioner,
                              const clmg_krylov_options *options, clmg_krylov_result *result,
                              void *workspace, double b_norm);

/* ---- smoothers (lib/solve/smoothers/) ---- */

/* The factory of a library smoother named by options->smoother (its
 * factory_data is the options themselves); NULL for an unknown type. */
clmg_smoother_factory clmg_builtin_smoother_factory(clmg_smoother_type type);

/* A diagonal smoother, x <- x + W (b - A x) with W from `weights`, shared by
 * Jacobi and SPAI-0 (smoothers/diagonal.c). weights fills the device vector
 * w (the operator's rows and precision) from the smoother's parameter (the
 * damping, or its scale when the damping comes from an estimate) and says
 * the damping in use in *omega, or fails with a message. */
typedef clmg_status (*clmg_diagonal_weights)(clmg_context *context, const clmg_operator *a,
                                             double parameter, clmg_vector *w, double *omega);
clmg_status clmg_diagonal_smoother(clmg_context *context, const char *name, double omega,
                                   clmg_diagonal_weights weights, clmg_smoother *smoother);
/* w = alpha / a_ii, or alpha a_ii / sum_j a_ij^2 with row_squares, on the
 * device (w: the operator's rows and precision); fails naming `smoother`
 * when the operator has no diagonal (or row norms) or a diagonal entry is 0. */
clmg_status clmg_operator_diagonal_weights(clmg_context *context, const clmg_operator *a,
                                           const char *smoother, double alpha, int row_squares,
                                           clmg_vector *w);
/* An upper estimate of lambda_max(W A) for a diagonal W (w): `iterations`
 * power steps from a fixed pseudo-random start, raised by 10% (the power
 * method approaches it from below). Fails naming `smoother` when the
 * estimate is not positive and finite (W A not positive definite). The
 * Chebyshev smoother's interval and the Jacobi damping omega = scale /
 * lambda_max (clmg_smoother_jacobi_estimated) come from it. */
clmg_status clmg_operator_lambda_max(clmg_context *context, const clmg_operator *a,
                                     const clmg_vector *w, int iterations, const char *smoother,
                                     double *lambda_max);
/* a's diagonal (and, when row_squares is not NULL, sum_j a_ij^2) on the
 * host; fails naming `smoother` when the operator has none or one is 0. */
clmg_status clmg_operator_host_diagonal(clmg_context *context, const clmg_operator *a,
                                        const char *smoother, double *diagonal,
                                        double *row_squares);

/* ---- what the coarse tail (lib/solve/coarse_tail.c) runs in its kernel ----
 * A smoother of polynomial form: step k is d = beta[k] d + alpha[k] W (b -
 * A x), then x += d (from x = 0 the first step is d = alpha[0] W b, x = d),
 * W the diagonal in the device vector *w. Each returns 1 and fills alpha
 * and beta for `steps` steps for a smoother of its kind, else 0. The
 * diagonal smoothers (Jacobi, jacobi-rho, SPAI-0: W holds the damping,
 * alpha 1, beta 0) and Chebyshev; clmg_smoother_polynomial asks both. */
int clmg_diagonal_smoother_polynomial(const clmg_smoother *smoother, int steps,
                                      const clmg_vector **w, double *alpha, double *beta);
int clmg_chebyshev_smoother_polynomial(const clmg_smoother *smoother, int steps,
                                       const clmg_vector **w, double *alpha, double *beta);
int clmg_smoother_polynomial(const clmg_smoother *smoother, int steps, const clmg_vector **w,
                             double *alpha, double *beta);
/* The dense direct solver's inverse (n x n, row-major, in the operator's
 * precision) after its setup: 1, or 0 for another solver. The buffer
 * changes with every setup: ask again after a refresh. */
int clmg_coarse_solver_direct_inverse(const clmg_coarse_solver *solver, cl_mem *inverse, size_t *n);

/* The coarse tail: the levels 0..top of a hierarchy whose cycle below top
 * runs as one launch of one work-group (cl/coarse_tail.c). Made by
 * clmg_coarse_tail_create when every level's smoother has polynomial form,
 * the coarse solver is the direct one and every operator is a device
 * matrix; *tail stays NULL otherwise (the cycle runs as before). */
typedef struct clmg_coarse_tail clmg_coarse_tail;
typedef struct clmg_tail_level {
  const clmg_operator *a, *p, *r; /* p and r: not read on level 0 */
  const clmg_smoother *smoother;  /* not read on level 0 */
  int pre, post;                  /* smoothing steps */
} clmg_tail_level;
clmg_status clmg_coarse_tail_create(clmg_context *context, clmg_dtype precision, int levels,
                                    const clmg_tail_level *level, const clmg_coarse_solver *coarse,
                                    clmg_coarse_tail **tail);
void clmg_coarse_tail_destroy(clmg_coarse_tail *tail);
/* The highest level the tail holds. */
int clmg_coarse_tail_top(const clmg_coarse_tail *tail);
/* One cycle of `type` on level l (<= top) for A_l x = b, as the engine's
 * cycle would run it, in one launch; zero_guess: x taken as 0, not read. */
clmg_status clmg_coarse_tail_cycle(clmg_coarse_tail *tail, int l, clmg_cycle_type type,
                                   const clmg_vector *b, clmg_vector *x, int zero_guess);

/* The fused kernels of one level above the coarse tail
 * (lib/solve/fused_level.c, cl/fused_level.cl): fewer launches per cycle on
 * levels small enough that a launch costs more than the bytes a fused
 * kernel adds. Made by clmg_fused_level_create for a level whose A (and R,
 * P where asked) are device matrices of the hierarchy's precision; *level
 * stays NULL where nothing can be fused (the cycle runs as before). Holds
 * CSR copies of A and R: made anew on every refresh, like the tail.
 *  - restrict: the defect and its restriction in one launch (bc = R (b -
 *    A x), the defect recomputed per coarse row: no d written and read).
 *  - smooth (a diagonal smoother: Jacobi, jacobi-rho, SPAI-0; P a device
 *    matrix): two weighted Jacobi steps per launch (three from x = 0), out
 *    of place between x and a vector of the level's; the prolongation
 *    writes where the post-smoothing's last step lands in x. */
typedef struct clmg_fused_level clmg_fused_level;
clmg_status clmg_fused_level_create(clmg_context *context, clmg_dtype precision,
                                    const clmg_operator *a, const clmg_operator *p,
                                    const clmg_operator *r, const clmg_smoother *smoother,
                                    int fuse_restriction, int fuse_smoothing,
                                    clmg_fused_level **level);
void clmg_fused_level_destroy(clmg_fused_level *level);
int clmg_fused_level_restricts(const clmg_fused_level *level);
int clmg_fused_level_smooths(const clmg_fused_level *level);
/* bc = R (b - A x) in one launch; x NULL: x = 0 (bc = R b). */
clmg_status clmg_fused_defect_restrict(clmg_fused_level *level, const clmg_vector *b,
                                       const clmg_vector *x, clmg_vector *bc);
/* The launches of `steps` fused smoothing steps (from x = 0 where zero). */
int clmg_fused_smoothing_launches(int steps, int zero);
/* `steps` (>= 1) weighted Jacobi steps on A x = b from *x (which must be x
 * or the level's partner vector; ignored where zero: from x = 0), in
 * clmg_fused_smoothing_launches(steps, zero) launches alternating between
 * x and the partner. From x = 0 the last lands in x; else it lands in *x
 * for an even count of launches and in the other one for an odd count.
 * *x comes back pointing at the result. */
clmg_status clmg_fused_smooth(clmg_fused_level *level, const clmg_vector *b, clmg_vector *x,
                              clmg_vector **current, int steps, int zero);
/* The level's partner vector (smoothing fused), else NULL. */
clmg_vector *clmg_fused_level_partner(const clmg_fused_level *level);
/* out = P e + in (in NULL: out = P e), one launch, out of place: the
 * prolongation with the correction where smoothing is fused. */
clmg_status clmg_fused_prolong(clmg_fused_level *level, const clmg_vector *e, const clmg_vector *in,
                               clmg_vector *out);

/* The cells in colour order (clmg_vanka_colour_cells: cells sharing an
 * unknown differ in colour): order (num_cells, caller-allocated) lists
 * colour k's cells, ascending, from (*colour_start)[k] (malloc'ed,
 * *num_colours + 1 offsets). The Vanka smoother's colours and the Stokes
 * assembler's (lib/flow/stokes_device.c), which adds per cell without
 * conflicts the same way. */
clmg_status clmg_cells_by_colour(size_t n, size_t num_cells, int block,
                                 const int32_t *cell_unknowns, int *num_colours,
                                 size_t **colour_start, int32_t *order, clmg_error *error);

/* clmg_multigrid_create_from_csr_device whose finest level's operator
 * borrows `finest` (a device matrix of a[num_levels - 1], which must
 * outlive the hierarchy) instead of making a second one from the arrays,
 * where it is in the options' precision and format (CLMG_FORMAT_AUTO: any);
 * finest NULL or another: the arrays as usual. */
clmg_status clmg_multigrid_create_from_csr_device_borrowing(
    clmg_context *context, int num_levels, const clmg_csr_device *a, const clmg_csr_device *p,
    const clmg_csr_device *r, clmg_matrix *finest, const clmg_multigrid_options *options,
    clmg_multigrid **multigrid);

#endif
