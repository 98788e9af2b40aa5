/* Tests of the BLAS-1 operations of clmg/vector.h against a host reference,
 * on random data, for double and float, on whole vectors and on views with
 * nonzero offsets (with guard elements around them), once per backend:
 * CLMG_BLAS1_NATIVE and CLMG_BLAS1_CLBLAST. Each backend is a cmocka group
 * with one context, so each kernel compiles once per run (and later runs load
 * it from the binary cache in $CLMG_CACHE_DIR).
 *
 * Tolerances: the host reference is computed in double (sums in long double)
 * from the very inputs the device got (rounded to float for float). An
 * elementwise result passes if |got - ref| <= tol * sum|terms| (for example
 * |alpha x| + |beta y|), which is the relative error wherever the terms do
 * not cancel; a reduction passes if |got - ref| <= tol * sum|terms|; a norm
 * if |got - ref| <= tol * ref. tol is 1e-12 for double and 1e-5 for float.
 * Copies must be exact. */
#define _XOPEN_SOURCE 700

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

static clmg_context *ctx; /* the group's context */
static const char *backend_name = "";

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    clmg_status check_status_ = (call);                                                            \
    if (check_status_ != CLMG_SUCCESS)                                                             \
      fail_msg("[%s] %s -> %s: %s", backend_name, #call, clmg_status_string(check_status_),        \
               clmg_context_message(ctx));                                                         \
  } while (0)

/* ---- random numbers ---- */

/* A random scalar in [-1, -0.1] or [0.1, 1]: never zero or one by accident. */
static double rng_scalar(void) {
  double u = rng_uniform();
  double s = 0.1 + 0.9 * fabs(u);
  return u < 0 ? -s : s;
}

/* The value as the device holds it for the type. */
static double rounded(clmg_dtype type, double v) {
  return type == CLMG_FLOAT ? (double)(float)v : v;
}

static double tolerance(clmg_dtype type) {
  return type == CLMG_DOUBLE ? 1e-12 : 1e-5;
}

static double *random_values(clmg_dtype type, size_t n) {
  double *v = malloc((n + 1) * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < n; i++)
    v[i] = rounded(type, rng_uniform());
  return v;
}

/* ---- device vectors with guards ---- */

/* A vector under test: either a whole vector (off == 0) or a view at offset
 * `off` into a base with guard elements before and after it. */
typedef struct tvec {
  clmg_dtype type;
  size_t n, off, total;
  clmg_vector *base, *v;
  double *full; /* what the base must hold outside the view */
} tvec;

enum { TAIL_GUARD = 5 };

static void *to_device_layout(clmg_dtype type, const double *values, size_t n) {
  size_t size = type == CLMG_DOUBLE ? sizeof(double) : sizeof(float);
  void *p = malloc(n * size + 1);
  assert_non_null(p);
  if (type == CLMG_DOUBLE)
    memcpy(p, values, n * sizeof(double));
  else
    for (size_t i = 0; i < n; i++)
      ((float *)p)[i] = (float)values[i];
  return p;
}

static void tvec_make(tvec *t, clmg_dtype type, size_t n, size_t off, const double *values) {
  t->type = type;
  t->n = n;
  t->off = off;
  t->total = off ? off + n + TAIL_GUARD : n;
  t->full = random_values(type, t->total);
  memcpy(t->full + off, values, n * sizeof(double));
  t->base = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, t->total, &t->base));
  void *host = to_device_layout(type, t->full, t->total);
  CHECK_OK(clmg_vector_upload(t->base, host));
  free(host);
  if (off) {
    t->v = NULL;
    CHECK_OK(clmg_vector_view(t->base, off, n, &t->v));
  } else {
    t->v = t->base;
  }
}

/* Downloads the vector's values into out (n doubles) and fails if anything
 * outside the view changed. */
static void tvec_read(const tvec *t, double *out, const char *what) {
  size_t size = t->type == CLMG_DOUBLE ? sizeof(double) : sizeof(float);
  void *host = malloc(t->total * size + 1);
  assert_non_null(host);
  CHECK_OK(clmg_vector_download(t->base, host));
  for (size_t i = 0; i < t->total; i++) {
    double v = t->type == CLMG_DOUBLE ? ((double *)host)[i] : (double)((float *)host)[i];
    if (i >= t->off && i < t->off + t->n)
      out[i - t->off] = v;
    else if (v != t->full[i])
      fail_msg("[%s] %s: guard element %zu (view at %zu, n %zu) changed from %.17g to %.17g",
               backend_name, what, i, t->off, t->n, t->full[i], v);
  }
  free(host);
}

static void tvec_free(tvec *t) {
  if (t->v != t->base)
    clmg_vector_destroy(t->v);
  clmg_vector_destroy(t->base);
  free(t->full);
}

/* ---- checks ---- */

typedef struct ccase {
  const char *op;
  clmg_dtype type;
  size_t n;
  int views;
  double alpha, beta;
} ccase;

