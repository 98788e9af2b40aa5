/* Tests of the flow benchmarks' meshes and quantities of interest
 * (include/clmg/flow.h): the DFG channel (valid on 3 refinements, area
 * converging at second order, cylinder vertices on the circle, smallest
 * angles), the cavity and the canopy (counts, areas, tags on the right
 * edges), the inflow profiles; drag and lift by the volume integral
 * against hand-computed values on the cavity (the lid as the body), the
 * pressure force of a linear pressure on the DFG cylinder converging to
 * -pi r^2 (1, 0), and the sign of the drag of a Stokes flow past the
 * cylinder; point values of pressure and velocity and cell velocities of
 * interpolated linear fields. Needs no OpenCL device. */
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

#define PI 3.14159265358979323846

/* ---- helpers ---- */

static const double *vertex(const clmg_mesh *mesh, int32_t v) {
  return mesh->coords + 2 * (size_t)v;
}

static double total_area(const clmg_mesh *mesh) {
  double sum = 0.0;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const double *a = vertex(mesh, mesh->cells[3 * k]), *b = vertex(mesh, mesh->cells[3 * k + 1]),
                 *c = vertex(mesh, mesh->cells[3 * k + 2]);
    sum += 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
  }
  return sum;
}

/* The smallest angle (degrees) of the mesh's triangles. */
static double smallest_angle(const clmg_mesh *mesh) {
  double smallest = 180.0;
  for (size_t k = 0; k < mesh->num_cells; k++)
    for (int i = 0; i < 3; i++) {
      const double *o = vertex(mesh, mesh->cells[3 * k + (size_t)i]);
      const double *u = vertex(mesh, mesh->cells[3 * k + (size_t)(i + 1) % 3]);
      const double *w = vertex(mesh, mesh->cells[3 * k + (size_t)(i + 2) % 3]);
      double ux = u[0] - o[0], uy = u[1] - o[1], wx = w[0] - o[0], wy = w[1] - o[1];
      double angle = atan2(fabs(ux * wy - uy * wx), ux * wx + uy * wy) * 180.0 / PI;
      smallest = fmin(smallest, angle);
    }
  return smallest;
}

/* Sum of the lengths of the boundary edges of tag `tag`. */
static double tag_length(const clmg_mesh *mesh, int32_t tag) {
  double sum = 0.0;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++)
    if (mesh->boundary_face_tag[f] == tag) {
      const double *a = vertex(mesh, mesh->boundary_faces[2 * f]);
      const double *b = vertex(mesh, mesh->boundary_faces[2 * f + 1]);
      sum += hypot(b[0] - a[0], b[1] - a[1]);
    }
  return sum;
}

static int has_vertex(const clmg_mesh *mesh, double x, double y) {
  for (size_t v = 0; v < mesh->num_vertices; v++)
    if (mesh->coords[2 * v] == x && mesh->coords[2 * v + 1] == y)
      return 1;
  return 0;
}

/* ---- DFG channel ---- */

/* Every boundary edge of the DFG channel lies where its tag says. */
static void check_dfg_tags(const clmg_mesh *mesh) {
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const double *a = vertex(mesh, mesh->boundary_faces[2 * f]);
    const double *b = vertex(mesh, mesh->boundary_faces[2 * f + 1]);
    int32_t tag = mesh->boundary_face_tag[f];
    int ok = 0;
    switch (tag) {
    case CLMG_DFG_INFLOW:
      ok = a[0] == 0.0 && b[0] == 0.0;
      break;
    case CLMG_DFG_OUTFLOW:
      ok = a[0] == 2.2 && b[0] == 2.2;
      break;
    case CLMG_DFG_WALLS:
      ok = (a[1] == 0.0 && b[1] == 0.0) || (a[1] == 0.41 && b[1] == 0.41);
      break;
    case CLMG_DFG_CYLINDER:
      ok = fabs(hypot(a[0] - 0.2, a[1] - 0.2) - 0.05) <= 1e-12 &&
           fabs(hypot(b[0] - 0.2, b[1] - 0.2) - 0.05) <= 1e-12;
      break;
    default:
      break;
    }
    if (!ok)
      fail_msg("boundary edge %zu, (%.17g, %.17g)-(%.17g, %.17g), has tag %d but does not lie "
               "there",
               f, a[0], a[1], b[0], b[1], (int)tag);
  }
}

static void test_dfg_channel(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = {0};
  CHECK_OK(error, clmg_mesh_dfg_channel(&mesh, &error));
  assert_int_equal(mesh.dim, 2);
  assert_int_equal(mesh.cell_type, CLMG_CELL_SIMPLEX);
  assert_true(mesh.num_cells >= 100 && mesh.num_cells <= 400);
  assert_int_equal(mesh.num_shapes, 1);
  assert_int_equal(mesh.shapes[0].tag, CLMG_DFG_CYLINDER);
  assert_int_equal(mesh.shapes[0].kind, CLMG_SHAPE_CIRCLE);
  CHECK_NEAR(mesh.shapes[0].center[0], 0.2, 0.0);
  CHECK_NEAR(mesh.shapes[0].center[1], 0.2, 0.0);
  CHECK_NEAR(mesh.shapes[0].radius, 0.05, 0.0);
  /* the DFG pressure points are vertices, exactly */
  assert_true(has_vertex(&mesh, 0.15, 0.2));
  assert_true(has_vertex(&mesh, 0.25, 0.2));
  const double exact_area = 2.2 * 0.41 - PI * 0.05 * 0.05;
  double previous_error = 0.0;
  print_message("DFG channel: %zu triangles, %zu vertices\n", mesh.num_cells, mesh.num_vertices);
  for (int level = 0; level <= 3; level++) {
    CHECK_OK(error, clmg_mesh_check(&mesh, &error));
    check_dfg_tags(&mesh);
    /* every part has its full length (the cylinder's polygon converges) */
    CHECK_NEAR(tag_length(&mesh, CLMG_DFG_INFLOW), 0.41, 1e-12);
    CHECK_NEAR(tag_length(&mesh, CLMG_DFG_OUTFLOW), 0.41, 1e-12);
    CHECK_NEAR(tag_length(&mesh, CLMG_DFG_WALLS), 4.4, 1e-12);
    CHECK_NEAR(tag_length(&mesh, CLMG_DFG_CYLINDER), 2.0 * PI * 0.05, 3e-3 / (1 << 2 * level));
    /* the inscribed polygon leaves the domain slightly too large, by an
     * error that falls by 4 per level */
    double area_error = total_area(&mesh) - exact_area;
    double angle = smallest_angle(&mesh);
    print_message("  level %d: %7zu triangles, area error %.3e, smallest angle %.2f degrees\n",
                  level, mesh.num_cells, area_error, angle);
    assert_true(area_error > 0.0 && area_error < 3e-4);
    if (level > 0 && !(previous_error / area_error > 3.8 && previous_error / area_error < 4.2))
      fail_msg("level %d: the area error fell by %.3f, expected about 4", level,
               previous_error / area_error);
    previous_error = area_error;
    if (!(angle > 20.0))
      fail_msg("level %d: smallest angle %.2f degrees, expected > 20", level, angle);
    if (level == 3)
      break;
    clmg_mesh fine = test_refined(&mesh);
    clmg_mesh_free(&mesh);
    mesh = fine;
  }
  clmg_mesh_free(&mesh);
}

