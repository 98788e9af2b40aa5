/* Device matrices made from CSR arrays on the device
 * (clmg_matrix_create_from_device) and their in-place value updates: every
 * format and precision must act exactly as the matrix made from the same
 * host CSR (the same layout and kernels, so bit for bit), on random
 * matrices with empty rows and very long rows; diagonals follow updates; a
 * hierarchy refreshed after an update gives the iterates of one built anew. */
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

/* A random square matrix: rows of 0 to 12 entries, two rows of 3000 (CSR's
 * long-row segments when csr_vector_min is small), a nonzero diagonal on
 * most rows, random values. */
static clmg_csr random_matrix(size_t n) {
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    size_t length = i == 7 || i == n / 2 ? 3000 : (i % 11 == 5 ? 0 : rng_below(13));
    for (size_t k = 0; k < length; ++k)
      triplets_add(&t, i, rng_below(n), rng_uniform() * 2.0 - 1.0);
    if (length > 0)
      triplets_add(&t, i, i, 4.0 + rng_uniform());
  }
  return triplets_to_csr(&t, n);
}

typedef struct device_arrays {
  clmg_vector *row_ptr, *col, *val;
} device_arrays;

static device_arrays upload_arrays(const clmg_csr *a, clmg_dtype value_type) {
  device_arrays d = {NULL, NULL, NULL};
  size_t nnz = clmg_csr_nnz(a);
  CHECK_OK(clmg_vector_create(ctx, CLMG_INT64, a->rows + 1, &d.row_ptr));
  CHECK_OK(clmg_vector_create(ctx, CLMG_INT32, nnz, &d.col));
  CHECK_OK(clmg_vector_create(ctx, value_type, nnz, &d.val));
  CHECK_OK(clmg_vector_upload(d.row_ptr, a->row_ptr));
  CHECK_OK(clmg_vector_upload(d.col, a->col));
  CHECK_OK(clmg_vector_upload_doubles(d.val, a->val));
  return d;
}

static void free_arrays(device_arrays *d) {
  clmg_vector_destroy(d->row_ptr);
  clmg_vector_destroy(d->col);
  clmg_vector_destroy(d->val);
}

/* y = A x, the Jacobi step and the diagonal of two matrices agree bit for bit. */
static void expect_same(clmg_matrix *from_host, clmg_matrix *from_device, clmg_dtype type, size_t n,
                        const char *what) {
  assert_int_equal(clmg_matrix_format_of(from_host), clmg_matrix_format_of(from_device));
  assert_int_equal(clmg_matrix_nnz(from_host), clmg_matrix_nnz(from_device));
  clmg_vector *x = NULL, *y1 = NULL, *y2 = NULL, *d = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &x));
  CHECK_OK(clmg_vector_create(ctx, type, n, &y1));
  CHECK_OK(clmg_vector_create(ctx, type, n, &y2));
  CHECK_OK(clmg_vector_create(ctx, type, n, &d));
  double *host = malloc(n * sizeof *host), *h1 = malloc(n * sizeof *h1),
         *h2 = malloc(n * sizeof *h2);
  assert_non_null(host);
  assert_non_null(h1);
  assert_non_null(h2);
  for (size_t i = 0; i < n; ++i)
    host[i] = rng_uniform() * 2.0 - 1.0;
  CHECK_OK(clmg_vector_upload_doubles(x, host));
  for (int op = 0; op < 3; ++op) {
    if (op == 0) {
      CHECK_OK(clmg_spmv(1.0, from_host, x, 0.0, y1));
      CHECK_OK(clmg_spmv(1.0, from_device, x, 0.0, y2));
    } else if (op == 1) {
      CHECK_OK(clmg_vector_fill(d, 0.25));
      CHECK_OK(clmg_jacobi_step(from_host, 0.7, d, x, x, y1));
      CHECK_OK(clmg_jacobi_step(from_device, 0.7, d, x, x, y2));
    } else {
      CHECK_OK(clmg_matrix_diagonal(from_host, y1));
      CHECK_OK(clmg_matrix_diagonal(from_device, y2));
    }
    CHECK_OK(clmg_vector_download_doubles(y1, h1));
    CHECK_OK(clmg_vector_download_doubles(y2, h2));
    for (size_t i = 0; i < n; ++i)
      if (h1[i] != h2[i])
        fail_msg("%s, operation %d, row %zu: %.17g from host CSR, %.17g from device arrays", what,
                 op, i, h1[i], h2[i]);
  }
  free(host);
  free(h1);
  free(h2);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y1);
  clmg_vector_destroy(y2);
  clmg_vector_destroy(d);
}

