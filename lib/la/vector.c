/* Typed device vectors: allocation with device-memory accounting, views,
 * host transfers and fill. */
#include "la/internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The element `value` in the representation of `type`, for fills. */
static void encode_element(clmg_dtype type, double value, unsigned char out[8]) {
  memset(out, 0, 8);
  if (type == CLMG_DOUBLE) {
    cl_double v = value;
    memcpy(out, &v, sizeof v);
  } else if (type == CLMG_FLOAT) {
    cl_float v = (cl_float)value;
    memcpy(out, &v, sizeof v);
  } else if (type == CLMG_INT32) {
    cl_int v = (cl_int)value;
    memcpy(out, &v, sizeof v);
  } else if (type == CLMG_INT64) {
    cl_long v = (cl_long)value;
    memcpy(out, &v, sizeof v);
  } else {
    cl_uint v = (cl_uint)value;
    memcpy(out, &v, sizeof v);
  }
}

static clmg_status fill_range(clmg_vector *vector, double value) {
  if (vector->length == 0)
    return CLMG_SUCCESS;
  unsigned char pattern[8];
  size_t size = clmg_dtype_size(vector->type);
  encode_element(vector->type, value, pattern);
  return clmg_fill_buffer(vector->context, vector->buffer, pattern, size, vector->offset * size,
                          vector->length * size, "filling a vector");
}

/* The checks and the allocation of clmg_vector_create, without the
 * zeroing. */
static clmg_status vector_allocate(clmg_context *context, clmg_dtype type, size_t n,
                                   clmg_vector **out) {
  if (!out)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_vector_create: NULL output");
  *out = NULL;
  if (!context || !context->queue)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  size_t size = clmg_dtype_size(type);
  if (size == 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "unknown vector type %d", (int)type);
  if (type == CLMG_DOUBLE && !context->info.has_fp64)
    return clmg_fail_no_fp64(context, "a double vector");
  if (n > SIZE_MAX / size)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                     "a vector of %zu %s elements does not fit in the address space", n,
                     clmg_dtype_name(type));
  clmg_vector *vector = calloc(1, sizeof *vector);
  if (!vector)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "vector handle");
  vector->context = context;
  vector->type = type;
  vector->length = n;
  if (n > 0) {
    char what[96];
    snprintf(what, sizeof what, "a vector of %zu %s elements", n, clmg_dtype_name(type));
    clmg_status status = clmg_device_alloc(context, n * size, NULL, what, &vector->buffer);
    if (status != CLMG_SUCCESS) {
      free(vector);
      return status;
    }
    vector->bytes_owned = n * size;
  }
  *out = vector;
  return CLMG_SUCCESS;
}

/* Whether a new vector of `bytes` is taken by a first command and waited
 * for (see clmg_vector_create_unset): on a device of host buffers (the
 * device table's host_buffers: CPUs), from COMMIT_BYTES. pocl takes a
 * buffer's memory when a command first uses it (and aborts when that
 * fails), so the next allocation's room check must see this one taken;
 * smaller ones not yet used fit in the room that check leaves to spare.
 * Other drivers report a failed allocation as the error of the command
 * that needed it, so nothing is waited for there. */
enum { COMMIT_BYTES = 1 << 20 };

static int needs_commit(const clmg_context *context, size_t bytes) {
  return bytes >= COMMIT_BYTES && context->params.host_buffers;
}

/* Waits for the commands that took a new vector (failing with `what`),
 * and destroys it on failure. */
static clmg_status commit_wait(clmg_context *context, clmg_status status, clmg_vector **out,
                               const char *what) {
  if (status == CLMG_SUCCESS) {
    context->host_waits++;
    cl_int finish = clFinish(context->queue);
    if (finish != CL_SUCCESS)
      status = clmg_fail_cl(context, finish, what);
  }
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*out);
    *out = NULL;
  }
  return status;
}

/* A zeroed vector: the fill is enqueued and, as for
 * clmg_vector_create_unset, waited for only where the memory must be
 * taken now (needs_commit); elsewhere the queue orders the fill before
 * every later command, and the host waits at the next read. */
