/* Output files (clmg/output_file.h) and the writers built on them: a file is
 * replaced only once complete. A full disk is simulated with RLIMIT_FSIZE
 * (writes past the limit fail with EFBIG; SIGXFSZ ignored): the Matrix
 * Market matrix and vector writers, the VTU writer and the API itself must
 * then fail with a message naming the path, leave the earlier file byte for
 * byte as it was and leave no temporary behind. Also: the success path
 * (contents, permissions like fopen's, symbolic links followed, names too
 * long for a suffix), discarding, paths written directly (/dev/null,
 * /dev/full, a directory) and bad arguments; and the XML escaping that the
 * VTU writer and clmg bench's HTML page share. Host only: no OpenCL device. */
#define _POSIX_C_SOURCE 200809L /* setrlimit, dirent, symlink, lstat under -std=c11 */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

static char *scratch;

static const char old_text[] = "an earlier file: keep me\n";

/* scratch/name (malloc'ed). */
static char *scratch_path(const char *name) {
  size_t length = strlen(scratch) + strlen(name) + 2;
  char *path = malloc(length);
  assert_non_null(path);
  snprintf(path, length, "%s/%s", scratch, name);
  return path;
}

static void write_bytes(const char *path, const char *bytes, size_t length) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, length, f), length);
  assert_int_equal(fclose(f), 0);
}

static void check_contents(const char *path, const char *expected, size_t length) {
  size_t size = 0;
  char *data = test_read_file(path, &size);
  assert_int_equal(size, length);
  assert_memory_equal(data, expected, length);
  free(data);
}

/* Every name in the scratch directory must be one of `names` (NULL-ended):
 * no temporary may be left behind. Returns how many entries there are. */
static size_t check_only(const char *const *names) {
  DIR *dir = opendir(scratch);
  assert_non_null(dir);
  size_t count = 0;
  for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
      continue;
    int known = 0;
    for (const char *const *name = names; *name && !known; ++name)
      known = strcmp(entry->d_name, *name) == 0;
    if (!known)
      fail_msg("unexpected file (a temporary left behind?): %s", entry->d_name);
    ++count;
  }
  closedir(dir);
  return count;
}

/* Empties the scratch directory between tests. */
static void clear_scratch(void) {
  DIR *dir = opendir(scratch);
  assert_non_null(dir);
  for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
      continue;
    char *path = scratch_path(entry->d_name);
    remove(path);
    free(path);
  }
  closedir(dir);
}

static mode_t current_umask(void) {
  mode_t mask = umask(022);
  umask(mask);
  return mask;
}

/* ---- a full disk: RLIMIT_FSIZE ---- */

typedef struct size_limit {
  struct rlimit saved;
  void (*previous)(int);
} size_limit;

/* Writes beyond `bytes` fail with EFBIG instead of raising SIGXFSZ. */
static void limit_file_size(size_limit *limit, rlim_t bytes) {
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &limit->saved), 0);
  limit->previous = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = limit->saved;
  small.rlim_cur = bytes;
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
}

static void restore_file_size(size_limit *limit) {
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &limit->saved), 0);
  signal(SIGXFSZ, limit->previous);
}

/* What every failed write must look like: CLMG_ERROR_IO, a message with the
 * path and the reason, the earlier file as it was, no temporary. */
static void check_failed_write(clmg_status status, const clmg_error *error, const char *path,
                               const char *name) {
  assert_int_equal(status, CLMG_ERROR_IO);
  CHECK_CONTAINS(error->message, path);
  CHECK_CONTAINS(error->message, strerror(EFBIG));
  check_contents(path, old_text, sizeof old_text - 1);
  const char *names[] = {name, NULL};
  assert_int_equal(check_only(names), 1);
}

/* A tridiagonal n x n matrix: about 3n lines of Matrix Market text. */
static clmg_csr tridiagonal(size_t n) {
  triplets t = {0};
  for (size_t i = 0; i < n; ++i) {
    triplets_add(&t, i, i, 2.0 + 1.0 / (double)(i + 1));
    if (i > 0)
      triplets_add(&t, i, i - 1, -1.0 / 3.0);
    if (i + 1 < n)
      triplets_add(&t, i, i + 1, -1.0 / 7.0);
  }
  return triplets_to_csr(&t, n);
}

