/** @file
 * clmg sparse matrices: host CSR (building, transpose, permutation, Matrix
 * Market I/O) and device matrices (CSR, ELLPACK-R, SELL-C-sigma) with the
 * SpMV family: y = alpha A x + beta y, the defect r = b - A x and the fused
 * damped-Jacobi step. */
#ifndef CLMG_SPARSE_H
#define CLMG_SPARSE_H

#include "clmg/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A sparse matrix in compressed sparse row form on the host.
 * Row offsets are 64-bit (nonzero counts may pass 2^31); column indices are
 * 32-bit, so rows and columns are limited to INT32_MAX; columns are sorted
 * and unique within each row.
 * Functions with an `out` matrix overwrite it without freeing what it held
 * (out must not be an input) and leave it all zero after a failure. */
typedef struct clmg_csr {
  size_t rows;      /**< number of rows (at most INT32_MAX) */
  size_t cols;      /**< number of columns (at most INT32_MAX) */
  int64_t *row_ptr; /**< rows + 1 entries */
  int32_t *col;     /**< row_ptr[rows] entries */
  double *val;      /**< row_ptr[rows] entries */
} clmg_csr;

/** The stored entries of a: row_ptr[rows], or 0 when it has no arrays. */
static inline size_t clmg_csr_nnz(const clmg_csr *a) {
  return a->row_ptr ? (size_t)a->row_ptr[a->rows] : 0;
}

/** Frees the arrays of a and zeroes it. */
CLMG_API void clmg_csr_free(clmg_csr *a);

/** Builds CSR from count (row, col, value) triplets (0-based): duplicates are
 * summed, columns sorted. Out-of-range indices are rejected. */
CLMG_API clmg_status clmg_csr_from_triplets(size_t rows, size_t cols, size_t count,
                                            const int32_t *row_index, const int32_t *col_index,
                                            const double *values, clmg_csr *out, clmg_error *error);
/** out = a, a copy of its arrays. */
CLMG_API clmg_status clmg_csr_copy(const clmg_csr *a, clmg_csr *out, clmg_error *error);
/** out = rows [first, first + count) of a, with all of a's columns (one
 * process's block of rows of a distributed matrix). */
CLMG_API clmg_status clmg_csr_row_block(const clmg_csr *a, size_t first, size_t count,
                                        clmg_csr *out, clmg_error *error);
/** out = a^T */
CLMG_API clmg_status clmg_csr_transpose(const clmg_csr *a, clmg_csr *out, clmg_error *error);
/** out = a b (Gustavson's row-by-row product; rows sorted; entries that
 * cancel to 0 are kept). */
CLMG_API clmg_status clmg_csr_multiply(const clmg_csr *a, const clmg_csr *b, clmg_csr *out,
                                       clmg_error *error);
/** diagonal[i] = a(i,i) (0 where absent), for i < min(rows, cols). */
CLMG_API clmg_status clmg_csr_diagonal(const clmg_csr *a, double *diagonal, clmg_error *error);
/** y = alpha a x + beta y on the host (the reference for the device kernels);
 * beta == 0: y is not read. */
CLMG_API void clmg_csr_spmv_host(double alpha, const clmg_csr *a, const double *x, double beta,
                                 double *y);
/** out(i, j) = a(row_perm[i], col_perm[j]): row_perm[new] = old. Either
 * permutation may be NULL (identity). Permutations are checked. */
CLMG_API clmg_status clmg_csr_permute(const clmg_csr *a, const int32_t *row_perm,
                                      const int32_t *col_perm, clmg_csr *out, clmg_error *error);
/** 1 when |a_ij - a_ji| <= tol * max(|a_ij|, |a_ji|) for all entries (a
 * missing mirror counts as 0); 0 otherwise, and for non-square or malformed
 * matrices. */
CLMG_API int clmg_csr_is_symmetric(const clmg_csr *a, double relative_tolerance);

