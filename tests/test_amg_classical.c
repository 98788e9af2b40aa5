/* Classical AMG coarsening (clmg_amg_classical_splitting and
 * clmg_amg_classical_prolongator in clmg/amg.h): the PMIS splitting's invariants (C-points
 * independent in the strength graph, every F-point with a strong
 * connection next to a C-point, the same splitting on every run and thread
 * count) on 2D and 3D Poisson, anisotropic and random SPD matrices; the
 * direct interpolation (identity C rows, constants reproduced on
 * zero-row-sum matrices, hand-computed weights of a 1D Laplacian); levels
 * built with P^T A P handed to clmg_multigrid_create as a CG
 * preconditioner on 2D / 3D Poisson and a 2D Q1 elasticity matrix (not an
 * M-matrix), checked with the true residual on the host; and the refused
 * inputs. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, strdup */
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

/* -Laplace on an nx x ny (x nz) grid, five- or seven-point, Dirichlet
 * boundary eliminated, the y couplings scaled by anisotropy. With neumann
 * the diagonal is the sum of the couplings present (zero row sums). */
static clmg_csr laplacian(size_t nx, size_t ny, size_t nz, double anisotropy, int neumann) {
  triplets t = {0};
  for (size_t l = 0; l < nz; ++l)
    for (size_t j = 0; j < ny; ++j)
      for (size_t i = 0; i < nx; ++i) {
        size_t row = (l * ny + j) * nx + i;
        double diagonal = 0;
        for (int axis = 0; axis < (nz > 1 ? 3 : 2); ++axis)
          for (int side = -1; side <= 1; side += 2) {
            long at[3] = {(long)i, (long)j, (long)l};
            at[axis] += side;
            const size_t size[3] = {nx, ny, nz};
            double weight = axis == 1 ? anisotropy : 1.0;
            if (at[axis] < 0 || at[axis] >= (long)size[axis]) {
              diagonal += neumann ? 0 : weight;
              continue;
            }
            diagonal += weight;
            triplets_add(&t, row, ((size_t)at[2] * ny + (size_t)at[1]) * nx + (size_t)at[0],
                         -weight);
          }
        triplets_add(&t, row, row, diagonal);
      }
  return triplets_to_csr(&t, nx * ny * nz);
}

/* A random symmetric matrix of about `per_row` couplings a row; couplings
 * negative in [-1, -0.1) or, with probability `positive`, positive in
 * [0.05, 0.5). zero_sum: diagonal = -(sum of the couplings), and a row
 * whose couplings do not sum below -0.1 gets a negative coupling to the
 * next row that makes them sum to -0.5 (so every diagonal is positive);
 * else the diagonal is the sum of their absolute values plus 1 (SPD, not
 * an M-matrix). */
static clmg_csr random_symmetric(size_t n, size_t per_row, double positive, int zero_sum) {
  triplets t = {0};
  double *diagonal = calloc(n, sizeof *diagonal);
  double *sum = calloc(n, sizeof *sum);
  assert_non_null(diagonal);
  assert_non_null(sum);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < per_row / 2; ++k) {
      size_t j = rng_below(n);
      if (j == i)
        continue;
      double u = 0.5 * (rng_uniform() + 1); /* [0, 1) */
      double v = u < positive ? 0.05 + 0.45 * (0.5 * (rng_uniform() + 1))
                              : -(0.1 + 0.9 * (0.5 * (rng_uniform() + 1)));
      triplets_add(&t, i, j, v);
      triplets_add(&t, j, i, v);
      diagonal[i] += fabs(v);
      diagonal[j] += fabs(v);
      sum[i] += v;
      sum[j] += v;
    }
  for (size_t i = 0; zero_sum && i < n; ++i)
    if (sum[i] > -0.1) {
      size_t j = (i + 1) % n;
      double v = -(sum[i] + 0.5);
      triplets_add(&t, i, j, v);
      triplets_add(&t, j, i, v);
      sum[i] += v;
      sum[j] += v;
    }
  for (size_t i = 0; i < n; ++i)
    triplets_add(&t, i, i, zero_sum ? -sum[i] : diagonal[i] + 1);
  free(diagonal);
  free(sum);
  return triplets_to_csr(&t, n);
}

