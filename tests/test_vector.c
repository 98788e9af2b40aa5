/* Tests of device vectors: creation of every type, transfers, fill, copy,
 * views, device-memory accounting, allocation failures and argument checks.
 * One context for the whole suite, on the device named by CLMG_DEVICE. */
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

/* ---- helpers ---- */

static clmg_context *ctx; /* the suite's context (group setup) */

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)

/* An invalid-argument failure that also left a message in the context. A
 * successful call first clears the message (clmg clears it at the start of
 * every public call), so a stale message cannot pass for a new one; were it
 * not cleared, only the status is checked. */
#define CHECK_INVALID(call)                                                                        \
  do {                                                                                             \
    CHECK_OK(clmg_finish(ctx));                                                                    \
    int cleared_ = clmg_context_message(ctx)[0] == '\0';                                           \
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, call);                                               \
    if (cleared_ && clmg_context_message(ctx)[0] == '\0')                                          \
      fail_msg("%s: no message in the context", #call);                                            \
  } while (0)

static const clmg_dtype all_types[] = {CLMG_DOUBLE, CLMG_FLOAT, CLMG_INT32, CLMG_UINT32,
                                       CLMG_INT64};
enum { NTYPES = 5 };

static size_t type_size(clmg_dtype t) {
  return t == CLMG_DOUBLE || t == CLMG_INT64 ? 8 : 4;
}

/* n random elements of type t, including some special values for the
 * floating-point types (bit patterns must survive a round trip). */
static void *random_data(clmg_dtype t, size_t n) {
  void *p = malloc(n * type_size(t) + 1);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) {
    double v = rng_uniform() * 1e3;
    switch (t) {
    case CLMG_DOUBLE:
      ((double *)p)[i] = v;
      break;
    case CLMG_FLOAT:
      ((float *)p)[i] = (float)v;
      break;
    case CLMG_INT32:
      ((int32_t *)p)[i] = (int32_t)(uint32_t)rng_next();
      break;
    case CLMG_UINT32:
      ((uint32_t *)p)[i] = (uint32_t)rng_next();
      break;
    case CLMG_INT64:
      ((int64_t *)p)[i] = (int64_t)rng_next();
      break;
    }
  }
  if (n >= 8 && t == CLMG_DOUBLE) {
    double *d = p;
    d[1] = -0.0;
    d[3] = INFINITY;
    d[4] = -INFINITY;
    d[5] = NAN;
    d[6] = 4.9406564584124654e-324; /* subnormal */
    d[7] = 1.7976931348623157e308;
  }
  if (n >= 8 && t == CLMG_FLOAT) {
    float *f = p;
    f[1] = -0.0f;
    f[3] = INFINITY;
    f[4] = -INFINITY;
    f[5] = NAN;
    f[6] = 1.4e-45f;
    f[7] = 3.4028235e38f;
  }
  return p;
}

/* Host value of element i of a buffer of type t, as a double. */
static double element(clmg_dtype t, const void *p, size_t i) {
  switch (t) {
  case CLMG_DOUBLE:
    return ((const double *)p)[i];
  case CLMG_FLOAT:
    return ((const float *)p)[i];
  case CLMG_INT32:
    return ((const int32_t *)p)[i];
  case CLMG_UINT32:
    return ((const uint32_t *)p)[i];
  case CLMG_INT64:
    return (double)((const int64_t *)p)[i];
  }
  return NAN;
}

static clmg_vector *new_vector(clmg_dtype t, size_t n) {
  clmg_vector *v = NULL;
  CHECK_OK(clmg_vector_create(ctx, t, n, &v));
  assert_non_null(v);
  return v;
}

static void *download(const clmg_vector *v) {
  size_t n = clmg_vector_length(v);
  void *p = malloc(n * type_size(clmg_vector_type(v)) + 1);
  assert_non_null(p);
  CHECK_OK(clmg_vector_download(v, p));
  return p;
}

/* Fails unless bytes [from, to) elements of a and b agree bitwise. */
static void assert_same_range(clmg_dtype t, const void *a, const void *b, size_t from, size_t to,
                              const char *what) {
  size_t s = type_size(t);
  for (size_t i = from; i < to; i++)
    if (memcmp((const char *)a + i * s, (const char *)b + i * s, s) != 0)
      fail_msg("%s (%s): element %zu is %.17g, expected %.17g", what, clmg_dtype_name(t), i,
               element(t, a, i), element(t, b, i));
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, NULL, 0);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

/* ---- tests ---- */

static void test_dtypes(void **state) {
  (void)state;
  assert_int_equal(clmg_dtype_size(CLMG_DOUBLE), 8);
  assert_int_equal(clmg_dtype_size(CLMG_FLOAT), 4);
  assert_int_equal(clmg_dtype_size(CLMG_INT32), 4);
  assert_int_equal(clmg_dtype_size(CLMG_UINT32), 4);
  assert_int_equal(clmg_dtype_size((clmg_dtype)77), 0);
  for (int a = 0; a < NTYPES; a++) {
    const char *na = clmg_dtype_name(all_types[a]);
    assert_non_null(na);
    assert_true(strlen(na) > 0);
    for (int b = 0; b < a; b++)
      assert_string_not_equal(na, clmg_dtype_name(all_types[b]));
  }
  assert_non_null(clmg_dtype_name((clmg_dtype)77));
}

