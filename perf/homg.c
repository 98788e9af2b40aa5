/* clmg_perf_homg: the high-occupancy multigrid against its bandwidth floor
 * and against the classic V-cycle and FMG.
 *
 * For each grid size N (powers of two from --n-min to --n-max; nested grids
 * of N + 1 points per side, four-subdomain grids of N):
 *  1. steps: the time of one fused HOMG step at every level, and its
 *     bandwidth floor: the bytes a step must move (clmg_homg_step_bytes:
 *     every point written; the level's points and their source read; three
 *     grids at level 0) over the copy bandwidth measured in the same run.
 *     x_floor = time / floor time (1 is the floor; the H100 target is 1.5).
 *     The variation step (clmg_homg_variation_step_bytes) is timed as a
 *     cycle runs it: out of place on GPUs, in place on CPUs.
 *  2. cycles: one MFMG cycle per schedule (--schedule, default sawtooth)
 *     and MaxI inside a solve: time per work unit (WU, one whole-grid pass)
 *     and x_floor of the whole cycle (its steps, the restriction pyramid and
 *     the residual, at their floors).
 *  3. schedules (double, N up to 1024): one MFMG cycle from x = 0 for each
 *     reading of the cycle (sawtooth, ascent, vshape) and MaxI 2, 4, 32:
 *     steps, work units and the L1 error (the paper's Fig. 4, and its 31
 *     steps at 128^2 with MaxI = 2).
 *  4. solves (double): the discretisation error e_d (V-cycles to the rounding
 *     floor), then the time, cycles and WU each method needs to reach an L1
 *     error of --error-factor x e_d from x = 0: HOMG for each MaxI (the
 *     default schedule; the others at the largest MaxI), the V-cycle and FMG
 *     on nested grids, HOMG on four-subdomain grids.
 * Prints tables; --output FILE writes every row as JSON, --json prints that
 * instead of the tables.
 *
 *   clmg_perf_homg [--device DEV] [--output FILE] [--json] [--size small|large]
 *                  [--n-min N] [--n-max N] [--precision double|float|both]
 *                  [--maxi LIST] [--error-factor F] [--skip-solves 1] [--schedule LIST]
 *                  [--reps R] [--min-time S] [--trials T] */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "clmg.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_homg"
#define MAX_MAXI 8

typedef struct settings {
  const char *device;
  perf_output output;
  size_t n_min, n_max;
  int n_max_given;
  int run_double, run_float;
  int maxi[MAX_MAXI];
  size_t maxi_count;
  double error_factor;
  int skip_solves;
  clmg_homg_schedule_type schedules[3]; /* of the cycle table (default sawtooth) */
  size_t schedule_count;
  perf_timing timing;
} settings;

static void print_usage(FILE *out) {
  fputs("usage: clmg_perf_homg [options]\n"
        "  --device DEV        device string (nvidia, pocl, gpu, cpu, P:D, name); default:\n"
        "                      $CLMG_DEVICE, else the first GPU, else the first CPU\n",
        out);
  perf_output_help(out, 22);
  fputs("  --size S            small (N up to 512) or large (N up to 8192); default\n"
        "                      large on a GPU, small on a CPU\n"
        "  --n-min N           smallest N (default 128); N is rounded up to a power of two\n"
        "  --n-max N           largest N (overrides --size); grids of N + 1 (nested) and\n"
        "                      N (four subdomains) points per side\n"
        "  --precision P       double (default), float or both (solves run in double)\n"
        "  --maxi LIST         MaxI values, comma-separated (default 4,32)\n"
        "  --error-factor F    target L1 error of the solves: F x the discretisation error\n"
        "                      (default 1.1)\n"
        "  --skip-solves 1     only the step and cycle timings\n"
        "  --schedule LIST     the MFMG schedules of the cycle table, comma-separated:\n"
        "                      sawtooth (default), ascent, vshape\n"
        "  --reps R            exactly R timed repetitions per step (default: adaptive)\n"
        "  --min-time S        seconds per adaptive step measurement (default 0.2)\n"
        "  --trials T          timed batches per measurement, the fastest counts (default 2)\n"
        "  --help              this text\n",
        out);
}

static int parse_maxi_list(const char *value, settings *s) {
  s->maxi_count = 0;
  const char *p = value;
  while (*p) {
    char *end = NULL;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno != 0 || v < 1 || v > 4096 || s->maxi_count == MAX_MAXI ||
        (*end != ',' && *end != '\0')) {
      fprintf(stderr, PROGRAM ": --maxi wants up to %d values from 1 to 4096, like 4,32; not %s\n",
              MAX_MAXI, value);
      return 0;
    }
    s->maxi[s->maxi_count++] = (int)v;
    p = *end == ',' ? end + 1 : end;
  }
  return s->maxi_count > 0;
}

/* A comma-separated list of schedule names. */
static int parse_schedule_list(const char *value, settings *s) {
  s->schedule_count = 0;
  const char *p = value;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t length = end ? (size_t)(end - p) : strlen(p);
    char name[16];
    if (length == 0 || length >= sizeof name || s->schedule_count == 3) {
      return 0;
    }
    memcpy(name, p, length);
    name[length] = '\0';
    if (!clmg_homg_schedule_parse(name, &s->schedules[s->schedule_count++])) {
      return 0;
    }
    p = end ? end + 1 : p + length;
  }
  return s->schedule_count > 0;
}

