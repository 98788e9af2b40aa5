/** @file
 * clmg_mpi: distributed sparse operators over MPI (a separate library,
 * libclmg_mpi, so that libclmg never needs MPI).
 *
 * One OpenCL device per rank, one clmg context per rank. A clmg_mpi binds a
 * context to a communicator and installs a reducer on it
 * (clmg_context_set_reducer): from then on every dot product and norm on
 * that context is a global one, so the Krylov methods of clmg/krylov.h run
 * unchanged on distributed operators and on vectors that hold each rank's
 * rows. A distributed matrix owns a contiguous block of global rows per rank
 * (rank order); its operator does the halo exchange inside apply: the
 * entries other ranks need are packed on the device, sent with non-blocking
 * MPI while the local block's product runs, and the received ghost values
 * are uploaded for the off-process block's product.
 *
 * Collective calls: every rank of the communicator calls them in the same
 * order. When one rank fails (a bad file, an out-of-range column, out of
 * memory), every rank returns that status, and every rank's context message
 * says "rank R: " and the failing rank's message: nothing hangs.
 *
 * Solves agree too. A step that fails on one rank only inside a Krylov
 * method or a multigrid cycle or solve (a kernel launch, an allocation, a
 * caller's preconditioner, operator, smoother or coarse solver) is held
 * back on that rank, which carries on through the communication the others
 * expect (halo exchanges still send and receive, reductions add zeros) up
 * to the next reduction: each reduction carries the number of ranks
 * holding a failure as one more value, and when it is nonzero every rank
 * ends the method with the lowest failing rank's status and "rank R: ..."
 * message (the reducer's agree, clmg_mpi_agree). A solve that would return
 * before another reduction (one cycle alone, a method at its iteration
 * limit) agrees once more as it returns, and a Krylov method agrees after
 * making its work vectors; no MPI operation is left pending, so the next
 * solve on the communicator works. This costs one double per reduction
 * and one reduction per solve. A caller's operator, smoother or coarse
 * solver that communicates must make its exchanges even when its own part
 * fails, as the library's do. */
#ifndef CLMG_MPI_H
#define CLMG_MPI_H

#include <mpi.h>

#include "clmg/amg.h"
#include "clmg/fem.h"
#include "clmg/krylov.h"
#include "clmg/multigrid.h"
#include "clmg/operator.h"
#include "clmg/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A context bound to an MPI communicator, with its reducer and the halos' second queue
 * (opaque). */
typedef struct clmg_mpi clmg_mpi;

/** Collective over comm, before any context exists: the device string
 * ("P:D") for this rank when the caller names none: the GPUs of the first
 * platform that has one, taken in turn by the ranks of one host (by their
 * place among comm's ranks on it; several share a GPU when the host has
 * fewer). device[0] is '\0' when the host has no GPU: the library's
 * default device then applies. */
CLMG_API void clmg_mpi_host_device(MPI_Comm comm, char *device, size_t size);

/** Collective. Binds context to a duplicate of comm and installs the MPI
 * reducer on it (until clmg_mpi_destroy); makes a second command queue on
 * the context's device, on which the halos travel. */
CLMG_API clmg_status clmg_mpi_create(clmg_context *context, MPI_Comm comm, clmg_mpi **mpi);
/** Collective. Removes the reducer (the context is local again) and frees
 * the duplicate communicator and the halos' queue. Destroy the distributed
 * matrices and hierarchies made with it first. NULL is fine. */
CLMG_API void clmg_mpi_destroy(clmg_mpi *mpi);
/** This process's rank in the communicator (0 for NULL). */
CLMG_API int clmg_mpi_rank(const clmg_mpi *mpi);
/** The number of ranks in the communicator (1 for NULL). */
CLMG_API int clmg_mpi_size(const clmg_mpi *mpi);
/** The context it is bound to (NULL for NULL). */
CLMG_API clmg_context *clmg_mpi_context(const clmg_mpi *mpi);

