/* Tests of the coarse tail (lib/solve/coarse_tail.c, cl/coarse_tail.cl):
 * the levels of at most tail_rows rows run each cycle's sub-cycle as one
 * launch. On random SPD hierarchies (the 5-point Laplacian of
 * test_grid_laplacian plus a random positive diagonal, bilinear P) and
 * random vectors, a
 * cycle with the tail on must give the cycle with it off within rounding,
 * for V, W and F cycles, every tail depth (the coarse solve alone, two
 * levels, all), the smoothers the tail runs, the three matrix formats and
 * both precisions; the commands per cycle must drop as counted below; a
 * solve must converge with the residual recomputed on the host; where the
 * tail cannot run (a Krylov coarse solve, a caller's smoother) there is
 * none and the cycle runs as before. */
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

enum { LEVELS = 5 };

typedef struct hierarchy {
  clmg_csr a[LEVELS], p[LEVELS];
} hierarchy;

/* A + diag(shift), shift random in [0, 1) where `shifted`: SPD, and
 * random (its levels then disagree as discretisations: for the comparisons,
 * not for solves). */
static void hierarchy_build(hierarchy *h, int shifted) {
  memset(h, 0, sizeof *h);
  for (int l = 0; l < LEVELS; ++l) {
    h->a[l] = test_grid_laplacian(l);
    for (size_t i = 0; i < h->a[l].rows; ++i)
      for (int64_t k = h->a[l].row_ptr[i]; k < h->a[l].row_ptr[i + 1]; ++k)
        if (shifted && (size_t)h->a[l].col[k] == i)
          h->a[l].val[k] += rng_uniform();
    if (l > 0)
      h->p[l] = test_grid_prolongation(l);
  }
}

static void hierarchy_free(hierarchy *h) {
  for (int l = 0; l < LEVELS; ++l) {
    clmg_csr_free(&h->a[l]);
    clmg_csr_free(&h->p[l]);
  }
}

static clmg_multigrid *make(const hierarchy *h, const clmg_multigrid_options *base,
                            int64_t tail_rows, int expected_tail_levels) {
  clmg_multigrid_options o = *base;
  o.tail_rows = tail_rows;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, LEVELS, h->a, h->p, NULL, &o, &mg));
  assert_int_equal(clmg_multigrid_tail_levels(mg), expected_tail_levels);
  return mg;
}

static clmg_vector *random_vector(clmg_dtype type, size_t n, double *host) {
  for (size_t i = 0; i < n; ++i)
    host[i] = 2 * rng_uniform() - 1;
  clmg_vector *v = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &v));
  CHECK_OK(clmg_vector_upload_doubles(v, host));
  return v;
}

/* max |x - y| / max |y| */
static double relative_difference(const double *x, const double *y, size_t n) {
  double difference = 0, size = 0;
  for (size_t i = 0; i < n; ++i) {
    difference = fmax(difference, fabs(x[i] - y[i]));
    size = fmax(size, fabs(y[i]));
  }
  return difference / size;
}

/* Two cycles from a random x, then one from zero (the preconditioner), on
 * the finest level and on level `level`, with the tail off and on. */
