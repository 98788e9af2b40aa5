/** @file
 * clmg solvers as data: an options database and a solver composed from it.
 *
 * A solver is named, not wired: "krylov=cg precond=amg mg.smoother=chebyshev
 * tol=1e-8" (a string, as PETSc's options database takes them) or the same
 * as a JSON document ({"krylov": "cg", "precond": "amg", "mg": {"smoother":
 * "chebyshev"}, "tol": 1e-8}, as AmgX's configurations are) becomes a
 * Krylov method, a preconditioner, a multigrid hierarchy and its smoothers
 * and coarse solver, built by clmg_solver_create from a matrix. Every key
 * and every value is checked: an unknown one is refused with the list of
 * the valid ones. AUTO choices are resolved in one place
 * (clmg_solver_create, documented at each key), and the solver reports the
 * options it resolved (clmg_solver_view_json), so a run can be repeated
 * from its output.
 *
 * The keys (clmg_options_key_info lists them with their defaults and
 * values):
 *   krylov     auto (CG when A is symmetric with a positive diagonal, else
 *              GMRES), cg, bicgstab, gmres, or none (the preconditioner's
 *              own iteration: multigrid cycles, or Jacobi steps)
 *   precond    none, jacobi (default), amg, or a name registered with
 *              clmg_register_preconditioner
 *   precision  double (default), float, or mixed (the preconditioner in
 *              float inside a double Krylov method)
 *   format     the device matrices' format: auto (default), csr, ellr, sell,
 *              csr-adaptive, hybrid
 *   tol, atol, maxit, restart   relative and absolute tolerance (tol 0:
 *              the precision's default, 1e-8 in double, 1e-5 in float),
 *              iteration limit, GMRES(m)
 *   mg.*       the multigrid cycle of any hierarchy: cycle, smoother,
 *              steps, omega, inner, coarse, direct_rows
 *   amg.*      how AMG coarsens: coarsening, strength, roots, block_size,
 *              root_distance, coarse_root_distance, min_aggregate_size,
 *              coarse_rows, max_levels, near_nullspace (a Matrix Market
 *              file of vectors), coordinates (a file of node coordinates:
 *              the rigid-body modes of elasticity)
 *   flow.*     clmg_flow_solve's steady Oseen iteration (nonlinear_tol,
 *              nonlinear_maxit, linearisation), time stepping (time_scheme) and
 *              upwinding (upwind, upwind_parameter) (clmg_options_flow)
 *   homg.*     the structured-grid solver of clmg_homg: method, maxi,
 *              schedule, error_tol, stagnation (clmg_options_homg)
 * The library's own reports never print: a failure is a status with the
 * context's message, or the clmg_error given. */
#ifndef CLMG_SOLVER_H
#define CLMG_SOLVER_H

#include "clmg/amg.h"
#include "clmg/homg.h"
#include "clmg/navier_stokes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the options database ---- */

/** An options database: a value per key, each key's default where none was set. */
typedef struct clmg_options clmg_options;

/** An empty database: every key has its default. */
CLMG_API clmg_status clmg_options_create(clmg_options **options, clmg_error *error);
/** Frees the database (NULL is fine). */
CLMG_API void clmg_options_destroy(clmg_options *options);

/** Sets one key (e.g. "mg.smoother") to a value given as text ("chebyshev",
 * "1e-8", "true"). An unknown key, or a value of the wrong kind or outside
 * the key's range, is refused with CLMG_ERROR_INVALID_ARGUMENT and a message
 * that lists what is valid; the database is then unchanged. A later set of
 * the same key replaces the earlier one. Names that users may register
 * (precond, mg.smoother) are checked by clmg_solver_create, which knows the
 * context's registrations. */
CLMG_API clmg_status clmg_options_set(clmg_options *options, const char *key, const char *value,
                                      clmg_error *error);

/** Sets every "key=value" of a whitespace-separated list, in order, e.g.
 * "krylov=cg precond=amg tol=1e-8". A word without '=' is
 * CLMG_ERROR_PARSE, naming it. On any error nothing of the text is kept. */
