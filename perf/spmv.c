/* clmg_perf_spmv: sparse matrix-vector product benchmark.
 *
 * Generates the test matrices of matrices.h at a target nonzero count, and
 * for each matrix x format x precision builds the device matrix, times
 * y = A x (clmg_spmv with alpha 1, beta 0) by wall clock, checks y once
 * against the host reference, and reports time, GFLOP/s and the bandwidth
 * achieved under a minimal-traffic model, as GB/s and as a ratio to the copy
 * bandwidth measured in the same run. Prints a table and a per-matrix
 * summary; --output FILE writes the same as JSON (--json prints it instead
 * of the table); --write-mtx writes every matrix
 * and its x as Matrix Market files for perf/cusparse_spmv.py.
 *
 *   clmg_perf_spmv [--device DEV] [--output FILE] [--json] [--size small|medium|large | --nnz N]
 *                  [--formats csr,ellr,sell,csr-adaptive,hybrid,auto]
 *                  [--precision double|float|both]
 *                  [--matrices NAME,...] [--write-mtx DIR] [--min-time S] [--trials T]
 */
#define _POSIX_C_SOURCE 200809L /* mkdir, pthreads */

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apputil.h"
#include "clmg.h"
#include "matrices.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_spmv"

/* Target nonzeros per matrix for --size. */
static const double small_nnz = 2e6;
static const double medium_nnz = 8e6;
static const double large_nnz = 3e7;

/* Verification: the largest error of a row, relative to sum_j |a_ij x_j|
 * (the scale of the rounding errors any summation order makes). */
static const double double_tolerance = 1e-12;
static const double float_tolerance = 1e-5;

/* ---- settings ---- */

enum { MAX_FORMATS = 6, MAX_MATRICES = 32 };

typedef struct benchmark_settings {
  const char *device;
  perf_output output;
  const char *mtx_dir;
  const char *size_name; /* "small", "medium", "large", "nnz" or NULL (device default) */
  double target_nnz;     /* 0: from size_name or the device */
  clmg_matrix_format formats[MAX_FORMATS];
  size_t format_count;
  int run_double;
  int run_float;
  const perf_matrix_kind *matrices[MAX_MATRICES];
  size_t matrix_count;
  perf_timing timing; /* fixed_reps stays 0: always adaptive */
  double max_padding; /* skip ELLR when it would store more than this x nnz */
  uint64_t seed;
} benchmark_settings;

static void print_usage(FILE *out) {
  size_t kind_count = 0;
  const perf_matrix_kind *kinds = perf_matrix_kinds(&kind_count);
  fprintf(out, "usage: " PROGRAM " [options]\n"
               "  --device DEV        device string (nvidia, pocl, gpu, cpu, P:D, name); default:\n"
               "                      $CLMG_DEVICE, else the first GPU, else the first CPU\n");
  perf_output_help(out, 22);
  fprintf(out,
          "  --size S            small (2e6 nonzeros per matrix), medium (8e6) or large (3e7);\n"
          "                      default: large on a GPU, small otherwise\n"
          "  --nnz N             target nonzeros per matrix (instead of --size)\n"
          "  --formats LIST      comma-separated: csr, ellr, sell, csr-adaptive, hybrid,\n"
          "                      auto (default all six)\n"
          "  --precision P       double, float or both (default both)\n"
          "  --matrices LIST     comma-separated matrix names (default all)\n"
          "  --write-mtx DIR     write each matrix as DIR/NAME.mtx and its x as DIR/NAME_x.mtx\n"
          "                      (Matrix Market) for perf/cusparse_spmv.py\n"
          "  --min-time S        seconds per timed batch (default 0.2)\n"
          "  --trials T          timed batches per measurement, the fastest counts (default 2)\n"
          "  --max-padding F     skip ELLR where it would store more than F x nnz (default 8)\n"
          "  --seed N            seed of the random coefficients and x (default 1)\n"
          "  --help              this text\n"
          "matrices:\n");
  for (size_t i = 0; i < kind_count; ++i) {
    fprintf(out, "  %-10s %s\n", kinds[i].name, kinds[i].description);
  }
}

/* Calls handle(item, context) for each comma-separated item of list; stops
 * and returns 0 at the first item it refuses. */
static int for_each_item(const char *list, int (*handle)(const char *, void *), void *context) {
  char item[64];
  const char *start = list;
  for (;;) {
    const char *comma = strchr(start, ',');
    size_t length = comma ? (size_t)(comma - start) : strlen(start);
    if (length == 0 || length >= sizeof item) {
      fprintf(stderr, PROGRAM ": bad list item in '%s'\n", list);
      return 0;
    }
    memcpy(item, start, length);
    item[length] = '\0';
    if (!handle(item, context)) {
      return 0;
    }
    if (comma == NULL) {
      return 1;
    }
    start = comma + 1;
  }
}