/** Reads a Matrix Market file into out. Reads coordinate and array files (real, integer, pattern;
 * general, symmetric, skew-symmetric) into CSR, symmetric ones expanded to both triangles (an entry
 * above the diagonal is mirrored like one below). A malformed file is rejected with "FILE:LINE:
 * what was expected"; out is then left empty. Numbers are read and written in the "C" locale
 * whatever the application's locale is. The writers replace an earlier file at path only once the
 * new one is complete (clmg/output_file.h): a failed write leaves it as it was. */
CLMG_API clmg_status clmg_csr_read_matrix_market(const char *path, clmg_csr *out,
                                                 clmg_error *error);
/** The storage a Matrix Market file's banner names. */
typedef enum clmg_mm_format {
  CLMG_MM_COORDINATE, /**< one line per stored entry: row, column, value */
  CLMG_MM_ARRAY       /**< every position of the stored part, column by column */
} clmg_mm_format;
/** The field a Matrix Market file's banner names (complex is refused). */
typedef enum clmg_mm_field {
  CLMG_MM_REAL,    /**< real values */
  CLMG_MM_INTEGER, /**< integer values */
  CLMG_MM_PATTERN  /**< no values: each entry is 1 */
} clmg_mm_field;
/** The symmetry a Matrix Market file's banner names (hermitian is refused). */
typedef enum clmg_mm_symmetry {
  CLMG_MM_GENERAL,       /**< every entry stored */
  CLMG_MM_SYMMETRIC,     /**< a(j, i) = a(i, j), one of each pair stored */
  CLMG_MM_SKEW_SYMMETRIC /**< a(j, i) = -a(i, j), no diagonal */
} clmg_mm_symmetry;

/** What the banner and size line of a Matrix Market file say, and where its entries begin. */
typedef struct clmg_mm_header {
  clmg_mm_format format;     /**< coordinate or array */
  clmg_mm_field field;       /**< real, integer or pattern */
  clmg_mm_symmetry symmetry; /**< general, symmetric or skew-symmetric */
  size_t rows;               /**< rows (at most INT32_MAX) */
  size_t cols;               /**< columns (at most INT32_MAX) */
  size_t entries;            /**< entry lines the size line announces (array: implied) */
  size_t size_line;          /**< the size line's number (1-based), for messages */
  uint64_t data_offset;      /**< the byte offset of the line after the size line */
} clmg_mm_header;

/** Reads the banner and size line of a Matrix Market file (the checks of
 * clmg_csr_read_matrix_market: "FILE:LINE: ..." on a bad one). Reads no entry. */
CLMG_API clmg_status clmg_mm_read_header(const char *path, clmg_mm_header *header,
                                         clmg_error *error);

/** Entries parsed from part of a Matrix Market coordinate file (clmg_mm_read_entries). */
typedef struct clmg_mm_entries {
  int64_t *rows;      /**< 0-based row of each entry (malloc'ed) */
  int64_t *cols;      /**< 0-based column of each entry */
  double *values;     /**< value of each entry (1 for pattern files) */
  size_t count;       /**< entries, mirrors of symmetric files included */
  size_t entry_lines; /**< entry lines parsed (count without the mirrors) */
  size_t lines;       /**< lines that start in the range, blank and comment lines included */
} clmg_mm_entries;

/** Parses the lines of a coordinate file (header from clmg_mm_read_header
 * of the same file) that start in bytes [begin, end) of its entry section
 * (begin below header->data_offset counts from it): a line belongs to the
 * range its first byte lies in, so ranges that tile the file parse each line
 * once. The first line of the range is numbered first_line in messages
 * ("FILE:LINE: ..."). Entries are checked as clmg_csr_read_matrix_market
 * checks them (indices in range, finite values, nothing after an entry,
 * more entry lines than header->entries refused); those of symmetric and
 * skew-symmetric files come with their mirrors. What it holds grows with the
 * lines it parses, never with what the header claims. Free *entries with
 * clmg_mm_entries_free (it is empty after a failure). */
