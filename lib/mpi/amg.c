/* Smoothed-aggregation AMG set up across the ranks (clmg/mpi.h): the
 * serial algorithm of lib/amg/smoothed_aggregation.c with the products
 * distributed.
 *
 * Aggregation is "uncoupled", as ML's and MueLu's uncoupled aggregation:
 * each rank aggregates the strength graph of its diagonal block (its rows,
 * its columns) with the serial clmg_amg_aggregate, so aggregates never
 * cross ranks (a row whose strong neighbours are all on other ranks
 * becomes a singleton aggregate); they are numbered in rank order, and the
 * coarse rows of a rank are its aggregates. The tentative prolongator P~ (the constant, or
 * on coarser levels the coarse candidate, normalised per aggregate) is
 * then local. omega = 4/3 / lambda_max(D^-1 A) comes from a power
 * iteration on the host with the ghost values exchanged; P = (I - omega
 * D^-1 A) P~ and A P need the rows of P~ and P for A's ghost columns
 * (fetched from their owners); A_c = P^T (A P) sums each rank's partial
 * rows P_r^T (A P)_r at the owners of the coarse rows, and R = P^T gathers
 * the columns of P a rank owns from every rank that has entries in them.
 * On one rank every step is the serial one, in the same order: the
 * hierarchy equals clmg_amg_hierarchy_build's (host) with the same
 * options. */
#include "mpi/mpi_internal.h"

#include "clmg/amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The power iteration of the serial setup: POWER_STEPS steps from the
 * pseudo-random start of lib/amg/smoothed_aggregation.c, which each rank
 * fills on its rows from its first row (clmg_fill_pseudo_random's first):
 * the start vector does not depend on the number of ranks. */
enum { POWER_STEPS = 20 };
static const uint64_t POWER_SEED = 0x9e3779b97f4a7c15u;

/* A local step's clmg_error as the context's message, "rank R: ...". */
static clmg_status local_failure(clmg_mpi *mpi, clmg_status status, const clmg_error *error) {
  if (status == CLMG_SUCCESS)
    return status;
  return clmg_context_fail(mpi->context, status, "rank %d: %s", mpi->rank, error->message);
}

static clmg_status no_memory(clmg_mpi *mpi, const char *what) {
  return clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "rank %d: no memory for %s",
                           mpi->rank, what);
}

static double now(void) {
  return MPI_Wtime();
}

/* Adds the seconds since *mark to the phase's time (when timed). */
#define LAP(times, field, mark)                                                                    \
  do {                                                                                             \
    if (times) {                                                                                   \
      double t_ = now();                                                                           \
      (times)->field += t_ - *(mark);                                                              \
      *(mark) = t_;                                                                                \
    }                                                                                              \
  } while (0)

/* What the distributed setup cannot do, refused by name; the rest of the
 * options are checked by the serial aggregation (on an empty matrix, so
 * that every rank checks them even when nothing is coarsened). */
static clmg_status check_options(clmg_mpi *mpi, const clmg_amg_options *o) {
  if (o->coarsening != CLMG_AMG_SMOOTHED_AGGREGATION)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "distributed AMG is smoothed aggregation only: classical "
                             "coarsening (amg.coarsening=classical) runs on one process");
  if (o->block_size > 1)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "distributed AMG aggregates scalar rows only: block size %d "
                             "(amg.block_size) runs on one process",
                             o->block_size);
  if (o->candidates || o->num_candidates > 0)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "distributed AMG fits the constant only: near-nullspace candidates "
                             "(amg.near_nullspace, amg.coordinates) run on one process");
  int64_t zero = 0;
  clmg_csr empty = {0, 0, &zero, NULL, NULL};
  int32_t unused = 0;
  size_t count = 0;
  clmg_error error = {{0}};
  return local_failure(mpi, clmg_amg_aggregate(&empty, o, &unused, &count, &error), &error);
}

/* Checks this rank's rows: a CSR of `cols` (the global size) columns, its
 * columns in range. */
