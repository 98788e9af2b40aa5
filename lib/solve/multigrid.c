/* The multigrid cycle engine (seed 000, section 2.1): a hierarchy of levels,
 * each {A, P, R, smoother weights, work vectors}, and V, W and F cycles made
 * only of SpMV-family kernels and vector updates. Everything a cycle needs
 * is allocated at setup; a cycle launches kernels and never reads back.
 *
 * Smoothers, all as x += (polynomial in W A) applied to the defect with a
 * diagonal W:
 *   Jacobi:    W = omega D^-1, one fused kernel per step (clmg_jacobi_step)
 *   SPAI-0:    W = omega diag(a_ii / sum_j a_ij^2) (the Frobenius-optimal
 *              diagonal approximate inverse), the same kernel
 *   Chebyshev: W = D^-1, the Chebyshev polynomial of degree `steps` on
 *              [ratio lambda_max, lambda_max] of W A (Saad, Iterative Methods,
 *              Alg. 12.1), two launches per step (clmg_scaled_defect, axpy).
 * Coarse solvers: Jacobi-PCG to a relative tolerance (the seed's), or an
 * explicit inverse computed once on the host and applied with CLBlast GEMV:
 * one launch, where PCG needs several per iteration on a level that is
 * all latency. */
#include "solve/internal.h"

#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mg_level {
  size_t n;
  clmg_matrix *a;
  clmg_matrix *p;         /* from level - 1; NULL on level 0 */
  clmg_matrix *r;         /* to level - 1; NULL on level 0 */
  clmg_vector *weights;   /* smoother's W; NULL on level 0 */
  clmg_vector *x, *b;     /* the level's correction problem; NULL on the finest */
  clmg_vector *work;      /* defect, and Jacobi's second iterate */
  clmg_vector *direction; /* Chebyshev only */
  double lambda_max;      /* of W A before any damping; Chebyshev only */
} mg_level;

struct clmg_multigrid {
  clmg_context *context;
  clmg_multigrid_options options;
  int num_levels;
  mg_level *levels;
  clmg_coarse_solver_type coarse; /* PCG or DIRECT after setup */
  cl_mem coarse_inverse;          /* DIRECT: n0 x n0, row-major, matrix precision */
  size_t coarse_inverse_bytes;
  clmg_preconditioner coarse_jacobi;  /* PCG */
  clmg_cg_workspace coarse_workspace; /* PCG: its work vectors, made once */
  clmg_vector *residual;              /* finest level, for clmg_multigrid_solve */
};

/* ---- names and options ---- */

static const char *const cycle_names[] = {"v", "w", "f"};
static const char *const smoother_names[] = {"jacobi", "chebyshev", "spai0"};

const char *clmg_cycle_type_name(clmg_cycle_type type) {
  return (unsigned)type < 3 ? cycle_names[type] : "unknown";
}

const char *clmg_smoother_type_name(clmg_smoother_type type) {
  return (unsigned)type < 3 ? smoother_names[type] : "unknown";
}

static int parse_name(const char *name, const char *const *names, int count, int *index) {
  if (!name)
    return 0;
  for (int i = 0; i < count; ++i) {
    size_t k = 0;
    while (name[k] && names[i][k] && (name[k] | 0x20) == names[i][k])
      k++;
    if (name[k] == '\0' && names[i][k] == '\0') {
      *index = i;
      return 1;
    }
  }
  return 0;
}

int clmg_cycle_type_parse(const char *name, clmg_cycle_type *type) {
  int index;
  if (!type || !parse_name(name, cycle_names, 3, &index))
    return 0;
  *type = (clmg_cycle_type)index;
  return 1;
}

int clmg_smoother_type_parse(const char *name, clmg_smoother_type *type) {
  int index;
  if (!type || !parse_name(name, smoother_names, 3, &index))
    return 0;
  *type = (clmg_smoother_type)index;
  return 1;
}

void clmg_multigrid_options_defaults(clmg_multigrid_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->cycle = CLMG_CYCLE_V;
  options->pre_smoothing = 4;
  options->post_smoothing = 4;
  options->smoother = CLMG_SMOOTHER_JACOBI;
  options->omega = 0.0;
  options->chebyshev_lower_ratio = 0.3;
  options->eigen_iterations = 12;
  options->coarse = CLMG_COARSE_AUTO;
  options->direct_max_rows = 2048;
  options->coarse_relative_tolerance = 1e-2;
  options->coarse_max_iterations = 1000;
  clmg_matrix_options_defaults(&options->matrix);
}

