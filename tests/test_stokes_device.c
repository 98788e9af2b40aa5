/* The Oseen systems refilled on the device (clmg_stokes_assembler, Bauer,
 * Klement, Oberhuber and Zabka section 5.3) against the host refill
 * (clmg_stokes_update_values_host with the winds restricted by
 * clmg_stokes_restrict_velocity): every level's values and the finest
 * right-hand side for random winds and previous velocities, with
 * Dirichlet, free-slip and natural boundaries, every upwind scheme, scaled
 * boundary data, the Newton term, a mesh
 * that needs three colours; the multigrid on the device values solves the
 * host's system; bad input is refused. */
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

static void lid_and_inflow(const double *x, int32_t tag, double *u, void *data) {
  (void)data;
  u[0] = tag == 4 ? 4.0 * x[1] * (1.0 - x[1]) : tag == 3 ? 1.0 : 0.0;
  u[1] = tag == 4 ? 0.1 * sin(3.0 * x[1]) : 0.0;
}

static void force(const double *x, double *f, void *data) {
  (void)data;
  f[0] = sin(2.0 * x[0]) + x[1];
  f[1] = cos(x[0] * x[1]);
}

static double *random_velocity(size_t n) {
  double *v = malloc((n + 1) * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < n; i++)
    v[i] = 2.0 * rng_uniform() - 1.0;
  return v;
}

static clmg_vector *device_copy(const double *host, size_t n) {
  clmg_vector *v = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &v));
  CHECK_OK(clmg_vector_upload_doubles(v, host));
  return v;
}

static void expect_close(const double *device, const double *host, size_t n, const char *what,
                         int level) {
  double largest = 0.0;
  for (size_t i = 0; i < n; i++)
    largest = fmax(largest, fabs(host[i]));
  assert_true(largest > 0.0);
  for (size_t i = 0; i < n; i++)
    if (!(fabs(device[i] - host[i]) <= 1e-12 * largest))
      fail_msg("level %d, %s entry %zu: device %.17g, host %.17g", level, what, i, device[i],
               host[i]);
}

/* A problem's boundary velocity times a factor. */
typedef struct scaled_boundary {
  const clmg_stokes_problem *problem;
  double scale;
} scaled_boundary;

static void scaled_velocity(const double *x, int32_t tag, double *u, void *data) {
  const scaled_boundary *s = data;
  u[0] = u[1] = 0.0;
  if (s->problem->boundary_velocity)
    s->problem->boundary_velocity(x, tag, u, s->problem->boundary_data);
  u[0] *= s->scale;
  u[1] *= s->scale;
}

/* The hierarchy of `levels` levels on `coarse` for `problem` (wind and
 * previous NULL), the assembler on it, one update with a random wind and
 * previous velocity, the Dirichlet values times `scale`
 * (clmg_stokes_assembler_set_boundary_scale), and every level compared with
 * the host refill of the scaled boundary data. */