static clmg_status check_rows(clmg_mpi *mpi, const clmg_csr *a, uint64_t global) {
  if (!a || !a->row_ptr || (clmg_csr_nnz(a) > 0 && (!a->col || !a->val)))
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: distributed AMG: the local rows are not a CSR matrix",
                             mpi->rank);
  if (a->cols != global || global > (uint64_t)INT32_MAX)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: distributed AMG: the local rows have %zu columns, not the "
                             "%llu rows of all ranks (the matrix must be square, with 32-bit "
                             "indices)",
                             mpi->rank, a->cols, (unsigned long long)global);
  if (a->row_ptr[0] != 0)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "rank %d: distributed AMG: the row offsets start at %lld", mpi->rank,
                             (long long)a->row_ptr[0]);
  for (size_t i = 0; i < a->rows; ++i) {
    if (a->row_ptr[i + 1] < a->row_ptr[i])
      return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "rank %d: distributed AMG: local row %zu has a negative length",
                               mpi->rank, i);
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      if (a->col[k] < 0 || (uint64_t)a->col[k] >= global || !isfinite(a->val[k]))
        return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "rank %d: distributed AMG: local row %zu has column %d (of "
                                 "0..%llu) or a value that is not finite",
                                 mpi->rank, i, (int)a->col[k], (unsigned long long)global - 1);
  }
  return CLMG_SUCCESS;
}

/* The rows' entries in columns [first, first + n), shifted to 0..n-1: the
 * diagonal block, whose strength graph the rank aggregates. */
static int diagonal_block(const clmg_csr *a, uint64_t first, clmg_csr *out) {
  size_t n = a->rows, entries = 0;
  for (size_t k = 0; k < clmg_csr_nnz(a); ++k)
    entries += (uint64_t)a->col[k] >= first && (uint64_t)a->col[k] < first + n;
  *out = (clmg_csr){n, n, calloc(n + 1, sizeof(int64_t)), malloc((entries + 1) * sizeof(int32_t)),
                    malloc((entries + 1) * sizeof(double))};
  if (!out->row_ptr || !out->col || !out->val) {
    clmg_csr_free(out);
    return 0;
  }
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      if ((uint64_t)a->col[k] >= first && (uint64_t)a->col[k] < first + n) {
        out->col[at] = (int32_t)((uint64_t)a->col[k] - first);
        out->val[at++] = a->val[k];
      }
    out->row_ptr[i + 1] = (int64_t)at;
  }
  return 1;
}

static int compare_int64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The rows with their columns renumbered: [first, first + n) to 0..n-1,
 * ghost column ghosts[k] to n + k (a product with the vector or matrix of
 * the rank's rows followed by the ghosts' rows). */
static int extended_rows(const clmg_csr *a, uint64_t first, const int64_t *ghosts, size_t count,
                         clmg_csr *out) {
  size_t n = a->rows, nnz = clmg_csr_nnz(a);
  *out = (clmg_csr){n, n + count, malloc((n + 1) * sizeof(int64_t)),
                    malloc((nnz + 1) * sizeof(int32_t)), malloc((nnz + 1) * sizeof(double))};
  if (!out->row_ptr || !out->col || !out->val) {
    clmg_csr_free(out);
    return 0;
  }
  memcpy(out->row_ptr, a->row_ptr, (n + 1) * sizeof *out->row_ptr);
  memcpy(out->val, a->val, nnz * sizeof *out->val);
  for (size_t k = 0; k < nnz; ++k) {
    int64_t c = a->col[k];
    if ((uint64_t)c >= first && (uint64_t)c < first + n) {
      out->col[k] = (int32_t)((uint64_t)c - first);
    } else {
      const int64_t *at = bsearch(&c, ghosts, count, sizeof *ghosts, compare_int64);
      out->col[k] = (int32_t)(n + (size_t)(at - ghosts)); /* every ghost is listed */
    }
  }
  /* sorted again (the products need it): the ghosts moved behind the rank's
   * own columns; rows are short, insertion sort */
  for (size_t i = 0; i < n; ++i)
    for (int64_t k = out->row_ptr[i] + 1; k < out->row_ptr[i + 1]; ++k) {
      int32_t c = out->col[k];
      double v = out->val[k];
      int64_t j = k;
      for (; j > out->row_ptr[i] && out->col[j - 1] > c; --j) {
        out->col[j] = out->col[j - 1];
        out->val[j] = out->val[j - 1];
      }
      out->col[j] = c;
      out->val[j] = v;
    }
  return 1;
}

