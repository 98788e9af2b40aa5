/* clmg bench: one vendor-neutral benchmark of every kernel family on one
 * OpenCL device (copy, BLAS-1, SpMV per format, geometric multigrid, AMG,
 * P1 assembly, Vanka and the Navier-Stokes cycle, HOMG), each as a ratio
 * to the copy bandwidth measured in the same run, checked before it counts;
 * a figure of merit; JSON, a side-by-side comparison of reports and an
 * HTML page (bench_report.c). The timing loop and the generated matrices are
 * the ones perf/ uses (apps/common/perf_common.c, matrices.c); the stages
 * for Navier-Stokes and HOMG are in bench_stages.c. */
#define _POSIX_C_SOURCE 200809L /* gethostname, sysconf under -std=c11 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "apputil.h"
#include "bench.h"
#include "bench_report.h"
#include "cli.h"
#include "clmg/version.h"
#include "matrices.h"
#include "subcommands.h"

#define STAGE_COUNT 9
static const char *const stage_names[STAGE_COUNT] = {"copy",     "blas1", "spmv", "gmg", "amg",
                                                     "assembly", "flow",  "homg", "hpcg"};

/* ---- what the stages share ---- */

int bench_add(bench_run *run, const bench_entry *entry) {
  if (!perf_grow_array((void **)&run->entries, &run->capacity, run->count, sizeof *entry)) {
    fprintf(stderr, "clmg bench: out of host memory for the results\n");
    run->failures++;
    return 0;
  }
  run->entries[run->count++] = *entry;
  if (!entry->verified) {
    run->failures++;
    fprintf(stderr, "clmg bench: FAILED %s %s: %s\n", entry->stage, entry->name, entry->check);
  }
  return 1;
}

bench_entry bench_entry_start(const char *stage, const char *format, ...) {
  bench_entry e;
  memset(&e, 0, sizeof e);
  snprintf(e.stage, sizeof e.stage, "%s", stage);
  va_list args;
  va_start(args, format);
  vsnprintf(e.name, sizeof e.name, format, args);
  va_end(args);
  e.rows = e.nonzeros = e.time_s = e.flops = e.bytes = e.setup_s = e.solve_s = NAN;
  e.iterations = -1;
  e.in_mean = 1;
  return e;
}

void bench_progress(const bench_run *run, const char *format, ...) {
  (void)run;
  va_list args;
  va_start(args, format);
  fputs("bench: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

void bench_fail_error(bench_run *run, const char *stage, const char *what, clmg_status status,
                      const clmg_error *error) {
  if (error->message[0] == '\0') { /* the failure is the context's */
    bench_fail(run, stage, what, status);
    return;
  }
  bench_entry e = bench_entry_start(stage, "%s", what);
  snprintf(e.check, sizeof e.check, "failed: %s: %.160s", clmg_status_string(status),
           error->message);
  e.in_mean = 0;
  bench_add(run, &e);
}

void bench_fail(bench_run *run, const char *stage, const char *what, clmg_status status) {
  bench_entry e = bench_entry_start(stage, "%s", what);
  snprintf(e.check, sizeof e.check, "%s: %s", clmg_status_string(status),
           clmg_context_message(run->context));
  e.in_mean = 0;
  bench_add(run, &e);
}

double bench_worse(double worst, double error) {
  return isnan(worst) || isnan(error) ? NAN : fmax(worst, error);
}

double bench_relative_difference(const double *got, const double *want, size_t n, double *scale) {
  double difference = 0, largest = 0;
  for (size_t i = 0; i < n; i++) {
    difference = bench_worse(difference, fabs(got[i] - want[i]));
    largest = fmax(largest, fabs(want[i]));
  }
  *scale = largest;
  return largest > 0 ? difference / largest : difference;
}

void bench_random_fill(double *v, size_t n, uint64_t seed) {
  uint64_t state = seed;
  for (size_t i = 0; i < n; i++) { /* splitmix64 */
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    v[i] = 2.0 * ((double)(z >> 11) * 0x1.0p-53) - 1.0;
  }
}

static double *random_array(size_t n, uint64_t seed) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (v)
    bench_random_fill(v, n, seed);
  return v;
}

static clmg_status device_vector(clmg_context *context, clmg_dtype type, size_t n,
                                 const double *values, clmg_vector **out) {
  clmg_status status = clmg_vector_create(context, type, n, out);
  if (status == CLMG_SUCCESS && values)
    status = clmg_vector_upload_doubles(*out, values);
  return status;
}

/* ||b - A x|| / ||b||, recomputed on the device. */
static clmg_status true_relative_residual(const clmg_matrix *a, const clmg_vector *b,
                                          const clmg_vector *x, double *relative) {
  clmg_vector *r = NULL;
  double norm_r = NAN, norm_b = NAN;
  clmg_status status =
      clmg_vector_create(clmg_matrix_context(a), clmg_vector_type(b), clmg_vector_length(b), &r);
  if (status == CLMG_SUCCESS)
    status = clmg_defect(a, b, x, r);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(r, &norm_r);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(b, &norm_b);
  clmg_vector_destroy(r);
  *relative = norm_b > 0 ? norm_r / norm_b : norm_r;
  return status;
}

static double pick(bench_size size, double quick, double small, double medium, double large) {
  return size == BENCH_QUICK    ? quick
         : size == BENCH_SMALL  ? small
         : size == BENCH_MEDIUM ? medium
                                : large;
}

/* ---- copy ---- */

static void stage_copy(bench_run *run) {
  bench_progress(run, "copy bandwidth");
  bench_entry e = bench_entry_start("copy", "copy (the reference)");
  size_t bytes = clmg_copy_bandwidth_default_bytes(run->context);
  clmg_status status = clmg_measure_copy_bandwidth(run->context, 0, &run->copy_gb_s);
  if (status != CLMG_SUCCESS) {
    bench_fail(run, "copy", "copy bandwidth", status);
    run->copy_gb_s = NAN;
    return;
  }
  snprintf(e.problem, sizeof e.problem, "%.0f MiB buffer, read and written", bytes / 1048576.0);
  e.bytes = (double)bytes;
  e.time_s = e.bytes / (run->copy_gb_s * 1e9);
  e.verified = 1;
  e.in_mean = 0; /* the reference itself */
  snprintf(e.check, sizeof e.check, "the reference of every ratio");
  bench_add(run, &e);
}

/* ---- BLAS-1 ---- */

typedef struct blas1_operands {
  const clmg_vector *x;
  clmg_vector *y;
  double alpha, result;
} blas1_operands;

static clmg_status run_dot(const void *data, long iteration) {
  (void)iteration;
  blas1_operands *o = (blas1_operands *)data;
  return clmg_dot(o->x, o->y, &o->result);
}

static clmg_status run_axpy(const void *data, long iteration) {
  (void)iteration;
  const blas1_operands *o = data;
  return clmg_axpy(o->alpha, o->x, o->y);
}

static void blas1_precision(bench_run *run, clmg_dtype type, size_t n, const double *x,
                            const double *y) {
  const char *type_name = clmg_dtype_name(type);
  double real = (double)clmg_dtype_size(type), tolerance = type == CLMG_DOUBLE ? 1e-12 : 1e-3;
  clmg_vector *xd = NULL, *yd = NULL;
  clmg_status status = device_vector(run->context, type, n, x, &xd);
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, n, y, &yd);
  double *got = malloc(n * sizeof *got);
  if (status != CLMG_SUCCESS || !got) {
    bench_fail(run, "blas1", type == CLMG_DOUBLE ? "vectors (double)" : "vectors (float)",
               status != CLMG_SUCCESS ? status : CLMG_ERROR_OUT_OF_HOST_MEMORY);
    goto done;
  }
  /* dot: the host's sum in long double, error relative to sum |x y| */
  long double exact = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    double xi = type == CLMG_FLOAT ? (float)x[i] : x[i],
           yi = type == CLMG_FLOAT ? (float)y[i] : y[i];
    exact += (long double)xi * yi;
    scale += fabsl((long double)xi * yi);
  }
  if (run->fault) { /* the test hook: an input the reference did not see */
    double *bad = malloc(n * sizeof *bad);
    if (bad) {
      memcpy(bad, x, n * sizeof *bad);
      bad[n / 2] += 1000.0;
      status = clmg_vector_upload_doubles(xd, bad);
      free(bad);
    }
  }
  blas1_operands o = {xd, yd, 1e-3, 0.0};
  bench_entry e = bench_entry_start("blas1", "dot %s", type_name);
  snprintf(e.problem, sizeof e.problem, "%zu elements", n);
  e.rows = (double)n;
  long reps = 0;
  if (status == CLMG_SUCCESS)
    status = perf_time_adaptive(run->context, &run->timing, run_dot, &o, &reps, &e.time_s);
  if (status != CLMG_SUCCESS) {
    bench_fail(run, "blas1", e.name, status);
    goto done;
  }
  double error = fabs(o.result - (double)exact) / (double)(scale > 0 ? scale : 1);
  e.flops = 2.0 * n;
  e.bytes = 2.0 * n * real;
  e.verified = error <= tolerance;
  snprintf(e.check, sizeof e.check, "error %.1e of sum |x y| against the host (limit %.0e)", error,
           tolerance);
  bench_add(run, &e);
  if (run->fault) /* the inputs again, for the next check */
    status = clmg_vector_upload_doubles(xd, x);

  /* axpy: timed, then once from the known y and compared */
  e = bench_entry_start("blas1", "axpy %s", type_name);
  snprintf(e.problem, sizeof e.problem, "%zu elements", n);
  e.rows = (double)n;
  if (status == CLMG_SUCCESS)
    status = perf_time_adaptive(run->context, &run->timing, run_axpy, &o, &reps, &e.time_s);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(yd, y);
  if (status == CLMG_SUCCESS)
    status = run_axpy(&o, 0);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(yd, got);
  if (status != CLMG_SUCCESS) {
    bench_fail(run, "blas1", e.name, status);
    goto done;
  }
  double worst = 0; /* relative to |y| + |alpha x|: cancellation makes no false alarm */
  for (size_t i = 0; i < n; ++i) {
    double yi = type == CLMG_FLOAT ? (float)y[i] : y[i];
    double axi = o.alpha * (type == CLMG_FLOAT ? (float)x[i] : x[i]);
    worst = bench_worse(worst, fabs(got[i] - (yi + axi)) / fmax(fabs(yi) + fabs(axi), 1e-300));
  }
  e.flops = 2.0 * n;
  e.bytes = 3.0 * n * real;
  double limit = type == CLMG_DOUBLE ? 1e-14 : 1e-6;
  e.verified = worst <= limit;
  snprintf(e.check, sizeof e.check,
           "max error %.1e of |y| + |alpha x| against the host (limit %.0e)", worst, limit);
  bench_add(run, &e);
