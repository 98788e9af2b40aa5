/* Algebraic multigrid on a Matrix Market system, the solver named by the
 * options layer (clmg/solver.h): smoothed aggregation built from the matrix
 * alone, with the patch block-Jacobi smoother (2 steps before and after the
 * coarse correction), as the preconditioner of CG (symmetric A with a
 * positive diagonal) or GMRES (otherwise): "krylov=auto precond=amg
 * mg.smoother=patch mg.steps=2".
 *
 *   amg_matrix_market FILE.mtx [DEVICE]
 *
 * Reads A, sets b = A * ones (so the exact solution is known), lets
 * clmg_solver_create build the AMG hierarchy and the Krylov method around
 * its V-cycle, and solves to a relative residual of 1e-8 (1e-5 in float,
 * on a device without double precision). Then it recomputes the true
 * residual on the host and prints it with the levels and iterations. Exits
 * 0 when the recomputed residual meets the tolerance, 1 otherwise.
 *
 * Try it on examples/data/poisson2d_32.mtx (CG) and
 * examples/data/convection_diffusion_pe100.mtx (GMRES). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: amg_matrix_market FILE.mtx [DEVICE]\n");
    return 2;
  }
  clmg_csr a = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_csr_read_matrix_market(argv[1], &a, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "amg_matrix_market: %s: %s\n", clmg_status_string(status), error.message);
    return 1;
  }
  size_t n = a.rows;
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
  clmg_context *context = NULL;
  clmg_options *options = NULL;
  clmg_solver *solver = NULL;
  clmg_krylov_result result = {0};
  int exit_code = 1;
  if (!b || !x) {
    fprintf(stderr, "amg_matrix_market: out of host memory\n");
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    x[i] = 1.0;
  clmg_csr_spmv_host(1.0, &a, x, 0.0, b); /* b = A * ones */
  for (size_t i = 0; i < n; ++i)
    x[i] = 0.0;

  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  context_options.device = argc > 2 ? argv[2] : NULL;
  if ((status = clmg_context_create(&context_options, &context)) != CLMG_SUCCESS) {
    fprintf(stderr, "amg_matrix_market: creating a context: %s: %s\n", clmg_status_string(status),
            clmg_context_message(context));
    goto done;
  }

  /* The solver, named; in float on a device without fp64. */
  status = clmg_options_create(&options, &error);
  if (status == CLMG_SUCCESS)
    status =
        clmg_options_parse(options, "krylov=auto precond=amg mg.smoother=patch mg.steps=2", &error);
  if (status == CLMG_SUCCESS && !clmg_context_device(context)->has_fp64)
    status = clmg_options_set(options, "precision", "float", &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "amg_matrix_market: %s\n", error.message);
    goto done;
  }
  if ((status = clmg_solver_create(context, &a, options, &solver)) == CLMG_SUCCESS)
    status = clmg_solver_solve_host(solver, b, x, &result);
  if (status != CLMG_SUCCESS) /* not converged: x is the last iterate, checked below */
    fprintf(stderr, "amg_matrix_market: %s: %s\n", clmg_status_string(status),
            clmg_context_message(context));
  if (!solver || (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED))
    goto done;

  /* The true residual, recomputed on the host. */
  double rr = 0, bb = 0;
  for (size_t i = 0; i < n; ++i)
    bb += b[i] * b[i];
  clmg_csr_spmv_host(-1.0, &a, x, 1.0, b); /* b becomes r = b - A x */
  for (size_t i = 0; i < n; ++i)
    rr += b[i] * b[i];
  double true_residual = sqrt(rr / (bb > 0 ? bb : 1.0));
  const clmg_multigrid *multigrid = clmg_solver_multigrid(solver);
  printf("system             %s: %zu unknowns, %zu nonzeros\n", argv[1], n, clmg_csr_nnz(&a));
  printf("AMG levels         %d (coarsest %zu rows)\n", clmg_multigrid_levels(multigrid),
         clmg_multigrid_operator(multigrid, 0)->rows);
  printf("method             %s with one AMG V-cycle (patch block Jacobi 2+2)\n",
         clmg_krylov_method_name(clmg_solver_method(solver)));
  printf("iterations         %d\n", result.iterations);
  printf("true residual      %.3e (||b - A x|| / ||b||, recomputed on the host)\n", true_residual);
  /* tol as the solver resolved it (auto: 1e-8, or 1e-5 in float) */
  double tolerance = strtod(clmg_options_get(clmg_solver_options(solver), "tol"), NULL);
  exit_code = true_residual <= tolerance ? 0 : 1;

done:
  clmg_krylov_result_free(&result);
  clmg_solver_destroy(solver);
  clmg_options_destroy(options);
  clmg_context_destroy(context);
  clmg_csr_free(&a);
  free(b);
  free(x);
  return exit_code;
}
