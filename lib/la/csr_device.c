/* CSR arrays on the device (clmg_csr_device): their transpose, a gather of
 * listed rows with renamed columns, a split by columns, a host copy,
 * and the row offsets of arrays whose row lengths a kernel has counted
 * (kernels in cl/csr_device.cl).
 *
 * Offsets and the lists of rows that take other kernels are made on the
 * device (cl/scan.cl): a prefix sum of the counts and a compaction, with
 * one read of 8 bytes for the total. Downloading the counts and uploading
 * the offsets moved 12 bytes a row over the bus, milliseconds on a GPU for
 * every matrix of a hierarchy. */
#include "la/internal.h"

#include <stdio.h>
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

/* The work-group size for `kernel`: `wanted`, or less where the device or
 * the kernel (its registers, its local memory) allows less. */
static size_t group_size_for(const clmg_context *context, cl_kernel kernel, size_t wanted) {
  size_t group = wanted, kernel_limit = 0;
  if (group > context->info.max_work_group_size)
    group = context->info.max_work_group_size;
  if (clGetKernelWorkGroupInfo(kernel, context->device, CL_KERNEL_WORK_GROUP_SIZE,
                               sizeof kernel_limit, &kernel_limit, NULL) == CL_SUCCESS &&
      kernel_limit > 0 && kernel_limit < group)
    group = kernel_limit;
  return group;
}

/* cl/scan.cl's counts per work-item of a block (its kernels ask for the
 * device table's work-group size). */
enum { SCAN_ITEMS = 8 };

static clmg_status scan_kernel(clmg_context *context, const char *name, cl_kernel *kernel) {
  return clmg_get_kernel(context, "scan", clmg_real_options(context, CLMG_FLOAT), name, kernel);
}

clmg_status clmg_scan_counts(clmg_context *context, cl_mem counts, size_t counts_offset, size_t n,
                             uint64_t scale, cl_mem offsets, size_t *total) {
  cl_long last = 0;
  clmg_status status =
      clmg_scan_counts_into(context, counts, counts_offset, n, scale, offsets, &last, 1);
  *total = status == CLMG_SUCCESS ? (size_t)last : 0;
  return status;
}

clmg_status clmg_scan_counts_into(clmg_context *context, cl_mem counts, size_t counts_offset,
                                  size_t n, uint64_t scale, cl_mem offsets, cl_long *total,
                                  int blocking) {
  *total = 0;
  cl_kernel totals_kernel = NULL, offsets_kernel = NULL, blocks_kernel = NULL;
  clmg_status status = scan_kernel(context, "scan_block_totals", &totals_kernel);
  if (status == CLMG_SUCCESS)
    status = scan_kernel(context, "scan_block_offsets", &offsets_kernel);
  if (status == CLMG_SUCCESS)
    status = scan_kernel(context, "scan_blocks", &blocks_kernel);
  if (status != CLMG_SUCCESS)
    return status;
  /* the first and the last pass must cut the same blocks */
  const size_t wanted = context->params.work_group_size;
  size_t local =
      group_size_for(context, blocks_kernel, group_size_for(context, totals_kernel, wanted));
  size_t offsets_local = group_size_for(context, offsets_kernel, wanted);
  size_t block = local * SCAN_ITEMS, blocks = (n + block - 1) / block;
  cl_mem block_sums = NULL;
  status =
      clmg_device_alloc(context, blocks * sizeof(cl_ulong), NULL, "scan block sums", &block_sums);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS && blocks > 0) {
    clmg_args_begin(&args, context, totals_kernel, "scan_block_totals");
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, counts);
    clmg_arg_ulong(&args, counts_offset);
    clmg_arg_buffer(&args, block_sums);
    clmg_arg_local(&args, local * sizeof(cl_ulong));
    status = clmg_args_end(&args);
    if (status == CLMG_SUCCESS)
      status =
          clmg_enqueue_1d(context, totals_kernel, "scan_block_totals", blocks * local, local, NULL);
  }
  if (status == CLMG_SUCCESS) {
    clmg_args_begin(&args, context, offsets_kernel, "scan_block_offsets");
    clmg_arg_ulong(&args, blocks);
    clmg_arg_buffer(&args, block_sums);
    clmg_arg_ulong(&args, n);
    clmg_arg_ulong(&args, scale);
    clmg_arg_buffer(&args, offsets);
    clmg_arg_local(&args, offsets_local * sizeof(cl_ulong));
    status = clmg_args_end(&args);
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(context, offsets_kernel, "scan_block_offsets", offsets_local,
                               offsets_local, NULL);
  }
  if (status == CLMG_SUCCESS && blocks > 0) {
    clmg_args_begin(&args, context, blocks_kernel, "scan_blocks");
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, counts);
    clmg_arg_ulong(&args, counts_offset);
    clmg_arg_buffer(&args, block_sums);
    clmg_arg_ulong(&args, scale);
    clmg_arg_buffer(&args, offsets);
    clmg_arg_local(&args, local * sizeof(cl_ulong));
    status = clmg_args_end(&args);
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(context, blocks_kernel, "scan_blocks", blocks * local, local, NULL);
  }
  if (status == CLMG_SUCCESS) {
    clmg_count_command(context, blocking);
    cl_int error = clEnqueueReadBuffer(context->queue, offsets, blocking ? CL_TRUE : CL_FALSE,
                                       n * sizeof *total, sizeof *total, total, 0, NULL, NULL);
    if (error != CL_SUCCESS)
      status = clmg_fail_cl(context, error, "reading the sum of the counts");
  }
  clmg_device_free(context, block_sums, blocks * sizeof(cl_ulong));
  return status;
}

