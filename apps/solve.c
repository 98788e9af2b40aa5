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
#include "view.h"

/* ---- options ---- */

/* A matrix counts as symmetric when a_ij and a_ji differ by at most this,
 * relative to the larger: loose enough for files written with a few digits
 * less than a double has, tight enough to catch a nonsymmetric matrix. */
static const double SYMMETRY_TOLERANCE = 1e-8;

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
        "--json prints one object on stdout: matrix, rows, nonzeros, format (auto, csr,\n"
        "ellr, sell: the name) and format_description, precision, method, device,\n"
        "status and message, converged, iterations, relative_residual,\n"
        "true_relative_residual, setup_s, kernels_s, solve_s, history (with --view also\n"
        "hierarchy, operator_complexity, grid_complexity and, for AMG, amg_setup: the\n"
        "seconds of each setup phase; with CG, iteration_bytes: the fewest bytes an\n"
        "iteration moves, whose time at the copy bandwidth is its floor). On any failure, bad "
        "usage included, it\n"
        "still prints one object with status (\"usage_error\" or the library's status,\n"
        "e.g. \"not converged\") and message.\n"
        "\n"
        "Distributed (a build with MPI): mpirun -np N clmg solve A.mtx ... reads A (and\n"
        "b) on rank 0 and gives every rank an even block of rows; each rank uses one\n"
        "OpenCL device (the GPUs of its host in turn, or the one --device names, e.g.\n"
        "pocl, shared). The methods and Jacobi run unchanged; --precond amg and\n"
        "--precision mixed run on one process only. Rank 0 prints the summary and the\n"
        "partition (rows, nonzeros and halo values per rank; JSON: ranks, partition).\n"
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

static int parse_tolerance(const char *command, const char *text, double *value) {
  char *end = NULL;
  errno = 0;
  double parsed = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !(parsed > 0) || !(parsed < 1)) {
    cli_usage_note(command, "--tol needs a number between 0 and 1 (exclusive), not '%s'", text);
    return 0;
  }
  *value = parsed;
  return 1;
}

static int parse_iterations(const char *command, const char *text, int *value) {
  char *end = NULL;
  errno = 0;
  long parsed = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || parsed < 1 || parsed > INT_MAX) {
    cli_usage_note(command, "--maxit needs a whole number from 1 to %d, not '%s'", INT_MAX, text);
    return 0;
  }
  *value = (int)parsed;
  return 1;
}

const char *preconditioner_name(preconditioner_kind kind) {
  return kind == PRECONDITIONER_JACOBI ? "jacobi" : kind == PRECONDITIONER_AMG ? "amg" : "none";
}

void solve_options_defaults(const cli_options *defaults, solve_options *options) {
  memset(options, 0, sizeof *options);
  options->common = *defaults;
  options->preconditioner = PRECONDITIONER_JACOBI;
  options->format = CLMG_FORMAT_AUTO;
  options->precision = CLMG_DOUBLE;
  options->tolerance = 0; /* unset: the default of the precision */
  options->max_iterations = 1000;
  options->method = CLMG_KRYLOV_AUTO;
  options->restart = 30;
  options->amg_smoother = "chebyshev";
  options->inner = 3;
  clmg_amg_options_defaults(&options->amg);
  options->amg.block_size = 0;          /* unset: 1, or the coordinates' dimension */
  options->amg.strength_threshold = -1; /* unset: the coarsening's default */
}

/* --smoother's names: the engine's (clmg_smoother_type_parse) and two that
 * need the levels' host matrices. */
static const char *const AMG_SMOOTHERS[] = {"chebyshev", "gauss-seidel", "jacobi-rho",
                                            "patch",     "jacobi",       "spai0"};

int solve_amg_smoother_known(const char *name) {
  for (size_t i = 0; name && i < sizeof AMG_SMOOTHERS / sizeof AMG_SMOOTHERS[0]; i++)
    if (strcmp(name, AMG_SMOOTHERS[i]) == 0)
      return 1;
  return 0;
}

