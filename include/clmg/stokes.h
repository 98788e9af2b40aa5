/** @file
 * clmg Stokes (Oseen-step) discretisation on triangle meshes: the
 * nonconforming Crouzeix-Raviart P1nc velocity / P0 pressure pair
 * (Crouzeix and Raviart, "Conforming and nonconforming finite element
 * methods for solving the stationary Stokes equations", 1973), as used by
 * Bauer, Klement, Oberhuber and Zabka, "Implementation of the Vanka-type
 * multigrid solver for the finite element approximation of the
 * Navier-Stokes equations on GPU" (Comput. Phys. Commun. 2016): the edges
 * of a triangle mesh, the host assembly of the saddle-point system (the
 * reference for device code), the Dirichlet marks, the unknowns of each
 * triangle for Vanka smoothing, the grid transfers between uniformly
 * refined levels and L2 errors against an exact solution.
 * Host-only: functions report through a clmg_error. Meshes must be 2D
 * triangle meshes (CLMG_CELL_SIMPLEX, dim 2) with positively oriented
 * cells and every boundary edge listed as a boundary face. */
#ifndef CLMG_STOKES_H
#define CLMG_STOKES_H

#include "clmg/mesh.h"
#include "clmg/multigrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Edges of a 2D triangle mesh. They are numbered like the degree-2 nodes
 * of clmg_mesh_lagrange_nodes (edge e is node num_vertices + e), so the
 * midpoint of edge e is vertex num_vertices + e of clmg_mesh_refine(mesh).
 * Every array is malloc'ed; clmg_triangle_edges_free releases them. */
typedef struct clmg_triangle_edges {
  size_t num_edges;       /**< edges of the mesh */
  int32_t *edge_vertices; /**< 2 per edge, the smaller vertex number first */
  int32_t *edge_cells;    /**< 2 per edge: the triangles on its two sides (the smaller number
                             first); the second is -1 on the boundary */
  int32_t *cell_edges;    /**< 3 per triangle: entry k is the edge opposite vertex k */
  int32_t *edge_tag; /**< per edge: the boundary tag (from the mesh's boundary faces), 0 inside */
} clmg_triangle_edges;

/** The edges of mesh. Fails (CLMG_ERROR_INVALID_ARGUMENT, naming the cell
 * or edge) unless mesh is a 2D triangle mesh with vertex indices in range,
 * positive orientation, every vertex in a cell, at most two triangles per
 * edge, and the boundary faces exactly the edges of one triangle. On
 * failure *out is zeroed. */
CLMG_API clmg_status clmg_triangle_edges_create(const clmg_mesh *mesh, clmg_triangle_edges *out,
                                                clmg_error *error);
/** Frees the arrays and zeroes edges (NULL and zeroed structs are fine). */
CLMG_API void clmg_triangle_edges_free(clmg_triangle_edges *edges);

