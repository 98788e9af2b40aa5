/* Tests of the core layer: status strings, version, device listing and
 * selection, context creation, the program-binary cache, kernel directories
 * and build failures. Runs on the device named by CLMG_DEVICE (pocl by
 * default, see tests/CMakeLists.txt). */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

#ifndef CLMG_SOURCE_DIR
#error "CLMG_SOURCE_DIR must name the source tree (set by tests/CMakeLists.txt)"
#endif

/* ---- helpers ---- */

#define CHECK_OK(context, call) CHECK_CONTEXT_OK(context, call)

static int tolower_ascii(int c) {
  return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int contains_nocase(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  for (const char *h = haystack; *h; h++) {
    size_t i = 0;
    while (i < n && h[i] && tolower_ascii(h[i]) == tolower_ascii(needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return n == 0;
}

static void write_file(const char *dir, const char *name, const char *text, size_t size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f)
    fail_msg("cannot write %s: %s", path, strerror(errno));
  assert_int_equal(fwrite(text, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* Copies cl/<name> of the source tree into dir; returns 0 if it does not exist. */
static int copy_kernel_file(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/cl/%s", CLMG_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  char *text = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size + 4096 > cap) {
      cap = 2 * cap + 4096;
      text = realloc(text, cap);
      assert_non_null(text);
    }
    size_t got = fread(text + size, 1, cap - size, f);
    size += got;
    if (got == 0)
      break;
  }
  fclose(f);
  write_file(dir, name, text, size);
  free(text);
  return 1;
}

/* ---- corrupting the binary cache ---- */

enum corruption { CORRUPT_TRUNCATE_HALF, CORRUPT_GARBAGE, CORRUPT_FLIP_MIDDLE, CORRUPT_EMPTY };
static enum corruption corrupt_mode;
static unsigned corrupted_files;
static unsigned long long cache_bytes;

static int corrupt_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)ftw;
  if (flag != FTW_F)
    return 0;
  long size = (long)sb->st_size;
  switch (corrupt_mode) {
  case CORRUPT_TRUNCATE_HALF:
    if (truncate(path, size / 2) != 0)
      return -1;
    break;
  case CORRUPT_EMPTY:
    if (truncate(path, 0) != 0)
      return -1;
    break;
  case CORRUPT_GARBAGE: {
    FILE *f = fopen(path, "wb");
    if (!f)
      return -1;
    for (long i = 0; i < (size > 64 ? size : 64); i++)
      fputc((int)(rng_next() & 0xff), f);
    fclose(f);
    break;
  }
  case CORRUPT_FLIP_MIDDLE: {
    /* Keeps the size and the head of the file (where a header would be) and
     * flips bytes in the second half. */
    FILE *f = fopen(path, "r+b");
    if (!f)
      return -1;
    for (long pos = size / 2; pos < size; pos += 97) {
      if (fseek(f, pos, SEEK_SET) != 0)
        break;
      int c = fgetc(f);
      if (c == EOF || fseek(f, pos, SEEK_SET) != 0)
        break;
      fputc(c ^ 0x5a, f);
    }
    fclose(f);
    break;
  }
  }
  corrupted_files++;
  return 0;
}

static unsigned corrupt_cache(const char *dir, enum corruption mode) {
  corrupt_mode = mode;
  corrupted_files = 0;
  assert_int_equal(nftw(dir, corrupt_cb, 16, FTW_PHYS), 0);
  return corrupted_files;
}

static int count_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)path;
  (void)ftw;
  if (flag == FTW_F) {
    corrupted_files++;
    cache_bytes += (unsigned long long)sb->st_size;
  }
  return 0;
}

/* Number of regular files under dir; *bytes gets their total size. */
static unsigned count_files(const char *dir, unsigned long long *bytes) {
  corrupted_files = 0;
  cache_bytes = 0;
  assert_int_equal(nftw(dir, count_cb, 16, FTW_PHYS), 0);
  if (bytes)
    *bytes = cache_bytes;
  return corrupted_files;
}

/* ---- a small workload that compiles the blas1 kernels ---- */

/* Fills and uploads double vectors, runs clmg_vector_fill and clmg_dot, and
 * checks the result against the host. */
static void blas1_workload(clmg_context *ctx) {
  enum { N = 1000 };
  double x[N], y[N];
  for (int i = 0; i < N; i++)
    x[i] = rng_uniform();
  double value = rng_uniform();
  clmg_vector *vx = NULL, *vy = NULL;
  CHECK_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, N, &vx));
  CHECK_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, N, &vy));
  CHECK_OK(ctx, clmg_vector_upload(vx, x));
  CHECK_OK(ctx, clmg_vector_fill(vy, value));
  CHECK_OK(ctx, clmg_vector_download(vy, y));
  for (int i = 0; i < N; i++)
    if (y[i] != value)
      fail_msg("fill: y[%d] = %.17g, expected %.17g", i, y[i], value);
  double got = 0.0, ref = 0.0, mag = 0.0;
  CHECK_OK(ctx, clmg_dot(vx, vy, &got));
  for (int i = 0; i < N; i++) {
    ref += x[i] * value;
    mag += fabs(x[i] * value);
  }
  if (!(fabs(got - ref) <= 1e-12 * mag))
    fail_msg("dot = %.17g, expected %.17g", got, ref);
  clmg_vector_destroy(vx);
  clmg_vector_destroy(vy);
}

