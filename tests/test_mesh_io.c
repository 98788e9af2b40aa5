/* Mesh files: the Gmsh reader (formats 2.2 and 4.1, quadrilaterals and
 * hexahedra, sparse node tags, physical and elementary tags, reorientation
 * of clockwise or left-handed cells, boundary faces the file omits) and its
 * errors (FILE:LINE and what was expected), and the VTU writer (Q1 and Q2
 * cells, point and cell data) read back as text and checked against VTK's
 * documented node order. The meshes of tests/data are hand-written; small
 * and malformed files are written by the tests into a scratch directory.
 * Binary VTU files are parsed back (offsets, block sizes, values against the
 * ASCII file), and a write that fails half-way must keep an earlier file.
 * Host only: no OpenCL device. */
#define _POSIX_C_SOURCE 200809L /* setrlimit, dirent under -std=c11 */

#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "test_util.h"

static char *scratch;

#define CHECK_OK(error, call) CHECK_ERROR_OK(error, call)

/* scratch/name (malloc'ed). */
static char *scratch_path(const char *name) {
  size_t length = strlen(scratch) + strlen(name) + 2;
  char *path = malloc(length);
  assert_non_null(path);
  snprintf(path, length, "%s/%s", scratch, name);
  return path;
}

static char *write_file(const char *name, const char *text, size_t length) {
  char *path = scratch_path(name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, length, f), length);
  assert_int_equal(fclose(f), 0);
  return path;
}

static void data_path(const char *name, char *path, size_t size) {
  snprintf(path, size, "%s/tests/data/%s", CLMG_SOURCE_DIR, name);
}

static size_t faces_with_tag(const clmg_mesh *mesh, int32_t tag) {
  size_t count = 0;
  for (size_t f = 0; f < mesh->num_boundary_faces; ++f)
    count += mesh->boundary_face_tag[f] == tag;
  return count;
}

static void read_path_ok(const char *path, clmg_mesh *mesh) {
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_read_gmsh(path, mesh, &error);
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", path, clmg_status_string(status), error.message);
  CHECK_OK(error, clmg_mesh_check(mesh, &error));
}

static void read_ok(const char *name, const char *text, clmg_mesh *mesh) {
  char *path = write_file(name, text, strlen(text));
  read_path_ok(path, mesh);
  free(path);
}

static void read_data_ok(const char *name, clmg_mesh *mesh) {
  char path[4096];
  data_path(name, path, sizeof path);
  read_path_ok(path, mesh);
}

/* The signed measure of a cell that is a parallelogram / parallelepiped:
 * the determinant of its edge vectors at corner 0 (tensor order). */
static double cell_measure(const clmg_mesh *mesh, size_t cell) {
  const int32_t *c = mesh->cells + cell * clmg_mesh_vertices_per_cell(mesh);
  const int dim = mesh->dim;
  double e[3][3] = {{0}};
  for (int axis = 0; axis < dim; ++axis)
    for (int d = 0; d < dim; ++d)
      e[axis][d] = mesh->coords[(size_t)c[1 << axis] * (size_t)dim + (size_t)d] -
                   mesh->coords[(size_t)c[0] * (size_t)dim + (size_t)d];
  if (dim == 2)
    return e[0][0] * e[1][1] - e[0][1] * e[1][0];
  return e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
         e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
         e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
}

/* Whether every vertex of boundary face f has coordinate `axis` = value. */
static int face_on_plane(const clmg_mesh *mesh, size_t f, int axis, double value) {
  size_t per_face = clmg_mesh_vertices_per_face(mesh);
  for (size_t k = 0; k < per_face; ++k) {
    int32_t v = mesh->boundary_faces[f * per_face + k];
    if (mesh->coords[(size_t)v * (size_t)mesh->dim + (size_t)axis] != value)
      return 0;
  }
  return 1;
}

/* The vertex of b at a's vertex v's coordinates (exactly), -1 if none. */
static int32_t vertex_at(const clmg_mesh *b, const double *x) {
  for (size_t v = 0; v < b->num_vertices; ++v)
    if (memcmp(b->coords + v * (size_t)b->dim, x, (size_t)b->dim * sizeof *x) == 0)
      return (int32_t)v;
  return -1;
}

/* The same mesh up to the numbering of the vertices (each file's node
 * order): every vertex of a is one of b at the same point, and the cells
 * and boundary faces are the same through that map. */
static void assert_same_mesh(const clmg_mesh *a, const clmg_mesh *b) {
  assert_int_equal(a->dim, b->dim);
  assert_int_equal(a->num_vertices, b->num_vertices);
  assert_int_equal(a->num_cells, b->num_cells);
  assert_int_equal(a->num_boundary_faces, b->num_boundary_faces);
  int32_t *map = malloc((a->num_vertices + 1) * sizeof *map);
  assert_non_null(map);
  for (size_t v = 0; v < a->num_vertices; ++v) {
    map[v] = vertex_at(b, a->coords + v * (size_t)a->dim);
    assert_true(map[v] >= 0);
  }
  size_t per_cell = clmg_mesh_vertices_per_cell(a), per_face = clmg_mesh_vertices_per_face(a);
  for (size_t k = 0; k < a->num_cells * per_cell; ++k)
    assert_int_equal(map[a->cells[k]], b->cells[k]);
  /* faces as sets of vertices with their tags (the unlisted ones come in an
   * order that follows the numbering) */
  for (size_t f = 0; f < a->num_boundary_faces; ++f) {
    int found = 0;
    for (size_t g = 0; g < b->num_boundary_faces && !found; ++g) {
      int all = a->boundary_face_tag[f] == b->boundary_face_tag[g];
      for (size_t k = 0; k < per_face && all; ++k) {
        int32_t v = map[a->boundary_faces[f * per_face + k]], in = 0;
        for (size_t l = 0; l < per_face; ++l)
          in |= b->boundary_faces[g * per_face + l] == v;
        all = in;
      }
      found = all;
    }
    if (!found)
      fail_msg("boundary face %zu (tag %d) of one file is not in the other", f,
               (int)a->boundary_face_tag[f]);
  }
  free(map);
}

/* Vertex k is the k-th node of $Nodes (a 2.2 file whose nodes are all
 * used, listed in an order cells do not first use them): values per vertex
 * map back to the file's nodes (they once came in the order of first use). */
static void assert_file_order(const char *name, const clmg_mesh *mesh) {
  char path[4096];
  data_path(name, path, sizeof path);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[256];
  while (fgets(line, sizeof line, f) && strncmp(line, "$Nodes", 6) != 0) {
  }
  size_t count = 0;
  assert_int_equal(fscanf(f, "%zu", &count), 1);
  assert_int_equal(count, mesh->num_vertices);
  for (size_t k = 0; k < count; ++k) {
    long long tag = 0;
    double x[3] = {0, 0, 0};
    assert_int_equal(fscanf(f, "%lld %lf %lf %lf", &tag, &x[0], &x[1], &x[2]), 4);
    for (int d = 0; d < mesh->dim; ++d)
      if (mesh->coords[k * (size_t)mesh->dim + (size_t)d] != x[d])
        fail_msg("%s: vertex %zu is not node %lld, the %zu-th of $Nodes", name, k, tag, k + 1);
  }
  fclose(f);
}

/* ---- reading ---- */

/* 3 x 2 unit squares on [0,3] x [0,2]: physical lines 11 (bottom), 12
 * (right) and 13 (top) in the file, the left side not; 2.2 with sparse node
 * tags listed out of order, 4.1 with Gmsh's entity blocks. */
static void test_read_quads_data(void **state) {
  (void)state;
  clmg_mesh a = {0}, b = {0};
  read_data_ok("quads_22.msh", &a);
  read_data_ok("quads_41.msh", &b);
  assert_same_mesh(&a, &b);
  assert_file_order("quads_22.msh", &a);
  assert_int_equal(a.dim, 2);
  assert_int_equal(a.num_vertices, 12);
  assert_int_equal(a.num_cells, 6);
  assert_int_equal(a.num_boundary_faces, 10);
  double area = 0;
  for (size_t c = 0; c < a.num_cells; ++c) {
    assert_true(cell_measure(&a, c) == 1.0);
    area += cell_measure(&a, c);
  }
  assert_true(area == 6.0);
  static const struct {
    int32_t tag;
    int axis;
    double value;
    size_t count;
  } sides[] = {{11, 1, 0.0, 3}, {12, 0, 3.0, 2}, {13, 1, 2.0, 3}, {1, 0, 0.0, 2}};
  for (size_t s = 0; s < 4; ++s) {
    assert_int_equal(faces_with_tag(&a, sides[s].tag), sides[s].count);
    for (size_t f = 0; f < a.num_boundary_faces; ++f)
      if (a.boundary_face_tag[f] == sides[s].tag &&
          !face_on_plane(&a, f, sides[s].axis, sides[s].value))
        fail_msg("boundary face %zu with tag %d is not on its side", f, (int)sides[s].tag);
  }
  clmg_mesh_free(&a);
  clmg_mesh_free(&b);
}

