/* Fused kernels of a multigrid level above the coarse tail: fewer
 * launches per cycle where a launch costs more than bytes (issue 33). The
 * engine (lib/solve/multigrid.c) makes one per level of at most the
 * device's fused_restrict_rows or fused_smooth_rows rows (or the options'
 * values) and calls it in place of:
 *  - the defect and the restriction (two launches; the defect d written
 *    and read back): bc = R (b - A x) in one, each coarse row recomputing
 *    the defect of the fine rows it reads;
 *  - a diagonal smoother's steps (one launch each, and a copy after an odd
 *    count from x): two steps per launch (three from x = 0), out of place
 *    between x and the level's partner vector t, the first step's x_j
 *    recomputed for every row that reads it; the prolongation x = P e + x
 *    (already one launch) writes to x or t so that the post-smoothing's
 *    last step lands in x, and no copy is needed.
 * Both read matrix rows more than once (cl/fused_level.cl), so they pay
 * only on small levels: lib/core/device_params.c counts the bytes. A and R
 * are CSR copies (32-bit offsets) of the levels' device matrices, made
 * anew on every refresh like the coarse tail's. */
#include "solve/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The densest level (entries a row of A) whose kernels are fused. */
#define FUSED_MAX_ROW_ENTRIES 32.0

typedef struct csr32 {
  cl_mem ptr, col, val;
  size_t ptr_bytes, col_bytes, val_bytes;
} csr32;

struct clmg_fused_level {
  clmg_context *context;
  clmg_dtype precision;
  size_t n, coarse_rows;
  csr32 a, r;                              /* r: only where the restriction is fused */
  int restricts, smooths;                  /* what is fused */
  const clmg_matrix *p;                    /* the prolongation (smoothing fused) */
  const clmg_vector *w;                    /* the smoother's diagonal, borrowed (smoothing fused) */
  clmg_vector *t;                          /* the partner of x in the out-of-place steps */
  cl_kernel restrict_kernel, steps_kernel; /* owned by the program manager */
};

static void csr32_free(clmg_context *context, csr32 *m) {
  clmg_device_free(context, m->ptr, m->ptr_bytes);
  clmg_device_free(context, m->col, m->col_bytes);
  clmg_device_free(context, m->val, m->val_bytes);
  memset(m, 0, sizeof *m);
}

void clmg_fused_level_destroy(clmg_fused_level *f) {
  if (!f)
    return;
  csr32_free(f->context, &f->a);
  csr32_free(f->context, &f->r);
  clmg_vector_destroy(f->t);
  free(f);
}

int clmg_fused_level_restricts(const clmg_fused_level *f) {
  return f && f->restricts;
}

int clmg_fused_level_smooths(const clmg_fused_level *f) {
  return f && f->smooths;
}

clmg_vector *clmg_fused_level_partner(const clmg_fused_level *f) {
  return f && f->smooths ? f->t : NULL;
}

/* The operator's device matrix in `precision` with 32-bit indices, or
 * NULL. */
static const clmg_matrix *matrix_of(const clmg_operator *op, clmg_dtype precision) {
  const clmg_matrix *m = clmg_operator_matrix(op);
  return m && clmg_matrix_precision(m) == precision && clmg_matrix_nnz(m) <= INT_MAX &&
                 clmg_matrix_rows(m) < INT_MAX
             ? m
             : NULL;
}

/* The matrix as CSR with 32-bit offsets on the device, values in the
 * level's precision. */
