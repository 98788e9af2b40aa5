#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, strdup */
/* Smoothed aggregation with parallel roots (CLMG_AMG_ROOTS_PARALLEL) and
 * its setup on the device: the aggregates against a reference written here
 * from the definition (the greedy distance-k independent set in descending
 * hashed priority, joined to the neighbouring aggregate of most strong
 * edges, numbered by first row), the independent set's invariants, the
 * device hierarchy (aggregation, fit, smoothing and products on the device)
 * entry for entry against the host's on random SPD matrices with and
 * without a strength threshold, a row without its diagonal refused on the
 * device as on the host, the setup's phase times, and for several unknowns
 * per node the device's node matrix and aggregates (the same hierarchy). */
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
#define CHECK_HOST(call, error) CHECK_ERROR_OK(error, call)

/* ---- matrices ---- */

/* A random symmetric matrix with about per_row entries a row, negative and
 * (a share `positive`) positive couplings of varied size, a dominant
 * diagonal (SPD), and rows `identity` (if < n) reduced to 1 on the
 * diagonal. */
static clmg_csr random_spd(size_t n, size_t per_row, double positive, size_t identity) {
  triplets t = {0};
  double *diagonal = calloc(n, sizeof *diagonal);
  assert_non_null(diagonal);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < per_row / 2; ++k) {
      /* mostly near neighbours (a mesh-like graph), some far */
      size_t j = rng_uniform() < 0.8 ? (i + 1 + rng_below(8)) % n : rng_below(n);
      if (j == i || i == identity || j == identity)
        continue;
      double u = 0.5 * (rng_uniform() + 1);
      double size = 0.01 + (0.5 * (rng_uniform() + 1));
      double v = u < positive ? 0.3 * size : -size;
      triplets_add(&t, i, j, v);
      triplets_add(&t, j, i, v);
      diagonal[i] += fabs(v);
      diagonal[j] += fabs(v);
    }
  for (size_t i = 0; i < n; ++i)
    triplets_add(&t, i, i, i == identity ? 1.0 : diagonal[i] + 0.1);
  free(diagonal);
  return triplets_to_csr(&t, n);
}

/* ---- the reference ---- */

static uint32_t priority(uint32_t i) {
  i ^= i >> 16;
  i *= 0x85ebca6bu;
  i ^= i >> 13;
  i *= 0xc2b2ae35u;
  i ^= i >> 16;
  return i;
}

static int strong(const clmg_csr *a, const double *s, double theta, size_t i, int64_t k) {
  double v = fabs(a->val[k]);
  return (size_t)a->col[k] != i && v > 0 && v >= theta * s[i] * s[a->col[k]];
}

/* Nodes within `distance` strong edges of i (a breadth-first walk),
 * marked with mark in seen; the walk's nodes in list, *count of them. */
static void neighbourhood(const clmg_csr *a, const double *s, double theta, size_t i, int distance,
                          int32_t *seen, int32_t mark, int32_t *list, size_t *count) {
  size_t head = 0, tail = 0;
  list[tail++] = (int32_t)i;
  seen[i] = mark;
  for (int d = 0; d < distance; ++d) {
    size_t end = tail;
    for (; head < end; ++head) {
      size_t v = (size_t)list[head];
      for (int64_t k = a->row_ptr[v]; k < a->row_ptr[v + 1]; ++k)
        if (strong(a, s, theta, v, k) && seen[a->col[k]] != mark) {
          seen[a->col[k]] = mark;
          list[tail++] = a->col[k];
        }
    }
  }
  *count = tail;
}

static int by_priority(const void *x, const void *y) {
  uint32_t p = priority((uint32_t) * (const int32_t *)x),
           q = priority((uint32_t) * (const int32_t *)y);
  return p < q ? 1 : p > q ? -1 : 0;
}

/* The aggregates by the definition; returns their count. Checks on the way
 * that the roots are independent and maximal at `distance`. */
