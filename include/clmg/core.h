/** @file
 * clmg core: status codes, the context (platform, device, queue), device facts.
 *
 * Conventions for the whole API (docs/c-api.md is the guide):
 *
 * Errors. Every fallible call returns a clmg_status. Calls on device objects
 * record details of a failure in their context: clmg_context_message(). The
 * host-only functions (CSR, Matrix Market, meshes, finite elements) write them
 * to a clmg_error the caller passes. The library never prints, exits or
 * aborts.
 *
 * NULL. Functions named *_destroy and *_free accept NULL (and the all-zero
 * struct). An options pointer may be NULL wherever the header says so and
 * means the defaults (clmg_context_create, clmg_matrix_create, the Krylov
 * solvers, clmg_multigrid_create and its siblings, clmg_homg_create); so may
 * the preconditioner of a Krylov solver (none), the clmg_error of a host
 * function (no message) and the clmg_krylov_result of clmg_cg and
 * clmg_krylov_solve (no report). Other pointer arguments must not be NULL:
 * the calls check their handles and return CLMG_ERROR_INVALID_ARGUMENT for a
 * NULL one.
 *
 * Ownership. What a *_create call makes belongs to the caller, who releases
 * it with the matching *_destroy; on failure the output is NULL (except for
 * clmg_context_create, see there). Objects made from a context must be
 * destroyed before the context; a view (clmg_vector_view) before the vector
 * it looks into; a preconditioner or operator that borrows an object (the
 * header says "borrows") before that object. Functions that "take
 * ownership" destroy what they were given, with themselves or at once on
 * failure. Host arrays passed in stay the caller's: the library copies what
 * it keeps. Arrays the library allocates for the caller (clmg_csr, clmg_mesh,
 * clmg_fe_space, clmg_fe_hierarchy, the history of a result) are released
 * with the matching *_free, or free() where the header says malloc'ed.
 *
 * Outputs are overwritten, not freed: a function filling a clmg_csr,
 * clmg_mesh, clmg_fe_space, clmg_fe_hierarchy, clmg_krylov_result or
 * clmg_homg_result does not free what the struct held. Release the previous
 * contents with the matching *_free before passing it again, or its arrays
 * (a residual history, a matrix) leak.
 *
 * Threads. The library keeps no global mutable state: different contexts,
 * with the objects made from each, may be used from different threads at the
 * same time, and host-only functions may run concurrently on different data.
 * One context and everything made from it (vectors, matrices, operators,
 * preconditioners, hierarchies) share the context's command queue, message
 * buffer, reduction scratch and compiled programs without locks: use them
 * from one thread at a time. Callbacks (operators, smoothers,
 * preconditioners, monitors) run on the calling thread, inside the call. The
 * program-binary cache on disk may be shared by processes: entries are
 * written to a temporary file and renamed into place. */
#ifndef CLMG_CORE_H
#define CLMG_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version the headers are read for (1.2, the version clmg needs),
 * unless the program chose one before including clmg. */
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "clmg/version.h"

/** @def CLMG_API
 * Marks the public API; everything else in the library stays hidden. */
#if defined(CLMG_BUILDING_LIBRARY) && defined(__GNUC__)
#define CLMG_API __attribute__((visibility("default")))
#else
#define CLMG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** What every fallible call returns: CLMG_SUCCESS, or why it failed (the context's
 * message, or the clmg_error of a host function, says more). */
typedef enum clmg_status {
  CLMG_SUCCESS = 0,                /**< the call did what it says */
  CLMG_ERROR_INVALID_ARGUMENT,     /**< NULL handle, bad size, mismatched types */
  CLMG_ERROR_OUT_OF_HOST_MEMORY,   /**< malloc failed */
  CLMG_ERROR_OUT_OF_DEVICE_MEMORY, /**< request larger than the device can hold */
  CLMG_ERROR_NO_DEVICE,            /**< no OpenCL platform or device at all */
  CLMG_ERROR_DEVICE_NOT_FOUND,     /**< the device string matches no device */
  CLMG_ERROR_UNSUPPORTED,          /**< e.g. double precision on a device without fp64 */
  CLMG_ERROR_BUILD_FAILED,         /**< kernel compilation failed; message has the log */
  CLMG_ERROR_OPENCL,               /**< any other OpenCL runtime error */
  CLMG_ERROR_BLAS,                 /**< CLBlast returned an error */
  CLMG_ERROR_IO,                   /**< a file could not be read or written */
  CLMG_ERROR_PARSE,                /**< malformed input file */
  CLMG_ERROR_NOT_CONVERGED,        /**< an iterative method hit its iteration limit */
  CLMG_ERROR_COMMUNICATION         /**< a message between processes failed (clmg_mpi) */
} clmg_status;

