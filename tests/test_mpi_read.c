/* clmg_mpi's matrices built in parts (ctest runs it with 1, 2 and 4 ranks):
 * entries sent to the ranks that own their rows (clmg_mpi_rows_from_triplets,
 * an internal function: this suite links lib/mpi's objects), checked against
 * the serial library on the same entries.
 *
 * Not cmocka: a failed check must stop every rank (MPI_Abort), or the
 * others would wait in a collective for the one that left. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_mpi_util.h"

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

/* ---- Matrix Market files read in parts ---- */

static char scratch_dir[3000];

/* Rank 0 writes `text` to scratch/name (every rank gets the path). */
static void write_file(const char *name, const char *text, char *path, size_t size) {
  snprintf(path, size, "%s/%s", scratch_dir, name);
  if (world_rank == 0) {
    FILE *file = fopen(path, "wb");
    CHECK(file, "cannot write %s", path);
    fputs(text, file);
    CHECK(fclose(file) == 0, "cannot write %s", path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A growing text (a generated file). */
typedef struct text_buffer {
  char *data;
  size_t length, capacity;
} text_buffer;

static void append(text_buffer *text, const char *format, ...) {
  for (;;) {
    va_list args;
    va_start(args, format);
    size_t room = text->capacity - text->length;
    int wrote = vsnprintf(text->data ? text->data + text->length : NULL, room, format, args);
    va_end(args);
    CHECK(wrote >= 0, "vsnprintf failed");
    if ((size_t)wrote < room) {
      text->length += (size_t)wrote;
      return;
    }
    text->capacity = 2 * (text->capacity + (size_t)wrote + 64);
    text->data = realloc(text->data, text->capacity);
    CHECK(text->data, "no memory");
  }
}

/* An n x n file of the given banner kind, with comments, blank lines, CRLF
 * line ends and duplicates among its entries, and (bad_line > 0) "1 x 1"
 * as its line bad_line (counted over the whole file, past the size line).
 * *lines gets its number of lines. */
static char *generated_file(size_t n, const char *kind, int symmetric, size_t bad_line,
                            size_t *lines) {
  uint64_t state = 0x2545f4914f6cdd1dull + n;
  size_t entries = 0;
  text_buffer body = {0};
  size_t line = 4; /* the banner, a comment, the size line: entries start on line 4 */
  for (size_t k = 0; k < 6 * n; ++k, ++line) {
    uint64_t pick = next_random(&state);
    if (line == bad_line) {
      append(&body, "1 x 1\n");
      ++entries;
      continue;
    }
    if (pick % 13 == 0) {
      append(&body, pick % 2 ? "%% a comment among the entries\n" : "   \r\n");
      continue;
    }
    size_t i = (size_t)((pick >> 8) % n) + 1, j = (size_t)((pick >> 24) % n) + 1;
    if (symmetric && j > i) {
      size_t swap = i;
      i = j;
      j = swap;
    }
    if (pick % 7 == 0) /* a diagonal entry, repeated on many lines */
      j = i;
    double value = (double)((int64_t)((pick >> 40) % 64) - 32) / 4;
    if (strstr(kind, "pattern"))
      append(&body, "%zu %zu%s\n", i, j, pick % 5 == 0 ? "\r" : "");
    else if (strstr(kind, "integer"))
      append(&body, "%zu %zu %d\n", i, j, (int)value * 3);
    else
      append(&body, " %zu\t%zu %.17g%s\n", i, j, value, pick % 5 == 0 ? "\r" : "");
    ++entries;
  }
  text_buffer file = {0};
  append(&file, "%%%%MatrixMarket matrix coordinate %s\n%% generated by test_mpi_read\n", kind);
  append(&file, "%zu %zu %zu\n%s", n, n, entries, body.data ? body.data : "");
  free(body.data);
  *lines = line - 1;
  return file.data;
}

/* Every rank's rows read in parts equal the even split of the serial
 * reader's matrix; the distributed matrix has every nonzero. */
static void check_read(clmg_mpi *mpi, const char *path) {
  clmg_context *context = clmg_mpi_context(mpi);
  clmg_csr whole = {0}, want = {0}, got = {0};
  clmg_error error;
  CHECK(clmg_csr_read_matrix_market(path, &whole, &error) == CLMG_SUCCESS, "%s", error.message);
  uint64_t first = 0, count = 0, first_row = 99;
  clmg_mpi_even_rows(mpi, whole.rows, &first, &count);
  CHECK(clmg_csr_row_block(&whole, first, count, &want, &error) == CLMG_SUCCESS, "%s",
        error.message);
  CHECK_OK(clmg_mpi_csr_read_matrix_market(mpi, world_size - 1, path, &first_row, &got), context);
  CHECK(first_row == first, "%s: first row %llu, want %llu", path, (unsigned long long)first_row,
        (unsigned long long)first);
  check_equal_rows(&got, &want, path);

  /* the symmetry check against the serial one on the whole matrix */
  clmg_mpi_symmetry found;
  CHECK_OK(clmg_mpi_csr_check_symmetric(mpi, first_row, &got, 1e-8, &found), context);
  CHECK(found.symmetric == clmg_csr_is_symmetric(&whole, 1e-8), "%s: symmetric %d", path,
        found.symmetric);
  double *diagonal = malloc((whole.rows + 1) * sizeof *diagonal);
  CHECK(diagonal, "no memory");
  CHECK(clmg_csr_diagonal(&whole, diagonal, &error) == CLMG_SUCCESS, "%s", error.message);
  uint64_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < whole.rows; ++i)
    if (!(diagonal[i] > 0) && bad++ == 0)
      first_bad = i;
  CHECK(found.nonpositive_diagonal == bad && (bad == 0 || found.first_nonpositive == first_bad) &&
            (bad == 0 || found.first_diagonal == diagonal[first_bad]),
        "%s: %llu nonpositive diagonal entries from row %llu, want %llu from %llu", path,
        (unsigned long long)found.nonpositive_diagonal, (unsigned long long)found.first_nonpositive,
        (unsigned long long)bad, (unsigned long long)first_bad);
  free(diagonal);

  if (whole.rows > 0) {
    clmg_mpi_matrix *matrix = NULL;
    CHECK_OK(clmg_mpi_matrix_read_matrix_market(mpi, 0, path, NULL, &matrix), context);
    clmg_mpi_matrix_info info;
    clmg_mpi_matrix_get_info(matrix, &info);
    CHECK(info.global_rows == whole.rows && info.global_nonzeros == clmg_csr_nnz(&whole) &&
              info.first_row == first && info.local_rows == count,
          "%s: the distributed matrix has %llu rows, %llu nonzeros", path,
          (unsigned long long)info.global_rows, (unsigned long long)info.global_nonzeros);
    clmg_mpi_matrix_destroy(matrix);
  }
  clmg_csr_free(&got);
  clmg_csr_free(&want);
  clmg_csr_free(&whole);
}

/* The read fails on every rank with the serial reader's status, and a
 * message that holds `needle` (NULL: the serial reader's whole message). */
static void check_read_fails(clmg_mpi *mpi, const char *path, const char *needle) {
  clmg_context *context = clmg_mpi_context(mpi);
  clmg_csr whole = {0}, got = {0};
  clmg_error error;
  clmg_status serial = clmg_csr_read_matrix_market(path, &whole, &error);
  CHECK(serial != CLMG_SUCCESS, "%s: the serial reader takes it", path);
  uint64_t first_row = 0;
  clmg_status status = clmg_mpi_csr_read_matrix_market(mpi, 0, path, &first_row, &got);
  const char *message = clmg_context_message(context);
  CHECK(status == serial, "%s: status %s, the serial reader's %s (%s)", path,
        clmg_status_string(status), clmg_status_string(serial), message);
  CHECK(got.row_ptr == NULL, "%s: rows after a failure", path);
  CHECK(strncmp(message, "rank ", 5) == 0, "%s: message '%s' names no rank", path, message);
  const char *want = needle ? needle : error.message;
  CHECK(strstr(message, want), "%s: message '%s' lacks '%s'", path, message, want);
  clmg_mpi_matrix *matrix = NULL;
  status = clmg_mpi_matrix_read_matrix_market(mpi, 0, path, NULL, &matrix);
  CHECK(status == serial && matrix == NULL, "%s: the matrix read gives %s", path,
        clmg_status_string(status));
}

static void test_read_in_parts(clmg_mpi *mpi) {
  char path[4096];
  /* small files of every kind: comments, blank lines, CRLF, duplicates */
  write_file("general.mtx",
             "%%MatrixMarket matrix coordinate real general\n% a comment\n\n"
             "5 5 9\n1 1 4.0\n% among the entries\n2 2 4\r\n3 3 4\n\n  4 4 4 \n5 5 4\n"
             "1 5 -1.5\n5 1 -1.5\n3 3 0.25\n2 4 1e-3\n",
             path, sizeof path);
  check_read(mpi, path);
  write_file("symmetric.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n4 4 6\n1 1 2\n2 1 -1\n2 2 2\n"
             "3 2 -1\n3 3 2\n4 4 2\n",
             path, sizeof path);
  check_read(mpi, path);
  write_file("skew.mtx",
             "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 0.5\n3 1 -2\n", path,
             sizeof path);
  check_read(mpi, path);
  write_file("pattern.mtx",
             "%%MatrixMarket matrix coordinate pattern symmetric\n%\n3 3 4\n1 1\n2 1\n3 3\n3 2\n",
             path, sizeof path);
  check_read(mpi, path);
  write_file("integer.mtx",
             "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 3\n2 2 -4\n1 2 7", path,
             sizeof path);
  check_read(mpi, path); /* (no line end on the last line) */
  write_file("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", path,
             sizeof path);
  check_read(mpi, path);
  /* more ranks than rows: some own none; and no entries at all */
  write_file("one.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3.5\n", path,
             sizeof path);
  check_read(mpi, path);
  write_file("two.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n2 2 1\n1 1 1\n",
             path, sizeof path);
  check_read(mpi, path);
  write_file("empty.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 0\n", path,
             sizeof path);
  check_read(mpi, path);

  /* larger generated files, whose shares split lines anywhere */
  const char *kinds[] = {"real general", "real symmetric", "pattern general", "integer symmetric"};
  for (int k = 0; k < 4; ++k) {
    size_t lines = 0;
    char *text = generated_file(301, kinds[k], strstr(kinds[k], "symmetric") != NULL, 0, &lines);
    char name[64];
    snprintf(name, sizeof name, "generated%d.mtx", k);
    write_file(name, text, path, sizeof path);
    free(text);
    check_read(mpi, path);
  }

  /* a bad line in the middle: its line in the whole file, on every rank
   * (the serial reader's message), wherever it lies */
  const size_t bad_lines[] = {4, 500, 1200, 1800};
  for (size_t b = 0; b < sizeof bad_lines / sizeof *bad_lines; ++b) {
    size_t lines = 0;
    char *text = generated_file(301, "real general", 0, bad_lines[b], &lines);
    CHECK(bad_lines[b] <= lines, "line %zu past the file's %zu", bad_lines[b], lines);
    write_file("bad-line.mtx", text, path, sizeof path);
    free(text);
    char needle[4200];
    snprintf(needle, sizeof needle, "%s:%zu: expected a column index (an integer), found 'x'", path,
             bad_lines[b]);
    check_read_fails(mpi, path, needle);
    check_read_fails(mpi, path, NULL);
  }

  /* the size line's count against the entry lines */
  write_file("fewer.mtx",
             "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n2 2 1\n\n3 3 1\n%\n",
             path, sizeof path);
  check_read_fails(mpi, path, NULL); /* "FILE:7: expected 5 entries, file ended after 3" */
  write_file("more.mtx",
             "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 1\n3 3 1\n", path,
             sizeof path);
  /* a share with more entry lines than the count stops at the line too many
   * ("more.mtx:5: expected 2 entries and then the end of the file"), else
   * the sum speaks ("more.mtx:2: expected 2 entries (the size line), found 3") */
  check_read_fails(mpi, path, "expected 2 entries");
  size_t lines = 0;
  char *text = generated_file(301, "real general", 0, 0, &lines);
  char *size_line = strchr(strchr(text, '\n') + 1, '\n') + 1; /* "301 301 COUNT" */
  char *count_end = strchr(size_line, '\n');
  memcpy(count_end - 2, "00", 2); /* a count that is not the file's */
  write_file("generated-count.mtx", text, path, sizeof path);
  free(text);
  check_read_fails(mpi, path, "generated-count.mtx:");

  /* an index out of range, a bad header, a shape out of proportion */
  write_file("outside.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 1 1\n",
             path, sizeof path);
  check_read_fails(mpi, path, NULL);
  write_file("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
             path, sizeof path);
  check_read_fails(mpi, path, NULL);
  write_file("claims.mtx",
             "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 "
             "2\n1 1 1\n2 2 1\n",
             path, sizeof path);
  check_read_fails(mpi, path, "claims.mtx:2: the size line claims 2147483647 x 2147483647");
  write_file("rectangular.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n",
             path, sizeof path);
  uint64_t first_row = 0;
  clmg_csr got = {0};
  clmg_status status = clmg_mpi_csr_read_matrix_market(mpi, 0, path, &first_row, &got);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT &&
            strstr(clmg_context_message(clmg_mpi_context(mpi)), "must be square"),
        "a 2 x 3 file: %s", clmg_context_message(clmg_mpi_context(mpi)));
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(NULL, &context);
  CHECK_OK(status, context);
  const char *scratch = getenv("CLMG_TEST_TMPDIR");
#ifdef CLMG_TEST_TMPDIR
  if (!scratch)
    scratch = CLMG_TEST_TMPDIR;
#endif
  snprintf(scratch_dir, sizeof scratch_dir, "%s/mpi_read_np%d", scratch ? scratch : "/tmp",
           world_size);
  mkdir(scratch_dir, 0777);
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
  test_read_in_parts(mpi);

  clmg_mpi_destroy(mpi);
  clmg_context_destroy(context);
  if (world_rank == 0)
    printf("test_mpi_read: all checks passed on %d rank%s\n", world_size,
           world_size == 1 ? "" : "s");
  MPI_Finalize();
  return 0;
}