done:
  free(got);
  clmg_vector_destroy(xd);
  clmg_vector_destroy(yd);
}

static void stage_blas1(bench_run *run) {
  size_t n = (size_t)pick(run->size, 1 << 16, 1 << 20, 1 << 23, 1 << 25);
  bench_progress(run, "blas1: dot and axpy, %zu elements", n);
  double *x = random_array(n, 11), *y = random_array(n, 12);
  if (!x || !y) {
    bench_fail(run, "blas1", "host vectors", CLMG_ERROR_OUT_OF_HOST_MEMORY);
  } else {
    if (run->device->has_fp64)
      blas1_precision(run, CLMG_DOUBLE, n, x, y);
    blas1_precision(run, CLMG_FLOAT, n, x, y);
  }
  free(x);
  free(y);
}

/* ---- SpMV ---- */

static void spmv_matrix(bench_run *run, const char *kind, const char *description,
                        const clmg_csr *a) {
  static const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR, CLMG_FORMAT_ELLR, CLMG_FORMAT_SELL};
  clmg_dtype type = run->device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  double *x = random_array(a->cols, 21), *want = malloc(a->rows * sizeof *want),
         *scale = calloc(a->rows, sizeof *scale), *got = malloc(a->rows * sizeof *got);
  clmg_vector *xd = NULL, *yd = NULL;
  clmg_status status = x && want && scale && got ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  if (status == CLMG_SUCCESS) {
    clmg_csr_spmv_host(1.0, a, x, 0.0, want);
    for (size_t i = 0; i < a->rows; ++i)
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
        scale[i] += fabs(a->val[k] * x[a->col[k]]);
    status = device_vector(run->context, type, a->cols, x, &xd);
  }
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, a->rows, NULL, &yd);
  for (size_t f = 0; f < sizeof formats / sizeof formats[0] && status == CLMG_SUCCESS; ++f) {
    bench_entry e = bench_entry_start("spmv", "%s %s %s", kind, clmg_matrix_format_name(formats[f]),
                                      clmg_dtype_name(type));
    snprintf(e.problem, sizeof e.problem, "%s, %zu rows, %zu nonzeros", description, a->rows,
             clmg_csr_nnz(a));
    e.rows = (double)a->rows;
    e.nonzeros = (double)clmg_csr_nnz(a);
    clmg_matrix_options options;
    clmg_matrix_options_defaults(&options);
    options.format = formats[f];
    options.precision = type;
    clmg_matrix *m = NULL;
    status = clmg_matrix_create(run->context, a, &options, &m);
    perf_spmv_operands o = {m, xd, yd};
    long reps = 0;
    if (status == CLMG_SUCCESS)
      status = perf_time_adaptive(run->context, &run->timing, perf_run_spmv, &o, &reps, &e.time_s);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_download_doubles(yd, got);
    if (status == CLMG_SUCCESS) {
      double worst = 0, limit = type == CLMG_DOUBLE ? 1e-13 : 1e-5;
      for (size_t i = 0; i < a->rows; ++i)
        worst = bench_worse(worst, fabs(got[i] - want[i]) / fmax(scale[i], 1e-300));
      /* the matrix once, x and y once: the floor of any format */
      double real = (double)clmg_dtype_size(type);
      e.bytes = (double)clmg_matrix_device_bytes(m) + real * (double)(a->rows + a->cols);
      e.flops = 2.0 * e.nonzeros;
      e.verified = worst <= limit;
      snprintf(e.check, sizeof e.check,
               "max error %.1e of sum |a_ij x_j| against the host (limit %.0e)", worst, limit);
      bench_add(run, &e);
    } else {
      bench_fail(run, "spmv", e.name, status);
    }
    clmg_matrix_destroy(m);
  }
  if (status != CLMG_SUCCESS && !yd) /* before any format: the host arrays or vectors */
    bench_fail(run, "spmv", kind, status);
  clmg_vector_destroy(xd);
  clmg_vector_destroy(yd);
  free(x);
  free(want);
  free(scale);
  free(got);
}

