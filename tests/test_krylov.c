/* Tests of CG and PCG (clmg/krylov.h): every device format and precision on
 * a 2D Poisson matrix and on a random, badly scaled SPD matrix, with a known
 * solution x* (b = A x*). A solve passes when it converges, the residual it
 * reports matches the true residual ||b - A x|| / ||b|| recomputed with
 * clmg_defect, and x is close to x*. Then the failures: a matrix or a
 * preconditioner that is not SPD, the iteration limit, a monitor that stops
 * the solve, bad arguments.
 *
 * Tolerances. rtol is 1e-10 in double and 1e-5 in float. The relative error
 * of x is at most cond(A) times (the relative residual plus the rounding of
 * A and b to the precision, a few units of eps); cond(A) is about 400 for the
 * 30 x 30 Poisson matrix and 2.5e4 for the random one (numpy, on matrices
 * built the same way), and the bound allows twice that. The recursively
 * updated residual drifts from the true one by rounding only: they must
 * agree to a quarter of rtol. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

static clmg_context *ctx;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)

/* ---- host matrices ---- */

/* The 5-point Laplacian on an m x m grid with Dirichlet boundaries, times
 * `scale` (-1 makes it negative definite). */
static clmg_csr poisson_2d(size_t m, double scale) {
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      size_t row = i * m + j;
      triplets_add(&t, row, row, 4.0 * scale);
      if (i > 0)
        triplets_add(&t, row, row - m, -scale);
      if (i + 1 < m)
        triplets_add(&t, row, row + m, -scale);
      if (j > 0)
        triplets_add(&t, row, row - 1, -scale);
      if (j + 1 < m)
        triplets_add(&t, row, row + 1, -scale);
    }
  return triplets_to_csr(&t, m * m);
}

/* S B S with B a random sparse symmetric matrix made strictly diagonally
 * dominant (so SPD) and S a random diagonal in [0.1, 10]: SPD, with rows of
 * very different scale, which is what Jacobi is for. */
static clmg_csr random_spd(size_t n, size_t off_diagonal_per_row) {
  double *scale = malloc(n * sizeof *scale), *row_sum = calloc(n, sizeof *row_sum);
  assert_non_null(scale);
  assert_non_null(row_sum);
  for (size_t i = 0; i < n; ++i)
    scale[i] = pow(10.0, rng_uniform());
  triplets t = {0};
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < off_diagonal_per_row / 2; ++k) {
      size_t j = rng_below(n);
      if (j == i)
        continue;
      double v = rng_uniform();
      triplets_add(&t, i, j, v * scale[i] * scale[j]);
      triplets_add(&t, j, i, v * scale[i] * scale[j]);
      row_sum[i] += fabs(v);
      row_sum[j] += fabs(v);
    }
  for (size_t i = 0; i < n; ++i)
    triplets_add(&t, i, i, (row_sum[i] + 0.5 + 0.5 * fabs(rng_uniform())) * scale[i] * scale[i]);
  free(scale);
  free(row_sum);
  return triplets_to_csr(&t, n);
}

/* diag(P, -10 P) with P the m x m-grid Poisson matrix: symmetric and
 * indefinite, with most of its weight on the negative block. */
static clmg_csr indefinite(size_t m) {
  clmg_csr p = poisson_2d(m, 1.0);
  size_t half = p.rows;
  triplets t = {0};
  for (size_t i = 0; i < half; ++i)
    for (int64_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
      triplets_add(&t, i, (size_t)p.col[k], p.val[k]);
      triplets_add(&t, half + i, half + (size_t)p.col[k], -10.0 * p.val[k]);
    }
  clmg_csr_free(&p);
  return triplets_to_csr(&t, 2 * half);
}

/* ---- device data ---- */

/* A linear system on the device: A, b = A x*, and the host x*. */
typedef struct problem {
  const char *name;
  clmg_dtype type;
  clmg_matrix *a;
  clmg_vector *b, *x;
  double *x_star;
  size_t n;
} problem;

