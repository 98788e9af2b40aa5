/* Tests of the host side of sparse matrices: CSR from triplets, copy,
 * transpose, permutation, diagonal, host SpMV and the symmetry test against
 * dense references, and Matrix Market reading and writing (round trips,
 * symmetric/skew/pattern/integer/array files, malformed files). Needs no
 * OpenCL device. Random data from a fixed seed (CLMG_TEST_SEED overrides). */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

/* ---- helpers ---- */

#define CHECK_OK(error, call) CHECK_ERROR_OK(error, call)

/* A value that is neither 0 nor 1 nor a short decimal: random sign, digits
 * and magnitude. */
static double rng_value(void) {
  double v = 0.0;
  while (v == 0.0)
    v = rng_uniform();
  return v * pow(10.0, (double)((int)rng_below(9) - 4));
}

static void random_permutation(int32_t *perm, size_t n) {
  for (size_t i = 0; i < n; i++)
    perm[i] = (int32_t)i;
  for (size_t i = n; i > 1; i--) {
    size_t j = rng_below(i);
    int32_t t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
}

static int is_zeroed(const clmg_csr *a) {
  return a->rows == 0 && a->cols == 0 && !a->row_ptr && !a->col && !a->val;
}

/* Fills a with a byte pattern, so a test sees whether a failing call left it
 * zeroed (the pointers are never dereferenced or freed by a correct
 * implementation). */
static void fill_with_garbage(clmg_csr *a) {
  memset(a, 0x5a, sizeof *a);
}

/* Checks the CSR invariants: offsets from 0 and non-decreasing, columns in
 * range, sorted and unique in each row, arrays present. */
static void assert_valid_csr(const clmg_csr *a) {
  assert_non_null(a->row_ptr);
  assert_non_null(a->col);
  assert_non_null(a->val);
  assert_int_equal(a->row_ptr[0], 0);
  for (size_t i = 0; i < a->rows; i++) {
    assert_true(a->row_ptr[i + 1] >= a->row_ptr[i]);
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      assert_true(a->col[k] >= 0 && (size_t)a->col[k] < a->cols);
      if (k > a->row_ptr[i])
        assert_true(a->col[k] > a->col[k - 1]);
    }
  }
}

/* Row-major dense copy of a (calloc'ed, at least one element). */
static double *to_dense(const clmg_csr *a) {
  double *dense = calloc(a->rows * a->cols + 1, sizeof *dense);
  assert_non_null(dense);
  for (size_t i = 0; i < a->rows; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      dense[i * a->cols + (size_t)a->col[k]] = a->val[k];
  return dense;
}

static void assert_dense_equal(const double *expected, const double *actual, size_t rows,
                               size_t cols) {
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      if (expected[i * cols + j] != actual[i * cols + j])
        fail_msg("entry (%zu, %zu): expected %.17g, found %.17g", i, j, expected[i * cols + j],
                 actual[i * cols + j]);
}

/* Bitwise equality of two CSR matrices. */
static void assert_csr_identical(const clmg_csr *a, const clmg_csr *b) {
  assert_int_equal(a->rows, b->rows);
  assert_int_equal(a->cols, b->cols);
  assert_memory_equal(a->row_ptr, b->row_ptr, (a->rows + 1) * sizeof *a->row_ptr);
  size_t nnz = clmg_csr_nnz(a);
  assert_int_equal(nnz, clmg_csr_nnz(b));
  if (nnz > 0) {
    assert_memory_equal(a->col, b->col, nnz * sizeof *a->col);
    assert_memory_equal(a->val, b->val, nnz * sizeof *a->val);
  }
}

/* How triplets are placed in a shape. */
typedef enum placement {
  PLACE_RANDOM,     /* anywhere, from a small pool of positions: many duplicates */
  PLACE_EMPTY_ROWS, /* only in every third row */
  PLACE_DENSE_ROW   /* one row holds every column, the rest random */
} placement;

typedef struct shape {
  size_t rows, cols, count;
  placement where;
} shape;

static const shape shapes[] = {
    {1, 1, 5, PLACE_RANDOM},
    {0, 0, 0, PLACE_RANDOM},
    {0, 4, 0, PLACE_RANDOM},
    {4, 0, 0, PLACE_RANDOM},
    {3, 3, 0, PLACE_RANDOM},
    {1, 30, 80, PLACE_DENSE_ROW},
    {30, 1, 80, PLACE_RANDOM},
    {7, 13, 60, PLACE_RANDOM},
    {13, 7, 60, PLACE_RANDOM},
    {50, 50, 300, PLACE_EMPTY_ROWS},
    {20, 20, 150, PLACE_DENSE_ROW},
    {64, 41, 900, PLACE_RANDOM},
    {200, 200, 2000, PLACE_EMPTY_ROWS},
    /* Far more columns than entries: the hyper-sparse path of
     * clmg_csr_from_triplets (per-row sorting), with short and long rows. */
    {3, 500, 60, PLACE_RANDOM},
    {12, 5000, 200, PLACE_EMPTY_ROWS},
    {2, 100000, 3000, PLACE_RANDOM},
    /* Rows of more than 64 triplets take the counting sorts, shorter ones
     * the insertion sort per row (a finite element matrix's); both sides. */
    {4, 40, 400, PLACE_RANDOM},
    {16, 100, 640, PLACE_RANDOM},
    {3000, 3000, 60000, PLACE_RANDOM},
};
#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])

static triplets random_triplets(const shape *s) {
  triplets t = {.count = s->count}; /* test_util's triplets, filled here in one go */
  size_t dense_row_extra = s->where == PLACE_DENSE_ROW ? s->cols : 0;
  t.count += dense_row_extra;
  t.row = malloc((t.count + 1) * sizeof *t.row);
  t.col = malloc((t.count + 1) * sizeof *t.col);
  t.val = malloc((t.count + 1) * sizeof *t.val);
  assert_true(t.row && t.col && t.val);
  /* A pool of about count/3 positions makes most of them repeat. */
  size_t pool = s->count / 3 + 1;
  uint64_t pool_seed = rng_next();
  size_t dense_row = s->rows ? rng_below(s->rows) : 0;
  for (size_t k = 0; k < s->count; k++) {
    size_t i, j;
    if (s->where == PLACE_RANDOM || s->where == PLACE_DENSE_ROW) {
      uint64_t saved = rng_state;
      rng_state = pool_seed + rng_below(pool);
      i = rng_below(s->rows);
      j = rng_below(s->cols);
      rng_state = saved;
    } else {
      i = 3 * rng_below((s->rows + 2) / 3);
      j = rng_below(s->cols);
    }
    t.row[k] = (int32_t)i;
    t.col[k] = (int32_t)j;
    t.val[k] = rng_value();
  }
  /* The dense row, in a random column order, interleaved at the end. */
  int32_t *order = malloc((dense_row_extra + 1) * sizeof *order);
  assert_non_null(order);
  random_permutation(order, dense_row_extra);
  for (size_t m = 0; m < dense_row_extra; m++) {
    t.row[s->count + m] = (int32_t)dense_row;
    t.col[s->count + m] = order[m];
    t.val[s->count + m] = rng_value();
  }
  free(order);
  return t;
}

static void free_triplets(triplets *t) {
  free(t->row);
  free(t->col);
  free(t->val);
}

/* The dense sum of the triplets, in input order (as clmg sums duplicates). */
static double *dense_from_triplets(const triplets *t, size_t rows, size_t cols, size_t *distinct) {
  double *dense = calloc(rows * cols + 1, sizeof *dense);
  unsigned char *seen = calloc(rows * cols + 1, 1);
  assert_true(dense && seen);
  *distinct = 0;
  for (size_t k = 0; k < t->count; k++) {
    size_t at = (size_t)t->row[k] * cols + (size_t)t->col[k];
    if (!seen[at]) {
      seen[at] = 1;
      ++*distinct;
      dense[at] = t->val[k];
    } else {
      dense[at] += t->val[k];
    }
  }
  free(seen);
  return dense;
}

static void random_csr(size_t rows, size_t cols, size_t count, placement where, clmg_csr *a) {
  shape s = {rows, cols, count, where};
  triplets t = random_triplets(&s);
  clmg_error error;
  CHECK_OK(error, clmg_csr_from_triplets(rows, cols, t.count, t.row, t.col, t.val, a, &error));
  free_triplets(&t);
}

/* ---- temporary files ---- */

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f)
    fail_msg("cannot write %s: %s", path, strerror(errno));
  size_t size = strlen(text);
  assert_int_equal(fwrite(text, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* A growing text buffer for files composed by the tests. */
typedef struct text {
  char *data;
  size_t length, capacity;
} text;

static void append(text *t, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int needed = vsnprintf(NULL, 0, format, args);
  va_end(args);
  assert_true(needed >= 0);
  if (t->length + (size_t)needed + 1 > t->capacity) {
    t->capacity = 2 * (t->length + (size_t)needed + 1);
    t->data = realloc(t->data, t->capacity);
    assert_non_null(t->data);
  }
  va_start(args, format);
  vsnprintf(t->data + t->length, t->capacity - t->length, format, args);
  va_end(args);
  t->length += (size_t)needed;
}

/* ---- CSR from triplets ---- */

static void test_from_triplets(void **state) {
  (void)state;
  for (size_t s = 0; s < SHAPE_COUNT; s++) {
    for (int repeat = 0; repeat < 3; repeat++) {
      triplets t = random_triplets(&shapes[s]);
      size_t distinct = 0;
      double *expected = dense_from_triplets(&t, shapes[s].rows, shapes[s].cols, &distinct);
      clmg_csr a;
      clmg_error error;
      CHECK_OK(error, clmg_csr_from_triplets(shapes[s].rows, shapes[s].cols, t.count, t.row, t.col,
                                             t.val, &a, &error));
      assert_int_equal(a.rows, shapes[s].rows);
      assert_int_equal(a.cols, shapes[s].cols);
      assert_valid_csr(&a);
      /* Duplicates are merged into one entry each, and summed in input
       * order, so the values match the reference bit for bit. */
      assert_int_equal(clmg_csr_nnz(&a), distinct);
      double *actual = to_dense(&a);
      assert_dense_equal(expected, actual, a.rows, a.cols);
      if (shapes[s].where == PLACE_EMPTY_ROWS)
        for (size_t i = 0; i < a.rows; i++)
          if (i % 3 != 0)
            assert_int_equal(a.row_ptr[i + 1], a.row_ptr[i]);
      free(actual);
      free(expected);
      free_triplets(&t);
      clmg_csr_free(&a);
      assert_true(is_zeroed(&a));
    }
  }
  clmg_csr_free(NULL);
}

static void test_from_triplets_errors(void **state) {
  (void)state;
  int32_t row[4] = {0, 1, 2, 1}, col[4] = {2, 0, 1, 1};
  double val[4] = {0.25, -3.5, 7.125, 1.75};
  clmg_csr a;
  clmg_error error;

  row[2] = -1;
  fill_with_garbage(&a);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 3, 4, row, col, val, &a, &error));
  CHECK_CONTAINS(error.message, "triplet 2");
  CHECK_CONTAINS(error.message, "row index -1");
  assert_true(is_zeroed(&a));
  row[2] = 3;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 3, 4, row, col, val, &a, &error));
  CHECK_CONTAINS(error.message, "row index 3");
  row[2] = 2;

  col[3] = 5;
  fill_with_garbage(&a);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 5, 4, row, col, val, &a, &error));
  CHECK_CONTAINS(error.message, "triplet 3");
  CHECK_CONTAINS(error.message, "column index 5");
  assert_true(is_zeroed(&a));
  col[3] = 1;

  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets((size_t)INT32_MAX + 1, 3, 4, row, col, val, &a, &error));
  CHECK_CONTAINS(error.message, "32-bit");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, (size_t)INT32_MAX + 7, 4, row, col, val, &a, &error));
  CHECK_CONTAINS(error.message, "32-bit");
  assert_true(is_zeroed(&a));

  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 3, 4, row, NULL, val, &a, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 3, 4, row, col, val, NULL, &error));
  /* error may be NULL. */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 3, 4, row, col, val, NULL, NULL));
  col[0] = 3;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_csr_from_triplets(3, 3, 4, row, col, val, &a, NULL));
  col[0] = 2;

  /* The largest allowed shape with few entries is fine. */
  CHECK_OK(error, clmg_csr_from_triplets(3, INT32_MAX, 4, row, col, val, &a, &error));
  assert_int_equal(clmg_csr_nnz(&a), 4);
  clmg_csr_free(&a);
  /* No triplets and NULL arrays: an empty matrix. */
  CHECK_OK(error, clmg_csr_from_triplets(5, 2, 0, NULL, NULL, NULL, &a, NULL));
  assert_valid_csr(&a);
  assert_int_equal(clmg_csr_nnz(&a), 0);
  clmg_csr_free(&a);
}

