/* Coarse triangle meshes of the flow benchmarks (include/clmg/flow.h): the
 * DFG channel around a cylinder (Schaefer and Turek, "Benchmark
 * computations of laminar flow around a cylinder", 1996), the lid-driven
 * cavity and the urban canopy of Bauer, Klement, Oberhuber and Zabka,
 * "Implementation of the Vanka-type multigrid solver for the finite element
 * approximation of the Navier-Stokes equations on GPU" (2016), Fig. 1; and
 * the inflow profiles of those benchmarks.
 *
 * The channel and the canopy are built on the generators' builder
 * (lib/mesh/mesh_builder.c): vertices glued by position, quadrilaterals cut
 * into two triangles along the diagonal that keeps the larger smallest
 * angle, the boundary edges found as the edges of one triangle only and
 * tagged by where they lie; the result passes clmg_mesh_check before it is
 * handed over. Host code only. */
#include "mesh/mesh_internal.h"
#include "clmg/flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- triangles on the shared builder (lib/mesh/mesh_builder.c) ---- */

static double signed_area(const double *a, const double *b, const double *c) {
  return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

/* A triangle, listed counter-clockwise whatever the order of a, b, c. */
static void add_triangle(clmg_mesh_builder *builder, const double *a, const double *b,
                         const double *c) {
  if (signed_area(a, b, c) < 0.0) {
    const double *swap = b;
    b = c;
    c = swap;
  }
  int32_t corners[3] = {clmg_mesh_builder_add_vertex_merged(builder, a),
                        clmg_mesh_builder_add_vertex_merged(builder, b),
                        clmg_mesh_builder_add_vertex_merged(builder, c)};
  clmg_mesh_builder_add_cell(builder, corners);
}

/* The smallest angle (radians) of the triangle a, b, c. */
static double smallest_angle(const double *a, const double *b, const double *c) {
  const double *p[3] = {a, b, c};
  double smallest = PI;
  for (int i = 0; i < 3; i++) {
    const double *o = p[i], *u = p[(i + 1) % 3], *w = p[(i + 2) % 3];
    double ux = u[0] - o[0], uy = u[1] - o[1], wx = w[0] - o[0], wy = w[1] - o[1];
    smallest = fmin(smallest, fabs(atan2(ux * wy - uy * wx, ux * wx + uy * wy)));
  }
  return smallest;
}

/* The quadrilateral with corners p0, p1, p2, p3 in cyclic order (either
 * sense) as two triangles, cut along the diagonal p0-p2 unless p1-p3 gives
 * a larger smallest angle (by more than rounding: rectangles take p0-p2). */
static void add_quad(clmg_mesh_builder *builder, const double *p0, const double *p1,
                     const double *p2, const double *p3) {
  double along_02 = fmin(smallest_angle(p0, p1, p2), smallest_angle(p0, p2, p3));
  double along_13 = fmin(smallest_angle(p0, p1, p3), smallest_angle(p1, p2, p3));
  if (along_13 > along_02 + 1e-9) {
    add_triangle(builder, p0, p1, p3);
    add_triangle(builder, p1, p2, p3);
  } else {
    add_triangle(builder, p0, p1, p2);
    add_triangle(builder, p0, p2, p3);
  }
}

/* The rectangles between the vertical lines xs[0..nx] and the horizontal
 * lines ys[0..ny], each cut along its diagonal from the lower left corner. */
static void add_grid(clmg_mesh_builder *builder, const double *xs, int nx, const double *ys,
                     int ny) {
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) {
      double p0[2] = {xs[i], ys[j]}, p1[2] = {xs[i + 1], ys[j]};
      double p2[2] = {xs[i + 1], ys[j + 1]}, p3[2] = {xs[i], ys[j + 1]};
      add_quad(builder, p0, p1, p2, p3);
    }
}

/* ---- the DFG channel ---- */

#define DFG_LENGTH 2.2
#define DFG_HEIGHT 0.41
#define DFG_CENTER_X 0.2
#define DFG_CENTER_Y 0.2
#define DFG_RADIUS 0.05

static int near(double a, double b) {
  return fabs(a - b) < 1e-9;
}

static int on_cylinder(const double *x) {
  return near(hypot(x[0] - DFG_CENTER_X, x[1] - DFG_CENTER_Y), DFG_RADIUS);
}

static int32_t tag_dfg(const void *context, const double *const *ends, int count) {
  (void)context;
  (void)count;
  const double *a = ends[0], *b = ends[1];
  if (on_cylinder(a) && on_cylinder(b))
    return CLMG_DFG_CYLINDER;
  if (near(a[0], 0.0) && near(b[0], 0.0))
    return CLMG_DFG_INFLOW;
  if (near(a[0], DFG_LENGTH) && near(b[0], DFG_LENGTH))
    return CLMG_DFG_OUTFLOW;
  if ((near(a[1], 0.0) && near(b[1], 0.0)) || (near(a[1], DFG_HEIGHT) && near(b[1], DFG_HEIGHT)))
    return CLMG_DFG_WALLS;
  return 0;
}