static clmg_status upload_csr32(clmg_fused_level *f, const clmg_matrix *m, csr32 *out) {
  clmg_csr host;
  clmg_status status = clmg_matrix_download_csr(m, &host);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t nnz = clmg_csr_nnz(&host), element = clmg_dtype_size(f->precision);
  int32_t *ptr = malloc((host.rows + 1) * sizeof *ptr);
  void *val = malloc((nnz ? nnz : 1) * element);
  if (!ptr || !val)
    status = clmg_fail(f->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "fused level: CSR copy");
  for (size_t i = 0; ptr && i <= host.rows; ++i)
    ptr[i] = (int32_t)host.row_ptr[i];
  for (size_t k = 0; val && k < nnz; ++k) {
    if (f->precision == CLMG_DOUBLE)
      ((double *)val)[k] = host.val[k];
    else
      ((float *)val)[k] = (float)host.val[k];
  }
  out->ptr_bytes = (host.rows + 1) * sizeof *ptr;
  out->col_bytes = (nnz ? nnz : 1) * sizeof(int32_t);
  out->val_bytes = (nnz ? nnz : 1) * element;
  if (status == CLMG_SUCCESS)
    status = clmg_device_alloc(f->context, out->ptr_bytes, ptr, "fused level offsets", &out->ptr);
  if (status == CLMG_SUCCESS)
    status = clmg_device_alloc(f->context, out->col_bytes, nnz ? (const void *)host.col : NULL,
                               "fused level columns", &out->col);
  if (status == CLMG_SUCCESS)
    status = clmg_device_alloc(f->context, out->val_bytes, nnz ? val : NULL, "fused level values",
                               &out->val);
  free(ptr);
  free(val);
  clmg_csr_free(&host);
  return status;
}

clmg_status clmg_fused_level_create(clmg_context *context, clmg_dtype precision,
                                    const clmg_operator *a, const clmg_operator *p,
                                    const clmg_operator *r, const clmg_smoother *smoother,
                                    int fuse_restriction, int fuse_smoothing,
                                    clmg_fused_level **level) {
  *level = NULL;
  const clmg_matrix *a_matrix = matrix_of(a, precision);
  if (!a_matrix || clmg_context_is_distributed(context))
    return CLMG_SUCCESS;
  const clmg_matrix *r_matrix = fuse_restriction ? matrix_of(r, precision) : NULL;
  const clmg_matrix *p_matrix = fuse_smoothing ? matrix_of(p, precision) : NULL;
  /* The recomputation grows with the rows' lengths: the fused smoothing
   * rereads each neighbour's row (about (nnz/n)^2 entries a row), the fused
   * restriction every fine row once per entry of R that reads it (nnz(R)
   * times nnz(A)/n). A stencil or FE level (9-27 a row) pays that; an AMG
   * coarse level of hundreds a row does not (on the H200 elasticity's
   * cycle took 67 times as long), so levels denser than 32 entries a row
   * keep the unfused kernels, and the restriction is fused only where it
   * reads at most four times the entries of the unfused pair. */
  const double per_row = a->rows ? (double)clmg_matrix_nnz(a_matrix) / (double)a->rows : 0;
  if (per_row > FUSED_MAX_ROW_ENTRIES)
    return CLMG_SUCCESS;
  if (r_matrix && (double)clmg_matrix_nnz(r_matrix) * per_row >
                      4.0 * (double)(clmg_matrix_nnz(a_matrix) + clmg_matrix_nnz(r_matrix)))
    r_matrix = NULL;
  const clmg_vector *w = NULL;
  double alpha = 0, beta = 0;
  if (p_matrix && smoother && clmg_diagonal_smoother_polynomial(smoother, 1, &w, &alpha, &beta) &&
      alpha == 1.0 && beta == 0.0 && w && clmg_vector_length(w) == a->rows &&
      clmg_vector_type(w) == precision) {
    /* W holds the damping: a step is x + W (b - A x) */
  } else {
    w = NULL;
  }
  if (!r_matrix && !w)
    return CLMG_SUCCESS;
  clmg_fused_level *f = calloc(1, sizeof *f);
  if (!f)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "fused level");
  f->context = context;
  f->precision = precision;
  f->n = a->rows;
  f->restricts = r_matrix != NULL;
  f->smooths = w != NULL;
  f->p = p_matrix;
  f->w = w;
  const char *options = clmg_real_options(context, precision);
  clmg_status status = upload_csr32(f, a_matrix, &f->a);
  if (status == CLMG_SUCCESS && f->restricts) {
    f->coarse_rows = clmg_matrix_rows(r_matrix);
    status = upload_csr32(f, r_matrix, &f->r);
    if (status == CLMG_SUCCESS)
      status =
          clmg_get_kernel(context, "fused_level", options, "defect_restrict", &f->restrict_kernel);
  }
  if (status == CLMG_SUCCESS && f->smooths) {
    status = clmg_vector_create(context, precision, f->n, &f->t);
    if (status == CLMG_SUCCESS)
      status = clmg_get_kernel(context, "fused_level", options, "jacobi_steps", &f->steps_kernel);
  }
  if (status != CLMG_SUCCESS) {
    clmg_fused_level_destroy(f);
    return status;
  }
  *level = f;
  return CLMG_SUCCESS;
}

