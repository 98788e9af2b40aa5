/* BLAS-1 and fused vector updates on double and float vectors.
 *
 * Backend choice. clmg's kernels (cl/blas1.cl) do every operation; CLBlast
 * can do copy, scal, axpy, dot and nrm2. CLBlast's dot and nrm2 run two
 * kernels and write the result to a device buffer that must then be read,
 * and CLBlast has none of the fused forms. perf/blas1 measures both; the
 * CLMG_BLAS1_AUTO choice (use_clblast) follows those measurements. */
#include "la/internal.h"

#include <clblast_c.h>
#include <float.h>
#include <math.h>
#include <string.h>

typedef enum blas1_op { OP_COPY, OP_SCAL, OP_AXPY, OP_DOT, OP_NRM2 } blas1_op;

static int use_clblast(const clmg_context *context, blas1_op op) {
  switch (context->blas1_backend) {
  case CLMG_BLAS1_NATIVE:
    return 0;
  case CLMG_BLAS1_CLBLAST:
    return 1;
  case CLMG_BLAS1_AUTO:
    break;
  }
  /* Measured with perf/blas1 at n = 1e7 and 1e8 (docs/performance.md): on the
   * H100 both are within 5% for copy/scal/axpy and clmg's dot and nrm2 are
   * up to 20% faster (one launch, no result buffer); on pocl CLBlast's dot
   * and nrm2 are 8-10x slower, but its vectorised axpy is 25-35% faster than
   * clmg's per-work-item chunks: the device table's clblast_axpy. */
  return op == OP_AXPY && context->params.clblast_axpy;
}

/* Checks that every vector exists, is double or float, and that all share
 * context, type and length. */
