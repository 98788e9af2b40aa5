/* Vertex orderings of a mesh (clmg_mesh_reorder_vertices): a permutation
 * of the vertex labels that keeps neighbours close in the numbering, so
 * that contiguous index ranges (the row patches of the device P1 assembly,
 * blocks of a matrix) are compact pieces of the domain.
 *
 * Morton (Z-order): the coordinates are quantized to 21 bits per axis in
 * the mesh's bounding box and their bits interleaved (x lowest); vertices
 * are sorted by that code, ties by their old index. Any aligned block of
 * 2^(dim k) codes is a box of the quantized grid, so a contiguous range of
 * the order covers a few such boxes.
 *
 * Cells: vertices in the order in which the cells (in their order, each
 * cell's vertices in local order) first meet them; vertices of no cell
 * follow in their old order. Useful when the cells are already in a local
 * order (e.g. the children of refinement).
 *
 * Only labels change: coordinates move with their vertex, cells and
 * boundary faces list the new labels in the same local order, so
 * orientations, tags and materials stay as they were. Host code only. */
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MORTON_BITS 21
#define MORTON_MAX ((1u << MORTON_BITS) - 1u)

typedef struct morton_key {
  uint64_t code;
  int32_t vertex;
} morton_key;

static int compare_keys(const void *left, const void *right) {
  const morton_key *a = left, *b = right;
  if (a->code != b->code)
    return a->code < b->code ? -1 : 1;
  return (a->vertex > b->vertex) - (a->vertex < b->vertex);
}

/* The low 21 bits of x spread to every third bit (bit i to bit 3 i). */
static uint64_t spread_by_3(uint64_t x) {
  x &= 0x1fffffu;
  x = (x | (x << 32)) & 0x1f00000000ffffULL;
  x = (x | (x << 16)) & 0x1f0000ff0000ffULL;
  x = (x | (x << 8)) & 0x100f00f00f00f00fULL;
  x = (x | (x << 4)) & 0x10c30c30c30c30c3ULL;
  x = (x | (x << 2)) & 0x1249249249249249ULL;
  return x;
}

