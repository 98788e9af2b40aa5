/* Splitting a mesh into parts for distributed runs: recursive coordinate
 * bisection of the cells, and one part with layers of cells around it cut
 * out as a mesh of its own (what a process refines and assembles). */
#include "mesh/mesh_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct keyed_cell {
  double key;
  int32_t cell;
} keyed_cell;

/* Ties go by cell index, so every process sorts the same way. */
static int compare_keyed(const void *a, const void *b) {
  const keyed_cell *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return (x->cell > y->cell) - (x->cell < y->cell);
}

typedef struct bisection {
  int dim;
  size_t total_cells;
  int total_parts;
  const double *centroids; /* num_cells * dim */
  int32_t *part_of_cell;
} bisection;

/* The number of cells part q gets: the sizes differ by at most one. */
static size_t part_size(const bisection *b, int q) {
  return b->total_cells / (size_t)b->total_parts +
         ((size_t)q < b->total_cells % (size_t)b->total_parts);
}

/* Splits cells[0, count) into parts [first_part, first_part + parts):
 * across the widest extent of their centroids, each half as many cells as
 * its parts get. */
static void bisect(const bisection *b, keyed_cell *cells, size_t count, int first_part, int parts) {
  if (parts == 1) {
    for (size_t k = 0; k < count; k++)
      b->part_of_cell[cells[k].cell] = first_part;
    return;
  }
  const size_t dim = (size_t)b->dim;
  size_t axis = 0;
  double widest = -1;
  for (size_t a = 0; a < dim; a++) {
    double low = 0, high = 0;
    for (size_t k = 0; k < count; k++) {
      double x = b->centroids[(size_t)cells[k].cell * dim + a];
      low = k == 0 || x < low ? x : low;
      high = k == 0 || x > high ? x : high;
    }
    if (high - low > widest) {
      widest = high - low;
      axis = a;
    }
  }
  for (size_t k = 0; k < count; k++)
    cells[k].key = b->centroids[(size_t)cells[k].cell * dim + axis];
  qsort(cells, count, sizeof *cells, compare_keyed);
  const int left_parts = parts / 2;
  size_t left = 0;
  for (int q = first_part; q < first_part + left_parts; q++)
    left += part_size(b, q);
  bisect(b, cells, left, first_part, left_parts);
  bisect(b, cells + left, count - left, first_part + left_parts, parts - left_parts);
}

clmg_status clmg_mesh_partition(const clmg_mesh *mesh, int parts, int32_t *part_of_cell,
                                clmg_error *error) {
  clmg_error_clear(error);
  if (!mesh || !part_of_cell || (mesh->num_cells && (!mesh->cells || !mesh->coords)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_mesh_partition: a NULL mesh, array or output");
  if (parts < 1 || (size_t)parts > mesh->num_cells)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cannot split %zu cells into %d parts (1 to the number of cells)",
                          mesh->num_cells, parts);
  const size_t dim = (size_t)mesh->dim, corners = clmg_mesh_vertices_per_cell(mesh);
  double *centroids = clmg_alloc_array(mesh->num_cells, dim * sizeof *centroids);
  keyed_cell *cells = clmg_alloc_array(mesh->num_cells, sizeof *cells);
  if (!centroids || !cells) {
    free(centroids);
    free(cells);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the centroids of %zu cells", mesh->num_cells);
  }
  for (size_t k = 0; k < mesh->num_cells; k++) {
    for (size_t a = 0; a < dim; a++) {
      double sum = 0;
      for (size_t v = 0; v < corners; v++) {
        int32_t vertex = mesh->cells[k * corners + v];
        if (vertex < 0 || (size_t)vertex >= mesh->num_vertices) {
          free(centroids);
          free(cells);
          return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "cell %zu has vertex %d, outside [0, %zu)", k, (int)vertex,
                                mesh->num_vertices);
        }
        sum += mesh->coords[(size_t)vertex * dim + a];
      }
      centroids[k * dim + a] = sum / (double)corners;
    }
    cells[k].cell = (int32_t)k;
  }
  bisection b = {mesh->dim, mesh->num_cells, parts, centroids, part_of_cell};
  bisect(&b, cells, mesh->num_cells, 0, parts);
  free(centroids);
  free(cells);
  return CLMG_SUCCESS;
}

/* The cells of the part and `layers` layers around it: selected[k] = 1. */
static int select_cells(const clmg_mesh *mesh, const int32_t *part_of_cell, int32_t part,
                        int layers, uint8_t *selected) {
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  uint8_t *touched = calloc(mesh->num_vertices ? mesh->num_vertices : 1, 1);
  if (!touched)
    return 0;
  for (size_t k = 0; k < mesh->num_cells; k++)
    selected[k] = part_of_cell[k] == part;
  int grew = 1; /* no more passes once a layer adds nothing */
  for (int layer = 0; layer < layers && grew; layer++) {
    for (size_t k = 0; k < mesh->num_cells; k++)
      for (size_t v = 0; selected[k] && v < corners; v++)
        touched[mesh->cells[k * corners + v]] = 1;
    grew = 0;
    for (size_t k = 0; k < mesh->num_cells; k++)
      for (size_t v = 0; !selected[k] && v < corners; v++)
        grew |= selected[k] = touched[mesh->cells[k * corners + v]];
  }
  free(touched);
  return 1;
}

