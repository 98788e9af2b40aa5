/* Smoothed-aggregation AMG on the host (clmg/amg.h): strength of
 * connection, aggregation after Fu et al. 2014, section 5.2.1 (roots of a
 * k-maximal independent set, nodes joining the neighbouring aggregate they
 * share most strong edges with, small aggregates dissolved and their nodes
 * joined again), the tentative and smoothed prolongators (their eqs. 5 and
 * 6) and the Galerkin products.
 *
 * The joining sweeps decide every node from the previous sweep's state, as
 * a parallel implementation would, so the aggregates do not depend on the
 * order a sweep visits the nodes in; ties go to the lower aggregate. */
#include "core/internal.h"
#include "la/internal.h"

#include "amg/amg_internal.h"
#include "solve/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWAP(type, x, y)                                                                           \
  do {                                                                                             \
    type swap_ = (x);                                                                              \
    (x) = (y);                                                                                     \
    (y) = swap_;                                                                                   \
  } while (0)

void clmg_amg_options_defaults(clmg_amg_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->root_distance = 2;
  options->coarse_root_distance = 1;
  options->patch_root_distance = 1;
  options->coarse_rows = 256;
  options->max_levels = 20;
  options->block_size = 1;
  options->interpolation = CLMG_AMG_EXTENDED_I;
  options->interpolation_max_entries = 4;
}

enum { MAX_CANDIDATES = 16, MAX_BLOCK = 16 };

static clmg_status check_options(const clmg_amg_options *o, clmg_error *error) {
  if (!(o->strength_threshold >= 0 && o->strength_threshold <= 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG strength threshold %g is outside [0, 1]", o->strength_threshold);
  if (o->roots != CLMG_AMG_ROOTS_AUTO && o->roots != CLMG_AMG_ROOTS_ORDERED &&
      o->roots != CLMG_AMG_ROOTS_PARALLEL)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG roots %d is not a clmg_amg_roots", (int)o->roots);
  if (o->root_distance < 1 || o->root_distance > 4)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG root distance %d is outside [1, 4]", o->root_distance);
  if (o->coarse_root_distance < 0 || o->coarse_root_distance > 4)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG coarse root distance %d is outside [0, 4]", o->coarse_root_distance);
  if (o->patch_root_distance < 1 || o->patch_root_distance > 4)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG patch root distance %d is outside [1, 4]", o->patch_root_distance);
  if (o->max_levels < 1)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "AMG max_levels is %d (at least 1)",
                          o->max_levels);
  if (!(o->prolongator_damping >= 0 && o->prolongator_damping < 2))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG prolongator damping %g is outside [0, 2)", o->prolongator_damping);
  if (o->coarsening != CLMG_AMG_SMOOTHED_AGGREGATION && o->coarsening != CLMG_AMG_CLASSICAL)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "AMG coarsening %d is unknown",
                          (int)o->coarsening);
  if (!(o->classical_threshold >= 0 && o->classical_threshold < 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG classical strength threshold %g is outside [0, 1)",
                          o->classical_threshold);
  if (o->interpolation != CLMG_AMG_EXTENDED_I && o->interpolation != CLMG_AMG_DIRECT)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG interpolation %d is not a clmg_amg_interpolation",
                          (int)o->interpolation);
  if (o->interpolation_max_entries < 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG interpolation max entries %d is negative (0: no limit)",
                          o->interpolation_max_entries);
  if (!(o->interpolation_truncation >= 0 && o->interpolation_truncation < 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG interpolation truncation %g is outside [0, 1)",
                          o->interpolation_truncation);
  if (o->block_size < 0 || o->block_size > MAX_BLOCK)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG block size %d is outside [1, %d]", o->block_size, MAX_BLOCK);
  if (o->num_candidates < 0 || o->num_candidates > MAX_CANDIDATES ||
      (o->num_candidates > 0) != (o->candidates != NULL))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG near-nullspace: %d candidates %s (give 1 to %d vectors, or none "
                          "for the constant)",
                          o->num_candidates, o->candidates ? "given" : "without their values",
                          MAX_CANDIDATES);
  return CLMG_SUCCESS;
}

/* Unknowns per node (block_size 0 means 1). */
static size_t block_of(const clmg_amg_options *o) {
  return o->block_size > 1 ? (size_t)o->block_size : 1;
}

static clmg_status check_square(const clmg_csr *a, clmg_error *error) {
  if (!a || !a->row_ptr || (clmg_csr_nnz(a) > 0 && (!a->col || !a->val)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "AMG: the matrix is missing");
  if (a->rows != a->cols)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG needs a square matrix, not %zu x %zu", a->rows, a->cols);
  if (a->rows > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG: %zu rows exceed the 32-bit index range", a->rows);
  return CLMG_SUCCESS;
}

/* The options to use (the given ones, else the defaults, into *resolved)
 * once the matrix and they are checked: every entry point begins here. */
static clmg_status check_input(const clmg_csr *a, const clmg_amg_options *options,
                               clmg_amg_options *resolved, clmg_error *error) {
  if (options)
    *resolved = *options;
  else
    clmg_amg_options_defaults(resolved);
  clmg_status status = check_square(a, error);
  if (status == CLMG_SUCCESS)
    status = check_options(resolved, error);
  if (status == CLMG_SUCCESS && a->rows % block_of(resolved) != 0)
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "AMG block size %d does not divide the %zu rows", resolved->block_size,
                            a->rows);
  return status;
}

/* ---- strength of connection ---- */

/* The symmetric measure: j is strong for i when |a_ij| >= theta
 * sqrt(|a_ii a_jj|) (clmg_amg_strength_graph with row scales theta
 * sqrt(|a_ii|) and column scales sqrt(|a_jj|)). */
static clmg_status strong_graph(const clmg_csr *a, double theta, clmg_amg_graph *g,
                                clmg_error *error) {
  size_t n = a->rows;
  double *row_scale = clmg_alloc_array(n ? n : 1, sizeof *row_scale);
  double *col_scale = clmg_alloc_array(n ? n : 1, sizeof *col_scale);
  clmg_status status = CLMG_SUCCESS;
  if (!row_scale || !col_scale)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "AMG: cannot allocate the strength graph of %zu rows", n);
  if (status == CLMG_SUCCESS) {
    clmg_csr_diagonal(a, col_scale, NULL);
    for (size_t i = 0; i < n; i++) {
      col_scale[i] = sqrt(fabs(col_scale[i]));
      row_scale[i] = theta * col_scale[i];
    }
    status = clmg_amg_strength_graph(a, row_scale, col_scale, g, error);
  }
  free(row_scale);
  free(col_scale);
  return status;
}

/* ---- aggregation ---- */

/* Roots: visited in order, a node becomes a root unless a root lies within
 * `distance` strong edges; each root excludes its distance-neighbourhood
 * (a breadth-first walk with `depth` as the visited mark). Isolated nodes
 * are never roots. */
static void choose_roots(const clmg_amg_graph *g, int distance, uint8_t *is_root, int32_t *depth,
                         int32_t *queue) {
  size_t n = g->n;
  memset(is_root, 0, n);
  for (size_t i = 0; i < n; i++)
    depth[i] = -1; /* -1: not within distance of any root yet */
  for (size_t i = 0; i < n; i++) {
    if (depth[i] >= 0 || g->start[i] == g->start[i + 1])
      continue;
    is_root[i] = 1;
    size_t head = 0, tail = 0;
    queue[tail++] = (int32_t)i;
    depth[i] = 0;
    while (head < tail) {
      int32_t v = queue[head++];
      if (depth[v] >= distance)
        continue;
      for (int64_t k = g->start[v]; k < g->start[v + 1]; k++) {
        int32_t w = g->neighbour[k];
        /* a node already excluded at a smaller depth keeps it */
        if (depth[w] < 0 || depth[w] > depth[v] + 1) {
          if (depth[w] < 0)
            queue[tail++] = w;
          depth[w] = depth[v] + 1;
        }
      }
    }
  }
}

/* Joins unallocated nodes to the neighbouring aggregate they share the most
 * strong edges with (ties: the lower aggregate), sweep after sweep (each
 * from the state before it, so the nodes of a sweep are independent and
 * run on all host cores), until a sweep changes nothing. */
enum { JOIN_GRAIN = 8192 };
typedef struct join_job {
  const clmg_amg_graph *g;
  const int32_t *aggregate;
  int32_t *next;
  /* per range: counters by aggregate (seen[c] holds the node that counted
   * last), and how many nodes the range joined */
  int32_t *seen[CLMG_MAX_HOST_THREADS], *weight[CLMG_MAX_HOST_THREADS];
  size_t changed[CLMG_MAX_HOST_THREADS];
} join_job;

static void join_range(void *data, size_t range, size_t begin, size_t end) {
  join_job *job = data;
  const clmg_amg_graph *g = job->g;
  int32_t *seen = job->seen[range], *weight = job->weight[range];
  size_t changed = 0;
  for (size_t i = begin; i < end; i++) {
    job->next[i] = job->aggregate[i];
    if (job->aggregate[i] >= 0)
      continue;
    int32_t best = -1, best_weight = 0;
    for (int64_t k = g->start[i]; k < g->start[i + 1]; k++) {
      int32_t c = job->aggregate[g->neighbour[k]];
      if (c < 0)
        continue;
      if (seen[c] != (int32_t)i) {
        seen[c] = (int32_t)i;
        weight[c] = 0;
      }
      weight[c]++;
      if (weight[c] > best_weight || (weight[c] == best_weight && c < best)) {
        best = c;
        best_weight = weight[c];
      }
    }
    if (best >= 0) {
      job->next[i] = best;
      changed++;
    }
  }
  job->changed[range] = changed;
}

/* aggregates: the number of aggregate ids (counters per range). Returns 0
 * without memory for the counters. */
static int join_neighbours(const clmg_amg_graph *g, size_t aggregates, int32_t *aggregate,
                           int32_t *next) {
  size_t n = g->n, ranges = clmg_host_threads();
  join_job job = {g, aggregate, next, {0}, {0}, {0}};
  int ok = 1;
  for (size_t r = 0; r < ranges && ok; r++) {
    job.seen[r] = clmg_alloc_array(aggregates ? aggregates : 1, sizeof *job.seen[r]);
    job.weight[r] = clmg_alloc_array(aggregates ? aggregates : 1, sizeof *job.weight[r]);
    ok = job.seen[r] && job.weight[r];
    for (size_t c = 0; ok && c < aggregates; c++)
      job.seen[r][c] = -1;
  }
  for (;;) {
    if (!ok)
      break;
    memset(job.changed, 0, sizeof job.changed);
    clmg_host_parallel_for(n, JOIN_GRAIN, join_range, &job);
    size_t changed = 0;
    for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
      changed += job.changed[r];
    memcpy(aggregate, next, n * sizeof *aggregate);
    if (changed == 0)
      break;
  }
  for (size_t r = 0; r < ranges; r++) {
    free(job.seen[r]);
    free(job.weight[r]);
  }
  return ok;
}

/* Renumbers aggregates 0, 1, ... in order of first appearance among the
 * nodes; returns the count. */
static size_t renumber(int32_t *aggregate, size_t n, int32_t *map) {
  for (size_t i = 0; i < n; i++)
    map[i] = -1;
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t c = aggregate[i];
    if (c < 0)
      continue;
    if (map[c] < 0)
      map[c] = (int32_t)count++;
    aggregate[i] = map[c];
  }
  return count;
}

