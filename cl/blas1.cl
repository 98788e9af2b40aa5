/* BLAS-1 and the fused vector updates of the Krylov solvers.
 * Every kernel walks its vectors with GRID_LOOP (cl/prelude.cl), so the host
 * picks the number of work-groups (lib/core/context.c: clmg_launch_1d). Vectors are
 * (buffer, element offset) pairs so that views need no sub-buffers.
 * Reductions write one partial sum per work-group (per result) into
 * `partials`; the host adds them, which costs one launch and one small read
 * instead of a second reduction kernel.
 * No vector pointer is `restrict`: the API lets outputs alias inputs
 * (waxpby with w = x, axpy with x = y). */

kernel void copy_vector(ulong n, global const real *x, ulong x_offset,
                        global real *y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = x[i]; }
}

kernel void scale_vector(ulong n, real alpha, global real *x, ulong x_offset) {
  x += x_offset;
  GRID_LOOP(i, n) { x[i] *= alpha; }
}

/* y = alpha x + beta y */
kernel void axpby(ulong n, real alpha, global const real *x, ulong x_offset, real beta,
                  global real *y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = alpha * x[i] + beta * y[i]; }
}

/* y = alpha x + y: its own kernel so that y is not scaled by 1 (same traffic,
 * one multiply less, and bit-identical to the reference axpy). */
kernel void axpy(ulong n, real alpha, global const real *x, ulong x_offset,
                 global real *y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] += alpha * x[i]; }
}

/* w = alpha x + beta y */
kernel void waxpby(ulong n, real alpha, global const real *x, ulong x_offset, real beta,
                   global const real *y, ulong y_offset, global real *w,
                   ulong w_offset) {
  x += x_offset;
  y += y_offset;
  w += w_offset;
  GRID_LOOP(i, n) { w[i] = alpha * x[i] + beta * y[i]; }
}

/* z = a .* b (elementwise; z may be a or b) */
kernel void pointwise_multiply(ulong n, global const real *a, ulong a_offset,
                               global const real *b, ulong b_offset, global real *z,
                               ulong z_offset) {
  a += a_offset;
  b += b_offset;
  z += z_offset;
  GRID_LOOP(i, n) { z[i] = a[i] * b[i]; }
}

kernel void dot_partials(ulong n, global const real *x, ulong x_offset,
                         global const real *y, ulong y_offset,
                         global real *restrict partials, local real *scratch) {
  x += x_offset;
  y += y_offset;
  real sum[ACCUMULATORS] = {0};
  GRID_LOOP_LANES(i, lane, n, sum[lane] += x[i] * y[i];)
  const real total = group_sum(scratch, SUM_LANES(sum));
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = total;
}

kernel void sumsq_partials(ulong n, global const real *x, ulong x_offset,
                           global real *restrict partials, local real *scratch) {
  x += x_offset;
  real sum[ACCUMULATORS] = {0};
  GRID_LOOP_LANES(i, lane, n, sum[lane] += x[i] * x[i];)
  const real total = group_sum(scratch, SUM_LANES(sum));
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = total;
}

/* partials[g] = sum x.y and partials[groups + g] = sum x.x */
kernel void dot2_partials(ulong n, global const real *x, ulong x_offset,
                          global const real *y, ulong y_offset,
                          global real *restrict partials, local real *scratch) {
  x += x_offset;
  y += y_offset;
  real xy[ACCUMULATORS] = {0}, xx[ACCUMULATORS] = {0};
  GRID_LOOP_LANES(i, lane, n, const real xi = x[i]; xy[lane] += xi * y[i]; xx[lane] += xi * xi;)
  const real total_xy = group_sum(scratch, SUM_LANES(xy));
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = total_xy;
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused */
  const real total_xx = group_sum(scratch, SUM_LANES(xx));
  if (get_local_id(0) == 0)
    partials[get_num_groups(0) + get_group_id(0)] = total_xx;
}

/* y = alpha x + y and the partial sums of y.y */
kernel void axpy_sumsq_partials(ulong n, real alpha, global const real *x,
                                ulong x_offset, global real *y, ulong y_offset,
                                global real *restrict partials, local real *scratch) {
  x += x_offset;
  y += y_offset;
  real sum[ACCUMULATORS] = {0};
  GRID_LOOP_LANES(i, lane, n, const real yi = y[i] + alpha * x[i]; y[i] = yi;
                  sum[lane] += yi * yi;)
  const real total = group_sum(scratch, SUM_LANES(sum));
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = total;
}

/* x = x + alpha p; r = r - alpha q; partial sums of r.r */
kernel void cg_update_partials(ulong n, real alpha, global const real *p,
                               ulong p_offset, global const real *q, ulong q_offset,
                               global real *x, ulong x_offset, global real *r,
                               ulong r_offset, global real *restrict partials,
                               local real *scratch) {
  p += p_offset;
  q += q_offset;
  x += x_offset;
  r += r_offset;
  real sum[ACCUMULATORS] = {0};
  GRID_LOOP_LANES(i, lane, n, x[i] += alpha * p[i]; const real ri = r[i] - alpha * q[i];
                  r[i] = ri; sum[lane] += ri * ri;)
  const real total = group_sum(scratch, SUM_LANES(sum));
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = total;
}
