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

/* A new vector of n elements of `type` holding the host array (doubles for
 * double and float vectors, converted; the type's own elements otherwise). */
/* clmg_vector_create for a vector whose every element the next commands
 * overwrite: not zeroed (lib/la/vector.c says what a CPU device still
 * needs). */
clmg_status clmg_vector_create_unset(clmg_context *context, clmg_dtype type, size_t n,
                                     clmg_vector **out);
clmg_status clmg_vector_create_from_host(clmg_context *context, clmg_dtype type, size_t n,
                                         const void *host, clmg_vector **out);

/* x = clmg_fill_pseudo_random(n, seed, first, low, high) of x's length:
 * made on the device for a double vector (the same values bit for bit),
 * on the host and uploaded for a float one. */
clmg_status clmg_vector_fill_pseudo_random(clmg_vector *x, uint64_t seed, uint64_t first,
                                           double low, double high);

/* z = alpha a ./ d (alpha ./ d when a is NULL), elementwise on the device;
 * *first_zero is the least index where d is 0, SIZE_MAX when none (z is
 * then inf or nan there: callers report the row). Blocks for the search. */
clmg_status clmg_quotient(double alpha, const clmg_vector *a, const clmg_vector *d, clmg_vector *z,
                          size_t *first_zero);

/* out = alpha A x + beta in (beta == 0: in is not read and may be NULL):
 * clmg_spmv out of place, one launch. in may be out; x may overlap
 * neither. */
clmg_status clmg_spmv_into(double alpha, const clmg_matrix *a, const clmg_vector *x, double beta,
                           const clmg_vector *in, clmg_vector *out);

/* CSR's work-items per row (cl/prelude.cl's ROW_LANES) for rows of
 * mean_length entries on average: the largest power of two at most the mean
 * row and the device table's csr_max_lanes (1 on CPUs, 32 on GPUs; at most
 * the work-group size). The CSR SpMV's rule (lib/la/matrix.c), for every
 * kernel that walks a CSR row with several work-items. */
unsigned clmg_csr_row_lanes(const clmg_context *context, double mean_length);

/* Reductions whose results stay in device memory, for loops that must not
 * wait on the host each step (the power steps of eigenvalue estimates):
 * sums[slot], [slot + 1], [slot + 2] = r.u, w.u, r.r (dot3), sums[slot] =
 * x.x (sumsq), added in the vectors' precision (the host's reductions add
 * the partials in double); and x *= 1 / sqrt(sums[slot]) (0 where it is not
 * positive). sums has the operands' type. Nothing blocks; local sums only
 * (a distributed context needs the host's reductions). */
clmg_status clmg_dot3_to_device(const clmg_vector *r, const clmg_vector *u, const clmg_vector *w,
                                clmg_vector *sums, size_t slot);
clmg_status clmg_sumsq_to_device(const clmg_vector *x, clmg_vector *sums, size_t slot);
clmg_status clmg_scal_inverse_sqrt(const clmg_vector *sums, size_t slot, clmg_vector *x);
/* clmg_multi_dot with the k + 1 sums left in sums[slot..slot + k] on the
 * device (the operands' type), each result's partials added in the
 * host's order (in double: clmg_multi_dot's values bit for bit). Nothing
 * blocks; local sums only (a distributed context needs clmg_multi_dot). */
clmg_status clmg_multi_dot_to_device(const clmg_vector *basis, size_t stride, int k,
                                     const clmg_vector *w, clmg_vector *sums, size_t slot);

/* Sorts a short array of indices ascending (insertion sort: rows of at
 * most a few hundred entries, face corner lists). */
void clmg_sort_int32(int32_t *values, size_t count);

/* Sorts a short row's entries by column, stably (insertion: equal columns
 * keep their order, so repeats are summed in input order afterwards, as
 * clmg_csr_from_triplets sums them). */
void clmg_sort_row_entries(int32_t *col, double *val, size_t count);

/* Index of column j in row i of host CSR a (sorted rows), or -1: a binary
 * search, so a dense row does not make it linear. */
int64_t clmg_csr_find_entry(const clmg_csr *a, size_t i, int32_t j);
/* Checks that a is well-formed host CSR (dimensions within the 32-bit
 * limit, row_ptr from 0 and not decreasing, the arrays there, columns in
 * range, sorted and unique): the invariants the CSR functions rely on. */
clmg_status clmg_csr_check(const clmg_csr *a, clmg_error *error);

/* Row offsets (int64, n + 1, made here) from per-row counts (uint32, n)
 * that a kernel wrote, and their sum, computed on the device: only the sum
 * comes back (lib/la/csr_device.c, cl/scan.cl). */
clmg_status clmg_offsets_from_counts(clmg_context *context, const clmg_vector *counts,
                                     clmg_vector **offsets, size_t *total);
/* The same with the total read into *total by a blocking read or, with
 * blocking 0, by one that a later blocking read (or clmg_finish) completes:
 * several sums then cost one host wait. *total must live until then (on a
 * failure too: finish the queue before it goes). */