clmg_status clmg_mesh_extract_part(const clmg_mesh *mesh, const int32_t *part_of_cell, int32_t part,
                                   int layers, clmg_mesh *out, int32_t **cell_map, int32_t *cut_tag,
                                   clmg_error *error) {
  clmg_error_clear(error);
  if (!out || !cell_map || !cut_tag)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_mesh_extract_part: a NULL output");
  if (out == mesh) /* checked first: zeroing out would wipe the input */
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the part must not be written over the mesh itself");
  memset(out, 0, sizeof *out);
  *cell_map = NULL;
  if (!mesh || !part_of_cell)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_mesh_extract_part: a NULL mesh or partition");
  if (layers < 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "%d layers around a part", layers);
  clmg_status status = clmg_mesh_check(mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t dim = (size_t)mesh->dim, corners = clmg_mesh_vertices_per_cell(mesh),
               per_face = clmg_mesh_vertices_per_face(mesh),
               faces_per_cell = clmg_mesh_faces_per_cell(mesh);
  int32_t largest_tag = 0;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++)
    largest_tag =
        mesh->boundary_face_tag[f] > largest_tag ? mesh->boundary_face_tag[f] : largest_tag;
  for (size_t s = 0; s < mesh->num_shapes; s++)
    largest_tag = mesh->shapes[s].tag > largest_tag ? mesh->shapes[s].tag : largest_tag;
  if (largest_tag == INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh uses the largest tag, %d: no tag is left for the cut faces",
                          (int)largest_tag);
  *cut_tag = largest_tag + 1;

  uint8_t *selected = calloc(mesh->num_cells ? mesh->num_cells : 1, 1);
  int32_t *vertex_new = clmg_alloc_array(mesh->num_vertices, sizeof *vertex_new);
  int32_t *cells = NULL, *faces = NULL, *tags = NULL;
  clmg_vertex_cells adjacency = {0};
  clmg_mesh result = {0};
  if (!selected || !vertex_new || !select_cells(mesh, part_of_cell, part, layers, selected) ||
      !clmg_vertex_cells_build(mesh, &adjacency)) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the selection of %zu cells", mesh->num_cells);
    goto done;
  }
  size_t num_cells = 0, num_vertices = 0;
  for (size_t v = 0; v < mesh->num_vertices; v++)
    vertex_new[v] = -1;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    num_cells += selected[k];
    for (size_t v = 0; selected[k] && v < corners; v++)
      vertex_new[mesh->cells[k * corners + v]] = 0;
  }
  for (size_t v = 0; v < mesh->num_vertices; v++) /* increasing order of the vertices */
    if (vertex_new[v] >= 0)
      vertex_new[v] = (int32_t)num_vertices++;

  /* the boundary faces: the mesh's own on the selected cells, then the cut
   * faces (a face whose other cell was left out), at most all faces */
  const size_t face_capacity = num_cells * faces_per_cell;
  faces = clmg_alloc_array(face_capacity, per_face * sizeof *faces);
  tags = clmg_alloc_array(face_capacity, sizeof *tags);
  cells = clmg_alloc_array(num_cells, sizeof *cells);
  if (!faces || !tags || !cells) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the faces of %zu cells", num_cells);
    goto done;
  }
  size_t num_faces = 0;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    int32_t k = -1;
    const int32_t *face = mesh->boundary_faces + f * per_face;
    clmg_cells_with_face(mesh, &adjacency, face, -1, &k, NULL);
    if (k < 0 || !selected[k])
      continue;
    for (size_t v = 0; v < per_face; v++)
      faces[num_faces * per_face + v] = vertex_new[face[v]];
    tags[num_faces++] = mesh->boundary_face_tag[f];
  }
  size_t c = 0;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    if (!selected[k])
      continue;
    cells[c++] = (int32_t)k;
    for (size_t local = 0; local < faces_per_cell; local++) {
      int32_t face[4], other = -1;
      clmg_mesh_cell_face(mesh, mesh->cells + k * corners, (int)local, face);
      if (clmg_cells_with_face(mesh, &adjacency, face, (int32_t)k, &other, NULL) == 0 ||
          selected[other])
        continue;
      for (size_t v = 0; v < per_face; v++)
        faces[num_faces * per_face + v] = vertex_new[face[v]];
      tags[num_faces++] = *cut_tag;
    }
  }

  result.dim = mesh->dim;
  result.cell_type = mesh->cell_type;
  result.num_vertices = num_vertices;
  result.num_cells = num_cells;
  result.num_boundary_faces = num_faces;
  result.num_shapes = mesh->num_shapes;
  if (!clmg_mesh_allocate_arrays(&result, mesh->cell_material != NULL)) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate a mesh of %zu cells", num_cells);
    goto done;
  }
  for (size_t v = 0; v < mesh->num_vertices; v++)
    if (vertex_new[v] >= 0)
      memcpy(result.coords + (size_t)vertex_new[v] * dim, mesh->coords + v * dim,
             dim * sizeof *result.coords);
  for (size_t k = 0; k < num_cells; k++) {
    for (size_t v = 0; v < corners; v++)
      result.cells[k * corners + v] = vertex_new[mesh->cells[(size_t)cells[k] * corners + v]];
    if (mesh->cell_material)
      result.cell_material[k] = mesh->cell_material[cells[k]];
  }
  if (num_faces) {
    memcpy(result.boundary_faces, faces, num_faces * per_face * sizeof *faces);
    memcpy(result.boundary_face_tag, tags, num_faces * sizeof *tags);
  }
  if (mesh->num_shapes)
    memcpy(result.shapes, mesh->shapes, mesh->num_shapes * sizeof *result.shapes);
  *out = result;
  *cell_map = cells;
  cells = NULL;

done:
  free(selected);
  free(vertex_new);
  free(cells);
  free(faces);
  free(tags);
  clmg_vertex_cells_free(&adjacency);
  return status;
}
