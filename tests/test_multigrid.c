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

/* The side of the hand-made grid of test_grid_laplacian at `level`. */
static size_t side(int level) {
  return ((size_t)1 << (level + 1)) + 1;
}

typedef struct hierarchy {
  int levels;
  clmg_csr a[8], p[8];
} hierarchy;

static void hierarchy_build(hierarchy *h, int levels) {
  memset(h, 0, sizeof *h);
  h->levels = levels;
  for (int l = 0; l < levels; ++l) {
    h->a[l] = test_grid_laplacian(l);
    if (l > 0)
      h->p[l] = test_grid_prolongation(l);
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
  /* smoother steps from zero as the coarse solve (clmg_coarse_solver_smoother):
   * 40 Jacobi steps on the coarsest level's few rows, also close to exact */
  clmg_multigrid_options_defaults(&options);
  clmg_smoother jacobi;
  CHECK_OK(clmg_smoother_jacobi(ctx, 0.7, &jacobi));
  CHECK_OK(clmg_coarse_solver_smoother(&jacobi, 40, &options.coarse_solver));
  assert_null(jacobi.apply); /* taken over */
  int steps = solve_checked(4, &options, 1e-10, 1e-6, "Jacobi steps as the coarse solve");
  assert_true(steps >= direct - 1 && steps <= direct + 3);
  assert_int_equal(clmg_coarse_solver_smoother(&jacobi, 4, &options.coarse_solver),
                   CLMG_ERROR_INVALID_ARGUMENT); /* no smoother left */
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

/* A float solve asked for 1e-12 cannot get there: it must stop at the
 * rounding floor and say so, not run to the iteration limit or claim
 * convergence. Damping 2.5 makes Jacobi diverge, which must be named. */
static void test_stall_and_divergence_are_reported(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 5);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.matrix.precision = CLMG_FLOAT;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, 5, h.a, h.p, NULL, &options, &mg));
  problem pr;
  problem_make(&pr, &h.a[4], CLMG_FLOAT);
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-12;
  ko.max_iterations = 500;
  clmg_krylov_result result;
  CHECK_STATUS(CLMG_ERROR_NOT_CONVERGED,
               clmg_multigrid_solve(mg, pr.b_device, pr.x_device, &ko, &result));
  CHECK_CONTAINS(clmg_context_message(ctx), "stalled");
  CHECK_CONTAINS(clmg_context_message(ctx), "rounding floor");
  assert_false(result.converged);
  assert_true(result.iterations < 60); /* stopped early, not at the limit */
  assert_true(result.relative_residual > 1e-12 && result.relative_residual < 1e-4);
  clmg_krylov_result_free(&result);
  clmg_multigrid_destroy(mg);
  problem_free(&pr);

  clmg_multigrid_options_defaults(&options);
  options.omega = 2.5;
  CHECK_OK(clmg_multigrid_create(ctx, 5, h.a, h.p, NULL, &options, &mg));
  problem_make(&pr, &h.a[4], CLMG_DOUBLE);
  ko.relative_tolerance = 1e-8;
  CHECK_STATUS(CLMG_ERROR_NOT_CONVERGED,
               clmg_multigrid_solve(mg, pr.b_device, pr.x_device, &ko, &result));
  CHECK_CONTAINS(clmg_context_message(ctx), "diverged");
  clmg_krylov_result_free(&result);
  clmg_multigrid_destroy(mg);
  problem_free(&pr);
  hierarchy_free(&h);
}

/* coarse_max_rows: the finest level with at most that many rows becomes the
 * coarse level (solved directly), the coarser ones are dropped. */
static void test_coarse_max_rows(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 5); /* 9, 25, 81, 289, 1089 rows */
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.coarse_max_rows = 100;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, 5, h.a, h.p, NULL, &options, &mg));
  assert_int_equal(clmg_multigrid_levels(mg), 3);
  assert_int_equal(clmg_multigrid_operator(mg, 0)->rows, 81);
  assert_string_equal(clmg_multigrid_coarse_solver(mg), "direct");
  clmg_multigrid_destroy(mg);
  hierarchy_free(&h);
  int cycles = solve_checked(5, &options, 1e-10, 1e-6, "coarse level of at most 100 rows");
  clmg_multigrid_options_defaults(&options);
  int full = solve_checked(5, &options, 1e-10, 1e-6, "all five levels");
  assert_true(cycles <= full); /* an exact solve on a finer level helps, if anything */
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

