/* clmg_perf_assembly: device P1 Helmholtz assembly (clmg/assembly.h, Fu et
 * al. 2014) against the serial host reference.
 *
 * For each mesh (Fu et al.'s Regular levels, the two-material blobs, an
 * irregular distorted box or a Gmsh file), vertex order (the generator's,
 * Morton), precision and path (patch, gather, rows): the assembler's setup, the
 * first assembly (kernel build included, and shown on its own), the warm
 * assembly (best of trials), the serial host assembly, the speed-up, the
 * achieved bandwidth under a minimal-traffic model and its ratio to the
 * copy bandwidth measured in the same run, and the fraction of cells that
 * cross a patch boundary. Every configuration is checked once (y = A x and
 * b against the host) before it is timed: a wrong result prints FAIL and
 * makes the exit status 1. Table on stdout; --output FILE writes the same as
 * JSON, --json prints it instead of the table. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "clmg.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_assembly"
#define MAX_MESHES 16

/* ---- settings ---- */

typedef struct benchmark_settings {
  const char *device;
  perf_output output;
  const char *mesh_file;
  int regular_min, regular_max, regular_given;
  int blobs_level;
  int irregular_n;
  int run_regular, run_blobs, run_irregular;
  int orders[2]; /* native, morton */
  int precisions[2];
  int paths[3]; /* patch, gather, rows */
  int host_trials;
  int no_cache;
  int quick;
  perf_timing timing;
} benchmark_settings;

static void print_usage(FILE *out) {
  fprintf(
      out,
      "usage: clmg_perf_assembly [options]\n"
      "Times the device P1 Helmholtz assembly (lambda 1, b = (phi_i, 1), sigma 1, 10, 1, ... on\n"
      "the mesh's material ids in increasing order) against the serial host reference.\n"
      "  --device DEV          device string (nvidia, pocl, gpu, cpu, P:D, name); default:\n"
      "                        $CLMG_DEVICE, else the first GPU, else the first CPU\n");
  perf_output_help(out, 24);
  fprintf(
      out,
      "  --regular-levels A:B  Fu et al.'s Regular mesh (clmg_mesh_regular_tetrahedra), levels\n"
      "                        A to B (0..5; level 3: 274,625 vertices, 1,572,864 tetrahedra);\n"
      "                        default 1:3 on a GPU, 1:2 on other devices\n"
      "  --blobs-level L       the two-material mesh clmg_mesh_blobs(3, L) (default 3: 196,608\n"
      "                        tetrahedra)\n"
      "  --irregular-n N       the irregular mesh: clmg_mesh_box_simplices(3, N) with its\n"
      "                        interior vertices moved by up to 0.2 cell widths (default 32:\n"
      "                        196,608 tetrahedra)\n"
      "  --mesh FILE.msh       a Gmsh file instead of the generated irregular mesh\n"
      "  --meshes LIST         which of regular,blobs,irregular to run (default all three)\n"
      "  --orders LIST         native (the generator's numbering) and/or morton\n"
      "                        (clmg_mesh_reorder_vertices, Z-order); default native,morton\n"
      "  --precisions LIST     double and/or float (default double,float)\n"
      "  --paths LIST          patch, gather and/or rows (default all three); the patch path\n"
      "                        in double needs cl_khr_int64_base_atomics, else it is skipped;\n"
      "                        rows: a work-item per row sums its cells (no slots, no atomics)\n"
      "  --trials T            warm timed batches, the fastest counts (default 3)\n"
      "  --min-time S          seconds each warm batch lasts at least (default 0.2)\n"
      "  --reps R              exactly R assemblies per warm batch (default: adaptive)\n"
      "  --host-trials T       host assemblies, the fastest counts (default 3)\n"
      "  --no-cache            compile the kernels from source (no program-binary cache),\n"
      "                        so that the build time shows in the first configuration\n"
      "                        that uses each kernel\n"
      "  --quick               tiny sizes for a smoke test: Regular 1:1, blobs level 1,\n"
      "                        irregular N 8, --min-time 0.01, 1 trial, 1 host trial\n"
      "  --help                this text\n"
      "Columns: setup = clmg_p1_assembler_create (pattern, patches, slot lists, uploads);\n"
      "build = seconds of clBuildProgram from source during the first assembly, from the\n"
      "program callback (0: loaded from the binary cache or built by an earlier\n"
      "configuration; drivers that specialise kernels at their first launch, as pocl does,\n"
      "spend that in first, not here); first = the first clmg_p1_assemble_device (makes\n"
      "the matrix; build included) up to clmg_finish; warm = one assembly into\n"
      "the existing matrix (values updated in place), ended by clmg_finish, best of the\n"
      "trials; host = clmg_p1_assemble_host into a ready pattern, serial, best of\n"
      "--host-trials; x = host / warm; bnd%% = cells with a vertex outside their patch (every\n"
      "cell goes through slots on the gather path: 100; rows has no patches: 0).\n"
      "Byte model (the least any assembly must move): per cell its d+1 vertex indices (4 B\n"
      "each) and, with several materials, its material index (4 B); per vertex its d\n"
      "coordinates once (in the precision); per CSR entry its column index read (4 B) and its\n"
      "value written (precision); per row its offset read (8 B) and its b entry written\n"
      "(precision). Slots, gathers and the copy into the matrix come on top; GB/s = model\n"
      "bytes / warm time, %%copy = that over the copy bandwidth measured in this run.\n");
}