static int add_format(const char *name, void *context) {
  benchmark_settings *settings = context;
  clmg_matrix_format format;
  if (!clmg_matrix_format_parse(name, &format)) {
    fprintf(stderr, PROGRAM ": unknown format '%s' (csr, ellr, sell, csr-adaptive, hybrid, auto)\n",
            name);
    return 0;
  }
  for (size_t i = 0; i < settings->format_count; ++i) {
    if (settings->formats[i] == format) {
      return 1;
    }
  }
  if (settings->format_count == MAX_FORMATS) {
    return 0;
  }
  settings->formats[settings->format_count++] = format;
  return 1;
}

static int add_matrix(const char *name, void *context) {
  benchmark_settings *settings = context;
  const perf_matrix_kind *kind = perf_matrix_find(name);
  if (kind == NULL) {
    fprintf(stderr, PROGRAM ": unknown matrix '%s' (see --help)\n", name);
    return 0;
  }
  for (size_t i = 0; i < settings->matrix_count; ++i) {
    if (settings->matrices[i] == kind) {
      return 1;
    }
  }
  if (settings->matrix_count == MAX_MATRICES) {
    return 0;
  }
  settings->matrices[settings->matrix_count++] = kind;
  return 1;
}

/* Returns 0 and prints why when the command line is not valid; 1 to run; 2
 * when --help was asked for. */
static int parse_arguments(int argc, char **argv, benchmark_settings *settings) {
  memset(settings, 0, sizeof *settings);
  settings->run_double = 1;
  settings->run_float = 1;
  settings->timing.min_time_s = 0.2;
  settings->timing.trials = 2;
  settings->timing.max_adaptive_reps = 1000000;
  settings->max_padding = 8;
  settings->seed = 1;
  int formats_given = 0, matrices_given = 0;
  static const char *const value_options[] = {
      "--device",      "--output",   "--size",      "--nnz",      "--formats",
      "--precision",   "--matrices", "--write-mtx", "--min-time", "--trials",
      "--max-padding", "--seed",     NULL};

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
    } else if (strcmp(name, "--write-mtx") == 0) {
      settings->mtx_dir = value;
    } else if (strcmp(name, "--size") == 0) {
      if (strcmp(value, "small") == 0) {
        settings->target_nnz = small_nnz;
      } else if (strcmp(value, "medium") == 0) {
        settings->target_nnz = medium_nnz;
      } else if (strcmp(value, "large") == 0) {
        settings->target_nnz = large_nnz;
      } else {
        fprintf(stderr, PROGRAM ": --size wants small, medium or large, not %s\n", value);
        return 0;
      }
      settings->size_name = value;
    } else if (strcmp(name, "--nnz") == 0) {
      if (!perf_parse_positive_number(value, &number) || number < 100 || number > 2e9) {
        fprintf(stderr, PROGRAM ": --nnz wants a count between 100 and 2e9, not %s\n", value);
        return 0;
      }
      settings->target_nnz = number;
      settings->size_name = "nnz";
    } else if (strcmp(name, "--formats") == 0) {
      settings->format_count = 0;
      formats_given = 1;
      if (!for_each_item(value, add_format, settings)) {
        return 0;
      }
    } else if (strcmp(name, "--matrices") == 0) {
      settings->matrix_count = 0;
      matrices_given = 1;
      if (!for_each_item(value, add_matrix, settings)) {
        return 0;
      }
    } else if (strcmp(name, "--precision") == 0) {
      if (!perf_parse_precision(PROGRAM, value, &settings->run_double, &settings->run_float)) {
        return 0;
      }
    } else if (strcmp(name, "--min-time") == 0 || strcmp(name, "--trials") == 0) {
      if (!perf_parse_timing_option(PROGRAM, name, value, &settings->timing)) {
        return 0;
      }
    } else if (strcmp(name, "--max-padding") == 0) {
      if (!perf_parse_positive_number(value, &number) || number < 1) {
        fprintf(stderr, PROGRAM ": --max-padding wants a factor >= 1, not %s\n", value);
        return 0;
      }
      settings->max_padding = number;
    } else if (strcmp(name, "--seed") == 0) {
      if (!perf_parse_positive_number(value, &number) || number != floor(number) || number > 1e15) {
        fprintf(stderr, PROGRAM ": --seed wants a positive integer, not %s\n", value);
        return 0;
      }
      settings->seed = (uint64_t)number;
    }
  }
  if (!formats_given) {
    const clmg_matrix_format all[MAX_FORMATS] = {CLMG_FORMAT_CSR,    CLMG_FORMAT_ELLR,
                                                 CLMG_FORMAT_SELL,   CLMG_FORMAT_CSR_ADAPTIVE,
                                                 CLMG_FORMAT_HYBRID, CLMG_FORMAT_AUTO};
    memcpy(settings->formats, all, sizeof all);
    settings->format_count = MAX_FORMATS;
  }
  if (!matrices_given) {
    size_t count = 0;
    const perf_matrix_kind *kinds = perf_matrix_kinds(&count);
    for (size_t i = 0; i < count && i < MAX_MATRICES; ++i) {
      settings->matrices[settings->matrix_count++] = &kinds[i];
    }
  }
  return 1;
}

/* ---- results ---- */

