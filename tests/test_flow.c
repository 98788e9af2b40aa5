/* Stokes multigrid with Vanka smoothing (clmg_stokes_multigrid_create,
 * Bauer, Klement, Oberhuber and Zabka): F-cycles as a solver on a
 * manufactured Stokes flow converge, with a rate per cycle that stays
 * bounded as levels are added, to the discrete solution (its L2 error
 * falls by the element's orders); the same on a mesh whose cells need
 * more than two colours, with stored and recomputed local inverses; and
 * as a GMRES preconditioner for a time step (mass term) with a
 * do-nothing outflow. Navier-Stokes (clmg_flow_solve): the cavity's
 * centre against Ghia, Ghia and Shin; the DFG 2D-1 drag and pressure
 * difference approaching Schaefer and Turek's values; time steps.
 * Residuals are recomputed on the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

static clmg_context *ctx;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)
#define CHECK_HOST(call, error) CHECK_ERROR_OK(error, call)

static double host_relative_residual(const clmg_csr *a, const double *b, const double *x) {
  double *r = malloc(a->rows * sizeof *r);
  assert_non_null(r);
  clmg_csr_spmv_host(1.0, a, x, 0.0, r);
  double rr = 0, bb = 0;
  for (size_t i = 0; i < a->rows; ++i) {
    rr += (b[i] - r[i]) * (b[i] - r[i]);
    bb += b[i] * b[i];
  }
  free(r);
  return sqrt(rr / bb);
}

/* b (n values of b_host) and x = 0 on the device. */
static void device_system(const double *b_host, size_t n, clmg_vector **b, clmg_vector **x) {
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, b));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, x));
  CHECK_OK(clmg_vector_upload_doubles(*b, b_host));
  CHECK_OK(clmg_vector_fill(*x, 0.0));
}

typedef struct solve_outcome {
  int cycles;
  double rate; /* geometric mean of the residual reduction per cycle */
  double u_error, p_error;
} solve_outcome;

/* Cycles of `type` with 2 + 2 Vanka steps on the finest level (times
 * `growth` per level below) to a relative residual of 1e-8 on `levels`
 * levels; solve_stokes: F-cycles, the default of
 * clmg_stokes_multigrid_create. */
static solve_outcome solve_stokes_with(const clmg_mesh *coarse, int levels, int stored,
                                       clmg_cycle_type type, double growth) {
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.force = stokes_manufactured_force;
  clmg_stokes_hierarchy h;
  clmg_error error = {{0}};
  CHECK_HOST(clmg_stokes_hierarchy_build(coarse, levels, &problem, &h, &error), error);
  clmg_vanka_options vanka;
  clmg_vanka_options_defaults(&vanka);
  vanka.store_inverses = stored;
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.pre_smoothing = options.post_smoothing = 2;
  options.cycle = type;
  options.smoothing_growth = growth;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_stokes_multigrid_create(ctx, &h, &vanka, &options, &mg));
  const clmg_csr *a = &h.a[levels - 1];
  size_t n = a->rows;
  clmg_vector *b = NULL, *x = NULL;
  device_system(h.b, n, &b, &x);
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = 1e-8;
  krylov.max_iterations = 60;
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_multigrid_solve(mg, b, x, &krylov, &result));
  double *xh = malloc(n * sizeof *xh);
  assert_non_null(xh);
  CHECK_OK(clmg_vector_download_doubles(x, xh));
  assert_true(host_relative_residual(a, h.b, xh) <= 1e-8);
  solve_outcome out = {result.iterations, pow(result.relative_residual, 1.0 / result.iterations), 0,
                       0};
  CHECK_HOST(clmg_stokes_l2_errors(&h.meshes[levels - 1], &h.edges[levels - 1], xh,
                                   stokes_exact_velocity, stokes_exact_pressure, NULL, &out.u_error,
                                   &out.p_error, &error),
             error);
  clmg_krylov_result_free(&result);
  free(xh);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(mg);
  clmg_stokes_hierarchy_free(&h);
  return out;
}

static solve_outcome solve_stokes(const clmg_mesh *coarse, int levels, int stored) {
  return solve_stokes_with(coarse, levels, stored, CLMG_CYCLE_F, 1.0);
}

/* Cycles converge at a rate that does not grow with the levels, to the
 * discrete solution: its errors fall by about 4 (velocity) and 2
 * (pressure) per refinement. */
static void test_stokes_cycles(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_box_simplices(2, 2, 0.0, 1, &coarse, &error), error);
  solve_outcome o[3];
  for (int k = 0; k < 3; ++k) {
    o[k] = solve_stokes(&coarse, 3 + k, 1);
    printf("  levels %d: %d cycles, rate %.3f, L2 errors u %.3e p %.3e\n", 3 + k, o[k].cycles,
           o[k].rate, o[k].u_error, o[k].p_error);
  }
  for (int k = 0; k < 3; ++k)
    assert_true(o[k].rate < 0.3);
  assert_true(o[2].rate <= o[0].rate + 0.05);
  assert_true(o[1].u_error < o[0].u_error / 3.0 && o[2].u_error < o[1].u_error / 3.0);
  assert_true(o[1].p_error < o[0].p_error / 1.7 && o[2].p_error < o[1].p_error / 1.7);
  clmg_mesh_free(&coarse);
}

