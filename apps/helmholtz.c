/* clmg helmholtz: the generalized Helmholtz problem of Fu et al. 2014,
 * -div(sigma grad u) + lambda u = f, in P1 on a triangle or tetrahedron
 * mesh: builds or reads the mesh, assembles A and b on the device (patch
 * assembly) or on the host (the serial reference), then solves with the
 * Krylov methods of clmg solve, whose options it shares. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "cli.h"
#include "subcommands.h"

/* blobs:L and blobs2d:L above this would not fit a workstation */
enum { HELMHOLTZ_MAX_GENERATOR_LEVEL = 6 };

enum {
  OPTION_MESH = SOLVE_OPTION_END,
  OPTION_SIGMA,
  OPTION_LAMBDA,
  OPTION_RHS,
  OPTION_DIRICHLET,
  OPTION_ASSEMBLY,
  OPTION_WRITE_MATRIX,
  OPTION_WRITE_RHS,
  OPTION_NO_SOLVE,
  OPTION_VTK
};

static void print_helmholtz_usage(FILE *out) {
  fputs("Usage: clmg helmholtz [OPTIONS]\n"
        "\n"
        "Solves -div(sigma grad u) + lambda u = f with natural boundary conditions\n"
        "(Fu et al. 2014, section 3) with P1 elements on a triangle or tetrahedron mesh:\n"
        "A = S + lambda M, b_i = (phi_i, f). A and b are assembled on the device with\n"
        "the patch scheme of Fu et al. 2014, section 4 (or on the host: the serial\n"
        "reference), then solved with the Krylov methods of clmg solve (CG with Jacobi\n"
        "by default: A is symmetric positive definite when lambda > 0).\n"
        "\n"
        "Problem options:\n"
        "      --mesh M             regular:L  Fu et al.'s Regular mesh, the cube [0,4]^3\n"
        "                                      of 3,072 tetrahedra refined L times (0-5;\n"
        "                                      L = 3: 274,625 nodes, 1,572,864 cells)\n"
        "                           blobs:L    the unit cube of 6*(4*2^L)^3 tetrahedra,\n"
        "                                      material 2 in three balls, 1 elsewhere (0-6)\n"
        "                           blobs2d:L  the same in the unit square, triangles\n"
        "                           FILE.msh   a Gmsh 2.2 or 4.1 ASCII file of triangles or\n"
        "                                      tetrahedra: physical groups of cells are\n"
        "                                      material ids, of faces boundary tags\n"
        "                           (default regular:1)\n"
        "      --sigma ID=S,...     sigma per material id (default: 1 for every\n"
        "                           material); a cell of an id not listed is an error\n"
        "      --lambda L           lambda >= 0 (default 1)\n"
        "      --rhs f1|ones        f1: b_i = (phi_i, 1), the load of f = 1 (default);\n"
        "                           ones: b_i = 1, as in Fu et al.'s solver experiments\n"
        "      --dirichlet TAG,...  u = 0 on the boundary faces of these tags (default:\n"
        "                           none, natural conditions everywhere)\n"
        "      --assembly W         device (default) or host (the serial reference)\n"
        "      --write-matrix FILE  write A as Matrix Market (coordinate, real general)\n"
        "      --write-rhs FILE     write b as Matrix Market (array)\n"
        "      --no-solve           stop after the assembly (and the files above)\n"
        "      --vtk FILE           write the mesh as .vtu with the material ids (cell\n"
        "                           data) and u (point data, when solved)\n"
        "Rows of A, b and u are the mesh's nodes in its own order: a generator's, or a\n"
        "Gmsh file's order with the nodes that no cell uses left out.\n"
        "\n"
        "Solver options (as clmg solve):\n" SOLVE_OPTIONS_HELP COMMON_OPTIONS_HELP "\n"
        "Output: the mesh (nodes, elements, materials), the assembly (where, the time of\n"
        "the first run, which compiles the kernels, and of a second one), then the\n"
        "report of clmg solve. --json prints one object with nodes, elements,\n"
        "nonzeros, assembly, assembly_s, assembly_first_s, assembler_setup_s, mesh_s\n"
        "and, when solved, the keys of clmg solve (iterations, relative_residual,\n"
        "true_relative_residual, converged, ...).\n"
        "\n"
        "Examples:\n"
        "  clmg helmholtz --mesh regular:3 --rhs ones --tol 1e-8\n"
        "  clmg helmholtz --mesh blobs:3 --sigma 1=1,2=100 --precision mixed\n"
        "  clmg helmholtz --mesh part.msh --sigma 1=1,2=10 --vtk u.vtu\n"
        "  clmg helmholtz --mesh regular:2 --no-solve --write-matrix A.mtx --write-rhs b.mtx\n"
        "\n"
        "Exit status: 0 done (converged, or assembled with --no-solve), 1 failure,\n"
        "2 bad usage.\n",
        out);
}