/* 2 x 2 x 1 unit cubes on [0,2]^2 x [0,1]: bottom quads physical 21, top
 * 22, the side x = 0 only elementary (7), the other sides not in the file. */
static void test_read_hexes_data(void **state) {
  (void)state;
  clmg_mesh a = {0}, b = {0};
  read_data_ok("hexes_22.msh", &a);
  read_data_ok("hexes_41.msh", &b);
  assert_same_mesh(&a, &b);
  assert_int_equal(a.dim, 3);
  assert_int_equal(a.num_vertices, 18);
  assert_int_equal(a.num_cells, 4);
  assert_int_equal(a.num_boundary_faces, 16);
  for (size_t c = 0; c < a.num_cells; ++c)
    assert_true(cell_measure(&a, c) == 1.0);
  static const struct {
    int32_t tag;
    int axis;
    double value;
    size_t count;
  } sides[] = {{21, 2, 0.0, 4}, {22, 2, 1.0, 4}, {7, 0, 0.0, 2}};
  for (size_t s = 0; s < 3; ++s) {
    assert_int_equal(faces_with_tag(&a, sides[s].tag), sides[s].count);
    for (size_t f = 0; f < a.num_boundary_faces; ++f)
      if (a.boundary_face_tag[f] == sides[s].tag &&
          !face_on_plane(&a, f, sides[s].axis, sides[s].value))
        fail_msg("boundary face %zu with tag %d is not on its side", f, (int)sides[s].tag);
  }
  assert_int_equal(faces_with_tag(&a, 1), 6); /* y = 0, x = 2, y = 2: added */
  for (size_t f = 0; f < a.num_boundary_faces; ++f)
    if (a.boundary_face_tag[f] == 1)
      assert_true(face_on_plane(&a, f, 1, 0.0) || face_on_plane(&a, f, 0, 2.0) ||
                  face_on_plane(&a, f, 1, 2.0));
  clmg_mesh_free(&a);
  clmg_mesh_free(&b);
}

/* Two unit squares side by side; node tags are sparse; the second quad is
 * listed clockwise; only the bottom edges are in the file (physical 5). */
static const char *two_quads_22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                  "$PhysicalNames\n1\n1 5 \"bottom wall\"\n$EndPhysicalNames\n"
                                  "$Nodes\n6\n10 0 0 0\n20 1 0 0\n30 2 0 0\n"
                                  "40 0 1 0\n50 1 1 0\n60 2 1 0\n$EndNodes\n"
                                  "$Elements\n4\n"
                                  "1 1 2 5 1 10 20\n2 1 2 5 1 20 30\n"
                                  "3 3 2 7 2 10 20 50 40\n4 3 2 7 2 20 50 60 30\n"
                                  "$EndElements\n";

/* The same in 4.1, with the second quad counter-clockwise. */
static const char *two_quads_41 = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
                                  "$Entities\n0 1 1 0\n"
                                  "1 0 0 0 2 0 0 1 5 2 1 2\n"
                                  "2 0 0 0 2 1 0 1 7 1 1\n"
                                  "$EndEntities\n"
                                  "$Nodes\n2 6 10 60\n"
                                  "1 1 0 2\n10\n20\n0 0 0\n1 0 0\n"
                                  "2 2 0 4\n30\n40\n50\n60\n2 0 0\n0 1 0\n1 1 0\n2 1 0\n"
                                  "$EndNodes\n"
                                  "$Elements\n2 4 1 4\n"
                                  "1 1 1 2\n1 10 20\n2 20 30\n"
                                  "2 2 3 2\n3 10 20 50 40\n4 20 30 60 50\n"
                                  "$EndElements\n";

/* The same cells, corner by corner as sets of points (the vertex numbers
 * and the corner order may differ). */
static void assert_same_cell_points(const clmg_mesh *a, const clmg_mesh *b) {
  size_t per_cell = clmg_mesh_vertices_per_cell(a), dim = (size_t)a->dim;
  for (size_t c = 0; c < a->num_cells; ++c)
    for (size_t k = 0; k < per_cell; ++k) {
      const double *x = a->coords + (size_t)a->cells[c * per_cell + k] * dim;
      int found = 0;
      for (size_t j = 0; j < per_cell; ++j)
        found |=
            memcmp(x, b->coords + (size_t)b->cells[c * per_cell + j] * dim, dim * sizeof *x) == 0;
      assert_true(found);
    }
}

static void test_read_quads_both_versions(void **state) {
  (void)state;
  clmg_mesh a = {0}, b = {0};
  read_ok("quads22.msh", two_quads_22, &a);
  read_ok("quads41.msh", two_quads_41, &b);
  const clmg_mesh *meshes[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    const clmg_mesh *m = meshes[k];
    assert_int_equal(m->dim, 2);
    assert_int_equal(m->num_vertices, 6);
    assert_int_equal(m->num_cells, 2);
    assert_int_equal(m->num_boundary_faces, 6);
    assert_int_equal(faces_with_tag(m, 5), 2); /* the file's bottom edges */
    assert_int_equal(faces_with_tag(m, 1), 4); /* the rest, added */
    for (size_t c = 0; c < 2; ++c)
      assert_true(cell_measure(m, c) == 1.0); /* the clockwise quad was turned */
  }
  assert_same_cell_points(&a, &b);
  clmg_mesh_free(&a);
  clmg_mesh_free(&b);
}

/* Gmsh 4.1 with one entity and one element block per boundary edge: a strip
 * of N unit squares whose N bottom edges lie in N curve entities, listed in
 * descending tag order; even tags have a physical group (100000 + tag), odd
 * ones none, and curve 1 is listed twice (the first listing wins). Every
 * edge gets its entity's tag: the lookup that replaced a linear search
 * (quadratic in the number of blocks: 200,000 blocks took 66 s). */
static void test_read_many_entities(void **state) {
  (void)state;
  enum { N = 4000 };
  size_t capacity = 200 * (size_t)N + 4096, used = 0;
  char *text = malloc(capacity);
  assert_non_null(text);
#define APPEND(...) used += (size_t)snprintf(text + used, capacity - used, __VA_ARGS__)
  APPEND("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 %d 1 0\n", N + 1);
  for (int tag = N; tag >= 1; --tag) {
    if (tag % 2 == 0)
      APPEND("%d %d 0 0 %d 0 0 1 %d 0\n", tag, tag - 1, tag, 100000 + tag);
    else
      APPEND("%d %d 0 0 %d 0 0 0 0\n", tag, tag - 1, tag);
  }
  APPEND("1 0 0 0 1 0 0 1 777 0\n"); /* a second curve 1: ignored */
  APPEND("1 0 0 0 %d 1 0 0 0\n$EndEntities\n", N);
  APPEND("$Nodes\n1 %d 1 %d\n2 1 0 %d\n", 2 * (N + 1), 2 * (N + 1), 2 * (N + 1));
  for (int k = 1; k <= 2 * (N + 1); ++k)
    APPEND("%d\n", k);
  for (int row = 0; row < 2; ++row)
    for (int i = 0; i <= N; ++i)
      APPEND("%d %d 0\n", i, row);
  APPEND("$EndNodes\n$Elements\n%d %d 1 %d\n", N + 1, 2 * N, 2 * N);
  for (int tag = 1; tag <= N; ++tag) /* bottom edge from node tag to tag + 1 */
    APPEND("1 %d 1 1\n%d %d %d\n", tag, tag, tag, tag + 1);
  APPEND("2 1 3 %d\n", N);
  for (int i = 1; i <= N; ++i)
    APPEND("%d %d %d %d %d\n", N + i, i, i + 1, N + 2 + i, N + 1 + i);
  APPEND("$EndElements\n");
#undef APPEND
  assert_true(used < capacity);
  clmg_mesh mesh = {0};
  read_ok("many-entities.msh", text, &mesh);
  free(text);
  assert_int_equal(mesh.num_cells, N);
  size_t bottom = 0;
  for (size_t f = 0; f < mesh.num_boundary_faces; ++f) {
    const int32_t *v = mesh.boundary_faces + 2 * f;
    const double *a = mesh.coords + 2 * (size_t)v[0], *b = mesh.coords + 2 * (size_t)v[1];
    if (a[1] != 0.0 || b[1] != 0.0)
      continue;
    int curve = (int)fmin(a[0], b[0]) + 1; /* the edge [i, i+1] is curve i + 1 */
    int32_t expected = curve % 2 == 0 ? 100000 + curve : curve;
    if (mesh.boundary_face_tag[f] != expected)
      fail_msg("bottom edge of curve %d: tag %d, expected %d", curve,
               (int)mesh.boundary_face_tag[f], (int)expected);
    ++bottom;
  }
  assert_int_equal(bottom, N);
  clmg_mesh_free(&mesh);
}