static void test_create_destroy(void **state) {
  (void)state;
  const size_t lengths[] = {0, 1, 7, 1000, 1000003};
  for (int t = 0; t < NTYPES; t++) {
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
      clmg_vector *v = new_vector(all_types[t], lengths[k]);
      assert_int_equal(clmg_vector_length(v), lengths[k]);
      assert_int_equal(clmg_vector_type(v), all_types[t]);
      assert_ptr_equal(clmg_vector_context(v), ctx);
      size_t offset = 99;
      if (lengths[k] > 0)
        assert_non_null(clmg_vector_cl_buffer(v, &offset));
      else
        clmg_vector_cl_buffer(v, &offset);
      assert_int_equal(offset, 0);
      clmg_vector_destroy(v);
    }
  }
  clmg_vector_destroy(NULL);
}

/* New vectors are zero, also where the memory held other data before. */
static void test_new_vectors_are_zero(void **state) {
  (void)state;
  const size_t n = 100003;
  for (int t = 0; t < NTYPES; t++) {
    clmg_dtype type = all_types[t];
    for (int round = 0; round < 3; round++) {
      clmg_vector *v = new_vector(type, n);
      void *host = download(v);
      const unsigned char *bytes = host;
      for (size_t i = 0; i < n * type_size(type); i++)
        if (bytes[i] != 0)
          fail_msg("new %s vector, round %d: element %zu is %g (not all bits zero)",
                   clmg_dtype_name(type), round, i / type_size(type),
                   element(type, host, i / type_size(type)));
      /* Dirty the memory for the next round. */
      void *data = random_data(type, n);
      CHECK_OK(clmg_vector_upload(v, data));
      CHECK_OK(clmg_finish(ctx));
      free(data);
      free(host);
      clmg_vector_destroy(v);
    }
  }
}

static void test_round_trip(void **state) {
  (void)state;
  const size_t lengths[] = {1, 7, 1000, 1000003};
  for (int t = 0; t < NTYPES; t++) {
    clmg_dtype type = all_types[t];
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
      size_t n = lengths[k];
      clmg_vector *v = new_vector(type, n);
      void *data = random_data(type, n);
      void *back = malloc(n * type_size(type));
      assert_non_null(back);

      /* blocking */
      CHECK_OK(clmg_vector_upload(v, data));
      memset(back, 0xcd, n * type_size(type));
      CHECK_OK(clmg_vector_download(v, back));
      assert_same_range(type, back, data, 0, n, "blocking round trip");

      /* async, then clmg_finish */
      void *data2 = random_data(type, n);
      memset(back, 0xcd, n * type_size(type));
      CHECK_OK(clmg_vector_upload_async(v, data2));
      CHECK_OK(clmg_vector_download_async(v, back));
      CHECK_OK(clmg_finish(ctx));
      assert_same_range(type, back, data2, 0, n, "async round trip");

      /* an async upload followed by a blocking download, in queue order */
      void *data3 = random_data(type, n);
      CHECK_OK(clmg_vector_upload_async(v, data3));
      memset(back, 0xcd, n * type_size(type));
      CHECK_OK(clmg_vector_download(v, back));
      assert_same_range(type, back, data3, 0, n, "async upload, blocking download");

      free(data);
      free(data2);
      free(data3);
      free(back);
      clmg_vector_destroy(v);
    }
  }
}

static void test_zero_length(void **state) {
  (void)state;
  for (int t = 0; t < NTYPES; t++) {
    clmg_vector *v = new_vector(all_types[t], 0);
    double dummy = 1.0;
    CHECK_OK(clmg_vector_upload(v, &dummy));
    CHECK_OK(clmg_vector_download(v, &dummy));
    CHECK_OK(clmg_vector_upload_async(v, &dummy));
    CHECK_OK(clmg_vector_download_async(v, &dummy));
    CHECK_OK(clmg_vector_fill(v, 3.0));
    CHECK_OK(clmg_finish(ctx));
    assert_true(dummy == 1.0);
    clmg_vector_destroy(v);
  }
}

/* The value a fill with `value` must store in a vector of type t. */
static double fill_value(clmg_dtype t) {
  switch (t) {
  case CLMG_DOUBLE:
    return rng_uniform() * 1e6;
  case CLMG_FLOAT:
    return rng_uniform() * 1e3;
  case CLMG_INT32:
    return -(double)(int32_t)(rng_next() >> 33);
  case CLMG_UINT32:
    return (double)(uint32_t)(rng_next() | 0x80000000u); /* above INT32_MAX */
  case CLMG_INT64:
    return -(double)(int64_t)(rng_next() >> 12); /* beyond 32 bits, exact in a double */
  }
  return 0.0;
}