/* ---- copy, transpose, diagonal ---- */

static void test_copy_and_transpose(void **state) {
  (void)state;
  for (size_t s = 0; s < SHAPE_COUNT; s++) {
    clmg_csr a, copy, at, att;
    clmg_error error;
    random_csr(shapes[s].rows, shapes[s].cols, shapes[s].count, shapes[s].where, &a);
    CHECK_OK(error, clmg_csr_copy(&a, &copy, &error));
    assert_csr_identical(&a, &copy);
    assert_true(copy.row_ptr != a.row_ptr && copy.val != a.val);

    CHECK_OK(error, clmg_csr_transpose(&a, &at, &error));
    assert_int_equal(at.rows, a.cols);
    assert_int_equal(at.cols, a.rows);
    assert_valid_csr(&at);
    double *dense = to_dense(&a), *dense_t = to_dense(&at);
    for (size_t i = 0; i < a.rows; i++)
      for (size_t j = 0; j < a.cols; j++)
        assert_true(dense[i * a.cols + j] == dense_t[j * a.rows + i]);
    CHECK_OK(error, clmg_csr_transpose(&at, &att, &error));
    assert_csr_identical(&a, &att);

    free(dense);
    free(dense_t);
    clmg_csr_free(&a);
    clmg_csr_free(&copy);
    clmg_csr_free(&at);
    clmg_csr_free(&att);
  }
}

/* Blocks of rows, as a process of a distributed matrix holds them: every
 * entry of the block equals the whole matrix's, blocks that tile the rows
 * add up to it, and a block past the end is refused. */
static void test_row_block(void **state) {
  (void)state;
  for (size_t s = 0; s < SHAPE_COUNT; s++) {
    clmg_csr a, block;
    clmg_error error;
    random_csr(shapes[s].rows, shapes[s].cols, shapes[s].count, shapes[s].where, &a);
    double *dense = to_dense(&a);
    size_t cut = a.rows / 3, nnz = 0;
    const size_t firsts[] = {0, cut, a.rows};
    const size_t counts[] = {cut, a.rows - cut, 0};
    for (int b = 0; b < 3; b++) {
      CHECK_OK(error, clmg_csr_row_block(&a, firsts[b], counts[b], &block, &error));
      assert_valid_csr(&block);
      assert_int_equal(block.rows, counts[b]);
      assert_int_equal(block.cols, a.cols);
      double *dense_block = to_dense(&block);
      for (size_t i = 0; i < block.rows; i++)
        for (size_t j = 0; j < a.cols; j++)
          assert_true(dense_block[i * a.cols + j] == dense[(firsts[b] + i) * a.cols + j]);
      nnz += clmg_csr_nnz(&block);
      free(dense_block);
      clmg_csr_free(&block);
    }
    assert_int_equal(nnz, clmg_csr_nnz(&a));
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_row_block(&a, 1, a.rows, &block, &error));
    assert_non_null(strstr(error.message, "rows"));
    assert_null(block.row_ptr);
    free(dense);
    clmg_csr_free(&a);
  }
}

static void test_invalid_csr_input(void **state) {
  (void)state;
  int64_t row_ptr[3] = {0, 2, 3};
  int32_t col[3] = {1, 0, 2}; /* row 0 unsorted */
  double val[3] = {0.5, 1.5, -2.5};
  clmg_csr bad = {2, 3, row_ptr, col, val}, out;
  clmg_error error;
  fill_with_garbage(&out);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_transpose(&bad, &out, &error));
  CHECK_CONTAINS(error.message, "sorted");
  assert_true(is_zeroed(&out));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_copy(&bad, &out, NULL));
  double diagonal[2];
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_diagonal(&bad, diagonal, &error));
  assert_false(clmg_csr_is_symmetric(&bad, 0.5));

  col[0] = 0;
  col[1] = 3; /* out of range */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_copy(&bad, &out, &error));
  CHECK_CONTAINS(error.message, "column 3");
  col[1] = 1;
  row_ptr[1] = 4; /* decreasing */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_copy(&bad, &out, &error));
  CHECK_CONTAINS(error.message, "row_ptr");
  row_ptr[1] = 2;
  CHECK_OK(error, clmg_csr_copy(&bad, &out, &error));
  /* out may not alias the input: it would leak the input's arrays. */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_transpose(&out, &out, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_copy(&out, &out, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_permute(&out, NULL, NULL, &out, &error));
  clmg_csr_free(&out);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_copy(NULL, &out, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_transpose(&bad, NULL, &error));
}

