/* Host CSR matrices: building from triplets, copy, transpose, permutation,
 * diagonal, a reference SpMV and a symmetry test. Host code only (no OpenCL).
 *
 * The builders are linear, with counting sorts as in CSparse, so they stay
 * fast for the 10^7-entry matrices of the benchmarks: from_triplets in
 * O(nnz + rows) (per-row sorts replace the column counting sort for
 * hyper-sparse shapes), transpose and permute in O(nnz + rows + cols). Outputs are built in locals
 * and handed over only on success: after a failure `out` is zeroed and owns nothing. A built matrix
 * always has non-NULL arrays (at least one element allocated), so callers never need to
 * special-case an empty matrix. */
#include "la/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* Allocates the three arrays of a rows x cols matrix with nnz entries;
 * row_ptr is zeroed. */
static clmg_status allocate_csr(size_t rows, size_t cols, size_t nnz, clmg_csr *a,
                                clmg_error *error) {
  memset(a, 0, sizeof *a);
  a->rows = rows;
  a->cols = cols;
  a->row_ptr = rows < SIZE_MAX ? clmg_alloc_zeroed_array(rows + 1, sizeof *a->row_ptr) : NULL;
  a->col = clmg_alloc_array(nnz, sizeof *a->col);
  a->val = clmg_alloc_array(nnz, sizeof *a->val);
  if (!a->row_ptr || !a->col || !a->val) {
    clmg_csr_free(a);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate a %zu x %zu CSR matrix with %zu entries", rows, cols,
                          nnz);
  }
  return CLMG_SUCCESS;
}

/* Column indices are int32, and so are permutations and the row indices of
 * triplets; a transpose turns rows into columns, so both dimensions share the
 * limit. */
static clmg_status check_dimensions(size_t rows, size_t cols, clmg_error *error) {
  if (rows > INT32_MAX || cols > INT32_MAX)
    return clmg_error_set(
        error, CLMG_ERROR_INVALID_ARGUMENT,
        "a %zu x %zu matrix exceeds the 32-bit index limit of %d rows and columns", rows, cols,
        INT32_MAX);
  return CLMG_SUCCESS;
}

/* A row with a column outside [0, cols) or not after the one before it
 * (clmg_host_first_flagged). */
static int row_malformed(const void *data, size_t i) {
  const clmg_csr *a = data;
  int64_t previous = -1;
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
    int32_t column = a->col[k];
    if (column < 0 || (size_t)column >= a->cols || column <= previous)
      return 1;
    previous = column;
  }
  return 0;
}

/* Checks that a is a well-formed CSR matrix: the invariants every function
 * here relies on. O(nnz), cheap next to the operations that call it; the
 * rows' columns on the host's cores (the first bad row is the serial
 * walk's), as every solver setup checks its matrix of millions of entries
 * (clmg_csr_is_symmetric). */
clmg_status clmg_csr_check(const clmg_csr *a, clmg_error *error) {
  if (!a)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the matrix is NULL");
  clmg_status status = check_dimensions(a->rows, a->cols, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (!a->row_ptr)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %zu x %zu matrix has no row_ptr array", a->rows, a->cols);
  if (a->row_ptr[0] != 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "row_ptr[0] is %lld, expected 0",
                          (long long)a->row_ptr[0]);
  for (size_t i = 0; i < a->rows; i++)
    if (a->row_ptr[i + 1] < a->row_ptr[i])
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "row_ptr decreases at row %zu (%lld after %lld)", i,
                            (long long)a->row_ptr[i + 1], (long long)a->row_ptr[i]);
  if (a->row_ptr[a->rows] > 0 && (!a->col || !a->val))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the matrix has %lld entries but no col or val array",
                          (long long)a->row_ptr[a->rows]);
  size_t first = clmg_host_first_flagged(a->rows, 16384, row_malformed, a);
  for (size_t i = first; i < a->rows; i++) {
    int64_t previous = -1;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      int32_t column = a->col[k];
      if (column < 0 || (size_t)column >= a->cols)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "row %zu has column %d, outside [0, %zu)", i, (int)column, a->cols);
      if (column <= previous)
        return clmg_error_set(
            error, CLMG_ERROR_INVALID_ARGUMENT,
            "row %zu has column %d after column %lld (columns must be sorted and unique)", i,
            (int)column, (long long)previous);
      previous = column;
    }
  }
  return CLMG_SUCCESS;
}

int64_t clmg_csr_find_entry(const clmg_csr *a, size_t i, int32_t j) {
  int64_t low = a->row_ptr[i], high = a->row_ptr[i + 1];
  while (low < high) {
    int64_t middle = low + (high - low) / 2;
    if (a->col[middle] < j)
      low = middle + 1;
    else
      high = middle;
  }
  return low < a->row_ptr[i + 1] && a->col[low] == j ? low : -1;
}

