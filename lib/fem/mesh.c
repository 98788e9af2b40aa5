/* Meshes: freeing, copying, validation and the Lagrange nodes of Q1/Q2
 * (tensor cells) and P1/P2 (simplices) elements.
 *
 * Geometric entities (edges, faces) are identified by the sorted list of
 * their corner vertices, kept in an open-addressing hash table: a conforming
 * mesh shares an edge or face between cells exactly when the sorted lists
 * agree, whatever the cells' orientations. Host code only. */
#include "fem/mesh_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and allocation ---- */

void clmg_mesh_free(clmg_mesh *mesh) {
  if (!mesh)
    return;
  free(mesh->coords);
  free(mesh->cells);
  free(mesh->boundary_faces);
  free(mesh->boundary_face_tag);
  free(mesh->shapes);
  free(mesh->cell_material);
  memset(mesh, 0, sizeof *mesh);
}

clmg_status clmg_mesh_copy(const clmg_mesh *in, clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  if (in == out) /* zeroing out would wipe the input */
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the copy must not be the mesh itself");
  memset(out, 0, sizeof *out);
  if (!in)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  if (in->dim != 2 && in->dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has dimension %d, expected 2 or 3", in->dim);
  if ((in->num_vertices && !in->coords) || (in->num_cells && !in->cells) ||
      (in->num_boundary_faces && (!in->boundary_faces || !in->boundary_face_tag)) ||
      (in->num_shapes && !in->shapes))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has a count without its array (coords, cells, boundary_faces, "
                          "boundary_face_tag or shapes is NULL)");
  const size_t dim = (size_t)in->dim, corners = clmg_mesh_vertices_per_cell(in),
               per_face = clmg_mesh_vertices_per_face(in);
  clmg_mesh copy = *in;
  /* clmg_alloc_array refuses overflowing sizes; zero counts still allocate */
  copy.coords = clmg_alloc_array(in->num_vertices, dim * sizeof *copy.coords);
  copy.cells = clmg_alloc_array(in->num_cells, corners * sizeof *copy.cells);
  copy.boundary_faces =
      clmg_alloc_array(in->num_boundary_faces, per_face * sizeof *copy.boundary_faces);
  copy.boundary_face_tag = clmg_alloc_array(in->num_boundary_faces, sizeof *copy.boundary_face_tag);
  copy.shapes = in->num_shapes ? clmg_alloc_array(in->num_shapes, sizeof *copy.shapes) : NULL;
  copy.cell_material =
      in->cell_material ? clmg_alloc_array(in->num_cells, sizeof *copy.cell_material) : NULL;
  if (!copy.coords || !copy.cells || !copy.boundary_faces || !copy.boundary_face_tag ||
      (in->num_shapes && !copy.shapes) || (in->cell_material && !copy.cell_material)) {
    clmg_mesh_free(&copy);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot copy a mesh with %zu vertices and %zu cells", in->num_vertices,
                          in->num_cells);
  }
  if (in->num_vertices)
    memcpy(copy.coords, in->coords, in->num_vertices * dim * sizeof *copy.coords);
  if (in->num_cells)
    memcpy(copy.cells, in->cells, in->num_cells * corners * sizeof *copy.cells);
  if (in->num_boundary_faces) {
    memcpy(copy.boundary_faces, in->boundary_faces,
           in->num_boundary_faces * per_face * sizeof *copy.boundary_faces);
    memcpy(copy.boundary_face_tag, in->boundary_face_tag,
           in->num_boundary_faces * sizeof *copy.boundary_face_tag);
  }
  if (in->num_shapes)
    memcpy(copy.shapes, in->shapes, in->num_shapes * sizeof *copy.shapes);
  if (in->cell_material && in->num_cells)
    memcpy(copy.cell_material, in->cell_material, in->num_cells * sizeof *copy.cell_material);
  *out = copy;
  return CLMG_SUCCESS;
}

/* ---- reference-cell combinatorics ---- */

/* The cell-local corner index (tensor order) of corner `face_corner` of the
 * face whose reference coordinate along `fixed_axis` is `side` (0 or 1). The
 * face's own axes are the cell's other axes in increasing order. */
static int face_corner_in_cell(int dim, int fixed_axis, int side, int face_corner) {
  int local = side << fixed_axis;
  int face_bit = 0;
  for (int axis = 0; axis < dim; axis++) {
    if (axis == fixed_axis)
      continue;
    if (face_corner & (1 << face_bit))
      local |= 1 << axis;
    face_bit++;
  }
  return local;
}

const int clmg_simplex_edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};

void clmg_mesh_cell_face(const clmg_mesh *mesh, const int32_t *cell, int local, int32_t *out) {
  if (mesh->cell_type == CLMG_CELL_SIMPLEX) {
    for (int v = 0, m = 0; v <= mesh->dim; v++)
      if (v != local)
        out[m++] = cell[v];
    return;
  }
  for (int m = 0; m < 1 << (mesh->dim - 1); m++)
    out[m] = cell[face_corner_in_cell(mesh->dim, local / 2, local % 2, m)];
}

static int power_of_3(int exponent) {
  int result = 1;
  for (int i = 0; i < exponent; i++)
    result *= 3;
  return result;
}

