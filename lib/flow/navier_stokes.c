/* Navier-Stokes by Oseen steps (clmg/navier_stokes.h): each time step or
 * steady (Picard) iteration refills every level's Oseen system on the
 * device with its wind (clmg_stokes_assembler: the stored parts copied,
 * the convection added; Bauer, Klement, Oberhuber and Zabka, section 5.3),
 * refreshes the Vanka multigrid on those values (stored inverses, coarse
 * solve; the colours and layouts made once) and solves the finest system by
 * GMRES with one cycle as preconditioner. The iterate stays on the device;
 * the host gets a copy per step only for the monitor and at the end. The
 * host assembly runs once, to build the hierarchy. */
#include "fe/fe_internal.h"
#include "flow/stokes_internal.h"
#include "solve/internal.h"

#include "clmg/navier_stokes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clmg_flow_options_defaults(clmg_flow_options *o) {
  memset(o, 0, sizeof *o);
  o->levels = 4;
  o->steady = 1;
  o->time_step = 0.01;
  o->steps = 100;
  o->nonlinear_tolerance = 1e-8;
  o->max_nonlinear = 50;
  o->linear_tolerance = 0; /* 0: the mode's default */
  o->max_linear = 100;
  o->restart = 30;
  clmg_vanka_options_defaults(&o->vanka);
  clmg_multigrid_options_defaults(&o->multigrid);
  o->multigrid.cycle = CLMG_CYCLE_F;
  o->multigrid.pre_smoothing = o->multigrid.post_smoothing = 2;
  o->time_scheme = CLMG_FLOW_BACKWARD_EULER;
  o->upwind = -1;
  o->upwind_parameter = 1.0;
  o->step_iterations = 0; /* the scheme's */
  o->linearisation = CLMG_FLOW_PICARD;
  o->newton_start = 1e-3;
}

static const char *const SCHEME_NAMES[] = {"backward-euler", "crank-nicolson", "fs-theta", "bdf2"};
enum { SCHEME_COUNT = sizeof SCHEME_NAMES / sizeof SCHEME_NAMES[0] };

const char *clmg_flow_time_scheme_name(clmg_flow_time_scheme scheme) {
  return (int)scheme >= 0 && (int)scheme < SCHEME_COUNT ? SCHEME_NAMES[scheme] : "unknown";
}

int clmg_flow_time_scheme_parse(const char *name, clmg_flow_time_scheme *scheme) {
  for (int k = 0; name && k < SCHEME_COUNT; k++)
    if (strcmp(name, SCHEME_NAMES[k]) == 0) {
      if (scheme)
        *scheme = (clmg_flow_time_scheme)k;
      return 1;
    }
  return 0;
}

static const char *const LINEARISATION_NAMES[] = {"picard", "newton"};
enum { LINEARISATION_COUNT = sizeof LINEARISATION_NAMES / sizeof LINEARISATION_NAMES[0] };

const char *clmg_flow_linearisation_name(clmg_flow_linearisation linearisation) {
  return (int)linearisation >= 0 && (int)linearisation < LINEARISATION_COUNT
             ? LINEARISATION_NAMES[linearisation]
             : "unknown";
}

int clmg_flow_linearisation_parse(const char *name, clmg_flow_linearisation *linearisation) {
  for (int k = 0; name && k < LINEARISATION_COUNT; k++)
    if (strcmp(name, LINEARISATION_NAMES[k]) == 0) {
      if (linearisation)
        *linearisation = (clmg_flow_linearisation)k;
      return 1;
    }
  return 0;
}

void clmg_flow_result_free(clmg_flow_result *r) {
  if (!r)
    return;
  clmg_mesh_free(&r->mesh);
  clmg_triangle_edges_free(&r->edges);
  free(r->x);
  memset(r, 0, sizeof *r);
}

/* The run's state: the hierarchy, its device assembler and multigrid, and
 * the iterate on the device (its velocity part viewed as the wind). */