/* The diagonal smoothers' weights, made on the device: one step from a
 * zero guess is x = W b, against the host's W on a random matrix (random
 * diagonal and off-diagonal values, rows of 1 to 9 entries), for a matrix
 * built from host CSR and one built from device arrays; a zero diagonal
 * entry is named by its row (the first such row). */
static void test_diagonal_smoother_weights(void **state) {
  (void)state;
  const size_t n = 700;
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    triplets_add(&t, i, i, 0.5 + rng_uniform());
    for (size_t k = rng_below(9); k > 0; --k)
      triplets_add(&t, i, rng_below(n), rng_uniform() * 2.0 - 1.0);
  }
  clmg_csr a = triplets_to_csr(&t, n);
  double *diagonal = calloc(n, sizeof *diagonal), *squares = calloc(n, sizeof *squares);
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
  assert_non_null(diagonal);
  assert_non_null(squares);
  assert_non_null(b);
  assert_non_null(x);
  for (size_t i = 0; i < n; ++i) {
    b[i] = rng_uniform() * 2.0 - 1.0;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      diagonal[i] += (size_t)a.col[k] == i ? a.val[k] : 0.0;
      squares[i] += a.val[k] * a.val[k];
    }
  }
  clmg_vector *row_ptr = NULL, *col = NULL, *val = NULL, *bd = NULL, *xd = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_INT64, n + 1, &row_ptr));
  CHECK_OK(clmg_vector_create(ctx, CLMG_INT32, a.row_ptr[n], &col));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, a.row_ptr[n], &val));
  CHECK_OK(clmg_vector_upload(row_ptr, a.row_ptr));
  CHECK_OK(clmg_vector_upload(col, a.col));
  CHECK_OK(clmg_vector_upload_doubles(val, a.val));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &bd));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &xd));
  CHECK_OK(clmg_vector_upload_doubles(bd, b));
  for (int built = 0; built < 2; ++built)
    for (int kind = 0; kind < 3; ++kind) {
      clmg_matrix *m = NULL;
      if (built == 0)
        CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &m));
      else
        CHECK_OK(clmg_matrix_create_from_device(ctx, n, n, row_ptr, col, val, NULL, &m));
      clmg_operator op;
      CHECK_OK(clmg_operator_from_matrix(m, 1, &op));
      clmg_smoother smoother;
      const double omega = 0.6;
      if (kind == 0)
        CHECK_OK(clmg_smoother_jacobi(ctx, omega, &smoother));
      else if (kind == 1)
        CHECK_OK(clmg_smoother_spai0(ctx, omega, &smoother));
      else
        CHECK_OK(clmg_smoother_chebyshev(ctx, 0.3, 10, &smoother));
      CHECK_OK(smoother.setup(smoother.data, &op));
      if (kind < 2) { /* Chebyshev's first step also scales by its bounds */
        CHECK_OK(smoother.apply(smoother.data, &op, bd, xd, 1, 1));
        CHECK_OK(clmg_vector_download_doubles(xd, x));
        for (size_t i = 0; i < n; ++i) {
          double w = kind == 0 ? omega / diagonal[i] : omega * diagonal[i] / squares[i];
          if (!(fabs(x[i] - w * b[i]) <= 1e-14 * fabs(w * b[i])))
            fail_msg("%s smoother from %s, row %zu: x = %.17g, W b = %.17g",
                     kind ? "spai0" : "jacobi", built ? "device arrays" : "host CSR", i, x[i],
                     w * b[i]);
        }
      }
      clmg_smoother_destroy(&smoother);
      clmg_operator_destroy(&op);
    }
  /* zero diagonal entries in rows 41 and 300: the message names row 42 (1-based) */
  for (size_t z = 0; z < 2; ++z)
    for (int64_t k = a.row_ptr[z ? 300 : 41]; k < a.row_ptr[(z ? 300 : 41) + 1]; ++k)
      if ((size_t)a.col[k] == (z ? 300 : 41))
        a.val[k] = 0.0;
  for (int kind = 0; kind < 3; ++kind) {
    clmg_matrix *m = NULL;
    CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &m));
    clmg_operator op;
    CHECK_OK(clmg_operator_from_matrix(m, 1, &op));
    clmg_smoother smoother;
    if (kind == 0)
      CHECK_OK(clmg_smoother_jacobi(ctx, 0.6, &smoother));
    else if (kind == 1)
      CHECK_OK(clmg_smoother_spai0(ctx, 0.6, &smoother));
    else
      CHECK_OK(clmg_smoother_chebyshev(ctx, 0.3, 10, &smoother));
    assert_int_equal(smoother.setup(smoother.data, &op), CLMG_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(clmg_context_message(ctx), "row 42 has a zero diagonal entry");
    clmg_smoother_destroy(&smoother);
    clmg_operator_destroy(&op);
  }
  clmg_vector_destroy(row_ptr);
  clmg_vector_destroy(col);
  clmg_vector_destroy(val);
  clmg_vector_destroy(bd);
  clmg_vector_destroy(xd);
  clmg_csr_free(&a);
  free(diagonal);
  free(squares);
  free(b);
  free(x);
}