static void stage_spmv(bench_run *run) {
  size_t rows = (size_t)pick(run->size, 1 << 14, 1 << 18, 1 << 21, 1 << 23);
  bench_progress(run, "spmv: CSR, ELLPACK-R and SELL-C-sigma on three matrices of ~%zu rows", rows);
  clmg_error error = {{0}};
  for (int kind = 0; kind < 3; ++kind) {
    clmg_csr a = {0};
    const char *name = kind == 0 ? "fe-q1" : kind == 1 ? "stencil-7pt" : "irregular";
    const char *description = kind == 0   ? "Q1 stiffness, 2D, random coefficients"
                              : kind == 1 ? "7-point Laplacian, 3D"
                                          : "irregular, 1 to 8 random partners per row";
    size_t side2 = (size_t)sqrt((double)rows) + 1, side3 = (size_t)cbrt((double)rows) + 1;
    clmg_status status = kind == 0   ? perf_fe_q1(side2, 5, &a, &error)
                         : kind == 1 ? perf_laplace3d_7pt(side3, 5, &a, &error)
                                     : perf_irregular(rows, 0, 5, &a, &error);
    if (status != CLMG_SUCCESS) {
      char what[64];
      snprintf(what, sizeof what, "%s matrix", name);
      bench_fail_error(run, "spmv", what, status, &error);
      continue;
    }
    spmv_matrix(run, name, description, &a);
    clmg_csr_free(&a);
  }
}

/* ---- geometric multigrid and the HPCG-like CG ---- */

/* Flops of one cycle as counted by hand (HPCG counts its own this way):
 * per level above the coarsest, each damped Jacobi step 2 nnz(A) + 3 n,
 * the defect 2 nnz(A) + n, restriction 2 nnz(R), prolongation and
 * correction 2 nnz(P) + n; the coarsest level's direct solve 2 n^2. */
static double cycle_flops(const clmg_multigrid *mg, const clmg_fe_device_hierarchy *h,
                          int smoothing_steps) {
  int levels = clmg_multigrid_levels(mg);
  double flops = 0;
  for (int l = 0; l < levels; ++l) {
    const clmg_matrix *a = clmg_multigrid_matrix(mg, l);
    double n = (double)clmg_matrix_rows(a), nnz = (double)clmg_matrix_nnz(a);
    if (l == 0) {
      flops += 2.0 * n * n;
      continue;
    }
    int hl = h->num_levels - levels + l; /* the hierarchy's level */
    double p = (double)clmg_vector_length(h->p[hl].col),
           r = (double)clmg_vector_length(h->r[hl].col);
    flops += smoothing_steps * (2.0 * nnz + 3.0 * n) + 2.0 * nnz + n + 2.0 * r + 2.0 * p + n;
  }
  return flops;
}

typedef struct fe_problem {
  clmg_fe_device_hierarchy h;
  clmg_multigrid *mg;
  clmg_solver *solver; /* from the options, around mg */
  double setup_s;
} fe_problem;

static void fe_problem_free(fe_problem *p);

/* Builds the hierarchy, its multigrid (mg_options: the options' cycle) and
 * the solver the options describe around it, whose setup readies the
 * solve's kernels with one iteration on scratch vectors; setup_s is the
 * time of all of it after a first build of two levels, which compiles (or
 * loads) the kernels: setup times count the work, not the first run's
 * kernel builds. */
static clmg_status fe_problem_build(bench_run *run, const clmg_mesh *coarse, int levels,
                                    const clmg_poisson_problem *problem,
                                    const clmg_multigrid_options *mg_options,
                                    const clmg_options *options, fe_problem *p) {
  memset(p, 0, sizeof *p);
  if (levels > 2) {
    clmg_status warm = fe_problem_build(run, coarse, 2, problem, mg_options, options, p);
    fe_problem_free(p);
    if (warm != CLMG_SUCCESS)
      return warm;
  }
  double start = apputil_now();
  clmg_status status =
      clmg_fe_poisson_hierarchy_device(run->context, coarse, levels, 1, problem, &p->h);
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_create_from_csr_device(run->context, p->h.num_levels, p->h.a, p->h.p,
                                                   p->h.r, mg_options, &p->mg);
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_multigrid(
        run->context, clmg_multigrid_operator(p->mg, clmg_multigrid_levels(p->mg) - 1), p->mg, 1,
        options, &p->solver);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(run->context);
  p->setup_s = apputil_now() - start;
  return status;
}

static void fe_problem_free(fe_problem *p) {
  clmg_solver_destroy(p->solver);
  clmg_multigrid_destroy(p->mg);
  clmg_fe_device_hierarchy_free(&p->h);
}

/* The best of the run's trials of a solve from x0; x keeps the last one. */
typedef struct solve_timing {
  double seconds;
  clmg_krylov_result result;
} solve_timing;

/* The solver's setup compiled (or loaded) the kernels: every trial is timed. */
static clmg_status time_solves(bench_run *run, clmg_solver *solver, const clmg_vector *b,
                               const clmg_vector *x0, clmg_vector *x, solve_timing *best) {
  best->seconds = INFINITY;
  memset(&best->result, 0, sizeof best->result);
  clmg_status status = CLMG_SUCCESS;
  long trials = run->timing.trials > 0 ? run->timing.trials : 1;
  for (long trial = 0; trial < trials && status == CLMG_SUCCESS; ++trial) {
    clmg_krylov_result result = {0};
    status = x0 ? clmg_copy(x0, x) : clmg_vector_fill(x, 0.0);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(run->context);
    double start = apputil_now();
    clmg_status solved = CLMG_SUCCESS;
    if (status == CLMG_SUCCESS)
      solved = clmg_solver_solve(solver, b, x, &result);
    double seconds = apputil_now() - start;
    if (solved != CLMG_SUCCESS)
      status = solved;
    if (status == CLMG_SUCCESS && seconds < best->seconds) {
      best->seconds = seconds;
      best->result.iterations = result.iterations;
      best->result.converged = result.converged;
    }
    clmg_krylov_result_free(&result);
  }
  return status;
}

/* Fills a solver's entry from its best solve and the residual recomputed
 * from its x. */
static void finish_solver_entry(bench_run *run, bench_entry *e, const clmg_matrix *a,
                                const clmg_vector *b, const clmg_vector *x, const solve_timing *t,
                                double setup_s) {
  double relative = NAN;
  clmg_status status = true_relative_residual(a, b, x, &relative);
  if (status != CLMG_SUCCESS) {
    bench_fail(run, e->stage, e->name, status);
    return;
  }
  e->setup_s = setup_s;
  e->solve_s = t->seconds;
  e->iterations = t->result.iterations;
  e->time_s = t->result.iterations > 0 ? t->seconds / t->result.iterations : NAN;
  e->verified = relative <= 1e-8 * (1 + 1e-6);
  snprintf(e->check, sizeof e->check, "residual %.2e (recomputed from x; limit 1e-8), %d %s",
           relative, t->result.iterations, strcmp(e->stage, "gmg") == 0 ? "cycles" : "iterations");
  bench_add(run, e);
}

/* A solver's options string: the stage's (tol=1e-8 and an iteration
 * limit among them) and the run's precision, double where the device has
 * it, else float. */
static void solver_text(const bench_run *run, const char *stage_options, char *text, size_t size) {
  snprintf(text, size, "%s precision=%s", stage_options,
           run->device->has_fp64 ? "double" : "float");
}