/* "regular:3", "blobs:2", "blobs2d:4" or a file name. */
static int parse_mesh(const char *command, const char *text, helmholtz_options *o) {
  static const struct {
    const char *prefix;
    mesh_source source;
    int max_level;
  } generators[] = {{"regular:", MESH_REGULAR, 5},
                    {"blobs:", MESH_BLOBS, HELMHOLTZ_MAX_GENERATOR_LEVEL},
                    {"blobs2d:", MESH_BLOBS_2D, HELMHOLTZ_MAX_GENERATOR_LEVEL}};
  o->mesh_spec = text;
  for (size_t k = 0; k < sizeof generators / sizeof generators[0]; k++) {
    size_t length = strlen(generators[k].prefix);
    if (strncmp(text, generators[k].prefix, length) == 0) {
      o->mesh = generators[k].source;
      return cli_parse_int(command, "--mesh", text + length, 0, generators[k].max_level, &o->level);
    }
  }
  o->mesh = MESH_GMSH;
  return 1;
}

/* "1=1,2=100": material id = sigma pairs. */
static int parse_sigma(const char *command, const char *text, helmholtz_options *o) {
  o->num_materials = 0;
  const char *p = text;
  while (*p) {
    if (o->num_materials == HELMHOLTZ_MAX_MATERIALS) {
      cli_usage_note(command, "--sigma lists more than %d materials", HELMHOLTZ_MAX_MATERIALS);
      return 0;
    }
    char *end = NULL;
    errno = 0;
    long id = strtol(p, &end, 10);
    if (end == p || *end != '=' || errno == ERANGE || id < 1 || id > INT32_MAX) {
      cli_usage_note(command, "--sigma needs ID=VALUE pairs with ids >= 1, not '%s'", text);
      return 0;
    }
    p = end + 1;
    double value = strtod(p, &end);
    if (end == p || (*end != ',' && *end != '\0') || !isfinite(value) || value < 0) {
      cli_usage_note(command, "--sigma: the value for id %ld must be a number >= 0, in '%s'", id,
                     text);
      return 0;
    }
    o->material_ids[o->num_materials] = (int32_t)id;
    o->sigma[o->num_materials++] = value;
    p = *end == ',' ? end + 1 : end;
  }
  if (o->num_materials == 0) {
    cli_usage_note(command, "--sigma needs at least one ID=VALUE pair");
    return 0;
  }
  return 1;
}