/* min_fit: aggregates of fewer nodes than this, once joined and dissolved,
 * are given up (their nodes get -1, left to the smoother): the
 * near-nullspace fit needs as many unknowns in an aggregate as candidates. */
static clmg_status aggregate_graph(const clmg_amg_graph *g, const clmg_amg_options *o,
                                   size_t min_fit, int32_t *aggregate, size_t *count,
                                   clmg_error *error) {
  size_t n = g->n;
  uint8_t *is_root = clmg_alloc_array(n ? n : 1, 1);
  int32_t *work[3];
  int ok = is_root != NULL;
  for (int w = 0; w < 3; w++) {
    work[w] = clmg_alloc_array(n ? n : 1, sizeof *work[w]);
    ok = ok && work[w] != NULL;
  }
  if (!ok) {
    free(is_root);
    for (int w = 0; w < 3; w++)
      free(work[w]);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the aggregation of %zu nodes", n);
  }
  int32_t *depth = work[0], *queue = work[1], *next = work[2];
  clmg_status status = CLMG_SUCCESS;
  if (o->roots == CLMG_AMG_ROOTS_PARALLEL)
    status = clmg_amg_mis_roots(g, o->root_distance, is_root, NULL, error);
  else
    choose_roots(g, o->root_distance, is_root, depth, queue);
  if (status != CLMG_SUCCESS) {
    free(is_root);
    for (int w = 0; w < 3; w++)
      free(work[w]);
    return status;
  }
  int32_t roots = 0;
  for (size_t i = 0; i < n; i++)
    aggregate[i] = is_root[i] ? roots++ : -1;
  ok = join_neighbours(g, (size_t)roots, aggregate, next);
  *count = renumber(aggregate, n, depth);

  size_t min_size = o->min_aggregate_size > min_fit ? o->min_aggregate_size : min_fit;
  if (min_size > 1 && *count > 0) {
    /* sizes in depth[]; dissolve the small ones (unless all are small) */
    for (size_t c = 0; c < *count; c++)
      depth[c] = 0;
    for (size_t i = 0; i < n; i++)
      if (aggregate[i] >= 0)
        depth[aggregate[i]]++;
    size_t kept = 0;
    for (size_t c = 0; c < *count; c++)
      kept += (size_t)depth[c] >= min_size;
    if (kept > 0 && kept < *count) {
      for (size_t i = 0; i < n; i++)
        if (aggregate[i] >= 0 && (size_t)depth[aggregate[i]] < min_size)
          aggregate[i] = -1;
      ok = ok && join_neighbours(g, *count, aggregate, next);
      *count = renumber(aggregate, n, depth);
    }
  }
  if (min_fit > 1 && *count > 0) {
    for (size_t c = 0; c < *count; c++)
      depth[c] = 0;
    for (size_t i = 0; i < n; i++)
      if (aggregate[i] >= 0)
        depth[aggregate[i]]++;
    for (size_t i = 0; i < n; i++)
      if (aggregate[i] >= 0 && (size_t)depth[aggregate[i]] < min_fit)
        aggregate[i] = -1;
    *count = renumber(aggregate, n, depth);
  }
  free(is_root);
  for (int w = 0; w < 3; w++)
    free(work[w]);
  return ok ? CLMG_SUCCESS
            : clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                             "AMG: cannot allocate the aggregation's counters for %zu nodes", n);
}

/* The node matrix of a with `block` unknowns per node: entry (I, J) is the
 * Frobenius norm of the block of rows of node I and columns of node J (the
 * amalgamation pyamg's and hypre's strength measures use for systems). */
static clmg_status node_matrix(const clmg_csr *a, size_t block, clmg_csr *nodes,
                               clmg_error *error) {
  /* a node's rows are consecutive: each node row is the merge of `block`
   * rows of a, the node columns found with a marker per node column (one
   * pass to count, one to fill), then sorted within the row: O(nnz), where
   * triplets sorted as a whole took 2.9 s of an elasticity setup (353k rows) */
  size_t n = a->rows / block, m = a->cols / block;
  int64_t *mark = clmg_alloc_array(m ? m : 1, sizeof *mark);
  int64_t *position = clmg_alloc_array(m ? m : 1, sizeof *position);
  int64_t *row_ptr = clmg_alloc_zeroed_array(n + 1, sizeof *row_ptr);
  int32_t *col = NULL;
  double *val = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!mark || !position || !row_ptr)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "AMG: cannot allocate the node matrix of %zu nodes", n);
  for (size_t j = 0; status == CLMG_SUCCESS && j < m; j++)
    mark[j] = -1;
  for (size_t node = 0; status == CLMG_SUCCESS && node < n; node++) {
    int64_t count = 0;
    for (size_t i = node * block; i < (node + 1) * block; i++)
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
        size_t j = (size_t)a->col[k] / block;
        if (mark[j] != (int64_t)node) {
          mark[j] = (int64_t)node;
          count++;
        }
      }
    row_ptr[node + 1] = row_ptr[node] + count;
  }
  size_t nnz = status == CLMG_SUCCESS ? (size_t)row_ptr[n] : 0;
  if (status == CLMG_SUCCESS) {
    col = clmg_alloc_array(nnz ? nnz : 1, sizeof *col);
    val = clmg_alloc_zeroed_array(nnz ? nnz : 1, sizeof *val);
    if (!col || !val)
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "AMG: cannot allocate the node matrix of %zu entries", nnz);
  }
  for (size_t j = 0; status == CLMG_SUCCESS && j < m; j++)
    mark[j] = -1;
  for (size_t node = 0; status == CLMG_SUCCESS && node < n; node++) {
    int64_t next = row_ptr[node];
    for (size_t i = node * block; i < (node + 1) * block; i++)
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
        size_t j = (size_t)a->col[k] / block;
        if (mark[j] != (int64_t)node) {
          mark[j] = (int64_t)node;
          position[j] = next;
          col[next++] = (int32_t)j;
        }
        val[position[j]] += a->val[k] * a->val[k];
      }
    /* the columns in order (insertion sort: a node row holds a few dozen) */
    for (int64_t k = row_ptr[node] + 1; k < row_ptr[node + 1]; k++) {
      int32_t c = col[k];
      double v = val[k];
      int64_t q = k;
      for (; q > row_ptr[node] && col[q - 1] > c; q--) {
        col[q] = col[q - 1];
        val[q] = val[q - 1];
      }
      col[q] = c;
      val[q] = v;
    }
  }
  for (size_t k = 0; status == CLMG_SUCCESS && k < nnz; k++)
    val[k] = sqrt(val[k]);
  free(mark);
  free(position);
  if (status != CLMG_SUCCESS) {
    free(row_ptr);
    free(col);
    free(val);
    return status;
  }
  nodes->rows = n;
  nodes->cols = m;
  nodes->row_ptr = row_ptr;
  nodes->col = col;
  nodes->val = val;
  return CLMG_SUCCESS;
}

