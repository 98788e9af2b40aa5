/* Device SpMV family against a host reference: every format (and its tuning
 * knobs) x precision x operation, on random matrices with awkward shapes. */
#define _POSIX_C_SOURCE 200809L /* setenv */
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
    {CLMG_FORMAT_CSR_ADAPTIVE, 0, 0, 0, 0, 0},
    {CLMG_FORMAT_CSR_ADAPTIVE, 0, 0, 0, 12, 0}, /* segments, and rows over 12 alone */
    {CLMG_FORMAT_HYBRID, 0, 0, 0, 0, 0},
    {CLMG_FORMAT_HYBRID, 0, 0, 0, 12, 0}, /* rows over 12 long */
    {CLMG_FORMAT_HYBRID, 2, 0, 0, 12, 0}, /* ELLR-2 for the short rows, where ELLR fits */
    {CLMG_FORMAT_HYBRID, 0, 4, 1, 3, 0},  /* SELL-4-1 for the short rows, where SELL is taken */
    {CLMG_FORMAT_AUTO, 0, 0, 0, 0, 0},
};

/* Every operation of every variant on a (its values rounded to the
 * precision here) against the host. */
static void check_operations(clmg_csr a, const char *name, clmg_dtype type, const variant *list,
                             size_t variant_count) {
  double tol = type == CLMG_FLOAT ? 1e-5 : 1e-12;
  {
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
    for (size_t v = 0; v < variant_count; ++v) {
      const variant *var = &list[v];
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
        fail_msg("%s: create %s: %s", name, clmg_matrix_format_name(var->format),
                 clmg_context_message(context));
      assert_int_equal(clmg_matrix_nnz(m), nnz);
      assert_true(clmg_matrix_stored_entries(m) >= nnz);
      char what[200];
      snprintf(what, sizeof what, "%s, %s, %s", name, clmg_matrix_describe(m),
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
         * x_new = y + omega D^-1 (b - A y), every format in one pass (long-row
         * segments included), and through the operator */
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
          assert_int_equal(clmg_jacobi_step_from_zero(m, omega, inverse, b, x_new), CLMG_SUCCESS);
          read_vector(x_new, got);
          expect_close(got, want, scaled, rows, 4 * tol, what);
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
  }
}

static void check_all_operations(clmg_dtype type) {
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const shape *sh = &shapes[s];
    clmg_csr a = random_matrix(sh->rows, sh->cols, sh->max_length, sh->allow_empty, sh->dense_row);
    check_operations(a, sh->name, type, variants, sizeof variants / sizeof variants[0]);
    free_matrix(&a);
  }
}

/* ---- CSR-Adaptive on very irregular rows ---- */

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* A matrix with the given row lengths (each at most cols): distinct sorted
 * columns, the diagonal among them on square matrices (4 + noise there, so
 * Jacobi is defined where no row is empty). */
static clmg_csr matrix_with_lengths(size_t rows, size_t cols, const size_t *lengths) {
  size_t nnz = 0;
  for (size_t r = 0; r < rows; ++r)
    nnz += lengths[r];
  clmg_csr a = {rows, cols, calloc(rows + 1, sizeof(int64_t)), malloc((nnz + 1) * sizeof(int32_t)),
                malloc((nnz + 1) * sizeof(double))};
  assert_non_null(a.row_ptr);
  assert_non_null(a.col);
  assert_non_null(a.val);
  size_t at = 0;
  for (size_t r = 0; r < rows; ++r) {
    size_t length = lengths[r];
    assert_true(length <= cols);
    int32_t *row = a.col + at;
    size_t chosen = 0;
    if (rows == cols && length > 0)
      row[chosen++] = (int32_t)r;
    if (length <= 64) { /* random columns, duplicates drawn again */
      while (chosen < length) {
        int32_t c = (int32_t)random_below(cols);
        int seen = 0;
        for (size_t k = 0; k < chosen && !seen; ++k)
          seen = row[k] == c;
        if (!seen)
          row[chosen++] = c;
      }
    } else { /* selection sampling: each column with the probability still needed */
      size_t needed = length - chosen;
      for (size_t c = 0; c < cols && needed > 0; ++c) {
        if (rows == cols && c == r)
          continue;
        size_t left = cols - c - (rows == cols && c < r ? 1 : 0);
        if (random_below(left) < needed) {
          row[chosen++] = (int32_t)c;
          --needed;
        }
      }
    }
    qsort(row, length, sizeof *row, compare_int32);
    for (size_t k = 0; k < length; ++k)
      a.val[at + k] = (size_t)row[k] == r ? 4.0 + random_uniform() : random_uniform();
    at += length;
    a.row_ptr[r + 1] = (int64_t)at;
  }
  return a;
}

/* Row lengths: a power law (Pareto, exponent 1.1: most rows 1 to 3, a few
 * in the thousands), with empty rows mixed in when allow_empty, and the
 * listed long rows. */
static void power_law_lengths(size_t rows, size_t cols, int allow_empty, size_t *lengths) {
  for (size_t r = 0; r < rows; ++r) {
    double u = (random_uniform() + 1.0) * 0.5 + 1e-12;
    double length = floor(pow(u, -1.0 / 1.1));
    lengths[r] = length >= (double)cols ? cols : (size_t)length;
    if (allow_empty && random_below(5) == 0)
      lengths[r] = 0;
  }
}

typedef struct irregular_case {
  const char *name;
  size_t rows, cols;
  int allow_empty;
  /* rows set after the power law: every `every`-th row (0: none) gets `length`, `length +
   * step` or `length + 2 step` in turn, and the rows in `long_rows` get long_length less a
   * tenth of it per place in the list */
  size_t every, length, step;
  size_t long_rows[3], long_count, long_length;
} irregular_case;

static const irregular_case irregular_cases[] = {
    {"one row", 1, 1, 0, 0, 0, 0, {0}, 0, 0},
    {"one empty row", 1, 1, 1, 1, 0, 0, {0}, 0, 0},
    {"two rows", 2, 2, 0, 0, 0, 0, {0}, 0, 0},
    {"seven rows, one full", 7, 7, 0, 0, 0, 0, {3}, 1, 7},
    {"power law", 3000, 3000, 0, 0, 0, 0, {0}, 0, 0},
    {"power law with empty rows", 3001, 2999, 1, 0, 0, 0, {0}, 0, 0},
    /* rows just under, at and over a work-group of 256 (alone or not), and
     * runs of rows that cross the windows of a block's first entries */
    {"rows of 255 to 257", 2000, 2000, 0, 3, 255, 1, {0}, 0, 0},
    {"rows of 767 to 1025", 1500, 1500, 0, 7, 767, 129, {0}, 0, 0},
    {"rows of 100 to 140", 1000, 1000, 0, 1, 100, 20, {0}, 0, 0},
    /* runs of more empty rows than a block holds */
    {"mostly empty rows", 5000, 5000, 1, 1, 0, 0, {2500, 4999}, 2, 40},
    {"rows of 1e4 to 1e5 among short rows", 20000, 100000, 1, 0, 0, 0, {0, 9999, 19999}, 3, 100000},
    {"rows of 1e4 among rows of 1", 40000, 40000, 0, 1, 1, 0, {1, 20000, 39998}, 3, 10000},
};

static void check_irregular(clmg_dtype type) {
  static const variant adaptive[] = {
      {CLMG_FORMAT_CSR_ADAPTIVE, 0, 0, 0, 0, 0},
      {CLMG_FORMAT_CSR_ADAPTIVE, 0, 0, 0, 5000, 0}, /* rows of 1e4 and more in segments */
      {CLMG_FORMAT_CSR_ADAPTIVE, 0, 0, 0, 100, 0},  /* rows over 100 alone or in segments */
      {CLMG_FORMAT_HYBRID, 0, 0, 0, 0, 0},
      {CLMG_FORMAT_HYBRID, 0, 0, 0, 100, 0},
      {CLMG_FORMAT_AUTO, 0, 0, 0, 0, 0},
  };
  for (size_t c = 0; c < sizeof irregular_cases / sizeof irregular_cases[0]; ++c) {
    const irregular_case *ic = &irregular_cases[c];
    size_t *lengths = malloc(ic->rows * sizeof *lengths);
    assert_non_null(lengths);
    power_law_lengths(ic->rows, ic->cols, ic->allow_empty, lengths);
    for (size_t r = 0; ic->every && r < ic->rows; r += ic->every)
      lengths[r] = ic->length + r / ic->every % 3 * ic->step;
    for (size_t k = 0; k < ic->long_count; ++k)
      lengths[ic->long_rows[k]] = ic->long_length - k * ic->long_length / 10;
    for (size_t r = 0; r < ic->rows; ++r)
      if (lengths[r] > ic->cols)
        lengths[r] = ic->cols;
    clmg_csr a = matrix_with_lengths(ic->rows, ic->cols, lengths);
    check_operations(a, ic->name, type, adaptive, sizeof adaptive / sizeof adaptive[0]);
    free_matrix(&a);
    free(lengths);
  }
}

/* ---- the hybrid's long rows ---- */

typedef struct hybrid_case {
  const char *name;
  size_t rows, cols, short_min, short_max; /* short rows of short_min to short_max entries */
  unsigned csr_vector_min;                 /* the threshold (0: the default, 8 mean rows, 256) */
  size_t long_rows[8], long_lengths[8], long_count;
  size_t want_long, want_segments; /* what describe must show */
} hybrid_case;

/* Long rows at, under and over multiples of the segment (8192 entries), and
 * over several segments; a matrix of long rows alone; one without any (and
 * with empty rows). The square ones without empty rows run the Jacobi steps
 * too (a diagonal in every row). */
static const hybrid_case hybrid_cases[] = {
    {"segment boundaries",
     3 * 8192 + 5,
     3 * 8192 + 5,
     1,
     9,
     0,
     {0, 10, 100, 200, 300, 3 * 8192 + 4},
     {257, 8192, 16384, 8193, 3 * 8192, 8191},
     6,
     6,
     10},
    {"only long rows", 5, 9000, 0, 0, 100, {0, 1, 2, 3, 4}, {300, 8192, 9000, 101, 8193}, 5, 5, 7},
    {"no long rows, empty rows", 2000, 2000, 0, 12, 0, {0}, {0}, 0, 0, 0},
    {"one row just over the threshold", 500, 500, 1, 9, 0, {250}, {257}, 1, 1, 1},
    {"one row at the threshold", 500, 500, 1, 9, 0, {250}, {256}, 1, 0, 0},
};

/* The long rows' segment length of this device (the device table's
 * csr_segment_length, a power of two): the segments of a probe hybrid with
 * one long row of 2^16 entries. */
static size_t hybrid_segment_length(clmg_dtype type) {
  const size_t rows = 300, long_length = (size_t)1 << 16;
  size_t *lengths = malloc(rows * sizeof *lengths);
  assert_non_null(lengths);
  for (size_t r = 0; r < rows; ++r)
    lengths[r] = 4;
  lengths[7] = long_length;
  clmg_csr a = matrix_with_lengths(rows, long_length + 1, lengths);
  free(lengths);
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.format = CLMG_FORMAT_HYBRID;
  options.precision = type;
  clmg_matrix *m = NULL;
  assert_int_equal(clmg_matrix_create(context, &a, &options, &m), CLMG_SUCCESS);
  const char *segments = strstr(clmg_matrix_describe(m), "segments=");
  assert_non_null(segments);
  size_t count = strtoul(segments + strlen("segments="), NULL, 10);
  clmg_matrix_destroy(m);
  free_matrix(&a);
  assert_true(count > 0 && long_length % count == 0);
  return long_length / count;
}

static void check_hybrid(clmg_dtype type) {
  const size_t segment = hybrid_segment_length(type);
  for (size_t c = 0; c < sizeof hybrid_cases / sizeof hybrid_cases[0]; ++c) {
    const hybrid_case *hc = &hybrid_cases[c];
    size_t *lengths = malloc(hc->rows * sizeof *lengths);
    assert_non_null(lengths);
    for (size_t r = 0; r < hc->rows; ++r)
      lengths[r] = hc->short_min + random_below(hc->short_max - hc->short_min + 1);
    for (size_t k = 0; k < hc->long_count; ++k)
      lengths[hc->long_rows[k]] = hc->long_lengths[k];
    clmg_csr a = matrix_with_lengths(hc->rows, hc->cols, lengths);
    free(lengths);
    variant list[] = {{CLMG_FORMAT_HYBRID, 0, 0, 0, hc->csr_vector_min, 0}};
    check_operations(a, hc->name, type, list, 1);
    /* the long rows and their segments */
    clmg_matrix_options options;
    clmg_matrix_options_defaults(&options);
    options.format = CLMG_FORMAT_HYBRID;
    options.precision = type;
    options.csr_vector_min = hc->csr_vector_min;
    clmg_matrix *m = NULL;
    assert_int_equal(clmg_matrix_create(context, &a, &options, &m), CLMG_SUCCESS);
    assert_int_equal(clmg_matrix_format_of(m), CLMG_FORMAT_HYBRID);
    /* want_segments counts 8192-entry segments; any other length from the
     * rows themselves (the long ones are those over the threshold) */
    size_t want_segments = hc->want_segments;
    if (segment != 8192) {
      want_segments = 0;
      for (size_t k = 0; k < hc->long_count; ++k)
        if (hc->long_lengths[k] > (hc->csr_vector_min ? hc->csr_vector_min : 256))
          want_segments += (hc->long_lengths[k] + segment - 1) / segment;
    }
    char want[64];
    snprintf(want, sizeof want, "long_rows=%zu segments=%zu", hc->want_long, want_segments);
    if (!strstr(clmg_matrix_describe(m), want))
      fail_msg("%s: %s, want %s", hc->name, clmg_matrix_describe(m), want);
    clmg_matrix_destroy(m);
    free_matrix(&a);
  }
}

static void test_hybrid_double(void **state) {
  (void)state;
  check_hybrid(CLMG_DOUBLE);
}

static void test_hybrid_float(void **state) {
  (void)state;
  check_hybrid(CLMG_FLOAT);
}

static void test_irregular_double(void **state) {
  (void)state;
  check_irregular(CLMG_DOUBLE);
}

static void test_irregular_float(void **state) {
  (void)state;
  check_irregular(CLMG_FLOAT);
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
  assert_true(clmg_matrix_format_parse("csr-adaptive", &f));
  assert_int_equal(f, CLMG_FORMAT_CSR_ADAPTIVE);
  assert_string_equal(clmg_matrix_format_name(CLMG_FORMAT_CSR_ADAPTIVE), "csr-adaptive");
  assert_true(clmg_matrix_format_parse("hybrid", &f));
  assert_int_equal(f, CLMG_FORMAT_HYBRID);
  assert_string_equal(clmg_matrix_format_name(CLMG_FORMAT_HYBRID), "hybrid");
}

/* The format the automatic choice makes for a, from host CSR and from
 * device arrays (the two must agree). */
static clmg_matrix_format automatic_choice(clmg_context *ctx, const clmg_csr *a, clmg_dtype type) {
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.precision = type;
  clmg_matrix *host = NULL, *device = NULL;
  if (clmg_matrix_create(ctx, a, &options, &host) != CLMG_SUCCESS)
    fail_msg("automatic format from host CSR: %s", clmg_context_message(ctx));
  size_t nnz = (size_t)a->row_ptr[a->rows];
  clmg_vector *row_ptr = NULL, *col = NULL, *val = NULL;
  assert_int_equal(clmg_vector_create(ctx, CLMG_INT64, a->rows + 1, &row_ptr), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(ctx, CLMG_INT32, nnz, &col), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(ctx, type, nnz, &val), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_upload(row_ptr, a->row_ptr), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_upload(col, a->col), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_upload_doubles(val, a->val), CLMG_SUCCESS);
  if (clmg_matrix_create_from_device(ctx, a->rows, a->cols, row_ptr, col, val, &options, &device) !=
      CLMG_SUCCESS)
    fail_msg("automatic format from device arrays: %s", clmg_context_message(ctx));
  clmg_matrix_format format = clmg_matrix_format_of(host);
  assert_int_equal(clmg_matrix_format_of(device), format);
  assert_string_equal(clmg_matrix_describe(device), clmg_matrix_describe(host));
  clmg_matrix_destroy(host);
  clmg_matrix_destroy(device);
  clmg_vector_destroy(row_ptr);
  clmg_vector_destroy(col);
  clmg_vector_destroy(val);
  return format;
}

/* A 9-point stencil on an m x m grid (rows of 4 to 9 entries). */
static clmg_csr stencil_matrix(size_t m) {
  size_t rows = m * m;
  clmg_csr a = {rows, rows, calloc(rows + 1, sizeof(int64_t)), malloc(9 * rows * sizeof(int32_t)),
                malloc(9 * rows * sizeof(double))};
  assert_non_null(a.row_ptr);
  assert_non_null(a.col);
  assert_non_null(a.val);
  size_t nnz = 0;
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj) {
          long ni = (long)i + di, nj = (long)j + dj;
          if (ni < 0 || nj < 0 || ni >= (long)m || nj >= (long)m)
            continue;
          a.col[nnz] = (int32_t)((size_t)ni * m + (size_t)nj);
          a.val[nnz++] = di == 0 && dj == 0 ? 8.0 : -1.0;
        }
      a.row_ptr[i * m + j + 1] = (int64_t)nnz;
    }
  return a;
}

