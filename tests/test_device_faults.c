/* Device faults: memory that runs out (the memory limit, the device's
 * largest allocation and its memory, the host's memory behind a CPU
 * device), a device without double precision (simulated with
 * disable_fp64) and kernels that do not build. Every failure must come as a
 * status with a message that gives the numbers, before anything is
 * allocated, and leave the context as it was. Runs on the device named by
 * CLMG_DEVICE (pocl by default, see tests/CMakeLists.txt). */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

/* ---- helpers ---- */

static clmg_context *open_with(const clmg_context_options *options) {
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(options, &ctx);
  if (status != CLMG_SUCCESS)
    fail_msg("context: %s: %s", clmg_status_string(status),
             ctx ? clmg_context_message(ctx) : "(no context)");
  return ctx;
}

static clmg_context *open_limited(uint64_t limit) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.memory_limit_bytes = limit;
  return open_with(&options);
}

/* "1,048,576 bytes": how the library writes an exact count. */
static const char *exact_bytes(uint64_t bytes, char *text, size_t size) {
  char digits[32], grouped[48];
  int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)bytes), at = 0;
  for (int i = 0; i < n; i++) {
    if (i > 0 && (n - i) % 3 == 0)
      grouped[at++] = ',';
    grouped[at++] = digits[i];
  }
  grouped[at] = '\0';
  snprintf(text, size, "%s bytes", grouped);
  return text;
}

#define CHECK_BYTES(message, bytes)                                                                \
  do {                                                                                             \
    char bytes_text_[64];                                                                          \
    CHECK_CONTAINS(message, exact_bytes(bytes, bytes_text_, sizeof bytes_text_));                  \
  } while (0)

/* The readable forms that follow exact counts: "(8.0005 GiB)". */
static int readable_forms(const char *message, char forms[][32], int max) {
  int count = 0;
  for (const char *p = strstr(message, " bytes ("); p && count < max;
       p = strstr(p + 1, " bytes (")) {
    const char *start = p + strlen(" bytes ("), *end = strchr(start, ')');
    if (!end || end - start >= 32)
      continue;
    memcpy(forms[count], start, (size_t)(end - start));
    forms[count][end - start] = '\0';
    count++;
  }
  return count;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *saved_limit, *saved_fp64;

static int save_environment(void **state) {
  (void)state;
  saved_limit = getenv("CLMG_MEMORY_LIMIT") ? strdup(getenv("CLMG_MEMORY_LIMIT")) : NULL;
  saved_fp64 = getenv("CLMG_DISABLE_FP64") ? strdup(getenv("CLMG_DISABLE_FP64")) : NULL;
  unsetenv("CLMG_MEMORY_LIMIT");
  unsetenv("CLMG_DISABLE_FP64");
  return 0;
}

static int restore_environment(void **state) {
  (void)state;
  if (saved_limit)
    setenv("CLMG_MEMORY_LIMIT", saved_limit, 1);
  else
    unsetenv("CLMG_MEMORY_LIMIT");
  if (saved_fp64)
    setenv("CLMG_DISABLE_FP64", saved_fp64, 1);
  else
    unsetenv("CLMG_DISABLE_FP64");
  free(saved_limit);
  free(saved_fp64);
  saved_limit = saved_fp64 = NULL;
  return 0;
}

/* ---- the memory limit ---- */

static void test_options_defaults(void **state) {
  (void)state;
  clmg_context_options options;
  memset(&options, 0xa5, sizeof options);
  clmg_context_options_defaults(&options);
  assert_true(options.memory_limit_bytes == 0);
  assert_int_equal(options.disable_fp64, 0);
}

/* An allocation past the limit fails before anything is allocated, names
 * the sizes, and leaves the context's bytes as they were; freeing makes
 * room again. */
static void test_memory_limit(void **state) {
  (void)state;
  const uint64_t limit = 1 << 20;
  clmg_context *ctx = open_limited(limit);
  assert_true(clmg_context_memory_limit(ctx) == limit);
  clmg_vector *first = NULL, *second = NULL;
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, 1 << 17, &first)); /* 512 KiB */
  uint64_t held = clmg_context_device_bytes(ctx);
  assert_true(held >= (1 << 19));

  second = (clmg_vector *)&second; /* must come back NULL */
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
               clmg_vector_create(ctx, CLMG_FLOAT, 3 << 16, &second)); /* 768 KiB */
  assert_null(second);
  const char *message = clmg_context_message(ctx);
  CHECK_BYTES(message, 3 << 18);      /* needed */
  CHECK_BYTES(message, held);         /* already held */
  CHECK_BYTES(message, limit);        /* the limit */
  CHECK_BYTES(message, limit - held); /* what it leaves */
  CHECK_CONTAINS(message, "memory_limit_bytes");
  CHECK_CONTAINS(message, "memory limit");
  assert_true(clmg_context_device_bytes(ctx) == held);

  clmg_vector_destroy(first);
  assert_true(clmg_context_device_bytes(ctx) == 0);
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, 3 << 16, &second));
  clmg_vector_destroy(second);
  clmg_context_destroy(ctx);
}

