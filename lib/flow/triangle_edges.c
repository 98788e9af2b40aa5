/* The edges of a 2D triangle mesh: the degrees of freedom of the
 * Crouzeix-Raviart P1nc velocity (include/clmg/stokes.h). The numbering is
 * that of the degree-2 nodes of clmg_mesh_lagrange_nodes, which is also how
 * clmg_mesh_refine numbers the edge midpoints; the boundary tags come from
 * the same call. Host code only. */
#include "flow/stokes_internal.h"

#include <stdlib.h>
#include <string.h>

void clmg_triangle_edges_free(clmg_triangle_edges *edges) {
  if (!edges)
    return;
  free(edges->edge_vertices);
  free(edges->edge_cells);
  free(edges->cell_edges);
  free(edges->edge_tag);
  memset(edges, 0, sizeof *edges);
}

clmg_status clmg_triangle_mesh_check(const clmg_mesh *mesh, clmg_error *error) {
  if (!mesh)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  if (mesh->cell_type != CLMG_CELL_SIMPLEX || mesh->dim != 2)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Crouzeix-Raviart elements need a 2D triangle mesh (got %s cells in "
                          "dimension %d)",
                          mesh->cell_type == CLMG_CELL_SIMPLEX ? "simplex" : "tensor", mesh->dim);
  if ((mesh->num_cells > 0 && !mesh->cells) || (mesh->num_vertices > 0 && !mesh->coords))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has a count without its array");
  return CLMG_SUCCESS;
}

clmg_status clmg_triangle_edges_check(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      const char *name, clmg_error *error) {
  clmg_status status = clmg_triangle_mesh_check(mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (!edges)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
  if ((mesh->num_cells > 0 && (!mesh->cells || !edges->cell_edges)) ||
      (mesh->num_vertices > 0 && !mesh->coords) ||
      (edges->num_edges > 0 && (!edges->edge_vertices || !edges->edge_cells || !edges->edge_tag)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh or %s has a count without its array", name);
  if (edges->num_edges > INT32_MAX / 2 ||
      mesh->num_cells > (size_t)INT32_MAX - 2 * edges->num_edges)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "2 x %zu edges + %zu triangles unknowns pass the 32-bit index limit %d",
                          edges->num_edges, mesh->num_cells, INT32_MAX);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + 3 * k;
    for (int i = 0; i < 3; i++) {
      if (cell[i] < 0 || (size_t)cell[i] >= mesh->num_vertices)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "cell %zu has vertex %d, outside [0, %zu)", k, (int)cell[i],
                              mesh->num_vertices);
      int32_t e = edges->cell_edges[3 * k + (size_t)i];
      if (e < 0 || (size_t)e >= edges->num_edges)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "%s: cell %zu has edge %d, outside [0, %zu)", name, k, (int)e,
                              edges->num_edges);
      int32_t a = cell[(i + 1) % 3], b = cell[(i + 2) % 3];
      int32_t low = a < b ? a : b, high = a < b ? b : a;
      if (edges->edge_vertices[2 * (size_t)e] != low ||
          edges->edge_vertices[2 * (size_t)e + 1] != high)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "%s do not belong to the mesh: edge %d of cell %zu (opposite its "
                              "vertex %d) joins vertices %d and %d, not %d and %d",
                              name, (int)e, k, i, (int)edges->edge_vertices[2 * (size_t)e],
                              (int)edges->edge_vertices[2 * (size_t)e + 1], (int)low, (int)high);
    }
  }
  return CLMG_SUCCESS;
}

