/* clmg poisson: the finite-element geometric multigrid of Geveler et al.
 * 2011 on an unstructured quadrilateral or hexahedral mesh. Builds the mesh hierarchy
 * (CIRCLE, BLOOD or a Gmsh file refined L - 1 times), assembles Q1 or Q2
 * Poisson matrices and grid transfers on every level in the chosen DOF
 * numbering, uploads them once, and solves with multigrid cycles (or CG
 * preconditioned by one cycle), reporting the residual per cycle, the
 * convergence rate and the timings; optionally writes the solution as .vtu. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clmg/fe_solve.h"

#include "apputil.h"
#include "cli.h"
#include "subcommands.h"

enum {
  OPTION_MESH = OPTION_FIRST_OWN,
  OPTION_ELEMENT,
  OPTION_LEVEL,
  OPTION_NUMBERING,
  OPTION_SMOOTHER,
  OPTION_PRE,
  OPTION_POST,
  OPTION_OMEGA,
  OPTION_CYCLE,
  OPTION_KRYLOV,
  OPTION_KRYLOV_OLD,
  OPTION_TOLERANCE,
  OPTION_MAX_ITERATIONS,
  OPTION_FORMAT,
  OPTION_PRECISION,
  OPTION_COARSE,
  OPTION_VTK,
  OPTION_SEED,
  OPTION_CELLS_PER_RANK,
  OPTION_OPTIONS_FILE,
  OPTION_SET,
  OPTION_COARSE_ROWS,
  OPTION_VTK_FORMAT,
  OPTION_VTK_ASCII,
  OPTION_VIEW,
  OPTION_PROFILE,
  OPTION_ASSEMBLY,
  OPTION_ROWS
};

void poisson_print_usage(FILE *out) {
  fputs("Usage: clmg poisson [OPTIONS]\n"
        "\n"
        "Solves the Poisson problem -Laplace(u) = f with Dirichlet conditions by finite\n"
        "elements (Q1 or Q2) on an unstructured quadrilateral or hexahedral mesh with\n"
        "geometric multigrid (Geveler et al. 2011): the mesh is refined uniformly L - 1\n"
        "times (new boundary vertices on curved boundaries are projected onto them),\n"
        "every level's mesh is refined and every level's matrix, prolongation and\n"
        "restriction is assembled on the OpenCL device (only the coarse mesh goes up\n"
        "and only the finest comes back), and the whole hierarchy runs there as sparse\n"
        "matrix-vector products.\n"
        "\n"
        "Problems:\n"
        "  circle   the CIRCLE benchmark of Geveler et al. 2011: the square [-1,1]^2\n"
        "           with a hole of radius 0.5; f = 1, u = 0 on the square, u = 1 on the\n"
        "           circle. Level 1 is one ring of 8 quadrilaterals; Q1 on level 10 has\n"
        "           2,101,248 unknowns.\n"
        "  blood    a BLOOD-like vessel with an aneurysm and a thin, strongly anisotropic\n"
        "           boundary layer; f = 0, u = 1 on the boundary, started from u = 0\n"
        "           inside. Default smoothing is the paper's: 64+64 Jacobi steps, omega 0.5.\n"
        "  FILE.msh a Gmsh mesh (ASCII 2.2 or 4.1, quadrilaterals or hexahedra);\n"
        "           f = 1, u = 0 on the whole boundary.\n"
        "\n"
        "Options:\n"
        "      --mesh M            circle (default), blood, or a .msh file\n"
        "      --element E         q1 (default) or q2\n"
        "      --level L           finest level, 1 = the coarse mesh (default 6)\n"
        "      --numbering N       DOF numbering: 2lv (default; cm under mpirun), cm, xyz, sto\n"
        "                          (random), hie\n"
        "      --assembly A        where the hierarchy is assembled: device (the default\n"
        "                          with 2lv) or host (the default with the other\n"
        "                          numberings, which only the host builds; the reference);\n"
        "                          under mpirun, where each rank's piece is built: device\n"
        "                          (the default where it has fp64; the piece numbered as\n"
        "                          its mesh) or host (in --numbering)\n"
        "      --rows R            under mpirun, with the pieces built on the device: where\n"
        "                          the finest level's A and the pieces' P and R are\n"
        "                          renumbered and split into the distributed matrices:\n"
        "                          device (the default; nothing of them crosses the bus)\n"
        "                          or host (downloaded, renumbered and uploaded again:\n"
        "                          the reference; the same matrices)\n"
        "      --smoother S        jacobi (default), chebyshev, spai0\n"
        "      --pre N, --post N   smoothing steps before / after the coarse correction\n"
        "                          (default 2 and 2 in the default CG, 4 and 4 once\n"
        "                          --method or --precision is given, 64 and 64 for\n"
        "                          blood)\n"
        "      --omega W           damping of jacobi / spai0 (default 0.7 jacobi, 1 spai0;\n"
        "                          0.5 for blood)\n"
        "      --cycle C           v (default), w, f\n"
        "      --coarse C          coarse solver: auto (default: direct up to 2048\n"
        "                          unknowns, else PCG), direct, pcg (Jacobi-PCG to 1e-2)\n"
        "      --coarse-rows N     solve directly on the finest level with at most N rows\n"
        "                          and drop the coarser ones (default: the coarse mesh is\n"
        "                          the coarse level); fewer latency-bound levels on GPUs.\n"
        "                          Under mpirun: the levels with at most N rows run whole\n"
        "                          on every rank (one gather per cycle instead of a halo\n"
        "                          exchange per product on each of them)\n"
        "      --method K          cg (CG preconditioned by one cycle; the default) or\n"
        "                          none (multigrid cycles as the solver; the default\n"
        "                          under mpirun, for blood and with --precision double\n"
        "                          or float)\n"
        "      --tol T             stop when ||b - A u|| <= T ||b|| (default 1e-8, in\n"
        "                          float 1e-5: float's rounding floor is 1e-7 times the\n"
        "                          condition number or so, and a solve that reaches it\n"
        "                          first stops there and says so)\n"
        "      --maxit N           at most N cycles or CG iterations (default 200)\n"
        "      --format F          matrix format: auto (default), csr, ellr, sell,\n"
        "                          csr-adaptive, hybrid\n"
        "      --options FILE      solver options from a JSON file (the keys of `clmg\n"
        "                          help options`: krylov, mg.smoother, mg.pre, ...); the\n"
        "                          flags and --set override it\n"
        "      --set \"K=V ...\"     solver options by key (--smoother S is mg.smoother=S,\n"
        "                          --pre N mg.pre=N, --method M krylov=M)\n"
        "      --precision P       mixed, double or float. mixed: a float multigrid\n"
        "                          cycle preconditioning double CG (implies --method cg;\n"
        "                          the residuals reported are double ones), the default\n"
        "                          with neither --precision nor --method given (on the\n"
        "                          H200 twice as fast as double cycles alone, to the\n"
        "                          same tolerance); double elsewhere (under mpirun,\n"
        "                          blood, --method none). On a device without fp64 the\n"
        "                          default is float, and double or mixed fail\n"
        "      --vtk FILE.vtu      write the mesh and u (ParaView, VisIt: VTK XML); an\n"
        "                          existing FILE is replaced only once the new one is\n"
        "                          complete\n"
        "      --vtk-format F      binary (default: raw appended data, compact and fast\n"
        "                          to open) or ascii (readable text, twice the size)\n"
        "      --vtk-ascii         the same as --vtk-format ascii\n"
        "      --view              show the hierarchy: per level rows, nonzeros, device\n"
        "                          format, smoother and coarse solver, and the operator\n"
        "                          complexity (nonzeros of all levels / of the finest)\n"
        "      --profile N         run the solve under the kernel profile (the device's\n"
        "                          clock, one event per launch: a few percent slower)\n"
        "                          and show its N kernels of most device time, and all\n"
        "                          kernels' time against the solve's wall time (device\n"
        "                          busy); JSON: profile, profile_kernels_s, device_busy.\n"
        "                          One process only\n"
        "      --seed N            seed of the random STO numbering (default 1)\n"
        "      --cells-per-rank N  under mpirun: the partition level (below) is the finest\n"
        "                          level with at most N cells per rank (default 4096)\n"
        "  -q, --quiet             no per-cycle lines, no progress or first-run lines on\n"
        "                          stderr\n" COMMON_OPTIONS_HELP "\n"
        "Output: unknowns and nonzeros of the finest level, the levels, the relative\n"
        "residual per cycle, the convergence rate (the mean residual reduction per\n"
        "cycle; after a stall, over the cycles before it: rate_iterations), iterations,\n"
        "and the times: setup_s (mesh, assembly, upload; mesh_s,\n"
        "assembly_s, upload_s; with device assembly, assembly_s's parts: refine_s,\n"
        "numbering_s (with the finest mesh and space brought to the host),\n"
        "dirichlet_s (with g), device_assembly_s), kernels_s\n"
        "(compiling the kernels or loading them from\n"
        "the cache, in one warm-up cycle), solve_s, and cycle_s = solve_s / iterations.\n"
        "A setup of more than about a second reports its steps on stderr; the first run\n"
        "on a device says that it compiles the kernels, and where they are cached.\n"
        "--json prints one object on stdout (keys unknowns, nonzeros, levels, format\n"
        "(the name: csr, ellr, sell, csr-adaptive, hybrid) and format_description, status,\n"
        "message, converged, iterations, relative_residual, rate, rate_iterations,\n"
        "setup_s, kernels_s, solve_s, cycle_s, history, with --view hierarchy and\n"
        "operator_complexity, ...); on any failure, bad usage included, one object with\n"
        "status (\"usage_error\" or the library's status, e.g. \"not converged\") and\n"
        "message.\n"
        "\n"
        "Distributed (a build with MPI): mpirun -np N clmg poisson ... builds the\n"
        "hierarchy in parts. Every rank refines the coarse mesh up to the partition\n"
        "level (at most --cells-per-rank cells per rank) and builds those small levels\n"
        "whole; the partition level's cells are split into N compact parts (recursive\n"
        "coordinate bisection), and each rank refines and assembles only its part and\n"
        "one layer of cells around it up to the finest level, so its memory shrinks\n"
        "with N. Each rank owns the DOFs of its part (a DOF on a cut belongs to the\n"
        "part of its lowest-numbered cell); the levels below the partition level are\n"
        "split evenly (CM numbering unless --numbering says otherwise, which also\n"
        "numbers each rank's piece). The cycles run on distributed matrices, the\n"
        "coarsest level solved redundantly on every rank; one OpenCL device per rank.\n"
        "The solver comes from the same options (--set, --options; the JSON echoes\n"
        "them); --vtk and --precision mixed run on one process only. Rank 0 prints the\n"
        "summary, the partition of the finest level and what each rank built; --view\n"
        "adds every level's rows, nonzeros and halo over all ranks.\n"
        "\n"
        "Examples:\n"
        "  clmg poisson --mesh circle --level 7 --vtk circle.vtu --view\n"
        "  clmg poisson --element q2 --level 6 --numbering cm --smoother chebyshev\n"
        "  clmg poisson --mesh blood --level 5 --method cg --json\n"
        "  mpirun -np 4 clmg poisson --level 8 --device pocl\n"
        "\n"
        "Exit status: 0 converged, 1 failure (bad mesh, device error, not converged),\n"
        "2 bad usage.\n",
        out);
}

int poisson_parse_options(int argc, char **argv, const cli_options *defaults, poisson_options *o) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      {"mesh", required_argument, NULL, OPTION_MESH},
      {"element", required_argument, NULL, OPTION_ELEMENT},
      {"level", required_argument, NULL, OPTION_LEVEL},
      {"numbering", required_argument, NULL, OPTION_NUMBERING},
      {"smoother", required_argument, NULL, OPTION_SMOOTHER},
      {"pre", required_argument, NULL, OPTION_PRE},
      {"post", required_argument, NULL, OPTION_POST},
      {"omega", required_argument, NULL, OPTION_OMEGA},
      {"cycle", required_argument, NULL, OPTION_CYCLE},
      {"method", required_argument, NULL, OPTION_KRYLOV},
      {"krylov", required_argument, NULL, OPTION_KRYLOV_OLD},
      {"tol", required_argument, NULL, OPTION_TOLERANCE},
      {"maxit", required_argument, NULL, OPTION_MAX_ITERATIONS},
      {"format", required_argument, NULL, OPTION_FORMAT},
      {"precision", required_argument, NULL, OPTION_PRECISION},
      {"coarse-rows", required_argument, NULL, OPTION_COARSE_ROWS},
      {"coarse", required_argument, NULL, OPTION_COARSE},
      {"vtk", required_argument, NULL, OPTION_VTK},
      {"vtk-format", required_argument, NULL, OPTION_VTK_FORMAT},
      {"vtk-ascii", no_argument, NULL, OPTION_VTK_ASCII},
      {"view", no_argument, NULL, OPTION_VIEW},
      {"profile", required_argument, NULL, OPTION_PROFILE},
      {"seed", required_argument, NULL, OPTION_SEED},
      {"cells-per-rank", required_argument, NULL, OPTION_CELLS_PER_RANK},
      {"options", required_argument, NULL, OPTION_OPTIONS_FILE},
      {"set", required_argument, NULL, OPTION_SET},
      {"assembly", required_argument, NULL, OPTION_ASSEMBLY},
      {"rows", required_argument, NULL, OPTION_ROWS},
      {"quiet", no_argument, NULL, 'q'},
      {NULL, 0, NULL, 0},
  };
  const char *command = argv[0];
  memset(o, 0, sizeof *o);
  o->common = *defaults;
  o->mesh_name = "circle";
  o->mesh = MESH_CIRCLE;
  o->degree = 1;
  o->level = 6;
  o->numbering = CLMG_NUMBERING_2LV;
  clmg_multigrid_options_defaults(&o->multigrid);
  o->tolerance = 0; /* unset: the default of the precision */
  o->max_iterations = 200;
  o->seed = 1;
  o->cells_per_rank = 4096;
  o->vtk_encoding = CLMG_VTU_BINARY;
  const char *assembly = NULL; /* --assembly as given */
  int option, steps;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS "q", long_options, NULL)) != -1) {
    int common = cli_apply_common_option(command, option, &o->common);
    if (common < 0)
      return cli_usage_error(command);
    if (common)
      continue;
    switch (option) {
    case OPTION_MESH:
      o->mesh_name = optarg;
      o->mesh = strcmp(optarg, "circle") == 0  ? MESH_CIRCLE
                : strcmp(optarg, "blood") == 0 ? MESH_BLOOD
                                               : MESH_FILE;
      break;
    case OPTION_ELEMENT:
      if (strcmp(optarg, "q1") != 0 && strcmp(optarg, "q2") != 0) {
        return cli_usage(command, "unknown element '%s' (there are: q1, q2)", optarg);
      }
      o->degree = optarg[1] - '0';
      break;
    case OPTION_LEVEL:
      if (!cli_parse_int(command, "--level", optarg, 1, POISSON_MAX_LEVEL, &o->level))
        return cli_usage_error(command);
      break;
    case OPTION_NUMBERING:
      o->numbering_given = 1;
      if (!clmg_numbering_parse(optarg, &o->numbering)) {
        return cli_usage(command, "unknown numbering '%s' (there are: 2lv, cm, xyz, sto, hie)",
                         optarg);
      }
      break;
    case OPTION_SMOOTHER:
      if (!clmg_smoother_type_parse(optarg, &o->multigrid.smoother)) {
        return cli_usage(command, "unknown smoother '%s' (there are: jacobi, chebyshev, spai0)",
                         optarg);
      }
      break;
    case OPTION_PRE:
    case OPTION_POST:
      if (!cli_parse_int(command, option == OPTION_PRE ? "--pre" : "--post", optarg, 0, 1000,
                         &steps))
        return cli_usage_error(command);
      *(option == OPTION_PRE ? &o->multigrid.pre_smoothing : &o->multigrid.post_smoothing) = steps;
      o->smoothing_given = 1;
      break;
    case OPTION_OMEGA:
      if (!cli_parse_double(command, "--omega", optarg, 1e-3, 2.0, &o->multigrid.omega))
        return cli_usage_error(command);
      o->omega_given = 1;
      break;
    case OPTION_CYCLE:
      if (!clmg_cycle_type_parse(optarg, &o->multigrid.cycle)) {
        return cli_usage(command, "unknown cycle '%s' (there are: v, w, f)", optarg);
      }
      break;
    case OPTION_KRYLOV_OLD:
      apputil_old_spelling(command, "--krylov", "--method");
      /* fall through */
    case OPTION_KRYLOV:
      if (strcmp(optarg, "none") != 0 && strcmp(optarg, "cg") != 0) {
        return cli_usage(command, "--method: unknown method '%s' (there are: none, cg)", optarg);
      }
      o->use_cg = strcmp(optarg, "cg") == 0;
      o->krylov_given = 1;
      break;
    case OPTION_COARSE_ROWS: {
      int rows = 0;
      if (!cli_parse_int(command, "--coarse-rows", optarg, 1, 16384, &rows))
        return cli_usage_error(command);
      o->multigrid.coarse_max_rows = (size_t)rows;
      break;
    }
    case OPTION_TOLERANCE:
      if (!cli_parse_double(command, "--tol", optarg, 1e-15, 0.5, &o->tolerance))
        return cli_usage_error(command);
      break;
    case OPTION_MAX_ITERATIONS:
      if (!cli_parse_int(command, "--maxit", optarg, 1, 1000000, &o->max_iterations))
        return cli_usage_error(command);
      break;
    case OPTION_FORMAT:
      if (!clmg_matrix_format_parse(optarg, &o->multigrid.matrix.format)) {
        return cli_usage(command,
                         "unknown format '%s' (there are: auto, csr, ellr, sell, csr-adaptive, "
                         "hybrid)",
                         optarg);
      }
      break;
    case OPTION_PRECISION:
      if (strcmp(optarg, "double") != 0 && strcmp(optarg, "float") != 0 &&
          strcmp(optarg, "mixed") != 0) {
        return cli_usage(command, "unknown precision '%s' (there are: double, float, mixed)",
                         optarg);
      }
      o->multigrid.matrix.precision = optarg[0] == 'd' ? CLMG_DOUBLE : CLMG_FLOAT;
      o->mixed = optarg[0] == 'm';
      o->precision_asked = optarg[0] == 'f' ? NULL : optarg;
      break;
    case OPTION_COARSE:
      if (strcmp(optarg, "auto") == 0) {
        o->multigrid.coarse = CLMG_COARSE_AUTO;
      } else if (strcmp(optarg, "direct") == 0) {
        o->multigrid.coarse = CLMG_COARSE_DIRECT;
      } else if (strcmp(optarg, "pcg") == 0) {
        o->multigrid.coarse = CLMG_COARSE_PCG;
      } else {
        return cli_usage(command, "unknown coarse solver '%s' (there are: auto, direct, pcg)",
                         optarg);
      }
      break;
    case OPTION_VTK:
      o->vtk_path = optarg;
      break;
    case OPTION_VTK_FORMAT:
      if (strcmp(optarg, "binary") == 0) {
        o->vtk_encoding = CLMG_VTU_BINARY;
      } else if (strcmp(optarg, "ascii") == 0) {
        o->vtk_encoding = CLMG_VTU_ASCII;
      } else {
        return cli_usage(command, "unknown VTK format '%s' (there are: binary, ascii)", optarg);
      }
      break;
    case OPTION_VTK_ASCII:
      o->vtk_encoding = CLMG_VTU_ASCII;
      break;
    case OPTION_VIEW:
      o->view = 1;
      break;
    case OPTION_PROFILE:
      if (!cli_parse_int(command, "--profile", optarg, 1, 1000, &o->profile))
        return cli_usage_error(command);
      break;
    case OPTION_ASSEMBLY:
      if (strcmp(optarg, "device") != 0 && strcmp(optarg, "host") != 0)
        return cli_usage(command, "unknown assembly '%s' (there are: device, host)", optarg);
      assembly = optarg;
      o->assembly_given = 1;
      break;
    case OPTION_ROWS:
      if (strcmp(optarg, "device") != 0 && strcmp(optarg, "host") != 0)
        return cli_usage(command, "unknown rows '%s' (there are: device, host)", optarg);
      o->rows_on_host = strcmp(optarg, "host") == 0;
      break;
    case OPTION_SEED: {
      int seed;
      if (!cli_parse_int(command, "--seed", optarg, 0, 2147483647, &seed))
        return cli_usage_error(command);
      o->seed = (unsigned long long)seed;
      break;
    }
    case OPTION_CELLS_PER_RANK: {
      int cells;
      if (!cli_parse_int(command, "--cells-per-rank", optarg, 1, 2147483647, &cells))
        return cli_usage_error(command);
      o->cells_per_rank = (size_t)cells;
      break;
    }
    case 'q':
      o->quiet = 1;
      break;
    case OPTION_OPTIONS_FILE:
      o->settings.options_path = optarg;
      break;
    case OPTION_SET:
      if (cli_record_setting(command, "--set", NULL, optarg, &o->settings) < 0)
        return cli_usage_error(command);
      break;
    default:
      return cli_usage_error(command);
    }
    /* the solver flags are the options layer's keys too */
    static const struct {
      int option;
      const char *flag, *key;
    } keys[] = {{OPTION_SMOOTHER, "--smoother", "mg.smoother"},
                {OPTION_PRE, "--pre", "mg.pre"},
                {OPTION_POST, "--post", "mg.post"},
                {OPTION_OMEGA, "--omega", "mg.omega"},
                {OPTION_CYCLE, "--cycle", "mg.cycle"},
                {OPTION_COARSE, "--coarse", "mg.coarse"},
                {OPTION_KRYLOV, "--method", "krylov"},
                {OPTION_KRYLOV_OLD, "--krylov", "krylov"},
                {OPTION_TOLERANCE, "--tol", "tol"},
                {OPTION_MAX_ITERATIONS, "--maxit", "maxit"},
                {OPTION_FORMAT, "--format", "format"},
                {OPTION_PRECISION, "--precision", "precision"}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      if (keys[k].option == option &&
          cli_record_setting(command, keys[k].flag, keys[k].key, optarg, &o->settings) < 0)
        return cli_usage_error(command);
  }
  if (o->common.help)
    return 0;
  if (optind < argc) {
    return cli_usage(command, "unexpected argument '%s'", argv[optind]);
  }
  o->assembly_on_device =
      assembly ? strcmp(assembly, "device") == 0 : o->numbering == CLMG_NUMBERING_2LV;
  if (o->assembly_on_device && o->numbering != CLMG_NUMBERING_2LV)
    return cli_usage(command,
                     "--assembly device builds the 2lv numbering only; use --assembly host "
                     "for --numbering %s",
                     clmg_numbering_name(o->numbering));
  if (o->mixed && o->krylov_given && !o->use_cg)
    return cli_usage(command, "--precision mixed runs the float cycle inside double CG; "
                              "--method none has no CG: use --method cg, or --precision float "
                              "for the cycle alone");
  if (o->mixed)
    o->use_cg = 1;
  o->tolerance_given = o->tolerance != 0;
  if (o->tolerance == 0)
    o->tolerance = clmg_default_tolerance(o->mixed ? CLMG_DOUBLE : o->multigrid.matrix.precision);
  /* Geveler et al. 2011's BLOOD settings, unless given */
  if (o->mesh == MESH_BLOOD) {
    if (!o->smoothing_given)
      o->multigrid.pre_smoothing = o->multigrid.post_smoothing = 64;
    if (!o->omega_given && o->multigrid.smoother == CLMG_SMOOTHER_JACOBI)
      o->multigrid.omega = 0.5;
  }
  return 0;
}