static double stored(clmg_dtype t, double value) {
  switch (t) {
  case CLMG_FLOAT:
    return (float)value;
  case CLMG_INT32:
    return (int32_t)value;
  case CLMG_UINT32:
    return (uint32_t)value;
  default:
    return value;
  }
}

static void test_fill(void **state) {
  (void)state;
  const size_t lengths[] = {1, 7, 1000, 1000003};
  for (int t = 0; t < NTYPES; t++) {
    clmg_dtype type = all_types[t];
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
      size_t n = lengths[k];
      clmg_vector *v = new_vector(type, n);
      for (int round = 0; round < 2; round++) {
        double value = fill_value(type);
        CHECK_OK(clmg_vector_fill(v, value));
        void *host = download(v);
        for (size_t i = 0; i < n; i++)
          if (element(type, host, i) != stored(type, value))
            fail_msg("fill %s n=%zu with %.17g: element %zu is %.17g", clmg_dtype_name(type), n,
                     value, i, element(type, host, i));
        free(host);
      }
      clmg_vector_destroy(v);
    }
  }
}

static void test_copy(void **state) {
  (void)state;
  const clmg_dtype types[] = {CLMG_DOUBLE, CLMG_FLOAT};
  const size_t lengths[] = {1, 7, 1000, 1000003};
  for (int t = 0; t < 2; t++) {
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
      size_t n = lengths[k];
      clmg_vector *a = new_vector(types[t], n), *b = new_vector(types[t], n);
      void *data = random_data(types[t], n);
      CHECK_OK(clmg_vector_upload(a, data));
      CHECK_OK(clmg_vector_fill(b, 0.5));
      CHECK_OK(clmg_copy(a, b));
      void *back = download(b);
      assert_same_range(types[t], back, data, 0, n, "copy");
      void *src = download(a);
      assert_same_range(types[t], src, data, 0, n, "copy source");
      free(data);
      free(back);
      free(src);
      clmg_vector_destroy(a);
      clmg_vector_destroy(b);
    }
  }
}

static void test_convert(void **state) {
  (void)state;
  const size_t lengths[] = {1, 13, 100003};
  for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
    size_t n = lengths[k];
    double *x = malloc(n * sizeof *x), *back = malloc(n * sizeof *back);
    float *xf = malloc(n * sizeof *xf), *yf = malloc(n * sizeof *yf);
    assert_non_null(x);
    assert_non_null(back);
    assert_non_null(xf);
    assert_non_null(yf);
    /* values whose float rounding matters: wide exponents, random mantissas */
    for (size_t i = 0; i < n; i++)
      x[i] = (rng_uniform() - 0.5) * pow(10.0, (double)(int)(rng_below(21)) - 10.0);
    clmg_vector *d = new_vector(CLMG_DOUBLE, n), *f = new_vector(CLMG_FLOAT, n);
    clmg_vector *d2 = new_vector(CLMG_DOUBLE, n);
    CHECK_OK(clmg_vector_upload(d, x));
    CHECK_OK(clmg_vector_convert(d, f));
    CHECK_OK(clmg_vector_download(f, yf));
    for (size_t i = 0; i < n; i++)
      if (yf[i] != (float)x[i])
        fail_msg("double -> float, entry %zu of %zu: %.9g, expected %.9g", i, n, (double)yf[i],
                 (double)(float)x[i]);
    for (size_t i = 0; i < n; i++)
      xf[i] = (float)(rng_uniform() * 2.0 - 1.0) * 1e-3f;
    CHECK_OK(clmg_vector_upload(f, xf));
    CHECK_OK(clmg_vector_convert(f, d2));
    CHECK_OK(clmg_vector_download(d2, back));
    for (size_t i = 0; i < n; i++)
      if (back[i] != (double)xf[i])
        fail_msg("float -> double, entry %zu: %.17g, expected %.17g", i, back[i], (double)xf[i]);
    free(x);
    free(back);
    free(xf);
    free(yf);
    clmg_vector_destroy(d);
    clmg_vector_destroy(f);
    clmg_vector_destroy(d2);
  }
  /* mismatched lengths are refused with a message */
  clmg_vector *d = new_vector(CLMG_DOUBLE, 4), *f = new_vector(CLMG_FLOAT, 5);
  assert_int_equal(clmg_vector_convert(d, f), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "lengths must match"));
  clmg_vector_destroy(d);
  clmg_vector_destroy(f);
}

