/* clmg flow: incompressible Navier-Stokes on triangle meshes with
 * Crouzeix-Raviart P1nc/P0 elements, semi-implicit Oseen steps and a Vanka
 * multigrid (Bauer, Klement, Oberhuber and Zabka 2016): the DFG cylinder
 * benchmarks, the lid-driven cavity, an urban canopy, or a Gmsh mesh. It
 * prints a line per step, the quantities of interest, and writes .vtu/.pvd,
 * CSV and JSON. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "cli.h"
#include "subcommands.h"

enum {
  OPTION_CASE = OPTION_FIRST_OWN,
  OPTION_LEVEL,
  OPTION_RE,
  OPTION_DT,
  OPTION_STEPS,
  OPTION_STEADY,
  OPTION_SMOOTHER,
  OPTION_VTK,
  OPTION_VTK_EVERY,
  OPTION_CSV,
  OPTION_PROFILE,
  OPTION_TOL,
  OPTION_MAX_ITERATIONS,
  OPTION_MAX_ITERATIONS_OLD,
  OPTION_WALLS,
  OPTION_INFLOW,
  OPTION_UPWIND,
  OPTION_TIME_SCHEME,
  OPTION_OPTIONS_FILE,
  OPTION_SET,
  OPTION_SLIP,
  OPTION_OUTFLOW,
  OPTION_INFLOW_PROFILE,
  OPTION_INFLOW_PEAK,
  OPTION_BODY,
  OPTION_REFERENCE_LENGTH,
  OPTION_PRESSURE_POINTS,
  OPTION_LINEARISATION
};

static void print_flow_usage(FILE *out) {
  fputs("Usage: clmg flow [OPTIONS]\n"
        "\n"
        "Incompressible Navier-Stokes, du/dt + u.grad u - nu Laplace u + grad p = 0,\n"
        "div u = 0, on a triangle mesh with Crouzeix-Raviart P1nc/P0 elements and\n"
        "semi-implicit Oseen steps (u^{n-1}.grad u^n, upwinded) as in Bauer, Klement,\n"
        "Oberhuber and Zabka 2016; each linear system by GMRES with one F-cycle of a\n"
        "multigrid with Vanka smoothing (red-black where the mesh allows) on every\n"
        "level. Steady flows by Oseen (Picard) or Newton iteration.\n"
        "\n"
        "Problem options:\n"
        "      --case C          dfg1    DFG 2D-1 (Schaefer and Turek 1996): channel\n"
        "                                [0,2.2]x[0,0.41], cylinder r = 0.05 at (0.2,0.2),\n"
        "                                parabolic inflow of peak 0.3, Re = 20, steady;\n"
        "                                reports c_D, c_L and the pressure difference\n"
        "                        dfg2    DFG 2D-2: peak 1.5, Re = 100, time steps\n"
        "                        dfg3    DFG 2D-3: peak 1.5 sin(pi t/8), Re = 100 at\n"
        "                                the peak, time steps over t in [0, 8]\n"
        "                        cavity  the lid-driven unit square, lid speed 1\n"
        "                                (default; Re = 100, steady)\n"
        "                        canopy  two buildings and a street canyon (the paper's\n"
        "                                Fig. 1): power-law inflow (eq. 3, alpha 0.25),\n"
        "                                free-slip top, do-nothing outflow; time steps\n"
        "                        FILE.msh a Gmsh triangle mesh, each boundary tag\n"
        "                                named once: --walls, --slip, --outflow,\n"
        "                                --inflow (FILE.msh options below)\n"
        "      --level L         refinements of the coarse mesh (default: 3; the\n"
        "                        multigrid uses every level from the coarse mesh up)\n"
        "      --re R            Reynolds number (nu = U L / R with the case's velocity\n"
        "                        and length: DFG mean inflow and diameter, cavity lid\n"
        "                        and side, canopy inflow at and building height)\n"
        "      --steady          Oseen iteration to a steady flow (default for dfg1,\n"
        "                        cavity, a .msh)\n"
        "      --dt T            time step (default 0.01); with --steps, an unsteady run\n"
        "      --steps N         time steps (default 100, dfg3 8/dt; dfg2, dfg3 and\n"
        "                        canopy are unsteady)\n"
        "      --time-scheme S   backward-euler (first order), crank-nicolson, fs-theta\n"
        "                        (fractional-step theta) or bdf2 (default: crank-nicolson\n"
        "                        for dfg2 and dfg3, backward-euler for the others)\n"
        "      --tol T           steady: the nonlinear relative residual to reach\n"
        "                        (default 1e-8)\n"
        "      --maxit N           steady: Oseen iterations at most (default 50)\n"
        "      --linearisation L steady: picard (Oseen steps, the default) or newton\n"
        "                        (the exact Jacobian, the upwinded convection's\n"
        "                        derivative included: fewer nonlinear iterations;\n"
        "                        flow.linearisation), Picard\n"
        "                        steps until the residual is at most flow.newton_start\n"
        "                        (--set, default 1e-3)\n"
        "      --smoother S      vanka-si (stored local inverses, default) or vanka-nsi\n"
        "                        (recomputed in every visit: less memory)\n"
        "      --options FILE    solver options from a JSON file ({\"mg\": {\"smoother\":\n"
        "                        \"vanka-nsi\", \"cycle\": \"v\"}, \"maxit\": 200}); the flags\n"
        "                        and --set override it. The --json result's \"options\"\n"
        "                        object is such a file: it repeats the run. `clmg help\n"
        "                        options` lists every key\n"
        "      --set \"K=V ...\"   options by key: --smoother is mg.smoother, --tol\n"
        "                        flow.nonlinear_tol, --maxit flow.nonlinear_maxit; GMRES's\n"
        "                        tol, maxit (100) and restart, mg.cycle (f), mg.steps (2),\n"
        "                        mg.omega (1) and mg.coarse (auto, direct) have no flag,\n"
        "                        nor flow.step_iterations (linear solves per time step:\n"
        "                        auto is 2 for crank-nicolson and fs-theta, 1 for bdf2)\n"
        "      --upwind U        the convection's upwinding (flow.upwind): samarskij\n"
        "                        (weighted by the local Peclet number), full (first\n"
        "                        order, the most robust) or weighted (Samarskij's with\n"
        "                        the Peclet number times flow.upwind_parameter, 0:\n"
        "                        central differences); default: weighted with 0.1 for\n"
        "                        dfg2 and dfg3, samarskij for the others\n"
        "\n"
        "FILE.msh options (every boundary tag of the mesh in exactly one of --walls,\n"
        "--slip, --outflow, --inflow):\n"
        "      --walls T,...     the no-slip boundary tags (u = 0)\n"
        "      --slip T,...      the free-slip tags (u . n = 0, no tangential traction)\n"
        "      --outflow T,...   the do-nothing tags ((nu grad u - p I) n = 0)\n"
        "      --inflow T        the inflow tag: one straight segment; the velocity is\n"
        "                        along its normal into the domain\n"
        "      --inflow-profile P  uniform (the peak everywhere, the default) or\n"
        "                        parabolic (4 U s (L - s) / L^2 along the inflow of\n"
        "                        length L); the velocity scale of Re is its mean (U or\n"
        "                        2/3 U)\n"
        "      --inflow-peak U   the profile's peak U (default 1)\n"
        "      --body T          the tag whose drag and lift coefficients are reported\n"
        "                        (c = 2 F / (mean velocity^2 L))\n"
        "      --reference-length L  the length scale of Re and of the coefficients\n"
        "                        (default 1)\n"
        "      --pressure-points X1,Y1,X2,Y2  report p(X1, Y1) - p(X2, Y2)\n"
        "\n"
        "Output options:\n"
        "      --vtk PREFIX      PREFIX_NNNN.vtu per written step and PREFIX.pvd (the\n"
        "                        series for ParaView): velocity (point data, vector)\n"
        "                        and pressure (cell data)\n"
        "      --vtk-every K     write every K-th time step (default: the last only)\n"
        "      --csv FILE        the steps as CSV: step, time, nonlinear_residual,\n"
        "                        linear_iterations, drag, lift, pressure_difference,\n"
        "                        assemble_s, setup_s, solve_s\n"
        "      --profile FILE    cavity: the centreline velocities as CSV (line = x=0.5\n"
        "                        with s = y and the u column, or y=0.5 with s = x and\n"
        "                        v), 129 points per line\n"
        "  -q, --quiet           no line per step\n" COMMON_OPTIONS_HELP "\n"
        "Output: the mesh and unknowns, a line per step (nonlinear residual, GMRES\n"
        "iterations, times; the DFG cases and --body, --pressure-points c_D, c_L,\n"
        "delta p), then the result. --json\n"
        "prints one object with unknowns, levels, drag_coefficient, lift_coefficient,\n"
        "pressure_difference (DFG; null elsewhere), nonlinear_iterations,\n"
        "linear_iterations, newton_steps, linearisation, converged,\n"
        "nonlinear_residual, the times and the solver's options as resolved.\n"
        "\n"
        "Examples:\n"
        "  clmg flow --case cavity --re 100 --level 4 --profile cavity.csv\n"
        "  clmg flow --case dfg1 --level 3 --json\n"
        "  clmg flow --case dfg2 --dt 0.005 --steps 400 --csv dfg2.csv --vtk dfg2 \\\n"
        "            --vtk-every 20   (dfg2_0020.vtu, ..., dfg2.pvd)\n"
        "  clmg flow --case examples/data/channel_obstacle.msh --walls 3 --slip 4 \\\n"
        "            --outflow 2 --inflow 1 --inflow-profile parabolic --body 3 \\\n"
        "            --reference-length 0.1 --level 1 --steps 5 --csv obstacle.csv\n"
        "\n"
        "Exit status: 0 converged (steady) or every step solved, 1 failure, 2 bad usage.\n",
        out);
}

static int parse_case(const char *command, const char *text, flow_options *o) {
  o->case_spec = text;
  if (clmg_flow_case_parse(text, &o->flow))
    return 1;
  size_t length = strlen(text);
  if (length > 4 && strcmp(text + length - 4, ".msh") == 0) {
    o->flow = CLMG_FLOW_GMSH;
    return 1;
  }
  cli_usage_note(command,
                 "unknown case '%s' (there are: dfg1, dfg2, dfg3, cavity, canopy, FILE.msh)", text);
  return 0;
}

static int flow_apply_option(const char *command, int option, const char *arg, flow_options *o) {
  long value = 0;
  switch (option) {
  case OPTION_CASE:
    return parse_case(command, arg, o) ? 1 : -1;
  case OPTION_LEVEL:
    o->level_given = 1;
    return cli_parse_int(command, "--level", arg, 0, 10, &o->level) ? 1 : -1;
  case OPTION_RE:
    o->re_given = 1;
    return cli_parse_double(command, "--re", arg, 1e-6, 1e9, &o->re) ? 1 : -1;
  case OPTION_DT:
    o->steady_given = 1;
    o->steady = 0;
    o->time_options = 1;
    return cli_parse_double(command, "--dt", arg, 1e-12, 1e6, &o->dt) ? 1 : -1;
  case OPTION_STEPS:
    o->steps_given = 1;
    o->steady_given = 1;
    o->steady = 0;
    o->time_options = 1;
    return cli_parse_int(command, "--steps", arg, 1, 100000000, &o->steps) ? 1 : -1;
  case OPTION_STEADY:
    o->steady_given = 1;
    o->steady = 1;
    o->steady_option = 1;
    return 1;
  case OPTION_SMOOTHER:
    return cli_record_setting(command, "--smoother", "mg.smoother", arg, &o->settings);
  case OPTION_VTK:
    o->vtk_prefix = arg;
    return 1;
  case OPTION_VTK_EVERY:
    return cli_parse_int(command, "--vtk-every", arg, 1, 100000000, &o->vtk_every) ? 1 : -1;
  case OPTION_CSV:
    o->csv_path = arg;
    return 1;
  case OPTION_PROFILE:
    o->profile_path = arg;
    return 1;
  case OPTION_TOL:
    return cli_record_setting(command, "--tol", "flow.nonlinear_tol", arg, &o->settings);
  case OPTION_MAX_ITERATIONS_OLD:
    apputil_old_spelling(command, "--max-iterations", "--maxit");
    /* fall through */
  case OPTION_MAX_ITERATIONS:
    return cli_record_setting(command, "--maxit", "flow.nonlinear_maxit", arg, &o->settings);
  case OPTION_OPTIONS_FILE:
    o->settings.options_path = arg;
    return 1;
  case OPTION_SET:
    return cli_record_setting(command, "--set", NULL, arg, &o->settings);
  case OPTION_WALLS:
    return cli_parse_tags(command, "--walls", arg, o->walls, CLMG_FLOW_MAX_TAGS, &o->num_walls)
               ? 1
               : -1;
  case OPTION_UPWIND:
    return cli_record_setting(command, "--upwind", "flow.upwind", arg, &o->settings);
  case OPTION_TIME_SCHEME:
    return cli_record_setting(command, "--time-scheme", "flow.time_scheme", arg, &o->settings);
  case OPTION_LINEARISATION:
    return cli_record_setting(command, "--linearisation", "flow.linearisation", arg, &o->settings);
  case OPTION_INFLOW:
    if (!cli_parse_long(command, "--inflow", arg, 1, INT32_MAX, &value))
      return -1;
    o->inflow_tag = (int32_t)value;
    return 1;
  case OPTION_SLIP:
    o->gmsh_given = 1;
    return cli_parse_tags(command, "--slip", arg, o->slip, CLMG_FLOW_MAX_TAGS, &o->num_slip) ? 1
                                                                                             : -1;
  case OPTION_OUTFLOW:
    o->gmsh_given = 1;
    return cli_parse_tags(command, "--outflow", arg, o->outflow, CLMG_FLOW_MAX_TAGS,
                          &o->num_outflow)
               ? 1
               : -1;
  case OPTION_INFLOW_PROFILE:
    o->gmsh_given = 1;
    if (strcmp(arg, "uniform") == 0)
      o->gmsh.inflow_profile = CLMG_FLOW_INFLOW_UNIFORM;
    else if (strcmp(arg, "parabolic") == 0)
      o->gmsh.inflow_profile = CLMG_FLOW_INFLOW_PARABOLIC;
    else {
      cli_usage_note(command, "--inflow-profile is uniform or parabolic, not '%s'", arg);
      return -1;
    }
    return 1;
  case OPTION_INFLOW_PEAK:
    o->gmsh_given = 1;
    return cli_parse_double(command, "--inflow-peak", arg, 1e-300, 1e300, &o->gmsh.inflow_peak)
               ? 1
               : -1;
  case OPTION_BODY:
    o->gmsh_given = 1;
    if (!cli_parse_long(command, "--body", arg, 1, INT32_MAX, &value))
      return -1;
    o->gmsh.body_tag = (int32_t)value;
    return 1;
  case OPTION_REFERENCE_LENGTH:
    o->gmsh_given = 1;
    return cli_parse_double(command, "--reference-length", arg, 1e-300, 1e300,
                            &o->gmsh.reference_length)
               ? 1
               : -1;
  case OPTION_PRESSURE_POINTS: {
    o->gmsh_given = 1;
    const char *p = arg;
    for (int k = 0; k < 4; k++) {
      char *end = NULL;
      errno = 0;
      o->gmsh.pressure_points[k] = strtod(p, &end);
      if (end == p || errno == ERANGE || !isfinite(o->gmsh.pressure_points[k]) ||
          *end != (k < 3 ? ',' : '\0')) {
        cli_usage_note(command, "--pressure-points needs four numbers X1,Y1,X2,Y2, not '%s'", arg);
        return -1;
      }
      p = end + 1;
    }
    o->gmsh.has_pressure_points = 1;
    return 1;
  }
  case 'q':
    o->quiet = 1;
    return 1;
  default:
    return 0;
  }
}