static int helmholtz_apply_option(const char *command, int option, const char *arg,
                                  helmholtz_options *o) {
  switch (option) {
  case OPTION_MESH:
    return parse_mesh(command, arg, o) ? 1 : -1;
  case OPTION_SIGMA:
    return parse_sigma(command, arg, o) ? 1 : -1;
  case OPTION_LAMBDA:
    return cli_parse_double(command, "--lambda", arg, 0.0, 1e300, &o->lambda) ? 1 : -1;
  case OPTION_RHS:
    if (strcmp(arg, "f1") == 0) {
      o->rhs = CLMG_RHS_SOURCE_ONE;
    } else if (strcmp(arg, "ones") == 0) {
      o->rhs = CLMG_RHS_ONES;
    } else {
      cli_usage_note(command, "unknown right-hand side '%s' (there are: f1, ones)", arg);
      return -1;
    }
    return 1;
  case OPTION_DIRICHLET:
    return cli_parse_tags(command, "--dirichlet", arg, o->dirichlet_tags,
                          HELMHOLTZ_MAX_DIRICHLET_TAGS, &o->num_dirichlet_tags)
               ? 1
               : -1;
  case OPTION_ASSEMBLY:
    if (strcmp(arg, "device") == 0 || strcmp(arg, "host") == 0) {
      o->host_assembly = strcmp(arg, "host") == 0;
      return 1;
    }
    cli_usage_note(command, "unknown assembly '%s' (there are: device, host)", arg);
    return -1;
  case OPTION_WRITE_MATRIX:
    o->write_matrix_path = arg;
    return 1;
  case OPTION_WRITE_RHS:
    o->write_rhs_path = arg;
    return 1;
  case OPTION_NO_SOLVE:
    o->no_solve = 1;
    return 1;
  case OPTION_VTK:
    o->vtk_path = arg;
    return 1;
  default:
    return 0;
  }
}

int helmholtz_parse_options(int argc, char **argv, const cli_options *defaults,
                            helmholtz_options *o) {
  static const struct option long_options[] = {
      COMMON_LONG_OPTIONS,
      SOLVE_LONG_OPTIONS,
      {"mesh", required_argument, NULL, OPTION_MESH},
      {"sigma", required_argument, NULL, OPTION_SIGMA},
      {"lambda", required_argument, NULL, OPTION_LAMBDA},
      {"rhs", required_argument, NULL, OPTION_RHS},
      {"dirichlet", required_argument, NULL, OPTION_DIRICHLET},
      {"assembly", required_argument, NULL, OPTION_ASSEMBLY},
      {"write-matrix", required_argument, NULL, OPTION_WRITE_MATRIX},
      {"write-rhs", required_argument, NULL, OPTION_WRITE_RHS},
      {"no-solve", no_argument, NULL, OPTION_NO_SOLVE},
      {"vtk", required_argument, NULL, OPTION_VTK},
      {NULL, 0, NULL, 0},
  };
  const char *command = argv[0];
  memset(o, 0, sizeof *o);
  solve_options_defaults(defaults, &o->solver);
  o->mesh_spec = "regular:1";
  o->mesh = MESH_REGULAR;
  o->level = 1;
  o->lambda = 1.0;
  o->rhs = CLMG_RHS_SOURCE_ONE;
  int option;
  while ((option = getopt_long(argc, argv, COMMON_SHORT_OPTIONS SOLVE_SHORT_OPTIONS, long_options,
                               NULL)) != -1) {
    int applied = cli_apply_common_option(command, option, &o->solver.common);
    if (applied == 0) {
      applied = solve_apply_option(command, option, optarg, &o->solver);
    }
    if (applied == 0) {
      applied = helmholtz_apply_option(command, option, optarg, o);
    }
    if (applied <= 0) {
      return cli_usage_error(command);
    }
  }
  if (o->solver.common.help) {
    return 0;
  }
  if (optind < argc) {
    return cli_usage(command, "unexpected argument '%s' (the mesh is given with --mesh)",
                     argv[optind]);
  }
  if (o->no_solve && o->solver.output_path) {
    return cli_usage(command, "-o writes u, which --no-solve does not compute (--write-matrix "
                              "and --write-rhs write A and b)");
  }
  return 0;
}

/* ---- the run ---- */

typedef struct helmholtz_run {
  const helmholtz_options *options;
  clmg_mesh mesh;
  clmg_p1_assembler *assembler, *float_assembler;
  double mesh_s, assembler_setup_s, assembly_first_s, assembly_s;
  size_t materials_present;
  clmg_p1_assembler_info info;
} helmholtz_run;

static const char *cell_name(const clmg_mesh *mesh) {
  return mesh->dim == 3 ? "tetrahedra" : "triangles";
}