/* A matrix (several buffers) that does not fit leaves nothing behind. */
static void test_memory_limit_matrix(void **state) {
  (void)state;
  enum { N = 20000 };
  triplets t = {0};
  for (size_t i = 0; i < N; i++) {
    triplets_add(&t, i, i, 4.0);
    if (i > 0)
      triplets_add(&t, i, i - 1, -1.0);
    if (i + 1 < N)
      triplets_add(&t, i, i + 1, -1.0);
  }
  clmg_csr a = triplets_to_csr(&t, N);
  clmg_context *ctx = open_limited(200000); /* the values alone take 480 KB */
  clmg_matrix *m = NULL;
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.precision = CLMG_DOUBLE;
  if (!clmg_context_device(ctx)->has_fp64)
    options.precision = CLMG_FLOAT;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY, clmg_matrix_create(ctx, &a, &options, &m));
  assert_null(m);
  CHECK_CONTAINS(clmg_context_message(ctx), "memory limit");
  assert_true(clmg_context_device_bytes(ctx) == 0);
  clmg_context_destroy(ctx);
  clmg_csr_free(&a);
}

static void expect_size(const char *text, uint64_t expected) {
  uint64_t bytes = 12345;
  clmg_status status = clmg_parse_memory_size(text, &bytes);
  if (status != CLMG_SUCCESS || bytes != expected)
    fail_msg("\"%s\": %s, %llu bytes; expected %llu", text, clmg_status_string(status),
             (unsigned long long)bytes, (unsigned long long)expected);
}

static void test_parse_memory_size(void **state) {
  (void)state;
  expect_size("0", 0);
  expect_size("1000000", 1000000);
  expect_size("512M", 512ull << 20);
  expect_size("512m", 512ull << 20);
  expect_size("2G", 2ull << 30);
  expect_size("2GiB", 2ull << 30);
  expect_size("2GB", 2ull << 30);
  expect_size("64K", 64ull << 10);
  expect_size("1.5G", 3ull << 29);
  expect_size("1T", 1ull << 40);
  expect_size("100B", 100);
  expect_size("18446744073709551615", UINT64_MAX);
  static const char *const bad[] = {"",    "-1",  "abc", "12X",       "1.5",
                                    "1e6", " 1M", "1M ", "1MM",       "1.G",
                                    "M",   ".5G", "+1G", "16777216T", "18446744073709551616"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t bytes = 777;
    if (clmg_parse_memory_size(bad[i], &bytes) != CLMG_ERROR_INVALID_ARGUMENT)
      fail_msg("\"%s\" parsed as %llu bytes", bad[i], (unsigned long long)bytes);
    assert_true(bytes == 777);
  }
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_parse_memory_size(NULL, NULL));
}

static void expect_env_limit(const char *value, uint64_t expected) {
  assert_int_equal(setenv("CLMG_MEMORY_LIMIT", value, 1), 0);
  clmg_context *ctx = open_with(NULL);
  if (clmg_context_memory_limit(ctx) != expected)
    fail_msg("CLMG_MEMORY_LIMIT=\"%s\": limit %llu, expected %llu", value,
             (unsigned long long)clmg_context_memory_limit(ctx), (unsigned long long)expected);
  clmg_context_destroy(ctx);
}

