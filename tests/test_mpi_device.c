/* Distributed matrices from rows that stay on the device (ctest runs it
 * with 1, 2 and 4 ranks): clmg_mpi_matrix_create_from_device against
 * clmg_mpi_matrix_create_rectangular on the same rows, square and
 * rectangular, in several formats and both precisions; a failure on one
 * rank reaches every rank with its message. */
#define _POSIX_C_SOURCE 200809L
#include "clmg/mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_mpi_util.h"

static uint64_t rng_state;
static uint64_t rng_next(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return rng_state >> 33;
}

/* The block a rank owns of an even partition of `total` over the ranks. */
static void block_of(uint64_t total, int rank, uint64_t *first, uint64_t *count) {
  uint64_t next = 0;
  for (int r = 0; r < world_size; ++r) {
    uint64_t n = total / (uint64_t)world_size + ((uint64_t)r < total % (uint64_t)world_size);
    if (r == rank) {
      *first = next;
      *count = n;
    }
    next += n;
  }
}

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* `rows` random rows of `cols` columns: about `per_row` sorted unique
 * columns each, most near the diagonal of the column partition, some
 * anywhere; a few rows empty. */
static clmg_csr random_rows(size_t rows, uint64_t first_col_near, size_t cols, size_t per_row) {
  clmg_csr a = {rows, cols, calloc(rows + 1, sizeof(int64_t)), NULL, NULL};
  a.col = malloc((rows * per_row + 1) * sizeof *a.col);
  a.val = malloc((rows * per_row + 1) * sizeof *a.val);
  CHECK(a.row_ptr && a.col && a.val, "no memory");
  int64_t at = 0;
  for (size_t i = 0; i < rows; ++i) {
    const int64_t begin = at;
    const size_t n = rng_next() % 11 == 0 ? 0 : 1 + rng_next() % per_row;
    for (size_t k = 0; k < n; ++k) {
      uint64_t c = rng_next() % 4 == 0 ? rng_next() % cols
                                       : (first_col_near + i + rng_next() % 7 + cols - 3) % cols;
      a.col[at++] = (int32_t)c;
    }
    qsort(a.col + begin, (size_t)(at - begin), sizeof *a.col, compare_int32);
    int64_t kept = begin;
    for (int64_t k = begin; k < at; ++k)
      if (k == begin || a.col[k] != a.col[kept - 1])
        a.col[kept++] = a.col[k];
    at = kept;
    for (int64_t k = begin; k < at; ++k)
      a.val[k] = (double)(rng_next() % 2001) / 1000.0 - 1.0;
    a.row_ptr[i + 1] = at;
  }
  return a;
}

/* y = A x for x's entry j = f(global j): the same x on every call. The
 * result comes back as doubles (local rows). */
static double *product(clmg_mpi *mpi, clmg_mpi_matrix *m, clmg_dtype precision) {
  clmg_context *context = clmg_mpi_context(mpi);
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(m, &info);
  double *x = malloc((info.local_cols + 1) * sizeof *x);
  double *y = malloc((info.local_rows + 1) * sizeof *y);
  CHECK(x && y, "no memory");
  for (size_t j = 0; j < info.local_cols; ++j)
    x[j] = 1.0 / (double)(info.first_col + j + 3) - 0.25 * (double)((info.first_col + j) % 5);
  clmg_operator op;
  clmg_vector *dx = NULL, *dy = NULL;
  CHECK_OK(clmg_mpi_matrix_operator(m, 0, &op), context);
  CHECK_OK(clmg_vector_create(context, precision, info.local_cols, &dx), context);
  CHECK_OK(clmg_vector_create(context, precision, info.local_rows, &dy), context);
  if (info.local_cols > 0)
    CHECK_OK(clmg_vector_upload_doubles(dx, x), context);
  CHECK_OK(clmg_operator_apply(&op, 1.0, dx, 0.0, dy), context);
  if (info.local_rows > 0)
    CHECK_OK(clmg_vector_download_doubles(dy, y), context);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(dx);
  clmg_vector_destroy(dy);
  free(x);
  return y;
}

/* Both constructors on the same random rows (global rows `rows`, global
 * columns `cols`): the same blocks, halo and products, bit for bit. */
