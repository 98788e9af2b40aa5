/* clmg_perf_blas1: BLAS-1 bandwidth benchmark.
 *
 * For each backend (native kernels, CLBlast), precision and vector length n,
 * times copy, dot, nrm2, axpy, waxpby and the fused axpy_nrm2, cg_update and
 * dot2 by wall clock, and reports the bandwidth each achieves under the
 * minimal-traffic model, as GB/s and as a ratio to the device's copy bandwidth
 * measured in the same run. Prints a table to stdout; --output FILE writes
 * the same results as a JSON document, --json prints it instead of the table.
 *
 *   clmg_perf_blas1 [--device DEV] [--output FILE] [--json] [--min-n N] [--max-n N]
 *                   [--precision double|float|both] [--backend native|clblast|auto|both]
 *                   [--reps R] [--min-time S] [--trials T]
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "clmg.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_blas1"

/* ---- settings ---- */

typedef struct benchmark_settings {
  const char *device;
  perf_output output;
  double min_n;
  double max_n;
  int max_n_given;
  int run_double;
  int run_float;
  clmg_blas1_backend backends[3];
  size_t backend_count;
  perf_timing timing;
} benchmark_settings;

static void print_usage(FILE *out) {
  fputs("usage: clmg_perf_blas1 [options]\n"
        "  --device DEV        device string (nvidia, pocl, gpu, cpu, P:D, name); default:\n"
        "                      $CLMG_DEVICE, else the first GPU, else the first CPU\n",
        out);
  perf_output_help(out, 22);
  fputs("  --min-n N           smallest vector length (default 1e3)\n"
        "  --max-n N           largest vector length (default 1e8; 1e7 on a CPU device)\n"
        "                      lengths run in decades from --min-n to --max-n\n"
        "  --precision P       double, float or both (default both)\n"
        "  --backend B         native, clblast, auto or both (default both)\n"
        "  --reps R            exactly R timed repetitions (default: adaptive, so each\n"
        "                      measurement lasts at least --min-time)\n"
        "  --min-time S        seconds per adaptive measurement (default 0.2)\n"
        "  --trials T          timed batches per measurement, the fastest counts (default 2)\n"
        "  --help              this text\n",
        out);
}

static const char *backend_name(clmg_blas1_backend backend) {
  switch (backend) {
  case CLMG_BLAS1_NATIVE:
    return "native";
  case CLMG_BLAS1_CLBLAST:
    return "clblast";
  case CLMG_BLAS1_AUTO:
    return "auto";
  }
  return "?";
}

/* Returns 0 and prints why when the command line is not valid; 1 to run; 2
 * when --help was asked for. */