/* Parses "A:B" (or "A") levels within 0..5. */
static int parse_levels(const char *value, int *low, int *high) {
  char *end = NULL;
  long a = strtol(value, &end, 10), b = a;
  if (end == value)
    return 0;
  if (*end == ':') {
    const char *second = end + 1;
    b = strtol(second, &end, 10);
    if (end == second)
      return 0;
  }
  if (*end != '\0' || a < 0 || b > 5 || a > b)
    return 0;
  *low = (int)a;
  *high = (int)b;
  return 1;
}

/* Parses a comma list of names into flags; returns 0 on an unknown or
 * missing name. */
static int parse_list(const char *value, const char *const *names, int *flags, size_t count) {
  for (size_t k = 0; k < count; k++)
    flags[k] = 0;
  const char *p = value;
  int any = 0;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t length = comma ? (size_t)(comma - p) : strlen(p);
    int found = 0;
    for (size_t k = 0; k < count; k++)
      if (strlen(names[k]) == length && strncmp(p, names[k], length) == 0) {
        flags[k] = 1;
        found = 1;
      }
    if (!found)
      return 0;
    any = 1;
    p += length;
    if (*p == ',')
      p++;
  }
  return any;
}

static int parse_int(const char *value, int low, int high, int *out) {
  char *end = NULL;
  long v = strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < low || v > high)
    return 0;
  *out = (int)v;
  return 1;
}

