#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, strdup */
/* Device matrices made from CSR arrays on the device
 * (clmg_matrix_create_from_device) and their in-place value updates: every
 * format and precision must act exactly as the matrix made from the same
 * host CSR (the same layout, made on the device, and the same kernels, so
 * bit for bit), on random matrices with empty rows and very long rows, on
 * prolongation-like and FE-like rows, for slice heights and windows that do
 * not divide the rows; bad offsets are reported by row; diagonals follow
 * updates; a hierarchy refreshed after an update gives the iterates of one
 * built anew. */
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
  /* the hybrid twice: both update paths (f % 2 below) */
  const clmg_matrix_format formats[] = {
      CLMG_FORMAT_CSR,          CLMG_FORMAT_ELLR,   CLMG_FORMAT_SELL,  CLMG_FORMAT_AUTO,
      CLMG_FORMAT_CSR_ADAPTIVE, CLMG_FORMAT_HYBRID, CLMG_FORMAT_HYBRID};
  for (int p = 0; p < 2; ++p)
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f) {
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

/* y = A x of two matrices of any shape agree bit for bit; for square ones
 * also the Jacobi step and the diagonal, and the row sums of squares to
 * rounding (the host sums them in double, the device in the precision). */
static void expect_same_products(clmg_matrix *from_host, clmg_matrix *from_device, clmg_dtype type,
                                 size_t rows, size_t cols, const char *what) {
  if (rows == cols && rows > 0) {
    expect_same(from_host, from_device, type, rows, what);
    clmg_vector *s1 = NULL, *s2 = NULL;
    CHECK_OK(clmg_vector_create(ctx, type, rows, &s1));
    CHECK_OK(clmg_vector_create(ctx, type, rows, &s2));
    CHECK_OK(clmg_matrix_row_sum_squares(from_host, s1));
    CHECK_OK(clmg_matrix_row_sum_squares(from_device, s2));
    double *h1 = malloc(rows * sizeof *h1), *h2 = malloc(rows * sizeof *h2);
    assert_non_null(h1);
    assert_non_null(h2);
    CHECK_OK(clmg_vector_download_doubles(s1, h1));
    CHECK_OK(clmg_vector_download_doubles(s2, h2));
    double tolerance = type == CLMG_FLOAT ? 1e-5 : 1e-13;
    for (size_t i = 0; i < rows; ++i)
      if (fabs(h1[i] - h2[i]) > tolerance * h1[i])
        fail_msg("%s, row sums of squares, row %zu: %.17g from host CSR, %.17g from device "
                 "arrays",
                 what, i, h1[i], h2[i]);
    free(h1);
    free(h2);
    clmg_vector_destroy(s1);
    clmg_vector_destroy(s2);
    return;
  }
  clmg_vector *x = NULL, *y1 = NULL, *y2 = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, cols, &x));
  CHECK_OK(clmg_vector_create(ctx, type, rows, &y1));
  CHECK_OK(clmg_vector_create(ctx, type, rows, &y2));
  double *host = malloc((cols ? cols : 1) * sizeof *host);
  double *h1 = malloc((rows ? rows : 1) * sizeof *h1), *h2 = malloc((rows ? rows : 1) * sizeof *h2);
  assert_non_null(host);
  assert_non_null(h1);
  assert_non_null(h2);
  for (size_t j = 0; j < cols; ++j)
    host[j] = rng_uniform();
  if (cols > 0)
    CHECK_OK(clmg_vector_upload_doubles(x, host));
  CHECK_OK(clmg_spmv(1.0, from_host, x, 0.0, y1));
  CHECK_OK(clmg_spmv(1.0, from_device, x, 0.0, y2));
  if (rows > 0) {
    CHECK_OK(clmg_vector_download_doubles(y1, h1));
    CHECK_OK(clmg_vector_download_doubles(y2, h2));
  }
  for (size_t i = 0; i < rows; ++i)
    if (h1[i] != h2[i])
      fail_msg("%s, spmv, row %zu: %.17g from host CSR, %.17g from device arrays", what, i, h1[i],
               h2[i]);
  free(host);
  free(h1);
  free(h2);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y1);
  clmg_vector_destroy(y2);
}

/* A rows x cols matrix whose row i has length(i) entries on consecutive
 * columns (mod cols) from a random one, values random. */
typedef size_t (*row_length_fn)(size_t i, size_t rows);

