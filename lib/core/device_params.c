/* Device parameters: the one table of launch geometries, data layouts and
 * per-device algorithm choices, in the manner of CLBlast's parameter
 * database (docs/devices.md, "Device parameters").
 *
 * A context fills its clmg_device_params once, at creation, from a
 * description of its device (clmg_device_describe: type, vendor, platform,
 * largest work-group, the warp or wavefront width where the driver reports
 * one, unified memory). clmg_device_params_fill is a pure function of that
 * description: it picks the device's class, copies the class's row of the
 * table below, applies the CLMG_DEVICE_PARAMS overrides (experiments only)
 * and bounds the work-group sizes by the device's largest. Every choice
 * the library makes from the device reads the context's copy; nothing else
 * tests the device's type or vendor.
 *
 * The classes:
 *   gpu-nvidia, gpu-amd, gpu-intel, gpu-other  CL_DEVICE_TYPE_GPU, by vendor
 *   cpu-pocl, cpu-intel, cpu-other             CL_DEVICE_TYPE_CPU, by platform
 *   oclgrind   the Oclgrind simulator (it reports every device type)
 *   other      neither a GPU nor a CPU (accelerators, custom devices)
 *
 * The rows reproduce the choices the library made before the table, when
 * they were tests of CL_DEVICE_TYPE spread over the sources: the GPU rows
 * share every value but AMD's SELL slice, the CPU rows are all alike (pocl
 * and Intel's CPU runtime were not measured apart), Oclgrind's mixes them
 * as its two type bits did, and "other" takes what a device with neither
 * bit took. The measurements behind the values are cited where the macros
 * below define them. */
#include "core/internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ----
 * Each row is a class's name and values; the macros gather the values that
 * classes share, each with the reason for its numbers. */

/* Work-group sizes (each bounded by the device's largest and rounded down
 * to a power of two when the context is made):
 *  - 256 for 1-D launches (clmg_launch_1d, SpMV, scans): eight 32-wide
 *    warps or four 64-wide wavefronts, and a size every device of the
 *    project ran at; the kernels take any size (prelude.cl's group_sum).
 *  - 128 for the dense coarse GEMV (a group per row), the patch-Jacobi
 *    smoother and the P1 assembly (a group per patch): a patch's rows and a
 *    coarse row's columns are hundreds, not thousands.
 *  - 64 for the CSR kernels that take a work-group per row (sorts,
 *    products): enough to share out a B row of a coarse AMG level (tens to
 *    hundreds of entries). */
#define GROUPS                                                                                     \
  .work_group_size = 256, .dense_group_size = 128, .patch_group_size = 128,                        \
  .assembly_group_size = 128, .row_group_size = 64, .tail_group_size = 1024

/* The coarse tail (lib/solve/coarse_tail.c): the levels of at most
 * tail_rows rows run their whole sub-cycle as one launch of one
 * work-group. The size comes from the device: tail_rows = tail_rows_per_item
 * x tail_group_size (the tail's group after the device's bound), unless an
 * override sets tail_rows itself. The rule: a tail level costs its phases
 * (smoothing steps, defect, restriction, prolongation) one pass of the
 * group each, ceil(rows / group) rounds, where outside the tail each phase
 * is a launch over the whole device; a level is worth folding in while a
 * phase's rounds cost less than a launch, i.e. rows up to the group size
 * times the rounds one launch pays for. The calibration point: on the H200
 * (perf/latency.py, CIRCLE Q1 V(4,4), 2026-11-28, a group of 1024) the
 * cycle at level 7 (33k unknowns) took 0.65-0.68 ms without the tail,
 * 0.27 ms with tail_rows 1024, 0.41 ms with 4096 and 0.97 ms with 32768; at
 * level 8 0.58, 0.42 (1024), 0.49 (2048) and 1.07 ms (32768); at level 10
 * 1.58 and 1.54 ms (1024 or 2048): one round per launch, tail_rows_per_item
 * 1, so 1024 rows there and 256 on a GPU whose groups stop at 256. On a CPU
 * one work-group runs on one core while a launch costs little: off
 * (tail_rows_per_item 0). A phase walks a level's entries, not its rows:
 * the calibration's Q1 rows hold 9, while AMG's coarse levels hold tens
 * and the coarse solve's dense inverse n^2. So a level joins the tail only
 * while its matrix has at most tail_rows x tail_entries_per_row entries,
 * and the coarsest's inverse as many (16: the calibration's 9 with room;
 * on the H200, 2026-11-29, AMG-CG at Regular 3 spent 0.44 ms a cycle in a
 * tail of its 768-row level, about 50 entries a row, and a dense inverse,
 * 8.4 of the solve's 18.9 ms). */
#define TAIL_GPU .tail_rows = SIZE_MAX, .tail_rows_per_item = 1, .tail_entries_per_row = 16
#define TAIL_CPU .tail_rows = SIZE_MAX, .tail_rows_per_item = 0, .tail_entries_per_row = 16

