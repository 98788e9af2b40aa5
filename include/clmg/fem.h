/** @file
 * clmg finite elements on quadrilateral and hexahedral meshes: Q1 and Q2
 * Lagrange spaces, host assembly of the Poisson problem with Dirichlet
 * conditions, grid-transfer matrices from nodal interpolation (Geveler et
 * al. 2011, section 2.3), DOF numberings (section 2.2) and whole level hierarchies
 * ready for the multigrid engine. Host-only: functions report through a
 * clmg_error. */
#ifndef CLMG_FEM_H
#define CLMG_FEM_H

#include "clmg/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A Q_degree Lagrange space on a mesh: the DOFs are the Lagrange nodes of
 * clmg_mesh_lagrange_nodes (same numbering). The space borrows the mesh. */
typedef struct clmg_fe_space {
  const clmg_mesh *mesh; /**< the mesh, borrowed */
  int degree;            /**< 1 or 2 */
  size_t num_dofs;       /**< degrees of freedom (the Lagrange nodes) */
  size_t dofs_per_cell;  /**< (degree + 1)^dim */
  int32_t *cell_dofs;    /**< num_cells * dofs_per_cell, tensor order */
  double *dof_coords;    /**< num_dofs * dim */
  int32_t *dof_boundary; /**< boundary tag per DOF, 0 inside */
} clmg_fe_space;

/** The Q1 (degree 1) or Q2 (degree 2) space on a quadrilateral or hexahedral mesh, into
 * *out (its arrays malloc'ed; it borrows mesh). Any other degree, or a mesh of simplices,
 * is CLMG_ERROR_INVALID_ARGUMENT with a message in error. */
CLMG_API clmg_status clmg_fe_space_create(const clmg_mesh *mesh, int degree, clmg_fe_space *out,
                                          clmg_error *error);
/** Frees the space's arrays (not its mesh) and zeroes it; NULL is fine. */
CLMG_API void clmg_fe_space_free(clmg_fe_space *space);

/** f(x) for a point x (dim coordinates). */
typedef double (*clmg_fe_function)(const double *x, void *data);
/** g(x) on the boundary part `tag`. */
typedef double (*clmg_fe_boundary_function)(const double *x, int32_t tag, void *data);

/** -Laplace(u) = f in the domain, u = g on the boundary parts listed in
 * dirichlet_tags (NULL and 0 tags: the whole boundary). */
typedef struct clmg_poisson_problem {
  clmg_fe_function source;             /**< NULL: f = source_constant */
  void *source_data;                   /**< passed to source */
  clmg_fe_boundary_function dirichlet; /**< NULL: g = 0 */
  void *dirichlet_data;                /**< passed to dirichlet */
  const int32_t *dirichlet_tags;       /**< the Dirichlet boundary parts (borrowed) */
  size_t num_dirichlet_tags;           /**< entries of dirichlet_tags (0: the whole boundary) */
  /** f when source is NULL (0 when the struct is zeroed). A constant f is
   * integrated on the device by clmg_fe_poisson_hierarchy_device; a
   * function is evaluated on the host. */
  double source_constant;
} clmg_poisson_problem;

/** The benchmark problems of Geveler et al. 2011 (section 4.2), for clmg_mesh_circle and
 * clmg_mesh_blood: CIRCLE is -Laplace(u) = 1, u = 0 on the square (tag 1)
 * and u = 1 on the circle (tag 2); BLOOD is -Laplace(u) = 0, u = 1 on the
 * whole boundary. unit_source is -Laplace(u) = 1, u = 0 on the boundary
 * (what `clmg poisson` solves on a Gmsh mesh). */
CLMG_API void clmg_poisson_problem_circle(clmg_poisson_problem *problem);
/** BLOOD of Geveler et al. 2011: -Laplace(u) = 0, u = 1 on the whole boundary. */
CLMG_API void clmg_poisson_problem_blood(clmg_poisson_problem *problem);
/** -Laplace(u) = 1, u = 0 on the whole boundary. */
CLMG_API void clmg_poisson_problem_unit_source(clmg_poisson_problem *problem);

/** Assembles A u = b by Gauss quadrature ((degree + 2)^dim points per cell)
 * on the multilinear cell geometry. The Dirichlet DOFs are the nodes on the
 * boundary faces with a Dirichlet tag; g is evaluated with the tag of one
 * such face. They are eliminated symmetrically: their rows and columns
 * become those of the identity (all DOFs stay in the system, so A is SPD and
 * the unknown counts are those of the space; the eliminated couplings are
 * not stored), b holds g there, and the other rows of b are corrected by the
 * eliminated columns. b (num_dofs) is caller-allocated; is_dirichlet
 * (num_dofs, caller-allocated, may be NULL) gets 1 on Dirichlet DOFs. */
CLMG_API clmg_status clmg_fe_assemble_poisson(const clmg_fe_space *space,
                                              const clmg_poisson_problem *problem, clmg_csr *a,
                                              double *b, uint8_t *is_dirichlet, clmg_error *error);