CLMG_API clmg_status clmg_mm_read_entries(const char *path, const clmg_mm_header *header,
                                          uint64_t begin, uint64_t end, size_t first_line,
                                          clmg_mm_entries *entries, clmg_error *error);
/** Frees the arrays of entries and zeroes it. NULL is fine. */
CLMG_API void clmg_mm_entries_free(clmg_mm_entries *entries);

/** Whether a coordinate file's shape is in proportion to the entries it
 * holds (`entries`; `distinct`: nonzero when they are the entries left once
 * duplicates are summed, for the message): at most 2^20 + 8 x entries rows
 * and columns, the rule clmg_csr_read_matrix_market applies, so that no
 * allocation is sized by a size line alone. CLMG_ERROR_PARSE at the size
 * line of path when not. */
CLMG_API clmg_status clmg_mm_check_shape(const char *path, const clmg_mm_header *header,
                                         size_t entries, int distinct, clmg_error *error);
/** Writes a as a Matrix Market coordinate real general file (1-based indices, values
 * with 17 significant digits, so that they read back bit for bit); a matrix without
 * arrays is CLMG_ERROR_INVALID_ARGUMENT, a failed write CLMG_ERROR_IO. */
CLMG_API clmg_status clmg_csr_write_matrix_market(const char *path, const clmg_csr *a,
                                                  clmg_error *error);
/** Dense vectors as Matrix Market array files (n x 1 or 1 x n, real or
 * integer; n x 1 coordinate files are read too). *values is malloc'ed. */
CLMG_API clmg_status clmg_read_matrix_market_vector(const char *path, double **values, size_t *n,
                                                    clmg_error *error);
/** Writes n values as an n x 1 Matrix Market array file (real general). */
CLMG_API clmg_status clmg_write_matrix_market_vector(const char *path, const double *values,
                                                     size_t n, clmg_error *error);
/** A dense rows x cols matrix, values row-major (values[i * cols + j]), as a
 * Matrix Market array file (real general, column by column as the format
 * lists them); the vector writer is its cols = 1 case. */
CLMG_API clmg_status clmg_write_matrix_market_array(const char *path, const double *values,
                                                    size_t rows, size_t cols, clmg_error *error);

/* ---- device matrices ---- */

/** The storage of a device matrix (docs/algorithms.md compares them). */
typedef enum clmg_matrix_format {
  CLMG_FORMAT_AUTO = 0, /**< chosen per device and matrix (see clmg_matrix_create) */
  CLMG_FORMAT_CSR,      /**< CSR with a vector kernel for long rows */
  CLMG_FORMAT_ELLR,     /**< ELLPACK-R (column-major, row lengths), T threads per row */
  CLMG_FORMAT_SELL,     /**< SELL-C-sigma: slices of C rows sorted within windows of sigma */
  /** CSR arrays with CSR-Adaptive's kernel (Greathouse and Daga 2014): a work-group per block
   * of rows of about the same entries, for rows of very different lengths */
  CLMG_FORMAT_CSR_ADAPTIVE,
  /** ELLPACK-R or SELL-C-sigma for the rows up to 8 mean rows (and 256 entries; csr_vector_min
   * sets the limit), CSR cut into segments of a work-group each for the longer rows. Laid
   * out on the device as clmg_matrix_create_from_device lays matrices out (its values can
   * be updated, whichever constructor made it) */
  CLMG_FORMAT_HYBRID
} clmg_matrix_format;

/** The format's name: "auto", "csr", "ellr", "sell", "csr-adaptive" or "hybrid" (a static
 * string). */
CLMG_API const char *clmg_matrix_format_name(clmg_matrix_format format);
/** Parses "auto", "csr", "ellr", "sell", "csr-adaptive", "hybrid"; returns 0 on an unknown
 * name. */
CLMG_API int clmg_matrix_format_parse(const char *name, clmg_matrix_format *format);