static void upload(clmg_vector *v, const double *values) {
  size_t n = clmg_vector_length(v);
  if (clmg_vector_type(v) == CLMG_DOUBLE) {
    CHECK_OK(clmg_vector_upload(v, values));
    return;
  }
  float *f = malloc((n + 1) * sizeof *f);
  assert_non_null(f);
  for (size_t i = 0; i < n; ++i)
    f[i] = (float)values[i];
  CHECK_OK(clmg_vector_upload(v, f));
  free(f);
}

static void download(const clmg_vector *v, double *values) {
  size_t n = clmg_vector_length(v);
  if (clmg_vector_type(v) == CLMG_DOUBLE) {
    CHECK_OK(clmg_vector_download(v, values));
    return;
  }
  float *f = malloc((n + 1) * sizeof *f);
  assert_non_null(f);
  CHECK_OK(clmg_vector_download(v, f));
  for (size_t i = 0; i < n; ++i)
    values[i] = f[i];
  free(f);
}

/* Uploads a (the device copy is independent) and makes b = A x* for a random
 * x*, and x = 0. */
static problem problem_make(const char *name, const clmg_csr *a, clmg_matrix_format format,
                            clmg_dtype type) {
  problem p = {name, type, NULL, NULL, NULL, NULL, a->rows};
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.format = format;
  options.precision = type;
  CHECK_OK(clmg_matrix_create(ctx, a, &options, &p.a));
  assert_int_equal(clmg_matrix_format_of(p.a), format);
  p.x_star = malloc((p.n + 1) * sizeof *p.x_star);
  double *b = malloc((p.n + 1) * sizeof *b);
  assert_non_null(p.x_star);
  assert_non_null(b);
  for (size_t i = 0; i < p.n; ++i)
    p.x_star[i] = rng_uniform();
  clmg_csr_spmv_host(1.0, a, p.x_star, 0.0, b);
  CHECK_OK(clmg_vector_create(ctx, type, p.n, &p.b));
  CHECK_OK(clmg_vector_create(ctx, type, p.n, &p.x));
  upload(p.b, b);
  free(b);
  return p;
}

static void problem_free(problem *p) {
  clmg_matrix_destroy(p->a);
  clmg_vector_destroy(p->b);
  clmg_vector_destroy(p->x);
  free(p->x_star);
  memset(p, 0, sizeof *p);
}

/* ||b - A x|| / ||b||, recomputed on the device. */
/* ||v|| 2^-shift on the host, scaled by the largest entry: finite where
 * ||v|| itself is beyond the largest double. */
static double norm_shifted(const clmg_vector *v, size_t n, int shift) {
  double *host = malloc((n + 1) * sizeof *host);
  assert_non_null(host);
  download(v, host);
  double largest = 0, sum = 0;
  for (size_t i = 0; i < n; ++i)
    largest = fmax(largest, fabs(host[i]));
  for (size_t i = 0; largest > 0 && i < n; ++i)
    sum += (host[i] / largest) * (host[i] / largest);
  free(host);
  return ldexp(largest, -shift) * sqrt(sum);
}

static double true_relative_residual(const problem *p) {
  clmg_vector *r = NULL;
  CHECK_OK(clmg_vector_create(ctx, p->type, p->n, &r));
  CHECK_OK(clmg_defect(p->a, p->b, p->x, r));
  double r_norm = 0, b_norm = 0;
  CHECK_OK(clmg_nrm2(r, &r_norm));
  CHECK_OK(clmg_nrm2(p->b, &b_norm));
  if (isinf(b_norm)) { /* ||b|| beyond the largest double: both shifted */
    r_norm = norm_shifted(r, p->n, 512);
    b_norm = norm_shifted(p->b, p->n, 512);
  }
  clmg_vector_destroy(r);
  return r_norm / b_norm;
}

/* ||x - x*|| / ||x*|| */
static double relative_error(const problem *p) {
  double *x = malloc((p->n + 1) * sizeof *x);
  assert_non_null(x);
  download(p->x, x);
  double largest = 0; /* scaling by it keeps the squares in range at any scale */
  for (size_t i = 0; i < p->n; ++i)
    largest = fmax(largest, fabs(p->x_star[i]));
  double difference = 0, reference = 0;
  for (size_t i = 0; i < p->n; ++i) {
    double d = (x[i] - p->x_star[i]) / largest, r = p->x_star[i] / largest;
    difference += d * d;
    reference += r * r;
  }
  free(x);
  return sqrt(difference / reference);
}