/* A valid mesh scaled by 1e+-300 reads as the unscaled one (the cell check
 * once squared edge lengths and called it "folded or degenerate"), and so
 * does one refinement of it. */
static void test_read_extreme_scales(void **state) {
  (void)state;
  const double scales[] = {1e300, 1e-300, 1.0};
  for (size_t k = 0; k < 3; ++k) {
    char text[1024];
    double h = scales[k];
    snprintf(text, sizeof text,
             "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n6\n"
             "1 0 0 0\n2 %.17g 0 0\n3 %.17g 0 0\n4 0 %.17g 0\n5 %.17g %.17g 0\n"
             "6 %.17g %.17g 0\n$EndNodes\n$Elements\n2\n"
             "1 3 2 1 1 1 2 5 4\n2 3 2 1 1 2 3 6 5\n$EndElements\n",
             h, 2 * h, h, h, h, 2 * h, h);
    clmg_mesh mesh = {0}, refined = {0};
    read_ok("scaled.msh", text, &mesh);
    assert_int_equal(mesh.num_cells, 2);
    assert_int_equal(mesh.num_boundary_faces, 6);
    clmg_error error;
    clmg_status status = clmg_mesh_refine(&mesh, &refined, &error);
    if (status != CLMG_SUCCESS)
      fail_msg("scale %g: refine: %s", h, error.message);
    assert_int_equal(refined.num_cells, 8);
    clmg_mesh_free(&refined);
    clmg_mesh_free(&mesh);
  }
}

/* A hexahedron listed top face first (left-handed) is mirrored. */
static void test_read_left_handed_hex(void **state) {
  (void)state;
  static const char *text = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                            "$Nodes\n8\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n"
                            "5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n$EndNodes\n"
                            "$Elements\n2\n1 15 2 0 1 1\n2 5 2 3 3 5 6 7 8 1 2 3 4\n"
                            "$EndElements\n";
  clmg_mesh mesh = {0};
  read_ok("lefthex.msh", text, &mesh);
  assert_int_equal(mesh.dim, 3);
  assert_int_equal(mesh.num_cells, 1);
  assert_true(cell_measure(&mesh, 0) == 1.0);
  assert_int_equal(mesh.num_boundary_faces, 6);
  assert_int_equal(faces_with_tag(&mesh, 1), 6);
  clmg_mesh_free(&mesh);
}

/* A file mesh goes through refinement and assembly like a generated one. */
static void test_read_hex_and_refine(void **state) {
  (void)state;
  clmg_mesh mesh = {0};
  read_data_ok("hexes_41.msh", &mesh);
  clmg_fe_hierarchy h = {0};
  clmg_poisson_problem problem = {0};
  clmg_error error = {{0}};
  CHECK_OK(error,
           clmg_fe_poisson_hierarchy(&mesh, 2, 1, &problem, CLMG_NUMBERING_2LV, 1, &h, &error));
  assert_int_equal(h.a[1].rows, 5 * 5 * 3); /* 4 x 4 x 2 cells */
  clmg_fe_hierarchy_free(&h);
  clmg_mesh_free(&mesh);
}

/* Each malformed file is refused with its name, the line and what was
 * wrong, and leaves the output mesh empty. */
static void test_malformed_files(void **state) {
  (void)state;
#define HEADER22 "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
#define HEADER41 "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
#define SQUARE_NODES "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n"
  static const struct {
    const char *name, *text, *line, *words;
  } cases[] = {
      {"empty.msh", "", ":1:", "expected $MeshFormat, found the end of the file"},
      {"nomesh.msh", "hello\n", ":1:", "expected $MeshFormat, found 'hello'"},
      {"version.msh", "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", ":2:", "2.2 or 4.1, found '3.0'"},
      {"binary.msh", "$MeshFormat\n4.1 1 8\n$EndMeshFormat\n", ":2:", "binary"},
      {"truncated.msh", HEADER22 "$Nodes\n3\n1 0 0 0\n2 1 0 0\n",
       ":8:", "expected a node tag, found the end of the file"},
      {"badnumber.msh", HEADER22 "$Nodes\n1\n1 0 0.5.5 0\n$EndNodes\n",
       ":6:", "expected a coordinate, found '0.5.5'"},
      {"badcount.msh", HEADER22 "$Nodes\n-2\n$EndNodes\n",
       ":5:", "expected the number of nodes, found '-2'"},
      {"noendnodes.msh", HEADER22 "$Nodes\n1\n1 0 0 0\n$Elements\n0\n$EndElements\n",
       ":7:", "expected $EndNodes, found '$Elements'"},
      {"twicetag.msh", HEADER22 "$Nodes\n3\n5 0 0 0\n6 1 0 0\n5 1 1 0\n$EndNodes\n",
       ":8:", "found 5 again (first defined on line 6)"},
      {"unknownnode.msh",
       HEADER22 "$Nodes\n2\n1 0 0 0\n2 1 0 0\n$EndNodes\n$Elements\n1\n1 3 0 1 2 3 4\n"
                "$EndElements\n",
       ":11:", "expected a node defined in $Nodes, found node 3"},
      {"flattriangle.msh",
       HEADER22 "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 2 0 0\n$EndNodes\n"
                "$Elements\n1\n1 2 0 1 2 3\n$EndElements\n",
       ":12:", "expected a triangle of positive area (in either vertex order), found a degenerate"},
      {"mixed.msh",
       HEADER22 SQUARE_NODES "$Elements\n2\n1 3 0 1 2 3 4\n2 2 0 1 2 3\n$EndElements\n", ":14:",
       "expected cells of one kind, found 4-node quadrilaterals (line 13) and 3-node "
       "triangles (line 14)"},
      {"tet10.msh",
       HEADER22 SQUARE_NODES "$Elements\n1\n1 11 0 1 2 3 4 1 1 1 1 1 1\n$EndElements\n",
       ":13:", "element type 11 (10-node tetrahedron)"},
      {"straytriangle.msh",
       HEADER22 "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n$EndNodes\n"
                "$Elements\n2\n1 2 2 7 7 1 2 5\n2 4 0 1 2 3 4\n$EndElements\n",
       ":14:", "expected a triangle that is a face of a tetrahedron, found one on nodes 1 2 5"},
      {"flattet.msh",
       HEADER22 "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n$EndNodes\n"
                "$Elements\n1\n1 4 0 1 2 3 4\n$EndElements\n",
       ":13:", "expected a tetrahedron of positive volume"},
      {"quad9.msh", HEADER22 SQUARE_NODES "$Elements\n1\n1 10 0 1 2 3 4 1 1 1 1 1\n$EndElements\n",
       ":13:", "element type 10 (9-node quadrilateral)"},
      {"elementsfirst.msh", HEADER22 "$Elements\n0\n$EndElements\n",
       ":4:", "expected $Nodes before $Elements"},
      {"noelements.msh", HEADER22 SQUARE_NODES,
       ":11:", "expected $Elements, found the end of the file"},
      {"nocells.msh", HEADER22 SQUARE_NODES "$Elements\n1\n1 1 0 1 2\n$EndElements\n", ":11:",
       "expected 3-node triangles, 4-node quadrilaterals, 4-node tetrahedra or 8-node "
       "hexahedra in $Elements, found none"},
      {"nonplanar.msh",
       HEADER22 "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0.5\n4 0 1 0\n$EndNodes\n"
                "$Elements\n1\n1 3 0 1 2 3 4\n$EndElements\n",
       ":8:", "found z = 0.5 at node 3"},
      {"bowtie.msh", HEADER22 SQUARE_NODES "$Elements\n1\n1 3 0 1 2 4 3\n$EndElements\n",
       ":13:", "folded or degenerate"},
      {"twicecell.msh",
       HEADER22 SQUARE_NODES "$Elements\n2\n1 3 2 1 1 1 2 3 4\n2 3 2 2 1 2 3 4 1\n$EndElements\n",
       ":14:", "the nodes of the cell on line 13 again"},
      {"strayface.msh",
       HEADER22 SQUARE_NODES "$Elements\n2\n1 1 2 3 1 1 3\n2 3 0 1 2 3 4\n$EndElements\n",
       ":13:", "expected a line that is a face of a quadrilateral, found one on nodes 1 3"},
      {"nul.msh", HEADER22 "$Nodes\n\0", ":5:", "NUL byte"},
      /* an element line one node short: the error at that line, not the next */
      {"shortelement.msh",
       HEADER22 SQUARE_NODES "$Elements\n2\n1 3 0 1 2 3\n2 3 0 1 2 3 4\n$EndElements\n",
       ":13:", "expected 4 node tags after the element's tags, found 3"},
      {"nodecount41.msh", HEADER41 "$Nodes\n1 3 1 3\n2 1 0 2\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n",
       ":10:", "expected 3 nodes (as announced on line 5), found 2"},
      {"parametric41.msh", HEADER41 "$Nodes\n1 1 1 1\n1 1 1 1\n1\n0 0 0 0.5\n$EndNodes\n",
       ":6:", "expected 0 (no parametric coordinates), found '1'"},
      {"elementcount41.msh",
       HEADER41 "$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n"
                "$Elements\n1 2 1 2\n2 1 3 1\n1 1 2 3 4\n$EndElements\n",
       ":19:", "expected 2 elements (as announced on line 17), found 1"},
      {"blockcount41.msh",
       HEADER41 "$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n"
                "$Elements\n1 1 1 2\n2 1 3 2\n1 1 2 3 4\n2 1 2 3 4\n$EndElements\n",
       ":18:", "expected at most 1 elements in this block (the total on line 17 is 1"},
      {"quadface41.msh",
       HEADER41 "$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n"
                "$Elements\n2 2 1 2\n2 1 3 1\n1 1 2 3 4\n3 1 4 1\n2 1 2 3 4\n$EndElements\n",
       ":19:", "expected triangles as boundary faces of tetrahedra, found a 4-node quadrilateral"},
      {"mixed41.msh",
       HEADER41 "$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n"
                "$Elements\n2 2 1 2\n3 1 4 1\n1 1 2 3 4\n3 1 5 1\n2 1 2 3 4 1 2 3 4\n"
                "$EndElements\n",
       ":21:", "a clmg mesh holds tensor cells or simplices, not both"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    /* nul.msh holds its NUL: write the string with its terminator */
    size_t length = strlen(cases[k].text) + (strcmp(cases[k].name, "nul.msh") == 0);
    char *path = write_file(cases[k].name, cases[k].text, length);
    clmg_mesh mesh;
    memset(&mesh, 0xA5, sizeof mesh); /* the reader must clear it */
    clmg_error error = {{0}};
    clmg_status status = clmg_mesh_read_gmsh(path, &mesh, &error);
    char where[256];
    snprintf(where, sizeof where, "%s%s", cases[k].name, cases[k].line);
    if (status != CLMG_ERROR_PARSE || !strstr(error.message, where) ||
        !strstr(error.message, cases[k].words))
      fail_msg("%s: status %s, message '%s' (wanted '%s' and '%s')", cases[k].name,
               clmg_status_string(status), error.message, where, cases[k].words);
    clmg_mesh zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&mesh, &zero, sizeof mesh); /* nothing half-read */
    free(path);
  }
#undef HEADER22
#undef HEADER41
#undef SQUARE_NODES
  clmg_mesh mesh = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_mesh_read_gmsh("/nonexistent/mesh.msh", &mesh, &error), CLMG_ERROR_IO);
  assert_non_null(strstr(error.message, "/nonexistent/mesh.msh"));
  assert_int_equal(clmg_mesh_read_gmsh(NULL, &mesh, &error), CLMG_ERROR_INVALID_ARGUMENT);
}

