/* Algebraic multigrid on a Matrix Market system: smoothed aggregation built
 * from the matrix alone, with the patch block-Jacobi smoother, as the
 * preconditioner of CG (symmetric A) or GMRES (otherwise).
 *
 *   amg_matrix_market FILE.mtx [DEVICE]
 *
 * Reads A, sets b = A * ones (so the exact solution is known), builds the
 * AMG hierarchy on the host (clmg_amg_hierarchy_build), hands its levels to
 * the multigrid engine on the device with the patch smoother of every level
 * (clmg_amg_patch_smoother_factory), and solves to a relative residual of
 * 1e-8 (1e-5 without double precision) with one V-cycle per iteration.
 * Then it recomputes the true residual on the host and prints it with the
 * levels and iterations. Exits 0 when the recomputed residual meets the
 * tolerance, 1 otherwise.
 *
 * Try it on examples/data/poisson2d_32.mtx (CG) and
 * examples/data/convection_diffusion_pe100.mtx (GMRES). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>

static int report(const clmg_context *context, clmg_status status, const char *what) {
  fprintf(stderr, "amg_matrix_market: %s: %s: %s\n", what, clmg_status_string(status),
          context != NULL ? clmg_context_message(context) : "");
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: amg_matrix_market FILE.mtx [DEVICE]\n");
    return 2;
  }
  clmg_csr a_host = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_csr_read_matrix_market(argv[1], &a_host, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "amg_matrix_market: %s: %s\n", clmg_status_string(status), error.message);
    return 1;
  }
  size_t n = a_host.rows;
  double *b_host = malloc(n * sizeof *b_host), *x_host = malloc(n * sizeof *x_host);
  clmg_amg_hierarchy hierarchy = {0};
  clmg_context *context = NULL;
  clmg_matrix *a = NULL;
  clmg_multigrid *multigrid = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_preconditioner cycle = {0};
  clmg_operator op = {0};
  clmg_krylov_result result = {0};
  int exit_code = 1;
  if (b_host == NULL || x_host == NULL) {
    fprintf(stderr, "amg_matrix_market: out of host memory\n");
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    x_host[i] = 1.0;
  clmg_csr_spmv_host(1.0, &a_host, x_host, 0.0, b_host); /* b = A * ones */

  /* The hierarchy from the matrix alone: aggregates, smoothed P, P^T A P. */
  status = clmg_amg_hierarchy_build(&a_host, NULL, &hierarchy, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "amg_matrix_market: %s: %s\n", clmg_status_string(status), error.message);
    goto done;
  }

  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  context_options.device = argc > 2 ? argv[2] : NULL;
  if ((status = clmg_context_create(&context_options, &context)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "creating a context");
    goto done;
  }
  clmg_dtype precision = clmg_context_device(context)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;

  /* The engine runs the levels; every level but the coarsest is smoothed by
   * patch block Jacobi over the hierarchy's patches (2 steps before and
   * after the coarse correction). */
  clmg_amg_patch_smoothing smoothing = {&hierarchy, 0, 0, 0, 0}; /* 0: the defaults */
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  options.smoother_factory = clmg_amg_patch_smoother_factory;
  options.smoother_factory_data = &smoothing;
  options.matrix.precision = precision;
  status = clmg_multigrid_create(context, hierarchy.num_levels, hierarchy.a, hierarchy.p, NULL,
                                 &options, &multigrid);
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_preconditioner(multigrid, &cycle);
  if (status != CLMG_SUCCESS) {
    exit_code = report(context, status, "building the AMG preconditioner");
    goto done;
  }

  /* A, b and x = 0 on the device; CG for a symmetric A, else GMRES. */
  clmg_matrix_options matrix_options;
  clmg_matrix_options_defaults(&matrix_options);
  matrix_options.precision = precision;
  if ((status = clmg_matrix_create(context, &a_host, &matrix_options, &a)) != CLMG_SUCCESS ||
      (status = clmg_operator_from_matrix(a, 0, &op)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, precision, n, &b)) != CLMG_SUCCESS ||
      (status = clmg_vector_create(context, precision, n, &x)) != CLMG_SUCCESS ||
      (status = clmg_vector_upload_doubles(b, b_host)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "uploading the system");
    goto done;
  }
  clmg_krylov_method method =
      clmg_csr_is_symmetric(&a_host, 1e-12) ? CLMG_KRYLOV_CG : CLMG_KRYLOV_GMRES;
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = precision == CLMG_DOUBLE ? 1e-8 : 1e-5;
  status = clmg_krylov_solve(method, &op, b, x, &cycle, &krylov, &result);
  if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED) {
    exit_code = report(context, status, "solving");
    goto done;
  }

  /* The true residual, recomputed on the host. */
  if ((status = clmg_vector_download_doubles(x, x_host)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "downloading x");
    goto done;
  }
  double rr = 0, bb = 0;
  for (size_t i = 0; i < n; ++i)
    bb += b_host[i] * b_host[i];
  clmg_csr_spmv_host(-1.0, &a_host, x_host, 1.0, b_host); /* b becomes r = b - A x */
  for (size_t i = 0; i < n; ++i)
    rr += b_host[i] * b_host[i];
  double true_residual = sqrt(rr / (bb > 0 ? bb : 1.0));
  printf("system             %s: %zu unknowns, %zu nonzeros\n", argv[1], n, clmg_csr_nnz(&a_host));
  printf("AMG levels         %d (coarsest %zu rows)\n", hierarchy.num_levels, hierarchy.a[0].rows);
  printf("method             %s with one AMG V-cycle (patch block Jacobi 2+2)\n",
         clmg_krylov_method_name(method));
  printf("iterations         %d\n", result.iterations);
  printf("true residual      %.3e (||b - A x|| / ||b||, recomputed on the host)\n", true_residual);
  exit_code = true_residual <= krylov.relative_tolerance ? 0 : 1;

done:
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&cycle);
  clmg_operator_destroy(&op);
  clmg_multigrid_destroy(multigrid);
  clmg_matrix_destroy(a);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_context_destroy(context);
  clmg_amg_hierarchy_free(&hierarchy);
  clmg_csr_free(&a_host);
  free(b_host);
  free(x_host);
  return exit_code;
}
