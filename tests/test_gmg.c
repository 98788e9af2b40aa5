/* Finite-element geometric multigrid end to end (clmg/fem.h feeding
 * clmg/multigrid.h on the device): the CIRCLE benchmark of Geveler et al. 2011 with its
 * settings (V-cycle, 4+4 Jacobi steps, omega 0.7) converges in a number of
 * cycles that does not grow with the level, for Q1 and Q2; the multigrid
 * solution equals a Jacobi-PCG solution of the same system; every numbering
 * gives the same solution in the mesh's order; a manufactured solution on a
 * distorted square and on the 3D pipe is reached up to the discretisation
 * error, which falls at the element's order; the other smoothers, cycles and
 * CG with the multigrid preconditioner converge on Q2; and BLOOD converges
 * with the paper's 64+64 steps. Sizes stay below 40k unknowns for pocl. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

static clmg_context *ctx;

static const double PI = 3.14159265358979323846;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)

#define CHECK_HOST(call, error) CHECK_ERROR_OK(error, call)

/* ---- problems ---- */

/* u = sin(pi x) sin(pi y) on the square, f = -Laplace(u) = 2 pi^2 u */
static double exact_2d(const double *x, void *data) {
  (void)data;
  return sin(PI * x[0]) * sin(PI * x[1]);
}
static double source_2d(const double *x, void *data) {
  return 2.0 * PI * PI * exact_2d(x, data);
}
static double boundary_exact_2d(const double *x, int32_t tag, void *data) {
  (void)tag;
  return exact_2d(x, data);
}

/* on the pipe: u = x y z + x^2 - y^2 + sin(z), so f = -Laplace(u) = sin(z) */
static double exact_pipe(const double *x, void *data) {
  (void)data;
  return x[0] * x[1] * x[2] + x[0] * x[0] - x[1] * x[1] + sin(x[2]);
}
static double source_pipe(const double *x, void *data) {
  (void)data;
  return sin(x[2]);
}
static double boundary_exact_pipe(const double *x, int32_t tag, void *data) {
  (void)tag;
  return exact_pipe(x, data);
}

/* ---- solving ---- */

typedef struct solved {
  int cycles;
  double relative_residual;
  double *u_mesh; /* the solution in the mesh's own numbering (malloc'ed) */
} solved;

/* Builds the hierarchy and solves with multigrid (use_cg: CG preconditioned
 * by one cycle); fails the test unless it converges to rtol. */
static solved solve_hierarchy(const clmg_fe_hierarchy *h, const clmg_multigrid_options *options,
                              int use_cg, double rtol, const char *what) {
  size_t n = h->a[h->num_levels - 1].rows;
  clmg_multigrid *mg = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, h->num_levels, h->a, h->p, h->r, options, &mg));
  clmg_vector *b = NULL, *x = NULL;
  CHECK_OK(clmg_vector_create(ctx, options->matrix.precision, n, &b));
  CHECK_OK(clmg_vector_create(ctx, options->matrix.precision, n, &x));
  CHECK_OK(clmg_vector_upload_doubles(b, h->b));
  CHECK_OK(clmg_vector_upload_doubles(x, h->x0));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = rtol;
  ko.max_iterations = 200;
  clmg_krylov_result result;
  clmg_status status;
  if (use_cg) {
    clmg_preconditioner preconditioner;
    CHECK_OK(clmg_multigrid_preconditioner(mg, &preconditioner));
    status =
        clmg_cg(clmg_multigrid_matrix(mg, h->num_levels - 1), b, x, &preconditioner, &ko, &result);
    clmg_preconditioner_destroy(&preconditioner);
  } else {
    status = clmg_multigrid_solve(mg, b, x, &ko, &result);
  }
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", what, clmg_status_string(status), clmg_context_message(ctx));
  solved out = {result.iterations, result.relative_residual, NULL};
  double *numbered = malloc(n * sizeof *numbered);
  out.u_mesh = malloc(n * sizeof *out.u_mesh);
  assert_non_null(numbered);
  assert_non_null(out.u_mesh);
  CHECK_OK(clmg_vector_download_doubles(x, numbered));
  clmg_fe_hierarchy_unpermute(h, numbered, out.u_mesh);
  free(numbered);
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(mg);
  return out;
}

static void build_circle(int level, int degree, clmg_numbering numbering, clmg_fe_hierarchy *h) {
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_circle(&coarse, &error), error);
  clmg_poisson_problem problem;
  clmg_poisson_problem_circle(&problem);
  CHECK_HOST(clmg_fe_poisson_hierarchy(&coarse, level, degree, &problem, numbering, 7, h, &error),
             error);
  clmg_mesh_free(&coarse);
}

static double max_difference(const double *a, const double *b, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i)
    worst = fmax(worst, fabs(a[i] - b[i]));
  return worst;
}

/* ---- tests ---- */

/* Table 1 unknowns (Geveler et al. 2011) and mesh-independent cycle counts. */
static void test_circle_mesh_independent(void **state) {
  (void)state;
  static const size_t q1_unknowns[] = {576, 2176, 8448, 33280};
  for (int degree = 1; degree <= 2; ++degree) {
    int first = 4, last = degree == 1 ? 7 : 6;
    int counts[4] = {0};
    for (int level = first; level <= last; ++level) {
      clmg_fe_hierarchy h = {0};
      build_circle(level, degree, CLMG_NUMBERING_2LV, &h);
      size_t n = h.a[h.num_levels - 1].rows;
      /* Q2 on level L has as many unknowns as Q1 on level L + 1 */
      assert_int_equal(n, q1_unknowns[level - first + degree - 1]);
      clmg_multigrid_options options;
      clmg_multigrid_options_defaults(&options);
      char what[64];
      snprintf(what, sizeof what, "CIRCLE Q%d level %d", degree, level);
      solved s = solve_hierarchy(&h, &options, 0, 1e-8, what);
      counts[level - first] = s.cycles;
      print_message("%s: %zu unknowns, %d cycles\n", what, n, s.cycles);
      free(s.u_mesh);
      clmg_fe_hierarchy_free(&h);
    }
    for (int level = first + 1; level <= last; ++level)
      if (abs(counts[level - first] - counts[0]) > 2)
        fail_msg("Q%d: cycles to 1e-8 vary by more than 2 over levels %d-%d: %d %d %d %d", degree,
                 first, last, counts[0], counts[1], counts[2], counts[3]);
  }
}