/** Element types of device data (vectors, matrix values, index arrays). */
typedef enum clmg_dtype {
  CLMG_DOUBLE = 0, /**< 64-bit floating point (needs a device with fp64) */
  CLMG_FLOAT,      /**< 32-bit floating point */
  CLMG_INT32,      /**< 32-bit signed integers (CSR column indices) */
  CLMG_UINT32,     /**< 32-bit unsigned integers (gather and scatter indices) */
  CLMG_INT64       /**< CSR row offsets on the device */
} clmg_dtype;

/** Bytes of one element of the type; 0 for an unknown type. */
CLMG_API size_t clmg_dtype_size(clmg_dtype type);
/** The type's name: "double", "float", "int32", "uint32" or "int64" ("unknown" for
 * any other value); a static string. */
CLMG_API const char *clmg_dtype_name(clmg_dtype type);

/** Where host-side functions (no context) report what went wrong. */
typedef struct clmg_error {
  char message[1024]; /**< what went wrong, NUL-terminated ("" when nothing did) */
} clmg_error;

/** A short, static, human-readable name for a status code. */
CLMG_API const char *clmg_status_string(clmg_status status);

/** The library version at run time (compare with CLMG_VERSION_STRING). */
CLMG_API const char *clmg_version_string(void);

/** Facts about one OpenCL device. */
typedef struct clmg_device_info {
  unsigned platform_index;    /**< P of the device string "P:D" (as clmg info numbers it) */
  unsigned device_index;      /**< D of "P:D": the device's place in its platform */
  char platform_name[128];    /**< CL_PLATFORM_NAME */
  char platform_version[128]; /**< CL_PLATFORM_VERSION */
  char name[128];             /**< CL_DEVICE_NAME */
  char vendor[128];           /**< CL_DEVICE_VENDOR */
  char driver_version[128];   /**< CL_DRIVER_VERSION */
  char opencl_version[128];   /**< CL_DEVICE_VERSION */
  int is_gpu;                 /**< 1 for a GPU (CL_DEVICE_TYPE_GPU) */
  int is_cpu;                 /**< 1 for a CPU (CL_DEVICE_TYPE_CPU) */
  int has_fp64;               /**< 1 when the device computes in double precision */
  unsigned compute_units;     /**< CL_DEVICE_MAX_COMPUTE_UNITS */
  uint64_t global_mem_bytes;  /**< CL_DEVICE_GLOBAL_MEM_SIZE, in bytes */
  uint64_t max_alloc_bytes;   /**< CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest buffer, in bytes */
  uint64_t local_mem_bytes;   /**< CL_DEVICE_LOCAL_MEM_SIZE, in bytes */
  size_t max_work_group_size; /**< CL_DEVICE_MAX_WORK_GROUP_SIZE */
} clmg_device_info;

/** Lists every device of every platform. *devices is malloc'ed (free() it).
 * On failure *devices is NULL and, if message is not NULL, a description of
 * the problem is written there (at most message_size bytes, NUL-terminated). */
CLMG_API clmg_status clmg_list_devices(clmg_device_info **devices, size_t *count, char *message,
                                       size_t message_size);

/** Which BLAS-1 implementation serves dot/nrm2/axpy/scal/copy. */
typedef enum clmg_blas1_backend {
  CLMG_BLAS1_AUTO = 0, /**< the measured best (see lib/la/blas1.c) */
  CLMG_BLAS1_NATIVE,   /**< clmg's own kernels in cl/blas1.cl */
  CLMG_BLAS1_CLBLAST   /**< CLBlast, where it has the operation */
} clmg_blas1_backend;