static clmg_status make_mesh(const helmholtz_options *o, clmg_mesh *mesh, clmg_error *error) {
  switch (o->mesh) {
  case MESH_REGULAR:
    return clmg_mesh_regular_tetrahedra(o->level, mesh, error);
  case MESH_BLOBS:
    return clmg_mesh_blobs(3, o->level, mesh, error);
  case MESH_BLOBS_2D:
    return clmg_mesh_blobs(2, o->level, mesh, error);
  default:
    return clmg_mesh_read_gmsh(o->mesh_spec, mesh, error);
  }
}

/* The distinct material ids of the mesh (up to a few, for the report). */
static size_t count_materials(const clmg_mesh *mesh) {
  int32_t seen[HELMHOLTZ_MAX_MATERIALS];
  size_t count = 0;
  for (size_t c = 0; c < mesh->num_cells && count < HELMHOLTZ_MAX_MATERIALS; c++) {
    int32_t id = clmg_mesh_cell_material(mesh, c);
    size_t k = 0;
    while (k < count && seen[k] != id) {
      k++;
    }
    if (k == count) {
      seen[count++] = id;
    }
  }
  return count;
}

static void problem_of(const helmholtz_options *o, clmg_helmholtz_problem *problem) {
  clmg_helmholtz_problem_defaults(problem);
  if (o->num_materials) {
    problem->material_ids = o->material_ids;
    problem->sigma = o->sigma;
    problem->num_materials = o->num_materials;
  }
  problem->lambda = o->lambda;
  problem->rhs = o->rhs;
  problem->dirichlet_tags = o->num_dirichlet_tags ? o->dirichlet_tags : NULL;
  problem->num_dirichlet_tags = o->num_dirichlet_tags;
}

static void helmholtz_json_keys(json_writer *w, void *data) {
  const helmholtz_run *run = data;
  const helmholtz_options *o = run->options;
  json_string(w, "mesh", o->mesh_spec);
  json_integer(w, "dimension", run->mesh.dim);
  json_integer(w, "nodes", (long long)run->mesh.num_vertices);
  json_integer(w, "elements", (long long)run->mesh.num_cells);
  json_integer(w, "materials", (long long)run->materials_present);
  json_number(w, "lambda", o->lambda);
  json_string(w, "rhs_kind", o->rhs == CLMG_RHS_ONES ? "ones" : "f1");
  json_string(w, "assembly", o->host_assembly ? "host" : "device");
  json_number(w, "mesh_s", run->mesh_s);
  json_number(w, "assembler_setup_s", run->assembler_setup_s);
  json_number(w, "assembly_first_s", run->assembly_first_s);
  json_number(w, "assembly_s", run->assembly_s);
  if (!o->host_assembly) {
    json_string(w, "assembly_path", clmg_p1_path_name(run->info.path));
    json_integer(w, "patches", (long long)run->info.num_patches);
    json_integer(w, "patch_boundary_cells", (long long)run->info.boundary_cells);
  }
}

/* Assembles on the device: the matrix (and, for mixed precision, a float
 * copy from a second assembler) and b, each twice, the second run timed
 * warm. */
