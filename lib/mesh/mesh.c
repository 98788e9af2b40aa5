/* Meshes: freeing, copying, validation and the Lagrange nodes of Q1/Q2
 * (tensor cells) and P1/P2 (simplices) elements.
 *
 * Geometric entities (edges, faces) are identified by their set of corner
 * vertices and looked up through the vertex-to-cell adjacency: a conforming
 * mesh shares an edge or face between cells exactly when the sets agree,
 * whatever the cells' orientations. Host code only. */
#include "mesh/mesh_internal.h"

#include <float.h>
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

int clmg_mesh_allocate_arrays(clmg_mesh *mesh, int with_materials) {
  const size_t dim = (size_t)mesh->dim, corners = clmg_mesh_vertices_per_cell(mesh),
               per_face = clmg_mesh_vertices_per_face(mesh);
  /* clmg_alloc_array refuses overflowing sizes; zero counts still allocate */
  mesh->coords = clmg_alloc_array(mesh->num_vertices, dim * sizeof *mesh->coords);
  mesh->cells = clmg_alloc_array(mesh->num_cells, corners * sizeof *mesh->cells);
  mesh->boundary_faces =
      clmg_alloc_array(mesh->num_boundary_faces, per_face * sizeof *mesh->boundary_faces);
  mesh->boundary_face_tag =
      clmg_alloc_array(mesh->num_boundary_faces, sizeof *mesh->boundary_face_tag);
  mesh->shapes = mesh->num_shapes ? clmg_alloc_array(mesh->num_shapes, sizeof *mesh->shapes) : NULL;
  mesh->cell_material =
      with_materials ? clmg_alloc_array(mesh->num_cells, sizeof *mesh->cell_material) : NULL;
  if (mesh->coords && mesh->cells && mesh->boundary_faces && mesh->boundary_face_tag &&
      (!mesh->num_shapes || mesh->shapes) && (!with_materials || mesh->cell_material))
    return 1;
  clmg_mesh_free(mesh);
  return 0;
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
  if (!clmg_mesh_allocate_arrays(&copy, in->cell_material != NULL))
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot copy a mesh with %zu vertices and %zu cells", in->num_vertices,
                          in->num_cells);
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

/* ---- the quality screen ---- */

/* clmg_mesh_cell_certainly_valid accepts a corner when det / (product of
 * the edge lengths) > 2 CLMG_MESH_MIN_CELL_QUALITY, tested as det > 0 and
 * det^2 > (2 min)^2 * (product of the squared lengths): no scaling, square
 * roots or divisions. Both this estimate and the quality that
 * clmg_mesh_cell_quality computes with unit edges are within about 100
 * rounding errors (2e-14) of the exact quality of the same edge vectors, so
 * the margin of 1e-12 keeps every accepted corner above the threshold there
 * too. Squared lengths outside [2^-300, 2^300] are left to the full
 * computation: within them no product here overflows or loses precision to
 * underflow. */
#define SCREEN_QUALITY (2.0 * CLMG_MESH_MIN_CELL_QUALITY)
#define SCREEN_SMALLEST_SQUARE 0x1p-300
#define SCREEN_LARGEST_SQUARE 0x1p300

/* The screen's comparisons combine with & rather than && (branches): nearly
 * every corner passes, so there is nothing to skip. */
static inline int square_in_screen_range(double squared) {
  return (squared >= SCREEN_SMALLEST_SQUARE) & (squared <= SCREEN_LARGEST_SQUARE);
}

static inline double squared_norm(int dim, const double *v) {
  double sum = 0.0;
  for (int d = 0; d < dim; d++)
    sum += v[d] * v[d];
  return sum;
}

/* Whether a corner whose edge vectors have determinant det and squared
 * lengths squared[0 .. dim), each in the screen's range, passes. */
static inline int determinant_passes(int dim, double det, const double *squared) {
  double product = SCREEN_QUALITY * SCREEN_QUALITY;
  for (int axis = 0; axis < dim; axis++)
    product *= squared[axis];
  return (det > 0.0) & (det * det > product);
}

/* dim is a constant at each call, so the loops unroll. */
static inline int tensor_cell_certainly_valid(int dim, const double *coords, const int32_t *cell) {
  int passes = 1;
  for (int corner = 0; corner < (1 << dim); corner++) {
    double columns[3][3] = {{0}}, squared[3];
    for (int axis = 0; axis < dim; axis++) {
      const double *to = coords + (size_t)cell[corner | (1 << axis)] * (size_t)dim;
      const double *from = coords + (size_t)cell[corner & ~(1 << axis)] * (size_t)dim;
      for (int d = 0; d < dim; d++)
        columns[axis][d] = to[d] - from[d];
      squared[axis] = squared_norm(dim, columns[axis]);
      passes &= square_in_screen_range(squared[axis]);
    }
    passes &= determinant_passes(dim, determinant(dim, columns), squared);
  }
  return passes;
}

/* Each edge is formed once: edges[i][j] = x_j - x_i for i < j, and
 * edges[j][i] its negation, which is exactly x_i - x_j. */
