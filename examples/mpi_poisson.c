/* Geometric multigrid on the CIRCLE benchmark over MPI ranks (clmg_mpi),
 * the hierarchy built in parts, one OpenCL device each.
 *
 *   mpirun -np N mpi_poisson [LEVEL [DEVICE]]
 *
 * CIRCLE (Geveler et al. 2011, section 4.2) is -Laplace(u) = 1 on the square
 * [-1,1]^2 with a circular hole of radius 0.5, u = 0 on the square and u = 1
 * on the circle. LEVEL is the finest level (0 is the 8-cell coarse mesh;
 * default 6: 33,280 unknowns). clmg_mpi_poisson_levels_create builds the
 * hierarchy in parts: every rank refines the coarse mesh up to the partition
 * level (the finest with at most 4096 cells per rank) and builds those
 * levels whole; the partition level's cells are split between the ranks,
 * and each rank refines and assembles only its part (with a layer of cells
 * around it) up to LEVEL, so that what a rank holds shrinks with the number
 * of ranks. (When LEVEL is the partition level, every rank builds every
 * level whole.) The distributed multigrid (the library's defaults: V-cycle,
 * Jacobi 4+4, the coarse level solved on every rank) solves to a relative
 * residual of 1e-8 in double precision. Then every rank checks the result
 * with the distributed finest operator: the true residual ||b - A u|| /
 * ||b|| (global norms), and the global minimum and maximum of u, which must
 * lie in [0, 1] (see check()). Rank 0 prints what each rank assembled and
 * the result.
 *
 * DEVICE: nvidia, pocl, gpu, cpu, P:D, ... (default: $CLMG_DEVICE, else the
 * first GPU, else the first CPU), the same on every rank; it must support
 * double precision. Exits 0 on every rank when the solve converged and the
 * checks hold, 1 otherwise.
 *
 * Try it with 2 ranks: mpirun -np 2 mpi_poisson 6 pocl */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>
#include <clmg/mpi.h>

#define TOLERANCE 1e-8

/* Prints a failed call's status and the context's message (every rank
 * has the failing rank's message after a collective call). */
static int report(int rank, const clmg_context *context, clmg_status status, const char *what) {
  if (rank == 0)
    fprintf(stderr, "mpi_poisson: %s: %s: %s\n", what, clmg_status_string(status),
            context != NULL ? clmg_context_message(context) : "");
  return 1;
}

/* A device failure inside a distributed solve or product is not agreed
 * between the ranks (the others would wait for this rank's messages), so
 * the failing rank ends them all (clmg/mpi.h). */