int solve_apply_option(const char *command, int option, const char *arg, solve_options *options) {
  switch (option) {
  case SOLVE_OPTION_METHOD:
    if (!clmg_krylov_method_parse(arg, &options->method)) {
      cli_usage_note(command, "unknown method '%s' (there are: auto, cg, gmres, bicgstab)", arg);
      return -1;
    }
    return 1;
  case SOLVE_OPTION_SMOOTHER:
    for (size_t i = 0; i < sizeof AMG_SMOOTHERS / sizeof AMG_SMOOTHERS[0]; i++)
      if (strcmp(arg, AMG_SMOOTHERS[i]) == 0) {
        options->amg_smoother = AMG_SMOOTHERS[i]; /* solve_amg_smoother_known holds */
        return 1;
      }
    cli_usage_note(command,
                   "unknown smoother '%s' (there are: chebyshev, gauss-seidel, jacobi-rho, "
                   "patch, jacobi, spai0)",
                   arg);
    return -1;
  case SOLVE_OPTION_SMOOTHING_STEPS:
    return cli_parse_int(command, "--smoothing-steps", arg, 1, 16, &options->smoothing_steps) ? 1
                                                                                              : -1;
  case SOLVE_OPTION_BLOCK_SIZE:
    return cli_parse_int(command, "--block-size", arg, 1, 16, &options->amg.block_size) ? 1 : -1;
  case SOLVE_OPTION_NULLSPACE:
    options->nullspace_path = arg;
    return 1;
  case SOLVE_OPTION_COORDINATES:
    options->coordinates_path = arg;
    return 1;
  case SOLVE_OPTION_STRENGTH:
    return cli_parse_double(command, "--strength", arg, 0, 0.999, &options->amg.strength_threshold)
               ? 1
               : -1;
  case SOLVE_OPTION_COARSENING:
    if (strcmp(arg, "sa") == 0) {
      options->amg.coarsening = CLMG_AMG_SMOOTHED_AGGREGATION;
    } else if (strcmp(arg, "classical") == 0) {
      options->amg.coarsening = CLMG_AMG_CLASSICAL;
    } else {
      cli_usage_note(command, "unknown coarsening '%s' (there are: sa, classical)", arg);
      return -1;
    }
    return 1;
  case SOLVE_OPTION_ROOTS:
    if (strcmp(arg, "auto") == 0) {
      options->amg.roots = CLMG_AMG_ROOTS_AUTO;
    } else if (strcmp(arg, "ordered") == 0) {
      options->amg.roots = CLMG_AMG_ROOTS_ORDERED;
    } else if (strcmp(arg, "parallel") == 0) {
      options->amg.roots = CLMG_AMG_ROOTS_PARALLEL;
    } else {
      cli_usage_note(command, "unknown --roots '%s' (there are: auto, ordered, parallel)", arg);
      return -1;
    }
    return 1;
  case SOLVE_OPTION_INNER:
    return cli_parse_int(command, "--inner", arg, 1, 64, &options->inner) ? 1 : -1;
  case SOLVE_OPTION_RESTART:
    return cli_parse_int(command, "--restart", arg, 1, 200, &options->restart) ? 1 : -1;
  case SOLVE_OPTION_PRECONDITIONER:
    if (strcmp(arg, "none") == 0) {
      options->preconditioner = PRECONDITIONER_NONE;
    } else if (strcmp(arg, "jacobi") == 0) {
      options->preconditioner = PRECONDITIONER_JACOBI;
    } else if (strcmp(arg, "amg") == 0) {
      options->preconditioner = PRECONDITIONER_AMG;
    } else {
      cli_usage_note(command, "unknown preconditioner '%s' (there are: none, jacobi, amg)", arg);
      return -1;
    }
    return 1;
  case SOLVE_OPTION_FORMAT:
    if (!clmg_matrix_format_parse(arg, &options->format)) {
      cli_usage_note(command, "unknown format '%s' (there are: auto, csr, ellr, sell)", arg);
      return -1;
    }
    return 1;
  case SOLVE_OPTION_PRECISION:
    options->precision_asked = NULL;
    options->mixed = 0;
    if (strcmp(arg, "double") == 0) {
      options->precision = CLMG_DOUBLE;
      options->precision_asked = arg;
    } else if (strcmp(arg, "float") == 0) {
      options->precision = CLMG_FLOAT;
    } else if (strcmp(arg, "mixed") == 0) {
      options->precision = CLMG_DOUBLE;
      options->precision_asked = arg;
      options->mixed = 1;
    } else {
      cli_usage_note(command, "unknown precision '%s' (there are: double, float, mixed)", arg);
      return -1;
    }
    return 1;
  case SOLVE_OPTION_TOLERANCE:
    return parse_tolerance(command, arg, &options->tolerance) ? 1 : -1;
  case SOLVE_OPTION_MAX_ITERATIONS:
    return parse_iterations(command, arg, &options->max_iterations) ? 1 : -1;
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
  default:
    return 0;
  }
}

