/* clmg_perf_flow: the Vanka multigrid of Bauer, Klement, Oberhuber and
 * Zabka ("Implementation of the Vanka-type multigrid solver for the finite
 * element approximation of the Navier-Stokes equations on GPU") on an Oseen
 * step of the lid-driven cavity (Re 1000, the wind a Stokes-like vortex):
 * per level, the time of one Vanka sweep with stored inverses (SI) and
 * recomputed ones (NSI, the paper's Table 3), their bytes and ratio to the
 * copy bandwidth measured in the same run, the F(2,2)-cycle and the GMRES
 * solve to 1e-8 of the finest system (iterations, time, unknowns per
 * second per cycle), the device time of a cycle by part (smoother,
 * residuals and transfers, coarse solve, vector operations: the paper's
 * Table 1), the host parts of a step (assembly, multigrid setup) and the
 * rate per V-, variable V- and F-cycle as levels are added. Run it on the GPU and on pocl
 * to compare devices (the paper's Table 2); the per-level sweep times give its Table 4. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_common.h"

#define PROGRAM "clmg_perf_flow"

typedef struct settings {
  const char *device;
  perf_output output;
  int min_level, max_level;
  perf_timing timing;
} settings;

typedef struct level_row {
  int level;
  size_t triangles, unknowns, colours[2];
  double si_s, nsi_s, si_bytes, nsi_bytes;
} level_row;

/* The paper's Table 1: where a cycle's device time goes. */
enum { PART_SMOOTHER, PART_SPMV, PART_COARSE, PART_VECTOR, PARTS };
static const char *const part_names[PARTS] = {"smoother", "residual+transfers", "coarse solve",
                                              "vector ops"};

/* Cycles whose rate per cycle is measured as levels are added: the plain
 * V-cycle, the variable V-cycle (smoothing doubled per coarser level) and
 * the F-cycle, each with 2 + 2 Vanka steps on the finest level. */
enum { RATE_CASES = 3, RATE_MAX_CYCLES = 100 };
static const struct {
  const char *name;
  clmg_cycle_type cycle;
  double growth;
} rate_cases[RATE_CASES] = {
    {"V", CLMG_CYCLE_V, 1.0}, {"variable V", CLMG_CYCLE_V, 2.0}, {"F", CLMG_CYCLE_F, 1.0}};

typedef struct finest_row {
  double part_s[PARTS];        /* device seconds per cycle, by part */
  int rate_cycles[RATE_CASES]; /* cycles to 1e-8 from x = 0 (RATE_MAX_CYCLES at most) */
  double rate[RATE_CASES];     /* geometric mean of the residual reduction per cycle */
  int rate_converged[RATE_CASES];
  int level;
  size_t unknowns;
  double assemble_s, setup_s, cycle_s, cycle_bytes, solve_s;
  double device_assemble_s, device_assemble_bytes; /* clmg_stokes_assembler_update, all levels */
  int gmres_iterations;
  double relative_residual;
} finest_row;

static void usage(FILE *out) {
  fputs("Usage: " PROGRAM " [OPTIONS]\n"
        "\n"
        "The Vanka multigrid of Bauer et al. 2016 on an Oseen step of the lid-driven\n"
        "cavity (Re 1000): per level a Vanka sweep with stored (SI) and recomputed (NSI)\n"
        "local inverses against its bandwidth floor (copy bandwidth of this device,\n"
        "measured in the same run); on the finest level the F(2,2)-cycle and the GMRES\n"
        "solve to 1e-8, and the host's assembly and multigrid setup.\n"
        "\n"
        "Options:\n"
        "  --device DEV      device string (default: CLMG_DEVICE, else the first GPU)\n"
        "  --levels A:B      refinements of the 4 x 4 cavity mesh, finest levels A to B\n"
        "                    (default 3:7 on a GPU, 3:5 elsewhere; level 7: 2.1M unknowns)\n"
        "  --min-time S      adaptive timing: each measurement lasts at least S seconds\n"
        "  --reps N          exactly N repetitions per measurement\n"
        "  --trials N        timed batches per measurement; the fastest counts\n",
        out);
  perf_output_help(out, 20);
  fputs("  -h, --help        this text\n", out);
}

