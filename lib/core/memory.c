/* Memory checks before allocation: the device's largest allocation and its
 * memory, the context's memory limit, and the host memory a device draws on
 * when its memory is the host's (pocl and other CPU devices). A CPU driver
 * that cannot get the memory it promised does not always return an error:
 * pocl 3.1 asserts (SIGABRT) when the host allocation behind a buffer fails,
 * and an overcommitted host kills the process instead. So clmg checks first
 * and fails with a message that gives both numbers. At the end: the
 * buffer commands that Oclgrind's uninitialised-value check needs done its
 * way. */
#define _POSIX_C_SOURCE 200809L

#include "core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Host needs below this are not checked by every allocation: reading
 * /proc costs tens of microseconds, and small buffers cannot exhaust a host
 * the bigger checks have passed. */
#define HOST_CHECK_MIN_BYTES ((uint64_t)16 << 20)

/* ---- sizes as text ---- */

/* "1,073,741,824": digits in groups of three. */
static void group_digits(uint64_t value, char *text, size_t size) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
  char grouped[48];
  int at = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0)
      grouped[at++] = ',';
    grouped[at++] = digits[i];
  }
  grouped[at] = '\0';
  snprintf(text, size, "%s", grouped);
}

/* The readable part with `decimals` digits after the point: "8.000 GiB";
 * "" below 1 KiB, where the exact count says it all. */
static void readable(uint64_t bytes, int decimals, char *text, size_t size) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    text[0] = '\0';
    return;
  }
  double value = (double)bytes / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
    value /= 1024.0;
    ++unit;
  }
  snprintf(text, size, "%.*f %s", decimals, value, units[unit]);
}

static void compose(uint64_t bytes, const char *human, char *text, size_t size) {
  char exact[48];
  group_digits(bytes, exact, sizeof exact);
  if (human[0])
    snprintf(text, size, "%s bytes (%s)", exact, human);
  else
    snprintf(text, size, "%s byte%s", exact, bytes == 1 ? "" : "s");
}

void clmg_format_bytes(uint64_t bytes, char *text, size_t size) {
  char human[48];
  readable(bytes, 3, human, sizeof human);
  compose(bytes, human, text, size);
}

void clmg_format_byte_pair(uint64_t a, uint64_t b, char *text_a, char *text_b, size_t size) {
  char human_a[48], human_b[48];
  /* More digits until the readable forms differ too (at most what a double
   * holds; the exact counts differ anyway). */
  for (int decimals = 3; decimals <= 15; ++decimals) {
    readable(a, decimals, human_a, sizeof human_a);
    readable(b, decimals, human_b, sizeof human_b);
    if (a == b || strcmp(human_a, human_b) != 0)
      break;
  }
  compose(a, human_a, text_a, size);
  compose(b, human_b, text_b, size);
}

/* ---- parsing ---- */

clmg_status clmg_parse_memory_size(const char *text, uint64_t *bytes) {
  if (!text || !bytes || !isdigit((unsigned char)text[0]))
    return CLMG_ERROR_INVALID_ARGUMENT;
  char *end = NULL;
  errno = 0;
  unsigned long long whole = strtoull(text, &end, 10);
  if (errno == ERANGE)
    return CLMG_ERROR_INVALID_ARGUMENT;
  double fraction = 0.0;
  if (*end == '.') {
    const char *digits = end + 1;
    if (!isdigit((unsigned char)*digits))
      return CLMG_ERROR_INVALID_ARGUMENT;
    double scale = 0.1;
    for (; isdigit((unsigned char)*digits); ++digits, scale /= 10)
      fraction += (*digits - '0') * scale;
    end = (char *)digits;
  }
  int shift = 0;
  switch (tolower((unsigned char)*end)) {
  case 'k':
    shift = 10;
    break;
  case 'm':
    shift = 20;
    break;
  case 'g':
    shift = 30;
    break;
  case 't':
    shift = 40;
    break;
  default:
    break;
  }
  if (shift) {
    ++end;
    if (*end == 'i' || *end == 'I')
      ++end;
  }
  if (*end == 'b' || *end == 'B')
    ++end;
  if (*end != '\0' || (fraction > 0 && shift == 0))
    return CLMG_ERROR_INVALID_ARGUMENT; /* trailing text, or a fraction of a byte */
  if (shift && whole > (UINT64_MAX >> shift))
    return CLMG_ERROR_INVALID_ARGUMENT;
  uint64_t value = (uint64_t)whole << shift;
  uint64_t part = (uint64_t)(fraction * (double)((uint64_t)1 << shift));
  if (value > UINT64_MAX - part)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *bytes = value + part;
  return CLMG_SUCCESS;
}