/* A multigrid solve on a device-assembled Q1 hierarchy, to 1e-8, the
 * solver built from the options string (clmg_options_multigrid gives the
 * hierarchy's cycle, clmg_solver_create_multigrid the solver around it):
 * krylov=none runs the cycle as the solver from the problem's x0,
 * krylov=cg CG preconditioned by one cycle from 0. Per iteration, bytes
 * and flops are the cycle's and the defect's (cycles) or CG's
 * (perf_cg_iteration_bytes, 2 nnz + 10 n). Returns the entry it added
 * when verified, else NULL. */
typedef struct fe_case {
  const char *stage, *name, *problem;
  int level;
  const char *options; /* clmg/solver.h's keys, but precision */
} fe_case;

static const bench_entry *run_fe_case(bench_run *run, const fe_case *c, const clmg_mesh *coarse,
                                      const clmg_poisson_problem *problem) {
  bench_entry e = bench_entry_start(c->stage, "%s", c->name);
  solver_text(run, c->options, e.options, sizeof e.options);
  clmg_options *options = NULL;
  clmg_error error = {{0}};
  clmg_status status = perf_options_parse(e.options, &options, &error);
  if (status != CLMG_SUCCESS) {
    bench_fail_error(run, c->stage, e.options, status, &error);
    return NULL;
  }
  clmg_multigrid_options mg_options;
  status = clmg_options_multigrid(options, run->context, &mg_options);
  mg_options.matrix.precision = run->device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  clmg_matrix_format_parse(clmg_options_get(options, "format"), &mg_options.matrix.format);
  fe_problem p;
  memset(&p, 0, sizeof p);
  clmg_vector *x = NULL;
  const bench_entry *added = NULL;
  if (status == CLMG_SUCCESS)
    status = fe_problem_build(run, coarse, c->level, problem, &mg_options, options, &p);
  const clmg_matrix *a =
      status == CLMG_SUCCESS ? clmg_multigrid_matrix(p.mg, clmg_multigrid_levels(p.mg) - 1) : NULL;
  const int krylov = status == CLMG_SUCCESS && clmg_solver_method(p.solver) != CLMG_KRYLOV_AUTO;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(run->context, mg_options.matrix.precision, clmg_matrix_rows(a), &x);
  solve_timing t;
  if (status == CLMG_SUCCESS)
    status = time_solves(run, p.solver, p.h.b, krylov ? NULL : p.h.x0, x, &t);
  if (status == CLMG_SUCCESS) {
    snprintf(e.problem, sizeof e.problem, "%s, level %d, %zu unknowns, to 1e-8", c->problem,
             c->level, clmg_matrix_rows(a));
    e.rows = (double)clmg_matrix_rows(a);
    e.nonzeros = (double)clmg_matrix_nnz(a);
    double cycle = cycle_flops(p.mg, &p.h, mg_options.pre_smoothing + mg_options.post_smoothing);
    if (krylov) {
      e.bytes = perf_cg_iteration_bytes(a, clmg_multigrid_cycle_bytes(p.mg, 1), 0);
      e.flops = 2.0 * e.nonzeros + 10.0 * e.rows + cycle;
    } else { /* the defect and its norm after each cycle */
      e.bytes = clmg_multigrid_iteration_bytes(p.mg);
      e.flops = cycle + 2.0 * e.nonzeros + 3.0 * e.rows;
    }
    finish_solver_entry(run, &e, a, p.h.b, x, &t, p.setup_s);
    const bench_entry *last = &run->entries[run->count - 1];
    if (last->verified && strcmp(last->name, e.name) == 0)
      added = last;
  } else {
    bench_fail(run, c->stage, c->problem, status);
  }
  clmg_vector_destroy(x);
  fe_problem_free(&p);
  clmg_options_destroy(options);
  return added;
}

static void stage_gmg(bench_run *run) {
  /* Geveler et al.'s settings: V-cycles of 4+4 Jacobi steps with omega 0.7 */
  fe_case c = {"gmg", "circle q1 v-cycle", "CIRCLE, Q1", (int)pick(run->size, 6, 8, 10, 11),
               "krylov=none precond=multigrid mg.cycle=v mg.smoother=jacobi mg.steps=4 "
               "mg.omega=0.7 tol=1e-8 maxit=300"};
  bench_progress(run, "gmg: CIRCLE Q1 level %d, V-cycle, Jacobi 4+4 (Geveler et al. 2011)",
                 c.level);
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_circle(&coarse, &error);
  if (status != CLMG_SUCCESS) {
    bench_fail_error(run, "gmg", "circle mesh", status, &error);
    return;
  }
  clmg_poisson_problem problem;
  clmg_poisson_problem_circle(&problem);
  run_fe_case(run, &c, &coarse, &problem);
  clmg_mesh_free(&coarse);
}

/* HPCG-like: CG preconditioned by one V(2,2) cycle on a 3D box (Q1
 * Poisson, u = 0 on the boundary, f = 1); its GFLOP/s is the figure. */
static void stage_hpcg(bench_run *run, double *gflops, char *problem_text, size_t problem_size) {
  fe_case c = {"hpcg", "box q1 cg+v-cycle", "3D box, Q1 Poisson", (int)pick(run->size, 4, 5, 6, 7),
               "krylov=cg precond=multigrid mg.cycle=v mg.smoother=jacobi mg.steps=2 "
               "mg.omega=0.7 tol=1e-8 maxit=300"};
  bench_progress(run, "hpcg-like: CG + GMG V-cycle on a 3D box, Q1 level %d", c.level);
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_box(3, 4, 0.0, 1, &coarse, &error);
  if (status != CLMG_SUCCESS) {
    bench_fail_error(run, "hpcg", "box mesh", status, &error);
    return;
  }
  clmg_poisson_problem problem;
  clmg_poisson_problem_unit_source(&problem);
  const bench_entry *added = run_fe_case(run, &c, &coarse, &problem);
  if (added) {
    *gflops = added->flops / added->time_s * 1e-9;
    snprintf(problem_text, problem_size, "%s (CG + V(2,2) Jacobi GMG, %d iterations)",
             added->problem, added->iterations);
  }
  clmg_mesh_free(&coarse);
}

/* ---- AMG-PCG and P1 assembly on Fu et al.'s Regular mesh ---- */

/* Fu et al.'s Regular mesh of `level` and its P1 Helmholtz system
 * assembled on the host (lambda 1, b = (phi_i, 1)): the AMG stage solves
 * it, the assembly stage checks the device's against it. Returns 0 after
 * adding the stage's failure. */