/* ---- the problems ---- */

void poisson_problem_of(const poisson_options *o, clmg_poisson_problem *problem) {
  if (o->mesh == MESH_CIRCLE)
    clmg_poisson_problem_circle(problem);
  else if (o->mesh == MESH_BLOOD)
    clmg_poisson_problem_blood(problem);
  else
    clmg_poisson_problem_unit_source(problem);
}

clmg_status poisson_load_coarse_mesh(const poisson_options *o, clmg_mesh *mesh, clmg_error *error) {
  switch (o->mesh) {
  case MESH_CIRCLE:
    return clmg_mesh_circle(mesh, error);
  case MESH_BLOOD:
    return clmg_mesh_blood(mesh, error);
  default:
    return clmg_mesh_read_gmsh(o->mesh_name, mesh, error);
  }
}

/* ---- progress and report ---- */

typedef struct cycle_printer {
  int enabled;
  const char *label;
} cycle_printer;

static int print_cycle(void *data, int iteration, double relative_residual) {
  const cycle_printer *p = data;
  if (p->enabled) {
    printf("  %-9s %4d  relative residual %.3e\n", p->label, iteration, relative_residual);
    fflush(stdout);
  }
  return 0;
}

typedef struct poisson_report {
  size_t unknowns, nonzeros, coarse_unknowns;
  int levels;
  const char *format_name, *format_description;
  const char *coarse_solver;
  char *view_json; /* --view: the hierarchy (clmg_multigrid_view_json) */
  clmg_status status;
  char message[2048];
  clmg_krylov_result result;
  double rate;
  int rate_cycles; /* the cycles the rate is averaged over (fewer than all after a stall) */
  double mesh_s, assembly_s, upload_s, kernels_s, solve_s;
  clmg_counters solve_counts; /* the solve's device commands and host waits */
  /* the device assembly's parts (clmg_fe_device_hierarchy); NaN with host assembly */
  double refine_s, numbering_s, dirichlet_s, device_s;
  double iteration_bytes;
  double omega; /* the damping the finest smoother uses (0: none) */
  const clmg_solver *solver;
  clmg_kernel_time *profile; /* --profile: the solve's kernels (malloc'ed), largest first */
  size_t profile_count;
} poisson_report;