/* The reader streams: a file of a header and a gigabyte of NUL bytes (a
 * sparse file), and /dev/zero, fail at their first NUL in a child whose
 * address space is 64 MB (the whole file was read first, 4.2 GB for
 * /dev/zero); a token of 300 bytes is refused at its line. The child is
 * skipped under AddressSanitizer, which reserves far more address space. */
/* In the child: the big file and /dev/zero, both stopped at their first NUL. */
static int read_nul_files(void *data) {
  const char *big = data;
  clmg_mesh mesh;
  clmg_error error;
  clmg_status status = clmg_mesh_read_gmsh(big, &mesh, &error);
  if (status != CLMG_ERROR_PARSE ||
      !strstr(error.message, "nul-gigabyte.msh:4: expected ASCII text, found a NUL byte"))
    return 1;
  if (access("/dev/zero", R_OK) == 0) {
    status = clmg_mesh_read_gmsh("/dev/zero", &mesh, &error);
    if (status != CLMG_ERROR_PARSE || !strstr(error.message, "/dev/zero:1: expected ASCII"))
      return 2;
  }
  return 0;
}

static void test_read_bounded(void **state) {
  (void)state;
  char *big = scratch_path("nul-gigabyte.msh");
  FILE *f = fopen(big, "wb");
  assert_non_null(f);
  fputs("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(truncate(big, (off_t)1 << 30), 0);
  test_in_limited_child(64u << 20, read_nul_files, big);
  remove(big);
  free(big);
  char text[512];
  int at = snprintf(text, sizeof text, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
  for (int k = 0; k < 300; ++k)
    text[at++] = '7';
  text[at++] = '\n';
  char *path = write_file("longtoken.msh", text, (size_t)at);
  clmg_mesh mesh;
  clmg_error error = {{0}};
  assert_int_equal(clmg_mesh_read_gmsh(path, &mesh, &error), CLMG_ERROR_PARSE);
  if (!strstr(error.message, "longtoken.msh:5: expected a number, a tag or a section name, found "
                             "a token of more than 255 bytes"))
    fail_msg("message '%s'", error.message);
  free(path);
}

/* Interface lines (faces of two cells) are accepted and ignored; a face
 * listed under two physical groups (2.2 repeats the element) keeps the
 * smaller tag. */
static void test_read_interface_and_repeated_faces(void **state) {
  (void)state;
  static const char *text = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                            "$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n"
                            "$EndNodes\n$Elements\n5\n"
                            "1 1 2 9 1 2 5\n"     /* the interface x = 1 */
                            "2 1 2 8 2 1 2\n"     /* bottom left, group 8 */
                            "3 1 2 4 2 1 2\n"     /* ... and group 4 */
                            "4 3 2 1 1 1 2 5 4\n" /* cells */
                            "5 3 2 1 1 2 3 6 5\n"
                            "$EndElements\n";
  clmg_mesh mesh = {0};
  read_ok("interface.msh", text, &mesh);
  assert_int_equal(mesh.num_boundary_faces, 6);
  assert_int_equal(faces_with_tag(&mesh, 9), 0);
  assert_int_equal(faces_with_tag(&mesh, 4), 1);
  assert_int_equal(faces_with_tag(&mesh, 8), 0);
  assert_int_equal(faces_with_tag(&mesh, 1), 5);
  clmg_mesh_free(&mesh);
}

/* Numbers are read and written with a decimal point whatever the
 * application's locale; skipped where no decimal-comma locale exists. */
static void test_decimal_comma_locale(void **state) {
  (void)state;
  static const char *candidates[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                     "fr_FR.utf8",  "de_DE",      "fr_FR"};
  int found = 0;
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !found; ++i)
    found = setlocale(LC_NUMERIC, candidates[i]) && localeconv()->decimal_point[0] == ',';
  if (!found) {
    setlocale(LC_NUMERIC, "C");
    skip();
  }
  static const char *text = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                            "$Nodes\n4\n1 0 0 0\n2 0.5 0 0\n3 0.5 0.25 0\n4 0 0.25 0\n$EndNodes\n"
                            "$Elements\n1\n1 3 0 1 2 3 4\n$EndElements\n";
  clmg_mesh mesh = {0};
  char *path = write_file("locale.msh", text, strlen(text));
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_read_gmsh(path, &mesh, &error);
  double x = status == CLMG_SUCCESS ? mesh.coords[2] : 0.0;
  char *vtu = scratch_path("locale.vtu");
  clmg_status written = status == CLMG_SUCCESS ? clmg_mesh_write_vtu_encoded(vtu, &mesh, 1, NULL, 0,
                                                                             CLMG_VTU_ASCII, &error)
                                               : status;
  setlocale(LC_NUMERIC, "C");
  if (status != CLMG_SUCCESS || written != CLMG_SUCCESS)
    fail_msg("under a decimal-comma locale: %s", error.message);
  assert_true(x == 0.5);
  FILE *f = fopen(vtu, "r");
  assert_non_null(f);
  char line[256];
  int point_seen = 0;
  while (fgets(line, sizeof line, f))
    point_seen |= strncmp(line, "0.5 0 0", 7) == 0;
  fclose(f);
  assert_true(point_seen);
  free(vtu);
  free(path);
  clmg_mesh_free(&mesh);
}

/* ---- writing VTU ---- */

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long size = ftell(f);
  assert_true(size >= 0);
  assert_int_equal(fseek(f, 0, SEEK_SET), 0);
  char *text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
  text[size] = '\0';
  fclose(f);
  return text;
}

/* The numbers of the DataArray whose opening tag contains `key` (malloc'ed,
 * count in *count). */
static double *array_values(const char *text, const char *key, size_t *count) {
  const char *start = strstr(text, key);
  if (!start)
    fail_msg("no DataArray with %s", key);
  start = strchr(start, '>') + 1;
  const char *end = strstr(start, "</DataArray>");
  assert_non_null(end);
  size_t capacity = 1024, n = 0;
  double *values = malloc(capacity * sizeof *values);
  assert_non_null(values);
  for (const char *c = start; c < end;) {
    char *next = NULL;
    double value = strtod(c, &next);
    if (next == c || next > end)
      break;
    if (n == capacity) {
      capacity *= 2;
      values = realloc(values, capacity * sizeof *values);
      assert_non_null(values);
    }
    values[n++] = value;
    c = next;
  }
  *count = n;
  return values;
}