static int regular_system(bench_run *run, const char *stage, int level, clmg_mesh *mesh,
                          clmg_csr *a, double **b) {
  clmg_error error = {{0}};
  *b = NULL;
  clmg_status status = clmg_mesh_regular_tetrahedra(level, mesh, &error);
  if (status == CLMG_SUCCESS) {
    *b = malloc(mesh->num_vertices * sizeof **b);
    if (!*b)
      snprintf(error.message, sizeof error.message, "no host memory for b");
    status = *b ? clmg_p1_assemble_host(mesh, NULL, a, *b, &error) : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  if (status == CLMG_SUCCESS)
    return 1;
  char what[64];
  snprintf(what, sizeof what, "regular mesh level %d", level);
  bench_fail_error(run, stage, what, status, &error);
  clmg_mesh_free(mesh);
  free(*b);
  *b = NULL;
  return 0;
}

/* SA-AMG-PCG: CG preconditioned by V-cycles of 4+4 Jacobi steps. */
#define AMG_OPTIONS                                                                                \
  "krylov=cg precond=amg mg.cycle=v mg.smoother=jacobi mg.steps=4 tol=1e-8 maxit=300"

static void stage_amg(bench_run *run) {
  int level = (int)pick(run->size, 1, 2, 3, 4);
  bench_progress(run, "amg: SA-AMG-PCG on P1 Helmholtz, Regular mesh level %d (Fu et al. 2014)",
                 level);
  clmg_mesh mesh = {0};
  clmg_csr a = {0};
  double *b = NULL;
  if (!regular_system(run, "amg", level, &mesh, &a, &b))
    return;
  for (size_t i = 0; i < a.rows; ++i)
    b[i] = 1.0; /* the seed's right-hand side */
  clmg_dtype type = run->device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  bench_entry e = bench_entry_start("amg", "sa-amg-pcg");
  solver_text(run, AMG_OPTIONS, e.options, sizeof e.options);
  clmg_options *options = NULL;
  clmg_error error = {{0}};
  clmg_status status = perf_options_parse(e.options, &options, &error);
  if (status != CLMG_SUCCESS)
    bench_fail_error(run, "amg", e.options, status, &error);
  clmg_solver *solver = NULL;
  clmg_vector *bd = NULL, *x = NULL;
  /* the same setup on a small matrix first: kernel builds are not setup */
  clmg_csr small = {0};
  clmg_error small_error = {{0}};
  if (status == CLMG_SUCCESS)
    status = perf_laplace3d_7pt(8, 1, &small, &small_error);
  if (status == CLMG_SUCCESS) {
    status = clmg_solver_create(run->context, &small, options, &solver);
    clmg_solver_destroy(solver);
    solver = NULL;
  }
  clmg_csr_free(&small);
  double start = apputil_now();
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create(run->context, &a, options, &solver);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(run->context);
  double setup_s = apputil_now() - start;
  const clmg_matrix *m = status == CLMG_SUCCESS ? clmg_solver_matrix(solver) : NULL;
  const clmg_multigrid *mg = status == CLMG_SUCCESS ? clmg_solver_multigrid(solver) : NULL;
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, a.rows, b, &bd);
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, a.rows, NULL, &x);
  solve_timing t;
  if (status == CLMG_SUCCESS)
    status = time_solves(run, solver, bd, NULL, x, &t);
  if (status == CLMG_SUCCESS) {
    snprintf(e.problem, sizeof e.problem,
             "P1 Helmholtz, Regular level %d, %zu nodes, %zu tetrahedra", level, mesh.num_vertices,
             mesh.num_cells);
    e.rows = (double)a.rows;
    e.nonzeros = (double)clmg_csr_nnz(&a);
    e.bytes = perf_cg_iteration_bytes(m, clmg_multigrid_cycle_bytes(mg, 1), 0);
    finish_solver_entry(run, &e, m, bd, x, &t, setup_s);
  } else if (options) {
    bench_fail(run, "amg", "AMG-PCG", status);
  }
  clmg_solver_destroy(solver);
  clmg_options_destroy(options);
  clmg_vector_destroy(bd);
  clmg_vector_destroy(x);
  clmg_csr_free(&a);
  free(b);
  clmg_mesh_free(&mesh);
}

typedef struct assembly_operands {
  clmg_p1_assembler *assembler;
  clmg_matrix **matrix;
  clmg_vector *b;
} assembly_operands;

static clmg_status run_assembly(const void *data, long iteration) {
  (void)iteration;
  const assembly_operands *o = data;
  return clmg_p1_assemble_device(o->assembler, NULL, o->matrix, o->b);
}

static void stage_assembly(bench_run *run) {
  int level = (int)pick(run->size, 1, 2, 3, 4);
  bench_progress(run, "assembly: P1 Helmholtz on the device, Regular mesh level %d", level);
  clmg_mesh mesh = {0};
  clmg_csr reference = {0};
  double *b_host = NULL, *x = NULL, *want = NULL, *got = NULL;
  if (!regular_system(run, "assembly", level, &mesh, &reference, &b_host))
    return;
  clmg_status status = CLMG_SUCCESS;
  size_t n = mesh.num_vertices;
  clmg_dtype type = run->device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  clmg_p1_assembler_options options;
  clmg_p1_assembler_options_defaults(&options);
  options.matrix.precision = type;
  clmg_p1_assembler *assembler = NULL;
  clmg_matrix *matrix = NULL;
  clmg_vector *b = NULL, *xd = NULL, *yd = NULL;
  status = clmg_p1_assembler_create(run->context, &mesh, &options, &assembler);
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, n, NULL, &b);
  assembly_operands o = {assembler, &matrix, b};
  bench_entry e = bench_entry_start("assembly", "p1 %s", clmg_dtype_name(type));
  long reps = 0;
  if (status == CLMG_SUCCESS)
    status = perf_time_adaptive(run->context, &run->timing, run_assembly, &o, &reps, &e.time_s);
  /* y = A x against the host's matrix, and b */
  x = random_array(n, 31);
  want = malloc(n * sizeof *want);
  got = malloc(n * sizeof *got);
  if (status == CLMG_SUCCESS && (!x || !want || !got))
    status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, n, x, &xd);
  if (status == CLMG_SUCCESS)
    status = device_vector(run->context, type, n, NULL, &yd);
  if (status == CLMG_SUCCESS)
    status = clmg_spmv(1.0, matrix, xd, 0.0, yd);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(yd, got);
  if (status == CLMG_SUCCESS) {
    clmg_csr_spmv_host(1.0, &reference, x, 0.0, want);
    double scale, b_worst = 0;
    const double worst = bench_relative_difference(got, want, n, &scale);
    status = clmg_vector_download_doubles(b, got);
    for (size_t i = 0; status == CLMG_SUCCESS && i < n; ++i)
      b_worst = bench_worse(b_worst, fabs(got[i] - b_host[i]) / fabs(b_host[i]));
    double limit = type == CLMG_DOUBLE ? 1e-12 : 1e-5;
    snprintf(e.problem, sizeof e.problem, "Regular level %d, %zu nodes, %zu tetrahedra", level, n,
             mesh.num_cells);
    e.rows = (double)n;
    e.nonzeros = (double)clmg_csr_nnz(&reference);
    /* perf/assembly's model: cells' vertices, coordinates, CSR columns read
     * and values written, row offsets read and b written */
    double real = (double)clmg_dtype_size(type);
    e.bytes = 16.0 * mesh.num_cells + 3.0 * real * n + (4.0 + real) * e.nonzeros + (8.0 + real) * n;
    e.verified = worst <= limit && b_worst <= limit;
    snprintf(e.check, sizeof e.check,
             "A x against the host assembly: %.1e, b: %.1e (relative; limit %.0e)", worst, b_worst,
             limit);
  }
  if (status == CLMG_SUCCESS)
    bench_add(run, &e);
  else
    bench_fail(run, "assembly", e.name, status);
  clmg_matrix_destroy(matrix);
  clmg_p1_assembler_destroy(assembler);
  clmg_vector_destroy(b);
  clmg_vector_destroy(xd);
  clmg_vector_destroy(yd);
  clmg_csr_free(&reference);
  free(b_host);
  free(x);
  free(want);
  free(got);
  clmg_mesh_free(&mesh);
}

/* ---- the report ---- */

static double gb_per_s(const bench_entry *e) {
  return e->bytes / e->time_s * 1e-9;
}

/* "12.3 us" */
static const char *format_time(double seconds, char *text, size_t size) {
  if (!isfinite(seconds))
    snprintf(text, size, "-");
  else if (seconds < 1e-3)
    snprintf(text, size, "%.1f us", seconds * 1e6);
  else if (seconds < 1.0)
    snprintf(text, size, "%.3f ms", seconds * 1e3);
  else
    snprintf(text, size, "%.3f s", seconds);
  return text;
}