CLMG_API clmg_status clmg_options_parse(clmg_options *options, const char *text, clmg_error *error);

/** Sets the keys of a JSON object: {"krylov": "cg", "tol": 1e-8, "mg":
 * {"smoother": "chebyshev"}}; a nested object's keys are prefixed with its
 * name and a dot, so {"mg": {"steps": 2}} is "mg.steps=2". Values are
 * strings, numbers or booleans. Malformed JSON is CLMG_ERROR_PARSE; on any
 * error nothing of the document is kept. */
CLMG_API clmg_status clmg_options_parse_json(clmg_options *options, const char *json,
                                             clmg_error *error);

/** clmg_options_parse_json on a file's contents (at most 1 MiB, read with
 * that bound): a file that cannot be read is CLMG_ERROR_IO, a larger one
 * CLMG_ERROR_INVALID_ARGUMENT; JSON errors name the file and the line. */
CLMG_API clmg_status clmg_options_read_file(clmg_options *options, const char *path,
                                            clmg_error *error);

/** 1 when value is valid for key without registrations: a built-in name
 * (or auto where the key takes it) for the keys that take names, any
 * value that clmg_options_set accepts for the others; else 0. */
CLMG_API int clmg_options_builtin(const char *key, const char *value);

/** The value of a key as text: the one set, else the default ("" for a key
 * without one, e.g. amg.coordinates). NULL for an unknown key. The pointer
 * stays valid until the key is set again or the database destroyed. */
CLMG_API const char *clmg_options_get(const clmg_options *options, const char *key);

/** 1 when the key was set (by any of the calls above), else 0. */
CLMG_API int clmg_options_is_set(const clmg_options *options, const char *key);

/** The options as a JSON object with nested groups ({"krylov": "cg", "mg":
 * {...}}): every key with all_keys nonzero, else only those set; numbers as
 * numbers. malloc'ed; free() it. NULL when out of memory. */
CLMG_API char *clmg_options_to_json(const clmg_options *options, int all_keys);

/** What a key is, for help texts: its name, kind ("string", "number",
 * "integer", "boolean", "name"), default, the valid values of a name ("cg,
 * gmres, ..."; "" otherwise) and a sentence. */
typedef struct clmg_option_info {
  const char *key;           /**< e.g. "mg.smoother" */
  const char *kind;          /**< "name", "number", "integer" or "string" */
  const char *default_value; /**< as text; "auto" where the solver decides */
  const char *values;        /**< a name's valid values, "a,b,c"; "" for other kinds */
  const char *description;   /**< one sentence */
} clmg_option_info;
/** The number of keys; clmg_options_key_info(i, ...) for i below it fills info
 * and returns 1 (0 past the end). */
CLMG_API size_t clmg_options_key_count(void);
/** Fills info for key number index (below clmg_options_key_count) and returns
 * 1; 0 past the end. */
CLMG_API int clmg_options_key_info(size_t index, clmg_option_info *info);

/** The multigrid cycle options of the database (mg.*) as the engine's
 * options, for a hierarchy the caller builds (a geometric one from a mesh):
 * cycle, smoother (a built-in one, or one registered on the context, whose
 * factory it sets), steps, omega, coarse solver. The smoothers that need a
 * host matrix per level (patch, gauss-seidel) exist only for AMG
 * hierarchies and are refused here. A failure's message is the
 * context's. */
CLMG_API clmg_status clmg_options_multigrid(const clmg_options *options, clmg_context *context,
                                            clmg_multigrid_options *multigrid);

/** The AMG options of the database (amg.*, but the near-nullspace keys
 * amg.near_nullspace and amg.coordinates, which need the matrix's rows)
 * and the cycle options of an AMG hierarchy (mg.*, as precond=amg reads
 * them: Chebyshev with three steps where mg.smoother and mg.steps are
 * auto), for a hierarchy the caller builds from them
 * (clmg_mpi_amg_multigrid_create, say). The smoothers that need the
 * hierarchy's host matrices (patch, gauss-seidel) are refused. A failure's
 * message is the context's. */