static double smoother_omega(const clmg_multigrid_options *options) {
  if (options->omega > 0)
    return options->omega;
  return options->smoother == CLMG_SMOOTHER_SPAI0 ? 1.0 : 0.7;
}

/* ---- setup ---- */

/* The smoother's diagonal W for one level (before Chebyshev's scaling). */
static clmg_status smoother_weights(clmg_multigrid *mg, int level, const clmg_csr *a) {
  clmg_context *context = mg->context;
  double omega = smoother_omega(&mg->options);
  double *w = malloc((a->rows ? a->rows : 1) * sizeof *w);
  if (!w)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "multigrid level %d: no host memory for the smoother weights", level);
  for (size_t i = 0; i < a->rows; ++i) {
    double diagonal = 0, row_squares = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      if ((size_t)a->col[k] == i)
        diagonal = a->val[k];
      row_squares += a->val[k] * a->val[k];
    }
    if (diagonal == 0) {
      free(w);
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: row %zu has a zero diagonal entry; the %s smoother "
                       "needs a nonzero diagonal",
                       level, i + 1, clmg_smoother_type_name(mg->options.smoother));
    }
    switch (mg->options.smoother) {
    case CLMG_SMOOTHER_SPAI0:
      w[i] = omega * diagonal / row_squares;
      break;
    case CLMG_SMOOTHER_CHEBYSHEV:
      w[i] = 1.0 / diagonal;
      break;
    default:
      w[i] = omega / diagonal;
      break;
    }
  }
  clmg_status status = clmg_vector_upload_doubles(mg->levels[level].weights, w);
  free(w);
  return status;
}

/* lambda_max(W A) by power iteration from a fixed pseudo-random start,
 * raised by 10%: the Chebyshev interval must cover the spectrum's top, and
 * the power method approaches it from below. */
static clmg_status estimate_lambda_max(clmg_multigrid *mg, int level) {
  mg_level *lv = &mg->levels[level];
  clmg_context *context = mg->context;
  double *start = malloc(lv->n * sizeof *start);
  if (!start)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "multigrid level %d: no host memory for the eigenvalue estimate", level);
  uint64_t state = 0x9e3779b97f4a7c15ull + (uint64_t)level;
  for (size_t i = 0; i < lv->n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    start[i] = 0.5 + (double)(state >> 11) / 9007199254740992.0;
  }
  clmg_status status = clmg_vector_upload_doubles(lv->direction, start);
  free(start);
  double norm = 0, lambda = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(lv->direction, &norm);
  for (int k = 0; status == CLMG_SUCCESS && k < mg->options.eigen_iterations && norm > 0; ++k) {
    status = clmg_scal(1.0 / norm, lv->direction);
    if (status == CLMG_SUCCESS)
      status = clmg_spmv(1.0, lv->a, lv->direction, 0.0, lv->work);
    if (status == CLMG_SUCCESS)
      status = clmg_pointwise_multiply(lv->weights, lv->work, lv->direction);
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(lv->direction, &norm);
    lambda = norm;
  }
  if (status != CLMG_SUCCESS)
    return status;
  if (!(lambda > 0) || !isfinite(lambda))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "multigrid level %d: the eigenvalue estimate of D^-1 A is %g; Chebyshev "
                     "needs a positive definite operator",
                     level, lambda);
  lv->lambda_max = 1.1 * lambda;
  return CLMG_SUCCESS;
}

/* In-place Gauss-Jordan inversion with partial pivoting of a row-major n x n
 * matrix; 0 if it is singular to working precision. */
