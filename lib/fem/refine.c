/* Uniform refinement of quadrilateral and hexahedral meshes with projection
 * of new boundary vertices onto curved boundary parts.
 *
 * The fine vertices are the coarse mesh's degree-2 Lagrange nodes, so a
 * fine cell's corners are a 2^dim block of its parent's 3^dim nodes; grid
 * transfers rely on that numbering and on the child order. Host code only. */
#include "fem/mesh_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- projection ---- */

static const clmg_boundary_shape *shape_of_tag(const clmg_mesh *mesh, int32_t tag) {
  for (size_t s = 0; s < mesh->num_shapes; s++)
    if (mesh->shapes[s].tag == tag && mesh->shapes[s].kind != CLMG_SHAPE_NONE)
      return &mesh->shapes[s];
  return NULL;
}

/* Moves x onto the shape: radially from the centre (circle) or from the
 * axis line (cylinder, keeping the axial coordinate). Returns 0 when x is on
 * the centre or the axis, where the direction is undefined. */
static int project(const clmg_boundary_shape *shape, int dim, double *x) {
  double offset[3] = {0.0, 0.0, 0.0};
  for (int d = 0; d < dim; d++)
    offset[d] = x[d] - shape->center[d];
  if (shape->kind == CLMG_SHAPE_CYLINDER) {
    double axis_squared = 0.0, along = 0.0;
    for (int d = 0; d < 3; d++) {
      axis_squared += shape->axis[d] * shape->axis[d];
      along += offset[d] * shape->axis[d];
    }
    for (int d = 0; d < 3; d++)
      offset[d] -= along / axis_squared * shape->axis[d];
  }
  double distance = 0.0;
  for (int d = 0; d < dim; d++)
    distance += offset[d] * offset[d];
  distance = sqrt(distance);
  if (!(distance > 1e-14 * shape->radius))
    return 0;
  for (int d = 0; d < dim; d++)
    x[d] += (shape->radius / distance - 1.0) * offset[d];
  return 1;
}

/* ---- refinement ---- */