/* ---- the open engine ---- */

/* A smoother written outside the library: damped Jacobi composed from the
 * public operator and BLAS-1 calls, counting its calls. */
typedef struct user_smoother {
  clmg_vector *inverse_diagonal, *defect;
  int setups, applies;
} user_smoother;

static clmg_status user_setup(void *data, const clmg_operator *a) {
  user_smoother *s = data;
  s->setups++;
  clmg_vector_destroy(s->inverse_diagonal);
  clmg_vector_destroy(s->defect);
  s->inverse_diagonal = s->defect = NULL;
  double *d = malloc(a->rows * sizeof *d);
  assert_non_null(d);
  clmg_status status = clmg_vector_create(a->context, a->precision, a->rows, &s->inverse_diagonal);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(a->context, a->precision, a->rows, &s->defect);
  if (status == CLMG_SUCCESS)
    status = a->diagonal(a->data, s->inverse_diagonal);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(s->inverse_diagonal, d);
  for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; ++i)
    d[i] = 0.7 / d[i];
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(s->inverse_diagonal, d);
  free(d);
  return status;
}

static clmg_status user_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                              clmg_vector *x, int steps, int x_is_zero) {
  user_smoother *s = data;
  s->applies++;
  clmg_status status = x_is_zero ? clmg_vector_fill(x, 0.0) : CLMG_SUCCESS;
  for (int k = 0; k < steps && status == CLMG_SUCCESS; ++k) {
    status = clmg_operator_defect(a, b, x, s->defect);
    if (status == CLMG_SUCCESS)
      status = clmg_pointwise_multiply(s->inverse_diagonal, s->defect, s->defect);
    if (status == CLMG_SUCCESS)
      status = clmg_axpy(1.0, s->defect, x);
  }
  return status;
}

static void user_destroy(void *data) {
  user_smoother *s = data;
  clmg_vector_destroy(s->inverse_diagonal);
  clmg_vector_destroy(s->defect);
  s->inverse_diagonal = s->defect = NULL;
}

typedef struct user_factory {
  user_smoother smoothers[8];
  int made;
} user_factory;

static clmg_status make_user_smoother(void *factory_data, clmg_context *context, int level,
                                      const clmg_operator *a, clmg_smoother *smoother) {
  (void)context;
  (void)a;
  user_factory *f = factory_data;
  f->made++;
  memset(smoother, 0, sizeof *smoother);
  smoother->data = &f->smoothers[level];
  smoother->name = "user-jacobi";
  smoother->setup = user_setup;
  smoother->apply = user_apply;
  smoother->destroy = user_destroy;
  return CLMG_SUCCESS;
}

