/* Device SpMV family against a host reference: every format (and its tuning
 * knobs) x precision x operation, on random matrices with awkward shapes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

static clmg_context *context;

static uint64_t spmv_rng_state = 0x9e3779b97f4a7c15ULL;
static double random_uniform(void) { /* in [-1, 1) */
  spmv_rng_state ^= spmv_rng_state << 13;
  spmv_rng_state ^= spmv_rng_state >> 7;
  spmv_rng_state ^= spmv_rng_state << 17;
  return (double)(spmv_rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static size_t random_below(size_t n) {
  return (size_t)((random_uniform() + 1.0) * 0.5 * (double)n) % (n ? n : 1);
}

/* A random CSR matrix: row lengths drawn in [0, max_length], some rows empty
 * when allow_empty, row `dense_row` (if < rows) full; a nonzero diagonal on
 * square matrices so Jacobi is defined. */
static clmg_csr random_matrix(size_t rows, size_t cols, size_t max_length, int allow_empty,
                              size_t dense_row) {
  clmg_csr a = {rows, cols, calloc(rows + 1, sizeof(int64_t)), NULL, NULL};
  size_t capacity = rows * (max_length + 1) + cols + 1;
  a.col = malloc(capacity * sizeof(int32_t));
  a.val = malloc(capacity * sizeof(double));
  char *used = calloc(cols + 1, 1);
  assert_non_null(a.row_ptr);
  assert_non_null(a.col);
  assert_non_null(a.val);
  assert_non_null(used);
  size_t nnz = 0;
  for (size_t r = 0; r < rows; ++r) {
    size_t length = random_below(max_length + 1);
    if (!allow_empty && length == 0)
      length = 1;
    if (r == dense_row)
      length = cols;
    if (length > cols)
      length = cols;
    memset(used, 0, cols);
    if (rows == cols && length > 0)
      used[r] = 1;
    size_t chosen = rows == cols && length > 0 ? 1 : 0;
    while (chosen < length) {
      size_t c = random_below(cols);
      if (!used[c]) {
        used[c] = 1;
        ++chosen;
      }
    }
    for (size_t c = 0; c < cols; ++c)
      if (used[c]) {
        a.col[nnz] = (int32_t)c;
        a.val[nnz] = (size_t)c == r ? 4.0 + random_uniform() : random_uniform();
        ++nnz;
      }
    a.row_ptr[r + 1] = (int64_t)nnz;
  }
  free(used);
  return a;
}

static void free_matrix(clmg_csr *a) {
  free(a->row_ptr);
  free(a->col);
  free(a->val);
}

static double round_to(clmg_dtype type, double v) {
  return type == CLMG_FLOAT ? (double)(float)v : v;
}

static clmg_vector *make_vector(clmg_dtype type, size_t n, const double *values) {
  clmg_vector *v = NULL;
  assert_int_equal(clmg_vector_create(context, type, n, &v), CLMG_SUCCESS);
  if (n == 0)
    return v;
  if (type == CLMG_FLOAT) {
    float *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; ++i)
      f[i] = (float)values[i];
    assert_int_equal(clmg_vector_upload(v, f), CLMG_SUCCESS);
    free(f);
  } else {
    assert_int_equal(clmg_vector_upload(v, values), CLMG_SUCCESS);
  }
  return v;
}

static void read_vector(const clmg_vector *v, double *out) {
  size_t n = clmg_vector_length(v);
  if (n == 0)
    return;
  if (clmg_vector_type(v) == CLMG_FLOAT) {
    float *f = malloc(n * sizeof *f);
    assert_int_equal(clmg_vector_download(v, f), CLMG_SUCCESS);
    for (size_t i = 0; i < n; ++i)
      out[i] = f[i];
    free(f);
  } else {
    assert_int_equal(clmg_vector_download(v, out), CLMG_SUCCESS);
  }
}

/* |got - want| <= tol * (sum of |terms| of the row), the condition-aware
 * bound of a dot product. */
