/* The host AMG setup's routines against the serial references they replaced
 * (issue 30, the setup on CPUs): the one-pass host product
 * clmg_csr_multiply against the two-pass Gustavson product it replaced, and
 * the Galerkin products of a built hierarchy against that reference, bit
 * for bit, on 1 to 7 host threads; and the multigrid made with the
 * restrictions those products made against one whose engine transposed P
 * itself. Internal: the suite links the static library and includes lib/. */
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "amg/amg_internal.h"
#include "core/internal.h"
#include "la/internal.h"

#include "clmg/amg.h"
#include "clmg/multigrid.h"
#include "clmg/vector.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng_next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static size_t rng_below(size_t n) {
  return (size_t)(rng_next() % n);
}

static double rng_value(void) {
  return (double)(rng_next() >> 11) / 9007199254740992.0 * 2 - 1;
}

/* m x n with up to per_row random entries a row (repeats summed); every
 * fifth row empty where `gaps` is 1. */
static clmg_csr random_matrix(size_t m, size_t n, size_t per_row, int gaps) {
  size_t count = m * per_row;
  int32_t *row = malloc((count ? count : 1) * sizeof *row);
  int32_t *col = malloc((count ? count : 1) * sizeof *col);
  double *val = malloc((count ? count : 1) * sizeof *val);
  assert_true(row && col && val);
  size_t used = 0;
  for (size_t i = 0; i < m; ++i) {
    if (gaps && i % 5 == 3)
      continue;
    for (size_t k = 0; k < per_row; ++k) {
      row[used] = (int32_t)i;
      col[used] = (int32_t)rng_below(n);
      val[used++] = rng_value();
    }
  }
  clmg_csr a = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_csr_from_triplets(m, n, used, row, col, val, &a, &error), CLMG_SUCCESS);
  free(row);
  free(col);
  free(val);
  return a;
}

/* ---- the reference: the serial two-pass product clmg_csr_multiply was
 * (CSparse's cs_multiply with each row sorted at the end) ---- */

static int compare_int32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

static clmg_csr reference_multiply(const clmg_csr *a, const clmg_csr *b) {
  assert_int_equal(a->cols, b->rows);
  clmg_csr c = {a->rows, b->cols, calloc(a->rows + 1, sizeof(int64_t)), NULL, NULL};
  int64_t *marker = malloc((b->cols ? b->cols : 1) * sizeof *marker);
  assert_true(c.row_ptr && marker);
  for (size_t j = 0; j < b->cols; ++j)
    marker[j] = -1;
  for (size_t i = 0; i < a->rows; ++i) {
    int64_t count = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      for (int64_t l = b->row_ptr[a->col[k]]; l < b->row_ptr[a->col[k] + 1]; ++l)
        if (marker[b->col[l]] != (int64_t)i) {
          marker[b->col[l]] = (int64_t)i;
          count++;
        }
    c.row_ptr[i + 1] = c.row_ptr[i] + count;
  }
  size_t nnz = (size_t)c.row_ptr[a->rows];
  c.col = malloc((nnz ? nnz : 1) * sizeof *c.col);
  c.val = malloc((nnz ? nnz : 1) * sizeof *c.val);
  double *unsorted = malloc((b->cols ? b->cols : 1) * sizeof *unsorted);
  assert_true(c.col && c.val && unsorted);
  for (size_t j = 0; j < b->cols; ++j)
    marker[j] = -1;
  for (size_t i = 0; i < a->rows; ++i) {
    int64_t begin = c.row_ptr[i], end = begin;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      double scale = a->val[k];
      for (int64_t l = b->row_ptr[a->col[k]]; l < b->row_ptr[a->col[k] + 1]; ++l) {
        int32_t j = b->col[l];
        if (marker[j] < begin) {
          marker[j] = end;
          c.col[end] = j;
          c.val[end++] = scale * b->val[l];
        } else {
          c.val[marker[j]] += scale * b->val[l];
        }
      }
    }
    size_t length = (size_t)(end - begin);
    memcpy(unsorted, c.val + begin, length * sizeof *unsorted);
    qsort(c.col + begin, length, sizeof *c.col, compare_int32);
    for (int64_t k = begin; k < end; ++k)
      c.val[k] = unsorted[marker[c.col[k]] - begin];
  }
  free(marker);
  free(unsorted);
  return c;
}

