/* Smoothed aggregation's aggregates and tentative prolongator on the device
 * (lib/amg/amg_internal.h, cl/amg_aggregate.cl), for one unknown per node
 * and one near-nullspace vector: the host only launches, and reads back a
 * count per round and per sweep. The result is the host's with parallel
 * roots (lib/amg/mis.c, smoothed_aggregation.c), aggregate for aggregate.
 *
 * For several unknowns per node (clmg_amg_device_aggregate_rows), the node
 * matrix (a Frobenius norm per block, merged from the node's sorted rows),
 * the same strength, roots and joining on it, the host's dissolving of
 * small aggregates, and the rows' aggregates expanded from the nodes' and
 * read back once (the diagonal check and the patches use them); then the
 * fit of k candidates per aggregate (clmg_amg_device_fit, a Gram-Schmidt
 * QR per aggregate), the candidates staying on the device.
 *
 * Work: the rounds of the independent set read A k + 1 times each (k the
 * root distance; about log n rounds), a joining sweep reads it once and
 * each row's strong entries again per neighbouring aggregate; the fit reads
 * the aggregates' members once. Launches: (k + 1) per round, 1 per sweep
 * and 9 more; the flags of BATCH rounds or sweeps are read back at once
 * (up to BATCH - 1 of them enqueued after the last that did anything, and
 * returning at once). */
#include "core/internal.h"
#include "la/internal.h"

#include "amg/amg_internal.h"

#include <stdint.h>
#include <string.h>

typedef struct device_level {
  clmg_context *context;
  const clmg_csr_device *a;
  const char *options;
  clmg_dtype precision;
  double theta;
} device_level;

static clmg_status get(const device_level *d, const char *name, clmg_kernel_args *args) {
  return clmg_args_for_kernel(d->context, "amg_aggregate", d->options, name, args);
}

/* The rounds of the independent set and the joining sweeps enqueued per
 * read of their flags (the counter's first BATCH entries, one per round
 * or sweep): a round after the one that left nothing undecided, or a
 * sweep after one that changed nothing, finds its predecessor's flag 0
 * and does nothing (cl/amg_aggregate.cl's AGG_SETTLED), so the rounds,
 * the sweeps and their results are those of a read after each. A round
 * reads A k + 1 times; one that does nothing costs k + 1 launches of a
 * kernel that returns at once. 4: a read per 4 rounds (about log n of
 * them: 10 on a 120 x 120 grid) for at most 3 such rounds; 8 saved a
 * read on Regular 2 for 18 more launches. */
enum { BATCH = 4 };

/* The first `count` of the counter's flags, in one blocking read. */
static clmg_status read_flags(const device_level *d, const clmg_vector *counter, size_t count,
                              uint32_t *flags) {
  return clmg_read_buffer(d->context, counter->buffer, 1, counter->offset * sizeof *flags,
                          count * sizeof *flags, flags, "reading the aggregation's flags");
}

/* The index of the first flag of `count` that is 0, or count. */
static size_t first_zero(const uint32_t *flags, size_t count) {
  size_t k = 0;
  while (k < count && flags[k] != 0)
    ++k;
  return k;
}

/* The arguments the kernels on the strength graph start with: A's
 * pattern and the strength of each entry (a byte per entry). */
static void graph_args(const device_level *d, const clmg_vector *strong, clmg_kernel_args *args) {
  clmg_arg_ulong(args, d->a->rows);
  clmg_arg_buffer(args, d->a->row_ptr->buffer);
  clmg_arg_buffer(args, d->a->col->buffer);
  clmg_arg_buffer(args, strong->buffer);
}

/* The strength of every entry (strong), then the roots: tuple[i] ends in
 * state 2 (in) or 0 (out). */