static inline int simplex_certainly_valid(int dim, const double *coords, const int32_t *cell) {
  double edges[4][4][3], squared[4][4];
  int passes = 1;
  for (int i = 0; i < dim; i++)
    for (int j = i + 1; j <= dim; j++) {
      const double *from = coords + (size_t)cell[i] * (size_t)dim;
      const double *to = coords + (size_t)cell[j] * (size_t)dim;
      for (int d = 0; d < dim; d++) {
        edges[i][j][d] = to[d] - from[d];
        edges[j][i][d] = -edges[i][j][d];
      }
      squared[i][j] = squared[j][i] = squared_norm(dim, edges[i][j]);
      passes &= square_in_screen_range(squared[i][j]);
    }
  for (int corner = 0; corner <= dim; corner++) {
    double columns[3][3] = {{0}}, corner_squared[3];
    for (int other = 0, axis = 0; other <= dim; other++) {
      if (other == corner)
        continue;
      for (int d = 0; d < dim; d++)
        columns[axis][d] = edges[corner][other][d];
      corner_squared[axis++] = squared[corner][other];
    }
    double det = determinant(dim, columns);
    passes &= determinant_passes(dim, corner % 2 ? -det : det, corner_squared);
  }
  return passes;
}

/* tensor_cell_certainly_valid for the children of a cell, from its 3^dim
 * degree-2 nodes: each fine edge is shared by neighbouring children, so it
 * is formed once (edges[axis][node] runs from node to its neighbour along
 * axis). Corner q of child c sits at node c + q (as digits); its edge along
 * an axis starts there or, where q has that bit, one node back. */
static inline int tensor_children_certainly_valid_of_dim(int dim, const double *coords,
                                                         const int32_t *parent_nodes) {
  const int stride[3] = {1, 3, 9}, layers = dim == 2 ? 1 : 3;
  double edges[3][27][3], squared[3][27];
  int passes = 1;
  for (int axis = 0; axis < dim; axis++)
    for (int l = 0; l < layers; l++)
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
          const int digit[3] = {i, j, l}, node = i + 3 * j + 9 * l;
          if (digit[axis] == 2)
            continue;
          const double *from = coords + (size_t)parent_nodes[node] * (size_t)dim;
          const double *to = coords + (size_t)parent_nodes[node + stride[axis]] * (size_t)dim;
          for (int d = 0; d < dim; d++)
            edges[axis][node][d] = to[d] - from[d];
          squared[axis][node] = squared_norm(dim, edges[axis][node]);
          passes &= square_in_screen_range(squared[axis][node]);
        }
  for (int child = 0; child < (1 << dim); child++)
    for (int corner = 0; corner < (1 << dim); corner++) {
      int node = 0;
      for (int axis = 0; axis < dim; axis++)
        node += ((child >> axis & 1) + (corner >> axis & 1)) * stride[axis];
      double columns[3][3] = {{0}}, corner_squared[3];
      for (int axis = 0; axis < dim; axis++) {
        const int start = node - (corner >> axis & 1) * stride[axis];
        for (int d = 0; d < dim; d++)
          columns[axis][d] = edges[axis][start][d];
        corner_squared[axis] = squared[axis][start];
      }
      passes &= determinant_passes(dim, determinant(dim, columns), corner_squared);
    }
  return passes;
}

int clmg_tensor_children_certainly_valid(int dim, const double *coords,
                                         const int32_t *parent_nodes) {
  return dim == 2 ? tensor_children_certainly_valid_of_dim(2, coords, parent_nodes)
                  : tensor_children_certainly_valid_of_dim(3, coords, parent_nodes);
}

int clmg_mesh_cell_certainly_valid(const clmg_mesh *mesh, size_t k) {
  const int32_t *cell = mesh->cells + k * clmg_mesh_vertices_per_cell(mesh);
  if (mesh->cell_type == CLMG_CELL_SIMPLEX)
    return mesh->dim == 2 ? simplex_certainly_valid(2, mesh->coords, cell)
                          : simplex_certainly_valid(3, mesh->coords, cell);
  return mesh->dim == 2 ? tensor_cell_certainly_valid(2, mesh->coords, cell)
                        : tensor_cell_certainly_valid(3, mesh->coords, cell);
}

/* Every cell must have positive Jacobians at its corners, not nearly flat
 * (the quality is scale-free, so thin boundary-layer cells pass). */