clmg_status clmg_offsets_from_counts(clmg_context *context, const clmg_vector *counts,
                                     clmg_vector **offsets, size_t *total) {
  cl_long last = 0;
  clmg_status status = clmg_offsets_from_counts_into(context, counts, offsets, &last, 1);
  *total = status == CLMG_SUCCESS ? (size_t)last : 0;
  return status;
}

clmg_status clmg_offsets_from_counts_into(clmg_context *context, const clmg_vector *counts,
                                          clmg_vector **offsets, cl_long *total, int blocking) {
  *offsets = NULL;
  *total = 0;
  if (clmg_vector_type(counts) != CLMG_UINT32)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "offsets from counts: the counts must be uint32, not %s",
                     clmg_dtype_name(clmg_vector_type(counts)));
  size_t n = clmg_vector_length(counts);
  clmg_vector *result = NULL;
  clmg_status status = clmg_vector_create_unset(context, CLMG_INT64, n + 1, &result);
  if (status == CLMG_SUCCESS)
    status = clmg_scan_counts_into(context, counts->buffer, counts->offset, n, 1, result->buffer,
                                   total, blocking);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(result);
    return status;
  }
  *offsets = result;
  return CLMG_SUCCESS;
}

clmg_status clmg_row_list_begin(clmg_context *context, const clmg_vector *value, uint32_t low,
                                uint32_t high, const clmg_vector *also, uint32_t also_high,
                                int blocking, clmg_row_list_pending *pending) {
  memset(pending, 0, sizeof *pending);
  size_t n = clmg_vector_length(value);
  const char *options = clmg_real_options(context, CLMG_FLOAT);
  /* plain buffers, which the kernels fill whole: a vector's zeroing would
   * wait for the queue */
  pending->n = n;
  size_t flag_bytes = n * sizeof(cl_uint), place_bytes = (n + 1) * sizeof(cl_long);
  clmg_kernel_args args;
  clmg_status status =
      clmg_device_alloc(context, flag_bytes, NULL, "row list flags", &pending->flags);
  if (status == CLMG_SUCCESS)
    status = clmg_device_alloc(context, place_bytes, NULL, "row list places", &pending->places);
  if (status == CLMG_SUCCESS)
    status = clmg_args_for_kernel(context, "scan", options, "row_list_flags", &args);
  if (status == CLMG_SUCCESS) {
    cl_uint use_also = also != NULL;
    clmg_arg_ulong(&args, n);
    clmg_arg_vector(&args, value);
    clmg_arg_raw(&args, sizeof low, &low);
    clmg_arg_raw(&args, sizeof high, &high);
    clmg_arg_vector(&args, also ? also : value); /* a stand-in when unused */
    clmg_arg_raw(&args, sizeof also_high, &also_high);
    clmg_arg_raw(&args, sizeof use_also, &use_also);
    clmg_arg_buffer(&args, pending->flags);
    status = clmg_launch_args(&args, n);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_scan_counts_into(context, pending->flags, 0, n, 1, pending->places,
                                   &pending->listed, blocking);
  return status;
}

clmg_status clmg_row_list_end(clmg_context *context, clmg_row_list_pending *pending,
                              clmg_status status, clmg_vector **list, size_t *count) {
  *list = NULL;
  *count = 0;
  size_t n = pending->n, listed = status == CLMG_SUCCESS ? (size_t)pending->listed : 0;
  if (status != CLMG_SUCCESS) /* a read into pending may still be under way */
    clFinish(context->queue);
  const char *options = clmg_real_options(context, CLMG_FLOAT);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS && listed > 0)
    status = clmg_vector_create_unset(context, CLMG_UINT32, listed, list);
  if (status == CLMG_SUCCESS && listed > 0)
    status = clmg_args_for_kernel(context, "scan", options, "row_list_scatter", &args);
  if (status == CLMG_SUCCESS && listed > 0) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, pending->places);
    clmg_arg_buffer(&args, (*list)->buffer);
    status = clmg_launch_args(&args, n);
  }
  clmg_device_free(context, pending->flags, n * sizeof(cl_uint));
  clmg_device_free(context, pending->places, (n + 1) * sizeof(cl_long));
  memset(pending, 0, sizeof *pending);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*list);
    *list = NULL;
    return status;
  }
  *count = listed;
  return CLMG_SUCCESS;
}

clmg_status clmg_row_list(clmg_context *context, const clmg_vector *value, uint32_t low,
                          uint32_t high, const clmg_vector *also, uint32_t also_high,
                          clmg_vector **list, size_t *count) {
  clmg_row_list_pending pending;
  clmg_status status = clmg_row_list_begin(context, value, low, high, also, also_high, 1, &pending);
  return clmg_row_list_end(context, &pending, status, list, count);
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
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, rows, &length);
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
    status = clmg_vector_create_unset(context, CLMG_INT32, nnz, &m.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, nnz, &m.val);
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

