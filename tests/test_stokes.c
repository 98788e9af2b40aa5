/* Tests of the Crouzeix-Raviart P1nc/P0 Stokes discretisation
 * (include/clmg/stokes.h): the edges of triangle meshes, the host assembly
 * (symmetry, signs and scales of every block against closed forms,
 * Dirichlet elimination), the grid transfers between refined levels
 * (linear velocity and constant pressure reproduced exactly), the L2
 * errors and the convergence orders of a manufactured Stokes solution,
 * solved directly (a band LU). Needs no OpenCL device. */
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

#define CHECK_OK(error, call) CHECK_ERROR_OK(error, call)

#define CHECK_NEAR(actual, expected, tolerance)                                                    \
  do {                                                                                             \
    double actual_ = (actual), expected_ = (expected);                                             \
    if (!(fabs(actual_ - expected_) <= (tolerance)))                                               \
      fail_msg("%s = %.17g, expected %.17g within %g", #actual, actual_, expected_,                \
               (double)(tolerance));                                                               \
  } while (0)

/* ---- helpers ---- */

/* clmg_mesh_box_simplices(2, n, distortion) with the sides of the unit
 * square tagged apart: bottom 1, right 2, top 3, left 4. */
static clmg_mesh side_tagged_box(int n, double distortion, uint64_t seed) {
  clmg_mesh mesh = {0};
  clmg_error error;
  CHECK_OK(error, clmg_mesh_box_simplices(2, n, distortion, seed, &mesh, &error));
  for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
    const double *a = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f];
    const double *b = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f + 1];
    double x = 0.5 * (a[0] + b[0]), y = 0.5 * (a[1] + b[1]);
    int32_t tag = y < 1e-12 ? 1 : x > 1.0 - 1e-12 ? 2 : y > 1.0 - 1e-12 ? 3 : 4;
    assert_true(tag != 4 || x < 1e-12);
    mesh.boundary_face_tag[f] = tag;
  }
  return mesh;
}

static clmg_mesh refined(const clmg_mesh *coarse) {
  clmg_mesh fine = {0};
  clmg_error error;
  CHECK_OK(error, clmg_mesh_refine(coarse, &fine, &error));
  return fine;
}

static clmg_triangle_edges edges_of(const clmg_mesh *mesh) {
  clmg_triangle_edges edges = {0};
  clmg_error error;
  CHECK_OK(error, clmg_triangle_edges_create(mesh, &edges, &error));
  return edges;
}

/* The outward unit normal of the unit square on side `tag`. */
static void side_normal(int32_t tag, double *n) {
  static const double normals[4][2] = {{0, -1}, {1, 0}, {0, 1}, {-1, 0}};
  n[0] = normals[tag - 1][0];
  n[1] = normals[tag - 1][1];
}

static double edge_length(const clmg_mesh *mesh, const clmg_triangle_edges *edges, size_t e) {
  const double *a = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e];
  const double *b = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e + 1];
  return hypot(b[0] - a[0], b[1] - a[1]);
}

static double cell_area(const clmg_mesh *mesh, size_t k) {
  const int32_t *c = mesh->cells + 3 * k;
  const double *x0 = mesh->coords + 2 * (size_t)c[0], *x1 = mesh->coords + 2 * (size_t)c[1],
               *x2 = mesh->coords + 2 * (size_t)c[2];
  return 0.5 * ((x1[0] - x0[0]) * (x2[1] - x0[1]) - (x1[1] - x0[1]) * (x2[0] - x0[0]));
}

/* A random linear velocity u = (c0 + c1 x + c2 y, c3 + c4 x + c5 y) and
 * a constant pressure p. */
typedef struct linear_field {
  double c[6], p;
} linear_field;

static linear_field random_linear_field(int divergence_free) {
  linear_field field;
  for (int i = 0; i < 6; i++)
    field.c[i] = rng_uniform();
  field.p = rng_uniform();
  if (divergence_free)
    field.c[5] = -field.c[1];
  return field;
}

static void linear_velocity(const double *x, double *u, void *data) {
  const linear_field *field = data;
  u[0] = field->c[0] + field->c[1] * x[0] + field->c[2] * x[1];
  u[1] = field->c[3] + field->c[4] * x[0] + field->c[5] * x[1];
}

static void linear_boundary_velocity(const double *x, int32_t tag, double *u, void *data) {
  assert_true(tag >= 1);
  linear_velocity(x, u, data);
}

static double constant_pressure(const double *x, void *data) {
  (void)x;
  const linear_field *field = data;
  return field->p;
}

