/** @file
 * clmg device vectors: typed arrays that live in device memory, and BLAS-1.
 *
 * A vector is either an owner of its device buffer or a view of a sub-range
 * of another vector (clmg_vector_view); a view must be destroyed before the
 * vector it looks into. All operations are queued on the context's in-order
 * queue, so they run in call order; functions that return a host scalar wait
 * for it. */
#ifndef CLMG_VECTOR_H
#define CLMG_VECTOR_H

#include "clmg/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A typed array in device memory, or a view of part of one (opaque). */
typedef struct clmg_vector clmg_vector;

/** Allocates n elements on the device, set to zero (the zeroing is enqueued,
 * ordered before every later command of the context). A request the device
 * cannot hold returns CLMG_ERROR_OUT_OF_DEVICE_MEMORY (on a GPU driver that
 * takes memory at first use, a failure the context's room check did not
 * foresee is the error of a later command); a double vector on a
 * device without fp64 returns CLMG_ERROR_UNSUPPORTED. n may be 0. */
CLMG_API clmg_status clmg_vector_create(clmg_context *context, clmg_dtype type, size_t n,
                                        clmg_vector **vector);
/** A vector of n elements that aliases elements [offset, offset+n) of base. */
CLMG_API clmg_status clmg_vector_view(clmg_vector *base, size_t offset, size_t n,
                                      clmg_vector **view);
/** Frees the vector's device memory (a view frees only itself). NULL does nothing. */
CLMG_API void clmg_vector_destroy(clmg_vector *vector);

/** The number of elements (0 for NULL). */
CLMG_API size_t clmg_vector_length(const clmg_vector *vector);
/** The element type (CLMG_DOUBLE for NULL). */
CLMG_API clmg_dtype clmg_vector_type(const clmg_vector *vector);
/** The context the vector was made in (NULL for NULL). */
CLMG_API clmg_context *clmg_vector_context(const clmg_vector *vector);
/** The OpenCL buffer and the element offset of this vector inside it. */
CLMG_API cl_mem clmg_vector_cl_buffer(const clmg_vector *vector, size_t *element_offset);

/** Copies n = length elements between host memory (of the vector's type) and
 * the device. The blocking forms return when the copy is done; the _async
 * forms return at once, and the host memory must stay untouched until
 * clmg_finish() (or any blocking call) returns. This one uploads from host,
 * blocking; a NULL host is CLMG_ERROR_INVALID_ARGUMENT. */
CLMG_API clmg_status clmg_vector_upload(clmg_vector *vector, const void *host);
/** Downloads the vector's elements into host (length elements of its type), blocking. */
CLMG_API clmg_status clmg_vector_download(const clmg_vector *vector, void *host);
/** Queues the upload from host and returns at once: host must stay untouched until
 * clmg_finish() or a blocking call returns. */
CLMG_API clmg_status clmg_vector_upload_async(clmg_vector *vector, const void *host);
/** Queues the download into host and returns at once: host holds the elements only
 * once clmg_finish() or a blocking call has returned. */
CLMG_API clmg_status clmg_vector_download_async(const clmg_vector *vector, void *host);

/** Blocking copies between host doubles and a vector of any floating type,
 * converting on the host when the vector holds floats (solvers in float
 * precision, callers in double). */
CLMG_API clmg_status clmg_vector_upload_doubles(clmg_vector *vector, const double *host);
/** Downloads a double or float vector into length host doubles, blocking (floats are
 * converted on the host); a vector of an integer type is CLMG_ERROR_INVALID_ARGUMENT. */
CLMG_API clmg_status clmg_vector_download_doubles(const clmg_vector *vector, double *host);

/** Sets every element to value (converted to the vector's type). */
CLMG_API clmg_status clmg_vector_fill(clmg_vector *vector, double value);

/** dst = src converted between double and float (round to nearest), one
 * pass on the device; equal types copy. Lengths must match. */
CLMG_API clmg_status clmg_vector_convert(const clmg_vector *src, clmg_vector *dst);

/* ---- BLAS-1 on double or float vectors (all operands of one type) ---- */