static void arg_csr32(clmg_kernel_args *args, const csr32 *m) {
  clmg_arg_buffer(args, m->ptr);
  clmg_arg_buffer(args, m->col);
  clmg_arg_buffer(args, m->val);
}

clmg_status clmg_fused_defect_restrict(clmg_fused_level *f, const clmg_vector *b,
                                       const clmg_vector *x, clmg_vector *bc) {
  if (!f->restricts)
    return clmg_fail(f->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "fused level: the restriction is not fused on this level");
  cl_uint x_zero = x == NULL;
  clmg_kernel_args args;
  clmg_args_begin(&args, f->context, f->restrict_kernel, "defect_restrict");
  clmg_arg_ulong(&args, f->coarse_rows);
  arg_csr32(&args, &f->r);
  arg_csr32(&args, &f->a);
  clmg_arg_vector(&args, b);
  clmg_arg_vector(&args, x ? x : b); /* not read with x_zero */
  clmg_arg_raw(&args, sizeof x_zero, &x_zero);
  clmg_arg_vector(&args, bc);
  return clmg_launch_args(&args, f->coarse_rows);
}

int clmg_fused_smoothing_launches(int steps, int zero) {
  if (steps <= 0)
    return 0;
  if (!zero)
    return (steps + 1) / 2;
  return steps <= 3 ? 1 : 1 + (steps - 3 + 1) / 2;
}

/* One launch of jacobi_steps: from x (NULL: from zero), one or two steps. */
static clmg_status launch_steps(clmg_fused_level *f, const clmg_vector *b, const clmg_vector *x,
                                int two_steps, clmg_vector *out) {
  cl_uint from_zero = x == NULL, two = two_steps != 0;
  clmg_kernel_args args;
  clmg_args_begin(&args, f->context, f->steps_kernel, "jacobi_steps");
  clmg_arg_ulong(&args, f->n);
  arg_csr32(&args, &f->a);
  clmg_arg_vector(&args, f->w);
  clmg_arg_vector(&args, b);
  clmg_arg_vector(&args, x ? x : b); /* not read from zero */
  clmg_arg_raw(&args, sizeof from_zero, &from_zero);
  clmg_arg_raw(&args, sizeof two, &two);
  clmg_arg_vector(&args, out);
  return clmg_launch_args(&args, f->n);
}

clmg_status clmg_fused_smooth(clmg_fused_level *f, const clmg_vector *b, clmg_vector *x,
                              clmg_vector **current, int steps, int zero) {
  if (!f->smooths || steps < 1 || (!zero && *current != x && *current != f->t))
    return clmg_fail(f->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "fused level: smoothing is not fused on this level (or bad arguments)");
  const int launches = clmg_fused_smoothing_launches(steps, zero);
  clmg_vector *from = zero ? NULL : *current;
  /* from zero the first launch writes where the count makes the last land
   * in x; else each launch writes the other vector than it reads */
  clmg_vector *to = zero ? (launches % 2 == 1 ? x : f->t) : (from == x ? f->t : x);
  clmg_status status = CLMG_SUCCESS;
  int left = steps;
  for (int k = 0; k < launches && status == CLMG_SUCCESS; ++k) {
    if (k == 0 && zero) {
      if (steps == 1) {
        status = clmg_pointwise_multiply(f->w, b, to);
      } else {
        status = launch_steps(f, b, NULL, steps >= 3, to);
      }
      left -= steps >= 3 ? 3 : steps;
    } else {
      status = launch_steps(f, b, from, left >= 2, to);
      left -= left >= 2 ? 2 : 1;
    }
    from = to;
    to = to == x ? f->t : x;
  }
  if (status == CLMG_SUCCESS)
    *current = from;
  return status;
}

clmg_status clmg_fused_prolong(clmg_fused_level *f, const clmg_vector *e, const clmg_vector *in,
                               clmg_vector *out) {
  if (!f->smooths)
    return clmg_fail(f->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "fused level: the prolongation is not fused on this level");
  return clmg_spmv_into(1.0, f->p, e, in ? 1.0 : 0.0, in, out);
}
