/* clmg homg: the Poisson test of Becerra-Sagredo et al. 2011 (eqs. 4-7) on
 * the device with HOMG (MFMG cycles), the classic V-cycle or FMG: the L1 error
 * against the analytic solution and the residual per cycle, work units and
 * times; pictures of the solution as VTK or PNG, and of every MFMG step. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "cli.h"
#include "grid_output.h"
#include "subcommands.h"

enum {
  OPTION_N = OPTION_FIRST_OWN,
  OPTION_METHOD,
  OPTION_MAXI,
  OPTION_SCHEDULE,
  OPTION_CYCLES,
  OPTION_CYCLES_OLD,
  OPTION_TOL,
  OPTION_ERROR_TOL,
  OPTION_STAGNATION,
  OPTION_PRECISION,
  OPTION_OMEGA,
  OPTION_SMOOTHING,
  OPTION_STEPS,
  OPTION_VTK,
  OPTION_PNG,
  OPTION_SNAPSHOTS,
  OPTION_SNAPSHOT_FORMAT,
  OPTION_OPTIONS_FILE,
  OPTION_SET
};

static void print_homg_usage(FILE *out) {
  fputs("Usage: clmg homg [OPTIONS]\n"
        "\n"
        "Solves the Poisson test of Becerra-Sagredo et al. 2011 (eqs. 4-6) on the unit\n"
        "square: laplace(u) = f with u = -x^2 y^2 (1-x^2)(1-y^2), u = 0 on the boundary,\n"
        "on an n x n grid (five-point Laplacian, h = 1/(n-1)), and reports after every\n"
        "cycle the normalised L1 error of eq. 7, sum|u - x| / sum|u|, against the\n"
        "analytic solution, and the relative residual ||f - A x|| / ||f||.\n"
        "\n"
        "Methods:\n"
        "  homg    high-occupancy multigrid: every step acts on the whole grid (the\n"
        "          points of the current level relax, all others interpolate) in MFMG\n"
        "          cycles: 2 steps on the coarsest level, doubling per finer level, at\n"
        "          most MaxI; cycles restart on the residual equation\n"
        "  vcycle  classic V(2,2) cycles, damped Jacobi, full weighting, bilinear\n"
        "  fmg     classic full multigrid (one V-cycle per level), then V-cycles\n"
        "\n"
        "Options:\n"
        "      --n N              points per side (default 129): 2^k + 1 (nested levels),\n"
        "                         or 2^k for homg (the paper's four-subdomain strategy)\n"
        "      --method M         homg (default), vcycle or fmg\n"
        "      --maxi M           MaxI, the most steps per level of an MFMG cycle (default 32)\n"
        "      --schedule S       the order of the levels in an MFMG cycle (the paper's Fig. 1\n"
        "                         is not in its text; docs/homg.md compares the readings):\n"
        "                         sawtooth (default: each new finer level k, then k-1 and k\n"
        "                         again, steps off the level adding interpolated variations;\n"
        "                         one cycle reaches the paper's 5% / 1.6% errors), ascent\n"
        "                         (coarsest to finest once, interpolated values: the first\n"
        "                         reading) or vshape (a V back to the coarsest after each new\n"
        "                         level)\n"
        "      --maxit K          at most K cycles (default 50); given without --tol,\n"
        "                         exactly K cycles\n"
        "      --tol T            stop when ||f - A x|| <= T ||f|| (default 1e-10, float 1e-6)\n"
        "      --error-tol E      stop when the L1 error is <= E\n"
        "      --stagnation F     stop when a cycle cuts the residual by less than F: the\n"
        "                         rounding floor, which grows as n^2, is reached (default\n"
        "                         1.1; 0 turns it off)\n"
        "      --precision P      double (default) or float; on a device without fp64\n"
        "                         the default is float, and double fails\n"
        "      --omega W          damped-Jacobi weight, 0 < W <= 1 (default 0.8)\n"
        "      --smoothing A,B    V-cycle sweeps before and after the coarse correction\n"
        "                         (default 2,2; 0 to 1000, not both 0)\n"
        "      --options FILE     solver options from a JSON file ({\"homg\": {\"maxi\": 4},\n"
        "                         \"maxit\": 1}); the flags above and --set override it. The\n"
        "                         --json result's \"options\" object is such a file: it\n"
        "                         repeats the run. `clmg help options` lists every key\n"
        "      --set \"K=V ...\"    options by key; each flag above is one: --method is\n"
        "                         homg.method, --maxi homg.maxi, --schedule homg.schedule,\n"
        "                         --maxit maxit, --tol tol, --error-tol homg.error_tol,\n"
        "                         --stagnation homg.stagnation, --precision precision,\n"
        "                         --omega mg.omega, --smoothing A,B mg.pre=A mg.post=B\n"
        "      --steps            also print the L1 error after every step of the first\n"
        "                         MFMG cycle (the paper's Fig. 4)\n"
        "      --vtk FILE         write the solution, u and the error as a legacy VTK file\n"
        "                         (ParaView, VisIt)\n"
        "      --png FILE         write the solution as a PNG image\n"
        "      --snapshots PREFIX write the approximation after every step of the first\n"
        "                         MFMG cycle to PREFIX-0001.vtk, ... (the paper's Fig. 3)\n"
        "      --snapshot-format F  vtk (default) or png\n"
        "  -q, --quiet            no per-cycle table, no progress or first-run lines on\n"
        "                         stderr\n" COMMON_OPTIONS_HELP "\n"
        "Work units (WU): one WU is one kernel pass over the whole grid (a fused HOMG\n"
        "step, a residual); a pass over a coarse level of nc^2 points counts nc^2/n^2.\n"
        "Times: setup_s creates the solver and uploads the problem, kernels_s compiles\n"
        "the kernels (a warm-up on a small grid; the first run on a device says so on\n"
        "stderr, with the cache directory), solve_s is the solve, including one\n"
        "residual read-back per cycle.\n"
        "--json prints one object on stdout (n, levels, method, status, message,\n"
        "converged, cycles, iterations, work_units, l1_error, relative_residual,\n"
        "setup_s, kernels_s, solve_s, solve_per_work_unit_s, history, options, ...); on any\n"
        "failure, bad usage included, one object with status (\"usage_error\" or the\n"
        "library's status) and message.\n"
        "\n"
        "Examples:\n"
        "  clmg homg --n 129 --maxi 4 --maxit 1          one MFMG cycle (paper: ~5% error)\n"
        "  clmg homg --n 1025 --maxi 32                   restarts to the discretisation error\n"
        "  clmg homg --n 128 --maxi 2 --maxit 1 --snapshots fig3 --snapshot-format png\n"
        "  clmg homg --n 513 --method fmg --json\n"
        "\n"
        "Exit status: 0 converged (or ran the --maxit asked for), 1 failure or a\n"
        "tolerance not met, 2 bad usage.\n",
        out);
}

/* The solver's options (clmg_options_homg) from the flags and --set texts,
 * and with the --options file when db is not NULL (which then gets them,
 * resolved, for the report), into o->solver; unused keys into o->unused.
 * On a device without fp64 (context not NULL) precision is float where it
 * was not given. Returns 0, or the exit status after reporting. */
