/* Navier-Stokes by Oseen steps (clmg/navier_stokes.h): each time step or
 * steady (Picard) iteration refills every level's Oseen system on the host
 * with its wind (the patterns made once), updates the Vanka multigrid's
 * matrices on the device and refreshes it (values, stored inverses, coarse
 * solve; the colours and layouts made once) and solves the finest system
 * by GMRES with one cycle as preconditioner.
 *
 * What stays on the host for now: the values of every level per step and
 * the stored inverses, which the paper computes on the device (its section
 * 5.3); the step reports their times apart from the solve's. */
#include "fem/fe_internal.h"

#include "clmg/navier_stokes.h"

#include <math.h>
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
  clmg_vanka_options_defaults(&o->vanka);
  clmg_multigrid_options_defaults(&o->multigrid);
  o->multigrid.cycle = CLMG_CYCLE_F;
  o->multigrid.pre_smoothing = o->multigrid.post_smoothing = 2;
}

void clmg_flow_result_free(clmg_flow_result *r) {
  if (!r)
    return;
  clmg_mesh_free(&r->mesh);
  clmg_triangle_edges_free(&r->edges);
  free(r->x);
  memset(r, 0, sizeof *r);
}

static double norm2(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += v[i] * v[i];
  return sqrt(s);
}

/* ||b - A x|| / ||b|| on the host (1 when b = 0 and x solves nothing). */
static double relative_residual(const clmg_csr *a, const double *b, const double *x, double *work) {
  clmg_csr_spmv_host(1.0, a, x, 0.0, work);
  for (size_t i = 0; i < a->rows; i++)
    work[i] = b[i] - work[i];
  double nb = norm2(b, a->rows), nr = norm2(work, a->rows);
  return nb > 0 ? nr / nb : nr;
}

/* The run's state: the hierarchy and, per level, the wind. */
typedef struct flow_run {
  clmg_context *context;
  const clmg_flow_options *o;
  clmg_stokes_problem problem;
  clmg_stokes_hierarchy h;
  double **wind; /* per level, 2 E_l values */
  double *x, *previous, *work;
  size_t n;
  int assembled; /* the hierarchy's patterns are made */
  /* made at the first step, then updated: the multigrid, its
   * preconditioner, b and x on the device, and (a one-level hierarchy,
   * whose matrix carries the coarse shift) the finest matrix apart */
  clmg_multigrid *mg;
  clmg_preconditioner cycle;
  clmg_vector *b, *x_device;
  clmg_matrix *finest_matrix;
  clmg_operator finest;
} flow_run;

/* Every level's system with the winds from the finest velocity x; the
 * time term (reaction 1/tau, previous velocity) on the finest level's
 * right-hand side only: the coarse levels see defects, not data. */
static clmg_status assemble_levels(flow_run *run, clmg_error *error) {
  clmg_stokes_hierarchy *h = &run->h;
  int finest = h->num_levels - 1;
  size_t ef = h->edges[finest].num_edges;
  memcpy(run->wind[finest], run->x, 2 * ef * sizeof(double));
  for (int l = finest - 1; l >= 0; l--)
    clmg_stokes_restrict_velocity(&h->meshes[l], &h->edges[l], &h->edges[l + 1], run->wind[l + 1],
                                  run->wind[l]);
  clmg_status status = CLMG_SUCCESS;
  for (int l = 0; l <= finest && status == CLMG_SUCCESS; l++) {
    clmg_stokes_problem p = run->problem;
    p.wind = run->wind[l];
    p.previous = l == finest ? run->previous : NULL;
    size_t n = clmg_stokes_num_unknowns(&h->meshes[l], &h->edges[l]);
    double *b = l == finest ? h->b : clmg_alloc_array(n ? n : 1, sizeof *b);
    if (!b)
      return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "flow: no host memory");
    /* the patterns stay: after the first, the values are refilled in place */
    if (run->assembled) {
      status = clmg_stokes_update_values_host(&h->meshes[l], &h->edges[l], &p, &h->a[l],
                                              h->a[l].val, b, error);
    } else {
      clmg_csr_free(&h->a[l]);
      status = clmg_stokes_assemble_host(&h->meshes[l], &h->edges[l], &p, &h->a[l], b, error);
    }
    if (l != finest)
      free(b);
  }
  run->assembled = status == CLMG_SUCCESS;
  return status;
}

