/* What the fuzz targets share: the input written to a scratch file (the
 * readers take paths), and checks that a refusal carries a printable
 * message. A failed check aborts, which libFuzzer and the replay report. */
#ifndef CLMG_FUZZ_COMMON_H
#define CLMG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "clmg.h"

/* Writes data to this process's scratch file (made on the first call in
 * $TMPDIR, else /dev/shm or /tmp; removed at exit) and returns its path; NULL when the
 * file cannot be written (the input is then skipped). */
const char *fuzz_write_input(const uint8_t *data, size_t size, const char *suffix);

/* A second scratch path next to the input's (removed at exit), for what a
 * target writes itself, e.g. to read it back. */
const char *fuzz_output_path(const char *suffix);

/* Aborts unless message is a non-empty, NUL-terminated, printable UTF-8
 * string without control bytes other than newline and tab. */
void fuzz_check_message(const char *message);
void fuzz_check_message_is_empty(const char *message);
void fuzz_fail(const char *what, const char *detail);

#endif
