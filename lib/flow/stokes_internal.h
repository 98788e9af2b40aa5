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

/* The directional do-nothing term of Braack and Mucha, "Directional
 * do-nothing condition for the Navier-Stokes equations": where the wind w
 * flows in through a do-nothing edge i (a boundary edge neither Dirichlet
 * nor free slip), the convection's boundary term feeds kinetic energy in
 * (the backflow instability); the Oseen operator adds
 * -1/2 min(F_i, 0) u_i to the row of edge i, F_i = |e_i| (w_i . n_i) the
 * wind's flux out through it (w_i the mean of the P1nc wind on the edge:
 * exact), which cancels that term and leaves outflow untouched. For
 * triangle k (coords: its vertices) the outward |e_i| n_i of each of its
 * edges that is a do-nothing edge, 0 for the others (6 values). */
void clmg_stokes_outflow_normals(const clmg_stokes_problem *problem,
                                 const clmg_triangle_edges *edges, size_t k, const double coords[6],
                                 double normals[6]);

/* The convection's weighting as the host assembly (stokes.c) and the device
 * kernel (cl/stokes.cl) use it: full upwind (CLMG_STOKES_UPWIND_FULL, or a
 * Samarskij weighting without viscosity, whose limit it is), else the
 * weighted scheme with the parameter clmg_stokes_upwind_delta gives (1 for
 * Samarskij's; 0: central differences, also without viscosity). */
static inline double clmg_stokes_upwind_delta(const clmg_stokes_problem *problem) {
  return problem->upwind == CLMG_STOKES_UPWIND_WEIGHTED ? problem->upwind_parameter : 1.0;
}
static inline int clmg_stokes_full_upwind(const clmg_stokes_problem *problem) {
  return problem->upwind == CLMG_STOKES_UPWIND_FULL ||
         (problem->viscosity == 0.0 && clmg_stokes_upwind_delta(problem) != 0.0);
}

/* The right-hand side b alone of clmg_stokes_assemble_host (the same
 * element loop without the matrix: the same bits), for a matrix made by
 * clmg_stokes_system_device. */
clmg_status clmg_stokes_rhs_host(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                 const clmg_stokes_problem *problem, double *b, clmg_error *error);

/* The level's system matrix without wind (viscosity, the reaction's lumped
 * mass, the pressure coupling, the Dirichlet unknowns eliminated with
 * identity rows) made on the device (lib/flow/stokes_system_device.c,
 * cl/stokes_system.cl): pattern and values in *out (double), the arrays of
 * clmg_stokes_assemble_host's matrix bit for bit for the same mesh, edges
 * and problem (NULL: the defaults; its wind, previous velocity and force
 * are not read: they do not enter the matrix's constant part). Needs fp64;
 * failures are the context's. */
clmg_status clmg_stokes_system_device(clmg_context *context, const clmg_mesh *mesh,
                                      const clmg_triangle_edges *edges,
                                      const clmg_stokes_problem *problem, clmg_csr_device *out);

/* clmg_stokes_hierarchy_build with the matrices of a problem without wind
 * made on the device (clmg_stokes_system_device): device_a (num_levels of
 * them, filled here, the caller's to free; emptied on a failure) and their
 * host copies in out->a; only the finest right-hand side is assembled (on
 * the host). The same hierarchy bit for bit. A problem with a wind is
 * assembled on the host (device_a stays empty). */
clmg_status clmg_stokes_hierarchy_build_device(clmg_context *context, const clmg_mesh *coarse,
                                               int num_levels, const clmg_stokes_problem *problem,
                                               clmg_stokes_hierarchy *out,
                                               clmg_csr_device *device_a, clmg_error *error);

/* clmg_stokes_assembler_create with each level's stored values taken from
 * device_a[l].val (borrowed: it must outlive the assembler) instead of
 * uploaded from h->a[l]. */
clmg_status clmg_stokes_assembler_create_from(clmg_context *context, const clmg_stokes_hierarchy *h,
                                              const clmg_stokes_problem *problem,
                                              const clmg_csr_device *device_a,
                                              clmg_stokes_assembler **out);

/* clmg_stokes_multigrid_create_device with the levels' matrices (all but
 * the coarsest, which is shifted) from device_a instead of uploaded from
 * h->a, when the matrices are double. */
clmg_status clmg_stokes_multigrid_create_from(clmg_context *context, const clmg_stokes_hierarchy *h,
                                              const clmg_stokes_assembler *assembler,
                                              const clmg_csr_device *device_a,
                                              const clmg_vanka_options *vanka,
                                              const clmg_multigrid_options *mg_options,
                                              clmg_multigrid **multigrid);

#endif