typedef struct matrix_entry {
  const perf_matrix_kind *kind;
  char detail[128];
  size_t rows, cols, nnz;
  perf_row_lengths lengths;
  double generate_s;
  int generated;
} matrix_entry;

typedef struct result_row {
  size_t matrix; /* index into results.matrices */
  clmg_matrix_format requested;
  clmg_matrix_format used;
  char description[96];
  clmg_dtype precision;
  long reps;
  double seconds_per_call;
  double gflops;
  double model_bytes;
  double gb_per_s;
  double ratio_to_copy;
  size_t stored_entries;
  double padding;
  size_t device_bytes;
  double stored_gb_per_s; /* device arrays + x + y over the time */
  double max_error;
  int verified;
} result_row;

typedef struct skipped_case {
  size_t matrix;
  clmg_matrix_format format;
  clmg_dtype precision;
  char reason[256];
} skipped_case;

typedef struct benchmark_results {
  clmg_device_info device;
  double copy_gb_per_s;
  double target_nnz;
  matrix_entry matrices[MAX_MATRICES];
  size_t matrix_count;
  result_row *rows;
  size_t row_count;
  size_t row_capacity;
  skipped_case *skipped;
  size_t skipped_count;
  size_t skipped_capacity;
  int failures; /* errors, and products that disagree with the reference */
} benchmark_results;

static void add_row(benchmark_results *results, const result_row *row) {
  if (!perf_grow_array((void **)&results->rows, &results->row_capacity, results->row_count,
                       sizeof *results->rows)) {
    fprintf(stderr, PROGRAM ": out of host memory for results\n");
    results->failures++;
    return;
  }
  results->rows[results->row_count++] = *row;
}

static void add_skipped(benchmark_results *results, size_t matrix, clmg_matrix_format format,
                        clmg_dtype precision, const char *reason) {
  printf("  skipped: %s %s %s: %s\n", results->matrices[matrix].kind->name,
         clmg_matrix_format_name(format), clmg_dtype_name(precision), reason);
  fflush(stdout);
  if (!perf_grow_array((void **)&results->skipped, &results->skipped_capacity,
                       results->skipped_count, sizeof *results->skipped)) {
    return;
  }
  skipped_case *entry = &results->skipped[results->skipped_count++];
  entry->matrix = matrix;
  entry->format = format;
  entry->precision = precision;
  snprintf(entry->reason, sizeof entry->reason, "%s", reason);
}

/* ---- the traffic model ---- */

/* The fewest bytes one y = A x must move in the given format: values and
 * column indices once (nnz (s + 4)), the row structure once (CSR and
 * CSR-Adaptive: the int64 row pointers, (rows + 1) 8; ELLR and SELL: the
 * int32 row lengths, rows 4; the hybrid: its ELLR or SELL part's row lengths,
 * rows 4; padding, SELL's permutation and slice offsets, the hybrid's segment bounds and sums,
 * CSR-Adaptive's row blocks are not counted), x once
 * (cols s) and y written once (rows s; beta = 0, so y is not read). */
static double model_bytes(clmg_matrix_format format, size_t rows, size_t cols, size_t nnz,
                          size_t value_size) {
  double s = (double)value_size;
  int csr = format == CLMG_FORMAT_CSR || format == CLMG_FORMAT_CSR_ADAPTIVE;
  double row_structure = csr ? (double)(rows + 1) * 8.0 : (double)rows * 4.0;
  return (double)nnz * (s + 4.0) + row_structure + (double)cols * s + (double)rows * s;
}

static const char *const model_text =
    "bytes = nnz*(s+4) [values + int32 column indices] + row structure [CSR, CSR-Adaptive: "
    "(rows+1)*8, int64 row pointers; ELLR/SELL/hybrid: rows*4, int32 row lengths] + cols*s [x read "
    "once] + rows*s [y written once, beta=0]; s = 8 (double) or 4 (float); padding, SELL "
    "permutation and slice offsets, CSR-Adaptive row blocks not counted";

/* ---- measuring ---- */

/* ---- the host side of one matrix ---- */

typedef struct host_problem {
  clmg_csr a;
  double *x;             /* cols; float-representable, so both precisions use the same x */
  double *y_double;      /* the reference y for double matrices */
  double *y_float;       /* for float matrices: A with values rounded to float; NULL until needed */
  double *row_magnitude; /* sum_j |a_ij x_j|: the scale of each row's rounding error */
  void *x_device_float;  /* x as float, for uploading */
} host_problem;

static void host_problem_free(host_problem *p) {
  clmg_csr_free(&p->a);
  free(p->x);
  free(p->y_double);
  free(p->y_float);
  free(p->row_magnitude);
  free(p->x_device_float);
  memset(p, 0, sizeof *p);
}

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* x in [-1, 1), the reference products and the row scales. Returns 0 when
 * out of memory. */
