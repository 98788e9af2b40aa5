/* Uniform refinement of quadrilateral and hexahedral meshes, and of
 * triangle and tetrahedral meshes, with projection of new boundary vertices
 * onto curved boundary parts.
 *
 * The fine vertices are the coarse mesh's degree-2 Lagrange nodes, so a
 * fine cell's corners are a 2^dim block of its parent's 3^dim nodes; grid
 * transfers rely on that numbering and on the child order. Simplices are
 * cut at their edge midpoints (their P2 nodes): a triangle into 4, a
 * tetrahedron into 4 corner tetrahedra and an octahedron cut along its
 * shortest diagonal into 4 more (Bey 1995's regular refinement, with the
 * diagonal chosen by length rather than by a fixed rule). Host code only. */
#include "mesh/mesh_internal.h"

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

/* ---- what both cell types share ---- */

/* The parallel screen of project_and_check: each range records the first
 * parent whose children the screen does not clear (SIZE_MAX: none). */
enum { SCREEN_GRAIN = 4096 };
typedef struct screen_job {
  int dim;
  const clmg_mesh *fine;
  const int32_t *tensor_nodes;
  size_t first_unclear[CLMG_MAX_HOST_THREADS]; /* per range */
} screen_job;

static void screen_range(void *data, size_t range, size_t begin, size_t end) {
  screen_job *job = data;
  const size_t nodes_per_cell = job->dim == 2 ? 9 : 27;
  for (size_t parent = begin; parent < end; parent++)
    if (!clmg_tensor_children_certainly_valid(job->dim, job->fine->coords,
                                              job->tensor_nodes + parent * nodes_per_cell)) {
      job->first_unclear[range] = parent;
      return;
    }
}

/* Moves the new vertices marked in projection (indexed from the first new
 * vertex; 1 + index of their shape, 0 none; NULL when the mesh has no
 * shapes) onto their shapes, then checks every fine cell: the fine mesh is
 * well formed by construction, but projection can fold cells next to a
 * strongly curved boundary (and a child of a trilinear hexahedron need not
 * inherit its parent's positive corners). Tensor cells pass the quality
 * screen a coarse cell's children at a time (from its degree-2 nodes,
 * tensor_nodes; NULL for simplices). */
static clmg_status project_and_check(const clmg_mesh *coarse, clmg_mesh *fine,
                                     const int32_t *projection, const int32_t *tensor_nodes,
                                     clmg_error *error) {
  const int dim = coarse->dim;
  for (size_t v = coarse->num_vertices; v < fine->num_vertices && projection; v++) {
    const int32_t mark = projection[v - coarse->num_vertices];
    if (!mark)
      continue;
    const clmg_boundary_shape *shape = &coarse->shapes[mark - 1];
    if (!project(shape, dim, fine->coords + v * (size_t)dim))
      return clmg_error_set(
          error, CLMG_ERROR_INVALID_ARGUMENT,
          "new vertex %zu lies on the %s of the shape of tag %d and cannot be projected onto it", v,
          shape->kind == CLMG_SHAPE_CIRCLE ? "centre" : "axis", (int)shape->tag);
  }
  /* the screen on all cores; the detailed check, serial, from the first
   * parent it does not clear (almost never reached) */
  screen_job job = {dim, fine, tensor_nodes, {0}};
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; t++)
    job.first_unclear[t] = SIZE_MAX;
  size_t first = 0;
  if (tensor_nodes) {
    clmg_host_parallel_for(coarse->num_cells, SCREEN_GRAIN, screen_range, &job);
    first = coarse->num_cells;
    for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; t++)
      first = job.first_unclear[t] < first ? job.first_unclear[t] : first;
  }
  return clmg_mesh_check_refined_cells(coarse->num_cells, coarse->num_shapes > 0, fine,
                                       tensor_nodes, first, error);
}

