/* What the benchmarks in perf/ share: command-line parsing, the adaptive
 * timing loop, and printing and JSON for the device and copy bandwidth.
 * Messages start with `program` ("clmg_perf_spmv: ..."). */
#ifndef CLMG_PERF_COMMON_H
#define CLMG_PERF_COMMON_H

#include <stddef.h>
#include <stdio.h>

#include "apputil.h"
#include "clmg.h"

/* How a measurement is timed. */
typedef struct perf_timing {
  long fixed_reps;        /* > 0: exactly this many repetitions; 0: adaptive */
  double min_time_s;      /* adaptive: each measurement lasts at least this */
  long trials;            /* timed batches per measurement; the fastest counts */
  long max_adaptive_reps; /* adaptive: never more repetitions than this */
} perf_timing;

/* Parses a finite number > 0 filling all of text; returns 0 if it is not one. */
int perf_parse_positive_number(const char *text, double *value);

/* An option's value that must be an integer (a number) in [min, max],
 * filling all of text; returns 0 after printing "PROGRAM: OPTION wants ...,
 * not TEXT". */
int perf_parse_integer(const char *program, const char *option, const char *text, long long min,
                       long long max, long long *value);
int perf_parse_number(const char *program, const char *option, const char *text, double min,
                      double max, double *value);

/* Reads the option at argv[*index], "--opt VALUE" or "--opt=VALUE", where
 * every option but --help/-h and --json takes a value and must be one of
 * value_options (a NULL-ended list). --json is taken where value_options
 * lists "--output" (perf_output): alone, it comes back with a NULL value;
 * its old spelling "--json FILE" (a following word that is not an option)
 * or "--json=FILE" comes back as "--output" with FILE, after a note on
 * stderr ("--json -" as --json alone). Returns 1 with its name and value
 * (advancing *index past a separate value), -1 for --help, 0 after printing
 * why it is bad. */
int perf_next_option(const char *program, int argc, char **argv, int *index,
                     const char *const *value_options, char name[32], const char **value);

/* --precision double|float|both; returns 0 after printing why it is bad. */
int perf_parse_precision(const char *program, const char *value, int *run_double, int *run_float);

/* --reps, --trials and --min-time: returns 1 when set, 0 after printing why
 * the value is bad, -1 when name is none of them. */
int perf_parse_timing_option(const char *program, const char *name, const char *value,
                             perf_timing *timing);

/* The precisions asked for, double first; returns how many. */
size_t perf_precision_list(int run_double, int run_float, clmg_dtype precisions[2]);

/* Makes room for one more element in a realloc'ed array; returns 0 when out
 * of memory (the array is left as it was). */
int perf_grow_array(void **array, size_t *capacity, size_t count, size_t element_size);

/* Runs one repetition (iteration counts from 0 within a batch). */
typedef clmg_status (*perf_run_once)(const void *operands, long iteration);

/* Times run_once: a warm-up of 3 (which also compiles kernels), then batches
 * timed by wall clock up to a clmg_finish. Adaptive mode grows the repetition
 * count until one batch lasts at least min_time_s; that batch and trials-1
 * more of its size are timed, and the fastest counts (the least disturbed by
 * other work on the machine). */
clmg_status perf_time_adaptive(clmg_context *context, const perf_timing *timing,
                               perf_run_once run_once, const void *operands, long *reps_used,
                               double *seconds_per_call);

/* The operations the benchmarks time most, as perf_run_once functions over
 * their operands: y = A x; one smoother step from x (not from zero); one
 * multigrid cycle on x. */
typedef struct perf_spmv_operands {
  const clmg_matrix *a;
  clmg_vector *x, *y;
} perf_spmv_operands;
clmg_status perf_run_spmv(const void *operands, long iteration);

typedef struct perf_sweep_operands {
  clmg_smoother *smoother;
  const clmg_operator *op;
  const clmg_vector *b;
  clmg_vector *x;
} perf_sweep_operands;
clmg_status perf_run_sweep(const void *operands, long iteration);

typedef struct perf_cycle_operands {
  clmg_multigrid *mg;
  const clmg_vector *b;
  clmg_vector *x;
} perf_cycle_operands;
clmg_status perf_run_cycle(const void *operands, long iteration);

/* Prints "device: platform / name (type, units, memory, fp64)". */
void perf_print_device(const clmg_device_info *device);

/* Measures and prints the copy bandwidth; on failure reports it, sets
 * *gb_per_s to NaN and returns 0. */
int perf_measure_copy_bandwidth(clmg_context *context, double *gb_per_s);

/* The fewest bytes one preconditioned CG iteration moves (the floor its
 * time is compared with): the preconditioner's bytes, CG's read of the
 * matrix a and 15 vector passes of n elements in the precision of a (w = A
 * u: 2, the three dots: 3, the updates of p, s, x and r: 10), and with a
 * preconditioner in float inside double CG the two conversions (12 bytes
 * per element each). */
double perf_cg_iteration_bytes(const clmg_matrix *a, double preconditioner_bytes, int mixed);
/* Jacobi's bytes as a preconditioner of n rows: it reads w and r and
 * writes z, in float when mixed, else double. */
double perf_jacobi_bytes(size_t n, int mixed);

/* A new options database (clmg/solver.h) holding the options string text
 * ("krylov=cg precond=amg tol=1e-8"): how a benchmark builds each solver it
 * measures, the text being what its JSON echoes as "options" (`clmg solve
 * --set` takes it back). On a failure *options is NULL and error says why;
 * clmg_options_destroy the database. */
clmg_status perf_options_parse(const char *text, clmg_options **options, clmg_error *error);

/* Where a benchmark's results go as JSON, the vocabulary of every clmg
 * command: --output FILE writes them to FILE, --json prints them on stdout
 * instead of the table (which then goes nowhere, as clmg bench's). Both
 * may be given. */
typedef struct perf_output {
  const char *path; /* --output FILE; NULL: none */
  int to_stdout;    /* --json */
} perf_output;

/* The two options' lines of a --help text, their descriptions from column
 * `column` (the program's other options' column). */
void perf_output_help(FILE *out, int column);

/* --output and --json (as perf_next_option returns them): returns 1 when
 * set, -1 when name is neither. */
int perf_parse_output_option(const char *name, const char *value, perf_output *output);

/* Call once the options are read, before anything is printed: with --json,
 * stdout from here on goes to /dev/null and the JSON to the real stdout.
 * Returns 0 after printing why that failed. */
int perf_output_begin(const char *program, const perf_output *output);

/* The JSON's destinations in order: the --output file, then "-" (stdout)
 * for --json; returns how many (0 to 2). Write the document to each with
 * perf_json_open and perf_json_close. */
size_t perf_output_paths(const perf_output *output, const char *paths[2]);

/* Opens path for the JSON results (clmg/output_file.h: an earlier file is
 * replaced only once the new one is complete); "-" is stdout (the real one
 * with --json, *file then NULL). Returns the stream and sets *file, or NULL
 * after printing why not. */
FILE *perf_json_open(const char *program, const char *path, clmg_output_file **file);

/* Finishes the file (NULL: stdout, flushed); returns 0 after printing a
 * message when writing failed (the earlier file, if any, is left as it
 * was). */
int perf_json_close(const char *program, clmg_output_file *file);

#endif