CLMG_API clmg_status clmg_options_amg(const clmg_options *options, clmg_context *context,
                                      clmg_amg_options *amg, clmg_multigrid_options *multigrid);

/** The solver of clmg_flow_solve (clmg/navier_stokes.h) the database
 * describes: GMRES (krylov auto or gmres) with restart, tol (each linear
 * solve's; auto: the run's default, linear_tolerance 0) and maxit (GMRES
 * iterations per linear solve; 100 where not set); precision double (the
 * only one); the multigrid cycle (mg.cycle, F where not set; mg.coarse auto
 * or direct) with a Vanka smoother (mg.smoother auto or vanka-si: stored
 * inverses, vanka-nsi: recomputed; mg.omega, 1 at auto; mg.steps, mg.pre,
 * mg.post, 2 at auto); flow.nonlinear_tol and flow.nonlinear_maxit for a
 * steady flow; flow.linearisation (linearisation: picard or newton);
 * flow.time_scheme (time_scheme; auto: as flow has it),
 * flow.upwind (upwind; auto: as flow has it, -1 the problem's) and
 * flow.upwind_parameter (the weighted upwind's: set with another upwind it
 * is refused). The other fields of flow (levels, steady, time_step, steps:
 * the problem's) stay as they are. Every key read is then set in options
 * as resolved (auto replaced by what was chosen, but tol's), so
 * clmg_options_to_json(options, 0) repeats the run. unused (NULL: not
 * wanted; unused_size bytes) gets the keys set to other than their default
 * that it does not read, "a, b" ("" when none). A value it cannot use
 * (krylov=cg, mg.smoother=chebyshev, precision=float, mg.coarse=pcg) is
 * CLMG_ERROR_INVALID_ARGUMENT, error's message naming the key and what is
 * valid; flow and options are then unchanged. */
CLMG_API clmg_status clmg_options_flow(clmg_options *options, clmg_flow_options *flow, char *unused,
                                       size_t unused_size, clmg_error *error);

/** The options of clmg_homg_create (clmg/homg.h) the database describes:
 * homg.method, homg.maxi, homg.schedule (the homg method only: set for
 * another it is refused), precision (double or float), maxit (cycles, 50
 * where not set, at most 100000), tol (auto: 1e-10 in double, 1e-6 in
 * float; 0 when maxit is set without it, which asks for exactly maxit
 * cycles), homg.error_tol, homg.stagnation (auto: 1.1, or 0 as tol),
 * damped Jacobi (mg.smoother auto or jacobi; mg.omega, 0.8 at auto, at
 * most 1) with mg.steps, mg.pre and mg.post (2 at auto; not both 0). The
 * fields record_steps, monitor and monitor_data of homg stay as they are.
 * Every key read is then set in options as resolved, as clmg_options_flow
 * does, and unused and the failures are as there. */
CLMG_API clmg_status clmg_options_homg(clmg_options *options, clmg_homg_options *homg, char *unused,
                                       size_t unused_size, clmg_error *error);

/* ---- registrations: a caller's components under a name ---- */

/** Makes a preconditioner for the matrix a (on the host) whose device copy is
 * `matrix` (in the solver's precision: float for precision=mixed). */
typedef clmg_status (*clmg_preconditioner_factory)(void *data, clmg_context *context,
                                                   const clmg_csr *a, const clmg_matrix *matrix,
                                                   clmg_preconditioner *preconditioner);

/** Registers a preconditioner (precond=NAME) or a smoother (mg.smoother=NAME,
 * made per level by the factory as clmg_multigrid_options.smoother_factory
 * would) on a context, for every solver made on it afterwards. A name is
 * letters, digits, '-' and '_' (at most 31), and may not be a built-in
 * one's or one already registered; at most 16 of each kind. data is
 * borrowed: it must outlive the solvers. */
CLMG_API clmg_status clmg_register_preconditioner(clmg_context *context, const char *name,
                                                  clmg_preconditioner_factory factory, void *data);
/** Registers a smoother under a name, as clmg_register_preconditioner does a
 * preconditioner (mg.smoother=NAME). */