static size_t round_up_power_of_two(double v) {
  size_t p = 4;
  while ((double)p < v)
    p *= 2;
  return p;
}

/* 0: bad arguments (printed), 1: run, 2: --help. */
static int parse_arguments(int argc, char **argv, settings *s) {
  memset(s, 0, sizeof *s);
  s->n_min = 128;
  s->n_max = 0; /* from --size or the device */
  s->run_double = 1;
  s->maxi[0] = 4;
  s->maxi[1] = 32;
  s->maxi_count = 2;
  s->schedules[0] = CLMG_HOMG_SCHEDULE_SAWTOOTH;
  s->schedule_count = 1;
  s->error_factor = 1.1;
  s->timing.min_time_s = 0.2;
  s->timing.trials = 2;
  s->timing.max_adaptive_reps = 100000;
  static const char *const value_options[] = {
      "--device",      "--output",    "--size",     "--n-min",
      "--n-max",       "--precision", "--maxi",     "--error-factor",
      "--skip-solves", "--reps",      "--min-time", "--trials",
      "--schedule",    NULL};
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
      s->device = value;
    } else if (perf_parse_output_option(name, value, &s->output) == 1) {
    } else if (strcmp(name, "--size") == 0) {
      if (strcmp(value, "small") == 0) {
        s->n_max = 512;
      } else if (strcmp(value, "large") == 0) {
        s->n_max = 8192;
      } else {
        fprintf(stderr, PROGRAM ": --size wants small or large, not %s\n", value);
        return 0;
      }
      s->n_max_given = 1;
    } else if (strcmp(name, "--n-min") == 0 || strcmp(name, "--n-max") == 0) {
      if (!perf_parse_positive_number(value, &number) || number < 4 || number > 32768) {
        fprintf(stderr, PROGRAM ": %s wants a size from 4 to 32768, not %s\n", name, value);
        return 0;
      }
      if (strcmp(name, "--n-min") == 0) {
        s->n_min = round_up_power_of_two(number);
      } else {
        s->n_max = round_up_power_of_two(number);
        s->n_max_given = 1;
      }
    } else if (strcmp(name, "--precision") == 0) {
      if (!perf_parse_precision(PROGRAM, value, &s->run_double, &s->run_float)) {
        return 0;
      }
    } else if (strcmp(name, "--maxi") == 0) {
      if (!parse_maxi_list(value, s)) {
        return 0;
      }
    } else if (strcmp(name, "--error-factor") == 0) {
      if (!perf_parse_positive_number(value, &number) || number < 1.0001 || number > 1000) {
        fprintf(stderr, PROGRAM ": --error-factor wants a number above 1, not %s\n", value);
        return 0;
      }
      s->error_factor = number;
    } else if (strcmp(name, "--skip-solves") == 0) {
      s->skip_solves = strcmp(value, "0") != 0;
    } else if (strcmp(name, "--schedule") == 0) {
      if (!parse_schedule_list(value, s)) {
        fprintf(stderr, PROGRAM ": --schedule wants up to 3 of sawtooth, ascent, vshape, not %s\n",
                value);
        return 0;
      }
    } else if (perf_parse_timing_option(PROGRAM, name, value, &s->timing) == 0) {
      return 0;
    }
  }
  return 1;
}

/* ---- results ---- */

typedef struct step_row {
  clmg_dtype precision;
  size_t n;
  int four, level, spacing; /* level 0 is the coarsest; spacing in grid points */
  long reps;
  double seconds, bytes, gb_per_s, ratio_to_copy, x_floor;
  /* the variation step at the same level (not the finest; 0 there) */
  double variation_seconds, variation_bytes, variation_x_floor;
} step_row;

typedef struct cycle_row {
  clmg_dtype precision;
  clmg_homg_schedule_type schedule;
  size_t n;
  int four, maxi, steps;
  double work_units, seconds, seconds_per_wu, floor_seconds, x_floor;
} cycle_row;

typedef struct solve_row {
  size_t n;
  int four;
  clmg_homg_method method;
  clmg_homg_schedule_type schedule; /* MFMG */
  int maxi;
  double discretisation_error, target;
  int converged, cycles, iterations;
  double work_units, seconds, l1_error;
} solve_row;

/* One MFMG cycle from x = 0 with a schedule (section 4). */
typedef struct schedule_row {
  clmg_homg_schedule_type schedule;
  size_t n;
  int four, maxi, steps;
  double work_units, l1_error, seconds;
} schedule_row;

typedef struct results {
  clmg_device_info device;
  double copy_gb_per_s;
  step_row *steps;
  size_t step_count, step_capacity;
  cycle_row *cycles;
  size_t cycle_count, cycle_capacity;
  schedule_row *schedules;
  size_t schedule_count, schedule_capacity;
  solve_row *solves;
  size_t solve_count, solve_capacity;
  int failures;
  char skipped[16][320];
  int skipped_count;
} results;

#define APPEND(r, array, count, capacity, row)                                                     \
  do {                                                                                             \
    if (perf_grow_array((void **)&(r)->array, &(r)->capacity, (r)->count, sizeof *(r)->array)) {   \
      (r)->array[(r)->count++] = (row);                                                            \
    } else {                                                                                       \
      fprintf(stderr, PROGRAM ": out of host memory for results\n");                               \
      (r)->failures++;                                                                             \
    }                                                                                              \
  } while (0)