/* cl/csr_device.cl's row classes: rows of SORT_SHORT + 1 to SORT_GROUP
 * entries are sorted by a work-group, longer ones by a merge sort; product rows of more than
 * SPGEMM_LONG products take a work-group while they have at most
 * SPGEMM_GROUP_COLUMNS columns. */
enum { SORT_SHORT = 32, SORT_GROUP = 2048, SPGEMM_LONG = 128, SPGEMM_GROUP_COLUMNS = 1024 };
/* cl/csr_device.cl's mark of a row too long for the work-group's table */
static const uint32_t SPGEMM_OVERFLOW = UINT32_MAX;

/* Launches a kernel (arguments set) over `rows` rows: a work-item a row
 * (walked with GRID_LOOP), or (by_group) a work-group for each of `rows`
 * listed rows. */
static clmg_status launch_by_rows(clmg_kernel_args *args, size_t rows, int by_group) {
  if (!by_group)
    return clmg_launch_args(args, rows);
  clmg_status status = clmg_args_end(args);
  if (status != CLMG_SUCCESS || rows == 0)
    return status;
  /* the device table's row_group_size: enough to share out a B row of a
   * coarse AMG level (tens to hundreds of entries) */
  size_t group = group_size_for(args->context, args->kernel, args->context->params.row_group_size);
  return clmg_enqueue_1d(args->context, args->kernel, args->name, rows * group, group, NULL);
}

static int well_formed(const clmg_csr_device *a) {
  return a && a->row_ptr && a->col && a->val && clmg_vector_type(a->row_ptr) == CLMG_INT64 &&
         clmg_vector_length(a->row_ptr) == a->rows + 1 && clmg_vector_type(a->col) == CLMG_INT32 &&
         (clmg_vector_type(a->val) == CLMG_DOUBLE || clmg_vector_type(a->val) == CLMG_FLOAT) &&
         clmg_vector_length(a->val) == clmg_vector_length(a->col) && a->rows <= INT32_MAX &&
         a->cols <= INT32_MAX;
}

/* Sorts the `count` listed rows of t, each longer than SORT_GROUP, by
 * column: every chunk of SORT_GROUP entries by a work-group, then merge
 * passes over runs of SORT_GROUP, 2 SORT_GROUP, ... entries between t's
 * arrays and a scratch copy of them, ending in t's. Launches: 2 + the passes
 * (log2 of the longest row over SORT_GROUP, rounded up, made even); one
 * host wait (the longest row's length). */
static clmg_status sort_long_rows(clmg_context *context, clmg_dtype precision,
                                  const clmg_vector *rows_list, size_t count,
                                  const clmg_csr_device *t, size_t total) {
  clmg_vector *longest = NULL, *scratch_col = NULL, *scratch_val = NULL;
  clmg_kernel_args args;
  uint32_t length = 0;
  clmg_status status = clmg_vector_create(context, CLMG_UINT32, 1, &longest);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_rows_longest", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, count);
    clmg_arg_buffer(&args, rows_list->buffer);
    clmg_arg_buffer(&args, t->row_ptr->buffer);
    clmg_arg_buffer(&args, longest->buffer);
    status = clmg_launch_args(&args, count);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(longest, &length);
  size_t chunks = ((size_t)length + SORT_GROUP - 1) / SORT_GROUP;
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_sort_chunks", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_buffer(&args, rows_list->buffer);
    clmg_arg_ulong(&args, chunks);
    clmg_arg_buffer(&args, t->row_ptr->buffer);
    clmg_arg_buffer(&args, t->col->buffer);
    clmg_arg_buffer(&args, t->val->buffer);
    status = launch_by_rows(&args, count * chunks, 1);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, total, &scratch_col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, total, &scratch_val);
  /* an even number of passes ends in t's arrays: a last pass with runs as
   * long as the rows copies */
  int passes = 0;
  for (size_t width = SORT_GROUP; width < length; width *= 2)
    passes++;
  passes += passes % 2;
  size_t width = SORT_GROUP;
  for (int pass = 0; status == CLMG_SUCCESS && pass < passes; pass++, width *= 2) {
    const clmg_vector *from_col = pass % 2 ? scratch_col : t->col;
    const clmg_vector *from_val = pass % 2 ? scratch_val : t->val;
    const clmg_vector *to_col = pass % 2 ? t->col : scratch_col;
    const clmg_vector *to_val = pass % 2 ? t->val : scratch_val;
    status = kernel(context, precision, "csr_merge_runs", &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_buffer(&args, rows_list->buffer);
      clmg_arg_buffer(&args, t->row_ptr->buffer);
      clmg_arg_buffer(&args, from_col->buffer);
      clmg_arg_buffer(&args, from_val->buffer);
      clmg_arg_ulong(&args, width);
      clmg_arg_buffer(&args, to_col->buffer);
      clmg_arg_buffer(&args, to_val->buffer);
      status = launch_by_rows(&args, count, 1);
    }
  }
  clmg_vector_destroy(longest);
  clmg_vector_destroy(scratch_col);
  clmg_vector_destroy(scratch_val);
  return status;
}

/* Sorts every row of t by column: the `long_count` listed rows of
 * SORT_SHORT + 1 to SORT_GROUP entries by a work-group each, the
 * `longer_count` listed longer ones by the merge sort, the rest by a
 * work-item each. */
