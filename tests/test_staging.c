/* Uploads staged through pinned host chunks (clmg_write_buffer,
 * lib/core/memory.c), forced on the test device with a small chunk through
 * CLMG_DEVICE_PARAMS: writes of 0 to 3.5 chunks at even and odd offsets,
 * blocking and not (the host array overwritten and freed right after a
 * non-blocking return), read back byte for byte; their order against
 * copies, fills and kernels on the same buffers; small writes that stay
 * plain; and an AMG-CG solve that takes the same iterations and residual
 * with staging as without. Linked against the static library for the
 * internal interface. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clmg.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* not a power of two, not a multiple of 8: chunks end inside doubles */
enum { CHUNK = 1000 };

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    clmg_status status_ = (call);                                                                  \
    if (status_ != CLMG_SUCCESS)                                                                   \
      fail_msg("%s: %s: %s", #call, clmg_status_string(status_), clmg_context_message(ctx));       \
  } while (0)

/* A context made under CLMG_DEVICE_PARAMS=params (NULL: none). */
static clmg_context *open_with(const char *params) {
  if (params)
    setenv("CLMG_DEVICE_PARAMS", params, 1);
  else
    unsetenv("CLMG_DEVICE_PARAMS");
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(NULL, &ctx);
  unsetenv("CLMG_DEVICE_PARAMS");
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_context_create (%s): %s: %s", params ? params : "", clmg_status_string(status),
             ctx ? clmg_context_message(ctx) : "");
  return ctx;
}

static clmg_context *open_staged(void) {
  char params[96];
  snprintf(params, sizeof params,
           "staging_min_bytes=1,staging_chunk_bytes=%d,staging_ring_after_bytes=0", CHUNK);
  clmg_context *ctx = open_with(params);
  assert_int_equal(ctx->params.staging_min_bytes, 1);
  assert_int_equal(ctx->params.staging_chunk_bytes, CHUNK);
  return ctx;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned char random_byte(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned char)(rng_state >> 56);
}

/* The whole buffer of `bytes`, read back blocking. */
static unsigned char *read_all(clmg_context *ctx, cl_mem buffer, size_t bytes) {
  unsigned char *host = malloc(bytes);
  assert_non_null(host);
  assert_int_equal(clEnqueueReadBuffer(ctx->queue, buffer, CL_TRUE, 0, bytes, host, 0, NULL, NULL),
                   CL_SUCCESS);
  return host;
}

/* Bytes [0, offset) and [offset + size, bytes) are `fill`, the rest
 * `expected`. */
static void check_buffer(clmg_context *ctx, cl_mem buffer, size_t bytes, size_t offset, size_t size,
                         const unsigned char *expected, unsigned char fill, const char *what) {
  unsigned char *got = read_all(ctx, buffer, bytes);
  for (size_t i = 0; i < bytes; ++i) {
    unsigned char want = i >= offset && i < offset + size ? expected[i - offset] : fill;
    if (got[i] != want)
      fail_msg("%s: byte %zu is 0x%02x, not 0x%02x", what, i, got[i], want);
  }
  free(got);
}

/* Writes of 0, 1, chunk - 1, chunk, chunk + 1 and 3.5 chunks at offsets 0
 * and 7, blocking and not, into a buffer filled with 0xab: the written
 * bytes and nothing else change, through one transfer per chunk; a staged
 * blocking read gives them back, through one transfer per chunk. */
