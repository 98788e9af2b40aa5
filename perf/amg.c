/* clmg_perf_amg: the solvers of Fu et al. 2014 (section 6.2) on their
 * Helmholtz systems (P1, lambda 1, b = 1): CG, Jacobi-PCG and PCG with one
 * V-cycle of smoothed-aggregation AMG smoothed by Jacobi or by patch block
 * Jacobi, in double and with the AMG cycle in float (mixed). For each
 * matrix and solver: the setup (the AMG hierarchy, its Galerkin products on
 * the device when that is a GPU and on the host elsewhere, then the device
 * matrices, smoothers and coarse solver), the iterations and the
 * solve to a relative residual of 1e-8 (recomputed from x by the solver),
 * the time per iteration, and, for AMG, the levels and operator
 * complexity. Meshes: the Regular mesh (levels), an irregular distorted
 * box, and the two-material blobs mesh with sigma ratios 1, 10, 100; with
 * --spd-problems also the SPD test set of clmg/spd_problems.h (elasticity,
 * DG, Q2 jumps; scalar AMG: no block size or rigid-body modes). Classical
 * AMG (PMIS) with direct and with extended+i interpolation runs next to
 * smoothed aggregation, both with the default Chebyshev 3+3 smoothing. Every
 * solver is built through the options layer (clmg/solver.h); each row's
 * JSON echoes its options string.
 *
 * --write-mtx DIR writes every matrix and b as Matrix Market files for the
 * baselines on the same matrices: perf/pyamg_baseline.py (pyamg's smoothed
 * aggregation) and clmg_hypre_pcg (hypre's BoomerAMG-PCG, built when hypre
 * is found). Table on stdout; --output FILE writes the same as JSON, --json
 * prints it instead of the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "apputil.h"
#include "clmg.h"
#include "clmg/solver.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_amg"
#define MAX_ROWS 256

typedef struct settings {
  const char *device, *mtx_dir;
  perf_output output;
  int regular_min, regular_max, blobs_level, irregular_n;
  int run_double, run_mixed;
  int profile;      /* --profile N: the N kernels of most device time in an AMG setup */
  int spd_size;     /* --spd-problems: -1 none, 0 small, 1 medium, 2 large */
  unsigned solvers; /* --solvers: a bit per solver_kind */
} settings;

typedef enum solver_kind {
  SOLVER_CG,
  SOLVER_JACOBI,
  SOLVER_AMG_JACOBI,
  SOLVER_AMG_PATCH,
  SOLVER_CLASSICAL_DIRECT,
  SOLVER_CLASSICAL_EXTENDED_I,
  SOLVER_COUNT
} solver_kind;
static const char *const solver_names[] = {"cg",        "jacobi-pcg",       "amg-jacobi",
                                           "amg-patch", "classical-direct", "classical-ext+i"};

typedef struct result_row {
  char matrix[48];
  size_t rows, nonzeros;
  solver_kind solver;
  int mixed, converged, iterations, levels;
  double operator_complexity, setup_s, solve_s, relative_residual;
  char phases[1024];       /* AMG: where setup_s went (the view's "amg_setup", JSON) */
  char solver_phases[512]; /* the solver's phases around it (the view's "solver_setup") */
  char options[160];       /* the options string that builds the solver */
  double floor_s, ratio;   /* per iteration: the bandwidth floor and the time's ratio to it */
} result_row;

