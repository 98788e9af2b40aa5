/* Generators of simplicial meshes: the box cut into triangles or Kuhn
 * tetrahedra, the "Regular" tetrahedral mesh of Fu et al. 2014 and a
 * two-material box with spherical inclusions.
 *
 * All of them start from clmg_mesh_box and cut its cells: a structured box's
 * cells all have the global axes as reference axes, so cutting every cell the
 * same way (Kuhn 1960, Freudenthal 1942: the simplices along the diagonal
 * from corner 0 to the opposite corner) makes neighbouring cells' faces
 * match. Host code only. */
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The Kuhn simplices of a tensor cell as tensor-order corner indices, listed
 * with positive orientation for an undistorted (right-handed) cell: the
 * path 0, e_a, e_a + e_b, (1,1,1) over the permutations (a, b, c) of the
 * axes, the odd permutations with their middle vertices swapped. */
static const int kuhn_triangles[2][3] = {{0, 1, 3}, {0, 3, 2}};
static const int kuhn_tetrahedra[6][4] = {
    {0, 1, 3, 7}, /* x, y, z: even */
    {0, 5, 1, 7}, /* x, z, y: odd, swapped */
    {0, 3, 2, 7}, /* y, x, z: odd, swapped */
    {0, 2, 6, 7}, /* y, z, x: even */
    {0, 4, 5, 7}, /* z, x, y: even */
    {0, 6, 4, 7}, /* z, y, x: odd, swapped */
};

/* Cuts every cell of a structured tensor mesh into 2 triangles or 6
 * tetrahedra, and every boundary face (tensor order f0, f1, f2, f3) into
 * (f0, f1, f3) and (f0, f3, f2), along the same diagonals; tags and
 * materials carry over, shapes do not (the boxes have none). The result is
 * checked: a distorted cell can give an inverted simplex. */
static clmg_status kuhn_split(const clmg_mesh *tensor, clmg_mesh *out, clmg_error *error) {
  const int dim = tensor->dim;
  const size_t pieces = dim == 2 ? 2 : 6, corners = (size_t)dim + 1;
  const size_t tensor_corners = (size_t)1 << dim, tensor_face_corners = tensor_corners / 2;
  const size_t face_pieces = dim == 2 ? 1 : 2;
  clmg_mesh mesh = {0};
  mesh.dim = dim;
  mesh.cell_type = CLMG_CELL_SIMPLEX;
  mesh.num_vertices = tensor->num_vertices;
  mesh.num_cells = tensor->num_cells * pieces;
  mesh.num_boundary_faces = tensor->num_boundary_faces * face_pieces;
  if (mesh.num_cells > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cutting %zu cells into simplices gives more than %d cells (the 32-bit "
                          "index limit)",
                          tensor->num_cells, INT32_MAX);
  mesh.coords = clmg_alloc_array(mesh.num_vertices, (size_t)dim * sizeof *mesh.coords);
  mesh.cells = clmg_alloc_array(mesh.num_cells, corners * sizeof *mesh.cells);
  mesh.boundary_faces =
      clmg_alloc_array(mesh.num_boundary_faces, (size_t)dim * sizeof *mesh.boundary_faces);
  mesh.boundary_face_tag =
      clmg_alloc_array(mesh.num_boundary_faces, sizeof *mesh.boundary_face_tag);
  mesh.cell_material =
      tensor->cell_material ? clmg_alloc_array(mesh.num_cells, sizeof *mesh.cell_material) : NULL;
  if (!mesh.coords || !mesh.cells || !mesh.boundary_faces || !mesh.boundary_face_tag ||
      (tensor->cell_material && !mesh.cell_material)) {
    clmg_mesh_free(&mesh);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate %zu simplices",
                          mesh.num_cells);
  }
  memcpy(mesh.coords, tensor->coords, mesh.num_vertices * (size_t)dim * sizeof *mesh.coords);
  for (size_t k = 0; k < tensor->num_cells; k++) {
    const int32_t *cell = tensor->cells + k * tensor_corners;
    for (size_t p = 0; p < pieces; p++) {
      int32_t *simplex = mesh.cells + (k * pieces + p) * corners;
      for (size_t v = 0; v < corners; v++)
        simplex[v] = cell[dim == 2 ? kuhn_triangles[p][v] : kuhn_tetrahedra[p][v]];
      if (mesh.cell_material)
        mesh.cell_material[k * pieces + p] = tensor->cell_material[k];
    }
  }
  for (size_t f = 0; f < tensor->num_boundary_faces; f++) {
    const int32_t *face = tensor->boundary_faces + f * tensor_face_corners;
    int32_t *split = mesh.boundary_faces + f * face_pieces * (size_t)dim;
    if (dim == 2) {
      split[0] = face[0];
      split[1] = face[1];
    } else {
      const int32_t halves[6] = {face[0], face[1], face[3], face[0], face[3], face[2]};
      memcpy(split, halves, sizeof halves);
    }
    for (size_t p = 0; p < face_pieces; p++)
      mesh.boundary_face_tag[f * face_pieces + p] = tensor->boundary_face_tag[f];
  }
  clmg_status status = clmg_mesh_check(&mesh, error);
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(&mesh);
    return status;
  }
  *out = mesh;
  return CLMG_SUCCESS;
}