static int settle_options(const char *command, homg_options *o, clmg_context *context,
                          clmg_options **db) {
  cli_settings settings = o->settings;
  if (!db)
    settings.options_path = NULL; /* read by run_homg */
  clmg_options *made = NULL;
  if (!cli_make_options(command, &settings, &made))
    return EXIT_LIBRARY_FAILURE;
  if (context && !cli_choose_precision(command, made, context, o->quiet)) {
    clmg_options_destroy(made);
    return EXIT_LIBRARY_FAILURE;
  }
  clmg_error error = {{0}};
  clmg_status status = clmg_options_homg(made, &o->solver, o->unused, sizeof o->unused, &error);
  if (status != CLMG_SUCCESS) {
    clmg_options_destroy(made);
    return cli_usage(command, "%s", error.message);
  }
  if (db)
    *db = made;
  else
    clmg_options_destroy(made);
  if ((o->steps || o->snapshot_prefix) && o->solver.method != CLMG_HOMG_MFMG)
    return cli_usage(command, "--steps and --snapshots follow the steps of the homg method");
  return 0;
}

int homg_parse_options(int argc, char **argv, const cli_options *defaults, homg_options *o) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      {"n", required_argument, NULL, OPTION_N},
      {"method", required_argument, NULL, OPTION_METHOD},
      {"maxi", required_argument, NULL, OPTION_MAXI},
      {"schedule", required_argument, NULL, OPTION_SCHEDULE},
      {"maxit", required_argument, NULL, OPTION_CYCLES},
      {"cycles", required_argument, NULL, OPTION_CYCLES_OLD},
      {"tol", required_argument, NULL, OPTION_TOL},
      {"error-tol", required_argument, NULL, OPTION_ERROR_TOL},
      {"stagnation", required_argument, NULL, OPTION_STAGNATION},
      {"precision", required_argument, NULL, OPTION_PRECISION},
      {"omega", required_argument, NULL, OPTION_OMEGA},
      {"smoothing", required_argument, NULL, OPTION_SMOOTHING},
      {"options", required_argument, NULL, OPTION_OPTIONS_FILE},
      {"set", required_argument, NULL, OPTION_SET},
      {"steps", no_argument, NULL, OPTION_STEPS},
      {"vtk", required_argument, NULL, OPTION_VTK},
      {"png", required_argument, NULL, OPTION_PNG},
      {"snapshots", required_argument, NULL, OPTION_SNAPSHOTS},
      {"snapshot-format", required_argument, NULL, OPTION_SNAPSHOT_FORMAT},
      {"quiet", no_argument, NULL, 'q'},
      {NULL, 0, NULL, 0},
  };
  /* the solver flags are the options layer's keys */
  static const struct {
    int option;
    const char *flag, *key;
  } keys[] = {{OPTION_METHOD, "--method", "homg.method"},
              {OPTION_MAXI, "--maxi", "homg.maxi"},
              {OPTION_SCHEDULE, "--schedule", "homg.schedule"},
              {OPTION_CYCLES, "--maxit", "maxit"},
              {OPTION_CYCLES_OLD, "--cycles", "maxit"},
              {OPTION_TOL, "--tol", "tol"},
              {OPTION_ERROR_TOL, "--error-tol", "homg.error_tol"},
              {OPTION_STAGNATION, "--stagnation", "homg.stagnation"},
              {OPTION_PRECISION, "--precision", "precision"},
              {OPTION_OMEGA, "--omega", "mg.omega"}};
  const char *command = argv[0];
  memset(o, 0, sizeof *o);
  o->common = *defaults;
  o->n = 129;
  o->snapshot_format = "vtk";
  clmg_homg_options_defaults(&o->solver);

  int option;
  long whole = 0;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS "q", long_options, NULL)) != -1) {
    int common = cli_apply_common_option(command, option, &o->common);
    if (common < 0) {
      return cli_usage_error(command);
    }
    if (common) {
      continue;
    }
    int recorded = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
      if (keys[k].option == option) {
        if (option == OPTION_CYCLES_OLD) {
          apputil_old_spelling(command, "--cycles", "--maxit");
        }
        if (cli_record_setting(command, keys[k].flag, keys[k].key, optarg, &o->settings) < 0) {
          return cli_usage_error(command);
        }
        recorded = 1;
      }
    }
    if (recorded) {
      continue;
    }
    switch (option) {
    case OPTION_N:
      if (!cli_parse_long(command, "--n", optarg, 3, 32769, &whole)) {
        return cli_usage_error(command);
      }
      o->n = (size_t)whole;
      break;
    case OPTION_SMOOTHING: {
      /* PRE,POST: mg.pre and mg.post */
      const char *comma = strchr(optarg, ',');
      size_t length = comma ? (size_t)(comma - optarg) : 0;
      if (!comma || length == 0 || length >= sizeof o->smoothing[0] ||
          strlen(comma + 1) >= sizeof o->smoothing[1]) {
        return cli_usage(command, "--smoothing needs PRE,POST (0 to 1000, not both 0), not '%s'",
                         optarg);
      }
      memcpy(o->smoothing[0], optarg, length);
      o->smoothing[0][length] = '\0';
      strcpy(o->smoothing[1], comma + 1);
      if (cli_record_setting(command, "--smoothing", "mg.pre", o->smoothing[0], &o->settings) < 0 ||
          cli_record_setting(command, "--smoothing", "mg.post", o->smoothing[1], &o->settings) <
              0) {
        return cli_usage_error(command);
      }
      break;
    }
    case OPTION_OPTIONS_FILE:
      o->settings.options_path = optarg;
      break;
    case OPTION_SET:
      if (cli_record_setting(command, "--set", NULL, optarg, &o->settings) < 0) {
        return cli_usage_error(command);
      }
      break;
    case OPTION_STEPS:
      o->steps = 1;
      break;
    case OPTION_VTK:
      o->vtk_path = optarg;
      break;
    case OPTION_PNG:
      o->png_path = optarg;
      break;
    case OPTION_SNAPSHOTS:
      o->snapshot_prefix = optarg;
      break;
    case OPTION_SNAPSHOT_FORMAT:
      if (strcmp(optarg, "vtk") != 0 && strcmp(optarg, "png") != 0) {
        return cli_usage(command, "unknown snapshot format '%s' (there are: vtk, png)", optarg);
      }
      o->snapshot_format = optarg;
      break;
    case 'q':
      o->quiet = 1;
      break;
    default:
      return cli_usage_error(command);
    }
  }
  if (o->common.help) {
    return 0;
  }
  if (optind < argc) {
    return cli_usage(command, "unexpected argument '%s'", argv[optind]);
  }
  /* the flags' values and combinations checked now; run_homg settles them
   * again with the --options file and the device's precision */
  return settle_options(command, o, NULL, NULL);
}

