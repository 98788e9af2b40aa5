/* Tests of the Q1/Q2 finite elements (include/clmg/fem.h), all on the host:
 * element stiffness matrices against their tensor-product closed forms,
 * symmetry and the patch test on distorted meshes, convergence orders with
 * manufactured solutions in 2D and 3D (also on the curved CIRCLE domain),
 * prolongations that reproduce (bi/tri)linear and quadratic functions, the
 * DOF numberings, and whole hierarchies (level sizes of CIRCLE, Galerkin
 * property, the same solution in every numbering). Linear systems are solved
 * with a small Jacobi-preconditioned CG on the host. */
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

#define PI 3.14159265358979323846

#define CHECK_OK(error, call) CHECK_ERROR_OK(error, call)

#define CHECK_NEAR(expected, actual, tolerance)                                                    \
  do {                                                                                             \
    double e_ = (expected), a_ = (actual);                                                         \
    if (!(fabs(e_ - a_) <= (tolerance)))                                                           \
      fail_msg("%s = %.17g, expected %s = %.17g (tolerance %g)", #actual, a_, #expected, e_,       \
               (double)(tolerance));                                                               \
  } while (0)

/* ---- helpers ---- */

static void *checked_malloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  assert_non_null(p);
  return p;
}

/* The dense n x m copy of a small matrix (row-major). */
static double *to_dense(const clmg_csr *a) {
  double *dense = calloc(a->rows * a->cols + 1, sizeof *dense);
  assert_non_null(dense);
  for (size_t i = 0; i < a->rows; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      dense[i * a->cols + (size_t)a->col[k]] = a->val[k];
  return dense;
}

static size_t bandwidth(const clmg_csr *a) {
  size_t width = 0;
  for (size_t i = 0; i < a->rows; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      size_t j = (size_t)a->col[k], distance = j > i ? j - i : i - j;
      if (distance > width)
        width = distance;
    }
  return width;
}

static void check_permutation(const int32_t *perm, size_t n) {
  uint8_t *seen = calloc(n + 1, 1);
  assert_non_null(seen);
  for (size_t i = 0; i < n; i++) {
    if (perm[i] < 0 || (size_t)perm[i] >= n || seen[perm[i]])
      fail_msg("perm[%zu] = %d: not a permutation of [0, %zu)", i, (int)perm[i], n);
    seen[perm[i]] = 1;
  }
  free(seen);
}

/* The mesh refined `times` times (the input is consumed). */
static void refine_times(clmg_mesh *mesh, int times) {
  clmg_error error;
  for (int t = 0; t < times; t++) {
    clmg_mesh fine;
    CHECK_OK(error, clmg_mesh_refine(mesh, &fine, &error));
    clmg_mesh_free(mesh);
    *mesh = fine;
  }
}

/* Problems with no Dirichlet boundary at all (a tag no mesh here uses), to
 * see the unconstrained stiffness matrix. */
static const int32_t no_such_tag = 99;
static const clmg_poisson_problem pure_neumann = {.dirichlet_tags = &no_such_tag,
                                                  .num_dirichlet_tags = 1};

/* ---- element stiffness ---- */

/* 1D stiffness and mass matrices of the Q1/Q2 Lagrange elements on [0,1]. */
static double stiffness_1d(int degree, int i, int j) {
  static const double q1[2][2] = {{1, -1}, {-1, 1}};
  static const double q2[3][3] = {{7, -8, 1}, {-8, 16, -8}, {1, -8, 7}};
  return degree == 1 ? q1[i][j] : q2[i][j] / 3.0;
}

static double mass_1d(int degree, int i, int j) {
  static const double q1[2][2] = {{2, 1}, {1, 2}};
  static const double q2[3][3] = {{4, 2, -1}, {2, 16, 2}, {-1, 2, 4}};
  return degree == 1 ? q1[i][j] / 6.0 : q2[i][j] / 30.0;
}

/* On the unit cell the stiffness matrix is sum_d K1 (axis d) x M1 (others). */
static double unit_cell_stiffness(int dim, int degree, size_t i, size_t j) {
  int n = degree + 1, index_i[3], index_j[3];
  for (int d = 0; d < dim; d++) {
    index_i[d] = (int)(i % (size_t)n);
    index_j[d] = (int)(j % (size_t)n);
    i /= (size_t)n;
    j /= (size_t)n;
  }
  double sum = 0.0;
  for (int d = 0; d < dim; d++) {
    double term = stiffness_1d(degree, index_i[d], index_j[d]);
    for (int e = 0; e < dim; e++)
      if (e != d)
        term *= mass_1d(degree, index_i[e], index_j[e]);
    sum += term;
  }
  return sum;
}

static void test_unit_cell_stiffness(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++)
    for (int degree = 1; degree <= 2; degree++) {
      clmg_mesh mesh;
      CHECK_OK(error, clmg_mesh_box(dim, 1, 0.0, 1, &mesh, &error));
      clmg_fe_space space;
      CHECK_OK(error, clmg_fe_space_create(&mesh, degree, &space, &error));
      assert_int_equal(space.dofs_per_cell, dim == 2 ? (degree + 1) * (degree + 1)
                                                     : (degree + 1) * (degree + 1) * (degree + 1));
      assert_int_equal(space.num_dofs, space.dofs_per_cell);
      clmg_csr a;
      double *b = checked_malloc(space.num_dofs * sizeof *b);
      uint8_t *mask = checked_malloc(space.num_dofs);
      CHECK_OK(error, clmg_fe_assemble_poisson(&space, &pure_neumann, &a, b, mask, &error));
      double *dense = to_dense(&a);
      for (size_t i = 0; i < space.dofs_per_cell; i++) {
        assert_int_equal(mask[i], 0);
        CHECK_NEAR(0.0, b[i], 0.0);
        double row_sum = 0.0;
        for (size_t j = 0; j < space.dofs_per_cell; j++) {
          size_t gi = (size_t)space.cell_dofs[i], gj = (size_t)space.cell_dofs[j];
          double value = dense[gi * space.num_dofs + gj];
          CHECK_NEAR(unit_cell_stiffness(dim, degree, i, j), value, 1e-13);
          CHECK_NEAR(dense[gj * space.num_dofs + gi], value, 1e-15);
          row_sum += value;
        }
        CHECK_NEAR(0.0, row_sum, 1e-13);
      }
      if (dim == 2 && degree == 1) {
        /* The classic Q1 values: 2/3 on the diagonal, -1/6 along an edge,
         * -1/3 across the diagonal (vertices 0 and 3 in tensor order). */
        size_t v0 = (size_t)space.cell_dofs[0], v1 = (size_t)space.cell_dofs[1],
               v3 = (size_t)space.cell_dofs[3];
        CHECK_NEAR(2.0 / 3.0, dense[v0 * 4 + v0], 1e-14);
        CHECK_NEAR(-1.0 / 6.0, dense[v0 * 4 + v1], 1e-14);
        CHECK_NEAR(-1.0 / 3.0, dense[v0 * 4 + v3], 1e-14);
      }
      free(dense);
      free(b);
      free(mask);
      clmg_csr_free(&a);
      clmg_fe_space_free(&space);
      clmg_mesh_free(&mesh);
    }
}