static double *interpolant(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                           void (*u)(const double *, double *, void *),
                           double (*p)(const double *, void *), void *data) {
  double *x = malloc(clmg_stokes_num_unknowns(mesh, edges) * sizeof *x);
  assert_non_null(x);
  clmg_error error;
  CHECK_OK(error, clmg_stokes_interpolate(mesh, edges, u, p, data, x, &error));
  return x;
}

static double *spmv(const clmg_csr *a, const double *x) {
  double *y = malloc((a->rows ? a->rows : 1) * sizeof *y);
  assert_non_null(y);
  clmg_csr_spmv_host(1.0, a, x, 0.0, y);
  return y;
}

static double entry(const clmg_csr *a, size_t i, size_t j) {
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
    if ((size_t)a->col[k] == j)
      return a->val[k];
  return 0.0;
}

/* ---- edges ---- */

static void check_edges(const clmg_mesh *mesh, const clmg_triangle_edges *edges) {
  const size_t num_vertices = mesh->num_vertices, num_cells = mesh->num_cells,
               num_edges = edges->num_edges;
  /* Euler: V - E + T = 1 for a simply connected polygon */
  assert_int_equal(num_edges, num_vertices + num_cells - 1);
  int *uses = calloc(num_edges, sizeof *uses);
  assert_non_null(uses);
  for (size_t k = 0; k < num_cells; k++) {
    const int32_t *cell = mesh->cells + 3 * k;
    for (size_t i = 0; i < 3; i++) {
      int32_t e = edges->cell_edges[3 * k + i];
      assert_true(e >= 0 && (size_t)e < num_edges);
      int32_t a = cell[(i + 1) % 3], b = cell[(i + 2) % 3];
      int32_t low = a < b ? a : b, high = a < b ? b : a;
      if (edges->edge_vertices[2 * e] != low || edges->edge_vertices[2 * e + 1] != high)
        fail_msg("edge %d of cell %zu (opposite vertex %zu) joins %d-%d, expected %d-%d", (int)e, k,
                 i, (int)edges->edge_vertices[2 * e], (int)edges->edge_vertices[2 * e + 1],
                 (int)low, (int)high);
      assert_true(edges->edge_cells[2 * e] == (int32_t)k ||
                  edges->edge_cells[2 * e + 1] == (int32_t)k);
      uses[e]++;
    }
  }
  size_t boundary = 0;
  for (size_t e = 0; e < num_edges; e++) {
    const int32_t *v = edges->edge_vertices + 2 * e, *sides = edges->edge_cells + 2 * e;
    assert_true(v[0] >= 0 && v[0] < v[1] && (size_t)v[1] < num_vertices);
    assert_true(sides[0] >= 0 && (size_t)sides[0] < num_cells);
    if (sides[1] >= 0) {
      assert_true(sides[0] < sides[1] && (size_t)sides[1] < num_cells);
      assert_int_equal(uses[e], 2);
      assert_int_equal(edges->edge_tag[e], 0);
    } else {
      assert_int_equal(uses[e], 1);
      assert_true(edges->edge_tag[e] >= 1);
      boundary++;
    }
  }
  free(uses);
  /* boundary edges are the boundary faces, with their tags */
  assert_int_equal(boundary, mesh->num_boundary_faces);
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    int32_t a = mesh->boundary_faces[2 * f], b = mesh->boundary_faces[2 * f + 1];
    int32_t low = a < b ? a : b, high = a < b ? b : a;
    size_t e = 0;
    while (e < num_edges &&
           (edges->edge_vertices[2 * e] != low || edges->edge_vertices[2 * e + 1] != high))
      e++;
    assert_true(e < num_edges);
    assert_int_equal(edges->edge_tag[e], mesh->boundary_face_tag[f]);
    assert_int_equal(edges->edge_cells[2 * e + 1], -1);
  }
}

