/* What the host-only functions (CSR, Matrix Market, meshes, finite
 * elements) share: filling a clmg_error, and array allocation that checks
 * the size product. One copy, used by lib/la and lib/fem. */
#include "core/internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

clmg_status clmg_error_set(clmg_error *error, clmg_status status, const char *format, ...) {
  if (error) {
    va_list args;
    va_start(args, format);
    vsnprintf(error->message, sizeof error->message, format, args);
    va_end(args);
  }
  return status;
}

void clmg_error_clear(clmg_error *error) {
  if (error)
    error->message[0] = '\0';
}

void *clmg_alloc_array(size_t count, size_t size) {
  if (count == 0)
    count = 1;
  if (count > SIZE_MAX / size)
    return NULL;
  return malloc(count * size);
}

void *clmg_alloc_zeroed_array(size_t count, size_t size) {
  if (count == 0)
    count = 1;
  return calloc(count, size);
}
