/* Distributed sparse matrices: each rank's rows split into the local block
 * (columns it owns, renumbered from 0) and the off-process block (columns
 * other ranks own, renumbered as ghosts 0, 1, ... in global order), and the
 * halo exchange of their product.
 *
 * The exchange of y = alpha A x + beta y: (1) the entries of x other ranks
 * need are packed on the device (clmg_gather) and read back on the
 * transfer queue (clmg_mpi's second queue) once packed, receives are
 * posted; (2) the local block's product is queued behind the packing alone,
 * so the device computes it while the packed values travel and (3) the host
 * waits for them, sends them and waits for the ghosts; (4) the ghosts are
 * uploaded on the transfer queue (from one of two host buffers in turn, so
 * that the next exchange need not wait for this upload) and the
 * off-process block adds its product once they are there. The host
 * buffers are pinned (CL_MEM_ALLOC_HOST_PTR, mapped), so both transfers
 * are direct copies that need not wait for the host. Ghosts
 * are sorted by global column, so each neighbour's ghosts are one
 * contiguous run of the ghost vector and one message. */
#include "core/internal.h" /* clmg_host_parallel_for */
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clmg_mpi_matrix {
  clmg_mpi *mpi;
  clmg_dtype precision;
  uint64_t global_rows, global_cols, global_nonzeros, first_row, first_col;
  uint64_t *row_begin; /* size + 1: rank r owns rows [row_begin[r], row_begin[r + 1]) */
  uint64_t *col_begin; /* ... and the entries [col_begin[r], col_begin[r + 1]) of x */
  size_t local_rows, local_cols, local_nonzeros, ghosts, sends;
  int square; /* one partition for rows and columns: the diagonal is in the local block */
  clmg_matrix *local_block;
  /* the off-process block on the rows that have entries there (the
   * boundary rows): its product goes to ghost_product, then into y */
  clmg_matrix *ghost_block; /* NULL without ghosts */
  clmg_vector *ghost_rows;  /* uint32: which local row each of its rows is */
  clmg_vector *ghost_product;
  /* receives: from rank receive_rank[k], ghosts [receive_offset[k], receive_offset[k + 1]) */
  int receive_count, send_count;
  int *receive_rank, *receive_offset, *send_rank, *send_offset;
  clmg_vector *send_index;  /* uint32 local rows to pack, grouped by destination */
  clmg_vector *send_values; /* packed on the device */
  clmg_vector *ghost_values;
  /* Host staging, precision-typed. The ghosts alternate between two
   * buffers: an upload from one may still run while the next exchange
   * receives into the other, so consecutive products (smoothing steps)
   * need not wait for it. */
  void *send_host, *receive_host[2];
  cl_mem send_pinned, receive_pinned[2]; /* the buffers the host pointers map */
  MPI_Request *requests;                 /* receive_count + send_count */
  cl_event upload[2];   /* the last upload from each receive buffer (busy until it ends) */
  cl_event ghosts_read; /* the last off-process product: ghost_values is free after it */
  int current;          /* the receive buffer of the next exchange */
};

/* A pinned host buffer of `bytes` (at least one element), mapped for the
 * host; NULL with *mapped NULL when OpenCL refuses. */
static cl_mem pinned_buffer(clmg_mpi *mpi, size_t bytes, void **mapped) {
  cl_int error = CL_SUCCESS;
  *mapped = NULL;
  cl_mem buffer = clCreateBuffer(clmg_context_cl_context(mpi->context),
                                 CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &error);
  if (error != CL_SUCCESS)
    return NULL;
  *mapped = clEnqueueMapBuffer(mpi->transfer, buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                               0, NULL, NULL, &error);
  if (error != CL_SUCCESS) {
    clReleaseMemObject(buffer);
    *mapped = NULL;
    return NULL;
  }
  return buffer;
}

static void release_pinned(clmg_mpi *mpi, cl_mem buffer, void *mapped) {
  if (!buffer)
    return;
  clEnqueueUnmapMemObject(mpi->transfer, buffer, mapped, 0, NULL, NULL);
  clFinish(mpi->transfer);
  clReleaseMemObject(buffer);
}

static clmg_status no_memory(clmg_mpi *mpi, const char *what) {
  return clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "rank %d: no memory for %s",
                           mpi->rank, what);
}

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

clmg_status clmg_mpi_ghost_columns(const clmg_csr *rows, uint64_t first_col, size_t local_cols,
                                   int32_t **columns, size_t *count) {
  if (!rows || !columns || !count)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *columns = NULL;
  *count = 0;
  const size_t nnz = clmg_csr_nnz(rows);
  const uint64_t end = first_col + local_cols;
  size_t off = 0;
  for (size_t k = 0; k < nnz; ++k)
    off += (uint64_t)rows->col[k] < first_col || (uint64_t)rows->col[k] >= end;
  int32_t *ghosts = malloc((off + 1) * sizeof *ghosts);
  if (!ghosts)
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  off = 0;
  for (size_t k = 0; k < nnz; ++k)
    if ((uint64_t)rows->col[k] < first_col || (uint64_t)rows->col[k] >= end)
      ghosts[off++] = rows->col[k];
  qsort(ghosts, off, sizeof *ghosts, compare_int32);
  size_t unique = 0;
  for (size_t k = 0; k < off; ++k)
    if (unique == 0 || ghosts[k] != ghosts[unique - 1])
      ghosts[unique++] = ghosts[k];
  *columns = ghosts;
  *count = unique;
  return CLMG_SUCCESS;
}

/* The rank that owns global index `index` of a partition (begin is sorted). */
static int owner_of(const uint64_t *begin, int size, uint64_t index) {
  int low = 0, high = size - 1;
  while (low < high) {
    int middle = (low + high + 1) / 2;
    if (begin[middle] <= index)
      low = middle;
    else
      high = middle - 1;
  }
  return low;
}

/* What is wrong with row i of a, if anything (*at: the entry that says it). */
enum { ROW_FINE, ROW_NEGATIVE, ROW_OUTSIDE, ROW_UNSORTED };
static int row_fault(const clmg_csr *a, size_t i, int64_t *at) {
  if (a->row_ptr[i + 1] < a->row_ptr[i])
    return ROW_NEGATIVE;
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
    *at = k;
    if (a->col[k] < 0 || (size_t)a->col[k] >= a->cols)
      return ROW_OUTSIDE;
    if (k > a->row_ptr[i] && a->col[k] <= a->col[k - 1])
      return ROW_UNSORTED;
  }
  return ROW_FINE;
}

