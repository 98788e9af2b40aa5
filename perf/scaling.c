/* clmg_perf_scaling: what distribution costs, under mpirun -np N.
 *
 * One problem per run (perf/scaling.sh runs 1, 2, 4 ranks, weak and strong,
 * and perf/scaling_table.py makes the tables): the FE Poisson hierarchy of
 * CIRCLE or a 2D/3D box (Q1) built in parts (clmg_mpi_poisson_levels_create:
 * each rank refines and assembles its piece of the domain), and on the
 * finest level
 *   - the distributed SpMV against the local SpMV of the same rows (the
 *     rank's rows with its ghost columns appended, no exchange): their ratio
 *     is the price of the halo exchange that the local product did not hide;
 *   - one global reduction (MPI_Allreduce of 3 doubles, CG's per iteration);
 *   - Jacobi-PCG and the multigrid V(4,4) cycle to a relative residual of
 *     1e-8: iterations, time per iteration, time to solution;
 *   - the halo: values and bytes each SpMV and each cycle exchange (a cycle
 *     applies every level's A pre + post + 1 times, P and R once, and
 *     gathers the coarse right-hand side), and communication / computation:
 *     the exchange's extra time per SpMV and the reductions per iteration
 *     against the time of the iteration.
 * Times are the slowest rank's (every timed loop starts at a barrier).
 * Bandwidth: the SpMV's bytes of all ranks over its time, against the sum
 * of the copy bandwidths the ranks measured at the same time (ranks sharing
 * one device share its bandwidth; ranks on devices of their own add theirs).
 *
 * Usage: mpirun -np N clmg_perf_scaling [--problem circle:L|box2:N:L|box3:N:L]
 *            [--device D] [--min-time S] [--cg-max K] [--gather-rows R]
 *            [--output FILE] [--json]
 * --output appends one JSON object (one line) to FILE, --json prints it on
 * stdout instead of the report; --cg-max stops PCG
 * after K iterations (its time per iteration still counts; large problems
 * need thousands to 1e-8). Each solve runs three times: the best counts. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clmg/fem.h"
#include "clmg/mesh.h"
#include "clmg/mpi.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_scaling"

static int rank, ranks;

#define DIE(...)                                                                                   \
  do {                                                                                             \
    fprintf(stderr, "clmg_perf_scaling: rank %d: ", rank);                                         \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fputc('\n', stderr);                                                                           \
    MPI_Abort(MPI_COMM_WORLD, 1);                                                                  \
  } while (0)
#define OK(call, context)                                                                          \
  do {                                                                                             \
    clmg_status ok_status = (call);                                                                \
    if (ok_status != CLMG_SUCCESS)                                                                 \
      DIE("%s: %s: %s", #call, clmg_status_string(ok_status), clmg_context_message(context));      \
  } while (0)

typedef struct problem {
  char name[64];
  int dim, coarse_cells, levels; /* a box: coarse_cells per direction */
  int circle;
} problem;

static void parse_problem(const char *text, problem *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", text);
  if (sscanf(text, "circle:%d", &p->levels) == 1) {
    p->circle = 1;
    p->dim = 2;
  } else if (sscanf(text, "box2:%d:%d", &p->coarse_cells, &p->levels) == 2) {
    p->dim = 2;
  } else if (sscanf(text, "box3:%d:%d", &p->coarse_cells, &p->levels) == 2) {
    p->dim = 3;
  } else {
    DIE("--problem %s: expected circle:LEVELS, box2:N:LEVELS or box3:N:LEVELS", text);
  }
  if (p->levels < 1 || p->levels > 12 || (!p->circle && p->coarse_cells < 1))
    DIE("--problem %s: 1 to 12 levels and at least one coarse cell", text);
}

static double now(void) {
  return MPI_Wtime();
}

