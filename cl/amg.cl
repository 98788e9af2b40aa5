/* Smoothed-aggregation AMG setup on the device (lib/amg): the smoothed
 * prolongator P = (I - omega D^-1 A) P~ from the product A P~, in place,
 * where P~ is piecewise constant (P~_ij = 1 when node i is in aggregate j):
 * P_ij = P~_ij - scale_i (A P~)_ij with scale_i = omega / a_ii from the
 * host. A node without an aggregate (-1) has no entry of P~. */
kernel void amg_smooth_prolongator(ulong rows, global const long *ap_ptr, global const int *ap_col,
                                   global real *ap_val, global const int *aggregate,
                                   global const real *row_scale) {
  GRID_LOOP(i, rows) {
    const real scale = row_scale[i];
    for (long k = ap_ptr[i]; k < ap_ptr[i + 1]; ++k)
      ap_val[k] = (ap_col[k] == aggregate[i] ? (real)1 : (real)0) - scale * ap_val[k];
  }
}