/* Whether row i of the local rows (data) is faulty, for
 * clmg_host_first_flagged. */
static int row_is_faulty(const void *data, size_t i) {
  int64_t at = 0;
  return row_fault(data, i, &at) != ROW_FINE;
}

/* Checks this rank's rows: CSR arrays present, columns in range and sorted
 * (the device formats assume it); the lowest faulty row is named. */
static clmg_status check_local_rows(clmg_mpi *mpi, const clmg_csr *a) {
  if (!a || (a->rows > 0 && (!a->row_ptr || !a->col || !a->val)) || (a->rows == 0 && !a->row_ptr))
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: the local rows are not a CSR matrix (NULL arrays)",
                             mpi->rank);
  if (a->cols > (size_t)INT32_MAX)
    return clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                             "rank %d: %zu columns; column indices are 32-bit", mpi->rank, a->cols);
  if (a->row_ptr[0] != 0)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: the local rows' offsets start at %lld, not 0", mpi->rank,
                             (long long)a->row_ptr[0]);
  /* the lowest faulty row, over ranges of rows on the host's threads */
  size_t i = clmg_host_first_flagged(a->rows, 4096, row_is_faulty, a);
  if (i == a->rows)
    return CLMG_SUCCESS;
  int64_t k = 0;
  switch (row_fault(a, i, &k)) {
  case ROW_NEGATIVE:
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: local row %zu has a negative length", mpi->rank, i);
  case ROW_OUTSIDE:
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: local row %zu has column %d, outside 0..%zu", mpi->rank, i,
                             (int)a->col[k], a->cols - 1);
  default:
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: local row %zu's columns are not sorted and unique",
                             mpi->rank, i);
  }
}

/* Checks that rank r's blocks, at starts[r * stride] with counts[r *
 * stride], follow each other from 0 and end at `total` (0: anywhere), and
 * fills begin[size + 1]. */
static clmg_status tile(clmg_mpi *mpi, const uint64_t *starts, const uint64_t *counts, int stride,
                        uint64_t total, const char *what, uint64_t *begin) {
  uint64_t next = 0;
  for (int r = 0; r < mpi->size; ++r) {
    if (starts[(size_t)r * (size_t)stride] != next)
      return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "the ranks' %s do not tile the matrix: rank %d's %s start at %llu "
                               "where they should start at %llu",
                               what, r, what,
                               (unsigned long long)starts[(size_t)r * (size_t)stride],
                               (unsigned long long)next);
    begin[r] = next;
    next += counts[(size_t)r * (size_t)stride];
  }
  begin[mpi->size] = next;
  if (total > 0 && next != total)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "the ranks own %llu %s of a matrix of %llu", (unsigned long long)next,
                             what, (unsigned long long)total);
  return CLMG_SUCCESS;
}

/* Every rank's rows and columns, checked to tile the matrix: the same
 * verdict on every rank, since each checks the same table. */
static clmg_status gather_blocks(clmg_mpi_matrix *m, clmg_status status, size_t cols) {
  clmg_mpi *mpi = m->mpi;
  enum { FIELDS = 5 };
  uint64_t mine[FIELDS] = {m->first_row, m->local_rows, m->first_col, m->local_cols,
                           status == CLMG_SUCCESS ? (uint64_t)cols : 0};
  uint64_t *all = malloc(FIELDS * (size_t)mpi->size * sizeof *all);
  m->row_begin = calloc((size_t)mpi->size + 1, sizeof *m->row_begin);
  m->col_begin = calloc((size_t)mpi->size + 1, sizeof *m->col_begin);
  if (status == CLMG_SUCCESS && (!all || !m->row_begin || !m->col_begin))
    status = no_memory(mpi, "the row blocks");
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS) {
    free(all);
    return status;
  }
  int code = MPI_Allgather(mine, FIELDS, MPI_UINT64_T, all, FIELDS, MPI_UINT64_T, mpi->comm);
  if (code != MPI_SUCCESS)
    status = clmg_mpi_failed(mpi, code, "MPI_Allgather (row blocks)");
  m->global_cols = all[4];
  for (int r = 1; status == CLMG_SUCCESS && r < mpi->size; ++r)
    if (all[FIELDS * r + 4] != m->global_cols)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "the ranks disagree on the matrix's columns: rank %d has %llu, "
                                 "rank 0 %llu",
                                 r, (unsigned long long)all[FIELDS * r + 4],
                                 (unsigned long long)m->global_cols);
  if (status == CLMG_SUCCESS)
    status = tile(mpi, all, all + 1, FIELDS, 0, "rows", m->row_begin);
  if (status == CLMG_SUCCESS)
    status = tile(mpi, all + 2, all + 3, FIELDS, m->global_cols, "columns", m->col_begin);
  m->global_rows = m->row_begin[mpi->size];
  m->square = status == CLMG_SUCCESS &&
              memcmp(m->row_begin, m->col_begin, ((size_t)mpi->size + 1) * sizeof(uint64_t)) == 0;
  free(all);
  return status;
}

/* One pass of the split over the rows [first, last) on one of the host's
 * threads, each row's entries at its own place: SPLIT_COUNT puts each
 * row's local and off-process entry counts in the blocks' row_ptr[i + 1];
 * SPLIT_FILL copies the entries, the local ones with local columns, the
 * off-process ones still with their global columns; SPLIT_GHOSTS turns
 * those into ghost numbers (sorted global order is ghost order, so each
 * row's ghost columns stay sorted). */
enum split_pass { SPLIT_COUNT, SPLIT_FILL, SPLIT_GHOSTS };
typedef struct split_job {
  const clmg_csr *a;
  uint64_t begin, end; /* the local columns */
  const int32_t *ghosts;
  size_t unique;
  clmg_csr *local_block, *ghost_block;
  enum split_pass pass;
} split_job;