/* The variable V-cycle (smoothing_growth 2: 2, 4, 8, ... steps from the
 * finest level down, at most twice the smoothing work of a V(2,2)-cycle on
 * triangles) converges at a rate that stays bounded from 3 to 6 levels,
 * where plain V-cycles lose speed (lib/flow/stokes_multigrid.c), and the
 * engine refuses a growth outside [1, 4]. */
static void test_stokes_variable_v(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_box_simplices(2, 2, 0.0, 1, &coarse, &error), error);
  double rate[4];
  for (int k = 0; k < 4; ++k) {
    solve_outcome o = solve_stokes_with(&coarse, 3 + k, 1, CLMG_CYCLE_V, 2.0);
    rate[k] = o.rate;
    printf("  variable V, %d levels: %d cycles, rate %.3f\n", 3 + k, o.cycles, o.rate);
    assert_true(o.rate < 0.35);
  }
  assert_true(rate[3] <= rate[0] + 0.1);
  clmg_stokes_hierarchy h;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 2, NULL, &h, &error), error);
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.smoothing_growth = 5.0;
  clmg_multigrid *mg = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_multigrid_create(ctx, &h, NULL, &options, &mg));
  CHECK_CONTAINS(clmg_context_message(ctx), "smoothing growth");
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

static void test_stokes_three_colours(void **state) {
  (void)state;
  clmg_mesh coarse;
  test_pentagon_mesh(&coarse);
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_check(&coarse, &error), error);
  clmg_triangle_edges edges;
  CHECK_HOST(clmg_triangle_edges_create(&coarse, &edges, &error), error);
  int32_t *unknowns = NULL, colour[5];
  int colours = 0;
  CHECK_HOST(clmg_stokes_cell_unknowns(&coarse, &edges, &unknowns, &error), error);
  CHECK_HOST(clmg_vanka_colour_cells(clmg_stokes_num_unknowns(&coarse, &edges), 5, 7, unknowns,
                                     colour, &colours, &error),
             error);
  assert_int_equal(colours, 3);
  free(unknowns);
  clmg_triangle_edges_free(&edges);
  for (int stored = 0; stored <= 1; ++stored) {
    solve_outcome o = solve_stokes(&coarse, 4, stored);
    printf("  pentagon, %s: %d cycles, rate %.3f\n", stored ? "SI" : "NSI", o.cycles, o.rate);
    assert_true(o.rate < 0.35);
  }
  clmg_mesh_free(&coarse);
}

/* A time step of a channel flow (mass term 1/tau, parabolic inflow on the
 * left, walls above and below, do-nothing outflow on the right): GMRES
 * with one cycle as preconditioner. The box's boundary (tag 1 all round)
 * is retagged by side: 1 left, 2 right, 3 below and above. */
enum { INFLOW = 1, OUTFLOW = 2, WALL = 3 };

static void inflow(const double *x, int32_t tag, double *u, void *data) {
  (void)data;
  u[0] = tag == INFLOW ? 4 * x[1] * (1 - x[1]) : 0.0;
  u[1] = 0.0;
}

static void test_stokes_gmres_time_step(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_box_simplices(2, 2, 0.0, 1, &coarse, &error), error);
  for (size_t f = 0; f < coarse.num_boundary_faces; ++f) {
    const double *p = coarse.coords + 2 * coarse.boundary_faces[2 * f];
    const double *q = coarse.coords + 2 * coarse.boundary_faces[2 * f + 1];
    coarse.boundary_face_tag[f] = p[0] == 0.0 && q[0] == 0.0   ? INFLOW
                                  : p[0] == 1.0 && q[0] == 1.0 ? OUTFLOW
                                                               : WALL;
  }
  const int32_t dirichlet[2] = {INFLOW, WALL};
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.01;
  problem.reaction = 100.0; /* 1 / tau */
  problem.boundary_velocity = inflow;
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 2;
  clmg_stokes_hierarchy h;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 5, &problem, &h, &error), error);
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_stokes_multigrid_create(ctx, &h, NULL, NULL, &mg));
  clmg_preconditioner cycle;
  CHECK_OK(clmg_multigrid_preconditioner(mg, &cycle));
  const clmg_csr *a = &h.a[4];
  size_t n = a->rows;
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, a, NULL, &matrix));
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op));
  clmg_vector *b = NULL, *x = NULL;
  device_system(h.b, n, &b, &x);
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = 1e-8;
  krylov.max_iterations = 40;
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_krylov_solve(CLMG_KRYLOV_GMRES, &op, b, x, &cycle, &krylov, &result));
  printf("  channel time step: GMRES with an F-cycle, %d iterations\n", result.iterations);
  assert_true(result.iterations <= 20);
  double *xh = malloc(n * sizeof *xh);
  assert_non_null(xh);
  CHECK_OK(clmg_vector_download_doubles(x, xh));
  assert_true(host_relative_residual(a, h.b, xh) <= 1e-8);
  free(xh);
  clmg_krylov_result_free(&result);
  clmg_preconditioner_destroy(&cycle);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_operator_destroy(&op);
  clmg_multigrid_destroy(mg);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