static void print_table(const bench_run *run, const char *hpcg_problem, double fom_ratio,
                        size_t in_mean, double hpcg_gflops) {
  printf("%-9s %-30s %10s %9s %9s %6s %6s %9s %9s  %s\n", "stage", "name", "time", "GFLOP/s",
         "GB/s", "x copy", "its", "setup", "solve", "check");
  for (size_t k = 0; k < run->count; ++k) {
    const bench_entry *e = &run->entries[k];
    char time[32], setup[32], solve[32];
    if (!e->verified) {
      printf("%-9s %-30s %10s %9s %9s %6s %6s %9s %9s  FAILED: %s\n", e->stage, e->name, "-", "-",
             "-", "-", "-", "-", "-", e->check);
      continue;
    }
    char its[16] = "-";
    if (e->iterations >= 0)
      snprintf(its, sizeof its, "%d", e->iterations);
    char gflops[32] = "-";
    if (isfinite(e->flops))
      snprintf(gflops, sizeof gflops, "%.2f", e->flops / e->time_s * 1e-9);
    printf("%-9s %-30s %10s %9s %9.1f %6.2f %6s %9s %9s  %s\n", e->stage, e->name,
           format_time(e->time_s, time, sizeof time), gflops, gb_per_s(e),
           gb_per_s(e) / run->copy_gb_s, its, format_time(e->setup_s, setup, sizeof setup),
           format_time(e->solve_s, solve, sizeof solve), e->check);
  }
  printf("\nfigure of merit: %.3f = geometric mean of the ratio to copy bandwidth (%.1f GB/s) over "
         "%zu results\n",
         fom_ratio, run->copy_gb_s, in_mean);
  if (isfinite(hpcg_gflops))
    printf("HPCG-like: %.2f GFLOP/s on %s\n", hpcg_gflops, hpcg_problem);
  printf("verified: %s\n", run->failures == 0 ? "yes, every result was checked" : "NO");
}

static void write_machine(json_writer *w) {
  struct utsname u;
  char host[128] = "unknown", cpu[128] = "unknown";
  if (gethostname(host, sizeof host) != 0)
    snprintf(host, sizeof host, "unknown");
  FILE *info = fopen("/proc/cpuinfo", "r");
  char line[256];
  while (info && fgets(line, sizeof line, info))
    if (strncmp(line, "model name", 10) == 0) {
      const char *colon = strchr(line, ':');
      if (colon) {
        snprintf(cpu, sizeof cpu, "%s", colon + 2);
        cpu[strcspn(cpu, "\n")] = '\0';
      }
      break;
    }
  if (info)
    fclose(info);
  json_object_begin(w, "machine");
  json_string(w, "hostname", host);
  if (uname(&u) == 0) {
    char os[200];
    snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    json_string(w, "os", os);
  }
  json_string(w, "cpu", cpu);
  json_integer(w, "cores", sysconf(_SC_NPROCESSORS_ONLN));
  json_object_end(w);
}