static void test_every_format_and_update(void **state) {
  (void)state;
  const size_t n = 400;
  clmg_csr a = random_matrix(n);
  const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR, CLMG_FORMAT_ELLR, CLMG_FORMAT_SELL,
                                        CLMG_FORMAT_AUTO};
  for (int p = 0; p < 2; ++p)
    for (size_t f = 0; f < 4; ++f) {
      clmg_dtype type = p ? CLMG_FLOAT : CLMG_DOUBLE;
      clmg_matrix_options o;
      clmg_matrix_options_defaults(&o);
      o.format = formats[f];
      o.precision = type;
      o.csr_vector_min = 256; /* long rows cut into segments */
      char what[64];
      snprintf(what, sizeof what, "%s %s", clmg_matrix_format_name(formats[f]),
               clmg_dtype_name(type));
      /* values given in double for both precisions: converted on the device */
      device_arrays d = upload_arrays(&a, CLMG_DOUBLE);
      clmg_matrix *host = NULL, *device = NULL;
      CHECK_OK(clmg_matrix_create(ctx, &a, &o, &host));
      CHECK_OK(clmg_matrix_create_from_device(ctx, n, n, d.row_ptr, d.col, d.val, &o, &device));
      free_arrays(&d); /* the matrix keeps its own copies */
      expect_same(host, device, type, n, what);

      /* new values, in place, from device floats and from host doubles */
      clmg_csr b = {0};
      clmg_error error;
      CHECK_ERROR_OK(error, clmg_csr_copy(&a, &b, &error));
      for (size_t k = 0; k < clmg_csr_nnz(&b); ++k)
        b.val[k] = b.val[k] * 3.0 + (rng_uniform() - 0.5);
      clmg_matrix *fresh = NULL;
      CHECK_OK(clmg_matrix_create(ctx, &b, &o, &fresh));
      if (f % 2 == 0) {
        CHECK_OK(clmg_matrix_update_values(device, b.val));
      } else {
        clmg_vector *values = NULL;
        CHECK_OK(clmg_vector_create(ctx, type, clmg_csr_nnz(&b), &values));
        CHECK_OK(clmg_vector_upload_doubles(values, b.val));
        CHECK_OK(clmg_matrix_update_values_device(device, values));
        clmg_vector_destroy(values);
      }
      snprintf(what, sizeof what, "%s %s updated", clmg_matrix_format_name(formats[f]),
               clmg_dtype_name(type));
      expect_same(fresh, device, type, n, what);
      clmg_matrix_destroy(fresh);
      clmg_csr_free(&b);
      clmg_matrix_destroy(host);
      clmg_matrix_destroy(device);
    }
  clmg_csr_free(&a);
}

static void test_bad_arrays(void **state) {
  (void)state;
  const size_t n = 50;
  clmg_csr a = random_matrix(n);
  device_arrays d = upload_arrays(&a, CLMG_DOUBLE);
  clmg_matrix *m = NULL;
  /* a column out of range */
  int32_t saved = a.col[3];
  a.col[3] = (int32_t)n;
  CHECK_OK(clmg_vector_upload(d.col, a.col));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_matrix_create_from_device(ctx, n, n, d.row_ptr, d.col, d.val, NULL, &m));
  CHECK_CONTAINS(clmg_context_message(ctx), "outside [0, 50)");
  assert_null(m);
  a.col[3] = saved;
  CHECK_OK(clmg_vector_upload(d.col, a.col));
  /* offsets that do not end at the entry count */
  int64_t end = a.row_ptr[n];
  a.row_ptr[n] = end - 1;
  CHECK_OK(clmg_vector_upload(d.row_ptr, a.row_ptr));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_matrix_create_from_device(ctx, n, n, d.row_ptr, d.col, d.val, NULL, &m));
  CHECK_CONTAINS(clmg_context_message(ctx), "row offsets run from");
  a.row_ptr[n] = end;
  CHECK_OK(clmg_vector_upload(d.row_ptr, a.row_ptr));
  /* wrong types */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_matrix_create_from_device(ctx, n, n, d.col, d.col, d.val, NULL, &m));
  CHECK_CONTAINS(clmg_context_message(ctx), "must be int64");
  /* a matrix from host CSR cannot be updated in place */
  CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &m));
  CHECK_STATUS(CLMG_ERROR_UNSUPPORTED, clmg_matrix_update_values(m, a.val));
  CHECK_CONTAINS(clmg_context_message(ctx), "clmg_matrix_create_from_device");
  clmg_matrix_destroy(m);
  free_arrays(&d);
  clmg_csr_free(&a);
}

/* 1-D Laplacians (1/h) tridiag(-1, 2, -1) on 7 and 15 nodes, linear
 * interpolation: a two-level hierarchy from device matrices. */
static clmg_csr laplacian_1d(size_t n, double scale) {
  triplets t = {0};
  double inverse_h = (double)(n + 1) * scale;
  for (size_t i = 0; i < n; ++i) {
    triplets_add(&t, i, i, 2.0 * inverse_h);
    if (i > 0)
      triplets_add(&t, i, i - 1, -inverse_h);
    if (i + 1 < n)
      triplets_add(&t, i, i + 1, -inverse_h);
  }
  return triplets_to_csr(&t, n);
}

