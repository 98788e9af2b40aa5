/* Generators of the benchmark domains: CIRCLE, BLOOD, the box and the pipe.
 *
 * Each generator adds vertices and cells to a builder (lib/mesh/mesh_builder.c),
 * which finds the boundary faces as the cell faces that no other cell has,
 * tags them by where they lie and checks the mesh. Host code only. */
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- errors ---- */

/* ---- the builder ---- */

/* A 2D cell from four corners in tensor order, mirrored (corners 0<->1,
 * 2<->3) when they come left-handed, so blocks can be laid out in whichever
 * direction is convenient. */
static void add_quad(clmg_mesh_builder *builder, const double *x00, const double *x10,
                     const double *x01, const double *x11) {
  double ax = x10[0] - x00[0], ay = x10[1] - x00[1];
  double bx = x01[0] - x00[0], by = x01[1] - x00[1];
  int32_t corners[4] = {clmg_mesh_builder_add_vertex_merged(builder, x00),
                        clmg_mesh_builder_add_vertex_merged(builder, x10),
                        clmg_mesh_builder_add_vertex_merged(builder, x01),
                        clmg_mesh_builder_add_vertex_merged(builder, x11)};
  if (ax * by - ay * bx < 0.0) {
    int32_t swap = corners[0];
    corners[0] = corners[1];
    corners[1] = swap;
    swap = corners[2];
    corners[2] = corners[3];
    corners[3] = swap;
  }
  clmg_mesh_builder_add_cell(builder, corners);
}

/* A structured 2D block of ni x nj cells whose vertex (i, j) is
 * point(i, j). */
typedef void (*block_map)(const void *context, int i, int j, double *x);

static void add_block(clmg_mesh_builder *builder, int ni, int nj, block_map point,
                      const void *context) {
  for (int j = 0; j < nj; j++)
    for (int i = 0; i < ni; i++) {
      double x00[2], x10[2], x01[2], x11[2];
      point(context, i, j, x00);
      point(context, i + 1, j, x10);
      point(context, i, j + 1, x01);
      point(context, i + 1, j + 1, x11);
      add_quad(builder, x00, x10, x01, x11);
    }
}

static double distance_2d(const double *x, const double *center) {
  return hypot(x[0] - center[0], x[1] - center[1]);
}

/* ---- CIRCLE ---- */

static int32_t tag_circle(const void *context, const double *const *corners, int count) {
  (void)context;
  const double origin[2] = {0.0, 0.0};
  for (int m = 0; m < count; m++)
    if (fabs(distance_2d(corners[m], origin) - 0.5) > 1e-12)
      return 1;
  return 2;
}

clmg_status clmg_mesh_circle(clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  clmg_mesh_builder builder;
  clmg_mesh_builder_init(&builder, 2, CLMG_CELL_TENSOR);
  /* Ray r at angle r * 45 degrees meets the circle and the square (a corner
   * or an edge midpoint); cell r spans rays r and r + 1. */
  double inner[9][2], outer[9][2];
  for (int ray = 0; ray <= 8; ray++) {
    double angle = ray % 8 * PI / 4.0;
    double c = cos(angle), s = sin(angle);
    inner[ray][0] = 0.5 * c;
    inner[ray][1] = 0.5 * s;
    double scale = 1.0 / fmax(fabs(c), fabs(s));
    outer[ray][0] = round(scale * c);
    outer[ray][1] = round(scale * s);
  }
  for (int ray = 0; ray < 8; ray++) /* radial axis first: right-handed */
    add_quad(&builder, inner[ray], outer[ray], inner[ray + 1], outer[ray + 1]);
  clmg_boundary_shape circle = {.tag = 2, .kind = CLMG_SHAPE_CIRCLE, .radius = 0.5};
  return clmg_mesh_builder_finish(&builder, tag_circle, NULL, &circle, 1, "CIRCLE", out, error);
}

/* ---- BLOOD ---- */

/* The vessel: the core channel [0, 6] x [0, 1] with walls of thickness
 * `wall` below and above; on top, the aneurysm: a circle of radius
 * `radius` around `center` whose points at -45 and 225 degrees are the neck
 * on the line y = 1, meshed as a butterfly (a square around the centre and
 * four blocks around it, the lowest reaching down to the neck) and wrapped
 * in the wall too. */
typedef struct blood_geometry {
  double length, radius, center[2], half_square, wall;
  int cells_left, cells_neck, cells_across, cells_radial;
} blood_geometry;

static double blood_neck_half_width(const blood_geometry *g) {
  return g->radius / sqrt(2.0);
}

