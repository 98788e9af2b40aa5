/* clmg_perf_spd_problems: writes one of the SPD test problems of
 * include/clmg/spd_problems.h (elasticity-p1, elasticity-p2, dg-diffusion,
 * q2-jump) as Matrix Market files for other solvers and for the AMG
 * benchmarks: PREFIX.mtx (A, coordinate real general), PREFIX_b.mtx (b, an
 * array) and PREFIX_coords.mtx (the nodes' positions, a nodes x dim array,
 * for rigid-body modes), all through the library's Matrix Market writers;
 * files that scipy.io.mmread reads. Prints the rows, nonzeros, block size
 * and the assembly time. Runs on the host only (no OpenCL device). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "clmg.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_spd_problems"

static void print_usage(FILE *out) {
  fputs("Usage: " PROGRAM " PROBLEM --level N [OPTIONS] -o PREFIX\n"
        "\n"
        "Assembles an SPD test problem (not an M-matrix) on the host and writes it as\n"
        "Matrix Market files: PREFIX.mtx (the matrix A), PREFIX_b.mtx (the right-hand\n"
        "side b) and PREFIX_coords.mtx (nodes x dim: each node's position; DOF\n"
        "block_size * node + c belongs to node). Prints rows, nonzeros and block size.\n"
        "\n"
        "Problems (N = cells per side of the unit square or cube):\n"
        "  elasticity-p1   3D linear elasticity, P1 tetrahedra, clamped at x = 0, body\n"
        "                  force (0, 0, -1); 3 (N + 1)^3 rows, block size 3\n"
        "  elasticity-p2   the same with P2 (10-node) tetrahedra; 3 (2N + 1)^3 rows\n"
        "  dg-diffusion    -Laplace(u) = 1, u = 0 weakly: symmetric interior-penalty DG,\n"
        "                  discontinuous P1 on triangles; 6 N^2 rows\n"
        "  q2-jump         -div(k grad u) = 1, u = 0: Q2 hexahedra, k = JUMP on a 2 x 2 x 2\n"
        "                  checkerboard of octants, 1 elsewhere; (2N + 1)^3 rows\n"
        "  (about 10^5 rows: N = 32, 16, 128, 24; 10^6 rows: N = 68, 34, 400, 50)\n"
        "\n"
        "Options:\n"
        "  --level N            cells per side (required; 1..160, dg-diffusion 1..4096)\n"
        "  --poisson-ratio X    elasticity: Poisson ratio in [0, 0.5) (default 0.3; E = 1)\n"
        "  --jump X             q2-jump: the coefficient ratio, > 0 (default 1e4)\n"
        "  --distortion X       random moves of interior vertices, in cell widths,\n"
        "                       [0, 0.3) (default 0.1)\n"
        "  --seed S             seed of the distortion (default 1)\n"
        "  -o, --output PREFIX  the files' prefix (required)\n"
        "  -h, --help           this text\n",
        out);
}

int main(int argc, char **argv) {
  clmg_spd_problem_options options;
  clmg_spd_problem_options_defaults(&options);
  const char *prefix = NULL, *problem_name = NULL;
  int level_given = 0;
  static const char *const value_options[] = {
      "--level", "--poisson-ratio", "--jump", "--distortion", "--seed", "--output", "-o", NULL};
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] != '-') { /* the problem, the one positional argument */
      if (problem_name) {
        fprintf(stderr, PROGRAM ": one problem only (got '%s' and '%s')\n", problem_name, argv[i]);
        return 2;
      }
      problem_name = argv[i];
      continue;
    }
    char arg[32];
    const char *value = NULL;
    int read = perf_next_option(PROGRAM, argc, argv, &i, value_options, arg, &value);
    if (read < 0) {
      print_usage(stdout);
      return 0;
    }
    if (read == 0)
      return 2;
    long long integer = 0;
    int ok = 1;
    if (strcmp(arg, "--level") == 0) {
      ok = perf_parse_integer(PROGRAM, arg, value, 1, 1 << 30, &integer);
      options.level = (int)integer;
      level_given = 1;
    } else if (strcmp(arg, "--poisson-ratio") == 0) {
      ok = perf_parse_number(PROGRAM, arg, value, -1e300, 1e300, &options.poisson_ratio);
    } else if (strcmp(arg, "--jump") == 0) {
      ok = perf_parse_number(PROGRAM, arg, value, -1e300, 1e300, &options.jump);
    } else if (strcmp(arg, "--distortion") == 0) {
      ok = perf_parse_number(PROGRAM, arg, value, -1e300, 1e300, &options.distortion);
    } else if (strcmp(arg, "--seed") == 0) {
      ok = perf_parse_integer(PROGRAM, arg, value, 0, (long long)(~0ull >> 1), &integer);
      options.seed = (uint64_t)integer;
    } else {
      prefix = value; /* -o, --output */
    }
    if (!ok)
      return 2;
  }
  if (!problem_name || !clmg_spd_problem_parse(problem_name, &options.kind)) {
    fprintf(stderr,
            PROGRAM ": %s%s%s: expected elasticity-p1, elasticity-p2, dg-diffusion or q2-jump "
                    "(see --help)\n",
            problem_name ? "unknown problem '" : "no problem given",
            problem_name ? problem_name : "", problem_name ? "'" : "");
    return 2;
  }
  if (!level_given || !prefix) {
    fprintf(stderr, PROGRAM ": --level and -o are required (see --help)\n");
    return 2;
  }

  clmg_error error;
  clmg_spd_problem problem;
  double start = apputil_now();
  clmg_status status = clmg_spd_problem_create(&options, &problem, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, PROGRAM ": %s: %s\n", clmg_status_string(status), error.message);
    return 1;
  }
  double assembly_s = apputil_now() - start;
  size_t length = strlen(prefix) + 16;
  char *path = malloc(length);
  if (!path) {
    clmg_spd_problem_free(&problem);
    fprintf(stderr, PROGRAM ": out of memory\n");
    return 1;
  }
  snprintf(path, length, "%s.mtx", prefix);
  status = clmg_csr_write_matrix_market(path, &problem.a, &error);
  if (status == CLMG_SUCCESS) {
    snprintf(path, length, "%s_b.mtx", prefix);
    status = clmg_write_matrix_market_vector(path, problem.b, problem.a.rows, &error);
  }
  if (status == CLMG_SUCCESS) {
    snprintf(path, length, "%s_coords.mtx", prefix);
    status = clmg_write_matrix_market_array(path, problem.coordinates, problem.num_nodes,
                                            (size_t)problem.dim, &error);
  }
  if (status != CLMG_SUCCESS)
    fprintf(stderr, PROGRAM ": %s: %s\n", clmg_status_string(status), error.message);
  else
    printf("problem %s level %d: rows %zu nonzeros %zu block_size %d nodes %zu dim %d "
           "(assembled in %.3f s)\n",
           clmg_spd_problem_name(options.kind), options.level, problem.a.rows,
           clmg_csr_nnz(&problem.a), problem.block_size, problem.num_nodes, problem.dim,
           assembly_s);
  free(path);
  clmg_spd_problem_free(&problem);
  return status == CLMG_SUCCESS ? 0 : 1;
}