static void expect_close(const double *got, const double *want, const double *scale, size_t n,
                         double tol, const char *what) {
  for (size_t i = 0; i < n; ++i) {
    double bound = tol * (scale[i] + 1e-300);
    if (!(fabs(got[i] - want[i]) <= bound)) {
      fail_msg("%s: row %zu got %.17g want %.17g (bound %.3g)", what, i, got[i], want[i], bound);
    }
  }
}

typedef struct shape {
  const char *name;
  size_t rows, cols, max_length;
  int allow_empty;
  size_t dense_row; /* SIZE_MAX: none */
} shape;

static const shape shapes[] = {
    {"1x1", 1, 1, 1, 0, SIZE_MAX},
    {"square with empty rows", 301, 301, 9, 1, SIZE_MAX},
    {"square with one dense row", 257, 257, 6, 0, 100},
    {"rectangular tall", 333, 77, 5, 1, SIZE_MAX},
    {"rectangular wide", 45, 1001, 30, 0, 7},
    {"not a multiple of C or the work-group", 1031, 1031, 27, 0, SIZE_MAX},
    /* CSR cuts long rows into segments of 8192 entries */
    {"dense row over several CSR segments", 40, 20000, 8, 1, 3},
};

typedef struct variant {
  clmg_matrix_format format;
  unsigned ellr_threads, sell_slice, sell_sigma, csr_vector_min, csr_lanes;
} variant;

static const variant variants[] = {
    {CLMG_FORMAT_CSR, 0, 0, 0, 0, 0},
    {CLMG_FORMAT_CSR, 0, 0, 0, 12, 0}, /* long-row segments */
    /* the vector kernel (several work-items per row) that GPUs choose */
    {CLMG_FORMAT_CSR, 0, 0, 0, 0, 4},
    {CLMG_FORMAT_CSR, 0, 0, 0, 12, 32},
    {CLMG_FORMAT_ELLR, 1, 0, 0, 0, 0},
    {CLMG_FORMAT_ELLR, 2, 0, 0, 0, 0},
    {CLMG_FORMAT_ELLR, 8, 0, 0, 0, 0},
    {CLMG_FORMAT_SELL, 0, 4, 1, 0, 0},
    {CLMG_FORMAT_SELL, 0, 8, 64, 0, 0},
    {CLMG_FORMAT_SELL, 0, 32, 128, 0, 0},
    {CLMG_FORMAT_AUTO, 0, 0, 0, 0, 0},
};

