/* What every MPI test suite (tests/test_mpi*.c, run on 1, 2 and 4 ranks)
 * shares: the ranks, checks that stop every rank (a failed check must not
 * leave the others waiting), and MPI_Init with a pocl kernel cache per
 * rank. Each suite is its own program, so the statics are its own. Define
 * _POSIX_C_SOURCE (setenv, mkdir) before including it. */
#ifndef CLMG_TEST_MPI_UTIL_H
#define CLMG_TEST_MPI_UTIL_H

#include "clmg/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int world_rank, world_size;

#define CHECK(condition, ...)                                                                      \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", world_rank, __FILE__, __LINE__,        \
              #condition);                                                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)
#define CHECK_OK(status, context)                                                                  \
  CHECK((status) == CLMG_SUCCESS, "%s: %s", clmg_status_string(status),                            \
        clmg_context_message(context))

/* MPI_Init, world_rank and world_size. pocl builds its kernels under
 * POCL_CACHE_DIR by the program's name: ranks that compile the same kernel
 * at once need their own directory. */
static inline void mpi_test_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const char *pocl_cache = getenv("POCL_CACHE_DIR");
  if (pocl_cache) {
    char directory[4096];
    snprintf(directory, sizeof directory, "%s/rank%d", pocl_cache, world_rank);
    mkdir(directory, 0777);
    setenv("POCL_CACHE_DIR", directory, 1);
  }
}

#endif
