/* Tests of the Crouzeix-Raviart P1nc/P0 Stokes discretisation
 * (include/clmg/stokes.h): the edges of triangle meshes, the host assembly
 * (symmetry, signs and scales of every block against closed forms,
 * Dirichlet elimination), the upwind convection (constants in its kernel,
 * the signs of full upwind, weak consistency, nonsymmetric elimination),
 * the refill of a time step (bit for bit a fresh assembly), free-slip
 * walls (marks, identity rows of the normal component, a half channel),
 * the pattern built from the cells of each edge (against triplets of
 * the element couplings, the same arrays on 1 and 3 host threads), the
 * grid transfers between refined levels (linear velocity and constant
 * pressure reproduced exactly, with Dirichlet and free-slip marks; the
 * same arrays and errors on 1 and 3 host threads), the L2
 * errors and the convergence orders of manufactured Stokes and Oseen
 * solutions, solved directly (a band LU). Needs no OpenCL device. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, strdup */
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
  clmg_mesh coarse = test_side_tagged_box(3, 0.2, 11);
  clmg_mesh fine = test_refined(&coarse);
  clmg_triangle_edges coarse_edges = test_edges_of(&coarse), fine_edges = test_edges_of(&fine);
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
  clmg_mesh mesh = test_side_tagged_box(4, 0.2, 23);
  clmg_triangle_edges edges = test_edges_of(&mesh);
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

/* Fine edge f lies inside a coarse cell (both its cells are children of
 * one coarse cell): the rows that carry the flux corrections. */
static int inner_edge(const clmg_triangle_edges *fine_edges, size_t f) {
  const int32_t *sides = fine_edges->edge_cells + 2 * f;
  return sides[1] >= 0 && sides[0] / 4 == sides[1] / 4;
}

/* The divergence of P x in each fine cell is a quarter of the divergence of
 * x in its coarse parent, for random coarse velocities x (zero on the
 * Dirichlet unknowns of problem, as p expects): the pressure rows of the
 * assembled matrices (B, with Dirichlet columns removed) give both. */
static void check_divergence_kept(const clmg_mesh *coarse, const clmg_triangle_edges *coarse_edges,
                                  const clmg_mesh *fine, const clmg_triangle_edges *fine_edges,
                                  const clmg_csr *p, const clmg_stokes_problem *problem) {
  clmg_error error;
  clmg_csr ac = {0}, af = {0};
  double *bc = malloc(p->cols * sizeof *bc), *bf = malloc(p->rows * sizeof *bf);
  uint8_t *coarse_mask = NULL;
  assert_non_null(bc);
  assert_non_null(bf);
  CHECK_OK(error, clmg_stokes_assemble_host(coarse, coarse_edges, problem, &ac, bc, &error));
  CHECK_OK(error, clmg_stokes_assemble_host(fine, fine_edges, problem, &af, bf, &error));
  CHECK_OK(error, clmg_stokes_dirichlet_mask(coarse, coarse_edges, problem, &coarse_mask, &error));
  double *xc = malloc(p->cols * sizeof *xc);
  assert_non_null(xc);
  for (size_t j = 0; j < p->cols; j++)
    xc[j] = j < 2 * coarse_edges->num_edges && !coarse_mask[j] ? rng_uniform() - 0.5 : 0.0;
  double *xf = spmv(p, xc), *div_c = spmv(&ac, xc), *div_f = spmv(&af, xf);
  const size_t fine_pressure = 2 * fine_edges->num_edges,
               coarse_pressure = 2 * coarse_edges->num_edges;
  double largest = 0.0;
  for (size_t k = 0; k < coarse->num_cells; k++)
    largest = fmax(largest, fabs(div_c[coarse_pressure + k]));
  assert_true(largest > 0.0);
  for (size_t t = 0; t < fine->num_cells; t++) {
    double expected = 0.25 * div_c[coarse_pressure + t / 4];
    if (!(fabs(div_f[fine_pressure + t] - expected) <= 1e-12 * largest))
      fail_msg("fine cell %zu: divergence of P x %.17g, a quarter of its parent's %.17g", t,
               div_f[fine_pressure + t], expected);
  }
  free(xc);
  free(xf);
  free(div_c);
  free(div_f);
  free(bc);
  free(bf);
  free(coarse_mask);
  clmg_csr_free(&ac);
  clmg_csr_free(&af);
}

/* The prolongation with the Dirichlet marks of problem against p, the one
 * without: fine Dirichlet rows empty, coarse Dirichlet columns dropped,
 * every other entry p's but in the rows of inner edges, whose flux
 * corrections see the Dirichlet marks (the divergence is still kept);
 * field (if any, vanishing on the Dirichlet unknowns) is still reproduced
 * exactly. */
static void check_dirichlet_prolongation(const clmg_mesh *coarse,
                                         const clmg_triangle_edges *coarse_edges,
                                         const clmg_mesh *fine,
                                         const clmg_triangle_edges *fine_edges, const clmg_csr *p,
                                         const clmg_stokes_problem *problem, linear_field *field) {
  clmg_error error;
  const size_t rows = p->rows, cols = p->cols;
  uint8_t *fine_mask = NULL, *coarse_mask = NULL;
  CHECK_OK(error, clmg_stokes_dirichlet_mask(fine, fine_edges, problem, &fine_mask, &error));
  CHECK_OK(error, clmg_stokes_dirichlet_mask(coarse, coarse_edges, problem, &coarse_mask, &error));
  clmg_csr pd = {0};
  CHECK_OK(error, clmg_stokes_prolongation_host(coarse, coarse_edges, fine, fine_edges, problem,
                                                &pd, &error));
  assert_int_equal(pd.rows, rows);
  assert_int_equal(pd.cols, cols);
  size_t kept = 0, marked = 0, inner = 0, outer = 0;
  for (size_t i = 0; i < rows; i++) {
    marked += fine_mask[i];
    if (fine_mask[i])
      assert_int_equal(pd.row_ptr[i + 1], pd.row_ptr[i]);
    const int corrected =
        i < 2 * fine_edges->num_edges && inner_edge(fine_edges, i % fine_edges->num_edges);
    for (int64_t k = pd.row_ptr[i]; k < pd.row_ptr[i + 1]; k++) {
      assert_int_equal(coarse_mask[pd.col[k]], 0);
      assert_true(corrected || pd.val[k] == entry(p, i, (size_t)pd.col[k]));
    }
    for (int64_t k = p->row_ptr[i]; corrected && k < p->row_ptr[i + 1]; k++)
      inner += !coarse_mask[p->col[k]];
    for (int64_t k = p->row_ptr[i]; !corrected && k < p->row_ptr[i + 1]; k++)
      kept += !fine_mask[i] && !coarse_mask[p->col[k]];
    if (!corrected)
      outer += (size_t)(pd.row_ptr[i + 1] - pd.row_ptr[i]);
  }
  assert_true(marked > 0);
  assert_true(inner > 0);
  assert_int_equal(kept, outer);
  check_divergence_kept(coarse, coarse_edges, fine, fine_edges, &pd, problem);
  if (field) {
    double *xc = interpolant(coarse, coarse_edges, linear_velocity, constant_pressure, field);
    double *xf = interpolant(fine, fine_edges, linear_velocity, constant_pressure, field);
    for (size_t j = 0; j < cols; j++)
      if (coarse_mask[j])
        CHECK_NEAR(xc[j], 0.0, 1e-15);
    double *pxc = spmv(&pd, xc);
    for (size_t i = 0; i < rows; i++)
      if (!(fabs(pxc[i] - xf[i]) <= 1e-13))
        fail_msg("row %zu of P x_coarse is %.17g, the fine interpolant %.17g", i, pxc[i], xf[i]);
    free(xc);
    free(xf);
    free(pxc);
  }
  free(fine_mask);
  free(coarse_mask);
  clmg_csr_free(&pd);
}

