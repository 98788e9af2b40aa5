/* The options of each clmg subcommand and their parsers, apart from running
 * the subcommand: parsing touches no device and prints nothing but usage
 * errors (cli.c), so the option parsers' fuzz target (tests/fuzz) calls them
 * as they are. Each parser starts from `defaults` (the global options),
 * returns 0 to go on (also for --help, with common.help set) or else the
 * exit status of a usage error, whose message is already printed. */
#ifndef CLMG_SUBCOMMANDS_H
#define CLMG_SUBCOMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "apputil.h"
#include "cli.h"

/* ---- the top level (clmg.c) ---- */

/* What the words before and including the subcommand name ask for. */
typedef struct cli_invocation {
  cli_options options; /* the global options: the subcommand's defaults */
  int version;         /* -V, --version */
  int help_options;    /* clmg help options: the options layer's keys */
  /* The subcommand's name; NULL for --help, "help" alone or -V. */
  const char *command;
  int argc; /* the subcommand's arguments, argv[0] "clmg NAME" */
  char **argv;
  char name[64];      /* storage of argv[0] */
  char *help_argv[3]; /* storage of "help CMD", which reads as "CMD --help" */
} cli_invocation;

/* Parses the global options and finds the subcommand (argv[0] is the
 * program's path and is replaced by "clmg"). Resets getopt_long for the
 * subcommand's parser. */
int cli_parse_main(int argc, char **argv, cli_invocation *invocation);

/* The whole command: cli_parse_main, then the subcommand (main.c). */
int cli_main(int argc, char **argv);

/* ---- clmg info (clmg.c) ---- */

typedef struct info_options {
  cli_options common;
  unsigned long long bandwidth_mib; /* 0: a size chosen from the device memory */
} info_options;

int info_parse_options(int argc, char **argv, const cli_options *defaults, info_options *options);

/* ---- clmg solve (solve.c) ---- */

typedef struct solve_options {
  cli_options common; /* --device, --json, --help */
  int quiet, skip_checks, view;
  int profile; /* --profile N: the N kernels of most device time in the setup */
  const char *matrix_path, *rhs_path, *output_path;
  /* The solver, all of it: the options layer's settings (clmg/solver.h;
   * cli_settings), in order: every solver flag as its key (--smoother S is
   * mg.smoother=S), and each --set TEXT (key NULL: TEXT holds key=value
   * words). They apply after the --options file, so a flag overrides the
   * file. */
  cli_settings settings;
} solve_options;

int solve_parse_options(int argc, char **argv, const cli_options *defaults, solve_options *options);

/* The solver options, which clmg helmholtz takes too: its own options
 * start at SOLVE_OPTION_END. */
