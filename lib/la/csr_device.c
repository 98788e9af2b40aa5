/* CSR arrays on the device (clmg_csr_device): their transpose, a host copy,
 * and the row offsets of arrays whose row lengths a kernel has counted
 * (kernels in cl/csr_device.cl).
 *
 * Offsets are summed on the host: the counts come back (4 bytes a row), one
 * pass sums them and the offsets go up (8 bytes a row). A device scan would
 * save those two transfers, but they move a twelfth of what the arrays
 * themselves hold, and the sum is needed on the host anyway to size them. */
#include "la/internal.h"

#include <stdlib.h>
#include <string.h>

size_t clmg_csr_device_nnz(const clmg_csr_device *a) {
  return a && a->col ? clmg_vector_length(a->col) : 0;
}

void clmg_csr_device_free(clmg_csr_device *a) {
  if (!a)
    return;
  clmg_vector_destroy(a->row_ptr);
  clmg_vector_destroy(a->col);
  clmg_vector_destroy(a->val);
  memset(a, 0, sizeof *a);
}

clmg_status clmg_offsets_from_counts(clmg_context *context, const clmg_vector *counts,
                                     clmg_vector **offsets, size_t *total) {
  *offsets = NULL;
  *total = 0;
  size_t n = clmg_vector_length(counts);
  uint32_t *host_counts = clmg_alloc_array(n ? n : 1, sizeof *host_counts);
  int64_t *host_offsets = clmg_alloc_array(n + 1, sizeof *host_offsets);
  clmg_status status = CLMG_SUCCESS;
  if (!host_counts || !host_offsets)
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "no host memory for the offsets of %zu rows", n);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(counts, host_counts);
  if (status == CLMG_SUCCESS) {
    host_offsets[0] = 0;
    for (size_t i = 0; i < n; i++)
      host_offsets[i + 1] = host_offsets[i] + host_counts[i];
    *total = (size_t)host_offsets[n];
    status = clmg_vector_create(context, CLMG_INT64, n + 1, offsets);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload(*offsets, host_offsets);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*offsets);
    *offsets = NULL;
    *total = 0;
  }
  free(host_counts);
  free(host_offsets);
  return status;
}

static clmg_status kernel(clmg_context *context, clmg_dtype precision, const char *name,
                          clmg_kernel_args *args) {
  return clmg_args_for_kernel(context, "csr_device", clmg_real_options(context, precision), name,
                              args);
}

clmg_status clmg_csr_device_build_rows(clmg_context *context, const char *family,
                                       const char *options, const char *kernel_name, size_t rows,
                                       size_t cols, clmg_dtype precision,
                                       clmg_row_pass_arguments arguments, const void *data,
                                       clmg_csr_device *out) {
  clmg_csr_device m = {rows, cols, NULL, NULL, NULL};
  clmg_vector *length = NULL;
  size_t nnz = 0;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create(context, CLMG_UINT32, rows, &length);
  if (status == CLMG_SUCCESS)
    status = clmg_args_for_kernel(context, family, options, kernel_name, &args);
  if (status == CLMG_SUCCESS) {
    cl_mem stand_in = length->buffer;
    arguments(&args, data, 0, length->buffer, stand_in, stand_in, stand_in);
    status = clmg_launch_args(&args, rows);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, length, &m.row_ptr, &nnz);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_INT32, nnz, &m.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, nnz, &m.val);
  if (status == CLMG_SUCCESS)
    status = clmg_args_for_kernel(context, family, options, kernel_name, &args);
  if (status == CLMG_SUCCESS) {
    arguments(&args, data, 1, length->buffer, m.row_ptr->buffer, m.col->buffer, m.val->buffer);
    status = clmg_launch_args(&args, rows);
  }
  clmg_vector_destroy(length);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&m);
    return status;
  }
  *out = m;
  return CLMG_SUCCESS;
}

/* Work-items a work-group of the row-per-group kernels (sorts, products):
 * enough to share out a B row of a coarse AMG level (tens to hundreds of
 * entries). */
enum { ROW_GROUP_SIZE = 64 };

/* Launches a kernel (arguments set) over `rows` rows: a work-item a row, or
 * (by_group) a work-group a row. */
static clmg_status launch_by_rows(clmg_kernel_args *args, size_t rows, int by_group) {
  if (!by_group)
    return clmg_launch_args(args, rows);
  clmg_status status = clmg_args_end(args);
  if (status != CLMG_SUCCESS || rows == 0)
    return status;
  size_t group = ROW_GROUP_SIZE, kernel_limit = 0;
  if (group > args->context->info.max_work_group_size)
    group = args->context->info.max_work_group_size;
  if (clGetKernelWorkGroupInfo(args->kernel, args->context->device, CL_KERNEL_WORK_GROUP_SIZE,
                               sizeof kernel_limit, &kernel_limit, NULL) == CL_SUCCESS &&
      kernel_limit > 0 && kernel_limit < group)
    group = kernel_limit;
  /* a grid of groups that walks the rows: most rows are short and left to
   * the work-item kernels at once */
  size_t groups = rows < 65536 ? rows : 65536;
  return clmg_enqueue_1d(args->context, args->kernel, args->name, groups * group, group, NULL);
}