/* A vortex, for the Oseen wind. */
static void lid(const double *x, int32_t tag, double *u, void *data) {
  (void)x;
  (void)data;
  u[0] = tag == CLMG_CAVITY_LID ? 1.0 : 0.0;
  u[1] = 0.0;
}

/* The multigrid with rate case k as a solver from x = 0 to a relative
 * residual of 1e-8: its cycles and mean rate per cycle. */
static clmg_status measure_rate(clmg_context *context, const clmg_stokes_hierarchy *h, int k,
                                const clmg_vector *b, clmg_vector *x, finest_row *f) {
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.cycle = rate_cases[k].cycle;
  options.smoothing_growth = rate_cases[k].growth;
  options.pre_smoothing = options.post_smoothing = 2;
  clmg_multigrid *mg = NULL;
  clmg_status status = clmg_stokes_multigrid_create(context, h, NULL, &options, &mg);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(x, 0.0);
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = 1e-8;
  krylov.max_iterations = RATE_MAX_CYCLES;
  clmg_krylov_result result = {0};
  if (status == CLMG_SUCCESS) {
    status = clmg_multigrid_solve(mg, b, x, &krylov, &result);
    if (status == CLMG_ERROR_NOT_CONVERGED) /* a result: the rate says how far it got */
      status = CLMG_SUCCESS;
  }
  if (status == CLMG_SUCCESS) {
    f->rate_cycles[k] = result.iterations;
    f->rate_converged[k] = result.converged;
    f->rate[k] =
        result.iterations > 0 ? pow(result.relative_residual, 1.0 / result.iterations) : 0.0;
  }
  clmg_krylov_result_free(&result);
  clmg_multigrid_destroy(mg);
  return status;
}

typedef struct assembly_operands {
  clmg_stokes_assembler *assembler;
  const clmg_vector *wind, *previous;
} assembly_operands;

static clmg_status one_assembly(const void *data, long iteration) {
  (void)iteration;
  const assembly_operands *a = data;
  return clmg_stokes_assembler_update(a->assembler, a->wind, a->previous);
}

/* The step's systems on the device (every level, wind and time term) for
 * the hierarchy built without wind: its time and bytes. */
static clmg_status time_device_assembly(clmg_context *context, const settings *s,
                                        const clmg_stokes_hierarchy *h,
                                        const clmg_stokes_problem *problem, const double *wind,
                                        finest_row *f) {
  const size_t velocities = 2 * h->edges[h->num_levels - 1].num_edges;
  clmg_stokes_assembler *assembler = NULL;
  clmg_vector *d_wind = NULL;
  clmg_status status = clmg_stokes_assembler_create(context, h, problem, &assembler);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, velocities, &d_wind);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(d_wind, wind);
  if (status == CLMG_SUCCESS) {
    /* the wind also stands for the previous velocity: the same bytes */
    assembly_operands operands = {assembler, d_wind, d_wind};
    long reps = 0;
    perf_timing timing = s->timing;
    status =
        perf_time_adaptive(context, &timing, one_assembly, &operands, &reps, &f->device_assemble_s);
    f->device_assemble_bytes = clmg_stokes_assembler_bytes(assembler, 1, 1);
  }
  clmg_vector_destroy(d_wind);
  clmg_stokes_assembler_destroy(assembler);
  return status;
}