enum {
  SOLVE_OPTION_METHOD = OPTION_FIRST_OWN,
  SOLVE_OPTION_PRECONDITIONER,
  SOLVE_OPTION_FORMAT,
  SOLVE_OPTION_PRECISION,
  SOLVE_OPTION_TOLERANCE,
  SOLVE_OPTION_MAX_ITERATIONS,
  SOLVE_OPTION_SKIP_CHECKS,
  SOLVE_OPTION_RESTART,
  SOLVE_OPTION_VIEW,
  SOLVE_OPTION_SMOOTHER,
  SOLVE_OPTION_INNER,
  SOLVE_OPTION_BLOCK_SIZE,
  SOLVE_OPTION_NULLSPACE,
  SOLVE_OPTION_COORDINATES,
  SOLVE_OPTION_STRENGTH,
  SOLVE_OPTION_COARSENING,
  SOLVE_OPTION_ROOTS,
  SOLVE_OPTION_INTERPOLATION,
  SOLVE_OPTION_SMOOTHING_STEPS,
  SOLVE_OPTION_OPTIONS_FILE,
  SOLVE_OPTION_SET,
  SOLVE_OPTION_PROFILE,
  SOLVE_OPTION_END
};
#define SOLVE_SHORT_OPTIONS "o:q"
#define SOLVE_LONG_OPTIONS                                                                         \
  {"method", required_argument, NULL, SOLVE_OPTION_METHOD},                                        \
      {"precond", required_argument, NULL, SOLVE_OPTION_PRECONDITIONER},                           \
      {"format", required_argument, NULL, SOLVE_OPTION_FORMAT},                                    \
      {"precision", required_argument, NULL, SOLVE_OPTION_PRECISION},                              \
      {"tol", required_argument, NULL, SOLVE_OPTION_TOLERANCE},                                    \
      {"maxit", required_argument, NULL, SOLVE_OPTION_MAX_ITERATIONS},                             \
      {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},                 \
      {"skip-checks", no_argument, NULL, SOLVE_OPTION_SKIP_CHECKS},                                \
      {"restart", required_argument, NULL, SOLVE_OPTION_RESTART},                                  \
      {"smoother", required_argument, NULL, SOLVE_OPTION_SMOOTHER},                                \
      {"inner", required_argument, NULL, SOLVE_OPTION_INNER},                                      \
      {"block-size", required_argument, NULL, SOLVE_OPTION_BLOCK_SIZE},                            \
      {"near-nullspace", required_argument, NULL, SOLVE_OPTION_NULLSPACE},                         \
      {"coordinates", required_argument, NULL, SOLVE_OPTION_COORDINATES},                          \
      {"strength", required_argument, NULL, SOLVE_OPTION_STRENGTH},                                \
      {"coarsening", required_argument, NULL, SOLVE_OPTION_COARSENING},                            \
      {"roots", required_argument, NULL, SOLVE_OPTION_ROOTS},                                      \
      {"interpolation", required_argument, NULL, SOLVE_OPTION_INTERPOLATION},                      \
      {"smoothing-steps", required_argument, NULL, SOLVE_OPTION_SMOOTHING_STEPS},                  \
      {"options", required_argument, NULL, SOLVE_OPTION_OPTIONS_FILE},                             \
      {"set", required_argument, NULL, SOLVE_OPTION_SET},                                          \
      {"profile", required_argument, NULL, SOLVE_OPTION_PROFILE}, {                                \
    "view", no_argument, NULL, SOLVE_OPTION_VIEW                                                   \
  }
