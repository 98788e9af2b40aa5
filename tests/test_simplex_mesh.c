/* Tests of simplicial meshes: the generators (Regular of Fu et al. 2014,
 * the triangulated and Kuhn-cut box, the two-material blobs), refinement
 * (area and volume kept, children positive and conforming, materials and
 * tags inherited, boundary projection), clmg_mesh_check on broken
 * simplices, P1/P2 nodes, clmg_mesh_copy and the Q1/Q2 functions refusing
 * simplices. Needs no OpenCL device. */
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

#define PI 3.14159265358979323846

#define CHECK_OK(error, call) CHECK_ERROR_OK(error, call)

#define CHECK_NEAR(actual, expected, tolerance)                                                    \
  do {                                                                                             \
    double actual_ = (actual), expected_ = (expected);                                             \
    if (!(fabs(actual_ - expected_) <= (tolerance)))                                               \
      fail_msg("%s = %.17g, expected %.17g within %g", #actual, actual_, expected_,                \
               (double)(tolerance));                                                               \
  } while (0)

/* ---- helpers ---- */

/* det[v1 - v0, v2 - v0(, v3 - v0)] of simplex k: twice its area, six times
 * its volume. */
static double simplex_det(const clmg_mesh *mesh, size_t k) {
  const size_t dim = (size_t)mesh->dim, corners = dim + 1;
  const int32_t *cell = mesh->cells + k * corners;
  double e[3][3] = {{0}};
  for (size_t i = 0; i < dim; i++)
    for (size_t d = 0; d < dim; d++)
      e[i][d] =
          mesh->coords[(size_t)cell[i + 1] * dim + d] - mesh->coords[(size_t)cell[0] * dim + d];
  if (dim == 2)
    return e[0][0] * e[1][1] - e[0][1] * e[1][0];
  return e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
         e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
         e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
}

/* Sum of |det| over the cells; every det must be positive. */
static double total_det(const clmg_mesh *mesh) {
  double sum = 0.0;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    double det = simplex_det(mesh, k);
    if (!(det > 0.0))
      fail_msg("cell %zu has det %g", k, det);
    sum += fabs(det);
  }
  return sum;
}

/* Total measure of the boundary faces (lengths in 2D, twice the areas in
 * 3D) of tag `tag` (0: all). */
static double boundary_measure(const clmg_mesh *mesh, int32_t tag) {
  const size_t dim = (size_t)mesh->dim;
  double sum = 0.0;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    if (tag && mesh->boundary_face_tag[f] != tag)
      continue;
    const int32_t *face = mesh->boundary_faces + f * dim;
    const double *a = mesh->coords + (size_t)face[0] * dim,
                 *b = mesh->coords + (size_t)face[1] * dim;
    if (dim == 2) {
      sum += hypot(b[0] - a[0], b[1] - a[1]);
    } else {
      const double *c = mesh->coords + (size_t)face[2] * dim;
      double u[3], v[3];
      for (int d = 0; d < 3; d++) {
        u[d] = b[d] - a[d];
        v[d] = c[d] - a[d];
      }
      double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                     u[0] * v[1] - u[1] * v[0]};
      sum += sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    }
  }
  return sum;
}

static size_t count_material(const clmg_mesh *mesh, int32_t material) {
  size_t count = 0;
  for (size_t k = 0; k < mesh->num_cells; k++)
    count += clmg_mesh_cell_material(mesh, k) == material;
  return count;
}

/* The 2D meshes of clmg_mesh_circle cut into triangles along (c0, c3): in
 * 2D any cut of the quadrilaterals conforms; the shape stays. */
static void circle_triangles(clmg_mesh *out) {
  clmg_error error;
  clmg_mesh quads;
  CHECK_OK(error, clmg_mesh_circle(&quads, &error));
  int32_t *cells = malloc(quads.num_cells * 2 * 3 * sizeof *cells);
  assert_non_null(cells);
  for (size_t k = 0; k < quads.num_cells; k++) {
    const int32_t *q = quads.cells + 4 * k;
    const int32_t pieces[6] = {q[0], q[1], q[3], q[0], q[3], q[2]};
    memcpy(cells + 6 * k, pieces, sizeof pieces);
  }
  free(quads.cells);
  quads.cells = cells;
  quads.num_cells *= 2;
  quads.cell_type = CLMG_CELL_SIMPLEX;
  CHECK_OK(error, clmg_mesh_check(&quads, &error));
  *out = quads;
}