static void test_diagonal(void **state) {
  (void)state;
  for (size_t s = 0; s < SHAPE_COUNT; s++) {
    clmg_csr a;
    clmg_error error;
    random_csr(shapes[s].rows, shapes[s].cols, shapes[s].count, shapes[s].where, &a);
    size_t n = a.rows < a.cols ? a.rows : a.cols;
    double *diagonal = malloc((n + 1) * sizeof *diagonal);
    assert_non_null(diagonal);
    for (size_t i = 0; i <= n; i++)
      diagonal[i] = NAN; /* every entry must be written; the one past n never */
    CHECK_OK(error, clmg_csr_diagonal(&a, diagonal, &error));
    double *dense = to_dense(&a);
    for (size_t i = 0; i < n; i++)
      assert_true(diagonal[i] == dense[i * a.cols + i]);
    assert_true(isnan(diagonal[n]));
    free(dense);
    free(diagonal);
    clmg_csr_free(&a);
  }
}

/* ---- permutation ---- */

static void test_permute(void **state) {
  (void)state;
  for (size_t s = 0; s < SHAPE_COUNT; s++) {
    clmg_csr a;
    clmg_error error;
    random_csr(shapes[s].rows, shapes[s].cols, shapes[s].count, shapes[s].where, &a);
    int32_t *row_perm = malloc((a.rows + 1) * sizeof *row_perm);
    int32_t *col_perm = malloc((a.cols + 1) * sizeof *col_perm);
    assert_true(row_perm && col_perm);
    double *dense = to_dense(&a);
    /* Both, rows only, columns only, neither. */
    for (int which = 0; which < 4; which++) {
      random_permutation(row_perm, a.rows);
      random_permutation(col_perm, a.cols);
      const int32_t *rp = which == 0 || which == 1 ? row_perm : NULL;
      const int32_t *cp = which == 0 || which == 2 ? col_perm : NULL;
      clmg_csr b;
      CHECK_OK(error, clmg_csr_permute(&a, rp, cp, &b, &error));
      assert_int_equal(b.rows, a.rows);
      assert_int_equal(b.cols, a.cols);
      assert_int_equal(clmg_csr_nnz(&b), clmg_csr_nnz(&a));
      assert_valid_csr(&b);
      double *permuted = to_dense(&b);
      for (size_t i = 0; i < a.rows; i++)
        for (size_t j = 0; j < a.cols; j++) {
          size_t old_i = rp ? (size_t)rp[i] : i, old_j = cp ? (size_t)cp[j] : j;
          assert_true(permuted[i * a.cols + j] == dense[old_i * a.cols + old_j]);
        }
      if (!rp && !cp)
        assert_csr_identical(&a, &b);
      free(permuted);
      clmg_csr_free(&b);
    }
    free(dense);
    free(row_perm);
    free(col_perm);
    clmg_csr_free(&a);
  }
}

static void test_permute_errors(void **state) {
  (void)state;
  clmg_csr a, out;
  clmg_error error;
  random_csr(6, 5, 20, PLACE_RANDOM, &a);
  int32_t row_perm[6], col_perm[5];
  random_permutation(row_perm, 6);
  random_permutation(col_perm, 5);

  int32_t saved = row_perm[3];
  row_perm[3] = 6;
  fill_with_garbage(&out);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_permute(&a, row_perm, NULL, &out, &error));
  CHECK_CONTAINS(error.message, "row_perm[3] = 6");
  assert_true(is_zeroed(&out));
  row_perm[3] = -2;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_permute(&a, row_perm, NULL, &out, NULL));
  row_perm[3] = saved;

  /* A repeat: col_perm[4] takes the value of col_perm[1]. */
  col_perm[4] = col_perm[1];
  fill_with_garbage(&out);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_permute(&a, row_perm, col_perm, &out, &error));
  CHECK_CONTAINS(error.message, "col_perm[4]");
  CHECK_CONTAINS(error.message, "repeats col_perm[1]");
  assert_true(is_zeroed(&out));
  clmg_csr_free(&a);
}

/* ---- host SpMV ---- */

static void test_spmv_host(void **state) {
  (void)state;
  for (size_t s = 0; s < SHAPE_COUNT; s++) {
    clmg_csr a;
    random_csr(shapes[s].rows, shapes[s].cols, shapes[s].count, shapes[s].where, &a);
    double *dense = to_dense(&a);
    double *x = malloc((a.cols + 1) * sizeof *x);
    double *y = malloc((a.rows + 1) * sizeof *y);
    double *y0 = malloc((a.rows + 1) * sizeof *y0);
    assert_true(x && y && y0);
    for (size_t j = 0; j < a.cols; j++)
      x[j] = rng_value();
    for (int trial = 0; trial < 4; trial++) {
      double alpha = rng_value(), beta = trial == 0 ? 0.0 : rng_value();
      for (size_t i = 0; i < a.rows; i++)
        y0[i] = y[i] = trial == 0 ? NAN : rng_value();
      clmg_csr_spmv_host(alpha, &a, x, beta, y);
      for (size_t i = 0; i < a.rows; i++) {
        double sum = 0.0, magnitude = 0.0;
        for (size_t j = 0; j < a.cols; j++) {
          sum += dense[i * a.cols + j] * x[j];
          magnitude += fabs(dense[i * a.cols + j] * x[j]);
        }
        double expected = alpha * sum + (beta == 0.0 ? 0.0 : beta * y0[i]);
        double scale = fabs(alpha) * magnitude + (beta == 0.0 ? 0.0 : fabs(beta * y0[i]));
        /* beta == 0 ignores the NaN in y. */
        assert_false(isnan(y[i]));
        if (fabs(y[i] - expected) > 1e-14 * scale)
          fail_msg("shape %zu row %zu: expected %.17g, found %.17g", s, i, expected, y[i]);
      }
    }
    free(x);
    free(y);
    free(y0);
    free(dense);
    clmg_csr_free(&a);
  }
}

/* ---- well-formed CSR ---- */

/* A malformed row far down a long matrix is found on the host's threads
 * (clmg_csr_check, here through clmg_csr_diagonal) and reported as the
 * serial walk reports the first one: the lowest bad row, whatever the
 * threads, for a column out of order and one out of range. */
static void test_csr_check_rows(void **state) {
  (void)state;
  const size_t m = 100000;
  clmg_csr a = {m, m, calloc(m + 1, sizeof(int64_t)), malloc(3 * m * sizeof(int32_t)),
                malloc(3 * m * sizeof(double))};
  double *diagonal = malloc(m * sizeof *diagonal);
  assert_true(a.row_ptr && a.col && a.val && diagonal);
  size_t k = 0;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = i ? i - 1 : 0; j <= i + 1 && j < m; j++) {
      a.col[k] = (int32_t)j;
      a.val[k++] = j == i ? 2.0 : -1.0;
    }
    a.row_ptr[i + 1] = (int64_t)k;
  }
  clmg_error error;
  const char *threads[2] = {"1", "3"};
  for (int t = 0; t < 2; t++) {
    char *kept = test_env_set("CLMG_HOST_THREADS", threads[t]);
    CHECK_OK(error, clmg_csr_diagonal(&a, diagonal, &error));
    assert_true(diagonal[70000] == 2.0);
    /* rows 90000 (out of range) and 70000 (out of order): 70000 first */
    int32_t *bad = &a.col[a.row_ptr[90000] + 2], kept_bad = *bad;
    *bad = (int32_t)m;
    assert_int_equal(clmg_csr_diagonal(&a, diagonal, &error), CLMG_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(error.message, "row 90000 has column 100000, outside [0, 100000)"));
    int32_t *swap = &a.col[a.row_ptr[70000]];
    int32_t first = swap[0];
    swap[0] = swap[1];
    swap[1] = first;
    assert_int_equal(clmg_csr_diagonal(&a, diagonal, &error), CLMG_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(error.message, "row 70000 has column 69999 after column 70000"));
    swap[1] = swap[0];
    swap[0] = first;
    *bad = kept_bad;
    test_env_restore("CLMG_HOST_THREADS", kept);
  }
  free(diagonal);
  clmg_csr_free(&a);
}