static void program_counts(const clmg_context *ctx, unsigned *built, unsigned *cached) {
  *built = 12345;
  *cached = 12345;
  clmg_context_program_counts(ctx, built, cached);
  assert_int_not_equal(*built, 12345);
  assert_int_not_equal(*cached, 12345);
}

/* Creates a context on the test device with the given cache dir, runs the
 * workload, and returns the program counts. */
static void cached_run(const char *cache_dir, unsigned *built, unsigned *cached) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.cache_dir = cache_dir;
  options.blas1_backend = CLMG_BLAS1_NATIVE; /* the program manager serves every op */
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(&options, &ctx);
  if (status != CLMG_SUCCESS)
    fail_msg("context create: %s: %s", clmg_status_string(status),
             ctx ? clmg_context_message(ctx) : "(no context)");
  blas1_workload(ctx);
  program_counts(ctx, built, cached);
  clmg_context_destroy(ctx);
}

static clmg_device_info *list_devices(size_t *count) {
  clmg_device_info *devices = NULL;
  char message[512] = "";
  clmg_status status = clmg_list_devices(&devices, count, message, sizeof message);
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_list_devices: %s: %s", clmg_status_string(status), message);
  assert_non_null(devices);
  assert_true(*count >= 1);
  return devices;
}

/* Creates a context for `device` and fails the test (with the message) unless it works. */
static clmg_context *open_device(const char *device) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = device;
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(&options, &ctx);
  if (status != CLMG_SUCCESS)
    fail_msg("context create(\"%s\"): %s: %s", device ? device : "(NULL)",
             clmg_status_string(status), ctx ? clmg_context_message(ctx) : "(no context)");
  assert_non_null(ctx);
  return ctx;
}

/* ---- status, version ---- */

/* A process filling its rows from its first row gets the entries the whole
 * sequence has there: the start vectors do not depend on the split. */
static void test_pseudo_random_split(void **state) {
  (void)state;
  double whole[1000], part[1000];
  clmg_fill_pseudo_random(whole, 1000, 42, 0, -1.0, 1.0);
  for (size_t first = 0; first < 1000; first += 97) {
    clmg_fill_pseudo_random(part, 1000 - first, 42, first, -1.0, 1.0);
    for (size_t i = 0; first + i < 1000; i++)
      assert_true(part[i] == whole[first + i]);
  }
  for (size_t i = 0; i < 1000; i++)
    assert_true(whole[i] >= -1.0 && whole[i] < 1.0);
  assert_true(whole[0] != whole[1]);
}

static void test_status_strings(void **state) {
  (void)state;
  const clmg_status last = CLMG_ERROR_COMMUNICATION;
  for (int a = CLMG_SUCCESS; a <= (int)last; a++) {
    const char *sa = clmg_status_string((clmg_status)a);
    assert_non_null(sa);
    assert_true(strlen(sa) > 0);
    for (int b = CLMG_SUCCESS; b < a; b++)
      if (strcmp(sa, clmg_status_string((clmg_status)b)) == 0)
        fail_msg("status %d and %d share the string \"%s\"", a, b, sa);
  }
  /* An unknown code still gives a string, never NULL. */
  assert_non_null(clmg_status_string((clmg_status)9999));
  assert_non_null(clmg_status_string((clmg_status)-1));
}

static void test_version(void **state) {
  (void)state;
  assert_non_null(clmg_version_string());
  assert_string_equal(clmg_version_string(), CLMG_VERSION_STRING);
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", CLMG_VERSION_MAJOR, CLMG_VERSION_MINOR,
           CLMG_VERSION_PATCH);
  assert_string_equal(CLMG_VERSION_STRING, expected);
}

static void test_options_defaults(void **state) {
  (void)state;
  clmg_context_options options;
  memset(&options, 0xa5, sizeof options);
  clmg_context_options_defaults(&options);
  assert_null(options.device);
  assert_null(options.cache_dir);
  assert_null(options.kernel_dir);
  assert_int_equal(options.disable_binary_cache, 0);
  assert_int_equal(options.blas1_backend, CLMG_BLAS1_AUTO);
}

/* ---- devices ---- */

static unsigned raw_device_count(void) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS)
    return 0;
  cl_platform_id *platforms = calloc(np, sizeof *platforms);
  assert_non_null(platforms);
  assert_int_equal(clGetPlatformIDs(np, platforms, NULL), CL_SUCCESS);
  unsigned total = 0;
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS)
      total += nd;
  }
  free(platforms);
  return total;
}

