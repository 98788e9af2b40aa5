/* The Crouzeix-Raviart Stokes system made on the device
 * (clmg_stokes_system_device, lib/flow/stokes_system_device.c) against the
 * host assembly (clmg_stokes_assemble_host): the same row offsets, columns
 * and values bit for bit on every level of the cavity, the DFG channel (a
 * do-nothing outflow), a randomly distorted box with Dirichlet, free-slip
 * and do-nothing sides and a reaction term, with and without the Newton
 * pattern, and the pentagon; an inverted triangle is refused with the
 * host's cell. */
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
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("stokes_system", tests, setup, teardown);
}