/* 0: bad command line (reason printed); 1: run; 2: --help. */
static int parse_arguments(int argc, char **argv, benchmark_settings *s) {
  memset(s, 0, sizeof *s);
  s->regular_min = 1;
  s->regular_max = 3;
  s->blobs_level = 3;
  s->irregular_n = 32;
  s->run_regular = s->run_blobs = s->run_irregular = 1;
  s->orders[0] = s->orders[1] = 1;
  s->precisions[0] = s->precisions[1] = 1;
  s->paths[0] = s->paths[1] = s->paths[2] = 1;
  s->host_trials = 3;
  s->timing.min_time_s = 0.2;
  s->timing.trials = 3;
  s->timing.max_adaptive_reps = 100000;
  int blobs_given = 0, irregular_given = 0, min_time_given = 0, trials_given = 0,
      host_trials_given = 0;
  static const char *const value_options[] = {
      "--device", "--output",   "--regular-levels", "--blobs-level", "--irregular-n",
      "--mesh",   "--meshes",   "--orders",         "--precisions",  "--paths",
      "--trials", "--min-time", "--reps",           "--host-trials", NULL};
  for (int i = 1; i < argc; ++i) {
    /* the two flags take no value */
    if (strcmp(argv[i], "--no-cache") == 0) {
      s->no_cache = 1;
      continue;
    }
    if (strcmp(argv[i], "--quick") == 0) {
      s->quick = 1;
      continue;
    }
    char name[32];
    const char *value = NULL;
    int read = perf_next_option(PROGRAM, argc, argv, &i, value_options, name, &value);
    if (read < 0) {
      print_usage(stdout);
      return 2;
    }
    if (read == 0)
      return 0;
    if (strcmp(name, "--device") == 0) {
      s->device = value;
    } else if (perf_parse_output_option(name, value, &s->output) == 1) {
    } else if (strcmp(name, "--mesh") == 0) {
      s->mesh_file = value;
    } else if (strcmp(name, "--regular-levels") == 0) {
      if (!parse_levels(value, &s->regular_min, &s->regular_max)) {
        fprintf(stderr, PROGRAM ": --regular-levels wants A:B with 0 <= A <= B <= 5, not %s\n",
                value);
        return 0;
      }
      s->regular_given = 1;
    } else if (strcmp(name, "--blobs-level") == 0) {
      if (!parse_int(value, 0, 6, &s->blobs_level)) {
        fprintf(stderr, PROGRAM ": --blobs-level wants 0 to 6, not %s\n", value);
        return 0;
      }
      blobs_given = 1;
    } else if (strcmp(name, "--irregular-n") == 0) {
      if (!parse_int(value, 1, 512, &s->irregular_n)) {
        fprintf(stderr, PROGRAM ": --irregular-n wants 1 to 512, not %s\n", value);
        return 0;
      }
      irregular_given = 1;
    } else if (strcmp(name, "--meshes") == 0) {
      static const char *const names[] = {"regular", "blobs", "irregular"};
      int flags[3];
      if (!parse_list(value, names, flags, 3)) {
        fprintf(stderr, PROGRAM ": --meshes wants a list of regular, blobs, irregular, not %s\n",
                value);
        return 0;
      }
      s->run_regular = flags[0];
      s->run_blobs = flags[1];
      s->run_irregular = flags[2];
    } else if (strcmp(name, "--orders") == 0) {
      static const char *const names[] = {"native", "morton"};
      if (!parse_list(value, names, s->orders, 2)) {
        fprintf(stderr, PROGRAM ": --orders wants a list of native, morton, not %s\n", value);
        return 0;
      }
    } else if (strcmp(name, "--precisions") == 0) {
      static const char *const names[] = {"double", "float"};
      if (!parse_list(value, names, s->precisions, 2)) {
        fprintf(stderr, PROGRAM ": --precisions wants a list of double, float, not %s\n", value);
        return 0;
      }
    } else if (strcmp(name, "--paths") == 0) {
      static const char *const names[] = {"patch", "gather", "rows"};
      if (!parse_list(value, names, s->paths, 3)) {
        fprintf(stderr, PROGRAM ": --paths wants a list of patch, gather, rows, not %s\n", value);
        return 0;
      }
    } else if (strcmp(name, "--host-trials") == 0) {
      if (!parse_int(value, 1, 100, &s->host_trials)) {
        fprintf(stderr, PROGRAM ": --host-trials wants 1 to 100, not %s\n", value);
        return 0;
      }
      host_trials_given = 1;
    } else {
      int timing = perf_parse_timing_option(PROGRAM, name, value, &s->timing);
      if (timing == 0)
        return 0;
      min_time_given |= strcmp(name, "--min-time") == 0;
      trials_given |= strcmp(name, "--trials") == 0;
    }
  }
  if (s->quick) {
    if (!s->regular_given)
      s->regular_min = s->regular_max = 1;
    if (!blobs_given)
      s->blobs_level = 1;
    if (!irregular_given)
      s->irregular_n = 8;
    if (!min_time_given)
      s->timing.min_time_s = 0.01;
    if (!trials_given)
      s->timing.trials = 1;
    if (!host_trials_given)
      s->host_trials = 1;
  }
  return 1;
}

/* ---- meshes ---- */

typedef struct bench_mesh {
  char name[64];
  const char *order; /* "native" or "morton" */
  clmg_mesh mesh;
  clmg_csr host; /* the host assembly (pattern and values) */
  double *b_host;
  double host_seconds;   /* best serial host assembly */
  size_t num_materials;  /* distinct material ids */
  int32_t *material_ids; /* NULL: one material, sigma 1 */
  double *sigma;
} bench_mesh;

static int compare_ids(const void *left, const void *right) {
  int32_t a = *(const int32_t *)left, b = *(const int32_t *)right;
  return (a > b) - (a < b);
}

/* The mesh's distinct material ids (sorted), sigma 1, 10, 1, 10, ... in
 * that order; 0 when out of memory. */
static int find_materials(bench_mesh *m) {
  const clmg_mesh *mesh = &m->mesh;
  m->num_materials = 1;
  if (!mesh->cell_material || mesh->num_cells == 0)
    return 1;
  m->material_ids = malloc(mesh->num_cells * sizeof *m->material_ids);
  if (!m->material_ids)
    return 0;
  memcpy(m->material_ids, mesh->cell_material, mesh->num_cells * sizeof *m->material_ids);
  qsort(m->material_ids, mesh->num_cells, sizeof *m->material_ids, compare_ids);
  size_t distinct = 0;
  for (size_t k = 0; k < mesh->num_cells; k++)
    if (k == 0 || m->material_ids[k] != m->material_ids[distinct - 1])
      m->material_ids[distinct++] = m->material_ids[k];
  m->num_materials = distinct;
  m->sigma = malloc(distinct * sizeof *m->sigma);
  if (!m->sigma)
    return 0;
  for (size_t k = 0; k < distinct; k++)
    m->sigma[k] = k % 2 ? 10.0 : 1.0;
  return 1;
}