static void test_list_devices(void **state) {
  (void)state;
  size_t count = 0;
  clmg_device_info *devices = list_devices(&count);
  assert_int_equal(count, raw_device_count());
  for (size_t i = 0; i < count; i++) {
    const clmg_device_info *d = &devices[i];
    assert_true(strlen(d->name) > 0 && strlen(d->name) < sizeof d->name);
    assert_true(strlen(d->platform_name) > 0 && strlen(d->platform_name) < sizeof d->name);
    assert_true(strlen(d->vendor) > 0);
    assert_true(strlen(d->driver_version) > 0);
    if (strncmp(d->opencl_version, "OpenCL ", 7) != 0)
      fail_msg("device %zu: opencl_version \"%s\"", i, d->opencl_version);
    if (strncmp(d->platform_version, "OpenCL ", 7) != 0)
      fail_msg("device %zu: platform_version \"%s\"", i, d->platform_version);
    assert_true(d->is_gpu == 0 || d->is_gpu == 1);
    assert_true(d->is_cpu == 0 || d->is_cpu == 1);
    assert_false(d->is_gpu && d->is_cpu);
    assert_true(d->has_fp64 == 0 || d->has_fp64 == 1);
    assert_true(d->compute_units >= 1);
    assert_true(d->global_mem_bytes >= (1u << 20));
    assert_true(d->max_alloc_bytes >= (1u << 20));
    assert_true(d->max_alloc_bytes <= d->global_mem_bytes);
    assert_true(d->local_mem_bytes >= 1024);
    assert_true(d->max_work_group_size >= 1);
    /* Indices are unique and in listing order. */
    if (i > 0) {
      const clmg_device_info *prev = &devices[i - 1];
      assert_true(
          d->platform_index > prev->platform_index ||
          (d->platform_index == prev->platform_index && d->device_index == prev->device_index + 1));
      if (d->platform_index != prev->platform_index)
        assert_int_equal(d->device_index, 0);
    } else {
      assert_int_equal(d->device_index, 0);
    }
  }
  free(devices);

  /* NULL outputs are rejected. */
  size_t n = 0;
  char message[64];
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_list_devices(NULL, &n, message, sizeof message));
  clmg_device_info *d2 = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_list_devices(&d2, NULL, NULL, 0));
  assert_null(d2);
}

static const clmg_device_info *find_listed(const clmg_device_info *devices, size_t count,
                                           const clmg_device_info *info) {
  for (size_t i = 0; i < count; i++)
    if (devices[i].platform_index == info->platform_index &&
        devices[i].device_index == info->device_index)
      return &devices[i];
  return NULL;
}

static void assert_same_device(const clmg_device_info *a, const clmg_device_info *b) {
  assert_int_equal(a->platform_index, b->platform_index);
  assert_int_equal(a->device_index, b->device_index);
  assert_string_equal(a->name, b->name);
  assert_string_equal(a->platform_name, b->platform_name);
  assert_string_equal(a->vendor, b->vendor);
  assert_string_equal(a->driver_version, b->driver_version);
  assert_string_equal(a->opencl_version, b->opencl_version);
  assert_int_equal(a->is_gpu, b->is_gpu);
  assert_int_equal(a->is_cpu, b->is_cpu);
  assert_int_equal(a->has_fp64, b->has_fp64);
  assert_int_equal(a->compute_units, b->compute_units);
  assert_int_equal(a->global_mem_bytes, b->global_mem_bytes);
  assert_int_equal(a->max_alloc_bytes, b->max_alloc_bytes);
  assert_int_equal(a->local_mem_bytes, b->local_mem_bytes);
  assert_int_equal(a->max_work_group_size, b->max_work_group_size);
}

static void test_context_defaults(void **state) {
  (void)state;
  size_t count = 0;
  clmg_device_info *devices = list_devices(&count);
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(NULL, &ctx);
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_context_create(NULL): %s: %s", clmg_status_string(status),
             ctx ? clmg_context_message(ctx) : "(no context)");
  assert_non_null(ctx);
  assert_string_equal(clmg_context_message(ctx), "");
  const clmg_device_info *info = clmg_context_device(ctx);
  assert_non_null(info);
  const clmg_device_info *listed = find_listed(devices, count, info);
  assert_non_null(listed);
  assert_same_device(info, listed);
  unsigned built, cached;
  program_counts(ctx, &built, &cached);
  assert_int_equal(cached, 0);

  /* The CLMG_DEVICE the tests run under, if any, was honoured. */
  const char *env = getenv("CLMG_DEVICE");
  if (env && (contains_nocase(env, "pocl") || contains_nocase(env, "Portable")))
    assert_true(contains_nocase(info->platform_name, "Portable Computing Language") ||
                contains_nocase(info->platform_name, "pocl"));
  if (env && contains_nocase(env, "nvidia"))
    assert_true(contains_nocase(info->platform_name, "nvidia") ||
                contains_nocase(info->vendor, "nvidia") || contains_nocase(info->name, "nvidia"));

  /* The raw handles are the context's own and agree with the facts. */
  cl_device_id dev = clmg_context_cl_device(ctx);
  cl_context clc = clmg_context_cl_context(ctx);
  cl_command_queue q = clmg_context_cl_queue(ctx);
  assert_non_null(dev);
  assert_non_null(clc);
  assert_non_null(q);
  char name[256] = "";
  assert_int_equal(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL), CL_SUCCESS);
  assert_non_null(strstr(name, info->name[0] == ' ' ? info->name + 1 : info->name));
  cl_command_queue_properties props = 0;
  assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL),
                   CL_SUCCESS);
  assert_true(props & CL_QUEUE_PROFILING_ENABLE);
  assert_false(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  cl_context qctx = NULL;
  assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL),
                   CL_SUCCESS);
  assert_ptr_equal(qctx, clc);
  cl_device_id qdev = NULL;
  assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL), CL_SUCCESS);
  assert_ptr_equal(qdev, dev);

  CHECK_OK(ctx, clmg_finish(ctx));
  clmg_context_destroy(ctx);
  clmg_context_destroy(NULL);
  free(devices);
}