/* The same matrix, bit for bit. */
static void assert_same_csr(const clmg_csr *x, const clmg_csr *y) {
  assert_int_equal(x->rows, y->rows);
  assert_int_equal(x->cols, y->cols);
  assert_memory_equal(x->row_ptr, y->row_ptr, (x->rows + 1) * sizeof *x->row_ptr);
  size_t nnz = clmg_csr_nnz(x);
  if (nnz > 0) {
    assert_memory_equal(x->col, y->col, nnz * sizeof *x->col);
    assert_memory_equal(x->val, y->val, nnz * sizeof *x->val);
  }
}

/* Runs body under CLMG_HOST_THREADS = 1, 2, 3 and 7 (more threads than
 * cores still split the rows), restoring the variable. */
static void on_thread_counts(void (*body)(void)) {
  const char *before = getenv("CLMG_HOST_THREADS");
  char *saved = before ? strdup(before) : NULL;
  const char *counts[] = {"1", "2", "3", "7"};
  for (size_t t = 0; t < sizeof counts / sizeof *counts; ++t) {
    assert_int_equal(setenv("CLMG_HOST_THREADS", counts[t], 1), 0);
    body();
  }
  if (saved)
    setenv("CLMG_HOST_THREADS", saved, 1);
  else
    unsetenv("CLMG_HOST_THREADS");
  free(saved);
}

/* m, k, n, entries per row of A (k columns) and of B (n columns), gaps.
 * Rows long enough for the quicksort (over 32 columns: the fourth to the
 * seventh shapes, the seventh thousands), rows enough to split between the
 * threads (4,096 a range: the first, second and fifth), empty rows and
 * columns, B of one entry a row (a tentative prolongator), empty shapes. */
static const size_t shapes[][6] = {
    {20000, 9000, 6000, 9, 4, 1}, {12000, 2000, 300, 5, 4, 0},  {300, 200, 40, 12, 1, 0},
    {200, 300, 800, 6, 22, 1},    {9000, 1000, 600, 40, 12, 1}, {4, 400, 6000, 100, 40, 0},
    {3, 500, 200000, 150, 30, 0}, {57, 13, 70, 4, 3, 1},        {1, 50, 1, 4, 3, 0},
    {0, 5, 7, 0, 2, 0},           {6, 0, 4, 0, 0, 0},           {5, 4, 0, 3, 0, 0}};

static void multiply_shapes(void) {
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) {
    clmg_csr a = random_matrix(shapes[s][0], shapes[s][1], shapes[s][3], (int)shapes[s][5]);
    clmg_csr b = random_matrix(shapes[s][1], shapes[s][2], shapes[s][4], (int)shapes[s][5]);
    clmg_csr c = {0};
    clmg_error error = {{0}};
    assert_int_equal(clmg_csr_multiply(&a, &b, &c, &error), CLMG_SUCCESS);
    assert_int_equal(clmg_csr_check(&c, NULL), CLMG_SUCCESS);
    clmg_csr expected = reference_multiply(&a, &b);
    assert_same_csr(&c, &expected);
    clmg_csr_free(&a);
    clmg_csr_free(&b);
    clmg_csr_free(&c);
    clmg_csr_free(&expected);
  }
}

static void test_multiply(void **state) {
  (void)state;
  on_thread_counts(multiply_shapes);
}

/* A matrix of a few dense rows and columns (rows of 5,000 columns and more,
 * sorted by the quicksort's deeper parts), against the reference. */