static const char *problem_label(const poisson_options *o) {
  return o->mesh == MESH_CIRCLE ? "CIRCLE" : o->mesh == MESH_BLOOD ? "BLOOD" : o->mesh_name;
}

/* Everything before the solve except compiling the kernels (kernels_s), as
 * setup_s means in every clmg command. */
static double setup_seconds(const poisson_report *r) {
  return r->mesh_s + r->assembly_s + r->upload_s;
}

/* The mean residual reduction per cycle. After a stall (the rounding floor,
 * or a cycle that stopped reducing) the cycles on the plateau would hide the
 * rate the cycle achieved, so it is averaged only up to the first cycle that
 * came within a factor 2 of the residual it stalled at. */
static double convergence_rate(const clmg_krylov_result *result, int *cycles) {
  *cycles = 0;
  if (result->iterations <= 0 || !(result->initial_residual > 0) || !(result->final_residual > 0))
    return 0.0;
  *cycles = result->iterations;
  double ratio = result->final_residual / result->initial_residual;
  /* the history holds relative residuals, one per cycle from cycle 0 */
  const double *history = result->history;
  if (!result->converged && history && history[0] > 0 &&
      result->history_length == (size_t)result->iterations + 1) {
    double plateau = history[result->iterations];
    for (int k = 1; k <= result->iterations; ++k)
      if (history[k] <= 2.0 * plateau) {
        *cycles = k;
        ratio = history[k] / history[0];
        break;
      }
  }
  return ratio > 0 ? pow(ratio, 1.0 / *cycles) : 0.0;
}