/* The fused kernels of the levels above the tail (lib/solve/fused_level.c,
 * cl/fused_level.cl). Both recompute what the unfused kernels store and
 * read back, so they pay only while a launch costs more than the extra
 * bytes and flops. For a Q1 level of n rows in double CSR (9 entries a row,
 * 12 bytes each, 8-byte offsets; R = P^T of bilinear interpolation, n/4
 * rows and 2.25 n entries):
 *  - defect + restriction, unfused: the defect reads A (116 n), x and b
 *    and writes d (24 n), the restriction reads R (29 n) and d and writes
 *    b_c (10 n): 179 n bytes, 2 launches. Fused: R (29 n), every fine row
 *    of A and b once per R entry that reads it (2.25 x 124 n = 279 n) and x,
 *    and b_c: 318 n bytes when no row stays in cache, 163 n when all do
 *    (a small level on a GPU's L2), 1 launch. Above the cache the fused
 *    kernel moves 1.8x the bytes, so it runs only on levels of at most
 *    fused_restrict_rows rows.
 *  - two Jacobi steps, unfused: 2 x (A + 4 n reals) = 296 n bytes, 2
 *    launches; fused: A row i and the rows of its 9 neighbours (10 x 116 n
 *    = 1160 n without cache, ~148 n with), 1 launch, and 10x the flops.
 * On a GPU (H200: 4.8 TB/s, a launch 5-7 us, 50 MB of L2) the levels up to
 * ~64k rows keep A in L2, where the extra reads cost less than a launch;
 * the smoothing's tenfold rereads halve that. Measured there (perf/latency.py
 * --fused, CIRCLE Q1 V(4,4) with the coarse tail of 1,024 rows, 2026-11-28)
 * it does not pay: with 65,536 / 16,384 rows the cycle took 0.350, 0.437,
 * 0.722 and 1.641 ms at levels 7-10 against 0.264, 0.332, 0.609 and 1.532
 * ms unfused (one fused defect+restriction of 768-8,448 rows ran 19-29 us,
 * three to four launches' worth: one work-item per coarse row serialises
 * the recomputation), so GPUs leave them off (options or CLMG_DEVICE_PARAMS
 * turn them on); without the tail they do save time there (0.41 against
 * 0.45 ms at level 7, 0.50 against 0.75 at level 8). On
 * pocl (the 2-core VM, CIRCLE Q1 V(4,4), fastest of 20-150 interleaved
 * runs of 20 cycles, 2026-11-28) a launch costs 3-7 us and the recomputed
 * flops count: at 5 levels (2,176 rows) the cycle took 236-240 us unfused,
 * 215 with the restriction fused up to 576 rows and 222 up to 2,176 (that
 * level's fusion costs more than its launch), 217 with the smoothing fused
 * on 48 rows, 221 up to 160 and 282 up to 576; at 4 levels (576 rows)
 * 99-110 us unfused, 85 with both fused up to 1,024 / 128 rows. Hence
 * 1,024 and 128 on CPUs (docs/performance.md, "Fused kernels above the
 * tail"). */
#define FUSED_GPU .fused_restrict_rows = 0, .fused_smooth_rows = 0
#define FUSED_CPU .fused_restrict_rows = 1024, .fused_smooth_rows = 128

/* Work-groups per compute unit of a 1-D launch, measured with perf/blas1:
 * on GPUs 64 for streaming kernels (enough in flight to keep memory busy)
 * and 8 for reductions (at most ~1000 partial sums to read back); on CPUs
 * a few contiguous chunks per core. */
#define LAUNCH_GPU .stream_groups_per_unit = 64, .reduction_groups_per_unit = 8
#define LAUNCH_CPU .stream_groups_per_unit = 4, .reduction_groups_per_unit = 4

/* Kernel variants. cpu_kernels builds every family with -DCLMG_CPU: a
 * work-item walks a contiguous chunk (pocl ran a strided walk 10-40x
 * slower), reductions keep 4 accumulators, the mesh and hierarchy kernels
 * take 8 lanes of a vector, the dense GEMV takes whole rows, Vanka packs a
 * cell's slots together (entry-major ran the sweep 1.6x slower on pocl).
 * homg_tile_kernels: HOMG's 2-D kernels in 64 x 4 work-groups (rows of 64
 * for coalescing), on devices that take groups of 256. */
#define KERNELS_GPU .cpu_kernels = 0, .homg_tile_kernels = 1
#define KERNELS_CPU .cpu_kernels = 1, .homg_tile_kernels = 0