static void split_range(void *data, size_t range, size_t first, size_t last) {
  (void)range;
  const split_job *job = data;
  const clmg_csr *a = job->a;
  clmg_csr *local_block = job->local_block, *ghost_block = job->ghost_block;
  for (size_t i = first; i < last; ++i) {
    if (job->pass == SPLIT_GHOSTS) {
      for (int64_t k = ghost_block->row_ptr[i]; k < ghost_block->row_ptr[i + 1]; ++k) {
        const int32_t *found = bsearch(&ghost_block->col[k], job->ghosts, job->unique,
                                       sizeof *job->ghosts, compare_int32);
        ghost_block->col[k] = (int32_t)(found - job->ghosts);
      }
      continue;
    }
    if (job->pass == SPLIT_COUNT) {
      int64_t off = 0;
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
        off += (uint64_t)a->col[k] < job->begin || (uint64_t)a->col[k] >= job->end;
      local_block->row_ptr[i + 1] = a->row_ptr[i + 1] - a->row_ptr[i] - off;
      ghost_block->row_ptr[i + 1] = off;
      continue;
    }
    int64_t local_next = local_block->row_ptr[i], ghost_next = ghost_block->row_ptr[i];
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      uint64_t column = (uint64_t)a->col[k];
      if (column >= job->begin && column < job->end) {
        local_block->col[local_next] = (int32_t)(column - job->begin);
        local_block->val[local_next++] = a->val[k];
      } else {
        ghost_block->col[ghost_next] = a->col[k];
        ghost_block->val[ghost_next++] = a->val[k];
      }
    }
  }
}

/* The off-process block (ghost_block: every row, global columns) made
 * ready for the exchange: its columns listed (*ghost_columns, sorted, each
 * once; ghosts: room for the block's entries, taken over) and turned into
 * ghost numbers (sorted global order is ghost order, so each row's ghost
 * columns stay sorted), its empty rows dropped, *ghost_rows the local row
 * of each row kept (room for every row). */
static clmg_status ghost_numbers(clmg_mpi_matrix *m, clmg_csr *ghost_block, uint32_t **ghost_rows,
                                 int32_t **ghost_columns, int32_t *ghosts) {
  const size_t rows = ghost_block->rows, off = (size_t)ghost_block->row_ptr[rows];
  if (!*ghost_rows)
    *ghost_rows = malloc((rows + 1) * sizeof **ghost_rows);
  if (!*ghost_rows) {
    free(ghosts);
    return no_memory(m->mpi, "the off-process rows");
  }
  if (off > 0)
    memcpy(ghosts, ghost_block->col, off * sizeof *ghosts);
  qsort(ghosts, off, sizeof *ghosts, compare_int32);
  size_t unique = 0;
  for (size_t k = 0; k < off; ++k)
    if (unique == 0 || ghosts[k] != ghosts[unique - 1])
      ghosts[unique++] = ghosts[k];
  split_job job = {NULL, 0, 0, ghosts, unique, NULL, ghost_block, SPLIT_GHOSTS};
  clmg_host_parallel_for(rows, 256, split_range, &job);
  ghost_block->cols = unique;
  /* keep only the rows with off-process entries; the list remembers them */
  size_t kept = 0;
  for (size_t i = 0; i < rows; ++i)
    if (ghost_block->row_ptr[i + 1] > ghost_block->row_ptr[i]) {
      (*ghost_rows)[kept] = (uint32_t)i;
      ghost_block->row_ptr[++kept] = ghost_block->row_ptr[i + 1];
    }
  ghost_block->rows = kept;
  m->ghosts = unique;
  *ghost_columns = ghosts;
  return CLMG_SUCCESS;
}

/* Splits the rows into the local and ghost CSR blocks and lists the ghosts'
 * global columns (sorted): three passes over the rows on the host's cores
 * (split_range) and a sort of the off-process entries' columns. */
static clmg_status split_rows(clmg_mpi_matrix *m, const clmg_csr *a, clmg_csr *local_block,
                              clmg_csr *ghost_block, uint32_t **ghost_rows,
                              int32_t **ghost_columns) {
  clmg_mpi *mpi = m->mpi;
  const size_t nnz = clmg_csr_nnz(a);
  local_block->rows = a->rows;
  local_block->cols = m->local_cols;
  local_block->row_ptr = calloc(a->rows + 1, sizeof(int64_t));
  ghost_block->rows = a->rows;
  ghost_block->row_ptr = calloc(a->rows + 1, sizeof(int64_t));
  *ghost_rows = malloc((a->rows + 1) * sizeof **ghost_rows);
  split_job job = {a,           m->first_col, m->first_col + m->local_cols, NULL, 0, local_block,
                   ghost_block, SPLIT_COUNT};
  size_t off = 0;
  int32_t *ghosts = NULL;
  if (local_block->row_ptr && ghost_block->row_ptr) {
    clmg_host_parallel_for(a->rows, 256, split_range, &job);
    for (size_t i = 0; i < a->rows; ++i) {
      local_block->row_ptr[i + 1] += local_block->row_ptr[i];
      ghost_block->row_ptr[i + 1] += ghost_block->row_ptr[i];
    }
    off = (size_t)ghost_block->row_ptr[a->rows];
    local_block->col = malloc((nnz - off + 1) * sizeof(int32_t));
    local_block->val = malloc((nnz - off + 1) * sizeof(double));
    ghost_block->col = malloc((off + 1) * sizeof(int32_t));
    ghost_block->val = malloc((off + 1) * sizeof(double));
    ghosts = malloc((off + 1) * sizeof *ghosts);
  }
  if (!local_block->row_ptr || !local_block->col || !local_block->val || !ghost_block->row_ptr ||
      !ghost_block->col || !ghost_block->val || !*ghost_rows || !ghosts) {
    free(ghosts);
    return no_memory(mpi, "the local and off-process blocks");
  }
  job.pass = SPLIT_FILL;
  clmg_host_parallel_for(a->rows, 256, split_range, &job);
  return ghost_numbers(m, ghost_block, ghost_rows, ghost_columns, ghosts);
}

/* Tells every rank which of its rows each neighbour needs (Alltoall of the
 * counts, Alltoallv of the global rows) and builds the exchange's lists. */
