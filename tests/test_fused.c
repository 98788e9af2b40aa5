/* Tests of the fused kernels above the coarse tail (lib/solve/fused_level.c,
 * cl/fused_level.cl): the defect and its restriction in one launch, and two
 * (three from zero) Jacobi steps per launch, on the levels of at most
 * fused_restrict_rows / fused_smooth_rows rows.
 *  - On random SPD hierarchies (test_grid_laplacian plus a random positive
 *    diagonal, bilinear P) and random vectors, a cycle with the fused
 *    kernels gives the unfused cycle within rounding (1e-12 relative in
 *    double, 1e-5 in float), for V, W and F cycles, 0 to 5 steps, every
 *    diagonal smoother and Chebyshev (restriction fused only), the three
 *    formats, either fusion alone and with a coarse tail below.
 *  - A two-level V-cycle with both fused against a host cycle (Jacobi
 *    with W = omega / a_ii, dense coarse solve): the kernels' arithmetic
 *    against a reference outside the library (1e-12 in double, 1e-4 in
 *    float against the host's double).
 *  - The commands of a cycle drop by the count predicted below, for a
 *    geometric hierarchy and for a smoothed-aggregation AMG hierarchy; a
 *    Stokes hierarchy with Vanka smoothing gets the fused restriction.
 *  - A solve with everything fused converges (the residual recomputed on
 *    the host), also after new values and a refresh. */
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

/* fused on every level (the test hierarchies are far smaller) */
#define ALL ((int64_t)1 << 30)

typedef struct hierarchy {
  clmg_csr a[LEVELS], p[LEVELS];
} hierarchy;

/* A + diag(shift), shift random in [0, 1) where `shifted`. */
static void hierarchy_build(hierarchy *h, int shifted) {
  memset(h, 0, sizeof *h);
  for (int l = 0; l < LEVELS; ++l) {
    h->a[l] = test_grid_laplacian(l);
    for (size_t i = 0; shifted && i < h->a[l].rows; ++i)
      for (int64_t k = h->a[l].row_ptr[i]; k < h->a[l].row_ptr[i + 1]; ++k)
        if ((size_t)h->a[l].col[k] == i)
          h->a[l].val[k] += 0.5 * (rng_uniform() + 1);
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

static clmg_multigrid *make(const hierarchy *h, int levels, const clmg_multigrid_options *base,
                            int64_t restrict_rows, int64_t smooth_rows) {
  clmg_multigrid_options o = *base;
  o.fused_restrict_rows = restrict_rows;
  o.fused_smooth_rows = smooth_rows;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, levels, h->a, h->p, NULL, &o, &mg));
  return mg;
}

static clmg_vector *random_vector(clmg_dtype type, size_t n, double *host) {
  for (size_t i = 0; i < n; ++i)
    host[i] = rng_uniform();
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

/* Two cycles from a random x, then one from zero (x filled with NaN, which
 * must not be read), on level `level`, unfused and fused. */
static void compare(const hierarchy *h, const clmg_multigrid_options *o, int64_t restrict_rows,
                    int64_t smooth_rows, int level, const char *what) {
  clmg_dtype type = o->matrix.precision;
  clmg_multigrid *mg[2] = {make(h, LEVELS, o, 0, 0),
                           make(h, LEVELS, o, restrict_rows, smooth_rows)};
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
      CHECK_OK(clmg_vector_upload_doubles(x, x_host));
      if (zero)
        CHECK_OK(clmg_vector_fill(x, NAN));
      for (int c = 0; c < (zero ? 1 : 2); ++c)
        CHECK_OK(clmg_multigrid_cycle_level(mg[k], level, b, x, zero && c == 0));
      CHECK_OK(clmg_vector_download_doubles(x, result[k]));
    }
    double difference = relative_difference(result[1], result[0], n);
    if (!(difference <= tolerance))
      fail_msg("%s, fused up to %lld / %lld rows, cycle on level %d%s: x differs by %g "
               "(relative) from the unfused cycle's",
               what, (long long)restrict_rows, (long long)smooth_rows, level,
               zero ? " from zero" : "", difference);
  }
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  free(b_host);
  free(x_host);
  free(result[0]);
  free(result[1]);
  clmg_multigrid_destroy(mg[0]);
  clmg_multigrid_destroy(mg[1]);
}