static void check_prolongation(const clmg_mesh *coarse, const clmg_mesh *fine) {
  clmg_error error;
  clmg_triangle_edges coarse_edges = test_edges_of(coarse), fine_edges = test_edges_of(fine);
  const size_t rows = clmg_stokes_num_unknowns(fine, &fine_edges),
               cols = clmg_stokes_num_unknowns(coarse, &coarse_edges);
  clmg_csr p = {0};
  CHECK_OK(error, clmg_stokes_prolongation_host(coarse, &coarse_edges, fine, &fine_edges, NULL, &p,
                                                &error));
  assert_int_equal(p.rows, rows);
  assert_int_equal(p.cols, cols);
  /* rows of edges on coarse edges or at the boundary: the coarse P1nc
   * functions at quarter points, so weights are quarters */
  for (size_t i = 0; i < 2 * fine_edges.num_edges; i++)
    for (int64_t k = p.row_ptr[i];
         !inner_edge(&fine_edges, i % fine_edges.num_edges) && k < p.row_ptr[i + 1]; k++)
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

  /* the whole boundary natural: every coarse velocity is free */
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  const int32_t natural = 99;
  problem.dirichlet_tags = &natural;
  problem.num_dirichlet_tags = 1;
  check_divergence_kept(coarse, &coarse_edges, fine, &fine_edges, &p, &problem);
  /* with Dirichlet DOFs: their fine rows are empty, their coarse columns
   * dropped, everything else as without */
  const int32_t tags[2] = {2, 4};
  problem.dirichlet_tags = tags;
  problem.num_dirichlet_tags = 2;
  check_dirichlet_prolongation(coarse, &coarse_edges, fine, &fine_edges, &p, &problem, NULL);
  /* free slip on the right and the top (the normal components u_x and u_y
   * Dirichlet there), natural elsewhere: per component, and still exact
   * for the linear fields of zero normal component there,
   * u = (alpha (x - 1), beta (y - 1)) */
  const int32_t no_tag = 99, slip[2] = {2, 3};
  problem.dirichlet_tags = &no_tag;
  problem.num_dirichlet_tags = 1;
  problem.slip_tags = slip;
  problem.num_slip_tags = 2;
  linear_field field = {{0.0}, 0.0};
  double alpha = rng_uniform(), beta = rng_uniform();
  field.c[0] = -alpha;
  field.c[1] = alpha;
  field.c[3] = -beta;
  field.c[5] = beta;
  field.p = rng_uniform();
  check_dirichlet_prolongation(coarse, &coarse_edges, fine, &fine_edges, &p, &problem, &field);
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
  clmg_mesh level0 = test_side_tagged_box(3, 0.25, 37);
  clmg_mesh level1 = test_refined(&level0);
  clmg_mesh level2 = test_refined(&level1);
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
  clmg_mesh mesh = test_side_tagged_box(3, 0.25, 41);
  clmg_triangle_edges edges = test_edges_of(&mesh);
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

/* ---- a manufactured solution (test_util.h's Stokes flow) ---- */

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

/* Solves a x = b, unknowns ordered by their location (y, then x) for a
 * narrow band; with pin, the pressure of cell 0 is pinned to 0 (its row and
 * column replaced by the identity: with all-Dirichlet velocity that
 * equation is the negative sum of the others). Returns the band width. */
static size_t direct_solve_pinned(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const clmg_csr *a, const double *b, double *x, int pin) {
  const size_t num_edges = edges->num_edges, n = a->rows, pinned = pin ? 2 * num_edges : n;
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
  if (pin)
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

static size_t direct_solve(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                           const clmg_csr *a, const double *b, double *x) {
  return direct_solve_pinned(mesh, edges, a, b, x, 1);
}

/* Errors of the host system of `problem` on three levels of refinement
 * of the 4 x 4 side-tagged box (the first refined once), each assembled and
 * solved directly; the solution must satisfy every equation (the pinned one
 * included). wind (NULL: none) is interpolated as the level's wind, and the
 * matrix is then not symmetric. Per level: the L2 errors against exact_u
 * and exact_p (data for both), |u| in L2 where u_norm is not NULL, the
 * triangles, unknowns and the direct solve's band. */
enum { CONVERGENCE_LEVELS = 3 };

typedef struct level_errors {
  double u[CONVERGENCE_LEVELS], p[CONVERGENCE_LEVELS], u_norm[CONVERGENCE_LEVELS];
  size_t triangles[CONVERGENCE_LEVELS], unknowns[CONVERGENCE_LEVELS], band[CONVERGENCE_LEVELS];
} level_errors;

static level_errors errors_on_levels(clmg_stokes_problem problem,
                                     void (*wind)(const double *x, double *u, void *data),
                                     void (*exact_u)(const double *x, double *u, void *data),
                                     double (*exact_p)(const double *x, void *data), void *data) {
  clmg_error error;
  level_errors out;
  clmg_mesh base = test_side_tagged_box(4, 0.15, 5);
  clmg_mesh mesh = test_refined(&base);
  clmg_mesh_free(&base);
  for (int level = 0; level < CONVERGENCE_LEVELS; level++) {
    if (level > 0) {
      clmg_mesh finer = test_refined(&mesh);
      clmg_mesh_free(&mesh);
      mesh = finer;
    }
    clmg_triangle_edges edges = test_edges_of(&mesh);
    const size_t n = clmg_stokes_num_unknowns(&mesh, &edges);
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    assert_true(b && x);
    double *level_wind = wind ? interpolant(&mesh, &edges, wind, NULL, data) : NULL;
    problem.wind = level_wind;
    clmg_csr a = {0};
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
    if (wind)
      assert_false(clmg_csr_is_symmetric(&a, 0.0));
    out.band[level] = direct_solve(&mesh, &edges, &a, b, x);
    double *ax = spmv(&a, x), residual = 0.0, norm = 0.0;
    for (size_t i = 0; i < n; i++) {
      residual = fmax(residual, fabs(ax[i] - b[i]));
      norm = fmax(norm, fabs(b[i]));
    }
    if (!(residual <= 1e-10 * norm))
      fail_msg("level %d: residual %g of |b| %g", level, residual, norm);
    CHECK_OK(error, clmg_stokes_l2_errors(&mesh, &edges, x, exact_u, exact_p, data, &out.u[level],
                                          &out.p[level], &error));
    /* |u| in L2 (against x = 0) */
    double p_norm = 0.0;
    for (size_t i = 0; i < n; i++)
      x[i] = 0.0;
    CHECK_OK(error, clmg_stokes_l2_errors(&mesh, &edges, x, exact_u, NULL, data, &out.u_norm[level],
                                          &p_norm, &error));
    out.triangles[level] = mesh.num_cells;
    out.unknowns[level] = n;
    free(ax);
    free(b);
    free(x);
    free(level_wind);
    clmg_csr_free(&a);
    clmg_triangle_edges_free(&edges);
  }
  clmg_mesh_free(&mesh);
  return out;
}

/* Print "orders" of levels l - 1 and l after a level's line. */
static void print_orders(const level_errors *e, int level) {
  if (level > 0)
    print_message(", orders %.3f and %.3f", log2(e->u[level - 1] / e->u[level]),
                  log2(e->p[level - 1] / e->p[level]));
  print_message("\n");
}

static void test_manufactured_solution(void **state) {
  (void)state;
  double data = 0.5; /* the viscosity */
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = data;
  problem.force = stokes_manufactured_force;
  problem.force_data = &data;
  level_errors e =
      errors_on_levels(problem, NULL, stokes_exact_velocity, stokes_exact_pressure, NULL);
  for (int level = 0; level < CONVERGENCE_LEVELS; level++) {
    print_message("level %d: %zu triangles, %zu unknowns (band %zu): |u - u_h| = %.4e, "
                  "|p - p_h| = %.4e",
                  level, e.triangles[level], e.unknowns[level], e.band[level], e.u[level],
                  e.p[level]);
    print_orders(&e, level);
  }
  for (int level = 1; level < CONVERGENCE_LEVELS; level++) {
    double u_order = log2(e.u[level - 1] / e.u[level]);
    double p_order = log2(e.p[level - 1] / e.p[level]);
    if (!(u_order >= 1.8) || !(p_order >= 0.9))
      fail_msg("level %d: velocity order %.3f (>= 1.8 expected), pressure order %.3f (>= 0.9)",
               level, u_order, p_order);
  }
}

/* ---- convection ---- */

static const double PI = 3.14159265358979323846;

static double *random_wind(size_t num_edges) {
  double *wind = malloc(2 * num_edges * sizeof *wind);
  assert_non_null(wind);
  for (size_t i = 0; i < 2 * num_edges; i++)
    wind[i] = 2.0 * rng_uniform();
  return wind;
}

/* The velocity block of a minus that of a0 (same pattern): the convection
 * matrix N at entry k of a. */
static double convection_entry(const clmg_csr *a, const clmg_csr *a0, int64_t k) {
  return a->val[k] - a0->val[k];
}

/* The central-difference convection (lambda = 1/2: every coupling F_ij / 2)
 * from its definition (include/clmg/stokes.h): per triangle and vertex c,
 * the flux through the segment from the barycentre to c, |Gamma| n the
 * segment rotated by +90 degrees, of the wind at its midpoint (2/3 of the
 * edges that share c, -1/3 of the third); a dense num_edges^2 block. */
static double *central_convection(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const double *wind) {
  const size_t ne = edges->num_edges;
  double *n = calloc(ne * ne, sizeof *n);
  assert_non_null(n);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const double *x[3];
    for (int i = 0; i < 3; i++)
      x[i] = mesh->coords + 2 * (size_t)mesh->cells[3 * k + (size_t)i];
    const double centre[2] = {(x[0][0] + x[1][0] + x[2][0]) / 3, (x[0][1] + x[1][1] + x[2][1]) / 3};
    const int32_t *e = edges->cell_edges + 3 * k;
    for (int c = 0; c < 3; c++) {
      size_t a = (size_t)e[(c + 1) % 3], b = (size_t)e[(c + 2) % 3], o = (size_t)e[c];
      double mid[2], normal[2] = {-(x[c][1] - centre[1]), x[c][0] - centre[0]};
      for (size_t d = 0; d < 2; d++)
        mid[d] = (2 * (wind[d * ne + a] + wind[d * ne + b]) - wind[d * ne + o]) / 3;
      double flux = mid[0] * normal[0] + mid[1] * normal[1]; /* out of a's region into b's */
      n[a * ne + b] += flux / 2;
      n[a * ne + a] -= flux / 2;
      n[b * ne + a] -= flux / 2;
      n[b * ne + b] += flux / 2;
    }
  }
  return n;
}

/* The weighted upwind (CLMG_STOKES_UPWIND_WEIGHTED) on random data: its
 * parameter 0 is the central convection computed from the definition above
 * (with and without viscosity), it tends to it linearly as the parameter
 * goes to 0, 1 is Samarskij's bit for bit, and a negative or non-finite
 * parameter is refused. */
static void test_weighted_upwind(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = test_side_tagged_box(4, 0.2, 31);
  clmg_triangle_edges edges = test_edges_of(&mesh);
  const size_t ne = edges.num_edges, n = clmg_stokes_num_unknowns(&mesh, &edges);
  const int32_t no_tag = 99;
  double *b = malloc(n * sizeof *b), *wind = random_wind(ne);
  assert_non_null(b);
  for (size_t i = 0; i < 2 * ne; i++)
    wind[i] -= 1.0; /* both signs */
  double *central = central_convection(&mesh, &edges, wind);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.02 + 0.01 * rng_uniform();
  problem.dirichlet_tags = &no_tag; /* natural boundary: every row present */
  problem.num_dirichlet_tags = 1;
  clmg_csr a0 = {0};
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a0, b, &error));
  problem.wind = wind;
  problem.upwind = CLMG_STOKES_UPWIND_WEIGHTED;
  const double parameters[4] = {0.0, 1e-3, 1e-6, 1.0};
  double distance[4] = {0}, largest = 0.0;
  clmg_csr a[4] = {{0}};
  for (int p = 0; p < 4; p++) {
    problem.upwind_parameter = parameters[p];
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a[p], b, &error));
    for (size_t i = 0; i < 2 * ne; i++)
      for (int64_t k = a[p].row_ptr[i]; k < a[p].row_ptr[i + 1]; k++) {
        size_t j = (size_t)a[p].col[k];
        /* boundary rows add the directional do-nothing term (test_flow.c) */
        if (j >= 2 * ne || edges.edge_tag[i % ne] > 0)
          continue;
        assert_true((i < ne) == (j < ne)); /* no coupling of the components */
        double expected = central[(i % ne) * ne + j % ne];
        largest = fmax(largest, fabs(expected));
        distance[p] = fmax(distance[p], fabs(convection_entry(&a[p], &a0, k) - expected));
      }
  }
  printf("  weighted upwind: largest central entry %.3e; distance to central at parameter 0 "
         "%.2e, 1e-3 %.2e, 1e-6 %.2e, 1 %.2e\n",
         largest, distance[0], distance[1], distance[2], distance[3]);
  assert_true(largest > 0.0);
  assert_true(distance[0] <= 1e-14 * largest);
  assert_true(distance[3] > 1e-3 * largest); /* Samarskij's is no central scheme */
  assert_true(distance[1] > 0.0 && distance[1] < distance[3]);
  /* linear in the parameter: a thousandth of it, a thousandth of the distance */
  assert_true(distance[2] < 2e-3 * distance[1] && distance[2] > 5e-4 * distance[1]);
  clmg_csr samarskij = {0};
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &samarskij, b, &error));
  assert_memory_equal(samarskij.val, a[3].val, clmg_csr_nnz(&samarskij) * sizeof *samarskij.val);
  /* without viscosity (a mass term instead): parameter 0 stays central */
  problem.viscosity = 0.0;
  problem.reaction = 1.0;
  problem.wind = NULL;
  clmg_csr m0 = {0}, m = {0};
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &m0, b, &error));
  problem.wind = wind;
  problem.upwind = CLMG_STOKES_UPWIND_WEIGHTED;
  problem.upwind_parameter = 0.0;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &m, b, &error));
  for (size_t i = 0; i < 2 * ne; i++)
    for (int64_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; k++)
      if ((size_t)m.col[k] < 2 * ne && edges.edge_tag[i % ne] == 0)
        CHECK_NEAR(convection_entry(&m, &m0, k), central[(i % ne) * ne + (size_t)m.col[k] % ne],
                   1e-14 * largest);
  /* refused parameters */
  const double bad[2] = {-0.5, NAN};
  for (int k = 0; k < 2; k++) {
    clmg_csr refused = {0};
    problem.upwind_parameter = bad[k];
    assert_int_equal(clmg_stokes_assemble_host(&mesh, &edges, &problem, &refused, b, &error),
                     CLMG_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(error.message, "upwind parameter");
  }
  for (int p = 0; p < 4; p++)
    clmg_csr_free(&a[p]);
  clmg_csr_free(&a0);
  clmg_csr_free(&samarskij);
  clmg_csr_free(&m0);
  clmg_csr_free(&m);
  free(central);
  free(wind);
  free(b);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

static double sine_bump(const double *x) {
  return sin(PI * x[0]) * sin(PI * x[1]);
}

/* n_h(w; u, v_h) = sum_i (N u)_i v(m_i) on the u_x rows for a constant
 * wind w, a linear u and v = sin(pi x) sin(pi y), against the integral of
 * (w . grad u_x) v = (w . grad u_x) 4 / pi^2; also the range of the row
 * ratios (N u)_i / (|Omega_i| w . grad u_x) on interior edges. */
static double weak_convection_error(const clmg_mesh *mesh, int upwind, const double w[2],
                                    linear_field *field, double *ratio_min, double *ratio_max) {
  clmg_error error;
  clmg_triangle_edges edges = test_edges_of(mesh);
  const size_t num_edges = edges.num_edges, n = clmg_stokes_num_unknowns(mesh, &edges);
  const int32_t no_tag = 99;
  double *wind = malloc(2 * num_edges * sizeof *wind), *b = malloc(n * sizeof *b);
  double *mass = calloc(num_edges, sizeof *mass);
  assert_true(wind && b && mass);
  for (size_t e = 0; e < num_edges; e++) {
    wind[e] = w[0];
    wind[num_edges + e] = w[1];
  }
  for (size_t k = 0; k < mesh->num_cells; k++)
    for (size_t i = 0; i < 3; i++)
      mass[edges.cell_edges[3 * k + i]] += cell_area(mesh, k) / 3.0;
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.dirichlet_tags = &no_tag;
  problem.num_dirichlet_tags = 1;
  problem.upwind = upwind;
  clmg_csr a0 = {0}, a = {0};
  CHECK_OK(error, clmg_stokes_assemble_host(mesh, &edges, &problem, &a0, b, &error));
  problem.wind = wind;
  CHECK_OK(error, clmg_stokes_assemble_host(mesh, &edges, &problem, &a, b, &error));
  double *x = interpolant(mesh, &edges, linear_velocity, NULL, field);
  const double derivative = w[0] * field->c[1] + w[1] * field->c[2]; /* w . grad u_x */
  double weak = 0.0;
  *ratio_min = INFINITY;
  *ratio_max = -INFINITY;
  for (size_t i = 0; i < num_edges; i++) {
    double nu = 0.0;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      nu += convection_entry(&a, &a0, k) * x[a.col[k]];
    double m[2];
    const double *p0 = mesh->coords + 2 * (size_t)edges.edge_vertices[2 * i];
    const double *p1 = mesh->coords + 2 * (size_t)edges.edge_vertices[2 * i + 1];
    m[0] = 0.5 * (p0[0] + p1[0]);
    m[1] = 0.5 * (p0[1] + p1[1]);
    weak += nu * sine_bump(m);
    if (edges.edge_tag[i] == 0) {
      double ratio = nu / (mass[i] * derivative);
      *ratio_min = fmin(*ratio_min, ratio);
      *ratio_max = fmax(*ratio_max, ratio);
    }
  }
  free(x);
  free(wind);
  free(b);
  free(mass);
  clmg_csr_free(&a0);
  clmg_csr_free(&a);
  clmg_triangle_edges_free(&edges);
  return fabs(weak - derivative * 4.0 / ((PI * PI)));
}

static void test_convection(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = test_side_tagged_box(4, 0.2, 29);
  clmg_triangle_edges edges = test_edges_of(&mesh);
  const size_t num_edges = edges.num_edges, n = clmg_stokes_num_unknowns(&mesh, &edges);
  const int32_t no_tag = 99;
  double *b = malloc(n * sizeof *b), *b0 = malloc(n * sizeof *b0);
  assert_true(b && b0);
  double *wind = random_wind(num_edges);

  for (int upwind = CLMG_STOKES_UPWIND_FULL; upwind <= CLMG_STOKES_UPWIND_SAMARSKIJ; upwind++) {
    /* natural boundary: every row present */
    clmg_stokes_problem problem;
    clmg_stokes_problem_defaults(&problem);
    problem.viscosity = 0.05 + 0.01 * rng_uniform();
    problem.dirichlet_tags = &no_tag;
    problem.num_dirichlet_tags = 1;
    problem.upwind = upwind;
    clmg_csr a0 = {0}, a = {0};
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a0, b0, &error));
    problem.wind = wind;
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
    /* the same pattern, b unchanged, the same block for u_x and u_y, the
     * B blocks unchanged */
    assert_int_equal(clmg_csr_nnz(&a), clmg_csr_nnz(&a0));
    assert_memory_equal(a.row_ptr, a0.row_ptr, (n + 1) * sizeof *a.row_ptr);
    assert_memory_equal(a.col, a0.col, clmg_csr_nnz(&a) * sizeof *a.col);
    for (size_t i = 0; i < n; i++)
      assert_true(b[i] == b0[i]);
    double largest = 0.0;
    size_t positive_off_diagonal = 0;
    for (size_t i = 0; i < n; i++)
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) {
        size_t j = (size_t)a.col[k];
        double value = convection_entry(&a, &a0, k);
        if (i >= 2 * num_edges || j >= 2 * num_edges) {
          assert_true(value == 0.0);
          continue;
        }
        if (i < num_edges)
          assert_true(a.val[k] == entry(&a, num_edges + i, num_edges + j));
        largest = fmax(largest, fabs(value));
        /* full upwind: a nonnegative diagonal, nonpositive off-diagonals;
         * Samarskij's weights give positive off-diagonals where the flux
         * leaves the region (and so may give a negative diagonal) */
        if (upwind == CLMG_STOKES_UPWIND_FULL)
          assert_true(i == j ? value >= 0.0 : value <= 0.0);
        else
          positive_off_diagonal += i != j && value > 0.0;
      }
    assert_true(largest > 0.0);
    if (upwind == CLMG_STOKES_UPWIND_SAMARSKIJ)
      assert_true(positive_off_diagonal > 0); /* the central part */
    /* constants are in the kernel: N's row sums vanish */
    linear_field constant = {{rng_uniform(), 0, 0, rng_uniform(), 0, 0}, 0.0};
    double *x = interpolant(&mesh, &edges, linear_velocity, NULL, &constant);
    double *ax = spmv(&a, x), *a0x = spmv(&a0, x);
    /* (inside: the boundary rows add the directional do-nothing term where
     * the wind flows in, tests/test_flow.c) */
    for (size_t i = 0; i < 2 * num_edges; i++)
      if (edges.edge_tag[i % num_edges] == 0)
        CHECK_NEAR(ax[i] - a0x[i], 0.0, 1e-14 * largest);
    free(x);
    free(ax);
    free(a0x);
    /* nonsymmetric now: some entry differs from its transpose */
    assert_false(clmg_csr_is_symmetric(&a, 1e-12));
    size_t asymmetric = 0;
    for (size_t i = 0; i < 2 * num_edges; i++)
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
        asymmetric += fabs(a.val[k] - entry(&a, (size_t)a.col[k], i)) > 1e-3 * largest;
    assert_true(asymmetric > 0);
    clmg_csr_free(&a0);
    clmg_csr_free(&a);
  }

  /* nu = 0 (with a mass term): Samarskij's weights are full upwind */
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.0;
  problem.reaction = 1.0;
  problem.wind = wind;
  clmg_csr full = {0}, samarskij = {0};
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &full, b, &error));
  problem.upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &samarskij, b, &error));
  assert_memory_equal(full.val, samarskij.val, clmg_csr_nnz(&full) * sizeof *full.val);
  clmg_csr_free(&full);
  clmg_csr_free(&samarskij);

  /* Dirichlet elimination of the nonsymmetric block: identity rows, no
   * Dirichlet columns, the other entries those of the natural problem and
   * the eliminated columns times the boundary values moved to b (free slip
   * on the top: u_y only, value 0) */
  linear_field field = random_linear_field(0);
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.05;
  problem.wind = wind;
  problem.force = quadratic_force;
  problem.boundary_velocity = linear_boundary_velocity;
  problem.boundary_data = &field;
  problem.dirichlet_tags = &no_tag;
  problem.num_dirichlet_tags = 1;
  clmg_csr natural = {0}, a = {0};
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &natural, b0, &error));
  const int32_t tags[3] = {1, 2, 4}, slip = 3;
  problem.dirichlet_tags = tags;
  problem.num_dirichlet_tags = 3;
  problem.slip_tags = &slip;
  problem.num_slip_tags = 1;
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  uint8_t *mask = NULL;
  CHECK_OK(error, clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error));
  double *value = interpolant(&mesh, &edges, linear_velocity, NULL, &field);
  for (size_t i = 0; i < 2 * num_edges; i++)
    if (mask[i] && edges.edge_tag[i % num_edges] == 3)
      value[i] = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (mask[i]) {
      assert_int_equal(a.row_ptr[i + 1] - a.row_ptr[i], 1);
      assert_true(a.col[a.row_ptr[i]] == (int32_t)i && a.val[a.row_ptr[i]] == 1.0);
      CHECK_NEAR(b[i], value[i], 1e-15);
      continue;
    }
    double expected = b0[i], scale = fabs(b0[i]);
    for (int64_t k = natural.row_ptr[i]; k < natural.row_ptr[i + 1]; k++) {
      size_t j = (size_t)natural.col[k];
      if (mask[j]) {
        expected -= natural.val[k] * value[j];
        scale += fabs(natural.val[k] * value[j]);
      } else {
        assert_true(entry(&a, i, j) == natural.val[k]);
      }
    }
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      assert_int_equal(mask[a.col[k]], 0);
    CHECK_NEAR(b[i], expected, 1e-14 * scale);
  }
  free(value);
  free(mask);
  clmg_csr_free(&natural);
  clmg_csr_free(&a);

  /* refused: a non-finite wind, an unknown scheme */
  wind[num_edges + 3] = NAN;
  problem.wind = wind;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "y component on edge 3");
  assert_null(a.row_ptr);
  wind[num_edges + 3] = 0.0;
  problem.upwind = 7;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "upwind scheme 7");

  free(wind);
  free(b);
  free(b0);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);

  /* weak consistency for a constant wind and a linear u on a uniform
   * mesh refined twice: n_h(w; u, v_h) against the integral of
   * (w . grad u) v (second order there: the region of an edge is
   * point-symmetric about its midpoint, so the upwind part vanishes on
   * linear fields and both schemes agree); then on a distorted one (first
   * order: the upwind diffusion acts). Row by row the scheme is not
   * consistent: the ratios depend on the edge's direction, not on h. */
  const double w[2] = {0.7, -0.4};
  linear_field linear = random_linear_field(0);
  for (int distorted = 0; distorted < 2; distorted++)
    for (int upwind = CLMG_STOKES_UPWIND_FULL; upwind <= CLMG_STOKES_UPWIND_SAMARSKIJ; upwind++) {
      enum { LEVELS = 3 };
      double weak[LEVELS];
      clmg_mesh level = test_side_tagged_box(4, distorted ? 0.2 : 0.0, 1);
      for (int l = 0; l < LEVELS; l++) {
        if (l > 0) {
          clmg_mesh finer = test_refined(&level);
          clmg_mesh_free(&level);
          level = finer;
        }
        double low, high;
        weak[l] = weak_convection_error(&level, upwind, w, &linear, &low, &high);
        print_message("%s upwind, %s, %zu triangles: weak error %.3e, row ratios %.4f to %.4f",
                      upwind == CLMG_STOKES_UPWIND_FULL ? "full" : "Samarskij",
                      distorted ? "distorted" : "uniform", level.num_cells, weak[l], low, high);
        if (l > 0)
          print_message(", order %.3f", log2(weak[l - 1] / weak[l]));
        print_message("\n");
      }
      clmg_mesh_free(&level);
      for (int l = 1; l < LEVELS; l++) {
        double order = log2(weak[l - 1] / weak[l]);
        if (!(order >= (distorted ? 0.9 : 1.8)))
          fail_msg("weak consistency order %.3f at level %d (>= %g expected)", order, l,
                   distorted ? 0.9 : 1.8);
      }
    }
}