/* The setup's clock: the wall time less the kernels' compile (or load)
 * time so far (context given), so that the phases leave compilation out as
 * the solver's do (clmg_solver_setup_seconds). */
static double setup_clock(const clmg_context *context) {
  return clmg_seconds_now() - (context ? clmg_context_program_seconds(context) : 0);
}

/* A setup phase's seconds: with o->times given, the setup_clock time since
 * *mark is added to the phase (after the context's queue is drained where
 * drain is 1 and something is queued) and *mark moves to now. */
static void lap(clmg_context *context, int drain, const clmg_amg_options *o, double *phase,
                double *mark) {
  if (!o->times)
    return;
  if (context && drain)
    clmg_finish_queued(context);
  double now = setup_clock(context);
  *phase += now - *mark;
  *mark = now;
}

/* The aggregates of a's nodes (block unknowns each), written per row: the
 * rows of a node share its aggregate. min_fit as for aggregate_graph. */
static clmg_status aggregate_rows(const clmg_csr *a, const clmg_amg_options *o, size_t block,
                                  size_t min_fit, int32_t *aggregate, size_t *count,
                                  clmg_error *error) {
  double mark = clmg_seconds_now();
  clmg_csr nodes = {0};
  const clmg_csr *strength_of = a;
  clmg_status status = CLMG_SUCCESS;
  if (block > 1) {
    status = node_matrix(a, block, &nodes, error);
    strength_of = &nodes;
  }
  clmg_amg_graph g = {0};
  if (status == CLMG_SUCCESS)
    status = strong_graph(strength_of, o->strength_threshold, &g, error);
  if (o->times)
    lap(NULL, 0, o, &o->times->strength_s, &mark);
  if (status == CLMG_SUCCESS)
    status = aggregate_graph(&g, o, min_fit, aggregate, count, error);
  /* spread the nodes' aggregates over their rows, from the last row down
   * (row i reads entry i / block <= i, not yet overwritten) */
  for (size_t i = a->rows; status == CLMG_SUCCESS && block > 1 && i-- > 0;)
    aggregate[i] = aggregate[i / block];
  clmg_amg_graph_free(&g);
  clmg_csr_free(&nodes);
  if (o->times)
    lap(NULL, 0, o, &o->times->aggregate_s, &mark);
  return status;
}

/* The unknowns per aggregate the near-nullspace fit needs: an aggregate of
 * `candidates` vectors needs at least as many unknowns. */
static size_t fit_nodes(size_t candidates, size_t block) {
  return (candidates + block - 1) / block;
}

clmg_status clmg_amg_aggregate(const clmg_csr *a, const clmg_amg_options *options,
                               int32_t *aggregate, size_t *count, clmg_error *error) {
  clmg_error_clear(error);
  clmg_amg_options resolved;
  const clmg_amg_options *o = &resolved;
  clmg_status status = check_input(a, options, &resolved, error);
  if (status == CLMG_SUCCESS && (!aggregate || !count))
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "aggregate or count is NULL");
  if (status != CLMG_SUCCESS)
    return status;
  resolved.times = NULL;
  if (resolved.roots == CLMG_AMG_ROOTS_AUTO)
    resolved.roots = CLMG_AMG_ROOTS_ORDERED; /* on the host */
  size_t block = block_of(o);
  size_t candidates = o->num_candidates > 0 ? (size_t)o->num_candidates : block;
  return aggregate_rows(a, o, block, fit_nodes(candidates, block), aggregate, count, error);
}

/* ---- near-nullspace ---- */

clmg_status clmg_amg_rigid_body_modes(size_t nodes, int dim, const double *coordinates,
                                      double *modes, int *count, clmg_error *error) {
  clmg_error_clear(error);
  if ((dim != 2 && dim != 3) || (nodes > 0 && (!coordinates || !modes)) || !count)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "rigid-body modes need dimension 2 or 3 (not %d), the coordinates, the "
                          "modes' memory and the count",
                          dim);
  size_t d = (size_t)dim, n = nodes * d;
  int modes_count = dim == 2 ? 3 : 6;
  double centre[3] = {0, 0, 0};
  for (size_t i = 0; i < nodes; i++)
    for (size_t c = 0; c < d; c++) {
      if (!isfinite(coordinates[i * d + c]))
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "rigid-body modes: node %zu has a coordinate that is not finite",
                              i + 1);
      centre[c] += coordinates[i * d + c] / (double)nodes;
    }
  for (size_t k = 0; k < (size_t)modes_count * n; k++)
    modes[k] = 0;
  for (size_t i = 0; i < nodes; i++) {
    double x = coordinates[i * d] - centre[0], y = coordinates[i * d + 1] - centre[1];
    double z = dim == 3 ? coordinates[i * d + 2] - centre[2] : 0;
    for (size_t c = 0; c < d; c++)
      modes[c * n + i * d + c] = 1; /* translations */
    double *rotation = modes + d * n + i * d;
    if (dim == 2) {
      rotation[0] = -y;
      rotation[1] = x;
    } else {
      rotation[0] = -y; /* about z */
      rotation[1] = x;
      rotation[n + 1] = -z; /* about x */
      rotation[n + 2] = y;
      rotation[2 * n + 0] = z; /* about y */
      rotation[2 * n + 2] = -x;
    }
  }
  *count = modes_count;
  return CLMG_SUCCESS;
}

/* The tentative prolongator fitted to the candidates (pyamg's
 * fit_candidates): for each aggregate, the rows B_j of the candidates B (n x
 * k, column-major) on its unknowns are factored B_j = Q_j R_j by modified
 * Gram-Schmidt (twice, for orthogonality); P~ holds Q_j in the aggregate's k
 * columns [j k, j k + k), and the coarse candidates are the R_j (count k x
 * k, column-major). A candidate dependent on the earlier ones within an
 * aggregate (rank deficiency: two nodes cannot carry six rigid-body modes)
 * gets a unit vector orthogonal to the others instead, so P~ keeps
 * orthonormal columns and the coarse level no empty row. Unknowns without an
 * aggregate have an empty row. *coarse_candidates is malloc'ed. */
static clmg_status fit_candidates(size_t n, const int32_t *aggregate, size_t count, const double *b,
                                  size_t k, clmg_csr *tentative, double **coarse_candidates,
                                  clmg_error *error) {
  size_t nc = count * k;
  *tentative = (clmg_csr){n, nc, NULL, NULL, NULL};
  *coarse_candidates = NULL;
  int64_t *start = clmg_alloc_zeroed_array(count + 1, sizeof *start);
  int32_t *members = clmg_alloc_array(n ? n : 1, sizeof *members);
  double *r = clmg_alloc_zeroed_array(nc * k > 0 ? nc * k : 1, sizeof *r);
  double *q = NULL;
  tentative->row_ptr = clmg_alloc_array(n + 1, sizeof *tentative->row_ptr);
  size_t entries = 0, largest = 0;
  for (size_t i = 0; i < n; i++)
    entries += aggregate[i] >= 0 ? k : 0;
  tentative->col = clmg_alloc_array(entries ? entries : 1, sizeof *tentative->col);
  tentative->val = clmg_alloc_array(entries ? entries : 1, sizeof *tentative->val);
  if (start && members) {
    for (size_t i = 0; i < n; i++)
      if (aggregate[i] >= 0)
        start[aggregate[i] + 1]++;
    for (size_t j = 0; j < count; j++) {
      largest = (size_t)start[j + 1] > largest ? (size_t)start[j + 1] : largest;
      start[j + 1] += start[j];
    }
    q = clmg_alloc_array(largest * k > 0 ? largest * k : 1, sizeof *q);
  }
  if (!start || !members || !r || !q || !tentative->row_ptr || !tentative->col || !tentative->val) {
    free(start);
    free(members);
    free(r);
    free(q);
    clmg_csr_free(tentative);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the tentative prolongator of %zu rows and %zu "
                          "candidates",
                          n, k);
  }
  /* the members of each aggregate in row order (start[] advances, then is
   * restored) */
  for (size_t i = 0; i < n; i++)
    if (aggregate[i] >= 0)
      members[start[aggregate[i]]++] = (int32_t)i;
  for (size_t j = count; j > 0; j--)
    start[j] = start[j - 1];
  start[0] = 0;
  /* P~'s rows: unknown i of aggregate j has entries in columns j k .. j k +
   * k - 1 (filled below) */
  tentative->row_ptr[0] = 0;
  for (size_t i = 0; i < n; i++)
    tentative->row_ptr[i + 1] = tentative->row_ptr[i] + (aggregate[i] >= 0 ? (int64_t)k : 0);
  for (size_t j = 0; j < count; j++) {
    size_t m = (size_t)(start[j + 1] - start[j]);
    const int32_t *rows = members + start[j];
    double *rj = r + j * k; /* R_j(a, c) at r[c * nc + j k + a] */
    size_t unit = 0;        /* the next unit vector to try for a deficient column */
    for (size_t c = 0; c < k; c++) {
      double *qc = q + c * m;
      double norm0 = 0;
      for (size_t t = 0; t < m; t++) {
        qc[t] = b[c * n + (size_t)rows[t]];
        norm0 += qc[t] * qc[t];
      }
      norm0 = sqrt(norm0);
      int replaced = 0;
      for (;;) {
        for (int pass = 0; pass < 2; pass++)
          for (size_t e = 0; e < c; e++) {
            const double *qe = q + e * m;
            double dot = 0;
            for (size_t t = 0; t < m; t++)
              dot += qe[t] * qc[t];
            for (size_t t = 0; t < m; t++)
              qc[t] -= dot * qe[t];
            if (!replaced)
              rj[c * nc + e] += dot;
          }
        double norm = 0;
        for (size_t t = 0; t < m; t++)
          norm += qc[t] * qc[t];
        norm = sqrt(norm);
        if (norm > 1e-10 * norm0 && norm > 1e-300) {
          if (!replaced)
            rj[c * nc + c] = norm;
          for (size_t t = 0; t < m; t++)
            qc[t] /= norm;
          break;
        }
        /* dependent (or zero on this aggregate): R keeps a zero there; try
         * the next unit vector (m >= k: the aggregation saw to it) */
        replaced = 1;
        if (unit >= m) {
          for (size_t t = 0; t < m; t++)
            qc[t] = 0;
          break;
        }
        for (size_t t = 0; t < m; t++)
          qc[t] = t == unit ? 1 : 0;
        norm0 = 1;
        unit++;
      }
    }
    for (size_t t = 0; t < m; t++) {
      int64_t at = tentative->row_ptr[rows[t]];
      for (size_t c = 0; c < k; c++) {
        tentative->col[at + (int64_t)c] = (int32_t)(j * k + c);
        tentative->val[at + (int64_t)c] = q[c * m + t];
      }
    }
  }
  free(start);
  free(members);
  free(q);
  *coarse_candidates = r;
  return CLMG_SUCCESS;
}