void solve_options_finish(solve_options *options) {
  options->tolerance_given = options->tolerance != 0;
  if (options->tolerance == 0) {
    options->tolerance = clmg_default_tolerance(options->precision);
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
  solve_options_finish(options);
  int positional = argc - optind;
  if (positional < 1 || positional > 2) {
    return cli_usage(command, "%s",
                     positional < 1 ? "missing the matrix file A.mtx"
                                    : "too many arguments (expected A.mtx and at most b.mtx)");
  }
  options->matrix_path = argv[optind];
  options->rhs_path = positional == 2 ? argv[optind + 1] : NULL;
  const char *inputs[] = {options->matrix_path, options->rhs_path, options->nullspace_path,
                          options->coordinates_path};
  const char *names[] = {"the matrix file", "the right-hand side", "the --near-nullspace file",
                         "the --coordinates file"};
  for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; ++k)
    if (cli_same_file(options->output_path, inputs[k]))
      return cli_usage(command, "-o %s is %s: the solution would overwrite its input",
                       options->output_path, names[k]);
  return 0;
}

/* ---- checks of the matrix ---- */

/* Decides the method of --method auto (CG when A looks SPD: symmetric with a
 * positive diagonal; GMRES otherwise). For CG, prints why A is unsuitable
 * and refuses (returns 0) unless the checks are skipped, then only warns. */
int solve_check_matrix(const char *command, solve_options *options, const clmg_csr *a) {
  if (a->rows != a->cols) {
    cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT,
                "%s is a %zu x %zu matrix; Krylov methods solve square systems only",
                options->matrix_path, a->rows, a->cols);
    return 0;
  }
  /* a row without a nonzero entry makes A singular: no method can solve it
   * (GMRES once stalled at 0.88 and blamed the rounding floor) */
  for (size_t i = 0; i < a->rows; i++) {
    int nonzero = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1] && !nonzero; k++)
      nonzero = a->val[k] != 0;
    if (!nonzero) {
      cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT,
                  "row %zu of %s has no nonzero entry: the matrix is singular", i + 1,
                  options->matrix_path);
      return 0;
    }
  }
  if (options->method == CLMG_KRYLOV_AUTO) {
    int spd_like = clmg_csr_is_symmetric(a, SYMMETRY_TOLERANCE);
    for (size_t i = 0; spd_like && i < a->rows; i++) {
      double diagonal = 0;
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
        if ((size_t)a->col[k] == i) {
          diagonal = a->val[k];
        }
      }
      spd_like = diagonal > 0;
    }
    options->method = spd_like ? CLMG_KRYLOV_CG : CLMG_KRYLOV_GMRES;
  }
  if (options->method != CLMG_KRYLOV_CG) {
    return 1;
  }
  const char *verdict = options->skip_checks ? "warning" : "error";
  int suitable = 1;
  if (!clmg_csr_is_symmetric(a, SYMMETRY_TOLERANCE)) {
    fprintf(stderr,
            "%s: %s: %s is not symmetric (some |a_ij - a_ji| exceeds %g of the larger); CG needs "
            "a symmetric positive definite matrix%s\n",
            command, verdict, options->matrix_path, SYMMETRY_TOLERANCE,
            options->skip_checks ? "" : " (--skip-checks runs it anyway)");
    suitable = 0;
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
  if (bad > 0) {
    fprintf(stderr,
            "%s: %s: %zu diagonal entr%s of %s %s not positive (the first: row %zu, a_ii = %g); "
            "an SPD matrix has a positive diagonal%s\n",
            command, verdict, bad, bad == 1 ? "y" : "ies", options->matrix_path,
            bad == 1 ? "is" : "are", first_bad + 1, diagonal[first_bad],
            options->skip_checks ? "" : " (--skip-checks runs it anyway)");
    suitable = 0;
  }
  free(diagonal);
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
  printf("%-18s %.4f (%s %.4f, upload and build %.4f)\n", "setup_s", r->read_s + r->build_s,
         r->read_label ? r->read_label : "read", r->read_s, r->build_s);
  printf("%-18s %.4f\n", "kernels_s", r->kernels_s);
  printf("%-18s %.4f", "solve_s", r->solve_s);
  if (result->iterations > 0) {
    printf(" (%.3f ms per iteration)", 1e3 * r->solve_s / result->iterations);
  }
  printf("\n");
}