static int invert_dense(double *m, size_t n, double *work) {
  double scale = 0;
  for (size_t i = 0; i < n * n; ++i)
    scale = fmax(scale, fabs(m[i]));
  /* work: an n x n identity that becomes the inverse */
  memset(work, 0, n * n * sizeof *work);
  for (size_t i = 0; i < n; ++i)
    work[i * n + i] = 1.0;
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row)
      if (fabs(m[row * n + col]) > fabs(m[pivot * n + col]))
        pivot = row;
    if (!(fabs(m[pivot * n + col]) > 1e-14 * scale))
      return 0;
    if (pivot != col) {
      for (size_t k = 0; k < n; ++k) {
        double t = m[col * n + k];
        m[col * n + k] = m[pivot * n + k];
        m[pivot * n + k] = t;
        t = work[col * n + k];
        work[col * n + k] = work[pivot * n + k];
        work[pivot * n + k] = t;
      }
    }
    double inverse_pivot = 1.0 / m[col * n + col];
    for (size_t k = 0; k < n; ++k) {
      m[col * n + k] *= inverse_pivot;
      work[col * n + k] *= inverse_pivot;
    }
    for (size_t row = 0; row < n; ++row) {
      double factor = m[row * n + col];
      if (row == col || factor == 0)
        continue;
      for (size_t k = 0; k < n; ++k) {
        m[row * n + k] -= factor * m[col * n + k];
        work[row * n + k] -= factor * work[col * n + k];
      }
    }
  }
  memcpy(m, work, n * n * sizeof *m);
  return 1;
}

static clmg_status setup_direct_coarse(clmg_multigrid *mg, const clmg_csr *a) {
  clmg_context *context = mg->context;
  size_t n = a->rows; /* >= 1: check_shapes refuses empty levels */
  double *dense = calloc(n * n, sizeof *dense);
  double *work = malloc(n * n * sizeof *work);
  if (!dense || !work) {
    free(dense);
    free(work);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "multigrid coarse level: no host memory for a dense %zu x %zu matrix", n, n);
  }
  for (size_t i = 0; i < n; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      dense[i * n + (size_t)a->col[k]] = a->val[k];
  clmg_status status = CLMG_SUCCESS;
  if (!invert_dense(dense, n, work)) {
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid coarse level: the %zu x %zu matrix is singular; the direct "
                       "coarse solver needs an invertible matrix",
                       n, n);
  } else {
    clmg_dtype type = mg->options.matrix.precision;
    void *upload = dense;
    if (type == CLMG_FLOAT) {
      float *converted = (float *)work; /* work is free again and large enough */
      for (size_t i = 0; i < n * n; ++i)
        converted[i] = (float)dense[i];
      upload = converted;
    }
    mg->coarse_inverse_bytes = n * n * clmg_dtype_size(type);
    status = clmg_device_alloc(context, mg->coarse_inverse_bytes, upload,
                               "multigrid coarse inverse", &mg->coarse_inverse);
    if (status != CLMG_SUCCESS)
      mg->coarse_inverse_bytes = 0;
  }
  free(dense);
  free(work);
  return status;
}

static clmg_status check_shapes(clmg_context *context, int num_levels, const clmg_csr *a,
                                const clmg_csr *p, const clmg_csr *r) {
  for (int l = 0; l < num_levels; ++l) {
    if (!a[l].row_ptr || a[l].rows == 0 || a[l].rows != a[l].cols)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: A is %zu x %zu; every level needs a nonempty square "
                       "matrix",
                       l, a[l].rows, a[l].cols);
    if (l == 0)
      continue;
    if (!p || !p[l].row_ptr || p[l].rows != a[l].rows || p[l].cols != a[l - 1].rows)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: P is %zu x %zu, but must map level %d (%zu rows) to "
                       "level %d (%zu rows)",
                       l, p ? p[l].rows : 0, p ? p[l].cols : 0, l - 1, a[l - 1].rows, l, a[l].rows);
    if (r && r[l].rows != 0 && (r[l].rows != a[l - 1].rows || r[l].cols != a[l].rows))
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: R is %zu x %zu, but must map level %d (%zu rows) to "
                       "level %d (%zu rows)",
                       l, r[l].rows, r[l].cols, l, a[l].rows, l - 1, a[l - 1].rows);
  }
  return CLMG_SUCCESS;
}

static clmg_status make_vector(clmg_multigrid *mg, size_t n, clmg_vector **vector) {
  return clmg_vector_create(mg->context, mg->options.matrix.precision, n, vector);
}