static void test_edges(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh coarse = side_tagged_box(3, 0.2, 11);
  clmg_mesh fine = refined(&coarse);
  clmg_triangle_edges coarse_edges = edges_of(&coarse), fine_edges = edges_of(&fine);
  /* 3 x 3 squares: 16 vertices, 18 triangles, 33 edges, 12 on the boundary */
  assert_int_equal(coarse_edges.num_edges, 33);
  check_edges(&coarse, &coarse_edges);
  check_edges(&fine, &fine_edges);
  assert_int_equal(fine_edges.num_edges, 2 * coarse_edges.num_edges + 3 * coarse.num_cells);
  /* edge e's midpoint is fine vertex num_vertices + e */
  assert_int_equal(fine.num_vertices, coarse.num_vertices + coarse_edges.num_edges);
  for (size_t e = 0; e < coarse_edges.num_edges; e++) {
    const double *a = coarse.coords + 2 * (size_t)coarse_edges.edge_vertices[2 * e];
    const double *b = coarse.coords + 2 * (size_t)coarse_edges.edge_vertices[2 * e + 1];
    const double *m = fine.coords + 2 * (coarse.num_vertices + e);
    CHECK_NEAR(m[0], 0.5 * (a[0] + b[0]), 1e-15);
    CHECK_NEAR(m[1], 0.5 * (a[1] + b[1]), 1e-15);
  }

  /* the cell unknowns of Vanka: u_x, u_y of the cell's edges, its pressure */
  int32_t *unknowns = NULL;
  CHECK_OK(error, clmg_stokes_cell_unknowns(&coarse, &coarse_edges, &unknowns, &error));
  const int32_t num_edges = (int32_t)coarse_edges.num_edges;
  for (size_t k = 0; k < coarse.num_cells; k++)
    for (size_t i = 0; i < 3; i++) {
      assert_int_equal(unknowns[7 * k + i], coarse_edges.cell_edges[3 * k + i]);
      assert_int_equal(unknowns[7 * k + 3 + i], num_edges + coarse_edges.cell_edges[3 * k + i]);
      assert_int_equal(unknowns[7 * k + 6], 2 * num_edges + (int32_t)k);
    }
  free(unknowns);

  /* refused: quadrilaterals, an inverted triangle, a missing boundary
   * face, edges of another mesh */
  clmg_triangle_edges bad = {0};
  clmg_mesh quads = {0};
  CHECK_OK(error, clmg_mesh_box(2, 2, 0.0, 1, &quads, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_triangle_edges_create(&quads, &bad, &error));
  CHECK_CONTAINS(error.message, "triangle mesh");
  clmg_mesh broken = {0};
  CHECK_OK(error, clmg_mesh_copy(&coarse, &broken, &error));
  int32_t swap = broken.cells[3 * 5 + 1];
  broken.cells[3 * 5 + 1] = broken.cells[3 * 5 + 2];
  broken.cells[3 * 5 + 2] = swap;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_triangle_edges_create(&broken, &bad, &error));
  CHECK_CONTAINS(error.message, "cell 5");
  clmg_mesh_free(&broken);
  CHECK_OK(error, clmg_mesh_copy(&coarse, &broken, &error));
  broken.num_boundary_faces--;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_triangle_edges_create(&broken, &bad, &error));
  CHECK_CONTAINS(error.message, "not a boundary face");
  assert_null(bad.edge_vertices);
  clmg_mesh_free(&broken);
  clmg_csr a = {0};
  double *b = malloc(clmg_stokes_num_unknowns(&fine, &fine_edges) * sizeof *b);
  assert_non_null(b);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&coarse, &fine_edges, NULL, &a, b, &error));
  CHECK_CONTAINS(error.message, "do not belong to the mesh");
  free(b);

  clmg_mesh_free(&quads);
  clmg_triangle_edges_free(&coarse_edges);
  clmg_triangle_edges_free(&fine_edges);
  clmg_mesh_free(&coarse);
  clmg_mesh_free(&fine);
}

/* ---- assembly ---- */

static void quadratic_force(const double *x, double *f, void *data) {
  (void)data;
  f[0] = x[0] * x[0];
  f[1] = x[0] * x[1];
}