/* Checks that perm is a bijection of [0, n) and fills inverse[perm[k]] = k.
 * `name` names the permutation in the message. */
static clmg_status invert_permutation(const int32_t *perm, size_t n, const char *name,
                                      int32_t *inverse, clmg_error *error) {
  for (size_t k = 0; k < n; k++)
    inverse[k] = -1;
  for (size_t k = 0; k < n; k++) {
    int32_t old = perm[k];
    if (old < 0 || (size_t)old >= n)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "%s[%zu] = %d is outside [0, %zu): not a permutation", name, k,
                            (int)old, n);
    if (inverse[old] >= 0)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "%s[%zu] = %d repeats %s[%d]: not a permutation", name, k, (int)old,
                            name, (int)inverse[old]);
    inverse[old] = (int32_t)k;
  }
  return CLMG_SUCCESS;
}

/* ---- sorting triplets into rows ----
 * Every strategy leaves result->col/val holding the triplets grouped by row,
 * columns ascending within a row and duplicates in input order (so their sum
 * is deterministic), and result->row_ptr holding the row offsets. */

/* Two stable counting sorts, by column and then by row: O(count + rows +
 * cols) time, and cols offsets of memory. */
static clmg_status sort_by_counting(size_t count, const int32_t *row_index,
                                    const int32_t *col_index, const double *values,
                                    clmg_csr *result, clmg_error *error) {
  int64_t *column_start = clmg_alloc_zeroed_array(result->cols + 1, sizeof *column_start);
  size_t *by_column = clmg_alloc_array(count, sizeof *by_column);
  if (!column_start || !by_column) {
    free(column_start);
    free(by_column);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate work arrays for %zu triplets", count);
  }
  for (size_t k = 0; k < count; k++)
    column_start[col_index[k] + 1]++;
  for (size_t j = 0; j < result->cols; j++)
    column_start[j + 1] += column_start[j];
  for (size_t k = 0; k < count; k++)
    by_column[column_start[col_index[k]]++] = k;
  free(column_start);

  /* row_ptr[i] first serves as the fill position of row i, then is shifted
   * back into the offsets. */
  int64_t *row_ptr = result->row_ptr;
  for (size_t k = 0; k < count; k++)
    row_ptr[row_index[k] + 1]++;
  for (size_t i = 0; i < result->rows; i++)
    row_ptr[i + 1] += row_ptr[i];
  for (size_t m = 0; m < count; m++) {
    size_t k = by_column[m];
    int64_t position = row_ptr[row_index[k]]++;
    result->col[position] = col_index[k];
    result->val[position] = values[k];
  }
  free(by_column);
  for (size_t i = result->rows; i > 0; i--)
    row_ptr[i] = row_ptr[i - 1];
  row_ptr[0] = 0;
  return CLMG_SUCCESS;
}

/* Rows no longer than this are sorted by insertion (sort_by_short_rows). */
#define SHORT_ROW_MAX 64

/* A counting sort by row straight into result, then a stable insertion sort
 * of each row by column: one scattered pass over the triplets instead of two,
 * the sorts in cache. For rows of at most SHORT_ROW_MAX triplets (finite
 * element matrices), where the insertion sorts cost O(count SHORT_ROW_MAX)
 * at worst and about count in practice. Equal columns keep their input
 * order, so the result is that of sort_by_counting bit for bit. */
static void sort_by_short_rows(size_t count, const int32_t *row_index, const int32_t *col_index,
                               const double *values, clmg_csr *result) {
  int64_t *row_ptr = result->row_ptr;
  for (size_t k = 0; k < count; k++)
    row_ptr[row_index[k] + 1]++;
  for (size_t i = 0; i < result->rows; i++)
    row_ptr[i + 1] += row_ptr[i];
  for (size_t k = 0; k < count; k++) {
    int64_t position = row_ptr[row_index[k]]++;
    result->col[position] = col_index[k];
    result->val[position] = values[k];
  }
  for (size_t i = result->rows; i > 0; i--)
    row_ptr[i] = row_ptr[i - 1];
  row_ptr[0] = 0;
  for (size_t i = 0; i < result->rows; i++)
    clmg_sort_row_entries(result->col + row_ptr[i], result->val + row_ptr[i],
                          (size_t)(row_ptr[i + 1] - row_ptr[i]));
}