static clmg_status plan_exchange(clmg_mpi_matrix *m, const int32_t *ghost_columns,
                                 uint32_t **send_rows) {
  clmg_mpi *mpi = m->mpi;
  const int size = mpi->size;
  int *wanted = calloc((size_t)size, sizeof *wanted), *asked = calloc((size_t)size, sizeof *asked);
  int *wanted_at = calloc((size_t)size + 1, sizeof *wanted_at);
  int *asked_at = calloc((size_t)size + 1, sizeof *asked_at);
  clmg_status status = CLMG_SUCCESS;
  if (!wanted || !asked || !wanted_at || !asked_at)
    status = no_memory(mpi, "the halo plan");
  if (status == CLMG_SUCCESS && m->ghosts > (size_t)INT_MAX)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                               "rank %d: %zu ghost values; MPI counts stop at %d", mpi->rank,
                               m->ghosts, INT_MAX);
  for (size_t g = 0; status == CLMG_SUCCESS && g < m->ghosts; ++g)
    ++wanted[owner_of(m->col_begin, size, (uint64_t)ghost_columns[g])];
  status = clmg_mpi_agree(mpi, status);
  int code = MPI_SUCCESS;
  if (status == CLMG_SUCCESS) {
    code = MPI_Alltoall(wanted, 1, MPI_INT, asked, 1, MPI_INT, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoall (halo sizes)");
  }
  int32_t *asked_rows = NULL;
  if (status == CLMG_SUCCESS) {
    for (int r = 0; r < size; ++r) {
      wanted_at[r + 1] = wanted_at[r] + wanted[r];
      if ((int64_t)asked_at[r] + asked[r] > INT_MAX)
        status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                                   "rank %d: more than %d values to send", mpi->rank, INT_MAX);
      else
        asked_at[r + 1] = asked_at[r] + asked[r];
    }
    m->sends = (size_t)asked_at[size];
    asked_rows = malloc(((size_t)asked_at[size] + 1) * sizeof *asked_rows);
    *send_rows = malloc(((size_t)asked_at[size] + 1) * sizeof **send_rows);
    if (status == CLMG_SUCCESS && (!asked_rows || !*send_rows))
      status = no_memory(mpi, "the rows to send");
    status = clmg_mpi_agree(mpi, status);
  }
  const int exchanged = status == CLMG_SUCCESS; /* the same on every rank */
  if (status == CLMG_SUCCESS) {
    code = MPI_Alltoallv(ghost_columns, wanted, wanted_at, MPI_INT32_T, asked_rows, asked, asked_at,
                         MPI_INT32_T, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Alltoallv (halo rows)");
  }
  for (size_t k = 0; status == CLMG_SUCCESS && k < m->sends; ++k) {
    /* a neighbour asks only for entries it computed to be ours */
    (*send_rows)[k] = (uint32_t)((uint64_t)asked_rows[k] - m->first_col);
  }
  if (status == CLMG_SUCCESS) {
    for (int r = 0; r < size; ++r) {
      m->receive_count += wanted[r] > 0;
      m->send_count += asked[r] > 0;
    }
    m->receive_rank = malloc(((size_t)m->receive_count + 1) * sizeof(int));
    m->receive_offset = malloc(((size_t)m->receive_count + 1) * sizeof(int));
    m->send_rank = malloc(((size_t)m->send_count + 1) * sizeof(int));
    m->send_offset = malloc(((size_t)m->send_count + 1) * sizeof(int));
    m->requests =
        malloc(((size_t)m->receive_count + (size_t)m->send_count + 1) * sizeof(MPI_Request));
    if (!m->receive_rank || !m->receive_offset || !m->send_rank || !m->send_offset ||
        !m->requests) {
      status = no_memory(mpi, "the neighbour lists");
    } else {
      int receives = 0, sends = 0;
      for (int r = 0; r < size; ++r) {
        if (wanted[r] > 0) {
          m->receive_rank[receives] = r;
          m->receive_offset[receives++] = wanted_at[r];
        }
        if (asked[r] > 0) {
          m->send_rank[sends] = r;
          m->send_offset[sends++] = asked_at[r];
        }
      }
      m->receive_offset[receives] = wanted_at[size];
      m->send_offset[sends] = asked_at[size];
    }
  }
  if (exchanged) /* a failure after the last agreement reaches every rank */
    status = clmg_mpi_agree(mpi, status);
  free(asked_rows);
  free(wanted);
  free(asked);
  free(wanted_at);
  free(asked_at);
  return status;
}

/* The device side: both blocks, the pack list, the staging buffers. */
static clmg_status create_device_parts(clmg_mpi_matrix *m, const clmg_csr *local_block,
                                       const clmg_csr_device *device_block,
                                       const clmg_csr *ghost_block, const uint32_t *ghost_rows,
                                       const uint32_t *send_rows,
                                       const clmg_matrix_options *options) {
  clmg_context *context = m->mpi->context;
  clmg_status status =
      device_block ? clmg_matrix_create_from_device(context, device_block->rows, device_block->cols,
                                                    device_block->row_ptr, device_block->col,
                                                    device_block->val, options, &m->local_block)
                   : clmg_matrix_create(context, local_block, options, &m->local_block);
  if (status == CLMG_SUCCESS && m->ghosts > 0) {
    clmg_matrix_options ghost_options = *options;
    ghost_options.format = CLMG_FORMAT_CSR; /* short rows, most of them empty */
    status = clmg_matrix_create(context, ghost_block, &ghost_options, &m->ghost_block);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, m->precision, m->ghosts, &m->ghost_values);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_UINT32, ghost_block->rows, &m->ghost_rows);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_upload(m->ghost_rows, ghost_rows);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, m->precision, ghost_block->rows, &m->ghost_product);
  }
  if (status == CLMG_SUCCESS && m->sends > 0) {
    status = clmg_vector_create(context, CLMG_UINT32, m->sends, &m->send_index);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_upload(m->send_index, send_rows);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, m->precision, m->sends, &m->send_values);
  }
  size_t element = clmg_dtype_size(m->precision);
  m->send_pinned = pinned_buffer(m->mpi, (m->sends + 1) * element, &m->send_host);
  for (int k = 0; k < 2; ++k)
    m->receive_pinned[k] = pinned_buffer(m->mpi, (m->ghosts + 1) * element, &m->receive_host[k]);
  if (status == CLMG_SUCCESS && (!m->send_host || !m->receive_host[0] || !m->receive_host[1]))
    status = clmg_context_fail(m->mpi->context, CLMG_ERROR_OPENCL,
                               "rank %d: no pinned host memory for the halo's staging buffers "
                               "(%zu and 2 x %zu values)",
                               m->mpi->rank, m->sends, m->ghosts);
  return status; /* clmg_mpi_agree names the rank */
}