static clmg_status sort_listed_rows(clmg_context *context, clmg_dtype precision,
                                    const clmg_vector *long_rows, size_t long_count,
                                    const clmg_vector *longer_rows, size_t longer_count,
                                    const clmg_csr_device *t, size_t total) {
  clmg_kernel_args args;
  clmg_status status = CLMG_SUCCESS;
  if (long_count > 0)
    status = kernel(context, precision, "csr_sort_rows_group", &args);
  if (status == CLMG_SUCCESS && long_count > 0) {
    clmg_arg_buffer(&args, long_rows->buffer);
    clmg_arg_buffer(&args, t->row_ptr->buffer);
    clmg_arg_buffer(&args, t->col->buffer);
    clmg_arg_buffer(&args, t->val->buffer);
    status = launch_by_rows(&args, long_count, 1);
  }
  if (status == CLMG_SUCCESS && longer_count > 0)
    status = sort_long_rows(context, precision, longer_rows, longer_count, t, total);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_sort_rows", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, t->rows);
    clmg_arg_buffer(&args, t->row_ptr->buffer);
    clmg_arg_buffer(&args, t->col->buffer);
    clmg_arg_buffer(&args, t->val->buffer);
    status = launch_by_rows(&args, t->rows, 0);
  }
  return status;
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
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, a->cols, &count);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(count, 0.0);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_count_columns", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, nnz);
    clmg_arg_buffer(&args, clmg_vector_cl_buffer(a->col, NULL));
    clmg_arg_buffer(&args, count->buffer);
    status = clmg_launch_args(&args, nnz);
  }
  /* from the row lengths: the offsets, and the rows the work-group sort
   * takes (cl/csr_device.cl's SORT_SHORT and SORT_GROUP) */
  clmg_vector *long_rows = NULL, *longer_rows = NULL;
  size_t long_count = 0, longer_count = 0;
  /* three sums read back, the last read blocking: one host wait */
  clmg_row_list_pending long_pending = {0}, longer_pending = {0};
  cl_long total_read = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts_into(context, count, &t.row_ptr, &total_read, 0);
  if (status == CLMG_SUCCESS)
    status = clmg_row_list_begin(context, count, SORT_SHORT, SORT_GROUP, NULL, 0, 0, &long_pending);
  if (status == CLMG_SUCCESS)
    status =
        clmg_row_list_begin(context, count, SORT_GROUP, UINT32_MAX, NULL, 0, 1, &longer_pending);
  status = clmg_row_list_end(context, &long_pending, status, &long_rows, &long_count);
  status = clmg_row_list_end(context, &longer_pending, status, &longer_rows, &longer_count);
  total = status == CLMG_SUCCESS ? (size_t)total_read : 0;
  /* the counts are the scatter's cursors, taken down to 0 */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, total, &t.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, total, &t.val);
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
  if (status == CLMG_SUCCESS)
    status = sort_listed_rows(context, precision, long_rows, long_count, longer_rows, longer_count,
                              &t, total);
  clmg_vector_destroy(long_rows);
  clmg_vector_destroy(longer_rows);
  clmg_vector_destroy(count);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&t);
    return status;
  }
  *out = t;
  return CLMG_SUCCESS;
}

/* The `value` lists of rows (cl/csr_device.cl's row classes) that
 * sort_listed_rows takes, from the row lengths; one host wait. */
static clmg_status list_long_rows(clmg_context *context, const clmg_vector *length,
                                  clmg_vector **long_rows, size_t *long_count,
                                  clmg_vector **longer_rows, size_t *longer_count) {
  clmg_row_list_pending long_pending = {0}, longer_pending = {0};
  clmg_status status =
      clmg_row_list_begin(context, length, SORT_SHORT, SORT_GROUP, NULL, 0, 0, &long_pending);
  if (status == CLMG_SUCCESS)
    status =
        clmg_row_list_begin(context, length, SORT_GROUP, UINT32_MAX, NULL, 0, 1, &longer_pending);
  status = clmg_row_list_end(context, &long_pending, status, long_rows, long_count);
  return clmg_row_list_end(context, &longer_pending, status, longer_rows, longer_count);
}