/* Plane-strain linear elasticity (E = 1, nu = 0.3) with bilinear (Q1)
 * elements on an nx x ny grid of unit squares, two unknowns per node
 * (interleaved), the nodes of x = 0 clamped (eliminated). SPD with
 * positive off-diagonals: not an M-matrix. */
static clmg_csr elasticity(size_t nx, size_t ny) {
  const double young = 1.0, nu = 0.3;
  double f = young / ((1 + nu) * (1 - 2 * nu));
  const double d[3][3] = {
      {f * (1 - nu), f * nu, 0}, {f * nu, f * (1 - nu), 0}, {0, 0, f * (1 - 2 * nu) / 2}};
  const double corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  const double g = 1 / sqrt(3.0);
  double k[8][8] = {{0}};
  for (int gx = 0; gx < 2; ++gx)
    for (int gy = 0; gy < 2; ++gy) {
      double xi = gx ? g : -g, eta = gy ? g : -g;
      double b[3][8] = {{0}};
      for (int a = 0; a < 4; ++a) {
        /* unit square: x = (xi + 1) / 2, so d/dx = 2 d/dxi; det J = 1/4 */
        double dx = 2 * 0.25 * corner[a][0] * (1 + eta * corner[a][1]);
        double dy = 2 * 0.25 * corner[a][1] * (1 + xi * corner[a][0]);
        b[0][2 * a] = dx;
        b[1][2 * a + 1] = dy;
        b[2][2 * a] = dy;
        b[2][2 * a + 1] = dx;
      }
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c)
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q)
              k[r][c] += b[p][r] * d[p][q] * b[q][c] * 0.25;
    }
  /* unknowns: node (i, j), i >= 1, numbered ((j * nx) + i - 1) * 2 + component */
  triplets t = {0};
  for (size_t j = 0; j < ny; ++j)
    for (size_t i = 0; i < nx; ++i) {
      const size_t node[4][2] = {{i, j}, {i + 1, j}, {i + 1, j + 1}, {i, j + 1}};
      long dof[8];
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 2; ++c)
          dof[2 * a + c] =
              node[a][0] == 0 ? -1 : (long)((node[a][1] * nx + node[a][0] - 1) * 2 + (size_t)c);
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c)
          if (dof[r] >= 0 && dof[c] >= 0)
            triplets_add(&t, (size_t)dof[r], (size_t)dof[c], k[r][c]);
    }
  return triplets_to_csr(&t, 2 * nx * (ny + 1));
}

/* ---- the splitting ---- */

/* Runs the host loops of the next calls on one thread (serial) or as the
 * environment says (restores CLMG_HOST_THREADS as it was). */
static char *saved_threads;
static void host_threads_serial(int serial) {
  if (serial) {
    const char *now = getenv("CLMG_HOST_THREADS");
    free(saved_threads);
    saved_threads = now ? strdup(now) : NULL;
    assert_int_equal(setenv("CLMG_HOST_THREADS", "1", 1), 0);
  } else {
    assert_int_equal(saved_threads ? setenv("CLMG_HOST_THREADS", saved_threads, 1)
                                   : unsetenv("CLMG_HOST_THREADS"),
                     0);
    free(saved_threads);
    saved_threads = NULL;
  }
}

/* The strength graph as the file comment of classical.c defines it:
 * strong[k] for each entry k of a. */
static uint8_t *strong_entries(const clmg_csr *a, double theta) {
  uint8_t *strong = calloc(clmg_csr_nnz(a) + 1, 1);
  assert_non_null(strong);
  for (size_t i = 0; i < a->rows; ++i) {
    double largest = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      if ((size_t)a->col[k] != i && fabs(a->val[k]) > largest)
        largest = fabs(a->val[k]);
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      strong[k] =
          (size_t)a->col[k] != i && fabs(a->val[k]) > 0 && fabs(a->val[k]) >= theta * largest;
  }
  return strong;
}