static clmg_status check_vectors(const char *op, unsigned count, const clmg_vector *const *v) {
  for (unsigned i = 0; i < count; ++i)
    if (!v[i]) {
      /* report in the context of any vector that exists */
      for (unsigned j = 0; j < count; ++j)
        if (v[j])
          return clmg_fail(v[j]->context, CLMG_ERROR_INVALID_ARGUMENT,
                           "%s: vector argument %u is NULL", op, i + 1);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
  clmg_context *context = v[0]->context;
  clmg_clear_message(context);
  if (v[0]->type != CLMG_DOUBLE && v[0]->type != CLMG_FLOAT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s needs double or float vectors, not %s", op, clmg_dtype_name(v[0]->type));
  for (unsigned i = 1; i < count; ++i) {
    if (v[i]->context != context)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s: vectors belong to different contexts", op);
    if (v[i]->type != v[0]->type)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s: vector types differ (%s and %s)",
                       op, clmg_dtype_name(v[0]->type), clmg_dtype_name(v[i]->type));
    if (v[i]->length != v[0]->length)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s: vector lengths differ (%zu and %zu)", op, v[0]->length, v[i]->length);
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_clblast_status(clmg_context *context, int code, const char *op) {
  if (code == CLBlastSuccess)
    return CLMG_SUCCESS;
  if (code == CLBlastTempBufferAllocFailure)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                     "CLBlast %s could not allocate a temporary buffer", op);
  return clmg_fail(context, CLMG_ERROR_BLAS, "CLBlast %s failed with status %d", op, (int)code);
}

/* Reads CLBlast's one-element result back to the host. */
static clmg_status clblast_read_scalar(clmg_context *context, clmg_dtype type, double *result) {
  cl_double d = 0;
  cl_float f = 0;
  clmg_count_command(context, 1);
  cl_int error = clEnqueueReadBuffer(context->queue, context->clblast_scalar, CL_TRUE, 0,
                                     type == CLMG_FLOAT ? sizeof f : sizeof d,
                                     type == CLMG_FLOAT ? (void *)&f : (void *)&d, 0, NULL, NULL);
  if (error != CL_SUCCESS)
    return clmg_fail_cl(context, error, "reading the CLBlast result");
  *result = type == CLMG_FLOAT ? f : d;
  return CLMG_SUCCESS;
}

static clmg_status clblast_reserve_scalar(clmg_context *context) {
  if (context->clblast_scalar)
    return CLMG_SUCCESS;
  cl_int error;
  context->clblast_scalar =
      clCreateBuffer(context->cl, CL_MEM_READ_WRITE, sizeof(cl_double), NULL, &error);
  return context->clblast_scalar ? CLMG_SUCCESS
                                 : clmg_fail_cl(context, error, "CLBlast result buffer");
}

/* Prepares a kernel of cl/blas1.cl for vectors of `type`. */
/* The kernels of cl/blas1.cl, looked up once per context and precision
 * (context->blas1_kernels) so that a call costs no table search: BLAS-1 runs
 * on every level of a multigrid cycle, where the coarse ones are tiny. */
typedef enum blas1_kernel_id {
  K_COPY_VECTOR,
  K_SCALE_VECTOR,
  K_AXPY,
  K_AXPBY,
  K_WAXPBY,
  K_POINTWISE_MULTIPLY,
  K_DOT_PARTIALS,
  K_SUMSQ_PARTIALS,
  K_DOT2_PARTIALS,
  K_AXPY_SUMSQ_PARTIALS,
  K_CG_UPDATE_PARTIALS,
  K_DOT3_PARTIALS,
  K_CG_STEP,
  K_DOUBLE_TO_FLOAT, /* in the double program only */
  K_FLOAT_TO_DOUBLE,
  K_MULTI_DOT_PARTIALS,
  K_MULTI_AXPY,
  K_SCALED_SUMSQ_PARTIALS,
  K_QUOTIENT,
  K_GATHER,
  K_SCATTER_ADD,
  K_PARTIALS_TO_SUMS,
  K_SCALE_INVERSE_SQRT,
  K_PARTIALS_IN_ORDER,
  BLAS1_KERNEL_COUNT
} blas1_kernel_id;

static const char *const blas1_kernel_names[] = {"copy_vector",
                                                 "scale_vector",
                                                 "axpy",
                                                 "axpby",
                                                 "waxpby",
                                                 "pointwise_multiply",
                                                 "dot_partials",
                                                 "sumsq_partials",
                                                 "dot2_partials",
                                                 "axpy_sumsq_partials",
                                                 "cg_update_partials",
                                                 "dot3_partials",
                                                 "cg_step",
                                                 "double_to_float",
                                                 "float_to_double",
                                                 "multi_dot_partials",
                                                 "multi_axpy",
                                                 "scaled_sumsq_partials",
                                                 "quotient",
                                                 "gather",
                                                 "scatter_add",
                                                 "partials_to_sums",
                                                 "scale_inverse_sqrt",
                                                 "partials_in_order"};

/* Prepares a kernel of cl/blas1.cl for vectors of `type`. */
static clmg_status blas1_kernel(clmg_context *context, clmg_dtype type, blas1_kernel_id id,
                                clmg_kernel_args *args) {
  _Static_assert(BLAS1_KERNEL_COUNT <= CLMG_BLAS1_KERNEL_SLOTS, "too few BLAS-1 kernel slots");
  _Static_assert(sizeof blas1_kernel_names / sizeof blas1_kernel_names[0] == BLAS1_KERNEL_COUNT,
                 "one name per BLAS-1 kernel");
  cl_kernel *slot = &context->blas1_kernels[type == CLMG_FLOAT ? 1 : 0][id];
  if (!*slot) {
    clmg_status status = clmg_get_kernel(context, "blas1", clmg_real_options(context, type),
                                         blas1_kernel_names[id], slot);
    if (status != CLMG_SUCCESS) {
      *slot = NULL;
      return status;
    }
  }
  clmg_args_begin(args, context, *slot, blas1_kernel_names[id]);
  return CLMG_SUCCESS;
}

static clmg_status launch_streaming(clmg_kernel_args *args, size_t n) {
  clmg_status status = clmg_args_end(args);
  if (status != CLMG_SUCCESS)
    return status;
  size_t global, local;
  clmg_launch_1d(args->context, n, 0, &global, &local);
  return clmg_enqueue_1d(args->context, args->kernel, args->name, global, local, NULL);
}

clmg_status clmg_copy(const clmg_vector *src, clmg_vector *dst) {
  const clmg_vector *v[] = {src, dst};
  clmg_status status = check_vectors("copy", 2, v);
  if (status != CLMG_SUCCESS || src->length == 0)
    return status;
  clmg_context *context = src->context;
  size_t n = src->length;
  if (use_clblast(context, OP_COPY)) {
    cl_event *profiled = clmg_profile_event_slot(context, "clblast_copy", n);
    CLBlastStatusCode code = src->type == CLMG_FLOAT
                                 ? CLBlastScopy(n, src->buffer, src->offset, 1, dst->buffer,
                                                dst->offset, 1, &context->queue, profiled)
                                 : CLBlastDcopy(n, src->buffer, src->offset, 1, dst->buffer,
                                                dst->offset, 1, &context->queue, profiled);
    clmg_launch_commit(context, profiled, code == CLBlastSuccess);
    return clmg_clblast_status(context, code, "copy");
  }
  clmg_kernel_args args;
  status = blas1_kernel(context, src->type, K_COPY_VECTOR, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, n);
  clmg_arg_vector(&args, src);
  clmg_arg_vector(&args, dst);
  return launch_streaming(&args, n);
}

clmg_status clmg_scal(double alpha, clmg_vector *x) {
  const clmg_vector *v[] = {x};
  clmg_status status = check_vectors("scal", 1, v);
  if (status != CLMG_SUCCESS || x->length == 0)
    return status;
  clmg_context *context = x->context;
  size_t n = x->length;
  if (use_clblast(context, OP_SCAL)) {
    cl_event *profiled = clmg_profile_event_slot(context, "clblast_scal", n);
    CLBlastStatusCode code =
        x->type == CLMG_FLOAT
            ? CLBlastSscal(n, (float)alpha, x->buffer, x->offset, 1, &context->queue, profiled)
            : CLBlastDscal(n, alpha, x->buffer, x->offset, 1, &context->queue, profiled);
    clmg_launch_commit(context, profiled, code == CLBlastSuccess);
    return clmg_clblast_status(context, code, "scal");
  }
  clmg_kernel_args args;
  status = blas1_kernel(context, x->type, K_SCALE_VECTOR, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, n);
  clmg_arg_real(&args, x->type, alpha);
  clmg_arg_vector(&args, x);
  return launch_streaming(&args, n);
}

clmg_status clmg_axpy(double alpha, const clmg_vector *x, clmg_vector *y) {
  const clmg_vector *v[] = {x, y};
  clmg_status status = check_vectors("axpy", 2, v);
  if (status != CLMG_SUCCESS || x->length == 0)
    return status;
  clmg_context *context = x->context;
  size_t n = x->length;
  if (use_clblast(context, OP_AXPY)) {
    cl_event *profiled = clmg_profile_event_slot(context, "clblast_axpy", n);
    CLBlastStatusCode code = x->type == CLMG_FLOAT
                                 ? CLBlastSaxpy(n, (float)alpha, x->buffer, x->offset, 1, y->buffer,
                                                y->offset, 1, &context->queue, profiled)
                                 : CLBlastDaxpy(n, alpha, x->buffer, x->offset, 1, y->buffer,
                                                y->offset, 1, &context->queue, profiled);
    clmg_launch_commit(context, profiled, code == CLBlastSuccess);
    return clmg_clblast_status(context, code, "axpy");
  }
  clmg_kernel_args args;
  status = blas1_kernel(context, x->type, K_AXPY, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, n);
  clmg_arg_real(&args, x->type, alpha);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, y);
  return launch_streaming(&args, n);
}

clmg_status clmg_axpby(double alpha, const clmg_vector *x, double beta, clmg_vector *y) {
  const clmg_vector *v[] = {x, y};
  clmg_status status = check_vectors("axpby", 2, v);
  if (status != CLMG_SUCCESS || x->length == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(x->context, x->type, K_AXPBY, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, x->length);
  clmg_arg_real(&args, x->type, alpha);
  clmg_arg_vector(&args, x);
  clmg_arg_real(&args, x->type, beta);
  clmg_arg_vector(&args, y);
  return launch_streaming(&args, x->length);
}

clmg_status clmg_waxpby(double alpha, const clmg_vector *x, double beta, const clmg_vector *y,
                        clmg_vector *w) {
  const clmg_vector *v[] = {x, y, w};
  clmg_status status = check_vectors("waxpby", 3, v);
  if (status != CLMG_SUCCESS || x->length == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(x->context, x->type, K_WAXPBY, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, x->length);
  clmg_arg_real(&args, x->type, alpha);
  clmg_arg_vector(&args, x);
  clmg_arg_real(&args, x->type, beta);
  clmg_arg_vector(&args, y);
  clmg_arg_vector(&args, w);
  return launch_streaming(&args, x->length);
}

clmg_status clmg_vector_convert(const clmg_vector *src, clmg_vector *dst) {
  if (!src || !dst)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (src->type == dst->type)
    return clmg_copy(src, dst);
  clmg_context *context = src->context;
  clmg_clear_message(context);
  int to_float = src->type == CLMG_DOUBLE && dst->type == CLMG_FLOAT;
  if (!(to_float || (src->type == CLMG_FLOAT && dst->type == CLMG_DOUBLE)) ||
      dst->context != context || src->length != dst->length)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "convert: %zu %s elements to %zu %s elements; the lengths must match, the "
                     "types be double and float, and the context the same",
                     src->length, clmg_dtype_name(src->type), dst->length,
                     clmg_dtype_name(dst->type));
  if (src->length == 0)
    return CLMG_SUCCESS;
  clmg_kernel_args args;
  clmg_status status =
      blas1_kernel(context, CLMG_DOUBLE, to_float ? K_DOUBLE_TO_FLOAT : K_FLOAT_TO_DOUBLE, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, src->length);
  clmg_arg_vector(&args, src);
  clmg_arg_vector(&args, dst);
  return launch_streaming(&args, src->length);
}

clmg_status clmg_pointwise_multiply(const clmg_vector *a, const clmg_vector *b, clmg_vector *z) {
  const clmg_vector *v[] = {a, b, z};
  clmg_status status = check_vectors("pointwise_multiply", 3, v);
  if (status != CLMG_SUCCESS || a->length == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(a->context, a->type, K_POINTWISE_MULTIPLY, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, a->length);
  clmg_arg_vector(&args, a);
  clmg_arg_vector(&args, b);
  clmg_arg_vector(&args, z);
  return launch_streaming(&args, a->length);
}

/* The checks of gather and scatter_add: `dense` (the one indexed) and
 * `packed` (length(index) entries) of one floating type, index uint32. */
static clmg_status check_indexed(const char *op, const clmg_vector *dense, const clmg_vector *index,
                                 const clmg_vector *packed) {
  const clmg_vector *v[] = {dense};
  clmg_status status = check_vectors(op, 1, v);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_context *context = dense->context;
  if (!packed || packed->context != context || packed->type != dense->type)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the vectors must be %s vectors of "
                     "one context",
                     op, clmg_dtype_name(dense->type));
  if (!index || index->type != CLMG_UINT32 || index->context != context ||
      index->length != packed->length)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the index must be a uint32 vector of %zu entries in the same context", op,
                     packed->length);
  return CLMG_SUCCESS;
}

clmg_status clmg_gather(const clmg_vector *x, const clmg_vector *index, clmg_vector *y) {
  clmg_status status = check_indexed("gather", x, index, y);
  if (status != CLMG_SUCCESS || y->length == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(x->context, x->type, K_GATHER, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, y->length);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, index);
  clmg_arg_vector(&args, y);
  return launch_streaming(&args, y->length);
}

clmg_status clmg_scatter_add(double alpha, const clmg_vector *x, const clmg_vector *index,
                             clmg_vector *y) {
  clmg_status status = check_indexed("scatter_add", y, index, x);
  if (status != CLMG_SUCCESS || x->length == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(y->context, y->type, K_SCATTER_ADD, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, x->length);
  clmg_arg_real(&args, x->type, alpha);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, index);
  clmg_arg_vector(&args, y);
  return launch_streaming(&args, x->length);
}

clmg_status clmg_quotient(double alpha, const clmg_vector *a, const clmg_vector *d, clmg_vector *z,
                          size_t *first_zero) {
  *first_zero = SIZE_MAX;
  const clmg_vector *v[] = {d, z, a};
  clmg_status status = check_vectors("quotient", a ? 3 : 2, v);
  if (status != CLMG_SUCCESS || d->length == 0)
    return status;
  if (d->length > UINT32_MAX)
    return clmg_fail(d->context, CLMG_ERROR_UNSUPPORTED,
                     "quotient: %zu elements (the zero search indexes up to 2^32)", d->length);
  clmg_vector *flag = NULL;
  status = clmg_vector_create(d->context, CLMG_UINT32, 1, &flag);
  cl_uint found = UINT32_MAX, has_a = a != NULL;
  if (status == CLMG_SUCCESS) /* enqueued: the search's one wait is its result */
    status = clmg_vector_fill(flag, (double)UINT32_MAX);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(d->context, d->type, K_QUOTIENT, &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, d->length);
    clmg_arg_real(&args, d->type, alpha);
    clmg_arg_vector(&args, a ? a : d); /* without a: never read */
    clmg_arg_raw(&args, sizeof has_a, &has_a);
    clmg_arg_vector(&args, d);
    clmg_arg_vector(&args, z);
    clmg_arg_buffer(&args, flag->buffer);
    status = launch_streaming(&args, d->length);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(flag, &found);
  if (status == CLMG_SUCCESS && found != UINT32_MAX)
    *first_zero = found;
  clmg_vector_destroy(flag);
  return status;
}

/* dot (y != NULL) or sum of squares (y == NULL) through CLBlast. */
static clmg_status clblast_dot_or_nrm2(const clmg_vector *x, const clmg_vector *y, double *result) {
  clmg_context *context = x->context;
  clmg_status status = clblast_reserve_scalar(context);
  if (status != CLMG_SUCCESS)
    return status;
  CLBlastStatusCode code;
  cl_mem out = context->clblast_scalar;
  cl_command_queue *queue = &context->queue;
  size_t n = x->length;
  /* CLBlast's reductions end with a second kernel: the event times that one */
  cl_event *profiled = clmg_profile_event_slot(
      context, y ? "clblast_dot (last kernel)" : "clblast_nrm2 (last kernel)", n);
  if (y)
    code = x->type == CLMG_FLOAT ? CLBlastSdot(n, out, 0, x->buffer, x->offset, 1, y->buffer,
                                               y->offset, 1, queue, profiled)
                                 : CLBlastDdot(n, out, 0, x->buffer, x->offset, 1, y->buffer,
                                               y->offset, 1, queue, profiled);
  else
    code = x->type == CLMG_FLOAT
               ? CLBlastSnrm2(n, out, 0, x->buffer, x->offset, 1, queue, profiled)
               : CLBlastDnrm2(n, out, 0, x->buffer, x->offset, 1, queue, profiled);
  clmg_launch_commit(context, profiled, code == CLBlastSuccess);
  status = clmg_clblast_status(context, code, y ? "dot" : "nrm2");
  if (status == CLMG_SUCCESS)
    status = clblast_read_scalar(context, x->type, result);
  return status;
}

/* The partial sums of a reduction launch added up, then combined across
 * processes when the context is distributed (clmg_context_set_reducer). */
static clmg_status held_sums(clmg_context *context, clmg_status status, double *sums, int count);

static clmg_status finish_sums(clmg_kernel_args *args, clmg_dtype type, const clmg_reduction *r,
                               double *sums) {
  clmg_status status = clmg_reduction_finish(args, type, r, sums);
  return status == CLMG_SUCCESS
             ? clmg_context_reduce(args->context, CLMG_REDUCE_SUM, sums, (int)r->results)
             : held_sums(args->context, status, sums, (int)r->results);
}

/* The sums of an operation on empty local parts: zeros, combined with the
 * other processes' sums when the context is distributed. */
static clmg_status empty_sums(clmg_context *context, double *sums, int count) {
  for (int k = 0; k < count; ++k)
    sums[k] = 0;
  return clmg_context_reduce(context, CLMG_REDUCE_SUM, sums, count);
}

/* A local part that failed: locally the failure; distributed, it is held
 * back (clmg_hold) and the process adds zeros to the others' sums, so that
 * none waits for it, and the reduction ends the solve on every process. */
static clmg_status held_sums(clmg_context *context, clmg_status status, double *sums, int count) {
  status = clmg_context_hold(context, status);
  return status == CLMG_SUCCESS ? empty_sums(context, sums, count) : status;
}

clmg_status clmg_dot(const clmg_vector *x, const clmg_vector *y, double *result) {
  const clmg_vector *v[] = {x, y};
  clmg_status status = check_vectors("dot", 2, v);
  if (status != CLMG_SUCCESS)
    return status;
  if (!result)
    return clmg_fail(x->context, CLMG_ERROR_INVALID_ARGUMENT, "dot: NULL result pointer");
  *result = 0;
  clmg_context *context = x->context;
  if (x->length > 0 && use_clblast(context, OP_DOT)) {
    status = clblast_dot_or_nrm2(x, y, result);
  } else if (x->length > 0) {
    clmg_reduction r;
    clmg_kernel_args args;
    status = clmg_reduction_begin(context, x->type, x->length, 1, &r);
    if (status == CLMG_SUCCESS)
      status = blas1_kernel(context, x->type, K_DOT_PARTIALS, &args);
    if (status != CLMG_SUCCESS) /* the scratch or the kernel: held as the sums' failures are */
      return held_sums(context, status, result, 1);
    clmg_arg_ulong(&args, x->length);
    clmg_arg_vector(&args, x);
    clmg_arg_vector(&args, y);
    return finish_sums(&args, x->type, &r, result);
  }
  return status == CLMG_SUCCESS ? clmg_context_reduce(context, CLMG_REDUCE_SUM, result, 1)
                                : held_sums(context, status, result, 1);
}

/* ||x|| from its sum of squares, or, when that sum lost its range, again
 * with every element divided by its work-group's largest magnitude: a
 * right-hand side of 1e-200 (squares 1e-400) or 1e+300 (1e+600) then has a
 * norm that is neither 0 nor Inf. The sum is trusted when it is at least
 * the smallest normal number over the unit roundoff (squares that underflow
 * then change it by less than rounding) and finite. */
static clmg_status finish_nrm2(const clmg_vector *x, double sum_of_squares, double *norm) {
  const int is_float = x->type == CLMG_FLOAT;
  const double smallest_trusted = is_float ? FLT_MIN / FLT_EPSILON : DBL_MIN / DBL_EPSILON;
  const double largest_trusted = is_float ? FLT_MAX : DBL_MAX;
  if (isnan(sum_of_squares) ||
      (sum_of_squares >= smallest_trusted && sum_of_squares <= largest_trusted)) {
    *norm = sqrt(sum_of_squares);
    return CLMG_SUCCESS;
  }
  /* Across processes (clmg_context_set_reducer) every one takes this path
   * together, since the sum tested above is the global one; a process
   * without elements contributes zeros. */
  clmg_context *context = x->context;
  clmg_reduction r = {0, 0, 0, 2};
  clmg_status status = CLMG_SUCCESS;
  if (x->length > 0) {
    clmg_kernel_args args;
    status = clmg_reduction_begin(context, x->type, x->length, 2, &r);
    if (status == CLMG_SUCCESS)
      status = blas1_kernel(context, x->type, K_SCALED_SUMSQ_PARTIALS, &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, x->length);
      clmg_arg_vector(&args, x);
      status = clmg_reduction_run(&args, x->type, &r);
    }
    if (status != CLMG_SUCCESS) { /* held back: no partials; zeros go to the others */
      r.groups = 0;
      status = clmg_context_hold(context, status);
      if (status != CLMG_SUCCESS)
        return status;
    }
  }
  double largest = 0;
  for (size_t g = 0; g < r.groups; ++g)
    largest = fmax(largest, clmg_reduction_partial(context, x->type, &r, 0, g));
  status = clmg_context_reduce(context, CLMG_REDUCE_MAX, &largest, 1);
  if (status != CLMG_SUCCESS)
    return status;
  if (!(largest > 0) || isinf(largest)) {
    *norm = largest; /* 0 for a zero vector, Inf when x holds Inf */
    return CLMG_SUCCESS;
  }
  double sum = 0;
  for (size_t g = 0; g < r.groups; ++g) {
    double group_largest = clmg_reduction_partial(context, x->type, &r, 0, g);
    double ratio = group_largest / largest;
    sum += clmg_reduction_partial(context, x->type, &r, 1, g) * ratio * ratio;
  }
  status = clmg_context_reduce(context, CLMG_REDUCE_SUM, &sum, 1);
  *norm = largest * sqrt(sum);
  return status;
}