/* CLMG_MEMORY_LIMIT is read when the option is 0; a value that is not a
 * size fails the context's creation (a limit silently ignored would let a
 * run take what it was meant not to). */
static void test_memory_limit_environment(void **state) {
  (void)state;
  expect_env_limit("512M", 512ull << 20);
  expect_env_limit("2G", 2ull << 30);
  expect_env_limit("1000000", 1000000);
  expect_env_limit("0", 0);
  expect_env_limit("", 0);

  static const char *const bad[] = {"abc", "-5M", "12X", "1.5", "lots"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(setenv("CLMG_MEMORY_LIMIT", bad[i], 1), 0);
    clmg_context *ctx = NULL;
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_context_create(NULL, &ctx));
    assert_non_null(ctx);
    CHECK_CONTAINS(clmg_context_message(ctx), "CLMG_MEMORY_LIMIT");
    CHECK_CONTAINS(clmg_context_message(ctx), bad[i]);
    clmg_context_destroy(ctx);
  }

  /* The option wins over the variable. */
  assert_int_equal(setenv("CLMG_MEMORY_LIMIT", "1M", 1), 0);
  clmg_context *ctx = open_limited(2 << 20);
  assert_true(clmg_context_memory_limit(ctx) == (2 << 20));
  clmg_context_destroy(ctx);

  /* A failure names the variable as where the limit came from. */
  ctx = open_with(NULL);
  clmg_vector *v = NULL;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY, clmg_vector_create(ctx, CLMG_FLOAT, 1 << 19, &v));
  CHECK_CONTAINS(clmg_context_message(ctx), "CLMG_MEMORY_LIMIT=1M");
  CHECK_BYTES(clmg_context_message(ctx), 2 << 20);
  CHECK_BYTES(clmg_context_message(ctx), 1 << 20);
  assert_true(clmg_context_device_bytes(ctx) == 0);
  clmg_context_destroy(ctx);
}

/* ---- the device's own limits ---- */

/* One element more than the largest allocation: the message gives both
 * counts exactly, and their readable forms differ too (they once read
 * "8.59 GB, more than the largest single allocation (8.59 GB)"). */
static void test_larger_than_max_alloc(void **state) {
  (void)state;
  clmg_context *ctx = open_with(NULL);
  const clmg_device_info *device = clmg_context_device(ctx);
  size_t n = (size_t)(device->max_alloc_bytes / 4) + 1;
  clmg_vector *v = NULL;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY, clmg_vector_create(ctx, CLMG_FLOAT, n, &v));
  assert_null(v);
  const char *message = clmg_context_message(ctx);
  CHECK_BYTES(message, (uint64_t)n * 4);
  CHECK_BYTES(message, device->max_alloc_bytes);
  CHECK_CONTAINS(message, "largest single allocation");
  char forms[4][32];
  if (readable_forms(message, forms, 4) < 2)
    fail_msg("no readable sizes in \"%s\"", message);
  if (strcmp(forms[0], forms[1]) == 0)
    fail_msg("needed and largest allocation both read \"%s\": \"%s\"", forms[0], message);
  assert_true(clmg_context_device_bytes(ctx) == 0);
  clmg_context_destroy(ctx);
}

/* clmg_context_check_memory: the device's memory and the host's, checked
 * without allocating. */
static void test_check_memory(void **state) {
  (void)state;
  clmg_context *ctx = open_with(NULL);
  const clmg_device_info *device = clmg_context_device(ctx);
  CHECK_CONTEXT_OK(ctx, clmg_context_check_memory(ctx, 1 << 20, 1 << 20, 1 << 20, "a small run"));

  uint64_t total = device->global_mem_bytes + 1;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
               clmg_context_check_memory(ctx, total, 1024, 0, "a run of many buffers"));
  const char *message = clmg_context_message(ctx);
  CHECK_CONTAINS(message, "a run of many buffers");
  CHECK_BYTES(message, total);
  CHECK_BYTES(message, device->global_mem_bytes);

  /* More host memory than any host has (an exabyte). */
  const uint64_t exabyte = 1ull << 60;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_HOST_MEMORY,
               clmg_context_check_memory(ctx, 0, 0, exabyte, "a host-heavy run"));
  message = clmg_context_message(ctx);
  CHECK_BYTES(message, exabyte);
  CHECK_CONTAINS(message, "available");