/* On distorted meshes: A symmetric with a positive diagonal; without
 * Dirichlet conditions the constants are its kernel (zero row sums). */
static void test_matrix_properties(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++)
    for (int degree = 1; degree <= 2; degree++) {
      clmg_mesh mesh;
      CHECK_OK(error, clmg_mesh_box(dim, dim == 2 ? 5 : 3, 0.25, 17, &mesh, &error));
      clmg_fe_space space;
      CHECK_OK(error, clmg_fe_space_create(&mesh, degree, &space, &error));
      size_t n = space.num_dofs;
      double *b = checked_malloc(n * sizeof *b), *ones = checked_malloc(n * sizeof *ones),
             *product = checked_malloc(n * sizeof *product);
      uint8_t *mask = checked_malloc(n);
      for (int eliminate = 0; eliminate < 2; eliminate++) {
        clmg_csr a;
        CHECK_OK(error, clmg_fe_assemble_poisson(&space, eliminate ? NULL : &pure_neumann, &a, b,
                                                 mask, &error));
        assert_int_equal(a.rows, n);
        assert_int_equal(a.cols, n);
        assert_true(clmg_csr_is_symmetric(&a, 1e-12));
        double *diagonal = checked_malloc(n * sizeof *diagonal);
        CHECK_OK(error, clmg_csr_diagonal(&a, diagonal, &error));
        size_t dirichlet = 0;
        for (size_t i = 0; i < n; i++) {
          assert_true(diagonal[i] > 0.0);
          dirichlet += mask[i];
          /* Boundary DOFs, and only they, are Dirichlet when eliminating. */
          assert_int_equal(mask[i], eliminate ? space.dof_boundary[i] != 0 : 0);
          if (mask[i]) {
            assert_int_equal(a.row_ptr[i + 1] - a.row_ptr[i], 1);
            CHECK_NEAR(1.0, diagonal[i], 0.0);
          }
        }
        if (!eliminate) {
          for (size_t i = 0; i < n; i++)
            ones[i] = 1.0;
          clmg_csr_spmv_host(1.0, &a, ones, 0.0, product);
          for (size_t i = 0; i < n; i++)
            CHECK_NEAR(0.0, product[i], 1e-12 * diagonal[i]);
        } else {
          assert_true(dirichlet > 0 && dirichlet < n);
          /* Eliminated columns: no non-Dirichlet row couples to a Dirichlet
           * DOF. */
          for (size_t i = 0; i < n; i++)
            for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
              if ((size_t)a.col[k] != i)
                assert_false(mask[a.col[k]]);
        }
        free(diagonal);
        clmg_csr_free(&a);
      }
      free(b);
      free(ones);
      free(product);
      free(mask);
      clmg_fe_space_free(&space);
      clmg_mesh_free(&mesh);
    }
}

/* ---- the patch test ----
 * On a multilinear cell the Q1 space holds the physical linear functions
 * and Q2 the physical quadratics, and the quadrature is exact for them; so
 * a harmonic solution of that degree is reproduced at the nodes (to the
 * solver's tolerance) on a distorted mesh. This checks the elimination and
 * the right-hand side as well as the matrix. */

static double harmonic_function(const double *x, void *data) {
  int dim = *(const int *)data;
  double z = dim == 3 ? x[2] : 0.0;
  return 0.3 + 1.1 * x[0] - 0.7 * x[1] + 0.5 * z;
}

static double harmonic_quadratic(const double *x, void *data) {
  int dim = *(const int *)data;
  double z = dim == 3 ? x[2] : 0.0;
  return harmonic_function(x, data) + x[0] * x[0] - x[1] * x[1] + 0.8 * x[0] * x[1] -
         0.6 * x[1] * z + 0.4 * x[0] * z;
}

