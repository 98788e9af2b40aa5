/* Internal interface of the linear-algebra layer (vectors, BLAS-1, sparse
 * matrices): the vector's layout and the kernel-argument helper for it. Not
 * installed. */
#ifndef CLMG_LA_INTERNAL_H
#define CLMG_LA_INTERNAL_H

#include "clmg/sparse.h"
#include "clmg/vector.h"
#include "core/internal.h"

/* The layout behind the opaque public clmg_vector. */
struct clmg_vector {
  clmg_context *context;
  cl_mem buffer;
  size_t offset; /* elements */
  size_t length;
  size_t bytes_owned; /* 0 for a view */
  clmg_dtype type;
};

/* Two kernel arguments: the vector's buffer and its element offset (ulong). */
void clmg_arg_vector(clmg_kernel_args *args, const clmg_vector *vector);

/* GMRES's Gram-Schmidt kernels on a basis of k vectors of w's length held
 * in one vector, vector j starting at element j * stride:
 * results[j] = v_j . w (j < k) and results[k] = w . w, one pass and one
 * read-back; and w -= sum_j c_j v_j in one pass, c a device vector of at
 * least k values in w's precision. */
clmg_status clmg_multi_dot(const clmg_vector *basis, size_t stride, int k, const clmg_vector *w,
                           double *results);
clmg_status clmg_multi_axpy(const clmg_vector *basis, size_t stride, int k,
                            const clmg_vector *coefficients, clmg_vector *w);

#endif