/* --view: the levels of the AMG preconditioner, or, without multigrid, the
 * one level of A; as JSON into w, or as text where w is NULL. Nothing when
 * out of memory. */
static void show_view(const clmg_multigrid *multigrid, const clmg_amg_setup_times *amg_times,
                      const clmg_matrix *matrix, json_writer *w) {
  view_level single = {0};
  view_level *levels = &single;
  int count = 1;
  if (multigrid) {
    levels = view_multigrid_levels(multigrid, &count);
  } else {
    single.rows = clmg_matrix_rows(matrix);
    single.nonzeros = clmg_matrix_nnz(matrix);
    single.format = clmg_matrix_format_name(clmg_matrix_format_of(matrix));
    single.format_description = clmg_matrix_describe(matrix);
  }
  if (levels && w)
    view_json(w, levels, count);
  else if (levels)
    view_print(levels, count);
  if (levels != &single)
    free(levels);
  if (amg_times && w)
    view_amg_times_json(w, amg_times);
  else if (amg_times)
    view_amg_times_print(amg_times);
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
  json_number(w, "kernels_s", r->kernels_s);
  json_number(w, "solve_s", r->solve_s);
  json_array_begin(w, "history");
  for (size_t k = 0; k < result->history_length; k++) {
    json_number(w, NULL, result->history[k]);
  }
  json_array_end(w);
}

static void print_json(const solve_options *options, const solve_report *r) {
  json_writer w;
  json_begin(&w, stdout);
  json_object_begin(&w, NULL);
  if (options->matrix_path) {
    json_string(&w, "matrix", options->matrix_path);
  }
  json_string(&w, "rhs", options->rhs_path ? options->rhs_path : r->rhs_description);
  if (r->extra_json) {
    r->extra_json(&w, r->extra_data);
  }
  json_integer(&w, "rows", (long long)clmg_matrix_rows(r->matrix));
  json_integer(&w, "cols", (long long)clmg_matrix_cols(r->matrix));
  json_integer(&w, "nonzeros", (long long)clmg_matrix_nnz(r->matrix));
  json_string(&w, "format", clmg_matrix_format_name(clmg_matrix_format_of(r->matrix)));
  json_string(&w, "format_description", clmg_matrix_describe(r->matrix));
  json_integer(&w, "stored_entries", (long long)clmg_matrix_stored_entries(r->matrix));
  json_string(&w, "precision", options->mixed ? "mixed" : clmg_dtype_name(options->precision));
  json_string(&w, "method", clmg_krylov_method_name(options->method));
  json_integer(&w, "restart", options->method == CLMG_KRYLOV_GMRES ? options->restart : 0);
  json_string(&w, "preconditioner", r->preconditioner_name);
  json_device(&w, r->device);
  json_number(&w, "relative_tolerance", options->tolerance);
  json_integer(&w, "max_iterations", options->max_iterations);
  if (options->view)
    show_view(r->multigrid, r->amg_times, r->matrix, &w);
  if (options->method == CLMG_KRYLOV_CG) {
    /* the floor of an iteration, for its time against the copy bandwidth */
    size_t n = clmg_matrix_rows(r->matrix);
    double preconditioner = options->preconditioner == PRECONDITIONER_AMG && r->multigrid
                                ? clmg_multigrid_cycle_bytes(r->multigrid, 1)
                            : options->preconditioner == PRECONDITIONER_JACOBI
                                ? perf_jacobi_bytes(n, options->mixed)
                                : 0.0;
    json_number(&w, "iteration_bytes",
                perf_cg_iteration_bytes(r->matrix, preconditioner, options->mixed));
  }
  solve_json_outcome(&w, r);
  json_object_end(&w);
  json_end(&w);
}

