/* A distributed matrix from one rank's whole matrix (made there), or from a
 * Matrix Market file that every rank reads a part of: every rank gets its
 * block of rows. */
#include "mpi/mpi_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* Entries of root's whole matrix `whole` as triplets (none elsewhere) sent
 * to their rows' owners: for an array file, whose entries carry no indices
 * and which root reads whole (it is dense, so small). */
static clmg_status send_whole(clmg_mpi *mpi, int root, const clmg_csr *whole,
                              const uint64_t *row_starts, clmg_csr *local) {
  size_t count = mpi->rank == root ? clmg_csr_nnz(whole) : 0;
  int64_t *rows = malloc((count + 1) * sizeof *rows), *cols = malloc((count + 1) * sizeof *cols);
  clmg_status status = CLMG_SUCCESS;
  if (!rows || !cols)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                               "no memory for the indices of %zu entries", count);
  for (size_t i = 0; status == CLMG_SUCCESS && count > 0 && i < whole->rows; ++i)
    for (int64_t k = whole->row_ptr[i]; k < whole->row_ptr[i + 1]; ++k) {
      rows[k] = (int64_t)i;
      cols[k] = whole->col[k];
    }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_rows_from_triplets(mpi, row_starts, row_starts[mpi->size], count, rows, cols,
                                         count > 0 ? whole->val : NULL, local);
  free(rows);
  free(cols);
  return status;
}

/* What rank root learns of the file and every rank needs. */
typedef struct file_facts {
  clmg_mm_header header;
  uint64_t bytes; /* the file's size */
} file_facts;

/* This rank's part of the entry section [data_offset, bytes): the r-th of
 * size even byte ranges (the last one open-ended). */
static void byte_range(const file_facts *facts, int rank, int size, uint64_t *begin,
                       uint64_t *end) {
  uint64_t first = facts->header.data_offset;
  uint64_t span = facts->bytes > first ? facts->bytes - first : 0;
  uint64_t n = (uint64_t)size, q = span / n, m = span % n;
  *begin = first + q * (uint64_t)rank + m * (uint64_t)rank / n;
  *end = rank + 1 == size ? UINT64_MAX
                          : first + q * (uint64_t)(rank + 1) + m * (uint64_t)(rank + 1) / n;
}

/* Collective: the sum over the ranks of value. */
static clmg_status sum_over_ranks(clmg_mpi *mpi, uint64_t value, uint64_t *sum) {
  int code = MPI_Allreduce(&value, sum, 1, MPI_UINT64_T, MPI_SUM, mpi->comm);
  return code == MPI_SUCCESS ? CLMG_SUCCESS : clmg_mpi_failed(mpi, code, "MPI_Allreduce (a sum)");
}

/* Coordinate files: this rank parses the lines that start in its byte
 * range (*entries); the size line's count is checked against every
 * range's entry lines, the shape against the entries. Agreed. */
static clmg_status parse_range(clmg_mpi *mpi, const char *path, const file_facts *facts,
                               clmg_mm_entries *entries) {
  const clmg_mm_header *header = &facts->header;
  uint64_t begin = 0, end = 0;
  byte_range(facts, mpi->rank, mpi->size, &begin, &end);
  clmg_error error;
  size_t first_line = header->size_line + 1; /* provisional: lines before the range unknown */
  clmg_status status = clmg_mm_read_entries(path, header, begin, end, first_line, entries, &error);
  /* the lines before each range, for a bad line's number: those of the
   * ranks below the lowest failing one, which all read their whole range */
  uint64_t lines = entries->lines, lines_before = 0;
  int code = MPI_Exscan(&lines, &lines_before, 1, MPI_UINT64_T, MPI_SUM, mpi->comm);
  if (mpi->rank == 0)
    lines_before = 0;
  if (code != MPI_SUCCESS)
    status = clmg_mpi_failed(mpi, code, "MPI_Exscan (lines per rank)");
  else if (status == CLMG_ERROR_PARSE && lines_before > 0) /* again, numbered */
    status = clmg_mm_read_entries(path, header, begin, end, first_line + (size_t)lines_before,
                                  entries, &error);
  if (status != CLMG_SUCCESS && code == MPI_SUCCESS)
    clmg_context_fail(mpi->context, status, "%s", error.message);
  status = clmg_mpi_agree(mpi, status);

  uint64_t entry_lines = 0, all_lines = 0, triplets = 0;
  if (status == CLMG_SUCCESS)
    status = sum_over_ranks(mpi, entries->entry_lines, &entry_lines);
  if (status == CLMG_SUCCESS)
    status = sum_over_ranks(mpi, entries->lines, &all_lines);
  if (status == CLMG_SUCCESS)
    status = sum_over_ranks(mpi, entries->count, &triplets);
  if (status == CLMG_SUCCESS && entry_lines != header->entries && mpi->rank == 0)
    status = clmg_context_fail(
        mpi->context, CLMG_ERROR_PARSE,
        entry_lines < header->entries ? "%s:%zu: expected %zu entries, file ended after %llu"
                                      : "%s:%zu: expected %zu entries (the size line), found %llu",
        path,
        entry_lines < header->entries ? header->size_line + (size_t)all_lines : header->size_line,
        header->entries, (unsigned long long)entry_lines);
  /* no rank's rows sized by a size line alone */
  if (status == CLMG_SUCCESS && mpi->rank == 0 &&
      clmg_mm_check_shape(path, header, (size_t)triplets, 0, &error) != CLMG_SUCCESS)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_PARSE, "%s", error.message);
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS)
    clmg_mm_entries_free(entries);
  return status;
}

