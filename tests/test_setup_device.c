/* The setup's reductions that stay on the device (lib/la/internal.h:
 * clmg_dot3_to_device, clmg_sumsq_to_device, clmg_scal_inverse_sqrt) and
 * the estimate of lambda_max(D^-1 A) built on them (lib/amg/amg_internal.h:
 * clmg_amg_rho_device), each against a host reference on random data, in
 * double and float; and the host waits of the aggregation on the device
 * (clmg_amg_device_tentative), its aggregates the host's; the phase clocks' wait
 * (clmg_finish_queued). Internal
 * functions: the suite links the static library and includes lib/. */
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "amg/amg_internal.h"
#include "clmg.h"
#include "la/internal.h"

static clmg_context *ctx;

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    clmg_status check_status_ = (call);                                                            \
    if (check_status_ != CLMG_SUCCESS)                                                             \
      fail_msg("%s -> %s: %s", #call, clmg_status_string(check_status_),                           \
               clmg_context_message(ctx));                                                         \
  } while (0)

static uint64_t rng_state = 0x243f6a8885a308d3u;

/* uniform in [0, 1) (splitmix64) */
static double uniform(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

static double rounded(clmg_dtype type, double v) {
  return type == CLMG_FLOAT ? (double)(float)v : v;
}

static double tolerance(clmg_dtype type) {
  return type == CLMG_DOUBLE ? 1e-12 : 1e-5;
}

static double *random_vector(clmg_dtype type, size_t n) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < n; i++)
    v[i] = rounded(type, 2 * uniform() - 1);
  return v;
}

static clmg_vector *device_vector(clmg_dtype type, size_t n, const double *values) {
  clmg_vector *v = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &v));
  if (n > 0)
    CHECK_OK(clmg_vector_upload_doubles(v, values));
  return v;
}

static void check_close(const char *what, size_t n, double got, double want, double bound) {
  if (!(fabs(got - want) <= bound))
    fail_msg("%s (n %zu): %.17g, the host's %.17g (bound %g)", what, n, got, want, bound);
}

/* The sums at their slots of a longer vector, the slots around them kept,
 * and x scaled by 1 / sqrt(its sum of squares) read from there. */
static void sums_case(clmg_dtype type, size_t n) {
  double *r = random_vector(type, n), *u = random_vector(type, n), *w = random_vector(type, n);
  long double ru = 0, ru_mag = 0, wu = 0, wu_mag = 0, rr = 0, ww = 0;
  for (size_t i = 0; i < n; i++) {
    ru += (long double)r[i] * u[i];
    ru_mag += fabsl((long double)r[i] * u[i]);
    wu += (long double)w[i] * u[i];
    wu_mag += fabsl((long double)w[i] * u[i]);
    rr += (long double)r[i] * r[i];
    ww += (long double)w[i] * w[i];
  }
  double guard[7] = {7, 7, 7, 7, 7, 7, 7}, got[7];
  clmg_vector *dr = device_vector(type, n, r), *du = device_vector(type, n, u);
  clmg_vector *dw = device_vector(type, n, w), *sums = device_vector(type, 7, guard);
  CHECK_OK(clmg_dot3_to_device(dr, du, dw, sums, 1));
  CHECK_OK(clmg_sumsq_to_device(dw, sums, 5));
  CHECK_OK(clmg_scal_inverse_sqrt(sums, 5, dw));
  CHECK_OK(clmg_vector_download_doubles(sums, got));
  double tol = tolerance(type);
  assert_true(got[0] == 7 && got[4] == 7 && got[6] == 7);
  check_close("r.u", n, got[1], (double)ru, tol * (double)ru_mag);
  check_close("w.u", n, got[2], (double)wu, tol * (double)wu_mag);
  check_close("r.r", n, got[3], (double)rr, tol * (double)rr);
  check_close("w.w", n, got[5], (double)ww, tol * (double)ww);
  double *scaled = malloc((n ? n : 1) * sizeof *scaled);
  assert_non_null(scaled);
  if (n > 0)
    CHECK_OK(clmg_vector_download_doubles(dw, scaled));
  double inverse = ww > 0 ? 1 / sqrt((double)ww) : 0;
  for (size_t i = 0; i < n; i++)
    check_close("w / ||w||", n, scaled[i], w[i] * inverse, 4 * tol * fabs(w[i] * inverse));
  clmg_vector_destroy(dr);
  clmg_vector_destroy(du);
  clmg_vector_destroy(dw);
  clmg_vector_destroy(sums);
  free(r);
  free(u);
  free(w);
  free(scaled);
}

