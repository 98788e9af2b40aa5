/* Fuzz target: the Matrix Market readers (matrix and vector) on any bytes.
 * Built with libFuzzer when CLMG_FUZZ is on (tests/fuzz/CMakeLists.txt),
 * and with replay.c into a program that ctest runs over the seed corpus and
 * the regression files in the ordinary build. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_input(data, size, ".mtx");
  if (!path)
    return 0;
  clmg_error error;
  clmg_csr matrix;
  if (clmg_csr_read_matrix_market(path, &matrix, &error) == CLMG_SUCCESS) {
    fuzz_check_message_is_empty(error.message);
    clmg_csr_free(&matrix);
  } else {
    fuzz_check_message(error.message);
  }
  double *values = NULL;
  size_t n = 0;
  if (clmg_read_matrix_market_vector(path, &values, &n, &error) == CLMG_SUCCESS)
    free(values);
  else
    fuzz_check_message(error.message);
  return 0;
}
