/* Structured grids and HOMG: every kernel of cl/homg.cl and the grid
 * operators (stencil, transfers) against a host reference on random data
 * (double and float), then the solvers against known solutions: the engine's
 * V-cycle follows the host's classic cycle residual for residual at one
 * rate on every grid and reaches the discrete solution, FMG reaches the
 * discretisation error, HOMG agrees with them, one MFMG cycle improves with
 * MaxI and follows the same path at two resolutions, the discretisation
 * error falls as h^2 on nested and four-subdomain grids, Dirichlet data are
 * kept, float works, and bad arguments are refused with a message. Grids
 * stay at n <= 129 (pocl, 2 cores, and n = 256 for one test). The GPU
 * kernels of HOMG's steps are checked on this device too
 * (CLMG_HOMG_GPU_KERNELS). */
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

/* ---- host <-> device ---- */

static clmg_vector *make_vector(clmg_dtype type, size_t length, const double *values) {
  clmg_vector *v = NULL;
  assert_int_equal(clmg_vector_create(context, type, length, &v), CLMG_SUCCESS);
  if (!values)
    return v;
  if (type == CLMG_FLOAT) {
    float *f = malloc(length * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < length; ++i)
      f[i] = (float)values[i];
    assert_int_equal(clmg_vector_upload(v, f), CLMG_SUCCESS);
    free(f);
  } else {
    assert_int_equal(clmg_vector_upload(v, values), CLMG_SUCCESS);
  }
  return v;
}

static double *read_vector(const clmg_vector *v) {
  size_t length = clmg_vector_length(v);
  double *out = malloc(length * sizeof *out);
  assert_non_null(out);
  if (clmg_vector_type(v) == CLMG_FLOAT) {
    float *f = malloc(length * sizeof *f);
    assert_non_null(f);
    assert_int_equal(clmg_vector_download(v, f), CLMG_SUCCESS);
    for (size_t i = 0; i < length; ++i)
      out[i] = f[i];
    free(f);
  } else {
    assert_int_equal(clmg_vector_download(v, out), CLMG_SUCCESS);
  }
  return out;
}

/* Values of the precision under test, so the reference sees what the
 * device sees. */
static double *random_grid(clmg_dtype type, size_t length, double scale) {
  double *v = malloc(length * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < length; ++i) {
    v[i] = scale * rng_uniform();
    if (type == CLMG_FLOAT)
      v[i] = (float)v[i];
  }
  return v;
}

static double max_abs(const double *v, size_t length) {
  double m = 0;
  for (size_t i = 0; i < length; ++i)
    m = fmax(m, fabs(v[i]));
  return m;
}

/* |got - want| <= tol * max |want| everywhere. */
static void expect_close(const char *what, const double *got, const double *want, size_t length,
                         double tol) {
  double scale = fmax(max_abs(want, length), 1e-300), worst = 0;
  size_t where = 0;
  for (size_t i = 0; i < length; ++i) {
    double d = fabs(got[i] - want[i]);
    if (!(d <= worst)) {
      worst = d;
      where = i;
    }
  }
  if (!(worst <= tol * scale))
    fail_msg("%s: entry %zu is %.17g, want %.17g (difference %.3g > %.3g)", what, where, got[where],
             want[where], worst, tol * scale);
}

static double tolerance(clmg_dtype type) {
  return type == CLMG_FLOAT ? 1e-5 : 1e-12;
}

static void expect_message(const char *fragment) {
  const char *message = clmg_context_message(context);
  if (!strstr(message, fragment))
    fail_msg("message \"%s\" lacks \"%s\"", message, fragment);
}

/* ---- host references ---- */

static int is_boundary(size_t n, size_t i, size_t j) {
  return i == 0 || j == 0 || i == n - 1 || j == n - 1;
}

static void host_jacobi(size_t n, double omega, const double *u, const double *b, int accumulate,
                        double *out) {
  double h2 = 1.0 / ((double)(n - 1) * (double)(n - 1));
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      size_t p = j * n + i;
      double c = u ? u[p] : 0;
      if (is_boundary(n, i, j)) {
        if (!accumulate)
          out[p] = c;
        continue;
      }
      double around = u ? u[p - 1] + u[p + 1] + u[p - n] + u[p + n] : 0;
      double swept = c + omega / 4 * (h2 * b[p] + around - 4 * c);
      out[p] = accumulate ? out[p] + swept : swept;
    }
}

static void host_residual(size_t n, const double *u, const double *b, double *r) {
  double inv_h2 = (double)(n - 1) * (double)(n - 1);
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      size_t p = j * n + i;
      r[p] = is_boundary(n, i, j)
                 ? 0
                 : b[p] - inv_h2 * (4 * u[p] - u[p - 1] - u[p + 1] - u[p - n] - u[p + n]);
    }
}

/* Full weighting from an n x n grid (n odd) to (n+1)/2, boundary 0. */
static void host_restrict(size_t n, const double *fine, double *coarse) {
  size_t nc = (n + 1) / 2;
  for (size_t b = 0; b < nc; ++b)
    for (size_t a = 0; a < nc; ++a) {
      double sum = 0;
      if (!is_boundary(nc, a, b)) {
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            double weight = (dx == 0 ? 2 : 1) * (dy == 0 ? 2 : 1);
            sum += weight * fine[(2 * b + dy) * n + (2 * a + dx)];
          }
      }
      coarse[b * nc + a] = sum / 16;
    }
}

static void host_interpolate(size_t nc, const double *coarse, int accumulate, double *fine) {
  size_t n = 2 * nc - 1;
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      /* the bilinear hat functions of the coarse points around (i, j) */
      double value = 0;
      for (size_t b = j / 2; b <= (j + 1) / 2; ++b)
        for (size_t a = i / 2; a <= (i + 1) / 2; ++a) {
          double wx = 1 - fabs((double)i - 2.0 * (double)a) / 2;
          double wy = 1 - fabs((double)j - 2.0 * (double)b) / 2;
          value += wx * wy * coarse[b * nc + a];
        }
      fine[j * n + i] = accumulate ? fine[j * n + i] + value : value;
    }
}

/* The HOMG levels of a grid, as Becerra-Sagredo et al. 2011 describe them: nested grids use
 * one frame; four-subdomain grids (n = 2^k) one frame per quadrant, each a
 * nested (n+1) x (n+1) grid seen from the quadrant's outer corner, the
 * extra row and column lying beyond the far boundary (zero). */
typedef struct host_homg {
  size_t n, split;
  int four, levels, frames;
  double *source[16][4]; /* [level][frame], level 0 unused */
  size_t side[16];
} host_homg;

static void host_homg_init(host_homg *g, size_t n, const double *source) {
  memset(g, 0, sizeof *g);
  g->n = n;
  g->four = (n & (n - 1)) == 0;
  g->split = g->four ? n / 2 : n - 1;
  g->frames = g->four ? 4 : 1;
  size_t span = g->four ? n : n - 1; /* frame points per side - 1 */
  while (((size_t)1 << g->levels) < span)
    g->levels++;
  for (int f = 0; f < g->frames; ++f) {
    size_t nv = span + 1;
    double *frame = calloc(nv * nv, sizeof *frame);
    assert_non_null(frame);
    for (size_t dy = 0; dy < n; ++dy)
      for (size_t dx = 0; dx < n; ++dx) {
        size_t x = (f & 1) ? n - 1 - dx : dx, y = (f & 2) ? n - 1 - dy : dy;
        frame[dy * nv + dx] = source[y * n + x];
      }
    double *fine = frame;
    for (int m = 1; m < g->levels; ++m) {
      size_t nc = (nv + 1) / 2;
      g->source[m][f] = malloc(nc * nc * sizeof(double));
      assert_non_null(g->source[m][f]);
      host_restrict(nv, fine, g->source[m][f]);
      g->side[m] = nc;
      fine = g->source[m][f];
      nv = nc;
    }
    free(frame);
  }
}

static void host_homg_free(host_homg *g) {
  for (int m = 0; m < 16; ++m)
    for (int f = 0; f < 4; ++f)
      free(g->source[m][f]);
}

/* Which frame marks index i on one side (0 low, 1 high), or -1. */
static int host_marking(const host_homg *g, size_t i, size_t l) {
  if (i <= g->split && i % l == 0)
    return 0;
  if (g->four && i + 1 >= g->split && (g->n - 1 - i) % l == 0)
    return 1;
  return -1;
}