static int parse_arguments(int argc, char **argv, benchmark_settings *settings) {
  memset(settings, 0, sizeof *settings);
  settings->min_n = 1e3;
  settings->max_n = 1e8;
  settings->run_double = 1;
  settings->run_float = 1;
  settings->backends[0] = CLMG_BLAS1_NATIVE;
  settings->backends[1] = CLMG_BLAS1_CLBLAST;
  settings->backend_count = 2;
  settings->timing.min_time_s = 0.2;
  settings->timing.trials = 2;
  settings->timing.max_adaptive_reps = 1000000;
  static const char *const value_options[] = {"--device",    "--output",  "--min-n", "--max-n",
                                              "--precision", "--backend", "--reps",  "--min-time",
                                              "--trials",    NULL};

  for (int i = 1; i < argc; ++i) {
    char name[32];
    const char *value = NULL;
    int read = perf_next_option(PROGRAM, argc, argv, &i, value_options, name, &value);
    if (read < 0) {
      print_usage(stdout);
      return 2;
    }
    if (read == 0) {
      return 0;
    }

    double number = 0;
    if (strcmp(name, "--device") == 0) {
      settings->device = value;
    } else if (perf_parse_output_option(name, value, &settings->output) == 1) {
    } else if (strcmp(name, "--min-n") == 0 || strcmp(name, "--max-n") == 0) {
      if (!perf_parse_positive_number(value, &number) || number < 1 || number > 1e12) {
        fprintf(stderr, PROGRAM ": %s wants a length between 1 and 1e12, not %s\n", name, value);
        return 0;
      }
      if (strcmp(name, "--min-n") == 0) {
        settings->min_n = number;
      } else {
        settings->max_n = number;
        settings->max_n_given = 1;
      }
    } else if (strcmp(name, "--precision") == 0) {
      if (!perf_parse_precision(PROGRAM, value, &settings->run_double, &settings->run_float)) {
        return 0;
      }
    } else if (strcmp(name, "--backend") == 0) {
      settings->backend_count = 1;
      if (strcmp(value, "native") == 0) {
        settings->backends[0] = CLMG_BLAS1_NATIVE;
      } else if (strcmp(value, "clblast") == 0) {
        settings->backends[0] = CLMG_BLAS1_CLBLAST;
      } else if (strcmp(value, "auto") == 0) {
        settings->backends[0] = CLMG_BLAS1_AUTO;
      } else if (strcmp(value, "both") == 0) {
        settings->backends[0] = CLMG_BLAS1_NATIVE;
        settings->backends[1] = CLMG_BLAS1_CLBLAST;
        settings->backend_count = 2;
      } else {
        fprintf(stderr, PROGRAM ": --backend wants native, clblast, auto or both, not %s\n", value);
        return 0;
      }
    } else if (perf_parse_timing_option(PROGRAM, name, value, &settings->timing) == 0) {
      return 0;
    }
  }
  return 1;
}

/* ---- operations and their traffic model ---- */

typedef enum blas1_op {
  OP_COPY = 0,
  OP_DOT,
  OP_NRM2,
  OP_AXPY,
  OP_WAXPBY,
  OP_AXPY_NRM2,
  OP_CG_UPDATE,
  OP_DOT2,
  OP_COUNT
} blas1_op;

static const char *const op_names[OP_COUNT] = {"copy",   "dot",       "nrm2",      "axpy",
                                               "waxpby", "axpy_nrm2", "cg_update", "dot2"};

/* Elements read plus elements written per vector entry, the fewest any
 * implementation must move: copy reads x and writes y; cg_update reads p, q,
 * x, r and writes x, r. */
static const unsigned op_vector_passes[OP_COUNT] = {2, 2, 1, 3, 3, 3, 6, 2};

/* The vectors an operation works on. cg_update uses all four. */
typedef struct operand_set {
  clmg_vector *a;
  clmg_vector *b;
  clmg_vector *c;
  clmg_vector *d;
} operand_set;

/* Runs `op` once. The sign of the update coefficient alternates with
 * `iteration`, so repeated axpy-like updates keep the data bounded. */
static clmg_status run_op(blas1_op op, const operand_set *v, long iteration) {
  const double alpha = (iteration % 2 == 0) ? 1e-3 : -1e-3;
  double first = 0, second = 0;
  switch (op) {
  case OP_COPY:
    return clmg_copy(v->a, v->c);
  case OP_DOT:
    return clmg_dot(v->a, v->b, &first);
  case OP_NRM2:
    return clmg_nrm2(v->a, &first);
  case OP_AXPY:
    return clmg_axpy(alpha, v->a, v->c);
  case OP_WAXPBY:
    return clmg_waxpby(1.0, v->a, -1.0, v->b, v->c);
  case OP_AXPY_NRM2:
    return clmg_axpy_nrm2(alpha, v->a, v->c, &first);
  case OP_CG_UPDATE:
    /* p = a, q = b, x = c, r = d */
    return clmg_cg_update(alpha, v->a, v->b, v->c, v->d, &first);
  case OP_DOT2:
    return clmg_dot2(v->a, v->b, &first, &second);
  case OP_COUNT:
    break;
  }
  return CLMG_ERROR_INVALID_ARGUMENT;
}

/* ---- results ---- */

typedef struct result_row {
  blas1_op op;
  clmg_blas1_backend backend;
  clmg_dtype precision;
  size_t n;
  long reps;
  double seconds_per_call;
  double bytes;
  double gb_per_s;
  double ratio_to_copy;
} result_row;