static int well_formed(const clmg_csr_device *a) {
  return a && a->row_ptr && a->col && a->val && clmg_vector_type(a->row_ptr) == CLMG_INT64 &&
         clmg_vector_length(a->row_ptr) == a->rows + 1 && clmg_vector_type(a->col) == CLMG_INT32 &&
         (clmg_vector_type(a->val) == CLMG_DOUBLE || clmg_vector_type(a->val) == CLMG_FLOAT) &&
         clmg_vector_length(a->val) == clmg_vector_length(a->col) && a->rows <= INT32_MAX &&
         a->cols <= INT32_MAX;
}

clmg_status clmg_csr_device_transpose(clmg_context *context, const clmg_csr_device *a,
                                      clmg_csr_device *out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  clmg_clear_message(context);
  if (!well_formed(a))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_transpose: the arrays are missing or do not match: int64 "
                     "row offsets (rows + 1), int32 columns and real values of the same length");
  clmg_dtype precision = clmg_vector_type(a->val);
  size_t nnz = clmg_csr_device_nnz(a), total = 0;
  clmg_csr_device t = {a->cols, a->rows, NULL, NULL, NULL};
  clmg_vector *count = NULL;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create(context, CLMG_UINT32, a->cols, &count);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_count_columns", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, nnz);
    clmg_arg_buffer(&args, clmg_vector_cl_buffer(a->col, NULL));
    clmg_arg_buffer(&args, count->buffer);
    status = clmg_launch_args(&args, nnz);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, count, &t.row_ptr, &total);
  /* the counts become the cursors of the scatter */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(count, 0.0);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_INT32, total, &t.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, total, &t.val);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_transpose_scatter", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->val->buffer);
    clmg_arg_buffer(&args, t.row_ptr->buffer);
    clmg_arg_buffer(&args, count->buffer);
    clmg_arg_buffer(&args, t.col->buffer);
    clmg_arg_buffer(&args, t.val->buffer);
    status = clmg_launch_args(&args, a->rows);
  }
  static const char *const sorts[2] = {"csr_sort_rows_group", "csr_sort_rows"};
  for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; pass++) {
    status = kernel(context, precision, sorts[pass], &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, t.rows);
      clmg_arg_buffer(&args, t.row_ptr->buffer);
      clmg_arg_buffer(&args, t.col->buffer);
      clmg_arg_buffer(&args, t.val->buffer);
      status = launch_by_rows(&args, t.rows, pass == 0);
    }
  }
  clmg_vector_destroy(count);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&t);
    return status;
  }
  *out = t;
  return CLMG_SUCCESS;
}

clmg_status clmg_csr_device_download(const clmg_csr_device *a, clmg_csr *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output matrix is NULL");
  memset(out, 0, sizeof *out);
  if (!well_formed(a))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_csr_device_download: the arrays are missing or do not match");
  size_t nnz = clmg_csr_device_nnz(a);
  clmg_csr result = {a->rows, a->cols, NULL, NULL, NULL};
  result.row_ptr = clmg_alloc_array(a->rows + 1, sizeof *result.row_ptr);
  result.col = clmg_alloc_array(nnz ? nnz : 1, sizeof *result.col);
  result.val = clmg_alloc_array(nnz ? nnz : 1, sizeof *result.val);
  clmg_status status = CLMG_SUCCESS;
  if (!result.row_ptr || !result.col || !result.val)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate a %zu x %zu CSR matrix with %zu entries", a->rows,
                            a->cols, nnz);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(a->row_ptr, result.row_ptr);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(a->col, result.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(a->val, result.val);
  if (status != CLMG_SUCCESS) {
    if (!error || !error->message[0])
      clmg_error_set(error, status, "%s", clmg_context_message(clmg_vector_context(a->val)));
    clmg_csr_free(&result);
    return status;
  }
  *out = result;
  return CLMG_SUCCESS;
}

/* C's pattern: fill == 0 counts each row's columns into `length`, fill == 1
 * writes the sorted columns at c_ptr; the work-group kernel first, the
 * work-item kernel then takes the other rows (and those the first found too
 * long for its tables). */
