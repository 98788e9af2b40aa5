/* Status codes, OpenCL error names and the per-context failure message. */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

const char *clmg_status_string(clmg_status status) {
  switch (status) {
  case CLMG_SUCCESS:
    return "success";
  case CLMG_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case CLMG_ERROR_OUT_OF_HOST_MEMORY:
    return "out of host memory";
  case CLMG_ERROR_OUT_OF_DEVICE_MEMORY:
    return "out of device memory";
  case CLMG_ERROR_NO_DEVICE:
    return "no OpenCL device";
  case CLMG_ERROR_DEVICE_NOT_FOUND:
    return "device not found";
  case CLMG_ERROR_UNSUPPORTED:
    return "unsupported by the device";
  case CLMG_ERROR_BUILD_FAILED:
    return "kernel build failed";
  case CLMG_ERROR_OPENCL:
    return "OpenCL error";
  case CLMG_ERROR_BLAS:
    return "CLBlast error";
  case CLMG_ERROR_IO:
    return "input/output error";
  case CLMG_ERROR_PARSE:
    return "malformed input";
  case CLMG_ERROR_NOT_CONVERGED:
    return "not converged";
  case CLMG_ERROR_COMMUNICATION:
    return "communication between processes failed";
  }
  return "unknown status";
}

const char *clmg_version_string(void) {
  return CLMG_VERSION_STRING;
}

const char *clmg_cl_error_name(cl_int error) {
  switch (error) {
#define CLMG_CL_ERROR(name)                                                                        \
  case name:                                                                                       \
    return #name;
    CLMG_CL_ERROR(CL_SUCCESS)
    CLMG_CL_ERROR(CL_DEVICE_NOT_FOUND)
    CLMG_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    CLMG_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    CLMG_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CLMG_CL_ERROR(CL_OUT_OF_RESOURCES)
    CLMG_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    CLMG_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    CLMG_CL_ERROR(CL_MEM_COPY_OVERLAP)
    CLMG_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    CLMG_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    CLMG_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    CLMG_CL_ERROR(CL_MAP_FAILURE)
    CLMG_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    CLMG_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    CLMG_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    CLMG_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    CLMG_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    CLMG_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    CLMG_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    CLMG_CL_ERROR(CL_INVALID_VALUE)
    CLMG_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    CLMG_CL_ERROR(CL_INVALID_PLATFORM)
    CLMG_CL_ERROR(CL_INVALID_DEVICE)
    CLMG_CL_ERROR(CL_INVALID_CONTEXT)
    CLMG_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    CLMG_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    CLMG_CL_ERROR(CL_INVALID_HOST_PTR)
    CLMG_CL_ERROR(CL_INVALID_MEM_OBJECT)
    CLMG_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    CLMG_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    CLMG_CL_ERROR(CL_INVALID_SAMPLER)
    CLMG_CL_ERROR(CL_INVALID_BINARY)
    CLMG_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    CLMG_CL_ERROR(CL_INVALID_PROGRAM)
    CLMG_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    CLMG_CL_ERROR(CL_INVALID_KERNEL_NAME)
    CLMG_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    CLMG_CL_ERROR(CL_INVALID_KERNEL)
    CLMG_CL_ERROR(CL_INVALID_ARG_INDEX)
    CLMG_CL_ERROR(CL_INVALID_ARG_VALUE)
    CLMG_CL_ERROR(CL_INVALID_ARG_SIZE)
    CLMG_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    CLMG_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    CLMG_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    CLMG_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    CLMG_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    CLMG_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    CLMG_CL_ERROR(CL_INVALID_EVENT)
    CLMG_CL_ERROR(CL_INVALID_OPERATION)
    CLMG_CL_ERROR(CL_INVALID_GL_OBJECT)
    CLMG_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    CLMG_CL_ERROR(CL_INVALID_MIP_LEVEL)
    CLMG_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    CLMG_CL_ERROR(CL_INVALID_PROPERTY)
    CLMG_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    CLMG_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    CLMG_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    CLMG_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef CLMG_CL_ERROR
  case -1001:
    return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform is installed)";
  }
  return "unknown OpenCL error";
}

void clmg_clear_message(clmg_context *context) {
  if (context)
    context->message[0] = '\0';
}

static void record_message(clmg_context *context, const char *format, va_list args) {
  vsnprintf(context->message, sizeof context->message, format, args);
  clmg_message_sanitize(context->message, sizeof context->message);
}

clmg_status clmg_fail(clmg_context *context, clmg_status status, const char *format, ...) {
  if (!context)
    return status;
  va_list args;
  va_start(args, format);
  record_message(context, format, args);
  va_end(args);
  return status;
}

clmg_status clmg_context_fail(clmg_context *context, clmg_status status, const char *format, ...) {
  if (!context || !format)
    return status;
  va_list args;
  va_start(args, format);
  record_message(context, format, args);
  va_end(args);
  return status;
}

clmg_status clmg_fail_cl(clmg_context *context, cl_int error, const char *what) {
  clmg_status status = CLMG_ERROR_OPENCL;
  if (error == CL_MEM_OBJECT_ALLOCATION_FAILURE || error == CL_INVALID_BUFFER_SIZE)
    status = CLMG_ERROR_OUT_OF_DEVICE_MEMORY;
  else if (error == CL_OUT_OF_HOST_MEMORY)
    status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
  return clmg_fail(context, status, "%s: %s (%d)", what, clmg_cl_error_name(error), (int)error);
}

const char *clmg_context_message(const clmg_context *context) {
  return context ? context->message : "no context";
}

size_t clmg_dtype_size(clmg_dtype type) {
  switch (type) {
  case CLMG_DOUBLE:
    return sizeof(cl_double);
  case CLMG_FLOAT:
    return sizeof(cl_float);
  case CLMG_INT32:
    return sizeof(cl_int);
  case CLMG_UINT32:
    return sizeof(cl_uint);
  case CLMG_INT64:
    return sizeof(cl_long);
  }
  return 0;
}

const char *clmg_dtype_name(clmg_dtype type) {
  switch (type) {
  case CLMG_DOUBLE:
    return "double";
  case CLMG_FLOAT:
    return "float";
  case CLMG_INT32:
    return "int32";
  case CLMG_UINT32:
    return "uint32";
  case CLMG_INT64:
    return "int64";
  }
  return "unknown";
}
