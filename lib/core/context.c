/* Device discovery and selection, the context and its queue. */
#define _POSIX_C_SOURCE 200809L /* getrlimit, mmap, sysconf */
#define _DEFAULT_SOURCE         /* MAP_ANONYMOUS (glibc, musl) */
#define _DARWIN_C_SOURCE        /* MAP_ANONYMOUS (macOS) */
#include "core/internal.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#define CLMG_HAVE_RLIMIT_AS 1
#endif

void clmg_context_options_defaults(clmg_context_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->blas1_backend = CLMG_BLAS1_AUTO;
}

static void query_string(cl_device_id device, cl_device_info what, char *out, size_t size) {
  out[0] = '\0';
  if (clGetDeviceInfo(device, what, size, out, NULL) != CL_SUCCESS)
    snprintf(out, size, "?");
  out[size - 1] = '\0';
}

static void query_device_info(cl_platform_id platform, cl_device_id device, unsigned p, unsigned d,
                              clmg_device_info *info) {
  memset(info, 0, sizeof *info);
  info->platform_index = p;
  info->device_index = d;
  if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform_name, info->platform_name,
                        NULL) != CL_SUCCESS)
    snprintf(info->platform_name, sizeof info->platform_name, "?");
  if (clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof info->platform_version,
                        info->platform_version, NULL) != CL_SUCCESS)
    snprintf(info->platform_version, sizeof info->platform_version, "?");
  info->platform_name[sizeof info->platform_name - 1] = '\0';
  info->platform_version[sizeof info->platform_version - 1] = '\0';
  query_string(device, CL_DEVICE_NAME, info->name, sizeof info->name);
  query_string(device, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
  query_string(device, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
  query_string(device, CL_DEVICE_VERSION, info->opencl_version, sizeof info->opencl_version);

  cl_device_type type = 0;
  clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  info->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  info->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  cl_device_fp_config fp64 = 0;
  clGetDeviceInfo(device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
  info->has_fp64 = fp64 != 0;
  cl_uint units = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  info->compute_units = units ? units : 1;
  cl_ulong value = 0;
  clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof value, &value, NULL);
  info->global_mem_bytes = value;
  value = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof value, &value, NULL);
  info->max_alloc_bytes = value;
  value = 0;
  clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof value, &value, NULL);
  info->local_mem_bytes = value;
  size_t group = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL);
  info->max_work_group_size = group ? group : 1;
}

/* All devices of all platforms with their handles. */
typedef struct device_list {
  size_t count;
  clmg_device_info *info;
  cl_platform_id *platform;
  cl_device_id *device;
} device_list;

static void device_list_free(device_list *list) {
  free(list->info);
  free(list->platform);
  free(list->device);
  memset(list, 0, sizeof *list);
}

/* ---- room in the address space (RLIMIT_AS, ulimit -v) ----
 *
 * Under an address-space limit, OpenCL CPU drivers and their compilers abort
 * or crash the process rather than fail when they run out (pocl 3.1 with
 * LLVM 15: "PTHREAD ERROR in pthread_scheduler_init", std::bad_alloc while
 * compiling, SIGSEGV in clGetProgramInfo(CL_PROGRAM_BINARIES), an assertion
 * on a buffer it could not allocate). So clmg tests for room first where it
 * can, and refuses with a message. */

int clmg_address_space_has_room(size_t bytes) {
#ifdef CLMG_HAVE_RLIMIT_AS
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 1;
#ifdef MAP_ANONYMOUS
  /* PROT_NONE takes no memory but counts against RLIMIT_AS */
  void *probe = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED)
    return 0;
  munmap(probe, bytes);
#else
  void *probe = malloc(bytes); /* mapped, not touched */
  if (!probe)
    return 0;
  free(probe);
#endif
#else
  (void)bytes;
#endif
  return 1;
}

