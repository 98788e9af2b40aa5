/** @file
 * clmg meshes: unstructured conforming quadrilateral (2D) and hexahedral (3D)
 * meshes, and triangle and tetrahedral (simplicial) ones; uniform refinement
 * with boundary projection, the Lagrange nodes of Q1/Q2 (and P1/P2)
 * elements, generators of the benchmark domains, Gmsh input and VTK output.
 * Host-only: functions report through a clmg_error. The Q1/Q2 finite
 * elements of clmg/fem.h need tensor cells and refuse simplices. */
#ifndef CLMG_MESH_H
#define CLMG_MESH_H

#include "clmg/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A curved part of the boundary that refinement projects new vertices onto. */
typedef enum clmg_boundary_shape_kind {
  CLMG_SHAPE_NONE = 0,    /**< flat: new vertices stay at edge/face midpoints */
  CLMG_SHAPE_CIRCLE = 1,  /**< 2D: |x - center| = radius */
  CLMG_SHAPE_CYLINDER = 2 /**< 3D: distance from the axis line (center, axis) = radius */
} clmg_boundary_shape_kind;

/** A boundary part (by face tag) whose new vertices refinement projects onto a circle or
 * cylinder. */
typedef struct clmg_boundary_shape {
  int32_t tag;                   /**< the boundary part (face tag) it belongs to */
  clmg_boundary_shape_kind kind; /**< circle, cylinder, or none (flat) */
  double center[3];              /**< circle: its centre; cylinder: a point of its axis */
  double axis[3];                /**< cylinder: direction of the axis (need not be unit) */
  double radius;                 /**< the circle's or cylinder's radius */
} clmg_boundary_shape;

/** The kind of cell a mesh is made of. */
typedef enum clmg_cell_type {
  CLMG_CELL_TENSOR = 0, /**< quadrilaterals (dim 2) or hexahedra (dim 3), tensor order (below) */
  CLMG_CELL_SIMPLEX = 1 /**< triangles (dim 2) or tetrahedra (dim 3) */
} clmg_cell_type;

/** Tensor cells are stored in tensor order: vertex (i, j, k) of the reference cell
 * [0,1]^dim sits at local index i + 2j + 4k (so a quadrilateral lists its
 * corners (0,0), (1,0), (0,1), (1,1), NOT counter-clockwise). Boundary faces
 * (edges in 2D, quadrilaterals in 3D) use the same tensor order in dim - 1.
 * Simplices list their dim + 1 vertices with a positive orientation
 * (det[v1 - v0, v2 - v0(, v3 - v0)] > 0); their boundary faces (edges in 2D,
 * triangles in 3D) list dim vertices in any order.
 * Every array is malloc'ed; clmg_mesh_free releases them. A zeroed struct
 * is an empty tensor mesh, so code written before simplices keeps working. */
typedef struct clmg_mesh {
  int dim;                     /**< 2: quadrilaterals or triangles, 3: hexahedra or tetrahedra */
  size_t num_vertices;         /**< vertices */
  size_t num_cells;            /**< cells */
  size_t num_boundary_faces;   /**< boundary faces (edges in 2D) */
  double *coords;              /**< num_vertices * dim, vertex-major (x0, y0, x1, y1, ...) */
  int32_t *cells;              /**< num_cells * clmg_mesh_vertices_per_cell vertex indices */
  int32_t *boundary_faces;     /**< num_boundary_faces * clmg_mesh_vertices_per_face indices */
  int32_t *boundary_face_tag;  /**< num_boundary_faces tags, each >= 1 */
  size_t num_shapes;           /**< entries of shapes */
  clmg_boundary_shape *shapes; /**< curved boundary parts (by tag); may be NULL */
  clmg_cell_type cell_type;    /**< tensor cells (0, a zeroed mesh's) or simplices */
  /** num_cells material ids (Gmsh: the cell's physical group), each >= 1;
   * NULL: every cell is of material 1 */
  int32_t *cell_material;
} clmg_mesh;

/** Vertices per cell: dim + 1 for simplices, 2^dim for tensor cells. */
static inline size_t clmg_mesh_vertices_per_cell(const clmg_mesh *mesh) {
  return mesh->cell_type == CLMG_CELL_SIMPLEX ? (size_t)mesh->dim + 1 : (size_t)1 << mesh->dim;
}
/** Vertices per boundary face: dim for simplices, 2^(dim - 1) for tensor cells. */
static inline size_t clmg_mesh_vertices_per_face(const clmg_mesh *mesh) {
  return mesh->cell_type == CLMG_CELL_SIMPLEX ? (size_t)mesh->dim : (size_t)1 << (mesh->dim - 1);
}
/** The material id of a cell (1 when the mesh has no cell_material). */
static inline int32_t clmg_mesh_cell_material(const clmg_mesh *mesh, size_t cell) {
  return mesh->cell_material ? mesh->cell_material[cell] : 1;
}