/* ---- entity keys and the hash table ---- */

/* An edge or face as its sorted corner vertices, unused slots -1. */
#define KEY_SLOTS 4
typedef struct entity_key {
  int32_t v[KEY_SLOTS];
} entity_key;

static void sort_small(int32_t *values, int count) {
  for (int i = 1; i < count; i++) /* insertion sort: at most 8 values */
    for (int j = i; j > 0 && values[j - 1] > values[j]; j--) {
      int32_t swap = values[j];
      values[j] = values[j - 1];
      values[j - 1] = swap;
    }
}

static entity_key make_key(const int32_t *vertices, int count) {
  entity_key key;
  for (int i = 0; i < KEY_SLOTS; i++)
    key.v[i] = i < count ? vertices[i] : -1;
  sort_small(key.v, count);
  return key;
}

static uint64_t hash_key(const entity_key *key) {
  uint64_t h = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < KEY_SLOTS; i++) {
    h ^= (uint64_t)(uint32_t)key->v[i] + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9u;
  }
  return h ^ (h >> 31);
}

/* Open addressing with linear probing; slots with v[0] == -1 are empty.
 * Each entry carries the entity's node number. */
typedef struct entity_table {
  entity_key *keys;
  int32_t *value;
  size_t capacity; /* a power of two */
  size_t size;
} entity_table;

static void table_free(entity_table *table) {
  free(table->keys);
  free(table->value);
  memset(table, 0, sizeof *table);
}

static int table_allocate(entity_table *table, size_t capacity) {
  memset(table, 0, sizeof *table);
  table->capacity = capacity;
  table->keys = clmg_alloc_array(capacity, sizeof *table->keys);
  table->value = clmg_alloc_array(capacity, sizeof *table->value);
  if (!table->keys || !table->value) {
    table_free(table);
    return 0;
  }
  for (size_t i = 0; i < capacity; i++)
    table->keys[i].v[0] = -1;
  return 1;
}

/* A table for about `expected` entries at load factor <= 1/2. */
static int table_init(entity_table *table, size_t expected) {
  size_t capacity = 64;
  while (capacity < 2 * expected && capacity < SIZE_MAX / 4)
    capacity *= 2;
  return table_allocate(table, capacity);
}

static size_t table_slot(const entity_table *table, const entity_key *key) {
  size_t mask = table->capacity - 1;
  size_t slot = (size_t)hash_key(key) & mask;
  while (table->keys[slot].v[0] >= 0 && memcmp(&table->keys[slot], key, sizeof *key) != 0)
    slot = (slot + 1) & mask;
  return slot;
}

/* The entry of key, or -1 when absent. */
static ptrdiff_t table_find(const entity_table *table, const entity_key *key) {
  size_t slot = table_slot(table, key);
  return table->keys[slot].v[0] >= 0 ? (ptrdiff_t)slot : -1;
}

static int table_grow(entity_table *table) {
  entity_table bigger;
  if (table->capacity > SIZE_MAX / 4 || !table_allocate(&bigger, table->capacity * 2))
    return 0;
  for (size_t i = 0; i < table->capacity; i++) {
    if (table->keys[i].v[0] < 0)
      continue;
    size_t slot = table_slot(&bigger, &table->keys[i]);
    bigger.keys[slot] = table->keys[i];
    bigger.value[slot] = table->value[i];
  }
  bigger.size = table->size;
  table_free(table);
  *table = bigger;
  return 1;
}

/* The entry of key, inserted with value when absent (*inserted says
 * which); -1 when the table cannot grow. */
static ptrdiff_t table_insert(entity_table *table, const entity_key *key, int32_t value,
                              int *inserted) {
  if (2 * (table->size + 1) > table->capacity && !table_grow(table))
    return -1;
  size_t slot = table_slot(table, key);
  *inserted = table->keys[slot].v[0] < 0;
  if (*inserted) {
    table->keys[slot] = *key;
    table->value[slot] = value;
    table->size++;
  }
  return (ptrdiff_t)slot;
}

/* ---- validation ---- */

/* What every function here relies on: sizes, pointers, indices in range,
 * distinct corners, finite coordinates, tags and shapes. */
