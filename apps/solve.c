/* clmg solve: reads a sparse SPD matrix (and a right-hand side) from Matrix
 * Market files, solves A x = b with conjugate gradients on the device and
 * reports the residual history, the timings and, when b was made as A*1, the
 * error against the known solution. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "cli.h"
#include "perf_common.h"
#include "subcommands.h"

#include <cjson/cJSON.h>

/* ---- options ---- */

/* A matrix counts as symmetric when a_ij and a_ji differ by at most this,
 * relative to the larger: loose enough for files written with a few digits
 * less than a double has, tight enough to catch a nonsymmetric matrix. */
const double solve_symmetry_tolerance = 1e-8;

/* Iterations up to which the whole residual history is printed. */
enum { FULL_HISTORY_ITERATIONS = 50, SAMPLED_HISTORY_LINES = 25 };

void solve_print_usage(FILE *out) {
  fputs("Usage: clmg solve [OPTIONS] A.mtx [b.mtx]\n"
        "\n"
        "Solves A x = b with a Krylov method on an OpenCL device: conjugate gradients\n"
        "for symmetric positive definite A, GMRES(m) or BiCGStab for any square A. A is\n"
        "a Matrix Market file (coordinate or array; symmetric storage is expanded); b is\n"
        "a Matrix Market vector (n x 1 array or coordinate). Without b, the right-hand\n"
        "side is b = A*1, so the exact solution is all ones and the error of x is\n"
        "reported too. Every method stops only when the residual recomputed from x,\n"
        "||b - A x||, meets the tolerance.\n"
        "\n"
        "For CG, A is checked first: symmetric (|a_ij - a_ji| <= 1e-8 of the larger)\n"
        "and with a positive diagonal, as every SPD matrix has.\n"
        "\n"
        "Options:\n" SOLVE_OPTIONS_HELP
        "  -d, --device STR         device: nvidia, pocl, gpu, cpu, P:D, or part of a name\n"
        "      --json               print one JSON object on stdout instead of text (on a\n"
        "                           failure too: status and message)\n"
        "  -h, --help               show this help\n"
        "\n"
        "Output: rows, nonzeros, the device format, the precision; the relative residual\n"
        "||r||/||b|| per iteration (all of them up to 50 iterations, a sample beyond;\n"
        "a progress line on stderr about every second while a long solve runs); then\n"
        "the iterations, the relative residual as the method tracked it and recomputed\n"
        "as ||b - A x||/||b||, and the timings:\n"
        "  setup_s    reading the files, uploading and building the device matrix and\n"
        "             the preconditioner\n"
        "  kernels_s  compiling the kernels or loading them from the cache (one warm-up\n"
        "             iteration, so that solve_s is the solve alone)\n"
        "  solve_s    the solve\n"
        "The first run on a device compiles the OpenCL kernels (seconds) and says so on\n"
        "stderr, with the cache directory; later runs load them from the cache.\n"
        "\n"
        "--json prints one object on stdout: matrix, rows, nonzeros, format (csr, ellr,\n"
        "sell, csr-adaptive, hybrid: the name) and format_description, precision, method,\n"
        "device, status and message, converged, iterations, relative_residual,\n"
        "true_relative_residual, setup_s, kernels_s, solve_s, history (with --view also\n"
        "hierarchy, operator_complexity, grid_complexity, solver_setup: the seconds of\n"
        "the solver's setup phases, and, for AMG, amg_setup: those of its phases; with CG, "
        "iteration_bytes: the fewest bytes an\n"
        "iteration moves, whose time at the copy bandwidth is its floor). On any failure, bad "
        "usage included, it\n"
        "still prints one object with status (\"usage_error\" or the library's status,\n"
        "e.g. \"not converged\") and message.\n"
        "\n"
        "Distributed (a build with MPI): mpirun -np N clmg solve A.mtx ... reads A (and\n"
        "b) on rank 0 and gives every rank an even block of rows; each rank uses one\n"
        "OpenCL device (the GPUs of its host in turn, or the one --device names, e.g.\n"
        "pocl, shared). The solver comes from the same options (flags, --set,\n"
        "--options; the JSON echoes them): the methods with none or Jacobi run\n"
        "unchanged; precond=amg sets up smoothed aggregation across the ranks (each\n"
        "rank aggregates its own rows); precision=mixed, classical AMG, block sizes and\n"
        "near-nullspace vectors run on one process only and are refused by name\n"
        "(exit 2). Rank 0 prints the summary and the partition (rows, nonzeros and\n"
        "halo values per rank; JSON: ranks, partition).\n"
        "\n"
        "Examples:\n"
        "  clmg solve A.mtx                           b = A*1, CG or GMRES with Jacobi\n"
        "  clmg solve convection.mtx --method bicgstab --tol 1e-10\n"
        "  clmg solve A.mtx b.mtx -o x.mtx --tol 1e-10\n"
        "  clmg solve A.mtx --precond none --format ellr --precision float --device pocl\n"
        "  clmg solve A.mtx --json --quiet > result.json\n"
        "  mpirun -np 4 clmg solve A.mtx --device pocl   four ranks sharing the CPU\n"
        "\n"
        "Exit status: 0 converged, 1 failure (unreadable or unsuitable input, a device\n"
        "error, a breakdown, or not converged within --maxit), 2 bad usage.\n",
        out);
}