static clmg_status setup_level(clmg_multigrid *mg, int l, const clmg_csr *a, const clmg_csr *p,
                               const clmg_csr *r) {
  mg_level *lv = &mg->levels[l];
  const clmg_matrix_options *matrix_options = &mg->options.matrix;
  lv->n = a[l].rows;
  clmg_status status = clmg_matrix_create(mg->context, &a[l], matrix_options, &lv->a);
  if (status == CLMG_SUCCESS)
    status = make_vector(mg, lv->n, &lv->work);
  if (status == CLMG_SUCCESS && l < mg->num_levels - 1) {
    status = make_vector(mg, lv->n, &lv->x);
    if (status == CLMG_SUCCESS)
      status = make_vector(mg, lv->n, &lv->b);
  }
  if (status != CLMG_SUCCESS || l == 0)
    return status;

  status = clmg_matrix_create(mg->context, &p[l], matrix_options, &lv->p);
  if (status == CLMG_SUCCESS) {
    if (r && r[l].rows != 0) {
      status = clmg_matrix_create(mg->context, &r[l], matrix_options, &lv->r);
    } else {
      clmg_csr transposed = {0};
      clmg_error error;
      status = clmg_csr_transpose(&p[l], &transposed, &error);
      if (status != CLMG_SUCCESS)
        return clmg_fail(mg->context, status, "multigrid level %d: R = P^T: %s", l, error.message);
      status = clmg_matrix_create(mg->context, &transposed, matrix_options, &lv->r);
      clmg_csr_free(&transposed);
    }
  }
  if (status == CLMG_SUCCESS)
    status = make_vector(mg, lv->n, &lv->weights);
  if (status == CLMG_SUCCESS)
    status = smoother_weights(mg, l, &a[l]);
  if (status == CLMG_SUCCESS && mg->options.smoother == CLMG_SMOOTHER_CHEBYSHEV) {
    status = make_vector(mg, lv->n, &lv->direction);
    if (status == CLMG_SUCCESS)
      status = estimate_lambda_max(mg, l);
  }
  return status;
}

clmg_status clmg_multigrid_create(clmg_context *context, int num_levels, const clmg_csr *a,
                                  const clmg_csr *p, const clmg_csr *r,
                                  const clmg_multigrid_options *options,
                                  clmg_multigrid **multigrid) {
  if (!context || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  clmg_clear_message(context);
  if (num_levels < 1 || !a)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "multigrid: %d levels; a hierarchy needs at least one level and its "
                     "matrices",
                     num_levels);
  clmg_multigrid_options defaults;
  clmg_multigrid_options_defaults(&defaults);
  const clmg_multigrid_options *o = options ? options : &defaults;
  if (o->pre_smoothing < 0 || o->post_smoothing < 0 || (unsigned)o->cycle > CLMG_CYCLE_F ||
      (unsigned)o->smoother > CLMG_SMOOTHER_SPAI0 || (unsigned)o->coarse > CLMG_COARSE_DIRECT ||
      o->omega < 0 || !(o->chebyshev_lower_ratio > 0 && o->chebyshev_lower_ratio < 1) ||
      o->eigen_iterations < 1 || !(o->coarse_relative_tolerance > 0) ||
      o->coarse_max_iterations < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "multigrid: invalid options (smoothing steps >= 0, omega >= 0, Chebyshev "
                     "ratio in (0, 1), eigen_iterations >= 1, coarse tolerance > 0, coarse "
                     "iterations >= 1, known cycle, smoother and coarse solver)");
  clmg_status status = check_shapes(context, num_levels, a, p, r);
  if (status != CLMG_SUCCESS)
    return status;

  clmg_multigrid *mg = calloc(1, sizeof *mg);
  mg_level *levels = calloc((size_t)num_levels, sizeof *levels);
  if (!mg || !levels) {
    free(mg);
    free(levels);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "multigrid: no host memory");
  }
  mg->context = context;
  mg->options = *o;
  mg->num_levels = num_levels;
  mg->levels = levels;
  mg->coarse = o->coarse;
  if (mg->coarse == CLMG_COARSE_AUTO)
    mg->coarse = a[0].rows <= o->direct_max_rows ? CLMG_COARSE_DIRECT : CLMG_COARSE_PCG;

  for (int l = 0; l < num_levels && status == CLMG_SUCCESS; ++l)
    status = setup_level(mg, l, a, p, r);
  if (status == CLMG_SUCCESS) {
    if (mg->coarse == CLMG_COARSE_DIRECT)
      status = setup_direct_coarse(mg, &a[0]);
    else
      status = clmg_preconditioner_jacobi(levels[0].a, &mg->coarse_jacobi);
    if (status == CLMG_SUCCESS && mg->coarse == CLMG_COARSE_PCG)
      status = clmg_cg_workspace_create(context, o->matrix.precision, levels[0].n,
                                        &mg->coarse_workspace);
  }
  if (status == CLMG_SUCCESS)
    status = make_vector(mg, levels[num_levels - 1].n, &mg->residual);
  if (status != CLMG_SUCCESS) {
    clmg_multigrid_destroy(mg);
    return status;
  }
  *multigrid = mg;
  return CLMG_SUCCESS;
}