static void print_text_summary(const poisson_options *o, const poisson_report *r) {
  const clmg_krylov_result *result = &r->result;
  printf("%-18s %s\n", "converged", result->converged ? "yes" : "no");
  printf("%-18s %d %s\n", "iterations", result->iterations, o->use_cg ? "CG iterations" : "cycles");
  printf("%-18s %.3e\n", "relative residual", result->relative_residual);
  const char *unit = o->use_cg ? "iteration" : "cycle";
  if (r->rate_cycles < result->iterations)
    printf("%-18s %.4f (mean residual reduction per %s over the first %d, before the residual "
           "stalled)\n",
           "rate", r->rate, unit, r->rate_cycles);
  else
    printf("%-18s %.4f (mean residual reduction per %s)\n", "rate", r->rate, unit);
  printf("%-18s %.4f (mesh %.4f, assembly %.4f, upload %.4f)\n", "setup_s", setup_seconds(r),
         r->mesh_s, r->assembly_s, r->upload_s);
  if (isfinite(r->device_s))
    printf("%-18s refinement %.4f, numbering %.4f, Dirichlet DOFs %.4f, assembly %.4f\n",
           "assembly_s", r->refine_s, r->numbering_s, r->dirichlet_s, r->device_s);
  printf("%-18s %.4f\n", "kernels_s", r->kernels_s);
  printf("%-18s %.4f\n", "solve_s", r->solve_s);
  if (result->iterations > 0)
    printf("%-18s %.6f (%.3f ms)\n", "cycle_s", r->solve_s / result->iterations,
           1e3 * r->solve_s / result->iterations);
  solve_print_counts(&r->solve_counts, result->iterations);
  if (o->profile > 0) {
    double kernels = solve_profile_seconds(r->profile, r->profile_count);
    solve_print_profile("the solve", r->profile, r->profile_count, o->profile);
    printf("%-18s %.4f s of kernels in the solve's %.4f s: %.0f%%\n", "device busy", kernels,
           r->solve_s, r->solve_s > 0 ? 100.0 * kernels / r->solve_s : 0.0);
  }
}

