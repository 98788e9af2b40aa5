/* The multigrid engine on distributed levels: every level's A, P and R are
 * distributed matrices (their apply exchanges the halo), the smoothers are
 * the engine's own (they see operators only), and the coarsest level is
 * solved redundantly: each rank gathers the coarse right-hand side, applies
 * the dense inverse of the whole coarse matrix (clmg_coarse_solver_direct
 * on a local copy) and keeps its own rows. A coarse level too large for the
 * dense inverse gets a distributed Krylov solve instead.
 *
 * With coarse_max_rows set, the levels with at most that many rows (of all
 * ranks) are gathered whole onto every rank, and the finest of them becomes
 * the distributed hierarchy's coarse level, whose solve is one cycle of the
 * serial engine on the gathered levels: one gather of a right-hand side per
 * cycle instead of a halo exchange for every product on every small level,
 * where the exchanges are all latency. */
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct gathered_coarse {
  clmg_mpi *mpi;
  clmg_matrix *matrix;       /* the whole coarse matrix, on this rank's device */
  clmg_operator whole;       /* ... as an operator */
  clmg_coarse_solver direct; /* its dense inverse */
  /* or, for gathered levels: the serial hierarchy of them and its cycle */
  clmg_multigrid *levels;
  clmg_preconditioner cycle;
  clmg_vector *b, *x; /* whole coarse vectors */
  clmg_vector *own_x; /* view: this rank's rows of x */
  void *host;         /* the whole right-hand side on the host, in its precision */
  clmg_dtype precision;
  int *counts, *starts; /* every rank's rows, for MPI_Allgatherv */
  size_t rows;          /* this rank's */
} gathered_coarse;

static void gathered_destroy(void *data) {
  gathered_coarse *g = data;
  if (!g)
    return;
  clmg_coarse_solver_destroy(&g->direct);
  clmg_preconditioner_destroy(&g->cycle);
  clmg_multigrid_destroy(g->levels);
  clmg_operator_destroy(&g->whole);
  clmg_matrix_destroy(g->matrix);
  clmg_vector_destroy(g->own_x);
  clmg_vector_destroy(g->b);
  clmg_vector_destroy(g->x);
  free(g->host);
  free(g->counts);
  free(g->starts);
  free(g);
}

static clmg_status gathered_setup(void *data, const clmg_operator *a) {
  (void)a; /* the whole matrix was gathered when the solver was made */
  gathered_coarse *g = data;
  return !g->levels && g->direct.setup ? g->direct.setup(g->direct.data, &g->whole) : CLMG_SUCCESS;
}

static clmg_status gathered_solve(void *data, const clmg_operator *a, const clmg_vector *b,
                                  clmg_vector *x) {
  (void)a;
  gathered_coarse *g = data;
  int rank = g->mpi->rank;
  /* in the vectors' own precision: no conversion, no allocation per cycle */
  void *mine = (char *)g->host + (size_t)g->starts[rank] * clmg_dtype_size(g->precision);
  clmg_status status = g->rows > 0 ? clmg_vector_download(b, mine) : CLMG_SUCCESS;
  /* in place: every rank's part lands where MPI_Allgatherv puts it */
  MPI_Datatype type = clmg_mpi_real_type(g->precision);
  int code =
      MPI_Allgatherv(MPI_IN_PLACE, 0, type, g->host, g->counts, g->starts, type, g->mpi->comm);
  if (code != MPI_SUCCESS && status == CLMG_SUCCESS)
    status = clmg_mpi_failed(g->mpi, code, "MPI_Allgatherv (coarse right-hand side)");
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload(g->b, g->host);
  if (status == CLMG_SUCCESS && g->levels) {
    /* every rank repeats the same cycle on whole vectors: no reductions */
    clmg_mpi_local_begin(g->mpi);
    status = g->cycle.apply(g->cycle.data, g->b, g->x);
    clmg_mpi_local_end(g->mpi);
  } else if (status == CLMG_SUCCESS) {
    status = g->direct.solve(g->direct.data, &g->whole, g->b, g->x);
  }
  if (status == CLMG_SUCCESS && g->rows > 0)
    status = clmg_copy(g->own_x, x);
  return status;
}

/* Every rank's rows of a distributed matrix (global columns), gathered into
 * the whole matrix on every rank; counts and starts (size entries) get the
 * ranks' rows. */
