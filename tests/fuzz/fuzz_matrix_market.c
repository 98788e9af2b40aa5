/* Fuzz target: the Matrix Market readers (matrix and vector) on any bytes,
 * the same bytes read both ways. What a reader accepts must be well formed
 * (CSR invariants, a vector of the length it says) and must survive being
 * written and read back bit for bit; what it refuses carries a printable
 * message. Built with libFuzzer when CLMG_FUZZ is on
 * (tests/fuzz/CMakeLists.txt), and with replay.c into a program that ctest
 * runs over the seed corpus and the regression files in the ordinary build. */
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bitwise equal, or both NaN (a NaN's payload and sign need not survive
 * printf/strtod). */
static int same_value(double a, double b) {
  return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0;
}

/* The invariants sparse.h promises of every clmg_csr, checked here rather
 * than by the library's own check (an independent oracle). */
static void check_csr(const clmg_csr *a) {
  char why[160];
  if (a->rows > INT32_MAX || a->cols > INT32_MAX)
    fuzz_fail("an accepted matrix exceeds the 32-bit index limit", "");
  if (!a->row_ptr)
    fuzz_fail("an accepted matrix has no row_ptr", "");
  if (a->row_ptr[0] != 0)
    fuzz_fail("row_ptr[0] is not 0", "");
  for (size_t i = 0; i < a->rows; i++) {
    if (a->row_ptr[i + 1] < a->row_ptr[i]) {
      snprintf(why, sizeof why, "row %zu", i);
      fuzz_fail("row_ptr decreases", why);
    }
    if ((uint64_t)(a->row_ptr[i + 1] - a->row_ptr[i]) > a->cols) {
      snprintf(why, sizeof why, "row %zu", i);
      fuzz_fail("a row holds more entries than there are columns", why);
    }
  }
  if (clmg_csr_nnz(a) > 0 && (!a->col || !a->val))
    fuzz_fail("an accepted matrix with entries has no col or val", "");
  for (size_t i = 0; i < a->rows; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      if (a->col[k] < 0 || (size_t)a->col[k] >= a->cols) {
        snprintf(why, sizeof why, "row %zu, column %d of %zu", i, (int)a->col[k], a->cols);
        fuzz_fail("a column index is out of range", why);
      }
      if (k > a->row_ptr[i] && a->col[k] <= a->col[k - 1]) {
        snprintf(why, sizeof why, "row %zu", i);
        fuzz_fail("columns are not sorted and unique", why);
      }
    }
}

/* An accepted matrix, written and read back, is the same matrix. */
static void check_matrix_round_trip(const clmg_csr *a) {
  const char *path = fuzz_output_path(".mtx");
  clmg_error error;
  if (clmg_csr_write_matrix_market(path, a, &error) != CLMG_SUCCESS) {
    fuzz_check_message(error.message);
    return; /* a full /dev/shm, say: not the reader's fault */
  }
  clmg_csr b;
  if (clmg_csr_read_matrix_market(path, &b, &error) != CLMG_SUCCESS)
    fuzz_fail("clmg refuses a matrix it wrote itself", error.message);
  int same = a->rows == b.rows && a->cols == b.cols && clmg_csr_nnz(a) == clmg_csr_nnz(&b) &&
             memcmp(a->row_ptr, b.row_ptr, (a->rows + 1) * sizeof *a->row_ptr) == 0;
  for (size_t k = 0; same && k < clmg_csr_nnz(a); k++)
    same = a->col[k] == b.col[k] && same_value(a->val[k], b.val[k]);
  clmg_csr_free(&b);
  if (!same)
    fuzz_fail("a matrix written and read back differs", "");
}

static void check_vector_round_trip(const double *values, size_t n) {
  const char *path = fuzz_output_path(".mtx");
  clmg_error error;
  if (clmg_write_matrix_market_vector(path, values, n, &error) != CLMG_SUCCESS) {
    fuzz_check_message(error.message);
    return;
  }
  double *back = NULL;
  size_t length = 0;
  if (clmg_read_matrix_market_vector(path, &back, &length, &error) != CLMG_SUCCESS)
    fuzz_fail("clmg refuses a vector it wrote itself", error.message);
  int same = length == n && back != NULL;
  for (size_t i = 0; same && i < n; i++)
    same = same_value(values[i], back[i]);
  free(back);
  if (!same)
    fuzz_fail("a vector written and read back differs", "");
}

/* The round trips write and read a line per entry: a few bytes may claim a
 * vector of a million zeros (822202 x 1 took 11 s under ASan), so only
 * results up to this size go round. */
enum { MAX_ROUND_TRIP = 1 << 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_input(data, size, ".mtx");
  if (!path)
    return 0;
  clmg_error error;
  clmg_csr matrix;
  if (clmg_csr_read_matrix_market(path, &matrix, &error) == CLMG_SUCCESS) {
    fuzz_check_message_is_empty(error.message);
    check_csr(&matrix);
    if (clmg_csr_nnz(&matrix) <= MAX_ROUND_TRIP) /* the rows cost no lines */
      check_matrix_round_trip(&matrix);
    clmg_csr_free(&matrix);
  } else {
    fuzz_check_message(error.message);
    if (matrix.rows || matrix.cols || matrix.row_ptr || matrix.col || matrix.val)
      fuzz_fail("a refused matrix is not left empty", error.message);
  }

  double *values = NULL;
  size_t n = 0;
  if (clmg_read_matrix_market_vector(path, &values, &n, &error) == CLMG_SUCCESS) {
    fuzz_check_message_is_empty(error.message);
    if (!values)
      fuzz_fail("an accepted vector has no values array", "");
    if (n <= MAX_ROUND_TRIP)
      check_vector_round_trip(values, n);
    free(values);
  } else {
    fuzz_check_message(error.message);
    if (values || n)
      fuzz_fail("a refused vector is not left empty", error.message);
  }
  return 0;
}