static void describe(const ccase *c, char *buf, size_t size) {
  snprintf(buf, size, "[%s] %s %s n=%zu%s alpha=%.17g beta=%.17g", backend_name, c->op,
           clmg_dtype_name(c->type), c->n, c->views ? " (views)" : "", c->alpha, c->beta);
}

/* Elementwise: |got - ref| <= tol * scale, per element. scale NULL: exact. */
static void check_elements(const ccase *c, const char *what, const double *got, const double *ref,
                           const double *scale) {
  double tol = tolerance(c->type);
  for (size_t i = 0; i < c->n; i++) {
    double bound = scale ? tol * scale[i] : 0.0;
    if (!(fabs(got[i] - ref[i]) <= bound)) {
      char d[256];
      describe(c, d, sizeof d);
      fail_msg("%s: %s[%zu] = %.17g, expected %.17g (error %.3g, allowed %.3g)", d, what, i, got[i],
               ref[i], fabs(got[i] - ref[i]), bound);
    }
  }
}

static void check_scalar(const ccase *c, const char *what, double got, double ref, double bound) {
  if (!(fabs(got - ref) <= bound)) {
    char d[256];
    describe(c, d, sizeof d);
    fail_msg("%s: %s = %.17g, expected %.17g (error %.3g, allowed %.3g)", d, what, got, ref,
             fabs(got - ref), bound);
  }
}

/* Fails unless the vector still holds `values` exactly (an input operand). */
static void check_unchanged(const ccase *c, const char *what, const tvec *t, const double *values) {
  double *got = malloc((t->n + 1) * sizeof *got);
  assert_non_null(got);
  tvec_read(t, got, what);
  check_elements(c, what, got, values, NULL);
  free(got);
}

/* ---- the cases: lengths and layouts ---- */

static const size_t lengths[] = {1000, 1, 1000003, 7};
enum { NLENGTHS = sizeof lengths / sizeof lengths[0] };

/* The offset of operand k in a view case (different for each operand). */
static size_t view_offset(int views, int k) {
  static const size_t offsets[] = {1, 4, 9, 16, 25};
  return views ? offsets[k] : 0;
}

static void require_type(clmg_dtype type) {
  if (type == CLMG_DOUBLE && !clmg_context_device(ctx)->has_fp64) {
    print_message("the device has no double precision: skipped\n");
    skip();
  }
}

#define FOR_EACH_CASE(c, opname, type)                                                             \
  for (int li_ = 0; li_ < NLENGTHS; li_++)                                                         \
    for (int views_ = 0; views_ < 2; views_++)                                                     \
      for (ccase c = {opname, type, lengths[li_], views_, rounded(type, rng_scalar()),             \
                      rounded(type, rng_scalar())},                                                \
                 *once_ = &c;                                                                      \
           once_; once_ = NULL)

/* Defines run_name(type): require_type, then `call` (which sees the case as
 * c) once per case of FOR_EACH_CASE, the case named #name. */
#define CASE_RUNNER(name, call)                                                                    \
  static void run_##name(clmg_dtype type) {                                                        \
    require_type(type);                                                                            \
    FOR_EACH_CASE(c, #name, type) {                                                                \
      call;                                                                                        \
    }                                                                                              \
  }

/* ---- one test per operation ---- */

static void run_copy(clmg_dtype type) {
  require_type(type);
  FOR_EACH_CASE(c, "copy", type) {
    double *x = random_values(type, c.n), *y = random_values(type, c.n);
    double *got = malloc((c.n + 1) * sizeof *got);
    assert_non_null(got);
    tvec tx, ty;
    tvec_make(&tx, type, c.n, view_offset(c.views, 0), x);
    tvec_make(&ty, type, c.n, view_offset(c.views, 1), y);
    CHECK_OK(clmg_copy(tx.v, ty.v));
    tvec_read(&ty, got, "y");
    check_elements(&c, "y", got, x, NULL);
    check_unchanged(&c, "x", &tx, x);
    tvec_free(&tx);
    tvec_free(&ty);
    free(x);
    free(y);
    free(got);
  }
}

/* gather (packed[i] = dense[index[i]]) and scatter_add (dense[index[i]] +=
 * alpha packed[i]) with a random, shuffled choice of distinct indices: the
 * halo packing and the off-process rows of clmg_mpi. */