static int host_problem_prepare(host_problem *p, uint64_t seed) {
  size_t rows = p->a.rows, cols = p->a.cols;
  p->x = malloc((cols ? cols : 1) * sizeof *p->x);
  p->y_double = malloc((rows ? rows : 1) * sizeof *p->y_double);
  p->row_magnitude = malloc((rows ? rows : 1) * sizeof *p->row_magnitude);
  float *x_float = malloc((cols ? cols : 1) * sizeof *x_float);
  p->x_device_float = x_float;
  if (p->x == NULL || p->y_double == NULL || p->row_magnitude == NULL || x_float == NULL) {
    return 0;
  }
  uint64_t state = seed * 0x2545f4914f6cdd1dULL + 7;
  for (size_t j = 0; j < cols; ++j) {
    double u = (double)(splitmix(&state) >> 11) * 0x1.0p-53;
    x_float[j] = (float)(2.0 * u - 1.0);
    p->x[j] = (double)x_float[j];
  }
  clmg_csr_spmv_host(1.0, &p->a, p->x, 0.0, p->y_double);
  for (size_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (int64_t k = p->a.row_ptr[i]; k < p->a.row_ptr[i + 1]; ++k) {
      sum += fabs(p->a.val[k] * p->x[p->a.col[k]]);
    }
    p->row_magnitude[i] = sum;
  }
  return 1;
}

/* The reference for a float matrix: the device holds A's values rounded to
 * float, so the host product uses the same rounded values (in double);
 * what remains is the device's float arithmetic. */
static int host_problem_prepare_float(host_problem *p) {
  if (p->y_float != NULL) {
    return 1;
  }
  size_t nnz = clmg_csr_nnz(&p->a);
  double *rounded = malloc((nnz ? nnz : 1) * sizeof *rounded);
  p->y_float = malloc((p->a.rows ? p->a.rows : 1) * sizeof *p->y_float);
  if (rounded == NULL || p->y_float == NULL) {
    free(rounded);
    free(p->y_float);
    p->y_float = NULL;
    return 0;
  }
  for (size_t k = 0; k < nnz; ++k) {
    rounded[k] = (double)(float)p->a.val[k];
  }
  clmg_csr rounded_a = p->a;
  rounded_a.val = rounded;
  clmg_csr_spmv_host(1.0, &rounded_a, p->x, 0.0, p->y_float);
  free(rounded);
  return 1;
}

/* The largest row error relative to the row's scale; infinity for a NaN. */
static double max_relative_error(const host_problem *p, const double *reference,
                                 const double *computed) {
  double worst = 0;
  for (size_t i = 0; i < p->a.rows; ++i) {
    double difference = fabs(computed[i] - reference[i]);
    if (isnan(difference)) {
      return INFINITY;
    }
    double scale = p->row_magnitude[i] > 0 ? p->row_magnitude[i] : 1.0;
    worst = fmax(worst, difference / scale);
  }
  return worst;
}

/* ---- one matrix x format x precision ---- */