static clmg_status check_structure(const clmg_mesh *mesh, clmg_error *error) {
  if (!mesh)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  if (mesh->dim != 2 && mesh->dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has dimension %d, expected 2 or 3", mesh->dim);
  if (mesh->cell_type != CLMG_CELL_TENSOR && mesh->cell_type != CLMG_CELL_SIMPLEX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has cell type %d, expected CLMG_CELL_TENSOR (0) or "
                          "CLMG_CELL_SIMPLEX (1)",
                          (int)mesh->cell_type);
  const int dim = mesh->dim;
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  const size_t face_corners = clmg_mesh_vertices_per_face(mesh);
  if (mesh->num_vertices > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu vertices, more than the 32-bit index limit %d",
                          mesh->num_vertices, INT32_MAX);
  if (mesh->num_cells > INT32_MAX || mesh->num_boundary_faces > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu cells and %zu boundary faces; the limit is %d each",
                          mesh->num_cells, mesh->num_boundary_faces, INT32_MAX);
  if ((mesh->num_vertices > 0 && !mesh->coords) || (mesh->num_cells > 0 && !mesh->cells) ||
      (mesh->num_boundary_faces > 0 && (!mesh->boundary_faces || !mesh->boundary_face_tag)) ||
      (mesh->num_shapes > 0 && !mesh->shapes))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has a count without its array (coords, cells, boundary_faces, "
                          "boundary_face_tag or shapes is NULL)");
  for (size_t v = 0; v < mesh->num_vertices; v++)
    for (int d = 0; d < dim; d++)
      if (!isfinite(mesh->coords[v * (size_t)dim + (size_t)d]))
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "vertex %zu has a coordinate that is not finite", v);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    for (size_t i = 0; i < corners; i++) {
      if (cell[i] < 0 || (size_t)cell[i] >= mesh->num_vertices)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "cell %zu has vertex index %d at local corner %zu, outside [0, %zu)",
                              k, (int)cell[i], i, mesh->num_vertices);
      for (size_t j = 0; j < i; j++)
        if (cell[j] == cell[i])
          return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "cell %zu lists vertex %d twice (local corners %zu and %zu)", k,
                                (int)cell[i], j, i);
    }
    if (mesh->cell_material && mesh->cell_material[k] < 1)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cell %zu has material %d, expected >= 1", k,
                            (int)mesh->cell_material[k]);
  }
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const int32_t *face = mesh->boundary_faces + f * face_corners;
    for (size_t i = 0; i < face_corners; i++) {
      if (face[i] < 0 || (size_t)face[i] >= mesh->num_vertices)
        return clmg_error_set(
            error, CLMG_ERROR_INVALID_ARGUMENT,
            "boundary face %zu has vertex index %d at local corner %zu, outside [0, %zu)", f,
            (int)face[i], i, mesh->num_vertices);
      for (size_t j = 0; j < i; j++)
        if (face[j] == face[i])
          return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "boundary face %zu lists vertex %d twice", f, (int)face[i]);
    }
    if (mesh->boundary_face_tag[f] < 1)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "boundary face %zu has tag %d, expected >= 1", f,
                            (int)mesh->boundary_face_tag[f]);
  }
  for (size_t s = 0; s < mesh->num_shapes; s++) {
    const clmg_boundary_shape *shape = &mesh->shapes[s];
    if (shape->tag < 1)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "shape %zu has tag %d, expected >= 1", s, (int)shape->tag);
    for (size_t t = 0; t < s; t++)
      if (mesh->shapes[t].tag == shape->tag)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "shapes %zu and %zu both describe tag %d", t, s, (int)shape->tag);
    int expected_dim = shape->kind == CLMG_SHAPE_CIRCLE ? 2 : 3;
    if ((shape->kind != CLMG_SHAPE_CIRCLE && shape->kind != CLMG_SHAPE_CYLINDER) ||
        expected_dim != dim)
      return clmg_error_set(
          error, CLMG_ERROR_INVALID_ARGUMENT,
          "shape %zu (tag %d) has kind %d, which a %dD mesh cannot use (CIRCLE in 2D, "
          "CYLINDER in 3D)",
          s, (int)shape->tag, (int)shape->kind, dim);
    if (!(shape->radius > 0.0) || !isfinite(shape->radius))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "shape %zu (tag %d) has radius %g, expected a positive number", s,
                            (int)shape->tag, shape->radius);
    double axis_length = 0.0;
    for (int d = 0; d < 3; d++)
      axis_length += shape->axis[d] * shape->axis[d];
    if (shape->kind == CLMG_SHAPE_CYLINDER && !(axis_length > 0.0 && isfinite(axis_length)))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cylinder shape %zu (tag %d) has no axis", s, (int)shape->tag);
  }
  return CLMG_SUCCESS;
}

/* The edge to - from as a unit vector in column, its length multiplied into
 * *lengths. The edge is divided by its largest component before its length
 * is taken, so that a mesh scaled by 1e+-300 has the same quality (squares
 * would overflow or underflow). Returns 0 for a zero-length or non-finite
 * edge. */
static int unit_edge(int dim, const double *from, const double *to, double column[3],
                     double *lengths) {
  double largest = 0.0;
  for (int d = 0; d < dim; d++) {
    column[d] = to[d] - from[d];
    largest = fmax(largest, fabs(column[d]));
  }
  double squared = 0.0;
  for (int d = 0; d < dim && largest > 0.0; d++) {
    column[d] /= largest;
    squared += column[d] * column[d];
  }
  double scaled_length = sqrt(squared);
  for (int d = 0; d < dim && largest > 0.0; d++)
    column[d] /= scaled_length;
  *lengths *= largest * scaled_length;
  return largest > 0.0 && isfinite(largest);
}

static double determinant(int dim, double columns[3][3]) {
  if (dim == 2)
    return columns[0][0] * columns[1][1] - columns[0][1] * columns[1][0];
  return columns[0][0] * (columns[1][1] * columns[2][2] - columns[1][2] * columns[2][1]) -
         columns[1][0] * (columns[0][1] * columns[2][2] - columns[0][2] * columns[2][1]) +
         columns[2][0] * (columns[0][1] * columns[1][2] - columns[0][2] * columns[1][1]);
}