typedef struct split_report {
  size_t coarse, isolated, without_strong_c;
} split_report;

/* The splitting of a: the same twice and with one host thread; C-points
 * not strongly connected (either direction); points with no strong
 * connection are F; every other F-point has a C-point within distance 2 in
 * the symmetrised strength graph. */
static split_report check_splitting(const clmg_csr *a, double theta, const char *what) {
  size_t n = a->rows, coarse = 0, again = 0, serial = 0;
  uint8_t *is_coarse = malloc(n), *second = malloc(n), *third = malloc(n);
  assert_non_null(is_coarse);
  assert_non_null(second);
  assert_non_null(third);
  clmg_error error = {{0}};
  CHECK_HOST(clmg_amg_classical_splitting(a, theta, is_coarse, &coarse, &error), error);
  CHECK_HOST(clmg_amg_classical_splitting(a, theta, second, &again, &error), error);
  host_threads_serial(1);
  CHECK_HOST(clmg_amg_classical_splitting(a, theta, third, &serial, &error), error);
  host_threads_serial(0);
  assert_int_equal(coarse, again);
  assert_int_equal(coarse, serial);
  assert_memory_equal(is_coarse, second, n);
  assert_memory_equal(is_coarse, third, n);
  size_t counted = 0;
  for (size_t i = 0; i < n; ++i)
    counted += is_coarse[i];
  assert_int_equal(counted, coarse);
  assert_true(coarse > 0 && coarse < n);

  /* the symmetrised strength graph as dense-free adjacency: strong[k] of a,
   * and the transposed pattern through a^T's strong entries */
  uint8_t *strong = strong_entries(a, theta);
  clmg_csr t = {0};
  CHECK_HOST(clmg_csr_transpose(a, &t, &error), error);
  /* strong_t[k] for entry k of a^T (row j, column i): i -> j strong in a */
  uint8_t *strong_t = calloc(clmg_csr_nnz(&t) + 1, 1);
  assert_non_null(strong_t);
  for (size_t j = 0; j < t.rows; ++j)
    for (int64_t k = t.row_ptr[j]; k < t.row_ptr[j + 1]; ++k) {
      size_t i = (size_t)t.col[k];
      for (int64_t q = a->row_ptr[i]; q < a->row_ptr[i + 1]; ++q)
        if ((size_t)a->col[q] == j)
          strong_t[k] = strong[q];
    }
  split_report report = {coarse, 0, 0};
  /* near[i]: i is C or has a C-neighbour (symmetrised graph) */
  uint8_t *near = calloc(n, 1);
  assert_non_null(near);
  for (size_t i = 0; i < n; ++i) {
    int any = 0, strong_c = 0;
    near[i] = is_coarse[i];
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      if (strong[k]) {
        any = 1;
        size_t j = (size_t)a->col[k];
        strong_c |= is_coarse[j];
        near[i] |= is_coarse[j];
        if (is_coarse[i] && is_coarse[j])
          fail_msg("%s: C-points %zu and %zu are strongly connected", what, i, j);
      }
    for (int64_t k = t.row_ptr[i]; k < t.row_ptr[i + 1]; ++k)
      if (strong_t[k]) {
        any = 1;
        near[i] |= is_coarse[t.col[k]];
      }
    if (!any) {
      report.isolated++;
      if (is_coarse[i])
        fail_msg("%s: point %zu has no strong connection but is a C-point", what, i);
    } else if (!is_coarse[i] && !strong_c) {
      report.without_strong_c++;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (is_coarse[i] || near[i])
      continue;
    int found = 0, any = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1] && !found; ++k)
      if (strong[k]) {
        any = 1;
        found = near[a->col[k]];
      }
    for (int64_t k = t.row_ptr[i]; k < t.row_ptr[i + 1] && !found; ++k)
      if (strong_t[k]) {
        any = 1;
        found = near[t.col[k]];
      }
    if (any && !found)
      fail_msg("%s: F-point %zu has no C-point within distance 2", what, i);
  }
  print_message("%-36s n %6zu: %6zu C-points (%.3f), %zu isolated, %zu F without strong C\n", what,
                n, coarse, (double)coarse / (double)n, report.isolated, report.without_strong_c);
  free(near);
  free(strong_t);
  clmg_csr_free(&t);
  free(strong);
  free(is_coarse);
  free(second);
  free(third);
  return report;
}

