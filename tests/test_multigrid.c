/* Tests of the multigrid cycle engine (clmg/multigrid.h) on a hierarchy the
 * test builds itself, independent of the FE code: the 5-point Laplacian
 * (4, -1, unscaled, the scale-invariant form for which R = P^T is the right
 * restriction, as for FE stiffness matrices) on (2^(l+1) + 1)^2 grids with
 * Dirichlet nodes kept as identity rows, and bilinear interpolation P whose
 * boundary rows and columns are zero. A known solution x* gives b = A x*;
 * every solve must reach its tolerance and x must be close to x*
 * (cond(A) is below 1e3 at these sizes, so rtol 1e-10 leaves x within 1e-6).
 * Then: every cycle and smoother, both coarse solvers, float, the
 * preconditioner inside CG, mesh-independent cycle counts, the Chebyshev
 * eigenvalue bound, the traffic model and bad arguments. */
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

static const double PI = 3.14159265358979323846;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)

/* ---- the hierarchy ---- */

static size_t side(int level) {
  return ((size_t)1 << (level + 1)) + 1;
}

static int on_boundary(size_t i, size_t j, size_t m) {
  return i == 0 || j == 0 || i + 1 == m || j + 1 == m;
}

static clmg_csr laplacian(int level) {
  size_t m = side(level);
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      size_t row = i * m + j;
      if (on_boundary(i, j, m)) {
        triplets_add(&t, row, row, 1.0);
        continue;
      }
      triplets_add(&t, row, row, 4.0);
      const long di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
      for (int k = 0; k < 4; ++k) {
        size_t ni = (size_t)((long)i + di[k]), nj = (size_t)((long)j + dj[k]);
        if (!on_boundary(ni, nj, m))
          triplets_add(&t, row, ni * m + nj, -1.0);
      }
    }
  return triplets_to_csr(&t, m * m);
}

/* Bilinear interpolation from level - 1 to level; zero on boundary rows and
 * columns so corrections keep the Dirichlet values. */
static clmg_csr prolongation(int level) {
  size_t m = side(level), mc = side(level - 1);
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      if (on_boundary(i, j, m))
        continue;
      size_t ci[2] = {i / 2, (i + 1) / 2}, cj[2] = {j / 2, (j + 1) / 2};
      size_t ni = i % 2 ? 2 : 1, nj = j % 2 ? 2 : 1;
      for (size_t a = 0; a < ni; ++a)
        for (size_t b = 0; b < nj; ++b)
          if (!on_boundary(ci[a], cj[b], mc))
            triplets_add(&t, i * m + j, ci[a] * mc + cj[b], 1.0 / (double)(ni * nj));
    }
  clmg_csr p = triplets_to_csr(&t, m * m); /* square m^2 x m^2; cut the columns */
  p.cols = mc * mc;
  return p;
}

typedef struct hierarchy {
  int levels;
  clmg_csr a[8], p[8];
} hierarchy;

static void hierarchy_build(hierarchy *h, int levels) {
  memset(h, 0, sizeof *h);
  h->levels = levels;
  for (int l = 0; l < levels; ++l) {
    h->a[l] = laplacian(l);
    if (l > 0)
      h->p[l] = prolongation(l);
  }
}

static void hierarchy_free(hierarchy *h) {
  for (int l = 0; l < h->levels; ++l) {
    clmg_csr_free(&h->a[l]);
    clmg_csr_free(&h->p[l]);
  }
}

/* ---- a problem with a known solution ---- */

typedef struct problem {
  size_t n;
  double *x_star, *b;
  clmg_vector *b_device, *x_device;
} problem;