/* Loading a driver and compiling the first kernels takes hundreds of MiB of
 * address space: pocl 3.1 with LLVM 15 failed below about 530 MiB with an
 * empty kernel cache (about 300 MiB with a full one), plus per core a worker
 * thread with a stack of RLIMIT_STACK and a malloc arena that glibc reserves
 * for it (64 MiB of address space each: on the 16-core GPU host pocl's
 * scheduler aborted under 1 GiB without them). Tested before the first
 * OpenCL call of the process only: later the drivers are loaded and hold
 * that room. */
enum { DRIVER_ROOM_MIB = 576, DEFAULT_STACK_MIB = 8, MALLOC_ARENA_MIB = 64 };

static atomic_int drivers_loaded;

static clmg_status check_room_for_drivers(char *message, size_t message_size) {
  if (atomic_load(&drivers_loaded))
    return CLMG_SUCCESS;
  size_t stack_bytes = (size_t)DEFAULT_STACK_MIB << 20;
  long cores = 1;
#ifdef CLMG_HAVE_RLIMIT_AS
  struct rlimit stack;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY &&
      stack.rlim_cur < ((rlim_t)1 << 30))
    stack_bytes = (size_t)stack.rlim_cur;
  cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    cores = 1;
#endif
  size_t room = ((size_t)DRIVER_ROOM_MIB << 20) +
                (size_t)cores * (stack_bytes + ((size_t)MALLOC_ARENA_MIB << 20));
  if (clmg_address_space_has_room(room))
    return CLMG_SUCCESS;
  snprintf(message, message_size,
           "the address-space limit (RLIMIT_AS, ulimit -v) leaves less than the %zu MiB that an "
           "OpenCL driver may need to load and compile (pocl: about %d MiB, and for each of %ld "
           "cores a %zu MiB thread stack and a %d MiB malloc arena), and drivers abort the "
           "process when they run out; raise the limit",
           room >> 20, DRIVER_ROOM_MIB, cores, stack_bytes >> 20, (int)MALLOC_ARENA_MIB);
  return CLMG_ERROR_OUT_OF_HOST_MEMORY;
}

static clmg_status enumerate_devices(device_list *list, char *message, size_t message_size) {
  memset(list, 0, sizeof *list);
  clmg_status room = check_room_for_drivers(message, message_size);
  if (room != CLMG_SUCCESS)
    return room;
  cl_uint platform_count = 0;
  cl_int error = clGetPlatformIDs(0, NULL, &platform_count);
  if (error != CL_SUCCESS || platform_count == 0) {
    snprintf(message, message_size,
             "no OpenCL platform found (clGetPlatformIDs: %s); install an OpenCL driver, "
             "e.g. the Debian package pocl-opencl-icd for CPUs",
             clmg_cl_error_name(error));
    return CLMG_ERROR_NO_DEVICE;
  }
  cl_platform_id *platforms = malloc(platform_count * sizeof *platforms);
  if (!platforms) {
    snprintf(message, message_size, "out of host memory listing platforms");
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  clGetPlatformIDs(platform_count, platforms, NULL);
  clmg_status status = CLMG_SUCCESS;
  for (cl_uint p = 0; p < platform_count && status == CLMG_SUCCESS; ++p) {
    cl_uint device_count = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &device_count) != CL_SUCCESS ||
        device_count == 0)
      continue;
    cl_device_id *devices = malloc(device_count * sizeof *devices);
    size_t total = list->count + device_count;
    clmg_device_info *info = realloc(list->info, total * sizeof *info);
    if (info)
      list->info = info;
    cl_platform_id *plats = realloc(list->platform, total * sizeof *plats);
    if (plats)
      list->platform = plats;
    cl_device_id *devs = realloc(list->device, total * sizeof *devs);
    if (devs)
      list->device = devs;
    if (!devices || !info || !plats || !devs) {
      free(devices);
      snprintf(message, message_size, "out of host memory listing devices");
      status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
      break;
    }
    clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, devices, NULL);
    for (cl_uint d = 0; d < device_count; ++d) {
      query_device_info(platforms[p], devices[d], p, d, &list->info[list->count]);
      list->platform[list->count] = platforms[p];
      list->device[list->count] = devices[d];
      list->count++;
    }
    free(devices);
  }
  free(platforms);
  atomic_store(&drivers_loaded, 1);
  if (status == CLMG_SUCCESS && list->count == 0) {
    snprintf(message, message_size, "OpenCL platforms exist but expose no device");
    status = CLMG_ERROR_NO_DEVICE;
  }
  if (status != CLMG_SUCCESS)
    device_list_free(list);
  return status;
}