void clmg_sort_row_entries(int32_t *col, double *val, size_t count) {
  for (size_t m = 1; m < count; m++) {
    int32_t c = col[m];
    double v = val[m];
    size_t j = m;
    for (; j > 0 && col[j - 1] > c; j--) {
      col[j] = col[j - 1];
      val[j] = val[j - 1];
    }
    col[j] = c;
    val[j] = v;
  }
}

/* The length of the longest row of the triplets (row_ptr: zeroed, rows + 1
 * entries, used for the counts and zeroed again). */
static size_t longest_row(size_t count, const int32_t *row_index, size_t rows, int64_t *row_ptr) {
  for (size_t k = 0; k < count; k++)
    row_ptr[row_index[k] + 1]++;
  int64_t longest = 0;
  for (size_t i = 1; i <= rows; i++) {
    if (row_ptr[i] > longest)
      longest = row_ptr[i];
    row_ptr[i] = 0;
  }
  return (size_t)longest;
}

typedef struct column_key {
  int32_t col;
  size_t input; /* position among the triplets: ties keep input order */
} column_key;

static int compare_column_keys(const void *left, const void *right) {
  const column_key *a = left, *b = right;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return a->input < b->input ? -1 : a->input > b->input;
}

/* A counting sort by row, then a comparison sort within each row: O(count
 * log(row length) + rows), no memory proportional to cols. For hyper-sparse
 * shapes (far more columns than entries), where cols offsets would dominate. */
static clmg_status sort_by_rows(size_t count, const int32_t *row_index, const int32_t *col_index,
                                const double *values, clmg_csr *result, clmg_error *error) {
  column_key *keys = clmg_alloc_array(count, sizeof *keys);
  if (!keys)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate work arrays for %zu triplets", count);
  int64_t *row_ptr = result->row_ptr;
  for (size_t k = 0; k < count; k++)
    row_ptr[row_index[k] + 1]++;
  for (size_t i = 0; i < result->rows; i++)
    row_ptr[i + 1] += row_ptr[i];
  for (size_t k = 0; k < count; k++) {
    column_key key = {col_index[k], k};
    keys[row_ptr[row_index[k]]++] = key;
  }
  for (size_t i = result->rows; i > 0; i--)
    row_ptr[i] = row_ptr[i - 1];
  row_ptr[0] = 0;
  for (size_t i = 0; i < result->rows; i++)
    qsort(keys + row_ptr[i], (size_t)(row_ptr[i + 1] - row_ptr[i]), sizeof *keys,
          compare_column_keys);
  for (size_t k = 0; k < count; k++) {
    result->col[k] = keys[k].col;
    result->val[k] = values[keys[k].input];
  }
  free(keys);
  return CLMG_SUCCESS;
}

/* Sums adjacent duplicates of sorted rows in place and returns the entries
 * kept. */
static int64_t merge_duplicates(clmg_csr *a) {
  int64_t kept = 0;
  for (size_t i = 0; i < a->rows; i++) {
    int64_t begin = a->row_ptr[i], end = a->row_ptr[i + 1];
    a->row_ptr[i] = kept;
    for (int64_t k = begin; k < end; k++) {
      if (kept > a->row_ptr[i] && a->col[kept - 1] == a->col[k]) {
        a->val[kept - 1] += a->val[k];
      } else {
        a->col[kept] = a->col[k];
        a->val[kept] = a->val[k];
        kept++;
      }
    }
  }
  a->row_ptr[a->rows] = kept;
  return kept;
}

/* ---- public functions ---- */

void clmg_csr_free(clmg_csr *a) {
  if (!a)
    return;
  free(a->row_ptr);
  free(a->col);
  free(a->val);
  memset(a, 0, sizeof *a);
}

