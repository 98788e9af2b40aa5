/* Nonsymmetric Krylov methods (GMRES(m), BiCGStab) through clmg_krylov_solve:
 * upwind convection-diffusion at Péclet numbers 10 to 1000 and an irregular
 * random nonsymmetric matrix, solved to 1e-10 and checked against a dense
 * direct solve on the host; the fused Gram-Schmidt kernels against host
 * references; restarts, iteration limits, the true-residual rule, and an
 * operator written by the caller. */
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

/* ---- problems ---- */

/* Rows of very different lengths (1 to 40, a few of 150), random values,
 * a diagonal that dominates its row: nonsymmetric and nonsingular. */
static clmg_csr irregular(size_t n) {
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    size_t length = i % 97 == 0 ? 150 : 1 + rng_below(40);
    double row_sum = 0;
    for (size_t k = 0; k < length; ++k) {
      size_t col = rng_below(n);
      if (col == i)
        continue;
      double value = rng_uniform() * 2.0 - 1.0;
      row_sum += fabs(value);
      triplets_add(&t, i, col, value);
    }
    triplets_add(&t, i, i, 1.2 * row_sum + 0.5);
  }
  return triplets_to_csr(&t, n);
}

/* Solves a x = b on the host (dense, partial pivoting); returns x. */
static double *dense_solve(const clmg_csr *a, const double *b) {
  size_t n = a->rows;
  double *m = calloc(n * n, sizeof *m), *x = malloc(n * sizeof *x);
  assert_non_null(m);
  assert_non_null(x);
  for (size_t i = 0; i < n; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      m[i * n + (size_t)a->col[k]] = a->val[k];
  memcpy(x, b, n * sizeof *x);
  dense_solve_in_place(m, x, n);
  free(m);
  return x;
}

static double norm2(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i)
    s += v[i] * v[i];
  return sqrt(s);
}

/* ---- a solve, checked ---- */

typedef struct checked_solve {
  clmg_krylov_method method;
  int jacobi;
  int restart;
  const char *what;
} checked_solve;

/* Solves with the method to 1e-10 from x = 0; checks the true residual on
 * the host and x against the direct solution; returns the iterations. */
static int solve_and_check(const clmg_csr *a, const double *b, const double *x_direct,
                           const checked_solve *c) {
  size_t n = a->rows;
  clmg_matrix *matrix = NULL;
  clmg_operator op;
  clmg_vector *bd = NULL, *xd = NULL;
  CHECK_OK(clmg_matrix_create(ctx, a, NULL, &matrix));
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &bd));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &xd));
  CHECK_OK(clmg_vector_upload(bd, b));
  clmg_preconditioner jacobi = {0};
  if (c->jacobi)
    CHECK_OK(clmg_preconditioner_jacobi(matrix, &jacobi));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  ko.max_iterations = 3000;
  ko.keep_history = 1;
  if (c->restart)
    ko.gmres_restart = c->restart;
  clmg_krylov_result result;
  clmg_counters before, after;
  clmg_context_counters(ctx, &before);
  clmg_status status =
      clmg_krylov_solve(c->method, &op, bd, xd, c->jacobi ? &jacobi : NULL, &ko, &result);
  clmg_context_counters(ctx, &after);
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", c->what, clmg_status_string(status), clmg_context_message(ctx));
  /* GMRES waits for at most two Gram-Schmidt read-backs an iteration (one
   * in double on one process; the coefficient uploads do not wait), and a
   * few times a restart (the residual recomputed from x). */
  uint64_t waits = after.host_waits - before.host_waits;
  int restart = c->restart ? c->restart : 30, restarts = result.iterations / restart + 1;
  print_message("%-44s %llu host waits\n", c->what, (unsigned long long)waits);
  if (c->method == CLMG_KRYLOV_GMRES &&
      waits > 2 * (uint64_t)result.iterations + 4 * (uint64_t)restarts + 8)
    fail_msg("%s: %llu host waits in %d iterations", c->what, (unsigned long long)waits,
             result.iterations);
  assert_true(result.converged);
  assert_true(result.relative_residual <= 1e-10);
  assert_int_equal(result.history_length > 0, 1);
  double *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
  assert_non_null(x);
  assert_non_null(r);
  CHECK_OK(clmg_vector_download(xd, x));
  memcpy(r, b, n * sizeof *r);
  clmg_csr_spmv_host(-1.0, a, x, 1.0, r);
  double relative = norm2(r, n) / norm2(b, n);
  double diff = 0;
  for (size_t i = 0; i < n; ++i)
    diff += (x[i] - x_direct[i]) * (x[i] - x_direct[i]);
  double error = sqrt(diff) / norm2(x_direct, n);
  print_message("%-44s %5d iterations, true residual %.2e, error vs direct %.2e\n", c->what,
                result.iterations, relative, error);
  if (!(relative <= 1.01e-10))
    fail_msg("%s: host residual %.3e above 1e-10", c->what, relative);
  if (!(error <= 1e-6))
    fail_msg("%s: ||x - x_direct|| / ||x_direct|| = %.3e", c->what, error);
  int iterations = result.iterations;
  free(x);
  free(r);
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&jacobi);
  clmg_vector_destroy(bd);
  clmg_vector_destroy(xd);
  clmg_operator_destroy(&op);
  return iterations;
}

