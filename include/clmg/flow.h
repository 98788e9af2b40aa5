/** @file
 * clmg flow benchmarks on triangle meshes: coarse meshes of the domains of
 * the Navier-Stokes applications of Bauer, Klement, Oberhuber and Zabka,
 * "Implementation of the Vanka-type multigrid solver for the finite element
 * approximation of the Navier-Stokes equations on GPU" (Comput. Phys.
 * Commun. 2016) -- the DFG channel around a cylinder of Schaefer and Turek,
 * "Benchmark computations of laminar flow around a cylinder" (1996), the
 * lid-driven cavity and the urban canopy (street canyon) of the paper's
 * Fig. 1 -- their inflow profiles, and quantities of interest of a discrete
 * Crouzeix-Raviart P1nc/P0 solution (clmg/stokes.h): drag and lift
 * coefficients, point values of pressure and velocity, and cell velocities
 * for output.
 * Host-only: functions report through a clmg_error. The meshes are 2D
 * triangle meshes (CLMG_CELL_SIMPLEX) that pass clmg_mesh_check, meant to be
 * refined uniformly by clmg_mesh_refine (midpoint subdivision keeps the
 * angles of straight-sided triangles, so the coarse angles bound the fine
 * ones). */
#ifndef CLMG_FLOW_H
#define CLMG_FLOW_H

#include "clmg/mesh.h"
#include "clmg/stokes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- meshes ---- */

/** Boundary tags of clmg_mesh_dfg_channel. */
enum {
  CLMG_DFG_INFLOW = 1,  /**< x = 0 */
  CLMG_DFG_OUTFLOW = 2, /**< x = 2.2 */
  CLMG_DFG_WALLS = 3,   /**< y = 0 and y = 0.41 */
  CLMG_DFG_CYLINDER = 4 /**< the circle, a CIRCLE shape */
};

/** The DFG 2D channel (Schaefer and Turek 1996): [0, 2.2] x [0, 0.41] minus
 * the disk of radius 0.05 centred at (0.2, 0.2). 348 triangles and 213
 * vertices, every quadrilateral below cut into two along the diagonal that
 * gives the larger smallest angle:
 *  - around the cylinder an O-grid of 16 x 2 quadrilaterals between the
 *    circle (16 vertices at multiples of 22.5 degrees, among them (0.25,
 *    0.2) and (0.15, 0.2)) and the square [0.1, 0.3]^2 (16 vertices 0.05
 *    apart), the middle ring 0.4 of the way out;
 *  - the rest of [0, 0.3] x [0, 0.41] and the wake [0.3, 0.7] in squares of
 *    0.05 (rows 0.055 high above y = 0.3): 8 rows;
 *  - a column of 12 triangles at [0.7, 0.775] joining each pair of rows
 *    into one;
 *  - [0.775, 2.2] in 4 rows (0.1, 0.1, 0.1, 0.11) and 10 columns growing
 *    geometrically from 0.1 to 0.19 wide.
 * The smallest angle is 27.2 degrees, and stays above 27 degrees on three
 * refinements (the projection of new cylinder vertices changes the cells
 * at the circle only slightly). Cylinder vertices lie on the circle to
 * rounding; the shape (tag 4, centre (0.2, 0.2), radius 0.05) makes
 * clmg_mesh_refine put new ones there too. Tags: CLMG_DFG_* above (edges
 * at the corners of the channel belong to the side they lie along). */
CLMG_API clmg_status clmg_mesh_dfg_channel(clmg_mesh *out, clmg_error *error);

/** Boundary tags of clmg_mesh_cavity. */
enum {
  CLMG_CAVITY_LID = 1,  /**< y = 1: both ends at y = 1 */
  CLMG_CAVITY_WALLS = 2 /**< x = 0, x = 1, y = 0 */
};

/** The lid-driven cavity: the unit square in n x n squares (1 <= n <=
 * 46339), each cut into 2 triangles along its diagonal from the lower
 * left to the upper right corner (clmg_mesh_box_simplices(2, n, 0)):
 * 2 n^2 triangles, (n + 1)^2 vertices at exactly (i / n, j / n). Tags:
 * CLMG_CAVITY_* above; the corners (0, 1) and (1, 1) are vertices of both
 * parts. */
