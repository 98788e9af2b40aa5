/* Conjugate gradients over MPI ranks (clmg_mpi), one OpenCL device each.
 *
 *   mpirun -np N mpi_cg FILE.mtx [DEVICE]
 *
 * Every rank reads its part of FILE.mtx and gets an even block of A's rows
 * (clmg_mpi_matrix_read_matrix_market). b = A * ones, so the exact solution
 * is known; Jacobi-preconditioned CG, named by options ("krylov=cg
 * precond=jacobi", the keys of clmg solve --set) and composed by
 * clmg_mpi_solver_create, solves A x = b: the distributed matrix's operator
 * exchanges its halo inside apply, and the context's dot products and norms
 * are global ones. Rank 0 gathers x,
 * recomputes ||b - A x|| / ||b|| from its own copy of A, and prints it with
 * the iterations and the halo each rank exchanges.
 *
 * DEVICE: nvidia, pocl, gpu, cpu, P:D, ... (default: $CLMG_DEVICE, else the
 * first GPU, else the first CPU), the same on every rank. Exits 0 on every
 * rank when the solve converged and the recomputed residual meets the
 * tolerance, 1 otherwise.
 *
 * Try it on examples/data/poisson2d_32.mtx with 2 ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>
#include <clmg/mpi.h>

/* Prints a failed call's status and the context's message (every rank
 * has the failing rank's message after a collective call). */
static int report(int rank, const clmg_context *context, clmg_status status, const char *what) {
  if (rank == 0)
    fprintf(stderr, "mpi_cg: %s: %s: %s\n", what, clmg_status_string(status),
            context != NULL ? clmg_context_message(context) : "");
  return 1;
}

static int solve(int rank, const char *path, clmg_context *context) {
  clmg_mpi *mpi = NULL;
  clmg_status status = clmg_mpi_create(context, MPI_COMM_WORLD, &mpi);
  if (status != CLMG_SUCCESS)
    return report(rank, context, status, "binding the context to MPI");
  clmg_dtype precision = clmg_context_device(context)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.precision = precision;
  clmg_mpi_matrix *a = NULL;
  status = clmg_mpi_matrix_read_matrix_market(mpi, 0, path, &options, &a);
  if (status != CLMG_SUCCESS) {
    clmg_mpi_destroy(mpi);
    return report(rank, context, status, "reading and splitting the matrix");
  }
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(a, &info);
  clmg_operator op;
  clmg_options *db = NULL;
  clmg_solver *solver = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_error error = {{0}};
  status = clmg_mpi_matrix_operator(a, 0, &op);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, info.local_rows, &b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, info.local_rows, &x);
  /* b = A * ones: x = 1, b = A x, then x = 0 as the initial guess */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(x, 1.0);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_apply(&op, 1.0, x, 0.0, b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(x, 0.0);
  /* the solver as data, the same keys as clmg solve --set (collective) */
  if (status == CLMG_SUCCESS)
    status = clmg_options_create(&db, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_parse(db, "krylov=cg precond=jacobi", &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_set(db, "precision", clmg_dtype_name(precision), &error);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_solver_create(mpi, a, NULL, 1, db, &solver);
  clmg_krylov_result result = {0};
  if (status == CLMG_SUCCESS)
    status = clmg_solver_solve(solver, b, x, &result);
  int failed = status != CLMG_SUCCESS ? report(rank, context, status, "solving") : 0;

  /* x to rank 0, which checks it against its own copy of A */
  double *whole = rank == 0 ? malloc((info.global_rows + 1) * sizeof *whole) : NULL;
  status = clmg_mpi_vector_gather(a, 0, x, whole);
  if (!failed && status != CLMG_SUCCESS)
    failed = report(rank, context, status, "gathering x");
  if (!failed && rank == 0) {
    clmg_csr host = {0};
    double *r = malloc((info.global_rows + 1) * sizeof *r);
    double *ones = malloc((info.global_rows + 1) * sizeof *ones);
    if (r && ones && clmg_csr_read_matrix_market(path, &host, &error) == CLMG_SUCCESS) {
      for (uint64_t i = 0; i < info.global_rows; ++i)
        ones[i] = 1.0;
      clmg_csr_spmv_host(1.0, &host, ones, 0.0, r); /* b */
      double b_norm = 0, r_norm = 0, error_max = 0;
      for (uint64_t i = 0; i < info.global_rows; ++i)
        b_norm += r[i] * r[i];
      clmg_csr_spmv_host(-1.0, &host, whole, 1.0, r); /* b - A x */
      for (uint64_t i = 0; i < info.global_rows; ++i) {
        r_norm += r[i] * r[i];
        error_max = fmax(error_max, fabs(whole[i] - 1.0));
      }
      double relative = sqrt(r_norm / b_norm);
      double tolerance = clmg_default_tolerance(precision);
      printf("%llu rows on %d ranks (rank 0: %zu rows, %zu halo values in, %zu out)\n",
             (unsigned long long)info.global_rows, clmg_mpi_size(mpi), info.local_rows, info.ghosts,
             info.sends);
      printf("CG: %d iterations, relative residual %.3e (recomputed on rank 0: %.3e), "
             "max error %.3e\n",
             result.iterations, result.relative_residual, relative, error_max);
      failed = !(result.converged && relative <= 1.01 * tolerance);
    } else {
      failed = 1;
      fprintf(stderr, "mpi_cg: rank 0 cannot check the result\n");
    }
    clmg_csr_free(&host);
    free(r);
    free(ones);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(whole);
  clmg_krylov_result_free(&result);
  clmg_solver_destroy(solver);
  clmg_options_destroy(db);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_operator_destroy(&op);
  clmg_mpi_matrix_destroy(a);
  clmg_mpi_destroy(mpi);
  return failed;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2 || argc > 3) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np N mpi_cg FILE.mtx [DEVICE]\n");
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
    failed = solve(rank, argv[1], context);
  clmg_context_destroy(context);
  MPI_Finalize();
  return failed;
}