static void test_multiply_dense_rows(void **state) {
  (void)state;
  clmg_csr a = random_matrix(6000, 6000, 3, 0), dense = random_matrix(6000, 6000, 2, 0);
  /* rows 0 and 17 of a and row 5 of b full */
  clmg_csr full = {0};
  size_t count = 3 * 6000;
  int32_t *row = malloc(count * sizeof *row), *col = malloc(count * sizeof *col);
  double *val = malloc(count * sizeof *val);
  assert_true(row && col && val);
  for (size_t k = 0; k < count; ++k) {
    row[k] = k < 6000 ? 0 : k < 12000 ? 17 : 5;
    col[k] = (int32_t)(k % 6000);
    val[k] = rng_value();
  }
  clmg_error error = {{0}};
  assert_int_equal(clmg_csr_from_triplets(6000, 6000, count, row, col, val, &full, &error),
                   CLMG_SUCCESS);
  clmg_csr product = {0};
  assert_int_equal(clmg_csr_multiply(&full, &a, &product, &error), CLMG_SUCCESS);
  clmg_csr expected = reference_multiply(&full, &a);
  assert_same_csr(&product, &expected);
  clmg_csr_free(&product);
  clmg_csr_free(&expected);
  assert_int_equal(clmg_csr_multiply(&dense, &full, &product, &error), CLMG_SUCCESS);
  expected = reference_multiply(&dense, &full);
  assert_same_csr(&product, &expected);
  free(row);
  free(col);
  free(val);
  clmg_csr_free(&product);
  clmg_csr_free(&expected);
  clmg_csr_free(&a);
  clmg_csr_free(&dense);
  clmg_csr_free(&full);
}

/* The seven-point Laplacian on an n^3 grid (Dirichlet boundary eliminated). */
static clmg_csr laplacian(size_t n) {
  size_t rows = n * n * n, count = 7 * rows, used = 0;
  int32_t *row = malloc(count * sizeof *row), *col = malloc(count * sizeof *col);
  double *val = malloc(count * sizeof *val);
  assert_true(row && col && val);
  for (size_t z = 0; z < n; ++z)
    for (size_t y = 0; y < n; ++y)
      for (size_t x = 0; x < n; ++x) {
        size_t i = (z * n + y) * n + x;
        const long offsets[3] = {1, (long)n, (long)(n * n)};
        const size_t at[3] = {x, y, z};
        row[used] = (int32_t)i;
        col[used] = (int32_t)i;
        val[used++] = 6;
        for (int d = 0; d < 3; ++d) {
          if (at[d] > 0) {
            row[used] = (int32_t)i;
            col[used] = (int32_t)((long)i - offsets[d]);
            val[used++] = -1;
          }
          if (at[d] + 1 < n) {
            row[used] = (int32_t)i;
            col[used] = (int32_t)((long)i + offsets[d]);
            val[used++] = -1;
          }
        }
      }
  clmg_csr a = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_csr_from_triplets(rows, rows, used, row, col, val, &a, &error),
                   CLMG_SUCCESS);
  free(row);
  free(col);
  free(val);
  return a;
}

/* Every coarse matrix of a host hierarchy is P^T (A P) of the reference
 * product, bit for bit (the one-pass product sums in the same order). */
static void galerkin_levels(void) {
  clmg_csr a = laplacian(30);
  clmg_amg_hierarchy h = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_amg_hierarchy_build(&a, NULL, &h, &error), CLMG_SUCCESS);
  assert_true(h.num_levels >= 3);
  for (int l = h.num_levels - 1; l >= 1; --l) {
    clmg_csr r = {0};
    assert_int_equal(clmg_csr_transpose(&h.p[l], &r, &error), CLMG_SUCCESS);
    clmg_csr ap = reference_multiply(&h.a[l], &h.p[l]);
    clmg_csr coarse = reference_multiply(&r, &ap);
    assert_same_csr(&h.a[l - 1], &coarse);
    clmg_csr_free(&r);
    clmg_csr_free(&ap);
    clmg_csr_free(&coarse);
  }
  clmg_amg_hierarchy_free(&h);
  clmg_csr_free(&a);
}