static void problem_make(problem *pr, const clmg_csr *a, clmg_dtype type) {
  pr->n = a->rows;
  pr->x_star = malloc(pr->n * sizeof *pr->x_star);
  pr->b = malloc(pr->n * sizeof *pr->b);
  assert_non_null(pr->x_star);
  assert_non_null(pr->b);
  for (size_t i = 0; i < pr->n; ++i)
    pr->x_star[i] = rng_uniform() - 0.5;
  if (type == CLMG_FLOAT)
    for (size_t i = 0; i < pr->n; ++i)
      pr->x_star[i] = (double)(float)pr->x_star[i];
  clmg_csr_spmv_host(1.0, a, pr->x_star, 0.0, pr->b);
  CHECK_OK(clmg_vector_create(ctx, type, pr->n, &pr->b_device));
  CHECK_OK(clmg_vector_create(ctx, type, pr->n, &pr->x_device));
  float *converted = malloc(pr->n * sizeof *converted);
  assert_non_null(converted);
  for (size_t i = 0; i < pr->n; ++i)
    converted[i] = (float)pr->b[i];
  CHECK_OK(clmg_vector_upload(pr->b_device, type == CLMG_FLOAT ? (void *)converted : pr->b));
  free(converted);
  CHECK_OK(clmg_vector_fill(pr->x_device, 0.0));
}

/* ||x - x*|| / ||x*|| */
static double problem_error(const problem *pr) {
  clmg_dtype type = clmg_vector_type(pr->x_device);
  double *x = malloc(pr->n * sizeof *x);
  float *xf = malloc(pr->n * sizeof *xf);
  assert_non_null(x);
  assert_non_null(xf);
  CHECK_OK(clmg_vector_download(pr->x_device, type == CLMG_FLOAT ? (void *)xf : x));
  double diff = 0, norm = 0;
  for (size_t i = 0; i < pr->n; ++i) {
    double xi = type == CLMG_FLOAT ? xf[i] : x[i];
    diff += (xi - pr->x_star[i]) * (xi - pr->x_star[i]);
    norm += pr->x_star[i] * pr->x_star[i];
  }
  free(x);
  free(xf);
  return sqrt(diff / norm);
}

static void problem_free(problem *pr) {
  free(pr->x_star);
  free(pr->b);
  clmg_vector_destroy(pr->b_device);
  clmg_vector_destroy(pr->x_device);
}

/* Solves with the given options; returns the cycles taken (fails the test
 * unless it converged to rtol with x within x_tol of x*). */
static int solve_checked(int levels, const clmg_multigrid_options *options, double rtol,
                         double x_tol, const char *what) {
  hierarchy h;
  hierarchy_build(&h, levels);
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, levels, h.a, h.p, NULL, options, &mg));
  problem pr;
  problem_make(&pr, &h.a[levels - 1], options->matrix.precision);
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = rtol;
  ko.max_iterations = 100;
  ko.keep_history = 1;
  clmg_krylov_result result;
  clmg_status status = clmg_multigrid_solve(mg, pr.b_device, pr.x_device, &ko, &result);
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", what, clmg_status_string(status), clmg_context_message(ctx));
  assert_true(result.converged);
  assert_true(result.relative_residual <= rtol);
  assert_int_equal(result.history_length, (size_t)result.iterations + 1);
  /* the residual falls every cycle */
  for (size_t k = 1; k < result.history_length; ++k)
    if (!(result.history[k] < result.history[k - 1]))
      fail_msg("%s: residual rose from %g to %g in cycle %zu", what, result.history[k - 1],
               result.history[k], k);
  double error = problem_error(&pr);
  if (!(error <= x_tol))
    fail_msg("%s: ||x - x*|| / ||x*|| = %g > %g after %d cycles", what, error, x_tol,
             result.iterations);
  int cycles = result.iterations;
  clmg_krylov_result_free(&result);
  problem_free(&pr);
  clmg_multigrid_destroy(mg);
  hierarchy_free(&h);
  return cycles;
}

/* ---- tests ---- */