/* A candidate's value that is not finite (clmg_host_first_flagged). */
static int not_finite(const void *data, size_t i) {
  return !isfinite(((const double *)data)[i]);
}

/* The candidates of the finest level (n x k column-major): the given ones,
 * checked on the host's cores and used where they are (*b points to them,
 * *owned NULL), or the constant per component of a node (malloc'ed into
 * *owned, *b too): elasticity P1 48's six rigid-body modes are 17 MB, which
 * a copy and a serial check walked twice more. */
static clmg_status finest_candidates(const clmg_amg_options *o, size_t n, size_t block,
                                     const double **b, double **owned, size_t *k,
                                     clmg_error *error) {
  *k = o->num_candidates > 0 ? (size_t)o->num_candidates : block;
  *b = NULL;
  *owned = NULL;
  if (o->num_candidates > 0) {
    size_t bad = clmg_host_first_flagged(n * *k, 65536, not_finite, o->candidates);
    if (bad < n * *k)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "AMG near-nullspace vector %zu has a value that is not finite "
                            "in row %zu",
                            bad / n + 1, bad % n + 1);
    *b = o->candidates;
    return CLMG_SUCCESS;
  }
  return CLMG_SUCCESS;
}

/* The default near-nullspace on the host where a path needs it there
 * (*b still NULL): the constant of each of the block's unknowns (vector c
 * is 1 on the rows of unknown c of its node), in *owned. The setup made on
 * the device fills its constant there instead (at Regular level 4 this
 * loop, with a division per entry, took 8 ms of the H200's setup). */
static clmg_status default_candidates(size_t n, size_t block, size_t k, const double **b,
                                      double **owned, clmg_error *error) {
  if (*b)
    return CLMG_SUCCESS;
  *owned = calloc(n * k > 0 ? n * k : 1, sizeof **owned);
  if (!*owned)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate %zu near-nullspace vectors of %zu rows", k, n);
  for (size_t c = 0; c < k; c++)
    for (size_t i = c; i < n; i += block)
      (*owned)[c * n + i] = 1;
  *b = *owned;
  return CLMG_SUCCESS;
}

/* ---- prolongator and Galerkin product ---- */

/* The largest eigenvalue of D^-1 A is estimated by POWER_STEPS power steps
 * from a fixed start in [0.5, 1.5): the largest ratio x.y / x.x seen, where
 * y = D^-1 A x (rows with a zero diagonal give 0), on the host or on the
 * device alike. */
enum { POWER_STEPS = 20 };

static const uint64_t POWER_SEED = 0x9e3779b97f4a7c15u;
static void power_start(size_t n, double *x) {
  clmg_fill_pseudo_random(x, n, POWER_SEED, 0, 0.5, 1.5);
}

static double largest_eigenvalue(const clmg_csr *a, const double *diagonal, double *x, double *y);

clmg_status clmg_amg_rho_host(const clmg_csr *a, double *rho, clmg_error *error) {
  size_t n = a->rows;
  double *diagonal = clmg_alloc_array(n ? n : 1, sizeof *diagonal);
  double *x = clmg_alloc_array(n ? n : 1, sizeof *x), *y = clmg_alloc_array(n ? n : 1, sizeof *y);
  clmg_status status = CLMG_SUCCESS;
  if (!diagonal || !x || !y) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "AMG: cannot allocate the eigenvalue estimate of %zu rows", n);
  } else {
    clmg_csr_diagonal(a, diagonal, NULL);
    *rho = largest_eigenvalue(a, diagonal, x, y);
  }
  free(diagonal);
  free(x);
  free(y);
  return status;
}

/* x = y * scale on all host cores */
typedef struct scale_job {
  const double *y;
  double *x, scale;
} scale_job;

static void scale_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const scale_job *job = data;
  for (size_t i = begin; i < end; i++)
    job->x[i] = job->y[i] * job->scale;
}

static double largest_eigenvalue(const clmg_csr *a, const double *diagonal, double *x, double *y) {
  size_t n = a->rows;
  power_start(n, x);
  double estimate = 0;
  for (int step = 0; step < POWER_STEPS; step++) {
    clmg_csr_spmv_host(1.0, a, x, 0.0, y); /* on all host cores */
    /* y = D^-1 A x and the sums, in the serial order: the estimate, and so
     * omega, as ever */
    double xx = 0, xy = 0, yy = 0;
    for (size_t i = 0; i < n; i++) {
      y[i] = diagonal[i] != 0 ? y[i] / diagonal[i] : 0;
      xx += x[i] * x[i];
      xy += x[i] * y[i];
      yy += y[i] * y[i];
    }
    if (!(xx > 0) || !(yy > 0))
      break;
    estimate = fmax(estimate, fabs(xy / xx));
    scale_job scaling = {y, x, 1.0 / sqrt(yy)};
    clmg_host_parallel_for(n, 65536, scale_range, &scaling);
  }
  return estimate;
}

/* omega / a_ii per row (0 where a_ii is 0) for P = (I - omega D^-1 A) P~,
 * omega = damping or 4/3 over lambda_max(D^-1 A); `scale` has a->rows
 * entries. */
static clmg_status prolongator_scale(const clmg_csr *a, double damping, double *scale,
                                     clmg_error *error) {
  size_t n = a->rows;
  double *x = clmg_alloc_array(n ? n : 1, sizeof *x), *y = clmg_alloc_array(n ? n : 1, sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the eigenvalue estimate of %zu rows", n);
  }
  clmg_csr_diagonal(a, scale, NULL);
  double omega = damping;
  if (omega == 0) {
    double lambda = largest_eigenvalue(a, scale, x, y);
    omega = lambda > 0 ? 4.0 / 3.0 / lambda : 0;
  }
  for (size_t i = 0; i < n; i++)
    scale[i] = scale[i] != 0 ? omega / scale[i] : 0;
  free(x);
  free(y);
  return CLMG_SUCCESS;
}

/* The rows [begin, end) of P = -scale (A P~) + P~ in place in the product:
 * the first row whose P~ entry the product lacks (no stored diagonal) in
 * bad[range], which stops the range. Each row's own entries: on all host
 * cores, the serial loop's values bit for bit. */
typedef struct smoothing_job {
  clmg_csr *product;
  const clmg_csr *tentative;
  const double *scale;
  size_t bad[CLMG_MAX_HOST_THREADS];
} smoothing_job;

static void smoothing_range(void *data, size_t range, size_t begin, size_t end) {
  smoothing_job *job = data;
  clmg_csr *product = job->product;
  const clmg_csr *tentative = job->tentative;
  for (size_t i = begin; i < end; i++) {
    for (int64_t k = product->row_ptr[i]; k < product->row_ptr[i + 1]; k++)
      product->val[k] *= -job->scale[i];
    int64_t k = product->row_ptr[i];
    for (int64_t t = tentative->row_ptr[i]; t < tentative->row_ptr[i + 1]; t++) {
      while (k < product->row_ptr[i + 1] && product->col[k] < tentative->col[t])
        k++;
      if (k == product->row_ptr[i + 1] || product->col[k] != tentative->col[t]) {
        job->bad[range] = i;
        return;
      }
      product->val[k] += tentative->val[t];
    }
  }
}