/* Sparse formats (docs/algorithms.md, "Sparse formats"; perf/spmv):
 *  - GPUs: the automatic format is ELLPACK-R when its padding costs at most
 *    25% (one work-item per row, fully coalesced), else SELL-C-sigma when
 *    its padding costs at most 50%, else CSR; CSR takes a power of two of
 *    work-items per row up to the mean row length, at most 32 (a warp), and
 *    cuts rows longer than 64 mean rows (at least 512 entries) into
 *    segments of a work-group each; ELLR-T a thread per 12 entries of the
 *    mean row, at most 8. The SELL slice is the warp (32) or the
 *    wavefront (64 on AMD).
 *  - CPUs: CSR, but ELLPACK-R for short uniform rows (at most 8 entries,
 *    padding at most 25%): a core walks a CSR row contiguously, an ELLPACK
 *    row strided (pocl ran ELLR 2-3x slower than CSR at 25-27 entries per
 *    row, slightly faster at 5). One work-item per row, no long-row
 *    segments (splitting rows only adds barriers); a SELL slice of 8 covers
 *    an AVX-512 register of doubles, across which pocl vectorises the
 *    work-items.
 *  - SELL's sorting window sigma is 8 slices where rows are not uniform,
 *    which keeps y's writes local.
 *  - CSR-Adaptive (Greathouse and Daga 2014) instead of CSR where the
 *    automatic choice ends at CSR and the longest row is at least
 *    auto_csr_adaptive_ratio mean rows (8 is the intended value on GPUs;
 *    0 until an H200 run has measured it against CSR and cuSPARSE:
 *    CLMG_DEVICE_PARAMS=auto_csr_adaptive_ratio=8 turns it on). FE and stencil rows stay within 2-3
 * mean rows (Q2: 25 against 16; boundary rows are shorter) and take ELLPACK-R or SELL anyway; a row
 * 8 or more times the mean is a graph's hub, a constraint or a dense coupling, where CSR's lanes (a
 * power of two up to the mean row) idle on the short rows and a warp waits on its longest, while
 * CSR-Adaptive gives every work-group about the same entries. perf/spmv's irregular matrix (rows of
 * ~10, 4 of n/10) is at 25,000 mean rows. CPUs keep CSR: a work-item walks a whole row there, and
 * the row blocks only add barriers (pocl ran CSR-Adaptive 5-9x slower than CSR on perf/spmv's
 * matrices: docs/performance.md).
 *  - auto_hybrid: where SELL's padding is too large and the automatic choice
 *    would end at CSR, the hybrid instead when the matrix has rows longer
 *    than 8 mean rows and 256 entries and its other rows meet ELLR's (25%)
 *    or SELL's (50%) padding limit: the regular part keeps its coalesced
 *    layout and the few long rows are spread over work-groups in segments
 *    (perf/spmv's irregular matrix: SELL pads each long row's slice 32-fold,
 *    CSR's lanes idle on the short rows). 1 on GPUs (H200, the large
 *    irregular matrix in double: 250 us against CSR's 291 and cuSPARSE's
 *    186, with 8192-entry segments: docs/performance.md); 0 on CPUs, where CSR walks each
 *    row contiguously and has no padding to avoid (pocl, 2-core VM, best of
 *    3: the irregular matrix 2.74 ms hybrid, 3.16 ms CSR; one matrix on a
 *    noisy machine, not yet a rule).
 *  - CSR-Adaptive's row blocks hold up to 4 work-groups of entries, 1,024
 *    at groups of 256 (clSPARSE's block for its groups of 256): 8 KiB of
 *    local memory in double.
 *  - csr_segment_length: the entries of one segment of a long CSR row (and
 *    of a hybrid matrix's long rows), a work-group each. H200 (2026-11-29,
 *    perf/spmv's large irregular matrix, 4 rows of 277,777 entries, best of
 *    3): the hybrid in double took 249 / 236 / 241 / 251 / 271 us with
 *    segments of 8192 / 2048 / 1024 / 512 / 256 entries (float 165 / 153 /
 *    156 / 165 / 175; CSR 291 / 279 / 284 / 295 / 315): GPUs take 2048. CPUs
 *    keep 8192 (a core walks a segment contiguously; fewer, longer ones).
 *  - GPUs: a matrix of at most auto_csr_rows rows whose rows are long (a
 *    mean of at least 16 entries) and not uniform enough for ELLPACK-R
 *    takes CSR, a power of two of work-items per row, instead of SELL's one:
 *    such a matrix (AMG's coarse levels) leaves the device idle while each
 *    work-item walks its long row. On the H200 (2026-11-29, AMG-CG at
 *    Regular 3) a SELL product of a 768-row level of ~50 entries a row took
 *    48 us a launch, one of 10,752 rows of ~37 entries 24 us. 0: off (CPUs,
 *    where a work-item per row is the rule). */
#define SPARSE_GPU(slice)                                                                          \
  .sell_slice = slice, .sell_sigma_slices = 8, .csr_max_lanes = 32, .csr_long_row_factor = 64,     \
  .csr_long_row_min = 512, .csr_segment_length = 2048, .ellr_max_threads = 8,                      \
  .ellr_entries_per_thread = 12, .auto_ellr_max_length = SIZE_MAX, .auto_sell = 1,                 \
  .auto_csr_adaptive_ratio = 0, .auto_hybrid = 1, .csr_block_factor = 4, .auto_csr_rows = 32768
