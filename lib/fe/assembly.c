/* Host assembly of the Poisson problem on Q1/Q2 spaces with symmetric
 * Dirichlet elimination (also with a coefficient constant on each cell,
 * for the q2-jump problem of spd_problems.c), and the L2 error of a
 * discrete solution.
 *
 * The CSR pattern is built directly from the cells' DOF lists (already
 * without the eliminated couplings), and element matrices are scattered into
 * it by binary search in the row: memory stays close to that of the matrix
 * itself, where triplets would need several times more for the 10^7-entry
 * benchmark matrices. Shape functions and the geometry map's gradients are
 * tabulated at the quadrature points once per call; the geometry is the
 * multilinear map of the cell's corners, so the Jacobian varies inside a
 * cell and is evaluated at every point. */
#include "fe/fe_internal.h"
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

clmg_fe_reference_cell *clmg_fe_tabulate(int dim, int degree, int points_per_axis) {
  clmg_fe_reference_cell *ref = malloc(sizeof *ref);
  if (!ref)
    return NULL;
  double points[CLMG_FE_MAX_GAUSS], weights[CLMG_FE_MAX_GAUSS];
  clmg_fe_gauss_legendre(points_per_axis, points, weights);
  ref->dim = dim;
  ref->degree = degree;
  ref->dofs =
      (size_t)(dim == 2 ? (degree + 1) * (degree + 1) : (degree + 1) * (degree + 1) * (degree + 1));
  ref->corners = (size_t)1 << dim;
  size_t n = (size_t)points_per_axis;
  ref->points = dim == 2 ? n * n : n * n * n;
  for (size_t q = 0; q < ref->points; q++) {
    size_t index[3] = {q % n, (q / n) % n, q / (n * n)};
    double xi[3];
    ref->weight[q] = 1.0;
    for (int d = 0; d < dim; d++) {
      xi[d] = points[index[d]];
      ref->weight[q] *= weights[index[d]];
    }
    clmg_fe_basis(dim, degree, xi, ref->phi[q], ref->dphi[q]);
    clmg_fe_basis(dim, 1, xi, ref->corner_phi[q], ref->corner_dphi[q]);
  }
  return ref;
}

/* The geometry at point q of a cell with the given corner coordinates:
 * the physical point x, the inverse Jacobian (inverse[b][a] = d xi_b / d
 * x_a) and the Jacobian determinant as return value. */
static double map_point(const clmg_fe_reference_cell *ref, size_t q, const double *corner_coords,
                        double *x, double inverse[3][3]) {
  int dim = ref->dim;
  double jacobian[3][3] = {{0}};
  for (int a = 0; a < dim; a++)
    x[a] = 0.0;
  for (size_t v = 0; v < ref->corners; v++) {
    const double *xv = corner_coords + v * (size_t)dim;
    for (int a = 0; a < dim; a++) {
      x[a] += ref->corner_phi[q][v] * xv[a];
      for (int b = 0; b < dim; b++)
        jacobian[a][b] += xv[a] * ref->corner_dphi[q][v * (size_t)dim + (size_t)b];
    }
  }
  double det;
  if (dim == 2) {
    det = jacobian[0][0] * jacobian[1][1] - jacobian[0][1] * jacobian[1][0];
    inverse[0][0] = jacobian[1][1] / det;
    inverse[0][1] = -jacobian[0][1] / det;
    inverse[1][0] = -jacobian[1][0] / det;
    inverse[1][1] = jacobian[0][0] / det;
  } else {
    /* Cofactors. */
    double(*j)[3] = jacobian;
    double c00 = j[1][1] * j[2][2] - j[1][2] * j[2][1];
    double c01 = j[1][2] * j[2][0] - j[1][0] * j[2][2];
    double c02 = j[1][0] * j[2][1] - j[1][1] * j[2][0];
    det = j[0][0] * c00 + j[0][1] * c01 + j[0][2] * c02;
    inverse[0][0] = c00 / det;
    inverse[1][0] = c01 / det;
    inverse[2][0] = c02 / det;
    inverse[0][1] = (j[0][2] * j[2][1] - j[0][1] * j[2][2]) / det;
    inverse[1][1] = (j[0][0] * j[2][2] - j[0][2] * j[2][0]) / det;
    inverse[2][1] = (j[0][1] * j[2][0] - j[0][0] * j[2][1]) / det;
    inverse[0][2] = (j[0][1] * j[1][2] - j[0][2] * j[1][1]) / det;
    inverse[1][2] = (j[0][2] * j[1][0] - j[0][0] * j[1][2]) / det;
    inverse[2][2] = (j[0][0] * j[1][1] - j[0][1] * j[1][0]) / det;
  }
  return det;
}