static void test_matrix_market_matrix_full_disk(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("a.mtx");
  write_bytes(path, old_text, sizeof old_text - 1);
  clmg_csr a = tridiagonal(2000); /* ~150 kB of text */
  clmg_error error = {{0}};
  size_limit limit;
  limit_file_size(&limit, 4096);
  clmg_status status = clmg_csr_write_matrix_market(path, &a, &error);
  restore_file_size(&limit);
  check_failed_write(status, &error, path, "a.mtx");

  /* without the limit the same call replaces the file */
  CHECK_ERROR_OK(error, clmg_csr_write_matrix_market(path, &a, &error));
  clmg_csr b;
  CHECK_ERROR_OK(error, clmg_csr_read_matrix_market(path, &b, &error));
  assert_int_equal(b.rows, a.rows);
  assert_int_equal(clmg_csr_nnz(&b), clmg_csr_nnz(&a));
  assert_memory_equal(b.val, a.val, clmg_csr_nnz(&a) * sizeof *a.val);
  clmg_csr_free(&b);
  clmg_csr_free(&a);
  free(path);
}

static void test_matrix_market_vector_full_disk(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("x.mtx");
  write_bytes(path, old_text, sizeof old_text - 1);
  size_t n = 5000;
  double *values = malloc(n * sizeof *values);
  assert_non_null(values);
  for (size_t i = 0; i < n; ++i)
    values[i] = rng_uniform();
  clmg_error error = {{0}};
  size_limit limit;
  limit_file_size(&limit, 4096);
  clmg_status status = clmg_write_matrix_market_vector(path, values, n, &error);
  restore_file_size(&limit);
  check_failed_write(status, &error, path, "x.mtx");

  CHECK_ERROR_OK(error, clmg_write_matrix_market_vector(path, values, n, &error));
  double *back = NULL;
  size_t m = 0;
  CHECK_ERROR_OK(error, clmg_read_matrix_market_vector(path, &back, &m, &error));
  assert_int_equal(m, n);
  assert_memory_equal(back, values, n * sizeof *values);
  free(back);
  free(values);
  free(path);
}

static void test_vtu_full_disk(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("mesh.vtu");
  write_bytes(path, old_text, sizeof old_text - 1);
  clmg_mesh cube = {0};
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_mesh_box(3, 2, 0.25, 7, &cube, &error));
  for (int ascii = 0; ascii < 2; ++ascii) {
    size_limit limit;
    limit_file_size(&limit, 2048);
    clmg_status status = clmg_mesh_write_vtu_encoded(
        path, &cube, 2, NULL, 0, ascii ? CLMG_VTU_ASCII : CLMG_VTU_BINARY, &error);
    restore_file_size(&limit);
    check_failed_write(status, &error, path, "mesh.vtu");
  }
  CHECK_ERROR_OK(error, clmg_mesh_write_vtu(path, &cube, 2, NULL, 0, &error));
  size_t size = 0;
  char *data = test_read_file(path, &size);
  assert_true(size > 2048);
  assert_non_null(strstr(data, "<VTKFile"));
  free(data);
  clmg_mesh_free(&cube);
  free(path);
}

/* The API itself, through a stream written with stdio: the flush that
 * commit does is what fails when the writes fit in the buffer. */
static void test_api_full_disk(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("out.bin");
  write_bytes(path, old_text, sizeof old_text - 1);
  static char block[3000];
  memset(block, 'x', sizeof block);
  for (int writes = 1; writes <= 8; writes *= 8) { /* in the buffer; past it */
    clmg_output_file *file = NULL;
    FILE *out = NULL;
    clmg_error error = {{0}};
    CHECK_ERROR_OK(error, clmg_output_file_open(path, "wb", &file, &out, &error));
    size_limit limit;
    limit_file_size(&limit, 2048);
    for (int k = 0; k < writes; ++k)
      fwrite(block, 1, sizeof block, out);
    clmg_status status = clmg_output_file_commit(file, &error);
    restore_file_size(&limit);
    check_failed_write(status, &error, path, "out.bin");
  }
  free(path);
}