#ifdef __linux__
  CHECK_CONTAINS(message, "MemAvailable");
#endif
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_context_check_memory(ctx, 10, 20, 0, "x"));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_context_check_memory(NULL, 0, 0, 0, "x"));
  clmg_context_destroy(ctx);
}

#ifdef __linux__
static uint64_t vm_size(void) {
  FILE *f = fopen("/proc/self/status", "r");
  assert_non_null(f);
  char line[256];
  unsigned long long kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
      break;
  fclose(f);
  assert_true(kb > 0);
  return (uint64_t)kb * 1024;
}
#endif

/* On a CPU device the device's memory is the process's: with the address
 * space nearly used up (RLIMIT_AS), an allocation that would not fit fails
 * with the numbers, where pocl asserted (SIGABRT) when its host allocation
 * failed. */
static void test_address_space_limit(void **state) {
  (void)state;
#ifndef __linux__
  skip();
#else
  clmg_context *ctx = open_with(NULL);
  const clmg_device_info *device = clmg_context_device(ctx);
  if (!device->is_cpu) {
    clmg_context_destroy(ctx);
    skip();
  }
  uint64_t bytes = 256u << 20;
  if (bytes > device->max_alloc_bytes)
    bytes = device->max_alloc_bytes;
  struct rlimit saved, tight;
  assert_int_equal(getrlimit(RLIMIT_AS, &saved), 0);
  tight = saved;
  uint64_t room = vm_size() + (64u << 20);
  if (saved.rlim_cur != RLIM_INFINITY && (uint64_t)saved.rlim_cur < room) {
    clmg_context_destroy(ctx);
    skip();
  }
  tight.rlim_cur = (rlim_t)room;
  assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
  clmg_vector *v = NULL;
  clmg_status status = clmg_vector_create(ctx, CLMG_FLOAT, (size_t)(bytes / 4), &v);
  assert_int_equal(setrlimit(RLIMIT_AS, &saved), 0);
  if (status != CLMG_ERROR_OUT_OF_DEVICE_MEMORY)
    fail_msg("a %llu-byte vector with 64 MiB of address space left: %s: %s",
             (unsigned long long)bytes, clmg_status_string(status), clmg_context_message(ctx));
  assert_null(v);
  const char *message = clmg_context_message(ctx);
  CHECK_CONTAINS(message, "RLIMIT_AS");
  CHECK_CONTAINS(message, "host memory");
  CHECK_BYTES(message, bytes);
  assert_true(clmg_context_device_bytes(ctx) == 0);
  /* and with the limit lifted it works */
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, (size_t)(bytes / 4), &v));
  clmg_vector_destroy(v);
  clmg_context_destroy(ctx);
#endif
}

/* ---- HOMG: the whole need, up front ---- */