/* top's rows followed by bottom's (the same columns). */
static int stack_rows(const clmg_csr *top, const clmg_csr *bottom, clmg_csr *out) {
  size_t rows = top->rows + bottom->rows, a = clmg_csr_nnz(top), b = clmg_csr_nnz(bottom);
  *out = (clmg_csr){rows, top->cols, malloc((rows + 1) * sizeof(int64_t)),
                    malloc((a + b + 1) * sizeof(int32_t)), malloc((a + b + 1) * sizeof(double))};
  if (!out->row_ptr || !out->col || !out->val) {
    clmg_csr_free(out);
    return 0;
  }
  memcpy(out->row_ptr, top->row_ptr, (top->rows + 1) * sizeof *out->row_ptr);
  for (size_t i = 1; i <= bottom->rows; ++i)
    out->row_ptr[top->rows + i] = (int64_t)a + bottom->row_ptr[i];
  if (a) {
    memcpy(out->col, top->col, a * sizeof *out->col);
    memcpy(out->val, top->val, a * sizeof *out->val);
  }
  if (b) {
    memcpy(out->col + a, bottom->col, b * sizeof *out->col);
    memcpy(out->val + a, bottom->val, b * sizeof *out->val);
  }
  return 1;
}

/* What one level's products share: A's rows renumbered (extended), the
 * ghost columns and their halo plan. */
typedef struct level_halo {
  clmg_csr extended;
  int64_t *ghosts;
  size_t count;
  clmg_mpi_halo halo;
} level_halo;

static void level_halo_free(level_halo *h) {
  clmg_csr_free(&h->extended);
  free(h->ghosts);
  clmg_mpi_halo_free(&h->halo);
  memset(h, 0, sizeof *h);
}

static clmg_status level_halo_create(clmg_mpi *mpi, const clmg_csr *a, uint64_t first,
                                     const uint64_t *row_starts, level_halo *h) {
  memset(h, 0, sizeof *h);
  int32_t *columns = NULL;
  size_t count = 0;
  clmg_status status = clmg_mpi_ghost_columns(a, first, a->rows, &columns, &count);
  if (status != CLMG_SUCCESS)
    status = no_memory(mpi, "the ghost columns");
  if (status == CLMG_SUCCESS) {
    h->ghosts = malloc((count + 1) * sizeof *h->ghosts);
    h->count = count;
    if (!h->ghosts)
      status = no_memory(mpi, "the ghost columns");
    for (size_t k = 0; status == CLMG_SUCCESS && k < count; ++k)
      h->ghosts[k] = columns[k];
  }
  free(columns);
  if (status == CLMG_SUCCESS && !extended_rows(a, first, h->ghosts, h->count, &h->extended))
    status = no_memory(mpi, "the renumbered rows");
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_halo_create(mpi, row_starts, h->count, h->ghosts, &h->halo);
  if (status != CLMG_SUCCESS)
    level_halo_free(h);
  return status;
}

/* out = (this rank's rows of A) B, B row-distributed as A's columns (each
 * rank passes its rows of B): B's rows for the ghost columns are fetched. */
static clmg_status times_distributed(clmg_mpi *mpi, const level_halo *h, const clmg_csr *b,
                                     clmg_csr *out) {
  clmg_csr fetched = {0}, stacked = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_mpi_fetch_rows(mpi, &h->halo, b, &fetched);
  if (status == CLMG_SUCCESS && !stack_rows(b, &fetched, &stacked))
    status = no_memory(mpi, "the rows of a product");
  if (status == CLMG_SUCCESS)
    status = local_failure(mpi, clmg_csr_multiply(&h->extended, &stacked, out, &error), &error);
  clmg_csr_free(&fetched);
  clmg_csr_free(&stacked);
  return clmg_mpi_agree(mpi, status);
}

/* omega of the prolongator smoothing: damping, or 4/3 over the power
 * iteration's estimate of lambda_max(D^-1 A) (the serial loop, its sums
 * global); diagonal: the rows' a_ii. */