CLMG_API clmg_status clmg_mesh_cavity(int n, clmg_mesh *out, clmg_error *error);

/** Boundary tags of clmg_mesh_canopy. */
enum {
  CLMG_CANOPY_INFLOW = 1,  /**< x = 0 */
  CLMG_CANOPY_OUTFLOW = 2, /**< x = 12 */
  CLMG_CANOPY_TOP = 3,     /**< y = 4 (free slip) */
  CLMG_CANOPY_TERRAIN = 5  /**< the ground y = 0 and the buildings' walls and roofs */
};

/** An urban canopy like Fig. 1 of Bauer, Klement, Oberhuber and Zabka, in
 * units of the building height H = 1: the channel [0, 12] x [0, 4] with
 * two buildings on the ground, [4, 5] x [0, 1] and [6, 7] x [0, 1], as
 * holes (a street canyon of width 1 between them). The 46 unit squares of
 * the domain, each cut into 2 triangles along its diagonal from the lower
 * left to the upper right corner: 92 triangles, 65 vertices at integer
 * coordinates, every boundary edge axis-parallel of length 1; smallest angle
 * 45 degrees. Tags: CLMG_CANOPY_* above (edges at the corners of the channel
 * belong to the side they lie along). */
CLMG_API clmg_status clmg_mesh_canopy(clmg_mesh *out, clmg_error *error);

/* ---- inflow profiles ---- */

/** The DFG inflow: 4 u_max y (0.41 - y) / 0.41^2 (the mean over the inflow
 * is 2/3 u_max; u_max = 0.3 gives the steady benchmark at Re = 20 with
 * viscosity 1e-3, 1.5 the unsteady one at Re = 100). */
CLMG_API double clmg_dfg_inflow_u(double y, double u_max);

/** The power law of the canopy's inflow (Bauer, Klement, Oberhuber and
 * Zabka, eq. 3): u_ref (y / y_ref)^alpha for y > 0, 0 for y <= 0; y_ref
 * must be > 0 (NaN otherwise). */
CLMG_API double clmg_canopy_inflow_u(double y, double u_ref, double y_ref, double alpha);

/* ---- quantities of interest of a P1nc/P0 solution ----
 * x holds 2 E + T values in the layout of clmg/stokes.h (u_x on the E
 * edges, u_y on the edges, p on the T triangles); edges must be
 * clmg_triangle_edges_create(mesh). */

/** Steady drag and lift coefficients of the boundary part body_tag (>= 1,
 * carried by at least one edge) by the volume integral (John, "Reference
 * values for drag and lift of a two-dimensional time-dependent flow around
 * a cylinder", 2004; Braack and Richter, "Solutions of 3D Navier-Stokes
 * benchmark problems with adaptive finite elements", 2006): with v_d the
 * P1nc function whose x component is 1 at the midpoints of the edges of
 * body_tag and 0 at every other edge (y component 0), and v_l the same in
 * y,
 *   F_D = -( nu (grad u_h, grad v_d) + (u_h . grad u_h, v_d) - (p_h, div v_d) ),
 *   F_L = the same with v_l,
 *   c_D = 2 F_D / (mean_velocity^2 diameter), c_L likewise (density 1).
 * (F_D, F_L) is the force that the fluid exerts on the body: from
 * -nu Laplace u + (u . grad) u + grad p = 0 tested with v, it is
 * -integral over the body's boundary of (nu grad u - p I) n with n the
 * unit normal out of the fluid domain (into the body), i.e. the traction on
 * the body. So the drag is positive for a flow in +x (the pressure is
 * higher in front of the body), and a pressure p0 on a wall below the fluid
 * pushes it down: F_L = -p0 times its length. The integrals are exact per
 * triangle (gradients are constant; the convective term, quadratic, by the
 * edge-midpoint rule); only triangles with an edge of body_tag contribute.
 * mean_velocity and diameter must be finite and > 0, viscosity finite and
 * >= 0. */
