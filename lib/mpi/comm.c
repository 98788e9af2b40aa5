/* A clmg context bound to an MPI communicator: the reducer that makes every
 * BLAS-1 reduction on the context a global one, and the agreement on a
 * status that lets every rank fail together. */
#include "mpi/mpi_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages travel with a failure up to this length. */
enum { AGREED_MESSAGE_BYTES = 1024 };

MPI_Datatype clmg_mpi_real_type(clmg_dtype type) {
  return type == CLMG_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
}

clmg_status clmg_mpi_failed(clmg_mpi *mpi, int code, const char *call) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    snprintf(text, sizeof text, "MPI error %d", code);
  return clmg_context_fail(mpi->context, CLMG_ERROR_COMMUNICATION, "rank %d: %s failed: %s",
                           mpi->rank, call, text);
}

static clmg_status mpi_reduce(void *data, clmg_reduce_op op, double *values, int count) {
  clmg_mpi *mpi = data;
  int code = MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE,
                           op == CLMG_REDUCE_MAX ? MPI_MAX : MPI_SUM, mpi->comm);
  return code == MPI_SUCCESS ? CLMG_SUCCESS : clmg_mpi_failed(mpi, code, "MPI_Allreduce");
}

static clmg_status mpi_agree(void *data, clmg_status status) {
  return clmg_mpi_agree(data, status);
}

void clmg_mpi_local_begin(clmg_mpi *mpi) {
  clmg_context_set_reducer(mpi->context, NULL);
}

void clmg_mpi_local_end(clmg_mpi *mpi) {
  clmg_reducer reducer = {mpi, mpi_reduce, mpi_agree};
  clmg_context_set_reducer(mpi->context, &reducer);
}

clmg_status clmg_mpi_create(clmg_context *context, MPI_Comm comm, clmg_mpi **out) {
  if (!out)
    return clmg_context_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_mpi_create: NULL output");
  *out = NULL;
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return clmg_context_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_create: MPI is not initialized (call MPI_Init first)");
  clmg_mpi *mpi = calloc(1, sizeof *mpi);
  if (!mpi)
    return clmg_context_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "clmg_mpi_create: no memory");
  mpi->context = context;
  int code = MPI_Comm_dup(comm, &mpi->comm);
  if (code != MPI_SUCCESS) {
    clmg_status status = clmg_mpi_failed(mpi, code, "MPI_Comm_dup");
    free(mpi);
    return status;
  }
  /* failures come back as codes, which become messages, never aborts */
  MPI_Comm_set_errhandler(mpi->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi->comm, &mpi->rank);
  MPI_Comm_size(mpi->comm, &mpi->size);
  cl_int error = CL_SUCCESS;
  mpi->transfer = clCreateCommandQueue(clmg_context_cl_context(context),
                                       clmg_context_cl_device(context), 0, &error);
  /* every rank learns whether every rank has its queue, so that none goes
   * on alone into a collective call */
  int made = error == CL_SUCCESS, all_made = 0;
  code = MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_MIN, mpi->comm);
  if (code != MPI_SUCCESS || !all_made) {
    if (mpi->transfer && error == CL_SUCCESS)
      clReleaseCommandQueue(mpi->transfer);
    MPI_Comm_free(&mpi->comm);
    free(mpi);
    if (!made)
      return clmg_context_fail(context, CLMG_ERROR_OPENCL,
                               "clmg_mpi_create: no second command queue for the halos "
                               "(clCreateCommandQueue: OpenCL error %d)",
                               (int)error);
    return clmg_context_fail(context, CLMG_ERROR_COMMUNICATION, "clmg_mpi_create: %s",
                             code != MPI_SUCCESS ? "MPI_Allreduce failed"
                                                 : "another rank has no command queue for the "
                                                   "halos");
  }
  /* the transfer queue reads and writes the context's buffers unordered
   * against its queue: a freed buffer must not be handed out again */
  clmg_context_set_buffer_cache(context, 0);
  clmg_reducer reducer = {mpi, mpi_reduce, mpi_agree};
  clmg_context_set_reducer(context, &reducer);
  *out = mpi;
  return CLMG_SUCCESS;
}

void clmg_mpi_destroy(clmg_mpi *mpi) {
  if (!mpi)
    return;
  clmg_context_set_reducer(mpi->context, NULL);
  if (mpi->transfer) {
    clFinish(mpi->transfer);
    clReleaseCommandQueue(mpi->transfer);
  }
  MPI_Comm_free(&mpi->comm);
  free(mpi);
}