static void print_json(const poisson_options *o, const poisson_report *r,
                       const clmg_device_info *device) {
  const clmg_krylov_result *result = &r->result;
  json_writer w;
  json_result_begin(&w, stdout, "poisson");
  json_string(&w, "mesh", o->mesh == MESH_FILE ? o->mesh_name : o->mesh_name);
  json_string(&w, "element", o->degree == 1 ? "q1" : "q2");
  json_integer(&w, "level", o->level);
  json_integer(&w, "levels", r->levels);
  json_integer(&w, "unknowns", (long long)r->unknowns);
  json_integer(&w, "nonzeros", (long long)r->nonzeros);
  json_integer(&w, "coarse_unknowns", (long long)r->coarse_unknowns);
  json_string(&w, "numbering", clmg_numbering_name(o->numbering));
  json_string(&w, "assembly", o->assembly_on_device ? "device" : "host");
  json_string(&w, "smoother", clmg_smoother_type_name(o->multigrid.smoother));
  json_integer(&w, "pre", o->multigrid.pre_smoothing);
  json_integer(&w, "post", o->multigrid.post_smoothing);
  json_number(&w, "omega", r->omega);
  json_string(&w, "cycle", clmg_cycle_type_name(o->multigrid.cycle));
  json_string(&w, "coarse_solver", r->coarse_solver);
  json_string(&w, "krylov", o->use_cg ? "cg" : "none");
  json_string(&w, "format", r->format_name);
  json_string(&w, "format_description", r->format_description);
  json_string(&w, "precision", o->mixed ? "mixed" : clmg_dtype_name(o->multigrid.matrix.precision));
  json_device(&w, device);
  json_number(&w, "relative_tolerance", o->tolerance);
  json_bool(&w, "converged", result->converged);
  json_string(&w, "status", clmg_status_string(r->status));
  json_string(&w, "message", r->status != CLMG_SUCCESS ? r->message : "");
  json_integer(&w, "iterations", result->iterations);
  json_string(&w, "iteration_kind", o->use_cg ? "krylov" : "cycle");
  json_number(&w, "relative_residual", result->relative_residual);
  json_number(&w, "rate", r->rate);
  json_integer(&w, "rate_iterations", r->rate_cycles);
  json_number(&w, "mesh_s", r->mesh_s);
  json_number(&w, "assembly_s", r->assembly_s);
  json_number(&w, "upload_s", r->upload_s);
  json_number(&w, "refine_s", r->refine_s);
  json_number(&w, "numbering_s", r->numbering_s);
  json_number(&w, "dirichlet_s", r->dirichlet_s);
  json_number(&w, "device_assembly_s", r->device_s);
  json_number(&w, "kernels_s", r->kernels_s); /* compile_s's old name, for one release */
  json_number(&w, "compile_s", r->kernels_s);
  json_number(&w, "setup_s", setup_seconds(r));
  json_number(&w, "solve_s", r->solve_s);
  json_number(&w, "cycle_s", result->iterations > 0 ? r->solve_s / result->iterations : 0.0);
  solve_json_counts(&w, &r->solve_counts, result->iterations);
  json_number(&w, "iteration_bytes", r->iteration_bytes);
  if (o->profile > 0) {
    double kernels = solve_profile_seconds(r->profile, r->profile_count);
    solve_json_profile(&w, r->profile, r->profile_count, o->profile);
    json_number(&w, "profile_kernels_s", kernels);
    json_number(&w, "device_busy", r->solve_s > 0 ? kernels / r->solve_s : 0.0);
  }
  if (r->solver) { /* the options as resolved: --options takes them back */
    char *options = clmg_options_to_json(clmg_solver_options(r->solver), 1);
    json_raw(&w, "options", options);
    free(options);
  }
  if (o->view)
    json_members(&w, r->view_json);
  json_array_begin(&w, "history");
  for (size_t k = 0; k < result->history_length; k++)
    json_number(&w, NULL, result->history[k]);
  json_array_end(&w);
  json_object_end(&w);
  json_end(&w);
}

