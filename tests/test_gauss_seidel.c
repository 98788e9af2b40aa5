/* Tests of the multicolour Gauss-Seidel smoother (clmg_smoother_gauss_seidel,
 * lib/solve/smoothers/gauss_seidel.c): the Jones-Plassmann colours are valid
 * and deterministic on symmetric and nonsymmetric patterns and few on grid
 * stencils; the device sweeps equal the host reference in double and float,
 * forward and symmetric, from a zero guess or not, after new values too;
 * the symmetric smoother's map b -> x is a symmetric matrix; as the
 * smoother of a multigrid preconditioner CG reaches a known solution of the
 * 2D Poisson problem; bad input is refused with the right status. */
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

/* ---- matrices ---- */

/* A = M^T M + 0.1 I with M = I + 3 random entries a row in [-1, 1) (columns
 * within `spread` of the row): SPD and, for most rows, not diagonally
 * dominant. */
static clmg_csr random_spd(size_t n, size_t spread) {
  size_t per_row = 4;
  int32_t *mc = malloc(n * per_row * sizeof *mc);
  double *mv = malloc(n * per_row * sizeof *mv);
  assert_non_null(mc);
  assert_non_null(mv);
  for (size_t r = 0; r < n; ++r) {
    mc[r * per_row] = (int32_t)r;
    mv[r * per_row] = 1.0;
    for (size_t k = 1; k < per_row; ++k) {
      mc[r * per_row + k] = (int32_t)((r + 1 + rng_below(spread)) % n);
      mv[r * per_row + k] = rng_uniform();
    }
  }
  triplets t = {0};
  for (size_t r = 0; r < n; ++r) /* row r of M adds m_rj m_rk to a_jk */
    for (size_t j = 0; j < per_row; ++j)
      for (size_t k = 0; k < per_row; ++k)
        triplets_add(&t, (size_t)mc[r * per_row + j], (size_t)mc[r * per_row + k],
                     mv[r * per_row + j] * mv[r * per_row + k]);
  for (size_t i = 0; i < n; ++i)
    triplets_add(&t, i, i, 0.1);
  free(mc);
  free(mv);
  return triplets_to_csr(&t, n);
}

/* A random nonsymmetric pattern: the diagonal and 5 random columns a row. */
static clmg_csr random_nonsymmetric(size_t n) {
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    triplets_add(&t, i, i, 10.0);
    for (int k = 0; k < 5; ++k)
      triplets_add(&t, i, rng_below(n), rng_uniform());
  }
  return triplets_to_csr(&t, n);
}

/* The 5-point Laplacian on an m x m grid (all nodes unknowns). */
static clmg_csr grid_5point(size_t m) {
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      size_t row = i * m + j;
      triplets_add(&t, row, row, 4.0);
      if (i > 0)
        triplets_add(&t, row, row - m, -1.0);
      if (i + 1 < m)
        triplets_add(&t, row, row + m, -1.0);
      if (j > 0)
        triplets_add(&t, row, row - 1, -1.0);
      if (j + 1 < m)
        triplets_add(&t, row, row + 1, -1.0);
    }
  return triplets_to_csr(&t, m * m);
}

/* The 27-point stencil on an m^3 grid (26 on the diagonal, -1 around). */
static clmg_csr grid_27point(size_t m) {
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j)
      for (size_t k = 0; k < m; ++k) {
        size_t row = (i * m + j) * m + k;
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            for (int dk = -1; dk <= 1; ++dk) {
              long ni = (long)i + di, nj = (long)j + dj, nk = (long)k + dk;
              if (ni < 0 || nj < 0 || nk < 0 || ni >= (long)m || nj >= (long)m || nk >= (long)m)
                continue;
              size_t col = ((size_t)ni * m + (size_t)nj) * m + (size_t)nk;
              triplets_add(&t, row, col, col == row ? 26.0 : -1.0);
            }
      }
  return triplets_to_csr(&t, m * m * m);
}