static void problem_for(const bench_mesh *m, clmg_helmholtz_problem *problem) {
  clmg_helmholtz_problem_defaults(problem);
  problem->lambda = 1.0;
  if (m->sigma) {
    problem->material_ids = m->material_ids;
    problem->sigma = m->sigma;
    problem->num_materials = m->num_materials;
  }
}

/* Host pattern, reference assembly (timed, best of trials). */
static int host_reference(bench_mesh *m, int trials) {
  clmg_error error;
  clmg_helmholtz_problem problem;
  problem_for(m, &problem);
  if (clmg_p1_pattern(&m->mesh, &m->host, &error) != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": %s: pattern: %s\n", m->name, error.message);
    return 0;
  }
  m->b_host = malloc(m->mesh.num_vertices * sizeof *m->b_host);
  if (!m->b_host) {
    fprintf(stderr, PROGRAM ": out of host memory\n");
    return 0;
  }
  m->host_seconds = INFINITY;
  for (int t = 0; t < trials; t++) {
    double start = apputil_now();
    if (clmg_p1_assemble_host(&m->mesh, &problem, &m->host, m->b_host, &error) != CLMG_SUCCESS) {
      fprintf(stderr, PROGRAM ": %s: host assembly: %s\n", m->name, error.message);
      return 0;
    }
    m->host_seconds = fmin(m->host_seconds, apputil_now() - start);
  }
  return 1;
}

static void free_bench_mesh(bench_mesh *m) {
  clmg_mesh_free(&m->mesh);
  clmg_csr_free(&m->host);
  free(m->b_host);
  free(m->material_ids);
  free(m->sigma);
  memset(m, 0, sizeof *m);
}

/* Adds the mesh in its native order and, when asked, Morton-ordered. Takes
 * `mesh`. */