/* ---- the command ---- */

void solve_release(solve_resources *s) {
  clmg_preconditioner_destroy(&s->preconditioner);
  clmg_multigrid_destroy(s->multigrid);
  clmg_operator_destroy(&s->op);
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
  if (!solve_check_matrix(command, options, &s->a)) {
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

/* A dense Matrix Market array (or coordinate) file as rows x cols
 * column-major values (malloc'ed), for the near-nullspace and the
 * coordinates; fails with the message in `why`. */
static clmg_status read_dense(const char *path, size_t *rows, size_t *cols, double **values,
                              char *why, size_t why_size) {
  clmg_csr m = {0};
  clmg_error error = {{0}};
  *values = NULL;
  clmg_status status = clmg_csr_read_matrix_market(path, &m, &error);
  if (status != CLMG_SUCCESS) {
    snprintf(why, why_size, "%.1200s", error.message);
    return status;
  }
  *rows = m.rows;
  *cols = m.cols;
  if (m.cols == 0 || m.cols > 16) {
    snprintf(why, why_size, "%s has %zu columns; it should have 1 to 16", path, m.cols);
    clmg_csr_free(&m);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  *values = calloc(m.rows * m.cols > 0 ? m.rows * m.cols : 1, sizeof **values);
  if (!*values) {
    snprintf(why, why_size, "no host memory for the %zu x %zu values of %s", m.rows, m.cols, path);
    clmg_csr_free(&m);
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t i = 0; i < m.rows; i++)
    for (int64_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; k++)
      (*values)[(size_t)m.col[k] * m.rows + i] = m.val[k];
  clmg_csr_free(&m);
  return CLMG_SUCCESS;
}

/* The near-nullspace of --near-nullspace or --coordinates (rigid-body
 * modes) into amg (candidates malloc'ed in *candidates), and the block size
 * the coordinates imply. */
static clmg_status amg_candidates(const solve_options *options, size_t n, clmg_amg_options *amg,
                                  double **candidates, char *why, size_t why_size) {
  size_t rows = 0, cols = 0;
  double *values = NULL;
  *candidates = NULL;
  if (options->nullspace_path) {
    clmg_status status = read_dense(options->nullspace_path, &rows, &cols, &values, why, why_size);
    if (status == CLMG_SUCCESS && rows != n) {
      snprintf(why, why_size, "%s has %zu rows; the near-nullspace needs one per row of A (%zu)",
               options->nullspace_path, rows, n);
      status = CLMG_ERROR_INVALID_ARGUMENT;
    }
    if (status != CLMG_SUCCESS) {
      free(values);
      return status;
    }
    *candidates = values;
    amg->candidates = values;
    amg->num_candidates = (int)cols;
    return CLMG_SUCCESS;
  }
  if (!options->coordinates_path)
    return CLMG_SUCCESS;
  clmg_status status = read_dense(options->coordinates_path, &rows, &cols, &values, why, why_size);
  if (status == CLMG_SUCCESS && ((cols != 2 && cols != 3) || rows * cols != n ||
                                 (amg->block_size > 1 && (size_t)amg->block_size != cols))) {
    snprintf(why, why_size,
             "%s holds %zu nodes of %zu coordinates; the rigid-body modes need 2 or 3 "
             "coordinates per node and as many unknowns per node (A has %zu rows%s)",
             options->coordinates_path, rows, cols, n,
             amg->block_size > 1 ? ", and --block-size says otherwise" : "");
    status = CLMG_ERROR_INVALID_ARGUMENT;
  }
  double *coordinates = NULL, *modes = NULL;
  if (status == CLMG_SUCCESS) {
    coordinates = malloc(rows * cols * sizeof *coordinates);
    modes = malloc(6 * n * sizeof *modes);
    if (!coordinates || !modes) {
      snprintf(why, why_size, "no host memory for the rigid-body modes of %zu nodes", rows);
      status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
    }
  }
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < rows; i++)
      for (size_t d = 0; d < cols; d++)
        coordinates[i * cols + d] = values[d * rows + i];
    int count = 0;
    clmg_error error = {{0}};
    status = clmg_amg_rigid_body_modes(rows, (int)cols, coordinates, modes, &count, &error);
    if (status != CLMG_SUCCESS)
      snprintf(why, why_size, "%.200s: %.1200s", options->coordinates_path, error.message);
    amg->candidates = modes;
    amg->num_candidates = count;
    amg->block_size = (int)cols;
  }
  free(values);
  free(coordinates);
  if (status != CLMG_SUCCESS) {
    free(modes);
    amg->candidates = NULL;
    amg->num_candidates = 0;
    return status;
  }
  *candidates = modes;
  return CLMG_SUCCESS;
}

/* One V-cycle of AMG (hierarchy from the host matrix) as the
 * preconditioner, in float inside the double Krylov method with
 * --precision mixed. */
static clmg_status setup_amg(const solve_options *options, solve_resources *s,
                             const clmg_matrix_options *matrix_options, const char **failed_step) {
  static char why[1536];
  if (!s->a.row_ptr) {
    *failed_step = "--precond amg builds its hierarchy from the matrix on the host, which "
                   "is not there";
    return CLMG_ERROR_UNSUPPORTED;
  }
  *failed_step = "reading the AMG near-nullspace";
  clmg_amg_options amg = options->amg;
  if (amg.strength_threshold < 0) /* unset */
    amg.strength_threshold = 0;
  if (amg.coarsening == CLMG_AMG_CLASSICAL && options->amg.strength_threshold >= 0)
    amg.classical_threshold = options->amg.strength_threshold;
  double *candidates = NULL;
  clmg_status status = amg_candidates(options, s->n, &amg, &candidates, why, sizeof why);
  if (status != CLMG_SUCCESS) {
    *failed_step = why;
    return status;
  }
  *failed_step = "setting up the AMG preconditioner";
  if (options->view)
    amg.times = &s->amg_times;
  clmg_multigrid_options mg;
  clmg_multigrid_options_defaults(&mg);
  int gauss_seidel = strcmp(options->amg_smoother, "gauss-seidel") == 0;
  int chebyshev = strcmp(options->amg_smoother, "chebyshev") == 0;
  mg.pre_smoothing = mg.post_smoothing = options->smoothing_steps > 0 ? options->smoothing_steps
                                         : gauss_seidel               ? 1
                                         : chebyshev                  ? 3
                                                                      : 2;
  mg.matrix = *matrix_options;
  mg.matrix.precision = options->mixed ? CLMG_FLOAT : options->precision;
  int patch = strcmp(options->amg_smoother, "patch") == 0;
  clmg_amg_patch_smoothing patches = {NULL, options->inner, 0, 0, gauss_seidel};
  if (!patch && !gauss_seidel)
    clmg_smoother_type_parse(options->amg_smoother, &mg.smoother);
  status = clmg_amg_multigrid_create(s->context, &s->a, &amg, &mg,
                                     patch || gauss_seidel ? &patches : NULL, &s->multigrid);
  free(candidates);
  s->have_amg_times = status == CLMG_SUCCESS && options->view;
  clmg_preconditioner cycle;
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_preconditioner(s->multigrid, &cycle);
  if (status == CLMG_SUCCESS && options->mixed)
    status = clmg_preconditioner_in_precision(s->context, s->n, CLMG_DOUBLE, CLMG_FLOAT, &cycle,
                                              &s->preconditioner);
  else if (status == CLMG_SUCCESS)
    s->preconditioner = cycle;
  return status;
}

/* Uploads A and b and sets up the preconditioner. */
static clmg_status build_on_device(const solve_options *options, solve_resources *s,
                                   const char **failed_step) {
  size_t n = s->n;
  clmg_matrix_options matrix_options;
  clmg_matrix_options_defaults(&matrix_options);
  matrix_options.format = options->format;
  matrix_options.precision = options->precision;
  *failed_step = "building the device matrix";
  /* A matrix made on the device (clmg helmholtz) is already there */
  clmg_status status =
      s->matrix ? CLMG_SUCCESS : clmg_matrix_create(s->context, &s->a, &matrix_options, &s->matrix);
  if (status == CLMG_SUCCESS) {
    status = clmg_operator_from_matrix(s->matrix, 0, &s->op);
  }
  if (status == CLMG_SUCCESS && options->mixed && !s->float_matrix) {
    matrix_options.precision = CLMG_FLOAT;
    status = clmg_matrix_create(s->context, &s->a, &matrix_options, &s->float_matrix);
  }
  if (status != CLMG_SUCCESS) {
    return status;
  }
  *failed_step = "creating the vectors";
  status = clmg_vector_create(s->context, options->precision, n, &s->device_x);
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(s->context, options->precision, n, &s->residual);
  }
  /* b assembled on the device (clmg helmholtz) is there already */
  if (status == CLMG_SUCCESS && !s->device_b) {
    status = clmg_vector_create(s->context, options->precision, n, &s->device_b);
    if (status == CLMG_SUCCESS) {
      *failed_step = "uploading b";
      status = clmg_vector_upload_doubles(s->device_b, s->b);
    }
  }
  if (status != CLMG_SUCCESS) {
    return status;
  }
  if (options->preconditioner == PRECONDITIONER_AMG) {
    status = setup_amg(options, s, &matrix_options, failed_step);
    if (status != CLMG_SUCCESS) {
      return status;
    }
  }
  if (options->preconditioner == PRECONDITIONER_JACOBI) {
    *failed_step = "setting up the Jacobi preconditioner";
    if (options->mixed) {
      clmg_preconditioner in_float;
      status = clmg_preconditioner_jacobi(s->float_matrix, &in_float);
      if (status == CLMG_SUCCESS) {
        status = clmg_preconditioner_in_precision(s->context, n, CLMG_DOUBLE, CLMG_FLOAT, &in_float,
                                                  &s->preconditioner);
      }
    } else {
      status = clmg_preconditioner_jacobi(s->matrix, &s->preconditioner);
    }
    if (status != CLMG_SUCCESS) {
      return status;
    }
  }
  *failed_step = "uploading";
  return clmg_finish(s->context);
}