static double harmonic_boundary(const double *x, int32_t tag, void *data) {
  (void)tag;
  return harmonic_function(x, data);
}

static double harmonic_quadratic_boundary(const double *x, int32_t tag, void *data) {
  (void)tag;
  return harmonic_quadratic(x, data);
}

static void test_patch(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++)
    for (int degree = 1; degree <= 2; degree++) {
      clmg_mesh mesh;
      CHECK_OK(error, clmg_mesh_box(dim, dim == 2 ? 4 : 3, 0.25, 5, &mesh, &error));
      clmg_fe_space space;
      CHECK_OK(error, clmg_fe_space_create(&mesh, degree, &space, &error));
      clmg_fe_function exact = degree == 1 ? harmonic_function : harmonic_quadratic;
      clmg_poisson_problem problem = {0};
      problem.dirichlet = degree == 1 ? harmonic_boundary : harmonic_quadratic_boundary;
      problem.dirichlet_data = &dim;
      size_t n = space.num_dofs;
      double *b = checked_malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
      uint8_t *mask = checked_malloc(n);
      assert_non_null(x);
      clmg_csr a;
      CHECK_OK(error, clmg_fe_assemble_poisson(&space, &problem, &a, b, mask, &error));
      test_host_cg(&a, b, x, 1e-14);
      for (size_t i = 0; i < n; i++) {
        double expected = exact(space.dof_coords + i * (size_t)dim, &dim);
        if (mask[i])
          CHECK_NEAR(expected, b[i], 1e-15);
        CHECK_NEAR(expected, x[i], 1e-10);
      }
      double l2;
      CHECK_OK(error, clmg_fe_l2_error(&space, x, exact, &dim, &l2, &error));
      assert_true(l2 < 1e-10);
      clmg_csr_free(&a);
      free(b);
      free(x);
      free(mask);
      clmg_fe_space_free(&space);
      clmg_mesh_free(&mesh);
    }
}

/* ---- convergence orders ---- */

static double sine_solution(const double *x, void *data) {
  int dim = *(const int *)data;
  double u = sin(PI * x[0]) * sin(PI * x[1]);
  return dim == 3 ? u * sin(PI * x[2]) : u;
}

static double sine_source(const double *x, void *data) {
  int dim = *(const int *)data;
  return dim * PI * PI * sine_solution(x, data);
}

static double sine_boundary(const double *x, int32_t tag, void *data) {
  (void)tag;
  return sine_solution(x, data);
}

/* Solves the sine problem on mesh with the given degree; returns the L2
 * error. */
static double sine_error(const clmg_mesh *mesh, int degree) {
  clmg_error error;
  int dim = mesh->dim;
  clmg_fe_space space;
  CHECK_OK(error, clmg_fe_space_create(mesh, degree, &space, &error));
  clmg_poisson_problem problem = {.source = sine_source,
                                  .source_data = &dim,
                                  .dirichlet = sine_boundary,
                                  .dirichlet_data = &dim};
  size_t n = space.num_dofs;
  double *b = checked_malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
  assert_non_null(x);
  clmg_csr a;
  CHECK_OK(error, clmg_fe_assemble_poisson(&space, &problem, &a, b, NULL, &error));
  test_host_cg(&a, b, x, 1e-13);
  double l2;
  CHECK_OK(error, clmg_fe_l2_error(&space, x, sine_solution, &dim, &l2, &error));
  clmg_csr_free(&a);
  free(b);
  free(x);
  clmg_fe_space_free(&space);
  return l2;
}

/* Errors on `count` successive refinements of mesh (after `first` initial
 * ones); checks every observed order log2(e_l / e_{l+1}) against bounds. */
static void check_orders(const char *name, clmg_mesh *mesh, int degree, int first, int count,
                         double low, double high) {
  double errors[8];
  refine_times(mesh, first);
  for (int l = 0; l < count; l++) {
    if (l > 0)
      refine_times(mesh, 1);
    errors[l] = sine_error(mesh, degree);
  }
  for (int l = 1; l < count; l++) {
    double order = log2(errors[l - 1] / errors[l]);
    print_message("%s Q%d: L2 error %.3e -> %.3e, order %.3f\n", name, degree, errors[l - 1],
                  errors[l], order);
    if (!(order >= low && order <= high))
      fail_msg("%s Q%d: observed order %.3f outside [%.2f, %.2f]", name, degree, order, low, high);
  }
}

static void test_convergence_2d(void **state) {
  (void)state;
  clmg_error error;
  for (int degree = 1; degree <= 2; degree++) {
    clmg_mesh mesh;
    CHECK_OK(error, clmg_mesh_box(2, 2, 0.2, 3, &mesh, &error));
    if (degree == 1)
      check_orders("box 2D", &mesh, 1, 1, 5, 1.8, 2.3);
    else
      check_orders("box 2D", &mesh, 2, 1, 4, 2.7, 3.4);
    clmg_mesh_free(&mesh);
  }
}

static void test_convergence_3d(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh;
  CHECK_OK(error, clmg_mesh_box(3, 2, 0.2, 3, &mesh, &error));
  check_orders("box 3D", &mesh, 1, 0, 4, 1.7, 2.3);
  clmg_mesh_free(&mesh);
  CHECK_OK(error, clmg_mesh_box(3, 1, 0.0, 3, &mesh, &error));
  check_orders("box 3D", &mesh, 2, 1, 3, 2.6, 3.5);
  clmg_mesh_free(&mesh);
}