/* clmg_vector_fill_pseudo_random: on the device for double vectors, the
 * host's clmg_fill_pseudo_random bit for bit at any length and offset into
 * the sequence (a chunk per work-item, each skipping to its start); float
 * vectors take the host's values, rounded. */
#define CHECK_STATUS(expected, call) assert_int_equal((call), (expected))

static void test_fill_pseudo_random(void **state) {
  (void)state;
  const size_t lengths[] = {1, 7, 1000, 100003};
  const uint64_t firsts[] = {0, 1, 12345678901ull};
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
    for (size_t f = 0; f < sizeof firsts / sizeof firsts[0]; f++) {
      const size_t n = lengths[l];
      const uint64_t seed = 0x9e3779b97f4a7c15ull + n;
      double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
      assert_non_null(want);
      assert_non_null(got);
      clmg_fill_pseudo_random(want, n, seed, firsts[f], -1.0, 1.5);
      for (int t = 0; t < 2; t++) {
        clmg_dtype type = t == 0 ? CLMG_DOUBLE : CLMG_FLOAT;
        clmg_vector *x = NULL;
        CHECK_OK(clmg_vector_create(ctx, type, n, &x));
        CHECK_OK(clmg_vector_fill_pseudo_random(x, seed, firsts[f], -1.0, 1.5));
        CHECK_OK(clmg_vector_download_doubles(x, got));
        for (size_t i = 0; i < n; i++) {
          double expected = type == CLMG_DOUBLE ? want[i] : (double)(float)want[i];
          if (memcmp(&got[i], &expected, sizeof expected) != 0)
            fail_msg("%s, n %zu, first %llu: element %zu is %.17g, the host's %.17g",
                     clmg_dtype_name(type), n, (unsigned long long)firsts[f], i, got[i], expected);
        }
        clmg_vector_destroy(x);
      }
      free(want);
      free(got);
    }
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_fill_pseudo_random(NULL, 1, 0, 0, 1));
}

static void test_sums(void **state) {
  (void)state;
  const size_t sizes[] = {0, 1, 3, 1000, 100003};
  for (int t = 0; t < 2; t++)
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
      sums_case(t ? CLMG_FLOAT : CLMG_DOUBLE, sizes[k]);
}

/* A zero vector scales by 0 (not by inf or nan); bad slots and types are
 * refused with a message. */
static void test_sums_edges(void **state) {
  (void)state;
  double zeros[4] = {0, 0, 0, 0}, ones[4] = {1, 1, 1, 1}, got[4];
  clmg_vector *x = device_vector(CLMG_DOUBLE, 4, ones), *z = device_vector(CLMG_DOUBLE, 4, zeros);
  clmg_vector *sums = device_vector(CLMG_DOUBLE, 3, zeros), *f = NULL;
  CHECK_OK(clmg_sumsq_to_device(z, sums, 0));
  CHECK_OK(clmg_scal_inverse_sqrt(sums, 0, x));
  CHECK_OK(clmg_vector_download_doubles(x, got));
  for (int i = 0; i < 4; i++)
    assert_true(got[i] == 0);
  assert_int_equal(clmg_dot3_to_device(x, x, x, sums, 1), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "slots"));
  assert_int_equal(clmg_sumsq_to_device(x, sums, 3), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_scal_inverse_sqrt(sums, 7, x), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_OK(clmg_vector_create(ctx, CLMG_FLOAT, 3, &f));
  assert_int_equal(clmg_sumsq_to_device(x, f, 0), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_vector_destroy(f);
  clmg_vector_destroy(x);
  clmg_vector_destroy(z);
  clmg_vector_destroy(sums);
}

/* A random SPD matrix that is not an M-matrix: random symmetric entries of
 * both signs, about `per_row` a row, and a diagonal of the row's absolute
 * sum times a random factor in [1, 2) (diagonally dominant: SPD). */
/* The m x n CSR matrix of `count` triplets, whose arrays it frees. */
static clmg_csr csr_taking_triplets(size_t m, size_t n, size_t count, int32_t *rows, int32_t *cols,
                                    double *values) {
  clmg_csr a = {0};
  clmg_error error = {{0}};
  if (clmg_csr_from_triplets(m, n, count, rows, cols, values, &a, &error) != CLMG_SUCCESS)
    fail_msg("clmg_csr_from_triplets: %s", error.message);
  free(rows);
  free(cols);
  free(values);
  return a;
}

static clmg_csr random_spd(size_t n, int per_row) {
  size_t capacity = n * (size_t)(2 * per_row + 1);
  int32_t *rows = malloc(capacity * sizeof *rows), *cols = malloc(capacity * sizeof *cols);
  double *values = malloc(capacity * sizeof *values), *row_sum = calloc(n, sizeof *row_sum);
  assert_true(rows && cols && values && row_sum);
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < per_row; k++) {
      size_t j = (size_t)(uniform() * (double)n);
      if (j >= n || j == i)
        continue;
      double v = 2 * uniform() - 1;
      rows[count] = (int32_t)i, cols[count] = (int32_t)j, values[count++] = v;
      rows[count] = (int32_t)j, cols[count] = (int32_t)i, values[count++] = v;
      row_sum[i] += fabs(v);
      row_sum[j] += fabs(v);
    }
  for (size_t i = 0; i < n; i++) {
    rows[count] = cols[count] = (int32_t)i;
    values[count++] = (row_sum[i] > 0 ? row_sum[i] : 1) * (1 + uniform());
  }
  clmg_csr a = csr_taking_triplets(n, n, count, rows, cols, values);
  free(row_sum);
  return a;
}