clmg_status clmg_vector_create(clmg_context *context, clmg_dtype type, size_t n,
                               clmg_vector **out) {
  clmg_status status = vector_allocate(context, type, n, out);
  if (status != CLMG_SUCCESS || n == 0)
    return status;
  status = fill_range(*out, 0.0);
  if (status == CLMG_SUCCESS && !needs_commit(context, n * clmg_dtype_size(type)))
    return CLMG_SUCCESS;
  return commit_wait(context, status, out, "zeroing a new vector");
}

/* A vector whose every element the next commands overwrite, so not zeroed
 * (la/internal.h). Zeroing was a pass over fresh memory on one thread of a
 * CPU driver: in a hierarchy setup on pocl, 440 MB of 600 allocated at
 * CIRCLE level 9. Where the memory must be taken now (needs_commit), one
 * element is written and waited for. */
clmg_status clmg_vector_create_unset(clmg_context *context, clmg_dtype type, size_t n,
                                     clmg_vector **out) {
  clmg_status status = vector_allocate(context, type, n, out);
  size_t size = clmg_dtype_size(type);
  if (status != CLMG_SUCCESS || !needs_commit(context, n * size))
    return status;
  unsigned char zero[8] = {0};
  status = clmg_fill_buffer(context, (*out)->buffer, zero, size, 0, size, "taking a new vector");
  return commit_wait(context, status, out, "taking a new vector");
}

clmg_status clmg_vector_view(clmg_vector *base, size_t offset, size_t n, clmg_vector **out) {
  if (!out)
    return clmg_fail(base ? base->context : NULL, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_vector_view: NULL output pointer");
  *out = NULL;
  if (!base)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context *context = base->context;
  clmg_clear_message(context);
  if (offset > base->length || n > base->length - offset)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "view [%zu, %zu + %zu) lies outside a vector of length %zu", offset, offset, n,
                     base->length);
  clmg_vector *view = calloc(1, sizeof *view);
  if (!view)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "vector view handle");
  *view = *base;
  view->offset = base->offset + offset;
  view->length = n;
  view->bytes_owned = 0;
  *out = view;
  return CLMG_SUCCESS;
}

void clmg_vector_destroy(clmg_vector *vector) {
  if (!vector)
    return;
  if (vector->bytes_owned)
    clmg_device_free(vector->context, vector->buffer, vector->bytes_owned);
  free(vector);
}

size_t clmg_vector_length(const clmg_vector *vector) {
  return vector ? vector->length : 0;
}
clmg_dtype clmg_vector_type(const clmg_vector *vector) {
  return vector ? vector->type : CLMG_DOUBLE;
}
clmg_context *clmg_vector_context(const clmg_vector *vector) {
  return vector ? vector->context : NULL;
}
cl_mem clmg_vector_cl_buffer(const clmg_vector *vector, size_t *element_offset) {
  if (element_offset)
    *element_offset = vector ? vector->offset : 0;
  return vector ? vector->buffer : NULL;
}

static clmg_status transfer(const clmg_vector *vector, void *host, int upload, int blocking) {
  if (!vector)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context *context = vector->context;
  clmg_clear_message(context);
  if (!host)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "NULL host pointer for a transfer");
  if (vector->length == 0)
    return CLMG_SUCCESS;
  size_t size = clmg_dtype_size(vector->type);
  if (upload) /* a view's part of the buffer: see clmg_write_buffer */
    return clmg_write_buffer(context, vector->buffer, blocking, vector->offset * size,
                             vector->length * size, host, "uploading a vector");
  return clmg_read_buffer(context, vector->buffer, blocking, vector->offset * size,
                          vector->length * size, host, "downloading a vector");
}

clmg_status clmg_vector_upload(clmg_vector *vector, const void *host) {
  return transfer(vector, (void *)host, 1, 1);
}
clmg_status clmg_vector_download(const clmg_vector *vector, void *host) {
  return transfer(vector, host, 0, 1);
}
clmg_status clmg_vector_upload_async(clmg_vector *vector, const void *host) {
  return transfer(vector, (void *)host, 1, 0);
}
clmg_status clmg_vector_download_async(const clmg_vector *vector, void *host) {
  return transfer(vector, host, 0, 0);
}