/* The seconds since *clock, which moves to now. */
static double lap(double *clock) {
  double now = MPI_Wtime(), seconds = now - *clock;
  *clock = now;
  return seconds;
}

void clmg_mpi_matrix_times_get(const clmg_mpi *mpi, clmg_mpi_matrix_times *times) {
  if (!times)
    return;
  memset(times, 0, sizeof *times);
  if (mpi)
    *times = mpi->matrix_times;
}

void clmg_mpi_matrix_times_reset(clmg_mpi *mpi) {
  if (mpi)
    memset(&mpi->matrix_times, 0, sizeof mpi->matrix_times);
}

/* Checks device rows as check_local_rows checks host rows, where the
 * device allows: the arrays' types and sizes (the columns' range is
 * clmg_matrix_create_from_device's check, their order the caller's
 * contract). */
static clmg_status check_device_rows(clmg_mpi *mpi, const clmg_csr_device *a) {
  if (!a || !a->row_ptr || !a->col || !a->val || clmg_vector_type(a->row_ptr) != CLMG_INT64 ||
      clmg_vector_length(a->row_ptr) != a->rows + 1 || clmg_vector_type(a->col) != CLMG_INT32 ||
      clmg_vector_length(a->val) != clmg_vector_length(a->col))
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: the local rows are not CSR arrays on the device (int64 "
                             "offsets, rows + 1 of them, int32 columns, values as many)",
                             mpi->rank);
  if (a->cols > (size_t)INT32_MAX)
    return clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                             "rank %d: %zu columns; column indices are 32-bit", mpi->rank, a->cols);
  return CLMG_SUCCESS;
}

/* The split of device rows: the local block stays on the device
 * (*device_block), the off-process block comes to the host (a's
 * off-process entries and its row offsets) for the ghosts' numbers. */
static clmg_status split_device_rows(clmg_mpi_matrix *m, const clmg_csr_device *a,
                                     clmg_csr_device *device_block, clmg_csr *ghost_block,
                                     uint32_t **ghost_rows, int32_t **ghost_columns) {
  clmg_mpi *mpi = m->mpi;
  clmg_csr_device outside = {0};
  clmg_status status = clmg_csr_device_split_columns(
      mpi->context, a, m->first_col, m->first_col + m->local_cols, device_block, &outside);
  if (status != CLMG_SUCCESS) {
    char message[sizeof(clmg_error){{0}}.message];
    snprintf(message, sizeof message, "%s", clmg_context_message(mpi->context));
    return clmg_context_fail(mpi->context, status, "rank %d: %s", mpi->rank, message);
  }
  clmg_error error = {{0}};
  status = clmg_csr_device_download(&outside, ghost_block, &error);
  clmg_csr_device_free(&outside);
  if (status != CLMG_SUCCESS)
    return clmg_context_fail(mpi->context, status, "rank %d: the off-process block: %s", mpi->rank,
                             error.message);
  int32_t *ghosts = malloc((clmg_csr_nnz(ghost_block) + 1) * sizeof *ghosts);
  if (!ghosts)
    return no_memory(mpi, "the ghosts");
  return ghost_numbers(m, ghost_block, ghost_rows, ghost_columns, ghosts);
}

/* A matrix from host rows (local_rows) or device rows (device_rows). */
static clmg_status create_matrix(clmg_mpi *mpi, uint64_t first_row, const clmg_csr *local_rows,
                                 const clmg_csr_device *device_rows, uint64_t first_col,
                                 size_t local_cols, const clmg_matrix_options *options,
                                 clmg_mpi_matrix **out) {
  if (!mpi || !out)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_matrix_create: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  clmg_matrix_options defaults;
  clmg_matrix_options_defaults(&defaults);
  if (!options)
    options = &defaults;
  clmg_mpi_matrix_times *times = &mpi->matrix_times;
  double clock = MPI_Wtime();
  clmg_mpi_matrix *m = calloc(1, sizeof *m);
  clmg_status status = !m            ? no_memory(mpi, "a matrix")
                       : device_rows ? check_device_rows(mpi, device_rows)
                                     : check_local_rows(mpi, local_rows);
  if (status == CLMG_SUCCESS)
    status = clmg_context_check_precision(mpi->context, options->precision);
  if (m) {
    const size_t rows = status != CLMG_SUCCESS ? 0
                        : device_rows          ? device_rows->rows
                                               : local_rows->rows;
    const size_t cols = status != CLMG_SUCCESS ? 0
                        : device_rows          ? device_rows->cols
                                               : local_rows->cols;
    m->mpi = mpi;
    m->precision = options->precision;
    m->first_row = first_row;
    m->first_col = first_col;
    m->local_rows = rows;
    m->local_cols = local_cols;
    m->local_nonzeros = status != CLMG_SUCCESS ? 0
                        : device_rows          ? clmg_csr_device_nnz(device_rows)
                                               : clmg_csr_nnz(local_rows);
    status = gather_blocks(m, status, cols);
  } else {
    status = clmg_mpi_agree(mpi, status);
  }
  clmg_csr local_block = {0}, ghost_block = {0};
  clmg_csr_device device_block = {0};
  int32_t *ghost_columns = NULL;
  uint32_t *send_rows = NULL, *ghost_rows = NULL;
  times->check_s += lap(&clock);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_agree(mpi, device_rows
                                     ? split_device_rows(m, device_rows, &device_block,
                                                         &ghost_block, &ghost_rows, &ghost_columns)
                                     : split_rows(m, local_rows, &local_block, &ghost_block,
                                                  &ghost_rows, &ghost_columns));
  times->split_s += lap(&clock);
  if (status == CLMG_SUCCESS)
    status = plan_exchange(m, ghost_columns, &send_rows);
  times->plan_s += lap(&clock);
  if (status == CLMG_SUCCESS)
    status =
        clmg_mpi_agree(mpi, create_device_parts(m, &local_block, device_rows ? &device_block : NULL,
                                                &ghost_block, ghost_rows, send_rows, options));
  times->device_s += lap(&clock);
  times->matrices += status == CLMG_SUCCESS;
  if (status == CLMG_SUCCESS) {
    uint64_t nonzeros = m->local_nonzeros;
    int code = MPI_Allreduce(&nonzeros, &m->global_nonzeros, 1, MPI_UINT64_T, MPI_SUM, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allreduce (nonzeros)");
  }
  clmg_csr_free(&local_block);
  clmg_csr_free(&ghost_block);
  clmg_csr_device_free(&device_block);
  free(ghost_columns);
  free(send_rows);
  free(ghost_rows);
  if (status != CLMG_SUCCESS) {
    clmg_mpi_matrix_destroy(m);
    return status;
  }
  *out = m;
  return CLMG_SUCCESS;
}

clmg_status clmg_mpi_matrix_create_rectangular(clmg_mpi *mpi, uint64_t first_row,
                                               const clmg_csr *local_rows, uint64_t first_col,
                                               size_t local_cols,
                                               const clmg_matrix_options *options,
                                               clmg_mpi_matrix **out) {
  return create_matrix(mpi, first_row, local_rows, NULL, first_col, local_cols, options, out);
}

clmg_status clmg_mpi_matrix_create_from_device(clmg_mpi *mpi, uint64_t first_row,
                                               const clmg_csr_device *local_rows,
                                               uint64_t first_col, size_t local_cols,
                                               const clmg_matrix_options *options,
                                               clmg_mpi_matrix **out) {
  if (mpi && !local_rows) { /* a NULL is refused as every rank's check would refuse it */
    clmg_csr_device none = {0};
    return create_matrix(mpi, first_row, NULL, &none, first_col, local_cols, options, out);
  }
  return create_matrix(mpi, first_row, NULL, local_rows, first_col, local_cols, options, out);
}

clmg_status clmg_mpi_matrix_create(clmg_mpi *mpi, uint64_t first_row, const clmg_csr *local_rows,
                                   const clmg_matrix_options *options, clmg_mpi_matrix **out) {
  clmg_status status = clmg_mpi_matrix_create_rectangular(
      mpi, first_row, local_rows, first_row, local_rows ? local_rows->rows : 0, options, out);
  if (status == CLMG_SUCCESS && (*out)->global_rows != (*out)->global_cols) {
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "the ranks own %llu rows of a square matrix of %llu columns",
                               (unsigned long long)(*out)->global_rows,
                               (unsigned long long)(*out)->global_cols);
    clmg_mpi_matrix_destroy(*out);
    *out = NULL;
  }
  return status;
}

