/* The host loops on several cores (lib/core/parallel.c): how many threads
 * they take, and that they cover every item once. Internal: the suite links
 * the static library and includes lib/. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct count_job {
  unsigned char *seen;
  size_t ranges[CLMG_MAX_HOST_THREADS];
} count_job;

static void count_items(void *data, size_t range, size_t begin, size_t end) {
  count_job *job = data;
  job->ranges[range] = end - begin;
  for (size_t i = begin; i < end; ++i)
    job->seen[i]++;
}

/* Runs a loop of n items; returns the ranges it used, each item seen once. */
static size_t ranges_of_loop(size_t n, size_t grain) {
  count_job job;
  memset(&job, 0, sizeof job);
  job.seen = calloc(n + 1, 1);
  assert_non_null(job.seen);
  clmg_host_parallel_for(n, grain, count_items, &job);
  for (size_t i = 0; i < n; ++i)
    assert_int_equal(job.seen[i], 1);
  size_t used = 0;
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; ++t)
    used += job.ranges[t] > 0;
  free(job.seen);
  return used;
}

/* A process bound to one core (as mpirun binds a rank) runs its loops on
 * one thread; $CLMG_HOST_THREADS still overrides. */
static void test_affinity(void **state) {
  (void)state;
#if defined(__linux__)
  cpu_set_t all, one;
  assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
  int first = 0;
  while (!CPU_ISSET(first, &all))
    ++first;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  const char *before = getenv("CLMG_HOST_THREADS");
  char *saved = before ? strdup(before) : NULL;
  unsetenv("CLMG_HOST_THREADS");
  size_t unbound = clmg_host_threads();
  assert_true(unbound >= 1 && unbound <= (size_t)CPU_COUNT(&all));
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  size_t bound = clmg_host_threads(), used = ranges_of_loop(100000, 16);
  setenv("CLMG_HOST_THREADS", "3", 1);
  size_t forced = clmg_host_threads(), forced_used = ranges_of_loop(100000, 16);
  assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
  if (saved)
    setenv("CLMG_HOST_THREADS", saved, 1);
  else
    unsetenv("CLMG_HOST_THREADS");
  free(saved);
  assert_int_equal(bound, 1);
  assert_int_equal(used, 1);
  assert_int_equal(forced, 3);
  assert_int_equal(forced_used, 3);
#else
  skip();
#endif
}

/* Every item once, with more threads than items and fewer. */
static void test_cover(void **state) {
  (void)state;
  const char *before = getenv("CLMG_HOST_THREADS");
  char *saved = before ? strdup(before) : NULL;
  setenv("CLMG_HOST_THREADS", "4", 1);
  assert_int_equal(ranges_of_loop(3, 1), 3);
  assert_int_equal(ranges_of_loop(1000, 100), 4);
  assert_int_equal(ranges_of_loop(1000, 400), 2);
  assert_int_equal(ranges_of_loop(0, 1), 0);
  if (saved)
    setenv("CLMG_HOST_THREADS", saved, 1);
  else
    unsetenv("CLMG_HOST_THREADS");
  free(saved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_affinity),
      cmocka_unit_test(test_cover),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