double clmg_mesh_cell_quality(int dim, const double *coords, const int32_t *cell, int *worst_corner,
                              double *worst_determinant) {
  double worst = INFINITY, worst_det = 0.0;
  int worst_at = 0;
  for (int corner = 0; corner < (1 << dim); corner++) {
    /* the determinant of the unit edge vectors (unit_edge) */
    double columns[3][3] = {{0}}, lengths = 1.0;
    int degenerate = 0;
    for (int axis = 0; axis < dim; axis++) {
      const double *to = coords + (size_t)cell[corner | (1 << axis)] * (size_t)dim;
      const double *from = coords + (size_t)cell[corner & ~(1 << axis)] * (size_t)dim;
      degenerate |= !unit_edge(dim, from, to, columns[axis], &lengths);
    }
    double det = determinant(dim, columns);
    double quality = degenerate ? NAN : det;
    det *= lengths;            /* the determinant of the edges themselves, for messages */
    if (!(quality >= worst)) { /* NaN (a zero-length edge) counts as worst */
      worst = quality;
      worst_det = det;
      worst_at = corner;
      if (isnan(quality))
        break;
    }
  }
  if (worst_corner)
    *worst_corner = worst_at;
  if (worst_determinant)
    *worst_determinant = worst_det;
  return worst;
}

double clmg_mesh_simplex_quality(int dim, const double *coords, const int32_t *cell,
                                 int *worst_corner, double *volume) {
  double worst = INFINITY, signed_volume = 0.0;
  int worst_at = 0;
  for (int corner = 0; corner <= dim; corner++) {
    /* unit edges, scaled as in clmg_mesh_cell_quality against overflow */
    double columns[3][3] = {{0}}, lengths = 1.0;
    int degenerate = 0;
    const double *from = coords + (size_t)cell[corner] * (size_t)dim;
    for (int other = 0, axis = 0; other <= dim; other++) {
      if (other == corner)
        continue;
      const double *to = coords + (size_t)cell[other] * (size_t)dim;
      degenerate |= !unit_edge(dim, from, to, columns[axis], &lengths);
      axis++;
    }
    double det = determinant(dim, columns);
    /* the edges from corner i in local order span (-1)^i the orientation */
    if (corner % 2)
      det = -det;
    if (corner == 0)
      signed_volume = det * lengths / (dim == 2 ? 2.0 : 6.0);
    double quality = degenerate ? NAN : det;
    if (!(quality >= worst)) { /* NaN (a zero-length edge) counts as worst */
      worst = quality;
      worst_at = corner;
      if (isnan(quality))
        break;
    }
  }
  if (worst_corner)
    *worst_corner = worst_at;
  if (volume)
    *volume = signed_volume;
  return worst;
}

double clmg_mesh_quality_of_cell(const clmg_mesh *mesh, size_t k, int *worst_corner,
                                 double *determinant) {
  const int32_t *cell = mesh->cells + k * clmg_mesh_vertices_per_cell(mesh);
  return mesh->cell_type == CLMG_CELL_SIMPLEX
             ? clmg_mesh_simplex_quality(mesh->dim, mesh->coords, cell, worst_corner, determinant)
             : clmg_mesh_cell_quality(mesh->dim, mesh->coords, cell, worst_corner, determinant);
}

/* Every cell must have positive Jacobians at its corners, not nearly flat
 * (the quality is scale-free, so thin boundary-layer cells pass). */
static clmg_status check_jacobians(const clmg_mesh *mesh, clmg_error *error) {
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  const char *kind = mesh->dim == 2 ? "area" : "volume";
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    int corner;
    double det;
    double quality = clmg_mesh_quality_of_cell(mesh, k, &corner, &det);
    if (quality > CLMG_MESH_MIN_CELL_QUALITY)
      continue;
    if (mesh->cell_type == CLMG_CELL_SIMPLEX) {
      if (quality < 0.0)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "cell %zu is inverted (negative %s %g): a %s lists its vertices with "
                              "det[v1 - v0, v2 - v0%s] > 0",
                              k, kind, det, mesh->dim == 2 ? "triangle" : "tetrahedron",
                              mesh->dim == 3 ? ", v3 - v0" : "");
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cell %zu is degenerate (%s %g, quality %g at local corner %d, "
                            "vertex %d)",
                            k, kind, det, quality, corner, (int)cell[corner]);
    }
    if (!(quality > CLMG_MESH_MIN_CELL_QUALITY))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cell %zu is inverted or degenerate: its Jacobian determinant at local "
                            "corner %d (vertex %d) is %g; corners must be listed in tensor order "
                            "i + 2j%s of a right-handed reference cell",
                            k, corner, (int)cell[corner], det, mesh->dim == 3 ? " + 4k" : "");
  }
  return CLMG_SUCCESS;
}