static void test_context_null_arguments(void **state) {
  (void)state;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_context_create(NULL, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_finish(NULL));
  double bw = 0.0;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_measure_copy_bandwidth(NULL, 0, &bw));
  clmg_context *ctx = open_device(NULL);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_measure_copy_bandwidth(ctx, 0, NULL));
  assert_true(strlen(clmg_context_message(ctx)) > 0);
  clmg_context_destroy(ctx);
}

/* Every listed device can be selected by "P:D", and by its full name. */
static void test_select_by_index_and_name(void **state) {
  (void)state;
  size_t count = 0;
  clmg_device_info *devices = list_devices(&count);
  for (size_t i = 0; i < count; i++) {
    char spec[32];
    snprintf(spec, sizeof spec, "%u:%u", devices[i].platform_index, devices[i].device_index);
    clmg_context *ctx = open_device(spec);
    assert_same_device(clmg_context_device(ctx), &devices[i]);
    clmg_context_destroy(ctx);

    ctx = open_device(devices[i].name);
    assert_string_equal(clmg_context_device(ctx)->name, devices[i].name);
    clmg_context_destroy(ctx);
  }
  /* Kinds and vendors, where the machine has them. */
  for (size_t i = 0; i < count; i++) {
    const char *kind = devices[i].is_cpu ? "cpu" : devices[i].is_gpu ? "gpu" : NULL;
    if (kind) {
      clmg_context *ctx = open_device(kind);
      const clmg_device_info *info = clmg_context_device(ctx);
      assert_true(devices[i].is_cpu ? info->is_cpu : info->is_gpu);
      clmg_context_destroy(ctx);
    }
    if (contains_nocase(devices[i].platform_name, "Portable Computing Language")) {
      clmg_context *ctx = open_device("pocl");
      assert_non_null(strstr(clmg_context_device(ctx)->platform_name, "Portable Computing"));
      clmg_context_destroy(ctx);
    }
    if (contains_nocase(devices[i].platform_name, "nvidia")) {
      clmg_context *ctx = open_device("nvidia");
      assert_true(contains_nocase(clmg_context_device(ctx)->platform_name, "nvidia"));
      clmg_context_destroy(ctx);
    }
  }
  /* Case-insensitive substring of the device name. */
  char upper[128];
  snprintf(upper, sizeof upper, "%s", devices[0].name);
  for (char *c = upper; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  clmg_context *ctx = open_device(upper);
  assert_string_equal(clmg_context_device(ctx)->name, devices[0].name);
  clmg_context_destroy(ctx);
  free(devices);
}

/* Checks that a failed selection of `spec` reports DEVICE_NOT_FOUND with a
 * message that lists every device. */
static void expect_not_found(const char *spec, const clmg_device_info *devices, size_t count,
                             int via_env) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = via_env ? NULL : spec;
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(&options, &ctx);
  if (status != CLMG_ERROR_DEVICE_NOT_FOUND)
    fail_msg("device \"%s\"%s: got %s, expected CLMG_ERROR_DEVICE_NOT_FOUND", spec,
             via_env ? " (from CLMG_DEVICE)" : "", clmg_status_string(status));
  if (!ctx)
    fail_msg("device \"%s\": failed without a context carrying the message", spec);
  const char *message = clmg_context_message(ctx);
  assert_non_null(message);
  if (!strstr(message, spec))
    fail_msg("device \"%s\": the message does not name the request: \"%s\"", spec, message);
  for (size_t i = 0; i < count; i++)
    if (!strstr(message, devices[i].name))
      fail_msg("device \"%s\": the message does not list device \"%s\": \"%s\"", spec,
               devices[i].name, message);
  clmg_context_destroy(ctx);
}