/* ---- symmetry ---- */

static void test_is_symmetric(void **state) {
  (void)state;
  size_t n = 40, count = 300;
  int32_t *row = malloc(2 * count * sizeof *row), *col = malloc(2 * count * sizeof *col);
  double *val = malloc(2 * count * sizeof *val);
  assert_true(row && col && val);
  /* S from random distinct lower-triangle positions and their mirrors:
   * exactly symmetric (no duplicates whose sums could round differently). */
  unsigned char seen[40 * 40] = {0};
  size_t total = 0;
  for (size_t k = 0; k < count; k++) {
    size_t i = rng_below(n), j = rng_below(i + 1);
    if (seen[i * n + j])
      continue;
    seen[i * n + j] = 1;
    double v = rng_value();
    row[total] = (int32_t)i;
    col[total] = (int32_t)j;
    val[total++] = v;
    if (i != j) {
      row[total] = (int32_t)j;
      col[total] = (int32_t)i;
      val[total++] = v;
    }
  }
  clmg_csr s;
  clmg_error error;
  CHECK_OK(error, clmg_csr_from_triplets(n, n, total, row, col, val, &s, &error));
  assert_true(clmg_csr_is_symmetric(&s, 0.0));

  /* Perturb one off-diagonal entry by a relative 1e-10. */
  size_t target = 0;
  while (row[target] == col[target])
    target++;
  int64_t k = s.row_ptr[row[target]];
  while (s.col[k] != col[target])
    k++;
  s.val[k] *= 1.0 + 1e-10;
  assert_false(clmg_csr_is_symmetric(&s, 0.0));
  assert_false(clmg_csr_is_symmetric(&s, 1e-12));
  assert_true(clmg_csr_is_symmetric(&s, 1e-8));
  clmg_csr_free(&s);

  /* An entry without a mirror: asymmetric unless it is an explicit zero. */
  int32_t r2[3] = {0, 1, 2}, c2[3] = {0, 2, 2};
  double v2[3] = {0.75, -0.3, 4.5};
  CHECK_OK(error, clmg_csr_from_triplets(3, 3, 3, r2, c2, v2, &s, &error));
  assert_false(clmg_csr_is_symmetric(&s, 0.5));
  clmg_csr_free(&s);
  v2[1] = 0.0;
  CHECK_OK(error, clmg_csr_from_triplets(3, 3, 3, r2, c2, v2, &s, &error));
  assert_true(clmg_csr_is_symmetric(&s, 0.0));
  clmg_csr_free(&s);
  /* the same below the diagonal (pairs are compared from their upper
   * entry; a lower one without its mirror is found by the count), beside a
   * symmetric pair: asymmetric unless zero, a NaN never symmetric, and
   * under a tolerance of 1 anything is within it of 0 */
  int32_t r3[5] = {0, 0, 1, 2, 2}, c3[5] = {0, 1, 0, 1, 2};
  double v3[5] = {0.75, -0.25, -0.25, -0.3, 4.5};
  const double lone[4] = {-0.3, 0.0, NAN, -0.3};
  const double tolerance[4] = {0.5, 0.0, 2.0, 1.0};
  for (int t = 0; t < 4; t++) {
    v3[3] = lone[t];
    CHECK_OK(error, clmg_csr_from_triplets(3, 3, 5, r3, c3, v3, &s, &error));
    assert_int_equal(clmg_csr_is_symmetric(&s, tolerance[t]), t == 1 || t == 3);
    clmg_csr_free(&s);
  }

  /* Rows split over host threads (ranges of at least 4,096 rows): a long
   * symmetric tridiagonal matrix, then one entry broken in the first, a
   * middle and the last row, each seen whichever range holds it. */
  const size_t m = 40000;
  int32_t *tr = malloc(3 * m * sizeof *tr), *tc = malloc(3 * m * sizeof *tc);
  double *tv = malloc(3 * m * sizeof *tv);
  assert_non_null(tr);
  assert_non_null(tc);
  assert_non_null(tv);
  size_t entries = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = i ? i - 1 : 0; j <= i + 1 && j < m; j++) {
      tr[entries] = (int32_t)i;
      tc[entries] = (int32_t)j;
      tv[entries++] = i == j ? 4.0 : -1.0 - 1e-3 * (double)(i < j ? i : j);
    }
  CHECK_OK(error, clmg_csr_from_triplets(m, m, entries, tr, tc, tv, &s, &error));
  assert_true(clmg_csr_is_symmetric(&s, 0.0));
  const size_t broken[3] = {0, m / 2 + 7, m - 1};
  for (int t = 0; t < 3; t++) {
    int64_t first = s.row_ptr[broken[t]]; /* its first entry off the diagonal */
    if ((size_t)s.col[first] == broken[t])
      first++;
    double kept = s.val[first];
    s.val[first] = kept * (1.0 + 1e-6);
    assert_false(clmg_csr_is_symmetric(&s, 1e-9));
    s.val[first] = kept;
  }
  assert_true(clmg_csr_is_symmetric(&s, 0.0));
  clmg_csr_free(&s);
  free(tr);
  free(tc);
  free(tv);

  /* Rectangular matrices are never symmetric. */
  CHECK_OK(error, clmg_csr_from_triplets(3, 4, 0, NULL, NULL, NULL, &s, &error));
  assert_false(clmg_csr_is_symmetric(&s, 1.0));
  clmg_csr_free(&s);
  assert_false(clmg_csr_is_symmetric(NULL, 1.0));
  free(row);
  free(col);
  free(val);
}

/* ---- Matrix Market: round trips ---- */

/* Values over many magnitudes, with full 53-bit mantissas. */
static double rng_wide_value(void) {
  double v = 0.0;
  while (v == 0.0)
    v = rng_uniform();
  return v * pow(10.0, (double)((int)rng_below(601) - 300));
}

static void test_mm_round_trip_matrix(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-round-trip");
  char path[4096];
  snprintf(path, sizeof path, "%s/a.mtx", dir);
  for (size_t s = 0; s < SHAPE_COUNT + 1; s++) {
    clmg_csr a, b;
    clmg_error error;
    if (s < SHAPE_COUNT)
      random_csr(shapes[s].rows, shapes[s].cols, shapes[s].count, shapes[s].where, &a);
    else
      random_csr(3000, 2500, 40000, PLACE_RANDOM, &a);
    for (size_t k = 0; k < clmg_csr_nnz(&a); k++)
      a.val[k] = rng_wide_value();
    if (clmg_csr_nnz(&a) > 2) {
      a.val[0] = -0.0;
      a.val[1] = 4.9406564584124654e-324; /* the smallest denormal */
    }
    CHECK_OK(error, clmg_csr_write_matrix_market(path, &a, &error));
    fill_with_garbage(&b);
    CHECK_OK(error, clmg_csr_read_matrix_market(path, &b, &error));
    assert_valid_csr(&b);
    assert_csr_identical(&a, &b);
    clmg_csr_free(&a);
    clmg_csr_free(&b);
  }
  remove_tree(dir);
}

/* clmg_csr_read_matrix_market with CLMG_HOST_THREADS threads, the previous
 * value restored. */
static clmg_status read_with_threads(const char *threads, const char *path, clmg_csr *a,
                                     clmg_error *error) {
  char *kept = test_env_set("CLMG_HOST_THREADS", threads);
  clmg_status status = clmg_csr_read_matrix_market(path, a, error);
  test_env_restore("CLMG_HOST_THREADS", kept);
  return status;
}

/* path's text with the first occurrence of `from` at or after byte `after`
 * replaced by `to` (of the same length or shorter, padded with blanks). */
