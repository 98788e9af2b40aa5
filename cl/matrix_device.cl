/* Device matrices built from, and updated by, CSR arrays that live on the
 * device (lib/la/matrix.c: clmg_matrix_create_from_device). The layout of
 * every format depends only on the row lengths: the host lays it out from
 * them (O(rows)), and the *_map kernels write the map once: map[p] = k + 1
 * when stored entry p holds CSR entry k, 0 for padding. Columns and values
 * then move on the device only, through the map. */

/* CSR stores the entries in their own order. */
kernel void csr_map(uint rows, global const long *row_ptr, global long *map) {
  GRID_LOOP(i, rows) {
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      map[k] = k + 1;
  }
}

/* ELLPACK-R(-T): entry j of row r at ((j / lanes) * stride + r) * lanes +
 * j % lanes (lib/la/matrix.c: build_ellr). */
kernel void ellr_map(uint rows, global const long *row_ptr, ulong stride, uint lanes,
                     global long *map) {
  GRID_LOOP(r, rows) {
    const long begin = row_ptr[r], length = row_ptr[r + 1] - begin;
    for (long j = 0; j < length; ++j)
      map[(((ulong)j / lanes) * stride + r) * lanes + (ulong)j % lanes] = begin + j + 1;
  }
}

/* SELL-C-sigma: the row at sorted place i (row order[i]) has its entry j at
 * slice_ptr[i / height] + j * height + i % height (build_sell). */
kernel void sell_map(uint rows, global const long *row_ptr, uint height,
                     global const long *slice_ptr, global const uint *order, global long *map) {
  GRID_LOOP(i, rows) {
    const uint row = order[i];
    const long begin = row_ptr[row], length = row_ptr[row + 1] - begin;
    const long base = slice_ptr[i / height] + (long)(i % height);
    for (long j = 0; j < length; ++j)
      map[base + j * (long)height] = begin + j + 1;
  }
}

/* Stored entries from CSR entries; columns only when write_columns. */
kernel void csr_gather_stored(ulong stored, global const long *map, global const int *csr_col,
                              ulong csr_col_offset, global const real *csr_val,
                              ulong csr_val_offset, global int *columns, global real *values,
                              uint write_columns) {
  csr_col += csr_col_offset;
  csr_val += csr_val_offset;
  GRID_LOOP(p, stored) {
    const long m = map[p];
    if (m > 0) {
      const ulong k = (ulong)(m - 1);
      if (write_columns)
        columns[p] = csr_col[k];
      values[p] = csr_val[k];
    }
  }
}

/* Per row: the diagonal entry (summed if repeated, 0 if absent) and the sum
 * of squares of the row. */
kernel void csr_diagonal_and_row_squares(ulong rows, global const long *row_ptr,
                                         ulong row_ptr_offset, global const int *csr_col,
                                         ulong csr_col_offset, global const real *csr_val,
                                         ulong csr_val_offset, global real *diagonal,
                                         ulong diagonal_offset, global real *row_squares,
                                         ulong row_squares_offset) {
  diagonal += diagonal_offset;
  row_squares += row_squares_offset;
  row_ptr += row_ptr_offset;
  csr_col += csr_col_offset;
  csr_val += csr_val_offset;
  GRID_LOOP(i, rows) {
    real d = 0, s = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const real v = csr_val[k];
      if (csr_col[k] == (int)i)
        d += v;
      s += v * v;
    }
    diagonal[i] = d;
    row_squares[i] = s;
  }
}

/* bad[0] = 1 if some column lies outside [0, cols). */
kernel void csr_check_columns(ulong nnz, global const int *csr_col, ulong csr_col_offset, int cols,
                              global int *bad) {
  csr_col += csr_col_offset;
  GRID_LOOP(k, nnz) {
    if (csr_col[k] < 0 || csr_col[k] >= cols)
      bad[0] = 1;
  }
}
