/* 3D linear elasticity with P1 and P2 tetrahedra: the elasticity-p1 and
 * elasticity-p2 problems of include/clmg/spd_problems.h.
 *
 * The weak form is the standard displacement formulation (e.g. Braess,
 * "Finite Elements", ch. VI; Hughes, "The Finite Element Method", ch. 2):
 * a(u, v) = int 2 mu eps(u) : eps(v) + lambda div(u) div(v) with the Lame
 * parameters lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu)),
 * E = 1. The basis functions are the Lagrange functions of the nodes of
 * clmg_mesh_lagrange_nodes in barycentric form (P1: L_i; P2: L_i (2 L_i - 1)
 * at the vertices, 4 L_i L_j at the edge midpoints), each times a unit
 * vector: DOF 3 node + c. Element matrices and loads use the 4-point rule
 * of degree 2 on the (affine) tetrahedron (points (a, b, b, b) and its
 * permutations in barycentric coordinates, a = (5 + 3 sqrt 5) / 20,
 * b = (5 - sqrt 5) / 20, weights 1/4), exact for the P2 stiffness (a
 * product of linear gradients) and for the load of a linear f with P1 or a
 * constant f with P2. Dirichlet nodes keep all three DOFs, eliminated
 * symmetrically as clmg_fe_assemble_poisson does (identity rows and
 * columns, b = g there, the other rows corrected); the pattern is the
 * library's DOF coupling graph of the nodes (clmg_fe_dof_graph) expanded to
 * 3 x 3 blocks, and element matrices are scattered into it by binary
 * search, so memory stays close to the matrix's own (triplets would need
 * several times more at 10^6 rows). */
#include "fe/p1_internal.h"
#include "fe/spd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TET_NODES_MAX 10
#define BLOCK 3

static void default_force(const double *x, double *f, void *data) {
  (void)x;
  (void)data;
  f[0] = 0.0;
  f[1] = 0.0;
  f[2] = -1.0;
}

/* Local edges of a P2 tetrahedron in the order of clmg_mesh_lagrange_nodes
 * (VTK's): nodes 4..9. */
static const int tet_edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};

/* Values and gradients of the P1 or P2 basis at barycentric point l of a
 * tetrahedron whose barycentric gradients are grad. */
static void tet_basis(int degree, const double l[4], const double grad[4][3], double *phi,
                      double dphi[TET_NODES_MAX][3]) {
  if (degree == 1) {
    for (int i = 0; i < 4; i++) {
      phi[i] = l[i];
      for (int c = 0; c < 3; c++)
        dphi[i][c] = grad[i][c];
    }
    return;
  }
  for (int i = 0; i < 4; i++) {
    phi[i] = l[i] * (2.0 * l[i] - 1.0);
    for (int c = 0; c < 3; c++)
      dphi[i][c] = (4.0 * l[i] - 1.0) * grad[i][c];
  }
  for (int e = 0; e < 6; e++) {
    int i = tet_edges[e][0], j = tet_edges[e][1];
    phi[4 + e] = 4.0 * l[i] * l[j];
    for (int c = 0; c < 3; c++)
      dphi[4 + e][c] = 4.0 * (l[i] * grad[j][c] + l[j] * grad[i][c]);
  }
}

/* The block pattern: the nodes' coupling graph (excluded nodes keep only
 * their diagonal), every node entry a 3 x 3 block (an excluded node's three
 * rows only their diagonal). Values zeroed. */