clmg_status clmg_nrm2(const clmg_vector *x, double *result) {
  const clmg_vector *v[] = {x};
  clmg_status status = check_vectors("nrm2", 1, v);
  if (status != CLMG_SUCCESS)
    return status;
  if (!result)
    return clmg_fail(x->context, CLMG_ERROR_INVALID_ARGUMENT, "nrm2: NULL result pointer");
  *result = 0;
  clmg_context *context = x->context;
  double sum = 0;
  if (x->length == 0) {
    /* nothing local; a distributed context still takes part */
  } else if (use_clblast(context, OP_NRM2)) {
    double norm = 0;
    status = clblast_dot_or_nrm2(x, NULL, &norm);
    sum = norm * norm;
  } else {
    clmg_reduction r;
    clmg_kernel_args args;
    status = clmg_reduction_begin(context, x->type, x->length, 1, &r);
    if (status == CLMG_SUCCESS)
      status = blas1_kernel(context, x->type, K_SUMSQ_PARTIALS, &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, x->length);
      clmg_arg_vector(&args, x);
      status = clmg_reduction_finish(&args, x->type, &r, &sum);
    }
  }
  status = status == CLMG_SUCCESS ? clmg_context_reduce(context, CLMG_REDUCE_SUM, &sum, 1)
                                  : held_sums(context, status, &sum, 1);
  if (status != CLMG_SUCCESS)
    return status;
  return finish_nrm2(x, sum, result);
}