void clmg_mpi_matrix_destroy(clmg_mpi_matrix *m) {
  if (!m)
    return;
  for (int k = 0; k < 2; ++k)
    if (m->upload[k]) {
      clWaitForEvents(1, &m->upload[k]);
      clReleaseEvent(m->upload[k]);
    }
  if (m->ghosts_read) {
    clWaitForEvents(1, &m->ghosts_read);
    clReleaseEvent(m->ghosts_read);
  }
  clmg_matrix_destroy(m->local_block);
  clmg_matrix_destroy(m->ghost_block);
  clmg_vector_destroy(m->send_index);
  clmg_vector_destroy(m->send_values);
  clmg_vector_destroy(m->ghost_values);
  clmg_vector_destroy(m->ghost_rows);
  clmg_vector_destroy(m->ghost_product);
  release_pinned(m->mpi, m->send_pinned, m->send_host);
  release_pinned(m->mpi, m->receive_pinned[0], m->receive_host[0]);
  release_pinned(m->mpi, m->receive_pinned[1], m->receive_host[1]);
  free(m->requests);
  free(m->receive_rank);
  free(m->receive_offset);
  free(m->send_rank);
  free(m->send_offset);
  free(m->row_begin);
  free(m->col_begin);
  free(m);
}

void clmg_mpi_matrix_get_info(const clmg_mpi_matrix *m, clmg_mpi_matrix_info *info) {
  if (!info)
    return;
  memset(info, 0, sizeof *info);
  if (!m)
    return;
  info->global_rows = m->global_rows;
  info->global_cols = m->global_cols;
  info->first_col = m->first_col;
  info->local_cols = m->local_cols;
  info->global_nonzeros = m->global_nonzeros;
  info->first_row = m->first_row;
  info->local_rows = m->local_rows;
  info->local_nonzeros = m->local_nonzeros;
  info->ghosts = m->ghosts;
  info->sends = m->sends;
  info->receive_neighbours = m->receive_count;
  info->send_neighbours = m->send_count;
}

/* ---- the halo exchange ---- */

/* Steps (1) of the exchange: pack and start reading what goes out, post the
 * receives. On a failure the messages still go (with whatever the buffers
 * hold), so that no other rank waits for them; the status says it. */
static clmg_status exchange_begin(clmg_mpi_matrix *m, const clmg_vector *x, cl_event *packed) {
  clmg_context *context = m->mpi->context;
  clmg_status status = CLMG_SUCCESS;
  *packed = NULL;
  cl_event *upload = &m->upload[m->current];
  if (*upload) { /* this buffer is the source of the upload two exchanges ago */
    clWaitForEvents(1, upload);
    clReleaseEvent(*upload);
    *upload = NULL;
  }
  size_t element = clmg_dtype_size(m->precision);
  if (m->sends > 0) {
    status = clmg_gather(x, m->send_index, m->send_values);
    cl_event gathered = NULL;
    cl_int error = CL_SUCCESS;
    if (status == CLMG_SUCCESS) {
      cl_command_queue queue = clmg_context_cl_queue(context);
      error = clEnqueueMarkerWithWaitList(queue, 0, NULL, &gathered);
      if (error == CL_SUCCESS)
        error = clFlush(queue);
    }
    if (status == CLMG_SUCCESS && error == CL_SUCCESS) {
      size_t offset = 0;
      cl_mem buffer = clmg_vector_cl_buffer(m->send_values, &offset);
      error = clEnqueueReadBuffer(m->mpi->transfer, buffer, CL_FALSE, offset * element,
                                  m->sends * element, m->send_host, 1, &gathered, packed);
      if (error == CL_SUCCESS)
        error = clFlush(m->mpi->transfer);
    }
    if (gathered)
      clReleaseEvent(gathered);
    if (status == CLMG_SUCCESS && error != CL_SUCCESS)
      status = clmg_context_fail(context, CLMG_ERROR_OPENCL,
                                 "rank %d: reading the halo back failed (OpenCL error %d)",
                                 m->mpi->rank, (int)error);
  }
  MPI_Datatype type = clmg_mpi_real_type(m->precision);
  for (int k = 0; k < m->receive_count; ++k) {
    int code =
        MPI_Irecv((char *)m->receive_host[m->current] + (size_t)m->receive_offset[k] * element,
                  m->receive_offset[k + 1] - m->receive_offset[k], type, m->receive_rank[k], 0,
                  m->mpi->comm, &m->requests[k]);
    if (code != MPI_SUCCESS) /* MPI_Waitall skips it */
      m->requests[k] = MPI_REQUEST_NULL;
    if (code != MPI_SUCCESS && status == CLMG_SUCCESS)
      status = clmg_mpi_failed(m->mpi, code, "MPI_Irecv (halo)");
  }
  return status;
}