typedef struct flow_run {
  clmg_context *context;
  const clmg_flow_options *o;
  clmg_stokes_problem problem;
  clmg_stokes_hierarchy h;
  /* the levels' matrices made on the device (NULL: assembled on the host);
   * after the set-up only their values stay, the assembler's stored ones */
  clmg_csr_device *device_a;
  size_t n, velocities;
  double *x; /* the host copy */
  clmg_stokes_assembler *assembler;
  clmg_multigrid *mg;
  clmg_preconditioner cycle;
  /* GMRES's bases and work vectors, made by the first linear solve and
   * reused by every later one (at level 5 of dfg2, 700 MB otherwise made,
   * zeroed and freed per solve) */
  clmg_gmres_workspace *gmres;
  clmg_vector *x_device, *wind, *previous, *residual;
  clmg_vector *rhs; /* the step's right-hand side: the assembler's, with the explicit part */
  /* second-order steps: the extrapolated wind, u^{n-2}, the iterate with
   * pressure 0, views of the velocity and pressure parts */
  clmg_vector *extrapolated, *older, *state, *x_pressure, *state_pressure, *rhs_velocity,
      *state_velocity;
  int have_older;               /* older holds u^{n-2} */
  double older_length;          /* the length of the step from u^{n-2} to u^{n-1} */
  clmg_matrix *explicit_matrix; /* the finest matrix with the wind u^{n-1} */
  clmg_operator explicit_operator;
  /* a one-level hierarchy: its matrix carries the coarse shift, so GMRES
   * gets the finest matrix apart */
  clmg_matrix *finest_matrix;
  clmg_operator finest;
  /* Newton: the finest Newton matrix GMRES solves with (the multigrid,
   * its preconditioner, keeps the Oseen systems), and whether the solve
   * under way is a Newton step's */
  clmg_matrix *newton_matrix;
  clmg_operator newton_operator;
  int newton_step;
} flow_run;

/* The operator GMRES and the residuals use. */
static const clmg_operator *finest_operator(const flow_run *run) {
  if (run->newton_step)
    return &run->newton_operator;
  return run->finest_matrix ? &run->finest
                            : clmg_multigrid_operator(run->mg, clmg_multigrid_levels(run->mg) - 1);
}

/* A matrix of the finest pattern whose values the assembler's replace
 * (clmg_matrix_update_values_device), and its operator. */
static clmg_status finest_copy(flow_run *run, clmg_matrix **matrix, clmg_operator *op) {
  const int finest = run->h.num_levels - 1;
  clmg_csr_device arrays = {0};
  clmg_status status = CLMG_SUCCESS;
  if (run->device_a)
    arrays = run->device_a[finest]; /* borrowed */
  else
    status = clmg_csr_device_upload(run->context, &run->h.a[finest], CLMG_DOUBLE, &arrays);
  if (status == CLMG_SUCCESS)
    status = clmg_matrix_create_from_device(run->context, arrays.rows, arrays.cols, arrays.row_ptr,
                                            arrays.col, arrays.val, NULL, matrix);
  if (!run->device_a)
    clmg_csr_device_free(&arrays);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_from_matrix(*matrix, 0, op);
  return status;
}

/* The device objects: assembler, multigrid, vectors (made once). */
static clmg_status prepare_run(flow_run *run) {
  clmg_context *context = run->context;
  clmg_stokes_hierarchy *h = &run->h;
  clmg_status status =
      run->device_a ? clmg_stokes_assembler_create_from(context, h, &run->problem, run->device_a,
                                                        &run->assembler)
                    : clmg_stokes_assembler_create(context, h, &run->problem, &run->assembler);
  /* every step refills the systems and refreshes the multigrid before its
   * first cycle: the Vanka inverses of the build's values would be thrown
   * away (at level 5 of dfg2 on pocl, 1.9 s of the setup) */
  clmg_vanka_options vanka = run->o->vanka;
  vanka.defer_first_setup = 1;
  if (status == CLMG_SUCCESS && run->device_a)
    status = clmg_stokes_multigrid_create_from(context, h, run->assembler, run->device_a, &vanka,
                                               &run->o->multigrid, &run->mg);
  else if (status == CLMG_SUCCESS)
    status = clmg_stokes_multigrid_create_device(context, h, run->assembler, &vanka,
                                                 &run->o->multigrid, &run->mg);
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_preconditioner(run->mg, &run->cycle);
  if (status == CLMG_SUCCESS && clmg_gmres_workspace_create(&run->gmres) != CLMG_SUCCESS)
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "flow: no host memory for the GMRES workspace");
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, run->n, &run->x_device);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, run->n, &run->residual);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, run->velocities, &run->previous);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_view(run->x_device, 0, run->velocities, &run->wind);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(run->x_device, run->x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, run->n, &run->rhs);
  if (status == CLMG_SUCCESS && clmg_multigrid_levels(run->mg) == 1)
    status = finest_copy(run, &run->finest_matrix, &run->finest);
  if (status == CLMG_SUCCESS && run->problem.newton)
    status = finest_copy(run, &run->newton_matrix, &run->newton_operator);
  if (status == CLMG_SUCCESS && !run->o->steady &&
      run->o->time_scheme != CLMG_FLOW_BACKWARD_EULER) {
    const size_t v = run->velocities, p = run->n - v;
    status = finest_copy(run, &run->explicit_matrix, &run->explicit_operator);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, v, &run->extrapolated);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, v, &run->older);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, CLMG_DOUBLE, run->n, &run->state);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_view(run->x_device, v, p, &run->x_pressure);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_view(run->state, v, p, &run->state_pressure);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_view(run->rhs, 0, v, &run->rhs_velocity);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_view(run->state, 0, v, &run->state_velocity);
  }
  return status;
}

