/** @file
 * clmg algebraic multigrid. Smoothed aggregation (Vanek, Mandel and Brezina
 * 1996, as Fu et al. 2014, section 5, use it): aggregates grown from the
 * roots of a k-maximal independent set of the strength graph (of nodes, for
 * vector problems with a block size), a tentative prolongator fitted per
 * aggregate to the near-nullspace (the constant, the rigid-body modes of
 * elasticity, or the caller's vectors) smoothed by one damped Jacobi step,
 * P = (I - omega D^-1 A) P~, and Galerkin coarse matrices A_c = P^T A P.
 * Classical AMG (PMIS C/F splitting with extended+i or direct
 * interpolation) is the other coarsening.
 * The hierarchy is built from the matrix alone (no mesh), on the host or
 * with its products on the device, and runs in the multigrid engine like
 * any other, as a solver or a Krylov preconditioner:
 * clmg_amg_multigrid_create does it all in one call. Host functions report
 * through a clmg_error, those given a context through its message. */
#ifndef CLMG_AMG_H
#define CLMG_AMG_H

#include "clmg/multigrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a level is coarsened. */
typedef enum clmg_amg_coarsening {
  /** smoothed aggregation (default): aggregates of strongly connected nodes,
   * a tentative prolongator fitted to the near-nullspace vectors per
   * aggregate, smoothed by one damped Jacobi step */
  CLMG_AMG_SMOOTHED_AGGREGATION = 0,
  /** classical (Ruge-Stueben) AMG as hypre's BoomerAMG does it: a PMIS C/F
   * splitting of the strength graph (De Sterck, Yang and Heys 2006) and
   * the interpolation of clmg_amg_options.interpolation (extended+i by
   * default, hypre's GPU default); block_size and the near-nullspace are not
   * used */
  CLMG_AMG_CLASSICAL
} clmg_amg_coarsening;

/** The interpolation of classical coarsening (lib/amg/classical.c has the
 * formulas). */
typedef enum clmg_amg_interpolation {
  /** extended+i (De Sterck, Falgout, Nolting and Yang 2008; hypre's
   * interp_type 6, its GPU default): an F-point interpolates from its strong
   * C-neighbours and theirs of its strong F-neighbours (distance two), the
   * F-F couplings distributed over them and the point itself; robust on a
   * PMIS splitting, which leaves F-points without a strong C-neighbour */
  CLMG_AMG_EXTENDED_I = 0,
  /** direct (Stueben 2001): from the strong C-neighbours only, with a
   * distance-two pass for F-points that have none; sparser P, more
   * iterations */
  CLMG_AMG_DIRECT
} clmg_amg_interpolation;

/** Where the setup's time goes (clmg_amg_options.times): seconds per
 * phase, added up over the levels, each phase ended by a clmg_finish when
 * a context is given and something is queued (so the device's work is
 * counted where it is queued), without the kernels' compile or load time
 * (clmg_context_program_seconds), as the solver's phases leave it out. */
typedef struct clmg_amg_setup_times {
  double upload_s;      /**< the finest matrix and the candidates to the device */
  double strength_s;    /**< strength graph (with the node matrix for blocks; on
                           the device part of the aggregation) */
  double aggregate_s;   /**< aggregation (smoothed aggregation) or C/F splitting and
                           interpolation (classical); on the device with the fit */
  double fit_s;         /**< tentative prolongator: the near-nullspace fit */
  double prolongator_s; /**< its smoothing: lambda_max estimate and A P~ */
  double galerkin_s;    /**< R = P^T and A_c = R A P (and A_c to the host) */
  double patches_s;     /**< the patch smoother's patches */
  double engine_s;      /**< clmg_amg_multigrid_create: levels' formats, smoothers
                           (their lambda_max estimates), coarse solver */
  double total_s;       /**< all of it, from the call to its return (compilation
                           apart) */
} clmg_amg_setup_times;

/** The phases of clmg_amg_setup_times in the order the setup runs them, as
 * X(field, label) for each (total_s apart): for reports that list them. */
#define CLMG_AMG_SETUP_PHASES(X)                                                                   \
  X(upload_s, "the matrix to the device")                                                          \
  X(strength_s, "strength graph")                                                                  \
  X(aggregate_s, "aggregation or C/F splitting")                                                   \
  X(fit_s, "tentative prolongator (near-nullspace fit)")                                           \
  X(prolongator_s, "prolongator smoothing")                                                        \
  X(galerkin_s, "Galerkin product P^T A P")                                                        \
  X(patches_s, "smoother patches")                                                                 \
  X(engine_s, "levels, smoothers, coarse solver")