static void test_fused_matches_unfused(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  const clmg_smoother_type smoothers[] = {CLMG_SMOOTHER_JACOBI, CLMG_SMOOTHER_JACOBI_RHO,
                                          CLMG_SMOOTHER_SPAI0, CLMG_SMOOTHER_CHEBYSHEV};
  const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR, CLMG_FORMAT_ELLR, CLMG_FORMAT_SELL,
                                        CLMG_FORMAT_CSR_ADAPTIVE, CLMG_FORMAT_HYBRID};
  /* both fused, the restriction alone, the smoothing alone, the finest
   * level (1089 rows) unfused */
  const int64_t limits[4][2] = {{ALL, ALL}, {ALL, 0}, {0, ALL}, {300, 300}};
  int case_number = 0;
  for (int p = 0; p < 2; ++p)
    for (int c = CLMG_CYCLE_V; c <= CLMG_CYCLE_F; ++c)
      for (int s = 0; s < 4; ++s, ++case_number) {
        clmg_multigrid_options o;
        clmg_multigrid_options_defaults(&o);
        o.matrix.precision = p ? CLMG_FLOAT : CLMG_DOUBLE;
        o.cycle = (clmg_cycle_type)c;
        o.smoother = smoothers[s];
        /* every format with every limit (CSR-Adaptive's levels were once
         * read back as ELLPACK-R's, CL_INVALID_MEM_OBJECT) */
        o.matrix.format = formats[(case_number + case_number / 4) % 4];
        /* 0 to 5 steps, odd and even, from x and from zero */
        o.pre_smoothing = case_number % 6;
        o.post_smoothing = (case_number * 5 + 1) % 6;
        /* a coarse tail of two levels below in every other case */
        o.tail_rows = case_number % 2 ? (int64_t)h.a[1].rows : 0;
        char what[160];
        snprintf(what, sizeof what, "%s %s-cycle, %s %d+%d, %s, tail %lld rows",
                 clmg_dtype_name(o.matrix.precision), clmg_cycle_type_name(o.cycle),
                 clmg_smoother_type_name(o.smoother), o.pre_smoothing, o.post_smoothing,
                 clmg_matrix_format_name(o.matrix.format), (long long)o.tail_rows);
        const int64_t *limit = limits[case_number % 4];
        compare(&h, &o, limit[0], limit[1], LEVELS - 1, what);
        /* a cycle that starts below the finest level (full multigrid's) */
        compare(&h, &o, limit[0], limit[1], 2, what);
      }
  hierarchy_free(&h);
}

/* ---- against a host cycle ---- */

/* One Jacobi step x += omega D^-1 (b - A x) on the host. */
static void host_jacobi(const clmg_csr *a, const double *b, double *x, double omega) {
  size_t n = a->rows;
  double *next = malloc(n * sizeof *next);
  assert_non_null(next);
  for (size_t i = 0; i < n; ++i) {
    double sum = 0, diagonal = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      sum += a->val[k] * x[a->col[k]];
      if ((size_t)a->col[k] == i)
        diagonal = a->val[k];
    }
    next[i] = x[i] + omega / diagonal * (b[i] - sum);
  }
  memcpy(x, next, n * sizeof *x);
  free(next);
}

/* A two-level V(pre, post) cycle on the host on levels fine - 1 and fine
 * from x (zero: from 0): Jacobi steps, R = P^T, the coarse system solved
 * densely. */