static void print_usage(FILE *out) {
  fputs("Usage: " PROGRAM " [OPTIONS]\n"
        "\n"
        "CG, Jacobi-PCG and AMG-PCG (smoothed aggregation with Jacobi or patch block-Jacobi\n"
        "smoothing, Fu et al. 2014) on P1 Helmholtz systems (lambda 1, b = 1) to a relative\n"
        "residual of 1e-8: setup, iterations, solve time, per matrix and solver.\n"
        "Each iteration's time is also given against its floor ('x floor'): the bytes\n"
        "a CG iteration with that preconditioner must move, at the copy bandwidth\n"
        "measured on the same device in the same run.\n"
        "\n"
        "Options:\n"
        "  --device DEV          device string (default: CLMG_DEVICE, else the first GPU)\n"
        "  --regular-levels A:B  Fu et al.'s Regular mesh, levels A to B (0..4; level 3:\n"
        "                        274,625 nodes); default 1:3 on a GPU, 1:2 elsewhere\n"
        "  --blobs-level L       the blobs mesh at level L with sigma ratios 1, 10, 100\n"
        "                        (default 3 on a GPU, 2 elsewhere; -1: none)\n"
        "  --irregular-n N       a distorted box of 6 N^3 tetrahedra (default 24; 0: none)\n"
        "  --precisions LIST     double,mixed (default both; mixed: the AMG cycle in float\n"
        "                        inside double CG)\n"
        "  --solvers LIST        comma-separated, of cg, jacobi-pcg, amg-jacobi, amg-patch,\n"
        "                        classical-direct, classical-ext+i (default: all)\n"
        "  --spd-problems SIZE   also the SPD test set (clmg/spd_problems.h) at small\n"
        "                        (about 10^3 rows), medium (10^4) or large (10^5), as\n"
        "                        perf/amg_testset.py sizes it; scalar AMG there\n"
        "                        (default none)\n"
        "  --profile N           after each AMG setup, a second one under the kernel\n"
        "                        profile: its N kernels of most device time, and their\n"
        "                        sum against the setup's wall time (the rest is the host\n"
        "                        and waiting); not part of the measured setup\n"
        "  --write-mtx DIR       write each A and b as Matrix Market files (A-NAME.mtx,\n"
        "                        b-NAME.mtx) for perf/pyamg_baseline.py and clmg_hypre_pcg\n",
        out);
  perf_output_help(out, 24);
  fputs("  -h, --help            this text\n", out);
}

static int parse_settings(int argc, char **argv, settings *s, int *levels_given, int *blobs_given) {
  memset(s, 0, sizeof *s);
  s->regular_min = 1;
  s->regular_max = 3;
  s->blobs_level = 3;
  s->irregular_n = 24;
  s->run_double = s->run_mixed = 1;
  s->spd_size = -1;
  s->solvers = (1u << SOLVER_COUNT) - 1;
  static const char *const value_options[] = {"--device",
                                              "--output",
                                              "--regular-levels",
                                              "--blobs-level",
                                              "--irregular-n",
                                              "--precisions",
                                              "--write-mtx",
                                              "--profile",
                                              "--solvers",
                                              "--spd-problems",
                                              NULL};
  for (int i = 1; i < argc; ++i) {
    char name[32];
    const char *value = NULL;
    int read = perf_next_option(PROGRAM, argc, argv, &i, value_options, name, &value);
    if (read < 0)
      return 2;
    if (read == 0)
      return 0;
    char extra;
    long long integer = 0;
    if (strcmp(name, "--device") == 0) {
      s->device = value;
    } else if (perf_parse_output_option(name, value, &s->output) == 1) {
    } else if (strcmp(name, "--write-mtx") == 0) {
      s->mtx_dir = value;
    } else if (strcmp(name, "--regular-levels") == 0) {
      if (sscanf(value, "%d:%d%c", &s->regular_min, &s->regular_max, &extra) != 2 ||
          s->regular_min < 0 || s->regular_max > 4) {
        fprintf(stderr, PROGRAM ": --regular-levels wants A:B within 0..4, not %s\n", value);
        return 0;
      }
      *levels_given = 1;
    } else if (strcmp(name, "--blobs-level") == 0) {
      if (!perf_parse_integer(PROGRAM, name, value, -1, 5, &integer))
        return 0;
      s->blobs_level = (int)integer;
      *blobs_given = 1;
    } else if (strcmp(name, "--irregular-n") == 0) {
      if (!perf_parse_integer(PROGRAM, name, value, 0, 200, &integer))
        return 0;
      s->irregular_n = (int)integer;
    } else if (strcmp(name, "--profile") == 0) {
      if (!perf_parse_integer(PROGRAM, name, value, 0, 100, &integer))
        return 0;
      s->profile = (int)integer;
    } else if (strcmp(name, "--solvers") == 0) {
      s->solvers = 0;
      char list[256];
      snprintf(list, sizeof list, "%s", value);
      for (char *word = strtok(list, ","); word; word = strtok(NULL, ",")) {
        int found = -1;
        for (int k = 0; k < SOLVER_COUNT; ++k)
          if (strcmp(word, solver_names[k]) == 0)
            found = k;
        if (found < 0) {
          fprintf(stderr, PROGRAM ": --solvers: unknown solver '%s'\n", word);
          return 0;
        }
        s->solvers |= 1u << found;
      }
    } else if (strcmp(name, "--spd-problems") == 0) {
      static const char *const sizes[] = {"none", "small", "medium", "large"};
      s->spd_size = -2;
      for (int k = 0; k < 4; ++k)
        if (strcmp(value, sizes[k]) == 0)
          s->spd_size = k - 1;
      if (s->spd_size == -2) {
        fprintf(stderr, PROGRAM ": --spd-problems wants none, small, medium or large, not %s\n",
                value);
        return 0;
      }
    } else if (strcmp(name, "--precisions") == 0) {
      s->run_double = strstr(value, "double") != NULL;
      s->run_mixed = strstr(value, "mixed") != NULL;
      if (!s->run_double && !s->run_mixed) {
        fprintf(stderr, PROGRAM ": --precisions wants double, mixed or both, not %s\n", value);
        return 0;
      }
    }
  }
  return 1;
}

