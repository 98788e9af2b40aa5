/* Coarse triangle meshes of the flow benchmarks (include/clmg/flow.h): the
 * DFG channel around a cylinder (Schaefer and Turek, "Benchmark
 * computations of laminar flow around a cylinder", 1996), the lid-driven
 * cavity and the urban canopy of Bauer, Klement, Oberhuber and Zabka,
 * "Implementation of the Vanka-type multigrid solver for the finite element
 * approximation of the Navier-Stokes equations on GPU" (2016), Fig. 1; and
 * the inflow profiles of those benchmarks.
 *
 * The channel and the canopy are built as in mesh_generators.c: vertices
 * glued by position, quadrilaterals cut into two triangles along the
 * diagonal that keeps the larger smallest angle, the boundary edges found
 * as the edges of one triangle only and tagged by where they lie; the
 * result passes clmg_mesh_check before it is handed over. Host code only. */
#include "fem/mesh_internal.h"
#include "clmg/flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- the builder ---- */

typedef struct triangle_builder {
  double *coords; /* 2 per vertex */
  size_t num_vertices, vertex_capacity;
  int32_t *cells; /* 3 per triangle, counter-clockwise */
  size_t num_cells, cell_capacity;
  int out_of_memory; /* set by a failed add; checked once at the end */
} triangle_builder;

static void builder_free(triangle_builder *builder) {
  free(builder->coords);
  free(builder->cells);
  memset(builder, 0, sizeof *builder);
}

/* Room for one more item of item_bytes in *array (capacity doubles). */
static int reserve_one(void **array, size_t *capacity, size_t used, size_t item_bytes) {
  if (used < *capacity)
    return 1;
  size_t wanted = *capacity ? 2 * *capacity : 64;
  void *grown = realloc(*array, wanted * item_bytes);
  if (!grown)
    return 0;
  *array = grown;
  *capacity = wanted;
  return 1;
}

/* The vertex at x, reused when one lies within 1e-9 (the meshes have a few
 * hundred vertices, so a linear search is fine). */
static int32_t add_vertex(triangle_builder *builder, const double *x) {
  for (size_t v = 0; v < builder->num_vertices; v++)
    if (fabs(builder->coords[2 * v] - x[0]) < 1e-9 &&
        fabs(builder->coords[2 * v + 1] - x[1]) < 1e-9)
      return (int32_t)v;
  if (builder->out_of_memory || !reserve_one((void **)&builder->coords, &builder->vertex_capacity,
                                             builder->num_vertices, 2 * sizeof(double))) {
    builder->out_of_memory = 1;
    return 0;
  }
  builder->coords[2 * builder->num_vertices] = x[0];
  builder->coords[2 * builder->num_vertices + 1] = x[1];
  return (int32_t)builder->num_vertices++;
}