static clmg_status choose_roots(const device_level *d, const clmg_vector *s, clmg_vector *strong,
                                int distance, clmg_vector *tuple, clmg_vector *counter,
                                int *rounds) {
  size_t n = d->a->rows;
  clmg_vector *m[2] = {NULL, NULL};
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(d->context, CLMG_INT64, n, &m[0]);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, CLMG_INT64, n, &m[1]);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_start", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, d->a->row_ptr->buffer);
    clmg_arg_buffer(&args, d->a->col->buffer);
    clmg_arg_buffer(&args, d->a->val->buffer);
    clmg_arg_buffer(&args, s->buffer);
    clmg_arg_real(&args, d->precision, d->theta);
    clmg_arg_buffer(&args, strong->buffer);
    clmg_arg_buffer(&args, tuple->buffer);
    status = clmg_launch_args(&args, n);
  }
  uint32_t undecided[BATCH] = {1};
  size_t settled = BATCH; /* the first round of the last batch that left none */
  *rounds = 0;
  /* every round decides at least the undecided node of the largest tuple */
  while (status == CLMG_SUCCESS && settled == BATCH && (size_t)*rounds <= n) {
    status = clmg_vector_fill(counter, 0.0);
    for (cl_uint slot = 0; slot < BATCH && status == CLMG_SUCCESS; slot++) {
      const clmg_vector *from = tuple;
      int to = 0;
      for (int step = 0; step < distance && status == CLMG_SUCCESS; step++) {
        status = get(d, "agg_max_step", &args);
        if (status == CLMG_SUCCESS) {
          graph_args(d, strong, &args);
          clmg_arg_buffer(&args, from->buffer);
          clmg_arg_buffer(&args, m[to]->buffer);
          clmg_arg_buffer(&args, counter->buffer);
          clmg_arg_raw(&args, sizeof slot, &slot);
          status = clmg_launch_args(&args, n);
        }
        from = m[to];
        to ^= 1;
      }
      if (status == CLMG_SUCCESS)
        status = get(d, "agg_decide", &args);
      if (status == CLMG_SUCCESS) {
        clmg_arg_ulong(&args, n);
        clmg_arg_buffer(&args, tuple->buffer);
        clmg_arg_buffer(&args, from->buffer);
        clmg_arg_buffer(&args, counter->buffer);
        clmg_arg_raw(&args, sizeof slot, &slot);
        status = clmg_launch_args(&args, n);
      }
    }
    if (status == CLMG_SUCCESS)
      status = read_flags(d, counter, BATCH, undecided);
    if (status == CLMG_SUCCESS) {
      settled = first_zero(undecided, BATCH);
      *rounds += (int)(settled < BATCH ? settled + 1 : BATCH);
    }
  }
  clmg_vector_destroy(m[0]);
  clmg_vector_destroy(m[1]);
  return status;
}

/* Rows in no aggregate join their neighbours' sweep after sweep until a
 * sweep changes nothing (*aggregate_out: the last sweep's output). */
static clmg_status join_sweeps(const device_level *d, const clmg_vector *strong,
                               clmg_vector *counter, clmg_vector **aggregate_out) {
  size_t n = d->a->rows;
  clmg_vector *aggregate = *aggregate_out, *next = NULL;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(d->context, CLMG_INT32, n, &next);
  clmg_vector *buffer[2] = {aggregate, next};
  uint32_t changed[BATCH];
  size_t sweeps = 0, settled = BATCH;
  while (status == CLMG_SUCCESS && settled == BATCH && sweeps <= n) {
    status = clmg_vector_fill(counter, 0.0);
    for (cl_uint slot = 0; slot < BATCH && status == CLMG_SUCCESS; slot++) {
      status = get(d, "agg_join", &args);
      if (status == CLMG_SUCCESS) {
        graph_args(d, strong, &args);
        clmg_arg_buffer(&args, buffer[(sweeps + slot) % 2]->buffer);
        clmg_arg_buffer(&args, buffer[(sweeps + slot + 1) % 2]->buffer);
        clmg_arg_buffer(&args, counter->buffer);
        clmg_arg_raw(&args, sizeof slot, &slot);
        status = clmg_launch_args(&args, n);
      }
    }
    if (status == CLMG_SUCCESS)
      status = read_flags(d, counter, BATCH, changed);
    if (status == CLMG_SUCCESS) {
      settled = first_zero(changed, BATCH);
      sweeps += settled < BATCH ? settled + 1 : BATCH;
    }
  }
  /* the aggregates: the output of the last sweep that ran (the first that
   * changed nothing, or, past the bound, the last enqueued) */
  *aggregate_out = buffer[sweeps % 2];
  clmg_vector_destroy(buffer[(sweeps + 1) % 2]);
  return status;
}