/* P = (I - omega D^-1 A) P~ on the host, from the tentative P~ (P~'s
 * entries lie in the product A P~'s pattern where a_ii is stored: each is
 * found in its sorted row). */
static clmg_status smoothed_prolongator(const clmg_csr *a, const clmg_csr *tentative,
                                        double damping, clmg_csr *p, clmg_error *error) {
  size_t n = a->rows;
  clmg_csr product = {0};
  double *scale = clmg_alloc_array(n ? n : 1, sizeof *scale);
  clmg_status status = scale ? prolongator_scale(a, damping, scale, error)
                             : clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                              "AMG: cannot allocate %zu row scales", n);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_multiply(a, tentative, &product, error);
  if (status == CLMG_SUCCESS) {
    smoothing_job job = {.product = &product, .tentative = tentative, .scale = scale};
    for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
      job.bad[r] = n;
    clmg_host_parallel_for(n, 16384, smoothing_range, &job);
    size_t bad = n;
    for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
      bad = job.bad[r] < bad ? job.bad[r] : bad;
    if (bad < n)
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "AMG: row %zu of the matrix does not store its diagonal entry, "
                              "which the prolongator smoothing needs",
                              bad + 1);
  }
  if (status == CLMG_SUCCESS) {
    *p = product;
    product = (clmg_csr){0};
  }
  clmg_csr_free(&product);
  free(scale);
  return status;
}

/* A_c = P^T A P; R = P^T kept in *restriction where that is not NULL
 * (the engine takes it instead of transposing P again). */
static clmg_status galerkin(const clmg_csr *a, const clmg_csr *p, clmg_csr *coarse,
                            clmg_csr *restriction, clmg_error *error) {
  clmg_csr ap = {0}, r = {0};
  clmg_status status = clmg_csr_multiply(a, p, &ap, error);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_transpose(p, &r, error);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_multiply(&r, &ap, coarse, error);
  clmg_csr_free(&ap);
  if (status == CLMG_SUCCESS && restriction) {
    *restriction = r;
    r = (clmg_csr){0};
  }
  clmg_csr_free(&r);
  return status;
}

/* Fu et al. 2014's double partitioning: the patches of the fine level are
 * the aggregates of the coarse level's graph (roots patch_root_distance
 * apart), so no patch cuts an aggregate; a node outside every aggregate is
 * a patch of its own. */
static clmg_status make_patches(const clmg_csr *coarse, const int32_t *aggregate, size_t n,
                                size_t k, const clmg_amg_options *o, int32_t **patch,
                                clmg_error *error) {
  /* the coarse graph's nodes are the aggregates (k unknowns each) */
  clmg_amg_options coarse_options = *o;
  coarse_options.root_distance = o->patch_root_distance;
  coarse_options.min_aggregate_size = 0;
  coarse_options.block_size = (int)k;
  coarse_options.candidates = NULL;
  coarse_options.num_candidates = 0;
  int32_t *group = clmg_alloc_array(coarse->rows ? coarse->rows : 1, sizeof *group);
  *patch = clmg_alloc_array(n ? n : 1, sizeof **patch);
  if (!group || !*patch) {
    free(group);
    free(*patch);
    *patch = NULL;
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the patches of %zu rows", n);
  }
  size_t groups = 0;
  clmg_status status = clmg_amg_aggregate(coarse, &coarse_options, group, &groups, error);
  if (status == CLMG_SUCCESS) {
    /* aggregates that no group took (isolated on the coarse graph) and
     * nodes without an aggregate get patches of their own */
    size_t next = groups;
    for (size_t c = 0; c < coarse->rows; c++)
      if (group[c] < 0)
        group[c] = (int32_t)next++;
    for (size_t i = 0; i < n; i++)
      (*patch)[i] = aggregate[i] >= 0 ? group[(size_t)aggregate[i] * k] : (int32_t)next++;
  }
  free(group);
  if (status != CLMG_SUCCESS) {
    free(*patch);
    *patch = NULL;
  }
  return status;
}

/* ---- the products on the device ---- */

/* The context's message as the clmg_error of the host interface. */
static clmg_status device_failure(clmg_context *context, clmg_status status, clmg_error *error) {
  return clmg_error_set(error, status, "%s", clmg_context_message(context));
}

clmg_status clmg_amg_rho_device(clmg_context *context, const clmg_csr_device *a, double *rho) {
  size_t n = a->rows;
  clmg_dtype precision = clmg_vector_type(a->val);
  const char *options = clmg_real_options(context, precision);
  clmg_vector *x = NULL, *y = NULL, *sums = NULL;
  double *sums_host = clmg_alloc_array(3 * POWER_STEPS, sizeof *sums_host);
  clmg_kernel_args args;
  clmg_status status = CLMG_SUCCESS;
  *rho = 0;
  if (!sums_host)
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "AMG: no host memory for the eigenvalue estimate of %zu rows", n);
  /* x is filled, y and each step's sums written before they are read */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, n, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, precision, n, &y);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, precision, 3 * POWER_STEPS, &sums);
  /* the host's start (power_start), made on the device: at Regular level 4
   * the host's loop and upload took 15 ms of the H200's setup */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill_pseudo_random(x, POWER_SEED, 0, 0.5, 1.5);
  /* ROW_LANES work-items a row, as the CSR SpMV takes them (a row's lanes
   * in one work-group of the table's size, a power of two) */
  size_t nnz = clmg_csr_device_nnz(a);
  unsigned lanes = clmg_csr_row_lanes(context, n ? (double)nnz / (double)n : 0);
  char lanes_options[160];
  snprintf(lanes_options, sizeof lanes_options, "%s -DROW_LANES=%u", options, lanes);
  size_t local = context->params.work_group_size;
  size_t global = (n * lanes + local - 1) / local * local;
  /* each step leaves y.x, x.x and y.y in sums and normalises y there (the
   * next step's x): the host reads them once, after the last */
  for (int step = 0; step < POWER_STEPS && status == CLMG_SUCCESS; step++) {
    status = clmg_args_for_kernel(context, "amg", lanes_options, "amg_jacobi_spmv", &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, n);
      clmg_arg_buffer(&args, a->row_ptr->buffer);
      clmg_arg_buffer(&args, a->col->buffer);
      clmg_arg_buffer(&args, a->val->buffer);
      clmg_arg_buffer(&args, x->buffer);
      clmg_arg_buffer(&args, y->buffer);
      clmg_arg_local(&args, local * clmg_dtype_size(precision));
      status = clmg_args_end(&args);
    }
    if (status == CLMG_SUCCESS && n > 0)
      status = clmg_enqueue_1d(context, args.kernel, "amg_jacobi_spmv", global, local, NULL);
    if (status == CLMG_SUCCESS)
      status = clmg_dot3_to_device(y, x, x, sums, 3 * (size_t)step);
    if (status == CLMG_SUCCESS)
      status = clmg_scal_inverse_sqrt(sums, 3 * (size_t)step + 2, y);
    clmg_vector *next = y;
    y = x;
    x = next;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download_doubles(sums, sums_host);
  /* the host's loop over the steps' sums: it stops where the host's stops */
  for (int step = 0; step < POWER_STEPS && status == CLMG_SUCCESS; step++) {
    double xy = sums_host[3 * step], xx = sums_host[3 * step + 1], yy = sums_host[3 * step + 2];
    if (!(xx > 0) || !(yy > 0))
      break;
    *rho = fmax(*rho, fabs(xy / xx));
  }
  free(sums_host);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  clmg_vector_destroy(sums);
  return status;
}

/* The row scales omega / a_ii of P = (I - omega D^-1 A) P~ for the matrix
 * on the device, omega = damping or 4/3 over the estimate of
 * lambda_max(D^-1 A) (clmg_amg_rho_device). */
static clmg_status device_row_scale(clmg_context *context, const clmg_csr_device *a, double damping,
                                    clmg_vector **scale) {
  size_t n = a->rows;
  clmg_dtype precision = clmg_vector_type(a->val);
  const char *options = clmg_real_options(context, precision);
  double omega = damping;
  clmg_kernel_args args;
  /* every row's scale written by amg_row_scale */
  clmg_status status = clmg_vector_create_unset(context, precision, n, scale);
  if (status == CLMG_SUCCESS && omega == 0) {
    double estimate = 0;
    status = clmg_amg_rho_device(context, a, &estimate);
    omega = estimate > 0 ? 4.0 / 3.0 / estimate : 0;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_args_for_kernel(context, "amg", options, "amg_row_scale", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->val->buffer);
    clmg_arg_real(&args, precision, omega);
    clmg_arg_buffer(&args, (*scale)->buffer);
    status = clmg_launch_args(&args, n);
  }
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*scale);
    *scale = NULL;
  }
  return status;
}