static void random_vector(double *v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    v[i] = rng_uniform();
}

static double dot(const double *u, const double *v, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i)
    sum += u[i] * v[i];
  return sum;
}

/* ---- colours ---- */

/* Every colour in [0, k) and used; no entry a_ij (i != j) joins two rows
 * of one colour. */
static void check_colouring(const clmg_csr *a, const int32_t *colour, int k, const char *what) {
  assert_true(k >= 1 || a->rows == 0);
  int *used = calloc((size_t)k + 1, sizeof *used);
  assert_non_null(used);
  for (size_t i = 0; i < a->rows; ++i) {
    if (colour[i] < 0 || colour[i] >= k)
      fail_msg("%s: row %zu has colour %d of %d", what, i, (int)colour[i], k);
    used[colour[i]] = 1;
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
      if ((size_t)a->col[e] != i && colour[a->col[e]] == colour[i])
        fail_msg("%s: rows %zu and %d couple and share colour %d", what, i, (int)a->col[e],
                 (int)colour[i]);
  }
  for (int c = 0; c < k; ++c)
    if (!used[c])
      fail_msg("%s: colour %d of %d is not used", what, c, k);
  free(used);
}

/* Colours a twice (the same result both times), checks them and returns
 * their count. */
static int colour_checked(const clmg_csr *a, const char *what) {
  int32_t *first = malloc((a->rows + 1) * sizeof *first);
  int32_t *second = malloc((a->rows + 1) * sizeof *second);
  assert_non_null(first);
  assert_non_null(second);
  int k = 0, again = 0;
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_gauss_seidel_colour(a, first, &k, &error));
  CHECK_ERROR_OK(error, clmg_gauss_seidel_colour(a, second, &again, &error));
  assert_int_equal(k, again);
  assert_memory_equal(first, second, a->rows * sizeof *first);
  check_colouring(a, first, k, what);
  free(first);
  free(second);
  return k;
}

static void test_colouring(void **state) {
  (void)state;
  clmg_csr spd = random_spd(3000, 200), nonsymmetric = random_nonsymmetric(3000);
  clmg_csr five = grid_5point(100), many = grid_27point(20);
  int k_spd = colour_checked(&spd, "random SPD");
  int k_nonsymmetric = colour_checked(&nonsymmetric, "random nonsymmetric");
  int k_five = colour_checked(&five, "2D 5-point");
  int k_many = colour_checked(&many, "3D 27-point");
  print_message("colours: 2D 5-point (100^2) %d, 3D 27-point (20^3) %d, random SPD (3000 rows, "
                "%zu entries) %d, random nonsymmetric (3000 rows, %zu entries) %d\n",
                k_five, k_many, clmg_csr_nnz(&spd), k_spd, clmg_csr_nnz(&nonsymmetric),
                k_nonsymmetric);
  /* few colours: at most the greedy bound (largest degree + 1) and close to
   * what the stencils need (2 and 8) */
  assert_true(k_five >= 2 && k_five <= 5);
  assert_true(k_many >= 8 && k_many <= 16);
  /* an empty matrix and a diagonal one */
  clmg_csr empty = {0};
  int64_t zero = 0;
  empty.row_ptr = &zero;
  int32_t none[1];
  int k = -1;
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_gauss_seidel_colour(&empty, none, &k, &error));
  assert_int_equal(k, 0);
  triplets t = {0};
  for (size_t i = 0; i < 10; ++i)
    triplets_add(&t, i, i, 1.0);
  clmg_csr diagonal = triplets_to_csr(&t, 10);
  assert_int_equal(colour_checked(&diagonal, "diagonal"), 1);
  clmg_csr_free(&diagonal);
  clmg_csr_free(&spd);
  clmg_csr_free(&nonsymmetric);
  clmg_csr_free(&five);
  clmg_csr_free(&many);
}

/* ---- the device against the host ---- */