static void check_against_host(const clmg_mesh *coarse, int levels,
                               const clmg_stokes_problem *problem, double scale) {
  clmg_error error = {{0}};
  clmg_stokes_hierarchy h;
  CHECK_HOST(clmg_stokes_hierarchy_build(coarse, levels, problem, &h, &error), error);
  clmg_stokes_assembler *assembler = NULL;
  CHECK_OK(clmg_stokes_assembler_create(ctx, &h, problem, &assembler));
  const int finest = levels - 1;
  const size_t ef = h.edges[finest].num_edges;
  double *wind = random_velocity(2 * ef), *previous = random_velocity(2 * ef);
  clmg_vector *d_wind = device_copy(wind, 2 * ef), *d_previous = device_copy(previous, 2 * ef);
  CHECK_OK(clmg_stokes_assembler_set_boundary_scale(assembler, scale));
  CHECK_OK(clmg_stokes_assembler_update(assembler, d_wind, d_previous));
  scaled_boundary scaled = {problem, scale};
  /* the host: the winds restricted level by level, each level refilled */
  double *level_wind = wind;
  for (int l = finest; l >= 0; l--) {
    double *coarser = NULL;
    if (l < finest) {
      coarser = malloc((2 * h.edges[l].num_edges + 1) * sizeof *coarser);
      assert_non_null(coarser);
      clmg_stokes_restrict_velocity(&h.meshes[l], &h.edges[l], &h.edges[l + 1], level_wind,
                                    coarser);
      if (level_wind != wind)
        free(level_wind);
      level_wind = coarser;
    }
    clmg_stokes_problem p = *problem;
    p.wind = level_wind;
    p.previous = l == finest ? previous : NULL;
    p.boundary_velocity = scaled_velocity;
    p.boundary_data = &scaled;
    const size_t n = h.a[l].rows, nnz = clmg_csr_nnz(&h.a[l]);
    double *values = malloc(nnz * sizeof *values), *b = malloc(n * sizeof *b);
    double *device = malloc((nnz > n ? nnz : n) * sizeof *device);
    assert_non_null(values);
    assert_non_null(b);
    assert_non_null(device);
    CHECK_HOST(
        clmg_stokes_update_values_host(&h.meshes[l], &h.edges[l], &p, &h.a[l], values, b, &error),
        error);
    CHECK_OK(clmg_vector_download_doubles(clmg_stokes_assembler_values(assembler, l), device));
    expect_close(device, values, nnz, "value", l);
    if (l == finest) {
      CHECK_OK(clmg_vector_download_doubles(clmg_stokes_assembler_rhs(assembler), device));
      expect_close(device, b, n, "right-hand side", l);
    }
    free(values);
    free(b);
    free(device);
  }
  if (level_wind != wind)
    free(level_wind);
  /* without wind or previous velocity: the hierarchy's own assembly */
  CHECK_OK(clmg_stokes_assembler_update(assembler, NULL, NULL));
  double *device = malloc(clmg_csr_nnz(&h.a[finest]) * sizeof *device);
  assert_non_null(device);
  CHECK_OK(clmg_vector_download_doubles(clmg_stokes_assembler_values(assembler, finest), device));
  for (size_t k = 0; k < clmg_csr_nnz(&h.a[finest]); k++)
    assert_true(device[k] == h.a[finest].val[k]);
  free(device);
  free(wind);
  free(previous);
  clmg_vector_destroy(d_wind);
  clmg_vector_destroy(d_previous);
  clmg_stokes_assembler_destroy(assembler);
  clmg_stokes_hierarchy_free(&h);
}

/* On test_side_tagged_box: Dirichlet on the inflow (x = 0) and the lid
 * (y = 1), free slip at the bottom, do-nothing at the right; nu 0.01 and a
 * time term c. */
static clmg_stokes_problem mixed_boundaries(double reaction) {
  static const int32_t dirichlet[2] = {3, 4}, slip[1] = {1};
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.01;
  problem.reaction = reaction;
  problem.boundary_velocity = lid_and_inflow;
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip;
  problem.num_slip_tags = 1;
  return problem;
}

/* Mixed boundaries with a force; every upwind scheme (the weighted one with
 * parameters 0.3 and 0: central differences), the boundary data as built
 * and scaled (with and without the force). */
static void test_assembler_matches_host(void **state) {
  (void)state;
  clmg_mesh coarse = test_side_tagged_box(3, 0.2, 7);
  clmg_stokes_problem problem = mixed_boundaries(20.0);
  problem.force = force;
  const int upwinds[4] = {CLMG_STOKES_UPWIND_FULL, CLMG_STOKES_UPWIND_SAMARSKIJ,
                          CLMG_STOKES_UPWIND_WEIGHTED, CLMG_STOKES_UPWIND_WEIGHTED};
  const double parameters[4] = {1.0, 1.0, 0.3, 0.0}, scales[4] = {1.0, 0.7, 1.0, -0.4};
  for (int k = 0; k < 4; k++) {
    problem.upwind = upwinds[k];
    problem.upwind_parameter = parameters[k];
    check_against_host(&coarse, 3, &problem, scales[k]);
  }
  problem.force = NULL;
  check_against_host(&coarse, 3, &problem, 0.25);
  clmg_mesh_free(&coarse);
}