static clmg_status refresh_multigrid(flow_run *run, clmg_flow_step *step);

/* An Oseen iteration's systems on the device (wind: the iterate's
 * velocity), then the multigrid refreshed on them. */
static clmg_status assemble_step(flow_run *run, clmg_flow_step *step) {
  double start = clmg_seconds_now();
  clmg_status status = clmg_stokes_assembler_update(run->assembler, run->wind, NULL);
  if (status == CLMG_SUCCESS)
    status = clmg_copy(clmg_stokes_assembler_rhs(run->assembler), run->rhs);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(run->context);
  step->assemble_seconds = clmg_seconds_now() - start;
  return status == CLMG_SUCCESS ? refresh_multigrid(run, step) : status;
}

/* A Newton step's system: the assembler's update with the Newton term,
 * into the Newton matrix and the right-hand side (the multigrid keeps the
 * Oseen systems of assemble_step: its cycle preconditions the Newton
 * matrix). */
static clmg_status assemble_newton(flow_run *run, clmg_flow_step *step) {
  double start = clmg_seconds_now();
  clmg_status status = clmg_stokes_assembler_set_newton(run->assembler, 1);
  if (status == CLMG_SUCCESS)
    status = clmg_stokes_assembler_update(run->assembler, run->wind, NULL);
  if (status == CLMG_SUCCESS)
    status = clmg_copy(clmg_stokes_assembler_rhs(run->assembler), run->rhs);
  if (status == CLMG_SUCCESS)
    status = clmg_matrix_update_values_device(
        run->newton_matrix, clmg_stokes_assembler_values(run->assembler, run->h.num_levels - 1));
  if (status == CLMG_SUCCESS)
    status = clmg_finish(run->context);
  step->assemble_seconds += clmg_seconds_now() - start;
  return status;
}

/* The multigrid (and the one-level finest matrix) on the assembler's
 * values. */
static clmg_status refresh_multigrid(flow_run *run, clmg_flow_step *step) {
  double start = clmg_seconds_now();
  clmg_status status = clmg_stokes_multigrid_update_device(run->mg, &run->h, run->assembler);
  if (status == CLMG_SUCCESS && run->finest_matrix)
    status = clmg_matrix_update_values_device(
        run->finest_matrix, clmg_stokes_assembler_values(run->assembler, run->h.num_levels - 1));
  if (status == CLMG_SUCCESS)
    status = clmg_finish(run->context);
  step->setup_seconds += clmg_seconds_now() - start;
  return status;
}

/* ||b - A x|| / ||b|| on the device (||b - A x|| when b = 0). */
static clmg_status relative_residual(flow_run *run, double *value) {
  const clmg_vector *b = run->rhs;
  double rr = 0, bb = 0;
  clmg_status status = clmg_operator_defect(finest_operator(run), b, run->x_device, run->residual);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(run->residual, &rr);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(b, &bb);
  *value = bb > 0 ? rr / bb : rr;
  return status;
}

/* One linear solve of the finest system from the current iterate: the
 * step's iterations, its true residual (relative to b) and time. */
static clmg_status solve_step(flow_run *run, double tolerance, clmg_flow_step *step) {
  double start = clmg_seconds_now();
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = tolerance;
  krylov.max_iterations = run->o->max_linear;
  krylov.gmres_restart = run->o->restart;
  clmg_krylov_result result = {0};
  clmg_status status = clmg_gmres_in_workspace(finest_operator(run), run->rhs, run->x_device,
                                               &run->cycle, &krylov, &result, run->gmres);
  step->linear_iterations = result.iterations;
  /* converged, GMRES's last figure is the residual it recomputed from x
   * (||b - A x|| / ||b|| by the same kernels): taken, not measured again */
  if (status == CLMG_SUCCESS)
    step->linear_residual = result.relative_residual;
  clmg_krylov_result_free(&result);
  /* not converged: x still holds the iterate, which the caller reports */
  if (status == CLMG_ERROR_NOT_CONVERGED) {
    clmg_status measured = relative_residual(run, &step->linear_residual);
    status = measured != CLMG_SUCCESS ? measured : status;
  }
  step->solve_seconds += clmg_seconds_now() - start;
  return status;
}

/* ---- time steps ---- */

/* One step of a time scheme: its length, its implicit weight theta (1:
 * backward Euler and BDF2) and whether it is a BDF2 step. */
typedef struct substep {
  double length, weight;
  int bdf2;
} substep;

/* theta = 1 - 1/sqrt 2 of the fractional-step theta scheme. */
#define FS_THETA (1.0 - 0.70710678118654752440)
#define FS_ALPHA ((1.0 - 2.0 * FS_THETA) / (1.0 - FS_THETA))

