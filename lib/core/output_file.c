/* Output files written under a temporary name and renamed into place: see
 * include/clmg/output_file.h. The one implementation of the idea; every
 * writer in the library, the apps and the benchmarks uses it. */
#define _XOPEN_SOURCE 700 /* realpath, faccessat, fchmod, lstat */

#include "clmg/output_file.h"
#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct clmg_output_file {
  FILE *stream;
  char *path;      /* as the caller gave it, for messages */
  char *target;    /* what the temporary is renamed to (a symbolic link resolved) */
  char *temporary; /* NULL: the path is written directly */
  int slot;        /* its place in the registry below, -1 for none */
};

/* The temporaries being written, for clmg_output_file_remove_temporaries
 * (a signal handler's call, so plain arrays: no allocation, no lock
 * there). A slot is taken under the lock once the temporary exists and
 * given back before it is renamed or removed. */
enum { TEMPORARY_SLOTS = 64, TEMPORARY_PATH = 4096 };
static char registry_path[TEMPORARY_SLOTS][TEMPORARY_PATH];
static volatile sig_atomic_t registry_used[TEMPORARY_SLOTS];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static int register_temporary(const char *name) {
  size_t length = strlen(name);
  if (length >= TEMPORARY_PATH)
    return -1;
  int slot = -1;
  pthread_mutex_lock(&registry_lock);
  for (int k = 0; k < TEMPORARY_SLOTS && slot < 0; ++k)
    if (!registry_used[k])
      slot = k;
  if (slot >= 0) {
    memcpy(registry_path[slot], name, length + 1);
    registry_used[slot] = 1;
  }
  pthread_mutex_unlock(&registry_lock);
  return slot;
}

static void unregister_temporary(int slot) {
  if (slot < 0)
    return;
  pthread_mutex_lock(&registry_lock);
  registry_used[slot] = 0;
  pthread_mutex_unlock(&registry_lock);
}

void clmg_output_file_remove_temporaries(void) {
  for (int k = 0; k < TEMPORARY_SLOTS; ++k)
    if (registry_used[k])
      unlink(registry_path[k]);
}

static char *copy_string(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = malloc(size);
  if (copy)
    memcpy(copy, text, size);
  return copy;
}

