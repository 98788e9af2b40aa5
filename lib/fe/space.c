/* Q1/Q2 Lagrange spaces on quadrilateral and hexahedral meshes, and what the
 * rest of the module shares (lib/fe/fe_internal.h): error reporting, the
 * tensor-product basis, Gauss-Legendre rules and the DOF coupling graph. */
#include "fe/fe_internal.h"
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared helpers ---- */

clmg_status clmg_fe_refuse_simplices(const clmg_mesh *mesh, const char *who, clmg_error *error) {
  if (mesh->cell_type == CLMG_CELL_TENSOR)
    return CLMG_SUCCESS;
  const char *cells = mesh->cell_type != CLMG_CELL_SIMPLEX ? "cells of an unknown type"
                      : mesh->dim == 2                     ? "triangles"
                                                           : "tetrahedra";
  return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                        "%s needs quadrilaterals or hexahedra; this mesh has %s", who, cells);
}

clmg_status clmg_fe_check_space(const clmg_fe_space *space, const char *name, clmg_error *error) {
  if (!space || !space->mesh)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the %s space (or its mesh) is NULL",
                          name);
  const clmg_mesh *mesh = space->mesh;
  if (mesh->dim != 2 && mesh->dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %s space's mesh has dimension %d (2 or 3 expected)", name,
                          mesh->dim);
  if (mesh->cell_type != CLMG_CELL_TENSOR)
    return clmg_fe_refuse_simplices(mesh, "a Q1/Q2 space", error);
  if (space->degree != 1 && space->degree != 2)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %s space has degree %d (1 or 2 expected)", name, space->degree);
  size_t per_axis = (size_t)space->degree + 1;
  size_t expected = mesh->dim == 2 ? per_axis * per_axis : per_axis * per_axis * per_axis;
  if (space->dofs_per_cell != expected)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %s space has %zu DOFs per cell, expected %zu", name,
                          space->dofs_per_cell, expected);
  if (space->num_dofs > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %s space has %zu DOFs, beyond the 32-bit index limit", name,
                          space->num_dofs);
  if (mesh->num_cells > 0 && !space->cell_dofs)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the %s space has no cell_dofs",
                          name);
  if (space->num_dofs > 0 && (!space->dof_coords || !space->dof_boundary))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %s space has no dof_coords or dof_boundary", name);
  if (mesh->num_cells > 0 && (!mesh->cells || !mesh->coords))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the %s space's mesh has no cells or coords array", name);
  size_t entries = mesh->num_cells * space->dofs_per_cell;
  for (size_t k = 0; k < entries; k++)
    if (space->cell_dofs[k] < 0 || (size_t)space->cell_dofs[k] >= space->num_dofs)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cell %zu of the %s space has DOF %d, outside [0, %zu)",
                            k / space->dofs_per_cell, name, (int)space->cell_dofs[k],
                            space->num_dofs);
  return CLMG_SUCCESS;
}

void clmg_fe_basis_1d(int degree, double t, double *values, double *derivatives) {
  if (degree == 1) {
    if (values) {
      values[0] = 1.0 - t;
      values[1] = t;
    }
    if (derivatives) {
      derivatives[0] = -1.0;
      derivatives[1] = 1.0;
    }
  } else {
    /* Nodes 0, 1/2, 1. */
    if (values) {
      values[0] = 2.0 * (t - 0.5) * (t - 1.0);
      values[1] = 4.0 * t * (1.0 - t);
      values[2] = 2.0 * t * (t - 0.5);
    }
    if (derivatives) {
      derivatives[0] = 4.0 * t - 3.0;
      derivatives[1] = 4.0 - 8.0 * t;
      derivatives[2] = 4.0 * t - 1.0;
    }
  }
}