static void run_gather_scatter(clmg_dtype type) {
  require_type(type);
  FOR_EACH_CASE(c, "gather_scatter", type) {
    size_t m = c.n / 2 + 1;
    uint32_t *index = malloc(c.n * sizeof *index);
    assert_non_null(index);
    for (size_t i = 0; i < c.n; i++)
      index[i] = (uint32_t)i;
    for (size_t i = c.n - 1; i > 0; i--) {
      size_t j = rng_below(i + 1);
      uint32_t t = index[i];
      index[i] = index[j];
      index[j] = t;
    }
    clmg_vector *vindex = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_UINT32, m, &vindex));
    CHECK_OK(clmg_vector_upload(vindex, index));
    double *dense = random_values(type, c.n), *packed = random_values(type, m);
    double *got = malloc((c.n + 1) * sizeof *got), *ref = malloc((c.n + 1) * sizeof *ref);
    double *scale = malloc((c.n + 1) * sizeof *scale);
    assert_non_null(got);
    assert_non_null(ref);
    assert_non_null(scale);
    tvec td, tp;
    tvec_make(&td, type, c.n, view_offset(c.views, 0), dense);
    tvec_make(&tp, type, m, view_offset(c.views, 1), packed);

    CHECK_OK(clmg_gather(td.v, vindex, tp.v));
    tvec_read(&tp, got, "packed");
    for (size_t i = 0; i < m; i++)
      ref[i] = dense[index[i]];
    ccase packed_case = c;
    packed_case.n = m;
    check_elements(&packed_case, "packed", got, ref, NULL);
    check_unchanged(&c, "dense", &td, dense);

    CHECK_OK(clmg_scatter_add(c.alpha, tp.v, vindex, td.v));
    tvec_read(&td, got, "dense");
    for (size_t i = 0; i < c.n; i++) {
      ref[i] = dense[i];
      scale[i] = fabs(dense[i]) + 1;
    }
    for (size_t i = 0; i < m; i++)
      ref[index[i]] += c.alpha * dense[index[i]];
    check_elements(&c, "dense", got, ref, scale);

    /* an index vector of another type is refused */
    clmg_vector *wrong = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_INT32, m, &wrong));
    assert_int_equal(clmg_gather(td.v, wrong, tp.v), CLMG_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clmg_scatter_add(1.0, tp.v, wrong, td.v), CLMG_ERROR_INVALID_ARGUMENT);
    clmg_vector_destroy(wrong);
    clmg_vector_destroy(vindex);
    tvec_free(&td);
    tvec_free(&tp);
    free(index);
    free(dense);
    free(packed);
    free(got);
    free(ref);
    free(scale);
  }
}

static void scal_case(const ccase *c) {
  double *x = random_values(c->type, c->n);
  double *ref = malloc((c->n + 1) * sizeof *ref), *scale = malloc((c->n + 1) * sizeof *scale);
  double *got = malloc((c->n + 1) * sizeof *got);
  assert_true(ref && scale && got);
  for (size_t i = 0; i < c->n; i++) {
    ref[i] = c->alpha * x[i];
    scale[i] = fabs(ref[i]);
  }
  tvec tx;
  tvec_make(&tx, c->type, c->n, view_offset(c->views, 2), x);
  CHECK_OK(clmg_scal(c->alpha, tx.v));
  tvec_read(&tx, got, "x");
  check_elements(c, "x", got, ref, scale);
  tvec_free(&tx);
  free(x);
  free(ref);
  free(scale);
  free(got);
}

CASE_RUNNER(scal, scal_case(&c))

/* y = alpha x + beta y, through axpy (beta must be 1), axpby or waxpby. */
enum update_kind { AXPY, AXPBY, WAXPBY, AXPY_NRM2 };

static void update_case(const ccase *c, enum update_kind kind) {
  size_t n = c->n;
  double *x = random_values(c->type, n), *y = random_values(c->type, n);
  double *w = random_values(c->type, n);
  double *ref = malloc((n + 1) * sizeof *ref), *scale = malloc((n + 1) * sizeof *scale);
  double *got = malloc((n + 1) * sizeof *got);
  assert_true(ref && scale && got);
  double beta = kind == AXPY || kind == AXPY_NRM2 ? 1.0 : c->beta;
  long double sq = 0.0L, sq_scale = 0.0L;
  for (size_t i = 0; i < n; i++) {
    ref[i] = c->alpha * x[i] + beta * y[i];
    scale[i] = fabs(c->alpha * x[i]) + fabs(beta * y[i]);
    sq += (long double)ref[i] * ref[i];
    sq_scale += (long double)scale[i] * scale[i];
  }
  tvec tx, ty, tw;
  tvec_make(&tx, c->type, n, view_offset(c->views, 0), x);
  tvec_make(&ty, c->type, n, view_offset(c->views, 1), y);
  double norm = -1.0;
  switch (kind) {
  case AXPY:
    CHECK_OK(clmg_axpy(c->alpha, tx.v, ty.v));
    break;
  case AXPBY:
    CHECK_OK(clmg_axpby(c->alpha, tx.v, c->beta, ty.v));
    break;
  case AXPY_NRM2:
    CHECK_OK(clmg_axpy_nrm2(c->alpha, tx.v, ty.v, &norm));
    break;
  case WAXPBY:
    tvec_make(&tw, c->type, n, view_offset(c->views, 2), w);
    CHECK_OK(clmg_waxpby(c->alpha, tx.v, c->beta, ty.v, tw.v));
    tvec_read(&tw, got, "w");
    check_elements(c, "w", got, ref, scale);
    check_unchanged(c, "y", &ty, y);
    tvec_free(&tw);
    break;
  }
  if (kind != WAXPBY) {
    tvec_read(&ty, got, "y");
    check_elements(c, "y", got, ref, scale);
  }
  if (kind == AXPY_NRM2) {
    /* The norm's error is bounded by the elements' (through scale) plus the
     * reduction's. */
    check_scalar(c, "norm", norm, sqrtl(sq), tolerance(c->type) * sqrtl(sq_scale));
  }
  check_unchanged(c, "x", &tx, x);
  tvec_free(&tx);
  tvec_free(&ty);
  free(x);
  free(y);
  free(w);
  free(ref);
  free(scale);
  free(got);
}