/* ---- generators ---- */

static void test_regular_counts(void **state) {
  (void)state;
  clmg_error error;
  for (int level = 0; level <= 2; level++) {
    clmg_mesh mesh;
    CHECK_OK(error, clmg_mesh_regular_tetrahedra(level, &mesh, &error));
    size_t side = (size_t)8 << level;
    assert_int_equal(mesh.dim, 3);
    assert_int_equal(mesh.cell_type, CLMG_CELL_SIMPLEX);
    assert_int_equal(mesh.num_vertices, (side + 1) * (side + 1) * (side + 1));
    assert_int_equal(mesh.num_cells, (size_t)3072 << (3 * level));
    assert_int_equal(mesh.num_boundary_faces, 6 * 2 * side * side);
    CHECK_NEAR(total_det(&mesh) / 6.0, 64.0, 0.0); /* dyadic coordinates: exact */
    CHECK_NEAR(boundary_measure(&mesh, 1) / 2.0, 96.0, 1e-12);
    if (level == 0) {
      assert_int_equal(mesh.num_vertices, 729);
      assert_int_equal(mesh.num_cells, 3072);
    }
    CHECK_OK(error, clmg_mesh_check(&mesh, &error));
    clmg_mesh_free(&mesh);
  }
  /* Level 3, as in Fu et al. 2014: built when it takes a few seconds
   * (Release); CLMG_TEST_SKIP_LARGE=1 skips it. */
  const char *skip = getenv("CLMG_TEST_SKIP_LARGE");
  if (skip && strcmp(skip, "1") == 0)
    return;
  clock_t start = clock();
  clmg_mesh mesh;
  CHECK_OK(error, clmg_mesh_regular_tetrahedra(3, &mesh, &error));
  assert_int_equal(mesh.num_vertices, 274625);
  assert_int_equal(mesh.num_cells, 1572864);
  print_message("Regular level 3: %.2f s\n", (double)(clock() - start) / CLOCKS_PER_SEC);
  clmg_mesh_free(&mesh);

  assert_int_equal(clmg_mesh_regular_tetrahedra(6, &mesh, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "expected 0 to 5");
}

static void test_box_simplices(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++) {
    clmg_mesh mesh;
    const int n = 4;
    CHECK_OK(error, clmg_mesh_box_simplices(dim, n, 0.0, 1, &mesh, &error));
    assert_int_equal(mesh.cell_type, CLMG_CELL_SIMPLEX);
    assert_int_equal(mesh.num_cells, dim == 2 ? 2 * 16 : 6 * 64);
    assert_int_equal(mesh.num_vertices, dim == 2 ? 25 : 125);
    assert_null(mesh.cell_material);
    CHECK_NEAR(total_det(&mesh), dim == 2 ? 2.0 : 6.0, 1e-14);
    clmg_mesh_free(&mesh);
    /* distorted: still positive, still the unit square or cube */
    CHECK_OK(error, clmg_mesh_box_simplices(dim, n, 0.2, 7, &mesh, &error));
    CHECK_NEAR(total_det(&mesh), dim == 2 ? 2.0 : 6.0, 1e-13);
    CHECK_OK(error, clmg_mesh_check(&mesh, &error));
    clmg_mesh_free(&mesh);
  }
}