static void skip(results *r, const char *format, size_t n, const char *why) {
  char text[64];
  snprintf(text, sizeof text, format, n);
  printf("  skipped: %s: %s\n", text, why);
  fflush(stdout);
  if (r->skipped_count < 16) {
    snprintf(r->skipped[r->skipped_count++], sizeof r->skipped[0], "%s: %.200s", text, why);
  }
}

/* ---- problem vectors ---- */

typedef struct grid_problem {
  size_t n;
  clmg_vector *f, *u, *x, *a, *b;
} grid_problem;

static void free_problem(grid_problem *p) {
  clmg_vector_destroy(p->f);
  clmg_vector_destroy(p->u);
  clmg_vector_destroy(p->x);
  clmg_vector_destroy(p->a);
  clmg_vector_destroy(p->b);
  memset(p, 0, sizeof *p);
}

static clmg_status upload_values(clmg_vector *v, const double *values, size_t count) {
  if (clmg_vector_type(v) == CLMG_DOUBLE) {
    return clmg_vector_upload(v, values);
  }
  float *f = malloc(count * sizeof *f);
  if (!f) {
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t i = 0; i < count; ++i) {
    f[i] = (float)values[i];
  }
  clmg_status status = clmg_vector_upload(v, f);
  free(f);
  return status;
}

/* f, u and three work grids of the test problem of Becerra-Sagredo et al. 2011. */
static clmg_status make_problem(clmg_context *context, clmg_dtype precision, size_t n,
                                grid_problem *p) {
  memset(p, 0, sizeof *p);
  p->n = n;
  size_t points = n * n;
  double *f = malloc(points * sizeof *f), *u = malloc(points * sizeof *u);
  clmg_status status = f && u ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  if (status == CLMG_SUCCESS) {
    clmg_homg_paper_problem(n, f, u);
  }
  clmg_vector **all[] = {&p->f, &p->u, &p->x, &p->a, &p->b};
  for (int i = 0; i < 5 && status == CLMG_SUCCESS; ++i) {
    status = clmg_vector_create(context, precision, points, all[i]);
  }
  if (status == CLMG_SUCCESS) {
    status = upload_values(p->f, f, points);
  }
  if (status == CLMG_SUCCESS) {
    status = upload_values(p->u, u, points);
  }
  free(f);
  free(u);
  if (status != CLMG_SUCCESS) {
    free_problem(p);
  }
  return status;
}

/* ---- steps ---- */

typedef struct timed_step {
  clmg_homg *solver;
  int level;
  clmg_vector *a, *b;
  int out_of_place; /* the variation step (run_variation_step) */
} timed_step;

/* Alternates a -> b and b -> a, like the steps of a cycle. */
static clmg_status run_step(const void *data, long iteration) {
  const timed_step *t = data;
  return iteration % 2 == 0 ? clmg_homg_step(t->solver, t->level, t->a, t->b)
                            : clmg_homg_step(t->solver, t->level, t->b, t->a);
}

/* The returning schedules' step as a cycle runs it: on GPUs out of place,
 * alternating a -> b and b -> a (one pass); on CPUs in place. */
static clmg_status run_variation_step(const void *data, long iteration) {
  const timed_step *t = data;
  if (!t->out_of_place) {
    return clmg_homg_variation_step(t->solver, t->level, t->a, t->a);
  }
  return iteration % 2 == 0 ? clmg_homg_variation_step(t->solver, t->level, t->a, t->b)
                            : clmg_homg_variation_step(t->solver, t->level, t->b, t->a);
}

static clmg_homg *create_scheduled_solver(clmg_context *context, size_t n, clmg_dtype precision,
                                          clmg_homg_method method, clmg_homg_schedule_type schedule,
                                          int maxi, int cycles, double tol, double error_tol,
                                          double stagnation, results *r) {
  clmg_homg_options options;
  clmg_homg_options_defaults(&options);
  options.method = method;
  options.schedule = schedule;
  options.precision = precision;
  options.max_iterations_per_level = maxi;
  options.max_cycles = cycles;
  options.relative_tolerance = tol;
  options.error_tolerance = error_tol;
  options.stagnation_factor = stagnation;
  clmg_homg *solver = NULL;
  clmg_status status = clmg_homg_create(context, n, &options, &solver);
  if (status != CLMG_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "creating the %s solver, n = %zu", clmg_homg_method_name(method),
             n);
    apputil_report(context, status, what);
    if (status != CLMG_ERROR_OUT_OF_DEVICE_MEMORY) {
      r->failures++;
    }
    return NULL;
  }
  return solver;
}

/* The same with the default (sawtooth) schedule. */
static clmg_homg *create_solver(clmg_context *context, size_t n, clmg_dtype precision,
                                clmg_homg_method method, int maxi, int cycles, double tol,
                                double error_tol, double stagnation, results *r) {
  return create_scheduled_solver(context, n, precision, method, CLMG_HOMG_SCHEDULE_SAWTOOTH, maxi,
                                 cycles, tol, error_tol, stagnation, r);
}

/* The floor time of level `level`'s step. */
static double step_floor_seconds(const clmg_homg *solver, int level, double copy_gb_per_s) {
  uint64_t bytes = 0;
  clmg_homg_step_bytes(solver, level, &bytes);
  return (double)bytes / (copy_gb_per_s * 1e9);
}

