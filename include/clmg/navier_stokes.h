/** @file
 * clmg incompressible Navier-Stokes on triangle meshes: the semi-implicit
 * Oseen scheme of Bauer, Klement, Oberhuber and Zabka, "Implementation of
 * the Vanka-type multigrid solver for the finite element approximation of
 * the Navier-Stokes equations on GPU" (eq. 4), with Crouzeix-Raviart
 * P1nc/P0 elements (clmg/stokes.h), upwinded convection and a Vanka
 * multigrid for every linear system:
 *   (u^n - u^{n-1})/tau + u^{n-1}.grad u^n - nu Laplace u^n + grad p^n = f,
 *   div u^n = 0,
 * a time step per linear solve (backward Euler, first order); or, at second
 * order, Crank-Nicolson, the fractional-step theta scheme or BDF2 as in
 * Turek's FEATFLOW (Turek, "Efficient Solvers for Incompressible Flow
 * Problems", 1999): a theta step of length k and weight theta solves
 *   M (u^n - u^{n-1})/k + theta A(w) u^n + grad p^n
 *       = f - (1 - theta) A(u^{n-1}) u^{n-1},   div u^n = 0,
 * A(w) = nu Laplace + the convection by w, the pressure fully implicit, the
 * explicit part one product of the matrix assembled with the wind u^{n-1}
 * (the same device assembly), and the implicit convection linearised with
 * the extrapolated wind w = u^{n-1} + k/k_{n-1} (u^{n-1} - u^{n-2}), then
 * (clmg_flow_options.step_iterations) a Picard iteration with the new
 * velocity as wind: with the extrapolated wind alone Crank-Nicolson's
 * step-to-step oscillation grows where the step is large against the wall
 * cells (docs/flow.md). Crank-Nicolson is
 * theta = 1/2; the fractional-step theta scheme three steps of lengths
 * theta k, (1 - 2 theta) k, theta k, theta = 1 - 1/sqrt 2, of weights
 * alpha, 1 - alpha, alpha, alpha = (1 - 2 theta)/(1 - theta), whose
 * implicit operators are all M/k + alpha theta A (one matrix's mass);
 * BDF2 (3 u^n - 4 u^{n-1} + u^{n-2})/(2 k) + A(w) u^n + grad p^n = f, its
 * first step a theta step of weight 2/3 (the same mass term).
 * Or a steady flow by Oseen (Picard) iteration: the same system without
 * the time term, the wind the last iterate's velocity, to a nonlinear
 * residual tolerance; or (clmg_flow_options.linearisation) by Newton
 * steps, the exact Jacobian of the discrete system at the last iterate
 * (clmg_stokes_problem.newton), once Picard steps have brought the
 * residual to clmg_flow_options.newton_start; GMRES then solves the Newton
 * system preconditioned by the multigrid of the Oseen systems.
 *
 * The coarse levels' winds are the finest velocity restricted edge by edge
 * (a coarse edge takes the mean of its two fine halves), as the paper
 * restricts the velocity to update every level's matrix. Every linear
 * system is solved by GMRES preconditioned by one multigrid cycle
 * (clmg_stokes_multigrid_create), its true residual checked. */
#ifndef CLMG_NAVIER_STOKES_H
#define CLMG_NAVIER_STOKES_H

#include "clmg/flow.h"
#include "clmg/stokes.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The time stepping of an unsteady clmg_flow_solve. */
typedef enum clmg_flow_time_scheme {
  CLMG_FLOW_BACKWARD_EULER = 0, /**< first order, wind u^{n-1} (the default) */
  CLMG_FLOW_CRANK_NICOLSON = 1, /**< theta = 1/2: second order */
  CLMG_FLOW_FS_THETA = 2,       /**< the fractional-step theta scheme: three steps of one */
  CLMG_FLOW_BDF2 = 3            /**< the second-order backward differences */
} clmg_flow_time_scheme;

/** The name of a time scheme ("backward-euler", "crank-nicolson", "fs-theta", "bdf2"), or
 * "unknown". */
CLMG_API const char *clmg_flow_time_scheme_name(clmg_flow_time_scheme scheme);
/** The scheme of a name clmg_flow_time_scheme_name gives; 0 (and *scheme unchanged) for
 * another text or NULL. */
CLMG_API int clmg_flow_time_scheme_parse(const char *name, clmg_flow_time_scheme *scheme);