static clmg_status product_pattern(clmg_context *context, const char *options,
                                   const clmg_csr_device *a, const clmg_csr_device *b, cl_uint fill,
                                   clmg_vector *length, clmg_csr_device *c) {
  static const char *const names[2] = {"csr_multiply_pattern_group", "csr_multiply_pattern"};
  clmg_status status = CLMG_SUCCESS;
  for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; pass++) {
    clmg_kernel_args args;
    status = clmg_args_for_kernel(context, "csr_device", options, names[pass], &args);
    if (status != CLMG_SUCCESS)
      break;
    cl_mem stand_in = length->buffer; /* never written while counting */
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, b->row_ptr->buffer);
    clmg_arg_buffer(&args, b->col->buffer);
    clmg_arg_raw(&args, sizeof fill, &fill);
    clmg_arg_buffer(&args, length->buffer);
    clmg_arg_buffer(&args, fill ? c->row_ptr->buffer : stand_in);
    clmg_arg_buffer(&args, fill ? c->col->buffer : stand_in);
    status = launch_by_rows(&args, a->rows, pass == 0);
  }
  return status;
}

/* C's values on its pattern, the work-group kernel's rows and the others. */
static clmg_status product_values(clmg_context *context, const char *options,
                                  const clmg_csr_device *a, const clmg_csr_device *b,
                                  const clmg_csr_device *c) {
  static const char *const names[2] = {"csr_multiply_values_group", "csr_multiply_values"};
  clmg_status status = CLMG_SUCCESS;
  for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; pass++) {
    clmg_kernel_args args;
    status = clmg_args_for_kernel(context, "csr_device", options, names[pass], &args);
    if (status != CLMG_SUCCESS)
      break;
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->val->buffer);
    clmg_arg_buffer(&args, b->row_ptr->buffer);
    clmg_arg_buffer(&args, b->col->buffer);
    clmg_arg_buffer(&args, b->val->buffer);
    clmg_arg_buffer(&args, c->row_ptr->buffer);
    clmg_arg_buffer(&args, c->col->buffer);
    clmg_arg_buffer(&args, c->val->buffer);
    status = launch_by_rows(&args, a->rows, pass == 0);
  }
  return status;
}

clmg_status clmg_csr_device_multiply(clmg_context *context, const clmg_csr_device *a,
                                     const clmg_csr_device *b, clmg_csr_device *out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  clmg_clear_message(context);
  if (!well_formed(a) || !well_formed(b))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_multiply: the arrays are missing or do not match: int64 "
                     "row offsets (rows + 1), int32 columns and real values of the same length");
  if (a->cols != b->rows)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_multiply: cannot multiply a %zu x %zu matrix by a %zu x "
                     "%zu one",
                     a->rows, a->cols, b->rows, b->cols);
  clmg_dtype precision = clmg_vector_type(a->val);
  if (clmg_vector_type(b->val) != precision)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_multiply: the values are %s and %s; both must be of one "
                     "precision",
                     clmg_dtype_name(precision), clmg_dtype_name(clmg_vector_type(b->val)));
  const char *options = clmg_real_options(context, precision);
  clmg_csr_device c = {a->rows, b->cols, NULL, NULL, NULL};
  clmg_vector *length = NULL;
  size_t nnz = 0;
  clmg_status status = clmg_vector_create(context, CLMG_UINT32, a->rows, &length);
  if (status == CLMG_SUCCESS)
    status = product_pattern(context, options, a, b, 0, length, &c);
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, length, &c.row_ptr, &nnz);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_INT32, nnz, &c.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, nnz, &c.val);
  if (status == CLMG_SUCCESS)
    status = product_pattern(context, options, a, b, 1, length, &c);
  if (status == CLMG_SUCCESS)
    status = product_values(context, options, a, b, &c);
  clmg_vector_destroy(length);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&c);
    return status;
  }
  *out = c;
  return CLMG_SUCCESS;
}

clmg_status clmg_csr_device_upload(clmg_context *context, const clmg_csr *a, clmg_dtype precision,
                                   clmg_csr_device *out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  clmg_clear_message(context);
  if (!a || !a->row_ptr || (clmg_csr_nnz(a) > 0 && (!a->col || !a->val)) || a->rows > INT32_MAX ||
      a->cols > INT32_MAX)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_upload: the host matrix is missing or too large");
  if (precision != CLMG_DOUBLE && precision != CLMG_FLOAT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_upload: values must be double or float, not %s",
                     clmg_dtype_name(precision));
  size_t nnz = clmg_csr_nnz(a);
  clmg_csr_device d = {a->rows, a->cols, NULL, NULL, NULL};
  clmg_status status =
      clmg_vector_create_from_host(context, CLMG_INT64, a->rows + 1, a->row_ptr, &d.row_ptr);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, nnz, a->col, &d.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, precision, nnz, a->val, &d.val);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&d);
    return status;
  }
  *out = d;
  return CLMG_SUCCESS;
}