/* A curved boundary: the CIRCLE domain, whose refinement projects new
 * boundary vertices onto the hole; Q1 keeps its order 2. */
static void test_convergence_curved(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh;
  CHECK_OK(error, clmg_mesh_circle(&mesh, &error));
  check_orders("CIRCLE", &mesh, 1, 2, 4, 1.8, 2.3);
  clmg_mesh_free(&mesh);
}

/* ---- prolongation ---- */

static double reproduced_function(const double *x, void *data) {
  /* Linear for Q1, quadratic for Q2: in both the Q_k space of any
   * multilinear cell. */
  int dim = ((const int *)data)[0], degree = ((const int *)data)[1];
  double z = dim == 3 ? x[2] : 0.0;
  double u = 0.3 + 1.1 * x[0] - 0.7 * x[1] + 0.9 * z;
  if (degree == 2)
    u += 0.8 * x[0] * x[0] - 0.4 * x[0] * x[1] + 0.6 * x[1] * x[1] + 0.5 * x[0] * z - z * z;
  return u;
}

static double *interpolate(const clmg_fe_space *space, clmg_fe_function f, void *data) {
  size_t dim = (size_t)space->mesh->dim;
  double *values = checked_malloc(space->num_dofs * sizeof *values);
  for (size_t i = 0; i < space->num_dofs; i++)
    values[i] = f(space->dof_coords + i * dim, data);
  return values;
}

static void test_prolongation_reproduces(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++)
    for (int degree = 1; degree <= 2; degree++) {
      clmg_mesh coarse_mesh, fine_mesh;
      CHECK_OK(error, clmg_mesh_box(dim, dim == 2 ? 4 : 2, 0.25, 11, &coarse_mesh, &error));
      CHECK_OK(error, clmg_mesh_refine(&coarse_mesh, &fine_mesh, &error));
      clmg_fe_space coarse, fine;
      CHECK_OK(error, clmg_fe_space_create(&coarse_mesh, degree, &coarse, &error));
      CHECK_OK(error, clmg_fe_space_create(&fine_mesh, degree, &fine, &error));
      clmg_csr p;
      CHECK_OK(error, clmg_fe_prolongation(&coarse, &fine, NULL, NULL, &p, &error));
      assert_int_equal(p.rows, fine.num_dofs);
      assert_int_equal(p.cols, coarse.num_dofs);
      int data[2] = {dim, degree};
      double *coarse_values = interpolate(&coarse, reproduced_function, data);
      double *fine_values = interpolate(&fine, reproduced_function, data);
      double *prolongated = checked_malloc(fine.num_dofs * sizeof *prolongated);
      clmg_csr_spmv_host(1.0, &p, coarse_values, 0.0, prolongated);
      for (size_t i = 0; i < fine.num_dofs; i++)
        CHECK_NEAR(fine_values[i], prolongated[i], 1e-12);
      /* Interpolation is a partition of unity: every row sums to 1, and at
       * most (k+1)^dim entries per row (Geveler et al. 2011, section 2.3). */
      for (size_t i = 0; i < fine.num_dofs; i++) {
        double sum = 0.0;
        for (int64_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; k++)
          sum += p.val[k];
        CHECK_NEAR(1.0, sum, 1e-13);
        assert_true((size_t)(p.row_ptr[i + 1] - p.row_ptr[i]) <= coarse.dofs_per_cell);
      }

      /* Masks: the rows of fine Dirichlet DOFs and the columns of coarse
       * ones vanish; the other entries stay. */
      uint8_t *coarse_mask = checked_malloc(coarse.num_dofs),
              *fine_mask = checked_malloc(fine.num_dofs);
      double *scratch = checked_malloc(fine.num_dofs * sizeof *scratch);
      clmg_csr a;
      CHECK_OK(error, clmg_fe_assemble_poisson(&coarse, NULL, &a, scratch, coarse_mask, &error));
      clmg_csr_free(&a);
      CHECK_OK(error, clmg_fe_assemble_poisson(&fine, NULL, &a, scratch, fine_mask, &error));
      clmg_csr_free(&a);
      clmg_csr masked;
      CHECK_OK(error,
               clmg_fe_prolongation(&coarse, &fine, coarse_mask, fine_mask, &masked, &error));
      double *dense = to_dense(&p), *dense_masked = to_dense(&masked);
      for (size_t i = 0; i < fine.num_dofs; i++)
        for (size_t j = 0; j < coarse.num_dofs; j++) {
          double expected = fine_mask[i] || coarse_mask[j] ? 0.0 : dense[i * coarse.num_dofs + j];
          CHECK_NEAR(expected, dense_masked[i * coarse.num_dofs + j], 0.0);
        }
      free(dense);
      free(dense_masked);
      free(scratch);
      free(coarse_mask);
      free(fine_mask);
      clmg_csr_free(&masked);
      free(coarse_values);
      free(fine_values);
      free(prolongated);
      clmg_csr_free(&p);
      clmg_fe_space_free(&coarse);
      clmg_fe_space_free(&fine);
      clmg_mesh_free(&coarse_mesh);
      clmg_mesh_free(&fine_mesh);
    }
}

/* 2D Q1 (Geveler et al. 2011, section 2.3.1): P = [I; P_e; P_q] in the two-level
 * numbering, edge rows two entries of 1/2, cell rows four of 1/4. */
