/* A whole geometric multigrid hierarchy for the Poisson problem: refined
 * meshes, a space per level, the level matrices, prolongations from nodal
 * interpolation and restrictions (their transposes), all in the chosen DOF
 * numbering. Levels are built from coarse to fine, so at most two levels'
 * Dirichlet masks and one unpermuted matrix are alive at a time. */
#include "fe/fe_internal.h"
#include "mesh/mesh_internal.h"

#include <stdlib.h>
#include <string.h>

/* Replaces *m by m(row_perm[i], col_perm[j]) (perm[new] = old; NULL:
 * identity, and nothing is done when both are). Unlike clmg_csr_permute this
 * needs no transpose: finite-element rows are short (at most 125 entries),
 * so each new row is sorted in place, and the peak memory is two matrices,
 * not three, at the finest level where it matters. */
static clmg_status permute_in_place(clmg_csr *m, const int32_t *row_perm, const int32_t *col_perm,
                                    clmg_error *error) {
  if (!row_perm && !col_perm)
    return CLMG_SUCCESS;
  size_t nnz = clmg_csr_nnz(m);
  clmg_csr permuted = {m->rows, m->cols, NULL, NULL, NULL};
  permuted.row_ptr = clmg_alloc_array(m->rows + 1, sizeof *permuted.row_ptr);
  permuted.col = clmg_alloc_array(nnz, sizeof *permuted.col);
  permuted.val = clmg_alloc_array(nnz, sizeof *permuted.val);
  int32_t *col_inverse = col_perm ? clmg_alloc_array(m->cols, sizeof *col_inverse) : NULL;
  if (!permuted.row_ptr || !permuted.col || !permuted.val || (col_perm && !col_inverse)) {
    clmg_csr_free(&permuted);
    free(col_inverse);
    clmg_csr_free(m);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate a permuted %zu x %zu matrix with %zu entries", m->rows,
                          m->cols, nnz);
  }
  if (col_perm)
    for (size_t j = 0; j < m->cols; j++)
      col_inverse[col_perm[j]] = (int32_t)j;
  permuted.row_ptr[0] = 0;
  for (size_t i = 0; i < m->rows; i++) {
    size_t old = row_perm ? (size_t)row_perm[i] : i;
    int64_t begin = permuted.row_ptr[i], length = m->row_ptr[old + 1] - m->row_ptr[old];
    permuted.row_ptr[i + 1] = begin + length;
    for (int64_t k = 0; k < length; k++) {
      int32_t column = m->col[m->row_ptr[old] + k];
      column = col_inverse ? col_inverse[column] : column;
      double value = m->val[m->row_ptr[old] + k];
      /* Insertion into the sorted new row. */
      int64_t position = begin + k;
      while (position > begin && permuted.col[position - 1] > column) {
        permuted.col[position] = permuted.col[position - 1];
        permuted.val[position] = permuted.val[position - 1];
        position--;
      }
      permuted.col[position] = column;
      permuted.val[position] = value;
    }
  }
  free(col_inverse);
  clmg_csr_free(m);
  *m = permuted;
  return CLMG_SUCCESS;
}