static void check_all_operations(clmg_dtype type) {
  double tol = type == CLMG_FLOAT ? 1e-5 : 1e-12;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const shape *sh = &shapes[s];
    clmg_csr a = random_matrix(sh->rows, sh->cols, sh->max_length, sh->allow_empty, sh->dense_row);
    size_t rows = a.rows, cols = a.cols, nnz = (size_t)a.row_ptr[rows];
    /* the matrix as the device sees it (rounded to the precision) */
    for (size_t k = 0; k < nnz; ++k)
      a.val[k] = round_to(type, a.val[k]);
    double *x = malloc((cols + 3) * sizeof *x), *y0 = malloc(rows * sizeof *y0);
    double *ax = malloc(rows * sizeof *ax), *scale = malloc(rows * sizeof *scale);
    double *want = malloc(rows * sizeof *want), *got = malloc(rows * sizeof *got);
    double *dinv = malloc(rows * sizeof *dinv), *diag = calloc(rows, sizeof *diag);
    for (size_t i = 0; i < cols + 3; ++i)
      x[i] = round_to(type, random_uniform());
    for (size_t i = 0; i < rows; ++i)
      y0[i] = round_to(type, random_uniform());
    for (size_t r = 0; r < rows; ++r) {
      ax[r] = scale[r] = 0;
      for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        /* x is read through a view at offset 3 below */
        ax[r] += a.val[k] * x[a.col[k] + 3];
        scale[r] += fabs(a.val[k] * x[a.col[k] + 3]);
        if ((size_t)a.col[k] == r)
          diag[r] = a.val[k];
      }
    }
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
      const variant *var = &variants[v];
      clmg_matrix_options options;
      clmg_matrix_options_defaults(&options);
      options.format = var->format;
      options.precision = type;
      options.ellr_threads = var->ellr_threads;
      options.sell_slice = var->sell_slice;
      options.sell_sigma = var->sell_sigma;
      options.csr_vector_min = var->csr_vector_min;
      options.csr_lanes = var->csr_lanes;
      clmg_matrix *m = NULL;
      clmg_status status = clmg_matrix_create(context, &a, &options, &m);
      if (status != CLMG_SUCCESS)
        fail_msg("%s: create %s: %s", sh->name, clmg_matrix_format_name(var->format),
                 clmg_context_message(context));
      assert_int_equal(clmg_matrix_nnz(m), nnz);
      assert_true(clmg_matrix_stored_entries(m) >= nnz);
      char what[200];
      snprintf(what, sizeof what, "%s, %s, %s", sh->name, clmg_matrix_describe(m),
               clmg_dtype_name(type));

      clmg_vector *x_base = make_vector(type, cols + 3, x), *x_view = NULL;
      assert_int_equal(clmg_vector_view(x_base, 3, cols, &x_view), CLMG_SUCCESS);
      double alpha = round_to(type, 0.5 + random_uniform()),
             beta = round_to(type, random_uniform());

      /* y = alpha A x + 0 y: y starts as NaN and must not be read */
      double *nans = malloc(rows * sizeof *nans);
      for (size_t i = 0; i < rows; ++i)
        nans[i] = NAN;
      clmg_vector *y = make_vector(type, rows, nans);
      free(nans);
      assert_int_equal(clmg_spmv(alpha, m, x_view, 0.0, y), CLMG_SUCCESS);
      read_vector(y, got);
      double *scaled = malloc(rows * sizeof *scaled);
      for (size_t i = 0; i < rows; ++i) {
        want[i] = alpha * ax[i];
        scaled[i] = fabs(alpha) * scale[i];
      }
      expect_close(got, want, scaled, rows, tol, what);

      /* y = alpha A x + beta y */
      clmg_vector_destroy(y);
      y = make_vector(type, rows, y0);
      assert_int_equal(clmg_spmv(alpha, m, x_view, beta, y), CLMG_SUCCESS);
      read_vector(y, got);
      for (size_t i = 0; i < rows; ++i) {
        want[i] = alpha * ax[i] + beta * y0[i];
        scaled[i] = fabs(alpha) * scale[i] + fabs(beta * y0[i]);
      }
      expect_close(got, want, scaled, rows, tol, what);

      /* r = b - A x */
      clmg_vector *b = make_vector(type, rows, y0), *r = make_vector(type, rows, y0);
      assert_int_equal(clmg_defect(m, b, x_view, r), CLMG_SUCCESS);
      read_vector(r, got);
      for (size_t i = 0; i < rows; ++i) {
        want[i] = y0[i] - ax[i];
        scaled[i] = scale[i] + fabs(y0[i]);
      }
      expect_close(got, want, scaled, rows, tol, what);

      int zero_diagonal = 0;
      for (size_t i = 0; i < rows && rows == cols; ++i)
        zero_diagonal |= diag[i] == 0;
      if (zero_diagonal) {
        clmg_vector *inverse = make_vector(type, rows, y0);
        assert_int_equal(clmg_matrix_inverse_diagonal(m, inverse), CLMG_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(clmg_context_message(context), "zero diagonal"));
        clmg_vector_destroy(inverse);
      } else if (rows == cols) {
        /* x_new = x + omega D^-1 (b - A x) */
        clmg_vector *inverse = make_vector(type, rows, y0), *x_new = make_vector(type, rows, y0);
        assert_int_equal(clmg_matrix_inverse_diagonal(m, inverse), CLMG_SUCCESS);
        read_vector(inverse, dinv);
        for (size_t i = 0; i < rows; ++i) {
          double expected = diag[i] != 0 ? 1.0 / diag[i] : 0;
          assert_true(fabs(dinv[i] - expected) <= tol * fabs(expected));
        }
        double omega = round_to(type, 0.6 + 0.1 * random_uniform());
        assert_int_equal(clmg_jacobi_step(m, omega, inverse, b, x_view, x_new), CLMG_SUCCESS);
        read_vector(x_new, got);
        for (size_t i = 0; i < rows; ++i) {
          want[i] = x[i + 3] + omega * dinv[i] * (y0[i] - ax[i]);
          scaled[i] = fabs(x[i + 3]) + fabs(omega * dinv[i]) * (fabs(y0[i]) + scale[i]);
        }
        expect_close(got, want, scaled, rows, tol, what);
        /* Jacobi in place would read updated entries: refused */
        assert_int_equal(clmg_jacobi_step(m, omega, inverse, b, x_view, x_view),
                         CLMG_ERROR_INVALID_ARGUMENT);
        /* two sweeps from zero in one pass: y = omega D^-1 b, then
         * x_new = y + omega D^-1 (b - A y); CSR with split long rows may
         * decline, and the operator's fallback then does it in two */
        {
          double *y_host = malloc(rows * sizeof *y_host), *w_host = malloc(rows * sizeof *w_host);
          for (size_t i = 0; i < rows; ++i) {
            w_host[i] = round_to(type, omega * dinv[i]);
            y_host[i] = round_to(type, w_host[i] * y0[i]);
          }
          for (size_t r2 = 0; r2 < rows; ++r2) {
            double ay = 0, ay_scale = 0;
            for (int64_t k = a.row_ptr[r2]; k < a.row_ptr[r2 + 1]; ++k) {
              ay += a.val[k] * y_host[a.col[k]];
              ay_scale += fabs(a.val[k] * y_host[a.col[k]]);
            }
            want[r2] = y_host[r2] + w_host[r2] * (y0[r2] - ay);
            scaled[r2] = fabs(y_host[r2]) + fabs(w_host[r2]) * (fabs(y0[r2]) + ay_scale);
          }
          clmg_status fused = clmg_jacobi_step_from_zero(m, omega, inverse, b, x_new);
          if (fused == CLMG_ERROR_UNSUPPORTED) {
            assert_int_equal(clmg_matrix_format_of(m), CLMG_FORMAT_CSR);
          } else {
            assert_int_equal(fused, CLMG_SUCCESS);
            read_vector(x_new, got);
            expect_close(got, want, scaled, rows, 4 * tol, what);
          }
          clmg_vector *w = make_vector(type, rows, w_host), *work = make_vector(type, rows, y0);
          clmg_operator op;
          assert_int_equal(clmg_operator_from_matrix(m, 0, &op), CLMG_SUCCESS);
          assert_int_equal(clmg_operator_weighted_step_from_zero(&op, w, b, x_new, work),
                           CLMG_SUCCESS);
          read_vector(x_new, got);
          expect_close(got, want, scaled, rows, 4 * tol, what);
          /* x_new on b would be read at neighbours after it is written: refused */
          assert_int_equal(clmg_jacobi_step_from_zero(m, omega, inverse, b, b),
                           CLMG_ERROR_INVALID_ARGUMENT);
          clmg_operator_destroy(&op);
          clmg_vector_destroy(w);
          clmg_vector_destroy(work);
          free(y_host);
          free(w_host);
        }
        /* d = beta d + omega w .* (b - A x), with w = D^-1 and d = x_new's
         * values (random), then beta = 0 on a NaN d, which must not be read */
        double *d0 = malloc(rows * sizeof *d0);
        read_vector(x_new, d0);
        assert_int_equal(clmg_scaled_defect(m, omega, inverse, b, x_view, beta, x_new),
                         CLMG_SUCCESS);
        read_vector(x_new, got);
        for (size_t i = 0; i < rows; ++i) {
          want[i] = beta * d0[i] + omega * dinv[i] * (y0[i] - ax[i]);
          scaled[i] = fabs(beta * d0[i]) + fabs(omega * dinv[i]) * (fabs(y0[i]) + scale[i]);
        }
        expect_close(got, want, scaled, rows, tol, what);
        for (size_t i = 0; i < rows; ++i)
          d0[i] = NAN;
        clmg_vector *nan_d = make_vector(type, rows, d0);
        assert_int_equal(clmg_scaled_defect(m, omega, inverse, b, x_view, 0.0, nan_d),
                         CLMG_SUCCESS);
        read_vector(nan_d, got);
        clmg_vector_destroy(nan_d);
        for (size_t i = 0; i < rows; ++i) {
          want[i] = omega * dinv[i] * (y0[i] - ax[i]);
          scaled[i] = fabs(omega * dinv[i]) * (fabs(y0[i]) + scale[i]);
        }
        expect_close(got, want, scaled, rows, tol, what);
        free(d0);
        assert_int_equal(clmg_scaled_defect(m, omega, inverse, b, x_view, beta, x_view),
                         CLMG_ERROR_INVALID_ARGUMENT);
        clmg_vector_destroy(inverse);
        clmg_vector_destroy(x_new);
      }
      free(scaled);
      clmg_vector_destroy(b);
      clmg_vector_destroy(r);
      clmg_vector_destroy(y);
      clmg_vector_destroy(x_view);
      clmg_vector_destroy(x_base);
      clmg_matrix_destroy(m);
    }
    free(x);
    free(y0);
    free(ax);
    free(scale);
    free(want);
    free(got);
    free(dinv);
    free(diag);
    free_matrix(&a);
  }
}