static void host_homg_step(const host_homg *g, int level, double omega, const double *in,
                           double *out) {
  size_t n = g->n, l = (size_t)1 << level, last = n - 1;
  double spacing = (double)l / (double)(n - 1);
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      size_t p = j * n + i;
      if (is_boundary(n, i, j)) {
        out[p] = 0;
        continue;
      }
      int fx = host_marking(g, i, l), fy = host_marking(g, j, l);
      if (fx >= 0 && fy >= 0) {
        size_t dx = fx ? last - i : i, dy = fy ? last - j : j;
        double f = g->source[level][fx + 2 * fy][(dy / l) * g->side[level] + dx / l];
        double c = in ? in[p] : 0, around = 0;
        if (in) {
          around += i >= l ? in[p - l] : 0;
          around += i + l <= last ? in[p + l] : 0;
          around += j >= l ? in[p - l * n] : 0;
          around += j + l <= last ? in[p + l * n] : 0;
        }
        out[p] = c + omega / 4 * (spacing * spacing * f + around - 4 * c);
        continue;
      }
      /* bilinear inside the own quadrant, from its frame's level points */
      int qx = g->four && i >= g->split, qy = g->four && j >= g->split;
      size_t dx = qx ? last - i : i, dy = qy ? last - j : j;
      double value = 0;
      for (int cy = 0; cy < 2; ++cy)
        for (int cx = 0; cx < 2; ++cx) {
          size_t ex = dx / l * l + (size_t)cx * l, ey = dy / l * l + (size_t)cy * l;
          double wx = 1 - fabs((double)dx - (double)ex) / (double)l;
          double wy = 1 - fabs((double)dy - (double)ey) / (double)l;
          size_t x = qx ? last - ex : ex, y = qy ? last - ey : ey;
          if (wx * wy != 0)
            value += wx * wy * (in ? in[y * n + x] : 0);
        }
      out[p] = value;
    }
}

/* ---- kernels against the references ---- */

static void run_jacobi(clmg_dtype type) {
  const size_t n = 33, N = n * n;
  double *u = random_grid(type, N, 1), *b = random_grid(type, N, 1000);
  double *start = random_grid(type, N, 1), *want = malloc(N * sizeof *want);
  clmg_vector *du = make_vector(type, N, u), *db = make_vector(type, N, b);
  clmg_vector *dout = make_vector(type, N, start);
  for (int mode = 0; mode < 3; ++mode) {
    /* 0: plain, 1: from zero, 2: accumulating into `start` */
    const double *in = mode == 1 ? NULL : u;
    int accumulate = mode == 2;
    memcpy(want, start, N * sizeof *want);
    clmg_vector_destroy(dout);
    dout = make_vector(type, N, start);
    host_jacobi(n, 0.8, in, b, accumulate, want);
    assert_int_equal(clmg_grid_jacobi(n, 0.8, in ? du : NULL, db, accumulate, dout), CLMG_SUCCESS);
    double *got = read_vector(dout);
    expect_close(mode == 0   ? "jacobi"
                 : mode == 1 ? "jacobi from zero"
                             : "jacobi accumulate",
                 got, want, N, tolerance(type));
    free(got);
  }
  clmg_vector_destroy(du);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dout);
  free(u);
  free(b);
  free(start);
  free(want);
}

static void run_residual(clmg_dtype type) {
  const size_t n = 17, N = n * n;
  double *u = random_grid(type, N, 1), *b = random_grid(type, N, 300), *want = malloc(N * 8);
  host_residual(n, u, b, want);
  double norm = 0;
  for (size_t i = 0; i < N; ++i)
    norm += want[i] * want[i];
  clmg_vector *du = make_vector(type, N, u), *db = make_vector(type, N, b);
  clmg_vector *dr = make_vector(type, N, NULL);
  double got_norm = 0;
  assert_int_equal(clmg_grid_residual(n, du, db, dr, &got_norm), CLMG_SUCCESS);
  double *got = read_vector(dr);
  expect_close("residual", got, want, N, tolerance(type) * 10);
  assert_true(fabs(got_norm - sqrt(norm)) <= tolerance(type) * 10 * sqrt(norm));
  /* the norm alone, without r */
  assert_int_equal(clmg_grid_residual(n, du, db, NULL, &got_norm), CLMG_SUCCESS);
  assert_true(fabs(got_norm - sqrt(norm)) <= tolerance(type) * 10 * sqrt(norm));
  free(got);
  clmg_vector_destroy(du);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dr);
  free(u);
  free(b);
  free(want);
}

static void run_restriction(clmg_dtype type) {
  const size_t n = 33, nc = 17;
  double *fine = random_grid(type, n * n, 1), *want = malloc(nc * nc * 8);
  host_restrict(n, fine, want);
  clmg_vector *df = make_vector(type, n * n, fine), *dc = make_vector(type, nc * nc, NULL);
  assert_int_equal(clmg_grid_restrict(n, df, dc), CLMG_SUCCESS);
  double *got = read_vector(dc);
  expect_close("restrict", got, want, nc * nc, tolerance(type));
  free(got);

  /* the fused restriction of the residual */
  double *u = random_grid(type, n * n, 1), *r = malloc(n * n * 8);
  clmg_vector *du = make_vector(type, n * n, u);
  host_residual(n, u, fine, r);
  host_restrict(n, r, want);
  assert_int_equal(clmg_grid_restrict_residual(n, du, df, dc), CLMG_SUCCESS);
  got = read_vector(dc);
  expect_close("restrict residual", got, want, nc * nc, tolerance(type) * 10);
  free(got);
  clmg_vector_destroy(du);
  clmg_vector_destroy(df);
  clmg_vector_destroy(dc);
  free(u);
  free(r);
  free(fine);
  free(want);
}

static void run_interpolate(clmg_dtype type) {
  const size_t nc = 9, n = 17;
  double *coarse = random_grid(type, nc * nc, 1), *start = random_grid(type, n * n, 1);
  double *want = malloc(n * n * 8);
  clmg_vector *dc = make_vector(type, nc * nc, coarse);
  for (int accumulate = 0; accumulate < 2; ++accumulate) {
    clmg_vector *df = make_vector(type, n * n, start);
    memcpy(want, start, n * n * sizeof *want);
    host_interpolate(nc, coarse, accumulate, want);
    assert_int_equal(clmg_grid_interpolate(nc, dc, accumulate, df), CLMG_SUCCESS);
    double *got = read_vector(df);
    expect_close(accumulate ? "interpolate accumulate" : "interpolate", got, want, n * n,
                 tolerance(type));
    free(got);
    clmg_vector_destroy(df);
  }
  clmg_vector_destroy(dc);
  free(coarse);
  free(start);
  free(want);
}

static clmg_homg *make_solver(size_t n, clmg_dtype type, clmg_homg_method method, int maxi) {
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.precision = type;
  options.method = method;
  options.max_iterations_per_level = maxi;
  clmg_homg *h = NULL;
  clmg_status status = clmg_homg_create(context, n, &options, &h);
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_homg_create(n = %zu): %s: %s", n, clmg_status_string(status),
             clmg_context_message(context));
  return h;
}

/* Every level of the fused step, nested and four-subdomain, from a random
 * iterate and from zero, against host_homg_step. (The GPU kernels run
 * 64-column tiles, whole on a side from n = 128 on, and straddle the split
 * of four-subdomain grids below.) */