static void run_case(clmg_context *context, const benchmark_settings *settings,
                     benchmark_results *results, size_t matrix_index, host_problem *p,
                     clmg_matrix_format format, clmg_dtype precision) {
  const matrix_entry *entry = &results->matrices[matrix_index];
  const char *name = entry->kind->name;
  char reason[256];

  /* ELLR pads every row to the longest: refuse hopeless cases before the
   * library allocates staging arrays for them. */
  double ellr_padding =
      entry->nnz ? (double)entry->lengths.max * (double)entry->rows / (double)entry->nnz : 1.0;
  if (format == CLMG_FORMAT_ELLR && ellr_padding > settings->max_padding) {
    snprintf(reason, sizeof reason,
             "ELLR would store %.1f x nnz (longest row %zu, mean %.1f); limit --max-padding %g",
             ellr_padding, entry->lengths.max, entry->lengths.mean, settings->max_padding);
    add_skipped(results, matrix_index, format, precision, reason);
    return;
  }
  if (precision == CLMG_FLOAT && !host_problem_prepare_float(p)) {
    add_skipped(results, matrix_index, format, precision, "out of host memory for the reference");
    results->failures++;
    return;
  }

  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.format = format;
  options.precision = precision;
  clmg_matrix *matrix = NULL;
  clmg_status status = clmg_matrix_create(context, &p->a, &options, &matrix);
  if (status != CLMG_SUCCESS) {
    snprintf(reason, sizeof reason, "clmg_matrix_create: %s: %s", clmg_status_string(status),
             clmg_context_message(context));
    add_skipped(results, matrix_index, format, precision, reason);
    /* Too large for the device, or no fp64: the device's limits, not a bug. */
    if (status != CLMG_ERROR_OUT_OF_DEVICE_MEMORY && status != CLMG_ERROR_UNSUPPORTED) {
      results->failures++;
    }
    return;
  }

  size_t rows = entry->rows, cols = entry->cols;
  size_t value_size = clmg_dtype_size(precision);
  perf_spmv_operands op = {matrix, NULL, NULL};
  double *y_host = malloc((rows ? rows : 1) * sizeof *y_host);
  void *y_download = malloc((rows ? rows : 1) * value_size);
  status = y_host && y_download ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(context, precision, cols, &op.x);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(context, precision, rows, &op.y);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_upload(op.x, precision == CLMG_FLOAT ? p->x_device_float : (void *)p->x);
  }
  long reps = 0;
  double seconds = 0;
  if (status == CLMG_SUCCESS) {
    status = perf_time_adaptive(context, &settings->timing, perf_run_spmv, &op, &reps, &seconds);
  }
  /* Verify once, after the timing: y starts as NaN, so a row the kernel
   * never writes shows. */
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_fill(op.y, NAN);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_spmv(1.0, matrix, op.x, 0.0, op.y);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_download(op.y, y_download);
  }
  if (status != CLMG_SUCCESS) {
    char what[160];
    snprintf(what, sizeof what, "spmv %s %s %s", name, clmg_matrix_format_name(format),
             clmg_dtype_name(precision));
    apputil_report(context, status, what);
    results->failures++;
  } else {
    for (size_t i = 0; i < rows; ++i) {
      y_host[i] = precision == CLMG_FLOAT ? (double)((const float *)y_download)[i]
                                          : ((const double *)y_download)[i];
    }
    result_row row;
    memset(&row, 0, sizeof row);
    row.matrix = matrix_index;
    row.requested = format;
    row.used = clmg_matrix_format_of(matrix);
    snprintf(row.description, sizeof row.description, "%s", clmg_matrix_describe(matrix));
    row.precision = precision;
    row.reps = reps;
    row.seconds_per_call = seconds;
    row.gflops = 2.0 * (double)entry->nnz / seconds / 1e9;
    row.model_bytes = model_bytes(row.used, rows, cols, entry->nnz, value_size);
    row.gb_per_s = row.model_bytes / seconds / 1e9;
    row.ratio_to_copy = results->copy_gb_per_s > 0 ? row.gb_per_s / results->copy_gb_per_s : NAN;
    row.stored_entries = clmg_matrix_stored_entries(matrix);
    row.padding = entry->nnz ? (double)row.stored_entries / (double)entry->nnz : 1.0;
    row.device_bytes = clmg_matrix_device_bytes(matrix);
    row.stored_gb_per_s =
        ((double)row.device_bytes + (double)(cols + rows) * (double)value_size) / seconds / 1e9;
    row.max_error =
        max_relative_error(p, precision == CLMG_FLOAT ? p->y_float : p->y_double, y_host);
    double tolerance = precision == CLMG_FLOAT ? float_tolerance : double_tolerance;
    row.verified = row.max_error <= tolerance;
    if (!row.verified) {
      results->failures++;
    }
    char format_text[112];
    if (format == CLMG_FORMAT_AUTO) {
      snprintf(format_text, sizeof format_text, "auto: %s", row.description);
    } else {
      snprintf(format_text, sizeof format_text, "%s", row.description);
    }
    printf("%-10s %-30s %-6s %10zu %11zu %5.2f %8ld %11.2f %8.2f %8.1f %6.3f %8.1e %s\n", name,
           format_text, clmg_dtype_name(precision), rows, entry->nnz, row.padding, row.reps,
           row.seconds_per_call * 1e6, row.gflops, row.gb_per_s, row.ratio_to_copy, row.max_error,
           row.verified ? "ok" : "WRONG");
    fflush(stdout);
    add_row(results, &row);
  }
  clmg_vector_destroy(op.x);
  clmg_vector_destroy(op.y);
  clmg_matrix_destroy(matrix);
  free(y_host);
  free(y_download);
}

/* ---- one matrix ---- */

static int ensure_directory(const char *path) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) {
    return 1;
  }
  fprintf(stderr, PROGRAM ": cannot create %s: %s\n", path, strerror(errno));
  return 0;
}

/* Writing Matrix Market text runs at a few million entries a second, so a
 * 3e7-entry matrix takes several seconds: a thread writes DIR/NAME.mtx and
 * DIR/NAME_x.mtx while the device is timed. It only reads the host matrix
 * and x, which nothing changes until it is joined. */
typedef struct mtx_writer {
  pthread_t thread;
  int started;
  const char *dir;
  const char *name;
  const host_problem *problem;
  double seconds;
  int ok;
  char message[sizeof(((clmg_error *)0)->message)];
} mtx_writer;

static void *mtx_writer_main(void *argument) {
  mtx_writer *writer = argument;
  char path[4096];
  clmg_error error;
  double start = apputil_now();
  writer->ok = 0;
  snprintf(path, sizeof path, "%s/%s.mtx", writer->dir, writer->name);
  if (clmg_csr_write_matrix_market(path, &writer->problem->a, &error) != CLMG_SUCCESS) {
    snprintf(writer->message, sizeof writer->message, "%s", error.message);
    return NULL;
  }
  snprintf(path, sizeof path, "%s/%s_x.mtx", writer->dir, writer->name);
  if (clmg_write_matrix_market_vector(path, writer->problem->x, writer->problem->a.cols, &error) !=
      CLMG_SUCCESS) {
    snprintf(writer->message, sizeof writer->message, "%s", error.message);
    return NULL;
  }
  writer->seconds = apputil_now() - start;
  writer->ok = 1;
  return NULL;
}