static clmg_csr matrix_of_lengths(size_t rows, size_t cols, row_length_fn length) {
  triplets t = {0};
  for (size_t i = 0; i < rows; ++i) {
    size_t count = length(i, rows), first = rng_below(cols);
    for (size_t k = 0; k < count && k < cols; ++k)
      triplets_add(&t, i, (first + k) % cols, rng_uniform() + (k == 0 ? 3.0 : 0.0));
  }
  clmg_csr a = triplets_to_csr(&t, rows > cols ? rows : cols);
  a.rows = rows; /* triplets_to_csr makes it square; the rows beyond are empty */
  a.cols = cols;
  return a;
}

/* Empty rows, three very long rows, and lengths spread over 0..69 (within a
 * window of the sort, more than the counting sort of matrix.c handles). */
static size_t irregular_length(size_t i, size_t rows) {
  if (i == 7 || i == rows / 2 || i == rows - 1)
    return 1500;
  return i % 11 == 5 ? 0 : rng_below(70);
}

/* A prolongation: rows of 1, 2 or 4 entries (vertices, edges, cells). */
static size_t prolongation_length(size_t i, size_t rows) {
  (void)i;
  (void)rows;
  static const size_t lengths[4] = {1, 2, 2, 4};
  return lengths[rng_below(4)];
}

/* FE-like: 9 entries a row, fewer on the first and last rows. */
static size_t uniform_length(size_t i, size_t rows) {
  return i < 5 || i + 5 >= rows ? 4 + i % 3 : 9;
}

/* A few distinct lengths, none short. */
static size_t few_lengths(size_t i, size_t rows) {
  (void)i;
  (void)rows;
  static const size_t lengths[5] = {3, 5, 7, 12, 27};
  return lengths[rng_below(5)];
}

static size_t tiny_length(size_t i, size_t rows) {
  (void)rows;
  return (size_t[]){0, 2, 1}[i % 3];
}

static size_t no_entries(size_t i, size_t rows) {
  (void)i;
  (void)rows;
  return 0;
}

/* The same layout from host CSR and from device arrays, for every format
 * and the shapes its options give: the same format, description, stored
 * entries and device bytes, and the same products bit for bit. */
static void test_same_layout_as_host(void **state) {
  (void)state;
  const struct {
    const char *name;
    size_t rows, cols;
    row_length_fn length;
  } kinds[] = {
      {"irregular", 2501, 2501, irregular_length},
      {"prolongation", 1003, 251, prolongation_length},
      {"uniform", 777, 777, uniform_length},
      {"few lengths", 1500, 1500, few_lengths},
      {"tiny", 3, 3, tiny_length},
      {"empty", 5, 5, no_entries},
  };
  /* format, csr_vector_min, csr_lanes, ellr_threads, sell_slice, sell_sigma */
  const unsigned shapes[][6] = {
      {CLMG_FORMAT_AUTO, 0, 0, 0, 0, 0},           {CLMG_FORMAT_CSR, 0, 0, 0, 0, 0},
      {CLMG_FORMAT_CSR, 100, 0, 0, 0, 0},          {CLMG_FORMAT_CSR, 10, 4, 0, 0, 0},
      {CLMG_FORMAT_ELLR, 0, 0, 0, 0, 0},           {CLMG_FORMAT_ELLR, 0, 0, 2, 0, 0},
      {CLMG_FORMAT_SELL, 0, 0, 0, 0, 0},           {CLMG_FORMAT_SELL, 0, 0, 0, 1, 0},
      {CLMG_FORMAT_SELL, 0, 0, 0, 4, 5},           {CLMG_FORMAT_SELL, 0, 0, 0, 8, 1},
      {CLMG_FORMAT_SELL, 0, 0, 0, 8, 64},          {CLMG_FORMAT_SELL, 0, 0, 0, 32, 100},
      {CLMG_FORMAT_SELL, 0, 0, 0, 16, 4096},       {CLMG_FORMAT_CSR_ADAPTIVE, 0, 0, 0, 0, 0},
      {CLMG_FORMAT_CSR_ADAPTIVE, 100, 0, 0, 0, 0}, {CLMG_FORMAT_CSR_ADAPTIVE, 10, 0, 0, 0, 0},
      {CLMG_FORMAT_HYBRID, 0, 0, 0, 0, 0},         {CLMG_FORMAT_HYBRID, 100, 0, 0, 0, 0},
      {CLMG_FORMAT_HYBRID, 10, 0, 2, 0, 0},        {CLMG_FORMAT_HYBRID, 10, 0, 0, 4, 5},
  };
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    clmg_csr a = matrix_of_lengths(kinds[k].rows, kinds[k].cols, kinds[k].length);
    device_arrays d = upload_arrays(&a, CLMG_DOUBLE);
    for (int p = 0; p < 2; ++p)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        clmg_dtype type = p ? CLMG_FLOAT : CLMG_DOUBLE;
        clmg_matrix_options o;
        clmg_matrix_options_defaults(&o);
        o.format = (clmg_matrix_format)shapes[s][0];
        o.csr_vector_min = shapes[s][1];
        o.csr_lanes = shapes[s][2];
        o.ellr_threads = shapes[s][3];
        o.sell_slice = shapes[s][4];
        o.sell_sigma = shapes[s][5];
        o.precision = type;
        char what[128];
        snprintf(what, sizeof what, "%s %s %s (shape %zu)", kinds[k].name,
                 clmg_matrix_format_name(o.format), clmg_dtype_name(type), s);
        clmg_matrix *host = NULL, *device = NULL;
        CHECK_OK(clmg_matrix_create(ctx, &a, &o, &host));
        CHECK_OK(clmg_matrix_create_from_device(ctx, a.rows, a.cols, d.row_ptr, d.col, d.val, &o,
                                                &device));
        if (clmg_matrix_format_of(host) != clmg_matrix_format_of(device) ||
            strcmp(clmg_matrix_describe(host), clmg_matrix_describe(device)) != 0 ||
            clmg_matrix_stored_entries(host) != clmg_matrix_stored_entries(device) ||
            clmg_matrix_nnz(host) != clmg_matrix_nnz(device))
          fail_msg("%s: \"%s\" storing %zu of %zu from host CSR, \"%s\" storing %zu of %zu from "
                   "device arrays",
                   what, clmg_matrix_describe(host), clmg_matrix_stored_entries(host),
                   clmg_matrix_nnz(host), clmg_matrix_describe(device),
                   clmg_matrix_stored_entries(device), clmg_matrix_nnz(device));
        assert_int_equal(clmg_matrix_device_bytes(host), clmg_matrix_device_bytes(device));
        expect_same_products(host, device, type, a.rows, a.cols, what);
        clmg_matrix_destroy(host);
        clmg_matrix_destroy(device);
      }
    free_arrays(&d);
    clmg_csr_free(&a);
  }
}