/* The steps of time step k (1, 2, ...) of the scheme; returns their count. */
static int scheme_steps(const clmg_flow_options *o, int k, substep steps[3]) {
  const double tau = o->time_step;
  switch (o->time_scheme) {
  case CLMG_FLOW_CRANK_NICOLSON:
    steps[0] = (substep){tau, 0.5, 0};
    return 1;
  case CLMG_FLOW_FS_THETA:
    steps[0] = (substep){FS_THETA * tau, FS_ALPHA, 0};
    steps[1] = (substep){(1.0 - 2.0 * FS_THETA) * tau, 1.0 - FS_ALPHA, 0};
    steps[2] = steps[0];
    return 3;
  case CLMG_FLOW_BDF2: /* the first a theta step of the same mass term */
    steps[0] = k == 1 ? (substep){tau, 2.0 / 3.0, 0} : (substep){tau, 1.0, 1};
    return 1;
  default:
    steps[0] = (substep){tau, 1.0, 0};
    return 1;
  }
}

/* The mass term's coefficient of the scheme's implicit operators, 1 / (theta k),
 * the same in each of its steps. */
static double scheme_reaction(const clmg_flow_options *o) {
  substep steps[3];
  scheme_steps(o, 1, steps);
  return 1.0 / (steps[0].weight * steps[0].length);
}

/* Linear solves per step of the scheme (clmg_flow_options.step_iterations):
 * the extrapolated wind alone lets a step-to-step oscillation of
 * Crank-Nicolson (and less so of the fractional-step scheme) grow where
 * the time step is large against the mesh (docs/flow.md: DFG 2D-2), one
 * Picard iteration more damps it; BDF2 damps it by itself. */
static int step_iterations(const clmg_flow_options *o) {
  if (o->time_scheme == CLMG_FLOW_BACKWARD_EULER)
    return 1;
  if (o->step_iterations > 0)
    return o->step_iterations;
  return o->time_scheme == CLMG_FLOW_BDF2 ? 1 : 2;
}

/* The Dirichlet values of time t on the assembler's next updates. */
static clmg_status boundary_at(flow_run *run, double t) {
  if (!run->o->boundary_scale)
    return CLMG_SUCCESS;
  return clmg_stokes_assembler_set_boundary_scale(
      run->assembler, run->o->boundary_scale(t, run->o->boundary_scale_data));
}

/* One step of the scheme from time t0 (clmg/navier_stokes.h): u^{n-1} is
 * the iterate's velocity. Theta < 1: the explicit part f - A(u^{n-1})
 * u^{n-1} is the defect of the system assembled with wind and previous
 * velocity u^{n-1}, the pressure set to 0, by the finest matrix's product
 * (its Dirichlet rows vanish: the iterate holds their values); the system
 * divided by theta has the mass coefficient 1/(theta k) of the hierarchy,
 * the explicit part ((1 - theta)/theta) times that defect on the right,
 * and p/theta for its pressure. The second-order schemes take the wind
 * extrapolated from u^{n-1} and u^{n-2}; BDF2 the time term's velocity
 * (4 u^{n-1} - u^{n-2})/3 with the mass coefficient 3/(2 k). */