static void mtx_writer_start(mtx_writer *writer, const char *dir, const char *name,
                             const host_problem *problem) {
  memset(writer, 0, sizeof *writer);
  writer->dir = dir;
  writer->name = name;
  writer->problem = problem;
  if (pthread_create(&writer->thread, NULL, mtx_writer_main, writer) == 0) {
    writer->started = 1;
  } else {
    mtx_writer_main(writer); /* no thread: write now */
  }
}

/* Waits for the writer; returns 0 (and says why) if it failed. */
static int mtx_writer_finish(mtx_writer *writer) {
  if (writer->started) {
    pthread_join(writer->thread, NULL);
  }
  if (!writer->ok) {
    fprintf(stderr, PROGRAM ": writing %s/%s: %s\n", writer->dir, writer->name, writer->message);
    return 0;
  }
  printf("  wrote %s/%s.mtx and %s_x.mtx (%.1f s, alongside the timing)\n", writer->dir,
         writer->name, writer->name, writer->seconds);
  return 1;
}

static void print_table_header(void) {
  printf("%-10s %-30s %-6s %10s %11s %5s %8s %11s %8s %8s %6s %8s %s\n", "matrix", "format", "prec",
         "rows", "nnz", "pad", "reps", "us/call", "GFLOP/s", "GB/s", "ratio", "error", "check");
  fflush(stdout);
}

static void run_matrix(clmg_context *context, const benchmark_settings *settings,
                       benchmark_results *results, size_t matrix_index) {
  matrix_entry *entry = &results->matrices[matrix_index];
  host_problem problem;
  memset(&problem, 0, sizeof problem);
  clmg_error error;
  double start = apputil_now();
  clmg_status status =
      entry->kind->generate((size_t)llround(results->target_nnz), settings->seed, &problem.a,
                            entry->detail, sizeof entry->detail, &error);
  entry->generate_s = apputil_now() - start;
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": generating %s: %s: %s\n", entry->kind->name,
            clmg_status_string(status), error.message);
    results->failures++;
    return;
  }
  entry->generated = 1;
  entry->rows = problem.a.rows;
  entry->cols = problem.a.cols;
  entry->nnz = clmg_csr_nnz(&problem.a);
  entry->lengths = perf_matrix_row_lengths(&problem.a);
  printf("\n%s: %s; %zu rows, %zu nonzeros, row lengths %zu..%zu (mean %.2f); generated in "
         "%.2f s\n",
         entry->kind->name, entry->detail, entry->rows, entry->nnz, entry->lengths.min,
         entry->lengths.max, entry->lengths.mean, entry->generate_s);
  if (!host_problem_prepare(&problem, settings->seed)) {
    fprintf(stderr, PROGRAM ": out of host memory for the vectors of %s\n", entry->kind->name);
    results->failures++;
    host_problem_free(&problem);
    return;
  }
  mtx_writer writer;
  if (settings->mtx_dir != NULL) {
    mtx_writer_start(&writer, settings->mtx_dir, entry->kind->name, &problem);
  }
  print_table_header();

  clmg_dtype precisions[2];
  size_t precision_count =
      perf_precision_list(settings->run_double, settings->run_float, precisions);
  for (size_t p = 0; p < precision_count; ++p) {
    if (precisions[p] == CLMG_DOUBLE && !results->device.has_fp64) {
      add_skipped(results, matrix_index, CLMG_FORMAT_AUTO, CLMG_DOUBLE,
                  "the device has no double precision");
      continue;
    }
    for (size_t f = 0; f < settings->format_count; ++f) {
      run_case(context, settings, results, matrix_index, &problem, settings->formats[f],
               precisions[p]);
    }
  }
  if (settings->mtx_dir != NULL && !mtx_writer_finish(&writer)) {
    results->failures++;
  }
  host_problem_free(&problem);
}

/* ---- summary ---- */

/* The fastest verified row of a matrix and precision; NULL if none. With
 * skip_auto, rows that asked for "auto" are left out (auto is one of the
 * others under another name). */
static const result_row *fastest_row(const benchmark_results *results, size_t matrix,
                                     clmg_dtype precision, int skip_auto) {
  const result_row *best = NULL;
  for (size_t i = 0; i < results->row_count; ++i) {
    const result_row *row = &results->rows[i];
    if (row->matrix != matrix || row->precision != precision || !row->verified ||
        (skip_auto && row->requested == CLMG_FORMAT_AUTO)) {
      continue;
    }
    if (best == NULL || row->seconds_per_call < best->seconds_per_call) {
      best = row;
    }
  }
  return best;
}

static const result_row *auto_row(const benchmark_results *results, size_t matrix,
                                  clmg_dtype precision) {
  for (size_t i = 0; i < results->row_count; ++i) {
    const result_row *row = &results->rows[i];
    if (row->matrix == matrix && row->precision == precision &&
        row->requested == CLMG_FORMAT_AUTO) {
      return row;
    }
  }
  return NULL;
}

