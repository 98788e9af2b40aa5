/* Distributed matrices from rows that stay on the device (ctest runs it
 * with 1, 2 and 4 ranks): clmg_mpi_matrix_create_from_device against
 * clmg_mpi_matrix_create_rectangular on the same rows, square and
 * rectangular, in several formats and both precisions; a failure on one
 * rank reaches every rank with its message. */
#define _POSIX_C_SOURCE 200809L
#include "clmg/fem.h"
#include "clmg/mesh.h"
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
  clmg_mpi_even_rows(mpi, rows, &first_row, &count);
  clmg_mpi_even_rows(mpi, cols, &first_col, &local_cols); /* the columns' own partition */
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
  clmg_mpi_even_rows(mpi, 100, &first, &count);
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

/* A multigrid solve of the finest level's problem on the levels (those with
 * at most coarse_max_rows rows gathered): x back on the host (this rank's
 * rows) and the iterations. */
static double *solve(clmg_mpi *mpi, const clmg_mpi_poisson_levels *levels, size_t coarse_max_rows,
                     int *iterations) {
  clmg_context *context = clmg_mpi_context(mpi);
  clmg_multigrid_options mg;
  clmg_multigrid_options_defaults(&mg);
  mg.coarse_max_rows = coarse_max_rows;
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = 1e-8;
  clmg_multigrid *multigrid = NULL;
  CHECK_OK(clmg_mpi_multigrid_create(mpi, levels->num_levels, levels->levels, &mg, &multigrid),
           context);
  const size_t mine = levels->levels[levels->num_levels - 1].a.rows;
  clmg_vector *b = NULL, *x = NULL;
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, mine, &b), context);
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, mine, &x), context);
  if (mine > 0) {
    CHECK_OK(clmg_vector_upload_doubles(b, levels->b), context);
    CHECK_OK(clmg_vector_upload_doubles(x, levels->x0), context);
  }
  clmg_krylov_result result;
  CHECK_OK(clmg_multigrid_solve(multigrid, b, x, &krylov, &result), context);
  *iterations = result.iterations;
  double *host = malloc((mine + 1) * sizeof *host);
  CHECK(host, "no memory");
  if (mine > 0)
    CHECK_OK(clmg_vector_download_doubles(x, host), context);
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(multigrid);
  return host;
}

/* Whether rows (host, or where its arrays are NULL, device, downloaded) are
 * expected's entry by entry, shape included. */
static int same_rows(const clmg_csr *expected, const clmg_csr *host,
                     const clmg_csr_device *device) {
  clmg_csr copy = {0};
  clmg_error error;
  if (!host->row_ptr) {
    CHECK(clmg_csr_device_download(device, &copy, &error) == CLMG_SUCCESS, "%s", error.message);
    CHECK(copy.rows == host->rows && copy.cols == host->cols, "the shape differs from the rows");
  }
  const clmg_csr *rows = host->row_ptr ? host : &copy;
  const size_t nnz = clmg_csr_nnz(expected);
  const int same =
      rows->rows == expected->rows && rows->cols == expected->cols &&
      memcmp(rows->row_ptr, expected->row_ptr, (rows->rows + 1) * sizeof *rows->row_ptr) == 0 &&
      memcmp(rows->col, expected->col, nnz * sizeof *rows->col) == 0 &&
      memcmp(rows->val, expected->val, nnz * sizeof *rows->val) == 0;
  clmg_csr_free(&copy);
  return same;
}

/* The finest rows of A and every level's P and R kept on the device
 * (device_rows) equal the host path's entry by entry, and a solve on them
 * is the host levels' bit for bit: CIRCLE and a 3D box, Q1 and Q2, pieces
 * built on the device; once with the small levels gathered onto every rank
 * (their P and R downloaded for it). */