/* ---- options at context creation ---- */

/* "1", "yes", "true", "on": 1; "0", "", "no", "false", "off": 0; else -1. */
static int parse_switch(const char *text) {
  static const char *const on[] = {"1", "yes", "true", "on"};
  static const char *const off[] = {"0", "", "no", "false", "off"};
  for (size_t i = 0; i < sizeof on / sizeof on[0]; ++i)
    if (strcmp(text, on[i]) == 0)
      return 1;
  for (size_t i = 0; i < sizeof off / sizeof off[0]; ++i)
    if (strcmp(text, off[i]) == 0)
      return 0;
  return -1;
}

clmg_status clmg_memory_options(clmg_context *context, const clmg_context_options *options) {
  context->memory_limit = options->memory_limit_bytes;
  snprintf(context->memory_limit_origin, sizeof context->memory_limit_origin,
           "the option memory_limit_bytes (clmg --memory-limit)");
  const char *limit = getenv("CLMG_MEMORY_LIMIT");
  if (context->memory_limit == 0 && limit && *limit) {
    uint64_t bytes = 0;
    if (clmg_parse_memory_size(limit, &bytes) != CLMG_SUCCESS)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "CLMG_MEMORY_LIMIT=\"%s\" is not a size: give bytes (1000000) or a number "
                       "with K, M, G or T, powers of 1024 (512M, 1.5G); 0 or empty for no limit",
                       limit);
    context->memory_limit = bytes;
    snprintf(context->memory_limit_origin, sizeof context->memory_limit_origin,
             "CLMG_MEMORY_LIMIT=%.40s", limit);
  }

  if (options->disable_fp64) {
    context->fp64_disabled_by = "the context option disable_fp64";
  } else {
    const char *fp64 = getenv("CLMG_DISABLE_FP64");
    int disable = fp64 ? parse_switch(fp64) : 0;
    if (disable < 0)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "CLMG_DISABLE_FP64=\"%s\": use 1 to simulate a device without double "
                       "precision, 0 or empty for the device as it is",
                       fp64);
    if (disable)
      context->fp64_disabled_by = "CLMG_DISABLE_FP64";
  }
  if (context->fp64_disabled_by)
    context->info.has_fp64 = 0;
  return CLMG_SUCCESS;
}

clmg_status clmg_fail_no_fp64(clmg_context *context, const char *what) {
  if (!context)
    return CLMG_ERROR_UNSUPPORTED;
  char reason[96] = "";
  if (context->fp64_disabled_by)
    snprintf(reason, sizeof reason, "; turned off by %s", context->fp64_disabled_by);
  return clmg_fail(context, CLMG_ERROR_UNSUPPORTED,
                   "%s%sdevice %s has no double precision (cl_khr_fp64%s); use float",
                   what ? what : "", what ? ": " : "", context->info.name, reason);
}

clmg_status clmg_context_check_precision(clmg_context *context, clmg_dtype type) {
  if (!context || !context->queue)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (type == CLMG_FLOAT)
    return CLMG_SUCCESS;
  if (type != CLMG_DOUBLE)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_context_check_precision: %s is not a floating-point type",
                     clmg_dtype_name(type));
  return context->info.has_fp64 ? CLMG_SUCCESS : clmg_fail_no_fp64(context, NULL);
}

/* ---- the host's memory ---- */

typedef struct host_memory {
  uint64_t available; /* UINT64_MAX: no bound known */
  char source[192];   /* what bounds it, for the message */
} host_memory;

static void bound(host_memory *m, uint64_t available, const char *source) {
  if (available < m->available) {
    m->available = available;
    snprintf(m->source, sizeof m->source, "%s", source);
  }
}

#ifdef __linux__
/* The number after `key` in a "Key: value [kB]" file, times unit, into
 * *value; 0 when the file or the key is absent. */