int clmg_vertex_cells_build(const clmg_mesh *mesh, clmg_vertex_cells *adjacency) {
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  adjacency->start = calloc(mesh->num_vertices + 1, sizeof *adjacency->start);
  adjacency->cells = clmg_alloc_array(mesh->num_cells, corners * sizeof *adjacency->cells);
  if (!adjacency->start || !adjacency->cells) {
    clmg_vertex_cells_free(adjacency);
    return 0;
  }
  for (size_t i = 0; i < mesh->num_cells * corners; i++)
    adjacency->start[mesh->cells[i] + 1]++;
  for (size_t v = 0; v < mesh->num_vertices; v++)
    adjacency->start[v + 1] += adjacency->start[v];
  /* start[v] runs ahead while filling and is shifted back afterwards */
  for (size_t k = 0; k < mesh->num_cells; k++)
    for (size_t c = 0; c < corners; c++)
      adjacency->cells[adjacency->start[mesh->cells[k * corners + c]]++] = (int32_t)k;
  for (size_t v = mesh->num_vertices; v > 0; v--)
    adjacency->start[v] = adjacency->start[v - 1];
  adjacency->start[0] = 0;
  return 1;
}

void clmg_vertex_cells_free(clmg_vertex_cells *adjacency) {
  free(adjacency->start);
  free(adjacency->cells);
  adjacency->start = NULL;
  adjacency->cells = NULL;
}

size_t clmg_cells_with_face(const clmg_mesh *mesh, const clmg_vertex_cells *adjacency,
                            const int32_t *face, int32_t skip, int32_t *first, int *position) {
  const int corners = (int)clmg_mesh_vertices_per_cell(mesh);
  const int face_corners = (int)clmg_mesh_vertices_per_face(mesh);
  const int simplex = mesh->cell_type == CLMG_CELL_SIMPLEX;
  size_t count = 0;
  for (size_t a = adjacency->start[face[0]]; a < adjacency->start[face[0] + 1]; a++) {
    int32_t k = adjacency->cells[a];
    if (k == skip)
      continue;
    const int32_t *cell = mesh->cells + (size_t)k * (size_t)corners;
    int local[4], found = 0;
    for (int m = 0; m < face_corners; m++)
      for (int c = 0; c < corners; c++)
        if (cell[c] == face[m]) {
          local[m] = c;
          found++;
          break;
        }
    if (found != face_corners)
      continue;
    /* a face, not a diagonal: its corners share one reference coordinate
     * (any dim vertices of a simplex make a face) */
    int common = corners - 1;
    for (int m = 1; m < face_corners; m++)
      common &= ~(local[m] ^ local[0]);
    if (!simplex && !common)
      continue;
    if (count++ == 0) {
      *first = k;
      if (position)
        memcpy(position, local, (size_t)face_corners * sizeof *position);
    }
  }
  return count;
}

/* The local face (2 * axis + side) whose corners sit at these local
 * positions of a tensor cell; -1 when a 3D face is not in tensor order:
 * corner m's reference position, as a bit pattern, must be corner 0's with
 * the face axes' bits of m flipped. */
static int tensor_local_face(int dim, const int *position) {
  if (dim == 3) {
    int axis_a = position[1] ^ position[0], axis_b = position[2] ^ position[0];
    if (axis_a == axis_b || (axis_a & (axis_a - 1)) != 0 || (axis_b & (axis_b - 1)) != 0 ||
        position[3] != (position[0] ^ axis_a ^ axis_b))
      return -1;
  }
  int fixed = (1 << dim) - 1;
  for (int m = 1; m < 1 << (dim - 1); m++)
    fixed &= ~(position[m] ^ position[0]);
  int axis = fixed == 1 ? 0 : fixed == 2 ? 1 : 2;
  return 2 * axis + (position[0] >> axis & 1);
}

/* A simplex's local face is named after the vertex it lacks. */
static int simplex_local_face(int dim, const int *position) {
  int missing = dim * (dim + 1) / 2;
  for (int m = 0; m < dim; m++)
    missing -= position[m];
  return missing;
}

/* Boundary faces must be faces of exactly one cell, listed once, in tensor
 * order (tensor cells; simplices' faces may come in any order); every face
 * of exactly one cell must be a boundary face (a closed boundary); no face
 * may be shared by more than two cells. */