/* ---- cavity ---- */

static void test_cavity(void **state) {
  (void)state;
  clmg_error error;
  const int sizes[3] = {1, 4, 7};
  for (int s = 0; s < 3; s++) {
    const int n = sizes[s];
    clmg_mesh mesh = {0};
    CHECK_OK(error, clmg_mesh_cavity(n, &mesh, &error));
    CHECK_OK(error, clmg_mesh_check(&mesh, &error));
    assert_int_equal(mesh.cell_type, CLMG_CELL_SIMPLEX);
    assert_int_equal(mesh.num_cells, 2 * n * n);
    assert_int_equal(mesh.num_vertices, (n + 1) * (n + 1));
    assert_int_equal(mesh.num_boundary_faces, 4 * n);
    CHECK_NEAR(total_area(&mesh), 1.0, 1e-13);
    size_t lid = 0;
    for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
      const double *a = vertex(&mesh, mesh.boundary_faces[2 * f]);
      const double *b = vertex(&mesh, mesh.boundary_faces[2 * f + 1]);
      int on_lid = a[1] == 1.0 && b[1] == 1.0;
      assert_int_equal(mesh.boundary_face_tag[f], on_lid ? CLMG_CAVITY_LID : CLMG_CAVITY_WALLS);
      lid += (size_t)on_lid;
    }
    assert_int_equal(lid, n);
    CHECK_NEAR(tag_length(&mesh, CLMG_CAVITY_LID), 1.0, 1e-14);
    CHECK_NEAR(tag_length(&mesh, CLMG_CAVITY_WALLS), 3.0, 1e-14);
    CHECK_NEAR(smallest_angle(&mesh), 45.0, 1e-9);
    clmg_mesh_free(&mesh);
  }
  clmg_mesh mesh = {0};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_mesh_cavity(0, &mesh, &error));
  CHECK_CONTAINS(error.message, "cavity with 0 squares");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_mesh_cavity(4, NULL, &error));
}

/* ---- canopy ---- */

/* Whether the segment a-b lies on the boundary of the building [x0, x0 + 1]
 * x [0, 1]. */
static int on_building(const double *a, const double *b, double x0) {
  int left = a[0] == x0 && b[0] == x0, right = a[0] == x0 + 1 && b[0] == x0 + 1;
  int roof = a[1] == 1.0 && b[1] == 1.0;
  int inside = fmin(a[0], b[0]) >= x0 && fmax(a[0], b[0]) <= x0 + 1 && fmin(a[1], b[1]) >= 0.0 &&
               fmax(a[1], b[1]) <= 1.0;
  return inside && (left || right || roof);
}

static void test_canopy(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = {0};
  CHECK_OK(error, clmg_mesh_canopy(&mesh, &error));
  for (int level = 0; level <= 2; level++) {
    CHECK_OK(error, clmg_mesh_check(&mesh, &error));
    CHECK_NEAR(total_area(&mesh), 48.0 - 2.0, 1e-12);
    for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
      const double *a = vertex(&mesh, mesh.boundary_faces[2 * f]);
      const double *b = vertex(&mesh, mesh.boundary_faces[2 * f + 1]);
      int32_t tag = mesh.boundary_face_tag[f];
      assert_true(a[0] == b[0] || a[1] == b[1]); /* axis-parallel */
      int ok = 0;
      switch (tag) {
      case CLMG_CANOPY_INFLOW:
        ok = a[0] == 0.0 && b[0] == 0.0;
        break;
      case CLMG_CANOPY_OUTFLOW:
        ok = a[0] == 12.0 && b[0] == 12.0;
        break;
      case CLMG_CANOPY_TOP:
        ok = a[1] == 4.0 && b[1] == 4.0;
        break;
      case CLMG_CANOPY_TERRAIN:
        ok = (a[1] == 0.0 && b[1] == 0.0) || on_building(a, b, 4.0) || on_building(a, b, 6.0);
        break;
      default:
        break;
      }
      if (!ok)
        fail_msg("level %d: boundary edge (%g, %g)-(%g, %g) has tag %d but does not lie there",
                 level, a[0], a[1], b[0], b[1], (int)tag);
    }
    CHECK_NEAR(tag_length(&mesh, CLMG_CANOPY_INFLOW), 4.0, 1e-12);
    CHECK_NEAR(tag_length(&mesh, CLMG_CANOPY_OUTFLOW), 4.0, 1e-12);
    CHECK_NEAR(tag_length(&mesh, CLMG_CANOPY_TOP), 12.0, 1e-12);
    /* the ground outside the buildings (10), two walls and a roof each (6) */
    CHECK_NEAR(tag_length(&mesh, CLMG_CANOPY_TERRAIN), 16.0, 1e-12);
    CHECK_NEAR(smallest_angle(&mesh), 45.0, 1e-9);
    if (level == 0) {
      assert_int_equal(mesh.num_cells, 92);
      assert_int_equal(mesh.num_vertices, 65);
    }
    clmg_mesh fine = test_refined(&mesh);
    clmg_mesh_free(&mesh);
    mesh = fine;
  }
  clmg_mesh_free(&mesh);
  /* no vertex inside a building: the point in the canyon's middle is in
   * the domain, the buildings' centres are not */
  CHECK_OK(error, clmg_mesh_canopy(&mesh, &error));
  clmg_triangle_edges edges = test_edges_of(&mesh);
  double *x = calloc(clmg_stokes_num_unknowns(&mesh, &edges), sizeof *x);
  assert_non_null(x);
  double p, canyon[2] = {5.5, 0.5}, building[2] = {4.5, 0.5};
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, edges.num_edges, canyon, &p, &error));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_pressure_at(&mesh, x, edges.num_edges, building, &p, &error));
  free(x);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