/* --tol and --maxit are checked here for their own messages; the value is
 * the options layer's (tol, maxit). */
static int parse_tolerance(const char *command, const char *text) {
  char *end = NULL;
  errno = 0;
  double parsed = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !(parsed > 0) || !(parsed < 1)) {
    cli_usage_note(command, "--tol needs a number between 0 and 1 (exclusive), not '%s'", text);
    return 0;
  }
  return 1;
}

static int parse_iterations(const char *command, const char *text) {
  char *end = NULL;
  errno = 0;
  long parsed = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || parsed < 1 || parsed > INT_MAX) {
    cli_usage_note(command, "--maxit needs a whole number from 1 to %d, not '%s'", INT_MAX, text);
    return 0;
  }
  return 1;
}

void solve_options_defaults(const cli_options *defaults, solve_options *options) {
  memset(options, 0, sizeof *options);
  options->common = *defaults;
}

int solve_apply_option(const char *command, int option, const char *arg, solve_options *options) {
  switch (option) {
  case SOLVE_OPTION_METHOD:
    return cli_record_setting(command, "--method", "krylov", arg, &options->settings);
  case SOLVE_OPTION_SMOOTHER:
    return cli_record_setting(command, "--smoother", "mg.smoother", arg, &options->settings);
  case SOLVE_OPTION_SMOOTHING_STEPS:
    return cli_record_setting(command, "--smoothing-steps", "mg.steps", arg, &options->settings);
  case SOLVE_OPTION_BLOCK_SIZE:
    return cli_record_setting(command, "--block-size", "amg.block_size", arg, &options->settings);
  case SOLVE_OPTION_NULLSPACE:
    return cli_record_setting(command, "--near-nullspace", "amg.near_nullspace", arg,
                              &options->settings);
  case SOLVE_OPTION_COORDINATES:
    return cli_record_setting(command, "--coordinates", "amg.coordinates", arg, &options->settings);
  case SOLVE_OPTION_STRENGTH:
    return cli_record_setting(command, "--strength", "amg.strength", arg, &options->settings);
  case SOLVE_OPTION_COARSENING:
    return cli_record_setting(command, "--coarsening", "amg.coarsening", arg, &options->settings);
  case SOLVE_OPTION_INTERPOLATION:
    return cli_record_setting(command, "--interpolation", "amg.interpolation", arg,
                              &options->settings);
  case SOLVE_OPTION_ROOTS:
    return cli_record_setting(command, "--roots", "amg.roots", arg, &options->settings);
  case SOLVE_OPTION_INNER:
    return cli_record_setting(command, "--inner", "mg.inner", arg, &options->settings);
  case SOLVE_OPTION_OPTIONS_FILE:
    options->settings.options_path = arg;
    return 1;
  case SOLVE_OPTION_SET:
    return cli_record_setting(command, "--set", NULL, arg, &options->settings);
  case SOLVE_OPTION_RESTART:
    return cli_record_setting(command, "--restart", "restart", arg, &options->settings);
  case SOLVE_OPTION_PRECONDITIONER:
    return cli_record_setting(command, "--precond", "precond", arg, &options->settings);
  case SOLVE_OPTION_FORMAT:
    return cli_record_setting(command, "--format", "format", arg, &options->settings);
  case SOLVE_OPTION_PRECISION:
    return cli_record_setting(command, "--precision", "precision", arg, &options->settings);
  case SOLVE_OPTION_TOLERANCE:
    if (!parse_tolerance(command, arg))
      return -1;
    return cli_record_setting(command, "--tol", "tol", arg, &options->settings);
  case SOLVE_OPTION_MAX_ITERATIONS:
    if (!parse_iterations(command, arg))
      return -1;
    return cli_record_setting(command, "--maxit", "maxit", arg, &options->settings);
  case 'o':
    options->output_path = arg;
    return 1;
  case 'q':
    options->quiet = 1;
    return 1;
  case SOLVE_OPTION_SKIP_CHECKS:
    options->skip_checks = 1;
    return 1;
  case SOLVE_OPTION_VIEW:
    options->view = 1;
    return 1;
  case SOLVE_OPTION_PROFILE:
    return cli_parse_int(command, "--profile", arg, 1, 1000, &options->profile) ? 1 : -1;
  default:
    return 0;
  }
}