static clmg_status prolongator_omega(clmg_mpi *mpi, const level_halo *h, uint64_t first,
                                     const double *diagonal, double damping, double *omega) {
  *omega = damping;
  if (damping != 0)
    return CLMG_SUCCESS;
  size_t n = h->extended.rows;
  double *x = malloc((n + h->count + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
  clmg_status status =
      clmg_mpi_agree(mpi, x && y ? CLMG_SUCCESS : no_memory(mpi, "the eigenvalue estimate"));
  double estimate = 0;
  if (status == CLMG_SUCCESS)
    clmg_fill_pseudo_random(x, n, POWER_SEED, first, 0.5, 1.5);
  for (int step = 0; status == CLMG_SUCCESS && step < POWER_STEPS; ++step) {
    status = clmg_mpi_halo_exchange(mpi, &h->halo, x, x + n);
    if (status != CLMG_SUCCESS)
      break;
    clmg_csr_spmv_host(1.0, &h->extended, x, 0.0, y);
    double sums[3] = {0, 0, 0}; /* x.x, x.y, y.y */
    for (size_t i = 0; i < n; ++i) {
      y[i] = diagonal[i] != 0 ? y[i] / diagonal[i] : 0;
      sums[0] += x[i] * x[i];
      sums[1] += x[i] * y[i];
      sums[2] += y[i] * y[i];
    }
    int code = MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, mpi->comm);
    if (code != MPI_SUCCESS) {
      status = clmg_mpi_failed(mpi, code, "MPI_Allreduce (power iteration)");
      break;
    }
    if (!(sums[0] > 0) || !(sums[2] > 0))
      break;
    estimate = fmax(estimate, fabs(sums[1] / sums[0]));
    double scale = 1.0 / sqrt(sums[2]);
    for (size_t i = 0; i < n; ++i)
      x[i] = y[i] * scale;
  }
  free(x);
  free(y);
  *omega = estimate > 0 ? 4.0 / 3.0 / estimate : 0;
  return status;
}

/* P~ for one candidate b (the serial fit with k = 1): row i of aggregate j
 * holds b_i / ||b_j|| in column first_coarse + j, and the coarse candidate
 * is ||b_j||; an aggregate where b vanishes gets its first row's unit
 * vector and a coarse 0. */
static int tentative_prolongator(const int32_t *aggregate, size_t n, size_t count, const double *b,
                                 uint64_t first_coarse, uint64_t coarse_global, clmg_csr *p,
                                 double *coarse_b) {
  double *norm0 = calloc(count + 1, sizeof *norm0);
  int32_t *first_member = malloc((count + 1) * sizeof *first_member);
  size_t entries = 0;
  for (size_t i = 0; i < n; ++i)
    entries += aggregate[i] >= 0;
  *p = (clmg_csr){n, (size_t)coarse_global, malloc((n + 1) * sizeof(int64_t)),
                  malloc((entries + 1) * sizeof(int32_t)), malloc((entries + 1) * sizeof(double))};
  if (!norm0 || !first_member || !p->row_ptr || !p->col || !p->val) {
    free(norm0);
    free(first_member);
    clmg_csr_free(p);
    return 0;
  }
  for (size_t j = 0; j < count; ++j)
    first_member[j] = -1;
  for (size_t i = 0; i < n; ++i)
    if (aggregate[i] >= 0) {
      norm0[aggregate[i]] += b[i] * b[i];
      if (first_member[aggregate[i]] < 0)
        first_member[aggregate[i]] = (int32_t)i;
    }
  for (size_t j = 0; j < count; ++j) {
    norm0[j] = sqrt(norm0[j]);
    coarse_b[j] = norm0[j] > 1e-300 ? norm0[j] : 0;
  }
  size_t at = 0;
  p->row_ptr[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    int32_t j = aggregate[i];
    if (j >= 0) {
      p->col[at] = (int32_t)(first_coarse + (uint64_t)j);
      p->val[at++] = coarse_b[j] > 0 ? b[i] / norm0[j] : (first_member[j] == (int32_t)i ? 1 : 0);
    }
    p->row_ptr[i + 1] = (int64_t)at;
  }
  free(norm0);
  free(first_member);
  return 1;
}

/* P = (I - omega D^-1 A) P~ from A P~ (in place into *product), P~'s
 * entries added where they lie in its sorted rows (with a_ii stored, each
 * does). */
static clmg_status smooth(clmg_mpi *mpi, const double *diagonal, double omega, uint64_t first,
                          const clmg_csr *tentative, clmg_csr *product) {
  clmg_status status = CLMG_SUCCESS;
  for (size_t i = 0; status == CLMG_SUCCESS && i < product->rows; ++i) {
    double scale = diagonal[i] != 0 ? omega / diagonal[i] : 0;
    for (int64_t k = product->row_ptr[i]; k < product->row_ptr[i + 1]; ++k)
      product->val[k] *= -scale;
    int64_t k = product->row_ptr[i];
    for (int64_t t = tentative->row_ptr[i]; t < tentative->row_ptr[i + 1]; ++t) {
      while (k < product->row_ptr[i + 1] && product->col[k] < tentative->col[t])
        ++k;
      if (k == product->row_ptr[i + 1] || product->col[k] != tentative->col[t])
        status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "rank %d: AMG: row %llu of the matrix does not store its "
                                   "diagonal entry, which the prolongator smoothing needs",
                                   mpi->rank, (unsigned long long)(first + i + 1));
      else
        product->val[k] += tentative->val[t];
    }
  }
  return clmg_mpi_agree(mpi, status);
}