static double tolerance_for(clmg_dtype type) {
  return type == CLMG_DOUBLE ? 1e-10 : 1e-5;
}

static void require_type(clmg_dtype type) {
  if (type == CLMG_DOUBLE && !clmg_context_device(ctx)->has_fp64) {
    print_message("the device has no double precision: skipped\n");
    skip();
  }
}

/* Solves p from x = 0 and checks everything a converged solve promises. */
static int solve_and_check(problem *p, const char *format_name, int jacobi, double condition) {
  double rtol = tolerance_for(p->type);
  double eps = p->type == CLMG_DOUBLE ? 0x1p-52 : 0x1p-23;
  double error_bound = 2 * condition * (rtol + 4 * eps);
  clmg_preconditioner preconditioner = {0};
  if (jacobi)
    CHECK_OK(clmg_preconditioner_jacobi(p->a, &preconditioner));
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = rtol;
  options.max_iterations = 2000;
  options.keep_history = 1;
  clmg_krylov_result result;
  CHECK_OK(clmg_vector_fill(p->x, 0.0));
  clmg_counters before, after;
  clmg_context_counters(ctx, &before);
  CHECK_OK(clmg_cg(p->a, p->b, p->x, jacobi ? &preconditioner : NULL, &options, &result));
  clmg_context_counters(ctx, &after);

  char what[128];
  snprintf(what, sizeof what, "%s %s %s %s", p->name, format_name, clmg_dtype_name(p->type),
           jacobi ? "pcg-jacobi" : "cg");
  double true_residual = true_relative_residual(p);
  double error = relative_error(p);
  print_message("%-36s %4d iterations, residual %.2e (true %.2e), error %.2e\n", what,
                result.iterations, result.relative_residual, true_residual, error);
  if (!result.converged || result.iterations <= 0)
    fail_msg("%s: converged %d after %d iterations", what, result.converged, result.iterations);
  if (!(result.relative_residual <= rtol))
    fail_msg("%s: reported relative residual %g > %g", what, result.relative_residual, rtol);
  if (!(fabs(true_residual - result.relative_residual) <= 0.25 * rtol))
    fail_msg("%s: true relative residual %g, reported %g", what, true_residual,
             result.relative_residual);
  if (!(error <= error_bound))
    fail_msg("%s: relative error %g > %g", what, error, error_bound);
  /* history[k] after k iterations; x0 = 0, so history[0] = ||b|| / ||b||. */
  assert_int_equal(result.history_length, (size_t)result.iterations + 1);
  assert_true(fabs(result.history[0] - 1.0) <= 1e-6);
  assert_true(result.history[result.iterations] == result.relative_residual);
  assert_true(fabs(result.final_residual / result.initial_residual - result.relative_residual) <=
              1e-6 * result.relative_residual);
  /* Latency (clmg_counters): an iteration reads back its one fused pair of
   * scalars and enqueues at most 5 commands (the SpMV, the reduction, the
   * fused updates, Jacobi); the norms of b and r0 and the residual
   * recomputed from x at the end add a few (8, and 9 with Jacobi, on
   * 2026-11-28). Fewer than one wait and two commands an iteration would be
   * a count that misses them. */
  uint64_t waits = after.host_waits - before.host_waits;
  uint64_t commands = after.commands - before.commands;
  print_message("%-36s %llu commands, %llu host waits\n", what, (unsigned long long)commands,
                (unsigned long long)waits);
  if (waits > (uint64_t)result.iterations + 10 || commands > 5 * (uint64_t)result.iterations + 24 ||
      waits < (uint64_t)result.iterations || commands < 2 * (uint64_t)result.iterations)
    fail_msg("%s: %llu commands and %llu host waits in %d iterations", what,
             (unsigned long long)commands, (unsigned long long)waits, result.iterations);
  int iterations = result.iterations;
  clmg_krylov_result_free(&result);
  assert_null(result.history);
  clmg_preconditioner_destroy(&preconditioner);
  return iterations;
}

static const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR, CLMG_FORMAT_ELLR, CLMG_FORMAT_SELL};
enum { FORMAT_COUNT = sizeof formats / sizeof formats[0] };

