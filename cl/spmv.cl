/* Sparse matrix-vector products (CSR, CSR-Adaptive, ELLPACK-R, SELL-C-sigma, and the hybrid
 * of ELLPACK-R or SELL with CSR segments for its long rows), each fused
 * with what the solvers do next (Geveler et al. 2011, section 2.1: "we fuse the SpMV and
 * vector-vector operations into a single kernel"). Build options:
 *   -DOP_JACOBI      out = x + alpha * dinv .* (in - A x)   (damped Jacobi, alpha = omega)
 *   -DOP_JACOBI_FROM_ZERO  the same with x = alpha * dinv .* in, formed where it is read:
 *                    the first two Jacobi sweeps from a zero guess in one pass (x unused)
 *   -DOP_SCALED_DEFECT  out = beta * out + alpha * dinv .* (in - A x)
 *                    (polynomial smoothers; out is not read when beta == 0)
 *   otherwise        out = alpha * A x + beta * in          (in is not read when beta == 0;
 *                                                            the defect is alpha=-1, beta=1)
 *   -DROW_LANES=V    work-items that share one row (CSR vector kernel, ELLR-T); a power of 2
 *                    (cl/prelude.cl: its default 1 and lanes_sum)
 * One work-item (or V) per row and no grid-stride loop: on GPUs that keeps
 * accesses coalesced, and on CPUs pocl runs a work-group's items in order,
 * so every core walks a contiguous block of rows.
 * `in` and `out` may be the same vector (y = alpha A x + beta y); x may not
 * overlap out (the host checks). */

#define OUTPUT_PARAMS                                                                              \
  global const real *x, ulong x_offset, global const real *in, ulong in_offset, global real *out,  \
      ulong out_offset, global const real *dinv, ulong dinv_offset, real alpha, real beta

#define APPLY_OUTPUT_OFFSETS                                                                       \
  x += x_offset;                                                                                   \
  in += in_offset;                                                                                 \
  out += out_offset;                                                                               \
  dinv += dinv_offset

/* The input vector at column c: x, or for OP_JACOBI_FROM_ZERO the first
 * sweep's result, which is never stored. */
#if defined(OP_JACOBI_FROM_ZERO)
#define X_AT(c) (alpha * dinv[c] * in[c])
#else
#define X_AT(c) x[c]
#endif

#if defined(OP_JACOBI) || defined(OP_JACOBI_FROM_ZERO)
#define STORE_ROW(row, ax) out[row] = X_AT(row) + alpha * dinv[row] * (in[row] - (ax))
#elif defined(OP_SCALED_DEFECT)
#define STORE_ROW(row, ax)                                                                         \
  out[row] = beta == 0 ? alpha * dinv[row] * (in[row] - (ax))                                      \
                       : beta * out[row] + alpha * dinv[row] * (in[row] - (ax))
#else
#define STORE_ROW(row, ax) out[row] = beta == 0 ? alpha * (ax) : alpha * (ax) + beta * in[row]
#endif

/* CSR: ROW_LANES work-items per row. Rows longer than long_row_threshold are
 * left to csr_long_segments and csr_long_finish. */
kernel void csr_spmv(uint rows, global const long *row_ptr, global const int *col,
                     global const real *val, ulong long_row_threshold, OUTPUT_PARAMS,
                     local real *scratch) {
  APPLY_OUTPUT_OFFSETS;
  const ulong row = get_global_id(0) / ROW_LANES;
  const uint lane = get_global_id(0) % ROW_LANES;
  real sum = 0;
  int active = 0;
  if (row < rows) {
    const long begin = row_ptr[row], end = row_ptr[row + 1];
    active = (ulong)(end - begin) <= long_row_threshold;
    if (active)
      for (long k = begin + lane; k < end; k += ROW_LANES)
        sum += val[k] * X_AT(col[k]);
  }
  sum = lanes_sum(scratch, sum);
  if (active && lane == 0)
    STORE_ROW(row, sum);
}