/* x of channel vertex column i: left part, neck, right part. */
static double blood_channel_x(const blood_geometry *g, int i) {
  double neck = blood_neck_half_width(g), mid = 0.5 * g->length;
  if (i <= g->cells_left)
    return (mid - neck) * i / g->cells_left;
  if (i <= g->cells_left + g->cells_neck)
    return mid - neck + 2.0 * neck * (i - g->cells_left) / g->cells_neck;
  return mid + neck +
         (g->length - mid - neck) * (i - g->cells_left - g->cells_neck) / g->cells_left;
}

static void blood_channel_point(const void *context, int i, int j, double *x) {
  const blood_geometry *g = context;
  x[0] = blood_channel_x(g, i);
  x[1] = (double)j / g->cells_across;
}

static void blood_square_point(const void *context, int i, int j, double *x) {
  const blood_geometry *g = context;
  x[0] = g->center[0] + g->half_square * (-1.0 + 2.0 * i / g->cells_neck);
  x[1] = g->center[1] + g->half_square * (-1.0 + 2.0 * j / g->cells_neck);
}

static void blood_arc_point(const blood_geometry *g, double angle, double radius, double *x) {
  x[0] = g->center[0] + radius * cos(angle);
  x[1] = g->center[1] + radius * sin(angle);
}

/* A ring block between a side of the square and the quarter of the circle
 * that starts at angle `first` (degrees): i along the side, j outwards. */
typedef struct blood_sector {
  const blood_geometry *geometry;
  double first; /* degrees */
} blood_sector;

static void blood_sector_point(const void *context, int i, int j, double *x) {
  const blood_sector *sector = context;
  const blood_geometry *g = sector->geometry;
  double t = (double)i / g->cells_neck, r = (double)j / g->cells_radial;
  double angle = (sector->first + 90.0 * t) * PI / 180.0;
  /* the square's corners lie on the diagonals, at s * sqrt(2) */
  double from = (sector->first + 45.0) * PI / 180.0, corner = g->half_square * sqrt(2.0);
  double start[2], end[2], arc[2];
  blood_arc_point(g, from - PI / 4.0, corner, start);
  blood_arc_point(g, from + PI / 4.0, corner, end);
  blood_arc_point(g, angle, g->radius, arc);
  for (int d = 0; d < 2; d++) {
    double side = start[d] + (end[d] - start[d]) * t;
    x[d] = side + (arc[d] - side) * r;
  }
}

/* The block between the neck (y = 1) and the square's lower side. */
static void blood_neck_point(const void *context, int i, int j, double *x) {
  const blood_geometry *g = context;
  double t = (double)i / g->cells_neck, r = (double)j / g->cells_radial;
  double neck = blood_neck_half_width(g);
  double bottom[2] = {g->center[0] - neck + 2.0 * neck * t, 1.0};
  double top[2] = {g->center[0] + g->half_square * (-1.0 + 2.0 * t), g->center[1] - g->half_square};
  for (int d = 0; d < 2; d++)
    x[d] = bottom[d] + (top[d] - bottom[d]) * r;
}

/* Where the outer wall line y = 1 + wall meets the outer wall circle: the
 * wall's corner above the neck on side -1 (left) or +1 (right). */
static void blood_wall_corner(const blood_geometry *g, double side, double *x) {
  double height = g->center[1] - (1.0 + g->wall), radius = g->radius + g->wall;
  x[0] = g->center[0] + side * sqrt(radius * radius - height * height);
  x[1] = 1.0 + g->wall;
}

static int32_t tag_blood(const void *context, const double *const *corners, int count) {
  const blood_geometry *g = context;
  for (int m = 0; m < count; m++)
    if (fabs(distance_2d(corners[m], g->center) - (g->radius + g->wall)) > 1e-9)
      return 1;
  return 2;
}

