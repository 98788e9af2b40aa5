/* Distributed smoothed-aggregation AMG (clmg_mpi_amg_levels_create,
 * clmg_mpi_amg_multigrid_create) under mpirun (ctest runs it with 1, 2 and
 * 4 ranks): on one rank its hierarchy equals the serial one; on every
 * count of ranks, gathered on rank 0, each coarse matrix is P^T A P of the
 * serial host product, R = P^T, and the tentative prolongator reproduces
 * the constant on aggregates that stay on their rank; AMG-PCG converges on
 * 2D Poisson and an anisotropic problem within 1.5 x + 3 of the serial
 * AMG's iterations.
 *
 * Not cmocka: a failed check must stop every rank (MPI_Abort), as in
 * tests/test_mpi.c. */
#define _POSIX_C_SOURCE 200809L
#include "clmg/amg.h"
#include "clmg/mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_mpi_util.h"

/* The 5-point operator -u_xx - eps u_yy on an m x m grid, Dirichlet
 * boundary eliminated (eps 1: the Laplacian). With a permutation seed, the
 * unknowns are renumbered at random so that neighbours land on other
 * ranks. */
static void grid_operator(size_t m, double eps, uint64_t seed, clmg_csr *a) {
  size_t n = m * m, count = 0;
  int32_t *rows = malloc(5 * n * sizeof *rows), *cols = malloc(5 * n * sizeof *cols);
  int32_t *number = malloc(n * sizeof *number);
  double *values = malloc(5 * n * sizeof *values);
  CHECK(rows && cols && values && number, "no memory");
  for (size_t i = 0; i < n; ++i)
    number[i] = (int32_t)i;
  for (size_t i = n; seed && i > 1; --i) { /* Fisher-Yates, the same on every rank */
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    size_t j = (size_t)(seed % i);
    int32_t swap = number[i - 1];
    number[i - 1] = number[j];
    number[j] = swap;
  }
  for (size_t y = 0; y < m; ++y)
    for (size_t x = 0; x < m; ++x) {
      int32_t i = number[y * m + x];
      rows[count] = cols[count] = i;
      values[count++] = 2 + 2 * eps;
      const long dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
      for (int k = 0; k < 4; ++k) {
        long nx = (long)x + dx[k], ny = (long)y + dy[k];
        if (nx < 0 || ny < 0 || nx >= (long)m || ny >= (long)m)
          continue;
        rows[count] = i;
        cols[count] = number[(size_t)ny * m + (size_t)nx];
        values[count++] = dy[k] ? -eps : -1;
      }
    }
  clmg_error error;
  CHECK(clmg_csr_from_triplets(n, n, count, rows, cols, values, a, &error) == CLMG_SUCCESS, "%s",
        error.message);
  free(rows);
  free(cols);
  free(values);
  free(number);
}

/* x and y hold the same entries to `tolerance` relative to the largest of
 * the row (an entry missing on one side counts as 0). */
static void check_same(const clmg_csr *x, const clmg_csr *y, double tolerance, const char *what) {
  CHECK(x->rows == y->rows && x->cols == y->cols, "%s: %zu x %zu against %zu x %zu", what, x->rows,
        x->cols, y->rows, y->cols);
  for (size_t i = 0; i < x->rows; ++i) {
    double largest = 0;
    for (int64_t k = x->row_ptr[i]; k < x->row_ptr[i + 1]; ++k)
      largest = fmax(largest, fabs(x->val[k]));
    for (int64_t k = y->row_ptr[i]; k < y->row_ptr[i + 1]; ++k)
      largest = fmax(largest, fabs(y->val[k]));
    int64_t p = x->row_ptr[i], q = y->row_ptr[i];
    while (p < x->row_ptr[i + 1] || q < y->row_ptr[i + 1]) {
      int32_t cp = p < x->row_ptr[i + 1] ? x->col[p] : INT32_MAX;
      int32_t cq = q < y->row_ptr[i + 1] ? y->col[q] : INT32_MAX;
      double vp = cp <= cq ? x->val[p] : 0, vq = cq <= cp ? y->val[q] : 0;
      CHECK(fabs(vp - vq) <= tolerance * largest, "%s: entry (%zu, %d): %.17g against %.17g", what,
            i, cp < cq ? cp : cq, vp, vq);
      p += cp <= cq;
      q += cq <= cp;
    }
  }
}