/** The linearisation of a steady clmg_flow_solve's convection. */
typedef enum clmg_flow_linearisation {
  CLMG_FLOW_PICARD = 0, /**< Oseen (Picard) steps: the wind is the last iterate (the default) */
  /** Newton steps: the exact Jacobian of the discrete (upwinded) system
   * (clmg_stokes_problem.newton), after Picard steps to newton_start
   * (docs/flow.md) */
  CLMG_FLOW_NEWTON = 1
} clmg_flow_linearisation;

/** The name of a linearisation ("picard", "newton"), or "unknown". */
CLMG_API const char *clmg_flow_linearisation_name(clmg_flow_linearisation linearisation);
/** The linearisation of a name clmg_flow_linearisation_name gives; 0 (and *linearisation
 * unchanged) for another text or NULL. */
CLMG_API int clmg_flow_linearisation_parse(const char *name,
                                           clmg_flow_linearisation *linearisation);

/** How clmg_flow_solve runs; fill it with clmg_flow_options_defaults. */
typedef struct clmg_flow_options {
  int levels;       /**< mesh levels: the coarse mesh refined levels - 1 times (default 4) */
  int steady;       /**< 1: Oseen iteration to a steady flow (default); 0: time steps */
  double time_step; /**< tau (unsteady; default 0.01) */
  int steps;        /**< time steps (unsteady; default 100) */
  double nonlinear_tolerance;       /**< steady: ||b(u) - A(u) x|| <= tol ||b(u)|| (default 1e-8) */
  int max_nonlinear;                /**< steady: Oseen iterations at most (default 50) */
  double linear_tolerance;          /**< each linear solve (default 1e-8 unsteady; steady: 1e-2
                                       relative to the step's initial residual, at least the
                                       nonlinear tolerance) */
  int max_linear;                   /**< GMRES iterations per linear solve at most (default 100) */
  int restart;                      /**< GMRES(m): Krylov vectors before a restart (default 30) */
  clmg_vanka_options vanka;         /**< the Vanka smoother on every level (default SI, omega 1) */
  clmg_multigrid_options multigrid; /**< defaults: F(2,2)-cycles, as clmg_stokes_multigrid_create */
  clmg_flow_time_scheme time_scheme; /**< unsteady: the time stepping (default backward Euler) */
  /** -1 (default): the problem's upwinding; else a CLMG_STOKES_UPWIND_ value in its place */
  int upwind;
  /** with upwind CLMG_STOKES_UPWIND_WEIGHTED: its parameter (default 1) */
  double upwind_parameter;
  /** unsteady: the Dirichlet values at time t are the problem's times
   * boundary_scale(t, boundary_scale_data) (an inflow U(t) with a fixed
   * profile; the start is the Dirichlet values at t = 0, zero elsewhere);
   * NULL: 1 */
  double (*boundary_scale)(double time, void *data);
  void *boundary_scale_data; /**< passed to boundary_scale */
  /** unsteady second-order schemes: linear solves per time step (per step of
   * the fractional-step theta scheme), the first with the extrapolated wind,
   * each further one a Picard iteration with the velocity of the solve
   * before as wind; 0 (default): the scheme's, 2 for Crank-Nicolson and the
   * fractional-step theta scheme, 1 for BDF2 (with one solve per step their
   * step-to-step oscillation can grow where the time step is large against
   * the mesh: docs/flow.md); 1 to 100: that many; backward Euler always 1 */
  int step_iterations;
  /** steady: Oseen (Picard, the default) or Newton steps; the nonlinear
   * residual is the Oseen system's either way (the same fixed point).
   * Unsteady runs take Picard only (CLMG_FLOW_NEWTON is refused there). */
  clmg_flow_linearisation linearisation;
  /** steady Newton: Picard steps until the nonlinear residual is at most
   * this, then Newton steps (default 1e-3; 0: Picard throughout); a
   * Newton step that does not reduce the residual is followed by a Picard
   * step. At Re 1000 Newton from the start diverges or crawls
   * (docs/flow.md). */
  double newton_start;
} clmg_flow_options;

/** The defaults given with each field: 4 levels, steady, the Vanka and multigrid
 * defaults with F(2,2)-cycles, backward Euler for time steps, the problem's
 * upwinding. options must not be NULL. */
CLMG_API void clmg_flow_options_defaults(clmg_flow_options *options);

/** DFG 2D-3's run ends at t = 8, its inflow's half period. */
#define CLMG_FLOW_DFG3_END 8.0