void clmg_multigrid_destroy(clmg_multigrid *mg) {
  if (!mg)
    return;
  for (int l = 0; l < mg->num_levels; ++l) {
    mg_level *lv = &mg->levels[l];
    clmg_matrix_destroy(lv->a);
    clmg_matrix_destroy(lv->p);
    clmg_matrix_destroy(lv->r);
    clmg_vector_destroy(lv->weights);
    clmg_vector_destroy(lv->x);
    clmg_vector_destroy(lv->b);
    clmg_vector_destroy(lv->work);
    clmg_vector_destroy(lv->direction);
  }
  if (mg->coarse_inverse)
    clmg_device_free(mg->context, mg->coarse_inverse, mg->coarse_inverse_bytes);
  clmg_preconditioner_destroy(&mg->coarse_jacobi);
  clmg_cg_workspace_destroy(&mg->coarse_workspace);
  clmg_vector_destroy(mg->residual);
  free(mg->levels);
  free(mg);
}

int clmg_multigrid_levels(const clmg_multigrid *mg) {
  return mg ? mg->num_levels : 0;
}

const clmg_matrix *clmg_multigrid_matrix(const clmg_multigrid *mg, int level) {
  if (!mg || level < 0 || level >= mg->num_levels)
    return NULL;
  return mg->levels[level].a;
}

double clmg_multigrid_lambda_max(const clmg_multigrid *mg, int level) {
  if (!mg || level < 0 || level >= mg->num_levels)
    return 0;
  return mg->levels[level].lambda_max;
}

const char *clmg_multigrid_coarse_solver(const clmg_multigrid *mg) {
  if (!mg)
    return "none";
  return mg->coarse == CLMG_COARSE_DIRECT ? "direct" : "pcg";
}

/* ---- the cycle ---- */

static clmg_status coarse_solve(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x) {
  mg_level *lv = &mg->levels[0];
  if (mg->coarse == CLMG_COARSE_DIRECT) {
    size_t b_offset, x_offset;
    cl_mem b_buffer = clmg_vector_cl_buffer(b, &b_offset);
    cl_mem x_buffer = clmg_vector_cl_buffer(x, &x_offset);
    CLBlastStatusCode code;
    if (mg->options.matrix.precision == CLMG_FLOAT)
      code = CLBlastSgemv(CLBlastLayoutRowMajor, CLBlastTransposeNo, lv->n, lv->n, 1.0f,
                          mg->coarse_inverse, 0, lv->n, b_buffer, b_offset, 1, 0.0f, x_buffer,
                          x_offset, 1, &mg->context->queue, NULL);
    else
      code = CLBlastDgemv(CLBlastLayoutRowMajor, CLBlastTransposeNo, lv->n, lv->n, 1.0,
                          mg->coarse_inverse, 0, lv->n, b_buffer, b_offset, 1, 0.0, x_buffer,
                          x_offset, 1, &mg->context->queue, NULL);
    return clmg_clblast_status(mg->context, code, "gemv (coarse solve)");
  }
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = mg->options.coarse_relative_tolerance;
  options.max_iterations = mg->options.coarse_max_iterations;
  clmg_krylov_result result = {0};
  clmg_status status = clmg_vector_fill(x, 0.0);
  if (status == CLMG_SUCCESS)
    status = clmg_cg_in_workspace(lv->a, b, x, &mg->coarse_jacobi, &options, &result,
                                  &mg->coarse_workspace);
  clmg_krylov_result_free(&result);
  /* an inexact coarse solve still corrects: running out of iterations is not fatal */
  if (status == CLMG_ERROR_NOT_CONVERGED) {
    clmg_clear_message(mg->context);
    status = CLMG_SUCCESS;
  }
  return status;
}