static clmg_status assemble_on_device(helmholtz_run *run, solve_resources *s,
                                      const clmg_helmholtz_problem *problem) {
  clmg_p1_assembler_options options;
  clmg_p1_assembler_options_defaults(&options);
  clmg_matrix_format format = CLMG_FORMAT_AUTO;
  clmg_matrix_format_parse(clmg_options_get(s->options, "format"), &format);
  options.matrix.format = format == CLMG_FORMAT_AUTO ? CLMG_FORMAT_CSR : format;
  int mixed = strcmp(clmg_options_get(s->options, "precision"), "mixed") == 0;
  clmg_dtype precision =
      strcmp(clmg_options_get(s->options, "precision"), "float") == 0 ? CLMG_FLOAT : CLMG_DOUBLE;
  options.matrix.precision = precision;
  double start = apputil_now();
  clmg_status status = clmg_p1_assembler_create(s->context, &run->mesh, &options, &run->assembler);
  if (status == CLMG_SUCCESS && mixed) {
    options.matrix.precision = CLMG_FLOAT;
    status = clmg_p1_assembler_create(s->context, &run->mesh, &options, &run->float_assembler);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(s->context, precision, s->n, &s->device_b);
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_finish(s->context);
  }
  run->assembler_setup_s = apputil_now() - start;
  for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; pass++) {
    start = apputil_now();
    status = clmg_p1_assemble_device(run->assembler, problem, &s->matrix, s->device_b);
    if (status == CLMG_SUCCESS && run->float_assembler) {
      status = clmg_p1_assemble_device(run->float_assembler, problem, &s->float_matrix, NULL);
    }
    if (status == CLMG_SUCCESS) {
      status = clmg_finish(s->context);
    }
    *(pass == 0 ? &run->assembly_first_s : &run->assembly_s) = apputil_now() - start;
  }
  if (status == CLMG_SUCCESS) {
    status = clmg_p1_assembler_get_info(run->assembler, &run->info);
  }
  return status;
}

/* A as host CSR for --write-matrix after a device assembly: the pattern
 * from the mesh, the values from the device. */
static clmg_status device_matrix_to_csr(helmholtz_run *run, clmg_csr *a, clmg_error *error) {
  clmg_status status = clmg_p1_pattern(&run->mesh, a, error);
  if (status != CLMG_SUCCESS) {
    return status;
  }
  status = clmg_vector_download_doubles(clmg_p1_assembler_values(run->assembler), a->val);
  if (status != CLMG_SUCCESS) {
    snprintf(error->message, sizeof error->message, "reading the assembled values back");
  }
  return status;
}

static int write_outputs(const char *command, helmholtz_run *run, solve_resources *s,
                         const double *u) {
  const helmholtz_options *o = run->options;
  clmg_error error = {{0}};
  clmg_status status = CLMG_SUCCESS;
  if (o->write_matrix_path) {
    clmg_csr device_a = {0};
    const clmg_csr *a = &s->a;
    if (!o->host_assembly) {
      status = device_matrix_to_csr(run, &device_a, &error);
      a = &device_a;
    }
    if (status == CLMG_SUCCESS) {
      status = clmg_csr_write_matrix_market(o->write_matrix_path, a, &error);
    }
    clmg_csr_free(&device_a);
    if (status != CLMG_SUCCESS) {
      cli_failure(command, status, "cannot write the matrix: %s", error.message);
      return 0;
    }
  }
  if (o->write_rhs_path) {
    status = s->b ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
    if (status == CLMG_SUCCESS && !o->host_assembly) {
      status = clmg_vector_download_doubles(s->device_b, s->b);
    }
    if (status == CLMG_SUCCESS) {
      status = clmg_write_matrix_market_vector(o->write_rhs_path, s->b, s->n, &error);
    }
    if (status != CLMG_SUCCESS) {
      cli_failure(command, status, "cannot write the right-hand side: %s", error.message);
      return 0;
    }
  }
  if (o->vtk_path) {
    clmg_mesh_field field = {"u", u};
    status = clmg_mesh_write_vtu(o->vtk_path, &run->mesh, 1, u ? &field : NULL, u ? 1 : 0, &error);
    if (status != CLMG_SUCCESS) {
      cli_failure(command, status, "cannot write the .vtu: %s", error.message);
      return 0;
    }
  }
  return 1;
}