static clmg_status check_jacobians(const clmg_mesh *mesh, clmg_error *error) {
  const size_t corners = clmg_mesh_vertices_per_cell(mesh);
  const char *kind = mesh->dim == 2 ? "area" : "volume";
  for (size_t k = 0; k < mesh->num_cells; k++) {
    if (clmg_mesh_cell_certainly_valid(mesh, k))
      continue;
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

/* ---- entities through the vertex-to-cell adjacency ---- */

/* The cell shape that the entity look-ups below need; the face check and
 * the numbering passes call them with constant shapes, so that their loops
 * unroll. */
typedef struct cell_shape {
  int dim, corners, simplex;
} cell_shape;

static inline cell_shape shape_of_mesh(const clmg_mesh *mesh) {
  cell_shape shape = {mesh->dim, (int)clmg_mesh_vertices_per_cell(mesh),
                      mesh->cell_type == CLMG_CELL_SIMPLEX};
  return shape;
}

/* Whether `cell` has the entity with these `count` distinct vertices among
 * its edges and faces: on a tensor cell, 2^j corners that agree on all but j
 * reference coordinates; on a simplex, any of its vertices. position gets
 * their local corners. */
static inline int cell_has_entity(cell_shape shape, const int32_t *cell, const int32_t *vertices,
                                  int count, int *position) {
  for (int m = 0; m < count; m++) {
    int c = 0;
    while (c < shape.corners && cell[c] != vertices[m])
      c++;
    if (c == shape.corners)
      return 0;
    position[m] = c;
  }
  if (shape.simplex)
    return 1;
  /* distinct corners agreeing on the other bits fill 2^(spanned bits) places */
  int differing = 0;
  for (int m = 1; m < count; m++)
    differing |= position[m] ^ position[0];
  int spanned = 0;
  for (; differing; differing &= differing - 1)
    spanned++;
  return 1 << spanned == count;
}

/* The first cell before `before` that has this entity (cell_has_entity), -1
 * when none does. Every cell with the entity has its first vertex, and the
 * cells around a vertex come in increasing order. */
static inline int32_t first_cell_with_entity(cell_shape shape, const int32_t *cells,
                                             const clmg_vertex_cells *adjacency,
                                             const int32_t *vertices, int count, int32_t before,
                                             int *position) {
  for (size_t a = adjacency->start[vertices[0]]; a < adjacency->start[vertices[0] + 1]; a++) {
    int32_t k = adjacency->cells[a];
    if (k >= before)
      break;
    if (cell_has_entity(shape, cells + (size_t)k * (size_t)shape.corners, vertices, count,
                        position))
      return k;
  }
  return -1;
}

/* How many cells other than `skip` (-1: none) have this entity
 * (cell_has_entity); the first of them goes to *first and, where position
 * is not NULL, the entity's local corners in it. */
static inline size_t count_cells_with_entity(cell_shape shape, const int32_t *cells,
                                             const clmg_vertex_cells *adjacency,
                                             const int32_t *vertices, int count, int32_t skip,
                                             int32_t *first, int *position) {
  size_t found = 0;
  for (size_t a = adjacency->start[vertices[0]]; a < adjacency->start[vertices[0] + 1]; a++) {
    int32_t k = adjacency->cells[a];
    int local[4];
    if (k == skip ||
        !cell_has_entity(shape, cells + (size_t)k * (size_t)shape.corners, vertices, count, local))
      continue;
    if (found++ == 0) {
      *first = k;
      if (position)
        memcpy(position, local, (size_t)count * sizeof *position);
    }
  }
  return found;
}

size_t clmg_cells_with_face(const clmg_mesh *mesh, const clmg_vertex_cells *adjacency,
                            const int32_t *face, int32_t skip, int32_t *first, int *position) {
  return count_cells_with_entity(shape_of_mesh(mesh), mesh->cells, adjacency, face,
                                 (int)clmg_mesh_vertices_per_face(mesh), skip, first, position);
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

/* The second half of check_faces: no face of a cell may be shared by more
 * than two cells, and one that no other cell has must be listed (listed:
 * per cell and local face). shape is a constant at each call. */
static inline clmg_status check_cell_faces(cell_shape shape, const clmg_mesh *mesh,
                                           const clmg_vertex_cells *adjacency,
                                           const unsigned char *listed, clmg_error *error) {
  static const int32_t identity[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int faces_per_cell = shape.simplex ? shape.dim + 1 : 2 * shape.dim;
  const int face_corners = shape.simplex ? shape.dim : 1 << (shape.dim - 1);
  int32_t face_local[6][4];
  for (int local_face = 0; local_face < faces_per_cell; local_face++)
    clmg_mesh_cell_face(mesh, identity, local_face, face_local[local_face]);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * (size_t)shape.corners;
    for (int local_face = 0; local_face < faces_per_cell; local_face++) {
      int32_t face[4];
      for (int m = 0; m < face_corners; m++)
        face[m] = cell[face_local[local_face][m]];
      /* A face that an earlier cell has was checked there: were it shared
       * by more than two cells, that cell would have been reported. */
      size_t others = 0;
      int checked_before = 0;
      for (size_t a = adjacency->start[face[0]];
           a < adjacency->start[face[0] + 1] && !checked_before; a++) {
        const int32_t other = adjacency->cells[a];
        int position[4];
        if (other == (int32_t)k ||
            !cell_has_entity(shape, mesh->cells + (size_t)other * (size_t)shape.corners, face,
                             face_corners, position))
          continue;
        checked_before = other < (int32_t)k;
        others++;
      }
      if (checked_before)
        continue;
      if (others > 1)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "local face %d of cell %zu is shared by more than two cells",
                              local_face, k);
      if (others == 0 && !listed[k * (size_t)faces_per_cell + (size_t)local_face])
        return clmg_error_set(
            error, CLMG_ERROR_INVALID_ARGUMENT,
            "local face %d of cell %zu lies on the boundary (no other cell has it) but "
            "is not among the boundary faces",
            local_face, k);
    }
  }
  return CLMG_SUCCESS;
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
  if (status == CLMG_SUCCESS) {
    if (simplex)
      status = dim == 2 ? check_cell_faces((cell_shape){2, 3, 1}, mesh, &adjacency, listed, error)
                        : check_cell_faces((cell_shape){3, 4, 1}, mesh, &adjacency, listed, error);
    else
      status = dim == 2 ? check_cell_faces((cell_shape){2, 4, 0}, mesh, &adjacency, listed, error)
                        : check_cell_faces((cell_shape){3, 8, 0}, mesh, &adjacency, listed, error);
  }
  clmg_vertex_cells_free(&adjacency);
  free(listed);
  return status;
}

/* See mesh_internal.h. 1e6 keeps a margin for the products of assembly. */
clmg_status clmg_mesh_check_scale(const clmg_mesh *mesh, clmg_error *error) {
  double largest = 0, low[3] = {INFINITY, INFINITY, INFINITY},
         high[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t v = 0; v < mesh->num_vertices; v++)
    for (int d = 0; d < mesh->dim; d++) {
      double x = mesh->coords[v * (size_t)mesh->dim + (size_t)d];
      largest = fmax(largest, fabs(x));
      low[d] = fmin(low[d], x);
      high[d] = fmax(high[d], x);
    }
  double extent = 0;
  for (int d = 0; d < mesh->dim; d++)
    extent = fmax(extent, high[d] - low[d]);
  if (mesh->num_vertices > 0 && !(pow(largest, mesh->dim) < DBL_MAX / 1e6))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the coordinates reach %g: a cell's %s (a length to the power %d) and "
                          "its element matrices overflow double; give the mesh in other units",
                          largest, mesh->dim == 2 ? "area" : "volume", mesh->dim);
  if (mesh->num_vertices > 0 && extent > 0 && !(pow(extent, mesh->dim) > DBL_MIN * 1e6))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh spans only %g: a cell's %s (a length to the power %d) "
                          "underflows double; give the mesh in other units",
                          extent, mesh->dim == 2 ? "area" : "volume", mesh->dim);
  return CLMG_SUCCESS;
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

/* The degree-2 nodes of a tensor cell grouped by the dimension j of their
 * entity (0 vertices, 1 edges, 2 faces in 3D, dim the cell), each group in
 * node order, with their entity_corners as local corner indices: worked out
 * once per call rather than once per cell. */
typedef struct tensor_node_corners {
  int num_on[4];
  int node_on[4][12];
  int32_t local_on[4][12][8];
} tensor_node_corners;

static void tensor_node_corners_init(int dim, tensor_node_corners *table) {
  static const int32_t identity[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  memset(table, 0, sizeof *table);
  for (int node = 0; node < power_of_3(dim); node++) {
    int32_t local[8];
    int count = entity_corners(dim, node, identity, local);
    int j = count == 1 ? 0 : count == 2 ? 1 : count == 4 && dim == 3 ? 2 : dim;
    table->node_on[j][table->num_on[j]] = node;
    memcpy(table->local_on[j][table->num_on[j]++], local, (size_t)count * sizeof *local);
  }
}

size_t clmg_tensor_node_table(int dim, int32_t *table) {
  tensor_node_corners corners;
  tensor_node_corners_init(dim, &corners);
  const int count = 1 << dim;
  size_t n = 0;
  for (int i = 0; i < corners.num_on[1]; i++) {
    table[n++] = corners.node_on[1][i];
    for (int m = 0; m < 2; m++)
      table[n++] = corners.local_on[1][i][m];
  }
  for (int i = 0; i < corners.num_on[2] && dim == 3; i++) {
    table[n++] = corners.node_on[2][i];
    for (int m = 0; m < 4; m++)
      table[n++] = corners.local_on[2][i][m];
  }
  table[n++] = corners.node_on[dim][0];
  for (int m = 0; m < count; m++)
    table[n++] = corners.local_on[dim][0][m];
  for (int i = 0; i < count; i++)
    table[n++] = corners.node_on[0][i];
  /* child c's corner q: parent node (c + q) as digits */
  for (int c = 0; c < count; c++)
    for (int q = 0; q < count; q++) {
      int node = 0, stride = 1;
      for (int axis = 0; axis < dim; axis++, stride *= 3)
        node += ((c >> axis & 1) + (q >> axis & 1)) * stride;
      table[n++] = node;
    }
  return n;
}

/* Sorts count (1, 2, 4 or 8, a constant at each call) values with a fixed
 * network of compare-exchanges: no data-dependent branches. */
static inline void sort_network(int32_t *values, int count) {
  static const int pairs_2[][2] = {{0, 1}};
  static const int pairs_4[][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {1, 2}};
  static const int pairs_8[][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3}, {4, 6},
                                   {5, 7}, {1, 2}, {5, 6}, {0, 4}, {3, 7}, {1, 5}, {2, 6},
                                   {1, 4}, {3, 6}, {2, 4}, {3, 5}, {3, 4}};
  const int(*pairs)[2] = count == 2 ? pairs_2 : count == 4 ? pairs_4 : pairs_8;
  const int num_pairs = count == 2 ? 1 : count == 4 ? 5 : count == 8 ? 19 : 0;
  for (int p = 0; p < num_pairs; p++) {
    int32_t a = values[pairs[p][0]], b = values[pairs[p][1]];
    values[pairs[p][0]] = a < b ? a : b;
    values[pairs[p][1]] = a < b ? b : a;
  }
}

/* The mean of the count corners local[] of cell (count a constant at each
 * call), summed in sorted vertex order. */
static inline void entity_mean(int dim, int count, const double *coords, const int32_t *cell,
                               const int32_t *local, double *x) {
  int32_t vertices[8];
  for (int m = 0; m < count; m++)
    vertices[m] = cell[local[m]];
  sort_network(vertices, count);
  for (int d = 0; d < dim; d++) {
    double sum = 0.0;
    for (int i = 0; i < count; i++)
      sum += coords[(size_t)vertices[i] * (size_t)dim + (size_t)d];
    x[d] = sum / count;
  }
}

/* The degree-2 node of a tensor cell on the entity at these local corners. */
static int tensor_entity_node(int dim, const int *position, int count) {
  int differing = 0;
  for (int m = 1; m < count; m++)
    differing |= position[m] ^ position[0];
  int node = 0;
  for (int axis = dim - 1; axis >= 0; axis--)
    node = 3 * node + (differing >> axis & 1 ? 1 : 2 * (position[0] >> axis & 1));
  return node;
}

static clmg_status index_limit_error(const clmg_mesh *mesh, clmg_error *error) {
  return clmg_error_set(
      error, CLMG_ERROR_INVALID_ARGUMENT,
      "the degree-2 nodes of a mesh with %zu cells pass the 32-bit index limit %d", mesh->num_cells,
      INT32_MAX);
}

static void tag_node(int32_t *tags, int32_t number, int32_t tag) {
  if (tags[number] == 0 || tag < tags[number])
    tags[number] = tag;
}

static clmg_status face_not_in_mesh_error(const clmg_mesh *mesh, size_t f, clmg_error *error) {
  return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                        "boundary face %zu (first vertex %d) is not a face of any cell", f,
                        (int)mesh->boundary_faces[f * clmg_mesh_vertices_per_face(mesh)]);
}