static void homg_need_case(size_t n, clmg_homg_method method, clmg_dtype type) {
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.method = method;
  options.precision = type;
  clmg_context *ctx = open_with(NULL);
  uint64_t need = 0, largest = 0, host = 0;
  CHECK_CONTEXT_OK(ctx, clmg_homg_memory_need(ctx, n, &options, &need, &largest, &host));
  assert_true(largest > 0 && largest <= need && host > 0);
  assert_true(largest >= (uint64_t)n * n * clmg_dtype_size(type));

  /* What the solver holds: all of the need for homg; for the classic
   * methods at most the need (an upper bound). */
  clmg_homg *h = NULL;
  CHECK_CONTEXT_OK(ctx, clmg_homg_create(ctx, n, &options, &h));
  uint64_t held = clmg_context_device_bytes(ctx);
  if (method == CLMG_HOMG_MFMG ? held != need : held > need)
    fail_msg("n = %zu, %s: the solver holds %llu bytes, the need says %llu", n,
             clmg_homg_method_name(method), (unsigned long long)held, (unsigned long long)need);
  clmg_homg_destroy(h);
  clmg_context_destroy(ctx);

  /* A limit of exactly the need is enough (the need covers the peak)... */
  ctx = open_limited(need);
  CHECK_CONTEXT_OK(ctx, clmg_homg_create(ctx, n, &options, &h));
  clmg_homg_destroy(h);
  clmg_context_destroy(ctx);

  /* ...and one byte less fails at once, naming both numbers. */
  ctx = open_limited(need - 1);
  h = (clmg_homg *)&h;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY, clmg_homg_create(ctx, n, &options, &h));
  assert_null(h);
  const char *message = clmg_context_message(ctx);
  CHECK_BYTES(message, need);
  CHECK_BYTES(message, need - 1);
  CHECK_CONTAINS(message, "HOMG");
  assert_true(clmg_context_device_bytes(ctx) == 0);
  clmg_context_destroy(ctx);
}

static void test_homg_memory_need(void **state) {
  (void)state;
  clmg_context *probe = open_with(NULL);
  clmg_dtype type = clmg_context_device(probe)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  clmg_context_destroy(probe);
  homg_need_case(65, CLMG_HOMG_MFMG, type);
  homg_need_case(64, CLMG_HOMG_MFMG, CLMG_FLOAT);
  homg_need_case(65, CLMG_HOMG_VCYCLE, type);
  homg_need_case(33, CLMG_HOMG_FMG, CLMG_FLOAT);
}

/* The largest grid under a small limit fails in well under a second,
 * before any of its 8.6 GB are asked for, with the need and the limit. */
static void test_homg_too_large(void **state) {
  (void)state;
  const uint64_t limit = 64u << 20;
  clmg_context *ctx = open_limited(limit);
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.precision = CLMG_FLOAT;
  uint64_t need = 0;
  CHECK_CONTEXT_OK(ctx, clmg_homg_memory_need(ctx, 32769, &options, &need, NULL, NULL));
  double start = seconds_now();
  clmg_homg *h = NULL;
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY, clmg_homg_create(ctx, 32769, &options, &h));
  double seconds = seconds_now() - start;
  assert_null(h);
  const char *message = clmg_context_message(ctx);
  /* the first check that fails: the largest allocation, or the limit */
  uint64_t grid = 32769ull * 32769 * 4;
  if (grid > clmg_context_device(ctx)->max_alloc_bytes) {
    CHECK_BYTES(message, grid);
    CHECK_BYTES(message, clmg_context_device(ctx)->max_alloc_bytes);
  } else {
    CHECK_BYTES(message, need);
    CHECK_BYTES(message, limit);
  }
  if (seconds > 1.0)
    fail_msg("the failure took %.2f s", seconds);
  assert_true(clmg_context_device_bytes(ctx) == 0);

  /* A grid within the largest allocation but over the limit: the total. */
  CHECK_CONTEXT_OK(ctx, clmg_homg_memory_need(ctx, 4097, &options, &need, NULL, NULL));
  assert_true(need > limit);
  CHECK_STATUS(CLMG_ERROR_OUT_OF_DEVICE_MEMORY, clmg_homg_create(ctx, 4097, &options, &h));
  message = clmg_context_message(ctx);
  CHECK_BYTES(message, need);
  CHECK_BYTES(message, limit);
  CHECK_CONTAINS(message, "n = 4097");
  assert_true(clmg_context_device_bytes(ctx) == 0);
  clmg_context_destroy(ctx);
}

/* ---- no double precision ---- */