static clmg_status block_pattern(const clmg_mesh *mesh, const int32_t *cell_nodes,
                                 size_t nodes_per_cell, size_t num_nodes, const uint8_t *excluded,
                                 clmg_csr *a, clmg_error *error) {
  clmg_fe_space graph_space = {.mesh = mesh,
                               .degree = 1,
                               .num_dofs = num_nodes,
                               .dofs_per_cell = nodes_per_cell,
                               .cell_dofs = (int32_t *)cell_nodes};
  int64_t *node_ptr = NULL;
  int32_t *node_col = NULL;
  clmg_status status = clmg_fe_dof_graph(&graph_space, excluded, &node_ptr, &node_col, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t rows = BLOCK * num_nodes;
  int64_t *row_ptr = clmg_alloc_array(rows + 1, sizeof *row_ptr);
  size_t nnz = 0;
  for (size_t i = 0; i < num_nodes; i++)
    nnz += excluded[i] ? BLOCK : (size_t)BLOCK * BLOCK * (size_t)(node_ptr[i + 1] - node_ptr[i]);
  int32_t *col = clmg_alloc_array(nnz, sizeof *col);
  double *val = clmg_alloc_zeroed_array(nnz, sizeof *val);
  if (!row_ptr || !col || !val) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the %zu entries of the %zu-row elasticity matrix", nnz,
                            rows);
    goto done;
  }
  size_t k = 0;
  row_ptr[0] = 0;
  for (size_t i = 0; i < num_nodes; i++)
    for (size_t c = 0; c < BLOCK; c++) {
      size_t row = BLOCK * i + c;
      if (excluded[i]) {
        col[k++] = (int32_t)row;
      } else {
        for (int64_t q = node_ptr[i]; q < node_ptr[i + 1]; q++)
          for (int32_t d = 0; d < BLOCK; d++)
            col[k++] = BLOCK * node_col[q] + d;
      }
      row_ptr[row + 1] = (int64_t)k;
    }
  a->rows = rows;
  a->cols = rows;
  a->row_ptr = row_ptr;
  a->col = col;
  a->val = val;
  row_ptr = NULL;
  col = NULL;
  val = NULL;
done:
  free(node_ptr);
  free(node_col);
  free(row_ptr);
  free(col);
  free(val);
  return status;
}