/* A second AMG setup like the one of mg (its options: Jacobi, or patches
 * where mg smooths with them) under the kernel profile: the `top` kernels
 * of most device time on stdout, and all kernels' sum against the wall
 * time. */
static clmg_status profile_setup(clmg_context *context, const clmg_csr *a, const clmg_multigrid *mg,
                                 int top) {
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  int finest = clmg_multigrid_levels(mg) - 1;
  int patches = strcmp(clmg_multigrid_smoother_name(mg, finest), "patch-jacobi") == 0;
  clmg_amg_patch_smoothing smoothing = {0};
  clmg_multigrid *again = NULL;
  clmg_kernel_time *times = NULL;
  size_t count = 0;
  clmg_status status = clmg_profile_start(context);
  double start = apputil_now();
  if (status == CLMG_SUCCESS)
    status =
        clmg_amg_multigrid_create(context, a, NULL, &options, patches ? &smoothing : NULL, &again);
  clmg_status stopped = clmg_profile_stop(context, &times, &count);
  double wall = apputil_now() - start;
  if (status == CLMG_SUCCESS)
    status = stopped;
  double sum = 0;
  for (size_t k = 0; k < count; k++)
    sum += times[k].seconds;
  if (status == CLMG_SUCCESS) {
    printf("  profiled setup: %.4f s wall, %.4f s in %zu kernels' launches by name and size\n",
           wall, sum, count);
    for (size_t k = 0; k < count && k < (size_t)top; k++)
      printf("  %10.4f s %7llu x %-28s %llu items\n", times[k].seconds,
             (unsigned long long)times[k].launches, times[k].name,
             (unsigned long long)times[k].work_items);
  }
  free(times);
  clmg_multigrid_destroy(again);
  return status;
}

/* The options string (clmg/solver.h) of a solver of the table: what
 * `clmg solve A.mtx --set "..."` takes to build the same one. */
static void solver_options(solver_kind solver, int mixed, char *text, size_t size) {
  static const char *const preconditioners[] = {
      "precond=none",
      "precond=jacobi",
      "precond=amg mg.smoother=jacobi mg.steps=2",
      "precond=amg mg.smoother=patch mg.steps=2 mg.inner=3",
      "precond=amg amg.coarsening=classical amg.interpolation=direct",
      "precond=amg amg.coarsening=classical amg.interpolation=extended+i"};
  snprintf(text, size, "krylov=cg %s precision=%s tol=1e-8 maxit=5000", preconditioners[solver],
           mixed ? "mixed" : "double");
}

/* The "amg_setup" object of the solver's view (the setup's phases) and its
 * "solver_setup" (the solver's phases around it) as JSON text into the row;
 * empty without them. */