clmg_status clmg_mesh_check_refined_cells(size_t coarse_cells, int projected, const clmg_mesh *fine,
                                          const int32_t *tensor_nodes, size_t first,
                                          clmg_error *error) {
  const int dim = fine->dim;
  const size_t children = (size_t)1 << dim, nodes_per_cell = dim == 2 ? 9 : 27;
  for (size_t parent = first; parent < coarse_cells; parent++) {
    if (tensor_nodes && clmg_tensor_children_certainly_valid(
                            dim, fine->coords, tensor_nodes + parent * nodes_per_cell))
      continue; /* all its children pass */
    for (size_t child = 0; child < children; child++) {
      const size_t k = parent * children + child;
      if (clmg_mesh_cell_certainly_valid(fine, k))
        continue;
      int corner;
      double det;
      double quality = clmg_mesh_quality_of_cell(fine, k, &corner, &det);
      if (quality > CLMG_MESH_MIN_CELL_QUALITY)
        continue;
      const char *after = projected ? " after boundary projection" : "";
      if (fine->cell_type == CLMG_CELL_SIMPLEX)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "refinement folds fine cell %zu (child %zu of coarse cell %zu): its "
                              "volume is %g, its quality %g%s",
                              k, child, parent, det, quality, after);
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "refinement folds fine cell %zu (child %zu of coarse cell %zu): its "
                            "Jacobian determinant at local corner %d is %g%s",
                            k, child, parent, corner, det, after);
    }
  }
  return CLMG_SUCCESS;
}

/* Children inherit their parent's material. */
static int inherit_materials(const clmg_mesh *coarse, clmg_mesh *fine) {
  if (!coarse->cell_material)
    return 1;
  const size_t children = (size_t)1 << coarse->dim;
  fine->cell_material = clmg_alloc_array(fine->num_cells, sizeof *fine->cell_material);
  if (!fine->cell_material)
    return 0;
  for (size_t k = 0; k < fine->num_cells; k++)
    fine->cell_material[k] = coarse->cell_material[k / children];
  return 1;
}

/* Marks new vertex `node` for projection onto shape (NULL: none). */
static void mark_for_projection(const clmg_mesh *coarse, const clmg_boundary_shape *shape,
                                int32_t node, int32_t *projection) {
  if (shape)
    projection[(size_t)node - coarse->num_vertices] = (int32_t)(shape - coarse->shapes) + 1;
}

/* The vertex-to-cell adjacency and the degree-2 nodes of the coarse mesh
 * (the fine vertices, with their coordinates), the arrays of the refined
 * mesh (children cells of cell_vertices vertices, face_children faces of
 * face_vertices vertices per coarse one), its shapes and the projection
 * marks of the new vertices (only when there are shapes): what both
 * refinements (tensor and simplex) start from. */
static clmg_status allocate_refined(const clmg_mesh *coarse, size_t children, size_t cell_vertices,
                                    size_t face_children, size_t face_vertices,
                                    clmg_vertex_cells *adjacency, int32_t **nodes,
                                    clmg_mesh *result, int32_t **projection, clmg_error *error) {
  if (!clmg_vertex_cells_build(coarse, adjacency))
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the refinement of a mesh with %zu cells",
                          coarse->num_cells);
  clmg_status status = clmg_mesh_quadratic_nodes(coarse, adjacency, nodes, &result->num_vertices,
                                                 &result->coords, error);
  if (status != CLMG_SUCCESS)
    return status;
  result->dim = coarse->dim;
  result->cell_type = coarse->cell_type;
  result->num_cells = coarse->num_cells * children;
  result->num_boundary_faces = coarse->num_boundary_faces * face_children;
  result->num_shapes = coarse->num_shapes;
  result->cells = clmg_alloc_array(result->num_cells, cell_vertices * sizeof *result->cells);
  result->boundary_faces =
      clmg_alloc_array(result->num_boundary_faces, face_vertices * sizeof *result->boundary_faces);
  result->boundary_face_tag =
      clmg_alloc_array(result->num_boundary_faces, sizeof *result->boundary_face_tag);
  result->shapes =
      coarse->num_shapes ? clmg_alloc_array(coarse->num_shapes, sizeof *result->shapes) : NULL;
  *projection = coarse->num_shapes
                    ? clmg_alloc_zeroed_array(result->num_vertices - coarse->num_vertices,
                                              sizeof **projection)
                    : NULL;
  if (!result->cells || !result->boundary_faces || !result->boundary_face_tag ||
      (coarse->num_shapes && (!result->shapes || !*projection)) ||
      !inherit_materials(coarse, result))
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the refinement of a mesh with %zu cells",
                          coarse->num_cells);
  if (coarse->num_shapes)
    memcpy(result->shapes, coarse->shapes, coarse->num_shapes * sizeof *result->shapes);
  return CLMG_SUCCESS;
}