static void test_inflow_profiles(void **state) {
  (void)state;
  CHECK_NEAR(clmg_dfg_inflow_u(0.205, 0.3), 0.3, 1e-15);
  CHECK_NEAR(clmg_dfg_inflow_u(0.0, 1.5), 0.0, 0.0);
  CHECK_NEAR(clmg_dfg_inflow_u(0.41, 1.5), 0.0, 1e-15);
  CHECK_NEAR(clmg_dfg_inflow_u(0.1, 1.5), 4.0 * 1.5 * 0.1 * 0.31 / (0.41 * 0.41), 1e-15);
  /* the mean over the inflow is 2/3 u_max (Simpson's rule is exact) */
  double mean = (clmg_dfg_inflow_u(0.0, 1.5) + 4.0 * clmg_dfg_inflow_u(0.205, 1.5) +
                 clmg_dfg_inflow_u(0.41, 1.5)) /
                6.0;
  CHECK_NEAR(mean, 1.0, 1e-15);
  CHECK_NEAR(clmg_canopy_inflow_u(1.0, 2.0, 1.0, 0.25), 2.0, 1e-15);
  CHECK_NEAR(clmg_canopy_inflow_u(4.0, 2.0, 1.0, 0.5), 4.0, 1e-15);
  CHECK_NEAR(clmg_canopy_inflow_u(2.0, 1.0, 4.0, 1.0 / 7.0), pow(0.5, 1.0 / 7.0), 1e-15);
  CHECK_NEAR(clmg_canopy_inflow_u(0.0, 2.0, 1.0, 0.25), 0.0, 0.0);
  CHECK_NEAR(clmg_canopy_inflow_u(-1.0, 2.0, 1.0, 0.25), 0.0, 0.0);
  assert_true(isnan(clmg_canopy_inflow_u(1.0, 2.0, 0.0, 0.25)));
}

/* ---- drag and lift ---- */

/* u = (a + b y, c + d x), p = p0 + x (data: a, b, c, d, p0). */
static void linear_velocity(const double *x, double *u, void *data) {
  const double *k = data;
  u[0] = k[0] + k[1] * x[1];
  u[1] = k[2] + k[3] * x[0];
}

static double linear_pressure(const double *x, void *data) {
  const double *k = data;
  return k[4] + x[0];
}

/* The cavity with the lid (y = 1, outward normal (0, 1)) as the body, for
 * u = (a + b y, c + d x) and p = p0 + x interpolated (exactly, for u).
 * By hand: the P1nc function v of the lid edges is 1 on the lid's
 * midpoints and 0 at every other edge, so the integral of grad v over the
 * domain is the integral of v n over the lid, (0, 1), and
 *  - nu (grad u_x, grad v) = nu (0, b) . (0, 1) = nu b, nu (grad u_y,
 *    grad v) = nu (d, 0) . (0, 1) = 0;
 *  - (p_h, div v_d) = sum over the lid triangles of p_K (lid length) n_x
 *    = 0; (p_h, div v_l) = sum of h p_K: the lid triangle of square i
 *    (Kuhn split: (x_i, 1 - h), (x_i + h, 1), (x_i, 1)) has its centroid
 *    at x = (i + 1/3) h, so the sum is p0 + 1/2 - h/6;
 *  - u . grad u = (b (c + d x), d (a + b y)), and v is 1 only at the lid
 *    midpoints (x_i + h/2, 1) of triangles of area h^2/2: the edge-midpoint
 *    rule gives (h^2/6) sum over i, b (c + d/2) h / 6 in x and
 *    d (a + b) h / 6 in y.
 * F_D = -(nu b + b (c + d/2) h/6), F_L = p0 + 1/2 - h/6 - d (a + b) h/6. */
static void test_drag_lift_exact(void **state) {
  (void)state;
  clmg_error error;
  const double nu = 0.37;
  double k[5] = {0.3, 1.7, -0.6, 0.9, 2.5}; /* a, b, c, d, p0 */
  const double a = k[0], b = k[1], c = k[2], d = k[3], p0 = k[4];
  const int sizes[2] = {4, 5};
  for (int s = 0; s < 2; s++) {
    const int n = sizes[s];
    const double h = 1.0 / n;
    clmg_mesh mesh = {0};
    CHECK_OK(error, clmg_mesh_cavity(n, &mesh, &error));
    clmg_triangle_edges edges = test_edges_of(&mesh);
    double *x = malloc(clmg_stokes_num_unknowns(&mesh, &edges) * sizeof *x);
    assert_non_null(x);
    CHECK_OK(error, clmg_stokes_interpolate(&mesh, &edges, linear_velocity, linear_pressure, k, x,
                                            &error));
    const double force_d = -(nu * b + b * (c + 0.5 * d) * h / 6.0);
    const double force_l = p0 + 0.5 - h / 6.0 - d * (a + b) * h / 6.0;
    /* mean velocity 2 and diameter 0.5: c = 2 F / (4 * 0.5) = F */
    double cd, cl;
    CHECK_OK(error, clmg_flow_drag_lift(&mesh, &edges, x, nu, CLMG_CAVITY_LID, 2.0, 0.5, &cd, &cl,
                                        &error));
    CHECK_NEAR(cd, force_d, 1e-13);
    CHECK_NEAR(cl, force_l, 1e-13);
    /* the terms one at a time: viscosity alone (no convection: c = d = 0,
     * no pressure) */
    double shear[5] = {0.0, 1.0, 0.0, 0.0, 0.0};
    CHECK_OK(error,
             clmg_stokes_interpolate(&mesh, &edges, linear_velocity, NULL, shear, x, &error));
    CHECK_OK(error, clmg_flow_drag_lift(&mesh, &edges, x, nu, CLMG_CAVITY_LID, 1.0, 1.0, &cd, &cl,
                                        &error));
    /* u = (y, 0) below a lid: the fluid holds the lid back with the shear
     * stress nu du/dy = nu */
    CHECK_NEAR(cd, 2.0 * -nu, 1e-13);
    CHECK_NEAR(cl, 0.0, 1e-13);
    clmg_triangle_edges_free(&edges);
    clmg_mesh_free(&mesh);
    free(x);
  }
}