/** How clmg_context_create chooses and sets up the device; fill it with
 * clmg_context_options_defaults, then change what you need. */
typedef struct clmg_context_options {
  /** Device string: "nvidia", "pocl", "gpu", "cpu", "P:D" (platform:device
   * index) or a case-insensitive substring of the platform or device name.
   * NULL: the CLMG_DEVICE environment variable, else the first GPU, else the
   * first CPU, else the first device. */
  const char *device;
  /** Directory of the program-binary cache. NULL: $CLMG_CACHE_DIR, else
   * $XDG_CACHE_HOME/clmg, else $HOME/.cache/clmg. */
  const char *cache_dir;
  int disable_binary_cache; /**< nonzero: always compile from source */
  /** Directory holding `<family>.cl` kernel sources to use instead of the ones
   * embedded in the library, family by family: a family without a file
   * there still comes from the library. NULL: $CLMG_KERNEL_DIR, else none. */
  const char *kernel_dir;
  clmg_blas1_backend blas1_backend; /**< who computes BLAS-1 (default CLMG_BLAS1_AUTO) */
  /** The most device memory, in bytes, that this context may hold at once
   * (all its vectors, matrices and solvers together). An allocation past it
   * fails with CLMG_ERROR_OUT_OF_DEVICE_MEMORY and a message with the sizes,
   * before anything is allocated. 0: $CLMG_MEMORY_LIMIT (bytes, or a number
   * with K, M, G or T: powers of 1024, e.g. "512M", "2G"; "0" or empty: no
   * limit; anything else fails clmg_context_create), else no limit beyond
   * the device's own. Useful to keep a run inside a budget, and to test
   * what a program does when memory runs out. */
  uint64_t memory_limit_bytes;
  /** Nonzero: treat the device as one without double precision (has_fp64
   * 0; double vectors, matrices and kernels fail with
   * CLMG_ERROR_UNSUPPORTED; kernel sources that use double anyway fail to
   * build), to check that a program runs on such devices. 0:
   * $CLMG_DISABLE_FP64 ("1" turns fp64 off, "0" or empty leaves it; other
   * values fail clmg_context_create). */
  int disable_fp64;
} clmg_context_options;

/** The defaults: every field zero or NULL (the environment, then the first GPU, decides)
 * and blas1_backend CLMG_BLAS1_AUTO. A NULL options does nothing. */
CLMG_API void clmg_context_options_defaults(clmg_context_options *options);

/** An OpenCL device with its queue, compiled programs and message buffer: what every
 * device object is made from (opaque). */
typedef struct clmg_context clmg_context;

/** Creates a context on the selected device with one in-order, profiling
 * queue. options may be NULL (defaults). Like sqlite3_open, on failure *context
 * may still be set to a context that carries only the error message: read it
 * with clmg_context_message(), then clmg_context_destroy() it. */
CLMG_API clmg_status clmg_context_create(const clmg_context_options *options,
                                         clmg_context **context);
/** Waits for the queue, then releases the context's programs, buffers and queue. Every
 * object made from the context must be destroyed first. NULL does nothing. */
CLMG_API void clmg_context_destroy(clmg_context *context);

/** The message of the most recent failure in this context ("" if none). The
 * pointer stays valid until the next call on the context. */
CLMG_API const char *clmg_context_message(const clmg_context *context);

/** The facts of the context's device, owned by the context; NULL for a NULL context or
 * one that carries only an error message (a failed clmg_context_create). */
CLMG_API const clmg_device_info *clmg_context_device(const clmg_context *context);

/** Bytes currently allocated on the device through this context (in live buffers, as asked
 * for; not counting clmg_context_cached_bytes). */
CLMG_API uint64_t clmg_context_device_bytes(const clmg_context *context);

/** Bytes of freed device buffers the context keeps for reuse. On GPUs (the device table's
 * buffer_cache, which CLMG_DEVICE_PARAMS=buffer_cache=0 turns off) a freed buffer waits for the
 * next allocation of its size class instead of being released: releasing waits for the queue
 * there. The cache holds at most a quarter of the device's memory (or of the memory limit),
 * is emptied before a new allocation that would not fit beside it, and is released with the
 * context. */
