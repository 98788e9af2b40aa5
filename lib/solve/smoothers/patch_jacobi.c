/* Inexact patch block-Jacobi smoothing (Fu et al. 2014, section 5.1.2,
 * eq. 8): x += omega M^-1 (b - A x), M = diag(A_kk) over patches of rows,
 * each M_kk^-1 approximated by `inner` weighted-Jacobi iterations in the
 * patch's local memory (kernel in cl/patch_jacobi.cl). A step is one defect
 * through the operator and one launch with a work-group per patch.
 *
 * The patches come from the caller (clmg_amg_hierarchy_build makes them
 * from aggregates of aggregates, so that no patch cuts an aggregate); the
 * blocks A_kk are taken from the host matrix when the smoother is made
 * (on all host cores) and uploaded at setup in the operator's precision
 * (converted to float on all host cores where the operator is float). */
#include "solve/internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows a patch may have (cl/patch_jacobi.cl's PATCH_MAX); larger patches
 * are cut into pieces of at most this many rows. */
#define PATCH_MAX 512

/* The layout's device arrays, in the kernel's order of arguments. */
enum {
  D_PATCH_START,
  D_PATCH_ROWS,
  D_BLOCK_PTR,
  D_BLOCK_COL,
  D_BLOCK_VAL,
  D_INVERSE_DIAGONAL,
  DEVICE_ARRAYS
};

typedef struct patch_smoother {
  clmg_context *context;
  double omega, inner_omega;
  int inner;
  size_t n, num_patches, block_nnz;
  /* host layout: rows grouped by patch, the blocks in patch-local columns */
  uint32_t *patch_start, *patch_rows, *block_col;
  int64_t *block_ptr;
  double *block_val, *inverse_diagonal;
  /* device copies (setup: buffers made from the host arrays, never zeroed
   * first) and the defect */
  cl_mem device[DEVICE_ARRAYS];
  size_t device_bytes[DEVICE_ARRAYS];
  clmg_vector *r;
  cl_kernel kernel;
} patch_smoother;

static void free_device(patch_smoother *s) {
  for (int k = 0; k < DEVICE_ARRAYS; ++k) {
    clmg_device_free(s->context, s->device[k], s->device_bytes[k]);
    s->device[k] = NULL;
    s->device_bytes[k] = 0;
  }
  clmg_vector_destroy(s->r);
  s->r = NULL;
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

/* Double to float on all host cores, refusing what a float vector's upload
 * of doubles refuses (lib/la/vector.c, with its messages): a finite value
 * beyond float's range, or an array whose every nonzero would become 0. */
enum { CONVERT_GRAIN = 1 << 14 };
typedef struct convert_job {
  const double *from;
  float *to;
  /* per range: the first finite value that becomes infinite (else
   * SIZE_MAX); whether a value is nonzero, whether one stays nonzero */
  size_t first_overflow[CLMG_MAX_HOST_THREADS];
  int nonzero[CLMG_MAX_HOST_THREADS], kept[CLMG_MAX_HOST_THREADS];
} convert_job;

static void convert_range(void *data, size_t range, size_t begin, size_t end) {
  convert_job *job = data;
  const double *from = job->from;
  float *to = job->to;
  size_t first_overflow = SIZE_MAX;
  int nonzero = 0, kept = 0;
  for (size_t i = begin; i < end; ++i) {
    double value = from[i];
    float converted = (float)value;
    to[i] = converted;
    nonzero |= value != 0;
    kept |= converted != 0;
    if (isinf(converted) && !isinf(value) && first_overflow == SIZE_MAX)
      first_overflow = i;
  }
  job->first_overflow[range] = first_overflow;
  job->nonzero[range] = nonzero;
  job->kept[range] = kept;
}

/* One of the layout's device arrays: count elements of `type` copied from
 * host (named as a vector of them in a failure's message). A buffer made
 * from the host array is not zeroed first, as a vector would be. */
static clmg_status upload(patch_smoother *s, int array, clmg_dtype type, size_t count,
                          const void *host) {
  char what[96];
  snprintf(what, sizeof what, "a vector of %zu %s elements", count, clmg_dtype_name(type));
  size_t bytes = count * clmg_dtype_size(type);
  clmg_status status =
      clmg_device_alloc(s->context, bytes, count ? host : NULL, what, &s->device[array]);
  if (status == CLMG_SUCCESS)
    s->device_bytes[array] = bytes;
  return status;
}

/* The same for count doubles of host in `real`: float ones converted on all
 * host cores first. */
static clmg_status upload_real(patch_smoother *s, int array, clmg_dtype real, size_t count,
                               const double *host) {
  if (real != CLMG_FLOAT)
    return upload(s, array, real, count, host);
  float *converted = clmg_alloc_array(count ? count : 1, sizeof *converted);
  if (!converted)
    return clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory to convert %zu values between double and float", count);
  convert_job job = {.from = host, .to = converted};
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; ++r) /* (ranges that do not run find none) */
    job.first_overflow[r] = SIZE_MAX;
  clmg_host_parallel_for(count, CONVERT_GRAIN, convert_range, &job);
  size_t first_overflow = SIZE_MAX;
  int nonzero = 0, kept = 0;
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; ++r) {
    if (job.first_overflow[r] < first_overflow)
      first_overflow = job.first_overflow[r];
    nonzero |= job.nonzero[r];
    kept |= job.kept[r];
  }
  clmg_status status = CLMG_SUCCESS;
  if (first_overflow != SIZE_MAX)
    status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "vector upload to float: element %zu is %g, beyond float's range "
                       "(+-%g); use double precision or scale the data",
                       first_overflow, host[first_overflow], (double)FLT_MAX);
  else if (nonzero && !kept)
    status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "vector upload to float: every nonzero element is below float's smallest "
                       "value (%g) and would become 0; use double precision or scale the data",
                       (double)FLT_TRUE_MIN);
  else
    status = upload(s, array, real, count, converted);
  free(converted);
  return status;
}