static void compare(const hierarchy *h, const clmg_multigrid_options *o, int depth, int level,
                    const char *what) {
  clmg_dtype type = o->matrix.precision;
  clmg_multigrid *off = make(h, o, 0, 0);
  clmg_multigrid *on = make(h, o, (int64_t)h->a[depth - 1].rows, depth);
  size_t n = h->a[level].rows;
  double *b_host = malloc(n * sizeof *b_host), *x_host = malloc(n * sizeof *x_host);
  double *result[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
  assert_non_null(b_host);
  assert_non_null(x_host);
  assert_non_null(result[0]);
  assert_non_null(result[1]);
  clmg_vector *b = random_vector(type, n, b_host), *x = random_vector(type, n, x_host);
  const double tolerance = type == CLMG_FLOAT ? 1e-5 : 1e-12;
  for (int zero = 0; zero < 2; ++zero) {
    for (int k = 0; k < 2; ++k) {
      clmg_multigrid *mg = k ? on : off;
      CHECK_OK(clmg_vector_upload_doubles(x, x_host));
      if (zero)
        CHECK_OK(clmg_vector_fill(x, NAN)); /* not read */
      for (int c = 0; c < (zero ? 1 : 2); ++c)
        CHECK_OK(clmg_multigrid_cycle_level(mg, level, b, x, zero && c == 0));
      CHECK_OK(clmg_vector_download_doubles(x, result[k]));
    }
    double difference = relative_difference(result[1], result[0], n);
    if (!(difference <= tolerance))
      fail_msg("%s, tail of %d levels, cycle on level %d%s: the tail's x differs by %g "
               "(relative) from the engine's",
               what, depth, level, zero ? " from zero" : "", difference);
  }
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  free(b_host);
  free(x_host);
  free(result[0]);
  free(result[1]);
  clmg_multigrid_destroy(off);
  clmg_multigrid_destroy(on);
}

static void test_tail_matches_engine(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  const clmg_smoother_type smoothers[] = {CLMG_SMOOTHER_JACOBI, CLMG_SMOOTHER_CHEBYSHEV,
                                          CLMG_SMOOTHER_SPAI0, CLMG_SMOOTHER_JACOBI_RHO};
  const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR, CLMG_FORMAT_ELLR, CLMG_FORMAT_SELL};
  const int depths[] = {1, 2, LEVELS};
  int case_number = 0;
  for (int p = 0; p < 2; ++p)
    for (int c = CLMG_CYCLE_V; c <= CLMG_CYCLE_F; ++c)
      for (int d = 0; d < 3; ++d, ++case_number) {
        clmg_multigrid_options o;
        clmg_multigrid_options_defaults(&o);
        o.matrix.precision = p ? CLMG_FLOAT : CLMG_DOUBLE;
        o.cycle = (clmg_cycle_type)c;
        o.smoother = smoothers[case_number % 4];
        o.matrix.format = formats[case_number % 3];
        o.pre_smoothing = 1 + case_number % 3; /* 1 to 3 steps: odd counts and one */
        o.post_smoothing = 3 - case_number % 3;
        o.smoothing_growth = case_number % 5 == 4 ? 1.5 : 1.0;
        char what[160];
        snprintf(what, sizeof what, "%s %s-cycle, %s %d+%d, %s",
                 clmg_dtype_name(o.matrix.precision), clmg_cycle_type_name(o.cycle),
                 clmg_smoother_type_name(o.smoother), o.pre_smoothing, o.post_smoothing,
                 clmg_matrix_format_name(o.matrix.format));
        compare(&h, &o, depths[d], LEVELS - 1, what);
        /* a cycle that starts inside the tail (full multigrid's) */
        compare(&h, &o, depths[d], depths[d] - 1, what);
      }
  hierarchy_free(&h);
}

/* No smoothing steps before (or after) the coarse correction: x = 0, and
 * the defect is b. */
static void test_tail_without_smoothing_steps(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  for (int k = 0; k < 2; ++k) {
    clmg_multigrid_options o;
    clmg_multigrid_options_defaults(&o);
    o.pre_smoothing = k ? 2 : 0;
    o.post_smoothing = k ? 0 : 2;
    compare(&h, &o, 3, LEVELS - 1, k ? "2+0 Jacobi" : "0+2 Jacobi");
  }
  hierarchy_free(&h);
}

/* The commands of a cycle of `type` on level l (Jacobi 2+2 on CSR): a level
 * below `depth` starts the tail, one launch; level 0 is one GEMV; another
 * level launches 2 steps from x, or 1 (the two steps from zero fused), and
 * the defect, the restriction, the prolongation and 2 steps. */
