/* P1 (linear simplex) assembly of the Helmholtz problem of Fu et al. 2014
 * on the host: the mesh and problem checks, the pattern, the closed-form
 * element matrices and the serial assembly of Algorithm 3.1, which is the
 * reference for the device assembly (p1_assembly_device.c) and the serial
 * CPU baseline. */
#include "mesh/mesh_internal.h"
#include "fe/p1_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clmg_helmholtz_problem_defaults(clmg_helmholtz_problem *problem) {
  if (!problem)
    return;
  memset(problem, 0, sizeof *problem);
  problem->lambda = 1.0;
  problem->rhs = CLMG_RHS_SOURCE_ONE;
}

void clmg_p1_cell_coords(const clmg_mesh *mesh, size_t cell, double *coords) {
  size_t dim = (size_t)mesh->dim, corners = dim + 1;
  for (size_t k = 0; k < corners; k++) {
    const double *x = mesh->coords + (size_t)mesh->cells[cell * corners + k] * dim;
    for (size_t c = 0; c < dim; c++)
      coords[k * dim + c] = x[c];
  }
}

double clmg_p1_simplex(int dim, const double *x, double grad[4][3]) {
  if (dim == 2) {
    double e1[2] = {x[2] - x[0], x[3] - x[1]}, e2[2] = {x[4] - x[0], x[5] - x[1]};
    double det = e1[0] * e2[1] - e1[1] * e2[0];
    if (grad && det != 0.0) {
      /* the rows of the inverse of [e1 e2] */
      grad[1][0] = e2[1] / det;
      grad[1][1] = -e2[0] / det;
      grad[2][0] = -e1[1] / det;
      grad[2][1] = e1[0] / det;
      grad[0][0] = -grad[1][0] - grad[2][0];
      grad[0][1] = -grad[1][1] - grad[2][1];
    }
    return det / 2.0;
  }
  double e[3][3];
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 3; c++)
      e[k][c] = x[(k + 1) * 3 + c] - x[c];
  /* the rows of the inverse of [e1 e2 e3]: cross products over det */
  double cross[3][3];
  for (int k = 0; k < 3; k++) {
    const double *p = e[(k + 1) % 3], *q = e[(k + 2) % 3];
    cross[k][0] = p[1] * q[2] - p[2] * q[1];
    cross[k][1] = p[2] * q[0] - p[0] * q[2];
    cross[k][2] = p[0] * q[1] - p[1] * q[0];
  }
  double det = e[0][0] * cross[0][0] + e[0][1] * cross[0][1] + e[0][2] * cross[0][2];
  if (grad && det != 0.0)
    for (int c = 0; c < 3; c++) {
      grad[0][c] = 0.0;
      for (int k = 0; k < 3; k++) {
        grad[k + 1][c] = cross[k][c] / det;
        grad[0][c] -= grad[k + 1][c];
      }
    }
  return det / 6.0;
}

void clmg_p1_element(int dim, double volume, const double grad[4][3], double sigma, double lambda,
                     double a[4][4], double b[4]) {
  int corners = dim + 1;
  double mass = volume / (double)((dim + 1) * (dim + 2));
  for (int k = 0; k < corners; k++) {
    for (int l = 0; l < corners; l++) {
      double dot = 0.0;
      for (int c = 0; c < dim; c++)
        dot += grad[k][c] * grad[l][c];
      a[k][l] = sigma * volume * dot + lambda * mass * (k == l ? 2.0 : 1.0);
    }
    b[k] = volume / (double)corners;
  }
}