/** The Crouzeix-Raviart P1nc/P0 system. Unknowns in this order:
 * u_x on the edges (num_edges), u_y on the edges (num_edges), p on the
 * triangles (num_cells): 2 * num_edges + num_cells of them
 * (clmg_stokes_num_unknowns). The P1nc basis function phi_e of edge e is 1
 * at the midpoint of e and 0 at the other two edge midpoints of each
 * triangle containing e (on a triangle, the one of the edge opposite
 * vertex i is 1 - 2 lambda_i, lambda the barycentric coordinates).
 * Equations, for all test functions v (velocity) and q (pressure):
 *   nu (grad u, grad v) + c (u, v)_lumped + n_h(w; u, v) - (p, div v)
 *       = (f, v) + c (u_old, v)_lumped,
 *   -(div u, q) = 0,
 * i.e. the saddle-point matrix
 *   [A 0 B_x^T; 0 A B_y^T; B_x B_y 0]
 * with A_{ee'} = nu (grad phi_e, grad phi_e') + c M_e delta_{ee'} + N_{ee'}
 * and B_{K,e} = -integral over K of dphi_e/dx (resp. /dy)
 *             = -(length of e) * (outward normal component of e w.r.t. K).
 * The lumped P1nc mass M_e gets |K|/3 from each triangle K of e (for P1nc
 * the edge-midpoint rule is exact for products of basis functions, so
 * this is the exact mass matrix). N is the convection by the wind w
 * (Bauer, Klement, Oberhuber and Zabka's eq. 4: u^{n-1} . grad u^n), by
 * the upwind scheme of Schieweck and Tobiska, "An optimal order error
 * estimate for an upwind discretization of the Navier-Stokes equations"
 * (1996), on the lumping regions: Omega_e is the union, over the
 * triangles K of e, of the subtriangle of K spanned by e and K's
 * barycentre; Gamma_ee' (e, e' edges of K) the segment from K's barycentre
 * to the vertex e and e' share, n_ee' its unit normal out of Omega_e,
 * F_ee' = integral over Gamma_ee' of w_h . n_ee' (w_h the P1nc wind on K,
 * exact by the midpoint rule), and
 *   (N u)_e = sum over K of e, sum over the other edges e' of K of
 *             F_ee' (1 - lambda_ee') (u_e' - u_e),
 * lambda_ee' = 1 for F_ee' >= 0 and 0 otherwise (full upwind:
 * coefficients min(F_ee', 0); N has zero row sums, a nonnegative diagonal
 * and nonpositive off-diagonals) or Samarskij's weighting (1/2 + r)/(1 + r)
 * for r = F_ee' / nu >= 0, 1/(2 (1 - r)) for r < 0 (close to central
 * differences where the local Peclet number is small), or the same
 * weighting with r = delta F_ee' / nu for an upwind parameter delta >= 0
 * (the weighted upwind of Schieweck and Turek; FEATFLOW's UPSAM): delta 1
 * is Samarskij's, delta 0 central differences (lambda = 1/2, second order
 * but without upwind stability), delta between them a blend that tends to
 * central differences as h -> 0 (F_ee' = O(h |w|)). A boundary edge
 * adds no flux term of its own, except where the wind flows in through a
 * natural edge e: there N adds -1/2 min(F_e, 0) to e's diagonal (F_e =
 * |e| w_e . n_e, the flux out; the directional do-nothing condition of
 * Braack and Mucha), which cancels the kinetic energy the convection would
 * feed in (the backflow instability); outflow is untouched. N is consistent with the integral of
 * (w . grad u) v in the weak sense only (row by row it is not, even for a
 * linear u: lib/flow/stokes.c). The matrix is symmetric without wind, and
 * not with one.
 * Edges of tags without Dirichlet velocity or free slip get the natural
 * ("do-nothing") condition nu du/dn - p n = 0; free-slip edges (the
 * paper's eq. 2e: u . n = 0 and (nu grad u . n) . t = 0) must be parallel
 * to an axis: the normal component is a Dirichlet unknown of value 0, the
 * tangential one natural. */
enum {
  CLMG_STOKES_UPWIND_FULL = 0,      /**< first-order full upwind (the default) */
  CLMG_STOKES_UPWIND_SAMARSKIJ = 1, /**< Samarskij's weighting by the local Peclet number */
  CLMG_STOKES_UPWIND_WEIGHTED = 2   /**< Samarskij's weighting with r = upwind_parameter F / nu:
                                       0 central differences, 1 CLMG_STOKES_UPWIND_SAMARSKIJ */
};

/** The Oseen-step problem on a triangle mesh (the system is described above); fill it
 * with clmg_stokes_problem_defaults. */