/* P from the same splitting: C rows identity rows in order; P the same on
 * every run and with one host thread. Returns P. */
static clmg_csr checked_prolongator(const clmg_csr *a, double theta, const char *what) {
  size_t n = a->rows, coarse = 0, again = 0, split_count = 0;
  clmg_csr p = {0}, q = {0};
  clmg_error error = {{0}};
  uint8_t *is_coarse = malloc(n);
  assert_non_null(is_coarse);
  CHECK_HOST(clmg_amg_classical_splitting(a, theta, is_coarse, &split_count, &error), error);
  CHECK_HOST(clmg_amg_classical_prolongator(a, theta, &p, &coarse, &error), error);
  host_threads_serial(1);
  CHECK_HOST(clmg_amg_classical_prolongator(a, theta, &q, &again, &error), error);
  host_threads_serial(0);
  assert_int_equal(coarse, split_count);
  assert_int_equal(coarse, again);
  assert_int_equal(p.rows, n);
  assert_int_equal(p.cols, coarse);
  assert_memory_equal(p.row_ptr, q.row_ptr, (n + 1) * sizeof *p.row_ptr);
  assert_memory_equal(p.col, q.col, clmg_csr_nnz(&p) * sizeof *p.col);
  assert_memory_equal(p.val, q.val, clmg_csr_nnz(&p) * sizeof *p.val);
  size_t rank = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int64_t k = p.row_ptr[i] + 1; k < p.row_ptr[i + 1]; ++k)
      assert_true(p.col[k] > p.col[k - 1]); /* sorted, unique */
    if (is_coarse[i]) {
      if (!(p.row_ptr[i + 1] - p.row_ptr[i] == 1 && p.col[p.row_ptr[i]] == (int32_t)rank &&
            p.val[p.row_ptr[i]] == 1.0))
        fail_msg("%s: C-point %zu (column %zu) has no identity row", what, i, rank);
      rank++;
    }
  }
  free(is_coarse);
  clmg_csr_free(&q);
  return p;
}

/* The rows of P against a dense reference of the formulas in classical.c's
 * comment, computed here row by row from the splitting: direct
 * interpolation, or for an F-point with no strong C-neighbour the row with
 * its strong F-neighbours eliminated. Returns the F rows without a strong
 * C-neighbour. */