static void test_galerkin(void **state) {
  (void)state;
  on_thread_counts(galerkin_levels);
}

/* clmg_csr_diagonal by rows on the host's cores against a scan of each row,
 * with diagonals missing and rectangular shapes. */
static void diagonal_shapes(void) {
  const size_t sizes[][3] = {{40000, 40000, 6}, {50000, 30000, 4}, {20000, 45000, 5}, {3, 3, 1}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    /* random entries, and a diagonal entry in two rows of three */
    size_t rows = sizes[s][0], cols = sizes[s][1], count = 0;
    int32_t *row = malloc(rows * (sizes[s][2] + 1) * sizeof *row);
    int32_t *col = malloc(rows * (sizes[s][2] + 1) * sizeof *col);
    double *val = malloc(rows * (sizes[s][2] + 1) * sizeof *val);
    assert_true(row && col && val);
    for (size_t i = 0; i < rows; ++i) {
      for (size_t k = 0; k < sizes[s][2]; ++k) {
        row[count] = (int32_t)i;
        col[count] = (int32_t)rng_below(cols);
        val[count++] = rng_value();
      }
      if (i % 3 != 0 && i < cols) {
        row[count] = (int32_t)i;
        col[count] = (int32_t)i;
        val[count++] = 3 + rng_value();
      }
    }
    clmg_csr a = {0};
    assert_int_equal(clmg_csr_from_triplets(rows, cols, count, row, col, val, &a, NULL),
                     CLMG_SUCCESS);
    free(row);
    free(col);
    free(val);
    assert_int_equal(clmg_csr_check(&a, NULL), CLMG_SUCCESS);
    size_t n = a.rows < a.cols ? a.rows : a.cols;
    double *diagonal = malloc((n ? n : 1) * sizeof *diagonal);
    assert_non_null(diagonal);
    assert_int_equal(clmg_csr_diagonal(&a, diagonal, NULL), CLMG_SUCCESS);
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
      double expected = 0.0;
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        if (a.col[k] == (int32_t)i)
          expected = a.val[k];
      found += expected != 0.0;
      assert_memory_equal(&diagonal[i], &expected, sizeof expected);
    }
    assert_true(n < 10 || (found > n / 2 && found < n));
    free(diagonal);
    clmg_csr_free(&a);
  }
}

static void test_diagonal(void **state) {
  (void)state;
  on_thread_counts(diagonal_shapes);
}

/* The power estimate of lambda_max(D^-1 A) as it was: clmg_csr_spmv_host,
 * then a serial loop that divides, sums and scales (lib/amg/smoothed_aggregation.c's
 * start and steps). */
static double reference_rho(const clmg_csr *a) {
  size_t n = a->rows;
  double *diagonal = malloc(n * sizeof *diagonal), *x = malloc(n * sizeof *x),
         *y = malloc(n * sizeof *y);
  assert_true(diagonal && x && y);
  assert_int_equal(clmg_csr_diagonal(a, diagonal, NULL), CLMG_SUCCESS);
  clmg_fill_pseudo_random(x, n, 0x9e3779b97f4a7c15u, 0, 0.5, 1.5);
  double estimate = 0;
  for (int step = 0; step < 20; step++) {
    clmg_csr_spmv_host(1.0, a, x, 0.0, y);
    double xx = 0, xy = 0, yy = 0;
    for (size_t i = 0; i < n; i++) {
      y[i] = diagonal[i] != 0 ? y[i] / diagonal[i] : 0;
      xx += x[i] * x[i];
      xy += x[i] * y[i];
      yy += y[i] * y[i];
    }
    if (!(xx > 0) || !(yy > 0))
      break;
    estimate = fmax(estimate, fabs(xy / xx));
    double scale = 1.0 / sqrt(yy);
    for (size_t i = 0; i < n; i++)
      x[i] = y[i] * scale;
  }
  free(diagonal);
  free(x);
  free(y);
  return estimate;
}