/* tag_boundary_nodes for simplices: a face's vertices and (degree 2) the
 * edges between them. */
static clmg_status tag_simplex_boundary_nodes(const clmg_mesh *mesh, int degree,
                                              const clmg_vertex_cells *adjacency,
                                              const int32_t *cell_nodes, int32_t *tags,
                                              clmg_error *error) {
  const int face_corners = mesh->dim, corners = mesh->dim + 1;
  const size_t nodes_per_cell = (size_t)(corners + clmg_simplex_num_edges(mesh->dim));
  int edge_of[4][4];
  clmg_simplex_edge_table(mesh->dim, edge_of);
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const int32_t *face = mesh->boundary_faces + f * (size_t)face_corners;
    int32_t tag = mesh->boundary_face_tag[f];
    for (int a = 0; a < face_corners; a++) {
      tag_node(tags, face[a], tag);
      for (int b = a + 1; b < face_corners && degree == 2; b++) {
        int32_t pair[2] = {face[a], face[b]};
        int position[2];
        int32_t k = first_cell_with_entity(shape_of_mesh(mesh), mesh->cells, adjacency, pair, 2,
                                           INT32_MAX, position);
        if (k < 0)
          return face_not_in_mesh_error(mesh, f, error);
        tag_node(tags,
                 cell_nodes[(size_t)k * nodes_per_cell + (size_t)corners +
                            (size_t)edge_of[position[0]][position[1]]],
                 tag);
      }
    }
  }
  return CLMG_SUCCESS;
}