/* The multigrid on the hierarchy (made at the first step, its values
 * updated and refreshed after), b and x on the device. */
static clmg_status prepare_solve(flow_run *run) {
  clmg_context *context = run->context;
  clmg_stokes_hierarchy *h = &run->h;
  int finest = h->num_levels - 1;
  if (run->mg) {
    clmg_status status = clmg_stokes_multigrid_update(run->mg, h);
    if (status == CLMG_SUCCESS && run->finest_matrix)
      status = clmg_matrix_update_values(run->finest_matrix, h->a[finest].val);
    return status;
  }
  clmg_status status =
      clmg_stokes_multigrid_create(context, h, &run->o->vanka, &run->o->multigrid, &run->mg);
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_preconditioner(run->mg, &run->cycle);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, run->n, &run->b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, run->n, &run->x_device);
  /* GMRES works on the engine's finest operator, unless it is its only
   * level, whose matrix carries the coarse pressure shift
   * (clmg_stokes_multigrid_create): then on a matrix of its own, from
   * device arrays so that it too takes new values */
  if (status == CLMG_SUCCESS && clmg_multigrid_levels(run->mg) == 1) {
    clmg_csr_device arrays = {0};
    status = clmg_csr_device_upload(context, &h->a[finest], CLMG_DOUBLE, &arrays);
    if (status == CLMG_SUCCESS)
      status = clmg_matrix_create_from_device(context, arrays.rows, arrays.cols, arrays.row_ptr,
                                              arrays.col, arrays.val, NULL, &run->finest_matrix);
    clmg_csr_device_free(&arrays);
    if (status == CLMG_SUCCESS)
      status = clmg_operator_from_matrix(run->finest_matrix, 0, &run->finest);
  }
  return status;
}

/* One linear solve of the finest system from run->x: the step's
 * iterations, its true residual (relative to b) and times. */