clmg_status clmg_mesh_blood(clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  blood_geometry g = {.length = 6.0,
                      .radius = 0.8,
                      .half_square = 0.28,
                      .wall = 0.01,
                      .cells_left = 12,
                      .cells_neck = 6,
                      .cells_across = 5,
                      .cells_radial = 3};
  g.center[0] = 0.5 * g.length;
  g.center[1] = 1.0 + blood_neck_half_width(&g);
  clmg_mesh_builder builder;
  clmg_mesh_builder_init(&builder, 2, CLMG_CELL_TENSOR);

  /* the lumen: channel and aneurysm */
  const int columns = 2 * g.cells_left + g.cells_neck;
  add_block(&builder, columns, g.cells_across, blood_channel_point, &g);
  add_block(&builder, g.cells_neck, g.cells_neck, blood_square_point, &g);
  for (int quarter = 0; quarter < 3; quarter++) {
    blood_sector sector = {&g, -45.0 + 90.0 * quarter};
    add_block(&builder, g.cells_neck, g.cells_radial, blood_sector_point, &sector);
  }
  add_block(&builder, g.cells_neck, g.cells_radial, blood_neck_point, &g);

  /* the wall: one layer of thin cells around everything but the ends */
  double left_corner[2], right_corner[2];
  blood_wall_corner(&g, -1.0, left_corner);
  blood_wall_corner(&g, 1.0, right_corner);
  for (int i = 0; i < columns; i++) {
    double x0 = blood_channel_x(&g, i), x1 = blood_channel_x(&g, i + 1);
    double a[2] = {x0, 0.0}, b[2] = {x1, 0.0}, c[2] = {x0, -g.wall}, d[2] = {x1, -g.wall};
    add_quad(&builder, a, b, c, d);
    if (i >= g.cells_left && i < g.cells_left + g.cells_neck)
      continue; /* the neck opens into the aneurysm */
    double e[2] = {x0, 1.0}, f[2] = {x1, 1.0}, h[2] = {x0, 1.0 + g.wall}, k[2] = {x1, 1.0 + g.wall};
    if (i + 1 == g.cells_left)
      memcpy(k, left_corner, sizeof k);
    if (i == g.cells_left + g.cells_neck)
      memcpy(h, right_corner, sizeof h);
    add_quad(&builder, e, f, h, k);
  }
  const int arc_cells = 3 * g.cells_neck;
  for (int i = 0; i < arc_cells; i++) {
    double angle0 = (-45.0 + 90.0 * i / g.cells_neck) * PI / 180.0;
    double angle1 = (-45.0 + 90.0 * (i + 1) / g.cells_neck) * PI / 180.0;
    double a[2], b[2], c[2], d[2];
    blood_arc_point(&g, angle0, g.radius, a);
    blood_arc_point(&g, angle1, g.radius, b);
    blood_arc_point(&g, angle0, g.radius + g.wall, c);
    blood_arc_point(&g, angle1, g.radius + g.wall, d);
    if (i == 0)
      memcpy(c, right_corner, sizeof c);
    if (i + 1 == arc_cells)
      memcpy(d, left_corner, sizeof d);
    add_quad(&builder, a, b, c, d);
  }
  clmg_boundary_shape aneurysm = {.tag = 2,
                                  .kind = CLMG_SHAPE_CIRCLE,
                                  .center = {g.center[0], g.center[1], 0.0},
                                  .radius = g.radius + g.wall};
  return clmg_mesh_builder_finish(&builder, tag_blood, &g, &aneurysm, 1, "BLOOD", out, error);
}

/* ---- box ---- */