/* New values through clmg_stokes_multigrid_update (an Oseen step with
 * another wind, the patterns kept) give the cycle a multigrid made afresh
 * on those values gives: the same iterate after two cycles. */
static void swirl(const clmg_stokes_hierarchy *h, double scale, double *wind) {
  int finest = h->num_levels - 1;
  const clmg_triangle_edges *edges = &h->edges[finest];
  for (size_t e = 0; e < edges->num_edges; ++e) {
    const double *a = h->meshes[finest].coords + 2 * edges->edge_vertices[2 * e];
    const double *b = h->meshes[finest].coords + 2 * edges->edge_vertices[2 * e + 1];
    double x = 0.5 * (a[0] + b[0]), y = 0.5 * (a[1] + b[1]);
    wind[e] = scale * (y - 0.5);
    wind[edges->num_edges + e] = scale * (0.5 - x) + 0.3 * scale * x * y;
  }
}

static void cycle_twice(clmg_multigrid *mg, const double *b, size_t n, double *x) {
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &db));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
  CHECK_OK(clmg_vector_upload_doubles(db, b));
  CHECK_OK(clmg_vector_fill(dx, 0.0));
  CHECK_OK(clmg_multigrid_cycle(mg, db, dx));
  CHECK_OK(clmg_multigrid_cycle(mg, db, dx));
  CHECK_OK(clmg_vector_download_doubles(dx, x));
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
}

static void test_stokes_multigrid_update(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_box_simplices(2, 2, 0.0, 1, &coarse, &error), error);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.01;
  problem.reaction = 5.0;
  problem.force = stokes_manufactured_force;
  clmg_stokes_hierarchy first, second;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 4, &problem, &first, &error), error);
  size_t edges = first.edges[3].num_edges, n = first.a[3].rows;
  clmg_stokes_hierarchy_free(&first);
  double *wind = malloc(2 * edges * sizeof *wind), *updated = malloc(n * sizeof *updated),
         *fresh = malloc(n * sizeof *fresh);
  assert_true(wind && updated && fresh);
  /* the multigrid on the first values (no wind), then the second's pushed in */
  for (int stored = 0; stored <= 1; ++stored) {
    clmg_vanka_options vanka;
    clmg_vanka_options_defaults(&vanka);
    vanka.store_inverses = stored;
    clmg_multigrid *mg = NULL;
    CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 4, &problem, &first, &error), error);
    CHECK_OK(clmg_stokes_multigrid_create(ctx, &first, &vanka, NULL, &mg));
    swirl(&first, 2.0, wind);
    problem.wind = wind;
    CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 4, &problem, &second, &error), error);
    for (int l = 0; l < 4; ++l) {
      assert_int_equal(clmg_csr_nnz(&first.a[l]), clmg_csr_nnz(&second.a[l]));
      memcpy(first.a[l].val, second.a[l].val, clmg_csr_nnz(&first.a[l]) * sizeof(double));
    }
    memcpy(first.b, second.b, n * sizeof(double));
    CHECK_OK(clmg_stokes_multigrid_update(mg, &first));
    cycle_twice(mg, first.b, n, updated);
    clmg_multigrid_destroy(mg);
    CHECK_OK(clmg_stokes_multigrid_create(ctx, &second, &vanka, NULL, &mg));
    cycle_twice(mg, second.b, n, fresh);
    clmg_multigrid_destroy(mg);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < n; ++i) {
      worst = fmax(worst, fabs(updated[i] - fresh[i]));
      largest = fmax(largest, fabs(fresh[i]));
    }
    assert_true(largest > 0 && worst <= 1e-12 * largest);
    clmg_stokes_hierarchy_free(&second);
    clmg_stokes_hierarchy_free(&first);
    problem.wind = NULL;
  }
  free(wind);
  free(updated);
  free(fresh);
  clmg_mesh_free(&coarse);
}

/* ---- Navier-Stokes by Oseen steps (clmg_flow_solve) ---- */

static int count_steps(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                       const clmg_triangle_edges *edges, const double *x) {
  (void)mesh;
  (void)edges;
  (void)x;
  int *steps = data;
  assert_int_equal(step->step, *steps + 1);
  /* a time step solves to 1e-8; an Oseen step a hundredfold (inexact) */
  assert_true(step->linear_residual <= fmax(1e-8, 1.01e-2 * step->nonlinear_residual));
  (*steps)++;
  return 0;
}

static void cavity_lid(const double *x, int32_t tag, double *u, void *data) {
  (void)x;
  (void)data;
  u[0] = tag == CLMG_CAVITY_LID ? 1.0 : 0.0;
  u[1] = 0.0;
}