static void test_user_smoother(void **state) {
  (void)state;
  user_factory factory;
  memset(&factory, 0, sizeof factory);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.smoother_factory = make_user_smoother;
  options.smoother_factory_data = &factory;
  options.pre_smoothing = options.post_smoothing = 3;
  int cycles = solve_checked(4, &options, 1e-10, 1e-6, "user-defined smoother");
  /* 3 smoothed levels: one smoother each, set up once, called every cycle */
  assert_int_equal(factory.made, 3);
  for (int l = 1; l < 4; ++l) {
    assert_int_equal(factory.smoothers[l].setups, 1);
    assert_true(factory.smoothers[l].applies >= 2 * cycles);
  }
  print_message("user-defined Jacobi smoother: %d V(3,3) cycles to 1e-10\n", cycles);
  assert_true(cycles <= 20);
}

/* A two-level hierarchy from matrices made on the device from device CSR
 * arrays (through operators) gives the same iterates, bit for bit, as the
 * one the engine uploads from host CSR. */
static void test_levels_from_device_objects(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 2);
  clmg_csr r = {0};
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_csr_transpose(&h.p[1], &r, &error));
  clmg_multigrid *from_host = NULL, *from_device = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, 2, h.a, h.p, NULL, NULL, &from_host));

  clmg_multigrid_level levels[2];
  memset(levels, 0, sizeof levels);
  const clmg_csr *sources[4] = {&h.a[0], &h.a[1], &h.p[1], &r};
  clmg_operator *targets[4] = {&levels[0].a, &levels[1].a, &levels[1].p, &levels[1].r};
  for (int k = 0; k < 4; ++k) { /* CSR arrays on the device, a matrix made there */
    const clmg_csr *c = sources[k];
    clmg_vector *row_ptr = NULL, *col = NULL, *val = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_INT64, c->rows + 1, &row_ptr));
    CHECK_OK(clmg_vector_create(ctx, CLMG_INT32, clmg_csr_nnz(c), &col));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, clmg_csr_nnz(c), &val));
    CHECK_OK(clmg_vector_upload(row_ptr, c->row_ptr));
    CHECK_OK(clmg_vector_upload(col, c->col));
    CHECK_OK(clmg_vector_upload(val, c->val));
    clmg_matrix *m = NULL;
    CHECK_OK(clmg_matrix_create_from_device(ctx, c->rows, c->cols, row_ptr, col, val, NULL, &m));
    CHECK_OK(clmg_operator_from_matrix(m, 1, targets[k]));
    clmg_vector_destroy(row_ptr);
    clmg_vector_destroy(col);
    clmg_vector_destroy(val);
  }
  CHECK_OK(clmg_multigrid_create_from_levels(ctx, 2, levels, NULL, &from_device));
  assert_null(levels[1].a.apply); /* taken over */
  assert_string_equal(clmg_multigrid_smoother_name(from_device, 1), "jacobi");
  assert_string_equal(clmg_multigrid_coarse_solver(from_device), "direct");

  problem pr;
  problem_make(&pr, &h.a[1], CLMG_DOUBLE);
  clmg_vector *x_device = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, pr.n, &x_device));
  double *x_host = malloc(pr.n * sizeof *x_host), *x_dev = malloc(pr.n * sizeof *x_dev);
  assert_non_null(x_host);
  assert_non_null(x_dev);
  for (int cycle = 1; cycle <= 3; ++cycle) {
    CHECK_OK(clmg_multigrid_cycle(from_host, pr.b_device, pr.x_device));
    CHECK_OK(clmg_multigrid_cycle(from_device, pr.b_device, x_device));
    CHECK_OK(clmg_vector_download_doubles(pr.x_device, x_host));
    CHECK_OK(clmg_vector_download_doubles(x_device, x_dev));
    for (size_t i = 0; i < pr.n; ++i)
      if (x_host[i] != x_dev[i])
        fail_msg("cycle %d, entry %zu: %.17g from host CSR, %.17g from device objects", cycle, i,
                 x_host[i], x_dev[i]);
  }
  assert_true(problem_error(&pr) < 0.1); /* three two-grid cycles did solve */
  free(x_host);
  free(x_dev);
  clmg_vector_destroy(x_device);
  problem_free(&pr);
  clmg_multigrid_destroy(from_host);
  clmg_multigrid_destroy(from_device);
  clmg_csr_free(&r);
  hierarchy_free(&h);
}

