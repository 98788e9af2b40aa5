/** @file
 * clmg multigrid: ONE cycle engine for every hierarchy (geometric, algebraic,
 * saddle-point, structured grids). A hierarchy is a list of levels, each
 * {A, P, R, smoother} with a coarse solver on level 0; a cycle is a sequence
 * of operator applications and vector updates on the device (Geveler et al.,
 * "Efficient finite element geometric multigrid solvers for unstructured
 * grids on GPUs", section 2.1). The engine runs as a solver (cycles until a
 * tolerance) or as a preconditioner for any Krylov method (one cycle from a
 * zero guess).
 *
 * Three interfaces plug into it (structs of function pointers with a data
 * pointer, as clmg_operator and clmg_preconditioner are):
 *   - the level operators and transfers are clmg_operator (operator.h);
 *   - a smoother (clmg_smoother) is made per level by a factory; the
 *     library's are Jacobi, SPAI-0 and Chebyshev (lib/solve/smoothers/), and
 *     a caller's own plugs in through options.smoother_factory;
 *   - the coarse solver (clmg_coarse_solver): dense direct, a Krylov solve,
 *     or any preconditioner.
 * The engine itself assumes nothing of the operator: no diagonal, no
 * symmetry, no scalar field. What a smoother or coarse solver needs, it
 * checks in its own setup.
 *
 * Levels are numbered from 0, the coarsest, to levels - 1, the finest; every
 * module that reports levels (homg.h's structured grids too) numbers them
 * the same way. */
#ifndef CLMG_MULTIGRID_H
#define CLMG_MULTIGRID_H

#include "clmg/krylov.h"
#include "clmg/operator.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The shape of a cycle: how often a level visits the level below it. */
typedef enum clmg_cycle_type {
  CLMG_CYCLE_V = 0, /**< V-cycle: one visit */
  CLMG_CYCLE_W,     /**< W-cycle: two visits */
  CLMG_CYCLE_F      /**< F-cycle: an F-cycle, then a V-cycle, below */
} clmg_cycle_type;

/* ---- smoothers ---- */

/** A smoother on one level. The engine calls setup once when the hierarchy is
 * made and again on clmg_multigrid_refresh (after the operator's values
 * changed); apply runs `steps` (>= 1) steps on A x = b, improving x in place,
 * or, with x_is_zero, taking x as 0 without reading it. */
typedef struct clmg_smoother {
  void *data;       /**< passed to every entry */
  const char *name; /**< for reports: "jacobi", "chebyshev", a caller's */
  /** Prepares the smoother for the level's operator a (diagonals, eigenvalue
   * estimates, inverses); called again after the operator's values changed. Required. */
  clmg_status (*setup)(void *data, const clmg_operator *a);
  /** Runs `steps` steps on A x = b, improving x in place (x_is_zero: x taken as 0
   * without being read). Required. */
  clmg_status (*apply)(void *data, const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                       int steps, int x_is_zero);
  /** Optional: apply, then defect = b - A x, in fewer passes than the two
   * calls (a fused smooth-then-defect kernel). */
  clmg_status (*apply_defect)(void *data, const clmg_operator *a, const clmg_vector *b,
                              clmg_vector *x, int steps, int x_is_zero, clmg_vector *defect);
  /** Optional: the fewest bytes `steps` steps move, operator reads included,
   * starting from x = 0 when x_is_zero (for clmg_multigrid_cycle_bytes). */
  double (*bytes)(void *data, const clmg_operator *a, int steps, int x_is_zero);
  /** Optional: the eigenvalue bound the smoother works with (Chebyshev:
   * lambda_max of D^-1 A), else 0. */
  double (*parameter)(void *data);
  /** Optional: the damping factor in use (Jacobi, SPAI-0: omega), else 0. */
  double (*damping)(void *data);
  /** Releases data; may be NULL. */
  void (*destroy)(void *data);
} clmg_smoother;

/** Makes the smoother of `level` (>= 1; level 0 has the coarse solver) whose
 * operator is a. The engine calls its setup. */
typedef clmg_status (*clmg_smoother_factory)(void *factory_data, clmg_context *context, int level,
                                             const clmg_operator *a, clmg_smoother *smoother);

/** Calls the smoother's destroy (when set) on its data and zeroes the struct; NULL and an
 * all-zero smoother are fine. */
