/* clmg_perf_gmg: the finite-element geometric multigrid of Geveler et al. 2011
 * on the CIRCLE benchmark, as their Tables 2 and 3.
 *
 * For each element (Q1, Q2), level and DOF numbering (2LV, CM, XYZ, STO,
 * HIE) it builds the level hierarchy on the host, then
 *   Table 2: times y = A x on the finest matrix (auto format, double) and
 *            reports MFLOP/s (2 nnz per product, the paper's measure), GB/s
 *            under the minimal-traffic model and its ratio to the copy
 *            bandwidth measured in the same run;
 *   Table 3: solves to a 1e-8 relative residual with the paper's settings
 *            (V-cycle, 4+4 Jacobi steps, omega 0.7) from u = 0 inside, best
 *            of `--trials` solves, and reports cycles, solve time, time per
 *            cycle and its ratio to the cycle's bandwidth floor
 *            (clmg_multigrid_iteration_bytes over the copy bandwidth).
 * --sweep then solves the largest Q1 level with every smoother, format and
 * Krylov choice, for the fastest time to 1e-8.
 * The setup table (--setup yes) times, per element and level, what comes
 * before a solve: the 2LV hierarchy assembled on the host and uploaded
 * (clmg_fe_poisson_hierarchy + clmg_multigrid_create) against the same
 * hierarchy assembled on the device (clmg_fe_poisson_hierarchy_device +
 * clmg_multigrid_create_from_csr_device), and the solve that follows.
 * Every solver is built through the options layer (clmg/solver.h) from an
 * options string: clmg_options_multigrid gives the hierarchy's cycle (the
 * sweep's --coarse-rows, which the options do not have, is set on it),
 * clmg_solver_create_multigrid the solver around it; each row's JSON
 * echoes the string as "options".
 *
 *   clmg_perf_gmg [--device DEV] [--output FILE] [--json] [--size small|large]
 *                 [--q1-levels A:B] [--q2-levels A:B] [--numberings LIST]
 *                 [--sweep yes|no] [--setup yes|no] [--coarse-rows N]
 *                 [--min-time S] [--trials T]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "clmg.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_gmg"

enum { MAX_RESULTS = 512 };

typedef struct settings {
  const char *device;
  perf_output output;
  int levels[2][2]; /* [q1, q2][first, last]; first > last: none */
  int numbering_on[5];
  int sweep;
  int setup;
  long coarse_rows; /* the sweep's coarse_max_rows (0: the mesh's coarsest level) */
  perf_timing timing;
} settings;

typedef struct spmv_row {
  int degree, level;
  clmg_numbering numbering;
  size_t unknowns, nonzeros;
  const char *format_name; /* clmg_matrix_format_name */
  char format[64];         /* clmg_matrix_describe */
  double seconds, mflops, gb_per_s, ratio, assembly_s;
} spmv_row;

typedef struct solve_row {
  int degree, level;
  clmg_numbering numbering;
  char options[192]; /* the options string that built the solver */
  char smoother[32], format[64], krylov[16];
  const char *format_name;
  int pre, post;
  size_t unknowns;
  int converged, iterations;
  double relative_residual, rate, solve_s, cycle_s, floor_s, ratio, setup_s, kernels_s;
} solve_row;

/* Device time per kernel in one more solve of the sweep's fastest
 * configuration (clmg_profile_start/stop). */
typedef struct kernel_profile {
  clmg_kernel_time *kernels; /* malloc'ed; NULL: not measured */
  size_t count;
  double wall_s; /* the profiled solve, events included */
  int iterations;
  size_t row; /* the configuration: index into results.solve */
} kernel_profile;

/* Setup before a solve, host against device assembly (2LV). */
typedef struct setup_row {
  int degree, level;
  size_t unknowns;
  double host_hierarchy_s, host_multigrid_s, device_hierarchy_s, device_multigrid_s;
  /* the device hierarchy's parts (clmg_fe_device_hierarchy) */
  double refine_s, number_s, dirichlet_s, device_s;
  int iterations;
  double solve_s;
  char options[192]; /* the solve's solver */
} setup_row;

typedef struct results {
  setup_row setup[MAX_RESULTS];
  size_t setup_count;
  spmv_row spmv[MAX_RESULTS];
  size_t spmv_count;
  solve_row solve[MAX_RESULTS];
  size_t solve_count;
  kernel_profile profile;
} results;

static void print_usage(FILE *out) {
  fputs("Usage: " PROGRAM " [OPTIONS]\n"
        "\n"
        "Tables 2 (SpMV MFLOP/s per numbering, Q1 and Q2, per level) and 3 (multigrid\n"
        "solve time per numbering) of Geveler et al. 2011 on the CIRCLE benchmark, with\n"
        "the ratio of each cycle's time to its bandwidth floor (bytes a cycle must move\n"
        "over the copy bandwidth measured in the same run).\n"
        "\n"
        "Options:\n"
        "  --device DEV        device string (default: CLMG_DEVICE, else the first GPU)\n"
        "  --size small|large  level ranges: small = Q1 4-7, Q2 4-6 (CPUs, default on\n"
        "                      them); large = Q1 6-10, Q2 5-9 (GPUs, default there)\n"
        "  --q1-levels A:B     Q1 levels A to B (0:0 for none)\n"
        "  --q2-levels A:B     Q2 levels A to B (0:0 for none)\n"
        "  --numberings LIST   comma-separated from 2lv,cm,xyz,sto,hie (default all)\n"
        "  --sweep yes|no      also solve the largest Q1 level with every smoother,\n"
        "                      format and Krylov choice (default yes)\n"
        "  --min-time S        each SpMV measurement lasts at least S seconds (0.2)\n"
        "  --trials T          timed SpMV batches and solves; the fastest counts (3)\n"
        "  --setup yes|no      time the setup of each level's 2LV hierarchy, assembled on\n"
        "                      the host and on the device, and the solve after it\n"
        "                      (default yes; one trial each, after a warm-up that\n"
        "                      compiles the kernels)\n"
        "  --coarse-rows N     the sweep solves directly on the finest level with at most\n"
        "                      N rows and drops the coarser ones (default 0: all levels)\n",
        out);
  perf_output_help(out, 22);
  fputs("  -h, --help          this text\n", out);
}