static clmg_status setup_phases(const clmg_solver *solver, result_row *row) {
  char *view = clmg_solver_view_json(solver);
  if (!view) {
    fprintf(stderr, PROGRAM ": no host memory for the solver's view\n");
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  cJSON *parsed = cJSON_Parse(view);
  char *phases = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(parsed, "amg_setup"));
  snprintf(row->phases, sizeof row->phases, "%s", phases ? phases : "");
  cJSON_free(phases);
  phases = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(parsed, "solver_setup"));
  snprintf(row->solver_phases, sizeof row->solver_phases, "%s", phases ? phases : "");
  cJSON_free(phases);
  cJSON_Delete(parsed);
  free(view);
  return CLMG_SUCCESS;
}

/* One solve of A x = b (x from 0) with `solver`, built through the options
 * layer (clmg_solver_create_device around the device matrix, which is made
 * before the setup's clock starts); the row gets what it measured. The
 * setup is clmg_solver_create's: the preconditioner (for mixed, its float
 * matrix) and one iteration on scratch vectors that readies the solve's
 * kernels. */
static clmg_status measure(clmg_context *context, const clmg_csr *a, const double *b,
                           solver_kind solver, int mixed, double copy_gb_per_s, int profile,
                           result_row *row) {
  size_t n = a->rows;
  clmg_matrix *matrix = NULL;
  clmg_options *options = NULL;
  clmg_solver *composed = NULL;
  clmg_vector *db = NULL, *dx = NULL;
  clmg_error error = {{0}};
  solver_options(solver, mixed, row->options, sizeof row->options);
  clmg_status status = perf_options_parse(row->options, &options, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": %s: %s\n", row->options, error.message);
    return status;
  }
  status = clmg_matrix_create(context, a, NULL, &matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, n, &db);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, n, &dx);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(db, b);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  double start = apputil_now();
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_device(context, matrix, NULL, a, 1, options, &composed);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  row->setup_s = apputil_now() - start;
  clmg_multigrid *mg = composed ? clmg_solver_multigrid(composed) : NULL;
  if (status == CLMG_SUCCESS && mg) {
    size_t total = 0;
    row->levels = clmg_multigrid_levels(mg);
    for (int l = 0; l < row->levels; ++l)
      total += clmg_matrix_nnz(clmg_multigrid_matrix(mg, l));
    row->operator_complexity = (double)total / (double)clmg_csr_nnz(a);
    status = setup_phases(composed, row);
  }
  if (status == CLMG_SUCCESS && profile > 0 && mg)
    status = profile_setup(context, a, mg, profile);
  clmg_krylov_result result = {0};
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(dx, 0.0);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  if (status == CLMG_SUCCESS) {
    start = apputil_now();
    clmg_status solved = clmg_solver_solve(composed, db, dx, &result);
    clmg_finish(context);
    row->solve_s = apputil_now() - start;
    row->iterations = result.iterations;
    row->relative_residual = result.relative_residual;
    row->converged = solved == CLMG_SUCCESS;
    /* a breakdown (Jacobi-smoothed aggregation on nearly incompressible
     * elasticity, say) is a row that did not converge, named on stderr */
    if (solved != CLMG_SUCCESS && solved != CLMG_ERROR_NOT_CONVERGED)
      fprintf(stderr, PROGRAM ": %s, %s: %s %s\n", row->matrix, solver_names[solver],
              clmg_status_string(solved), clmg_context_message(context));
    status = CLMG_SUCCESS;
    /* the preconditioner's bytes: AMG one cycle from a zero guess */
    double preconditioner_bytes = solver == SOLVER_CG       ? 0.0
                                  : solver == SOLVER_JACOBI ? perf_jacobi_bytes(n, mixed)
                                                            : clmg_multigrid_cycle_bytes(mg, 1);
    double bytes = perf_cg_iteration_bytes(matrix, preconditioner_bytes, mixed);
    row->floor_s = bytes / (copy_gb_per_s * 1e9);
    row->ratio =
        row->iterations > 0 && row->floor_s > 0 ? row->solve_s / row->iterations / row->floor_s : 0;
  }
  clmg_krylov_result_free(&result);
  clmg_solver_destroy(composed);
  clmg_options_destroy(options);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_matrix_destroy(matrix);
  return status;
}