/* The lid-driven cavity at Re = 100 on 4 levels (2,048 triangles): the
 * Oseen iteration converges, and the centre's velocity is near Ghia, Ghia
 * and Shin's (1982: u = -0.20581 at (0.5, 0.5), v = 0.05454). */
static void test_flow_cavity(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_cavity(4, &coarse, &error), error);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.01;
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  problem.boundary_velocity = cavity_lid;
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = 4;
  int steps = 0;
  clmg_flow_result result;
  CHECK_OK(clmg_flow_solve(ctx, &coarse, &problem, &options, count_steps, &steps, &result));
  assert_true(result.converged && result.nonlinear_residual <= 1e-8);
  assert_int_equal(result.steps, steps);
  const double centre[2] = {0.5, 0.5};
  double u[2];
  CHECK_HOST(clmg_flow_sample_velocity(&result.mesh, &result.edges, result.x, centre, u, &error),
             error);
  printf("  cavity Re 100: %d Oseen iterations, %d GMRES, centre u %.4f v %.4f\n", result.steps,
         result.linear_iterations, u[0], u[1]);
  assert_true(fabs(u[0] + 0.20581) < 0.03 && fabs(u[1] - 0.05454) < 0.03);
  clmg_flow_result_free(&result);
  clmg_mesh_free(&coarse);
}

typedef struct dfg_data {
  double u_max;
} dfg_data;

static void dfg_inflow(const double *x, int32_t tag, double *u, void *data) {
  const dfg_data *d = data;
  u[0] = tag == CLMG_DFG_INFLOW ? clmg_dfg_inflow_u(x[1], d->u_max) : 0.0;
  u[1] = 0.0;
}

static const int32_t dfg_dirichlet[3] = {CLMG_DFG_INFLOW, CLMG_DFG_WALLS, CLMG_DFG_CYLINDER};

/* The DFG channel's flow (nu 1e-3, the inflow of data, no-slip walls and
 * cylinder, do-nothing outflow). */
static void dfg_problem(dfg_data *data, clmg_stokes_problem *problem) {
  clmg_stokes_problem_defaults(problem);
  problem->viscosity = 1e-3;
  problem->boundary_velocity = dfg_inflow;
  problem->boundary_data = data;
  problem->dirichlet_tags = dfg_dirichlet;
  problem->num_dirichlet_tags = 3;
}

/* DFG 2D-1 (Schaefer and Turek 1996: Re 20, c_D = 5.57953523384,
 * delta p = 0.11752016697) on 2 and 3 levels: the drag and the pressure
 * difference approach the reference as the level rises. */
static void test_flow_dfg1(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  dfg_data data = {0.3};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  double drag_error[2], dp_error[2];
  for (int k = 0; k < 2; ++k) {
    clmg_flow_options options;
    clmg_flow_options_defaults(&options);
    options.levels = 2 + k;
    clmg_flow_result result;
    CHECK_OK(clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result));
    double drag = 0, lift = 0, front = 0, back = 0;
    const double p_front[2] = {0.15, 0.2}, p_back[2] = {0.25, 0.2};
    CHECK_HOST(clmg_flow_drag_lift(&result.mesh, &result.edges, result.x, 1e-3, CLMG_DFG_CYLINDER,
                                   0.2, 0.1, &drag, &lift, &error),
               error);
    CHECK_HOST(clmg_flow_pressure_at(&result.mesh, result.x, result.edges.num_edges, p_front,
                                     &front, &error),
               error);
    CHECK_HOST(clmg_flow_pressure_at(&result.mesh, result.x, result.edges.num_edges, p_back, &back,
                                     &error),
               error);
    drag_error[k] = fabs(drag - 5.57953523384);
    dp_error[k] = fabs(front - back - 0.11752016697);
    printf("  DFG 2D-1, %d levels (%zu unknowns): c_D %.5f c_L %.5f dp %.5f\n", options.levels,
           result.unknowns, drag, lift, front - back);
    clmg_flow_result_free(&result);
  }
  assert_true(drag_error[1] < drag_error[0] && dp_error[1] < dp_error[0]);
  assert_true(drag_error[1] < 0.05 * 5.58 && dp_error[1] < 0.1 * 0.1175);
  clmg_mesh_free(&coarse);
}

/* ---- Newton steps (clmg_flow_options.linearisation) ---- */

/* The monitor of a Newton run: Picard steps until the residual is at most
 * newton_start, Newton steps after (the residual falls in each). */
typedef struct newton_watch {
  double start;
  int newton_steps, steps;
} newton_watch;

static int watch_newton(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                        const clmg_triangle_edges *edges, const double *x) {
  (void)mesh;
  (void)edges;
  (void)x;
  newton_watch *w = data;
  assert_int_equal(step->newton, step->nonlinear_residual <= w->start);
  w->newton_steps += step->newton;
  w->steps++;
  return 0;
}

/* ||b - A x|| / ||b|| of the Oseen system with x's velocity as wind (the
 * host assembly): the steady residual recomputed from x. */