/* Multigrid and Jacobi-PCG solve the same system: same solution. */
static void test_agrees_with_cg(void **state) {
  (void)state;
  for (int degree = 1; degree <= 2; ++degree) {
    clmg_fe_hierarchy h = {0};
    build_circle(5, degree, CLMG_NUMBERING_2LV, &h);
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    solved mg = solve_hierarchy(&h, &options, 0, 1e-11, "multigrid");
    /* Jacobi-PCG on the finest matrix alone */
    size_t n = h.a[h.num_levels - 1].rows;
    clmg_matrix *a = NULL;
    clmg_matrix_options mo;
    clmg_matrix_options_defaults(&mo);
    CHECK_OK(clmg_matrix_create(ctx, &h.a[h.num_levels - 1], &mo, &a));
    clmg_vector *b = NULL, *x = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &b));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x));
    CHECK_OK(clmg_vector_upload_doubles(b, h.b));
    CHECK_OK(clmg_vector_upload_doubles(x, h.x0));
    clmg_preconditioner jacobi;
    CHECK_OK(clmg_preconditioner_jacobi(a, &jacobi));
    clmg_krylov_options ko;
    clmg_krylov_options_defaults(&ko);
    ko.relative_tolerance = 1e-11;
    ko.max_iterations = 5000;
    clmg_krylov_result result;
    CHECK_OK(clmg_cg(a, b, x, &jacobi, &ko, &result));
    double *numbered = malloc(n * sizeof *numbered), *u_cg = malloc(n * sizeof *u_cg);
    assert_non_null(numbered);
    assert_non_null(u_cg);
    CHECK_OK(clmg_vector_download_doubles(x, numbered));
    clmg_fe_hierarchy_unpermute(&h, numbered, u_cg);
    double difference = max_difference(mg.u_mesh, u_cg, n);
    print_message("Q%d level 5: multigrid %d cycles, Jacobi-PCG %d iterations, max |u_mg - "
                  "u_cg| = %.2e\n",
                  degree, mg.cycles, result.iterations, difference);
    /* u is O(1); both solves leave an error of cond * 1e-11 at most */
    assert_true(difference < 1e-7);
    /* level 5 is small: Jacobi-PCG still needs several times more iterations */
    assert_true(mg.cycles * 4 < result.iterations);
    free(numbered);
    free(u_cg);
    free(mg.u_mesh);
    clmg_krylov_result_free(&result);
    clmg_preconditioner_destroy(&jacobi);
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_matrix_destroy(a);
    clmg_fe_hierarchy_free(&h);
  }
}

/* Numberings permute the system; the solution in mesh order and the cycle
 * count (Jacobi is numbering-blind) are the same for all. */
static void test_numberings_agree(void **state) {
  (void)state;
  double *reference = NULL;
  int reference_cycles = 0;
  for (int k = CLMG_NUMBERING_2LV; k <= CLMG_NUMBERING_HIE; ++k) {
    clmg_fe_hierarchy h = {0};
    build_circle(5, 2, (clmg_numbering)k, &h);
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    solved s = solve_hierarchy(&h, &options, 0, 1e-10, clmg_numbering_name((clmg_numbering)k));
    size_t n = h.a[h.num_levels - 1].rows;
    if (!reference) {
      reference = s.u_mesh;
      reference_cycles = s.cycles;
    } else {
      double difference = max_difference(reference, s.u_mesh, n);
      if (!(difference < 1e-8) || abs(s.cycles - reference_cycles) > 1)
        fail_msg("numbering %s: max difference %.2e, %d cycles (2lv: %d)",
                 clmg_numbering_name((clmg_numbering)k), difference, s.cycles, reference_cycles);
      free(s.u_mesh);
    }
    clmg_fe_hierarchy_free(&h);
  }
  free(reference);
}

/* Observed order of the L2 error of the multigrid solution. */
static void check_orders(const clmg_mesh *coarse, const clmg_poisson_problem *problem,
                         clmg_fe_function exact, int degree, int first, int last, double low,
                         double high, const char *what) {
  double previous = 0;
  for (int level = first; level <= last; ++level) {
    clmg_fe_hierarchy h = {0};
    clmg_error error = {{0}};
    CHECK_HOST(
        clmg_fe_poisson_hierarchy(coarse, level, degree, problem, CLMG_NUMBERING_CM, 1, &h, &error),
        error);
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    solved s = solve_hierarchy(&h, &options, 1, 1e-12, what);
    double l2 = 0;
    CHECK_HOST(clmg_fe_l2_error(&h.spaces[h.num_levels - 1], s.u_mesh, exact, NULL, &l2, &error),
               error);
    if (level > first) {
      double order = log2(previous / l2);
      print_message("%s level %d: L2 error %.3e, order %.2f\n", what, level, l2, order);
      if (!(order >= low && order <= high))
        fail_msg("%s: observed order %.2f at level %d, expected %.1f-%.1f", what, order, level, low,
                 high);
    }
    previous = l2;
    free(s.u_mesh);
    clmg_fe_hierarchy_free(&h);
  }
}

static void test_manufactured_orders(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh square = {0}, pipe = {0};
  CHECK_HOST(clmg_mesh_box(2, 3, 0.2, 11, &square, &error), error);
  clmg_poisson_problem problem = {0};
  problem.source = source_2d;
  problem.dirichlet = boundary_exact_2d;
  check_orders(&square, &problem, exact_2d, 1, 2, 6, 1.8, 2.3, "square Q1");
  check_orders(&square, &problem, exact_2d, 2, 2, 5, 2.7, 3.4, "square Q2");
  /* 3D hexahedra with curved (projected) boundaries: Q1 */
  CHECK_HOST(clmg_mesh_pipe(&pipe, &error), error);
  problem.source = source_pipe;
  problem.dirichlet = boundary_exact_pipe;
  check_orders(&pipe, &problem, exact_pipe, 1, 2, 4, 1.7, 2.4, "pipe Q1");
  clmg_mesh_free(&square);
  clmg_mesh_free(&pipe);
}