#define SPARSE_CPU                                                                                 \
  .sell_slice = 8, .sell_sigma_slices = 8, .csr_max_lanes = 1, .csr_long_row_factor = 0,           \
  .csr_long_row_min = 0, .csr_segment_length = 8192, .ellr_max_threads = 1,                        \
  .ellr_entries_per_thread = 12, .auto_ellr_max_length = 8, .auto_sell = 0,                        \
  .auto_csr_adaptive_ratio = 0, .auto_hybrid = 0, .csr_block_factor = 4, .auto_csr_rows = 0

/* Algorithm choices:
 *  - clblast_axpy: CLBlast's axpy under CLMG_BLAS1_AUTO (perf/blas1 at
 *    n = 1e7 and 1e8: on pocl its vectorised axpy is 25-35% faster than
 *    clmg's chunks; on the H100 the two are within 5%, and clmg's dot and
 *    nrm2 are faster everywhere).
 *  - amg_setup_on_device: smoothed aggregation's products and levels on
 *    the device, and parallel roots under CLMG_AMG_ROOTS_AUTO; on a CPU
 *    the host products are as fast, and device arrays would be one more
 *    copy of every level.
 *  - matrix_layout_on_device: clmg_matrix_create uploads a double matrix's
 *    CSR arrays and lays them out on the device (clmg_matrix_create_from_
 *    device: the same arrays as the host's layout), keeping the CSR pattern
 *    and the map, so the AMG's finest level gathers its CSR there instead of
 *    a second upload and the values can be updated in place; on a CPU the
 *    host layout is as fast and the kept pattern would be one more copy.
 *  - p1_rows: the P1 assembler's automatic path is rows (on the H200 at
 *    Regular level 3, 0.96 ms warm and 0.28 s of setup against patches'
 *    1.33 ms and 0.79 s); else patches, where rows' recomputed element
 *    matrices cost most (pocl: 12.3 ms against 7.1 ms).
 *  - stokes_setup_on_device: clmg_flow_solve makes every level's
 *    Crouzeix-Raviart matrix on the device (clmg_stokes_system_device, the
 *    host's bits) and hands those arrays to the assembler and the multigrid
 *    instead of uploading the host's; the host keeps a downloaded copy for
 *    the Vanka layouts and the assembler's tables. On pocl (dfg2 level 5,
 *    2026-11-29, best of two series of 5-6 runs on the shared 2-core VM) the
 *    kernels and the download cost a little more CPU time than the host's
 *    parallel assembly (hierarchy 0.70-0.75 against 0.67 s) and the uploads
 *    saved win it back (1.75-1.91 against 1.75-1.84 s with the assembler
 *    and multigrid): no gain, so CPUs keep the host path. GPUs take the
 *    device path (to be measured on the H200: docs/flow.md). */
#define CHOICES_GPU                                                                                \
  .clblast_axpy = 0, .amg_setup_on_device = 1, .matrix_layout_on_device = 1, .p1_rows = 1,         \
  .stokes_setup_on_device = 1
#define CHOICES_CPU                                                                                \
  .clblast_axpy = 1, .amg_setup_on_device = 0, .matrix_layout_on_device = 0, .p1_rows = 0,         \
  .stokes_setup_on_device = 0

/* Uploads through pinned staging (clmg_write_buffer, lib/core/memory.c).
 * A driver copies a write from ordinary (pageable) host memory through
 * its own bounce buffers: NVIDIA's OpenCL on the H200 uploaded the AMG
 * setup's finest CSR arrays (Regular level 4: 2.1M rows, 31.8M entries)
 * at about 6.5 GB/s, where a transfer from pinned memory runs several
 * times faster. So on GPUs a write of at least 1 MiB is copied, 16 MiB at
 * a time, into a ring of pinned chunks (CL_MEM_ALLOC_HOST_PTR, mapped),
 * each chunk's transfer overlapping the copy of the next; not where the
 * device's memory is the host's (an integrated GPU: SIZE_MAX stands for
 * that rule), and never on CPUs, where a buffer is host memory and the
 * staging copy is pure cost (pocl, perf/upload.c, 400 MB: 14 GB/s plain,
 * 4-10 GB/s staged). The chunk, measured on the H200 (perf/upload.c, 400
 * MB blocking uploads, 2026-11-29): plain 6.9 GB/s; staged in 4 MiB
 * chunks 6.3, 8 MiB 10.7, 16 MiB 17.8 (non-blocking 17.4, downloads 15.1),
 * 32 MiB 19.1 (non-blocking 13.8); a serial copy into the chunks 6.7: the
 * copy on the host's cores is what pays. 16 MiB. */
/* buffer_cache: a freed device buffer is kept for the next allocation of
 * its size class (lib/core/context.c) instead of being released. On the
 * H200 clReleaseMemObject waits for the commands queued before it (up to
 * 15 ms a call in an AMG setup, 2026-11-29: 0.117 s inside 962 calls of a
 * Regular 4 run, 0.129 s in 453 of an elasticity solve) and the device then
 * idles while the host queues the next ones; on CPUs a release is a free()
 * and the memory is the host's, so they release. */