/* ---- a manufactured Oseen step ---- */

/* The velocity of the manufactured solution times `amplitude` (order 1
 * speeds), wind = that velocity, nu, a reaction c and
 * f = c u + (u . grad) u - nu Laplace u + grad p. */
typedef struct oseen {
  double amplitude, viscosity, reaction;
} oseen;

static void oseen_velocity(const double *x, double *u, void *data) {
  const oseen *o = data;
  stokes_exact_velocity(x, u, NULL);
  u[0] *= o->amplitude;
  u[1] *= o->amplitude;
}

static void oseen_force(const double *x, double *f, void *data) {
  const oseen *o = data;
  const double X = x[0], Y = x[1], s = o->amplitude;
  double u[2];
  oseen_velocity(x, u, data);
  /* the gradient of u: d u_x/dx, d u_x/dy, d u_y/dx, d u_y/dy */
  const double uxx = s * psi_g1(X) * psi_g1(Y), uxy = s * psi_g0(X) * psi_g2(Y);
  const double uyx = -s * psi_g2(X) * psi_g0(Y), uyy = -s * psi_g1(X) * psi_g1(Y);
  double laplace_u = s * (psi_g2(X) * psi_g1(Y) + psi_g0(X) * psi_g3(Y));
  double laplace_v = -s * (psi_g3(X) * psi_g0(Y) + psi_g1(X) * psi_g2(Y));
  f[0] = o->reaction * u[0] + u[0] * uxx + u[1] * uxy - o->viscosity * laplace_u + 3 * X * X;
  f[1] = o->reaction * u[1] + u[0] * uyx + u[1] * uyy - o->viscosity * laplace_v + 2 * Y;
}