/* The automatic format by device class: GPUs take the hybrid (auto_hybrid,
 * their default) for rows of very different lengths (rows of 1 to 8 and two
 * of n/10, as perf/spmv's irregular matrix) and keep ELLPACK-R for a
 * stencil; without the hybrid, with auto_csr_adaptive_ratio 8, CSR-Adaptive;
 * with the ratio at 0 too, and on CPUs, the irregular matrix stays CSR. */
static void test_automatic_format(void **state) {
  (void)state;
  static const struct {
    const char *params;
    clmg_matrix_format regular, irregular;
  } classes[] = {
      {"class=gpu-nvidia", CLMG_FORMAT_ELLR, CLMG_FORMAT_HYBRID},
      {"class=gpu-amd", CLMG_FORMAT_ELLR, CLMG_FORMAT_HYBRID},
      {"class=gpu-nvidia,auto_csr_adaptive_ratio=8", CLMG_FORMAT_ELLR, CLMG_FORMAT_HYBRID},
      {"class=gpu-nvidia,auto_hybrid=0,auto_csr_adaptive_ratio=8", CLMG_FORMAT_ELLR,
       CLMG_FORMAT_CSR_ADAPTIVE},
      {"class=gpu-amd,auto_hybrid=0,auto_csr_adaptive_ratio=8", CLMG_FORMAT_ELLR,
       CLMG_FORMAT_CSR_ADAPTIVE},
      {"class=gpu-nvidia,auto_hybrid=0", CLMG_FORMAT_ELLR, CLMG_FORMAT_CSR},
      {"class=cpu-pocl,auto_hybrid=1", CLMG_FORMAT_CSR, CLMG_FORMAT_CSR}, /* auto_sell=0 */
      {"class=cpu-pocl", CLMG_FORMAT_CSR, CLMG_FORMAT_CSR},
  };
  clmg_csr regular = stencil_matrix(30);
  enum { ROWS = 4000 };
  size_t *lengths = malloc(ROWS * sizeof *lengths);
  assert_non_null(lengths);
  for (size_t r = 0; r < ROWS; ++r)
    lengths[r] = 1 + random_below(8);
  lengths[1000] = lengths[3000] = ROWS / 10;
  clmg_csr irregular = matrix_with_lengths(ROWS, ROWS, lengths);
  free(lengths);
  for (size_t c = 0; c < sizeof classes / sizeof classes[0]; ++c) {
    setenv("CLMG_DEVICE_PARAMS", classes[c].params, 1);
    clmg_context *ctx = NULL;
    int opened = test_open_context(&ctx, NULL, NULL, 0);
    unsetenv("CLMG_DEVICE_PARAMS");
    assert_int_equal(opened, 0);
    clmg_dtype type = clmg_context_device(ctx)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
    clmg_matrix_format regular_format = automatic_choice(ctx, &regular, type);
    clmg_matrix_format irregular_format = automatic_choice(ctx, &irregular, type);
    if (regular_format != classes[c].regular || irregular_format != classes[c].irregular)
      fail_msg(
          "%s: the stencil took %s (want %s), the irregular matrix %s (want %s)", classes[c].params,
          clmg_matrix_format_name(regular_format), clmg_matrix_format_name(classes[c].regular),
          clmg_matrix_format_name(irregular_format), clmg_matrix_format_name(classes[c].irregular));
    test_close_context(&ctx);
  }
  free_matrix(&regular);
  free_matrix(&irregular);
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
      cmocka_unit_test(test_irregular_double),
      cmocka_unit_test(test_irregular_float),
      cmocka_unit_test(test_hybrid_double),
      cmocka_unit_test(test_hybrid_float),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_automatic_format),
  };
  return cmocka_run_group_tests_name("spmv", tests, open_context, close_context);
}