/* ---- a saddle-point hierarchy ----
 * Minimise 1/2 u^T A u - f^T u subject to u(x_k) = g_k at two points, with
 * Lagrange multipliers: K = [A B^T; B 0], A the 1-D Laplacian (1/h)
 * tridiag(-1, 2, -1) on 2^(l+3) - 1 interior nodes, B selecting the nodes
 * at x = 1/4 and 1/2 (nodes of every level). P = diag(P_u, I), R = P^T, so
 * K_c = R K P exactly. K is indefinite and has zeros on its diagonal:
 * Jacobi must refuse it, and the engine must not care. The smoother is
 * written here: multiplicative patches with exact local solves (Vanka's
 * idea): each multiplier with its node and the two neighbours, every other
 * node alone, on the host over dense copies of K. */

enum { SADDLE_CONSTRAINTS = 2 };

static size_t saddle_nodes(int level) {
  return ((size_t)1 << (level + 3)) - 1;
}

static size_t saddle_constrained_node(int level, int k) {
  /* x = 1/4 and 1/2: node index x (m + 1) - 1 */
  size_t m1 = saddle_nodes(level) + 1;
  return (k == 0 ? m1 / 4 : m1 / 2) - 1;
}

typedef struct saddle_level {
  size_t n_u, n; /* velocity-like unknowns, all unknowns */
  clmg_csr a, b, bt, p_u, r_u, identity;
  double *dense; /* K, n x n row-major, for the host smoother and checks */
} saddle_level;

static void saddle_level_build(saddle_level *s, int level) {
  memset(s, 0, sizeof *s);
  s->n_u = saddle_nodes(level);
  s->n = s->n_u + SADDLE_CONSTRAINTS;
  double inverse_h = (double)(s->n_u + 1);
  triplets t = {0};
  for (size_t i = 0; i < s->n_u; ++i) {
    triplets_add(&t, i, i, 2.0 * inverse_h);
    if (i > 0)
      triplets_add(&t, i, i - 1, -inverse_h);
    if (i + 1 < s->n_u)
      triplets_add(&t, i, i + 1, -inverse_h);
  }
  s->a = triplets_to_csr(&t, s->n_u);
  triplets tb = {0}, ti = {0};
  for (int k = 0; k < SADDLE_CONSTRAINTS; ++k) {
    triplets_add(&tb, (size_t)k, saddle_constrained_node(level, k), 1.0);
    triplets_add(&ti, (size_t)k, (size_t)k, 1.0);
  }
  s->b = triplets_to_csr(&tb, s->n_u); /* n_u x n_u with two rows used: cut below */
  s->b.rows = SADDLE_CONSTRAINTS;
  s->identity = triplets_to_csr(&ti, SADDLE_CONSTRAINTS);
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_csr_transpose(&s->b, &s->bt, &error));
  if (level > 0) {
    size_t nc = saddle_nodes(level - 1);
    triplets tp = {0};
    for (size_t i = 0; i < s->n_u; ++i) {
      if (i % 2 == 1) {
        triplets_add(&tp, i, i / 2, 1.0);
        continue;
      }
      if (i / 2 >= 1)
        triplets_add(&tp, i, i / 2 - 1, 0.5);
      if (i / 2 < nc)
        triplets_add(&tp, i, i / 2, 0.5);
    }
    s->p_u = triplets_to_csr(&tp, s->n_u);
    s->p_u.cols = nc;
    CHECK_ERROR_OK(error, clmg_csr_transpose(&s->p_u, &s->r_u, &error));
  }
  s->dense = calloc(s->n * s->n, sizeof *s->dense);
  assert_non_null(s->dense);
  for (size_t i = 0; i < s->n_u; ++i)
    for (int64_t k = s->a.row_ptr[i]; k < s->a.row_ptr[i + 1]; ++k)
      s->dense[i * s->n + (size_t)s->a.col[k]] = s->a.val[k];
  for (int k = 0; k < SADDLE_CONSTRAINTS; ++k) {
    size_t node = saddle_constrained_node(level, k), row = s->n_u + (size_t)k;
    s->dense[row * s->n + node] = 1.0;
    s->dense[node * s->n + row] = 1.0;
  }
}