static clmg_status solve_step(flow_run *run, double tolerance, clmg_flow_step *step) {
  clmg_context *context = run->context;
  clmg_stokes_hierarchy *h = &run->h;
  int finest = h->num_levels - 1;
  double start = clmg_seconds_now();
  clmg_status status = prepare_solve(run);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(run->b, h->b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(run->x_device, run->x);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  step->setup_seconds = clmg_seconds_now() - start;
  start = clmg_seconds_now();
  clmg_krylov_result result = {0};
  if (status == CLMG_SUCCESS) {
    clmg_krylov_options krylov;
    clmg_krylov_options_defaults(&krylov);
    krylov.relative_tolerance = tolerance;
    krylov.max_iterations = run->o->max_linear;
    const clmg_operator *op =
        run->finest_matrix ? &run->finest
                           : clmg_multigrid_operator(run->mg, clmg_multigrid_levels(run->mg) - 1);
    status = clmg_krylov_solve(CLMG_KRYLOV_GMRES, op, run->b, run->x_device, &run->cycle, &krylov,
                               &result);
    step->linear_iterations = result.iterations;
    /* not converged: x still holds the iterate, which the caller reports */
    clmg_status download = clmg_vector_download_doubles(run->x_device, run->x);
    if (status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED)
      status = download != CLMG_SUCCESS ? download : status;
  }
  step->solve_seconds = clmg_seconds_now() - start;
  step->linear_residual = relative_residual(&h->a[finest], h->b, run->x, run->work);
  clmg_krylov_result_free(&result);
  return status;
}

static void free_run(flow_run *run) {
  clmg_preconditioner_destroy(&run->cycle);
  clmg_multigrid_destroy(run->mg);
  clmg_operator_destroy(&run->finest);
  clmg_matrix_destroy(run->finest_matrix);
  clmg_vector_destroy(run->b);
  clmg_vector_destroy(run->x_device);
  for (int l = 0; run->wind && l < run->h.num_levels; l++)
    free(run->wind[l]);
  free(run->wind);
  clmg_stokes_hierarchy_free(&run->h);
  free(run->x);
  free(run->previous);
  free(run->work);
}

static clmg_status check_options(clmg_context *context, const clmg_flow_options *o) {
  if (o->levels < 1 || o->levels > 16 || !(o->nonlinear_tolerance > 0) || o->max_nonlinear < 1 ||
      o->max_linear < 1 || !(o->linear_tolerance >= 0) ||
      (!o->steady && (!(o->time_step > 0) || o->steps < 1)))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "flow: invalid options (levels 1 to 16; tolerances > 0; at least one "
                     "nonlinear and linear iteration; unsteady: time step > 0 and steps >= 1)");
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
  run.problem.reaction = o->steady ? 0.0 : 1.0 / o->time_step;
  clmg_error error = {{0}};
  status = clmg_stokes_hierarchy_build(coarse, o->levels, &run.problem, &run.h, &error);
  int finest = o->levels - 1;
  if (status == CLMG_SUCCESS) {
    run.n = clmg_stokes_num_unknowns(&run.h.meshes[finest], &run.h.edges[finest]);
    run.wind = calloc((size_t)o->levels, sizeof *run.wind);
    run.x = calloc(run.n, sizeof *run.x);
    run.previous = calloc(2 * run.h.edges[finest].num_edges, sizeof *run.previous);
    run.work = clmg_alloc_array(run.n, sizeof *run.work);
    int ok = run.wind && run.x && run.previous && run.work;
    for (int l = 0; ok && l < o->levels; l++) {
      run.wind[l] = calloc(2 * run.h.edges[l].num_edges + 1, sizeof(double));
      ok = run.wind[l] != NULL;
    }
    if (!ok)
      status = clmg_error_set(&error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "flow: no host memory for %zu unknowns", run.n);
  }
  /* the Dirichlet values from the first assembly: the start of the run */
  if (status == CLMG_SUCCESS) {
    uint8_t *mask = NULL;
    status = clmg_stokes_dirichlet_mask(&run.h.meshes[finest], &run.h.edges[finest], &run.problem,
                                        &mask, &error);
    for (size_t i = 0; status == CLMG_SUCCESS && i < run.n; i++)
      run.x[i] = mask[i] ? run.h.b[i] : 0.0;
    free(mask);
  }
  if (status != CLMG_SUCCESS) {
    free_run(&run);
    return clmg_fail(context, status, "flow: %s", error.message);
  }
  size_t velocities = 2 * run.h.edges[finest].num_edges;
  /* steady: one assembly more than solves, to judge the last iterate */
  int steps = o->steady ? o->max_nonlinear + 1 : o->steps;
  int converged = !o->steady;
  for (int k = 1; k <= steps && status == CLMG_SUCCESS; k++) {
    clmg_flow_step step = {0};
    step.step = k;
    step.time = o->steady ? 0.0 : k * o->time_step;
    double start = clmg_seconds_now();
    if (!o->steady)
      memcpy(run.previous, run.x, velocities * sizeof *run.previous);
    status = assemble_levels(&run, &error);
    step.assemble_seconds = clmg_seconds_now() - start;
    if (status != CLMG_SUCCESS) {
      status = clmg_fail(context, status, "flow: step %d: %s", k, error.message);
      break;
    }
    double tolerance = o->linear_tolerance > 0 ? o->linear_tolerance : 1e-8;
    if (o->steady) {
      step.nonlinear_residual = relative_residual(&run.h.a[finest], run.h.b, run.x, run.work);
      result->nonlinear_residual = step.nonlinear_residual;
      if (step.nonlinear_residual <= o->nonlinear_tolerance) {
        converged = 1;
        break;
      }
      if (k > o->max_nonlinear)
        break;
      /* inexact Oseen steps: a hundredfold reduction, no further than the goal */
      if (!(o->linear_tolerance > 0))
        tolerance = fmax(1e-2 * step.nonlinear_residual, 0.5 * o->nonlinear_tolerance);
    }
    status = solve_step(&run, tolerance, &step);
    result->steps = k;
    result->linear_iterations += step.linear_iterations;
    if (status == CLMG_ERROR_NOT_CONVERGED)
      status = clmg_fail(context, status,
                         "flow: step %d: the linear solve reached a relative residual of %.3e "
                         "in %d GMRES iterations, not %.3e",
                         k, step.linear_residual, step.linear_iterations, tolerance);
    if (monitor &&
        monitor(monitor_data, &step, &run.h.meshes[finest], &run.h.edges[finest], run.x) != 0)
      break;
  }
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