static void test_views(void **state) {
  (void)state;
  const size_t n = 1000, off = 100, len = 250;
  for (int t = 0; t < NTYPES; t++) {
    clmg_dtype type = all_types[t];
    size_t s = type_size(type);
    clmg_vector *base = new_vector(type, n);
    void *expect = random_data(type, n);
    CHECK_OK(clmg_vector_upload(base, expect));
    uint64_t bytes = clmg_context_device_bytes(ctx);

    clmg_vector *view = NULL;
    CHECK_OK(clmg_vector_view(base, off, len, &view));
    assert_non_null(view);
    assert_int_equal(clmg_context_device_bytes(ctx), bytes);
    assert_int_equal(clmg_vector_length(view), len);
    assert_int_equal(clmg_vector_type(view), type);
    assert_ptr_equal(clmg_vector_context(view), ctx);
    size_t base_off = 1, view_off = 0;
    cl_mem base_mem = clmg_vector_cl_buffer(base, &base_off);
    assert_ptr_equal(clmg_vector_cl_buffer(view, &view_off), base_mem);
    assert_int_equal(base_off, 0);
    assert_int_equal(view_off, off);

    /* Downloading the view gives its range of the base. */
    void *got = download(view);
    assert_same_range(type, got, (char *)expect + off * s, 0, len, "view download");
    free(got);

    /* Uploading to the view changes only its range. */
    void *data = random_data(type, len);
    CHECK_OK(clmg_vector_upload(view, data));
    memcpy((char *)expect + off * s, data, len * s);
    got = download(base);
    assert_same_range(type, got, expect, 0, n, "base after view upload");
    free(got);
    free(data);

    /* So does a fill of the view. */
    double value = fill_value(type);
    CHECK_OK(clmg_vector_fill(view, value));
    got = download(base);
    for (size_t i = 0; i < n; i++) {
      double want = (i >= off && i < off + len) ? stored(type, value) : element(type, expect, i);
      if (i >= off && i < off + len) {
        if (element(type, got, i) != want)
          fail_msg("fill of a view (%s): element %zu is %.17g, expected %.17g",
                   clmg_dtype_name(type), i, element(type, got, i), want);
      } else if (memcmp((char *)got + i * s, (char *)expect + i * s, s) != 0) {
        fail_msg("fill of a view (%s) changed element %zu outside it", clmg_dtype_name(type), i);
      }
    }
    memcpy(expect, got, n * s);
    free(got);

    /* A view of a view is relative to it: elements [off+10, off+30) of base. */
    clmg_vector *inner = NULL;
    CHECK_OK(clmg_vector_view(view, 10, 20, &inner));
    size_t inner_off = 0;
    assert_ptr_equal(clmg_vector_cl_buffer(inner, &inner_off), base_mem);
    assert_int_equal(inner_off, off + 10);
    data = random_data(type, 20);
    CHECK_OK(clmg_vector_upload_async(inner, data));
    CHECK_OK(clmg_finish(ctx));
    memcpy((char *)expect + (off + 10) * s, data, 20 * s);
    got = download(base);
    assert_same_range(type, got, expect, 0, n, "base after upload to a view of a view");
    free(got);
    free(data);

    /* Views at both ends. */
    clmg_vector *head = NULL, *tail = NULL;
    CHECK_OK(clmg_vector_view(base, 0, 1, &head));
    CHECK_OK(clmg_vector_view(base, n - 1, 1, &tail));
    CHECK_OK(clmg_vector_fill(head, 1.0));
    CHECK_OK(clmg_vector_fill(tail, 2.0));
    got = download(base);
    assert_true(element(type, got, 0) == 1.0);
    assert_true(element(type, got, n - 1) == 2.0);
    assert_same_range(type, got, expect, 1, n - 1, "base after fills at its ends");
    free(got);

    assert_int_equal(clmg_context_device_bytes(ctx), bytes);
    clmg_vector_destroy(head);
    clmg_vector_destroy(tail);
    clmg_vector_destroy(inner);
    clmg_vector_destroy(view);
    assert_int_equal(clmg_context_device_bytes(ctx), bytes);
    clmg_vector_destroy(base);
    free(expect);
  }
}

/* BLAS-1 copy into and out of views with offsets. */
static void test_copy_views(void **state) {
  (void)state;
  const clmg_dtype types[] = {CLMG_DOUBLE, CLMG_FLOAT};
  const size_t n = 1003, len = 500;
  for (int t = 0; t < 2; t++) {
    clmg_dtype type = types[t];
    size_t s = type_size(type);
    clmg_vector *a = new_vector(type, n), *b = new_vector(type, n);
    void *da = random_data(type, n), *db = random_data(type, n);
    CHECK_OK(clmg_vector_upload(a, da));
    CHECK_OK(clmg_vector_upload(b, db));
    clmg_vector *va = NULL, *vb = NULL;
    CHECK_OK(clmg_vector_view(a, 3, len, &va));
    CHECK_OK(clmg_vector_view(b, 401, len, &vb));
    CHECK_OK(clmg_copy(va, vb));
    memcpy((char *)db + 401 * s, (char *)da + 3 * s, len * s);
    void *got = download(b);
    assert_same_range(type, got, db, 0, n, "copy between views");
    free(got);
    got = download(a);
    assert_same_range(type, got, da, 0, n, "source of a copy between views");
    free(got);
    clmg_vector_destroy(va);
    clmg_vector_destroy(vb);
    clmg_vector_destroy(a);
    clmg_vector_destroy(b);
    free(da);
    free(db);
  }
}

