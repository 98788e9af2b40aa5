/* Internal interface of clmg_mpi (lib/mpi/). It sees libclmg through its
 * public API only, like any program that links both. */
#ifndef CLMG_MPI_INTERNAL_H
#define CLMG_MPI_INTERNAL_H

#include "clmg/mpi.h"

struct clmg_mpi {
  clmg_context *context;
  MPI_Comm comm; /* a duplicate, so clmg's messages never meet the caller's */
  int rank, size;
  /* A second queue on the context's device for the halos' transfers, so
   * that a read-back or an upload never holds up the context's queue: the
   * local product runs while the packed values travel. */
  cl_command_queue transfer;
  clmg_mpi_matrix_times matrix_times; /* clmg_mpi_matrix_times_get's sums */
};

/* Between these two calls the context is local (its reducer removed):
 * for work every rank repeats on whole, replicated vectors. */
void clmg_mpi_local_begin(clmg_mpi *mpi);
void clmg_mpi_local_end(clmg_mpi *mpi);

/* The MPI datatype of vectors of `type` (double or float). */
MPI_Datatype clmg_mpi_real_type(clmg_dtype type);
/* Records a failed MPI call (with MPI's error string) in the context's
 * message and returns CLMG_ERROR_COMMUNICATION. */
clmg_status clmg_mpi_failed(clmg_mpi *mpi, int code, const char *call);

/* Collective. Each rank passes `count` entries (global row, global column, value) of a
 * matrix whose rows the ranks own in contiguous blocks: rank r owns global rows
 * [row_starts[r], row_starts[r + 1]) (size + 1 entries, the same on every rank). Every
 * entry goes to its row's owner; *out gets this rank's rows as CSR (out->rows = its row
 * count, out->cols = global_cols, global column indices, sorted in each row, duplicates
 * summed). Entries outside the rows or columns fail with a message naming the entry.
 * Failures are agreed (clmg_mpi_agree). The caller frees *out with clmg_csr_free. */
clmg_status clmg_mpi_rows_from_triplets(clmg_mpi *mpi, const uint64_t *row_starts,
                                        uint64_t global_cols, size_t count, const int64_t *rows,
                                        const int64_t *cols, const double *values, clmg_csr *out);
/* The same, each pair of ranks moving at most `chunk` entries per MPI_Alltoallv
 * round (0, or more than INT_MAX / size: INT_MAX / size, which keeps a round's
 * counts and displacements within an int). clmg_mpi_rows_from_triplets passes 0;
 * tests pass small chunks to run many rounds. */
clmg_status clmg_mpi_rows_from_triplets_chunked(clmg_mpi *mpi, const uint64_t *row_starts,
                                                uint64_t global_cols, size_t count,
                                                const int64_t *rows, const int64_t *cols,
                                                const double *values, size_t chunk, clmg_csr *out);

/* ---- host-side exchanges (lib/mpi/exchange.c); collective, failures agreed ---- */

/* *row_starts (malloc'ed, size + 1 entries): rank r owns global rows
 * [row_starts[r], row_starts[r + 1]); each rank passes its first row and
 * count, which must follow the previous rank's. */
clmg_status clmg_mpi_row_starts(clmg_mpi *mpi, uint64_t first_row, size_t rows,
                                uint64_t **row_starts);

/* Which of its rows a rank sends to whom, for rows that other ranks name
 * by global id: the plan of a halo exchange on the host. */
typedef struct clmg_mpi_halo {
  int *send_counts, *send_displs;       /* per rank, into send_rows */
  int *receive_counts, *receive_displs; /* per rank, into the requested rows */
  int64_t *send_rows;                   /* this rank's rows (local) it sends, grouped by rank */
  double *buffer;                       /* packing room */
  size_t sends, receives;               /* receives: the count of requested rows */
} clmg_mpi_halo;

/* The plan for `count` global rows (sorted, each once; any owner, this rank
 * included) that this rank wants from their owners (row_starts). */
clmg_status clmg_mpi_halo_create(clmg_mpi *mpi, const uint64_t *row_starts, size_t count,
                                 const int64_t *rows, clmg_mpi_halo *halo);
void clmg_mpi_halo_free(clmg_mpi_halo *halo);
/* received[k] = the owner's local[] value of requested row k. Not agreed
 * (only MPI can fail). */
clmg_status clmg_mpi_halo_exchange(clmg_mpi *mpi, const clmg_mpi_halo *halo, const double *local,
                                   double *received);
/* The requested rows of a row-distributed CSR (each rank passes its rows,
 * `local`, with global columns; local->cols the same everywhere): out gets
 * them in the order requested, with local->cols columns. */
clmg_status clmg_mpi_fetch_rows(clmg_mpi *mpi, const clmg_mpi_halo *halo, const clmg_csr *local,
                                clmg_csr *out);

/* Frees the host rows (A, P, R) of `count` levels; levels may be NULL. */
void clmg_mpi_level_rows_free(clmg_mpi_level_rows *levels, int count);

#endif