static size_t reference(const clmg_csr *a, double theta, int distance, int32_t *aggregate) {
  size_t n = a->rows;
  double *s = malloc(n * sizeof *s);
  int32_t *order = malloc(n * sizeof *order), *seen = malloc(n * sizeof *seen);
  int32_t *list = malloc(n * sizeof *list), *next = malloc(n * sizeof *next);
  int32_t *excluded = calloc(n, sizeof *excluded), *number = malloc(n * sizeof *number);
  assert_true(s && order && seen && list && next && excluded && number);
  for (size_t i = 0; i < n; ++i) {
    s[i] = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      if ((size_t)a->col[k] == i)
        s[i] = sqrt(fabs(a->val[k]));
    order[i] = (int32_t)i;
    seen[i] = -1;
    aggregate[i] = -1;
  }
  qsort(order, n, sizeof *order, by_priority);
  /* greedy in descending priority; nodes without strong edges are never
   * roots */
  for (size_t t = 0; t < n; ++t) {
    size_t i = (size_t)order[t], count = 0;
    int isolated = 1;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1] && isolated; ++k)
      isolated = !strong(a, s, theta, i, k);
    if (excluded[i] || isolated)
      continue;
    aggregate[i] = (int32_t)i;
    neighbourhood(a, s, theta, i, distance, seen, (int32_t)i, list, &count);
    for (size_t m = 0; m < count; ++m) {
      if (list[m] != (int32_t)i && aggregate[list[m]] == list[m])
        fail_msg("roots %d and %zu lie within %d strong edges", list[m], i, distance);
      excluded[list[m]] = 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    int isolated = 1;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1] && isolated; ++k)
      isolated = !strong(a, s, theta, i, k);
    if (!isolated && !excluded[i])
      fail_msg("node %zu is further than %d strong edges from every root", i, distance);
  }
  /* joining sweeps, each from the state before it */
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t i = 0; i < n; ++i) {
      next[i] = aggregate[i];
      if (aggregate[i] >= 0)
        continue;
      int32_t best = -1;
      int best_weight = 0;
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
        int32_t c = strong(a, s, theta, i, k) ? aggregate[a->col[k]] : -1;
        if (c < 0)
          continue;
        int weight = 0;
        for (int64_t m = a->row_ptr[i]; m < a->row_ptr[i + 1]; ++m)
          weight += strong(a, s, theta, i, m) && aggregate[a->col[m]] == c;
        if (weight > best_weight || (weight == best_weight && c < best)) {
          best = c;
          best_weight = weight;
        }
      }
      if (best >= 0) {
        next[i] = best;
        changed = 1;
      }
    }
    memcpy(aggregate, next, n * sizeof *aggregate);
  }
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    number[i] = -1;
  for (size_t i = 0; i < n; ++i)
    if (aggregate[i] >= 0) {
      if (number[aggregate[i]] < 0)
        number[aggregate[i]] = (int32_t)count++;
      aggregate[i] = number[aggregate[i]];
    }
  free(s);
  free(order);
  free(seen);
  free(list);
  free(next);
  free(excluded);
  free(number);
  return count;
}

/* ---- tests ---- */

static void test_parallel_roots_reference(void **state) {
  (void)state;
  clmg_error error = {{0}};
  for (int trial = 0; trial < 6; ++trial) {
    size_t n = trial < 3 ? 300 : 5000;
    clmg_csr a = random_spd(n, 10, trial % 2 ? 0.3 : 0.0, n / 3);
    for (int distance = 1; distance <= 3; ++distance)
      for (int t = 0; t < 2; ++t) {
        double theta = t ? 0.25 : 0.0;
        clmg_amg_options options;
        clmg_amg_options_defaults(&options);
        options.roots = CLMG_AMG_ROOTS_PARALLEL;
        options.root_distance = distance;
        options.strength_threshold = theta;
        int32_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
        assert_non_null(got);
        assert_non_null(want);
        size_t count = 0;
        CHECK_HOST(clmg_amg_aggregate(&a, &options, got, &count, &error), error);
        size_t expected = reference(&a, theta, distance, want);
        if (count != expected)
          fail_msg("n %zu distance %d theta %g: %zu aggregates, the reference %zu", n, distance,
                   theta, count, expected);
        for (size_t i = 0; i < n; ++i)
          if (got[i] != want[i])
            fail_msg("n %zu distance %d theta %g: row %zu in aggregate %d, the reference %d", n,
                     distance, theta, i, got[i], want[i]);
        assert_int_equal(got[n / 3], -1); /* the identity row */
        free(got);
        free(want);
      }
    clmg_csr_free(&a);
  }
}