static void saddle_level_free(saddle_level *s) {
  clmg_csr *all[] = {&s->a, &s->b, &s->bt, &s->p_u, &s->r_u, &s->identity};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k)
    clmg_csr_free(all[k]);
  free(s->dense);
}

static clmg_operator matrix_operator(const clmg_csr *a) {
  clmg_matrix *m = NULL;
  clmg_operator op;
  CHECK_OK(clmg_matrix_create(ctx, a, NULL, &m));
  CHECK_OK(clmg_operator_from_matrix(m, 1, &op));
  return op;
}

/* [[a, b], [c, d]] over fields of sizes (r0, r1) x (c0, c1); NULL is a zero block. */
static clmg_operator block2(const clmg_csr *a, const clmg_csr *b, const clmg_csr *c,
                            const clmg_csr *d, size_t r0, size_t r1, size_t c0, size_t c1) {
  clmg_operator blocks[4];
  memset(blocks, 0, sizeof blocks);
  const clmg_csr *given[4] = {a, b, c, d};
  for (int k = 0; k < 4; ++k)
    if (given[k])
      blocks[k] = matrix_operator(given[k]);
  size_t rows[2] = {r0, r1}, cols[2] = {c0, c1};
  clmg_operator op;
  CHECK_OK(clmg_operator_block(ctx, 2, 2, rows, cols, blocks, 1, &op));
  return op;
}

typedef struct patch_smoother {
  const saddle_level *level;
  int applies;
} patch_smoother;

/* One multiplicative sweep over the patches: x_p += K_pp^-1 (b - K x)_p. */
static void patch_sweep(const saddle_level *s, const double *b, double *x) {
  size_t n = s->n;
  int in_patch[64] = {0};
  assert_true(n <= 64);
  size_t patches[SADDLE_CONSTRAINTS + 64][4];
  size_t sizes[SADDLE_CONSTRAINTS + 64];
  size_t count = 0;
  size_t level_nodes[SADDLE_CONSTRAINTS];
  for (int k = 0; k < SADDLE_CONSTRAINTS; ++k) {
    /* the constrained node is the one B selects: find it in K's last rows */
    size_t row = s->n_u + (size_t)k;
    for (size_t j = 0; j < s->n_u; ++j)
      if (s->dense[row * n + j] != 0)
        level_nodes[k] = j;
    size_t node = level_nodes[k];
    patches[count][0] = row;
    patches[count][1] = node;
    patches[count][2] = node - 1;
    patches[count][3] = node + 1;
    sizes[count++] = 4;
    in_patch[node] = in_patch[node - 1] = in_patch[node + 1] = 1;
  }
  for (size_t i = 0; i < s->n_u; ++i)
    if (!in_patch[i]) {
      patches[count][0] = i;
      sizes[count++] = 1;
    }
  for (size_t p = 0; p < count; ++p) {
    double local[16], rhs[4];
    size_t m = sizes[p];
    for (size_t a = 0; a < m; ++a) {
      size_t i = patches[p][a];
      double r = b[i];
      for (size_t j = 0; j < n; ++j)
        r -= s->dense[i * n + j] * x[j];
      rhs[a] = r;
      for (size_t c = 0; c < m; ++c)
        local[a * m + c] = s->dense[i * n + patches[p][c]];
    }
    dense_solve_in_place(local, rhs, m);
    for (size_t a = 0; a < m; ++a)
      x[patches[p][a]] += rhs[a];
  }
}

static clmg_status patch_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                               clmg_vector *x, int steps, int x_is_zero) {
  patch_smoother *ps = data;
  ps->applies++;
  size_t n = a->rows;
  double *bh = calloc(n, sizeof *bh), *xh = calloc(n, sizeof *xh);
  assert_non_null(bh);
  assert_non_null(xh);
  clmg_status status = clmg_vector_download_doubles(b, bh);
  if (status == CLMG_SUCCESS && !x_is_zero)
    status = clmg_vector_download_doubles(x, xh);
  for (int k = 0; status == CLMG_SUCCESS && k < steps; ++k)
    patch_sweep(ps->level, bh, xh);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(x, xh);
  free(bh);
  free(xh);
  return status;
}

