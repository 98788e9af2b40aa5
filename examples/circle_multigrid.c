/* Geometric multigrid on the CIRCLE benchmark, the solution written as VTU.
 *
 *   circle_multigrid [LEVEL [OUTPUT.vtu [DEVICE]]]
 *
 * CIRCLE (Geveler et al. 2011, section 4.2) is -Laplace(u) = 1 on the square
 * [-1,1]^2 with a circular hole of radius 0.5, u = 0 on the square and u = 1
 * on the circle. The program refines the 16-vertex coarse mesh LEVEL - 1
 * times (default LEVEL 6: 8,448 unknowns), assembles the Q1 matrices and
 * grid transfers of every level on the host in Cuthill-McKee numbering,
 * uploads them once and solves with V-cycles on the device, the solver
 * named by options ("krylov=none precond=multigrid mg.cycle=v
 * mg.smoother=jacobi mg.steps=4 mg.omega=0.7 tol=1e-8": the same keys as
 * clmg poisson --set), to a relative residual of 1e-8 (1e-5 and float on a
 * device without double precision). It
 * recomputes the true residual on the host from the downloaded solution and
 * writes u to OUTPUT.vtu (default circle.vtu; open it in ParaView).
 *
 * DEVICE: nvidia, pocl, gpu, cpu, P:D, ... (default: $CLMG_DEVICE, else the
 * first GPU, else the first CPU). Exits 0 when the solve converged and the
 * recomputed residual meets the tolerance, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clmg.h>

static int report(const clmg_context *context, clmg_status status, const char *what) {
  fprintf(stderr, "circle_multigrid: %s: %s: %s\n", what, clmg_status_string(status),
          context != NULL ? clmg_context_message(context) : "");
  return 1;
}

int main(int argc, char **argv) {
  int level = argc > 1 ? atoi(argv[1]) : 6;
  const char *output = argc > 2 ? argv[2] : "circle.vtu";
  if (argc > 4 || level < 2 || level > 12) {
    fprintf(stderr, "usage: circle_multigrid [LEVEL (2-12) [OUTPUT.vtu [DEVICE]]]\n");
    return 2;
  }

  clmg_mesh coarse = {0};
  clmg_fe_hierarchy h = {0};
  clmg_context *context = NULL;
  clmg_multigrid *mg = NULL;
  clmg_options *db = NULL;
  clmg_solver *solver = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_krylov_result result = {0};
  double *u = NULL, *u_mesh = NULL, *r = NULL;
  int exit_code = 1;

  /* ---- the hierarchy on the host: meshes, Q1 matrices, grid transfers ---- */
  clmg_error error = {{0}};
  clmg_poisson_problem problem;
  clmg_poisson_problem_circle(&problem); /* -Laplace(u) = 1, u = 0 / 1 on square / circle */
  clmg_status status = clmg_mesh_circle(&coarse, &error);
  if (status == CLMG_SUCCESS)
    status =
        clmg_fe_poisson_hierarchy(&coarse, level, 1, &problem, CLMG_NUMBERING_CM, 1, &h, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "circle_multigrid: %s: %s\n", clmg_status_string(status), error.message);
    goto done;
  }
  int finest = h.num_levels - 1;
  size_t n = h.a[finest].rows;

  /* ---- the device: upload the hierarchy once, then V-cycles to 1e-8 ---- */
  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  context_options.device = argc > 3 ? argv[3] : NULL;
  if ((status = clmg_context_create(&context_options, &context)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "creating a context");
    goto done;
  }
  const clmg_device_info *device = clmg_context_device(context);
  clmg_dtype precision = device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;

  /* the solver as data: the hierarchy's cycle from the mg.* keys, the
   * solve (cycles alone, tolerance, limit) from the rest */
  status = clmg_options_create(&db, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_parse(db,
                                "krylov=none precond=multigrid mg.cycle=v mg.smoother=jacobi "
                                "mg.steps=4 mg.omega=0.7 maxit=100",
                                &error);
  if (status == CLMG_SUCCESS)
    status =
        clmg_options_set(db, "precision", precision == CLMG_DOUBLE ? "double" : "float", &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_set(db, "tol", precision == CLMG_DOUBLE ? "1e-8" : "1e-5", &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "circle_multigrid: %s: %s\n", clmg_status_string(status), error.message);
    goto done;
  }
  clmg_multigrid_options options;
  status = clmg_options_multigrid(db, context, &options);
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_create(context, h.num_levels, h.a, h.p, h.r, &options, &mg);
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_multigrid(context, clmg_multigrid_operator(mg, finest), mg, 1, db,
                                          &solver);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, n, &b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, n, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(b, h.b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(x, h.x0); /* boundary values, 0 inside */
  if (status != CLMG_SUCCESS) {
    exit_code = report(context, status, "setting up the multigrid solver");
    goto done;
  }

  clmg_status solve_status = clmg_solver_solve(solver, b, x, &result);
  if (solve_status != CLMG_SUCCESS && solve_status != CLMG_ERROR_NOT_CONVERGED) {
    exit_code = report(context, solve_status, "clmg_solver_solve");
    goto done;
  }
  if (solve_status == CLMG_ERROR_NOT_CONVERGED)
    report(context, solve_status, "clmg_solver_solve");

  /* ---- check on the host, then write the solution ---- */
  u = malloc(n * sizeof *u);
  u_mesh = malloc(n * sizeof *u_mesh);
  r = malloc(n * sizeof *r);
  if (u == NULL || u_mesh == NULL || r == NULL) {
    fprintf(stderr, "circle_multigrid: out of host memory\n");
    goto done;
  }
  if ((status = clmg_vector_download_doubles(x, u)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "downloading the solution");
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    r[i] = h.b[i];
  clmg_csr_spmv_host(-1.0, &h.a[finest], u, 1.0, r); /* r = b - A u */
  double r_norm = 0, b_norm = 0, u_min = INFINITY, u_max = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    r_norm += r[i] * r[i];
    b_norm += h.b[i] * h.b[i];
    u_min = fmin(u_min, u[i]);
    u_max = fmax(u_max, u[i]);
  }
  double true_residual = sqrt(r_norm) / sqrt(b_norm);

  clmg_fe_hierarchy_unpermute(&h, u, u_mesh); /* back to the mesh's node order */
  clmg_mesh_field field = {"u", u_mesh};
  status = clmg_mesh_write_vtu(output, &h.meshes[finest], 1, &field, 1, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "circle_multigrid: %s: %s\n", clmg_status_string(status), error.message);
    goto done;
  }

  printf("device             %s (%s)\n", device->name, device->platform_name);
  printf("problem            CIRCLE, Q1, level %d: %zu unknowns, %zu nonzeros\n", level, n,
         clmg_csr_nnz(&h.a[finest]));
  printf("multigrid          %d levels, V-cycle, %s %d+%d, coarse solve %s, %s\n",
         clmg_multigrid_levels(mg), clmg_multigrid_smoother_name(mg, finest), options.pre_smoothing,
         options.post_smoothing, clmg_multigrid_coarse_solver(mg), clmg_dtype_name(precision));
  printf("cycles             %d\n", result.iterations);
  printf("reported residual  %.3e (converged: %s)\n", result.relative_residual,
         result.converged ? "yes" : "no");
  printf("true residual      %.3e (||b - A u|| / ||b||, recomputed on the host)\n", true_residual);
  printf("solution           %.4f <= u <= %.4f, written to %s\n", u_min, u_max, output);
  /* The maximum principle: u lies between its boundary values 0 and 1. */
  double tolerance = strtod(clmg_options_get(db, "tol"), NULL);
  if (solve_status == CLMG_SUCCESS && true_residual <= tolerance && u_min > -1e-6 &&
      u_max < 1 + 1e-6) {
    printf("OK\n");
    exit_code = 0;
  } else {
    printf("FAILED: not converged to the tolerance, or u outside [0, 1]\n");
  }

done:
  free(u);
  free(u_mesh);
  free(r);
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_solver_destroy(solver);
  clmg_multigrid_destroy(mg);
  clmg_options_destroy(db);
  clmg_context_destroy(context);
  clmg_fe_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
  return exit_code;
}