static void time_steps(clmg_context *context, const settings *s, clmg_dtype precision,
                       grid_problem *p, int four, results *r) {
  clmg_homg *solver = create_solver(context, p->n, precision, CLMG_HOMG_MFMG, 32, 1, 0, 0, 0, r);
  if (!solver) {
    return;
  }
  clmg_homg_info info;
  clmg_homg_get_info(solver, &info);
  clmg_status status = clmg_homg_set_source(solver, p->f);
  if (status == CLMG_SUCCESS) {
    status = clmg_copy(p->u, p->a);
  }
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "setting the source");
    r->failures++;
    clmg_homg_destroy(solver);
    return;
  }
  /* finest first, as the table always ran */
  for (int level = info.levels - 1; level >= 0; --level) {
    timed_step t = {solver, level, p->a, p->b, clmg_context_device(context)->is_gpu};
    step_row row;
    memset(&row, 0, sizeof row);
    row.precision = precision;
    row.n = p->n;
    row.four = four;
    row.level = level;
    row.spacing = 1 << (info.levels - 1 - level);
    status = perf_time_adaptive(context, &s->timing, run_step, &t, &row.reps, &row.seconds);
    if (status != CLMG_SUCCESS) {
      apputil_report(context, status, "timing a step");
      r->failures++;
      continue;
    }
    uint64_t bytes = 0;
    clmg_homg_step_bytes(solver, level, &bytes);
    row.bytes = (double)bytes;
    row.gb_per_s = row.bytes / row.seconds * 1e-9;
    row.ratio_to_copy = row.gb_per_s / r->copy_gb_per_s;
    row.x_floor = row.seconds / step_floor_seconds(solver, level, r->copy_gb_per_s);
    if (level < info.levels - 1) {
      long reps = 0;
      status = perf_time_adaptive(context, &s->timing, run_variation_step, &t, &reps,
                                  &row.variation_seconds);
      if (status != CLMG_SUCCESS) {
        apputil_report(context, status, "timing a variation step");
        r->failures++;
        continue;
      }
      clmg_homg_variation_step_bytes(solver, level, &bytes);
      row.variation_bytes = (double)bytes;
      row.variation_x_floor =
          row.variation_seconds / (row.variation_bytes / (r->copy_gb_per_s * 1e9));
    }
    printf("%-6s %-6s %6zu %5d %7d %10.2f %12.0f %9.2f %7.3f %7.2f %10.2f %7.2f\n",
           clmg_dtype_name(precision), four ? "four" : "nested", p->n, level, row.spacing,
           row.seconds * 1e6, row.bytes, row.gb_per_s, row.ratio_to_copy, row.x_floor,
           row.variation_seconds * 1e6, row.variation_x_floor);
    fflush(stdout);
    APPEND(r, steps, step_count, step_capacity, row);
  }
  clmg_homg_destroy(solver);
}

/* The floor time of one MFMG cycle: its steps, the pyramid (every frame
 * reads the grid and writes its levels) and the residual (reads x and f,
 * writes r). */
static double cycle_floor_seconds(const clmg_homg *solver, const clmg_homg_info *info,
                                  clmg_homg_schedule_type schedule, double element,
                                  double copy_gb_per_s) {
  size_t count = 0;
  clmg_homg_schedule(solver, NULL, 0, &count);
  int *levels = malloc((count ? count : 1) * sizeof *levels);
  if (!levels) {
    return NAN;
  }
  clmg_homg_schedule(solver, levels, count, &count);
  /* the returning schedules' coarse steps are variation steps */
  const int variations = schedule != CLMG_HOMG_SCHEDULE_ASCENT;
  double seconds = 0;
  for (size_t k = 0; k < count; ++k) {
    uint64_t bytes = 0;
    if (variations && levels[k] < info->levels - 1) {
      clmg_homg_variation_step_bytes(solver, levels[k], &bytes);
      seconds += (double)bytes / (copy_gb_per_s * 1e9);
    } else {
      seconds += step_floor_seconds(solver, levels[k], copy_gb_per_s);
    }
  }
  free(levels);
  double n = (double)info->n, frames = info->four_subdomains ? 4 : 1, pyramid = 0;
  for (int m = 1; m < info->levels; ++m) {
    double side = info->four_subdomains ? n / (double)(1 << m) + 1 : (n - 1) / (1 << m) + 1;
    pyramid += side * side;
  }
  double bytes = element * (frames * (n * n + 2 * pyramid) + 3 * n * n);
  return seconds + bytes / (copy_gb_per_s * 1e9);
}