/* A context with CLMG_DEVICE_PARAMS set to `params` for its creation. */
static clmg_context *context_with_params(const char *params) {
  const char *saved = getenv("CLMG_DEVICE_PARAMS");
  char *kept = saved ? strdup(saved) : NULL;
  setenv("CLMG_DEVICE_PARAMS", params, 1);
  clmg_context *c = NULL;
  clmg_status status = clmg_context_create(NULL, &c);
  if (kept)
    setenv("CLMG_DEVICE_PARAMS", kept, 1);
  else
    unsetenv("CLMG_DEVICE_PARAMS");
  free(kept);
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_context_create with %s: %s", params, clmg_status_string(status));
  return c;
}

/* The device's estimate of lambda_max(D^-1 A), its power steps' sums read
 * once at the end, is the host's within rounding, and lies in (0, 2] for
 * these matrices (Gershgorin on D^-1 A: 1 + 1). */
static void test_rho(void **state) {
  (void)state;
  const size_t sizes[] = {1, 50, 2000, 30000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    clmg_csr a = random_spd(sizes[k], 4);
    double host = 0;
    clmg_error error = {{0}};
    if (clmg_amg_rho_host(&a, &host, &error) != CLMG_SUCCESS)
      fail_msg("clmg_amg_rho_host: %s", error.message);
    assert_true(host > 0 && host <= 2 + 1e-12);
    for (int t = 0; t < 2; t++) {
      clmg_dtype type = t ? CLMG_FLOAT : CLMG_DOUBLE;
      clmg_csr_device d = {0};
      CHECK_OK(clmg_csr_device_upload(ctx, &a, type, &d));
      double device = 0;
      CHECK_OK(clmg_amg_rho_device(ctx, &d, &device));
      check_close("rho(D^-1 A)", sizes[k], device, host, (t ? 1e-4 : 1e-10) * host);
      clmg_csr_device_free(&d);
    }
    clmg_csr_free(&a);
  }
}

/* The CSR arrays of a matrix, read back, equal a's exactly. */
static void expect_csr(clmg_context *c, const clmg_csr_device *d, const clmg_csr *a,
                       const char *what) {
  size_t nnz = clmg_csr_nnz(a);
  int64_t *row_ptr = malloc((a->rows + 1) * sizeof *row_ptr);
  int32_t *col = malloc((nnz ? nnz : 1) * sizeof *col);
  double *val = malloc((nnz ? nnz : 1) * sizeof *val);
  assert_true(row_ptr && col && val);
  assert_int_equal(d->rows, a->rows);
  assert_int_equal(clmg_vector_length(d->col), nnz);
  if (clmg_vector_download(d->row_ptr, row_ptr) != CLMG_SUCCESS ||
      (nnz && (clmg_vector_download(d->col, col) != CLMG_SUCCESS ||
               clmg_vector_download(d->val, val) != CLMG_SUCCESS)))
    fail_msg("%s: download: %s", what, clmg_context_message(c));
  for (size_t i = 0; i <= a->rows; i++)
    if (row_ptr[i] != a->row_ptr[i])
      fail_msg("%s: row_ptr[%zu] %lld, the host's %lld", what, i, (long long)row_ptr[i],
               (long long)a->row_ptr[i]);
  for (size_t k = 0; k < nnz; k++)
    if (col[k] != a->col[k] || val[k] != a->val[k])
      fail_msg("%s: entry %zu (%d, %.17g), the host's (%d, %.17g)", what, k, col[k], val[k],
               a->col[k], a->val[k]);
  free(row_ptr);
  free(col);
  free(val);
}

/* clmg_matrix_create with matrix_layout_on_device (a GPU's default, forced
 * here): the layout is made on the device from the uploaded CSR, so its
 * values can be updated in place (a matrix laid out on the host refuses
 * that), its product is the host reference's, and clmg_matrix_csr_arrays
 * gives back the CSR exactly in every format (views for CSR, the stored
 * values scattered back for ELLR and SELL), also after an update. Without
 * the parameter only CSR has such arrays. */