clmg_status clmg_mpi_csr_read_matrix_market(clmg_mpi *mpi, int root, const char *path,
                                            uint64_t *first_row, clmg_csr *local) {
  if (!mpi || !first_row || !local)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_csr_read_matrix_market: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  memset(local, 0, sizeof *local);
  *first_row = 0;
  if (root < 0 || root >= mpi->size)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_csr_read_matrix_market: root %d is not a rank of %d", root,
                             mpi->size);
  /* root reads the header and the file's size; every rank gets them */
  file_facts facts;
  memset(&facts, 0, sizeof facts);
  clmg_status status = CLMG_SUCCESS;
  clmg_error error;
  if (mpi->rank == root) {
    status = path ? clmg_mm_read_header(path, &facts.header, &error) : CLMG_ERROR_INVALID_ARGUMENT;
    if (status != CLMG_SUCCESS)
      clmg_context_fail(mpi->context, status, "%s", path ? error.message : "NULL path on the root");
    struct stat file_status;
    if (status == CLMG_SUCCESS && stat(path, &file_status) != 0)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_IO, "cannot stat %s: %s", path,
                                 strerror(errno));
    if (status == CLMG_SUCCESS)
      facts.bytes = (uint64_t)file_status.st_size;
  }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code = MPI_Bcast(&facts, (int)sizeof facts, MPI_BYTE, root, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Bcast (the file's header)");
    status = clmg_mpi_agree(mpi, status);
  }
  if (status != CLMG_SUCCESS)
    return status;
  const clmg_mm_header *header = &facts.header;
  if (!path)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT, "NULL path");
  else if (header->rows != header->cols)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "%s: the matrix is %zu x %zu; a distributed matrix must be square",
                               path, header->rows, header->cols);
  uint64_t *row_starts = malloc(((size_t)mpi->size + 1) * sizeof *row_starts);
  if (status == CLMG_SUCCESS && !row_starts)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                               "no memory for the row blocks of %d ranks", mpi->size);
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS) {
    free(row_starts);
    return status;
  }
  /* the even split (clmg_mpi_even_rows) of every rank */
  uint64_t rows = header->rows, size = (uint64_t)mpi->size;
  for (uint64_t r = 0; r <= size; ++r)
    row_starts[r] = r * (rows / size) + (r < rows % size ? r : rows % size);

  if (header->format == CLMG_MM_ARRAY) {
    clmg_csr whole = {0};
    if (mpi->rank == root) {
      status = clmg_csr_read_matrix_market(path, &whole, &error);
      if (status != CLMG_SUCCESS)
        clmg_context_fail(mpi->context, status, "%s", error.message);
    }
    status = clmg_mpi_agree(mpi, status);
    if (status == CLMG_SUCCESS)
      status = send_whole(mpi, root, &whole, row_starts, local);
    clmg_csr_free(&whole);
  } else {
    clmg_mm_entries entries;
    status = parse_range(mpi, path, &facts, &entries);
    /* every entry to its row's owner */
    if (status == CLMG_SUCCESS)
      status = clmg_mpi_rows_from_triplets(mpi, row_starts, header->cols, entries.count,
                                           entries.rows, entries.cols, entries.values, local);
    clmg_mm_entries_free(&entries);
    /* the rule again for the entries left once duplicates are summed */
    uint64_t distinct = 0;
    if (status == CLMG_SUCCESS)
      status = sum_over_ranks(mpi, clmg_csr_nnz(local), &distinct);
    if (status == CLMG_SUCCESS && mpi->rank == 0 &&
        clmg_mm_check_shape(path, header, (size_t)distinct, 1, &error) != CLMG_SUCCESS)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_PARSE, "%s", error.message);
    status = clmg_mpi_agree(mpi, status);
  }
  if (status == CLMG_SUCCESS)
    *first_row = row_starts[mpi->rank];
  else
    clmg_csr_free(local);
  free(row_starts);
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
  uint64_t first_row = 0;
  clmg_csr local = {0};
  clmg_status status = clmg_mpi_csr_read_matrix_market(mpi, root, path, &first_row, &local);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_matrix_create(mpi, first_row, &local, options, out);
  clmg_csr_free(&local);
  return status;
}