CLMG_API void clmg_smoother_destroy(clmg_smoother *smoother);

/* The library's smoothers (each in its own file under lib/solve/smoothers/).
 * Diagonal ones need the operator's diagonal and refuse a zero entry.
 * omega 0: the smoother's default. */
/** x += omega D^-1 (b - A x), one fused pass per step (default omega 0.7) */
CLMG_API clmg_status clmg_smoother_jacobi(clmg_context *context, double omega,
                                          clmg_smoother *smoother);
/** Jacobi with omega = scale / lambda_max(D^-1 A), lambda_max estimated on
 * the level (12 power steps, raised by 10%; default scale 4/3): convergent,
 * and a cycle with it SPD, whatever the diagonal; its name "jacobi-rho" */
CLMG_API clmg_status clmg_smoother_jacobi_estimated(clmg_context *context, double scale,
                                                    clmg_smoother *smoother);
/** x += omega M (b - A x), M = diag(a_ii / sum_j a_ij^2) (default omega 1) */
CLMG_API clmg_status clmg_smoother_spai0(clmg_context *context, double omega,
                                         clmg_smoother *smoother);
/** Chebyshev polynomial of degree `steps` in D^-1 A on [lower_ratio lambda,
 * lambda], lambda the largest eigenvalue estimated by eigen_iterations power
 * steps and raised by 10% (0: defaults 0.3 and 12) */
CLMG_API clmg_status clmg_smoother_chebyshev(clmg_context *context, double lower_ratio,
                                             int eigen_iterations, clmg_smoother *smoother);

/** Inexact patch block-Jacobi (Fu et al. 2014, eq. 8): x += omega M^-1 (b -
 * A x) with M the blocks of A within patches of rows (patch[i] in [0, rows)
 * per row of the host matrix a; ids need not be contiguous), each block's
 * inverse approximated by `inner` weighted-Jacobi iterations (damping
 * inner_omega) in the device's local memory. 0 for inner, omega or
 * inner_omega: 3, 1 and 0.8. The blocks are copied from a; the smoother's
 * operator must be a's. Patches larger than 512 rows are cut into pieces.
 * clmg_amg_patch_smoother_factory (clmg/amg.h) makes them for AMG levels. */
CLMG_API clmg_status clmg_smoother_patch_jacobi(clmg_context *context, const clmg_csr *a,
                                                const int32_t *patch, int inner, double omega,
                                                double inner_omega, clmg_smoother *smoother);

/** Multicolour Gauss-Seidel (Adams, "A distributed memory unstructured
 * Gauss-Seidel algorithm for multigrid smoothers", 2001): the rows are
 * coloured so that no two rows of a colour couple (a_ij or a_ji stored),
 * and a step visits the colours in order 0..k-1, every row i of a colour
 * taking x_i += omega (b_i - sum_j a_ij x_j) / a_ii from the current x: a
 * true Gauss-Seidel sweep in colour order, one launch per colour. With
 * `symmetric` the colours are then visited backward (k-1..0), which makes
 * the smoother's iteration A-symmetric, as CG needs of a multigrid
 * preconditioner on SPD matrices that are not diagonally dominant. omega 0
 * means 1; it must lie in (0, 2). A zero or non-finite diagonal entry is
 * refused, naming the row. a: square host CSR, borrowed: it must outlive
 * the smoother, whose every setup reads its values (new values of the same
 * pattern, then clmg_multigrid_refresh); the smoother's operator must be
 * a's (its rows and precision, double or float). */
CLMG_API clmg_status clmg_smoother_gauss_seidel(clmg_context *context, const clmg_csr *a,
                                                int symmetric, double omega,
                                                clmg_smoother *smoother);
/** The smoother's colours (Jones and Plassmann, "A parallel graph colouring
 * heuristic", 1993, on the symmetrised pattern of a; deterministic: a fixed
 * hash of the row index is its weight; then iterated greedy recolouring,
 * class by class): colour[i] in [0, *num_colours) for each row, no two
 * coupled rows alike, every colour used. */
CLMG_API clmg_status clmg_gauss_seidel_colour(const clmg_csr *a, int32_t *colour, int *num_colours,
                                              clmg_error *error);