static void gather_corners(const clmg_mesh *mesh, size_t cell, double *corner_coords) {
  size_t corners = clmg_mesh_vertices_per_cell(mesh), dim = (size_t)mesh->dim;
  for (size_t v = 0; v < corners; v++) {
    const double *xv = mesh->coords + (size_t)mesh->cells[cell * corners + v] * dim;
    for (size_t a = 0; a < dim; a++)
      corner_coords[v * dim + a] = xv[a];
  }
}

static double source_at(const clmg_poisson_problem *problem, const double *x) {
  return problem->source ? problem->source(x, problem->source_data) : problem->source_constant;
}

/* ---- Dirichlet DOFs ---- */

static int is_dirichlet_tag(const clmg_poisson_problem *problem, int32_t tag) {
  if (!problem->dirichlet_tags || problem->num_dirichlet_tags == 0)
    return 1;
  for (size_t k = 0; k < problem->num_dirichlet_tags; k++)
    if (problem->dirichlet_tags[k] == tag)
      return 1;
  return 0;
}

static uint64_t hash_face(const int32_t *sorted, size_t count) {
  uint64_t h = 0x9e3779b97f4a7c15u;
  for (size_t k = 0; k < count; k++) {
    h ^= (uint64_t)(uint32_t)sorted[k];
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 31;
  }
  return h;
}

/* Marks the DOFs on boundary faces with a Dirichlet tag: every node of a
 * cell face that is such a face (found by its sorted vertices in a hash
 * table). This reads the faces rather than the nodes' single boundary tag,
 * so a node where a Dirichlet part meets another part is found whichever
 * tag it carries. tag_of[dof] gets the tag of a Dirichlet face through the
 * DOF (the one g is evaluated with). */