/* Steps (3) and (4): send once the packed values are on the host, wait for
 * every message, upload the ghosts. The caller queued the local product
 * in between. */
static clmg_status exchange_end(clmg_mpi_matrix *m, cl_event packed, clmg_status status) {
  clmg_context *context = m->mpi->context;
  if (m->receive_count + m->send_count > 0) /* the local product starts while messages go */
    clFlush(clmg_context_cl_queue(context));
  if (packed) {
    cl_int error = clWaitForEvents(1, &packed);
    clReleaseEvent(packed);
    if (error != CL_SUCCESS && status == CLMG_SUCCESS)
      status = clmg_context_fail(context, CLMG_ERROR_OPENCL,
                                 "rank %d: reading the halo back failed (OpenCL error %d)",
                                 m->mpi->rank, (int)error);
  }
  size_t element = clmg_dtype_size(m->precision);
  MPI_Datatype type = clmg_mpi_real_type(m->precision);
  for (int k = 0; k < m->send_count; ++k) {
    int code = MPI_Isend((char *)m->send_host + (size_t)m->send_offset[k] * element,
                         m->send_offset[k + 1] - m->send_offset[k], type, m->send_rank[k], 0,
                         m->mpi->comm, &m->requests[m->receive_count + k]);
    if (code != MPI_SUCCESS)
      m->requests[m->receive_count + k] = MPI_REQUEST_NULL;
    if (code != MPI_SUCCESS && status == CLMG_SUCCESS)
      status = clmg_mpi_failed(m->mpi, code, "MPI_Isend (halo)");
  }
  int code = MPI_Waitall(m->receive_count + m->send_count, m->requests, MPI_STATUSES_IGNORE);
  if (code != MPI_SUCCESS && status == CLMG_SUCCESS)
    status = clmg_mpi_failed(m->mpi, code, "MPI_Waitall (halo)");
  if (status == CLMG_SUCCESS && m->ghosts > 0) {
    /* after the last off-process product has read the ghosts; the context's
     * queue waits for the upload before the next one */
    size_t offset = 0;
    cl_mem buffer = clmg_vector_cl_buffer(m->ghost_values, &offset);
    cl_int error = clEnqueueWriteBuffer(
        m->mpi->transfer, buffer, CL_FALSE, offset * element, m->ghosts * element,
        m->receive_host[m->current], m->ghosts_read ? 1 : 0,
        m->ghosts_read ? &m->ghosts_read : NULL, &m->upload[m->current]);
    if (error != CL_SUCCESS)
      m->upload[m->current] = NULL;
    if (error == CL_SUCCESS)
      error = clFlush(m->mpi->transfer);
    if (error == CL_SUCCESS)
      error = clEnqueueBarrierWithWaitList(clmg_context_cl_queue(context), 1,
                                           &m->upload[m->current], NULL);
    if (m->ghosts_read) {
      clReleaseEvent(m->ghosts_read);
      m->ghosts_read = NULL;
    }
    if (error != CL_SUCCESS)
      status = clmg_context_fail(context, CLMG_ERROR_OPENCL,
                                 "rank %d: uploading the halo failed (OpenCL error %d)",
                                 m->mpi->rank, (int)error);
  }
  m->current = 1 - m->current;
  return status;
}

/* y += alpha (off-process block) ghosts, on the boundary rows only. */
static clmg_status add_ghost_product(clmg_mpi_matrix *m, double alpha, clmg_vector *y) {
  if (!m->ghost_block)
    return CLMG_SUCCESS;
  clmg_status status = clmg_spmv(1.0, m->ghost_block, m->ghost_values, 0.0, m->ghost_product);
  cl_command_queue queue = clmg_context_cl_queue(m->mpi->context);
  /* the next upload may overwrite the ghosts after this marker; without
   * one, the ghosts are free once the queue is done */
  if (status == CLMG_SUCCESS &&
      clEnqueueMarkerWithWaitList(queue, 0, NULL, &m->ghosts_read) != CL_SUCCESS) {
    m->ghosts_read = NULL;
    clFinish(queue);
    status = clmg_context_fail(m->mpi->context, CLMG_ERROR_OPENCL,
                               "rank %d: marking the off-process product failed", m->mpi->rank);
  }
  return status == CLMG_SUCCESS ? clmg_scatter_add(alpha, m->ghost_product, m->ghost_rows, y)
                                : status;
}

static clmg_status distributed_apply(void *data, double alpha, const clmg_vector *x, double beta,
                                     clmg_vector *y) {
  clmg_mpi_matrix *m = data;
  cl_event packed = NULL;
  clmg_status status = exchange_begin(m, x, &packed);
  if (status == CLMG_SUCCESS && m->local_rows > 0)
    status = clmg_spmv(alpha, m->local_block, x, beta, y);
  status = exchange_end(m, packed, status);
  return status == CLMG_SUCCESS ? add_ghost_product(m, alpha, y) : status;
}

static clmg_status distributed_defect(void *data, const clmg_vector *b, const clmg_vector *x,
                                      clmg_vector *r) {
  clmg_mpi_matrix *m = data;
  cl_event packed = NULL;
  clmg_status status = exchange_begin(m, x, &packed);
  if (status == CLMG_SUCCESS && m->local_rows > 0)
    status = clmg_defect(m->local_block, b, x, r);
  status = exchange_end(m, packed, status);
  return status == CLMG_SUCCESS ? add_ghost_product(m, -1.0, r) : status;
}

static clmg_status distributed_diagonal(void *data, clmg_vector *diagonal) {
  const clmg_mpi_matrix *m = data;
  return m->local_rows > 0 ? clmg_matrix_diagonal(m->local_block, diagonal) : CLMG_SUCCESS;
}