static void patch_file(const char *path, size_t after, const char *from, const char *to) {
  size_t size = 0;
  char *content = test_read_file(path, &size);
  assert_non_null(content);
  char *at = strstr(content + after, from);
  assert_non_null(at);
  size_t n = strlen(from), m = strlen(to);
  assert_true(m <= n);
  memcpy(at, to, m);
  memset(at + m, ' ', n - m);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(content, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
  free(content);
}

/* A file of many megabytes is parsed in byte ranges on the host's threads:
 * the matrix is the serial reader's, entry for entry, and a bad line late in
 * the file, too many or too few entry lines give the serial reader's
 * message, line number included. */
static void test_mm_parallel_read(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-parallel");
  char path[4096];
  snprintf(path, sizeof path, "%s/a.mtx", dir);
  clmg_csr a, b, c;
  clmg_error error;
  random_csr(150000, 120000, 400000, PLACE_RANDOM, &a); /* about 14 MB of entry lines */
  for (size_t k = 0; k < clmg_csr_nnz(&a); k++)
    a.val[k] = rng_wide_value();
  CHECK_OK(error, clmg_csr_write_matrix_market(path, &a, &error));
  CHECK_OK(error, read_with_threads("1", path, &b, &error));
  CHECK_OK(error, read_with_threads("3", path, &c, &error));
  assert_csr_identical(&a, &b);
  assert_csr_identical(&a, &c);
  clmg_csr_free(&b);
  clmg_csr_free(&c);
  size_t size = 0;
  char *content = test_read_file(path, &size);
  assert_non_null(content);
  free(content);
  char serial[sizeof error.message], parallel[sizeof error.message];
  /* a value that is no number, three quarters down the file */
  char copy[4096];
  snprintf(copy, sizeof copy, "%s/bad.mtx", dir);
  for (int k = 0; k < 3; k++) {
    CHECK_OK(error, clmg_csr_write_matrix_market(copy, &a, &error));
    if (k == 0)
      patch_file(copy, size / 4 * 3, "\n1", "\nx");
    else { /* the entry count of the size line one lower, then one higher */
      char from[32], to[32];
      snprintf(from, sizeof from, " %zu\n", clmg_csr_nnz(&a));
      snprintf(to, sizeof to, " %zu\n", clmg_csr_nnz(&a) + (k == 1 ? -1 : 1));
      assert_int_equal(strlen(to), strlen(from));
      patch_file(copy, 0, from, to);
    }
    assert_int_equal(read_with_threads("1", copy, &b, &error), CLMG_ERROR_PARSE);
    snprintf(serial, sizeof serial, "%s", error.message);
    assert_int_equal(read_with_threads("3", copy, &c, &error), CLMG_ERROR_PARSE);
    snprintf(parallel, sizeof parallel, "%s", error.message);
    assert_string_equal(parallel, serial);
    assert_non_null(strstr(serial, copy));
  }
  clmg_csr_free(&a);
  remove_tree(dir);
}

/* A general array file of many megabytes (elasticity's coordinates, say) is
 * parsed in byte ranges on the host's threads too: the serial reader's
 * matrix, every position in its place, and a bad value late in the file,
 * too many or too few entry lines give the serial reader's message. */
static void test_mm_parallel_array_read(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-parallel-array");
  char path[4096], copy[4096];
  snprintf(path, sizeof path, "%s/a.mtx", dir);
  snprintf(copy, sizeof copy, "%s/bad.mtx", dir);
  const size_t rows = 200000, cols = 3;                  /* about 14 MB of entry lines */
  double *values = malloc(rows * cols * sizeof *values); /* row-major */
  assert_non_null(values);
  for (size_t k = 0; k < rows * cols; k++)
    values[k] = rng_wide_value();
  values[5] = 0.0; /* an array stores its zeros */
  clmg_error error;
  CHECK_OK(error, clmg_write_matrix_market_array(path, values, rows, cols, &error));
  clmg_csr b, c;
  CHECK_OK(error, read_with_threads("1", path, &b, &error));
  CHECK_OK(error, read_with_threads("3", path, &c, &error));
  assert_csr_identical(&b, &c);
  assert_int_equal(c.rows, rows);
  assert_int_equal(c.cols, cols);
  assert_int_equal(clmg_csr_nnz(&c), rows * cols);
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++) {
      int64_t k = c.row_ptr[i] + (int64_t)j;
      assert_int_equal(c.col[k], j);
      assert_true(c.val[k] == values[i * cols + j]);
    }
  clmg_csr_free(&b);
  clmg_csr_free(&c);
  size_t size = 0;
  char *content = test_read_file(path, &size);
  assert_non_null(content);
  free(content);
  char serial[sizeof error.message], parallel[sizeof error.message];
  for (int k = 0; k < 3; k++) {
    CHECK_OK(error, clmg_write_matrix_market_array(copy, values, rows, cols, &error));
    if (k == 0) { /* a value that is no number, three quarters down the file */
      patch_file(copy, size / 4 * 3, "e", "x");
    } else { /* the rows of the size line one fewer (lines left over), then one more */
      char from[32], to[32];
      snprintf(from, sizeof from, "\n%zu %zu\n", rows, cols);
      snprintf(to, sizeof to, "\n%zu %zu\n", rows + (k == 1 ? -1 : 1), cols);
      assert_int_equal(strlen(to), strlen(from));
      patch_file(copy, 0, from, to);
    }
    assert_int_equal(read_with_threads("1", copy, &b, &error), CLMG_ERROR_PARSE);
    snprintf(serial, sizeof serial, "%s", error.message);
    assert_int_equal(read_with_threads("3", copy, &c, &error), CLMG_ERROR_PARSE);
    snprintf(parallel, sizeof parallel, "%s", error.message);
    assert_string_equal(parallel, serial);
    assert_non_null(strstr(serial, copy));
  }
  free(values);
  remove_tree(dir);
}

static void test_mm_round_trip_vector(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-vector");
  char path[4096];
  snprintf(path, sizeof path, "%s/v.mtx", dir);
  const size_t lengths[] = {0, 1, 17, 5000};
  for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++) {
    size_t n = lengths[t];
    double *values = malloc((n + 1) * sizeof *values);
    assert_non_null(values);
    for (size_t i = 0; i < n; i++)
      values[i] = rng_wide_value();
    clmg_error error;
    CHECK_OK(error, clmg_write_matrix_market_vector(path, values, n, &error));
    double *read = NULL;
    size_t read_n = 12345;
    CHECK_OK(error, clmg_read_matrix_market_vector(path, &read, &read_n, &error));
    assert_int_equal(read_n, n);
    assert_non_null(read);
    if (n > 0)
      assert_memory_equal(values, read, n * sizeof *values);
    free(read);
    free(values);
  }
  remove_tree(dir);
}

/* ---- Matrix Market: the variants of the format ---- */

/* Writes `content` to dir/name, reads it as a matrix and compares it with
 * the dense rows x cols `expected`. */
static void check_matrix_file(const char *dir, const char *name, const char *content,
                              const double *expected, size_t rows, size_t cols,
                              size_t expected_nnz) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  write_text(path, content);
  clmg_csr a;
  clmg_error error;
  clmg_status status = clmg_csr_read_matrix_market(path, &a, &error);
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", name, clmg_status_string(status), error.message);
  assert_int_equal(a.rows, rows);
  assert_int_equal(a.cols, cols);
  assert_valid_csr(&a);
  assert_int_equal(clmg_csr_nnz(&a), expected_nnz);
  double *actual = to_dense(&a);
  assert_dense_equal(expected, actual, rows, cols);
  free(actual);
  clmg_csr_free(&a);
}

static void test_mm_symmetric_and_skew(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-symmetric");
  const size_t n = 9;
  double expected[81];
  for (int skew = 0; skew <= 1; skew++) {
    memset(expected, 0, sizeof expected);
    text file = {0};
    append(&file, "%%%%MatrixMarket matrix coordinate real %s\n",
           skew ? "skew-symmetric" : "symmetric");
    append(&file, "%% a comment\n%%\n");
    /* Random lower-triangle positions, each at most once; skew files have no
     * diagonal. */
    size_t entries = 0, nnz = 0;
    char lines[81][80];
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) {
        if ((skew && i == j) || rng_below(3) == 0)
          continue;
        double v = rng_value();
        /* One entry in four is written above the diagonal: accepted and
         * mirrored like a lower one (the documented choice). */
        int upper = i != j && rng_below(4) == 0;
        size_t r = upper ? j : i, c = upper ? i : j;
        snprintf(lines[entries++], sizeof lines[0], "%zu %zu %.17g\n", r + 1, c + 1, v);
        expected[r * n + c] = v;
        expected[c * n + r] = r == c ? v : (skew ? -v : v);
        nnz += r == c ? 1 : 2;
      }
    append(&file, "%zu %zu %zu\n", n, n, entries);
    for (size_t e = 0; e < entries; e++)
      append(&file, "%s", lines[e]);
    check_matrix_file(dir, skew ? "skew.mtx" : "symmetric.mtx", file.data, expected, n, n, nnz);
    free(file.data);
  }
  remove_tree(dir);
}