/* x = 0 velocity and pressure p(x) (data) on the DFG channel. */
static double pressure_x(const double *x, void *data) {
  (void)data;
  return x[0];
}

static double pressure_constant(const double *x, void *data) {
  (void)x;
  return *(const double *)data;
}

/* A pressure alone on the DFG cylinder: a constant gives no force (the
 * normals of a closed polygon sum to zero), p = x gives -integral of p n
 * over the circle = -pi r^2 (1, 0), which the volume formula with the P0
 * interpolant approaches at first order (the test function's support
 * shrinks with h). Mean velocity 1 and diameter 1: c = 2 F. */
static void test_drag_lift_pressure(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = {0};
  CHECK_OK(error, clmg_mesh_dfg_channel(&mesh, &error));
  double previous_drag_error = 0.0, previous_lift_error = 0.0;
  const double expected_drag = 2.0 * -PI * 0.05 * 0.05;
  for (int level = 0; level <= 3; level++) {
    clmg_triangle_edges edges = test_edges_of(&mesh);
    double *x = malloc(clmg_stokes_num_unknowns(&mesh, &edges) * sizeof *x);
    assert_non_null(x);
    double p0 = 3.25, cd, cl;
    CHECK_OK(error,
             clmg_stokes_interpolate(&mesh, &edges, NULL, pressure_constant, &p0, x, &error));
    CHECK_OK(error, clmg_flow_drag_lift(&mesh, &edges, x, 1e-3, CLMG_DFG_CYLINDER, 1.0, 1.0, &cd,
                                        &cl, &error));
    CHECK_NEAR(cd, 0.0, 1e-13);
    CHECK_NEAR(cl, 0.0, 1e-13);
    CHECK_OK(error, clmg_stokes_interpolate(&mesh, &edges, NULL, pressure_x, NULL, x, &error));
    CHECK_OK(error, clmg_flow_drag_lift(&mesh, &edges, x, 1e-3, CLMG_DFG_CYLINDER, 1.0, 1.0, &cd,
                                        &cl, &error));
    double drag_error = fabs(cd - expected_drag), lift_error = fabs(cl);
    print_message("  level %d: c_D %.6e (error %.3e), c_L %.3e\n", level, cd, drag_error, cl);
    if (level > 0 && !(drag_error < 0.6 * previous_drag_error))
      fail_msg("level %d: the drag error %.3e did not fall enough from %.3e", level, drag_error,
               previous_drag_error);
    if (level > 0 && !(lift_error < 0.6 * previous_lift_error || lift_error < 1e-12))
      fail_msg("level %d: the lift %.3e did not fall enough from %.3e", level, lift_error,
               previous_lift_error);
    if (!(drag_error < 0.2 * fabs(expected_drag) / (1 << level)))
      fail_msg("level %d: c_D %.6e, expected %.6e within %.0f%%", level, cd, expected_drag,
               20.0 / (1 << level));
    previous_drag_error = drag_error;
    previous_lift_error = lift_error;
    free(x);
    clmg_triangle_edges_free(&edges);
    if (level == 3)
      break;
    clmg_mesh fine = test_refined(&mesh);
    clmg_mesh_free(&mesh);
    mesh = fine;
  }
  clmg_mesh_free(&mesh);
}

/* The parabolic DFG inflow with u_max 0.3 (mean velocity 0.2), walls and
 * cylinder no-slip, do-nothing outflow. */
static void dfg_boundary_velocity(const double *x, int32_t tag, double *u, void *data) {
  (void)data;
  u[0] = tag == CLMG_DFG_INFLOW ? clmg_dfg_inflow_u(x[1], 0.3) : 0.0;
  u[1] = 0.0;
}

/* The sign convention on a real flow: the Stokes flow (no convection) of
 * the DFG channel at nu = 1e-3, solved directly on the coarse mesh, pushes
 * the cylinder downstream (c_D > 0); the lift, from the channel's slight
 * asymmetry and the mesh, is much smaller. */
static void test_drag_sign_stokes(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = {0};
  CHECK_OK(error, clmg_mesh_dfg_channel(&mesh, &error));
  clmg_triangle_edges edges = test_edges_of(&mesh);
  clmg_stokes_problem problem;
  clmg_stokes_problem_defaults(&problem);
  problem.viscosity = 1e-3;
  const int32_t dirichlet[3] = {CLMG_DFG_INFLOW, CLMG_DFG_WALLS, CLMG_DFG_CYLINDER};
  problem.dirichlet_tags = dirichlet;
  problem.num_dirichlet_tags = 3;
  problem.boundary_velocity = dfg_boundary_velocity;
  const size_t n = clmg_stokes_num_unknowns(&mesh, &edges);
  clmg_csr a = {0};
  double *x = malloc(n * sizeof *x), *dense = calloc(n * n, sizeof *dense);
  assert_non_null(x);
  assert_non_null(dense);
  CHECK_OK(error, clmg_stokes_assemble_host(&mesh, &edges, &problem, &a, x, &error));
  for (size_t i = 0; i < n; i++)
    for (int64_t j = a.row_ptr[i]; j < a.row_ptr[i + 1]; j++)
      dense[i * n + (size_t)a.col[j]] = a.val[j];
  dense_solve_in_place(dense, x, n);
  double cd, cl;
  CHECK_OK(error, clmg_flow_drag_lift(&mesh, &edges, x, 1e-3, CLMG_DFG_CYLINDER, 0.2, 0.1, &cd, &cl,
                                      &error));
  print_message("  Stokes flow at nu = 1e-3 on %zu triangles: c_D %.4f, c_L %.4f\n", mesh.num_cells,
                cd, cl);
  assert_true(cd > 0.0);
  assert_true(fabs(cl) < 0.1 * cd);
  /* the pressure is higher in front of the cylinder than behind it */
  double front[2] = {0.15, 0.2}, back[2] = {0.25, 0.2}, p_front, p_back;
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, edges.num_edges, front, &p_front, &error));
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, edges.num_edges, back, &p_back, &error));
  print_message("  pressure difference %.4f\n", p_front - p_back);
  assert_true(p_front - p_back > 0.0);
  clmg_csr_free(&a);
  free(dense);
  free(x);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