clmg_status clmg_csr_device_gather_rows(clmg_context *context, const clmg_csr_device *a,
                                        const clmg_vector *rows, const clmg_vector *col_map,
                                        size_t cols, clmg_csr_device *out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  clmg_clear_message(context);
  if (!well_formed(a) || !rows || clmg_vector_type(rows) != CLMG_INT32 || !col_map ||
      clmg_vector_type(col_map) != CLMG_INT32 || clmg_vector_length(col_map) < a->cols ||
      cols > INT32_MAX || clmg_vector_length(rows) > INT32_MAX || rows->offset != 0 ||
      col_map->offset != 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_gather_rows: the arrays are missing or do not match: a CSR "
                     "matrix (int64 offsets, int32 columns, real values), int32 rows, an int32 "
                     "column map of at least a's columns, at most 2^31 - 1 columns");
  const clmg_dtype precision = clmg_vector_type(a->val);
  const size_t count = clmg_vector_length(rows);
  clmg_csr_device g = {count, cols, NULL, NULL, NULL};
  clmg_vector *length = NULL, *bad = NULL, *long_rows = NULL, *longer_rows = NULL;
  size_t total = 0, long_count = 0, longer_count = 0;
  const int32_t none = INT32_MAX;
  int32_t faulty = INT32_MAX;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, count, &length);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, 1, &bad);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload(bad, &none);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_gather_lengths", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, count);
    clmg_arg_buffer(&args, rows->buffer);
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, length->buffer);
    clmg_arg_buffer(&args, bad->buffer);
    status = clmg_launch_args(&args, count);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, length, &g.row_ptr, &total);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, total, &g.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, total, &g.val);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_gather_fill", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, count);
    clmg_arg_buffer(&args, rows->buffer);
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->val->buffer);
    clmg_arg_buffer(&args, col_map->buffer);
    clmg_arg_raw(&args, sizeof(cl_long), &(cl_long){(cl_long)cols});
    clmg_arg_buffer(&args, g.row_ptr->buffer);
    clmg_arg_buffer(&args, g.col->buffer);
    clmg_arg_buffer(&args, g.val->buffer);
    clmg_arg_buffer(&args, bad->buffer);
    status = clmg_launch_args(&args, count);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(bad, &faulty);
  if (status == CLMG_SUCCESS && faulty != INT32_MAX)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "clmg_csr_device_gather_rows: listed row %d names no row of a's %zu, or "
                       "the map sends one of its columns outside 0..%zu",
                       (int)faulty, a->rows, cols ? cols - 1 : 0);
  if (status == CLMG_SUCCESS)
    status = list_long_rows(context, length, &long_rows, &long_count, &longer_rows, &longer_count);
  if (status == CLMG_SUCCESS)
    status = sort_listed_rows(context, precision, long_rows, long_count, longer_rows, longer_count,
                              &g, total);
  clmg_vector_destroy(long_rows);
  clmg_vector_destroy(longer_rows);
  clmg_vector_destroy(length);
  clmg_vector_destroy(bad);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&g);
    return status;
  }
  *out = g;
  return CLMG_SUCCESS;
}

clmg_status clmg_csr_device_split_columns(clmg_context *context, const clmg_csr_device *a,
                                          size_t begin, size_t end, clmg_csr_device *inside,
                                          clmg_csr_device *outside) {
  if (!context || !inside || !outside)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(inside, 0, sizeof *inside);
  memset(outside, 0, sizeof *outside);
  clmg_clear_message(context);
  if (!well_formed(a) || begin > end || end > a->cols)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_csr_device_split_columns: the arrays are missing or do not match, or "
                     "the columns [%zu, %zu) are not within the matrix's %zu",
                     begin, end, a ? a->cols : 0);
  const clmg_dtype precision = clmg_vector_type(a->val);
  clmg_csr_device in = {a->rows, end - begin, NULL, NULL, NULL};
  clmg_csr_device out = {a->rows, a->cols, NULL, NULL, NULL};
  clmg_vector *in_length = NULL, *out_length = NULL;
  cl_long in_total = 0, out_total = 0;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, a->rows, &in_length);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, a->rows, &out_length);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_split_count", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_raw(&args, sizeof(cl_long), &(cl_long){(cl_long)begin});
    clmg_arg_raw(&args, sizeof(cl_long), &(cl_long){(cl_long)end});
    clmg_arg_buffer(&args, in_length->buffer);
    clmg_arg_buffer(&args, out_length->buffer);
    status = clmg_launch_args(&args, a->rows);
  }
  /* both offsets, the second read blocking: one host wait */
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts_into(context, in_length, &in.row_ptr, &in_total, 0);
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts_into(context, out_length, &out.row_ptr, &out_total, 1);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, (size_t)in_total, &in.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, (size_t)in_total, &in.val);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, (size_t)out_total, &out.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, (size_t)out_total, &out.val);
  if (status == CLMG_SUCCESS)
    status = kernel(context, precision, "csr_split_fill", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->val->buffer);
    clmg_arg_raw(&args, sizeof(cl_long), &(cl_long){(cl_long)begin});
    clmg_arg_raw(&args, sizeof(cl_long), &(cl_long){(cl_long)end});
    clmg_arg_buffer(&args, in.row_ptr->buffer);
    clmg_arg_buffer(&args, in.col->buffer);
    clmg_arg_buffer(&args, in.val->buffer);
    clmg_arg_buffer(&args, out.row_ptr->buffer);
    clmg_arg_buffer(&args, out.col->buffer);
    clmg_arg_buffer(&args, out.val->buffer);
    status = clmg_launch_args(&args, a->rows);
  }
  clmg_vector_destroy(in_length);
  clmg_vector_destroy(out_length);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&in);
    clmg_csr_device_free(&out);
    return status;
  }
  *inside = in;
  *outside = out;
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

/* Starts pass `pass` of a product kernel over A's rows: pass 0 the
 * work-group kernel on its listed rows, pass 1 the work-item kernel on all
 * rows (it skips those the first took). The names are literals: the
 * arguments keep the pointer until the launch (and the profile after). */
static clmg_status product_pass_begin(clmg_context *context, const char *options,
                                      const char *group_kernel, const char *item_kernel, int pass,
                                      const clmg_vector *group_rows, size_t rows,
                                      clmg_kernel_args *args) {
  const char *kernel = pass == 0 ? group_kernel : item_kernel;
  clmg_status status = clmg_args_for_kernel(context, "csr_device", options, kernel, args);
  if (status != CLMG_SUCCESS)
    return status;
  if (pass == 0)
    clmg_arg_buffer(args, group_rows->buffer);
  else
    clmg_arg_ulong(args, rows);
  return CLMG_SUCCESS;
}