clmg_status clmg_list_devices(clmg_device_info **devices, size_t *count, char *message,
                              size_t message_size) {
  char scratch[256];
  if (!message || message_size == 0) {
    message = scratch;
    message_size = sizeof scratch;
  }
  message[0] = '\0';
  if (!devices || !count) {
    snprintf(message, message_size, "clmg_list_devices: NULL output pointer");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  *devices = NULL;
  *count = 0;
  device_list list;
  clmg_status status = enumerate_devices(&list, message, message_size);
  if (status != CLMG_SUCCESS)
    return status;
  *devices = list.info;
  *count = list.count;
  list.info = NULL;
  device_list_free(&list);
  return CLMG_SUCCESS;
}

static int contains_ignoring_case(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0)
    return 0;
  for (; *haystack; ++haystack) {
    size_t i = 0;
    while (i < n && haystack[i] &&
           tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == n)
      return 1;
  }
  return 0;
}

static int equals_ignoring_case(const char *a, const char *b) {
  for (; *a && *b; ++a, ++b)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
      return 0;
  return *a == *b;
}

/* Index into list of the device the spec names, or -1. */
static long select_device(const device_list *list, const char *spec) {
  if (!spec || !*spec) {
    for (size_t i = 0; i < list->count; ++i)
      if (list->info[i].is_gpu)
        return (long)i;
    for (size_t i = 0; i < list->count; ++i)
      if (list->info[i].is_cpu)
        return (long)i;
    return 0;
  }
  if (equals_ignoring_case(spec, "gpu") || equals_ignoring_case(spec, "cpu")) {
    int want_gpu = equals_ignoring_case(spec, "gpu");
    for (size_t i = 0; i < list->count; ++i)
      if (want_gpu ? list->info[i].is_gpu : list->info[i].is_cpu)
        return (long)i;
    return -1;
  }
  unsigned p, d;
  char tail;
  if (sscanf(spec, "%u:%u%c", &p, &d, &tail) == 2) {
    for (size_t i = 0; i < list->count; ++i)
      if (list->info[i].platform_index == p && list->info[i].device_index == d)
        return (long)i;
    return -1;
  }
  for (size_t i = 0; i < list->count; ++i) {
    const clmg_device_info *info = &list->info[i];
    /* pocl names itself only in its version string ("OpenCL 3.0 PoCL 3.1"). */
    if (contains_ignoring_case(info->platform_name, spec) ||
        contains_ignoring_case(info->platform_version, spec) ||
        contains_ignoring_case(info->vendor, spec) || contains_ignoring_case(info->name, spec))
      return (long)i;
  }
  return -1;
}

static void describe_devices(const device_list *list, char *out, size_t size) {
  size_t used = strlen(out);
  for (size_t i = 0; i < list->count && used + 1 < size; ++i) {
    const clmg_device_info *info = &list->info[i];
    int written = snprintf(out + used, size - used, "\n  %u:%u  %s / %s (%s)", info->platform_index,
                           info->device_index, info->platform_name, info->name,
                           info->is_gpu   ? "GPU"
                           : info->is_cpu ? "CPU"
                                          : "other");
    if (written < 0)
      break;
    used += (size_t)written;
  }
}

static char *duplicate_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy)
    memcpy(copy, s, n);
  return copy;
}

static char *default_cache_dir(void) {
  const char *explicit_dir = getenv("CLMG_CACHE_DIR");
  if (explicit_dir && *explicit_dir)
    return duplicate_string(explicit_dir);
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  char path[4096];
  if (xdg && *xdg)
    snprintf(path, sizeof path, "%s/clmg", xdg);
  else if (home && *home)
    snprintf(path, sizeof path, "%s/.cache/clmg", home);
  else
    return NULL; /* nowhere sensible to cache: build from source */
  return duplicate_string(path);
}