static clmg_status time_substep(flow_run *run, const substep *s, double t0, double tolerance,
                                clmg_flow_step *step) {
  double start = clmg_seconds_now();
  const int second_order = run->o->time_scheme != CLMG_FLOW_BACKWARD_EULER;
  const int finest = run->h.num_levels - 1;
  const double w = s->weight;
  clmg_status status = clmg_copy(run->wind, run->previous);
  if (status == CLMG_SUCCESS && w < 1) {
    status = boundary_at(run, t0);
    if (status == CLMG_SUCCESS)
      status = clmg_stokes_assembler_update(run->assembler, run->previous, run->previous);
    if (status == CLMG_SUCCESS)
      status = clmg_matrix_update_values_device(
          run->explicit_matrix, clmg_stokes_assembler_values(run->assembler, finest));
    if (status == CLMG_SUCCESS)
      status = clmg_copy(run->x_device, run->state);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_fill(run->state_pressure, 0.0);
    if (status == CLMG_SUCCESS)
      status =
          clmg_operator_defect(&run->explicit_operator, clmg_stokes_assembler_rhs(run->assembler),
                               run->state, run->residual);
    /* kept in state: the solves' residuals overwrite residual */
    if (status == CLMG_SUCCESS)
      status = clmg_copy(run->residual, run->state);
  }
  const clmg_vector *wind = run->previous, *time_term = run->previous;
  if (status == CLMG_SUCCESS && second_order && run->have_older) {
    double r = s->length / run->older_length;
    status = clmg_waxpby(1.0 + r, run->previous, -r, run->older, run->extrapolated);
    wind = run->extrapolated;
    if (status == CLMG_SUCCESS && s->bdf2) {
      status = clmg_axpby(4.0 / 3.0, run->previous, -1.0 / 3.0, run->older);
      time_term = run->older;
    }
  }
  if (status == CLMG_SUCCESS)
    status = boundary_at(run, t0 + s->length);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(run->context);
  step->assemble_seconds += clmg_seconds_now() - start;
  /* Picard iterations: the first with the extrapolated wind, each further
   * one with the wind of the last solve (the explicit part stays) */
  const int iterations = step_iterations(run->o);
  for (int it = 0; it < iterations && status == CLMG_SUCCESS; it++) {
    start = clmg_seconds_now();
    status = clmg_stokes_assembler_update(run->assembler, it == 0 ? wind : run->wind, time_term);
    if (status == CLMG_SUCCESS)
      status = clmg_copy(clmg_stokes_assembler_rhs(run->assembler), run->rhs);
    if (status == CLMG_SUCCESS && w < 1)
      status = clmg_axpy((1.0 - w) / w, run->state_velocity, run->rhs_velocity);
    if (status == CLMG_SUCCESS)
      status = clmg_finish(run->context);
    step->assemble_seconds += clmg_seconds_now() - start;
    if (status == CLMG_SUCCESS)
      status = refresh_multigrid(run, step);
    if (status == CLMG_SUCCESS && w != 1)
      status = clmg_scal(1.0 / w, run->x_pressure);
    if (status != CLMG_SUCCESS)
      return status;
    clmg_flow_step one = {0};
    status = solve_step(run, tolerance, &one);
    step->linear_iterations += one.linear_iterations;
    step->linear_residual = fmax(step->linear_residual, one.linear_residual);
    step->solve_seconds += one.solve_seconds;
    if ((status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED) && w != 1) {
      clmg_status scaled = clmg_scal(w, run->x_pressure);
      status = scaled != CLMG_SUCCESS ? scaled : status;
    }
  }
  if ((status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED) && second_order) {
    /* u^{n-1} becomes u^{n-2} */
    clmg_status copied = clmg_copy(run->previous, run->older);
    status = copied != CLMG_SUCCESS ? copied : status;
    run->have_older = 1;
    run->older_length = s->length;
  }
  return status;
}

/* The iterate into the host copy. A failure `status` already carries
 * stays, with its message (each library call starts with a clean one);
 * else the download's status. */
static clmg_status download_iterate(flow_run *run, clmg_status status) {
  char kept[CLMG_MESSAGE_SIZE];
  snprintf(kept, sizeof kept, "%s", clmg_context_message(run->context));
  clmg_status copied = clmg_vector_download_doubles(run->x_device, run->x);
  if (status == CLMG_SUCCESS)
    return copied;
  return clmg_fail(run->context, status, "%s", kept);
}

static void free_run(flow_run *run) {
  clmg_gmres_workspace_destroy(run->gmres);
  clmg_preconditioner_destroy(&run->cycle);
  clmg_multigrid_destroy(run->mg);
  clmg_operator_destroy(&run->finest);
  clmg_matrix_destroy(run->finest_matrix);
  clmg_operator_destroy(&run->newton_operator);
  clmg_matrix_destroy(run->newton_matrix);
  clmg_operator_destroy(&run->explicit_operator);
  clmg_matrix_destroy(run->explicit_matrix);
  /* views before their bases */
  clmg_vector_destroy(run->x_pressure);
  clmg_vector_destroy(run->state_pressure);
  clmg_vector_destroy(run->rhs_velocity);
  clmg_vector_destroy(run->state_velocity);
  clmg_vector_destroy(run->state);
  clmg_vector_destroy(run->older);
  clmg_vector_destroy(run->extrapolated);
  clmg_vector_destroy(run->rhs);
  clmg_vector_destroy(run->wind);
  clmg_vector_destroy(run->x_device);
  clmg_vector_destroy(run->previous);
  clmg_vector_destroy(run->residual);
  clmg_stokes_assembler_destroy(run->assembler);
  for (int l = 0; run->device_a && l < run->h.num_levels; l++)
    clmg_csr_device_free(&run->device_a[l]);
  free(run->device_a);
  clmg_stokes_hierarchy_free(&run->h);
  free(run->x);
}

/* The patterns made on the device are copied into the multigrid and the
 * finest matrices: only the values stay (the assembler's stored ones). */
static void drop_device_patterns(flow_run *run) {
  for (int l = 0; run->device_a && l < run->h.num_levels; l++) {
    clmg_vector_destroy(run->device_a[l].row_ptr);
    clmg_vector_destroy(run->device_a[l].col);
    run->device_a[l].row_ptr = run->device_a[l].col = NULL;
  }
}