static void test_blobs(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++) {
    clmg_mesh a, b;
    CHECK_OK(error, clmg_mesh_blobs(dim, 1, &a, &error));
    CHECK_OK(error, clmg_mesh_blobs(dim, 1, &b, &error));
    assert_non_null(a.cell_material);
    size_t inside = count_material(&a, 2), outside = count_material(&a, 1);
    assert_true(inside > 0);
    assert_true(outside > inside);
    assert_int_equal(inside + outside, a.num_cells);
    /* deterministic */
    assert_memory_equal(a.cell_material, b.cell_material, a.num_cells * sizeof *a.cell_material);
    /* the inclusions' share approaches their area or volume */
    double expected = 0.0;
    const double radii[3] = {0.2, 0.18, 0.15};
    for (int s = 0; s < 3; s++)
      expected += dim == 2 ? PI * radii[s] * radii[s] : 4.0 / 3.0 * PI * pow(radii[s], 3);
    double share = (double)inside / (double)a.num_cells;
    if (!(fabs(share - expected) < 0.5 * expected))
      fail_msg("%dD blobs: material 2 covers %g, the balls %g", dim, share, expected);
    CHECK_OK(error, clmg_mesh_check(&a, &error));
    clmg_mesh_free(&a);
    clmg_mesh_free(&b);
  }
  clmg_mesh mesh;
  assert_int_equal(clmg_mesh_blobs(4, 0, &mesh, &error), CLMG_ERROR_INVALID_ARGUMENT);
}

/* ---- refinement ---- */

/* Checks fine = refine(coarse) for simplices: counts, the vertex order,
 * child volumes (each exactly 1/2^dim of its parent's without curved
 * boundaries), positivity, conformity (clmg_mesh_check), materials and
 * boundary tags. */
static void check_refinement(const clmg_mesh *coarse, const clmg_mesh *fine, int curved) {
  clmg_error error;
  const size_t dim = (size_t)coarse->dim, children = (size_t)1 << dim;
  CHECK_OK(error, clmg_mesh_check(fine, &error));
  assert_int_equal(fine->cell_type, CLMG_CELL_SIMPLEX);
  assert_int_equal(fine->num_cells, coarse->num_cells * children);
  assert_int_equal(fine->num_boundary_faces, coarse->num_boundary_faces * children / 2);
  assert_memory_equal(fine->coords, coarse->coords, coarse->num_vertices * dim * sizeof(double));
  for (size_t k = 0; k < coarse->num_cells; k++) {
    double parent = simplex_det(coarse, k), sum = 0.0;
    for (size_t c = 0; c < children; c++) {
      size_t child = k * children + c;
      double det = simplex_det(fine, child);
      assert_true(det > 0.0);
      if (!curved) /* red refinement: all children alike in volume */
        CHECK_NEAR(det, parent / (double)children, 1e-12 * fabs(parent));
      sum += det;
      assert_int_equal(clmg_mesh_cell_material(fine, child), clmg_mesh_cell_material(coarse, k));
      /* corner child i keeps vertex i */
      if (c <= dim)
        assert_int_equal(fine->cells[child * (dim + 1) + c], coarse->cells[k * (dim + 1) + c]);
    }
    if (!curved)
      CHECK_NEAR(sum, parent, 1e-12 * fabs(parent));
  }
  for (size_t f = 0; f < fine->num_boundary_faces; f++)
    assert_int_equal(fine->boundary_face_tag[f], coarse->boundary_face_tag[f / (children / 2)]);
  if (!curved) {
    CHECK_NEAR(total_det(fine), total_det(coarse), 1e-12 * total_det(coarse));
    CHECK_NEAR(boundary_measure(fine, 0), boundary_measure(coarse, 0),
               1e-12 * boundary_measure(coarse, 0));
  }
}

static void test_refine(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh meshes[4];
  CHECK_OK(error, clmg_mesh_box_simplices(2, 3, 0.2, 11, &meshes[0], &error));
  CHECK_OK(error, clmg_mesh_box_simplices(3, 2, 0.15, 5, &meshes[1], &error));
  CHECK_OK(error, clmg_mesh_blobs(3, 0, &meshes[2], &error));
  CHECK_OK(error, clmg_mesh_blobs(2, 0, &meshes[3], &error));
  for (int m = 0; m < 4; m++) {
    clmg_mesh fine, finer;
    CHECK_OK(error, clmg_mesh_refine(&meshes[m], &fine, &error));
    check_refinement(&meshes[m], &fine, 0);
    CHECK_OK(error, clmg_mesh_refine(&fine, &finer, &error));
    check_refinement(&fine, &finer, 0);
    /* every material keeps its volume */
    for (int32_t material = 1; material <= 2; material++) {
      double coarse_volume = 0.0, fine_volume = 0.0;
      for (size_t k = 0; k < meshes[m].num_cells; k++)
        if (clmg_mesh_cell_material(&meshes[m], k) == material)
          coarse_volume += simplex_det(&meshes[m], k);
      for (size_t k = 0; k < finer.num_cells; k++)
        if (clmg_mesh_cell_material(&finer, k) == material)
          fine_volume += simplex_det(&finer, k);
      CHECK_NEAR(fine_volume, coarse_volume, 1e-12 * (1.0 + coarse_volume));
    }
    clmg_mesh_free(&fine);
    clmg_mesh_free(&finer);
    clmg_mesh_free(&meshes[m]);
  }
}