/* ---- host copies of device grids ---- */

static clmg_status upload(clmg_vector *v, const double *values, size_t count) {
  if (clmg_vector_type(v) == CLMG_DOUBLE) {
    return clmg_vector_upload(v, values);
  }
  float *f = malloc(count * sizeof *f);
  if (!f) {
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t i = 0; i < count; i++) {
    f[i] = (float)values[i];
  }
  clmg_status status = clmg_vector_upload(v, f);
  free(f);
  return status;
}

/* out = v, or out += v when add. */
static clmg_status download(const clmg_vector *v, double *out, size_t count, int add) {
  if (clmg_vector_type(v) == CLMG_DOUBLE && !add) {
    return clmg_vector_download(v, out);
  }
  int is_float = clmg_vector_type(v) == CLMG_FLOAT;
  void *buffer = malloc(count * (is_float ? sizeof(float) : sizeof(double)));
  if (!buffer) {
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  clmg_status status = clmg_vector_download(v, buffer);
  for (size_t i = 0; status == CLMG_SUCCESS && i < count; i++) {
    double value = is_float ? ((const float *)buffer)[i] : ((const double *)buffer)[i];
    out[i] = add ? out[i] + value : value;
  }
  free(buffer);
  return status;
}

/* ---- snapshots: the monitor ---- */

typedef struct snapshots {
  const homg_options *options;
  double *values;
  int written;
  int failed;
  char error[512];
} snapshots;

static void write_snapshot(void *data, const clmg_homg_step_info *info, const clmg_vector *x,
                           const clmg_vector *correction) {
  snapshots *s = data;
  if (info->cycle != 1 || s->failed) {
    return;
  }
  size_t points = s->options->n * s->options->n;
  clmg_status status = download(x, s->values, points, 0);
  if (status == CLMG_SUCCESS && correction) {
    status = download(correction, s->values, points, 1);
  }
  if (status != CLMG_SUCCESS) {
    snprintf(s->error, sizeof s->error, "reading step %d back: %s", info->step,
             clmg_status_string(status));
    s->failed = 1;
    return;
  }
  int png = strcmp(s->options->snapshot_format, "png") == 0;
  char path[4096], title[160];
  snprintf(path, sizeof path, "%s-%04d.%s", s->options->snapshot_prefix, info->step,
           png ? "png" : "vtk");
  snprintf(title, sizeof title, "clmg homg, n = %zu, MFMG step %d of %d (level %d)", s->options->n,
           info->step, info->steps, info->level);
  grid_field field = {"approximation", s->values};
  int ok = png ? write_grid_png(path, s->options->n, s->values, s->error, sizeof s->error)
               : write_grid_vtk(path, s->options->n, title, &field, 1, s->error, sizeof s->error);
  if (ok) {
    s->written++;
  } else {
    s->failed = 1;
  }
}

/* ---- reports ---- */

typedef struct homg_report {
  const clmg_device_info *device;
  clmg_homg_info info;
  clmg_homg_result result;
  clmg_status status;
  char message[2048];
  double setup_s, kernels_s;
  int *levels; /* the level of every MFMG step */
  size_t level_count;
  const clmg_options *options; /* the solver's, resolved: --options takes them back */
} homg_report;

static const char *method_description(const homg_options *o, const homg_report *r, char *text,
                                      size_t size) {
  if (o->solver.method == CLMG_HOMG_MFMG) {
    snprintf(text, size, "homg: MFMG cycles (%s), MaxI %d (%d steps per cycle), omega %g",
             clmg_homg_schedule_name(o->solver.schedule), o->solver.max_iterations_per_level,
             r->info.steps_per_cycle, o->solver.omega);
  } else {
    snprintf(text, size, "%s: V(%d,%d) cycles, damped Jacobi omega %g",
             o->solver.method == CLMG_HOMG_FMG ? "fmg then V-cycles" : "vcycle",
             o->solver.pre_smoothing, o->solver.post_smoothing, o->solver.omega);
  }
  return text;
}

static void print_text(const homg_options *o, const homg_report *r) {
  const clmg_homg_result *result = &r->result;
  if (o->steps && result->steps_length > 0) {
    printf("\nfirst cycle, step by step (L1 error of x + correction)\n");
    printf("  %5s  %5s  %9s  %10s\n", "step", "level", "WU", "L1 error");
    for (size_t k = 0; k < result->steps_length; k++) {
      const clmg_homg_record *s = &result->steps[k];
      printf("  %5zu  %5d  %9.2f  %10.4e\n", k + 1, k < r->level_count ? r->levels[k] : -1,
             s->work_units, s->l1_error);
    }
  }
  if (!o->quiet) {
    printf("\n  %5s  %10s  %10s  %12s  %12s  %10s\n", "cycle", "iterations", "WU", "L1 error",
           "rel. resid.", "time_s");
    for (size_t k = 0; k < result->history_length; k++) {
      const clmg_homg_record *h = &result->history[k];
      printf("  %5d  %10d  %10.2f  %12.4e  %12.4e  %10.4f\n", h->cycle, h->iterations,
             h->work_units, h->l1_error, h->relative_residual, h->seconds);
    }
    printf("\n");
  }
  if (o->solver.relative_tolerance > 0 || o->solver.error_tolerance > 0 ||
      o->solver.stagnation_factor > 0) {
    printf("%-18s %s%s\n", "converged", result->converged ? "yes" : "no",
           result->stagnated ? " (the residual stopped falling: rounding floor)" : "");
  }
  printf("%-18s %d\n", "cycles", result->cycles);
  printf("%-18s %d\n", "iterations", result->iterations);
  printf("%-18s %.2f\n", "work units", result->work_units);
  printf("%-18s %.6e\n", "L1 error", result->l1_error);
  printf("%-18s %.6e\n", "relative residual", result->relative_residual);
  printf("%-18s %.4f\n", "setup_s", r->setup_s);
  printf("%-18s %.4f\n", "kernels_s", r->kernels_s);
  printf("%-18s %.4f", "solve_s", result->time_s);
  if (result->work_units > 0) {
    printf(" (%.4g ms per WU)", 1e3 * result->time_s / result->work_units);
  }
  printf("\n");
}

static void json_record(json_writer *w, const clmg_homg_record *h) {
  json_object_begin(w, NULL);
  json_integer(w, "cycle", h->cycle);
  json_integer(w, "iterations", h->iterations);
  json_number(w, "work_units", h->work_units);
  json_number(w, "l1_error", h->l1_error);
  json_number(w, "relative_residual", h->relative_residual);
  json_number(w, "seconds", h->seconds);
  json_object_end(w);
}

static void print_json(const homg_options *o, const homg_report *r) {
  const clmg_homg_result *result = &r->result;
  json_writer w;
  json_result_begin(&w, stdout, "homg");
  json_integer(&w, "n", (long long)o->n);
  json_integer(&w, "unknowns", (long long)o->n * (long long)o->n);
  json_number(&w, "h", r->info.h);
  json_string(&w, "grid", r->info.four_subdomains ? "four-subdomain" : "nested");
  json_integer(&w, "levels", r->info.levels);
  json_string(&w, "method", clmg_homg_method_name(o->solver.method));
  json_integer(&w, "maxi", o->solver.max_iterations_per_level);
  json_string(&w, "schedule", clmg_homg_schedule_name(o->solver.schedule));
  json_integer(&w, "steps_per_cycle", r->info.steps_per_cycle);
  json_string(&w, "precision", clmg_dtype_name(o->solver.precision));
  json_number(&w, "omega", o->solver.omega);
  json_integer(&w, "pre_smoothing", o->solver.pre_smoothing);
  json_integer(&w, "post_smoothing", o->solver.post_smoothing);
  json_device(&w, r->device);
  json_number(&w, "relative_tolerance", o->solver.relative_tolerance);
  json_number(&w, "error_tolerance", o->solver.error_tolerance);
  json_integer(&w, "max_cycles", o->solver.max_cycles);
  json_string(&w, "status", clmg_status_string(r->status));
  json_string(&w, "message", r->status != CLMG_SUCCESS ? r->message : "");
  json_bool(&w, "converged", result->converged);
  json_bool(&w, "stagnated", result->stagnated);
  json_integer(&w, "cycles", result->cycles);
  json_integer(&w, "iterations", result->iterations);
  /* relaxation steps of the smoothers, all levels told; cycles are "cycles" */
  json_string(&w, "iteration_kind", "relaxation");
  json_number(&w, "work_units", result->work_units);
  json_number(&w, "l1_error", result->l1_error);
  json_number(&w, "relative_residual", result->relative_residual);
  json_number(&w, "initial_residual", result->initial_residual);
  json_number(&w, "solve_s", result->time_s);
  json_number(&w, "solve_per_work_unit_s",
              result->work_units > 0 ? result->time_s / result->work_units : NAN);
  json_number(&w, "setup_s", r->setup_s);
  json_number(&w, "kernels_s", r->kernels_s); /* compile_s's old name, for one release */
  json_number(&w, "compile_s", r->kernels_s);
  json_integer(&w, "device_bytes", (long long)r->info.device_bytes);
  char *options = clmg_options_to_json(r->options, 0); /* the keys read, as resolved */
  json_raw(&w, "options", options);
  free(options);
  json_array_begin(&w, "history");
  for (size_t k = 0; k < result->history_length; k++) {
    json_record(&w, &result->history[k]);
  }
  json_array_end(&w);
  if (o->steps) {
    json_array_begin(&w, "steps");
    for (size_t k = 0; k < result->steps_length; k++) {
      const clmg_homg_record *step = &result->steps[k];
      json_object_begin(&w, NULL);
      json_integer(&w, "step", (long long)k + 1);
      json_integer(&w, "level", k < r->level_count ? r->levels[k] : -1);
      json_number(&w, "work_units", step->work_units);
      json_number(&w, "l1_error", step->l1_error);
      json_object_end(&w);
    }
    json_array_end(&w);
  }
  json_object_end(&w);
  json_end(&w);
}

/* ---- the command ---- */

typedef struct homg_resources {
  clmg_context *context;
  clmg_options *options; /* the solver's, resolved (clmg_options_homg) */
  clmg_homg *solver;
  clmg_vector *f, *x, *u;
  double *host_f, *host_u, *host_x;
} homg_resources;

static void release(homg_resources *s) {
  clmg_vector_destroy(s->f);
  clmg_vector_destroy(s->x);
  clmg_vector_destroy(s->u);
  clmg_homg_destroy(s->solver);
  clmg_options_destroy(s->options);
  clmg_context_destroy(s->context);
  free(s->host_f);
  free(s->host_u);
  free(s->host_x);
}

static void solver_options(const homg_options *o, clmg_homg_options *options) {
  *options = o->solver;
  options->record_steps = o->steps;
  options->monitor = NULL;
  options->monitor_data = NULL;
}

/* A two-cycle solve on a small grid of the same kind compiles the kernels
 * (or loads them from the cache) and lets the OpenCL runtime finish its
 * first-launch work before the timed solve. */
static clmg_status warm_up(clmg_context *context, const homg_options *o) {
  homg_options small = *o;
  small.n = o->n % 2 == 0 ? 16 : 17;
  small.solver.max_cycles = 2;
  small.solver.relative_tolerance = 0;
  /* exactly two cycles: no error target (its u is not the small grid's
   * solution) or stagnation stop, which would make it "not converged" */
  small.solver.error_tolerance = 0;
  small.solver.stagnation_factor = 0;
  small.steps = 0;
  clmg_homg_options options;
  solver_options(&small, &options);
  size_t points = small.n * small.n;
  clmg_homg *solver = NULL;
  clmg_vector *f = NULL, *x = NULL;
  clmg_status status = clmg_homg_create(context, small.n, &options, &solver);
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(context, o->solver.precision, points, &f);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(context, o->solver.precision, points, &x);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_fill(f, 1.0);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_homg_solve(solver, f, x, f, NULL);
  }
  clmg_vector_destroy(f);
  clmg_vector_destroy(x);
  clmg_homg_destroy(solver);
  return status;
}