/* One iteration from x = 0, to compile the kernels (or load them from the
 * binary cache) before the timed solve. Its outcome does not matter: the
 * real solve meets any breakdown again and reports it. */
static clmg_status warm_up(const solve_options *o, const solve_resources *s,
                           const clmg_preconditioner *preconditioner) {
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.max_iterations = 1;
  options.gmres_restart = o->restart;
  clmg_status status = clmg_krylov_solve(o->method, &s->op, s->device_b, s->device_x,
                                         preconditioner, &options, NULL);
  if (status == CLMG_ERROR_NOT_CONVERGED || status == CLMG_ERROR_INVALID_ARGUMENT) {
    status = CLMG_SUCCESS;
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_fill(s->device_x, 0.0);
  }
  return status == CLMG_SUCCESS ? clmg_finish(s->context) : status;
}

static void print_header(const solve_options *options, const solve_resources *s) {
  const clmg_device_info *device = clmg_context_device(s->context);
  if (options->matrix_path) {
    printf("%-18s %s\n", "matrix", options->matrix_path);
  }
  printf("%-18s %zu\n", "rows", s->n);
  printf("%-18s %zu\n", "nonzeros", clmg_matrix_nnz(s->matrix));
  printf("%-18s %s\n", "right-hand side",
         options->rhs_path ? options->rhs_path : s->rhs_description);
  printf("%-18s %u:%u %s (%s)\n", "device", device->platform_index, device->device_index,
         device->name, device->platform_name);
  printf("%-18s %s\n", "format", clmg_matrix_describe(s->matrix));
  printf("%-18s %s\n", "precision", clmg_dtype_name(options->precision));
  char method[32];
  if (options->method == CLMG_KRYLOV_GMRES) {
    snprintf(method, sizeof method, "gmres(%d)", options->restart);
  } else {
    snprintf(method, sizeof method, "%s", clmg_krylov_method_name(options->method));
  }
  printf("%-18s %s, preconditioner %s%s, tolerance %g, at most %d iterations\n", "method", method,
         preconditioner_name(options->preconditioner), options->mixed ? " in float" : "",
         options->tolerance, options->max_iterations);
  fflush(stdout); /* the solve may take a while: show what is known */
}