clmg_status clmg_spd_elasticity(const clmg_spd_problem_options *options, int degree,
                                clmg_spd_problem *out, clmg_error *error) {
  const size_t per_cell = degree == 1 ? 4 : TET_NODES_MAX;
  const double nu = options->poisson_ratio;
  const double lambda = nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = 1.0 / (2.0 * (1.0 + nu));
  clmg_spd_field force = options->source ? options->source : default_force;
  clmg_mesh mesh = {0};
  int32_t *cell_nodes = NULL, *node_tag = NULL;
  double *node_coords = NULL;
  size_t num_nodes = 0;
  uint8_t *node_mask = NULL;
  clmg_status status =
      clmg_mesh_box_simplices(3, options->level, options->distortion, options->seed, &mesh, error);
  if (status != CLMG_SUCCESS)
    goto done;
  status = clmg_mesh_lagrange_nodes(&mesh, degree, &cell_nodes, &num_nodes, &node_coords, &node_tag,
                                    error);
  if (status != CLMG_SUCCESS)
    goto done;
  if (num_nodes > INT32_MAX / BLOCK) {
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "%zu nodes give more than %d rows (the 32-bit index limit)", num_nodes,
                            INT32_MAX);
    goto done;
  }
  size_t rows = BLOCK * num_nodes;
  node_mask = clmg_alloc_zeroed_array(num_nodes, 1);
  out->b = clmg_alloc_zeroed_array(rows, sizeof *out->b);
  out->is_dirichlet = clmg_alloc_zeroed_array(rows, 1);
  if (!node_mask || !out->b || !out->is_dirichlet) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the right-hand side of %zu rows", rows);
    goto done;
  }
  /* Boundary vertices of the box are never moved, so the face x = 0 is
   * exactly there (and so are the midpoints of its edges). */
  for (size_t i = 0; i < num_nodes; i++)
    if (options->boundary != CLMG_SPD_BOUNDARY_NONE && node_tag[i] != 0 &&
        (options->boundary == CLMG_SPD_BOUNDARY_ALL || node_coords[3 * i] == 0.0))
      node_mask[i] = 1;
  status = block_pattern(&mesh, cell_nodes, per_cell, num_nodes, node_mask, &out->a, error);
  if (status != CLMG_SUCCESS)
    goto done;

  /* b holds g on Dirichlet DOFs from the start: the elimination reads it. */
  for (size_t i = 0; i < num_nodes; i++) {
    if (!node_mask[i])
      continue;
    double g[BLOCK] = {0.0, 0.0, 0.0};
    if (options->boundary_value)
      options->boundary_value(node_coords + BLOCK * i, g, options->data);
    for (size_t c = 0; c < BLOCK; c++) {
      size_t row = BLOCK * i + c;
      out->b[row] = g[c];
      out->is_dirichlet[row] = 1;
      out->a.val[out->a.row_ptr[row]] = 1.0;
    }
  }

  const double qa = (5.0 + 3.0 * sqrt(5.0)) / 20.0, qb = (5.0 - sqrt(5.0)) / 20.0;
  for (size_t cell = 0; cell < mesh.num_cells; cell++) {
    double corners[12], grad[4][3];
    clmg_p1_cell_coords(&mesh, cell, corners);
    double volume = clmg_p1_simplex(3, corners, grad);
    if (!(volume > 0.0)) {
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "tetrahedron %zu has volume %g: the distortion %g folded the mesh",
                              cell, volume, options->distortion);
      goto done;
    }
    double ke[BLOCK * TET_NODES_MAX][BLOCK * TET_NODES_MAX] = {{0}};
    double fe[BLOCK * TET_NODES_MAX] = {0};
    for (int q = 0; q < 4; q++) {
      double l[4] = {qb, qb, qb, qb}, phi[TET_NODES_MAX], dphi[TET_NODES_MAX][3];
      l[q] = qa;
      tet_basis(degree, l, grad, phi, dphi);
      double w = 0.25 * volume, x[3] = {0.0, 0.0, 0.0}, f[BLOCK] = {0.0, 0.0, 0.0};
      for (int v = 0; v < 4; v++)
        for (int c = 0; c < 3; c++)
          x[c] += l[v] * corners[3 * v + c];
      force(x, f, options->data);
      for (size_t i = 0; i < per_cell; i++) {
        for (int c = 0; c < BLOCK; c++)
          fe[BLOCK * i + (size_t)c] += w * f[c] * phi[i];
        for (size_t j = 0; j < per_cell; j++) {
          double dot = dphi[i][0] * dphi[j][0] + dphi[i][1] * dphi[j][1] + dphi[i][2] * dphi[j][2];
          /* (i, c) row, (j, d) column: lambda d_c phi_i d_d phi_j +
           * mu (d_d phi_i d_c phi_j + delta_cd grad phi_i . grad phi_j) */
          for (int c = 0; c < BLOCK; c++)
            for (int d = 0; d < BLOCK; d++)
              ke[BLOCK * i + (size_t)c][BLOCK * j + (size_t)d] +=
                  w * (lambda * dphi[i][c] * dphi[j][d] +
                       mu * (dphi[i][d] * dphi[j][c] + (c == d ? dot : 0.0)));
        }
      }
    }
    /* the upper triangle mirrored, so that A is symmetric bit for bit */
    for (size_t i = 0; i < BLOCK * per_cell; i++)
      for (size_t j = 0; j < i; j++)
        ke[i][j] = ke[j][i];
    const int32_t *nodes = cell_nodes + cell * per_cell;
    for (size_t i = 0; i < per_cell; i++) {
      if (node_mask[nodes[i]])
        continue;
      for (size_t c = 0; c < BLOCK; c++) {
        size_t row = BLOCK * (size_t)nodes[i] + c;
        out->b[row] += fe[BLOCK * i + c];
        for (size_t j = 0; j < per_cell; j++)
          for (size_t d = 0; d < BLOCK; d++) {
            double value = ke[BLOCK * i + c][BLOCK * j + d];
            size_t column = BLOCK * (size_t)nodes[j] + d;
            if (node_mask[nodes[j]])
              out->b[row] -= value * out->b[column];
            else
              out->a.val[clmg_csr_find_entry(&out->a, row, (int32_t)column)] += value;
          }
      }
    }
  }
  out->dim = 3;
  out->block_size = BLOCK;
  out->num_nodes = num_nodes;
  out->coordinates = node_coords;
  node_coords = NULL;

done:
  clmg_mesh_free(&mesh);
  free(cell_nodes);
  free(node_tag);
  free(node_coords);
  free(node_mask);
  return status;
}