/* The aggregates numbered in order of their first rows: *count of them,
 * read back blocking or not (then a later blocking read, or clFinish,
 * completes it). */
static clmg_status number_aggregates(const device_level *d, clmg_vector *aggregate, int blocking,
                                     cl_long *count) {
  size_t n = d->a->rows;
  clmg_vector *first = NULL, *flag = NULL, *number = NULL;
  clmg_kernel_args args;
  /* the number of an aggregate: how many aggregates start before its first
   * row */
  clmg_status status = clmg_vector_create_unset(d->context, CLMG_INT32, n, &first);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(first, (double)n);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_first_row", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, first->buffer);
    status = clmg_launch_args(&args, n);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, CLMG_UINT32, n, &flag);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_first_flags", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, first->buffer);
    clmg_arg_buffer(&args, flag->buffer);
    status = clmg_launch_args(&args, n);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts_into(d->context, flag, &number, count, blocking);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_renumber", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, first->buffer);
    clmg_arg_buffer(&args, number->buffer);
    status = clmg_launch_args(&args, n);
  }
  clmg_vector_destroy(first);
  clmg_vector_destroy(flag);
  clmg_vector_destroy(number);
  return status;
}

/* Aggregates named by their roots' rows, joined sweep after sweep, then
 * numbered in order of their first rows: *count of them (read as
 * number_aggregates's), -1 for rows in none. */
static clmg_status form_aggregates(const device_level *d, const clmg_vector *strong,
                                   const clmg_vector *tuple, clmg_vector *counter,
                                   clmg_vector **aggregate_out, int blocking, cl_long *count) {
  size_t n = d->a->rows;
  clmg_kernel_args args;
  clmg_status status = get(d, "agg_open", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, tuple->buffer);
    clmg_arg_buffer(&args, (*aggregate_out)->buffer);
    status = clmg_launch_args(&args, n);
  }
  if (status == CLMG_SUCCESS)
    status = join_sweeps(d, strong, counter, aggregate_out);
  if (status == CLMG_SUCCESS)
    status = number_aggregates(d, *aggregate_out, blocking, count);
  return status;
}

/* The rows of each aggregate, for the fits: size[a] (count entries) and
 * member_row[i] (1 where row i is in an aggregate) by agg_sizes. */
static clmg_status count_members(const device_level *d, const clmg_vector *aggregate, size_t n,
                                 size_t count, clmg_vector **size, clmg_vector **member_row) {
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(d->context, CLMG_UINT32, count ? count : 1, size);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(*size, 0.0);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, CLMG_UINT32, n ? n : 1, member_row);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_sizes", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, (*size)->buffer);
    clmg_arg_buffer(&args, (*member_row)->buffer);
    status = clmg_launch_args(&args, n);
  }
  return status;
}

/* ... then start[a] (the offsets of the sizes; *total the aggregated rows,
 * a blocking read) and members (the rows of aggregate a at start[a]) by
 * agg_scatter. */
static clmg_status scatter_members(const device_level *d, const clmg_vector *aggregate, size_t n,
                                   size_t count, clmg_vector *size, clmg_vector **start,
                                   clmg_vector **members, size_t *total) {
  clmg_kernel_args args;
  clmg_vector *sizes = NULL;
  clmg_status status = clmg_vector_view(size, 0, count, &sizes);
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(d->context, sizes, start, total);
  clmg_vector_destroy(sizes);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, CLMG_INT32, *total ? *total : 1, members);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_scatter", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, (*start)->buffer);
    clmg_arg_buffer(&args, size->buffer);
    clmg_arg_buffer(&args, (*members)->buffer);
    status = clmg_launch_args(&args, n);
  }
  return status;
}

