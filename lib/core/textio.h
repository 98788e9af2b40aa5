/* Helpers shared by the readers and writers of text files (Matrix Market,
 * Gmsh, VTK): numbers in the "C" numeric locale, and closing a written file
 * so that a failed write leaves no truncated file behind. Not installed.
 *
 * Include after defining _POSIX_C_SOURCE 200809L (for locale_t). */
#ifndef CLMG_CORE_TEXTIO_H
#define CLMG_CORE_TEXTIO_H

#include "clmg/core.h"

#include <locale.h>
#include <stdio.h>

/* The "C" numeric locale for the duration of a call, so that strtod and
 * printf use a decimal point whatever locale the application set. */
typedef struct clmg_numeric_locale {
  locale_t c_locale; /* (locale_t)0 when it could not be created */
  locale_t previous;
} clmg_numeric_locale;

/* uselocale changes only the calling thread; without a C locale object the
 * current locale stays (the common case of an application that never set
 * one). Pair every enter with a leave. */
void clmg_enter_c_numeric_locale(clmg_numeric_locale *locale);
void clmg_leave_c_numeric_locale(clmg_numeric_locale *locale);

/* Closes a file being written to path. When writing failed (write_failed,
 * with the errno saved at the failure) or fclose fails, a regular file is
 * removed, so that no truncated file is taken for data later (other paths,
 * such as /dev/full or a FIFO, are left alone), and the error reads
 * "cannot write PATH: REASON". */
clmg_status clmg_finish_text_file(FILE *file, const char *path, int write_failed, int saved_errno,
                                  clmg_error *error);

#endif