/** How smoothed aggregation chooses the roots of its aggregates. */
typedef enum clmg_amg_roots {
  /** the default: parallel wherever the setup runs on the device
   * (clmg_amg_hierarchy_build_device, or clmg_amg_multigrid_create on a
   * GPU), else ordered */
  CLMG_AMG_ROOTS_AUTO = 0,
  /** greedily in row order: a root excludes the nodes within root_distance
   * strong edges as its breadth-first walk first reaches them, which leaves
   * some roots closer than an independent set would: smaller aggregates
   * (Regular mesh level 2: 3,801 against 1,447; Jacobi 2+2 PCG 13
   * iterations against 17) at a higher operator complexity (1.42 against
   * 1.10); host only */
  CLMG_AMG_ROOTS_ORDERED,
  /** a distance-root_distance maximal independent set of the strength graph
   * by rounds with fixed priorities hashed from the node numbers (Bell,
   * Dalton and Olson 2012): the greedy set in priority order, the same on
   * the host and on every device, and pyamg's aggregate sizes (1,533 on
   * Regular level 2). With the setup on a device the aggregation and the
   * near-nullspace fit run there too (for several unknowns per node on the
   * node matrix, each entry the Frobenius norm of a block). */
  CLMG_AMG_ROOTS_PARALLEL
} clmg_amg_roots;

/** How an AMG hierarchy is built; fill it with clmg_amg_options_defaults. */
typedef struct clmg_amg_options {
  clmg_amg_coarsening coarsening; /**< default smoothed aggregation */
  /** j is a strong neighbour of i when |a_ij| >= theta sqrt(|a_ii a_jj|)
   * (with blocks: the Frobenius norms of the node blocks); default 0: every
   * stored off-diagonal entry that is not zero */
  double strength_threshold;
  /** classical coarsening: j is a strong neighbour of i when |a_ij| >= theta
   * max_{k != i} |a_ik| (0: 0.25, hypre's default for 2D; 0.5 for 3D) */
  double classical_threshold;
  /** classical coarsening: how F-points interpolate (default extended+i) */
  clmg_amg_interpolation interpolation;
  /** classical coarsening: each row of P keeps at most this many entries,
   * the largest in magnitude, rescaled to the row's sum before truncation
   * (hypre's P_max_elmts); default 4 (hypre's GPU default), 0: no limit */
  int interpolation_max_entries;
  /** classical coarsening: entries of a row of P smaller in magnitude than
   * this times the row's largest are dropped and the rest rescaled to the
   * row's sum (hypre's trunc_factor); default 0: none; in [0, 1) */
  double interpolation_truncation;
  /** Vector PDEs: the matrix's unknowns come in nodes of block_size
   * consecutive rows (3 for 3D elasticity numbered x, y, z per node), and a
   * node's rows are aggregated together; 0 or 1: scalar. The rows must be a
   * multiple of it. */
  int block_size;
  /** The near-nullspace: num_candidates vectors of rows entries each,
   * candidate k at candidates + k * rows (borrowed; only read while the
   * hierarchy is built), which the tentative prolongator reproduces exactly
   * on every aggregate (a QR factorisation per aggregate, as pyamg's
   * fit_candidates). NULL: the constant per component of a node (block_size
   * vectors). For elasticity pass the rigid-body modes
   * (clmg_amg_rigid_body_modes). Each coarse level has num_candidates
   * unknowns per aggregate. At most 16 candidates. */
  const double *candidates;
  int num_candidates; /**< the number of vectors at candidates (0 with NULL candidates) */
  /** the roots of the aggregates are at least this many strong edges apart
   * plus one (a k-MIS): 2 (default; Fu et al. 2014's choice on tetrahedra)
   * gives larger aggregates than 1 */
  int root_distance;
  /** how the aggregates' roots are chosen (clmg_amg_roots) */
  clmg_amg_roots roots;
  /** the same on the coarser levels, whose Galerkin graphs are denser: 1
   * (default; with 2 there too, the aggregates grow so large that the
   * iterations rise with the levels: 8, 12, 14 on Regular levels 1-3
   * against 8, 10, 11); 0: root_distance */
  int coarse_root_distance;
  /** aggregates of fewer nodes are dissolved and their nodes joined to their
   * neighbours' (Fu et al. 2014 use 9 on tetrahedra); default 0: none */
  size_t min_aggregate_size;
  /** stop coarsening at or below this many rows (default 256) */
  size_t coarse_rows;
  int max_levels; /**< default 20 */
  /** omega of the prolongator smoothing; 0 (default): 4/3 over an estimate
   * of the largest eigenvalue of D^-1 A (power iteration) */
  double prolongator_damping;
  /** the patches of the patch block-Jacobi smoother group aggregates whose
   * roots (on the graph of the aggregates) are at least this many edges
   * apart plus one: 1 (default; Fu et al. 2014's choice) */
  int patch_root_distance;
  /** NULL (default), or where the setup writes its phases' seconds
   * (zeroed first); a few clmg_finish calls more on the device */
  clmg_amg_setup_times *times;
} clmg_amg_options;