static void time_cycles(clmg_context *context, const settings *s, clmg_dtype precision,
                        grid_problem *p, int four, results *r) {
  for (size_t c = 0; c < s->schedule_count * s->maxi_count; ++c) {
    const clmg_homg_schedule_type schedule = s->schedules[c / s->maxi_count];
    const size_t k = c % s->maxi_count;
    /* Two cycles; the second is timed (the first warms up) from its record. */
    clmg_homg *solver = create_scheduled_solver(context, p->n, precision, CLMG_HOMG_MFMG, schedule,
                                                s->maxi[k], 2, 0, 0, 0, r);
    if (!solver) {
      continue;
    }
    clmg_homg_info info;
    clmg_homg_get_info(solver, &info);
    clmg_homg_result result;
    double best = INFINITY, work = 0;
    clmg_status status = CLMG_SUCCESS;
    for (long trial = 0; trial < s->timing.trials && status == CLMG_SUCCESS; ++trial) {
      status = clmg_vector_fill(p->x, 0.0);
      if (status == CLMG_SUCCESS) {
        status = clmg_homg_solve(solver, p->f, p->x, NULL, &result);
      }
      if (status == CLMG_SUCCESS && result.history_length == 3) {
        best = fmin(best, result.history[2].seconds - result.history[1].seconds);
        work = result.history[2].work_units - result.history[1].work_units;
      }
      clmg_homg_result_free(&result);
    }
    if (status != CLMG_SUCCESS) {
      apputil_report(context, status, "timing a cycle");
      r->failures++;
      clmg_homg_destroy(solver);
      continue;
    }
    cycle_row row;
    row.precision = precision;
    row.schedule = schedule;
    row.n = p->n;
    row.four = four;
    row.maxi = s->maxi[k];
    row.steps = info.steps_per_cycle;
    row.work_units = work;
    row.seconds = best;
    row.seconds_per_wu = best / work;
    row.floor_seconds = cycle_floor_seconds(solver, &info, schedule,
                                            (double)clmg_dtype_size(precision), r->copy_gb_per_s);
    row.x_floor = row.seconds / row.floor_seconds;
    printf("%-6s %-6s %6zu %-9s %5d %6d %9.2f %12.3f %12.4f %9.2f\n", clmg_dtype_name(precision),
           four ? "four" : "nested", p->n, clmg_homg_schedule_name(schedule), row.maxi, row.steps,
           row.work_units, row.seconds * 1e3, row.seconds_per_wu * 1e3, row.x_floor);
    fflush(stdout);
    APPEND(r, cycles, cycle_count, cycle_capacity, row);
    clmg_homg_destroy(solver);
  }
}

/* ---- solves to a target error ---- */

/* Solves from x = 0; the fastest of `trials` solves when each is short. */
static clmg_status timed_solve(clmg_homg *solver, grid_problem *p, long trials,
                               clmg_homg_result *best) {
  memset(best, 0, sizeof *best);
  best->time_s = INFINITY;
  clmg_status status = CLMG_SUCCESS;
  for (long t = 0; t < trials; ++t) {
    clmg_homg_result result;
    status = clmg_vector_fill(p->x, 0.0);
    if (status == CLMG_SUCCESS) {
      status = clmg_homg_solve(solver, p->f, p->x, p->u, &result);
    }
    if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED) {
      return status;
    }
    if (result.time_s < best->time_s) {
      clmg_homg_result_free(best);
      *best = result;
    } else {
      clmg_homg_result_free(&result);
    }
    if (best->time_s > 2.0) {
      break; /* long solves are timed once */
    }
  }
  return status;
}

static void print_solve(const solve_row *row) {
  printf("%-6s %6zu %-7s %-9s %5d %10.4e %4s %6d %9.1f %10.4f %10.4e\n",
         row->four ? "four" : "nested", row->n, clmg_homg_method_name(row->method),
         row->method == CLMG_HOMG_MFMG ? clmg_homg_schedule_name(row->schedule) : "-", row->maxi,
         row->target, row->converged ? "yes" : "no", row->cycles, row->work_units, row->seconds,
         row->l1_error);
  fflush(stdout);
}

static void run_solves(clmg_context *context, const settings *s, grid_problem *p, int four,
                       results *r) {
  /* The discretisation error: cycles until the residual stops falling. */
  clmg_homg_method reference_method = four ? CLMG_HOMG_MFMG : CLMG_HOMG_VCYCLE;
  clmg_homg *solver =
      create_solver(context, p->n, CLMG_DOUBLE, reference_method, 8, 200, 1e-12, 0, 1.1, r);
  if (!solver) {
    return;
  }
  clmg_homg_result result;
  clmg_status status = timed_solve(solver, p, 1, &result);
  clmg_homg_destroy(solver);
  if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED) {
    apputil_report(context, status, "the discretisation error");
    clmg_homg_result_free(&result);
    r->failures++;
    return;
  }
  double discretisation = result.l1_error, target = s->error_factor * discretisation;
  clmg_homg_result_free(&result);

  clmg_homg_method methods[MAX_MAXI + 4];
  clmg_homg_schedule_type schedules[MAX_MAXI + 4] = {CLMG_HOMG_SCHEDULE_SAWTOOTH};
  int maxis[MAX_MAXI + 4];
  size_t count = 0;
  for (size_t k = 0; k < s->maxi_count; ++k) {
    methods[count] = CLMG_HOMG_MFMG;
    schedules[count] = CLMG_HOMG_SCHEDULE_SAWTOOTH;
    maxis[count++] = s->maxi[k];
  }
  /* the other readings of the cycle at the largest MaxI */
  const clmg_homg_schedule_type others[2] = {CLMG_HOMG_SCHEDULE_ASCENT, CLMG_HOMG_SCHEDULE_VSHAPE};
  for (int k = 0; k < 2 && s->maxi_count > 0; ++k) {
    methods[count] = CLMG_HOMG_MFMG;
    schedules[count] = others[k];
    maxis[count++] = s->maxi[s->maxi_count - 1];
  }
  if (!four) {
    methods[count] = CLMG_HOMG_VCYCLE;
    maxis[count++] = 0;
    methods[count] = CLMG_HOMG_FMG;
    maxis[count++] = 0;
  }
  for (size_t k = 0; k < count; ++k) {
    solver = create_scheduled_solver(context, p->n, CLMG_DOUBLE, methods[k], schedules[k],
                                     maxis[k] ? maxis[k] : 32, 500, 0, target, 0, r);
    if (!solver) {
      continue;
    }
    status = timed_solve(solver, p, s->timing.trials, &result);
    clmg_homg_destroy(solver);
    if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED) {
      apputil_report(context, status, "a timed solve");
      r->failures++;
      clmg_homg_result_free(&result);
      continue;
    }
    solve_row row;
    row.n = p->n;
    row.four = four;
    row.method = methods[k];
    row.schedule = schedules[k];
    row.maxi = maxis[k];
    row.discretisation_error = discretisation;
    row.target = target;
    row.converged = result.converged;
    row.cycles = result.cycles;
    row.iterations = result.iterations;
    row.work_units = result.work_units;
    row.seconds = result.time_s;
    row.l1_error = result.l1_error;
    clmg_homg_result_free(&result);
    print_solve(&row);
    APPEND(r, solves, solve_count, solve_capacity, row);
  }
}

