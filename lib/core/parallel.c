/* Host loops over many independent items (refining a mesh's cells,
 * screening their children) on the host's cores: each thread takes one
 * contiguous range and writes only what its items own, so the result is
 * the serial loop's, bit for bit, on any number of threads. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getaffinity, and sysconf under -std=c11 */
#include <sched.h>
#else
#define _POSIX_C_SOURCE 200809L /* sysconf under -std=c11 */
#endif
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t clmg_index_priority(uint32_t i) {
  /* every step is invertible */
  i ^= i >> 16;
  i *= 0x85ebca6bu;
  i ^= i >> 13;
  i *= 0xc2b2ae35u;
  i ^= i >> 16;
  return i;
}

typedef struct host_range {
  clmg_host_loop_body body;
  void *data;
  size_t index, begin, end;
} host_range;

static void *run_range(void *argument) {
  const host_range *r = argument;
  r->body(r->data, r->index, r->begin, r->end);
  return NULL;
}

/* The cores this thread may run on: all online ones, or where the OS says,
 * those of its affinity mask (an MPI rank bound to one core gets one, and
 * more threads would only take turns there). */
static long usable_cores(void) {
  long count = sysconf(_SC_NPROCESSORS_ONLN);
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    long allowed = CPU_COUNT(&set);
    if (allowed >= 1 && (count < 1 || allowed < count))
      count = allowed;
  }
#endif
  return count;
}

size_t clmg_host_threads(void) {
  const char *forced = getenv("CLMG_HOST_THREADS");
  long count = forced && *forced ? strtol(forced, NULL, 10) : usable_cores();
  if (count < 1)
    count = 1;
  return count > CLMG_MAX_HOST_THREADS ? CLMG_MAX_HOST_THREADS : (size_t)count;
}

void clmg_host_parallel_for(size_t n, size_t grain, clmg_host_loop_body body, void *data) {
  size_t threads = clmg_host_threads();
  if (grain < 1)
    grain = 1;
  if (threads > n / grain)
    threads = n / grain;
  if (threads <= 1) {
    body(data, 0, 0, n);
    return;
  }
  host_range ranges[CLMG_MAX_HOST_THREADS];
  pthread_t ids[CLMG_MAX_HOST_THREADS];
  int started[CLMG_MAX_HOST_THREADS] = {0};
  for (size_t t = 0; t < threads; ++t)
    ranges[t] = (host_range){body, data, t, n / threads * t + (t < n % threads ? t : n % threads),
                             n / threads * (t + 1) + (t + 1 < n % threads ? t + 1 : n % threads)};
  for (size_t t = 1; t < threads; ++t) /* a thread that cannot start runs here below */
    started[t] = pthread_create(&ids[t], NULL, run_range, &ranges[t]) == 0;
  run_range(&ranges[0]);
  for (size_t t = 1; t < threads; ++t) {
    if (started[t])
      pthread_join(ids[t], NULL);
    else
      run_range(&ranges[t]);
  }
}

typedef struct first_scan {
  clmg_host_item_test flagged;
  const void *data;
  size_t first[CLMG_MAX_HOST_THREADS]; /* per range: its first flagged item, or n */
} first_scan;

static void scan_for_first(void *data, size_t range, size_t begin, size_t end) {
  first_scan *scan = data;
  for (size_t i = begin; i < end; ++i)
    if (scan->flagged(scan->data, i)) {
      scan->first[range] = i;
      return;
    }
}

size_t clmg_host_first_flagged(size_t n, size_t grain, clmg_host_item_test flagged,
                               const void *data) {
  first_scan scan;
  scan.flagged = flagged;
  scan.data = data;
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; ++t)
    scan.first[t] = n;
  clmg_host_parallel_for(n, grain, scan_for_first, &scan);
  size_t first = n;
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; ++t)
    if (scan.first[t] < first)
      first = scan.first[t];
  return first;
}

/* Blocks of a large copy: into fresh memory, most of a copy's time is the
 * first touch of its pages, which threads take in parallel. */
enum { COPY_BLOCK = 1 << 20 };
typedef struct copy_job {
  char *dst;
  const char *src;
  size_t bytes;
} copy_job;

static void copy_blocks(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const copy_job *job = data;
  size_t first = begin * COPY_BLOCK, last = end * COPY_BLOCK;
  if (last > job->bytes)
    last = job->bytes;
  if (last > first) /* (never a NULL array, not even with nothing to copy) */
    memcpy(job->dst + first, job->src + first, last - first);
}

void clmg_host_copy(void *dst, const void *src, size_t bytes) {
  copy_job job = {dst, src, bytes};
  clmg_host_parallel_for((bytes + COPY_BLOCK - 1) / COPY_BLOCK, 4, copy_blocks, &job);
}
