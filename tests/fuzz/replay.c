/* Runs a fuzz target's LLVMFuzzerTestOneInput over files and directories
 * (not recursively), as libFuzzer would run one input: the ordinary build's
 * regression test of the seed corpus and of every input that once crashed
 * or was slow. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 0;
  }
  size_t capacity = 1 << 16, size = 0;
  uint8_t *data = malloc(capacity);
  size_t got = 0;
  while (data && (got = fread(data + size, 1, capacity - size, file)) > 0) {
    size += got;
    if (size == capacity) {
      uint8_t *grown = realloc(data, 2 * capacity);
      if (!grown)
        free(data);
      data = grown;
      capacity *= 2;
    }
  }
  fclose(file);
  if (!data) {
    fprintf(stderr, "replay: out of memory reading %s\n", path);
    return 0;
  }
  LLVMFuzzerTestOneInput(data, size);
  free(data);
  return 1;
}

int main(int argc, char **argv) {
  size_t inputs = 0;
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat info;
    if (stat(argv[i], &info) != 0) {
      fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      failed = 1;
      continue;
    }
    if (!S_ISDIR(info.st_mode)) {
      failed |= !run_file(argv[i]);
      inputs++;
      continue;
    }
    DIR *dir = opendir(argv[i]);
    struct dirent *entry;
    while (dir && (entry = readdir(dir)) != NULL) {
      if (entry->d_name[0] == '.')
        continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], entry->d_name);
      failed |= !run_file(path);
      inputs++;
    }
    if (dir)
      closedir(dir);
  }
  printf("replayed %zu inputs\n", inputs);
  return failed || inputs == 0;
}