static double oseen_residual(const clmg_flow_result *r, const clmg_stokes_problem *problem) {
  clmg_stokes_problem p = *problem;
  p.wind = r->x;
  p.newton = 0;
  clmg_csr a = {0};
  double *b = malloc(r->unknowns * sizeof *b);
  assert_non_null(b);
  clmg_error error = {{0}};
  CHECK_HOST(clmg_stokes_assemble_host(&r->mesh, &r->edges, &p, &a, b, &error), error);
  double residual = host_relative_residual(&a, b, r->x);
  clmg_csr_free(&a);
  free(b);
  return residual;
}

/* A steady flow by Picard and by Newton to tolerance: both converge, the
 * residual recomputed from x on the host meets it, Newton takes fewer
 * nonlinear iterations (at least two of them Newton steps, as the monitor
 * sees them) and GMRES iterations, and the two velocities agree; the
 * results in *picard and *newton. */
static void picard_and_newton(const clmg_mesh *coarse, const clmg_stokes_problem *problem,
                              int levels, double tolerance, clmg_flow_result *picard,
                              clmg_flow_result *newton) {
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = levels;
  options.nonlinear_tolerance = tolerance;
  CHECK_OK(clmg_flow_solve(ctx, coarse, problem, &options, NULL, NULL, picard));
  options.linearisation = CLMG_FLOW_NEWTON;
  newton_watch watch = {options.newton_start, 0, 0};
  CHECK_OK(clmg_flow_solve(ctx, coarse, problem, &options, watch_newton, &watch, newton));
  const clmg_flow_result *r[2] = {picard, newton};
  for (int k = 0; k < 2; ++k) {
    double residual = oseen_residual(r[k], problem);
    assert_true(r[k]->converged && r[k]->nonlinear_residual <= tolerance);
    assert_true(isfinite(residual) && residual <= 1.5 * tolerance);
  }
  printf("  nu %g, %d levels: Picard %d iterations (%d GMRES), Newton %d (%d Newton steps, %d "
         "GMRES)\n",
         problem->viscosity, levels, picard->steps, picard->linear_iterations, newton->steps,
         newton->newton_steps, newton->linear_iterations);
  assert_int_equal(picard->newton_steps, 0);
  assert_int_equal(newton->newton_steps, watch.newton_steps);
  assert_int_equal(newton->steps, watch.steps);
  assert_true(newton->newton_steps >= 2);
  assert_true(newton->steps < picard->steps);
  assert_true(newton->linear_iterations < picard->linear_iterations);
  /* the same discrete solution: the velocities within what the tolerance allows */
  assert_int_equal(newton->unknowns, picard->unknowns);
  const size_t velocities = 2 * newton->edges.num_edges;
  double largest = 0, difference = 0;
  for (size_t i = 0; i < velocities; ++i) {
    largest = fmax(largest, fabs(picard->x[i]));
    difference = fmax(difference, fabs(newton->x[i] - picard->x[i]));
  }
  printf("  largest velocity difference %.2e (of %.2e)\n", difference, largest);
  assert_true(difference <= 1e3 * tolerance * largest);
}

/* The lid-driven cavity at Re 100 and 400 on 3 levels. */
static void test_flow_newton_cavity(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_cavity(4, &coarse, &error), error);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  problem.boundary_velocity = cavity_lid;
  const double viscosities[2] = {0.01, 0.0025};
  for (int k = 0; k < 2; ++k) {
    problem.viscosity = viscosities[k];
    clmg_flow_result picard, newton;
    picard_and_newton(&coarse, &problem, 3, 1e-9, &picard, &newton);
    clmg_flow_result_free(&picard);
    clmg_flow_result_free(&newton);
  }
  clmg_mesh_free(&coarse);
}

/* DFG 2D-1 on 2 levels: the drag and the pressure difference of Newton's
 * solution are Picard's, and Newton is refused for time steps. */
static void test_flow_newton_dfg1(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  dfg_data data = {0.3};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  clmg_flow_result r[2];
  picard_and_newton(&coarse, &problem, 2, 1e-10, &r[0], &r[1]);
  double drag[2], dp[2];
  for (int k = 0; k < 2; ++k) {
    double lift = 0, front = 0, back = 0;
    const double p_front[2] = {0.15, 0.2}, p_back[2] = {0.25, 0.2};
    CHECK_HOST(clmg_flow_drag_lift(&r[k].mesh, &r[k].edges, r[k].x, 1e-3, CLMG_DFG_CYLINDER, 0.2,
                                   0.1, &drag[k], &lift, &error),
               error);
    CHECK_HOST(
        clmg_flow_pressure_at(&r[k].mesh, r[k].x, r[k].edges.num_edges, p_front, &front, &error),
        error);
    CHECK_HOST(
        clmg_flow_pressure_at(&r[k].mesh, r[k].x, r[k].edges.num_edges, p_back, &back, &error),
        error);
    dp[k] = front - back;
    clmg_flow_result_free(&r[k]);
  }
  printf("  DFG 2D-1: c_D %.10f (Picard) %.10f (Newton), dp %.10f %.10f\n", drag[0], drag[1], dp[0],
         dp[1]);
  assert_true(fabs(drag[1] - drag[0]) <= 1e-6 * drag[0]);
  assert_true(fabs(dp[1] - dp[0]) <= 1e-6 * dp[0]);
  /* time steps take Picard iterations only */
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = 1;
  options.steady = 0;
  options.steps = 1;
  options.linearisation = CLMG_FLOW_NEWTON;
  clmg_flow_result result;
  assert_int_equal(clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "steady"));
  options.steady = 1;
  options.linearisation = (clmg_flow_linearisation)2;
  assert_int_equal(clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "linearisation"));
  clmg_flow_linearisation parsed = CLMG_FLOW_PICARD;
  assert_true(clmg_flow_linearisation_parse("newton", &parsed) && parsed == CLMG_FLOW_NEWTON);
  assert_false(clmg_flow_linearisation_parse("secant", &parsed));
  assert_string_equal(clmg_flow_linearisation_name(CLMG_FLOW_PICARD), "picard");
  clmg_mesh_free(&coarse);
}