/* P~ (one entry per aggregated row) and the coarse candidate from the
 * aggregates and the candidate b; *count the aggregates, from *pending
 * (number_aggregates's read without blocking, which the sizes' sum
 * completes: the sizes are counted for n aggregates, the most there can
 * be, the ones past the count 0); with none, no P~. */
static clmg_status fit(const device_level *d, const clmg_vector *aggregate, const cl_long *pending,
                       const clmg_vector *b, clmg_csr_device *tentative, clmg_vector **coarse_b,
                       size_t *count) {
  size_t n = d->a->rows;
  clmg_vector *size = NULL, *member_row = NULL, *start = NULL, *members = NULL;
  size_t aggregated = 0, total = 0;
  cl_long entries = 0;
  clmg_kernel_args args;
  *tentative = (clmg_csr_device){n, 0, NULL, NULL, NULL};
  clmg_status status = count_members(d, aggregate, n, n, &size, &member_row);
  /* P~'s rows: an entry for each aggregated row, as many as the sizes'
   * sum, whose blocking read next completes this one */
  if (status == CLMG_SUCCESS)
    status =
        clmg_offsets_from_counts_into(d->context, member_row, &tentative->row_ptr, &entries, 0);
  if (status == CLMG_SUCCESS)
    status = scatter_members(d, aggregate, n, n, size, &start, &members, &total);
  if (status != CLMG_SUCCESS) /* the reads into entries and *pending may still be under way */
    clFinish(d->context->queue);
  aggregated = status == CLMG_SUCCESS ? (size_t)entries : 0;
  *count = status == CLMG_SUCCESS ? (size_t)*pending : 0;
  if (status == CLMG_SUCCESS && (aggregated != total || *count > n))
    status = clmg_fail(d->context, CLMG_ERROR_OPENCL,
                       "AMG on the device: %zu aggregated rows but aggregates of %zu in all, %zu "
                       "aggregates of %zu rows",
                       aggregated, total, *count, n);
  tentative->cols = *count;
  if (status == CLMG_SUCCESS && *count == 0) {
    clmg_csr_device_free(tentative);
    clmg_vector_destroy(size);
    clmg_vector_destroy(member_row);
    clmg_vector_destroy(start);
    clmg_vector_destroy(members);
    return CLMG_SUCCESS;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, CLMG_INT32, aggregated, &tentative->col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, d->precision, aggregated, &tentative->val);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, d->precision, *count, coarse_b);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_fit", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, *count);
    clmg_arg_buffer(&args, start->buffer);
    clmg_arg_buffer(&args, members->buffer);
    clmg_arg_buffer(&args, b->buffer);
    clmg_arg_buffer(&args, tentative->row_ptr->buffer);
    clmg_arg_buffer(&args, tentative->val->buffer);
    clmg_arg_buffer(&args, tentative->col->buffer);
    clmg_arg_buffer(&args, (*coarse_b)->buffer);
    status = clmg_launch_args(&args, *count);
  }
  clmg_vector_destroy(size);
  clmg_vector_destroy(member_row);
  clmg_vector_destroy(start);
  clmg_vector_destroy(members);
  if (status != CLMG_SUCCESS) {
    *count = 0;
    clmg_csr_device_free(tentative);
    clmg_vector_destroy(*coarse_b);
    *coarse_b = NULL;
  }
  return status;
}

/* s = sqrt|diag| of d->a, and, where missing is not NULL, *missing the
 * first row that has couplings but no stored diagonal (the rows where
 * there is none), read back blocking or not (then a later blocking read,
 * or clFinish, completes it; the queue is in order, so the counter may be
 * filled again at once). */