clmg_status clmg_csr_from_triplets(size_t rows, size_t cols, size_t count, const int32_t *row_index,
                                   const int32_t *col_index, const double *values, clmg_csr *out,
                                   clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  clmg_status status = check_dimensions(rows, cols, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (count > 0 && (!row_index || !col_index || !values))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu triplets but row_index, col_index or values is NULL", count);
  if (count > (size_t)INT64_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu triplets do not fit 64-bit offsets", count);
  for (size_t k = 0; k < count; k++) {
    if (row_index[k] < 0 || (size_t)row_index[k] >= rows)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "triplet %zu has row index %d, outside [0, %zu)", k, (int)row_index[k],
                            rows);
    if (col_index[k] < 0 || (size_t)col_index[k] >= cols)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "triplet %zu has column index %d, outside [0, %zu)", k,
                            (int)col_index[k], cols);
  }

  clmg_csr result;
  status = allocate_csr(rows, cols, count, &result, error);
  if (status != CLMG_SUCCESS)
    return status;
  /* Linear in count + rows either way: the counting sort whenever its
   * column offsets cost no more than that. */
  if (longest_row(count, row_index, rows, result.row_ptr) <= SHORT_ROW_MAX)
    sort_by_short_rows(count, row_index, col_index, values, &result);
  else if (cols <= count + rows)
    status = sort_by_counting(count, row_index, col_index, values, &result, error);
  else
    status = sort_by_rows(count, row_index, col_index, values, &result, error);
  if (status != CLMG_SUCCESS) {
    clmg_csr_free(&result);
    return status;
  }
  int64_t kept = merge_duplicates(&result);
  if ((size_t)kept < count) {
    /* Give back the space of the merged duplicates; a failed shrink keeps
     * the larger, still valid block. */
    size_t keep = kept > 0 ? (size_t)kept : 1;
    int32_t *col = realloc(result.col, keep * sizeof *col);
    if (col)
      result.col = col;
    double *val = realloc(result.val, keep * sizeof *val);
    if (val)
      result.val = val;
  }
  *out = result;
  return CLMG_SUCCESS;
}

/* The common start of every function that makes a new matrix from a: out
 * is checked and zeroed (so it is empty after any failure) and a is checked. */
static clmg_status begin_output(const clmg_csr *a, clmg_csr *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  if (out == a)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out must not be the input matrix");
  memset(out, 0, sizeof *out);
  return clmg_csr_check(a, error);
}