/* The device hierarchy against the host's, level by level: A (the copy on
 * the host and the device arrays), P and the patches. */
static void compare_hierarchies(const clmg_csr *a, const clmg_amg_options *options,
                                const char *what) {
  clmg_error error = {{0}};
  clmg_amg_hierarchy host = {0}, device = {0};
  CHECK_HOST(clmg_amg_hierarchy_build(a, options, &host, &error), error);
  CHECK_HOST(clmg_amg_hierarchy_build_device(ctx, a, options, &device, &error), error);
  print_message("%-36s n %6zu: %d levels, coarsest %zu rows\n", what, a->rows, host.num_levels,
                host.a[0].rows);
  assert_int_equal(device.num_levels, host.num_levels);
  assert_true(host.num_levels >= 2);
  for (int l = 0; l < host.num_levels; ++l) {
    test_check_same_csr(&device.a[l], &host.a[l], 1e-11, what, l);
    clmg_csr copy = {0};
    CHECK_HOST(clmg_csr_device_download(&device.device_a[l], &copy, &error), error);
    test_check_same_csr(&copy, &host.a[l], 1e-11, what, l);
    clmg_csr_free(&copy);
    if (l > 0) {
      CHECK_HOST(clmg_csr_device_download(&device.device_p[l], &copy, &error), error);
      test_check_same_csr(&copy, &host.p[l], 1e-11, what, l);
      clmg_csr_free(&copy);
      assert_memory_equal(device.patch[l], host.patch[l], host.a[l].rows * sizeof(int32_t));
    }
  }
  clmg_amg_hierarchy_free(&host);
  clmg_amg_hierarchy_free(&device);
}

static void test_device_hierarchy(void **state) {
  (void)state;
  if (!clmg_context_device(ctx)->has_fp64)
    skip(); /* entry for entry needs the host's precision */
  for (int trial = 0; trial < 5; ++trial) {
    /* the last: rows of about 40 entries and roots 2 apart, so nodes that
     * border more aggregates than the joining kernel's table holds */
    size_t n = trial < 2 ? 4000 : trial < 4 ? 12000 : 3000;
    clmg_csr a = random_spd(n, trial < 4 ? 12 : 40, trial % 2 ? 0.25 : 0.0, 17);
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.roots = CLMG_AMG_ROOTS_PARALLEL;
    options.strength_threshold = trial == 2 || trial == 3 ? 0.1 : 0.0;
    options.coarse_rows = 50;
    if (trial == 4)
      options.root_distance = options.coarse_root_distance = 1;
    char what[64];
    snprintf(what, sizeof what, "random SPD, theta %.2f, %s%s", options.strength_threshold,
             trial % 2 ? "positive entries" : "M-matrix", trial == 4 ? ", dense rows" : "");
    compare_hierarchies(&a, &options, what);
    clmg_csr_free(&a);
  }
}

/* Several unknowns per node (the node matrix, its strength and aggregates
 * on the device, the rows' aggregates read back): the device hierarchy
 * against the host's with parallel roots, entry for entry, on random
 * matrices read in blocks of 2 and 3 (the aggregates' dissolving below a
 * least size and below the fit's need of nodes included), and on P1
 * elasticity with its rigid-body modes. */