/** dst = src */
CLMG_API clmg_status clmg_copy(const clmg_vector *src, clmg_vector *dst);
/** x = alpha x */
CLMG_API clmg_status clmg_scal(double alpha, clmg_vector *x);
/** y = alpha x + y */
CLMG_API clmg_status clmg_axpy(double alpha, const clmg_vector *x, clmg_vector *y);
/** y = alpha x + beta y */
CLMG_API clmg_status clmg_axpby(double alpha, const clmg_vector *x, double beta, clmg_vector *y);
/** w = alpha x + beta y (w may alias neither x nor y partially) */
CLMG_API clmg_status clmg_waxpby(double alpha, const clmg_vector *x, double beta,
                                 const clmg_vector *y, clmg_vector *w);
/** z = a .* b, element by element (z may be a or b) */
CLMG_API clmg_status clmg_pointwise_multiply(const clmg_vector *a, const clmg_vector *b,
                                             clmg_vector *z);
/** y[i] = x[index[i]] for i < length(y): index is a CLMG_UINT32 vector of
 * y's length whose entries are below length(x) (the device does not check
 * them); x and y of one floating type, y not aliasing x. Packs a halo. */
CLMG_API clmg_status clmg_gather(const clmg_vector *x, const clmg_vector *index, clmg_vector *y);
/** y[index[i]] += alpha x[i] for i < length(x): the reverse of gather, for
 * distinct indices below length(y) (a repeated index races). */
CLMG_API clmg_status clmg_scatter_add(double alpha, const clmg_vector *x, const clmg_vector *index,
                                      clmg_vector *y);
/** *result = x . y */
CLMG_API clmg_status clmg_dot(const clmg_vector *x, const clmg_vector *y, double *result);
/** *result = ||x||_2 */
CLMG_API clmg_status clmg_nrm2(const clmg_vector *x, double *result);
/** y = alpha x + y, then *norm = ||y||_2: one pass over the data. */
CLMG_API clmg_status clmg_axpy_nrm2(double alpha, const clmg_vector *x, clmg_vector *y,
                                    double *norm);
/** The conjugate-gradient update in one pass:
 * x = x + alpha p;  r = r - alpha q;  *rr = r . r */
CLMG_API clmg_status clmg_cg_update(double alpha, const clmg_vector *p, const clmg_vector *q,
                                    clmg_vector *x, clmg_vector *r, double *rr);
/** The scalars and the update of one Chronopoulos-Gear conjugate-gradient
 * iteration, which needs a single read-back per iteration:
 * (*ru, *wu, *rr) = (r . u, w . u, r . r) in one pass (u may be r), and
 * p = u + beta p; s = w + beta s; x += alpha p; r -= alpha s in one pass. */
CLMG_API clmg_status clmg_dot3(const clmg_vector *r, const clmg_vector *u, const clmg_vector *w,
                               double *ru, double *wu, double *rr);
/** The update of that iteration in one pass: p = u + beta p; s = w + beta s;
 * x += alpha p; r -= alpha s (all six vectors of one type and length). */
CLMG_API clmg_status clmg_cg_step(double alpha, double beta, const clmg_vector *u,
                                  const clmg_vector *w, clmg_vector *p, clmg_vector *s,
                                  clmg_vector *x, clmg_vector *r);
/** *xy = x . y and *xx = x . x in one pass. */
CLMG_API clmg_status clmg_dot2(const clmg_vector *x, const clmg_vector *y, double *xy, double *xx);

/** The Gram-Schmidt kernels of GMRES, on a basis of k vectors of w's length
 * held in one vector, vector j starting at element j * stride:
 * results[j] = v_j . w for j < k and results[k] = w . w (k + 1 values), in
 * one pass and one read-back; and w -= sum_j c_j v_j in one pass, with c a
 * device vector of at least k values in w's precision. */
CLMG_API clmg_status clmg_multi_dot(const clmg_vector *basis, size_t stride, int k,
                                    const clmg_vector *w, double *results);
/** w -= sum_j c_j v_j for j < k in one pass, over the basis laid out as for
 * clmg_multi_dot; coefficients is a device vector of at least k values in w's
 * precision. */
CLMG_API clmg_status clmg_multi_axpy(const clmg_vector *basis, size_t stride, int k,
                                     const clmg_vector *coefficients, clmg_vector *w);

#ifdef __cplusplus
}
#endif

#endif