#define SOLVE_OPTIONS_HELP                                                                         \
  "      --method M           auto (default: cg when A is symmetric with a positive\n"             \
  "                           diagonal, else gmres), cg, gmres, bicgstab\n"                        \
  "      --restart M          GMRES(M): Krylov vectors kept before a restart (30)\n"               \
  "      --precond P          preconditioner: none, jacobi (default; z = D^-1 r), or\n"            \
  "                           amg: one V-cycle of algebraic multigrid built from\n"                \
  "                           the matrix alone (smoothed aggregation after Fu et\n"                \
  "                           al. 2014, section 5, by default)\n"                                  \
  "  AMG (with --precond amg):\n"                                                                  \
  "      --smoother S         the smoother on every level: chebyshev (default;\n"                  \
  "                           Chebyshev on D^-1 A), gauss-seidel (symmetric,\n"                    \
  "                           multicolour; fewest iterations, but two launches\n"                  \
  "                           per colour: slow on GPUs), jacobi-rho (Jacobi with\n"                \
  "                           omega = 4/3 / rho(D^-1 A) estimated per level),\n"                   \
  "                           patch (Fu et al.'s patch block-Jacobi, --inner\n"                    \
  "                           iterations per patch), jacobi (omega 0.7), spai0.\n"                 \
  "                           All but patch, jacobi and spai0 keep the cycle SPD\n"                \
  "                           for CG on any SPD matrix\n"                                          \
  "      --smoothing-steps N  smoothing steps before and after the coarse correction\n"            \
  "                           (default 3 for chebyshev, 1 for gauss-seidel, whose\n"               \
  "                           step is a forward and a backward sweep, 2 for others)\n"             \
  "      --inner N            patch smoother: inner Jacobi iterations (default 3)\n"               \
  "      --coarsening C       sa (default): smoothed aggregation; classical: PMIS\n"               \
  "                           C/F splitting and --interpolation, as hypre's\n"                     \
  "                           BoomerAMG (setup on the host)\n"                                     \
  "      --interpolation I    classical: extended+i (default; distance two, hypre's\n"             \
  "                           GPU default) or direct; P's rows keep at most\n"                     \
  "                           --set amg.p_max=4 entries (0: all)\n"                                \
  "      --roots R            how smoothed aggregation picks its aggregates' roots:\n"             \
  "                           ordered (greedy in row order; smaller aggregates,\n"                 \
  "                           fewer iterations, on the host), parallel (a maximal\n"               \
  "                           independent set by rounds with hashed priorities, the\n"             \
  "                           same on every device, pyamg's aggregate sizes; on a\n"               \
  "                           GPU the scalar setup then runs there) or auto\n"                     \
  "                           (default: parallel on a GPU with one unknown per\n"                  \
  "                           node and no near-nullspace, else ordered)\n"                         \
  "      --block-size N       unknowns per node, numbered together (3 for 3D\n"                    \
  "                           elasticity): a node's unknowns are aggregated as one\n"              \
  "                           (default 1; with --coordinates the dimension)\n"                     \
  "      --coordinates FILE   Matrix Market array, one row per node with its 2 or 3\n"             \
  "                           coordinates: the near-nullspace becomes the rigid-body\n"            \
  "                           modes of elasticity (3 in 2D, 6 in 3D)\n"                            \
  "      --near-nullspace FILE  Matrix Market array of rows x k: k vectors A nearly\n"             \
  "                           annihilates, which the coarse levels reproduce\n"                    \
  "                           (default: the constant per unknown of a node)\n"                     \
  "      --strength T         aggregation: j is strong for i when |a_ij| >=\n"                     \
  "                           T sqrt(|a_ii a_jj|) (default 0: every entry);\n"                     \
  "                           classical: |a_ij| >= T max_k |a_ik| (default 0.25)\n"                \
  "      --format F           device matrix format: auto (default), csr, ellr, sell,\n"            \
  "                           csr-adaptive, hybrid\n"                                              \
  "      --precision P        double (default) or float, for matrix and vectors, or\n"             \
  "                           mixed: the Krylov method in double, the\n"                           \
  "                           preconditioner in float. On a device without fp64\n"                 \
  "                           the default is float, and double or mixed fail\n"                    \
  "      --tol T              stop when ||b - A x|| <= T ||b|| (default 1e-8, in\n"                \
  "                           float 1e-5: float's rounding floor is 1e-7 times the\n"              \
  "                           condition number or so, and a solve that reaches it\n"               \
  "                           first stops there and says so)\n"                                    \
  "      --maxit N            at most N iterations (default 1000)\n"                               \
  "      --options FILE       solver options from a JSON file ({\"krylov\": \"cg\",\n"             \
  "                           \"precond\": \"amg\", \"mg\": {\"smoother\": \"jacobi\"}});\n"       \
  "                           the flags above and --set override it. The --json\n"                 \
  "                           result's \"options\" object is such a file: it repeats\n"            \
  "                           the run. `clmg help options` lists every key\n"                      \
  "      --set \"K=V ...\"      options by key (e.g. --set \"mg.cycle=w amg.max_levels=4\");\n"    \
  "                           each flag above is one key (--smoother S is\n"                       \
  "                           mg.smoother=S; --method M is krylov=M)\n"                            \
  "  -o, --output FILE        write x as a Matrix Market array (also the last\n"                   \
  "                           iterate when --maxit stopped the solve; not after a\n"               \
  "                           breakdown or a failure, whose x approximates nothing)\n"             \
  "  -q, --quiet              no residual history and no progress lines\n"                         \
  "      --profile N          the solver's setup under the kernel profile: its N\n"                \
  "                           kernels of most device time (device clock; a few\n"                  \
  "                           percent slower setup). With --json: \"profile\"\n"                   \
  "      --view               show the levels the method works on: rows, nonzeros,\n"              \
  "                           device format, smoother, coarse solver, operator and\n"              \
  "                           grid complexity (with --precond amg its levels and\n"                \
  "                           the seconds of each setup phase, else one level, A)\n"               \
  "      --skip-checks        with --method cg: warn about a nonsymmetric matrix or\n"             \
  "                           a diagonal that is not positive instead of refusing it\n"