/* Checks that the whole run fits before anything large is allocated: the
 * solver, the grids f, x and u, the warm-up's small solver and grids on
 * the device; the host copies of the grids (and the float, snapshot and
 * picture buffers) on the host. */
static clmg_status check_memory(clmg_context *context, const homg_options *o) {
  clmg_homg_options options;
  solver_options(o, &options);
  uint64_t device = 0, largest = 0, host = 0;
  clmg_status status = clmg_homg_memory_need(context, o->n, &options, &device, &largest, &host);
  homg_options small = *o;
  small.n = o->n % 2 == 0 ? 16 : 17; /* as warm_up */
  uint64_t warm_up = 0;
  if (status == CLMG_SUCCESS) {
    solver_options(&small, &options);
    status = clmg_homg_memory_need(context, small.n, &options, &warm_up, NULL, NULL);
  }
  if (status != CLMG_SUCCESS) {
    return status;
  }
  uint64_t points = (uint64_t)o->n * o->n, element = clmg_dtype_size(o->solver.precision);
  uint64_t grid = points * element;
  device += 3 * grid + warm_up + 2 * (uint64_t)small.n * small.n * element;
  largest = grid > largest ? grid : largest;
  uint64_t per_point = 3 * sizeof(double); /* host f, u and x */
  per_point += o->solver.precision == CLMG_FLOAT ? sizeof(float) : 0;
  per_point += o->snapshot_prefix ? sizeof(double) + sizeof(float) : 0;
  per_point += o->vtk_path || o->png_path ? sizeof(double) : 0;
  host += points * per_point;
  char what[160];
  snprintf(what, sizeof what, "an n = %zu grid (%s method, %s)", o->n,
           clmg_homg_method_name(o->solver.method), clmg_dtype_name(o->solver.precision));
  return clmg_context_check_memory(context, device, largest, host, what);
}