static void test_layout_on_device(void **state) {
  (void)state;
  if (!clmg_context_device(ctx)->has_fp64)
    skip();
  clmg_context *on = context_with_params("matrix_layout_on_device=1");
  clmg_context *off = context_with_params("matrix_layout_on_device=0");
  const size_t n = 3000;
  clmg_csr a = random_spd(n, 6), b = {0};
  clmg_error error = {{0}};
  if (clmg_csr_copy(&a, &b, &error) != CLMG_SUCCESS)
    fail_msg("clmg_csr_copy: %s", error.message);
  for (size_t k = 0; k < clmg_csr_nnz(&b); k++)
    b.val[k] = 2 * uniform() - 1;
  double *x = random_vector(CLMG_DOUBLE, n), *want = malloc(n * sizeof *want);
  double *got = malloc(n * sizeof *got);
  assert_true(want && got);
  clmg_csr_spmv_host(1.0, &a, x, 0.0, want);
  const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR,          CLMG_FORMAT_ELLR,
                                        CLMG_FORMAT_SELL,         CLMG_FORMAT_AUTO,
                                        CLMG_FORMAT_CSR_ADAPTIVE, CLMG_FORMAT_HYBRID};
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
    const char *name = clmg_matrix_format_name(formats[f]);
    clmg_matrix_options o;
    clmg_matrix_options_defaults(&o);
    o.format = formats[f];
    clmg_matrix *m = NULL;
    if (clmg_matrix_create(on, &a, &o, &m) != CLMG_SUCCESS)
      fail_msg("%s: clmg_matrix_create: %s", name, clmg_context_message(on));
    clmg_vector *dx = NULL, *dy = NULL;
    assert_int_equal(clmg_vector_create_from_host(on, CLMG_DOUBLE, n, x, &dx), CLMG_SUCCESS);
    assert_int_equal(clmg_vector_create(on, CLMG_DOUBLE, n, &dy), CLMG_SUCCESS);
    assert_int_equal(clmg_spmv(1.0, m, dx, 0.0, dy), CLMG_SUCCESS);
    assert_int_equal(clmg_vector_download_doubles(dy, got), CLMG_SUCCESS);
    for (size_t i = 0; i < n; i++)
      check_close(name, n, got[i], want[i], 1e-13 * (1 + fabs(want[i])) * 16);
    clmg_csr_device d = {0};
    if (!clmg_matrix_csr_arrays(m, CLMG_DOUBLE, &d))
      fail_msg("%s: no CSR arrays of a matrix laid out on the device", name);
    expect_csr(on, &d, &a, name);
    clmg_csr_device_free(&d);
    if (clmg_matrix_update_values(m, b.val) != CLMG_SUCCESS)
      fail_msg("%s: update: %s", name, clmg_context_message(on));
    assert_true(clmg_matrix_csr_arrays(m, CLMG_DOUBLE, &d));
    expect_csr(on, &d, &b, name);
    clmg_csr_device_free(&d);
    /* a float view is not made of a double matrix */
    assert_false(clmg_matrix_csr_arrays(m, CLMG_FLOAT, &d));
    clmg_vector_destroy(dx);
    clmg_vector_destroy(dy);
    clmg_matrix_destroy(m);

    /* laid out on the host: no update in place, CSR arrays for CSR alone;
     * the hybrid is laid out on the device whatever the setting */
    if (clmg_matrix_create(off, &a, &o, &m) != CLMG_SUCCESS)
      fail_msg("%s: clmg_matrix_create (host layout): %s", name, clmg_context_message(off));
    int hybrid = clmg_matrix_format_of(m) == CLMG_FORMAT_HYBRID;
    assert_int_equal(clmg_matrix_update_values(m, b.val),
                     hybrid ? CLMG_SUCCESS : CLMG_ERROR_UNSUPPORTED);
    int csr = clmg_matrix_format_of(m) == CLMG_FORMAT_CSR ||
              clmg_matrix_format_of(m) == CLMG_FORMAT_CSR_ADAPTIVE;
    assert_int_equal(clmg_matrix_csr_arrays(m, CLMG_DOUBLE, &d), csr || hybrid);
    if (hybrid)
      expect_csr(off, &d, &b, name);
    clmg_csr_device_free(&d);
    clmg_matrix_destroy(m);
  }
  free(x);
  free(want);
  free(got);
  clmg_csr_free(&a);
  clmg_csr_free(&b);
  clmg_context_destroy(on);
  clmg_context_destroy(off);
}