/* ---- convergence on SPD matrices ---- */

static void run_poisson(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(30, 1.0);
  for (int f = 0; f < FORMAT_COUNT; ++f)
    for (int jacobi = 0; jacobi < 2; ++jacobi) {
      problem p = problem_make("poisson 30x30", &a, formats[f], type);
      solve_and_check(&p, clmg_matrix_format_name(formats[f]), jacobi, 400);
      problem_free(&p);
    }
  clmg_csr_free(&a);
}

static void run_random_spd(clmg_dtype type) {
  require_type(type);
  clmg_csr a = random_spd(700, 8);
  for (int f = 0; f < FORMAT_COUNT; ++f) {
    int iterations[2];
    for (int jacobi = 0; jacobi < 2; ++jacobi) {
      problem p = problem_make("random spd n=700", &a, formats[f], type);
      iterations[jacobi] = solve_and_check(&p, clmg_matrix_format_name(formats[f]), jacobi, 2.5e4);
      problem_free(&p);
    }
    /* The rows are scaled over two orders of magnitude: Jacobi undoes that. */
    if (!(iterations[1] < iterations[0]))
      fail_msg("jacobi took %d iterations, plain cg %d", iterations[1], iterations[0]);
  }
  clmg_csr_free(&a);
}

/* ---- special right-hand sides and initial guesses ---- */

static void run_zero_rhs(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(8, 1.0);
  problem p = problem_make("zero b", &a, CLMG_FORMAT_CSR, type);
  CHECK_OK(clmg_vector_fill(p.b, 0.0));
  CHECK_OK(clmg_vector_fill(p.x, 3.0)); /* a nonzero guess: the answer is still x = 0 */
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.keep_history = 1;
  clmg_krylov_result result;
  CHECK_OK(clmg_cg(p.a, p.b, p.x, NULL, &options, &result));
  assert_true(result.converged);
  assert_int_equal(result.iterations, 0);
  assert_true(result.relative_residual == 0.0);
  assert_int_equal(result.history_length, 1);
  double x_norm = -1;
  CHECK_OK(clmg_nrm2(p.x, &x_norm));
  assert_true(x_norm == 0.0);
  clmg_krylov_result_free(&result);
  problem_free(&p);
  clmg_csr_free(&a);
}

static void run_initial_guess(clmg_dtype type) {
  require_type(type);
  double rtol = tolerance_for(type);
  clmg_csr a = poisson_2d(20, 1.0);
  problem p = problem_make("initial guess", &a, CLMG_FORMAT_SELL, type);
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = rtol;
  clmg_krylov_result result;

  /* x0 = x*: nothing to do. */
  upload(p.x, p.x_star);
  CHECK_OK(clmg_cg(p.a, p.b, p.x, NULL, &options, &result));
  assert_true(result.converged);
  assert_int_equal(result.iterations, 0);
  assert_null(result.history); /* keep_history is off */

  /* A random x0: converges to x* all the same. */
  double *x0 = malloc(p.n * sizeof *x0);
  assert_non_null(x0);
  for (size_t i = 0; i < p.n; ++i)
    x0[i] = 10 * rng_uniform();
  upload(p.x, x0);
  free(x0);
  CHECK_OK(clmg_cg(p.a, p.b, p.x, NULL, &options, &result));
  assert_true(result.converged);
  assert_true(result.initial_residual > result.final_residual);
  assert_true(result.relative_residual <= rtol);
  assert_true(true_relative_residual(&p) <= 1.25 * rtol);
  assert_true(relative_error(&p) <=
              2 * 400 * (rtol + 4 * (type == CLMG_DOUBLE ? 0x1p-52 : 0x1p-23)));
  problem_free(&p);
  clmg_csr_free(&a);
}

/* ---- failures ---- */

static void expect_breakdown(problem *p, const clmg_preconditioner *preconditioner,
                             const char *culprit) {
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  clmg_krylov_result result;
  clmg_status status = clmg_cg(p->a, p->b, p->x, preconditioner, &options, &result);
  const char *message = clmg_context_message(ctx);
  print_message("%s: %s: %s\n", p->name, clmg_status_string(status), message);
  assert_int_equal(status, CLMG_ERROR_INVALID_ARGUMENT);
  assert_false(result.converged);
  assert_non_null(strstr(message, "not symmetric positive definite"));
  assert_non_null(strstr(message, culprit));
}