static void test_sizes(void **state) {
  (void)state;
  clmg_context *ctx = open_staged();
  const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 7 * CHUNK / 2};
  const size_t offsets[] = {0, 7};
  const size_t bytes = 4 * CHUNK + 64;
  const unsigned char fill = 0xab;
  cl_mem buffer = NULL;
  CHECK_OK(clmg_device_alloc(ctx, bytes, NULL, "staging test buffer", &buffer));
  /* the first staged write makes the pinned chunks (mapping each is a
   * command) */
  CHECK_OK(clmg_write_buffer(ctx, buffer, 1, 0, 1, &fill, "the first write"));
  assert_int_equal(ctx->staging_bytes, CHUNK);
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
    for (size_t o = 0; o < 2; ++o)
      for (int blocking = 0; blocking < 2; ++blocking) {
        size_t size = sizes[s], offset = offsets[o];
        char what[96];
        snprintf(what, sizeof what, "%zu bytes at offset %zu, %s", size, offset,
                 blocking ? "blocking" : "non-blocking");
        CHECK_OK(clmg_fill_buffer(ctx, buffer, &fill, 1, 0, bytes, "filling"));
        unsigned char *expected = malloc(size + 1), *host = malloc(size + 1);
        assert_non_null(expected);
        assert_non_null(host);
        for (size_t i = 0; i < size; ++i)
          expected[i] = host[i] = random_byte();
        uint64_t commands = ctx->commands;
        CHECK_OK(clmg_write_buffer(ctx, buffer, blocking, offset, size, host, what));
        /* one transfer per chunk: staged, not one plain write */
        assert_int_equal(ctx->commands - commands, (size + CHUNK - 1) / CHUNK);
        if (blocking) /* every transfer done at the return */
          for (int k = 0; k < CLMG_STAGING_SLOTS; ++k) {
            cl_int done = CL_QUEUED;
            if (ctx->staging_done[k])
              assert_int_equal(clGetEventInfo(ctx->staging_done[k],
                                              CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof done, &done,
                                              NULL),
                               CL_SUCCESS);
            assert_true(!ctx->staging_done[k] || done == CL_COMPLETE);
          }
        /* the caller's array is free again at once */
        memset(host, 0x5a, size + 1);
        free(host);
        check_buffer(ctx, buffer, bytes, offset, size, expected, fill, what);
        /* read back the same way: a blocking read through the chunks */
        unsigned char *back = malloc(size + 1);
        assert_non_null(back);
        back[size] = 0x77;
        commands = ctx->commands;
        CHECK_OK(clmg_read_buffer(ctx, buffer, 1, offset, size, back, what));
        assert_int_equal(ctx->commands - commands, (size + CHUNK - 1) / CHUNK);
        assert_memory_equal(back, expected, size);
        assert_int_equal(back[size], 0x77);
        free(back);
        free(expected);
      }
  clmg_device_free(ctx, buffer, bytes);
  clmg_context_destroy(ctx);
}

/* A buffer made with its content (clmg_device_alloc, as the matrices'
 * arrays are) takes it through the chunks, and the caller's array is free
 * at the return; with pinned memory not to be had, every path is the
 * plain one. */
static void test_alloc_and_fallback(void **state) {
  (void)state;
  clmg_context *ctx = open_staged();
  const size_t bytes = 7 * CHUNK / 2;
  unsigned char *expected = malloc(bytes), *host = malloc(bytes);
  assert_non_null(expected);
  assert_non_null(host);
  for (int unavailable = 0; unavailable < 2; ++unavailable) {
    ctx->staging_unavailable = unavailable;
    for (size_t i = 0; i < bytes; ++i)
      expected[i] = host[i] = random_byte();
    uint64_t commands = ctx->commands;
    cl_mem buffer = NULL;
    CHECK_OK(clmg_device_alloc(ctx, bytes, host, "with content", &buffer));
    /* staged: a transfer per chunk (after the chunks' three maps); else
     * the copy at creation */
    assert_int_equal(ctx->commands - commands, unavailable ? 0 : 4 + 3);
    memset(host, 0x5a, bytes);
    check_buffer(ctx, buffer, bytes, 0, bytes, expected, 0, "made with its content");
    commands = ctx->commands;
    CHECK_OK(clmg_write_buffer(ctx, buffer, 1, 0, bytes, expected, "write"));
    CHECK_OK(clmg_read_buffer(ctx, buffer, 1, 0, bytes, host, "read"));
    assert_int_equal(ctx->commands - commands, unavailable ? 2 : 8);
    assert_memory_equal(host, expected, bytes);
    clmg_device_free(ctx, buffer, bytes);
  }
  free(expected);
  free(host);
  clmg_context_destroy(ctx);
}

/* Staged non-blocking writes keep their place in the queue: a copy of
 * buffer a made between two writes to a holds the first, a fill after the
 * second overwrites part of it, and a kernel (y = 2 x + y on vectors
 * uploaded without blocking) sees the uploads. */