static clmg_status check_faces(const clmg_mesh *mesh, clmg_error *error) {
  const int dim = mesh->dim;
  const int face_corners = (int)clmg_mesh_vertices_per_face(mesh);
  const size_t faces_per_cell = clmg_mesh_faces_per_cell(mesh);
  const int simplex = mesh->cell_type == CLMG_CELL_SIMPLEX;
  clmg_vertex_cells adjacency;
  unsigned char *listed = clmg_alloc_zeroed_array(mesh->num_cells, faces_per_cell);
  if (!listed || !clmg_vertex_cells_build(mesh, &adjacency)) {
    free(listed);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the face check of a mesh with %zu cells",
                          mesh->num_cells);
  }
  clmg_status status = CLMG_SUCCESS;
  for (size_t f = 0; f < mesh->num_boundary_faces && status == CLMG_SUCCESS; f++) {
    const int32_t *face = mesh->boundary_faces + f * (size_t)face_corners;
    int32_t k = -1;
    int position[4] = {0};
    size_t cells = clmg_cells_with_face(mesh, &adjacency, face, -1, &k, position);
    if (cells == 0) {
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "boundary face %zu (first vertex %d) is not a face of any cell", f,
                              (int)face[0]);
      break;
    }
    if (cells > 1) {
      status = clmg_error_set(
          error, CLMG_ERROR_INVALID_ARGUMENT,
          "boundary face %zu (first vertex %d) is an interior face, shared by cell %d "
          "and another cell",
          f, (int)face[0], (int)k);
      break;
    }
    int local_face = simplex ? simplex_local_face(dim, position) : tensor_local_face(dim, position);
    if (local_face < 0) {
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "boundary face %zu (a face of cell %d) does not list its corners in "
                              "tensor order i + 2j",
                              f, (int)k);
      break;
    }
    size_t slot = (size_t)k * faces_per_cell + (size_t)local_face;
    if (listed[slot]) {
      status =
          clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                         "boundary face %zu (first vertex %d) is listed twice", f, (int)face[0]);
      break;
    }
    listed[slot] = 1;
  }
  for (size_t k = 0; k < mesh->num_cells && status == CLMG_SUCCESS; k++) {
    const int32_t *cell = mesh->cells + k * clmg_mesh_vertices_per_cell(mesh);
    for (size_t local_face = 0; local_face < faces_per_cell; local_face++) {
      int32_t face[4], neighbour;
      clmg_mesh_cell_face(mesh, cell, (int)local_face, face);
      size_t others = clmg_cells_with_face(mesh, &adjacency, face, (int32_t)k, &neighbour, NULL);
      if (others > 1) {
        status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "local face %zu of cell %zu is shared by more than two cells",
                                local_face, k);
        break;
      }
      if (others == 0 && !listed[k * faces_per_cell + local_face]) {
        status = clmg_error_set(
            error, CLMG_ERROR_INVALID_ARGUMENT,
            "local face %zu of cell %zu lies on the boundary (no other cell has it) but "
            "is not among the boundary faces",
            local_face, k);
        break;
      }
    }
  }
  clmg_vertex_cells_free(&adjacency);
  free(listed);
  return status;
}

clmg_status clmg_mesh_check(const clmg_mesh *mesh, clmg_error *error) {
  clmg_error_clear(error);
  clmg_status status = check_structure(mesh, error);
  if (status == CLMG_SUCCESS)
    status = check_jacobians(mesh, error);
  if (status == CLMG_SUCCESS)
    status = check_faces(mesh, error);
  return status;
}

/* ---- Lagrange nodes ---- */

/* The corner vertices of the entity that degree-2 node `node` (digits a, b,
 * c in base 3) of a cell or face with `dim` axes lies on: digit 1 means the
 * entity spans that axis, 0 and 2 fix it at 0 and 1. Returns their count. */
static int entity_corners(int dim, int node, const int32_t *corner_vertices, int32_t *out) {
  int fixed_bits = 0, free_axes[3], num_free = 0;
  for (int axis = 0, rest = node; axis < dim; axis++, rest /= 3) {
    int digit = rest % 3;
    if (digit == 1)
      free_axes[num_free++] = axis;
    else if (digit == 2)
      fixed_bits |= 1 << axis;
  }
  for (int combination = 0; combination < (1 << num_free); combination++) {
    int local = fixed_bits;
    for (int i = 0; i < num_free; i++)
      if (combination & (1 << i))
        local |= 1 << free_axes[i];
    out[combination] = corner_vertices[local];
  }
  return 1 << num_free;
}

static int count_free_digits(int dim, int node) {
  int count = 0;
  for (int axis = 0; axis < dim; axis++, node /= 3)
    count += node % 3 == 1;
  return count;
}

static void tag_node(int32_t *tags, int32_t number, int32_t tag) {
  if (tags[number] == 0 || tag < tags[number])
    tags[number] = tag;
}

/* tag_boundary_nodes for simplices: a face's vertices and (degree 2) the
 * edges between them. */
static clmg_status tag_simplex_boundary_nodes(const clmg_mesh *mesh, int degree,
                                              const entity_table *table, int32_t *tags,
                                              clmg_error *error) {
  const int face_corners = mesh->dim;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const int32_t *face = mesh->boundary_faces + f * (size_t)face_corners;
    int32_t tag = mesh->boundary_face_tag[f];
    for (int a = 0; a < face_corners; a++) {
      tag_node(tags, face[a], tag);
      for (int b = a + 1; b < face_corners && degree == 2; b++) {
        int32_t pair[2] = {face[a], face[b]};
        entity_key key = make_key(pair, 2);
        ptrdiff_t slot = table_find(table, &key);
        if (slot < 0)
          return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "boundary face %zu (first vertex %d) is not a face of any cell", f,
                                (int)face[0]);
        tag_node(tags, table->value[slot], tag);
      }
    }
  }
  return CLMG_SUCCESS;
}

/* node_boundary_tag from the boundary faces: every sub-entity of a face gets
 * the smallest tag of the faces it lies on; table maps edge and face keys to
 * node numbers (degree 2). */