static void test_smoothers_and_cycles_q2(void **state) {
  (void)state;
  clmg_fe_hierarchy h = {0};
  build_circle(5, 2, CLMG_NUMBERING_HIE, &h);
  static const struct {
    clmg_smoother_type smoother;
    clmg_cycle_type cycle;
    int steps, use_cg;
  } cases[] = {
      {CLMG_SMOOTHER_CHEBYSHEV, CLMG_CYCLE_V, 2, 0}, {CLMG_SMOOTHER_SPAI0, CLMG_CYCLE_V, 4, 0},
      {CLMG_SMOOTHER_JACOBI, CLMG_CYCLE_W, 4, 0},    {CLMG_SMOOTHER_JACOBI, CLMG_CYCLE_F, 4, 0},
      {CLMG_SMOOTHER_JACOBI, CLMG_CYCLE_V, 2, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    options.smoother = cases[k].smoother;
    options.cycle = cases[k].cycle;
    options.pre_smoothing = options.post_smoothing = cases[k].steps;
    char what[64];
    snprintf(what, sizeof what, "Q2 %s %s-cycle%s", clmg_smoother_type_name(options.smoother),
             clmg_cycle_type_name(options.cycle), cases[k].use_cg ? " in CG" : "");
    solved s = solve_hierarchy(&h, &options, cases[k].use_cg, 1e-8, what);
    print_message("%s: %d iterations\n", what, s.cycles);
    assert_true(s.cycles <= 40);
    free(s.u_mesh);
  }
  clmg_fe_hierarchy_free(&h);
}

/* BLOOD with the settings of Geveler et al. 2011: 64+64 Jacobi steps, omega 0.5; u = 1. */
static void test_blood(void **state) {
  (void)state;
  clmg_mesh coarse = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_mesh_blood(&coarse, &error), error);
  clmg_poisson_problem problem;
  clmg_poisson_problem_blood(&problem);
  int counts[2];
  for (int level = 2; level <= 3; ++level) {
    clmg_fe_hierarchy h = {0};
    CHECK_HOST(
        clmg_fe_poisson_hierarchy(&coarse, level, 1, &problem, CLMG_NUMBERING_2LV, 1, &h, &error),
        error);
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    options.pre_smoothing = options.post_smoothing = 64;
    options.omega = 0.5;
    solved s = solve_hierarchy(&h, &options, 0, 1e-10, "BLOOD");
    size_t n = h.a[h.num_levels - 1].rows;
    double worst = 0;
    for (size_t i = 0; i < n; ++i)
      worst = fmax(worst, fabs(s.u_mesh[i] - 1.0));
    print_message("BLOOD level %d: %zu unknowns, %d cycles, max |u - 1| = %.2e\n", level, n,
                  s.cycles, worst);
    assert_true(worst < 1e-6);
    counts[level - 2] = s.cycles;
    free(s.u_mesh);
    clmg_fe_hierarchy_free(&h);
  }
  assert_true(abs(counts[1] - counts[0]) <= 3);
  clmg_mesh_free(&coarse);
}

/* Mixed precision (Fu et al.): a float cycle inside double CG reaches a
 * true double residual of 1e-8 on CIRCLE Q1, recomputed here on the host
 * from x, within two iterations of the all-double run. */
static void test_mixed_precision_circle(void **state) {
  (void)state;
  for (int level = 5; level <= 7; ++level) {
    clmg_fe_hierarchy h;
    build_circle(level, 1, CLMG_NUMBERING_2LV, &h);
    int finest = h.num_levels - 1;
    size_t n = h.a[finest].rows;
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    options.pre_smoothing = options.post_smoothing = 2;
    solved in_double = solve_hierarchy(&h, &options, 1, 1e-8, "double CG, double cycle");

    options.matrix.precision = CLMG_FLOAT;
    clmg_multigrid *mg = NULL;
    CHECK_OK(clmg_multigrid_create(ctx, h.num_levels, h.a, h.p, h.r, &options, &mg));
    clmg_matrix *a = NULL;
    CHECK_OK(clmg_matrix_create(ctx, &h.a[finest], NULL, &a));
    clmg_preconditioner cycle, preconditioner;
    CHECK_OK(clmg_multigrid_preconditioner(mg, &cycle));
    CHECK_OK(
        clmg_preconditioner_in_precision(ctx, n, CLMG_DOUBLE, CLMG_FLOAT, &cycle, &preconditioner));
    assert_null(cycle.apply); /* taken over */
    clmg_vector *b = NULL, *x = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &b));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x));
    CHECK_OK(clmg_vector_upload_doubles(b, h.b));
    CHECK_OK(clmg_vector_upload_doubles(x, h.x0));
    clmg_krylov_options ko;
    clmg_krylov_options_defaults(&ko);
    ko.relative_tolerance = 1e-8;
    clmg_krylov_result result;
    CHECK_OK(clmg_cg(a, b, x, &preconditioner, &ko, &result));
    /* the true residual, on the host in double */
    double *u = malloc(n * sizeof *u), *r = malloc(n * sizeof *r);
    assert_non_null(u);
    assert_non_null(r);
    CHECK_OK(clmg_vector_download_doubles(x, u));
    memcpy(r, h.b, n * sizeof *r);
    clmg_csr_spmv_host(-1.0, &h.a[finest], u, 1.0, r);
    double r_norm = 0, b_norm = 0;
    for (size_t i = 0; i < n; ++i) {
      r_norm += r[i] * r[i];
      b_norm += h.b[i] * h.b[i];
    }
    double relative = sqrt(r_norm / b_norm);
    print_message("CIRCLE Q1 level %d: double %d iterations, mixed %d (true residual %.2e)\n",
                  level, in_double.cycles, result.iterations, relative);
    assert_true(relative <= 1e-8);
    assert_true(abs(result.iterations - in_double.cycles) <= 2);
    free(u);
    free(r);
    free(in_double.u_mesh);
    clmg_krylov_result_free(&result);
    clmg_preconditioner_destroy(&preconditioner);
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_matrix_destroy(a);
    clmg_multigrid_destroy(mg);
    clmg_fe_hierarchy_free(&h);
  }
}

