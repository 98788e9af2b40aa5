/* Quadrilateral and hexahedral meshes on the device (lib/mesh/mesh_device.c,
 * kernels in cl/mesh_device.cl): what a geometric hierarchy needs to refine
 * its meshes, number its DOFs and find its Dirichlet DOFs without the host,
 * so that only the coarse mesh goes up and only the finest comes back.
 * Not installed. */
#ifndef CLMG_MESH_DEVICE_H
#define CLMG_MESH_DEVICE_H

#include "clmg/fem.h"
#include "clmg/mesh.h"
#include "la/internal.h"

typedef struct clmg_device_mesh {
  int dim;
  size_t num_vertices, num_cells, num_boundary_faces;
  clmg_vector *coords;    /* num_vertices x dim, double (float on a device without fp64) */
  clmg_vector *cells;     /* int32, num_cells x 2^dim, tensor order */
  clmg_vector *faces;     /* int32, num_boundary_faces x 2^(dim - 1) */
  clmg_vector *face_tags; /* int32, num_boundary_faces */
  /* the cells around each vertex (clmg_device_mesh_adjacency): start
   * (int64, num_vertices + 1) into list (int64 entries cell 2^dim + local
   * corner, increasing per vertex) */
  clmg_vector *start, *list;
  /* the degree-2 nodes (clmg_device_mesh_number_nodes): nodes (int32,
   * num_cells x 3^dim) numbered as clmg_mesh_lagrange_nodes numbers them,
   * and their coordinates (the refined mesh's vertices, before projection) */
  clmg_vector *nodes, *node_coords;
  size_t num_nodes;
  /* the curved boundary parts: the host mesh's (borrowed) and a device copy */
  const clmg_boundary_shape *shapes;
  size_t num_shapes;
  clmg_vector *shape_values;
} clmg_device_mesh;

/* The adjacency of a flat array of entries k = owner * per_owner + local
 * that each name a target in [0, num_targets): start (int64, num_targets +
 * 1) and list (int64, the entries k of each target in increasing order).
 * dim: the mesh's, so that its kernels come from the one program build the
 * mesh's other kernels use (MESH_DIM is a build option). */
clmg_status clmg_device_adjacency(clmg_context *context, int dim, const clmg_vector *targets,
                                  size_t num_targets, clmg_vector **start, clmg_vector **list);

/* The mesh on the device, its coordinates in `precision`; the mesh must
 * have passed clmg_mesh_check and outlive the device mesh (its shapes are
 * borrowed). */
clmg_status clmg_device_mesh_upload(clmg_context *context, const clmg_mesh *mesh,
                                    clmg_dtype precision, clmg_device_mesh *out);
void clmg_device_mesh_free(clmg_device_mesh *mesh);

/* Whether the device can refine and number meshes (double coordinates). */
int clmg_device_mesh_can_refine(const clmg_context *context);

clmg_status clmg_device_mesh_adjacency(clmg_context *context, clmg_device_mesh *mesh);
clmg_status clmg_device_mesh_number_nodes(clmg_context *context, clmg_device_mesh *mesh);

/* clmg_mesh_refine of a device mesh, on the device: the same vertices,
 * cells, boundary faces and projections. The coarse mesh keeps its nodes;
 * its node coordinates move to the fine mesh. */
clmg_status clmg_device_mesh_refine(clmg_context *context, clmg_device_mesh *coarse,
                                    clmg_device_mesh *fine);

/* The mesh on the host, after `refinements` uniform refinements of
 * `origin` (whose cell materials the children inherit). */
clmg_status clmg_device_mesh_download(clmg_context *context, const clmg_device_mesh *mesh,
                                      const clmg_mesh *origin, int refinements, clmg_mesh *out);

/* The Dirichlet DOFs of a space on the mesh (cell_dofs: (degree + 1)^dim
 * per cell, int32): mask (uint32, num_dofs: 1 on Dirichlet DOFs) and, when
 * tag_of is not NULL, each Dirichlet DOF's boundary tag as
 * clmg_fe_mark_dirichlet gives it (int32, num_dofs). */
clmg_status clmg_device_mesh_dirichlet(clmg_context *context, clmg_device_mesh *mesh,
                                       const clmg_vector *cell_dofs, int degree, size_t num_dofs,
                                       const clmg_poisson_problem *problem, clmg_vector **mask,
                                       clmg_vector **tag_of);

/* g on the Dirichlet DOFs (mask, tag_of: clmg_device_mesh_dirichlet's),
 * 0 elsewhere, as a new double vector: the DOFs' points (dof_coords:
 * double, dim per DOF) and tags come to the host, which evaluates
 * problem->dirichlet there (g = 0 without one), and the values go back;
 * O(boundary) bytes cross the bus. */
clmg_status clmg_device_mesh_boundary_values(clmg_context *context, const clmg_device_mesh *mesh,
                                             const clmg_vector *dof_coords, const clmg_vector *mask,
                                             const clmg_vector *tag_of,
                                             const clmg_poisson_problem *problem, clmg_vector **g);

#endif