static void test_device_not_found(void **state) {
  (void)state;
  size_t count = 0;
  clmg_device_info *devices = list_devices(&count);
  expect_not_found("no-such-device-xyz", devices, count, 0);
  /* "P:D" out of range, and malformed indices. */
  const char *bad[] = {"9:9", "0:99", "99:0", "0:", ":0", "1:2:3", "-1:0", "0:-1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    expect_not_found(bad[i], devices, count, 0);
  free(devices);
}

/* The environment variables the library reads, as the test started; tests
 * that change them restore them in their teardown. */
static const char *const env_names[] = {"CLMG_DEVICE", "CLMG_CACHE_DIR", "XDG_CACHE_HOME",
                                        "CLMG_KERNEL_DIR"};
enum { NENV = sizeof env_names / sizeof env_names[0] };
static char *saved_env[NENV];

static void save_environment(void) {
  for (int i = 0; i < NENV; i++)
    saved_env[i] = getenv(env_names[i]) ? strdup(getenv(env_names[i])) : NULL;
}

static int restore_environment(void **state) {
  (void)state;
  for (int i = 0; i < NENV; i++) {
    if (saved_env[i])
      setenv(env_names[i], saved_env[i], 1);
    else
      unsetenv(env_names[i]);
  }
  return 0;
}

static void test_device_env(void **state) {
  (void)state;
  size_t count = 0;
  clmg_device_info *devices = list_devices(&count);

  /* "cpu" from the environment picks a CPU device. */
  int have_cpu = 0;
  for (size_t i = 0; i < count; i++)
    have_cpu |= devices[i].is_cpu;
  if (have_cpu) {
    assert_int_equal(setenv("CLMG_DEVICE", "cpu", 1), 0);
    clmg_context *ctx = open_device(NULL);
    assert_true(clmg_context_device(ctx)->is_cpu);
    clmg_context_destroy(ctx);
  }
  /* The last device by "P:D". */
  const clmg_device_info *last = &devices[count - 1];
  char spec[32];
  snprintf(spec, sizeof spec, "%u:%u", last->platform_index, last->device_index);
  assert_int_equal(setenv("CLMG_DEVICE", spec, 1), 0);
  clmg_context *ctx = open_device(NULL);
  assert_same_device(clmg_context_device(ctx), last);
  clmg_context_destroy(ctx);

  /* A bad value fails, so the variable is really read... */
  assert_int_equal(setenv("CLMG_DEVICE", "no-such-device-xyz", 1), 0);
  expect_not_found("no-such-device-xyz", devices, count, 1);
  /* ...and an explicit device string wins over it. */
  snprintf(spec, sizeof spec, "%u:%u", devices[0].platform_index, devices[0].device_index);
  ctx = open_device(spec);
  assert_same_device(clmg_context_device(ctx), &devices[0]);
  clmg_context_destroy(ctx);
  free(devices);
}

/* ---- program-binary cache ---- */

static void test_binary_cache(void **state) {
  (void)state;
  char *dir = make_tmpdir("cache");
  unsigned built, cached;

  cached_run(dir, &built, &cached);
  assert_true(built > 0);
  assert_int_equal(cached, 0);
  unsigned long long bytes = 0;
  unsigned files = count_files(dir, &bytes);
  if (files == 0 || bytes == 0)
    fail_msg("the cache dir %s holds no binaries after a build (%u files)", dir, files);

  /* Same ops again: everything from the cache. */
  cached_run(dir, &built, &cached);
  if (!(cached > 0 && built == 0))
    fail_msg("second context: built_from_source %u, loaded_from_cache %u", built, cached);

  /* Damaged cache files are detected and the sources rebuilt. */
  const enum corruption modes[] = {CORRUPT_TRUNCATE_HALF, CORRUPT_GARBAGE, CORRUPT_FLIP_MIDDLE,
                                   CORRUPT_EMPTY};
  const char *names[] = {"truncated to half", "overwritten with garbage",
                         "bytes flipped in the second half", "truncated to zero"};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    print_message("cache files %s\n", names[m]);
    assert_true(corrupt_cache(dir, modes[m]) > 0);
    cached_run(dir, &built, &cached);
    if (built == 0)
      fail_msg("cache files %s: built_from_source 0, loaded_from_cache %u", names[m], cached);
  }
  /* The rebuilt binaries replaced the damaged files. */
  cached_run(dir, &built, &cached);
  if (!(cached > 0 && built == 0))
    fail_msg("after a rebuild: built_from_source %u, loaded_from_cache %u", built, cached);
  remove_tree(dir);
}

static void test_binary_cache_disabled(void **state) {
  (void)state;
  char *dir = make_tmpdir("nocache");
  for (int round = 0; round < 2; round++) {
    clmg_context_options options;
    clmg_context_options_defaults(&options);
    options.cache_dir = dir;
    options.disable_binary_cache = 1;
    options.blas1_backend = CLMG_BLAS1_NATIVE;
    clmg_context *ctx = NULL;
    CHECK_STATUS(CLMG_SUCCESS, clmg_context_create(&options, &ctx));
    blas1_workload(ctx);
    unsigned built, cached;
    program_counts(ctx, &built, &cached);
    assert_true(built > 0);
    assert_int_equal(cached, 0);
    clmg_context_destroy(ctx);
    assert_int_equal(count_files(dir, NULL), 0);
  }
  remove_tree(dir);
}

/* ---- program callback: compile events on a cache miss only ---- */

typedef struct compile_log {
  unsigned starts, dones, failures;
  int open; /* a START without its DONE */
  int wrong_dir;
  const char *expected_dir;
  char last_program[64];
  char reason[400]; /* the last event's cache_off_reason */
} compile_log;

static void log_compile(const clmg_program_event *event, void *data) {
  compile_log *log = data;
  if ((log->expected_dir == NULL) != (event->cache_dir == NULL) ||
      (log->expected_dir && strcmp(log->expected_dir, event->cache_dir) != 0))
    log->wrong_dir = 1;
  if (event->kind == CLMG_PROGRAM_COMPILE_START) {
    assert_false(log->open);
    assert_true(event->seconds == 0.0);
    log->open = 1;
    log->starts++;
    snprintf(log->last_program, sizeof log->last_program, "%s", event->program);
  } else {
    assert_int_equal(event->kind, CLMG_PROGRAM_COMPILE_DONE);
    assert_true(log->open);
    assert_string_equal(event->program, log->last_program);
    assert_true(event->seconds >= 0.0);
    log->open = 0;
    log->dones++;
    log->failures += event->status != CLMG_SUCCESS;
  }
  assert_non_null(event->options);
  assert_non_null(event->device);
}