/* NULL when dir is (or can be made) a directory this process may write,
 * else what is wrong with it. */
static const char *cache_dir_problem(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; ++p) { /* mkdir -p */
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  }
  mkdir(path, 0755);
  struct stat info;
  if (stat(dir, &info) != 0)
    return "cannot be made (its parent is not writable)";
  if (!S_ISDIR(info.st_mode))
    return "is not a directory";
  if (access(dir, W_OK | X_OK) != 0)
    return "is not writable";
  return NULL;
}

clmg_status clmg_context_create(const clmg_context_options *options, clmg_context **out) {
  if (!out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  clmg_context_options defaults;
  if (!options) {
    clmg_context_options_defaults(&defaults);
    options = &defaults;
  }
  clmg_context *context = calloc(1, sizeof *context);
  if (!context)
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  *out = context;
  context->blas1_backend = options->blas1_backend;

  device_list list;
  clmg_status status = enumerate_devices(&list, context->message, sizeof context->message);
  if (status != CLMG_SUCCESS)
    return status;

  const char *spec = options->device;
  const char *spec_origin = "requested";
  if (!spec || !*spec) {
    spec = getenv("CLMG_DEVICE");
    spec_origin = "CLMG_DEVICE";
  }
  long chosen = select_device(&list, spec);
  if (chosen < 0) {
    snprintf(context->message, sizeof context->message,
             "%s device \"%s\" matches no OpenCL device; use \"gpu\", \"cpu\", "
             "\"P:D\" or a name substring. Devices present:",
             spec_origin, spec);
    describe_devices(&list, context->message, sizeof context->message);
    device_list_free(&list);
    return CLMG_ERROR_DEVICE_NOT_FOUND;
  }
  context->info = list.info[chosen];
  context->platform = list.platform[chosen];
  context->device = list.device[chosen];
  device_list_free(&list);
  status = clmg_memory_options(context, options);
  if (status != CLMG_SUCCESS)
    return status;
  /* every choice made from the device: the table's row for its class */
  clmg_device_description description;
  clmg_device_describe(&context->info, context->device, &description);
  char refused[1024]; /* the unknown key's message lists every key */
  status = clmg_device_params_fill(&description, getenv("CLMG_DEVICE_PARAMS"), &context->params,
                                   refused, sizeof refused);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "%s", refused);

  cl_int error;
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                        (cl_context_properties)context->platform, 0};
  context->cl = clCreateContext(properties, 1, &context->device, NULL, NULL, &error);
  if (!context->cl)
    return clmg_fail_cl(context, error, "clCreateContext");
  context->queue =
      clCreateCommandQueue(context->cl, context->device, CL_QUEUE_PROFILING_ENABLE, &error);
  if (!context->queue)
    return clmg_fail_cl(context, error, "clCreateCommandQueue");

  const char *device_switch = context->params.cpu_kernels ? " -DCLMG_CPU=1" : "";
  snprintf(context->real_options[0], sizeof context->real_options[0],
           "-DREAL=double -DREAL_IS_DOUBLE=1%s", device_switch);
  snprintf(context->real_options[1], sizeof context->real_options[1], "-DREAL=float%s",
           device_switch);

  if (!options->disable_binary_cache) {
    context->cache_dir =
        options->cache_dir ? duplicate_string(options->cache_dir) : default_cache_dir();
    /* a cache that cannot be written is off, and says why (it once said
     * "cached in /dev/null" and compiled every run) */
    const char *unusable = context->cache_dir ? cache_dir_problem(context->cache_dir) : NULL;
    if (unusable) {
      snprintf(context->cache_off_reason, sizeof context->cache_off_reason, "%.200s %s",
               context->cache_dir, unusable);
      free(context->cache_dir);
      context->cache_dir = NULL;
    }
  }
  const char *kernel_dir = options->kernel_dir;
  if (!kernel_dir)
    kernel_dir = getenv("CLMG_KERNEL_DIR");
  struct stat kernel_dir_info;
  if (kernel_dir && *kernel_dir &&
      (stat(kernel_dir, &kernel_dir_info) != 0 || !S_ISDIR(kernel_dir_info.st_mode)))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "the kernel directory %s (%s) is not a directory: unset it to use the "
                     "kernels built into the library",
                     kernel_dir,
                     options->kernel_dir ? "clmg_context_options.kernel_dir" : "CLMG_KERNEL_DIR");
  if (kernel_dir && *kernel_dir) {
    context->kernel_dir = duplicate_string(kernel_dir);
    if (!context->kernel_dir)
      return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "copying the kernel directory");
  }
  return CLMG_SUCCESS;
}