typedef struct skipped_case {
  clmg_blas1_backend backend;
  clmg_dtype precision;
  size_t n;
  char reason[200];
} skipped_case;

typedef struct benchmark_results {
  clmg_device_info device;
  double copy_gb_per_s;
  result_row *rows;
  size_t row_count;
  size_t row_capacity;
  skipped_case *skipped;
  size_t skipped_count;
  size_t skipped_capacity;
  int failures; /* operations that returned an error or a wrong value */
} benchmark_results;

static int add_row(benchmark_results *results, const result_row *row) {
  if (!perf_grow_array((void **)&results->rows, &results->row_capacity, results->row_count,
                       sizeof *results->rows)) {
    return 0;
  }
  results->rows[results->row_count++] = *row;
  return 1;
}

static void add_skipped(benchmark_results *results, clmg_blas1_backend backend,
                        clmg_dtype precision, size_t n, const char *reason) {
  printf("  skipped: %s %s n=%zu: %s\n", backend_name(backend), clmg_dtype_name(precision), n,
         reason);
  fflush(stdout);
  if (!perf_grow_array((void **)&results->skipped, &results->skipped_capacity,
                       results->skipped_count, sizeof *results->skipped)) {
    return;
  }
  skipped_case *entry = &results->skipped[results->skipped_count++];
  entry->backend = backend;
  entry->precision = precision;
  entry->n = n;
  snprintf(entry->reason, sizeof entry->reason, "%s", reason);
}

static void print_table_header(void) {
  printf("%-10s %-8s %-6s %11s %8s %12s %14s %9s %7s\n", "op", "backend", "prec", "n", "reps",
         "us/call", "bytes", "GB/s", "ratio");
  fflush(stdout);
}

static void print_row(const result_row *row) {
  printf("%-10s %-8s %-6s %11zu %8ld %12.3f %14.0f %9.2f %7.3f\n", op_names[row->op],
         backend_name(row->backend), clmg_dtype_name(row->precision), row->n, row->reps,
         row->seconds_per_call * 1e6, row->bytes, row->gb_per_s, row->ratio_to_copy);
  fflush(stdout);
}

/* ---- measuring ---- */

/* One call of an operation, for perf_time_adaptive. */
typedef struct timed_op {
  blas1_op op;
  const operand_set *operands;
} timed_op;

static clmg_status run_timed_op(const void *data, long iteration) {
  const timed_op *timed = data;
  return run_op(timed->op, timed->operands, iteration);
}

static int close_enough(double value, double expected, clmg_dtype precision) {
  double tolerance = precision == CLMG_FLOAT ? 1e-3 : 1e-10;
  return fabs(value - expected) <= tolerance * fabs(expected);
}

/* A cheap sanity check before timing: with a = 1 and b = 0.5 everywhere,
 * dot = n/2, nrm2 = sqrt(n), dot2 = (n/2, n). Guards against timing a kernel
 * that does nothing. Returns 1 if all agree. */
static int check_reductions(clmg_context *context, const operand_set *v, size_t n,
                            clmg_dtype precision) {
  double dot = 0, norm = 0, xy = 0, xx = 0;
  clmg_status status = clmg_vector_fill(v->a, 1.0);
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_fill(v->b, 0.5);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_dot(v->a, v->b, &dot);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_nrm2(v->a, &norm);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_dot2(v->a, v->b, &xy, &xx);
  }
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "sanity check");
    return 0;
  }
  double half = 0.5 * (double)n;
  if (!close_enough(dot, half, precision) || !close_enough(norm, sqrt((double)n), precision) ||
      !close_enough(xy, half, precision) || !close_enough(xx, (double)n, precision)) {
    fprintf(stderr,
            PROGRAM ": sanity check failed (%s, n=%zu): dot=%.17g (want %.17g), "
                    "nrm2=%.17g (want %.17g), dot2=(%.17g, %.17g) (want (%.17g, %.17g))\n",
            clmg_dtype_name(precision), n, dot, half, norm, sqrt((double)n), xy, xx, half,
            (double)n);
    return 0;
  }
  return 1;
}