static size_t check_weights(const clmg_csr *a, double theta, const clmg_csr *p, const char *what) {
  size_t n = a->rows, coarse = 0, extended = 0;
  clmg_error error = {{0}};
  uint8_t *is_coarse = malloc(n), *interpolatory = calloc(n, 1);
  double *row = calloc(n, sizeof *row);
  int32_t *rank = malloc(n * sizeof *rank);
  assert_non_null(is_coarse);
  assert_non_null(interpolatory);
  assert_non_null(row);
  assert_non_null(rank);
  CHECK_HOST(clmg_amg_classical_splitting(a, theta, is_coarse, &coarse, &error), error);
  for (size_t i = 0, r = 0; i < n; ++i)
    rank[i] = is_coarse[i] ? (int32_t)r++ : -1;
  uint8_t *strong = strong_entries(a, theta);
  for (size_t i = 0; i < n; ++i) {
    if (is_coarse[i])
      continue;
    memset(row, 0, n * sizeof *row);
    memset(interpolatory, 0, n);
    int has_c = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      row[a->col[k]] = a->val[k];
      if (strong[k] && is_coarse[a->col[k]])
        has_c = interpolatory[a->col[k]] = 1;
    }
    if (!has_c) {
      extended++;
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
        size_t m = (size_t)a->col[k];
        double a_mm = 0;
        for (int64_t q = a->row_ptr[m]; q < a->row_ptr[m + 1]; ++q)
          if ((size_t)a->col[q] == m)
            a_mm = a->val[q];
        if (!strong[k] || a_mm <= 0)
          continue;
        double factor = a->val[k] / a_mm;
        for (int64_t q = a->row_ptr[m]; q < a->row_ptr[m + 1]; ++q) {
          row[a->col[q]] -= factor * a->val[q];
          if (strong[q] && is_coarse[a->col[q]])
            interpolatory[a->col[q]] = 1;
        }
        row[m] = 0;
      }
    }
    double diagonal = row[i], negative = 0, positive = 0, c_negative = 0, c_positive = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i)
        continue;
      negative += row[j] < 0 ? row[j] : 0;
      positive += row[j] > 0 ? row[j] : 0;
      c_negative += interpolatory[j] && row[j] < 0 ? row[j] : 0;
      c_positive += interpolatory[j] && row[j] > 0 ? row[j] : 0;
    }
    double alpha = 0, beta = 0;
    int empty = 0;
    if (c_negative < 0) {
      if (c_positive > 0)
        beta = positive / c_positive;
      else
        diagonal += positive;
      alpha = negative / c_negative;
    } else if (c_positive > 0) {
      alpha = beta = (negative + positive) / c_positive;
    } else {
      empty = 1;
    }
    empty |= !(diagonal > 0);
    int64_t k = p->row_ptr[i];
    for (size_t j = 0; j < n && !empty; ++j) {
      if (!interpolatory[j] || row[j] == 0)
        continue;
      double w = -(row[j] < 0 ? alpha : beta) * row[j] / diagonal;
      if (fabs(w) <= 1e-14)
        continue;
      if (!(k < p->row_ptr[i + 1] && p->col[k] == rank[j] &&
            fabs(p->val[k] - w) <= 1e-12 * (1 + fabs(w))))
        fail_msg("%s: row %zu (%s) of P differs from the formula at point %zu: %g", what, i,
                 has_c ? "direct" : "extended", j, w);
      k++;
    }
    if (k != p->row_ptr[i + 1])
      fail_msg("%s: row %zu of P has %lld entries more than the formula", what, i,
               (long long)(p->row_ptr[i + 1] - k));
  }
  free(strong);
  free(is_coarse);
  free(interpolatory);
  free(row);
  free(rank);
  return extended;
}

static void test_splitting(void **state) {
  (void)state;
  clmg_csr poisson = laplacian(40, 40, 1, 1.0, 0);
  clmg_csr cube = laplacian(14, 14, 14, 1.0, 0);
  clmg_csr anisotropic = laplacian(40, 40, 1, 0.01, 0);
  clmg_csr random = random_symmetric(3000, 8, 0.3, 0);
  clmg_csr solid = elasticity(16, 16);
  split_report r = check_splitting(&poisson, 0.25, "2D Poisson, theta 0.25");
  /* a 5-point Laplacian: PMIS keeps well under half the points */
  assert_true(r.coarse < poisson.rows / 2 && r.coarse > poisson.rows / 8);
  assert_int_equal(r.without_strong_c, 0); /* S is symmetric here */
  check_splitting(&cube, 0.25, "3D Poisson, theta 0.25");
  r = check_splitting(&anisotropic, 0.25, "2D anisotropic 1 : 0.01, theta 0.25");
  /* strong couplings only along x: lines coarsened on their own, about
   * every other point C */
  assert_true(r.coarse > anisotropic.rows / 4);
  r = check_splitting(&random, 0.25, "random SPD (not M), theta 0.25");
  check_splitting(&random, 0.5, "random SPD (not M), theta 0.5");
  check_splitting(&solid, 0.25, "2D Q1 elasticity, theta 0.25");
  /* more rows than one range of the host loops (8,192): on several cores,
   * the same splitting and P as on one */
  clmg_csr large = laplacian(28, 28, 28, 1.0, 0);
  check_splitting(&large, 0.25, "3D Poisson 28^3, theta 0.25");
  clmg_csr p = checked_prolongator(&large, 0.25, "3D Poisson 28^3");
  clmg_csr_free(&p);
  clmg_csr_free(&large);
  p = checked_prolongator(&random, 0.25, "random SPD");
  assert_true(check_weights(&random, 0.25, &p, "random SPD") > 0);
  clmg_csr_free(&p);
  p = checked_prolongator(&solid, 0.25, "2D Q1 elasticity");
  check_weights(&solid, 0.25, &p, "2D Q1 elasticity");
  clmg_csr_free(&p);
  clmg_csr_free(&poisson);
  clmg_csr_free(&cube);
  clmg_csr_free(&anisotropic);
  clmg_csr_free(&random);
  clmg_csr_free(&solid);
}