/* The entries of a (row offset by row_first, column by col_first), or of
 * its transpose (transpose nonzero), to the owners of their rows. */
static clmg_status send_entries(clmg_mpi *mpi, const clmg_csr *a, uint64_t row_first,
                                uint64_t col_first, int transpose, const uint64_t *row_starts,
                                uint64_t global_cols, clmg_csr *out) {
  size_t nnz = clmg_csr_nnz(a);
  int64_t *rows = malloc((nnz + 1) * sizeof *rows), *cols = malloc((nnz + 1) * sizeof *cols);
  clmg_status status =
      clmg_mpi_agree(mpi, rows && cols ? CLMG_SUCCESS : no_memory(mpi, "the entries to send"));
  for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      int64_t r = (int64_t)(row_first + i), c = (int64_t)col_first + a->col[k];
      rows[k] = transpose ? c : r;
      cols[k] = transpose ? r : c;
    }
  if (status == CLMG_SUCCESS)
    status =
        clmg_mpi_rows_from_triplets(mpi, row_starts, global_cols, nnz, rows, cols, a->val, out);
  free(rows);
  free(cols);
  return status;
}

void clmg_mpi_amg_levels_free(clmg_mpi_amg_levels *levels) {
  if (!levels)
    return;
  clmg_mpi_level_rows_free(levels->levels, levels->num_levels);
  free(levels->levels);
  free(levels->global_rows);
  memset(levels, 0, sizeof *levels);
}

/* Uncoupled aggregation leaves a row whose strong neighbours all lie on
 * other ranks outside every aggregate (its row of P~ would be zero, and
 * the coarse levels would never correct it): such a row becomes an
 * aggregate of its own. A row without any strong neighbour stays out, as
 * in the serial setup (so one rank, which has no ghosts, is the serial
 * hierarchy). Strength as the serial measure: a_ij != 0 and |a_ij| >=
 * theta sqrt(|a_ii a_jj|), the ghosts' a_jj exchanged. */
static clmg_status boundary_singletons(clmg_mpi *mpi, const level_halo *h, const double *diagonal,
                                       double theta, int32_t *aggregate, size_t *count) {
  const size_t n = h->extended.rows;
  double *ghost = malloc((h->count + 1) * sizeof *ghost);
  clmg_status status =
      clmg_mpi_agree(mpi, ghost ? CLMG_SUCCESS : no_memory(mpi, "the ghosts' diagonal"));
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_halo_exchange(mpi, &h->halo, diagonal, ghost);
  for (size_t i = 0; status == CLMG_SUCCESS && i < n; ++i) {
    if (aggregate[i] >= 0)
      continue;
    for (int64_t k = h->extended.row_ptr[i]; k < h->extended.row_ptr[i + 1]; ++k) {
      size_t c = (size_t)h->extended.col[k];
      double v = h->extended.val[k];
      if (c >= n && v != 0 && fabs(v) >= theta * sqrt(fabs(diagonal[i] * ghost[c - n]))) {
        aggregate[i] = (int32_t)(*count)++;
        break;
      }
    }
  }
  free(ghost);
  return status;
}