clmg_status clmg_dot2(const clmg_vector *x, const clmg_vector *y, double *xy, double *xx) {
  const clmg_vector *v[] = {x, y};
  clmg_status status = check_vectors("dot2", 2, v);
  if (status != CLMG_SUCCESS)
    return status;
  if (!xy || !xx)
    return clmg_fail(x->context, CLMG_ERROR_INVALID_ARGUMENT, "dot2: NULL result pointer");
  double sums[2] = {0, 0};
  if (x->length == 0) {
    status = empty_sums(x->context, sums, 2);
    *xy = sums[0];
    *xx = sums[1];
    return status;
  }
  clmg_reduction r;
  clmg_kernel_args args;
  status = clmg_reduction_begin(x->context, x->type, x->length, 2, &r);
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(x->context, x->type, K_DOT2_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return held_sums(x->context, status, sums, 2);
  clmg_arg_ulong(&args, x->length);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, y);
  status = finish_sums(&args, x->type, &r, sums);
  *xy = sums[0];
  *xx = sums[1];
  return status;
}

clmg_status clmg_axpy_nrm2(double alpha, const clmg_vector *x, clmg_vector *y, double *norm) {
  const clmg_vector *v[] = {x, y};
  clmg_status status = check_vectors("axpy_nrm2", 2, v);
  if (status != CLMG_SUCCESS)
    return status;
  if (!norm)
    return clmg_fail(x->context, CLMG_ERROR_INVALID_ARGUMENT, "axpy_nrm2: NULL result pointer");
  *norm = 0;
  double sum = 0;
  if (x->length == 0) {
    status = empty_sums(x->context, &sum, 1);
    return status == CLMG_SUCCESS ? finish_nrm2(y, sum, norm) : status;
  }
  clmg_reduction r;
  clmg_kernel_args args;
  status = clmg_reduction_begin(x->context, x->type, x->length, 1, &r);
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(x->context, x->type, K_AXPY_SUMSQ_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return held_sums(x->context, status, &sum, 1);
  clmg_arg_ulong(&args, x->length);
  clmg_arg_real(&args, x->type, alpha);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, y);
  status = finish_sums(&args, x->type, &r, &sum);
  if (status != CLMG_SUCCESS)
    return status;
  return finish_nrm2(y, sum, norm);
}