static void run_oseen(int upwind, double reaction, double *u_order_min) {
  oseen data = {40.0, 0.01, reaction};
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = data.viscosity;
  problem.reaction = data.reaction;
  problem.force = oseen_force;
  problem.force_data = &data;
  problem.upwind = upwind;
  level_errors e =
      errors_on_levels(problem, oseen_velocity, oseen_velocity, stokes_exact_pressure, &data);
  for (int level = 0; level < CONVERGENCE_LEVELS; level++) {
    print_message("Oseen, %s upwind, c = %g, level %d: %zu triangles: |u - u_h| = %.4e "
                  "(%.1f%% of |u|), |p - p_h| = %.4e",
                  upwind == CLMG_STOKES_UPWIND_FULL ? "full" : "Samarskij", reaction, level,
                  e.triangles[level], e.u[level], 100.0 * e.u[level] / e.u_norm[level], e.p[level]);
    print_orders(&e, level);
  }
  *u_order_min = INFINITY;
  for (int level = 1; level < CONVERGENCE_LEVELS; level++)
    *u_order_min = fmin(*u_order_min, log2(e.u[level - 1] / e.u[level]));
}

static void test_oseen_manufactured(void **state) {
  (void)state;
  const double reactions[2] = {0.0, 1.0};
  for (int upwind = CLMG_STOKES_UPWIND_FULL; upwind <= CLMG_STOKES_UPWIND_SAMARSKIJ; upwind++)
    for (int r = 0; r < 2; r++) {
      double order;
      run_oseen(upwind, reactions[r], &order);
      if (!(order >= 0.9))
        fail_msg("%s upwind, c = %g: velocity order %.3f (>= 0.9 expected)",
                 upwind == CLMG_STOKES_UPWIND_FULL ? "full" : "Samarskij", reactions[r], order);
    }
}

