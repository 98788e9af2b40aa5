/* The dense direct coarse solver: an explicit inverse, formed once at setup
 * and applied with one GEMV kernel per solve (cl/dense.cl). On a coarse level every
 * launch is latency, and a Krylov solve needs several per iteration; one
 * GEMV needs one. The matrix is read through the operator (one application
 * per column on unit vectors), so any operator works, and Gauss-Jordan with
 * partial pivoting handles indefinite and nonsymmetric matrices. */
#include "solve/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct direct_solver {
  clmg_context *context;
  size_t n;
  clmg_dtype precision;
  cl_mem inverse; /* n x n, row-major, in the operator's precision */
  size_t inverse_bytes;
  cl_kernel gemv; /* owned by the program manager */
} direct_solver;

static void release_inverse(direct_solver *s) {
  if (s->inverse)
    clmg_device_free(s->context, s->inverse, s->inverse_bytes);
  s->inverse = NULL;
  s->inverse_bytes = 0;
}

static void direct_destroy(void *data) {
  direct_solver *s = data;
  if (!s)
    return;
  release_inverse(s);
  free(s);
}

/* In-place Gauss-Jordan inversion with partial pivoting of a row-major n x n
 * matrix; 0 if it is singular to working precision. */
static int invert_dense(double *m, size_t n, double *work) {
  double scale = 0;
  for (size_t i = 0; i < n * n; ++i)
    scale = fmax(scale, fabs(m[i]));
  memset(work, 0, n * n * sizeof *work); /* the identity, which becomes the inverse */
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
    /* The pivot row of m is 0 left of col (earlier pivots cleared it), and
     * that of work is 0 outside [first, last]: the loops skip what would
     * subtract zeros, which leaves every value as the full loops would
     * (about half the work for a matrix that pivots little). */
    size_t first = n, last = 0;
    for (size_t k = 0; k < n; ++k)
      if (work[col * n + k] != 0) {
        first = k < first ? k : first;
        last = k;
      }
    double inverse_pivot = 1.0 / m[col * n + col];
    for (size_t k = col; k < n; ++k)
      m[col * n + k] *= inverse_pivot;
    for (size_t k = first; k <= last && first < n; ++k)
      work[col * n + k] *= inverse_pivot;
    for (size_t row = 0; row < n; ++row) {
      double factor = m[row * n + col];
      if (row == col || factor == 0)
        continue;
      m[row * n + col] = 0; /* factor - factor * 1 */
      for (size_t k = col + 1; k < n; ++k)
        m[row * n + k] -= factor * m[col * n + k];
      for (size_t k = first; k <= last && first < n; ++k)
        work[row * n + k] -= factor * work[col * n + k];
    }
  }
  memcpy(m, work, n * n * sizeof *m);
  return 1;
}

/* dense[j * n + i] = a_ij: A applied to the n unit vectors, each column a
 * view of one n x n device vector, read back once. */
static clmg_status probe_columns(direct_solver *s, const clmg_operator *a, double *dense) {
  size_t n = a->rows;
  clmg_vector *identity = NULL, *columns = NULL;
  clmg_status status = clmg_vector_create(s->context, a->precision, n * n, &identity);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s->context, a->precision, n * n, &columns);
  if (status == CLMG_SUCCESS) {
    memset(dense, 0, n * n * sizeof *dense);
    for (size_t j = 0; j < n; ++j)
      dense[j * n + j] = 1.0;
    status = clmg_vector_upload_doubles(identity, dense);
  }
  for (size_t j = 0; j < n && status == CLMG_SUCCESS; ++j) {
    clmg_vector *unit = NULL, *column = NULL;
    status = clmg_vector_view(identity, j * n, n, &unit);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_view(columns, j * n, n, &column);
    if (status == CLMG_SUCCESS)
      status = clmg_operator_apply(a, 1.0, unit, 0.0, column);
    clmg_vector_destroy(unit);
    clmg_vector_destroy(column);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(columns, dense);
  clmg_vector_destroy(identity);
  clmg_vector_destroy(columns);
  return status;
}