/** Collective. Every rank passes the status of its own part of a step; all
 * return CLMG_SUCCESS when every rank succeeded, else the status of the
 * lowest failing rank, whose message then becomes every rank's context
 * message ("rank R: ..."). For a program's own steps between clmg_mpi
 * calls (reading its input, say). */
CLMG_API clmg_status clmg_mpi_agree(clmg_mpi *mpi, clmg_status status);

/** The even split of `rows` rows: rank r owns rows [first, first + count)
 * with the first rows % size ranks owning one row more. */
CLMG_API void clmg_mpi_even_rows(const clmg_mpi *mpi, uint64_t rows, uint64_t *first,
                                 uint64_t *count);

/** A sparse matrix distributed over the ranks by blocks of rows (opaque). */
typedef struct clmg_mpi_matrix clmg_mpi_matrix;

/** Collective. A square distributed matrix from each rank's rows:
 * local_rows->rows rows starting at global row first_row, with global
 * column indices (local_rows->cols is the global size, the same on every
 * rank). The ranks' blocks must follow each other in rank order from row 0
 * and cover every row; a rank may own none. The local block goes to the
 * device in options' format (NULL: defaults), the off-process block in CSR.
 * The matrix copies what it needs. */
CLMG_API clmg_status clmg_mpi_matrix_create(clmg_mpi *mpi, uint64_t first_row,
                                            const clmg_csr *local_rows,
                                            const clmg_matrix_options *options,
                                            clmg_mpi_matrix **matrix);
/** Collective. The same for a rectangular matrix (a grid transfer): this
 * rank's rows and, of the vectors it multiplies, the entries [first_col,
 * first_col + local_cols); the ranks' column blocks follow each other in
 * rank order too and cover every column. A matrix whose two partitions
 * agree has a diagonal (and Jacobi); others do not. */
CLMG_API clmg_status clmg_mpi_matrix_create_rectangular(clmg_mpi *mpi, uint64_t first_row,
                                                        const clmg_csr *local_rows,
                                                        uint64_t first_col, size_t local_cols,
                                                        const clmg_matrix_options *options,
                                                        clmg_mpi_matrix **matrix);
/** Collective. The same from rows that already live on this rank's device
 * (clmg_csr_device: int64 offsets, int32 global columns sorted and unique in
 * each row, values; local_rows->cols the global column count): the split
 * into the local and off-process blocks runs on the device
 * (clmg_csr_device_split_columns), the local block stays there
 * (clmg_matrix_create_from_device) and only the off-process block (its row
 * offsets and entries) comes to the host for the halo's plan. The matrix
 * equals clmg_mpi_matrix_create_rectangular's from the same rows downloaded,
 * entry by entry; it copies what it needs (the arrays stay the caller's).
 * first_col == first_row and local_cols == local_rows->rows for a square
 * matrix. */
CLMG_API clmg_status clmg_mpi_matrix_create_from_device(clmg_mpi *mpi, uint64_t first_row,
                                                        const clmg_csr_device *local_rows,
                                                        uint64_t first_col, size_t local_cols,
                                                        const clmg_matrix_options *options,
                                                        clmg_mpi_matrix **matrix);
/** Collective. Rank root's whole square matrix (global; ignored on the
 * other ranks) split evenly (clmg_mpi_even_rows), each rank's rows sent to
 * it as CSR: *local gets them (global columns, local->cols the global
 * size), *first_row the first's global index. For a program that needs the
 * rows themselves (clmg_mpi_amg_multigrid_create); clmg_csr_free releases
 * *local. */
CLMG_API clmg_status clmg_mpi_csr_scatter(clmg_mpi *mpi, int root, const clmg_csr *global,
                                          uint64_t *first_row, clmg_csr *local);
/** Collective. Rank root's whole square matrix (global; ignored on the
 * other ranks) split evenly (clmg_mpi_even_rows), each rank's rows sent to
 * it; then as clmg_mpi_matrix_create. */
