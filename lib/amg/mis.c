/* The roots of the aggregates as a distance-k maximal independent set with
 * fixed priorities (lib/amg/amg_internal.h), on the host: the reference the
 * device's rounds (cl/amg_aggregate.cl) are tested against, and the host's
 * own choice where parallel roots are asked for.
 *
 * Every node holds a tuple (state, priority): state 0 out, 1 undecided, 2
 * in (a root); the priority is clmg_index_priority of the node's number
 * (a bijection on 32 bits, so no two nodes tie). A round takes each tuple's maximum over
 * the distance-k neighbourhood (k max steps over the strong edges); an
 * undecided node whose maximum is its own tuple becomes a root, one that
 * sees a root within k edges goes out. With fixed priorities the result is
 * the set the greedy pass in descending priority would choose (Blelloch,
 * Fineman and Shun 2012), whatever the order of the work inside a round:
 * the same on every run, thread count and device. Bell, Dalton and Olson
 * 2012 build smoothed aggregation on GPUs this way. */
#include "core/internal.h"

#include "amg/amg_internal.h"

#include <stdlib.h>
#include <string.h>

enum { MIS_GRAIN = 16384 };
enum { STATE_OUT = 0, STATE_UNDECIDED = 1, STATE_IN = 2 };

static uint64_t tuple(uint32_t state, size_t i) {
  return (uint64_t)state << 32 | clmg_index_priority((uint32_t)i);
}

static uint32_t state_of(uint64_t t) {
  return (uint32_t)(t >> 32);
}

typedef struct max_job {
  const clmg_amg_graph *g;
  const uint64_t *in;
  uint64_t *out;
} max_job;

static void max_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const max_job *job = data;
  const clmg_amg_graph *g = job->g;
  for (size_t i = begin; i < end; i++) {
    uint64_t m = job->in[i];
    for (int64_t k = g->start[i]; k < g->start[i + 1]; k++) {
      uint64_t t = job->in[g->neighbour[k]];
      m = t > m ? t : m;
    }
    job->out[i] = m;
  }
}

clmg_status clmg_amg_mis_roots(const clmg_amg_graph *g, int distance, uint8_t *is_root, int *rounds,
                               clmg_error *error) {
  size_t n = g->n;
  uint64_t *own = clmg_alloc_array(n ? n : 1, sizeof *own);
  uint64_t *m[2] = {clmg_alloc_array(n ? n : 1, sizeof *m[0]),
                    clmg_alloc_array(n ? n : 1, sizeof *m[1])};
  if (!own || !m[0] || !m[1]) {
    free(own);
    free(m[0]);
    free(m[1]);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the independent set of %zu nodes", n);
  }
  /* isolated nodes are never roots */
  size_t undecided = 0;
  for (size_t i = 0; i < n; i++) {
    int isolated = g->start[i] == g->start[i + 1];
    own[i] = tuple(isolated ? STATE_OUT : STATE_UNDECIDED, i);
    undecided += !isolated;
  }
  int round = 0;
  while (undecided > 0) {
    round++;
    const uint64_t *from = own;
    int to = 0;
    for (int step = 0; step < distance; step++) {
      max_job job = {g, from, m[to]};
      clmg_host_parallel_for(n, MIS_GRAIN, max_range, &job);
      from = m[to];
      to ^= 1;
    }
    undecided = 0;
    for (size_t i = 0; i < n; i++) {
      if (state_of(own[i]) != STATE_UNDECIDED)
        continue;
      if (from[i] == own[i])
        own[i] = tuple(STATE_IN, i);
      else if (state_of(from[i]) == STATE_IN)
        own[i] = tuple(STATE_OUT, i);
      else
        undecided++;
    }
  }
  for (size_t i = 0; i < n; i++)
    is_root[i] = state_of(own[i]) == STATE_IN;
  if (rounds)
    *rounds = round;
  free(own);
  free(m[0]);
  free(m[1]);
  return CLMG_SUCCESS;
}