static void test_every_cycle_and_smoother(void **state) {
  (void)state;
  for (int c = CLMG_CYCLE_V; c <= CLMG_CYCLE_F; ++c)
    for (int s = CLMG_SMOOTHER_JACOBI; s <= CLMG_SMOOTHER_SPAI0; ++s) {
      clmg_multigrid_options options;
      clmg_multigrid_options_defaults(&options);
      options.cycle = (clmg_cycle_type)c;
      options.smoother = (clmg_smoother_type)s;
      options.pre_smoothing = options.post_smoothing = s == CLMG_SMOOTHER_CHEBYSHEV ? 3 : 4;
      char what[64];
      snprintf(what, sizeof what, "%s-cycle, %s", clmg_cycle_type_name(options.cycle),
               clmg_smoother_type_name(options.smoother));
      int cycles = solve_checked(5, &options, 1e-10, 1e-6, what);
      /* two-grid theory for these smoothers: well under 20 cycles for 10 digits */
      if (cycles > 20)
        fail_msg("%s took %d cycles", what, cycles);
    }
}

static void test_coarse_solvers_agree(void **state) {
  (void)state;
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.coarse = CLMG_COARSE_DIRECT;
  int direct = solve_checked(4, &options, 1e-10, 1e-6, "direct coarse solve");
  options.coarse = CLMG_COARSE_PCG;
  options.coarse_relative_tolerance = 1e-2;
  int pcg = solve_checked(4, &options, 1e-10, 1e-6, "PCG coarse solve");
  /* a coarse solve to two digits costs at most a few extra cycles */
  assert_true(pcg >= direct - 1 && pcg <= direct + 3);
  /* pre-smoothing 0 and an unbalanced cycle still converge */
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = 0;
  options.post_smoothing = 3;
  solve_checked(4, &options, 1e-10, 1e-6, "V(0,3)");
}

static void test_float(void **state) {
  (void)state;
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.matrix.precision = CLMG_FLOAT;
  solve_checked(5, &options, 1e-5, 1e-3, "float V-cycle");
  options.smoother = CLMG_SMOOTHER_CHEBYSHEV;
  solve_checked(5, &options, 1e-5, 1e-3, "float Chebyshev V-cycle");
}

/* Cycle counts to 1e-8 do not grow with the grid: mesh independence. */
static void test_mesh_independent(void **state) {
  (void)state;
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  int counts[3];
  for (int k = 0; k < 3; ++k)
    counts[k] = solve_checked(4 + k, &options, 1e-8, 1e-5, "mesh independence");
  for (int k = 1; k < 3; ++k)
    if (abs(counts[k] - counts[0]) > 2)
      fail_msg("cycles to 1e-8 on 4, 5, 6 levels: %d, %d, %d", counts[0], counts[1], counts[2]);
}

static void test_preconditioned_cg(void **state) {
  (void)state;
  int levels = 5;
  hierarchy h;
  hierarchy_build(&h, levels);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, levels, h.a, h.p, NULL, &options, &mg));
  problem pr;
  problem_make(&pr, &h.a[levels - 1], CLMG_DOUBLE);
  clmg_preconditioner preconditioner, jacobi;
  CHECK_OK(clmg_multigrid_preconditioner(mg, &preconditioner));
  const clmg_matrix *a = clmg_multigrid_matrix(mg, levels - 1);
  assert_non_null(a);
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  clmg_krylov_result with_mg, with_jacobi;
  CHECK_OK(clmg_cg(a, pr.b_device, pr.x_device, &preconditioner, &ko, &with_mg));
  assert_true(problem_error(&pr) <= 1e-6);
  CHECK_OK(clmg_preconditioner_jacobi(a, &jacobi));
  CHECK_OK(clmg_vector_fill(pr.x_device, 0.0));
  CHECK_OK(clmg_cg(a, pr.b_device, pr.x_device, &jacobi, &ko, &with_jacobi));
  /* multigrid needs a handful of iterations; Jacobi-PCG about 3 sqrt(cond) */
  if (with_mg.iterations > 12 || 4 * with_mg.iterations > with_jacobi.iterations)
    fail_msg("MG-PCG took %d iterations, Jacobi-PCG %d", with_mg.iterations,
             with_jacobi.iterations);
  clmg_preconditioner_destroy(&preconditioner);
  clmg_preconditioner_destroy(&jacobi);
  problem_free(&pr);
  clmg_multigrid_destroy(mg);
  hierarchy_free(&h);
}

