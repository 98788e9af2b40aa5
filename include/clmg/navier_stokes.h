/** @file
 * clmg incompressible Navier-Stokes on triangle meshes: the semi-implicit
 * Oseen scheme of Bauer, Klement, Oberhuber and Zabka, "Implementation of
 * the Vanka-type multigrid solver for the finite element approximation of
 * the Navier-Stokes equations on GPU" (eq. 4), with Crouzeix-Raviart
 * P1nc/P0 elements (clmg/stokes.h), upwinded convection and a Vanka
 * multigrid for every linear system:
 *   (u^n - u^{n-1})/tau + u^{n-1}.grad u^n - nu Laplace u^n + grad p^n = f,
 *   div u^n = 0,
 * a time step per linear solve; or a steady flow by Oseen (Picard)
 * iteration: the same system without the time term, the wind the last
 * iterate's velocity, to a nonlinear residual tolerance.
 *
 * The coarse levels' winds are the finest velocity restricted edge by edge
 * (a coarse edge takes the mean of its two fine halves), as the paper
 * restricts the velocity to update every level's matrix. Every linear
 * system is solved by GMRES preconditioned by one multigrid cycle
 * (clmg_stokes_multigrid_create), its true residual checked. */
#ifndef CLMG_NAVIER_STOKES_H
#define CLMG_NAVIER_STOKES_H

#include "clmg/stokes.h"

#ifdef __cplusplus
extern "C" {
#endif

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
} clmg_flow_options;

/** The defaults given with each field: 4 levels, steady, the Vanka and multigrid
 * defaults with F(2,2)-cycles. options must not be NULL. */
CLMG_API void clmg_flow_options_defaults(clmg_flow_options *options);

/** What one time step or Oseen iteration did. */
typedef struct clmg_flow_step {
  int step;                  /**< 1, 2, ... */
  double time;               /**< unsteady: step * tau */
  int linear_iterations;     /**< GMRES iterations of this step */
  double nonlinear_residual; /**< steady: relative residual of the iterate before the step */
  double linear_residual;    /**< the step's true relative residual after the solve */
  double assemble_seconds;   /**< the levels' systems refilled on the device */
  double setup_seconds;      /**< the multigrid (uploads, smoother setup, coarse solve) */
  double solve_seconds;      /**< GMRES */
} clmg_flow_step;

/** Called after every step with the finest level's mesh, edges and
 * solution (2E + T values, clmg/stokes.h's layout); a nonzero return stops
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