static void run_not_spd(clmg_dtype type) {
  require_type(type);
  clmg_csr negative = poisson_2d(10, -1.0), mixed = indefinite(10);
  problem p = problem_make("negative definite, cg", &negative, CLMG_FORMAT_CSR, type);
  expect_breakdown(&p, NULL, "matrix");
  /* Its diagonal is negative, so Jacobi is the first to show it. */
  clmg_preconditioner jacobi;
  CHECK_OK(clmg_preconditioner_jacobi(p.a, &jacobi));
  p.name = "negative definite, pcg-jacobi";
  expect_breakdown(&p, &jacobi, "preconditioner (jacobi)");
  clmg_preconditioner_destroy(&jacobi);
  problem_free(&p);

  p = problem_make("indefinite, cg", &mixed, CLMG_FORMAT_ELLR, type);
  expect_breakdown(&p, NULL, "matrix");
  problem_free(&p);
  clmg_csr_free(&negative);
  clmg_csr_free(&mixed);
}

/* z = -r: negative definite, a preconditioner that must be refused. */
static clmg_status negate(void *data, const clmg_vector *r, clmg_vector *z) {
  ++*(int *)data;
  return clmg_waxpby(-1.0, r, 0.0, r, z);
}

static void run_bad_preconditioner(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(10, 1.0);
  problem p = problem_make("negating preconditioner", &a, CLMG_FORMAT_CSR, type);
  int calls = 0;
  clmg_preconditioner preconditioner = {negate, &calls, NULL, "negate", NULL};
  expect_breakdown(&p, &preconditioner, "preconditioner (negate)");
  assert_int_equal(calls, 1);
  clmg_preconditioner_destroy(&preconditioner); /* no destroy function: just clears */
  assert_null(preconditioner.apply);
  problem_free(&p);
  clmg_csr_free(&a);
}

/* A user preconditioner whose failure must come out of clmg_cg unchanged. */
static clmg_status failing(void *data, const clmg_vector *r, clmg_vector *z) {
  (void)data;
  (void)r;
  (void)z;
  return CLMG_ERROR_OUT_OF_DEVICE_MEMORY;
}

static void run_errors_propagate(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(6, 1.0);
  problem p = problem_make("failing preconditioner", &a, CLMG_FORMAT_CSR, type);
  clmg_preconditioner preconditioner = {failing, NULL, NULL, "failing", NULL};
  clmg_krylov_result result;
  assert_int_equal(clmg_cg(p.a, p.b, p.x, &preconditioner, NULL, &result),
                   CLMG_ERROR_OUT_OF_DEVICE_MEMORY);
  assert_non_null(strstr(clmg_context_message(ctx), "failing"));
  problem_free(&p);
  clmg_csr_free(&a);
}

static void run_iteration_limit(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(30, 1.0);
  problem p = problem_make("iteration limit", &a, CLMG_FORMAT_ELLR, type);
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = 1e-12;
  options.max_iterations = 5;
  options.keep_history = 1;
  clmg_krylov_result result;
  clmg_status status = clmg_cg(p.a, p.b, p.x, NULL, &options, &result);
  assert_int_equal(status, CLMG_ERROR_NOT_CONVERGED);
  assert_non_null(strstr(clmg_context_message(ctx), "not converged after 5 iterations"));
  assert_false(result.converged);
  assert_int_equal(result.iterations, 5);
  assert_int_equal(result.history_length, 6);
  assert_true(result.relative_residual > 1e-12 && result.relative_residual < 1.0);
  /* x holds the last iterate: its residual is the reported one. */
  double true_residual = true_relative_residual(&p);
  assert_true(fabs(true_residual - result.relative_residual) <= 1e-4 * result.relative_residual);
  clmg_krylov_result_free(&result);

  /* max_iterations = 0 only measures the initial residual. */
  options.max_iterations = 0;
  CHECK_OK(clmg_vector_fill(p.x, 0.0));
  assert_int_equal(clmg_cg(p.a, p.b, p.x, NULL, &options, &result), CLMG_ERROR_NOT_CONVERGED);
  assert_int_equal(result.iterations, 0);
  assert_true(fabs(result.relative_residual - 1.0) <= 1e-6);
  clmg_krylov_result_free(&result);
  problem_free(&p);
  clmg_csr_free(&a);
}