static clmg_status patch_setup(void *data, const clmg_operator *a) {
  patch_smoother *s = data;
  if (a->rows != s->n || a->cols != s->n)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "patch block-Jacobi smoother: made for %zu rows, the operator is %zu x %zu",
                     s->n, a->rows, a->cols);
  free_device(s);
  clmg_dtype real = a->precision;
  if (real == CLMG_DOUBLE && !s->context->info.has_fp64)
    return clmg_fail_no_fp64(s->context, "a double vector");
  clmg_status status = upload(s, D_PATCH_START, CLMG_UINT32, s->num_patches + 1, s->patch_start);
  if (status == CLMG_SUCCESS)
    status = upload(s, D_PATCH_ROWS, CLMG_UINT32, s->n, s->patch_rows);
  if (status == CLMG_SUCCESS)
    status = upload(s, D_BLOCK_PTR, CLMG_INT64, s->n + 1, s->block_ptr);
  if (status == CLMG_SUCCESS)
    status = upload(s, D_BLOCK_COL, CLMG_UINT32, s->block_nnz, s->block_col);
  if (status == CLMG_SUCCESS)
    status = upload_real(s, D_BLOCK_VAL, real, s->block_nnz, s->block_val);
  if (status == CLMG_SUCCESS)
    status = upload_real(s, D_INVERSE_DIAGONAL, real, s->n, s->inverse_diagonal);
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
    for (int k = 0; k < DEVICE_ARRAYS; ++k)
      clmg_arg_buffer(&args, s->device[k]);
    clmg_arg_vector(&args, from_zero ? b : s->r);
    clmg_arg_vector(&args, x);
    clmg_arg_real(&args, a->precision, s->omega);
    clmg_arg_real(&args, a->precision, s->inner_omega);
    clmg_arg_raw(&args, sizeof inner, &inner);
    clmg_arg_raw(&args, sizeof from_zero, &from_zero);
    status = clmg_args_end(&args);
    /* a work-group per patch, of the device table's size (any size works) */
    size_t group = s->context->params.patch_group_size;
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(s->context, s->kernel, "patch_jacobi", s->num_patches * group, group,
                               NULL);
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