static clmg_csr interpolation_1d(size_t n, size_t nc) {
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    if (i % 2 == 1) {
      triplets_add(&t, i, i / 2, 1.0);
      continue;
    }
    if (i / 2 >= 1)
      triplets_add(&t, i, i / 2 - 1, 0.5);
    if (i / 2 < nc)
      triplets_add(&t, i, i / 2, 0.5);
  }
  clmg_csr p = triplets_to_csr(&t, n);
  p.cols = nc;
  return p;
}

static clmg_operator device_operator(const clmg_csr *a) {
  device_arrays d = upload_arrays(a, CLMG_DOUBLE);
  clmg_matrix *m = NULL;
  CHECK_OK(
      clmg_matrix_create_from_device(ctx, a->rows, a->cols, d.row_ptr, d.col, d.val, NULL, &m));
  free_arrays(&d);
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(m, 1, &op));
  return op;
}

/* After new values (a time step), refresh re-runs the smoothers' and the
 * coarse solver's setup: the iterates equal those of a hierarchy built from
 * the new values. */
static void test_refresh_after_update(void **state) {
  (void)state;
  const size_t n = 15, nc = 7;
  clmg_csr a0 = laplacian_1d(nc, 1.0), a1 = laplacian_1d(n, 1.0), p = interpolation_1d(n, nc), r;
  clmg_csr b0 = laplacian_1d(nc, 3.0), b1 = laplacian_1d(n, 3.0); /* the new values */
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_csr_transpose(&p, &r, &error));
  clmg_multigrid_level levels[2];
  memset(levels, 0, sizeof levels);
  levels[0].a = device_operator(&a0);
  levels[1].a = device_operator(&a1);
  levels[1].p = device_operator(&p);
  levels[1].r = device_operator(&r);
  clmg_matrix *m0 = clmg_operator_matrix(&levels[0].a), *m1 = clmg_operator_matrix(&levels[1].a);
  clmg_multigrid *updated = NULL, *rebuilt = NULL;
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.smoother = CLMG_SMOOTHER_CHEBYSHEV; /* its setup depends on the values most */
  CHECK_OK(clmg_multigrid_create_from_levels(ctx, 2, levels, &options, &updated));
  CHECK_OK(clmg_matrix_update_values(m0, b0.val));
  CHECK_OK(clmg_matrix_update_values(m1, b1.val));
  CHECK_OK(clmg_multigrid_refresh(updated));
  clmg_csr as[2] = {b0, b1}, ps[2] = {{0}, p};
  CHECK_OK(clmg_multigrid_create(ctx, 2, as, ps, NULL, &options, &rebuilt));
  assert_true(fabs(clmg_multigrid_lambda_max(updated, 1) - clmg_multigrid_lambda_max(rebuilt, 1)) <=
              1e-12 * clmg_multigrid_lambda_max(rebuilt, 1));

  double rhs[15], x1[15], x2[15];
  for (size_t i = 0; i < n; ++i)
    rhs[i] = rng_uniform() - 0.5;
  clmg_vector *b = NULL, *x = NULL, *y = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &b));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &y));
  CHECK_OK(clmg_vector_upload(b, rhs));
  for (int cycle = 0; cycle < 3; ++cycle) {
    CHECK_OK(clmg_multigrid_cycle(updated, b, x));
    CHECK_OK(clmg_multigrid_cycle(rebuilt, b, y));
  }
  CHECK_OK(clmg_vector_download(x, x1));
  CHECK_OK(clmg_vector_download(y, x2));
  for (size_t i = 0; i < n; ++i)
    if (fabs(x1[i] - x2[i]) > 1e-13 * (1.0 + fabs(x2[i])))
      fail_msg("entry %zu: %.17g refreshed, %.17g rebuilt", i, x1[i], x2[i]);
  /* and the cycles solve the new system */
  double residual[15];
  memcpy(residual, rhs, sizeof residual);
  clmg_csr_spmv_host(-1.0, &b1, x1, 1.0, residual);
  double rn = 0, bn = 0;
  for (size_t i = 0; i < n; ++i) {
    rn += residual[i] * residual[i];
    bn += rhs[i] * rhs[i];
  }
  assert_true(sqrt(rn / bn) < 1e-3);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  clmg_multigrid_destroy(updated);
  clmg_multigrid_destroy(rebuilt);
  clmg_csr *all[] = {&a0, &a1, &p, &r, &b0, &b1};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k)
    clmg_csr_free(all[k]);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "matrix_device", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(20261124);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_format_and_update),
      cmocka_unit_test(test_bad_arrays),
      cmocka_unit_test(test_refresh_after_update),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("matrix_device", tests, setup, teardown);
}