/** The prolongation from a coarse space to the space of the same degree on
 * the refined mesh (fine mesh = clmg_mesh_refine(coarse mesh)): row i holds
 * the coarse basis functions evaluated at fine node i (reference coordinates
 * within the parent cell), entries below 1e-14 dropped. Rows of fine
 * Dirichlet DOFs and columns of coarse Dirichlet DOFs are zero when the
 * masks are given (may be NULL), so corrections never touch boundary
 * values. */
CLMG_API clmg_status clmg_fe_prolongation(const clmg_fe_space *coarse, const clmg_fe_space *fine,
                                          const uint8_t *coarse_dirichlet,
                                          const uint8_t *fine_dirichlet, clmg_csr *p,
                                          clmg_error *error);

/** ||u_h - u||_L2 by Gauss quadrature ((degree + 3)^dim points per cell). */
CLMG_API clmg_status clmg_fe_l2_error(const clmg_fe_space *space, const double *u_h,
                                      clmg_fe_function exact, void *exact_data, double *l2_error,
                                      clmg_error *error);

/** The DOF numberings of Geveler et al. 2011, section 2.2. */
typedef enum clmg_numbering {
  CLMG_NUMBERING_2LV = 0, /**< two-level: as refinement creates them (coarse DOFs first) */
  CLMG_NUMBERING_CM,      /**< Cuthill-McKee on the DOF coupling graph */
  CLMG_NUMBERING_XYZ,     /**< sorted by coordinates, x leading, then y, then z */
  CLMG_NUMBERING_STO,     /**< random (the worst case) */
  CLMG_NUMBERING_HIE /**< hierarchical: by first appearance over the cells in refinement order */
} clmg_numbering;

/** The numbering's name: "2LV", "CM", "XYZ", "STO" or "HIE" ("unknown" for any other
 * value); static. */
CLMG_API const char *clmg_numbering_name(clmg_numbering numbering);
/** Parses "2lv", "cm", "xyz", "sto", "hie" (any case); 0 if unknown. */
CLMG_API int clmg_numbering_parse(const char *name, clmg_numbering *numbering);

/** perm[new] = old (as clmg_csr_permute takes it), num_dofs entries,
 * caller-allocated. CM runs on the coupling graph of the space's DOFs (two
 * DOFs are adjacent when they share a cell): the pattern of the Poisson
 * matrix before Dirichlet elimination, whose identity rows would be isolated
 * nodes. So a is not needed (may be NULL); when given, it must be
 * num_dofs x num_dofs. STO uses seed. */
CLMG_API clmg_status clmg_fe_numbering(const clmg_fe_space *space, const clmg_csr *a,
                                       clmg_numbering numbering, uint64_t seed, int32_t *perm,
                                       clmg_error *error);

/** A whole geometric hierarchy on the host: levels 0 (the given coarse mesh) to num_levels - 1 (the
 * finest), each refined from the one before. Everything is in the chosen numbering: a[l] = the
 * Poisson matrix of level l, p[l] (l >= 1) the prolongation from level l - 1 to l, r[l] = p[l]^T, b
 * the right-hand side on the finest level, x0 an initial guess there (g on Dirichlet DOFs, 0
 * elsewhere). perm[l][new] = old maps the numbering back to the mesh's own. */
typedef struct clmg_fe_hierarchy {
  int num_levels;           /**< levels, the coarse mesh's included */
  int degree;               /**< 1 (Q1) or 2 (Q2) */
  clmg_numbering numbering; /**< the numbering of every level's DOFs */
  clmg_mesh *meshes;        /**< num_levels; meshes[0] is a copy of the coarse mesh */
  clmg_fe_space *spaces;    /**< num_levels */
  clmg_csr *a;              /**< num_levels */
  clmg_csr *p;              /**< num_levels; p[0] empty */
  clmg_csr *r;              /**< num_levels; r[0] empty */
  int32_t **perm;           /**< num_levels arrays of spaces[l].num_dofs */
  double *b;                /**< finest level, permuted */
  double *x0;               /**< finest level, permuted */
  uint8_t *is_dirichlet;    /**< finest level, permuted */
} clmg_fe_hierarchy;

/** Builds the hierarchy of `problem` on the host: num_levels (>= 1) levels from the
 * coarse mesh (a quadrilateral or hexahedral one), Q1 or Q2 (degree 1 or 2), in
 * `numbering` (seed: STO's random order). out is overwritten; on failure it is zero and
 * error says why. */
CLMG_API clmg_status clmg_fe_poisson_hierarchy(const clmg_mesh *coarse, int num_levels, int degree,
                                               const clmg_poisson_problem *problem,
                                               clmg_numbering numbering, uint64_t seed,
                                               clmg_fe_hierarchy *out, clmg_error *error);
/** Frees every level's mesh, space, matrices and permutation and the finest level's
 * vectors, and zeroes the hierarchy; NULL is fine. */
CLMG_API void clmg_fe_hierarchy_free(clmg_fe_hierarchy *hierarchy);