typedef struct monitor_log {
  int calls, last_iteration, stop_at;
  double last_residual;
} monitor_log;

static int monitor(void *data, int iteration, double relative_residual) {
  monitor_log *log = data;
  assert_int_equal(iteration, log->calls); /* 0, 1, 2, ... in order */
  log->calls++;
  log->last_iteration = iteration;
  log->last_residual = relative_residual;
  return iteration == log->stop_at;
}

static void run_monitor(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(16, 1.0);
  problem p = problem_make("monitor", &a, CLMG_FORMAT_CSR, type);
  clmg_preconditioner jacobi;
  CHECK_OK(clmg_preconditioner_jacobi(p.a, &jacobi));
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = tolerance_for(type);
  options.monitor = monitor;
  monitor_log log = {0, -1, -1, 0};
  options.monitor_data = &log;
  clmg_krylov_result result;

  /* Watching only: called once per iteration and for the initial state. */
  CHECK_OK(clmg_cg(p.a, p.b, p.x, &jacobi, &options, &result));
  assert_int_equal(log.calls, result.iterations + 1);
  assert_true(log.last_residual == result.relative_residual);

  /* Stopping after 3 iterations. */
  log = (monitor_log){0, -1, 3, 0};
  CHECK_OK(clmg_vector_fill(p.x, 0.0));
  assert_int_equal(clmg_cg(p.a, p.b, p.x, &jacobi, &options, &result), CLMG_ERROR_NOT_CONVERGED);
  assert_non_null(strstr(clmg_context_message(ctx), "monitor"));
  assert_int_equal(result.iterations, 3);
  assert_int_equal(log.calls, 4);
  assert_false(result.converged);
  clmg_preconditioner_destroy(&jacobi);
  problem_free(&p);
  clmg_csr_free(&a);
}