static clmg_status gather_matrix(clmg_mpi *mpi, const clmg_csr *mine, uint64_t first_row,
                                 int *counts, int *starts, clmg_csr *whole) {
  whole->cols = mine->cols; /* global columns, the same on every rank */
  const int size = mpi->size;
  int my_rows = (int)mine->rows, my_entries = (int)clmg_csr_nnz(mine);
  int *entry_counts = malloc((size_t)size * sizeof *entry_counts);
  int *entry_starts = malloc((size_t)size * sizeof *entry_starts);
  int64_t *lengths = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!entry_counts || !entry_starts)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                               "rank %d: no memory to gather the coarse matrix", mpi->rank);
  else if (mine->rows > INT_MAX || clmg_csr_nnz(mine) > INT_MAX)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                               "rank %d: %zu rows and %zu entries to gather: more than 2^31",
                               mpi->rank, mine->rows, clmg_csr_nnz(mine));
  status = clmg_mpi_agree(mpi, status);
  int code = MPI_SUCCESS;
  if (status == CLMG_SUCCESS) {
    code = MPI_Allgather(&my_rows, 1, MPI_INT, counts, 1, MPI_INT, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Allgather(&my_entries, 1, MPI_INT, entry_counts, 1, MPI_INT, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allgather (coarse matrix sizes)");
  }
  size_t rows = 0, entries = 0;
  for (int r = 0; status == CLMG_SUCCESS && r < size; ++r) {
    starts[r] = (int)rows;
    entry_starts[r] = (int)entries;
    rows += (size_t)counts[r];
    entries += (size_t)entry_counts[r];
  }
  /* the same on every rank */
  if (status == CLMG_SUCCESS && (rows > INT_MAX || entries > INT_MAX))
    status = clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                               "a gathered level of %zu rows and %zu entries: more than 2^31", rows,
                               entries);
  if (status == CLMG_SUCCESS && (uint64_t)starts[mpi->rank] != first_row)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "rank %d: its rows of a gathered level start at row %llu, but the "
                               "ranks before it hold %d rows (the blocks must follow each other "
                               "in rank order)",
                               mpi->rank, (unsigned long long)first_row, starts[mpi->rank]);
  if (status == CLMG_SUCCESS) {
    whole->rows = rows;
    whole->row_ptr = calloc(rows + 1, sizeof *whole->row_ptr);
    whole->col = malloc((entries + 1) * sizeof *whole->col);
    whole->val = malloc((entries + 1) * sizeof *whole->val);
    lengths = malloc((mine->rows + 1) * sizeof *lengths);
    if (!whole->row_ptr || !whole->col || !whole->val || !lengths)
      status =
          clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "rank %d: no memory for the coarse matrix (%zu rows)", mpi->rank, rows);
    for (size_t i = 0; status == CLMG_SUCCESS && i < mine->rows; ++i)
      lengths[i] = mine->row_ptr[i + 1] - mine->row_ptr[i];
  }
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS) {
    code = MPI_Allgatherv(lengths, my_rows, MPI_INT64_T, whole->row_ptr + 1, counts, starts,
                          MPI_INT64_T, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Allgatherv(mine->col, my_entries, MPI_INT32_T, whole->col, entry_counts,
                            entry_starts, MPI_INT32_T, mpi->comm);
    if (code == MPI_SUCCESS)
      code = MPI_Allgatherv(mine->val, my_entries, MPI_DOUBLE, whole->val, entry_counts,
                            entry_starts, MPI_DOUBLE, mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(mpi, code, "MPI_Allgatherv (coarse matrix)");
    for (size_t i = 0; status == CLMG_SUCCESS && i < rows; ++i)
      whole->row_ptr[i + 1] += whole->row_ptr[i];
  }
  free(entry_counts);
  free(entry_starts);
  free(lengths);
  return status;
}

/* Whether rows are on the device (device) rather than the host (host: the
 * shape only). */
static int rows_on_device(const clmg_csr *host, const clmg_csr_device *device) {
  return !host->row_ptr && device->row_ptr;
}

/* Whether a level's rows of A are on the device (a_device) rather than the
 * host. */
static int on_device(const clmg_mpi_level_rows *level) {
  return rows_on_device(&level->a, &level->a_device);
}

/* gather_matrix for rows on the host or the device (downloaded first: a
 * gathered level is small). */
static clmg_status gather_rows(clmg_mpi *mpi, const clmg_csr *host, const clmg_csr_device *device,
                               uint64_t first_row, int *counts, int *starts, clmg_csr *whole) {
  if (!rows_on_device(host, device))
    return gather_matrix(mpi, host, first_row, counts, starts, whole);
  clmg_csr copy = {0};
  clmg_error error = {{0}};
  clmg_status status = clmg_csr_device_download(device, &copy, &error);
  if (status != CLMG_SUCCESS)
    clmg_context_fail(mpi->context, status, "rank %d: a gathered level's rows: %s", mpi->rank,
                      error.message);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = gather_matrix(mpi, &copy, first_row, counts, starts, whole);
  clmg_csr_free(&copy);
  return status;
}

/* The redundant coarse solver of levels[0 .. count): with one level, the
 * dense inverse of the whole coarse matrix; with more, the levels gathered
 * whole onto every rank and one cycle of the serial engine on them (inner:
 * its options). Collective. */
static clmg_status gathered_create(clmg_mpi *mpi, const clmg_mpi_level_rows *levels, int count,
                                   const clmg_multigrid_options *inner,
                                   clmg_coarse_solver *solver) {
  memset(solver, 0, sizeof *solver);
  gathered_coarse *g = calloc(1, sizeof *g);
  clmg_csr *a = calloc((size_t)count, sizeof *a), *p = calloc((size_t)count, sizeof *p),
           *r = calloc((size_t)count, sizeof *r);
  int *scratch = malloc(2 * (size_t)mpi->size * sizeof *scratch);
  const clmg_csr *mine = &levels[count - 1].a;
  clmg_status status = CLMG_SUCCESS;
  if (g) {
    g->mpi = mpi;
    g->rows = mine->rows;
    g->counts = malloc((size_t)mpi->size * sizeof *g->counts);
    g->starts = malloc((size_t)mpi->size * sizeof *g->starts);
  }
  if (!g || !g->counts || !g->starts || !a || !p || !r || !scratch)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                               "rank %d: no memory for the coarse solver", mpi->rank);
  status = clmg_mpi_agree(mpi, status);
  for (int l = 0; status == CLMG_SUCCESS && l < count; ++l) {
    int *counts = l == count - 1 ? g->counts : scratch,
        *starts = l == count - 1 ? g->starts : scratch + mpi->size;
    status = clmg_mpi_agree(
        mpi, on_device(&levels[l])
                 ? clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                                     "rank %d: level %d's rows of A are on the device; a gathered "
                                     "level needs them on the host",
                                     mpi->rank, l)
                 : CLMG_SUCCESS);
    if (status == CLMG_SUCCESS)
      status = gather_matrix(mpi, &levels[l].a, levels[l].first_row, counts, starts, &a[l]);
    if (status == CLMG_SUCCESS && l > 0)
      status = gather_rows(mpi, &levels[l].p, &levels[l].p_device, levels[l].first_row, scratch,
                           scratch + mpi->size, &p[l]);
    if (status == CLMG_SUCCESS && l > 0)
      status = gather_rows(mpi, &levels[l].r, &levels[l].r_device, levels[l - 1].first_row, scratch,
                           scratch + mpi->size, &r[l]);
  }
  clmg_context *context = mpi->context;
  const clmg_matrix_options *matrix_options = &inner->matrix;
  const size_t rows = status == CLMG_SUCCESS ? a[count - 1].rows : 0;
  if (status == CLMG_SUCCESS) {
    g->precision = matrix_options->precision;
    g->host = malloc((rows + 1) * clmg_dtype_size(g->precision));
    if (!g->host)
      status = clmg_context_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                 "rank %d: no memory for the coarse right-hand side", mpi->rank);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, matrix_options->precision, rows, &g->b);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, matrix_options->precision, rows, &g->x);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_view(g->x, (size_t)g->starts[mpi->rank], g->rows, &g->own_x);
    if (status == CLMG_SUCCESS && count == 1) {
      status = clmg_matrix_create(context, &a[0], matrix_options, &g->matrix);
      if (status == CLMG_SUCCESS)
        status = clmg_operator_from_matrix(g->matrix, 0, &g->whole);
      if (status == CLMG_SUCCESS)
        status = clmg_coarse_solver_direct(context, &g->direct);
    } else if (status == CLMG_SUCCESS) {
      /* every rank builds the same serial hierarchy: no reductions */
      clmg_mpi_local_begin(mpi);
      status = clmg_multigrid_create(context, count, a, p, r, inner, &g->levels);
      if (status == CLMG_SUCCESS)
        status = clmg_multigrid_preconditioner(g->levels, &g->cycle);
      clmg_mpi_local_end(mpi);
    }
    status = clmg_mpi_agree(mpi, status);
  }
  for (int l = 0; l < count && a && p && r; ++l) {
    clmg_csr_free(&a[l]);
    clmg_csr_free(&p[l]);
    clmg_csr_free(&r[l]);
  }
  free(a);
  free(p);
  free(r);
  free(scratch);
  if (status != CLMG_SUCCESS) {
    gathered_destroy(g);
    return status;
  }
  solver->data = g;
  solver->name = count == 1 ? "direct (gathered)" : "multigrid (gathered levels)";
  solver->setup = gathered_setup;
  solver->solve = gathered_solve;
  solver->destroy = gathered_destroy;
  return CLMG_SUCCESS;
}