static int read_key(const char *path, const char *key, uint64_t unit, uint64_t *value) {
  FILE *file = fopen(path, "r");
  if (!file)
    return 0;
  char line[256];
  size_t length = strlen(key);
  int found = 0;
  while (!found && fgets(line, sizeof line, file)) {
    if (strncmp(line, key, length) == 0 && (line[length] == ':' || line[length] == ' ')) {
      unsigned long long number = 0;
      if (sscanf(line + length + 1, "%llu", &number) == 1) {
        *value = (uint64_t)number * unit;
        found = 1;
      }
    }
  }
  fclose(file);
  return found;
}

/* A file holding one number; 0 for "max" and unreadable files. */
static int read_number(const char *path, uint64_t *value) {
  FILE *file = fopen(path, "r");
  if (!file)
    return 0;
  unsigned long long number = 0;
  int ok = fscanf(file, "%llu", &number) == 1;
  fclose(file);
  if (ok)
    *value = (uint64_t)number;
  return ok;
}

/* A memory cgroup's limit less what it holds that cannot be reclaimed
 * (its usage less the inactive page cache, as `docker stats` counts). */
static void cgroup_bound(host_memory *m, const char *limit_path, const char *usage_path,
                         const char *stat_path, const char *inactive_key) {
  uint64_t limit = 0, usage = 0, inactive = 0;
  if (!read_number(limit_path, &limit) || limit >= ((uint64_t)1 << 60) ||
      !read_number(usage_path, &usage))
    return;
  read_key(stat_path, inactive_key, 1, &inactive);
  uint64_t held = usage > inactive ? usage - inactive : 0;
  char limit_text[64], held_text[64], source[192];
  clmg_format_bytes(limit, limit_text, sizeof limit_text);
  clmg_format_bytes(held, held_text, sizeof held_text);
  snprintf(source, sizeof source, "the memory cgroup's limit of %s less the %s it holds",
           limit_text, held_text);
  bound(m, limit > held ? limit - held : 0, source);
}

/* The address space or data segment left under a resource limit. */
static void rlimit_bound(host_memory *m, int resource, const char *name, const char *status_key) {
  struct rlimit limit;
  uint64_t used = 0;
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      !read_key("/proc/self/status", status_key, 1024, &used))
    return;
  uint64_t cap = (uint64_t)limit.rlim_cur;
  char limit_text[64], used_text[64], source[192];
  clmg_format_bytes(cap, limit_text, sizeof limit_text);
  clmg_format_bytes(used, used_text, sizeof used_text);
  snprintf(source, sizeof source, "%s of %s less the %s this process uses (%s)", name, limit_text,
           used_text, status_key);
  bound(m, cap > used ? cap - used : 0, source);
}
#endif

static void host_memory_available(host_memory *m) {
  m->available = UINT64_MAX;
  m->source[0] = '\0';
#ifdef __linux__
  uint64_t value = 0;
  if (read_key("/proc/meminfo", "MemAvailable", 1024, &value))
    bound(m, value, "MemAvailable in /proc/meminfo");
  /* cgroup v2 as a container sees it, then v1 */
  cgroup_bound(m, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current",
               "/sys/fs/cgroup/memory.stat", "inactive_file");
  cgroup_bound(m, "/sys/fs/cgroup/memory/memory.limit_in_bytes",
               "/sys/fs/cgroup/memory/memory.usage_in_bytes", "/sys/fs/cgroup/memory/memory.stat",
               "total_inactive_file");
  rlimit_bound(m, RLIMIT_AS, "RLIMIT_AS (ulimit -v)", "VmSize");
  rlimit_bound(m, RLIMIT_DATA, "RLIMIT_DATA (ulimit -d)", "VmData");
#endif
}

/* ---- the checks ---- */