static void test_poisson_device_rows(clmg_mpi *mpi) {
  clmg_context *context = clmg_mpi_context(mpi);
  if (!clmg_context_device(context)->has_fp64)
    return; /* no device-built pieces without fp64: nothing is kept there */
  const struct {
    int dim, degree, finest;
    size_t cells_per_process;
  } cases[] = {{2, 1, 4, 1}, {2, 2, 3, 8}, {3, 1, 2, 1}, {3, 2, 1, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    clmg_mesh coarse;
    clmg_error error;
    clmg_poisson_problem problem;
    if (cases[k].dim == 2) {
      CHECK(clmg_mesh_circle(&coarse, &error) == CLMG_SUCCESS, "%s", error.message);
      clmg_poisson_problem_circle(&problem);
    } else {
      CHECK(clmg_mesh_box(3, 4, 0.1, 7, &coarse, &error) == CLMG_SUCCESS, "%s", error.message);
      clmg_poisson_problem_unit_source(&problem);
    }
    clmg_mpi_poisson_options options;
    clmg_mpi_poisson_options_defaults(&options);
    options.degree = cases[k].degree;
    options.cells_per_process = cases[k].cells_per_process;
    clmg_mpi_poisson_levels host, device;
    CHECK_OK(
        clmg_mpi_poisson_levels_create(mpi, &coarse, cases[k].finest, &problem, &options, &host),
        context);
    options.device_rows = 1;
    CHECK_OK(
        clmg_mpi_poisson_levels_create(mpi, &coarse, cases[k].finest, &problem, &options, &device),
        context);
    const int top = cases[k].finest;
    CHECK(device.piece_on_device && device.partition_level < top, "case %zu: no device piece", k);
    const clmg_csr *expected = &host.levels[top].a;
    const clmg_mpi_level_rows *kept = &device.levels[top];
    CHECK(kept->a.row_ptr == NULL && kept->a_device.row_ptr != NULL,
          "case %zu: the finest rows are not (only) on the device", k);
    CHECK(kept->first_row == host.levels[top].first_row && kept->a.rows == expected->rows &&
              kept->a.cols == expected->cols,
          "case %zu: rows %zu x %zu from %llu, expected %zu x %zu from %llu", k, kept->a.rows,
          kept->a.cols, (unsigned long long)kept->first_row, expected->rows, expected->cols,
          (unsigned long long)host.levels[top].first_row);
    CHECK(same_rows(expected, &kept->a, &kept->a_device),
          "case %zu: the device's finest rows differ from the host's", k);
    for (int l = 0; l < top; ++l) /* the other levels' A: the host path's, on the host */
      CHECK(device.levels[l].a.row_ptr &&
                same_rows(&host.levels[l].a, &device.levels[l].a, &device.levels[l].a_device),
            "case %zu: level %d's A differs", k, l);
    for (int l = 1; l <= top; ++l) { /* P and R: on the device above the partition level */
      const clmg_mpi_level_rows *d = &device.levels[l], *h = &host.levels[l];
      const int kept_there = l > device.partition_level;
      CHECK((d->p.row_ptr == NULL) == kept_there && (d->r.row_ptr == NULL) == kept_there &&
                (d->p_device.row_ptr != NULL) == kept_there &&
                (d->r_device.row_ptr != NULL) == kept_there,
            "case %zu: level %d's P and R are %son the device", k, l, kept_there ? "not " : "");
      CHECK(same_rows(&h->p, &d->p, &d->p_device), "case %zu: level %d's P differs", k, l);
      CHECK(same_rows(&h->r, &d->r, &d->r_device), "case %zu: level %d's R differs", k, l);
    }
    int host_iterations = 0, device_iterations = 0;
    /* case 0 gathers the levels up to the one above the partition level (the
     * same bound on every rank: that level's rows over all ranks) */
    unsigned long long gather = 0;
    if (k == 0) {
      const int above = host.partition_level + 1;
      CHECK(above < top, "case 0: no piece level to gather below the finest");
      gather = host.levels[above].a.rows;
      MPI_Allreduce(MPI_IN_PLACE, &gather, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    double *xh = solve(mpi, &host, (size_t)gather, &host_iterations),
           *xd = solve(mpi, &device, (size_t)gather, &device_iterations);
    CHECK(host_iterations == device_iterations && memcmp(xh, xd, expected->rows * sizeof *xh) == 0,
          "case %zu: the solves differ (%d and %d iterations)", k, host_iterations,
          device_iterations);
    free(xh);
    free(xd);
    clmg_mpi_poisson_levels_free(&host);
    clmg_mpi_poisson_levels_free(&device);
    clmg_mesh_free(&coarse);
  }
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
  test_poisson_device_rows(mpi);
  clmg_mpi_destroy(mpi);
  clmg_context_destroy(context);
  if (world_rank == 0)
    printf("test_mpi_device: all checks passed on %d rank%s\n", world_size,
           world_size == 1 ? "" : "s");
  MPI_Finalize();
  return 0;
}