clmg_status clmg_mesh_box_simplices(int dim, int n, double distortion, uint64_t seed,
                                    clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  clmg_mesh box = {0};
  clmg_status status = clmg_mesh_box(dim, n, distortion, seed, &box, error);
  if (status != CLMG_SUCCESS)
    return status;
  status = kuhn_split(&box, out, error);
  clmg_mesh_free(&box);
  return status;
}

clmg_status clmg_mesh_regular_tetrahedra(int level, clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  if (level < 0 || level > 5)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Regular mesh level %d, expected 0 to 5 (level 5 has %d tetrahedra)",
                          level, 3072 << 15);
  clmg_mesh mesh = {0};
  clmg_status status = clmg_mesh_box_simplices(3, 8, 0.0, 0, &mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  /* [0,1]^3 to [0,4]^3: multiples of 1/8 times 4 stay exact */
  for (size_t i = 0; i < mesh.num_vertices * 3; i++)
    mesh.coords[i] *= 4.0;
  for (int l = 0; l < level; l++) {
    clmg_mesh fine;
    status = clmg_mesh_refine(&mesh, &fine, error);
    clmg_mesh_free(&mesh);
    if (status != CLMG_SUCCESS)
      return status;
    mesh = fine;
  }
  *out = mesh;
  return CLMG_SUCCESS;
}

/* The inclusions of clmg_mesh_blobs: centre (x, y, z) and radius; in 2D the
 * same discs in the plane z = 0 (z ignored). */
static const double blob_spheres[3][4] = {
    {0.30, 0.30, 0.30, 0.20},
    {0.70, 0.65, 0.35, 0.18},
    {0.40, 0.70, 0.72, 0.15},
};

clmg_status clmg_mesh_blobs(int dim, int level, clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  if (dim != 2 && dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "blobs of dimension %d, expected 2 or 3", dim);
  if (level < 0 || level > 6)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "blobs level %d, expected 0 to 6",
                          level);
  clmg_mesh mesh = {0};
  clmg_status status = clmg_mesh_box_simplices(dim, 4 << level, 0.0, 0, &mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  mesh.cell_material = clmg_alloc_array(mesh.num_cells, sizeof *mesh.cell_material);
  if (!mesh.cell_material) {
    clmg_mesh_free(&mesh);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the materials of %zu cells", mesh.num_cells);
  }
  const size_t corners = (size_t)dim + 1;
  for (size_t k = 0; k < mesh.num_cells; k++) {
    double centroid[3] = {0.0, 0.0, 0.0};
    for (size_t v = 0; v < corners; v++)
      for (int d = 0; d < dim; d++)
        centroid[d] += mesh.coords[(size_t)mesh.cells[k * corners + v] * (size_t)dim + (size_t)d] /
                       (double)corners;
    int32_t material = 1;
    for (int s = 0; s < 3; s++) {
      double squared = 0.0;
      for (int d = 0; d < dim; d++)
        squared += (centroid[d] - blob_spheres[s][d]) * (centroid[d] - blob_spheres[s][d]);
      if (squared < blob_spheres[s][3] * blob_spheres[s][3])
        material = 2;
    }
    mesh.cell_material[k] = material;
  }
  *out = mesh;
  return CLMG_SUCCESS;
}
