/* The strength graph both AMG coarsenings start from (lib/amg/amg_internal.h):
 * j != i is a strong neighbour of i when |a_ij| > 0 and |a_ij| >= row_scale[i]
 * col_scale[j]. Smoothed aggregation's symmetric measure, |a_ij| >= theta
 * sqrt(|a_ii a_jj|), takes row_scale theta sqrt(|a_ii|) and col_scale
 * sqrt(|a_jj|); classical AMG's, |a_ij| >= theta max_{k != i} |a_ik|, a row
 * scale alone. The graph is built by rows on all host cores: a pass counts
 * each row's strong entries, a serial sum makes the offsets, a second pass
 * writes them (each row's own range: the serial result, bit for bit). */
#include "core/internal.h"

#include "amg/amg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { STRONG_GRAIN = 8192 };

void clmg_amg_graph_free(clmg_amg_graph *g) {
  free(g->start);
  free(g->neighbour);
  memset(g, 0, sizeof *g);
}

typedef struct strong_job {
  const clmg_csr *a;
  const double *row_scale, *col_scale;
  clmg_amg_graph *g;
} strong_job;

static int is_strong(const strong_job *job, size_t i, int64_t k) {
  size_t j = (size_t)job->a->col[k];
  double value = fabs(job->a->val[k]);
  double bound = job->row_scale[i] * (job->col_scale ? job->col_scale[j] : 1.0);
  return j != i && value > 0 && value >= bound;
}

static void count_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const strong_job *job = data;
  for (size_t i = begin; i < end; i++) {
    int64_t count = 0;
    for (int64_t k = job->a->row_ptr[i]; k < job->a->row_ptr[i + 1]; k++)
      count += is_strong(job, i, k);
    job->g->start[i + 1] = count;
  }
}

static void fill_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const strong_job *job = data;
  for (size_t i = begin; i < end; i++) {
    int64_t next = job->g->start[i];
    for (int64_t k = job->a->row_ptr[i]; k < job->a->row_ptr[i + 1]; k++)
      if (is_strong(job, i, k))
        job->g->neighbour[next++] = job->a->col[k];
  }
}

clmg_status clmg_amg_strength_graph(const clmg_csr *a, const double *row_scale,
                                    const double *col_scale, clmg_amg_graph *g, clmg_error *error) {
  size_t n = a->rows;
  memset(g, 0, sizeof *g);
  g->n = n;
  g->start = clmg_alloc_array(n + 1, sizeof *g->start);
  if (!g->start)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the strength graph of %zu rows", n);
  strong_job job = {a, row_scale, col_scale, g};
  clmg_host_parallel_for(n, STRONG_GRAIN, count_range, &job);
  g->start[0] = 0;
  for (size_t i = 0; i < n; i++)
    g->start[i + 1] += g->start[i];
  size_t entries = (size_t)g->start[n];
  g->neighbour = clmg_alloc_array(entries ? entries : 1, sizeof *g->neighbour);
  if (!g->neighbour) {
    clmg_amg_graph_free(g);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the strength graph of %zu entries", entries);
  }
  clmg_host_parallel_for(n, STRONG_GRAIN, fill_range, &job);
  return CLMG_SUCCESS;
}
