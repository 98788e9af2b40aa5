/** @file
 * clmg SPD test problems: symmetric positive definite matrices that are not
 * M-matrices, as other codes hand them to an algebraic multigrid, assembled
 * on the host from the library's own mesh generators: 3D linear elasticity
 * with P1 and P2 tetrahedra (3 DOFs per node), symmetric interior-penalty
 * DG for the Poisson problem on triangles, and Q2 Poisson with a
 * coefficient that jumps between cells. Each problem gives the matrix, the
 * right-hand side and the position of every node (for rigid-body modes and
 * geometric information an AMG may use). Host-only: functions report
 * through a clmg_error. */
#ifndef CLMG_SPD_PROBLEMS_H
#define CLMG_SPD_PROBLEMS_H

#include "clmg/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The problems of the test set. */
typedef enum clmg_spd_problem_kind {
  /** "elasticity-p1": -div sigma(u) = f on the unit cube, sigma = 2 mu eps(u)
   * + lambda div(u) I with E = 1 and the Poisson ratio of the options,
   * linear (P1) tetrahedra of clmg_mesh_box_simplices(3, level, distortion,
   * seed); 3 DOFs per vertex, interleaved (DOF 3 node + c); clamped (u = g,
   * default 0) on the face x = 0, traction-free elsewhere; f = (0, 0, -1). */
  CLMG_SPD_ELASTICITY_P1 = 0,
  /** "elasticity-p2": the same with quadratic (P2, 10-node) tetrahedra: the
   * nodes are those of clmg_mesh_lagrange_nodes(mesh, 2) (vertices, then
   * edge midpoints). */
  CLMG_SPD_ELASTICITY_P2,
  /** "dg-diffusion": -Laplace(u) = f (default 1) on the unit square, u = g
   * (default 0) imposed weakly (Nitsche), by the symmetric interior-penalty
   * method (SIPG) with discontinuous P1 on the triangles of
   * clmg_mesh_box_simplices(2, level, distortion, seed): 3 DOFs per
   * triangle (DOF 3 cell + k: the nodal basis function of the cell's vertex
   * k), penalty 10 (p + 1)^2 / |F| = 40 / |F| on every edge F. */
  CLMG_SPD_DG_DIFFUSION,
  /** "q2-jump": -div(k grad u) = f (default 1) with Q2 elements on the
   * hexahedra of clmg_mesh_box(3, level, distortion, seed), u = g (default
   * 0) on the whole boundary, eliminated symmetrically; k = jump in the
   * cells whose centroid lies in the octants of the cube where
   * floor(2x) + floor(2y) + floor(2z) is odd (a 2 x 2 x 2 checkerboard),
   * 1 elsewhere. DOFs: the nodes of clmg_fe_space_create(mesh, 2). */
  CLMG_SPD_Q2_JUMP
} clmg_spd_problem_kind;

/** The number of problem kinds (clmg_spd_problem_kind's values are 0 to this - 1). */
#define CLMG_SPD_NUM_PROBLEMS 4

/** Where a Dirichlet condition holds. */
typedef enum clmg_spd_boundary {
  /** the problem's own (see the kinds): elasticity the face x = 0, the
   * others the whole boundary */
  CLMG_SPD_BOUNDARY_DEFAULT = 0,
  /** the whole boundary */
  CLMG_SPD_BOUNDARY_ALL,
  /** none (elasticity only): the pure-traction matrix, symmetric positive
   * SEMI-definite with the six rigid-body modes as its null space; for
   * tests of those modes. The others refuse it. */
  CLMG_SPD_BOUNDARY_NONE
} clmg_spd_boundary;

/** value (block_size components: 3 for elasticity, 1 otherwise) of a field
 * at the point x (dim coordinates). */
typedef void (*clmg_spd_field)(const double *x, double *value, void *data);

/** Which problem clmg_spd_problem_create assembles, and how; fill it with
 * clmg_spd_problem_options_defaults. */