/* steps Jacobi or SPAI-0 sweeps x <- x + W (b - A x); zero_guess: x holds
 * nothing yet and is taken as 0 (the first sweep is then x = W b). */
static clmg_status smooth_diagonal(mg_level *lv, const clmg_vector *b, clmg_vector *x, int steps,
                                   int zero_guess) {
  clmg_vector *current = x, *next = lv->work;
  clmg_status status = CLMG_SUCCESS;
  for (int s = 0; s < steps && status == CLMG_SUCCESS; ++s) {
    if (s == 0 && zero_guess) {
      status = clmg_pointwise_multiply(lv->weights, b, x);
      continue;
    }
    status = clmg_jacobi_step(lv->a, 1.0, lv->weights, b, current, next);
    clmg_vector *t = current;
    current = next;
    next = t;
  }
  if (status == CLMG_SUCCESS && current != x)
    status = clmg_copy(current, x);
  return status;
}

/* Chebyshev smoothing of degree `steps` (Saad, Alg. 12.1, on W A). */
static clmg_status smooth_chebyshev(const clmg_multigrid *mg, mg_level *lv, const clmg_vector *b,
                                    clmg_vector *x, int steps, int zero_guess) {
  double upper = lv->lambda_max, lower = upper * mg->options.chebyshev_lower_ratio;
  double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
  double sigma = theta / delta, rho = 1.0 / sigma;
  clmg_vector *d = lv->direction;
  clmg_status status = CLMG_SUCCESS;
  if (steps == 0)
    return zero_guess ? clmg_vector_fill(x, 0.0) : CLMG_SUCCESS;
  if (zero_guess) { /* d = W b / theta; x = d */
    status = clmg_pointwise_multiply(lv->weights, b, d);
    if (status == CLMG_SUCCESS)
      status = clmg_scal(1.0 / theta, d);
    if (status == CLMG_SUCCESS)
      status = clmg_copy(d, x);
  } else {
    status = clmg_scaled_defect(lv->a, 1.0 / theta, lv->weights, b, x, 0.0, d);
    if (status == CLMG_SUCCESS)
      status = clmg_axpy(1.0, d, x);
  }
  for (int s = 1; s < steps && status == CLMG_SUCCESS; ++s) {
    double rho_next = 1.0 / (2.0 * sigma - rho);
    status =
        clmg_scaled_defect(lv->a, 2.0 * rho_next / delta, lv->weights, b, x, rho_next * rho, d);
    if (status == CLMG_SUCCESS)
      status = clmg_axpy(1.0, d, x);
    rho = rho_next;
  }
  return status;
}

static clmg_status smooth(clmg_multigrid *mg, mg_level *lv, const clmg_vector *b, clmg_vector *x,
                          int steps, int zero_guess) {
  if (mg->options.smoother == CLMG_SMOOTHER_CHEBYSHEV)
    return smooth_chebyshev(mg, lv, b, x, steps, zero_guess);
  if (steps == 0)
    return zero_guess ? clmg_vector_fill(x, 0.0) : CLMG_SUCCESS;
  return smooth_diagonal(lv, b, x, steps, zero_guess);
}

/* One cycle of `type` on level l for A_l x = b; zero_guess: x is taken as 0
 * and not read. */
static clmg_status cycle(clmg_multigrid *mg, int l, clmg_cycle_type type, const clmg_vector *b,
                         clmg_vector *x, int zero_guess) {
  if (l == 0)
    return coarse_solve(mg, b, x);
  mg_level *lv = &mg->levels[l], *coarse = &mg->levels[l - 1];
  clmg_status status = smooth(mg, lv, b, x, mg->options.pre_smoothing, zero_guess);
  if (status == CLMG_SUCCESS)
    status = clmg_defect(lv->a, b, x, lv->work);
  if (status == CLMG_SUCCESS)
    status = clmg_spmv(1.0, lv->r, lv->work, 0.0, coarse->b);
  if (status == CLMG_SUCCESS) {
    switch (type) {
    case CLMG_CYCLE_V:
      status = cycle(mg, l - 1, CLMG_CYCLE_V, coarse->b, coarse->x, 1);
      break;
    case CLMG_CYCLE_W:
      status = cycle(mg, l - 1, CLMG_CYCLE_W, coarse->b, coarse->x, 1);
      if (status == CLMG_SUCCESS && l - 1 > 0)
        status = cycle(mg, l - 1, CLMG_CYCLE_W, coarse->b, coarse->x, 0);
      break;
    case CLMG_CYCLE_F:
      status = cycle(mg, l - 1, CLMG_CYCLE_F, coarse->b, coarse->x, 1);
      if (status == CLMG_SUCCESS && l - 1 > 0)
        status = cycle(mg, l - 1, CLMG_CYCLE_V, coarse->b, coarse->x, 0);
      break;
    }
  }
  if (status == CLMG_SUCCESS)
    status = clmg_spmv(1.0, lv->p, coarse->x, 1.0, x);
  if (status == CLMG_SUCCESS)
    status = smooth(mg, lv, b, x, mg->options.post_smoothing, 0);
  return status;
}