static clmg_status check_options(clmg_context *context, const clmg_flow_options *o) {
  if (o->levels < 1 || o->levels > 16 || !(o->nonlinear_tolerance > 0) || o->max_nonlinear < 1 ||
      o->max_linear < 1 || o->restart < 1 || !(o->linear_tolerance >= 0) ||
      (!o->steady && (!(o->time_step > 0) || o->steps < 1)))
    return clmg_fail(
        context, CLMG_ERROR_INVALID_ARGUMENT,
        "flow: invalid options (levels 1 to 16; tolerances > 0; at least one "
        "nonlinear and linear iteration, a GMRES restart of at least 1; unsteady: time "
        "step > 0 and steps >= 1)");
  if ((int)o->time_scheme < 0 || (int)o->time_scheme >= SCHEME_COUNT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: time scheme %d, expected CLMG_FLOW_BACKWARD_EULER, "
                     "CLMG_FLOW_CRANK_NICOLSON, CLMG_FLOW_FS_THETA or CLMG_FLOW_BDF2 (0 to %d)",
                     (int)o->time_scheme, SCHEME_COUNT - 1);
  if (o->step_iterations < 0 || o->step_iterations > 100)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: %d linear solves per time step; expected 1 to 100, or 0 for the "
                     "scheme's (2 for Crank-Nicolson and the fractional-step theta scheme, 1 "
                     "for BDF2)",
                     o->step_iterations);
  if ((int)o->linearisation < 0 || (int)o->linearisation >= LINEARISATION_COUNT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: linearisation %d, expected CLMG_FLOW_PICARD or CLMG_FLOW_NEWTON (0 "
                     "or 1)",
                     (int)o->linearisation);
  if (!(o->newton_start >= 0) || !isfinite(o->newton_start))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: newton_start is %g; it must be finite and >= 0", o->newton_start);
  if (!o->steady && o->linearisation == CLMG_FLOW_NEWTON)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: the Newton linearisation is for steady runs; time steps take Picard "
                     "iterations (step_iterations)");
  if (o->upwind < -1 || o->upwind > CLMG_STOKES_UPWIND_WEIGHTED)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: upwind %d, expected -1 (the problem's) or a CLMG_STOKES_UPWIND_ value "
                     "(0 to %d)",
                     o->upwind, CLMG_STOKES_UPWIND_WEIGHTED);
  return CLMG_SUCCESS;
}

/* The result: the finest mesh, its edges and the solution, copied. */
static clmg_status keep_result(flow_run *run, clmg_flow_result *result, clmg_error *error) {
  int finest = run->h.num_levels - 1;
  clmg_status status = clmg_mesh_copy(&run->h.meshes[finest], &result->mesh, error);
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_create(&result->mesh, &result->edges, error);
  if (status == CLMG_SUCCESS) {
    result->x = clmg_alloc_array(run->n, sizeof *result->x);
    if (!result->x)
      return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "flow: no host memory");
    memcpy(result->x, run->x, run->n * sizeof *result->x);
    result->unknowns = run->n;
    result->levels = run->h.num_levels;
  }
  return status;
}