/* ---- the interpolation ---- */

/* P 1 = 1 on every row of P that is not empty, and no row of a point with
 * strong connections is empty. Returns the rows checked. */
static size_t check_constants(const clmg_csr *a, double theta, const char *what) {
  clmg_csr p = checked_prolongator(a, theta, what);
  uint8_t *strong = strong_entries(a, theta);
  size_t empty = 0;
  for (size_t i = 0; i < p.rows; ++i) {
    double sum = 0;
    for (int64_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k)
      sum += p.val[k];
    int connected = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      connected |= strong[k];
    if (p.row_ptr[i] == p.row_ptr[i + 1]) {
      empty += (size_t)connected;
      continue;
    }
    if (!(fabs(sum - 1) <= 1e-12))
      fail_msg("%s: row %zu of P sums to %.17g", what, i, sum);
  }
  print_message("%-36s n %6zu: %zu columns, %zu entries, %zu empty rows of connected points\n",
                what, p.rows, p.cols, clmg_csr_nnz(&p), empty);
  assert_int_equal(empty, 0);
  check_weights(a, theta, &p, what);
  free(strong);
  clmg_csr_free(&p);
  return a->rows;
}

static void test_constants(void **state) {
  (void)state;
  clmg_csr neumann = laplacian(30, 30, 1, 1.0, 1);
  clmg_csr neumann_3d = laplacian(10, 10, 10, 1.0, 1);
  check_constants(&neumann, 0.25, "2D Neumann Laplacian");
  check_constants(&neumann_3d, 0.25, "3D Neumann Laplacian");
  /* zero row sums with positive couplings: beta, the lumping of positive
   * couplings and the distance-two rows */
  clmg_csr mixed = random_symmetric(2000, 8, 0.2, 1);
  split_report r = check_splitting(&mixed, 0.25, "zero-sum random, theta 0.25");
  assert_true(r.without_strong_c > 0); /* the distance-two pass is exercised */
  check_constants(&mixed, 0.25, "zero-sum random, theta 0.25");
  clmg_csr_free(&neumann);
  clmg_csr_free(&neumann_3d);
  clmg_csr_free(&mixed);
}

/* The 1D Laplacian of 7 points (Dirichlet ends eliminated): tridiagonal
 * (-1, 2, -1), every coupling strong. The measures are |S^T_i| + u_i: 1 + u
 * at the ends, 2 + u inside, with u_0..u_6 = 0.883, 0.567, 0.591, 0.114,
 * 0.432, 0.387, 0.740 from the hash. First sweep: 2 (2.591 > 2.567, 2.114)
 * and 4 (2.432 > 2.114, 2.387) become C, their neighbours 1, 3, 5 F; second
 * sweep: 0 and 6, with no undecided neighbour left, become C. So C/F
 * alternate, C = {0, 2, 4, 6}, and each F-point has two C-neighbours:
 * alpha = (-1 - 1) / (-1 - 1) = 1, weights -(-1) / 2 = 1/2 each. */