CASE_RUNNER(axpy, update_case(&c, AXPY))
CASE_RUNNER(axpby, update_case(&c, AXPBY))
CASE_RUNNER(waxpby, update_case(&c, WAXPBY))
CASE_RUNNER(axpy_nrm2, update_case(&c, AXPY_NRM2))

/* dot, nrm2 and dot2 on the same data. */
enum reduce_kind { DOT, NRM2, DOT2 };

static void reduce_case(const ccase *c, enum reduce_kind kind) {
  size_t n = c->n;
  double *x = random_values(c->type, n), *y = random_values(c->type, n);
  long double xy = 0.0L, xy_mag = 0.0L, xx = 0.0L;
  for (size_t i = 0; i < n; i++) {
    xy += (long double)x[i] * y[i];
    xy_mag += fabsl((long double)x[i] * y[i]);
    xx += (long double)x[i] * x[i];
  }
  double tol = tolerance(c->type);
  tvec tx, ty;
  tvec_make(&tx, c->type, n, view_offset(c->views, 3), x);
  tvec_make(&ty, c->type, n, view_offset(c->views, 1), y);
  double r1 = NAN, r2 = NAN;
  switch (kind) {
  case DOT:
    CHECK_OK(clmg_dot(tx.v, ty.v, &r1));
    check_scalar(c, "x.y", r1, xy, tol * xy_mag);
    break;
  case NRM2:
    CHECK_OK(clmg_nrm2(tx.v, &r1));
    check_scalar(c, "||x||", r1, sqrtl(xx), tol * sqrtl(xx));
    break;
  case DOT2:
    CHECK_OK(clmg_dot2(tx.v, ty.v, &r1, &r2));
    check_scalar(c, "x.y", r1, xy, tol * xy_mag);
    check_scalar(c, "x.x", r2, xx, tol * xx);
    break;
  }
  check_unchanged(c, "x", &tx, x);
  check_unchanged(c, "y", &ty, y);
  tvec_free(&tx);
  tvec_free(&ty);
  free(x);
  free(y);
}

CASE_RUNNER(dot, reduce_case(&c, DOT))
CASE_RUNNER(nrm2, reduce_case(&c, NRM2))
CASE_RUNNER(dot2, reduce_case(&c, DOT2))

/* x = x + alpha p; r = r - alpha q; rr = r.r */
static void cg_case(const ccase *c, int p_is_q) {
  size_t n = c->n;
  double *p = random_values(c->type, n), *q = random_values(c->type, n);
  double *x = random_values(c->type, n), *r = random_values(c->type, n);
  if (p_is_q)
    memcpy(q, p, n * sizeof *q);
  double *xref = malloc((n + 1) * sizeof *xref), *xscale = malloc((n + 1) * sizeof *xscale);
  double *rref = malloc((n + 1) * sizeof *rref), *rscale = malloc((n + 1) * sizeof *rscale);
  double *got = malloc((n + 1) * sizeof *got);
  assert_true(xref && xscale && rref && rscale && got);
  long double rr = 0.0L, rr_scale = 0.0L;
  for (size_t i = 0; i < n; i++) {
    xref[i] = x[i] + c->alpha * p[i];
    xscale[i] = fabs(x[i]) + fabs(c->alpha * p[i]);
    rref[i] = r[i] - c->alpha * q[i];
    rscale[i] = fabs(r[i]) + fabs(c->alpha * q[i]);
    rr += (long double)rref[i] * rref[i];
    rr_scale += (long double)rscale[i] * rscale[i];
  }
  tvec tp, tq, tx, tr;
  tvec_make(&tp, c->type, n, view_offset(c->views, 0), p);
  if (!p_is_q)
    tvec_make(&tq, c->type, n, view_offset(c->views, 1), q);
  tvec_make(&tx, c->type, n, view_offset(c->views, 2), x);
  tvec_make(&tr, c->type, n, view_offset(c->views, 3), r);
  double rr_got = NAN;
  CHECK_OK(clmg_cg_update(c->alpha, tp.v, p_is_q ? tp.v : tq.v, tx.v, tr.v, &rr_got));
  tvec_read(&tx, got, "x");
  check_elements(c, "x", got, xref, xscale);
  tvec_read(&tr, got, "r");
  check_elements(c, "r", got, rref, rscale);
  check_scalar(c, "r.r", rr_got, rr, 2.0 * tolerance(c->type) * rr_scale);
  check_unchanged(c, "p", &tp, p);
  if (!p_is_q) {
    check_unchanged(c, "q", &tq, q);
    tvec_free(&tq);
  }
  tvec_free(&tp);
  tvec_free(&tx);
  tvec_free(&tr);
  free(p);
  free(q);
  free(x);
  free(r);
  free(xref);
  free(xscale);
  free(rref);
  free(rscale);
  free(got);
}