typedef struct clmg_stokes_problem {
  double viscosity; /**< nu >= 0, finite (nu = 0 only with c > 0: a pure mass problem) */
  double reaction;  /**< c >= 0, finite: the mass term (e.g. 1/tau of a time step) */
  void (*force)(const double *x, double *f, void *data); /**< f(x) (2 values); NULL: zero */
  void *force_data;                                      /**< passed to force */
  /** NULL or 2*num_edges values (u_x then u_y on edges): adds
   * c * lumped mass * previous to the right-hand side */
  const double *previous;
  /** Dirichlet value u (2 values) at point x of the boundary part `tag`;
   * NULL: zero. Not called on free-slip edges. */
  void (*boundary_velocity)(const double *x, int32_t tag, double *u, void *data);
  void *boundary_data; /**< passed to boundary_velocity */
  /** Boundary tags with Dirichlet velocity; 0 tags (the array may then be
   * NULL): every boundary edge whose tag is not a free-slip tag. Edges of
   * other tags get the natural condition; a list of tags that no edge
   * carries (e.g. {0}: tags are >= 1) makes the whole boundary natural
   * (but for free-slip tags). */
  const int32_t *dirichlet_tags;
  size_t num_dirichlet_tags; /**< entries of dirichlet_tags */
  /** The convecting velocity w (e.g. the previous time step's or Picard
   * iterate's velocity): NULL (no convection: the Stokes problem) or
   * 2*num_edges finite values, w_x then w_y on the edges. */
  const double *wind;
  /** The upwind scheme of the convection: CLMG_STOKES_UPWIND_FULL,
   * CLMG_STOKES_UPWIND_SAMARSKIJ or CLMG_STOKES_UPWIND_WEIGHTED. */
  int upwind;
  /** CLMG_STOKES_UPWIND_WEIGHTED: delta >= 0, finite (the local Peclet number
   * r = delta F / nu; 0: central differences); not read by the others
   * (default 1). */
  double upwind_parameter;
  /** Boundary tags with free slip (no tag in dirichlet_tags too; the array
   * may be NULL when there are none). Their edges must be horizontal or
   * vertical (relative tolerance 1e-12). */
  const int32_t *slip_tags;
  size_t num_slip_tags; /**< entries of slip_tags */
  /** 1: the Newton linearisation of the convection at the wind w (a steady
   * flow's Newton step): with N(w) the convection matrix above, the
   * derivative D(w) of N(w) w by w less N(w) is added to the matrix and
   * D(w) w to the right-hand side, so the system solves
   * (N(w) + D(w)) u + ... = f + D(w) w, whose fixed point u = w is the
   * Oseen one's, its matrix the exact Jacobian of the discrete system.
   * D differentiates the upwind coefficients F (1 - lambda(F)) by the
   * fluxes F_ee', which depend on both wind components on all three edges
   * of a triangle, and the do-nothing term (full upwind: not differentiable
   * at F = 0, taken as its one-sided slope). Dirichlet rows and columns are
   * eliminated as for the other couplings. The pattern then also couples
   * u_x and u_y on the edges of each triangle (with or without a wind);
   * 0 (default): not. */
  int newton;
} clmg_stokes_problem;

/** nu = 1, c = 0, no force, no previous velocity, no wind (full upwind
 * selected, upwind parameter 1), Dirichlet velocity 0 on the whole boundary, no free slip. */
CLMG_API void clmg_stokes_problem_defaults(clmg_stokes_problem *problem);

/** 2 * num_edges + num_cells. */
static inline size_t clmg_stokes_num_unknowns(const clmg_mesh *mesh,
                                              const clmg_triangle_edges *edges) {
  return 2 * edges->num_edges + mesh->num_cells;
}

/** Host assembly (the test oracle): a is (2E+T) x (2E+T) CSR with sorted
 * columns (malloc'ed; overwritten without being freed, zeroed on failure),
 * b (2E+T doubles) is caller-allocated. problem NULL: the defaults.
 * Dirichlet velocity unknowns (edge midpoints on Dirichlet tags, both
 * components, value = boundary_velocity at the edge midpoint; the normal
 * component on free-slip tags, value 0): their row is the identity row
 * (diagonal 1, nothing else), b = the value, and their column entries in
 * other rows are removed with the value moved to those rows' right-hand
 * sides (so a stays symmetric when there is no wind). Every other row
 * keeps the pattern of the couplings (entries that happen to be 0, such as
 * B entries of an axis-parallel edge or convection couplings without flux,
 * stay as explicit zeros): the pattern depends on the mesh and the
 * Dirichlet and free-slip tags (and the newton flag) only, not on the wind,
 * the coefficients or the data, so clmg_stokes_update_values_host can
 * refill it.
 * The force is integrated with the edge-midpoint rule per triangle (exact
 * for quadratics: (f, phi_e)_K = |K|/3 f(m_e)).
 * With every boundary edge Dirichlet (the default) the pressure is
 * determined only up to a constant: a is singular, with the constant
 * pressure (0 velocity) in its kernel; b is compatible when the boundary
 * data has zero net flux. edges must be clmg_triangle_edges_create(mesh).
 * A free-slip edge that is not axis-parallel fails, naming the edge. */