/* Writes the --vtk and --png files; on failure returns 0 with the reason in
 * message. */
static int write_pictures(const homg_options *o, homg_resources *s, char *message,
                          size_t message_size) {
  if (!o->vtk_path && !o->png_path) {
    return 1;
  }
  size_t points = o->n * o->n;
  char error[512];
  double *difference = malloc(points * sizeof *difference);
  if (!difference) {
    snprintf(message, message_size, "out of memory for the error field");
    return 0;
  }
  for (size_t i = 0; i < points; i++) {
    difference[i] = s->host_x[i] - s->host_u[i];
  }
  int ok = 1;
  if (o->vtk_path) {
    char title[160];
    snprintf(title, sizeof title, "clmg homg, n = %zu, method %s: solution, exact, error", o->n,
             clmg_homg_method_name(o->solver.method));
    grid_field fields[] = {{"solution", s->host_x}, {"exact", s->host_u}, {"error", difference}};
    if (!write_grid_vtk(o->vtk_path, o->n, title, fields, 3, error, sizeof error)) {
      snprintf(message, message_size, "%s", error);
      ok = 0;
    }
  }
  if (ok && o->png_path && !write_grid_png(o->png_path, o->n, s->host_x, error, sizeof error)) {
    snprintf(message, message_size, "%s", error);
    ok = 0;
  }
  free(difference);
  return ok;
}

