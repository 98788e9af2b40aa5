/* Smoothed-aggregation AMG setup on the device (lib/amg): the smoothed
 * prolongator P = (I - omega D^-1 A) P~ from the product A P~, in place:
 * P_ij = P~_ij - scale_i (A P~)_ij with scale_i = omega / a_ii. P~ is the
 * tentative prolongator fitted to the near-nullspace (CSR, sorted rows);
 * its entries lie in the pattern of A P~ (the host checks that every
 * aggregated row stores its diagonal), and both rows are sorted, so one
 * merge walk adds them. */
kernel void amg_smooth_prolongator(ulong rows, global const long *ap_ptr, global const int *ap_col,
                                   global real *ap_val, global const long *t_ptr,
                                   global const int *t_col, global const real *t_val,
                                   global const real *row_scale) {
  GRID_LOOP(i, rows) {
    const real scale = row_scale[i];
    long t = t_ptr[i];
    const long t_end = t_ptr[i + 1];
    for (long k = ap_ptr[i]; k < ap_ptr[i + 1]; ++k) {
      const int c = ap_col[k];
      while (t < t_end && t_col[t] < c)
        ++t;
      ap_val[k] = (t < t_end && t_col[t] == c ? t_val[t] : (real)0) - scale * ap_val[k];
    }
  }
}

/* The diagonal entry of row i (0 when it is not stored; CSR rows of
 * clmg_csr_device hold each column once). */
inline real amg_diagonal(ulong i, global const long *row_ptr, global const int *col,
                         global const real *val) {
  for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
    if (col[k] == (int)i)
      return val[k];
  return 0;
}

/* y = D^-1 A x, 0 in rows with a zero diagonal: the power steps that
 * estimate the largest eigenvalue of D^-1 A. ROW_LANES work-items a row, as
 * cl/spmv.cl's csr_spmv (one on CPUs: the row's sum in its order); the lane
 * that meets the diagonal holds it and lanes_sum adds it to the others'
 * zeros (the columns of a row are unique), so every lane count finds it
 * exactly. */
kernel void amg_jacobi_spmv(ulong rows, global const long *row_ptr, global const int *col,
                            global const real *val, global const real *x, global real *y,
                            local real *scratch) {
  const ulong row = get_global_id(0) / ROW_LANES;
  const uint lane = get_global_id(0) % ROW_LANES;
  real sum = 0, diagonal = 0;
  if (row < rows)
    for (long k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += ROW_LANES) {
      sum += val[k] * x[col[k]];
      if (col[k] == (int)row)
        diagonal = val[k];
    }
  sum = lanes_sum(scratch, sum);
  diagonal = lanes_sum(scratch, diagonal);
  if (row < rows && lane == 0)
    y[row] = diagonal != 0 ? sum / diagonal : 0;
}

/* scale_i = omega / a_ii, 0 where a_ii is 0: the row scales of the
 * prolongator smoothing. */
kernel void amg_row_scale(ulong rows, global const long *row_ptr, global const int *col,
                          global const real *val, real omega, global real *scale) {
  GRID_LOOP(i, rows) {
    const real diagonal = amg_diagonal(i, row_ptr, col, val);
    scale[i] = diagonal != 0 ? omega / diagonal : 0;
  }
}