CASE_RUNNER(cg_update, cg_case(&c, 0))

/* (r.u, w.u, r.r) in one pass; u is r in plain CG. */
static void dot3_case(const ccase *c, int u_is_r) {
  size_t n = c->n;
  double *r = random_values(c->type, n), *u = random_values(c->type, n);
  double *w = random_values(c->type, n);
  if (u_is_r)
    memcpy(u, r, n * sizeof *u);
  long double ru = 0.0L, ru_mag = 0.0L, wu = 0.0L, wu_mag = 0.0L, rr = 0.0L;
  for (size_t i = 0; i < n; i++) {
    ru += (long double)r[i] * u[i];
    ru_mag += fabsl((long double)r[i] * u[i]);
    wu += (long double)w[i] * u[i];
    wu_mag += fabsl((long double)w[i] * u[i]);
    rr += (long double)r[i] * r[i];
  }
  double tol = tolerance(c->type);
  tvec tr, tu, tw;
  tvec_make(&tr, c->type, n, view_offset(c->views, 0), r);
  if (!u_is_r)
    tvec_make(&tu, c->type, n, view_offset(c->views, 1), u);
  tvec_make(&tw, c->type, n, view_offset(c->views, 2), w);
  double got_ru = NAN, got_wu = NAN, got_rr = NAN;
  CHECK_OK(clmg_dot3(tr.v, u_is_r ? tr.v : tu.v, tw.v, &got_ru, &got_wu, &got_rr));
  check_scalar(c, "r.u", got_ru, ru, tol * ru_mag);
  check_scalar(c, "w.u", got_wu, wu, tol * wu_mag);
  check_scalar(c, "r.r", got_rr, rr, tol * rr);
  check_unchanged(c, "r", &tr, r);
  check_unchanged(c, "w", &tw, w);
  if (!u_is_r) {
    check_unchanged(c, "u", &tu, u);
    tvec_free(&tu);
  }
  tvec_free(&tr);
  tvec_free(&tw);
  free(r);
  free(u);
  free(w);
}

static void run_dot3(clmg_dtype type) {
  require_type(type);
  FOR_EACH_CASE(c, "dot3", type) {
    dot3_case(&c, 0);
    dot3_case(&c, 1);
  }
}

/* p = u + beta p; s = w + beta s; x += alpha p; r -= alpha s (u may be r). */
static void cg_step_case(const ccase *c, int u_is_r) {
  size_t n = c->n;
  double *u = random_values(c->type, n), *w = random_values(c->type, n);
  double *p = random_values(c->type, n), *s = random_values(c->type, n);
  double *x = random_values(c->type, n), *r = random_values(c->type, n);
  if (u_is_r)
    memcpy(u, r, n * sizeof *u);
  double *want[4], *scale[4];
  for (int k = 0; k < 4; k++) {
    want[k] = malloc((n + 1) * sizeof(double));
    scale[k] = malloc((n + 1) * sizeof(double));
    assert_true(want[k] && scale[k]);
  }
  double alpha = c->alpha, beta = c->beta;
  for (size_t i = 0; i < n; i++) {
    double p_new = u[i] + beta * p[i], s_new = w[i] + beta * s[i];
    double p_mag = fabs(u[i]) + fabs(beta * p[i]), s_mag = fabs(w[i]) + fabs(beta * s[i]);
    want[0][i] = p_new;
    scale[0][i] = p_mag;
    want[1][i] = s_new;
    scale[1][i] = s_mag;
    want[2][i] = x[i] + alpha * p_new;
    scale[2][i] = fabs(x[i]) + fabs(alpha) * p_mag;
    want[3][i] = r[i] - alpha * s_new;
    scale[3][i] = fabs(r[i]) + fabs(alpha) * s_mag;
  }
  tvec tu, tw, tp, ts, tx, tr;
  if (!u_is_r)
    tvec_make(&tu, c->type, n, view_offset(c->views, 0), u);
  tvec_make(&tw, c->type, n, view_offset(c->views, 1), w);
  tvec_make(&tp, c->type, n, view_offset(c->views, 2), p);
  tvec_make(&ts, c->type, n, view_offset(c->views, 3), s);
  tvec_make(&tx, c->type, n, view_offset(c->views, 4), x);
  tvec_make(&tr, c->type, n, view_offset(c->views, 0), r);
  CHECK_OK(clmg_cg_step(alpha, beta, u_is_r ? tr.v : tu.v, tw.v, tp.v, ts.v, tx.v, tr.v));
  double *got = malloc((n + 1) * sizeof *got);
  assert_non_null(got);
  const tvec *outputs[4] = {&tp, &ts, &tx, &tr};
  const char *names[4] = {"p", "s", "x", "r"};
  for (int k = 0; k < 4; k++) {
    tvec_read(outputs[k], got, names[k]);
    check_elements(c, names[k], got, want[k], scale[k]);
  }
  check_unchanged(c, "w", &tw, w);
  if (!u_is_r) {
    check_unchanged(c, "u", &tu, u);
    tvec_free(&tu);
  }
  tvec_free(&tw);
  tvec_free(&tp);
  tvec_free(&ts);
  tvec_free(&tx);
  tvec_free(&tr);
  for (int k = 0; k < 4; k++) {
    free(want[k]);
    free(scale[k]);
  }
  free(got);
  free(u);
  free(w);
  free(p);
  free(s);
  free(x);
  free(r);
}