/** The defaults: smoothed aggregation (classical: extended+i interpolation, at most 4
 * entries a row of P), every stored coupling strong, block size 1, the
 * constant as near-nullspace, roots 2 edges apart on the finest level and 1 on the coarser
 * (CLMG_AMG_ROOTS_AUTO), patches of aggregates 1 apart, coarsening down to 256 rows in at
 * most 20 levels, the estimated prolongator damping, no timing. A NULL options does
 * nothing. */
CLMG_API void clmg_amg_options_defaults(clmg_amg_options *options);

/** The rigid-body modes of linear elasticity at `nodes` nodes of dimension
 * dim (2 or 3), coordinates[node * dim + d], for unknowns numbered dim per
 * node: dim translations and 1 (2D) or 3 (3D) rotations about the nodes'
 * centroid, *count (3 or 6) vectors of nodes * dim entries, mode k at
 * modes + k * nodes * dim (caller-allocated: 6 * nodes * dim doubles is
 * always enough). The near-nullspace for clmg_amg_options.candidates. */
CLMG_API clmg_status clmg_amg_rigid_body_modes(size_t nodes, int dim, const double *coordinates,
                                               double *modes, int *count, clmg_error *error);

/** One classical coarsening of the square matrix a (lib/amg/classical.c):
 * the strength graph with threshold theta (|a_ij| >= theta max_{k != i}
 * |a_ik|), a PMIS C/F splitting of it and direct interpolation, not
 * truncated (clmg_amg_classical_interpolation chooses). P gets
 * a->rows rows and one column per C-point (numbered in row order); a row
 * with no strong neighbour (an identity row, say) is an F-point whose row
 * of P is zero. *coarse_count 0 means no coarsening was possible. The
 * classical counterpart of clmg_amg_aggregate, for one level. */
CLMG_API clmg_status clmg_amg_classical_prolongator(const clmg_csr *a, double theta, clmg_csr *p,
                                                    size_t *coarse_count, clmg_error *error);
/** One classical coarsening as the hierarchy builds it: the strength
 * threshold (options->classical_threshold, 0: 0.25), the PMIS splitting of
 * clmg_amg_classical_splitting, the interpolation options->interpolation,
 * and P's rows truncated by options->interpolation_max_entries and
 * options->interpolation_truncation with their sums kept (so constants are
 * still interpolated exactly where the untruncated rows do). P and
 * *coarse_count as clmg_amg_classical_prolongator; NULL options: defaults.
 * The other fields of options are not used. */
CLMG_API clmg_status clmg_amg_classical_interpolation(const clmg_csr *a,
                                                      const clmg_amg_options *options, clmg_csr *p,
                                                      size_t *coarse_count, clmg_error *error);
/** The C/F splitting the prolongators above are built on: is_coarse[i] 1 for
 * a C-point, 0 for an F-point (caller-allocated, a->rows); *coarse_count
 * the number of C-points. */
CLMG_API clmg_status clmg_amg_classical_splitting(const clmg_csr *a, double theta,
                                                  uint8_t *is_coarse, size_t *coarse_count,
                                                  clmg_error *error);

/** The aggregates of one level: aggregate[i] in [0, *count), or -1 for a
 * node with no strong neighbour (an identity row, say), which no aggregate
 * takes (its row of P is zero). aggregate is caller-allocated (rows). NULL
 * options: defaults. */
CLMG_API clmg_status clmg_amg_aggregate(const clmg_csr *a, const clmg_amg_options *options,
                                        int32_t *aggregate, size_t *count, clmg_error *error);

/** A hierarchy ready for clmg_multigrid_create(context, h.num_levels, h.a,
 * h.p, NULL, ...): level 0 the coarsest, num_levels - 1 a copy of the
 * given matrix; p[l] (l >= 1) maps level l - 1 to level l; R = P^T. */
typedef struct clmg_amg_hierarchy {
  int num_levels;  /**< levels, the finest included */
  clmg_csr *a;     /**< num_levels */
  clmg_csr *p;     /**< num_levels; p[0] empty */
  int32_t **patch; /**< num_levels; patch[l] (l >= 1): a patch id per row of a[l], patches
                      made of whole aggregates (Fu et al. 2014's double partitioning) */
  /** clmg_amg_hierarchy_build_device only (NULL otherwise): every level's
   * matrix and prolongation as device arrays, for
   * clmg_multigrid_create_from_csr_device; p on the host then stays empty */
  clmg_csr_device *device_a;
  clmg_csr_device *device_p; /**< the prolongations as device arrays (see device_a) */
  /** the restrictions R = P^T as device arrays where the device made them
   * (the Galerkin product's transpose, kept so that the engine need not
   * transpose P again; pass as r to clmg_multigrid_create_from_csr_device),
   * else NULL */
  clmg_csr_device *device_r;
} clmg_amg_hierarchy;