CLMG_API clmg_status clmg_stokes_assemble_host(const clmg_mesh *mesh,
                                               const clmg_triangle_edges *edges,
                                               const clmg_stokes_problem *problem, clmg_csr *a,
                                               double *b, clmg_error *error);

/** The per-time-step refill: the values (clmg_csr_nnz(a) doubles, in the
 * order of a->val; values may be a->val itself) and b (2E+T doubles) of
 * the matrix that clmg_stokes_assemble_host gives problem, for a matrix a
 * it assembled on the same mesh and edges with the same Dirichlet and
 * free-slip tags and newton flag (the wind, previous velocity, coefficients, force and
 * boundary values may differ, a wind may come or go). Equal bit for bit to
 * a fresh assembly, without rebuilding the pattern. a's pattern is checked:
 * an entry missing or one that is no coupling of problem fails, naming the
 * entry. On failure values and b are left partly written. */
CLMG_API clmg_status clmg_stokes_update_values_host(const clmg_mesh *mesh,
                                                    const clmg_triangle_edges *edges,
                                                    const clmg_stokes_problem *problem,
                                                    const clmg_csr *a, double *values, double *b,
                                                    clmg_error *error);

/** Which unknowns are Dirichlet (1) or free (0): 2E+T flags in *mask
 * (malloc'ed; pressures are never Dirichlet): both components on Dirichlet
 * tags, the normal component on free-slip tags. problem NULL: the
 * defaults. */
CLMG_API clmg_status clmg_stokes_dirichlet_mask(const clmg_mesh *mesh,
                                                const clmg_triangle_edges *edges,
                                                const clmg_stokes_problem *problem, uint8_t **mask,
                                                clmg_error *error);

/** The 7 unknowns of each triangle for Vanka smoothing: u_x of its 3 edges
 * (in cell_edges order), u_y of its 3 edges, its pressure: 7 * num_cells
 * int32 indices into the system's unknowns (malloc'ed). */
CLMG_API clmg_status clmg_stokes_cell_unknowns(const clmg_mesh *mesh,
                                               const clmg_triangle_edges *edges,
                                               int32_t **cell_unknowns, clmg_error *error);

/** The interpolant of a velocity u(x) (2 values) and pressure p(x) into x
 * (2E+T values, caller-allocated): velocity at the edge midpoints (exact
 * for P1nc on linear fields), pressure at the centroids (the cell mean of a
 * linear pressure). exact_p NULL: pressure 0; exact_u NULL: velocity 0. */
CLMG_API clmg_status clmg_stokes_interpolate(
    const clmg_mesh *mesh, const clmg_triangle_edges *edges,
    void (*exact_u)(const double *x, double *u, void *data),
    double (*exact_p)(const double *x, void *data), void *data, double *x, clmg_error *error);