CLMG_API uint64_t clmg_context_cached_bytes(const clmg_context *context);

/** Releases the freed buffers the context keeps for reuse (clmg_context_cached_bytes), e.g.
 * to hand their memory to another context or process. NULL is ignored. */
CLMG_API void clmg_context_trim(clmg_context *context);

/** Turns the reuse of freed device buffers (clmg_context_cached_bytes) on (keep != 0) or off
 * (0: the kept buffers are released, and every later free releases), whatever the device
 * table chose. Off for a context whose buffers a second command queue also uses unordered
 * against the context's own (clmg_mpi_create turns it off for its transfer queue). NULL is
 * ignored. */
CLMG_API void clmg_context_set_buffer_cache(clmg_context *context, int keep);

/** The context's memory limit in bytes (memory_limit_bytes or
 * $CLMG_MEMORY_LIMIT), 0 for none. */
CLMG_API uint64_t clmg_context_memory_limit(const clmg_context *context);

/** Checks, before anything is allocated, that a run fits: device_bytes more
 * of device memory, the largest single allocation among them
 * largest_allocation, and host_bytes of host memory besides. The device
 * side is checked against the device's largest allocation, its memory less
 * what this context holds, and the memory limit; the host side against the
 * memory the host can still give this process: on Linux MemAvailable, the
 * memory cgroup's limit and RLIMIT_AS / RLIMIT_DATA. On a CPU device (or
 * one that shares host memory) the device bytes are host memory too.
 * `what` names the run in the message (e.g. "an n = 8193 grid"). Returns
 * CLMG_ERROR_OUT_OF_DEVICE_MEMORY or CLMG_ERROR_OUT_OF_HOST_MEMORY with a
 * message that gives what is needed and what is available, in bytes. Every
 * allocation makes the same checks (the host one for allocations of 16 MiB
 * and more), so this is only needed to fail before long host work. */
CLMG_API clmg_status clmg_context_check_memory(clmg_context *context, uint64_t device_bytes,
                                               uint64_t largest_allocation, uint64_t host_bytes,
                                               const char *what);

/** CLMG_SUCCESS when the device computes in `type` (float always; double
 * only with fp64), else CLMG_ERROR_UNSUPPORTED with a message that says so. */
CLMG_API clmg_status clmg_context_check_precision(clmg_context *context, clmg_dtype type);

/** Parses a byte count: a whole number of bytes, or a number (fractions
 * allowed) with a suffix K, M, G or T (powers of 1024; "KiB", "MB", "m"
 * mean the same), e.g. "1000000", "512M", "1.5G". CLMG_ERROR_INVALID_ARGUMENT
 * for anything else (negative, empty, trailing text, over 2^64 - 1). */
CLMG_API clmg_status clmg_parse_memory_size(const char *text, uint64_t *bytes);

/** Seconds the context has spent making programs: compiling kernels from
 * source and loading them from the binary cache. A setup's time without
 * compilation is its wall time less the growth of this. */
CLMG_API double clmg_context_program_seconds(const clmg_context *context);

/** Program-manager counters: programs compiled from source and programs loaded
 * from the binary cache during this context's life. */
CLMG_API void clmg_context_program_counts(const clmg_context *context, unsigned *built_from_source,
                                          unsigned *loaded_from_cache);

/** What the program manager reports while it compiles kernels from source:
 * a first run (or a run after a driver or library update) compiles for
 * seconds, later runs load the binaries from the cache and report nothing. */
typedef enum clmg_program_event_kind {
  CLMG_PROGRAM_COMPILE_START = 0, /**< about to compile one program from source */
  CLMG_PROGRAM_COMPILE_DONE       /**< that compilation finished (or failed: see status) */
} clmg_program_event_kind;

/** One report of the program manager to a clmg_program_callback. */
typedef struct clmg_program_event {
  clmg_program_event_kind kind; /**< a compilation starts or is done */
  const char *program;          /**< the kernel family, e.g. "blas1" (cl/blas1.cl) */
  const char *options;          /**< its build options */
  const char *device;           /**< the device's name */
  const char *cache_dir;        /**< where the binary is cached; NULL: the cache is off */
  /** cache_dir NULL: why, where a directory was named but cannot be used
   * ("/dev/null is not a directory"); NULL when the cache was turned off */
  const char *cache_off_reason;
  double seconds;     /**< DONE: wall-clock seconds of the compilation; START: 0 */
  clmg_status status; /**< DONE: CLMG_SUCCESS or why it failed; START: CLMG_SUCCESS */
} clmg_program_event;

