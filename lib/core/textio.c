/* Helpers of the text file formats: see textio.h. */
#define _POSIX_C_SOURCE 200809L /* newlocale/uselocale */

#include "core/textio.h"

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