/* The host waits of the aggregation and tentative prolongator on the
 * device (clmg_amg_device_tentative): the flags of 4 rounds of the
 * independent set, or of 4 joining sweeps, come back in one read, and the
 * diagonal check, the aggregates' count and P~'s offsets ride on later
 * reads; so at most a read per 4 rounds, 2 for the sweeps (the 5-point
 * Laplacian joins in 1 or 2), the sizes' sum and the aggregates' download.
 * A read per round and per sweep (rounds + sweeps + 5) is more. The
 * vectors here are under 1 MiB: none waits to be taken (lib/la/vector.c).
 * The aggregates are the host's with parallel roots. */
static void test_aggregation_waits(void **state) {
  (void)state;
  if (!clmg_context_device(ctx)->has_fp64)
    skip();
  const size_t m = 120, n = m * m;
  clmg_csr a = {n, n, calloc(n + 1, sizeof(int64_t)), malloc(5 * n * sizeof(int32_t)),
                malloc(5 * n * sizeof(double))};
  assert_non_null(a.row_ptr);
  assert_non_null(a.col);
  assert_non_null(a.val);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t x = i % m, y = i / m;
    const long neighbour[5] = {y > 0 ? (long)(i - m) : -1, x > 0 ? (long)i - 1 : -1, (long)i,
                               x + 1 < m ? (long)i + 1 : -1, y + 1 < m ? (long)(i + m) : -1};
    for (int j = 0; j < 5; j++)
      if (neighbour[j] >= 0) {
        a.col[k] = (int32_t)neighbour[j];
        a.val[k++] = neighbour[j] == (long)i ? 4.0 : -1.0;
      }
    a.row_ptr[i + 1] = (int64_t)k;
  }
  clmg_amg_options options;
  clmg_amg_options_defaults(&options);
  options.roots = CLMG_AMG_ROOTS_PARALLEL;
  options.strength_threshold = 0.0;
  options.root_distance = 2;
  int32_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
  assert_non_null(want);
  assert_non_null(got);
  size_t want_count = 0, count = 0;
  clmg_error error = {{0}};
  if (clmg_amg_aggregate(&a, &options, want, &want_count, &error) != CLMG_SUCCESS)
    fail_msg("clmg_amg_aggregate: %s", error.message);
  double *ones = malloc(n * sizeof *ones);
  assert_non_null(ones);
  for (size_t i = 0; i < n; i++)
    ones[i] = 1.0;
  clmg_csr_device d = {0}, tentative = {0};
  CHECK_OK(clmg_csr_device_upload(ctx, &a, CLMG_DOUBLE, &d));
  clmg_vector *b = device_vector(CLMG_DOUBLE, n, ones), *coarse_b = NULL;
  CHECK_OK(clmg_finish(ctx));
  clmg_counters before, after;
  clmg_context_counters(ctx, &before);
  int rounds = 0;
  CHECK_OK(
      clmg_amg_device_tentative(ctx, &d, 0.0, 2, b, &tentative, &coarse_b, &count, &rounds, got));
  clmg_context_counters(ctx, &after);
  uint64_t waits = after.host_waits - before.host_waits;
  print_message("%zu rows: %d rounds, %zu aggregates, %llu host waits\n", n, rounds, count,
                (unsigned long long)waits);
  assert_int_equal(count, want_count);
  assert_memory_equal(got, want, n * sizeof *got);
  assert_true(rounds >= 4);
  if (waits > (uint64_t)(rounds + 3) / 4 + 4)
    fail_msg("%llu host waits for %d rounds", (unsigned long long)waits, rounds);
  clmg_csr_device_free(&tentative);
  clmg_csr_device_free(&d);
  clmg_vector_destroy(coarse_b);
  clmg_vector_destroy(b);
  clmg_csr_free(&a);
  free(ones);
  free(want);
  free(got);
}

/* The phase clocks' wait (clmg_finish_queued): a clFinish only where a
 * command was enqueued since the queue was last known empty (a clFinish or
 * a blocking read); without one the setup's laps waited once per phase
 * even after a read had drained the queue. */