int solve_parse_options(int argc, char **argv, const cli_options *defaults,
                        solve_options *options) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      SOLVE_LONG_OPTIONS,
      {NULL, 0, NULL, 0},
  };
  const char *command = argv[0];
  solve_options_defaults(defaults, options);
  int option;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS SOLVE_SHORT_OPTIONS, long_options,
                               NULL)) != -1) {
    int common = cli_apply_common_option(command, option, &options->common);
    if (common == 0) {
      common = solve_apply_option(command, option, optarg, options);
    }
    if (common <= 0) {
      return cli_usage_error(command);
    }
  }
  if (options->common.help) {
    return 0;
  }
  int positional = argc - optind;
  if (positional < 1 || positional > 2) {
    return cli_usage(command, "%s",
                     positional < 1 ? "missing the matrix file A.mtx"
                                    : "too many arguments (expected A.mtx and at most b.mtx)");
  }
  options->matrix_path = argv[optind];
  options->rhs_path = positional == 2 ? argv[optind + 1] : NULL;
  const char *inputs[] = {options->matrix_path, options->rhs_path, options->settings.options_path};
  const char *names[] = {"the matrix file", "the right-hand side", "the --options file"};
  for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; ++k)
    if (cli_same_file(options->output_path, inputs[k]))
      return cli_usage(command, "-o %s is %s: the solution would overwrite its input",
                       options->output_path, names[k]);
  for (int k = 0; k < options->settings.count; ++k)
    if (options->settings.items[k].key && strncmp(options->settings.items[k].key, "amg.", 4) == 0 &&
        cli_same_file(options->output_path, options->settings.items[k].value))
      return cli_usage(command, "-o %s is the %s file: the solution would overwrite its input",
                       options->output_path, options->settings.items[k].key);
  return 0;
}

/* ---- the options and the matrix ---- */

/* Where CG was asked for, prints why A is unsuitable and refuses (returns
 * 0) unless the checks are skipped, then only warns. */
int solve_check_spd(const char *command, const solve_options *options, int symmetric,
                    size_t nonpositive, size_t first_bad, double first_value) {
  const char *verdict = options->skip_checks ? "warning" : "error";
  int suitable = 1;
  if (!symmetric) {
    fprintf(stderr,
            "%s: %s: %s is not symmetric (some |a_ij - a_ji| exceeds %g of the larger); CG needs "
            "a symmetric positive definite matrix%s\n",
            command, verdict, options->matrix_path, solve_symmetry_tolerance,
            options->skip_checks ? "" : " (--skip-checks runs it anyway)");
    suitable = 0;
  }
  if (nonpositive > 0) {
    fprintf(stderr,
            "%s: %s: %zu diagonal entr%s of %s %s not positive (the first: row %zu, a_ii = %g); "
            "an SPD matrix has a positive diagonal%s\n",
            command, verdict, nonpositive, nonpositive == 1 ? "y" : "ies", options->matrix_path,
            nonpositive == 1 ? "is" : "are", first_bad + 1, first_value,
            options->skip_checks ? "" : " (--skip-checks runs it anyway)");
    suitable = 0;
  }
  if (!suitable && !options->skip_checks) {
    char why[512];
    snprintf(why, sizeof why,
             "%s is not symmetric positive definite, as CG needs (see stderr; --skip-checks runs "
             "it anyway)",
             options->matrix_path);
    cli_json_error(command, CLMG_ERROR_INVALID_ARGUMENT, why);
  }
  return suitable || options->skip_checks;
}

int solve_check_matrix(const char *command, const solve_options *options, const clmg_options *db,
                       const clmg_csr *a) {
  if (strcmp(clmg_options_get(db, "krylov"), "cg") != 0) {
    return 1;
  }
  double *diagonal = malloc((a->rows ? a->rows : 1) * sizeof *diagonal);
  clmg_error error = {{0}};
  clmg_status status =
      diagonal != NULL ? clmg_csr_diagonal(a, diagonal, &error) : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "cannot read the diagonal of %s: %s", options->matrix_path,
                diagonal != NULL ? error.message : "out of host memory");
    free(diagonal);
    return 0;
  }
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < a->rows; i++) {
    if (!(diagonal[i] > 0)) {
      if (bad++ == 0) {
        first_bad = i;
      }
    }
  }
  int ok = solve_check_spd(command, options, clmg_csr_is_symmetric(a, solve_symmetry_tolerance),
                           bad, first_bad, bad > 0 ? diagonal[first_bad] : 0.0);
  free(diagonal);
  return ok;
}

/* ---- progress while solving ---- */

static const double PROGRESS_INTERVAL_S = 1.0;

/* A line on stderr about once a second, so a long solve shows it is alive. */
int solve_print_progress(void *data, int iteration, double relative_residual) {
  solve_progress *p = data;
  double now = apputil_now();
  if (p->enabled && now - p->last_print >= PROGRESS_INTERVAL_S) {
    fprintf(stderr, "  ... iteration %d, relative residual %.3e (%.1f s)\n", iteration,
            relative_residual, now - p->start);
    p->last_print = now;
  }
  return 0;
}

