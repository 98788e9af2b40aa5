/* clmg_mpi's matrices built in parts (ctest runs it with 1, 2 and 4 ranks):
 * entries sent to the ranks that own their rows (clmg_mpi_rows_from_triplets,
 * an internal function: this suite links lib/mpi's objects), checked against
 * the serial library on the same entries.
 *
 * Not cmocka: a failed check must stop every rank (MPI_Abort), or the
 * others would wait in a collective for the one that left. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int world_rank, world_size;

#define CHECK(condition, ...)                                                                      \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", world_rank, __FILE__, __LINE__,        \
              #condition);                                                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)
#define CHECK_OK(status, context)                                                                  \
  CHECK((status) == CLMG_SUCCESS, "%s: %s", clmg_status_string(status),                            \
        clmg_context_message(context))

/* xorshift64*: a rank's sequence depends on its seed only, so every rank
 * can make every rank's entries. */
static uint64_t next_random(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

/* Rank r's entries of an n x n matrix: random positions, a few rows and
 * columns favoured so that many repeat (duplicates, also across ranks);
 * values are multiples of 1/4, so sums are exact in any order. */
static size_t rank_entries(int r, size_t n, int64_t **rows, int64_t **cols, double **values) {
  uint64_t state = 0x9e3779b97f4a7c15ull + 7919u * (uint64_t)(r + 1);
  size_t count = (size_t)(next_random(&state) % (3 * n + 1));
  *rows = malloc((count + 1) * sizeof **rows);
  *cols = malloc((count + 1) * sizeof **cols);
  *values = malloc((count + 1) * sizeof **values);
  CHECK(*rows && *cols && *values, "no memory");
  for (size_t k = 0; k < count; ++k) {
    uint64_t pick = next_random(&state);
    (*rows)[k] = (int64_t)((pick % 4 == 0 ? pick / 4 % 3 : pick >> 8) % n);
    (*cols)[k] = (int64_t)((pick % 8 < 3 ? (pick >> 20) % 2 : pick >> 24) % n);
    (*values)[k] = (double)((int64_t)((pick >> 40) % 64) - 32) / 4;
  }
  return count;
}

/* Row blocks of n rows over the ranks: even, or uneven with empty ranks
 * (rank 0 and every third rank own nothing when `uneven`). */
static void make_row_starts(size_t n, int uneven, uint64_t *row_starts) {
  row_starts[0] = 0;
  int owners = 0;
  for (int r = 0; r < world_size; ++r)
    owners += !uneven || (r != 0 && r % 3 != 0);
  if (owners == 0) { /* one rank, uneven: it owns everything */
    row_starts[1] = n;
    return;
  }
  int seen = 0;
  for (int r = 0; r < world_size; ++r) {
    int owns = !uneven || (r != 0 && r % 3 != 0);
    seen += owns;
    row_starts[r + 1] = owns ? (uint64_t)n * (uint64_t)seen / (uint64_t)owners : row_starts[r];
  }
}

static void check_equal_rows(const clmg_csr *got, const clmg_csr *want, const char *what) {
  CHECK(got->rows == want->rows && got->cols == want->cols, "%s: %zu x %zu, want %zu x %zu", what,
        got->rows, got->cols, want->rows, want->cols);
  for (size_t i = 0; i <= want->rows; ++i)
    CHECK(got->row_ptr[i] == want->row_ptr[i], "%s: row_ptr[%zu] = %lld, want %lld", what, i,
          (long long)got->row_ptr[i], (long long)want->row_ptr[i]);
  for (size_t k = 0; k < clmg_csr_nnz(want); ++k)
    CHECK(got->col[k] == want->col[k] && got->val[k] == want->val[k],
          "%s: entry %zu is (%d, %g), want (%d, %g)", what, k, (int)got->col[k], got->val[k],
          (int)want->col[k], want->val[k]);
}

/* Every rank's random entries sent to their owners; each rank's rows equal
 * those of the whole matrix built by the serial library from every rank's
 * entries. */
static void test_rows_from_triplets(clmg_mpi *mpi, size_t n, int uneven, size_t chunk) {
  clmg_context *context = clmg_mpi_context(mpi);
  uint64_t *row_starts = malloc(((size_t)world_size + 1) * sizeof *row_starts);
  CHECK(row_starts, "no memory");
  make_row_starts(n, uneven, row_starts);
  /* the whole matrix from every rank's entries, in rank order */
  size_t total = 0, capacity = 16;
  int32_t *all_rows = malloc(capacity * sizeof *all_rows);
  int32_t *all_cols = malloc(capacity * sizeof *all_cols);
  double *all_values = malloc(capacity * sizeof *all_values);
  CHECK(all_rows && all_cols && all_values, "no memory");
  for (int r = 0; r < world_size; ++r) {
    int64_t *rows, *cols;
    double *values;
    size_t count = rank_entries(r, n, &rows, &cols, &values);
    if (total + count > capacity) {
      capacity = 2 * (total + count);
      all_rows = realloc(all_rows, capacity * sizeof *all_rows);
      all_cols = realloc(all_cols, capacity * sizeof *all_cols);
      all_values = realloc(all_values, capacity * sizeof *all_values);
      CHECK(all_rows && all_cols && all_values, "no memory");
    }
    for (size_t k = 0; k < count; ++k, ++total) {
      all_rows[total] = (int32_t)rows[k];
      all_cols[total] = (int32_t)cols[k];
      all_values[total] = values[k];
    }
    free(rows);
    free(cols);
    free(values);
  }
  clmg_csr whole = {0}, want = {0}, got = {0};
  clmg_error error;
  CHECK(clmg_csr_from_triplets(n, n, total, all_rows, all_cols, all_values, &whole, &error) ==
            CLMG_SUCCESS,
        "%s", error.message);
  size_t first = (size_t)row_starts[world_rank];
  size_t mine = (size_t)(row_starts[world_rank + 1] - row_starts[world_rank]);
  CHECK(clmg_csr_row_block(&whole, first, mine, &want, &error) == CLMG_SUCCESS, "%s",
        error.message);

  int64_t *rows, *cols;
  double *values;
  size_t count = rank_entries(world_rank, n, &rows, &cols, &values);
  clmg_status status = clmg_mpi_rows_from_triplets_chunked(mpi, row_starts, n, count, rows, cols,
                                                           values, chunk, &got);
  CHECK_OK(status, context);
  char what[96];
  snprintf(what, sizeof what, "n %zu, %s rows, chunk %zu", n, uneven ? "uneven" : "even", chunk);
  check_equal_rows(&got, &want, what);
  clmg_csr_free(&got);
  if (chunk == 0) { /* the public form is the same call */
    CHECK_OK(clmg_mpi_rows_from_triplets(mpi, row_starts, n, count, rows, cols, values, &got),
             context);
    check_equal_rows(&got, &want, what);
    clmg_csr_free(&got);
  }
  free(rows);
  free(cols);
  free(values);
  free(all_rows);
  free(all_cols);
  free(all_values);
  clmg_csr_free(&whole);
  clmg_csr_free(&want);
  free(row_starts);
}

/* One entry outside the matrix on the last rank: every rank returns the
 * agreed failure, whose message names that rank and the entry. */
static void test_entry_outside(clmg_mpi *mpi, int bad_column) {
  clmg_context *context = clmg_mpi_context(mpi);
  const size_t n = 10;
  uint64_t *row_starts = malloc(((size_t)world_size + 1) * sizeof *row_starts);
  CHECK(row_starts, "no memory");
  make_row_starts(n, 0, row_starts);
  int64_t rows[3] = {0, 4, 9}, cols[3] = {9, 4, 0};
  double values[3] = {1, 2, 3};
  int last = world_size - 1;
  if (world_rank == last) {
    if (bad_column)
      cols[1] = (int64_t)n;
    else
      rows[1] = -1;
  }
  clmg_csr got = {0};
  clmg_status status = clmg_mpi_rows_from_triplets(mpi, row_starts, n, 3, rows, cols, values, &got);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT, "status %s", clmg_status_string(status));
  CHECK(got.row_ptr == NULL, "an output after a failure");
  char want[128];
  snprintf(want, sizeof want, "rank %d: entry 1 (row %d, column %d, 0-based) lies outside", last,
           bad_column ? 4 : -1, bad_column ? (int)n : 4);
  CHECK(strstr(clmg_context_message(context), want), "message '%s' lacks '%s'",
        clmg_context_message(context), want);
  free(row_starts);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  /* pocl builds its kernels under POCL_CACHE_DIR by the program's name:
   * ranks that compile the same kernel at once need their own directory */
  const char *pocl_cache = getenv("POCL_CACHE_DIR");
  if (pocl_cache) {
    char directory[4096];
    snprintf(directory, sizeof directory, "%s/rank%d", pocl_cache, world_rank);
    mkdir(directory, 0777);
    setenv("POCL_CACHE_DIR", directory, 1);
  }
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(NULL, &context);
  CHECK_OK(status, context);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);

  const size_t sizes[] = {1, 3, 57, 400};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
    for (int uneven = 0; uneven <= 1; ++uneven) {
      test_rows_from_triplets(mpi, sizes[s], uneven, 0);
      test_rows_from_triplets(mpi, sizes[s], uneven, 1);
      test_rows_from_triplets(mpi, sizes[s], uneven, 7);
    }
  test_entry_outside(mpi, 1);
  test_entry_outside(mpi, 0);

  clmg_mpi_destroy(mpi);
  clmg_context_destroy(context);
  if (world_rank == 0)
    printf("test_mpi_read: all checks passed on %d rank%s\n", world_size,
           world_size == 1 ? "" : "s");
  MPI_Finalize();
  return 0;
}