static clmg_status check_finest_vector(clmg_multigrid *mg, const clmg_vector *v, const char *what,
                                       const char *caller) {
  const mg_level *finest = &mg->levels[mg->num_levels - 1];
  if (!v)
    return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller, what);
  if (clmg_vector_context(v) != mg->context || clmg_vector_length(v) != finest->n ||
      clmg_vector_type(v) != mg->options.matrix.precision)
    return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: %s must be a %s vector of %zu entries in the hierarchy's context (it "
                     "has %zu %s entries)",
                     caller, what, clmg_dtype_name(mg->options.matrix.precision), finest->n,
                     clmg_vector_length(v), clmg_dtype_name(clmg_vector_type(v)));
  return CLMG_SUCCESS;
}

static clmg_status run_cycle(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x,
                             int zero_guess, const char *caller) {
  clmg_status status = check_finest_vector(mg, b, "b", caller);
  if (status == CLMG_SUCCESS)
    status = check_finest_vector(mg, x, "x", caller);
  if (status == CLMG_SUCCESS && b == x)
    status = clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: b and x are the same vector",
                       caller);
  if (status != CLMG_SUCCESS)
    return status;
  status = cycle(mg, mg->num_levels - 1, mg->options.cycle, b, x, zero_guess);
  if (status != CLMG_SUCCESS) {
    char inner[CLMG_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", clmg_context_message(mg->context));
    return clmg_fail(mg->context, status, "%s: %s", caller, inner);
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_multigrid_cycle(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x) {
  if (!mg)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(mg->context);
  return run_cycle(mg, b, x, 0, "multigrid cycle");
}

clmg_status clmg_multigrid_solve(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x,
                                 const clmg_krylov_options *options, clmg_krylov_result *result) {
  if (!mg || !result)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(result, 0, sizeof *result);
  clmg_context *context = mg->context;
  clmg_clear_message(context);
  clmg_krylov_options defaults;
  clmg_krylov_options_defaults(&defaults);
  const clmg_krylov_options *o = options ? options : &defaults;
  const mg_level *finest = &mg->levels[mg->num_levels - 1];
  clmg_status status = check_finest_vector(mg, b, "b", "multigrid solve");
  if (status == CLMG_SUCCESS)
    status = check_finest_vector(mg, x, "x", "multigrid solve");
  double b_norm = 0, r_norm = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(b, &b_norm);
  if (status == CLMG_SUCCESS)
    status = clmg_defect(finest->a, b, x, mg->residual);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(mg->residual, &r_norm);
  if (status != CLMG_SUCCESS)
    return status;
  double reference = b_norm > 0 ? b_norm : r_norm;
  double target = fmax(o->relative_tolerance * reference, o->absolute_tolerance);
  size_t history_capacity = 0;
  result->initial_residual = r_norm;
  result->final_residual = r_norm;
  result->relative_residual = reference > 0 ? r_norm / reference : 0;
  if (o->keep_history)
    status = clmg_history_append(context, result, &history_capacity, result->relative_residual);
  while (status == CLMG_SUCCESS && r_norm > target && result->iterations < o->max_iterations) {
    status = run_cycle(mg, b, x, 0, "multigrid solve");
    if (status == CLMG_SUCCESS)
      status = clmg_defect(finest->a, b, x, mg->residual);
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(mg->residual, &r_norm);
    if (status != CLMG_SUCCESS)
      break;
    result->iterations++;
    result->final_residual = r_norm;
    result->relative_residual = r_norm / reference;
    if (!isfinite(r_norm))
      return clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                       "multigrid solve: the residual became %g in cycle %d (diverged; try a "
                       "smaller omega or more smoothing)",
                       r_norm, result->iterations);
    if (o->keep_history)
      status = clmg_history_append(context, result, &history_capacity, result->relative_residual);
    if (status == CLMG_SUCCESS && o->monitor &&
        o->monitor(o->monitor_data, result->iterations, result->relative_residual))
      break;
  }
  if (status != CLMG_SUCCESS)
    return status;
  result->converged = r_norm <= target;
  if (!result->converged)
    return clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                     "multigrid solve: relative residual %.3e after %d cycles, tolerance %.3e",
                     result->relative_residual, result->iterations, o->relative_tolerance);
  return CLMG_SUCCESS;
}