static int parse_range(const char *text, int range[2]) {
  int first, last;
  char extra;
  if (sscanf(text, "%d:%d%c", &first, &last, &extra) != 2 || first < 0 || last > 12)
    return 0;
  range[0] = first == 0 ? 1 : first;
  range[1] = first == 0 ? 0 : last;
  return 1;
}

/* Returns 1 to run, 2 for --help, 0 after printing why the options are bad. */
static int parse_settings(int argc, char **argv, settings *s, const char **size) {
  memset(s, 0, sizeof *s);
  for (int k = 0; k < 5; ++k)
    s->numbering_on[k] = 1;
  s->sweep = 1;
  s->setup = 1;
  s->timing.min_time_s = 0.2;
  s->timing.trials = 3;
  s->timing.max_adaptive_reps = 100000;
  s->levels[0][0] = -1; /* from --size or the device */
  int q1_given = 0, q2_given = 0;
  static const char *const value_options[] = {
      "--device", "--output", "--size",     "--q1-levels", "--q2-levels",   "--numberings",
      "--sweep",  "--setup",  "--min-time", "--trials",    "--coarse-rows", NULL};
  for (int i = 1; i < argc; ++i) {
    char name[32];
    const char *value = NULL;
    int read = perf_next_option(PROGRAM, argc, argv, &i, value_options, name, &value);
    if (read < 0)
      return 2;
    if (read == 0)
      return 0;
    if (strcmp(name, "--device") == 0) {
      s->device = value;
    } else if (perf_parse_output_option(name, value, &s->output) == 1) {
    } else if (strcmp(name, "--size") == 0) {
      if (strcmp(value, "small") != 0 && strcmp(value, "large") != 0) {
        fprintf(stderr, PROGRAM ": --size wants small or large, not %s\n", value);
        return 0;
      }
      *size = value;
    } else if (strcmp(name, "--q1-levels") == 0 || strcmp(name, "--q2-levels") == 0) {
      int q = name[3] == '2';
      if (!parse_range(value, s->levels[q])) {
        fprintf(stderr, PROGRAM ": %s wants A:B with 1 <= A <= B <= 12 (0:0 for none), not %s\n",
                name, value);
        return 0;
      }
      *(q ? &q2_given : &q1_given) = 1;
    } else if (strcmp(name, "--numberings") == 0) {
      memset(s->numbering_on, 0, sizeof s->numbering_on);
      char list[128];
      snprintf(list, sizeof list, "%s", value);
      for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
        clmg_numbering numbering;
        if (!clmg_numbering_parse(item, &numbering)) {
          fprintf(stderr, PROGRAM ": unknown numbering %s (2lv, cm, xyz, sto, hie)\n", item);
          return 0;
        }
        s->numbering_on[numbering] = 1;
      }
    } else if (strcmp(name, "--sweep") == 0) {
      if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
        fprintf(stderr, PROGRAM ": --sweep wants yes or no, not %s\n", value);
        return 0;
      }
      s->sweep = value[0] == 'y';
    } else if (strcmp(name, "--setup") == 0) {
      if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
        fprintf(stderr, PROGRAM ": --setup wants yes or no, not %s\n", value);
        return 0;
      }
      s->setup = value[0] == 'y';
    } else if (strcmp(name, "--coarse-rows") == 0) {
      char *end = NULL;
      s->coarse_rows = strtol(value, &end, 10);
      if (end == value || *end != '\0' || s->coarse_rows < 0 || s->coarse_rows > 16384) {
        fprintf(stderr, PROGRAM ": --coarse-rows wants 0 to 16384, not %s\n", value);
        return 0;
      }
    } else if (!perf_parse_timing_option(PROGRAM, name, value, &s->timing)) {
      return 0;
    }
  }
  s->levels[0][0] = q1_given ? s->levels[0][0] : -1;
  if (!q1_given)
    s->levels[0][1] = -1;
  if (!q2_given)
    s->levels[1][0] = s->levels[1][1] = -1;
  return 1;
}

static void apply_size(settings *s, const char *size, const clmg_device_info *device) {
  int large = size ? strcmp(size, "large") == 0 : device->is_gpu;
  static const int ranges[2][2][2] = {{{4, 7}, {4, 6}}, {{6, 10}, {5, 9}}};
  for (int q = 0; q < 2; ++q)
    if (s->levels[q][0] < 0) {
      s->levels[q][0] = ranges[large][q][0];
      s->levels[q][1] = ranges[large][q][1];
    }
}

/* ---- measurements ---- */

