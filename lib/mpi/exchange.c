/* Host-side exchanges between the ranks of row-distributed matrices:
 * entries sent to the ranks that own their rows (each rank holds some (row,
 * column, value) triplets anywhere in the matrix, and gets back its own
 * rows as CSR); the table of every rank's first row; a halo plan (which of
 * its rows each rank sends where, for rows that others name by global id),
 * its exchange of vector values, and the fetch of whole CSR rows from their
 * owners. The distributed AMG setup (lib/mpi/amg.c) builds on them. The
 * calls are collective; a failure on one rank is agreed (clmg_mpi_agree)
 * before any message travels, so no rank waits for one that gave up. */
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

/* ---- row tables, halo plans and fetched rows ---- */

static clmg_status no_memory(clmg_mpi *mpi, const char *what) {
  return clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "rank %d: no memory for %s",
                           mpi->rank, what);
}

clmg_status clmg_mpi_row_starts(clmg_mpi *mpi, uint64_t first_row, size_t rows,
                                uint64_t **row_starts) {
  *row_starts = NULL;
  uint64_t *starts = calloc((size_t)mpi->size + 1, sizeof *starts);
  uint64_t mine[2] = {first_row, rows}, *all = malloc(2 * (size_t)mpi->size * sizeof *all);
  clmg_status status =
      clmg_mpi_agree(mpi, starts && all ? CLMG_SUCCESS : no_memory(mpi, "the rows' table"));
  if (status == CLMG_SUCCESS) {
    int code = MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allgather (first rows)");
  }
  for (int r = 0; status == CLMG_SUCCESS && r < mpi->size; ++r) {
    if (all[2 * r] != starts[r])
      status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "rank %d: the rows of rank %d start at %llu, not at %llu where "
                                 "those of the ranks before it end",
                                 mpi->rank, r, (unsigned long long)all[2 * r],
                                 (unsigned long long)starts[r]);
    else
      starts[r + 1] = starts[r] + all[2 * r + 1];
  }
  free(all);
  if (status != CLMG_SUCCESS) {
    free(starts);
    return status;
  }
  *row_starts = starts;
  return CLMG_SUCCESS;
}

void clmg_mpi_halo_free(clmg_mpi_halo *halo) {
  if (!halo)
    return;
  free(halo->send_counts);
  free(halo->send_displs);
  free(halo->receive_counts);
  free(halo->receive_displs);
  free(halo->send_rows);
  free(halo->buffer);
  memset(halo, 0, sizeof *halo);
}

/* Prefix sums of counts into displs; 0 when a total passes INT_MAX. */
static int displacements(const int *counts, int size, int *displs, size_t *total) {
  size_t sum = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = (int)sum;
    sum += (size_t)counts[r];
    if (sum > (size_t)INT_MAX)
      return 0;
  }
  *total = sum;
  return 1;
}

clmg_status clmg_mpi_halo_create(clmg_mpi *mpi, const uint64_t *row_starts, size_t count,
                                 const int64_t *rows, clmg_mpi_halo *halo) {
  memset(halo, 0, sizeof *halo);
  const int size = mpi->size;
  const uint64_t global = row_starts[size];
  clmg_status status = CLMG_SUCCESS;
  halo->send_counts = calloc((size_t)size, sizeof *halo->send_counts);
  halo->send_displs = calloc((size_t)size, sizeof *halo->send_displs);
  halo->receive_counts = calloc((size_t)size, sizeof *halo->receive_counts);
  halo->receive_displs = calloc((size_t)size, sizeof *halo->receive_displs);
  if (!halo->send_counts || !halo->send_displs || !halo->receive_counts || !halo->receive_displs)
    status = no_memory(mpi, "a halo plan");
  /* the requests, sorted, fall into the owners' blocks in rank order */
  int owner = 0;
  for (size_t k = 0; status == CLMG_SUCCESS && k < count; ++k) {
    if (rows[k] < 0 || (uint64_t)rows[k] >= global || (k > 0 && rows[k] <= rows[k - 1]))
      status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "rank %d: requested row %lld is not in 0..%llu or not after the "
                                 "one before it",
                                 mpi->rank, (long long)rows[k], (unsigned long long)global - 1);
    while (status == CLMG_SUCCESS && row_starts[owner + 1] <= (uint64_t)rows[k])
      ++owner;
    if (status == CLMG_SUCCESS)
      halo->receive_counts[owner]++;
  }
  if (status == CLMG_SUCCESS &&
      !displacements(halo->receive_counts, size, halo->receive_displs, &halo->receives))
    status =
        clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                          "rank %d: %zu requested rows pass MPI's int counts", mpi->rank, count);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code =
        MPI_Alltoall(halo->receive_counts, 1, MPI_INT, halo->send_counts, 1, MPI_INT, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoall (halo sizes)");
  }
  if (status == CLMG_SUCCESS &&
      !displacements(halo->send_counts, size, halo->send_displs, &halo->sends))
    status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                               "rank %d: the rows others request pass MPI's int counts", mpi->rank);
  if (status == CLMG_SUCCESS) {
    size_t most = halo->sends > halo->receives ? halo->sends : halo->receives;
    halo->send_rows = malloc((halo->sends + 1) * sizeof *halo->send_rows);
    halo->buffer = malloc((most + 1) * sizeof *halo->buffer);
    if (!halo->send_rows || !halo->buffer)
      status = no_memory(mpi, "a halo plan");
  }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code = MPI_Alltoallv(rows, halo->receive_counts, halo->receive_displs, MPI_INT64_T,
                             halo->send_rows, halo->send_counts, halo->send_displs, MPI_INT64_T,
                             mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoallv (requested rows)");
  }
  /* global ids to this rank's rows (the requester checked the ranges) */
  const uint64_t first = row_starts[mpi->rank], mine = row_starts[mpi->rank + 1] - first;
  for (size_t k = 0; status == CLMG_SUCCESS && k < halo->sends; ++k) {
    halo->send_rows[k] -= (int64_t)first;
    if (halo->send_rows[k] < 0 || (uint64_t)halo->send_rows[k] >= mine)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_COMMUNICATION,
                                 "rank %d: asked for a row it does not own", mpi->rank);
  }
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS)
    clmg_mpi_halo_free(halo);
  return status;
}