clmg_status clmg_fe_mark_dirichlet(const clmg_fe_space *space, const clmg_poisson_problem *problem,
                                   uint8_t *mask, int32_t *tag_of, clmg_error *error) {
  const clmg_mesh *mesh = space->mesh;
  size_t per_face = clmg_mesh_vertices_per_face(mesh), corners = clmg_mesh_vertices_per_cell(mesh);
  memset(mask, 0, space->num_dofs);
  if (mesh->num_boundary_faces > 0 && (!mesh->boundary_faces || !mesh->boundary_face_tag))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu boundary faces but no face or tag array",
                          mesh->num_boundary_faces);
  size_t count = 0;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    for (size_t v = 0; v < per_face; v++) {
      int32_t vertex = mesh->boundary_faces[f * per_face + v];
      if (vertex < 0 || (size_t)vertex >= mesh->num_vertices)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "boundary face %zu has vertex %d, outside [0, %zu)", f, (int)vertex,
                              mesh->num_vertices);
    }
    count += is_dirichlet_tag(problem, mesh->boundary_face_tag[f]);
  }
  if (count == 0)
    return CLMG_SUCCESS;

  size_t table_size = 1;
  while (table_size < 2 * count)
    table_size *= 2;
  int32_t *table = clmg_alloc_array(table_size, sizeof *table);
  uint8_t *on_face = calloc(mesh->num_vertices ? mesh->num_vertices : 1, 1);
  if (!table || !on_face) {
    free(table);
    free(on_face);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the table of %zu Dirichlet faces", count);
  }
  for (size_t k = 0; k < table_size; k++)
    table[k] = -1;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    if (!is_dirichlet_tag(problem, mesh->boundary_face_tag[f]))
      continue;
    int32_t key[4];
    memcpy(key, mesh->boundary_faces + f * per_face, per_face * sizeof *key);
    for (size_t v = 0; v < per_face; v++)
      on_face[key[v]] = 1;
    clmg_sort_int32(key, per_face);
    size_t slot = hash_face(key, per_face) & (table_size - 1);
    while (table[slot] >= 0)
      slot = (slot + 1) & (table_size - 1);
    table[slot] = (int32_t)f;
  }

  int dim = mesh->dim, per_axis = space->degree + 1;
  /* face_corners[axis][side]: the bits of the corners on that face */
  unsigned face_corners[3][2] = {{0}};
  for (int axis = 0; axis < dim; axis++)
    for (size_t v = 0; v < corners; v++)
      face_corners[axis][(v >> axis) & 1] |= 1u << v;
  for (size_t cell = 0; cell < mesh->num_cells; cell++) {
    const int32_t *vertices = mesh->cells + cell * corners;
    unsigned marked = 0; /* the corners on a Dirichlet face */
    for (size_t v = 0; v < corners; v++)
      marked |= (unsigned)on_face[vertices[v]] << v;
    if (!marked)
      continue; /* the common case: an interior cell */
    for (int axis = 0; axis < dim; axis++)
      for (int side = 0; side < 2; side++) {
        if ((marked & face_corners[axis][side]) != face_corners[axis][side])
          continue; /* not all corners of this face on a Dirichlet face */
        int32_t key[4];
        size_t found = 0;
        for (size_t v = 0; v < corners; v++)
          if ((int)((v >> axis) & 1) == side)
            key[found++] = vertices[v];
        clmg_sort_int32(key, per_face);
        size_t slot = hash_face(key, per_face) & (table_size - 1);
        int32_t face = -1;
        for (; table[slot] >= 0; slot = (slot + 1) & (table_size - 1)) {
          int32_t candidate[4];
          memcpy(candidate, mesh->boundary_faces + (size_t)table[slot] * per_face,
                 per_face * sizeof *candidate);
          clmg_sort_int32(candidate, per_face);
          if (memcmp(candidate, key, per_face * sizeof *key) == 0) {
            face = table[slot];
            break;
          }
        }
        if (face < 0)
          continue;
        for (size_t local = 0; local < space->dofs_per_cell; local++) {
          size_t stride = axis == 0   ? 1
                          : axis == 1 ? (size_t)per_axis
                                      : (size_t)per_axis * per_axis;
          int along = (int)((local / stride) % (size_t)per_axis);
          if (along != side * space->degree)
            continue;
          int32_t dof = space->cell_dofs[cell * space->dofs_per_cell + local];
          if (!mask[dof]) {
            mask[dof] = 1;
            tag_of[dof] = mesh->boundary_face_tag[face];
          }
        }
      }
  }
  free(table);
  free(on_face);
  return CLMG_SUCCESS;
}

/* Index of column j in row i, or -1 (binary search in the sorted row). */
static int64_t find_column(const int64_t *row_ptr, const int32_t *col, size_t i, int32_t j) {
  int64_t low = row_ptr[i], high = row_ptr[i + 1];
  while (low < high) {
    int64_t middle = low + (high - low) / 2;
    if (col[middle] < j)
      low = middle + 1;
    else
      high = middle;
  }
  return low < row_ptr[i + 1] && col[low] == j ? low : -1;
}

/* ---- public functions ---- */

clmg_status clmg_fe_assemble_poisson(const clmg_fe_space *space,
                                     const clmg_poisson_problem *problem, clmg_csr *a, double *b,
                                     uint8_t *is_dirichlet, clmg_error *error) {
  return clmg_fe_assemble_diffusion(space, problem, NULL, a, b, is_dirichlet, error);
}