/* Defined in program.c and blas1.c: release what those layers keep. */
void clmg_release_programs(clmg_context *context);

void clmg_context_destroy(clmg_context *context) {
  if (!context)
    return;
  if (context->queue)
    clFinish(context->queue);
  clmg_context_trim(context);
  free(context->cached);
  clmg_staging_release(context);
  clmg_profile_destroy(context);
  clmg_release_programs(context);
  if (context->partials)
    clReleaseMemObject(context->partials);
  if (context->clblast_scalar)
    clReleaseMemObject(context->clblast_scalar);
  free(context->partials_host);
  if (context->queue)
    clReleaseCommandQueue(context->queue);
  if (context->cl)
    clReleaseContext(context->cl);
  free(context->cache_dir);
  free(context->kernel_dir);
  clmg_registry_free(context->registry);
  free(context);
}

const clmg_device_info *clmg_context_device(const clmg_context *context) {
  return context && context->queue ? &context->info : NULL;
}

uint64_t clmg_context_device_bytes(const clmg_context *context) {
  return context ? context->device_bytes : 0;
}

uint64_t clmg_context_cached_bytes(const clmg_context *context) {
  return context ? context->cached_bytes : 0;
}

double clmg_context_program_seconds(const clmg_context *context) {
  return context ? context->program_seconds : 0.0;
}

void clmg_context_program_counts(const clmg_context *context, unsigned *built_from_source,
                                 unsigned *loaded_from_cache) {
  if (built_from_source)
    *built_from_source = context ? context->programs_built : 0;
  if (loaded_from_cache)
    *loaded_from_cache = context ? context->programs_cached : 0;
}

clmg_status clmg_context_set_program_callback(clmg_context *context, clmg_program_callback callback,
                                              void *data) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  context->program_callback = callback;
  context->program_callback_data = callback ? data : NULL;
  return CLMG_SUCCESS;
}

const char *clmg_context_cache_dir(const clmg_context *context) {
  return context ? context->cache_dir : NULL;
}

clmg_status clmg_finish(clmg_context *context) {
  if (!context || !context->queue)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  context->host_waits++;
  cl_int error = clFinish(context->queue);
  if (error != CL_SUCCESS)
    return clmg_fail_cl(context, error, "clFinish");
  context->drained_at = context->commands;
  return CLMG_SUCCESS;
}

clmg_status clmg_finish_queued(clmg_context *context) {
  if (context && context->queue && context->commands == context->drained_at)
    return CLMG_SUCCESS;
  return clmg_finish(context);
}

void clmg_context_counters(const clmg_context *context, clmg_counters *counters) {
  if (!counters)
    return;
  counters->commands = context ? context->commands : 0;
  counters->host_waits = context ? context->host_waits : 0;
}

cl_context clmg_context_cl_context(const clmg_context *context) {
  return context ? context->cl : NULL;
}
cl_command_queue clmg_context_cl_queue(const clmg_context *context) {
  return context ? context->queue : NULL;
}
cl_device_id clmg_context_cl_device(const clmg_context *context) {
  return context ? context->device : NULL;
}

void clmg_launch_1d(const clmg_context *context, size_t n, int reduction, size_t *global,
                    size_t *local) {
  /* the table's work-group size and groups per compute unit */
  const clmg_device_params *p = &context->params;
  size_t max_groups_per_unit = reduction ? p->reduction_groups_per_unit : p->stream_groups_per_unit;
  size_t group = p->work_group_size;
  size_t groups = (n + group - 1) / group;
  size_t cap = (size_t)context->info.compute_units * max_groups_per_unit;
  if (groups > cap)
    groups = cap;
  if (groups == 0)
    groups = 1;
  *local = group;
  *global = groups * group;
}