/* node_boundary_tag from the boundary faces: every sub-entity of a face gets
 * the smallest tag of the faces it lies on; degree 2 finds an edge's or
 * face's node in a cell that has it (adjacency). */
static clmg_status tag_boundary_nodes(const clmg_mesh *mesh, int degree,
                                      const clmg_vertex_cells *adjacency, const int32_t *cell_nodes,
                                      int32_t *tags, clmg_error *error) {
  if (mesh->cell_type == CLMG_CELL_SIMPLEX)
    return tag_simplex_boundary_nodes(mesh, degree, adjacency, cell_nodes, tags, error);
  const int dim = mesh->dim, face_dim = dim - 1;
  const int face_corners = 1 << face_dim;
  const int face_nodes = degree == 1 ? face_corners : power_of_3(face_dim);
  const size_t nodes_per_cell = (size_t)power_of_3(dim);
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const int32_t *face = mesh->boundary_faces + f * (size_t)face_corners;
    int32_t tag = mesh->boundary_face_tag[f];
    for (int node = 0; node < face_nodes; node++) {
      int32_t number;
      if (degree == 1) {
        number = face[node];
      } else {
        int32_t vertices[4];
        int position[4];
        int count = entity_corners(face_dim, node, face, vertices);
        if (count == 1) {
          number = vertices[0];
        } else {
          int32_t k = first_cell_with_entity(shape_of_mesh(mesh), mesh->cells, adjacency, vertices,
                                             count, INT32_MAX, position);
          if (k < 0)
            return face_not_in_mesh_error(mesh, f, error);
          number = cell_nodes[(size_t)k * nodes_per_cell +
                              (size_t)tensor_entity_node(dim, position, count)];
        }
      }
      tag_node(tags, number, tag);
    }
  }
  return CLMG_SUCCESS;
}