static clmg_status measure_spmv(clmg_context *context, const settings *s, const clmg_csr *a,
                                double copy_gb_per_s, spmv_row *row) {
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  clmg_matrix *matrix = NULL;
  clmg_vector *x = NULL, *y = NULL;
  clmg_status status = clmg_matrix_create(context, a, &options, &matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, a->cols, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, a->rows, &y);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(x, 1.0);
  long reps = 0;
  if (status == CLMG_SUCCESS) {
    perf_spmv_operands operands = {matrix, x, y};
    status =
        perf_time_adaptive(context, &s->timing, perf_run_spmv, &operands, &reps, &row->seconds);
  }
  if (status == CLMG_SUCCESS) {
    double bytes = (double)clmg_matrix_device_bytes(matrix) + 8.0 * (double)(a->rows + a->cols);
    row->unknowns = a->rows;
    row->nonzeros = clmg_csr_nnz(a);
    row->mflops = 2.0 * (double)row->nonzeros / row->seconds / 1e6;
    row->gb_per_s = bytes / row->seconds / 1e9;
    row->ratio = row->gb_per_s / copy_gb_per_s;
    snprintf(row->format, sizeof row->format, "%s", clmg_matrix_describe(matrix));
    row->format_name = clmg_matrix_format_name(clmg_matrix_format_of(matrix));
  }
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  clmg_matrix_destroy(matrix);
  return status;
}

/* How the cycle is used: as the solver (krylov=none), as CG's
 * preconditioner (krylov=cg), or as a float cycle preconditioning double
 * CG (krylov=cg precision=mixed). */
typedef enum krylov_mode { MODE_NONE = 0, MODE_CG, MODE_CG_MIXED, MODE_COUNT } krylov_mode;
static const char *const mode_names[MODE_COUNT] = {"none", "cg", "cg-mixed"};

/* Geveler et al.'s cycle: V-cycles of 4+4 Jacobi steps with omega 0.7. */
#define PAPER_CYCLE "mg.cycle=v mg.smoother=jacobi mg.steps=4 mg.omega=0.7"
/* Table 3's solver: the paper's cycle alone, to 1e-8 in at most 500 cycles. */
#define PAPER_OPTIONS                                                                              \
  "krylov=none precond=multigrid " PAPER_CYCLE " tol=1e-8 maxit=500 precision=double"

/* The multigrid options of a solver's options string (clmg_options_multigrid,
 * the device matrices' format and precision: float for precision=mixed)
 * and its database; the mode it describes. coarse_max_rows (an engine
 * setting the options do not have: the finest level of at most that many
 * rows becomes the coarse one) is set as given. Returns 0 after printing
 * why the text is refused. */
static int solver_options(clmg_context *context, const char *text, size_t coarse_max_rows,
                          clmg_options **options, clmg_multigrid_options *mg, krylov_mode *mode) {
  clmg_error error = {{0}};
  clmg_status status = perf_options_parse(text, options, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": %s: %s\n", text, error.message);
    return 0;
  }
  status = clmg_options_multigrid(*options, context, mg);
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, text);
    clmg_options_destroy(*options);
    *options = NULL;
    return 0;
  }
  clmg_matrix_format_parse(clmg_options_get(*options, "format"), &mg->matrix.format);
  const char *precision = clmg_options_get(*options, "precision");
  mg->matrix.precision = strcmp(precision, "double") == 0 ? CLMG_DOUBLE : CLMG_FLOAT;
  mg->coarse_max_rows = coarse_max_rows;
  *mode = strcmp(clmg_options_get(*options, "krylov"), "none") == 0 ? MODE_NONE
          : strcmp(precision, "mixed") == 0                         ? MODE_CG_MIXED
                                                                    : MODE_CG;
  return 1;
}

/* The multigrid and the solver of the options around it (for mixed
 * precision CG, around the finest matrix in double: *outer_matrix and
 * *outer). *setup_s: the hierarchy's setup; *kernels_s: the solver's, which
 * runs one iteration on scratch vectors that compiles (or loads) the
 * solve's kernels. */