static clmg_status diagonal_roots(const device_level *d, clmg_vector *s, clmg_vector *counter,
                                  int blocking, uint32_t *missing) {
  size_t n = d->a->rows;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_fill(counter, (double)n);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_diagonal_root", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, d->a->row_ptr->buffer);
    clmg_arg_buffer(&args, d->a->col->buffer);
    clmg_arg_buffer(&args, d->a->val->buffer);
    clmg_arg_buffer(&args, s->buffer);
    clmg_arg_buffer(&args, counter->buffer);
    status = clmg_launch_args(&args, n);
  }
  if (status == CLMG_SUCCESS && missing)
    status =
        clmg_read_buffer(d->context, counter->buffer, blocking, counter->offset * sizeof *missing,
                         sizeof *missing, missing, "reading the first row without a diagonal");
  return status;
}

clmg_status clmg_amg_device_tentative(clmg_context *context, const clmg_csr_device *a, double theta,
                                      int distance, const clmg_vector *b,
                                      clmg_csr_device *tentative, clmg_vector **coarse_b,
                                      size_t *count, int *rounds, int32_t *aggregate_host) {
  memset(tentative, 0, sizeof *tentative);
  *coarse_b = NULL;
  *count = 0;
  size_t n = a->rows;
  clmg_dtype precision = clmg_vector_type(a->val);
  if (a->rows != a->cols || clmg_vector_length(b) != n || clmg_vector_type(b) != precision ||
      n > (size_t)INT32_MAX - 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "AMG on the device: a %zu x %zu matrix and a candidate of %zu %s entries "
                     "(a square matrix of at most 2^31 - 2 rows and one candidate entry per "
                     "row, in the matrix's precision)",
                     a->rows, a->cols, clmg_vector_length(b), clmg_dtype_name(clmg_vector_type(b)));
  device_level d = {context, a, clmg_real_options(context, precision), precision, theta};
  clmg_vector *s = NULL, *tuple = NULL, *counter = NULL, *aggregate = NULL, *strong = NULL;
  clmg_status status = clmg_vector_create_unset(context, precision, n ? n : 1, &s);
  /* a byte per entry, in a buffer of 4-byte elements */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, clmg_csr_device_nnz(a) / 4 + 1, &strong);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT64, n ? n : 1, &tuple);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, BATCH, &counter);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, n ? n : 1, &aggregate);
  /* s = sqrt|diag|, and the first row that would be aggregated without a
   * stored diagonal (the prolongator smoothing needs one), which comes
   * back with the rounds' first flags: on such a matrix the rounds are
   * wasted, never out of bounds, and nothing after them runs */
  uint32_t missing = (uint32_t)n;
  if (status == CLMG_SUCCESS)
    status = diagonal_roots(&d, s, counter, n == 0, &missing);
  int taken = 0;
  if (status == CLMG_SUCCESS && n > 0)
    status = choose_roots(&d, s, strong, distance, tuple, counter, &taken);
  if (status != CLMG_SUCCESS) /* the read into missing may still be under way */
    clFinish(context->queue);
  if (status == CLMG_SUCCESS && missing < n)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "AMG: row %u does not store its diagonal entry, which the prolongator "
                       "smoothing needs",
                       missing + 1);
  /* the aggregates' count comes back with the sizes' sum in fit */
  cl_long aggregates = 0;
  if (status == CLMG_SUCCESS && n > 0)
    status = form_aggregates(&d, strong, tuple, counter, &aggregate, 0, &aggregates);
  if (status == CLMG_SUCCESS && n > 0)
    status = fit(&d, aggregate, &aggregates, b, tentative, coarse_b, count);
  else if (status != CLMG_SUCCESS) /* the read into aggregates may still be under way */
    clFinish(context->queue);
  if (status == CLMG_SUCCESS && aggregate_host && n > 0)
    status = clmg_vector_download(aggregate, aggregate_host);
  if (rounds)
    *rounds = taken;
  clmg_vector_destroy(s);
  clmg_vector_destroy(strong);
  clmg_vector_destroy(tuple);
  clmg_vector_destroy(counter);
  clmg_vector_destroy(aggregate);
  return status;
}

/* ---- aggregates of nodes of several unknowns ---- */

