/* What the triangle edges (triangle_edges.c) and the Crouzeix-Raviart
 * Stokes code (stokes.c) share. Not installed. */
#ifndef CLMG_STOKES_INTERNAL_H
#define CLMG_STOKES_INTERNAL_H

#include "clmg/stokes.h"
#include "fem/p1_internal.h"

/* Checks that mesh is a 2D triangle mesh whose cells' vertex indices are in
 * range and that edges (named `name` in messages) are its edges: arrays
 * present, each cell's edges in range with the vertices opposite the right
 * corner, 2E + T within the 32-bit index limit. O(cells); does not redo
 * the orientation and boundary checks of clmg_triangle_edges_create. */
clmg_status clmg_triangle_edges_check(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      const char *name, clmg_error *error);

#endif