CLMG_API clmg_status clmg_register_smoother(clmg_context *context, const char *name,
                                            clmg_smoother_factory factory, void *data);

/* ---- the solver ---- */

/** A composed solver: device matrix, preconditioner, Krylov method. */
typedef struct clmg_solver clmg_solver;

/** Builds the solver the options describe for the square host matrix a
 * (borrowed: only read here): its device matrix, the preconditioner
 * (hierarchy, smoothers, coarse solver) and the Krylov method, resolving
 * every AUTO. A matrix with an empty or all-zero row is refused (it is
 * singular). NULL options: the defaults. A failure's message is the
 * context's. */
CLMG_API clmg_status clmg_solver_create(clmg_context *context, const clmg_csr *a,
                                        const clmg_options *options, clmg_solver **solver);

/** The same for a matrix already on the device (assembled there): the
 * solver borrows `matrix` (it must outlive the solver) and, for
 * precision=mixed, `float_matrix` (the preconditioner's copy in float;
 * NULL: made from a). a is the same matrix on the host, which precond=amg
 * and registered preconditioners need; NULL: not at hand, and krylov=auto
 * is then CG when symmetric is nonzero, else GMRES (with a, a is tested).
 * format is not read. */
CLMG_API clmg_status clmg_solver_create_device(clmg_context *context, clmg_matrix *matrix,
                                               clmg_matrix *float_matrix, const clmg_csr *a,
                                               int symmetric, const clmg_options *options,
                                               clmg_solver **solver);

/** The same around an operator and a multigrid hierarchy the caller built
 * (a geometric one, say), or around an operator alone (multigrid NULL: a
 * matrix-free or distributed one, see clmg_mpi_solver_create): precond
 * must be "multigrid" (its default with a hierarchy), "amg" (with a
 * hierarchy: the caller's AMG of amg.*, clmg_options_amg; its cycle, as
 * multigrid's), "jacobi" (z = D^-1 r with the operator's diagonal entry; a
 * zero there is refused) or "none"; the solver borrows both (they must
 * outlive it), and krylov=auto means CG when symmetric is nonzero, else
 * GMRES. precision=mixed needs a float hierarchy's cycle (or
 * precond=none). mg.* and amg.* are not read (clmg_options_multigrid and
 * clmg_options_amg give the hierarchy's). */
CLMG_API clmg_status clmg_solver_create_multigrid(clmg_context *context, const clmg_operator *a,
                                                  clmg_multigrid *multigrid, int symmetric,
                                                  const clmg_options *options,
                                                  clmg_solver **solver);

/** Frees the solver and what it made (not what it borrows); NULL is fine. */
CLMG_API void clmg_solver_destroy(clmg_solver *solver);

/** What krylov=auto means for the host matrix a: CG when a is symmetric
 * (every |a_ij - a_ji| within 1e-8 of the larger) with a positive
 * diagonal, else GMRES. clmg_solver_create resolves it so. */
CLMG_API clmg_krylov_method clmg_solver_auto_method(const clmg_csr *a);

/** Called after every iteration (cycle) with its relative residual;
 * returning nonzero stops the solve. NULL: none. */
CLMG_API void clmg_solver_set_monitor(clmg_solver *solver, clmg_krylov_monitor monitor, void *data);

/** Sets the relative tolerance (finite, above 0) and the iteration limit (at least 1) of
 * later solves, in place of the options' tol and maxit (the resolved options then show
 * them). Anything else is CLMG_ERROR_INVALID_ARGUMENT and leaves the solver as it was. */
CLMG_API clmg_status clmg_solver_set_limits(clmg_solver *solver, double tolerance,
                                            int max_iterations);

/** Solves A x = b on the device, x holding the initial guess (vectors of the
 * solver's precision: double for precision=mixed). CLMG_SUCCESS only when x
 * is finite and the residual recomputed from it is finite and meets the
 * tolerance; CLMG_ERROR_NOT_CONVERGED otherwise (x is then the last iterate)
 * or as clmg_krylov_solve says. result (may be NULL) gets the iterations and
 * residuals, and the history (free it with clmg_krylov_result_free). */