/* ---- the API ---- */

static void test_commit_new_file(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("new.txt");
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(path, "w", &file, &out, &error));
  assert_non_null(file);
  assert_non_null(out);
  /* nothing at path until the commit */
  assert_int_equal(access(path, F_OK), -1);
  fprintf(out, "hello %d\n", 42);
  CHECK_ERROR_OK(error, clmg_output_file_commit(file, &error));
  check_contents(path, "hello 42\n", 9);
  /* readable like a file from fopen: 0666 less the umask, not mkstemp's 0600 */
  struct stat info;
  assert_int_equal(stat(path, &info), 0);
  assert_int_equal(info.st_mode & 0777, 0666 & ~current_umask());
  const char *names[] = {"new.txt", NULL};
  assert_int_equal(check_only(names), 1);
  free(path);
}

static void test_replace_keeps_mode(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("kept-mode.txt");
  write_bytes(path, old_text, sizeof old_text - 1);
  assert_int_equal(chmod(path, 0640), 0);
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(path, "wb", &file, &out, &error));
  fputs("new", out);
  /* until the commit, the earlier file is there as it was */
  check_contents(path, old_text, sizeof old_text - 1);
  CHECK_ERROR_OK(error, clmg_output_file_commit(file, &error));
  check_contents(path, "new", 3);
  struct stat info;
  assert_int_equal(stat(path, &info), 0);
  assert_int_equal(info.st_mode & 07777, 0640);
  const char *names[] = {"kept-mode.txt", NULL};
  assert_int_equal(check_only(names), 1);
  free(path);
}

static void test_discard(void **state) {
  (void)state;
  clear_scratch();
  char *old_path = scratch_path("old.txt"), *new_path = scratch_path("never.txt");
  write_bytes(old_path, old_text, sizeof old_text - 1);
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(old_path, "w", &file, &out, &error));
  fputs("half of a new file", out);
  errno = ERANGE;
  clmg_output_file_discard(file);
  assert_int_equal(errno, ERANGE); /* kept for the caller's message */
  check_contents(old_path, old_text, sizeof old_text - 1);
  CHECK_ERROR_OK(error, clmg_output_file_open(new_path, "w", &file, &out, &error));
  fputs("never seen", out);
  clmg_output_file_discard(file);
  assert_int_equal(access(new_path, F_OK), -1);
  clmg_output_file_discard(NULL);
  const char *names[] = {"old.txt", NULL};
  assert_int_equal(check_only(names), 1);
  free(old_path);
  free(new_path);
}

/* What a signal handler calls: the temporaries of the files being written
 * go, their targets stay as they were (one replaced, one new); the handles
 * are still discarded or committed as usual afterwards (a commit then fails
 * with the reason), and the registry's slots are given back: more files
 * than it holds can be written one after another. */
static void test_remove_temporaries(void **state) {
  (void)state;
  clear_scratch();
  char *old_path = scratch_path("old.txt"), *new_path = scratch_path("new.txt");
  write_bytes(old_path, old_text, sizeof old_text - 1);
  clmg_output_file *first = NULL, *second = NULL;
  FILE *a = NULL, *b = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(old_path, "w", &first, &a, &error));
  CHECK_ERROR_OK(error, clmg_output_file_open(new_path, "w", &second, &b, &error));
  fputs("interrupted", a);
  fputs("interrupted", b);
  fflush(a);
  fflush(b);
  clmg_output_file_remove_temporaries();
  const char *names[] = {"old.txt", NULL};
  assert_int_equal(check_only(names), 1); /* no temporary, no new.txt */
  check_contents(old_path, old_text, sizeof old_text - 1);
  clmg_output_file_discard(first);
  assert_int_equal(clmg_output_file_commit(second, &error), CLMG_ERROR_IO);
  CHECK_CONTAINS(error.message, "new.txt");
  assert_int_equal(access(new_path, F_OK), -1);
  for (int k = 0; k < 100; ++k) {
    CHECK_ERROR_OK(error, clmg_output_file_open(new_path, "w", &first, &a, &error));
    fprintf(a, "%d", k);
    CHECK_ERROR_OK(error, clmg_output_file_commit(first, &error));
  }
  check_contents(new_path, "99", 2);
  free(old_path);
  free(new_path);
}