static void test_prolongation_q1_pattern(void **state) {
  (void)state;
  clmg_error error;
  const int n = 3;
  clmg_mesh coarse_mesh, fine_mesh;
  CHECK_OK(error, clmg_mesh_box(2, n, 0.2, 7, &coarse_mesh, &error));
  CHECK_OK(error, clmg_mesh_refine(&coarse_mesh, &fine_mesh, &error));
  clmg_fe_space coarse, fine;
  CHECK_OK(error, clmg_fe_space_create(&coarse_mesh, 1, &coarse, &error));
  CHECK_OK(error, clmg_fe_space_create(&fine_mesh, 1, &fine, &error));
  clmg_csr p;
  CHECK_OK(error, clmg_fe_prolongation(&coarse, &fine, NULL, NULL, &p, &error));
  size_t vertex_rows = 0, edge_rows = 0, cell_rows = 0;
  for (size_t i = 0; i < p.rows; i++) {
    int64_t begin = p.row_ptr[i], length = p.row_ptr[i + 1] - begin;
    if (i < coarse.num_dofs) {
      assert_int_equal(length, 1);
      assert_int_equal(p.col[begin], i);
      CHECK_NEAR(1.0, p.val[begin], 1e-15);
      vertex_rows++;
      continue;
    }
    assert_true(length == 2 || length == 4);
    for (int64_t k = begin; k < begin + length; k++)
      CHECK_NEAR(1.0 / (double)length, p.val[k], 1e-15);
    if (length == 2)
      edge_rows++;
    else
      cell_rows++;
  }
  assert_int_equal(vertex_rows, (n + 1) * (n + 1));
  assert_int_equal(edge_rows, 2 * n * (n + 1));
  assert_int_equal(cell_rows, n * n);
  clmg_csr_free(&p);
  clmg_fe_space_free(&coarse);
  clmg_fe_space_free(&fine);
  clmg_mesh_free(&coarse_mesh);
  clmg_mesh_free(&fine_mesh);
}

/* ---- numberings ---- */

static void test_numbering_names(void **state) {
  (void)state;
  const char *names[] = {"2LV", "CM", "XYZ", "STO", "HIE"};
  for (int k = 0; k < 5; k++) {
    assert_string_equal(clmg_numbering_name((clmg_numbering)k), names[k]);
    clmg_numbering parsed = CLMG_NUMBERING_HIE;
    assert_int_equal(clmg_numbering_parse(names[k], &parsed), 1);
    assert_int_equal(parsed, k);
  }
  clmg_numbering parsed = CLMG_NUMBERING_CM;
  assert_int_equal(clmg_numbering_parse("xyz", &parsed), 1);
  assert_int_equal(parsed, CLMG_NUMBERING_XYZ);
  assert_int_equal(clmg_numbering_parse("Hie", &parsed), 1);
  assert_int_equal(parsed, CLMG_NUMBERING_HIE);
  assert_int_equal(clmg_numbering_parse("xy", &parsed), 0);
  assert_int_equal(clmg_numbering_parse("xyzz", &parsed), 0);
  assert_int_equal(clmg_numbering_parse("", &parsed), 0);
  assert_int_equal(clmg_numbering_parse(NULL, &parsed), 0);
  assert_string_equal(clmg_numbering_name((clmg_numbering)42), "unknown");
}

static void test_numberings(void **state) {
  (void)state;
  clmg_error error;
  for (int degree = 1; degree <= 2; degree++) {
    clmg_mesh mesh;
    CHECK_OK(error, clmg_mesh_circle(&mesh, &error));
    refine_times(&mesh, 3);
    clmg_fe_space space;
    CHECK_OK(error, clmg_fe_space_create(&mesh, degree, &space, &error));
    size_t n = space.num_dofs, dim = 2;
    clmg_csr a;
    double *b = checked_malloc(n * sizeof *b);
    CHECK_OK(error, clmg_fe_assemble_poisson(&space, &pure_neumann, &a, b, NULL, &error));
    int32_t *perm = checked_malloc(n * sizeof *perm);
    size_t widths[5];
    for (int k = 0; k < 5; k++) {
      CHECK_OK(error, clmg_fe_numbering(&space, &a, (clmg_numbering)k, 1234, perm, &error));
      check_permutation(perm, n);
      clmg_csr permuted;
      CHECK_OK(error, clmg_csr_permute(&a, perm, perm, &permuted, &error));
      widths[k] = bandwidth(&permuted);
      clmg_csr_free(&permuted);
      if (k == CLMG_NUMBERING_2LV)
        for (size_t i = 0; i < n; i++)
          assert_int_equal(perm[i], i);
      if (k == CLMG_NUMBERING_XYZ)
        for (size_t i = 1; i < n; i++) {
          const double *previous = space.dof_coords + (size_t)perm[i - 1] * dim,
                       *current = space.dof_coords + (size_t)perm[i] * dim;
          assert_true(previous[0] < current[0] ||
                      (previous[0] == current[0] && previous[1] <= current[1]));
        }
      if (k == CLMG_NUMBERING_HIE) {
        /* Walking the cells in order meets the DOFs in their new order. */
        uint8_t *seen = calloc(n, 1);
        assert_non_null(seen);
        size_t next = 0;
        for (size_t e = 0; e < mesh.num_cells * space.dofs_per_cell; e++) {
          int32_t dof = space.cell_dofs[e];
          if (!seen[dof]) {
            seen[dof] = 1;
            assert_int_equal(perm[next], dof);
            next++;
          }
        }
        assert_int_equal(next, n);
        free(seen);
      }
      if (k == CLMG_NUMBERING_STO) {
        /* Reproducible from the seed, different for another seed. */
        int32_t *again = checked_malloc(n * sizeof *again);
        CHECK_OK(error, clmg_fe_numbering(&space, NULL, CLMG_NUMBERING_STO, 1234, again, &error));
        assert_memory_equal(perm, again, n * sizeof *perm);
        CHECK_OK(error, clmg_fe_numbering(&space, NULL, CLMG_NUMBERING_STO, 1235, again, &error));
        assert_memory_not_equal(perm, again, n * sizeof *perm);
        free(again);
      }
    }
    print_message("CIRCLE level 4 Q%d (%zu DOFs) bandwidths: 2LV %zu, CM %zu, XYZ %zu, STO %zu, "
                  "HIE %zu\n",
                  degree, n, widths[0], widths[1], widths[2], widths[3], widths[4]);
    assert_true(widths[CLMG_NUMBERING_CM] < widths[CLMG_NUMBERING_STO]);
    assert_true(widths[CLMG_NUMBERING_CM] < widths[CLMG_NUMBERING_2LV]);
    /* A ring of 64 x 8 cells: CM sweeps it in narrow fronts. */
    assert_true(widths[CLMG_NUMBERING_CM] < n / 4);
    free(perm);
    free(b);
    clmg_csr_free(&a);
    clmg_fe_space_free(&space);
    clmg_mesh_free(&mesh);
  }
}