/* Point k (0..15, counter-clockwise from angle 0) of the O-grid on the
 * circle: at k * 22.5 degrees; the four on the axes, such as the DFG
 * pressure points (0.15, 0.2) and (0.25, 0.2), are written exactly. */
static void dfg_circle_point(int k, double *x) {
  static const double on_axes[4][2] = {{0.25, 0.2}, {0.2, 0.25}, {0.15, 0.2}, {0.2, 0.15}};
  if (k % 4 == 0) {
    x[0] = on_axes[k / 4][0];
    x[1] = on_axes[k / 4][1];
    return;
  }
  x[0] = DFG_CENTER_X + DFG_RADIUS * cos(k * PI / 8.0);
  x[1] = DFG_CENTER_Y + DFG_RADIUS * sin(k * PI / 8.0);
}

/* Point k of the O-grid on the square [0.1, 0.3]^2, counter-clockwise from
 * (0.3, 0.2), 0.05 apart (k = 2, 6, 10, 14 are the corners). */
static void dfg_square_point(int k, double *x) {
  static const double corners[5][2] = {{0.3, 0.1}, {0.3, 0.3}, {0.1, 0.3}, {0.1, 0.1}, {0.3, 0.1}};
  int from_corner = (k + 2) % 16; /* steps from the corner (0.3, 0.1) */
  int side = from_corner / 4;
  double t = (from_corner % 4) / 4.0;
  for (int d = 0; d < 2; d++)
    x[d] = corners[side][d] + t * (corners[side + 1][d] - corners[side][d]);
}

clmg_status clmg_mesh_dfg_channel(clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  clmg_mesh_builder builder;
  clmg_mesh_builder_init(&builder, 2, CLMG_CELL_SIMPLEX);

  /* The O-grid: rings at the circle, 0.4 of the way to the square (so the
   * cells at the circle are about as thick as they are wide), and at the
   * square. */
  double ring[3][17][2];
  for (int k = 0; k <= 16; k++) {
    dfg_circle_point(k % 16, ring[0][k]);
    dfg_square_point(k % 16, ring[2][k]);
    for (int d = 0; d < 2; d++)
      ring[1][k][d] = ring[0][k][d] + 0.4 * (ring[2][k][d] - ring[0][k][d]);
  }
  for (int k = 0; k < 16; k++)
    for (int layer = 0; layer < 2; layer++)
      add_quad(&builder, ring[layer][k], ring[layer + 1][k], ring[layer + 1][k + 1],
               ring[layer][k + 1]);

  /* Around the square and in the wake up to x = 0.7: squares of 0.05 (the
   * rows above the square 0.055 high), 8 rows. */
  const double fine_y[9] = {0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.355, DFG_HEIGHT};
  const double left_x[3] = {0.0, 0.05, 0.1};
  const double middle_x[5] = {0.1, 0.15, 0.2, 0.25, 0.3};
  double wake_x[9];
  for (int i = 0; i <= 8; i++)
    wake_x[i] = 0.3 + 0.05 * i;
  add_grid(&builder, left_x, 2, fine_y, 8);
  add_grid(&builder, middle_x, 4, fine_y, 2);     /* below the square */
  add_grid(&builder, middle_x, 4, fine_y + 6, 2); /* above it */
  add_grid(&builder, wake_x, 8, fine_y, 8);

  /* From 8 rows to 4 in the column [0.7, 0.775]: each pair of rows on the
   * left, (y0, y1, y2), meets one row (y0, y2) on the right in three
   * triangles. */
  const double transition_left = 0.7, transition_right = 0.775;
  for (int pair = 0; pair < 4; pair++) {
    const double *y = fine_y + 2 * pair;
    double l0[2] = {transition_left, y[0]}, l1[2] = {transition_left, y[1]};
    double l2[2] = {transition_left, y[2]};
    double r0[2] = {transition_right, y[0]}, r2[2] = {transition_right, y[2]};
    add_triangle(&builder, l0, r0, l1);
    add_triangle(&builder, l1, r0, r2);
    add_triangle(&builder, l1, r2, l2);
  }

  /* To the outflow: 4 rows, 10 columns growing geometrically from 0.1 by
   * the ratio q that fills [0.775, 2.2] (found by bisection: the sum of
   * 0.1 q^i, i < 10, grows with q). */
  const double coarse_y[5] = {0.0, 0.1, 0.2, 0.3, DFG_HEIGHT};
  const double first_width = 0.1, span = DFG_LENGTH - transition_right;
  double low = 1.0, high = 2.0;
  for (int iteration = 0; iteration < 100; iteration++) {
    double q = 0.5 * (low + high), sum = 0.0, width = first_width;
    for (int i = 0; i < 10; i++, width *= q)
      sum += width;
    if (sum > span)
      high = q;
    else
      low = q;
  }
  double coarse_x[11];
  coarse_x[0] = transition_right;
  double width = first_width;
  for (int i = 1; i <= 10; i++, width *= low)
    coarse_x[i] = coarse_x[i - 1] + width;
  coarse_x[10] = DFG_LENGTH;
  add_grid(&builder, coarse_x, 10, coarse_y, 4);

  const clmg_boundary_shape cylinder = {.tag = CLMG_DFG_CYLINDER,
                                        .kind = CLMG_SHAPE_CIRCLE,
                                        .center = {DFG_CENTER_X, DFG_CENTER_Y, 0.0},
                                        .radius = DFG_RADIUS};
  return clmg_mesh_builder_finish(&builder, tag_dfg, NULL, &cylinder, 1, "DFG channel", out, error);
}

