/* Helpers shared by the readers and writers of text files (Matrix Market,
 * Gmsh, VTK): numbers in the "C" numeric locale. (Writing a file safely is
 * clmg/output_file.h's.) Not installed.
 *
 * Include after defining _POSIX_C_SOURCE 200809L (for locale_t). */
#ifndef CLMG_CORE_TEXTIO_H
#define CLMG_CORE_TEXTIO_H

#include "clmg/core.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>

/* A reader's error "PATH:LINE: MESSAGE" into error (may be NULL), the
 * file's contents in it made printable (clmg_message_sanitize). */
void clmg_error_vset_at(clmg_error *error, const char *path, long line, const char *format,
                        va_list args);

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

#endif