/** Called on the thread that made the library call which needs the program.
 * The event and its strings are valid during the call only. The callback
 * must not call into the same context. */
typedef void (*clmg_program_callback)(const clmg_program_event *event, void *data);

/** Installs (callback NULL: removes) the context's program callback; `data` is
 * passed to every call. Events fire only for programs compiled from source,
 * never for programs loaded from the binary cache. */
CLMG_API clmg_status clmg_context_set_program_callback(clmg_context *context,
                                                       clmg_program_callback callback, void *data);

/** The directory of the program-binary cache this context uses, or NULL when
 * the cache is disabled. */
CLMG_API const char *clmg_context_cache_dir(const clmg_context *context);

/** How a reducer combines the processes' values. */
typedef enum clmg_reduce_op {
  CLMG_REDUCE_SUM = 0, /**< the sum over all processes */
  CLMG_REDUCE_MAX      /**< the maximum over all processes */
} clmg_reduce_op;

/** Reductions across processes. A context whose vectors are the local parts of distributed vectors
 * (one process per part, e.g. one MPI rank each) combines every host scalar that BLAS-1 computes
 * (dot products, norms, the Krylov methods' fused reductions) across the processes through a
 * reducer, so that the Krylov methods and the multigrid engine run unchanged on distributed
 * operators. Every process must then make the same sequence of such calls, a process with no local
 * elements included (it contributes zeros). clmg_mpi (clmg/mpi.h) installs an MPI reducer; any
 * other transport fits the same way. Each reduction carries one value more than
 * its caller's: the number of processes with a failure held back since the last one (a step that
 * failed on one process only: that process carried on through the communication the others
 * expect); when it is nonzero, the solve ends on every process with the failure of the lowest
 * failing one (agree). */
typedef struct clmg_reducer {
  void *data; /**< passed to reduce; must outlive the reducer's use */
  /** Replaces values[0..count) by their sums (or maxima) over all processes,
   * in place. A failure returns a status and, where it can, a message in
   * the context (clmg_context_fail). */
  clmg_status (*reduce)(void *data, clmg_reduce_op op, double *values, int count);
  /** Optional (NULL: each process keeps its own message). Collective: every
   * process passes its status (CLMG_SUCCESS where it did not fail) with its
   * message in the context; every process returns the status of the lowest
   * failing process, whose message becomes every process's context message
   * (clmg_mpi_agree's "rank R: ..."). A process that failed only because
   * another did passes CLMG_ERROR_COMMUNICATION with the message
   * CLMG_ANOTHER_PROCESS_FAILED, and speaks only when no process has more
   * to say. A failure inside a distributed solve reaches every process
   * through it. */
  clmg_status (*agree)(void *data, clmg_status status);
} clmg_reducer;

/** x[i] = entry first + i of a fixed pseudo-random sequence from seed, in
 * [low, high) (a 64-bit LCG, 53 bits per value), the same on every machine
 * and for any split of the entries (a process fills its rows with first =
 * its first row): the start vectors of the library's power iterations and
 * other probes that must not depend on the run or the number of processes. */
CLMG_API void clmg_fill_pseudo_random(double *x, size_t n, uint64_t seed, uint64_t first,
                                      double low, double high);

/** The message (CLMG_ERROR_COMMUNICATION) of a process that stopped a
 * distributed setup because another process failed there; that process
 * has the reason (clmg_mpi_agree passes it to all). */
#define CLMG_ANOTHER_PROCESS_FAILED "another process failed"

/** Installs a copy of *reducer (NULL or reduce == NULL: back to local
 * reductions). The reducer's data must outlive its use. */
CLMG_API clmg_status clmg_context_set_reducer(clmg_context *context, const clmg_reducer *reducer);
/** 1 when a reducer is installed. */
CLMG_API int clmg_context_is_distributed(const clmg_context *context);