/* ---- the cavity ---- */

clmg_status clmg_mesh_cavity(int n, clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  if (n < 1 || n > 46339)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cavity with %d squares per side: expected 1 to 46339 (32-bit vertex "
                          "indices)",
                          n);
  clmg_mesh mesh = {0};
  clmg_status status = clmg_mesh_box_simplices(2, n, 0.0, 0, &mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  /* The box puts vertex i + (n + 1) j at (i w, j w), w = 1/n, which can
   * miss 1 by a rounding; i / n is exact there (and the same point
   * otherwise to rounding). */
  const size_t side = (size_t)n + 1;
  for (size_t v = 0; v < mesh.num_vertices; v++) {
    mesh.coords[2 * v] = (double)(v % side) / n;
    mesh.coords[2 * v + 1] = (double)(v / side) / n;
  }
  for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
    const double *a = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f];
    const double *b = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f + 1];
    mesh.boundary_face_tag[f] = a[1] == 1.0 && b[1] == 1.0 ? CLMG_CAVITY_LID : CLMG_CAVITY_WALLS;
  }
  *out = mesh;
  return CLMG_SUCCESS;
}

/* ---- the canopy ---- */

#define CANOPY_LENGTH 12
#define CANOPY_HEIGHT 4

/* Whether the unit square [i, i + 1] x [j, j + 1] is one of the buildings. */
static int canopy_building(int i, int j) {
  return j == 0 && (i == 4 || i == 6);
}

static int32_t tag_canopy(const void *context, const double *const *ends, int count) {
  (void)context;
  (void)count;
  const double *a = ends[0], *b = ends[1];
  if (a[0] == 0.0 && b[0] == 0.0)
    return CLMG_CANOPY_INFLOW;
  if (a[0] == CANOPY_LENGTH && b[0] == CANOPY_LENGTH)
    return CLMG_CANOPY_OUTFLOW;
  if (a[1] == CANOPY_HEIGHT && b[1] == CANOPY_HEIGHT)
    return CLMG_CANOPY_TOP;
  if (a[1] == 0.0 && b[1] == 0.0)
    return CLMG_CANOPY_TERRAIN; /* the ground */
  /* a wall or roof: the edge lies on the boundary of a building */
  double mid_x = 0.5 * (a[0] + b[0]), mid_y = 0.5 * (a[1] + b[1]);
  for (int i = 0; i < CANOPY_LENGTH; i++)
    if (canopy_building(i, 0) && mid_x >= i && mid_x <= i + 1 && mid_y >= 0.0 && mid_y <= 1.0)
      return CLMG_CANOPY_TERRAIN;
  return 0;
}

clmg_status clmg_mesh_canopy(clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  clmg_mesh_builder builder;
  clmg_mesh_builder_init(&builder, 2, CLMG_CELL_SIMPLEX);
  for (int j = 0; j < CANOPY_HEIGHT; j++)
    for (int i = 0; i < CANOPY_LENGTH; i++) {
      if (canopy_building(i, j))
        continue;
      double p0[2] = {i, j}, p1[2] = {i + 1, j}, p2[2] = {i + 1, j + 1}, p3[2] = {i, j + 1};
      add_quad(&builder, p0, p1, p2, p3);
    }
  return clmg_mesh_builder_finish(&builder, tag_canopy, NULL, NULL, 0, "canopy", out, error);
}

/* ---- inflow profiles ---- */

double clmg_dfg_inflow_u(double y, double u_max) {
  return 4.0 * u_max * y * (DFG_HEIGHT - y) / (DFG_HEIGHT * DFG_HEIGHT);
}

double clmg_canopy_inflow_u(double y, double u_ref, double y_ref, double alpha) {
  if (!(y_ref > 0.0))
    return NAN;
  if (y <= 0.0)
    return 0.0;
  return u_ref * pow(y / y_ref, alpha);
}