static void run_homg_step(clmg_dtype type) {
  const size_t sizes[] = {33, 32, 17, 16, 129, 128};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    size_t n = sizes[s], N = n * n;
    double scale = (double)(n - 1) * (double)(n - 1); /* h^2 f ~ 1, so the source matters */
    double *source = random_grid(type, N, scale), *in = random_grid(type, N, 1);
    double *want = malloc(N * 8);
    host_homg g;
    host_homg_init(&g, n, source);
    clmg_homg *h = make_solver(n, type, CLMG_HOMG_MFMG, 4);
    clmg_homg_info info;
    assert_int_equal(clmg_homg_get_info(h, &info), CLMG_SUCCESS);
    assert_int_equal(info.levels, g.levels);
    assert_int_equal(info.four_subdomains, g.four);
    clmg_vector *dsource = make_vector(type, N, source), *din = make_vector(type, N, in);
    clmg_vector *dout = make_vector(type, N, NULL);
    assert_int_equal(clmg_homg_set_source(h, dsource), CLMG_SUCCESS);
    for (int level = 0; level < g.levels; ++level)
      for (int zero = 0; zero < 2; ++zero) {
        int m = g.levels - 1 - level; /* spacing 2^m h; level 0 is the coarsest */
        if (m == 0)
          host_jacobi(n, 0.8, zero ? NULL : in, source, 0, want);
        else
          host_homg_step(&g, m, 0.8, zero ? NULL : in, want);
        assert_int_equal(clmg_homg_step(h, level, zero ? NULL : din, dout), CLMG_SUCCESS);
        double *got = read_vector(dout);
        char what[96];
        snprintf(what, sizeof what, "homg step, n = %zu, level %d%s", n, level,
                 zero ? ", from zero" : "");
        expect_close(what, got, want, N, tolerance(type) * 10);
        free(got);
        if (m == 0)
          continue;
        /* the step with variations: relax(in) at the level's points, in plus
         * the interpolation of the change d = relax(in) - in (0 on the
         * boundary) elsewhere; host_homg_step interpolates d off the level */
        double *relaxed = malloc(N * sizeof *relaxed), *change = malloc(N * sizeof *change);
        assert_non_null(relaxed);
        assert_non_null(change);
        memcpy(relaxed, want, N * sizeof *relaxed); /* relax(in) on the level */
        size_t l = (size_t)1 << m;
        for (size_t j = 0; j < n; ++j)
          for (size_t i = 0; i < n; ++i) {
            size_t q = j * n + i;
            int marked = host_marking(&g, i, l) >= 0 && host_marking(&g, j, l) >= 0;
            change[q] = marked && !is_boundary(n, i, j) ? relaxed[q] - (zero ? 0 : in[q]) : 0;
          }
        host_homg_step(&g, m, 0.8, change, want); /* P(d) off the level */
        for (size_t j = 0; j < n; ++j)
          for (size_t i = 0; i < n; ++i) {
            size_t q = j * n + i;
            int marked = host_marking(&g, i, l) >= 0 && host_marking(&g, j, l) >= 0;
            if (is_boundary(n, i, j))
              want[q] = 0;
            else if (marked)
              want[q] = relaxed[q];
            else
              want[q] += zero ? 0 : in[q];
          }
        assert_int_equal(clmg_homg_variation_step(h, level, zero ? NULL : din, dout), CLMG_SUCCESS);
        got = read_vector(dout);
        snprintf(what, sizeof what, "homg variation step, n = %zu, level %d%s", n, level,
                 zero ? ", from zero" : "");
        expect_close(what, got, want, N, tolerance(type) * 10);
        free(got);
        if (!zero) { /* in place, as a cycle runs it */
          clmg_vector *inout = make_vector(type, N, in);
          assert_int_equal(clmg_homg_variation_step(h, level, inout, inout), CLMG_SUCCESS);
          got = read_vector(inout);
          snprintf(what, sizeof what, "homg variation step in place, n = %zu, level %d", n, level);
          expect_close(what, got, want, N, tolerance(type) * 10);
          free(got);
          clmg_vector_destroy(inout);
        }
        free(relaxed);
        free(change);
      }
    clmg_vector_destroy(dsource);
    clmg_vector_destroy(din);
    clmg_vector_destroy(dout);
    clmg_homg_destroy(h);
    host_homg_free(&g);
    free(source);
    free(in);
    free(want);
  }
}

/* ---- the grid as operators ---- */

/* (A x) of clmg_grid_operator: the five-point Laplacian inside, identity
 * rows on the boundary. */
static void host_stencil(size_t n, const double *x, double *ax) {
  double inv_h2 = (double)(n - 1) * (double)(n - 1);
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      size_t p = j * n + i;
      ax[p] = is_boundary(n, i, j)
                  ? x[p]
                  : inv_h2 * (4 * x[p] - x[p - 1] - x[p + 1] - x[p - n] - x[p + n]);
    }
}

static double *nan_grid(size_t length) {
  double *v = malloc(length * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < length; ++i)
    v[i] = NAN;
  return v;
}

/* apply (with beta != 0, and with beta == 0 over a NaN-filled y that must
 * not be read), defect, diagonal and the fused Jacobi step of the grid
 * operator on random data. */
static void run_grid_operator(clmg_dtype type) {
  const size_t n = 17, N = n * n;
  const double alpha = -0.7, beta = 0.3, inv_h2 = (double)(n - 1) * (double)(n - 1);
  clmg_operator op;
  assert_int_equal(clmg_grid_operator(context, n, type, &op), CLMG_SUCCESS);
  assert_int_equal(op.rows, N);
  assert_int_equal(op.cols, N);
  assert_int_equal(op.precision, type);
  assert_non_null(op.diagonal);
  double *x = random_grid(type, N, 1), *y = random_grid(type, N, 300);
  double *b = random_grid(type, N, 300), *w = random_grid(type, N, 1 / inv_h2);
  double *ax = malloc(N * 8), *want = malloc(N * 8), *nan = nan_grid(N);
  host_stencil(n, x, ax);
  clmg_vector *dx = make_vector(type, N, x), *dy = make_vector(type, N, y);
  clmg_vector *db = make_vector(type, N, b), *dw = make_vector(type, N, w);
  clmg_vector *dout = make_vector(type, N, nan);

  for (size_t i = 0; i < N; ++i)
    want[i] = alpha * ax[i] + beta * y[i];
  assert_int_equal(clmg_operator_apply(&op, alpha, dx, beta, dy), CLMG_SUCCESS);
  double *got = read_vector(dy);
  expect_close("stencil apply", got, want, N, tolerance(type) * 10);
  free(got);
  for (size_t i = 0; i < N; ++i)
    want[i] = alpha * ax[i];
  assert_int_equal(clmg_operator_apply(&op, alpha, dx, 0.0, dout), CLMG_SUCCESS);
  got = read_vector(dout);
  expect_close("stencil apply, beta 0", got, want, N, tolerance(type) * 10);
  free(got);

  for (size_t i = 0; i < N; ++i)
    want[i] = b[i] - ax[i];
  assert_int_equal(clmg_operator_defect(&op, db, dx, dout), CLMG_SUCCESS);
  got = read_vector(dout);
  expect_close("stencil defect", got, want, N, tolerance(type) * 10);
  free(got);

  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i)
      want[j * n + i] = is_boundary(n, i, j) ? 1 : 4 * inv_h2;
  assert_int_equal(op.diagonal(op.data, dout), CLMG_SUCCESS);
  got = read_vector(dout);
  expect_close("stencil diagonal", got, want, N, tolerance(type));
  free(got);

  for (size_t i = 0; i < N; ++i)
    want[i] = x[i] + w[i] * (b[i] - ax[i]);
  assert_int_equal(clmg_operator_weighted_step(&op, dw, db, dx, dout, NULL), CLMG_SUCCESS);
  got = read_vector(dout);
  expect_close("stencil weighted step", got, want, N, tolerance(type) * 10);
  free(got);

  /* a vector of another grid is refused, not written past */
  clmg_vector *small = make_vector(type, (n - 1) * (n - 1), NULL);
  assert_int_equal(clmg_operator_apply(&op, 1.0, dx, 0.0, small), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("entries");
  assert_int_equal(clmg_operator_defect(&op, db, small, dout), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_vector_destroy(small);

  clmg_operator_destroy(&op);
  assert_null(op.apply);
  clmg_vector_destroy(dx);
  clmg_vector_destroy(dy);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dw);
  clmg_vector_destroy(dout);
  free(x);
  free(y);
  free(b);
  free(w);
  free(ax);
  free(want);
  free(nan);
}

/* Full weighting and bilinear interpolation as operators, y = alpha T x +
 * beta y, on random data; beta == 0 over NaN must not read y. */