/* A mesh of `count` separate unit squares side by side (disconnected DOF
 * graph), built by hand. */
static void separate_squares(size_t count, clmg_mesh *mesh) {
  memset(mesh, 0, sizeof *mesh);
  mesh->dim = 2;
  mesh->num_vertices = 4 * count;
  mesh->num_cells = count;
  mesh->num_boundary_faces = 4 * count;
  mesh->coords = checked_malloc(mesh->num_vertices * 2 * sizeof *mesh->coords);
  mesh->cells = checked_malloc(count * 4 * sizeof *mesh->cells);
  mesh->boundary_faces = checked_malloc(count * 8 * sizeof *mesh->boundary_faces);
  mesh->boundary_face_tag = checked_malloc(count * 4 * sizeof *mesh->boundary_face_tag);
  for (size_t c = 0; c < count; c++) {
    int32_t first = (int32_t)(4 * c);
    for (int v = 0; v < 4; v++) {
      mesh->coords[(first + v) * 2] = 2.0 * (double)c + (v & 1);
      mesh->coords[(first + v) * 2 + 1] = (double)(v >> 1);
      mesh->cells[first + v] = first + v;
    }
    /* Edges in tensor order: bottom (0,1), top (2,3), left (0,2), right (1,3). */
    const int edges[4][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}};
    for (int e = 0; e < 4; e++) {
      mesh->boundary_faces[(4 * c + (size_t)e) * 2] = first + edges[e][0];
      mesh->boundary_faces[(4 * c + (size_t)e) * 2 + 1] = first + edges[e][1];
      mesh->boundary_face_tag[4 * c + (size_t)e] = 1;
    }
  }
}

static void test_cuthill_mckee_disconnected(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh;
  separate_squares(3, &mesh);
  for (int degree = 1; degree <= 2; degree++) {
    clmg_fe_space space;
    CHECK_OK(error, clmg_fe_space_create(&mesh, degree, &space, &error));
    size_t n = space.num_dofs;
    int32_t *perm = checked_malloc(n * sizeof *perm);
    CHECK_OK(error, clmg_fe_numbering(&space, NULL, CLMG_NUMBERING_CM, 0, perm, &error));
    check_permutation(perm, n);
    /* Each component (a cell here) is numbered in one block. */
    size_t *cell_of = checked_malloc(n * sizeof *cell_of);
    for (size_t e = 0; e < mesh.num_cells * space.dofs_per_cell; e++)
      cell_of[space.cell_dofs[e]] = e / space.dofs_per_cell;
    for (size_t i = 0; i < n; i++)
      assert_int_equal(cell_of[perm[i]], cell_of[perm[i - i % space.dofs_per_cell]]);
    free(cell_of);
    free(perm);
    clmg_fe_space_free(&space);
  }
  clmg_mesh_free(&mesh);
}

/* ---- hierarchies ---- */

static double unit_source(const double *x, void *data) {
  (void)x;
  (void)data;
  return 1.0;
}

/* CIRCLE: u = 0 on the square (tag 1), u = 1 on the circle (tag 2). */
static double circle_boundary(const double *x, int32_t tag, void *data) {
  (void)x;
  (void)data;
  return tag == 2 ? 1.0 : 0.0;
}

static const clmg_poisson_problem circle_problem = {.source = unit_source,
                                                    .dirichlet = circle_boundary};