/* Very long CSR rows are cut into segments of a few thousand entries, one
 * work-group each, so that a handful of dense rows spread over the whole
 * device instead of running on a few work-groups after everything else.
 * segment_bounds holds [begin, end) of each segment. The hybrid format's
 * long rows take the same path: their entries follow the ELLR or SELL part
 * in the same col and val arrays. The output parameters are only read for
 * OP_JACOBI_FROM_ZERO's x (X_AT); nothing is stored here. */
kernel void csr_long_segments(global const long *segment_bounds, global const int *col,
                              global const real *val, OUTPUT_PARAMS, global real *segment_sums,
                              local real *scratch) {
  APPLY_OUTPUT_OFFSETS;
  const uint segment = get_group_id(0);
  const long begin = segment_bounds[2 * segment], end = segment_bounds[2 * segment + 1];
  real sum = 0;
  for (long k = begin + get_local_id(0); k < end; k += get_local_size(0))
    sum += val[k] * X_AT(col[k]);
  sum = group_sum(scratch, sum);
  if (get_local_id(0) == 0)
    segment_sums[segment] = sum;
}

/* Adds the segment sums of each long row (segments first_segment[i] to
 * first_segment[i + 1] - 1) and stores the row like the other kernels. */
kernel void csr_long_finish(uint count, global const uint *long_rows,
                            global const uint *first_segment, global const real *segment_sums,
                            OUTPUT_PARAMS) {
  APPLY_OUTPUT_OFFSETS;
  const uint i = get_global_id(0);
  if (i >= count)
    return;
  real sum = 0;
  for (uint s = first_segment[i]; s < first_segment[i + 1]; ++s)
    sum += segment_sums[s];
  const uint row = long_rows[i];
  STORE_ROW(row, sum);
}

/* CSR-Adaptive (Greathouse and Daga, SC14): one work-group per segment of
 * a very long row (as csr_long_segments; csr_long_finish adds the segments
 * up), first, since they take longest, then one per row block b, rows
 * row_blocks[b] to row_blocks[b + 1] - 1 (matrix.c's adaptive_block_starts
 * makes the blocks).
 *  - CSR-Stream, a block of several rows (at most the group's size, their
 *    entries at most the capacity of `products`): the group reads the
 *    block's products val * x into local memory in one coalesced sweep,
 *    then each row is summed there by a power of two of work-items, as
 *    many as the rows leave (a tree in `scratch` when more than one).
 *  - CSR-Vector, a block of one row: the whole group walks the row and
 *    reduces (group_sum); a row longer than long_row_threshold is left to
 *    its segments.
 * No subgroup functions and no atomics: OpenCL 1.2. Every branch below is
 * the same for the whole group, so the barriers are reached by all. */