clmg_status clmg_mpi_halo_exchange(clmg_mpi *mpi, const clmg_mpi_halo *halo, const double *local,
                                   double *received) {
  for (size_t k = 0; k < halo->sends; ++k)
    halo->buffer[k] = local[halo->send_rows[k]];
  int code = MPI_Alltoallv(halo->buffer, halo->send_counts, halo->send_displs, MPI_DOUBLE, received,
                           halo->receive_counts, halo->receive_displs, MPI_DOUBLE, mpi->comm);
  return code == MPI_SUCCESS ? CLMG_SUCCESS : clmg_mpi_failed(mpi, code, "MPI_Alltoallv (halo)");
}

clmg_status clmg_mpi_fetch_rows(clmg_mpi *mpi, const clmg_mpi_halo *halo, const clmg_csr *local,
                                clmg_csr *out) {
  memset(out, 0, sizeof *out);
  const int size = mpi->size;
  int *send_entries = calloc((size_t)size, sizeof *send_entries);
  int *send_at = calloc((size_t)size, sizeof *send_at);
  int *receive_entries = calloc((size_t)size, sizeof *receive_entries);
  int *receive_at = calloc((size_t)size, sizeof *receive_at);
  int64_t *lengths = malloc((halo->sends + 1) * sizeof *lengths);
  int32_t *send_col = NULL;
  double *send_val = NULL;
  out->rows = halo->receives;
  out->cols = local->cols;
  out->row_ptr = calloc(halo->receives + 1, sizeof *out->row_ptr);
  clmg_status status = CLMG_SUCCESS;
  if (!send_entries || !send_at || !receive_entries || !receive_at || !lengths || !out->row_ptr)
    status = no_memory(mpi, "fetching rows");
  size_t send_total = 0, receive_total = 0;
  for (int r = 0; status == CLMG_SUCCESS && r < size; ++r) {
    size_t sum = 0;
    for (int k = halo->send_displs[r]; k < halo->send_displs[r] + halo->send_counts[r]; ++k) {
      int64_t i = halo->send_rows[k];
      lengths[k] = local->row_ptr[i + 1] - local->row_ptr[i];
      sum += (size_t)lengths[k];
    }
    if (sum > (size_t)INT_MAX || send_total + sum > (size_t)INT_MAX)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                                 "rank %d: the rows it sends pass MPI's int counts", mpi->rank);
    send_entries[r] = (int)sum;
    send_at[r] = (int)send_total;
    send_total += sum;
  }
  if (status == CLMG_SUCCESS) {
    send_col = malloc((send_total + 1) * sizeof *send_col);
    send_val = malloc((send_total + 1) * sizeof *send_val);
    if (!send_col || !send_val)
      status = no_memory(mpi, "the rows it sends");
  }
  for (size_t k = 0, at = 0; status == CLMG_SUCCESS && k < halo->sends; ++k) {
    int64_t i = halo->send_rows[k];
    size_t n = (size_t)lengths[k];
    memcpy(send_col + at, local->col + local->row_ptr[i], n * sizeof *send_col);
    memcpy(send_val + at, local->val + local->row_ptr[i], n * sizeof *send_val);
    at += n;
  }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code =
        MPI_Alltoallv(lengths, halo->send_counts, halo->send_displs, MPI_INT64_T, out->row_ptr + 1,
                      halo->receive_counts, halo->receive_displs, MPI_INT64_T, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Alltoall(send_entries, 1, MPI_INT, receive_entries, 1, MPI_INT, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoall (row lengths)");
  }
  for (int r = 0; status == CLMG_SUCCESS && r < size; ++r) {
    receive_at[r] = (int)receive_total;
    receive_total += (size_t)receive_entries[r];
    if (receive_total > (size_t)INT_MAX)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                                 "rank %d: the rows it receives pass MPI's int counts", mpi->rank);
  }
  for (size_t k = 0; status == CLMG_SUCCESS && k < halo->receives; ++k)
    out->row_ptr[k + 1] += out->row_ptr[k];
  if (status == CLMG_SUCCESS && (size_t)out->row_ptr[halo->receives] != receive_total)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_COMMUNICATION,
                               "rank %d: the fetched rows' lengths do not add up", mpi->rank);
  if (status == CLMG_SUCCESS) {
    out->col = malloc((receive_total + 1) * sizeof *out->col);
    out->val = malloc((receive_total + 1) * sizeof *out->val);
    if (!out->col || !out->val)
      status = no_memory(mpi, "the fetched rows");
  }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code = MPI_Alltoallv(send_col, send_entries, send_at, MPI_INT32_T, out->col,
                             receive_entries, receive_at, MPI_INT32_T, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Alltoallv(send_val, send_entries, send_at, MPI_DOUBLE, out->val, receive_entries,
                           receive_at, MPI_DOUBLE, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoallv (fetched rows)");
  }
  free(send_entries);
  free(send_at);
  free(receive_entries);
  free(receive_at);
  free(lengths);
  free(send_col);
  free(send_val);
  if (status != CLMG_SUCCESS)
    clmg_csr_free(out);
  return status;
}