static void test_mm_pattern_integer_array(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-fields");
  const size_t rows = 5, cols = 7;
  double expected[35];
  int used[35];

  /* pattern general: values 1; duplicates summed. */
  {
    memset(expected, 0, sizeof expected);
    memset(used, 0, sizeof used);
    text file = {0};
    size_t entries = 12, nnz = 0;
    append(&file, "%%%%MatrixMarket matrix coordinate pattern general\n%zu %zu %zu\n", rows, cols,
           entries);
    for (size_t e = 0; e < entries; e++) {
      size_t i = rng_below(rows), j = rng_below(cols);
      append(&file, "%zu %zu\n", i + 1, j + 1);
      expected[i * cols + j] += 1.0;
      nnz += !used[i * cols + j];
      used[i * cols + j] = 1;
    }
    check_matrix_file(dir, "pattern.mtx", file.data, expected, rows, cols, nnz);
    free(file.data);
  }
  /* integer general, with negative values. */
  {
    memset(expected, 0, sizeof expected);
    text file = {0};
    append(&file, "%%%%MatrixMarket matrix coordinate integer general\n%zu %zu %zu\n", rows, cols,
           rows);
    for (size_t i = 0; i < rows; i++) {
      long long v = (long long)rng_below(2000001) - 1000000;
      size_t j = rng_below(cols);
      append(&file, "%zu %zu %lld\n", i + 1, j + 1, v);
      expected[i * cols + j] = (double)v;
    }
    check_matrix_file(dir, "integer.mtx", file.data, expected, rows, cols, rows);
    free(file.data);
  }
  /* array real general: column-major, every position stored. */
  {
    text file = {0};
    append(&file, "%%%%MatrixMarket matrix array real general\n%% comment\n%zu %zu\n", rows, cols);
    for (size_t j = 0; j < cols; j++)
      for (size_t i = 0; i < rows; i++) {
        expected[i * cols + j] = rng_value();
        append(&file, "%.17g\n", expected[i * cols + j]);
      }
    check_matrix_file(dir, "array.mtx", file.data, expected, rows, cols, rows * cols);
    free(file.data);
  }
  /* array integer symmetric: the lower triangle, column by column. */
  {
    const size_t n = 4;
    text file = {0};
    append(&file, "%%%%MatrixMarket matrix array integer symmetric\n%zu %zu\n", n, n);
    for (size_t j = 0; j < n; j++)
      for (size_t i = j; i < n; i++) {
        long long v = (long long)rng_below(199) - 99;
        append(&file, "%lld\n", v);
        expected[i * n + j] = expected[j * n + i] = (double)v;
      }
    check_matrix_file(dir, "array-symmetric.mtx", file.data, expected, n, n, n * n);
    free(file.data);
  }
  /* array real skew-symmetric: strictly lower, zero diagonal (stored). */
  {
    const size_t n = 4;
    text file = {0};
    append(&file, "%%%%MatrixMarket matrix array real skew-symmetric\n%zu %zu\n", n, n);
    memset(expected, 0, sizeof expected);
    for (size_t j = 0; j < n; j++)
      for (size_t i = j + 1; i < n; i++) {
        double v = rng_value();
        append(&file, "%.17g\n", v);
        expected[i * n + j] = v;
        expected[j * n + i] = -v;
      }
    check_matrix_file(dir, "array-skew.mtx", file.data, expected, n, n, n * (n - 1));
    free(file.data);
  }
  remove_tree(dir);
}

/* CRLF line ends, blank lines, comments among the entries, tabs and mixed
 * case keywords are all accepted. */
static void test_mm_tolerated_layout(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-layout");
  double a = rng_value(), b = rng_value(), c = rng_value();
  char content[1024];
  snprintf(content, sizeof content,
           "%%%%MatrixMarket Matrix Coordinate REAL General  \r\n"
           "%% comment\r\n"
           "\r\n"
           "   \r\n"
           "  3 4\t3  \r\n"
           "1 1 %.17g\r\n"
           "\r\n"
           "%% a comment between entries\r\n"
           "\t3\t4\t%.17g\t\r\n"
           "2 2 %.17g", /* no final line end */
           a, b, c);
  double expected[12] = {0};
  expected[0] = a;
  expected[2 * 4 + 3] = b;
  expected[1 * 4 + 1] = c;
  check_matrix_file(dir, "layout.mtx", content, expected, 3, 4, 3);

  /* Trailing blank and comment lines after the last entry. */
  snprintf(content, sizeof content,
           "%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 %.17g\n\n%% end\n\n", a);
  check_matrix_file(dir, "trailing.mtx", content, &a, 1, 1, 1);

  /* An empty matrix. */
  check_matrix_file(dir, "empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n",
                    expected, 0, 0, 0);
  remove_tree(dir);
}

static void test_mm_vector_forms(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-vector-forms");
  char path[4096];
  double expected[6] = {0};
  for (size_t i = 0; i < 6; i++)
    expected[i] = rng_value();
  clmg_error error;
  double *values = NULL;
  size_t n = 0;

  /* 1 x n array. */
  text file = {0};
  append(&file, "%%%%MatrixMarket matrix array real general\n1 6\n");
  for (size_t i = 0; i < 6; i++)
    append(&file, "%.17g\n", expected[i]);
  snprintf(path, sizeof path, "%s/row.mtx", dir);
  write_text(path, file.data);
  free(file.data);
  CHECK_OK(error, clmg_read_matrix_market_vector(path, &values, &n, &error));
  assert_int_equal(n, 6);
  assert_memory_equal(values, expected, sizeof expected);
  free(values);

  /* coordinate n x 1: absent entries are 0, duplicates summed. */
  double split = rng_value();
  memset(&file, 0, sizeof file);
  append(&file, "%%%%MatrixMarket matrix coordinate real general\n6 1 5\n");
  append(&file, "5 1 %.17g\n2 1 %.17g\n4 1 %.17g\n2 1 %.17g\n1 1 %.17g\n", expected[4],
         expected[1] - split, expected[3], split, expected[0]);
  snprintf(path, sizeof path, "%s/coordinate.mtx", dir);
  write_text(path, file.data);
  free(file.data);
  CHECK_OK(error, clmg_read_matrix_market_vector(path, &values, &n, &error));
  assert_int_equal(n, 6);
  assert_true(values[0] == expected[0]);
  assert_true(values[1] == (expected[1] - split) + split);
  assert_true(values[2] == 0.0);
  assert_true(values[3] == expected[3]);
  assert_true(values[4] == expected[4]);
  assert_true(values[5] == 0.0);
  free(values);

  /* integer array n x 1. */
  snprintf(path, sizeof path, "%s/integer.mtx", dir);
  write_text(path, "%%MatrixMarket matrix array integer general\n3 1\n-7\n123456789\n42\n");
  CHECK_OK(error, clmg_read_matrix_market_vector(path, &values, &n, &error));
  assert_int_equal(n, 3);
  assert_true(values[0] == -7.0 && values[1] == 123456789.0 && values[2] == 42.0);
  free(values);
  remove_tree(dir);
}

/* ---- Matrix Market: malformed files ---- */

typedef struct malformed {
  const char *content;
  size_t line;      /* the line the message must name */
  const char *part; /* and a part of its text */
} malformed;

#define BANNER "%%MatrixMarket matrix coordinate real general\n"