static double *random_vector(size_t n) {
  double *v = malloc(n * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < n; ++i)
    v[i] = rng_uniform() * 2.0 - 1.0;
  return v;
}

static void check_all_methods(const clmg_csr *a, const char *name) {
  double *b = random_vector(a->rows);
  double *x_direct = dense_solve(a, b);
  const struct {
    clmg_krylov_method method;
    int jacobi;
    const char *label;
  } runs[] = {{CLMG_KRYLOV_GMRES, 0, "gmres(30)"},
              {CLMG_KRYLOV_GMRES, 1, "gmres(30) + jacobi"},
              {CLMG_KRYLOV_BICGSTAB, 0, "bicgstab"},
              {CLMG_KRYLOV_BICGSTAB, 1, "bicgstab + jacobi"}};
  for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
    char what[96];
    snprintf(what, sizeof what, "%s, %s", name, runs[k].label);
    checked_solve c = {runs[k].method, runs[k].jacobi, 0, what};
    solve_and_check(a, b, x_direct, &c);
  }
  free(b);
  free(x_direct);
}

/* ---- tests ---- */

static void test_convection_diffusion(void **state) {
  (void)state;
  const double pecletes[] = {10, 100, 1000};
  for (size_t k = 0; k < 3; ++k) {
    clmg_csr a = upwind_convection_diffusion(20, pecletes[k]);
    assert_false(clmg_csr_is_symmetric(&a, 1e-8));
    char name[64];
    snprintf(name, sizeof name, "convection-diffusion Pe %g", pecletes[k]);
    check_all_methods(&a, name);
    clmg_csr_free(&a);
  }
}

static void test_irregular(void **state) {
  (void)state;
  clmg_csr a = irregular(500);
  assert_false(clmg_csr_is_symmetric(&a, 1e-8));
  check_all_methods(&a, "irregular n=500");
  clmg_csr_free(&a);
}

/* GMRES(5) restarts many times and still reaches the solution; AUTO is
 * GMRES. */
static void test_short_restart(void **state) {
  (void)state;
  clmg_csr a = upwind_convection_diffusion(16, 100);
  double *b = random_vector(a.rows), *x_direct = dense_solve(&a, b);
  checked_solve c = {CLMG_KRYLOV_GMRES, 1, 5, "convection-diffusion Pe 100, gmres(5) + jacobi"};
  int iterations = solve_and_check(&a, b, x_direct, &c);
  assert_true(iterations > 5); /* it did restart */
  checked_solve automatic = {CLMG_KRYLOV_AUTO, 1, 5, "convection-diffusion Pe 100, auto + jacobi"};
  assert_int_equal(solve_and_check(&a, b, x_direct, &automatic), iterations);
  free(b);
  free(x_direct);
  clmg_csr_free(&a);
}

static void test_limits_and_true_residual(void **state) {
  (void)state;
  clmg_csr a = upwind_convection_diffusion(16, 100);
  size_t n = a.rows;
  double *b = random_vector(n);
  for (int precision = 0; precision < 2; ++precision) {
    clmg_dtype type = precision ? CLMG_FLOAT : CLMG_DOUBLE;
    clmg_matrix_options mo;
    clmg_matrix_options_defaults(&mo);
    mo.precision = type;
    clmg_matrix *m = NULL;
    clmg_operator op;
    clmg_vector *bd = NULL, *xd = NULL;
    CHECK_OK(clmg_matrix_create(ctx, &a, &mo, &m));
    CHECK_OK(clmg_operator_from_matrix(m, 1, &op));
    CHECK_OK(clmg_vector_create(ctx, type, n, &bd));
    CHECK_OK(clmg_vector_create(ctx, type, n, &xd));
    CHECK_OK(clmg_vector_upload_doubles(bd, b));
    for (int method = CLMG_KRYLOV_BICGSTAB; method <= CLMG_KRYLOV_GMRES; ++method) {
      clmg_krylov_options ko;
      clmg_krylov_options_defaults(&ko);
      clmg_krylov_result result;
      /* too few iterations: not converged, with the figures */
      ko.max_iterations = 3;
      CHECK_OK(clmg_vector_fill(xd, 0.0));
      CHECK_STATUS(CLMG_ERROR_NOT_CONVERGED,
                   clmg_krylov_solve((clmg_krylov_method)method, &op, bd, xd, NULL, &ko, &result));
      CHECK_CONTAINS(clmg_context_message(ctx), "after 3 iterations");
      assert_false(result.converged);
      clmg_krylov_result_free(&result);
      if (type != CLMG_FLOAT)
        continue;
      /* float cannot reach 1e-12: never reported as converged */
      ko.max_iterations = 2000;
      ko.relative_tolerance = 1e-12;
      CHECK_OK(clmg_vector_fill(xd, 0.0));
      clmg_status status =
          clmg_krylov_solve((clmg_krylov_method)method, &op, bd, xd, NULL, &ko, &result);
      assert_int_equal(status, CLMG_ERROR_NOT_CONVERGED);
      assert_false(result.converged);
      assert_true(result.relative_residual > 1e-12);
      /* ... and said to be float's floor, well before the 2000 iterations */
      CHECK_CONTAINS(clmg_context_message(ctx), "rounding floor");
      assert_true(result.iterations < 2000);
      clmg_krylov_result_free(&result);
    }
    clmg_vector_destroy(bd);
    clmg_vector_destroy(xd);
    clmg_operator_destroy(&op);
  }
  free(b);
  clmg_csr_free(&a);
}