static void run_bad_arguments(clmg_dtype type) {
  require_type(type);
  clmg_csr a = poisson_2d(4, 1.0);
  problem p = problem_make("bad arguments", &a, CLMG_FORMAT_CSR, type);
  clmg_krylov_result result;
  clmg_vector *short_vector = NULL, *other_type = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, p.n - 1, &short_vector));
  CHECK_OK(clmg_vector_create(ctx, CLMG_INT32, p.n, &other_type));

  assert_int_equal(clmg_cg(p.a, NULL, p.x, NULL, NULL, &result), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_cg(NULL, p.b, p.x, NULL, NULL, &result), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "NULL matrix"));
  assert_int_equal(clmg_cg(p.a, p.b, NULL, NULL, NULL, &result), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_cg(p.a, p.b, short_vector, NULL, NULL, &result),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "x has 15 elements"));
  assert_int_equal(clmg_cg(p.a, other_type, p.x, NULL, NULL, &result), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = -1;
  assert_int_equal(clmg_cg(p.a, p.b, p.x, NULL, &options, &result), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_preconditioner no_apply = {0};
  assert_int_equal(clmg_cg(p.a, p.b, p.x, &no_apply, NULL, &result), CLMG_ERROR_INVALID_ARGUMENT);
  /* NULL result and options are fine. */
  CHECK_OK(clmg_cg(p.a, p.b, p.x, NULL, NULL, NULL));

  assert_int_equal(clmg_preconditioner_jacobi(NULL, &no_apply), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_preconditioner_destroy(NULL);
  clmg_krylov_result_free(NULL);
  clmg_vector_destroy(short_vector);
  clmg_vector_destroy(other_type);
  problem_free(&p);
  clmg_csr_free(&a);

  /* A zero diagonal entry has no Jacobi inverse. */
  triplets t = {0};
  triplets_add(&t, 0, 1, 1.0);
  triplets_add(&t, 1, 0, 1.0);
  triplets_add(&t, 1, 1, 1.0);
  clmg_csr singular_diagonal = triplets_to_csr(&t, 2);
  problem q = problem_make("zero diagonal", &singular_diagonal, CLMG_FORMAT_CSR, type);
  clmg_preconditioner jacobi;
  assert_int_equal(clmg_preconditioner_jacobi(q.a, &jacobi), CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(jacobi.apply);
  problem_free(&q);
  clmg_csr_free(&singular_diagonal);
}

/* The Jacobi apply: z = D^-1 r, elementwise, also in place. */
static void run_pointwise_multiply(clmg_dtype type) {
  require_type(type);
  size_t n = 1001;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *z = malloc(n * sizeof *z);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(z);
  for (size_t i = 0; i < n; ++i) {
    a[i] = rng_uniform();
    b[i] = rng_uniform();
    if (type == CLMG_FLOAT) {
      a[i] = (float)a[i];
      b[i] = (float)b[i];
    }
  }
  clmg_vector *va = NULL, *vb = NULL, *vz = NULL, *view = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &va));
  CHECK_OK(clmg_vector_create(ctx, type, n, &vb));
  CHECK_OK(clmg_vector_create(ctx, type, n, &vz));
  upload(va, a);
  upload(vb, b);
  CHECK_OK(clmg_pointwise_multiply(va, vb, vz));
  download(vz, z);
  for (size_t i = 0; i < n; ++i)
    assert_true(z[i] == (type == CLMG_FLOAT ? (double)((float)a[i] * (float)b[i]) : a[i] * b[i]));
  CHECK_OK(clmg_pointwise_multiply(va, vb, vb)); /* in place */
  download(vb, z);
  for (size_t i = 0; i < n; ++i)
    assert_true(z[i] == (type == CLMG_FLOAT ? (double)((float)a[i] * (float)b[i]) : a[i] * b[i]));
  CHECK_OK(clmg_vector_view(va, 1, n - 1, &view));
  assert_int_equal(clmg_pointwise_multiply(view, vb, vz), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_vector_destroy(view);
  clmg_vector_destroy(va);
  clmg_vector_destroy(vb);
  clmg_vector_destroy(vz);
  free(a);
  free(b);
  free(z);
}

/* ---- the group ---- */

static int open_context(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, NULL, 1);
}

/* Systems far from unit scale: b of 1e-200 or 1e+300 and matrices scaled by
 * 1e-170 or 1e+170, in double, with CG, BiCGStab and GMRES. Each converges
 * to the known solution (r.r would underflow or overflow without the
 * solvers' scaling), reports the relative residual it recomputed, and a
 * final_residual in the units of b. The last case has entries of b near
 * the largest double and ||b|| above it (its scale 2^1024 itself
 * overflows: x once came back as Inf, reported as converged). */
static void extreme_scaling_double(void **state) {
  (void)state;
  require_type(CLMG_DOUBLE); /* the scalings are beyond float's range */
  const struct {
    double matrix_scale, solution_scale;
  } cases[] = {{1, 1e-200}, {1, 1e300}, {1e-170, 1}, {1e170, 1}, {1e-170, 1e-120}, {1, 1.5e307}};
  const clmg_krylov_method methods[] = {CLMG_KRYLOV_CG, CLMG_KRYLOV_BICGSTAB, CLMG_KRYLOV_GMRES};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    clmg_csr a = poisson_2d(12, cases[c].matrix_scale);
    problem p = problem_make("extreme", &a, CLMG_FORMAT_CSR, CLMG_DOUBLE);
    for (size_t i = 0; i < p.n; ++i)
      p.x_star[i] *= cases[c].solution_scale;
    double *b = malloc(p.n * sizeof *b);
    assert_non_null(b);
    clmg_csr_spmv_host(1.0, &a, p.x_star, 0.0, b);
    upload(p.b, b);
    free(b);
    clmg_operator op;
    clmg_preconditioner jacobi;
    CHECK_OK(clmg_operator_from_matrix(p.a, 0, &op));
    CHECK_OK(clmg_preconditioner_jacobi(p.a, &jacobi));
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; ++m) {
      clmg_krylov_options options;
      clmg_krylov_options_defaults(&options);
      options.relative_tolerance = 1e-10;
      clmg_krylov_result result;
      CHECK_OK(clmg_vector_fill(p.x, 0.0));
      clmg_status status = clmg_krylov_solve(methods[m], &op, p.b, p.x, &jacobi, &options, &result);
      const char *method = clmg_krylov_method_name(methods[m]);
      if (status != CLMG_SUCCESS || !result.converged)
        fail_msg("%s, A scaled by %g, x* by %g: %s", method, cases[c].matrix_scale,
                 cases[c].solution_scale, clmg_context_message(ctx));
      double true_residual = true_relative_residual(&p), error = relative_error(&p);
      double b_norm = 0, final = result.final_residual;
      CHECK_OK(clmg_nrm2(p.b, &b_norm));
      if (isinf(b_norm)) { /* beyond the largest double: both shifted */
        b_norm = norm_shifted(p.b, p.n, 512);
        final = ldexp(final, -512);
      }
      if (!(true_residual <= 1e-10) || !(error <= 1e-7) ||
          !(fabs(result.relative_residual - true_residual) <= 1e-3 * true_residual + 1e-20) ||
          !(fabs(final / b_norm - true_residual) <= 1e-3 * true_residual + 1e-20))
        fail_msg("%s, A scaled by %g, x* by %g: true residual %g, reported %g (final %g of ||b|| "
                 "%g), error %g",
                 method, cases[c].matrix_scale, cases[c].solution_scale, true_residual,
                 result.relative_residual, result.final_residual, b_norm, error);
      clmg_krylov_result_free(&result);
    }
    clmg_preconditioner_destroy(&jacobi);
    clmg_operator_destroy(&op);
    problem_free(&p);
    clmg_csr_free(&a);
  }
}