/* ---- simplices ---- */

static double squared_distance(int dim, const double *coords, int32_t a, int32_t b) {
  double sum = 0.0;
  for (int d = 0; d < dim; d++) {
    double difference =
        coords[(size_t)a * (size_t)dim + (size_t)d] - coords[(size_t)b * (size_t)dim + (size_t)d];
    sum += difference * difference;
  }
  return sum;
}

/* The sign of det[v1 - v0, v2 - v0, v3 - v0]. */
static int tetrahedron_orientation(const double *coords, const int32_t *tet) {
  double e[3][3];
  for (int i = 0; i < 3; i++)
    for (int d = 0; d < 3; d++)
      e[i][d] = coords[(size_t)tet[i + 1] * 3 + (size_t)d] - coords[(size_t)tet[0] * 3 + (size_t)d];
  double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
               e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
               e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
  return det > 0.0 ? 1 : -1;
}

/* Children of a simplex with nodes p (vertices, then edge midpoints in
 * clmg_simplex_edges order): child i < dim + 1 is corner i's (the parent
 * shrunk by 1/2 towards vertex i, same vertex order, so positive); a
 * triangle's child 3 is the middle one; a tetrahedron's children 4..7 fill
 * the octahedron of the midpoints around its shortest diagonal. */
static void simplex_children(int dim, const int32_t *p, const int edge_of[4][4],
                             const double *coords, int32_t *child) {
  const int corners = dim + 1;
#define MID(i, j) p[corners + edge_of[i][j]]
  for (int i = 0; i < corners; i++)
    for (int j = 0; j < corners; j++)
      child[i * corners + j] = i == j ? p[i] : MID(i, j);
  if (dim == 2) {
    /* (m01, m12, m02): edges (v2 - v0) / 2 and (v2 - v1) / 2, a quarter of
     * the parent's positive determinant */
    int32_t *middle = child + 3 * corners;
    middle[0] = MID(0, 1);
    middle[1] = MID(1, 2);
    middle[2] = MID(0, 2);
    return;
  }
  /* the diagonals join the midpoints of opposite edges (i, j) and (k, l) */
  static const int opposite[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2}};
  int best = 0;
  double shortest = INFINITY;
  for (int c = 0; c < 3; c++) {
    const int *q = opposite[c];
    double length = squared_distance(3, coords, MID(q[0], q[1]), MID(q[2], q[3]));
    if (length < shortest) { /* ties: the first, so the choice is deterministic */
      shortest = length;
      best = c;
    }
  }
  const int i = opposite[best][0], j = opposite[best][1], k = opposite[best][2],
            l = opposite[best][3];
  const int32_t ring[4] = {MID(i, k), MID(j, k), MID(j, l), MID(i, l)};
  for (int r = 0; r < 4; r++) {
    int32_t *tet = child + (4 + r) * corners;
    tet[0] = MID(i, j);
    tet[1] = MID(k, l);
    tet[2] = ring[r];
    tet[3] = ring[(r + 1) % 4];
    if (tetrahedron_orientation(coords, tet) < 0) {
      int32_t swap = tet[2];
      tet[2] = tet[3];
      tet[3] = swap;
    }
  }