/* Offsets made on the device (the transpose's, from its column counts)
 * over many scan blocks and more blocks than a work-group has work-items:
 * the same as the host transpose's. */
static void test_device_offsets(void **state) {
  (void)state;
  const size_t rows = 3000, cols = 700001;
  triplets t = {0};
  for (size_t i = 0; i < rows; ++i)
    for (size_t k = 0; k < 400; ++k)
      triplets_add(&t, i, rng_below(cols), 1.0);
  clmg_csr a = triplets_to_csr(&t, cols);
  a.rows = rows;
  clmg_csr expected = {0}, copy = {0};
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_csr_transpose(&a, &expected, &error));
  clmg_csr_device da = {0}, dt = {0};
  CHECK_OK(clmg_csr_device_upload(ctx, &a, CLMG_DOUBLE, &da));
  CHECK_OK(clmg_csr_device_transpose(ctx, &da, &dt));
  CHECK_ERROR_OK(error, clmg_csr_device_download(&dt, &copy, &error));
  assert_int_equal(clmg_csr_device_nnz(&dt), clmg_csr_nnz(&expected));
  assert_memory_equal(copy.row_ptr, expected.row_ptr, (cols + 1) * sizeof *copy.row_ptr);
  assert_memory_equal(copy.col, expected.col, clmg_csr_nnz(&expected) * sizeof *copy.col);
  clmg_csr_device_free(&da);
  clmg_csr_device_free(&dt);
  clmg_csr_free(&a);
  clmg_csr_free(&expected);
  clmg_csr_free(&copy);
}

/* Columns of very different counts (a vector problem's coarse columns):
 * rows of the transpose sorted by each of the three sorts, the merge sort's
 * longest over an odd and an even number of passes; values with the
 * columns, in double and float. */