/* staging_ring_after_bytes: the ring's pinned chunks are made only once
 * the context's large transfers (plain until then) reach this many bytes,
 * counting the one at hand. On the H200 making the three chunks of 16 MiB
 * took 28 ms (their mapping: ~9.4 ms each, 2026-11-29, an elasticity
 * `clmg solve`), which a 180 MB matrix upload's gain from staging (26 ms
 * plain, 10 ms staged) does not repay; they pay from ~320 MB, so SIZE_MAX
 * in the table stands for 8 times the ring (384 MiB). */
#define STAGING_GPU                                                                                \
  .staging_min_bytes = SIZE_MAX, .staging_chunk_bytes = (size_t)16 << 20,                          \
  .staging_ring_after_bytes = SIZE_MAX, .buffer_cache = 1
#define STAGING_OFF                                                                                \
  .staging_min_bytes = 0, .staging_chunk_bytes = (size_t)8 << 20, .staging_ring_after_bytes = 0,   \
  .buffer_cache = 0
#define STAGING_MIN_BYTES ((size_t)1 << 20)

/* Memory. host_buffers: the buffers are host memory of this process that
 * the driver takes when a command first uses them (pocl aborts when that
 * fails), so allocations check the address space first and large new
 * vectors are touched at once. bandwidth_bytes: the copy-bandwidth test's
 * buffers, large enough to defeat caches (hundreds of MB on GPUs), small
 * enough to take well under a second on a CPU. */
#define MEMORY_DEVICE .host_buffers = 0, .bandwidth_bytes = (size_t)1 << 30
#define MEMORY_HOST .host_buffers = 1, .bandwidth_bytes = (size_t)256 << 20

static const clmg_device_params table[CLMG_DEVICE_CLASS_COUNT] = {
    [CLMG_DEVICE_CLASS_GPU_NVIDIA] = {.class_name = "gpu-nvidia",
                                      GROUPS,
                                      LAUNCH_GPU,
                                      KERNELS_GPU,
                                      SPARSE_GPU(32),
                                      CHOICES_GPU,
                                      TAIL_GPU,
                                      FUSED_GPU,
                                      STAGING_GPU,
                                      MEMORY_DEVICE},
    /* GCN and CDNA wavefronts are 64 wide */
    [CLMG_DEVICE_CLASS_GPU_AMD] = {.class_name = "gpu-amd",
                                   GROUPS,
                                   LAUNCH_GPU,
                                   KERNELS_GPU,
                                   SPARSE_GPU(64),
                                   CHOICES_GPU,
                                   TAIL_GPU,
                                   FUSED_GPU,
                                   STAGING_GPU,
                                   MEMORY_DEVICE},
    [CLMG_DEVICE_CLASS_GPU_INTEL] = {.class_name = "gpu-intel",
                                     GROUPS,
                                     LAUNCH_GPU,
                                     KERNELS_GPU,
                                     SPARSE_GPU(32),
                                     CHOICES_GPU,
                                     TAIL_GPU,
                                     FUSED_GPU,
                                     STAGING_GPU,
                                     MEMORY_DEVICE},
    /* slice 0: the warp or wavefront width the driver reports, else 32 */
    [CLMG_DEVICE_CLASS_GPU_OTHER] = {.class_name = "gpu-other",
                                     GROUPS,
                                     LAUNCH_GPU,
                                     KERNELS_GPU,
                                     SPARSE_GPU(0),
                                     CHOICES_GPU,
                                     TAIL_GPU,
                                     FUSED_GPU,
                                     STAGING_GPU,
                                     MEMORY_DEVICE},
    [CLMG_DEVICE_CLASS_CPU_POCL] = {.class_name = "cpu-pocl",
                                    GROUPS,
                                    LAUNCH_CPU,
                                    KERNELS_CPU,
                                    SPARSE_CPU,
                                    CHOICES_CPU,
                                    TAIL_CPU,
                                    FUSED_CPU,
                                    STAGING_OFF,
                                    MEMORY_HOST},
    /* not measured apart from pocl */
    [CLMG_DEVICE_CLASS_CPU_INTEL] = {.class_name = "cpu-intel",
                                     GROUPS,
                                     LAUNCH_CPU,
                                     KERNELS_CPU,
                                     SPARSE_CPU,
                                     CHOICES_CPU,
                                     TAIL_CPU,
                                     FUSED_CPU,
                                     STAGING_OFF,
                                     MEMORY_HOST},
    [CLMG_DEVICE_CLASS_CPU_OTHER] = {.class_name = "cpu-other",
                                     GROUPS,
                                     LAUNCH_CPU,
                                     KERNELS_CPU,
                                     SPARSE_CPU,
                                     CHOICES_CPU,
                                     TAIL_CPU,
                                     FUSED_CPU,
                                     STAGING_OFF,
                                     MEMORY_HOST},
    /* Oclgrind reports CL_DEVICE_TYPE_CPU and _GPU (and the rest): the GPU
     * launches, formats and choices with the CPU kernels (-DCLMG_CPU) and
     * HOMG's tile kernels, host buffers (the simulator's memory is this
     * process's) and the GPU's bandwidth buffers */
    [CLMG_DEVICE_CLASS_OCLGRIND] = {.class_name = "oclgrind",
                                    GROUPS,
                                    LAUNCH_GPU,
                                    .cpu_kernels = 1,
                                    .homg_tile_kernels = 1,
                                    SPARSE_GPU(32),
                                    CHOICES_GPU,
                                    TAIL_CPU,
                                    FUSED_CPU,
                                    STAGING_OFF,
                                    .host_buffers = 1,
                                    .bandwidth_bytes = (size_t)1 << 30},
    /* neither a GPU nor a CPU: the GPU kernels (no -DCLMG_CPU) but HOMG's
     * 1-D ones, the CPU's launches, formats and choices, device memory with
     * the CPU's bandwidth buffers */
    [CLMG_DEVICE_CLASS_OTHER] = {.class_name = "other",
                                 GROUPS,
                                 LAUNCH_CPU,
                                 .cpu_kernels = 0,
                                 .homg_tile_kernels = 0,
                                 SPARSE_CPU,
                                 CHOICES_CPU,
                                 TAIL_CPU,
                                 FUSED_CPU,
                                 STAGING_OFF,
                                 .host_buffers = 0,
                                 .bandwidth_bytes = (size_t)256 << 20},
};

