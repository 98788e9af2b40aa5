/* What the host (p1_assembly.c) and device (p1_assembly_device.c) P1
 * assemblies share: the mesh and problem checks, sigma by material id and
 * the closed-form element matrices. Not installed. */
#ifndef CLMG_P1_INTERNAL_H
#define CLMG_P1_INTERNAL_H

#include "clmg/assembly.h"
#include "fe/fe_internal.h"

/* Checks that mesh is a usable P1 mesh: simplex cells, dimension 2 or 3,
 * vertex indices in range, every vertex in some cell, positive orientation
 * (signed volume > 0). The message names the first offending cell or
 * vertex. */
clmg_status clmg_p1_check_mesh(const clmg_mesh *mesh, clmg_error *error);

/* Checks lambda, rhs and the sigma table (values >= 0 and finite). */
clmg_status clmg_p1_check_problem(const clmg_helmholtz_problem *problem, clmg_error *error);

/* sigma of material id `id` into *sigma; 0 when the problem lists no such
 * id (1 for every id when it lists none). */
int clmg_p1_find_sigma(const clmg_helmholtz_problem *problem, int32_t id, double *sigma);

/* The coordinates of a cell's dim + 1 vertices, vertex-major. */
void clmg_p1_cell_coords(const clmg_mesh *mesh, size_t cell, double *coords);

/* The signed volume of the simplex with the given vertices (dim + 1 of
 * them, vertex-major) and, when grad is not NULL, the gradients of its
 * barycentric coordinates grad[k][c] (only when the volume is nonzero). */
double clmg_p1_simplex(int dim, const double *coords, double grad[4][3]);

/* The element matrix A^e = sigma S^e + lambda M^e (closed forms, see
 * include/clmg/assembly.h) and the load b^e of f = 1, from the volume and
 * gradients of clmg_p1_simplex. */
void clmg_p1_element(int dim, double volume, const double grad[4][3], double sigma, double lambda,
                     double a[4][4], double b[4]);

/* mask[v] = 1 on the vertices of the boundary faces (num_faces faces of
 * `per_face` vertices) whose tag the problem lists as Dirichlet, else 0;
 * *count of them. Checks the faces' vertex indices. */
clmg_status clmg_p1_dirichlet_mask(const clmg_helmholtz_problem *problem, size_t num_vertices,
                                   size_t per_face, size_t num_faces, const int32_t *faces,
                                   const int32_t *tags, uint8_t *mask, size_t *count,
                                   clmg_error *error);

#endif