/** Frees the arrays of mesh and zeroes it (NULL and zeroed meshes are fine). */
CLMG_API void clmg_mesh_free(clmg_mesh *mesh);

/** A deep copy of `in` (every array, cell_material and shapes included; NULL
 * cell_material stays NULL) into *out, which clmg_mesh_free releases
 * independently of `in`. `in` needs its arrays for its counts but is not
 * otherwise checked; out must not be in. On failure *out is zeroed. */
CLMG_API clmg_status clmg_mesh_copy(const clmg_mesh *in, clmg_mesh *out, clmg_error *error);

/** Checks indices, that every cell has a positive Jacobian at its corners
 * (tensor cells: tensor order, right-handed; simplices: positive volume),
 * not nearly degenerate by a scale-free corner quality (the determinant of
 * the unit edge vectors at the worst corner, > 1e-12), and that boundary
 * faces are faces of cells (each of exactly one cell, listed once; tensor
 * cells' in tensor order) that close the boundary (every face of only one
 * cell is a boundary face); also tags (>= 1), material ids (>= 1) and shapes
 * (CIRCLE in 2D, CYLINDER in 3D, radius > 0, one per tag). The message names
 * the first offending cell or face ("cell 17 is inverted (negative volume
 * -0.02): ..."). */
CLMG_API clmg_status clmg_mesh_check(const clmg_mesh *mesh, clmg_error *error);

/** Tensor cells: the nodes of the tensor Lagrange element of degree 1 or 2 on every cell,
 * numbered globally, each geometric entity once: degree 1 gives the vertices
 * (cell_nodes equals cells); degree 2 keeps the vertex numbers and appends
 * one node per edge, then per face (3D), then per cell, in the order in which
 * cells first meet them. cell_nodes (malloc'ed, num_cells * (degree+1)^dim)
 * lists a cell's nodes in tensor order: node (a, b, c), a, b, c in
 * 0..degree, at local index a + (degree+1) b + (degree+1)^2 c, located at
 * reference coordinates (a, b, c) / degree. node_coords (malloc'ed, may be
 * NULL if not wanted) gets each node's position under the cell's
 * multilinear map; node_boundary_tag (malloc'ed, may be NULL) the tag of a
 * boundary face the node lies on (the smallest where faces of several tags
 * meet), 0 for interior nodes.
 * Simplices: the nodes of the P1 or P2 element: degree 1 gives the vertices
 * (cell_nodes equals cells, dim + 1 per cell); degree 2 appends one node per
 * edge at its midpoint, numbered in the order in which cells first meet
 * them, and a cell lists its vertices, then its edges in VTK's order
 * ((0,1), (1,2), (2,0) for triangles, then (0,3), (1,3), (2,3) for
 * tetrahedra): 6 or 10 nodes per cell. */
CLMG_API clmg_status clmg_mesh_lagrange_nodes(const clmg_mesh *mesh, int degree,
                                              int32_t **cell_nodes, size_t *num_nodes,
                                              double **node_coords, int32_t **node_boundary_tag,
                                              clmg_error *error);

/** Uniform refinement: every cell into 2^dim children.
 * Tensor cells: the fine vertices are
 * the degree-2 Lagrange nodes of the coarse mesh (same numbers: the coarse
 * vertices keep theirs, new vertices follow), new vertices on a boundary part
 * with a shape are projected onto it. Child c of coarse cell k is fine cell
 * k * 2^dim + c, where c = cx + 2 cy + 4 cz is the child's position in the
 * parent's reference cell, and the child's reference axes are the parent's;
 * fine boundary faces are ordered the same way from their parents and keep
 * their tags. This is what grid transfers rely on. The coarse mesh must
 * pass clmg_mesh_check, and so must the result: a projection that folds a
 * cell is an error.
 * Simplices: midpoint subdivision, a triangle into 4, a tetrahedron into 8
 * (Bey 1995). The fine vertices are the coarse vertices (same numbers),
 * then the edge midpoints in the order of the degree-2 nodes of
 * clmg_mesh_lagrange_nodes. Child c of coarse cell k is fine cell
 * k * 2^dim + c: children 0..dim are the corner simplices (child i keeps
 * vertex i and the midpoints of its edges, in the parent's vertex order);
 * a triangle's child 3 is (m01, m12, m02); a tetrahedron's children 4..7
 * cut the inner octahedron along its shortest diagonal (ties: m01-m23,
 * then m02-m13, then m03-m12), each listed with positive volume. Boundary
 * faces split the same way (edges into 2, triangles into 4: the corner ones,
 * then the middle one), keep their tags and are projected onto shapes.
 * Both: children inherit their parent's material id. */