static clmg_status tag_boundary_nodes(const clmg_mesh *mesh, int degree, const entity_table *table,
                                      int32_t *tags, clmg_error *error) {
  if (mesh->cell_type == CLMG_CELL_SIMPLEX)
    return tag_simplex_boundary_nodes(mesh, degree, table, tags, error);
  const int face_dim = mesh->dim - 1;
  const int face_corners = 1 << face_dim;
  const int face_nodes = degree == 1 ? face_corners : power_of_3(face_dim);
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const int32_t *face = mesh->boundary_faces + f * (size_t)face_corners;
    int32_t tag = mesh->boundary_face_tag[f];
    for (int node = 0; node < face_nodes; node++) {
      int32_t number;
      if (degree == 1) {
        number = face[node];
      } else {
        int32_t vertices[4];
        int count = entity_corners(face_dim, node, face, vertices);
        if (count == 1) {
          number = vertices[0];
        } else {
          entity_key key = make_key(vertices, count);
          ptrdiff_t slot = table_find(table, &key);
          if (slot < 0)
            return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                  "boundary face %zu (first vertex %d) is not a face of any cell",
                                  f, (int)face[0]);
          number = table->value[slot];
        }
      }
      if (tags[number] == 0 || tag < tags[number])
        tags[number] = tag;
    }
  }
  return CLMG_SUCCESS;
}

/* Degree 2: numbers the edges, then the faces (3D), then the cells, each in
 * the order the cells meet them, after the vertices. */
static clmg_status number_quadratic_nodes(const clmg_mesh *mesh, entity_table *table,
                                          int32_t *cell_nodes, size_t *num_nodes,
                                          clmg_error *error) {
  const int dim = mesh->dim;
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  const int nodes_per_cell = power_of_3(dim);
  size_t next = mesh->num_vertices;
  for (int entity_dim = 0; entity_dim <= dim; entity_dim++) {
    if (entity_dim == dim && mesh->num_cells > (size_t)INT32_MAX - next)
      return clmg_error_set(
          error, CLMG_ERROR_INVALID_ARGUMENT,
          "the degree-2 nodes of a mesh with %zu cells pass the 32-bit index limit %d",
          mesh->num_cells, INT32_MAX);
    for (size_t k = 0; k < mesh->num_cells; k++) {
      const int32_t *cell = mesh->cells + k * corners;
      int32_t *nodes = cell_nodes + k * (size_t)nodes_per_cell;
      for (int node = 0; node < nodes_per_cell; node++) {
        if (count_free_digits(dim, node) != entity_dim)
          continue;
        if (entity_dim == 0) {
          int32_t vertex;
          entity_corners(dim, node, cell, &vertex);
          nodes[node] = vertex;
          continue;
        }
        if (entity_dim == dim) { /* next + num_cells was checked above */
          nodes[node] = (int32_t)(next + k);
          continue;
        }
        int32_t vertices[4];
        entity_key key = make_key(vertices, entity_corners(dim, node, cell, vertices));
        int inserted;
        ptrdiff_t slot = table_insert(table, &key, (int32_t)next, &inserted);
        if (slot < 0)
          return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                "cannot grow the edge/face table of a mesh with %zu cells",
                                mesh->num_cells);
        if (inserted) {
          if (next >= INT32_MAX)
            return clmg_error_set(
                error, CLMG_ERROR_INVALID_ARGUMENT,
                "the degree-2 nodes of a mesh with %zu cells pass the 32-bit index "
                "limit %d",
                mesh->num_cells, INT32_MAX);
          next++;
        }
        nodes[node] = table->value[slot];
      }
    }
    if (entity_dim == dim)
      next += mesh->num_cells;
  }
  *num_nodes = next;
  return CLMG_SUCCESS;
}

/* Degree 2 on simplices: the edges after the vertices, in the order the
 * cells meet them (each cell's edges in clmg_simplex_edges order). */
static clmg_status number_simplex_nodes(const clmg_mesh *mesh, entity_table *table,
                                        int32_t *cell_nodes, size_t *num_nodes, clmg_error *error) {
  const int dim = mesh->dim, edges = clmg_simplex_num_edges(dim);
  const size_t corners = (size_t)dim + 1, nodes_per_cell = corners + (size_t)edges;
  size_t next = mesh->num_vertices;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    int32_t *nodes = cell_nodes + k * nodes_per_cell;
    memcpy(nodes, cell, corners * sizeof *nodes);
    for (int e = 0; e < edges; e++) {
      int32_t pair[2] = {cell[clmg_simplex_edges[e][0]], cell[clmg_simplex_edges[e][1]]};
      entity_key key = make_key(pair, 2);
      int inserted;
      ptrdiff_t slot = table_insert(table, &key, (int32_t)next, &inserted);
      if (slot < 0)
        return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot grow the edge table of a mesh with %zu cells",
                              mesh->num_cells);
      if (inserted) {
        if (next >= INT32_MAX)
          return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "the degree-2 nodes of a mesh with %zu cells pass the 32-bit "
                                "index limit %d",
                                mesh->num_cells, INT32_MAX);
        next++;
      }
      nodes[corners + (size_t)e] = table->value[slot];
    }
  }
  *num_nodes = next;
  return CLMG_SUCCESS;
}

/* Edge midpoints, summed in sorted vertex order as for tensor cells. */
static void simplex_node_coords(const clmg_mesh *mesh, const int32_t *cell_nodes,
                                double *node_coords) {
  const int dim = mesh->dim, edges = clmg_simplex_num_edges(dim);
  const size_t corners = (size_t)dim + 1, nodes_per_cell = corners + (size_t)edges;
  memcpy(node_coords, mesh->coords, mesh->num_vertices * (size_t)dim * sizeof *node_coords);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    for (int e = 0; e < edges; e++) {
      int32_t pair[2] = {cell[clmg_simplex_edges[e][0]], cell[clmg_simplex_edges[e][1]]};
      sort_small(pair, 2);
      double *x =
          node_coords + (size_t)cell_nodes[k * nodes_per_cell + corners + (size_t)e] * (size_t)dim;
      for (int d = 0; d < dim; d++)
        x[d] = 0.5 * (mesh->coords[(size_t)pair[0] * (size_t)dim + (size_t)d] +
                      mesh->coords[(size_t)pair[1] * (size_t)dim + (size_t)d]);
    }
  }
}