/* The slowest rank's mean time of `run` over enough repetitions. */
typedef void (*timed_run)(void *data);
static double time_loop(clmg_context *context, timed_run run, void *data, double min_time) {
  run(data); /* warm-up */
  OK(clmg_finish(context), context);
  long repeats = 1;
  for (;;) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    for (long k = 0; k < repeats; ++k)
      run(data);
    OK(clmg_finish(context), context);
    double mine = now() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (slowest >= min_time || repeats >= (1L << 20))
      return slowest / (double)repeats;
    repeats *= slowest > 0 ? (long)fmin(16.0, ceil(1.5 * min_time / slowest)) : 16;
  }
}

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The rank's rows with its columns renumbered: its own entries first
 * (first_col ... first_col + local_cols - 1), then its ghosts in global
 * order: the local SpMV of the same rows, which needs no exchange.
 * Returns the ghost count. */
static size_t rows_without_exchange(const clmg_csr *mine, uint64_t first_col, size_t local_cols,
                                    clmg_csr *out) {
  size_t nnz = clmg_csr_nnz(mine), unique = 0;
  int32_t *ghosts = NULL;
  if (clmg_mpi_ghost_columns(mine, first_col, local_cols, &ghosts, &unique) != CLMG_SUCCESS ||
      clmg_csr_copy(mine, out, NULL) != CLMG_SUCCESS)
    DIE("no memory for the local rows");
  for (size_t k = 0; k < nnz; ++k) {
    uint64_t column = (uint64_t)mine->col[k];
    if (column >= first_col && column < first_col + local_cols) {
      out->col[k] = (int32_t)(column - first_col);
    } else {
      const int32_t *found = bsearch(&mine->col[k], ghosts, unique, sizeof *ghosts, compare_int32);
      out->col[k] = (int32_t)(local_cols + (size_t)(found - ghosts));
    }
  }
  /* the renumbering keeps each row sorted: own columns stay in order and
   * below the ghosts, ghosts keep their global order */
  for (size_t i = 0; i < out->rows; ++i) {
    int64_t begin = out->row_ptr[i], end = out->row_ptr[i + 1];
    for (int64_t k = begin + 1; k < end; ++k) { /* insertion sort: rows are short */
      int32_t c = out->col[k];
      double v = out->val[k];
      int64_t j = k - 1;
      while (j >= begin && out->col[j] > c) {
        out->col[j + 1] = out->col[j];
        out->val[j + 1] = out->val[j];
        --j;
      }
      out->col[j + 1] = c;
      out->val[j + 1] = v;
    }
  }
  out->cols = local_cols + unique;
  free(ghosts);
  return unique;
}

typedef struct spmv_run {
  const clmg_operator *op;
  const clmg_matrix *matrix;
  clmg_vector *x, *y;
} spmv_run;

static void run_operator(void *data) {
  spmv_run *r = data;
  if (clmg_operator_apply(r->op, 1.0, r->x, 0.0, r->y) != CLMG_SUCCESS)
    DIE("distributed SpMV failed");
}

static void run_matrix(void *data) {
  spmv_run *r = data;
  if (clmg_spmv(1.0, r->matrix, r->x, 0.0, r->y) != CLMG_SUCCESS)
    DIE("local SpMV failed");
}

/* The local SpMV with the host waiting for it each time, as an exchange
 * makes the host wait for the packed values: where ranks share a device,
 * this shows what their waits cost apart from MPI. */
static void run_matrix_and_wait(void *data) {
  spmv_run *r = data;
  if (clmg_spmv(1.0, r->matrix, r->x, 0.0, r->y) != CLMG_SUCCESS ||
      clmg_finish(clmg_matrix_context(r->matrix)) != CLMG_SUCCESS)
    DIE("local SpMV failed");
}