/** `steps` Gauss-Seidel steps on the host in the colours' order (colour:
 * a valid colouring of a, e.g. clmg_gauss_seidel_colour's), the same as the
 * smoother's: the reference its kernel is tested against. */
CLMG_API clmg_status clmg_gauss_seidel_smooth_host(const clmg_csr *a, const int32_t *colour,
                                                   int num_colours, int symmetric, double omega,
                                                   int steps, const double *b, double *x,
                                                   clmg_error *error);

/** Vanka smoothing (Vanka 1986) in the red-black form of Bauer, Klement,
 * Oberhuber and Zabka, "Implementation of the Vanka-type multigrid solver
 * for the finite element approximation of the Navier-Stokes equations on
 * GPU": block Gauss-Seidel over cells of a saddle-point system (zero
 * diagonal entries allowed), each cell naming `block` unknowns (1 to 16;
 * cell_unknowns[c * block + j]; Crouzeix-Raviart P1nc/P0: the two
 * velocities of its three edges and its pressure, clmg_stokes_cell_unknowns).
 * A step visits the cells colour by colour (cells sharing an unknown differ
 * in colour: red-black when the cells allow two colours, else greedy
 * colours); each cell of a colour adds omega A_KK^-1 (b - A x)_K computed
 * from the x of before the colour, so the result is the same on every
 * device. A_KK^-1 by Gaussian elimination with partial pivoting, stored at
 * setup (SI) or recomputed in every visit (NSI); an unknown whose pivot
 * vanishes (relative 1e-12) is left unmoved. Unknowns of no cell are not
 * smoothed. a: host CSR with sorted columns, borrowed: it must outlive the
 * smoother, whose every setup reads its values (new values of the same
 * pattern, then clmg_multigrid_refresh); the smoother's operator must be
 * a's. On the device each cell's rows are packed to the length of the
 * longest row among the cells' unknowns (num_cells x block x that many
 * column-value slots, refilled at every setup): right for cells of short
 * rows such as Crouzeix-Raviart's (7), costly when one unknown couples to
 * very many. */
typedef struct clmg_vanka_options {
  double omega;       /**< in (0, 2); default 1 */
  int store_inverses; /**< 1: SI (default), 0: NSI */
  /** 1: the first setup (the engine's, when the hierarchy is made) does
   * nothing, for values that are refilled and refreshed
   * (clmg_multigrid_refresh) before the first cycle: the uploads and
   * inverses of the values at creation are not made only to be replaced;
   * applying the smoother before the second setup fails. Default 0. */
  int defer_first_setup;
} clmg_vanka_options;
/** The defaults: omega 1, stored inverses (SI), no deferred setup. options
 * must not be NULL. */
CLMG_API void clmg_vanka_options_defaults(clmg_vanka_options *options);
/** The Vanka smoother's names, "vanka-si" (stored inverses) and
 * "vanka-nsi" (recomputed in every visit), as commands and reports spell
 * them: parse returns 1 and sets store_inverses for a known name, else 0. */
CLMG_API const char *clmg_vanka_name(int store_inverses);
/** See clmg_vanka_name. */
CLMG_API int clmg_vanka_name_parse(const char *name, int *store_inverses);
/** The Vanka smoother described at clmg_vanka_options on the host matrix a (borrowed),
 * over num_cells cells of `block` unknowns each (cell_unknowns, copied). NULL options:
 * the defaults. */
CLMG_API clmg_status clmg_smoother_vanka(clmg_context *context, const clmg_csr *a, size_t num_cells,
                                         int block, const int32_t *cell_unknowns,
                                         const clmg_vanka_options *options,
                                         clmg_smoother *smoother);
/** The same with the values on the device (assembled there, e.g. by
 * clmg_stokes_assembler): every setup copies `values` (clmg_csr_nnz(a)
 * doubles or floats in a's CSR order, borrowed: it must outlive the
 * smoother) instead of reading a's host values; a gives the pattern. */
CLMG_API clmg_status clmg_smoother_vanka_device(clmg_context *context, const clmg_csr *a,
                                                const clmg_vector *values, size_t num_cells,
                                                int block, const int32_t *cell_unknowns,
                                                const clmg_vanka_options *options,
                                                clmg_smoother *smoother);
/** The colours the smoother uses: colour[c] in [0, *num_colours) for each
 * cell (n: the number of unknowns). */