static void host_two_grid(const hierarchy *h, int fine, const double *b, double *x, int pre,
                          int post, double omega, int zero) {
  const clmg_csr *a = &h->a[fine], *ac = &h->a[fine - 1], *p = &h->p[fine];
  size_t n = a->rows, nc = ac->rows;
  if (zero)
    memset(x, 0, n * sizeof *x);
  for (int k = 0; k < pre; ++k)
    host_jacobi(a, b, x, omega);
  double *d = malloc(n * sizeof *d), *bc = calloc(nc, sizeof *bc),
         *dense = calloc(nc * nc, sizeof *dense);
  assert_non_null(d);
  assert_non_null(bc);
  assert_non_null(dense);
  memcpy(d, b, n * sizeof *d);
  clmg_csr_spmv_host(-1.0, a, x, 1.0, d);
  for (size_t i = 0; i < n; ++i) /* bc = P^T d */
    for (int64_t k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
      bc[p->col[k]] += p->val[k] * d[i];
  for (size_t i = 0; i < nc; ++i)
    for (int64_t k = ac->row_ptr[i]; k < ac->row_ptr[i + 1]; ++k)
      dense[i * nc + (size_t)ac->col[k]] = ac->val[k];
  dense_solve_in_place(dense, bc, nc);
  clmg_csr_spmv_host(1.0, p, bc, 1.0, x);
  for (int k = 0; k < post; ++k)
    host_jacobi(a, b, x, omega);
  free(d);
  free(bc);
  free(dense);
}

static void test_fused_against_host(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  const int fine = 3; /* levels 2 and 3: 81 and 289 rows */
  size_t n = h.a[fine].rows;
  double *b_host = malloc(n * sizeof *b_host), *x_host = malloc(n * sizeof *x_host),
         *expected = malloc(n * sizeof *expected), *got = malloc(n * sizeof *got);
  assert_non_null(b_host);
  assert_non_null(x_host);
  assert_non_null(expected);
  assert_non_null(got);
  for (int p = 0; p < 2; ++p)
    for (int steps = 0; steps <= 5; ++steps)
      for (int zero = 0; zero < 2; ++zero) {
        clmg_multigrid_options o;
        clmg_multigrid_options_defaults(&o);
        o.matrix.precision = p ? CLMG_FLOAT : CLMG_DOUBLE;
        o.pre_smoothing = steps;
        o.post_smoothing = 5 - steps;
        o.omega = 0.6;
        o.coarse = CLMG_COARSE_DIRECT;
        o.tail_rows = 0;
        o.fused_restrict_rows = o.fused_smooth_rows = ALL;
        clmg_multigrid *mg = NULL;
        CHECK_OK(clmg_multigrid_create(ctx, 2, h.a + fine - 1, h.p + fine - 1, NULL, &o, &mg));
        clmg_vector *b = random_vector(o.matrix.precision, n, b_host),
                    *x = random_vector(o.matrix.precision, n, x_host);
        if (zero)
          CHECK_OK(clmg_vector_fill(x, NAN));
        CHECK_OK(clmg_multigrid_cycle_level(mg, 1, b, x, zero));
        CHECK_OK(clmg_vector_download_doubles(x, got));
        memcpy(expected, x_host, n * sizeof *expected);
        host_two_grid(&h, fine, b_host, expected, o.pre_smoothing, o.post_smoothing, o.omega, zero);
        double difference = relative_difference(got, expected, n);
        /* float on the device against double on the host */
        if (!(difference <= (p ? 1e-4 : 1e-12)))
          fail_msg("%s two-grid V(%d,%d)%s: fused x differs by %g (relative) from the host's",
                   clmg_dtype_name(o.matrix.precision), o.pre_smoothing, o.post_smoothing,
                   zero ? " from zero" : "", difference);
        clmg_vector_destroy(b);
        clmg_vector_destroy(x);
        clmg_multigrid_destroy(mg);
      }
  free(b_host);
  free(x_host);
  free(expected);
  free(got);
  hierarchy_free(&h);
}

/* ---- commands per cycle ---- */

/* What the engine launches on one level (CSR, a diagonal smoother; no
 * long-row segments) for `steps` smoothing steps, unfused: a fill for none
 * from zero, 1 + (steps - 2) from zero (the first two in one pass), else
 * one a step and a copy after an odd count. */
static int unfused_smoothing(int steps, int zero) {
  if (steps == 0)
    return zero;
  if (zero)
    return steps == 1 ? 1 : steps - 1;
  return steps + steps % 2;
}

/* Fused: two steps a launch, three from zero. */
static int fused_smoothing(int steps, int zero) {
  if (steps == 0)
    return 0;
  if (!zero)
    return (steps + 1) / 2;
  return steps <= 3 ? 1 : 1 + (steps - 2) / 2;
}

typedef struct count_model {
  int levels;
  size_t rows[16];
  int pre, post;
  int64_t restrict_rows, smooth_rows;
  int smoother_fusable; /* a diagonal smoother */
} count_model;

/* The commands of a cycle of `type` on level l: level 0 a GEMV; another
 * level its smoothing, the defect and the restriction (one launch where
 * fused; none from zero without pre-smoothing takes the fill's place),
 * the coarse cycles, the prolongation and its post-smoothing. */
static int predicted_commands(const count_model *m, int l, clmg_cycle_type type, int zero) {
  if (l == 0)
    return 1;
  const int restricts = (int64_t)m->rows[l] <= m->restrict_rows;
  const int smooths = m->smoother_fusable && (int64_t)m->rows[l] <= m->smooth_rows;
  int count = 0;
  if (smooths && m->pre > 0)
    count += fused_smoothing(m->pre, zero);
  else if (!(restricts && m->pre == 0 && zero))
    count += unfused_smoothing(m->pre, zero);
  count += restricts ? 1 : 2;
  count += 1 + (smooths ? fused_smoothing(m->post, 0) : unfused_smoothing(m->post, 0));
  switch (type) {
  case CLMG_CYCLE_V:
    return count + predicted_commands(m, l - 1, CLMG_CYCLE_V, 1);
  case CLMG_CYCLE_W:
    return count + predicted_commands(m, l - 1, CLMG_CYCLE_W, 1) +
           (l - 1 > 0 ? predicted_commands(m, l - 1, CLMG_CYCLE_W, 0) : 0);
  case CLMG_CYCLE_F:
    return count + predicted_commands(m, l - 1, CLMG_CYCLE_F, 1) +
           (l - 1 > 0 ? predicted_commands(m, l - 1, CLMG_CYCLE_V, 0) : 0);
  }
  return 0;
}

/* The commands of one cycle of mg from a random x (programs built by a
 * first cycle). */
static uint64_t measured_commands(clmg_multigrid *mg, size_t n) {
  double *host = malloc(n * sizeof *host);
  assert_non_null(host);
  clmg_vector *b = random_vector(CLMG_DOUBLE, n, host), *x = random_vector(CLMG_DOUBLE, n, host);
  CHECK_OK(clmg_multigrid_cycle(mg, b, x));
  CHECK_OK(clmg_finish(ctx));
  clmg_counters before, after;
  clmg_context_counters(ctx, &before);
  CHECK_OK(clmg_multigrid_cycle(mg, b, x));
  clmg_context_counters(ctx, &after);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  free(host);
  return after.commands - before.commands;
}

/* mg's commands per cycle against the model, fused as the model says; and
 * the drop from the unfused count (the model with both limits 0). */
static void check_commands(clmg_multigrid *mg, count_model model, clmg_cycle_type type,
                           uint64_t unfused, const char *what) {
  const int finest = model.levels - 1;
  uint64_t got = measured_commands(mg, model.rows[finest]);
  int predicted = predicted_commands(&model, finest, type, 0);
  count_model off = model;
  off.restrict_rows = off.smooth_rows = 0;
  int predicted_unfused = predicted_commands(&off, finest, type, 0);
  if (got != (uint64_t)predicted || unfused != (uint64_t)predicted_unfused)
    fail_msg("%s, %s-cycle %d+%d, fused up to %lld / %lld rows: %llu commands (unfused %llu), "
             "predicted %d (unfused %d)",
             what, clmg_cycle_type_name(type), model.pre, model.post,
             (long long)model.restrict_rows, (long long)model.smooth_rows, (unsigned long long)got,
             (unsigned long long)unfused, predicted, predicted_unfused);
}

static void test_fused_commands_gmg(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 1);
  const int64_t limits[3][2] = {{ALL, ALL}, {ALL, 0}, {300, 1100}};
  for (int c = CLMG_CYCLE_V; c <= CLMG_CYCLE_F; ++c)
    for (int steps = 0; steps <= 4; ++steps)
      for (int k = 0; k < 3; ++k) {
        clmg_multigrid_options o;
        clmg_multigrid_options_defaults(&o);
        o.cycle = (clmg_cycle_type)c;
        o.pre_smoothing = steps;
        o.post_smoothing = (steps + 3) % 5;
        o.matrix.format = CLMG_FORMAT_CSR;
        o.tail_rows = 0;
        o.smoother = k == 2 ? CLMG_SMOOTHER_SPAI0 : CLMG_SMOOTHER_JACOBI;
        count_model model = {LEVELS,       {0}, o.pre_smoothing, o.post_smoothing, limits[k][0],
                             limits[k][1], 1};
        for (int l = 0; l < LEVELS; ++l)
          model.rows[l] = h.a[l].rows;
        clmg_multigrid *off = make(&h, LEVELS, &o, 0, 0);
        uint64_t unfused = measured_commands(off, model.rows[LEVELS - 1]);
        clmg_multigrid_destroy(off);
        clmg_multigrid *mg = make(&h, LEVELS, &o, limits[k][0], limits[k][1]);
        check_commands(mg, model, o.cycle, unfused, "GMG");
        clmg_multigrid_destroy(mg);
      }
  /* the default V(4,4) with everything fused: 10 launches a level from
   * zero become 6, the finest level's 11 (from x) 6 */
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  o.matrix.format = CLMG_FORMAT_CSR;
  o.tail_rows = 0;
  clmg_multigrid *off = make(&h, LEVELS, &o, 0, 0), *on = make(&h, LEVELS, &o, ALL, ALL);
  size_t n = h.a[LEVELS - 1].rows;
  assert_int_equal(measured_commands(off, n), 11 + 10 * (LEVELS - 2) + 1);
  assert_int_equal(measured_commands(on, n), 6 + 6 * (LEVELS - 2) + 1);
  clmg_multigrid_destroy(off);
  clmg_multigrid_destroy(on);
  hierarchy_free(&h);
}