/* One coarsening of the level (a, first, global rows) with candidate b:
 * next's a, p, r and first_row, *coarse_global and *coarse_b (malloc'ed);
 * *stop when the level does not coarsen enough to pay for another. */
static clmg_status coarsen(clmg_mpi *mpi, const clmg_amg_options *o, int built,
                           const clmg_mpi_level_rows *fine, uint64_t global, const double *b,
                           clmg_mpi_level_rows *next, uint64_t *coarse_global, double **coarse_b,
                           int *stop, double *mark) {
  clmg_amg_setup_times *times = o->times;
  const size_t n = fine->a.rows;
  uint64_t *row_starts = NULL, *coarse_starts = NULL;
  clmg_status status = clmg_mpi_row_starts(mpi, fine->first_row, n, &row_starts);
  if (status != CLMG_SUCCESS)
    return status;
  /* the ghost columns, their halo; the rows' diagonal */
  level_halo h = {0};
  double *diagonal = malloc((n + 1) * sizeof *diagonal);
  status = clmg_mpi_agree(mpi, diagonal ? CLMG_SUCCESS : no_memory(mpi, "the diagonal"));
  if (status == CLMG_SUCCESS)
    status = level_halo_create(mpi, &fine->a, fine->first_row, row_starts, &h);
  for (size_t i = 0; status == CLMG_SUCCESS && i < n; ++i) {
    diagonal[i] = 0;
    for (int64_t k = fine->a.row_ptr[i]; k < fine->a.row_ptr[i + 1]; ++k)
      if ((uint64_t)fine->a.col[k] == fine->first_row + i)
        diagonal[i] = fine->a.val[k];
  }
  /* aggregate the diagonal block (the finest level's roots root_distance
   * apart, the coarser ones' coarse_root_distance, as the serial setup) */
  clmg_amg_options level_options = *o;
  level_options.times = NULL;
  if (built > 1 && o->coarse_root_distance > 0)
    level_options.root_distance = o->coarse_root_distance;
  clmg_csr block = {0};
  int32_t *aggregate = malloc((n + 1) * sizeof *aggregate);
  size_t count = 0;
  clmg_error error = {{0}};
  if (status == CLMG_SUCCESS && (!aggregate || !diagonal_block(&fine->a, fine->first_row, &block)))
    status = no_memory(mpi, "the aggregation");
  if (status == CLMG_SUCCESS && n > 0)
    status = local_failure(
        mpi, clmg_amg_aggregate(&block, &level_options, aggregate, &count, &error), &error);
  clmg_csr_free(&block);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = boundary_singletons(mpi, &h, diagonal, o->strength_threshold, aggregate, &count);
  /* the aggregates numbered in rank order */
  uint64_t mine = count, first_coarse = 0, total = 0;
  uint64_t *counts = status == CLMG_SUCCESS ? malloc((size_t)mpi->size * sizeof *counts) : NULL;
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_agree(mpi, counts ? CLMG_SUCCESS : no_memory(mpi, "the aggregate counts"));
  if (status == CLMG_SUCCESS) {
    int code = MPI_Allgather(&mine, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allgather (aggregates per rank)");
  }
  for (int r = 0; status == CLMG_SUCCESS && r < mpi->size; ++r) {
    first_coarse += r < mpi->rank ? counts[r] : 0;
    total += counts[r];
  }
  free(counts);
  LAP(times, aggregate_s, mark);
  *coarse_global = total;
  /* too little coarsening to pay for a level (the serial rule) */
  *stop = status == CLMG_SUCCESS && !(total > 0 && total * 10 <= global * 9);
  if (status != CLMG_SUCCESS || *stop) {
    free(aggregate);
    free(diagonal);
    free(row_starts);
    level_halo_free(&h);
    return status;
  }
  /* P~ and the coarse candidate; an aggregated row needs its diagonal */
  clmg_csr tentative = {0}, product = {0}, ap = {0}, transposed = {0}, partial = {0};
  *coarse_b = malloc((count + 1) * sizeof **coarse_b);
  if (!*coarse_b ||
      !tentative_prolongator(aggregate, n, count, b, first_coarse, total, &tentative, *coarse_b))
    status = no_memory(mpi, "the tentative prolongator");
  for (size_t i = 0; status == CLMG_SUCCESS && i < n; ++i) {
    int stored = 0;
    for (int64_t k = fine->a.row_ptr[i]; k < fine->a.row_ptr[i + 1] && !stored; ++k)
      stored = (uint64_t)fine->a.col[k] == fine->first_row + i;
    if (!stored && aggregate[i] >= 0)
      status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "rank %d: AMG: row %llu does not store its diagonal entry, which "
                                 "the prolongator smoothing needs",
                                 mpi->rank, (unsigned long long)(fine->first_row + i + 1));
  }
  free(aggregate);
  status = clmg_mpi_agree(mpi, status);
  LAP(times, fit_s, mark);
  /* P = (I - omega D^-1 A) P~ */
  double omega = 0;
  if (status == CLMG_SUCCESS)
    status = prolongator_omega(mpi, &h, fine->first_row, diagonal, o->prolongator_damping, &omega);
  if (status == CLMG_SUCCESS)
    status = times_distributed(mpi, &h, &tentative, &product);
  if (status == CLMG_SUCCESS)
    status = smooth(mpi, diagonal, omega, fine->first_row, &tentative, &product);
  LAP(times, prolongator_s, mark);
  /* A_c = P^T (A P), summed at the coarse rows' owners; R = P^T */
  if (status == CLMG_SUCCESS)
    status = times_distributed(mpi, &h, &product, &ap);
  if (status == CLMG_SUCCESS)
    status = local_failure(mpi, clmg_csr_transpose(&product, &transposed, &error), &error);
  if (status == CLMG_SUCCESS)
    status = local_failure(mpi, clmg_csr_multiply(&transposed, &ap, &partial, &error), &error);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_row_starts(mpi, first_coarse, count, &coarse_starts);
  clmg_csr_free(&transposed);
  clmg_csr_free(&ap);
  if (status == CLMG_SUCCESS)
    status = send_entries(mpi, &partial, 0, 0, 0, coarse_starts, total, &next->a);
  clmg_csr_free(&partial);
  if (status == CLMG_SUCCESS)
    status = send_entries(mpi, &product, fine->first_row, 0, 1, coarse_starts, global, &next->r);
  LAP(times, galerkin_s, mark);
  level_halo_free(&h);
  clmg_csr_free(&tentative);
  free(diagonal);
  free(row_starts);
  free(coarse_starts);
  if (status == CLMG_SUCCESS) {
    next->p = product; /* the fine level's rows of P: stored with the coarse A below */
    next->first_row = first_coarse;
  } else {
    clmg_csr_free(&product);
    clmg_csr_free(&next->a);
    clmg_csr_free(&next->r);
    free(*coarse_b);
    *coarse_b = NULL;
  }
  return status;
}