/** Prolongation from the system on `coarse` to the system on `fine` =
 * clmg_mesh_refine(coarse) (the child numbering of clmg_mesh_refine is what
 * it relies on; it is checked): block-diagonal (u_x, u_y, p),
 * (2E_f+T_f) x (2E_c+T_c), malloc'ed (zeroed on failure).
 * Velocity: a fine edge inside a coarse triangle takes the coarse P1nc
 * function of that triangle at its midpoint; a fine edge lying on a coarse
 * edge takes the average of the values of the (one or two) coarse
 * triangles adjacent to that coarse edge at the fine midpoint (both equal
 * for a globally linear field, so linear velocity fields are reproduced
 * exactly); then each corner child's inner edge (the edge it shares with
 * the middle child) gets a velocity along its normal that makes the
 * child's divergence (its flux) a quarter of the coarse cell's, so every
 * child has the divergence of its parent and a discretely
 * divergence-free coarse velocity stays so on the fine mesh (the middle
 * child follows from the others). The averaging alone keeps only the
 * coarse cell's total flux; with the correction V-cycles lose much less
 * speed as levels are added (lib/flow/stokes_multigrid.c). Linear fields
 * need no correction. Rows of edges not inside a coarse cell have weights
 * that are exact multiples of 1/4. Pressure: injection (child triangle
 * takes its parent's value).
 * problem may be NULL (no Dirichlet DOFs); otherwise (only its Dirichlet
 * and free-slip tags are read) rows of fine Dirichlet unknowns are empty
 * and columns of coarse Dirichlet unknowns are dropped (corrections vanish
 * there), component by component as clmg_stokes_dirichlet_mask marks
 * them (free slip: the normal component only; a free-slip edge off the
 * axes fails as in clmg_stokes_assemble_host).
 * Restriction is its transpose (clmg_csr_transpose). */
CLMG_API clmg_status clmg_stokes_prolongation_host(const clmg_mesh *coarse,
                                                   const clmg_triangle_edges *coarse_edges,
                                                   const clmg_mesh *fine,
                                                   const clmg_triangle_edges *fine_edges,
                                                   const clmg_stokes_problem *problem, clmg_csr *p,
                                                   clmg_error *error);

/** L2 errors of a discrete solution x (2E+T values) against exact velocity
 * u(x) (2 values) and pressure p(x): velocity by the 7-point rule of
 * Radon on each triangle (exact for polynomials of degree 5: for the
 * square of the error of a P1nc field against a linear or quadratic exact
 * velocity, and accurate beyond), pressure the same way after subtracting from
 * both the discrete and exact pressure their mean over the domain (so a
 * pressure known up to a constant can be compared). exact_p may be NULL
 * (then *p_error = 0). */
CLMG_API clmg_status clmg_stokes_l2_errors(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                           const double *x,
                                           void (*exact_u)(const double *x, double *u, void *data),
                                           double (*exact_p)(const double *x, void *data),
                                           void *data, double *u_error, double *p_error,
                                           clmg_error *error);

/** The multigrid hierarchy (Bauer, Klement, Oberhuber and Zabka, section 3):
 * levels 0 (a copy of the coarse mesh) to num_levels - 1 (the finest),
 * each refined from the one before, the system rediscretised on each:
 * a[l] its matrix, p[l] (l >= 1) the prolongation from level l - 1 (p[0]
 * empty), cell_unknowns[l] the 7 unknowns of each triangle, b the finest
 * right-hand side. problem's previous velocity, if any, is the finest
 * level's (coarse levels assemble without it); its wind, if any, is the
 * finest level's, restricted to the coarser ones
 * (clmg_stokes_restrict_velocity); NULL: the defaults. */
typedef struct clmg_stokes_hierarchy {
  int num_levels;             /**< levels, the coarse mesh's included */
  clmg_mesh *meshes;          /**< num_levels meshes; meshes[0] a copy of the coarse one */
  clmg_triangle_edges *edges; /**< num_levels: each mesh's edges */
  clmg_csr *a;                /**< num_levels: each level's system matrix */
  clmg_csr *p;                /**< num_levels: p[l] from level l - 1 to l; p[0] empty */
  int32_t **cell_unknowns;    /**< num_levels arrays: the 7 unknowns of each triangle */
  double *b;                  /**< the finest level's right-hand side */
} clmg_stokes_hierarchy;

/** The velocity (2 E_c values: x then y components) of the coarse mesh from
 * that of its refinement (2 E_f values): each coarse edge takes the mean
 * of its two halves (exact for linear fields). The coarse levels' winds. */