static double distributed_bytes(void *data) {
  const clmg_mpi_matrix *m = data;
  clmg_operator local = {0}, ghost = {0};
  double bytes = 0;
  if (clmg_operator_from_matrix(m->local_block, 0, &local) == CLMG_SUCCESS)
    bytes += clmg_operator_bytes(&local);
  if (m->ghost_block && clmg_operator_from_matrix(m->ghost_block, 0, &ghost) == CLMG_SUCCESS)
    bytes += clmg_operator_bytes(&ghost);
  clmg_operator_destroy(&local);
  clmg_operator_destroy(&ghost);
  return bytes;
}

static void destroy_owned(void *data) {
  clmg_mpi_matrix_destroy(data);
}

clmg_status clmg_mpi_matrix_operator(clmg_mpi_matrix *m, int take_ownership, clmg_operator *op) {
  if (!op)
    return m ? clmg_context_fail(m->mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "clmg_mpi_matrix_operator: NULL output")
             : CLMG_ERROR_INVALID_ARGUMENT;
  memset(op, 0, sizeof *op);
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  op->data = m;
  op->context = m->mpi->context;
  op->rows = m->local_rows;
  op->cols = m->local_cols;
  op->precision = m->precision;
  op->name = "distributed matrix";
  op->apply = distributed_apply;
  op->defect = distributed_defect;
  op->diagonal = m->square ? distributed_diagonal : NULL;
  op->bytes = distributed_bytes;
  op->destroy = take_ownership ? destroy_owned : NULL;
  return CLMG_SUCCESS;
}

clmg_mpi_matrix *clmg_mpi_operator_matrix(const clmg_operator *op) {
  return op && op->apply == distributed_apply ? op->data : NULL;
}

clmg_status clmg_mpi_preconditioner_jacobi(const clmg_mpi_matrix *m,
                                           clmg_preconditioner *preconditioner) {
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!m->square)
    return clmg_context_fail(m->mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "jacobi: the distributed matrix's rows and columns are partitioned "
                             "differently");
  return clmg_preconditioner_jacobi(m->local_block, preconditioner);
}

/* ---- vectors between one rank and all ---- */

/* Each rank's row count and first row as MPI counts, or a failure when a
 * block passes MPI's int counts. */
static clmg_status block_counts(const clmg_mpi_matrix *m, int *counts, int *displacements) {
  for (int r = 0; r < m->mpi->size; ++r) {
    if (m->row_begin[r + 1] > (uint64_t)INT_MAX)
      return clmg_context_fail(m->mpi->context, CLMG_ERROR_UNSUPPORTED,
                               "a vector of %llu rows passes MPI's int counts",
                               (unsigned long long)m->global_rows);
    counts[r] = (int)(m->row_begin[r + 1] - m->row_begin[r]);
    displacements[r] = (int)m->row_begin[r];
  }
  return CLMG_SUCCESS;
}

static clmg_status check_vector_call(const clmg_mpi_matrix *m, int root, const clmg_vector *local,
                                     const double *global, const char *who) {
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (root < 0 || root >= m->mpi->size)
    return clmg_context_fail(m->mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "%s: root %d is not a rank of %d", who, root, m->mpi->size);
  if (!local || clmg_vector_length(local) != m->local_rows)
    return clmg_context_fail(m->mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: %s: the local vector has %zu entries, the rank owns %zu "
                             "rows",
                             m->mpi->rank, who, local ? clmg_vector_length(local) : (size_t)0,
                             m->local_rows);
  if (m->mpi->rank == root && !global && m->global_rows > 0)
    return clmg_context_fail(m->mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "%s: NULL global vector on the root", who);
  return CLMG_SUCCESS;
}

/* What a scatter or gather needs: every rank's rows as MPI counts and this
 * rank's values on the host; the checks made. */
typedef struct vector_transfer {
  int *counts, *displacements;
  double *mine;
} vector_transfer;

static clmg_status transfer_begin(const clmg_mpi_matrix *m, int root, const clmg_vector *local,
                                  const double *global, const char *who, vector_transfer *t) {
  clmg_mpi *mpi = m->mpi;
  t->counts = malloc((size_t)mpi->size * sizeof *t->counts);
  t->displacements = malloc((size_t)mpi->size * sizeof *t->displacements);
  t->mine = malloc((m->local_rows + 1) * sizeof *t->mine);
  clmg_status status = t->counts && t->displacements && t->mine
                           ? check_vector_call(m, root, local, global, who)
                           : no_memory(mpi, who);
  return status == CLMG_SUCCESS ? block_counts(m, t->counts, t->displacements) : status;
}

static void transfer_end(vector_transfer *t) {
  free(t->counts);
  free(t->displacements);
  free(t->mine);
}

clmg_status clmg_mpi_vector_scatter(const clmg_mpi_matrix *m, int root, const double *global,
                                    clmg_vector *local) {
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_mpi *mpi = m->mpi;
  vector_transfer t;
  clmg_status status =
      clmg_mpi_agree(mpi, transfer_begin(m, root, local, global, "clmg_mpi_vector_scatter", &t));
  if (status == CLMG_SUCCESS) {
    int code = MPI_Scatterv(global, t.counts, t.displacements, MPI_DOUBLE, t.mine,
                            (int)m->local_rows, MPI_DOUBLE, root, mpi->comm);
    status = code == MPI_SUCCESS ? CLMG_SUCCESS : clmg_mpi_failed(mpi, code, "MPI_Scatterv");
  }
  if (status == CLMG_SUCCESS && m->local_rows > 0)
    status = clmg_vector_upload_doubles(local, t.mine);
  transfer_end(&t);
  return status;
}

clmg_status clmg_mpi_vector_gather(const clmg_mpi_matrix *m, int root, const clmg_vector *local,
                                   double *global) {
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_mpi *mpi = m->mpi;
  vector_transfer t;
  clmg_status status = transfer_begin(m, root, local, global, "clmg_mpi_vector_gather", &t);
  if (status == CLMG_SUCCESS && m->local_rows > 0)
    status = clmg_vector_download_doubles(local, t.mine);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    int code = MPI_Gatherv(t.mine, (int)m->local_rows, MPI_DOUBLE, global, t.counts,
                           t.displacements, MPI_DOUBLE, root, mpi->comm);
    status = code == MPI_SUCCESS ? CLMG_SUCCESS : clmg_mpi_failed(mpi, code, "MPI_Gatherv");
  }
  transfer_end(&t);
  return status;
}
