/* Internal interface of the core layer: the context's insides, error
 * reporting, the program manager and launch geometry. Not installed. The
 * core depends on nothing above it: it includes only clmg/core.h. */
#ifndef CLMG_CORE_INTERNAL_H
#define CLMG_CORE_INTERNAL_H

#include "clmg/core.h"

#include <stdarg.h>

#define CLMG_MESSAGE_SIZE 8192

typedef struct clmg_program_entry clmg_program_entry;
typedef struct clmg_profile clmg_profile;

/* ---- device parameters (lib/core/device_params.c) ----
 * Every launch geometry, data layout and algorithm choice the library makes
 * from the device, filled once per context from the table of device classes
 * in lib/core/device_params.c (docs/devices.md, "Device parameters"). */
typedef enum clmg_device_class {
  CLMG_DEVICE_CLASS_GPU_NVIDIA,
  CLMG_DEVICE_CLASS_GPU_AMD,
  CLMG_DEVICE_CLASS_GPU_INTEL,
  CLMG_DEVICE_CLASS_GPU_OTHER,
  CLMG_DEVICE_CLASS_CPU_POCL,
  CLMG_DEVICE_CLASS_CPU_INTEL,
  CLMG_DEVICE_CLASS_CPU_OTHER,
  CLMG_DEVICE_CLASS_OCLGRIND,
  CLMG_DEVICE_CLASS_OTHER,
  CLMG_DEVICE_CLASS_COUNT
} clmg_device_class;

/* What the parameters are chosen from. */
typedef struct clmg_device_description {
  int is_gpu, is_cpu;         /* CL_DEVICE_TYPE has the GPU / CPU bit (Oclgrind has both) */
  const char *vendor;         /* CL_DEVICE_VENDOR */
  const char *platform;       /* CL_PLATFORM_NAME */
  size_t max_work_group_size; /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  unsigned warp_width;        /* CL_DEVICE_WARP_SIZE_NV / _WAVEFRONT_WIDTH_AMD; 0: not reported */
  int unified_memory;         /* CL_DEVICE_HOST_UNIFIED_MEMORY */
} clmg_device_description;