/* clmg_amg_rho_host (the prolongator smoothing's estimate, its division and
 * scaling on the host's cores) equals the serial loop bit for bit: on
 * random matrices with a random diagonal (zero in some rows) and on the
 * Laplacian. */
static void rho_matrices(void) {
  for (int m = 0; m < 3; ++m) {
    clmg_csr a = m == 2 ? laplacian(36) : random_matrix(m ? 70000 : 900, m ? 70000 : 900, 7, 0);
    if (m < 2)
      for (size_t i = 0; i < a.rows; ++i) {
        int64_t k = clmg_csr_find_entry(&a, i, (int32_t)i);
        if (k >= 0)
          a.val[k] = i % 7 == 0 ? 0.0 : 4 + rng_value();
      }
    double rho = 0, expected = reference_rho(&a);
    clmg_error error = {{0}};
    assert_int_equal(clmg_amg_rho_host(&a, &rho, &error), CLMG_SUCCESS);
    assert_memory_equal(&rho, &expected, sizeof rho);
    assert_true(rho > 0);
    clmg_csr_free(&a);
  }
}

static void test_rho(void **state) {
  (void)state;
  on_thread_counts(rho_matrices);
}

/* The finest smoothed prolongator of a host hierarchy, P = (I - omega D^-1
 * A) P~, equals the one the serial steps make from the same aggregates: P~
 * of one candidate (1 / sqrt(size) in the aggregate's column), omega = 4/3
 * over the power estimate, the reference product A P~ scaled by -omega /
 * a_ii a row, P~ added; bit for bit. */
static void prolongator_levels(void) {
  clmg_csr a = laplacian(30);
  size_t n = a.rows, count = 0;
  clmg_error error = {{0}};
  int32_t *aggregate = malloc(n * sizeof *aggregate);
  double *diagonal = malloc(n * sizeof *diagonal);
  assert_true(aggregate && diagonal);
  assert_int_equal(clmg_amg_aggregate(&a, NULL, aggregate, &count, &error), CLMG_SUCCESS);
  size_t *size = calloc(count, sizeof *size);
  assert_non_null(size);
  for (size_t i = 0; i < n; ++i)
    if (aggregate[i] >= 0)
      size[aggregate[i]]++;
  clmg_csr tentative = {n, count, calloc(n + 1, sizeof(int64_t)), malloc(n * sizeof(int32_t)),
                        malloc(n * sizeof(double))};
  assert_true(tentative.row_ptr && tentative.col && tentative.val);
  for (size_t i = 0; i < n; ++i) {
    int64_t at = tentative.row_ptr[i];
    if (aggregate[i] >= 0) {
      tentative.col[at] = aggregate[i];
      tentative.val[at++] = 1.0 / sqrt((double)size[aggregate[i]]);
    }
    tentative.row_ptr[i + 1] = at;
  }
  double rho = 0;
  assert_int_equal(clmg_amg_rho_host(&a, &rho, &error), CLMG_SUCCESS);
  double omega = 4.0 / 3.0 / rho;
  assert_int_equal(clmg_csr_diagonal(&a, diagonal, NULL), CLMG_SUCCESS);
  clmg_csr expected = reference_multiply(&a, &tentative);
  for (size_t i = 0; i < n; ++i) {
    double scale = diagonal[i] != 0 ? omega / diagonal[i] : 0;
    for (int64_t k = expected.row_ptr[i]; k < expected.row_ptr[i + 1]; ++k)
      expected.val[k] *= -scale;
    for (int64_t t = tentative.row_ptr[i]; t < tentative.row_ptr[i + 1]; ++t) {
      int64_t k = clmg_csr_find_entry(&expected, i, tentative.col[t]);
      assert_true(k >= 0);
      expected.val[k] += tentative.val[t];
    }
  }
  clmg_amg_hierarchy h = {0};
  assert_int_equal(clmg_amg_hierarchy_build(&a, NULL, &h, &error), CLMG_SUCCESS);
  assert_true(h.num_levels >= 2);
  assert_same_csr(&h.p[h.num_levels - 1], &expected);
  clmg_amg_hierarchy_free(&h);
  clmg_csr_free(&expected);
  clmg_csr_free(&tentative);
  clmg_csr_free(&a);
  free(size);
  free(aggregate);
  free(diagonal);
}