/* The defaults of the solver options (common options from `defaults`). */
void solve_options_defaults(const cli_options *defaults, solve_options *options);
/* Applies a solver option returned by getopt_long: 1 applied, 0 not a solver
 * option, -1 a bad value (the note for cli_usage_error is printed). */
int solve_apply_option(const char *command, int option, const char *arg, solve_options *options);

/* What a solve allocates, released in one place (solve_release). clmg solve
 * reads A as host CSR (a) and b; clmg helmholtz may instead put a matrix
 * made on the device in `matrix` (and, for mixed precision, its float copy
 * in `float_matrix`), which the resources then own. */
typedef struct solve_resources {
  clmg_csr a;
  size_t n; /* rows of A */
  double *b, *x;
  const char *rhs_description; /* for the report when there is no b file */
  clmg_context *context;
  clmg_options *options;     /* the solver's options (cli_make_options) */
  clmg_matrix *matrix;       /* made on the device by the command (clmg helmholtz), or NULL */
  clmg_matrix *float_matrix; /* precision=mixed: the preconditioner's copy, or NULL */
  clmg_solver *solver;
  clmg_vector *device_b, *device_x, *residual;
} solve_resources;

void solve_release(solve_resources *s);

/* A matrix is taken for symmetric when every |a_ij - a_ji| is at most this
 * much of the larger. */
extern const double solve_symmetry_tolerance;
/* What solve_check_matrix reports, from the facts of a matrix found
 * elsewhere (a distributed one): whether it is symmetric, how many diagonal
 * entries are not positive, the first (0-based row) and its value. */
int solve_check_spd(const char *command, const solve_options *options, int symmetric,
                    size_t nonpositive, size_t first_bad, double first_value);
/* Where krylov=cg was asked for: checks that A is symmetric with a
 * positive diagonal (messages on stderr; --skip-checks makes them
 * warnings). krylov=auto is the library's (clmg_solver_create). Returns 0
 * after reporting when A does not fit. */
int solve_check_matrix(const char *command, const solve_options *options, const clmg_options *db,
                       const clmg_csr *a);
/* The keys set that the solver does not read, as a warning on stderr
 * (nothing when every key is read). */
void solve_warn_unused(const char *command, const clmg_solver *solver);
/* The --help text of clmg solve. */
void solve_print_usage(FILE *out);
/* The residual history, all of it or a sample (text report). */
void solve_print_history(const clmg_krylov_result *result);
/* A Krylov monitor that prints a progress line on stderr about once a
 * second while enabled. */
typedef struct solve_progress {
  int enabled;
  double start, last_print;
} solve_progress;
int solve_print_progress(void *data, int iteration, double relative_residual);

/* Everything measured, for the text and the JSON report. */
typedef struct solve_report {
  const clmg_solver *solver;
  const clmg_matrix *matrix;
  clmg_kernel_time *profile; /* --profile: the setup's kernels, most time first */
  size_t profile_count;
  const clmg_device_info *device;
  const char *rhs_description; /* JSON "rhs" when there is no b file */
  const char *read_label;      /* what read_s measured (NULL: "read") */
  clmg_status status;
  const char *message; /* the library's message when status is not success */
  clmg_krylov_result result;
  double true_relative_residual;
  int have_error_vs_ones;
  double error_max, error_relative;
  /* read_s: the files (or mesh and assembly); build_s: the solver's setup,
   * compilation excluded; kernels_s: compiling or loading the kernels */
  double read_s, build_s, kernels_s, solve_s;
  clmg_counters solve_counts; /* the solve's device commands and host waits */
  clmg_counters setup_counts; /* the same of the setup */
  /* a caller's own keys at the start of the JSON object (may be NULL) */
  void (*extra_json)(json_writer *w, void *data);
  void *extra_data;
} solve_report;

/* The outcome of a solve in the report: converged, iterations, residuals,
 * the error against ones; as text lines, or as JSON keys (through the
 * timings and the history). */
void solve_print_outcome(const solve_report *r);
void solve_json_outcome(json_writer *w, const solve_report *r);

/* What latency costs in a solve (the difference of clmg_context_counters
 * around it), in all and per iteration: a text line, or the JSON keys
 * commands, host_waits, commands_per_iteration, host_waits_per_iteration. */