static void compare_constructors(clmg_mpi *mpi, uint64_t rows, uint64_t cols, size_t per_row,
                                 clmg_matrix_format format, clmg_dtype precision) {
  clmg_context *context = clmg_mpi_context(mpi);
  uint64_t first_row = 0, count = 0, first_col = 0, local_cols = 0;
  block_of(rows, world_rank, &first_row, &count);
  block_of(cols, world_rank, &first_col, &local_cols); /* the columns' own partition */
  rng_state = 12345 + 977 * (uint64_t)world_rank + rows;
  clmg_csr a = random_rows((size_t)count, first_col, (size_t)cols, per_row);
  clmg_csr_device d = {0};
  CHECK_OK(clmg_csr_device_upload(context, &a, CLMG_DOUBLE, &d), context);
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.format = format;
  options.precision = precision;
  clmg_mpi_matrix *host = NULL, *device = NULL;
  CHECK_OK(clmg_mpi_matrix_create_rectangular(mpi, first_row, &a, first_col, (size_t)local_cols,
                                              &options, &host),
           context);
  CHECK_OK(clmg_mpi_matrix_create_from_device(mpi, first_row, &d, first_col, (size_t)local_cols,
                                              &options, &device),
           context);
  clmg_mpi_matrix_info hi, di;
  clmg_mpi_matrix_get_info(host, &hi);
  clmg_mpi_matrix_get_info(device, &di);
  CHECK(memcmp(&hi, &di, sizeof hi) == 0,
        "the matrices differ: rows %llu/%llu, nonzeros %llu/%llu, ghosts %zu/%zu, sends %zu/%zu",
        (unsigned long long)hi.global_rows, (unsigned long long)di.global_rows,
        (unsigned long long)hi.global_nonzeros, (unsigned long long)di.global_nonzeros, hi.ghosts,
        di.ghosts, hi.sends, di.sends);
  double *yh = product(mpi, host, precision), *yd = product(mpi, device, precision);
  CHECK(count == 0 || memcmp(yh, yd, (size_t)count * sizeof *yh) == 0,
        "the products differ (format %s, %s)", clmg_matrix_format_name(format),
        clmg_dtype_name(precision));
  free(yh);
  free(yd);
  clmg_mpi_matrix_destroy(host);
  clmg_mpi_matrix_destroy(device);
  clmg_csr_device_free(&d);
  clmg_csr_free(&a);
}

static void test_matrix_from_device(clmg_mpi *mpi) {
  const clmg_matrix_format formats[] = {CLMG_FORMAT_AUTO, CLMG_FORMAT_CSR, CLMG_FORMAT_SELL};
  for (size_t f = 0; f < sizeof formats / sizeof *formats; ++f) {
    compare_constructors(mpi, 700, 700, 9, formats[f], CLMG_DOUBLE);
    compare_constructors(mpi, 300, 1100, 6, formats[f], CLMG_DOUBLE);
  }
  compare_constructors(mpi, 700, 700, 9, CLMG_FORMAT_AUTO, CLMG_FLOAT);
  compare_constructors(mpi, (uint64_t)world_size * 3, 5, 3, CLMG_FORMAT_AUTO, CLMG_DOUBLE);
}

/* The last rank's rows are not CSR arrays (float columns): every rank
 * returns its status and message. */
static void test_failure_agreed(clmg_mpi *mpi) {
  clmg_context *context = clmg_mpi_context(mpi);
  uint64_t first = 0, count = 0;
  block_of(100, world_rank, &first, &count);
  rng_state = 99 + (uint64_t)world_rank;
  clmg_csr a = random_rows((size_t)count, first, 100, 4);
  clmg_csr_device d = {0};
  CHECK_OK(clmg_csr_device_upload(context, &a, CLMG_DOUBLE, &d), context);
  const int failing = world_size - 1;
  if (world_rank == failing) { /* columns of the wrong type */
    clmg_vector_destroy(d.col);
    d.col = NULL;
    CHECK_OK(clmg_vector_create(context, CLMG_FLOAT, clmg_csr_nnz(&a), &d.col), context);
  }
  clmg_mpi_matrix *m = NULL;
  clmg_status status =
      clmg_mpi_matrix_create_from_device(mpi, first, &d, first, (size_t)count, NULL, &m);
  char prefix[32];
  snprintf(prefix, sizeof prefix, "rank %d: ", failing);
  const char *message = clmg_context_message(context);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT && m == NULL, "status %s (%s)",
        clmg_status_string(status), message);
  CHECK(strncmp(message, prefix, strlen(prefix)) == 0 && strstr(message, "not CSR arrays"),
        "the message '%s' is not rank %d's", message, failing);
  clmg_csr_device_free(&d);
  clmg_csr_free(&a);
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(NULL, &context);
  CHECK_OK(status, context);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  test_matrix_from_device(mpi);
  test_failure_agreed(mpi);
  clmg_mpi_destroy(mpi);
  clmg_context_destroy(context);
  if (world_rank == 0)
    printf("test_mpi_device: all checks passed on %d rank%s\n", world_size,
           world_size == 1 ? "" : "s");
  MPI_Finalize();
  return 0;
}