/* The solver's options (clmg_options_flow) from the flags and --set texts,
 * and with the --options file when db is not NULL (which then gets them,
 * resolved, for the report), into o->solver; unused keys into o->unused.
 * Returns 0, or the exit status after reporting. */
static int settle_options(const char *command, flow_options *o, clmg_options **db) {
  cli_settings settings = o->settings;
  if (!db)
    settings.options_path = NULL; /* read by run_flow */
  clmg_options *made = NULL;
  if (!cli_make_options(command, &settings, &made))
    return EXIT_LIBRARY_FAILURE;
  clmg_error error = {{0}};
  clmg_status status = clmg_options_flow(made, &o->solver, o->unused, sizeof o->unused, &error);
  if (status != CLMG_SUCCESS) {
    clmg_options_destroy(made);
    return cli_usage(command, "%s", error.message);
  }
  if (!o->steady && o->solver.linearisation == CLMG_FLOW_NEWTON) {
    clmg_options_destroy(made);
    return cli_usage(command, "flow.linearisation=newton is for steady runs (--steady); time "
                              "steps take Picard iterations (flow.step_iterations)");
  }
  if (db)
    *db = made;
  else
    clmg_options_destroy(made);
  return 0;
}

int flow_parse_options(int argc, char **argv, const cli_options *defaults, flow_options *o) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      {"case", required_argument, NULL, OPTION_CASE},
      {"level", required_argument, NULL, OPTION_LEVEL},
      {"re", required_argument, NULL, OPTION_RE},
      {"dt", required_argument, NULL, OPTION_DT},
      {"steps", required_argument, NULL, OPTION_STEPS},
      {"steady", no_argument, NULL, OPTION_STEADY},
      {"smoother", required_argument, NULL, OPTION_SMOOTHER},
      {"vtk", required_argument, NULL, OPTION_VTK},
      {"vtk-every", required_argument, NULL, OPTION_VTK_EVERY},
      {"csv", required_argument, NULL, OPTION_CSV},
      {"profile", required_argument, NULL, OPTION_PROFILE},
      {"tol", required_argument, NULL, OPTION_TOL},
      {"maxit", required_argument, NULL, OPTION_MAX_ITERATIONS},
      {"max-iterations", required_argument, NULL, OPTION_MAX_ITERATIONS_OLD},
      {"walls", required_argument, NULL, OPTION_WALLS},
      {"inflow", required_argument, NULL, OPTION_INFLOW},
      {"slip", required_argument, NULL, OPTION_SLIP},
      {"outflow", required_argument, NULL, OPTION_OUTFLOW},
      {"inflow-profile", required_argument, NULL, OPTION_INFLOW_PROFILE},
      {"inflow-peak", required_argument, NULL, OPTION_INFLOW_PEAK},
      {"body", required_argument, NULL, OPTION_BODY},
      {"reference-length", required_argument, NULL, OPTION_REFERENCE_LENGTH},
      {"pressure-points", required_argument, NULL, OPTION_PRESSURE_POINTS},
      {"upwind", required_argument, NULL, OPTION_UPWIND},
      {"time-scheme", required_argument, NULL, OPTION_TIME_SCHEME},
      {"linearisation", required_argument, NULL, OPTION_LINEARISATION},
      {"options", required_argument, NULL, OPTION_OPTIONS_FILE},
      {"set", required_argument, NULL, OPTION_SET},
      {"quiet", no_argument, NULL, 'q'},
      {NULL, 0, NULL, 0},
  };
  const char *command = argv[0];
  memset(o, 0, sizeof *o);
  o->common = *defaults;
  o->flow = CLMG_FLOW_CAVITY;
  o->case_spec = "cavity";
  o->level = 3;
  o->dt = 0.01;
  o->steps = 100;
  clmg_flow_options_defaults(&o->solver);
  clmg_flow_gmsh_options_defaults(&o->gmsh);
  int option;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS "q", long_options, NULL)) != -1) {
    int applied = cli_apply_common_option(command, option, &o->common);
    if (applied == 0)
      applied = flow_apply_option(command, option, optarg, o);
    if (applied <= 0)
      return cli_usage_error(command);
  }
  if (o->common.help)
    return 0;
  if (optind < argc)
    return cli_usage(command, "unexpected argument '%s' (the case is given with --case)",
                     argv[optind]);
  if (o->steady_option && o->time_options)
    return cli_usage(command, "--steady runs Oseen iterations to the steady state; --dt and "
                              "--steps are for time steps: give one or the other");
  if (!o->steady_given)
    o->steady = clmg_flow_case_steady(o->flow);
  if (!o->steps_given) /* dfg3: t in [0, 8] */
    o->steps = clmg_flow_case_steps(o->flow, o->dt);
  if (o->flow == CLMG_FLOW_DFG3 && o->steady)
    return cli_usage(command, "dfg3's inflow varies in time: it takes time steps, not --steady");
  if (!o->re_given)
    o->re = clmg_flow_case_reynolds(o->flow);
  /* the case's time scheme, upwinding and inflow in time (docs/flow.md);
   * --time-scheme, --upwind and --set replace them */
  clmg_flow_case_defaults(o->flow, &o->solver);
  if (o->flow == CLMG_FLOW_GMSH && o->inflow_tag == 0)
    return cli_usage(command, "a .msh case needs --inflow TAG (and --walls, --slip, --outflow "
                              "for its other boundary tags)");
  if (o->flow != CLMG_FLOW_GMSH && (o->gmsh_given || o->num_walls || o->inflow_tag))
    return cli_usage(command,
                     "--walls, --slip, --outflow, --inflow, --inflow-profile, "
                     "--inflow-peak, --body, --reference-length and --pressure-points "
                     "are for a .msh case, not %s",
                     o->case_spec);
  if (o->profile_path && o->flow != CLMG_FLOW_CAVITY)
    return cli_usage(command, "--profile is for --case cavity");
  /* the solver flags' values checked now; run_flow settles them again with
   * the --options file */
  return settle_options(command, o, NULL);
}