clmg_status clmg_mesh_refine(const clmg_mesh *coarse, clmg_mesh *fine, clmg_error *error) {
  if (!fine)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the fine mesh is NULL");
  if (coarse == fine) /* checked first: zeroing fine would wipe the input */
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the fine mesh must not be the coarse mesh");
  memset(fine, 0, sizeof *fine);
  clmg_status status = clmg_mesh_check(coarse, error);
  if (status != CLMG_SUCCESS)
    return status;
  const int dim = coarse->dim;
  const size_t children = (size_t)1 << dim, face_children = (size_t)1 << (dim - 1);
  const int nodes_per_cell = dim == 2 ? 9 : 27, nodes_per_face = dim == 2 ? 3 : 9;
  if (coarse->num_cells > INT32_MAX / children)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "refining %zu cells gives more than %d cells (the 32-bit index limit)",
                          coarse->num_cells, INT32_MAX);

  int32_t *nodes = NULL;
  size_t num_nodes = 0;
  int32_t *projection = NULL; /* per node: 1 + index of its shape, 0 none */
  clmg_vertex_cells adjacency = {0};
  clmg_mesh result = {0};
  status = clmg_mesh_lagrange_nodes(coarse, 2, &nodes, &num_nodes, &result.coords, NULL, error);
  if (status != CLMG_SUCCESS)
    return status;
  result.dim = dim;
  result.num_vertices = num_nodes;
  result.num_cells = coarse->num_cells * children;
  result.num_boundary_faces = coarse->num_boundary_faces * face_children;
  result.num_shapes = coarse->num_shapes;
  result.cells = clmg_alloc_array(result.num_cells, children * sizeof *result.cells);
  result.boundary_faces =
      clmg_alloc_array(result.num_boundary_faces, face_children * sizeof *result.boundary_faces);
  result.boundary_face_tag =
      clmg_alloc_array(result.num_boundary_faces, sizeof *result.boundary_face_tag);
  result.shapes =
      coarse->num_shapes ? clmg_alloc_array(coarse->num_shapes, sizeof *result.shapes) : NULL;
  projection = calloc(num_nodes ? num_nodes : 1, sizeof *projection);
  if (!result.cells || !result.boundary_faces || !result.boundary_face_tag ||
      (coarse->num_shapes && !result.shapes) || !projection ||
      !clmg_vertex_cells_build(coarse, &adjacency)) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the refinement of a mesh with %zu cells",
                            coarse->num_cells);
    goto done;
  }
  if (coarse->num_shapes)
    memcpy(result.shapes, coarse->shapes, coarse->num_shapes * sizeof *result.shapes);

  /* Child (cx, cy, cz) takes the parent's nodes (cx + i, cy + j, cz + l). */
  for (size_t k = 0; k < coarse->num_cells; k++) {
    const int32_t *parent = nodes + k * (size_t)nodes_per_cell;
    for (size_t c = 0; c < children; c++) {
      int32_t *child = result.cells + (k * children + c) * children;
      for (size_t corner = 0; corner < children; corner++) {
        size_t node = 0, stride = 1;
        for (int axis = 0; axis < dim; axis++, stride *= 3)
          node += ((c >> axis & 1) + (corner >> axis & 1)) * stride;
        child[corner] = parent[node];
      }
    }
  }

  /* Boundary faces: the face's degree-2 nodes come from its cell; face node
   * (a, b) sits at the cell's reference point interpolated between the face
   * corners' reference corners. */
  for (size_t f = 0; f < coarse->num_boundary_faces; f++) {
    const int32_t *face = coarse->boundary_faces + f * face_children;
    int position[4];
    int32_t k = -1;
    if (clmg_cells_with_face(coarse, &adjacency, face, -1, &k, position) != 1) {
      /* clmg_mesh_check has ruled this out */
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "boundary face %zu (first vertex %d) is not a face of any cell", f,
                              (int)face[0]);
      goto done;
    }
    int32_t face_nodes[9];
    for (int node = 0; node < nodes_per_face; node++) {
      int digit[2] = {node % 3, node / 3};
      size_t cell_node = 0, stride = 1;
      for (int axis = 0; axis < dim; axis++, stride *= 3) {
        /* twice the reference coordinate: weights (2 - a, a) per face axis */
        int twice = 0, total = 0;
        for (size_t m = 0; m < face_children; m++) {
          int weight = 1;
          for (int face_axis = 0; face_axis < dim - 1; face_axis++)
            weight *= (m >> face_axis & 1) ? digit[face_axis] : 2 - digit[face_axis];
          twice += weight * 2 * (position[m] >> axis & 1);
          total += weight;
        }
        cell_node += (size_t)(twice / total) * stride;
      }
      face_nodes[node] = nodes[(size_t)k * (size_t)nodes_per_cell + cell_node];
    }
    const clmg_boundary_shape *shape = shape_of_tag(coarse, coarse->boundary_face_tag[f]);
    for (int node = 0; node < nodes_per_face; node++)
      if (shape && (node % 3 == 1 || node / 3 == 1)) /* new vertices only */
        projection[face_nodes[node]] = (int32_t)(shape - coarse->shapes) + 1;
    for (size_t c = 0; c < face_children; c++) {
      size_t fine_face = f * face_children + c;
      for (size_t corner = 0; corner < face_children; corner++) {
        int node = (int)((c & 1) + (corner & 1)) + 3 * (int)((c >> 1 & 1) + (corner >> 1 & 1));
        result.boundary_faces[fine_face * face_children + corner] = face_nodes[node];
      }
      result.boundary_face_tag[fine_face] = coarse->boundary_face_tag[f];
    }
  }

  for (size_t v = coarse->num_vertices; v < num_nodes; v++) {
    if (!projection[v])
      continue;
    const clmg_boundary_shape *shape = &coarse->shapes[projection[v] - 1];
    if (!project(shape, dim, result.coords + v * (size_t)dim)) {
      status =
          clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                         "new vertex %zu lies on the %s of the shape of tag %d and cannot be "
                         "projected onto it",
                         v, shape->kind == CLMG_SHAPE_CIRCLE ? "centre" : "axis", (int)shape->tag);
      goto done;
    }
  }

  /* The fine mesh is well formed by construction, but projection can fold
   * cells next to a strongly curved boundary (and a child of a trilinear
   * hexahedron need not inherit its parent's positive corners). */
  for (size_t k = 0; k < result.num_cells; k++) {
    const int32_t *cell = result.cells + k * children;
    int corner;
    double det;
    if (!(clmg_mesh_cell_quality(dim, result.coords, cell, &corner, &det) >
          CLMG_MESH_MIN_CELL_QUALITY)) {
      status = clmg_error_set(
          error, CLMG_ERROR_INVALID_ARGUMENT,
          "refinement folds fine cell %zu (child %zu of coarse cell %zu): its Jacobian "
          "determinant at local corner %d is %g%s",
          k, k % children, k / children, corner, det,
          coarse->num_shapes ? " after boundary projection" : "");
      goto done;
    }
  }

done:
  free(nodes);
  free(projection);
  clmg_vertex_cells_free(&adjacency);
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(&result);
    return status;
  }
  *fine = result;
  return CLMG_SUCCESS;
}
