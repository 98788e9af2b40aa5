/* Reductions to the host: one launch writes `results` partial sums per
 * work-group into the context's scratch buffer, one read brings them back,
 * and the host adds them in double precision. Shared by BLAS-1
 * (lib/la/blas1.c) and the structured-grid norms (lib/homg/grid.c). */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

clmg_status clmg_reduction_begin(clmg_context *context, clmg_dtype type, size_t n, unsigned results,
                                 clmg_reduction *r) {
  clmg_launch_1d(context, n, 1, &r->global, &r->local);
  r->groups = r->global / r->local;
  r->results = results;
  return clmg_reserve_partials(context, r->groups * results * clmg_dtype_size(type));
}

/* Appends the partials and scratch arguments, launches and reads the
 * partial results into the context's host copy (clmg_reduction_partial). */
clmg_status clmg_reduction_run(clmg_kernel_args *args, clmg_dtype type, const clmg_reduction *r) {
  clmg_context *context = args->context;
  size_t element = clmg_dtype_size(type);
  clmg_arg_buffer(args, context->partials);
  clmg_arg_local(args, r->local * element);
  clmg_status status = clmg_args_end(args);
  if (status == CLMG_SUCCESS)
    status = clmg_enqueue_1d(context, args->kernel, args->name, r->global, r->local, NULL);
  if (status != CLMG_SUCCESS)
    return status;
  size_t count = r->groups * r->results;
  clmg_count_command(context, 1);
  cl_int error = clEnqueueReadBuffer(context->queue, context->partials, CL_TRUE, 0, count * element,
                                     context->partials_host, 0, NULL, NULL);
  if (error != CL_SUCCESS)
    return clmg_fail_cl(context, error, "reading partial sums");
  return CLMG_SUCCESS;
}

double clmg_reduction_partial(const clmg_context *context, clmg_dtype type, const clmg_reduction *r,
                              unsigned result, size_t group) {
  size_t i = (size_t)result * r->groups + group;
  return type == CLMG_FLOAT ? ((const cl_float *)context->partials_host)[i]
                            : ((const cl_double *)context->partials_host)[i];
}

/* Runs the reduction and adds each result's partials on the host in double
 * precision. */