static void run_cg_step(clmg_dtype type) {
  require_type(type);
  FOR_EACH_CASE(c, "cg_step", type) {
    cg_step_case(&c, 0);
    cg_step_case(&c, 1);
  }
}

/* ---- special scalars, aliasing, empty vectors ---- */

static void run_special_scalars(clmg_dtype type) {
  require_type(type);
  const double pairs[][2] = {{0.0, 0.75}, {-0.625, 0.0}, {0.0, 0.0}, {1.0, 1.0},
                             {-1.0, 1.0}, {1.0, -1.0},   {2.0, 0.5}};
  for (int views = 0; views < 2; views++) {
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
      ccase c = {"", type, 1000, views, pairs[k][0], pairs[k][1]};
      c.op = "scal";
      scal_case(&c);
      c.op = "axpy";
      update_case(&c, AXPY);
      c.op = "axpby";
      update_case(&c, AXPBY);
      c.op = "waxpby";
      update_case(&c, WAXPBY);
      c.op = "axpy_nrm2";
      update_case(&c, AXPY_NRM2);
      c.op = "cg_update";
      cg_case(&c, 0);
    }
  }
}

/* Operands that are the same vector, or overlapping read-only views. */
static void run_aliasing(clmg_dtype type) {
  require_type(type);
  const double tol = tolerance(type);
  for (int li = 0; li < NLENGTHS; li++) {
    size_t n = lengths[li];
    ccase c = {"aliasing", type, n, 0, rounded(type, rng_scalar()), rounded(type, rng_scalar())};
    double *x = random_values(type, n), *y = random_values(type, n);
    double *got = malloc((n + 1) * sizeof *got), *ref = malloc((n + 1) * sizeof *ref);
    double *scale = malloc((n + 1) * sizeof *scale);
    assert_true(got && ref && scale);
    long double xx = 0.0L;
    for (size_t i = 0; i < n; i++)
      xx += (long double)x[i] * x[i];
    tvec tx, ty;
    tvec_make(&tx, type, n, 3, x);
    tvec_make(&ty, type, n, 0, y);

    double r1 = NAN, r2 = NAN;
    c.op = "dot(x, x)";
    CHECK_OK(clmg_dot(tx.v, tx.v, &r1));
    check_scalar(&c, "x.x", r1, xx, tol * xx);
    c.op = "dot2(x, x)";
    CHECK_OK(clmg_dot2(tx.v, tx.v, &r1, &r2));
    check_scalar(&c, "x.y", r1, xx, tol * xx);
    check_scalar(&c, "x.x", r2, xx, tol * xx);

    /* Two overlapping views of one base, read only. */
    if (n > 1) {
      clmg_vector *a = NULL, *b = NULL;
      CHECK_OK(clmg_vector_view(tx.v, 0, n - 1, &a));
      CHECK_OK(clmg_vector_view(tx.v, 1, n - 1, &b));
      long double shifted = 0.0L, mag = 0.0L;
      for (size_t i = 0; i + 1 < n; i++) {
        shifted += (long double)x[i] * x[i + 1];
        mag += fabsl((long double)x[i] * x[i + 1]);
      }
      c.op = "dot of overlapping views";
      CHECK_OK(clmg_dot(a, b, &r1));
      check_scalar(&c, "x[:-1].x[1:]", r1, shifted, tol * mag);
      clmg_vector_destroy(a);
      clmg_vector_destroy(b);
    }

    /* w = alpha x + beta y with w = x: x = alpha x + beta y. */
    c.op = "waxpby(w = x)";
    for (size_t i = 0; i < n; i++) {
      ref[i] = c.alpha * x[i] + c.beta * y[i];
      scale[i] = fabs(c.alpha * x[i]) + fabs(c.beta * y[i]);
    }
    CHECK_OK(clmg_waxpby(c.alpha, tx.v, c.beta, ty.v, tx.v));
    tvec_read(&tx, got, "x");
    check_elements(&c, "x", got, ref, scale);
    check_unchanged(&c, "y", &ty, y);
    memcpy(x, got, n * sizeof *x);

    /* w = y: y = alpha x + beta y. */
    c.op = "waxpby(w = y)";
    for (size_t i = 0; i < n; i++) {
      ref[i] = c.alpha * x[i] + c.beta * y[i];
      scale[i] = fabs(c.alpha * x[i]) + fabs(c.beta * y[i]);
    }
    CHECK_OK(clmg_waxpby(c.alpha, tx.v, c.beta, ty.v, ty.v));
    tvec_read(&ty, got, "y");
    check_elements(&c, "y", got, ref, scale);
    check_unchanged(&c, "x", &tx, x);

    tvec_free(&tx);
    tvec_free(&ty);
    free(x);
    free(y);
    free(got);
    free(ref);
    free(scale);

    /* cg_update with p = q. */
    c.op = "cg_update(p = q)";
    c.views = 1;
    cg_case(&c, 1);
  }
}