static void destroy_operands(operand_set *v) {
  clmg_vector_destroy(v->a);
  clmg_vector_destroy(v->b);
  clmg_vector_destroy(v->c);
  clmg_vector_destroy(v->d);
  memset(v, 0, sizeof *v);
}

/* Fits four vectors of n elements on the device? Writes the reason if not. */
static int fits_on_device(const clmg_device_info *device, size_t n, size_t element_size,
                          char *reason, size_t reason_size) {
  double vector_bytes = (double)n * (double)element_size;
  if (vector_bytes > (double)device->max_alloc_bytes) {
    snprintf(reason, reason_size, "one vector (%.0f bytes) exceeds the max allocation (%llu bytes)",
             vector_bytes, (unsigned long long)device->max_alloc_bytes);
    return 0;
  }
  /* Keep a margin for the runtime, reduction scratch and CLBlast. */
  if (4.0 * vector_bytes > 0.8 * (double)device->global_mem_bytes) {
    snprintf(reason, reason_size,
             "four vectors (%.0f bytes) exceed 80%% of device memory (%llu bytes)",
             4.0 * vector_bytes, (unsigned long long)device->global_mem_bytes);
    return 0;
  }
  return 1;
}

static void run_one_size(clmg_context *context, const benchmark_settings *settings,
                         clmg_blas1_backend backend, clmg_dtype precision, size_t n,
                         benchmark_results *results) {
  size_t element_size = clmg_dtype_size(precision);
  char reason[200];
  if (!fits_on_device(clmg_context_device(context), n, element_size, reason, sizeof reason)) {
    add_skipped(results, backend, precision, n, reason);
    return;
  }

  operand_set operands = {NULL, NULL, NULL, NULL};
  clmg_vector **slots[4] = {&operands.a, &operands.b, &operands.c, &operands.d};
  for (int i = 0; i < 4; ++i) {
    clmg_status status = clmg_vector_create(context, precision, n, slots[i]);
    if (status != CLMG_SUCCESS) {
      snprintf(reason, sizeof reason, "vector allocation: %s: %s", clmg_status_string(status),
               clmg_context_message(context));
      add_skipped(results, backend, precision, n, reason);
      if (status != CLMG_ERROR_OUT_OF_DEVICE_MEMORY && status != CLMG_ERROR_UNSUPPORTED) {
        results->failures++;
      }
      destroy_operands(&operands);
      return;
    }
  }

  if (!check_reductions(context, &operands, n, precision)) {
    results->failures++;
  }
  if (clmg_vector_fill(operands.c, 0.25) != CLMG_SUCCESS ||
      clmg_vector_fill(operands.d, 2.0) != CLMG_SUCCESS) {
    apputil_report(context, CLMG_ERROR_OPENCL, "vector fill");
    results->failures++;
  }

  for (int op = 0; op < OP_COUNT; ++op) {
    long reps = 0;
    double seconds_per_call = 0;
    timed_op timed = {(blas1_op)op, &operands};
    clmg_status status = perf_time_adaptive(context, &settings->timing, run_timed_op, &timed, &reps,
                                            &seconds_per_call);
    if (status != CLMG_SUCCESS) {
      char what[96];
      snprintf(what, sizeof what, "%s (%s, %s, n=%zu)", op_names[op], backend_name(backend),
               clmg_dtype_name(precision), n);
      apputil_report(context, status, what);
      results->failures++;
      continue;
    }
    result_row row;
    row.op = (blas1_op)op;
    row.backend = backend;
    row.precision = precision;
    row.n = n;
    row.reps = reps;
    row.seconds_per_call = seconds_per_call;
    row.bytes = (double)op_vector_passes[op] * (double)n * (double)element_size;
    row.gb_per_s = row.bytes / seconds_per_call / 1e9;
    row.ratio_to_copy = results->copy_gb_per_s > 0 ? row.gb_per_s / results->copy_gb_per_s : NAN;
    print_row(&row);
    if (!add_row(results, &row)) {
      fprintf(stderr, PROGRAM ": out of host memory for results\n");
      results->failures++;
    }
  }
  destroy_operands(&operands);
}

