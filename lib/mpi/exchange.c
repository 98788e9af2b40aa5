/* Entries of a matrix sent to the ranks that own their rows: each rank
 * holds some (row, column, value) triplets anywhere in the matrix, and gets
 * back its own rows as CSR. */
#include "mpi/mpi_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The rank that owns global row `row` (row_starts[0] <= row <
 * row_starts[size]): the last r with row_starts[r] <= row, which skips the
 * empty ranks before it. */
static int owner_of(const uint64_t *row_starts, int size, uint64_t row) {
  int low = 0, high = size - 1;
  while (low < high) {
    int middle = low + (high - low + 1) / 2;
    if (row_starts[middle] <= row)
      low = middle;
    else
      high = middle - 1;
  }
  return low;
}

/* Entries of a pair of ranks that travel in round `round` of the exchange. */
static size_t piece(uint64_t entries, size_t round, size_t chunk) {
  uint64_t sent = (uint64_t)round * chunk;
  return entries > sent ? (size_t)(entries - sent < chunk ? entries - sent : chunk) : 0;
}

/* Checks the arguments and every entry, and counts the entries for each
 * rank (send[size]). */
static clmg_status check_and_count(clmg_mpi *mpi, const uint64_t *row_starts, uint64_t global_cols,
                                   size_t count, const int64_t *rows, const int64_t *cols,
                                   const double *values, const clmg_csr *out, uint64_t *send) {
  const int size = mpi->size;
  if (!out || !row_starts)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_rows_from_triplets: NULL %s", out ? "row_starts" : "output");
  if (count > 0 && (!rows || !cols || !values))
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_rows_from_triplets: %zu entries but NULL rows, columns "
                             "or values",
                             count);
  for (int r = 0; r < size; ++r)
    if (row_starts[r + 1] < row_starts[r])
      return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "clmg_mpi_rows_from_triplets: rank %d's rows start at %" PRIu64
                               ", after rank %d's end (%" PRIu64 ")",
                               r + 1, row_starts[r + 1], r, row_starts[r]);
  uint64_t mine = row_starts[mpi->rank + 1] - row_starts[mpi->rank];
  if (global_cols > INT32_MAX || mine > INT32_MAX)
    return clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                             "%" PRIu64 " rows of %" PRIu64
                             " columns on one rank exceed the 32-bit index limit of %d",
                             mine, global_cols, INT32_MAX);
  memset(send, 0, (size_t)size * sizeof *send);
  for (size_t k = 0; k < count; ++k) {
    if (rows[k] < 0 || (uint64_t)rows[k] < row_starts[0] || (uint64_t)rows[k] >= row_starts[size] ||
        cols[k] < 0 || (uint64_t)cols[k] >= global_cols)
      return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "entry %zu (row %" PRId64 ", column %" PRId64
                               ", 0-based) lies outside rows [%" PRIu64 ", %" PRIu64
                               ") and columns [0, %" PRIu64 ")",
                               k, rows[k], cols[k], row_starts[0], row_starts[size], global_cols);
    ++send[owner_of(row_starts, size, (uint64_t)rows[k])];
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_mpi_rows_from_triplets_chunked(clmg_mpi *mpi, const uint64_t *row_starts,
                                                uint64_t global_cols, size_t count,
                                                const int64_t *rows, const int64_t *cols,
                                                const double *values, size_t chunk, clmg_csr *out) {
  if (!mpi)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (out)
    memset(out, 0, sizeof *out);
  const int size = mpi->size, rank = mpi->rank;
  if (chunk == 0 || chunk > (size_t)(INT_MAX / size))
    chunk = (size_t)(INT_MAX / size);
  uint64_t *send = malloc((size_t)size * sizeof *send);
  uint64_t *receive = malloc((size_t)size * sizeof *receive);
  int *counts = malloc(4 * (size_t)size * sizeof *counts);
  clmg_status status = CLMG_SUCCESS;
  if (!send || !receive || !counts)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                               "no memory for the entry counts of %d ranks", size);
  else
    status = check_and_count(mpi, row_starts, global_cols, count, rows, cols, values, out, send);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code = MPI_Alltoall(send, 1, MPI_UINT64_T, receive, 1, MPI_UINT64_T, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoall (entries per rank)");
  }
  /* Each pair of ranks moves at most `chunk` entries per round, so that a
   * round's counts and displacements (size * chunk at most) fit an int.
   * The send buffers hold round 0's pieces for every rank, then round 1's,
   * ...; piece_start[round * size + r] is where each begins. */
  size_t rounds = 0, received = 0, *piece_start = NULL;
  int32_t *send_rows = NULL, *send_cols = NULL, *receive_rows = NULL, *receive_cols = NULL;
  double *send_values = NULL, *receive_values = NULL;
  if (status == CLMG_SUCCESS) {
    uint64_t largest = 0, total = 0;
    for (int r = 0; r < size; ++r) {
      largest = send[r] > largest ? send[r] : largest;
      total += receive[r];
    }
    uint64_t most = largest;
    int code = MPI_Allreduce(&largest, &most, 1, MPI_UINT64_T, MPI_MAX, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allreduce (the largest exchange)");
    rounds = (size_t)((most + chunk - 1) / chunk);
    received = (size_t)total;
    if (status == CLMG_SUCCESS && (total > SIZE_MAX / sizeof(double) || total > INT64_MAX))
      status =
          clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "%" PRIu64 " entries for one rank's rows exceed its memory", total);
    if (status == CLMG_SUCCESS) {
      piece_start = malloc((rounds * (size_t)size + 1) * sizeof *piece_start);
      send_rows = malloc((count + 1) * sizeof *send_rows);
      send_cols = malloc((count + 1) * sizeof *send_cols);
      send_values = malloc((count + 1) * sizeof *send_values);
      receive_rows = malloc((received + 1) * sizeof *receive_rows);
      receive_cols = malloc((received + 1) * sizeof *receive_cols);
      receive_values = malloc((received + 1) * sizeof *receive_values);
      if (!piece_start || !send_rows || !send_cols || !send_values || !receive_rows ||
          !receive_cols || !receive_values)
        status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                   "no memory to exchange %zu entries sent and %zu received", count,
                                   received);
    }
    status = clmg_mpi_agree(mpi, status);
  }
  if (status == CLMG_SUCCESS) {
    size_t at = 0;
    for (size_t round = 0; round < rounds; ++round)
      for (int r = 0; r < size; ++r) {
        piece_start[round * (size_t)size + (size_t)r] = at;
        at += piece(send[r], round, chunk);
      }
    /* send[r] now counts the entries packed for rank r */
    memset(send, 0, (size_t)size * sizeof *send);
    for (size_t k = 0; k < count; ++k) {
      int r = owner_of(row_starts, size, (uint64_t)rows[k]);
      size_t round = (size_t)(send[r] / chunk);
      size_t slot = piece_start[round * (size_t)size + (size_t)r] + (size_t)(send[r] % chunk);
      ++send[r];
      send_rows[slot] = (int32_t)((uint64_t)rows[k] - row_starts[r]);
      send_cols[slot] = (int32_t)cols[k];
      send_values[slot] = values[k];
    }
    int *send_counts = counts, *send_displs = counts + size;
    int *receive_counts = counts + 2 * size, *receive_displs = counts + 3 * size;
    size_t receive_at = 0;
    for (size_t round = 0; round < rounds && status == CLMG_SUCCESS; ++round) {
      size_t send_base = piece_start[round * (size_t)size];
      int sent = 0, got = 0;
      for (int r = 0; r < size; ++r) {
        send_counts[r] = (int)piece(send[r], round, chunk);
        send_displs[r] = sent;
        sent += send_counts[r];
        receive_counts[r] = (int)piece(receive[r], round, chunk);
        receive_displs[r] = got;
        got += receive_counts[r];
      }
      int code = MPI_Alltoallv(send_rows + send_base, send_counts, send_displs, MPI_INT32_T,
                               receive_rows + receive_at, receive_counts, receive_displs,
                               MPI_INT32_T, mpi->comm);
      if (code == MPI_SUCCESS)
        code = MPI_Alltoallv(send_cols + send_base, send_counts, send_displs, MPI_INT32_T,
                             receive_cols + receive_at, receive_counts, receive_displs, MPI_INT32_T,
                             mpi->comm);
      if (code == MPI_SUCCESS)
        code = MPI_Alltoallv(send_values + send_base, send_counts, send_displs, MPI_DOUBLE,
                             receive_values + receive_at, receive_counts, receive_displs,
                             MPI_DOUBLE, mpi->comm);
      if (code != MPI_SUCCESS)
        status = clmg_mpi_failed(mpi, code, "MPI_Alltoallv (the matrix's entries)");
      receive_at += (size_t)got;
    }
    free(send_rows);
    free(send_cols);
    free(send_values);
    send_rows = send_cols = NULL;
    send_values = NULL;
    if (status == CLMG_SUCCESS) {
      clmg_error error;
      status = clmg_csr_from_triplets((size_t)(row_starts[rank + 1] - row_starts[rank]),
                                      (size_t)global_cols, received, receive_rows, receive_cols,
                                      receive_values, out, &error);
      if (status != CLMG_SUCCESS)
        clmg_context_fail(mpi->context, status, "%s", error.message);
    }
    status = clmg_mpi_agree(mpi, status);
    if (status != CLMG_SUCCESS)
      clmg_csr_free(out);
  }
  free(send);
  free(receive);
  free(counts);
  free(piece_start);
  free(send_rows);
  free(send_cols);
  free(send_values);
  free(receive_rows);
  free(receive_cols);
  free(receive_values);
  return status;
}

clmg_status clmg_mpi_rows_from_triplets(clmg_mpi *mpi, const uint64_t *row_starts,
                                        uint64_t global_cols, size_t count, const int64_t *rows,
                                        const int64_t *cols, const double *values, clmg_csr *out) {
  return clmg_mpi_rows_from_triplets_chunked(mpi, row_starts, global_cols, count, rows, cols,
                                             values, 0, out);
}