static void check_hierarchy_shapes(const clmg_fe_hierarchy *h) {
  clmg_error error;
  for (int l = 0; l < h->num_levels; l++) {
    size_t n = h->spaces[l].num_dofs;
    assert_int_equal(h->a[l].rows, n);
    assert_int_equal(h->a[l].cols, n);
    check_permutation(h->perm[l], n);
    if (l == 0) {
      assert_int_equal(clmg_csr_nnz(&h->p[0]), 0);
      assert_int_equal(clmg_csr_nnz(&h->r[0]), 0);
      continue;
    }
    assert_int_equal(h->p[l].rows, n);
    assert_int_equal(h->p[l].cols, h->spaces[l - 1].num_dofs);
    clmg_csr transposed;
    CHECK_OK(error, clmg_csr_transpose(&h->p[l], &transposed, &error));
    assert_int_equal(h->r[l].rows, transposed.rows);
    assert_int_equal(h->r[l].cols, transposed.cols);
    assert_memory_equal(h->r[l].row_ptr, transposed.row_ptr,
                        (transposed.rows + 1) * sizeof *transposed.row_ptr);
    assert_memory_equal(h->r[l].col, transposed.col,
                        clmg_csr_nnz(&transposed) * sizeof *transposed.col);
    assert_memory_equal(h->r[l].val, transposed.val,
                        clmg_csr_nnz(&transposed) * sizeof *transposed.val);
    clmg_csr_free(&transposed);
  }
}

static void test_hierarchy_circle(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh circle;
  CHECK_OK(error, clmg_mesh_circle(&circle, &error));
  const size_t expected[5] = {16, 48, 160, 576, 2176};
  for (int degree = 1; degree <= 2; degree++) {
    clmg_fe_hierarchy h;
    CHECK_OK(error, clmg_fe_poisson_hierarchy(&circle, 4, degree, &circle_problem,
                                              CLMG_NUMBERING_2LV, 0, &h, &error));
    assert_int_equal(h.num_levels, 4);
    assert_int_equal(h.degree, degree);
    for (int l = 0; l < 4; l++)
      assert_int_equal(h.spaces[l].num_dofs, expected[l + degree - 1]);
    check_hierarchy_shapes(&h);
    /* Finest level: g on the Dirichlet DOFs, 1 on the circle's, 0 on the
     * square's (64 x 2^(degree-1) each). */
    size_t n = h.spaces[3].num_dofs, on_circle = 0, on_square = 0;
    for (size_t i = 0; i < n; i++) {
      if (!h.is_dirichlet[i]) {
        CHECK_NEAR(0.0, h.x0[i], 0.0);
        continue;
      }
      CHECK_NEAR(h.b[i], h.x0[i], 0.0);
      if (h.x0[i] == 1.0)
        on_circle++;
      else if (h.x0[i] == 0.0)
        on_square++;
    }
    assert_int_equal(on_circle, 64 * degree);
    assert_int_equal(on_square, 64 * degree);
    clmg_fe_hierarchy_free(&h);
    clmg_fe_hierarchy_free(&h); /* a freed hierarchy is zeroed */
  }
  clmg_mesh_free(&circle);
}

/* Every numbering gives the same finest-level solution once unpermuted. */
static void test_hierarchy_numberings_agree(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh circle;
  CHECK_OK(error, clmg_mesh_circle(&circle, &error));
  for (int degree = 1; degree <= 2; degree++) {
    double *reference = NULL;
    size_t n = 0;
    for (int k = 0; k < 5; k++) {
      clmg_fe_hierarchy h;
      CHECK_OK(error, clmg_fe_poisson_hierarchy(&circle, 3, degree, &circle_problem,
                                                (clmg_numbering)k, 99, &h, &error));
      check_hierarchy_shapes(&h);
      n = h.spaces[2].num_dofs;
      double *x = checked_malloc(n * sizeof *x), *u = checked_malloc(n * sizeof *u);
      memcpy(x, h.x0, n * sizeof *x);
      test_host_cg(&h.a[2], h.b, x, 1e-13);
      clmg_fe_hierarchy_unpermute(&h, x, u);
      if (k == 0) {
        reference = u;
        /* The maximum principle: 0 <= u, and u is 1 on the circle. */
        for (size_t i = 0; i < n; i++)
          assert_true(u[i] > -1e-12);
      } else {
        for (size_t i = 0; i < n; i++)
          CHECK_NEAR(reference[i], u[i], 1e-10);
        free(u);
      }
      free(x);
      clmg_fe_hierarchy_free(&h);
    }
    free(reference);
  }
  clmg_mesh_free(&circle);
}

/* On an undistorted box the cells are affine, the quadrature is exact and
 * the spaces nest, so A_coarse = P^T A_fine P on the non-Dirichlet DOFs
 * (the Galerkin property), in any numbering. Coarse Dirichlet DOFs are the
 * empty columns of P. */
static void test_hierarchy_galerkin(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh box;
  CHECK_OK(error, clmg_mesh_box(2, 2, 0.0, 1, &box, &error));
  for (int degree = 1; degree <= 2; degree++) {
    clmg_fe_hierarchy h;
    CHECK_OK(error,
             clmg_fe_poisson_hierarchy(&box, 3, degree, NULL, CLMG_NUMBERING_STO, 7, &h, &error));
    for (int l = 1; l < h.num_levels; l++) {
      const clmg_csr *p = &h.p[l];
      size_t nf = p->rows, nc = p->cols;
      double *fine_a = to_dense(&h.a[l]), *coarse_a = to_dense(&h.a[l - 1]);
      double *dense_p = to_dense(p);
      uint8_t *coarse_free = calloc(nc, 1);
      assert_non_null(coarse_free);
      for (size_t k = 0; k < clmg_csr_nnz(p); k++)
        coarse_free[p->col[k]] = 1;
      double *ap = calloc(nf * nc, sizeof *ap);
      assert_non_null(ap);
      for (size_t i = 0; i < nf; i++)
        for (size_t k = 0; k < nf; k++)
          if (fine_a[i * nf + k] != 0.0)
            for (size_t j = 0; j < nc; j++)
              ap[i * nc + j] += fine_a[i * nf + k] * dense_p[k * nc + j];
      size_t free_count = 0;
      for (size_t i = 0; i < nc; i++) {
        free_count += coarse_free[i];
        for (size_t j = 0; j < nc; j++) {
          if (!coarse_free[i] || !coarse_free[j])
            continue;
          double galerkin = 0.0;
          for (size_t k = 0; k < nf; k++)
            galerkin += dense_p[k * nc + i] * ap[k * nc + j];
          CHECK_NEAR(coarse_a[i * nc + j], galerkin, 1e-12);
        }
      }
      /* Interior coarse DOFs: (2^l + 1 - 2)^2 nodes of the degree-k grid. */
      size_t side = ((size_t)2 << (l - 1)) * (size_t)degree - 1;
      assert_int_equal(free_count, side * side);
      free(fine_a);
      free(coarse_a);
      free(dense_p);
      free(coarse_free);
      free(ap);
    }
    clmg_fe_hierarchy_free(&h);
  }
  clmg_mesh_free(&box);
}