/* New vertices on the circle of CIRCLE (tag 2) land on it. */
static void test_refine_projection(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh;
  circle_triangles(&mesh);
  for (int level = 0; level < 3; level++) {
    clmg_mesh fine;
    CHECK_OK(error, clmg_mesh_refine(&mesh, &fine, &error));
    check_refinement(&mesh, &fine, 1);
    clmg_mesh_free(&mesh);
    mesh = fine;
  }
  size_t on_circle = 0;
  for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
    if (mesh.boundary_face_tag[f] != 2)
      continue;
    for (int m = 0; m < 2; m++) {
      const double *x = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f + (size_t)m];
      CHECK_NEAR(hypot(x[0], x[1]), 0.5, 1e-14);
      on_circle++;
    }
  }
  assert_int_equal(on_circle, 2 * 8 * 8);
  /* the area approaches 4 - pi / 4 */
  CHECK_NEAR(total_det(&mesh) / 2.0, 4.0 - PI / 4.0, 2e-3);
  clmg_mesh_free(&mesh);
}

/* ---- nodes ---- */

static void test_lagrange_nodes(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh;
  CHECK_OK(error, clmg_mesh_box_simplices(3, 2, 0.0, 1, &mesh, &error));
  int32_t *nodes, *tags;
  double *coords;
  size_t count;
  CHECK_OK(error, clmg_mesh_lagrange_nodes(&mesh, 1, &nodes, &count, &coords, &tags, &error));
  assert_int_equal(count, mesh.num_vertices);
  assert_memory_equal(nodes, mesh.cells, mesh.num_cells * 4 * sizeof *nodes);
  size_t tagged = 0;
  for (size_t v = 0; v < count; v++)
    tagged += tags[v] == 1;
  assert_int_equal(tagged, 27 - 1); /* all but the centre */
  free(nodes);
  free(coords);
  free(tags);
  /* degree 2: vertices then edges: 3 axes * 2 * 3 * 3 + 3 * 2 * 2 * 3
   * (face diagonals) + 8 (body diagonals) = 54 + 36 + 8 edges */
  CHECK_OK(error, clmg_mesh_lagrange_nodes(&mesh, 2, &nodes, &count, &coords, &tags, &error));
  assert_int_equal(count, 27 + 98);
  for (size_t k = 0; k < mesh.num_cells; k++) {
    static const int edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
    for (int e = 0; e < 6; e++) {
      const double *x = coords + 3 * (size_t)nodes[10 * k + 4 + (size_t)e];
      const double *a = mesh.coords + 3 * (size_t)mesh.cells[4 * k + (size_t)edges[e][0]];
      const double *b = mesh.coords + 3 * (size_t)mesh.cells[4 * k + (size_t)edges[e][1]];
      for (int d = 0; d < 3; d++)
        CHECK_NEAR(x[d], 0.5 * (a[d] + b[d]), 0.0);
    }
  }
  /* boundary nodes: those on the faces of the cube */
  for (size_t v = 0; v < count; v++) {
    const double *x = coords + 3 * v;
    int on = 0;
    for (int d = 0; d < 3; d++)
      on |= x[d] == 0.0 || x[d] == 1.0;
    assert_int_equal(tags[v], on ? 1 : 0);
  }
  free(nodes);
  free(coords);
  free(tags);
  clmg_mesh_free(&mesh);
}

/* ---- validation ---- */

