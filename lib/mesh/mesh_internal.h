/* Internal helpers shared by the mesh sources (mesh.c, refine.c,
 * mesh_generators.c). Not installed. */
#ifndef CLMG_MESH_INTERNAL_H
#define CLMG_MESH_INTERNAL_H

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

/* Corner quality of a simplex (dim + 1 vertex indices into coords): the
 * smallest, over the corners, of the determinant of the unit edge vectors
 * from that corner to the others (in increasing local order, times
 * (-1)^corner so that every corner of a positively oriented simplex counts
 * positive). Scale-free like clmg_mesh_cell_quality: 1 at the right corner
 * of a right simplex, 1/sqrt(2) at the corners of a regular tetrahedron;
 * <= 0 (or NaN) when inverted or degenerate. volume (may be NULL) gets the
 * signed volume (area in 2D). */
double clmg_mesh_simplex_quality(int dim, const double *coords, const int32_t *cell,
                                 int *worst_corner, double *volume);

/* The quality of cell k of mesh, of either cell type; determinant gets the
 * worst corner's Jacobian determinant (tensor) or the signed volume
 * (simplex). */
double clmg_mesh_quality_of_cell(const clmg_mesh *mesh, size_t k, int *worst_corner,
                                 double *determinant);

/* Coordinates whose cell measures (a length to the power dim, and the
 * products of element matrices) leave double's range: an error that says
 * so. The mesh itself is fine (refinement is scale-free); assembly calls
 * this where a Jacobian came out non-positive, so that a mesh scaled by
 * 1e300 is not reported as an inverted cell. */
clmg_status clmg_mesh_check_scale(const clmg_mesh *mesh, clmg_error *error);

/* Cells with at most this quality are reported as inverted or degenerate. */
#define CLMG_MESH_MIN_CELL_QUALITY 1e-12

/* A cheap screen for the common case: 1 only where clmg_mesh_quality_of_cell
 * of cell k is certainly above CLMG_MESH_MIN_CELL_QUALITY; 0 means that the
 * quality has to be computed (the cell may still be fine). */
int clmg_mesh_cell_certainly_valid(const clmg_mesh *mesh, size_t k);

/* clmg_mesh_cell_certainly_valid for all 2^dim children into which
 * clmg_mesh_refine cuts a tensor cell, from the cell's 3^dim degree-2 nodes
 * (parent_nodes, indices into the fine coords): 1 only where every child
 * passes. */
int clmg_tensor_children_certainly_valid(int dim, const double *coords,
                                         const int32_t *parent_nodes);

/* Faces per cell: 2 dim (tensor), dim + 1 (simplex). */
static inline size_t clmg_mesh_faces_per_cell(const clmg_mesh *mesh) {
  return mesh->cell_type == CLMG_CELL_SIMPLEX ? (size_t)mesh->dim + 1 : 2 * (size_t)mesh->dim;
}

/* The vertices of local face `local` of a cell: tensor cells number their
 * faces 2 * axis + side and list them in tensor order; simplices number
 * face i after the vertex it lacks and list the others in local order. */
void clmg_mesh_cell_face(const clmg_mesh *mesh, const int32_t *cell, int local, int32_t *out);

/* The degree-2 nodes of a simplex after its vertices: its edges (local
 * vertex pairs) in VTK's order, 3 in 2D, 6 in 3D. */
extern const int clmg_simplex_edges[6][2];
static inline int clmg_simplex_num_edges(int dim) {
  return dim == 2 ? 3 : 6;
}

/* edge_of[i][j] = edge_of[j][i]: the index in clmg_simplex_edges of the edge
 * between local vertices i != j (-1 on the diagonal and past dim). */
static inline void clmg_simplex_edge_table(int dim, int edge_of[4][4]) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      edge_of[i][j] = -1;
  for (int e = 0; e < clmg_simplex_num_edges(dim); e++) {
    edge_of[clmg_simplex_edges[e][0]][clmg_simplex_edges[e][1]] = e;
    edge_of[clmg_simplex_edges[e][1]][clmg_simplex_edges[e][0]] = e;
  }
}

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
 * clmg_mesh_vertices_per_face distinct vertices (in any order) as one of
 * their faces. The first such cell goes to *first, and where position is
 * not NULL, each vertex's local corner index in it. */
size_t clmg_cells_with_face(const clmg_mesh *mesh, const clmg_vertex_cells *adjacency,
                            const int32_t *face, int32_t skip, int32_t *first, int *position);

/* clmg_mesh_lagrange_nodes of degree 2 (cell_nodes, num_nodes and, where
 * node_coords is not NULL, node_coords) for a mesh that passed
 * clmg_mesh_check's structure test, with its adjacency already built. */