static void run_empty(clmg_dtype type) {
  require_type(type);
  clmg_vector *a = NULL, *b = NULL, *w = NULL, *e = NULL, *base = NULL, *view = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, 0, &a));
  CHECK_OK(clmg_vector_create(ctx, type, 0, &e));
  CHECK_OK(clmg_vector_create(ctx, type, 0, &b));
  CHECK_OK(clmg_vector_create(ctx, type, 0, &w));
  CHECK_OK(clmg_vector_create(ctx, type, 10, &base));
  CHECK_OK(clmg_vector_fill(base, 0.5));
  CHECK_OK(clmg_vector_view(base, 4, 0, &view));
  clmg_vector *xs[] = {a, view};
  for (int k = 0; k < 2; k++) {
    clmg_vector *x = xs[k];
    double r1 = 7.0, r2 = 7.0;
    CHECK_OK(clmg_copy(x, b));
    CHECK_OK(clmg_scal(0.5, x));
    CHECK_OK(clmg_axpy(0.5, x, b));
    CHECK_OK(clmg_axpby(0.5, x, 0.25, b));
    CHECK_OK(clmg_waxpby(0.5, x, 0.25, b, w));
    CHECK_OK(clmg_dot(x, b, &r1));
    assert_true(r1 == 0.0);
    r1 = 7.0;
    CHECK_OK(clmg_nrm2(x, &r1));
    assert_true(r1 == 0.0);
    r1 = 7.0;
    CHECK_OK(clmg_axpy_nrm2(0.5, x, b, &r1));
    assert_true(r1 == 0.0);
    r1 = 7.0;
    CHECK_OK(clmg_cg_update(0.5, x, b, w, e, &r1));
    assert_true(r1 == 0.0);
    r1 = 7.0;
    CHECK_OK(clmg_dot2(x, b, &r1, &r2));
    assert_true(r1 == 0.0 && r2 == 0.0);
  }
  /* The base of the empty view is untouched. */
  double host[10];
  float hostf[10];
  CHECK_OK(clmg_vector_download(base, type == CLMG_DOUBLE ? (void *)host : (void *)hostf));
  for (int i = 0; i < 10; i++)
    assert_true((type == CLMG_DOUBLE ? host[i] : hostf[i]) == 0.5);
  clmg_vector_destroy(view);
  clmg_vector_destroy(base);
  clmg_vector_destroy(a);
  clmg_vector_destroy(b);
  clmg_vector_destroy(w);
  clmg_vector_destroy(e);
}

/* A reduction right after a big one and a small one: the scratch space of
 * reductions is reused correctly, and repeated calls agree. */
static void run_repeat(clmg_dtype type) {
  require_type(type);
  const size_t sizes[] = {1000003, 3, 65537, 1};
  for (int k = 0; k < 4; k++) {
    size_t n = sizes[k];
    ccase c = {"repeated dot", type, n, 0, 0.0, 0.0};
    double *x = random_values(type, n), *y = random_values(type, n);
    long double xy = 0.0L, mag = 0.0L;
    for (size_t i = 0; i < n; i++) {
      xy += (long double)x[i] * y[i];
      mag += fabsl((long double)x[i] * y[i]);
    }
    tvec tx, ty;
    tvec_make(&tx, type, n, 0, x);
    tvec_make(&ty, type, n, 0, y);
    double first = NAN;
    for (int rep = 0; rep < 3; rep++) {
      double r = NAN;
      CHECK_OK(clmg_dot(tx.v, ty.v, &r));
      check_scalar(&c, "x.y", r, xy, tolerance(type) * mag);
      if (rep == 0)
        first = r;
      else
        check_scalar(&c, "x.y again", r, first, tolerance(type) * mag);
    }
    tvec_free(&tx);
    tvec_free(&ty);
    free(x);
    free(y);
  }
}

/* ---- groups ---- */