/* The Newton term (clmg_stokes_problem.newton): every level's values and
 * the finest right-hand side against the host's for random winds, every
 * upwind scheme, scaled boundary data; with the term switched off
 * (clmg_stokes_assembler_set_newton), the Oseen values in the Newton
 * pattern (its extra entries 0). */
static void test_assembler_newton_matches_host(void **state) {
  (void)state;
  clmg_mesh coarse = test_side_tagged_box(3, 0.2, 7);
  clmg_stokes_problem problem = mixed_boundaries(0.0);
  problem.force = force;
  problem.newton = 1;
  const int upwinds[4] = {CLMG_STOKES_UPWIND_FULL, CLMG_STOKES_UPWIND_SAMARSKIJ,
                          CLMG_STOKES_UPWIND_WEIGHTED, CLMG_STOKES_UPWIND_WEIGHTED};
  const double parameters[4] = {1.0, 1.0, 0.3, 0.0}, scales[4] = {1.0, 0.7, 1.0, -0.4};
  for (int k = 0; k < 4; k++) {
    problem.upwind = upwinds[k];
    problem.upwind_parameter = parameters[k];
    check_against_host(&coarse, 3, &problem, scales[k]);
  }
  /* switched off: the Oseen system's values */
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  clmg_error error = {{0}};
  clmg_stokes_hierarchy h;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 2, &problem, &h, &error), error);
  clmg_stokes_assembler *assembler = NULL;
  CHECK_OK(clmg_stokes_assembler_create(ctx, &h, &problem, &assembler));
  const clmg_csr *a = &h.a[1];
  const size_t ef = h.edges[1].num_edges, n = a->rows, nnz = clmg_csr_nnz(a);
  double *wind = random_velocity(2 * ef);
  clmg_vector *d_wind = device_copy(wind, 2 * ef);
  CHECK_OK(clmg_stokes_assembler_set_newton(assembler, 0));
  CHECK_OK(clmg_stokes_assembler_update(assembler, d_wind, NULL));
  double *device = malloc(nnz * sizeof *device), *b = malloc(n * sizeof *b);
  assert_non_null(device);
  assert_non_null(b);
  CHECK_OK(clmg_vector_download_doubles(clmg_stokes_assembler_values(assembler, 1), device));
  clmg_stokes_problem oseen = problem;
  oseen.newton = 0;
  oseen.wind = wind;
  clmg_csr picard = {0};
  CHECK_HOST(clmg_stokes_assemble_host(&h.meshes[1], &h.edges[1], &oseen, &picard, b, &error),
             error);
  assert_true(clmg_csr_nnz(&picard) < nnz);
  size_t matched = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t q = picard.row_ptr[i];
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      if (q < picard.row_ptr[i + 1] && picard.col[q] == a->col[k]) {
        assert_true(fabs(device[k] - picard.val[q]) <= 1e-12 * (1.0 + fabs(picard.val[q])));
        q++;
        matched++;
      } else {
        assert_true(device[k] == 0.0); /* a Newton entry */
      }
    }
    assert_int_equal(q, picard.row_ptr[i + 1]);
  }
  assert_int_equal(matched, clmg_csr_nnz(&picard));
  clmg_csr_free(&picard);
  free(device);
  free(b);
  free(wind);
  clmg_vector_destroy(d_wind);
  clmg_stokes_assembler_destroy(assembler);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

/* Triangles in three colours on every level, the whole boundary Dirichlet. */
static void test_assembler_three_colours(void **state) {
  (void)state;
  clmg_mesh coarse;
  test_pentagon_mesh(&coarse);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.05;
  problem.reaction = 5.0; /* b = the time term: the boundary data are 0 */
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  check_against_host(&coarse, 3, &problem, 1.0);
  clmg_mesh_free(&coarse);
}

/* The multigrid on the device values: after an update, F-cycles solve the
 * system the host refill gives (its residual recomputed on the host). */
