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
#include "la/internal.h"

#include "clmg/amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clmg_amg_options_defaults(clmg_amg_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->root_distance = 2;
  options->patch_root_distance = 1;
  options->coarse_rows = 256;
  options->max_levels = 20;
}

static clmg_status check_options(const clmg_amg_options *o, clmg_error *error) {
  if (!(o->strength_threshold >= 0 && o->strength_threshold <= 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG strength threshold %g is outside [0, 1]", o->strength_threshold);
  if (o->root_distance < 1 || o->root_distance > 4)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG root distance %d is outside [1, 4]", o->root_distance);
  if (o->patch_root_distance < 1 || o->patch_root_distance > 4)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG patch root distance %d is outside [1, 4]", o->patch_root_distance);
  if (o->max_levels < 1)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "AMG max_levels is %d (at least 1)",
                          o->max_levels);
  if (!(o->prolongator_damping >= 0 && o->prolongator_damping < 2))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "AMG prolongator damping %g is outside [0, 2)", o->prolongator_damping);
  return CLMG_SUCCESS;
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

/* ---- strength of connection ---- */

/* The strong graph: row i lists its strong neighbours (no diagonal). */
typedef struct graph {
  size_t n;
  int64_t *start; /* n + 1 */
  int32_t *neighbour;
} graph;

static void graph_free(graph *g) {
  free(g->start);
  free(g->neighbour);
  memset(g, 0, sizeof *g);
}

static clmg_status strong_graph(const clmg_csr *a, double theta, graph *g, clmg_error *error) {
  size_t n = a->rows, nnz = clmg_csr_nnz(a);
  double *diagonal = clmg_alloc_array(n ? n : 1, sizeof *diagonal);
  g->n = n;
  g->start = clmg_alloc_zeroed_array(n + 1, sizeof *g->start);
  g->neighbour = clmg_alloc_array(nnz ? nnz : 1, sizeof *g->neighbour);
  if (!diagonal || !g->start || !g->neighbour) {
    free(diagonal);
    graph_free(g);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the strength graph of %zu entries", nnz);
  }
  clmg_csr_diagonal(a, diagonal, NULL);
  int64_t count = 0;
  for (size_t i = 0; i < n; i++) {
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      size_t j = (size_t)a->col[k];
      double value = fabs(a->val[k]);
      if (j != i && value > 0 && value >= theta * sqrt(fabs(diagonal[i] * diagonal[j])))
        g->neighbour[count++] = (int32_t)j;
    }
    g->start[i + 1] = count;
  }
  free(diagonal);
  return CLMG_SUCCESS;
}

/* ---- aggregation ---- */

/* Roots: visited in order, a node becomes a root unless a root lies within
 * `distance` strong edges; each root excludes its distance-neighbourhood
 * (a breadth-first walk with `depth` as the visited mark). Isolated nodes
 * are never roots. */