clmg_status clmg_cg_update(double alpha, const clmg_vector *p, const clmg_vector *q, clmg_vector *x,
                           clmg_vector *r, double *rr) {
  const clmg_vector *v[] = {p, q, x, r};
  clmg_status status = check_vectors("cg_update", 4, v);
  if (status != CLMG_SUCCESS)
    return status;
  if (!rr)
    return clmg_fail(p->context, CLMG_ERROR_INVALID_ARGUMENT, "cg_update: NULL result pointer");
  *rr = 0;
  if (p->length == 0)
    return empty_sums(p->context, rr, 1);
  clmg_reduction red;
  clmg_kernel_args args;
  status = clmg_reduction_begin(p->context, p->type, p->length, 1, &red);
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(p->context, p->type, K_CG_UPDATE_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return held_sums(p->context, status, rr, 1);
  clmg_arg_ulong(&args, p->length);
  clmg_arg_real(&args, p->type, alpha);
  clmg_arg_vector(&args, p);
  clmg_arg_vector(&args, q);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, r);
  return finish_sums(&args, p->type, &red, rr);
}

clmg_status clmg_dot3(const clmg_vector *r, const clmg_vector *u, const clmg_vector *w, double *ru,
                      double *wu, double *rr) {
  const clmg_vector *v[] = {r, u, w};
  clmg_status status = check_vectors("dot3", 3, v);
  if (status != CLMG_SUCCESS)
    return status;
  if (!ru || !wu || !rr)
    return clmg_fail(r->context, CLMG_ERROR_INVALID_ARGUMENT, "dot3: NULL result pointer");
  double sums[3] = {0, 0, 0};
  if (r->length == 0) {
    status = empty_sums(r->context, sums, 3);
    *ru = sums[0];
    *wu = sums[1];
    *rr = sums[2];
    return status;
  }
  clmg_reduction red;
  clmg_kernel_args args;
  status = clmg_reduction_begin(r->context, r->type, r->length, 3, &red);
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(r->context, r->type, K_DOT3_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return held_sums(r->context, status, sums, 3);
  clmg_arg_ulong(&args, r->length);
  clmg_arg_vector(&args, r);
  clmg_arg_vector(&args, u);
  clmg_arg_vector(&args, w);
  status = finish_sums(&args, r->type, &red, sums);
  *ru = sums[0];
  *wu = sums[1];
  *rr = sums[2];
  return status;
}

/* ---- reductions into device memory ---- */

static clmg_status check_sums(const char *op, const clmg_vector *x, const clmg_vector *sums,
                              size_t slot, unsigned results) {
  if (!sums || sums->context != x->context || sums->type != x->type || slot > sums->length ||
      sums->length - slot < results)
    return clmg_fail(x->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: the sums need %u slots from %zu of a vector of the operands' type and "
                     "context",
                     op, results, slot);
  return CLMG_SUCCESS;
}

/* Launches the partials kernel prepared in args (its operands given) into
 * the context's scratch, then sums each result's partials into sums[slot +
 * k]: by one work-group (a tree), or, in_order, each result by one
 * work-item adding its partials in the order the host's reductions do (bit
 * for bit their sums). Nothing is read back (the queue orders the two). A
 * length of 0 gives zeros. */
static clmg_status sums_on_device(clmg_kernel_args *args, clmg_dtype type, size_t n,
                                  unsigned results, clmg_vector *sums, size_t slot, int in_order) {
  clmg_context *context = args->context;
  size_t element = clmg_dtype_size(type);
  clmg_reduction r = {0};
  clmg_status status = n > 0 ? clmg_reduction_begin(context, type, n, results, &r)
                             : clmg_reserve_partials(context, element);
  if (status == CLMG_SUCCESS && n > 0) {
    clmg_arg_buffer(args, context->partials);
    clmg_arg_local(args, r.local * element);
    status = clmg_args_end(args);
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(context, args->kernel, args->name, r.global, r.local, NULL);
  } else if (status == CLMG_SUCCESS) {
    clmg_launch_1d(context, 1, 1, &r.global, &r.local);
  }
  clmg_kernel_args sum_args;
  if (status == CLMG_SUCCESS)
    status =
        blas1_kernel(context, type, in_order ? K_PARTIALS_IN_ORDER : K_PARTIALS_TO_SUMS, &sum_args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&sum_args, n > 0 ? r.groups : 0);
  clmg_arg_ulong(&sum_args, results);
  clmg_arg_buffer(&sum_args, context->partials);
  clmg_arg_buffer(&sum_args, sums->buffer);
  clmg_arg_ulong(&sum_args, sums->offset + slot);
  if (in_order)
    return launch_streaming(&sum_args, results);
  clmg_arg_local(&sum_args, r.local * element);
  status = clmg_args_end(&sum_args);
  return status == CLMG_SUCCESS
             ? clmg_enqueue_1d(context, sum_args.kernel, sum_args.name, r.local, r.local, NULL)
             : status;
}

clmg_status clmg_dot3_to_device(const clmg_vector *r, const clmg_vector *u, const clmg_vector *w,
                                clmg_vector *sums, size_t slot) {
  const clmg_vector *v[] = {r, u, w};
  clmg_status status = check_vectors("dot3", 3, v);
  if (status == CLMG_SUCCESS)
    status = check_sums("dot3", r, sums, slot, 3);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(r->context, r->type, K_DOT3_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, r->length);
  clmg_arg_vector(&args, r);
  clmg_arg_vector(&args, u);
  clmg_arg_vector(&args, w);
  return sums_on_device(&args, r->type, r->length, 3, sums, slot, 0);
}

clmg_status clmg_sumsq_to_device(const clmg_vector *x, clmg_vector *sums, size_t slot) {
  const clmg_vector *v[] = {x};
  clmg_status status = check_vectors("sum of squares", 1, v);
  if (status == CLMG_SUCCESS)
    status = check_sums("sum of squares", x, sums, slot, 1);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(x->context, x->type, K_SUMSQ_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, x->length);
  clmg_arg_vector(&args, x);
  return sums_on_device(&args, x->type, x->length, 1, sums, slot, 0);
}

clmg_status clmg_scal_inverse_sqrt(const clmg_vector *sums, size_t slot, clmg_vector *x) {
  const clmg_vector *v[] = {x};
  clmg_status status = check_vectors("scale", 1, v);
  if (status == CLMG_SUCCESS)
    status = check_sums("scale", x, sums, slot, 1);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS && x->length > 0)
    status = blas1_kernel(x->context, x->type, K_SCALE_INVERSE_SQRT, &args);
  if (status != CLMG_SUCCESS || x->length == 0)
    return status;
  clmg_arg_ulong(&args, x->length);
  clmg_arg_vector(&args, x);
  clmg_arg_buffer(&args, sums->buffer);
  clmg_arg_ulong(&args, sums->offset + slot);
  return launch_streaming(&args, x->length);
}