clmg_status clmg_csr_copy(const clmg_csr *a, clmg_csr *out, clmg_error *error) {
  clmg_status status = begin_output(a, out, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t nnz = clmg_csr_nnz(a);
  clmg_csr result;
  status = allocate_csr(a->rows, a->cols, nnz, &result, error);
  if (status != CLMG_SUCCESS)
    return status;
  memcpy(result.row_ptr, a->row_ptr, (a->rows + 1) * sizeof *a->row_ptr);
  if (nnz > 0) {
    memcpy(result.col, a->col, nnz * sizeof *a->col);
    memcpy(result.val, a->val, nnz * sizeof *a->val);
  }
  *out = result;
  return CLMG_SUCCESS;
}

clmg_status clmg_csr_row_block(const clmg_csr *a, size_t first, size_t count, clmg_csr *out,
                               clmg_error *error) {
  clmg_status status = begin_output(a, out, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (first > a->rows || count > a->rows - first)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "rows %zu to %zu of a matrix of %zu rows", first, first + count, a->rows);
  int64_t begin = a->row_ptr[first];
  size_t nnz = (size_t)(a->row_ptr[first + count] - begin);
  clmg_csr result;
  status = allocate_csr(count, a->cols, nnz, &result, error);
  if (status != CLMG_SUCCESS)
    return status;
  for (size_t i = 0; i <= count; ++i)
    result.row_ptr[i] = a->row_ptr[first + i] - begin;
  if (nnz > 0) {
    memcpy(result.col, a->col + begin, nnz * sizeof *a->col);
    memcpy(result.val, a->val + begin, nnz * sizeof *a->val);
  }
  *out = result;
  return CLMG_SUCCESS;
}

clmg_status clmg_csr_transpose(const clmg_csr *a, clmg_csr *out, clmg_error *error) {
  clmg_status status = begin_output(a, out, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t nnz = clmg_csr_nnz(a);
  clmg_csr result;
  status = allocate_csr(a->cols, a->rows, nnz, &result, error);
  if (status != CLMG_SUCCESS)
    return status;
  /* Counting sort by column; walking the rows in order leaves each row of
   * the transpose sorted. */
  int64_t *row_ptr = result.row_ptr;
  for (size_t k = 0; k < nnz; k++)
    row_ptr[a->col[k] + 1]++;
  for (size_t j = 0; j < a->cols; j++)
    row_ptr[j + 1] += row_ptr[j];
  for (size_t i = 0; i < a->rows; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      int64_t position = row_ptr[a->col[k]]++;
      result.col[position] = (int32_t)i;
      result.val[position] = a->val[k];
    }
  for (size_t j = a->cols; j > 0; j--)
    row_ptr[j] = row_ptr[j - 1];
  row_ptr[0] = 0;
  *out = result;
  return CLMG_SUCCESS;
}

/* Gustavson's row-by-row product, as in CSparse's cs_multiply: a marker per
 * column of B says where row i of C holds it, if it does; each row's columns
 * are sorted at the end (insertion for the short rows of Galerkin
 * products, a quicksort for long ones, which can come from a few dense
 * rows). */
void clmg_sort_int32(int32_t *values, size_t count) {
  for (size_t i = 1; i < count; i++) {
    int32_t value = values[i];
    size_t j = i;
    while (j > 0 && values[j - 1] > value) {
      values[j] = values[j - 1];
      j--;
    }
    values[j] = value;
  }
}

/* Rows no longer than this are sorted by insertion (sort_columns). */
#define INSERTION_SORT_MAX 32

/* Sorts distinct column indices ascending: quicksort (Hoare's partition
 * about the median of three, moved to the front) down to parts of
 * INSERTION_SORT_MAX, which insertion finishes; the smaller part first and
 * the larger kept on a stack, so it holds at most log2(count) parts. The
 * product's longer rows (a coarse Galerkin level's 40 to 60 columns) spent
 * more time in qsort's calls of the comparison than in this. */
static void sort_columns(int32_t *col, size_t count) {
  size_t stack[2 * 64], top = 0, low = 0, high = count; /* the part [low, high) */
  for (;;) {
    while (high - low > INSERTION_SORT_MAX) {
      size_t middle = low + (high - low) / 2, last = high - 1;
      int32_t x = col[low], y = col[middle], z = col[last];
      size_t median = (x < y) == (y < z) ? middle : (y < x) == (x < z) ? low : last;
      int32_t pivot = col[median];
      col[median] = col[low];
      col[low] = pivot;
      /* Hoare: with the pivot first, j stops in [low, high - 2] */
      size_t i = low - 1, j = high;
      for (;;) {
        do
          i++;
        while (col[i] < pivot);
        do
          j--;
        while (col[j] > pivot);
        if (i >= j)
          break;
        int32_t swap = col[i];
        col[i] = col[j];
        col[j] = swap;
      }
      /* [low, j + 1) and [j + 1, high): the larger one waits */
      if (j + 1 - low < high - j - 1) {
        stack[top++] = j + 1;
        stack[top++] = high;
        high = j + 1;
      } else {
        stack[top++] = low;
        stack[top++] = j + 1;
        low = j + 1;
      }
    }
    clmg_sort_int32(col + low, high - low);
    if (top == 0)
      return;
    high = stack[--top];
    low = stack[--top];
  }
}

/* The product by rows on all host cores (Gustavson's method) in one pass:
 * each range of rows fills buffers of its own, grown as it goes, and the
 * rows' lengths; the buffers are then laid end to end (the first range's
 * grown in place where realloc can). A pass that only counted each row's
 * columns first, to allocate the result exactly, walked every product
 * twice. Each range has its own column markers (made on its first row),
 * so every row comes out as the serial loop makes it. */
enum { MULTIPLY_GRAIN = 4096 };
/* the most marker bytes the ranges may hold together before the product
 * runs on one core */
#define MULTIPLY_MARKER_BYTES ((size_t)512 << 20)

/* one range's rows: entries [0, used) of col and val */
typedef struct multiply_part {
  int32_t *col;
  double *val;
  size_t used, capacity;
  double *unsorted; /* a row's values before its columns are sorted */
  size_t unsorted_capacity;
  int64_t *marker;
  size_t begin_row, end_row;
  int ran, failed;
} multiply_part;

typedef struct multiply_job {
  const clmg_csr *a, *b;
  int64_t *row_ptr; /* row i's length at i + 1 */
  multiply_part part[CLMG_MAX_HOST_THREADS];
} multiply_job;

/* Room for `more` entries past part->used: the capacity at least doubles,
 * so the copies cost O(entries) in all. Returns 0 without the memory (the
 * part keeps what it had). */
static int reserve_entries(multiply_part *part, size_t more) {
  if (more <= part->capacity - part->used)
    return 1;
  size_t capacity = part->capacity > (SIZE_MAX / 2) ? SIZE_MAX : 2 * part->capacity;
  if (capacity - part->used < more)
    capacity = part->used + more;
  if (capacity < 1024)
    capacity = 1024;
  if (capacity > SIZE_MAX / sizeof(double))
    return 0;
  int32_t *col = realloc(part->col, capacity * sizeof *col);
  if (col)
    part->col = col;
  double *val = col ? realloc(part->val, capacity * sizeof *val) : NULL;
  if (val)
    part->val = val;
  if (!col || !val)
    return 0;
  part->capacity = capacity;
  return 1;
}

static void multiply_range(void *data, size_t range, size_t begin_row, size_t end_row) {
  multiply_job *job = data;
  const clmg_csr *a = job->a, *b = job->b;
  multiply_part *part = &job->part[range];
  part->ran = 1;
  part->begin_row = begin_row;
  part->end_row = end_row;
  part->marker = clmg_alloc_array(b->cols, sizeof *part->marker);
  /* a first guess: as many entries as the rows of a hold */
  if (!part->marker ||
      !reserve_entries(part, (size_t)(a->row_ptr[end_row] - a->row_ptr[begin_row]))) {
    part->failed = 1;
    return;
  }
  int64_t *marker = part->marker;
  for (size_t j = 0; j < b->cols; j++)
    marker[j] = -1;
  /* the arrays in locals: stores through col, val and marker could
   * otherwise change the structs' pointers, reloaded at every entry */
  const int64_t *a_row_ptr = a->row_ptr, *b_row_ptr = b->row_ptr;
  const int32_t *a_col = a->col, *b_col = b->col;
  const double *a_val = a->val, *b_val = b->val;
  for (size_t i = begin_row; i < end_row; i++) {
    /* marker[j]: the place of column j in the current row; the buffers
     * grow where a new column finds them full */
    int32_t *col = part->col;
    double *val = part->val;
    int64_t begin = (int64_t)part->used, end = begin, capacity = (int64_t)part->capacity;
    for (int64_t k = a_row_ptr[i]; k < a_row_ptr[i + 1]; k++) {
      int32_t middle = a_col[k];
      double scale = a_val[k];
      for (int64_t l = b_row_ptr[middle], last = b_row_ptr[middle + 1]; l < last; l++) {
        int32_t j = b_col[l];
        if (marker[j] < begin) {
          if (end == capacity) {
            part->used = (size_t)end;
            if (!reserve_entries(part, 1)) {
              part->failed = 1;
              return;
            }
            col = part->col;
            val = part->val;
            capacity = (int64_t)part->capacity;
          }
          marker[j] = end;
          col[end] = j;
          val[end++] = scale * b_val[l];
        } else {
          val[marker[j]] += scale * b_val[l];
        }
      }
    }
    size_t length = (size_t)(end - begin);
    part->used = (size_t)end;
    job->row_ptr[i + 1] = (int64_t)length;
    /* a short row's entries sorted in place (the columns are distinct);
     * a long row's columns sorted, then each value put where its column
     * went (marker still holds the column's place before the sort) */
    if (length <= INSERTION_SORT_MAX) {
      clmg_sort_row_entries(col + begin, val + begin, length);
      continue;
    }
    if (length > part->unsorted_capacity) {
      size_t room = length > 2 * part->unsorted_capacity ? length : 2 * part->unsorted_capacity;
      free(part->unsorted);
      part->unsorted = clmg_alloc_array(room, sizeof *part->unsorted);
      part->unsorted_capacity = part->unsorted ? room : 0;
      if (!part->unsorted) {
        part->failed = 1;
        return;
      }
    }
    double *unsorted = part->unsorted;
    memcpy(unsorted, val + begin, length * sizeof *unsorted);
    sort_columns(col + begin, length);
    for (int64_t k = begin; k < end; k++)
      val[k] = unsorted[marker[col[k]] - begin];
  }
}

static void multiply_job_free(multiply_job *job) {
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++) {
    free(job->part[r].col);
    free(job->part[r].val);
    free(job->part[r].unsorted);
    free(job->part[r].marker);
  }
}

clmg_status clmg_csr_multiply(const clmg_csr *a, const clmg_csr *b, clmg_csr *out,
                              clmg_error *error) {
  clmg_status status = begin_output(a, out, error);
  if (status == CLMG_SUCCESS && out == b)
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out must not be an input matrix");
  if (status == CLMG_SUCCESS)
    status = clmg_csr_check(b, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (a->cols != b->rows)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cannot multiply a %zu x %zu matrix by a %zu x %zu one", a->rows, a->cols,
                          b->rows, b->cols);
  multiply_job job = {.a = a, .b = b};
  job.row_ptr = clmg_alloc_zeroed_array(a->rows + 1, sizeof *job.row_ptr);
  if (!job.row_ptr)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the product's %zu row offsets", a->rows);
  /* on all cores, or on one where the ranges' markers would take too much
   * memory */
  size_t marker_bytes = (b->cols ? b->cols : 1) * sizeof(int64_t);
  if (marker_bytes <= MULTIPLY_MARKER_BYTES / clmg_host_threads())
    clmg_host_parallel_for(a->rows, MULTIPLY_GRAIN, multiply_range, &job);
  else
    multiply_range(&job, 0, 0, a->rows);
  int ok = 1;
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
    ok = ok && !job.part[r].failed;
  /* the offsets (every part's entries fit its memory, so their sum fits a
   * size_t and, far below, an int64_t) */
  for (size_t i = 0; ok && i < a->rows; i++)
    job.row_ptr[i + 1] += job.row_ptr[i];
  clmg_csr result = {0};
  if (ok) {
    /* the first range (rows from 0) keeps its buffers, grown to the whole
     * product; the others are copied after it (on all cores: most of a copy
     * into fresh memory is the first touch of its pages) */
    size_t nnz = (size_t)job.row_ptr[a->rows];
    multiply_part *first = &job.part[0];
    int32_t *col = realloc(first->col, (nnz ? nnz : 1) * sizeof *col);
    if (col)
      first->col = col;
    double *val = col ? realloc(first->val, (nnz ? nnz : 1) * sizeof *val) : NULL;
    if (val)
      first->val = val;
    ok = col && val;
    if (ok) {
      for (size_t r = 1; r < CLMG_MAX_HOST_THREADS; r++) {
        const multiply_part *part = &job.part[r];
        if (!part->ran || part->used == 0)
          continue;
        int64_t at = job.row_ptr[part->begin_row];
        clmg_host_copy(col + at, part->col, part->used * sizeof *col);
        clmg_host_copy(val + at, part->val, part->used * sizeof *val);
      }
      result = (clmg_csr){a->rows, b->cols, job.row_ptr, col, val};
      job.row_ptr = NULL;
      first->col = NULL;
      first->val = NULL;
    }
  }
  multiply_job_free(&job);
  free(job.row_ptr);
  if (!ok)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the work arrays of a product with %zu rows and %zu "
                          "columns",
                          a->rows, b->cols);
  *out = result;
  return CLMG_SUCCESS;
}