/* The vector lengths: decades from min_n up to max_n. */
static size_t list_lengths(const benchmark_settings *settings, size_t *lengths, size_t capacity) {
  size_t count = 0;
  for (double n = settings->min_n; n <= settings->max_n * (1 + 1e-9) && count < capacity; n *= 10) {
    lengths[count++] = (size_t)llround(n);
  }
  return count;
}

static void print_run_header(const benchmark_settings *settings, const clmg_device_info *device) {
  printf(PROGRAM " (clmg %s)\n", clmg_version_string());
  perf_print_device(device);
  printf("lengths: %g to %g in decades; ", settings->min_n, settings->max_n);
  if (settings->timing.fixed_reps > 0) {
    printf("%ld repetitions per batch", settings->timing.fixed_reps);
  } else {
    printf("adaptive repetitions (each batch >= %.2f s)", settings->timing.min_time_s);
  }
  printf(", fastest of %ld batch%s\n", settings->timing.trials,
         settings->timing.trials == 1 ? "" : "es");
}

/* Runs every precision and length on one backend. The first backend's run
 * (`first`) also settles the default largest length from the device and
 * measures the copy bandwidth. Returns 0 if its context could not be created. */
static int run_backend(benchmark_settings *settings, clmg_blas1_backend backend, int first,
                       benchmark_results *results) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = settings->device;
  options.blas1_backend = backend;
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&options, &context);
  if (status == CLMG_SUCCESS) {
    status = clmg_context_set_program_callback(context, apputil_announce_compiling, NULL);
  }
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "creating a context");
    clmg_context_destroy(context);
    return 0;
  }
  const clmg_device_info *device = clmg_context_device(context);

  if (first) {
    results->device = *device;
    if (!settings->max_n_given && device->is_cpu) {
      settings->max_n = 1e7; /* keeps the default run short on a small CPU */
    }
    print_run_header(settings, device);
    if (!perf_measure_copy_bandwidth(context, &results->copy_gb_per_s)) {
      results->failures++;
    }
    printf("\n");
    print_table_header();
  }

  size_t lengths[32];
  size_t length_count = list_lengths(settings, lengths, 32);
  clmg_dtype precisions[2];
  size_t precision_count =
      perf_precision_list(settings->run_double, settings->run_float, precisions);
  for (size_t p = 0; p < precision_count; ++p) {
    if (precisions[p] == CLMG_DOUBLE && !device->has_fp64) {
      add_skipped(results, backend, CLMG_DOUBLE, 0, "the device has no double precision");
      continue;
    }
    for (size_t i = 0; i < length_count; ++i) {
      run_one_size(context, settings, backend, precisions[p], lengths[i], results);
    }
  }
  clmg_context_destroy(context);
  return 1;
}

/* ---- native vs CLBlast decision ---- */

typedef struct decision_entry {
  blas1_op op;
  clmg_dtype precision;
  size_t n;
  double native_seconds;
  double clblast_seconds;
} decision_entry;

static const result_row *find_row(const benchmark_results *results, blas1_op op,
                                  clmg_blas1_backend backend, clmg_dtype precision, size_t n) {
  for (size_t i = 0; i < results->row_count; ++i) {
    const result_row *row = &results->rows[i];
    if (row->op == op && row->backend == backend && row->precision == precision && row->n == n) {
      return row;
    }
  }
  return NULL;
}

/* The lengths the decision looks at: n >= 1e7, or the largest length measured
 * when none reached 1e7. */
static size_t decision_threshold(const benchmark_results *results) {
  size_t largest = 0;
  for (size_t i = 0; i < results->row_count; ++i) {
    if (results->rows[i].n > largest) {
      largest = results->rows[i].n;
    }
  }
  return largest >= 10000000 ? 10000000 : largest;
}