static void test_double(void **state) {
  (void)state;
  check_all_operations(CLMG_DOUBLE);
}

static void test_float(void **state) {
  (void)state;
  check_all_operations(CLMG_FLOAT);
}

static void test_bad_arguments(void **state) {
  (void)state;
  clmg_csr a = random_matrix(10, 12, 3, 0, SIZE_MAX);
  clmg_matrix *m = NULL;
  assert_int_equal(clmg_matrix_create(context, &a, NULL, &m), CLMG_SUCCESS);
  clmg_vector *short_x = NULL, *y = NULL, *float_x = NULL, *d = NULL;
  assert_int_equal(clmg_vector_create(context, CLMG_DOUBLE, 11, &short_x), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(context, CLMG_DOUBLE, 10, &y), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(context, CLMG_FLOAT, 12, &float_x), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(context, CLMG_DOUBLE, 10, &d), CLMG_SUCCESS);
  assert_int_equal(clmg_spmv(1, m, short_x, 0, y), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(context), "11 elements"));
  assert_int_equal(clmg_spmv(1, m, float_x, 0, y), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(context), "float"));
  assert_int_equal(clmg_spmv(1, m, NULL, 0, y), CLMG_ERROR_INVALID_ARGUMENT);
  /* a rectangular matrix has no Jacobi step or inverse diagonal */
  assert_int_equal(clmg_matrix_inverse_diagonal(m, d), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(context), "not square"));
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.format = CLMG_FORMAT_ELLR;
  options.ellr_threads = 3;
  clmg_matrix *bad = NULL;
  assert_int_equal(clmg_matrix_create(context, &a, &options, &bad), CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(bad);
  clmg_vector_destroy(short_x);
  clmg_vector_destroy(y);
  clmg_vector_destroy(float_x);
  clmg_vector_destroy(d);
  clmg_matrix_destroy(m);
  free_matrix(&a);
}

static void test_format_names(void **state) {
  (void)state;
  clmg_matrix_format f;
  assert_true(clmg_matrix_format_parse("sell", &f));
  assert_int_equal(f, CLMG_FORMAT_SELL);
  assert_true(clmg_matrix_format_parse("ellr", &f));
  assert_int_equal(f, CLMG_FORMAT_ELLR);
  assert_false(clmg_matrix_format_parse("coo", &f));
  assert_string_equal(clmg_matrix_format_name(CLMG_FORMAT_CSR), "csr");
}

static int open_context(void **state) {
  (void)state;
  return test_open_context(&context, NULL, NULL, 0);
}

static int close_context(void **state) {
  (void)state;
  return test_close_context(&context);
}

int main(void) {
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_names),
      cmocka_unit_test(test_double),
      cmocka_unit_test(test_float),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests_name("spmv", tests, open_context, close_context);
}