CLMG_API clmg_status clmg_mpi_matrix_scatter(clmg_mpi *mpi, int root, const clmg_csr *global,
                                             const clmg_matrix_options *options,
                                             clmg_mpi_matrix **matrix);
/** Collective. A square matrix from a Matrix Market file that every rank
 * reads a part of (the file must be readable at path on every rank): rank
 * `root` reads the header (clmg_mm_read_header) and the file's size, and
 * every rank parses the lines that start in its even share of the bytes
 * after the size line (clmg_mm_read_entries: the checks of
 * clmg_csr_read_matrix_market, symmetric files mirrored), then sends each
 * entry to the owner of its row in the even split (clmg_mpi_even_rows);
 * then as clmg_mpi_matrix_create. No rank holds the whole matrix: what one
 * holds grows with its share of the file and its rows. The size line's
 * entry count must equal the entry lines of the whole file. A bad line is
 * "FILE:LINE: ..." (its line in the whole file) on every rank. An array
 * file (dense, its entries without indices) is read whole by root and its
 * rows sent out. */
CLMG_API clmg_status clmg_mpi_matrix_read_matrix_market(clmg_mpi *mpi, int root, const char *path,
                                                        const clmg_matrix_options *options,
                                                        clmg_mpi_matrix **matrix);
/** Collective. This rank's rows of the square matrix in a Matrix Market
 * file, read in parts as clmg_mpi_matrix_read_matrix_market reads them
 * (which is this and clmg_mpi_matrix_create): *local gets rows
 * [*first_row, *first_row + local->rows) of the even split
 * (clmg_mpi_even_rows), with global column indices sorted in each row and
 * duplicates summed (local->cols is the global size). For a program that
 * looks at the rows before it makes the matrix. Failures are agreed;
 * *local is then empty. Free it with clmg_csr_free. */
CLMG_API clmg_status clmg_mpi_csr_read_matrix_market(clmg_mpi *mpi, int root, const char *path,
                                                     uint64_t *first_row, clmg_csr *local);

/** What clmg_mpi_csr_check_symmetric finds of a distributed square matrix. */
typedef struct clmg_mpi_symmetry {
  int symmetric; /**< 1 when every |a_ij - a_ji| is at most the tolerance of the larger
                    (clmg_csr_is_symmetric's test; a missing mirror counts as 0) */
  uint64_t nonpositive_diagonal; /**< rows whose diagonal entry is not positive (absent: 0) */
  uint64_t first_nonpositive;    /**< the first such global row (0 when there is none) */
  double first_diagonal;         /**< its diagonal entry */
} clmg_mpi_symmetry;

/** Collective. Whether the square matrix whose rows the ranks hold is
 * symmetric, and whether its diagonal is positive (what CG needs, and what
 * krylov=auto looks for): each rank passes its rows, local->rows of them
 * from global row first_row with global columns (local->cols is the global
 * size); the blocks follow each other in rank order from row 0 and cover
 * every row. Each entry is sent to the owner of its mirror (so no rank holds
 * more than its rows twice). *result is the same on every rank. Failures
 * are agreed. */
CLMG_API clmg_status clmg_mpi_csr_check_symmetric(clmg_mpi *mpi, uint64_t first_row,
                                                  const clmg_csr *local, double relative_tolerance,
                                                  clmg_mpi_symmetry *result);
/** Waits for the matrix's transfers, then frees its device blocks, halo buffers and
 * events. NULL does nothing. */
CLMG_API void clmg_mpi_matrix_destroy(clmg_mpi_matrix *matrix);

/** What a rank holds of a distributed matrix, and what its halo moves. */
typedef struct clmg_mpi_matrix_info {
  uint64_t global_rows;     /**< rows over all ranks */
  uint64_t global_cols;     /**< columns over all ranks */
  uint64_t global_nonzeros; /**< nonzero entries over all ranks */
  uint64_t first_row;       /**< this rank's first global row */
  uint64_t first_col;       /**< ... and first entry of the vectors it multiplies */
  size_t local_rows;        /**< rows this rank owns */
  size_t local_cols;        /**< entries of x this rank owns */
  size_t local_nonzeros;    /**< of its rows, in the local and off-process blocks */
  size_t ghosts;            /**< values it receives per product */
  size_t sends;             /**< values it sends per product */
  int receive_neighbours;   /**< ranks it receives from */
  int send_neighbours;      /**< ranks it sends to */
} clmg_mpi_matrix_info;