void clmg_fe_basis(int dim, int degree, const double *xi, double *values, double *gradients) {
  int n = degree + 1;
  double value_1d[3][3], derivative_1d[3][3];
  for (int d = 0; d < dim; d++)
    clmg_fe_basis_1d(degree, xi[d], value_1d[d], derivative_1d[d]);
  int nc = dim == 3 ? n : 1;
  for (int c = 0; c < nc; c++)
    for (int b = 0; b < n; b++)
      for (int a = 0; a < n; a++) {
        int i = a + n * (b + n * c);
        double vz = dim == 3 ? value_1d[2][c] : 1.0;
        values[i] = value_1d[0][a] * value_1d[1][b] * vz;
        if (gradients) {
          gradients[i * dim + 0] = derivative_1d[0][a] * value_1d[1][b] * vz;
          gradients[i * dim + 1] = value_1d[0][a] * derivative_1d[1][b] * vz;
          if (dim == 3)
            gradients[i * dim + 2] = value_1d[0][a] * value_1d[1][b] * derivative_1d[2][c];
        }
      }
}

/* P_n(x) and P_n'(x) by the three-term recurrence (|x| < 1). */
static void legendre(int n, double x, double *value, double *derivative) {
  double p0 = 1.0, p1 = x;
  for (int k = 2; k <= n; k++) {
    double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
    p0 = p1;
    p1 = p2;
  }
  *value = p1;
  *derivative = n * (x * p1 - p0) / (x * x - 1.0);
}

void clmg_fe_gauss_legendre(int n, double *points, double *weights) {
  /* Newton's method on P_n from the usual cosine guesses: exact to rounding
   * for the small n used here, and no table to mistype. */
  const double pi = 3.14159265358979323846;
  for (int i = 0; i < n; i++) {
    double x = cos(pi * (i + 0.75) / (n + 0.5)), value, derivative;
    for (int iteration = 0; iteration < 100; iteration++) {
      legendre(n, x, &value, &derivative);
      double step = value / derivative;
      x -= step;
      if (fabs(step) < 1e-15)
        break;
    }
    legendre(n, x, &value, &derivative);
    /* Map [-1,1] to [0,1] (weights halve), points ascending. */
    points[n - 1 - i] = 0.5 * (1.0 + x);
    weights[n - 1 - i] = 1.0 / ((1.0 - x * x) * derivative * derivative);
  }
}