/* VTK's documented parametric coordinates of its cells' nodes (vtkQuad,
 * vtkBiQuadraticQuad, vtkHexahedron, vtkTriQuadraticHexahedron). */
static const double vtk_quad_pcoords[9][2] = {{0, 0},  {1, 0},  {1, 1},  {0, 1},  {.5, 0},
                                              {1, .5}, {.5, 1}, {0, .5}, {.5, .5}};
static const double vtk_hex_pcoords[27][3] = {
    {0, 0, 0},   {1, 0, 0},   {1, 1, 0},   {0, 1, 0},   {0, 0, 1},   {1, 0, 1},   {1, 1, 1},
    {0, 1, 1},   {.5, 0, 0},  {1, .5, 0},  {.5, 1, 0},  {0, .5, 0},  {.5, 0, 1},  {1, .5, 1},
    {.5, 1, 1},  {0, .5, 1},  {0, 0, .5},  {1, 0, .5},  {1, 1, .5},  {0, 1, .5},  {0, .5, .5},
    {1, .5, .5}, {.5, 0, .5}, {.5, 1, .5}, {.5, .5, 0}, {.5, .5, 1}, {.5, .5, .5}};

/* Writes mesh at degree with a random field and checks the file: counts,
 * types, offsets, the field's values bit for bit, the cell data, VTK's
 * orientation of the corners and, for every node, that it sits where VTK's
 * node order puts it under the map of the cell's corners. */
static void check_vtu(const clmg_mesh *mesh, int degree, const char *name) {
  clmg_error error = {{0}};
  int32_t *cell_nodes = NULL;
  size_t num_nodes = 0;
  CHECK_OK(error,
           clmg_mesh_lagrange_nodes(mesh, degree, &cell_nodes, &num_nodes, NULL, NULL, &error));
  free(cell_nodes);
  size_t expected_nodes = 1;
  if (mesh->num_cells == 16 && mesh->dim == 2) /* clmg_mesh_box(2, 4): (4 degree + 1)^2 */
    expected_nodes = (size_t)(4 * degree + 1) * (size_t)(4 * degree + 1);
  else if (mesh->num_cells == 8 && mesh->dim == 3) /* clmg_mesh_box(3, 2) */
    expected_nodes = (size_t)(2 * degree + 1) * (size_t)(2 * degree + 1) * (size_t)(2 * degree + 1);
  else
    fail_msg("unexpected mesh");
  assert_int_equal(num_nodes, expected_nodes);
  double *u = malloc(num_nodes * sizeof *u);
  assert_non_null(u);
  for (size_t i = 0; i < num_nodes; ++i)
    u[i] = rng_uniform() * exp(20.0 * rng_uniform());
  clmg_mesh_field fields[2] = {{"u", u}, {"a<b & \"c\"", u}};
  char *path = scratch_path(name);
  CHECK_OK(error,
           clmg_mesh_write_vtu_encoded(path, mesh, degree, fields, 2, CLMG_VTU_ASCII, &error));
  char *text = read_text(path);

  char expected[128];
  snprintf(expected, sizeof expected, "<Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">",
           num_nodes, mesh->num_cells);
  assert_non_null(strstr(text, expected));
  assert_non_null(strstr(text, "<VTKFile type=\"UnstructuredGrid\""));
  assert_non_null(strstr(text, "Name=\"a&lt;b &amp; &quot;c&quot;\""));
  const int dim = mesh->dim;
  const size_t per_cell = dim == 2 ? (degree == 1 ? 4 : 9) : (degree == 1 ? 8 : 27);
  const int type = dim == 2 ? (degree == 1 ? 9 : 28) : (degree == 1 ? 12 : 29);
  size_t count = 0;
  double *values = array_values(text, "Name=\"u\"", &count);
  assert_int_equal(count, num_nodes);
  assert_memory_equal(values, u, num_nodes * sizeof *u); /* %.17g reads back exactly */
  free(values);
  values = array_values(text, "Name=\"cell\"", &count);
  assert_int_equal(count, mesh->num_cells);
  for (size_t c = 0; c < count; ++c)
    assert_true(values[c] == (double)c);
  free(values);
  values = array_values(text, "Name=\"types\"", &count);
  assert_int_equal(count, mesh->num_cells);
  for (size_t c = 0; c < count; ++c)
    assert_true(values[c] == type);
  free(values);
  values = array_values(text, "Name=\"offsets\"", &count);
  assert_int_equal(count, mesh->num_cells);
  for (size_t c = 0; c < count; ++c)
    assert_true(values[c] == (double)((c + 1) * per_cell));
  free(values);
  size_t num_points = 0, num_connectivity = 0;
  double *points = array_values(text, "NumberOfComponents=\"3\"", &num_points);
  assert_int_equal(num_points, 3 * num_nodes);
  double *connectivity = array_values(text, "Name=\"connectivity\"", &num_connectivity);
  assert_int_equal(num_connectivity, per_cell * mesh->num_cells);
  int *used = calloc(num_nodes, sizeof *used);
  assert_non_null(used);
  for (size_t c = 0; c < mesh->num_cells; ++c) {
    const double *nodes = connectivity + c * per_cell;
    for (size_t k = 0; k < per_cell; ++k) {
      assert_true(nodes[k] >= 0 && nodes[k] < (double)num_nodes);
      used[(size_t)nodes[k]] = 1;
    }
    const double *x[8];
    for (int corner = 0; corner < (1 << dim); ++corner)
      x[corner] = points + 3 * (size_t)nodes[corner];
    /* VTK's orientation: quads counter-clockwise, hexahedra with the
     * bottom face counter-clockwise seen from the top */
    double e[3][3];
    const int neighbours[3] = {1, 3, 4};
    for (int a = 0; a < 3; ++a)
      for (int d = 0; d < 3; ++d)
        e[a][d] = a < dim ? x[neighbours[a]][d] - x[0][d] : (d == 2);
    double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                 e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
                 e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
    assert_true(det > 0);
    for (size_t k = 0; k < per_cell; ++k) {
      const double *p = dim == 2 ? vtk_quad_pcoords[k] : vtk_hex_pcoords[k];
      double where[3] = {0, 0, 0};
      for (int corner = 0; corner < (1 << dim); ++corner) {
        const double *q = dim == 2 ? vtk_quad_pcoords[corner] : vtk_hex_pcoords[corner];
        double weight = 1;
        for (int d = 0; d < dim; ++d)
          weight *= q[d] == 1 ? p[d] : 1 - p[d];
        for (int d = 0; d < 3; ++d)
          where[d] += weight * x[corner][d];
      }
      const double *actual = points + 3 * (size_t)nodes[k];
      for (int d = 0; d < 3; ++d)
        if (fabs(actual[d] - where[d]) > 1e-12)
          fail_msg("%s: cell %zu, VTK node %zu at %g, expected %g (coordinate %d)", name, c, k,
                   actual[d], where[d], d);
    }
  }
  for (size_t i = 0; i < num_nodes; ++i)
    assert_true(used[i]);
  free(used);
  free(points);
  free(connectivity);
  free(text);
  free(path);
  free(u);
}

/* ---- binary VTU ---- */

/* An appended array of a binary file: its type, its offset attribute and the
 * block it points to (UInt64 byte count, then the values). */
typedef struct appended_array {
  char type[16];
  uint64_t offset, bytes;
  const unsigned char *values;
} appended_array;

/* Finds the DataArray whose tag contains key, checks it is appended and its
 * block lies inside the data, and returns it. */
static appended_array find_appended(const unsigned char *file, size_t size, const char *key) {
  const char *xml = (const char *)file;
  const char *data_start = strstr(xml, "<AppendedData encoding=\"raw\">\n_");
  assert_non_null(data_start);
  const unsigned char *base =
      (const unsigned char *)data_start + strlen("<AppendedData encoding=\"raw\">\n_");
  const char *tag = strstr(xml, key);
  if (!tag || tag > data_start)
    fail_msg("no DataArray with %s before the appended data", key);
  while (tag > xml && strncmp(tag, "<DataArray", 10) != 0)
    --tag;
  const char *tag_end = strchr(tag, '>');
  assert_non_null(tag_end);
  appended_array a;
  memset(&a, 0, sizeof a);
  const char *type = strstr(tag, "type=\"");
  const char *format = strstr(tag, "format=\"appended\"");
  const char *offset = strstr(tag, "offset=\"");
  if (!type || type > tag_end || !format || format > tag_end || !offset || offset > tag_end)
    fail_msg("DataArray %s: no type, appended format or offset", key);
  sscanf(type, "type=\"%15[^\"]\"", a.type);
  a.offset = strtoull(offset + 8, NULL, 10);
  size_t at = (size_t)(base - file) + (size_t)a.offset;
  if (at + 8 > size)
    fail_msg("DataArray %s: offset %llu beyond the file", key, (unsigned long long)a.offset);
  memcpy(&a.bytes, file + at, 8);
  if (at + 8 + a.bytes > size)
    fail_msg("DataArray %s: %llu bytes beyond the file", key, (unsigned long long)a.bytes);
  a.values = file + at + 8;
  return a;
}