static void expect_invalid(const clmg_mesh *mesh, const char *part1, const char *part2) {
  clmg_error error;
  assert_int_equal(clmg_mesh_check(mesh, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, part1);
  if (part2)
    CHECK_CONTAINS(error.message, part2);
}

static void copy_or_fail(const clmg_mesh *in, clmg_mesh *out) {
  clmg_error error;
  CHECK_OK(error, clmg_mesh_copy(in, out, &error));
}

static void test_check_errors(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh good, bad;
  CHECK_OK(error, clmg_mesh_blobs(3, 0, &good, &error));

  copy_or_fail(&good, &bad); /* two vertices swapped: inverted */
  int32_t swap = bad.cells[4 * 17 + 1];
  bad.cells[4 * 17 + 1] = bad.cells[4 * 17 + 2];
  bad.cells[4 * 17 + 2] = swap;
  expect_invalid(&bad, "cell 17 is inverted (negative volume", "det[v1 - v0");
  clmg_mesh fine;
  assert_int_equal(clmg_mesh_refine(&bad, &fine, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "cell 17 is inverted");
  clmg_mesh_free(&bad);

  copy_or_fail(&good, &bad); /* flat: a vertex moved into the plane of the others */
  const int32_t *cell = bad.cells + 4 * 9;
  for (int d = 0; d < 3; d++)
    bad.coords[3 * (size_t)cell[3] + (size_t)d] = (bad.coords[3 * (size_t)cell[0] + (size_t)d] +
                                                   bad.coords[3 * (size_t)cell[1] + (size_t)d]) /
                                                  2.0;
  assert_int_equal(clmg_mesh_check(&bad, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "is degenerate");
  clmg_mesh_free(&bad);

  copy_or_fail(&good, &bad);
  bad.cell_material[5] = 0;
  expect_invalid(&bad, "cell 5 has material 0", "expected >= 1");
  clmg_mesh_free(&bad);

  copy_or_fail(&good, &bad);
  bad.num_boundary_faces--;
  expect_invalid(&bad, "not among the boundary faces", NULL);
  bad.num_boundary_faces++;
  /* a boundary face that is an interior face: two faces of cell 0 */
  memcpy(bad.boundary_faces + 3 * 2, bad.cells + 1, 3 * sizeof(int32_t));
  memcpy(bad.boundary_faces + 3 * 3, bad.cells, 3 * sizeof(int32_t));
  assert_int_equal(clmg_mesh_check(&bad, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_CONTAINS(error.message, "boundary face 2");
  clmg_mesh_free(&bad);

  copy_or_fail(&good, &bad); /* three vertices of no common cell */
  bad.boundary_faces[3 * 4 + 2] = (int32_t)(bad.num_vertices - 1);
  expect_invalid(&bad, "boundary face 4", "not a face of any cell");
  clmg_mesh_free(&bad);

  copy_or_fail(&good, &bad);
  bad.cell_type = (clmg_cell_type)7;
  expect_invalid(&bad, "cell type 7", NULL);
  clmg_mesh_free(&bad);
  clmg_mesh_free(&good);

  /* 2D: a triangle listed clockwise */
  CHECK_OK(error, clmg_mesh_box_simplices(2, 3, 0.0, 1, &good, &error));
  copy_or_fail(&good, &bad);
  swap = bad.cells[3 * 4];
  bad.cells[3 * 4] = bad.cells[3 * 4 + 1];
  bad.cells[3 * 4 + 1] = swap;
  expect_invalid(&bad, "cell 4 is inverted (negative area", NULL);
  clmg_mesh_free(&bad);
  clmg_mesh_free(&good);
}

/* ---- copy ---- */

static void test_copy(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh original, copy;
  circle_triangles(&original);
  original.cell_material = malloc(original.num_cells * sizeof *original.cell_material);
  assert_non_null(original.cell_material);
  for (size_t k = 0; k < original.num_cells; k++)
    original.cell_material[k] = (int32_t)(1 + k % 3);
  CHECK_OK(error, clmg_mesh_copy(&original, &copy, &error));
  assert_int_equal(copy.cell_type, CLMG_CELL_SIMPLEX);
  assert_int_equal(copy.num_shapes, 1);
  assert_ptr_not_equal(copy.coords, original.coords);
  assert_ptr_not_equal(copy.cell_material, original.cell_material);
  assert_ptr_not_equal(copy.shapes, original.shapes);
  assert_memory_equal(copy.cells, original.cells, original.num_cells * 3 * sizeof(int32_t));
  copy.coords[0] += 1.0;
  copy.cells[0] = copy.cells[1];
  copy.boundary_face_tag[0] = 9;
  copy.cell_material[0] = 5;
  copy.shapes[0].radius = 2.0;
  assert_int_not_equal(original.cells[0], original.cells[1]);
  assert_int_not_equal(original.boundary_face_tag[0], 9);
  assert_int_equal(original.cell_material[0], 1);
  CHECK_NEAR(original.shapes[0].radius, 0.5, 0.0);
  CHECK_OK(error, clmg_mesh_check(&original, &error));
  clmg_mesh_free(&copy);
  clmg_mesh_free(&original);

  /* NULL materials stay NULL; a copy onto itself is refused */
  CHECK_OK(error, clmg_mesh_box(2, 2, 0.0, 1, &original, &error));
  CHECK_OK(error, clmg_mesh_copy(&original, &copy, &error));
  assert_null(copy.cell_material);
  assert_null(copy.shapes);
  clmg_mesh_free(&copy);
  assert_int_equal(clmg_mesh_copy(&original, &original, &error), CLMG_ERROR_INVALID_ARGUMENT);
  CHECK_OK(error, clmg_mesh_check(&original, &error));
  assert_int_equal(clmg_mesh_copy(NULL, &copy, &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_null(copy.coords);
  clmg_mesh_free(&original);
}

/* ---- the Q1/Q2 functions refuse simplices ---- */

static void test_fe_refuses_simplices(void **state) {
  (void)state;
  clmg_error error;
  for (int dim = 2; dim <= 3; dim++) {
    const char *expected = dim == 2 ? "needs quadrilaterals or hexahedra; this mesh has triangles"
                                    : "needs quadrilaterals or hexahedra; this mesh has tetrahedra";
    clmg_mesh mesh;
    CHECK_OK(error, clmg_mesh_box_simplices(dim, 2, 0.0, 1, &mesh, &error));
    clmg_fe_space space;
    assert_int_equal(clmg_fe_space_create(&mesh, 1, &space, &error), CLMG_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(error.message, expected);
    clmg_fe_hierarchy hierarchy;
    clmg_poisson_problem problem = {0};
    assert_int_equal(
        clmg_fe_poisson_hierarchy(&mesh, 2, 1, &problem, CLMG_NUMBERING_2LV, 0, &hierarchy, &error),
        CLMG_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(error.message, expected);
    /* a space made on a tensor mesh whose mesh becomes simplicial */
    clmg_mesh quads;
    CHECK_OK(error, clmg_mesh_box(dim, 2, 0.0, 1, &quads, &error));
    CHECK_OK(error, clmg_fe_space_create(&quads, 1, &space, &error));
    quads.cell_type = CLMG_CELL_SIMPLEX;
    clmg_csr a = {0};
    assert_int_equal(clmg_fe_assemble_poisson(&space, &problem, &a, NULL, NULL, &error),
                     CLMG_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(error.message, "needs quadrilaterals or hexahedra");
    quads.cell_type = CLMG_CELL_TENSOR;
    clmg_fe_space_free(&space);
    clmg_mesh_free(&quads);
    clmg_mesh_free(&mesh);
  }
}

int main(void) {
  rng_seed(0x73696d70u);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_regular_counts),
      cmocka_unit_test(test_box_simplices),
      cmocka_unit_test(test_blobs),
      cmocka_unit_test(test_refine),
      cmocka_unit_test(test_refine_projection),
      cmocka_unit_test(test_lagrange_nodes),
      cmocka_unit_test(test_check_errors),
      cmocka_unit_test(test_copy),
      cmocka_unit_test(test_fe_refuses_simplices),
  };
  return cmocka_run_group_tests_name("simplex_mesh", tests, NULL, NULL);
}