/* P = (I - omega D^-1 A) P~ on the device (into p_device): the row scales
 * (device_row_scale), the product A P~, then P~ added in place
 * (cl/amg.cl). fine_device holds the fine matrix, tentative P~
 * (fit_candidates). */
static clmg_status device_smoothed_prolongator(clmg_context *context,
                                               const clmg_csr_device *fine_device,
                                               const clmg_csr_device *tentative, double damping,
                                               clmg_csr_device *p_device) {
  size_t n = tentative->rows;
  clmg_dtype precision = clmg_vector_type(fine_device->val);
  clmg_vector *scale_device = NULL;
  clmg_status status = device_row_scale(context, fine_device, damping, &scale_device);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_device_multiply(context, fine_device, tentative, p_device);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = clmg_args_for_kernel(context, "amg", clmg_real_options(context, precision),
                                  "amg_smooth_prolongator", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, n);
    clmg_arg_buffer(&args, p_device->row_ptr->buffer);
    clmg_arg_buffer(&args, p_device->col->buffer);
    clmg_arg_buffer(&args, p_device->val->buffer);
    clmg_arg_buffer(&args, tentative->row_ptr->buffer);
    clmg_arg_buffer(&args, tentative->col->buffer);
    clmg_arg_buffer(&args, tentative->val->buffer);
    clmg_arg_buffer(&args, scale_device->buffer);
    status = clmg_launch_args(&args, n);
  }
  clmg_vector_destroy(scale_device);
  return status;
}

/* A_c = P^T (A P) with the device transpose (kept in *r_device: the
 * engine's restriction) and products; A_c back on the host where download
 * is 1 (the next level's coarsening is made there, or
 * a smoother needs it), else only its size there. A device failure is a
 * status with the context's message in error. */
static clmg_status device_galerkin(clmg_context *context, const clmg_csr_device *fine_device,
                                   const clmg_csr_device *p_device, int download,
                                   clmg_csr_device *r_device, clmg_csr_device *coarse_device,
                                   clmg_csr *coarse, clmg_error *error) {
  clmg_csr_device ap = {0};
  clmg_status device = clmg_csr_device_transpose(context, p_device, r_device);
  if (device == CLMG_SUCCESS)
    device = clmg_csr_device_multiply(context, fine_device, p_device, &ap);
  if (device == CLMG_SUCCESS)
    device = clmg_csr_device_multiply(context, r_device, &ap, coarse_device);
  clmg_csr_device_free(&ap);
  if (device != CLMG_SUCCESS)
    return device_failure(context, device, error);
  if (download)
    return clmg_csr_device_download(coarse_device, coarse, error);
  *coarse = (clmg_csr){coarse_device->rows, coarse_device->cols, NULL, NULL, NULL};
  return CLMG_SUCCESS;
}

/* Every row of an aggregate stores its diagonal entry: P~'s entries of the
 * row then lie in the pattern of A P~, which the prolongator smoothing
 * (host and device alike) adds them into. */
static clmg_status check_aggregated_diagonals(const clmg_csr *a, const int32_t *aggregate,
                                              clmg_error *error) {
  for (size_t i = 0; i < a->rows; i++) {
    if (aggregate[i] < 0)
      continue;
    int stored = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1] && !stored; k++)
      stored = (size_t)a->col[k] == i;
    if (!stored)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "AMG: row %zu does not store its diagonal entry, which the "
                            "prolongator smoothing needs",
                            i + 1);
  }
  return CLMG_SUCCESS;
}

/* The roots of built level `built` (1: the finest) are root_distance apart,
 * those of the coarser (denser Galerkin) levels coarse_root_distance. */
static int level_root_distance(const clmg_amg_options *o, size_t built) {
  return built > 1 && o->coarse_root_distance > 0 ? o->coarse_root_distance : o->root_distance;
}

/* A coarse level of coarse_rows pays for itself (something coarsened, by
 * more than a tenth). */
static int worth_a_level(size_t coarse_rows, size_t fine_rows) {
  return coarse_rows > 0 && coarse_rows * 10 <= fine_rows * 9;
}

/* The device products of one level: P = (I - omega D^-1 A) P~ from the
 * tentative P~ into *p (tentative NULL: *p is given, classical), then R =
 * P^T into *r and A_c = R A P, back on the host where download is 1; the phases timed. */
static clmg_status device_level_products(clmg_context *context, const clmg_amg_options *o,
                                         const clmg_csr_device *fine,
                                         const clmg_csr_device *tentative, int download,
                                         clmg_csr_device *p, clmg_csr_device *r,
                                         clmg_csr_device *coarse_device, clmg_csr *coarse,
                                         double *mark, clmg_error *error) {
  clmg_status device = CLMG_SUCCESS;
  if (tentative)
    device = device_smoothed_prolongator(context, fine, tentative, o->prolongator_damping, p);
  if (o->times)
    lap(context, 1, o, &o->times->prolongator_s, mark);
  clmg_status status = device == CLMG_SUCCESS ? device_galerkin(context, fine, p, download, r,
                                                                coarse_device, coarse, error)
                                              : device_failure(context, device, error);
  if (o->times)
    lap(context, 1, o, &o->times->galerkin_s, mark);
  return status;
}

void clmg_amg_hierarchy_free(clmg_amg_hierarchy *h) {
  if (!h)
    return;
  for (int l = 0; l < h->num_levels; l++) {
    if (h->a)
      clmg_csr_free(&h->a[l]);
    if (h->p)
      clmg_csr_free(&h->p[l]);
    if (h->patch)
      free(h->patch[l]);
    if (h->device_a)
      clmg_csr_device_free(&h->device_a[l]);
    if (h->device_p)
      clmg_csr_device_free(&h->device_p[l]);
    if (h->device_r)
      clmg_csr_device_free(&h->device_r[l]);
  }
  free(h->a);
  free(h->p);
  free(h->patch);
  free(h->device_a);
  free(h->device_p);
  free(h->device_r);
  memset(h, 0, sizeof *h);
}

/* The levels from fine to coarse, on the host or (context given) with the
 * products on the device, then reversed: level 0 is the coarsest. */
/* borrow_finest: the hierarchy's finest host matrix is `a` itself (not a
 * copy), for a caller that drops the hierarchy before `a` and zeroes that
 * level before clmg_amg_hierarchy_free (clmg_amg_multigrid_create: a copy
 * of a matrix of millions of entries is a sizeable part of the setup). */
/* with_patches 0 skips the patches (a caller that smooths with Jacobi):
 * their aggregation of each coarse graph is a tenth of the setup.
 * host_levels 0: where a level is made on the device from start to end,
 * its host matrix holds only its size (a caller that hands the engine the
 * device arrays and needs no host matrix). */
/* finest (may be NULL): a device matrix of a; where it holds a's CSR arrays
 * in the hierarchy's precision, the finest level's device arrays are views
 * of them and nothing is uploaded. */
/* restrictions (may be NULL): on success, *restrictions is a malloc'ed
 * array of the num_levels restrictions R = P^T the host Galerkin products
 * made (r[l] maps level l to l - 1 as the engine wants; r[0] and the levels
 * made on the device empty), for clmg_multigrid_create's r; the caller
 * frees them. */