CLMG_API void clmg_stokes_restrict_velocity(const clmg_mesh *coarse,
                                            const clmg_triangle_edges *coarse_edges,
                                            const clmg_triangle_edges *fine_edges,
                                            const double *fine, double *coarse_velocity);

/** Builds the hierarchy described at clmg_stokes_hierarchy on the host: num_levels (1 to
 * 16) levels refined from the coarse triangle mesh, problem NULL: the defaults. out is
 * overwritten; on failure it is zero and error says why. */
CLMG_API clmg_status clmg_stokes_hierarchy_build(const clmg_mesh *coarse, int num_levels,
                                                 const clmg_stokes_problem *problem,
                                                 clmg_stokes_hierarchy *out, clmg_error *error);
/** Frees every level's mesh, edges, matrices and cell unknowns and the right-hand side,
 * and zeroes the hierarchy; NULL is fine. */
CLMG_API void clmg_stokes_hierarchy_free(clmg_stokes_hierarchy *hierarchy);

/** The engine on the hierarchy: a Vanka smoother (vanka options; NULL:
 * defaults) on every level but the coarsest, the smoother_factory of
 * mg_options replaced. mg_options NULL: the engine's defaults with
 * F(2,2)-cycles, whose rate per cycle holds as levels are added, as does
 * the variable V-cycle's (smoothing_growth 2), where plain V-cycles' does
 * not (lib/flow/stokes_multigrid.c gives the figures). The coarsest level is solved directly up to
 * 1,000 unknowns, beyond by 16 Vanka steps; its matrix gets 1e-8 times an estimate of the pressure
 * Schur complement's diagonal on its pressure diagonal, so that a flow enclosed by Dirichlet walls
 * (pressure fixed only up to a constant) still has a direct solve. The matrices are made from
 * device arrays, so clmg_stokes_multigrid_update can give them new values.
 * The hierarchy must outlive the multigrid: its Vanka smoothers read the
 * hierarchy's matrices at every setup. A failure's message is the
 * context's. */
CLMG_API clmg_status clmg_stokes_multigrid_create(clmg_context *context,
                                                  const clmg_stokes_hierarchy *hierarchy,
                                                  const clmg_vanka_options *vanka,
                                                  const clmg_multigrid_options *mg_options,
                                                  clmg_multigrid **multigrid);

/** New values in the hierarchy's matrices, the patterns kept (a new time
 * step or Oseen iteration: clmg_stokes_update_values_host on every level),
 * into the multigrid made from it: every level's matrix updated on the
 * device, then clmg_multigrid_refresh (the Vanka smoothers' values and
 * stored inverses, the coarse solve). Much cheaper than a new
 * clmg_stokes_multigrid_create: no colouring, no layout, no new patterns. */
CLMG_API clmg_status clmg_stokes_multigrid_update(clmg_multigrid *multigrid,
                                                  const clmg_stokes_hierarchy *hierarchy);

/** The systems refilled on the device (Bauer, Klement, Oberhuber and Zabka, section
 * 5.3): every level's matrix values, and the finest right-hand side, for a new
 * wind and previous velocity, made on the device: the parts that do not
 * change (viscosity, mass, pressure coupling, Dirichlet rows and their
 * loads, the force) are the hierarchy's assembly, stored once; an update
 * copies them and adds the upwinded convection of the wind, triangle by
 * triangle in colours that share no edge, the coarser levels' winds
 * restricted on the device as clmg_stokes_restrict_velocity does, and the
 * time term c M u_old. The results equal clmg_stokes_update_values_host's
 * up to rounding (the sums run in another order). Needs double precision
 * on the device. */
typedef struct clmg_stokes_assembler clmg_stokes_assembler;

/** h: as clmg_stokes_hierarchy_build made it with `problem` (its matrices
 * and b not refilled since; they are read here, not kept), whose wind and
 * previous velocity must be NULL: each update gives them. The Dirichlet
 * values are those of the build (boundary data fixed for the run). A
 * failure's message is the context's. */