/* After the solve: x on the host, the true residual and the error vs ones. */
static clmg_status evaluate(solve_resources *s, solve_report *report, int b_is_a_ones) {
  double residual_norm = 0, b_norm = 0;
  clmg_status status = clmg_defect(s->matrix, s->device_b, s->device_x, s->residual);
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

/* From the context on: builds what is missing on the device (the matrix
 * from host CSR unless the caller made it there), solves, writes x and
 * reports; returns the exit status. s is released by the caller. */
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
  clmg_status status = build_on_device(options, s, &failed_step);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s->context, status, failed_step);
    return EXIT_LIBRARY_FAILURE;
  }
  report->build_s = apputil_now() - start;
  cli_progress("matrix built and uploaded to the device");
  report->matrix = s->matrix;
  report->multigrid = s->multigrid;
  report->amg_times = s->have_amg_times ? &s->amg_times : NULL;
  const clmg_preconditioner *preconditioner =
      options->preconditioner != PRECONDITIONER_NONE ? &s->preconditioner : NULL;

  if (!options->common.json) {
    print_header(options, s);
    if (options->view)
      show_view(s->multigrid, s->have_amg_times ? &s->amg_times : NULL, s->matrix, NULL);
  }
  start = apputil_now();
  status = warm_up(options, s, preconditioner);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s->context, status, "compiling the kernels");
    return EXIT_LIBRARY_FAILURE;
  }
  report->kernels_s = apputil_now() - start;
  cli_progress("kernels ready");

  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = options->tolerance;
  krylov.max_iterations = options->max_iterations;
  krylov.gmres_restart = options->restart;
  krylov.keep_history = 1;
  solve_progress live = {!options->quiet, apputil_now(), apputil_now()};
  krylov.monitor = solve_print_progress;
  krylov.monitor_data = &live;
  start = apputil_now();
  report->status = clmg_krylov_solve(options->method, &s->op, s->device_b, s->device_x,
                                     preconditioner, &krylov, &report->result);
  report->solve_s = apputil_now() - start;

  /* Keep the solver's message: evaluate() makes library calls that clear it. */
  char solver_message[1024];
  snprintf(solver_message, sizeof solver_message, "%s", clmg_context_message(s->context));
  report->message = solver_message;
  status = evaluate(s, report, b_is_a_ones);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s->context, status, "reading back the solution");
    clmg_krylov_result_free(&report->result);
    return EXIT_LIBRARY_FAILURE;
  }
  /* success only with a finite x whose recomputed residual is finite */
  size_t not_finite = s->n;
  for (size_t i = 0; i < s->n && not_finite == s->n; i++)
    if (!isfinite(s->x[i]))
      not_finite = i;
  if (report->status == CLMG_SUCCESS &&
      (not_finite < s->n || !isfinite(report->true_relative_residual))) {
    report->status = CLMG_ERROR_NOT_CONVERGED;
    report->result.converged = 0;
    if (not_finite < s->n)
      snprintf(solver_message, sizeof solver_message,
               "the method reported convergence, but x[%zu] = %g is not finite", not_finite + 1,
               s->x[not_finite]);
    else
      snprintf(solver_message, sizeof solver_message,
               "the method reported convergence, but the residual recomputed from x is not "
               "finite (A x overflows)");
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
    print_json(options, report);
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
  report.preconditioner_name = preconditioner_name(options.preconditioner);

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
  if (!s.context) {
    solve_release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  report.device = clmg_context_device(s.context);
  if (options.precision == CLMG_DOUBLE) {
    int fp64 = cli_double_precision(command, s.context, options.precision_asked, options.quiet);
    if (fp64 < 0) {
      solve_release(&s);
      return EXIT_LIBRARY_FAILURE;
    }
    if (fp64 == 0) {
      options.precision = CLMG_FLOAT;
      if (!options.tolerance_given) {
        options.tolerance = clmg_default_tolerance(CLMG_FLOAT);
      }
    }
  }

  int code = solve_on_device(command, &options, &s, &report, options.rhs_path == NULL);
  solve_release(&s);
  return code;
}