static void test_view_out_of_range(void **state) {
  (void)state;
  const size_t n = 100;
  clmg_vector *base = new_vector(CLMG_DOUBLE, n);
  const size_t bad[][2] = {{0, 101},
                           {100, 1},
                           {101, 0},
                           {50, 51},
                           {SIZE_MAX, 2},
                           {2, SIZE_MAX},
                           {SIZE_MAX, SIZE_MAX},
                           {1, SIZE_MAX},
                           {SIZE_MAX, 0}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    clmg_vector *view = NULL;
    clmg_status status = clmg_vector_view(base, bad[i][0], bad[i][1], &view);
    if (status != CLMG_ERROR_INVALID_ARGUMENT)
      fail_msg("view(offset %zu, n %zu) of %zu elements: %s", bad[i][0], bad[i][1], n,
               clmg_status_string(status));
    assert_null(view);
    assert_true(strlen(clmg_context_message(ctx)) > 0);
  }
  /* Also relative to a view: the inner view must fit the outer one. */
  clmg_vector *outer = NULL, *inner = NULL;
  CHECK_OK(clmg_vector_view(base, 10, 20, &outer));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_view(outer, 15, 6, &inner));
  assert_null(inner);
  CHECK_OK(clmg_vector_view(outer, 15, 5, &inner));
  clmg_vector_destroy(inner);
  /* The largest legal views work. */
  clmg_vector *full = NULL;
  CHECK_OK(clmg_vector_view(base, 0, n, &full));
  assert_int_equal(clmg_vector_length(full), n);
  clmg_vector_destroy(full);
  clmg_vector_destroy(outer);
  clmg_vector_destroy(base);
}

static void test_device_bytes(void **state) {
  (void)state;
  const size_t n = 12345;
  uint64_t start = clmg_context_device_bytes(ctx);
  clmg_vector *v[NTYPES];
  uint64_t expected = start;
  for (int t = 0; t < NTYPES; t++) {
    v[t] = new_vector(all_types[t], n);
    expected += n * type_size(all_types[t]);
    assert_int_equal(clmg_context_device_bytes(ctx), expected);
  }
  clmg_vector *views[NTYPES];
  for (int t = 0; t < NTYPES; t++) {
    CHECK_OK(clmg_vector_view(v[t], 5, 100, &views[t]));
    assert_int_equal(clmg_context_device_bytes(ctx), expected);
  }
  for (int t = 0; t < NTYPES; t++) {
    clmg_vector_destroy(views[t]);
    assert_int_equal(clmg_context_device_bytes(ctx), expected);
  }
  for (int t = 0; t < NTYPES; t++) {
    clmg_vector_destroy(v[t]);
    expected -= n * type_size(all_types[t]);
    assert_int_equal(clmg_context_device_bytes(ctx), expected);
  }
  assert_int_equal(clmg_context_device_bytes(ctx), start);
  clmg_vector *empty = new_vector(CLMG_FLOAT, 0);
  assert_int_equal(clmg_context_device_bytes(ctx), start);
  clmg_vector_destroy(empty);
  assert_int_equal(clmg_context_device_bytes(ctx), start);
}

/* Freed buffers kept for reuse (clmg_context_set_buffer_cache): a freed
 * buffer comes back to the next vector of its size class, with its bytes
 * out of device_bytes and in cached_bytes; the cache stays within a
 * quarter of the memory limit, a new buffer that would not fit beside the
 * kept ones empties it, and a reused buffer holds what is written to it. */