static void test_assembly(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = side_tagged_box(4, 0.2, 23);
  clmg_triangle_edges edges = edges_of(&mesh);
  const size_t num_edges = edges.num_edges, num_cells = mesh.num_cells,
               n = clmg_stokes_num_unknowns(&mesh, &edges);
  double *b = malloc(n * sizeof *b);
  assert_non_null(b);
  /* lumped mass per edge: |K|/3 from each of its triangles */
  double *mass = calloc(num_edges, sizeof *mass);
  assert_non_null(mass);
  for (size_t k = 0; k < num_cells; k++)
    for (size_t i = 0; i < 3; i++)
      mass[edges.cell_edges[3 * k + i]] += cell_area(&mesh, k) / 3.0;
  const int32_t no_tag = 99; /* no edge carries it: natural conditions everywhere */

  /* 1. nu > 0, c = 0, natural boundary */
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 1.5 + rng_uniform();
  problem.dirichlet_tags = &no_tag;
  problem.num_dirichlet_tags = 1;
  clmg_csr a = {0};
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  assert_int_equal(a.rows, n);
  assert_int_equal(a.cols, n);
  assert_true(clmg_csr_is_symmetric(&a, 0.0));
  for (size_t i = 0; i < n; i++)
    assert_true(b[i] == 0.0);
  /* the pressure block is zero, u_x and u_y are not coupled */
  for (size_t i = 0; i < n; i++)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) {
      size_t j = (size_t)a.col[k];
      int block_i = i < num_edges ? 0 : i < 2 * num_edges ? 1 : 2;
      int block_j = j < num_edges ? 0 : j < 2 * num_edges ? 1 : 2;
      if (block_i != 2 && block_j != 2)
        assert_int_equal(block_i, block_j);
      if (block_i == 2)
        assert_true(block_j != 2);
    }
  /* row sums of A vanish (constants are in the kernel of the Laplacian);
   * A of a linear field vanishes on interior rows; B of the interpolant of
   * a linear field is -div(u) |K|; B^T of a constant pressure vanishes on
   * interior edges and is -|e| n on boundary edges */
  linear_field field = random_linear_field(0);
  double *x = interpolant(&mesh, &edges, linear_velocity, NULL, &field);
  double *ax = spmv(&a, x);
  double scale = 4.0 * problem.viscosity * 3.0;
  for (size_t i = 0; i < 2 * num_edges; i++) {
    double sum = 0.0;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      if ((size_t)a.col[k] < 2 * num_edges)
        sum += a.val[k];
    CHECK_NEAR(sum, 0.0, 1e-13 * scale);
    if (edges.edge_tag[i % num_edges] == 0)
      CHECK_NEAR(ax[i], 0.0, 1e-13 * scale);
  }
  /* the energy of a linear field: nu |grad u|^2 times the area (1) */
  double energy = 0.0;
  for (size_t i = 0; i < 2 * num_edges; i++)
    energy += x[i] * ax[i];
  CHECK_NEAR(energy,
             problem.viscosity * (field.c[1] * field.c[1] + field.c[2] * field.c[2] +
                                  field.c[4] * field.c[4] + field.c[5] * field.c[5]),
             1e-12);
  double divergence = field.c[1] + field.c[5];
  for (size_t k = 0; k < num_cells; k++)
    CHECK_NEAR(ax[2 * num_edges + k], -divergence * cell_area(&mesh, k), 1e-15);
  free(ax);
  for (size_t i = 0; i < n; i++)
    x[i] = i < 2 * num_edges ? 0.0 : field.p;
  ax = spmv(&a, x);
  for (size_t e = 0; e < num_edges; e++) {
    double normal[2] = {0.0, 0.0};
    if (edges.edge_tag[e] > 0)
      side_normal(edges.edge_tag[e], normal);
    double length = edge_length(&mesh, &edges, e);
    CHECK_NEAR(ax[e], -length * normal[0] * field.p, 1e-15);
    CHECK_NEAR(ax[num_edges + e], -length * normal[1] * field.p, 1e-15);
  }
  free(ax);
  free(x);
  clmg_csr_free(&a);

  /* 2. nu = 0, c > 0: the lumped mass, and c M u_old on the right */
  problem.viscosity = 0.0;
  problem.reaction = 2.0 + rng_uniform();
  double *previous = malloc(2 * num_edges * sizeof *previous);
  assert_non_null(previous);
  for (size_t i = 0; i < 2 * num_edges; i++)
    previous[i] = rng_uniform();
  problem.previous = previous;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  double trace = 0.0;
  for (size_t i = 0; i < 2 * num_edges; i++) {
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      if ((size_t)a.col[k] < 2 * num_edges && (size_t)a.col[k] != i)
        assert_true(a.val[k] == 0.0);
    double diagonal = entry(&a, i, i);
    CHECK_NEAR(diagonal, problem.reaction * mass[i % num_edges], 1e-15);
    CHECK_NEAR(b[i], problem.reaction * mass[i % num_edges] * previous[i], 1e-15);
    trace += diagonal;
  }
  CHECK_NEAR(trace, 2.0 * problem.reaction, 1e-13); /* twice the area times c */
  clmg_csr_free(&a);
  free(previous);

  /* 3. the force by the edge-midpoint rule: the loads sum to the
   * integral of f (the basis functions sum to 1), exact for quadratics */
  clmg_stokes_problem_defaults(&problem);
  problem.dirichlet_tags = &no_tag;
  problem.num_dirichlet_tags = 1;
  problem.force = quadratic_force;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  double load[2] = {0.0, 0.0};
  for (size_t e = 0; e < num_edges; e++) {
    load[0] += b[e];
    load[1] += b[num_edges + e];
  }
  CHECK_NEAR(load[0], 1.0 / 3.0, 1e-14);
  CHECK_NEAR(load[1], 1.0 / 4.0, 1e-14);
  for (size_t k = 0; k < num_cells; k++)
    assert_true(b[2 * num_edges + k] == 0.0);
  clmg_csr_free(&a);

  /* 4. Dirichlet everywhere with a divergence-free linear velocity: the
   * interpolant with any constant pressure solves the system exactly */
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.5 + rng_uniform();
  field = random_linear_field(1);
  problem.boundary_velocity = linear_boundary_velocity;
  problem.boundary_data = &field;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  assert_true(clmg_csr_is_symmetric(&a, 0.0));
  uint8_t *mask = NULL;
  CHECK_OK(error, clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error));
  for (size_t i = 0; i < n; i++) {
    int expected = i < 2 * num_edges && edges.edge_tag[i % num_edges] > 0;
    assert_int_equal(mask[i], expected);
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) {
      size_t j = (size_t)a.col[k];
      if (mask[i]) /* identity rows */
        assert_true(j == i && a.val[k] == 1.0);
      else /* no Dirichlet columns elsewhere */
        assert_int_equal(mask[j], 0);
    }
  }
  free(mask);
  x = interpolant(&mesh, &edges, linear_velocity, constant_pressure, &field);
  ax = spmv(&a, x);
  for (size_t i = 0; i < n; i++)
    CHECK_NEAR(ax[i], b[i], 1e-13 * scale);
  free(ax);
  free(x);
  clmg_csr_free(&a);

  /* 5. Dirichlet on bottom, right and top only */
  const int32_t tags[3] = {1, 2, 3};
  problem.dirichlet_tags = tags;
  problem.num_dirichlet_tags = 3;
  CHECK_OK(error, clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error));
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  size_t marked = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t tag = i < 2 * num_edges ? edges.edge_tag[i % num_edges] : 0;
    assert_int_equal(mask[i], tag >= 1 && tag <= 3);
    marked += mask[i];
    if (mask[i]) {
      assert_int_equal(a.row_ptr[i + 1] - a.row_ptr[i], 1);
      double u[2];
      double point[2];
      const double *p0 = mesh.coords + 2 * (size_t)edges.edge_vertices[2 * (i % num_edges)];
      const double *p1 = mesh.coords + 2 * (size_t)edges.edge_vertices[2 * (i % num_edges) + 1];
      point[0] = 0.5 * (p0[0] + p1[0]);
      point[1] = 0.5 * (p0[1] + p1[1]);
      linear_velocity(point, u, &field);
      CHECK_NEAR(b[i], u[i < num_edges ? 0 : 1], 1e-15);
    }
  }
  assert_int_equal(marked, 2 * 3 * 4); /* 4 edges on each of 3 sides */
  free(mask);
  clmg_csr_free(&a);

  /* refused problems */
  problem.viscosity = -1.0;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "viscosity");
  assert_null(a.row_ptr);
  problem.viscosity = 1.0;
  problem.dirichlet_tags = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "dirichlet_tags");

  free(mass);
  free(b);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* ---- transfers ---- */