/* ---- the report ---- */

static void print_history_line(int iteration, double relative_residual) {
  printf("  %9d  %.6e\n", iteration, relative_residual);
}

void solve_print_history(const clmg_krylov_result *result) {
  size_t length = result->history_length;
  if (length == 0) {
    return;
  }
  printf("\n  iteration  relative residual\n");
  if (length <= FULL_HISTORY_ITERATIONS + 1) {
    for (size_t k = 0; k < length; k++) {
      print_history_line((int)k, result->history[k]);
    }
  } else {
    size_t step = (length + SAMPLED_HISTORY_LINES - 1) / SAMPLED_HISTORY_LINES;
    for (size_t k = 0; k < length; k += step) {
      print_history_line((int)k, result->history[k]);
    }
    if ((length - 1) % step != 0) {
      print_history_line((int)(length - 1), result->history[length - 1]);
    }
    printf("  (sampled every %zu iterations; %zu in all)\n", step, length - 1);
  }
  printf("\n");
}

void solve_print_outcome(const solve_report *r) {
  const clmg_krylov_result *result = &r->result;
  printf("%-18s %s\n", "converged", result->converged ? "yes" : "no");
  printf("%-18s %d\n", "iterations", result->iterations);
  printf("%-18s %.3e (recomputed ||b - A x||/||b||: %.3e)\n", "relative residual",
         result->relative_residual, r->true_relative_residual);
  if (r->have_error_vs_ones) {
    printf("%-18s max %.3e, relative 2-norm %.3e\n", "error vs ones", r->error_max,
           r->error_relative);
  }
}

static void print_text(const solve_options *options, const solve_report *r) {
  const clmg_krylov_result *result = &r->result;
  if (!options->quiet) {
    solve_print_history(result);
  }
  solve_print_outcome(r);
  printf("%-18s %.4f (%s %.4f, upload and build %.4f; compilation not counted)\n", "setup_s",
         r->read_s + r->build_s, r->read_label ? r->read_label : "read", r->read_s, r->build_s);
  printf("%-18s %llu device commands, %llu host waits\n", "setup latency",
         (unsigned long long)r->setup_counts.commands,
         (unsigned long long)r->setup_counts.host_waits);
  printf("%-18s %.4f\n", "kernels_s", r->kernels_s);
  printf("%-18s %.4f", "solve_s", r->solve_s);
  if (result->iterations > 0) {
    printf(" (%.3f ms per iteration)", 1e3 * r->solve_s / result->iterations);
  }
  printf("\n");
  solve_print_counts(&r->solve_counts, result->iterations);
}

void solve_print_counts(const clmg_counters *counts, int iterations) {
  printf("%-18s %llu device commands, %llu host waits", "latency",
         (unsigned long long)counts->commands, (unsigned long long)counts->host_waits);
  if (iterations > 0)
    printf(" (%.1f and %.1f per iteration)", (double)counts->commands / iterations,
           (double)counts->host_waits / iterations);
  printf("\n");
}

void solve_json_counts(json_writer *w, const clmg_counters *counts, int iterations) {
  json_integer(w, "commands", (long long)counts->commands);
  json_integer(w, "host_waits", (long long)counts->host_waits);
  json_number(w, "commands_per_iteration",
              iterations > 0 ? (double)counts->commands / iterations : 0.0);
  json_number(w, "host_waits_per_iteration",
              iterations > 0 ? (double)counts->host_waits / iterations : 0.0);
}

void solve_print_profile(const char *what, const clmg_kernel_time *times, size_t count, int n) {
  printf("\n  %s's %d kernels of most device time:\n", what, n);
  for (size_t k = 0; k < count && k < (size_t)n; k++)
    printf("  %10.4f s %7llu x %-28s %llu items\n", times[k].seconds,
           (unsigned long long)times[k].launches, times[k].name,
           (unsigned long long)times[k].work_items);
}

void solve_json_profile(json_writer *w, const clmg_kernel_time *times, size_t count, int n) {
  json_array_begin(w, "profile");
  for (size_t k = 0; k < count && k < (size_t)n; k++) {
    json_object_begin(w, NULL);
    json_string(w, "kernel", times[k].name);
    json_number(w, "seconds", times[k].seconds);
    json_integer(w, "launches", (long long)times[k].launches);
    json_integer(w, "work_items", (long long)times[k].work_items);
    json_object_end(w);
  }
  json_array_end(w);
}

double solve_profile_seconds(const clmg_kernel_time *times, size_t count) {
  double seconds = 0;
  for (size_t k = 0; k < count; k++)
    seconds += times[k].seconds;
  return seconds;
}

clmg_counters solve_counts_since(const clmg_context *context, const clmg_counters *before) {
  clmg_counters now;
  clmg_context_counters(context, &now);
  now.commands -= before->commands;
  now.host_waits -= before->host_waits;
  return now;
}