/* ---- the refill of a time step ---- */

static void shifted_force(const double *x, double *f, void *data) {
  const double *shift = data;
  f[0] = sin(x[0] + shift[0]) * x[1];
  f[1] = cos(x[1] * shift[0]) - x[0];
}

static void test_update_values(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = test_side_tagged_box(5, 0.2, 31);
  clmg_triangle_edges edges = test_edges_of(&mesh);
  const size_t num_edges = edges.num_edges, n = clmg_stokes_num_unknowns(&mesh, &edges);
  const int32_t tags[2] = {1, 4}, slip = 3;
  double *b = malloc(n * sizeof *b), *fresh_b = malloc(n * sizeof *fresh_b);
  double *previous = random_wind(num_edges), *wind = random_wind(num_edges);
  assert_true(b && fresh_b);
  linear_field field = random_linear_field(0);
  double shift = 0.3;

  for (int upwind = CLMG_STOKES_UPWIND_FULL; upwind <= CLMG_STOKES_UPWIND_SAMARSKIJ; upwind++) {
    /* step 0: no wind yet */
    clmg_stokes_problem problem;
    clmg_stokes_problem_defaults(&problem);
    problem.viscosity = 0.02;
    problem.reaction = 10.0;
    problem.dirichlet_tags = tags;
    problem.num_dirichlet_tags = 2;
    problem.slip_tags = &slip;
    problem.num_slip_tags = 1;
    problem.boundary_velocity = linear_boundary_velocity;
    problem.boundary_data = &field;
    problem.upwind = upwind;
    clmg_csr a = {0};
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
    const size_t nnz = clmg_csr_nnz(&a);
    for (int step = 1; step <= 3; step++) {
      /* new wind, previous velocity, coefficients, force and boundary
       * values */
      for (size_t i = 0; i < 2 * num_edges; i++) {
        wind[i] = 2.0 * rng_uniform();
        previous[i] = rng_uniform();
      }
      field = random_linear_field(0);
      shift += 0.1;
      problem.wind = step == 2 ? NULL : wind;
      problem.previous = previous;
      problem.viscosity = 0.01 * step;
      problem.reaction = 5.0 / step;
      problem.force = shifted_force;
      problem.force_data = &shift;
      CHECK_OK(error,
               clmg_stokes_update_values_host(&mesh, &edges, &problem, &a, a.val, b, &error));
      clmg_csr fresh = {0};
      CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &fresh, fresh_b, &error));
      assert_int_equal(clmg_csr_nnz(&fresh), nnz);
      assert_memory_equal(fresh.row_ptr, a.row_ptr, (n + 1) * sizeof *a.row_ptr);
      assert_memory_equal(fresh.col, a.col, nnz * sizeof *a.col);
      assert_memory_equal(fresh.val, a.val, nnz * sizeof *a.val);
      assert_memory_equal(fresh_b, b, n * sizeof *b);
      clmg_csr_free(&fresh);
    }

    /* a matrix of other tags: a missing entry, then one too many */
    double *values = malloc(nnz * sizeof *values);
    assert_non_null(values);
    const int32_t fewer[1] = {1};
    problem.dirichlet_tags = fewer;
    problem.num_dirichlet_tags = 1;
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
                 clmg_stokes_update_values_host(&mesh, &edges, &problem, &a, values, b, &error));
    CHECK_CONTAINS(error.message, "has no entry");
    const int32_t more[3] = {1, 2, 4};
    problem.dirichlet_tags = more;
    problem.num_dirichlet_tags = 3;
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
                 clmg_stokes_update_values_host(&mesh, &edges, &problem, &a, values, b, &error));
    CHECK_CONTAINS(error.message, "is no coupling");
    problem.num_slip_tags = 0; /* slip -> natural: the top's u_y entries are missing */
    problem.dirichlet_tags = tags;
    problem.num_dirichlet_tags = 2;
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
                 clmg_stokes_update_values_host(&mesh, &edges, &problem, &a, values, b, &error));
    CHECK_CONTAINS(error.message, "pattern");
    free(values);
    /* another mesh's matrix */
    clmg_mesh other = test_side_tagged_box(4, 0.2, 31);
    clmg_triangle_edges other_edges = test_edges_of(&other);
    CHECK_STATUS(
        CLMG_ERROR_INVALID_ARGUMENT,
        clmg_stokes_update_values_host(&other, &other_edges, &problem, &a, a.val, b, &error));
    CHECK_CONTAINS(error.message, "not a Stokes matrix of this mesh");
    CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
                 clmg_stokes_update_values_host(&mesh, &edges, &problem, &a, NULL, b, &error));
    CHECK_CONTAINS(error.message, "values");
    clmg_triangle_edges_free(&other_edges);
    clmg_mesh_free(&other);
    clmg_csr_free(&a);
  }
  free(previous);
  free(wind);
  free(b);
  free(fresh_b);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* ---- free slip ---- */