static void test_device_block_hierarchy(void **state) {
  (void)state;
  if (!clmg_context_device(ctx)->has_fp64)
    skip(); /* entry for entry needs the host's precision */
  for (int trial = 0; trial < 5; ++trial) {
    int block = trial % 2 ? 2 : 3;
    size_t n = trial < 4 ? 3600 : 2400;
    clmg_csr a = random_spd(n, trial == 1 ? 30 : 12, trial % 3 == 1 ? 0.25 : 0.0, 17);
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.roots = CLMG_AMG_ROOTS_PARALLEL;
    options.block_size = block;
    options.strength_threshold = trial == 2 || trial == 3 ? 0.1 : 0.0;
    options.coarse_rows = 50;
    if (trial == 3)
      options.min_aggregate_size = 4;
    double *candidates = NULL;
    if (trial == 4) {
      /* six candidates on nodes of three: aggregates of one node dissolved */
      options.num_candidates = 6;
      candidates = malloc(6 * n * sizeof *candidates);
      assert_non_null(candidates);
      for (size_t k = 0; k < 6 * n; ++k)
        candidates[k] = rng_uniform();
      options.candidates = candidates;
      options.root_distance = options.coarse_root_distance = 1;
    }
    char what[80];
    snprintf(what, sizeof what, "blocks of %d, theta %.2f%s%s%s", block, options.strength_threshold,
             trial == 3 ? ", min size 4" : "", trial == 4 ? ", 6 candidates" : "",
             trial == 5 ? ", a row out of order" : "");
    compare_hierarchies(&a, &options, what);
    free(candidates);
    clmg_csr_free(&a);
  }
  clmg_spd_problem_options po;
  clmg_spd_problem_options_defaults(&po);
  po.kind = CLMG_SPD_ELASTICITY_P1;
  po.level = 6;
  clmg_spd_problem p = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_spd_problem_create(&po, &p, &error), error);
  double *modes = malloc(6 * p.a.rows * sizeof *modes);
  assert_non_null(modes);
  int count = 0;
  CHECK_HOST(clmg_amg_rigid_body_modes(p.num_nodes, p.dim, p.coordinates, modes, &count, &error),
             error);
  for (int theta = 0; theta < 2; ++theta) {
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.roots = CLMG_AMG_ROOTS_PARALLEL;
    options.block_size = p.dim;
    options.candidates = modes;
    options.num_candidates = count;
    options.coarse_rows = 50;
    options.strength_threshold = theta ? 0.08 : 0.0;
    compare_hierarchies(&p.a, &options,
                        theta ? "P1 elasticity, modes, theta 0.08" : "P1 elasticity, modes");
  }
  free(modes);
  clmg_spd_problem_free(&p);
}

/* A row with couplings but no stored diagonal: the prolongator smoothing
 * divides by it, so the setup refuses it, on the device too. */