static void test_transpose_long_rows(void **state) {
  (void)state;
  const size_t rows = 40000, cols = 600;
  const size_t dense[] = {33, 2048, 2049, 4096, 4097, 9000, 20000, 40000};
  const size_t count = sizeof dense / sizeof dense[0];
  triplets t = {0};
  for (size_t i = 0; i < rows; ++i) {
    for (size_t c = 0; c < count; ++c)
      if (rng_below(rows) < dense[c])
        triplets_add(&t, i, c, rng_uniform() * 2.0 - 1.0);
    triplets_add(&t, i, count + rng_below(cols - count), rng_uniform() * 2.0 - 1.0);
  }
  clmg_csr a = triplets_to_csr(&t, rows);
  a.cols = cols; /* triplets_to_csr makes it square; no column is beyond cols */
  clmg_csr expected = {0};
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_csr_transpose(&a, &expected, &error));
  size_t longest = 0;
  for (size_t c = 0; c < cols; ++c) {
    size_t length = (size_t)(expected.row_ptr[c + 1] - expected.row_ptr[c]);
    longest = length > longest ? length : longest;
  }
  assert_true(longest > 16 * 2048); /* four merge passes at least */
  /* A CPU's kernels walk rows in contiguous chunks, which on pocl scatters
   * every column in row order: the sorts would have nothing to do. A
   * context with the GPU's strided walk scatters them out of order. */
  clmg_context *strided = NULL;
  assert_int_equal(test_open_context_params(&strided, "cpu_kernels=0", "strided walk", 0), 0);
  for (int k = 0; k < 4; ++k) {
    clmg_context *context = k < 2 ? ctx : strided;
    clmg_dtype type = k % 2 ? CLMG_FLOAT : CLMG_DOUBLE;
    if (type == CLMG_DOUBLE && !clmg_context_device(ctx)->has_fp64)
      continue;
    clmg_csr_device da = {0}, dt = {0};
    clmg_csr copy = {0};
    CHECK_OK(clmg_csr_device_upload(context, &a, type, &da));
    CHECK_OK(clmg_csr_device_transpose(context, &da, &dt));
    CHECK_ERROR_OK(error, clmg_csr_device_download(&dt, &copy, &error));
    size_t nnz = clmg_csr_nnz(&expected);
    assert_int_equal(clmg_csr_device_nnz(&dt), nnz);
    assert_memory_equal(copy.row_ptr, expected.row_ptr, (cols + 1) * sizeof *copy.row_ptr);
    assert_memory_equal(copy.col, expected.col, nnz * sizeof *copy.col);
    for (size_t e = 0; e < nnz; ++e)
      if (copy.val[e] != (type == CLMG_FLOAT ? (double)(float)expected.val[e] : expected.val[e]))
        fail_msg("%s transpose: entry %zu is %g, not %g", clmg_dtype_name(type), e, copy.val[e],
                 expected.val[e]);
    clmg_csr_device_free(&da);
    clmg_csr_device_free(&dt);
    clmg_csr_free(&copy);
  }
  clmg_context_destroy(strided);
  clmg_csr_free(&a);
  clmg_csr_free(&expected);
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
  /* offsets that decrease: the first bad row is named, with its length */
  int64_t *bad = malloc((n + 1) * sizeof *bad);
  assert_non_null(bad);
  memcpy(bad, a.row_ptr, (n + 1) * sizeof *bad);
  bad[20] = bad[21] + 3;
  bad[30] = bad[29] - 1;
  CHECK_OK(clmg_vector_upload(d.row_ptr, bad));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_matrix_create_from_device(ctx, n, n, d.row_ptr, d.col, d.val, NULL, &m));
  CHECK_CONTAINS(clmg_context_message(ctx), "row 21 has -3 entries; a row holds 0 to 50");
  /* a row longer than the columns */
  memcpy(bad, a.row_ptr, (n + 1) * sizeof *bad);
  bad[40] = bad[39] + 51;
  bad[41] = bad[40];
  CHECK_OK(clmg_vector_upload(d.row_ptr, bad));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_matrix_create_from_device(ctx, n, n, d.row_ptr, d.col, d.val, NULL, &m));
  CHECK_CONTAINS(clmg_context_message(ctx), "row 40 has 51 entries");
  assert_null(m);
  free(bad);
  CHECK_OK(clmg_vector_upload(d.row_ptr, a.row_ptr));
  /* wrong types */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_matrix_create_from_device(ctx, n, n, d.col, d.col, d.val, NULL, &m));
  CHECK_CONTAINS(clmg_context_message(ctx), "must be int64");
  /* a matrix from host CSR laid out on the host cannot be updated in place
   * (one laid out on the device, a GPU's matrix_layout_on_device, can) */
  clmg_context *host_layout = NULL;
  assert_int_equal(
      test_open_context_params(&host_layout, "matrix_layout_on_device=0", "host layout", 0), 0);
  CHECK_CONTEXT_OK(host_layout, clmg_matrix_create(host_layout, &a, NULL, &m));
  assert_int_equal(clmg_matrix_update_values(m, a.val), CLMG_ERROR_UNSUPPORTED);
  CHECK_CONTAINS(clmg_context_message(host_layout), "clmg_matrix_create_from_device");
  clmg_matrix_destroy(m);
  test_close_context(&host_layout);
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