static clmg_status direct_setup(void *data, const clmg_operator *a) {
  direct_solver *s = data;
  size_t n = a->rows;
  if (n == 0 || n != a->cols || n > 16384)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "direct coarse solver: the coarse operator is %zu x %zu; it needs a square "
                     "one of at most 16384 rows (coarsen further or use a Krylov coarse solve)",
                     n, a->cols);
  double *columns = clmg_alloc_array(n * n, sizeof *columns);
  double *dense = clmg_alloc_array(n * n, sizeof *dense);
  double *work = clmg_alloc_array(n * n, sizeof *work);
  clmg_status status = CLMG_SUCCESS;
  if (!columns || !dense || !work)
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "direct coarse solver: no host memory for a dense %zu x %zu matrix", n, n);
  if (status == CLMG_SUCCESS)
    status = probe_columns(s, a, columns);
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        dense[i * n + j] = columns[j * n + i];
    if (!invert_dense(dense, n, work))
      status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                         "direct coarse solver: the %zu x %zu coarse matrix is singular; it "
                         "needs an invertible matrix",
                         n, n);
  }
  if (status == CLMG_SUCCESS) {
    void *upload = dense;
    if (a->precision == CLMG_FLOAT) {
      float *converted = (float *)work; /* work is free again and large enough */
      for (size_t i = 0; i < n * n; ++i)
        converted[i] = (float)dense[i];
      upload = converted;
    }
    release_inverse(s);
    s->inverse_bytes = n * n * clmg_dtype_size(a->precision);
    status = clmg_device_alloc(s->context, s->inverse_bytes, upload, "coarse inverse", &s->inverse);
    if (status != CLMG_SUCCESS)
      s->inverse_bytes = 0;
    s->n = n;
    s->precision = a->precision;
  }
  free(columns);
  free(dense);
  free(work);
  return status;
}

static clmg_status direct_solve(void *data, const clmg_operator *a, const clmg_vector *b,
                                clmg_vector *x) {
  direct_solver *s = data;
  (void)a;
  clmg_context *context = s->context;
  if (!s->gemv) {
    clmg_status status = clmg_get_kernel(context, "dense", clmg_real_options(context, s->precision),
                                         "dense_gemv", &s->gemv);
    if (status != CLMG_SUCCESS) {
      s->gemv = NULL;
      return status;
    }
  }
  /* cl/dense.cl's two kernels: whole rows per work-item with -DCLMG_CPU,
   * else a work-group per row */
  size_t global, local;
  if (context->params.cpu_kernels) {
    clmg_launch_1d(context, s->n, 0, &global, &local);
  } else {
    local = context->params.dense_group_size;
    global = s->n * local; /* one work-group per row */
  }
  clmg_kernel_args args;
  clmg_args_begin(&args, context, s->gemv, "dense_gemv (coarse solve)");
  clmg_arg_ulong(&args, s->n);
  clmg_arg_buffer(&args, s->inverse);
  clmg_arg_vector(&args, b);
  clmg_arg_vector(&args, x);
  clmg_arg_local(&args, local * clmg_dtype_size(s->precision));
  clmg_status status = clmg_args_end(&args);
  return status == CLMG_SUCCESS
             ? clmg_enqueue_1d(context, s->gemv, "dense_gemv (coarse solve)", global, local, NULL)
             : status;
}

static double direct_bytes(void *data, const clmg_operator *a) {
  direct_solver *s = data;
  return (double)s->inverse_bytes + 2.0 * (double)a->rows * (double)clmg_dtype_size(a->precision);
}

int clmg_coarse_solver_direct_inverse(const clmg_coarse_solver *solver, cl_mem *inverse,
                                      size_t *n) {
  if (solver->solve != direct_solve)
    return 0;
  const direct_solver *s = solver->data;
  *inverse = s->inverse;
  *n = s->n;
  return s->inverse != NULL;
}

clmg_status clmg_coarse_solver_direct(clmg_context *context, clmg_coarse_solver *solver) {
  if (!context || !solver)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(solver, 0, sizeof *solver);
  direct_solver *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "direct coarse solver");
  s->context = context;
  solver->data = s;
  solver->name = "direct";
  solver->setup = direct_setup;
  solver->solve = direct_solve;
  solver->bytes = direct_bytes;
  solver->destroy = direct_destroy;
  return CLMG_SUCCESS;
}

void clmg_coarse_solver_destroy(clmg_coarse_solver *solver) {
  if (!solver)
    return;
  if (solver->destroy)
    solver->destroy(solver->data);
  memset(solver, 0, sizeof *solver);
}