/* A node's position: the mean of its entity's corners, which is the
 * multilinear map at the entity's centre. Summing the corners in sorted
 * order gives a shared node the same bits from every cell. */
static void quadratic_node_coords(const clmg_mesh *mesh, const int32_t *cell_nodes,
                                  double *node_coords) {
  const int dim = mesh->dim;
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  const int nodes_per_cell = power_of_3(dim);
  memcpy(node_coords, mesh->coords, mesh->num_vertices * (size_t)dim * sizeof *node_coords);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    for (int node = 0; node < nodes_per_cell; node++) {
      int32_t vertices[8];
      int count = entity_corners(dim, node, cell, vertices);
      if (count == 1)
        continue;
      sort_small(vertices, count);
      double *x =
          node_coords + (size_t)cell_nodes[k * (size_t)nodes_per_cell + (size_t)node] * (size_t)dim;
      for (int d = 0; d < dim; d++) {
        double sum = 0.0;
        for (int i = 0; i < count; i++)
          sum += mesh->coords[(size_t)vertices[i] * (size_t)dim + (size_t)d];
        x[d] = sum / count;
      }
    }
  }
}

clmg_status clmg_mesh_lagrange_nodes(const clmg_mesh *mesh, int degree, int32_t **cell_nodes,
                                     size_t *num_nodes, double **node_coords,
                                     int32_t **node_boundary_tag, clmg_error *error) {
  clmg_error_clear(error);
  if (cell_nodes)
    *cell_nodes = NULL;
  if (num_nodes)
    *num_nodes = 0;
  if (node_coords)
    *node_coords = NULL;
  if (node_boundary_tag)
    *node_boundary_tag = NULL;
  if (!cell_nodes || !num_nodes)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cell_nodes and num_nodes must not be NULL");
  if (degree != 1 && degree != 2)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Lagrange nodes of degree %d requested, expected 1 or 2", degree);
  clmg_status status = check_structure(mesh, error);
  if (status != CLMG_SUCCESS)
    return status;

  const int dim = mesh->dim;
  const int simplex = mesh->cell_type == CLMG_CELL_SIMPLEX;
  const size_t nodes_per_cell =
      simplex ? (size_t)(dim + 1) + (degree == 2 ? (size_t)clmg_simplex_num_edges(dim) : 0)
              : (size_t)(degree == 1 ? 1 << dim : power_of_3(dim));
  int32_t *nodes = clmg_alloc_array(mesh->num_cells, nodes_per_cell * sizeof *nodes);
  double *coords = NULL;
  int32_t *tags = NULL;
  entity_table table = {0};
  size_t count = mesh->num_vertices;
  if (!nodes) {
    status =
        clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate the degree-%d nodes of %zu cells", degree, mesh->num_cells);
    goto done;
  }
  if (degree == 1) {
    memcpy(nodes, mesh->cells, mesh->num_cells * nodes_per_cell * sizeof *nodes);
  } else {
    /* a hexahedral mesh has about 3 edges and 3 faces per cell, a
     * tetrahedral one about 1.2 edges */
    if (!table_init(&table, mesh->num_cells * (size_t)(simplex ? 2 : dim == 2 ? 2 : 6))) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate the edge/face table of a mesh with %zu cells",
                              mesh->num_cells);
      goto done;
    }
    status = simplex ? number_simplex_nodes(mesh, &table, nodes, &count, error)
                     : number_quadratic_nodes(mesh, &table, nodes, &count, error);
    if (status != CLMG_SUCCESS)
      goto done;
  }
  if (node_coords) {
    coords = clmg_alloc_array(count, (size_t)dim * sizeof *coords);
    if (!coords) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate the coordinates of %zu nodes", count);
      goto done;
    }
    if (degree == 1)
      memcpy(coords, mesh->coords, count * (size_t)dim * sizeof *coords);
    else if (simplex)
      simplex_node_coords(mesh, nodes, coords);
    else
      quadratic_node_coords(mesh, nodes, coords);
  }
  if (node_boundary_tag) {
    tags = clmg_alloc_zeroed_array(count, sizeof *tags);
    if (!tags) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate the boundary tags of %zu nodes", count);
      goto done;
    }
    status = tag_boundary_nodes(mesh, degree, &table, tags, error);
    if (status != CLMG_SUCCESS)
      goto done;
  }

done:
  table_free(&table);
  if (status != CLMG_SUCCESS) {
    free(nodes);
    free(coords);
    free(tags);
    return status;
  }
  *cell_nodes = nodes;
  *num_nodes = count;
  if (node_coords)
    *node_coords = coords;
  if (node_boundary_tag)
    *node_boundary_tag = tags;
  return CLMG_SUCCESS;
}