static void test_buffer_cache(void **state) {
  (void)state;
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.memory_limit_bytes = (uint64_t)16 << 20;
  clmg_context *c = NULL;
  CHECK_OK(clmg_context_create(&options, &c));
  clmg_context_set_buffer_cache(c, 1);
  const uint64_t start = clmg_context_device_bytes(c);
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  /* 100,000 doubles: 800,000 bytes, kept in the class of 851,968 (13 x 64 KiB) */
  const size_t n = 100000;
  clmg_vector *a = NULL, *b = NULL, *small = NULL, *big = NULL;
  CHECK_OK(clmg_vector_create(c, CLMG_DOUBLE, n, &a));
  cl_mem a_buffer = clmg_vector_cl_buffer(a, NULL);
  clmg_vector_destroy(a);
  assert_int_equal(clmg_context_device_bytes(c), start);
  assert_int_equal(clmg_context_cached_bytes(c), 851968);
  /* the same class again: the same buffer, out of the cache */
  CHECK_OK(clmg_vector_create(c, CLMG_DOUBLE, n - 1000, &b));
  assert_ptr_equal(clmg_vector_cl_buffer(b, NULL), a_buffer);
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  assert_int_equal(clmg_context_device_bytes(c), start + (n - 1000) * sizeof(double));
  double *x = malloc((n - 1000) * sizeof *x), *y = malloc((n - 1000) * sizeof *y);
  assert_non_null(x);
  assert_non_null(y);
  CHECK_OK(clmg_vector_download_doubles(b, y)); /* clmg_vector_create zeroes it */
  for (size_t i = 0; i < n - 1000; i++) {
    assert_true(y[i] == 0.0);
    x[i] = (double)i / 7.0;
  }
  CHECK_OK(clmg_vector_upload_doubles(b, x));
  CHECK_OK(clmg_vector_download_doubles(b, y));
  assert_memory_equal(x, y, (n - 1000) * sizeof *x);
  free(x);
  free(y);
  /* another class: a new buffer */
  CHECK_OK(clmg_vector_create(c, CLMG_FLOAT, 10, &small));
  assert_ptr_not_equal(clmg_vector_cl_buffer(small, NULL), a_buffer);
  clmg_vector_destroy(small);
  clmg_vector_destroy(b);
  assert_int_equal(clmg_context_cached_bytes(c), 851968 + 4096);
  assert_int_equal(clmg_context_device_bytes(c), start);
  /* 15.5 MiB (a buffer of 16 MiB, its class) does not fit beside the kept
   * buffers in the 16 MiB limit: they
   * are released first; freed, it is beyond the cache's quarter (4 MiB)
   * and released too */
  CHECK_OK(clmg_vector_create(c, CLMG_FLOAT, (size_t)31 << 17, &big));
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  clmg_vector_destroy(big);
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  /* trimming and turning it off release the kept ones */
  CHECK_OK(clmg_vector_create(c, CLMG_DOUBLE, n, &a));
  clmg_vector_destroy(a);
  assert_int_equal(clmg_context_cached_bytes(c), 851968);
  clmg_context_trim(c);
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  CHECK_OK(clmg_vector_create(c, CLMG_DOUBLE, n, &a));
  clmg_vector_destroy(a);
  clmg_context_set_buffer_cache(c, 0);
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  CHECK_OK(clmg_vector_create(c, CLMG_DOUBLE, n, &a));
  clmg_vector_destroy(a);
  assert_int_equal(clmg_context_cached_bytes(c), 0);
  assert_int_equal(clmg_context_device_bytes(c), start);
  clmg_context_set_buffer_cache(NULL, 1);
  clmg_context_trim(NULL);
  assert_int_equal(clmg_context_cached_bytes(NULL), 0);
  clmg_context_destroy(c);
}

static void test_out_of_device_memory(void **state) {
  (void)state;
  const clmg_device_info *info = clmg_context_device(ctx);
  assert_non_null(info);
  uint64_t start = clmg_context_device_bytes(ctx);
  for (int t = 0; t < NTYPES; t++) {
    clmg_dtype type = all_types[t];
    size_t s = type_size(type);
    /* Twice the device's memory; n * s does not overflow (s <= 8). */
    uint64_t too_many = (info->global_mem_bytes / s) * 2 + 1;
    size_t sizes[] = {(size_t)too_many, SIZE_MAX / s + 1 /* n * s wraps to 0 */,
                      SIZE_MAX / s + 2 /* wraps to s */, SIZE_MAX};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      clmg_vector *v = NULL;
      clmg_status status = clmg_vector_create(ctx, type, sizes[k], &v);
      if (status != CLMG_ERROR_OUT_OF_DEVICE_MEMORY)
        fail_msg("create(%s, n = %zu) on %llu bytes of device memory: %s (%s)",
                 clmg_dtype_name(type), sizes[k], (unsigned long long)info->global_mem_bytes,
                 clmg_status_string(status), clmg_context_message(ctx));
      assert_null(v);
      assert_true(strlen(clmg_context_message(ctx)) > 0);
      assert_int_equal(clmg_context_device_bytes(ctx), start);
    }
  }
  /* The context is still usable. */
  const size_t n = 1000;
  clmg_vector *v = new_vector(CLMG_DOUBLE, n), *w = new_vector(CLMG_DOUBLE, n);
  double *data = random_data(CLMG_DOUBLE, n);
  CHECK_OK(clmg_vector_upload(v, data));
  CHECK_OK(clmg_copy(v, w));
  double *back = download(w);
  assert_same_range(CLMG_DOUBLE, back, data, 0, n, "copy after a failed allocation");
  free(back);
  free(data);
  clmg_vector_destroy(v);
  clmg_vector_destroy(w);
  assert_int_equal(clmg_context_device_bytes(ctx), start);
}

