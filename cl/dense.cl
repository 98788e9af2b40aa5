/* Dense kernels: y = A x for the row-major n x n inverse of the direct
 * coarse solve (lib/solve/coarse/direct.c). Every element of A is read once,
 * so the floor is n^2 elements over the copy bandwidth. CLBlast's GEMV took
 * ten times that for n = 2048 on an H100.
 * GPUs: one work-group per row, its work-items reading consecutive columns
 * (coalesced), then a tree sum in local memory.
 * CPUs (-DCLMG_CPU): each work-item takes whole rows, with independent
 * partial sums against the add latency. */
#ifdef CLMG_CPU
kernel void dense_gemv(ulong n, global const real *a, global const real *x, ulong x_offset,
                       global real *y, ulong y_offset, local real *scratch) {
  (void)scratch;
  x += x_offset;
  y += y_offset;
  GRID_LOOP(row, n) {
    global const real *a_row = a + row * n;
    real sum[4] = {0, 0, 0, 0};
    ulong k = 0;
    for (; k + 4 <= n; k += 4) {
      sum[0] += a_row[k] * x[k];
      sum[1] += a_row[k + 1] * x[k + 1];
      sum[2] += a_row[k + 2] * x[k + 2];
      sum[3] += a_row[k + 3] * x[k + 3];
    }
    for (; k < n; ++k)
      sum[0] += a_row[k] * x[k];
    y[row] = (sum[0] + sum[1]) + (sum[2] + sum[3]);
  }
}
#else
kernel void dense_gemv(ulong n, global const real *a, global const real *x, ulong x_offset,
                       global real *y, ulong y_offset, local real *scratch) {
  x += x_offset;
  y += y_offset;
  const ulong row = get_group_id(0);
  global const real *a_row = a + row * n;
  real sum = 0;
  for (ulong k = get_local_id(0); k < n; k += get_local_size(0))
    sum += a_row[k] * x[k];
  const real total = group_sum(scratch, sum);
  if (get_local_id(0) == 0)
    y[row] = total;
}
#endif