/* ---- the hierarchy assembled on the device ---- */

/* The device arrays equal the host matrix: the same pattern, values to
 * rounding (relative to the largest entry). */
static void check_same_matrix(const clmg_csr_device *device, const clmg_csr *host, const char *what,
                              int level, char which) {
  clmg_csr copy = {0};
  clmg_error error = {{0}};
  CHECK_HOST(clmg_csr_device_download(device, &copy, &error), error);
  if (copy.rows != host->rows || copy.cols != host->cols ||
      clmg_csr_nnz(&copy) != clmg_csr_nnz(host))
    fail_msg("%s level %d %c: %zu x %zu with %zu entries on the device, %zu x %zu with %zu on the "
             "host",
             what, level, which, copy.rows, copy.cols, clmg_csr_nnz(&copy), host->rows, host->cols,
             clmg_csr_nnz(host));
  assert_memory_equal(copy.row_ptr, host->row_ptr, (host->rows + 1) * sizeof *host->row_ptr);
  assert_memory_equal(copy.col, host->col, clmg_csr_nnz(host) * sizeof *host->col);
  double largest = 0;
  for (size_t k = 0; k < clmg_csr_nnz(host); ++k)
    largest = fmax(largest, fabs(host->val[k]));
  double difference = max_difference(copy.val, host->val, clmg_csr_nnz(host));
  if (!(difference <= 1e-12 * largest))
    fail_msg("%s level %d %c: values differ by %.3e (largest entry %.3e)", what, level, which,
             difference, largest);
  clmg_csr_free(&copy);
}

/* Builds both hierarchies (2LV) and compares every level's A, P and R, b and
 * x0; then (solve) solves with the device one and checks the true residual
 * of the host system, and that the cycle count equals the host
 * hierarchy's. */
/* The same mesh: counts, cells, boundary faces and tags, materials and
 * shapes exactly, coordinates bit for bit. */
static void assert_same_mesh(const clmg_mesh *a, const clmg_mesh *b, const char *what) {
  assert_int_equal(a->dim, b->dim);
  assert_int_equal(a->cell_type, b->cell_type);
  assert_int_equal(a->num_vertices, b->num_vertices);
  assert_int_equal(a->num_cells, b->num_cells);
  assert_int_equal(a->num_boundary_faces, b->num_boundary_faces);
  assert_int_equal(a->num_shapes, b->num_shapes);
  if (memcmp(a->coords, b->coords, a->num_vertices * (size_t)a->dim * sizeof *a->coords) != 0)
    fail_msg("%s: the coordinates differ", what);
  assert_memory_equal(a->cells, b->cells, a->num_cells * clmg_mesh_vertices_per_cell(a) * 4);
  assert_memory_equal(a->boundary_faces, b->boundary_faces,
                      a->num_boundary_faces * clmg_mesh_vertices_per_face(a) * 4);
  assert_memory_equal(a->boundary_face_tag, b->boundary_face_tag, a->num_boundary_faces * 4);
  if (a->num_shapes)
    assert_memory_equal(a->shapes, b->shapes, a->num_shapes * sizeof *a->shapes);
  assert_int_equal(a->cell_material == NULL, b->cell_material == NULL);
  if (a->cell_material)
    assert_memory_equal(a->cell_material, b->cell_material, a->num_cells * 4);
}