/* Two writers of one path at once get temporaries of their own; the last
 * commit wins and nothing is left behind. */
static void test_two_writers(void **state) {
  (void)state;
  clear_scratch();
  char *path = scratch_path("shared.txt");
  clmg_output_file *first = NULL, *second = NULL;
  FILE *a = NULL, *b = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(path, "w", &first, &a, &error));
  CHECK_ERROR_OK(error, clmg_output_file_open(path, "w", &second, &b, &error));
  fputs("first", a);
  fputs("second", b);
  CHECK_ERROR_OK(error, clmg_output_file_commit(first, &error));
  check_contents(path, "first", 5);
  CHECK_ERROR_OK(error, clmg_output_file_commit(second, &error));
  check_contents(path, "second", 6);
  const char *names[] = {"shared.txt", NULL};
  assert_int_equal(check_only(names), 1);
  free(path);
}

/* A symbolic link to a regular file: the file is replaced, the link kept. */
static void test_symbolic_link(void **state) {
  (void)state;
  clear_scratch();
  char *real = scratch_path("real.txt"), *link = scratch_path("link.txt");
  write_bytes(real, old_text, sizeof old_text - 1);
  assert_int_equal(symlink("real.txt", link), 0);
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(link, "w", &file, &out, &error));
  fputs("through the link", out);
  CHECK_ERROR_OK(error, clmg_output_file_commit(file, &error));
  struct stat info;
  assert_int_equal(lstat(link, &info), 0);
  assert_true(S_ISLNK(info.st_mode));
  check_contents(real, "through the link", 16);
  const char *names[] = {"real.txt", "link.txt", NULL};
  assert_int_equal(check_only(names), 2);
  free(real);
  free(link);
}

/* A name with no room for the temporary's suffix (NAME_MAX) still works. */
static void test_long_name(void **state) {
  (void)state;
  clear_scratch();
  long name_max = pathconf(scratch, _PC_NAME_MAX);
  if (name_max <= 0 || name_max > 1000)
    skip();
  char name[1001];
  memset(name, 'n', (size_t)name_max);
  name[name_max] = '\0';
  char *path = scratch_path(name);
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_output_file_open(path, "w", &file, &out, &error));
  fputs("long", out);
  CHECK_ERROR_OK(error, clmg_output_file_commit(file, &error));
  check_contents(path, "long", 4);
  const char *names[] = {name, NULL};
  assert_int_equal(check_only(names), 1);
  free(path);
}

/* Paths that cannot be renamed over are written directly, as fopen would. */
static void test_direct_paths(void **state) {
  (void)state;
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  if (access("/dev/null", W_OK) == 0) {
    CHECK_ERROR_OK(error, clmg_output_file_open("/dev/null", "w", &file, &out, &error));
    fputs("discarded", out);
    CHECK_ERROR_OK(error, clmg_output_file_commit(file, &error));
    struct stat info;
    assert_int_equal(stat("/dev/null", &info), 0);
    assert_true(S_ISCHR(info.st_mode));
  }
  if (access("/dev/full", W_OK) == 0) {
    CHECK_ERROR_OK(error, clmg_output_file_open("/dev/full", "w", &file, &out, &error));
    fputs("no room", out);
    CHECK_STATUS(CLMG_ERROR_IO, clmg_output_file_commit(file, &error));
    CHECK_CONTAINS(error.message, "/dev/full");
    CHECK_CONTAINS(error.message, strerror(ENOSPC));
    struct stat info;
    assert_int_equal(stat("/dev/full", &info), 0);
    assert_true(S_ISCHR(info.st_mode));
  }
  /* a directory, and a path in a missing one */
  CHECK_STATUS(CLMG_ERROR_IO, clmg_output_file_open(scratch, "w", &file, &out, &error));
  CHECK_CONTAINS(error.message, scratch);
  assert_null(file);
  assert_null(out);
  char *missing = scratch_path("missing/out.txt");
  CHECK_STATUS(CLMG_ERROR_IO, clmg_output_file_open(missing, "w", &file, &out, &error));
  CHECK_CONTAINS(error.message, missing);
  CHECK_CONTAINS(error.message, strerror(ENOENT));
  free(missing);
}