static void check_prolongation(const clmg_mesh *coarse, const clmg_mesh *fine) {
  clmg_error error;
  clmg_triangle_edges coarse_edges = edges_of(coarse), fine_edges = edges_of(fine);
  const size_t rows = clmg_stokes_num_unknowns(fine, &fine_edges),
               cols = clmg_stokes_num_unknowns(coarse, &coarse_edges);
  clmg_csr p = {0};
  CHECK_OK(error, clmg_stokes_prolongation_host(coarse, &coarse_edges, fine, &fine_edges, NULL, &p,
                                                &error));
  assert_int_equal(p.rows, rows);
  assert_int_equal(p.cols, cols);
  for (size_t k = 0; k < clmg_csr_nnz(&p); k++) /* weights are quarters */
    assert_true(p.val[k] != 0.0 && p.val[k] * 4.0 == nearbyint(p.val[k] * 4.0));
  for (int trial = 0; trial < 3; trial++) {
    linear_field field = random_linear_field(0);
    double *xc = interpolant(coarse, &coarse_edges, linear_velocity, constant_pressure, &field);
    double *xf = interpolant(fine, &fine_edges, linear_velocity, constant_pressure, &field);
    double *pxc = spmv(&p, xc);
    for (size_t i = 0; i < rows; i++)
      if (!(fabs(pxc[i] - xf[i]) <= 1e-13))
        fail_msg("row %zu of P x_coarse is %.17g, the fine interpolant %.17g", i, pxc[i], xf[i]);
    free(xc);
    free(xf);
    free(pxc);
  }

  /* with Dirichlet DOFs: their fine rows are empty, their coarse columns
   * dropped, everything else as without */
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  const int32_t tags[2] = {2, 4};
  problem.dirichlet_tags = tags;
  problem.num_dirichlet_tags = 2;
  uint8_t *fine_mask = NULL, *coarse_mask = NULL;
  CHECK_OK(error, clmg_stokes_dirichlet_mask(fine, &fine_edges, &problem, &fine_mask, &error));
  CHECK_OK(error,
           clmg_stokes_dirichlet_mask(coarse, &coarse_edges, &problem, &coarse_mask, &error));
  clmg_csr pd = {0};
  CHECK_OK(error, clmg_stokes_prolongation_host(coarse, &coarse_edges, fine, &fine_edges, &problem,
                                                &pd, &error));
  assert_int_equal(pd.rows, rows);
  assert_int_equal(pd.cols, cols);
  size_t kept = 0;
  for (size_t i = 0; i < rows; i++) {
    if (fine_mask[i])
      assert_int_equal(pd.row_ptr[i + 1], pd.row_ptr[i]);
    for (int64_t k = pd.row_ptr[i]; k < pd.row_ptr[i + 1]; k++) {
      assert_int_equal(coarse_mask[pd.col[k]], 0);
      assert_true(pd.val[k] == entry(&p, i, (size_t)pd.col[k]));
    }
    for (int64_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; k++)
      kept += !fine_mask[i] && !coarse_mask[p.col[k]];
  }
  assert_int_equal(kept, clmg_csr_nnz(&pd));
  free(fine_mask);
  free(coarse_mask);
  clmg_csr_free(&pd);
  clmg_csr_free(&p);

  /* not a refinement */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_prolongation_host(coarse, &coarse_edges, coarse, &coarse_edges, NULL, &p,
                                             &error));
  CHECK_CONTAINS(error.message, "not clmg_mesh_refine");
  assert_null(p.row_ptr);
  clmg_triangle_edges_free(&coarse_edges);
  clmg_triangle_edges_free(&fine_edges);
}

