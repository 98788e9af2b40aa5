/* Grid transfer between a Q_k space and the Q_k space on its refined mesh,
 * from nodal interpolation (Geveler et al. 2011, section 2.3): P(i, j) is coarse basis
 * function j evaluated at fine node i. Refinement numbers child c of coarse
 * cell k as fine cell k * 2^dim + c with the parent's reference axes
 * (include/clmg/mesh.h), so a fine node's reference coordinates in its
 * parent are (child offset + node coordinates) / 2: no geometric search, and
 * exact also where refinement moved boundary vertices onto curved parts. */
#include "fe/fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The row of fine DOF i, from the fine cell and local node that define it:
 * columns (sorted) and values; returns the entry count. */
static size_t prolongation_row(const clmg_fe_space *coarse, const clmg_fe_space *fine,
                               int64_t source, const uint8_t *coarse_dirichlet, int32_t *columns,
                               double *values) {
  int dim = fine->mesh->dim, per_axis = fine->degree + 1;
  size_t children = (size_t)1 << dim, per_cell = fine->dofs_per_cell;
  size_t fine_cell = (size_t)source / per_cell, local = (size_t)source % per_cell;
  size_t parent = fine_cell / children, child = fine_cell % children;
  size_t node_index[3] = {local % (size_t)per_axis, (local / (size_t)per_axis) % (size_t)per_axis,
                          local / ((size_t)per_axis * (size_t)per_axis)};
  double xi[3];
  for (int d = 0; d < dim; d++) {
    double offset = (double)((child >> d) & 1);
    xi[d] = 0.5 * (offset + (double)node_index[d] / fine->degree);
  }
  double basis[CLMG_FE_MAX_CELL_DOFS];
  clmg_fe_basis(dim, coarse->degree, xi, basis, NULL);
  const int32_t *coarse_dofs = coarse->cell_dofs + parent * coarse->dofs_per_cell;
  size_t count = 0;
  for (size_t j = 0; j < coarse->dofs_per_cell; j++) {
    int32_t column = coarse_dofs[j];
    if (fabs(basis[j]) < CLMG_FE_TRANSFER_DROP || (coarse_dirichlet && coarse_dirichlet[column]))
      continue;
    /* Insertion into the sorted row (a cell's DOFs are distinct). */
    size_t position = count;
    while (position > 0 && columns[position - 1] > column) {
      columns[position] = columns[position - 1];
      values[position] = values[position - 1];
      position--;
    }
    columns[position] = column;
    values[position] = basis[j];
    count++;
  }
  return count;
}

clmg_status clmg_fe_prolongation(const clmg_fe_space *coarse, const clmg_fe_space *fine,
                                 const uint8_t *coarse_dirichlet, const uint8_t *fine_dirichlet,
                                 clmg_csr *p, clmg_error *error) {
  clmg_error_clear(error);
  if (!p)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output matrix is NULL");
  memset(p, 0, sizeof *p);
  clmg_status status = clmg_fe_check_space(coarse, "coarse", error);
  if (status == CLMG_SUCCESS)
    status = clmg_fe_check_space(fine, "fine", error);
  if (status != CLMG_SUCCESS)
    return status;
  if (coarse->degree != fine->degree || coarse->mesh->dim != fine->mesh->dim)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the coarse space (Q%d, %dD) and the fine space (Q%d, %dD) differ",
                          coarse->degree, coarse->mesh->dim, fine->degree, fine->mesh->dim);
  size_t children = (size_t)1 << fine->mesh->dim;
  if (fine->mesh->num_cells != coarse->mesh->num_cells * children)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the fine mesh has %zu cells, not %zu x %zu: it is not the refinement of "
                          "the coarse mesh",
                          fine->mesh->num_cells, coarse->mesh->num_cells, children);

  size_t rows = fine->num_dofs, per_cell = fine->dofs_per_cell;
  /* source[i]: the first (fine cell, local node) that meets fine DOF i, as
   * cell * per_cell + local; every row is set once from it. */
  int64_t *source = clmg_alloc_array(rows, sizeof *source);
  clmg_csr result = {0};
  result.rows = rows;
  result.cols = coarse->num_dofs;
  result.row_ptr = calloc(rows + 1, sizeof *result.row_ptr);
  if (!source || !result.row_ptr) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate a prolongation with %zu rows", rows);
    goto done;
  }
  for (size_t i = 0; i < rows; i++)
    source[i] = -1;
  for (size_t k = fine->mesh->num_cells * per_cell; k > 0; k--)
    source[fine->cell_dofs[k - 1]] = (int64_t)(k - 1); /* backwards: the first cell wins */

  int32_t columns[CLMG_FE_MAX_CELL_DOFS];
  double values[CLMG_FE_MAX_CELL_DOFS];
  for (size_t i = 0; i < rows; i++) {
    if (source[i] < 0) {
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "fine DOF %zu belongs to no cell of the fine space", i);
      goto done;
    }
    size_t count =
        fine_dirichlet && fine_dirichlet[i]
            ? 0
            : prolongation_row(coarse, fine, source[i], coarse_dirichlet, columns, values);
    result.row_ptr[i + 1] = result.row_ptr[i] + (int64_t)count;
  }
  size_t nnz = (size_t)result.row_ptr[rows];
  result.col = clmg_alloc_array(nnz, sizeof *result.col);
  result.val = clmg_alloc_array(nnz, sizeof *result.val);
  if (!result.col || !result.val) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate a prolongation with %zu entries", nnz);
    goto done;
  }
  for (size_t i = 0; i < rows; i++) {
    if (fine_dirichlet && fine_dirichlet[i])
      continue;
    size_t count = prolongation_row(coarse, fine, source[i], coarse_dirichlet, columns, values);
    memcpy(result.col + result.row_ptr[i], columns, count * sizeof *columns);
    memcpy(result.val + result.row_ptr[i], values, count * sizeof *values);
  }
  *p = result;
  result = (clmg_csr){0};

done:
  free(source);
  clmg_csr_free(&result);
  return status;
}