/* lambda_max(D^-1 A) of the 5-point Laplacian is 1 + cos(pi h) < 2 inside;
 * the estimate is raised by 10% and must bound it without overshooting much. */
static void test_chebyshev_bound(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 4);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.smoother = CLMG_SMOOTHER_CHEBYSHEV;
  options.eigen_iterations = 30;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, 4, h.a, h.p, NULL, &options, &mg));
  double exact = 1.0 + cos(PI / (double)(side(3) - 1));
  double lambda = clmg_multigrid_lambda_max(mg, 3);
  if (!(lambda >= exact && lambda <= 1.1 * exact + 1e-12))
    fail_msg("lambda_max estimate %g, exact %g", lambda, exact);
  assert_string_equal(clmg_multigrid_coarse_solver(mg), "direct");
  /* traffic: at least the finest matrix once per smoothing step and defect */
  const clmg_matrix *finest = clmg_multigrid_matrix(mg, 3);
  double floor_bytes = 9.0 * (double)clmg_matrix_device_bytes(finest);
  assert_true(clmg_multigrid_iteration_bytes(mg) > floor_bytes);
  assert_true(clmg_multigrid_iteration_bytes(mg) < 4 * floor_bytes);
  clmg_multigrid_destroy(mg);
  hierarchy_free(&h);
}

static void test_bad_arguments(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 3);
  clmg_multigrid *mg = NULL;
  /* P of the wrong shape on level 2 */
  clmg_csr saved = h.p[2];
  h.p[2] = h.p[1];
  assert_int_equal(clmg_multigrid_create(ctx, 3, h.a, h.p, NULL, NULL, &mg),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(mg);
  assert_non_null(strstr(clmg_context_message(ctx), "level 2"));
  h.p[2] = saved;
  /* a zero diagonal on level 1 */
  double kept = h.a[1].val[h.a[1].row_ptr[0]];
  h.a[1].val[h.a[1].row_ptr[0]] = 0.0;
  assert_int_equal(clmg_multigrid_create(ctx, 3, h.a, h.p, NULL, NULL, &mg),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "zero diagonal"));
  h.a[1].val[h.a[1].row_ptr[0]] = kept;
  /* bad options */
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = -1;
  assert_int_equal(clmg_multigrid_create(ctx, 3, h.a, h.p, NULL, &options, &mg),
                   CLMG_ERROR_INVALID_ARGUMENT);
  /* vectors of the wrong size */
  CHECK_OK(clmg_multigrid_create(ctx, 3, h.a, h.p, NULL, NULL, &mg));
  clmg_vector *small = NULL, *x = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, 10, &small));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, h.a[2].rows, &x));
  assert_int_equal(clmg_multigrid_cycle(mg, small, x), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "b must be"));
  /* the names round-trip */
  clmg_cycle_type cycle;
  clmg_smoother_type smoother;
  assert_true(clmg_cycle_type_parse("W", &cycle) && cycle == CLMG_CYCLE_W);
  assert_true(clmg_smoother_type_parse("spai0", &smoother) && smoother == CLMG_SMOOTHER_SPAI0);
  assert_false(clmg_smoother_type_parse("gauss", &smoother));
  clmg_vector_destroy(small);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(mg);
  clmg_multigrid_destroy(NULL);
  hierarchy_free(&h);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "multigrid", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(20261122);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_cycle_and_smoother),
      cmocka_unit_test(test_coarse_solvers_agree),
      cmocka_unit_test(test_float),
      cmocka_unit_test(test_mesh_independent),
      cmocka_unit_test(test_preconditioned_cg),
      cmocka_unit_test(test_chebyshev_bound),
      cmocka_unit_test(test_bad_arguments),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("multigrid", tests, setup, teardown);
}