static void print_header(void) {
  printf("%-22s %9s %10s %-16s %-6s %6s %6s %9s %6s %9s %10s %9s %7s %9s\n", "matrix", "rows",
         "nonzeros", "solver", "prec", "levels", "op.cx", "setup s", "its", "solve s", "per it ms",
         "floor ms", "x floor", "residual");
}

static void print_row(const result_row *r) {
  printf("%-22s %9zu %10zu %-16s %-6s %6d %6.2f %9.4f %6d %9.4f %10.3f %9.3f %7.2f %9.2e%s\n",
         r->matrix, r->rows, r->nonzeros, solver_names[r->solver], r->mixed ? "mixed" : "double",
         r->levels, r->operator_complexity, r->setup_s, r->iterations, r->solve_s,
         r->iterations ? 1e3 * r->solve_s / r->iterations : 0.0, 1e3 * r->floor_s, r->ratio,
         r->relative_residual, r->converged ? "" : "  NOT CONVERGED");
  fflush(stdout);
}

static int run_system(clmg_context *context, const settings *s, const clmg_csr *a, const double *b,
                      const char *name, int warm_up, double copy_gb_per_s, result_row *rows,
                      size_t *count);

/* Assembles the Helmholtz system on mesh (sigma per material id 1, 2:
 * 1, ratio) and runs run_system on it. */
static int run_matrix(clmg_context *context, const settings *s, const clmg_mesh *mesh,
                      const char *name, double ratio, int warm_up, double copy_gb_per_s,
                      result_row *rows, size_t *count) {
  clmg_helmholtz_problem problem;
  clmg_helmholtz_problem_defaults(&problem);
  problem.rhs = CLMG_RHS_ONES;
  const int32_t ids[2] = {1, 2};
  const double sigma[2] = {1.0, ratio};
  if (mesh->cell_material) {
    problem.material_ids = ids;
    problem.sigma = sigma;
    problem.num_materials = 2;
  }
  clmg_csr a = {0};
  clmg_error error = {{0}};
  double *b = malloc(mesh->num_vertices * sizeof *b);
  if (!b || clmg_p1_assemble_host(mesh, &problem, &a, b, &error) != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": %s: %s\n", name, b ? error.message : "no memory");
    free(b);
    return 0;
  }
  int ok = run_system(context, s, &a, b, name, warm_up, copy_gb_per_s, rows, count);
  free(b);
  clmg_csr_free(&a);
  return ok;
}

/* Writes A x = b with --write-mtx and runs every solver on it; a warm-up
 * run (compiling every kernel, so that no setup time holds a compilation)
 * records nothing. */
static int run_system(clmg_context *context, const settings *s, const clmg_csr *a, const double *b,
                      const char *name, int warm_up, double copy_gb_per_s, result_row *rows,
                      size_t *count) {
  clmg_error error = {{0}};
  if (s->mtx_dir && !warm_up) {
    char path[1024];
    snprintf(path, sizeof path, "%s/A-%s.mtx", s->mtx_dir, name);
    clmg_status status = clmg_csr_write_matrix_market(path, a, &error);
    snprintf(path, sizeof path, "%s/b-%s.mtx", s->mtx_dir, name);
    if (status == CLMG_SUCCESS)
      status = clmg_write_matrix_market_vector(path, b, a->rows, &error);
    if (status != CLMG_SUCCESS)
      fprintf(stderr, PROGRAM ": writing %s: %s\n", path, error.message);
  }
  int ok = 1;
  for (int solver = SOLVER_CG; solver < SOLVER_COUNT && ok; ++solver)
    for (int mixed = 0; mixed <= 1 && ok; ++mixed) {
      if ((mixed && !s->run_mixed) || (!mixed && !s->run_double) ||
          (mixed && solver == SOLVER_CG) || !(s->solvers & (1u << solver)))
        continue;
      if (*count == MAX_ROWS)
        break;
      result_row *row = &rows[*count];
      memset(row, 0, sizeof *row);
      snprintf(row->matrix, sizeof row->matrix, "%s", name);
      row->rows = a->rows;
      row->nonzeros = clmg_csr_nnz(a);
      row->solver = (solver_kind)solver;
      row->mixed = mixed;
      /* an AMG setup is timed the second time on each matrix: the first
       * loads the kernels that only this matrix's levels need (the formats
       * its coarse levels choose), which the warm-up may have missed */
      clmg_status status = CLMG_SUCCESS;
      if (!warm_up && solver >= SOLVER_AMG_JACOBI)
        status = measure(context, a, b, (solver_kind)solver, mixed, copy_gb_per_s, 0, row);
      if (status == CLMG_SUCCESS)
        status = measure(context, a, b, (solver_kind)solver, mixed, copy_gb_per_s,
                         warm_up ? 0 : s->profile, row);
      if (status != CLMG_SUCCESS) {
        apputil_report(context, status, name);
        ok = 0;
      } else if (!warm_up) {
        print_row(row);
        (*count)++;
      }
    }
  return ok;
}