/* Float vectors go through a converted host copy. */
static clmg_status transfer_doubles(clmg_vector *vector, double *host, int upload) {
  if (!vector || (!host && vector->length > 0))
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(vector->context);
  if (vector->type == CLMG_DOUBLE)
    return transfer(vector, host, upload, 1);
  if (vector->type != CLMG_FLOAT)
    return clmg_fail(vector->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "vector %s doubles: the vector holds %s, not a floating type",
                     upload ? "upload of" : "download to", clmg_dtype_name(vector->type));
  size_t n = vector->length;
  float *converted = malloc((n ? n : 1) * sizeof *converted);
  if (!converted)
    return clmg_fail(vector->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory to convert %zu values between double and float", n);
  if (upload) {
    /* A finite value beyond float's range would become Inf, and a vector
     * whose every nonzero underflows would become 0: both change the
     * problem, so they are refused rather than solved. */
    size_t nonzeros = 0, zeroed = 0;
    for (size_t i = 0; i < n; ++i) {
      converted[i] = (float)host[i];
      if (isfinite(host[i]) && isinf(converted[i])) {
        free(converted);
        return clmg_fail(vector->context, CLMG_ERROR_INVALID_ARGUMENT,
                         "vector upload to float: element %zu is %g, beyond float's range "
                         "(+-%g); use double precision or scale the data",
                         i, host[i], (double)FLT_MAX);
      }
      nonzeros += host[i] != 0;
      zeroed += host[i] != 0 && converted[i] == 0;
    }
    if (nonzeros > 0 && zeroed == nonzeros) {
      free(converted);
      return clmg_fail(vector->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "vector upload to float: every nonzero element is below float's smallest "
                       "value (%g) and would become 0; use double precision or scale the data",
                       (double)FLT_TRUE_MIN);
    }
  }
  clmg_status status = transfer(vector, converted, upload, 1);
  if (!upload && status == CLMG_SUCCESS)
    for (size_t i = 0; i < n; ++i)
      host[i] = converted[i];
  free(converted);
  return status;
}

clmg_status clmg_vector_upload_doubles(clmg_vector *vector, const double *host) {
  return transfer_doubles(vector, (double *)host, 1);
}

clmg_status clmg_vector_download_doubles(const clmg_vector *vector, double *host) {
  return transfer_doubles((clmg_vector *)vector, host, 0);
}

clmg_status clmg_vector_fill(clmg_vector *vector, double value) {
  if (!vector)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(vector->context);
  return fill_range(vector, value);
}

clmg_status clmg_vector_fill_pseudo_random(clmg_vector *x, uint64_t seed, uint64_t first,
                                           double low, double high) {
  if (!x)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context *context = x->context;
  clmg_clear_message(context);
  if (x->length == 0)
    return CLMG_SUCCESS;
  if (x->type != CLMG_DOUBLE) {
    double *host = clmg_alloc_array(x->length, sizeof *host);
    if (!host)
      return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "no host memory for %zu pseudo-random values", x->length);
    clmg_fill_pseudo_random(host, x->length, seed, first, low, high);
    clmg_status status = clmg_vector_upload_doubles(x, host);
    free(host);
    return status;
  }
  clmg_kernel_args args;
  clmg_status status = clmg_args_for_kernel(context, "blas1", clmg_real_options(context, x->type),
                                            "fill_pseudo_random", &args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_arg_ulong(&args, x->length);
  clmg_arg_ulong(&args, clmg_lcg_skip(seed, first));
  clmg_arg_ulong(&args, CLMG_LCG_MUL);
  clmg_arg_ulong(&args, CLMG_LCG_ADD);
  clmg_arg_real(&args, CLMG_DOUBLE, low);
  clmg_arg_real(&args, CLMG_DOUBLE, high);
  clmg_arg_vector(&args, x);
  return clmg_launch_args(&args, x->length);
}

clmg_status clmg_vector_create_from_host(clmg_context *context, clmg_dtype type, size_t n,
                                         const void *host, clmg_vector **out) {
  /* the blocking upload writes every element and surfaces a failed
   * allocation as the zeroing would */
  clmg_status status = vector_allocate(context, type, n, out);
  if (status == CLMG_SUCCESS && n > 0)
    status = type == CLMG_DOUBLE || type == CLMG_FLOAT ? clmg_vector_upload_doubles(*out, host)
                                                       : clmg_vector_upload(*out, host);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*out);
    *out = NULL;
  }
  return status;
}

void clmg_arg_vector(clmg_kernel_args *args, const clmg_vector *vector) {
  clmg_arg_buffer(args, vector->buffer);
  clmg_arg_ulong(args, vector->offset);
}