/* ---- freed buffers kept for reuse (params.buffer_cache) ----
 * An allocation without initial content takes its size class (at most
 * 1/8 above the request: eight classes per power of two, 4 KiB at least),
 * and a freed buffer whose size is a class waits in the cache for the next
 * request of that class. The cache holds at most CACHE_ENTRIES buffers and
 * a quarter of the device's memory (of the memory limit, where one is set);
 * a new buffer that would not fit beside the cached ones empties the cache
 * first, and clmg_context_trim empties it on request. */
enum { CACHE_ENTRIES = 256, CACHE_MIN_BYTES = 4096 };
struct clmg_cached_buffer {
  cl_mem buffer;
  size_t bytes;
};

static size_t size_class(size_t bytes) {
  if (bytes <= CACHE_MIN_BYTES)
    return CACHE_MIN_BYTES;
  size_t top = CACHE_MIN_BYTES;
  while (top <= bytes / 2)
    top *= 2;
  const size_t step = top / 8;
  return bytes / step * step + (bytes % step ? step : 0);
}

/* The device memory the context may hold: the device's, or the memory
 * limit where that is lower. */
static uint64_t memory_room(const clmg_context *context) {
  uint64_t memory = context->info.global_mem_bytes;
  return context->memory_limit && context->memory_limit < memory ? context->memory_limit : memory;
}

static uint64_t cache_limit(const clmg_context *context) {
  return memory_room(context) / 4;
}

void clmg_context_trim(clmg_context *context) {
  if (!context)
    return;
  for (size_t k = 0; k < context->cached_count; k++)
    clReleaseMemObject(context->cached[k].buffer);
  context->cached_count = 0;
  context->cached_bytes = 0;
}

void clmg_context_set_buffer_cache(clmg_context *context, int keep) {
  if (!context)
    return;
  if (!keep)
    clmg_context_trim(context);
  context->params.buffer_cache = keep != 0;
}

/* A kept buffer of exactly `bytes` (a size class), taken out of the cache;
 * NULL when there is none. */
static cl_mem take_cached(clmg_context *context, size_t bytes) {
  for (size_t k = context->cached_count; k-- > 0;)
    if (context->cached[k].bytes == bytes) {
      cl_mem buffer = context->cached[k].buffer;
      context->cached[k] = context->cached[--context->cached_count];
      context->cached_bytes -= bytes;
      return buffer;
    }
  return NULL;
}

/* Keeps a freed buffer where the cache takes it; 0 when it does not. */
static int keep_cached(clmg_context *context, cl_mem buffer) {
  size_t bytes = 0;
  if (!context->params.buffer_cache ||
      clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS ||
      bytes != size_class(bytes) || context->cached_bytes + bytes > cache_limit(context))
    return 0;
  if (!context->cached) {
    context->cached = malloc(CACHE_ENTRIES * sizeof *context->cached);
    if (!context->cached)
      return 0;
  }
  if (context->cached_count == CACHE_ENTRIES)
    return 0;
  context->cached[context->cached_count++] = (struct clmg_cached_buffer){buffer, bytes};
  context->cached_bytes += bytes;
  return 1;
}

/* What a CPU device's buffer leaves free of the address space, for the
 * compilations that may follow (pocl compiles a kernel for each new
 * work-group size). */
enum { CPU_BUFFER_SPARE_MIB = 128 };