static void no_slip_velocity(const double *x, int32_t tag, double *u, void *data) {
  (void)x;
  (void)data;
  assert_true(tag != 3); /* never called on the slip edges */
  u[0] = 5.0;
  u[1] = -5.0;
}

/* A half channel with a free-slip top: u = (y (2 - y), 0),
 * p = 2 nu (1 - x) on the unit square solve the Stokes equations with
 * u = 0 on the bottom, the profile on the left (Dirichlet), u_y = 0 and
 * du_x/dy = 0 on the top (free slip), do-nothing on the right (there
 * du/dx = 0 and p = 0). */
static void channel_velocity(const double *x, double *u, void *data) {
  (void)data;
  u[0] = x[1] * (2.0 - x[1]);
  u[1] = 0.0;
}

static void channel_boundary(const double *x, int32_t tag, double *u, void *data) {
  assert_true(tag == 1 || tag == 4);
  channel_velocity(x, u, data);
}

static double channel_pressure(const double *x, void *data) {
  const double *nu = data;
  return 2.0 * *nu * (1.0 - x[0]);
}

static void test_slip(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = test_side_tagged_box(4, 0.2, 43);
  clmg_triangle_edges edges = test_edges_of(&mesh);
  const size_t num_edges = edges.num_edges, n = clmg_stokes_num_unknowns(&mesh, &edges);
  double *b = malloc(n * sizeof *b);
  assert_non_null(b);
  double *wind = random_wind(num_edges);

  /* the marks: both components on Dirichlet sides, the normal one on slip
   * sides (the top: u_y; the right: u_x); no Dirichlet tags listed: every
   * side that is not slip */
  const int32_t dirichlet[2] = {1, 4}, slip_top[1] = {3}, slip_right[1] = {2}, no_tag = 99;
  struct {
    const int32_t *dirichlet;
    size_t num_dirichlet;
    const int32_t *slip;
    int32_t normal_of[5]; /* per tag: 0 natural, 1 u_x, 2 u_y, 3 both */
  } cases[4] = {{dirichlet, 2, slip_top, {0, 3, 0, 2, 3}},
                {NULL, 0, slip_top, {0, 3, 3, 2, 3}},
                {dirichlet, 2, slip_right, {0, 3, 1, 0, 3}},
                {&no_tag, 1, slip_right, {0, 0, 1, 0, 0}}};
  for (size_t c = 0; c < 4; c++) {
    clmg_stokes_problem problem;
    clmg_stokes_problem_defaults(&problem);
    problem.dirichlet_tags = cases[c].dirichlet;
    problem.num_dirichlet_tags = cases[c].num_dirichlet;
    problem.slip_tags = cases[c].slip;
    problem.num_slip_tags = 1;
    problem.boundary_velocity = no_slip_velocity;
    problem.wind = c % 2 ? wind : NULL;
    uint8_t *mask = NULL;
    CHECK_OK(error, clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error));
    clmg_csr a = {0};
    CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
    size_t marked = 0;
    for (size_t i = 0; i < n; i++) {
      int expected = 0;
      if (i < 2 * num_edges) {
        int32_t marks = cases[c].normal_of[edges.edge_tag[i % num_edges]];
        expected = (marks >> (i < num_edges ? 0 : 1)) & 1;
      }
      if (mask[i] != expected)
        fail_msg("case %zu: unknown %zu (tag %d) marked %d, expected %d", c, i,
                 i < 2 * num_edges ? (int)edges.edge_tag[i % num_edges] : -1, mask[i], expected);
      marked += mask[i];
      if (mask[i]) { /* identity rows; the slip value 0, the others 5 and -5 */
        assert_int_equal(a.row_ptr[i + 1] - a.row_ptr[i], 1);
        assert_true(a.col[a.row_ptr[i]] == (int32_t)i && a.val[a.row_ptr[i]] == 1.0);
        int slipping = edges.edge_tag[i % num_edges] == cases[c].slip[0];
        assert_true(b[i] == (slipping ? 0.0 : i < num_edges ? 5.0 : -5.0));
      } else {
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
          assert_int_equal(mask[a.col[k]], 0);
        if (i < 2 * num_edges)
          assert_true(a.row_ptr[i + 1] - a.row_ptr[i] > 1);
      }
    }
    assert_true(marked > 0);
    free(mask);
    clmg_csr_free(&a);
  }

  /* refused: a tag both Dirichlet and slip, a missing array, a slip edge
   * off the axes */
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  const int32_t both[2] = {1, 3};
  problem.dirichlet_tags = both;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip_top;
  problem.num_slip_tags = 1;
  clmg_csr a = {0};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "tag 3 is both");
  uint8_t *mask = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error));
  assert_null(mask);
  problem.num_dirichlet_tags = 1;
  problem.slip_tags = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "slip_tags");
  problem.slip_tags = slip_top;
  clmg_mesh tilted = {0};
  CHECK_OK(error, clmg_mesh_copy(&mesh, &tilted, &error));
  for (size_t v = 0; v < tilted.num_vertices; v++) {
    double *x = tilted.coords + 2 * v;
    double rotated[2] = {0.8 * x[0] - 0.6 * x[1], 0.6 * x[0] + 0.8 * x[1]};
    x[0] = rotated[0];
    x[1] = rotated[1];
  }
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_assemble_host(&tilted, &edges, &problem, &a, b, &error));
  CHECK_CONTAINS(error.message, "free-slip edge");
  CHECK_CONTAINS(error.message, "not axis-parallel");
  assert_null(a.row_ptr);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_dirichlet_mask(&tilted, &edges, &problem, &mask, &error));
  CHECK_CONTAINS(error.message, "not axis-parallel");
  clmg_mesh tilted_fine = test_refined(&tilted);
  clmg_triangle_edges tilted_fine_edges = test_edges_of(&tilted_fine);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_stokes_prolongation_host(&tilted, &edges, &tilted_fine, &tilted_fine_edges,
                                             &problem, &a, &error));
  CHECK_CONTAINS(error.message, "not axis-parallel");
  clmg_triangle_edges_free(&tilted_fine_edges);
  clmg_mesh_free(&tilted_fine);
  clmg_mesh_free(&tilted);
  free(wind);
  free(b);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);

  /* the half channel: the pressure is fixed by the outflow (no pinning) */
  double nu = 0.5;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = nu;
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip_top;
  problem.num_slip_tags = 1;
  problem.boundary_velocity = channel_boundary;
  enum { LEVELS = 3 };
  double u_error[LEVELS], p_error[LEVELS], p_raw[LEVELS];
  clmg_mesh level = test_side_tagged_box(4, 0.15, 47);
  for (int l = 0; l < LEVELS; l++) {
    if (l > 0) {
      clmg_mesh finer = test_refined(&level);
      clmg_mesh_free(&level);
      level = finer;
    }
    clmg_triangle_edges level_edges = test_edges_of(&level);
    const size_t size = clmg_stokes_num_unknowns(&level, &level_edges);
    double *rhs = malloc(size * sizeof *rhs), *x = malloc(size * sizeof *x);
    assert_true(rhs && x);
    CHECK_OK(error, clmg_stokes_assemble_host(&level, &level_edges, &problem, &a, rhs, &error));
    direct_solve_pinned(&level, &level_edges, &a, rhs, x, 0);
    double *ax = spmv(&a, x), residual = 0.0, norm = 0.0;
    for (size_t i = 0; i < size; i++) {
      residual = fmax(residual, fabs(ax[i] - rhs[i]));
      norm = fmax(norm, fabs(rhs[i]));
    }
    if (!(residual <= 1e-10 * norm))
      fail_msg("channel level %d: residual %g of |b| %g", l, residual, norm);
    CHECK_OK(error, clmg_stokes_l2_errors(&level, &level_edges, x, channel_velocity,
                                          channel_pressure, &nu, &u_error[l], &p_error[l], &error));
    /* the pressure itself, not only up to a constant: cell means */
    double sum = 0.0;
    for (size_t k = 0; k < level.num_cells; k++) {
      const int32_t *cell = level.cells + 3 * k;
      double centroid[2] = {0.0, 0.0};
      for (size_t v = 0; v < 3; v++)
        for (size_t d = 0; d < 2; d++)
          centroid[d] += level.coords[2 * (size_t)cell[v] + d] / 3.0;
      double d = x[2 * level_edges.num_edges + k] - channel_pressure(centroid, &nu);
      sum += cell_area(&level, k) * d * d;
    }
    p_raw[l] = sqrt(sum);
    print_message("slip channel level %d: %zu triangles: |u - u_h| = %.4e, |p - p_h| = %.4e "
                  "(%.4e without the mean)",
                  l, level.num_cells, u_error[l], p_raw[l], p_error[l]);
    if (l > 0)
      print_message(", orders %.3f and %.3f", log2(u_error[l - 1] / u_error[l]),
                    log2(p_raw[l - 1] / p_raw[l]));
    print_message("\n");
    free(ax);
    free(rhs);
    free(x);
    clmg_csr_free(&a);
    clmg_triangle_edges_free(&level_edges);
  }
  clmg_mesh_free(&level);
  for (int l = 1; l < LEVELS; l++) {
    double u_order = log2(u_error[l - 1] / u_error[l]), p_order = log2(p_raw[l - 1] / p_raw[l]);
    if (!(u_order >= 1.8) || !(p_order >= 0.9))
      fail_msg("slip channel level %d: velocity order %.3f (>= 1.8 expected), pressure order "
               "%.3f (>= 0.9)",
               l, u_order, p_order);
  }
}