/* A matrix of n rows of `low` to `high` entries (and the diagonal). */
static clmg_csr rows_between(size_t n, unsigned low, unsigned high) {
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    size_t length = low + rng_below(high - low + 1);
    for (size_t k = 0; k < length; ++k)
      triplets_add(&t, i, rng_below(n), rng_uniform() * 2.0 - 1.0);
    triplets_add(&t, i, i, 4.0 + rng_uniform());
  }
  return triplets_to_csr(&t, n);
}

/* The automatic format with auto_csr_rows (a GPU's rule, set here on any
 * device): a small matrix of long, uneven rows takes CSR (lanes per row),
 * from the host's layout and the device's alike; over the row limit, or
 * with short rows, SELL as before; the products are the host's. */
static void test_auto_csr_small_long_rows(void **state) {
  (void)state;
  const char *params = "auto_sell=1,csr_max_lanes=32,"
                       "auto_csr_rows=1500";
  clmg_context *c = NULL;
  assert_int_equal(test_open_context_params(&c, params, "auto CSR", 0), 0);
  const struct {
    size_t rows;
    unsigned low, high;
    clmg_matrix_format want;
  } cases[] = {{1000, 10, 40, CLMG_FORMAT_CSR},
               {2000, 10, 40, CLMG_FORMAT_SELL},
               {1000, 1, 10, CLMG_FORMAT_SELL}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    clmg_csr a = rows_between(cases[k].rows, cases[k].low, cases[k].high);
    size_t n = a.rows;
    double *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want),
           *got = malloc(n * sizeof *got);
    assert_true(x && want && got);
    for (size_t i = 0; i < n; ++i)
      x[i] = rng_uniform() - 0.5;
    clmg_csr_spmv_host(1.0, &a, x, 0.0, want);
    for (int device = 0; device < 2; ++device) {
      clmg_matrix *m = NULL;
      if (device) {
        clmg_csr_device d = {0};
        CHECK_CONTEXT_OK(c, clmg_csr_device_upload(c, &a, CLMG_DOUBLE, &d));
        CHECK_CONTEXT_OK(
            c, clmg_matrix_create_from_device(c, n, n, d.row_ptr, d.col, d.val, NULL, &m));
        clmg_csr_device_free(&d);
      } else {
        CHECK_CONTEXT_OK(c, clmg_matrix_create(c, &a, NULL, &m));
      }
      if (clmg_matrix_format_of(m) != cases[k].want)
        fail_msg("%zu rows of %u-%u entries (%s): format %s, expected %s", n, cases[k].low,
                 cases[k].high, device ? "device layout" : "host layout",
                 clmg_matrix_format_name(clmg_matrix_format_of(m)),
                 clmg_matrix_format_name(cases[k].want));
      clmg_vector *dx = NULL, *dy = NULL;
      CHECK_CONTEXT_OK(c, clmg_vector_create(c, CLMG_DOUBLE, n, &dx));
      CHECK_CONTEXT_OK(c, clmg_vector_create(c, CLMG_DOUBLE, n, &dy));
      CHECK_CONTEXT_OK(c, clmg_vector_upload_doubles(dx, x));
      CHECK_CONTEXT_OK(c, clmg_spmv(1.0, m, dx, 0.0, dy));
      CHECK_CONTEXT_OK(c, clmg_vector_download_doubles(dy, got));
      for (size_t i = 0; i < n; ++i)
        if (!(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i]))))
          fail_msg("row %zu: %.17g, the host's %.17g", i, got[i], want[i]);
      clmg_vector_destroy(dx);
      clmg_vector_destroy(dy);
      clmg_matrix_destroy(m);
    }
    free(x);
    free(want);
    free(got);
    clmg_csr_free(&a);
  }
  test_close_context(&c);
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
      cmocka_unit_test(test_same_layout_as_host),
      cmocka_unit_test(test_device_offsets),
      cmocka_unit_test(test_transpose_long_rows),
      cmocka_unit_test(test_bad_arrays),
      cmocka_unit_test(test_auto_csr_small_long_rows),
      cmocka_unit_test(test_refresh_after_update),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("matrix_device", tests, setup, teardown);
}