void clmg_mpi_host_device(MPI_Comm comm, char *device, size_t size) {
  if (!device || size == 0)
    return;
  device[0] = '\0';
  MPI_Comm host;
  int local_rank = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) != MPI_SUCCESS)
    return;
  MPI_Comm_rank(host, &local_rank);
  MPI_Comm_free(&host);
  clmg_device_info *devices = NULL;
  size_t count = 0;
  if (clmg_list_devices(&devices, &count, NULL, 0) != CLMG_SUCCESS)
    return;
  size_t gpus = 0, first = count, pick = count;
  for (size_t i = 0; i < count; ++i)
    if (devices[i].is_gpu &&
        (first == count || devices[i].platform_index == devices[first].platform_index)) {
      first = first == count ? i : first;
      ++gpus;
    }
  /* the platform's GPUs need not follow each other in the list */
  for (size_t i = first, seen = 0; gpus > 0 && i < count; ++i)
    if (devices[i].is_gpu && devices[i].platform_index == devices[first].platform_index &&
        seen++ == (size_t)local_rank % gpus)
      pick = i;
  if (pick < count)
    snprintf(device, size, "%u:%u", devices[pick].platform_index, devices[pick].device_index);
  free(devices);
}

int clmg_mpi_rank(const clmg_mpi *mpi) {
  return mpi ? mpi->rank : 0;
}
int clmg_mpi_size(const clmg_mpi *mpi) {
  return mpi ? mpi->size : 1;
}
clmg_context *clmg_mpi_context(const clmg_mpi *mpi) {
  return mpi ? mpi->context : NULL;
}

/* 1 when message starts "rank N: ". */
static int names_a_rank(const char *message) {
  if (strncmp(message, "rank ", 5) != 0 || !isdigit((unsigned char)message[5]))
    return 0;
  const char *p = message + 5;
  while (isdigit((unsigned char)*p))
    ++p;
  return p[0] == ':' && p[1] == ' ';
}

clmg_status clmg_mpi_agree(clmg_mpi *mpi, clmg_status status) {
  if (!mpi)
    return CLMG_ERROR_INVALID_ARGUMENT;
  /* the lowest rank with a failure of its own speaks; a rank that only
   * stopped because another failed (clmg_context_agree_local's "another
   * process failed") speaks only when no rank has more to say */
  int induced = status == CLMG_ERROR_COMMUNICATION &&
                strstr(clmg_context_message(mpi->context), CLMG_ANOTHER_PROCESS_FAILED) != NULL;
  int mine = status == CLMG_SUCCESS ? 2 * mpi->size : induced ? mpi->size + mpi->rank : mpi->rank;
  int best = 2 * mpi->size;
  int code = MPI_Allreduce(&mine, &best, 1, MPI_INT, MPI_MIN, mpi->comm);
  if (code != MPI_SUCCESS)
    return clmg_mpi_failed(mpi, code, "MPI_Allreduce (agreeing on a status)");
  if (best == 2 * mpi->size)
    return CLMG_SUCCESS;
  int first = best % mpi->size;
  /* the lowest failing rank tells the others what failed */
  int agreed = (int)status;
  char message[AGREED_MESSAGE_BYTES] = "";
  if (mpi->rank == first)
    snprintf(message, sizeof message, "%s", clmg_context_message(mpi->context));
  code = MPI_Bcast(&agreed, 1, MPI_INT, first, mpi->comm);
  if (code == MPI_SUCCESS)
    code = MPI_Bcast(message, (int)sizeof message, MPI_CHAR, first, mpi->comm);
  if (code != MPI_SUCCESS)
    return clmg_mpi_failed(mpi, code, "MPI_Bcast (a failure's message)");
  message[sizeof message - 1] = '\0';
  if (agreed == CLMG_SUCCESS) /* a rank that failed without a status: keep it a failure */
    agreed = CLMG_ERROR_INVALID_ARGUMENT;
  if (names_a_rank(message)) /* clmg_mpi's own, or a failure agreed on before */
    return clmg_context_fail(mpi->context, (clmg_status)agreed, "%s", message);
  return clmg_context_fail(mpi->context, (clmg_status)agreed, "rank %d: %s", first,
                           message[0] ? message : clmg_status_string((clmg_status)agreed));
}

void clmg_mpi_even_rows(const clmg_mpi *mpi, uint64_t rows, uint64_t *first, uint64_t *count) {
  uint64_t size = (uint64_t)clmg_mpi_size(mpi), rank = (uint64_t)clmg_mpi_rank(mpi);
  uint64_t base = rows / size, extra = rows % size;
  *count = base + (rank < extra ? 1 : 0);
  *first = rank * base + (rank < extra ? rank : extra);
}

void clmg_mpi_level_rows_free(clmg_mpi_level_rows *levels, int count) {
  for (int l = 0; levels && l < count; ++l) {
    clmg_csr_free(&levels[l].a);
    clmg_csr_free(&levels[l].p);
    clmg_csr_free(&levels[l].r);
    clmg_csr_device_free(&levels[l].a_device);
    clmg_csr_device_free(&levels[l].p_device);
    clmg_csr_device_free(&levels[l].r_device);
  }
}