clmg_status clmg_p1_check_mesh(const clmg_mesh *mesh, clmg_error *error) {
  if (!mesh)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  if (mesh->cell_type != CLMG_CELL_SIMPLEX || (mesh->dim != 2 && mesh->dim != 3))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "P1 assembly needs a triangle or tetrahedron mesh (got %s cells in "
                          "dimension %d)",
                          mesh->cell_type == CLMG_CELL_SIMPLEX ? "simplex" : "tensor", mesh->dim);
  if (mesh->num_vertices > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu vertices, beyond the 32-bit index limit",
                          mesh->num_vertices);
  if ((mesh->num_cells > 0 && !mesh->cells) || (mesh->num_vertices > 0 && !mesh->coords))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has no cells or coords array");
  size_t corners = (size_t)mesh->dim + 1;
  uint8_t *used = calloc(mesh->num_vertices ? mesh->num_vertices : 1, 1);
  if (!used)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the vertex marks of %zu vertices", mesh->num_vertices);
  clmg_status status = CLMG_SUCCESS;
  for (size_t cell = 0; cell < mesh->num_cells && status == CLMG_SUCCESS; cell++) {
    for (size_t k = 0; k < corners; k++) {
      int32_t v = mesh->cells[cell * corners + k];
      if (v < 0 || (size_t)v >= mesh->num_vertices) {
        status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "cell %zu has vertex %d, outside [0, %zu)", cell, (int)v,
                                mesh->num_vertices);
        break;
      }
      used[v] = 1;
    }
    if (status != CLMG_SUCCESS)
      break;
    double coords[12];
    clmg_p1_cell_coords(mesh, cell, coords);
    double volume = clmg_p1_simplex(mesh->dim, coords, NULL);
    if (!(volume > 0.0))
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "cell %zu is inverted or degenerate (signed volume %g): simplices "
                              "must list their vertices with a positive orientation",
                              cell, volume);
  }
  for (size_t v = 0; v < mesh->num_vertices && status == CLMG_SUCCESS; v++)
    if (!used[v])
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "vertex %zu belongs to no cell (its row of A would be empty)", v);
  free(used);
  return status;
}

clmg_status clmg_p1_check_problem(const clmg_helmholtz_problem *problem, clmg_error *error) {
  if (!(problem->lambda >= 0.0) || !isfinite(problem->lambda))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "lambda is %g; it must be finite and >= 0", problem->lambda);
  if (problem->rhs != CLMG_RHS_SOURCE_ONE && problem->rhs != CLMG_RHS_ONES)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "unknown right-hand side kind %d",
                          (int)problem->rhs);
  if (problem->num_materials > 0 && (!problem->material_ids || !problem->sigma))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu materials but no material_ids or sigma array",
                          problem->num_materials);
  for (size_t k = 0; k < problem->num_materials; k++)
    if (!(problem->sigma[k] >= 0.0) || !isfinite(problem->sigma[k]))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "sigma of material %d is %g; it must be finite and >= 0",
                            (int)problem->material_ids[k], problem->sigma[k]);
  return CLMG_SUCCESS;
}

int clmg_p1_find_sigma(const clmg_helmholtz_problem *problem, int32_t id, double *sigma) {
  if (problem->num_materials == 0) {
    *sigma = 1.0;
    return 1;
  }
  for (size_t k = 0; k < problem->num_materials; k++)
    if (problem->material_ids[k] == id) {
      *sigma = problem->sigma[k];
      return 1;
    }
  return 0;
}

static int is_dirichlet_tag(const clmg_helmholtz_problem *problem, int32_t tag) {
  for (size_t k = 0; k < problem->num_dirichlet_tags; k++)
    if (problem->dirichlet_tags[k] == tag)
      return 1;
  return 0;
}

