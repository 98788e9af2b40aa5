/* Inexact patch block-Jacobi smoothing (Fu et al. 2014, section 5.1.2,
 * eq. 8): x += omega M^-1 (b - A x), M = diag(A_kk) over patches of rows,
 * each M_kk^-1 approximated by `inner` weighted-Jacobi iterations in the
 * patch's local memory (kernel in cl/patch_jacobi.cl). A step is one defect
 * through the operator and one launch with a work-group per patch.
 *
 * The patches come from the caller (clmg_amg_hierarchy_build makes them
 * from aggregates of aggregates, so that no patch cuts an aggregate); the
 * blocks A_kk are taken from the host matrix when the smoother is made and
 * uploaded at setup in the operator's precision. */
#include "solve/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows a patch may have (cl/patch_jacobi.cl's PATCH_MAX); larger patches
 * are cut into pieces of at most this many rows. */
#define PATCH_MAX 512
#define PATCH_GROUP_SIZE 128

typedef struct patch_smoother {
  clmg_context *context;
  double omega, inner_omega;
  int inner;
  size_t n, num_patches, block_nnz;
  /* host layout: rows grouped by patch, the blocks in patch-local columns */
  uint32_t *patch_start, *patch_rows, *block_col;
  int64_t *block_ptr;
  double *block_val, *inverse_diagonal;
  /* device copies (setup) and the defect */
  clmg_vector *d_patch_start, *d_patch_rows, *d_block_ptr, *d_block_col, *d_block_val,
      *d_inverse_diagonal, *r;
  cl_kernel kernel;
} patch_smoother;

static void free_device(patch_smoother *s) {
  clmg_vector_destroy(s->d_patch_start);
  clmg_vector_destroy(s->d_patch_rows);
  clmg_vector_destroy(s->d_block_ptr);
  clmg_vector_destroy(s->d_block_col);
  clmg_vector_destroy(s->d_block_val);
  clmg_vector_destroy(s->d_inverse_diagonal);
  clmg_vector_destroy(s->r);
  s->d_patch_start = s->d_patch_rows = s->d_block_ptr = s->d_block_col = NULL;
  s->d_block_val = s->d_inverse_diagonal = s->r = NULL;
}

static void patch_destroy(void *data) {
  patch_smoother *s = data;
  if (!s)
    return;
  free_device(s);
  free(s->patch_start);
  free(s->patch_rows);
  free(s->block_col);
  free(s->block_ptr);
  free(s->block_val);
  free(s->inverse_diagonal);
  free(s);
}

static clmg_status patch_setup(void *data, const clmg_operator *a) {
  patch_smoother *s = data;
  if (a->rows != s->n || a->cols != s->n)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "patch block-Jacobi smoother: made for %zu rows, the operator is %zu x %zu",
                     s->n, a->rows, a->cols);
  free_device(s);
  clmg_dtype real = a->precision;
  clmg_status status = clmg_vector_create_from_host(s->context, CLMG_UINT32, s->num_patches + 1,
                                                    s->patch_start, &s->d_patch_start);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(s->context, CLMG_UINT32, s->n, s->patch_rows,
                                          &s->d_patch_rows);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(s->context, CLMG_INT64, s->n + 1, s->block_ptr,
                                          &s->d_block_ptr);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(s->context, CLMG_UINT32, s->block_nnz, s->block_col,
                                          &s->d_block_col);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_from_host(s->context, real, s->block_nnz, s->block_val, &s->d_block_val);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(s->context, real, s->n, s->inverse_diagonal,
                                          &s->d_inverse_diagonal);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s->context, real, s->n, &s->r);
  if (status == CLMG_SUCCESS) {
    char options[256];
    snprintf(options, sizeof options, "%s -DPATCH_MAX=%d", clmg_real_options(s->context, real),
             PATCH_MAX);
    status = clmg_get_kernel(s->context, "patch_jacobi", options, "patch_jacobi", &s->kernel);
  }
  return status;
}

