/* The README's example: a Matrix Market system solved as the options say,
 * by default CG preconditioned with smoothed-aggregation AMG (the options
 * layer, clmg/solver.h, composes the solver from "krylov=cg precond=amg
 * tol=1e-8" and the options given after the file).
 *
 *   CLMG_DEVICE=pocl quickstart FILE.mtx ["key=value ..."]
 *
 * The device is $CLMG_DEVICE, else the first GPU, else the first CPU.
 * b = 1, x = 0. Prints the iterations and the relative residual; exits 0
 * when the solve converged, 1 otherwise. `clmg help options` lists the keys.
 *
 * Try it on examples/data/poisson2d_32.mtx, also with "mg.smoother=jacobi-rho". */
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: quickstart FILE.mtx [\"key=value ...\"] (the device: $CLMG_DEVICE)\n");
    return 2;
  }
  clmg_csr a = {0};
  clmg_error error = {{0}};
  clmg_options *options = NULL;
  clmg_context *context = NULL;
  clmg_solver *solver = NULL;
  clmg_krylov_result result = {0};
  double *b = NULL, *x = NULL;
  clmg_status status = clmg_csr_read_matrix_market(argv[1], &a, &error);
  if (status == CLMG_SUCCESS && (status = clmg_options_create(&options, &error)) == CLMG_SUCCESS)
    status = clmg_options_parse(options, "krylov=cg precond=amg tol=1e-8", &error);
  if (status == CLMG_SUCCESS && argc == 3) /* the caller's options over the defaults */
    status = clmg_options_parse(options, argv[2], &error);
  if (status != CLMG_SUCCESS)
    fprintf(stderr, "quickstart: %s\n", error.message);
  else if (!(b = malloc(a.rows * sizeof *b)) || !(x = calloc(a.rows, sizeof *x)))
    status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
  for (size_t i = 0; b && i < a.rows; i++)
    b[i] = 1.0;
  if (status == CLMG_SUCCESS &&
      ((status = clmg_context_create(NULL, &context)) != CLMG_SUCCESS ||
       (status = clmg_solver_create(context, &a, options, &solver)) != CLMG_SUCCESS ||
       (status = clmg_solver_solve_host(solver, b, x, &result)) != CLMG_SUCCESS))
    fprintf(stderr, "quickstart: %s: %s\n", clmg_status_string(status),
            clmg_context_message(context));
  else if (status == CLMG_SUCCESS)
    printf("%d iterations, residual %.2e\n", result.iterations, result.relative_residual);

  clmg_krylov_result_free(&result);
  clmg_solver_destroy(solver);
  clmg_context_destroy(context);
  clmg_options_destroy(options);
  clmg_csr_free(&a);
  free(b);
  free(x);
  return status == CLMG_SUCCESS ? 0 : 1;
}
