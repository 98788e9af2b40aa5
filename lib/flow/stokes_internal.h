/* What the triangle edges (triangle_edges.c), the Crouzeix-Raviart Stokes
 * code (stokes.c) and the flow quantities (flow_quantities.c) share. Not
 * installed. */
#ifndef CLMG_STOKES_INTERNAL_H
#define CLMG_STOKES_INTERNAL_H

#include "clmg/stokes.h"
#include "fe/p1_internal.h"

/* Checks that mesh is a 2D triangle mesh with its arrays (the first check
 * of every Crouzeix-Raviart function). */
clmg_status clmg_triangle_mesh_check(const clmg_mesh *mesh, clmg_error *error);

/* Checks that mesh is a 2D triangle mesh whose cells' vertex indices are in
 * range and that edges (named `name` in messages) are its edges: arrays
 * present, each cell's edges in range with the vertices opposite the right
 * corner, 2E + T within the 32-bit index limit. O(cells); does not redo
 * the orientation and boundary checks of clmg_triangle_edges_create. */
clmg_status clmg_triangle_edges_check(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      const char *name, clmg_error *error);

/* Area and barycentric gradients of triangle k (coords: its 6 vertex
 * coordinates); an inverted or degenerate triangle is an error naming it. */
clmg_status clmg_stokes_cell_geometry(const clmg_mesh *mesh, size_t k, double coords[6],
                                      double *area, double grad[4][3], clmg_error *error);

#endif