clmg_status clmg_fe_assemble_diffusion(const clmg_fe_space *space,
                                       const clmg_poisson_problem *problem,
                                       const double *cell_coefficient, clmg_csr *a, double *b,
                                       uint8_t *is_dirichlet, clmg_error *error) {
  clmg_error_clear(error);
  if (!a)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output matrix is NULL");
  memset(a, 0, sizeof *a);
  clmg_status status = clmg_fe_check_space(space, "finite-element", error);
  if (status == CLMG_SUCCESS)
    status = clmg_mesh_check_scale(space->mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (!b)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the right-hand side b is NULL");
  const clmg_poisson_problem no_problem = {0};
  if (!problem)
    problem = &no_problem;

  const clmg_mesh *mesh = space->mesh;
  size_t n = space->num_dofs, per_cell = space->dofs_per_cell;
  size_t dim = (size_t)mesh->dim;
  uint8_t *mask = clmg_alloc_array(n, 1);
  int32_t *tag_of = clmg_alloc_array(n, sizeof *tag_of);
  clmg_fe_reference_cell *ref = clmg_fe_tabulate(mesh->dim, space->degree, space->degree + 2);
  int64_t *row_ptr = NULL;
  int32_t *col = NULL;
  double *val = NULL;
  if (!mask || !tag_of || !ref) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate work arrays for %zu DOFs", n);
    goto done;
  }
  status = clmg_fe_mark_dirichlet(space, problem, mask, tag_of, error);
  if (status != CLMG_SUCCESS)
    goto done;
  status = clmg_fe_dof_graph(space, mask, &row_ptr, &col, error);
  if (status != CLMG_SUCCESS)
    goto done;
  val = calloc(row_ptr[n] > 0 ? (size_t)row_ptr[n] : 1, sizeof *val);
  if (!val) {
    status =
        clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate the values of %lld matrix entries", (long long)row_ptr[n]);
    goto done;
  }

  /* b holds g on Dirichlet DOFs from the start: the elimination below reads
   * it there, and those rows are final. */
  for (size_t i = 0; i < n; i++) {
    b[i] = 0.0;
    if (mask[i]) {
      b[i] = problem->dirichlet ? problem->dirichlet(space->dof_coords + i * dim, tag_of[i],
                                                     problem->dirichlet_data)
                                : 0.0;
      val[row_ptr[i]] = 1.0; /* the identity row: its only entry */
    }
  }

  for (size_t cell = 0; cell < mesh->num_cells; cell++) {
    double corner_coords[CLMG_FE_MAX_CORNERS * 3];
    double stiffness[CLMG_FE_MAX_CELL_DOFS][CLMG_FE_MAX_CELL_DOFS] = {{0}};
    double load[CLMG_FE_MAX_CELL_DOFS] = {0};
    gather_corners(mesh, cell, corner_coords);
    for (size_t q = 0; q < ref->points; q++) {
      double x[3], inverse[3][3];
      double det = map_point(ref, q, corner_coords, x, inverse);
      if (!(det > 0.0)) {
        status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "cell %zu has a non-positive Jacobian determinant (%g) at a "
                                "quadrature point: inverted or degenerate cell",
                                cell, det);
        goto done;
      }
      double scale = ref->weight[q] * det;
      double gradient[CLMG_FE_MAX_CELL_DOFS][3];
      for (size_t i = 0; i < per_cell; i++)
        for (size_t c = 0; c < dim; c++) {
          double sum = 0.0;
          for (size_t r = 0; r < dim; r++)
            sum += inverse[r][c] * ref->dphi[q][i * dim + r];
          gradient[i][c] = sum;
        }
      for (size_t i = 0; i < per_cell; i++)
        for (size_t j = i; j < per_cell; j++) {
          double dot = 0.0;
          for (size_t c = 0; c < dim; c++)
            dot += gradient[i][c] * gradient[j][c];
          stiffness[i][j] += scale * dot;
        }
      if (problem->source || problem->source_constant != 0.0) {
        double f = source_at(problem, x) * scale;
        for (size_t i = 0; i < per_cell; i++)
          load[i] += f * ref->phi[q][i];
      }
    }
    const int32_t *dofs = space->cell_dofs + cell * per_cell;
    double coefficient = cell_coefficient ? cell_coefficient[cell] : 1.0;
    for (size_t i = 0; i < per_cell; i++) {
      size_t row = (size_t)dofs[i];
      if (mask[row])
        continue;
      b[row] += load[i];
      for (size_t j = 0; j < per_cell; j++) {
        double value = coefficient * (j >= i ? stiffness[i][j] : stiffness[j][i]);
        int32_t column = dofs[j];
        if (mask[column]) {
          b[row] -= value * b[column];
        } else {
          int64_t position = find_column(row_ptr, col, row, column);
          val[position] += value; /* always found: the pattern comes from these cells */
        }
      }
    }
  }

  a->rows = n;
  a->cols = n;
  a->row_ptr = row_ptr;
  a->col = col;
  a->val = val;
  row_ptr = NULL;
  col = NULL;
  val = NULL;
  if (is_dirichlet)
    memcpy(is_dirichlet, mask, n);