static void choose_roots(const graph *g, int distance, uint8_t *is_root, int32_t *depth,
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
 * strong edges with, sweep after sweep (each from the state before it),
 * until a sweep changes nothing. */
static void join_neighbours(const graph *g, int32_t *aggregate, int32_t *next, int32_t *seen,
                            int32_t *weight) {
  size_t n = g->n;
  for (;;) {
    size_t changed = 0;
    memcpy(next, aggregate, n * sizeof *next);
    for (size_t i = 0; i < n; i++) {
      if (aggregate[i] >= 0)
        continue;
      int32_t best = -1, best_weight = 0;
      /* count per neighbouring aggregate (seen[] holds who counted last) */
      for (int64_t k = g->start[i]; k < g->start[i + 1]; k++) {
        int32_t c = aggregate[g->neighbour[k]];
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
        next[i] = best;
        changed++;
      }
    }
    memcpy(aggregate, next, n * sizeof *aggregate);
    if (changed == 0)
      return;
  }
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

static clmg_status aggregate_graph(const graph *g, const clmg_amg_options *o, int32_t *aggregate,
                                   size_t *count, clmg_error *error) {
  size_t n = g->n;
  uint8_t *is_root = clmg_alloc_array(n ? n : 1, 1);
  int32_t *work[4];
  int ok = is_root != NULL;
  for (int w = 0; w < 4; w++) {
    work[w] = clmg_alloc_array(n ? n : 1, sizeof *work[w]);
    ok = ok && work[w] != NULL;
  }
  if (!ok) {
    free(is_root);
    for (int w = 0; w < 4; w++)
      free(work[w]);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "AMG: cannot allocate the aggregation of %zu nodes", n);
  }
  int32_t *depth = work[0], *queue = work[1], *next = work[2], *seen = work[3];
  choose_roots(g, o->root_distance, is_root, depth, queue);
  int32_t roots = 0;
  for (size_t i = 0; i < n; i++)
    aggregate[i] = is_root[i] ? roots++ : -1;
  /* depth and queue are free again: counters of join_neighbours */
  for (size_t i = 0; i < n; i++)
    seen[i] = -1;
  join_neighbours(g, aggregate, next, seen, queue);
  *count = renumber(aggregate, n, depth);

  if (o->min_aggregate_size > 1 && *count > 1) {
    /* sizes in depth[]; dissolve the small ones (unless all are small) */
    for (size_t c = 0; c < *count; c++)
      depth[c] = 0;
    for (size_t i = 0; i < n; i++)
      if (aggregate[i] >= 0)
        depth[aggregate[i]]++;
    size_t kept = 0;
    for (size_t c = 0; c < *count; c++)
      kept += (size_t)depth[c] >= o->min_aggregate_size;
    if (kept > 0) {
      for (size_t i = 0; i < n; i++)
        if (aggregate[i] >= 0 && (size_t)depth[aggregate[i]] < o->min_aggregate_size)
          aggregate[i] = -1;
      for (size_t i = 0; i < n; i++)
        seen[i] = -1;
      join_neighbours(g, aggregate, next, seen, queue);
      *count = renumber(aggregate, n, depth);
    }
  }
  free(is_root);
  for (int w = 0; w < 4; w++)
    free(work[w]);
  return CLMG_SUCCESS;
}

clmg_status clmg_amg_aggregate(const clmg_csr *a, const clmg_amg_options *options,
                               int32_t *aggregate, size_t *count, clmg_error *error) {
  clmg_error_clear(error);
  clmg_amg_options defaults;
  clmg_amg_options_defaults(&defaults);
  const clmg_amg_options *o = options ? options : &defaults;
  clmg_status status = check_square(a, error);
  if (status == CLMG_SUCCESS)
    status = check_options(o, error);
  if (status == CLMG_SUCCESS && (!aggregate || !count))
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "aggregate or count is NULL");
  if (status != CLMG_SUCCESS)
    return status;
  graph g = {0};
  status = strong_graph(a, o->strength_threshold, &g, error);
  if (status == CLMG_SUCCESS)
    status = aggregate_graph(&g, o, aggregate, count, error);
  graph_free(&g);
  return status;
}

/* ---- prolongator and Galerkin product ---- */

/* An estimate of the largest eigenvalue of D^-1 A: power steps from a fixed
 * start, the largest ratio seen (rows with a zero diagonal are skipped). */
static double largest_eigenvalue(const clmg_csr *a, const double *diagonal, double *x, double *y) {
  size_t n = a->rows;
  uint64_t state = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < n; i++) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    x[i] = 0.5 + (double)(state >> 11) / 9007199254740992.0;
  }
  double estimate = 0;
  for (int step = 0; step < 20; step++) {
    clmg_csr_spmv_host(1.0, a, x, 0.0, y);
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
    double scale = 1.0 / sqrt(yy);
    for (size_t i = 0; i < n; i++)
      x[i] = y[i] * scale;
  }
  return estimate;
}

/* P = (I - omega D^-1 A) P~ for the aggregates of a; P has a->rows rows and
 * `count` columns. */
