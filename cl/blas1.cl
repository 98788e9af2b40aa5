/* BLAS-1 and the fused vector updates of the Krylov solvers.
 * Every kernel walks its vectors with a grid-stride loop, so the host picks
 * the number of work-groups (lib/core/context.c: clmg_launch_1d). Vectors are
 * (buffer, element offset) pairs so that views need no sub-buffers.
 * Reductions write one partial sum per work-group (per result) into
 * `partials`; the host adds them, which costs one launch and one small read
 * instead of a second reduction kernel. */

#define GRID_LOOP(i, n) for (ulong i = get_global_id(0); i < (n); i += get_global_size(0))

kernel void copy_vector(ulong n, global const real *restrict x, ulong x_offset,
                        global real *restrict y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = x[i]; }
}

kernel void scale_vector(ulong n, real alpha, global real *restrict x, ulong x_offset) {
  x += x_offset;
  GRID_LOOP(i, n) { x[i] *= alpha; }
}

/* y = alpha x + beta y */
kernel void axpby(ulong n, real alpha, global const real *restrict x, ulong x_offset, real beta,
                  global real *restrict y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = alpha * x[i] + beta * y[i]; }
}

/* y = alpha x + y: its own kernel so that y is not scaled by 1 (same traffic,
 * one multiply less, and bit-identical to the reference axpy). */
kernel void axpy(ulong n, real alpha, global const real *restrict x, ulong x_offset,
                 global real *restrict y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] += alpha * x[i]; }
}

/* w = alpha x + beta y */
kernel void waxpby(ulong n, real alpha, global const real *restrict x, ulong x_offset, real beta,
                   global const real *restrict y, ulong y_offset, global real *restrict w,
                   ulong w_offset) {
  x += x_offset;
  y += y_offset;
  w += w_offset;
  GRID_LOOP(i, n) { w[i] = alpha * x[i] + beta * y[i]; }
}

kernel void dot_partials(ulong n, global const real *restrict x, ulong x_offset,
                         global const real *restrict y, ulong y_offset,
                         global real *restrict partials, local real *scratch) {
  x += x_offset;
  y += y_offset;
  real sum = 0;
  GRID_LOOP(i, n) { sum += x[i] * y[i]; }
  sum = group_sum(scratch, sum);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = sum;
}

kernel void sumsq_partials(ulong n, global const real *restrict x, ulong x_offset,
                           global real *restrict partials, local real *scratch) {
  x += x_offset;
  real sum = 0;
  GRID_LOOP(i, n) { sum += x[i] * x[i]; }
  sum = group_sum(scratch, sum);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = sum;
}

/* partials[g] = sum x.y and partials[groups + g] = sum x.x */
kernel void dot2_partials(ulong n, global const real *restrict x, ulong x_offset,
                          global const real *restrict y, ulong y_offset,
                          global real *restrict partials, local real *scratch) {
  x += x_offset;
  y += y_offset;
  real xy = 0, xx = 0;
  GRID_LOOP(i, n) {
    const real xi = x[i];
    xy += xi * y[i];
    xx += xi * xi;
  }
  xy = group_sum(scratch, xy);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = xy;
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused */
  xx = group_sum(scratch, xx);
  if (get_local_id(0) == 0)
    partials[get_num_groups(0) + get_group_id(0)] = xx;
}

/* y = alpha x + y and the partial sums of y.y */
kernel void axpy_sumsq_partials(ulong n, real alpha, global const real *restrict x,
                                ulong x_offset, global real *restrict y, ulong y_offset,
                                global real *restrict partials, local real *scratch) {
  x += x_offset;
  y += y_offset;
  real sum = 0;
  GRID_LOOP(i, n) {
    const real yi = y[i] + alpha * x[i];
    y[i] = yi;
    sum += yi * yi;
  }
  sum = group_sum(scratch, sum);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = sum;
}

/* x = x + alpha p; r = r - alpha q; partial sums of r.r */
kernel void cg_update_partials(ulong n, real alpha, global const real *restrict p,
                               ulong p_offset, global const real *restrict q, ulong q_offset,
                               global real *restrict x, ulong x_offset, global real *restrict r,
                               ulong r_offset, global real *restrict partials,
                               local real *scratch) {
  p += p_offset;
  q += q_offset;
  x += x_offset;
  r += r_offset;
  real sum = 0;
  GRID_LOOP(i, n) {
    x[i] += alpha * p[i];
    const real ri = r[i] - alpha * q[i];
    r[i] = ri;
    sum += ri * ri;
  }
  sum = group_sum(scratch, sum);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = sum;
}
