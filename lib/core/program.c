/* The program manager: kernel sources (embedded or from CLMG_KERNEL_DIR),
 * compilation with options, reuse within a context, and a disk cache of
 * program binaries keyed by everything that can change the binary. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "core/embedded.h"
#include "core/internal.h"
#include "clmg/output_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct kernel_entry {
  char *name;
  cl_kernel kernel;
  struct kernel_entry *next;
} kernel_entry;

struct clmg_program_entry {
  char *family;
  char *options;
  cl_program program;
  kernel_entry *kernels;
  clmg_program_entry *next;
};

static char *duplicate_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy)
    memcpy(copy, s, n);
  return copy;
}

void clmg_release_programs(clmg_context *context) {
  clmg_program_entry *entry = context->programs;
  while (entry) {
    kernel_entry *k = entry->kernels;
    while (k) {
      kernel_entry *next_kernel = k->next;
      clReleaseKernel(k->kernel);
      free(k->name);
      free(k);
      k = next_kernel;
    }
    clmg_program_entry *next = entry->next;
    if (entry->program)
      clReleaseProgram(entry->program);
    free(entry->family);
    free(entry->options);
    free(entry);
    entry = next;
  }
  context->programs = NULL;
}

/* ---- sources ---- */

static const clmg_embedded_source *find_embedded(const char *family) {
  for (const clmg_embedded_source *s = clmg_embedded_sources; s->family; ++s)
    if (strcmp(s->family, family) == 0)
      return s;
  return NULL;
}

/* Reads a whole file; NULL if it does not exist or cannot be read. */
static char *read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  char *data = NULL;
  long length = -1;
  if (fseek(file, 0, SEEK_END) == 0)
    length = ftell(file);
  if (length >= 0 && fseek(file, 0, SEEK_SET) == 0) {
    data = malloc((size_t)length + 1);
    if (data && fread(data, 1, (size_t)length, file) != (size_t)length) {
      free(data);
      data = NULL;
    }
  }
  fclose(file);
  if (data) {
    data[length] = '\0';
    *size = (size_t)length;
  }
  return data;
}

/* Appends a piece of source and a newline. */
static clmg_status append_text(clmg_context *context, const char *piece, size_t piece_size,
                               char **text, size_t *length) {
  char *grown = realloc(*text, *length + piece_size + 2);
  if (!grown)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "kernel source");
  memcpy(grown + *length, piece, piece_size);
  *length += piece_size;
  grown[(*length)++] = '\n';
  grown[*length] = '\0';
  *text = grown;
  return CLMG_SUCCESS;
}

/* Appends the source of one family: from the kernel directory when it holds
 * <family>.cl, else the embedded copy. */
static clmg_status append_family_source(clmg_context *context, const char *family, char **text,
                                        size_t *length) {
  const char *piece = NULL;
  size_t piece_size = 0;
  char *from_disk = NULL;
  if (context->kernel_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.cl", context->kernel_dir, family);
    from_disk = read_file(path, &piece_size);
    piece = from_disk;
  }
  if (!piece) {
    const clmg_embedded_source *embedded = find_embedded(family);
    if (!embedded)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "no kernel family \"%s\" (no cl/%s.cl in the library%s%s)", family, family,
                       context->kernel_dir ? " or in " : "",
                       context->kernel_dir ? context->kernel_dir : "");
    piece = (const char *)embedded->text;
    piece_size = embedded->size;
  }
  /* The families are compiled as one source; #line makes the build log name
   * the file and line the error is on ("blas1.cl:4:"), not a line of the
   * concatenation. The name only: a kernel dir's path would split the
   * binary cache by directory. */
  char line[160];
  snprintf(line, sizeof line, "#line 1 \"%s.cl\"", family);
  clmg_status status = append_text(context, line, strlen(line), text, length);
  if (status == CLMG_SUCCESS)
    status = append_text(context, piece, piece_size, text, length);
  free(from_disk);
  return status;
}

/* ---- binary cache ---- */