/* ---- the command ---- */

typedef struct poisson_resources {
  clmg_mesh coarse_mesh;
  clmg_context *context;
  clmg_options *options;    /* the solver's options (clmg/solver.h), resolved */
  clmg_fe_poisson *problem; /* the hierarchy, multigrid and solver (clmg/fe_solve.h) */
  clmg_fe_poisson_result result;
} poisson_resources;

static void release(poisson_resources *s) {
  clmg_fe_poisson_result_free(&s->result);
  clmg_fe_poisson_destroy(s->problem); /* before its context */
  clmg_options_destroy(s->options);
  clmg_context_destroy(s->context);
  clmg_mesh_free(&s->coarse_mesh);
}

int poisson_solver_options(const char *command, poisson_options *o, clmg_options *db,
                           clmg_context *context) {
  clmg_multigrid_options mg;
  mg.coarse_max_rows = o->multigrid.coarse_max_rows;
  clmg_status status = clmg_fe_poisson_options(db, context, o->mesh == MESH_BLOOD, &mg);
  if (status == CLMG_ERROR_INVALID_ARGUMENT &&
      strncmp(clmg_context_message(context), "krylov=", 7) == 0) {
    cli_failure(command, status, "krylov=%s: clmg poisson runs multigrid cycles (none) or CG (cg)",
                clmg_options_get(db, "krylov"));
    return 0;
  }
  if (status != CLMG_SUCCESS) {
    cli_report(command, context, status, "the solver's options");
    return 0;
  }
  o->mixed = strcmp(clmg_options_get(db, "precision"), "mixed") == 0;
  o->multigrid = mg;
  o->use_cg = strcmp(clmg_options_get(db, "krylov"), "cg") == 0;
  o->max_iterations = (int)strtol(clmg_options_get(db, "maxit"), NULL, 10);
  o->tolerance = strcmp(clmg_options_get(db, "tol"), "auto") == 0
                     ? clmg_default_tolerance(o->mixed ? CLMG_DOUBLE : mg.matrix.precision)
                     : strtod(clmg_options_get(db, "tol"), NULL);
  return 1;
}

/* The solver's options: the --options file, the flags and --set, the fp64
 * fallback, then clmg poisson's own defaults and the hierarchy's options
 * (poisson_solver_options). Returns 0 after reporting. */
static int solver_options(const char *command, poisson_options *o, poisson_resources *s) {
  return cli_make_options(command, &o->settings, &s->options) &&
         cli_choose_precision(command, s->options, s->context, o->quiet) &&
         poisson_solver_options(command, o, s->options, s->context);
}

/* Builds the hierarchy (on the device, or on the host); prints why and
 * returns 0 on failure. */
/* The coarse mesh, read (or made) and checked on the host before the
 * device is opened: a bad mesh file is reported as such whatever the
 * device (and the address space a driver needs). Prints why and returns 0
 * on failure. */
static int load_coarse_mesh(const char *command, const poisson_options *o, poisson_resources *s,
                            poisson_report *r) {
  clmg_error error = {{0}};
  double start = apputil_now();
  clmg_status status = poisson_load_coarse_mesh(o, &s->coarse_mesh, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_mesh_check(&s->coarse_mesh, &error);
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "cannot use the mesh '%s': %s: %s", o->mesh_name,
                clmg_status_string(status), error.message);
    return 0;
  }
  r->mesh_s = apputil_now() - start;
  cli_progress("coarse mesh ready: %zu cells", s->coarse_mesh.num_cells);
  return 1;
}