/* CG through clmg_krylov_solve on an operator: the same iterates as
 * clmg_cg on the matrix. */
static void test_cg_on_operator(void **state) {
  (void)state;
  triplets t = {0};
  size_t n = 200;
  for (size_t i = 0; i < n; ++i) {
    triplets_add(&t, i, i, 2.5);
    if (i > 0)
      triplets_add(&t, i, i - 1, -1.0);
    if (i + 1 < n)
      triplets_add(&t, i, i + 1, -1.0);
  }
  clmg_csr a = triplets_to_csr(&t, n);
  double *b = random_vector(n), *x1 = malloc(n * sizeof *x1), *x2 = malloc(n * sizeof *x2);
  assert_non_null(x1);
  assert_non_null(x2);
  clmg_matrix *m = NULL;
  clmg_operator op;
  clmg_vector *bd = NULL, *xd = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &m));
  CHECK_OK(clmg_operator_from_matrix(m, 0, &op));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &bd));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &xd));
  CHECK_OK(clmg_vector_upload(bd, b));
  clmg_krylov_result r1, r2;
  CHECK_OK(clmg_cg(m, bd, xd, NULL, NULL, &r1));
  CHECK_OK(clmg_vector_download(xd, x1));
  CHECK_OK(clmg_vector_fill(xd, 0.0));
  CHECK_OK(clmg_krylov_solve(CLMG_KRYLOV_CG, &op, bd, xd, NULL, NULL, &r2));
  CHECK_OK(clmg_vector_download(xd, x2));
  assert_int_equal(r1.iterations, r2.iterations);
  for (size_t i = 0; i < n; ++i)
    assert_true(x1[i] == x2[i]);
  clmg_krylov_result_free(&r1);
  clmg_krylov_result_free(&r2);
  clmg_operator_destroy(&op);
  clmg_matrix_destroy(m);
  clmg_vector_destroy(bd);
  clmg_vector_destroy(xd);
  free(b);
  free(x1);
  free(x2);
  clmg_csr_free(&a);
}

/* An operator written here: A = D + N applied as two matrices, y = alpha (D x
 * + N x) + beta y, with no fused kernels and no diagonal. */
typedef struct split_operator {
  clmg_matrix *d, *rest;
} split_operator;

static clmg_status split_apply(void *data, double alpha, const clmg_vector *x, double beta,
                               clmg_vector *y) {
  split_operator *s = data;
  clmg_status status = clmg_spmv(alpha, s->d, x, beta, y);
  return status == CLMG_SUCCESS ? clmg_spmv(alpha, s->rest, x, 1.0, y) : status;
}