/** How clmg_matrix_create lays out a matrix; 0 in a field means the automatic choice. */
typedef struct clmg_matrix_options {
  clmg_matrix_format format; /**< CLMG_FORMAT_AUTO (default): chosen per device and matrix */
  clmg_dtype precision;      /**< CLMG_DOUBLE (default) or CLMG_FLOAT */
  unsigned ellr_threads;     /**< ELLR-T threads per row: 1, 2, 4, 8, 16 or 32; 0 = auto */
  unsigned sell_slice;       /**< SELL C; 0 = the device's SIMD/warp width */
  unsigned sell_sigma;       /**< SELL sorting window in rows; 0 = auto, 1 = no sorting */
  unsigned csr_vector_min;   /**< rows longer than this are cut into segments (CSR,
                              * CSR-Adaptive) or are the hybrid's long rows; 0 = auto */
  unsigned csr_lanes;        /**< CSR work-items per row: 1, 2, ..., 32; 0 = auto */
} clmg_matrix_options;

/** The defaults: the automatic format in double precision, every tuning field 0 (auto).
 * A NULL options does nothing. */
CLMG_API void clmg_matrix_options_defaults(clmg_matrix_options *options);

/** A sparse matrix on the device in one of the formats, with the SpMV family (opaque). */
typedef struct clmg_matrix clmg_matrix;

/** Uploads a host CSR matrix to the device in the requested format. The
 * device copy is independent of a. */
CLMG_API clmg_status clmg_matrix_create(clmg_context *context, const clmg_csr *a,
                                        const clmg_matrix_options *options, clmg_matrix **matrix);
/** A matrix from CSR arrays that already live on the device (assembled or
 * multiplied there): row_ptr holds rows + 1 int64 offsets, col int32 column
 * indices (sorted and unique within each row: the caller's contract; their
 * range is checked), values doubles or floats (converted to
 * options->precision on the device). The format is chosen, checked and laid
 * out on the device from the row offsets: a few counts come to the host
 * (the longest row, the stored entries of a SELL layout), never an array.
 * The matrix copies what it needs: the arrays stay the caller's. An
 * ELLPACK-R or SELL-C-sigma matrix keeps the pattern and a map of its
 * layout on the device (about 12 bytes per entry more than a matrix from
 * host CSR), so that its values can be updated in place; a CSR matrix is
 * its own pattern and needs none. */
CLMG_API clmg_status clmg_matrix_create_from_device(clmg_context *context, size_t rows, size_t cols,
                                                    const clmg_vector *row_ptr,
                                                    const clmg_vector *col,
                                                    const clmg_vector *values,
                                                    const clmg_matrix_options *options,
                                                    clmg_matrix **matrix);
/** New values for a matrix from clmg_matrix_create_from_device, in the CSR
 * order it was made from, keeping its pattern: nnz host doubles, or a device
 * vector of nnz doubles or floats. A matrix laid out from host CSR is
 * refused (CLMG_ERROR_UNSUPPORTED); a hybrid one (CLMG_FORMAT_HYBRID) is
 * always laid out on the device and takes updates. Afterwards call
 * clmg_multigrid_refresh on a hierarchy that uses the matrix. */
CLMG_API clmg_status clmg_matrix_update_values(clmg_matrix *matrix, const double *values);
/** The same from a device vector of nnz doubles or floats in the matrix's context
 * (CLMG_ERROR_INVALID_ARGUMENT otherwise), moved into the layout on the device. */
CLMG_API clmg_status clmg_matrix_update_values_device(clmg_matrix *matrix,
                                                      const clmg_vector *values);
/** Frees the matrix's device arrays. NULL does nothing. */
CLMG_API void clmg_matrix_destroy(clmg_matrix *matrix);

/** CSR arrays on the device: a matrix made or multiplied on the device (assembly, transfers,
 * Galerkin products) before it becomes a clmg_matrix: row_ptr holds rows + 1 int64 offsets, col
 * int32 columns (sorted and unique within each row), val the values (double, or float on devices
 * without fp64). Pass the arrays to clmg_matrix_create_from_device for any format. */