/* 64-bit FNV-1a; two seeds give the 128-bit cache key. */
static uint64_t fnv1a(uint64_t hash, const void *data, size_t size) {
  const unsigned char *bytes = data;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

static void cache_key(const clmg_context *context, const char *source, const char *options,
                      char key[33]) {
  const char *parts[] = {source,
                         options,
                         context->info.platform_name,
                         context->info.platform_version,
                         context->info.name,
                         context->info.driver_version,
                         CLMG_VERSION_STRING};
  uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    size_t n = strlen(parts[i]) + 1; /* the NUL separates the parts */
    h1 = fnv1a(h1, parts[i], n);
    h2 = fnv1a(h2 ^ (uint64_t)i, parts[i], n);
  }
  snprintf(key, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

/* Entry layout: magic, the 32-character key, the binary's size and an FNV-1a
 * checksum of it (both uint64), then the binary. The checksum matters: some
 * drivers (pocl) abort on a damaged binary instead of returning an error. */
static const char cache_magic[8] = {'C', 'L', 'M', 'G', 'B', 'I', 'N', '2'};
static const uint64_t checksum_seed = 0xcbf29ce484222325ULL;

static void cache_path(const clmg_context *context, const char *family, const char *key, char *path,
                       size_t size) {
  snprintf(path, size, "%s/%s-%s.bin", context->cache_dir, family, key);
}

/* A program from the cache, or NULL when there is no usable entry. */
static cl_program load_cached(clmg_context *context, const char *family, const char *key,
                              const char *options) {
  char path[4096];
  cache_path(context, family, key, path, sizeof path);
  size_t size = 0;
  char *data = read_file(path, &size);
  if (!data)
    return NULL;
  cl_program program = NULL;
  uint64_t binary_size = 0, checksum = 0;
  size_t header = sizeof cache_magic + 32 + sizeof binary_size + sizeof checksum;
  if (size > header && memcmp(data, cache_magic, sizeof cache_magic) == 0 &&
      memcmp(data + sizeof cache_magic, key, 32) == 0) {
    memcpy(&binary_size, data + sizeof cache_magic + 32, sizeof binary_size);
    memcpy(&checksum, data + sizeof cache_magic + 32 + sizeof binary_size, sizeof checksum);
    const unsigned char *binary = (const unsigned char *)data + header;
    if (binary_size == size - header &&
        fnv1a(checksum_seed, binary, (size_t)binary_size) == checksum) {
      size_t length = (size_t)binary_size;
      cl_int binary_status = CL_SUCCESS, error = CL_SUCCESS;
      program = clCreateProgramWithBinary(context->cl, 1, &context->device, &length, &binary,
                                          &binary_status, &error);
      if (program &&
          (error != CL_SUCCESS || binary_status != CL_SUCCESS ||
           clBuildProgram(program, 1, &context->device, options, NULL, NULL) != CL_SUCCESS)) {
        clReleaseProgram(program);
        program = NULL;
      }
    }
  }
  free(data);
  return program;
}

static void make_directories(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; ++p) {
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  }
  mkdir(path, 0755);
}

/* Best effort: a cache that cannot be written only costs a rebuild later. */
/* Reading a program's binary back makes pocl compile every kernel of it,
 * and pocl 3.1 crashes (SIGSEGV) when that runs out of address space: under
 * a tight limit the cache is skipped, which costs only the time to compile
 * again next run. */
enum { STORE_ROOM_MIB = 512 };

static void store_cached(clmg_context *context, const char *family, const char *key,
                         cl_program program) {
  if (!clmg_address_space_has_room((size_t)STORE_ROOM_MIB << 20))
    return;
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  unsigned char *binary = malloc(size);
  if (!binary)
    return;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) == CL_SUCCESS) {
    make_directories(context->cache_dir);
    char path[4096];
    cache_path(context, family, key, path, sizeof path);
    /* written beside the entry and renamed: concurrent readers see the old
     * entry or the new one, never half of one */
    clmg_output_file *output;
    FILE *file;
    if (clmg_output_file_open(path, "wb", &output, &file, NULL) == CLMG_SUCCESS) {
      uint64_t binary_size = size, checksum = fnv1a(checksum_seed, binary, size);
      int ok =
          fwrite(cache_magic, sizeof cache_magic, 1, file) == 1 && fwrite(key, 32, 1, file) == 1 &&
          fwrite(&binary_size, sizeof binary_size, 1, file) == 1 &&
          fwrite(&checksum, sizeof checksum, 1, file) == 1 && fwrite(binary, size, 1, file) == 1;
      if (ok)
        clmg_output_file_commit(output, NULL);
      else
        clmg_output_file_discard(output);
    }
  }
  free(binary);
}

/* ---- building ---- */

