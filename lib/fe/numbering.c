/* DOF numberings of Geveler et al. 2011, section 2.2, as permutations perm[new] = old:
 * 2LV (the space's own numbering, which refinement makes two-level), CM
 * (Cuthill-McKee), XYZ (lexicographic by coordinates), STO (random) and HIE
 * (first appearance over the cells, which refinement orders
 * hierarchically). */
#include "fe/fe_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const numbering_names[] = {"2LV", "CM", "XYZ", "STO", "HIE"};
#define NUM_NUMBERINGS (sizeof numbering_names / sizeof numbering_names[0])

const char *clmg_numbering_name(clmg_numbering numbering) {
  if ((unsigned)numbering < NUM_NUMBERINGS)
    return numbering_names[numbering];
  return "unknown";
}

int clmg_numbering_parse(const char *name, clmg_numbering *numbering) {
  if (!name || !numbering)
    return 0;
  for (size_t k = 0; k < NUM_NUMBERINGS; k++) {
    const char *expected = numbering_names[k];
    size_t i = 0;
    while (name[i] && expected[i] && toupper((unsigned char)name[i]) == (unsigned char)expected[i])
      i++;
    if (!name[i] && !expected[i]) {
      *numbering = (clmg_numbering)k;
      return 1;
    }
  }
  return 0;
}

/* ---- Cuthill-McKee ---- */

typedef struct graph {
  size_t n;
  int64_t *row_ptr;
  int32_t *col;    /* includes each node itself */
  int32_t *degree; /* neighbours, not counting the node itself */
  uint32_t *seen;  /* seen[i] == stamp: reached by the current search */
  uint32_t stamp;
  int32_t *queue; /* breadth-first search order */
} graph;

/* Breadth-first search from root over its component: fills g->queue and
 * returns the number of levels; *last_level is the queue position where the
 * deepest level starts and *size the component's size. */
static size_t breadth_first(graph *g, int32_t root, size_t *last_level, size_t *size) {
  g->stamp++;
  size_t head = 0, tail = 0, levels = 0, level_start = 0;
  g->queue[tail++] = root;
  g->seen[root] = g->stamp;
  while (head < tail) {
    size_t level_end = tail;
    level_start = head;
    levels++;
    for (; head < level_end; head++) {
      int32_t u = g->queue[head];
      for (int64_t k = g->row_ptr[u]; k < g->row_ptr[u + 1]; k++) {
        int32_t v = g->col[k];
        if (g->seen[v] != g->stamp) {
          g->seen[v] = g->stamp;
          g->queue[tail++] = v;
        }
      }
    }
  }
  *last_level = level_start;
  *size = tail;
  return levels;
}

/* George and Liu's pseudo-peripheral node: repeatedly restart from a node
 * of minimum degree in the deepest level while the depth grows. */
static int32_t pseudo_peripheral(graph *g, int32_t start) {
  size_t last_level, size;
  size_t depth = breadth_first(g, start, &last_level, &size);
  int32_t root = start;
  for (;;) {
    int32_t candidate = g->queue[last_level];
    for (size_t k = last_level + 1; k < size; k++) {
      int32_t v = g->queue[k];
      if (g->degree[v] < g->degree[candidate] ||
          (g->degree[v] == g->degree[candidate] && v < candidate))
        candidate = v;
    }
    size_t candidate_depth = breadth_first(g, candidate, &last_level, &size);
    if (candidate_depth <= depth)
      return root;
    root = candidate;
    depth = candidate_depth;
  }
}

static int lower_degree(const graph *g, int32_t u, int32_t v) {
  return g->degree[u] < g->degree[v] || (g->degree[u] == g->degree[v] && u < v);
}

/* Cuthill-McKee on the space's coupling graph. Components are started in
 * increasing order of their minimum degree node (ties: lowest index), each
 * from a pseudo-peripheral node; neighbours join in increasing degree. */
static clmg_status cuthill_mckee(const clmg_fe_space *space, int32_t *perm, clmg_error *error) {
  graph g = {0};
  g.n = space->num_dofs;
  clmg_status status = clmg_fe_dof_graph(space, NULL, &g.row_ptr, &g.col, error);
  if (status != CLMG_SUCCESS)
    return status;
  g.degree = clmg_alloc_array(g.n, sizeof *g.degree);
  g.seen = calloc(g.n ? g.n : 1, sizeof *g.seen);
  g.queue = clmg_alloc_array(g.n, sizeof *g.queue);
  int32_t *by_degree = clmg_alloc_array(g.n, sizeof *by_degree);
  uint8_t *numbered = calloc(g.n ? g.n : 1, 1);
  size_t *degree_start = NULL;
  if (!g.degree || !g.seen || !g.queue || !by_degree || !numbered) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate Cuthill-McKee work arrays for %zu DOFs", g.n);
    goto done;
  }
  int32_t max_degree = 0;
  for (size_t i = 0; i < g.n; i++) {
    g.degree[i] = (int32_t)(g.row_ptr[i + 1] - g.row_ptr[i] - 1);
    if (g.degree[i] > max_degree)
      max_degree = g.degree[i];
  }
  /* Nodes by (degree, index), by a counting sort: the start of each
   * component is the first node of this order not numbered yet. */
  degree_start = calloc((size_t)max_degree + 2, sizeof *degree_start);
  if (!degree_start) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate Cuthill-McKee work arrays for %zu DOFs", g.n);
    goto done;
  }
  for (size_t i = 0; i < g.n; i++)
    degree_start[g.degree[i] + 1]++;
  for (int32_t d = 0; d <= max_degree; d++)
    degree_start[d + 1] += degree_start[d];
  for (size_t i = 0; i < g.n; i++)
    by_degree[degree_start[g.degree[i]]++] = (int32_t)i;

  size_t next = 0, scan = 0;
  while (next < g.n) {
    while (numbered[by_degree[scan]])
      scan++;
    int32_t root = pseudo_peripheral(&g, by_degree[scan]);
    size_t head = next;
    perm[next++] = root;
    numbered[root] = 1;
    for (; head < next; head++) {
      int32_t u = perm[head];
      size_t first = next;
      for (int64_t k = g.row_ptr[u]; k < g.row_ptr[u + 1]; k++) {
        int32_t v = g.col[k];
        if (numbered[v])
          continue;
        numbered[v] = 1;
        /* Insert v into perm[first..next) kept in increasing degree. */
        size_t position = next++;
        while (position > first && lower_degree(&g, v, perm[position - 1])) {
          perm[position] = perm[position - 1];
          position--;
        }
        perm[position] = v;
      }
    }
  }