void solve_json_outcome(json_writer *w, const solve_report *r) {
  const clmg_krylov_result *result = &r->result;
  json_bool(w, "converged", result->converged);
  json_string(w, "status", clmg_status_string(r->status));
  json_string(w, "message", r->status != CLMG_SUCCESS ? r->message : "");
  json_integer(w, "iterations", result->iterations);
  json_number(w, "initial_residual", result->initial_residual);
  json_number(w, "final_residual", result->final_residual);
  json_number(w, "relative_residual", result->relative_residual);
  json_number(w, "true_relative_residual", r->true_relative_residual);
  if (r->have_error_vs_ones) {
    json_object_begin(w, "error_vs_ones");
    json_number(w, "max_abs", r->error_max);
    json_number(w, "relative_2norm", r->error_relative);
    json_object_end(w);
  }
  json_number(w, "read_s", r->read_s);
  json_number(w, "build_s", r->build_s);
  json_number(w, "setup_s", r->read_s + r->build_s);
  json_integer(w, "setup_commands", (long long)r->setup_counts.commands);
  json_integer(w, "setup_host_waits", (long long)r->setup_counts.host_waits);
  json_number(w, "kernels_s", r->kernels_s); /* compile_s's old name, for one release */
  json_number(w, "compile_s", r->kernels_s);
  json_number(w, "solve_s", r->solve_s);
  solve_json_counts(w, &r->solve_counts, result->iterations);
  json_array_begin(w, "history");
  for (size_t k = 0; k < result->history_length; k++) {
    json_number(w, NULL, result->history[k]);
  }
  json_array_end(w);
}

/* The keys of the solver's view (clmg_solver_view_json) that a report
 * shows: the resolved options always, the hierarchy with --view. */
static void json_solver_view(json_writer *w, const clmg_solver *solver, int view) {
  char *text = clmg_solver_view_json(solver);
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  free(text);
  static const char *const always[] = {"options"};
  static const char *const with_view[] = {"hierarchy", "operator_complexity", "grid_complexity",
                                          "solver_setup", "amg_setup"};
  for (size_t k = 0; root && k < sizeof always / sizeof always[0]; k++) {
    char *member = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, always[k]));
    json_raw(w, always[k], member);
    free(member);
  }
  for (size_t k = 0; root && view && k < sizeof with_view / sizeof with_view[0]; k++) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, with_view[k]);
    char *member = item ? cJSON_PrintUnformatted(item) : NULL;
    if (member)
      json_raw(w, with_view[k], member);
    free(member);
  }
  cJSON_Delete(root);
}

static void print_json(const char *command, const solve_options *options, const solve_report *r) {
  const clmg_options *db = clmg_solver_options(r->solver);
  clmg_krylov_method method = clmg_solver_method(r->solver);
  const char *precision = clmg_options_get(db, "precision");
  const char *preconditioner = clmg_options_get(db, "precond");
  int mixed = strcmp(precision, "mixed") == 0;
  json_writer w;
  json_result_begin(&w, stdout, command);
  if (options->matrix_path) {
    json_string(&w, "matrix", options->matrix_path);
  }
  json_string(&w, "rhs", options->rhs_path ? options->rhs_path : r->rhs_description);
  if (r->extra_json) {
    r->extra_json(&w, r->extra_data);
  }
  json_integer(&w, "unknowns", (long long)clmg_matrix_rows(r->matrix));
  json_integer(&w, "rows", (long long)clmg_matrix_rows(r->matrix));
  json_integer(&w, "cols", (long long)clmg_matrix_cols(r->matrix));
  json_string(&w, "iteration_kind", method == CLMG_KRYLOV_AUTO ? "cycle" : "krylov");
  json_integer(&w, "nonzeros", (long long)clmg_matrix_nnz(r->matrix));
  json_string(&w, "format", clmg_matrix_format_name(clmg_matrix_format_of(r->matrix)));
  json_string(&w, "format_description", clmg_matrix_describe(r->matrix));
  json_integer(&w, "stored_entries", (long long)clmg_matrix_stored_entries(r->matrix));
  json_string(&w, "precision", precision);
  json_string(&w, "method", method == CLMG_KRYLOV_AUTO ? "none" : clmg_krylov_method_name(method));
  json_integer(&w, "restart",
               method == CLMG_KRYLOV_GMRES ? (long long)atoi(clmg_options_get(db, "restart")) : 0);
  json_string(&w, "preconditioner", preconditioner);
  json_device(&w, r->device);
  json_number(&w, "relative_tolerance", strtod(clmg_options_get(db, "tol"), NULL));
  json_integer(&w, "max_iterations", atoi(clmg_options_get(db, "maxit")));
  json_solver_view(&w, r->solver, options->view);
  if (options->profile > 0)
    solve_json_profile(&w, r->profile, r->profile_count, options->profile);
  if (method == CLMG_KRYLOV_CG) {
    /* the floor of an iteration, for its time against the copy bandwidth */
    size_t n = clmg_matrix_rows(r->matrix);
    const clmg_multigrid *multigrid = clmg_solver_multigrid(r->solver);
    double bytes = multigrid ? clmg_multigrid_cycle_bytes(multigrid, 1)
                   : strcmp(preconditioner, "jacobi") == 0 ? perf_jacobi_bytes(n, mixed)
                                                           : 0.0;
    json_number(&w, "iteration_bytes", perf_cg_iteration_bytes(r->matrix, bytes, mixed));
  }
  solve_json_outcome(&w, r);
  json_object_end(&w);
  json_end(&w);
}