/** The same hierarchy assembled on the device: the levels of clmg_fe_poisson_hierarchy in the 2LV
 * numbering (the mesh's own, so no permutation), built on the device: only the coarse mesh goes up;
 * every level's mesh is refined there (clmg_mesh_refine_on_device), its DOFs numbered and its
 * Dirichlet DOFs found there, and kernels build every level's matrix, prolongation and restriction
 * as CSR arrays; the finest mesh and its space come back to the host. On a device without fp64 the
 * host refines and numbers (coordinates need doubles) and uploads each
 * level. Nothing of the matrices' size crosses the bus. The arrays equal
 * those of clmg_fe_poisson_hierarchy to rounding and are meant for
 * clmg_multigrid_create_from_csr_device. Values, b and x0 (the finest
 * level's right-hand side and initial guess, g on Dirichlet DOFs) are
 * double, or float on a device without fp64. A constant source
 * (problem->source NULL) is integrated on the device; a source function is
 * evaluated on the host at the finest level's quadrature points. Failures
 * return a status with the context's message. */
typedef struct clmg_fe_device_hierarchy {
  int num_levels; /**< levels, the coarse mesh's included */
  int degree;     /**< 1 (Q1) or 2 (Q2) */
  /** num_levels: meshes[0] is a copy of the coarse mesh. Where the device
   * refined the meshes (fp64), the finer levels are empty (zeroed) until
   * clmg_fe_device_hierarchy_fetch_finest brings the finest level's mesh
   * and space to the host (a source function needs them at setup, so they
   * are there then); where the host refined them, every level is filled. */
  clmg_mesh *meshes;
  clmg_fe_space *spaces; /**< num_levels: the spaces of the meshes, filled as they are */
  clmg_csr_device *a;    /**< num_levels */
  clmg_csr_device *p;    /**< num_levels; p[0] empty */
  clmg_csr_device *r;    /**< num_levels; r[0] empty: r[l] = p[l]^T */
  clmg_vector *b;        /**< finest level */
  clmg_vector *x0;       /**< finest level */
  uint8_t *is_dirichlet; /**< finest level, on the host (with the finest mesh) */
  /** Seconds refining the meshes. Where the setup's time went (wall seconds, all levels): refining
   * the meshes, numbering the DOFs (with the finest mesh and space brought to the host), finding
   * the Dirichlet DOFs (with g on the finest level), and the assembly (element matrices, pattern,
   * rows, P and R); each level's work ends with a wait. */
  double refine_s;
  double number_s;    /**< numbering the DOFs (see refine_s) */
  double dirichlet_s; /**< finding the Dirichlet DOFs (see refine_s) */
  double device_s;    /**< the assembly on the device (see refine_s) */
  /** the finest level's mesh and mask on the device until
   * clmg_fe_device_hierarchy_fetch_finest brings them to the host */
  struct clmg_fe_device_finest *device_finest;
} clmg_fe_device_hierarchy;

/** Builds the hierarchy described at clmg_fe_device_hierarchy: num_levels (>= 1) levels
 * of Q1 or Q2 (degree 1 or 2) from the coarse quadrilateral or hexahedral mesh, in the
 * 2LV numbering. out is overwritten; on failure it is zero and the context's message
 * says why. */
CLMG_API clmg_status clmg_fe_poisson_hierarchy_device(clmg_context *context,
                                                      const clmg_mesh *coarse, int num_levels,
                                                      int degree,
                                                      const clmg_poisson_problem *problem,
                                                      clmg_fe_device_hierarchy *out);
/** Frees the levels' device arrays and vectors and the host meshes and spaces, and zeroes
 * the hierarchy; NULL is fine. Free it before its context. */
CLMG_API void clmg_fe_device_hierarchy_free(clmg_fe_device_hierarchy *hierarchy);

/** Brings the finest level's mesh, space and Dirichlet mask to the host
 * (meshes[num_levels - 1], spaces[num_levels - 1], is_dirichlet), for
 * output and error norms: a download and the host's space, tens of
 * milliseconds for millions of cells, which the setup does not pay for a
 * solver that needs none of them. Later calls return at once. */
CLMG_API clmg_status clmg_fe_device_hierarchy_fetch_finest(clmg_context *context,
                                                           clmg_fe_device_hierarchy *hierarchy);

/** clmg_mesh_refine applied `times` times, on the device: the same fine mesh
 * (vertices in the same order with bit-identical coordinates, cells,
 * boundary faces and tags, materials, shapes), with only the coarse mesh
 * going up and the fine mesh coming back. Quadrilaterals and hexahedra, on
 * a device with fp64 (coordinates are doubles). Failures (a bad coarse
 * mesh, a cell folded by projection) give clmg_mesh_refine's messages. */
CLMG_API clmg_status clmg_mesh_refine_on_device(clmg_context *context, const clmg_mesh *coarse,
                                                int times, clmg_mesh *fine);

/** u_mesh[perm[i]] = u_numbered[i] for the finest level of a host hierarchy:
 * back to the mesh's own numbering (for output and error norms). */
CLMG_API void clmg_fe_hierarchy_unpermute(const clmg_fe_hierarchy *hierarchy,
                                          const double *u_numbered, double *u_mesh);

#ifdef __cplusplus
}
#endif

#endif