static void check_device_hierarchy(const clmg_mesh *coarse, const clmg_poisson_problem *problem,
                                   int levels, int degree, int solve, const char *what) {
  clmg_error error = {{0}};
  clmg_fe_hierarchy host = {0};
  CHECK_HOST(clmg_fe_poisson_hierarchy(coarse, levels, degree, problem, CLMG_NUMBERING_2LV, 1,
                                       &host, &error),
             error);
  clmg_fe_device_hierarchy device = {0};
  struct timespec before, after;
  timespec_get(&before, TIME_UTC);
  CHECK_OK(clmg_fe_poisson_hierarchy_device(ctx, coarse, levels, degree, problem, &device));
  timespec_get(&after, TIME_UTC);
  assert_int_equal(device.num_levels, levels);
  /* the setup's parts: none negative, the device's never free, and
   * together within the call's wall time */
  double wall = (double)(after.tv_sec - before.tv_sec) + 1e-9 * (after.tv_nsec - before.tv_nsec);
  assert_true(device.refine_s >= 0 && device.number_s >= 0 && device.dirichlet_s >= 0);
  assert_true(device.device_s > 0);
  assert_true(device.refine_s + device.number_s + device.dirichlet_s + device.device_s <=
              wall + 1e-6);
  /* the finest mesh, refined on the device, comes back as the host's; it
   * is there at setup only where the source function needed it */
  if (levels > 1 && !problem->source)
    assert_int_equal(device.meshes[levels - 1].num_cells, 0);
  CHECK_OK(clmg_fe_device_hierarchy_fetch_finest(ctx, &device));
  CHECK_OK(clmg_fe_device_hierarchy_fetch_finest(ctx, &device)); /* again: nothing to do */
  assert_null(device.device_finest);
  assert_same_mesh(&device.meshes[levels - 1], &host.meshes[levels - 1], what);
  assert_int_equal(device.spaces[levels - 1].num_dofs, host.spaces[levels - 1].num_dofs);
  for (int l = 0; l < levels; ++l) {
    check_same_matrix(&device.a[l], &host.a[l], what, l, 'A');
    if (l > 0) {
      check_same_matrix(&device.p[l], &host.p[l], what, l, 'P');
      check_same_matrix(&device.r[l], &host.r[l], what, l, 'R');
    }
  }
  size_t n = host.a[levels - 1].rows;
  double *b = malloc(n * sizeof *b), *x0 = malloc(n * sizeof *x0);
  assert_non_null(b);
  assert_non_null(x0);
  CHECK_OK(clmg_vector_download_doubles(device.b, b));
  CHECK_OK(clmg_vector_download_doubles(device.x0, x0));
  double b_scale = 0;
  for (size_t i = 0; i < n; ++i)
    b_scale = fmax(b_scale, fabs(host.b[i]));
  if (!(max_difference(b, host.b, n) <= 1e-12 * b_scale))
    fail_msg("%s: b differs by %.3e (largest %.3e)", what, max_difference(b, host.b, n), b_scale);
  assert_true(max_difference(x0, host.x0, n) <= 1e-12 * b_scale);
  assert_memory_equal(device.is_dirichlet, host.is_dirichlet, n);
  free(b);
  free(x0);
  if (!solve) {
    print_message("%s: %d levels, %zu unknowns, as on the host\n", what, levels, n);
    clmg_fe_device_hierarchy_free(&device);
    clmg_fe_hierarchy_free(&host);
    return;
  }

  /* the same solve from both: cycle counts equal, true residual met */
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  solved from_host = solve_hierarchy(&host, &options, 0, 1e-10, what);
  clmg_multigrid *mg = NULL;
  CHECK_OK(
      clmg_multigrid_create_from_csr_device(ctx, levels, device.a, device.p, NULL, &options, &mg));
  clmg_vector *x = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &x));
  CHECK_OK(clmg_copy(device.x0, x));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  ko.max_iterations = 200;
  clmg_krylov_result result;
  CHECK_OK(clmg_multigrid_solve(mg, device.b, x, &ko, &result));
  assert_int_equal(result.iterations, from_host.cycles);
  double *u = malloc(n * sizeof *u), *r = malloc(n * sizeof *r);
  assert_non_null(u);
  assert_non_null(r);
  CHECK_OK(clmg_vector_download_doubles(x, u));
  memcpy(r, host.b, n * sizeof *r);
  clmg_csr_spmv_host(-1.0, &host.a[levels - 1], u, 1.0, r);
  double r_norm = 0, b_norm = 0;
  for (size_t i = 0; i < n; ++i) {
    r_norm += r[i] * r[i];
    b_norm += host.b[i] * host.b[i];
  }
  if (!(sqrt(r_norm) <= 1e-9 * sqrt(b_norm)))
    fail_msg("%s: true relative residual %.3e after the device hierarchy's solve", what,
             sqrt(r_norm / b_norm));
  print_message("%s: %d levels, %zu unknowns, %d cycles from either hierarchy\n", what, levels, n,
                result.iterations);
  clmg_krylov_result_free(&result);
  clmg_multigrid_destroy(mg);
  clmg_vector_destroy(x);
  free(u);
  free(r);
  free(from_host.u_mesh);
  clmg_fe_device_hierarchy_free(&device);
  clmg_fe_hierarchy_free(&host);
}

/* A star of `spokes` kite-shaped quadrilaterals around the origin: the
 * centre vertex lies in more cells than the pattern kernel keeps in private
 * memory (8), so its rows take the other path. */
static void star_mesh(int spokes, clmg_mesh *mesh) {
  memset(mesh, 0, sizeof *mesh);
  mesh->dim = 2;
  mesh->num_vertices = 1 + 2 * (size_t)spokes;
  mesh->num_cells = (size_t)spokes;
  mesh->num_boundary_faces = 2 * (size_t)spokes;
  mesh->coords = calloc(2 * mesh->num_vertices, sizeof *mesh->coords);
  mesh->cells = malloc(4 * mesh->num_cells * sizeof *mesh->cells);
  mesh->boundary_faces = malloc(2 * mesh->num_boundary_faces * sizeof *mesh->boundary_faces);
  mesh->boundary_face_tag = malloc(mesh->num_boundary_faces * sizeof *mesh->boundary_face_tag);
  assert_non_null(mesh->coords);
  assert_non_null(mesh->cells);
  assert_non_null(mesh->boundary_faces);
  assert_non_null(mesh->boundary_face_tag);
  for (int i = 0; i < spokes; ++i) {
    double spoke = 2 * PI * i / spokes, tip = 2 * PI * (i + 0.5) / spokes;
    mesh->coords[2 * (1 + i)] = cos(spoke); /* P_i, radius 1 */
    mesh->coords[2 * (1 + i) + 1] = sin(spoke);
    mesh->coords[2 * (1 + spokes + i)] = 1.3 * cos(tip); /* Q_i, between P_i and P_i+1 */
    mesh->coords[2 * (1 + spokes + i) + 1] = 1.3 * sin(tip);
    int32_t p = 1 + i, next = 1 + (i + 1) % spokes, q = 1 + spokes + i;
    int32_t *cell = mesh->cells + 4 * i; /* tensor order: (0,0) (1,0) (0,1) (1,1) */
    cell[0] = 0;
    cell[1] = p;
    cell[2] = next;
    cell[3] = q;
    int32_t *faces = mesh->boundary_faces + 4 * i;
    faces[0] = p; /* the side x = 1 */
    faces[1] = q;
    faces[2] = next; /* the side y = 1 */
    faces[3] = q;
    mesh->boundary_face_tag[2 * i] = mesh->boundary_face_tag[2 * i + 1] = 1;
  }
}