static clmg_status smoothed_prolongator(const clmg_csr *a, const int32_t *aggregate, size_t count,
                                        double damping, clmg_csr *p, clmg_error *error) {
  size_t n = a->rows;
  clmg_csr tentative = {n, count, NULL, NULL, NULL}, product = {0};
  tentative.row_ptr = clmg_alloc_array(n + 1, sizeof *tentative.row_ptr);
  tentative.col = clmg_alloc_array(n ? n : 1, sizeof *tentative.col);
  tentative.val = clmg_alloc_array(n ? n : 1, sizeof *tentative.val);
  double *diagonal = clmg_alloc_array(n ? n : 1, sizeof *diagonal);
  double *x = clmg_alloc_array(n ? n : 1, sizeof *x), *y = clmg_alloc_array(n ? n : 1, sizeof *y);
  clmg_status status = CLMG_SUCCESS;
  if (!tentative.row_ptr || !tentative.col || !tentative.val || !diagonal || !x || !y)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "AMG: cannot allocate the prolongator of %zu rows", n);
  if (status == CLMG_SUCCESS) {
    tentative.row_ptr[0] = 0;
    for (size_t i = 0; i < n; i++) {
      int64_t k = tentative.row_ptr[i];
      if (aggregate[i] >= 0) {
        tentative.col[k] = aggregate[i];
        tentative.val[k++] = 1.0;
      }
      tentative.row_ptr[i + 1] = k;
    }
    clmg_csr_diagonal(a, diagonal, NULL);
    double omega = damping;
    if (omega == 0) {
      double lambda = largest_eigenvalue(a, diagonal, x, y);
      omega = lambda > 0 ? 4.0 / 3.0 / lambda : 0;
    }
    status = clmg_csr_multiply(a, &tentative, &product, error);
    if (status == CLMG_SUCCESS) {
      /* P_ij = P~_ij - omega / a_ii (A P~)_ij; P~'s entry is in the product's
       * pattern when a_ii is stored */
      for (size_t i = 0; i < n; i++) {
        double scale = diagonal[i] != 0 ? omega / diagonal[i] : 0;
        for (int64_t k = product.row_ptr[i]; k < product.row_ptr[i + 1]; k++)
          product.val[k] = (product.col[k] == aggregate[i] ? 1.0 : 0.0) - scale * product.val[k];
      }
      *p = product;
      product = (clmg_csr){0};
    }
  }
  clmg_csr_free(&tentative);
  clmg_csr_free(&product);
  free(diagonal);
  free(x);
  free(y);
  return status;
}

/* A_c = P^T A P. */
static clmg_status galerkin(const clmg_csr *a, const clmg_csr *p, clmg_csr *coarse,
                            clmg_error *error) {
  clmg_csr ap = {0}, r = {0};
  clmg_status status = clmg_csr_multiply(a, p, &ap, error);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_transpose(p, &r, error);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_multiply(&r, &ap, coarse, error);
  clmg_csr_free(&ap);
  clmg_csr_free(&r);
  return status;
}

/* Fu et al. 2014's double partitioning: the patches of the fine level are
 * the aggregates of the coarse level's graph (roots patch_root_distance
 * apart), so no patch cuts an aggregate; a node outside every aggregate is
 * a patch of its own. */
static clmg_status make_patches(const clmg_csr *coarse, const int32_t *aggregate, size_t n,
                                const clmg_amg_options *o, int32_t **patch, clmg_error *error) {
  clmg_amg_options coarse_options = *o;
  coarse_options.root_distance = o->patch_root_distance;
  coarse_options.min_aggregate_size = 0;
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
      (*patch)[i] = aggregate[i] >= 0 ? group[aggregate[i]] : (int32_t)next++;
  }
  free(group);
  if (status != CLMG_SUCCESS) {
    free(*patch);
    *patch = NULL;
  }
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
  }
  free(h->a);
  free(h->p);
  free(h->patch);
  memset(h, 0, sizeof *h);
}

