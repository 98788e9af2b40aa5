/* The Crouzeix-Raviart Stokes system made on the device
 * (clmg_stokes_system_device, lib/flow/stokes_system_device.c) against the
 * host assembly (clmg_stokes_assemble_host): the same row offsets, columns
 * and values bit for bit on every level of the cavity, the DFG channel (a
 * do-nothing outflow), a randomly distorted box with Dirichlet, free-slip
 * and do-nothing sides and a reaction term, with and without the Newton
 * pattern, and the pentagon; an inverted triangle is refused with the
 * host's cell. The hierarchy built with them (clmg_stokes_hierarchy_build_
 * device) is the host's bit for bit, and a short DFG 2D-2 run gives the same
 * solution and GMRES iterations with the set-up on the device as on the
 * host. */
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
#include "flow/stokes_internal.h"
#include "test_util.h"

static clmg_context *ctx;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)
#define CHECK_HOST(call, error) CHECK_ERROR_OK(error, call)

/* Level l's device system equals the host's bit for bit. */
static void check_level(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                        const clmg_stokes_problem *problem, int level) {
  clmg_error error = {{0}};
  const size_t n = clmg_stokes_num_unknowns(mesh, edges);
  double *b = malloc(n * sizeof *b);
  assert_non_null(b);
  clmg_csr host = {0}, device = {0};
  CHECK_HOST(clmg_stokes_assemble_host(mesh, edges, problem, &host, b, &error), error);
  clmg_csr_device arrays = {0};
  CHECK_OK(clmg_stokes_system_device(ctx, mesh, edges, problem, &arrays));
  CHECK_HOST(clmg_csr_device_download(&arrays, &device, &error), error);
  assert_int_equal(device.rows, host.rows);
  assert_int_equal(device.cols, host.cols);
  for (size_t i = 0; i <= n; i++)
    if (device.row_ptr[i] != host.row_ptr[i])
      fail_msg("level %d: row_ptr[%zu] device %lld, host %lld", level, i,
               (long long)device.row_ptr[i], (long long)host.row_ptr[i]);
  const size_t nnz = clmg_csr_nnz(&host);
  for (size_t k = 0; k < nnz; k++) {
    if (device.col[k] != host.col[k])
      fail_msg("level %d: col[%zu] device %d, host %d", level, k, (int)device.col[k],
               (int)host.col[k]);
    if (memcmp(&device.val[k], &host.val[k], sizeof(double)) != 0)
      fail_msg("level %d: val[%zu] device %.17g, host %.17g", level, k, device.val[k], host.val[k]);
  }
  clmg_csr_free(&host);
  clmg_csr_free(&device);
  clmg_csr_device_free(&arrays);
  free(b);
}

/* Every level of `levels` refinements of coarse. */
static void check_levels(const clmg_mesh *coarse, int levels, const clmg_stokes_problem *problem) {
  clmg_error error = {{0}};
  clmg_mesh mesh;
  CHECK_HOST(clmg_mesh_copy(coarse, &mesh, &error), error);
  for (int l = 0; l < levels; l++) {
    if (l > 0) {
      clmg_mesh finer = test_refined(&mesh);
      clmg_mesh_free(&mesh);
      mesh = finer;
    }
    clmg_triangle_edges edges = test_edges_of(&mesh);
    check_level(&mesh, &edges, problem, l);
    clmg_triangle_edges_free(&edges);
  }
  clmg_mesh_free(&mesh);
}

static void lid_and_inflow(const double *x, int32_t tag, double *u, void *data) {
  (void)data;
  u[0] = tag == 4 ? 4.0 * x[1] * (1.0 - x[1]) : tag == 3 ? 1.0 : 0.0;
  u[1] = tag == 4 ? 0.1 * sin(3.0 * x[1]) : 0.0;
}

/* The cavity: every boundary edge Dirichlet. */
static void test_cavity(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh coarse;
  CHECK_HOST(clmg_mesh_cavity(4, &coarse, &error), error);
  clmg_flow_case_setup setup;
  CHECK_HOST(clmg_flow_case_create(CLMG_FLOW_CAVITY, 100.0, NULL, 0, 0, &setup, &error), error);
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  check_levels(&coarse, 4, &problem);
  problem.reaction = 50.0; /* a time step's mass term */
  check_levels(&coarse, 2, &problem);
  clmg_mesh_free(&coarse);
}

/* The DFG channel: inflow and walls Dirichlet, the outflow do-nothing; with
 * a time step's mass term and with the Newton pattern. */
static void test_dfg_channel(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh coarse;
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  clmg_flow_case_setup setup;
  CHECK_HOST(clmg_flow_case_create(CLMG_FLOW_DFG2, 100.0, NULL, 0, 0, &setup, &error), error);
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  problem.reaction = 1.0 / 0.005;
  check_levels(&coarse, 3, &problem);
  problem.newton = 1;
  check_levels(&coarse, 2, &problem);
  clmg_mesh_free(&coarse);
}