static void test_device_hierarchy(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh circle = {0}, square = {0}, box = {0}, pipe = {0};
  CHECK_HOST(clmg_mesh_circle(&circle, &error), error);
  clmg_poisson_problem problem;
  clmg_poisson_problem_circle(&problem); /* constant source: integrated on the device */
  check_device_hierarchy(&circle, &problem, 5, 1, 1, "CIRCLE Q1");
  check_device_hierarchy(&circle, &problem, 4, 2, 1, "CIRCLE Q2");
  /* a source function (evaluated on the host) and g from the exact solution */
  CHECK_HOST(clmg_mesh_box(2, 3, 0.2, 11, &square, &error), error);
  clmg_poisson_problem manufactured = {.source = source_2d, .dirichlet = boundary_exact_2d};
  check_device_hierarchy(&square, &manufactured, 4, 2, 1, "distorted square Q2");
  /* hexahedra: a distorted box and the pipe's curved boundary */
  CHECK_HOST(clmg_mesh_box(3, 2, 0.2, 5, &box, &error), error);
  check_device_hierarchy(&box, &manufactured, 3, 1, 1, "distorted box Q1");
  check_device_hierarchy(&box, &manufactured, 2, 2, 1, "distorted box Q2");
  clmg_mesh star = {0};
  star_mesh(10, &star);
  CHECK_HOST(clmg_mesh_check(&star, &error), error);
  check_device_hierarchy(&star, &manufactured, 4, 1, 1, "star of 10 cells Q1");
  check_device_hierarchy(&star, &manufactured, 3, 2, 1, "star of 10 cells Q2");
  clmg_mesh_free(&star);
  CHECK_HOST(clmg_mesh_pipe(&pipe, &error), error);
  clmg_poisson_problem pipe_problem = {.source = source_pipe, .dirichlet = boundary_exact_pipe};
  check_device_hierarchy(&pipe, &pipe_problem, 3, 1, 1, "pipe Q1");
  clmg_mesh_free(&circle);
  clmg_mesh_free(&square);
  clmg_mesh_free(&box);
  clmg_mesh_free(&pipe);
}

/* Bad input: a simplex mesh, a bad level count, an inverted cell. */
/* Meshes of more cells than pocl runs work-items (a few thousand on a few
 * cores), so that a work-item takes whole vectors of cells or parents and a
 * shorter one at the end of its run (cl/fe_hierarchy.cl's FE_LANES,
 * cl/mesh_device.cl's SCREEN_LANES), with a constant source integrated on
 * the device: the hierarchy is still the host's. */
static void test_device_hierarchy_lanes(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh square = {0}, box = {0};
  const clmg_poisson_problem problem = {.dirichlet = boundary_exact_2d, .source_constant = 1.5};
  CHECK_HOST(clmg_mesh_box(2, 150, 0.2, 7, &square, &error), error);
  check_device_hierarchy(&square, &problem, 2, 1, 0, "distorted square of 22500 cells Q1");
  clmg_mesh_free(&square);
  CHECK_HOST(clmg_mesh_box(2, 100, 0.2, 7, &square, &error), error);
  check_device_hierarchy(&square, &problem, 2, 2, 0, "distorted square of 10000 cells Q2");
  CHECK_HOST(clmg_mesh_box(3, 14, 0.2, 7, &box, &error), error);
  check_device_hierarchy(&box, &problem, 2, 1, 0, "distorted box of 2744 cells Q1");
  clmg_mesh_free(&square);
  clmg_mesh_free(&box);
}

static void test_device_hierarchy_refuses(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh tets = {0}, box = {0};
  clmg_fe_device_hierarchy h = {0};
  CHECK_HOST(clmg_mesh_regular_tetrahedra(0, &tets, &error), error);
  assert_int_equal(clmg_fe_poisson_hierarchy_device(ctx, &tets, 2, 1, NULL, &h),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "tetrahedra"));
  CHECK_HOST(clmg_mesh_box(2, 2, 0.0, 1, &box, &error), error);
  assert_int_equal(clmg_fe_poisson_hierarchy_device(ctx, &box, 0, 1, NULL, &h),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_fe_poisson_hierarchy_device(ctx, &box, 2, 3, NULL, &h),
                   CLMG_ERROR_INVALID_ARGUMENT);
  /* one cell turned inside out (two corners swapped): the device says so */
  int32_t swap = box.cells[0];
  box.cells[0] = box.cells[1];
  box.cells[1] = swap;
  assert_int_equal(clmg_fe_poisson_hierarchy_device(ctx, &box, 1, 1, NULL, &h),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "cell 0 is inverted or degenerate"));
  assert_null(h.a);
  clmg_mesh_free(&tets);
  clmg_mesh_free(&box);
}

/* clmg_mesh_refine_on_device gives clmg_mesh_refine's mesh, bit for bit,
 * and its messages. */
static void check_refined_on_device(const clmg_mesh *coarse, int times, const char *what) {
  clmg_error error = {{0}};
  clmg_mesh host = {0}, device = {0};
  CHECK_HOST(clmg_mesh_copy(coarse, &host, &error), error);
  for (int k = 0; k < times; ++k) {
    clmg_mesh fine = {0};
    CHECK_HOST(clmg_mesh_refine(&host, &fine, &error), error);
    clmg_mesh_free(&host);
    host = fine;
  }
  CHECK_OK(clmg_mesh_refine_on_device(ctx, coarse, times, &device));
  assert_same_mesh(&device, &host, what);
  print_message("%s refined %d times on the device: %zu cells, %zu vertices, as on the host\n",
                what, times, device.num_cells, device.num_vertices);
  clmg_mesh_free(&host);
  clmg_mesh_free(&device);
}