typedef struct clmg_device_params {
  clmg_device_class device_class;
  const char *class_name; /* "gpu-nvidia", "cpu-pocl", ... (static) */

  /* Work-group sizes: powers of two, at most the device's largest. */
  size_t work_group_size;     /* 1-D launches: clmg_launch_1d, SpMV, scans */
  size_t dense_group_size;    /* the dense coarse GEMV's GPU kernel: a group per row */
  size_t patch_group_size;    /* the patch-Jacobi smoother: a group per patch */
  size_t assembly_group_size; /* the P1 assembler's patch and gather paths (default) */
  size_t row_group_size;      /* the CSR kernels that take a group per row */
  size_t tail_group_size;     /* the coarse tail's one work-group (lib/solve/coarse_tail.c) */
  size_t tail_rows; /* the coarse tail: levels of at most this many rows, one launch per cycle;
                     * 0: off. tail_rows_per_item * tail_group_size unless overridden */
  unsigned tail_rows_per_item;   /* the tail's rows per work-item of its group (0: no tail) */
  unsigned tail_entries_per_row; /* a tail level's entries at most tail_rows x this (the coarse
                                  * solve's dense inverse too): AMG's denser coarse levels */
  size_t fused_restrict_rows;    /* levels of at most this many rows: defect and restriction in
                                  * one launch (lib/solve/fused_level.c); 0: off */
  size_t fused_smooth_rows;      /* ... two Jacobi steps per launch; 0: off */
  /* work-groups per compute unit of clmg_launch_1d: streaming, reductions */
  unsigned stream_groups_per_unit, reduction_groups_per_unit;

  /* Kernel variants. */
  int cpu_kernels;       /* build with -DCLMG_CPU (contiguous chunks per work-item; the
                          * CPU sides of dense.cl, vanka.cl and the mesh kernels) */
  int homg_tile_kernels; /* HOMG's 2-D GPU kernels (64 x 4 groups) */

  /* Sparse matrices (lib/la/matrix.c). */
  unsigned sell_slice;            /* SELL's default slice height C */
  unsigned sell_sigma_slices;     /* sigma = this * C where rows are not uniform */
  unsigned csr_max_lanes;         /* CSR work-items per row: a power of two <= mean row, <= this */
  double csr_long_row_factor;     /* CSR rows longer than this * mean row ... */
  uint64_t csr_long_row_min;      /* ... and this are cut into segments; factor 0: never */
  size_t csr_segment_length;      /* entries of such a segment (and of a hybrid's long rows') */
  unsigned ellr_max_threads;      /* ELLR-T: a thread per ellr_entries_per_thread entries of */
  double ellr_entries_per_thread; /*   the mean row, a power of two, at most ellr_max_threads */
  size_t auto_ellr_max_length;    /* the automatic format: ELLR for rows up to this long ... */
  int auto_sell;                  /* ... else SELL (when 1 and its padding fits), else CSR ... */
  unsigned auto_csr_adaptive_ratio; /* ... or CSR-Adaptive where the longest row is at least
                                     * this many mean rows (0: never) */
  int auto_hybrid;      /* ... and before either, the hybrid (ELLR or SELL plus CSR segments) where
                         * rows longer than 8 mean rows and 256 leave the others within ELLR's or
                         * SELL's padding limits */
  size_t auto_csr_rows; /* ... and CSR for at most this many rows of at least 16 entries a row
                         * that ELLPACK-R does not take (0: never) */
  unsigned csr_block_factor; /* CSR-Adaptive's row blocks: up to this many work-groups
                              * of entries (a power of two, at least 2) */

  /* Algorithm choices. */
  int clblast_axpy;            /* CLMG_BLAS1_AUTO takes CLBlast's axpy */
  int amg_setup_on_device;     /* smoothed aggregation's hierarchy on the device */
  int matrix_layout_on_device; /* clmg_matrix_create lays double matrices out there */
  int p1_rows;                 /* the P1 assembler's automatic path: rows, else patches */
  int stokes_setup_on_device;  /* clmg_flow_solve makes the CR systems on the device */

  /* Uploads (clmg_write_buffer, lib/core/memory.c): writes of at least
   * staging_min_bytes go through a ring of pinned host chunks of
   * staging_chunk_bytes each (0: never; SIZE_MAX in the table: 1 MiB
   * unless the device shares the host's memory). */
  size_t staging_min_bytes;
  size_t staging_chunk_bytes;
  size_t staging_ring_after_bytes; /* the ring made once large transfers reach this (SIZE_MAX
                                    * in the table: 8 rings' worth) */
  /* Freed buffers kept for reuse (clmg_device_free; lib/core/context.c):
   * GPUs, where a release waits for the queue */
  int buffer_cache;

  /* Memory: these follow the device, never an override. */
  int host_buffers;       /* buffers are this process's memory, taken on first use (CPUs) */
  int shares_host_memory; /* host_buffers, or unified host memory (integrated GPUs) */
  int oclgrind;           /* the Oclgrind simulator: its shadow memory (memory.c) */
  size_t bandwidth_bytes; /* the copy-bandwidth test's buffer, before the limits */
} clmg_device_params;

/* The class of a device. */
clmg_device_class clmg_device_classify(const clmg_device_description *device);
const char *clmg_device_class_name(clmg_device_class device_class);
/* The parameters of a device: its class's row of the table, then
 * `overrides` ("key=value,..."; NULL or "" for none; "class=NAME" takes
 * that class's row), then the bounds of the device. A pure function of its
 * arguments. A malformed override fails with CLMG_ERROR_INVALID_ARGUMENT
 * and a message naming the valid keys or values. */
clmg_status clmg_device_params_fill(const clmg_device_description *device, const char *overrides,
                                    clmg_device_params *params, char *message, size_t message_size);
/* The description of a device from its info and a few queries of its own;
 * the strings point into info. */
void clmg_device_describe(const clmg_device_info *info, cl_device_id device,
                          clmg_device_description *description);

#define CLMG_BLAS1_KERNEL_SLOTS 24
/* the pinned chunks of staged uploads (lib/core/memory.c): one being
 * filled while the others' transfers run */
#define CLMG_STAGING_SLOTS 3

struct clmg_context {
  cl_platform_id platform;
  cl_device_id device;
  cl_context cl;
  cl_command_queue queue;
  clmg_device_info info;
  clmg_device_params params; /* from the table (lib/core/device_params.c) */
  char message[CLMG_MESSAGE_SIZE];
  uint64_t device_bytes; /* in live buffers, as asked for (not their size classes) */

