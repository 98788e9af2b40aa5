#define _POSIX_C_SOURCE 200809L
#include "fuzz_common.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char scratch_path[4096];

static void remove_scratch(void) {
  if (scratch_path[0])
    unlink(scratch_path);
}

const char *fuzz_write_input(const uint8_t *data, size_t size, const char *suffix) {
  if (!scratch_path[0]) {
    /* a file in memory (/dev/shm) runs about six times faster than one on disk */
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
      dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(scratch_path, sizeof scratch_path, "%s/clmg-fuzz-%ld%s", dir, (long)getpid(), suffix);
    atexit(remove_scratch);
  }
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