/* Writes a mesh with two fields in both encodings and checks that the binary
 * file holds the ASCII file's arrays bit for bit, with consecutive blocks of
 * the right sizes and the XML header that tools grep (NumberOfPoints). */
static void check_binary_vtu(const clmg_mesh *mesh, int degree, const char *name) {
  clmg_error error = {{0}};
  int32_t *cell_nodes = NULL;
  size_t num_nodes = 0;
  CHECK_OK(error,
           clmg_mesh_lagrange_nodes(mesh, degree, &cell_nodes, &num_nodes, NULL, NULL, &error));
  free(cell_nodes);
  double *u = malloc(num_nodes * sizeof *u), *v = malloc(num_nodes * sizeof *v);
  assert_true(u && v);
  for (size_t i = 0; i < num_nodes; ++i) {
    u[i] = rng_uniform() * exp(20.0 * rng_uniform());
    v[i] = -(double)i;
  }
  clmg_mesh_field fields[2] = {{"u", u}, {"v", v}};
  char ascii_name[64];
  snprintf(ascii_name, sizeof ascii_name, "ascii-%s", name);
  char *binary_path = scratch_path(name), *ascii_path = scratch_path(ascii_name);
  CHECK_OK(error, clmg_mesh_write_vtu(binary_path, mesh, degree, fields, 2, &error));
  CHECK_OK(error, clmg_mesh_write_vtu_encoded(ascii_path, mesh, degree, fields, 2, CLMG_VTU_ASCII,
                                              &error));
  size_t size = 0;
  unsigned char *file = (unsigned char *)test_read_file(binary_path, &size);
  char *text = read_text(ascii_path);

  const char *xml = (const char *)file;
  assert_non_null(strstr(xml, "header_type=\"UInt64\""));
  assert_non_null(strstr(xml, "byte_order=\"LittleEndian\"") ||
                  strstr(xml, "byte_order=\"BigEndian\""));
  char piece[128];
  snprintf(piece, sizeof piece, "<Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">", num_nodes,
           mesh->num_cells);
  assert_non_null(strstr(xml, piece));
  assert_null(strstr(xml, "format=\"ascii\""));

  /* every array, in file order, with its element size and count */
  const size_t cells = mesh->num_cells;
  const size_t simplex_nodes = (size_t)mesh->dim + 1 + (degree == 2 ? (mesh->dim == 2 ? 3 : 6) : 0);
  const size_t per_cell = mesh->cell_type == CLMG_CELL_SIMPLEX ? simplex_nodes
                          : mesh->dim == 2                     ? (degree == 1 ? 4 : 9)
                                                               : (degree == 1 ? 8 : 27);
  struct {
    const char *key, *type;
    size_t element, count;
  } arrays[] = {
      {"Name=\"u\"", "Float64", 8, num_nodes},
      {"Name=\"v\"", "Float64", 8, num_nodes},
      {"Name=\"cell\"", "Int32", 4, cells},
      {"Name=\"material\"", "Int32", 4, cells}, /* only where the mesh has materials */
      {"NumberOfComponents=\"3\"", "Float64", 8, 3 * num_nodes},
      {"Name=\"connectivity\"", "Int32", 4, per_cell * cells},
      {"Name=\"offsets\"", "Int32", 4, cells}, /* Int64 only beyond 2^31 entries */
      {"Name=\"types\"", "UInt8", 1, cells},
  };
  if (!mesh->cell_material)
    assert_null(strstr(xml, "Name=\"material\""));
  uint64_t expected_offset = 0;
  const unsigned char *end_of_blocks = NULL;
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) {
    if (k == 3 && !mesh->cell_material)
      continue;
    appended_array a = find_appended(file, size, arrays[k].key);
    assert_string_equal(a.type, arrays[k].type);
    if (a.offset != expected_offset)
      fail_msg("%s: %s at offset %llu, expected %llu", name, arrays[k].key,
               (unsigned long long)a.offset, (unsigned long long)expected_offset);
    assert_int_equal(a.bytes, arrays[k].element * arrays[k].count);
    expected_offset += 8 + a.bytes;
    end_of_blocks = a.values + a.bytes;
    /* the same numbers as the ASCII file */
    size_t count = 0;
    double *reference = array_values(text, arrays[k].key, &count);
    assert_int_equal(count, arrays[k].count);
    for (size_t i = 0; i < count; ++i) {
      double value = 0;
      if (arrays[k].element == 1) {
        value = a.values[i];
      } else if (strcmp(a.type, "Int32") == 0) {
        int32_t x;
        memcpy(&x, a.values + 4 * i, 4);
        value = x;
      } else if (strcmp(a.type, "Int64") == 0) {
        int64_t x;
        memcpy(&x, a.values + 8 * i, 8);
        value = (double)x;
      } else {
        memcpy(&value, a.values + 8 * i, 8);
      }
      if (memcmp(&value, &reference[i], sizeof value) != 0)
        fail_msg("%s: %s[%zu] = %.17g in binary, %.17g in ASCII", name, arrays[k].key, i, value,
                 reference[i]);
    }
    free(reference);
  }
  /* a few values against the fields themselves */
  appended_array a = find_appended(file, size, "Name=\"u\"");
  double first, last;
  memcpy(&first, a.values, 8);
  memcpy(&last, a.values + 8 * (num_nodes - 1), 8);
  assert_true(first == u[0] && last == u[num_nodes - 1]);
  /* the blocks end the data */
  static const char tail[] = "\n</AppendedData>\n</VTKFile>\n";
  assert_int_equal((size_t)(file + size - end_of_blocks), sizeof tail - 1);
  assert_memory_equal(end_of_blocks, tail, sizeof tail - 1);
  free(file);
  free(text);
  free(binary_path);
  free(ascii_path);
  free(u);
  free(v);
}

/* A write that fails half-way (the file size limit) leaves the earlier file
 * and no temporary file behind. */
static void check_failed_write_keeps_file(const clmg_mesh *mesh) {
  char *path = scratch_path("kept.vtu");
  static const char earlier[] = "an earlier file\n";
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(earlier, 1, sizeof earlier - 1, f), sizeof earlier - 1);
  assert_int_equal(fclose(f), 0);

  struct rlimit saved;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
  void (*previous)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 2048; /* the mesh's file is larger */
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_write_vtu(path, mesh, 2, NULL, 0, &error);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
  signal(SIGXFSZ, previous);
  assert_int_equal(status, CLMG_ERROR_IO);
  assert_non_null(strstr(error.message, path));

  char *text = read_text(path);
  assert_string_equal(text, earlier);
  free(text);
  DIR *dir = opendir(scratch);
  assert_non_null(dir);
  for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
    if (strncmp(entry->d_name, "kept.vtu.", 9) == 0)
      fail_msg("a temporary file was left behind: %s", entry->d_name);
  closedir(dir);

  /* and a write that works replaces it */
  CHECK_OK(error, clmg_mesh_write_vtu(path, mesh, 2, NULL, 0, &error));
  size_t size = 0;
  unsigned char *bytes = (unsigned char *)test_read_file(path, &size);
  assert_true(size > 2048);
  assert_non_null(strstr((const char *)bytes, "<VTKFile"));
  free(bytes);
  free(path);
}

/* Simplices as VTK_TRIANGLE / VTK_TETRA (degree 1) and their quadratic
 * kinds (degree 2, clmg's P2 order is VTK's), the material as cell data:
 * the ASCII file parsed back. */