/* max |device - host| <= tolerance * max |host|. */
static void check_close(const double *device, const double *host, size_t n, double tolerance,
                        const char *what) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    worst = fmax(worst, fabs(device[i] - host[i]));
    scale = fmax(scale, fabs(host[i]));
    if (isnan(device[i]))
      fail_msg("%s: x[%zu] is NaN", what, i);
  }
  if (!(worst <= tolerance * scale))
    fail_msg("%s: device and host differ by %.3e (largest %.3e, tolerance %.1e)", what, worst,
             scale, tolerance);
}

static void run_device_matches_host(clmg_dtype precision) {
  size_t n = 1500;
  clmg_csr a = random_spd(n, 300);
  int32_t *colour = malloc(n * sizeof *colour);
  double *b = malloc(n * sizeof *b), *x0 = malloc(n * sizeof *x0);
  double *host = malloc(n * sizeof *host), *device = malloc(n * sizeof *device);
  assert_non_null(colour);
  assert_non_null(b);
  assert_non_null(x0);
  assert_non_null(host);
  assert_non_null(device);
  random_vector(b, n);
  random_vector(x0, n);
  if (precision == CLMG_FLOAT) /* the same inputs on both sides */
    for (size_t i = 0; i < n; ++i) {
      b[i] = (double)(float)b[i];
      x0[i] = (double)(float)x0[i];
    }
  int k = 0;
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_gauss_seidel_colour(&a, colour, &k, &error));
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.precision = precision;
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &a, &options, &matrix));
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 0, &op));
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, precision, n, &db));
  CHECK_OK(clmg_vector_create(ctx, precision, n, &dx));
  CHECK_OK(clmg_vector_upload_doubles(db, b));
  double tolerance = precision == CLMG_FLOAT ? 1e-4 : 1e-12;
  const double omegas[2] = {0, 0.85}; /* 0: 1, whose repeated colours are left out */
  for (int symmetric = 0; symmetric < 2; ++symmetric)
    for (int w = 0; w < 2; ++w) {
      clmg_smoother smoother;
      CHECK_OK(clmg_smoother_gauss_seidel(ctx, &a, symmetric, omegas[w], &smoother));
      CHECK_OK(smoother.setup(smoother.data, &op));
      for (int steps = 1; steps <= 3; ++steps)
        for (int x_is_zero = 0; x_is_zero < 2; ++x_is_zero) {
          char what[160];
          snprintf(what, sizeof what, "%s, %s, omega %g, %d steps%s", clmg_dtype_name(precision),
                   symmetric ? "symmetric" : "forward", omegas[w], steps,
                   x_is_zero ? ", from zero" : "");
          if (x_is_zero) {
            memset(host, 0, n * sizeof *host);
            CHECK_OK(clmg_vector_fill(dx, NAN)); /* x is not read */
          } else {
            memcpy(host, x0, n * sizeof *host);
            CHECK_OK(clmg_vector_upload_doubles(dx, x0));
          }
          CHECK_OK(smoother.apply(smoother.data, &op, db, dx, steps, x_is_zero));
          CHECK_OK(clmg_vector_download_doubles(dx, device));
          CHECK_ERROR_OK(error, clmg_gauss_seidel_smooth_host(&a, colour, k, symmetric, omegas[w],
                                                              steps, b, host, &error));
          check_close(device, host, n, tolerance, what);
          /* the traffic model: from zero costs less, more steps more */
          double bytes = smoother.bytes(smoother.data, &op, steps, x_is_zero);
          assert_true(bytes > (double)n * steps);
          if (x_is_zero)
            assert_true(bytes < smoother.bytes(smoother.data, &op, steps, 0));
        }
      assert_true(smoother.damping(smoother.data) == (omegas[w] == 0 ? 1.0 : omegas[w]));
      clmg_smoother_destroy(&smoother);
    }
  /* new values of the same pattern: a setup (the engine's refresh) reads them */
  clmg_smoother smoother;
  CHECK_OK(clmg_smoother_gauss_seidel(ctx, &a, 1, 0.9, &smoother));
  CHECK_OK(smoother.setup(smoother.data, &op));
  for (size_t e = 0; e < clmg_csr_nnz(&a); ++e)
    a.val[e] *= a.col[e] % 3 == 0 ? 2.0 : 0.5;
  clmg_operator_destroy(&op);
  clmg_matrix_destroy(matrix);
  matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &a, &options, &matrix));
  CHECK_OK(clmg_operator_from_matrix(matrix, 0, &op));
  CHECK_OK(smoother.setup(smoother.data, &op));
  CHECK_OK(clmg_vector_upload_doubles(dx, x0));
  CHECK_OK(smoother.apply(smoother.data, &op, db, dx, 2, 0));
  CHECK_OK(clmg_vector_download_doubles(dx, device));
  memcpy(host, x0, n * sizeof *host);
  CHECK_ERROR_OK(error, clmg_gauss_seidel_smooth_host(&a, colour, k, 1, 0.9, 2, b, host, &error));
  check_close(device, host, n, tolerance, "after new values");
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_matrix_destroy(matrix);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  free(colour);
  free(b);
  free(x0);
  free(host);
  free(device);
  clmg_csr_free(&a);
}
TYPED_TESTS(device_matches_host)