/* Section 4: one cycle from x = 0 per schedule and MaxI (2, 4, 32): steps,
 * work units, the L1 error after it (the paper's Fig. 4 and its 31 steps at
 * 128^2 with MaxI = 2). */
static void run_schedules(clmg_context *context, const settings *s, grid_problem *p, int four,
                          results *r) {
  const clmg_homg_schedule_type schedules[3] = {
      CLMG_HOMG_SCHEDULE_SAWTOOTH, CLMG_HOMG_SCHEDULE_ASCENT, CLMG_HOMG_SCHEDULE_VSHAPE};
  const int maxis[3] = {2, 4, 32};
  for (int k = 0; k < 3; ++k) {
    schedule_row row = {schedules[k], p->n, four, 0, 0, 0, 0, 0};
    printf("%-9s %-6s %6zu", clmg_homg_schedule_name(schedules[k]), four ? "four" : "nested", p->n);
    for (int m = 0; m < 3; ++m) {
      clmg_homg *solver = create_scheduled_solver(context, p->n, CLMG_DOUBLE, CLMG_HOMG_MFMG,
                                                  schedules[k], maxis[m], 1, 0, 0, 0, r);
      if (!solver)
        continue;
      clmg_homg_info info;
      clmg_homg_get_info(solver, &info);
      clmg_homg_result result;
      clmg_status status = timed_solve(solver, p, s->timing.trials, &result);
      clmg_homg_destroy(solver);
      if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED) {
        apputil_report(context, status, "one cycle");
        r->failures++;
        clmg_homg_result_free(&result);
        continue;
      }
      row.maxi = maxis[m];
      row.steps = info.steps_per_cycle;
      row.work_units = result.work_units;
      row.l1_error = result.l1_error;
      row.seconds = result.time_s;
      clmg_homg_result_free(&result);
      printf("  %5d %9.1f %8.4f", row.steps, row.work_units, row.l1_error);
      APPEND(r, schedules, schedule_count, schedule_capacity, row);
    }
    printf("\n");
    fflush(stdout);
  }
  (void)s;
}

/* ---- the run ---- */

/* Compiles the kernels and lets the runtime finish its first launches. */
static clmg_status warm_up(clmg_context *context, clmg_dtype precision) {
  const clmg_homg_method methods[] = {CLMG_HOMG_MFMG, CLMG_HOMG_VCYCLE, CLMG_HOMG_FMG};
  clmg_status status = CLMG_SUCCESS;
  for (int m = 0; m < 3 && status == CLMG_SUCCESS; ++m) {
    for (size_t n = 16; n <= 17 && status == CLMG_SUCCESS; ++n) {
      if (n == 16 && methods[m] != CLMG_HOMG_MFMG) {
        continue;
      }
      grid_problem p;
      status = make_problem(context, precision, n, &p);
      clmg_homg_options options;
      clmg_homg_options_defaults(&options);
      options.method = methods[m];
      options.precision = precision;
      options.max_cycles = 2;
      options.relative_tolerance = 0;
      clmg_homg *solver = NULL;
      if (status == CLMG_SUCCESS) {
        status = clmg_homg_create(context, n, &options, &solver);
      }
      if (status == CLMG_SUCCESS) {
        status = clmg_homg_solve(solver, p.f, p.x, p.u, NULL);
      }
      clmg_homg_destroy(solver);
      free_problem(&p);
    }
  }
  return status;
}