static void expect_no_fp64(clmg_context *ctx, const char *origin) {
  assert_int_equal(clmg_context_device(ctx)->has_fp64, 0);
  clmg_vector *v = NULL;
  CHECK_STATUS(CLMG_ERROR_UNSUPPORTED, clmg_vector_create(ctx, CLMG_DOUBLE, 16, &v));
  assert_null(v);
  const char *message = clmg_context_message(ctx);
  CHECK_CONTAINS(message, "has no double precision (cl_khr_fp64");
  CHECK_CONTAINS(message, "use float");
  CHECK_CONTAINS(message, origin);
  CHECK_STATUS(CLMG_ERROR_UNSUPPORTED, clmg_context_check_precision(ctx, CLMG_DOUBLE));
  CHECK_CONTEXT_OK(ctx, clmg_context_check_precision(ctx, CLMG_FLOAT));

  /* Float works, kernels included: none of them may use double. */
  enum { N = 1000 };
  float x[N], y[N];
  double expected = 0;
  for (int i = 0; i < N; i++) {
    x[i] = (float)rng_uniform();
    y[i] = (float)rng_uniform();
    expected += (double)x[i] * y[i];
  }
  clmg_vector *vx = NULL, *vy = NULL;
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, N, &vx));
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, N, &vy));
  CHECK_CONTEXT_OK(ctx, clmg_vector_upload(vx, x));
  CHECK_CONTEXT_OK(ctx, clmg_vector_upload(vy, y));
  double dot = 0;
  CHECK_CONTEXT_OK(ctx, clmg_dot(vx, vy, &dot));
  assert_true(fabs(dot - expected) < 1e-3 * N);
  CHECK_CONTEXT_OK(ctx, clmg_axpy(2.0, vx, vy));
  clmg_vector_destroy(vx);
  clmg_vector_destroy(vy);

  /* HOMG in float solves; in double it is refused up front. */
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  clmg_homg *h = NULL;
  CHECK_STATUS(CLMG_ERROR_UNSUPPORTED, clmg_homg_create(ctx, 17, &options, &h));
  CHECK_CONTAINS(clmg_context_message(ctx), "use float");
  options.precision = CLMG_FLOAT;
  options.relative_tolerance = 0; /* exactly max_cycles */
  options.max_cycles = 2;
  CHECK_CONTEXT_OK(ctx, clmg_homg_create(ctx, 17, &options, &h));
  size_t points = 17 * 17;
  clmg_vector *f = NULL, *u = NULL;
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, points, &f));
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, points, &u));
  CHECK_CONTEXT_OK(ctx, clmg_vector_fill(f, 1.0));
  CHECK_CONTEXT_OK(ctx, clmg_homg_solve(h, f, u, NULL, NULL));
  clmg_vector_destroy(f);
  clmg_vector_destroy(u);
  clmg_homg_destroy(h);
}

static void test_disable_fp64(void **state) {
  (void)state;
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.disable_fp64 = 1;
  options.disable_binary_cache = 1; /* the kernels really compile without double */
  clmg_context *ctx = open_with(&options);
  expect_no_fp64(ctx, "disable_fp64");
  clmg_context_destroy(ctx);
}

static void test_disable_fp64_environment(void **state) {
  (void)state;
  assert_int_equal(setenv("CLMG_DISABLE_FP64", "1", 1), 0);
  clmg_context *ctx = open_with(NULL);
  expect_no_fp64(ctx, "CLMG_DISABLE_FP64");
  clmg_context_destroy(ctx);

  /* "0" leaves the device as it is */
  unsetenv("CLMG_DISABLE_FP64");
  clmg_context *plain = open_with(NULL);
  int has_fp64 = clmg_context_device(plain)->has_fp64;
  clmg_context_destroy(plain);
  assert_int_equal(setenv("CLMG_DISABLE_FP64", "0", 1), 0);
  ctx = open_with(NULL);
  assert_int_equal(clmg_context_device(ctx)->has_fp64, has_fp64);
  clmg_context_destroy(ctx);

  assert_int_equal(setenv("CLMG_DISABLE_FP64", "maybe", 1), 0);
  ctx = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_context_create(NULL, &ctx));
  CHECK_CONTAINS(clmg_context_message(ctx), "CLMG_DISABLE_FP64");
  clmg_context_destroy(ctx);
}

/* ---- kernels that do not build ---- */

static void write_text(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f)
    fail_msg("cannot write %s: %s", path, strerror(errno));
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static clmg_context *open_kernel_dir(const char *dir) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.kernel_dir = dir;
  options.disable_binary_cache = 1;
  options.blas1_backend = CLMG_BLAS1_NATIVE;
  return open_with(&options);
}