static void test_user_operator(void **state) {
  (void)state;
  clmg_csr a = upwind_convection_diffusion(16, 10);
  size_t n = a.rows;
  triplets td = {0}, tr = {0};
  for (size_t i = 0; i < n; ++i)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      triplets_add((size_t)a.col[k] == i ? &td : &tr, i, (size_t)a.col[k], a.val[k]);
  clmg_csr d = triplets_to_csr(&td, n), rest = triplets_to_csr(&tr, n);
  split_operator s = {NULL, NULL};
  CHECK_OK(clmg_matrix_create(ctx, &d, NULL, &s.d));
  CHECK_OK(clmg_matrix_create(ctx, &rest, NULL, &s.rest));
  clmg_operator op;
  memset(&op, 0, sizeof op);
  op.data = &s;
  op.context = ctx;
  op.rows = op.cols = n;
  op.precision = CLMG_DOUBLE;
  op.name = "split";
  op.apply = split_apply;
  double *b = random_vector(n), *x_direct = dense_solve(&a, b), *x = malloc(n * sizeof *x);
  assert_non_null(x);
  clmg_vector *bd = NULL, *xd = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &bd));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &xd));
  CHECK_OK(clmg_vector_upload(bd, b));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  clmg_krylov_result result;
  CHECK_OK(clmg_krylov_solve(CLMG_KRYLOV_GMRES, &op, bd, xd, NULL, &ko, &result));
  CHECK_OK(clmg_vector_download(xd, x));
  double diff = 0;
  for (size_t i = 0; i < n; ++i)
    diff = fmax(diff, fabs(x[i] - x_direct[i]));
  assert_true(diff <= 1e-6 * norm2(x_direct, n));
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(bd);
  clmg_vector_destroy(xd);
  clmg_matrix_destroy(s.d);
  clmg_matrix_destroy(s.rest);
  free(b);
  free(x);
  free(x_direct);
  clmg_csr_free(&a);
  clmg_csr_free(&d);
  clmg_csr_free(&rest);
}

/* The fused Gram-Schmidt kernels against host sums, both precisions. */
static void test_gram_schmidt_kernels(void **state) {
  (void)state;
  const size_t n = 1003, stride = 1010;
  const int k = 7;
  for (int precision = 0; precision < 2; ++precision) {
    clmg_dtype type = precision ? CLMG_FLOAT : CLMG_DOUBLE;
    double *basis = random_vector(stride * (size_t)k), *w = random_vector(n);
    double *c = random_vector((size_t)k);
    if (type == CLMG_FLOAT) { /* the device sees float values: compare with those */
      for (size_t i = 0; i < stride * (size_t)k; ++i)
        basis[i] = (float)basis[i];
      for (size_t i = 0; i < n; ++i)
        w[i] = (float)w[i];
      for (int j = 0; j < k; ++j)
        c[j] = (float)c[j];
    }
    clmg_vector *bd = NULL, *wd = NULL, *cd = NULL;
    CHECK_OK(clmg_vector_create(ctx, type, stride * (size_t)k, &bd));
    CHECK_OK(clmg_vector_create(ctx, type, n, &wd));
    CHECK_OK(clmg_vector_create(ctx, type, (size_t)k, &cd));
    CHECK_OK(clmg_vector_upload_doubles(bd, basis));
    CHECK_OK(clmg_vector_upload_doubles(wd, w));
    CHECK_OK(clmg_vector_upload_doubles(cd, c));
    double dots[8];
    CHECK_OK(clmg_multi_dot(bd, stride, k, wd, dots));
    double tolerance = type == CLMG_FLOAT ? 1e-4 : 1e-12;
    for (int j = 0; j <= k; ++j) {
      double expected = 0;
      for (size_t i = 0; i < n; ++i)
        expected += (j < k ? basis[(size_t)j * stride + i] : w[i]) * w[i];
      if (fabs(dots[j] - expected) > tolerance * (double)n)
        fail_msg("multi_dot %d (%s): %.10g, expected %.10g", j, clmg_dtype_name(type), dots[j],
                 expected);
    }
    CHECK_OK(clmg_multi_axpy(bd, stride, k, cd, wd));
    double *back = malloc(n * sizeof *back);
    assert_non_null(back);
    CHECK_OK(clmg_vector_download_doubles(wd, back));
    for (size_t i = 0; i < n; ++i) {
      double expected = w[i];
      for (int j = 0; j < k; ++j)
        expected -= c[j] * basis[(size_t)j * stride + i];
      if (fabs(back[i] - expected) > tolerance * 10)
        fail_msg("multi_axpy entry %zu (%s): %.10g, expected %.10g", i, clmg_dtype_name(type),
                 back[i], expected);
    }
    /* a basis that does not fit is refused */
    assert_int_equal(clmg_multi_dot(bd, stride, k + 1, wd, dots), CLMG_ERROR_INVALID_ARGUMENT);
    free(back);
    free(basis);
    free(w);
    free(c);
    clmg_vector_destroy(bd);
    clmg_vector_destroy(wd);
    clmg_vector_destroy(cd);
  }
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "nonsymmetric", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(20261124);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gram_schmidt_kernels),
      cmocka_unit_test(test_convection_diffusion),
      cmocka_unit_test(test_irregular),
      cmocka_unit_test(test_short_restart),
      cmocka_unit_test(test_limits_and_true_residual),
      cmocka_unit_test(test_cg_on_operator),
      cmocka_unit_test(test_user_operator),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("nonsymmetric", tests, setup, teardown);
}