/* Smoothed aggregation AMG on the 5-point Laplacian of 65^2 nodes: the
 * engine fuses its levels like a geometric hierarchy's. Chebyshev: only
 * the restriction is fused. */
static void test_fused_commands_amg(void **state) {
  (void)state;
  clmg_csr a = test_grid_laplacian(5);
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 2; ++k) {
      clmg_multigrid_options o;
      clmg_multigrid_options_defaults(&o);
      o.matrix.format = CLMG_FORMAT_CSR;
      o.tail_rows = 0;
      o.coarse = CLMG_COARSE_DIRECT;
      o.smoother = s ? CLMG_SMOOTHER_CHEBYSHEV : CLMG_SMOOTHER_JACOBI_RHO;
      o.pre_smoothing = o.post_smoothing = s ? 3 : 2;
      clmg_multigrid *mg[2] = {NULL, NULL};
      for (int fused = 0; fused < 2; ++fused) {
        o.fused_restrict_rows = fused ? (k ? 500 : ALL) : 0;
        o.fused_smooth_rows = fused ? (k ? 500 : ALL) : 0;
        CHECK_OK(clmg_amg_multigrid_create(ctx, &a, NULL, &o, NULL, &mg[fused]));
      }
      count_model model = {clmg_multigrid_levels(mg[1]),
                           {0},
                           o.pre_smoothing,
                           o.post_smoothing,
                           o.fused_restrict_rows,
                           o.fused_smooth_rows,
                           !s};
      assert_true(model.levels >= 3 && model.levels <= 16);
      for (int l = 0; l < model.levels; ++l)
        model.rows[l] = clmg_multigrid_operator(mg[1], l)->rows;
      if (s) { /* Chebyshev's steps: unfused counts of their own, so compare the drop */
        uint64_t unfused = measured_commands(mg[0], model.rows[model.levels - 1]);
        uint64_t fused = measured_commands(mg[1], model.rows[model.levels - 1]);
        int restricted = 0;
        for (int l = 1; l < model.levels; ++l)
          restricted += (int64_t)model.rows[l] <= model.restrict_rows;
        if (unfused - fused != (uint64_t)restricted)
          fail_msg("AMG, Chebyshev, fused up to %lld rows: %llu commands, unfused %llu; the "
                   "drop should be one a fused level (%d)",
                   (long long)model.restrict_rows, (unsigned long long)fused,
                   (unsigned long long)unfused, restricted);
      } else {
        uint64_t unfused = measured_commands(mg[0], model.rows[model.levels - 1]);
        check_commands(mg[1], model, CLMG_CYCLE_V, unfused, "AMG");
      }
      clmg_multigrid_destroy(mg[0]);
      clmg_multigrid_destroy(mg[1]);
    }
  clmg_csr_free(&a);
}