/* The blocks are taken from the rows in patch order on all host cores: a
 * pass counts each row's block entries, a serial sum makes block_ptr, a
 * second pass copies the entries and inverts the diagonal (each row writes
 * only its own part: the serial layout, bit for bit, on any number of
 * threads; the fill is the first to touch the fresh block arrays). */
enum { LAYOUT_GRAIN = 4096 };
typedef struct layout_job {
  const clmg_csr *a;
  const uint32_t *patch_rows;
  const int32_t *piece;  /* per row: its piece */
  const uint32_t *local; /* per row: its place in its piece */
  int64_t *block_ptr;
  uint32_t *block_col;
  double *block_val, *inverse_diagonal;
  /* per range: the first place in patch order whose row has a zero
   * diagonal, else SIZE_MAX */
  size_t first_zero[CLMG_MAX_HOST_THREADS];
} layout_job;

static void layout_count_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const layout_job *job = data;
  const int64_t *row_ptr = job->a->row_ptr;
  const int32_t *col = job->a->col, *piece = job->piece;
  for (size_t k = begin; k < end; ++k) {
    size_t i = job->patch_rows[k];
    int32_t own = piece[i];
    int64_t count = 0;
    for (int64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e)
      count += piece[col[e]] == own;
    job->block_ptr[k + 1] = count;
  }
}

static void layout_fill_range(void *data, size_t range, size_t begin, size_t end) {
  layout_job *job = data;
  const int64_t *row_ptr = job->a->row_ptr;
  const int32_t *col = job->a->col, *piece = job->piece;
  const double *val = job->a->val;
  const uint32_t *local = job->local;
  uint32_t *block_col = job->block_col;
  double *block_val = job->block_val;
  size_t first_zero = SIZE_MAX;
  for (size_t k = begin; k < end; ++k) {
    size_t i = job->patch_rows[k];
    int32_t own = piece[i];
    int64_t next = job->block_ptr[k];
    double diagonal = 0;
    for (int64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      int32_t j = col[e];
      if ((size_t)j == i)
        diagonal += val[e];
      if (piece[j] != own)
        continue;
      block_col[next] = local[j];
      block_val[next++] = val[e];
    }
    if (diagonal == 0 && first_zero == SIZE_MAX)
      first_zero = k;
    job->inverse_diagonal[k] = 1.0 / diagonal;
  }
  job->first_zero[range] = first_zero;
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
  /* counting sort of the rows by patch id (serial: O(rows), not O(nnz)) */
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
  layout_job job = {.a = a,
                    .patch_rows = s->patch_rows,
                    .piece = piece,
                    .local = local,
                    .block_ptr = s->block_ptr,
                    .inverse_diagonal = s->inverse_diagonal};
  clmg_host_parallel_for(n, LAYOUT_GRAIN, layout_count_range, &job);
  s->block_ptr[0] = 0;
  for (size_t k = 0; k < n; ++k)
    s->block_ptr[k + 1] += s->block_ptr[k];
  size_t nnz = (size_t)s->block_ptr[n];
  /* (fresh, not zeroed: the fill's threads touch their own parts first) */
  s->block_col = clmg_alloc_array(nnz ? nnz : 1, sizeof *s->block_col);
  s->block_val = clmg_alloc_array(nnz ? nnz : 1, sizeof *s->block_val);
  if (!s->block_col || !s->block_val) {
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "patch block-Jacobi smoother: no host memory for %zu block entries", nnz);
    goto done;
  }
  job.block_col = s->block_col;
  job.block_val = s->block_val;
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; ++r) /* (ranges that do not run find none) */
    job.first_zero[r] = SIZE_MAX;
  clmg_host_parallel_for(n, LAYOUT_GRAIN, layout_fill_range, &job);
  /* the first row in patch order with a zero diagonal, as a serial pass meets it */
  size_t first_zero = SIZE_MAX;
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; ++r)
    if (job.first_zero[r] < first_zero)
      first_zero = job.first_zero[r];
  if (first_zero != SIZE_MAX) {
    status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "row %zu has a zero diagonal entry; the patch block-Jacobi smoother "
                       "needs a nonzero diagonal",
                       (size_t)s->patch_rows[first_zero] + 1);
    goto done;
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
