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
                                        uint64_t global_cols, size_t count,
                                        const int64_t *rows, const int64_t *cols,
                                        const double *values, clmg_csr *out);
/* The same, each pair of ranks moving at most `chunk` entries per MPI_Alltoallv
 * round (0, or more than INT_MAX / size: INT_MAX / size, which keeps a round's
 * counts and displacements within an int). clmg_mpi_rows_from_triplets passes 0;
 * tests pass small chunks to run many rounds. */
clmg_status clmg_mpi_rows_from_triplets_chunked(clmg_mpi *mpi, const uint64_t *row_starts,
                                                uint64_t global_cols, size_t count,
                                                const int64_t *rows, const int64_t *cols,
                                                const double *values, size_t chunk,
                                                clmg_csr *out);

#endif