static void test_drag_lift_errors(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = {0};
  CHECK_OK(error, clmg_mesh_cavity(2, &mesh, &error));
  clmg_triangle_edges edges = test_edges_of(&mesh);
  double *x = calloc(clmg_stokes_num_unknowns(&mesh, &edges), sizeof *x);
  assert_non_null(x);
  double cd, cl;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_drag_lift(&mesh, &edges, x, 1.0, 4, 1.0, 1.0, &cd, &cl, &error));
  CHECK_CONTAINS(error.message, "body tag 4");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_drag_lift(&mesh, &edges, x, 1.0, 1, 0.0, 1.0, &cd, &cl, &error));
  CHECK_CONTAINS(error.message, "mean velocity");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_drag_lift(&mesh, &edges, x, -1.0, 1, 1.0, 1.0, &cd, &cl, &error));
  CHECK_CONTAINS(error.message, "viscosity");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_drag_lift(&mesh, &edges, NULL, 1.0, 1, 1.0, 1.0, &cd, &cl, &error));
  free(x);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* ---- point values ---- */

/* u = (1 + 2x - 3y, -0.5 + x + 4y), p = 1 + x + 2y: linear, so the P1nc
 * interpolant is u itself and the P0 one is p at the centroids. */
static void point_velocity(const double *x, double *u, void *data) {
  (void)data;
  u[0] = 1.0 + 2.0 * x[0] - 3.0 * x[1];
  u[1] = -0.5 + x[0] + 4.0 * x[1];
}

static double point_pressure(const double *x, void *data) {
  (void)data;
  return 1.0 + x[0] + 2.0 * x[1];
}

static void test_point_values(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh mesh = {0};
  CHECK_OK(error, clmg_mesh_cavity(4, &mesh, &error));
  clmg_triangle_edges edges = test_edges_of(&mesh);
  const size_t num_edges = edges.num_edges;
  double *x = malloc(clmg_stokes_num_unknowns(&mesh, &edges) * sizeof *x);
  double *cell_u = malloc(2 * mesh.num_cells * sizeof *cell_u);
  assert_non_null(x);
  assert_non_null(cell_u);
  CHECK_OK(error,
           clmg_stokes_interpolate(&mesh, &edges, point_velocity, point_pressure, NULL, x, &error));
  /* velocity: exact anywhere, inside cells, on edges, at vertices and on
   * the boundary */
  const double points[7][2] = {{0.3, 0.6},     {0.1, 0.05}, {0.5, 0.5}, {0.375, 0.25},
                               {0.625, 0.875}, {0.0, 1.0},  {1.0, 0.4}};
  for (size_t i = 0; i < 7; i++) {
    double u[2], expected[2];
    CHECK_OK(error, clmg_flow_sample_velocity(&mesh, &edges, x, points[i], u, &error));
    point_velocity(points[i], expected, NULL);
    CHECK_NEAR(u[0], expected[0], 1e-13);
    CHECK_NEAR(u[1], expected[1], 1e-13);
  }
  for (size_t t = 0; t < 20; t++) {
    double point[2] = {0.5 + 0.5 * rng_uniform(), 0.5 + 0.5 * rng_uniform()}, u[2], expected[2];
    CHECK_OK(error, clmg_flow_sample_velocity(&mesh, &edges, x, point, u, &error));
    point_velocity(point, expected, NULL);
    CHECK_NEAR(u[0], expected[0], 1e-13);
    CHECK_NEAR(u[1], expected[1], 1e-13);
  }
  /* pressure inside a cell: that cell's (centroid) value. (0.3, 0.6)
   * lies in the upper triangle of the square [0.25, 0.5] x [0.5, 0.75],
   * centroid (0.25 + h/3, 0.5 + 2h/3) */
  const double h = 0.25;
  double p;
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, num_edges, points[0], &p, &error));
  CHECK_NEAR(p, 1.0 + (0.25 + h / 3.0) + 2.0 * (0.5 + 2.0 * h / 3.0), 1e-13);
  /* on a shared edge or vertex, the mean of the cells around it: for a
   * linear p on this grid the centroids around a point average to the
   * point itself (a single cell would be off by h/3 or more) */
  for (size_t i = 2; i < 5; i++) {
    CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, num_edges, points[i], &p, &error));
    CHECK_NEAR(p, point_pressure(points[i], NULL), 1e-13);
  }
  /* the corner (0, 1) belongs to one triangle only: (0, 1 - h), (h, 1),
   * (0, 1) */
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, num_edges, points[5], &p, &error));
  CHECK_NEAR(p, 1.0 + h / 3.0 + 2.0 * (1.0 - h / 3.0), 1e-13);
  /* cell velocities: u at the centroids */
  CHECK_OK(error, clmg_flow_cell_velocity(&mesh, &edges, x, cell_u, &error));
  for (size_t k = 0; k < mesh.num_cells; k++) {
    double centroid[2] = {0.0, 0.0}, expected[2];
    for (size_t i = 0; i < 3; i++)
      for (size_t dim = 0; dim < 2; dim++)
        centroid[dim] += vertex(&mesh, mesh.cells[3 * k + i])[dim] / 3.0;
    point_velocity(centroid, expected, NULL);
    CHECK_NEAR(cell_u[2 * k], expected[0], 1e-13);
    CHECK_NEAR(cell_u[2 * k + 1], expected[1], 1e-13);
  }
  /* outside: an error naming the point */
  const double outside[2] = {1.5, 0.25};
  double u[2];
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_pressure_at(&mesh, x, num_edges, outside, &p, &error));
  CHECK_CONTAINS(error.message, "(1.5, 0.25)");
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_sample_velocity(&mesh, &edges, x, outside, u, &error));
  CHECK_CONTAINS(error.message, "(1.5, 0.25)");
  free(x);
  free(cell_u);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);

  /* the DFG cylinder is a hole; its pressure points are on its boundary */
  CHECK_OK(error, clmg_mesh_dfg_channel(&mesh, &error));
  edges = test_edges_of(&mesh);
  x = malloc(clmg_stokes_num_unknowns(&mesh, &edges) * sizeof *x);
  assert_non_null(x);
  CHECK_OK(error, clmg_stokes_interpolate(&mesh, &edges, NULL, pressure_x, NULL, x, &error));
  const double centre[2] = {0.2, 0.2}, front[2] = {0.15, 0.2}, back[2] = {0.25, 0.2};
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_flow_pressure_at(&mesh, x, edges.num_edges, centre, &p, &error));
  CHECK_CONTAINS(error.message, "(0.20000000000000001, 0.20000000000000001)");
  double p_front, p_back;
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, edges.num_edges, front, &p_front, &error));
  CHECK_OK(error, clmg_flow_pressure_at(&mesh, x, edges.num_edges, back, &p_back, &error));
  /* the cells around a cylinder point reach at most 0.05 from it */
  CHECK_NEAR(p_front, 0.15, 0.04);
  CHECK_NEAR(p_back, 0.25, 0.04);
  free(x);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* The cases of clmg flow (clmg_flow_case_*): names, defaults, scales and
 * Reynolds numbers, the boundary conditions their problem carries, and bad
 * values refused with a message. */