clmg_status clmg_fe_dof_graph(const clmg_fe_space *space, const uint8_t *excluded,
                              int64_t **row_ptr_out, int32_t **col_out, clmg_error *error) {
  *row_ptr_out = NULL;
  *col_out = NULL;
  size_t n = space->num_dofs, num_cells = space->mesh->num_cells;
  size_t per_cell = space->dofs_per_cell;
  const int32_t *cell_dofs = space->cell_dofs;

  /* DOF -> cells adjacency: cells_of[cell_start[i] .. cell_start[i+1]). */
  int64_t *cell_start = calloc(n + 1, sizeof *cell_start);
  int32_t *cells_of = clmg_alloc_array(num_cells * per_cell, sizeof *cells_of);
  int32_t *marker = clmg_alloc_array(n, sizeof *marker);
  int64_t *row_ptr = calloc(n + 1, sizeof *row_ptr);
  int32_t *col = NULL;
  if (!cell_start || !cells_of || !marker || !row_ptr)
    goto out_of_memory;
  for (size_t k = 0; k < num_cells * per_cell; k++)
    cell_start[cell_dofs[k] + 1]++;
  for (size_t i = 0; i < n; i++)
    cell_start[i + 1] += cell_start[i];
  for (size_t cell = 0; cell < num_cells; cell++)
    for (size_t local = 0; local < per_cell; local++) {
      /* A DOF appears once per cell, so cell_start doubles as fill pointer. */
      int32_t dof = cell_dofs[cell * per_cell + local];
      cells_of[cell_start[dof]++] = (int32_t)cell;
    }
  for (size_t i = n; i > 0; i--)
    cell_start[i] = cell_start[i - 1];
  cell_start[0] = 0;

  /* Two passes over the rows, counting then filling; marker[j] == i marks
   * column j as already in row i. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++)
      marker[i] = -1;
    for (size_t i = 0; i < n; i++) {
      int64_t length = 0;
      int32_t *row = pass == 1 ? col + row_ptr[i] : NULL;
      if (excluded && excluded[i]) {
        length = 1;
        if (row)
          row[0] = (int32_t)i;
      } else {
        for (int64_t k = cell_start[i]; k < cell_start[i + 1]; k++) {
          const int32_t *dofs = cell_dofs + (size_t)cells_of[k] * per_cell;
          for (size_t local = 0; local < per_cell; local++) {
            int32_t j = dofs[local];
            if (marker[j] == (int32_t)i || (excluded && excluded[j]))
              continue;
            marker[j] = (int32_t)i;
            if (row)
              row[length] = j;
            length++;
          }
        }
        if (row)
          clmg_sort_int32(row, (size_t)length);
      }
      if (pass == 0)
        row_ptr[i + 1] = row_ptr[i] + length;
    }
    if (pass == 0) {
      col = clmg_alloc_array((size_t)row_ptr[n], sizeof *col);
      if (!col)
        goto out_of_memory;
    }
  }
  free(cell_start);
  free(cells_of);
  free(marker);
  *row_ptr_out = row_ptr;
  *col_out = col;
  return CLMG_SUCCESS;

out_of_memory:
  free(cell_start);
  free(cells_of);
  free(marker);
  free(row_ptr);
  free(col);
  return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                        "cannot allocate the coupling graph of %zu DOFs on %zu cells", n,
                        num_cells);
}

/* ---- public functions ---- */

/* clmg_fe_space_create; checked: the mesh passed clmg_mesh_check or came
 * from clmg_mesh_refine, so its structure is not checked again. */
static clmg_status space_create(const clmg_mesh *mesh, int degree, int checked, clmg_fe_space *out,
                                clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!mesh)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is NULL");
  if (mesh->dim != 2 && mesh->dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mesh has dimension %d (2 or 3 expected)", mesh->dim);
  if (mesh->cell_type != CLMG_CELL_TENSOR)
    return clmg_fe_refuse_simplices(mesh, "clmg_fe_space_create (Q1/Q2 elements)", error);
  if (degree != 1 && degree != 2)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "degree %d is not supported (1 or 2 expected)", degree);
  clmg_fe_space space = {0};
  space.mesh = mesh;
  space.degree = degree;
  size_t per_axis = (size_t)degree + 1;
  space.dofs_per_cell = mesh->dim == 2 ? per_axis * per_axis : per_axis * per_axis * per_axis;
  clmg_status status =
      checked
          ? clmg_mesh_lagrange_nodes_checked_input(mesh, degree, &space.cell_dofs, &space.num_dofs,
                                                   &space.dof_coords, &space.dof_boundary, error)
          : clmg_mesh_lagrange_nodes(mesh, degree, &space.cell_dofs, &space.num_dofs,
                                     &space.dof_coords, &space.dof_boundary, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (space.num_dofs > INT32_MAX) {
    clmg_fe_space_free(&space);
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the space has %zu DOFs, beyond the 32-bit index limit", space.num_dofs);
  }
  *out = space;
  return CLMG_SUCCESS;
}

clmg_status clmg_fe_space_create(const clmg_mesh *mesh, int degree, clmg_fe_space *out,
                                 clmg_error *error) {
  return space_create(mesh, degree, 0, out, error);
}

clmg_status clmg_fe_space_create_checked_input(const clmg_mesh *mesh, int degree,
                                               clmg_fe_space *out, clmg_error *error) {
  return space_create(mesh, degree, 1, out, error);
}

void clmg_fe_space_free(clmg_fe_space *space) {
  if (!space)
    return;
  free(space->cell_dofs);
  free(space->dof_coords);
  free(space->dof_boundary);
  memset(space, 0, sizeof *space);
}