/* The SPD test set at a size (perf/amg_testset.py's levels), each problem
 * through run_system. */
static int run_spd_problems(clmg_context *context, const settings *s, double copy_gb_per_s,
                            result_row *rows, size_t *count) {
  static const struct {
    clmg_spd_problem_kind kind;
    int levels[3];
    double poisson_ratio;
    const char *name;
  } set[] = {
      {CLMG_SPD_ELASTICITY_P1, {6, 16, 32}, 0, "elasticity-p1"},
      {CLMG_SPD_ELASTICITY_P1, {6, 16, 32}, 0.45, "elasticity-p1-nu0.45"},
      {CLMG_SPD_ELASTICITY_P2, {3, 8, 16}, 0, "elasticity-p2"},
      {CLMG_SPD_DG_DIFFUSION, {16, 64, 128}, 0, "dg-diffusion"},
      {CLMG_SPD_Q2_JUMP, {4, 12, 24}, 0, "q2-jump"},
  };
  int ok = 1;
  for (size_t k = 0; ok && k < sizeof set / sizeof set[0]; ++k) {
    clmg_spd_problem_options o;
    clmg_spd_problem_options_defaults(&o);
    o.kind = set[k].kind;
    o.level = set[k].levels[s->spd_size];
    if (set[k].poisson_ratio > 0)
      o.poisson_ratio = set[k].poisson_ratio;
    clmg_spd_problem p = {0};
    clmg_error error = {{0}};
    char name[48];
    snprintf(name, sizeof name, "%s-%d", set[k].name, o.level);
    ok = clmg_spd_problem_create(&o, &p, &error) == CLMG_SUCCESS;
    if (ok)
      ok = run_system(context, s, &p.a, p.b, name, 0, copy_gb_per_s, rows, count);
    else
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    clmg_spd_problem_free(&p);
  }
  return ok;
}

static int write_json(const char *path, const result_row *rows, size_t count,
                      const clmg_device_info *device, double copy_gb_per_s) {
  clmg_output_file *file;
  FILE *out = perf_json_open(PROGRAM, path, &file);
  if (!out)
    return 0;
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "amg");
  json_string(&w, "problem", "P1 Helmholtz, lambda 1, b = 1, relative residual 1e-8");
  json_device(&w, device);
  json_number(&w, "copy_gb_per_s", copy_gb_per_s);
  json_array_begin(&w, "results");
  for (size_t k = 0; k < count; ++k) {
    const result_row *r = &rows[k];
    json_object_begin(&w, NULL);
    json_string(&w, "matrix", r->matrix);
    json_integer(&w, "rows", (long long)r->rows);
    json_integer(&w, "nonzeros", (long long)r->nonzeros);
    json_string(&w, "solver", solver_names[r->solver]);
    json_string(&w, "precision", r->mixed ? "mixed" : "double");
    json_string(&w, "options", r->options);
    json_integer(&w, "levels", r->levels);
    json_number(&w, "operator_complexity", r->operator_complexity);
    json_number(&w, "setup_s", r->setup_s);
    if (r->phases[0])
      json_raw(&w, "setup_phases", r->phases);
    if (r->solver_phases[0])
      json_raw(&w, "solver_setup_phases", r->solver_phases);
    json_integer(&w, "iterations", r->iterations);
    json_number(&w, "solve_s", r->solve_s);
    json_number(&w, "relative_residual", r->relative_residual);
    json_number(&w, "floor_s", r->floor_s);
    json_number(&w, "ratio_to_floor", r->ratio);
    json_bool(&w, "converged", r->converged);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_object_end(&w);
  json_end(&w);
  return perf_json_close(PROGRAM, file);
}