static int add_mesh(const benchmark_settings *s, bench_mesh *list, size_t *count, clmg_mesh *mesh,
                    const char *name) {
  clmg_error error;
  for (int order = 0; order < 2; order++) {
    if (!s->orders[order])
      continue;
    if (*count >= MAX_MESHES) {
      fprintf(stderr, PROGRAM ": too many meshes\n");
      clmg_mesh_free(mesh);
      return 0;
    }
    bench_mesh *m = &list[(*count)++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->order = order ? "morton" : "native";
    if (clmg_mesh_copy(mesh, &m->mesh, &error) != CLMG_SUCCESS ||
        (order && clmg_mesh_reorder_vertices(&m->mesh, CLMG_VERTEX_ORDER_MORTON, NULL, &error) !=
                      CLMG_SUCCESS)) {
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
      clmg_mesh_free(mesh);
      return 0;
    }
    if (!find_materials(m)) {
      fprintf(stderr, PROGRAM ": out of host memory\n");
      clmg_mesh_free(mesh);
      return 0;
    }
    if (!host_reference(m, s->host_trials)) {
      clmg_mesh_free(mesh);
      return 0;
    }
  }
  clmg_mesh_free(mesh);
  return 1;
}

/* ---- results ---- */

typedef struct result_row {
  char mesh[64];
  const char *order;
  clmg_dtype precision;
  const char *path;
  size_t vertices, cells, nnz, patches;
  double boundary_fraction;
  double setup_s, build_s, first_s, warm_s, host_s;
  long reps;
  double bytes, gb_per_s, ratio_to_copy;
  double matrix_error, b_error;
} result_row;

typedef struct benchmark_results {
  clmg_device_info device;
  double copy_gb_per_s;
  result_row *rows;
  size_t row_count, row_capacity;
  int failures;
  char skipped[16][200];
  size_t skipped_count;
} benchmark_results;

static void note_skipped(benchmark_results *r, const char *what, const char *why) {
  if (r->skipped_count < 16)
    snprintf(r->skipped[r->skipped_count++], sizeof r->skipped[0], "%s: %s", what, why);
}

/* Seconds of kernel compilation reported by the program callback. */
static double compile_seconds;

static void count_compiles(const clmg_program_event *event, void *data) {
  (void)data;
  if (event->kind == CLMG_PROGRAM_COMPILE_DONE)
    compile_seconds += event->seconds;
}

static void print_table_header(void) {
  printf("%-16s %-6s %-6s %-6s %9s %9s %5s %9s %7s %9s %9s %9s %6s %8s %7s %6s\n", "mesh", "order",
         "prec", "path", "cells", "nnz", "bnd%", "setup ms", "build s", "first ms", "warm ms",
         "host ms", "x", "MB", "GB/s", "%copy");
}

static void print_row(const result_row *row) {
  printf("%-16s %-6s %-6s %-6s %9zu %9zu %5.1f %9.2f %7.2f %9.2f %9.3f %9.2f %6.2f %8.2f %7.2f "
         "%6.1f\n",
         row->mesh, row->order, clmg_dtype_name(row->precision), row->path, row->cells, row->nnz,
         100.0 * row->boundary_fraction, row->setup_s * 1e3, row->build_s, row->first_s * 1e3,
         row->warm_s * 1e3, row->host_s * 1e3, row->host_s / row->warm_s, row->bytes / 1e6,
         row->gb_per_s, 100.0 * row->ratio_to_copy);
  fflush(stdout);
}

/* The minimal traffic of one assembly (print_usage states the model). */
static double model_bytes(const bench_mesh *m, size_t real_size) {
  const clmg_mesh *mesh = &m->mesh;
  double corners = (double)mesh->dim + 1, n = (double)mesh->num_vertices;
  double cells = (double)mesh->num_cells, nnz = (double)clmg_csr_nnz(&m->host);
  double per_cell = 4.0 * corners + (m->num_materials > 1 ? 4.0 : 0.0);
  return cells * per_cell + n * (double)mesh->dim * (double)real_size +
         nnz * (4.0 + (double)real_size) + (n + 1) * 8.0 + n * (double)real_size;
}

typedef struct timed_assembly {
  clmg_p1_assembler *assembler;
  const clmg_helmholtz_problem *problem;
  clmg_matrix **matrix;
  clmg_vector *b;
} timed_assembly;

static clmg_status run_assembly(const void *operands, long iteration) {
  (void)iteration;
  const timed_assembly *t = operands;
  return clmg_p1_assemble_device(t->assembler, t->problem, t->matrix, t->b);
}

/* Relative errors of y = A x (against sum |a_ij x_j|) and of b, device
 * against host. */
static int check_result(clmg_context *context, const bench_mesh *m, const clmg_matrix *matrix,
                        const clmg_vector *b, clmg_dtype precision, double *matrix_error,
                        double *b_error) {
  size_t n = m->mesh.num_vertices;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *y_host = malloc(n * sizeof *y);
  double *b_device = malloc(n * sizeof *b_device);
  clmg_vector *xd = NULL, *yd = NULL;
  int ok = x && y && y_host && b_device;
  if (!ok)
    fprintf(stderr, PROGRAM ": out of host memory\n");
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; ok && i < n; i++) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
  clmg_status status = CLMG_SUCCESS;
  if (ok) {
    status = clmg_vector_create(context, precision, n, &xd);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, precision, n, &yd);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_upload_doubles(xd, x);
    if (status == CLMG_SUCCESS) /* the host multiplies the x the device sees */
      status = clmg_vector_download_doubles(xd, x);
    if (status == CLMG_SUCCESS)
      status = clmg_spmv(1.0, matrix, xd, 0.0, yd);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_download_doubles(yd, y);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_download_doubles(b, b_device);
    if (status != CLMG_SUCCESS) {
      apputil_report(context, status, "checking the assembly");
      ok = 0;
    }
  }
  if (ok) {
    const clmg_csr *a = &m->host;
    double scale = 0, err = 0, b_scale = 0, b_err = 0;
    for (size_t i = 0; i < n; i++) {
      double sum = 0, magnitude = 0;
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
        sum += a->val[k] * x[a->col[k]];
        magnitude += fabs(a->val[k] * x[a->col[k]]);
      }
      scale = fmax(scale, magnitude);
      err = fmax(err, fabs(y[i] - sum));
      b_scale = fmax(b_scale, fabs(m->b_host[i]));
      b_err = fmax(b_err, fabs(b_device[i] - m->b_host[i]));
    }
    *matrix_error = scale > 0 ? err / scale : err;
    *b_error = b_scale > 0 ? b_err / b_scale : b_err;
    if (!(*matrix_error <= (precision == CLMG_DOUBLE ? 1e-12 : 1e-5)) ||
        !(*b_error <= (precision == CLMG_DOUBLE ? 1e-12 : 1e-5)))
      ok = 0;
  }
  clmg_vector_destroy(xd);
  clmg_vector_destroy(yd);
  free(x);
  free(y);
  free(y_host);
  free(b_device);
  return ok;
}