/** Records a message for clmg_context_message() and returns status: for the
 * interfaces a caller implements (operators, smoothers, preconditioners,
 * reducers), whose failures then read like the library's own. */
CLMG_API clmg_status clmg_context_fail(clmg_context *context, clmg_status status,
                                       const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Waits until every command queued in this context has finished. */
CLMG_API clmg_status clmg_finish(clmg_context *context);

/** One line of a kernel profile. Device time per kernel, as the device's own clock measures it
 * (OpenCL profiling events): start clears and starts a profile; until stop, every kernel clmg
 * launches on the context is timed and summed by kernel name and work size (so the levels of a
 * hierarchy show apart). It costs one event per launch (and waits for old launches every few
 * thousand), so time the profiled run separately from the measured one.
 * stop waits for the queue and returns the totals, sorted by time (largest
 * first), in *times (one malloc'ed block, names included: free(*times))
 * and their number in *count. */
typedef struct clmg_kernel_time {
  const char *name;    /**< the kernel's name (a CLBlast call: its routine) */
  uint64_t work_items; /**< the launch's global size (a CLBlast call: its length) */
  uint64_t launches;   /**< how many launches of that name and size were timed */
  double seconds;      /**< their device time together, in seconds */
} clmg_kernel_time;

/** Starts a kernel profile on the context (clmg_kernel_time says what it measures),
 * dropping one that was running. CLMG_ERROR_OUT_OF_HOST_MEMORY when its buffers cannot
 * be allocated. */
CLMG_API clmg_status clmg_profile_start(clmg_context *context);
/** Ends the profile: waits for the queue and returns the totals in *times (sorted by
 * time, largest first; one malloc'ed block with the names, free(*times)) and their number
 * in *count (NULL and 0 when no kernel ran). CLMG_ERROR_INVALID_ARGUMENT when no profile
 * is running. */
CLMG_API clmg_status clmg_profile_stop(clmg_context *context, clmg_kernel_time **times,
                                       size_t *count);

/** What latency costs: the device commands clmg enqueued on the context since it was made
 * (kernel launches, CLBlast calls -- a dot or nrm2 runs two kernels but counts once --,
 * fills, copies and transfers) and the times the host waited for the queue (blocking
 * transfers such as a reduction's result, clmg_finish). Read it before and after a cycle
 * or a solve and subtract: the launches and host synchronisations per cycle or per
 * iteration, which rule small problems on a GPU (a launch costs several microseconds). */
typedef struct clmg_counters {
  uint64_t commands;   /**< device commands enqueued */
  uint64_t host_waits; /**< host synchronisations with the queue */
} clmg_counters;

/** Fills *counters with the context's counts (clmg_counters); zeroes for a NULL context. */
CLMG_API void clmg_context_counters(const clmg_context *context, clmg_counters *counters);

/** The context's raw OpenCL context, for interoperation with other OpenCL code. The
 * clmg context keeps ownership (do not release it); NULL for a NULL context. */
CLMG_API cl_context clmg_context_cl_context(const clmg_context *context);
/** The context's in-order, profiling command queue, on which clmg queues all its work;
 * the context keeps ownership. NULL for a NULL context. */
CLMG_API cl_command_queue clmg_context_cl_queue(const clmg_context *context);
/** The context's OpenCL device; the context keeps ownership. NULL for a NULL context. */
CLMG_API cl_device_id clmg_context_cl_device(const clmg_context *context);

/** Measures the device's copy bandwidth with a plain copy kernel on a buffer of
 * `bytes` bytes (0: a size chosen from the device's memory), best of a few
 * repetitions. Read and written bytes are both counted, so the value is
 * comparable to the bytes a kernel moves. */
CLMG_API clmg_status clmg_measure_copy_bandwidth(clmg_context *context, size_t bytes,
                                                 double *gb_per_s);
/** The buffer size clmg_measure_copy_bandwidth uses when given 0 bytes (0 for
 * a NULL context). */
CLMG_API size_t clmg_copy_bandwidth_default_bytes(const clmg_context *context);

#ifdef __cplusplus
}
#endif

#endif
