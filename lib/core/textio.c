/* Helpers of the text file formats: see textio.h. */
#define _POSIX_C_SOURCE 200809L /* newlocale/uselocale */

#include "core/textio.h"
#include "core/internal.h"

void clmg_error_vset_at(clmg_error *error, const char *path, long line, const char *format,
                        va_list args) {
  if (!error)
    return;
  char *message = error->message;
  size_t size = sizeof error->message;
  int prefix = snprintf(message, size, "%s:%ld: ", path, line);
  if (prefix >= 0 && (size_t)prefix < size)
    vsnprintf(message + prefix, size - (size_t)prefix, format, args);
  clmg_message_sanitize(message, size);
}

void clmg_enter_c_numeric_locale(clmg_numeric_locale *locale) {
  locale->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale->previous = locale->c_locale ? uselocale(locale->c_locale) : (locale_t)0;
}

void clmg_leave_c_numeric_locale(clmg_numeric_locale *locale) {
  if (locale->c_locale) {
    uselocale(locale->previous);
    freelocale(locale->c_locale);
  }
}