/** Not collective. Fills *info with what this rank holds of the matrix (all zero for a
 * NULL matrix; a NULL info does nothing). */
CLMG_API void clmg_mpi_matrix_get_info(const clmg_mpi_matrix *matrix, clmg_mpi_matrix_info *info);

/** Not collective. The columns of a process's rows (global indices) that lie
 * outside its own block [first_col, first_col + local_cols): the values
 * its products receive, sorted, each once (*columns malloc'ed, *count of
 * them; the caller frees). What a distributed matrix built from these rows
 * receives per product (clmg_mpi_matrix_info.ghosts) is *count. */
CLMG_API clmg_status clmg_mpi_ghost_columns(const clmg_csr *rows, uint64_t first_col,
                                            size_t local_cols, int32_t **columns, size_t *count);

/** The matrix as an operator on vectors of its local rows and columns
 * (apply, defect, diagonal when square, bytes): Krylov methods and the
 * multigrid engine take it. The operator borrows the matrix, which must
 * outlive it; with take_ownership nonzero, destroying the operator
 * destroys the matrix. */
CLMG_API clmg_status clmg_mpi_matrix_operator(clmg_mpi_matrix *matrix, int take_ownership,
                                              clmg_operator *op);
/** The distributed matrix an operator from clmg_mpi_matrix_operator
 * applies, or NULL when op is NULL or another kind of operator. The
 * operator keeps it: the matrix lives as long as whatever destroys the
 * operator (a hierarchy from clmg_mpi_multigrid_create owns its levels'
 * matrices), so the finest level's matrix (clmg_multigrid_operator at
 * clmg_multigrid_levels - 1) serves a solver without a second copy. */
CLMG_API clmg_mpi_matrix *clmg_mpi_operator_matrix(const clmg_operator *op);
/** Jacobi (z = D^-1 r) on the local rows: the diagonal is in the local block. */
CLMG_API clmg_status clmg_mpi_preconditioner_jacobi(const clmg_mpi_matrix *matrix,
                                                    clmg_preconditioner *preconditioner);

/* ---- multigrid on distributed levels ---- */

/** What one rank holds of one level of a hierarchy (level 0 the coarsest):
 * its rows of A (starting at global row first_row; global columns), and on
 * levels >= 1 its rows of P (the level's partition; global columns of level
 * - 1) and of R (the rows of level - 1 it owns; global columns of this
 * level). The arrays stay the caller's. */
typedef struct clmg_mpi_level_rows {
  uint64_t first_row; /**< the global row of this rank's first row of A (and P) */
  clmg_csr a;         /**< this rank's rows of A */
  clmg_csr p;         /**< level >= 1: this rank's rows of P */
  clmg_csr r;         /**< level >= 1: this rank's rows of R */
  /** Read only where a's arrays are NULL (a.rows and a.cols still give its shape): this
   * rank's rows of A on its device instead (global columns, sorted in each row), from
   * which clmg_mpi_multigrid_create makes the level's matrix there
   * (clmg_mpi_matrix_create_from_device). Such a level cannot be gathered (it is the
   * finest: clmg_mpi_poisson_levels_create's with device_rows). */
  clmg_csr_device a_device;
  /** Read only where p's arrays are NULL (the shape still in p.rows and p.cols): this
   * rank's rows of P on its device instead (global columns of the coarser level, sorted in
   * each row), made into the level's matrix there (clmg_mpi_matrix_create_from_device,
   * rectangular). A gathered level downloads it. */
  clmg_csr_device p_device;
  /** As p_device, for R where r's arrays are NULL: this rank's rows of R on its device
   * (global columns of this, the finer, level). */
  clmg_csr_device r_device;
} clmg_mpi_level_rows;