static int write_json(const char *path, const bench_run *run, const char *size_name, int quick,
                      double fom_ratio, size_t in_mean, double hpcg_gflops,
                      const char *hpcg_problem) {
  clmg_output_file *file = NULL;
  FILE *out = stdout;
  if (strcmp(path, "-") != 0 && !(out = perf_json_open("clmg bench", path, &file)))
    return 0;
  json_writer w;
  json_result_begin(&w, out, "bench"); /* schema_version, clmg_version, command */
  json_string(&w, "program", "clmg bench");
  json_string(&w, "status", run->failures ? "verification failed" : "success");
  char failed[96] = "";
  if (run->failures)
    snprintf(failed, sizeof failed, "%d result%s failed %s check", run->failures,
             run->failures == 1 ? "" : "s", run->failures == 1 ? "its" : "their");
  json_string(&w, "message", failed);
  json_object_begin(&w, "build");
#ifdef CLMG_BUILD_TYPE /* set by apps/CMakeLists.txt */
  json_string(&w, "build_type", CLMG_BUILD_TYPE);
  json_string(&w, "c_flags", CLMG_BUILD_C_FLAGS);
  json_bool(&w, "sanitizers", CLMG_BUILD_SANITIZE);
  json_string(&w, "commit", CLMG_BUILD_COMMIT);
#endif
  json_string(&w, "library_version", clmg_version_string());
#if defined(__clang__)
  json_string(&w, "compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
  json_string(&w, "compiler", "GNU " __VERSION__);
#else
  json_string(&w, "compiler", "unknown");
#endif
  json_object_end(&w);
  write_machine(&w);
  json_device(&w, run->device);
  json_object_begin(&w, "settings");
  json_string(&w, "size", size_name);
  json_bool(&w, "quick", quick);
  json_number(&w, "min_time_s", run->timing.min_time_s);
  json_integer(&w, "trials", run->timing.trials);
  json_object_end(&w);
  json_number(&w, "copy_gb_s", run->copy_gb_s);
  json_array_begin(&w, "results");
  for (size_t k = 0; k < run->count; ++k) {
    const bench_entry *e = &run->entries[k];
    json_object_begin(&w, NULL);
    json_string(&w, "stage", e->stage);
    json_string(&w, "name", e->name);
    json_string(&w, "problem", e->problem);
    json_number(&w, "rows", e->rows);
    json_number(&w, "nonzeros", e->nonzeros);
    json_number(&w, "time_s", e->verified ? e->time_s : NAN);
    json_number(&w, "gflops", e->verified ? e->flops / e->time_s * 1e-9 : NAN);
    json_number(&w, "gb_s", e->verified ? gb_per_s(e) : NAN);
    json_number(&w, "ratio_to_copy", e->verified ? gb_per_s(e) / run->copy_gb_s : NAN);
    json_number(&w, "setup_s", e->setup_s);
    json_number(&w, "solve_s", e->solve_s);
    json_number(&w, "iterations", e->iterations >= 0 ? e->iterations : NAN);
    json_bool(&w, "verified", e->verified);
    json_string(&w, "check", e->check);
    json_string(&w, "options", e->options);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_object_begin(&w, "figure_of_merit");
  json_number(&w, "bandwidth_ratio_geomean", fom_ratio);
  json_integer(&w, "results_in_mean", (long long)in_mean);
  json_number(&w, "hpcg_like_gflops", hpcg_gflops);
  json_string(&w, "hpcg_like_problem", hpcg_problem);
  json_object_end(&w);
  json_bool(&w, "verified", run->failures == 0);
  json_array_begin(&w, "failures");
  for (size_t k = 0; k < run->count; ++k)
    if (!run->entries[k].verified) {
      char text[360];
      snprintf(text, sizeof text, "%s %s: %s", run->entries[k].stage, run->entries[k].name,
               run->entries[k].check);
      json_string(&w, NULL, text);
    }
  json_array_end(&w);
  json_object_end(&w);
  json_end(&w);
  return file ? perf_json_close("clmg bench", file) : 1;
}

/* ---- options ---- */

enum {
  OPTION_SIZE = OPTION_FIRST_OWN,
  OPTION_QUICK,
  OPTION_JSON_FILE,
  OPTION_JSON_STDOUT,
  OPTION_HTML,
  OPTION_COMPARE,
  OPTION_STAGE,
  OPTION_MIN_TIME,
  OPTION_TRIALS,
  OPTION_FAULT
};

static void print_bench_usage(FILE *out) {
  fputs("Usage: clmg bench [OPTIONS]\n"
        "       clmg bench --compare A.json B.json ... [--html FILE]\n"
        "\n"
        "Benchmarks every kernel family of clmg on one OpenCL device and says how close\n"
        "to its own memory bandwidth the device runs them: the copy bandwidth is measured\n"
        "first, and every result is given as achieved GB/s (from the bytes it must move at\n"
        "least) over that copy bandwidth, and GFLOP/s where flops are counted (not for\n"
        "AMG, the assembly and the HOMG solve). Stages, each with a progress line on stderr:\n"
        "  copy      the copy bandwidth (the reference of every ratio)\n"
        "  blas1     dot and axpy, double and float\n"
        "  spmv      CSR, ELLPACK-R and SELL-C-sigma on an FE (Q1), a 3D stencil and an\n"
        "            irregular matrix\n"
        "  gmg       FE geometric multigrid on CIRCLE (Q1, V-cycle, Jacobi 4+4) to 1e-8\n"
        "  hpcg      CG preconditioned by a V(2,2) multigrid cycle on a 3D box (Q1): the\n"
        "            HPCG-like GFLOP/s\n"
        "  amg       smoothed-aggregation AMG-PCG on P1 Helmholtz (Fu et al.'s Regular mesh)\n"
        "  assembly  the device P1 assembly of the same problem\n"
        "  flow      a Vanka sweep and the Navier-Stokes (Oseen) V-cycle on the cavity\n"
        "  homg      an HOMG relaxation step and a solve to the discretisation error\n"
        "Every timed result is checked (against a host reference, or by the residual\n"
        "recomputed from x); a failed check is reported as FAILED, never as a figure, and\n"
        "the exit status is then 1.\n"
        "\n"
        "Figure of merit (one line per run): the geometric mean of the ratios to copy\n"
        "bandwidth over every result but the copy itself, and the HPCG-like GFLOP/s of\n"
        "the hpcg stage. Rules: kernels are timed by wall clock up to a clmg_finish in\n"
        "batches of repetitions lasting at least --min-time, after a warm-up that builds\n"
        "the kernels; the fastest of --trials batches counts. Solvers are timed from the\n"
        "initial guess to a relative residual of 1e-8 (the fastest of --trials solves);\n"
        "their setup (hierarchy, matrices, smoothers) is reported apart and does not\n"
        "count in the GFLOP/s. Flops are counted by hand (HPCG's way): SpMV 2 nnz, a\n"
        "Jacobi step 2 nnz + 3 n, CG 2 nnz + 10 n per iteration, plus each cycle's\n"
        "transfers and coarse solve. Each solver is built from an options string (the\n"
        "keys of `clmg help options`), which its JSON result gives as \"options\": `clmg\n"
        "poisson --set`, `clmg solve --set` or `clmg homg --set` take it back.\n"
        "\n"
        "Options:\n" COMMON_OPTIONS_HELP
        "      --size S            problem sizes: small, medium, large or auto (default:\n"
        "                          auto, from the device's memory and type: large on GPUs\n"
        "                          with 16 GiB or more, medium with 4 GiB, else small)\n"
        "      --quick             tiny sizes and short timings: a run of about a minute on\n"
        "                          a laptop CPU (the CI smoke test)\n"
        "      --stage NAME        run only the copy stage and this one\n"
        "  -o, --output FILE       also write the report as JSON to FILE; an existing FILE\n"
        "                          is replaced only once the new one is complete (the old\n"
        "                          spelling --json FILE still works, with a note)\n"
        "      --json              print the report as one JSON object on stdout instead\n"
        "                          of the table, as every command's --json does\n"
        "      --html FILE         also write a self-contained HTML page with bar charts\n"
        "                          (with a run, needs --output FILE: the page shows it)\n"
        "      --compare A.json B.json ...\n"
        "                          print reports side by side (no benchmark is run): time,\n"
        "                          ratio to copy and the speed-up of each against A\n"
        "      --min-time S        seconds a timed batch lasts at least (default 0.2;\n"
        "                          0.02 with --quick)\n"
        "      --trials N          timed batches or solves, the fastest counts (default 3)\n"
        "      --inject-fault      corrupt one input after its reference is computed (to test\n"
        "                          that a wrong result is reported as a failure)\n"
        "\n"
        "Exit status: 0 when every result verified, 1 when one failed or the library\n"
        "failed, 2 for bad usage.\n",
        out);
}

int bench_parse_options(int argc, char **argv, const cli_options *defaults,
                        bench_options *options) {
  memset(options, 0, sizeof *options);
  options->common = *defaults;
  options->size = "auto";
  options->trials = 3;
  static const struct option long_options[] = {
      {"device", required_argument, NULL, 'd'},
      {"memory-limit", required_argument, NULL, OPTION_MEMORY_LIMIT},
      {"help", no_argument, NULL, 'h'},
      {"size", required_argument, NULL, OPTION_SIZE},
      {"quick", no_argument, NULL, OPTION_QUICK},
      {"output", required_argument, NULL, OPTION_JSON_FILE},
      {"json", no_argument, NULL, OPTION_JSON_STDOUT},
      {"html", required_argument, NULL, OPTION_HTML},
      {"compare", no_argument, NULL, OPTION_COMPARE},
      {"stage", required_argument, NULL, OPTION_STAGE},
      {"min-time", required_argument, NULL, OPTION_MIN_TIME},
      {"trials", required_argument, NULL, OPTION_TRIALS},
      {"inject-fault", no_argument, NULL, OPTION_FAULT},
      {NULL, 0, NULL, 0}};
  /* the old spelling --json FILE (before --output): FILE is the word after
   * --json when it is not an option; found before getopt_long permutes argv */
  const char *old_json_value = NULL;
  for (int i = 1; i + 1 < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--json") == 0 &&
        (argv[i + 1][0] != '-' || strcmp(argv[i + 1], "-") == 0)) {
      old_json_value = argv[i + 1];
      apputil_old_spelling(argv[0], "--json FILE", "--output FILE (and --json alone prints it)");
    }
  int option;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS "o:", long_options, NULL)) != -1) {
    int common = cli_apply_common_option(argv[0], option, &options->common);
    if (common < 0)
      return cli_usage_error(argv[0]);
    if (common)
      continue;
    switch (option) {
    case OPTION_SIZE:
      if (strcmp(optarg, "small") != 0 && strcmp(optarg, "medium") != 0 &&
          strcmp(optarg, "large") != 0 && strcmp(optarg, "auto") != 0)
        return cli_usage(argv[0], "--size wants small, medium, large or auto, not '%s'", optarg);
      options->size = optarg;
      break;
    case OPTION_QUICK:
      options->quick = 1;
      break;
    case OPTION_JSON_FILE:
    case 'o':
      options->json_path = optarg;
      break;
    case OPTION_JSON_STDOUT:
      options->json_stdout = 1;
      break;
    case OPTION_HTML:
      options->html_path = optarg;
      break;
    case OPTION_COMPARE:
      options->compare = 1;
      break;
    case OPTION_STAGE: {
      int known = 0;
      for (int s = 0; s < STAGE_COUNT; ++s)
        known |= strcmp(optarg, stage_names[s]) == 0;
      if (!known)
        return cli_usage(argv[0],
                         "--stage wants copy, blas1, spmv, gmg, hpcg, amg, assembly, flow or "
                         "homg, not '%s'",
                         optarg);
      options->stage = optarg;
      break;
    }
    case OPTION_MIN_TIME: {
      char *end = NULL;
      options->min_time = strtod(optarg, &end);
      if (end == optarg || *end || !(options->min_time > 0 && options->min_time <= 60))
        return cli_usage(argv[0], "--min-time wants seconds in (0, 60], not '%s'", optarg);
      break;
    }
    case OPTION_TRIALS: {
      char *end = NULL;
      long trials = strtol(optarg, &end, 10);
      if (end == optarg || *end || trials < 1 || trials > 100)
        return cli_usage(argv[0], "--trials wants 1 to 100, not '%s'", optarg);
      options->trials = (int)trials;
      break;
    }
    case OPTION_FAULT:
      options->inject_fault = 1;
      break;
    default:
      return cli_usage_error(argv[0]);
    }
  }
  if (options->common.help)
    return 0;
  options->files = argv + optind;
  options->file_count = argc - optind;
  if (old_json_value != NULL) {
    /* the old --json FILE: FILE came out of getopt_long as an argument */
    for (int k = 0; k < options->file_count; k++)
      if (options->files[k] == old_json_value) {
        if (strcmp(old_json_value, "-") != 0) {
          options->json_path = old_json_value;
          options->json_stdout = 0; /* that --json named the file */
        }
        options->files[k] = options->files[options->file_count - 1];
        options->file_count--;
        break;
      }
  }
  if (options->compare && options->file_count < 1)
    return cli_usage(argv[0], "--compare wants one or more JSON reports");
  if (!options->compare && options->file_count > 0)
    return cli_usage(argv[0], "unexpected argument '%s' (reports go after --compare)",
                     options->files[0]);
  if (!options->compare && options->html_path && !options->json_path)
    return cli_usage(argv[0], "--html with a run needs --output FILE (the page shows that file)");
  return 0;
}