/* The rows of more than SPGEMM_GROUP_COLUMNS columns' pattern: a work-group
 * each (csr_multiply_pattern_wide) walks them in windows. */
static clmg_status pattern_wide(clmg_context *context, const char *options,
                                const clmg_csr_device *a, const clmg_csr_device *b, cl_uint fill,
                                const clmg_vector *wide_rows, size_t wide_count,
                                clmg_vector *length, const clmg_csr_device *c) {
  if (wide_count == 0)
    return CLMG_SUCCESS;
  clmg_kernel_args args;
  clmg_status status =
      clmg_args_for_kernel(context, "csr_device", options, "csr_multiply_pattern_wide", &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_mem stand_in = length->buffer; /* never written while counting */
  clmg_arg_buffer(&args, wide_rows->buffer);
  clmg_arg_buffer(&args, a->row_ptr->buffer);
  clmg_arg_buffer(&args, a->col->buffer);
  clmg_arg_buffer(&args, b->row_ptr->buffer);
  clmg_arg_buffer(&args, b->col->buffer);
  clmg_arg_raw(&args, sizeof fill, &fill);
  clmg_arg_buffer(&args, length->buffer);
  clmg_arg_buffer(&args, fill ? c->row_ptr->buffer : stand_in);
  clmg_arg_buffer(&args, fill ? c->col->buffer : stand_in);
  return launch_by_rows(&args, wide_count, 1);
}

/* C's pattern: fill == 0 counts each row's columns into `length`, fill == 1
 * writes the sorted columns at c_ptr. The work-group kernel first on its
 * listed rows (group_rows), the work-item kernel the rows of few products;
 * then, filling, the wide_rows go to the window kernel (counting, the
 * caller sends there the rows the group kernel found too long for its
 * tables: count_overflow). */
static clmg_status product_pattern(clmg_context *context, const char *options,
                                   const clmg_csr_device *a, const clmg_csr_device *b, cl_uint fill,
                                   const clmg_vector *group_rows, size_t group_count,
                                   const clmg_vector *wide_rows, size_t wide_count,
                                   clmg_vector *length, clmg_csr_device *c) {
  clmg_status status = CLMG_SUCCESS;
  cl_mem stand_in = length->buffer; /* never written while counting */
  for (int pass = group_count ? 0 : 1; pass < 2 && status == CLMG_SUCCESS; pass++) {
    if (pass == 1 && fill)
      status = pattern_wide(context, options, a, b, 1, wide_rows, wide_count, length, c);
    if (status != CLMG_SUCCESS)
      break;
    clmg_kernel_args args;
    status = product_pass_begin(context, options,
                                fill ? "csr_multiply_pattern_group" : "csr_multiply_count_group",
                                "csr_multiply_pattern", pass, group_rows, a->rows, &args);
    if (status != CLMG_SUCCESS)
      break;
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, b->row_ptr->buffer);
    clmg_arg_buffer(&args, b->col->buffer);
    clmg_arg_raw(&args, sizeof fill, &fill);
    clmg_arg_buffer(&args, length->buffer);
    clmg_arg_buffer(&args, fill ? c->row_ptr->buffer : stand_in);
    clmg_arg_buffer(&args, fill ? c->col->buffer : stand_in);
    status = launch_by_rows(&args, pass == 0 ? group_count : a->rows, pass == 0);
  }
  return status;
}

/* C's values on its pattern: the work-group kernel on the rows of many
 * products (the hash table's, then the wide ones: its windows take both),
 * the work-item kernel on the others. */
static clmg_status product_values(clmg_context *context, const char *options,
                                  const clmg_csr_device *a, const clmg_csr_device *b,
                                  const clmg_vector *group_rows, size_t group_count,
                                  const clmg_vector *wide_rows, size_t wide_count,
                                  const clmg_csr_device *c) {
  clmg_status status = CLMG_SUCCESS;
  /* lists: 0 the hash table's rows, 1 the wide rows (both the group
   * kernel), 2 every row (the work-item kernel skips the others') */
  const clmg_vector *lists[2] = {group_rows, wide_rows};
  const size_t counts[2] = {group_count, wide_count};
  for (int list = 0; list < 3 && status == CLMG_SUCCESS; list++) {
    if (list < 2 && counts[list] == 0)
      continue;
    clmg_kernel_args args;
    status =
        product_pass_begin(context, options, "csr_multiply_values_group", "csr_multiply_values",
                           list < 2 ? 0 : 1, list < 2 ? lists[list] : NULL, a->rows, &args);
    if (status != CLMG_SUCCESS)
      break;
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->val->buffer);
    clmg_arg_buffer(&args, b->row_ptr->buffer);
    clmg_arg_buffer(&args, b->col->buffer);
    clmg_arg_buffer(&args, b->val->buffer);
    clmg_arg_buffer(&args, c->row_ptr->buffer);
    clmg_arg_buffer(&args, c->col->buffer);
    clmg_arg_buffer(&args, c->val->buffer);
    status = launch_by_rows(&args, list < 2 ? counts[list] : a->rows, list < 2);
  }
  return status;
}