/** a must be square. NULL options: defaults. */
CLMG_API clmg_status clmg_amg_hierarchy_build(const clmg_csr *a, const clmg_amg_options *options,
                                              clmg_amg_hierarchy *out, clmg_error *error);
/** The same hierarchy with the products on the device: P = (I - omega D^-1
 * A) P~, its transpose and A_c = P^T A P run there (clmg_csr_device_multiply),
 * the aggregation and the patches stay on the host, which gets each coarse
 * matrix back (a is small next to the fine one). Levels as above, plus
 * device_a and device_p (double, or float on a device without fp64); hand
 * them to clmg_multigrid_create_from_csr_device. A device failure is a
 * status with the context's message in error. Free the hierarchy before the
 * context. */
CLMG_API clmg_status clmg_amg_hierarchy_build_device(clmg_context *context, const clmg_csr *a,
                                                     const clmg_amg_options *options,
                                                     clmg_amg_hierarchy *out, clmg_error *error);
/** Frees every level's host matrices, patches and device arrays, and zeroes the
 * hierarchy; NULL and an all-zero hierarchy are fine. A hierarchy with device arrays
 * must be freed before their context. */
CLMG_API void clmg_amg_hierarchy_free(clmg_amg_hierarchy *hierarchy);

/** Patch block-Jacobi smoothing on an AMG hierarchy's levels: pass
 * clmg_amg_patch_smoother_factory as clmg_multigrid_options.smoother_factory
 * and a clmg_amg_patch_smoothing as its data (both must outlive
 * clmg_multigrid_create; the smoothers copy what they need). A level is
 * found by its rows, so coarse_max_rows may drop coarse levels. */
typedef struct clmg_amg_patch_smoothing {
  const clmg_amg_hierarchy *hierarchy; /**< whose levels and patches the smoothers are made from */
  int inner;          /**< inner Jacobi iterations per patch (0: 3, Fu et al. 2014) */
  double omega;       /**< outer damping (0: 1) */
  double inner_omega; /**< inner damping (0: 0.8) */
  /** 1: symmetric multicolour Gauss-Seidel (clmg_smoother_gauss_seidel) on
   * every level instead of the patches, damped by omega; inner and
   * inner_omega unused. Like the patches it needs the levels' host
   * matrices, which is why it is made here. */
  int gauss_seidel;
} clmg_amg_patch_smoothing;

/** The clmg_smoother_factory of the patch block-Jacobi (or, with gauss_seidel, symmetric
 * Gauss-Seidel) smoother on an AMG level: smoothing is a clmg_amg_patch_smoothing; the
 * level is the hierarchy's level with a's rows. CLMG_ERROR_INVALID_ARGUMENT, with the
 * context's message, when no level has that many rows (and patches). */
CLMG_API clmg_status clmg_amg_patch_smoother_factory(void *smoothing, clmg_context *context,
                                                     int level, const clmg_operator *a,
                                                     clmg_smoother *smoother);

/** The AMG hierarchy of a as a multigrid engine in one call: built with the
 * Galerkin products on the device where the context's device is a GPU
 * (clmg_amg_hierarchy_build_device) and on the host elsewhere, handed to
 * the engine with mg_options (its matrix options give the levels' format
 * and precision), then freed. patch given: patch block-Jacobi smoothing
 * with its inner, omega and inner_omega, or with its gauss_seidel
 * symmetric multicolour Gauss-Seidel (its hierarchy is ignored: this one's
 * is used); NULL: mg_options' smoother. mg_options and patch both NULL: the
 * robust default, Chebyshev smoothing on D^-1 A with three steps before
 * and after the coarse correction (a cycle that stays SPD for CG on any SPD
 * matrix, within 1.3 x + 2 of pyamg's iterations on the test set of
 * clmg/spd_problems.h, and two launches a step on a GPU, where multicolour
 * Gauss-Seidel needs two per colour). NULL amg_options: defaults. A
 * failure's message is the context's. */
CLMG_API clmg_status clmg_amg_multigrid_create(clmg_context *context, const clmg_csr *a,
                                               const clmg_amg_options *amg_options,
                                               const clmg_multigrid_options *mg_options,
                                               const clmg_amg_patch_smoothing *patch,
                                               clmg_multigrid **multigrid);

#ifdef __cplusplus
}
#endif

#endif