/* Runs the workload on a fresh context with the callback and returns the log. */
static compile_log logged_run(const char *cache_dir, int disable_cache) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.cache_dir = cache_dir;
  options.disable_binary_cache = disable_cache;
  options.blas1_backend = CLMG_BLAS1_NATIVE;
  clmg_context *ctx = NULL;
  CHECK_STATUS(CLMG_SUCCESS, clmg_context_create(&options, &ctx));
  compile_log log;
  memset(&log, 0, sizeof log);
  log.expected_dir = clmg_context_cache_dir(ctx);
  if (disable_cache)
    assert_null(log.expected_dir);
  else
    assert_string_equal(log.expected_dir, cache_dir);
  CHECK_STATUS(CLMG_SUCCESS, clmg_context_set_program_callback(ctx, log_compile, &log));
  blas1_workload(ctx);
  unsigned built, cached;
  program_counts(ctx, &built, &cached);
  assert_int_equal(log.starts, built); /* one event pair per compiled program */
  assert_int_equal(log.dones, built);
  assert_false(log.open);
  assert_false(log.wrong_dir);
  assert_int_equal(log.failures, 0);
  /* a removed callback hears nothing */
  CHECK_STATUS(CLMG_SUCCESS, clmg_context_set_program_callback(ctx, NULL, &log));
  clmg_context_destroy(ctx);
  log.expected_dir = NULL;
  return log;
}

static void test_program_callback(void **state) {
  (void)state;
  char *dir = make_tmpdir("callback");
  compile_log miss = logged_run(dir, 0);
  if (miss.starts == 0)
    fail_msg("an empty cache dir: no compile event");
  compile_log hit = logged_run(dir, 0);
  if (hit.starts != 0 || hit.dones != 0)
    fail_msg("a warm cache: %u compile events (%s)", hit.starts, hit.last_program);
  compile_log off = logged_run(dir, 1); /* cache off: events with cache_dir NULL */
  assert_true(off.starts > 0);
  assert_int_equal(clmg_context_set_program_callback(NULL, log_compile, NULL),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(clmg_context_cache_dir(NULL));
  remove_tree(dir);
}

/* A failed compilation still reports DONE, with its status. */
static void count_failed_builds(const clmg_program_event *event, void *data) {
  if (event->kind == CLMG_PROGRAM_COMPILE_DONE && event->status == CLMG_ERROR_BUILD_FAILED)
    ++*(unsigned *)data;
}

/* The last compile event's cache_off_reason. */
static void note_reason(const clmg_program_event *event, void *data) {
  compile_log *log = data;
  snprintf(log->reason, sizeof log->reason, "%s",
           event->cache_off_reason ? event->cache_off_reason : "(none)");
}

/* A cache directory that does not exist yet is created; one that cannot be
 * created costs the cache, never the results. */
static void test_binary_cache_dirs(void **state) {
  (void)state;
  char *dir = make_tmpdir("newcache");
  char nested[4096];
  snprintf(nested, sizeof nested, "%s/a/b/c", dir);
  unsigned built, cached;
  cached_run(nested, &built, &cached);
  assert_true(built > 0);
  cached_run(nested, &built, &cached);
  if (!(cached > 0 && built == 0))
    fail_msg("nested new cache dir: built_from_source %u, loaded_from_cache %u", built, cached);

  /* A regular file where the directory should be. */
  char blocked[4096];
  snprintf(blocked, sizeof blocked, "%s/file", dir);
  write_file(dir, "file", "x", 1);
  snprintf(blocked + strlen(blocked), sizeof blocked - strlen(blocked), "/sub");
  cached_run(blocked, &built, &cached);
  assert_true(built > 0);
  assert_int_equal(cached, 0);
  /* a cache that cannot be used is off, and the compile events say why (it
   * once said "cached in /dev/null" and compiled every run) */
  const char *unusable[] = {blocked, "/dev/null"};
  const char *why[] = {"cannot be made", "is not a directory"};
  for (int k = 0; k < 2; ++k) {
    compile_log log = {0};
    clmg_context_options options;
    clmg_context_options_defaults(&options);
    options.cache_dir = unusable[k];
    clmg_context *ctx = NULL;
    CHECK_CONTEXT_OK(ctx, clmg_context_create(&options, &ctx));
    assert_null(clmg_context_cache_dir(ctx));
    clmg_context_set_program_callback(ctx, note_reason, &log);
    blas1_workload(ctx);
    if (!strstr(log.reason, unusable[k]) || !strstr(log.reason, why[k]))
      fail_msg("cache dir %s: the compile events say '%s'", unusable[k], log.reason);
    clmg_context_destroy(ctx);
  }
  remove_tree(dir);
}

/* With options.cache_dir NULL the cache is $CLMG_CACHE_DIR, else
 * $XDG_CACHE_HOME/clmg. */
static void test_cache_dir_environment(void **state) {
  (void)state;
  unsigned built, cached;
  char *dir = make_tmpdir("envcache");
  assert_int_equal(setenv("CLMG_CACHE_DIR", dir, 1), 0);
  cached_run(NULL, &built, &cached);
  assert_true(built > 0);
  if (count_files(dir, NULL) == 0)
    fail_msg("nothing cached in $CLMG_CACHE_DIR = %s", dir);
  cached_run(NULL, &built, &cached);
  if (!(cached > 0 && built == 0))
    fail_msg("$CLMG_CACHE_DIR: built_from_source %u, loaded_from_cache %u", built, cached);

  char *xdg = make_tmpdir("xdg");
  assert_int_equal(unsetenv("CLMG_CACHE_DIR"), 0);
  assert_int_equal(setenv("XDG_CACHE_HOME", xdg, 1), 0);
  cached_run(NULL, &built, &cached);
  assert_true(built > 0);
  char sub[4096];
  snprintf(sub, sizeof sub, "%s/clmg", xdg);
  if (count_files(sub, NULL) == 0)
    fail_msg("nothing cached in $XDG_CACHE_HOME/clmg = %s", sub);
  cached_run(NULL, &built, &cached);
  if (!(cached > 0 && built == 0))
    fail_msg("$XDG_CACHE_HOME: built_from_source %u, loaded_from_cache %u", built, cached);
  remove_tree(dir);
  remove_tree(xdg);
}

/* ---- kernel directories and build failures ---- */

static clmg_context *open_with_kernel_dir(const char *kernel_dir) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.kernel_dir = kernel_dir;
  options.disable_binary_cache = 1;
  options.blas1_backend = CLMG_BLAS1_NATIVE;
  clmg_context *ctx = NULL;
  clmg_status status = clmg_context_create(&options, &ctx);
  if (status != CLMG_SUCCESS)
    fail_msg("context with kernel_dir %s: %s: %s", kernel_dir ? kernel_dir : "(NULL)",
             clmg_status_string(status), ctx ? clmg_context_message(ctx) : "(no context)");
  return ctx;
}