static void run_configuration(clmg_context *context, const benchmark_settings *s,
                              const bench_mesh *m, clmg_dtype precision, clmg_p1_path path,
                              benchmark_results *results) {
  const char *path_name = clmg_p1_path_name(path);
  clmg_p1_assembler_options options;
  clmg_p1_assembler_options_defaults(&options);
  options.matrix.precision = precision;
  options.path = path;
  clmg_helmholtz_problem problem;
  problem_for(m, &problem);
  result_row row;
  memset(&row, 0, sizeof row);
  snprintf(row.mesh, sizeof row.mesh, "%s", m->name);
  row.order = m->order;
  row.precision = precision;
  row.path = path_name;
  row.vertices = m->mesh.num_vertices;
  row.cells = m->mesh.num_cells;
  row.nnz = clmg_csr_nnz(&m->host);
  row.host_s = m->host_seconds;

  clmg_p1_assembler *assembler = NULL;
  clmg_matrix *matrix = NULL;
  clmg_vector *b = NULL;
  double start = apputil_now();
  clmg_status status = clmg_p1_assembler_create(context, &m->mesh, &options, &assembler);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  row.setup_s = apputil_now() - start;
  if (status == CLMG_ERROR_UNSUPPORTED) {
    char what[128];
    snprintf(what, sizeof what, "%s %s %s %s", m->name, m->order, clmg_dtype_name(precision),
             path_name);
    note_skipped(results, what, clmg_context_message(context));
    printf("%-16s %-6s %-6s %-6s skipped: %s\n", m->name, m->order, clmg_dtype_name(precision),
           path_name, clmg_context_message(context));
    return;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, m->mesh.num_vertices, &b);
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "creating the assembler");
    results->failures++;
    goto done;
  }
  clmg_p1_assembler_info info;
  clmg_p1_assembler_get_info(assembler, &info);
  row.patches = info.num_patches;
  row.boundary_fraction = info.path == CLMG_P1_PATH_GATHER ? 1.0
                          : info.path == CLMG_P1_PATH_ROWS ? 0.0
                          : m->mesh.num_cells > 0
                              ? (double)info.boundary_cells / (double)m->mesh.num_cells
                              : 0.0;

  compile_seconds = 0;
  start = apputil_now();
  status = clmg_p1_assemble_device(assembler, &problem, &matrix, b);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  row.first_s = apputil_now() - start;
  row.build_s = compile_seconds;
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "first assembly");
    results->failures++;
    goto done;
  }
  if (!check_result(context, m, matrix, b, precision, &row.matrix_error, &row.b_error)) {
    printf("%-16s %-6s %-6s %-6s FAIL: |A x - A_host x| / |A||x| = %.3g, |b - b_host| / |b| = "
           "%.3g (tolerance %g)\n",
           m->name, m->order, clmg_dtype_name(precision), path_name, row.matrix_error, row.b_error,
           precision == CLMG_DOUBLE ? 1e-12 : 1e-5);
    results->failures++;
    goto done;
  }
  timed_assembly timed = {assembler, &problem, &matrix, b};
  status = perf_time_adaptive(context, &s->timing, run_assembly, &timed, &row.reps, &row.warm_s);
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "warm assembly");
    results->failures++;
    goto done;
  }
  row.bytes = model_bytes(m, clmg_dtype_size(precision));
  row.gb_per_s = row.bytes / row.warm_s / 1e9;
  row.ratio_to_copy = results->copy_gb_per_s > 0 ? row.gb_per_s / results->copy_gb_per_s : NAN;
  print_row(&row);
  if (!perf_grow_array((void **)&results->rows, &results->row_capacity, results->row_count,
                       sizeof *results->rows)) {
    fprintf(stderr, PROGRAM ": out of host memory for results\n");
    results->failures++;
  } else {
    results->rows[results->row_count++] = row;
  }
done:
  clmg_matrix_destroy(matrix);
  clmg_vector_destroy(b);
  clmg_p1_assembler_destroy(assembler);
}

/* ---- JSON ---- */