/* Time steps of the channel: every step's linear solve meets 1e-8, the
 * monitor sees each, and the result holds the last. */
static void test_flow_time_steps(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  dfg_data data = {1.5};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = 2;
  options.steady = 0;
  options.time_step = 0.01;
  options.steps = 3;
  int steps = 0;
  clmg_flow_result result;
  CHECK_OK(clmg_flow_solve(ctx, &coarse, &problem, &options, count_steps, &steps, &result));
  assert_int_equal(steps, 3);
  assert_int_equal(result.steps, 3);
  assert_true(result.converged);
  clmg_flow_result_free(&result);
  clmg_mesh_free(&coarse);
}

/* A smooth start of the inflow: 0 at t = 0 with its derivative, 1 at t = T. */
static double ramp(double t, void *data) {
  const double *period = data;
  return 0.5 * (1.0 - cos(3.14159265358979323846 * t / *period));
}

/* The channel's flow (nu 0.01, inflow of peak 1.5 ramped up over [0, T])
 * at t = T by `scheme` with `steps` time steps, on 2 levels: the velocity
 * (2E values, malloc'ed). */
static double *channel_at(const clmg_mesh *coarse, clmg_flow_time_scheme scheme, int steps,
                          double *period, size_t *velocities) {
  dfg_data data = {1.5};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  problem.viscosity = 1e-2;
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = 2;
  options.steady = 0;
  options.time_scheme = scheme;
  options.time_step = *period / steps;
  options.steps = steps;
  options.linear_tolerance = 1e-11;
  options.boundary_scale = ramp;
  options.boundary_scale_data = period;
  clmg_flow_result result;
  CHECK_OK(clmg_flow_solve(ctx, coarse, &problem, &options, NULL, NULL, &result));
  assert_true(result.converged);
  assert_int_equal(result.steps, steps);
  *velocities = 2 * result.edges.num_edges;
  double *u = malloc(*velocities * sizeof *u);
  assert_non_null(u);
  memcpy(u, result.x, *velocities * sizeof *u);
  /* the inflow's Dirichlet values are those of t = T (the ramp's 1) */
  for (size_t e = 0; e < result.edges.num_edges; e++)
    if (result.edges.edge_tag[e] == CLMG_DFG_INFLOW) {
      const int32_t *v = result.edges.edge_vertices + 2 * e;
      double y = 0.5 * (result.mesh.coords[2 * v[0] + 1] + result.mesh.coords[2 * v[1] + 1]);
      assert_true(fabs(u[e] - clmg_dfg_inflow_u(y, 1.5)) < 1e-8);
    }
  clmg_flow_result_free(&result);
  return u;
}

static double distance(const double *a, const double *b, size_t n) {
  double sum = 0.0;
  for (size_t i = 0; i < n; i++)
    sum += (a[i] - b[i]) * (a[i] - b[i]);
  return sqrt(sum);
}

/* The time schemes' orders on a fixed mesh (the spatial error the same in
 * every run): the channel's flow started by a smooth ramp of the inflow at
 * t = T with 4, 8 and 16 steps; the differences of successive runs shrink
 * by 2^order: about 2 for backward Euler, about 4 for Crank-Nicolson, the
 * fractional-step theta scheme and BDF2. */
static void test_flow_time_order(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  double period = 0.1;
  const clmg_flow_time_scheme schemes[4] = {CLMG_FLOW_BACKWARD_EULER, CLMG_FLOW_CRANK_NICOLSON,
                                            CLMG_FLOW_FS_THETA, CLMG_FLOW_BDF2};
  for (int k = 0; k < 4; k++) {
    double *u[3];
    size_t n = 0;
    for (int r = 0; r < 3; r++)
      u[r] = channel_at(&coarse, schemes[k], 4 << r, &period, &n);
    double d1 = distance(u[0], u[1], n), d2 = distance(u[1], u[2], n);
    printf("  %-14s |u_4 - u_8| %.3e, |u_8 - u_16| %.3e: ratio %.2f\n",
           clmg_flow_time_scheme_name(schemes[k]), d1, d2, d1 / d2);
    if (schemes[k] == CLMG_FLOW_BACKWARD_EULER)
      assert_true(d1 / d2 > 1.6 && d1 / d2 < 2.6);
    else
      assert_true(d1 / d2 > 3.2 && d1 / d2 < 5.5);
    for (int r = 0; r < 3; r++)
      free(u[r]);
  }
  clmg_mesh_free(&coarse);
}