typedef struct clmg_spd_problem_options {
  clmg_spd_problem_kind kind; /**< the problem (default elasticity-p1) */
  /** cells per side of the box (n of clmg_mesh_box): 1 to 160 for the 3D
   * problems, 1 to 4096 for dg-diffusion. Rows: elasticity-p1
   * 3 (n + 1)^3, elasticity-p2 3 (2 n + 1)^3, dg-diffusion 6 n^2, q2-jump
   * (2 n + 1)^3 (n = 32, 16, 128, 24 give about 10^5 rows). Default 8. */
  int level;
  double poisson_ratio; /**< elasticity, in [0, 0.5); default 0.3 */
  double jump;          /**< q2-jump: the coefficient's ratio, > 0; default 1e4 */
  /** the meshes' random moves of interior vertices in cell widths (as
   * clmg_mesh_box takes it, [0, 0.3)); default 0.1 (a larger one can fold
   * a tetrahedron, which is then an error) */
  double distortion;
  uint64_t seed;              /**< of the distortion; default 1 */
  clmg_spd_boundary boundary; /**< where u = g holds (default: the problem's own) */
  /** Manufactured data (NULL: the defaults of the kinds): f and the
   * Dirichlet values g, block_size components each, both given `data`. */
  clmg_spd_field source;
  clmg_spd_field boundary_value; /**< g (NULL: the kind's default, 0) */
  void *data;                    /**< passed to source and boundary_value */
} clmg_spd_problem_options;

/** The defaults: elasticity-p1 at level 8, Poisson ratio 0.3, jump 1e4, distortion 0.1,
 * seed 1, the problem's own boundary, the kinds' own data. A NULL options does nothing. */
CLMG_API void clmg_spd_problem_options_defaults(clmg_spd_problem_options *options);

/** An assembled test problem: A, b and what an AMG needs besides (block size, node
 * coordinates). */
typedef struct clmg_spd_problem {
  clmg_spd_problem_kind kind; /**< the problem assembled */
  clmg_csr a;                 /**< rows x rows, SPD (semi-definite for CLMG_SPD_BOUNDARY_NONE) */
  double *b;                  /**< rows */
  int dim;                    /**< 2 or 3 */
  /** DOFs per node, interleaved (DOF block_size node + c): 3 for
   * elasticity, 1 otherwise */
  int block_size;
  size_t num_nodes; /**< rows / block_size */
  /** num_nodes x dim, node-major: the position of each node (DG: the DOF's
   * nodal point, a vertex of its triangle) */
  double *coordinates;
  /** rows entries: 1 on the DOFs eliminated as Dirichlet DOFs (identity
   * rows and columns, b = g there), 0 elsewhere */
  uint8_t *is_dirichlet;
} clmg_spd_problem;

/** Assembles the problem the options describe (NULL: the defaults, i.e.
 * elasticity-p1 at level 8) into *out, which clmg_spd_problem_free
 * releases. Dirichlet DOFs of the conforming problems are eliminated
 * symmetrically as clmg_fe_assemble_poisson does: their rows and columns
 * become the identity's, b holds g there and the other rows of b are
 * corrected, so every node keeps its DOFs and A stays SPD. Bad options
 * (kind, level, Poisson ratio, jump, distortion, boundary) give
 * CLMG_ERROR_INVALID_ARGUMENT with a message naming the option; a mesh that
 * folds, CLMG_ERROR_INVALID_ARGUMENT; lack of memory,
 * CLMG_ERROR_OUT_OF_HOST_MEMORY. On failure *out is zeroed. */
CLMG_API clmg_status clmg_spd_problem_create(const clmg_spd_problem_options *options,
                                             clmg_spd_problem *out, clmg_error *error);
/** Frees the arrays of problem and zeroes it (NULL and zeroed are fine). */
CLMG_API void clmg_spd_problem_free(clmg_spd_problem *problem);

/** "elasticity-p1", "elasticity-p2", "dg-diffusion", "q2-jump"; NULL for
 * other values. */
CLMG_API const char *clmg_spd_problem_name(clmg_spd_problem_kind kind);
/** Parses those names (exactly); 1 on success, 0 otherwise. */
CLMG_API int clmg_spd_problem_parse(const char *name, clmg_spd_problem_kind *kind);

#ifdef __cplusplus
}
#endif

#endif