clmg_status clmg_reduction_finish(clmg_kernel_args *args, clmg_dtype type, const clmg_reduction *r,
                                  double *sums) {
  clmg_status status = clmg_reduction_run(args, type, r);
  if (status != CLMG_SUCCESS)
    return status;
  for (unsigned k = 0; k < r->results; ++k) {
    double sum = 0;
    for (size_t g = 0; g < r->groups; ++g)
      sum += clmg_reduction_partial(args->context, type, r, k, g);
    sums[k] = sum;
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_context_set_reducer(clmg_context *context, const clmg_reducer *reducer) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (reducer && reducer->reduce)
    context->reducer = *reducer;
  else
    memset(&context->reducer, 0, sizeof context->reducer);
  return CLMG_SUCCESS;
}

clmg_status clmg_context_agree_local(clmg_context *context, clmg_status status) {
  if (!context->reducer.reduce)
    return status;
  double failed = status != CLMG_SUCCESS;
  clmg_status reduced = context->reducer.reduce(context->reducer.data, CLMG_REDUCE_MAX, &failed, 1);
  if (status != CLMG_SUCCESS)
    return status;
  if (reduced != CLMG_SUCCESS)
    return clmg_fail(context, reduced, "combining a failure flag across processes failed");
  return failed > 0 ? clmg_fail(context, CLMG_ERROR_COMMUNICATION, CLMG_ANOTHER_PROCESS_FAILED)
                    : CLMG_SUCCESS;
}

int clmg_context_is_distributed(const clmg_context *context) {
  return context && context->reducer.reduce != NULL;
}

clmg_status clmg_context_hold(clmg_context *context, clmg_status status) {
  if (status == CLMG_SUCCESS || !context->reducer.reduce || context->failure_agreed)
    return status;
  if (context->pending == CLMG_SUCCESS) { /* the first failure is the one to report */
    context->pending = status;
    snprintf(context->pending_message, sizeof context->pending_message, "%s", context->message);
  }
  return CLMG_SUCCESS;
}

/* A reduction found failures held back: every process returns the lowest
 * failing one's status and message (the reducer's agree), the others
 * taking part as processes that stopped because another failed. */
static clmg_status agree_on_held(clmg_context *context) {
  clmg_status mine = context->pending;
  context->pending = CLMG_SUCCESS;
  if (mine != CLMG_SUCCESS)
    clmg_fail(context, mine, "%s", context->pending_message);
  else
    mine = clmg_fail(context, CLMG_ERROR_COMMUNICATION, CLMG_ANOTHER_PROCESS_FAILED);
  clmg_status agreed =
      context->reducer.agree ? context->reducer.agree(context->reducer.data, mine) : mine;
  context->failure_agreed = 1;
  return agreed != CLMG_SUCCESS ? agreed : mine;
}

clmg_status clmg_context_settle(clmg_context *context, clmg_status status) {
  if (!context->reducer.reduce)
    return status;
  double held = context->pending != CLMG_SUCCESS;
  clmg_status reduced = context->reducer.reduce(context->reducer.data, CLMG_REDUCE_MAX, &held, 1);
  if (reduced != CLMG_SUCCESS) {
    context->pending = CLMG_SUCCESS; /* not carried into the next solve as its own */
    return status != CLMG_SUCCESS
               ? status
               : clmg_fail(context, reduced, "combining the failures held across processes failed");
  }
  return held > 0 ? agree_on_held(context) : status;
}

void clmg_context_enter(clmg_context *context) {
  if (context->solve_depth++ == 0)
    context->failure_agreed = 0;
}

clmg_status clmg_context_leave(clmg_context *context, clmg_status status) {
  if (context->solve_depth > 0)
    context->solve_depth--;
  if (context->solve_depth > 0)
    return status;
  if (context->reducer.reduce)
    status = clmg_context_settle(context, status);
  /* the outermost solve is over: a BLAS-1 call after it holds its
   * failures again instead of passing them on as agreed */
  context->failure_agreed = 0;
  return status;
}

clmg_status clmg_context_reduce(clmg_context *context, clmg_reduce_op op, double *values,
                                int count) {
  if (!context->reducer.reduce || count <= 0)
    return CLMG_SUCCESS;
  /* every process goes on past this point together: an agreement of
   * before was passed over by all (an inexact coarse solve's, say) */
  context->failure_agreed = 0;
  /* the held failures travel as one more value (GMRES's fused products,
   * the longest, have at most 202) */
  enum { INLINE_VALUES = 256 };
  double buffer[INLINE_VALUES + 1];
  double held = context->pending != CLMG_SUCCESS;
  clmg_status status;
  if (count <= INLINE_VALUES) {
    memcpy(buffer, values, (size_t)count * sizeof *values);
    buffer[count] = held;
    status = context->reducer.reduce(context->reducer.data, op, buffer, count + 1);
    memcpy(values, buffer, (size_t)count * sizeof *values);
    held = buffer[count];
  } else { /* the same count on every process: each takes this path */
    status = context->reducer.reduce(context->reducer.data, op, values, count);
    if (status == CLMG_SUCCESS)
      status = context->reducer.reduce(context->reducer.data, CLMG_REDUCE_MAX, &held, 1);
  }
  if (status != CLMG_SUCCESS && context->message[0] == '\0')
    clmg_fail(context, status, "combining %d value%s across processes failed (%s)", count,
              count == 1 ? "" : "s", clmg_status_string(status));
  if (status != CLMG_SUCCESS)
    return status;
  return held > 0 ? agree_on_held(context) : CLMG_SUCCESS;
}