static void write_json(FILE *out, const settings *s, const results *r) {
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "homg");
  json_device(&w, &r->device);
  json_number(&w, "copy_gb_per_s", r->copy_gb_per_s);
  json_object_begin(&w, "settings");
  json_integer(&w, "n_min", (long long)s->n_min);
  json_integer(&w, "n_max", (long long)s->n_max);
  json_number(&w, "error_factor", s->error_factor);
  json_array_begin(&w, "cycle_schedules");
  for (size_t k = 0; k < s->schedule_count; ++k) {
    json_string(&w, NULL, clmg_homg_schedule_name(s->schedules[k]));
  }
  json_array_end(&w);
  json_array_begin(&w, "maxi");
  for (size_t k = 0; k < s->maxi_count; ++k) {
    json_integer(&w, NULL, s->maxi[k]);
  }
  json_array_end(&w);
  json_number(&w, "min_time_s", s->timing.min_time_s);
  json_integer(&w, "trials", s->timing.trials);
  json_object_end(&w);
  json_array_begin(&w, "steps");
  for (size_t k = 0; k < r->step_count; ++k) {
    const step_row *row = &r->steps[k];
    json_object_begin(&w, NULL);
    json_string(&w, "precision", clmg_dtype_name(row->precision));
    json_string(&w, "grid", row->four ? "four-subdomain" : "nested");
    json_integer(&w, "n", (long long)row->n);
    json_integer(&w, "level", row->level);
    json_integer(&w, "spacing", row->spacing);
    json_integer(&w, "reps", row->reps);
    json_number(&w, "seconds", row->seconds);
    json_number(&w, "floor_bytes", row->bytes);
    json_number(&w, "gb_per_s", row->gb_per_s);
    json_number(&w, "ratio_to_copy", row->ratio_to_copy);
    json_number(&w, "x_floor", row->x_floor);
    if (row->variation_bytes > 0) {
      json_number(&w, "variation_seconds", row->variation_seconds);
      json_number(&w, "variation_floor_bytes", row->variation_bytes);
      json_number(&w, "variation_x_floor", row->variation_x_floor);
    }
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "cycles");
  for (size_t k = 0; k < r->cycle_count; ++k) {
    const cycle_row *row = &r->cycles[k];
    json_object_begin(&w, NULL);
    json_string(&w, "precision", clmg_dtype_name(row->precision));
    json_string(&w, "grid", row->four ? "four-subdomain" : "nested");
    json_integer(&w, "n", (long long)row->n);
    json_string(&w, "schedule", clmg_homg_schedule_name(row->schedule));
    json_integer(&w, "maxi", row->maxi);
    json_integer(&w, "steps", row->steps);
    json_number(&w, "work_units", row->work_units);
    json_number(&w, "seconds", row->seconds);
    json_number(&w, "seconds_per_work_unit", row->seconds_per_wu);
    json_number(&w, "floor_seconds", row->floor_seconds);
    json_number(&w, "x_floor", row->x_floor);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "solves");
  for (size_t k = 0; k < r->solve_count; ++k) {
    const solve_row *row = &r->solves[k];
    json_object_begin(&w, NULL);
    json_string(&w, "grid", row->four ? "four-subdomain" : "nested");
    json_integer(&w, "n", (long long)row->n);
    json_string(&w, "method", clmg_homg_method_name(row->method));
    if (row->method == CLMG_HOMG_MFMG) {
      json_integer(&w, "maxi", row->maxi);
      json_string(&w, "schedule", clmg_homg_schedule_name(row->schedule));
    }
    json_number(&w, "discretisation_error", row->discretisation_error);
    json_number(&w, "target_l1_error", row->target);
    json_bool(&w, "reached", row->converged);
    json_integer(&w, "cycles", row->cycles);
    json_integer(&w, "iterations", row->iterations);
    json_number(&w, "work_units", row->work_units);
    json_number(&w, "solve_s", row->seconds);
    json_number(&w, "l1_error", row->l1_error);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "schedules");
  for (size_t k = 0; k < r->schedule_count; ++k) {
    const schedule_row *row = &r->schedules[k];
    json_object_begin(&w, NULL);
    json_string(&w, "schedule", clmg_homg_schedule_name(row->schedule));
    json_string(&w, "grid", row->four ? "four-subdomain" : "nested");
    json_integer(&w, "n", (long long)row->n);
    json_integer(&w, "maxi", row->maxi);
    json_integer(&w, "steps", row->steps);
    json_number(&w, "work_units", row->work_units);
    json_number(&w, "l1_error", row->l1_error);
    json_number(&w, "seconds", row->seconds);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "skipped");
  for (int k = 0; k < r->skipped_count; ++k) {
    json_string(&w, NULL, r->skipped[k]);
  }
  json_array_end(&w);
  json_integer(&w, "failures", r->failures);
  json_object_end(&w);
  json_end(&w);
}

/* Device bytes one grid kind needs at most (problem + solver), a bound. */
static double bytes_needed(size_t n, clmg_dtype precision, int four) {
  double grid = (double)n * (double)n * (double)clmg_dtype_size(precision);
  return grid * (5 + 3 + (four ? 4.0 / 3 : 1.0 / 3) + 2.0 / 3);
}