static void print_assembly(const helmholtz_run *run, size_t nonzeros) {
  const helmholtz_options *o = run->options;
  printf("%-18s %s: %zu nodes, %zu %s, %zu material%s\n", "mesh", o->mesh_spec,
         run->mesh.num_vertices, run->mesh.num_cells, cell_name(&run->mesh), run->materials_present,
         run->materials_present == 1 ? "" : "s");
  printf("%-18s lambda %g, b %s%s\n", "problem", o->lambda,
         o->rhs == CLMG_RHS_ONES ? "= 1" : "= (phi_i, 1)",
         o->num_dirichlet_tags ? ", u = 0 on the --dirichlet tags" : "");
  if (o->host_assembly) {
    printf("%-18s host (serial reference), %zu nonzeros, %.4f s\n", "assembly", nonzeros,
           run->assembly_s);
  } else {
    char path[96];
    if (run->info.path == CLMG_P1_PATH_PATCH)
      snprintf(path, sizeof path,
               "patch path: %zu patches, %zu of the cells cross a patch boundary",
               run->info.num_patches, run->info.boundary_cells);
    else
      snprintf(path, sizeof path, "%s path", clmg_p1_path_name(run->info.path));
    printf("%-18s device, %zu nonzeros, %.4f s (first run, with kernel compilation: %.4f s; "
           "setup %.4f s; %s)\n",
           "assembly", nonzeros, run->assembly_s, run->assembly_first_s, run->assembler_setup_s,
           path);
  }
  fflush(stdout);
}