/* A file we may not write is refused, as fopen would (root may write
 * anything: skipped there). */
static void test_read_only_file(void **state) {
  (void)state;
  if (geteuid() == 0)
    skip();
  clear_scratch();
  char *path = scratch_path("read-only.txt");
  write_bytes(path, old_text, sizeof old_text - 1);
  assert_int_equal(chmod(path, 0444), 0);
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  CHECK_STATUS(CLMG_ERROR_IO, clmg_output_file_open(path, "w", &file, &out, &error));
  CHECK_CONTAINS(error.message, path);
  CHECK_CONTAINS(error.message, strerror(EACCES));
  check_contents(path, old_text, sizeof old_text - 1);
  free(path);
}

static void test_bad_arguments(void **state) {
  (void)state;
  clmg_output_file *file = (clmg_output_file *)&file;
  FILE *out = stdout;
  clmg_error error = {{0}};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_output_file_open(NULL, "w", &file, &out, &error));
  assert_null(file);
  assert_null(out);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_output_file_open("x", NULL, &file, &out, NULL));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_output_file_open("x", "w", NULL, &out, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_output_file_open("x", "w", &file, NULL, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_output_file_open("x", "a", &file, &out, &error));
  CHECK_CONTAINS(error.message, "\"a\"");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_output_file_commit(NULL, &error));
  assert_int_equal(access("x", F_OK), -1);
}

/* Markup, quotes, control characters and bytes that are not UTF-8 come out
 * as well-formed XML; UTF-8 passes through. */
static void test_xml_text(void **state) {
  (void)state;
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  assert_non_null(out);
  clmg_output_xml_text(out, "<b a=\"1\">&'</b>");
  clmg_output_xml_text(out, "|tab\tesc\x1b del\x7f c1\xC2\x85|");
  clmg_output_xml_text(out, "bad\xFF cut\xC3 \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  clmg_output_xml_text(out, NULL);
  clmg_output_xml_text(NULL, "nothing");
  assert_int_equal(fclose(out), 0);
  assert_string_equal(text, "&lt;b a=&quot;1&quot;&gt;&amp;&#39;&lt;/b&gt;"
                            "|tab esc  del  c1 |"
                            "bad\xEF\xBF\xBD cut\xEF\xBF\xBD \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  free(text);
}

static int setup(void **state) {
  (void)state;
  scratch = make_tmpdir("output_file");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  remove_tree(scratch);
  return 0;
}

int main(void) {
  rng_seed(20260611);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matrix_market_matrix_full_disk),
      cmocka_unit_test(test_matrix_market_vector_full_disk),
      cmocka_unit_test(test_vtu_full_disk),
      cmocka_unit_test(test_api_full_disk),
      cmocka_unit_test(test_commit_new_file),
      cmocka_unit_test(test_replace_keeps_mode),
      cmocka_unit_test(test_discard),
      cmocka_unit_test(test_remove_temporaries),
      cmocka_unit_test(test_two_writers),
      cmocka_unit_test(test_symbolic_link),
      cmocka_unit_test(test_long_name),
      cmocka_unit_test(test_direct_paths),
      cmocka_unit_test(test_read_only_file),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_xml_text),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("output_file", tests, setup, teardown);
}