static clmg_status build_solver(clmg_context *context, const clmg_fe_hierarchy *h,
                                const clmg_multigrid_options *mg_options, krylov_mode mode,
                                const clmg_options *options, clmg_multigrid **mg,
                                clmg_matrix **outer_matrix, clmg_operator *outer,
                                clmg_solver **solver, double *setup_s, double *kernels_s) {
  double start = apputil_now();
  clmg_status status =
      clmg_multigrid_create(context, h->num_levels, h->a, h->p, h->r, mg_options, mg);
  const clmg_operator *fine =
      status == CLMG_SUCCESS ? clmg_multigrid_operator(*mg, clmg_multigrid_levels(*mg) - 1) : NULL;
  if (status == CLMG_SUCCESS && mode == MODE_CG_MIXED) {
    clmg_matrix_options double_options = mg_options->matrix;
    double_options.precision = CLMG_DOUBLE;
    status = clmg_matrix_create(context, &h->a[h->num_levels - 1], &double_options, outer_matrix);
    if (status == CLMG_SUCCESS)
      status = clmg_operator_from_matrix(*outer_matrix, 0, outer);
    fine = outer;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  *setup_s = apputil_now() - start;
  start = apputil_now();
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_multigrid(context, fine, *mg, 1, options, solver);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  *kernels_s = apputil_now() - start;
  return status;
}

/* Best of `trials` solves from x0 with the solver the options string
 * describes (its setup runs one iteration that compiles the kernels);
 * coarse_max_rows as solver_options sets it. profile, when not NULL,
 * receives the kernel profile of one more solve after the timed ones.
 * Returns CLMG_ERROR_INVALID_ARGUMENT after printing why text is refused. */
static clmg_status measure_solve(clmg_context *context, const settings *s,
                                 const clmg_fe_hierarchy *h, const char *text,
                                 size_t coarse_max_rows, double copy_gb_per_s, solve_row *row,
                                 kernel_profile *profile) {
  size_t n = h->a[h->num_levels - 1].rows;
  clmg_options *options = NULL;
  clmg_multigrid_options mg_options;
  krylov_mode mode = MODE_NONE;
  if (!solver_options(context, text, coarse_max_rows, &options, &mg_options, &mode))
    return CLMG_ERROR_INVALID_ARGUMENT;
  snprintf(row->options, sizeof row->options, "%s", text);
  clmg_multigrid *mg = NULL;
  clmg_matrix *outer_matrix = NULL; /* mixed: the finest matrix in double, for CG */
  clmg_operator outer;
  memset(&outer, 0, sizeof outer);
  clmg_solver *solver = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_status status = build_solver(context, h, &mg_options, mode, options, &mg, &outer_matrix,
                                    &outer, &solver, &row->setup_s, &row->kernels_s);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, n, &b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, n, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(b, h->b);
  row->solve_s = INFINITY;
  for (long trial = 0; status == CLMG_SUCCESS && trial < s->timing.trials; ++trial) {
    clmg_krylov_result result = {0};
    status = clmg_vector_upload_doubles(x, h->x0);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(context);
    if (status != CLMG_SUCCESS)
      break;
    double start = apputil_now();
    clmg_status solved = clmg_solver_solve(solver, b, x, &result);
    double seconds = apputil_now() - start;
    if (solved != CLMG_SUCCESS && solved != CLMG_ERROR_NOT_CONVERGED) {
      clmg_krylov_result_free(&result);
      status = solved;
      break;
    }
    if (seconds < row->solve_s) {
      row->solve_s = seconds;
      row->iterations = result.iterations;
      row->converged = result.converged;
      row->relative_residual = result.relative_residual;
      row->rate =
          result.iterations > 0 && result.initial_residual > 0
              ? pow(result.final_residual / result.initial_residual, 1.0 / result.iterations)
              : 0;
    }
    clmg_krylov_result_free(&result);
  }
  if (status == CLMG_SUCCESS && profile) {
    clmg_krylov_result result = {0};
    status = clmg_vector_upload_doubles(x, h->x0);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(context);
    if (status == CLMG_SUCCESS)
      status = clmg_profile_start(context);
    double start = apputil_now();
    if (status == CLMG_SUCCESS) {
      clmg_status solved = clmg_solver_solve(solver, b, x, &result);
      if (solved != CLMG_SUCCESS && solved != CLMG_ERROR_NOT_CONVERGED)
        status = solved;
      clmg_status stopped = clmg_profile_stop(context, &profile->kernels, &profile->count);
      if (status == CLMG_SUCCESS)
        status = stopped;
    }
    profile->wall_s = apputil_now() - start;
    profile->iterations = result.iterations;
    clmg_krylov_result_free(&result);
  }
  if (status == CLMG_SUCCESS) {
    const clmg_matrix *finest = clmg_multigrid_matrix(mg, clmg_multigrid_levels(mg) - 1);
    const clmg_matrix *a = mode == MODE_CG_MIXED ? outer_matrix : finest;
    row->unknowns = n;
    row->cycle_s = row->iterations > 0 ? row->solve_s / row->iterations : 0;
    /* As a solver: a cycle and the defect after it. As CG's preconditioner:
     * a cycle from x = 0 inside a CG iteration. */
    double bytes = mode == MODE_NONE ? clmg_multigrid_iteration_bytes(mg)
                                     : perf_cg_iteration_bytes(a, clmg_multigrid_cycle_bytes(mg, 1),
                                                               mode == MODE_CG_MIXED);
    row->floor_s = bytes / (copy_gb_per_s * 1e9);
    row->ratio = row->floor_s > 0 ? row->cycle_s / row->floor_s : 0;
    snprintf(row->smoother, sizeof row->smoother, "%s",
             clmg_smoother_type_name(mg_options.smoother));
    snprintf(row->format, sizeof row->format, "%s", clmg_matrix_describe(finest));
    row->format_name = clmg_matrix_format_name(clmg_matrix_format_of(finest));
    snprintf(row->krylov, sizeof row->krylov, "%s", mode_names[mode]);
    row->pre = mg_options.pre_smoothing;
    row->post = mg_options.post_smoothing;
  }
  clmg_solver_destroy(solver);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  if (outer_matrix)
    clmg_operator_destroy(&outer);
  clmg_matrix_destroy(outer_matrix);
  clmg_multigrid_destroy(mg);
  clmg_options_destroy(options);
  return status;
}

/* ---- output ---- */

/* The setup table's solve: the paper's cycle alone to 1e-8 (at most 1000 cycles). */
#define SETUP_OPTIONS                                                                              \
  "krylov=none precond=multigrid " PAPER_CYCLE " tol=1e-8 maxit=1000 precision=double"

/* One level's setup both ways (the multigrid options from SETUP_OPTIONS),
 * then the paper's solve with the device-assembled hierarchy, by the
 * solver of SETUP_OPTIONS around it (made after the setup's clocks). */
static clmg_status measure_setup(clmg_context *context, const clmg_mesh *coarse,
                                 const clmg_poisson_problem *problem, int degree, int level,
                                 setup_row *row) {
  memset(row, 0, sizeof *row);
  row->degree = degree;
  row->level = level;
  snprintf(row->options, sizeof row->options, "%s", SETUP_OPTIONS);
  clmg_options *solver_db = NULL;
  clmg_multigrid_options options;
  krylov_mode mode;
  if (!solver_options(context, SETUP_OPTIONS, 0, &solver_db, &options, &mode))
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_error error = {{0}};

  clmg_fe_hierarchy host = {0};
  clmg_multigrid *mg = NULL;
  double start = apputil_now();
  clmg_status status = clmg_fe_poisson_hierarchy(coarse, level, degree, problem, CLMG_NUMBERING_2LV,
                                                 1, &host, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": Q%d level %d on the host: %s\n", degree, level, error.message);
    clmg_options_destroy(solver_db);
    return status;
  }
  row->host_hierarchy_s = apputil_now() - start;
  start = apputil_now();
  status = clmg_multigrid_create(context, host.num_levels, host.a, host.p, host.r, &options, &mg);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  row->host_multigrid_s = apputil_now() - start;
  row->unknowns = host.a[host.num_levels - 1].rows;
  clmg_multigrid_destroy(mg);
  mg = NULL;
  clmg_fe_hierarchy_free(&host);
  if (status != CLMG_SUCCESS) {
    clmg_options_destroy(solver_db);
    return status;
  }

  clmg_fe_device_hierarchy device = {0};
  start = apputil_now();
  status = clmg_fe_poisson_hierarchy_device(context, coarse, level, degree, problem, &device);
  row->device_hierarchy_s = apputil_now() - start;
  row->refine_s = device.refine_s;
  row->number_s = device.number_s;
  row->dirichlet_s = device.dirichlet_s;
  row->device_s = device.device_s;
  if (status == CLMG_SUCCESS) {
    start = apputil_now();
    status = clmg_multigrid_create_from_csr_device(context, device.num_levels, device.a, device.p,
                                                   device.r, &options, &mg);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(context);
    row->device_multigrid_s = apputil_now() - start;
  }
  clmg_solver *solver = NULL;
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_multigrid(
        context, clmg_multigrid_operator(mg, clmg_multigrid_levels(mg) - 1), mg, 1, solver_db,
        &solver);
  clmg_vector *x = NULL;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, row->unknowns, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_copy(device.x0, x);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  if (status == CLMG_SUCCESS) {
    clmg_krylov_result result = {0};
    start = apputil_now();
    status = clmg_solver_solve(solver, device.b, x, &result);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(context);
    row->solve_s = apputil_now() - start;
    row->iterations = result.iterations;
    clmg_krylov_result_free(&result);
  }
  clmg_vector_destroy(x);
  clmg_solver_destroy(solver);
  clmg_multigrid_destroy(mg);
  clmg_fe_device_hierarchy_free(&device);
  clmg_options_destroy(solver_db);
  return status;
}