static void test_saddle_point_hierarchy(void **state) {
  (void)state;
  enum { LEVELS = 3 };
  saddle_level s[LEVELS];
  patch_smoother smoothers[LEVELS];
  memset(smoothers, 0, sizeof smoothers);
  clmg_multigrid_level levels[LEVELS];
  memset(levels, 0, sizeof levels);
  for (int l = 0; l < LEVELS; ++l) {
    saddle_level_build(&s[l], l);
    size_t nu = s[l].n_u, m = SADDLE_CONSTRAINTS;
    levels[l].a = block2(&s[l].a, &s[l].bt, &s[l].b, NULL, nu, m, nu, m);
    if (l == 0)
      continue;
    size_t nuc = s[l - 1].n_u;
    levels[l].p = block2(&s[l].p_u, NULL, NULL, &s[l].identity, nu, m, nuc, m);
    levels[l].r = block2(&s[l].r_u, NULL, NULL, &s[l].identity, nuc, m, nu, m);
  }
  /* The engine asks nothing of the operator; Jacobi, asked, refuses it. */
  clmg_multigrid *mg = NULL;
  clmg_multigrid_level copy[LEVELS];
  for (int l = 0; l < LEVELS; ++l) {
    copy[l] = levels[l];
    copy[l].a.destroy = NULL; /* borrowed for this attempt */
    copy[l].p.destroy = NULL;
    copy[l].r.destroy = NULL;
  }
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_multigrid_create_from_levels(ctx, LEVELS, copy, NULL, &mg));
  CHECK_CONTAINS(clmg_context_message(ctx), "zero diagonal");
  assert_null(mg);

  for (int l = 1; l < LEVELS; ++l) {
    smoothers[l].level = &s[l];
    levels[l].smoother.data = &smoothers[l];
    levels[l].smoother.name = "patch";
    levels[l].smoother.apply = patch_apply;
  }
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  CHECK_OK(clmg_multigrid_create_from_levels(ctx, LEVELS, levels, &options, &mg));
  assert_string_equal(clmg_multigrid_coarse_solver(mg), "direct"); /* indefinite: pivoting */
  assert_string_equal(clmg_multigrid_smoother_name(mg, 2), "patch");

  const saddle_level *fine = &s[LEVELS - 1];
  size_t n = fine->n;
  double *rhs = malloc(n * sizeof *rhs), *x = malloc(n * sizeof *x), *k = malloc(n * n * sizeof *k);
  assert_non_null(rhs);
  assert_non_null(x);
  assert_non_null(k);
  for (size_t i = 0; i < n; ++i)
    rhs[i] = rng_uniform() - 0.5;
  clmg_vector *b_device = NULL, *x_device = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &b_device));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x_device));
  CHECK_OK(clmg_vector_upload_doubles(b_device, rhs));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  ko.max_iterations = 40;
  clmg_krylov_result result;
  CHECK_OK(clmg_multigrid_solve(mg, b_device, x_device, &ko, &result));
  print_message("saddle point, %zu unknowns (%d multipliers): %d V(2,2) cycles to 1e-10\n", n,
                SADDLE_CONSTRAINTS, result.iterations);
  assert_true(result.converged && result.relative_residual <= 1e-10);
  assert_true(result.iterations <= 25);
  assert_true(smoothers[LEVELS - 1].applies >= 2 * result.iterations);
  /* against a direct solve on the host */
  CHECK_OK(clmg_vector_download_doubles(x_device, x));
  memcpy(k, fine->dense, n * n * sizeof *k);
  dense_solve_in_place(k, rhs, n);
  double diff = 0, norm = 0;
  for (size_t i = 0; i < n; ++i) {
    diff = fmax(diff, fabs(x[i] - rhs[i]));
    norm = fmax(norm, fabs(rhs[i]));
  }
  if (!(diff <= 1e-7 * norm))
    fail_msg("max |x - x_direct| = %g (max |x_direct| = %g)", diff, norm);
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(b_device);
  clmg_vector_destroy(x_device);
  clmg_multigrid_destroy(mg);
  free(rhs);
  free(x);
  free(k);
  for (int l = 0; l < LEVELS; ++l)
    saddle_level_free(&s[l]);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "multigrid", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