/* ---- the command ---- */

void solve_release(solve_resources *s) {
  clmg_solver_destroy(s->solver);
  clmg_options_destroy(s->options);
  clmg_matrix_destroy(s->float_matrix);
  clmg_vector_destroy(s->residual);
  clmg_vector_destroy(s->device_x);
  clmg_vector_destroy(s->device_b);
  clmg_matrix_destroy(s->matrix);
  clmg_context_destroy(s->context);
  clmg_csr_free(&s->a);
  free(s->b);
  free(s->x);
}

/* Reads A and b (or makes b = A*1); prints why and returns 0 on failure. */
static int read_inputs(const char *command, solve_options *options, solve_resources *s) {
  clmg_error error;
  clmg_status status = clmg_csr_read_matrix_market(options->matrix_path, &s->a, &error);
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "cannot read the matrix: %s: %s", clmg_status_string(status),
                error.message);
    return 0;
  }
  if (s->a.rows != s->a.cols) {
    cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT,
                "%s is a %zu x %zu matrix; Krylov methods solve square systems only",
                options->matrix_path, s->a.rows, s->a.cols);
    return 0;
  }
  if (!solve_check_matrix(command, options, s->options, &s->a)) {
    return 0;
  }
  size_t n = s->a.rows;
  if (options->rhs_path) {
    size_t length = 0;
    status = clmg_read_matrix_market_vector(options->rhs_path, &s->b, &length, &error);
    if (status != CLMG_SUCCESS) {
      cli_failure(command, status, "cannot read the right-hand side: %s: %s",
                  clmg_status_string(status), error.message);
      return 0;
    }
    if (length != n) {
      cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT, "%s has %zu entries but %s has %zu rows",
                  options->rhs_path, length, options->matrix_path, n);
      return 0;
    }
  } else {
    double *ones = malloc((n ? n : 1) * sizeof *ones);
    s->b = malloc((n ? n : 1) * sizeof *s->b);
    if (!ones || !s->b) {
      free(ones);
      cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for the right-hand side");
      return 0;
    }
    for (size_t i = 0; i < n; i++) {
      ones[i] = 1.0;
    }
    clmg_csr_spmv_host(1.0, &s->a, ones, 0.0, s->b);
    free(ones);
  }
  s->x = calloc(n ? n : 1, sizeof *s->x);
  if (!s->x) {
    cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for the solution");
    return 0;
  }
  return 1;
}

/* The solver from the options (the library composes it: clmg_solver.h),
 * then the vectors and b on the device. */
static clmg_status build_on_device(solve_resources *s, const char **failed_step) {
  *failed_step = "setting up the solver";
  const clmg_csr *host = s->a.row_ptr ? &s->a : NULL;
  /* A matrix made on the device (clmg helmholtz: SPD) is there already */
  clmg_status status = s->matrix ? clmg_solver_create_device(s->context, s->matrix, s->float_matrix,
                                                             host, 1, s->options, &s->solver)
                                 : clmg_solver_create(s->context, &s->a, s->options, &s->solver);
  if (status != CLMG_SUCCESS) {
    return status;
  }
  clmg_dtype precision = clmg_solver_precision(s->solver);
  *failed_step = "creating the vectors";
  status = clmg_vector_create(s->context, precision, s->n, &s->device_x);
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(s->context, precision, s->n, &s->residual);
  }
  /* b assembled on the device (clmg helmholtz) is there already */
  if (status == CLMG_SUCCESS && !s->device_b) {
    status = clmg_vector_create(s->context, precision, s->n, &s->device_b);
    if (status == CLMG_SUCCESS) {
      *failed_step = "uploading b";
      status = clmg_vector_upload_doubles(s->device_b, s->b);
    }
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_fill(s->device_x, 0.0);
  }
  *failed_step = "uploading";
  return status == CLMG_SUCCESS ? clmg_finish(s->context) : status;
}