CLMG_API clmg_status clmg_vanka_colour_cells(size_t n, size_t num_cells, int block,
                                             const int32_t *cell_unknowns, int32_t *colour,
                                             int *num_colours, clmg_error *error);
/** `steps` Vanka steps on the host, the same as the smoother's: the
 * reference its kernels are tested against. */
CLMG_API clmg_status clmg_vanka_smooth_host(const clmg_csr *a, size_t num_cells, int block,
                                            const int32_t *cell_unknowns, double omega, int steps,
                                            const double *b, double *x, clmg_error *error);

/** The library's smoothers by name, for options and command lines. */
typedef enum clmg_smoother_type {
  CLMG_SMOOTHER_JACOBI = 0, /**< clmg_smoother_jacobi */
  CLMG_SMOOTHER_CHEBYSHEV,  /**< clmg_smoother_chebyshev */
  CLMG_SMOOTHER_SPAI0,      /**< clmg_smoother_spai0 */
  CLMG_SMOOTHER_JACOBI_RHO  /**< clmg_smoother_jacobi_estimated (omega: its scale) */
} clmg_smoother_type;

/* ---- coarse solvers ---- */

/** The solver on level 0: x = (an approximation of) A^-1 b; x is not read. */
typedef struct clmg_coarse_solver {
  void *data;       /**< passed to every entry */
  const char *name; /**< for reports: "direct", "pcg", a caller's */
  /** Prepares the solve for level 0's operator a; called again after its values
   * changed. Required. */
  clmg_status (*setup)(void *data, const clmg_operator *a);
  /** x = (an approximation of) A^-1 b; x is not read. Required. */
  clmg_status (*solve)(void *data, const clmg_operator *a, const clmg_vector *b, clmg_vector *x);
  double (*bytes)(void *data, const clmg_operator *a); /**< optional, per solve */
  void (*destroy)(void *data);                         /**< releases data; may be NULL */
} clmg_coarse_solver;

/** Calls the solver's destroy (when set) on its data and zeroes the struct; NULL and an
 * all-zero solver are fine. */
CLMG_API void clmg_coarse_solver_destroy(clmg_coarse_solver *solver);

/** Dense direct: setup forms A column by column (rows applications of the
 * operator, so any operator works), inverts it on the host with partial
 * pivoting (indefinite and nonsymmetric matrices are fine; a singular one
 * fails) and a solve is one GEMV. For small coarse levels. */
CLMG_API clmg_status clmg_coarse_solver_direct(clmg_context *context, clmg_coarse_solver *solver);
/** A Krylov solve to a relative tolerance, Jacobi-preconditioned when the
 * operator has a diagonal. CG assumes A symmetric positive definite; use
 * GMRES or BiCGStab otherwise. Running out of iterations is not an error
 * (the cycle still gets a correction). */
CLMG_API clmg_status clmg_coarse_solver_krylov(clmg_context *context, clmg_krylov_method method,
                                               double relative_tolerance, int max_iterations,
                                               clmg_coarse_solver *solver);
/** `steps` steps of a smoother from zero as the coarse solve (a level too
 * large for the dense inverse, where an approximate correction will do);
 * takes ownership of the smoother, whose setup becomes the solver's. */
CLMG_API clmg_status clmg_coarse_solver_smoother(clmg_smoother *smoother, int steps,
                                                 clmg_coarse_solver *solver);
/** Any preconditioner as the coarse solve (x = M^-1 b); takes ownership of it. */
CLMG_API clmg_status clmg_coarse_solver_preconditioner(clmg_preconditioner *preconditioner,
                                                       clmg_coarse_solver *solver);

/** The library's coarse solvers, for clmg_multigrid_options.coarse. */
typedef enum clmg_coarse_solver_type {
  CLMG_COARSE_AUTO = 0, /**< direct when the coarsest level has <= direct_max_rows rows, else a
                           Krylov solve with coarse_method */
  CLMG_COARSE_PCG,      /**< a Krylov solve (coarse_method, default CG with Jacobi) to
                           coarse_relative_tolerance (the FE-GMG default: 1e-2) */
  CLMG_COARSE_DIRECT    /**< clmg_coarse_solver_direct */
} clmg_coarse_solver_type;