static clmg_status patch_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                               clmg_vector *x, int steps, int x_is_zero) {
  patch_smoother *s = data;
  clmg_status status = CLMG_SUCCESS;
  for (int step = 0; step < steps && status == CLMG_SUCCESS; ++step) {
    /* from a zero guess the first defect is b itself, and the pass writes x
     * without reading it: no fill of x, no copy of b */
    cl_uint from_zero = x_is_zero && step == 0;
    if (!from_zero)
      status = clmg_operator_defect(a, b, x, s->r);
    if (status != CLMG_SUCCESS || s->num_patches == 0)
      continue;
    clmg_kernel_args args;
    clmg_args_begin(&args, s->context, s->kernel, "patch_jacobi");
    cl_uint inner = (cl_uint)s->inner;
    /* the smoother's own arrays are whole buffers; r and x may be views */
    clmg_arg_buffer(&args, s->d_patch_start->buffer);
    clmg_arg_buffer(&args, s->d_patch_rows->buffer);
    clmg_arg_buffer(&args, s->d_block_ptr->buffer);
    clmg_arg_buffer(&args, s->d_block_col->buffer);
    clmg_arg_buffer(&args, s->d_block_val->buffer);
    clmg_arg_buffer(&args, s->d_inverse_diagonal->buffer);
    clmg_arg_vector(&args, from_zero ? b : s->r);
    clmg_arg_vector(&args, x);
    clmg_arg_real(&args, a->precision, s->omega);
    clmg_arg_real(&args, a->precision, s->inner_omega);
    clmg_arg_raw(&args, sizeof inner, &inner);
    clmg_arg_raw(&args, sizeof from_zero, &from_zero);
    status = clmg_args_end(&args);
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(s->context, s->kernel, "patch_jacobi",
                               s->num_patches * PATCH_GROUP_SIZE, PATCH_GROUP_SIZE, NULL);
  }
  return status;
}

/* A step: the defect (operator, b, x, r) and the patch pass (r, x read
 * and written, the block read at best once from memory, its layout); from
 * a zero guess the first step has no defect and does not read x. */
static double patch_bytes(void *data, const clmg_operator *a, int steps, int x_is_zero) {
  patch_smoother *s = data;
  double real = (double)clmg_dtype_size(a->precision), n = (double)s->n;
  double defect = clmg_operator_bytes(a) + 3.0 * n * real;
  double pass = 3.0 * n * real + (double)s->block_nnz * (real + 4.0) + n * (8.0 + 4.0 + real);
  double total = steps * (defect + pass);
  if (x_is_zero && steps > 0)
    total -= defect + n * real;
  return total;
}

static double patch_damping(void *data) {
  return ((patch_smoother *)data)->omega;
}

/* The rows grouped by patch (pieces of at most PATCH_MAX rows) and each
 * piece's block in local columns. */