static int32_t tag_everything_1(const void *context, const double *const *corners, int count) {
  (void)context;
  (void)corners;
  (void)count;
  return 1;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

clmg_status clmg_mesh_box(int dim, int n, double distortion, uint64_t seed, clmg_mesh *out,
                          clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  if (dim != 2 && dim != 3)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "box of dimension %d, expected 2 or 3", dim);
  if (n < 1 || (dim == 2 && n > 46339) || (dim == 3 && n > 1289))
    return clmg_error_set(
        error, CLMG_ERROR_INVALID_ARGUMENT,
        "box with %d cells per side: expected 1 to %d in %dD (32-bit vertex indices)", n,
        dim == 2 ? 46339 : 1289, dim);
  if (!(distortion >= 0.0 && distortion < 0.3))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "box distortion %g, expected 0 <= distortion < 0.3", distortion);
  const size_t side = (size_t)n + 1;
  const size_t num_vertices = dim == 2 ? side * side : side * side * side;
  const size_t num_cells = dim == 2 ? (size_t)n * (size_t)n : (size_t)n * (size_t)n * (size_t)n;
  const size_t corners = (size_t)1 << dim;
  const double width = 1.0 / n;
  clmg_mesh_builder builder;
  clmg_mesh_builder_init(&builder, dim, CLMG_CELL_TENSOR);
  double *shift = calloc(num_vertices * (size_t)dim, sizeof *shift);
  int32_t *bad_vertex = calloc(num_vertices, sizeof *bad_vertex);
  if (!shift || !bad_vertex || !clmg_mesh_builder_reserve(&builder, num_vertices, num_cells)) {
    free(shift);
    free(bad_vertex);
    clmg_mesh_builder_free(&builder);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate a %dD box of %d^%d cells", dim, n, dim);
  }
  uint64_t state = seed;
  for (size_t v = 0; v < num_vertices; v++) {
    size_t index[3] = {v % side, v / side % side, v / side / side};
    double x[3];
    int interior = 1;
    for (int d = 0; d < dim; d++) {
      x[d] = (double)index[d] * width;
      interior &= index[d] > 0 && index[d] < (size_t)n;
    }
    for (int d = 0; d < dim; d++) {
      double uniform = (double)(splitmix64(&state) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
      if (interior)
        shift[v * (size_t)dim + (size_t)d] = distortion * width * uniform;
    }
    clmg_mesh_builder_add_vertex(&builder, x);
  }
  for (size_t k = 0; k < num_cells; k++) {
    size_t i = k % (size_t)n, j = k / (size_t)n % (size_t)n, l = k / (size_t)n / (size_t)n;
    int32_t cell[8];
    for (size_t c = 0; c < corners; c++)
      cell[c] = (int32_t)((i + (c & 1)) + (j + (c >> 1 & 1)) * side + (l + (c >> 2)) * side * side);
    clmg_mesh_builder_add_cell(&builder, cell);
  }
  /* Independent random shifts can still fold a cell; halve the shifts of a
   * too-skewed cell's corners until every corner angle keeps a sine of at
   * least 0.2 (the shifts shrink to nothing, so this ends). */
  const double min_quality = 0.2;
  double *moved = builder.coords;
  for (int round = 0;; round++) {
    for (size_t v = 0; v < num_vertices; v++) {
      size_t stride = 1;
      for (int d = 0; d < dim; d++, stride *= side)
        moved[v * (size_t)dim + (size_t)d] =
            (double)(v / stride % side) * width + shift[v * (size_t)dim + (size_t)d];
    }
    int any_bad = 0;
    for (size_t k = 0; k < num_cells; k++) {
      const int32_t *cell = builder.cells + k * corners;
      if (clmg_mesh_cell_quality(dim, moved, cell, NULL, NULL) >= min_quality)
        continue;
      any_bad = 1;
      for (size_t c = 0; c < corners; c++)
        bad_vertex[cell[c]] = 1;
    }
    if (!any_bad || round == 64)
      break;
    for (size_t v = 0; v < num_vertices; v++)
      if (bad_vertex[v]) {
        bad_vertex[v] = 0;
        for (int d = 0; d < dim; d++)
          shift[v * (size_t)dim + (size_t)d] *= 0.5;
      }
  }
  free(shift);
  free(bad_vertex);
  return clmg_mesh_builder_finish(&builder, tag_everything_1, NULL, NULL, 0, "box", out, error);
}

/* ---- pipe ---- */

static int32_t tag_pipe(const void *context, const double *const *corners, int count) {
  (void)context;
  int outer = 1, inner = 1;
  for (int m = 0; m < count; m++) {
    double r = hypot(corners[m][0], corners[m][1]);
    outer &= fabs(r - 1.0) < 1e-12;
    inner &= fabs(r - 0.5) < 1e-12;
  }
  return outer ? 1 : inner ? 2 : 3;
}

clmg_status clmg_mesh_pipe(clmg_mesh *out, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mesh is NULL");
  memset(out, 0, sizeof *out);
  clmg_mesh_builder builder;
  clmg_mesh_builder_init(&builder, 3, CLMG_CELL_TENSOR);
  /* vertex (ray, ring, level): ray 0..7 at 45-degree steps, ring 0 at
   * r = 0.5 and 1 at r = 1, level z = 0 or 1 */
  int32_t vertex[8][2][2];
  for (int level = 0; level < 2; level++)
    for (int ring = 0; ring < 2; ring++)
      for (int ray = 0; ray < 8; ray++) {
        double angle = ray * PI / 4.0, r = ring ? 1.0 : 0.5;
        double x[3] = {r * cos(angle), r * sin(angle), level};
        vertex[ray][ring][level] = clmg_mesh_builder_add_vertex(&builder, x);
      }
  /* reference axes: radial, then counter-clockwise, then z (right-handed) */
  for (int ray = 0; ray < 8; ray++) {
    int32_t cell[8];
    for (int c = 0; c < 8; c++)
      cell[c] = vertex[(ray + (c >> 1 & 1)) % 8][c & 1][c >> 2];
    clmg_mesh_builder_add_cell(&builder, cell);
  }
  clmg_boundary_shape cylinders[2] = {
      {.tag = 1, .kind = CLMG_SHAPE_CYLINDER, .axis = {0.0, 0.0, 1.0}, .radius = 1.0},
      {.tag = 2, .kind = CLMG_SHAPE_CYLINDER, .axis = {0.0, 0.0, 1.0}, .radius = 0.5}};
  return clmg_mesh_builder_finish(&builder, tag_pipe, NULL, cylinders, 2, "pipe", out, error);
}
