/* CSR arrays on the device (lib/la/csr_device.c): the transpose by column
 * counts, a scatter and a per-row sort. Rows of finite-element transfers and
 * assembled matrices are short (at most a few hundred entries), so an
 * insertion sort per row is cheap, and it makes the scatter's order (which
 * depends on the order the atomics were served in) invisible: the result is
 * the same on every run and every device. */

/* count[c] += 1 for every entry of column c. */
kernel void csr_count_columns(ulong nnz, global const int *col, global uint *count) {
  GRID_LOOP(k, nnz) { atomic_inc(&count[col[k]]); }
}

/* Entry (i, c) of a goes to row c of the transpose, at a free place of it. */
kernel void csr_transpose_scatter(ulong rows, global const long *row_ptr, global const int *col,
                                  global const real *val, global const long *out_ptr,
                                  global uint *cursor, global int *out_col, global real *out_val) {
  GRID_LOOP(i, rows) {
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int c = col[k];
      const long place = out_ptr[c] + (long)atomic_inc(&cursor[c]);
      out_col[place] = (int)i;
      out_val[place] = val[k];
    }
  }
}

/* Sorts each row by column (insertion sort; the columns are unique). */
kernel void csr_sort_rows(ulong rows, global const long *row_ptr, global int *col,
                          global real *val) {
  GRID_LOOP(i, rows) {
    const long begin = row_ptr[i], end = row_ptr[i + 1];
    for (long k = begin + 1; k < end; ++k) {
      const int c = col[k];
      const real v = val[k];
      long p = k;
      while (p > begin && col[p - 1] > c) {
        col[p] = col[p - 1];
        val[p] = val[p - 1];
        --p;
      }
      col[p] = c;
      val[p] = v;
    }
  }
}