static int predicted_commands(int l, clmg_cycle_type type, int zero, int depth) {
  if (l < depth || l == 0)
    return 1;
  int count = (zero ? 1 : 2) + 3 + 2;
  switch (type) {
  case CLMG_CYCLE_V:
    return count + predicted_commands(l - 1, CLMG_CYCLE_V, 1, depth);
  case CLMG_CYCLE_W:
    return count + predicted_commands(l - 1, CLMG_CYCLE_W, 1, depth) +
           (l - 1 > 0 ? predicted_commands(l - 1, CLMG_CYCLE_W, 0, depth) : 0);
  case CLMG_CYCLE_F:
    return count + predicted_commands(l - 1, CLMG_CYCLE_F, 1, depth) +
           (l - 1 > 0 ? predicted_commands(l - 1, CLMG_CYCLE_V, 0, depth) : 0);
  }
  return 0;
}

static void test_tail_commands(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  for (int c = CLMG_CYCLE_V; c <= CLMG_CYCLE_F; ++c)
    for (int depth = 0; depth <= LEVELS; ++depth) {
      clmg_multigrid_options o;
      clmg_multigrid_options_defaults(&o);
      o.cycle = (clmg_cycle_type)c;
      o.pre_smoothing = o.post_smoothing = 2;
      o.matrix.format = CLMG_FORMAT_CSR;
      /* the levels above the tail unfused (tests/test_fused.c counts the fused ones) */
      o.fused_restrict_rows = o.fused_smooth_rows = 0;
      clmg_multigrid *mg = make(&h, &o, depth ? (int64_t)h.a[depth - 1].rows : 0, depth);
      size_t n = h.a[LEVELS - 1].rows;
      double *host = malloc(n * sizeof *host);
      assert_non_null(host);
      clmg_vector *b = random_vector(CLMG_DOUBLE, n, host),
                  *x = random_vector(CLMG_DOUBLE, n, host);
      CHECK_OK(clmg_multigrid_cycle(mg, b, x)); /* programs built */
      CHECK_OK(clmg_finish(ctx));
      clmg_counters before, after;
      clmg_context_counters(ctx, &before);
      CHECK_OK(clmg_multigrid_cycle(mg, b, x));
      clmg_context_counters(ctx, &after);
      int predicted = predicted_commands(LEVELS - 1, o.cycle, 0, depth);
      if (after.commands - before.commands != (uint64_t)predicted)
        fail_msg("%s-cycle, tail of %d levels: %llu commands, predicted %d",
                 clmg_cycle_type_name(o.cycle), depth,
                 (unsigned long long)(after.commands - before.commands), predicted);
      if (depth == LEVELS)
        assert_int_equal(predicted, 1);
      clmg_vector_destroy(b);
      clmg_vector_destroy(x);
      free(host);
      clmg_multigrid_destroy(mg);
    }
  hierarchy_free(&h);
}

/* A solve with the tail on every level converges; the residual is
 * recomputed on the host from the x that comes back. Then new values on
 * a tail level (refresh makes the tail again) against the engine. */