/* Every rank's rows (local, global columns) into the whole matrix on rank
 * 0 (*whole left empty elsewhere). */
static void gather_rows(const clmg_csr *local, clmg_csr *whole) {
  memset(whole, 0, sizeof *whole);
  int rows = (int)local->rows, entries = (int)clmg_csr_nnz(local);
  int *row_counts = malloc((size_t)world_size * sizeof *row_counts);
  int *entry_counts = malloc((size_t)world_size * sizeof *entry_counts);
  int *row_at = malloc((size_t)world_size * sizeof *row_at);
  int *entry_at = malloc((size_t)world_size * sizeof *entry_at);
  CHECK(row_counts && entry_counts && row_at && entry_at, "no memory");
  MPI_Allgather(&rows, 1, MPI_INT, row_counts, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(&entries, 1, MPI_INT, entry_counts, 1, MPI_INT, MPI_COMM_WORLD);
  size_t total_rows = 0, total_entries = 0;
  for (int r = 0; r < world_size; ++r) {
    row_at[r] = (int)total_rows;
    entry_at[r] = (int)total_entries;
    total_rows += (size_t)row_counts[r];
    total_entries += (size_t)entry_counts[r];
  }
  int64_t *lengths = malloc((local->rows + 1) * sizeof *lengths);
  CHECK(lengths, "no memory");
  for (size_t i = 0; i < local->rows; ++i)
    lengths[i] = local->row_ptr[i + 1] - local->row_ptr[i];
  if (world_rank == 0) {
    whole->rows = total_rows;
    whole->cols = local->cols;
    whole->row_ptr = calloc(total_rows + 1, sizeof *whole->row_ptr);
    whole->col = malloc((total_entries + 1) * sizeof *whole->col);
    whole->val = malloc((total_entries + 1) * sizeof *whole->val);
    CHECK(whole->row_ptr && whole->col && whole->val, "no memory");
  }
  MPI_Gatherv(lengths, rows, MPI_INT64_T, world_rank == 0 ? whole->row_ptr + 1 : NULL, row_counts,
              row_at, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Gatherv(local->col, entries, MPI_INT32_T, whole->col, entry_counts, entry_at, MPI_INT32_T, 0,
              MPI_COMM_WORLD);
  MPI_Gatherv(local->val, entries, MPI_DOUBLE, whole->val, entry_counts, entry_at, MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  for (size_t i = 0; world_rank == 0 && i < total_rows; ++i)
    whole->row_ptr[i + 1] += whole->row_ptr[i];
  free(lengths);
  free(row_counts);
  free(entry_counts);
  free(row_at);
  free(entry_at);
}

/* This rank's even share of a's rows (global columns). */
static void my_rows(clmg_mpi *mpi, const clmg_csr *a, uint64_t *first, clmg_csr *local) {
  uint64_t count = 0;
  clmg_mpi_even_rows(mpi, a->rows, first, &count);
  clmg_error error;
  CHECK(clmg_csr_row_block(a, *first, count, local, &error) == CLMG_SUCCESS, "%s", error.message);
}

/* On one rank (a communicator of rank 0 alone, whatever the world's size)
 * the distributed levels are the serial host hierarchy's: the same sizes,
 * A and P to rounding, R = P^T. */
static void test_one_rank_equals_serial(clmg_context *context) {
  if (world_rank != 0)
    return;
  struct {
    size_t m;
    double eps;
    size_t coarse_rows;
    double damping;
  } cases[] = {{48, 1, 20, 0}, {40, 0.01, 30, 0}, {30, 1, 10, 0.5}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    clmg_csr a = {0};
    grid_operator(cases[c].m, cases[c].eps, 0, &a);
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.coarse_rows = cases[c].coarse_rows;
    options.prolongator_damping = cases[c].damping;
    clmg_amg_hierarchy serial;
    clmg_error error;
    CHECK(clmg_amg_hierarchy_build(&a, &options, &serial, &error) == CLMG_SUCCESS, "%s",
          error.message);
    clmg_mpi *self = NULL;
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_SELF, &self), context);
    clmg_mpi_amg_levels levels;
    CHECK_OK(clmg_mpi_amg_levels_create(self, 0, &a, &options, &levels), context);
    CHECK(levels.num_levels == serial.num_levels && serial.num_levels >= 3,
          "case %zu: %d levels, serial %d", c, levels.num_levels, serial.num_levels);
    for (int l = 0; l < levels.num_levels; ++l) {
      char what[64];
      snprintf(what, sizeof what, "case %zu level %d A", c, l);
      CHECK(levels.global_rows[l] == serial.a[l].rows && levels.levels[l].first_row == 0, "%s rows",
            what);
      check_same(&levels.levels[l].a, &serial.a[l], 1e-13, what);
      if (l == 0)
        continue;
      snprintf(what, sizeof what, "case %zu level %d P", c, l);
      check_same(&levels.levels[l].p, &serial.p[l], 1e-13, what);
      clmg_csr transposed;
      CHECK(clmg_csr_transpose(&serial.p[l], &transposed, &error) == CLMG_SUCCESS, "transpose");
      snprintf(what, sizeof what, "case %zu level %d R", c, l);
      check_same(&levels.levels[l].r, &transposed, 1e-13, what);
      clmg_csr_free(&transposed);
    }
    clmg_mpi_amg_levels_free(&levels);
    clmg_mpi_destroy(self);
    clmg_amg_hierarchy_free(&serial);
    clmg_csr_free(&a);
  }
}

/* On every count of ranks, every level gathered to rank 0: A_c = P^T A P
 * (the serial host product of the gathered A and P), R = P^T; with a
 * vanishing damping P is the tentative P~, whose aggregates stay on their
 * rank (a fine row's coarse column belongs to the same rank) and which
 * reproduces the constant: P~ c = 1 on every aggregated row, c_j the
 * square root of aggregate j's size. */
static void test_distributed_levels(clmg_mpi *mpi) {
  clmg_context *context = clmg_mpi_context(mpi);
  struct {
    size_t m;
    uint64_t seed;
    double damping;
  } cases[] = {{40, 0, 0}, {32, 7, 0}, {40, 0, 1e-300}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    clmg_csr a = {0}, local = {0};
    grid_operator(cases[c].m, 1, cases[c].seed, &a);
    uint64_t first = 0;
    my_rows(mpi, &a, &first, &local);
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.coarse_rows = 20;
    options.prolongator_damping = cases[c].damping;
    clmg_mpi_amg_levels levels;
    CHECK_OK(clmg_mpi_amg_levels_create(mpi, first, &local, &options, &levels), context);
    CHECK(levels.num_levels >= 2 && levels.global_rows[levels.num_levels - 1] == a.rows,
          "case %zu: %d levels", c, levels.num_levels);
    for (int l = levels.num_levels - 1; l >= 1; --l) {
      const clmg_mpi_level_rows *fine = &levels.levels[l], *coarse = &levels.levels[l - 1];
      CHECK(fine->p.rows == fine->a.rows && fine->r.rows == coarse->a.rows &&
                fine->p.cols == levels.global_rows[l - 1] && fine->r.cols == levels.global_rows[l],
            "case %zu level %d: P, R sizes", c, l);
      clmg_csr whole_a, whole_p, whole_r, whole_coarse;
      gather_rows(&fine->a, &whole_a);
      gather_rows(&fine->p, &whole_p);
      gather_rows(&fine->r, &whole_r);
      gather_rows(&coarse->a, &whole_coarse);
      /* each rank's fine and coarse first rows, for the ownership check */
      uint64_t firsts[2] = {fine->first_row, coarse->first_row};
      uint64_t *all = malloc(2 * (size_t)world_size * sizeof *all);
      CHECK(all, "no memory");
      MPI_Gather(firsts, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
      if (world_rank == 0) {
        clmg_error error;
        clmg_csr ap, r, rap;
        CHECK(clmg_csr_multiply(&whole_a, &whole_p, &ap, &error) == CLMG_SUCCESS &&
                  clmg_csr_transpose(&whole_p, &r, &error) == CLMG_SUCCESS &&
                  clmg_csr_multiply(&r, &ap, &rap, &error) == CLMG_SUCCESS,
              "%s", error.message);
        char what[64];
        snprintf(what, sizeof what, "case %zu level %d: A_c against P^T A P", c, l);
        check_same(&whole_coarse, &rap, 1e-12, what);
        snprintf(what, sizeof what, "case %zu level %d: R against P^T", c, l);
        check_same(&whole_r, &r, 1e-15, what);
        if (cases[c].damping != 0 && l == levels.num_levels - 1) {
          /* P = P~ - 1e-300 D^-1 A P~: the smoothing's entries, below
           * 1e-200, are not P~'s */
          size_t nc = whole_p.cols, aggregated = 0;
          double *size = calloc(nc + 1, sizeof *size);
          CHECK(size, "no memory");
          for (size_t k = 0; k < clmg_csr_nnz(&whole_p); ++k)
            size[whole_p.col[k]] += fabs(whole_p.val[k]) > 1e-200;
          for (size_t i = 0; i < whole_p.rows; ++i) {
            int64_t length = 0, at = -1;
            for (int64_t k = whole_p.row_ptr[i]; k < whole_p.row_ptr[i + 1]; ++k)
              if (fabs(whole_p.val[k]) > 1e-200) {
                ++length;
                at = k;
              }
            CHECK(length <= 1, "P~ row %zu has %lld entries", i, (long long)length);
            if (length == 0)
              continue;
            ++aggregated;
            int32_t j = whole_p.col[at];
            double value = whole_p.val[at];
            CHECK(fabs(value * sqrt(size[j]) - 1) <= 1e-14, "P~ c at row %zu: %.17g", i,
                  value * sqrt(size[j]));
            int fine_owner = 0, coarse_owner = 0;
            for (int q = 0; q < world_size; ++q) {
              fine_owner = all[2 * q] <= i ? q : fine_owner;
              coarse_owner = all[2 * q + 1] <= (uint64_t)j ? q : coarse_owner;
            }
            /* (a rank without rows shares its first row with the next: the
             * last rank at or before the index owns it) */
            CHECK(fine_owner == coarse_owner, "row %zu (rank %d) in aggregate %d of rank %d", i,
                  fine_owner, j, coarse_owner);
          }
          CHECK(aggregated * 2 > whole_p.rows, "only %zu of %zu rows aggregated", aggregated,
                whole_p.rows);
          free(size);
        }
        clmg_csr_free(&ap);
        clmg_csr_free(&r);
        clmg_csr_free(&rap);
      }
      free(all);
      clmg_csr_free(&whole_a);
      clmg_csr_free(&whole_p);
      clmg_csr_free(&whole_r);
      clmg_csr_free(&whole_coarse);
    }
    clmg_mpi_amg_levels_free(&levels);
    clmg_csr_free(&local);
    clmg_csr_free(&a);
  }
}

/* The omega of the finest level's prolongator smoothing on mpi's ranks
 * (on rank 0; 0 elsewhere): P (omega estimated) and P~ (a vanishing
 * damping) gathered, every entry of P~ - P = omega D^-1 A P~ gives omega,
 * and they must agree. */
static double smoothing_omega(clmg_mpi *mpi, const clmg_csr *a) {
  clmg_context *context = clmg_mpi_context(mpi);
  uint64_t first = 0;
  clmg_csr local;
  my_rows(mpi, a, &first, &local);
  clmg_csr p[2];
  const double damping[2] = {0, 1e-300};
  for (int k = 0; k < 2; ++k) {
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    options.max_levels = 2;
    options.coarse_rows = 1;
    options.prolongator_damping = damping[k];
    clmg_mpi_amg_levels levels;
    CHECK_OK(clmg_mpi_amg_levels_create(mpi, first, &local, &options, &levels), context);
    CHECK(levels.num_levels == 2, "%d levels", levels.num_levels);
    if (clmg_mpi_size(mpi) > 1 || world_size == 1)
      gather_rows(&levels.levels[1].p, &p[k]);
    else
      CHECK(clmg_csr_copy(&levels.levels[1].p, &p[k], NULL) == CLMG_SUCCESS, "copy");
    clmg_mpi_amg_levels_free(&levels);
  }
  clmg_csr_free(&local);
  if (world_rank != 0)
    return 0;
  clmg_csr ap;
  CHECK(clmg_csr_multiply(a, &p[1], &ap, NULL) == CLMG_SUCCESS, "A P~");
  double *diagonal = malloc(a->rows * sizeof *diagonal);
  CHECK(diagonal && clmg_csr_diagonal(a, diagonal, NULL) == CLMG_SUCCESS, "diagonal");
  double omega = 0;
  for (size_t i = 0; i < a->rows; ++i)
    for (int64_t k = ap.row_ptr[i]; k < ap.row_ptr[i + 1]; ++k) {
      if (fabs(ap.val[k]) < 0.1)
        continue;
      double smoothed = 0, tentative = 0; /* P and P~ at (i, ap.col[k]) */
      for (int64_t q = p[0].row_ptr[i]; q < p[0].row_ptr[i + 1]; ++q)
        smoothed = p[0].col[q] == ap.col[k] ? p[0].val[q] : smoothed;
      for (int64_t q = p[1].row_ptr[i]; q < p[1].row_ptr[i + 1]; ++q)
        tentative = p[1].col[q] == ap.col[k] ? p[1].val[q] : tentative;
      double here = (tentative - smoothed) * diagonal[i] / ap.val[k];
      if (omega == 0)
        omega = here;
      CHECK(fabs(here - omega) <= 1e-10 * omega, "omega %.17g at row %zu, %.17g before", here, i,
            omega);
    }
  CHECK(omega > 0, "no omega");
  free(diagonal);
  clmg_csr_free(&ap);
  clmg_csr_free(&p[0]);
  clmg_csr_free(&p[1]);
  return omega;
}

/* omega from the power iteration on every count of ranks: each rank's part
 * of the serial start vector (the generator skipped to its first row), so
 * the estimate is one rank's to rounding. */
static void test_omega(clmg_context *context) {
  clmg_csr a = {0};
  grid_operator(30, 1, 0, &a);
  double alone = 0;
  if (world_rank == 0) {
    clmg_mpi *self = NULL;
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_SELF, &self), context);
    alone = smoothing_omega(self, &a);
    clmg_mpi_destroy(self);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  double together = smoothing_omega(mpi, &a);
  CHECK(world_rank != 0 || fabs(together - alone) <= 1e-9 * alone,
        "omega %.17g on %d ranks, %.17g on one", together, world_size, alone);
  clmg_mpi_destroy(mpi);
  clmg_csr_free(&a);
}

/* AMG-PCG to 1e-8 from x = 0 with b = A 1 on a's rows: the iterations; the
 * residual recomputed from x and the error against 1 are checked. */
static int serial_pcg(clmg_context *context, const clmg_csr *a) {
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_amg_multigrid_create(context, a, NULL, NULL, NULL, &mg), context);
  const clmg_operator *op = clmg_multigrid_operator(mg, clmg_multigrid_levels(mg) - 1);
  clmg_vector *b = NULL, *x = NULL;
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, a->rows, &b), context);
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, a->rows, &x), context);
  CHECK_OK(clmg_vector_fill(x, 1.0), context);
  CHECK_OK(clmg_operator_apply(op, 1.0, x, 0.0, b), context);
  CHECK_OK(clmg_vector_fill(x, 0.0), context);
  clmg_preconditioner cycle;
  CHECK_OK(clmg_multigrid_preconditioner(mg, &cycle), context);
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  clmg_krylov_result result;
  CHECK_OK(clmg_krylov_solve(CLMG_KRYLOV_CG, op, b, x, &cycle, &options, &result), context);
  CHECK(result.converged, "serial AMG-PCG did not converge");
  clmg_preconditioner_destroy(&cycle);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(mg);
  return result.iterations;
}