static void test_missing_diagonal(void **state) {
  (void)state;
  clmg_csr a = random_spd(500, 8, 0.0, 500);
  size_t row = 123;
  /* drop row 123's diagonal entry */
  int64_t at = -1;
  for (int64_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k)
    if ((size_t)a.col[k] == row)
      at = k;
  assert_true(at >= 0);
  size_t nnz = clmg_csr_nnz(&a);
  memmove(&a.col[at], &a.col[at + 1], (nnz - (size_t)at - 1) * sizeof *a.col);
  memmove(&a.val[at], &a.val[at + 1], (nnz - (size_t)at - 1) * sizeof *a.val);
  for (size_t i = row + 1; i <= a.rows; ++i)
    a.row_ptr[i]--;
  clmg_amg_options options;
  clmg_amg_options_defaults(&options);
  options.roots = CLMG_AMG_ROOTS_PARALLEL;
  clmg_amg_hierarchy h = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_amg_hierarchy_build_device(ctx, &a, &options, &h, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "row 124 does not store its diagonal entry");
  assert_int_equal(clmg_amg_hierarchy_build(&a, &options, &h, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "does not store its diagonal entry");
  /* in nodes of two unknowns (aggregated on the device by node) too */
  options.block_size = 2;
  assert_int_equal(clmg_amg_hierarchy_build_device(ctx, &a, &options, &h, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "row 124 does not store its diagonal entry");
  assert_int_equal(clmg_amg_hierarchy_build(&a, &options, &h, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "row 124 does not store its diagonal entry");
  clmg_csr_free(&a);
}

/* clmg_amg_options.times: every phase counted, none negative, the total at
 * least their sum, and the engine the same as without it. */
static void test_setup_times(void **state) {
  (void)state;
  clmg_csr a = random_spd(6000, 10, 0.0, 6000);
  for (int roots = CLMG_AMG_ROOTS_ORDERED; roots <= CLMG_AMG_ROOTS_PARALLEL; ++roots) {
    clmg_amg_setup_times times;
    memset(&times, 0xff, sizeof times); /* zeroed by the setup */
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.roots = (clmg_amg_roots)roots;
    clmg_multigrid *plain = NULL, *timed = NULL;
    CHECK_OK(clmg_amg_multigrid_create(ctx, &a, &options, NULL, NULL, &plain));
    options.times = &times;
    CHECK_OK(clmg_amg_multigrid_create(ctx, &a, &options, NULL, NULL, &timed));
    assert_int_equal(clmg_multigrid_levels(plain), clmg_multigrid_levels(timed));
    for (int l = 0; l < clmg_multigrid_levels(plain); ++l)
      assert_int_equal(clmg_matrix_nnz(clmg_multigrid_matrix(plain, l)),
                       clmg_matrix_nnz(clmg_multigrid_matrix(timed, l)));
    const double phases[] = {times.upload_s,  times.strength_s,    times.aggregate_s,
                             times.fit_s,     times.prolongator_s, times.galerkin_s,
                             times.patches_s, times.engine_s};
    double sum = 0;
    for (size_t p = 0; p < sizeof phases / sizeof *phases; ++p) {
      assert_true(phases[p] >= 0 && phases[p] < 60);
      sum += phases[p];
    }
    assert_true(times.aggregate_s > 0 && times.galerkin_s > 0 && times.engine_s > 0);
    assert_true(times.total_s >= sum * (1 - 1e-9) && times.total_s < 60);
    print_message("%s roots: setup %.4f s (aggregation %.4f, Galerkin %.4f, engine %.4f)\n",
                  roots == CLMG_AMG_ROOTS_PARALLEL ? "parallel" : "ordered", times.total_s,
                  times.aggregate_s, times.galerkin_s, times.engine_s);
    clmg_multigrid_destroy(plain);
    clmg_multigrid_destroy(timed);
  }
  clmg_csr_free(&a);
}

/* A solver's AMG on the device path (forced on this CPU) takes the finest
 * level from the solver's device matrix: its CSR arrays instead of a second
 * upload, the matrix itself as the engine's finest operator. The hierarchy
 * is the one clmg_amg_multigrid_create makes from the host matrix alone,
 * and CG with it solves A x = b. */
static void solver_shares_finest(clmg_matrix_format format, const char *params,
                                 const char *solver_options) {
  clmg_context *device_ctx = NULL;
  assert_int_equal(test_open_context_params(&device_ctx, params, "amg_parallel shared finest", 1),
                   0);
  clmg_csr a = random_spd(5000, 9, 0.0, 5000);
  clmg_matrix_options csr;
  clmg_matrix_options_defaults(&csr);
  csr.format = format;
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(device_ctx, &a, &csr, &matrix));
  clmg_options *options = NULL;
  clmg_error error = {{0}};
  assert_int_equal(clmg_options_create(&options, &error), CLMG_SUCCESS);
  assert_int_equal(clmg_options_parse(options, solver_options, &error), CLMG_SUCCESS);
  clmg_solver *solver = NULL;
  CHECK_OK(clmg_solver_create_device(device_ctx, matrix, NULL, &a, 1, options, &solver));
  clmg_multigrid *shared = clmg_solver_multigrid(solver);
  assert_non_null(shared);
  int levels = clmg_multigrid_levels(shared);
  assert_true(levels >= 2);
  /* the finest operator is the solver's matrix, not a copy */
  assert_ptr_equal(clmg_multigrid_matrix(shared, levels - 1), matrix);
  clmg_multigrid_options mg;
  clmg_multigrid_options_defaults(&mg);
  mg.pre_smoothing = mg.post_smoothing = 2;
  mg.matrix = csr;
  clmg_multigrid *alone = NULL;
  CHECK_OK(clmg_amg_multigrid_create(device_ctx, &a, NULL, &mg, NULL, &alone));
  assert_int_equal(clmg_multigrid_levels(alone), levels);
  for (int l = 0; l < levels; ++l)
    assert_int_equal(clmg_matrix_nnz(clmg_multigrid_matrix(alone, l)),
                     clmg_matrix_nnz(clmg_multigrid_matrix(shared, l)));
  /* b = A x* for a known x*: the solve reaches it */
  double *x_true = malloc(a.rows * sizeof *x_true), *b = malloc(a.rows * sizeof *b);
  double *x = malloc(a.rows * sizeof *x);
  assert_true(x_true && b && x);
  for (size_t i = 0; i < a.rows; ++i)
    x_true[i] = sin(0.01 * (double)i) + 1.0;
  clmg_csr_spmv_host(1.0, &a, x_true, 0.0, b);
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(device_ctx, CLMG_DOUBLE, a.rows, &db));
  CHECK_OK(clmg_vector_create(device_ctx, CLMG_DOUBLE, a.rows, &dx));
  CHECK_OK(clmg_vector_upload_doubles(db, b));
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_solver_solve(solver, db, dx, &result));
  assert_true(result.converged);
  CHECK_OK(clmg_vector_download_doubles(dx, x));
  double error_max = 0;
  for (size_t i = 0; i < a.rows; ++i)
    error_max = fmax(error_max, fabs(x[i] - x_true[i]));
  assert_true(error_max < 1e-5);
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  free(x_true);
  free(b);
  free(x);
  clmg_multigrid_destroy(alone);
  clmg_solver_destroy(solver);
  clmg_options_destroy(options);
  clmg_matrix_destroy(matrix);
  clmg_csr_free(&a);
  assert_int_equal(test_close_context(&device_ctx), 0);
}