static void print_header(const solve_options *options, const solve_resources *s) {
  const clmg_device_info *device = clmg_context_device(s->context);
  const clmg_matrix *matrix = clmg_solver_matrix(s->solver);
  if (options->matrix_path) {
    printf("%-18s %s\n", "matrix", options->matrix_path);
  }
  printf("%-18s %zu\n", "rows", s->n);
  printf("%-18s %zu\n", "nonzeros", clmg_matrix_nnz(matrix));
  printf("%-18s %s\n", "right-hand side",
         options->rhs_path ? options->rhs_path : s->rhs_description);
  printf("%-18s %u:%u %s (%s)\n", "device", device->platform_index, device->device_index,
         device->name, device->platform_name);
  printf("%-18s %s\n", "format", clmg_matrix_describe(matrix));
  const clmg_options *db = clmg_solver_options(s->solver);
  printf("%-18s %s\n", "precision", clmg_options_get(db, "precision"));
  clmg_krylov_method method = clmg_solver_method(s->solver);
  char name[48];
  if (method == CLMG_KRYLOV_GMRES) {
    snprintf(name, sizeof name, "gmres(%s)", clmg_options_get(db, "restart"));
  } else if (method == CLMG_KRYLOV_AUTO) {
    snprintf(name, sizeof name, "%s-cycles alone", clmg_options_get(db, "mg.cycle"));
  } else {
    snprintf(name, sizeof name, "%s", clmg_krylov_method_name(method));
  }
  printf("%-18s %s, preconditioner %s%s, tolerance %s, at most %s iterations\n", "method", name,
         clmg_options_get(db, "precond"),
         strcmp(clmg_options_get(db, "precision"), "mixed") == 0 ? " in float" : "",
         clmg_options_get(db, "tol"), clmg_options_get(db, "maxit"));
  fflush(stdout); /* the solve may take a while: show what is known */
}

/* After the solve: x on the host, the true residual and the error vs ones. */
static clmg_status evaluate(solve_resources *s, solve_report *report, int b_is_a_ones) {
  double residual_norm = 0, b_norm = 0;
  clmg_status status =
      clmg_defect(clmg_solver_matrix(s->solver), s->device_b, s->device_x, s->residual);
  if (status == CLMG_SUCCESS) {
    status = clmg_nrm2(s->residual, &residual_norm);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_nrm2(s->device_b, &b_norm);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_download_doubles(s->device_x, s->x);
  }
  if (status != CLMG_SUCCESS) {
    return status;
  }
  report->true_relative_residual = b_norm > 0 ? residual_norm / b_norm : residual_norm;
  if (b_is_a_ones) {
    double max_error = 0, sum_squares = 0;
    size_t n = s->n;
    for (size_t i = 0; i < n; i++) {
      double e = fabs(s->x[i] - 1.0);
      max_error = e > max_error || isnan(e) ? e : max_error;
      sum_squares += e * e;
    }
    report->have_error_vs_ones = 1;
    report->error_max = max_error;
    report->error_relative = n > 0 ? sqrt(sum_squares / (double)n) : 0.0;
  }
  return CLMG_SUCCESS;
}

void solve_warn_unused(const char *command, const clmg_solver *solver) {
  const char *unused = clmg_solver_unused_options(solver);
  if (unused[0])
    fprintf(stderr, "%s: warning: %s: set, but precond=%s and krylov=%s do not read %s\n", command,
            unused, clmg_options_get(clmg_solver_options(solver), "precond"),
            clmg_options_get(clmg_solver_options(solver), "krylov"),
            strchr(unused, ',') ? "them" : "it");
}

/* From the context on: builds the solver (and the matrix from host CSR
 * unless the caller made it on the device), solves, writes x and reports;
 * returns the exit status. s is released by the caller. */