void solve_print_counts(const clmg_counters *counts, int iterations);
void solve_json_counts(json_writer *w, const clmg_counters *counts, int iterations);
/* A kernel profile's first n lines (clmg_profile_stop's, largest first):
 * text lines under a heading naming what ran, or the JSON array "profile"
 * (kernel, seconds, launches, work_items). solve_profile_seconds: the
 * device time of every line together. */
void solve_print_profile(const char *what, const clmg_kernel_time *times, size_t count, int n);
void solve_json_profile(json_writer *w, const clmg_kernel_time *times, size_t count, int n);
double solve_profile_seconds(const clmg_kernel_time *times, size_t count);
/* after - before, for the counts of what ran between them */
clmg_counters solve_counts_since(const clmg_context *context, const clmg_counters *before);

/* With the context open and s->n, s->b, s->x set: builds what is missing
 * on the device, solves, writes x (-o) and prints the report (text or one
 * JSON object); returns the exit status. The caller releases s. */
int solve_on_device(const char *command, solve_options *options, solve_resources *s,
                    solve_report *report, int b_is_a_ones);

/* ---- clmg poisson (poisson.c) ---- */

typedef enum mesh_kind { MESH_CIRCLE, MESH_BLOOD, MESH_FILE } mesh_kind;

/* Finest levels above this would not fit a workstation's memory (CIRCLE Q1
 * level 12 has 33.6M unknowns); the mesh is checked again as it grows. */
enum { POISSON_MAX_LEVEL = 12 };

typedef struct poisson_options {
  cli_options common;
  const char *mesh_name; /* "circle", "blood" or a path */
  mesh_kind mesh;
  int degree;
  int level;
  clmg_numbering numbering;
  int numbering_given;
  /* The hierarchy assembled on the device (2LV only), or on the host. */
  int assembly_on_device;
  int assembly_given; /* --assembly given (under mpirun: the pieces' default is the device) */
  int rows_on_host;   /* --rows host: under mpirun, the finest rows renumbered on the host */
  clmg_multigrid_options multigrid;
  int smoothing_given, omega_given;
  int use_cg;
  int krylov_given;            /* --krylov on the command line */
  int mixed;                   /* float hierarchy inside double CG */
  const char *precision_asked; /* --precision double or mixed; NULL: the default */
  int tolerance_given;
  double tolerance;
  int max_iterations;
  const char *vtk_path;
  clmg_vtu_encoding vtk_encoding;
  int quiet, view;
  int profile; /* --profile N: the solve under the kernel profile, its N kernels shown */
  unsigned long long seed;
  size_t cells_per_rank; /* under mpirun: the partition level (clmg_mpi_poisson_options) */
  /* the solver flags as the options layer's keys, with --options and --set
   * (one process: the solver is built from them, clmg/solver.h) */
  cli_settings settings;
} poisson_options;

int poisson_parse_options(int argc, char **argv, const cli_options *defaults,
                          poisson_options *options);
/* clmg poisson's own defaults where the options database db does not set
 * a key (multigrid cycles alone, CG for a float cycle in double, 200
 * iterations, Geveler et al. 2011's BLOOD smoothing), krylov none or cg
 * checked, and the hierarchy's options from db (o->multigrid, with
 * --coarse-rows; use_cg, mixed, max_iterations and the tolerance, which
 * the report prints); the cycle's autos resolved in db for its echo.
 * Returns 0 after reporting. */
int poisson_solver_options(const char *command, poisson_options *o, clmg_options *db,
                           clmg_context *context);
/* The --help text of clmg poisson. */
void poisson_print_usage(FILE *out);
/* The problem and the coarse mesh the options name. */
void poisson_problem_of(const poisson_options *o, clmg_poisson_problem *problem);
clmg_status poisson_load_coarse_mesh(const poisson_options *o, clmg_mesh *mesh, clmg_error *error);

/* ---- clmg helmholtz (helmholtz.c) ---- */

/* Materials and Dirichlet tags a command line may list. */
enum { HELMHOLTZ_MAX_MATERIALS = 64, HELMHOLTZ_MAX_DIRICHLET_TAGS = 64 };