clmg_status clmg_device_alloc(clmg_context *context, size_t bytes, const void *initial,
                              const char *what, cl_mem *buffer) {
  *buffer = NULL;
  if (bytes == 0)
    bytes = 1; /* OpenCL has no empty buffers */
  clmg_status status = clmg_memory_check(context, bytes, bytes, 0, 0, what);
  if (status != CLMG_SUCCESS)
    return status;
  /* A CPU device's buffers are host memory, which pocl allocates only when
   * the buffer is first used, and asserts on when that fails: under an
   * address-space limit the room must be there now, with some left for
   * compiling kernels. */
  if (context->params.host_buffers &&
      !clmg_address_space_has_room(bytes + ((size_t)CPU_BUFFER_SPARE_MIB << 20)))
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "%s needs %zu bytes of host memory (a CPU device), more than the "
                     "address-space limit (RLIMIT_AS, ulimit -v) leaves with %d MiB to spare",
                     what, bytes, CPU_BUFFER_SPARE_MIB);
  /* a large initial content goes through clmg_write_buffer's pinned
   * staging where that applies (a copy at creation is the driver's pageable
   * path): on the queue before any command that uses the buffer, and the
   * caller's bytes copied at the return, as a copy at creation has them;
   * where the pinned chunks cannot be had, the copy at creation */
  int staged = initial && clmg_staging_wanted(context, bytes) && clmg_staging_ready(context);
  /* without initial content, a buffer of the size class: a kept one, else
   * a new one (the kept ones released first where it would not fit beside
   * them) */
  const int classed = context->params.buffer_cache && !initial;
  const size_t size = classed ? size_class(bytes) : bytes;
  *buffer = classed ? take_cached(context, size) : NULL;
  if (*buffer) {
    context->device_bytes += bytes;
    status = clmg_oclgrind_fresh_shadow(context, *buffer, bytes, what);
    if (status != CLMG_SUCCESS) {
      clmg_device_free(context, *buffer, bytes);
      *buffer = NULL;
    }
    return status;
  }
  if (context->cached_bytes &&
      context->device_bytes + context->cached_bytes + size > memory_room(context))
    clmg_context_trim(context);
  cl_int error;
  cl_mem_flags flags = CL_MEM_READ_WRITE | (initial && !staged ? CL_MEM_COPY_HOST_PTR : 0);
  *buffer = clCreateBuffer(context->cl, flags, size, staged ? NULL : (void *)initial, &error);
  if (!*buffer && context->cached_bytes) {
    clmg_context_trim(context);
    *buffer = clCreateBuffer(context->cl, flags, size, staged ? NULL : (void *)initial, &error);
  }
  if (!*buffer) {
    char message[200];
    snprintf(message, sizeof message, "allocating %s (%zu bytes)", what, bytes);
    return clmg_fail_cl(context, error, message);
  }
  context->device_bytes += bytes;
  status = staged    ? clmg_write_buffer(context, *buffer, 0, 0, bytes, initial, what)
           : initial ? CLMG_SUCCESS
                     : clmg_oclgrind_fresh_shadow(context, *buffer, bytes, what);
  if (status != CLMG_SUCCESS) {
    clmg_device_free(context, *buffer, bytes);
    *buffer = NULL;
  }
  return status;
}

clmg_status clmg_fill_buffer(clmg_context *context, cl_mem buffer, const void *pattern,
                             size_t pattern_size, size_t offset, size_t bytes, const char *what) {
  if (context->params.oclgrind) /* lib/core/memory.c says why */
    return clmg_oclgrind_fill(context, buffer, pattern, pattern_size, offset, bytes, what);
  const size_t chunk = pattern_size << 30;
  cl_int error = CL_SUCCESS;
  for (size_t done = 0; done < bytes && error == CL_SUCCESS; done += chunk) {
    error = clEnqueueFillBuffer(context->queue, buffer, pattern, pattern_size, offset + done,
                                bytes - done < chunk ? bytes - done : chunk, 0, NULL, NULL);
    clmg_count_command(context, 0);
  }
  return error == CL_SUCCESS ? CLMG_SUCCESS : clmg_fail_cl(context, error, what);
}

void clmg_device_free(clmg_context *context, cl_mem buffer, size_t bytes) {
  if (!buffer)
    return;
  if (!keep_cached(context, buffer))
    clReleaseMemObject(buffer);
  context->device_bytes -= bytes ? bytes : 1;
}