CLMG_API clmg_status clmg_mesh_refine(const clmg_mesh *coarse, clmg_mesh *fine, clmg_error *error);

/* ---- generators of the benchmark domains ----
 * Boundary tags are documented per generator. */

/** CIRCLE (Geveler et al. 2011, section 4.2): the square [-1,1]^2 with a circular hole of
 * radius 0.5 at the origin; one ring of 8 quadrilaterals, 16 vertices (8 on
 * the circle, 8 on the square: corners and edge midpoints). Tag 1: the
 * square (outer boundary), tag 2: the circle (a CIRCLE shape). */
CLMG_API clmg_status clmg_mesh_circle(clmg_mesh *out, clmg_error *error);

/** BLOOD-like (Geveler et al. 2011): a 2D vessel, the lumen [0,6] x [0,1] wrapped in a
 * wall of thickness 0.01 above and below, with an aneurysm on top: a
 * circular bulge (lumen radius 0.8 around (3, 1 + 0.8/sqrt 2), the neck
 * 1.13 wide) wrapped in the same wall. 330 coarse quadrilaterals; the wall
 * is one layer of cells of aspect ratio about 18 to 21. Tag 1: the ends
 * (x = 0 and x = 6) and the straight outer walls; tag 2: the outer wall of
 * the aneurysm, a CIRCLE shape of radius 0.81. */
CLMG_API clmg_status clmg_mesh_blood(clmg_mesh *out, clmg_error *error);

/** The unit square (dim 2) or cube (dim 3) with n cells per side; interior
 * vertices are moved at random by up to `distortion` times the cell width
 * (0 <= distortion < 0.3) with the given seed, to make the grid irregular;
 * the moves of a cell's corners are halved until no corner angle has a sine
 * below 0.2, so that no cell folds. Tag 1: the whole boundary. */
CLMG_API clmg_status clmg_mesh_box(int dim, int n, double distortion, uint64_t seed, clmg_mesh *out,
                                   clmg_error *error);

/** 3D analogue of CIRCLE: the hollow cylinder 0.5 <= r <= 1, 0 <= z <= 1
 * (axis z), one ring of 8 hexahedra (32 vertices). Tag 1: outer cylinder,
 * tag 2: inner cylinder (CYLINDER shapes), tag 3: the flat ends. */
CLMG_API clmg_status clmg_mesh_pipe(clmg_mesh *out, clmg_error *error);

/* ---- simplicial meshes ---- */

/** The box of clmg_mesh_box (same arguments, vertices and tag 1 on the whole
 * boundary) with every square cut into 2 triangles (2D) or every cube into
 * the 6 tetrahedra of Kuhn's subdivision (3D), all along the diagonal from
 * the cell's lowest to its highest corner, so neighbouring cells' faces
 * match: 2 n^2 triangles or 6 n^3 tetrahedra, (n + 1)^dim vertices.
 * Boundary squares are cut into 2 triangles the same way. With distortion,
 * a 3D cell can still give an inverted tetrahedron: that is an error. */
CLMG_API clmg_status clmg_mesh_box_simplices(int dim, int n, double distortion, uint64_t seed,
                                             clmg_mesh *out, clmg_error *error);

/** "Regular" of Fu et al. 2014: the cube [0,4]^3 cut into 8^3 cubes of 6
 * Kuhn tetrahedra each (clmg_mesh_box_simplices(3, 8) scaled by 4), refined
 * uniformly `level` times (0 to 5) by clmg_mesh_refine: (8 * 2^level + 1)^3
 * vertices and 3072 * 8^level tetrahedra (level 0: 729 and 3,072; level 3:
 * 274,625 and 1,572,864). Tag 1: the whole boundary. */
CLMG_API clmg_status clmg_mesh_regular_tetrahedra(int level, clmg_mesh *out, clmg_error *error);

/** A two-material mesh: clmg_mesh_box_simplices(dim, 4 * 2^level) (level 0
 * to 6) where cells whose centroid lies inside one of three fixed balls
 * (discs in 2D) get material 2, the others material 1: centres (0.3, 0.3,
 * 0.3), (0.7, 0.65, 0.35), (0.4, 0.7, 0.72), radii 0.2, 0.18, 0.15 (2D: the
 * same without z). Tag 1: the whole boundary. Deterministic. */