/* The node matrix of d->a (block unknowns per node, each row's columns in
 * order, as every clmg_csr's) into *nodes, on the device. */
static clmg_status node_matrix(const device_level *d, size_t block, clmg_csr_device *nodes) {
  size_t rows = d->a->rows, n = rows / block, nnz = 0;
  clmg_vector *count = NULL;
  clmg_kernel_args args;
  memset(nodes, 0, sizeof *nodes);
  clmg_status status = clmg_vector_create_unset(d->context, CLMG_UINT32, n, &count);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_node_count", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_ulong(&args, block);
    clmg_arg_buffer(&args, d->a->row_ptr->buffer);
    clmg_arg_buffer(&args, d->a->col->buffer);
    clmg_arg_buffer(&args, count->buffer);
    status = clmg_launch_args(&args, n);
  }
  nodes->rows = nodes->cols = n;
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(d->context, count, &nodes->row_ptr, &nnz);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, CLMG_INT32, nnz ? nnz : 1, &nodes->col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(d->context, d->precision, nnz ? nnz : 1, &nodes->val);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_node_fill", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_ulong(&args, block);
    clmg_arg_buffer(&args, d->a->row_ptr->buffer);
    clmg_arg_buffer(&args, d->a->col->buffer);
    clmg_arg_buffer(&args, d->a->val->buffer);
    clmg_arg_buffer(&args, nodes->row_ptr->buffer);
    clmg_arg_buffer(&args, nodes->col->buffer);
    clmg_arg_buffer(&args, nodes->val->buffer);
    status = clmg_launch_args(&args, n);
  }
  clmg_vector_destroy(count);
  if (status != CLMG_SUCCESS)
    clmg_csr_device_free(nodes);
  return status;
}

/* The members of aggregates of fewer than min_size members leave them
 * (where dissolved is not NULL: only when some but not all are that small,
 * *dissolved 1 then, as the host's dissolving). */
static clmg_status dissolve(const device_level *d, clmg_vector *aggregate, size_t count,
                            size_t min_size, clmg_vector *counter, int *dissolved) {
  size_t n = d->a->rows;
  clmg_vector *size = NULL;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(d->context, CLMG_UINT32, count, &size);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(size, 0.0);
  if (status == CLMG_SUCCESS)
    status = get(d, "agg_count_sizes", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, size->buffer);
    status = clmg_launch_args(&args, n);
  }
  int go = 1;
  if (status == CLMG_SUCCESS && dissolved) {
    uint32_t kept = 0;
    status = clmg_vector_fill(counter, 0.0);
    if (status == CLMG_SUCCESS)
      status = get(d, "agg_count_kept", &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, count);
      clmg_arg_buffer(&args, size->buffer);
      clmg_arg_ulong(&args, min_size);
      clmg_arg_buffer(&args, counter->buffer);
      status = clmg_launch_args(&args, count);
    }
    if (status == CLMG_SUCCESS)
      status = read_flags(d, counter, 1, &kept);
    go = kept > 0 && kept < count;
    *dissolved = go;
  }
  if (status == CLMG_SUCCESS && go)
    status = get(d, "agg_dissolve", &args);
  if (status == CLMG_SUCCESS && go) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, aggregate->buffer);
    clmg_arg_buffer(&args, size->buffer);
    clmg_arg_ulong(&args, min_size);
    status = clmg_launch_args(&args, n);
  }
  clmg_vector_destroy(size);
  return status;
}