/* One pass of csr_multiply_single (cl/csr_device.cl): fill 0 counts into
 * `length` and flags refused rows in `refused`, fill 1 writes c. */
static clmg_status single_pass(clmg_context *context, const char *options, const clmg_csr_device *a,
                               const clmg_csr_device *b, cl_uint fill, clmg_vector *length,
                               clmg_vector *refused, const clmg_csr_device *c) {
  clmg_kernel_args args;
  clmg_status status =
      clmg_args_for_kernel(context, "csr_device", options, "csr_multiply_single", &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_mem stand_in = length->buffer; /* never written while counting */
  clmg_arg_ulong(&args, a->rows);
  clmg_arg_buffer(&args, a->row_ptr->buffer);
  clmg_arg_buffer(&args, a->col->buffer);
  clmg_arg_buffer(&args, a->val->buffer);
  clmg_arg_buffer(&args, b->row_ptr->buffer);
  clmg_arg_buffer(&args, b->col->buffer);
  clmg_arg_buffer(&args, b->val->buffer);
  clmg_arg_raw(&args, sizeof fill, &fill);
  clmg_arg_buffer(&args, length->buffer);
  clmg_arg_buffer(&args, refused->buffer);
  clmg_arg_buffer(&args, fill ? c->row_ptr->buffer : stand_in);
  clmg_arg_buffer(&args, fill ? c->col->buffer : stand_in);
  clmg_arg_buffer(&args, fill ? c->val->buffer : stand_in);
  return clmg_launch_args(&args, a->rows);
}

/* C = A B where B has at most one entry a row (the tentative prolongator of
 * one candidate, whose A P~ is A's rows with the columns renamed): a
 * counting and a filling pass of csr_multiply_single, one host wait (the
 * refusal flag and the offsets' sum read together), where the general path
 * takes five kernels, a list of rows and two waits and searches C's row
 * for every product. Whether B qualifies is found on the device, by the
 * counting pass itself: a row that names a B row of more entries, or has
 * more columns than the kernel keeps (SPGEMM_SINGLE), refuses, and then
 * *taken stays 0 and nothing is made (the caller takes the general path;
 * the count pass is all that was spent). The caller checks nnz(B) <=
 * rows(B) first, which every such B meets, so that general products
 * (B of several entries a row) do not pay for the try. */
static clmg_status multiply_single(clmg_context *context, const char *options,
                                   const clmg_csr_device *a, const clmg_csr_device *b,
                                   clmg_csr_device *out, int *taken) {
  *taken = 0;
  clmg_csr_device c = {a->rows, b->cols, NULL, NULL, NULL};
  clmg_vector *length = NULL, *refused = NULL;
  cl_long nnz_read = 0;
  cl_uint refused_read = 0;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, a->rows, &length);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_UINT32, 1, &refused);
  if (status == CLMG_SUCCESS)
    status = single_pass(context, options, a, b, 0, length, refused, &c);
  if (status == CLMG_SUCCESS)
    status = clmg_read_buffer(context, refused->buffer, 0, 0, sizeof refused_read, &refused_read,
                              "the refusal flag of the one-entry product");
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts_into(context, length, &c.row_ptr, &nnz_read, 1);
  if (status != CLMG_SUCCESS) /* a read may still be under way */
    clFinish(context->queue);
  if (status == CLMG_SUCCESS && refused_read == 0) {
    *taken = 1;
    status = clmg_vector_create_unset(context, CLMG_INT32, (size_t)nnz_read, &c.col);
    if (status == CLMG_SUCCESS)
      status =
          clmg_vector_create_unset(context, clmg_vector_type(a->val), (size_t)nnz_read, &c.val);
    if (status == CLMG_SUCCESS)
      status = single_pass(context, options, a, b, 1, length, refused, &c);
  }
  clmg_vector_destroy(length);
  clmg_vector_destroy(refused);
  if (status != CLMG_SUCCESS || !*taken) {
    clmg_csr_device_free(&c);
    return status;
  }
  *out = c;
  return CLMG_SUCCESS;
}

/* The checks of both products' arguments (name: the function's). */
static clmg_status check_product(clmg_context *context, const char *name, const clmg_csr_device *a,
                                 const clmg_csr_device *b, clmg_csr_device *out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  clmg_clear_message(context);
  if (!well_formed(a) || !well_formed(b))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the arrays are missing or do not match: int64 "
                     "row offsets (rows + 1), int32 columns and real values of the same length",
                     name);
  if (a->cols != b->rows)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: cannot multiply a %zu x %zu matrix by a %zu x "
                     "%zu one",
                     name, a->rows, a->cols, b->rows, b->cols);
  clmg_dtype precision = clmg_vector_type(a->val);
  if (clmg_vector_type(b->val) != precision)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the values are %s and %s; both must be of one "
                     "precision",
                     name, clmg_dtype_name(precision), clmg_dtype_name(clmg_vector_type(b->val)));
  return CLMG_SUCCESS;
}

static clmg_status multiply_general(clmg_context *context, const clmg_csr_device *a,
                                    const clmg_csr_device *b, clmg_csr_device *out);