/* edge_cells from cell_edges; more than two cells on an edge is an error. */
static clmg_status fill_edge_cells(const clmg_mesh *mesh, clmg_triangle_edges *edges,
                                   clmg_error *error) {
  for (size_t e = 0; e < 2 * edges->num_edges; e++)
    edges->edge_cells[e] = -1;
  for (size_t k = 0; k < mesh->num_cells; k++)
    for (size_t i = 0; i < 3; i++) {
      size_t e = (size_t)edges->cell_edges[3 * k + i];
      int32_t *sides = edges->edge_cells + 2 * e;
      if (sides[0] < 0)
        sides[0] = (int32_t)k;
      else if (sides[1] < 0)
        sides[1] = (int32_t)k;
      else
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "the edge between vertices %d and %d belongs to cells %d, %d and "
                              "%zu: a triangle mesh has at most two cells on an edge",
                              (int)edges->edge_vertices[2 * e],
                              (int)edges->edge_vertices[2 * e + 1], (int)sides[0], (int)sides[1],
                              k);
    }
  for (size_t e = 0; e < edges->num_edges; e++) {
    const int32_t *v = edges->edge_vertices + 2 * e;
    int boundary = edges->edge_cells[2 * e + 1] < 0;
    if (boundary && edges->edge_tag[e] <= 0)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "the edge between vertices %d and %d lies on one triangle (%d) but is "
                            "not a boundary face",
                            (int)v[0], (int)v[1], (int)edges->edge_cells[2 * e]);
    if (!boundary && edges->edge_tag[e] > 0)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "the edge between vertices %d and %d is a boundary face but lies "
                            "between two triangles (%d and %d)",
                            (int)v[0], (int)v[1], (int)edges->edge_cells[2 * e],
                            (int)edges->edge_cells[2 * e + 1]);
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_triangle_edges_create(const clmg_mesh *mesh, clmg_triangle_edges *out,
                                       clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output edges are NULL");
  memset(out, 0, sizeof *out);
  clmg_status status = clmg_triangle_mesh_check(mesh, error);
  if (status == CLMG_SUCCESS)
    status = clmg_p1_check_mesh(mesh, error); /* indices, orientation, unused vertices */
  if (status != CLMG_SUCCESS)
    return status;

  clmg_triangle_edges result = {0};
  int32_t *nodes = NULL, *tags = NULL;
  size_t num_nodes = 0;
  status = clmg_mesh_lagrange_nodes(mesh, 2, &nodes, &num_nodes, NULL, &tags, error);
  if (status != CLMG_SUCCESS)
    goto done;
  result.num_edges = num_nodes - mesh->num_vertices;
  result.edge_vertices = clmg_alloc_array(result.num_edges, 2 * sizeof *result.edge_vertices);
  result.edge_cells = clmg_alloc_array(result.num_edges, 2 * sizeof *result.edge_cells);
  result.cell_edges = clmg_alloc_array(mesh->num_cells, 3 * sizeof *result.cell_edges);
  result.edge_tag = clmg_alloc_array(result.num_edges, sizeof *result.edge_tag);
  if (!result.edge_vertices || !result.edge_cells || !result.cell_edges || !result.edge_tag) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the arrays of %zu edges and %zu triangles",
                            result.num_edges, mesh->num_cells);
    goto done;
  }
  memcpy(result.edge_tag, tags + mesh->num_vertices, result.num_edges * sizeof *tags);
  /* a cell's degree-2 nodes: its vertices, then its edges (0,1), (1,2),
   * (2,0); the edge opposite vertex i is the one between i + 1 and i + 2 */
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + 3 * k;
    for (size_t i = 0; i < 3; i++) {
      int32_t e = nodes[6 * k + 3 + (i + 1) % 3] - (int32_t)mesh->num_vertices;
      int32_t a = cell[(i + 1) % 3], b = cell[(i + 2) % 3];
      result.cell_edges[3 * k + i] = e;
      result.edge_vertices[2 * (size_t)e] = a < b ? a : b;
      result.edge_vertices[2 * (size_t)e + 1] = a < b ? b : a;
    }
  }
  status = fill_edge_cells(mesh, &result, error);

done:
  free(nodes);
  free(tags);
  if (status != CLMG_SUCCESS) {
    clmg_triangle_edges_free(&result);
    return status;
  }
  *out = result;
  return CLMG_SUCCESS;
}