static void test_pcg(clmg_context *context) {
  /* the renumbered grid puts most neighbours on other ranks: without the
   * boundary singletons, the rows that lose theirs to other ranks go
   * uncorrected (18 and 36 iterations on 2 and 4 ranks, serial 8) */
  struct {
    const char *name;
    size_t m;
    double eps;
    uint64_t seed;
  } cases[] = {{"2D Poisson", 96, 1, 0},
               {"anisotropic (eps 0.01)", 64, 0.01, 0},
               {"2D Poisson renumbered at random", 64, 1, 11}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    clmg_csr a = {0}, local = {0};
    grid_operator(cases[c].m, cases[c].eps, cases[c].seed, &a);
    /* the serial AMG first, while the context is local */
    int serial = serial_pcg(context, &a);
    clmg_mpi *mpi = NULL;
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
    uint64_t first = 0;
    my_rows(mpi, &a, &first, &local);
    clmg_multigrid *mg = NULL;
    CHECK_OK(clmg_mpi_amg_multigrid_create(mpi, first, &local, NULL, NULL, &mg), context);
    const clmg_operator *op = clmg_multigrid_operator(mg, clmg_multigrid_levels(mg) - 1);
    CHECK(op->rows == local.rows, "finest operator %zu rows", op->rows);
    clmg_vector *b = NULL, *x = NULL, *r = NULL;
    CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, local.rows, &b), context);
    CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, local.rows, &x), context);
    CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, local.rows, &r), context);
    CHECK_OK(clmg_vector_fill(x, 1.0), context);
    CHECK_OK(clmg_operator_apply(op, 1.0, x, 0.0, b), context);
    CHECK_OK(clmg_vector_fill(x, 0.0), context);
    clmg_preconditioner cycle;
    CHECK_OK(clmg_multigrid_preconditioner(mg, &cycle), context);
    clmg_krylov_options options;
    clmg_krylov_options_defaults(&options);
    clmg_krylov_result result;
    CHECK_OK(clmg_krylov_solve(CLMG_KRYLOV_CG, op, b, x, &cycle, &options, &result), context);
    /* the residual recomputed from x (global norms through the reducer) */
    double residual = 0, b_norm = 0;
    CHECK_OK(clmg_operator_defect(op, b, x, r), context);
    CHECK_OK(clmg_nrm2(r, &residual), context);
    CHECK_OK(clmg_nrm2(b, &b_norm), context);
    CHECK(isfinite(residual) && residual <= options.relative_tolerance * b_norm,
          "%s: relative residual %.3e", cases[c].name, residual / b_norm);
    double *values = malloc((local.rows + 1) * sizeof *values), error = 0;
    CHECK(values, "no memory");
    CHECK_OK(clmg_vector_download_doubles(x, values), context);
    for (size_t i = 0; i < local.rows; ++i)
      error = fmax(error, fabs(values[i] - 1));
    MPI_Allreduce(MPI_IN_PLACE, &error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(error <= 1e-5, "%s: max error %.3e against the exact solution", cases[c].name, error);
    CHECK(result.converged && result.iterations <= 1.5 * serial + 3,
          "%s: %d iterations on %d ranks, serial AMG %d", cases[c].name, result.iterations,
          world_size, serial);
    if (world_rank == 0)
      printf("%s, %zu rows: AMG-PCG %d iterations on %d ranks (%d levels), serial AMG %d\n",
             cases[c].name, a.rows, result.iterations, world_size, clmg_multigrid_levels(mg),
             serial);
    free(values);
    clmg_krylov_result_free(&result);
    clmg_preconditioner_destroy(&cycle);
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_vector_destroy(r);
    clmg_multigrid_destroy(mg);
    clmg_mpi_destroy(mpi);
    clmg_csr_free(&local);
    clmg_csr_free(&a);
  }
}