/** Collective. The multigrid engine of clmg/multigrid.h on distributed
 * levels: A, P and R become distributed matrices in options->matrix's
 * format, the smoothers are the engine's (they see operators only). The
 * coarsest level is solved redundantly on every rank with the dense
 * inverse of the whole coarse matrix (gathered once) when it has at most
 * options->direct_max_rows rows (or options->coarse is DIRECT), else by the
 * engine's Krylov solve on the distributed operator. With
 * options->coarse_max_rows > 0 (and no coarse_solver of the caller's), for
 * a V-cycle without smoothing growth (other cycles visit their coarse level
 * differently, and keep every level distributed), the levels with at most
 * that many rows over all ranks (never the finest) are
 * gathered whole onto every rank instead: the finest of them becomes the
 * engine's coarse level, solved by one cycle of the serial engine on the
 * gathered levels (same options), its right-hand side gathered once per
 * cycle. The cycle is the same, to rounding, but its small levels, whose
 * halo exchanges are all latency, cost one gather. The engine then has
 * fewer levels (clmg_multigrid_levels). Solve with clmg_multigrid_solve or
 * precondition a Krylov method on the finest level's operator
 * (clmg_multigrid_operator at clmg_multigrid_levels - 1) with vectors of
 * this rank's rows. */
CLMG_API clmg_status clmg_mpi_multigrid_create(clmg_mpi *mpi, int num_levels,
                                               const clmg_mpi_level_rows *levels,
                                               const clmg_multigrid_options *options,
                                               clmg_multigrid **multigrid);

/* ---- smoothed-aggregation AMG set up across the ranks ---- */

/** What clmg_mpi_amg_levels_create gives one rank: its rows of every level,
 * for clmg_mpi_multigrid_create. */
typedef struct clmg_mpi_amg_levels {
  int num_levels;              /**< levels, the finest included */
  clmg_mpi_level_rows *levels; /**< num_levels, level 0 the coarsest; owned (the arrays too) */
  uint64_t *global_rows;       /**< num_levels: each level's rows over all ranks */
} clmg_mpi_amg_levels;

/** Collective. The smoothed-aggregation hierarchy of clmg_amg_hierarchy_build
 * (clmg/amg.h) built from each rank's rows of a square matrix
 * (local_rows->rows rows from global row first_row, global columns;
 * local_rows->cols the global size; the ranks' blocks follow each other in
 * rank order from row 0, and a rank may own none), with every product
 * distributed and its setup on each rank's host. The aggregation is
 * uncoupled (as ML's and MueLu's): each rank aggregates the strength graph
 * of its diagonal block (its rows and columns) with clmg_amg_aggregate and
 * the same options, so no aggregate crosses ranks; a row that has strong
 * neighbours, all on other ranks, becomes an aggregate of its own (else
 * no coarse level would correct it); a rank owns the coarse rows of its
 * aggregates, numbered in rank order. The tentative prolongator
 * fits the constant per aggregate; omega comes from a power iteration on
 * D^-1 A with the ghost values exchanged (or options->prolongator_damping);
 * P = (I - omega D^-1 A) P~, A_c = P^T A P and R = P^T, each rank's rows
 * of them. Coarsening stops as the serial setup's: at most
 * options->coarse_rows rows over all ranks, options->max_levels levels, or
 * a level that shrinks by less than a tenth. On one rank the levels equal
 * clmg_amg_hierarchy_build's with the same options, to rounding; on more,
 * the aggregates differ (none crosses a rank boundary). Refused with a
 * message: classical coarsening, block_size above 1 and near-nullspace
 * candidates (these run on one process); patch_root_distance is not used
 * (no patches), times gets aggregate_s (with the strength graph), fit_s,
 * prolongator_s, galerkin_s (with R) and total_s. NULL options: defaults.
 * Failures are agreed. clmg_mpi_amg_levels_free releases *out. */