static void test_mismatched_arguments(void **state) {
  (void)state;
  clmg_vector *d10 = new_vector(CLMG_DOUBLE, 10), *d11 = new_vector(CLMG_DOUBLE, 11);
  clmg_vector *f10 = new_vector(CLMG_FLOAT, 10), *i10 = new_vector(CLMG_INT32, 10);
  clmg_vector *d10b = new_vector(CLMG_DOUBLE, 10), *d10c = new_vector(CLMG_DOUBLE, 10);
  double r = 0.0, r2 = 0.0;

  CHECK_INVALID(clmg_copy(d10, f10));
  CHECK_INVALID(clmg_copy(f10, d10));
  CHECK_INVALID(clmg_copy(d10, d11));
  CHECK_INVALID(clmg_copy(d11, d10));
  CHECK_INVALID(clmg_axpy(0.5, d10, d11));
  CHECK_INVALID(clmg_axpy(0.5, d10, f10));
  CHECK_INVALID(clmg_axpby(0.5, d11, 0.25, d10));
  CHECK_INVALID(clmg_axpby(0.5, f10, 0.25, d10));
  CHECK_INVALID(clmg_waxpby(0.5, d10, 0.25, d10b, d11));
  CHECK_INVALID(clmg_waxpby(0.5, d10, 0.25, d11, d10c));
  CHECK_INVALID(clmg_waxpby(0.5, f10, 0.25, d10b, d10c));
  CHECK_INVALID(clmg_dot(d10, d11, &r));
  CHECK_INVALID(clmg_dot(d10, f10, &r));
  CHECK_INVALID(clmg_axpy_nrm2(0.5, d10, d11, &r));
  CHECK_INVALID(clmg_cg_update(0.5, d10, d10b, d10c, d11, &r));
  CHECK_INVALID(clmg_cg_update(0.5, d10, d11, d10b, d10c, &r));
  CHECK_INVALID(clmg_cg_update(0.5, f10, d10, d10b, d10c, &r));
  CHECK_INVALID(clmg_dot2(d10, d11, &r, &r2));
  CHECK_INVALID(clmg_dot2(f10, d10, &r, &r2));

  /* BLAS-1 is for double and float vectors only. */
  clmg_vector *i10b = new_vector(CLMG_INT32, 10);
  clmg_status status = clmg_dot(i10, i10b, &r);
  if (status != CLMG_ERROR_INVALID_ARGUMENT && status != CLMG_ERROR_UNSUPPORTED)
    fail_msg("dot of int32 vectors: %s", clmg_status_string(status));
  status = clmg_nrm2(i10, &r);
  if (status != CLMG_ERROR_INVALID_ARGUMENT && status != CLMG_ERROR_UNSUPPORTED)
    fail_msg("nrm2 of an int32 vector: %s", clmg_status_string(status));
  status = clmg_scal(2.0, i10);
  if (status != CLMG_ERROR_INVALID_ARGUMENT && status != CLMG_ERROR_UNSUPPORTED)
    fail_msg("scal of an int32 vector: %s", clmg_status_string(status));

  /* Vectors of two different contexts. */
  clmg_context *other = NULL;
  CHECK_OK(clmg_context_create(NULL, &other));
  clmg_vector *o10 = NULL;
  CHECK_OK(clmg_vector_create(other, CLMG_DOUBLE, 10, &o10));
  /* The message may go to either context. */
  for (int k = 0; k < 3; k++) {
    CHECK_OK(clmg_finish(ctx));
    CHECK_OK(clmg_finish(other));
    status = k == 0   ? clmg_copy(d10, o10)
             : k == 1 ? clmg_dot(d10, o10, &r)
                      : clmg_axpy(1.5, o10, d10);
    if (status != CLMG_ERROR_INVALID_ARGUMENT)
      fail_msg("operation %d on vectors of two contexts: %s", k, clmg_status_string(status));
    if (clmg_context_message(ctx)[0] == '\0' && clmg_context_message(other)[0] == '\0')
      fail_msg("operation %d on vectors of two contexts: no message", k);
  }
  clmg_vector_destroy(o10);
  clmg_context_destroy(other);

  /* Nothing above changed any data: everything is still zero. */
  const clmg_vector *all[] = {d10, d11, f10, d10b, d10c};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    double *h = download(all[k]);
    for (size_t i = 0; i < clmg_vector_length(all[k]); i++)
      assert_true(element(clmg_vector_type(all[k]), h, i) == 0.0);
    free(h);
  }
  clmg_vector_destroy(d10);
  clmg_vector_destroy(d11);
  clmg_vector_destroy(f10);
  clmg_vector_destroy(i10);
  clmg_vector_destroy(i10b);
  clmg_vector_destroy(d10b);
  clmg_vector_destroy(d10c);
}