clmg_status clmg_cg_step(double alpha, double beta, const clmg_vector *u, const clmg_vector *w,
                         clmg_vector *p, clmg_vector *s, clmg_vector *x, clmg_vector *r) {
  const clmg_vector *v[] = {u, w, p, s, x, r};
  clmg_status status = check_vectors("cg_step", 6, v);
  if (status != CLMG_SUCCESS || u->length == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(u->context, u->type, K_CG_STEP, &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, u->length);
  clmg_arg_real(&args, u->type, alpha);
  clmg_arg_real(&args, u->type, beta);
  clmg_arg_vector(&args, u);
  clmg_arg_vector(&args, w);
  clmg_arg_vector(&args, p);
  clmg_arg_vector(&args, s);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, r);
  return launch_streaming(&args, u->length);
}

/* ---- the Gram-Schmidt kernels of GMRES (la/internal.h) ---- */

/* The k vectors of a basis, each `stride` elements after the previous, all
 * of w's length, must fit inside the basis vector. */
static clmg_status check_basis(const char *op, const clmg_vector *basis, size_t stride, int k,
                               const clmg_vector *w) {
  const clmg_vector *v[] = {basis, w};
  for (int i = 0; i < 2; ++i)
    if (!v[i])
      return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context *context = w->context;
  clmg_clear_message(context);
  if (basis->context != context || basis->type != w->type ||
      (w->type != CLMG_DOUBLE && w->type != CLMG_FLOAT) || k < 0 || stride < w->length ||
      (k > 0 && (size_t)(k - 1) * stride + w->length > basis->length))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: %d vectors of %zu %s elements, %zu apart, do not fit a %s basis of %zu",
                     op, k, w->length, clmg_dtype_name(w->type), stride,
                     clmg_dtype_name(basis->type), basis->length);
  return CLMG_SUCCESS;
}