clmg_status clmg_amg_device_aggregate_rows(clmg_context *context, const clmg_csr_device *a,
                                           size_t block, double theta, int distance,
                                           size_t min_size, size_t min_fit, int32_t *aggregate_host,
                                           size_t *count, clmg_vector **aggregate_device) {
  *count = 0;
  if (aggregate_device)
    *aggregate_device = NULL;
  size_t rows = a->rows;
  clmg_dtype precision = clmg_vector_type(a->val);
  if (a->rows != a->cols || block < 1 || block > 16 || rows % block != 0 ||
      rows > (size_t)INT32_MAX - 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "AMG on the device: a %zu x %zu matrix cannot be aggregated in nodes of %zu "
                     "unknowns (a square matrix of at most 2^31 - 2 rows, a multiple of the block "
                     "size, and blocks of 1 to 16)",
                     a->rows, a->cols, block);
  device_level d = {context, a, clmg_real_options(context, precision), precision, theta};
  clmg_csr_device nodes = {0};
  clmg_vector *counter = NULL, *s = NULL, *strong = NULL, *tuple = NULL, *aggregate = NULL,
              *expanded = NULL;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, BATCH, &counter);
  if (status == CLMG_SUCCESS && block > 1) {
    status = node_matrix(&d, block, &nodes);
    d.a = &nodes;
  }
  if (status != CLMG_SUCCESS || rows == 0) {
    clmg_vector_destroy(counter);
    clmg_csr_device_free(&nodes);
    return status;
  }
  size_t n = d.a->rows;
  status = clmg_vector_create_unset(context, precision, n, &s);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_unset(context, CLMG_INT32, clmg_csr_device_nnz(d.a) / 4 + 1, &strong);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT64, n, &tuple);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, n, &aggregate);
  /* a missing diagonal is the caller's to check (on the unknowns' rows) */
  if (status == CLMG_SUCCESS)
    status = diagonal_roots(&d, s, counter, 1, NULL);
  int taken = 0;
  if (status == CLMG_SUCCESS)
    status = choose_roots(&d, s, strong, distance, tuple, counter, &taken);
  cl_long numbered = 0;
  if (status == CLMG_SUCCESS)
    status = form_aggregates(&d, strong, tuple, counter, &aggregate, 1, &numbered);
  *count = (size_t)numbered;
  /* as the host's aggregate_graph: aggregates below the least size are
   * dissolved and their nodes joined to others (unless all are small),
   * then those still too small for the fit given up */
  size_t least = min_size > min_fit ? min_size : min_fit;
  if (status == CLMG_SUCCESS && least > 1 && *count > 0) {
    int dissolved = 0;
    status = dissolve(&d, aggregate, *count, least, counter, &dissolved);
    if (status == CLMG_SUCCESS && dissolved)
      status = join_sweeps(&d, strong, counter, &aggregate);
    if (status == CLMG_SUCCESS && dissolved)
      status = number_aggregates(&d, aggregate, 1, &numbered);
    *count = (size_t)numbered;
  }
  if (status == CLMG_SUCCESS && min_fit > 1 && *count > 0) {
    status = dissolve(&d, aggregate, *count, min_fit, counter, NULL);
    if (status == CLMG_SUCCESS)
      status = number_aggregates(&d, aggregate, 1, &numbered);
    *count = (size_t)numbered;
  }
  /* the rows' aggregates from their nodes' */
  const clmg_vector *result = aggregate;
  if (status == CLMG_SUCCESS && block > 1) {
    clmg_kernel_args args;
    status = clmg_vector_create_unset(context, CLMG_INT32, rows, &expanded);
    if (status == CLMG_SUCCESS)
      status = get(&d, "agg_expand", &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, rows);
      clmg_arg_ulong(&args, block);
      clmg_arg_buffer(&args, aggregate->buffer);
      clmg_arg_buffer(&args, expanded->buffer);
      status = clmg_launch_args(&args, rows);
    }
    result = expanded;
  }
  if (status == CLMG_SUCCESS && aggregate_host)
    status = clmg_vector_download(result, aggregate_host);
  /* every aggregated row stores its diagonal (the prolongator smoothing
   * divides by it) */
  uint32_t unstored = (uint32_t)rows;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(counter, (double)rows);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = get(&d, "agg_missing_diagonal", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, rows);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, result->buffer);
    clmg_arg_buffer(&args, counter->buffer);
    status = clmg_launch_args(&args, rows);
  }
  if (status == CLMG_SUCCESS)
    status = read_flags(&d, counter, 1, &unstored);
  if (status == CLMG_SUCCESS && unstored < rows)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "AMG: row %u does not store its diagonal entry, which the prolongator "
                       "smoothing needs",
                       unstored + 1);
  if (status == CLMG_SUCCESS && aggregate_device) {
    /* handed over: the caller destroys it */
    *aggregate_device = (clmg_vector *)result;
    if (result == expanded)
      expanded = NULL;
    else
      aggregate = NULL;
  }
  clmg_vector_destroy(counter);
  clmg_vector_destroy(s);
  clmg_vector_destroy(strong);
  clmg_vector_destroy(tuple);
  clmg_vector_destroy(aggregate);
  clmg_vector_destroy(expanded);
  clmg_csr_device_free(&nodes);
  return status;
}