static void test_null_arguments(void **state) {
  (void)state;
  clmg_vector *v = NULL, *w = new_vector(CLMG_DOUBLE, 10), *x = new_vector(CLMG_DOUBLE, 10);
  double host[10] = {0}, r = 0.0;

  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_create(NULL, CLMG_DOUBLE, 10, &v));
  assert_null(v);
  CHECK_INVALID(clmg_vector_create(ctx, CLMG_DOUBLE, 10, NULL));
  CHECK_INVALID(clmg_vector_create(ctx, (clmg_dtype)77, 10, &v));
  assert_null(v);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_view(NULL, 0, 1, &v));
  CHECK_INVALID(clmg_vector_view(w, 0, 1, NULL));

  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_upload(NULL, host));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_download(NULL, host));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_upload_async(NULL, host));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_download_async(NULL, host));
  CHECK_INVALID(clmg_vector_upload(w, NULL));
  CHECK_INVALID(clmg_vector_download(w, NULL));
  CHECK_INVALID(clmg_vector_upload_async(w, NULL));
  CHECK_INVALID(clmg_vector_download_async(w, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_fill(NULL, 1.0));

  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_copy(NULL, w));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_copy(w, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_scal(2.0, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_axpy(2.0, NULL, w));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_axpy(2.0, w, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_axpby(2.0, NULL, 1.0, w));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_axpby(2.0, w, 1.0, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_waxpby(2.0, NULL, 1.0, w, x));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_waxpby(2.0, w, 1.0, NULL, x));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_waxpby(2.0, w, 1.0, x, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_dot(NULL, w, &r));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_dot(w, NULL, &r));
  CHECK_INVALID(clmg_dot(w, x, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_nrm2(NULL, &r));
  CHECK_INVALID(clmg_nrm2(w, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_axpy_nrm2(2.0, NULL, w, &r));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_axpy_nrm2(2.0, w, NULL, &r));
  CHECK_INVALID(clmg_axpy_nrm2(2.0, w, x, NULL));
  clmg_vector *p = new_vector(CLMG_DOUBLE, 10), *q = new_vector(CLMG_DOUBLE, 10);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_cg_update(0.5, NULL, q, w, x, &r));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_cg_update(0.5, p, NULL, w, x, &r));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_cg_update(0.5, p, q, NULL, x, &r));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_cg_update(0.5, p, q, w, NULL, &r));
  CHECK_INVALID(clmg_cg_update(0.5, p, q, w, x, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_dot2(NULL, w, &r, &r));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_dot2(w, NULL, &r, &r));
  CHECK_INVALID(clmg_dot2(w, x, NULL, &r));
  CHECK_INVALID(clmg_dot2(w, x, &r, NULL));
  assert_null(clmg_vector_cl_buffer(NULL, NULL));

  /* The vectors were not touched. */
  const clmg_vector *all[] = {w, x, p, q};
  for (size_t k = 0; k < 4; k++) {
    double *h = download(all[k]);
    for (size_t i = 0; i < 10; i++)
      assert_true(h[i] == 0.0);
    free(h);
  }
  clmg_vector_destroy(p);
  clmg_vector_destroy(q);
  clmg_vector_destroy(w);
  clmg_vector_destroy(x);
}

/* Doubles uploaded to a float vector: a finite value beyond float's range,
 * or a vector whose every nonzero underflows, is refused (it would become
 * Inf or 0), and the vector keeps its contents; ordinary rounding passes. */
static void test_upload_doubles_to_float_range(void **state) {
  (void)state;
  clmg_vector *v = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_FLOAT, 3, &v));
  CHECK_OK(clmg_vector_fill(v, 0.25));
  const double huge[3] = {1.0, -1e300, 2.0}, tiny[3] = {1e-200, 0.0, -3e-60};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_upload_doubles(v, huge));
  CHECK_CONTAINS(clmg_context_message(ctx), "element 1");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_vector_upload_doubles(v, tiny));
  CHECK_CONTAINS(clmg_context_message(ctx), "would become 0");
  double back[3];
  CHECK_OK(clmg_vector_download_doubles(v, back));
  for (int i = 0; i < 3; ++i)
    assert_true(back[i] == 0.25);
  const double mixed[3] = {1e-200, 0.1, -3e38};
  CHECK_OK(clmg_vector_upload_doubles(v, mixed));
  CHECK_OK(clmg_vector_download_doubles(v, back));
  assert_true(back[0] == 0.0 && back[1] == (double)0.1f && back[2] == (double)-3e38f);
  clmg_vector_destroy(v);
}

int main(void) {
  rng_seed(0x243f6a8885a308d3u);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_create_destroy),
      cmocka_unit_test(test_new_vectors_are_zero),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_zero_length),
      cmocka_unit_test(test_fill),
      cmocka_unit_test(test_copy),
      cmocka_unit_test(test_convert),
      cmocka_unit_test(test_upload_doubles_to_float_range),
      cmocka_unit_test(test_views),
      cmocka_unit_test(test_copy_views),
      cmocka_unit_test(test_view_out_of_range),
      cmocka_unit_test(test_device_bytes),
      cmocka_unit_test(test_buffer_cache),
      cmocka_unit_test(test_out_of_device_memory),
      cmocka_unit_test(test_mismatched_arguments),
      cmocka_unit_test(test_null_arguments),
  };
  return cmocka_run_group_tests_name("vector", tests, setup, teardown);
}