done:
  free(mask);
  free(tag_of);
  free(ref);
  free(row_ptr);
  free(col);
  free(val);
  return status;
}

clmg_status clmg_fe_load_vector(const clmg_fe_space *space, const clmg_poisson_problem *problem,
                                double *load, clmg_error *error) {
  const clmg_mesh *mesh = space->mesh;
  size_t per_cell = space->dofs_per_cell;
  memset(load, 0, space->num_dofs * sizeof *load);
  clmg_fe_reference_cell *ref = clmg_fe_tabulate(mesh->dim, space->degree, space->degree + 2);
  if (!ref)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the quadrature tables");
  for (size_t cell = 0; cell < mesh->num_cells; cell++) {
    double corner_coords[CLMG_FE_MAX_CORNERS * 3];
    gather_corners(mesh, cell, corner_coords);
    const int32_t *dofs = space->cell_dofs + cell * per_cell;
    for (size_t q = 0; q < ref->points; q++) {
      double x[3], inverse[3][3];
      double scale = ref->weight[q] * map_point(ref, q, corner_coords, x, inverse);
      double f = source_at(problem, x) * scale;
      for (size_t i = 0; i < per_cell; i++)
        load[dofs[i]] += f * ref->phi[q][i];
    }
  }
  free(ref);
  return CLMG_SUCCESS;
}

clmg_status clmg_fe_l2_error(const clmg_fe_space *space, const double *u_h, clmg_fe_function exact,
                             void *exact_data, double *l2_error, clmg_error *error) {
  clmg_error_clear(error);
  if (l2_error)
    *l2_error = 0.0;
  clmg_status status = clmg_fe_check_space(space, "finite-element", error);
  if (status != CLMG_SUCCESS)
    return status;
  if (!u_h || !exact || !l2_error)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "u_h, exact or l2_error is NULL");
  const clmg_mesh *mesh = space->mesh;
  size_t per_cell = space->dofs_per_cell;
  clmg_fe_reference_cell *ref = clmg_fe_tabulate(mesh->dim, space->degree, space->degree + 3);
  if (!ref)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the quadrature tables");
  double sum = 0.0;
  for (size_t cell = 0; cell < mesh->num_cells; cell++) {
    double corner_coords[CLMG_FE_MAX_CORNERS * 3];
    gather_corners(mesh, cell, corner_coords);
    const int32_t *dofs = space->cell_dofs + cell * per_cell;
    for (size_t q = 0; q < ref->points; q++) {
      double x[3], inverse[3][3];
      double det = map_point(ref, q, corner_coords, x, inverse);
      if (!(det > 0.0)) {
        free(ref);
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "cell %zu has a non-positive Jacobian determinant (%g) at a "
                              "quadrature point: inverted or degenerate cell",
                              cell, det);
      }
      double value = 0.0;
      for (size_t i = 0; i < per_cell; i++)
        value += ref->phi[q][i] * u_h[dofs[i]];
      double difference = value - exact(x, exact_data);
      sum += ref->weight[q] * det * difference * difference;
    }
  }
  free(ref);
  *l2_error = sqrt(sum);
  return CLMG_SUCCESS;
}