clmg_status clmg_mpi_amg_levels_create(clmg_mpi *mpi, uint64_t first_row,
                                       const clmg_csr *local_rows, const clmg_amg_options *options,
                                       clmg_mpi_amg_levels *out) {
  if (!mpi || !out)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_amg_levels_create: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  clmg_amg_options o;
  if (options)
    o = *options;
  else
    clmg_amg_options_defaults(&o);
  double start = now(), mark = start;
  if (o.times)
    memset(o.times, 0, sizeof *o.times);
  clmg_status status = clmg_mpi_agree(mpi, check_options(mpi, &o));
  if (status != CLMG_SUCCESS)
    return status;
  uint64_t *row_starts = NULL;
  status = clmg_mpi_row_starts(mpi, first_row, local_rows ? local_rows->rows : 0, &row_starts);
  if (status != CLMG_SUCCESS)
    return status;
  uint64_t global = row_starts[mpi->size];
  free(row_starts);
  status = clmg_mpi_agree(mpi, check_rows(mpi, local_rows, global));
  if (status != CLMG_SUCCESS)
    return status;
  /* the levels from fine to coarse, reversed at the end */
  const int capacity = o.max_levels;
  clmg_mpi_level_rows *levels = calloc((size_t)capacity, sizeof *levels);
  uint64_t *global_rows = calloc((size_t)capacity, sizeof *global_rows);
  double *b = malloc((local_rows->rows + 1) * sizeof *b);
  clmg_error error = {{0}};
  status = clmg_mpi_agree(mpi, levels && global_rows && b ? CLMG_SUCCESS
                                                          : no_memory(mpi, "the AMG levels"));
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_agree(
        mpi, local_failure(mpi, clmg_csr_copy(local_rows, &levels[0].a, &error), &error));
  int built = 1;
  if (status == CLMG_SUCCESS) {
    levels[0].first_row = first_row;
    global_rows[0] = global;
    for (size_t i = 0; i < local_rows->rows; ++i)
      b[i] = 1; /* the constant near-nullspace */
  }
  while (status == CLMG_SUCCESS && built < capacity && global_rows[built - 1] > o.coarse_rows) {
    double *coarse_b = NULL;
    int stop = 0;
    status = coarsen(mpi, &o, built, &levels[built - 1], global_rows[built - 1], b, &levels[built],
                     &global_rows[built], &coarse_b, &stop, &mark);
    if (status != CLMG_SUCCESS || stop)
      break;
    free(b);
    b = coarse_b;
    ++built;
  }
  free(b);
  if (status != CLMG_SUCCESS) {
    clmg_mpi_amg_levels out_levels = {capacity, levels, global_rows};
    clmg_mpi_amg_levels_free(&out_levels);
    return status;
  }
  /* reverse: level 0 the coarsest. coarsen() stored P (fine rows) and R (coarse rows) with the
   * coarse level; the engine wants them with the fine one: P of level l maps l - 1 to l and holds
   * level l's rows. */
  clmg_mpi_amg_levels result = {built, calloc((size_t)built, sizeof(clmg_mpi_level_rows)),
                                calloc((size_t)built, sizeof(uint64_t))};
  status = clmg_mpi_agree(
      mpi, result.levels && result.global_rows ? CLMG_SUCCESS : no_memory(mpi, "the AMG levels"));
  if (status != CLMG_SUCCESS) {
    clmg_mpi_amg_levels_free(&result);
    clmg_mpi_amg_levels out_levels = {capacity, levels, global_rows};
    clmg_mpi_amg_levels_free(&out_levels);
    return status;
  }
  for (int l = 0; l < built; ++l) {
    clmg_mpi_level_rows *to = &result.levels[built - 1 - l];
    to->a = levels[l].a;
    to->first_row = levels[l].first_row;
    result.global_rows[built - 1 - l] = global_rows[l];
    if (l + 1 < built) { /* built level l + 1 holds the P and R between l and l + 1 */
      to->p = levels[l + 1].p;
      to->r = levels[l + 1].r;
    }
  }
  free(levels);
  free(global_rows);
  *out = result;
  if (o.times) {
    o.times->total_s = now() - start;
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_mpi_amg_multigrid_create(clmg_mpi *mpi, uint64_t first_row,
                                          const clmg_csr *local_rows,
                                          const clmg_amg_options *amg_options,
                                          const clmg_multigrid_options *mg_options,
                                          clmg_multigrid **multigrid) {
  if (!mpi || !multigrid)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_amg_multigrid_create: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  double start = now();
  clmg_mpi_amg_levels levels = {0};
  clmg_status status = clmg_mpi_amg_levels_create(mpi, first_row, local_rows, amg_options, &levels);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_multigrid_options o;
  if (mg_options) {
    o = *mg_options;
  } else {
    clmg_multigrid_options_defaults(&o);
    o.smoother = CLMG_SMOOTHER_CHEBYSHEV;
    o.pre_smoothing = o.post_smoothing = 3;
  }
  status = clmg_mpi_multigrid_create(mpi, levels.num_levels, levels.levels, &o, multigrid);
  clmg_mpi_amg_levels_free(&levels);
  clmg_amg_setup_times *times = amg_options ? amg_options->times : NULL;
  if (times && status == CLMG_SUCCESS) {
    double total = now() - start;
    times->engine_s = total - times->total_s;
    times->total_s = total;
  }
  return status;
}
