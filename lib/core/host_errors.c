/* What the host-only functions (CSR, Matrix Market, meshes, finite
 * elements) share: filling a clmg_error, and array allocation that checks
 * the size product. One copy, used by lib/la, lib/mesh, lib/fe and lib/flow. */
#include "core/internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t clmg_utf8_sequence_length(const unsigned char *text, size_t left) {
  unsigned char lead = text[0];
  size_t length = lead < 0x80                    ? 1
                  : lead >= 0xc2 && lead <= 0xdf ? 2
                  : lead >= 0xe0 && lead <= 0xef ? 3
                  : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                 : 0;
  if (length == 0 || length > left)
    return 0;
  unsigned char low = 0x80, high = 0xbf; /* the range of the second byte */
  if (lead == 0xe0)
    low = 0xa0;
  else if (lead == 0xed)
    high = 0x9f;
  else if (lead == 0xf0)
    low = 0x90;
  else if (lead == 0xf4)
    high = 0x8f;
  for (size_t k = 1; k < length; ++k) {
    unsigned char byte = text[k];
    if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xbf))
      return 0;
  }
  return length;
}

void clmg_message_sanitize(char *message, size_t size) {
  if (!message || size == 0)
    return;
  char original[CLMG_MESSAGE_SIZE];
  size_t length = 0; /* strnlen is POSIX, not C11 */
  while (length + 1 < size && length + 1 < sizeof original && message[length] != '\0')
    ++length;
  memcpy(original, message, length);
  const unsigned char *in = (const unsigned char *)original;
  size_t out = 0;
  for (size_t i = 0; i < length;) {
    size_t sequence = clmg_utf8_sequence_length(in + i, length - i);
    int control =
        sequence == 1 && ((in[i] < 0x20 && in[i] != '\n' && in[i] != '\t') || in[i] == 0x7f);
    if (sequence > 0 && !control) {
      if (out + sequence >= size)
        break;
      memcpy(message + out, in + i, sequence);
      out += sequence;
      i += sequence;
    } else {
      if (out + 4 >= size)
        break;
      snprintf(message + out, 5, "\\x%02x", in[i]);
      out += 4;
      i += 1;
    }
  }
  message[out] = '\0';
}

clmg_status clmg_error_set(clmg_error *error, clmg_status status, const char *format, ...) {
  if (error) {
    va_list args;
    va_start(args, format);
    vsnprintf(error->message, sizeof error->message, format, args);
    va_end(args);
    clmg_message_sanitize(error->message, sizeof error->message);
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