/* ---- symmetry ---- */

/* y = S u: `steps` steps from x = 0 on the device (double). */
static void smoother_map(clmg_smoother *smoother, const clmg_operator *op, int steps,
                         clmg_vector *db, clmg_vector *dx, const double *u, double *y) {
  CHECK_OK(clmg_vector_upload_doubles(db, u));
  CHECK_OK(smoother->apply(smoother->data, op, db, dx, steps, 1));
  CHECK_OK(clmg_vector_download_doubles(dx, y));
}

/* |v.(S u) - u.(S v)| relative to ||v|| ||S u||. */
static double asymmetry(const clmg_csr *a, int symmetric, double omega, int steps) {
  size_t n = a->rows;
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, a, NULL, &matrix));
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op));
  clmg_smoother smoother;
  CHECK_OK(clmg_smoother_gauss_seidel(ctx, a, symmetric, omega, &smoother));
  CHECK_OK(smoother.setup(smoother.data, &op));
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &db));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
  double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
  double *su = malloc(n * sizeof *su), *sv = malloc(n * sizeof *sv);
  assert_non_null(u);
  assert_non_null(v);
  assert_non_null(su);
  assert_non_null(sv);
  random_vector(u, n);
  random_vector(v, n);
  smoother_map(&smoother, &op, steps, db, dx, u, su);
  smoother_map(&smoother, &op, steps, db, dx, v, sv);
  double result = fabs(dot(v, su, n) - dot(u, sv, n)) / sqrt(dot(v, v, n) * dot(su, su, n));
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  free(u);
  free(v);
  free(su);
  free(sv);
  return result;
}

static void test_symmetric_operator(void **state) {
  (void)state;
  clmg_csr spd = random_spd(1200, 150), five = grid_5point(40);
  const clmg_csr *matrices[2] = {&spd, &five};
  for (int m = 0; m < 2; ++m)
    for (int steps = 1; steps <= 3; steps += 2) {
      double omegas[2] = {1.0, 0.8};
      for (int w = 0; w < 2; ++w) {
        double symmetric = asymmetry(matrices[m], 1, omegas[w], steps);
        if (!(symmetric <= 1e-10))
          fail_msg("%s, omega %g, %d symmetric steps: |v.Su - u.Sv| = %.3e relative",
                   m ? "5-point" : "random SPD", omegas[w], steps, symmetric);
      }
    }
  /* the test tells: forward sweeps alone are not symmetric */
  double forward = asymmetry(&spd, 0, 1.0, 1);
  if (!(forward > 1e-4))
    fail_msg("forward Gauss-Seidel: |v.Su - u.Sv| = %.3e relative, expected asymmetry", forward);
  clmg_csr_free(&spd);
  clmg_csr_free(&five);
}