/* One Vanka sweep on hierarchy level l, SI or NSI: time and bytes. */
static clmg_status time_sweep(clmg_context *context, const settings *s,
                              const clmg_stokes_hierarchy *h, int l, int stored, double *seconds,
                              double *bytes, size_t *colours) {
  clmg_vanka_options vanka;
  clmg_vanka_options_defaults(&vanka);
  vanka.store_inverses = stored;
  const clmg_csr *a = &h->a[l];
  clmg_matrix *matrix = NULL;
  clmg_operator op = {0};
  clmg_smoother smoother = {0};
  clmg_vector *b = NULL, *x = NULL;
  clmg_status status = clmg_matrix_create(context, a, NULL, &matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_from_matrix(matrix, 1, &op);
  else
    clmg_matrix_destroy(matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_smoother_vanka(context, a, h->meshes[l].num_cells, 7, h->cell_unknowns[l], &vanka,
                                 &smoother);
  if (status == CLMG_SUCCESS)
    status = smoother.setup(smoother.data, &op);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, a->rows, &b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, a->rows, &x);
  if (status == CLMG_SUCCESS && l == h->num_levels - 1)
    status = clmg_vector_upload_doubles(b, h->b);
  else if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(b, 1.0);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(x, 0.0);
  if (status == CLMG_SUCCESS) {
    perf_sweep_operands operands = {&smoother, &op, b, x};
    long reps = 0;
    status = perf_time_adaptive(context, &s->timing, perf_run_sweep, &operands, &reps, seconds);
    *bytes = smoother.bytes(smoother.data, &op, 1, 0);
  }
  if (status == CLMG_SUCCESS) {
    int32_t *colour = malloc(h->meshes[l].num_cells * sizeof *colour);
    int count = 0;
    clmg_error error = {{0}};
    if (colour && clmg_vanka_colour_cells(a->rows, h->meshes[l].num_cells, 7, h->cell_unknowns[l],
                                          colour, &count, &error) == CLMG_SUCCESS)
      *colours = (size_t)count;
    free(colour);
  }
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  return status;
}

static int parse(int argc, char **argv, settings *s, int is_gpu_default) {
  s->min_level = 3;
  s->max_level = is_gpu_default ? 7 : 5;
  s->timing = (perf_timing){0, 0.2, 3, 1000000};
  static const char *const options[] = {"--device", "--levels", "--min-time", "--reps",
                                        "--trials", "--output", NULL};
  for (int i = 1; i < argc; ++i) {
    char name[32];
    const char *value = NULL;
    int got = perf_next_option(PROGRAM, argc, argv, &i, options, name, &value);
    if (got < 0) {
      usage(stdout);
      exit(0);
    }
    if (got == 0)
      return 0;
    if (strcmp(name, "--device") == 0) {
      s->device = value;
    } else if (perf_parse_output_option(name, value, &s->output) == 1) {
    } else if (strcmp(name, "--levels") == 0) {
      if (sscanf(value, "%d:%d", &s->min_level, &s->max_level) != 2 || s->min_level < 0 ||
          s->max_level < s->min_level || s->max_level > 9) {
        fprintf(stderr, PROGRAM ": --levels needs A:B with 0 <= A <= B <= 9, not '%s'\n", value);
        return 0;
      }
    } else if (perf_parse_timing_option(PROGRAM, name, value, &s->timing) != 1) {
      return 0;
    }
  }
  return 1;
}

int main(int argc, char **argv) {
  settings s = {0};
  /* the device first: its kind sets the default sizes */
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--device") == 0)
      s.device = argv[i + 1];
  clmg_context *context = apputil_open_context(s.device);
  if (!context)
    return 1;
  const clmg_device_info *device = clmg_context_device(context);
  if (!parse(argc, argv, &s, device->is_gpu)) {
    clmg_context_destroy(context);
    return 2;
  }
  if (!perf_output_begin(PROGRAM, &s.output)) {
    clmg_context_destroy(context);
    return 1;
  }
  perf_print_device(device);
  double copy_gb_s = NAN;
  if (!perf_measure_copy_bandwidth(context, &copy_gb_s)) {
    clmg_context_destroy(context);
    return 1;
  }
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  if (clmg_mesh_cavity(4, &coarse, &error) != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": %s\n", error.message);
    return 1;
  }
  level_row *levels = calloc(16, sizeof *levels);
  finest_row *finest = calloc(16, sizeof *finest);
  size_t level_count = 0, finest_count = 0;
  int ok = levels && finest;
  clmg_status status = CLMG_SUCCESS;
  printf("Oseen step of the cavity (Re 1000), Crouzeix-Raviart P1nc/P0, Vanka F(2,2)-cycles\n");
  for (int L = s.min_level; ok && L <= s.max_level; L++) {
    /* the wind: the Stokes flow of the cavity on this hierarchy */
    clmg_stokes_problem problem;
    clmg_stokes_problem_defaults(&problem);
    problem.viscosity = 1e-3;
    problem.reaction = 10.0; /* a time step of 0.1 */
    problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
    problem.boundary_velocity = lid;
    clmg_stokes_hierarchy h = {0};
    double start = apputil_now();
    status = clmg_stokes_hierarchy_build(&coarse, L + 1, &problem, &h, &error);
    if (status != CLMG_SUCCESS) {
      fprintf(stderr, PROGRAM ": level %d: %s\n", L, error.message);
      ok = 0;
      break;
    }
    size_t n = h.a[L].rows;
    double *wind = calloc(2 * h.edges[L].num_edges, sizeof *wind);
    for (size_t e = 0; wind && e < h.edges[L].num_edges; e++) {
      /* a vortex of unit speed, zero at the walls */
      const double *p = h.meshes[L].coords;
      const int32_t *v = h.edges[L].edge_vertices + 2 * e;
      double x = 0.5 * (p[2 * v[0]] + p[2 * v[1]]), y = 0.5 * (p[2 * v[0] + 1] + p[2 * v[1] + 1]);
      wind[e] = sin(3.14159265358979323846 * x) * sin(3.14159265358979323846 * x) *
                sin(2 * 3.14159265358979323846 * y);
      wind[h.edges[L].num_edges + e] = -sin(2 * 3.14159265358979323846 * x) *
                                       sin(3.14159265358979323846 * y) *
                                       sin(3.14159265358979323846 * y);
    }
    finest_row *f = &finest[finest_count];
    if (wind)
      status = time_device_assembly(context, &s, &h, &problem, wind, f);
    if (!wind || status != CLMG_SUCCESS) {
      apputil_report(context, wind ? status : CLMG_ERROR_OUT_OF_HOST_MEMORY, "device assembly");
      clmg_stokes_hierarchy_free(&h);
      free(wind);
      ok = 0;
      break;
    }
    clmg_stokes_hierarchy_free(&h);
    problem.wind = wind;
    start = apputil_now();
    status = clmg_stokes_hierarchy_build(&coarse, L + 1, &problem, &h, &error);
    double assemble_s = apputil_now() - start;
    if (status != CLMG_SUCCESS) {
      fprintf(stderr, PROGRAM ": level %d: %s\n", L, error.message);
      free(wind);
      ok = 0;
      break;
    }
    /* the per-level sweeps, once per hierarchy level not yet measured */
    for (int l = level_count ? levels[level_count - 1].level + 1 : 0;
         ok && l <= L && level_count < 16; l++) {
      level_row *r = &levels[level_count];
      r->level = l;
      r->triangles = h.meshes[l].num_cells;
      r->unknowns = h.a[l].rows;
      status = time_sweep(context, &s, &h, l, 1, &r->si_s, &r->si_bytes, &r->colours[0]);
      if (status == CLMG_SUCCESS)
        status = time_sweep(context, &s, &h, l, 0, &r->nsi_s, &r->nsi_bytes, &r->colours[1]);
      if (status != CLMG_SUCCESS) {
        apputil_report(context, status, "Vanka sweep");
        ok = 0;
      }
      level_count++;
    }
    /* the finest level's cycle and solve */
    f->level = L;
    f->unknowns = n;
    f->assemble_s = assemble_s;
    clmg_multigrid *mg = NULL;
    clmg_vector *b = NULL, *x = NULL;
    start = apputil_now();
    if (ok)
      status = clmg_stokes_multigrid_create(context, &h, NULL, NULL, &mg);
    if (ok && status == CLMG_SUCCESS)
      status = clmg_finish(context);
    f->setup_s = apputil_now() - start;
    if (ok && status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, n, &b);
    if (ok && status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, n, &x);
    if (ok && status == CLMG_SUCCESS)
      status = clmg_vector_upload_doubles(b, h.b);
    if (ok && status == CLMG_SUCCESS)
      status = clmg_vector_fill(x, 0.0);
    if (ok && status == CLMG_SUCCESS) {
      perf_cycle_operands operands = {mg, b, x};
      long reps = 0;
      status =
          perf_time_adaptive(context, &s.timing, perf_run_cycle, &operands, &reps, &f->cycle_s);
      f->cycle_bytes = clmg_multigrid_cycle_bytes(mg, 0);
    }
    if (ok && status == CLMG_SUCCESS) {
      /* three cycles under the kernel profile, by part: Vanka kernels, the
       * sparse products (residuals and transfers alike), the coarse solve's
       * kernels, the rest */
      enum { PROFILED = 3 };
      clmg_kernel_time *times = NULL;
      size_t count = 0;
      status = clmg_profile_start(context);
      for (int k = 0; k < PROFILED && status == CLMG_SUCCESS; k++)
        status = clmg_multigrid_cycle(mg, b, x);
      clmg_status stopped = clmg_profile_stop(context, &times, &count);
      if (status == CLMG_SUCCESS)
        status = stopped;
      for (size_t k = 0; status == CLMG_SUCCESS && k < count; k++) {
        const char *name = times[k].name;
        int part = strncmp(name, "vanka", 5) == 0 ? PART_SMOOTHER
                   : strstr(name, "spmv") || strstr(name, "defect") || strstr(name, "long")
                       ? PART_SPMV
                   : strstr(name, "dense") ? PART_COARSE
                                           : PART_VECTOR;
        f->part_s[part] += times[k].seconds / PROFILED;
      }
      free(times);
    }
    if (ok && status == CLMG_SUCCESS) {
      /* the solver as data (the keys of clmg solve --set): GMRES(30) to
       * 1e-8 with one cycle of the hierarchy as its preconditioner */
      clmg_options *db = NULL;
      clmg_solver *solver = NULL;
      clmg_error options_error = {{0}};
      const clmg_operator *op = clmg_multigrid_operator(mg, clmg_multigrid_levels(mg) - 1);
      status = perf_options_parse("krylov=gmres precond=multigrid restart=30 tol=1e-8 maxit=200",
                                  &db, &options_error);
      if (status != CLMG_SUCCESS)
        fprintf(stderr, "clmg_perf_flow: %s\n", options_error.message);
      if (status == CLMG_SUCCESS)
        status = clmg_solver_create_multigrid(context, op, mg, 0, db, &solver);
      clmg_krylov_result result = {0};
      for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; pass++) {
        /* the second solve is timed: the first loads the GMRES kernels */
        status = clmg_vector_fill(x, 0.0);
        if (status == CLMG_SUCCESS)
          status = clmg_finish(context);
        start = apputil_now();
        if (status == CLMG_SUCCESS)
          status = clmg_solver_solve(solver, b, x, &result);
        if (status == CLMG_SUCCESS)
          status = clmg_finish(context);
        f->solve_s = apputil_now() - start;
        f->gmres_iterations = result.iterations;
        clmg_krylov_result_free(&result);
      }
      /* the true residual on the host */
      double *xh = malloc(n * sizeof *xh), *r = malloc(n * sizeof *r);
      if (status == CLMG_SUCCESS && xh && r &&
          clmg_vector_download_doubles(x, xh) == CLMG_SUCCESS) {
        clmg_csr_spmv_host(1.0, &h.a[L], xh, 0.0, r);
        double rr = 0, bb = 0;
        for (size_t i = 0; i < n; i++) {
          rr += (h.b[i] - r[i]) * (h.b[i] - r[i]);
          bb += h.b[i] * h.b[i];
        }
        f->relative_residual = sqrt(rr / bb);
      }
      free(xh);
      free(r);
      clmg_solver_destroy(solver);
      clmg_options_destroy(db);
    }
    for (int k = 0; k < RATE_CASES && ok && status == CLMG_SUCCESS; k++)
      status = measure_rate(context, &h, k, b, x, f);
    if (ok && status != CLMG_SUCCESS) {
      apputil_report(context, status, "multigrid");
      ok = 0;
    }
    if (ok)
      finest_count++;
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_multigrid_destroy(mg);
    clmg_stokes_hierarchy_free(&h);
    free(wind);
  }
  printf("\nVanka sweeps per level (one step; floor: its bytes at %.1f GB/s)\n", copy_gb_s);
  printf("%5s %10s %10s %7s %10s %8s %7s %10s %8s %7s %8s\n", "level", "triangles", "unknowns",
         "colours", "SI ms", "SI GB/s", "x floor", "NSI ms", "NSI GB/s", "x floor", "NSI/SI");
  for (size_t k = 0; k < level_count; k++) {
    const level_row *r = &levels[k];
    double si_floor = r->si_bytes / (copy_gb_s * 1e9), nsi_floor = r->nsi_bytes / (copy_gb_s * 1e9);
    printf("%5d %10zu %10zu %7zu %10.4f %8.1f %7.2f %10.4f %8.1f %7.2f %8.2f\n", r->level,
           r->triangles, r->unknowns, r->colours[0], 1e3 * r->si_s, r->si_bytes / r->si_s / 1e9,
           r->si_s / si_floor, 1e3 * r->nsi_s, r->nsi_bytes / r->nsi_s / 1e9, r->nsi_s / nsi_floor,
           r->nsi_s / r->si_s);
  }
  printf("\nFinest level: F(2,2)-cycle, GMRES with one cycle to 1e-8; a step's systems refilled "
         "on the device (every level), the host assembly of the hierarchy, the multigrid setup\n");
  printf("%5s %10s %10s %8s %12s %6s %10s %10s %12s %8s %11s %11s\n", "level", "unknowns",
         "cycle ms", "x floor", "Munknowns/s", "GMRES", "solve s", "residual", "refill ms",
         "x floor", "host asm s", "mg setup s");
  for (size_t k = 0; k < finest_count; k++) {
    const finest_row *f = &finest[k];
    printf("%5d %10zu %10.3f %8.2f %12.1f %6d %10.4f %10.2e %12.3f %8.2f %11.3f %11.3f\n", f->level,
           f->unknowns, 1e3 * f->cycle_s, f->cycle_s / (f->cycle_bytes / (copy_gb_s * 1e9)),
           f->unknowns / f->cycle_s / 1e6, f->gmres_iterations, f->solve_s, f->relative_residual,
           1e3 * f->device_assemble_s,
           f->device_assemble_s / (f->device_assemble_bytes / (copy_gb_s * 1e9)), f->assemble_s,
           f->setup_s);
  }
  printf("\nRate per cycle as levels are added: cycles from x = 0 to a residual of 1e-8 (at "
         "most %d) and their mean rate\n",
         RATE_MAX_CYCLES);
  printf("%5s %7s %10s", "level", "levels", "unknowns");
  for (int k = 0; k < RATE_CASES; k++)
    printf(" %18s", rate_cases[k].name);
  printf("\n");
  for (size_t j = 0; j < finest_count; j++) {
    const finest_row *f = &finest[j];
    printf("%5d %7d %10zu", f->level, f->level + 1, f->unknowns);
    for (int k = 0; k < RATE_CASES; k++)
      printf(" %4d%s cycles %5.3f", f->rate_cycles[k], f->rate_converged[k] ? " " : "!",
             f->rate[k]);
    printf("\n");
  }
  printf("(! : not converged within the limit)\n");
  printf("\nDevice time per cycle by part (kernel profile of 3 cycles; the paper's Table 1)\n");
  printf("%5s %10s", "level", "unknowns");
  for (int p = 0; p < PARTS; p++)
    printf(" %19s", part_names[p]);
  printf("\n");
  for (size_t k = 0; k < finest_count; k++) {
    const finest_row *f = &finest[k];
    double total = 0;
    for (int p = 0; p < PARTS; p++)
      total += f->part_s[p];
    printf("%5d %10zu", f->level, f->unknowns);
    for (int p = 0; p < PARTS; p++)
      printf("   %8.3f ms (%3.0f%%)", 1e3 * f->part_s[p],
             total > 0 ? 100 * f->part_s[p] / total : 0);
    printf("\n");
  }
  const char *paths[2];
  for (size_t path = 0; ok && path < perf_output_paths(&s.output, paths); path++) {
    clmg_output_file *file = NULL;
    FILE *out = perf_json_open(PROGRAM, paths[path], &file);
    if (out) {
      json_writer w;
      json_begin(&w, out);
      json_object_begin(&w, NULL);
      json_device(&w, device);
      json_number(&w, "copy_gb_per_s", copy_gb_s);
      json_array_begin(&w, "sweeps");
      for (size_t k = 0; k < level_count; k++) {
        const level_row *r = &levels[k];
        json_object_begin(&w, NULL);
        json_integer(&w, "level", r->level);
        json_integer(&w, "triangles", (long long)r->triangles);
        json_integer(&w, "unknowns", (long long)r->unknowns);
        json_integer(&w, "colours", (long long)r->colours[0]);
        json_number(&w, "si_s", r->si_s);
        json_number(&w, "si_bytes", r->si_bytes);
        json_number(&w, "si_ratio_to_floor", r->si_s / (r->si_bytes / (copy_gb_s * 1e9)));
        json_number(&w, "nsi_s", r->nsi_s);
        json_number(&w, "nsi_bytes", r->nsi_bytes);
        json_number(&w, "nsi_ratio_to_floor", r->nsi_s / (r->nsi_bytes / (copy_gb_s * 1e9)));
        json_object_end(&w);
      }
      json_array_end(&w);
      json_array_begin(&w, "finest");
      for (size_t k = 0; k < finest_count; k++) {
        const finest_row *f = &finest[k];
        json_object_begin(&w, NULL);
        json_integer(&w, "level", f->level);
        json_integer(&w, "unknowns", (long long)f->unknowns);
        json_number(&w, "cycle_s", f->cycle_s);
        json_number(&w, "cycle_bytes", f->cycle_bytes);
        json_number(&w, "cycle_ratio_to_floor", f->cycle_s / (f->cycle_bytes / (copy_gb_s * 1e9)));
        json_integer(&w, "gmres_iterations", f->gmres_iterations);
        json_number(&w, "solve_s", f->solve_s);
        json_number(&w, "relative_residual", f->relative_residual);
        json_number(&w, "assemble_s", f->assemble_s);
        json_number(&w, "device_assemble_s", f->device_assemble_s);
        json_number(&w, "device_assemble_bytes", f->device_assemble_bytes);
        json_number(&w, "device_assemble_ratio_to_floor",
                    f->device_assemble_s / (f->device_assemble_bytes / (copy_gb_s * 1e9)));
        json_number(&w, "setup_s", f->setup_s);
        json_object_begin(&w, "device_s_per_cycle");
        for (int p = 0; p < PARTS; p++)
          json_number(&w, part_names[p], f->part_s[p]);
        json_object_end(&w);
        json_array_begin(&w, "rates");
        for (int c = 0; c < RATE_CASES; c++) {
          json_object_begin(&w, NULL);
          json_string(&w, "cycle", rate_cases[c].name);
          json_integer(&w, "cycles", f->rate_cycles[c]);
          json_number(&w, "rate", f->rate[c]);
          json_bool(&w, "converged", f->rate_converged[c]);
          json_object_end(&w);
        }
        json_array_end(&w);
        json_object_end(&w);
      }
      json_array_end(&w);
      json_object_end(&w);
      json_end(&w);
      ok = perf_json_close(PROGRAM, file) && ok;
    } else {
      ok = 0;
    }
  }
  free(levels);
  free(finest);
  clmg_mesh_free(&coarse);
  clmg_context_destroy(context);
  return ok ? 0 : 1;
}