/* The diagonal by rows on all host cores (a binary search a row: the AMG
 * setup takes it twice a level). */
typedef struct diagonal_job {
  const clmg_csr *a;
  double *diagonal;
} diagonal_job;

static void diagonal_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const diagonal_job *job = data;
  for (size_t i = begin; i < end; i++) {
    int64_t k = clmg_csr_find_entry(job->a, i, (int32_t)i);
    job->diagonal[i] = k >= 0 ? job->a->val[k] : 0.0;
  }
}

clmg_status clmg_csr_diagonal(const clmg_csr *a, double *diagonal, clmg_error *error) {
  clmg_error_clear(error);
  clmg_status status = clmg_csr_check(a, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t n = a->rows < a->cols ? a->rows : a->cols;
  if (n > 0 && !diagonal)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "diagonal is NULL");
  diagonal_job job = {a, diagonal};
  clmg_host_parallel_for(n, 16384, diagonal_range, &job);
  return CLMG_SUCCESS;
}

typedef struct spmv_job {
  double alpha, beta;
  const clmg_csr *a;
  const double *x;
  double *y;
} spmv_job;

static void spmv_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const spmv_job *job = data;
  const clmg_csr *a = job->a;
  for (size_t i = begin; i < end; i++) {
    double sum = 0.0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      sum += a->val[k] * job->x[a->col[k]];
    /* beta == 0 must not read y: it may hold garbage such as NaN. */
    job->y[i] = job->beta == 0.0 ? job->alpha * sum : job->alpha * sum + job->beta * job->y[i];
  }
}