typedef enum mesh_source { MESH_REGULAR, MESH_BLOBS, MESH_BLOBS_2D, MESH_GMSH } mesh_source;

typedef struct helmholtz_options {
  solve_options solver; /* the Krylov options of clmg solve, and common */
  const char *mesh_spec;
  mesh_source mesh;
  int level;
  int32_t material_ids[HELMHOLTZ_MAX_MATERIALS];
  double sigma[HELMHOLTZ_MAX_MATERIALS];
  size_t num_materials;
  double lambda;
  clmg_rhs_kind rhs;
  int32_t dirichlet_tags[HELMHOLTZ_MAX_DIRICHLET_TAGS];
  size_t num_dirichlet_tags;
  int host_assembly;
  const char *write_matrix_path, *write_rhs_path, *vtk_path;
  int no_solve;
} helmholtz_options;

int helmholtz_parse_options(int argc, char **argv, const cli_options *defaults,
                            helmholtz_options *options);

/* ---- clmg flow (flow.c) ---- */

typedef struct flow_options {
  cli_options common;
  clmg_flow_case flow; /* clmg/flow.h */
  const char *case_spec;
  int level, level_given;
  double re;
  int re_given;
  int steady, steady_given;
  int steady_option, time_options; /* --steady; --dt or --steps: not both */
  double dt;
  int steps, steps_given;
  /* The solver's options (clmg_options_flow) from the settings: --smoother
   * is mg.smoother, --tol flow.nonlinear_tol, --maxit flow.nonlinear_maxit,
   * --time-scheme flow.time_scheme, --upwind flow.upwind, then --set texts,
   * after the --options file. Its levels, steady, time_step and steps are
   * the run's (above); its time_scheme and upwind start as the case's
   * defaults. */
  clmg_flow_options solver;
  cli_settings settings;
  char unused[512]; /* keys set that clmg flow does not read */
  const char *vtk_prefix, *csv_path, *profile_path;
  int vtk_every;
  int32_t walls[CLMG_FLOW_MAX_TAGS];
  size_t num_walls;
  int32_t inflow_tag;
  /* a .msh case's --slip, --outflow, --inflow-profile, --inflow-peak, --body,
   * --reference-length and --pressure-points (clmg_flow_case_create_gmsh) */
  int32_t slip[CLMG_FLOW_MAX_TAGS], outflow[CLMG_FLOW_MAX_TAGS];
  size_t num_slip, num_outflow;
  clmg_flow_gmsh_options gmsh; /* its tag arrays point into this struct: set in run_flow */
  int gmsh_given;              /* one of those flags was given */
  int quiet;
} flow_options;

int flow_parse_options(int argc, char **argv, const cli_options *defaults, flow_options *options);

/* ---- clmg homg (homg.c) ---- */

typedef struct homg_options {
  cli_options common;
  size_t n;
  /* The solver's options (clmg_options_homg) from the settings: every
   * solver flag is a key (--maxi M is homg.maxi=M, --smoothing A,B is
   * mg.pre=A mg.post=B), then --set texts, after the --options file. */
  clmg_homg_options solver;
  cli_settings settings;
  char smoothing[2][24]; /* --smoothing's PRE and POST, the values of their settings */
  char unused[512];      /* keys set that clmg homg does not read */
  int steps, quiet;
  const char *vtk_path, *png_path, *snapshot_prefix, *snapshot_format;
} homg_options;

int homg_parse_options(int argc, char **argv, const cli_options *defaults, homg_options *options);

/* ---- clmg bench (bench.c) ---- */

typedef struct bench_options {
  cli_options common;
  const char *size;      /* small, medium, large, auto */
  const char *stage;     /* NULL: all */
  const char *json_path; /* --output FILE: the report file (NULL: none) */
  const char *html_path;
  int json_stdout; /* --json: the report on stdout instead of the table */
  int quick, compare, inject_fault, trials;
  double min_time; /* 0: the default */
  char **files;    /* --compare's reports */
  int file_count;
} bench_options;

int bench_parse_options(int argc, char **argv, const cli_options *defaults, bench_options *options);

#endif