/* --compare: read the reports, print them side by side, and the page. */
static int run_compare(const bench_options *o) {
  bench_report *reports = calloc((size_t)o->file_count, sizeof *reports);
  if (!reports) {
    fprintf(stderr, "clmg bench: out of host memory\n");
    return EXIT_LIBRARY_FAILURE;
  }
  char message[512];
  int ok = 1;
  size_t read = 0;
  for (; ok && read < (size_t)o->file_count; ++read)
    if (!bench_report_read(o->files[read], &reports[read], message, sizeof message)) {
      fprintf(stderr, "clmg bench: %s\n", message);
      ok = 0;
      break;
    }
  if (ok)
    bench_compare_print(stdout, reports, read);
  if (ok && o->html_path &&
      !bench_html_write(o->html_path, reports, read, message, sizeof message)) {
    fprintf(stderr, "clmg bench: %s\n", message);
    ok = 0;
  }
  for (size_t k = 0; k < read; ++k)
    bench_report_free(&reports[k]);
  free(reports);
  return ok ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE;
}

static bench_size choose_size(const bench_options *o, const clmg_device_info *device) {
  if (o->quick)
    return BENCH_QUICK;
  if (strcmp(o->size, "small") == 0)
    return BENCH_SMALL;
  if (strcmp(o->size, "medium") == 0)
    return BENCH_MEDIUM;
  if (strcmp(o->size, "large") == 0)
    return BENCH_LARGE;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  if (device->is_gpu && (double)device->global_mem_bytes >= 16 * gib)
    return BENCH_LARGE;
  if (device->is_gpu && (double)device->global_mem_bytes >= 4 * gib)
    return BENCH_MEDIUM;
  return BENCH_SMALL;
}

static int wanted(const bench_options *o, const char *stage) {
  return !o->stage || strcmp(o->stage, stage) == 0 || strcmp(stage, "copy") == 0;
}

int run_bench(int argc, char **argv, const cli_options *defaults) {
  bench_options o;
  int parsed = bench_parse_options(argc, argv, defaults, &o);
  if (parsed != 0)
    return parsed;
  if (o.common.help) {
    print_bench_usage(stdout);
    return EXIT_SUCCESS;
  }
  cli_set_json_errors(o.json_stdout);
  if (o.compare)
    return run_compare(&o);

  clmg_context *context = cli_open_context(argv[0], &o.common, 0);
  if (!context)
    return EXIT_LIBRARY_FAILURE;
  bench_run run;
  memset(&run, 0, sizeof run);
  run.context = context;
  run.device = clmg_context_device(context);
  run.size = choose_size(&o, run.device);
  run.fault = o.inject_fault;
  run.only = o.stage;
  run.timing.trials = o.trials;
  run.timing.min_time_s = o.min_time > 0 ? o.min_time : o.quick ? 0.02 : 0.2;
  run.timing.max_adaptive_reps = 100000;
  const char *size_name = run.size == BENCH_QUICK    ? "quick"
                          : run.size == BENCH_SMALL  ? "small"
                          : run.size == BENCH_MEDIUM ? "medium"
                                                     : "large";
  bench_progress(&run, "%s (%s), sizes %s", run.device->name, run.device->platform_name, size_name);
  double start = apputil_now();
  double hpcg_gflops = NAN;
  char hpcg_problem[200] = "";
  stage_copy(&run);
  if (isfinite(run.copy_gb_s)) {
    if (wanted(&o, "blas1"))
      stage_blas1(&run);
    if (wanted(&o, "spmv"))
      stage_spmv(&run);
    if (wanted(&o, "gmg"))
      stage_gmg(&run);
    if (wanted(&o, "hpcg"))
      stage_hpcg(&run, &hpcg_gflops, hpcg_problem, sizeof hpcg_problem);
    if (wanted(&o, "amg"))
      stage_amg(&run);
    if (wanted(&o, "assembly"))
      stage_assembly(&run);
    if (wanted(&o, "flow"))
      bench_stage_flow(&run);
    if (wanted(&o, "homg"))
      bench_stage_homg(&run);
  }
  bench_progress(&run, "done in %.1f s", apputil_now() - start);

  double log_sum = 0;
  size_t in_mean = 0;
  for (size_t k = 0; k < run.count; ++k) {
    const bench_entry *e = &run.entries[k];
    if (e->verified && e->in_mean && isfinite(e->bytes) && e->time_s > 0) {
      log_sum += log(gb_per_s(e) / run.copy_gb_s);
      in_mean++;
    }
  }
  double fom = in_mean && run.failures == 0 ? exp(log_sum / (double)in_mean) : NAN;
  if (run.failures)
    hpcg_gflops = NAN; /* no figure from a run that failed a check */
  int json_to_stdout = o.json_stdout;
  if (!json_to_stdout)
    print_table(&run, hpcg_problem, fom, in_mean, hpcg_gflops);
  int ok = run.failures == 0;
  if (o.json_path &&
      !write_json(o.json_path, &run, size_name, o.quick, fom, in_mean, hpcg_gflops, hpcg_problem))
    ok = 0;
  if (json_to_stdout &&
      !write_json("-", &run, size_name, o.quick, fom, in_mean, hpcg_gflops, hpcg_problem))
    ok = 0;
  if (ok && o.html_path) {
    bench_report report;
    char message[512];
    int read = bench_report_read(o.json_path, &report, message, sizeof message);
    if (!read || !bench_html_write(o.html_path, &report, 1, message, sizeof message)) {
      fprintf(stderr, "clmg bench: %s\n", message);
      ok = 0;
    }
    if (read)
      bench_report_free(&report);
  }
  if (json_to_stdout)
    cli_json_done();
  free(run.entries);
  clmg_context_destroy(context);
  return ok ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE;
}