#undef MID
}

static clmg_status refine_simplices(const clmg_mesh *coarse, clmg_mesh *fine, clmg_error *error) {
  const int dim = coarse->dim, corners = dim + 1, edges = clmg_simplex_num_edges(dim);
  const size_t children = (size_t)1 << dim, face_children = (size_t)1 << (dim - 1);
  const size_t nodes_per_cell = (size_t)(corners + edges);
  int edge_of[4][4];
  clmg_simplex_edge_table(dim, edge_of);
  int32_t *nodes = NULL;
  int32_t *projection = NULL;
  clmg_vertex_cells adjacency = {0};
  clmg_mesh result = {0};
  clmg_status status =
      allocate_refined(coarse, children, (size_t)corners, face_children, (size_t)dim, &adjacency,
                       &nodes, &result, &projection, error);
  if (status != CLMG_SUCCESS)
    goto done;
  for (size_t k = 0; k < coarse->num_cells; k++)
    simplex_children(dim, nodes + k * nodes_per_cell, (const int(*)[4])edge_of, result.coords,
                     result.cells + k * children * (size_t)corners);

  /* A boundary face (a, b[, c]) takes its edge midpoints from its cell and
   * is cut like a cell one dimension down: (a, m_ab), (m_ab, b) in 2D; the
   * three corner triangles, then the middle one in 3D. */
  for (size_t f = 0; f < coarse->num_boundary_faces; f++) {
    const int32_t *face = coarse->boundary_faces + f * (size_t)dim;
    int position[3];
    int32_t k = -1;
    if (clmg_cells_with_face(coarse, &adjacency, face, -1, &k, position) != 1) {
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "boundary face %zu (first vertex %d) is not a face of any cell", f,
                              (int)face[0]);
      goto done;
    }
    const int32_t *p = nodes + (size_t)k * nodes_per_cell;
    int32_t mid[3][3];
    for (int a = 0; a < dim; a++)
      for (int b = 0; b < dim; b++)
        mid[a][b] = a == b ? face[a] : p[corners + edge_of[position[a]][position[b]]];
    int32_t *out = result.boundary_faces + f * face_children * (size_t)dim;
    for (int a = 0; a < dim; a++)
      for (int b = 0; b < dim; b++)
        out[a * dim + b] = mid[a][b];
    if (dim == 3) {
      out[9] = mid[0][1];
      out[10] = mid[1][2];
      out[11] = mid[0][2];
    }
    for (size_t c = 0; c < face_children; c++)
      result.boundary_face_tag[f * face_children + c] = coarse->boundary_face_tag[f];
    const clmg_boundary_shape *shape = shape_of_tag(coarse, coarse->boundary_face_tag[f]);
    for (int a = 0; a < dim && shape; a++)
      for (int b = a + 1; b < dim; b++)
        mark_for_projection(coarse, shape, mid[a][b], projection);
  }
  status = project_and_check(coarse, &result, projection, NULL, error);

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

/* ---- quadrilaterals and hexahedra ---- */

/* Child (cx, cy, cz) of a tensor cell takes its parent's nodes (cx + i,
 * cy + j, cz + l): child_node[c * children + corner]. */
enum { CHILDREN_GRAIN = 16384 };
typedef struct children_job {
  const int32_t *nodes;
  int32_t *cells;
  size_t nodes_per_cell, children;
  const int *child_node;
} children_job;

static void children_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const children_job *job = data;
  const size_t corners = job->children * job->children;
  for (size_t k = begin; k < end; k++) {
    const int32_t *parent = job->nodes + k * job->nodes_per_cell;
    int32_t *child = job->cells + k * corners;
    for (size_t i = 0; i < corners; i++)
      child[i] = parent[job->child_node[i]];
  }
}