static void test_tail_solve_and_refresh(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 0);
  for (int p = 0; p < 2; ++p) {
    clmg_multigrid_options o;
    clmg_multigrid_options_defaults(&o);
    o.matrix.precision = p ? CLMG_FLOAT : CLMG_DOUBLE;
    o.smoother = p ? CLMG_SMOOTHER_SPAI0 : CLMG_SMOOTHER_JACOBI;
    clmg_multigrid *mg = make(&h, &o, (int64_t)h.a[LEVELS - 1].rows, LEVELS);
    const clmg_csr *a = &h.a[LEVELS - 1];
    size_t n = a->rows;
    double *b_host = malloc(n * sizeof *b_host), *x = malloc(n * sizeof *x),
           *r = malloc(n * sizeof *r);
    assert_non_null(b_host);
    assert_non_null(x);
    assert_non_null(r);
    clmg_vector *b = random_vector(o.matrix.precision, n, b_host), *xd = NULL;
    CHECK_OK(clmg_vector_create(ctx, o.matrix.precision, n, &xd));
    CHECK_OK(clmg_vector_fill(xd, 0.0));
    clmg_krylov_options ko;
    clmg_krylov_options_defaults(&ko);
    ko.relative_tolerance = p ? 1e-5 : 1e-10;
    ko.max_iterations = 60;
    clmg_krylov_result result;
    CHECK_OK(clmg_multigrid_solve(mg, b, xd, &ko, &result));
    assert_true(result.converged);
    assert_true(result.iterations < 30);
    CHECK_OK(clmg_vector_download_doubles(xd, x));
    memcpy(r, b_host, n * sizeof *r);
    clmg_csr_spmv_host(-1.0, a, x, 1.0, r);
    double r_norm = 0, b_norm = 0;
    for (size_t i = 0; i < n; ++i) {
      r_norm += r[i] * r[i];
      b_norm += b_host[i] * b_host[i];
    }
    if (!(sqrt(r_norm / b_norm) <= 3 * ko.relative_tolerance))
      fail_msg("%s: the host's residual is %g relative after %d cycles",
               clmg_dtype_name(o.matrix.precision), sqrt(r_norm / b_norm), result.iterations);
    clmg_krylov_result_free(&result);
    clmg_vector_destroy(b);
    clmg_vector_destroy(xd);
    free(b_host);
    free(x);
    free(r);
    clmg_multigrid_destroy(mg);
  }
  /* refresh: level 1's values doubled on both hierarchies */
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  /* from device arrays, whose values can be updated (SELL: the map of
   * stored entries) */
  o.matrix.format = CLMG_FORMAT_SELL;
  clmg_csr_device a_device[LEVELS], p_device[LEVELS];
  memset(p_device, 0, sizeof p_device);
  for (int l = 0; l < LEVELS; ++l) {
    CHECK_OK(clmg_csr_device_upload(ctx, &h.a[l], CLMG_DOUBLE, &a_device[l]));
    if (l > 0)
      CHECK_OK(clmg_csr_device_upload(ctx, &h.p[l], CLMG_DOUBLE, &p_device[l]));
  }
  clmg_multigrid *mg_pair[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    o.tail_rows = k ? (int64_t)h.a[2].rows : 0;
    CHECK_OK(clmg_multigrid_create_from_csr_device(ctx, LEVELS, a_device, p_device, NULL, &o,
                                                   &mg_pair[k]));
  }
  for (int l = 0; l < LEVELS; ++l) {
    clmg_csr_device_free(&a_device[l]);
    clmg_csr_device_free(&p_device[l]);
  }
  clmg_multigrid *off = mg_pair[0], *on = mg_pair[1];
  size_t nnz = clmg_csr_nnz(&h.a[1]);
  double *values = malloc(nnz * sizeof *values);
  assert_non_null(values);
  for (size_t k = 0; k < nnz; ++k)
    values[k] = 2 * h.a[1].val[k];
  size_t n = h.a[LEVELS - 1].rows;
  double *host = malloc(n * sizeof *host),
         *x[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
  assert_non_null(host);
  assert_non_null(x[0]);
  assert_non_null(x[1]);
  clmg_vector *b = random_vector(CLMG_DOUBLE, n, host), *xd = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &xd));
  for (int k = 0; k < 2; ++k) {
    clmg_multigrid *mg = k ? on : off;
    CHECK_OK(clmg_multigrid_update_values(mg, 1, values));
    CHECK_OK(clmg_multigrid_refresh(mg));
    assert_int_equal(clmg_multigrid_tail_levels(mg), k ? 3 : 0);
    CHECK_OK(clmg_vector_fill(xd, 0.0));
    CHECK_OK(clmg_multigrid_cycle(mg, b, xd));
    CHECK_OK(clmg_vector_download_doubles(xd, x[k]));
  }
  double difference = relative_difference(x[1], x[0], n);
  if (!(difference <= 1e-12))
    fail_msg("after a refresh the tail's x differs by %g (relative)", difference);
  clmg_vector_destroy(b);
  clmg_vector_destroy(xd);
  free(values);
  free(host);
  free(x[0]);
  free(x[1]);
  clmg_multigrid_destroy(off);
  clmg_multigrid_destroy(on);
  hierarchy_free(&h);
}