static void run_transfer_operators(clmg_dtype type) {
  const size_t n = 33, nc = 17, N = n * n, Nc = nc * nc;
  const double alpha = 1.5, beta = -0.5;
  clmg_operator r, p;
  assert_int_equal(clmg_grid_restriction_operator(context, n, type, &r), CLMG_SUCCESS);
  assert_int_equal(clmg_grid_interpolation_operator(context, n, type, &p), CLMG_SUCCESS);
  assert_int_equal(r.rows, Nc);
  assert_int_equal(r.cols, N);
  assert_int_equal(p.rows, N);
  assert_int_equal(p.cols, Nc);
  double *fine = random_grid(type, N, 1), *coarse = random_grid(type, Nc, 1);
  double *fine_y = random_grid(type, N, 1), *coarse_y = random_grid(type, Nc, 1);
  double *rx = malloc(Nc * 8), *px = calloc(N, 8), *want = malloc(N * 8), *nan = nan_grid(N);
  host_restrict(n, fine, rx);
  host_interpolate(nc, coarse, 0, px);
  clmg_vector *dfine = make_vector(type, N, fine), *dcoarse = make_vector(type, Nc, coarse);
  for (int with_beta = 0; with_beta < 2; ++with_beta) {
    double b = with_beta ? beta : 0.0;
    clmg_vector *dr = make_vector(type, Nc, with_beta ? coarse_y : nan);
    clmg_vector *dp = make_vector(type, N, with_beta ? fine_y : nan);
    assert_int_equal(clmg_operator_apply(&r, alpha, dfine, b, dr), CLMG_SUCCESS);
    assert_int_equal(clmg_operator_apply(&p, alpha, dcoarse, b, dp), CLMG_SUCCESS);
    for (size_t i = 0; i < Nc; ++i)
      want[i] = alpha * rx[i] + (with_beta ? b * coarse_y[i] : 0);
    double *got = read_vector(dr);
    expect_close(with_beta ? "restriction operator" : "restriction operator, beta 0", got, want, Nc,
                 tolerance(type));
    free(got);
    for (size_t i = 0; i < N; ++i)
      want[i] = alpha * px[i] + (with_beta ? b * fine_y[i] : 0);
    got = read_vector(dp);
    expect_close(with_beta ? "interpolation operator" : "interpolation operator, beta 0", got, want,
                 N, tolerance(type));
    free(got);
    clmg_vector_destroy(dr);
    clmg_vector_destroy(dp);
  }
  /* the transfers map between two grids: a fine vector is not a coarse one */
  assert_int_equal(clmg_operator_apply(&p, 1.0, dfine, 0.0, dfine), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_operator_destroy(&r);
  clmg_operator_destroy(&p);
  clmg_vector_destroy(dfine);
  clmg_vector_destroy(dcoarse);
  free(fine);
  free(coarse);
  free(fine_y);
  free(coarse_y);
  free(rx);
  free(px);
  free(want);
  free(nan);
}

TYPED_TESTS(jacobi)
TYPED_TESTS(residual)
TYPED_TESTS(restriction)
TYPED_TESTS(interpolate)
TYPED_TESTS(homg_step)
TYPED_TESTS(grid_operator)
TYPED_TESTS(transfer_operators)

/* ---- solvers ---- */

typedef struct problem {
  size_t n;
  double *f, *u;
  clmg_vector *df, *du;
} problem;

static problem paper_problem(size_t n, clmg_dtype type) {
  problem p = {n, malloc(n * n * 8), malloc(n * n * 8), NULL, NULL};
  assert_non_null(p.f);
  assert_non_null(p.u);
  clmg_homg_paper_problem(n, p.f, p.u);
  p.df = make_vector(type, n * n, p.f);
  p.du = make_vector(type, n * n, p.u);
  return p;
}

static void free_problem(problem *p) {
  clmg_vector_destroy(p->df);
  clmg_vector_destroy(p->du);
  free(p->f);
  free(p->u);
}

typedef struct solve_setup {
  clmg_homg_method method;
  clmg_dtype type;
  int maxi, max_cycles;
  double tol, error_tol, stagnation;
} solve_setup;

/* Solves p from x = 0 and returns x on the host (result filled). */
static double *solve(const problem *p, solve_setup setup, clmg_homg_result *result,
                     clmg_status expected) {
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.method = setup.method;
  options.precision = setup.type;
  options.max_iterations_per_level = setup.maxi;
  options.max_cycles = setup.max_cycles;
  options.relative_tolerance = setup.tol;
  options.error_tolerance = setup.error_tol;
  options.stagnation_factor = setup.stagnation;
  clmg_homg *h = NULL;
  assert_int_equal(clmg_homg_create(context, p->n, &options, &h), CLMG_SUCCESS);
  clmg_vector *x = make_vector(setup.type, p->n * p->n, NULL);
  clmg_status status = clmg_homg_solve(h, p->df, x, p->du, result);
  if (status != expected)
    fail_msg("%s solve, n = %zu: %s (%s)", clmg_homg_method_name(setup.method), p->n,
             clmg_status_string(status), clmg_context_message(context));
  double *out = read_vector(x);
  clmg_vector_destroy(x);
  clmg_homg_destroy(h);
  return out;
}

/* ||f - A x|| / ||f|| on the host, over interior points. */
static double host_relative_residual(size_t n, const double *x, const double *f) {
  double *r = malloc(n * n * 8), rr = 0, ff = 0;
  assert_non_null(r);
  host_residual(n, x, f, r);
  for (size_t j = 1; j + 1 < n; ++j)
    for (size_t i = 1; i + 1 < n; ++i) {
      rr += r[j * n + i] * r[j * n + i];
      ff += f[j * n + i] * f[j * n + i];
    }
  free(r);
  return sqrt(rr / ff);
}

static double host_l1_error(size_t n, const double *x, const double *u) {
  double error = 0, size = 0;
  for (size_t i = 0; i < n * n; ++i) {
    error += fabs(x[i] - u[i]);
    size += fabs(u[i]);
  }
  return error / size;
}

static void test_vcycle_discrete_solution(void **state) {
  (void)state;
  problem p = paper_problem(65, CLMG_DOUBLE);
  solve_setup setup = {CLMG_HOMG_VCYCLE, CLMG_DOUBLE, 32, 40, 1e-9, 0, 0};
  clmg_homg_result result;
  double *x = solve(&p, setup, &result, CLMG_SUCCESS);
  assert_true(result.converged);
  assert_true(result.relative_residual <= 1e-9);
  double host = host_relative_residual(p.n, x, p.f);
  assert_true(host <= 1e-8);
  /* the solver's L1 error is the one of x */
  assert_true(fabs(result.l1_error - host_l1_error(p.n, x, p.u)) <= 1e-10);
  /* V(2,2) with damped Jacobi: a factor of at least 4 per cycle */
  assert_true(result.cycles <= 16);
  assert_int_equal(result.history_length, (size_t)result.cycles + 1);
  for (size_t k = 1; k < result.history_length; ++k)
    assert_true(result.history[k].relative_residual <
                0.25 * result.history[k - 1].relative_residual);
  clmg_homg_result_free(&result);
  free(x);
  free_problem(&p);
}

/* The classic V(pre, post) cycle for A e = b from e = 0 on the host, as
 * HOMG ran it before the engine did: damped Jacobi sweeps, full weighting of
 * the residual, the 3 x 3 grid solved exactly, bilinear interpolation added. */
static void host_vcycle(size_t n, double omega, int pre, int post, const double *b, double *e) {
  size_t N = n * n;
  memset(e, 0, N * sizeof *e);
  if (n == 3) {
    e[4] = b[4] / 16; /* h^2 / 4 with h = 1/2 */
    return;
  }
  size_t nc = (n + 1) / 2;
  double *t = malloc(N * 8), *r = malloc(N * 8), *bc = malloc(nc * nc * 8);
  double *ec = malloc(nc * nc * 8);
  assert_true(t && r && bc && ec);
  for (int k = 0; k < pre; ++k) {
    host_jacobi(n, omega, k == 0 ? NULL : e, b, 0, t);
    memcpy(e, t, N * sizeof *e);
  }
  host_residual(n, e, b, r);
  host_restrict(n, r, bc);
  host_vcycle(nc, omega, pre, post, bc, ec);
  host_interpolate(nc, ec, 1, e);
  for (int k = 0; k < post; ++k) {
    host_jacobi(n, omega, e, b, 0, t);
    memcpy(e, t, N * sizeof *e);
  }
  free(t);
  free(r);
  free(bc);
  free(ec);
}

/* The engine's V-cycles follow the host's classic cycle: the same relative
 * residual after each cycle, to rounding. */
static void test_vcycle_history_matches_host(void **state) {
  (void)state;
  const int cycles = 8;
  problem p = paper_problem(33, CLMG_DOUBLE);
  solve_setup setup = {CLMG_HOMG_VCYCLE, CLMG_DOUBLE, 8, cycles, 0, 0, 0};
  clmg_homg_result result;
  double *x = solve(&p, setup, &result, CLMG_SUCCESS);
  assert_int_equal(result.history_length, (size_t)cycles + 1);
  size_t N = p.n * p.n;
  double *hx = calloc(N, 8), *r = malloc(N * 8), *e = malloc(N * 8);
  assert_true(hx && r && e);
  for (int c = 0; c <= cycles; ++c) {
    double want = host_relative_residual(p.n, hx, p.f);
    double got = result.history[c].relative_residual;
    if (!(fabs(got - want) <= 1e-6 * want))
      fail_msg("cycle %d: relative residual %.10e, the host's classic cycle %.10e", c, got, want);
    host_residual(p.n, hx, p.f, r);
    host_vcycle(p.n, 0.8, 2, 2, r, e);
    for (size_t i = 0; i < N; ++i)
      hx[i] += e[i];
  }
  clmg_homg_result_free(&result);
  free(x);
  free(hx);
  free(r);
  free(e);
  free_problem(&p);
}

/* V(2,2) with damped Jacobi converges at one rate on every grid (about
 * 0.18 per cycle), the mark of a multigrid cycle. */
static void test_vcycle_rate_mesh_independent(void **state) {
  (void)state;
  const size_t sizes[] = {33, 65, 129};
  const int cycles = 6;
  double rates[3];
  for (int k = 0; k < 3; ++k) {
    problem p = paper_problem(sizes[k], CLMG_DOUBLE);
    solve_setup setup = {CLMG_HOMG_VCYCLE, CLMG_DOUBLE, 8, cycles, 0, 0, 0};
    clmg_homg_result result;
    double *x = solve(&p, setup, &result, CLMG_SUCCESS);
    rates[k] = pow(result.history[cycles].relative_residual / result.history[0].relative_residual,
                   1.0 / cycles);
    clmg_homg_result_free(&result);
    free(x);
    free_problem(&p);
  }
  for (int k = 0; k < 3; ++k)
    if (!(rates[k] >= 0.15 && rates[k] <= 0.2 && rates[k] <= 1.05 * rates[0] &&
          rates[k] >= rates[0] / 1.05))
      fail_msg("V-cycle rates %.4f, %.4f, %.4f at n = 33, 65, 129: not one rate near 0.18",
               rates[0], rates[1], rates[2]);
}

/* FMG's first cycle lands within a few times the discretisation error, and
 * FMG then V-cycles reach it in fewer work units than V-cycles alone. */
static void test_fmg_reaches_discretisation_error(void **state) {
  (void)state;
  problem p = paper_problem(65, CLMG_DOUBLE);
  solve_setup setup = {CLMG_HOMG_VCYCLE, CLMG_DOUBLE, 8, 60, 1e-11, 0, 0};
  clmg_homg_result converged, vcycle, fmg;
  double *x = solve(&p, setup, &converged, CLMG_SUCCESS);
  double discretisation = converged.l1_error;
  free(x);
  setup.tol = 0;
  setup.error_tol = 1.01 * discretisation;
  x = solve(&p, setup, &vcycle, CLMG_SUCCESS);
  free(x);
  setup.method = CLMG_HOMG_FMG;
  x = solve(&p, setup, &fmg, CLMG_SUCCESS);
  free(x);
  assert_true(vcycle.converged && fmg.converged);
  if (!(fmg.history[1].l1_error <= 10 * discretisation &&
        vcycle.history[1].l1_error >= 100 * discretisation))
    fail_msg("first cycle: FMG L1 error %.4g, V-cycle %.4g; discretisation error %.4g",
             fmg.history[1].l1_error, vcycle.history[1].l1_error, discretisation);
  if (!(fmg.work_units < vcycle.work_units))
    fail_msg("to 1.01 x the discretisation error FMG took %.2f WU, the V-cycle %.2f",
             fmg.work_units, vcycle.work_units);
  clmg_homg_result_free(&converged);
  clmg_homg_result_free(&vcycle);
  clmg_homg_result_free(&fmg);
  free_problem(&p);
}

/* The grid operators make an engine hierarchy like any other: its solve
 * reaches the discrete solution, and clmg_multigrid_cycle_level refuses what
 * does not fit. */
static void test_engine_on_grid_operators(void **state) {
  (void)state;
  const int num_levels = 5; /* 33 x 33 down to 3 x 3 */
  clmg_multigrid_level levels[5];
  memset(levels, 0, sizeof levels);
  for (int l = 0; l < num_levels; ++l) {
    size_t n = ((size_t)1 << (l + 1)) + 1;
    assert_int_equal(clmg_grid_operator(context, n, CLMG_DOUBLE, &levels[l].a), CLMG_SUCCESS);
    if (l == 0)
      continue;
    assert_int_equal(clmg_grid_interpolation_operator(context, n, CLMG_DOUBLE, &levels[l].p),
                     CLMG_SUCCESS);
    assert_int_equal(clmg_grid_restriction_operator(context, n, CLMG_DOUBLE, &levels[l].r),
                     CLMG_SUCCESS);
  }
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  options.omega = 0.8;
  clmg_multigrid *mg = NULL;
  assert_int_equal(clmg_multigrid_create_from_levels(context, num_levels, levels, &options, &mg),
                   CLMG_SUCCESS);
  assert_string_equal(clmg_multigrid_smoother_name(mg, num_levels - 1), "jacobi");
  assert_string_equal(clmg_multigrid_coarse_solver(mg), "direct");

  /* A x = b with b = A u for a random u: the solve must return u */
  const size_t n = 33, N = n * n;
  double *u = random_grid(CLMG_DOUBLE, N, 1), *b = malloc(N * 8);
  host_stencil(n, u, b);
  clmg_vector *du = make_vector(CLMG_DOUBLE, N, u), *db = make_vector(CLMG_DOUBLE, N, b);
  clmg_vector *dx = make_vector(CLMG_DOUBLE, N, NULL);
  assert_int_equal(clmg_vector_fill(dx, 0.0), CLMG_SUCCESS);
  clmg_krylov_options solve_options;
  clmg_krylov_options_defaults(&solve_options);
  solve_options.relative_tolerance = 1e-11;
  solve_options.max_iterations = 40;
  clmg_krylov_result result;
  assert_int_equal(clmg_multigrid_solve(mg, db, dx, &solve_options, &result), CLMG_SUCCESS);
  assert_true(result.iterations <= 20);
  double *x = read_vector(dx);
  expect_close("engine solve on grid operators", x, u, N, 1e-8);
  free(x);
  clmg_krylov_result_free(&result);

  /* a cycle on level 0 is the coarse solve; levels and sizes are checked */
  clmg_vector *coarse_b = make_vector(CLMG_DOUBLE, 9, NULL),
              *coarse_x = make_vector(CLMG_DOUBLE, 9, NULL);
  assert_int_equal(clmg_vector_fill(coarse_b, 0.0), CLMG_SUCCESS);
  assert_int_equal(clmg_multigrid_cycle_level(mg, 0, coarse_b, coarse_x, 1), CLMG_SUCCESS);
  assert_int_equal(clmg_multigrid_cycle_level(mg, num_levels, db, dx, 0),
                   CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("coarsest");
  assert_int_equal(clmg_multigrid_cycle_level(mg, 1, db, dx, 0), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("level 1");
  assert_int_equal(clmg_multigrid_cycle_level(mg, num_levels - 1, db, db, 0),
                   CLMG_ERROR_INVALID_ARGUMENT);
  clmg_vector_destroy(coarse_b);
  clmg_vector_destroy(coarse_x);
  clmg_vector_destroy(du);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_multigrid_destroy(mg);
  free(u);
  free(b);

  /* sizes the operators refuse */
  clmg_operator op;
  assert_int_equal(clmg_grid_operator(context, 2, CLMG_DOUBLE, &op), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("from 3");
  assert_int_equal(clmg_grid_restriction_operator(context, 16, CLMG_DOUBLE, &op),
                   CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("odd");
  assert_int_equal(clmg_grid_interpolation_operator(context, 17, CLMG_INT32, &op),
                   CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("double or float");
  assert_null(op.apply);
}

/* HOMG restarted cycles (nested grid), FMG and the V-cycle reach the same
 * discrete solution. */
static void test_methods_agree(void **state) {
  (void)state;
  problem p = paper_problem(65, CLMG_DOUBLE);
  clmg_homg_result result;
  solve_setup setup = {CLMG_HOMG_VCYCLE, CLMG_DOUBLE, 8, 60, 1e-11, 0, 0};
  double *reference = solve(&p, setup, &result, CLMG_SUCCESS);
  clmg_homg_result_free(&result);
  double scale = max_abs(reference, p.n * p.n);
  const clmg_homg_method others[] = {CLMG_HOMG_MFMG, CLMG_HOMG_FMG};
  for (int m = 0; m < 2; ++m) {
    setup.method = others[m];
    double *x = solve(&p, setup, &result, CLMG_SUCCESS);
    assert_true(result.converged);
    double worst = 0;
    for (size_t i = 0; i < p.n * p.n; ++i)
      worst = fmax(worst, fabs(x[i] - reference[i]));
    if (!(worst <= 1e-9 * scale))
      fail_msg("%s differs from the V-cycle by %.3g (max |x| %.3g)",
               clmg_homg_method_name(others[m]), worst, scale);
    clmg_homg_result_free(&result);
    free(x);
  }
  free(reference);
  free_problem(&p);
}

static double one_cycle_error(size_t n, int maxi) {
  problem p = paper_problem(n, CLMG_DOUBLE);
  solve_setup setup = {CLMG_HOMG_MFMG, CLMG_DOUBLE, maxi, 1, 0, 0, 0};
  clmg_homg_result result;
  double *x = solve(&p, setup, &result, CLMG_SUCCESS);
  double error = result.l1_error;
  assert_int_equal(result.cycles, 1);
  clmg_homg_result_free(&result);
  free(x);
  free_problem(&p);
  return error;
}

/* The paper's Fig. 4: a larger MaxI reaches a lower error, and cycles with
 * the same MaxI follow the same path at different resolutions; with the
 * default (sawtooth) schedule one cycle reaches the paper's errors (5% at
 * MaxI = 4, 1.6% at MaxI = 32) within a factor 2.5, on nested and
 * four-subdomain grids of 128 cells a side. */
static void test_one_cycle_error_and_maxi(void **state) {
  (void)state;
  const size_t sizes[] = {65, 64};
  for (int s = 0; s < 2; ++s) {
    double previous = 1;
    for (int maxi = 1; maxi <= 32; maxi *= 2) {
      double error = one_cycle_error(sizes[s], maxi);
      if (!(error < previous))
        fail_msg("n = %zu: one MFMG cycle with MaxI = %d has L1 error %.4f, not below %.4f",
                 sizes[s], maxi, error, previous);
      previous = error;
    }
  }
  const int maxis[] = {4, 32};
  const double paper[] = {0.05, 0.016};
  for (int k = 0; k < 2; ++k) {
    double fine = one_cycle_error(129, maxis[k]), finer = one_cycle_error(257, maxis[k]);
    double four = one_cycle_error(128, maxis[k]);
    printf("  MaxI = %d: one-cycle L1 error %.4f (n = 129), %.4f (n = 257), %.4f (n = 128); "
           "the paper: %.3f\n",
           maxis[k], fine, finer, four, paper[k]);
    if (!(fabs(finer - fine) <= 0.1 * fine))
      fail_msg("MaxI = %d: one-cycle L1 error %.4f at n = 129 but %.4f at n = 257", maxis[k], fine,
               finer);
    for (int g = 0; g < 2; ++g) {
      double error = g ? four : fine;
      if (!(error <= 2.5 * paper[k] && error >= paper[k] / 2.5))
        fail_msg(
            "MaxI = %d: one-cycle L1 error %.4f at n = %d, not within 2.5x of the paper's %.3f",
            maxis[k], error, g ? 128 : 129, paper[k]);
    }
  }
}

/* Stagnation is judged from the second cycle on: the default schedule's
 * first cycle cuts the error 30-fold but the residual only 5-fold at n =
 * 256 (hardly at all at n = 1024), which a factor of 6 would have taken for
 * the rounding floor. */
static void test_stagnation_after_the_first_cycle(void **state) {
  (void)state;
  problem p = paper_problem(256, CLMG_DOUBLE);
  solve_setup setup = {CLMG_HOMG_MFMG, CLMG_DOUBLE, 8, 30, 1e-9, 0, 6.0};
  clmg_homg_result result;
  double *x = solve(&p, setup, &result, CLMG_SUCCESS);
  assert_true(result.history_length >= 2);
  assert_true(result.history[1].relative_residual > 1.0 / 6.0);
  assert_true(result.cycles > 1);
  assert_false(result.stagnated);
  assert_true(host_relative_residual(p.n, x, p.f) <= 1e-9);
  clmg_homg_result_free(&result);
  free(x);
  free_problem(&p);
}

/* Observed order of the discretisation error over three resolutions, with
 * cycles restarted to convergence. */
static void check_order(const size_t sizes[3], clmg_homg_method method) {
  double errors[3], spacing[3];
  for (int s = 0; s < 3; ++s) {
    problem p = paper_problem(sizes[s], CLMG_DOUBLE);
    solve_setup setup = {method, CLMG_DOUBLE, 8, 60, 1e-11, 0, 0};
    clmg_homg_result result;
    double *x = solve(&p, setup, &result, CLMG_SUCCESS);
    errors[s] = result.l1_error;
    spacing[s] = 1.0 / (double)(sizes[s] - 1);
    clmg_homg_result_free(&result);
    free(x);
    free_problem(&p);
  }
  for (int s = 0; s < 2; ++s) {
    double order = log(errors[s] / errors[s + 1]) / log(spacing[s] / spacing[s + 1]);
    if (!(order >= 1.8 && order <= 2.2))
      fail_msg("%s: L1 error %.4g at n = %zu and %.4g at n = %zu: order %.3f, not 2",
               clmg_homg_method_name(method), errors[s], sizes[s], errors[s + 1], sizes[s + 1],
               order);
  }
}

static void test_discretisation_order(void **state) {
  (void)state;
  const size_t nested[] = {17, 33, 65}, four[] = {16, 32, 64};
  check_order(nested, CLMG_HOMG_MFMG);
  check_order(four, CLMG_HOMG_MFMG);
  check_order(nested, CLMG_HOMG_VCYCLE);
}

/* The discrete solution on a 2^k grid by host SOR, to compare with HOMG's
 * four-subdomain solve. */
static double *host_discrete_solution(size_t n, const double *f) {
  double *x = calloc(n * n, sizeof *x), h2 = 1.0 / ((double)(n - 1) * (double)(n - 1));
  assert_non_null(x);
  double omega = 2 / (1 + sin(3.14159265358979323846 / (double)(n - 1)));
  for (int sweep = 0; sweep < 4000; ++sweep) {
    double change = 0;
    for (size_t j = 1; j + 1 < n; ++j)
      for (size_t i = 1; i + 1 < n; ++i) {
        size_t p = j * n + i;
        double gs = (h2 * f[p] + x[p - 1] + x[p + 1] + x[p - n] + x[p + n]) / 4;
        double next = x[p] + omega * (gs - x[p]);
        change = fmax(change, fabs(next - x[p]));
        x[p] = next;
      }
    if (change < 1e-15)
      break;
  }
  return x;
}

static void test_four_subdomains_converge(void **state) {
  (void)state;
  const size_t sizes[] = {32, 64};
  for (int s = 0; s < 2; ++s) {
    problem p = paper_problem(sizes[s], CLMG_DOUBLE);
    const int maxis[] = {4, 32};
    double *discrete = host_discrete_solution(p.n, p.f);
    double scale = max_abs(discrete, p.n * p.n);
    for (int k = 0; k < 2; ++k) {
      solve_setup setup = {CLMG_HOMG_MFMG, CLMG_DOUBLE, maxis[k], 40, 1e-10, 0, 0};
      clmg_homg_result result;
      double *x = solve(&p, setup, &result, CLMG_SUCCESS);
      assert_true(result.converged);
      /* every restart cuts the residual (at least 3x per cycle) */
      for (size_t c = 1; c < result.history_length; ++c)
        assert_true(result.history[c].relative_residual <
                    result.history[c - 1].relative_residual / 3);
      double worst = 0;
      for (size_t i = 0; i < p.n * p.n; ++i)
        worst = fmax(worst, fabs(x[i] - discrete[i]));
      if (!(worst <= 1e-8 * scale))
        fail_msg("n = %zu, MaxI = %d: HOMG differs from the discrete solution by %.3g", p.n,
                 maxis[k], worst);
      clmg_homg_result_free(&result);
      free(x);
    }
    free(discrete);
    free_problem(&p);
  }
}

static void test_float(void **state) {
  (void)state;
  const size_t sizes[] = {65, 64};
  for (int s = 0; s < 2; ++s) {
    problem pd = paper_problem(sizes[s], CLMG_DOUBLE), pf = paper_problem(sizes[s], CLMG_FLOAT);
    clmg_homg_result rd, rf;
    solve_setup setup = {CLMG_HOMG_MFMG, CLMG_DOUBLE, 8, 40, 1e-10, 0, 0};
    double *xd = solve(&pd, setup, &rd, CLMG_SUCCESS);
    /* float's rounding floor of ||f - A x|| / ||f|| is ~2e-5 at n = 65: the
     * cycles run until they stop gaining */
    setup.type = CLMG_FLOAT;
    setup.stagnation = 1.5;
    double *xf = solve(&pf, setup, &rf, CLMG_SUCCESS);
    assert_true(rf.converged && rf.stagnated);
    assert_true(rf.relative_residual < 1e-4);
    if (!(fabs(rf.l1_error - rd.l1_error) <= 0.05 * rd.l1_error))
      fail_msg("n = %zu: float L1 error %.5g, double %.5g", sizes[s], rf.l1_error, rd.l1_error);
    clmg_homg_result_free(&rd);
    clmg_homg_result_free(&rf);
    free(xd);
    free(xf);
    free_problem(&pd);
    free_problem(&pf);
  }
  /* the classic V-cycle in float too */
  problem p = paper_problem(33, CLMG_FLOAT);
  clmg_homg_result result;
  solve_setup setup = {CLMG_HOMG_VCYCLE, CLMG_FLOAT, 8, 30, 1e-10, 0, 1.5};
  double *x = solve(&p, setup, &result, CLMG_SUCCESS);
  assert_true(result.stagnated);
  assert_true(host_relative_residual(p.n, x, p.f) <= 1e-4);
  clmg_homg_result_free(&result);
  free(x);
  free_problem(&p);
}

/* u = x^2 + y^2 + xy has -laplace(u) = -4, and the five-point stencil is
 * exact on it: every method must return u at the grid points, keeping the
 * Dirichlet values it is given in x. */
static void test_dirichlet_values(void **state) {
  (void)state;
  const struct {
    size_t n;
    clmg_homg_method method;
  } cases[] = {
      {33, CLMG_HOMG_MFMG}, {32, CLMG_HOMG_MFMG}, {33, CLMG_HOMG_VCYCLE}, {33, CLMG_HOMG_FMG}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    size_t n = cases[c].n, N = n * n;
    double *f = malloc(N * 8), *u = malloc(N * 8), *x0 = calloc(N, 8);
    double h = 1.0 / (double)(n - 1);
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < n; ++i) {
        double x = (double)i * h, y = (double)j * h;
        u[j * n + i] = x * x + y * y + x * y;
        f[j * n + i] = -4;
        if (is_boundary(n, i, j))
          x0[j * n + i] = u[j * n + i];
      }
    clmg_vector *df = make_vector(CLMG_DOUBLE, N, f), *dx = make_vector(CLMG_DOUBLE, N, x0);
    clmg_homg *h_solver = make_solver(n, CLMG_DOUBLE, cases[c].method, 8);
    assert_int_equal(clmg_homg_solve(h_solver, df, dx, NULL, NULL), CLMG_SUCCESS);
    double *x = read_vector(dx);
    double worst = 0;
    for (size_t i = 0; i < N; ++i)
      worst = fmax(worst, fabs(x[i] - u[i]));
    if (!(worst <= 1e-9))
      fail_msg("%s, n = %zu: |x - u| up to %.3g", clmg_homg_method_name(cases[c].method), n, worst);
    free(x);
    clmg_vector_destroy(df);
    clmg_vector_destroy(dx);
    clmg_homg_destroy(h_solver);
    free(f);
    free(u);
    free(x0);
  }
}

typedef struct monitor_log {
  int calls, last_without_correction, correction_before_last;
  int steps;
} monitor_log;

static void count_steps(void *data, const clmg_homg_step_info *info, const clmg_vector *x,
                        const clmg_vector *correction) {
  monitor_log *log = data;
  (void)x;
  log->calls++;
  log->steps = info->steps;
  if (info->step == info->steps)
    log->last_without_correction += correction == NULL;
  else
    log->correction_before_last += correction != NULL;
}

/* The MFMG schedule, the per-step record and the monitor. */
/* A solver of the MFMG method with `schedule`. */
static clmg_homg *make_scheduled(size_t n, int maxi, clmg_homg_schedule_type schedule) {
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.max_iterations_per_level = maxi;
  options.schedule = schedule;
  clmg_homg *h = NULL;
  assert_int_equal(clmg_homg_create(context, n, &options, &h), CLMG_SUCCESS);
  return h;
}

static void test_schedule_and_steps(void **state) {
  (void)state;
  clmg_homg *h = make_scheduled(129, 32, CLMG_HOMG_SCHEDULE_ASCENT);
  int levels[400];
  size_t count = 0;
  assert_int_equal(clmg_homg_schedule(h, levels, 400, &count), CLMG_SUCCESS);
  /* 7 levels, 0 the coarsest: 2, 4, 8, 16, 32, then MaxI = 32 twice */
  assert_int_equal(count, 2 + 4 + 8 + 16 + 32 + 32 + 32);
  assert_int_equal(levels[0], 0);
  assert_int_equal(levels[1], 0);
  assert_int_equal(levels[2], 1);
  assert_int_equal(levels[count - 1], 6);
  clmg_homg_destroy(h);
  h = make_scheduled(129, 2, CLMG_HOMG_SCHEDULE_ASCENT);
  assert_int_equal(clmg_homg_schedule(h, NULL, 0, &count), CLMG_SUCCESS);
  assert_int_equal(count, 14);
  clmg_homg_destroy(h);
  /* the default sawtooth on 128^2 (7 levels, MaxI = 2): levels 0, then
   * (k, k-1, k) for k = 1..5, then 6: 17 visits of 2 steps (the paper
   * counts 31) */
  h = make_solver(128, CLMG_DOUBLE, CLMG_HOMG_MFMG, 2);
  assert_int_equal(clmg_homg_schedule(h, levels, 400, &count), CLMG_SUCCESS);
  assert_int_equal(count, 34);
  const int visits[17] = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5, 4, 5, 6};
  for (int v = 0; v < 17; ++v) {
    assert_int_equal(levels[2 * v], visits[v]);
    assert_int_equal(levels[2 * v + 1], visits[v]);
  }
  clmg_homg_destroy(h);
  /* the V-shaped returns: after each new level k a V down to 0 and back */
  h = make_scheduled(17, 2, CLMG_HOMG_SCHEDULE_VSHAPE);
  assert_int_equal(clmg_homg_schedule(h, levels, 400, &count), CLMG_SUCCESS);
  const int vshape[] = {0, 1, 0, 1, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3};
  assert_int_equal(count, 2 * sizeof vshape / sizeof vshape[0]);
  for (size_t v = 0; v < sizeof vshape / sizeof vshape[0]; ++v)
    assert_int_equal(levels[2 * v], vshape[v]);
  clmg_homg_destroy(h);

  problem p = paper_problem(33, CLMG_DOUBLE);
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.max_iterations_per_level = 4;
  options.max_cycles = 2;
  options.relative_tolerance = 0;
  options.record_steps = 1;
  monitor_log log = {0, 0, 0, 0};
  options.monitor = count_steps;
  options.monitor_data = &log;
  assert_int_equal(clmg_homg_create(context, p.n, &options, &h), CLMG_SUCCESS);
  clmg_vector *x = make_vector(CLMG_DOUBLE, p.n * p.n, NULL);
  clmg_homg_result result;
  assert_int_equal(clmg_homg_solve(h, p.df, x, p.du, &result), CLMG_SUCCESS);
  assert_int_equal(result.cycles, 2);
  assert_int_equal(log.calls, 2 * log.steps);
  assert_int_equal(log.last_without_correction, 2);
  assert_int_equal(log.correction_before_last, 2 * (log.steps - 1));
  assert_int_equal(result.steps_length, (size_t)log.steps);
  assert_int_equal(result.iterations, 2 * log.steps);
  /* the last step's record is the state after cycle 1 */
  assert_true(fabs(result.steps[log.steps - 1].l1_error - result.history[1].l1_error) <=
              1e-12 * result.history[1].l1_error);
  /* the first step relaxes only the centre: far from u */
  assert_true(result.steps[0].l1_error > 0.5);
  assert_true(result.history[2].l1_error < result.history[1].l1_error);
  /* one step is one work unit, and a step of the (default) sawtooth on a
   * coarser level adds the pass over that level's points; the pyramid and
   * two residuals come on top */
  int steps[400];
  assert_int_equal(clmg_homg_schedule(h, steps, 400, &count), CLMG_SUCCESS);
  assert_int_equal(count, (size_t)log.steps);
  clmg_homg_info info;
  assert_int_equal(clmg_homg_get_info(h, &info), CLMG_SUCCESS);
  double level_passes = 0;
  for (size_t k = 0; k < count; ++k) {
    int m = info.levels - 1 - steps[k];
    double side = (double)((p.n - 1) >> m) + 1;
    level_passes += m > 0 ? side * side / ((double)p.n * (double)p.n) : 0;
  }
  double cycle_work = result.history[2].work_units - result.history[1].work_units - level_passes;
  assert_true(cycle_work > log.steps + 1 && cycle_work < log.steps + 1.5);
  clmg_homg_result_free(&result);
  clmg_vector_destroy(x);
  clmg_homg_destroy(h);
  free_problem(&p);
}

static void test_bad_arguments(void **state) {
  (void)state;
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  clmg_homg *h = (clmg_homg *)&options; /* any non-NULL value: a failed create resets it */
  const size_t bad_sizes[] = {0, 2, 6, 100, 130, 65537};
  for (size_t s = 0; s < sizeof bad_sizes / sizeof bad_sizes[0]; ++s) {
    assert_int_equal(clmg_homg_create(context, bad_sizes[s], &options, &h),
                     CLMG_ERROR_INVALID_ARGUMENT);
    assert_null(h);
    expect_message("2^k + 1");
  }
  options.max_iterations_per_level = 0;
  assert_int_equal(clmg_homg_create(context, 33, &options, &h), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("MaxI");
  clmg_homg_options_defaults(&options);
  options.omega = 1.5;
  assert_int_equal(clmg_homg_create(context, 33, &options, &h), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("omega");
  clmg_homg_options_defaults(&options);
  options.method = CLMG_HOMG_VCYCLE;
  assert_int_equal(clmg_homg_create(context, 64, &options, &h), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("try n = 65");
  options.max_cycles = 0;
  assert_int_equal(clmg_homg_create(context, 65, &options, &h), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("max_cycles");

  /* vectors that do not fit */
  h = make_solver(17, CLMG_DOUBLE, CLMG_HOMG_MFMG, 4);
  clmg_vector *small = make_vector(CLMG_DOUBLE, 16 * 16, NULL);
  clmg_vector *single = make_vector(CLMG_FLOAT, 17 * 17, NULL);
  clmg_vector *good = make_vector(CLMG_DOUBLE, 17 * 17, NULL);
  assert_int_equal(clmg_homg_solve(h, small, good, NULL, NULL), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("256 elements");
  assert_int_equal(clmg_homg_solve(h, good, single, NULL, NULL), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("float");
  assert_int_equal(clmg_homg_solve(h, good, NULL, NULL, NULL), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_homg_step(h, 1, NULL, good), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("no source");
  assert_int_equal(clmg_homg_set_source(h, good), CLMG_SUCCESS);
  assert_int_equal(clmg_homg_step(h, 4, NULL, good), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("levels 0 to 3");
  assert_int_equal(clmg_homg_step(h, 1, good, good), CLMG_ERROR_INVALID_ARGUMENT);
  /* grid kernels */
  assert_int_equal(clmg_grid_restrict(16, small, good), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("odd");
  assert_int_equal(clmg_grid_jacobi(17, 0.8, good, good, 0, good), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_grid_jacobi(17, 0.8, NULL, good, 0, single), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_grid_interpolate(9, good, 0, good), CLMG_ERROR_INVALID_ARGUMENT);
  expect_message("elements");
  /* a tolerance the cycles cannot meet */
  clmg_homg_destroy(h);
  clmg_homg_options_defaults(&options);
  options.max_cycles = 1;
  assert_int_equal(clmg_homg_create(context, 17, &options, &h), CLMG_SUCCESS);
  problem p = paper_problem(17, CLMG_DOUBLE);
  clmg_homg_result result;
  assert_int_equal(clmg_homg_solve(h, p.df, good, p.du, &result), CLMG_ERROR_NOT_CONVERGED);
  assert_false(result.converged);
  assert_int_equal(result.cycles, 1);
  clmg_homg_result_free(&result);
  free_problem(&p);
  clmg_homg_destroy(h);
  clmg_homg_destroy(NULL);
  clmg_homg_result_free(NULL);
  clmg_vector_destroy(small);
  clmg_vector_destroy(single);
  clmg_vector_destroy(good);

  clmg_homg_method method;
  assert_true(clmg_homg_method_parse("mfmg", &method));
  assert_int_equal(method, CLMG_HOMG_MFMG);
  assert_true(clmg_homg_method_parse("fmg", &method));
  assert_int_equal(method, CLMG_HOMG_FMG);
  assert_false(clmg_homg_method_parse("wcycle", &method));
  assert_string_equal(clmg_homg_method_name(CLMG_HOMG_VCYCLE), "vcycle");
}

/* The GPU kernels (lib/homg/internal.h: CLMG_HOMG_GPU_KERNELS=1 gives
 * solvers created meanwhile cl/homg.cl's GPU side on any device, 2-D
 * launches and homg_tile_*, the variation step out of place): every step
 * against the host, and one cycle of every schedule equal to the CPU
 * kernels' to rounding. On a GPU both sides are the GPU kernels. */
static int gpu_kernels_off(void **state) {
  (void)state;
  return unsetenv("CLMG_HOMG_GPU_KERNELS");
}

static double *one_cycle(const problem *p, clmg_homg_schedule_type schedule,
                         clmg_homg_result *result) {
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.schedule = schedule;
  options.max_iterations_per_level = 8;
  options.max_cycles = 1;
  options.relative_tolerance = 0;
  clmg_homg *h = NULL;
  assert_int_equal(clmg_homg_create(context, p->n, &options, &h), CLMG_SUCCESS);
  clmg_vector *x = make_vector(CLMG_DOUBLE, p->n * p->n, NULL);
  assert_int_equal(clmg_homg_solve(h, p->df, x, p->du, result), CLMG_SUCCESS);
  double *out = read_vector(x);
  clmg_vector_destroy(x);
  clmg_homg_destroy(h);
  return out;
}

static void test_gpu_kernels(void **state) {
  (void)state;
  const size_t sizes[] = {129, 128, 256};
  const clmg_homg_schedule_type schedules[] = {
      CLMG_HOMG_SCHEDULE_SAWTOOTH, CLMG_HOMG_SCHEDULE_ASCENT, CLMG_HOMG_SCHEDULE_VSHAPE};
  for (size_t s = 0; s < 3; ++s) {
    problem p = paper_problem(sizes[s], CLMG_DOUBLE);
    for (int k = 0; k < 3; ++k) {
      clmg_homg_result cpu, gpu;
      assert_int_equal(unsetenv("CLMG_HOMG_GPU_KERNELS"), 0);
      double *want = one_cycle(&p, schedules[k], &cpu);
      assert_int_equal(setenv("CLMG_HOMG_GPU_KERNELS", "1", 1), 0);
      double *got = one_cycle(&p, schedules[k], &gpu);
      char what[96];
      snprintf(what, sizeof what, "one %s cycle with the GPU kernels, n = %zu",
               clmg_homg_schedule_name(schedules[k]), sizes[s]);
      expect_close(what, got, want, sizes[s] * sizes[s], 1e-12);
      if (!(fabs(gpu.l1_error - cpu.l1_error) <= 1e-9 * cpu.l1_error))
        fail_msg("%s: L1 error %.12g, the CPU kernels' %.12g", what, gpu.l1_error, cpu.l1_error);
      clmg_homg_result_free(&cpu);
      clmg_homg_result_free(&gpu);
      free(want);
      free(got);
    }
    free_problem(&p);
  }
  run_homg_step(CLMG_DOUBLE);
  run_homg_step(CLMG_FLOAT);
}

static int open_context(void **state) {
  (void)state;
  rng_seed(0x5eed004ULL);
  return test_open_context(&context, NULL, NULL, 0);
}

static int close_context(void **state) {
  (void)state;
  return test_close_context(&context);
}

int main(void) {
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      BOTH(jacobi),
      BOTH(residual),
      BOTH(restriction),
      BOTH(interpolate),
      BOTH(homg_step),
      BOTH(grid_operator),
      BOTH(transfer_operators),
      cmocka_unit_test(test_vcycle_discrete_solution),
      cmocka_unit_test(test_vcycle_history_matches_host),
      cmocka_unit_test(test_vcycle_rate_mesh_independent),
      cmocka_unit_test(test_fmg_reaches_discretisation_error),
      cmocka_unit_test(test_engine_on_grid_operators),
      cmocka_unit_test(test_methods_agree),
      cmocka_unit_test(test_one_cycle_error_and_maxi),
      cmocka_unit_test(test_discretisation_order),
      cmocka_unit_test(test_four_subdomains_converge),
      cmocka_unit_test(test_float),
      cmocka_unit_test(test_dirichlet_values),
      cmocka_unit_test(test_schedule_and_steps),
      cmocka_unit_test(test_stagnation_after_the_first_cycle),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test_teardown(test_gpu_kernels, gpu_kernels_off),
  };
  return cmocka_run_group_tests_name("homg", tests, open_context, close_context);
}