clmg_status clmg_memory_check(clmg_context *context, uint64_t bytes, uint64_t largest,
                              uint64_t host_bytes, int host_check, const char *what) {
  const clmg_device_info *info = &context->info;
  char need[96], have[96], other[96], held[96];
  if (largest > info->max_alloc_bytes) {
    clmg_format_byte_pair(largest, info->max_alloc_bytes, need, have, sizeof need);
    clmg_format_bytes(info->global_mem_bytes, other, sizeof other);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                     "%s needs %s in one allocation, more than the largest single allocation of "
                     "%s: %s (of %s of device memory)",
                     what, need, info->name, have, other);
  }
  uint64_t held_bytes = context->device_bytes;
  clmg_format_bytes(held_bytes, held, sizeof held);
  if (context->memory_limit) {
    uint64_t left = context->memory_limit > held_bytes ? context->memory_limit - held_bytes : 0;
    if (bytes > left && held_bytes == 0) {
      clmg_format_byte_pair(bytes, left, need, have, sizeof need);
      return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                       "%s needs %s of device memory, more than the memory limit of %s (set by "
                       "%s)",
                       what, need, have, context->memory_limit_origin);
    }
    if (bytes > left) {
      clmg_format_byte_pair(bytes, left, need, have, sizeof need);
      clmg_format_bytes(context->memory_limit, other, sizeof other);
      return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                       "%s needs %s of device memory, more than the memory limit leaves: %s (the "
                       "limit of %s, set by %s, less the %s this context already holds)",
                       what, need, have, other, context->memory_limit_origin, held);
    }
  }
  uint64_t left = info->global_mem_bytes > held_bytes ? info->global_mem_bytes - held_bytes : 0;
  if (bytes > left && held_bytes == 0) {
    clmg_format_byte_pair(bytes, left, need, have, sizeof need);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                     "%s needs %s of device memory, more than %s has: %s", what, need, info->name,
                     have);
  }
  if (bytes > left) {
    clmg_format_byte_pair(bytes, left, need, have, sizeof need);
    clmg_format_bytes(info->global_mem_bytes, other, sizeof other);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                     "%s needs %s of device memory, more than %s has left: %s (its %s less the "
                     "%s this context already holds)",
                     what, need, info->name, have, other, held);
  }
  uint64_t device_part = context->params.shares_host_memory ? bytes : 0;
  uint64_t host_need = host_bytes + device_part;
  if (host_need == 0 || (!host_check && host_need < HOST_CHECK_MIN_BYTES))
    return CLMG_SUCCESS;
  host_memory host;
  host_memory_available(&host);
  if (host_need <= host.available)
    return CLMG_SUCCESS;
  clmg_format_byte_pair(host_need, host.available, need, have, sizeof need);
  char parts[256] = "";
  if (device_part && host_bytes) {
    clmg_format_bytes(device_part, other, sizeof other);
    clmg_format_bytes(host_bytes, held, sizeof held);
    snprintf(parts, sizeof parts, ": %s for the device, whose memory is the host's, and %s more",
             other, held);
  } else if (device_part) {
    snprintf(parts, sizeof parts, " (the memory of %s is the host's)", info->name);
  }
  return clmg_fail(context,
                   device_part ? CLMG_ERROR_OUT_OF_DEVICE_MEMORY : CLMG_ERROR_OUT_OF_HOST_MEMORY,
                   "%s needs %s of host memory%s; only %s are available (%s)", what, need, parts,
                   have, host.source);
}

clmg_status clmg_context_check_memory(clmg_context *context, uint64_t device_bytes,
                                      uint64_t largest_allocation, uint64_t host_bytes,
                                      const char *what) {
  if (!context || !context->queue)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (largest_allocation > device_bytes)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_context_check_memory: the largest allocation (%llu bytes) exceeds the "
                     "total (%llu bytes)",
                     (unsigned long long)largest_allocation, (unsigned long long)device_bytes);
  return clmg_memory_check(context, device_bytes, largest_allocation, host_bytes, 1,
                           what && *what ? what : "the run");
}

uint64_t clmg_context_memory_limit(const clmg_context *context) {
  return context ? context->memory_limit : 0;
}

/* The LCG's multiplier and increment, and its state `steps` steps after
 * `state` (the affine map composed by squaring). */
const uint64_t CLMG_LCG_MUL = 6364136223846793005ull, CLMG_LCG_ADD = 1442695040888963407ull;
#define LCG_MUL CLMG_LCG_MUL
#define LCG_ADD CLMG_LCG_ADD
uint64_t clmg_lcg_skip(uint64_t state, uint64_t steps) {
  uint64_t mul = LCG_MUL, add = LCG_ADD, total_mul = 1, total_add = 0;
  while (steps) {
    if (steps & 1) {
      total_mul *= mul;
      total_add = total_add * mul + add;
    }
    add = (mul + 1) * add;
    mul *= mul;
    steps >>= 1;
  }
  return total_mul * state + total_add;
}