/* By rows on all host cores: each row's sum in the serial order. */
void clmg_csr_spmv_host(double alpha, const clmg_csr *a, const double *x, double beta, double *y) {
  if (!a || !a->row_ptr)
    return;
  spmv_job job = {alpha, beta, a, x, y};
  clmg_host_parallel_for(a->rows, 16384, spmv_range, &job);
}

clmg_status clmg_csr_permute(const clmg_csr *a, const int32_t *row_perm, const int32_t *col_perm,
                             clmg_csr *out, clmg_error *error) {
  clmg_status status = begin_output(a, out, error);
  if (status != CLMG_SUCCESS)
    return status;

  size_t nnz = clmg_csr_nnz(a);
  int32_t *row_inverse = clmg_alloc_array(a->rows, sizeof *row_inverse);
  int32_t *col_inverse = clmg_alloc_array(a->cols, sizeof *col_inverse);
  int64_t *fill = clmg_alloc_array(a->rows, sizeof *fill); /* next free slot of each new row */
  clmg_csr transposed = {0}, result = {0};
  if (!row_inverse || !col_inverse || !fill)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate work arrays to permute a %zu x %zu matrix", a->rows,
                            a->cols);
  if (status == CLMG_SUCCESS && row_perm)
    status = invert_permutation(row_perm, a->rows, "row_perm", row_inverse, error);
  if (status == CLMG_SUCCESS && col_perm)
    status = invert_permutation(col_perm, a->cols, "col_perm", col_inverse, error);
  /* Walking the columns of a in their new order (through a^T) appends
   * ascending new column indices to every output row: sorted rows without a
   * comparison sort. */
  if (status == CLMG_SUCCESS)
    status = clmg_csr_transpose(a, &transposed, error);
  if (status == CLMG_SUCCESS)
    status = allocate_csr(a->rows, a->cols, nnz, &result, error);
  if (status == CLMG_SUCCESS) {
    int64_t *row_ptr = result.row_ptr;
    for (size_t i = 0; i < a->rows; i++) {
      size_t old_row = row_perm ? (size_t)row_perm[i] : i;
      row_ptr[i + 1] = row_ptr[i] + (a->row_ptr[old_row + 1] - a->row_ptr[old_row]);
      fill[i] = row_ptr[i];
    }
    for (size_t j = 0; j < a->cols; j++) {
      size_t old_column = col_perm ? (size_t)col_perm[j] : j;
      for (int64_t k = transposed.row_ptr[old_column]; k < transposed.row_ptr[old_column + 1];
           k++) {
        int32_t old_row = transposed.col[k];
        size_t new_row = row_perm ? (size_t)row_inverse[old_row] : (size_t)old_row;
        int64_t position = fill[new_row]++;
        result.col[position] = (int32_t)j;
        result.val[position] = transposed.val[k];
      }
    }
  }
  free(row_inverse);
  free(col_inverse);
  free(fill);
  clmg_csr_free(&transposed);
  if (status != CLMG_SUCCESS) {
    clmg_csr_free(&result);
    return status;
  }
  *out = result;
  return CLMG_SUCCESS;
}

