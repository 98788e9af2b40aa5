/* The README's example: a Matrix Market system solved by CG preconditioned
 * with smoothed-aggregation AMG, the AMG built from the matrix alone in one
 * call (clmg_amg_multigrid_create with its defaults: Chebyshev smoothing,
 * the products on the device on a GPU).
 *
 *   CLMG_DEVICE=pocl quickstart FILE.mtx
 *
 * The device is $CLMG_DEVICE, else the first GPU, else the first CPU.
 * b = 1, x = 0, CG to a relative residual of 1e-8 in double precision (a
 * device without fp64 is refused with a message). Prints the iterations
 * and the residual; exits 0 when CG converged, 1 otherwise.
 *
 * Try it on examples/data/poisson2d_32.mtx. */
#include <stdio.h>

#include <clmg.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: quickstart FILE.mtx (the device: $CLMG_DEVICE)\n");
    return 2;
  }
  clmg_csr csr = {0};
  clmg_error error = {{0}};
  clmg_context *context = NULL;
  clmg_multigrid *amg = NULL;
  clmg_preconditioner cycle = {0};
  clmg_matrix *a = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_krylov_result result = {0};
  clmg_status status = clmg_csr_read_matrix_market(argv[1], &csr, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "quickstart: %s\n", error.message);
    return 1;
  }
  if ((status = clmg_context_create(NULL, &context)) != CLMG_SUCCESS ||
      (status = clmg_amg_multigrid_create(context, &csr, NULL, NULL, NULL, &amg)) != CLMG_SUCCESS ||
      (status = clmg_multigrid_preconditioner(amg, &cycle)) != CLMG_SUCCESS ||
      (status = clmg_matrix_create(context, &csr, NULL, &a)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, CLMG_DOUBLE, csr.rows, &b)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, CLMG_DOUBLE, csr.rows, &x)) != CLMG_SUCCESS ||
      (status = clmg_vector_fill(b, 1.0)) != CLMG_SUCCESS ||
      (status = clmg_cg(a, b, x, &cycle, NULL, &result)) != CLMG_SUCCESS)
    fprintf(stderr, "quickstart: %s: %s\n", clmg_status_string(status),
            clmg_context_message(context));
  else
    printf("AMG-CG: %d iterations, residual %.2e\n", result.iterations, result.relative_residual);

  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&cycle); /* before the multigrid it borrows */
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_matrix_destroy(a);
  clmg_multigrid_destroy(amg);
  clmg_context_destroy(context);
  clmg_csr_free(&csr);
  return status == CLMG_SUCCESS ? 0 : 1;
}