/* A solution beyond the largest double: the method converges on the scaled
 * system, but x does not fit once scaled back, which is a failure with the
 * reason, never a success with x = Inf. */
static void overflowing_solution(void **state) {
  (void)state;
  require_type(CLMG_DOUBLE);
  clmg_csr a = poisson_2d(4, 1e-10);
  problem p = problem_make("overflow", &a, CLMG_FORMAT_CSR, CLMG_DOUBLE);
  double *b = malloc(p.n * sizeof *b);
  assert_non_null(b);
  for (size_t i = 0; i < p.n; ++i)
    b[i] = 1e300;
  upload(p.b, b);
  free(b);
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(p.a, 0, &op));
  const clmg_krylov_method methods[] = {CLMG_KRYLOV_CG, CLMG_KRYLOV_BICGSTAB, CLMG_KRYLOV_GMRES};
  for (size_t m = 0; m < sizeof methods / sizeof methods[0]; ++m) {
    clmg_krylov_result result;
    CHECK_OK(clmg_vector_fill(p.x, 0.0));
    clmg_status status = clmg_krylov_solve(methods[m], &op, p.b, p.x, NULL, NULL, &result);
    assert_int_equal(status, CLMG_ERROR_NOT_CONVERGED);
    assert_false(result.converged);
    CHECK_CONTAINS(clmg_context_message(ctx), "the solution does not fit in double");
    clmg_krylov_result_free(&result);
  }
  clmg_operator_destroy(&op);
  problem_free(&p);
  clmg_csr_free(&a);
}

static int close_context(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

TYPED_TESTS(poisson)
TYPED_TESTS(random_spd)
TYPED_TESTS(zero_rhs)
TYPED_TESTS(initial_guess)
TYPED_TESTS(not_spd)
TYPED_TESTS(bad_preconditioner)
TYPED_TESTS(errors_propagate)
TYPED_TESTS(iteration_limit)
TYPED_TESTS(monitor)
TYPED_TESTS(bad_arguments)
TYPED_TESTS(pointwise_multiply)

int main(void) {
  rng_seed(0x3c6ef372fe94f82bu);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      BOTH(pointwise_multiply),
      BOTH(poisson),
      BOTH(random_spd),
      BOTH(zero_rhs),
      BOTH(initial_guess),
      BOTH(not_spd),
      BOTH(bad_preconditioner),
      BOTH(errors_propagate),
      BOTH(iteration_limit),
      BOTH(monitor),
      BOTH(bad_arguments),
      cmocka_unit_test(extreme_scaling_double),
      cmocka_unit_test(overflowing_solution),
  };
  return cmocka_run_group_tests_name("krylov", tests, open_context, close_context);
}