static void abort_on_failure(const clmg_context *context, clmg_status status, const char *what) {
  if (status != CLMG_SUCCESS) {
    report(0, context, status, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static unsigned long long sum_over_ranks(unsigned long long value) {
  unsigned long long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

/* The true residual of x, and the global minimum and maximum of u (r: a
 * vector of this rank's rows). Every rank gets the same numbers and the
 * same verdict. */
static int check(int rank, clmg_multigrid *multigrid, const clmg_mpi_poisson_levels *levels,
                 const clmg_vector *b, const clmg_vector *x, clmg_vector *r,
                 const clmg_krylov_result *result) {
  clmg_context *context = clmg_vector_context(x);
  const int finest = levels->num_levels - 1;
  const size_t rows = levels->levels[finest].a.rows;

  /* r = b - A x with the distributed operator (it exchanges the halo),
   * then global norms: the context's reductions span the ranks */
  double r_norm = 0, b_norm = 0;
  clmg_status status = clmg_operator_defect(clmg_multigrid_operator(multigrid, finest), b, x, r);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(r, &r_norm);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(b, &b_norm);
  abort_on_failure(context, status, "recomputing the residual");
  double residual = r_norm / b_norm;

  /* u of this rank's rows; a rank without rows adds nothing */
  int downloaded = 1;
  double u_min = INFINITY, u_max = -INFINITY;
  double *u = malloc((rows + 1) * sizeof *u);
  if (u == NULL || (rows > 0 && clmg_vector_download_doubles(x, u) != CLMG_SUCCESS)) {
    fprintf(stderr, "mpi_poisson: rank %d cannot download its part of u\n", rank);
    downloaded = 0;
  }
  for (size_t i = 0; downloaded && i < rows; ++i) {
    u_min = fmin(u_min, u[i]);
    u_max = fmax(u_max, u[i]);
  }
  free(u);
  MPI_Allreduce(MPI_IN_PLACE, &downloaded, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &u_min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &u_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  /* The maximum principle: -Laplace(u) = 1 >= 0 puts the minimum of u on
   * the boundary, so u >= 0. And w = u + |x|^2 / 4 is harmonic (Laplace of
   * |x|^2 / 4 is 1 in 2D), so w is at most its boundary maximum, 1 + 1/16
   * on the circle (0 + 2/4 on the square), and u = w - |x|^2 / 4 <= 1 as
   * |x| >= 1/2 in the domain: 0 <= u <= 1, max u = 1 on the circle, and
   * inside u stays strictly between (0.0018 to 0.9665 at level 5). The
   * discrete solution keeps the bounds to rounding and the tolerance. */
  int in_bounds = downloaded && u_min >= -1e-6 && u_max <= 1 + 1e-6;
  int ok = result->converged && residual <= TOLERANCE && in_bounds;
  if (rank == 0) {
    printf("cycles             %d (reported residual %.3e)\n", result->iterations,
           result->relative_residual);
    printf("true residual      %.3e (||b - A u|| / ||b||, the distributed operator)\n", residual);
    printf("solution           %.6f <= u <= %.6f (in [0, 1]: %s)\n", u_min, u_max,
           in_bounds ? "yes" : "no");
    printf("%s\n", ok ? "OK" : "FAILED: not converged to the tolerance, or u outside [0, 1]");
  }
  return !ok;
}

static int solve(int rank, int level, clmg_context *context) {
  clmg_mpi *mpi = NULL;
  clmg_mesh coarse = {0};
  clmg_mpi_poisson_levels levels = {0};
  clmg_multigrid *multigrid = NULL;
  clmg_vector *b = NULL, *x = NULL, *r = NULL;
  clmg_krylov_result result = {0};
  clmg_error error = {{0}};
  clmg_poisson_problem problem;
  clmg_poisson_problem_circle(&problem); /* -Laplace(u) = 1, u = 0 / 1 on square / circle */

  /* every rank the same coarse mesh; each then builds and assembles its part */
  clmg_status status = clmg_mpi_create(context, MPI_COMM_WORLD, &mpi);
  if (status == CLMG_SUCCESS) /* fails only without memory */
    status = clmg_mpi_agree(mpi, clmg_mesh_circle(&coarse, &error));
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_poisson_levels_create(mpi, &coarse, level, &problem, NULL, &levels);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_multigrid_create(mpi, levels.num_levels, levels.levels, NULL, &multigrid);

  /* b, x and the residual r of this rank's rows of the finest level */
  const int finest = levels.num_levels - 1;
  const size_t rows = status == CLMG_SUCCESS ? levels.levels[finest].a.rows : 0;
  if (status == CLMG_SUCCESS) {
    status = clmg_vector_create(context, CLMG_DOUBLE, rows, &b);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, rows, &x);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, rows, &r);
    if (status == CLMG_SUCCESS && rows > 0)
      status = clmg_vector_upload_doubles(b, levels.b);
    if (status == CLMG_SUCCESS && rows > 0)
      status = clmg_vector_upload_doubles(x, levels.x0); /* boundary values, 0 inside */
    status = clmg_mpi_agree(mpi, status);                /* these steps are this rank's own */
  }
  int failed = status != CLMG_SUCCESS ? report(rank, context, status, "setting up") : 0;

  if (!failed) {
    unsigned long long unknowns = sum_over_ranks(rows);
    unsigned long long piece_min = levels.piece_dofs, piece_max = levels.piece_dofs;
    MPI_Allreduce(MPI_IN_PLACE, &piece_min, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &piece_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("ranks              %d (rank 0 on %s)\n", clmg_mpi_size(mpi),
             clmg_context_device(context)->name);
      printf("problem            CIRCLE, Q1, level %d: %llu unknowns\n", level, unknowns);
      if (levels.partition_level < finest) {
        printf("partition          level %d (%zu cells split between the ranks)\n",
               levels.partition_level, levels.global_cells);
        printf("assembled per rank %llu to %llu of the %llu finest DOFs (its part and a layer)\n",
               piece_min, piece_max, unknowns);
      } else {
        printf("partition          level %d, the finest: every rank built every level whole\n",
               levels.partition_level);
      }
      if (finest > 0)
        printf("multigrid          %d levels, V-cycle, %s, coarse solve %s\n",
               clmg_multigrid_levels(multigrid), clmg_multigrid_smoother_name(multigrid, finest),
               clmg_multigrid_coarse_solver(multigrid));
      else
        printf("multigrid          1 level: the coarse solve, %s\n",
               clmg_multigrid_coarse_solver(multigrid));
    }

    clmg_krylov_options options;
    clmg_krylov_options_defaults(&options);
    options.relative_tolerance = TOLERANCE;
    options.max_iterations = 100;
    status = clmg_multigrid_solve(multigrid, b, x, &options, &result);
    if (status == CLMG_ERROR_NOT_CONVERGED) /* the same on every rank: the norms are global */
      report(rank, context, status, "solving");
    else
      abort_on_failure(context, status, "solving");
    failed = check(rank, multigrid, &levels, b, x, r, &result);
  }

  clmg_krylov_result_free(&result);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_vector_destroy(r);
  clmg_multigrid_destroy(multigrid);
  clmg_mpi_poisson_levels_free(&levels);
  clmg_mesh_free(&coarse);
  clmg_mpi_destroy(mpi);
  return failed;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *end = NULL;
  long level = argc > 1 ? strtol(argv[1], &end, 10) : 6;
  if (argc > 3 || (argc > 1 && (end == argv[1] || *end != '\0')) || level < 0 || level > 11) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np N mpi_poisson [LEVEL (0-11) [DEVICE]]\n");
    MPI_Finalize();
    return 1;
  }
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = argc == 3 ? argv[2] : NULL;
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&options, &context);
  int failed = status != CLMG_SUCCESS;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_failed)
    failed = failed ? report(0, context, status, "opening the device") : 1;
  else
    failed = solve(rank, (int)level, context);
  /* the exit status every rank returns: 1 when any rank failed */
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  clmg_context_destroy(context);
  MPI_Finalize();
  return failed;
}
