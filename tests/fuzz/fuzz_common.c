#define _POSIX_C_SOURCE 200809L
#include "fuzz_common.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char scratch_path[4096], output_path[4096];

static void remove_scratch(void) {
  if (scratch_path[0])
    unlink(scratch_path);
  if (output_path[0])
    unlink(output_path);
}

/* Makes path (once) in $TMPDIR, else /dev/shm or /tmp. */
static void make_path(char path[4096], const char *name, const char *suffix) {
  static int registered;
  if (path[0])
    return;
  /* a file in memory (/dev/shm) runs about six times faster than one on disk */
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(path, 4096, "%s/clmg-fuzz-%ld%s%s", dir, (long)getpid(), name, suffix);
  if (!registered)
    atexit(remove_scratch);
  registered = 1;
}

const char *fuzz_output_path(const char *suffix) {
  make_path(output_path, "-out", suffix);
  return output_path;
}

const char *fuzz_write_input(const uint8_t *data, size_t size, const char *suffix) {
  make_path(scratch_path, "", suffix);
  FILE *file = fopen(scratch_path, "wb");
  if (!file)
    return NULL;
  int failed = size > 0 && fwrite(data, 1, size, file) != size;
  failed |= fclose(file) != 0;
  return failed ? NULL : scratch_path;
}

void fuzz_fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz check failed: %s: %s\n", what, detail ? detail : "");
  abort();
}

void fuzz_check_message_is_empty(const char *message) {
  if (memchr(message, '\0', 1024) == NULL)
    fuzz_fail("a message is not NUL-terminated", "");
}

void fuzz_check_message(const char *message) {
  const char *end = memchr(message, '\0', 1024);
  if (!end)
    fuzz_fail("a message is not NUL-terminated", "");
  if (end == message)
    fuzz_fail("a refusal without a message", "");
  for (const unsigned char *p = (const unsigned char *)message; *p; ++p)
    if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || *p >= 0xf8)
      fuzz_fail("a message holds a control byte", message);
}