/* ---- the Newton term (clmg_stokes_problem.newton) ---- */

static void lid_and_inflow(const double *x, int32_t tag, double *u, void *data) {
  (void)data;
  u[0] = tag == 4 ? 4.0 * x[1] * (1.0 - x[1]) : tag == 3 ? 1.0 : 0.0;
  u[1] = tag == 4 ? 0.1 * sin(3.0 * x[1]) : 0.0;
}

/* F(u) = A(u) u - b(u) of the Oseen system with u's velocity as wind
 * (newton 0), or with newton 1 A(u) and b(u) of the Newton system: into
 * r (A u - b) and, when v is given, jv = A v. */
static void oseen_defect(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                         clmg_stokes_problem problem, int newton, const double *u, const double *v,
                         double *r, double *jv) {
  clmg_error error;
  const size_t n = clmg_stokes_num_unknowns(mesh, edges);
  problem.wind = u;
  problem.newton = newton;
  clmg_csr a = {0};
  double *b = malloc(n * sizeof *b);
  assert_non_null(b);
  if (clmg_stokes_assemble_host(mesh, edges, &problem, &a, b, &error) != CLMG_SUCCESS)
    fail_msg("assembly: %s", error.message);
  clmg_csr_spmv_host(1.0, &a, u, 0.0, r);
  for (size_t i = 0; i < n; i++)
    r[i] -= b[i];
  if (v)
    clmg_csr_spmv_host(1.0, &a, v, 0.0, jv);
  clmg_csr_free(&a);
  free(b);
}

/* The Newton system's matrix is the derivative of the Oseen defect
 * F(u) = A(u) u - b(u) (the upwinded convection's exact derivative, with
 * Dirichlet, free-slip and do-nothing edges): J v against the central
 * difference (F(u + eps v) - F(u - eps v)) / (2 eps) on the free rows, v
 * 0 on the Dirichlet unknowns and u their values, for every upwind
 * scheme; and at u the Newton system's defect is the Oseen one's (the same
 * fixed point). */
static void test_newton_jacobian(void **state) {
  (void)state;
  static const int32_t dirichlet_tags[2] = {3, 4}, slip_tags[1] = {1};
  clmg_error error;
  clmg_mesh coarse = test_side_tagged_box(3, 0.2, 61);
  clmg_mesh mesh = test_refined(&coarse);
  clmg_triangle_edges edges;
  if (clmg_triangle_edges_create(&mesh, &edges, &error) != CLMG_SUCCESS)
    fail_msg("%s", error.message);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 0.02;
  problem.boundary_velocity = lid_and_inflow;
  problem.dirichlet_tags = dirichlet_tags;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip_tags;
  problem.num_slip_tags = 1;
  const size_t ne = edges.num_edges, n = clmg_stokes_num_unknowns(&mesh, &edges);
  uint8_t *mask = NULL;
  if (clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error) != CLMG_SUCCESS)
    fail_msg("%s", error.message);
  /* the Dirichlet values: b of the Stokes system on the Dirichlet rows */
  clmg_csr a0 = {0};
  double *g = malloc(n * sizeof *g);
  assert_non_null(g);
  if (clmg_stokes_assemble_host(&mesh, &edges, &problem, &a0, g, &error) != CLMG_SUCCESS)
    fail_msg("%s", error.message);
  clmg_csr_free(&a0);
  double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v), *up = malloc(n * sizeof *up);
  double *um = malloc(n * sizeof *um), *fp = malloc(n * sizeof *fp), *fm = malloc(n * sizeof *fm);
  double *jv = malloc(n * sizeof *jv), *cv = malloc(n * sizeof *cv), *r = malloc(n * sizeof *r);
  double *rn = malloc(n * sizeof *rn);
  assert_true(u && v && up && um && fp && fm && jv && cv && r && rn);
  for (size_t i = 0; i < n; i++) {
    u[i] = mask[i] ? g[i] : 2.0 * rng_uniform() - 1.0;
    v[i] = mask[i] ? 0.0 : 2.0 * rng_uniform() - 1.0;
  }
  const int upwinds[4] = {CLMG_STOKES_UPWIND_FULL, CLMG_STOKES_UPWIND_SAMARSKIJ,
                          CLMG_STOKES_UPWIND_WEIGHTED, CLMG_STOKES_UPWIND_WEIGHTED};
  const double parameters[4] = {1.0, 1.0, 0.3, 0.0}, eps = 1e-6;
  for (int k = 0; k < 4; k++) {
    problem.upwind = upwinds[k];
    problem.upwind_parameter = parameters[k];
    for (size_t i = 0; i < n; i++) {
      up[i] = u[i] + eps * v[i];
      um[i] = u[i] - eps * v[i];
    }
    oseen_defect(&mesh, &edges, problem, 0, up, NULL, fp, NULL);
    oseen_defect(&mesh, &edges, problem, 0, um, NULL, fm, NULL);
    oseen_defect(&mesh, &edges, problem, 0, u, v, r, cv); /* cv = A(u) v: Picard's */
    oseen_defect(&mesh, &edges, problem, 1, u, v, rn, jv);
    double largest = 0, error_fd = 0, newton_part = 0, defects = 0, defect_size = 0;
    for (size_t i = 0; i < n; i++) {
      if (i < 2 * ne && mask[i])
        continue;
      largest = fmax(largest, fabs(jv[i]));
      error_fd = fmax(error_fd, fabs((fp[i] - fm[i]) / (2 * eps) - jv[i]));
      newton_part = fmax(newton_part, fabs(jv[i] - cv[i]));
      defects = fmax(defects, fabs(rn[i] - r[i]));
      defect_size = fmax(defect_size, fabs(r[i]));
    }
    printf("  upwind %d (%.1f): |J v| %.3e, |J v - A v| %.3e, |FD - J v| %.2e, defects differ "
           "by %.1e\n",
           upwinds[k], parameters[k], largest, newton_part, error_fd, defects);
    assert_true(newton_part > 0.05 * largest); /* the Newton term is there */
    assert_true(error_fd <= 1e-7 * largest);
    assert_true(defects <= 1e-12 * defect_size);
  }
  free(u);
  free(v);
  free(up);
  free(um);
  free(fp);
  free(fm);
  free(jv);
  free(cv);
  free(r);
  free(rn);
  free(g);
  free(mask);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
  clmg_mesh_free(&coarse);
}

/* ---- the pattern ---- */

static void wall_velocity(const double *x, int32_t tag, double *u, void *data) {
  (void)data;
  u[0] = x[1] + tag;
  u[1] = x[0] * x[1];
}

/* The assembly on `threads` host threads ($CLMG_HOST_THREADS). */
static void assemble_on_threads(const char *threads, const clmg_mesh *mesh,
                                const clmg_triangle_edges *edges,
                                const clmg_stokes_problem *problem, clmg_csr *a, double *b) {
  clmg_error error;
  char *kept = test_env_set("CLMG_HOST_THREADS", threads);
  clmg_status status = clmg_stokes_assemble_host(mesh, edges, problem, a, b, &error);
  test_env_restore("CLMG_HOST_THREADS", kept);
  if (status != CLMG_SUCCESS)
    fail_msg("assembly on %s threads: %s", threads, error.message);
}

/* The assembly's pattern is that of the element couplings (per cell: the
 * same component on two of its edges, a velocity with the pressure and
 * back; Dirichlet rows and columns left out, their diagonal in), built
 * here as triplets; 1 and 3 host threads give the same arrays and b. */