static void test_one_dimensional(void **state) {
  (void)state;
  triplets t = {0};
  for (size_t i = 0; i < 7; ++i) {
    triplets_add(&t, i, i, 2.0);
    if (i > 0)
      triplets_add(&t, i, i - 1, -1.0);
    if (i < 6)
      triplets_add(&t, i, i + 1, -1.0);
  }
  clmg_csr a = triplets_to_csr(&t, 7);
  clmg_csr p = checked_prolongator(&a, 0.25, "1D Laplacian");
  const int64_t row_ptr[8] = {0, 1, 3, 4, 6, 7, 9, 10};
  const int32_t col[10] = {0, 0, 1, 1, 1, 2, 2, 2, 3, 3};
  const double val[10] = {1, 0.5, 0.5, 1, 0.5, 0.5, 1, 0.5, 0.5, 1};
  assert_int_equal(p.cols, 4);
  assert_memory_equal(p.row_ptr, row_ptr, sizeof row_ptr);
  assert_memory_equal(p.col, col, sizeof col);
  for (size_t k = 0; k < 10; ++k)
    assert_true(fabs(p.val[k] - val[k]) <= 1e-15);
  clmg_csr_free(&p);
  clmg_csr_free(&a);
}

/* ---- solving ---- */

typedef struct amg_run {
  int iterations, levels;
  double operator_complexity, grid_complexity;
} amg_run;

/* The library's classical hierarchy (clmg_amg_hierarchy_build with
 * CLMG_AMG_CLASSICAL: P by clmg_amg_classical_prolongator, A_c = P^T A P)
 * down to at most 300 rows, handed to clmg_multigrid_create with Jacobi
 * 2+2; one V-cycle preconditions CG on A x = b, b = A x* for a random x*;
 * the true residual is checked on the host. */
static amg_run solve_classical(const clmg_csr *a, double theta, const char *what) {
  clmg_amg_options o;
  clmg_amg_options_defaults(&o);
  o.coarsening = CLMG_AMG_CLASSICAL;
  o.classical_threshold = theta;
  o.coarse_rows = 300;
  clmg_amg_hierarchy h = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_amg_hierarchy_build(a, &o, &h, &error), error);
  size_t total = 0, rows_total = 0;
  for (int l = 0; l < h.num_levels; ++l) {
    total += clmg_csr_nnz(&h.a[l]);
    rows_total += h.a[l].rows;
  }
  amg_run run = {0, h.num_levels, (double)total / (double)clmg_csr_nnz(a),
                 (double)rows_total / (double)a->rows};
  size_t n = a->rows;
  double *x_star = malloc(n * sizeof *x_star), *b = malloc(n * sizeof *b);
  assert_non_null(x_star);
  assert_non_null(b);
  for (size_t i = 0; i < n; ++i)
    x_star[i] = rng_uniform();
  clmg_csr_spmv_host(1.0, a, x_star, 0.0, b);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, h.num_levels, h.a, h.p, NULL, &options, &mg));
  clmg_preconditioner cycle;
  CHECK_OK(clmg_multigrid_preconditioner(mg, &cycle));
  double relative_error = 0;
  clmg_status status = test_solve_checked(ctx, a, b, x_star, CLMG_KRYLOV_CG, &cycle, 1e-8, 300,
                                          what, &run.iterations, &relative_error);
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", what, clmg_status_string(status), clmg_context_message(ctx));
  print_message("%-36s n %6zu: %d levels, complexity %.2f (grid %.2f), %3d CG iterations, "
                "error %.1e\n",
                what, n, run.levels, run.operator_complexity, run.grid_complexity, run.iterations,
                relative_error);
  clmg_preconditioner_destroy(&cycle);
  clmg_multigrid_destroy(mg);
  clmg_amg_hierarchy_free(&h);
  free(x_star);
  free(b);
  return run;
}