int main(int argc, char **argv) {
  settings s;
  int parsed = parse_arguments(argc, argv, &s);
  if (parsed == 2) {
    return 0;
  }
  if (parsed == 0) {
    return 2;
  }
  if (!perf_output_begin(PROGRAM, &s.output)) {
    return 1;
  }
  clmg_context *context = apputil_open_context(s.device);
  if (!context) {
    return 1;
  }
  results r;
  memset(&r, 0, sizeof r);
  r.device = *clmg_context_device(context);
  if (!s.n_max_given) {
    s.n_max = r.device.is_gpu ? 8192 : 512;
  }
  if (s.n_min > s.n_max) {
    s.n_min = s.n_max;
  }
  perf_print_device(&r.device);
  if (!perf_measure_copy_bandwidth(context, &r.copy_gb_per_s)) {
    clmg_context_destroy(context);
    return 1;
  }

  clmg_dtype precisions[2];
  size_t precision_count = perf_precision_list(s.run_double, s.run_float, precisions);
  for (size_t k = 0; k < precision_count; ++k) {
    clmg_status status = warm_up(context, precisions[k]);
    if (status != CLMG_SUCCESS) {
      apputil_report(context, status, "warming up");
      clmg_context_destroy(context);
      return 1;
    }
  }

  printf("\nHOMG steps: one fused step per level (0 the coarsest; the finest, spacing 1, is a\n"
         "damped Jacobi sweep);\n"
         "floor = clmg_homg_step_bytes / copy bandwidth; x_floor = time / floor\n");
  printf("%-6s %-6s %6s %5s %7s %10s %12s %9s %7s %7s %10s %7s\n", "prec", "grid", "n", "level",
         "spacing", "us/step", "floor_bytes", "GB/s", "ratio", "x_floor", "us/var", "x_floor");
  for (size_t k = 0; k < precision_count; ++k) {
    for (size_t N = s.n_min; N <= s.n_max; N *= 2) {
      for (int four = 0; four < 2; ++four) {
        size_t n = four ? N : N + 1;
        if (bytes_needed(n, precisions[k], four) > 0.8 * (double)r.device.global_mem_bytes) {
          skip(&r, "steps n = %zu", n, "more than 80% of the device memory");
          continue;
        }
        grid_problem p;
        clmg_status status = make_problem(context, precisions[k], n, &p);
        if (status != CLMG_SUCCESS) {
          skip(&r, "steps n = %zu", n, clmg_context_message(context));
          continue;
        }
        time_steps(context, &s, precisions[k], &p, four, &r);
        free_problem(&p);
      }
    }
  }

  printf("\nMFMG cycles (one restarted cycle inside a solve: steps, pyramid, residual);\n"
         "x_floor = time / (the cycle's bytes at their floors / copy bandwidth)\n");
  printf("%-6s %-6s %6s %-9s %5s %6s %9s %12s %12s %9s\n", "prec", "grid", "n", "schedule", "maxi",
         "steps", "WU", "ms/cycle", "ms/WU", "x_floor");
  for (size_t k = 0; k < precision_count; ++k) {
    for (size_t N = s.n_min; N <= s.n_max; N *= 2) {
      for (int four = 0; four < 2; ++four) {
        size_t n = four ? N : N + 1;
        if (bytes_needed(n, precisions[k], four) > 0.8 * (double)r.device.global_mem_bytes) {
          continue;
        }
        grid_problem p;
        if (make_problem(context, precisions[k], n, &p) != CLMG_SUCCESS) {
          skip(&r, "cycles n = %zu", n, clmg_context_message(context));
          continue;
        }
        time_cycles(context, &s, precisions[k], &p, four, &r);
        free_problem(&p);
      }
    }
  }

  if (!s.skip_solves && s.run_double) {
    printf("\nSchedules: one MFMG cycle from x = 0 (double); per MaxI 2, 4, 32 the steps, work "
           "units and L1 error\n(the paper: 31 steps at 128^2 with MaxI 2; errors 5%% at MaxI "
           "4, 1.6%% at MaxI 32)\n");
    printf("%-9s %-6s %6s  %5s %9s %8s  %5s %9s %8s  %5s %9s %8s\n", "schedule", "grid", "n",
           "steps", "WU", "MaxI2", "steps", "WU", "MaxI4", "steps", "WU", "MaxI32");
    for (size_t N = s.n_min; N <= s.n_max && N <= 1024; N *= 2) {
      for (int four = 0; four < 2; ++four) {
        size_t n = four ? N : N + 1;
        grid_problem p;
        if (make_problem(context, CLMG_DOUBLE, n, &p) != CLMG_SUCCESS) {
          skip(&r, "schedules n = %zu", n, clmg_context_message(context));
          continue;
        }
        run_schedules(context, &s, &p, four, &r);
        free_problem(&p);
      }
    }
    printf("\nTime to an L1 error of %.3g x the discretisation error, from x = 0 (double)\n",
           s.error_factor);
    printf("%-6s %6s %-7s %-9s %5s %10s %4s %6s %9s %10s %10s\n", "grid", "n", "method", "schedule",
           "maxi", "target", "met", "cycles", "WU", "solve_s", "L1 error");
    for (size_t N = s.n_min; N <= s.n_max; N *= 2) {
      for (int four = 0; four < 2; ++four) {
        size_t n = four ? N : N + 1;
        if (bytes_needed(n, CLMG_DOUBLE, four) > 0.8 * (double)r.device.global_mem_bytes) {
          skip(&r, "solves n = %zu", n, "more than 80% of the device memory");
          continue;
        }
        grid_problem p;
        if (make_problem(context, CLMG_DOUBLE, n, &p) != CLMG_SUCCESS) {
          skip(&r, "solves n = %zu", n, clmg_context_message(context));
          continue;
        }
        run_solves(context, &s, &p, four, &r);
        free_problem(&p);
      }
    }
  }

  int exit_code = r.failures ? 1 : 0;
  const char *paths[2];
  for (size_t k = 0; k < perf_output_paths(&s.output, paths); ++k) {
    clmg_output_file *file;
    FILE *out = perf_json_open(PROGRAM, paths[k], &file);
    if (!out) {
      exit_code = 1;
    } else {
      write_json(out, &s, &r);
      if (!perf_json_close(PROGRAM, file)) {
        exit_code = 1;
      }
    }
  }
  if (r.failures) {
    fprintf(stderr, PROGRAM ": %d failures\n", r.failures);
  }
  free(r.steps);
  free(r.cycles);
  free(r.solves);
  free(r.schedules);
  clmg_context_destroy(context);
  return exit_code;
}