static void test_order(void **state) {
  (void)state;
  clmg_context *ctx = open_staged();
  const size_t bytes = 7 * CHUNK / 2;
  unsigned char *first = malloc(bytes), *second = malloc(bytes), *host = malloc(bytes);
  assert_non_null(first);
  assert_non_null(second);
  assert_non_null(host);
  for (size_t i = 0; i < bytes; ++i) {
    first[i] = random_byte();
    second[i] = random_byte();
  }
  cl_mem a = NULL, b = NULL;
  CHECK_OK(clmg_device_alloc(ctx, bytes, NULL, "a", &a));
  CHECK_OK(clmg_device_alloc(ctx, bytes, NULL, "b", &b));
  for (int round = 0; round < 3; ++round) {
    memcpy(host, first, bytes);
    CHECK_OK(clmg_write_buffer(ctx, a, 0, 0, bytes, host, "first"));
    memset(host, 0, bytes);
    CHECK_OK(clmg_copy_buffer(ctx, a, 0, b, 0, bytes, "copy"));
    memcpy(host, second, bytes);
    CHECK_OK(clmg_write_buffer(ctx, a, 0, 0, bytes, host, "second"));
    memset(host, 0, bytes);
    const unsigned char pattern = 0x11;
    CHECK_OK(clmg_fill_buffer(ctx, a, &pattern, 1, CHUNK, 10, "fill"));
    check_buffer(ctx, b, bytes, 0, bytes, first, 0, "the copy between the writes");
    memset(second + CHUNK, 0x11, 10);
    check_buffer(ctx, a, bytes, 0, bytes, second, 0, "the second write, then the fill");
    memcpy(second, first, bytes); /* new bytes for the next round */
    for (size_t i = 0; i < bytes; ++i)
      first[i] = random_byte();
  }
  clmg_device_free(ctx, a, bytes);
  clmg_device_free(ctx, b, bytes);

  /* a kernel after non-blocking uploads of 3.5 chunks of doubles */
  const size_t n = 7 * CHUNK / 16;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  clmg_vector *dx = NULL, *dy = NULL;
  if (ctx->info.has_fp64) {
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dy));
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < n; ++i) {
        x[i] = (double)(i % 97) + round;
        y[i] = (double)(i % 13) - round;
      }
      CHECK_OK(clmg_vector_upload_async(dx, x));
      CHECK_OK(clmg_vector_upload_async(dy, y));
      for (size_t i = 0; i < n; ++i)
        x[i] = y[i] = -1e300; /* what a wrong order would show */
      CHECK_OK(clmg_axpy(2.0, dx, dy));
      CHECK_OK(clmg_vector_download(dy, z));
      for (size_t i = 0; i < n; ++i) {
        double want = 2.0 * ((double)(i % 97) + round) + (double)(i % 13) - round;
        if (z[i] != want)
          fail_msg("round %d: y[%zu] = %g, not %g", round, i, z[i], want);
      }
    }
    clmg_vector_destroy(dx);
    clmg_vector_destroy(dy);
  }
  free(x);
  free(y);
  free(z);
  free(first);
  free(second);
  free(host);
  clmg_context_destroy(ctx);
}

/* staging_ring_after_bytes: large writes go plain (counted) until, with
 * the one at hand, they reach it; that one makes the ring and goes through
 * it, and so does every large write after; the bytes arrive either way. */
static void test_ring_after(void **state) {
  (void)state;
  char params[128];
  snprintf(params, sizeof params,
           "staging_min_bytes=1,staging_chunk_bytes=%d,staging_ring_after_bytes=%d", CHUNK,
           4 * CHUNK);
  clmg_context *ctx = open_with(params);
  const size_t bytes = 2 * CHUNK;
  unsigned char *data = malloc(bytes);
  assert_non_null(data);
  cl_mem buffer = NULL;
  CHECK_OK(clmg_device_alloc(ctx, bytes, NULL, "staging test buffer", &buffer));
  for (int k = 0; k < 3; k++) {
    for (size_t i = 0; i < bytes; i++)
      data[i] = random_byte();
    CHECK_OK(clmg_write_buffer(ctx, buffer, 1, 0, bytes, data, "a write"));
    /* 2 chunks: plain; 2 more reach 4: the ring; then through it */
    assert_int_equal(ctx->staging_bytes, k == 0 ? 0 : CHUNK);
    assert_int_equal(ctx->staging_plain_bytes, bytes);
    check_buffer(ctx, buffer, bytes, 0, bytes, data, 0, "the write");
  }
  free(data);
  clmg_device_free(ctx, buffer, bytes);
  clmg_context_destroy(ctx);
  /* the table's: 0 on CPUs (where staging is off unless forced); on GPUs
   * eight rings' worth */
  ctx = open_with(NULL);
  assert_int_equal(
      ctx->params.staging_ring_after_bytes,
      ctx->params.host_buffers ? 0 : 8 * CLMG_STAGING_SLOTS * ctx->params.staging_chunk_bytes);
  clmg_context_destroy(ctx);
}