static void print_setup_header(void) {
  printf("\nSetup of the 2LV hierarchy, host assembly against device assembly (one trial;\n"
         "hierarchy = refinement and assembly of every level's A, P, R; multigrid =\n"
         "device matrices, smoothers, coarse solver), then the solve to 1e-8 (V-cycle,\n"
         "Jacobi 4+4, omega 0.7) from the device-built hierarchy; the device hierarchy's\n"
         "parts: refine, number (with the finest mesh and space to the host),\n"
         "Dirichlet DOFs and the device assembly\n");
  printf("%-4s %5s %10s | %9s %9s %9s | %9s %9s %9s | %7s | %9s %6s | %7s %7s %7s %7s\n", "elem",
         "level", "unknowns", "host hier", "multigrid", "total s", "dev hier", "multigrid",
         "total s", "speedup", "solve s", "cycles", "refine", "number", "Dirich", "device");
}

static void print_setup_row(const setup_row *r) {
  double host = r->host_hierarchy_s + r->host_multigrid_s;
  double device = r->device_hierarchy_s + r->device_multigrid_s;
  printf("Q%-3d %5d %10zu | %9.4f %9.4f %9.4f | %9.4f %9.4f %9.4f | %7.2f | %9.4f %6d | %7.4f "
         "%7.4f %7.4f %7.4f\n",
         r->degree, r->level, r->unknowns, r->host_hierarchy_s, r->host_multigrid_s, host,
         r->device_hierarchy_s, r->device_multigrid_s, device, host / device, r->solve_s,
         r->iterations, r->refine_s, r->number_s, r->dirichlet_s, r->device_s);
  fflush(stdout);
}

/* The setup table for every element and level of the settings; a warm-up
 * at level 2 first compiles each element's kernels. */
static int run_setup_table(clmg_context *context, const settings *s, const clmg_mesh *coarse,
                           const clmg_poisson_problem *problem, results *res) {
  for (int q = 0; q < 2; ++q) {
    if (s->levels[q][0] > s->levels[q][1])
      continue;
    setup_row warm_up;
    clmg_status status = measure_setup(context, coarse, problem, q + 1, 2, &warm_up);
    if (status != CLMG_SUCCESS) {
      apputil_report(context, status, "warming up the setup");
      return 0;
    }
    if (res->setup_count == 0)
      print_setup_header();
    for (int level = s->levels[q][0]; level <= s->levels[q][1] && res->setup_count < MAX_RESULTS;
         ++level) {
      setup_row *row = &res->setup[res->setup_count];
      status = measure_setup(context, coarse, problem, q + 1, level, row);
      if (status != CLMG_SUCCESS) {
        apputil_report(context, status, "measuring the setup");
        return 0;
      }
      print_setup_row(row);
      res->setup_count++;
    }
  }
  return 1;
}