typedef struct clmg_csr_device {
  size_t rows;          /**< number of rows */
  size_t cols;          /**< number of columns */
  clmg_vector *row_ptr; /**< rows + 1 offsets (CLMG_INT64) */
  clmg_vector *col;     /**< the column of each entry (CLMG_INT32) */
  clmg_vector *val;     /**< the value of each entry (CLMG_DOUBLE or CLMG_FLOAT) */
} clmg_csr_device;

/** Entries (row_ptr's last offset, kept on the host when the arrays are
 * made); 0 for an empty struct. */
CLMG_API size_t clmg_csr_device_nnz(const clmg_csr_device *a);
/** Destroys the three vectors and zeroes a (a may be NULL or empty). */
CLMG_API void clmg_csr_device_free(clmg_csr_device *a);
/** out = a^T, on the device: column counts, their offsets (a prefix sum on
 * the device; only the entry count comes back), a scatter and a sort of
 * each row, so the result is the same on every run. out is overwritten
 * without being freed and is zero after a failure. */
CLMG_API clmg_status clmg_csr_device_transpose(clmg_context *context, const clmg_csr_device *a,
                                               clmg_csr_device *out);
/** out = the listed rows of a with their columns renamed, on the device: row k of out is
 * row rows[k] of a (rows: int32, each within a's rows), column c of it becoming
 * col_map[c] (col_map: int32, at least a->cols entries, each a row's names within
 * 0..cols - 1 and distinct: the caller's contract, as the columns' uniqueness is
 * clmg_matrix_create_from_device's), then each row sorted by its new columns (the
 * sorts of clmg_csr_device_transpose). Values are copied, not summed: the result is the
 * same on every run. A listed row outside a, or a column mapped outside 0..cols - 1,
 * fails with the lowest such k named (CLMG_ERROR_INVALID_ARGUMENT). Neither rows nor
 * col_map may be a view. out is overwritten without being freed and is zero after a
 * failure. For a process's rows of a matrix built in pieces, renumbered into the
 * global numbering without leaving the device. */
CLMG_API clmg_status clmg_csr_device_gather_rows(clmg_context *context, const clmg_csr_device *a,
                                                 const clmg_vector *rows,
                                                 const clmg_vector *col_map, size_t cols,
                                                 clmg_csr_device *out);
/** Splits each row of a by column, on the device: *inside gets the entries with columns
 * in [begin, end) (columns less begin; end - begin columns), *outside the others (their
 * own columns; a->cols columns), both with a->rows rows and each row's entries in a's
 * order (a count, two prefix sums, a fill; one host wait for the two totals). For a
 * distributed matrix's local and off-process blocks. Both are overwritten without being
 * freed and are zero after a failure. */
CLMG_API clmg_status clmg_csr_device_split_columns(clmg_context *context, const clmg_csr_device *a,
                                                   size_t begin, size_t end,
                                                   clmg_csr_device *inside,
                                                   clmg_csr_device *outside);
/** out = a b on the device (Gustavson's product, a row of C per work-item:
 * a count pass, the offsets (a prefix sum on the device), the sorted
 * columns, then the values summed in the order of clmg_csr_multiply, so
 * both give the same sums). Where the rows of b that a names hold at most
 * one entry each (an AMG tentative prolongator of one candidate) and no
 * row of the result has more than 64 columns, one pass counts and one
 * fills columns and values, summed in the same order: the same result.
 * Both value arrays must be of one precision. */
CLMG_API clmg_status clmg_csr_device_multiply(clmg_context *context, const clmg_csr_device *a,
                                              const clmg_csr_device *b, clmg_csr_device *out);
/** The device arrays of a host CSR matrix, values in `precision`. */
CLMG_API clmg_status clmg_csr_device_upload(clmg_context *context, const clmg_csr *a,
                                            clmg_dtype precision, clmg_csr_device *out);
/** A host copy (values as doubles), for checks and output. */
CLMG_API clmg_status clmg_csr_device_download(const clmg_csr_device *a, clmg_csr *out,
                                              clmg_error *error);