/* Writes (and reads) below staging_min_bytes stay one plain command: no
 * pinned chunks, and a host wait only when blocking. By default the test
 * device (a CPU) stages nothing. */
static void test_small_writes_plain(void **state) {
  (void)state;
  char params[96];
  snprintf(params, sizeof params, "staging_min_bytes=%d,staging_chunk_bytes=%d", 2 * CHUNK + 1,
           CHUNK);
  clmg_context *ctx = open_with(params);
  const size_t bytes = 2 * CHUNK;
  unsigned char *host = malloc(bytes);
  assert_non_null(host);
  for (size_t i = 0; i < bytes; ++i)
    host[i] = random_byte();
  cl_mem buffer = NULL;
  CHECK_OK(clmg_device_alloc(ctx, bytes, NULL, "buffer", &buffer));
  for (int blocking = 0; blocking < 2; ++blocking) {
    uint64_t commands = ctx->commands, waits = ctx->host_waits;
    CHECK_OK(clmg_write_buffer(ctx, buffer, blocking, 0, bytes, host, "plain"));
    assert_int_equal(ctx->commands - commands, 1);
    assert_int_equal(ctx->host_waits - waits, (uint64_t)blocking);
    assert_int_equal(ctx->staging_bytes, 0);
  }
  CHECK_OK(clmg_finish(ctx));
  check_buffer(ctx, buffer, bytes, 0, bytes, host, 0, "plain write");
  /* reads below the threshold, and non-blocking ones, are plain too */
  unsigned char *back = malloc(bytes);
  assert_non_null(back);
  for (int blocking = 0; blocking < 2; ++blocking) {
    memset(back, 0, bytes);
    uint64_t commands = ctx->commands, waits = ctx->host_waits;
    CHECK_OK(clmg_read_buffer(ctx, buffer, blocking, 0, bytes, back, "plain read"));
    CHECK_OK(clmg_finish(ctx));
    assert_int_equal(ctx->commands - commands, 1);
    assert_int_equal(ctx->host_waits - waits, (uint64_t)blocking + 1);
    assert_memory_equal(back, host, bytes);
  }
  free(back);
  clmg_device_free(ctx, buffer, bytes);
  clmg_context_destroy(ctx);

  ctx = open_with(NULL);
  if (ctx->params.shares_host_memory)
    assert_int_equal(ctx->params.staging_min_bytes, 0);
  clmg_context_destroy(ctx);
  free(host);
}

/* 2-D Poisson on an m x m grid (5 points, Dirichlet rows eliminated). */
static clmg_csr poisson(size_t m) {
  size_t n = m * m, count = 0;
  int32_t *ri = malloc(5 * n * sizeof *ri), *ci = malloc(5 * n * sizeof *ci);
  double *v = malloc(5 * n * sizeof *v);
  assert_non_null(ri);
  assert_non_null(ci);
  assert_non_null(v);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      int32_t row = (int32_t)(i * m + j);
      ri[count] = ci[count] = row;
      v[count++] = 4.0;
      const long di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
      for (int k = 0; k < 4; ++k) {
        long ii = (long)i + di[k], jj = (long)j + dj[k];
        if (ii < 0 || jj < 0 || ii >= (long)m || jj >= (long)m)
          continue;
        ri[count] = row;
        ci[count] = (int32_t)(ii * (long)m + jj);
        v[count++] = -1.0;
      }
    }
  clmg_csr a = {0};
  clmg_error error;
  if (clmg_csr_from_triplets(n, n, count, ri, ci, v, &a, &error) != CLMG_SUCCESS)
    fail_msg("poisson: %s", error.message);
  free(ri);
  free(ci);
  free(v);
  return a;
}