static void test_kernel_dir(void **state) {
  (void)state;
  char *dir = make_tmpdir("kernels");
  if (!copy_kernel_file(dir, "blas1.cl"))
    fail_msg("%s/cl/blas1.cl is missing", CLMG_SOURCE_DIR);
  copy_kernel_file(dir, "prelude.cl");
  clmg_context *ctx = open_with_kernel_dir(dir);
  blas1_workload(ctx);
  unsigned built, cached;
  program_counts(ctx, &built, &cached);
  assert_true(built > 0);
  assert_int_equal(cached, 0);
  clmg_context_destroy(ctx);
  remove_tree(dir);
}

/* A kernel dir overrides the embedded sources family by family: families it
 * does not hold come from the library. */
/* A kernel directory that is not one fails the context with the reason
 * (it was ignored: the embedded kernels ran instead). */
static void test_kernel_dir_missing(void **state) {
  (void)state;
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.kernel_dir = "/nonexistent/clmg-kernels";
  clmg_context *ctx = NULL;
  assert_int_equal(clmg_context_create(&options, &ctx), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(clmg_context_message(ctx), "/nonexistent/clmg-kernels");
  CHECK_CONTAINS(clmg_context_message(ctx), "is not a directory");
  clmg_context_destroy(ctx);
}

static void test_kernel_dir_partial(void **state) {
  (void)state;
  char *dir = make_tmpdir("nokernels");
  clmg_context *ctx = open_with_kernel_dir(dir);
  blas1_workload(ctx);
  unsigned built, cached;
  program_counts(ctx, &built, &cached);
  assert_true(built > 0);
  clmg_context_destroy(ctx);
  remove_tree(dir);
}

/* A kernel dir whose blas1.cl does not compile. */
static char *make_broken_kernel_dir(void) {
  char *dir = make_tmpdir("broken");
  copy_kernel_file(dir, "prelude.cl");
  static const char broken[] = "/* a deliberately broken kernel family */\n"
                               "__kernel void dot(__global const float *x, __global float *y)\n"
                               "{\n"
                               "  y[0] = x[0] * this_is_not_opencl;\n"
                               "}\n";
  write_file(dir, "blas1.cl", broken, sizeof broken - 1);
  return dir;
}

/* A build failure of blas1 reports the build log, every time, and leaves the
 * context usable for everything that needs no kernel of that family. */
static void expect_build_failure(clmg_context *ctx) {

  double host[16];
  for (int i = 0; i < 16; i++)
    host[i] = rng_uniform();
  clmg_vector *x = NULL, *y = NULL;
  CHECK_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, 16, &x));
  CHECK_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, 16, &y));
  CHECK_OK(ctx, clmg_vector_upload(x, host));
  for (int attempt = 0; attempt < 2; attempt++) {
    double result = 12345.0;
    CHECK_STATUS(CLMG_ERROR_BUILD_FAILED, clmg_dot(x, y, &result));
    const char *message = clmg_context_message(ctx);
    if (!strstr(message, "this_is_not_opencl"))
      fail_msg("attempt %d: the message has no build log: \"%s\"", attempt, message);
  }
  /* The context still moves data. */
  double back[16];
  CHECK_OK(ctx, clmg_vector_download(x, back));
  assert_memory_equal(back, host, sizeof host);
  unsigned built, cached;
  program_counts(ctx, &built, &cached);
  assert_int_equal(cached, 0);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
}

static void test_build_failure(void **state) {
  (void)state;
  char *dir = make_broken_kernel_dir();
  clmg_context *ctx = open_with_kernel_dir(dir);
  unsigned failed_builds = 0;
  CHECK_OK(ctx, clmg_context_set_program_callback(ctx, count_failed_builds, &failed_builds));
  expect_build_failure(ctx);
  assert_int_equal(failed_builds, 2); /* each attempt compiles again and fails */
  clmg_context_destroy(ctx);
  remove_tree(dir);
}