/* Checks that the levels' sizes fit each other on this rank. */
static clmg_status check_levels(clmg_mpi *mpi, int num_levels, const clmg_mpi_level_rows *levels) {
  if (num_levels < 1 || !levels)
    return clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                             "clmg_mpi_multigrid_create: %d levels", num_levels);
  for (int l = 1; l < num_levels; ++l) {
    const clmg_mpi_level_rows *fine = &levels[l], *coarse = &levels[l - 1];
    if (fine->p.rows != fine->a.rows || fine->p.cols != coarse->a.cols ||
        fine->r.rows != coarse->a.rows || fine->r.cols != fine->a.cols)
      return clmg_context_fail(
          mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
          "rank %d: multigrid level %d: this rank's rows of P (%zu x %zu) and R (%zu x %zu) do "
          "not fit its rows of A on levels %d (%zu x %zu) and %d (%zu x %zu)",
          mpi->rank, l, fine->p.rows, fine->p.cols, fine->r.rows, fine->r.cols, l, fine->a.rows,
          fine->a.cols, l - 1, coarse->a.rows, coarse->a.cols);
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_mpi_multigrid_create(clmg_mpi *mpi, int num_levels,
                                      const clmg_mpi_level_rows *levels,
                                      const clmg_multigrid_options *options,
                                      clmg_multigrid **multigrid) {
  if (!mpi || !multigrid)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_multigrid_create: NULL output")
               : CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  clmg_multigrid_options o;
  if (options)
    o = *options;
  else
    clmg_multigrid_options_defaults(&o);
  clmg_status status = clmg_mpi_agree(mpi, check_levels(mpi, num_levels, levels));
  if (status != CLMG_SUCCESS)
    return status;
  /* every level's rows over all ranks: the levels to gather, the coarse solve */
  uint64_t *global_rows = calloc((size_t)num_levels, sizeof *global_rows);
  status = clmg_mpi_agree(
      mpi, global_rows ? CLMG_SUCCESS
                       : clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                           "rank %d: no memory for the levels", mpi->rank));
  if (status != CLMG_SUCCESS) {
    free(global_rows);
    return status;
  }
  for (int l = 0; l < num_levels; ++l)
    global_rows[l] = levels[l].a.rows;
  int code = MPI_Allreduce(MPI_IN_PLACE, global_rows, num_levels, MPI_UINT64_T, MPI_SUM, mpi->comm);
  status = code == MPI_SUCCESS ? CLMG_SUCCESS
                               : clmg_mpi_failed(mpi, code, "MPI_Allreduce (rows per level)");
  /* the levels gathered whole: those up to the finest with at most
   * coarse_max_rows rows, the finest level never (the engine's cycles need a
   * level above the coarse solve, which solves from zero). Only for V-cycles
   * with the same smoothing on every level: a W- or F-cycle visits its
   * coarse level twice, and growing smoothing counts levels from the
   * coarsest, which one inner cycle would not reproduce. */
  const int same_cycle = o.cycle == CLMG_CYCLE_V && o.smoothing_growth <= 1;
  int gathered = 1;
  while (same_cycle && o.coarse_max_rows > 0 && !o.coarse_solver.solve &&
         gathered < num_levels - 1 && global_rows[gathered] <= o.coarse_max_rows)
    ++gathered;
  const uint64_t coarse_rows = global_rows[gathered - 1];
  free(global_rows);
  clmg_multigrid_options inner = o;
  inner.coarse_max_rows = 0;
  const int distributed = num_levels - gathered + 1; /* the engine's levels */
  const clmg_mpi_level_rows *top = levels + gathered - 1;
  clmg_multigrid_level *built = NULL;
  if (status == CLMG_SUCCESS) {
    built = calloc((size_t)distributed, sizeof *built);
    status = clmg_mpi_agree(
        mpi, built ? CLMG_SUCCESS
                   : clmg_context_fail(mpi->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                       "rank %d: no memory for the levels", mpi->rank));
  }
  for (int l = 0; status == CLMG_SUCCESS && l < distributed; ++l) {
    clmg_mpi_matrix *a = NULL, *p = NULL, *r = NULL;
    status =
        on_device(&top[l])
            ? clmg_mpi_matrix_create_from_device(mpi, top[l].first_row, &top[l].a_device,
                                                 top[l].first_row, top[l].a.rows, &o.matrix, &a)
            : clmg_mpi_matrix_create(mpi, top[l].first_row, &top[l].a, &o.matrix, &a);
    if (status == CLMG_SUCCESS)
      status = clmg_mpi_matrix_operator(a, 1, &built[l].a);
    if (status == CLMG_SUCCESS && l > 0) {
      const clmg_mpi_level_rows *fine = &top[l], *coarse = &top[l - 1];
      status =
          rows_on_device(&fine->p, &fine->p_device)
              ? clmg_mpi_matrix_create_from_device(mpi, fine->first_row, &fine->p_device,
                                                   coarse->first_row, coarse->a.rows, &o.matrix, &p)
              : clmg_mpi_matrix_create_rectangular(mpi, fine->first_row, &fine->p,
                                                   coarse->first_row, coarse->a.rows, &o.matrix,
                                                   &p);
      if (status == CLMG_SUCCESS)
        status = clmg_mpi_matrix_operator(p, 1, &built[l].p);
      if (status == CLMG_SUCCESS)
        status =
            rows_on_device(&fine->r, &fine->r_device)
                ? clmg_mpi_matrix_create_from_device(mpi, coarse->first_row, &fine->r_device,
                                                     fine->first_row, fine->a.rows, &o.matrix, &r)
                : clmg_mpi_matrix_create_rectangular(mpi, coarse->first_row, &fine->r,
                                                     fine->first_row, fine->a.rows, &o.matrix, &r);
      if (status == CLMG_SUCCESS)
        status = clmg_mpi_matrix_operator(r, 1, &built[l].r);
    }
  }
  if (status == CLMG_SUCCESS && !o.coarse_solver.solve) {
    int direct = gathered > 1 || o.coarse == CLMG_COARSE_DIRECT ||
                 (o.coarse == CLMG_COARSE_AUTO && coarse_rows <= o.direct_max_rows);
    if (direct && (coarse_rows > (uint64_t)INT_MAX / 2))
      status =
          clmg_context_fail(mpi->context, CLMG_ERROR_UNSUPPORTED,
                            "a direct coarse solve of %llu rows", (unsigned long long)coarse_rows);
    if (status == CLMG_SUCCESS && direct)
      status = gathered_create(mpi, levels, gathered, &inner, &o.coarse_solver);
    /* otherwise the engine's Krylov coarse solve, on the distributed operator */
    if (status == CLMG_SUCCESS && !direct)
      o.coarse = CLMG_COARSE_PCG;
  }
  o.coarse_max_rows = 0; /* the engine's levels are all used */
  if (status != CLMG_SUCCESS) {
    for (int l = 0; built && l < distributed; ++l) {
      clmg_operator_destroy(&built[l].a);
      clmg_operator_destroy(&built[l].p);
      clmg_operator_destroy(&built[l].r);
    }
    free(built);
    return status;
  }
  status = clmg_multigrid_create_from_levels(mpi->context, distributed, built, &o, multigrid);
  free(built);
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS) { /* another rank failed: this one's hierarchy goes too */
    clmg_multigrid_destroy(*multigrid);
    *multigrid = NULL;
  }
  return status;
}