static void test_multigrid_on_device_values(void **state) {
  (void)state;
  clmg_mesh coarse = test_side_tagged_box(2, 0.1, 3);
  clmg_stokes_problem problem = mixed_boundaries(10.0);
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  clmg_error error = {{0}};
  clmg_stokes_hierarchy h;
  const int levels = 4, finest = levels - 1;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, levels, &problem, &h, &error), error);
  clmg_stokes_assembler *assembler = NULL;
  CHECK_OK(clmg_stokes_assembler_create(ctx, &h, &problem, &assembler));
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_stokes_multigrid_create_device(ctx, &h, assembler, NULL, NULL, &mg));
  const size_t ef = h.edges[finest].num_edges, n = h.a[finest].rows;
  /* a wind of unit size */
  double *wind = random_velocity(2 * ef), *previous = random_velocity(2 * ef);
  clmg_vector *d_wind = device_copy(wind, 2 * ef), *d_previous = device_copy(previous, 2 * ef);
  CHECK_OK(clmg_stokes_assembler_update(assembler, d_wind, d_previous));
  CHECK_OK(clmg_stokes_multigrid_update_device(mg, &h, assembler));
  clmg_vector *x = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x));
  CHECK_OK(clmg_vector_fill(x, 0.0));
  clmg_krylov_options krylov;
  clmg_krylov_options_defaults(&krylov);
  krylov.relative_tolerance = 1e-9;
  krylov.max_iterations = 40;
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_multigrid_solve(mg, clmg_stokes_assembler_rhs(assembler), x, &krylov, &result));
  printf("  device values, %zu unknowns: %d F-cycles\n", n, result.iterations);
  clmg_krylov_result_free(&result);
  /* the host's system */
  clmg_stokes_problem p = problem;
  p.wind = wind;
  p.previous = previous;
  double *b = malloc(n * sizeof *b), *xh = malloc(n * sizeof *xh), *r = malloc(n * sizeof *r);
  assert_non_null(b);
  assert_non_null(xh);
  assert_non_null(r);
  CHECK_HOST(clmg_stokes_update_values_host(&h.meshes[finest], &h.edges[finest], &p, &h.a[finest],
                                            h.a[finest].val, b, &error),
             error);
  CHECK_OK(clmg_vector_download_doubles(x, xh));
  clmg_csr_spmv_host(1.0, &h.a[finest], xh, 0.0, r);
  double rr = 0, bb = 0;
  for (size_t i = 0; i < n; i++) {
    rr += (b[i] - r[i]) * (b[i] - r[i]);
    bb += b[i] * b[i];
  }
  assert_true(sqrt(rr / bb) <= 2e-9);
  free(b);
  free(xh);
  free(r);
  free(wind);
  free(previous);
  clmg_vector_destroy(x);
  clmg_vector_destroy(d_wind);
  clmg_vector_destroy(d_previous);
  clmg_multigrid_destroy(mg);
  clmg_stokes_assembler_destroy(assembler);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

/* defer_first_setup (as the flow uses it): a cycle before the first
 * refresh is refused; after the update, a cycle equals, entry for entry,
 * that of a multigrid set up at creation and refreshed on the same values. */