/* The new edges and faces met so far while numbering. */
typedef struct entity_counts {
  size_t edges, faces;
} entity_counts;

/* Numbers the nodes of tensor cell k on its entities of `count` corners (2:
 * edges, 4: faces in 3D; a constant at each call), in node order: an entity
 * is new where no earlier cell has it, else it takes the number it got
 * there. New faces are counted from 0 (number_tensor_nodes_of_dim moves
 * them past the edges). */
static inline clmg_status number_cell_entities(int dim, int count, const clmg_mesh *mesh,
                                               const clmg_vertex_cells *adjacency,
                                               const tensor_node_corners *table, size_t k,
                                               int32_t *cell_nodes, entity_counts *counts,
                                               clmg_error *error) {
  const cell_shape shape = {dim, 1 << dim, 0};
  const size_t nodes_per_cell = dim == 2 ? 9 : 27;
  const int j = count == 2 ? 1 : 2;
  const int32_t *cell = mesh->cells + k * (size_t)shape.corners;
  int32_t *nodes = cell_nodes + k * nodes_per_cell;
  for (int i = 0; i < table->num_on[j]; i++) {
    int32_t vertices[4];
    int position[4];
    for (int m = 0; m < count; m++)
      vertices[m] = cell[table->local_on[j][i][m]];
    int32_t earlier = first_cell_with_entity(shape, mesh->cells, adjacency, vertices, count,
                                             (int32_t)k, position);
    const int node = table->node_on[j][i];
    if (earlier >= 0) {
      nodes[node] = cell_nodes[(size_t)earlier * nodes_per_cell +
                               (size_t)tensor_entity_node(dim, position, count)];
      continue;
    }
    if (mesh->num_vertices + counts->edges + counts->faces >= INT32_MAX)
      return index_limit_error(mesh, error);
    nodes[node] =
        count == 2 ? (int32_t)(mesh->num_vertices + counts->edges++) : (int32_t)counts->faces++;
  }
  return CLMG_SUCCESS;
}

/* Degree 2: numbers the edges, then the faces (3D), then the cells, each in
 * the order the cells first meet them, after the vertices. dim is a
 * constant at each call, so the loops unroll. */
static inline clmg_status number_tensor_nodes_of_dim(const int dim, const clmg_mesh *mesh,
                                                     const clmg_vertex_cells *adjacency,
                                                     int32_t *cell_nodes, size_t *num_nodes,
                                                     size_t *num_edges, clmg_error *error) {
  const int corners = 1 << dim, nodes_per_cell = dim == 2 ? 9 : 27;
  tensor_node_corners table;
  tensor_node_corners_init(dim, &table);
  entity_counts counts = {0, 0};
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * (size_t)corners;
    int32_t *nodes = cell_nodes + k * (size_t)nodes_per_cell;
    for (int i = 0; i < corners; i++)
      nodes[table.node_on[0][i]] = cell[table.local_on[0][i][0]];
    clmg_status status =
        number_cell_entities(dim, 2, mesh, adjacency, &table, k, cell_nodes, &counts, error);
    if (status == CLMG_SUCCESS && dim == 3)
      status = number_cell_entities(dim, 4, mesh, adjacency, &table, k, cell_nodes, &counts, error);
    if (status != CLMG_SUCCESS)
      return status;
  }
  const size_t first_face = mesh->num_vertices + counts.edges,
               first_cell = first_face + counts.faces;
  if (mesh->num_cells > (size_t)INT32_MAX - first_cell)
    return index_limit_error(mesh, error);
  const int centre = table.node_on[dim][0];
  for (size_t k = 0; k < mesh->num_cells; k++) {
    int32_t *nodes = cell_nodes + k * (size_t)nodes_per_cell;
    nodes[centre] = (int32_t)(first_cell + k);
    for (int i = 0; i < table.num_on[2] && dim == 3; i++)
      nodes[table.node_on[2][i]] += (int32_t)first_face;
  }
  *num_nodes = first_cell + mesh->num_cells;
  *num_edges = counts.edges;
  return CLMG_SUCCESS;
}

/* Degree 2 on simplices: the edges after the vertices, in the order the
 * cells first meet them (each cell's edges in clmg_simplex_edges order). */