static clmg_status build_layout(patch_smoother *s, const clmg_csr *a, const int32_t *patch) {
  size_t n = a->rows, num_ids = 0;
  for (size_t i = 0; i < n; ++i)
    if ((size_t)patch[i] + 1 > num_ids)
      num_ids = (size_t)patch[i] + 1;
  size_t *count = calloc(num_ids + 1, sizeof *count);
  int32_t *piece = clmg_alloc_array(n ? n : 1, sizeof *piece);
  uint32_t *local = clmg_alloc_array(n ? n : 1, sizeof *local);
  s->patch_rows = clmg_alloc_array(n ? n : 1, sizeof *s->patch_rows);
  s->block_ptr = clmg_alloc_array(n + 1, sizeof *s->block_ptr);
  s->inverse_diagonal = clmg_alloc_array(n ? n : 1, sizeof *s->inverse_diagonal);
  clmg_status status = CLMG_SUCCESS;
  if (!count || !piece || !local || !s->patch_rows || !s->block_ptr || !s->inverse_diagonal) {
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "patch block-Jacobi smoother: no host memory for %zu rows", n);
    goto done;
  }
  /* counting sort of the rows by patch id */
  for (size_t i = 0; i < n; ++i)
    count[patch[i] + 1]++;
  size_t pieces = 0;
  for (size_t p = 0; p < num_ids; ++p)
    pieces += (count[p + 1] + PATCH_MAX - 1) / PATCH_MAX;
  for (size_t p = 0; p < num_ids; ++p)
    count[p + 1] += count[p];
  for (size_t i = 0; i < n; ++i)
    s->patch_rows[count[patch[i]]++] = (uint32_t)i;
  /* count[p] is now the end of patch p: cut the patches into pieces */
  s->patch_start = clmg_alloc_array(pieces + 1, sizeof *s->patch_start);
  if (!s->patch_start) {
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "patch block-Jacobi smoother: no host memory for %zu patches", pieces);
    goto done;
  }
  size_t begin = 0, made = 0;
  for (size_t p = 0; p < num_ids; ++p) {
    for (size_t start = begin; start < count[p]; start += PATCH_MAX) {
      s->patch_start[made] = (uint32_t)start;
      for (size_t k = start; k < count[p] && k < start + PATCH_MAX; ++k) {
        piece[s->patch_rows[k]] = (int32_t)made;
        local[s->patch_rows[k]] = (uint32_t)(k - start);
      }
      made++;
    }
    begin = count[p];
  }
  s->patch_start[made] = (uint32_t)n;
  s->num_patches = made;
  /* the blocks: entries whose column is in the row's piece */
  s->block_ptr[0] = 0;
  size_t nnz = 0;
  for (size_t k = 0; k < n; ++k) {
    size_t i = s->patch_rows[k];
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
      nnz += piece[a->col[e]] == piece[i];
  }
  s->block_col = clmg_alloc_array(nnz ? nnz : 1, sizeof *s->block_col);
  s->block_val = clmg_alloc_array(nnz ? nnz : 1, sizeof *s->block_val);
  if (!s->block_col || !s->block_val) {
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "patch block-Jacobi smoother: no host memory for %zu block entries", nnz);
    goto done;
  }
  nnz = 0;
  for (size_t k = 0; k < n; ++k) {
    size_t i = s->patch_rows[k];
    double diagonal = 0;
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) {
      if ((size_t)a->col[e] == i)
        diagonal += a->val[e];
      if (piece[a->col[e]] != piece[i])
        continue;
      s->block_col[nnz] = local[a->col[e]];
      s->block_val[nnz++] = a->val[e];
    }
    if (diagonal == 0) {
      status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                         "row %zu has a zero diagonal entry; the patch block-Jacobi smoother "
                         "needs a nonzero diagonal",
                         i + 1);
      goto done;
    }
    s->inverse_diagonal[k] = 1.0 / diagonal;
    s->block_ptr[k + 1] = (int64_t)nnz;
  }
  s->block_nnz = nnz;
done:
  free(count);
  free(piece);
  free(local);
  return status;
}

clmg_status clmg_smoother_patch_jacobi(clmg_context *context, const clmg_csr *a,
                                       const int32_t *patch, int inner, double omega,
                                       double inner_omega, clmg_smoother *smoother) {
  if (!context || !smoother)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(smoother, 0, sizeof *smoother);
  clmg_clear_message(context);
  if (!a || !a->row_ptr || a->rows != a->cols || !patch)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "patch block-Jacobi smoother: a square host matrix and a patch per row "
                     "are needed");
  for (size_t i = 0; i < a->rows; ++i)
    if (patch[i] < 0 || (size_t)patch[i] >= a->rows)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "patch block-Jacobi smoother: row %zu has patch %d, outside [0, %zu)", i + 1,
                       (int)patch[i], a->rows);
  inner = inner == 0 ? 3 : inner;
  omega = omega == 0 ? 1.0 : omega;
  inner_omega = inner_omega == 0 ? 0.8 : inner_omega;
  if (inner < 1 || inner > 64 || !(omega > 0 && omega < 2) || !(inner_omega > 0 && inner_omega < 2))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "patch block-Jacobi smoother: %d inner iterations (1 to 64), omega %g and "
                     "inner omega %g (each in (0, 2))",
                     inner, omega, inner_omega);
  patch_smoother *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "patch block-Jacobi smoother");
  s->context = context;
  s->n = a->rows;
  s->inner = inner;
  s->omega = omega;
  s->inner_omega = inner_omega;
  clmg_status status = build_layout(s, a, patch);
  if (status != CLMG_SUCCESS) {
    patch_destroy(s);
    return status;
  }
  smoother->data = s;
  smoother->name = "patch-jacobi";
  smoother->setup = patch_setup;
  smoother->apply = patch_apply;
  smoother->bytes = patch_bytes;
  smoother->damping = patch_damping;
  smoother->destroy = patch_destroy;
  return CLMG_SUCCESS;
}