static void test_finish_queued(void **state) {
  (void)state;
  clmg_vector *v = NULL;
  double values[64];
  clmg_counters before, after;
  CHECK_OK(clmg_vector_create(ctx, CLMG_FLOAT, 64, &v));
  CHECK_OK(clmg_finish(ctx));
  clmg_context_counters(ctx, &before);
  CHECK_OK(clmg_finish_queued(ctx)); /* nothing queued */
  clmg_context_counters(ctx, &after);
  assert_int_equal(after.host_waits, before.host_waits);
  CHECK_OK(clmg_vector_fill(v, 2.0)); /* queued, not waited for */
  clmg_context_counters(ctx, &before);
  CHECK_OK(clmg_finish_queued(ctx));
  CHECK_OK(clmg_finish_queued(ctx));
  clmg_context_counters(ctx, &after);
  assert_int_equal(after.host_waits, before.host_waits + 1);
  CHECK_OK(clmg_vector_fill(v, 3.0));
  CHECK_OK(clmg_vector_download_doubles(v, values)); /* a blocking read drains the queue */
  clmg_context_counters(ctx, &before);
  CHECK_OK(clmg_finish_queued(ctx));
  clmg_context_counters(ctx, &after);
  assert_int_equal(after.host_waits, before.host_waits);
  assert_true(values[0] == 3.0 && values[63] == 3.0);
  clmg_vector_destroy(v);
}

static int setup(void **state) {
  (void)state;
  clmg_status status = clmg_context_create(NULL, &ctx);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "clmg_context_create: %s\n", clmg_status_string(status));
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  clmg_context_destroy(ctx);
  ctx = NULL;
  return 0;
}

/* The launches of kernel `name` in a profile (any work size), and the
 * largest work size among them (0 when none). */
static uint64_t launches_of(const clmg_kernel_time *times, size_t count, const char *name,
                            uint64_t *largest_items) {
  uint64_t launches = 0;
  if (largest_items)
    *largest_items = 0;
  for (size_t t = 0; t < count; t++)
    if (strcmp(times[t].name, name) == 0) {
      launches += times[t].launches;
      if (largest_items && times[t].work_items > *largest_items)
        *largest_items = times[t].work_items;
    }
  return launches;
}

/* A matrix of rows of varied length for the power steps: row i holds
 * i % 41 off-diagonal entries of both signs (rows of 0 to 40, mean 20) and
 * a dominant diagonal, except every 13th row, which stores no diagonal
 * (D^-1 A gives 0 there), and every 17th, which is empty. */
static clmg_csr varied_rows(size_t n) {
  size_t capacity = n * 41;
  int32_t *rows = malloc(capacity * sizeof *rows), *cols = malloc(capacity * sizeof *cols);
  double *values = malloc(capacity * sizeof *values);
  assert_true(rows && cols && values);
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    if (i % 17 == 5)
      continue;
    double sum = 0;
    for (size_t k = 0; k < i % 41; k++) {
      double v = 2 * uniform() - 1;
      rows[count] = (int32_t)i, cols[count] = (int32_t)(uniform() * (double)n), values[count++] = v;
      sum += fabs(v);
    }
    if (i % 13 != 3) {
      rows[count] = cols[count] = (int32_t)i;
      values[count++] = (sum > 0 ? sum : 1) * (1 + uniform());
    }
  }
  clmg_csr a = csr_taking_triplets(n, n, count, rows, cols, values);
  return a;
}

/* The power steps with 8 work-items a row (csr_max_lanes=8, as a GPU takes
 * them for rows of about 15 entries; a CPU's table says 1) agree with the
 * host's estimate to rounding, on rows of 0 to 40 entries, some without a
 * diagonal and some empty; the profile shows the lanes (8 work-items a
 * row). */
static void test_rho_lanes(void **state) {
  (void)state;
  clmg_context *lanes_ctx = context_with_params("csr_max_lanes=8");
  const size_t sizes[] = {1, 300, 20000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t n = sizes[k];
    clmg_csr a = varied_rows(n);
    double host = 0;
    clmg_error error = {{0}};
    if (clmg_amg_rho_host(&a, &host, &error) != CLMG_SUCCESS)
      fail_msg("clmg_amg_rho_host: %s", error.message);
    assert_true(n == 1 || host > 0);
    for (int t = 0; t < 2; t++) {
      clmg_dtype type = t ? CLMG_FLOAT : CLMG_DOUBLE;
      clmg_csr_device d = {0};
      if (clmg_csr_device_upload(lanes_ctx, &a, type, &d) != CLMG_SUCCESS ||
          clmg_profile_start(lanes_ctx) != CLMG_SUCCESS)
        fail_msg("upload: %s", clmg_context_message(lanes_ctx));
      double device = 0;
      if (clmg_amg_rho_device(lanes_ctx, &d, &device) != CLMG_SUCCESS)
        fail_msg("clmg_amg_rho_device: %s", clmg_context_message(lanes_ctx));
      clmg_kernel_time *times = NULL;
      size_t count = 0;
      if (clmg_profile_stop(lanes_ctx, &times, &count) != CLMG_SUCCESS)
        fail_msg("clmg_profile_stop: %s", clmg_context_message(lanes_ctx));
      uint64_t items = 0;
      assert_int_equal(launches_of(times, count, "amg_jacobi_spmv", &items), 20);
      double mean = (double)clmg_csr_nnz(&a) / (double)n;
      if (mean >= 8)
        assert_true(items >= 8 * n);
      free(times);
      check_close("rho(D^-1 A), 8 lanes", n, device, host, (t ? 1e-5 : 1e-12) * host);
      clmg_csr_device_free(&d);
    }
    clmg_csr_free(&a);
  }
  clmg_context_destroy(lanes_ctx);
}