kernel void csr_adaptive_spmv(uint segment_count, global const uint *row_blocks,
                              global const long *row_ptr, global const int *col,
                              global const real *val, ulong long_row_threshold,
                              global const long *segment_bounds, global real *segment_sums,
                              OUTPUT_PARAMS, local real *products, local real *scratch) {
  APPLY_OUTPUT_OFFSETS;
  const uint group = get_group_id(0);
  const uint lid = get_local_id(0), size = get_local_size(0);
  /* what the group does: SEGMENT, VECTOR, STREAM, or NOTHING (a one-row
   * block too long for CSR-Vector: its segments take it) */
  enum { SEGMENT, VECTOR, STREAM, NOTHING };
  int mode = SEGMENT;
  uint first = 0, last = 0;
  long begin, end;
  if (group < segment_count) {
    begin = segment_bounds[2 * group];
    end = segment_bounds[2 * group + 1];
  } else {
    const uint block = group - segment_count;
    first = row_blocks[block];
    last = row_blocks[block + 1];
    begin = row_ptr[first];
    end = row_ptr[last];
    mode = last - first > 1 ? STREAM : (ulong)(end - begin) > long_row_threshold ? NOTHING : VECTOR;
  }
  /* Every barrier below is reached by the whole group, outside any branch
   * and early exit (Intel's CPU compiler crashed on a kernel that returned
   * before some of them). The first pass: a share of the entries' products,
   * summed (SEGMENT, VECTOR) or kept in local memory (STREAM). */
  real sum = 0;
  if (mode == STREAM)
    for (long k = begin + lid; k < end; k += size)
      products[k - begin] = val[k] * X_AT(col[k]);
  else if (mode != NOTHING)
    for (long k = begin + lid; k < end; k += size)
      sum += val[k] * X_AT(col[k]);
  barrier(CLK_LOCAL_MEM_FENCE);
  /* STREAM: `lanes` work-items a row (a power of two, as many as the rows
   * leave) add its products; the others reduce over the whole group */
  uint lanes = size, lane = lid, row = first;
  if (mode == STREAM) {
    lanes = 1;
    while (2 * lanes * (last - first) <= size)
      lanes *= 2;
    lane = lid % lanes;
    row = first + lid / lanes;
    if (row < last) {
      const long row_end = row_ptr[row + 1] - begin;
      for (long k = row_ptr[row] - begin + lane; k < row_end; k += lanes)
        sum += products[k];
    }
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint span = 1; /* the tree over `lanes` (any width): strides from the power of two below */
  while (2 * span < lanes)
    span *= 2;
  for (uint stride = span; stride > 0; stride /= 2) {
    if (lane < stride && lane + stride < lanes)
      scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0) {
    if (mode == SEGMENT)
      segment_sums[group] = scratch[lid];
    else if (mode == VECTOR)
      STORE_ROW(first, scratch[lid]);
    else if (mode == STREAM && row < last)
      STORE_ROW(row, scratch[lid]);
  }
}

/* ELLPACK-R with ROW_LANES threads per row (ELLR-T). A row length of -1
 * marks a hybrid matrix's long row: no slots, and the row is not stored. Entry k = j * ROW_LANES +
 * t of row r is stored at (j * stride + r) * ROW_LANES + t, so consecutive work-items read
 * consecutive addresses; row_len lets each row stop at its own end. */
kernel void ellr_spmv(uint rows, ulong stride, global const int *row_len, global const int *col,
                      global const real *val, OUTPUT_PARAMS, local real *scratch) {
  APPLY_OUTPUT_OFFSETS;
  const ulong row = get_global_id(0) / ROW_LANES;
  const uint lane = get_global_id(0) % ROW_LANES;
  real sum = 0;
  int length = -1;
  if (row < rows) {
    length = row_len[row];
    ulong index = row * ROW_LANES + lane;
    for (int k = lane; k < length; k += ROW_LANES, index += stride * ROW_LANES)
      sum += val[index] * X_AT(col[index]);
  }
  sum = lanes_sum(scratch, sum);
  if (length >= 0 && lane == 0) /* -1: a hybrid matrix's long row, stored by csr_long_finish */
    STORE_ROW(row, sum);
}

/* SELL-C-sigma (a row length of -1 as in ellr_spmv): slice s holds rows [s*C, s*C + C) of the
 * sorted order, column-major from slice_ptr[s]; permutation[i] is the original row of sorted row i,
 * read only with -DSELL_PERMUTED (sigma > 1). */
kernel void sell_spmv(uint rows, uint slice_height, global const long *slice_ptr,
                      global const int *row_len, global const uint *permutation,
                      global const int *col, global const real *val, OUTPUT_PARAMS) {
  APPLY_OUTPUT_OFFSETS;
  const uint sorted_row = get_global_id(0);
  if (sorted_row >= rows)
    return;
  const uint slice = sorted_row / slice_height;
  const uint lane = sorted_row % slice_height;
  const int length = row_len[sorted_row];
  if (length < 0) /* a hybrid matrix's long row, stored by csr_long_finish */
    return;
  ulong index = slice_ptr[slice] + lane;
  real sum = 0;
  for (int k = 0; k < length; ++k, index += slice_height)
    sum += val[index] * X_AT(col[index]);
#ifdef SELL_PERMUTED
  const uint row = permutation[sorted_row];
#else
  const uint row = sorted_row;
#endif
  STORE_ROW(row, sum);
}