int run_helmholtz(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  helmholtz_options o;
  int code = helmholtz_parse_options(argc, argv, defaults, &o);
  if (code != 0) {
    return code;
  }
  if (o.solver.common.help) {
    print_helmholtz_usage(stdout);
    return EXIT_SUCCESS;
  }
  cli_progress_begin(o.solver.quiet);
  helmholtz_run run = {0};
  run.options = &o;
  solve_resources s = {0};
  solve_report report = {0};
  clmg_error error = {{0}};
  code = EXIT_LIBRARY_FAILURE;

  s.context = cli_open_context(command, &o.solver.common, o.solver.quiet);
  if (!s.context) {
    goto done;
  }
  if (!cli_make_options(command, &o.solver.settings, &s.options) ||
      !cli_choose_precision(command, s.options, s.context, o.solver.quiet)) {
    goto done;
  }
  /* a generated mesh's size is known from its level: what it will take is
   * checked before it is made (1,840 bytes per node, measured on pocl with
   * the Regular mesh: mesh, matrix, solver) */
  if (o.mesh != MESH_GMSH && o.level > 0) {
    helmholtz_options coarse = o;
    coarse.level = 0;
    clmg_mesh level0 = {0};
    clmg_status made = make_mesh(&coarse, &level0, &error);
    if (made == CLMG_SUCCESS) {
      char what[160];
      snprintf(what, sizeof what, "clmg helmholtz --mesh %s", o.mesh_spec);
      /* nodes per cell: 1 / 5.7 for the tetrahedra, 1 / 2 for triangles */
      made = apputil_check_refined_size(s.context, &level0, o.level,
                                        level0.dim == 3 ? 1 / 5.7 : 0.5, 1840, 15, what);
      if (made != CLMG_SUCCESS) {
        cli_report(command, s.context, made, "checking the memory the mesh will take");
        clmg_mesh_free(&level0);
        goto done;
      }
    }
    clmg_mesh_free(&level0);
  }
  double start = apputil_now();
  clmg_status status = make_mesh(&o, &run.mesh, &error);
  if (status == CLMG_SUCCESS && run.mesh.cell_type != CLMG_CELL_SIMPLEX) {
    status = CLMG_ERROR_INVALID_ARGUMENT;
    snprintf(error.message, sizeof error.message,
             "%s has %s; clmg helmholtz needs triangles or tetrahedra (clmg poisson solves on "
             "quadrilaterals and hexahedra)",
             o.mesh_spec, run.mesh.dim == 3 ? "hexahedra" : "quadrilaterals");
  }
  if (status != CLMG_SUCCESS) {
    cli_failure(command, status, "cannot make the mesh: %s", error.message);
    goto done;
  }
  run.mesh_s = apputil_now() - start;
  if (o.num_dirichlet_tags > 0 && !cli_check_tags(command, "--dirichlet", o.mesh_spec, &run.mesh,
                                                  o.dirichlet_tags, o.num_dirichlet_tags)) {
    code = cli_usage_error(command);
    goto done;
  }
  run.materials_present = count_materials(&run.mesh);
  cli_progress("mesh %s: %zu nodes, %zu %s", o.mesh_spec, run.mesh.num_vertices, run.mesh.num_cells,
               cell_name(&run.mesh));
  s.n = run.mesh.num_vertices;
  s.rhs_description = o.rhs == CLMG_RHS_ONES ? "b_i = 1" : "b_i = (phi_i, 1)";
  s.b = malloc((s.n ? s.n : 1) * sizeof *s.b);
  s.x = calloc(s.n ? s.n : 1, sizeof *s.x);
  if (!s.b || !s.x) {
    cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for b and u (%zu nodes)",
                s.n);
    goto done;
  }

  clmg_helmholtz_problem problem;
  problem_of(&o, &problem);
  if (o.host_assembly) {
    start = apputil_now();
    status = clmg_p1_assemble_host(&run.mesh, &problem, &s.a, s.b, &error);
    run.assembly_s = run.assembly_first_s = apputil_now() - start;
    if (status != CLMG_SUCCESS) {
      cli_failure(command, status, "assembly failed: %s", error.message);
      goto done;
    }
  } else {
    status = assemble_on_device(&run, &s, &problem);
    if (status != CLMG_SUCCESS) {
      cli_report(command, s.context, status, "assembling on the device");
      goto done;
    }
  }
  size_t nonzeros = o.host_assembly ? clmg_csr_nnz(&s.a) : clmg_matrix_nnz(s.matrix);
  if (!o.solver.common.json) {
    print_assembly(&run, nonzeros);
  }

  if (o.no_solve) {
    if (!write_outputs(command, &run, &s, NULL)) {
      goto done;
    }
    if (o.solver.common.json) {
      json_writer w;
      json_result_begin(&w, stdout, "helmholtz");
      json_string(&w, "status", clmg_status_string(CLMG_SUCCESS));
      json_string(&w, "message", "");
      helmholtz_json_keys(&w, &run);
      json_integer(&w, "nonzeros", (long long)nonzeros);
      json_device(&w, clmg_context_device(s.context));
      json_object_end(&w);
      json_end(&w);
      cli_json_done();
    }
    code = EXIT_SUCCESS;
    goto done;
  }

  report.device = clmg_context_device(s.context);
  report.rhs_description = s.rhs_description;
  report.read_label = "mesh and assembly";
  report.read_s = run.mesh_s + run.assembler_setup_s + run.assembly_first_s;
  report.extra_json = helmholtz_json_keys;
  report.extra_data = &run;
  /* files the solve does not write come first, so a failure is reported
   * before the solve; u follows in the .vtu after it */
  const char *vtk_path = o.vtk_path;
  o.vtk_path = NULL;
  if (!write_outputs(command, &run, &s, NULL)) {
    goto done;
  }
  const char *precond = clmg_options_get(s.options, "precond");
  if (strcmp(precond, "none") != 0 && strcmp(precond, "jacobi") != 0 && !o.host_assembly) {
    /* the AMG hierarchy is built from the matrix on the host */
    if (device_matrix_to_csr(&run, &s.a, &error) != CLMG_SUCCESS) {
      cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT,
                  "cannot bring the matrix to the host for precond=%s: %s", precond, error.message);
      goto done;
    }
  }
  code = solve_on_device(command, &o.solver, &s, &report, 0);
  o.vtk_path = vtk_path;
  o.write_matrix_path = o.write_rhs_path = NULL;
  if (vtk_path && (code == EXIT_SUCCESS || report.status == CLMG_ERROR_NOT_CONVERGED) &&
      !write_outputs(command, &run, &s, s.x)) {
    code = EXIT_LIBRARY_FAILURE;
  }

done:
  clmg_p1_assembler_destroy(run.float_assembler);
  clmg_p1_assembler_destroy(run.assembler);
  solve_release(&s);
  clmg_mesh_free(&run.mesh);
  return code;
}