/* An m x n matrix of rows of `least` to `most` entries at random columns
 * (repeats summed). */
static clmg_csr random_rows(size_t m, size_t n, size_t least, size_t most) {
  size_t capacity = m * most + 1;
  int32_t *rows = malloc(capacity * sizeof *rows), *cols = malloc(capacity * sizeof *cols);
  double *values = malloc(capacity * sizeof *values);
  assert_true(rows && cols && values);
  size_t count = 0;
  for (size_t i = 0; i < m; i++) {
    size_t length = least + (size_t)(uniform() * (double)(most - least + 1));
    for (size_t k = 0; k < length && k < most; k++) {
      rows[count] = (int32_t)i, cols[count] = (int32_t)(uniform() * (double)n);
      values[count++] = 2 * uniform() - 1;
    }
  }
  clmg_csr a = csr_taking_triplets(m, n, count, rows, cols, values);
  return a;
}

/* A k x n matrix with one entry in most rows (a tentative prolongator's
 * shape), none in every fifth; row `doubled` (when < k) gets a second. */
static clmg_csr one_per_row(size_t k, size_t n, size_t doubled) {
  clmg_csr b = {k, n, calloc(k + 1, sizeof(int64_t)), malloc((k + 1) * sizeof(int32_t)),
                malloc((k + 1) * sizeof(double))};
  assert_true(b.row_ptr && b.col && b.val);
  int64_t count = 0;
  for (size_t r = 0; r < k; r++) {
    if (r % 5 != 2) {
      int32_t c = (int32_t)(uniform() * (double)(r == doubled ? n - 1 : n));
      b.col[count] = c;
      b.val[count++] = 2 * uniform() - 1;
      if (r == doubled) {
        b.col[count] = c + 1;
        b.val[count++] = 2 * uniform() - 1;
      }
    }
    b.row_ptr[r + 1] = count;
  }
  return b;
}

/* The device product a b against the general path's, bit for bit, and the
 * host's (the same pattern, values to rounding); whether the one-entry
 * path made it (csr_multiply_single's filling pass, without the general
 * path's values kernel) comes back. */
static int device_product_matches(const clmg_csr *a, const clmg_csr *b, clmg_dtype type) {
  clmg_csr_device da = {0}, db = {0}, dc = {0}, dg = {0};
  CHECK_OK(clmg_csr_device_upload(ctx, a, type, &da));
  CHECK_OK(clmg_csr_device_upload(ctx, b, type, &db));
  CHECK_OK(clmg_profile_start(ctx));
  CHECK_OK(clmg_csr_device_multiply(ctx, &da, &db, &dc));
  clmg_kernel_time *times = NULL;
  size_t count = 0;
  CHECK_OK(clmg_profile_stop(ctx, &times, &count));
  uint64_t single = launches_of(times, count, "csr_multiply_single", NULL);
  uint64_t general = launches_of(times, count, "csr_multiply_values", NULL) +
                     launches_of(times, count, "csr_multiply_values_group", NULL);
  free(times);
  assert_true((single == 2 && general == 0) || (single <= 1 && general > 0));
  CHECK_OK(clmg_csr_device_multiply_general(ctx, &da, &db, &dg));
  clmg_csr c = {0}, g = {0}, h = {0}, rounded_b = {0};
  clmg_error error = {{0}};
  if (clmg_csr_device_download(&dc, &c, &error) != CLMG_SUCCESS ||
      clmg_csr_device_download(&dg, &g, &error) != CLMG_SUCCESS ||
      clmg_csr_device_download(&db, &rounded_b, &error) != CLMG_SUCCESS)
    fail_msg("download: %s", error.message);
  clmg_csr rounded_a = {0};
  if (clmg_csr_device_download(&da, &rounded_a, &error) != CLMG_SUCCESS ||
      clmg_csr_multiply(&rounded_a, &rounded_b, &h, &error) != CLMG_SUCCESS)
    fail_msg("host product: %s", error.message);
  size_t nnz = clmg_csr_nnz(&g);
  assert_int_equal(clmg_csr_nnz(&c), nnz);
  assert_memory_equal(c.row_ptr, g.row_ptr, (g.rows + 1) * sizeof *g.row_ptr);
  if (nnz) {
    assert_memory_equal(c.col, g.col, nnz * sizeof *g.col);
    assert_memory_equal(c.val, g.val, nnz * sizeof *g.val); /* bit for bit */
  }
  assert_int_equal(clmg_csr_nnz(&h), nnz);
  assert_memory_equal(h.row_ptr, g.row_ptr, (g.rows + 1) * sizeof *g.row_ptr);
  double bound = type == CLMG_FLOAT ? 1e-5 : 1e-13;
  for (size_t e = 0; e < nnz; e++) {
    assert_int_equal(h.col[e], c.col[e]);
    if (!(fabs(c.val[e] - h.val[e]) <= bound * (1 + fabs(h.val[e]))))
      fail_msg("entry %zu: %.17g, the host's %.17g", e, c.val[e], h.val[e]);
  }
  clmg_csr_free(&c);
  clmg_csr_free(&g);
  clmg_csr_free(&h);
  clmg_csr_free(&rounded_a);
  clmg_csr_free(&rounded_b);
  clmg_csr_device_free(&da);
  clmg_csr_device_free(&db);
  clmg_csr_device_free(&dc);
  clmg_csr_device_free(&dg);
  return single == 2;
}