static void test_solver_shares_finest(void **state) {
  (void)state;
  solver_shares_finest(CLMG_FORMAT_CSR, "amg_setup_on_device=1,cpu_kernels=0",
                       "krylov=cg precond=amg mg.smoother=jacobi mg.steps=2 format=csr tol=1e-8 "
                       "maxit=500");
  /* a SELL matrix laid out on the device (as on a GPU): the AMG gathers its
   * finest CSR from the kept pattern and the stored values */
  solver_shares_finest(CLMG_FORMAT_SELL,
                       "amg_setup_on_device=1,cpu_kernels=0,matrix_layout_on_device=1",
                       "krylov=cg precond=amg mg.smoother=jacobi mg.steps=2 format=sell "
                       "tol=1e-8 maxit=500");
}

/* Several unknowns per node with the setup on the device and no host
 * matrices wanted (clmg_amg_multigrid_create without patches): the coarse
 * matrices stay on the device, and each level's operator is the host
 * hierarchy's (parallel roots) within rounding, applied to a random
 * vector; AMG-CG then solves P1 elasticity with its rigid-body modes to a
 * known solution. */
static void test_device_block_multigrid(void **state) {
  (void)state;
  if (!clmg_context_device(ctx)->has_fp64)
    skip();
  clmg_context *device_ctx = NULL;
  assert_int_equal(test_open_context_params(&device_ctx, "amg_setup_on_device=1,cpu_kernels=0",
                                            "amg_parallel block multigrid", 1),
                   0);
  clmg_spd_problem_options po;
  clmg_spd_problem_options_defaults(&po);
  po.kind = CLMG_SPD_ELASTICITY_P1;
  po.level = 8;
  clmg_spd_problem p = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_spd_problem_create(&po, &p, &error), error);
  size_t n = p.a.rows;
  double *modes = malloc(6 * n * sizeof *modes);
  assert_non_null(modes);
  int count = 0;
  CHECK_HOST(clmg_amg_rigid_body_modes(p.num_nodes, p.dim, p.coordinates, modes, &count, &error),
             error);
  clmg_amg_options options;
  clmg_amg_options_defaults(&options);
  options.block_size = p.dim;
  options.candidates = modes;
  options.num_candidates = count;
  options.coarse_rows = 60;
  clmg_multigrid *mg = NULL;
  CHECK_CONTEXT_OK(device_ctx,
                   clmg_amg_multigrid_create(device_ctx, &p.a, &options, NULL, NULL, &mg));
  options.roots = CLMG_AMG_ROOTS_PARALLEL;
  clmg_amg_hierarchy host = {0};
  CHECK_HOST(clmg_amg_hierarchy_build(&p.a, &options, &host, &error), error);
  int levels = clmg_multigrid_levels(mg);
  print_message("P1 elasticity n %zu: %d levels on the device, %d on the host\n", n, levels,
                host.num_levels);
  assert_int_equal(levels, host.num_levels);
  assert_true(levels >= 3);
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  assert_true(x && y && z);
  for (int l = 0; l < levels; ++l) {
    const clmg_matrix *m = clmg_multigrid_matrix(mg, l);
    size_t rows = host.a[l].rows;
    assert_int_equal(clmg_matrix_rows(m), rows);
    for (size_t i = 0; i < rows; ++i)
      x[i] = rng_uniform();
    clmg_csr_spmv_host(1.0, &host.a[l], x, 0.0, y);
    clmg_vector *dx = NULL, *dy = NULL;
    CHECK_CONTEXT_OK(device_ctx, clmg_vector_create(device_ctx, CLMG_DOUBLE, rows, &dx));
    CHECK_CONTEXT_OK(device_ctx, clmg_vector_create(device_ctx, CLMG_DOUBLE, rows, &dy));
    CHECK_CONTEXT_OK(device_ctx, clmg_vector_upload_doubles(dx, x));
    CHECK_CONTEXT_OK(device_ctx, clmg_spmv(1.0, m, dx, 0.0, dy));
    CHECK_CONTEXT_OK(device_ctx, clmg_vector_download_doubles(dy, z));
    double diff = 0, size = 0;
    for (size_t i = 0; i < rows; ++i) {
      diff = fmax(diff, fabs(z[i] - y[i]));
      size = fmax(size, fabs(y[i]));
    }
    if (diff > 1e-11 * size)
      fail_msg("level %d: A x differs by %.3e (largest %.3e)", l, diff, size);
    clmg_vector_destroy(dx);
    clmg_vector_destroy(dy);
  }
  /* b = A x* for a known x*: AMG-CG reaches it */
  for (size_t i = 0; i < n; ++i)
    x[i] = sin(0.01 * (double)i) + 1.0;
  clmg_csr_spmv_host(1.0, &p.a, x, 0.0, y);
  clmg_matrix *a = NULL;
  CHECK_CONTEXT_OK(device_ctx, clmg_matrix_create(device_ctx, &p.a, NULL, &a));
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_CONTEXT_OK(device_ctx, clmg_vector_create(device_ctx, CLMG_DOUBLE, n, &db));
  CHECK_CONTEXT_OK(device_ctx, clmg_vector_create(device_ctx, CLMG_DOUBLE, n, &dx));
  CHECK_CONTEXT_OK(device_ctx, clmg_vector_upload_doubles(db, y));
  CHECK_CONTEXT_OK(device_ctx, clmg_vector_fill(dx, 0.0));
  clmg_preconditioner pc;
  CHECK_CONTEXT_OK(device_ctx, clmg_multigrid_preconditioner(mg, &pc));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  clmg_krylov_result result = {0};
  CHECK_CONTEXT_OK(device_ctx, clmg_cg(a, db, dx, &pc, &ko, &result));
  print_message("AMG-CG: %d iterations\n", result.iterations);
  assert_true(result.converged);
  CHECK_CONTEXT_OK(device_ctx, clmg_vector_download_doubles(dx, z));
  double error_max = 0, x_max = 0;
  for (size_t i = 0; i < n; ++i) {
    error_max = fmax(error_max, fabs(z[i] - x[i]));
    x_max = fmax(x_max, fabs(x[i]));
  }
  assert_true(error_max < 1e-5 * x_max);
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&pc);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_matrix_destroy(a);
  free(x);
  free(y);
  free(z);
  clmg_amg_hierarchy_free(&host);
  clmg_multigrid_destroy(mg);
  free(modes);
  clmg_spd_problem_free(&p);
  assert_int_equal(test_close_context(&device_ctx), 0);
}

static int setup(void **state) {
  (void)state;
  rng_seed(2012);
  return test_open_context(&ctx, NULL, "amg_parallel", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parallel_roots_reference),
      cmocka_unit_test(test_device_hierarchy),
      cmocka_unit_test(test_device_block_hierarchy),
      cmocka_unit_test(test_missing_diagonal),
      cmocka_unit_test(test_setup_times),
      cmocka_unit_test(test_solver_shares_finest),
      cmocka_unit_test(test_device_block_multigrid),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("amg_parallel", tests, setup, teardown);
}
