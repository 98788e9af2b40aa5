/* Whether a matrix held as the ranks' rows is symmetric with a positive
 * diagonal: each rank gets the rows of the transpose it owns (every entry
 * sent to its mirror's owner) and compares them with its own. */
#include "mpi/mpi_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Row i (local) of a and of its transpose t, both sorted and without
 * duplicates: 1 when every entry matches its mirror (0 where absent) within
 * tolerance of the larger, the test of clmg_csr_is_symmetric. */
static int row_matches(const clmg_csr *a, const clmg_csr *t, size_t i, double tolerance) {
  int64_t p = a->row_ptr[i], p_end = a->row_ptr[i + 1];
  int64_t q = t->row_ptr[i], q_end = t->row_ptr[i + 1];
  while (p < p_end || q < q_end) {
    double value = 0, mirrored = 0;
    if (q >= q_end || (p < p_end && a->col[p] < t->col[q])) {
      value = a->val[p++];
    } else if (p >= p_end || t->col[q] < a->col[p]) {
      mirrored = t->val[q++];
    } else {
      value = a->val[p++];
      mirrored = t->val[q++];
    }
    /* Written so that NaN compares as not symmetric. */
    if (!(fabs(value - mirrored) <= tolerance * fmax(fabs(value), fabs(mirrored))))
      return 0;
  }
  return 1;
}

/* The ranks' row blocks from each rank's (first_row, rows), checked to
 * follow each other from row 0 and to cover the local->cols columns. */
static clmg_status gather_row_starts(clmg_mpi *mpi, uint64_t first_row, const clmg_csr *local,
                                     uint64_t *row_starts) {
  const int size = mpi->size;
  uint64_t mine[2] = {first_row, local->rows};
  uint64_t *all = malloc(2 * (size_t)size * sizeof *all);
  if (!all)
    return clmg_mpi_agree(mpi, clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                                 "no memory for the row blocks of %d ranks", size));
  clmg_status status = clmg_mpi_agree(mpi, CLMG_SUCCESS);
  int code = status == CLMG_SUCCESS
                 ? MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, mpi->comm)
                 : MPI_SUCCESS;
  if (status == CLMG_SUCCESS && code != MPI_SUCCESS)
    status = clmg_mpi_failed(mpi, code, "MPI_Allgather (row blocks)");
  if (status == CLMG_SUCCESS) {
    uint64_t next = 0;
    for (int r = 0; r < size && status == CLMG_SUCCESS; ++r) {
      if (all[2 * r] != next)
        status =
            clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                              "rank %d's rows start at %llu, not at %llu where rank %d's "
                              "end",
                              r, (unsigned long long)all[2 * r], (unsigned long long)next, r - 1);
      row_starts[r] = next;
      next += all[2 * r + 1];
    }
    row_starts[size] = next;
    if (status == CLMG_SUCCESS && next != local->cols)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "the ranks hold %llu rows of a matrix of %zu columns; it must be "
                                 "square",
                                 (unsigned long long)next, local->cols);
    status = clmg_mpi_agree(mpi, status);
  }
  free(all);
  return status;
}

clmg_status clmg_mpi_csr_check_symmetric(clmg_mpi *mpi, uint64_t first_row, const clmg_csr *local,
                                         double relative_tolerance, clmg_mpi_symmetry *result) {
  if (!mpi)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (result)
    memset(result, 0, sizeof *result);
  clmg_status status = CLMG_SUCCESS;
  if (!result || !local || !local->row_ptr ||
      (clmg_csr_nnz(local) > 0 && (!local->col || !local->val)))
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "clmg_mpi_csr_check_symmetric: NULL result or rows");
  uint64_t *row_starts = malloc(((size_t)mpi->size + 1) * sizeof *row_starts);
  size_t count = status == CLMG_SUCCESS ? clmg_csr_nnz(local) : 0;
  int64_t *rows = malloc((count + 1) * sizeof *rows), *cols = malloc((count + 1) * sizeof *cols);
  if (status == CLMG_SUCCESS && (!row_starts || !rows || !cols))
    status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                               "no memory to check the symmetry of %zu entries", count);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = gather_row_starts(mpi, first_row, local, row_starts);
  clmg_csr a = {0}, t = {0};
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < local->rows; ++i)
      for (int64_t k = local->row_ptr[i]; k < local->row_ptr[i + 1]; ++k) {
        rows[k] = (int64_t)(first_row + i);
        cols[k] = local->col[k];
      }
    /* this rank's rows sorted and summed, and its rows of the transpose */
    status = clmg_mpi_rows_from_triplets(mpi, row_starts, local->cols, count, rows, cols,
                                         local->val, &a);
    if (status == CLMG_SUCCESS)
      status = clmg_mpi_rows_from_triplets(mpi, row_starts, local->cols, count, cols, rows,
                                           local->val, &t);
  }
  free(rows);
  free(cols);
  free(row_starts);
  if (status == CLMG_SUCCESS) {
    int symmetric = 1;
    uint64_t bad = 0, first_bad = UINT64_MAX;
    double first_value = 0;
    for (size_t i = 0; i < a.rows; ++i) {
      symmetric = symmetric && row_matches(&a, &t, i, relative_tolerance);
      double diagonal = 0;
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        if ((uint64_t)a.col[k] == first_row + i)
          diagonal = a.val[k];
      if (!(diagonal > 0) && bad++ == 0) {
        first_bad = first_row + i;
        first_value = diagonal;
      }
    }
    uint64_t first_overall = UINT64_MAX;
    int code = MPI_Allreduce(MPI_IN_PLACE, &symmetric, 1, MPI_INT, MPI_MIN, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UINT64_T, MPI_SUM, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Allreduce(&first_bad, &first_overall, 1, MPI_UINT64_T, MPI_MIN, mpi->comm);
    if (code == MPI_SUCCESS) { /* the value of the rank that holds the first */
      double mine = first_bad == first_overall ? first_value : 0;
      code = MPI_Allreduce(&mine, &first_value, 1, MPI_DOUBLE, MPI_SUM, mpi->comm);
    }
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allreduce (the symmetry check)");
    status = clmg_mpi_agree(mpi, status);
    if (status == CLMG_SUCCESS) {
      result->symmetric = symmetric;
      result->nonpositive_diagonal = bad;
      result->first_nonpositive = bad > 0 ? first_overall : 0;
      result->first_diagonal = bad > 0 ? first_value : 0;
    }
  }
  clmg_csr_free(&a);
  clmg_csr_free(&t);
  return status;
}