CLMG_API clmg_status clmg_mpi_amg_levels_create(clmg_mpi *mpi, uint64_t first_row,
                                                const clmg_csr *local_rows,
                                                const clmg_amg_options *options,
                                                clmg_mpi_amg_levels *out);
/** NULL and the zeroed struct are fine. */
CLMG_API void clmg_mpi_amg_levels_free(clmg_mpi_amg_levels *levels);

/** Collective. clmg_mpi_amg_levels_create, then clmg_mpi_multigrid_create on
 * its levels with mg_options (NULL: the serial AMG's robust default,
 * Chebyshev smoothing with three steps before and after the coarse
 * correction, as clmg_amg_multigrid_create), the levels then freed. The
 * distributed counterpart of clmg_amg_multigrid_create: precondition a
 * Krylov method with it on the finest level's operator, with vectors of
 * this rank's rows. amg_options->times (when set) gets engine_s too. */
CLMG_API clmg_status clmg_mpi_amg_multigrid_create(clmg_mpi *mpi, uint64_t first_row,
                                                   const clmg_csr *local_rows,
                                                   const clmg_amg_options *amg_options,
                                                   const clmg_multigrid_options *mg_options,
                                                   clmg_multigrid **multigrid);

/* ---- the solver an options database describes ---- */

/** Not collective. Whether clmg_mpi_solver_create can honour the options
 * (clmg/solver.h): CLMG_SUCCESS, or CLMG_ERROR_INVALID_ARGUMENT with a
 * message in error (may be NULL) naming what it cannot: precond=amg or
 * precond=multigrid without a hierarchy (with_hierarchy zero; for amg the
 * hierarchy is clmg_mpi_amg_multigrid_create's), registered preconditioners
 * (made from the whole matrix), precision=mixed, any amg.* key set to other
 * than its default unless precond=amg, and with precond=amg the keys the
 * distributed AMG cannot honour (amg.coarsening=classical, amg.block_size
 * other than 1, amg.near_nullspace, amg.coordinates, and the smoothers of
 * host matrices, mg.smoother=patch or gauss-seidel). For a program that
 * refuses them before its setup. */
CLMG_API clmg_status clmg_mpi_solver_check_options(const clmg_options *options, int with_hierarchy,
                                                   clmg_error *error);

/** Collective. The solver the options describe (clmg/solver.h; the same
 * options on every rank) for a distributed matrix: the Krylov method
 * (krylov: cg, gmres, bicgstab, auto: CG when symmetric is nonzero, else
 * GMRES; none with a hierarchy: its cycles alone) on the matrix's operator
 * (clmg_mpi_matrix_operator), with precond none, jacobi (the local
 * diagonal) or, given a hierarchy whose finest level is this matrix,
 * multigrid (made by clmg_mpi_multigrid_create; its default then: one
 * cycle) or amg (made by clmg_mpi_amg_multigrid_create from amg.* and mg.*,
 * clmg_options_amg); tol, atol, maxit and restart as in
 * clmg_solver_create_multigrid, which composes it. The matrix's format and
 * precision are its own (precision must match it); mg.* and amg.* are the
 * hierarchy's. What clmg_mpi_solver_check_options refuses is refused, with
 * its message, on every rank. The solver borrows the matrix and the
 * hierarchy (destroy it first); clmg_solver_solve takes vectors of this
 * rank's rows and is collective, as are the solver's setup and its first
 * iteration, which compiles the kernels. Failures are agreed. */
CLMG_API clmg_status clmg_mpi_solver_create(clmg_mpi *mpi, clmg_mpi_matrix *matrix,
                                            clmg_multigrid *multigrid, int symmetric,
                                            const clmg_options *options, clmg_solver **solver);

/** Wall seconds this process spent in the steps of clmg_mpi_matrix_create and
 * clmg_mpi_matrix_create_rectangular, summed over the matrices made with one clmg_mpi
 * since clmg_mpi_create (or the last clmg_mpi_matrix_times_reset). */
