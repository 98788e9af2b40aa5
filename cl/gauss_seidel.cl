/* Multicolour Gauss-Seidel (lib/solve/smoothers/gauss_seidel.c; Adams, "A
 * distributed memory unstructured Gauss-Seidel algorithm for multigrid
 * smoothers", 2001): one launch sweeps the rows of one colour, which do
 * not couple, so every work-item updates its rows from the current x and
 * the launch is a true Gauss-Seidel sweep of them.
 *
 * The rows are laid out in colour order: position p (first .. first +
 * count) holds row rows[p], whose off-diagonal entries col/val[ptr[p] ..
 * ptr[p + 1]) list the columns of lower colours first (lower[p] of them),
 * and whose diagonal is diagonal[p]. A sweep sets
 *   x_i += omega (b_i - a_ii x_i - sum_j a_ij x_j) / a_ii.
 * With from_zero (the first forward sweep from a zero guess) the columns of
 * this and higher colours still hold zeros that x does not: only the lower
 * entries are read, x_i is taken as 0 and written without being read. */

kernel void gauss_seidel_sweep(ulong first, ulong count, global const uint *rows,
                               global const uint *lower, global const long *ptr,
                               global const int *col, global const real *val,
                               global const real *diagonal, global const real *b, ulong b_offset,
                               global real *x, ulong x_offset, real omega, uint from_zero) {
  b += b_offset;
  x += x_offset;
  GRID_LOOP(k, count) {
    const ulong p = first + k;
    const uint i = rows[p];
    const long begin = ptr[p];
    const long end = from_zero ? begin + (long)lower[p] : ptr[p + 1];
    real r = b[i];
    for (long e = begin; e < end; ++e)
      r -= val[e] * x[col[e]];
    const real d = diagonal[p];
    if (from_zero) {
      x[i] = omega * r / d;
    } else {
      const real old = x[i];
      x[i] = old + omega * (r - d * old) / d;
    }
  }
}