/* ---- as a preconditioner ---- */

static clmg_status multigrid_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  clmg_multigrid *mg = data;
  return run_cycle(mg, r, z, 1, "multigrid preconditioner");
}

clmg_status clmg_multigrid_preconditioner(clmg_multigrid *mg, clmg_preconditioner *preconditioner) {
  if (!mg || !preconditioner)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(preconditioner, 0, sizeof *preconditioner);
  preconditioner->apply = multigrid_apply;
  preconditioner->data = mg;
  preconditioner->destroy = NULL;
  preconditioner->name = "multigrid";
  return CLMG_SUCCESS;
}

/* ---- traffic ---- */

/* How often a cycle of `type` started on level l visits each level. */
static void count_visits(int l, clmg_cycle_type type, double *visits) {
  visits[l] += 1;
  if (l == 0)
    return;
  switch (type) {
  case CLMG_CYCLE_V:
    count_visits(l - 1, CLMG_CYCLE_V, visits);
    break;
  case CLMG_CYCLE_W:
    count_visits(l - 1, CLMG_CYCLE_W, visits);
    if (l - 1 > 0)
      count_visits(l - 1, CLMG_CYCLE_W, visits);
    break;
  case CLMG_CYCLE_F:
    count_visits(l - 1, CLMG_CYCLE_F, visits);
    if (l - 1 > 0)
      count_visits(l - 1, CLMG_CYCLE_V, visits);
    break;
  }
}

double clmg_multigrid_iteration_bytes(const clmg_multigrid *mg) {
  if (!mg)
    return 0;
  double *visits = calloc((size_t)mg->num_levels, sizeof *visits);
  if (!visits)
    return 0;
  count_visits(mg->num_levels - 1, mg->options.cycle, visits);
  double real = (double)clmg_dtype_size(mg->options.matrix.precision);
  int steps = mg->options.pre_smoothing + mg->options.post_smoothing;
  /* vectors read + written per smoothing step: Jacobi/SPAI-0 read x, b, W
   * and write x; Chebyshev reads x, b, W, d and writes d, then x += d */
  double step_vectors = mg->options.smoother == CLMG_SMOOTHER_CHEBYSHEV ? 8 : 4;
  double bytes = 0;
  for (int l = 1; l < mg->num_levels; ++l) {
    const mg_level *lv = &mg->levels[l];
    double n = (double)lv->n, n_coarse = (double)mg->levels[l - 1].n;
    double level = steps * ((double)clmg_matrix_device_bytes(lv->a) + step_vectors * n * real);
    level += (double)clmg_matrix_device_bytes(lv->a) + 3 * n * real;              /* defect */
    level += (double)clmg_matrix_device_bytes(lv->r) + (n + n_coarse) * real;     /* restrict */
    level += (double)clmg_matrix_device_bytes(lv->p) + (n_coarse + 2 * n) * real; /* prolong */
    bytes += visits[l] * level;
  }
  const mg_level *c = &mg->levels[0];
  double coarse = mg->coarse == CLMG_COARSE_DIRECT
                      ? (double)mg->coarse_inverse_bytes + 2 * (double)c->n * real
                      : (double)clmg_matrix_device_bytes(c->a) + 13 * (double)c->n * real;
  bytes += visits[0] * coarse;
  const mg_level *finest = &mg->levels[mg->num_levels - 1];
  bytes += (double)clmg_matrix_device_bytes(finest->a) + 4 * (double)finest->n * real;
  free(visits);
  return bytes;
}