/* ---- classes ---- */

static int contains(const char *text, const char *part) {
  return text && strstr(text, part) != NULL;
}

clmg_device_class clmg_device_classify(const clmg_device_description *d) {
  if (contains(d->platform, "Oclgrind"))
    return CLMG_DEVICE_CLASS_OCLGRIND;
  if (d->is_gpu) {
    /* the vendor strings SELL's slice of 64 was chosen by */
    if (contains(d->vendor, "AMD") || contains(d->vendor, "Advanced Micro Devices"))
      return CLMG_DEVICE_CLASS_GPU_AMD;
    if (contains(d->vendor, "NVIDIA"))
      return CLMG_DEVICE_CLASS_GPU_NVIDIA;
    if (contains(d->vendor, "Intel"))
      return CLMG_DEVICE_CLASS_GPU_INTEL;
    return CLMG_DEVICE_CLASS_GPU_OTHER;
  }
  if (d->is_cpu) {
    if (contains(d->platform, "Portable Computing Language") || contains(d->platform, "PoCL"))
      return CLMG_DEVICE_CLASS_CPU_POCL;
    if (contains(d->platform, "Intel"))
      return CLMG_DEVICE_CLASS_CPU_INTEL;
    return CLMG_DEVICE_CLASS_CPU_OTHER;
  }
  return CLMG_DEVICE_CLASS_OTHER;
}

const char *clmg_device_class_name(clmg_device_class device_class) {
  return (int)device_class >= 0 && (int)device_class < CLMG_DEVICE_CLASS_COUNT
             ? table[device_class].class_name
             : "?";
}

/* ---- overrides (CLMG_DEVICE_PARAMS) ---- */

typedef enum field_kind { FIELD_SIZE, FIELD_UNSIGNED, FIELD_FLAG } field_kind;

/* The values an experiment may set, and their ranges. The memory fields
 * are not among them: they guard against drivers that abort. */
typedef struct field {
  const char *name;
  size_t offset;
  field_kind kind;
  unsigned long long low, high;
  int power_of_two;
} field;