CLMG_API clmg_status clmg_solver_solve(clmg_solver *solver, const clmg_vector *b, clmg_vector *x,
                                       clmg_krylov_result *result);

/** The same with host arrays of doubles (rows entries each; x holds the
 * initial guess and gets the solution): uploads, solves, downloads. */
CLMG_API clmg_status clmg_solver_solve_host(clmg_solver *solver, const double *b, double *x,
                                            clmg_krylov_result *result);

/** The composed solver: the resolved options (every key, AUTO replaced by
 * what was chosen), the device matrix, and for multigrid its levels (rows,
 * nonzeros, smoother, damping), operator and grid complexity, and the AMG
 * setup's phases; as text for people or a JSON object. malloc'ed; free()
 * it. NULL when out of memory. */
CLMG_API char *clmg_solver_view(const clmg_solver *solver);
/** The solver's view as a JSON object: "options" (resolved), "method",
 * "preconditioner", "precision", "rows", "nonzeros", "format",
 * "unused_options", "setup_s", "compile_s", "solver_setup" (the seconds of
 * the setup's phases, each with device work ended by a clmg_finish, without
 * compilation: checks_s, matrix_s, nullspace_s (the file of amg.coordinates
 * or amg.near_nullspace read and the AMG's candidates made from it),
 * preconditioner_s, kernels_s, together at most setup_s) and the
 * hierarchy's keys. */
CLMG_API char *clmg_solver_view_json(const clmg_solver *solver);

/** The view of any multigrid hierarchy (one made without a clmg_solver, say),
 * with the AMG setup's phases when times is not NULL: as text (a table, the
 * finest level first) or as a JSON object {"hierarchy": [{level, rows,
 * nonzeros, format, format_description, smoother, damping, coarse_solver},
 * ...], "operator_complexity", "grid_complexity", "amg_setup": {...}}.
 * malloc'ed; free() it. NULL when out of memory. */
CLMG_API char *clmg_multigrid_view(const clmg_multigrid *multigrid,
                                   const clmg_amg_setup_times *times);
/** The hierarchy's view as a JSON object (see clmg_multigrid_view). */
CLMG_API char *clmg_multigrid_view_json(const clmg_multigrid *multigrid,
                                        const clmg_amg_setup_times *times);

/** What the solver is made of (borrowed from it). */
CLMG_API const clmg_operator *clmg_solver_operator(const clmg_solver *solver);
/** The device matrix; NULL around a caller's operator. */
CLMG_API const clmg_matrix *clmg_solver_matrix(const clmg_solver *solver);
/** The multigrid hierarchy; NULL without one. */
CLMG_API clmg_multigrid *clmg_solver_multigrid(const clmg_solver *solver);
/** The Krylov method chosen; CLMG_KRYLOV_AUTO for krylov=none (cycles alone). */
CLMG_API clmg_krylov_method clmg_solver_method(const clmg_solver *solver);
/** The precision of the vectors a solve takes (double for precision=mixed). */
CLMG_API clmg_dtype clmg_solver_precision(const clmg_solver *solver);
/** The options as resolved: every auto replaced by what was chosen. */
CLMG_API const clmg_options *clmg_solver_options(const clmg_solver *solver);
/** Seconds clmg_solver_create took, kernel compilation and loading
 * excluded (clmg_context_program_seconds). A solver is made ready to run:
 * its create runs one iteration on scratch vectors, so the kernels of a
 * solve are compiled (or loaded from the cache) there, not in the first
 * solve. */
CLMG_API double clmg_solver_setup_seconds(const clmg_solver *solver);
/** The keys the options set that this solver does not read, e.g.
 * "mg.smoother, mg.steps" with precond=jacobi, or restart with CG; ""
 * when every key set is used (a report may warn of them). */
CLMG_API const char *clmg_solver_unused_options(const clmg_solver *solver);
/** Seconds clmg_solver_create spent compiling kernels or loading them from
 * the cache. */
CLMG_API double clmg_solver_compile_seconds(const clmg_solver *solver);

#ifdef __cplusplus
}
#endif

#endif