/* The hierarchy from the coarse mesh (load_coarse_mesh): clmg_fe_poisson_create. */
static int build_hierarchy(const char *command, const poisson_options *o, poisson_resources *s,
                           poisson_report *r) {
  /* what the finest level will take, before the work (55 bytes per matrix
   * entry a row and 200 per unknown, measured on pocl: 700 bytes per Q1
   * unknown in 2D, 950 per Q2 unknown) */
  int dim = s->coarse_mesh.dim;
  double per_cell = o->degree == 1 ? 1 : dim == 2 ? 4 : 8;
  double entries = o->degree == 1 ? (dim == 2 ? 9 : 27) : (dim == 2 ? 16 : 64);
  char what[160];
  snprintf(what, sizeof what, "clmg poisson --level %d with %s elements", o->level,
           o->degree == 1 ? "Q1" : "Q2");
  clmg_status status = apputil_check_refined_size(s->context, &s->coarse_mesh, o->level - 1,
                                                  per_cell, 55 * entries + 200, entries, what);
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "%s", clmg_context_message(s->context));
    return 0;
  }
  clmg_fe_poisson_spec spec;
  clmg_fe_poisson_spec_defaults(&spec);
  spec.coarse = &s->coarse_mesh;
  spec.level = o->level;
  spec.degree = o->degree;
  poisson_problem_of(o, &spec.problem);
  spec.numbering = o->numbering;
  spec.assembly = o->assembly_on_device ? CLMG_FE_ASSEMBLY_DEVICE : CLMG_FE_ASSEMBLY_HOST;
  spec.seed = o->seed;
  spec.coarse_max_rows = o->multigrid.coarse_max_rows;
  spec.paper_smoothing = o->mesh == MESH_BLOOD;
  status = clmg_fe_poisson_create(s->context, &spec, s->options, &s->problem);
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "cannot build the level-%d hierarchy%s: %s: %s", o->level,
                o->assembly_on_device ? " on the device" : "", clmg_status_string(status),
                clmg_context_message(s->context));
    return 0;
  }
  const clmg_fe_poisson_info *info = clmg_fe_poisson_get_info(s->problem);
  r->unknowns = info->unknowns;
  r->nonzeros = info->nonzeros;
  r->coarse_unknowns = info->coarse_unknowns;
  r->levels = info->levels;
  r->assembly_s = info->assembly_s;
  r->refine_s = info->refine_s;
  r->numbering_s = info->numbering_s;
  r->dirichlet_s = info->dirichlet_s;
  r->device_s = info->device_assembly_s;
  cli_progress("mesh refined and %d levels assembled on the %s: %zu unknowns, %zu nonzeros",
               r->levels, o->assembly_on_device ? "device" : "host", r->unknowns, r->nonzeros);
  /* a forced direct solve of a large coarse level factors a dense matrix:
   * say what that costs before the wait (8,448 rows ran a minute unsaid) */
  size_t coarse_rows = info->direct_rows; /* --coarse-rows: the finest level within it */
  if (o->multigrid.coarse == CLMG_COARSE_DIRECT && coarse_rows > 2048 && !o->quiet) {
    double n = (double)coarse_rows;
    fprintf(stderr,
            "%s: --coarse direct factors the %zu-row coarse level as a dense matrix: %.3g GB "
            "and about %.3g GFLOP; --coarse pcg or a smaller --coarse-rows take less\n",
            command, coarse_rows, n * n * 8 / 1e9, 2 * n * n * n / 3 / 1e9);
  }
  return 1;
}

/* The multigrid, the solver and the vectors (clmg_fe_poisson_setup), whose
 * setup compiles (or loads) every kernel of the solve, so that solve_s is
 * the solve alone. */
static clmg_status build_on_device(poisson_resources *s, poisson_report *r) {
  clmg_status status = clmg_fe_poisson_setup(s->problem);
  const clmg_fe_poisson_info *info = clmg_fe_poisson_get_info(s->problem);
  r->upload_s = info->upload_s;
  r->kernels_s = info->kernels_s;
  if (status != CLMG_SUCCESS)
    return status;
  cli_progress("multigrid hierarchy built on the device");
  cli_progress("kernels ready");
  clmg_multigrid *multigrid = clmg_fe_poisson_multigrid(s->problem);
  const clmg_matrix *finest =
      clmg_multigrid_matrix(multigrid, clmg_multigrid_levels(multigrid) - 1);
  r->format_name = clmg_matrix_format_name(clmg_matrix_format_of(finest));
  r->format_description = clmg_matrix_describe(finest);
  r->coarse_solver = clmg_multigrid_coarse_solver(multigrid);
  r->iteration_bytes = clmg_multigrid_iteration_bytes(multigrid);
  r->levels = info->levels; /* --coarse-rows may drop some */
  r->coarse_unknowns = info->coarse_unknowns;
  r->omega = clmg_multigrid_smoother_damping(multigrid, clmg_multigrid_levels(multigrid) - 1);
  return CLMG_SUCCESS;
}

static void print_header(const poisson_options *o, const poisson_resources *s,
                         const poisson_report *r) {
  const clmg_device_info *device = clmg_context_device(s->context);
  printf("%-18s %s, Q%d, level %d (%d levels)\n", "problem", problem_label(o), o->degree, o->level,
         r->levels);
  printf("%-18s %zu\n", "unknowns", r->unknowns);
  printf("%-18s %zu\n", "nonzeros", r->nonzeros);
  printf("%-18s %s\n", "numbering", clmg_numbering_name(o->numbering));
  printf("%-18s %s\n", "assembly", o->assembly_on_device ? "device" : "host");
  printf("%-18s %u:%u %s (%s)\n", "device", device->platform_index, device->device_index,
         device->name, device->platform_name);
  printf("%-18s %s, %s\n", "format", r->format_description,
         o->mixed ? "float cycle in double CG" : clmg_dtype_name(o->multigrid.matrix.precision));
  printf("%-18s %s-cycle, %s %d+%d", "multigrid", clmg_cycle_type_name(o->multigrid.cycle),
         clmg_smoother_type_name(o->multigrid.smoother), o->multigrid.pre_smoothing,
         o->multigrid.post_smoothing);
  if (r->omega > 0)
    printf(", omega %g", r->omega);
  printf(", coarse %s (%zu unknowns)%s\n", r->coarse_solver, r->coarse_unknowns,
         o->use_cg ? ", as a CG preconditioner" : "");
  printf("%-18s %g\n", "tolerance", o->tolerance);
  fflush(stdout);
}