/* Collects (op, precision, n) cases measured on both native and CLBlast with
 * n at or above the threshold. *entries is malloc'ed. */
static size_t collect_decisions(const benchmark_results *results, decision_entry **entries) {
  *entries = NULL;
  size_t threshold = decision_threshold(results);
  size_t count = 0;
  decision_entry *list = malloc((results->row_count + 1) * sizeof *list);
  if (list == NULL) {
    return 0;
  }
  const clmg_dtype precisions[2] = {CLMG_DOUBLE, CLMG_FLOAT};
  for (int op = 0; op < OP_COUNT; ++op) {
    for (int p = 0; p < 2; ++p) {
      for (size_t i = 0; i < results->row_count; ++i) {
        const result_row *native = &results->rows[i];
        if (native->op != (blas1_op)op || native->precision != precisions[p] ||
            native->backend != CLMG_BLAS1_NATIVE || native->n < threshold) {
          continue;
        }
        const result_row *clblast =
            find_row(results, native->op, CLMG_BLAS1_CLBLAST, native->precision, native->n);
        if (clblast == NULL) {
          continue;
        }
        decision_entry *entry = &list[count++];
        entry->op = native->op;
        entry->precision = native->precision;
        entry->n = native->n;
        entry->native_seconds = native->seconds_per_call;
        entry->clblast_seconds = clblast->seconds_per_call;
      }
    }
  }
  *entries = list;
  return count;
}

static void print_decision(const benchmark_results *results, const decision_entry *entries,
                           size_t count) {
  if (count == 0) {
    return;
  }
  size_t threshold = decision_threshold(results);
  printf("\ndecision: native vs clblast at n >= %zu (speedup = clblast time / native time; "
         "> 1: native is faster)\n",
         threshold);
  printf("%-10s %-6s %11s %12s %12s %8s  %s\n", "op", "prec", "n", "native us", "clblast us",
         "speedup", "faster");
  for (size_t i = 0; i < count; ++i) {
    const decision_entry *entry = &entries[i];
    double speedup = entry->clblast_seconds / entry->native_seconds;
    const char *verdict = speedup > 1.05 ? "native" : speedup < 1 / 1.05 ? "clblast" : "tie";
    printf("%-10s %-6s %11zu %12.3f %12.3f %8.3f  %s\n", op_names[entry->op],
           clmg_dtype_name(entry->precision), entry->n, entry->native_seconds * 1e6,
           entry->clblast_seconds * 1e6, speedup, verdict);
  }
  printf("(CLBlast has no fused waxpby/axpy_nrm2/cg_update/dot2; where the library falls back\n"
         " to native kernels for those, the two columns time the same code.)\n");
}

/* ---- JSON ---- */