  /* freed buffers kept for the next allocation of their size class
   * (params.buffer_cache; lib/core/context.c): cached_bytes in all, at
   * most cache_limit */
  struct clmg_cached_buffer *cached;
  size_t cached_count;
  uint64_t cached_bytes;

  /* memory checks (lib/core/memory.c) */
  uint64_t memory_limit;        /* 0: none */
  char memory_limit_origin[64]; /* where the limit came from, for messages */
  const char *fp64_disabled_by; /* static; NULL unless disable_fp64 */

  /* program manager */
  char *cache_dir;            /* NULL: binary cache disabled */
  char cache_off_reason[320]; /* why the cache is off where a directory was named */
  char *kernel_dir;           /* NULL: embedded sources */
  clmg_program_entry *programs;
  unsigned programs_built;
  unsigned programs_cached;
  clmg_program_callback program_callback; /* NULL: none */
  void *program_callback_data;
  double program_seconds; /* building and loading programs, all told */

  /* the names registered for the options layer (lib/solver/registry.c);
   * NULL: none */
  struct clmg_registry *registry;

  /* reductions: one partial sum per work-group and per result */
  cl_mem partials;
  size_t partials_capacity; /* bytes */
  void *partials_host;

  /* -D options every kernel is built with, per precision: the REAL type and
   * what the kernels need to know of the device (CLMG_CPU: params.cpu_kernels). */
  char real_options[2][128];

  clmg_blas1_backend blas1_backend;
  cl_mem clblast_scalar;
  /* BLAS-1 kernels by precision (double, float) and lib/la/blas1.c's id;
   * owned by the program manager, like every kernel. */
  cl_kernel blas1_kernels[2][CLMG_BLAS1_KERNEL_SLOTS]; /* result slot for CLBlast dot/nrm2 */

  clmg_reducer reducer; /* reduce == NULL: reductions stay local */
  /* a failure of this process's step inside a distributed solve, held back
   * (clmg_hold) until the next reduction carries it to every process
   * (lib/core/reduction.c); CLMG_SUCCESS: none */
  clmg_status pending;
  char pending_message[CLMG_MESSAGE_SIZE];
  int failure_agreed; /* a reduction agreed on a failure: every process is returning it */
  int solve_depth;    /* the solves entered (clmg_context_enter) and not yet left */

  clmg_profile *profile; /* NULL unless clmg_profile_start ran (lib/core/profile.c) */

  /* what latency costs, since the context was made (clmg_context_counters):
   * commands enqueued (kernels, CLBlast calls, fills, copies, transfers) and
   * waits of the host for the queue (blocking transfers, clFinish) */
  uint64_t commands, host_waits;
  /* commands when the queue was last known empty: a clFinish, or a blocking
   * command (the in-order queue ran everything before it first) */
  uint64_t drained_at;

  /* the pinned chunks that large uploads are staged through
   * (clmg_write_buffer, lib/core/memory.c), made on first use: each one's
   * buffer, its mapped host pointer and its last transfer's event (NULL:
   * free); the slot the next chunk takes; staging_unavailable when pinned
   * memory could not be had (plain writes from then on) */
  cl_mem staging[CLMG_STAGING_SLOTS];
  void *staging_host[CLMG_STAGING_SLOTS];
  cl_event staging_done[CLMG_STAGING_SLOTS];
  size_t staging_bytes;         /* each chunk's bytes; 0 until made */
  uint64_t staging_plain_bytes; /* large transfers made plain before the ring was */
  unsigned staging_next;
  int staging_unavailable;
};

/* Counts a command enqueued on the queue and, when blocking, the host's
 * wait for it (and so for everything before it). */
static inline void clmg_count_command(clmg_context *context, int blocking) {
  context->commands++;
  context->host_waits += blocking != 0;
  if (blocking)
    context->drained_at = context->commands;
}

/* clmg_finish where a command was enqueued since the queue was last known
 * empty, else nothing (no wait): for the setup's phase clocks, whose laps
 * often follow a blocking read (a product's sizes, a level brought back). */
clmg_status clmg_finish_queued(clmg_context *context);