/* A matrix of 41 entries a row (a banded SPD matrix, as AMG's coarse levels
 * of vector problems are dense): its levels are never fused, whatever the
 * limits (the recomputation grows with the rows' lengths squared; on the
 * H200 it made elasticity's cycle 67 times as long), so asking for the
 * fused kernels everywhere changes no command. */
static void test_fused_skips_dense_levels(void **state) {
  (void)state;
  const size_t n = 600, band = 20;
  size_t count = 0, capacity = n * (2 * band + 1);
  int32_t *ti = malloc(capacity * sizeof *ti), *tj = malloc(capacity * sizeof *tj);
  double *tv = malloc(capacity * sizeof *tv);
  assert_non_null(ti);
  assert_non_null(tj);
  assert_non_null(tv);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i > band ? i - band : 0; j <= i + band && j < n; ++j) {
      ti[count] = (int32_t)i;
      tj[count] = (int32_t)j;
      tv[count++] = i == j ? 2.0 * band + 1.0 : -1.0 / (1.0 + (double)(i > j ? i - j : j - i));
    }
  clmg_csr a = {0};
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_csr_from_triplets(n, n, count, ti, tj, tv, &a, &error));
  free(ti);
  free(tj);
  free(tv);
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  o.matrix.format = CLMG_FORMAT_CSR;
  o.tail_rows = 0;
  o.coarse = CLMG_COARSE_DIRECT;
  o.smoother = CLMG_SMOOTHER_JACOBI_RHO;
  clmg_multigrid *mg[2] = {NULL, NULL};
  for (int fused = 0; fused < 2; ++fused) {
    o.fused_restrict_rows = o.fused_smooth_rows = fused ? ALL : 0;
    CHECK_OK(clmg_amg_multigrid_create(ctx, &a, NULL, &o, NULL, &mg[fused]));
  }
  assert_true(clmg_multigrid_levels(mg[1]) >= 2);
  uint64_t unfused = measured_commands(mg[0], n), fused = measured_commands(mg[1], n);
  if (fused != unfused)
    fail_msg("a matrix of 41 entries a row: %llu commands with the fused kernels asked for, "
             "%llu without; its levels should not be fused",
             (unsigned long long)fused, (unsigned long long)unfused);
  clmg_multigrid_destroy(mg[0]);
  clmg_multigrid_destroy(mg[1]);
  clmg_csr_free(&a);
}