CLMG_API clmg_status clmg_flow_drag_lift(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                         const double *x, double viscosity, int32_t body_tag,
                                         double mean_velocity, double diameter,
                                         double *drag_coefficient, double *lift_coefficient,
                                         clmg_error *error);

/** The P0 pressure (x[2 num_edges + k]) at point (2 values) of the triangle
 * k that contains it (barycentric coordinates >= -1e-10); on an edge or a
 * vertex shared by several triangles, the mean of their pressures (so that
 * a vertex on the cylinder, such as the DFG points (0.15, 0.2) and (0.25,
 * 0.2), gets the mean of the cells around it). A point in no triangle
 * (outside the domain, or in a hole) is an error naming it. O(cells): a
 * search through every triangle. x holds 2 num_edges + num_cells values. */
CLMG_API clmg_status clmg_flow_pressure_at(const clmg_mesh *mesh, const double *x, size_t num_edges,
                                           const double *point, double *pressure,
                                           clmg_error *error);

/** The P1nc velocity u (2 values) at point (2 values): the linear function
 * of the triangle that contains it, found as for clmg_flow_pressure_at;
 * on an edge or vertex shared by several triangles, the mean of their
 * values (which differ there: P1nc functions are continuous at edge
 * midpoints only). A point in no triangle is an error naming it. */
CLMG_API clmg_status clmg_flow_sample_velocity(const clmg_mesh *mesh,
                                               const clmg_triangle_edges *edges, const double *x,
                                               const double *point, double *u, clmg_error *error);

/** The velocity of each triangle, 2 values per triangle (u_x, u_y) in
 * cell_u (caller-allocated, 2 num_cells): the mean of its 3 edge values,
 * which is the value of the P1nc function at the centroid (and its mean
 * over the triangle), for cell data in VTU output. */
CLMG_API clmg_status clmg_flow_cell_velocity(const clmg_mesh *mesh,
                                             const clmg_triangle_edges *edges, const double *x,
                                             double *cell_u, clmg_error *error);

/* ---- the benchmark cases ---- */

/** The flows of `clmg flow --case` and Python's clmg.flow. */
typedef enum clmg_flow_case {
  CLMG_FLOW_CAVITY = 0, /**< the lid-driven unit square, lid speed 1 (clmg_mesh_cavity(4)) */
  CLMG_FLOW_DFG1,       /**< DFG 2D-1: inflow peak 0.3, Re = 20, steady */
  CLMG_FLOW_DFG2,       /**< DFG 2D-2: inflow peak 1.5, Re = 100, time steps */
  CLMG_FLOW_DFG3, /**< DFG 2D-3: inflow peak 1.5 sin(pi t / 8), Re = 100 at the peak, t in [0, 8] */
  CLMG_FLOW_CANOPY, /**< the urban canopy: power-law inflow, free slip on top, time steps */
  CLMG_FLOW_GMSH    /**< a Gmsh mesh: walls, slip, outflow and inflow tags
                         (clmg_flow_case_create_gmsh) */
} clmg_flow_case;

/** At most this many wall (or slip, or outflow) tags for CLMG_FLOW_GMSH. */
enum { CLMG_FLOW_MAX_TAGS = 64 };

/** A case's scales and boundary conditions, made by clmg_flow_case_create; the
 * clmg_stokes_problem of clmg_flow_case_problem borrows it. */