/** The cycle's name: "v", "w" or "f" ("unknown" for any other value); static. */
CLMG_API const char *clmg_cycle_type_name(clmg_cycle_type type);
CLMG_API int clmg_cycle_type_parse(const char *name, clmg_cycle_type *type); /**< "v", "w", "f" */
/** The smoother's name: "jacobi", "chebyshev", "spai0" or "jacobi-rho" ("unknown" for any
 * other value); static. */
CLMG_API const char *clmg_smoother_type_name(clmg_smoother_type type);
/** "jacobi", "chebyshev", "spai0", "jacobi-rho"; returns 0 if unknown. */
CLMG_API int clmg_smoother_type_parse(const char *name, clmg_smoother_type *type);

/** How a hierarchy cycles, smooths and solves its coarse level; fill it with
 * clmg_multigrid_options_defaults. */
typedef struct clmg_multigrid_options {
  clmg_cycle_type cycle; /**< default V */
  int pre_smoothing;     /**< steps before restriction (default 4) */
  int post_smoothing;    /**< steps after prolongation (default 4) */
  /** The variable V-cycle (Bramble, Pasciak and Xu; Brenner for
   * nonconforming elements): the smoothing steps grow by this factor per
   * level below the finest (rounded, at most 64 times), in [1, 4]; 1 (the
   * default) or 0: the same steps on every level. */
  double smoothing_growth;
  clmg_smoother_type smoother; /**< default Jacobi */
  double omega; /**< Jacobi / SPAI-0 damping; 0 (default): 0.7 for Jacobi, 1 for SPAI-0; jacobi-rho:
                   the scale over lambda_max (0: 4/3) */
  double chebyshev_lower_ratio;   /**< Chebyshev interval [lambda_max * ratio, lambda_max] (default
                                     0.3) */
  int eigen_iterations;           /**< power steps for lambda_max(D^-1 A) (default 12) */
  clmg_coarse_solver_type coarse; /**< default AUTO */
  size_t direct_max_rows;         /**< AUTO's limit for the direct solve (default 2048) */
  /** 0 (default): level 0 is the coarse level. Else the finest level with at
   * most this many rows becomes the coarse level and the coarser ones are
   * not used: one larger direct solve instead of several levels whose
   * kernels are all launch latency. */
  size_t coarse_max_rows;
  double coarse_relative_tolerance; /**< PCG coarse solve (default 1e-2) */
  int coarse_max_iterations;        /**< PCG coarse solve (default 1000) */
  clmg_matrix_options matrix;       /**< format and precision of every level's matrices */
  /** A caller's smoother: when set, it makes every level's smoother and
   * `smoother`, omega, chebyshev_lower_ratio and eigen_iterations are not
   * read. */
  clmg_smoother_factory smoother_factory;
  void *smoother_factory_data; /**< passed to smoother_factory */
  /** A caller's coarse solver: when its solve is set, the hierarchy takes it
   * over (destroys it with itself) and `coarse` is not read. */
  clmg_coarse_solver coarse_solver;
  /** The Krylov method of the PCG / AUTO coarse solve: CLMG_KRYLOV_AUTO (the
   * default) means CG, which assumes SPD; say GMRES for other operators. */
  clmg_krylov_method coarse_method;
  /** The coarse tail: the levels of at most this many rows, from the
   * coarsest up, run each cycle's sub-cycle over them as ONE kernel launch
   * of one work-group (on a GPU each launch of a small level costs as much
   * as a large one). -1 (the default): the device's value (docs/devices.md,
   * tail_rows: the tail's work-group size on GPUs, 1024 on the H200; 0 on
   * CPUs); 0: off. Only where every level
   * in it has a Jacobi, jacobi-rho, SPAI-0 or Chebyshev smoother and device
   * matrices, and the coarse solve is direct; otherwise the cycle runs as
   * it would without (clmg_multigrid_tail_levels says which). V, W and F
   * cycles. */
  int64_t tail_rows;
  /** Fused kernels on the levels above the tail (docs/performance.md, "Fused
   * kernels"): on levels of at most this many rows whose A and R are device
   * matrices, the defect and its restriction run as one launch, each coarse
   * row recomputing the defect of the fine rows it reads. -1 (the default):
   * the device's value (docs/devices.md, fused_restrict_rows); 0: off. */
  int64_t fused_restrict_rows;
  /** On levels of at most this many rows with a Jacobi, jacobi-rho or
   * SPAI-0 smoother and device matrices, two smoothing steps per launch
   * (three from x = 0), the first step recomputed for every row that reads
   * it. -1 (the default): the device's value (docs/devices.md,
   * fused_smooth_rows); 0: off. */
  int64_t fused_smooth_rows;
} clmg_multigrid_options;