static inline clmg_status number_simplex_nodes_of_dim(const int dim, const clmg_mesh *mesh,
                                                      const clmg_vertex_cells *adjacency,
                                                      int32_t *cell_nodes, size_t *num_nodes,
                                                      clmg_error *error) {
  const cell_shape shape = {dim, dim + 1, 1};
  const int edges = dim == 2 ? 3 : 6;
  const size_t corners = (size_t)dim + 1, nodes_per_cell = corners + (size_t)edges;
  int edge_of[4][4];
  clmg_simplex_edge_table(dim, edge_of);
  size_t next = mesh->num_vertices;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    int32_t *nodes = cell_nodes + k * nodes_per_cell;
    for (size_t c = 0; c < corners; c++)
      nodes[c] = cell[c];
    for (int e = 0; e < edges; e++) {
      int32_t pair[2] = {cell[clmg_simplex_edges[e][0]], cell[clmg_simplex_edges[e][1]]};
      int position[2];
      int32_t earlier =
          first_cell_with_entity(shape, mesh->cells, adjacency, pair, 2, (int32_t)k, position);
      if (earlier >= 0) {
        nodes[corners + (size_t)e] = cell_nodes[(size_t)earlier * nodes_per_cell + corners +
                                                (size_t)edge_of[position[0]][position[1]]];
        continue;
      }
      if (next >= INT32_MAX)
        return index_limit_error(mesh, error);
      nodes[corners + (size_t)e] = (int32_t)next++;
    }
  }
  *num_nodes = next;
  return CLMG_SUCCESS;
}

/* Edge midpoints, summed in sorted vertex order as for tensor cells. Each is
 * computed once, where its edge was numbered: new edges come in increasing
 * order, so a cell meets an edge first where it carries the next number. */
static inline void simplex_node_coords_of_dim(const int dim, const clmg_mesh *mesh,
                                              const int32_t *cell_nodes, double *node_coords) {
  const int edges = dim == 2 ? 3 : 6;
  const size_t corners = (size_t)dim + 1, nodes_per_cell = corners + (size_t)edges;
  memcpy(node_coords, mesh->coords, mesh->num_vertices * (size_t)dim * sizeof *node_coords);
  size_t next = mesh->num_vertices;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * corners;
    for (int e = 0; e < edges; e++) {
      int32_t number = cell_nodes[k * nodes_per_cell + corners + (size_t)e];
      if ((size_t)number != next)
        continue;
      next++;
      int32_t pair[2] = {cell[clmg_simplex_edges[e][0]], cell[clmg_simplex_edges[e][1]]};
      sort_network(pair, 2);
      double *x = node_coords + (size_t)number * (size_t)dim;
      for (int d = 0; d < dim; d++)
        x[d] = 0.5 * (mesh->coords[(size_t)pair[0] * (size_t)dim + (size_t)d] +
                      mesh->coords[(size_t)pair[1] * (size_t)dim + (size_t)d]);
    }
  }
}

/* A node's position: the mean of its entity's corners, which is the
 * multilinear map at the entity's centre. Summing the corners in sorted
 * order gives a shared node the same bits from every cell, so each is
 * computed once, where it was numbered (as in simplex_node_coords_of_dim). */
static inline void tensor_node_coords_of_dim(const int dim, const clmg_mesh *mesh,
                                             const int32_t *cell_nodes, size_t num_edges,
                                             double *node_coords) {
  const int corners = 1 << dim, nodes_per_cell = dim == 2 ? 9 : 27;
  tensor_node_corners table;
  tensor_node_corners_init(dim, &table);
  clmg_host_copy(node_coords, mesh->coords, mesh->num_vertices * (size_t)dim * sizeof *node_coords);
  size_t next_edge = mesh->num_vertices, next_face = mesh->num_vertices + num_edges;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + k * (size_t)corners;
    const int32_t *nodes = cell_nodes + k * (size_t)nodes_per_cell;
    for (int i = 0; i < table.num_on[1]; i++) {
      const int32_t number = nodes[table.node_on[1][i]];
      if ((size_t)number == next_edge) {
        next_edge++;
        entity_mean(dim, 2, mesh->coords, cell, table.local_on[1][i],
                    node_coords + (size_t)number * (size_t)dim);
      }
    }
    for (int i = 0; i < table.num_on[2] && dim == 3; i++) {
      const int32_t number = nodes[table.node_on[2][i]];
      if ((size_t)number == next_face) {
        next_face++;
        entity_mean(dim, 4, mesh->coords, cell, table.local_on[2][i],
                    node_coords + (size_t)number * (size_t)dim);
      }
    }
    entity_mean(dim, corners, mesh->coords, cell, table.local_on[dim][0],
                node_coords + (size_t)nodes[table.node_on[dim][0]] * (size_t)dim);
  }
}