static void test_transfers(void **state) {
  (void)state;
  clmg_mesh level0 = side_tagged_box(3, 0.25, 37);
  clmg_mesh level1 = refined(&level0);
  clmg_mesh level2 = refined(&level1);
  check_prolongation(&level0, &level1);
  check_prolongation(&level1, &level2);
  clmg_mesh_free(&level0);
  clmg_mesh_free(&level1);
  clmg_mesh_free(&level2);
}

/* ---- L2 errors ---- */

static double x_pressure(const double *x, void *data) {
  (void)data;
  return x[0];
}

static void test_l2_errors(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = side_tagged_box(3, 0.25, 41);
  clmg_triangle_edges edges = edges_of(&mesh);
  linear_field field = random_linear_field(0);
  double u_error = -1.0, p_error = -1.0;
  /* the interpolant of a linear velocity and a constant pressure is exact
   * (the pressure up to its constant) */
  double *x = interpolant(&mesh, &edges, linear_velocity, constant_pressure, &field);
  field.p += 3.0;
  CHECK_OK(error, clmg_stokes_l2_errors(&mesh, &edges, x, linear_velocity, constant_pressure,
                                        &field, &u_error, &p_error, &error));
  CHECK_NEAR(u_error, 0.0, 1e-14);
  CHECK_NEAR(p_error, 0.0, 1e-14);
  /* against zero: the L2 norms over the unit square, exact for the
   * quadratic integrands */
  size_t n = clmg_stokes_num_unknowns(&mesh, &edges);
  for (size_t i = 0; i < n; i++)
    x[i] = 0.0;
  CHECK_OK(error, clmg_stokes_l2_errors(&mesh, &edges, x, linear_velocity, x_pressure, &field,
                                        &u_error, &p_error, &error));
  const double *c = field.c;
  double norm = c[0] * c[0] + c[0] * c[1] + c[0] * c[2] + c[1] * c[1] / 3.0 + c[2] * c[2] / 3.0 +
                c[1] * c[2] / 2.0 + c[3] * c[3] + c[3] * c[4] + c[3] * c[5] + c[4] * c[4] / 3.0 +
                c[5] * c[5] / 3.0 + c[4] * c[5] / 2.0;
  CHECK_NEAR(u_error, sqrt(norm), 1e-14);
  CHECK_NEAR(p_error, sqrt(1.0 / 12.0), 1e-14); /* x minus its mean 1/2 */
  CHECK_OK(error, clmg_stokes_l2_errors(&mesh, &edges, x, linear_velocity, NULL, &field, &u_error,
                                        &p_error, &error));
  assert_true(p_error == 0.0);
  free(x);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* ---- a manufactured solution ---- */

/* u = curl psi, psi = g(x) g(y), g(t) = t^2 (1 - t)^2 (zero on the
 * boundary, divergence-free); p = x^3 + y^2 - 7/12 (mean 0);
 * f = -nu Laplace u + grad p. */
typedef struct manufactured {
  double viscosity;
} manufactured;

static double g0(double t) {
  return t * t * (1 - t) * (1 - t);
}
static double g1(double t) {
  return 2 * t * (1 - t) * (1 - 2 * t);
}
static double g2(double t) {
  return 2 - 12 * t + 12 * t * t;
}
static double g3(double t) {
  return -12 + 24 * t;
}

static void exact_velocity(const double *x, double *u, void *data) {
  (void)data;
  u[0] = g0(x[0]) * g1(x[1]);
  u[1] = -g1(x[0]) * g0(x[1]);
}

static double exact_pressure(const double *x, void *data) {
  (void)data;
  return x[0] * x[0] * x[0] + x[1] * x[1] - 7.0 / 12.0;
}

static void manufactured_force(const double *x, double *f, void *data) {
  const manufactured *m = data;
  double laplace_u = g2(x[0]) * g1(x[1]) + g0(x[0]) * g3(x[1]);
  double laplace_v = -(g3(x[0]) * g0(x[1]) + g1(x[0]) * g2(x[1]));
  f[0] = -m->viscosity * laplace_u + 3 * x[0] * x[0];
  f[1] = -m->viscosity * laplace_v + 2 * x[1];
}

/* A band LU with partial pivoting (the layout of LAPACK's dgbtrf: A(i, j)
 * at ab[j * ld + kl + ku + i - j], U gets kl + ku superdiagonals). */
typedef struct band_matrix {
  size_t n, kl, ku, ld;
  double *ab;
} band_matrix;

static double *band_at(band_matrix *m, size_t i, size_t j) {
  return m->ab + j * m->ld + m->kl + m->ku + i - j;
}

static void band_solve(band_matrix *m, double *x) {
  const size_t n = m->n, kv = m->kl + m->ku;
  size_t *pivot = malloc(n * sizeof *pivot);
  assert_non_null(pivot);
  for (size_t j = 0; j < n; j++) {
    size_t km = m->kl < n - 1 - j ? m->kl : n - 1 - j, ju = j + kv < n - 1 ? j + kv : n - 1;
    size_t p = j;
    for (size_t i = j + 1; i <= j + km; i++)
      if (fabs(*band_at(m, i, j)) > fabs(*band_at(m, p, j)))
        p = i;
    if (!(fabs(*band_at(m, p, j)) > 0.0))
      fail_msg("band LU: zero pivot in column %zu", j);
    pivot[j] = p;
    if (p != j)
      for (size_t c = j; c <= ju; c++) {
        double t = *band_at(m, j, c);
        *band_at(m, j, c) = *band_at(m, p, c);
        *band_at(m, p, c) = t;
      }
    double *column = band_at(m, j, j);
    for (size_t i = 1; i <= km; i++)
      column[i] /= column[0];
    for (size_t c = j + 1; c <= ju; c++) {
      double t = *band_at(m, j, c);
      if (t == 0.0)
        continue;
      double *target = band_at(m, j + 1, c);
      for (size_t i = 1; i <= km; i++)
        target[i - 1] -= column[i] * t;
    }
  }
  for (size_t j = 0; j < n; j++) {
    size_t km = m->kl < n - 1 - j ? m->kl : n - 1 - j;
    double t = x[pivot[j]];
    x[pivot[j]] = x[j];
    x[j] = t;
    const double *column = band_at(m, j, j);
    for (size_t i = 1; i <= km; i++)
      x[j + i] -= column[i] * x[j];
  }
  for (size_t j = n; j-- > 0;) {
    x[j] /= *band_at(m, j, j);
    size_t first = j > kv ? j - kv : 0;
    for (size_t i = first; i < j; i++)
      x[i] -= *band_at(m, i, j) * x[j];
  }
  free(pivot);
}

typedef struct located {
  double y, x;
  size_t index;
} located;

static int by_location(const void *a, const void *b) {
  const located *p = a, *q = b;
  if (p->y != q->y)
    return p->y < q->y ? -1 : 1;
  if (p->x != q->x)
    return p->x < q->x ? -1 : 1;
  return p->index < q->index ? -1 : p->index > q->index;
}

/* Solves a x = b with the pressure of cell 0 pinned to 0 (its row and
 * column replaced by the identity: with all-Dirichlet velocity that
 * equation is the negative sum of the others), unknowns ordered by their
 * location (y, then x) for a narrow band. Returns the band width. */
static size_t direct_solve(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                           const clmg_csr *a, const double *b, double *x) {
  const size_t num_edges = edges->num_edges, n = a->rows, pinned = 2 * num_edges;
  located *order = malloc(n * sizeof *order);
  size_t *position = malloc(n * sizeof *position);
  assert_true(order && position);
  for (size_t i = 0; i < n; i++) {
    double point[2];
    if (i < 2 * num_edges) {
      size_t e = i % num_edges;
      const double *p0 = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e];
      const double *p1 = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e + 1];
      point[0] = 0.5 * (p0[0] + p1[0]);
      point[1] = 0.5 * (p0[1] + p1[1]);
    } else {
      const int32_t *c = mesh->cells + 3 * (i - 2 * num_edges);
      point[0] = point[1] = 0.0;
      for (size_t v = 0; v < 3; v++) {
        point[0] += mesh->coords[2 * (size_t)c[v]] / 3.0;
        point[1] += mesh->coords[2 * (size_t)c[v] + 1] / 3.0;
      }
    }
    order[i] = (located){point[1], point[0], i};
  }
  qsort(order, n, sizeof *order, by_location);
  for (size_t i = 0; i < n; i++)
    position[order[i].index] = i;
  size_t width = 0;
  for (size_t i = 0; i < n; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      size_t p = position[i], q = position[a->col[k]];
      size_t d = p > q ? p - q : q - p;
      width = d > width ? d : width;
    }
  band_matrix m = {n, width, width, 3 * width + 1, NULL};
  m.ab = calloc(n * m.ld, sizeof *m.ab);
  assert_non_null(m.ab);
  for (size_t i = 0; i < n; i++) {
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      if (i != pinned && (size_t)a->col[k] != pinned)
        *band_at(&m, position[i], position[a->col[k]]) = a->val[k];
    x[position[i]] = i == pinned ? 0.0 : b[i];
  }
  *band_at(&m, position[pinned], position[pinned]) = 1.0;
  band_solve(&m, x);
  double *solution = malloc(n * sizeof *solution);
  assert_non_null(solution);
  for (size_t i = 0; i < n; i++)
    solution[i] = x[position[i]];
  memcpy(x, solution, n * sizeof *x);
  free(solution);
  free(m.ab);
  free(order);
  free(position);
  return width;
}