typedef struct dfg_watch {
  double drag, lift;
  int steps;
} dfg_watch;

/* Every step's drag and lift are finite; the last kept. */
static int watch_dfg(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                     const clmg_triangle_edges *edges, const double *x) {
  dfg_watch *w = data;
  clmg_error error = {{0}};
  CHECK_HOST(clmg_flow_drag_lift(mesh, edges, x, 1e-3, CLMG_DFG_CYLINDER, 1.0, 0.1, &w->drag,
                                 &w->lift, &error),
             error);
  assert_true(isfinite(w->drag) && isfinite(w->lift));
  assert_true(step->linear_residual <= 1e-8);
  w->steps++;
  return 0;
}

/* A short DFG 2D-2 run (Re 100, inflow peak 1.5) with clmg flow's defaults
 * for it (Crank-Nicolson, the weighted upwind of parameter 0.1) and the
 * fractional-step theta scheme with central differences, on 2 levels to
 * t = 0.5: every step finite, the drag near the benchmark's mean (about
 * 3.2; Schaefer and Turek 1996) and the lift small (the vortex street has
 * not started). Bad schemes and upwinds are refused. */
static void test_flow_dfg2_short(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  dfg_data data = {1.5};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  const clmg_flow_time_scheme schemes[2] = {CLMG_FLOW_CRANK_NICOLSON, CLMG_FLOW_FS_THETA};
  const double parameters[2] = {0.1, 0.0};
  for (int k = 0; k < 2; k++) {
    clmg_flow_options options;
    clmg_flow_options_defaults(&options);
    options.levels = 2;
    options.steady = 0;
    options.time_step = 0.02;
    options.steps = 25;
    options.time_scheme = schemes[k];
    options.upwind = CLMG_STOKES_UPWIND_WEIGHTED;
    options.upwind_parameter = parameters[k];
    dfg_watch watch = {0};
    clmg_flow_result result;
    CHECK_OK(clmg_flow_solve(ctx, &coarse, &problem, &options, watch_dfg, &watch, &result));
    printf("  DFG 2D-2 to t = 0.5, %s, upwind parameter %g: c_D %.4f c_L %.4f\n",
           clmg_flow_time_scheme_name(schemes[k]), parameters[k], watch.drag, watch.lift);
    assert_int_equal(watch.steps, 25);
    assert_true(watch.drag > 2.0 && watch.drag < 4.5);
    assert_true(fabs(watch.lift) < 0.5);
    clmg_flow_result_free(&result);
  }
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.steady = 0;
  options.levels = 1;
  clmg_flow_result result;
  options.time_scheme = (clmg_flow_time_scheme)7;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result));
  CHECK_CONTAINS(clmg_context_message(ctx), "time scheme");
  options.time_scheme = CLMG_FLOW_BDF2;
  options.upwind = 3;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result));
  CHECK_CONTAINS(clmg_context_message(ctx), "upwind");
  options.upwind = CLMG_STOKES_UPWIND_WEIGHTED;
  options.upwind_parameter = -1.0;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result));
  CHECK_CONTAINS(clmg_context_message(ctx), "upwind parameter");
  clmg_flow_time_scheme parsed = CLMG_FLOW_BACKWARD_EULER;
  assert_true(clmg_flow_time_scheme_parse("fs-theta", &parsed) && parsed == CLMG_FLOW_FS_THETA);
  assert_false(clmg_flow_time_scheme_parse("theta", &parsed));
  assert_string_equal(clmg_flow_time_scheme_name(CLMG_FLOW_BDF2), "bdf2");
  clmg_mesh_free(&coarse);
}

typedef struct drag_history {
  double drag[3]; /* the last three steps' drag, the newest last */
  int steps;
} drag_history;

static int keep_drag(void *data, const clmg_flow_step *step, const clmg_mesh *mesh,
                     const clmg_triangle_edges *edges, const double *x) {
  (void)step;
  drag_history *h = data;
  clmg_error error = {{0}};
  double lift;
  h->drag[0] = h->drag[1];
  h->drag[1] = h->drag[2];
  CHECK_HOST(clmg_flow_drag_lift(mesh, edges, x, 1e-3, CLMG_DFG_CYLINDER, 1.0, 0.1, &h->drag[2],
                                 &lift, &error),
             error);
  h->steps++;
  return 0;
}