static void print_summary(const benchmark_results *results) {
  printf("\nsummary: the fastest format per matrix and precision (ratio = GB/s under the model "
         "/ copy %.1f GB/s); auto/best = time of the auto choice / best time\n",
         results->copy_gb_per_s);
  printf("%-10s %-6s %-30s %11s %8s %8s %6s  %-12s %9s\n", "matrix", "prec", "best format",
         "us/call", "GFLOP/s", "GB/s", "ratio", "auto", "auto/best");
  const clmg_dtype precisions[2] = {CLMG_DOUBLE, CLMG_FLOAT};
  for (size_t m = 0; m < results->matrix_count; ++m) {
    for (int p = 0; p < 2; ++p) {
      const result_row *best = fastest_row(results, m, precisions[p], 1);
      if (best == NULL) {
        best = fastest_row(results, m, precisions[p], 0);
      }
      if (best == NULL) {
        continue;
      }
      const result_row *automatic = auto_row(results, m, precisions[p]);
      char auto_text[16] = "-", auto_ratio[16] = "-";
      if (automatic != NULL) {
        snprintf(auto_text, sizeof auto_text, "%s", clmg_matrix_format_name(automatic->used));
        snprintf(auto_ratio, sizeof auto_ratio, "%.2f",
                 automatic->seconds_per_call / best->seconds_per_call);
      }
      printf("%-10s %-6s %-30s %11.2f %8.2f %8.1f %6.3f  %-12s %9s\n",
             results->matrices[m].kind->name, clmg_dtype_name(precisions[p]), best->description,
             best->seconds_per_call * 1e6, best->gflops, best->gb_per_s, best->ratio_to_copy,
             auto_text, auto_ratio);
    }
  }
}

/* ---- JSON ---- */

static int write_json(const char *path, const benchmark_settings *settings,
                      const benchmark_results *results) {
  clmg_output_file *file;
  FILE *out = perf_json_open(PROGRAM, path, &file);
  if (out == NULL) {
    return 0;
  }
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "spmv");
  json_string(&w, "clmg_version", clmg_version_string());

  json_device(&w, &results->device);

  json_number(&w, "copy_gb_per_s", results->copy_gb_per_s);

  json_object_begin(&w, "settings");
  json_number(&w, "target_nnz", results->target_nnz);
  json_string(&w, "size", settings->size_name ? settings->size_name : "default");
  json_array_begin(&w, "formats");
  for (size_t i = 0; i < settings->format_count; ++i) {
    json_string(&w, NULL, clmg_matrix_format_name(settings->formats[i]));
  }
  json_array_end(&w);
  json_bool(&w, "double", settings->run_double);
  json_bool(&w, "float", settings->run_float);
  json_number(&w, "min_time_s", settings->timing.min_time_s);
  json_integer(&w, "trials", settings->timing.trials);
  json_number(&w, "max_padding", settings->max_padding);
  json_integer(&w, "seed", (long long)settings->seed);
  json_string(&w, "timing",
              "wall clock over reps calls of clmg_spmv(1, A, x, 0, y) ended by clmg_finish; "
              "fastest of trials batches");
  json_string(&w, "bytes_model", model_text);
  json_string(&w, "error_model",
              "max over rows of |y_i - ref_i| / sum_j |a_ij x_j|; ref in "
              "double from A (rounded to float for float runs)");
  json_number(&w, "double_tolerance", double_tolerance);
  json_number(&w, "float_tolerance", float_tolerance);
  json_object_end(&w);

  json_array_begin(&w, "matrices");
  for (size_t m = 0; m < results->matrix_count; ++m) {
    const matrix_entry *entry = &results->matrices[m];
    json_object_begin(&w, NULL);
    json_string(&w, "name", entry->kind->name);
    json_string(&w, "description", entry->kind->description);
    json_string(&w, "detail", entry->detail);
    json_bool(&w, "generated", entry->generated);
    json_integer(&w, "rows", (long long)entry->rows);
    json_integer(&w, "cols", (long long)entry->cols);
    json_integer(&w, "nnz", (long long)entry->nnz);
    json_integer(&w, "row_min", (long long)entry->lengths.min);
    json_integer(&w, "row_max", (long long)entry->lengths.max);
    json_number(&w, "row_mean", entry->lengths.mean);
    json_number(&w, "generate_s", entry->generate_s);
    json_object_end(&w);
  }
  json_array_end(&w);

  json_array_begin(&w, "rows");
  for (size_t i = 0; i < results->row_count; ++i) {
    const result_row *row = &results->rows[i];
    const matrix_entry *entry = &results->matrices[row->matrix];
    json_object_begin(&w, NULL);
    json_string(&w, "matrix", entry->kind->name);
    json_integer(&w, "rows", (long long)entry->rows);
    json_integer(&w, "cols", (long long)entry->cols);
    json_integer(&w, "nnz", (long long)entry->nnz);
    json_string(&w, "format", clmg_matrix_format_name(row->requested));
    json_string(&w, "format_used", clmg_matrix_format_name(row->used));
    json_string(&w, "format_description", row->description);
    json_string(&w, "precision", clmg_dtype_name(row->precision));
    json_integer(&w, "reps", row->reps);
    json_number(&w, "time_us", row->seconds_per_call * 1e6);
    json_number(&w, "gflops", row->gflops);
    json_number(&w, "model_bytes", row->model_bytes);
    json_number(&w, "gb_per_s", row->gb_per_s);
    json_number(&w, "ratio_to_copy", row->ratio_to_copy);
    json_integer(&w, "stored_entries", (long long)row->stored_entries);
    json_number(&w, "padding", row->padding);
    json_integer(&w, "device_bytes", (long long)row->device_bytes);
    json_number(&w, "stored_gb_per_s", row->stored_gb_per_s);
    json_number(&w, "max_error", row->max_error);
    json_bool(&w, "verified", row->verified);
    json_object_end(&w);
  }
  json_array_end(&w);

  json_array_begin(&w, "skipped");
  for (size_t i = 0; i < results->skipped_count; ++i) {
    const skipped_case *entry = &results->skipped[i];
    json_object_begin(&w, NULL);
    json_string(&w, "matrix", results->matrices[entry->matrix].kind->name);
    json_string(&w, "format", clmg_matrix_format_name(entry->format));
    json_string(&w, "precision", clmg_dtype_name(entry->precision));
    json_string(&w, "reason", entry->reason);
    json_object_end(&w);
  }
  json_array_end(&w);

  json_array_begin(&w, "summary");
  const clmg_dtype precisions[2] = {CLMG_DOUBLE, CLMG_FLOAT};
  for (size_t m = 0; m < results->matrix_count; ++m) {
    for (int p = 0; p < 2; ++p) {
      const result_row *best = fastest_row(results, m, precisions[p], 1);
      if (best == NULL) {
        best = fastest_row(results, m, precisions[p], 0);
      }
      if (best == NULL) {
        continue;
      }
      const result_row *automatic = auto_row(results, m, precisions[p]);
      json_object_begin(&w, NULL);
      json_string(&w, "matrix", results->matrices[m].kind->name);
      json_string(&w, "precision", clmg_dtype_name(precisions[p]));
      json_string(&w, "best_format", clmg_matrix_format_name(best->used));
      json_string(&w, "best_description", best->description);
      json_number(&w, "best_time_us", best->seconds_per_call * 1e6);
      json_number(&w, "best_gb_per_s", best->gb_per_s);
      json_number(&w, "best_ratio_to_copy", best->ratio_to_copy);
      if (automatic != NULL) {
        json_string(&w, "auto_format", clmg_matrix_format_name(automatic->used));
        json_number(&w, "auto_time_us", automatic->seconds_per_call * 1e6);
      }
      json_object_end(&w);
    }
  }
  json_array_end(&w);

  json_integer(&w, "failures", results->failures);
  json_object_end(&w);
  json_end(&w);
  return perf_json_close(PROGRAM, file);
}