clmg_status clmg_flow_solve(clmg_context *context, const clmg_mesh *coarse,
                            const clmg_stokes_problem *problem, const clmg_flow_options *options,
                            clmg_flow_monitor monitor, void *monitor_data,
                            clmg_flow_result *result) {
  if (!context || !result)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(result, 0, sizeof *result);
  clmg_clear_message(context);
  clmg_flow_options defaults;
  clmg_flow_options_defaults(&defaults);
  const clmg_flow_options *o = options ? options : &defaults;
  clmg_status status = check_options(context, o);
  if (status != CLMG_SUCCESS)
    return status;
  flow_run run = {.context = context, .o = o};
  if (problem)
    run.problem = *problem;
  else
    clmg_stokes_problem_defaults(&run.problem);
  run.problem.wind = NULL;
  run.problem.previous = NULL;
  run.problem.reaction = o->steady ? 0.0 : scheme_reaction(o);
  run.problem.newton = o->steady && o->linearisation == CLMG_FLOW_NEWTON;
  if (o->upwind >= 0) {
    run.problem.upwind = o->upwind;
    run.problem.upwind_parameter = o->upwind_parameter;
  }
  clmg_error error = {{0}};
  /* the matrices made on the device where it computes in double and the
   * device table says so (clmg_stokes_system_device: the same bits as the
   * host's assembly) */
  if (clmg_context_device(context)->has_fp64 && context->params.stokes_setup_on_device) {
    run.device_a = calloc((size_t)o->levels, sizeof *run.device_a);
    if (!run.device_a)
      return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "flow: no host memory");
    status = clmg_stokes_hierarchy_build_device(context, coarse, o->levels, &run.problem, &run.h,
                                                run.device_a, &error);
  } else {
    status = clmg_stokes_hierarchy_build(coarse, o->levels, &run.problem, &run.h, &error);
  }
  int finest = o->levels - 1;
  if (status == CLMG_SUCCESS) {
    run.n = clmg_stokes_num_unknowns(&run.h.meshes[finest], &run.h.edges[finest]);
    run.velocities = 2 * run.h.edges[finest].num_edges;
    run.x = calloc(run.n, sizeof *run.x);
    if (!run.x)
      status = clmg_error_set(&error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "flow: no host memory for %zu unknowns", run.n);
  }
  /* the Dirichlet values from the first assembly: the start of the run */
  if (status == CLMG_SUCCESS) {
    uint8_t *mask = NULL;
    status = clmg_stokes_dirichlet_mask(&run.h.meshes[finest], &run.h.edges[finest], &run.problem,
                                        &mask, &error);
    const double scale =
        !o->steady && o->boundary_scale ? o->boundary_scale(0.0, o->boundary_scale_data) : 1.0;
    if (status == CLMG_SUCCESS && !isfinite(scale))
      status = clmg_error_set(&error, CLMG_ERROR_INVALID_ARGUMENT,
                              "flow: the boundary scale at t = 0 is %g; it must be finite", scale);
    for (size_t i = 0; status == CLMG_SUCCESS && i < run.n; i++)
      run.x[i] = mask[i] ? scale * run.h.b[i] : 0.0;
    free(mask);
  }
  if (status != CLMG_SUCCESS) {
    free_run(&run);
    return clmg_fail(context, status, "flow: %s", error.message);
  }
  status = prepare_run(&run);
  drop_device_patterns(&run);
  if (status != CLMG_SUCCESS) {
    char inner[CLMG_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", clmg_context_message(context));
    free_run(&run);
    return clmg_fail(context, status, "flow: %s", inner);
  }
  /* steady: one assembly more than solves, to judge the last iterate */
  int steps = o->steady ? o->max_nonlinear + 1 : o->steps;
  int converged = !o->steady;
  int last_newton = 0;
  double last_residual = 0;
  for (int k = 1; k <= steps && status == CLMG_SUCCESS; k++) {
    clmg_flow_step step = {0};
    step.step = k;
    step.time = o->steady ? 0.0 : k * o->time_step;
    double tolerance = o->linear_tolerance > 0 ? o->linear_tolerance : 1e-8;
    if (!o->steady) {
      substep parts[3];
      int count = scheme_steps(o, k, parts);
      double t = (k - 1) * o->time_step;
      for (int j = 0; j < count && status == CLMG_SUCCESS; j++) {
        status = time_substep(&run, &parts[j], t, tolerance, &step);
        t += parts[j].length;
      }
      result->steps = k;
      result->linear_iterations += step.linear_iterations;
      if (status == CLMG_ERROR_NOT_CONVERGED)
        status = clmg_fail(context, status,
                           "flow: step %d: a linear solve reached a relative residual of %.3e "
                           "in %d GMRES iterations, not %.3e",
                           k, step.linear_residual, step.linear_iterations, tolerance);
      else if (status != CLMG_SUCCESS) {
        char inner[CLMG_MESSAGE_SIZE];
        snprintf(inner, sizeof inner, "%s", clmg_context_message(context));
        status = clmg_fail(context, status, "flow: step %d: %s", k, inner);
        break;
      }
      /* a step whose solve failed is not a state of the flow: the monitor
       * (drag, lift, outputs) sees the steps done, the error says why it
       * stopped */
      if (monitor && status == CLMG_SUCCESS) {
        status = download_iterate(&run, status);
        if (status != CLMG_SUCCESS)
          break;
        if (monitor(monitor_data, &step, &run.h.meshes[finest], &run.h.edges[finest], run.x) != 0)
          break;
      }
      continue;
    }
    /* the Oseen system: the multigrid's and the nonlinear residual's */
    if (run.problem.newton)
      status = clmg_stokes_assembler_set_newton(run.assembler, 0);
    if (status == CLMG_SUCCESS)
      status = assemble_step(&run, &step);
    if (status == CLMG_SUCCESS && o->steady) {
      status = relative_residual(&run, &step.nonlinear_residual);
      result->nonlinear_residual = step.nonlinear_residual;
      if (status == CLMG_SUCCESS && step.nonlinear_residual <= o->nonlinear_tolerance) {
        converged = 1;
        break;
      }
      if (k > o->max_nonlinear)
        break;
      /* inexact Oseen steps: a hundredfold reduction, no further than the goal */
      if (!(o->linear_tolerance > 0))
        tolerance = fmax(1e-2 * step.nonlinear_residual, 0.5 * o->nonlinear_tolerance);
    }
    if (status != CLMG_SUCCESS) {
      char inner[CLMG_MESSAGE_SIZE];
      snprintf(inner, sizeof inner, "%s", clmg_context_message(context));
      status = clmg_fail(context, status, "flow: step %d: %s", k, inner);
      break;
    }
    /* Newton once the residual is at most newton_start, but for a step
     * after a Newton step that did not reduce it */
    const int newton = run.problem.newton && step.nonlinear_residual <= o->newton_start &&
                       !(last_newton && step.nonlinear_residual >= last_residual);
    last_newton = newton;
    last_residual = step.nonlinear_residual;
    if (newton) {
      status = assemble_newton(&run, &step);
      run.newton_step = status == CLMG_SUCCESS;
      step.newton = run.newton_step;
      result->newton_steps += run.newton_step;
    }
    if (status == CLMG_SUCCESS)
      status = solve_step(&run, tolerance, &step);
    run.newton_step = 0;
    result->steps = k;
    result->linear_iterations += step.linear_iterations;
    if (status == CLMG_ERROR_NOT_CONVERGED)
      status = clmg_fail(context, status,
                         "flow: step %d%s: the linear solve reached a relative residual of %.3e "
                         "in %d GMRES iterations, not %.3e",
                         k, step.newton ? " (Newton)" : "", step.linear_residual,
                         step.linear_iterations, tolerance);
    if (monitor && (status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED)) {
      status = download_iterate(&run, status);
      if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED)
        break;
      if (monitor(monitor_data, &step, &run.h.meshes[finest], &run.h.edges[finest], run.x) != 0)
        break;
    }
  }
  status = download_iterate(&run, status);
  if (status == CLMG_SUCCESS && o->steady && !converged) {
    status = clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                       "flow: the Oseen iteration reached a relative residual of %.3e after %d "
                       "iterations, not %.3e",
                       result->nonlinear_residual, result->steps, o->nonlinear_tolerance);
  }
  result->converged = status == CLMG_SUCCESS && converged;
  clmg_status kept = keep_result(&run, result, &error);
  if (kept != CLMG_SUCCESS && status == CLMG_SUCCESS)
    status = clmg_fail(context, kept, "flow: %s", error.message);
  free_run(&run);
  return status;
}