static clmg_status dot_of_two(clmg_context *ctx) {
  clmg_vector *x = NULL, *y = NULL;
  double result = 0;
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, 8, &x));
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_FLOAT, 8, &y));
  clmg_status status = clmg_dot(x, y, &result);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  return status;
}

/* The build log is in the message and points at the file and line of the
 * error in the family's own source, not at a line of the source the
 * program manager puts together (prelude first). */
static void test_build_log_names_the_line(void **state) {
  (void)state;
  char *dir = make_tmpdir("brokenline");
  write_text(dir, "blas1.cl",
             "/* line 1 */\n"
             "kernel void dot(global const float *x, global float *y) {\n"
             "  y[0] = x[0];\n"
             "  y[1] = x[1] * not_declared_anywhere;\n"
             "}\n");
  clmg_context *ctx = open_kernel_dir(dir);
  CHECK_STATUS(CLMG_ERROR_BUILD_FAILED, dot_of_two(ctx));
  const char *message = clmg_context_message(ctx);
  CHECK_CONTAINS(message, "build log");
  CHECK_CONTAINS(message, "not_declared_anywhere");
  CHECK_CONTAINS(message, "error");
  CHECK_CONTAINS(message, "blas1.cl:4:");
  clmg_context_destroy(ctx);
  remove_tree(dir);
}

/* A log longer than the message keeps its start (the first errors) and
 * says that it was cut and how long it was. */
static void test_long_build_log(void **state) {
  (void)state;
  char *dir = make_tmpdir("brokenlong");
  size_t size = 400 * 64 + 64;
  char *text = malloc(size), *at = text;
  assert_non_null(text);
  at += sprintf(at, "kernel void dot(global float *y) {\n");
  for (int i = 0; i < 400; i++)
    at += sprintf(at, "  y[%d] = undeclared_number_%03d;\n", i, i);
  sprintf(at, "}\n");
  write_text(dir, "blas1.cl", text);
  free(text);
  clmg_context *ctx = open_kernel_dir(dir);
  CHECK_STATUS(CLMG_ERROR_BUILD_FAILED, dot_of_two(ctx));
  const char *message = clmg_context_message(ctx);
  CHECK_CONTAINS(message, "undeclared_number_000");
  CHECK_CONTAINS(message, "blas1.cl:2:");
  CHECK_CONTAINS(message, "[build log cut: its first");
  assert_true(strlen(message) > 4000);
  clmg_context_destroy(ctx);
  remove_tree(dir);
}

int main(void) {
  rng_seed(0x5eed0fau);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_defaults),
      cmocka_unit_test_setup_teardown(test_memory_limit, save_environment, restore_environment),
      cmocka_unit_test_setup_teardown(test_memory_limit_matrix, save_environment,
                                      restore_environment),
      cmocka_unit_test(test_parse_memory_size),
      cmocka_unit_test_setup_teardown(test_memory_limit_environment, save_environment,
                                      restore_environment),
      cmocka_unit_test_setup_teardown(test_larger_than_max_alloc, save_environment,
                                      restore_environment),
      cmocka_unit_test_setup_teardown(test_check_memory, save_environment, restore_environment),
      cmocka_unit_test_setup_teardown(test_address_space_limit, save_environment,
                                      restore_environment),
      cmocka_unit_test_setup_teardown(test_homg_memory_need, save_environment, restore_environment),
      cmocka_unit_test_setup_teardown(test_homg_too_large, save_environment, restore_environment),
      cmocka_unit_test_setup_teardown(test_disable_fp64, save_environment, restore_environment),
      cmocka_unit_test_setup_teardown(test_disable_fp64_environment, save_environment,
                                      restore_environment),
      cmocka_unit_test_setup_teardown(test_build_log_names_the_line, save_environment,
                                      restore_environment),
      cmocka_unit_test_setup_teardown(test_long_build_log, save_environment, restore_environment),
  };
  return cmocka_run_group_tests_name("device_faults", tests, NULL, NULL);
}
