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

/* y[i] = x[index[i]]: packs the entries a halo exchange sends (clmg_mpi). */
kernel void gather(ulong n, global const real *x, ulong x_offset, global const uint *index,
                   ulong index_offset, global real *y, ulong y_offset) {
  x += x_offset;
  index += index_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = x[index[i]]; }
}

/* y[index[i]] += alpha x[i] with distinct indices: adds the off-process
 * block's product into the rows that have one (clmg_mpi). */
kernel void scatter_add(ulong n, real alpha, global const real *x, ulong x_offset,
                        global const uint *index, ulong index_offset, global real *y,
                        ulong y_offset) {
  x += x_offset;
  index += index_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[index[i]] += alpha * x[i]; }
}

kernel void scale_vector(ulong n, real alpha, global real *x, ulong x_offset) {
  x += x_offset;
  GRID_LOOP(i, n) { x[i] *= alpha; }
}

/* Reductions that stay on the device (power steps of eigenvalue estimates,
 * which then wait for the host once at the end): sums[slot + k] = the sum
 * of result k's `groups` partials, by one work-group. */
kernel void partials_to_sums(ulong groups, ulong results, global const real *partials,
                             global real *sums, ulong slot, local real *scratch) {
  for (ulong k = 0; k < results; ++k) {
    real sum = 0;
    for (ulong g = get_local_id(0); g < groups; g += get_local_size(0))
      sum += partials[k * groups + g];
    const real total = group_sum(scratch, sum);
    if (get_local_id(0) == 0)
      sums[slot + k] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* sums[slot + k] = result k's partials added in order, group 0 first, one
 * work-item a result: the order of the host's reduction
 * (clmg_reduction_finish), so that in double the sums are the host's bit
 * for bit (GMRES's Gram-Schmidt coefficients, kept on the device). */
kernel void partials_in_order(ulong groups, ulong results, global const real *partials,
                              global real *sums, ulong slot) {
  GRID_LOOP(k, results) {
    real sum = 0;
    for (ulong g = 0; g < groups; ++g)
      sum += partials[k * groups + g];
    sums[slot + k] = sum;
  }
}

/* x *= 1 / sqrt(sums[slot]), or 0 where that sum is not positive: x
 * normalised by a norm that a reduction left in device memory. */
kernel void scale_inverse_sqrt(ulong n, global real *x, ulong x_offset, global const real *sums,
                               ulong slot) {
  x += x_offset;
  const real sum = sums[slot];
  const real scale = sum > 0 ? 1 / sqrt(sum) : (real)0;
  GRID_LOOP(i, n) { x[i] *= scale; }
}

#ifdef REAL_IS_DOUBLE
/* Precision conversions (mixed-precision preconditioners): built with the
 * double program only, since they need fp64. Rounding is the device's
 * round-to-nearest conversion, as (float)x on the host. */
kernel void double_to_float(ulong n, global const double *x, ulong x_offset, global float *y,
                            ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = (float)x[i]; }
}

kernel void float_to_double(ulong n, global const float *x, ulong x_offset, global double *y,
                            ulong y_offset) {
  x += x_offset;
  y += y_offset;
  GRID_LOOP(i, n) { y[i] = (double)x[i]; }
}
#endif

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

/* z = alpha .* a ./ d, or alpha ./ d without a (has_a 0; z may be a or d);
 * first_zero gets the least index of a zero d (it starts at UINT_MAX). The
 * products come first, as the host's alpha * a[i] / d[i]. */
kernel void quotient(ulong n, real alpha, global const real *a, ulong a_offset, uint has_a,
                     global const real *d, ulong d_offset, global real *z, ulong z_offset,
                     global uint *first_zero) {
  a += a_offset;
  d += d_offset;
  z += z_offset;
  GRID_LOOP(i, n) {
    const real divisor = d[i];
    if (divisor == 0)
      atomic_min(first_zero, (uint)i);
    z[i] = (has_a ? alpha * a[i] : alpha) / divisor;
  }
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

/* The fallback of nrm2 when the plain sum of squares underflows or
 * overflows: partials[g] = m_g = max |x_i| over the group's elements and
 * partials[groups + g] = sum (x_i / m_g)^2, so no square leaves the range.
 * The host combines the groups (lib/la/blas1.c: scaled_nrm2). Two passes
 * over the same elements; it only runs for extreme scalings. */
kernel void scaled_sumsq_partials(ulong n, global const real *x, ulong x_offset,
                                  global real *restrict partials, local real *scratch) {
  x += x_offset;
  real largest = 0;
  {
    GRID_LOOP(i, n) { largest = fmax(largest, fabs(x[i])); }
  }
  const uint lid = get_local_id(0);
  scratch[lid] = largest;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint active = get_local_size(0); active > 1;) {
    const uint upper = (active + 1) / 2;
    if (lid + upper < active)
      scratch[lid] = fmax(scratch[lid], scratch[lid + upper]);
    barrier(CLK_LOCAL_MEM_FENCE);
    active = upper;
  }
  const real group_largest = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused */
  real sum = 0;
  if (group_largest > 0) {
    GRID_LOOP(i, n) {
      const real scaled = x[i] / group_largest;
      sum += scaled * scaled;
    }
  }
  const real total = group_sum(scratch, sum);
  if (lid == 0) {
    partials[get_group_id(0)] = group_largest;
    partials[get_num_groups(0) + get_group_id(0)] = total;
  }
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

/* partials: [r.u | w.u | r.r], the three scalars of one Chronopoulos-Gear
 * CG iteration, in one pass over r, u and w (u may be r). */
kernel void dot3_partials(ulong n, global const real *r, ulong r_offset, global const real *u,
                          ulong u_offset, global const real *w, ulong w_offset,
                          global real *restrict partials, local real *scratch) {
  r += r_offset;
  u += u_offset;
  w += w_offset;
  real ru[ACCUMULATORS] = {0}, wu[ACCUMULATORS] = {0}, rr[ACCUMULATORS] = {0};
  GRID_LOOP_LANES(i, lane, n, const real ri = r[i]; const real ui = u[i]; ru[lane] += ri * ui;
                  wu[lane] += w[i] * ui; rr[lane] += ri * ri;)
  const size_t groups = get_num_groups(0), group = get_group_id(0);
  const real total_ru = group_sum(scratch, SUM_LANES(ru));
  if (get_local_id(0) == 0)
    partials[group] = total_ru;
  barrier(CLK_LOCAL_MEM_FENCE);
  const real total_wu = group_sum(scratch, SUM_LANES(wu));
  if (get_local_id(0) == 0)
    partials[groups + group] = total_wu;
  barrier(CLK_LOCAL_MEM_FENCE);
  const real total_rr = group_sum(scratch, SUM_LANES(rr));
  if (get_local_id(0) == 0)
    partials[2 * groups + group] = total_rr;
}

/* The vector part of one Chronopoulos-Gear CG iteration:
 * p = u + beta p; s = w + beta s; x += alpha p; r -= alpha s.
 * u may be r (plain CG): u[i] is read before r[i] is written. */
kernel void cg_step(ulong n, real alpha, real beta, global const real *u, ulong u_offset,
                    global const real *w, ulong w_offset, global real *p, ulong p_offset,
                    global real *s, ulong s_offset, global real *x, ulong x_offset,
                    global real *r, ulong r_offset) {
  u += u_offset;
  w += w_offset;
  p += p_offset;
  s += s_offset;
  x += x_offset;
  r += r_offset;
  GRID_LOOP(i, n) {
    const real pi = u[i] + beta * p[i];
    const real si = w[i] + beta * s[i];
    p[i] = pi;
    s[i] = si;
    x[i] += alpha * pi;
    r[i] -= alpha * si;
  }
}

/* The Gram-Schmidt step of GMRES: the k dot products v_j . w (v_j = basis +
 * j stride) and w . w in one launch, so each step reads back once. Each
 * work-item walks its share of rows once per j; its share of w stays in
 * cache between the passes. partials: (k + 1) x groups. */
kernel void multi_dot_partials(ulong n, uint k, global const real *basis, ulong basis_offset,
                               ulong stride, global const real *w, ulong w_offset,
                               global real *restrict partials, local real *scratch) {
  basis += basis_offset;
  w += w_offset;
  const size_t groups = get_num_groups(0), group = get_group_id(0);
  for (uint j = 0; j <= k; ++j) {
    global const real *v = j < k ? basis + j * stride : w;
    real acc[ACCUMULATORS] = {0};
    GRID_LOOP_LANES(i, lane, n, acc[lane] += v[i] * w[i];)
    const real total = group_sum(scratch, SUM_LANES(acc));
    if (get_local_id(0) == 0)
      partials[j * groups + group] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* w -= sum_j c_j v_j in one pass (the projection of Gram-Schmidt and the
 * update x += Z y of GMRES with c = -y). */
kernel void multi_axpy(ulong n, uint k, global const real *c, ulong c_offset,
                       global const real *basis, ulong basis_offset, ulong stride, global real *w,
                       ulong w_offset) {
  c += c_offset;
  basis += basis_offset;
  w += w_offset;
  GRID_LOOP(i, n) {
    real sum = 0;
    for (uint j = 0; j < k; ++j)
      sum += c[j] * basis[j * stride + i];
    w[i] -= sum;
  }
}

#ifdef REAL_IS_DOUBLE
/* x[i] = low + (high - low) u_i for i < n, u_i = (s >> 11) / 2^53 with s the
 * generator's state i + 1 steps after `start` (lib/core/memory.c's
 * clmg_fill_pseudo_random, whose `start` is its seed `first` steps on):
 * the host's values bit for bit (no contraction into a fused multiply-add).
 * Each work-item takes a contiguous chunk: one skip to its start (log2 of
 * it squarings of the affine map), then the plain recurrence. */
kernel void fill_pseudo_random(ulong n, ulong start, ulong mul, ulong add, double low,
                               double high, global double *x, ulong x_offset) {
#pragma OPENCL FP_CONTRACT OFF
  const ulong items = get_global_size(0);
  const ulong chunk = (n + items - 1) / items;
  const ulong begin = get_global_id(0) * chunk;
  const ulong end = min(n, begin + chunk);
  ulong step_mul = mul, step_add = add, total_mul = 1, total_add = 0;
  for (ulong steps = begin < n ? begin : 0; steps; steps >>= 1) {
    if (steps & 1) {
      total_mul *= step_mul;
      total_add = total_add * step_mul + step_add;
    }
    step_add = (step_mul + 1) * step_add;
    step_mul *= step_mul;
  }
  ulong state = total_mul * start + total_add;
  const double width = high - low;
  for (ulong i = begin; i < end; i++) {
    state = state * mul + add;
    const double u = (double)(state >> 11) / 9007199254740992.0;
    x[x_offset + i] = low + width * u;
  }
}
#endif