static int write_json(const char *path, const benchmark_settings *s,
                      const benchmark_results *results) {
  clmg_output_file *file;
  FILE *out = perf_json_open(PROGRAM, path, &file);
  if (out == NULL)
    return 0;
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "assembly");
  json_string(&w, "clmg_version", clmg_version_string());
  json_device(&w, &results->device);
  json_number(&w, "copy_gb_per_s", results->copy_gb_per_s);
  json_object_begin(&w, "settings");
  json_integer(&w, "regular_min_level", s->regular_min);
  json_integer(&w, "regular_max_level", s->regular_max);
  json_integer(&w, "blobs_level", s->blobs_level);
  json_integer(&w, "irregular_n", s->irregular_n);
  if (s->mesh_file)
    json_string(&w, "mesh_file", s->mesh_file);
  json_integer(&w, "fixed_reps", s->timing.fixed_reps);
  json_number(&w, "min_time_s", s->timing.min_time_s);
  json_integer(&w, "trials", s->timing.trials);
  json_integer(&w, "host_trials", s->host_trials);
  json_bool(&w, "binary_cache", !s->no_cache);
  json_string(
      &w, "problem",
      "lambda 1, sigma 1, 10, 1, ... on the material ids in increasing order, b = (phi_i, 1)");
  json_string(&w, "timing",
              "warm: clmg_p1_assemble_device into the existing matrix, reps calls ended by "
              "clmg_finish, fastest of trials batches; first: the first call (kernel build "
              "included, build_s of it); host: serial clmg_p1_assemble_host, fastest of "
              "host_trials");
  json_string(&w, "bytes_model",
              "per cell (d+1) int32 vertex indices (+ int32 material with several materials); "
              "per vertex d coordinates in the precision; per CSR entry int32 column read and "
              "value written; per row int64 offset read (n+1) and b written");
  json_object_end(&w);
  json_array_begin(&w, "rows");
  for (size_t i = 0; i < results->row_count; i++) {
    const result_row *row = &results->rows[i];
    json_object_begin(&w, NULL);
    json_string(&w, "mesh", row->mesh);
    json_string(&w, "order", row->order);
    json_string(&w, "precision", clmg_dtype_name(row->precision));
    json_string(&w, "path", row->path);
    json_integer(&w, "vertices", (long long)row->vertices);
    json_integer(&w, "cells", (long long)row->cells);
    json_integer(&w, "nnz", (long long)row->nnz);
    json_integer(&w, "patches", (long long)row->patches);
    json_number(&w, "boundary_cell_fraction", row->boundary_fraction);
    json_number(&w, "setup_ms", row->setup_s * 1e3);
    json_number(&w, "kernel_build_s", row->build_s);
    json_number(&w, "first_ms", row->first_s * 1e3);
    json_number(&w, "warm_ms", row->warm_s * 1e3);
    json_integer(&w, "reps", row->reps);
    json_number(&w, "host_ms", row->host_s * 1e3);
    json_number(&w, "speedup_host_over_device", row->host_s / row->warm_s);
    json_number(&w, "bytes", row->bytes);
    json_number(&w, "gb_per_s", row->gb_per_s);
    json_number(&w, "ratio_to_copy", row->ratio_to_copy);
    json_number(&w, "matrix_relative_error", row->matrix_error);
    json_number(&w, "b_relative_error", row->b_error);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_array_begin(&w, "skipped");
  for (size_t i = 0; i < results->skipped_count; i++)
    json_string(&w, NULL, results->skipped[i]);
  json_array_end(&w);
  json_integer(&w, "failures", results->failures);
  json_object_end(&w);
  json_end(&w);
  return perf_json_close(PROGRAM, file);
}