static const malformed malformed_matrices[] = {
    {"", 1, "empty file"},
    {"%%MatrixMarkt matrix coordinate real general\n2 2 1\n1 1 1.5\n", 1, "banner"},
    {"2 2 1\n1 1 1.5\n", 1, "found '2'"},
    {"%%MatrixMarket vector coordinate real general\n", 1, "found 'vector'"},
    {"%%MatrixMarket matrix sparse real general\n", 1, "found 'sparse'"},
    {"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n", 1, "'complex'"},
    {"%%MatrixMarket matrix coordinate double general\n", 1, "found 'double'"},
    {"%%MatrixMarket matrix coordinate real hermitian\n", 1, "'hermitian'"},
    {"%%MatrixMarket matrix coordinate real lower\n", 1, "found 'lower'"},
    {"%%MatrixMarket matrix coordinate real\n", 1, "found end of line"},
    {"%%MatrixMarket matrix coordinate real general extra\n", 1, "found 'extra'"},
    {"%%MatrixMarket matrix array pattern general\n2 2\n", 1, "'pattern'"},
    {BANNER "% only comments\n\n", 3, "size line"},
    {BANNER "% comment\n3 x 3\n", 3, "found 'x'"},
    {BANNER "-3 3 1\n", 2, "found '-3'"},
    {BANNER "3 3\n", 2, "found end of line"},
    {"%%MatrixMarket matrix array real general\n3 1 3\n", 2, "found '3'"},
    {BANNER "2 2 5\n", 2, "at most 4 entries"},
    {BANNER "3000000000 2 1\n", 2, "32-bit"},
    {"%%MatrixMarket matrix coordinate real symmetric\n3 4 2\n", 2, "square"},
    {"%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n", 2, "at most 6 entries"},
    {BANNER "3 3 4\n1 1 0.5\n2 2 -1.25\n", 4, "expected 4 entries, file ended after 2"},
    {BANNER "3 3 4\n1 1 0.5\n2 2 -1.25\n\n% trailing comment\n", 6,
     "expected 4 entries, file ended after 2"},
    {BANNER "3 3 2\n1 1 0.5\n2 2 -1.25\n3 3 2.5\n", 5, "expected 2 entries"},
    {BANNER "3 3 2\n1 1 0.5\n0 2 -1.25\n", 4, "row index in [1, 3], found 0"},
    {BANNER "3 3 2\n1 1 0.5\n2 4 -1.25\n", 4, "column index in [1, 3], found 4"},
    {BANNER "3 3 2\n1 1 0.5\n2 2 abc\n", 4, "found 'abc'"},
    {BANNER "3 3 2\n1 1 0.5\n2 2\n", 4, "found end of line"},
    {BANNER "3 3 2\n1.5 1 0.5\n", 3, "row index (an integer), found '1.5'"},
    {BANNER "3 3 2\n99999999999999999999 1 0.5\n", 3, "found '99999999999999999999'"},
    {BANNER "3 3 2\n1 1 0.5\n2 2 1e999\n", 4, "double range"},
    /* non-finite values and a total underflow, refused at their line */
    {BANNER "3 3 2\n1 1 0.5\n2 2 nan\n", 4, "expected a finite real value, found 'nan'"},
    {BANNER "3 3 2\n1 1 -Inf\n2 2 1\n", 3, "expected a finite real value, found '-Inf'"},
    {BANNER "3 3 2\n1 1 0.5\n2 2 2.5e-400\n", 4, "which underflows to 0"},
    {BANNER "3 3 1\n1 2 0.5 7\n", 3, "found '7'"},
    {BANNER "3 3 1\n1 2 0.5x\n", 3, "found '0.5x'"},
    {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 2.5\n", 3,
     "integer value, found '2.5'"},
    {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 2.5\n", 3, "found '2.5'"},
    {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 0.5\n2 2 1.5\n", 4,
     "diagonal"},
    {"%%MatrixMarket matrix array real general\n2 2\n1.5\n2.5\n3.5\n", 5,
     "expected 4 entries, file ended after 3"},
    {"%%MatrixMarket matrix array real general\n1 2\n1.5\n2.5\n3.5\n", 5, "expected 2 entries"},
    {"%%MatrixMarket matrix array real symmetric\n2 2\n1.5\n2.5\n3.5\n-1\n", 6,
     "expected 3 entries"},
    /* a size line that claims far more rows than the file has entries (it
     * once took 76 s and 11 GB before being refused) */
    {BANNER "724506280 724506280 0\n", 2, "holds 0 entries"},
    {BANNER "2147483647 3 2\n1 1 1\n2 2 1\n", 4, "claims 2147483647 x 3"},
    /* duplicates are summed, and what is left must be in proportion too: else
     * clmg would write a file (of the distinct entries) it refuses to read */
    {BANNER "1048592 1 2\n1 1 1\n1 1 2\n", 2, "holds 1 distinct entries"},
    {BANNER "3 3 1\n1 2 0.5\x1b[31m\n", 3, "control byte 0x1b"},
    {BANNER "3 3 1\n1 2\x07 0.5\n", 3, "control byte 0x07"},
    /* bytes that are not UTF-8 are escaped in the message, UTF-8 is kept */
    {BANNER "3 3 1\n1 2 0.5\xff\xc0RED\n", 3, "found '0.5\\xff\\xc0RED'"},
    {BANNER "3 3 1\n1 2 0.5\xc3\xa9\n", 3, "found '0.5\xc3\xa9'"},
};

static const malformed malformed_vectors[] = {
    {"%%MatrixMarket matrix array real general\n3 4\n", 2, "expected a vector"},
    {"%%MatrixMarket matrix coordinate pattern general\n3 1 1\n1 1\n", 1, "'pattern'"},
    {"%%MatrixMarket matrix array real symmetric\n1 1\n2.5\n", 1, "'general'"},
    {"%%MatrixMarket matrix array real general\n3 1\n1.5\n2.5\n", 4,
     "expected 3 entries, file ended after 2"},
    {"%%MatrixMarket matrix coordinate real general\n3 1 1\n2 2 1.5\n", 3, "column index"},
    {"%%MatrixMarket matrix coordinate real general\n2000000000 1 1\n2 1 1.5\n", 3,
     "holds 1 entries"},
};

static void check_malformed(const char *dir, size_t index, const malformed *m, int vector) {
  char path[4096], location[4200];
  snprintf(path, sizeof path, "%s/bad-%s-%02zu.mtx", dir, vector ? "vector" : "matrix", index);
  write_text(path, m->content);
  clmg_error error;
  memset(error.message, 'x', sizeof error.message - 1);
  error.message[sizeof error.message - 1] = '\0';
  clmg_status status;
  if (vector) {
    double *values = (double *)&error; /* garbage that must be replaced by NULL */
    size_t n = 99;
    status = clmg_read_matrix_market_vector(path, &values, &n, &error);
    assert_null(values);
    assert_int_equal(n, 0);
    CHECK_STATUS(CLMG_ERROR_PARSE, clmg_read_matrix_market_vector(path, &values, &n, NULL));
  } else {
    clmg_csr a;
    fill_with_garbage(&a);
    status = clmg_csr_read_matrix_market(path, &a, &error);
    if (!is_zeroed(&a))
      fail_msg("%s case %zu: the output is not empty after a failure", path, index);
    CHECK_STATUS(CLMG_ERROR_PARSE, clmg_csr_read_matrix_market(path, &a, NULL));
  }
  if (status != CLMG_ERROR_PARSE)
    fail_msg("case %zu (%s): %s, expected a parse error; message: %s", index, path,
             clmg_status_string(status), error.message);
  snprintf(location, sizeof location, "%s:%zu: ", path, m->line);
  if (strncmp(error.message, location, strlen(location)) != 0)
    fail_msg("case %zu: message \"%s\" does not start with \"%s\"", index, error.message, location);
  CHECK_CONTAINS(error.message, m->part);
}

static void test_mm_malformed(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-malformed");
  for (size_t i = 0; i < sizeof malformed_matrices / sizeof malformed_matrices[0]; i++)
    check_malformed(dir, i, &malformed_matrices[i], 0);
  for (size_t i = 0; i < sizeof malformed_vectors / sizeof malformed_vectors[0]; i++)
    check_malformed(dir, i, &malformed_vectors[i], 1);
  remove_tree(dir);
}

/* A NUL byte inside a value line is refused, not read as the end of the
 * number ("1 1 4\0.5 garbage" once read as 4). */
static void test_mm_nul_byte(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-nul");
  char path[4096];
  snprintf(path, sizeof path, "%s/nul.mtx", dir);
  static const char content[] = BANNER "2 2 2\n1 1 4\0.5 garbage\n2 2 1\n";
  FILE *file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(content, 1, sizeof content - 1, file), sizeof content - 1);
  assert_int_equal(fclose(file), 0);
  clmg_csr a;
  clmg_error error;
  CHECK_STATUS(CLMG_ERROR_PARSE, clmg_csr_read_matrix_market(path, &a, &error));
  CHECK_CONTAINS(error.message, ":3: ");
  CHECK_CONTAINS(error.message, "control byte 0x00 at column 6");
  remove_tree(dir);
}

