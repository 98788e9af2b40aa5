/* Internal helpers shared by the mesh sources (mesh.c, refine.c,
 * mesh_generators.c). Not installed. */
#ifndef CLMG_FEM_MESH_INTERNAL_H
#define CLMG_FEM_MESH_INTERNAL_H

#include "clmg/fem.h"
#include "clmg/mesh.h"
#include "la/internal.h"

/* Corner quality of a cell (dim 2 or 3, 2^dim vertex indices into coords in
 * tensor order): the smallest, over the corners, of the Jacobian
 * determinant of the edge vectors along the reference axes divided by the
 * product of their lengths. 1 for a rectangle or box, the sine of the
 * corner angle in 2D; <= 0 (or NaN, for a zero-length edge) when the cell is
 * inverted or degenerate. worst_corner and worst_determinant (may be NULL)
 * get the corner where it is smallest and its determinant. */
double clmg_mesh_cell_quality(int dim, const double *coords, const int32_t *cell, int *worst_corner,
                              double *worst_determinant);

/* Cells with at most this quality are reported as inverted or degenerate. */
#define CLMG_MESH_MIN_CELL_QUALITY 1e-12

/* The cells around each vertex, in CSR form: cells[start[v] .. start[v+1])
 * in increasing order. */
typedef struct clmg_vertex_cells {
  size_t *start; /* num_vertices + 1 */
  int32_t *cells;
} clmg_vertex_cells;

/* Builds the adjacency of a mesh whose indices are valid; 0 when out of
 * memory (then nothing is left allocated). */
int clmg_vertex_cells_build(const clmg_mesh *mesh, clmg_vertex_cells *adjacency);
void clmg_vertex_cells_free(clmg_vertex_cells *adjacency);

/* How many cells other than `skip` (-1: none) have the face with these
 * 2^(dim-1) distinct vertices (in any order) as one of their faces. The
 * first such cell goes to *first, and where position is not NULL, each
 * vertex's local corner index in it. */
size_t clmg_cells_with_face(const clmg_mesh *mesh, const clmg_vertex_cells *adjacency,
                            const int32_t *face, int32_t skip, int32_t *first, int *position);

#endif
