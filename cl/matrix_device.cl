/* Device matrices built from, and updated by, CSR arrays that live on the
 * device (lib/la/matrix.c: clmg_matrix_create_from_device). The layout of
 * every format depends only on the row lengths, so the host lays out a map
 * once: map[p] = k + 1 when stored entry p holds CSR entry k, 0 for padding
 * (doubles: exact for k < 2^53). Columns and values then move on the device
 * only, through the map. */

/* Stored entries from CSR entries; columns only when write_columns. */
kernel void csr_gather_stored(ulong stored, global const double *map, global const int *csr_col,
                              ulong csr_col_offset, global const real *csr_val,
                              ulong csr_val_offset, global int *columns, global real *values,
                              uint write_columns) {
  csr_col += csr_col_offset;
  csr_val += csr_val_offset;
  GRID_LOOP(p, stored) {
    const double m = map[p];
    if (m > 0) {
      const ulong k = (ulong)m - 1;
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
