/* The inexact patch block-Jacobi step of Fu et al. 2014 (section 5.1.2,
 * eq. 8): x += omega M^-1 r with r = b - A x and M^-1 approximated, patch by
 * patch, by `inner` weighted-Jacobi iterations on A_kk g = r_k from g = 0.
 * One work-group per patch; the patch's iterate lives in local memory, its
 * block A_kk (rows in patch order, columns local to the patch) is read from
 * global memory, where it stays in cache across the inner iterations.
 *
 * PATCH_MAX bounds the rows of a patch (the host splits larger ones). The
 * patches cover every row, so with x_is_zero the pass writes all of x. */

#ifndef PATCH_MAX
#define PATCH_MAX 512
#endif

kernel void patch_jacobi(global const uint *patch_start, global const uint *patch_rows,
                         global const long *block_ptr, global const uint *block_col,
                         global const real *block_val, global const real *inverse_diagonal,
                         global const real *r, ulong r_offset, global real *x, ulong x_offset,
                         real omega, real inner_omega, uint inner, uint x_is_zero) {
  /* the patch's defect and iterate stay in local memory for all inner
   * iterations; the block is read from global memory (cached) */
  local real g[PATCH_MAX], g_next[PATCH_MAX], r_patch[PATCH_MAX], weight[PATCH_MAX];
  r += r_offset;
  x += x_offset;
  const uint patch = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  const uint first = patch_start[patch], rows = patch_start[patch + 1] - first;
  for (uint i = lid; i < rows; i += size) {
    r_patch[i] = r[patch_rows[first + i]];
    weight[i] = inner_omega * inverse_diagonal[first + i];
    g[i] = weight[i] * r_patch[i];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = 1; step < inner; ++step) {
    for (uint i = lid; i < rows; i += size) {
      real ag = 0;
      for (long k = block_ptr[first + i]; k < block_ptr[first + i + 1]; ++k)
        ag += block_val[k] * g[block_col[k]];
      g_next[i] = g[i] + weight[i] * (r_patch[i] - ag);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < rows; i += size)
      g[i] = g_next[i];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  /* from a zero guess, r is b and x is written without being read */
  for (uint i = lid; i < rows; i += size) {
    const uint row = patch_rows[first + i];
    x[row] = x_is_zero ? omega * g[i] : x[row] + omega * g[i];
  }
}