static void test_multigrid_deferred_setup(void **state) {
  (void)state;
  clmg_mesh coarse = test_side_tagged_box(2, 0.1, 3);
  clmg_stokes_problem problem = mixed_boundaries(10.0);
  clmg_error error = {{0}};
  clmg_stokes_hierarchy h;
  const int levels = 3, finest = levels - 1;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, levels, &problem, &h, &error), error);
  clmg_stokes_assembler *assembler = NULL;
  CHECK_OK(clmg_stokes_assembler_create(ctx, &h, &problem, &assembler));
  clmg_vanka_options deferred;
  clmg_vanka_options_defaults(&deferred);
  deferred.defer_first_setup = 1;
  clmg_multigrid *plain = NULL, *late = NULL;
  CHECK_OK(clmg_stokes_multigrid_create_device(ctx, &h, assembler, NULL, NULL, &plain));
  CHECK_OK(clmg_stokes_multigrid_create_device(ctx, &h, assembler, &deferred, NULL, &late));
  const size_t ef = h.edges[finest].num_edges, n = h.a[finest].rows;
  double *rhs = random_velocity(n), *wind = random_velocity(2 * ef);
  clmg_vector *b = device_copy(rhs, n), *d_wind = device_copy(wind, 2 * ef);
  clmg_vector *x = NULL, *y = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &y));
  CHECK_OK(clmg_vector_fill(y, 0.0));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_multigrid_cycle(late, b, y));
  CHECK_CONTAINS(clmg_context_message(ctx), "before its setup");
  CHECK_OK(clmg_stokes_assembler_update(assembler, d_wind, NULL));
  CHECK_OK(clmg_stokes_multigrid_update_device(plain, &h, assembler));
  CHECK_OK(clmg_stokes_multigrid_update_device(late, &h, assembler));
  CHECK_OK(clmg_vector_fill(x, 0.0));
  CHECK_OK(clmg_vector_fill(y, 0.0));
  for (int cycle = 0; cycle < 2; cycle++) {
    CHECK_OK(clmg_multigrid_cycle(plain, b, x));
    CHECK_OK(clmg_multigrid_cycle(late, b, y));
  }
  double *xh = malloc(n * sizeof *xh), *yh = malloc(n * sizeof *yh);
  assert_non_null(xh);
  assert_non_null(yh);
  CHECK_OK(clmg_vector_download_doubles(x, xh));
  CHECK_OK(clmg_vector_download_doubles(y, yh));
  double largest = 0.0;
  for (size_t i = 0; i < n; i++) {
    assert_true(xh[i] == yh[i]);
    largest = fmax(largest, fabs(xh[i]));
  }
  assert_true(largest > 0.0); /* the cycles did something */
  free(xh);
  free(yh);
  free(rhs);
  free(wind);
  clmg_vector_destroy(x);
  clmg_vector_destroy(y);
  clmg_vector_destroy(b);
  clmg_vector_destroy(d_wind);
  clmg_multigrid_destroy(late);
  clmg_multigrid_destroy(plain);
  clmg_stokes_assembler_destroy(assembler);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

static void test_assembler_refuses(void **state) {
  (void)state;
  clmg_mesh coarse = test_side_tagged_box(2, 0.0, 1);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  clmg_error error = {{0}};
  clmg_stokes_hierarchy h;
  CHECK_HOST(clmg_stokes_hierarchy_build(&coarse, 2, &problem, &h, &error), error);
  clmg_stokes_assembler *assembler = NULL;
  double wind_host[1] = {0.0};
  clmg_stokes_problem with_wind = problem;
  with_wind.wind = wind_host;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assembler_create(ctx, &h, &with_wind, &assembler));
  CHECK_CONTAINS(clmg_context_message(ctx), "wind");
  assert_null(assembler);
  CHECK_OK(clmg_stokes_assembler_create(ctx, &h, &problem, &assembler));
  clmg_vector *short_wind = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, h.edges[1].num_edges, &short_wind));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assembler_update(assembler, short_wind, NULL));
  CHECK_CONTAINS(clmg_context_message(ctx), "at least");
  assert_null(clmg_stokes_assembler_values(assembler, 2));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assembler_set_boundary_scale(assembler, INFINITY));
  CHECK_CONTAINS(clmg_context_message(ctx), "boundary scale");
  /* no Newton pattern */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_stokes_assembler_set_newton(assembler, 1));
  CHECK_CONTAINS(clmg_context_message(ctx), "newton");
  CHECK_OK(clmg_stokes_assembler_set_newton(assembler, 0));
  clmg_multigrid *mg = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_multigrid_create_device(ctx, &h, NULL, NULL, NULL, &mg));
  CHECK_CONTAINS(clmg_context_message(ctx), "assembler");
  clmg_vector_destroy(short_wind);
  clmg_stokes_assembler_destroy(assembler);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
}

static int setup(void **state) {
  (void)state;
  rng_seed(53);
  return test_open_context(&ctx, NULL, "stokes_device", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_assembler_matches_host),
      cmocka_unit_test(test_assembler_newton_matches_host),
      cmocka_unit_test(test_assembler_three_colours),
      cmocka_unit_test(test_multigrid_on_device_values),
      cmocka_unit_test(test_multigrid_deferred_setup),
      cmocka_unit_test(test_assembler_refuses),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("stokes_device", tests, setup, teardown);
}