/* ---- errors ---- */

static int csr_is_zeroed(const clmg_csr *a) {
  return a->rows == 0 && a->cols == 0 && !a->row_ptr && !a->col && !a->val;
}

static void test_errors(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh, fine_mesh;
  CHECK_OK(error, clmg_mesh_box(2, 2, 0.1, 1, &mesh, &error));
  CHECK_OK(error, clmg_mesh_refine(&mesh, &fine_mesh, &error));
  clmg_fe_space space, q2;
  memset(&space, 0x5a, sizeof space);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_fe_space_create(&mesh, 3, &space, &error));
  assert_non_null(strstr(error.message, "degree 3"));
  assert_null(space.cell_dofs);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_fe_space_create(NULL, 1, &space, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_fe_space_create(&mesh, 1, NULL, &error));

  CHECK_OK(error, clmg_fe_space_create(&mesh, 1, &space, &error));
  CHECK_OK(error, clmg_fe_space_create(&fine_mesh, 2, &q2, &error));
  clmg_csr a;
  memset(&a, 0x5a, sizeof a);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_assemble_poisson(&space, NULL, &a, NULL, NULL, &error));
  assert_true(csr_is_zeroed(&a));
  memset(&a, 0x5a, sizeof a);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_prolongation(&space, &q2, NULL, NULL, &a, &error));
  assert_true(csr_is_zeroed(&a));
  assert_non_null(strstr(error.message, "differ"));
  /* Not the refinement: same mesh on both sides. */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_prolongation(&space, &space, NULL, NULL, &a, &error));
  assert_non_null(strstr(error.message, "refinement"));

  int32_t perm[16];
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_numbering(&space, NULL, (clmg_numbering)9, 0, perm, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_numbering(&space, NULL, CLMG_NUMBERING_CM, 0, NULL, &error));
  clmg_csr wrong = {0};
  wrong.rows = wrong.cols = 3;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_numbering(&space, &wrong, CLMG_NUMBERING_CM, 0, perm, &error));

  double l2 = 1.0, u[9] = {0};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_fe_l2_error(&space, u, NULL, NULL, &l2, &error));
  CHECK_NEAR(0.0, l2, 0.0);

  clmg_fe_hierarchy h;
  memset(&h, 0x5a, sizeof h);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_poisson_hierarchy(&mesh, 0, 1, NULL, CLMG_NUMBERING_2LV, 0, &h, &error));
  assert_null(h.a);
  assert_int_equal(h.num_levels, 0);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_poisson_hierarchy(&mesh, 2, 4, NULL, CLMG_NUMBERING_2LV, 0, &h, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_poisson_hierarchy(NULL, 2, 1, NULL, CLMG_NUMBERING_2LV, 0, &h, &error));

  /* An inverted cell: swapping two corners flips the Jacobian's sign. */
  int32_t swap = mesh.cells[0];
  mesh.cells[0] = mesh.cells[1];
  mesh.cells[1] = swap;
  double b[9];
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_fe_assemble_poisson(&space, NULL, &a, b, NULL, &error));
  assert_non_null(strstr(error.message, "cell 0"));
  assert_true(csr_is_zeroed(&a));
  mesh.cells[1] = mesh.cells[0];
  mesh.cells[0] = swap;

  clmg_fe_space_free(&space);
  clmg_fe_space_free(&q2);
  clmg_fe_space_free(NULL);
  clmg_fe_hierarchy_free(NULL);
  clmg_mesh_free(&mesh);
  clmg_mesh_free(&fine_mesh);
}

int main(void) {
  rng_seed(0xfe5eed0123456789u);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unit_cell_stiffness),
      cmocka_unit_test(test_matrix_properties),
      cmocka_unit_test(test_patch),
      cmocka_unit_test(test_convergence_2d),
      cmocka_unit_test(test_convergence_3d),
      cmocka_unit_test(test_convergence_curved),
      cmocka_unit_test(test_prolongation_reproduces),
      cmocka_unit_test(test_prolongation_q1_pattern),
      cmocka_unit_test(test_numbering_names),
      cmocka_unit_test(test_numberings),
      cmocka_unit_test(test_cuthill_mckee_disconnected),
      cmocka_unit_test(test_hierarchy_circle),
      cmocka_unit_test(test_hierarchy_numberings_agree),
      cmocka_unit_test(test_hierarchy_galerkin),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests_name("fem", tests, NULL, NULL);
}