CLMG_API clmg_status clmg_stokes_assembler_create(clmg_context *context,
                                                  const clmg_stokes_hierarchy *h,
                                                  const clmg_stokes_problem *problem,
                                                  clmg_stokes_assembler **assembler);
/** Refills every level: wind (the convecting velocity on the finest edges,
 * u_x then u_y: a double device vector of at least 2 E entries, e.g. a view
 * of a solution's velocity; NULL: no convection) and previous (the same
 * shape, the time term's velocity; NULL: none). Queued on the context's
 * queue: no host synchronisation. */
CLMG_API clmg_status clmg_stokes_assembler_update(clmg_stokes_assembler *assembler,
                                                  const clmg_vector *wind,
                                                  const clmg_vector *previous);
/** With a hierarchy built with the problem's newton flag: whether the
 * next updates add the Newton term (1, the default for such a hierarchy)
 * or give the Oseen system in the Newton pattern (0: a Picard step, its
 * Newton entries 0). Without the flag, 1 fails (no Newton pattern). */
CLMG_API clmg_status clmg_stokes_assembler_set_newton(clmg_stokes_assembler *assembler, int on);
/** The Dirichlet values of the next updates: the build's times scale (1
 * at creation), for boundary data that varies in time by a common factor
 * (an inflow U(t) times a fixed profile): the Dirichlet rows' values and
 * the terms their columns move to the right-hand side scale with it, the
 * force's part of the right-hand side does not. Fails for a scale that is
 * not finite. */
CLMG_API clmg_status clmg_stokes_assembler_set_boundary_scale(clmg_stokes_assembler *assembler,
                                                              double scale);
/** The values of level `level` (0 the coarsest) in the CSR order of the
 * hierarchy's matrix (doubles), and the finest right-hand side; owned by
 * the assembler (NULL for a level out of range). */
CLMG_API const clmg_vector *clmg_stokes_assembler_values(const clmg_stokes_assembler *assembler,
                                                         int level);
/** The finest level's right-hand side after the last update (doubles, the hierarchy's b
 * refilled); owned by the assembler. NULL for NULL. */
CLMG_API const clmg_vector *clmg_stokes_assembler_rhs(const clmg_stokes_assembler *assembler);
/** The fewest bytes an update must move (the stored values and right-hand
 * side copied, the tables, the wind once, each convection term read and
 * written), for the benchmark's ratio to the copy bandwidth. */
CLMG_API double clmg_stokes_assembler_bytes(const clmg_stokes_assembler *assembler, int with_wind,
                                            int with_previous);
/** Frees the assembler's device arrays (a multigrid made on its values must be destroyed
 * first). NULL does nothing. */
CLMG_API void clmg_stokes_assembler_destroy(clmg_stokes_assembler *assembler);

/** clmg_stokes_multigrid_create on the assembler's values: the Vanka
 * smoothers copy them at every setup (clmg_smoother_vanka_device), and
 * clmg_stokes_multigrid_update_device passes new ones on without the host.
 * The assembler and the hierarchy must outlive the multigrid. */
CLMG_API clmg_status clmg_stokes_multigrid_create_device(clmg_context *context,
                                                         const clmg_stokes_hierarchy *hierarchy,
                                                         const clmg_stokes_assembler *assembler,
                                                         const clmg_vanka_options *vanka,
                                                         const clmg_multigrid_options *mg_options,
                                                         clmg_multigrid **multigrid);
/** After clmg_stokes_assembler_update: every level's matrix takes the
 * assembler's values on the device (the coarsest, which carries the
 * pressure shift, through the host: it is small), then
 * clmg_multigrid_refresh. */
CLMG_API clmg_status clmg_stokes_multigrid_update_device(clmg_multigrid *multigrid,
                                                         const clmg_stokes_hierarchy *hierarchy,
                                                         const clmg_stokes_assembler *assembler);

#ifdef __cplusplus
}
#endif

#endif