/** The context the matrix was made in (NULL for NULL). */
CLMG_API clmg_context *clmg_matrix_context(const clmg_matrix *matrix);
/** The number of rows (0 for NULL). */
CLMG_API size_t clmg_matrix_rows(const clmg_matrix *matrix);
/** The number of columns (0 for NULL). */
CLMG_API size_t clmg_matrix_cols(const clmg_matrix *matrix);
/** The number of nonzero entries, padding not counted (0 for NULL). */
CLMG_API size_t clmg_matrix_nnz(const clmg_matrix *matrix);
/** Stored entries including padding (ELLR, SELL); equals nnz for CSR. */
CLMG_API size_t clmg_matrix_stored_entries(const clmg_matrix *matrix);
/** The format the matrix was laid out in (never CLMG_FORMAT_AUTO but for NULL). */
CLMG_API clmg_matrix_format clmg_matrix_format_of(const clmg_matrix *matrix);
/** The precision of its values, CLMG_DOUBLE or CLMG_FLOAT (CLMG_DOUBLE for NULL). */
CLMG_API clmg_dtype clmg_matrix_precision(const clmg_matrix *matrix);
/** Device bytes of the matrix arrays (what one SpMV must read at least). */
CLMG_API size_t clmg_matrix_device_bytes(const clmg_matrix *matrix);
/** A one-line description, e.g. "sell C=32 sigma=256". */
CLMG_API const char *clmg_matrix_describe(const clmg_matrix *matrix);

/** y = alpha A x + beta y (beta == 0: y is not read). Vectors have the
 * matrix's precision; x has cols elements, y rows. */
CLMG_API clmg_status clmg_spmv(double alpha, const clmg_matrix *a, const clmg_vector *x,
                               double beta, clmg_vector *y);
/** r = b - A x */
CLMG_API clmg_status clmg_defect(const clmg_matrix *a, const clmg_vector *b, const clmg_vector *x,
                                 clmg_vector *r);
/** x_new = x + omega D^-1 (b - A x), with inv_diagonal = 1 / diag(A).
 * x_new must not alias x (every row reads the old x). */
CLMG_API clmg_status clmg_jacobi_step(const clmg_matrix *a, double omega,
                                      const clmg_vector *inv_diagonal, const clmg_vector *b,
                                      const clmg_vector *x, clmg_vector *x_new);
/** The first two damped Jacobi sweeps from x = 0 in one pass:
 * x_new = y + omega D^-1 (b - A y) with y = omega D^-1 b, formed where it is
 * read and never stored (a pass and a launch fewer than a pointwise product
 * then clmg_jacobi_step, with the same result bit for bit). x_new must not
 * alias b or inv_diagonal. Every format does it (CSR's long-row segments
 * too, since 0.2.0). */
CLMG_API clmg_status clmg_jacobi_step_from_zero(const clmg_matrix *a, double omega,
                                                const clmg_vector *inv_diagonal,
                                                const clmg_vector *b, clmg_vector *x_new);
/** d = beta d + alpha w .* (b - A x): the step of polynomial (Chebyshev)
 * smoothers, one pass (beta == 0: d is not read). d must not alias x. */
CLMG_API clmg_status clmg_scaled_defect(const clmg_matrix *a, double alpha,
                                        const clmg_vector *weights, const clmg_vector *b,
                                        const clmg_vector *x, double beta, clmg_vector *d);
/** diagonal[i] = a_ii (0 where absent), square matrices. */
CLMG_API clmg_status clmg_matrix_diagonal(const clmg_matrix *a, clmg_vector *diagonal);
/** out[i] = sum_j a_ij^2, square matrices. */
CLMG_API clmg_status clmg_matrix_row_sum_squares(const clmg_matrix *a, clmg_vector *out);
/** inv_diagonal = 1 / diag(A) (square matrices). A zero diagonal entry fails. */
CLMG_API clmg_status clmg_matrix_inverse_diagonal(const clmg_matrix *a, clmg_vector *inv_diagonal);

#ifdef __cplusplus
}
#endif

#endif