clmg_status clmg_amg_hierarchy_build(const clmg_csr *a, const clmg_amg_options *options,
                                     clmg_amg_hierarchy *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  clmg_amg_options defaults;
  clmg_amg_options_defaults(&defaults);
  const clmg_amg_options *o = options ? options : &defaults;
  clmg_status status = check_square(a, error);
  if (status == CLMG_SUCCESS)
    status = check_options(o, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t capacity = (size_t)o->max_levels;
  /* built from fine to coarse, then reversed: level 0 is the coarsest */
  clmg_csr *levels_a = calloc(capacity, sizeof *levels_a);
  clmg_csr *levels_p = calloc(capacity, sizeof *levels_p);
  int32_t **levels_patch = calloc(capacity, sizeof *levels_patch);
  int32_t *aggregate = clmg_alloc_array(a->rows ? a->rows : 1, sizeof *aggregate);
  if (!levels_a || !levels_p || !levels_patch || !aggregate) {
    free(levels_a);
    free(levels_p);
    free(levels_patch);
    free(aggregate);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "AMG: no host memory");
  }
  size_t built = 1;
  status = clmg_csr_copy(a, &levels_a[0], error);
  while (status == CLMG_SUCCESS && built < capacity && levels_a[built - 1].rows > o->coarse_rows) {
    const clmg_csr *fine = &levels_a[built - 1];
    size_t count = 0;
    status = clmg_amg_aggregate(fine, o, aggregate, &count, error);
    /* no aggregate, or too little coarsening to pay for a level: stop */
    if (status != CLMG_SUCCESS || count == 0 || count * 10 > fine->rows * 9)
      break;
    /* levels_p[built] maps level built to built - 1 (fine), as the engine
     * wants after the reversal */
    status = smoothed_prolongator(fine, aggregate, count, o->prolongator_damping, &levels_p[built],
                                  error);
    if (status == CLMG_SUCCESS)
      status = galerkin(fine, &levels_p[built], &levels_a[built], error);
    if (status == CLMG_SUCCESS)
      status =
          make_patches(&levels_a[built], aggregate, fine->rows, o, &levels_patch[built - 1], error);
    if (status == CLMG_SUCCESS)
      built++;
  }
  free(aggregate);
  if (status != CLMG_SUCCESS) {
    clmg_amg_hierarchy h = {(int)capacity, levels_a, levels_p, levels_patch};
    clmg_amg_hierarchy_free(&h);
    return status;
  }
  /* reverse: engine level l = built level built - 1 - l; the P that maps
   * engine level l - 1 to l is the one made at built level built - l */
  clmg_amg_hierarchy h = {(int)built, calloc(built, sizeof(clmg_csr)),
                          calloc(built, sizeof(clmg_csr)), calloc(built, sizeof(int32_t *))};
  if (!h.a || !h.p || !h.patch) {
    free(h.a);
    free(h.p);
    free(h.patch);
    clmg_amg_hierarchy all = {(int)capacity, levels_a, levels_p, levels_patch};
    clmg_amg_hierarchy_free(&all);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "AMG: no host memory");
  }
  for (size_t l = 0; l < built; l++) {
    h.a[l] = levels_a[built - 1 - l];
    h.patch[l] = levels_patch[built - 1 - l]; /* NULL on the coarsest */
    if (l > 0)
      h.p[l] = levels_p[built - l];
  }
  free(levels_a);
  free(levels_p);
  free(levels_patch);
  *out = h;
  return CLMG_SUCCESS;
}

clmg_status clmg_amg_patch_smoother_factory(void *smoothing, clmg_context *context, int level,
                                            const clmg_operator *a, clmg_smoother *smoother) {
  (void)level;
  const clmg_amg_patch_smoothing *ps = smoothing;
  const clmg_amg_hierarchy *h = ps ? ps->hierarchy : NULL;
  for (int l = 0; h && l < h->num_levels; l++)
    if (h->a[l].rows == a->rows && h->patch[l])
      return clmg_smoother_patch_jacobi(context, &h->a[l], h->patch[l], ps->inner, ps->omega,
                                        ps->inner_omega, smoother);
  memset(smoother, 0, sizeof *smoother);
  return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                   "AMG patch smoother: no level of the hierarchy has %zu rows and patches",
                   a->rows);
}