static void print_spmv_header(void) {
  printf("\nTable 2: SpMV y = A x on the finest CIRCLE matrix (auto format, double)\n");
  printf("%-4s %5s %10s %11s %-4s %-26s %10s %9s %8s %6s %10s\n", "elem", "level", "unknowns",
         "nonzeros", "num", "format", "time_us", "MFLOP/s", "GB/s", "ratio", "assemble_s");
}

static void print_spmv_row(const spmv_row *r) {
  printf("Q%-3d %5d %10zu %11zu %-4s %-26.26s %10.2f %9.0f %8.1f %6.2f %10.2f\n", r->degree,
         r->level, r->unknowns, r->nonzeros, clmg_numbering_name(r->numbering), r->format,
         1e6 * r->seconds, r->mflops, r->gb_per_s, r->ratio, r->assembly_s);
  fflush(stdout);
}

static void print_solve_header(const char *title) {
  printf("\n%s\n", title);
  printf("%-4s %5s %-4s %-9s %-5s %-8s %-20s %6s %10s %10s %10s %6s %7s\n", "elem", "level", "num",
         "smoother", "steps", "krylov", "format", "its", "solve_ms", "cycle_ms", "floor_ms",
         "ratio", "rate");
}

static void print_solve_row(const solve_row *r) {
  char steps[16];
  snprintf(steps, sizeof steps, "%d+%d", r->pre, r->post);
  printf("Q%-3d %5d %-4s %-9s %-5s %-8s %-20.20s %5d%s %10.3f %10.4f %10.4f %6.2f %7.4f\n",
         r->degree, r->level, clmg_numbering_name(r->numbering), r->smoother, steps, r->krylov,
         r->format, r->iterations, r->converged ? " " : "!", 1e3 * r->solve_s, 1e3 * r->cycle_s,
         1e3 * r->floor_s, r->ratio, r->rate);
  fflush(stdout);
}

static int write_json(const char *path, const results *res, const clmg_device_info *device,
                      double copy_gb_per_s) {
  clmg_output_file *file;
  FILE *out = perf_json_open(PROGRAM, path, &file);
  if (!out)
    return 0;
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "gmg");
  json_string(&w, "problem", "CIRCLE");
  json_device(&w, device);
  json_number(&w, "copy_gb_per_s", copy_gb_per_s);
  json_array_begin(&w, "setup");
  for (size_t k = 0; k < res->setup_count; ++k) {
    const setup_row *r = &res->setup[k];
    json_object_begin(&w, NULL);
    json_string(&w, "element", r->degree == 1 ? "q1" : "q2");
    json_integer(&w, "level", r->level);
    json_integer(&w, "unknowns", (long long)r->unknowns);
    json_number(&w, "host_hierarchy_s", r->host_hierarchy_s);
    json_number(&w, "host_multigrid_s", r->host_multigrid_s);
    json_number(&w, "host_setup_s", r->host_hierarchy_s + r->host_multigrid_s);
    json_number(&w, "device_hierarchy_s", r->device_hierarchy_s);
    json_number(&w, "device_multigrid_s", r->device_multigrid_s);
    json_number(&w, "device_refine_s", r->refine_s);
    json_number(&w, "device_numbering_s", r->number_s);
    json_number(&w, "device_dirichlet_s", r->dirichlet_s);
    json_number(&w, "device_assembly_s", r->device_s);
    json_number(&w, "setup_s", r->device_hierarchy_s + r->device_multigrid_s);
    json_number(&w, "solve_s", r->solve_s);
    json_integer(&w, "iterations", r->iterations);
    json_string(&w, "options", r->options);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "spmv");
  for (size_t k = 0; k < res->spmv_count; ++k) {
    const spmv_row *r = &res->spmv[k];
    json_object_begin(&w, NULL);
    json_string(&w, "element", r->degree == 1 ? "q1" : "q2");
    json_integer(&w, "level", r->level);
    json_string(&w, "numbering", clmg_numbering_name(r->numbering));
    json_integer(&w, "unknowns", (long long)r->unknowns);
    json_integer(&w, "nonzeros", (long long)r->nonzeros);
    json_string(&w, "format", r->format_name);
    json_string(&w, "format_description", r->format);
    json_number(&w, "seconds", r->seconds);
    json_number(&w, "mflops", r->mflops);
    json_number(&w, "gb_per_s", r->gb_per_s);
    json_number(&w, "ratio_to_copy", r->ratio);
    json_number(&w, "assembly_s", r->assembly_s);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "solve");
  for (size_t k = 0; k < res->solve_count; ++k) {
    const solve_row *r = &res->solve[k];
    json_object_begin(&w, NULL);
    json_string(&w, "element", r->degree == 1 ? "q1" : "q2");
    json_integer(&w, "level", r->level);
    json_string(&w, "numbering", clmg_numbering_name(r->numbering));
    json_string(&w, "smoother", r->smoother);
    json_integer(&w, "pre", r->pre);
    json_integer(&w, "post", r->post);
    json_string(&w, "krylov", r->krylov);
    json_string(&w, "format", r->format_name);
    json_string(&w, "format_description", r->format);
    json_integer(&w, "unknowns", (long long)r->unknowns);
    json_bool(&w, "converged", r->converged);
    json_integer(&w, "iterations", r->iterations);
    json_number(&w, "relative_residual", r->relative_residual);
    json_number(&w, "rate", r->rate);
    json_number(&w, "setup_s", r->setup_s);
    json_number(&w, "kernels_s", r->kernels_s);
    json_number(&w, "solve_s", r->solve_s);
    json_number(&w, "cycle_s", r->cycle_s);
    json_number(&w, "floor_s", r->floor_s);
    json_number(&w, "ratio_to_floor", r->ratio);
    json_string(&w, "options", r->options);
    json_object_end(&w);
  }
  json_array_end(&w);
  if (res->profile.kernels) {
    json_object_begin(&w, "profile");
    json_integer(&w, "solve_row", (long long)res->profile.row);
    json_integer(&w, "iterations", res->profile.iterations);
    json_number(&w, "wall_s", res->profile.wall_s);
    json_array_begin(&w, "kernels");
    for (size_t k = 0; k < res->profile.count; ++k) {
      json_object_begin(&w, NULL);
      json_string(&w, "name", res->profile.kernels[k].name);
      json_integer(&w, "work_items", (long long)res->profile.kernels[k].work_items);
      json_integer(&w, "launches", (long long)res->profile.kernels[k].launches);
      json_number(&w, "seconds", res->profile.kernels[k].seconds);
      json_object_end(&w);
    }
    json_array_end(&w);
    json_object_end(&w);
  }
  json_object_end(&w);
  json_end(&w);
  return perf_json_close(PROGRAM, file);
}