/* A P~ with B of at most one entry a row (lib/la/csr_device.c's one-entry
 * path): the general path's result bit for bit, the host's to rounding, on
 * rows of 0 to 60 entries into few columns (many repeats to sum) and into
 * many; the general path takes over where a row names a B row of two
 * entries, or has more columns than the one-entry kernel keeps (64), and
 * where B has more entries than rows, while a B row of two entries that no
 * row of A names leaves the one-entry path to the product. */
static void test_multiply_one_entry(void **state) {
  (void)state;
  for (int t = 0; t < 2; t++) {
    clmg_dtype type = t ? CLMG_FLOAT : CLMG_DOUBLE;
    clmg_csr a = random_rows(3000, 2000, 0, 60), few = one_per_row(2000, 150, SIZE_MAX);
    clmg_csr many = one_per_row(2000, 1800, SIZE_MAX);
    assert_true(device_product_matches(&a, &few, type));
    assert_true(device_product_matches(&a, &many, type));
    clmg_csr_free(&a);
    clmg_csr_free(&few);
    clmg_csr_free(&many);
  }
  /* one row of 200 entries into as many columns: the general path */
  clmg_csr a = random_rows(500, 400, 0, 20), wide = random_rows(1, 400, 200, 200);
  clmg_csr b = one_per_row(400, 400, SIZE_MAX);
  for (int32_t r = 0; r < 400; r++) { /* a permutation: every B row names another column */
    b.row_ptr[r + 1] = r + 1;
    b.col[r] = (int32_t)((r * 7) % 400);
    b.val[r] = 2 * uniform() - 1;
  }
  assert_true(device_product_matches(&a, &b, CLMG_DOUBLE));
  assert_false(device_product_matches(&wide, &b, CLMG_DOUBLE));
  /* a B row of two entries (row 399; nnz(B) <= rows(B) still) that A
   * names: the general path; that no row of A names (A's column 399 empty):
   * the one-entry path. B of more entries than rows: the general path. */
  clmg_csr doubled = one_per_row(400, 100, 399);
  assert_true(clmg_csr_nnz(&doubled) <= doubled.rows);
  int names = 0;
  for (int64_t e = 0; e < a.row_ptr[a.rows]; e++)
    names |= a.col[e] == 399;
  assert_true(names);
  assert_false(device_product_matches(&a, &doubled, CLMG_DOUBLE));
  clmg_csr a_short = random_rows(500, 399, 0, 20), two = random_rows(400, 100, 2, 2);
  a_short.cols = 400;
  assert_true(device_product_matches(&a_short, &doubled, CLMG_DOUBLE));
  assert_false(device_product_matches(&a, &two, CLMG_DOUBLE));
  clmg_csr_free(&a_short);
  clmg_csr_free(&two);
  clmg_csr_free(&wide);
  clmg_csr_free(&a);
  clmg_csr_free(&b);
  clmg_csr_free(&doubled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fill_pseudo_random), cmocka_unit_test(test_sums),
      cmocka_unit_test(test_sums_edges),         cmocka_unit_test(test_rho),
      cmocka_unit_test(test_rho_lanes),          cmocka_unit_test(test_multiply_one_entry),
      cmocka_unit_test(test_layout_on_device),   cmocka_unit_test(test_aggregation_waits),
      cmocka_unit_test(test_finish_queued),
  };
  return cmocka_run_group_tests_name("setup_device", tests, setup, teardown);
}