/* Crank-Nicolson at a large time step (DFG 2D-2's channel at Re 100 on 2
 * levels, time steps of 0.08: far above the wall cells' viscous scale)
 * settles on the steady flow of the same mesh, which this coarse a mesh
 * has (no vortex street): after 30 steps (t = 2.4) the drag is within 1%
 * of the steady drag and no longer oscillates from step to step. With one
 * linear solve per step (the extrapolated wind only: step_iterations 1,
 * the default before) the oscillation grew instead and the drag stood 35%
 * above (4.07 against 3.02); docs/flow.md. */
static void test_flow_crank_nicolson_settles(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  dfg_data data = {1.5};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = 2;
  options.upwind = CLMG_STOKES_UPWIND_WEIGHTED;
  options.upwind_parameter = 0.1;
  drag_history steady = {{0}, 0};
  clmg_flow_result result;
  CHECK_OK(clmg_flow_solve(ctx, &coarse, &problem, &options, keep_drag, &steady, &result));
  clmg_flow_result_free(&result);
  options.steady = 0;
  options.time_step = 0.08;
  options.steps = 30;
  options.time_scheme = CLMG_FLOW_CRANK_NICOLSON;
  drag_history h = {{0}, 0};
  CHECK_OK(clmg_flow_solve(ctx, &coarse, &problem, &options, keep_drag, &h, &result));
  clmg_flow_result_free(&result);
  const double oscillation = fabs(h.drag[2] - 2.0 * h.drag[1] + h.drag[0]) / 4.0;
  printf("  steady c_D %.5f; Crank-Nicolson, time steps of 0.08, at t = 2.4: c_D %.5f, "
         "step-to-step oscillation %.2e\n",
         steady.drag[2], h.drag[2], oscillation);
  assert_int_equal(h.steps, 30);
  assert_true(fabs(h.drag[2] / steady.drag[2] - 1.0) < 0.01);
  assert_true(oscillation < 2e-3);
  /* the count of solves per step is checked */
  options.step_iterations = -1;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_solve(ctx, &coarse, &problem, &options, NULL, NULL, &result));
  CHECK_CONTAINS(clmg_context_message(ctx), "linear solves per time step");
  clmg_mesh_free(&coarse);
}

/* The directional do-nothing term (lib/flow/stokes_internal.h): with the
 * wind reversed, (-1, 0) everywhere (divergence free), the flow enters the
 * DFG channel through its do-nothing outflow. The central convection's
 * energy u^T N(w) u is then -1/2 the sum of |F_e| u_e^2 over those edges
 * (the backflow instability that stopped DFG 2D-3 at t = 7.93 on level 2,
 * docs/flow.md); the term cancels it, so the Oseen operator's energy
 * u^T A u stays nonnegative for u = 1 on the outflow edges (x component),
 * 0 elsewhere. Without the term it was about -0.2. */
static void test_flow_outflow_backflow(void **state) {
  (void)state;
  clmg_mesh mesh = {0};
  clmg_triangle_edges edges = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_dfg_channel(&mesh, &error), error);
  CHECK_HOST(clmg_triangle_edges_create(&mesh, &edges, &error), error);
  const size_t ne = edges.num_edges, n = 2 * ne + mesh.num_cells;
  dfg_data data = {1.5};
  clmg_stokes_problem problem;
  dfg_problem(&data, &problem);
  problem.upwind = CLMG_STOKES_UPWIND_WEIGHTED;
  problem.upwind_parameter = 0.0; /* central differences */
  double *wind = calloc(2 * ne, sizeof *wind), *u = calloc(n, sizeof *u);
  double *b = calloc(n, sizeof *b);
  assert_true(wind && u && b);
  for (size_t e = 0; e < ne; e++) {
    wind[e] = -1.0;
    u[e] = edges.edge_tag[e] == CLMG_DFG_OUTFLOW ? 1.0 : 0.0;
  }
  problem.wind = wind;
  clmg_csr a = {0};
  CHECK_HOST(clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error), error);
  double energy = 0.0;
  for (size_t i = 0; i < ne; i++)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      energy += u[i] * a.val[k] * u[a.col[k]];
  printf("  the reversed wind through the do-nothing outflow: u^T A u = %.3e\n", energy);
  assert_true(energy >= 0.0);
  clmg_csr_free(&a);
  free(wind);
  free(u);
  free(b);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

static int setup(void **state) {
  (void)state;
  rng_seed(2016);
  return test_open_context(&ctx, NULL, "flow", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stokes_cycles),
      cmocka_unit_test(test_stokes_variable_v),
      cmocka_unit_test(test_stokes_three_colours),
      cmocka_unit_test(test_stokes_gmres_time_step),
      cmocka_unit_test(test_stokes_multigrid_update),
      cmocka_unit_test(test_flow_cavity),
      cmocka_unit_test(test_flow_dfg1),
      cmocka_unit_test(test_flow_newton_cavity),
      cmocka_unit_test(test_flow_newton_dfg1),
      cmocka_unit_test(test_flow_time_steps),
      cmocka_unit_test(test_flow_time_order),
      cmocka_unit_test(test_flow_dfg2_short),
      cmocka_unit_test(test_flow_crank_nicolson_settles),
      cmocka_unit_test(test_flow_outflow_backflow),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("flow", tests, setup, teardown);
}
