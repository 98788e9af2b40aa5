/* Prepended to every kernel family by the program manager (lib/core/program.c).
 * REAL selects the floating-point type: -DREAL=double (with REAL_IS_DOUBLE) or
 * -DREAL=float. */
#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef REAL
#define REAL float
#endif
typedef REAL real;

/* Sums `value` over the work-group; the result is valid in work-item 0.
 * scratch holds get_local_size(0) elements; any group size works. */
inline real group_sum(local real *scratch, real value) {
  const uint lid = get_local_id(0);
  uint active = get_local_size(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  while (active > 1) {
    const uint upper = (active + 1) / 2; /* first index of the upper part */
    if (lid + upper < active)
      scratch[lid] += scratch[lid + upper];
    barrier(CLK_LOCAL_MEM_FENCE);
    active = upper;
  }
  return scratch[0];
}