double clmg_seconds_now(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
    return 0.0;
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Tells the context's program callback, if any, about a compilation. */
static void notify(const clmg_context *context, clmg_program_event_kind kind, const char *family,
                   const char *options, double seconds, clmg_status status) {
  if (!context->program_callback)
    return;
  clmg_program_event event;
  event.kind = kind;
  event.program = family;
  event.options = options;
  event.device = context->info.name;
  event.cache_dir = context->cache_dir;
  event.cache_off_reason = context->cache_off_reason[0] ? context->cache_off_reason : NULL;
  event.seconds = seconds;
  event.status = status;
  context->program_callback(&event, context->program_callback_data);
}

/* Drivers that ignore #line (NVIDIA's names the whole source "<kernel>")
 * report lines of the concatenation; this rewrites "<kernel>:L:" and
 * "<source>:L:" into "family.cl:l:" by the #line markers in `source`, so
 * every log points at the file's own line. NULL: no host memory. */
static char *log_with_file_lines(const char *source, const char *log) {
  enum { MAX_PIECES = 8 };
  struct {
    long first_line; /* line of the combined source where the piece starts */
    char name[64];
  } pieces[MAX_PIECES];
  int count = 0;
  long line_number = 1;
  for (const char *at = source; *at; ++at) {
    if ((at == source || at[-1] == '\n') && strncmp(at, "#line 1 \"", 9) == 0 &&
        count < MAX_PIECES) {
      const char *name = at + 9, *end = strchr(name, '"');
      if (end && end - name < (long)sizeof pieces[0].name) {
        pieces[count].first_line = line_number + 1;
        snprintf(pieces[count].name, sizeof pieces[0].name, "%.*s", (int)(end - name), name);
        ++count;
      }
    }
    if (*at == '\n')
      ++line_number;
  }
  size_t size = strlen(log) * 2 + 64;
  char *out = malloc(size);
  if (!out)
    return NULL;
  size_t used = 0;
  for (const char *at = log; *at && used + 80 < size;) {
    const char *tag = strncmp(at, "<kernel>:", 9) == 0   ? "<kernel>:"
                      : strncmp(at, "<source>:", 9) == 0 ? "<source>:"
                                                         : NULL;
    char *end = NULL;
    long line = tag ? strtol(at + 9, &end, 10) : 0;
    int piece = -1;
    for (int k = 0; tag && end && *end == ':' && k < count; ++k)
      if (pieces[k].first_line <= line)
        piece = k;
    if (piece >= 0) {
      used += (size_t)snprintf(out + used, size - used, "%s:%ld", pieces[piece].name,
                               line - pieces[piece].first_line + 1);
      at = end;
    } else {
      out[used++] = *at++;
    }
  }
  out[used] = '\0';
  return out;
}

/* The build failure with as much of the log as the message holds: its
 * start, where the first error is, and a note of what was cut. */
static void report_build_failure(clmg_context *context, const char *family, const char *options,
                                 cl_int error, const char *log) {
  clmg_fail(context, CLMG_ERROR_BUILD_FAILED,
            "building kernels cl/%s.cl with options \"%s\" for %s failed (%s); build log:\n",
            family, options, context->info.name, clmg_cl_error_name(error));
  size_t used = strlen(context->message), room = sizeof context->message - used;
  char *out = context->message + used;
  size_t log_size = log ? strlen(log) : 0;
  while (log_size > 0 && (log[log_size - 1] == '\n' || log[log_size - 1] == ' '))
    --log_size;
  if (!log)
    snprintf(out, room, "(no host memory for the log)");
  else if (log_size == 0)
    snprintf(out, room, "(the driver gave no build log)");
  else if (log_size < room)
    snprintf(out, room, "%.*s", (int)log_size, log);
  else {
    size_t shown = room - 1 - 100; /* 100: room for the note */
    char note[100];
    snprintf(note, sizeof note, "\n[build log cut: its first %zu of %zu bytes shown]", shown,
             log_size);
    snprintf(out, room, "%.*s%s", (int)shown, log, note);
  }
  clmg_message_sanitize(context->message, sizeof context->message);
}

static clmg_status build_from_source(clmg_context *context, const char *family, const char *source,
                                     const char *options, cl_program *out) {
  cl_int error;
  size_t length = strlen(source);
  cl_program program = clCreateProgramWithSource(context->cl, 1, &source, &length, &error);
  if (!program)
    return clmg_fail_cl(context, error, "clCreateProgramWithSource");
  error = clBuildProgram(program, 1, &context->device, options, NULL, NULL);
  if (error != CL_SUCCESS) {
    size_t log_size = 0;
    clGetProgramBuildInfo(program, context->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
    char *log = malloc(log_size + 1);
    if (log) {
      log[0] = '\0';
      clGetProgramBuildInfo(program, context->device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
      log[log_size] = '\0';
    }
    char *located = log ? log_with_file_lines(source, log) : NULL;
    report_build_failure(context, family, options, error, located ? located : log);
    free(located);
    free(log);
    clReleaseProgram(program);
    return CLMG_ERROR_BUILD_FAILED;
  }
  *out = program;
  return CLMG_SUCCESS;
}

static clmg_status get_program(clmg_context *context, const char *family, const char *options,
                               clmg_program_entry **out) {
  for (clmg_program_entry *entry = context->programs; entry; entry = entry->next)
    if (strcmp(entry->family, family) == 0 && strcmp(entry->options, options) == 0) {
      *out = entry;
      return CLMG_SUCCESS;
    }

  /* Refused here, not by the compiler: a driver without fp64 may accept
   * the pragma and fail later, or build with double quietly demoted. */
  if (!context->info.has_fp64 && strstr(options, "-DREAL_IS_DOUBLE")) {
    char what[128];
    snprintf(what, sizeof what, "double-precision kernels of cl/%s.cl", family);
    return clmg_fail_no_fp64(context, what);
  }
  char *source = NULL;
  size_t length = 0;
  clmg_status status = CLMG_SUCCESS;
  if (context->fp64_disabled_by) {
    /* As on a device without fp64, a kernel that uses double must not
     * build; the macro comes after the compiler's own headers. */
    static const char no_double[] = "#define double double_is_off_CLMG_DISABLE_FP64";
    status = append_text(context, no_double, sizeof no_double - 1, &source, &length);
  }
  if (status == CLMG_SUCCESS)
    status = append_family_source(context, "prelude", &source, &length);
  if (status == CLMG_SUCCESS)
    status = append_family_source(context, family, &source, &length);
  if (status != CLMG_SUCCESS) {
    free(source);
    return status;
  }

  cl_program program = NULL;
  char key[33];
  double start_all = clmg_seconds_now(); /* loading from the cache counts too */
  cache_key(context, source, options, key);
  if (context->cache_dir) {
    program = load_cached(context, family, key, options);
    if (program)
      context->programs_cached++;
  }
  if (!program) {
    notify(context, CLMG_PROGRAM_COMPILE_START, family, options, 0.0, CLMG_SUCCESS);
    double start = clmg_seconds_now();
    status = build_from_source(context, family, source, options, &program);
    notify(context, CLMG_PROGRAM_COMPILE_DONE, family, options, clmg_seconds_now() - start, status);
    if (status == CLMG_SUCCESS) {
      context->programs_built++;
      if (context->cache_dir)
        store_cached(context, family, key, program);
    }
  }
  free(source);
  context->program_seconds += clmg_seconds_now() - start_all;
  if (status != CLMG_SUCCESS)
    return status;

  clmg_program_entry *entry = calloc(1, sizeof *entry);
  if (entry) {
    entry->family = duplicate_string(family);
    entry->options = duplicate_string(options);
  }
  if (!entry || !entry->family || !entry->options) {
    if (entry) {
      free(entry->family);
      free(entry->options);
      free(entry);
    }
    clReleaseProgram(program);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "program table");
  }
  entry->program = program;
  entry->next = context->programs;
  context->programs = entry;
  *out = entry;
  return CLMG_SUCCESS;
}

clmg_status clmg_get_kernel(clmg_context *context, const char *family, const char *options,
                            const char *name, cl_kernel *kernel) {
  clmg_program_entry *entry = NULL;
  clmg_status status = get_program(context, family, options, &entry);
  if (status != CLMG_SUCCESS)
    return status;
  for (kernel_entry *k = entry->kernels; k; k = k->next)
    if (strcmp(k->name, name) == 0) {
      *kernel = k->kernel;
      return CLMG_SUCCESS;
    }
  cl_int error;
  cl_kernel created = clCreateKernel(entry->program, name, &error);
  if (!created) {
    char what[256];
    snprintf(what, sizeof what, "creating kernel %s from cl/%s.cl", name, family);
    return clmg_fail_cl(context, error, what);
  }
  kernel_entry *k = calloc(1, sizeof *k);
  if (k)
    k->name = duplicate_string(name);
  if (!k || !k->name) {
    free(k);
    clReleaseKernel(created);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "kernel table");
  }
  k->kernel = created;
  k->next = entry->kernels;
  entry->kernels = k;
  *kernel = created;
  return CLMG_SUCCESS;
}

const char *clmg_real_options(const clmg_context *context, clmg_dtype type) {
  return context->real_options[type == CLMG_FLOAT ? 1 : 0];
}