int main(int argc, char **argv) {
  benchmark_settings s;
  int parsed = parse_arguments(argc, argv, &s);
  if (parsed == 2)
    return 0;
  if (parsed == 0) {
    print_usage(stderr);
    return 2;
  }
  if (!perf_output_begin(PROGRAM, &s.output))
    return 1;
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = s.device;
  options.disable_binary_cache = s.no_cache;
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&options, &context);
  if (status == CLMG_SUCCESS)
    status = clmg_context_set_program_callback(context, count_compiles, NULL);
  if (status != CLMG_SUCCESS) {
    apputil_report(context, status, "creating a context");
    clmg_context_destroy(context);
    return 1;
  }
  benchmark_results results;
  memset(&results, 0, sizeof results);
  results.device = *clmg_context_device(context);
  if (!s.regular_given && !s.quick && !results.device.is_gpu)
    s.regular_max = 2; /* keeps the default run short on a CPU */

  printf(PROGRAM " (clmg %s)\n", clmg_version_string());
  perf_print_device(&results.device);
  if (!perf_measure_copy_bandwidth(context, &results.copy_gb_per_s))
    results.failures++;
  printf("problem: P1 Helmholtz, lambda 1, sigma 1, 10, 1, ... on the material ids in increasing "
         "order, b = (phi_i, 1)\n");
  printf("bytes model: cells (d+1) x 4 B (+4 B material) + vertices d x real + CSR entries (4 B "
         "col + real value) + rows (8 B offset + real b)\n");
  printf("warm: adaptive reps >= %.2f s per batch, best of %ld; host: best of %d\n\n",
         s.timing.min_time_s, s.timing.trials, s.host_trials);

  /* the meshes, each in the orders asked for, with their host reference */
  bench_mesh *meshes = calloc(MAX_MESHES, sizeof *meshes);
  size_t mesh_count = 0;
  int ok = meshes != NULL;
  clmg_error error;
  for (int level = s.regular_min; ok && s.run_regular && level <= s.regular_max; level++) {
    clmg_mesh mesh;
    char name[64];
    snprintf(name, sizeof name, "regular-%d", level);
    ok = clmg_mesh_regular_tetrahedra(level, &mesh, &error) == CLMG_SUCCESS;
    if (!ok)
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    else
      ok = add_mesh(&s, meshes, &mesh_count, &mesh, name);
  }
  if (ok && s.run_blobs) {
    clmg_mesh mesh;
    char name[64];
    snprintf(name, sizeof name, "blobs-%d", s.blobs_level);
    ok = clmg_mesh_blobs(3, s.blobs_level, &mesh, &error) == CLMG_SUCCESS;
    if (!ok)
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    else
      ok = add_mesh(&s, meshes, &mesh_count, &mesh, name);
  }
  if (ok && s.run_irregular) {
    clmg_mesh mesh;
    char name[64];
    if (s.mesh_file) {
      const char *base = strrchr(s.mesh_file, '/');
      snprintf(name, sizeof name, "%.63s", base ? base + 1 : s.mesh_file);
      ok = clmg_mesh_read_gmsh(s.mesh_file, &mesh, &error) == CLMG_SUCCESS;
    } else {
      snprintf(name, sizeof name, "irregular-%d", s.irregular_n);
      ok = clmg_mesh_box_simplices(3, s.irregular_n, 0.2, 2014, &mesh, &error) == CLMG_SUCCESS;
    }
    if (!ok)
      fprintf(stderr, PROGRAM ": %s: %s\n", name, error.message);
    else if (mesh.cell_type != CLMG_CELL_SIMPLEX) {
      fprintf(stderr, PROGRAM ": %s: P1 assembly needs triangles or tetrahedra\n", name);
      clmg_mesh_free(&mesh);
      ok = 0;
    } else
      ok = add_mesh(&s, meshes, &mesh_count, &mesh, name);
  }
  if (!ok)
    results.failures++;

  print_table_header();
  for (size_t i = 0; ok && i < mesh_count; i++)
    for (int p = 0; p < 2; p++) {
      clmg_dtype precision = p ? CLMG_FLOAT : CLMG_DOUBLE;
      if (!s.precisions[p])
        continue;
      if (precision == CLMG_DOUBLE && !results.device.has_fp64) {
        if (i == 0)
          note_skipped(&results, "double", "the device has no double precision");
        continue;
      }
      const clmg_p1_path paths[3] = {CLMG_P1_PATH_PATCH, CLMG_P1_PATH_GATHER, CLMG_P1_PATH_ROWS};
      for (int path = 0; path < 3; path++)
        if (s.paths[path])
          run_configuration(context, &s, &meshes[i], precision, paths[path], &results);
    }

  int json_ok = 1;
  const char *paths[2];
  for (size_t k = 0; k < perf_output_paths(&s.output, paths); ++k) {
    if (!write_json(paths[k], &s, &results))
      json_ok = 0;
    else if (strcmp(paths[k], "-") != 0)
      printf("\nJSON written to %s\n", paths[k]);
  }
  if (results.failures > 0)
    fprintf(stderr, PROGRAM ": %d failure(s); see the messages above\n", results.failures);
  for (size_t i = 0; meshes && i < mesh_count; i++)
    free_bench_mesh(&meshes[i]);
  free(meshes);
  free(results.rows);
  clmg_context_destroy(context);
  return results.failures == 0 && json_ok ? 0 : 1;
}