/** A benchmark case's defaults (clmg/flow.h) over options, as `clmg flow
 * --case` and Python's clmg.flow apply them before the user's settings:
 * steady as clmg_flow_case_steady; DFG 2D-2 and 2D-3 Crank-Nicolson with
 * the weighted upwind of parameter 0.1 (docs/flow.md), the other cases the
 * Samarskij upwind; DFG 2D-3 also its inflow's time scale sin(pi t / 8) as
 * boundary_scale and clmg_flow_case_steps(flow, options->time_step) steps.
 * NULL options: nothing. */
CLMG_API void clmg_flow_case_defaults(clmg_flow_case flow, clmg_flow_options *options);
/** The case's default number of time steps of length time_step: DFG 2D-3
 * ceil(8 / time_step) (t in [0, 8], at most 1e8), the others 100. */
CLMG_API int clmg_flow_case_steps(clmg_flow_case flow, double time_step);

/** What one time step or Oseen iteration did. */
typedef struct clmg_flow_step {
  int step;                  /**< 1, 2, ... */
  double time;               /**< unsteady: step * tau */
  int linear_iterations;     /**< GMRES iterations of this step (the fractional-step theta
                                scheme: of its three linear solves) */
  double nonlinear_residual; /**< steady: relative residual of the iterate before the step */
  double linear_residual;    /**< the step's true relative residual after the solve (the
                                largest of its solves) */
  double assemble_seconds;   /**< the levels' systems refilled on the device */
  double setup_seconds;      /**< the multigrid (uploads, smoother setup, coarse solve) */
  double solve_seconds;      /**< GMRES */
  int newton;                /**< steady: 1 for a Newton step, 0 for an Oseen (Picard) one */
} clmg_flow_step;

/** Called after every step with the finest level's mesh, edges and
 * solution (2E + T values, clmg/stokes.h's layout), except a time step
 * whose linear solve failed (not a state of the flow: the run ends with
 * its error; a steady run's last iterate is passed); a nonzero return stops
 * the run: clmg_flow_solve then returns with what it has, CLMG_SUCCESS for
 * time steps, CLMG_ERROR_NOT_CONVERGED for a steady run stopped before its
 * tolerance. */
typedef int (*clmg_flow_monitor)(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                                 const clmg_triangle_edges *edges, const double *x);

/** What clmg_flow_solve leaves: the finest level's mesh, edges and solution, and how the
 * run went. */
typedef struct clmg_flow_result {
  clmg_mesh mesh;            /**< the finest level's mesh */
  clmg_triangle_edges edges; /**< its edges */
  double *x;                 /**< the solution on it: 2E + T values (clmg/stokes.h's layout) */
  size_t unknowns;           /**< entries of x */
  int levels;                /**< levels of the hierarchy */
  int steps;                 /**< time steps or Oseen iterations done */
  int linear_iterations;     /**< summed over the steps */
  int converged;             /**< steady: the nonlinear residual met the tolerance; unsteady:
                                every linear solve met its tolerance */
  double nonlinear_residual; /**< steady: the last iterate's, recomputed */
  int newton_steps;          /**< steady: how many of the steps were Newton steps */
} clmg_flow_result;

/** Frees the result's mesh, edges and solution and zeroes it; NULL is fine. */
CLMG_API void clmg_flow_result_free(clmg_flow_result *result);

/** Runs the flow on the hierarchy refined from `coarse`: problem gives the
 * viscosity, force, boundary conditions (its wind, previous and reaction
 * are the run's own and are not read); monitor may be NULL. A linear solve
 * that misses its tolerance ends the run with CLMG_ERROR_NOT_CONVERGED
 * (the result keeps what was reached); a steady run that does not reach
 * its nonlinear tolerance in max_nonlinear iterations also returns
 * CLMG_ERROR_NOT_CONVERGED. A failure's message is the context's. */
CLMG_API clmg_status clmg_flow_solve(clmg_context *context, const clmg_mesh *coarse,
                                     const clmg_stokes_problem *problem,
                                     const clmg_flow_options *options, clmg_flow_monitor monitor,
                                     void *monitor_data, clmg_flow_result *result);

/** A .vtu of a solution (2E + T values) for ParaView: the triangles as
 * quadratic triangles whose nodes carry the velocity (a vector; at an edge
 * midpoint its unknown, at a vertex the mean of its cells' linear
 * velocities there, P1nc being discontinuous at vertices) and the pressure
 * as cell data. */
CLMG_API clmg_status clmg_flow_write_vtu(const char *path, const clmg_mesh *mesh,
                                         const clmg_triangle_edges *edges, const double *x,
                                         clmg_error *error);

#ifdef __cplusplus
}
#endif

#endif