/* ---- multigrid on 2D Poisson (test_util's hand-made hierarchy) ---- */

enum { LEVELS = 6 };

typedef struct hierarchy {
  clmg_csr a[LEVELS], p[LEVELS];
  int made;
} hierarchy;

static clmg_status make_gauss_seidel(void *factory_data, clmg_context *context, int level,
                                     const clmg_operator *a, clmg_smoother *smoother) {
  (void)a;
  hierarchy *h = factory_data;
  h->made++;
  return clmg_smoother_gauss_seidel(context, &h->a[level], 1, 0, smoother);
}

static void test_multigrid_pcg(void **state) {
  (void)state;
  hierarchy h;
  memset(&h, 0, sizeof h);
  for (int l = 0; l < LEVELS; ++l) {
    h.a[l] = test_grid_laplacian(l);
    if (l > 0)
      h.p[l] = test_grid_prolongation(l);
  }
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 1;
  options.smoother_factory = make_gauss_seidel;
  options.smoother_factory_data = &h;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, LEVELS, h.a, h.p, NULL, &options, &mg));
  assert_int_equal(h.made, LEVELS - 1);
  assert_string_equal(clmg_multigrid_smoother_name(mg, LEVELS - 1), "symmetric-gauss-seidel");
  assert_true(clmg_multigrid_cycle_bytes(mg, 1) > 0);
  CHECK_OK(clmg_multigrid_refresh(mg)); /* the setup again: same values */
  const clmg_csr *fine = &h.a[LEVELS - 1];
  size_t n = fine->rows;
  double *x_star = malloc(n * sizeof *x_star), *b = malloc(n * sizeof *b);
  double *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
  assert_non_null(x_star);
  assert_non_null(b);
  assert_non_null(x);
  assert_non_null(r);
  random_vector(x_star, n);
  clmg_csr_spmv_host(1.0, fine, x_star, 0.0, b);
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &db));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
  CHECK_OK(clmg_vector_upload_doubles(db, b));
  CHECK_OK(clmg_vector_fill(dx, 0.0));
  clmg_preconditioner preconditioner;
  CHECK_OK(clmg_multigrid_preconditioner(mg, &preconditioner));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  clmg_krylov_result result;
  CHECK_OK(clmg_cg(clmg_multigrid_matrix(mg, LEVELS - 1), db, dx, &preconditioner, &ko, &result));
  assert_true(result.converged);
  CHECK_OK(clmg_vector_download_doubles(dx, x));
  /* the true residual, recomputed on the host, and the error */
  clmg_csr_spmv_host(1.0, fine, x, 0.0, r);
  double rr = 0, bb = 0, error = 0, size = 0;
  for (size_t i = 0; i < n; ++i) {
    rr += (b[i] - r[i]) * (b[i] - r[i]);
    bb += b[i] * b[i];
    error = fmax(error, fabs(x[i] - x_star[i]));
    size = fmax(size, fabs(x_star[i]));
  }
  print_message("symmetric Gauss-Seidel V(1,1)-PCG on %zu rows: %d iterations, true residual "
                "%.2e, error %.2e\n",
                n, result.iterations, sqrt(rr / bb), error / size);
  if (!(sqrt(rr / bb) <= 2e-10) || !(error <= 1e-6 * size) || result.iterations > 12)
    fail_msg("PCG: %d iterations, true relative residual %.3e, error %.3e", result.iterations,
             sqrt(rr / bb), error / size);
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&preconditioner);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_multigrid_destroy(mg);
  free(x_star);
  free(b);
  free(x);
  free(r);
  for (int l = 0; l < LEVELS; ++l) {
    clmg_csr_free(&h.a[l]);
    clmg_csr_free(&h.p[l]);
  }
}