/* ---- output ---- */

clmg_status clmg_flow_write_vtu(const char *path, const clmg_mesh *mesh,
                                const clmg_triangle_edges *edges, const double *x,
                                clmg_error *error) {
  clmg_error_clear(error);
  if (!path || !mesh || !edges || !x)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "flow vtu: a path, the mesh, its edges and the solution are needed");
  size_t nv = mesh->num_vertices, ne = edges->num_edges, nc = mesh->num_cells;
  size_t nodes = nv + ne;
  double *velocity = calloc(2 * nodes, sizeof *velocity);
  double *pressure = clmg_alloc_array(nc ? nc : 1, sizeof *pressure);
  int32_t *count = calloc(nv ? nv : 1, sizeof *count);
  if (!velocity || !pressure || !count) {
    free(velocity);
    free(pressure);
    free(count);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "flow vtu: no host memory for %zu nodes", nodes);
  }
  /* a vertex: the mean over its cells of the cell's linear velocity there
   * (at vertex i of a cell, the P1nc function of the edge opposite i is
   * -1, those of the other two edges 1); an edge midpoint: its unknown */
  for (size_t c = 0; c < nc; c++) {
    const int32_t *e = edges->cell_edges + 3 * c;
    for (int i = 0; i < 3; i++) {
      size_t v = (size_t)mesh->cells[3 * c + (size_t)i];
      for (int d = 0; d < 2; d++) {
        const double *u = x + (size_t)d * ne;
        velocity[2 * v + (size_t)d] += u[e[(i + 1) % 3]] + u[e[(i + 2) % 3]] - u[e[i]];
      }
      count[v]++;
    }
    pressure[c] = x[2 * ne + c];
  }
  for (size_t v = 0; v < nv; v++)
    for (int d = 0; d < 2; d++)
      velocity[2 * v + (size_t)d] /= count[v] ? count[v] : 1;
  for (size_t e = 0; e < ne; e++)
    for (int d = 0; d < 2; d++)
      velocity[2 * (nv + e) + (size_t)d] = x[(size_t)d * ne + e];
  const clmg_vtu_field fields[2] = {{"velocity", velocity, 2, 0}, {"pressure", pressure, 1, 1}};
  clmg_status status = clmg_mesh_write_vtu_fields(path, mesh, 2, fields, 2, CLMG_VTU_BINARY, error);
  free(velocity);
  free(pressure);
  free(count);
  return status;
}
