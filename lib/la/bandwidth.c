/* The device's copy bandwidth: the yardstick every benchmark divides by. */
#include "la/internal.h"

size_t clmg_copy_bandwidth_default_bytes(const clmg_context *context) {
  if (!context)
    return 0;
  /* The table's size (large enough to defeat caches, quick on a CPU),
   * halved until it fits twice (under the memory limit too). */
  size_t bytes = context->params.bandwidth_bytes;
  uint64_t room = context->memory_limit ? context->memory_limit : UINT64_MAX;
  while ((bytes > context->info.max_alloc_bytes / 2 || bytes > room / 2) &&
         bytes > ((size_t)1 << 20))
    bytes /= 2;
  /* A CPU device's two buffers are host memory: under an address-space
   * limit they must fit it too (with the room clmg_device_alloc keeps). */
  while (context->params.host_buffers && bytes > ((size_t)1 << 20) &&
         !clmg_address_space_has_room(2 * bytes + ((size_t)256 << 20)))
    bytes /= 2;
  return bytes;
}

clmg_status clmg_measure_copy_bandwidth(clmg_context *context, size_t bytes, double *gb_per_s) {
  if (!context || !context->queue || !gb_per_s)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_measure_copy_bandwidth");
  clmg_clear_message(context);
  *gb_per_s = 0;
  clmg_dtype type = context->info.has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  size_t element = clmg_dtype_size(type);
  if (bytes == 0)
    bytes = clmg_copy_bandwidth_default_bytes(context);
  size_t n = bytes / element;
  if (n == 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "copy bandwidth: %zu bytes is too few",
                     bytes);
  /* The kernel first: compiling it (LLVM on CPU drivers) needs host memory
   * that the buffers, host memory too on a CPU device, would take; pocl's
   * LLVM aborts the process (std::bad_alloc) when it runs out. */
  cl_kernel kernel = NULL;
  clmg_status status =
      clmg_get_kernel(context, "blas1", clmg_real_options(context, type), "copy_vector", &kernel);
  clmg_vector *x = NULL, *y = NULL;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, type, n, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, type, n, &y);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS) {
    clmg_args_begin(&args, context, kernel, "copy_vector");
    clmg_arg_ulong(&args, n);
    clmg_arg_vector(&args, x);
    clmg_arg_vector(&args, y);
    status = clmg_args_end(&args);
  }
  /* The launch of clmg_copy: the copy every other kernel is compared with. */
  size_t global, local;
  clmg_launch_1d(context, n, 0, &global, &local);
  double best_seconds = 0;
  for (int rep = 0; rep < 6 && status == CLMG_SUCCESS; ++rep) {
    cl_event event = NULL;
    status = clmg_enqueue_1d(context, kernel, "copy_vector", global, local, &event);
    if (status != CLMG_SUCCESS)
      break;
    cl_int error = clWaitForEvents(1, &event);
    cl_ulong start = 0, end = 0;
    if (error == CL_SUCCESS)
      error =
          clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    if (error == CL_SUCCESS)
      error = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    clReleaseEvent(event);
    if (error != CL_SUCCESS) {
      status = clmg_fail_cl(context, error, "timing the copy kernel");
      break;
    }
    double seconds = (double)(end - start) * 1e-9;
    if (rep > 0 && seconds > 0 && (best_seconds == 0 || seconds < best_seconds))
      best_seconds = seconds; /* rep 0 warms up */
  }
  if (status == CLMG_SUCCESS && best_seconds > 0)
    *gb_per_s = 2.0 * (double)n * (double)element / best_seconds * 1e-9;
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  return status;
}