static void release(clmg_output_file *file) {
  unregister_temporary(file->slot);
  free(file->path);
  free(file->target);
  free(file->temporary);
  free(file);
}

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* Creates a new temporary beside target: TARGET.PID.XXXXXX.tmp, or
 * DIR/.clmg.PID.XXXXXX.tmp when the target's name leaves no room for the
 * suffix. O_EXCL with fresh names, like mkstemp, but with mode 0666 so that
 * the umask applies as for fopen (mkstemp's 0600 would need the umask,
 * which cannot be read without changing it, for every thread). Returns the
 * descriptor and *name (malloc'ed), or -1 with errno set. */
static int create_temporary(const char *target, const void *salt, char **name) {
  const char *slash = strrchr(target, '/');
  size_t dir_length = slash ? (size_t)(slash - target) + 1 : 0;
  size_t size = strlen(target) + 64;
  char *buffer = malloc(size);
  if (!buffer) {
    errno = ENOMEM;
    return -1;
  }
  struct timespec now = {0, 0};
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t state = mix((uint64_t)getpid() ^ (uint64_t)(uintptr_t)salt) ^
                   mix((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
  int short_name = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    char suffix[7];
    uint64_t bits = mix(state + (uint64_t)attempt);
    for (int k = 0; k < 6; ++k, bits /= 36)
      suffix[k] = letters[bits % 36];
    suffix[6] = '\0';
    if (short_name)
      snprintf(buffer, size, "%.*s.clmg.%ld.%s.tmp", (int)dir_length, target, (long)getpid(),
               suffix);
    else
      snprintf(buffer, size, "%s.%ld.%s.tmp", target, (long)getpid(), suffix);
    int fd = open(buffer, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd >= 0) {
      *name = buffer;
      return fd;
    }
    if (errno == ENAMETOOLONG && !short_name)
      short_name = 1;
    else if (errno != EEXIST)
      break;
  }
  int saved = errno;
  free(buffer);
  errno = saved;
  return -1;
}

static clmg_status open_failed(clmg_output_file *file, const char *path, int reason,
                               clmg_error *error) {
  release(file);
  return clmg_error_set(error, CLMG_ERROR_IO, "cannot open %s for writing: %s", path,
                        strerror(reason));
}

clmg_status clmg_output_file_open(const char *path, const char *mode, clmg_output_file **file,
                                  FILE **stream, clmg_error *error) {
  clmg_error_clear(error);
  if (file)
    *file = NULL;
  if (stream)
    *stream = NULL;
  if (!path || !mode || !file || !stream)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "open output file: path, mode, file or stream is NULL");
  if (strcmp(mode, "w") != 0 && strcmp(mode, "wb") != 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "open output file %s: mode \"%s\" is not \"w\" or \"wb\"", path, mode);
  clmg_output_file *out = calloc(1, sizeof *out);
  if (out)
    out->slot = -1;
  if (!out || !(out->path = copy_string(path))) {
    free(out);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot open %s for writing: out of host memory", path);
  }

  /* Only a regular file (or none yet) can be replaced by a rename; other
   * paths (devices, FIFOs, a dangling symbolic link) are written directly.
   * A directory is left to fopen, which refuses it with EISDIR. */
  struct stat info, link_info;
  int exists = stat(path, &info) == 0;
  int direct = exists ? !S_ISREG(info.st_mode) : lstat(path, &link_info) == 0;
  if (direct) {
    out->stream = fopen(path, mode);
    if (!out->stream)
      return open_failed(out, path, errno, error);
    *file = out;
    *stream = out->stream;
    return CLMG_SUCCESS;
  }

  if (exists) {
    /* fopen would refuse a file we may not write (read-only, or on a
     * read-only file system); a rename would not ask, so ask here. */
    if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
      return open_failed(out, path, errno, error);
    /* Through a symbolic link the file it names is replaced, not the link. */
    if (lstat(path, &link_info) == 0 && S_ISLNK(link_info.st_mode)) {
      out->target = realpath(path, NULL);
      if (!out->target)
        return open_failed(out, path, errno, error);
    }
  }
  if (!out->target && !(out->target = copy_string(path)))
    return open_failed(out, path, ENOMEM, error);
  int fd = create_temporary(out->target, out, &out->temporary);
  if (fd < 0)
    return open_failed(out, path, errno, error);
  out->slot = register_temporary(out->temporary);
  /* The replaced file's permissions, as fopen would have kept them; best
   * effort (a set-group-ID bit may not be ours to set). */
  if (exists)
    (void)fchmod(fd, info.st_mode & 07777);
  out->stream = fdopen(fd, mode);
  if (!out->stream) {
    int reason = errno;
    close(fd);
    remove(out->temporary);
    return open_failed(out, path, reason, error);
  }
  *file = out;
  *stream = out->stream;
  return CLMG_SUCCESS;
}

clmg_status clmg_output_file_commit(clmg_output_file *file, clmg_error *error) {
  int pending = errno; /* the reason of an earlier failed write, if any */
  clmg_error_clear(error);
  if (!file)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "commit output file: file is NULL");
  int failed = 0, reason = 0;
  /* A flush that fails says why afresh; a stream whose error flag an
   * earlier write set (its buffer since emptied) has only errno. */
  if (fflush(file->stream) != 0) {
    failed = 1;
    reason = errno;
  } else if (ferror(file->stream)) {
    failed = 1;
    reason = pending ? pending : EIO;
  }
  if (fclose(file->stream) != 0 && !failed) {
    failed = 1;
    reason = errno;
  }
  unregister_temporary(file->slot); /* it is renamed or removed next */
  file->slot = -1;
  if (!failed && file->temporary && rename(file->temporary, file->target) != 0) {
    failed = 1;
    reason = errno;
  }
  if (failed && file->temporary)
    remove(file->temporary);
  clmg_status status = failed ? clmg_error_set(error, CLMG_ERROR_IO, "cannot write %s: %s",
                                               file->path, strerror(reason))
                              : CLMG_SUCCESS;
  release(file);
  return status;
}

void clmg_output_file_discard(clmg_output_file *file) {
  if (!file)
    return;
  int saved = errno;
  fclose(file->stream);
  unregister_temporary(file->slot);
  file->slot = -1;
  if (file->temporary)
    remove(file->temporary);
  release(file);
  errno = saved;
}

void clmg_output_xml_text(FILE *out, const char *text) {
  if (!out || !text)
    return;
  const unsigned char *s = (const unsigned char *)text;
  for (size_t left = strlen(text); left > 0;) {
    size_t n = clmg_utf8_sequence_length(s, left);
    if (n == 0) {
      fputs("\xEF\xBF\xBD", out); /* U+FFFD */
      n = 1;
    } else if ((n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) ||
               (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
      fputc(' ', out);
    } else if (s[0] == '&') {
      fputs("&amp;", out);
    } else if (s[0] == '<') {
      fputs("&lt;", out);
    } else if (s[0] == '>') {
      fputs("&gt;", out);
    } else if (s[0] == '"') {
      fputs("&quot;", out);
    } else if (s[0] == '\'') {
      fputs("&#39;", out);
    } else {
      fwrite(s, 1, n, out);
    }
    s += n;
    left -= n;
  }
}