/* The low 32 bits of x spread to every other bit (bit i to bit 2 i). */
static uint64_t spread_by_2(uint64_t x) {
  x &= 0xffffffffu;
  x = (x | (x << 16)) & 0x0000ffff0000ffffULL;
  x = (x | (x << 8)) & 0x00ff00ff00ff00ffULL;
  x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0fULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

/* x in [low, low + extent] to 0 .. MORTON_MAX (0 for a flat axis). */
static uint64_t quantize(double x, double low, double extent) {
  if (!(extent > 0))
    return 0;
  double q = (x - low) / extent * (double)MORTON_MAX + 0.5;
  if (!(q > 0))
    return 0;
  if (q >= (double)MORTON_MAX)
    return MORTON_MAX;
  return (uint64_t)q;
}

/* new_of_old by Morton code; 0 when out of memory. */
static int morton_order(const clmg_mesh *mesh, int32_t *old_of_new) {
  const size_t n = mesh->num_vertices, dim = (size_t)mesh->dim;
  double low[3] = {0, 0, 0}, high[3] = {0, 0, 0};
  for (size_t d = 0; d < dim; d++) {
    low[d] = high[d] = mesh->coords[d];
    for (size_t v = 1; v < n; v++) {
      double x = mesh->coords[v * dim + d];
      low[d] = x < low[d] ? x : low[d];
      high[d] = x > high[d] ? x : high[d];
    }
  }
  morton_key *keys = clmg_alloc_array(n, sizeof *keys);
  if (!keys)
    return 0;
  for (size_t v = 0; v < n; v++) {
    uint64_t code = 0;
    for (size_t d = 0; d < dim; d++) {
      uint64_t q = quantize(mesh->coords[v * dim + d], low[d], high[d] - low[d]);
      code |= (dim == 3 ? spread_by_3(q) : spread_by_2(q)) << d;
    }
    keys[v].code = code;
    keys[v].vertex = (int32_t)v;
  }
  qsort(keys, n, sizeof *keys, compare_keys);
  for (size_t k = 0; k < n; k++)
    old_of_new[k] = keys[k].vertex;
  free(keys);
  return 1;
}

/* old_of_new in the order the cells first meet the vertices. new_of_old is
 * scratch (num_vertices). */
static void cells_order(const clmg_mesh *mesh, int32_t *old_of_new, int32_t *new_of_old) {
  const size_t n = mesh->num_vertices,
               entries = mesh->num_cells * clmg_mesh_vertices_per_cell(mesh);
  for (size_t v = 0; v < n; v++)
    new_of_old[v] = -1;
  size_t next = 0;
  for (size_t k = 0; k < entries; k++) {
    int32_t v = mesh->cells[k];
    if (new_of_old[v] < 0) {
      new_of_old[v] = (int32_t)next;
      old_of_new[next++] = v;
    }
  }
  for (size_t v = 0; v < n; v++)
    if (new_of_old[v] < 0)
      old_of_new[next++] = (int32_t)v;
}

/* The first index of `indices` (count of them) outside 0 .. n-1, or count. */
static size_t first_bad_index(const int32_t *indices, size_t count, size_t n) {
  for (size_t k = 0; k < count; k++)
    if (indices[k] < 0 || (size_t)indices[k] >= n)
      return k;
  return count;
}

clmg_status clmg_mesh_reorder_vertices(clmg_mesh *mesh, clmg_vertex_order order,
                                       int32_t *old_of_new_out, clmg_error *error) {
  clmg_error_clear(error);
  if (!mesh)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  if (order != CLMG_VERTEX_ORDER_MORTON && order != CLMG_VERTEX_ORDER_CELLS)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "unknown vertex order %d (CLMG_VERTEX_ORDER_MORTON or _CELLS)",
                          (int)order);
  if (mesh->dim != 2 && mesh->dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has dimension %d, expected 2 or 3", mesh->dim);
  if ((mesh->num_vertices && !mesh->coords) || (mesh->num_cells && !mesh->cells) ||
      (mesh->num_boundary_faces && !mesh->boundary_faces))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has a count without its array (coords, cells or "
                          "boundary_faces is NULL)");
  if (mesh->num_vertices > (size_t)INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu vertices, more than 32-bit indices reach",
                          mesh->num_vertices);
  const size_t n = mesh->num_vertices, dim = (size_t)mesh->dim;
  const size_t corners = clmg_mesh_vertices_per_cell(mesh),
               per_face = clmg_mesh_vertices_per_face(mesh);
  const size_t cell_entries = mesh->num_cells * corners,
               face_entries = mesh->num_boundary_faces * per_face;
  size_t bad = first_bad_index(mesh->cells, cell_entries, n);
  if (bad < cell_entries)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cell %zu has vertex index %d, outside 0..%zu", bad / corners,
                          (int)mesh->cells[bad], n ? n - 1 : 0);
  bad = first_bad_index(mesh->boundary_faces, face_entries, n);
  if (bad < face_entries)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "boundary face %zu has vertex index %d, outside 0..%zu", bad / per_face,
                          (int)mesh->boundary_faces[bad], n ? n - 1 : 0);
  if (order == CLMG_VERTEX_ORDER_MORTON)
    for (size_t k = 0; k < n * dim; k++)
      if (!isfinite(mesh->coords[k]))
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "vertex %zu has a coordinate that is not finite (%g)", k / dim,
                              mesh->coords[k]);

  int32_t *old_of_new = clmg_alloc_array(n ? n : 1, sizeof *old_of_new);
  int32_t *new_of_old = clmg_alloc_array(n ? n : 1, sizeof *new_of_old);
  double *coords = clmg_alloc_array(n ? n : 1, dim * sizeof *coords);
  clmg_status status = CLMG_SUCCESS;
  if (!old_of_new || !new_of_old || !coords) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "reordering %zu vertices: out of host memory", n);
    goto done;
  }
  if (order == CLMG_VERTEX_ORDER_MORTON) {
    if (!morton_order(mesh, old_of_new)) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "reordering %zu vertices: out of host memory", n);
      goto done;
    }
  } else {
    cells_order(mesh, old_of_new, new_of_old);
  }
  for (size_t k = 0; k < n; k++) {
    new_of_old[old_of_new[k]] = (int32_t)k;
    memcpy(coords + k * dim, mesh->coords + (size_t)old_of_new[k] * dim, dim * sizeof *coords);
  }
  /* nothing fails from here: the mesh changes all at once */
  for (size_t k = 0; k < cell_entries; k++)
    mesh->cells[k] = new_of_old[mesh->cells[k]];
  for (size_t k = 0; k < face_entries; k++)
    mesh->boundary_faces[k] = new_of_old[mesh->boundary_faces[k]];
  if (n > 0) {
    free(mesh->coords);
    mesh->coords = coords;
    coords = NULL;
  }
  if (old_of_new_out && n > 0)
    memcpy(old_of_new_out, old_of_new, n * sizeof *old_of_new);
done:
  free(old_of_new);
  free(new_of_old);
  free(coords);
  return status;
}