typedef struct clmg_mpi_matrix_times {
  double check_s;  /**< checking the local rows and gathering every rank's blocks */
  double split_s;  /**< splitting the rows into the local and off-process blocks */
  double plan_s;   /**< the halo plans (who sends which values to whom) */
  double device_s; /**< the blocks, lists and staging buffers made on the device */
  int matrices;    /**< the matrices made */
} clmg_mpi_matrix_times;

/** Fills *times with the seconds summed so far (zeros for a NULL mpi). */
CLMG_API void clmg_mpi_matrix_times_get(const clmg_mpi *mpi, clmg_mpi_matrix_times *times);
/** Sets the sums of clmg_mpi_matrix_times_get back to zero; NULL is fine. */
CLMG_API void clmg_mpi_matrix_times_reset(clmg_mpi *mpi);

/* ---- a finite-element Poisson hierarchy built in parts ---- */

/** How clmg_mpi_poisson_levels_create builds its hierarchy; fill it with
 * clmg_mpi_poisson_options_defaults. */
typedef struct clmg_mpi_poisson_options {
  int degree;               /**< 1 (Q1, the default) or 2 (Q2) */
  clmg_numbering numbering; /**< of each process's piece and of the levels built whole
                               (default CLMG_NUMBERING_CM) */
  uint64_t seed;            /**< for CLMG_NUMBERING_STO */
  /** The partition level is the finest level whose mesh has at most this
   * many cells per process (default 4096), and at least one cell per
   * process; the levels up to it are built whole by every process. */
  size_t cells_per_process;
  int overlap_layers; /**< layers of cells around a part that its process refines too (default 1) */
  /** Nonzero (the default): where the rank's device has fp64, its piece is
   * refined and assembled on the device (clmg_fe_poisson_hierarchy_device,
   * the piece numbered as its mesh, so numbering applies to the levels
   * built whole only) and the rows come back to the host to be renumbered;
   * 0, or a device without fp64: on the host (clmg_fe_poisson_hierarchy). */
  int device_setup;
  /** Nonzero, with the piece built on the device: the finest level's rows of A, and the
   * rows of P and R of every level above the partition level, stay there, gathered,
   * renumbered into the global numbering and sorted on the device
   * (clmg_csr_device_gather_rows) into levels[finest].a_device and levels[l].p_device and
   * r_device (the host arrays NULL): only the global numbers of the piece's DOFs and the
   * owned rows' lists go up, nothing of them comes down; the same rows, entry by entry,
   * as with 0 (the default: every level's rows on the host, as a program that reads them
   * expects). */
  int device_rows;
} clmg_mpi_poisson_options;

/** The defaults given with each field: Q1, CM numbering, seed 1, 4096 cells per process,
 * one layer of cells, pieces built on the device. options must not be NULL. */
CLMG_API void clmg_mpi_poisson_options_defaults(clmg_mpi_poisson_options *options);