/* ---- the run ---- */

typedef struct flow_monitor_state {
  const flow_options *o;
  const clmg_flow_case_setup *setup;
  double viscosity;
  FILE *csv;                  /* the stream of csv_file */
  clmg_output_file *csv_file; /* --csv: renamed into place once the run is done */
  char **vtu_names;
  double *vtu_times;
  size_t vtu_count, vtu_capacity;
  double drag, lift, dp;
  int have_quantities;
  double assemble_s, setup_s, solve_s;
  clmg_status failure;
  char message[1200];
} flow_monitor_state;

static clmg_status quantities(flow_monitor_state *m, const clmg_mesh *mesh,
                              const clmg_triangle_edges *edges, const double *x,
                              clmg_error *error) {
  if (!clmg_flow_case_setup_has_quantities(m->setup))
    return CLMG_SUCCESS;
  clmg_status status =
      clmg_flow_case_quantities(m->setup, mesh, edges, x, &m->drag, &m->lift, &m->dp, error);
  m->have_quantities = status == CLMG_SUCCESS;
  return status;
}

/* PREFIX_NNNN.vtu, remembered (as the .pvd names it: without the folder)
 * for the .pvd. */
static clmg_status write_step_vtu(flow_monitor_state *m, int step, double time,
                                  const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const double *x, clmg_error *error) {
  char path[4096];
  snprintf(path, sizeof path, "%s_%04d.vtu", m->o->vtk_prefix, step);
  clmg_status status = clmg_flow_write_vtu(path, mesh, edges, x, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (m->vtu_count == m->vtu_capacity) {
    size_t capacity = m->vtu_capacity ? 2 * m->vtu_capacity : 16;
    char **names = realloc(m->vtu_names, capacity * sizeof *names);
    double *times = names ? realloc(m->vtu_times, capacity * sizeof *times) : NULL;
    if (names)
      m->vtu_names = names;
    if (!names || !times) {
      snprintf(error->message, sizeof error->message, "no host memory for the .pvd list");
      return CLMG_ERROR_OUT_OF_HOST_MEMORY;
    }
    m->vtu_times = times;
    m->vtu_capacity = capacity;
  }
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  m->vtu_names[m->vtu_count] = malloc(strlen(name) + 1);
  if (!m->vtu_names[m->vtu_count]) {
    snprintf(error->message, sizeof error->message, "no host memory for the .pvd list");
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  strcpy(m->vtu_names[m->vtu_count], name);
  m->vtu_times[m->vtu_count++] = time;
  return CLMG_SUCCESS;
}

static int monitor(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                   const clmg_triangle_edges *edges, const double *x) {
  flow_monitor_state *m = data;
  const flow_options *o = m->o;
  clmg_error error = {{0}};
  m->assemble_s += step->assemble_seconds;
  m->setup_s += step->setup_seconds;
  m->solve_s += step->solve_seconds;
  clmg_status status = quantities(m, mesh, edges, x, &error);
  if (status == CLMG_SUCCESS && o->vtk_prefix && !o->steady && o->vtk_every > 0 &&
      step->step % o->vtk_every == 0)
    status = write_step_vtu(m, step->step, step->time, mesh, edges, x, &error);
  if (status != CLMG_SUCCESS) {
    m->failure = status;
    snprintf(m->message, sizeof m->message, "step %d: %s", step->step, error.message);
    return 1;
  }
  if (m->csv)
    fprintf(m->csv, "%d,%.9g,%.6e,%d,%.12g,%.12g,%.12g,%.6f,%.6f,%.6f\n", step->step, step->time,
            step->nonlinear_residual, step->linear_iterations, m->have_quantities ? m->drag : NAN,
            m->have_quantities ? m->lift : NAN, m->have_quantities ? m->dp : NAN,
            step->assemble_seconds, step->setup_seconds, step->solve_seconds);
  if (!o->quiet && !o->common.json) {
    printf("%s %5d", o->steady ? "iteration" : "step", step->step);
    if (o->steady)
      printf("  residual %.3e%s", step->nonlinear_residual, step->newton ? "  newton" : "");
    else
      printf("  t %.5g", step->time);
    printf("  GMRES %3d (%.1e)", step->linear_iterations, step->linear_residual);
    if (m->have_quantities)
      printf("  c_D %.6f  c_L %.6f  dp %.6f", m->drag, m->lift, m->dp);
    printf("  [%.3f + %.3f + %.3f s]\n", step->assemble_seconds, step->setup_seconds,
           step->solve_seconds);
    fflush(stdout);
  }
  return 0;
}

/* The cavity's centrelines (Ghia, Ghia and Shin 1982 tabulate u on x = 0.5
 * and v on y = 0.5). */
static clmg_status write_profile(const char *path, const clmg_flow_result *r, clmg_error *error) {
  clmg_output_file *file;
  FILE *out;
  clmg_status status = clmg_output_file_open(path, "w", &file, &out, error);
  if (status != CLMG_SUCCESS)
    return status;
  fputs("line,s,u,v\n", out);
  enum { POINTS = 129 };
  for (int line = 0; line < 2 && status == CLMG_SUCCESS; line++)
    for (int k = 0; k < POINTS && status == CLMG_SUCCESS; k++) {
      double s = (double)k / (POINTS - 1), point[2] = {0.5, s}, u[2];
      if (line == 1) {
        point[0] = s;
        point[1] = 0.5;
      }
      status = clmg_flow_sample_velocity(&r->mesh, &r->edges, r->x, point, u, error);
      if (status == CLMG_SUCCESS)
        fprintf(out, "%s,%.9g,%.12g,%.12g\n", line == 0 ? "x=0.5" : "y=0.5", s, u[0], u[1]);
    }
  if (status != CLMG_SUCCESS) {
    clmg_output_file_discard(file);
    return status;
  }
  return clmg_output_file_commit(file, error);
}

static void print_json(const flow_options *o, const clmg_options *options,
                       const clmg_flow_result *r, const flow_monitor_state *m, clmg_status status,
                       const char *message, const clmg_context *context, double total_s) {
  json_writer w;
  json_result_begin(&w, stdout, "flow");
  json_string(&w, "status", clmg_status_string(status));
  json_string(&w, "message", message);
  json_string(&w, "case", o->case_spec);
  json_number(&w, "reynolds", o->re);
  json_number(&w, "viscosity", m->viscosity);
  json_bool(&w, "steady", o->steady);
  json_integer(&w, "unknowns", (long long)r->unknowns);
  json_integer(&w, "levels", r->levels);
  json_integer(&w, "triangles", (long long)r->mesh.num_cells);
  json_string(&w, "smoother", clmg_vanka_name(o->solver.vanka.store_inverses));
  json_string(&w, "upwind", clmg_options_get(options, "flow.upwind"));
  json_string(&w, "time_scheme",
              o->steady ? "steady" : clmg_flow_time_scheme_name(o->solver.time_scheme));
  json_string(&w, "linearisation",
              o->steady ? clmg_flow_linearisation_name(o->solver.linearisation) : "picard");
  /* non-finite numbers are written as null: the cases without a body */
  json_number(&w, "drag_coefficient", m->have_quantities ? m->drag : NAN);
  json_number(&w, "lift_coefficient", m->have_quantities ? m->lift : NAN);
  json_number(&w, "pressure_difference", m->have_quantities ? m->dp : NAN);
  json_integer(&w, o->steady ? "nonlinear_iterations" : "time_steps", r->steps);
  if (!o->steady)
    json_integer(&w, "nonlinear_iterations", r->steps);
  json_integer(&w, "linear_iterations", r->linear_iterations);
  json_integer(&w, "newton_steps", r->newton_steps);
  /* the outer iterations: Newton/Picard steps (steady) or time steps */
  json_integer(&w, "iterations", r->steps);
  json_string(&w, "iteration_kind", o->steady ? "nonlinear" : "time_step");
  json_bool(&w, "converged", r->converged);
  json_number(&w, "nonlinear_residual", o->steady ? r->nonlinear_residual : 0.0);
  json_number(&w, "assemble_s", m->assemble_s); /* assembly_s's old name, for one release */
  json_number(&w, "assembly_s", m->assemble_s);
  json_number(&w, "compile_s", context ? clmg_context_program_seconds(context) : 0.0);
  json_number(&w, "setup_s", m->setup_s);
  json_number(&w, "solve_s", m->solve_s);
  json_number(&w, "total_s", total_s);
  if (context)
    json_device(&w, clmg_context_device(context));
  char *echo = clmg_options_to_json(options, 0); /* the keys read, as resolved */
  json_raw(&w, "options", echo);
  free(echo);
  json_object_end(&w);
  json_end(&w);
  cli_json_done();
}

int run_flow(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  flow_options o;
  int code = flow_parse_options(argc, argv, defaults, &o);
  if (code != 0)
    return code;
  if (o.common.help) {
    print_flow_usage(stdout);
    return EXIT_SUCCESS;
  }
  cli_progress_begin(o.quiet);
  code = EXIT_LIBRARY_FAILURE;
  clmg_mesh coarse = {0};
  clmg_context *context = NULL;
  clmg_flow_result result = {0};
  clmg_options *db = NULL; /* the solver's options, resolved: --options takes them back */
  flow_monitor_state m = {0};
  m.o = &o;
  clmg_error error = {{0}};
  double start = apputil_now();
  clmg_status status = clmg_flow_case_mesh(o.flow, o.case_spec, &coarse, &error);
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "cannot make the mesh: %s", error.message);
    goto done;
  }
  if (o.flow == CLMG_FLOW_GMSH && (coarse.cell_type != CLMG_CELL_SIMPLEX || coarse.dim != 2)) {
    /* the solver's refusal, as before the tags */
    cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT,
                "Crouzeix-Raviart elements need a 2D triangle mesh: %s is not one", o.case_spec);
    goto done;
  }
  if (o.flow == CLMG_FLOW_GMSH &&
      (!cli_check_tags(command, "--walls", o.case_spec, &coarse, o.walls, o.num_walls) ||
       !cli_check_tags(command, "--slip", o.case_spec, &coarse, o.slip, o.num_slip) ||
       !cli_check_tags(command, "--outflow", o.case_spec, &coarse, o.outflow, o.num_outflow) ||
       !cli_check_tags(command, "--inflow", o.case_spec, &coarse, &o.inflow_tag, 1) ||
       !cli_check_tags(command, "--body", o.case_spec, &coarse, &o.gmsh.body_tag,
                       o.gmsh.body_tag ? 1 : 0))) {
    code = cli_usage_error(command);
    goto done;
  }
  /* velocity and length scales of the Reynolds number, boundary conditions */
  clmg_flow_case_setup setup;
  if (o.flow == CLMG_FLOW_GMSH) {
    o.gmsh.walls = o.walls;
    o.gmsh.num_walls = o.num_walls;
    o.gmsh.slip = o.slip;
    o.gmsh.num_slip = o.num_slip;
    o.gmsh.outflow = o.outflow;
    o.gmsh.num_outflow = o.num_outflow;
    o.gmsh.inflow_tag = o.inflow_tag;
    status = clmg_flow_case_create_gmsh(&coarse, o.re, &o.gmsh, &setup, &error);
    if (status == CLMG_ERROR_INVALID_ARGUMENT) { /* the tags or the inflow: the command line */
      cli_usage_note(command, "%s: %s", o.case_spec, error.message);
      code = cli_usage_error(command);
      goto done;
    }
  } else
    status =
        clmg_flow_case_create(o.flow, o.re, o.walls, o.num_walls, o.inflow_tag, &setup, &error);
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "%s", error.message);
    goto done;
  }
  m.setup = &setup;
  m.viscosity = setup.viscosity;
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);

  if (o.csv_path) {
    clmg_status opened = clmg_output_file_open(o.csv_path, "w", &m.csv_file, &m.csv, &error);
    if (opened != CLMG_SUCCESS) {
      cli_failure(command, opened, "%s", error.message);
      goto done;
    }
    fputs("step,time,nonlinear_residual,linear_iterations,drag,lift,pressure_difference,"
          "assemble_s,setup_s,solve_s\n",
          m.csv);
  }
  context = cli_open_context(command, &o.common, o.quiet);
  if (!context)
    goto done;
  if (!clmg_context_device(context)->has_fp64) {
    /* the Navier-Stokes solver is double only (its float path is open work) */
    cli_failure(command, CLMG_ERROR_UNSUPPORTED,
                "clmg flow computes in double precision, which %s does not have (cl_khr_fp64%s): "
                "run it on a device that has it (clmg info lists them)",
                clmg_context_device(context)->name,
                getenv("CLMG_DISABLE_FP64") ? ", turned off by CLMG_DISABLE_FP64" : "");
    goto done;
  }
  {
    /* what the finest level will take, before the work: 4 unknowns per
     * triangle (two velocity components per edge, the pressure), 2,200
     * bytes per unknown (measured on pocl: levels, Vanka blocks, vectors) */
    char what[160];
    snprintf(what, sizeof what, "clmg flow --level %d", o.level);
    status = apputil_check_refined_size(context, &coarse, o.level, 4, 2200, 12, what);
    if (status != CLMG_SUCCESS) {
      cli_failure(command, status, "%s", clmg_context_message(context));
      goto done;
    }
  }
  /* the solver's options with the --options file */
  code = settle_options(command, &o, &db);
  if (code != 0)
    goto done;
  code = EXIT_LIBRARY_FAILURE;
  if (o.unused[0]) {
    fflush(stdout);
    fprintf(stderr, "%s: warning: %s: set, but clmg flow does not read %s\n", command, o.unused,
            strchr(o.unused, ',') ? "them" : "it");
  }
  clmg_flow_options options = o.solver;
  options.levels = o.level + 1;
  options.steady = o.steady;
  options.time_step = o.dt;
  options.steps = o.steps;
  if (!o.common.json) {
    printf("%-10s %s, Re %g (nu %.4g), %d levels from %zu coarse triangles, %s%s, upwind %s\n",
           "flow", o.case_spec, o.re, m.viscosity, options.levels, coarse.num_cells,
           o.steady ? (options.linearisation == CLMG_FLOW_NEWTON ? "steady (Newton iteration)"
                                                                 : "steady (Oseen iteration)")
                    : "time steps, ",
           o.steady ? "" : clmg_flow_time_scheme_name(options.time_scheme),
           clmg_options_get(db, "flow.upwind"));
    fflush(stdout);
  }
  cli_progress("%s: %d levels", o.case_spec, options.levels);
  status = clmg_flow_solve(context, &coarse, &problem, &options, monitor, &m, &result);
  if (m.failure != CLMG_SUCCESS) {
    status = m.failure;
    cli_failure(command, status, "%s", m.message);
    goto done;
  }
  const char *message = status == CLMG_SUCCESS ? "" : clmg_context_message(context);
  /* the outputs of what was reached, also when it did not converge */
  if (result.x && (status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED)) {
    clmg_status written = CLMG_SUCCESS;
    if (m.csv_file) { /* the steps done, complete lines, in place of the old file */
      written = clmg_output_file_commit(m.csv_file, &error);
      m.csv_file = NULL;
      m.csv = NULL;
    }
    if (written == CLMG_SUCCESS && o.vtk_prefix &&
        (o.steady || o.vtk_every == 0 || result.steps % o.vtk_every != 0))
      written = write_step_vtu(&m, result.steps, o.steady ? 0.0 : result.steps * o.dt, &result.mesh,
                               &result.edges, result.x, &error);
    if (written == CLMG_SUCCESS && o.vtk_prefix) {
      char path[4096];
      snprintf(path, sizeof path, "%s.pvd", o.vtk_prefix);
      written =
          clmg_write_pvd(path, (const char *const *)m.vtu_names, m.vtu_times, m.vtu_count, &error);
    }
    if (written == CLMG_SUCCESS && o.profile_path)
      written = write_profile(o.profile_path, &result, &error);
    if (written != CLMG_SUCCESS) {
      cli_failure(command, written, "cannot write the output: %s", error.message);
      goto done;
    }
  }
  if (o.common.json) {
    print_json(&o, db, &result, &m, status, message, context, apputil_now() - start);
  } else {
    char kind[64];
    if (o.steady && options.linearisation == CLMG_FLOW_NEWTON)
      snprintf(kind, sizeof kind, "nonlinear iterations (%d Newton)", result.newton_steps);
    else
      snprintf(kind, sizeof kind, "%s", o.steady ? "Oseen iterations" : "time steps");
    printf("%-10s %zu unknowns on %zu triangles, %d levels; %d %s, %d GMRES iterations\n", "result",
           result.unknowns, result.mesh.num_cells, result.levels, result.steps, kind,
           result.linear_iterations);
    if (m.have_quantities)
      printf("%-10s c_D %.8f  c_L %.8f  delta p %.8f\n", o.flow == CLMG_FLOW_GMSH ? "body" : "dfg",
             m.drag, m.lift, m.dp);
    printf("%-10s %s (assembly %.3f s, multigrid setup %.3f s, solves %.3f s, total %.3f s)\n",
           "status", status == CLMG_SUCCESS ? "converged" : message, m.assemble_s, m.setup_s,
           m.solve_s, apputil_now() - start);
  }
  if (status != CLMG_SUCCESS && !o.common.json)
    fprintf(stderr, "%s: %s\n", command, message);
  code = status == CLMG_SUCCESS ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE;
done:
  /* a run that ended before its outputs leaves the earlier --csv file */
  clmg_output_file_discard(m.csv_file);
  for (size_t k = 0; k < m.vtu_count; k++)
    free(m.vtu_names[k]);
  free(m.vtu_names);
  free(m.vtu_times);
  clmg_flow_result_free(&result);
  clmg_mesh_free(&coarse);
  clmg_options_destroy(db);
  clmg_context_destroy(context);
  return code;
}