void clmg_fill_pseudo_random(double *x, size_t n, uint64_t seed, uint64_t first, double low,
                             double high) {
  uint64_t state = clmg_lcg_skip(seed, first);
  for (size_t i = 0; i < n; i++) {
    state = state * LCG_MUL + LCG_ADD;
    x[i] = low + (high - low) * ((double)(state >> 11) / 9007199254740992.0);
  }
}

/* ---- Oclgrind's shadow memory ----
 * Oclgrind's uninitialised-value check (--uninitialized; the plugin
 * src/plugins/Uninitialized.cpp, the same in 21.10 as in 26.03.1) keeps a
 * shadow of each buffer slot, and two of its rules reported values that
 * had been written, in every family that allocates as it goes (issue 31:
 * adjacency_sort, mesh_dirichlet_dofs, the scans, agg_sizes, the mixed-
 * precision pointwise_multiply, csr_gather_stored, ...):
 *  - a host store (clEnqueueWriteBuffer, clEnqueueCopyBuffer, each pattern
 *    of clEnqueueFillBuffer) replaces the slot's whole shadow by one of the
 *    store's size at the slot's start (hostMemoryStore ->
 *    allocAndStoreShadowMemory -> ShadowMemory::allocate): after a store
 *    of part of a buffer the rest reads as unwritten, the stored bytes too
 *    when the offset is not 0, and kernels' writes past the new size are
 *    dropped;
 *  - nothing drops a released buffer's shadow (no memoryDeallocated), and
 *    the runtime gives the slot to a later buffer (Memory::getNextBuffer);
 *    a kernel's first use makes a fresh, unwritten shadow only where the
 *    slot has none (kernelBegin), so a new buffer larger than the old one
 *    reads as unwritten past the old size whatever kernels write there.
 * Standalone programs show both: a kernel-written buffer of 16 ints, then a
 * 4-byte write at offset 0: 15 reported; a buffer of 16 ints that a kernel
 * wrote in full, in the slot of a released 16-byte one: 12 reported. Only the
 * simulator's bookkeeping is wrong, not its values, and a real device has
 * none of it. So on Oclgrind (context->params.oclgrind) each new buffer gets
 * a fresh shadow, unwritten as a real device's new allocation is, and
 * writes of part of a buffer (fills among them) and all copies go through
 * kernels (cl/fill.cl), whose stores the plugin tracks byte by byte; a
 * write of a whole buffer stays a host store. Elsewhere these are the
 * plain OpenCL commands. */

clmg_status clmg_oclgrind_fresh_shadow(clmg_context *context, cl_mem buffer, size_t bytes,
                                       const char *what) {
  if (!context->params.oclgrind)
    return CLMG_SUCCESS;
  /* a store of the whole buffer sizes the shadow (written, zeros), then a
   * kernel marks it unwritten */
  void *zeros = calloc(bytes ? bytes : 1, 1);
  if (!zeros)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "%zu bytes of zeros for a new buffer's shadow on Oclgrind (%s)", bytes, what);
  cl_int error =
      clEnqueueWriteBuffer(context->queue, buffer, CL_TRUE, 0, bytes, zeros, 0, NULL, NULL);
  free(zeros);
  if (error != CL_SUCCESS)
    return clmg_fail_cl(context, error, what);
  clmg_kernel_args args;
  clmg_status status = clmg_args_for_kernel(context, "fill", "", "mark_unwritten", &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_buffer(&args, buffer);
  clmg_arg_ulong(&args, bytes);
  return clmg_launch_args(&args, bytes / 64 + 1);
}

static size_t buffer_size(cl_mem buffer) {
  size_t size = 0;
  return clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS ? size : 0;
}