/* With options.kernel_dir NULL, $CLMG_KERNEL_DIR is the kernel dir. */
static void test_kernel_dir_environment(void **state) {
  (void)state;
  char *dir = make_broken_kernel_dir();
  assert_int_equal(setenv("CLMG_KERNEL_DIR", dir, 1), 0);
  clmg_context *ctx = open_with_kernel_dir(NULL);
  expect_build_failure(ctx);
  clmg_context_destroy(ctx);
  remove_tree(dir);
}

static void test_copy_bandwidth(void **state) {
  (void)state;
  clmg_context *ctx = open_device(NULL);
  double bw = -1.0;
  uint64_t bytes = clmg_context_device_bytes(ctx);
  CHECK_OK(ctx, clmg_measure_copy_bandwidth(ctx, (size_t)1 << 22, &bw));
  if (!(bw > 0.0 && bw < 1e5 && isfinite(bw)))
    fail_msg("copy bandwidth %g GB/s", bw);
  /* Its buffers are gone afterwards. */
  assert_int_equal(clmg_context_device_bytes(ctx), bytes);
  /* The default size is a real size that fits the device twice. */
  size_t chosen = clmg_copy_bandwidth_default_bytes(ctx);
  const clmg_device_info *info = clmg_context_device(ctx);
  assert_true(chosen >= ((size_t)1 << 20));
  assert_true(chosen <= info->max_alloc_bytes / 2 || chosen == ((size_t)1 << 20));
  assert_int_equal(clmg_copy_bandwidth_default_bytes(NULL), 0);
  clmg_context_destroy(ctx);
}

/* The kernel profile counts every launch by name, across more launches than
 * it resolves at once (4096), and sorts by time; stop without start fails;
 * a context destroyed while profiling frees the profile. */
static void test_kernel_profile(void **state) {
  (void)state;
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.blas1_backend = CLMG_BLAS1_NATIVE; /* clmg's own kernels, with known names */
  clmg_context *ctx = NULL;
  assert_int_equal(clmg_context_create(&options, &ctx), CLMG_SUCCESS);
  clmg_vector *x = NULL;
  CHECK_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, 1000, &x));
  CHECK_OK(ctx, clmg_vector_fill(x, 1.0));
  clmg_kernel_time *times = NULL;
  size_t count = 7;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_profile_stop(ctx, &times, &count));
  CHECK_CONTAINS(clmg_context_message(ctx), "no profile");
  CHECK_OK(ctx, clmg_profile_start(ctx));
  enum { SCALINGS = 5000 };
  for (int k = 0; k < SCALINGS; ++k)
    CHECK_OK(ctx, clmg_scal(1.0, x));
  double dot = 0;
  CHECK_OK(ctx, clmg_dot(x, x, &dot));
  CHECK_OK(ctx, clmg_dot(x, x, &dot));
  assert_true(dot == 1000.0);
  CHECK_OK(ctx, clmg_profile_stop(ctx, &times, &count));
  assert_non_null(times);
  uint64_t scale_launches = 0, dot_launches = 0, all = 0;
  double total = 0;
  for (size_t k = 0; k < count; ++k) {
    assert_true(times[k].seconds >= 0 && isfinite(times[k].seconds));
    if (k > 0)
      assert_true(times[k - 1].seconds >= times[k].seconds);
    if (strcmp(times[k].name, "scale_vector") == 0)
      scale_launches = times[k].launches;
    if (strcmp(times[k].name, "dot_partials") == 0)
      dot_launches = times[k].launches;
    all += times[k].launches;
    total += times[k].seconds;
  }
  assert_int_equal(scale_launches, SCALINGS);
  assert_int_equal(dot_launches, 2);
  assert_int_equal(all, SCALINGS + 2);
  assert_true(total > 0);
  free(times);
  /* stopped: a second stop fails; a profile left running is freed with the context */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_profile_stop(ctx, &times, &count));
  CHECK_OK(ctx, clmg_profile_start(ctx));
  CHECK_OK(ctx, clmg_scal(2.0, x));
  clmg_vector_destroy(x);
  clmg_context_destroy(ctx);
}

int main(void) {
  rng_seed(0x9e3779b97f4a7c15u);
  test_apply_filters();
  save_environment();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_strings),
      cmocka_unit_test(test_pseudo_random_split),
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_options_defaults),
      cmocka_unit_test(test_list_devices),
      cmocka_unit_test(test_context_defaults),
      cmocka_unit_test(test_context_null_arguments),
      cmocka_unit_test(test_select_by_index_and_name),
      cmocka_unit_test(test_device_not_found),
      cmocka_unit_test_teardown(test_device_env, restore_environment),
      cmocka_unit_test(test_binary_cache),
      cmocka_unit_test(test_binary_cache_disabled),
      cmocka_unit_test(test_program_callback),
      cmocka_unit_test(test_binary_cache_dirs),
      cmocka_unit_test_teardown(test_cache_dir_environment, restore_environment),
      cmocka_unit_test(test_kernel_dir),
      cmocka_unit_test(test_kernel_dir_missing),
      cmocka_unit_test(test_kernel_dir_partial),
      cmocka_unit_test(test_build_failure),
      cmocka_unit_test_teardown(test_kernel_dir_environment, restore_environment),
      cmocka_unit_test(test_copy_bandwidth),
      cmocka_unit_test(test_kernel_profile),
  };
  int failures = cmocka_run_group_tests_name("core", tests, NULL, NULL);
  for (int i = 0; i < NENV; i++)
    free(saved_env[i]);
  return failures;
}