int solve_on_device(const char *command, solve_options *options, solve_resources *s,
                    solve_report *report, int b_is_a_ones) {
  /* an output that cannot be written fails now, not after the solve: a
   * temporary beside it is made and removed (the target is not touched) */
  if (options->output_path) {
    clmg_output_file *probe = NULL;
    FILE *stream = NULL;
    clmg_error error = {{0}};
    clmg_status writable =
        clmg_output_file_open(options->output_path, "w", &probe, &stream, &error);
    if (writable != CLMG_SUCCESS) {
      cli_failure(command, writable, "%s", error.message);
      return EXIT_LIBRARY_FAILURE;
    }
    clmg_output_file_discard(probe);
  }
  double start = apputil_now();
  const char *failed_step = "";
  clmg_status status = options->profile > 0 ? clmg_profile_start(s->context) : CLMG_SUCCESS;
  clmg_counters before;
  clmg_context_counters(s->context, &before);
  if (status == CLMG_SUCCESS)
    status = build_on_device(s, &failed_step);
  report->setup_counts = solve_counts_since(s->context, &before);
  if (options->profile > 0) {
    clmg_status stopped = clmg_profile_stop(s->context, &report->profile, &report->profile_count);
    if (status == CLMG_SUCCESS)
      status = stopped;
  }
  if (status != CLMG_SUCCESS) {
    cli_report(command, s->context, status, failed_step);
    free(report->profile);
    report->profile = NULL;
    return EXIT_LIBRARY_FAILURE;
  }
  /* the solver's setup without compilation; the vectors and b are a small rest */
  report->kernels_s = clmg_solver_compile_seconds(s->solver);
  report->build_s = apputil_now() - start - report->kernels_s;
  cli_progress("solver set up on the device");
  solve_warn_unused(command, s->solver);
  report->solver = s->solver;
  report->matrix = clmg_solver_matrix(s->solver);

  if (!options->common.json) {
    print_header(options, s);
    if (options->view) {
      char *view = clmg_solver_view(s->solver);
      if (view)
        printf("\n%s\n", view);
      free(view);
    }
    if (options->profile > 0)
      solve_print_profile("the setup", report->profile, report->profile_count, options->profile);
  }

  solve_progress live = {!options->quiet, apputil_now(), apputil_now()};
  clmg_solver_set_monitor(s->solver, solve_print_progress, &live);
  start = apputil_now();
  clmg_context_counters(s->context, &before);
  report->status = clmg_solver_solve(s->solver, s->device_b, s->device_x, &report->result);
  report->solve_s = apputil_now() - start;
  report->solve_counts = solve_counts_since(s->context, &before);

  /* Keep the solver's message: evaluate() makes library calls that clear it. */
  char solver_message[1024];
  snprintf(solver_message, sizeof solver_message, "%s", clmg_context_message(s->context));
  report->message = solver_message;
  status = evaluate(s, report, b_is_a_ones);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s->context, status, "reading back the solution");
    clmg_krylov_result_free(&report->result);
    free(report->profile);
    report->profile = NULL;
    return EXIT_LIBRARY_FAILURE;
  }

  /* x of a breakdown is meaningless; the last iterate of an unfinished solve
   * is still the best there is. It is written before the report, so that the
   * report (with --json one object) says whether that worked. */
  int x_is_useful = report->status == CLMG_SUCCESS || report->status == CLMG_ERROR_NOT_CONVERGED;
  char output_message[1200] = "";
  clmg_status output_status = CLMG_SUCCESS;
  if (options->output_path && x_is_useful) {
    clmg_error error;
    output_status = clmg_write_matrix_market_vector(options->output_path, s->x, s->n, &error);
    if (output_status != CLMG_SUCCESS) {
      snprintf(output_message, sizeof output_message, "cannot write the solution: %s: %s",
               clmg_status_string(output_status), error.message);
    }
  }
  clmg_status solve_status = report->status;
  if (solve_status == CLMG_SUCCESS && output_status != CLMG_SUCCESS) {
    report->status = output_status;
    report->message = output_message;
  }

  if (options->common.json) {
    print_json(command, options, report);
    cli_json_done();
  } else {
    print_text(options, report);
    if (options->output_path && output_status == CLMG_SUCCESS && x_is_useful && !options->quiet) {
      printf("%-18s %s\n", "solution written", options->output_path);
    }
  }
  int exit_code = report->status == CLMG_SUCCESS ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE;
  if (solve_status != CLMG_SUCCESS) {
    fflush(stdout);
    fprintf(stderr, "%s: %s: %s\n", command, clmg_status_string(solve_status), solver_message);
  }
  if (output_status != CLMG_SUCCESS) {
    fflush(stdout);
    fprintf(stderr, "%s: %s\n", command, output_message);
    exit_code = EXIT_LIBRARY_FAILURE;
  }
  clmg_krylov_result_free(&report->result);
  free(report->profile);
  report->profile = NULL;
  return exit_code;
}

int run_solve(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  solve_options options;
  int exit_code = solve_parse_options(argc, argv, defaults, &options);
  if (exit_code != 0) {
    return exit_code;
  }
  if (options.common.help) {
    solve_print_usage(stdout);
    return EXIT_SUCCESS;
  }

  solve_resources s = {0};
  solve_report report = {0};
  if (!cli_make_options(command, &options.settings, &s.options)) {
    return EXIT_LIBRARY_FAILURE;
  }

  cli_progress_begin(options.quiet);
  double start = apputil_now();
  if (!read_inputs(command, &options, &s)) {
    solve_release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  report.read_s = apputil_now() - start;
  s.n = s.a.rows;
  s.rhs_description = "b = A*1 (the exact solution is all ones)";
  report.rhs_description = "A*ones";
  cli_progress("read %s: %zu rows, %zu nonzeros", options.matrix_path, s.a.rows,
               clmg_csr_nnz(&s.a));

  s.context = cli_open_context(command, &options.common, options.quiet);
  if (!s.context || !cli_choose_precision(command, s.options, s.context, options.quiet)) {
    solve_release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  report.device = clmg_context_device(s.context);
  int code = solve_on_device(command, &options, &s, &report, options.rhs_path == NULL);
  solve_release(&s);
  return code;
}