/* Lines are read within a bound, so a file without line ends is refused as
 * soon as its first line passes it, holding no more: /dev/zero (it once took
 * 24 GB) fails at its banner in a child whose address space is 64 MB, as
 * the matrix and as a vector; a data line of 2 MB fails at its line; a
 * comment of 100 kB is no problem. The child is skipped under
 * AddressSanitizer, which reserves far more address space than the limit. */
/* In the child: /dev/zero as a matrix and as a vector, both refused at the
 * banner. */
static int read_dev_zero(void *data) {
  (void)data;
  clmg_csr a;
  clmg_error error;
  clmg_status status = clmg_csr_read_matrix_market("/dev/zero", &a, &error);
  if (status != CLMG_ERROR_PARSE ||
      !strstr(error.message, "/dev/zero:1: expected the %MatrixMarket banner line"))
    return 1;
  double *values = NULL;
  size_t n = 0;
  status = clmg_read_matrix_market_vector("/dev/zero", &values, &n, &error);
  return status == CLMG_ERROR_PARSE && strstr(error.message, "banner line") ? 0 : 2;
}

static void test_mm_bounded_lines(void **state) {
  (void)state;
  if (access("/dev/zero", R_OK) == 0)
    test_in_limited_child(64u << 20, read_dev_zero, NULL);
  char *dir = make_tmpdir("mm-lines");
  char path[4096];
  snprintf(path, sizeof path, "%s/long.mtx", dir);
  FILE *file = fopen(path, "w");
  assert_non_null(file);
  fprintf(file, "%%%%MatrixMarket matrix coordinate real general\n%%");
  for (int k = 0; k < 100000; ++k)
    fputc('c', file); /* a comment of 100 kB: fine */
  fprintf(file, "\n2 2 2\n1 1 4\n2 2 ");
  for (int k = 0; k < (2 << 20); ++k)
    fputc('5', file); /* a number of 2 MB: past the bound */
  fprintf(file, "\n");
  fclose(file);
  clmg_csr a = {0};
  clmg_error error;
  assert_int_equal(clmg_csr_read_matrix_market(path, &a, &error), CLMG_ERROR_PARSE);
  CHECK_CONTAINS(error.message, "long.mtx:5: expected a line of at most 1048576 bytes");
  remove_tree(dir);
}

static void test_mm_io_errors(void **state) {
  (void)state;
  char *dir = make_tmpdir("mm-io");
  char path[4096];
  clmg_error error;
  clmg_csr a;

  snprintf(path, sizeof path, "%s/does-not-exist.mtx", dir);
  fill_with_garbage(&a);
  CHECK_STATUS(CLMG_ERROR_IO, clmg_csr_read_matrix_market(path, &a, &error));
  CHECK_CONTAINS(error.message, path);
  CHECK_CONTAINS(error.message, strerror(ENOENT));
  assert_true(is_zeroed(&a));
  double *values = NULL;
  size_t n = 0;
  CHECK_STATUS(CLMG_ERROR_IO, clmg_read_matrix_market_vector(path, &values, &n, &error));
  CHECK_CONTAINS(error.message, strerror(ENOENT));
  assert_null(values);

  /* Writing into a missing directory, or onto a directory. */
  random_csr(4, 4, 6, PLACE_RANDOM, &a);
  snprintf(path, sizeof path, "%s/missing/a.mtx", dir);
  CHECK_STATUS(CLMG_ERROR_IO, clmg_csr_write_matrix_market(path, &a, &error));
  CHECK_CONTAINS(error.message, path);
  CHECK_CONTAINS(error.message, strerror(ENOENT));
  CHECK_STATUS(CLMG_ERROR_IO, clmg_csr_write_matrix_market(dir, &a, NULL));
  double v[2] = {0.5, -1.5};
  CHECK_STATUS(CLMG_ERROR_IO, clmg_write_matrix_market_vector(path, v, 2, &error));
  CHECK_CONTAINS(error.message, path);
  /* /dev/full accepts the open and fails the writes: the error must be
   * seen (at the latest when the buffer is flushed). */
  if (access("/dev/full", W_OK) == 0) {
    CHECK_STATUS(CLMG_ERROR_IO, clmg_csr_write_matrix_market("/dev/full", &a, &error));
    CHECK_CONTAINS(error.message, strerror(ENOSPC));
  }
  clmg_csr_free(&a);

  /* A directory is not a file to read. */
  CHECK_STATUS(CLMG_ERROR_IO, clmg_csr_read_matrix_market(dir, &a, &error));
  assert_true(is_zeroed(&a));

  /* NULL arguments. */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_read_matrix_market(NULL, &a, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_read_matrix_market(path, NULL, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_csr_write_matrix_market(path, NULL, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_read_matrix_market_vector(path, NULL, &n, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_write_matrix_market_vector(path, NULL, 3, NULL));
  remove_tree(dir);
}

/* Numbers are written and read in the C locale even when the application
 * has chosen one with a decimal comma. Skipped where no such locale is
 * installed. */
static void test_mm_decimal_comma_locale(void **state) {
  (void)state;
  const char *candidates[] = {"de_DE.UTF-8", "de_DE.utf8",  "fr_FR.UTF-8",
                              "fr_FR.utf8",  "nl_NL.UTF-8", "ru_RU.UTF-8"};
  const char *chosen = NULL;
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !chosen; i++)
    if (setlocale(LC_NUMERIC, candidates[i]) && localeconv()->decimal_point[0] == ',')
      chosen = candidates[i];
  if (!chosen) {
    setlocale(LC_NUMERIC, "C");
    skip();
  }
  char *dir = make_tmpdir("mm-locale");
  char path[4096];
  snprintf(path, sizeof path, "%s/a.mtx", dir);
  clmg_csr a, b;
  clmg_error error;
  random_csr(30, 20, 100, PLACE_RANDOM, &a);
  CHECK_OK(error, clmg_csr_write_matrix_market(path, &a, &error));
  CHECK_OK(error, clmg_csr_read_matrix_market(path, &b, &error));
  /* A round trip alone would pass with commas on both sides; the file must
   * have decimal points for other programs. */
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  int c, commas = 0;
  while ((c = fgetc(f)) != EOF)
    commas += c == ',';
  fclose(f);
  /* And a file with decimal points reads as such. */
  snprintf(path, sizeof path, "%s/points.mtx", dir);
  write_text(path, "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.625\n");
  clmg_csr c_points;
  CHECK_OK(error, clmg_csr_read_matrix_market(path, &c_points, &error));
  setlocale(LC_NUMERIC, "C");
  assert_int_equal(commas, 0);
  assert_true(c_points.val[0] == 0.625);
  clmg_csr_free(&c_points);
  assert_csr_identical(&a, &b);
  clmg_csr_free(&a);
  clmg_csr_free(&b);
  remove_tree(dir);
}

int main(void) {
  rng_seed(0x5eed5eed12345678u);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_from_triplets),
      cmocka_unit_test(test_from_triplets_errors),
      cmocka_unit_test(test_copy_and_transpose),
      cmocka_unit_test(test_row_block),
      cmocka_unit_test(test_invalid_csr_input),
      cmocka_unit_test(test_diagonal),
      cmocka_unit_test(test_permute),
      cmocka_unit_test(test_permute_errors),
      cmocka_unit_test(test_spmv_host),
      cmocka_unit_test(test_csr_check_rows),
      cmocka_unit_test(test_is_symmetric),
      cmocka_unit_test(test_mm_round_trip_matrix),
      cmocka_unit_test(test_mm_round_trip_vector),
      cmocka_unit_test(test_mm_symmetric_and_skew),
      cmocka_unit_test(test_mm_pattern_integer_array),
      cmocka_unit_test(test_mm_tolerated_layout),
      cmocka_unit_test(test_mm_vector_forms),
      cmocka_unit_test(test_mm_malformed),
      cmocka_unit_test(test_mm_io_errors),
      cmocka_unit_test(test_mm_nul_byte),
      cmocka_unit_test(test_mm_bounded_lines),
      cmocka_unit_test(test_mm_decimal_comma_locale),
      cmocka_unit_test(test_mm_parallel_read),
      cmocka_unit_test(test_mm_parallel_array_read),
  };
  return cmocka_run_group_tests_name("sparse_host", tests, NULL, NULL);
}