static void run_allreduce(void *data) {
  double values[3] = {1, 2, 3};
  (void)data;
  MPI_Allreduce(MPI_IN_PLACE, values, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* Sum over ranks of an unsigned count. */
static unsigned long long sum_over_ranks(unsigned long long value) {
  unsigned long long total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

static unsigned long long max_over_ranks(unsigned long long value) {
  unsigned long long largest = 0;
  MPI_Allreduce(&value, &largest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return largest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char *problem_text = "circle:6", *device = NULL;
  perf_output output = {0};
  double min_time = 0.2;
  int cg_max = 20000;
  size_t gather_rows = 0;
  static const char *const value_options[] = {"--problem",     "--device", "--cg-max", "--min-time",
                                              "--gather-rows", "--output", NULL};
  for (int i = 1; i < argc; ++i) {
    char name[32];
    const char *value = NULL;
    /* every rank reads the same words: they stop alike */
    int read = perf_next_option(PROGRAM, argc, argv, &i, value_options, name, &value);
    long long integer = 0;
    if (read < 0) {
      if (rank == 0)
        printf("Usage: mpirun -np N " PROGRAM " [OPTIONS]\n"
               "The FE Poisson hierarchy (Q1) split over the ranks: distributed SpMV against\n"
               "the local SpMV of the same rows, a global reduction, Jacobi-PCG and V(4,4)\n"
               "multigrid to 1e-8 (PCG at most K iterations), and the halo they exchange.\n"
               "\n"
               "Options:\n"
               "  --problem P           circle:L (CIRCLE at level L), box2:N:L or box3:N:L\n"
               "                        (an N^d box of Q1 cells at level L); default circle:6\n"
               "  --device D            device string (default: the host's GPUs in turn)\n"
               "  --min-time S          seconds each SpMV and reduction measurement lasts at\n"
               "                        least (default 0.2)\n"
               "  --cg-max K            stop PCG after K iterations (default 20000)\n"
               "  --gather-rows R       the levels with at most R rows run whole on every rank\n"
               "                        (coarse_max_rows of clmg_mpi_multigrid_create;\n"
               "                        default 0: none)\n"
               "  --output FILE         append the results as one JSON object (one line) to\n"
               "                        FILE (perf/scaling.sh collects the runs so)\n"
               "  --json                print that line on stdout instead of the report (the\n"
               "                        old spelling --json FILE still appends to FILE, with\n"
               "                        a note, until 0.3.0)\n"
               "  -h, --help            this text\n");
      MPI_Finalize();
      return 0;
    }
    int good = read == 1;
    if (good && strcmp(name, "--problem") == 0)
      problem_text = value;
    else if (good && strcmp(name, "--device") == 0)
      device = value;
    else if (good && strcmp(name, "--cg-max") == 0)
      good = perf_parse_integer(PROGRAM, name, value, 1, 1000000000, &integer) &&
             (cg_max = (int)integer) > 0;
    else if (good && strcmp(name, "--gather-rows") == 0)
      good = perf_parse_integer(PROGRAM, name, value, 0, 1000000000, &integer) &&
             (gather_rows = (size_t)integer) == (size_t)integer;
    else if (good && strcmp(name, "--min-time") == 0)
      good = perf_parse_number(PROGRAM, name, value, 1e-6, 60, &min_time);
    else if (good)
      perf_parse_output_option(name, value, &output);
    if (!good) {
      MPI_Finalize();
      return 2;
    }
  }
  if (!perf_output_begin(PROGRAM, &output))
    DIE("--json: stdout cannot be set aside");
  problem p;
  parse_problem(problem_text, &p);

  /* one device per rank: the GPUs of the host in turn unless one is named */
  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  char chosen[32] = "";
  if (!device && !getenv("CLMG_DEVICE")) {
    clmg_mpi_host_device(MPI_COMM_WORLD, chosen, sizeof chosen);
    if (chosen[0])
      device = chosen;
  }
  context_options.device = device;
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&context_options, &context);
  if (status != CLMG_SUCCESS)
    DIE("no device: %s", context ? clmg_context_message(context) : clmg_status_string(status));
  /* every rank at once: ranks on one device share its bandwidth, ranks on
   * devices of their own add theirs */
  double copy_gb_s = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  OK(clmg_measure_copy_bandwidth(context, 0, &copy_gb_s), context);
  MPI_Allreduce(MPI_IN_PLACE, &copy_gb_s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  /* the hierarchy in parts: each rank refines and assembles its piece */
  clmg_mesh coarse;
  clmg_error error;
  status = p.circle ? clmg_mesh_circle(&coarse, &error)
                    : clmg_mesh_box(p.dim, p.coarse_cells, 0.0, 1, &coarse, &error);
  if (status != CLMG_SUCCESS)
    DIE("mesh: %s", error.message);
  clmg_poisson_problem poisson;
  if (p.circle)
    clmg_poisson_problem_circle(&poisson);
  else
    clmg_poisson_problem_unit_source(&poisson);
  clmg_mpi *mpi = NULL;
  OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = now();
  clmg_mpi_poisson_levels pieces;
  OK(clmg_mpi_poisson_levels_create(mpi, &coarse, p.levels - 1, &poisson, NULL, &pieces), context);
  double hierarchy_s = now() - start;
  MPI_Allreduce(MPI_IN_PLACE, &hierarchy_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int levels = pieces.num_levels;
  clmg_mpi_level_rows *rows = pieces.levels;
  uint64_t *first = calloc((size_t)levels, sizeof *first), *count = calloc((size_t)levels, 8);
  if (!first || !count)
    DIE("no memory");
  for (int l = 0; l < levels; ++l) {
    first[l] = rows[l].first_row;
    count[l] = rows[l].a.rows;
  }
  const unsigned long long unknowns = sum_over_ranks(count[levels - 1]),
                           piece_dofs_max = max_over_ranks(pieces.piece_dofs);
  clmg_multigrid_options mg_options;
  clmg_multigrid_options_defaults(&mg_options);
  mg_options.coarse_max_rows = gather_rows;
  start = now();
  clmg_multigrid *multigrid = NULL;
  OK(clmg_mpi_multigrid_create(mpi, levels, rows, &mg_options, &multigrid), context);
  double build_s = now() - start;

  /* the finest level's halo, per level for the cycle's: the engine's
   * levels, the coarsest of them solved by gathering its right-hand side */
  const int finest = levels - 1, engine_levels = clmg_multigrid_levels(multigrid);
  const int coarsest = levels - engine_levels;
  const size_t n = count[finest];
  unsigned long long cycle_halo = 0, spmv_halo = 0;
  for (int l = coarsest; l < levels; ++l) {
    clmg_csr scratch = {0};
    size_t a_ghosts = rows_without_exchange(&rows[l].a, first[l], count[l], &scratch);
    clmg_csr_free(&scratch);
    size_t applications =
        l == coarsest ? 0 : (size_t)(mg_options.pre_smoothing + mg_options.post_smoothing + 1);
    cycle_halo += applications * a_ghosts;
    if (l == finest)
      spmv_halo = a_ghosts;
    if (l > coarsest) {
      cycle_halo += rows_without_exchange(&rows[l].p, first[l - 1], count[l - 1], &scratch);
      clmg_csr_free(&scratch);
      cycle_halo += rows_without_exchange(&rows[l].r, first[l], count[l], &scratch);
      clmg_csr_free(&scratch);
    }
  }
  spmv_halo = sum_over_ranks(spmv_halo);
  /* the coarse right-hand side gathered to every rank */
  cycle_halo = sum_over_ranks(cycle_halo) +
               sum_over_ranks(count[coarsest]) * (unsigned long long)(ranks - 1);

  /* distributed SpMV and the local SpMV of the same rows */
  const clmg_operator *a = clmg_multigrid_operator(multigrid, engine_levels - 1);
  clmg_csr local_rows = {0};
  size_t ghosts = rows_without_exchange(&rows[finest].a, first[finest], n, &local_rows);
  clmg_matrix *local = NULL;
  OK(clmg_matrix_create(context, &local_rows, NULL, &local), context);
  clmg_vector *x = NULL, *y = NULL, *x_local = NULL, *b = NULL;
  OK(clmg_vector_create(context, CLMG_DOUBLE, n, &x), context);
  OK(clmg_vector_create(context, CLMG_DOUBLE, n, &y), context);
  OK(clmg_vector_create(context, CLMG_DOUBLE, n + ghosts, &x_local), context);
  OK(clmg_vector_create(context, CLMG_DOUBLE, n, &b), context);
  OK(clmg_vector_fill(x, 1.0), context);
  OK(clmg_vector_fill(x_local, 1.0), context);
  spmv_run distributed_spmv = {a, NULL, x, y}, local_spmv = {NULL, local, x_local, y};
  double t_spmv = time_loop(context, run_operator, &distributed_spmv, min_time);
  double t_local = time_loop(context, run_matrix, &local_spmv, min_time);
  double t_local_wait = time_loop(context, run_matrix_and_wait, &local_spmv, min_time);
  double t_allreduce = time_loop(context, run_allreduce, NULL, min_time / 4);
  /* bytes of every rank's SpMV: values and columns, row offsets, x and y */
  unsigned long long nonzeros = sum_over_ranks(clmg_csr_nnz(&local_rows));
  double spmv_bytes = 12.0 * (double)nonzeros + 8.0 * (double)unknowns * 3.0;

  /* Jacobi-PCG and multigrid to 1e-8 */
  clmg_mpi_matrix *finest_matrix = NULL;
  OK(clmg_mpi_matrix_create(mpi, first[finest], &rows[finest].a, NULL, &finest_matrix), context);
  clmg_preconditioner jacobi;
  OK(clmg_mpi_preconditioner_jacobi(finest_matrix, &jacobi), context);
  if (n > 0)
    OK(clmg_vector_upload_doubles(b, pieces.b), context);
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = 1e-8;
  krylov.max_iterations = 20000;
  clmg_krylov_result cg_result = {0}, mg_result = {0};
  /* warm-ups: compile everything once */
  clmg_krylov_options one = krylov;
  one.max_iterations = 1;
  OK(clmg_vector_fill(x, 0.0), context);
  (void)clmg_krylov_solve(CLMG_KRYLOV_CG, a, b, x, &jacobi, &one, NULL);
  OK(clmg_vector_fill(x, 0.0), context);
  (void)clmg_multigrid_solve(multigrid, b, x, &one, NULL);
  OK(clmg_vector_fill(x, 0.0), context);
  OK(clmg_finish(context), context);
  /* each solve three times from x = 0: the best of the slowest rank's times */
  double t_cg = INFINITY, t_mg = INFINITY;
  krylov.max_iterations = cg_max;
  for (int trial = 0; trial < 3; ++trial) {
    double times[2];
    clmg_krylov_result_free(&cg_result);
    clmg_krylov_result_free(&mg_result);
    OK(clmg_vector_fill(x, 0.0), context);
    OK(clmg_finish(context), context);
    MPI_Barrier(MPI_COMM_WORLD);
    start = now();
    clmg_status solved = clmg_krylov_solve(CLMG_KRYLOV_CG, a, b, x, &jacobi, &krylov, &cg_result);
    if (solved != CLMG_SUCCESS && solved != CLMG_ERROR_NOT_CONVERGED) /* --cg-max may stop it */
      DIE("PCG: %s: %s", clmg_status_string(solved), clmg_context_message(context));
    times[0] = now() - start;
    krylov.max_iterations = 20000;
    OK(clmg_vector_fill(x, 0.0), context);
    OK(clmg_finish(context), context);
    MPI_Barrier(MPI_COMM_WORLD);
    start = now();
    OK(clmg_multigrid_solve(multigrid, b, x, &krylov, &mg_result), context);
    times[1] = now() - start;
    krylov.max_iterations = cg_max;
    MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t_cg = fmin(t_cg, times[0]);
    t_mg = fmin(t_mg, times[1]);
  }

  if (rank == 0) {
    const clmg_device_info *info = clmg_context_device(context);
    double cg_iteration = t_cg / fmax(1, cg_result.iterations);
    double cycle = t_mg / fmax(1, mg_result.iterations);
    printf("%-10s ranks %d, %llu unknowns (%.0f per rank), %d levels, device %s\n", p.name, ranks,
           unknowns, (double)unknowns / ranks, levels, info->name);
    printf("  setup      hierarchy in parts %.3f s (partition level %d, at most %llu finest DOFs "
           "assembled per rank), distributed build %.3f s\n",
           hierarchy_s, pieces.partition_level, piece_dofs_max, build_s);
    printf("  SpMV       distributed %.3f ms, local rows %.3f ms: ratio %.3f; %.3f of copy "
           "(%.1f GB/s)\n",
           1e3 * t_spmv, 1e3 * t_local, t_spmv / t_local, spmv_bytes / t_spmv / 1e9 / copy_gb_s,
           copy_gb_s);
    printf("  waits      the local SpMV with the host waiting after each: %.3f ms\n",
           1e3 * t_local_wait);
    printf("  halo       %llu values (%.1f KB) per SpMV, %llu (%.1f KB) per cycle\n", spmv_halo,
           8e-3 * (double)spmv_halo, cycle_halo, 8e-3 * (double)cycle_halo);
    printf("  reduction  %.1f us (MPI_Allreduce of 3 doubles)\n", 1e6 * t_allreduce);
    printf("  PCG        %d iterations, %.3f ms each, %.3f s %s; the exchange's extra time "
           "%.0f%% and the reduction %.1f%% of an iteration\n",
           cg_result.iterations, 1e3 * cg_iteration, t_cg,
           cg_result.converged ? "to 1e-8" : "(stopped by --cg-max)",
           100 * fmin(1, fmax(0, t_spmv - t_local) / cg_iteration),
           100 * fmin(1, t_allreduce / cg_iteration));
    printf("  multigrid  %d cycles, %.3f ms each, %.3f s to 1e-8 (%d distributed levels, "
           "coarse solve %s)\n",
           mg_result.iterations, 1e3 * cycle, t_mg, engine_levels,
           clmg_multigrid_coarse_solver(multigrid));
    const char *paths[2];
    for (size_t k = 0; k < perf_output_paths(&output, paths); k++) {
      /* the file is appended to: it collects the runs */
      int to_stdout = strcmp(paths[k], "-") == 0;
      clmg_output_file *none = NULL;
      FILE *file = to_stdout ? perf_json_open(PROGRAM, "-", &none) : fopen(paths[k], "a");
      if (!file)
        DIE("cannot append to %s", paths[k]);
      fprintf(file,
              "{\"problem\": \"%s\", \"ranks\": %d, \"unknowns\": %llu, \"levels\": %d, "
              "\"partition_level\": %d, \"piece_dofs_max\": %llu, \"gather_rows\": %zu, "
              "\"engine_levels\": %d, "
              "\"device\": \"%s\", \"copy_gb_s\": %.6g, \"hierarchy_s\": %.6g, "
              "\"build_s\": %.6g, \"spmv_s\": %.6g, \"local_spmv_s\": %.6g, \"local_spmv_wait_s\": "
              "%.6g, "
              "\"spmv_bytes\": %.6g, \"halo_values_spmv\": %llu, \"halo_values_cycle\": %llu, "
              "\"allreduce_s\": %.6g, \"cg_iterations\": %d, \"cg_s\": %.6g, "
              "\"cg_converged\": %d, \"mg_cycles\": %d, \"mg_s\": %.6g, \"mg_converged\": %d}\n",
              p.name, ranks, unknowns, levels, pieces.partition_level, piece_dofs_max, gather_rows,
              engine_levels, info->name, copy_gb_s, hierarchy_s, build_s, t_spmv, t_local,
              t_local_wait, spmv_bytes, spmv_halo, cycle_halo, t_allreduce, cg_result.iterations,
              t_cg, cg_result.converged, mg_result.iterations, t_mg, mg_result.converged);
      if (to_stdout ? !perf_json_close(PROGRAM, NULL) : fclose(file) != 0)
        DIE("cannot write %s", paths[k]);
    }
  }
  clmg_krylov_result_free(&cg_result);
  clmg_krylov_result_free(&mg_result);
  clmg_preconditioner_destroy(&jacobi);
  clmg_mpi_matrix_destroy(finest_matrix);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  clmg_vector_destroy(x_local);
  clmg_vector_destroy(b);
  clmg_matrix_destroy(local);
  clmg_csr_free(&local_rows);
  clmg_multigrid_destroy(multigrid);
  clmg_mpi_poisson_levels_free(&pieces);
  free(first);
  free(count);
  clmg_mpi_destroy(mpi);
  clmg_mesh_free(&coarse);
  clmg_context_destroy(context);
  MPI_Finalize();
  return 0;
}