clmg_status clmg_p1_dirichlet_mask(const clmg_helmholtz_problem *problem, size_t num_vertices,
                                   size_t per_face, size_t num_faces, const int32_t *faces,
                                   const int32_t *tags, uint8_t *mask, size_t *count,
                                   clmg_error *error) {
  memset(mask, 0, num_vertices);
  *count = 0;
  if (problem->num_dirichlet_tags == 0)
    return CLMG_SUCCESS;
  if (!problem->dirichlet_tags)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu Dirichlet tags but no dirichlet_tags array",
                          problem->num_dirichlet_tags);
  if (num_faces > 0 && (!faces || !tags))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu boundary faces but no face or tag array", num_faces);
  for (size_t f = 0; f < num_faces; f++) {
    int dirichlet = is_dirichlet_tag(problem, tags[f]);
    for (size_t k = 0; k < per_face; k++) {
      int32_t v = faces[f * per_face + k];
      if (v < 0 || (size_t)v >= num_vertices)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "boundary face %zu has vertex %d, outside [0, %zu)", f, (int)v,
                              num_vertices);
      if (dirichlet && !mask[v]) {
        mask[v] = 1;
        ++*count;
      }
    }
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_p1_pattern(const clmg_mesh *mesh, clmg_csr *pattern, clmg_error *error) {
  clmg_error_clear(error);
  if (!pattern)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output pattern is NULL");
  memset(pattern, 0, sizeof *pattern);
  clmg_status status = clmg_p1_check_mesh(mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  /* P1 DOFs are the vertices: the coupling graph of a degree-1 "space"
   * whose cell DOFs are the cells' vertices (the graph reads nothing else) */
  clmg_fe_space vertices = {0};
  vertices.mesh = mesh;
  vertices.degree = 1;
  vertices.num_dofs = mesh->num_vertices;
  vertices.dofs_per_cell = (size_t)mesh->dim + 1;
  vertices.cell_dofs = mesh->cells;
  int64_t *row_ptr = NULL;
  int32_t *col = NULL;
  status = clmg_fe_dof_graph(&vertices, NULL, &row_ptr, &col, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t nnz = (size_t)row_ptr[mesh->num_vertices];
  double *val = calloc(nnz ? nnz : 1, sizeof *val);
  if (!val) {
    free(row_ptr);
    free(col);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the values of %zu matrix entries", nnz);
  }
  pattern->rows = pattern->cols = mesh->num_vertices;
  pattern->row_ptr = row_ptr;
  pattern->col = col;
  pattern->val = val;
  return CLMG_SUCCESS;
}

clmg_status clmg_p1_assemble_host(const clmg_mesh *mesh, const clmg_helmholtz_problem *problem,
                                  clmg_csr *a, double *b, clmg_error *error) {
  clmg_error_clear(error);
  if (!a || !b)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output %s is NULL",
                          !a ? "matrix" : "right-hand side b");
  memset(a, 0, sizeof *a);
  clmg_helmholtz_problem defaults;
  clmg_helmholtz_problem_defaults(&defaults);
  if (!problem)
    problem = &defaults;
  clmg_status status = clmg_p1_check_problem(problem, error);
  if (status == CLMG_SUCCESS && mesh)
    status = clmg_mesh_check_scale(mesh, error);
  if (status == CLMG_SUCCESS)
    status = clmg_p1_pattern(mesh, a, error);
  if (status != CLMG_SUCCESS)
    return status;
  int dim = mesh->dim;
  size_t corners = (size_t)dim + 1;
  for (size_t i = 0; i < mesh->num_vertices; i++)
    b[i] = problem->rhs == CLMG_RHS_ONES ? 1.0 : 0.0;
  for (size_t cell = 0; cell < mesh->num_cells; cell++) {
    int32_t material = clmg_mesh_cell_material(mesh, cell);
    double sigma;
    if (!clmg_p1_find_sigma(problem, material, &sigma)) {
      clmg_csr_free(a);
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cell %zu has material id %d, for which the problem gives no sigma",
                            cell, (int)material);
    }
    double coords[12], grad[4][3], element[4][4], load[4];
    clmg_p1_cell_coords(mesh, cell, coords);
    double volume = clmg_p1_simplex(dim, coords, grad);
    clmg_p1_element(dim, volume, grad, sigma, problem->lambda, element, load);
    const int32_t *v = mesh->cells + cell * corners;
    for (size_t k = 0; k < corners; k++) {
      for (size_t l = 0; l < corners; l++)
        a->val[clmg_csr_find_entry(a, (size_t)v[k], v[l])] += element[k][l];
      if (problem->rhs == CLMG_RHS_SOURCE_ONE)
        b[v[k]] += load[k];
    }
  }
  if (problem->num_dirichlet_tags == 0)
    return CLMG_SUCCESS;
  /* symmetric elimination of u = 0: identity rows and columns, b = 0 */
  uint8_t *mask = clmg_alloc_array(mesh->num_vertices, 1);
  size_t count = 0;
  if (!mask)
    status =
        clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate the Dirichlet marks of %zu vertices", mesh->num_vertices);
  else
    status =
        clmg_p1_dirichlet_mask(problem, mesh->num_vertices, (size_t)dim, mesh->num_boundary_faces,
                               mesh->boundary_faces, mesh->boundary_face_tag, mask, &count, error);
  for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; i++) {
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      if (mask[i] || mask[a->col[k]])
        a->val[k] = (size_t)a->col[k] == i ? 1.0 : 0.0;
    if (mask[i])
      b[i] = 0.0;
  }
  free(mask);
  if (status != CLMG_SUCCESS)
    clmg_csr_free(a);
  return status;
}