/** The defaults: V-cycle, Jacobi 4+4 (omega 0.7), Chebyshev ratio 0.3 and 12 power steps,
 * the AUTO coarse solve (direct up to 2048 rows, else CG with Jacobi to 1e-2, at most 1000
 * iterations), smoothing_growth 1, every level, the device's coarse tail (tail_rows -1) and
 * fused kernels (fused_restrict_rows and fused_smooth_rows -1),
 * the matrix defaults. A NULL options does
 * nothing. */
CLMG_API void clmg_multigrid_options_defaults(clmg_multigrid_options *options);

/** A multigrid hierarchy on the device: levels, smoothers, the coarse solver and the
 * cycle's work vectors (opaque). */
typedef struct clmg_multigrid clmg_multigrid;

/** Builds the hierarchy on the device. Level 0 is the coarsest, level
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
/** The same from CSR arrays on the device (assembled or multiplied there,
 * e.g. by clmg_fe_poisson_hierarchy_device): each becomes a device matrix
 * in options->matrix's format and precision without a trip through the
 * host; R = P^T is formed on the device where r is NULL or r[l] empty. The
 * arrays stay the caller's (free them once the hierarchy exists). */
CLMG_API clmg_status clmg_multigrid_create_from_csr_device(
    clmg_context *context, int num_levels, const clmg_csr_device *a, const clmg_csr_device *p,
    const clmg_csr_device *r, const clmg_multigrid_options *options, clmg_multigrid **multigrid);
/** Destroys the levels' operators, smoothers and vectors and the coarse solver. NULL does
 * nothing. */
CLMG_API void clmg_multigrid_destroy(clmg_multigrid *multigrid);

/** One level of a hierarchy made from device objects. */
typedef struct clmg_multigrid_level {
  clmg_operator a; /**< the level's operator (square) */
  clmg_operator p; /**< level >= 1: prolongation from level - 1 (rows(l) x rows(l - 1)) */
  clmg_operator r; /**< level >= 1: restriction to level - 1 (rows(l - 1) x rows(l)) */
  /** Optional: this level's smoother (level >= 1); apply NULL: made by the
   * options' factory or smoother type. */
  clmg_smoother smoother;
} clmg_multigrid_level;

/** Builds a hierarchy from operators that already live on the device
 * (matrices assembled or multiplied there, block operators, stencils).
 * Level 0 is the coarsest. The hierarchy takes over every operator and
 * smoother in levels[] and destroys them with itself, or at once on failure;
 * the caller's structs are zeroed. To keep an object alive beyond the
 * hierarchy, pass a borrowing operator (clmg_operator_from_matrix with
 * take_ownership 0). options->matrix is not read. */
CLMG_API clmg_status clmg_multigrid_create_from_levels(clmg_context *context, int num_levels,
                                                       clmg_multigrid_level *levels,
                                                       const clmg_multigrid_options *options,
                                                       clmg_multigrid **multigrid);

/** Re-runs every smoother's and the coarse solver's setup, after operator
 * values changed (clmg_matrix_update_values: a new time step or nonlinear
 * iteration). The pattern and sizes must be those of the setup. */
CLMG_API clmg_status clmg_multigrid_refresh(clmg_multigrid *multigrid);

/** New values for level `level`'s matrix (0 the coarsest), in the CSR order
 * it was made from (clmg_matrix_update_values: a hierarchy made from device
 * arrays); then clmg_multigrid_refresh. */
CLMG_API clmg_status clmg_multigrid_update_values(clmg_multigrid *multigrid, int level,
                                                  const double *values);
/** The same from a device vector (clmg_matrix_update_values_device). */
CLMG_API clmg_status clmg_multigrid_update_values_device(clmg_multigrid *multigrid, int level,
                                                         const clmg_vector *values);