done:
  free(g.row_ptr);
  free(g.col);
  free(g.degree);
  free(g.seen);
  free(g.queue);
  free(by_degree);
  free(numbered);
  free(degree_start);
  return status;
}

/* ---- XYZ ---- */

typedef struct coordinate_key {
  double x[3];
  int32_t index;
} coordinate_key;

static int compare_coordinates(const void *left, const void *right) {
  const coordinate_key *a = left, *b = right;
  for (int d = 0; d < 3; d++)
    if (a->x[d] != b->x[d])
      return a->x[d] < b->x[d] ? -1 : 1;
  /* Equal points keep their order: a stable sort through qsort. */
  return (a->index > b->index) - (a->index < b->index);
}

static clmg_status sort_by_coordinates(const clmg_fe_space *space, int32_t *perm,
                                       clmg_error *error) {
  size_t n = space->num_dofs, dim = (size_t)space->mesh->dim;
  coordinate_key *keys = clmg_alloc_array(n, sizeof *keys);
  if (!keys)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the sort keys of %zu DOFs", n);
  for (size_t i = 0; i < n; i++) {
    for (size_t d = 0; d < 3; d++)
      keys[i].x[d] = d < dim ? space->dof_coords[i * dim + d] : 0.0;
    keys[i].index = (int32_t)i;
  }
  qsort(keys, n, sizeof *keys, compare_coordinates);
  for (size_t i = 0; i < n; i++)
    perm[i] = keys[i].index;
  free(keys);
  return CLMG_SUCCESS;
}

/* ---- STO ---- */

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static void random_permutation(size_t n, uint64_t seed, int32_t *perm) {
  uint64_t state = seed;
  for (size_t i = 0; i < n; i++)
    perm[i] = (int32_t)i;
  /* Fisher-Yates; j uniform in [0, i] from the top 53 bits. */
  for (size_t i = n; i > 1; i--) {
    double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53;
    size_t j = (size_t)(u * (double)i);
    int32_t t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
}

/* ---- HIE ---- */

static clmg_status first_appearance(const clmg_fe_space *space, int32_t *perm, clmg_error *error) {
  size_t n = space->num_dofs, entries = space->mesh->num_cells * space->dofs_per_cell;
  uint8_t *numbered = calloc(n ? n : 1, 1);
  if (!numbered)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the marks of %zu DOFs", n);
  size_t next = 0;
  for (size_t k = 0; k < entries; k++) {
    int32_t dof = space->cell_dofs[k];
    if (!numbered[dof]) {
      numbered[dof] = 1;
      perm[next++] = dof;
    }
  }
  free(numbered);
  if (next != n)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu of the %zu DOFs belong to no cell", n - next, n);
  return CLMG_SUCCESS;
}

clmg_status clmg_fe_numbering(const clmg_fe_space *space, const clmg_csr *a,
                              clmg_numbering numbering, uint64_t seed, int32_t *perm,
                              clmg_error *error) {
  clmg_error_clear(error);
  clmg_status status = clmg_fe_check_space(space, "finite-element", error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t n = space->num_dofs;
  if (!perm)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "perm is NULL");
  if (a && (a->rows != n || a->cols != n))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the matrix is %zu x %zu but the space has %zu DOFs", a->rows, a->cols,
                          n);
  switch (numbering) {
  case CLMG_NUMBERING_2LV:
    for (size_t i = 0; i < n; i++)
      perm[i] = (int32_t)i;
    break;
  case CLMG_NUMBERING_CM:
    status = cuthill_mckee(space, perm, error);
    break;
  case CLMG_NUMBERING_XYZ:
    status = sort_by_coordinates(space, perm, error);
    break;
  case CLMG_NUMBERING_STO:
    random_permutation(n, seed, perm);
    break;
  case CLMG_NUMBERING_HIE:
    status = first_appearance(space, perm, error);
    break;
  default:
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "unknown numbering %d",
                          (int)numbering);
  }
  if (status != CLMG_SUCCESS)
    for (size_t i = 0; i < n; i++)
      perm[i] = 0;
  return status;
}
