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

/* -DROW_LANES=V: the work-items that share one CSR row (a power of two, at
 * most the work-group: a row's lanes lie in one group), as lib/la/matrix.c
 * picks them (clmg_csr_row_lanes); 1 where the build does not say. */
#ifndef ROW_LANES
#define ROW_LANES 1
#endif

/* Adds the ROW_LANES partial sums of consecutive work-items; the total is valid
 * in the first work-item of each row. Every work-item must call it. */
inline real lanes_sum(local real *scratch, real value) {
#if ROW_LANES > 1
  const uint lid = get_local_id(0);
  const uint lane = lid % ROW_LANES;
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = ROW_LANES / 2; stride > 0; stride /= 2) {
    if (lane < stride)
      scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[lid];
#else
  return value;
#endif
}

/* Loops over this work-item's share of [0, n).
 * GPUs: consecutive work-items touch consecutive elements (coalescing).
 * CPUs (-DCLMG_CPU): each work-item walks one contiguous chunk, which suits
 * caches and prefetchers; pocl ran a strided walk 10-40x slower. */
#ifdef CLMG_CPU
#define WORK_ITEM_RANGE(n)                                                                         \
  const ulong chunk_ = ((n) + get_global_size(0) - 1) / get_global_size(0);                       \
  const ulong begin_ = min((ulong)(n), get_global_id(0) * chunk_);                                 \
  const ulong end_ = min((ulong)(n), begin_ + chunk_)
#define GRID_LOOP(i, n)                                                                            \
  WORK_ITEM_RANGE(n);                                                                              \
  for (ulong i = begin_; i < end_; ++i)
#else
#define GRID_LOOP(i, n) for (ulong i = get_global_id(0); i < (n); i += get_global_size(0))
#endif

/* Reduction loops: GRID_LOOP_LANES(i, lane, n, body) runs body for each i of
 * the work-item's share with `lane` in [0, ACCUMULATORS), so a kernel can keep ACCUMULATORS
 * independent partial sums (acc[lane] += ...). On CPUs one chain of dependent
 * adds is latency-bound (pocl: dot at half the copy bandwidth), so ACCUMULATORS = 4
 * there; on GPUs the many work-items hide that latency and ACCUMULATORS = 1. */
#ifdef CLMG_CPU
#define ACCUMULATORS 4
#define GRID_LOOP_LANES(i, lane, n, ...)                                                           \
  {                                                                                                \
    WORK_ITEM_RANGE(n);                                                                            \
    const ulong full_end_ = begin_ + (end_ - begin_) / ACCUMULATORS * ACCUMULATORS;                              \
    for (ulong base_ = begin_; base_ < full_end_; base_ += ACCUMULATORS) {                                \
      _Pragma("unroll") for (uint lane = 0; lane < ACCUMULATORS; ++lane) {                                \
        const ulong i = base_ + lane;                                                              \
        __VA_ARGS__                                                                                \
      }                                                                                            \
    }                                                                                              \
    for (ulong i = full_end_; i < end_; ++i) {                                                     \
      const uint lane = 0;                                                                         \
      __VA_ARGS__                                                                                  \
    }                                                                                              \
  }
#define SUM_LANES(acc) ((acc[0] + acc[1]) + (acc[2] + acc[3]))
#else
#define ACCUMULATORS 1
#define GRID_LOOP_LANES(i, lane, n, ...)                                                           \
  for (ulong i = get_global_id(0); i < (n); i += get_global_size(0)) {                             \
    const uint lane = 0;                                                                           \
    __VA_ARGS__                                                                                    \
  }
#define SUM_LANES(acc) (acc[0])
#endif
