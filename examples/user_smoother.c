/* A smoother written outside the library, plugged into clmg's multigrid engine.
 *
 *   user_smoother [LEVEL [DEVICE]]
 *
 * The smoother is damped Jacobi, x += omega D^-1 (b - A x), whose damping it
 * chooses itself on every level: omega = 4 / (3 lambda), lambda an estimate
 * of the largest eigenvalue of D^-1 A from ten power-iteration steps, raised
 * by 10% (the omega that damps the upper half of the spectrum best). It is
 * made only of public calls: the operator interface (clmg_operator_apply,
 * clmg_operator_defect, the operator's diagonal) and BLAS-1 on device
 * vectors. It is registered on the context under a name
 * (clmg_register_smoother), so that the options layer (clmg/solver.h) can
 * ask for it like a built-in one ("mg.smoother=scaled-jacobi"); the engine
 * calls its setup once per level, its apply in every cycle.
 *
 * The problem: -Laplace(u) = 1 on the unit square, u = 0 on the boundary, Q1
 * elements on a grid of 4 x 4 cells whose interior vertices are moved at
 * random by up to 20% of a cell, refined LEVEL - 1 times (default LEVEL 6:
 * 129 x 129 nodes). The multigrid V(2,2) cycle preconditions CG to a relative
 * residual of 1e-8 (1e-5 without double precision); the program recomputes
 * the true residual on the host and checks that every level used the user's
 * smoother.
 *
 * DEVICE: nvidia, pocl, gpu, cpu, P:D, ... (default: $CLMG_DEVICE, else the
 * first GPU, else the first CPU). Exits 0 on success, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clmg.h>

/* ---- the user's smoother ---- */

typedef struct scaled_jacobi {
  clmg_vector *weights; /* omega / a_ii */
  clmg_vector *defect;  /* work vector */
  double lambda_max;    /* of D^-1 A, raised by 10% */
  double omega;
} scaled_jacobi;

static void scaled_jacobi_release(scaled_jacobi *s) {
  clmg_vector_destroy(s->weights);
  clmg_vector_destroy(s->defect);
  s->weights = s->defect = NULL;
}

/* Called by the engine when the hierarchy is made (and again by
 * clmg_multigrid_refresh): inverts the diagonal, estimates lambda_max of
 * D^-1 A and scales the inverse diagonal by omega. */
static clmg_status scaled_jacobi_setup(void *data, const clmg_operator *a) {
  scaled_jacobi *s = data;
  if (a->diagonal == NULL)
    return CLMG_ERROR_UNSUPPORTED; /* this smoother needs the operator's diagonal */
  scaled_jacobi_release(s);
  size_t n = a->rows;
  clmg_vector *v = NULL, *w = NULL;
  double *host = malloc(n * sizeof *host);
  if (host == NULL)
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;

  /* weights = 1 / diag(A), inverted on the host */
  clmg_status status = clmg_vector_create(a->context, a->precision, n, &s->weights);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(a->context, a->precision, n, &s->defect);
  if (status == CLMG_SUCCESS)
    status = a->diagonal(a->data, s->weights);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(s->weights, host);
  for (size_t i = 0; i < n && status == CLMG_SUCCESS; ++i) {
    if (host[i] == 0.0)
      status = CLMG_ERROR_INVALID_ARGUMENT; /* Jacobi needs a nonzero diagonal */
    else
      host[i] = 1.0 / host[i];
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(s->weights, host);

  /* lambda_max of D^-1 A by power iteration from a random unit vector */
  srand(2026);
  for (size_t i = 0; i < n; ++i)
    host[i] = (double)rand() / RAND_MAX - 0.5;
  double norm = 0, lambda = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(a->context, a->precision, n, &v);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(a->context, a->precision, n, &w);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(v, host);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(v, &norm);
  if (status == CLMG_SUCCESS)
    status = clmg_scal(1.0 / norm, v);
  for (int k = 0; k < 10 && status == CLMG_SUCCESS; ++k) {
    status = clmg_operator_apply(a, 1.0, v, 0.0, w); /* w = A v */
    if (status == CLMG_SUCCESS)
      status = clmg_pointwise_multiply(s->weights, w, w); /* w = D^-1 A v */
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(w, &lambda); /* ||D^-1 A v|| with ||v|| = 1 */
    if (status == CLMG_SUCCESS && !(lambda > 0))
      status = CLMG_ERROR_INVALID_ARGUMENT;
    if (status == CLMG_SUCCESS)
      status = clmg_scal(1.0 / lambda, w);
    clmg_vector *swap = v;
    v = w;
    w = swap;
  }
  if (status == CLMG_SUCCESS) {
    s->lambda_max = 1.1 * lambda;
    s->omega = 4.0 / (3.0 * s->lambda_max);
    status = clmg_scal(s->omega, s->weights); /* weights = omega D^-1 */
  }
  clmg_vector_destroy(v);
  clmg_vector_destroy(w);
  free(host);
  return status;
}

/* `steps` steps of x += omega D^-1 (b - A x); with x_is_zero the first step
 * is x = omega D^-1 b, without reading x. */
static clmg_status scaled_jacobi_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                                       clmg_vector *x, int steps, int x_is_zero) {
  scaled_jacobi *s = data;
  clmg_status status = CLMG_SUCCESS;
  int step = 0;
  if (x_is_zero) {
    status = clmg_pointwise_multiply(s->weights, b, x);
    step = 1;
  }
  for (; step < steps && status == CLMG_SUCCESS; ++step) {
    status = clmg_operator_defect(a, b, x, s->defect); /* d = b - A x */
    if (status == CLMG_SUCCESS)
      status = clmg_pointwise_multiply(s->weights, s->defect, s->defect); /* d = omega D^-1 d */
    if (status == CLMG_SUCCESS)
      status = clmg_axpy(1.0, s->defect, x); /* x += d */
  }
  return status;
}