/** What clmg_mpi_poisson_levels_create gives one process. */
typedef struct clmg_mpi_poisson_levels {
  int num_levels;              /**< finest_level + 1 */
  int partition_level;         /**< the levels up to it were built whole */
  int dim;                     /**< of the mesh */
  clmg_mpi_level_rows *levels; /**< num_levels: for clmg_mpi_multigrid_create */
  /** the finest level, this process's rows (levels[num_levels - 1]) */
  double *b;             /**< right-hand side */
  double *x0;            /**< initial guess: g on Dirichlet DOFs, 0 elsewhere */
  double *coords;        /**< each row's DOF position, dim numbers per row */
  uint8_t *is_dirichlet; /**< 1 on Dirichlet DOFs */
  /** what this process built */
  size_t global_cells; /**< cells of the partition level */
  size_t owned_cells;  /**< of them, this process's part */
  size_t piece_cells;  /**< its part and the layers around it, which it refined (0 when the
                          partition level is the finest: no pieces) */
  size_t piece_dofs;   /**< the DOFs of its piece on the finest level (its rows and the
                          layer's; 0 without pieces) */
  double setup_s;      /**< wall seconds in clmg_mpi_poisson_levels_create */
  /** 1 when this process's piece was built on its device (device_setup and fp64), 0 when
   * on the host or without pieces */
  int piece_on_device;
  /** wall seconds building the piece's levels (on the device: with the download of its
   * matrices and the host's meshes and spaces of its levels); the rest of setup_s is the
   * levels built whole, the partition and the renumbering */
  double piece_s;
  /** wall seconds of the levels 0..partition level built whole, the partition and this
   * process's rows of them */
  double whole_s;
  /** of piece_s: clmg_fe_poisson_hierarchy_device, the piece's levels refined and
   * assembled on the device (with its kernels' compilation; 0 on the host) */
  double piece_assembly_s;
  /** of piece_s: clmg_fe_device_hierarchy_fetch_finest, the finest mesh and space brought
   * to the host (0 on the host) */
  double piece_fetch_s;
  /** of piece_s: downloading the piece's matrices and vectors from the device (0 on the
   * host) */
  double piece_download_s;
  /** of piece_s: the host's meshes and spaces of the piece's levels below the finest
   * (the device path; 0 on the host) */
  double piece_meshes_s;
  /** wall seconds of the piece's owners, keys and global numbers (with their exchange) */
  double numbering_s;
  /** wall seconds of this process's rows of the piece's levels in the global numbering */
  double rows_s;
} clmg_mpi_poisson_levels;

/** Collective. The hierarchy of clmg_fe_poisson_hierarchy (levels 0 to
 * finest_level of `coarse`, the same problem and degree) built in parts:
 * every process refines the coarse mesh up to the partition level (small:
 * options->cells_per_process cells per process) and builds those levels
 * whole; the partition level's cells are split by recursive coordinate
 * bisection (clmg_mesh_partition); each process cuts out its part with a
 * layer of cells around it (clmg_mesh_extract_part), refines that piece to
 * the finest level and assembles it, so that what it holds shrinks with
 * the number of processes. A DOF belongs to the part of the lowest-numbered
 * cell around it; the processes own contiguous blocks of each level's
 * rows in rank order (the levels below the partition level split evenly),
 * and their rows equal those of the whole hierarchy, renumbered, to
 * rounding. Every process passes the same coarse mesh (which must pass
 * clmg_mesh_check), level, problem and options (NULL: defaults). Failures
 * are agreed: every process returns the status with the failing process's
 * message. clmg_mpi_poisson_levels_free releases *out. */
CLMG_API clmg_status clmg_mpi_poisson_levels_create(clmg_mpi *mpi, const clmg_mesh *coarse,
                                                    int finest_level,
                                                    const clmg_poisson_problem *problem,
                                                    const clmg_mpi_poisson_options *options,
                                                    clmg_mpi_poisson_levels *out);
/** NULL and the zeroed struct are fine. With device_rows, call it before the context is
 * destroyed (the finest rows are device vectors). */
CLMG_API void clmg_mpi_poisson_levels_free(clmg_mpi_poisson_levels *levels);

/** Collective. Between a global vector of global_rows doubles on rank root
 * (ignored elsewhere; NULL there is fine) and each rank's local vector of
 * its rows (of the matrix's precision). */
CLMG_API clmg_status clmg_mpi_vector_scatter(const clmg_mpi_matrix *matrix, int root,
                                             const double *global, clmg_vector *local);
/** Collective. The reverse of clmg_mpi_vector_scatter: each rank's local vector into the
 * global vector of global_rows doubles on rank root (global is not read elsewhere). */
CLMG_API clmg_status clmg_mpi_vector_gather(const clmg_mpi_matrix *matrix, int root,
                                            const clmg_vector *local, double *global);

#ifdef __cplusplus
}
#endif

#endif