clmg_status clmg_fe_poisson_hierarchy(const clmg_mesh *coarse, int num_levels, int degree,
                                      const clmg_poisson_problem *problem, clmg_numbering numbering,
                                      uint64_t seed, clmg_fe_hierarchy *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!coarse)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the coarse mesh is NULL");
  /* before any level is refined: the spaces would refuse it only then */
  if (coarse->cell_type != CLMG_CELL_TENSOR)
    return clmg_fe_refuse_simplices(coarse, "clmg_fe_poisson_hierarchy (Q1/Q2 elements)", error);
  if (num_levels < 1)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "num_levels is %d (at least 1 expected)", num_levels);
  if (degree != 1 && degree != 2)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "degree %d is not supported (1 or 2 expected)", degree);
  if ((unsigned)numbering > (unsigned)CLMG_NUMBERING_HIE)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "unknown numbering %d",
                          (int)numbering);

  size_t levels = (size_t)num_levels;
  clmg_fe_hierarchy h = {0};
  h.num_levels = num_levels;
  h.degree = degree;
  h.numbering = numbering;
  h.meshes = calloc(levels, sizeof *h.meshes);
  h.spaces = calloc(levels, sizeof *h.spaces);
  h.a = calloc(levels, sizeof *h.a);
  h.p = calloc(levels, sizeof *h.p);
  h.r = calloc(levels, sizeof *h.r);
  h.perm = calloc(levels, sizeof *h.perm);
  /* The Dirichlet masks of the previous and the current level (both are
   * needed for the prolongation between them). */
  uint8_t *previous_mask = NULL, *mask = NULL;
  double *b = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!h.meshes || !h.spaces || !h.a || !h.p || !h.r || !h.perm) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate a hierarchy of %d levels", num_levels);
    goto fail;
  }
  status = clmg_mesh_copy(coarse, &h.meshes[0], error);
  if (status != CLMG_SUCCESS)
    goto fail;

  for (size_t level = 0; level < levels; level++) {
    if (level > 0) {
      /* a mesh from clmg_mesh_refine needs no second check */
      status = level == 1
                   ? clmg_mesh_refine(&h.meshes[0], &h.meshes[1], error)
                   : clmg_mesh_refine_checked_input(&h.meshes[level - 1], &h.meshes[level], error);
      if (status != CLMG_SUCCESS)
        goto fail;
    }
    clmg_fe_space *space = &h.spaces[level];
    status = level > 0 ? clmg_fe_space_create_checked_input(&h.meshes[level], degree, space, error)
                       : clmg_fe_space_create(&h.meshes[level], degree, space, error);
    if (status != CLMG_SUCCESS)
      goto fail;
    size_t n = space->num_dofs;
    mask = clmg_alloc_array(n, 1);
    b = clmg_alloc_array(n, sizeof *b);
    h.perm[level] = clmg_alloc_array(n, sizeof *h.perm[level]);
    if (!mask || !b || !h.perm[level]) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "cannot allocate level %zu with %zu DOFs", level, n);
      goto fail;
    }
    /* Every level gets the problem's data: its Dirichlet mask is what the
     * transfers need; b is kept on the finest level only. */
    status = clmg_fe_assemble_poisson(space, problem, &h.a[level], b, mask, error);
    if (status != CLMG_SUCCESS)
      goto fail;
    /* Levels get different random numberings. */
    status = clmg_fe_numbering(space, &h.a[level], numbering, seed + level, h.perm[level], error);
    if (status != CLMG_SUCCESS)
      goto fail;
    /* 2LV is the identity: skip the copies. */
    const int32_t *perm = numbering == CLMG_NUMBERING_2LV ? NULL : h.perm[level];
    const int32_t *coarse_perm =
        numbering == CLMG_NUMBERING_2LV || level == 0 ? NULL : h.perm[level - 1];
    status = permute_in_place(&h.a[level], perm, perm, error);
    if (status != CLMG_SUCCESS)
      goto fail;
    if (level > 0) {
      status = clmg_fe_prolongation(&h.spaces[level - 1], space, previous_mask, mask, &h.p[level],
                                    error);
      if (status == CLMG_SUCCESS)
        status = permute_in_place(&h.p[level], perm, coarse_perm, error);
      if (status == CLMG_SUCCESS)
        status = clmg_csr_transpose(&h.p[level], &h.r[level], error);
      if (status != CLMG_SUCCESS)
        goto fail;
    }
    free(previous_mask);
    previous_mask = mask;
    mask = NULL;
    if (level + 1 < levels) {
      free(b);
      b = NULL;
    }
  }

  /* The finest level's vectors in the chosen numbering; previous_mask is
   * now the finest mask. */
  size_t n = h.spaces[levels - 1].num_dofs;
  const int32_t *perm = h.perm[levels - 1];
  h.b = clmg_alloc_array(n, sizeof *h.b);
  h.x0 = clmg_alloc_array(n, sizeof *h.x0);
  h.is_dirichlet = clmg_alloc_array(n, 1);
  if (!h.b || !h.x0 || !h.is_dirichlet) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the finest level's vectors (%zu DOFs)", n);
    goto fail;
  }
  for (size_t i = 0; i < n; i++) {
    size_t old = (size_t)perm[i];
    h.b[i] = b[old];
    h.is_dirichlet[i] = previous_mask[old];
    /* b holds g on Dirichlet DOFs (identity rows). */
    h.x0[i] = previous_mask[old] ? b[old] : 0.0;
  }
  free(b);
  free(previous_mask);
  *out = h;
  return CLMG_SUCCESS;

fail:
  free(b);
  free(mask);
  free(previous_mask);
  clmg_fe_hierarchy_free(&h);
  return status;
}

void clmg_fe_hierarchy_free(clmg_fe_hierarchy *hierarchy) {
  if (!hierarchy)
    return;
  for (int level = 0; level < hierarchy->num_levels; level++) {
    if (hierarchy->a)
      clmg_csr_free(&hierarchy->a[level]);
    if (hierarchy->p)
      clmg_csr_free(&hierarchy->p[level]);
    if (hierarchy->r)
      clmg_csr_free(&hierarchy->r[level]);
    if (hierarchy->spaces)
      clmg_fe_space_free(&hierarchy->spaces[level]);
    if (hierarchy->meshes)
      clmg_mesh_free(&hierarchy->meshes[level]);
    if (hierarchy->perm)
      free(hierarchy->perm[level]);
  }
  free(hierarchy->meshes);
  free(hierarchy->spaces);
  free(hierarchy->a);
  free(hierarchy->p);
  free(hierarchy->r);
  free(hierarchy->perm);
  free(hierarchy->b);
  free(hierarchy->x0);
  free(hierarchy->is_dirichlet);
  memset(hierarchy, 0, sizeof *hierarchy);
}

void clmg_fe_hierarchy_unpermute(const clmg_fe_hierarchy *hierarchy, const double *u_numbered,
                                 double *u_mesh) {
  if (!hierarchy || hierarchy->num_levels < 1 || !u_numbered || !u_mesh)
    return;
  size_t finest = (size_t)hierarchy->num_levels - 1;
  const int32_t *perm = hierarchy->perm[finest];
  for (size_t i = 0; i < hierarchy->spaces[finest].num_dofs; i++)
    u_mesh[perm[i]] = u_numbered[i];
}