static double scaled_jacobi_damping(void *data) {
  return ((scaled_jacobi *)data)->omega;
}
static double scaled_jacobi_lambda(void *data) {
  return ((scaled_jacobi *)data)->lambda_max;
}

static void scaled_jacobi_destroy(void *data) {
  scaled_jacobi_release(data);
  free(data);
}

/* The factory the engine calls for every level but the coarsest. */
static clmg_status make_scaled_jacobi(void *factory_data, clmg_context *context, int level,
                                      const clmg_operator *a, clmg_smoother *smoother) {
  (void)context;
  (void)level;
  (void)a;
  int *made = factory_data;
  scaled_jacobi *s = calloc(1, sizeof *s);
  if (s == NULL)
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  memset(smoother, 0, sizeof *smoother);
  smoother->data = s;
  smoother->name = "scaled-jacobi";
  smoother->setup = scaled_jacobi_setup;
  smoother->apply = scaled_jacobi_apply;
  smoother->damping = scaled_jacobi_damping;
  smoother->parameter = scaled_jacobi_lambda;
  smoother->destroy = scaled_jacobi_destroy;
  ++*made;
  return CLMG_SUCCESS;
}

/* ---- the program ---- */

static int report(const clmg_context *context, clmg_status status, const char *what) {
  fprintf(stderr, "user_smoother: %s: %s: %s\n", what, clmg_status_string(status),
          context != NULL ? clmg_context_message(context) : "");
  return 1;
}