/* ---- bad input ---- */

static void test_errors(void **state) {
  (void)state;
  triplets t = {0};
  for (size_t i = 0; i < 4; ++i) {
    triplets_add(&t, i, i, i == 2 ? 0.0 : 2.0);
    triplets_add(&t, i, (i + 1) % 4, -1.0);
  }
  clmg_csr a = triplets_to_csr(&t, 4); /* a_33 (row 3 counted from 1) stored as 0 */
  clmg_smoother smoother;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_smoother_gauss_seidel(ctx, &a, 1, 0, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "row 3 has a zero");
  assert_null(smoother.apply);
  int32_t colour[5];
  int k = 0;
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_gauss_seidel_colour(&a, colour, &k, &error));
  double b[4] = {1, 2, 3, 4}, x[4] = {0};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_gauss_seidel_smooth_host(&a, colour, k, 1, 0, 1, b, x, &error));
  CHECK_CONTAINS(error.message, "row 3");
  /* a non-finite diagonal */
  for (int64_t e = a.row_ptr[2]; e < a.row_ptr[3]; ++e)
    if (a.col[e] == 2)
      a.val[e] = NAN;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_smoother_gauss_seidel(ctx, &a, 0, 0, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "row 3");
  for (int64_t e = a.row_ptr[2]; e < a.row_ptr[3]; ++e)
    if (a.col[e] == 2)
      a.val[e] = 2.0;
  /* omega outside (0, 2) */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_smoother_gauss_seidel(ctx, &a, 1, 2.5, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "omega");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_gauss_seidel_smooth_host(&a, colour, k, 1, -1, 1, b, x, &error));
  /* a colouring that joins coupled rows */
  int32_t same[4] = {0, 0, 0, 0};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_gauss_seidel_smooth_host(&a, same, 1, 1, 0, 1, b, x, &error));
  CHECK_CONTAINS(error.message, "share colour");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_gauss_seidel_colour(&a, NULL, &k, &error));
  /* nonsquare */
  clmg_csr wide = a;
  wide.cols = 5;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_smoother_gauss_seidel(ctx, &wide, 1, 0, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "square");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_gauss_seidel_colour(&wide, colour, &k, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_smoother_gauss_seidel(ctx, NULL, 1, 0, &smoother));
  /* the operator's size differs from the smoother's matrix */
  CHECK_OK(clmg_smoother_gauss_seidel(ctx, &a, 1, 0, &smoother));
  clmg_csr other = grid_5point(3);
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &other, NULL, &matrix));
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, smoother.setup(smoother.data, &op));
  CHECK_CONTAINS(clmg_context_message(ctx), "made for 4 rows");
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, 4, &db));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, 4, &dx));
  clmg_operator_destroy(&op);
  CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &matrix));
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, smoother.apply(smoother.data, &op, db, dx, 1, 0));
  CHECK_CONTAINS(clmg_context_message(ctx), "before its setup");
  CHECK_OK(smoother.setup(smoother.data, &op));
  CHECK_OK(smoother.apply(smoother.data, &op, db, dx, 1, 0));
  /* new values with a zero diagonal: the next setup refuses them */
  for (int64_t e = a.row_ptr[1]; e < a.row_ptr[2]; ++e)
    if (a.col[e] == 1)
      a.val[e] = 0.0;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, smoother.setup(smoother.data, &op));
  CHECK_CONTAINS(clmg_context_message(ctx), "row 2 has a zero");
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_csr_free(&other);
  clmg_csr_free(&a);
}

static int setup(void **state) {
  (void)state;
  rng_seed(2001);
  return test_open_context(&ctx, NULL, "gauss_seidel", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_colouring),
      BOTH(device_matches_host),
      cmocka_unit_test(test_symmetric_operator),
      cmocka_unit_test(test_multigrid_pcg),
      cmocka_unit_test(test_errors),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("gauss_seidel", tests, setup, teardown);
}