typedef struct solve_run {
  int iterations;
  double residual; /* ||b - A x|| / ||b||, recomputed on the host */
  double error;    /* ||x - x*|| / ||x*|| */
} solve_run;

/* AMG-CG for A x = A x* under CLMG_DEVICE_PARAMS=params. */
static solve_run amg_cg(const char *params, const clmg_csr *a, const double *x_star) {
  clmg_context *ctx = open_with(params);
  size_t n = a->rows;
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
  assert_non_null(b);
  assert_non_null(x);
  clmg_csr_spmv_host(1.0, a, x_star, 0.0, b);
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_amg_multigrid_create(ctx, a, NULL, NULL, NULL, &mg));
  clmg_preconditioner cycle;
  CHECK_OK(clmg_multigrid_preconditioner(mg, &cycle));
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &db));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
  CHECK_OK(clmg_vector_upload_doubles(db, b));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  clmg_krylov_result result;
  CHECK_OK(clmg_cg(clmg_multigrid_matrix(mg, clmg_multigrid_levels(mg) - 1), db, dx, &cycle, &ko,
                   &result));
  assert_true(result.converged);
  CHECK_OK(clmg_vector_download_doubles(dx, x));
  double bb = 0, ee = 0, ss = 0, rr = 0;
  for (size_t i = 0; i < n; ++i) {
    bb += b[i] * b[i];
    ee += (x[i] - x_star[i]) * (x[i] - x_star[i]);
    ss += x_star[i] * x_star[i];
  }
  clmg_csr_spmv_host(-1.0, a, x, 1.0, b);
  for (size_t i = 0; i < n; ++i)
    rr += b[i] * b[i];
  solve_run run = {result.iterations, sqrt(rr / bb), sqrt(ee / ss)};
  print_message("%-45s %3d iterations, residual %.3e, error %.3e\n", params ? params : "default",
                run.iterations, run.residual, run.error);
  assert_true(isfinite(run.residual) && run.residual <= 1.01 * ko.relative_tolerance);
  assert_true(run.error <= 1e-6);
  if (params && strstr(params, "staging_min_bytes=1"))
    assert_int_equal(ctx->staging_bytes, CHUNK); /* the uploads were staged */
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&cycle);
  clmg_multigrid_destroy(mg);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_context_destroy(ctx);
  free(b);
  free(x);
  return run;
}

/* The same solve with every upload staged through chunks of 1,000 bytes
 * (on the host's and the device's setup paths) as without. */
static void test_amg_cg(void **state) {
  (void)state;
  clmg_context *probe = open_with(NULL);
  int fp64 = probe->info.has_fp64;
  clmg_context_destroy(probe);
  if (!fp64)
    skip();
  clmg_csr a = poisson(60);
  double *x_star = malloc(a.rows * sizeof *x_star);
  assert_non_null(x_star);
  for (size_t i = 0; i < a.rows; ++i)
    x_star[i] = sin(0.37 * (double)i) + 0.5;
  char staged[200];
  const char *setups[] = {"", "amg_setup_on_device=1,cpu_kernels=0,"};
  for (int s = 0; s < 2; ++s) {
    snprintf(staged, sizeof staged,
             "%sstaging_min_bytes=1,staging_chunk_bytes=%d,staging_ring_after_bytes=0", setups[s],
             CHUNK);
    solve_run plain =
        amg_cg(setups[s][0] ? "amg_setup_on_device=1,cpu_kernels=0" : NULL, &a, x_star);
    solve_run run = amg_cg(staged, &a, x_star);
    assert_int_equal(run.iterations, plain.iterations);
    assert_true(run.residual == plain.residual);
    assert_true(run.error == plain.error);
  }
  free(x_star);
  clmg_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_order),
      cmocka_unit_test(test_alloc_and_fallback),
      cmocka_unit_test(test_ring_after),
      cmocka_unit_test(test_small_writes_plain),
      cmocka_unit_test(test_amg_cg),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