static void check_simplex_vtu(const clmg_mesh *mesh, int degree, const char *name) {
  clmg_error error = {{0}};
  int32_t *cell_nodes = NULL;
  double *coords = NULL;
  size_t num_nodes = 0;
  CHECK_OK(error,
           clmg_mesh_lagrange_nodes(mesh, degree, &cell_nodes, &num_nodes, &coords, NULL, &error));
  const size_t dim = (size_t)mesh->dim, cells = mesh->num_cells;
  const size_t per_cell = dim + 1 + (degree == 2 ? (dim == 2 ? 3 : 6) : 0);
  const int type = dim == 2 ? (degree == 1 ? 5 : 22) : (degree == 1 ? 10 : 24);
  char *path = scratch_path(name);
  CHECK_OK(error, clmg_mesh_write_vtu_encoded(path, mesh, degree, NULL, 0, CLMG_VTU_ASCII, &error));
  char *text = read_text(path);
  char piece[128];
  snprintf(piece, sizeof piece, "<Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">", num_nodes,
           cells);
  assert_non_null(strstr(text, piece));
  size_t count = 0;
  double *types = array_values(text, "Name=\"types\"", &count);
  assert_int_equal(count, cells);
  for (size_t c = 0; c < cells; ++c)
    assert_int_equal((int)types[c], type);
  double *offsets = array_values(text, "Name=\"offsets\"", &count);
  assert_int_equal(count, cells);
  for (size_t c = 0; c < cells; ++c)
    assert_int_equal((size_t)offsets[c], (c + 1) * per_cell);
  double *connectivity = array_values(text, "Name=\"connectivity\"", &count);
  assert_int_equal(count, cells * per_cell);
  for (size_t i = 0; i < count; ++i)
    assert_int_equal((int32_t)connectivity[i], cell_nodes[i]);
  double *points = array_values(text, "NumberOfComponents=\"3\"", &count);
  assert_int_equal(count, 3 * num_nodes);
  for (size_t i = 0; i < num_nodes; ++i)
    for (size_t d = 0; d < 3; ++d)
      assert_true(points[3 * i + d] == (d < dim ? coords[i * dim + d] : 0.0));
  if (mesh->cell_material) {
    double *material = array_values(text, "Name=\"material\"", &count);
    assert_int_equal(count, cells);
    for (size_t c = 0; c < cells; ++c)
      assert_int_equal((int32_t)material[c], mesh->cell_material[c]);
    free(material);
  } else {
    assert_null(strstr(text, "Name=\"material\""));
  }
  free(types);
  free(offsets);
  free(connectivity);
  free(points);
  free(text);
  free(path);
  free(cell_nodes);
  free(coords);
}

/* A 2-vector node field and a scalar cell field (clmg_mesh_write_vtu_fields)
 * in both encodings: the vector becomes 3 components with z = 0 and is
 * named as the point data's Vectors, the cell field comes as cell data
 * before the cell index, both with the values given; and a .pvd lists its
 * files and times. */
static void test_write_vtu_vector_and_cell_fields(void **state) {
  (void)state;
  clmg_mesh mesh = {0};
  clmg_error error = {{0}};
  CHECK_OK(error, clmg_mesh_box_simplices(2, 3, 0.1, 5, &mesh, &error));
  size_t nodes = mesh.num_vertices, cells = mesh.num_cells;
  double *velocity = malloc(2 * nodes * sizeof *velocity),
         *pressure = malloc(cells * sizeof *pressure);
  assert_true(velocity && pressure);
  for (size_t i = 0; i < 2 * nodes; ++i)
    velocity[i] = 2 * rng_uniform() - 1;
  for (size_t c = 0; c < cells; ++c)
    pressure[c] = rng_uniform() * 1e3;
  const clmg_vtu_field fields[2] = {{"pressure", pressure, 1, 1}, {"velocity", velocity, 2, 0}};
  char *binary = scratch_path("fields.vtu"), *ascii = scratch_path("fields-ascii.vtu");
  CHECK_OK(error, clmg_mesh_write_vtu_fields(binary, &mesh, 1, fields, 2, CLMG_VTU_BINARY, &error));
  CHECK_OK(error, clmg_mesh_write_vtu_fields(ascii, &mesh, 1, fields, 2, CLMG_VTU_ASCII, &error));
  size_t size = 0;
  unsigned char *file = (unsigned char *)test_read_file(binary, &size);
  const char *xml = (const char *)file;
  assert_non_null(strstr(xml, "<PointData Vectors=\"velocity\">"));
  const char *point_data = strstr(xml, "<PointData"), *cell_data = strstr(xml, "<CellData");
  const char *v_tag = strstr(xml, "Name=\"velocity\""), *p_tag = strstr(xml, "Name=\"pressure\"");
  const char *cell_tag = strstr(xml, "Name=\"cell\"");
  assert_true(point_data && cell_data && v_tag && p_tag && cell_tag);
  assert_true(point_data < v_tag && v_tag < cell_data && cell_data < p_tag && p_tag < cell_tag);
  appended_array v = find_appended(file, size, "Name=\"velocity\"");
  appended_array p = find_appended(file, size, "Name=\"pressure\"");
  assert_int_equal(v.bytes, 3 * nodes * sizeof(double));
  assert_int_equal(p.bytes, cells * sizeof(double));
  for (size_t i = 0; i < nodes; ++i) {
    double xyz[3];
    memcpy(xyz, v.values + 24 * i, sizeof xyz);
    assert_true(xyz[0] == velocity[2 * i] && xyz[1] == velocity[2 * i + 1] && xyz[2] == 0.0);
  }
  assert_memory_equal(p.values, pressure, cells * sizeof(double));
  /* the ASCII file: the same numbers, three to a line for the vector */
  char *text = read_text(ascii);
  const char *values = strstr(strstr(text, "Name=\"velocity\""), ">\n") + 2;
  for (size_t i = 0; i < nodes; ++i) {
    char *end = NULL;
    double x = strtod(values, &end), y = strtod(end, &end), z = strtod(end, &end);
    assert_true(x == velocity[2 * i] && y == velocity[2 * i + 1] && z == 0.0);
    values = end;
  }
  /* a .pvd of two files */
  char *pvd = scratch_path("series.pvd");
  const char *files[2] = {"a_0001.vtu", "a&b_0002.vtu"};
  const double times[2] = {0.5, 1.25};
  CHECK_OK(error, clmg_write_pvd(pvd, files, times, 2, &error));
  char *series = read_text(pvd);
  assert_non_null(strstr(series, "<VTKFile type=\"Collection\""));
  assert_non_null(strstr(series, "timestep=\"0.5\" part=\"0\" file=\"a_0001.vtu\""));
  assert_non_null(strstr(series, "timestep=\"1.25\" part=\"0\" file=\"a&amp;b_0002.vtu\""));
  free(series);
  free(pvd);
  free(text);
  free(file);
  free(binary);
  free(ascii);
  free(velocity);
  free(pressure);
  clmg_mesh_free(&mesh);
}

static void test_write_vtu_simplices(void **state) {
  (void)state;
  clmg_error error = {{0}};
  clmg_mesh tets = {0}, triangles = {0}, quads = {0};
  CHECK_OK(error, clmg_mesh_blobs(3, 0, &tets, &error));
  CHECK_OK(error, clmg_mesh_box_simplices(2, 4, 0.2, 3, &triangles, &error));
  CHECK_OK(error, clmg_mesh_box(2, 4, 0.0, 3, &quads, &error));
  check_simplex_vtu(&tets, 1, "tets-p1.vtu");
  check_simplex_vtu(&tets, 2, "tets-p2.vtu");
  check_simplex_vtu(&triangles, 1, "triangles-p1.vtu");
  check_simplex_vtu(&triangles, 2, "triangles-p2.vtu");
  check_binary_vtu(&tets, 1, "bin-tets-p1.vtu");
  check_binary_vtu(&tets, 2, "bin-tets-p2.vtu");
  check_binary_vtu(&triangles, 1, "bin-triangles-p1.vtu");
  /* a tensor mesh with materials writes them too */
  quads.cell_material = malloc(quads.num_cells * sizeof *quads.cell_material);
  assert_non_null(quads.cell_material);
  for (size_t k = 0; k < quads.num_cells; ++k)
    quads.cell_material[k] = (int32_t)(1 + k % 4);
  check_binary_vtu(&quads, 1, "bin-quads-material.vtu");
  char *path = scratch_path("quads-material.vtu");
  CHECK_OK(error, clmg_mesh_write_vtu_encoded(path, &quads, 2, NULL, 0, CLMG_VTU_ASCII, &error));
  char *text = read_text(path);
  size_t count = 0;
  double *material = array_values(text, "Name=\"material\"", &count);
  assert_int_equal(count, quads.num_cells);
  assert_int_equal((int)material[5], 2);
  free(material);
  free(text);
  free(path);
  /* a material id 0 is refused */
  quads.cell_material[3] = 0;
  path = scratch_path("bad-material.vtu");
  assert_int_equal(clmg_mesh_write_vtu(path, &quads, 1, NULL, 0, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "cell 3 has material 0"));
  free(path);
  clmg_mesh_free(&tets);
  clmg_mesh_free(&triangles);
  clmg_mesh_free(&quads);
}

/* ---- simplices ---- */

/* det[v1 - v0, ...] of simplex k. */
static double simplex_det(const clmg_mesh *mesh, size_t k) {
  const size_t dim = (size_t)mesh->dim;
  const int32_t *c = mesh->cells + k * (dim + 1);
  double e[3][3] = {{0}};
  for (size_t i = 0; i < dim; ++i)
    for (size_t d = 0; d < dim; ++d)
      e[i][d] = mesh->coords[(size_t)c[i + 1] * dim + d] - mesh->coords[(size_t)c[0] * dim + d];
  if (dim == 2)
    return e[0][0] * e[1][1] - e[0][1] * e[1][0];
  return e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
         e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
         e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
}

