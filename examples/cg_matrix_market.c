/* Conjugate gradients on a symmetric positive definite Matrix Market system.
 *
 *   cg_matrix_market FILE.mtx [DEVICE]
 *
 * Reads A from FILE.mtx (clmg's Matrix Market reader), sets b = A * ones so
 * that the exact solution is known, uploads A in the format clmg picks for
 * the device, and solves A x = b with Jacobi-preconditioned CG on the device,
 * to a relative residual of 1e-8 (1e-5 on a device without double
 * precision). Then it downloads x, recomputes the true residual
 * ||b - A x|| / ||b|| on the host, in double, and prints it with the
 * iterations and the error against the exact solution.
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

/* Prints a failed call's status and the context's message; returns 1. */
static int report(const clmg_context *context, clmg_status status, const char *what) {
  fprintf(stderr, "cg_matrix_market: %s: %s: %s\n", what, clmg_status_string(status),
          context != NULL ? clmg_context_message(context) : "");
  return 1;
}

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

  /* ---- the system on the host ---- */
  clmg_csr a_host = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_csr_read_matrix_market(path, &a_host, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "cg_matrix_market: %s: %s\n", clmg_status_string(status), error.message);
    return 1;
  }
  size_t n = a_host.rows;
  if (a_host.cols != n || !clmg_csr_is_symmetric(&a_host, 1e-12)) {
    fprintf(stderr, "cg_matrix_market: %s: CG needs a square symmetric matrix\n", path);
    clmg_csr_free(&a_host);
    return 1;
  }
  double *ones = malloc(n * sizeof *ones);
  double *b_host = malloc(n * sizeof *b_host);
  double *x_host = malloc(n * sizeof *x_host);
  double *r_host = malloc(n * sizeof *r_host);

  clmg_context *context = NULL;
  clmg_matrix *a = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_preconditioner jacobi = {0};
  clmg_krylov_result result = {0};
  int exit_code = 1;
  if (ones == NULL || b_host == NULL || x_host == NULL || r_host == NULL) {
    fprintf(stderr, "cg_matrix_market: out of host memory\n");
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    ones[i] = 1.0;
  clmg_csr_spmv_host(1.0, &a_host, ones, 0.0, b_host); /* b = A * ones */

  /* ---- the device ---- */
  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  context_options.device = argc > 2 ? argv[2] : NULL;
  status = clmg_context_create(&context_options, &context);
  if (status != CLMG_SUCCESS) {
    exit_code = report(context, status, "creating a context");
    goto done;
  }
  const clmg_device_info *device = clmg_context_device(context);
  clmg_dtype precision = device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;

  /* Upload A (format chosen for the device), b, and x = 0. */
  clmg_matrix_options matrix_options;
  clmg_matrix_options_defaults(&matrix_options);
  matrix_options.precision = precision;
  if ((status = clmg_matrix_create(context, &a_host, &matrix_options, &a)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, precision, n, &b)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, precision, n, &x)) != CLMG_SUCCESS ||
      (status = clmg_vector_upload_doubles(b, b_host)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "uploading the system");
    goto done;
  }

  /* Jacobi-preconditioned CG to a relative residual of tolerance. */
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = precision == CLMG_DOUBLE ? 1e-8 : 1e-5;
  options.max_iterations = 10000;
  if ((status = clmg_preconditioner_jacobi(a, &jacobi)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "making the Jacobi preconditioner");
    goto done;
  }
  clmg_status solve_status = clmg_cg(a, b, x, &jacobi, &options, &result);
  if (solve_status != CLMG_SUCCESS && solve_status != CLMG_ERROR_NOT_CONVERGED) {
    exit_code = report(context, solve_status, "clmg_cg");
    goto done;
  }
  if (solve_status == CLMG_ERROR_NOT_CONVERGED)
    report(context, solve_status, "clmg_cg");

  /* The true residual, recomputed on the host from the downloaded x. */
  if ((status = clmg_vector_download_doubles(x, x_host)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "downloading x");
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    r_host[i] = b_host[i];
  clmg_csr_spmv_host(-1.0, &a_host, x_host, 1.0, r_host); /* r = b - A x */
  double b_norm = norm2(b_host, n);
  double true_residual = norm2(r_host, n) / (b_norm > 0 ? b_norm : 1.0);
  double max_error = 0;
  for (size_t i = 0; i < n; ++i)
    max_error = fmax(max_error, fabs(x_host[i] - 1.0));

  printf("device             %s (%s)\n", device->name, device->platform_name);
  printf("system             %s: %zu unknowns, %zu nonzeros, %s in %s\n", path, n,
         clmg_csr_nnz(&a_host), clmg_matrix_describe(a), clmg_dtype_name(precision));
  printf("method             CG with %s, tolerance %.0e\n", jacobi.name,
         options.relative_tolerance);
  printf("iterations         %d\n", result.iterations);
  printf("reported residual  %.3e (converged: %s)\n", result.relative_residual,
         result.converged ? "yes" : "no");
  printf("true residual      %.3e (||b - A x|| / ||b||, recomputed on the host)\n", true_residual);
  printf("error vs ones      %.3e (max |x_i - 1|)\n", max_error);
  if (solve_status == CLMG_SUCCESS && true_residual <= options.relative_tolerance) {
    printf("OK\n");
    exit_code = 0;
  } else {
    printf("FAILED: the true residual does not meet the tolerance\n");
  }

done:
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&jacobi);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_matrix_destroy(a);
  clmg_context_destroy(context);
  clmg_csr_free(&a_host);
  free(ones);
  free(b_host);
  free(x_host);
  free(r_host);
  return exit_code;
}