static void test_pcg(void **state) {
  (void)state;
  clmg_csr poisson = laplacian(64, 64, 1, 1.0, 0);
  clmg_csr cube = laplacian(16, 16, 16, 1.0, 0);
  clmg_csr anisotropic = laplacian(64, 64, 1, 0.01, 0);
  clmg_csr solid = elasticity(32, 32);
  amg_run run = solve_classical(&poisson, 0.25, "2D Poisson 64^2, theta 0.25");
  assert_true(run.levels >= 3);
  assert_true(run.iterations <= 18);
  assert_true(run.operator_complexity < 2.0);
  run = solve_classical(&cube, 0.25, "3D Poisson 16^3, theta 0.25");
  assert_true(run.iterations <= 14);
  assert_true(run.operator_complexity < 2.5);
  run = solve_classical(&anisotropic, 0.25, "2D anisotropic 64^2, theta 0.25");
  assert_true(run.iterations <= 18);
  run = solve_classical(&solid, 0.25, "2D Q1 elasticity 32^2, theta 0.25");
  /* scalar AMG on a system, Jacobi smoothing: many more */
  assert_true(run.iterations <= 70);
  clmg_csr_free(&poisson);
  clmg_csr_free(&cube);
  clmg_csr_free(&anisotropic);
  clmg_csr_free(&solid);
}

/* ---- refused and degenerate inputs ---- */

static void test_errors(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_csr a = laplacian(4, 4, 1, 1.0, 0), p = {0};
  size_t coarse = 7;
  uint8_t is_coarse[16];
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(NULL, 0.25, &p, &coarse, &error));
  CHECK_CONTAINS(error.message, "missing");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(&a, 0.25, NULL, &coarse, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(&a, 0.25, &p, NULL, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_splitting(&a, 0.25, NULL, &coarse, &error));
  CHECK_CONTAINS(error.message, "NULL");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(&a, 1.5, &p, &coarse, &error));
  CHECK_CONTAINS(error.message, "threshold");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(&a, NAN, &p, &coarse, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_splitting(&a, -0.1, is_coarse, &coarse, &error));
  assert_null(p.row_ptr);

  /* not square: the rows of a with one column fewer */
  clmg_csr rectangle = a;
  rectangle.cols = a.cols - 1;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(&rectangle, 0.25, &p, &coarse, &error));
  CHECK_CONTAINS(error.message, "square");
  /* a value that is not finite */
  a.val[5] = NAN;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_amg_classical_prolongator(&a, 0.25, &p, &coarse, &error));
  CHECK_CONTAINS(error.message, "not finite");
  assert_null(p.row_ptr);
  assert_int_equal(coarse, 0);
  clmg_csr_free(&a);

  /* a diagonal matrix: no strong connection, all F, no coarsening, P of
   * empty rows */
  triplets t = {0};
  for (size_t i = 0; i < 5; ++i)
    triplets_add(&t, i, i, 1.0 + (double)i);
  clmg_csr diagonal = triplets_to_csr(&t, 5);
  coarse = 7;
  CHECK_HOST(clmg_amg_classical_prolongator(&diagonal, 0.25, &p, &coarse, &error), error);
  assert_int_equal(coarse, 0);
  assert_int_equal(p.rows, 5);
  assert_int_equal(p.cols, 0);
  assert_int_equal(clmg_csr_nnz(&p), 0);
  clmg_csr_free(&p);
  clmg_csr_free(&diagonal);

  /* the empty matrix */
  clmg_csr empty = {0};
  int64_t zero = 0;
  empty.row_ptr = &zero;
  CHECK_HOST(clmg_amg_classical_prolongator(&empty, 0.25, &p, &coarse, &error), error);
  assert_int_equal(coarse, 0);
  assert_int_equal(p.rows, 0);
  clmg_csr_free(&p);
}

static int setup(void **state) {
  (void)state;
  rng_seed(2006);
  return test_open_context(&ctx, NULL, "amg_classical", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_splitting),       cmocka_unit_test(test_constants),
      cmocka_unit_test(test_one_dimensional), cmocka_unit_test(test_pcg),
      cmocka_unit_test(test_errors),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("amg_classical", tests, setup, teardown);
}
