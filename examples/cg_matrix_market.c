/* Conjugate gradients on a symmetric positive definite Matrix Market system,
 * the solver named by the options layer (clmg/solver.h): "krylov=cg
 * precond=jacobi".
 *
 *   cg_matrix_market FILE.mtx [DEVICE]
 *
 * Reads A from FILE.mtx (clmg's Matrix Market reader), sets b = A * ones so
 * that the exact solution is known, and lets clmg_solver_create upload A in
 * the format clmg picks for the device and compose Jacobi-preconditioned CG,
 * which solves A x = b to a relative residual of 1e-8 (tol=auto: 1e-5 in
 * float, on a device without double precision). Then it recomputes the
 * true residual ||b - A x|| / ||b|| on the host, in double, and prints it
 * with the iterations and the error against the exact solution.
 *
 * DEVICE: nvidia, pocl, gpu, cpu, P:D, ... (default: $CLMG_DEVICE, else the
 * first GPU, else the first CPU). Exits 0 when the solve converged and the
 * recomputed residual meets the tolerance, 1 otherwise.
 *
 * Try it on examples/data/poisson2d_32.mtx. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>

static double norm2(const double *v, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i)
    sum += v[i] * v[i];
  return sqrt(sum);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: cg_matrix_market FILE.mtx [DEVICE]\n");
    return 2;
  }
  const char *path = argv[1];
  clmg_csr a = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_csr_read_matrix_market(path, &a, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "cg_matrix_market: %s: %s\n", clmg_status_string(status), error.message);
    return 1;
  }
  size_t n = a.rows;
  if (a.cols != n || !clmg_csr_is_symmetric(&a, 1e-12)) {
    fprintf(stderr, "cg_matrix_market: %s: CG needs a square symmetric matrix\n", path);
    clmg_csr_free(&a);
    return 1;
  }
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
  clmg_context *context = NULL;
  clmg_options *options = NULL;
  clmg_solver *solver = NULL;
  clmg_krylov_result result = {0};
  int exit_code = 1;
  if (!b || !x || !r) {
    fprintf(stderr, "cg_matrix_market: out of host memory\n");
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
    fprintf(stderr, "cg_matrix_market: creating a context: %s: %s\n", clmg_status_string(status),
            clmg_context_message(context));
    goto done;
  }
  const clmg_device_info *device = clmg_context_device(context);

  /* The solver, named: Jacobi-preconditioned CG, in float without fp64. */
  status = clmg_options_create(&options, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_parse(options, "krylov=cg precond=jacobi maxit=10000", &error);
  if (status == CLMG_SUCCESS && !device->has_fp64)
    status = clmg_options_set(options, "precision", "float", &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "cg_matrix_market: %s\n", error.message);
    goto done;
  }
  if ((status = clmg_solver_create(context, &a, options, &solver)) == CLMG_SUCCESS)
    status = clmg_solver_solve_host(solver, b, x, &result);
  if (status != CLMG_SUCCESS) /* not converged: x is the last iterate, checked below */
    fprintf(stderr, "cg_matrix_market: %s: %s\n", clmg_status_string(status),
            clmg_context_message(context));
  if (!solver || (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED))
    goto done;

  /* The true residual, recomputed on the host from x. */
  for (size_t i = 0; i < n; ++i)
    r[i] = b[i];
  clmg_csr_spmv_host(-1.0, &a, x, 1.0, r); /* r = b - A x */
  double b_norm = norm2(b, n);
  double true_residual = norm2(r, n) / (b_norm > 0 ? b_norm : 1.0);
  double max_error = 0;
  for (size_t i = 0; i < n; ++i)
    max_error = fmax(max_error, fabs(x[i] - 1.0));
  /* the options as the solver resolved them: tol=auto became a number */
  double tolerance = strtod(clmg_options_get(clmg_solver_options(solver), "tol"), NULL);

  printf("device             %s (%s)\n", device->name, device->platform_name);
  printf("system             %s: %zu unknowns, %zu nonzeros, %s in %s\n", path, n, clmg_csr_nnz(&a),
         clmg_matrix_describe(clmg_solver_matrix(solver)),
         clmg_dtype_name(clmg_solver_precision(solver)));
  printf("method             CG with jacobi, tolerance %.0e\n", tolerance);
  printf("iterations         %d\n", result.iterations);
  printf("reported residual  %.3e (converged: %s)\n", result.relative_residual,
         result.converged ? "yes" : "no");
  printf("true residual      %.3e (||b - A x|| / ||b||, recomputed on the host)\n", true_residual);
  printf("error vs ones      %.3e (max |x_i - 1|)\n", max_error);
  if (status == CLMG_SUCCESS && true_residual <= tolerance) {
    printf("OK\n");
    exit_code = 0;
  } else {
    printf("FAILED: the true residual does not meet the tolerance\n");
  }

done:
  clmg_krylov_result_free(&result);
  clmg_solver_destroy(solver);
  clmg_options_destroy(options);
  clmg_context_destroy(context);
  clmg_csr_free(&a);
  free(b);
  free(x);
  free(r);
  return exit_code;
}