static clmg_status refine_tensor_cells(const clmg_mesh *coarse, clmg_mesh *fine,
                                       clmg_error *error) {
  const int dim = coarse->dim;
  const size_t children = (size_t)1 << dim, face_children = (size_t)1 << (dim - 1);
  const int nodes_per_cell = dim == 2 ? 9 : 27, nodes_per_face = dim == 2 ? 3 : 9;
  int32_t *nodes = NULL;
  int32_t *projection = NULL;
  clmg_vertex_cells adjacency = {0};
  clmg_mesh result = {0};
  clmg_status status = allocate_refined(coarse, children, children, face_children, face_children,
                                        &adjacency, &nodes, &result, &projection, error);
  if (status != CLMG_SUCCESS)
    goto done;

  int child_node[8 * 8]; /* children_job */
  for (size_t c = 0; c < children; c++)
    for (size_t corner = 0; corner < children; corner++) {
      int node = 0, stride = 1;
      for (int axis = 0; axis < dim; axis++, stride *= 3)
        node += (int)((c >> axis & 1) + (corner >> axis & 1)) * stride;
      child_node[c * children + corner] = node;
    }
  children_job job = {nodes, result.cells, (size_t)nodes_per_cell, children, child_node};
  clmg_host_parallel_for(coarse->num_cells, CHILDREN_GRAIN, children_range, &job);

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
      if (node % 3 == 1 || node / 3 == 1) /* new vertices only */
        mark_for_projection(coarse, shape, face_nodes[node], projection);
    for (size_t c = 0; c < face_children; c++) {
      size_t fine_face = f * face_children + c;
      for (size_t corner = 0; corner < face_children; corner++) {
        int node = (int)((c & 1) + (corner & 1)) + 3 * (int)((c >> 1 & 1) + (corner >> 1 & 1));
        result.boundary_faces[fine_face * face_children + corner] = face_nodes[node];
      }
      result.boundary_face_tag[fine_face] = coarse->boundary_face_tag[f];
    }
  }

  status = project_and_check(coarse, &result, projection, nodes, error);

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

/* ---- refinement ---- */

/* The argument checks both entry points share; zeroes fine. */
static clmg_status start_refinement(const clmg_mesh *coarse, clmg_mesh *fine, clmg_error *error) {
  if (!fine)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the fine mesh is NULL");
  if (coarse == fine) /* checked first: zeroing fine would wipe the input */
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the fine mesh must not be the coarse mesh");
  memset(fine, 0, sizeof *fine);
  return CLMG_SUCCESS;
}

/* Refines a coarse mesh that passes clmg_mesh_check. */
static clmg_status refine_valid_mesh(const clmg_mesh *coarse, clmg_mesh *fine, clmg_error *error) {
  if (coarse->num_cells > INT32_MAX / ((size_t)1 << coarse->dim))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "refining %zu cells gives more than %d cells (the 32-bit index limit)",
                          coarse->num_cells, INT32_MAX);
  return coarse->cell_type == CLMG_CELL_SIMPLEX ? refine_simplices(coarse, fine, error)
                                                : refine_tensor_cells(coarse, fine, error);
}

clmg_status clmg_mesh_refine(const clmg_mesh *coarse, clmg_mesh *fine, clmg_error *error) {
  clmg_status status = start_refinement(coarse, fine, error);
  if (status == CLMG_SUCCESS)
    status = clmg_mesh_check(coarse, error);
  return status == CLMG_SUCCESS ? refine_valid_mesh(coarse, fine, error) : status;
}

clmg_status clmg_mesh_refine_checked_input(const clmg_mesh *coarse, clmg_mesh *fine,
                                           clmg_error *error) {
  clmg_error_clear(error);
  clmg_status status = start_refinement(coarse, fine, error);
  if (status == CLMG_SUCCESS && !coarse)
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  return status == CLMG_SUCCESS ? refine_valid_mesh(coarse, fine, error) : status;
}
