#define _POSIX_C_SOURCE 200809L /* dup, fdopen under -std=c11 */
#include "perf_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int perf_parse_positive_number(const char *text, double *value) {
  char *end = NULL;
  errno = 0;
  double parsed = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(parsed > 0) || !isfinite(parsed)) {
    return 0;
  }
  *value = parsed;
  return 1;
}

int perf_parse_integer(const char *program, const char *option, const char *text, long long min,
                       long long max, long long *value) {
  char *end = NULL;
  errno = 0;
  long long parsed = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || parsed < min || parsed > max) {
    fprintf(stderr, "%s: %s wants an integer from %lld to %lld, not '%s'\n", program, option, min,
            max, text);
    return 0;
  }
  *value = parsed;
  return 1;
}

int perf_parse_number(const char *program, const char *option, const char *text, double min,
                      double max, double *value) {
  char *end = NULL;
  errno = 0;
  double parsed = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(parsed >= min && parsed <= max)) {
    fprintf(stderr, "%s: %s wants a number from %g to %g, not '%s'\n", program, option, min, max,
            text);
    return 0;
  }
  *value = parsed;
  return 1;
}

static int is_listed(const char *name, const char *const *list) {
  for (size_t i = 0; list[i] != NULL; ++i) {
    if (strcmp(name, list[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

int perf_next_option(const char *program, int argc, char **argv, int *index,
                     const char *const *value_options, char name[32], const char **value) {
  const char *option = argv[*index];
  if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
    return -1;
  }
  *value = NULL;
  const char *equals = strchr(option, '=');
  if (equals != NULL) {
    size_t length = (size_t)(equals - option);
    if (length >= 32) {
      fprintf(stderr, "%s: unknown option %s\n", program, option);
      return 0;
    }
    memcpy(name, option, length);
    name[length] = '\0';
    *value = equals + 1;
  } else {
    snprintf(name, 32, "%s", option);
  }
  if (strcmp(name, "--json") == 0 && is_listed("--output", value_options)) {
    /* --json alone prints the JSON; the old --json FILE named the file */
    const char *file =
        equals != NULL ? *value
        : *index + 1 < argc && (argv[*index + 1][0] != '-' || strcmp(argv[*index + 1], "-") == 0)
            ? argv[++*index]
            : NULL;
    *value = NULL;
    if (file != NULL && file[0] == '\0') {
      fprintf(stderr, "%s: %s needs a file name\n", program, option);
      return 0;
    }
    if (file != NULL) {
      apputil_old_spelling(program, "--json FILE", "--output FILE (and --json alone prints it)");
      if (strcmp(file, "-") != 0) {
        snprintf(name, 32, "--output");
        *value = file;
      }
    }
    return 1;
  }
  if (!is_listed(name, value_options)) {
    fprintf(stderr, "%s: unknown option %s (try --help)\n", program, option);
    return 0;
  }
  if (equals == NULL) {
    if (*index + 1 >= argc) {
      fprintf(stderr, "%s: %s needs a value\n", program, option);
      return 0;
    }
    *value = argv[++*index];
  }
  if (strcmp(name, "--output") == 0 && (*value)[0] == '\0') {
    fprintf(stderr, "%s: %s needs a file name\n", program, option);
    return 0;
  }
  return 1;
}

int perf_parse_precision(const char *program, const char *value, int *run_double, int *run_float) {
  *run_double = strcmp(value, "double") == 0 || strcmp(value, "both") == 0;
  *run_float = strcmp(value, "float") == 0 || strcmp(value, "both") == 0;
  if (!*run_double && !*run_float) {
    fprintf(stderr, "%s: --precision wants double, float or both, not %s\n", program, value);
    return 0;
  }
  return 1;
}

int perf_parse_timing_option(const char *program, const char *name, const char *value,
                             perf_timing *timing) {
  double number = 0;
  if (strcmp(name, "--reps") == 0) {
    if (!perf_parse_positive_number(value, &number) || number != floor(number) || number > 1e9) {
      fprintf(stderr, "%s: --reps wants a positive integer, not %s\n", program, value);
      return 0;
    }
    timing->fixed_reps = (long)number;
  } else if (strcmp(name, "--trials") == 0) {
    if (!perf_parse_positive_number(value, &number) || number != floor(number) || number > 100) {
      fprintf(stderr, "%s: --trials wants an integer from 1 to 100, not %s\n", program, value);
      return 0;
    }
    timing->trials = (long)number;
  } else if (strcmp(name, "--min-time") == 0) {
    if (!perf_parse_positive_number(value, &number) || number > 60) {
      fprintf(stderr, "%s: --min-time wants seconds in (0, 60], not %s\n", program, value);
      return 0;
    }
    timing->min_time_s = number;
  } else {
    return -1;
  }
  return 1;
}

size_t perf_precision_list(int run_double, int run_float, clmg_dtype precisions[2]) {
  size_t count = 0;
  if (run_double) {
    precisions[count++] = CLMG_DOUBLE;
  }
  if (run_float) {
    precisions[count++] = CLMG_FLOAT;
  }
  return count;
}

int perf_grow_array(void **array, size_t *capacity, size_t count, size_t element_size) {
  if (count < *capacity) {
    return 1;
  }
  size_t new_capacity = *capacity ? 2 * *capacity : 64;
  void *grown = realloc(*array, new_capacity * element_size);
  if (grown == NULL) {
    return 0;
  }
  *array = grown;
  *capacity = new_capacity;
  return 1;
}

/* Runs `reps` repetitions and a clmg_finish; *seconds is the wall time. */
static clmg_status time_batch(clmg_context *context, perf_run_once run_once, const void *operands,
                              long reps, double *seconds) {
  clmg_status status = CLMG_SUCCESS;
  double start = apputil_now();
  for (long i = 0; i < reps && status == CLMG_SUCCESS; ++i) {
    status = run_once(operands, i);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_finish(context);
  }
  *seconds = apputil_now() - start;
  return status;
}

clmg_status perf_time_adaptive(clmg_context *context, const perf_timing *timing,
                               perf_run_once run_once, const void *operands, long *reps_used,
                               double *seconds_per_call) {
  double elapsed = 0;
  clmg_status status = time_batch(context, run_once, operands, 3, &elapsed);
  if (status != CLMG_SUCCESS) {
    return status;
  }

  long reps = timing->fixed_reps > 0 ? timing->fixed_reps : 1;
  for (;;) {
    status = time_batch(context, run_once, operands, reps, &elapsed);
    if (status != CLMG_SUCCESS) {
      return status;
    }
    if (timing->fixed_reps > 0 || elapsed >= timing->min_time_s ||
        reps >= timing->max_adaptive_reps) {
      break;
    }
    /* Aim 20% past the target so the next batch usually is the last. */
    double wanted =
        elapsed > 0 ? 1.2 * timing->min_time_s / elapsed * (double)reps : 10.0 * (double)reps;
    double next = fmax(wanted, 2.0 * (double)reps);
    reps = next >= (double)timing->max_adaptive_reps ? timing->max_adaptive_reps : (long)next;
  }

  double best = elapsed;
  for (long trial = 1; trial < timing->trials; ++trial) {
    status = time_batch(context, run_once, operands, reps, &elapsed);
    if (status != CLMG_SUCCESS) {
      return status;
    }
    best = fmin(best, elapsed);
  }
  *reps_used = reps;
  *seconds_per_call = best / (double)reps;
  return CLMG_SUCCESS;
}

clmg_status perf_run_spmv(const void *operands, long iteration) {
  (void)iteration;
  const perf_spmv_operands *o = operands;
  return clmg_spmv(1.0, o->a, o->x, 0.0, o->y);
}

clmg_status perf_run_sweep(const void *operands, long iteration) {
  (void)iteration;
  const perf_sweep_operands *o = operands;
  return o->smoother->apply(o->smoother->data, o->op, o->b, o->x, 1, 0);
}

clmg_status perf_run_cycle(const void *operands, long iteration) {
  (void)iteration;
  const perf_cycle_operands *o = operands;
  return clmg_multigrid_cycle(o->mg, o->b, o->x);
}

void perf_print_device(const clmg_device_info *device) {
  printf("device: %s / %s (%s, %u compute units, %.1f GiB, max alloc %.1f GiB, fp64 %s)\n",
         device->platform_name, device->name,
         device->is_gpu   ? "GPU"
         : device->is_cpu ? "CPU"
                          : "other",
         device->compute_units, (double)device->global_mem_bytes / (1024.0 * 1024 * 1024),
         (double)device->max_alloc_bytes / (1024.0 * 1024 * 1024), device->has_fp64 ? "yes" : "no");
}

double perf_cg_iteration_bytes(const clmg_matrix *a, double preconditioner_bytes, int mixed) {
  double n = (double)clmg_matrix_rows(a);
  double real = (double)clmg_dtype_size(clmg_matrix_precision(a));
  return preconditioner_bytes + (double)clmg_matrix_device_bytes(a) + 15.0 * real * n +
         (mixed ? 24.0 * n : 0.0);
}

double perf_jacobi_bytes(size_t n, int mixed) {
  return 3.0 * (double)n * (double)(mixed ? sizeof(float) : sizeof(double));
}

clmg_status perf_options_parse(const char *text, clmg_options **options, clmg_error *error) {
  clmg_status status = clmg_options_create(options, error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_parse(*options, text, error);
  if (status != CLMG_SUCCESS) {
    clmg_options_destroy(*options);
    *options = NULL;
  }
  return status;
}

int perf_measure_copy_bandwidth(clmg_context *context, double *gb_per_s) {
  clmg_status status = clmg_measure_copy_bandwidth(context, 0, gb_per_s);
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "measuring copy bandwidth");
    *gb_per_s = NAN;
    return 0;
  }
  printf("copy bandwidth (clmg_measure_copy_bandwidth): %.2f GB/s\n", *gb_per_s);
  return 1;
}

/* The real stdout once --json has sent stdout to /dev/null; NULL before. */
static FILE *json_stdout;

void perf_output_help(FILE *out, int column) {
  static const char *const lines[][2] = {
      {"--output FILE", "write the results as JSON to FILE (an existing"},
      {"", "FILE is replaced only once the new one is complete)"},
      {"--json", "print the results as JSON on stdout instead of the"},
      {"", "table (the old spelling --json FILE writes FILE,"},
      {"", "with a note, until 0.3.0)"}};
  for (size_t k = 0; k < sizeof lines / sizeof lines[0]; ++k)
    fprintf(out, "  %-*s%s\n", column - 2, lines[k][0], lines[k][1]);
}

int perf_parse_output_option(const char *name, const char *value, perf_output *output) {
  if (strcmp(name, "--output") == 0) {
    output->path = value;
    return 1;
  }
  if (strcmp(name, "--json") == 0) {
    output->to_stdout = 1;
    return 1;
  }
  return -1;
}

int perf_output_begin(const char *program, const perf_output *output) {
  if (!output->to_stdout || json_stdout != NULL)
    return 1;
  fflush(stdout);
  int fd = dup(STDOUT_FILENO);
  FILE *real = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (real == NULL || freopen("/dev/null", "w", stdout) == NULL) {
    fprintf(stderr, "%s: --json: cannot set stdout aside: %s\n", program, strerror(errno));
    if (real != NULL)
      fclose(real);
    else if (fd >= 0)
      close(fd);
    return 0;
  }
  json_stdout = real;
  return 1;
}

size_t perf_output_paths(const perf_output *output, const char *paths[2]) {
  size_t count = 0;
  if (output->path != NULL)
    paths[count++] = output->path;
  if (output->to_stdout)
    paths[count++] = "-";
  return count;
}

FILE *perf_json_open(const char *program, const char *path, clmg_output_file **file) {
  clmg_error error;
  FILE *out = NULL;
  if (strcmp(path, "-") == 0) {
    *file = NULL;
    return json_stdout != NULL ? json_stdout : stdout;
  }
  if (clmg_output_file_open(path, "w", file, &out, &error) != CLMG_SUCCESS) {
    fprintf(stderr, "%s: %s\n", program, error.message);
  }
  return out;
}

int perf_json_close(const char *program, clmg_output_file *file) {
  clmg_error error;
  if (file == NULL) {
    FILE *out = json_stdout != NULL ? json_stdout : stdout;
    if (fflush(out) != 0 || ferror(out)) {
      fprintf(stderr, "%s: cannot write the JSON to stdout: %s\n", program, strerror(errno));
      return 0;
    }
    return 1;
  }
  if (clmg_output_file_commit(file, &error) != CLMG_SUCCESS) {
    fprintf(stderr, "%s: %s\n", program, error.message);
    return 0;
  }
  return 1;
}