static void test_manufactured_solution(void **state) {
  (void)state;
  clmg_error error;
  manufactured data = {0.5};
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = data.viscosity;
  problem.force = manufactured_force;
  problem.force_data = &data;
  enum { LEVELS = 3 };
  double u_error[LEVELS], p_error[LEVELS];
  clmg_mesh base = side_tagged_box(4, 0.15, 5);
  clmg_mesh mesh = refined(&base);
  clmg_mesh_free(&base);
  for (int level = 0; level < LEVELS; level++) {
    if (level > 0) {
      clmg_mesh finer = refined(&mesh);
      clmg_mesh_free(&mesh);
      mesh = finer;
    }
    clmg_triangle_edges edges = edges_of(&mesh);
    const size_t n = clmg_stokes_num_unknowns(&mesh, &edges);
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    assert_true(b && x);
    clmg_csr a = {0};
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
    size_t width = direct_solve(&mesh, &edges, &a, b, x);
    /* the solution satisfies every equation, the pinned one included */
    double *ax = spmv(&a, x), residual = 0.0, norm = 0.0;
    for (size_t i = 0; i < n; i++) {
      residual = fmax(residual, fabs(ax[i] - b[i]));
      norm = fmax(norm, fabs(b[i]));
    }
    if (!(residual <= 1e-10 * norm))
      fail_msg("level %d: residual %g of |b| %g", level, residual, norm);
    CHECK_OK(error, clmg_stokes_l2_errors(&mesh, &edges, x, exact_velocity, exact_pressure, NULL,
                                          &u_error[level], &p_error[level], &error));
    print_message("level %d: %zu triangles, %zu unknowns (band %zu): |u - u_h| = %.4e, "
                  "|p - p_h| = %.4e",
                  level, mesh.num_cells, n, width, u_error[level], p_error[level]);
    if (level > 0)
      print_message(", orders %.3f and %.3f", log2(u_error[level - 1] / u_error[level]),
                    log2(p_error[level - 1] / p_error[level]));
    print_message("\n");
    free(ax);
    free(b);
    free(x);
    clmg_csr_free(&a);
    clmg_triangle_edges_free(&edges);
  }
  clmg_mesh_free(&mesh);
  for (int level = 1; level < LEVELS; level++) {
    double u_order = log2(u_error[level - 1] / u_error[level]);
    double p_order = log2(p_error[level - 1] / p_error[level]);
    if (!(u_order >= 1.8) || !(p_order >= 0.9))
      fail_msg("level %d: velocity order %.3f (>= 1.8 expected), pressure order %.3f (>= 0.9)",
               level, u_order, p_order);
  }
}

int main(void) {
  rng_seed(0x73746f6bu);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_assembly),
      cmocka_unit_test(test_transfers),
      cmocka_unit_test(test_l2_errors),
      cmocka_unit_test(test_manufactured_solution),
  };
  return cmocka_run_group_tests_name("stokes", tests, NULL, NULL);
}