/* Refused options: every rank returns the same status and message. */
static void test_refused(clmg_mpi *mpi) {
  clmg_context *context = clmg_mpi_context(mpi);
  clmg_csr a = {0}, local = {0};
  grid_operator(8, 1, 0, &a);
  uint64_t first = 0;
  my_rows(mpi, &a, &first, &local);
  struct {
    int classical, block, strength;
    const char *expect;
  } cases[] = {{1, 0, 0, "classical coarsening"},
               {0, 2, 0, "block size 2"},
               {0, 0, 1, "strength threshold 2 is outside"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    clmg_amg_options options;
    clmg_amg_options_defaults(&options);
    if (cases[c].classical)
      options.coarsening = CLMG_AMG_CLASSICAL;
    options.block_size = cases[c].block ? cases[c].block : options.block_size;
    if (cases[c].strength)
      options.strength_threshold = 2;
    clmg_mpi_amg_levels levels;
    clmg_status status = clmg_mpi_amg_levels_create(mpi, first, &local, &options, &levels);
    CHECK(status == CLMG_ERROR_INVALID_ARGUMENT &&
              strstr(clmg_context_message(context), cases[c].expect),
          "case %zu: %s: %s", c, clmg_status_string(status), clmg_context_message(context));
    CHECK(levels.num_levels == 0 && !levels.levels, "case %zu: levels left", c);
  }
  /* a matrix one rank gets wrong: its rows' columns pass the global size */
  clmg_csr bad = local;
  bad.cols = world_rank == world_size - 1 ? a.rows + 1 : a.rows;
  clmg_mpi_amg_levels levels;
  clmg_status status = clmg_mpi_amg_levels_create(mpi, first, &bad, NULL, &levels);
  char expect[64];
  snprintf(expect, sizeof expect, "rank %d: distributed AMG", world_size - 1);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT && strstr(clmg_context_message(context), expect),
        "bad columns: %s: %s", clmg_status_string(status), clmg_context_message(context));
  /* a row without its diagonal entry (on the last rank's rows): the
   * prolongator smoothing needs it, every rank says which row */
  clmg_csr holed;
  clmg_error error;
  CHECK(clmg_csr_copy(&a, &holed, &error) == CLMG_SUCCESS, "%s", error.message);
  size_t row = a.rows - 1;
  for (int64_t k = holed.row_ptr[row]; k < holed.row_ptr[row + 1]; ++k)
    if ((size_t)holed.col[k] == row)
      holed.val[k] = 0; /* stored as 0 first, then dropped from the copy below */
  clmg_csr mine;
  my_rows(mpi, &holed, &first, &mine);
  size_t kept = 0;
  for (size_t i = 0; i < mine.rows; ++i) {
    int64_t begin = mine.row_ptr[i];
    mine.row_ptr[i] = (int64_t)kept;
    for (int64_t k = begin; k < mine.row_ptr[i + 1]; ++k)
      if (!(first + i == row && (size_t)mine.col[k] == row)) {
        mine.col[kept] = mine.col[k];
        mine.val[kept++] = mine.val[k];
      }
  }
  mine.row_ptr[mine.rows] = (int64_t)kept;
  clmg_amg_options options;
  clmg_amg_options_defaults(&options);
  options.coarse_rows = 4;
  status = clmg_mpi_amg_levels_create(mpi, first, &mine, &options, &levels);
  snprintf(expect, sizeof expect, "row %zu does not store its diagonal entry", row + 1);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT && strstr(clmg_context_message(context), expect),
        "no diagonal: %s: %s", clmg_status_string(status), clmg_context_message(context));
  clmg_csr_free(&mine);
  clmg_csr_free(&holed);
  clmg_csr_free(&local);
  clmg_csr_free(&a);
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(NULL, &context);
  CHECK_OK(status, context);
  test_one_rank_equals_serial(context);
  MPI_Barrier(MPI_COMM_WORLD);
  test_omega(context);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  test_distributed_levels(mpi);
  test_refused(mpi);
  clmg_mpi_destroy(mpi);
  test_pcg(context);
  clmg_context_destroy(context);
  if (world_rank == 0)
    printf("test_mpi_amg: all checks passed on %d ranks\n", world_size);
  MPI_Finalize();
  return 0;
}