static clmg_status identity_setup(void *data, const clmg_operator *a) {
  (void)data;
  (void)a;
  return CLMG_SUCCESS;
}

/* x = b: a smoother the tail does not know */
static clmg_status copy_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                              clmg_vector *x, int steps, int x_is_zero) {
  (void)data;
  (void)a;
  (void)steps;
  (void)x_is_zero;
  return clmg_copy(b, x);
}

static clmg_status make_copy_smoother(void *factory_data, clmg_context *context, int level,
                                      const clmg_operator *a, clmg_smoother *smoother) {
  (void)factory_data;
  (void)context;
  (void)level;
  (void)a;
  memset(smoother, 0, sizeof *smoother);
  smoother->name = "copy";
  smoother->setup = identity_setup;
  smoother->apply = copy_apply;
  return CLMG_SUCCESS;
}

/* Where the tail cannot run, there is none: a Krylov coarse solve, a
 * caller's smoother. */
static void test_no_tail_where_unsupported(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  o.coarse = CLMG_COARSE_PCG;
  clmg_multigrid *mg = make(&h, &o, 1 << 20, 0);
  clmg_multigrid_destroy(mg);
  clmg_multigrid_options_defaults(&o);
  o.smoother_factory = make_copy_smoother;
  mg = make(&h, &o, 1 << 20, 0);
  clmg_multigrid_destroy(mg);
  /* but the coarse solve alone, which needs no smoother, is a tail */
  mg = make(&h, &o, (int64_t)h.a[0].rows, 1);
  clmg_multigrid_destroy(mg);
  hierarchy_free(&h);
}

/* A phase of the tail walks a level's entries: a level joins it only while
 * its matrix holds at most tail_rows x tail_entries_per_row entries, and
 * the coarse solve's dense inverse (n^2) as many. The grid levels 0, 1, 2
 * have 9, 25 and 81 rows and hold 13, 61 and 277 entries (the inverse 81):
 * with 81 rows allowed, 16 entries a row take all three, 2 (162 entries)
 * levels 0 and 1; with 25 rows and 3 a row (75) the inverse is too large:
 * no tail. */
static void test_tail_bounded_by_entries(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  const struct {
    int64_t rows;
    const char *params;
    int levels;
  } cases[] = {{81, "tail_entries_per_row=16", 3},
               {81, "tail_entries_per_row=2", 2},
               {25, "tail_entries_per_row=3", 0}};
  assert_int_equal(h.a[2].rows, 81);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    clmg_context *context = NULL;
    assert_int_equal(test_open_context_params(&context, cases[c].params, "tail entries", 0), 0);
    o.tail_rows = cases[c].rows;
    clmg_multigrid *mg = NULL;
    CHECK_CONTEXT_OK(context, clmg_multigrid_create(context, LEVELS, h.a, h.p, NULL, &o, &mg));
    if (clmg_multigrid_tail_levels(mg) != cases[c].levels)
      fail_msg("%lld rows, %s: a tail of %d levels, expected %d", (long long)cases[c].rows,
               cases[c].params, clmg_multigrid_tail_levels(mg), cases[c].levels);
    clmg_multigrid_destroy(mg);
    test_close_context(&context);
  }
  hierarchy_free(&h);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "coarse_tail", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(0x7a11u);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tail_matches_engine),
      cmocka_unit_test(test_tail_without_smoothing_steps),
      cmocka_unit_test(test_tail_commands),
      cmocka_unit_test(test_tail_bounded_by_entries),
      cmocka_unit_test(test_tail_solve_and_refresh),
      cmocka_unit_test(test_no_tail_where_unsupported),
  };
  test_apply_filters();
  return cmocka_run_group_tests(tests, setup, teardown);
}