/* The direct coarse solver (explicit inverse, one GEMV kernel per solve)
 * on a random nonsymmetric, indefinite matrix of a size that is no multiple
 * of any work-group size, in both precisions, against a host dense solve of
 * a random right-hand side. */
static void test_direct_coarse_solver_random(void **state) {
  (void)state;
  const size_t n = 133;
  triplets t = {0};
  double *dense = calloc(n * n, sizeof *dense), *rhs = malloc(n * sizeof *rhs);
  assert_non_null(dense);
  assert_non_null(rhs);
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 6; ++k) {
      size_t j = rng_below(n);
      double v = 2 * rng_uniform() - 1;
      triplets_add(&t, i, j, v);
      dense[i * n + j] += v;
    }
    double d = (i % 2 ? -1 : 1) * (4 + rng_uniform()); /* indefinite, well conditioned */
    triplets_add(&t, i, i, d);
    dense[i * n + i] += d;
    rhs[i] = 2 * rng_uniform() - 1;
  }
  clmg_csr a = triplets_to_csr(&t, n);
  double *expected = malloc(n * sizeof *expected), *x = malloc(n * sizeof *x);
  assert_non_null(expected);
  assert_non_null(x);
  memcpy(expected, rhs, n * sizeof *rhs);
  dense_solve_in_place(dense, expected, n);
  for (int p = 0; p < 2; ++p) {
    clmg_dtype type = p ? CLMG_FLOAT : CLMG_DOUBLE;
    clmg_matrix_options options;
    clmg_matrix_options_defaults(&options);
    options.precision = type;
    clmg_matrix *m = NULL;
    clmg_operator op;
    clmg_coarse_solver solver;
    clmg_vector *b = NULL, *xd = NULL;
    CHECK_OK(clmg_matrix_create(ctx, &a, &options, &m));
    CHECK_OK(clmg_operator_from_matrix(m, 1, &op));
    CHECK_OK(clmg_coarse_solver_direct(ctx, &solver));
    CHECK_OK(solver.setup(solver.data, &op));
    CHECK_OK(clmg_vector_create(ctx, type, n, &b));
    CHECK_OK(clmg_vector_create(ctx, type, n, &xd));
    CHECK_OK(clmg_vector_upload_doubles(b, rhs));
    CHECK_OK(clmg_vector_fill(xd, NAN)); /* x is not read */
    CHECK_OK(solver.solve(solver.data, &op, b, xd));
    CHECK_OK(clmg_vector_download_doubles(xd, x));
    double difference = 0, size = 0;
    for (size_t i = 0; i < n; ++i) {
      difference = fmax(difference, fabs(x[i] - expected[i]));
      size = fmax(size, fabs(expected[i]));
    }
    if (!(difference <= (p ? 1e-4 : 1e-11) * size))
      fail_msg("%s: max |x - x_host| = %g of max |x_host| = %g", clmg_dtype_name(type), difference,
               size);
    clmg_vector_destroy(b);
    clmg_vector_destroy(xd);
    clmg_coarse_solver_destroy(&solver);
    clmg_operator_destroy(&op);
  }
  free(dense);
  free(rhs);
  free(expected);
  free(x);
  clmg_csr_free(&a);
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
      cmocka_unit_test(test_stall_and_divergence_are_reported),
      cmocka_unit_test(test_coarse_max_rows),
      cmocka_unit_test(test_user_smoother),
      cmocka_unit_test(test_diagonal_smoother_weights),
      cmocka_unit_test(test_levels_from_device_objects),
      cmocka_unit_test(test_saddle_point_hierarchy),
      cmocka_unit_test(test_direct_coarse_solver_random),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("multigrid", tests, setup, teardown);
}