clmg_status clmg_reserve_partials(clmg_context *context, size_t bytes) {
  if (context->partials_capacity >= bytes)
    return CLMG_SUCCESS;
  if (context->partials)
    clReleaseMemObject(context->partials);
  free(context->partials_host);
  context->partials = NULL;
  context->partials_capacity = 0;
  context->partials_host = malloc(bytes);
  if (!context->partials_host)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "reduction scratch of %zu bytes",
                     bytes);
  cl_int error;
  context->partials = clCreateBuffer(context->cl, CL_MEM_READ_WRITE, bytes, NULL, &error);
  if (!context->partials)
    return clmg_fail_cl(context, error, "allocating the reduction scratch");
  context->partials_capacity = bytes;
  return clmg_oclgrind_fresh_shadow(context, context->partials, bytes, "the reduction scratch");
}

void clmg_args_begin(clmg_kernel_args *args, clmg_context *context, cl_kernel kernel,
                     const char *name) {
  args->context = context;
  args->kernel = kernel;
  args->name = name;
  args->index = 0;
  args->failed_index = 0;
  args->error = CL_SUCCESS;
}

void clmg_arg_raw(clmg_kernel_args *args, size_t size, const void *value) {
  cl_int error = clSetKernelArg(args->kernel, args->index, size, value);
  if (error != CL_SUCCESS && args->error == CL_SUCCESS) {
    args->error = error;
    args->failed_index = args->index;
  }
  args->index++;
}

void clmg_arg_ulong(clmg_kernel_args *args, uint64_t value) {
  cl_ulong v = value;
  clmg_arg_raw(args, sizeof v, &v);
}

void clmg_arg_real(clmg_kernel_args *args, clmg_dtype type, double value) {
  if (type == CLMG_FLOAT) {
    cl_float v = (cl_float)value;
    clmg_arg_raw(args, sizeof v, &v);
  } else {
    cl_double v = value;
    clmg_arg_raw(args, sizeof v, &v);
  }
}

void clmg_arg_buffer(clmg_kernel_args *args, cl_mem buffer) {
  clmg_arg_raw(args, sizeof buffer, &buffer);
}

void clmg_arg_local(clmg_kernel_args *args, size_t bytes) {
  clmg_arg_raw(args, bytes, NULL);
}

clmg_status clmg_args_end(clmg_kernel_args *args) {
  if (args->error == CL_SUCCESS)
    return CLMG_SUCCESS;
  char what[160];
  snprintf(what, sizeof what, "setting argument %u of kernel %s", args->failed_index, args->name);
  return clmg_fail_cl(args->context, args->error, what);
}

clmg_status clmg_args_for_kernel(clmg_context *context, const char *family, const char *options,
                                 const char *name, clmg_kernel_args *args) {
  cl_kernel kernel = NULL;
  clmg_status status = clmg_get_kernel(context, family, options, name, &kernel);
  if (status == CLMG_SUCCESS)
    clmg_args_begin(args, context, kernel, name);
  return status;
}

clmg_status clmg_launch_args(clmg_kernel_args *args, size_t n) {
  clmg_status status = clmg_args_end(args);
  if (status != CLMG_SUCCESS || n == 0)
    return status;
  size_t global, local;
  clmg_launch_1d(args->context, n, 0, &global, &local);
  return clmg_enqueue_1d(args->context, args->kernel, args->name, global, local, NULL);
}

clmg_status clmg_enqueue_1d(clmg_context *context, cl_kernel kernel, const char *kernel_name,
                            size_t global, size_t local, cl_event *event) {
  cl_event *profiled = event ? NULL : clmg_profile_event_slot(context, kernel_name, global);
  cl_int error = clEnqueueNDRangeKernel(context->queue, kernel, 1, NULL, &global, &local, 0, NULL,
                                        event ? event : profiled);
  clmg_launch_commit(context, profiled, error == CL_SUCCESS);
  if (error == CL_SUCCESS)
    return CLMG_SUCCESS;
  char what[160];
  snprintf(what, sizeof what, "launching kernel %s (global %zu, local %zu)", kernel_name, global,
           local);
  return clmg_fail_cl(context, error, what);
}