/* ---- main ---- */

static void print_run_header(const benchmark_settings *settings, const benchmark_results *results) {
  const clmg_device_info *device = &results->device;
  printf(PROGRAM " (clmg %s)\n", clmg_version_string());
  perf_print_device(device);
  printf("target: %.3g nonzeros per matrix (%s); each batch >= %.2f s, fastest of %ld\n",
         results->target_nnz, settings->size_name ? settings->size_name : "device default",
         settings->timing.min_time_s, settings->timing.trials);
  printf("model: %s\n", model_text);
  printf("check: max_i |y_i - ref_i| / sum_j |a_ij x_j| <= %g (double), %g (float)\n",
         double_tolerance, float_tolerance);
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
  if (settings.mtx_dir != NULL && !ensure_directory(settings.mtx_dir)) {
    return 2;
  }
  if (!perf_output_begin(PROGRAM, &settings.output)) {
    return 1;
  }

  clmg_context *context = apputil_open_context(settings.device);
  if (context == NULL) {
    return 1;
  }
  benchmark_results results;
  memset(&results, 0, sizeof results);
  results.device = *clmg_context_device(context);
  results.target_nnz = settings.target_nnz > 0 ? settings.target_nnz
                       : results.device.is_gpu ? large_nnz
                                               : small_nnz;
  print_run_header(&settings, &results);

  if (!perf_measure_copy_bandwidth(context, &results.copy_gb_per_s)) {
    results.failures++;
  }

  results.matrix_count = settings.matrix_count;
  for (size_t m = 0; m < settings.matrix_count; ++m) {
    results.matrices[m].kind = settings.matrices[m];
  }
  for (size_t m = 0; m < results.matrix_count; ++m) {
    run_matrix(context, &settings, &results, m);
  }
  print_summary(&results);

  int json_ok = 1;
  const char *paths[2];
  for (size_t k = 0; k < perf_output_paths(&settings.output, paths); ++k) {
    if (!write_json(paths[k], &settings, &results)) {
      json_ok = 0;
    } else if (strcmp(paths[k], "-") != 0) {
      printf("\nJSON written to %s\n", paths[k]);
    }
  }
  if (results.failures > 0) {
    fprintf(stderr, PROGRAM ": %d failure(s); see the messages above\n", results.failures);
  }
  free(results.rows);
  free(results.skipped);
  clmg_context_destroy(context);
  return (results.failures == 0 && json_ok) ? 0 : 1;
}