int main(int argc, char **argv) {
  settings s;
  int levels_given = 0, blobs_given = 0;
  int parsed = parse_settings(argc, argv, &s, &levels_given, &blobs_given);
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
  if (!device->is_gpu && !levels_given)
    s.regular_max = 2;
  if (!device->is_gpu && !blobs_given)
    s.blobs_level = 2;
  double copy_gb_per_s = 0;
  if (!perf_measure_copy_bandwidth(context, &copy_gb_per_s)) {
    clmg_context_destroy(context);
    return 1;
  }
  printf("P1 Helmholtz (Fu et al. 2014): lambda 1, b = 1, CG to ||r|| <= 1e-8 ||b||; AMG: "
         "smoothed aggregation, V-cycle, 2+2 smoothing steps (patch: 3 inner iterations); "
         "classical: PMIS, direct or extended+i interpolation (at most 4 entries a row of P), "
         "Chebyshev 3+3\n\n");
  result_row *rows = calloc(MAX_ROWS, sizeof *rows);
  size_t count = 0;
  int ok = rows != NULL;
  clmg_error error = {{0}};
  if (ok) { /* the warm-up: every solver once on the smallest Regular mesh */
    clmg_mesh mesh = {0};
    ok = clmg_mesh_regular_tetrahedra(0, &mesh, &error) == CLMG_SUCCESS &&
         run_matrix(context, &s, &mesh, "warm-up", 1.0, 1, copy_gb_per_s, rows, &count);
    clmg_mesh_free(&mesh);
  }
  print_header();
  for (int level = s.regular_min; ok && level <= s.regular_max; ++level) {
    clmg_mesh mesh = {0};
    char name[48];
    snprintf(name, sizeof name, "regular-%d", level);
    ok = clmg_mesh_regular_tetrahedra(level, &mesh, &error) == CLMG_SUCCESS;
    if (ok)
      ok = run_matrix(context, &s, &mesh, name, 1.0, 0, copy_gb_per_s, rows, &count);
    else
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    clmg_mesh_free(&mesh);
  }
  if (ok && s.irregular_n > 0) {
    clmg_mesh mesh = {0};
    char name[48];
    snprintf(name, sizeof name, "irregular-%d", s.irregular_n);
    ok = clmg_mesh_box_simplices(3, s.irregular_n, 0.2, 2014, &mesh, &error) == CLMG_SUCCESS;
    if (ok)
      ok = run_matrix(context, &s, &mesh, name, 1.0, 0, copy_gb_per_s, rows, &count);
    else
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    clmg_mesh_free(&mesh);
  }
  const double ratios[3] = {1, 10, 100};
  for (int k = 0; ok && s.blobs_level >= 0 && k < 3; ++k) {
    clmg_mesh mesh = {0};
    char name[48];
    snprintf(name, sizeof name, "blobs-%d-sigma-%g", s.blobs_level, ratios[k]);
    ok = clmg_mesh_blobs(3, s.blobs_level, &mesh, &error) == CLMG_SUCCESS;
    if (ok)
      ok = run_matrix(context, &s, &mesh, name, ratios[k], 0, copy_gb_per_s, rows, &count);
    else
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    clmg_mesh_free(&mesh);
  }
  if (ok && s.spd_size >= 0)
    ok = run_spd_problems(context, &s, copy_gb_per_s, rows, &count);
  const char *paths[2];
  for (size_t k = 0; rows && k < perf_output_paths(&s.output, paths); ++k)
    if (!write_json(paths[k], rows, count, device, copy_gb_per_s))
      ok = 0;
  free(rows);
  clmg_context_destroy(context);
  return ok ? 0 : 1;
}
