/* Internal interface of the finite-element module (lib/fe/space.c,
 * assembly.c, transfer.c, numbering.c, hierarchy.c): error reporting into a
 * clmg_error, the tensor-product Lagrange basis on [0,1]^dim, Gauss-Legendre
 * rules and the DOF coupling graph. Not installed. */
#ifndef CLMG_FE_INTERNAL_H
#define CLMG_FE_INTERNAL_H

#include "clmg/fem.h"
#include "clmg/mesh.h"
#include "la/internal.h"

/* The largest number of points per axis of a quadrature rule used here
 * ((degree + 3) for the L2 error of Q2). */
#define CLMG_FE_MAX_GAUSS 5
/* The largest (degree + 1)^dim: Q2 in 3D. */
#define CLMG_FE_MAX_CELL_DOFS 27
#define CLMG_FE_MAX_CORNERS 8
/* Prolongation entries below this are rounding noise of basis functions
 * that vanish at the node, and are dropped. */
#define CLMG_FE_TRANSFER_DROP 1e-14
#define CLMG_FE_MAX_POINTS (CLMG_FE_MAX_GAUSS * CLMG_FE_MAX_GAUSS * CLMG_FE_MAX_GAUSS)

/* Basis and geometry tabulated at the points of a tensor Gauss rule: the
 * host assembly's tables, which the device assembly uploads as they are. */
typedef struct clmg_fe_reference_cell {
  int dim, degree;
  size_t dofs, corners, points;
  double weight[CLMG_FE_MAX_POINTS];
  double phi[CLMG_FE_MAX_POINTS][CLMG_FE_MAX_CELL_DOFS];
  double dphi[CLMG_FE_MAX_POINTS][CLMG_FE_MAX_CELL_DOFS * 3];
  double corner_phi[CLMG_FE_MAX_POINTS][CLMG_FE_MAX_CORNERS];
  double corner_dphi[CLMG_FE_MAX_POINTS][CLMG_FE_MAX_CORNERS * 3];
} clmg_fe_reference_cell;

/* The tables for points_per_axis points per axis (malloc'ed; NULL when out
 * of memory). */
clmg_fe_reference_cell *clmg_fe_tabulate(int dim, int degree, int points_per_axis);

/* mask[dof] = 1 for the DOFs on boundary faces with a Dirichlet tag of the
 * problem, tag_of[dof] = the tag of one such face (g is evaluated with it). */
/* clmg_fe_space_create for a mesh that passed clmg_mesh_check or came from
 * clmg_mesh_refine (the hierarchies' refined levels): no second check. */
clmg_status clmg_fe_space_create_checked_input(const clmg_mesh *mesh, int degree,
                                               clmg_fe_space *out, clmg_error *error);
clmg_status clmg_fe_mark_dirichlet(const clmg_fe_space *space, const clmg_poisson_problem *problem,
                                   uint8_t *mask, int32_t *tag_of, clmg_error *error);

/* load[i] = (f, phi_i) for the problem's source function, by the quadrature
 * of clmg_fe_assemble_poisson (num_dofs entries, caller-allocated). */
clmg_status clmg_fe_load_vector(const clmg_fe_space *space, const clmg_poisson_problem *problem,
                                double *load, clmg_error *error);

/* clmg_fe_assemble_poisson for -div(k grad u) = f with k constant on each
 * cell: cell_coefficient[cell] (num_cells entries, > 0; NULL: k = 1, which
 * is clmg_fe_assemble_poisson) scales the cell's stiffness matrix before it
 * is scattered and before its Dirichlet columns are eliminated; the load
 * (f, phi_i) is not scaled. */
clmg_status clmg_fe_assemble_diffusion(const clmg_fe_space *space,
                                       const clmg_poisson_problem *problem,
                                       const double *cell_coefficient, clmg_csr *a, double *b,
                                       uint8_t *is_dirichlet, clmg_error *error);

/* Checks that space is a usable space (non-NULL arrays, degree 1 or 2,
 * dimension 2 or 3, DOF indices in range). `name` names it in the message. */
clmg_status clmg_fe_check_space(const clmg_fe_space *space, const char *name, clmg_error *error);

/* CLMG_ERROR_INVALID_ARGUMENT with "WHO needs quadrilaterals or hexahedra;
 * this mesh has tetrahedra" (or triangles) unless mesh has tensor cells:
 * the Q1/Q2 code refuses simplices. */
clmg_status clmg_fe_refuse_simplices(const clmg_mesh *mesh, const char *who, clmg_error *error);

/* The 1D Lagrange basis of degree 1 or 2 on the nodes a / degree of [0,1]:
 * values[a] and derivatives[a] (either may be NULL) at t. */
void clmg_fe_basis_1d(int degree, double t, double *values, double *derivatives);

/* The tensor basis at reference point xi ((degree + 1)^dim functions, local
 * index a + (degree + 1) b + (degree + 1)^2 c): values and, when gradients is
 * not NULL, gradients[i * dim + d]. Degree 1 is also the multilinear
 * geometry map of a cell's corners. */
void clmg_fe_basis(int dim, int degree, const double *xi, double *values, double *gradients);

/* The n-point Gauss-Legendre rule on [0,1] (1 <= n <= CLMG_FE_MAX_GAUSS). */
void clmg_fe_gauss_legendre(int n, double *points, double *weights);

/* The coupling graph of the space's DOFs (two DOFs are coupled when they
 * share a cell, a DOF with itself included): the sparsity pattern of its
 * stiffness matrix, rows sorted. When excluded is not NULL, excluded DOFs
 * keep only their diagonal and disappear from the other rows (the pattern
 * after symmetric Dirichlet elimination). *row_ptr (num_dofs + 1) and *col
 * are malloc'ed. */
clmg_status clmg_fe_dof_graph(const clmg_fe_space *space, const uint8_t *excluded,
                              int64_t **row_ptr, int32_t **col, clmg_error *error);

#endif