/* The hooks of every launch site (kernels and CLBlast calls): slot returns
 * where the launch's event goes when a kernel profile runs (NULL otherwise:
 * pass it on as the event pointer); commit, after the launch, counts it
 * (clmg_context_counters) and, when it succeeded under a profile, records
 * its event. Profiled launches are summed per (name, work_items): the
 * global size, or the length for CLBlast calls, so that the levels of a
 * hierarchy show apart. */
cl_event *clmg_profile_event_slot(clmg_context *context, const char *name, uint64_t work_items);
void clmg_launch_commit(clmg_context *context, cl_event *slot, int launched);
void clmg_profile_destroy(clmg_context *context);

/* Records a formatted message in the context and returns status. Returns
 * status unchanged when context is NULL. */
clmg_status clmg_fail(clmg_context *context, clmg_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Maps an OpenCL error to a status and records "<what>: <CL error name>". */
clmg_status clmg_fail_cl(clmg_context *context, cl_int error, const char *what);
const char *clmg_cl_error_name(cl_int error);

/* Clears the context's message at the start of a public call. */
void clmg_clear_message(clmg_context *context);

/* Program manager. Returns the kernel `name` from the program of `family`
 * (cl/<family>.cl, after cl/prelude.cl) built with `options`. Programs and
 * kernels are kept for the context's life, so the returned kernel must not be
 * released. Sources come from the binary cache when possible. */
clmg_status clmg_get_kernel(clmg_context *context, const char *family, const char *options,
                            const char *name, cl_kernel *kernel);

/* The build options for kernels on vectors of `type` (double or float):
 * -DREAL=... and the device switches. */
const char *clmg_real_options(const clmg_context *context, clmg_dtype type);

/* Monotonic wall-clock seconds (for the timings setups report). */
double clmg_seconds_now(void);

/* ---- host loops on several cores (lib/core/parallel.c) ----
 * body(data, range, begin, end) runs the items [begin, end) of range
 * number `range` (< CLMG_MAX_HOST_THREADS); the ranges split [0, n) in
 * order, at least `grain` items each, one per thread (the host's cores
 * this thread may run on, its affinity mask's where the OS has one, at
 * most CLMG_MAX_HOST_THREADS; $CLMG_HOST_THREADS overrides, 1 keeps it
 * serial).
 * Bodies must only write what their own items own. A thread that cannot
 * start leaves its range to the caller: the loop always completes. */
enum { CLMG_MAX_HOST_THREADS = 32 };
/* The fixed priority of index i in the parallel choices that rank items by
 * one (the Gauss-Seidel colouring's weights, the aggregation's roots): a
 * hash that is a bijection on 32 bits (MurmurHash3's finaliser), so no two
 * indices tie, the same on every run and device (cl/amg_aggregate.cl has
 * its device copy). */
uint32_t clmg_index_priority(uint32_t i);
typedef void (*clmg_host_loop_body)(void *data, size_t range, size_t begin, size_t end);
size_t clmg_host_threads(void);
void clmg_host_parallel_for(size_t n, size_t grain, clmg_host_loop_body body, void *data);
/* memcpy of a large array on several threads (into fresh memory, the first
 * touch of its pages is most of the time). */
void clmg_host_copy(void *dst, const void *src, size_t bytes);

/* The lowest i in [0, n) that flagged(data, i) flags, n when none: ranges of
 * at least `grain` items on the host's threads, each stopping at its first
 * flagged item, the lowest of those kept (the serial loop's answer on any
 * number of threads). For checks that name the first bad row. */
typedef int (*clmg_host_item_test)(const void *data, size_t i);
size_t clmg_host_first_flagged(size_t n, size_t grain, clmg_host_item_test flagged,
                               const void *data);

/* Launch geometry for a 1-D kernel over n items that walks them with
 * GRID_LOOP (cl/prelude.cl): the local and global sizes. Reductions get few
 * work-groups (their partial sums are read back), streaming kernels enough
 * to keep the memory system busy. */
void clmg_launch_1d(const clmg_context *context, size_t n, int reduction, size_t *global,
                    size_t *local);

/* clmg_fill_pseudo_random's generator (lib/core/memory.c): its
 * multiplier and increment, and its state `steps` steps after `state`. */
extern const uint64_t CLMG_LCG_MUL, CLMG_LCG_ADD;
uint64_t clmg_lcg_skip(uint64_t state, uint64_t steps);

/* Allocates a device buffer of `bytes` (at least 1), copied from `initial`
 * when not NULL, counted in the context's device bytes. Requests beyond the
 * device's largest allocation, its remaining memory, the memory limit or
 * (on devices that use host memory) the host's available memory fail with
 * CLMG_ERROR_OUT_OF_DEVICE_MEMORY and a message naming `what`. */
clmg_status clmg_device_alloc(clmg_context *context, size_t bytes, const void *initial,
                              const char *what, cl_mem *buffer);
/* Releases a buffer from clmg_device_alloc (NULL is fine); with
 * params.buffer_cache the buffer is kept for a later allocation of its size
 * class instead (an in-order queue runs every command that used it before
 * any that reuses it). */
void clmg_device_free(clmg_context *context, cl_mem buffer, size_t bytes);

/* Fills `bytes` bytes of buffer from byte `offset` with a pattern of
 * pattern_size bytes (a power of two up to 128 that divides both), at most
 * 2^30 copies of it per enqueued fill: NVIDIA's driver ran a fill of more
 * than 2^31 copies (3.8 GB with a 1-byte pattern) for 90 s and then lost
 * its queue. `what` names the fill in a failure's message. */
clmg_status clmg_fill_buffer(clmg_context *context, cl_mem buffer, const void *pattern,
                             size_t pattern_size, size_t offset, size_t bytes, const char *what);

/* Whether clmg_write_buffer stages a write of `bytes` through pinned
 * memory (the device parameters staging_min_bytes and _chunk_bytes). */
int clmg_staging_applies(const clmg_context *context, size_t bytes);
/* clmg_staging_applies, and the ring made or worth making: before it is,
 * large transfers go plain (counted) until they reach
 * params.staging_ring_after_bytes with this one. */
int clmg_staging_wanted(clmg_context *context, size_t bytes);
/* The pinned chunks, made on first use; 0 when they cannot be had (then
 * none is kept, and no later write tries again: plain writes). */
int clmg_staging_ready(clmg_context *context);
/* Waits for the staged transfers still running and releases the pinned
 * chunks (context destruction). */
void clmg_staging_release(clmg_context *context);

/* Oclgrind's uninitialised-value check keeps a wrong shadow of a new
 * buffer, of part-buffer writes and of copies (lib/core/memory.c says how);
 * on Oclgrind these functions put it right, elsewhere they are the plain
 * OpenCL commands. fresh_shadow: a new buffer of `bytes` reads as unwritten
 * (nothing elsewhere). write_buffer: clEnqueueWriteBuffer of bytes [offset,
 * offset + bytes), blocking or not. copy_buffer: clEnqueueCopyBuffer. fill:
 * clmg_fill_buffer's work on Oclgrind. `what` names the operation in a
 * failure's message. */
clmg_status clmg_oclgrind_fresh_shadow(clmg_context *context, cl_mem buffer, size_t bytes,
                                       const char *what);
/* write_buffer is every upload of the library: writes of at least
 * staging_min_bytes to a device whose memory is not the host's are staged
 * through pinned chunks (memory.c says how), after which the host array
 * may be reused at once even when the write does not block. */
clmg_status clmg_write_buffer(clmg_context *context, cl_mem buffer, int blocking, size_t offset,
                              size_t bytes, const void *host, const char *what);
/* read_buffer: clEnqueueReadBuffer of bytes [offset, offset + bytes) into
 * host; large blocking reads come back through the pinned chunks too. */
clmg_status clmg_read_buffer(clmg_context *context, cl_mem buffer, int blocking, size_t offset,
                             size_t bytes, void *host, const char *what);
clmg_status clmg_copy_buffer(clmg_context *context, cl_mem source, size_t source_offset,
                             cl_mem target, size_t target_offset, size_t bytes, const char *what);
clmg_status clmg_oclgrind_fill(clmg_context *context, cl_mem buffer, const void *pattern,
                               size_t pattern_size, size_t offset, size_t bytes, const char *what);

/* The checks of clmg_device_alloc and clmg_context_check_memory
 * (lib/core/memory.c): `bytes` more device bytes, `largest` of them in one
 * allocation, `host_bytes` of host memory besides; the host memory is read
 * only when host_check is nonzero or the host need reaches 16 MiB. */
clmg_status clmg_memory_check(clmg_context *context, uint64_t bytes, uint64_t largest,
                              uint64_t host_bytes, int host_check, const char *what);

/* Reads memory_limit_bytes / $CLMG_MEMORY_LIMIT and disable_fp64 /
 * $CLMG_DISABLE_FP64 into the context at creation; a malformed variable
 * fails with CLMG_ERROR_INVALID_ARGUMENT. */
clmg_status clmg_memory_options(clmg_context *context, const clmg_context_options *options);

/* "device X has no double precision (cl_khr_fp64...); use float", prefixed
 * by `what` when not NULL: CLMG_ERROR_UNSUPPORTED. */
clmg_status clmg_fail_no_fp64(clmg_context *context, const char *what);

/* "8,590,458,888 bytes (8.000 GiB)": exact, then readable. The pair form
 * gives the readable parts enough digits that two different counts never
 * read the same. */
void clmg_format_bytes(uint64_t bytes, char *text, size_t size);
void clmg_format_byte_pair(uint64_t a, uint64_t b, char *text_a, char *text_b, size_t size);

/* Combines values across processes with the context's reducer (nothing
 * without one); a failure carries a message. */
clmg_status clmg_context_reduce(clmg_context *context, clmg_reduce_op op, double *values,
                                int count);

/* Where a distributed setup may fail on one process only and collective
 * work follows: every process calls this with its own status, and all
 * continue only if all succeeded. A process that did not fail itself
 * returns CLMG_ERROR_COMMUNICATION with the message
 * CLMG_ANOTHER_PROCESS_FAILED (clmg_mpi_agree then prefers the real
 * failure's message). Without a reducer it returns status. */
clmg_status clmg_context_agree_local(clmg_context *context, clmg_status status);

/* Failures inside distributed solves. A step of a solve that fails on one
 * process only (a kernel launch, an allocation, a caller's preconditioner)
 * must not end the solve on that process alone: the others would wait for
 * its halo messages or in its next reduction. So a distributed solve holds
 * such a failure back (clmg_hold: the process carries on, through the
 * communication the others expect, with whatever its vectors hold), and
 * every reduction carries one more value, the number of held failures;
 * when it is nonzero, every process returns the failure of the lowest
 * failing process with its message (the reducer's agree: clmg_mpi_agree's
 * "rank R: ..."), and the solve ends everywhere. Locally (no reducer)
 * clmg_hold returns the failure as it is. */

/* status, or CLMG_SUCCESS with the failure held back when the context is
 * distributed (and no failure is being agreed on): for a step whose
 * reduction follows at once (BLAS-1's), which then returns the failure. */
clmg_status clmg_context_hold(clmg_context *context, clmg_status status);

/* The same inside a solve (clmg_context_enter), whose next reduction or
 * end agrees on it; outside one, status: call it on each step of a
 * distributed method that the method must carry on after. */
static inline clmg_status clmg_hold(clmg_context *context, clmg_status status) {
  return status == CLMG_SUCCESS || !context->reducer.reduce || context->solve_depth == 0
             ? status
             : clmg_context_hold(context, status);
}

/* 1 when a reduction has agreed on a failure that every process is now
 * returning: the methods pass it on unchanged, neither held nor prefixed. */
static inline int clmg_failure_agreed(const clmg_context *context) {
  return context->failure_agreed;
}

/* Collective when distributed: the failures held on any process are
 * agreed on now (the solve ends; status otherwise). For a solve's end and
 * after its allocations. */
clmg_status clmg_context_settle(clmg_context *context, clmg_status status);

/* Bracket a solve (a Krylov method, a multigrid cycle or solve): the
 * outermost one (collective when distributed) settles the failures still
 * held when it ends, so that none outlives the call that had it. */
void clmg_context_enter(clmg_context *context);
clmg_status clmg_context_leave(clmg_context *context, clmg_status status);

/* Makes the context's reduction scratch hold at least `bytes`. */
clmg_status clmg_reserve_partials(clmg_context *context, size_t bytes);

/* Sets kernel arguments in order, remembering the first failure so a call
 * site reads as a list of arguments and checks once:
 *   clmg_kernel_args a; clmg_args_begin(&a, ctx, kernel, "axpy");
 *   clmg_arg_ulong(&a, n); clmg_arg_vector(&a, x); ...
 *   status = clmg_args_end(&a); */
/* A reduction launch (lib/core/reduction.c): begin decides the geometry for
 * n items and reserves the partials (before or after the other arguments);
 * finish appends the partials and local scratch arguments, launches, reads
 * the partial sums and adds them on the host into sums[results]. */
typedef struct clmg_reduction {
  size_t global, local, groups;
  unsigned results;
} clmg_reduction;

typedef struct clmg_kernel_args {
  clmg_context *context;
  cl_kernel kernel;
  const char *name;
  cl_uint index;
  cl_uint failed_index;
  cl_int error;
} clmg_kernel_args;

void clmg_args_begin(clmg_kernel_args *args, clmg_context *context, cl_kernel kernel,
                     const char *name);
void clmg_arg_raw(clmg_kernel_args *args, size_t size, const void *value);
void clmg_arg_ulong(clmg_kernel_args *args, uint64_t value);
/* A floating-point scalar in the precision of `type` (double or float). */
void clmg_arg_real(clmg_kernel_args *args, clmg_dtype type, double value);
void clmg_arg_buffer(clmg_kernel_args *args, cl_mem buffer);
void clmg_arg_local(clmg_kernel_args *args, size_t bytes);
clmg_status clmg_args_end(clmg_kernel_args *args);

/* Queues a 1-D NDRange and reports a failure with the kernel name. */
clmg_status clmg_enqueue_1d(clmg_context *context, cl_kernel kernel, const char *kernel_name,
                            size_t global, size_t local, cl_event *event);

/* clmg_get_kernel, then clmg_args_begin on the kernel: the start of every
 * launch that sets its arguments one by one. */
clmg_status clmg_args_for_kernel(clmg_context *context, const char *family, const char *options,
                                 const char *name, clmg_kernel_args *args);

/* Ends the arguments and launches the kernel over n items that it walks
 * with GRID_LOOP (geometry from clmg_launch_1d); nothing is launched for
 * n == 0. */
clmg_status clmg_launch_args(clmg_kernel_args *args, size_t n);

/* Turns a CLBlast status code into clmg's status and message (op: "dot"). */
clmg_status clmg_clblast_status(clmg_context *context, int code, const char *op);

/* 1 when `bytes` more of address space can be mapped now: always without
 * an address-space limit (RLIMIT_AS, ulimit -v), else tested by mapping and
 * unmapping that much (context.c). OpenCL CPU drivers abort rather than fail
 * when they run out, so clmg tests first where it can. */
int clmg_address_space_has_room(size_t bytes);

/* Frees a context's registrations (lib/solver/registry.c). */
void clmg_registry_free(struct clmg_registry *registry);

/* ---- host-only helpers (lib/core/host_errors.c) ---- */

/* Fills error->message (error may be NULL) and returns status. */
clmg_status clmg_error_set(clmg_error *error, clmg_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void clmg_error_clear(clmg_error *error);
/* The length of the valid UTF-8 sequence at text (at most `left` bytes, left
 * > 0), 0 when the bytes there are not one (RFC 3629: no overlong forms, no
 * surrogates, nothing beyond U+10FFFF). */
size_t clmg_utf8_sequence_length(const unsigned char *text, size_t left);
/* Rewrites a message so that it is printable UTF-8: control bytes (but
 * newline and tab, which build logs hold) and bytes that are not valid
 * UTF-8 become \xNN. File contents and paths reach messages verbatim, and
 * an ESC or a byte 0xff would otherwise reach a terminal or a JSON string. */
void clmg_message_sanitize(char *message, size_t size);
/* malloc / calloc of count elements (at least one, so an empty array is a
 * valid pointer); clmg_alloc_array returns NULL when count * size overflows. */
void *clmg_alloc_array(size_t count, size_t size);
void *clmg_alloc_zeroed_array(size_t count, size_t size);

clmg_status clmg_reduction_begin(clmg_context *context, clmg_dtype type, size_t n, unsigned results,
                                 clmg_reduction *r);
clmg_status clmg_reduction_finish(clmg_kernel_args *args, clmg_dtype type, const clmg_reduction *r,
                                  double *sums);
/* For reductions that are not sums: run launches and reads back; partial
 * returns partial `group` of result `result` (valid until the next
 * reduction on the context). */
clmg_status clmg_reduction_run(clmg_kernel_args *args, clmg_dtype type, const clmg_reduction *r);
double clmg_reduction_partial(const clmg_context *context, clmg_dtype type, const clmg_reduction *r,
                              unsigned result, size_t group);

#endif