#define SIZE_FIELD(name, high)                                                                     \
  { #name, offsetof(clmg_device_params, name), FIELD_SIZE, 1, high, 1 }
#define UNSIGNED_FIELD(name, low, high, power)                                                     \
  { #name, offsetof(clmg_device_params, name), FIELD_UNSIGNED, low, high, power }
#define FLAG_FIELD(name)                                                                           \
  { #name, offsetof(clmg_device_params, name), FIELD_FLAG, 0, 1, 0 }

static const field fields[] = {
    SIZE_FIELD(work_group_size, 1u << 16),
    SIZE_FIELD(dense_group_size, 1u << 16),
    SIZE_FIELD(patch_group_size, 1u << 16),
    SIZE_FIELD(assembly_group_size, 1u << 16),
    SIZE_FIELD(row_group_size, 1u << 16),
    SIZE_FIELD(csr_segment_length, 1u << 24),
    SIZE_FIELD(tail_group_size, 1u << 16),
    /* 0 turns the coarse tail off; tail_rows sets the size itself */
    {"tail_rows", offsetof(clmg_device_params, tail_rows), FIELD_SIZE, 0, 1u << 30, 0},
    UNSIGNED_FIELD(tail_rows_per_item, 0, 1u << 16, 0),
    UNSIGNED_FIELD(tail_entries_per_row, 1, 1u << 16, 0),
    /* 0 turns them off */
    {"fused_restrict_rows", offsetof(clmg_device_params, fused_restrict_rows), FIELD_SIZE, 0,
     1u << 30, 0},
    {"fused_smooth_rows", offsetof(clmg_device_params, fused_smooth_rows), FIELD_SIZE, 0, 1u << 30,
     0},
    UNSIGNED_FIELD(stream_groups_per_unit, 1, 1u << 16, 0),
    UNSIGNED_FIELD(reduction_groups_per_unit, 1, 1u << 16, 0),
    FLAG_FIELD(cpu_kernels),
    FLAG_FIELD(homg_tile_kernels),
    UNSIGNED_FIELD(sell_slice, 1, 256, 1),
    UNSIGNED_FIELD(sell_sigma_slices, 1, 1u << 16, 0),
    UNSIGNED_FIELD(csr_max_lanes, 1, 32, 1),
    UNSIGNED_FIELD(ellr_max_threads, 1, 32, 1),
    FLAG_FIELD(auto_sell),
    UNSIGNED_FIELD(auto_csr_adaptive_ratio, 0, 1u << 30, 0),
    FLAG_FIELD(auto_hybrid),
    UNSIGNED_FIELD(csr_block_factor, 2, 64, 1),
    {"auto_csr_rows", offsetof(clmg_device_params, auto_csr_rows), FIELD_SIZE, 0, 1u << 30, 0},
    FLAG_FIELD(clblast_axpy),
    FLAG_FIELD(amg_setup_on_device),
    FLAG_FIELD(matrix_layout_on_device),
    FLAG_FIELD(p1_rows),
    FLAG_FIELD(stokes_setup_on_device),
    FLAG_FIELD(buffer_cache),
    /* 0 turns staging off; any size forces it (also on a CPU, for tests) */
    {"staging_min_bytes", offsetof(clmg_device_params, staging_min_bytes), FIELD_SIZE, 0,
     1ull << 50, 0},
    {"staging_chunk_bytes", offsetof(clmg_device_params, staging_chunk_bytes), FIELD_SIZE, 64,
     1u << 30, 0},
    {"staging_ring_after_bytes", offsetof(clmg_device_params, staging_ring_after_bytes), FIELD_SIZE,
     0, 1ull << 50, 0},
};

static void list_keys(char *text, size_t size) {
  size_t used = strlen(text);
  used += (size_t)snprintf(text + used, used < size ? size - used : 0, "class");
  for (size_t i = 0; i < sizeof fields / sizeof fields[0] && used < size; ++i)
    used += (size_t)snprintf(text + used, size - used, ", %s", fields[i].name);
}

/* key=value, separated by commas or spaces; "class=NAME" first takes that
 * class's row. */
static clmg_status apply_overrides(const char *overrides, clmg_device_params *p, char *message,
                                   size_t size) {
  char item[96];
  const char *at = overrides;
  while (*at) {
    size_t skip = strspn(at, ", \t");
    at += skip;
    size_t length = strcspn(at, ", \t");
    if (length == 0)
      break;
    if (length >= sizeof item) {
      snprintf(message, size, "CLMG_DEVICE_PARAMS: \"%.*s...\" is too long", 40, at);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
    memcpy(item, at, length);
    item[length] = '\0';
    at += length;
    char *value = strchr(item, '=');
    if (!value || value == item || !value[1]) {
      snprintf(message, size, "CLMG_DEVICE_PARAMS: \"%s\" is not KEY=VALUE", item);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
    *value++ = '\0';
    if (strcmp(item, "class") == 0) {
      int found = 0;
      for (int c = 0; c < CLMG_DEVICE_CLASS_COUNT && !found; ++c)
        if (strcmp(value, table[c].class_name) == 0) {
          *p = table[c];
          p->device_class = (clmg_device_class)c;
          found = 1;
        }
      if (!found) {
        int used =
            snprintf(message, size, "CLMG_DEVICE_PARAMS: unknown class \"%s\"; classes:", value);
        for (int c = 0; c < CLMG_DEVICE_CLASS_COUNT && used >= 0 && (size_t)used < size; ++c)
          used += snprintf(message + used, size - (size_t)used, "%s %s", c ? "," : "",
                           table[c].class_name);
        return CLMG_ERROR_INVALID_ARGUMENT;
      }
      continue;
    }
    const field *f = NULL;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0] && !f; ++i)
      if (strcmp(item, fields[i].name) == 0)
        f = &fields[i];
    if (!f) {
      snprintf(message, size, "CLMG_DEVICE_PARAMS: unknown key \"%s\"; keys: ", item);
      list_keys(message, size);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long number = strtoull(value, &end, 10);
    if (value[0] == '-' || errno != 0 || *end != '\0' || number < f->low || number > f->high ||
        (f->power_of_two && (number & (number - 1)) != 0)) {
      snprintf(message, size, "CLMG_DEVICE_PARAMS: %s=%s: want %s%s from %llu to %llu", item, value,
               f->power_of_two ? "a power of two" : "an integer",
               f->kind == FIELD_FLAG ? " (0 or 1)" : "", f->low, f->high);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
    char *slot = (char *)p + f->offset;
    if (f->kind == FIELD_SIZE) {
      size_t v = (size_t)number;
      memcpy(slot, &v, sizeof v);
    } else if (f->kind == FIELD_UNSIGNED) {
      unsigned v = (unsigned)number;
      memcpy(slot, &v, sizeof v);
    } else {
      int v = (int)number;
      memcpy(slot, &v, sizeof v);
    }
  }
  return CLMG_SUCCESS;
}

/* ---- filling ---- */

/* The largest power of two at most `wanted` and at most `limit` (at least 1). */
static size_t bounded_group(size_t wanted, size_t limit) {
  size_t bound = wanted < limit ? wanted : limit, group = 1;
  while (group <= bound / 2)
    group *= 2;
  return group;
}

static unsigned at_most(unsigned value, size_t limit) {
  return (size_t)value > limit ? (unsigned)limit : value;
}

clmg_status clmg_device_params_fill(const clmg_device_description *d, const char *overrides,
                                    clmg_device_params *p, char *message, size_t message_size) {
  clmg_device_class device_class = clmg_device_classify(d);
  *p = table[device_class];
  p->device_class = device_class;
  if (message && message_size)
    message[0] = '\0';
  if (overrides && *overrides) {
    char scratch[1];
    clmg_status status = apply_overrides(overrides, p, message_size ? message : scratch,
                                         message_size ? message_size : sizeof scratch);
    if (status != CLMG_SUCCESS)
      return status;
  }
  size_t max = d->max_work_group_size ? d->max_work_group_size : 1;
  p->work_group_size = bounded_group(p->work_group_size, max);
  p->dense_group_size = bounded_group(p->dense_group_size, max);
  p->patch_group_size = bounded_group(p->patch_group_size, max);
  p->assembly_group_size = bounded_group(p->assembly_group_size, max);
  p->row_group_size = bounded_group(p->row_group_size, max);
  p->tail_group_size = bounded_group(p->tail_group_size, max);
  /* the tail's size from its group (the rule beside TAIL_GPU): SIZE_MAX
   * in the table, a number where an override set it */
  if (p->tail_rows == SIZE_MAX)
    p->tail_rows = (size_t)p->tail_rows_per_item * p->tail_group_size;
  /* a row's lanes lie in one work-group (spmv.cl's lanes_sum) */
  p->csr_max_lanes = at_most(p->csr_max_lanes, p->work_group_size);
  p->ellr_max_threads = at_most(p->ellr_max_threads, p->work_group_size);
  /* the tile kernels require work-groups of 64 x 4 */
  p->homg_tile_kernels = p->homg_tile_kernels && max >= 256;
  if (p->sell_slice == 0) {
    unsigned warp = d->warp_width;
    p->sell_slice = warp > 0 && warp <= 256 && (warp & (warp - 1)) == 0 ? warp : 32;
  }
  /* the memory fields follow the device whatever class an override names */
  p->host_buffers = table[device_class].host_buffers;
  p->bandwidth_bytes = table[device_class].bandwidth_bytes;
  p->shares_host_memory = p->host_buffers || d->unified_memory;
  p->oclgrind = device_class == CLMG_DEVICE_CLASS_OCLGRIND;
  /* staging where the device's memory is not the host's (STAGING_GPU) */
  if (p->staging_min_bytes == SIZE_MAX)
    p->staging_min_bytes = p->shares_host_memory ? 0 : STAGING_MIN_BYTES;
  if (p->staging_ring_after_bytes == SIZE_MAX)
    p->staging_ring_after_bytes = 8 * CLMG_STAGING_SLOTS * p->staging_chunk_bytes;
  return CLMG_SUCCESS;
}

/* ---- describing a device ---- */

#ifndef CL_DEVICE_WARP_SIZE_NV
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_WAVEFRONT_WIDTH_AMD
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#endif

static int has_extension(cl_device_id device, const char *name) {
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS || size == 0)
    return 0;
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  int found = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, text, NULL) == CL_SUCCESS) {
    text[size] = '\0';
    size_t length = strlen(name);
    for (const char *at = strstr(text, name); at && !found; at = strstr(at + 1, name))
      found = (at == text || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0');
  }
  free(text);
  return found;
}

void clmg_device_describe(const clmg_device_info *info, cl_device_id device,
                          clmg_device_description *d) {
  memset(d, 0, sizeof *d);
  d->is_gpu = info->is_gpu;
  d->is_cpu = info->is_cpu;
  d->vendor = info->vendor;
  d->platform = info->platform_name;
  d->max_work_group_size = info->max_work_group_size;
  cl_bool unified = CL_FALSE;
  if (clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) ==
      CL_SUCCESS)
    d->unified_memory = unified == CL_TRUE;
  /* only where the extension says the query exists (Oclgrind reports a
   * query it does not know as an error) */
  cl_uint width = 0;
  if (has_extension(device, "cl_nv_device_attribute_query") &&
      clGetDeviceInfo(device, CL_DEVICE_WARP_SIZE_NV, sizeof width, &width, NULL) == CL_SUCCESS)
    d->warp_width = width;
  else if (has_extension(device, "cl_amd_device_attribute_query") &&
           clGetDeviceInfo(device, CL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof width, &width, NULL) ==
               CL_SUCCESS)
    d->warp_width = width;
}