clmg_status clmg_amg_device_fit(clmg_context *context, const clmg_vector *aggregate, size_t count,
                                const clmg_vector *b, size_t k, clmg_csr_device *tentative,
                                clmg_vector **coarse_b) {
  size_t n = clmg_vector_length(aggregate), nc = count * k;
  clmg_dtype precision = clmg_vector_type(b);
  memset(tentative, 0, sizeof *tentative);
  *coarse_b = NULL;
  if (k < 1 || clmg_vector_length(b) != n * k || count == 0 || n > (size_t)INT32_MAX - 1 ||
      nc > (size_t)INT32_MAX)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "AMG fit on the device: %zu candidate entries for %zu rows and %zu "
                     "candidates, %zu aggregates (one entry per row and candidate, at least one "
                     "aggregate, at most 2^31 - 1 coarse rows)",
                     clmg_vector_length(b), n, k, count);
  device_level d = {context, NULL, clmg_real_options(context, precision), precision, 0};
  clmg_vector *size = NULL, *member_row = NULL, *start = NULL, *members = NULL, *q = NULL;
  size_t aggregated = 0, total = 0;
  cl_long entries = 0;
  clmg_kernel_args args;
  *tentative = (clmg_csr_device){n, nc, NULL, NULL, NULL};
  clmg_status status = count_members(&d, aggregate, n, count, &size, &member_row);
  /* P~'s rows: k entries for each aggregated row (the total read with the
   * blocking read of the sizes' sum next) */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT64, n + 1, &tentative->row_ptr);
  if (status == CLMG_SUCCESS)
    status = clmg_scan_counts_into(context, member_row->buffer, 0, n, k, tentative->row_ptr->buffer,
                                   &entries, 0);
  if (status == CLMG_SUCCESS)
    status = scatter_members(&d, aggregate, n, count, size, &start, &members, &total);
  aggregated = total;
  size_t p_entries = aggregated * k;
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_unset(context, CLMG_INT32, p_entries ? p_entries : 1, &tentative->col);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_unset(context, precision, p_entries ? p_entries : 1, &tentative->val);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, p_entries ? p_entries : 1, &q);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, nc * k, coarse_b);
  if (status == CLMG_SUCCESS)
    status = get(&d, "agg_fit_block", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, count);
    clmg_arg_ulong(&args, k);
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, start->buffer);
    clmg_arg_buffer(&args, members->buffer);
    clmg_arg_buffer(&args, b->buffer);
    clmg_arg_buffer(&args, tentative->row_ptr->buffer);
    clmg_arg_buffer(&args, tentative->col->buffer);
    clmg_arg_buffer(&args, tentative->val->buffer);
    clmg_arg_buffer(&args, q->buffer);
    clmg_arg_buffer(&args, (*coarse_b)->buffer);
    status = clmg_launch_args(&args, count);
  }
  clmg_vector_destroy(size);
  clmg_vector_destroy(member_row);
  clmg_vector_destroy(start);
  clmg_vector_destroy(members);
  clmg_vector_destroy(q);
  if (status != CLMG_SUCCESS) {
    clFinish(context->queue); /* the read into entries (clmg_finish would clear the message) */
    clmg_csr_device_free(tentative);
    clmg_vector_destroy(*coarse_b);
    *coarse_b = NULL;
  }
  return status;
}