int run_homg(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  homg_options o;
  int exit_code = homg_parse_options(argc, argv, defaults, &o);
  if (exit_code != 0) {
    return exit_code;
  }
  if (o.common.help) {
    print_homg_usage(stdout);
    return EXIT_SUCCESS;
  }

  homg_resources s = {0};
  homg_report report = {0};
  size_t points = o.n * o.n;
  cli_progress_begin(o.quiet);
  /* The device and what fits on it first: a large grid that cannot run
   * fails at once, not after its host arrays were filled. */
  s.context = cli_open_context(command, &o.common, o.quiet);
  if (!s.context) {
    return EXIT_LIBRARY_FAILURE;
  }
  /* the solver's options with the --options file, and float on a device
   * without fp64 where no precision was given */
  exit_code = settle_options(command, &o, s.context, &s.options);
  if (exit_code != 0) {
    release(&s);
    return exit_code;
  }
  if (o.unused[0]) {
    fflush(stdout);
    fprintf(stderr, "%s: warning: %s: set, but clmg homg does not read %s\n", command, o.unused,
            strchr(o.unused, ',') ? "them" : "it");
  }
  clmg_status status = check_memory(s.context, &o);
  if (status != CLMG_SUCCESS) {
    if (status == CLMG_ERROR_INVALID_ARGUMENT) { /* an --n the method cannot use */
      char message[2048];
      snprintf(message, sizeof message, "%s", clmg_context_message(s.context));
      release(&s);
      return cli_usage(command, "%s", message);
    }
    cli_report(command, s.context, status, "the run does not fit");
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }

  s.host_f = malloc(points * sizeof *s.host_f);
  s.host_u = malloc(points * sizeof *s.host_u);
  s.host_x = malloc(points * sizeof *s.host_x);
  if (!s.host_f || !s.host_u || !s.host_x) {
    release(&s);
    return cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for an n = %zu grid",
                       o.n);
  }
  clmg_homg_paper_problem(o.n, s.host_f, s.host_u);
  report.device = clmg_context_device(s.context);
  report.options = s.options;

  snapshots shots = {&o, NULL, 0, 0, ""};
  clmg_homg_options options;
  solver_options(&o, &options);
  if (o.snapshot_prefix) {
    shots.values = malloc(points * sizeof *shots.values);
    if (!shots.values) {
      release(&s);
      return cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for the snapshots");
    }
    options.monitor = write_snapshot;
    options.monitor_data = &shots;
  }

  double start = apputil_now();
  const char *step = "creating the solver";
  status = clmg_homg_create(s.context, o.n, &options, &s.solver);
  if (status == CLMG_SUCCESS) {
    step = "uploading the problem";
    status = clmg_vector_create(s.context, o.solver.precision, points, &s.f);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(s.context, o.solver.precision, points, &s.x);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(s.context, o.solver.precision, points, &s.u);
  }
  if (status == CLMG_SUCCESS) {
    status = upload(s.f, s.host_f, points);
  }
  if (status == CLMG_SUCCESS) {
    status = upload(s.u, s.host_u, points);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_finish(s.context);
  }
  report.setup_s = apputil_now() - start;
  if (status == CLMG_SUCCESS) {
    cli_progress("solver created and the problem uploaded (%zu x %zu grid)", o.n, o.n);
    step = "compiling the kernels";
    start = apputil_now();
    status = warm_up(s.context, &o);
    report.kernels_s = apputil_now() - start;
    if (status == CLMG_SUCCESS) {
      cli_progress("kernels ready");
    }
  }
  if (status != CLMG_SUCCESS) {
    free(shots.values);
    if (status == CLMG_ERROR_INVALID_ARGUMENT) { /* an --n or --maxi the method cannot use */
      char message[2048];
      snprintf(message, sizeof message, "%s: %s", step, clmg_context_message(s.context));
      release(&s);
      return cli_usage(command, "%s", message);
    }
    cli_report(command, s.context, status, step);
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  clmg_homg_get_info(s.solver, &report.info);
  clmg_homg_schedule(s.solver, NULL, 0, &report.level_count);
  report.levels = malloc((report.level_count ? report.level_count : 1) * sizeof *report.levels);
  if (!report.levels) {
    free(shots.values);
    release(&s);
    return cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for the schedule");
  }
  clmg_homg_schedule(s.solver, report.levels, report.level_count, &report.level_count);

  if (!o.common.json) {
    char text[160];
    printf("%-18s %zu x %zu, %s, %d levels, h = %.6g\n", "grid", o.n, o.n,
           report.info.four_subdomains ? "four subdomains (n = 2^k)" : "nested (n = 2^k + 1)",
           report.info.levels, report.info.h);
    printf("%-18s the paper's eqs. 4-6: laplace(u) = f, u = -x^2 y^2 (1-x^2)(1-y^2)\n", "problem");
    printf("%-18s %u:%u %s (%s)\n", "device", report.device->platform_index,
           report.device->device_index, report.device->name, report.device->platform_name);
    printf("%-18s %s\n", "method", method_description(&o, &report, text, sizeof text));
    printf("%-18s %s\n", "precision", clmg_dtype_name(o.solver.precision));
    if (o.solver.relative_tolerance > 0 || o.solver.error_tolerance > 0) {
      printf("%-18s relative residual %g, L1 error %g, at most %d cycles\n", "tolerance",
             o.solver.relative_tolerance, o.solver.error_tolerance, o.solver.max_cycles);
    } else {
      printf("%-18s none: %d cycle%s\n", "tolerance", o.solver.max_cycles,
             o.solver.max_cycles == 1 ? "" : "s");
    }
    fflush(stdout);
  }

  report.status = clmg_homg_solve(s.solver, s.f, s.x, s.u, &report.result);
  snprintf(report.message, sizeof report.message, "%s", clmg_context_message(s.context));
  /* The files first, so that the report (with --json one object) says
   * whether they were written. */
  clmg_status solve_status = report.status, output_status = CLMG_SUCCESS;
  char output_message[1200] = "";
  if (report.status == CLMG_SUCCESS || report.status == CLMG_ERROR_NOT_CONVERGED) {
    status = download(s.x, s.host_x, points, 0);
    if (status != CLMG_SUCCESS) {
      output_status = status;
      snprintf(output_message, sizeof output_message, "reading back the solution: %s",
               clmg_context_message(s.context));
    }
  }
  if (output_status == CLMG_SUCCESS && o.snapshot_prefix && shots.failed) {
    output_status = CLMG_ERROR_IO;
    snprintf(output_message, sizeof output_message, "snapshots: %s", shots.error);
  }
  if (output_status == CLMG_SUCCESS && solve_status == CLMG_SUCCESS &&
      !write_pictures(&o, &s, output_message, sizeof output_message)) {
    output_status = CLMG_ERROR_IO;
  }
  if (report.status == CLMG_SUCCESS && output_status != CLMG_SUCCESS) {
    report.status = output_status;
    snprintf(report.message, sizeof report.message, "%s", output_message);
  }

  if (o.common.json) {
    print_json(&o, &report);
    cli_json_done();
  } else {
    print_text(&o, &report);
    if (o.snapshot_prefix && !shots.failed) {
      printf("%-18s %d files %s-NNNN.%s\n", "snapshots", shots.written, o.snapshot_prefix,
             o.snapshot_format);
    }
    if (solve_status == CLMG_SUCCESS && output_status == CLMG_SUCCESS) {
      if (o.vtk_path) {
        printf("%-18s %s\n", "VTK written", o.vtk_path);
      }
      if (o.png_path) {
        printf("%-18s %s\n", "PNG written", o.png_path);
      }
    }
  }
  fflush(stdout);
  if (solve_status != CLMG_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", command, clmg_status_string(solve_status), report.message);
  }
  if (output_status != CLMG_SUCCESS) {
    fprintf(stderr, "%s: %s\n", command, output_message);
  }
  exit_code = solve_status == CLMG_SUCCESS && output_status == CLMG_SUCCESS ? EXIT_SUCCESS
                                                                            : EXIT_LIBRARY_FAILURE;
  clmg_homg_result_free(&report.result);
  free(report.levels);
  free(shots.values);
  release(&s);
  return exit_code;
}