static double signed_area(const double *a, const double *b, const double *c) {
  return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

/* A triangle, listed counter-clockwise whatever the order of a, b, c. */
static void add_triangle(triangle_builder *builder, const double *a, const double *b,
                         const double *c) {
  if (signed_area(a, b, c) < 0.0) {
    const double *swap = b;
    b = c;
    c = swap;
  }
  int32_t corners[3] = {add_vertex(builder, a), add_vertex(builder, b), add_vertex(builder, c)};
  if (builder->out_of_memory || !reserve_one((void **)&builder->cells, &builder->cell_capacity,
                                             builder->num_cells, 3 * sizeof(int32_t))) {
    builder->out_of_memory = 1;
    return;
  }
  memcpy(builder->cells + 3 * builder->num_cells, corners, sizeof corners);
  builder->num_cells++;
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
static void add_quad(triangle_builder *builder, const double *p0, const double *p1,
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
static void add_grid(triangle_builder *builder, const double *xs, int nx, const double *ys,
                     int ny) {
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) {
      double p0[2] = {xs[i], ys[j]}, p1[2] = {xs[i + 1], ys[j]};
      double p2[2] = {xs[i + 1], ys[j + 1]}, p3[2] = {xs[i], ys[j + 1]};
      add_quad(builder, p0, p1, p2, p3);
    }
}

/* ---- boundary edges ---- */

/* The tag of a boundary edge from its ends, 0 where it fits no part. */
typedef int32_t (*edge_tagger)(const double *a, const double *b);

typedef struct edge_record {
  int32_t low, high; /* sorted ends */
  size_t slot;       /* 3 * cell + local edge */
} edge_record;

static int compare_edge_records(const void *a, const void *b) {
  const edge_record *x = a, *y = b;
  if (x->low != y->low)
    return x->low < y->low ? -1 : 1;
  if (x->high != y->high)
    return x->high < y->high ? -1 : 1;
  return 0;
}

/* Finds the edges of one triangle only, in the order of the triangles
 * (local edge i: from vertex i to vertex i + 1), tags them and hands
 * everything to out, then checks it. The builder is emptied either way. */
static clmg_status finish_mesh(triangle_builder *builder, edge_tagger tag_edge,
                               const clmg_boundary_shape *shape, const char *name, clmg_mesh *out,
                               clmg_error *error) {
  const size_t num_slots = 3 * builder->num_cells;
  edge_record *records = NULL;
  unsigned char *on_boundary = NULL;
  clmg_mesh mesh = {0};
  clmg_status status = CLMG_SUCCESS;
  if (builder->out_of_memory) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the %s mesh being generated", name);
    goto done;
  }
  records = clmg_alloc_array(num_slots, sizeof *records);
  on_boundary = clmg_alloc_zeroed_array(num_slots, 1);
  if (!records || !on_boundary) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the edges of %zu generated triangles (%s)",
                            builder->num_cells, name);
    goto done;
  }
  for (size_t slot = 0; slot < num_slots; slot++) {
    const int32_t *cell = builder->cells + 3 * (slot / 3);
    int32_t a = cell[slot % 3], b = cell[(slot + 1) % 3];
    records[slot] = (edge_record){a < b ? a : b, a < b ? b : a, slot};
  }
  qsort(records, num_slots, sizeof *records, compare_edge_records);
  size_t num_faces = 0;
  for (size_t i = 0; i < num_slots;) {
    size_t run = 1;
    while (i + run < num_slots && compare_edge_records(&records[i], &records[i + run]) == 0)
      run++;
    if (run == 1) {
      on_boundary[records[i].slot] = 1;
      num_faces++;
    }
    i += run;
  }
  mesh.dim = 2;
  mesh.cell_type = CLMG_CELL_SIMPLEX;
  mesh.num_vertices = builder->num_vertices;
  mesh.num_cells = builder->num_cells;
  mesh.num_boundary_faces = num_faces;
  mesh.boundary_faces = clmg_alloc_array(num_faces, 2 * sizeof *mesh.boundary_faces);
  mesh.boundary_face_tag = clmg_alloc_array(num_faces, sizeof *mesh.boundary_face_tag);
  mesh.num_shapes = shape ? 1 : 0;
  mesh.shapes = shape ? malloc(sizeof *shape) : NULL;
  if (!mesh.boundary_faces || !mesh.boundary_face_tag || (shape && !mesh.shapes)) {
    status =
        clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate the %zu boundary edges of the %s mesh", num_faces, name);
    goto done;
  }
  if (shape)
    *mesh.shapes = *shape;
  size_t face = 0;
  for (size_t slot = 0; slot < num_slots; slot++) {
    if (!on_boundary[slot])
      continue;
    const int32_t *cell = builder->cells + 3 * (slot / 3);
    int32_t a = cell[slot % 3], b = cell[(slot + 1) % 3];
    const double *xa = builder->coords + 2 * (size_t)a, *xb = builder->coords + 2 * (size_t)b;
    int32_t tag = tag_edge(xa, xb);
    if (tag < 1) {
      /* a bug of the construction, not of the caller */
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "generating the %s mesh: boundary edge (%g, %g)-(%g, %g) lies on "
                              "no part of the domain's boundary",
                              name, xa[0], xa[1], xb[0], xb[1]);
      goto done;
    }
    mesh.boundary_faces[2 * face] = a;
    mesh.boundary_faces[2 * face + 1] = b;
    mesh.boundary_face_tag[face] = tag;
    face++;
  }
  /* The builder's arrays become the mesh's. */
  mesh.coords = builder->coords;
  mesh.cells = builder->cells;
  builder->coords = NULL;
  builder->cells = NULL;
  status = clmg_mesh_check(&mesh, error);

done:
  free(records);
  free(on_boundary);
  builder_free(builder);
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(&mesh);
    return status;
  }
  *out = mesh;
  return CLMG_SUCCESS;
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

static int32_t tag_dfg(const double *a, const double *b) {
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
  triangle_builder builder = {0};

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
  return finish_mesh(&builder, tag_dfg, &cylinder, "DFG channel", out, error);
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

static int32_t tag_canopy(const double *a, const double *b) {
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
  triangle_builder builder = {0};
  for (int j = 0; j < CANOPY_HEIGHT; j++)
    for (int i = 0; i < CANOPY_LENGTH; i++) {
      if (canopy_building(i, j))
        continue;
      double p0[2] = {i, j}, p1[2] = {i + 1, j}, p2[2] = {i + 1, j + 1}, p3[2] = {i, j + 1};
      add_quad(&builder, p0, p1, p2, p3);
    }
  return finish_mesh(&builder, tag_canopy, NULL, "canopy", out, error);
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