int main(int argc, char **argv) {
  int level = argc > 1 ? atoi(argv[1]) : 6;
  if (argc > 3 || level < 2 || level > 10) {
    fprintf(stderr, "usage: user_smoother [LEVEL (2-10) [DEVICE]]\n");
    return 2;
  }
  clmg_mesh coarse = {0};
  clmg_fe_hierarchy h = {0};
  clmg_context *context = NULL;
  clmg_multigrid *mg = NULL;
  clmg_options *solver_options = NULL;
  clmg_solver *solver = NULL;
  clmg_vector *b = NULL, *x = NULL;
  clmg_krylov_result result = {0};
  double *u = NULL, *r = NULL;
  int exit_code = 1;

  /* The hierarchy on the host: a distorted unit square, Q1, -Laplace(u) = 1. */
  clmg_error error = {{0}};
  clmg_poisson_problem problem;
  clmg_poisson_problem_unit_source(&problem);
  clmg_status status = clmg_mesh_box(2, 4, 0.2, 7, &coarse, &error);
  if (status == CLMG_SUCCESS)
    status =
        clmg_fe_poisson_hierarchy(&coarse, level, 1, &problem, CLMG_NUMBERING_CM, 1, &h, &error);
  if (status != CLMG_SUCCESS) {
    fprintf(stderr, "user_smoother: %s: %s\n", clmg_status_string(status), error.message);
    goto done;
  }
  int finest = h.num_levels - 1;
  size_t n = h.a[finest].rows;

  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  context_options.device = argc > 2 ? argv[2] : NULL;
  if ((status = clmg_context_create(&context_options, &context)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "creating a context");
    goto done;
  }
  const clmg_device_info *device = clmg_context_device(context);
  clmg_dtype precision = device->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;

  /* The user's smoother under a name, asked for by the options: V(2,2)
   * cycles of it precondition CG (tol=auto: 1e-8, in float 1e-5). */
  int smoothers_made = 0;
  status = clmg_register_smoother(context, "scaled-jacobi", make_scaled_jacobi, &smoothers_made);
  if (status == CLMG_SUCCESS)
    status = clmg_options_create(&solver_options, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_parse(solver_options,
                                precision == CLMG_DOUBLE
                                    ? "krylov=cg mg.smoother=scaled-jacobi mg.steps=2 maxit=200"
                                    : "krylov=cg mg.smoother=scaled-jacobi mg.steps=2 maxit=200 "
                                      "precision=float",
                                &error);
  clmg_multigrid_options options;
  if (status == CLMG_SUCCESS)
    status = clmg_options_multigrid(solver_options, context, &options); /* its factory too */
  options.matrix.precision = precision;
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_create(context, h.num_levels, h.a, h.p, h.r, &options, &mg);
  if (status == CLMG_SUCCESS) /* CG around the hierarchy: precond=multigrid */
    status = clmg_solver_create_multigrid(context, clmg_multigrid_operator(mg, finest), mg, 1,
                                          solver_options, &solver);
  if (status != CLMG_SUCCESS) {
    exit_code = report(context, status, "building the solver");
    if (status == CLMG_ERROR_INVALID_ARGUMENT && error.message[0])
      fprintf(stderr, "user_smoother: %s\n", error.message);
    goto done;
  }

  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, n, &b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, n, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(b, h.b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(x, h.x0);
  if (status != CLMG_SUCCESS) {
    exit_code = report(context, status, "setting up the solve");
    goto done;
  }
  clmg_status solve_status = clmg_solver_solve(solver, b, x, &result);
  if (solve_status != CLMG_SUCCESS && solve_status != CLMG_ERROR_NOT_CONVERGED) {
    exit_code = report(context, solve_status, "clmg_solver_solve");
    goto done;
  }
  if (solve_status == CLMG_ERROR_NOT_CONVERGED)
    report(context, solve_status, "clmg_solver_solve");

  /* The true residual, recomputed on the host. */
  u = malloc(n * sizeof *u);
  r = malloc(n * sizeof *r);
  if (u == NULL || r == NULL) {
    fprintf(stderr, "user_smoother: out of host memory\n");
    goto done;
  }
  if ((status = clmg_vector_download_doubles(x, u)) != CLMG_SUCCESS) {
    exit_code = report(context, status, "downloading the solution");
    goto done;
  }
  memcpy(r, h.b, n * sizeof *r);
  clmg_csr_spmv_host(-1.0, &h.a[finest], u, 1.0, r); /* r = b - A u */
  double r_norm = 0, b_norm = 0;
  for (size_t i = 0; i < n; ++i) {
    r_norm += r[i] * r[i];
    b_norm += h.b[i] * h.b[i];
  }
  double true_residual = sqrt(r_norm / b_norm);

  printf("device             %s (%s)\n", device->name, device->platform_name);
  printf("problem            unit square, distorted, Q1, level %d: %zu unknowns\n", level, n);
  int all_users = smoothers_made == clmg_multigrid_levels(mg) - 1;
  for (int l = clmg_multigrid_levels(mg) - 1; l >= 1; --l) {
    const char *name = clmg_multigrid_smoother_name(mg, l);
    all_users = all_users && strcmp(name, "scaled-jacobi") == 0;
    printf("level %d            %zu rows, smoother %s, lambda_max %.3f, omega %.3f\n", l,
           clmg_multigrid_operator(mg, l)->rows, name, clmg_multigrid_lambda_max(mg, l),
           clmg_multigrid_smoother_damping(mg, l));
  }
  printf("level 0            %zu rows, coarse solve %s\n", clmg_multigrid_operator(mg, 0)->rows,
         clmg_multigrid_coarse_solver(mg));
  printf("CG iterations      %d (V(2,2) cycle with the user's smoother as preconditioner)\n",
         result.iterations);
  printf("reported residual  %.3e (converged: %s)\n", result.relative_residual,
         result.converged ? "yes" : "no");
  printf("true residual      %.3e (||b - A u|| / ||b||, recomputed on the host)\n", true_residual);
  double tolerance = strtod(clmg_options_get(clmg_solver_options(solver), "tol"), NULL);
  if (solve_status == CLMG_SUCCESS && true_residual <= tolerance && all_users) {
    printf("OK\n");
    exit_code = 0;
  } else {
    printf("FAILED: %s\n", all_users ? "the true residual does not meet the tolerance"
                                     : "a level did not use the user's smoother");
  }

done:
  free(u);
  free(r);
  clmg_krylov_result_free(&result);
  clmg_solver_destroy(solver); /* before the hierarchy it borrows */
  clmg_options_destroy(solver_options);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(mg);
  clmg_context_destroy(context);
  clmg_fe_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
  return exit_code;
}