/* Writes u on the finest mesh; on failure returns the status with the reason
 * in message. */
static clmg_status write_vtk(const poisson_options *o, poisson_resources *s, char *message,
                             size_t message_size) {
  clmg_fe_poisson_result *result = &s->result;
  clmg_status status = clmg_fe_poisson_fetch(s->problem, result);
  if (status != CLMG_SUCCESS) {
    snprintf(message, message_size, "reading back the solution and the mesh: %s",
             clmg_context_message(s->context));
    return status;
  }
  clmg_mesh_field field = {"u", result->u};
  clmg_error error = {{0}};
  status = clmg_mesh_write_vtu_encoded(o->vtk_path, &result->mesh, o->degree, &field, 1,
                                       o->vtk_encoding, &error);
  if (status != CLMG_SUCCESS)
    snprintf(message, message_size, "cannot write %s: %s", o->vtk_path, error.message);
  return status;
}

int run_poisson(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  poisson_options o;
  int exit_code = poisson_parse_options(argc, argv, defaults, &o);
  if (exit_code != 0)
    return exit_code;
  if (o.common.help) {
    poisson_print_usage(stdout);
    return EXIT_SUCCESS;
  }
  poisson_resources s;
  memset(&s, 0, sizeof s);
  poisson_report r;
  memset(&r, 0, sizeof r);
  r.refine_s = r.numbering_s = r.dirichlet_s = r.device_s = NAN; /* host assembly: none */
  cli_progress_begin(o.quiet);
  if (!load_coarse_mesh(command, &o, &s, &r)) {
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  /* Then the device: a precision it lacks fails before the refinement. */
  s.context = cli_open_context(command, &o.common, o.quiet);
  if (!s.context) {
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  if (!solver_options(command, &o, &s)) {
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  if (!build_hierarchy(command, &o, &s, &r)) {
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  clmg_status status = build_on_device(&s, &r);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s.context, status, "setting up the multigrid hierarchy and the solver");
    release(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  clmg_multigrid *multigrid = clmg_fe_poisson_multigrid(s.problem);
  char *view_text = NULL;
  if (o.view) {
    r.view_json = clmg_multigrid_view_json(multigrid, NULL);
    view_text = clmg_multigrid_view(multigrid, NULL);
    if (!r.view_json || !view_text) {
      free(r.view_json);
      free(view_text);
      release(&s);
      return cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for --view");
    }
  }
  if (!o.common.json) {
    print_header(&o, &s, &r);
    if (o.view)
      printf("\n%s\n", view_text);
  }
  free(view_text);

  cycle_printer printer = {!o.common.json && !o.quiet, o.use_cg ? "iteration" : "cycle"};
  r.solver = clmg_fe_poisson_solver(s.problem);
  clmg_status profiled = o.profile > 0 ? clmg_profile_start(s.context) : CLMG_SUCCESS;
  if (profiled != CLMG_SUCCESS) {
    free(r.view_json);
    release(&s);
    return cli_failure(command, profiled, "starting the kernel profile: %s",
                       clmg_context_message(s.context));
  }
  clmg_fe_poisson_solve(s.problem, print_cycle, &printer, &s.result);
  if (o.profile > 0) /* stop waits for the queue; the solve has waited already */
    profiled = clmg_profile_stop(s.context, &r.profile, &r.profile_count);
  r.status = s.result.status;
  r.result = s.result.solve; /* the report holds the history now */
  memset(&s.result.solve, 0, sizeof s.result.solve);
  r.solve_counts = s.result.counts;
  snprintf(r.message, sizeof r.message, "%s", s.result.message);
  r.solve_s = s.result.solve_s;
  r.rate = convergence_rate(&r.result, &r.rate_cycles);
  if (profiled != CLMG_SUCCESS && r.status == CLMG_SUCCESS) {
    r.status = profiled;
    snprintf(r.message, sizeof r.message, "ending the kernel profile: %s",
             clmg_context_message(s.context));
  }

  /* The file first, so that the report (with --json one object) says whether
   * it was written. */
  clmg_status solve_status = r.status, vtk_status = CLMG_SUCCESS;
  char vtk_message[1200] = "";
  int solution_usable = r.status == CLMG_SUCCESS || r.status == CLMG_ERROR_NOT_CONVERGED;
  if (o.vtk_path && solution_usable) {
    vtk_status = write_vtk(&o, &s, vtk_message, sizeof vtk_message);
    if (vtk_status != CLMG_SUCCESS && r.status == CLMG_SUCCESS) {
      r.status = vtk_status;
      snprintf(r.message, sizeof r.message, "%s", vtk_message);
    }
  }

  if (o.common.json) {
    print_json(&o, &r, clmg_context_device(s.context));
    cli_json_done();
  } else {
    print_text_summary(&o, &r);
    if (o.vtk_path && solution_usable && vtk_status == CLMG_SUCCESS)
      printf("%-18s %s (%s; open it in ParaView)\n", "wrote", o.vtk_path,
             o.vtk_encoding == CLMG_VTU_ASCII ? "ASCII" : "binary");
  }
  exit_code = r.status == CLMG_SUCCESS ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE;
  fflush(stdout);
  if (solve_status != CLMG_SUCCESS)
    fprintf(stderr, "%s: %s: %s\n", command, clmg_status_string(solve_status), r.message);
  if (vtk_status != CLMG_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", command, clmg_status_string(vtk_status), vtk_message);
    exit_code = EXIT_LIBRARY_FAILURE;
  }
  clmg_krylov_result_free(&r.result);
  free(r.view_json);
  free(r.profile);
  release(&s);
  return exit_code;
}