static int open_context(clmg_blas1_backend backend) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.blas1_backend = backend;
  return test_open_context(&ctx, &options, backend_name, 1);
}

static int setup_native(void **state) {
  (void)state;
  backend_name = "native";
  return open_context(CLMG_BLAS1_NATIVE);
}

static int setup_clblast(void **state) {
  (void)state;
  backend_name = "clblast";
  return open_context(CLMG_BLAS1_CLBLAST);
}

/* nrm2 and axpy_nrm2 of vectors whose squares leave the range of the type
 * (1e-200 and 1e+300 in double, 1e-30 and 1e+30 in float): the norm is
 * neither 0 nor Inf, and matches a host reference that scales first. Also
 * the zero vector (0), and Inf and NaN, which pass through. */
static void run_extreme_norms(clmg_dtype type) {
  require_type(type);
  const size_t n = 3001; /* several work-groups with uneven shares */
  const double scales[] = {type == CLMG_DOUBLE ? 1e-200 : 1e-30, type == CLMG_DOUBLE ? 1e300 : 1e30,
                           type == CLMG_DOUBLE ? 1e-160 : 1e-20};
  double *host = malloc(n * sizeof *host);
  float *host_float = malloc(n * sizeof *host_float);
  assert_non_null(host);
  assert_non_null(host_float);
  clmg_vector *x = NULL, *zero = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &x));
  CHECK_OK(clmg_vector_create(ctx, type, n, &zero));
  CHECK_OK(clmg_vector_fill(zero, 0.0));
  for (size_t s = 0; s < sizeof scales / sizeof scales[0]; ++s) {
    double largest = 0;
    for (size_t i = 0; i < n; ++i) {
      host[i] = (2 * rng_uniform() - 1) * scales[s];
      if (type == CLMG_FLOAT)
        host[i] = host_float[i] = (float)host[i];
      largest = fmax(largest, fabs(host[i]));
    }
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
      sum += (host[i] / largest) * (host[i] / largest);
    const double expected = largest * sqrt(sum);
    CHECK_OK(clmg_vector_upload(x, type == CLMG_DOUBLE ? (void *)host : (void *)host_float));
    double norm = 0;
    CHECK_OK(clmg_nrm2(x, &norm));
    const double tolerance = type == CLMG_DOUBLE ? 1e-12 : 1e-5;
    if (!(fabs(norm - expected) <= tolerance * expected))
      fail_msg("nrm2 at scale %g: %.17g, expected %.17g", scales[s], norm, expected);
    /* x = 0 x + x keeps x: the same norm through the fused update */
    CHECK_OK(clmg_axpy_nrm2(0.0, zero, x, &norm));
    if (!(fabs(norm - expected) <= tolerance * expected))
      fail_msg("axpy_nrm2 at scale %g: %.17g, expected %.17g", scales[s], norm, expected);
  }
  double norm = 1;
  CHECK_OK(clmg_nrm2(zero, &norm));
  assert_true(norm == 0.0);
  CHECK_OK(clmg_vector_fill(x, INFINITY));
  CHECK_OK(clmg_nrm2(x, &norm));
  assert_true(isinf(norm));
  CHECK_OK(clmg_vector_fill(x, NAN));
  CHECK_OK(clmg_nrm2(x, &norm));
  assert_true(isnan(norm));
  clmg_vector_destroy(x);
  clmg_vector_destroy(zero);
  free(host);
  free(host_float);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

TYPED_TESTS(copy)
TYPED_TESTS(scal)
TYPED_TESTS(axpy)
TYPED_TESTS(axpby)
TYPED_TESTS(waxpby)
TYPED_TESTS(dot)
TYPED_TESTS(nrm2)
TYPED_TESTS(axpy_nrm2)
TYPED_TESTS(cg_update)
TYPED_TESTS(dot2)
TYPED_TESTS(dot3)
TYPED_TESTS(cg_step)
TYPED_TESTS(special_scalars)
TYPED_TESTS(aliasing)
TYPED_TESTS(empty)
TYPED_TESTS(repeat)
TYPED_TESTS(extreme_norms)
TYPED_TESTS(gather_scatter)

int main(void) {
  rng_seed(0x452821e638d01377u);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      BOTH(copy),
      BOTH(scal),
      BOTH(axpy),
      BOTH(axpby),
      BOTH(waxpby),
      BOTH(dot),
      BOTH(nrm2),
      BOTH(axpy_nrm2),
      BOTH(cg_update),
      BOTH(dot2),
      BOTH(dot3),
      BOTH(cg_step),
      BOTH(special_scalars),
      BOTH(aliasing),
      BOTH(empty),
      BOTH(repeat),
      BOTH(extreme_norms),
      BOTH(gather_scatter),
  };
  int failures = cmocka_run_group_tests_name("blas1-native", tests, setup_native, teardown);
  failures += cmocka_run_group_tests_name("blas1-clblast", tests, setup_clblast, teardown);
  return failures;
}