clmg_status clmg_csr_device_multiply(clmg_context *context, const clmg_csr_device *a,
                                     const clmg_csr_device *b, clmg_csr_device *out) {
  clmg_status status = check_product(context, "clmg_csr_device_multiply", a, b, out);
  if (status != CLMG_SUCCESS)
    return status;
  /* a B of at most one entry a row has no more entries than rows */
  if (clmg_csr_device_nnz(b) <= b->rows) {
    int taken = 0;
    status = multiply_single(context, clmg_real_options(context, clmg_vector_type(a->val)), a, b,
                             out, &taken);
    if (status != CLMG_SUCCESS || taken)
      return status;
  }
  return multiply_general(context, a, b, out);
}

clmg_status clmg_csr_device_multiply_general(clmg_context *context, const clmg_csr_device *a,
                                             const clmg_csr_device *b, clmg_csr_device *out) {
  clmg_status status = check_product(context, "clmg_csr_device_multiply_general", a, b, out);
  return status == CLMG_SUCCESS ? multiply_general(context, a, b, out) : status;
}

/* Gustavson's product for any B (a work-item or a work-group a row, by the
 * row's products and columns). */
static clmg_status multiply_general(clmg_context *context, const clmg_csr_device *a,
                                    const clmg_csr_device *b, clmg_csr_device *out) {
  clmg_dtype precision = clmg_vector_type(a->val);
  const char *options = clmg_real_options(context, precision);
  clmg_csr_device c = {a->rows, b->cols, NULL, NULL, NULL};
  clmg_vector *length = NULL, *products = NULL, *counting_rows = NULL, *filling_rows = NULL;
  clmg_vector *wide_rows = NULL;
  size_t nnz = 0, counting = 0, filling = 0, wide = 0;
  /* the products per row: the rows the work-group kernels take */
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, a->rows, &products);
  if (status == CLMG_SUCCESS)
    status = clmg_args_for_kernel(context, "csr_device", options, "csr_multiply_products", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, a->rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, b->row_ptr->buffer);
    clmg_arg_buffer(&args, products->buffer);
    status = clmg_launch_args(&args, a->rows);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_row_list(context, products, SPGEMM_LONG, UINT32_MAX, NULL, 0, &counting_rows,
                           &counting);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, a->rows, &length);
  if (status == CLMG_SUCCESS)
    status =
        product_pattern(context, options, a, b, 0, counting_rows, counting, NULL, 0, length, &c);
  /* C's offsets, the counted rows that fit the work-group's tables
   * (filling) and the wider ones, which the window kernels take. Without
   * counted rows there are neither: the offsets' sum is the one read. With
   * them, the rows the group kernel marked SPGEMM_OVERFLOW (more than
   * SPGEMM_GROUP_COLUMNS columns, or a full table, which takes more) are
   * listed with the offsets and the filling rows (which leave them out
   * either way), the last read blocking: where there are none, as in an AMG
   * level's products, no row is wide and the offsets stand, one host wait.
   * Otherwise the window kernel counts those rows, and the offsets and the
   * wide rows are made again, the read blocking: a second wait. Every
   * row's length is written before a list reads it (the work-item kernel
   * took the short rows). */
  clmg_row_list_pending filling_pending = {0}, wide_pending = {0};
  cl_long nnz_read = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts_into(context, length, &c.row_ptr, &nnz_read, counting == 0);
  if (status == CLMG_SUCCESS && counting > 0)
    status = clmg_row_list_begin(context, products, SPGEMM_LONG, UINT32_MAX, length,
                                 SPGEMM_GROUP_COLUMNS, 0, &filling_pending);
  if (status == CLMG_SUCCESS && counting > 0)
    status = clmg_row_list_begin(context, length, SPGEMM_OVERFLOW - 1, SPGEMM_OVERFLOW, NULL, 0, 1,
                                 &wide_pending);
  status = clmg_row_list_end(context, &filling_pending, status, &filling_rows, &filling);
  status = clmg_row_list_end(context, &wide_pending, status, &wide_rows, &wide);
  if (status == CLMG_SUCCESS && wide > 0) {
    status = pattern_wide(context, options, a, b, 0, wide_rows, wide, length, &c);
    clmg_vector_destroy(c.row_ptr);
    clmg_vector_destroy(wide_rows);
    c.row_ptr = wide_rows = NULL;
    if (status == CLMG_SUCCESS)
      status = clmg_offsets_from_counts_into(context, length, &c.row_ptr, &nnz_read, 0);
    if (status == CLMG_SUCCESS)
      status = clmg_row_list_begin(context, length, SPGEMM_GROUP_COLUMNS, UINT32_MAX, NULL, 0, 1,
                                   &wide_pending);
    status = clmg_row_list_end(context, &wide_pending, status, &wide_rows, &wide);
  }
  if (status != CLMG_SUCCESS) /* a read into nnz_read may still be under way */
    clFinish(context->queue);
  nnz = status == CLMG_SUCCESS ? (size_t)nnz_read : 0;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, nnz, &c.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, nnz, &c.val);
  if (status == CLMG_SUCCESS)
    status = product_pattern(context, options, a, b, 1, filling_rows, filling, wide_rows, wide,
                             length, &c);
  if (status == CLMG_SUCCESS)
    status = product_values(context, options, a, b, filling_rows, filling, wide_rows, wide, &c);
  clmg_vector_destroy(products);
  clmg_vector_destroy(counting_rows);
  clmg_vector_destroy(filling_rows);
  clmg_vector_destroy(wide_rows);
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