static void test_flow_cases(void **state) {
  (void)state;
  clmg_error error = {{0}};
  static const char *names[] = {"cavity", "dfg1", "dfg2", "dfg3", "canopy"};
  for (size_t k = 0; k < 5; k++) {
    clmg_flow_case flow;
    assert_true(clmg_flow_case_parse(names[k], &flow));
    assert_string_equal(clmg_flow_case_name(flow), names[k]);
  }
  clmg_flow_case flow = CLMG_FLOW_CAVITY;
  assert_false(clmg_flow_case_parse("dfg4", &flow));
  assert_false(clmg_flow_case_parse(NULL, &flow));
  assert_true(clmg_flow_case_steady(CLMG_FLOW_DFG1) && clmg_flow_case_steady(CLMG_FLOW_CAVITY));
  assert_false(clmg_flow_case_steady(CLMG_FLOW_DFG2) || clmg_flow_case_steady(CLMG_FLOW_CANOPY) ||
               clmg_flow_case_steady(CLMG_FLOW_DFG3));
  assert_true(clmg_flow_case_has_quantities(CLMG_FLOW_DFG3));
  /* the cases' defaults: DFG 2D-2 and 2D-3 Crank-Nicolson with the weighted
   * upwind (0.1); 2D-3 its inflow sin(pi t / 8) over t in [0, 8] */
  clmg_flow_options defaults;
  clmg_flow_options_defaults(&defaults);
  defaults.time_step = 0.01;
  clmg_flow_case_defaults(CLMG_FLOW_DFG3, &defaults);
  assert_false(defaults.steady);
  assert_int_equal(defaults.time_scheme, CLMG_FLOW_CRANK_NICOLSON);
  assert_int_equal(defaults.upwind, CLMG_STOKES_UPWIND_WEIGHTED);
  CHECK_NEAR(defaults.upwind_parameter, 0.1, 0.0);
  assert_int_equal(defaults.steps, 800);
  assert_non_null(defaults.boundary_scale);
  CHECK_NEAR(defaults.boundary_scale(4.0, defaults.boundary_scale_data), 1.0, 1e-15);
  CHECK_NEAR(defaults.boundary_scale(2.0, defaults.boundary_scale_data), sqrt(0.5), 1e-15);
  assert_int_equal(clmg_flow_case_steps(CLMG_FLOW_DFG3, 0.003), 2667);
  assert_int_equal(clmg_flow_case_steps(CLMG_FLOW_DFG2, 0.003), 100);
  clmg_flow_options_defaults(&defaults);
  clmg_flow_case_defaults(CLMG_FLOW_CAVITY, &defaults);
  assert_true(defaults.steady);
  assert_int_equal(defaults.time_scheme, CLMG_FLOW_BACKWARD_EULER);
  assert_int_equal(defaults.upwind, CLMG_STOKES_UPWIND_SAMARSKIJ);
  assert_null(defaults.boundary_scale);
  CHECK_NEAR(clmg_flow_case_reynolds(CLMG_FLOW_DFG1), 20.0, 0.0);
  CHECK_NEAR(clmg_flow_case_reynolds(CLMG_FLOW_DFG2), 100.0, 0.0);

  /* DFG 2D-1: nu = 1e-3 at Re 20 (mean velocity 0.2, diameter 0.1); the
   * inflow's peak 0.3 at mid-height, no slip on walls and cylinder */
  clmg_flow_case_setup setup;
  CHECK_OK(error, clmg_flow_case_create(CLMG_FLOW_DFG1, 20.0, NULL, 0, 0, &setup, &error));
  CHECK_NEAR(setup.viscosity, 1e-3, 1e-15);
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  CHECK_NEAR(problem.viscosity, 1e-3, 1e-15);
  assert_int_equal(problem.num_dirichlet_tags, 3);
  double u[2], mid[2] = {0.0, 0.205};
  problem.boundary_velocity(mid, CLMG_DFG_INFLOW, u, problem.boundary_data);
  CHECK_NEAR(u[0], 0.3, 1e-12);
  CHECK_NEAR(u[1], 0.0, 0.0);
  problem.boundary_velocity(mid, CLMG_DFG_CYLINDER, u, problem.boundary_data);
  CHECK_NEAR(u[0], 0.0, 0.0);
  /* the cavity: lid speed 1, every wall Dirichlet (no tags: the default) */
  CHECK_OK(error, clmg_flow_case_create(CLMG_FLOW_CAVITY, 400.0, NULL, 0, 0, &setup, &error));
  CHECK_NEAR(setup.viscosity, 1.0 / 400.0, 1e-15);
  clmg_flow_case_problem(&setup, &problem);
  assert_int_equal(problem.num_dirichlet_tags, 0);
  double top[2] = {0.5, 1.0};
  problem.boundary_velocity(top, CLMG_CAVITY_LID, u, problem.boundary_data);
  CHECK_NEAR(u[0], 1.0, 0.0);
  /* the canopy: free slip on top */
  CHECK_OK(error, clmg_flow_case_create(CLMG_FLOW_CANOPY, 100.0, NULL, 0, 0, &setup, &error));
  clmg_flow_case_problem(&setup, &problem);
  assert_int_equal(problem.num_slip_tags, 1);
  assert_int_equal(problem.slip_tags[0], CLMG_CANOPY_TOP);
  /* a Gmsh case: its walls and inflow */
  const int32_t walls[2] = {3, 4};
  CHECK_OK(error, clmg_flow_case_create(CLMG_FLOW_GMSH, 50.0, walls, 2, 7, &setup, &error));
  clmg_flow_case_problem(&setup, &problem);
  assert_int_equal(problem.num_dirichlet_tags, 3);
  assert_int_equal(problem.dirichlet_tags[2], 7);
  problem.boundary_velocity(top, 7, u, problem.boundary_data);
  CHECK_NEAR(u[0], 1.0, 0.0);
  /* refused */
  assert_int_equal(clmg_flow_case_create(CLMG_FLOW_DFG1, 0.0, NULL, 0, 0, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "Reynolds"));
  assert_int_equal(clmg_flow_case_create(CLMG_FLOW_DFG1, NAN, NULL, 0, 0, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_flow_case_create(CLMG_FLOW_GMSH, 1.0, NULL, 0, 7, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_flow_case_create((clmg_flow_case)99, 1.0, NULL, 0, 0, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_flow_case_mesh(CLMG_FLOW_GMSH, NULL, NULL, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  /* the cavity has no drag */
  clmg_mesh mesh = {0};
  clmg_triangle_edges edges = {0};
  CHECK_OK(error, clmg_flow_case_mesh(CLMG_FLOW_CAVITY, NULL, &mesh, &error));
  CHECK_OK(error, clmg_triangle_edges_create(&mesh, &edges, &error));
  double *x = calloc(clmg_stokes_num_unknowns(&mesh, &edges), sizeof *x);
  assert_non_null(x);
  double drag, lift, dp;
  CHECK_OK(error, clmg_flow_case_create(CLMG_FLOW_CAVITY, 100.0, NULL, 0, 0, &setup, &error));
  assert_int_equal(clmg_flow_case_quantities(&setup, &mesh, &edges, x, &drag, &lift, &dp, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  free(x);
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&mesh);
}

/* A channel for clmg_flow_case_create_gmsh: the unit square in 4 x 4
 * squares mapped to [0, 2] x [0.1, 0.6] and turned by angle about the
 * origin; tags 1 at x = 0 (the inflow), 2 at x = 2, 3 below, 4 above. */
static void gmsh_channel(double angle, clmg_mesh *mesh) {
  clmg_error error = {{0}};
  CHECK_OK(error, clmg_mesh_box_simplices(2, 4, 0.0, 0, mesh, &error));
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    const double *a = mesh->coords + 2 * (size_t)mesh->boundary_faces[2 * f];
    const double *b = mesh->coords + 2 * (size_t)mesh->boundary_faces[2 * f + 1];
    double mx = 0.5 * (a[0] + b[0]), my = 0.5 * (a[1] + b[1]);
    mesh->boundary_face_tag[f] =
        fabs(a[0] - b[0]) < 1e-12 ? (mx < 0.5 ? 1 : 2) : (my < 0.5 ? 3 : 4);
  }
  for (size_t v = 0; v < mesh->num_vertices; v++) {
    double x = 2.0 * mesh->coords[2 * v], y = 0.1 + 0.5 * mesh->coords[2 * v + 1];
    mesh->coords[2 * v] = cos(angle) * x - sin(angle) * y;
    mesh->coords[2 * v + 1] = sin(angle) * x + cos(angle) * y;
  }
}

static void test_gmsh_case(void **state) {
  (void)state;
  clmg_error error = {{0}};
  const double angle = PI / 6;
  clmg_mesh mesh = {0};
  gmsh_channel(angle, &mesh);
  const int32_t walls[1] = {3}, slip[1] = {4}, outflow[1] = {2};
  clmg_flow_gmsh_options o;
  clmg_flow_gmsh_options_defaults(&o);
  CHECK_NEAR(o.inflow_peak, 1.0, 0.0);
  CHECK_NEAR(o.reference_length, 1.0, 0.0);
  o.walls = walls;
  o.num_walls = 1;
  o.slip = slip;
  o.num_slip = 1;
  o.outflow = outflow;
  o.num_outflow = 1;
  o.inflow_tag = 1;
  o.inflow_profile = CLMG_FLOW_INFLOW_PARABOLIC;
  o.inflow_peak = 1.5;
  o.body_tag = 3;
  o.reference_length = 0.25;
  clmg_flow_case_setup setup;
  CHECK_OK(error, clmg_flow_case_create_gmsh(&mesh, 50.0, &o, &setup, &error));
  /* the scales: the parabola's mean 1, so nu = 1 * 0.25 / 50 */
  CHECK_NEAR(setup.mean_velocity, 1.0, 1e-15);
  CHECK_NEAR(setup.viscosity, 0.25 / 50.0, 1e-15);
  CHECK_NEAR(setup.inflow_extent, 0.5, 1e-14);
  clmg_stokes_problem problem;
  clmg_flow_case_problem(&setup, &problem);
  /* no slip on the walls and the inflow, free slip on tag 4, the outflow neither */
  assert_int_equal(problem.num_dirichlet_tags, 2);
  assert_int_equal(problem.dirichlet_tags[0], 3);
  assert_int_equal(problem.dirichlet_tags[1], 1);
  assert_int_equal(problem.num_slip_tags, 1);
  assert_int_equal(problem.slip_tags[0], 4);
  /* the profile at the inflow edges' midpoints: 4 U s (L - s) / L^2 with s
   * the distance from the inflow's end at the turned (0, 0.1), along the
   * turned x axis (the normal into the channel) */
  const double start[2] = {-sin(angle) * 0.1, cos(angle) * 0.1};
  int inflow_edges = 0;
  for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
    const double *a = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f];
    const double *b = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f + 1];
    double mid[2] = {0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])}, u[2];
    problem.boundary_velocity(mid, mesh.boundary_face_tag[f], u, problem.boundary_data);
    if (mesh.boundary_face_tag[f] != 1) {
      CHECK_NEAR(u[0], 0.0, 0.0);
      CHECK_NEAR(u[1], 0.0, 0.0);
      continue;
    }
    inflow_edges++;
    double s = hypot(mid[0] - start[0], mid[1] - start[1]);
    double speed = 4.0 * 1.5 * s * (0.5 - s) / 0.25;
    CHECK_NEAR(u[0], speed * cos(angle), 1e-13);
    CHECK_NEAR(u[1], speed * sin(angle), 1e-13);
    assert_true(speed > 0.5);
  }
  assert_int_equal(inflow_edges, 4);
  /* uniform: the peak everywhere, the mean velocity the peak */
  o.inflow_profile = CLMG_FLOW_INFLOW_UNIFORM;
  CHECK_OK(error, clmg_flow_case_create_gmsh(&mesh, 50.0, &o, &setup, &error));
  CHECK_NEAR(setup.mean_velocity, 1.5, 0.0);
  clmg_flow_case_problem(&setup, &problem);
  double u[2], point[2] = {start[0], start[1]};
  problem.boundary_velocity(point, 1, u, problem.boundary_data);
  CHECK_NEAR(u[0], 1.5 * cos(angle), 1e-14);
  CHECK_NEAR(u[1], 1.5 * sin(angle), 1e-14);

  /* the quantities: at rest, no force on the body and no pressure difference;
   * without a body, drag and lift are NaN */
  clmg_triangle_edges edges = {0};
  CHECK_OK(error, clmg_triangle_edges_create(&mesh, &edges, &error));
  double *x = calloc(clmg_stokes_num_unknowns(&mesh, &edges), sizeof *x);
  assert_non_null(x);
  double drag = 1, lift = 1, dp = 1;
  CHECK_OK(error, clmg_flow_case_quantities(&setup, &mesh, &edges, x, &drag, &lift, &dp, &error));
  CHECK_NEAR(drag, 0.0, 0.0);
  CHECK_NEAR(lift, 0.0, 0.0);
  assert_true(isnan(dp));
  assert_true(clmg_flow_case_setup_has_quantities(&setup));
  o.body_tag = 0;
  o.has_pressure_points = 1;
  /* (0.5, 0.35) and (1, 0.35) of the channel, turned */
  const double points[4] = {cos(angle) * 0.5 - sin(angle) * 0.35,
                            sin(angle) * 0.5 + cos(angle) * 0.35, cos(angle) - sin(angle) * 0.35,
                            sin(angle) + cos(angle) * 0.35};
  memcpy(o.pressure_points, points, sizeof points);
  CHECK_OK(error, clmg_flow_case_create_gmsh(&mesh, 50.0, &o, &setup, &error));
  CHECK_OK(error, clmg_flow_case_quantities(&setup, &mesh, &edges, x, &drag, &lift, &dp, &error));
  assert_true(isnan(drag) && isnan(lift));
  CHECK_NEAR(dp, 0.0, 0.0);
  o.has_pressure_points = 0;
  CHECK_OK(error, clmg_flow_case_create_gmsh(&mesh, 50.0, &o, &setup, &error));
  assert_false(clmg_flow_case_setup_has_quantities(&setup));
  assert_int_equal(clmg_flow_case_quantities(&setup, &mesh, &edges, x, &drag, &lift, &dp, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  free(x);
  clmg_triangle_edges_free(&edges);

  /* refused, naming the tag */
  clmg_flow_gmsh_options bad = o;
  bad.num_outflow = 0; /* tag 2 in no role */
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "boundary tag 2 of the mesh has no condition"));
  const int32_t absent[2] = {2, 9};
  bad = o;
  bad.outflow = absent;
  bad.num_outflow = 2;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "an outflow tag 9: no boundary edge"));
  const int32_t twice[2] = {2, 4};
  bad = o;
  bad.outflow = twice;
  bad.num_outflow = 2;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "tag 4 is both a slip and an outflow tag"));
  bad = o;
  bad.inflow_tag = 3;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "tag 3 is both a wall and the inflow tag"));
  bad = o;
  bad.body_tag = 8;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "body tag 8"));
  bad = o;
  bad.inflow_peak = -1;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  bad = o;
  bad.reference_length = NAN;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 0.0, &o, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  /* an inflow that is not one straight segment: the channel's two sides
   * as one tag (two chains, four ends); an inflow bent at its middle vertex */
  for (size_t f = 0; f < mesh.num_boundary_faces; f++)
    if (mesh.boundary_face_tag[f] == 4)
      mesh.boundary_face_tag[f] = 3;
  const int32_t inflow_wall[1] = {1};
  bad = o;
  bad.walls = inflow_wall;
  bad.slip = NULL;
  bad.num_slip = 0;
  bad.inflow_tag = 3;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &bad, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "not one chain with two ends"));
  clmg_mesh_free(&mesh);
  gmsh_channel(0.0, &mesh);
  for (size_t v = 0; v < mesh.num_vertices; v++) /* the inflow's middle vertex moved left */
    if (fabs(mesh.coords[2 * v]) < 1e-12 && fabs(mesh.coords[2 * v + 1] - 0.35) < 1e-12)
      mesh.coords[2 * v] = -0.01;
  assert_int_equal(clmg_flow_case_create_gmsh(&mesh, 50.0, &o, &setup, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "is not straight"));
  clmg_mesh_free(&mesh);
}

int main(void) {
  rng_seed(0x666c6f77u);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dfg_channel),      cmocka_unit_test(test_cavity),
      cmocka_unit_test(test_canopy),           cmocka_unit_test(test_inflow_profiles),
      cmocka_unit_test(test_drag_lift_exact),  cmocka_unit_test(test_drag_lift_pressure),
      cmocka_unit_test(test_drag_sign_stokes), cmocka_unit_test(test_drag_lift_errors),
      cmocka_unit_test(test_point_values),     cmocka_unit_test(test_flow_cases),
      cmocka_unit_test(test_gmsh_case),
  };
  return cmocka_run_group_tests_name("flow_meshes", tests, NULL, NULL);
}