static int write_json(const char *path, const benchmark_settings *settings,
                      const benchmark_results *results, const decision_entry *decisions,
                      size_t decision_count) {
  clmg_output_file *file;
  FILE *out = perf_json_open(PROGRAM, path, &file);
  if (out == NULL) {
    return 0;
  }
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "blas1");
  json_string(&w, "clmg_version", clmg_version_string());

  json_device(&w, &results->device);

  json_number(&w, "copy_gb_per_s", results->copy_gb_per_s);

  json_object_begin(&w, "settings");
  json_number(&w, "min_n", settings->min_n);
  json_number(&w, "max_n", settings->max_n);
  json_bool(&w, "double", settings->run_double);
  json_bool(&w, "float", settings->run_float);
  json_array_begin(&w, "backends");
  for (size_t i = 0; i < settings->backend_count; ++i) {
    json_string(&w, NULL, backend_name(settings->backends[i]));
  }
  json_array_end(&w);
  json_integer(&w, "fixed_reps", settings->timing.fixed_reps);
  json_number(&w, "min_time_s", settings->timing.min_time_s);
  json_integer(&w, "trials", settings->timing.trials);
  json_string(&w, "timing",
              "wall clock over reps calls ended by clmg_finish; fastest of trials batches");
  json_string(&w, "bytes_model", "minimal traffic: elements read + written, times element size");
  json_object_end(&w);

  json_array_begin(&w, "rows");
  for (size_t i = 0; i < results->row_count; ++i) {
    const result_row *row = &results->rows[i];
    json_object_begin(&w, NULL);
    json_string(&w, "op", op_names[row->op]);
    json_string(&w, "backend", backend_name(row->backend));
    json_string(&w, "precision", clmg_dtype_name(row->precision));
    json_integer(&w, "n", (long long)row->n);
    json_integer(&w, "reps", row->reps);
    json_number(&w, "time_us", row->seconds_per_call * 1e6);
    json_number(&w, "bytes", row->bytes);
    json_number(&w, "gb_per_s", row->gb_per_s);
    json_number(&w, "ratio_to_copy", row->ratio_to_copy);
    json_object_end(&w);
  }
  json_array_end(&w);

  json_array_begin(&w, "skipped");
  for (size_t i = 0; i < results->skipped_count; ++i) {
    const skipped_case *entry = &results->skipped[i];
    json_object_begin(&w, NULL);
    json_string(&w, "backend", backend_name(entry->backend));
    json_string(&w, "precision", clmg_dtype_name(entry->precision));
    json_integer(&w, "n", (long long)entry->n);
    json_string(&w, "reason", entry->reason);
    json_object_end(&w);
  }
  json_array_end(&w);

  json_array_begin(&w, "decision");
  for (size_t i = 0; i < decision_count; ++i) {
    const decision_entry *entry = &decisions[i];
    json_object_begin(&w, NULL);
    json_string(&w, "op", op_names[entry->op]);
    json_string(&w, "precision", clmg_dtype_name(entry->precision));
    json_integer(&w, "n", (long long)entry->n);
    json_number(&w, "native_us", entry->native_seconds * 1e6);
    json_number(&w, "clblast_us", entry->clblast_seconds * 1e6);
    json_number(&w, "native_speedup", entry->clblast_seconds / entry->native_seconds);
    json_object_end(&w);
  }
  json_array_end(&w);

  json_integer(&w, "failures", results->failures);
  json_object_end(&w);
  json_end(&w);
  return perf_json_close(PROGRAM, file);
}

int main(int argc, char **argv) {
  benchmark_settings settings;
  int parsed = parse_arguments(argc, argv, &settings);
  if (parsed == 2) {
    return 0;
  }
  if (parsed == 0) {
    print_usage(stderr);
    return 2;
  }
  if (settings.max_n_given && settings.min_n > settings.max_n) {
    fprintf(stderr, PROGRAM ": --min-n (%g) is above --max-n (%g)\n", settings.min_n,
            settings.max_n);
    return 2;
  }

  if (!perf_output_begin(PROGRAM, &settings.output)) {
    return 1;
  }

  benchmark_results results;
  memset(&results, 0, sizeof results);
  results.copy_gb_per_s = NAN;
  int contexts_made = 0;
  for (size_t b = 0; b < settings.backend_count; ++b) {
    if (run_backend(&settings, settings.backends[b], contexts_made == 0, &results)) {
      contexts_made++;
    } else {
      results.failures++;
      if (contexts_made == 0) {
        break; /* the device itself is not there: the next backend fails alike */
      }
    }
  }
  if (contexts_made == 0) {
    return 1;
  }

  decision_entry *decisions = NULL;
  size_t decision_count = collect_decisions(&results, &decisions);
  print_decision(&results, decisions, decision_count);

  int json_ok = 1;
  const char *paths[2];
  for (size_t k = 0; k < perf_output_paths(&settings.output, paths); ++k) {
    if (!write_json(paths[k], &settings, &results, decisions, decision_count)) {
      json_ok = 0;
    } else if (strcmp(paths[k], "-") != 0) {
      printf("\nJSON written to %s\n", paths[k]);
    }
  }
  if (results.failures > 0) {
    fprintf(stderr, PROGRAM ": %d failure(s); see the messages above\n", results.failures);
  }
  free(decisions);
  free(results.rows);
  free(results.skipped);
  return (results.failures == 0 && json_ok) ? 0 : 1;
}