typedef struct clmg_flow_case_setup {
  clmg_flow_case flow;  /**< the case */
  double reynolds;      /**< Re = mean_velocity length / viscosity */
  double viscosity;     /**< nu from Re and the scales */
  double u_peak;        /**< DFG: the inflow's peak; canopy: u_ref at the building height */
  double mean_velocity; /**< the velocity scale (DFG: 2/3 of the peak; else 1) */
  double length;        /**< the length scale (DFG: the cylinder's diameter; else 1) */
  int32_t inflow_tag;   /**< CLMG_FLOW_GMSH: the inflow's tag */
  int32_t dirichlet[CLMG_FLOW_MAX_TAGS + 1]; /**< the Dirichlet tags (none: every wall) */
  size_t num_dirichlet;                      /**< entries of dirichlet */
  int32_t slip[CLMG_FLOW_MAX_TAGS];          /**< the free-slip tags (the canopy's top) */
  size_t num_slip;                           /**< entries of slip */
  int inflow_parabolic;      /**< CLMG_FLOW_GMSH: 1 parabolic, 0 uniform inflow (u_peak) */
  double inflow_start[2];    /**< CLMG_FLOW_GMSH: one end of the straight inflow boundary */
  double inflow_tangent[2];  /**< the unit vector from inflow_start to the other end */
  double inflow_normal[2];   /**< the unit normal of the inflow boundary into the domain */
  double inflow_extent;      /**< the inflow boundary's length */
  int32_t body_tag;          /**< the tag of the body whose drag and lift are reported (0: none) */
  int has_pressure_points;   /**< 1: the pressure difference between pressure_points */
  double pressure_points[4]; /**< (x1, y1, x2, y2): p(x1, y1) - p(x2, y2) */
} clmg_flow_case_setup;

/** The inflow profile of a Gmsh case (clmg_flow_gmsh_options). */
typedef enum clmg_flow_inflow_profile {
  CLMG_FLOW_INFLOW_UNIFORM = 0, /**< the peak everywhere on the inflow boundary (mean: the peak) */
  CLMG_FLOW_INFLOW_PARABOLIC    /**< 4 peak s (L - s) / L^2 at distance s from an end of the
                                     inflow boundary of length L (mean: 2/3 of the peak) */
} clmg_flow_inflow_profile;

/** The boundary conditions and quantities of interest of a Gmsh case
 * (clmg_flow_case_create_gmsh). Every boundary tag of the mesh has exactly
 * one condition: no slip (walls), free slip (slip: zero normal velocity,
 * zero tangential traction), do-nothing (outflow) or the inflow. */
typedef struct clmg_flow_gmsh_options {
  const int32_t *walls;   /**< no-slip tags (u = 0) */
  size_t num_walls;       /**< entries of walls, 0 to CLMG_FLOW_MAX_TAGS */
  const int32_t *slip;    /**< free-slip tags */
  size_t num_slip;        /**< entries of slip, 0 to CLMG_FLOW_MAX_TAGS */
  const int32_t *outflow; /**< do-nothing tags ((nu grad u - p I) n = 0) */
  size_t num_outflow;     /**< entries of outflow, 0 to CLMG_FLOW_MAX_TAGS */
  int32_t inflow_tag;     /**< the inflow's tag (>= 1); its edges form one straight segment */
  clmg_flow_inflow_profile inflow_profile; /**< default CLMG_FLOW_INFLOW_UNIFORM */
  double inflow_peak;        /**< the profile's largest speed, finite and > 0 (default 1); the
                                  velocity is along the segment's normal into the domain */
  int32_t body_tag;          /**< the tag whose drag and lift coefficients are computed (0: none) */
  double reference_length;   /**< the length scale of Re and of the coefficients (default 1) */
  int has_pressure_points;   /**< 1: report p(x1, y1) - p(x2, y2) of pressure_points */
  double pressure_points[4]; /**< (x1, y1, x2, y2), points of the domain */
} clmg_flow_gmsh_options;

/** "cavity", "dfg1", "dfg2", "dfg3" or "canopy" into *flow (a .msh path is the caller's
 * CLMG_FLOW_GMSH); returns 0 for any other name. */
CLMG_API int clmg_flow_case_parse(const char *name, clmg_flow_case *flow);
/** The case's name ("cavity", ..., "gmsh"). */
CLMG_API const char *clmg_flow_case_name(clmg_flow_case flow);
/** The case's default Reynolds number: 20 for DFG 2D-1, else 100. */
CLMG_API double clmg_flow_case_reynolds(clmg_flow_case flow);
/** 1 where the case runs to a steady flow by default (not DFG 2D-2, 2D-3 and the canopy). */
CLMG_API int clmg_flow_case_steady(clmg_flow_case flow);
/** 1 for the DFG cases, which have drag, lift and a pressure difference
 * (clmg_flow_case_quantities). */