/* The kernels by device time, per iteration; the gap between the wall time
 * and the summed device time is what launches, read-backs and the host
 * cost beyond the kernels themselves. */
static void print_profile(const kernel_profile *p) {
  if (!p->kernels)
    return;
  double device_s = 0;
  for (size_t k = 0; k < p->count; ++k)
    device_s += p->kernels[k].seconds;
  int per = p->iterations > 0 ? p->iterations : 1;
  printf("\nKernel profile of the fastest configuration: one more solve, %d iterations, "
         "%.3f ms wall (events on), %.3f ms on the device (%.0f%%)\n",
         p->iterations, 1e3 * p->wall_s, 1e3 * device_s,
         p->wall_s > 0 ? 100.0 * device_s / p->wall_s : 0.0);
  printf("%-36s %11s %9s %13s %16s %7s\n", "kernel", "work items", "launches", "per iteration",
         "us per iteration", "share");
  for (size_t k = 0; k < p->count; ++k)
    printf("%-36.36s %11llu %9llu %13.1f %16.1f %6.1f%%\n", p->kernels[k].name,
           (unsigned long long)p->kernels[k].work_items, (unsigned long long)p->kernels[k].launches,
           (double)p->kernels[k].launches / per, 1e6 * p->kernels[k].seconds / per,
           device_s > 0 ? 100.0 * p->kernels[k].seconds / device_s : 0.0);
}

/* ---- main ---- */

/* A sweep's solver: the paper's V-cycle with a smoother and its steps, a
 * format and a Krylov choice, to 1e-8. */
static void sweep_options(const char *smoother, int steps, const char *format, krylov_mode mode,
                          char *text, size_t size) {
  snprintf(text, size,
           "krylov=%s precond=multigrid mg.cycle=v mg.smoother=%s mg.steps=%d%s format=%s "
           "tol=1e-8 maxit=500 precision=%s",
           mode == MODE_NONE ? "none" : "cg", smoother, steps,
           strcmp(smoother, "jacobi") == 0 ? " mg.omega=0.7" : "", format,
           mode == MODE_CG_MIXED ? "mixed" : "double");
}

static int run_sweep(clmg_context *context, const settings *s, const clmg_fe_hierarchy *h,
                     int level, double copy_gb_per_s, results *res) {
  static const struct {
    const char *smoother;
    int steps;
  } smoothers[] = {{"jacobi", 4},    {"jacobi", 2},    {"jacobi", 1}, {"jacobi", 3},
                   {"chebyshev", 2}, {"chebyshev", 3}, {"spai0", 4}};
  static const char *const formats[] = {"ellr", "sell", "csr"};
  char title[160];
  snprintf(title, sizeof title,
           "Sweep: the largest Q1 level, every smoother x format x Krylov choice%s%ld%s",
           s->coarse_rows ? " (coarse level: the finest with at most " : "", s->coarse_rows,
           s->coarse_rows ? " rows, solved directly)" : "");
  if (!s->coarse_rows)
    snprintf(title, sizeof title, "%s",
             "Sweep: the largest Q1 level, every smoother x format x Krylov choice");
  print_solve_header(title);
  const solve_row *best = NULL;
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f)
    for (size_t m = 0; m < sizeof smoothers / sizeof smoothers[0]; ++m)
      for (int mode = 0; mode < MODE_COUNT; ++mode) {
        if (res->solve_count == MAX_RESULTS)
          return 1;
        char text[192];
        sweep_options(smoothers[m].smoother, smoothers[m].steps, formats[f], (krylov_mode)mode,
                      text, sizeof text);
        solve_row *row = &res->solve[res->solve_count];
        memset(row, 0, sizeof *row);
        row->degree = 1;
        row->level = level;
        row->numbering = h->numbering;
        clmg_status status =
            measure_solve(context, s, h, text, (size_t)s->coarse_rows, copy_gb_per_s, row, NULL);
        if (status != CLMG_SUCCESS) {
          apputil_report(context, status, "sweep solve");
          return 0;
        }
        print_solve_row(row);
        if (row->converged && (!best || row->solve_s < best->solve_s))
          best = row;
        res->solve_count++;
      }
  if (!best)
    return 1;
  printf("fastest: %s %d+%d, %s, krylov %s: %.3f ms (%d iterations, %.2f x the floor per "
         "cycle)\n",
         best->smoother, best->pre, best->post, best->format, best->krylov, 1e3 * best->solve_s,
         best->iterations, best->ratio);
  printf("  options: %s\n", best->options);
  /* where its time goes: one more solve of it under the kernel profile */
  settings once = *s;
  once.timing.trials = 1;
  solve_row scratch;
  memset(&scratch, 0, sizeof scratch);
  res->profile.row = (size_t)(best - res->solve);
  clmg_status status = measure_solve(context, &once, h, best->options, (size_t)s->coarse_rows,
                                     copy_gb_per_s, &scratch, &res->profile);
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "profiled solve");
    return 0;
  }
  print_profile(&res->profile);
  return 1;
}

