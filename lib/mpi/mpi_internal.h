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

#endif