/* The rows [begin, end) of clmg_csr_is_symmetric: asymmetric[range] set at
 * the first entry whose mirror differs. The comparison is symmetric in the
 * two values, so a pair of entries is compared once, from the upper one;
 * lower entries are only counted (lower) against the mirrors the upper ones
 * found (mirrored): where the counts agree every lower entry was one of
 * them, else (a lower entry without its mirror) the lower ones are
 * compared too (all_lower). */
typedef struct symmetry_job {
  const clmg_csr *a;
  double tolerance;
  int all_lower;
  int asymmetric[CLMG_MAX_HOST_THREADS];
  size_t lower[CLMG_MAX_HOST_THREADS], mirrored[CLMG_MAX_HOST_THREADS];
} symmetry_job;

static void symmetry_range(void *data, size_t range, size_t begin, size_t end) {
  symmetry_job *job = data;
  const clmg_csr *a = job->a;
  size_t lower = 0, mirrored = 0;
  for (size_t i = begin; i < end; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      size_t j = (size_t)a->col[k];
      if (j == i || (j > i) == job->all_lower) {
        lower += j < i;
        continue;
      }
      int64_t mirror = clmg_csr_find_entry(a, j, (int32_t)i);
      mirrored += mirror >= 0;
      double value = a->val[k], mirrored_value = mirror >= 0 ? a->val[mirror] : 0.0;
      double scale = fmax(fabs(value), fabs(mirrored_value));
      /* Written so that NaN compares as not symmetric. */
      if (!(fabs(value - mirrored_value) <= job->tolerance * scale)) {
        job->asymmetric[range] = 1;
        return;
      }
    }
  job->lower[range] = lower;
  job->mirrored[range] = mirrored;
}

/* 1 when no range of the job found an asymmetric pair. */
static int symmetric_ranges(const symmetry_job *job) {
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; t++)
    if (job->asymmetric[t])
      return 0;
  return 1;
}

int clmg_csr_is_symmetric(const clmg_csr *a, double relative_tolerance) {
  if (clmg_csr_check(a, NULL) != CLMG_SUCCESS || a->rows != a->cols)
    return 0;
  /* Each entry is compared with its mirror (0 where absent), so an entry
   * missing on one side counts unless it is zero; no allocation, so this
   * cannot fail. The rows are split over the host's cores (a 15-million
   * entry elasticity matrix took 0.2-0.3 s on one), and each pair is
   * compared once (symmetry_job). */
  symmetry_job job = {a, relative_tolerance, 0, {0}, {0}, {0}};
  clmg_host_parallel_for(a->rows, 4096, symmetry_range, &job);
  if (!symmetric_ranges(&job))
    return 0;
  size_t lower = 0, mirrored = 0;
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; t++) {
    lower += job.lower[t];
    mirrored += job.mirrored[t];
  }
  if (lower == mirrored)
    return 1;
  /* a lower entry without its mirror: the lower ones compared as well */
  symmetry_job rest = {a, relative_tolerance, 1, {0}, {0}, {0}};
  clmg_host_parallel_for(a->rows, 4096, symmetry_range, &rest);
  return symmetric_ranges(&rest);
}