static void test_prolongator(void **state) {
  (void)state;
  on_thread_counts(prolongator_levels);
}

/* clmg_amg_multigrid_create on the host path hands the engine the
 * restrictions its Galerkin products made: one cycle of that multigrid
 * equals, bit for bit, one of the engine made from the same hierarchy with
 * R = P^T formed by the engine itself. */
static void test_engine_restrictions(void **state) {
  (void)state;
  clmg_context *context = NULL;
  if (clmg_context_create(NULL, &context) != CLMG_SUCCESS)
    fail_msg("no OpenCL context");
  if (context->params.amg_setup_on_device) {
    clmg_context_destroy(context);
    skip(); /* the device's setup makes its own R */
  }
  clmg_csr a = laplacian(24);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  clmg_multigrid *handed = NULL, *transposed = NULL;
  assert_int_equal(clmg_amg_multigrid_create(context, &a, NULL, &options, NULL, &handed),
                   CLMG_SUCCESS);
  clmg_amg_hierarchy h = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_amg_hierarchy_build(&a, NULL, &h, &error), CLMG_SUCCESS);
  assert_true(h.num_levels >= 3);
  assert_int_equal(
      clmg_multigrid_create(context, h.num_levels, h.a, h.p, NULL, &options, &transposed),
      CLMG_SUCCESS);
  assert_int_equal(clmg_multigrid_levels(handed), clmg_multigrid_levels(transposed));
  size_t n = a.rows;
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  assert_true(b && x && y);
  for (size_t i = 0; i < n; ++i)
    b[i] = rng_value();
  clmg_vector *vb = NULL, *vx = NULL;
  assert_int_equal(clmg_vector_create(context, CLMG_DOUBLE, n, &vb), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_create(context, CLMG_DOUBLE, n, &vx), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_upload_doubles(vb, b), CLMG_SUCCESS);
  int top = clmg_multigrid_levels(handed) - 1;
  assert_int_equal(clmg_multigrid_cycle_level(handed, top, vb, vx, 1), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_download_doubles(vx, x), CLMG_SUCCESS);
  assert_int_equal(clmg_multigrid_cycle_level(transposed, top, vb, vx, 1), CLMG_SUCCESS);
  assert_int_equal(clmg_vector_download_doubles(vx, y), CLMG_SUCCESS);
  assert_memory_equal(x, y, n * sizeof *x);
  double norm = 0;
  for (size_t i = 0; i < n; ++i)
    norm += x[i] * x[i];
  assert_true(norm > 0);
  clmg_vector_destroy(vb);
  clmg_vector_destroy(vx);
  free(b);
  free(x);
  free(y);
  clmg_multigrid_destroy(handed);
  clmg_multigrid_destroy(transposed);
  clmg_amg_hierarchy_free(&h);
  clmg_csr_free(&a);
  clmg_context_destroy(context);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_multiply),    cmocka_unit_test(test_multiply_dense_rows),
      cmocka_unit_test(test_galerkin),    cmocka_unit_test(test_engine_restrictions),
      cmocka_unit_test(test_diagonal),    cmocka_unit_test(test_rho),
      cmocka_unit_test(test_prolongator),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
