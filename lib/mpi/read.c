/* A distributed matrix from one rank's whole matrix (read from a Matrix
 * Market file there, or made there): every rank gets its block of rows. */
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Collective: root's whole matrix `global` (ignored elsewhere) split into
 * even row blocks, each rank's block sent to it. */
clmg_status clmg_mpi_csr_scatter(clmg_mpi *mpi, int root, const clmg_csr *global,
                                 uint64_t *first_row, clmg_csr *out) {
  if (!mpi || !out || !first_row)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_csr_scatter: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  *first_row = 0;
  if (root < 0 || root >= mpi->size)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_csr_scatter: root %d is not a rank of %d", root, mpi->size);
  const int is_root = mpi->rank == root, size = mpi->size;
  clmg_status status = CLMG_SUCCESS;
  if (is_root && (!global || !global->row_ptr))
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "clmg_mpi_csr_scatter: no matrix on the root");
  else if (is_root && global->rows != global->cols)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "the matrix is %zu x %zu; a distributed matrix must be square",
                               global->rows, global->cols);
  else if (is_root && clmg_csr_nnz(global) > (size_t)INT_MAX)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                               "%zu nonzeros; sending the rows from one rank stops at %d (build "
                               "the ranks' rows with clmg_mpi_matrix_create instead)",
                               clmg_csr_nnz(global), INT_MAX);
  status = clmg_mpi_agree(mpi, status);
  uint64_t rows = status == CLMG_SUCCESS && is_root ? global->rows : 0;
  if (status == CLMG_SUCCESS) {
    int code = MPI_Bcast(&rows, 1, MPI_UINT64_T, root, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Bcast (matrix size)");
  }
  /* the root's table of every rank's rows and entries, as MPI counts */
  int *row_counts = NULL, *row_starts = NULL, *entry_counts = NULL, *entry_starts = NULL;
  int64_t *lengths = NULL;
  if (status == CLMG_SUCCESS && is_root) {
    row_counts = malloc((size_t)size * sizeof *row_counts);
    row_starts = malloc((size_t)size * sizeof *row_starts);
    entry_counts = malloc((size_t)size * sizeof *entry_counts);
    entry_starts = malloc((size_t)size * sizeof *entry_starts);
    lengths = malloc((rows + 1) * sizeof *lengths);
    if (!row_counts || !row_starts || !entry_counts || !entry_starts || !lengths) {
      status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                 "rank %d: no memory to send the matrix's rows", mpi->rank);
    } else {
      uint64_t base = rows / (uint64_t)size, extra = rows % (uint64_t)size, first = 0;
      for (int r = 0; r < size; ++r) {
        uint64_t count = base + ((uint64_t)r < extra ? 1 : 0);
        row_counts[r] = (int)count;
        row_starts[r] = (int)first;
        entry_starts[r] = (int)global->row_ptr[first];
        entry_counts[r] = (int)(global->row_ptr[first + count] - global->row_ptr[first]);
        first += count;
      }
      for (uint64_t i = 0; i < rows; ++i)
        lengths[i] = global->row_ptr[i + 1] - global->row_ptr[i];
    }
  }
  status = clmg_mpi_agree(mpi, status);
  int my_entries = 0;
  if (status == CLMG_SUCCESS) {
    int code = MPI_Scatter(entry_counts, 1, MPI_INT, &my_entries, 1, MPI_INT, root, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Scatter (entries per rank)");
  }
  uint64_t first = 0, count = 0;
  clmg_mpi_even_rows(mpi, rows, &first, &count);
  clmg_csr local = {0};
  if (status == CLMG_SUCCESS) {
    local.rows = count;
    local.cols = rows;
    local.row_ptr = calloc(count + 1, sizeof *local.row_ptr);
    local.col = malloc(((size_t)my_entries + 1) * sizeof *local.col);
    local.val = malloc(((size_t)my_entries + 1) * sizeof *local.val);
    if (!local.row_ptr || !local.col || !local.val)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                 "rank %d: no memory for %llu rows of %d entries", mpi->rank,
                                 (unsigned long long)count, my_entries);
    status = clmg_mpi_agree(mpi, status);
  }
  if (status == CLMG_SUCCESS) {
    /* row lengths land in row_ptr[1..]; the prefix sum makes them offsets */
    int code = MPI_Scatterv(lengths, row_counts, row_starts, MPI_INT64_T, local.row_ptr + 1,
                            (int)count, MPI_INT64_T, root, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Scatterv(is_root ? global->col : NULL, entry_counts, entry_starts, MPI_INT32_T,
                          local.col, my_entries, MPI_INT32_T, root, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Scatterv(is_root ? global->val : NULL, entry_counts, entry_starts, MPI_DOUBLE,
                          local.val, my_entries, MPI_DOUBLE, root, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Scatterv (the matrix's rows)");
    for (uint64_t i = 0; i < count; ++i)
      local.row_ptr[i + 1] += local.row_ptr[i];
    status = clmg_mpi_agree(mpi, status);
  }
  free(row_counts);
  free(row_starts);
  free(entry_counts);
  free(entry_starts);
  free(lengths);
  if (status != CLMG_SUCCESS) {
    clmg_csr_free(&local);
    return status;
  }
  *out = local;
  *first_row = first;
  return CLMG_SUCCESS;
}

clmg_status clmg_mpi_matrix_scatter(clmg_mpi *mpi, int root, const clmg_csr *global,
                                    const clmg_matrix_options *options, clmg_mpi_matrix **out) {
  if (!mpi || !out)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_matrix_scatter: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  uint64_t first = 0;
  clmg_csr local = {0};
  clmg_status status = clmg_mpi_csr_scatter(mpi, root, global, &first, &local);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_matrix_create(mpi, first, &local, options, out);
  clmg_csr_free(&local);
  return status;
}

clmg_status clmg_mpi_matrix_read_matrix_market(clmg_mpi *mpi, int root, const char *path,
                                               const clmg_matrix_options *options,
                                               clmg_mpi_matrix **out) {
  if (!mpi || !out)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_matrix_read_matrix_market: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  if (root < 0 || root >= mpi->size)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_matrix_read_matrix_market: root %d is not a rank of %d",
                             root, mpi->size);
  clmg_csr global = {0};
  clmg_status status = CLMG_SUCCESS;
  if (mpi->rank == root) {
    clmg_error error;
    status =
        path ? clmg_csr_read_matrix_market(path, &global, &error) : CLMG_ERROR_INVALID_ARGUMENT;
    if (status != CLMG_SUCCESS)
      clmg_context_fail(mpi->context, status, "%s", path ? error.message : "NULL path on the root");
  }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_matrix_scatter(mpi, root, &global, options, out);
  clmg_csr_free(&global);
  return status;
}