CLMG_API clmg_status clmg_mesh_blobs(int dim, int level, clmg_mesh *out, clmg_error *error);

/* ---- parts of a mesh (distributed runs) ---- */

/** Splits the cells (either cell type) into `parts` parts (1 to the number of
 * cells) of sizes that differ by at most one, by recursive coordinate
 * bisection of the cells' centroids: each step sorts its cells along the
 * axis where their centroids spread widest (ties by cell index) and gives
 * each half as many cells as its parts get, so parts are compact pieces of
 * the domain. Deterministic: every process computes the same parts.
 * part_of_cell (num_cells entries, caller-allocated) gets each cell's part,
 * 0 to parts - 1. (A graph partitioner such as METIS cuts fewer faces on
 * irregular meshes; bisection needs nothing and its parts are good on the
 * meshes refinement makes.) */
CLMG_API clmg_status clmg_mesh_partition(const clmg_mesh *mesh, int parts, int32_t *part_of_cell,
                                         clmg_error *error);

/** Cuts out the cells of part `part` (part_of_cell as clmg_mesh_partition
 * gives it) with `layers` layers of cells around them (a cell joins the
 * next layer when it shares a vertex with the cells before) as a mesh of
 * its own, which passes clmg_mesh_check: its cells in increasing order of
 * their index in mesh (*cell_map, malloc'ed: cell_map[local] = index in
 * mesh), its vertices in increasing order of theirs (same coordinates), the
 * cells' vertex order, materials and the mesh's shapes kept, the mesh's
 * boundary faces on its cells with their tags, and the faces where it was
 * cut out as boundary faces of a tag of their own, *cut_tag (1 + the
 * largest tag of the mesh's faces and shapes). So clmg_mesh_refine gives it
 * the children of its cells, numbered as clmg_mesh_refine numbers them on
 * mesh (local cell k's children are local cells k * 2^dim + c), at the same
 * places; a problem on it names its Dirichlet tags, so that the cut faces
 * are not Dirichlet boundaries. The mesh must pass clmg_mesh_check. */
CLMG_API clmg_status clmg_mesh_extract_part(const clmg_mesh *mesh, const int32_t *part_of_cell,
                                            int32_t part, int layers, clmg_mesh *out,
                                            int32_t **cell_map, int32_t *cut_tag,
                                            clmg_error *error);

/* ---- vertex orderings ---- */

/** How clmg_mesh_reorder_vertices numbers the vertices. */
typedef enum clmg_vertex_order {
  /** By the Morton (Z-order) code of the coordinates, each axis quantized to
   * 21 bits in the mesh's bounding box (ties: the old order). Contiguous
   * index ranges become compact blocks of the domain, whatever the cells'
   * order: what the row patches of the device P1 assembly
   * (clmg/assembly.h) want. */
  CLMG_VERTEX_ORDER_MORTON = 0,
  /** In the order in which the cells (in their order, each one's vertices
   * in local order) first meet them; vertices of no cell follow in their
   * old order. Local when the cells are (e.g. refinement's children). */
  CLMG_VERTEX_ORDER_CELLS = 1
} clmg_vertex_order;

/** Renumbers the vertices of a mesh (either cell type) in place: vertex
 * new gets the coordinates of old vertex old_of_new[new], and cells and
 * boundary faces list the new labels in the same local positions, so
 * orientations, tags, materials and shapes are unchanged and the mesh
 * passes clmg_mesh_check exactly when it did before. O(n log n) in the
 * vertices, plus linear in cells and faces. old_of_new (may be NULL) gets
 * the permutation (num_vertices entries, caller-allocated). Fails, leaving
 * the mesh unchanged, on an index outside 0..num_vertices-1 (naming the
 * cell or face), a non-finite coordinate (Morton) or lack of memory.
 * Note: a refined hierarchy (clmg_mesh_refine) relies on the coarse
 * vertices keeping their numbers on the fine mesh; reorder the finest mesh
 * only, or each level on its own for level-local uses. */
CLMG_API clmg_status clmg_mesh_reorder_vertices(clmg_mesh *mesh, clmg_vertex_order order,
                                                int32_t *old_of_new, clmg_error *error);

/* ---- files ---- */