clmg_status clmg_offsets_from_counts_into(clmg_context *context, const clmg_vector *counts,
                                          clmg_vector **offsets, cl_long *total, int blocking);

/* The same from n uint32 counts at element counts_offset of a buffer into
 * an existing one: offsets[i] = scale * (counts[0] + ... + counts[i - 1])
 * for i <= n (n + 1 int64s from its start), and *total = offsets[n], read
 * back. */
clmg_status clmg_scan_counts(clmg_context *context, cl_mem counts, size_t counts_offset, size_t n,
                             uint64_t scale, cl_mem offsets, size_t *total);
/* clmg_scan_counts with the read as clmg_offsets_from_counts_into's. */
clmg_status clmg_scan_counts_into(clmg_context *context, cl_mem counts, size_t counts_offset,
                                  size_t n, uint64_t scale, cl_mem offsets, cl_long *total,
                                  int blocking);

/* The rows i with low < value[i] <= high (and, when `also` is not NULL,
 * also[i] <= also_high), ascending, as a new device list of uint32 made on
 * the device (value and also: uint32 vectors of one length); *list stays
 * NULL when there are none, and *count comes back. */
clmg_status clmg_row_list(clmg_context *context, const clmg_vector *value, uint32_t low,
                          uint32_t high, const clmg_vector *also, uint32_t also_high,
                          clmg_vector **list, size_t *count);
/* clmg_row_list in two halves, so that several lists wait for the host
 * once: begin launches the flags and their scan and reads the count into
 * pending (blocking, or not: then a later blocking read must come before
 * end); end, given begin's status (or a later failure's), makes the list
 * and releases pending's buffers (on a failure it finishes the queue
 * first, so no read into pending is left). */
typedef struct clmg_row_list_pending {
  cl_mem flags, places;
  size_t n;
  cl_long listed;
} clmg_row_list_pending;
clmg_status clmg_row_list_begin(clmg_context *context, const clmg_vector *value, uint32_t low,
                                uint32_t high, const clmg_vector *also, uint32_t also_high,
                                int blocking, clmg_row_list_pending *pending);
clmg_status clmg_row_list_end(clmg_context *context, clmg_row_list_pending *pending,
                              clmg_status status, clmg_vector **list, size_t *count);

/* clmg_csr_device_multiply on the general (Gustavson) path for every B,
 * never the one-entry path that clmg_csr_device_multiply takes where B's
 * rows hold at most one entry: the reference the tests hold that path to
 * (bit for bit). */
clmg_status clmg_csr_device_multiply_general(clmg_context *context, const clmg_csr_device *a,
                                             const clmg_csr_device *b, clmg_csr_device *out);

/* A CSR matrix that a row kernel builds in two passes: with fill 0 it
 * writes each row's length, with fill 1 (after the offsets) its columns
 * and, if it makes them, values. `arguments` sets the kernel's arguments for
 * either pass; in the first, buffers that do not exist yet are given as a
 * stand-in. out->val is allocated (precision) whether or not the kernel
 * writes it. */
typedef void (*clmg_row_pass_arguments)(clmg_kernel_args *args, const void *data, cl_uint fill,
                                        cl_mem length, cl_mem row_ptr, cl_mem col, cl_mem val);
clmg_status clmg_csr_device_build_rows(clmg_context *context, const char *family,
                                       const char *options, const char *kernel_name, size_t rows,
                                       size_t cols, clmg_dtype precision,
                                       clmg_row_pass_arguments arguments, const void *data,
                                       clmg_csr_device *out);

/* The device matrix m (any format) back as host CSR (doubles; its rows'
 * entries in their stored order), read with blocking transfers: for setups
 * that need the entries themselves (the coarse tail's packed levels). */
clmg_status clmg_matrix_download_csr(const clmg_matrix *m, clmg_csr *out);

/* The CSR arrays of m on the device without a copy or a transfer, where m
 * is stored as CSR (CSR or CSR-Adaptive: its offsets, columns and values
 * are the CSR arrays, rows in their order) in `precision`: *out gets views
 * that do not own the buffers (clmg_csr_device_free releases only the
 * handles; m must outlive them) and 1 is returned. 0 (out zeroed) where m
 * is in another format or precision, or a handle cannot be allocated. */
int clmg_matrix_csr_views(const clmg_matrix *m, clmg_dtype precision, clmg_csr_device *out);

/* The CSR arrays of m on the device without a transfer: its views where m
 * is stored as CSR (clmg_matrix_csr_views); where m was laid out on the
 * device in another format (ELLR, SELL: clmg_matrix_create_from_device, or
 * clmg_matrix_create with the device's matrix_layout_on_device; the hybrid
 * always), views of
 * the CSR pattern it keeps and a new vector of its values scattered back
 * into CSR order (one kernel; *out owns that vector only). 1 on success; 0
 * (out zeroed) where neither applies or a step fails, the caller then
 * uploads the host CSR as before. */
int clmg_matrix_csr_arrays(const clmg_matrix *m, clmg_dtype precision, clmg_csr_device *out);

#endif