clmg_status clmg_mesh_quadratic_nodes(const clmg_mesh *mesh, const clmg_vertex_cells *adjacency,
                                      int32_t **cell_nodes, size_t *num_nodes, double **node_coords,
                                      clmg_error *error) {
  const int simplex = mesh->cell_type == CLMG_CELL_SIMPLEX;
  const size_t nodes_per_cell = simplex
                                    ? (size_t)(mesh->dim + 1 + clmg_simplex_num_edges(mesh->dim))
                                    : (size_t)power_of_3(mesh->dim);
  *cell_nodes = NULL;
  *num_nodes = 0;
  if (node_coords)
    *node_coords = NULL;
  int32_t *nodes = clmg_alloc_array(mesh->num_cells, nodes_per_cell * sizeof *nodes);
  if (!nodes)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the degree-2 nodes of %zu cells", mesh->num_cells);
  size_t count = 0, num_edges = 0;
  clmg_status status;
  if (simplex)
    status = mesh->dim == 2 ? number_simplex_nodes_of_dim(2, mesh, adjacency, nodes, &count, error)
                            : number_simplex_nodes_of_dim(3, mesh, adjacency, nodes, &count, error);
  else
    status = mesh->dim == 2
                 ? number_tensor_nodes_of_dim(2, mesh, adjacency, nodes, &count, &num_edges, error)
                 : number_tensor_nodes_of_dim(3, mesh, adjacency, nodes, &count, &num_edges, error);
  if (status != CLMG_SUCCESS) {
    free(nodes);
    return status;
  }
  if (node_coords) {
    double *coords = clmg_alloc_array(count, (size_t)mesh->dim * sizeof *coords);
    if (!coords) {
      free(nodes);
      return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the coordinates of %zu nodes", count);
    }
    if (simplex && mesh->dim == 2)
      simplex_node_coords_of_dim(2, mesh, nodes, coords);
    else if (simplex)
      simplex_node_coords_of_dim(3, mesh, nodes, coords);
    else if (mesh->dim == 2)
      tensor_node_coords_of_dim(2, mesh, nodes, num_edges, coords);
    else
      tensor_node_coords_of_dim(3, mesh, nodes, num_edges, coords);
    *node_coords = coords;
  }
  *cell_nodes = nodes;
  *num_nodes = count;
  return CLMG_SUCCESS;
}

/* clmg_mesh_lagrange_nodes; check 0 skips the structure check of a mesh
 * that passed it or came from clmg_mesh_refine. */
static clmg_status lagrange_nodes(const clmg_mesh *mesh, int degree, int32_t **cell_nodes,
                                  size_t *num_nodes, double **node_coords,
                                  int32_t **node_boundary_tag, int check, clmg_error *error) {
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
  clmg_status status = check ? check_structure(mesh, error) : CLMG_SUCCESS;
  if (status != CLMG_SUCCESS)
    return status;

  const int dim = mesh->dim;
  int32_t *nodes = NULL;
  double *coords = NULL;
  int32_t *tags = NULL;
  clmg_vertex_cells adjacency = {0};
  size_t count = mesh->num_vertices;
  if (degree == 1) {
    const size_t corners = clmg_mesh_vertices_per_cell(mesh);
    nodes = clmg_alloc_array(mesh->num_cells, corners * sizeof *nodes);
    if (!nodes) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate the degree-1 nodes of %zu cells", mesh->num_cells);
      goto done;
    }
    clmg_host_copy(nodes, mesh->cells, mesh->num_cells * corners * sizeof *nodes);
    if (node_coords) {
      coords = clmg_alloc_array(count, (size_t)dim * sizeof *coords);
      if (!coords) {
        status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                "cannot allocate the coordinates of %zu nodes", count);
        goto done;
      }
      clmg_host_copy(coords, mesh->coords, count * (size_t)dim * sizeof *coords);
    }
  } else {
    if (!clmg_vertex_cells_build(mesh, &adjacency)) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate the vertex-to-cell adjacency of a mesh with %zu "
                              "cells",
                              mesh->num_cells);
      goto done;
    }
    status = clmg_mesh_quadratic_nodes(mesh, &adjacency, &nodes, &count,
                                       node_coords ? &coords : NULL, error);
    if (status != CLMG_SUCCESS)
      goto done;
  }
  if (node_boundary_tag) {
    tags = clmg_alloc_zeroed_array(count, sizeof *tags);
    if (!tags) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate the boundary tags of %zu nodes", count);
      goto done;
    }
    status = tag_boundary_nodes(mesh, degree, &adjacency, nodes, tags, error);
    if (status != CLMG_SUCCESS)
      goto done;
  }

done:
  clmg_vertex_cells_free(&adjacency);
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

clmg_status clmg_mesh_lagrange_nodes(const clmg_mesh *mesh, int degree, int32_t **cell_nodes,
                                     size_t *num_nodes, double **node_coords,
                                     int32_t **node_boundary_tag, clmg_error *error) {
  return lagrange_nodes(mesh, degree, cell_nodes, num_nodes, node_coords, node_boundary_tag, 1,
                        error);
}

clmg_status clmg_mesh_lagrange_nodes_checked_input(const clmg_mesh *mesh, int degree,
                                                   int32_t **cell_nodes, size_t *num_nodes,
                                                   double **node_coords,
                                                   int32_t **node_boundary_tag, clmg_error *error) {
  return lagrange_nodes(mesh, degree, cell_nodes, num_nodes, node_coords, node_boundary_tag, 0,
                        error);
}