/** Reads a Gmsh .msh file, ASCII format 2.2 or 4.1, holding quadrilaterals
 * (element type 4-node quad, 3) or triangles (3-node, 2) in 2D, hexahedra
 * (8-node hex, 5) or tetrahedra (4-node, 4) in 3D; tensor cells and
 * simplices of the mesh dimension must not mix, and other cells of the mesh
 * dimension are an error. Cells get material ids (cell_material): their
 * physical group, else their elementary entity tag (0 becomes 1).
 * Lower-dimensional elements (lines in 2D, quads of hexahedra and triangles
 * of tetrahedra in 3D) become boundary faces tagged with their
 * physical group (else their elementary entity) tag; faces between two
 * cells are ignored, faces of no cell are an error, points (and lines in 3D)
 * are ignored. Boundary faces missing from the file are added with tag 1
 * (every mesh needs a closed boundary). The dimension is 3 when the file has
 * hexahedra or tetrahedra, else 2 (z must then be constant, as Gmsh's 0).
 * Node tags may be sparse; nodes no cell uses are dropped. Cells are
 * reoriented to positive Jacobians (simplices listed with negative volume
 * get their first two vertices swapped); degenerate cells are an error.
 * Errors say FILE:LINE and what was expected; nothing is returned
 * half-read. */
CLMG_API clmg_status clmg_mesh_read_gmsh(const char *path, clmg_mesh *out, clmg_error *error);

/** A field of values on the nodes of a degree-1 or degree-2 Lagrange space
 * (as numbered by clmg_mesh_lagrange_nodes) for VTK output. */
typedef struct clmg_mesh_field {
  const char *name;     /**< the field's name in the file */
  const double *values; /**< one per node */
} clmg_mesh_field;

/** The same, or (on_cells) one per cell, scalar (components 0 or 1) or a
 * vector of 2 or 3 components per node or cell (2 are written as 3 with
 * z = 0, so ParaView draws them as vectors): for
 * clmg_mesh_write_vtu_fields. */
typedef struct clmg_vtu_field {
  const char *name;     /**< the field's name in the file */
  const double *values; /**< one (or `components`) per node, or per cell */
  int components;       /**< 0 or 1: scalar; 2 or 3: a vector */
  int on_cells;         /**< nonzero: cell data */
} clmg_vtu_field;

/** How a .vtu file stores its arrays. */
typedef enum clmg_vtu_encoding {
  CLMG_VTU_BINARY = 0, /**< raw appended data (UInt64 block headers): compact, fast to open */
  CLMG_VTU_ASCII       /**< text, every double as %.17g: readable, about twice the size */
} clmg_vtu_encoding;

/** Writes a VTK XML UnstructuredGrid (.vtu) that ParaView opens: the nodes of
 * the degree-`degree` space as points, cells as VTK_QUAD / VTK_HEXAHEDRON
 * (degree 1) or VTK_BIQUADRATIC_QUAD / VTK_TRIQUADRATIC_HEXAHEDRON (degree 2),
 * simplices as VTK_TRIANGLE / VTK_TETRA (degree 1) or VTK_QUADRATIC_TRIANGLE
 * / VTK_QUADRATIC_TETRA (degree 2), the fields as point data, and as cell
 * data the cell's index ("cell", Int32) and, where the mesh has
 * cell_material (of either cell type), the material id ("material",
 * Int32). The file is
 * written under a temporary name next to `path` and renamed to `path` when
 * complete (clmg/output_file.h): a failed write leaves an earlier file at
 * `path` untouched (a path that exists and is not a regular file, such as
 * /dev/stdout, is written directly). */
CLMG_API clmg_status clmg_mesh_write_vtu_encoded(const char *path, const clmg_mesh *mesh,
                                                 int degree, const clmg_mesh_field *fields,
                                                 size_t num_fields, clmg_vtu_encoding encoding,
                                                 clmg_error *error);

/** clmg_mesh_write_vtu_encoded with node and cell fields, scalars or
 * vectors; node fields are point data, cell fields cell data (before the
 * cell's index and material). */
CLMG_API clmg_status clmg_mesh_write_vtu_fields(const char *path, const clmg_mesh *mesh, int degree,
                                                const clmg_vtu_field *fields, size_t num_fields,
                                                clmg_vtu_encoding encoding, clmg_error *error);

/** A ParaView collection (.pvd) of .vtu files (named as the .pvd should
 * refer to them: relative to its folder) with their times: a time series
 * ParaView opens as one. Written like the .vtu files (a failed write
 * leaves an earlier file untouched). */
CLMG_API clmg_status clmg_write_pvd(const char *path, const char *const *files, const double *times,
                                    size_t count, clmg_error *error);

/** clmg_mesh_write_vtu_encoded with CLMG_VTU_BINARY. */
CLMG_API clmg_status clmg_mesh_write_vtu(const char *path, const clmg_mesh *mesh, int degree,
                                         const clmg_mesh_field *fields, size_t num_fields,
                                         clmg_error *error);

#ifdef __cplusplus
}
#endif

#endif