static clmg_status copy_by_kernel(clmg_context *context, cl_mem source, size_t source_offset,
                                  cl_mem target, size_t target_offset, size_t bytes) {
  clmg_kernel_args args;
  clmg_status status = clmg_args_for_kernel(context, "fill", "", "copy_bytes", &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_buffer(&args, target);
  clmg_arg_ulong(&args, target_offset);
  clmg_arg_buffer(&args, source);
  clmg_arg_ulong(&args, source_offset);
  clmg_arg_ulong(&args, bytes);
  return clmg_launch_args(&args, bytes);
}

/* ---- staged uploads ----
 * A driver writes from ordinary (pageable) host memory through bounce
 * buffers of its own, which NVIDIA's OpenCL does at a fraction of the
 * link's speed (the H200: ~6.5 GB/s for the AMG setup's finest matrix).
 * From pinned memory the device's copy engine reads the bytes itself. So a
 * large write is cut into chunks of staging_chunk_bytes, each copied (on
 * the host's cores, clmg_host_copy) into one of CLMG_STAGING_SLOTS pinned
 * chunks of the context (buffers of CL_MEM_ALLOC_HOST_PTR, mapped once:
 * the mapped pointer is the pinned memory, which clEnqueueWriteBuffer
 * takes as an ordinary host pointer) and written by a non-blocking
 * transfer, flushed at once: the copy of the next chunk overlaps the
 * transfer of the last, and a slot is waited for (its previous transfer's
 * event) only when the ring comes round to it. The transfers go to the
 * context's queue, which is in order (no out-of-order property), so the
 * commands before and after the write see it where a plain write would
 * be. A blocking write waits for its last chunk (and so for all); a
 * non-blocking one returns with its last chunks in flight, but the
 * caller's bytes are all copied by then: the host array may be reused at
 * once, which a plain non-blocking write does not allow. Small writes
 * stay plain writes (the extra copy and the waits cost more than they
 * save), and so does every write where the pinned chunks cannot be made
 * (page-locked memory is limited): staging never fails an upload.
 * Large blocking reads (clmg_read_buffer) come back through the same
 * chunks: all of them read at once, then each copied out in turn while
 * the others' transfers run. */

int clmg_staging_applies(const clmg_context *context, size_t bytes) {
  return !context->params.oclgrind && !context->staging_unavailable &&
         context->params.staging_min_bytes > 0 && bytes >= context->params.staging_min_bytes &&
         context->params.staging_chunk_bytes > 0;
}

int clmg_staging_wanted(clmg_context *context, size_t bytes) {
  if (!clmg_staging_applies(context, bytes))
    return 0;
  if (context->staging_bytes ||
      context->staging_plain_bytes + bytes >= context->params.staging_ring_after_bytes)
    return 1;
  context->staging_plain_bytes += bytes;
  return 0;
}

/* Waits for slot k's transfer, if any, and frees the slot. */
static clmg_status staging_wait(clmg_context *context, unsigned k, const char *what) {
  if (!context->staging_done[k])
    return CLMG_SUCCESS;
  context->host_waits++;
  cl_int error = clWaitForEvents(1, &context->staging_done[k]);
  cl_int status = CL_SUCCESS;
  if (error == CL_SUCCESS) /* (a failed transfer's event reports its error) */
    clGetEventInfo(context->staging_done[k], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                   &status, NULL);
  clReleaseEvent(context->staging_done[k]);
  context->staging_done[k] = NULL;
  if (error == CL_SUCCESS && status < 0)
    error = status;
  return error == CL_SUCCESS ? CLMG_SUCCESS : clmg_fail_cl(context, error, what);
}

void clmg_staging_release(clmg_context *context) {
  for (unsigned k = 0; k < CLMG_STAGING_SLOTS; ++k) {
    if (context->staging_done[k]) {
      clWaitForEvents(1, &context->staging_done[k]);
      clReleaseEvent(context->staging_done[k]);
      context->staging_done[k] = NULL;
    }
    if (context->staging_host[k]) {
      cl_event unmapped = NULL;
      if (clEnqueueUnmapMemObject(context->queue, context->staging[k], context->staging_host[k], 0,
                                  NULL, &unmapped) == CL_SUCCESS) {
        clWaitForEvents(1, &unmapped);
        clReleaseEvent(unmapped);
      }
      context->staging_host[k] = NULL;
    }
    if (context->staging[k])
      clReleaseMemObject(context->staging[k]);
    context->staging[k] = NULL;
  }
  context->staging_bytes = 0;
}

int clmg_staging_ready(clmg_context *context) {
  if (context->staging_bytes)
    return 1;
  size_t bytes = context->params.staging_chunk_bytes;
  /* (staging forced on a CPU device: pocl aborts where a buffer's host
   * memory cannot be had, so the room is checked first, as for buffers) */
  int ready = !context->params.host_buffers ||
              clmg_address_space_has_room(CLMG_STAGING_SLOTS * bytes + ((size_t)128 << 20));
  for (unsigned k = 0; k < CLMG_STAGING_SLOTS && ready; ++k) {
    cl_int error = CL_SUCCESS;
    context->staging[k] =
        clCreateBuffer(context->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &error);
    if (!context->staging[k]) {
      ready = 0;
      break;
    }
    /* blocking: the queue's earlier commands are waited for, once */
    clmg_count_command(context, 1);
    context->staging_host[k] =
        clEnqueueMapBuffer(context->queue, context->staging[k], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                           0, bytes, 0, NULL, NULL, &error);
    ready = context->staging_host[k] != NULL && error == CL_SUCCESS;
  }
  if (!ready) {
    clmg_staging_release(context);
    context->staging_unavailable = 1;
    return 0;
  }
  context->staging_bytes = bytes;
  context->staging_next = 0;
  return 1;
}

static clmg_status staged_write(clmg_context *context, cl_mem buffer, int blocking, size_t offset,
                                size_t bytes, const void *host, const char *what) {
  const size_t chunk = context->staging_bytes;
  unsigned last = 0;
  for (size_t done = 0; done < bytes;) {
    size_t n = bytes - done < chunk ? bytes - done : chunk;
    unsigned k = context->staging_next;
    context->staging_next = (k + 1) % CLMG_STAGING_SLOTS;
    clmg_status status = staging_wait(context, k, what);
    if (status != CLMG_SUCCESS)
      return status;
    clmg_host_copy(context->staging_host[k], (const char *)host + done, n);
    clmg_count_command(context, 0);
    cl_int error =
        clEnqueueWriteBuffer(context->queue, buffer, CL_FALSE, offset + done, n,
                             context->staging_host[k], 0, NULL, &context->staging_done[k]);
    if (error == CL_SUCCESS) /* started now, while the next chunk is copied */
      error = clFlush(context->queue);
    if (error != CL_SUCCESS)
      return clmg_fail_cl(context, error, what);
    done += n;
    last = k;
  }
  return blocking ? staging_wait(context, last, what) : CLMG_SUCCESS;
}

/* Starts the read of chunk j of [offset, offset + bytes) into its slot
 * (first + j in the ring). */
static clmg_status staged_read_chunk(clmg_context *context, cl_mem buffer, size_t offset,
                                     size_t bytes, unsigned first, size_t j, const char *what) {
  const size_t chunk = context->staging_bytes, at = j * chunk;
  size_t n = bytes - at < chunk ? bytes - at : chunk;
  unsigned k = (unsigned)((first + j) % CLMG_STAGING_SLOTS);
  clmg_status status = staging_wait(context, k, what);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_count_command(context, 0);
  cl_int error = clEnqueueReadBuffer(context->queue, buffer, CL_FALSE, offset + at, n,
                                     context->staging_host[k], 0, NULL, &context->staging_done[k]);
  if (error == CL_SUCCESS)
    error = clFlush(context->queue);
  return error == CL_SUCCESS ? CLMG_SUCCESS : clmg_fail_cl(context, error, what);
}

/* A blocking read the other way round: every slot's chunk read at once,
 * then in order each chunk waited for, copied out, and its slot given the
 * chunk CLMG_STAGING_SLOTS further on. */
static clmg_status staged_read(clmg_context *context, cl_mem buffer, size_t offset, size_t bytes,
                               void *host, const char *what) {
  const size_t chunk = context->staging_bytes, chunks = (bytes + chunk - 1) / chunk;
  const unsigned first = context->staging_next;
  context->staging_next = (unsigned)((first + chunks) % CLMG_STAGING_SLOTS);
  clmg_status status = CLMG_SUCCESS;
  for (size_t j = 0; j < chunks && j < CLMG_STAGING_SLOTS && status == CLMG_SUCCESS; ++j)
    status = staged_read_chunk(context, buffer, offset, bytes, first, j, what);
  for (size_t j = 0; j < chunks && status == CLMG_SUCCESS; ++j) {
    unsigned k = (unsigned)((first + j) % CLMG_STAGING_SLOTS);
    status = staging_wait(context, k, what);
    if (status != CLMG_SUCCESS)
      break;
    size_t at = j * chunk, n = bytes - at < chunk ? bytes - at : chunk;
    clmg_host_copy((char *)host + at, context->staging_host[k], n);
    if (j + CLMG_STAGING_SLOTS < chunks)
      status =
          staged_read_chunk(context, buffer, offset, bytes, first, j + CLMG_STAGING_SLOTS, what);
  }
  return status;
}

clmg_status clmg_read_buffer(clmg_context *context, cl_mem buffer, int blocking, size_t offset,
                             size_t bytes, void *host, const char *what) {
  if (bytes == 0)
    return CLMG_SUCCESS;
  /* (a non-blocking read would need its chunks copied out after return) */
  if (blocking && clmg_staging_wanted(context, bytes) && clmg_staging_ready(context))
    return staged_read(context, buffer, offset, bytes, host, what);
  clmg_count_command(context, blocking);
  cl_int error = clEnqueueReadBuffer(context->queue, buffer, blocking ? CL_TRUE : CL_FALSE, offset,
                                     bytes, host, 0, NULL, NULL);
  return error == CL_SUCCESS ? CLMG_SUCCESS : clmg_fail_cl(context, error, what);
}

clmg_status clmg_write_buffer(clmg_context *context, cl_mem buffer, int blocking, size_t offset,
                              size_t bytes, const void *host, const char *what) {
  if (bytes == 0)
    return CLMG_SUCCESS;
  if (clmg_staging_wanted(context, bytes) && clmg_staging_ready(context))
    return staged_write(context, buffer, blocking, offset, bytes, host, what);
  if (context->params.oclgrind && (offset != 0 || bytes != buffer_size(buffer))) {
    /* a staging buffer takes the bytes in one store of its whole size */
    cl_int error;
    cl_mem staging = clCreateBuffer(context->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                                    (void *)host, &error);
    if (!staging)
      return clmg_fail_cl(context, error, what);
    clmg_status status = copy_by_kernel(context, staging, 0, buffer, offset, bytes);
    if (status == CLMG_SUCCESS && blocking)
      status = clmg_finish(context);
    clReleaseMemObject(staging);
    return status;
  }
  clmg_count_command(context, blocking);
  cl_int error = clEnqueueWriteBuffer(context->queue, buffer, blocking ? CL_TRUE : CL_FALSE, offset,
                                      bytes, host, 0, NULL, NULL);
  return error == CL_SUCCESS ? CLMG_SUCCESS : clmg_fail_cl(context, error, what);
}

clmg_status clmg_copy_buffer(clmg_context *context, cl_mem source, size_t source_offset,
                             cl_mem target, size_t target_offset, size_t bytes, const char *what) {
  if (bytes == 0)
    return CLMG_SUCCESS;
  if (context->params.oclgrind)
    return copy_by_kernel(context, source, source_offset, target, target_offset, bytes);
  clmg_count_command(context, 0);
  cl_int error = clEnqueueCopyBuffer(context->queue, source, target, source_offset, target_offset,
                                     bytes, 0, NULL, NULL);
  return error == CL_SUCCESS ? CLMG_SUCCESS : clmg_fail_cl(context, error, what);
}

clmg_status clmg_oclgrind_fill(clmg_context *context, cl_mem buffer, const void *pattern,
                               size_t pattern_size, size_t offset, size_t bytes, const char *what) {
  /* the filled bytes made on the host, then written as above */
  unsigned char *filled = malloc(bytes ? bytes : 1);
  if (!filled)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "%zu bytes to fill a buffer from on Oclgrind (%s)", bytes, what);
  for (size_t done = 0; done < bytes; done += pattern_size)
    memcpy(filled + done, pattern, bytes - done < pattern_size ? bytes - done : pattern_size);
  clmg_status status = clmg_write_buffer(context, buffer, 1, offset, bytes, filled, what);
  free(filled);
  return status;
}