clmg_status clmg_multi_dot(const clmg_vector *basis, size_t stride, int k, const clmg_vector *w,
                           double *results) {
  clmg_status status = check_basis("multi_dot", basis, stride, k, w);
  if (status != CLMG_SUCCESS)
    return status;
  if (w->length == 0)
    return empty_sums(w->context, results, k + 1);
  clmg_reduction r;
  clmg_kernel_args args;
  status = clmg_reduction_begin(w->context, w->type, w->length, (unsigned)k + 1, &r);
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(w->context, w->type, K_MULTI_DOT_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return held_sums(w->context, status, results, k + 1);
  cl_uint count = (cl_uint)k;
  clmg_arg_ulong(&args, w->length);
  clmg_arg_raw(&args, sizeof count, &count);
  clmg_arg_vector(&args, basis);
  clmg_arg_ulong(&args, stride);
  clmg_arg_vector(&args, w);
  return finish_sums(&args, w->type, &r, results);
}

clmg_status clmg_multi_dot_to_device(const clmg_vector *basis, size_t stride, int k,
                                     const clmg_vector *w, clmg_vector *sums, size_t slot) {
  clmg_status status = check_basis("multi_dot", basis, stride, k, w);
  if (status == CLMG_SUCCESS)
    status = check_sums("multi_dot", w, sums, slot, (unsigned)k + 1);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = blas1_kernel(w->context, w->type, K_MULTI_DOT_PARTIALS, &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_uint count = (cl_uint)k;
  clmg_arg_ulong(&args, w->length);
  clmg_arg_raw(&args, sizeof count, &count);
  clmg_arg_vector(&args, basis);
  clmg_arg_ulong(&args, stride);
  clmg_arg_vector(&args, w);
  /* in the host's order: GMRES's coefficients bit for bit those of its host path */
  return sums_on_device(&args, w->type, w->length, (unsigned)k + 1, sums, slot, 1);
}

clmg_status clmg_multi_axpy(const clmg_vector *basis, size_t stride, int k,
                            const clmg_vector *coefficients, clmg_vector *w) {
  clmg_status status = check_basis("multi_axpy", basis, stride, k, w);
  if (status == CLMG_SUCCESS &&
      (!coefficients || coefficients->type != w->type || coefficients->length < (size_t)k))
    status =
        clmg_fail(w->context, CLMG_ERROR_INVALID_ARGUMENT,
                  "multi_axpy: the coefficients must be %d %s values", k, clmg_dtype_name(w->type));
  if (status != CLMG_SUCCESS || w->length == 0 || k == 0)
    return status;
  clmg_kernel_args args;
  status = blas1_kernel(w->context, w->type, K_MULTI_AXPY, &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_uint count = (cl_uint)k;
  clmg_arg_ulong(&args, w->length);
  clmg_arg_raw(&args, sizeof count, &count);
  clmg_arg_vector(&args, coefficients);
  clmg_arg_vector(&args, basis);
  clmg_arg_ulong(&args, stride);
  clmg_arg_vector(&args, w);
  return launch_streaming(&args, w->length);
}