CLMG_API int clmg_flow_case_has_quantities(clmg_flow_case flow);

/** The case's scales and tags at Reynolds number reynolds (finite, > 0). walls
 * (num_walls of them, 1 to CLMG_FLOW_MAX_TAGS) and inflow_tag (>= 1) are read for
 * CLMG_FLOW_GMSH only (u = (1, 0) on the inflow, every other tag do-nothing;
 * clmg_flow_case_create_gmsh has every condition and checks the tags against
 * the mesh). Bad values are CLMG_ERROR_INVALID_ARGUMENT with a message. */
CLMG_API clmg_status clmg_flow_case_create(clmg_flow_case flow, double reynolds,
                                           const int32_t *walls, size_t num_walls,
                                           int32_t inflow_tag, clmg_flow_case_setup *setup,
                                           clmg_error *error);
/** The defaults of clmg_flow_gmsh_options: no tags, a uniform inflow of peak 1,
 * no body, reference length 1, no pressure points. */
CLMG_API void clmg_flow_gmsh_options_defaults(clmg_flow_gmsh_options *options);

/** A CLMG_FLOW_GMSH case on mesh (the coarse 2D mesh: clmg_flow_case_mesh)
 * at Reynolds number reynolds (finite, > 0): mean_velocity is the inflow
 * profile's mean (the peak, or 2/3 of it for the parabola), length the
 * reference length, viscosity mean_velocity length / reynolds. Refused with
 * CLMG_ERROR_INVALID_ARGUMENT and a message naming the tag: a tag of
 * options that no boundary edge of mesh carries, a tag in two of walls,
 * slip, outflow and inflow, a boundary tag of mesh in none of them, an
 * inflow boundary that is not one straight segment (a chain of edges with
 * two ends, every vertex on the line between them to 1e-8 of its length),
 * a peak or reference length that is not finite and > 0, or pressure points
 * that are not finite. The pressure points are looked up in
 * clmg_flow_case_quantities (a point outside the domain is an error there).
 * The setup copies what it needs from options and mesh (it borrows
 * neither). */
CLMG_API clmg_status clmg_flow_case_create_gmsh(const clmg_mesh *mesh, double reynolds,
                                                const clmg_flow_gmsh_options *options,
                                                clmg_flow_case_setup *setup, clmg_error *error);

/** 1 where clmg_flow_case_quantities has something to compute for setup: a DFG
 * case, or a Gmsh case with a body tag or pressure points. */
CLMG_API int clmg_flow_case_setup_has_quantities(const clmg_flow_case_setup *setup);

/** The case's coarse mesh (path: the Gmsh file of CLMG_FLOW_GMSH, else not read). */
CLMG_API clmg_status clmg_flow_case_mesh(clmg_flow_case flow, const char *path, clmg_mesh *out,
                                         clmg_error *error);
/** clmg_stokes_problem_defaults with the case's viscosity, boundary velocity and
 * Dirichlet and free-slip tags; the problem borrows setup (keep it alive). */
CLMG_API void clmg_flow_case_problem(const clmg_flow_case_setup *setup,
                                     clmg_stokes_problem *problem);
/** The quantities of interest of a solution x (clmg/stokes.h's layout) on
 * mesh: for the DFG cases the cylinder's drag and lift coefficients
 * (clmg_flow_drag_lift) and the pressure difference between (0.15, 0.2) and
 * (0.25, 0.2); for a Gmsh case those of its body tag (with its mean velocity
 * and reference length) and its pressure points, NaN for what it does not
 * have. A case without quantities (clmg_flow_case_setup_has_quantities) is
 * CLMG_ERROR_INVALID_ARGUMENT. */
CLMG_API clmg_status clmg_flow_case_quantities(const clmg_flow_case_setup *setup,
                                               const clmg_mesh *mesh,
                                               const clmg_triangle_edges *edges, const double *x,
                                               double *drag, double *lift,
                                               double *pressure_difference, clmg_error *error);

#ifdef __cplusplus
}
#endif

#endif