clmg_status clmg_mesh_quadratic_nodes(const clmg_mesh *mesh, const clmg_vertex_cells *adjacency,
                                      int32_t **cell_nodes, size_t *num_nodes, double **node_coords,
                                      clmg_error *error);

/* clmg_mesh_lagrange_nodes without the structure check: the caller
 * guarantees that the mesh passed clmg_mesh_check or came from
 * clmg_mesh_refine. */
clmg_status clmg_mesh_lagrange_nodes_checked_input(const clmg_mesh *mesh, int degree,
                                                   int32_t **cell_nodes, size_t *num_nodes,
                                                   double **node_coords,
                                                   int32_t **node_boundary_tag, clmg_error *error);

/* Allocates a mesh's arrays for its counts (dim, cell type, num_vertices,
 * num_cells, num_boundary_faces, num_shapes set; the pointers are
 * overwritten), cell_material too when with_materials; 0 without memory,
 * the mesh then freed. */
int clmg_mesh_allocate_arrays(clmg_mesh *mesh, int with_materials);

/* The node table of cl/mesh_device.cl (its T_* layout) for tensor cells of
 * dimension dim: per edge its degree-2 node and 2 local corners, per face
 * (3D) its node and 4 local corners, the centre's node and local corners,
 * the corners' nodes, and each child's corners as parent nodes, in the
 * order the host's numbering and refinement use. Returns the number of
 * entries written (at most CLMG_TENSOR_NODE_TABLE_SIZE). */
enum { CLMG_TENSOR_NODE_TABLE_SIZE = 12 * 3 + 6 * 5 + 9 + 8 + 64 };
size_t clmg_tensor_node_table(int dim, int32_t *table);

/* The full check of the children of coarse cells first .. coarse_cells - 1
 * (clmg_mesh_refine's, after the quality screen stopped at `first`): fine
 * is the refined tensor mesh, tensor_nodes the coarse cells' 3^dim
 * degree-2 nodes; projected says that boundary vertices were projected
 * (for the message). */
clmg_status clmg_mesh_check_refined_cells(size_t coarse_cells, int projected, const clmg_mesh *fine,
                                          const int32_t *tensor_nodes, size_t first,
                                          clmg_error *error);

/* clmg_mesh_refine without its clmg_mesh_check of the coarse mesh: the caller
 * guarantees that coarse passed it or came from clmg_mesh_refine. */
clmg_status clmg_mesh_refine_checked_input(const clmg_mesh *coarse, clmg_mesh *fine,
                                           clmg_error *error);

/* ---- a mesh under construction (lib/mesh/mesh_builder.c) ----
 * The generators (mesh_generators.c: quadrilaterals and hexahedra;
 * lib/flow/flow_meshes.c: triangles) add vertices and cells; finishing finds the
 * boundary faces as the cell faces no other cell has, tags them by where
 * they lie and checks the mesh. A failed addition only marks the builder
 * out of memory, which finishing reports. */
typedef struct clmg_mesh_builder {
  int dim;
  clmg_cell_type cell_type;
  size_t corners; /* per cell */
  double *coords;
  size_t num_vertices, vertex_capacity;
  int32_t *cells;
  size_t num_cells, cell_capacity;
  int out_of_memory;
} clmg_mesh_builder;

void clmg_mesh_builder_init(clmg_mesh_builder *builder, int dim, clmg_cell_type cell_type);
void clmg_mesh_builder_free(clmg_mesh_builder *builder);
/* Room for this many more vertices and cells at once; 0 when out of memory. */
int clmg_mesh_builder_reserve(clmg_mesh_builder *builder, size_t vertices, size_t cells);
/* A new vertex at x; its number. */
int32_t clmg_mesh_builder_add_vertex(clmg_mesh_builder *builder, const double *x);
/* The vertex at x, reused when one lies within 1e-9 (a linear search: how
 * the blocks of the small multi-block meshes are glued together). */
int32_t clmg_mesh_builder_add_vertex_merged(clmg_mesh_builder *builder, const double *x);
void clmg_mesh_builder_add_cell(clmg_mesh_builder *builder, const int32_t *corners);

/* The tag (>= 1) of a boundary face from its corners' coordinates; below 1
 * where it lies on no part of the domain's boundary (a generator's bug). */
typedef int32_t (*clmg_face_tagger)(const void *context, const double *const *corners, int count);

/* Finds the faces of one cell only, in cell order (clmg_mesh_cell_face's
 * local faces), tags
 * them and hands everything to out (shapes copied), then checks it; `name`
 * names the mesh in messages. The builder is emptied either way. */
clmg_status clmg_mesh_builder_finish(clmg_mesh_builder *builder, clmg_face_tagger tag_face,
                                     const void *context, const clmg_boundary_shape *shapes,
                                     size_t num_shapes, const char *name, clmg_mesh *out,
                                     clmg_error *error);

#endif