static void test_pattern(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = test_side_tagged_box(4, 0.2, 47);
  for (int r = 0; r < 5; r++) { /* 32 768 triangles: several ranges of rows */
    clmg_mesh fine = test_refined(&mesh);
    clmg_mesh_free(&mesh);
    mesh = fine;
  }
  clmg_triangle_edges edges = test_edges_of(&mesh);
  const size_t ne = edges.num_edges, nc = mesh.num_cells,
               n = clmg_stokes_num_unknowns(&mesh, &edges);
  double *b1 = malloc(n * sizeof *b1), *b3 = malloc(n * sizeof *b3);
  int32_t *row = malloc((30 * nc + 2 * ne) * sizeof *row);
  int32_t *col = malloc((30 * nc + 2 * ne) * sizeof *col);
  double *val = calloc(30 * nc + 2 * ne, sizeof *val);
  double *wind = random_wind(ne);
  assert_true(b1 && b3 && row && col && val);
  const int32_t dirichlet[2] = {1, 4}, slip[1] = {3}, no_tag = 99;
  for (int c = 0; c < 3; c++) {
    clmg_stokes_problem problem;
    clmg_stokes_problem_defaults(&problem);
    problem.boundary_velocity = wall_velocity;
    if (c == 0) { /* Dirichlet, free slip and natural sides */
      problem.dirichlet_tags = dirichlet;
      problem.num_dirichlet_tags = 2;
      problem.slip_tags = slip;
      problem.num_slip_tags = 1;
      problem.wind = wind;
    } else if (c == 1) { /* natural everywhere */
      problem.dirichlet_tags = &no_tag;
      problem.num_dirichlet_tags = 1;
    } /* else Dirichlet everywhere */
    uint8_t *mask = NULL;
    CHECK_OK(error, clmg_stokes_dirichlet_mask(&mesh, &edges, &problem, &mask, &error));
    size_t count = 0;
    for (size_t k = 0; k < nc; k++) {
      const int32_t *e = edges.cell_edges + 3 * k;
      const size_t pressure = 2 * ne + k;
      for (size_t i = 0; i < 3; i++)
        for (size_t component = 0; component < 2; component++) {
          const size_t u = component * ne + (size_t)e[i];
          for (size_t j = 0; j < 3; j++) {
            const size_t v = component * ne + (size_t)e[j];
            if (!mask[u] && !mask[v]) {
              row[count] = (int32_t)u;
              col[count++] = (int32_t)v;
            }
          }
          if (!mask[u]) {
            row[count] = (int32_t)u;
            col[count++] = (int32_t)pressure;
            row[count] = (int32_t)pressure;
            col[count++] = (int32_t)u;
          }
        }
    }
    for (size_t i = 0; i < 2 * ne; i++)
      if (mask[i]) {
        row[count] = col[count] = (int32_t)i;
        count++;
      }
    clmg_csr expected = {0}, a1 = {0}, a3 = {0};
    CHECK_OK(error, clmg_csr_from_triplets(n, n, count, row, col, val, &expected, &error));
    assemble_on_threads("1", &mesh, &edges, &problem, &a1, b1);
    assemble_on_threads("3", &mesh, &edges, &problem, &a3, b3);
    assert_int_equal(a1.rows, n);
    for (size_t i = 0; i <= n; i++)
      if (a1.row_ptr[i] != expected.row_ptr[i])
        fail_msg("case %d: row %zu starts at %lld, the couplings' at %lld", c, i,
                 (long long)a1.row_ptr[i], (long long)expected.row_ptr[i]);
    const size_t nnz = clmg_csr_nnz(&a1);
    for (size_t q = 0; q < nnz; q++)
      if (a1.col[q] != expected.col[q])
        fail_msg("case %d: entry %zu is in column %d, the couplings' in %d", c, q, (int)a1.col[q],
                 (int)expected.col[q]);
    assert_memory_equal(a1.row_ptr, a3.row_ptr, (n + 1) * sizeof *a1.row_ptr);
    assert_memory_equal(a1.col, a3.col, nnz * sizeof *a1.col);
    assert_memory_equal(a1.val, a3.val, nnz * sizeof *a1.val);
    assert_memory_equal(b1, b3, n * sizeof *b1);
    clmg_csr_free(&expected);
    clmg_csr_free(&a1);
    clmg_csr_free(&a3);
    free(mask);
  }
  free(b1);
  free(b3);
  free(row);
  free(col);
  free(val);
  free(wind);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* The prolongation on `threads` host threads; its status, the message in
 * error. */
static clmg_status prolongation_on_threads(const char *threads, const clmg_mesh *coarse,
                                           const clmg_triangle_edges *coarse_edges,
                                           const clmg_mesh *fine,
                                           const clmg_triangle_edges *fine_edges,
                                           const clmg_stokes_problem *problem, clmg_csr *p,
                                           clmg_error *error) {
  char *kept = test_env_set("CLMG_HOST_THREADS", threads);
  clmg_status status =
      clmg_stokes_prolongation_host(coarse, coarse_edges, fine, fine_edges, problem, p, error);
  test_env_restore("CLMG_HOST_THREADS", kept);
  return status;
}

/* The prolongation's passes split over the host's cores: 1 and 3 threads
 * give the same arrays (Dirichlet, free-slip and natural sides), and a
 * coarse mesh that the fine one does not refine in two places far apart
 * the same error, the one the serial loop meets first. */
static void test_prolongation_threads(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh coarse = test_side_tagged_box(4, 0.2, 53);
  for (int r = 0; r < 4; r++) { /* 8 192 coarse triangles: several ranges */
    clmg_mesh fine = test_refined(&coarse);
    clmg_mesh_free(&coarse);
    coarse = fine;
  }
  clmg_mesh fine = test_refined(&coarse);
  clmg_triangle_edges coarse_edges = test_edges_of(&coarse), fine_edges = test_edges_of(&fine);
  const int32_t dirichlet[2] = {1, 4}, slip[1] = {3};
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 2;
  problem.slip_tags = slip;
  problem.num_slip_tags = 1;
  clmg_csr p1 = {0}, p3 = {0};
  CHECK_OK(error, prolongation_on_threads("1", &coarse, &coarse_edges, &fine, &fine_edges, &problem,
                                          &p1, &error));
  CHECK_OK(error, prolongation_on_threads("3", &coarse, &coarse_edges, &fine, &fine_edges, &problem,
                                          &p3, &error));
  assert_int_equal(p1.rows, p3.rows);
  assert_int_equal(p1.cols, p3.cols);
  assert_memory_equal(p1.row_ptr, p3.row_ptr, (p1.rows + 1) * sizeof *p1.row_ptr);
  const size_t nnz = clmg_csr_nnz(&p1);
  assert_memory_equal(p1.col, p3.col, nnz * sizeof *p1.col);
  assert_memory_equal(p1.val, p3.val, nnz * sizeof *p1.val);
  clmg_csr_free(&p1);
  clmg_csr_free(&p3);
  /* two coarse cells' corners turned (their edges with them, so the edges
   * still match): their children no longer fit them */
  const size_t turned[2] = {100, coarse.num_cells - 100};
  for (size_t t = 0; t < 2; t++) {
    int32_t *v = coarse.cells + 3 * turned[t], *e = coarse_edges.cell_edges + 3 * turned[t];
    int32_t v0 = v[0], e0 = e[0];
    v[0] = v[1], v[1] = v[2], v[2] = v0;
    e[0] = e[1], e[1] = e[2], e[2] = e0;
  }
  clmg_error error1, error3;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               prolongation_on_threads("1", &coarse, &coarse_edges, &fine, &fine_edges, &problem,
                                       &p1, &error1));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               prolongation_on_threads("3", &coarse, &coarse_edges, &fine, &fine_edges, &problem,
                                       &p3, &error3));
  CHECK_CONTAINS(error1.message, "not clmg_mesh_refine");
  assert_string_equal(error1.message, error3.message);
  assert_null(p1.row_ptr);
  assert_null(p3.row_ptr);
  clmg_triangle_edges_free(&coarse_edges);
  clmg_triangle_edges_free(&fine_edges);
  clmg_mesh_free(&coarse);
  clmg_mesh_free(&fine);
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
      cmocka_unit_test(test_convection),
      cmocka_unit_test(test_weighted_upwind),
      cmocka_unit_test(test_oseen_manufactured),
      cmocka_unit_test(test_update_values),
      cmocka_unit_test(test_slip),
      cmocka_unit_test(test_newton_jacobian),
      cmocka_unit_test(test_pattern),
      cmocka_unit_test(test_prolongation_threads),
  };
  return cmocka_run_group_tests_name("stokes", tests, NULL, NULL);
}