static void test_refine_on_device(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh mesh = {0};
  CHECK_HOST(clmg_mesh_circle(&mesh, &error), error);
  check_refined_on_device(&mesh, 4, "CIRCLE");
  clmg_mesh_free(&mesh);
  CHECK_HOST(clmg_mesh_blood(&mesh, &error), error);
  check_refined_on_device(&mesh, 2, "BLOOD");
  clmg_mesh_free(&mesh);
  CHECK_HOST(clmg_mesh_box(2, 5, 0.25, 3, &mesh, &error), error);
  check_refined_on_device(&mesh, 3, "distorted square");
  clmg_mesh_free(&mesh);
  CHECK_HOST(clmg_mesh_box(3, 3, 0.2, 7, &mesh, &error), error);
  check_refined_on_device(&mesh, 2, "distorted box");
  /* materials go to the children */
  mesh.cell_material = malloc(mesh.num_cells * sizeof *mesh.cell_material);
  assert_non_null(mesh.cell_material);
  for (size_t k = 0; k < mesh.num_cells; ++k)
    mesh.cell_material[k] = 1 + (int32_t)(k % 3);
  check_refined_on_device(&mesh, 2, "distorted box with materials");
  clmg_mesh_free(&mesh);
  CHECK_HOST(clmg_mesh_pipe(&mesh, &error), error);
  check_refined_on_device(&mesh, 2, "pipe");
  clmg_mesh_free(&mesh);
  star_mesh(10, &mesh);
  check_refined_on_device(&mesh, 3, "star of 10 cells");
  check_refined_on_device(&mesh, 0, "star of 10 cells");
  clmg_mesh_free(&mesh);

  /* a thin parallelogram (quality 1.5e-12): the device's screen leaves it
   * to the host's full check, which passes it */
  const double slanted[8] = {0, 0, 1, 0, 1, 1.5e-12, 2, 1.5e-12};
  test_one_quadrilateral(slanted, 1, 1, 0.0, 0.0, 0.0, &mesh);
  check_refined_on_device(&mesh, 1, "thin parallelogram");
  clmg_mesh_free(&mesh);

  /* the host's messages: a midpoint on the circle's centre, a cell folded
   * by the projection */
  clmg_mesh fine = {0};
  const double strip[8] = {-1, 0, 1, 0, -1, 1, 1, 1};
  test_one_quadrilateral(strip, 1, 1, 0.0, 0.0, 1.0, &mesh);
  assert_int_equal(clmg_mesh_refine_on_device(ctx, &mesh, 1, &fine), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(clmg_context_message(ctx),
                 "new vertex 4 lies on the centre of the shape of tag 1");
  assert_null(fine.cells);
  clmg_mesh_free(&mesh);
  const double square[8] = {0, 0, 1, 0, 0, 1, 1, 1};
  test_one_quadrilateral(square, 1, 1, 0.5, 5.0, 0.5, &mesh);
  assert_int_equal(clmg_mesh_refine_on_device(ctx, &mesh, 1, &fine), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(clmg_context_message(ctx),
                 "refinement folds fine cell 0 (child 0 of coarse cell 0)");
  CHECK_CONTAINS(clmg_context_message(ctx), "after boundary projection");
  clmg_mesh_free(&mesh);

  /* simplices are the host's; bad arguments */
  CHECK_HOST(clmg_mesh_regular_tetrahedra(0, &mesh, &error), error);
  assert_int_equal(clmg_mesh_refine_on_device(ctx, &mesh, 1, &fine), CLMG_ERROR_UNSUPPORTED);
  CHECK_CONTAINS(clmg_context_message(ctx), "tetrahedra");
  assert_int_equal(clmg_mesh_refine_on_device(ctx, &mesh, -1, &fine), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_mesh_refine_on_device(ctx, &mesh, 1, &mesh), CLMG_ERROR_INVALID_ARGUMENT);
  clmg_mesh_free(&mesh);
}

/* ---- clmg_poisson_problem_solve (clmg/fe_solve.h) ---- */

/* ||b - A u|| / ||b|| on the host from the result's finest matrix (in the
 * hierarchy's numbering: row i is the mesh's node perm[i]). */
static double host_relative_residual(const clmg_fe_poisson_result *r) {
  const clmg_csr *a = &r->matrix;
  assert_int_equal(a->rows, r->n);
  double rr = 0, bb = 0;
  for (size_t i = 0; i < a->rows; ++i) {
    size_t row = r->perm ? (size_t)r->perm[i] : i;
    double sum = r->b[row];
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      size_t col = r->perm ? (size_t)r->perm[a->col[k]] : (size_t)a->col[k];
      sum -= a->val[k] * r->u[col];
    }
    rr += sum * sum;
    bb += r->b[row] * r->b[row];
  }
  return sqrt(rr / bb);
}

/* The manufactured solution on a distorted square through the one call,
 * assembled on the device (2LV) and on the host (CM), in cycles, CG and
 * mixed precision: each converges, its residual recomputed on the host from
 * the finest matrix meets the tolerance, and its L2 error is the
 * discretisation's (the order test's level-5 figure: below 2e-3 for Q1). */
static void test_poisson_problem_solve(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh square = {0};
  CHECK_HOST(clmg_mesh_box(2, 3, 0.2, 11, &square, &error), error);
  static const struct {
    clmg_fe_assembly assembly;
    clmg_numbering numbering;
    int degree;
    const char *options;
    int use_cg, mixed;
  } cases[] = {
      /* the default: a float cycle in double CG where the device has fp64 */
      {CLMG_FE_ASSEMBLY_AUTO, CLMG_NUMBERING_2LV, 1, "tol=1e-10", 1, 1},
      {CLMG_FE_ASSEMBLY_HOST, CLMG_NUMBERING_CM, 1, "tol=1e-10 krylov=cg", 1, 0},
      {CLMG_FE_ASSEMBLY_DEVICE, CLMG_NUMBERING_2LV, 2, "tol=1e-10 mg.cycle=w krylov=none", 0, 0},
      {CLMG_FE_ASSEMBLY_HOST, CLMG_NUMBERING_STO, 1, "tol=1e-10 precision=mixed", 1, 1},
  };
  int iterations[2] = {0, 0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    if (cases[c].mixed && !clmg_context_device(ctx)->has_fp64 && c != 0)
      continue;
    /* (without fp64 the default is float cycles alone) */
    int want_cg = cases[c].use_cg, want_mixed = cases[c].mixed;
    if (c == 0 && !clmg_context_device(ctx)->has_fp64)
      want_cg = want_mixed = 0;
    clmg_fe_poisson_spec spec;
    clmg_fe_poisson_spec_defaults(&spec);
    spec.coarse = &square;
    spec.level = 5 - cases[c].degree + 1;
    spec.degree = cases[c].degree;
    spec.problem.source = source_2d;
    spec.problem.dirichlet = boundary_exact_2d;
    spec.numbering = cases[c].numbering;
    spec.assembly = cases[c].assembly;
    spec.keep_matrix = 1;
    clmg_options *options = NULL;
    CHECK_HOST(clmg_options_create(&options, &error), error);
    CHECK_HOST(clmg_options_parse(options, cases[c].options, &error), error);
    clmg_fe_poisson_result r;
    CHECK_OK(clmg_poisson_problem_solve(ctx, &spec, options, NULL, NULL, &r));
    assert_true(r.solve.converged);
    assert_int_equal(r.info.use_cg, want_cg);
    assert_int_equal(r.info.mixed, want_mixed);
    assert_int_equal(r.info.on_device, cases[c].numbering == CLMG_NUMBERING_2LV);
    assert_int_equal(r.n, r.info.unknowns);
    assert_int_equal(r.mesh.num_vertices > 0, 1);
    assert_int_equal(r.solve.history_length, (size_t)r.solve.iterations + 1);
    assert_true(r.solve.iterations > 0 && r.solve.iterations < 40);
    double residual = host_relative_residual(&r);
    double l2 = 0;
    clmg_fe_space space = {0};
    CHECK_HOST(clmg_fe_space_create(&r.mesh, cases[c].degree, &space, &error), error);
    assert_int_equal(space.num_dofs, r.n);
    CHECK_HOST(clmg_fe_l2_error(&space, r.u, exact_2d, NULL, &l2, &error), error);
    print_message("fe_poisson case %zu: %zu unknowns, %d iterations, residual %.6e, L2 %.6e\n", c,
                  r.n, r.solve.iterations, residual, l2);
    if (!(residual <= 2e-10))
      fail_msg("case %zu: host residual %.3e above the tolerance", c, residual);
    if (!(l2 < (cases[c].degree == 1 ? 2e-3 : 2e-4)))
      fail_msg("case %zu: L2 error %.3e", c, l2);
    if (c < 2)
      iterations[c] = r.solve.iterations;
    clmg_fe_space_free(&space);
    clmg_fe_poisson_result_free(&r);
    clmg_options_destroy(options);
  }
  assert_true(iterations[0] > 0 && iterations[1] > 0);

  /* maxit runs out: NOT_CONVERGED with the last iterate and its history */
  clmg_fe_poisson_spec spec;
  clmg_fe_poisson_spec_defaults(&spec);
  spec.coarse = &square;
  spec.level = 4;
  clmg_options *options = NULL;
  CHECK_HOST(clmg_options_create(&options, &error), error);
  CHECK_HOST(clmg_options_parse(options, "maxit=2 tol=1e-12", &error), error);
  clmg_fe_poisson_result r;
  assert_int_equal(clmg_poisson_problem_solve(ctx, &spec, options, NULL, NULL, &r),
                   CLMG_ERROR_NOT_CONVERGED);
  assert_int_equal(r.solve.iterations, 2);
  assert_false(r.solve.converged);
  assert_non_null(r.u);
  assert_true(r.message[0] != '\0');
  clmg_fe_poisson_result_free(&r);
  /* bad specs and options: a status with a message, nothing left behind */
  static const char *bad_options[] = {"krylov=gmres", "precision=mixed krylov=none",
                                      "mg.smoother=nonesuch"};
  for (size_t k = 0; k < sizeof bad_options / sizeof bad_options[0]; ++k) {
    clmg_options_destroy(options);
    CHECK_HOST(clmg_options_create(&options, &error), error);
    CHECK_HOST(clmg_options_parse(options, bad_options[k], &error), error);
    assert_int_equal(clmg_poisson_problem_solve(ctx, &spec, options, NULL, NULL, &r),
                     CLMG_ERROR_INVALID_ARGUMENT);
    assert_true(strlen(clmg_context_message(ctx)) > 0);
    assert_null(r.u);
  }
  clmg_options_destroy(options);
  spec.level = 0;
  assert_int_equal(clmg_poisson_problem_solve(ctx, &spec, NULL, NULL, NULL, &r),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "level"));
  spec.level = 2;
  spec.degree = 3;
  assert_int_equal(clmg_poisson_problem_solve(ctx, &spec, NULL, NULL, NULL, &r),
                   CLMG_ERROR_INVALID_ARGUMENT);
  spec.degree = 1;
  spec.numbering = CLMG_NUMBERING_CM;
  spec.assembly = CLMG_FE_ASSEMBLY_DEVICE;
  assert_int_equal(clmg_poisson_problem_solve(ctx, &spec, NULL, NULL, NULL, &r),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "2lv"));
  spec.coarse = NULL;
  assert_int_equal(clmg_poisson_problem_solve(ctx, &spec, NULL, NULL, NULL, &r),
                   CLMG_ERROR_INVALID_ARGUMENT);
  /* the stages out of order */
  spec.coarse = &square;
  spec.numbering = CLMG_NUMBERING_2LV;
  spec.assembly = CLMG_FE_ASSEMBLY_AUTO;
  clmg_fe_poisson *p = NULL;
  CHECK_OK(clmg_fe_poisson_create(ctx, &spec, NULL, &p));
  memset(&r, 0, sizeof r);
  assert_int_equal(clmg_fe_poisson_solve(p, NULL, NULL, &r), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_fe_poisson_fetch(p, &r), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_OK(clmg_fe_poisson_setup(p));
  assert_int_equal(clmg_fe_poisson_setup(p), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_OK(clmg_fe_poisson_solve(p, NULL, NULL, &r));
  assert_true(r.solve.converged);
  clmg_fe_poisson_result_free(&r);
  clmg_fe_poisson_destroy(p);
  clmg_mesh_free(&square);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "gmg", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(20261122);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_circle_mesh_independent),
      cmocka_unit_test(test_agrees_with_cg),
      cmocka_unit_test(test_numberings_agree),
      cmocka_unit_test(test_manufactured_orders),
      cmocka_unit_test(test_smoothers_and_cycles_q2),
      cmocka_unit_test(test_blood),
      cmocka_unit_test(test_mixed_precision_circle),
      cmocka_unit_test(test_device_hierarchy),
      cmocka_unit_test(test_device_hierarchy_lanes),
      cmocka_unit_test(test_device_hierarchy_refuses),
      cmocka_unit_test(test_refine_on_device),
      cmocka_unit_test(test_poisson_problem_solve),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("gmg", tests, setup, teardown);
}