/* A distorted box: sides 3 and 4 Dirichlet, side 1 free slip, side 2
 * do-nothing; random distortions, a reaction, the Newton pattern, and no
 * problem at all (the defaults: every boundary edge Dirichlet). */
static void test_distorted_mixed(void **state) {
  (void)state;
  static const int32_t dirichlet[2] = {3, 4}, slip[1] = {1};
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.013;
  problem.boundary_velocity = lid_and_inflow;
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip;
  problem.num_slip_tags = 1;
  for (uint64_t seed = 1; seed <= 3; seed++) {
    clmg_mesh coarse = test_side_tagged_box(3 + (int)seed, 0.25, seed);
    problem.reaction = seed == 2 ? 0.0 : 7.5 * (double)seed;
    problem.newton = seed == 3;
    check_levels(&coarse, 3, &problem);
    if (seed == 1)
      check_levels(&coarse, 2, NULL);
    clmg_mesh_free(&coarse);
  }
  clmg_mesh pentagon;
  test_pentagon_mesh(&pentagon);
  problem.num_dirichlet_tags = 0; /* every tag not free slip: all Dirichlet */
  problem.num_slip_tags = 0;
  check_levels(&pentagon, 3, &problem);
  clmg_mesh_free(&pentagon);
}

/* An inverted triangle is refused, named as the host names it. */
static void test_refuses_inverted(void **state) {
  (void)state;
  clmg_mesh mesh = test_side_tagged_box(3, 0.0, 1);
  clmg_triangle_edges edges = test_edges_of(&mesh);
  int32_t *cell = mesh.cells + 3 * 4, *cell_edges = edges.cell_edges + 3 * 4;
  int32_t kept = cell[1]; /* triangle 4 turned clockwise, its edges with it */
  cell[1] = cell[2];
  cell[2] = kept;
  kept = cell_edges[1];
  cell_edges[1] = cell_edges[2];
  cell_edges[2] = kept;
  clmg_csr_device arrays = {0};
  assert_int_equal(clmg_stokes_system_device(ctx, &mesh, &edges, NULL, &arrays),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(arrays.row_ptr);
  assert_non_null(strstr(clmg_context_message(ctx), "cell 4 is inverted"));
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* A negative viscosity is refused before any kernel runs (the Dirichlet
 * mask's checks are the host assembly's), with the host's message. */
static void test_refuses_bad_viscosity(void **state) {
  (void)state;
  clmg_mesh mesh = test_side_tagged_box(3, 0.0, 1);
  clmg_triangle_edges edges = test_edges_of(&mesh);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = -1.0;
  clmg_csr_device arrays = {0};
  assert_int_equal(clmg_stokes_system_device(ctx, &mesh, &edges, &problem, &arrays),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(arrays.row_ptr);
  assert_non_null(strstr(clmg_context_message(ctx), "the viscosity is -1"));
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* Two CSR matrices with the same arrays, bit for bit. */
static void expect_same_csr(const clmg_csr *x, const clmg_csr *y, const char *what, int level) {
  assert_int_equal(x->rows, y->rows);
  assert_int_equal(x->cols, y->cols);
  if (memcmp(x->row_ptr, y->row_ptr, (x->rows + 1) * sizeof *x->row_ptr) != 0)
    fail_msg("level %d: %s's row offsets differ", level, what);
  const size_t nnz = clmg_csr_nnz(x);
  if (nnz && (memcmp(x->col, y->col, nnz * sizeof *x->col) != 0 ||
              memcmp(x->val, y->val, nnz * sizeof *x->val) != 0))
    fail_msg("level %d: %s's columns or values differ", level, what);
}

/* clmg_stokes_hierarchy_build_device against clmg_stokes_hierarchy_build:
 * every level's A and P, the finest b, and the device arrays kept. */
static void check_hierarchy(const clmg_mesh *coarse, int levels,
                            const clmg_stokes_problem *problem) {
  clmg_error error = {{0}};
  clmg_stokes_hierarchy host, device;
  clmg_csr_device arrays[4];
  assert_true(levels <= 4);
  CHECK_HOST(clmg_stokes_hierarchy_build(coarse, levels, problem, &host, &error), error);
  CHECK_HOST(
      clmg_stokes_hierarchy_build_device(ctx, coarse, levels, problem, &device, arrays, &error),
      error);
  for (int l = 0; l < levels; l++) {
    expect_same_csr(&device.a[l], &host.a[l], "A", l);
    if (l > 0)
      expect_same_csr(&device.p[l], &host.p[l], "P", l);
    clmg_csr kept = {0};
    CHECK_HOST(clmg_csr_device_download(&arrays[l], &kept, &error), error);
    expect_same_csr(&kept, &host.a[l], "the device A", l);
    clmg_csr_free(&kept);
    clmg_csr_device_free(&arrays[l]);
  }
  const size_t n = host.a[levels - 1].rows;
  assert_memory_equal(device.b, host.b, n * sizeof *host.b);
  clmg_stokes_hierarchy_free(&host);
  clmg_stokes_hierarchy_free(&device);
}

static void force(const double *x, double *f, void *data) {
  (void)data;
  f[0] = sin(2.0 * x[0]) + x[1];
  f[1] = cos(x[0] * x[1]);
}

/* The hierarchy with its matrices made on the device: the DFG channel with
 * a time step's mass term, a distorted box with mixed sides, a force and
 * the Newton pattern. */
static void test_hierarchy_on_device(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh coarse;
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  clmg_flow_case_setup setup;
  CHECK_HOST(clmg_flow_case_create(CLMG_FLOW_DFG2, 100.0, NULL, 0, 0, &setup, &error), error);
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  problem.reaction = 1.0 / 0.005;
  check_hierarchy(&coarse, 3, &problem);
  clmg_mesh_free(&coarse);
  static const int32_t dirichlet[2] = {3, 4}, slip[1] = {1};
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.02;
  problem.reaction = 3.0;
  problem.boundary_velocity = lid_and_inflow;
  problem.force = force;
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip;
  problem.num_slip_tags = 1;
  problem.newton = 1;
  coarse = test_side_tagged_box(4, 0.2, 9);
  check_hierarchy(&coarse, 3, &problem);
  clmg_mesh_free(&coarse);
}

/* DFG 2D-2 at level 2, a few Crank-Nicolson steps, with the set-up on the
 * host and on the device (the device table's stokes_setup_on_device): the
 * same GMRES iterations and the same solution, bit for bit, so the same
 * drag and lift. */
static void test_flow_same_on_device(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh coarse;
  CHECK_HOST(clmg_mesh_dfg_channel(&coarse, &error), error);
  clmg_flow_case_setup setup;
  CHECK_HOST(clmg_flow_case_create(CLMG_FLOW_DFG2, 100.0, NULL, 0, 0, &setup, &error), error);
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  clmg_flow_options options;
  clmg_flow_options_defaults(&options);
  options.levels = 3;
  options.steady = 0;
  options.steps = 3;
  options.time_step = 0.01;
  options.time_scheme = CLMG_FLOW_CRANK_NICOLSON;
  clmg_flow_result results[2];
  double drag[2], lift[2], dp[2];
  const char *params[2] = {"stokes_setup_on_device=0", "stokes_setup_on_device=1"};
  for (int k = 0; k < 2; k++) {
    clmg_context *context = NULL;
    assert_int_equal(test_open_context_params(&context, params[k], "stokes_system", 0), 0);
    CHECK_CONTEXT_OK(
        context, clmg_flow_solve(context, &coarse, &problem, &options, NULL, NULL, &results[k]));
    CHECK_HOST(clmg_flow_case_quantities(&setup, &results[k].mesh, &results[k].edges, results[k].x,
                                         &drag[k], &lift[k], &dp[k], &error),
               error);
    test_close_context(&context);
  }
  assert_int_equal(results[0].steps, 3);
  assert_int_equal(results[1].steps, results[0].steps);
  assert_int_equal(results[1].linear_iterations, results[0].linear_iterations);
  assert_int_equal(results[1].unknowns, results[0].unknowns);
  assert_memory_equal(results[1].x, results[0].x, results[0].unknowns * sizeof(double));
  assert_true(drag[1] == drag[0] && lift[1] == lift[0] && dp[1] == dp[0]);
  printf("  DFG 2D-2 level 2, 3 steps: c_D %.10f c_L %.10f dp %.10f, %d GMRES iterations\n",
         drag[0], lift[0], dp[0], results[0].linear_iterations);
  clmg_flow_result_free(&results[0]);
  clmg_flow_result_free(&results[1]);
  clmg_mesh_free(&coarse);
}

static int setup(void **state) {
  (void)state;
  rng_seed(71);
  return test_open_context(&ctx, NULL, "stokes_system", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cavity),
      cmocka_unit_test(test_dfg_channel),
      cmocka_unit_test(test_distorted_mixed),
      cmocka_unit_test(test_refuses_inverted),
      cmocka_unit_test(test_refuses_bad_viscosity),
      cmocka_unit_test(test_hierarchy_on_device),
      cmocka_unit_test(test_flow_same_on_device),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("stokes_system", tests, setup, teardown);
}
