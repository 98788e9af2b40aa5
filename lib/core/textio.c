/* Helpers of the text file formats: see textio.h. */
#define _POSIX_C_SOURCE 200809L /* newlocale/uselocale, fileno */

#include "core/textio.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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

clmg_status clmg_finish_text_file(FILE *file, const char *path, int write_failed, int saved_errno,
                                  clmg_error *error) {
  struct stat info;
  int regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
  if (fclose(file) != 0 && !write_failed) {
    write_failed = 1;
    saved_errno = errno;
  }
  if (!write_failed)
    return CLMG_SUCCESS;
  if (regular)
    remove(path);
  if (error)
    snprintf(error->message, sizeof error->message, "cannot write %s: %s", path,
             strerror(saved_errno));
  return CLMG_ERROR_IO;
}