int main(int argc, char **argv) {
  settings s;
  const char *size = NULL;
  int parsed = parse_settings(argc, argv, &s, &size);
  if (parsed == 2) {
    print_usage(stdout);
    return 0;
  }
  if (parsed == 0)
    return 2;
  if (!perf_output_begin(PROGRAM, &s.output))
    return 1;
  clmg_context *context = apputil_open_context(s.device);
  if (!context)
    return 1;
  const clmg_device_info *device = clmg_context_device(context);
  perf_print_device(device);
  apply_size(&s, size, device);
  double copy_gb_per_s = 0;
  if (!perf_measure_copy_bandwidth(context, &copy_gb_per_s)) {
    clmg_context_destroy(context);
    return 1;
  }
  results *res = calloc(1, sizeof *res);
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  if (!res || clmg_mesh_circle(&coarse, &error) != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": cannot make the CIRCLE mesh: %s\n",
            res ? error.message : "no memory");
    free(res);
    clmg_context_destroy(context);
    return 1;
  }
  clmg_poisson_problem problem;
  clmg_poisson_problem_circle(&problem);
  int exit_code = s.setup && !run_setup_table(context, &s, &coarse, &problem, res) ? 1 : 0;
  clmg_fe_hierarchy sweep_hierarchy = {0};
  int sweep_level = 0;

  for (int q = 0; q < 2 && exit_code == 0; ++q) {
    int degree = q + 1;
    print_spmv_header();
    for (int level = s.levels[q][0]; level <= s.levels[q][1] && exit_code == 0; ++level)
      for (int k = 0; k < 5 && exit_code == 0; ++k) {
        if (!s.numbering_on[k] || res->spmv_count == MAX_RESULTS || res->solve_count == MAX_RESULTS)
          continue;
        clmg_fe_hierarchy h = {0};
        double start = apputil_now();
        clmg_status status = clmg_fe_poisson_hierarchy(&coarse, level, degree, &problem,
                                                       (clmg_numbering)k, 1, &h, &error);
        if (status != CLMG_SUCCESS) {
          fprintf(stderr, PROGRAM ": Q%d level %d: %s\n", degree, level, error.message);
          exit_code = 1;
          break;
        }
        spmv_row *row = &res->spmv[res->spmv_count];
        memset(row, 0, sizeof *row);
        row->degree = degree;
        row->level = level;
        row->numbering = (clmg_numbering)k;
        row->assembly_s = apputil_now() - start;
        status = measure_spmv(context, &s, &h.a[h.num_levels - 1], copy_gb_per_s, row);
        if (status == CLMG_SUCCESS) {
          print_spmv_row(row);
          res->spmv_count++;
          solve_row *srow = &res->solve[res->solve_count];
          memset(srow, 0, sizeof *srow);
          srow->degree = degree;
          srow->level = level;
          srow->numbering = (clmg_numbering)k;
          status = measure_solve(context, &s, &h, PAPER_OPTIONS, 0, copy_gb_per_s, srow, NULL);
          if (status == CLMG_SUCCESS)
            res->solve_count++;
        }
        if (status != CLMG_SUCCESS) {
          apputil_report(context, status, "measuring");
          exit_code = 1;
        }
        /* keep the largest Q1 2LV (or first numbering) hierarchy for the sweep */
        if (s.sweep && degree == 1 && level == s.levels[0][1] && sweep_level == 0) {
          sweep_hierarchy = h;
          sweep_level = level;
        } else {
          clmg_fe_hierarchy_free(&h);
        }
      }
    if (res->solve_count > 0) {
      print_solve_header("Table 3: multigrid solve of CIRCLE to 1e-8 (V-cycle, Jacobi 4+4, "
                         "omega 0.7), best of the trials");
      for (size_t k = 0; k < res->solve_count; ++k)
        if (res->solve[k].degree == degree)
          print_solve_row(&res->solve[k]);
    }
  }
  if (exit_code == 0 && sweep_level > 0 &&
      !run_sweep(context, &s, &sweep_hierarchy, sweep_level, copy_gb_per_s, res))
    exit_code = 1;
  clmg_fe_hierarchy_free(&sweep_hierarchy);
  const char *paths[2];
  for (size_t k = 0; k < perf_output_paths(&s.output, paths); ++k)
    if (!write_json(paths[k], res, device, copy_gb_per_s))
      exit_code = 1;
  clmg_mesh_free(&coarse);
  free(res->profile.kernels);
  free(res);
  clmg_context_destroy(context);
  return exit_code;
}