static clmg_status build(clmg_context *context, const clmg_csr *a, const clmg_matrix *finest,
                         const clmg_amg_options *options, int borrow_finest, int with_patches,
                         int host_levels, clmg_csr **restrictions, clmg_amg_hierarchy *out,
                         clmg_error *error) {
  clmg_error_clear(error);
  if (restrictions)
    *restrictions = NULL;
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  clmg_amg_options resolved;
  const clmg_amg_options *o = &resolved;
  clmg_status status = check_input(a, options, &resolved, error);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_amg_setup_times *times = o->times;
  double mark = setup_clock(context);
  if (times)
    memset(times, 0, sizeof *times);
  size_t capacity = (size_t)o->max_levels;
  /* the hierarchy's arrays, filled from the finest level on and reversed at
   * the end */
  clmg_amg_hierarchy h = {.num_levels = (int)capacity,
                          .a = calloc(capacity, sizeof(clmg_csr)),
                          .p = calloc(capacity, sizeof(clmg_csr)),
                          .patch = calloc(capacity, sizeof(int32_t *))};
  if (context) {
    h.device_a = calloc(capacity, sizeof(clmg_csr_device));
    h.device_p = calloc(capacity, sizeof(clmg_csr_device));
    h.device_r = calloc(capacity, sizeof(clmg_csr_device));
  }
  int32_t *aggregate = clmg_alloc_array(a->rows ? a->rows : 1, sizeof *aggregate);
  clmg_csr *levels_r = restrictions ? calloc(capacity, sizeof(clmg_csr)) : NULL;
  if (!h.a || !h.p || !h.patch || !aggregate || (restrictions && !levels_r) ||
      (context && (!h.device_a || !h.device_p || !h.device_r))) {
    free(aggregate);
    free(levels_r);
    clmg_amg_hierarchy_free(&h);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "AMG: no host memory");
  }
  clmg_csr *levels_a = h.a, *levels_p = h.p;
  size_t built = 1;
  if (borrow_finest)
    levels_a[0] = *a;
  else
    status = clmg_csr_copy(a, &levels_a[0], error);
  if (status == CLMG_SUCCESS && context) {
    clmg_dtype precision = clmg_context_device(context)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
    int viewed = finest && clmg_matrix_context(finest) == context &&
                 clmg_matrix_rows(finest) == a->rows && clmg_matrix_cols(finest) == a->cols &&
                 clmg_matrix_nnz(finest) == clmg_csr_nnz(a) &&
                 clmg_matrix_csr_arrays(finest, precision, &h.device_a[0]);
    clmg_status uploaded =
        viewed ? CLMG_SUCCESS : clmg_csr_device_upload(context, a, precision, &h.device_a[0]);
    if (uploaded != CLMG_SUCCESS)
      status = device_failure(context, uploaded, error);
  }
  if (times)
    lap(context, 1, o, &times->upload_s, &mark);
  /* the near-nullspace of the level being coarsened (n x k) and its
   * unknowns per node */
  size_t block = block_of(o), k = 0;
  const double *candidates = NULL;
  double *owned_candidates = NULL; /* what candidates points to where the setup made it */
  if (status == CLMG_SUCCESS && o->coarsening == CLMG_AMG_SMOOTHED_AGGREGATION)
    status = finest_candidates(o, a->rows, block, &candidates, &owned_candidates, &k, error);
  /* every level made on the device (clmg_amg_device_tentative): parallel
   * roots, one unknown per node and one candidate, no aggregates to
   * dissolve (the patches, where wanted, from the aggregates and the coarse
   * matrices brought back); its candidate in device_b. The automatic
   * choice of roots takes parallel ones where that puts the setup there. */
  int device_level = context && o->coarsening == CLMG_AMG_SMOOTHED_AGGREGATION && block == 1 &&
                     k == 1 && o->min_aggregate_size <= 1 && (host_levels || !with_patches);
  /* the automatic choice of roots takes parallel ones wherever the setup
   * runs on the device: its aggregation is the device's (the whole level,
   * or the aggregates alone for several unknowns per node or candidates) */
  if (resolved.roots == CLMG_AMG_ROOTS_AUTO)
    resolved.roots = context && o->coarsening == CLMG_AMG_SMOOTHED_AGGREGATION
                         ? CLMG_AMG_ROOTS_PARALLEL
                         : CLMG_AMG_ROOTS_ORDERED;
  int all_on_device = status == CLMG_SUCCESS && device_level && o->roots == CLMG_AMG_ROOTS_PARALLEL;
  if (status == CLMG_SUCCESS && o->coarsening == CLMG_AMG_SMOOTHED_AGGREGATION && !all_on_device)
    status = default_candidates(a->rows, block, k, &candidates, &owned_candidates, error);
  clmg_vector *device_b = NULL;
  if (all_on_device) {
    clmg_status device =
        clmg_vector_create_unset(context, clmg_vector_type(h.device_a[0].val), a->rows, &device_b);
    /* the default candidate, the constant, is filled there, not uploaded */
    if (device == CLMG_SUCCESS)
      device = o->num_candidates > 0 ? clmg_vector_upload_doubles(device_b, candidates)
                                     : clmg_vector_fill(device_b, 1.0);
    if (device != CLMG_SUCCESS)
      status = device_failure(context, device, error);
    if (times)
      lap(context, 1, o, &times->upload_s, &mark);
  }
  while (status == CLMG_SUCCESS && all_on_device && built < capacity &&
         levels_a[built - 1].rows > o->coarse_rows) {
    const clmg_csr_device *fine_device = &h.device_a[built - 1];
    clmg_csr_device tentative = {0};
    clmg_vector *coarse_b = NULL;
    size_t count = 0;
    clmg_status device = clmg_amg_device_tentative(
        context, fine_device, o->strength_threshold, level_root_distance(o, built), device_b,
        &tentative, &coarse_b, &count, NULL, with_patches ? aggregate : NULL);
    if (times)
      lap(context, 1, o, &times->aggregate_s, &mark);
    int stop = device == CLMG_SUCCESS && !worth_a_level(count, fine_device->rows);
    if (device != CLMG_SUCCESS)
      status = device_failure(context, device, error);
    else if (!stop)
      status = device_level_products(context, o, fine_device, &tentative, host_levels,
                                     &h.device_p[built], &h.device_r[built], &h.device_a[built],
                                     &levels_a[built], &mark, error);
    if (status == CLMG_SUCCESS && !stop && with_patches)
      status = make_patches(&levels_a[built], aggregate, fine_device->rows, 1, o,
                            &h.patch[built - 1], error);
    if (times)
      lap(context, 0, o, &times->patches_s, &mark);
    clmg_csr_device_free(&tentative);
    clmg_vector_destroy(device_b);
    device_b = coarse_b;
    if (stop)
      break;
    if (status == CLMG_SUCCESS)
      built++;
  }
  clmg_vector_destroy(device_b);
  /* aggregated on the device (parallel roots): the fit there too, the
   * candidates kept there from level to level (device_b), the aggregates
   * of the level there (device_aggregate) */
  int fit_on_device = status == CLMG_SUCCESS && !all_on_device && context &&
                      o->coarsening == CLMG_AMG_SMOOTHED_AGGREGATION &&
                      o->roots == CLMG_AMG_ROOTS_PARALLEL;
  device_b = NULL;
  if (fit_on_device) {
    clmg_status device = clmg_vector_create_unset(context, clmg_vector_type(h.device_a[0].val),
                                                  a->rows * k, &device_b);
    if (device == CLMG_SUCCESS)
      device = clmg_vector_upload_doubles(device_b, candidates);
    if (device != CLMG_SUCCESS)
      status = device_failure(context, device, error);
    if (times)
      lap(context, 1, o, &times->upload_s, &mark);
  }
  while (status == CLMG_SUCCESS && !all_on_device && built < capacity &&
         levels_a[built - 1].rows > o->coarse_rows) {
    const clmg_csr *fine = &levels_a[built - 1];
    size_t count = 0, coarse_rows = 0;
    clmg_csr tentative = {0}, classical = {0};
    clmg_csr_device tentative_device = {0};
    clmg_vector *device_aggregate = NULL, *coarse_b = NULL;
    double *coarse_candidates = NULL;
    int smoothed = o->coarsening == CLMG_AMG_SMOOTHED_AGGREGATION;
    if (!smoothed) {
      status = clmg_amg_classical_interpolation(fine, o, &classical, &coarse_rows, error);
      if (times)
        lap(context, 0, o, &times->aggregate_s, &mark);
    } else {
      /* the finest level's roots root_distance apart, the coarser (denser
       * Galerkin) levels' coarse_root_distance apart */
      clmg_amg_options level_options = *o;
      level_options.root_distance = level_root_distance(o, built);
      /* on the device with parallel roots: the node matrix, strength and
       * aggregates there, the rows' aggregates read back (the same as the
       * host's) */
      if (fit_on_device) {
        /* the aggregates come back for the patches alone */
        clmg_status device = clmg_amg_device_aggregate_rows(
            context, &h.device_a[built - 1], block, o->strength_threshold,
            level_options.root_distance, o->min_aggregate_size, fit_nodes(k, block),
            with_patches ? aggregate : NULL, &count, &device_aggregate);
        if (device != CLMG_SUCCESS)
          status = device_failure(context, device, error);
        if (times)
          lap(context, 1, o, &times->aggregate_s, &mark);
      } else {
        status = aggregate_rows(fine, &level_options, block, fit_nodes(k, block), aggregate, &count,
                                error);
        mark = setup_clock(context); /* aggregate_rows timed itself */
      }
      coarse_rows = count * k;
    }
    /* no aggregate, or too little coarsening to pay for a level: stop */
    if (status != CLMG_SUCCESS || !worth_a_level(coarse_rows, fine->rows)) {
      clmg_csr_free(&classical);
      clmg_vector_destroy(device_aggregate);
      break;
    }
    if (smoothed) {
      /* (the device aggregation checks the diagonals itself) */
      if (!fit_on_device)
        status = check_aggregated_diagonals(fine, aggregate, error);
      if (status == CLMG_SUCCESS && fit_on_device) {
        clmg_status device = clmg_amg_device_fit(context, device_aggregate, count, device_b, k,
                                                 &tentative_device, &coarse_b);
        if (device != CLMG_SUCCESS)
          status = device_failure(context, device, error);
      } else if (status == CLMG_SUCCESS) {
        status = fit_candidates(fine->rows, aggregate, count, candidates, k, &tentative,
                                &coarse_candidates, error);
      }
      if (times)
        lap(context, fit_on_device, o, &times->fit_s, &mark);
    }
    /* p[built] maps level built to built - 1 (fine), as the engine wants
     * after the reversal: classical P as it is, smoothed aggregation's
     * smoothed, on the device (context given) or the host; then A_c =
     * P^T A P where P is */
    if (status == CLMG_SUCCESS && context) {
      clmg_dtype precision = clmg_vector_type(h.device_a[built - 1].val);
      /* P~ fitted on the device is there already */
      clmg_status device =
          fit_on_device
              ? CLMG_SUCCESS
              : clmg_csr_device_upload(context, smoothed ? &tentative : &classical, precision,
                                       smoothed ? &tentative_device : &h.device_p[built]);
      /* A_c comes back where the next level is aggregated on the host or
       * the caller wants the host matrices */
      status = device == CLMG_SUCCESS
                   ? device_level_products(
                         context, o, &h.device_a[built - 1], smoothed ? &tentative_device : NULL,
                         !fit_on_device || host_levels, &h.device_p[built], &h.device_r[built],
                         &h.device_a[built], &levels_a[built], &mark, error)
                   : device_failure(context, device, error);
    } else if (status == CLMG_SUCCESS) {
      if (smoothed) {
        status =
            smoothed_prolongator(fine, &tentative, o->prolongator_damping, &levels_p[built], error);
      } else {
        levels_p[built] = classical;
        classical = (clmg_csr){0};
      }
      if (times)
        lap(context, 0, o, &times->prolongator_s, &mark);
      if (status == CLMG_SUCCESS)
        status = galerkin(fine, &levels_p[built], &levels_a[built],
                          levels_r ? &levels_r[built] : NULL, error);
      if (times)
        lap(context, 0, o, &times->galerkin_s, &mark);
    }
    /* the patches group whole aggregates (classical levels: none) */
    if (status == CLMG_SUCCESS && with_patches && smoothed)
      status =
          make_patches(&levels_a[built], aggregate, fine->rows, k, o, &h.patch[built - 1], error);
    if (times)
      lap(context, 0, o, &times->patches_s, &mark);
    clmg_csr_free(&tentative);
    clmg_csr_free(&classical);
    clmg_csr_device_free(&tentative_device);
    clmg_vector_destroy(device_aggregate);
    if (status == CLMG_SUCCESS) {
      built++;
      /* the coarse level has k unknowns per aggregate: its nodes */
      free(owned_candidates);
      candidates = owned_candidates = coarse_candidates;
      clmg_vector_destroy(device_b);
      device_b = coarse_b;
      block = k;
    } else {
      free(coarse_candidates);
      clmg_vector_destroy(coarse_b);
    }
  }
  clmg_vector_destroy(device_b);
  free(owned_candidates);
  free(aggregate);
  if (status != CLMG_SUCCESS) {
    if (borrow_finest)
      memset(&levels_a[0], 0, sizeof levels_a[0]);
    clmg_amg_hierarchy_free(&h);
    for (size_t l = 0; levels_r && l < capacity; l++)
      clmg_csr_free(&levels_r[l]);
    free(levels_r);
    return status;
  }
  /* reverse in place: engine level l is built level built - 1 - l, and the
   * P that maps engine level l - 1 to l is the one made at built level
   * built - l (p[0] stays empty); the slots past `built` are empty */
  for (size_t l = 0, m = built - 1; l < m; l++, m--) {
    SWAP(clmg_csr, levels_a[l], levels_a[m]);
    SWAP(int32_t *, h.patch[l], h.patch[m]);
    if (context)
      SWAP(clmg_csr_device, h.device_a[l], h.device_a[m]);
  }
  for (size_t l = 1, m = built - 1; l < m; l++, m--) {
    SWAP(clmg_csr, levels_p[l], levels_p[m]);
    if (levels_r)
      SWAP(clmg_csr, levels_r[l], levels_r[m]);
    if (context) {
      SWAP(clmg_csr_device, h.device_p[l], h.device_p[m]);
      SWAP(clmg_csr_device, h.device_r[l], h.device_r[m]);
    }
  }
  h.num_levels = (int)built;
  *out = h;
  if (restrictions)
    *restrictions = levels_r;
  if (times) {
    double total = 0;
    lap(context, 1, o, &total, &mark);
    times->total_s = times->upload_s + times->strength_s + times->aggregate_s + times->fit_s +
                     times->prolongator_s + times->galerkin_s + times->patches_s + total;
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_amg_hierarchy_build(const clmg_csr *a, const clmg_amg_options *options,
                                     clmg_amg_hierarchy *out, clmg_error *error) {
  return build(NULL, a, NULL, options, 0, 1, 1, NULL, out, error);
}

clmg_status clmg_amg_hierarchy_build_device(clmg_context *context, const clmg_csr *a,
                                            const clmg_amg_options *options,
                                            clmg_amg_hierarchy *out, clmg_error *error) {
  if (!context)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the context is NULL");
  return build(context, a, NULL, options, 0, 1, 1, NULL, out, error);
}

clmg_status clmg_amg_patch_smoother_factory(void *smoothing, clmg_context *context, int level,
                                            const clmg_operator *a, clmg_smoother *smoother) {
  (void)level;
  const clmg_amg_patch_smoothing *ps = smoothing;
  const clmg_amg_hierarchy *h = ps ? ps->hierarchy : NULL;
  int gauss_seidel = ps && ps->gauss_seidel;
  for (int l = 0; h && l < h->num_levels; l++) {
    if (h->a[l].rows != a->rows)
      continue;
    if (gauss_seidel)
      return clmg_smoother_gauss_seidel(context, &h->a[l], 1, ps->omega, smoother);
    if (h->patch[l])
      return clmg_smoother_patch_jacobi(context, &h->a[l], h->patch[l], ps->inner, ps->omega,
                                        ps->inner_omega, smoother);
  }
  memset(smoother, 0, sizeof *smoother);
  return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                   "AMG %s smoother: no level of the hierarchy has %zu rows%s",
                   gauss_seidel ? "Gauss-Seidel" : "patch", a->rows,
                   gauss_seidel ? "" : " and patches");
}