/* A Stokes hierarchy with Vanka smoothing (P2-P1 on triangles, block
 * smoother): only the restriction is fused, one command fewer a level
 * visit, and the cycle agrees with the unfused one within rounding. */
static void test_fused_vanka(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_mesh_box_simplices(2, 2, 0.0, 1, &coarse, &error));
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  clmg_stokes_hierarchy h;
  CHECK_ERROR_OK(error, clmg_stokes_hierarchy_build(&coarse, 4, &problem, &h, &error));
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  o.cycle = CLMG_CYCLE_V;
  o.pre_smoothing = o.post_smoothing = 2;
  o.tail_rows = 0;
  clmg_multigrid *mg[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    o.fused_restrict_rows = o.fused_smooth_rows = k ? ALL : 0;
    CHECK_OK(clmg_stokes_multigrid_create(ctx, &h, NULL, &o, &mg[k]));
  }
  const int levels = clmg_multigrid_levels(mg[0]);
  size_t n = h.a[h.num_levels - 1].rows;
  double *b_host = malloc(n * sizeof *b_host), *x_host = malloc(n * sizeof *x_host),
         *result[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
  assert_non_null(b_host);
  assert_non_null(x_host);
  assert_non_null(result[0]);
  assert_non_null(result[1]);
  clmg_vector *b = random_vector(CLMG_DOUBLE, n, b_host),
              *x = random_vector(CLMG_DOUBLE, n, x_host);
  uint64_t commands[2];
  for (int k = 0; k < 2; ++k) {
    commands[k] = measured_commands(mg[k], n);
    CHECK_OK(clmg_vector_upload_doubles(x, x_host));
    CHECK_OK(clmg_multigrid_cycle(mg[k], b, x));
    CHECK_OK(clmg_vector_download_doubles(x, result[k]));
  }
  double difference = relative_difference(result[1], result[0], n);
  if (!(difference <= 1e-12))
    fail_msg("Vanka V-cycle: the fused cycle's x differs by %g (relative)", difference);
  if (commands[0] - commands[1] != (uint64_t)(levels - 1))
    fail_msg("Vanka V-cycle on %d levels: %llu commands fused, %llu unfused; the drop should be "
             "one a level above the coarsest",
             levels, (unsigned long long)commands[1], (unsigned long long)commands[0]);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  free(b_host);
  free(x_host);
  free(result[0]);
  free(result[1]);
  clmg_multigrid_destroy(mg[0]);
  clmg_multigrid_destroy(mg[1]);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

/* ---- solves ---- */

/* A solve with everything fused converges to the host's residual; after
 * new values on level 2 and a refresh the fused cycle still matches the
 * unfused one. */
static void test_fused_solve_and_refresh(void **state) {
  (void)state;
  hierarchy h;
  hierarchy_build(&h, 0);
  for (int p = 0; p < 2; ++p) {
    clmg_multigrid_options o;
    clmg_multigrid_options_defaults(&o);
    o.matrix.precision = p ? CLMG_FLOAT : CLMG_DOUBLE;
    o.smoother = p ? CLMG_SMOOTHER_SPAI0 : CLMG_SMOOTHER_JACOBI;
    o.tail_rows = 0;
    clmg_multigrid *mg = make(&h, LEVELS, &o, ALL, ALL);
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
  /* refresh: level 2's values doubled on both hierarchies */
  clmg_multigrid_options o;
  clmg_multigrid_options_defaults(&o);
  o.tail_rows = 0;
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
  clmg_multigrid *mg[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    o.fused_restrict_rows = o.fused_smooth_rows = k ? ALL : 0;
    CHECK_OK(
        clmg_multigrid_create_from_csr_device(ctx, LEVELS, a_device, p_device, NULL, &o, &mg[k]));
  }
  for (int l = 0; l < LEVELS; ++l) {
    clmg_csr_device_free(&a_device[l]);
    clmg_csr_device_free(&p_device[l]);
  }
  size_t nnz = clmg_csr_nnz(&h.a[2]);
  double *values = malloc(nnz * sizeof *values);
  assert_non_null(values);
  for (size_t k = 0; k < nnz; ++k)
    values[k] = 2 * h.a[2].val[k];
  size_t n = h.a[LEVELS - 1].rows;
  double *host = malloc(n * sizeof *host),
         *x[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
  assert_non_null(host);
  assert_non_null(x[0]);
  assert_non_null(x[1]);
  clmg_vector *b = random_vector(CLMG_DOUBLE, n, host), *xd = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &xd));
  for (int k = 0; k < 2; ++k) {
    CHECK_OK(clmg_multigrid_update_values(mg[k], 2, values));
    CHECK_OK(clmg_multigrid_refresh(mg[k]));
    CHECK_OK(clmg_vector_fill(xd, 0.0));
    CHECK_OK(clmg_multigrid_cycle(mg[k], b, xd));
    CHECK_OK(clmg_vector_download_doubles(xd, x[k]));
  }
  double difference = relative_difference(x[1], x[0], n);
  if (!(difference <= 1e-12))
    fail_msg("after a refresh the fused cycle's x differs by %g (relative)", difference);
  clmg_vector_destroy(b);
  clmg_vector_destroy(xd);
  free(values);
  free(host);
  free(x[0]);
  free(x[1]);
  clmg_multigrid_destroy(mg[0]);
  clmg_multigrid_destroy(mg[1]);
  hierarchy_free(&h);
}

static int setup(void **state) {
  (void)state;
  rng_seed(0x33f05ed);
  return test_open_context(&ctx, NULL, "fused", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_matches_unfused),
      cmocka_unit_test(test_fused_against_host),
      cmocka_unit_test(test_fused_commands_gmg),
      cmocka_unit_test(test_fused_commands_amg),
      cmocka_unit_test(test_fused_vanka),
      cmocka_unit_test(test_fused_skips_dense_levels),
      cmocka_unit_test(test_fused_solve_and_refresh),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