/** The number of levels in use (0 for NULL). */
CLMG_API int clmg_multigrid_levels(const clmg_multigrid *multigrid);
/** A level's device matrix, when its operator is one (NULL otherwise). */
CLMG_API const clmg_matrix *clmg_multigrid_matrix(const clmg_multigrid *multigrid, int level);
/** A level's operator (for a Krylov method around the multigrid preconditioner). */
CLMG_API const clmg_operator *clmg_multigrid_operator(const clmg_multigrid *multigrid, int level);
/** The name of a level's smoother ("jacobi", a caller's name; "" on level 0). */
CLMG_API const char *clmg_multigrid_smoother_name(const clmg_multigrid *multigrid, int level);
/** The damping factor a level's smoother uses (omega of Jacobi and SPAI-0,
 * their default when options.omega was 0); 0 for smoothers without one. */
CLMG_API double clmg_multigrid_smoother_damping(const clmg_multigrid *multigrid, int level);
/** Largest eigenvalue estimate of D^-1 A on a level (0 unless Chebyshev). */
CLMG_API double clmg_multigrid_lambda_max(const clmg_multigrid *multigrid, int level);
/** The levels the coarse tail runs in one launch per cycle (levels 0 to
 * this minus 1; see clmg_multigrid_options.tail_rows); 0: none (or NULL). */
CLMG_API int clmg_multigrid_tail_levels(const clmg_multigrid *multigrid);
/** The coarse solver in use: "direct", "pcg" (any Krylov solve) or a caller's name. */
CLMG_API const char *clmg_multigrid_coarse_solver(const clmg_multigrid *multigrid);

/** The fewest bytes one iteration of clmg_multigrid_solve must move through
 * device memory: the cycle (every matrix read once per SpMV-family kernel,
 * every vector once per read or write, coarse levels as often as the cycle
 * visits them) plus the defect and its norm after it; a PCG coarse solve
 * counts one iteration. Divided by the copy bandwidth, this is the cycle's
 * bandwidth floor. */
CLMG_API double clmg_multigrid_iteration_bytes(const clmg_multigrid *multigrid);
/** The fewest bytes one cycle moves, without the defect after it: from
 * x = 0 on the finest level when x_is_zero (a cycle as a preconditioner).
 * Coarse levels start from zero on their first visit of a cycle. */
CLMG_API double clmg_multigrid_cycle_bytes(const clmg_multigrid *multigrid, int x_is_zero);

/** One cycle on the finest level: x is improved in place (b and x have the
 * matrix precision and the finest level's size). */
CLMG_API clmg_status clmg_multigrid_cycle(clmg_multigrid *multigrid, const clmg_vector *b,
                                          clmg_vector *x);

/** One cycle starting on `level` (0 is the coarsest, levels - 1 the finest,
 * as everywhere in the engine) for A_level x = b, improving x in place, or,
 * with x_is_zero, taking x as 0 without reading it. On level 0 it is the
 * coarse solve (x is not read). b and x are the caller's vectors of that
 * level's size and the hierarchy's precision. Full multigrid uses it: a
 * cycle on every level from the coarsest up, each starting from the
 * interpolated solution of the level below. */
CLMG_API clmg_status clmg_multigrid_cycle_level(clmg_multigrid *multigrid, int level,
                                                const clmg_vector *b, clmg_vector *x,
                                                int x_is_zero);

/** Multigrid as a solver: cycles from the initial guess x until
 * ||b - A x|| <= tol ||b|| (options as for CG; iterations count cycles, the
 * history holds the relative residual after each cycle). Reads back one
 * scalar per cycle. */
CLMG_API clmg_status clmg_multigrid_solve(clmg_multigrid *multigrid, const clmg_vector *b,
                                          clmg_vector *x, const clmg_krylov_options *options,
                                          clmg_krylov_result *result);

/** One cycle from a zero initial guess as a preconditioner for any Krylov
 * method, on vectors of the hierarchy's precision (wrap it with
 * clmg_preconditioner_in_precision for a float cycle in a double method).
 * The preconditioner borrows the hierarchy: destroy the preconditioner first. */
CLMG_API clmg_status clmg_multigrid_preconditioner(clmg_multigrid *multigrid,
                                                   clmg_preconditioner *preconditioner);

#ifdef __cplusplus
}
#endif

#endif