clmg_status clmg_amg_multigrid_create(clmg_context *context, const clmg_csr *a,
                                      const clmg_amg_options *amg_options,
                                      const clmg_multigrid_options *mg_options,
                                      const clmg_amg_patch_smoothing *patch,
                                      clmg_multigrid **multigrid) {
  return clmg_amg_multigrid_create_on(context, a, NULL, amg_options, mg_options, patch, multigrid);
}

clmg_status clmg_amg_multigrid_create_on(clmg_context *context, const clmg_csr *a,
                                         clmg_matrix *matrix, const clmg_amg_options *amg_options,
                                         const clmg_multigrid_options *mg_options,
                                         const clmg_amg_patch_smoothing *patch,
                                         clmg_multigrid **multigrid) {
  if (!context || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  double start = setup_clock(context);
  /* the device table's choice: on a CPU the host products are as fast, and
   * device arrays would be one more copy of every level */
  int on_device = context->params.amg_setup_on_device;
  clmg_amg_hierarchy h = {0};
  clmg_error error = {{0}};
  /* the hierarchy borrows a as its finest level: it is dropped before we
   * return, and that level zeroed first */
  /* the patch and Gauss-Seidel smoothers are made from the levels' host
   * matrices */
  /* the host products' restrictions go to the engine, which would
   * otherwise transpose every P again */
  clmg_csr *r = NULL;
  clmg_status status = build(on_device ? context : NULL, a, matrix, amg_options, 1,
                             patch != NULL && !patch->gauss_seidel, patch != NULL,
                             on_device ? NULL : &r, &h, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "building the AMG hierarchy: %s", error.message);
  clmg_multigrid_options options;
  if (mg_options) {
    options = *mg_options;
  } else {
    clmg_multigrid_options_defaults(&options);
    /* no options at all: the robust default, Chebyshev 3 + 3 */
    if (!patch) {
      options.smoother = CLMG_SMOOTHER_CHEBYSHEV;
      options.pre_smoothing = options.post_smoothing = 3;
    }
  }
  clmg_amg_patch_smoothing patches = {0};
  if (patch) {
    patches = *patch;
    patches.hierarchy = &h;
    options.smoother_factory = clmg_amg_patch_smoother_factory;
    options.smoother_factory_data = &patches;
  }
  status = on_device
               ? clmg_multigrid_create_from_csr_device_borrowing(context, h.num_levels, h.device_a,
                                                                 h.device_p, h.device_r, matrix,
                                                                 &options, multigrid)
               : clmg_multigrid_create(context, h.num_levels, h.a, h.p, r, &options, multigrid);
  for (int l = 0; r && l < h.num_levels; l++)
    clmg_csr_free(&r[l]);
  free(r);
  memset(&h.a[h.num_levels - 1], 0, sizeof h.a[0]); /* borrowed */
  clmg_amg_hierarchy_free(&h);
  clmg_amg_setup_times *times = amg_options ? amg_options->times : NULL;
  if (times && status == CLMG_SUCCESS) {
    clmg_finish_queued(context);
    double total = setup_clock(context) - start;
    times->engine_s = total - times->total_s;
    times->total_s = total;
  }
  return status;
}