static size_t cells_of_material(const clmg_mesh *mesh, int32_t material) {
  size_t count = 0;
  for (size_t k = 0; k < mesh->num_cells; ++k)
    count += clmg_mesh_cell_material(mesh, k) == material;
  return count;
}

/* tris_*.msh: [0,3] x [0,2] in 12 triangles, materials 5 (x < 1) and 6,
 * lines 11 (bottom), 12 (right), 13 (top), the left side unlisted (tag 1);
 * tets_*.msh: [0,2]^3 in 48 Kuhn tetrahedra, materials 7 (z < 1) and 8,
 * triangles 21 (z = 0) and 22 (z = 2), the rest unlisted. A third of the
 * cells come inverted and are reoriented; both versions read alike. */
static void test_read_simplices_data(void **state) {
  (void)state;
  for (int dim = 2; dim <= 3; ++dim) {
    clmg_mesh a = {0}, b = {0};
    read_data_ok(dim == 2 ? "tris_22.msh" : "tets_22.msh", &a);
    read_data_ok(dim == 2 ? "tris_41.msh" : "tets_41.msh", &b);
    assert_same_mesh(&a, &b);
    assert_int_equal(a.cell_type, CLMG_CELL_SIMPLEX);
    assert_int_equal(b.cell_type, CLMG_CELL_SIMPLEX);
    assert_non_null(a.cell_material);
    assert_memory_equal(a.cell_material, b.cell_material, a.num_cells * sizeof(int32_t));
    assert_int_equal(a.dim, dim);
    double total = 0.0;
    for (size_t k = 0; k < a.num_cells; ++k) {
      double det = simplex_det(&a, k);
      assert_true(det > 0.0);
      total += det;
    }
    if (dim == 2) {
      assert_int_equal(a.num_vertices, 12);
      assert_int_equal(a.num_cells, 12);
      assert_int_equal(cells_of_material(&a, 5), 4);
      assert_int_equal(cells_of_material(&a, 6), 8);
      assert_int_equal(a.num_boundary_faces, 10);
      assert_int_equal(faces_with_tag(&a, 11), 3);
      assert_int_equal(faces_with_tag(&a, 12), 2);
      assert_int_equal(faces_with_tag(&a, 13), 3);
      assert_int_equal(faces_with_tag(&a, 1), 2);
      for (size_t f = 0; f < a.num_boundary_faces; ++f)
        if (a.boundary_face_tag[f] == 1)
          assert_true(face_on_plane(&a, f, 0, 0.0));
      assert_true(total == 2.0 * 6.0);
    } else {
      assert_int_equal(a.num_vertices, 27);
      assert_int_equal(a.num_cells, 48);
      assert_int_equal(cells_of_material(&a, 7), 24);
      assert_int_equal(cells_of_material(&a, 8), 24);
      assert_int_equal(a.num_boundary_faces, 48);
      assert_int_equal(faces_with_tag(&a, 21), 8);
      assert_int_equal(faces_with_tag(&a, 22), 8);
      assert_int_equal(faces_with_tag(&a, 1), 32);
      for (size_t f = 0; f < a.num_boundary_faces; ++f) {
        if (a.boundary_face_tag[f] == 21)
          assert_true(face_on_plane(&a, f, 2, 0.0));
        if (a.boundary_face_tag[f] == 22)
          assert_true(face_on_plane(&a, f, 2, 2.0));
      }
      assert_true(total == 6.0 * 8.0);
    }
    /* refinement keeps materials and tags */
    clmg_mesh fine = {0};
    clmg_error error = {{0}};
    CHECK_OK(error, clmg_mesh_refine(&a, &fine, &error));
    size_t children = (size_t)1 << dim;
    assert_int_equal(cells_of_material(&fine, dim == 2 ? 5 : 7),
                     children * cells_of_material(&a, dim == 2 ? 5 : 7));
    assert_int_equal(faces_with_tag(&fine, dim == 2 ? 11 : 21),
                     children / 2 * faces_with_tag(&a, dim == 2 ? 11 : 21));
    clmg_mesh_free(&fine);
    clmg_mesh_free(&a);
    clmg_mesh_free(&b);
  }
  /* tensor cells get materials too: quads_*.msh's physical surface 100 */
  clmg_mesh quads = {0};
  read_data_ok("quads_41.msh", &quads);
  assert_non_null(quads.cell_material);
  assert_int_equal(cells_of_material(&quads, 100), quads.num_cells);
  clmg_mesh_free(&quads);
}

static void test_write_vtu_binary(void **state) {
  (void)state;
  clmg_mesh square = {0}, cube = {0};
  clmg_error error = {{0}};
  CHECK_OK(error, clmg_mesh_box(2, 4, 0.25, 21, &square, &error));
  CHECK_OK(error, clmg_mesh_box(3, 2, 0.25, 22, &cube, &error));
  check_binary_vtu(&square, 1, "bin-square-q1.vtu");
  check_binary_vtu(&square, 2, "bin-square-q2.vtu");
  check_binary_vtu(&cube, 1, "bin-cube-q1.vtu");
  check_binary_vtu(&cube, 2, "bin-cube-q2.vtu");
  check_failed_write_keeps_file(&cube);
  clmg_mesh_free(&square);
  clmg_mesh_free(&cube);
}

static void test_write_vtu(void **state) {
  (void)state;
  clmg_mesh square = {0}, cube = {0};
  clmg_error error = {{0}};
  CHECK_OK(error, clmg_mesh_box(2, 4, 0.25, 11, &square, &error));
  CHECK_OK(error, clmg_mesh_box(3, 2, 0.25, 12, &cube, &error));
  check_vtu(&square, 1, "square-q1.vtu");
  check_vtu(&square, 2, "square-q2.vtu");
  check_vtu(&cube, 1, "cube-q1.vtu");
  check_vtu(&cube, 2, "cube-q2.vtu");

  /* no fields: still a complete file */
  char *path = scratch_path("nofields.vtu");
  CHECK_OK(error, clmg_mesh_write_vtu_encoded(path, &square, 1, NULL, 0, CLMG_VTU_ASCII, &error));
  char *text = read_text(path);
  assert_non_null(strstr(text, "<PointData>"));
  assert_non_null(strstr(text, "</VTKFile>"));
  free(text);
  free(path);
  path = scratch_path("nofields-binary.vtu");
  CHECK_OK(error, clmg_mesh_write_vtu(path, &square, 1, NULL, 0, &error));
  size_t size = 0;
  unsigned char *bytes = (unsigned char *)test_read_file(path, &size);
  assert_non_null(strstr((const char *)bytes, "<PointData>")); /* in the XML, before the data */
  assert_true(size > 12 && memcmp(bytes + size - 11, "</VTKFile>\n", 11) == 0);
  free(bytes);
  free(path);

  /* an unwritable path is an I/O error naming it and the reason */
  double u[1] = {0};
  clmg_mesh_field field = {"u", u};
  assert_int_equal(clmg_mesh_write_vtu("/nonexistent/dir/out.vtu", &square, 1, &field, 1, &error),
                   CLMG_ERROR_IO);
  assert_non_null(strstr(error.message, "/nonexistent/dir/out.vtu"));
  assert_non_null(strstr(error.message, "No such file"));
  /* bad arguments */
  assert_int_equal(clmg_mesh_write_vtu("x.vtu", &square, 3, NULL, 0, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  field.name = NULL;
  assert_int_equal(clmg_mesh_write_vtu("x.vtu", &square, 1, &field, 1, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(
      clmg_mesh_write_vtu_encoded("x.vtu", &square, 1, NULL, 0, (clmg_vtu_encoding)7, &error),
      CLMG_ERROR_INVALID_ARGUMENT);
  clmg_mesh_free(&square);
  clmg_mesh_free(&cube);
}

static int setup(void **state) {
  (void)state;
  scratch = make_tmpdir("mesh_io");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  remove_tree(scratch);
  return 0;
}

int main(void) {
  rng_seed(20261122);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_quads_data),
      cmocka_unit_test(test_read_hexes_data),
      cmocka_unit_test(test_read_quads_both_versions),
      cmocka_unit_test(test_read_many_entities),
      cmocka_unit_test(test_read_extreme_scales),
      cmocka_unit_test(test_read_left_handed_hex),
      cmocka_unit_test(test_read_hex_and_refine),
      cmocka_unit_test(test_malformed_files),
      cmocka_unit_test(test_read_bounded),
      cmocka_unit_test(test_read_interface_and_repeated_faces),
      cmocka_unit_test(test_decimal_comma_locale),
      cmocka_unit_test(test_write_vtu),
      cmocka_unit_test(test_write_vtu_binary),
      cmocka_unit_test(test_write_vtu_simplices),
      cmocka_unit_test(test_write_vtu_vector_and_cell_fields),
      cmocka_unit_test(test_read_simplices_data),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("mesh_io", tests, setup, teardown);
}
