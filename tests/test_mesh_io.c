/* Mesh files: the Gmsh reader (formats 2.2 and 4.1, quadrilaterals and
 * hexahedra, sparse node tags, physical and elementary tags, reorientation
 * of clockwise cells, boundary faces the file omits) and its errors
 * (FILE:LINE and what was expected), and the VTU writer (Q1 and Q2 cells,
 * point and cell data) read back as text. The files are written by the
 * tests into a scratch directory. */
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

static char *scratch;

static char *write_file(const char *name, const char *text) {
  size_t length = strlen(scratch) + strlen(name) + 2;
  char *path = malloc(length);
  assert_non_null(path);
  snprintf(path, length, "%s/%s", scratch, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
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
                                  "2 2 3 2\n3 10 20 50 40\n4 20 50 60 30\n"
                                  "$EndElements\n";

static const char *unit_hex_22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                 "$Nodes\n8\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n"
                                 "5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n$EndNodes\n"
                                 "$Elements\n1\n1 5 2 3 3 1 2 3 4 5 6 7 8\n$EndElements\n";

static size_t faces_with_tag(const clmg_mesh *mesh, int32_t tag) {
  size_t count = 0;
  for (size_t f = 0; f < mesh->num_boundary_faces; ++f)
    count += mesh->boundary_face_tag[f] == tag;
  return count;
}

static void read_ok(const char *name, const char *text, clmg_mesh *mesh) {
  char *path = write_file(name, text);
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_read_gmsh(path, mesh, &error);
  if (status != CLMG_SUCCESS)
    fail_msg("%s: %s: %s", name, clmg_status_string(status), error.message);
  assert_int_equal(clmg_mesh_check(mesh, &error), CLMG_SUCCESS);
  free(path);
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
  }
  /* same vertices in the same (file) order */
  for (size_t i = 0; i < 12; ++i)
    assert_true(a.coords[i] == b.coords[i]);
  /* the clockwise quad was turned: still the cell over [1,2] x [0,1] */
  for (size_t c = 0; c < 2; ++c)
    assert_memory_equal(a.cells + 4 * c, b.cells + 4 * c, 4 * sizeof(int32_t));
  clmg_mesh_free(&a);
  clmg_mesh_free(&b);
}

/* A file mesh goes through refinement and assembly like a generated one. */
static void test_read_hex_and_refine(void **state) {
  (void)state;
  clmg_mesh mesh = {0};
  read_ok("hex22.msh", unit_hex_22, &mesh);
  assert_int_equal(mesh.dim, 3);
  assert_int_equal(mesh.num_vertices, 8);
  assert_int_equal(mesh.num_cells, 1);
  assert_int_equal(mesh.num_boundary_faces, 6);
  assert_int_equal(faces_with_tag(&mesh, 1), 6);
  clmg_fe_hierarchy h = {0};
  clmg_poisson_problem problem = {0};
  clmg_error error = {{0}};
  clmg_status status =
      clmg_fe_poisson_hierarchy(&mesh, 3, 1, &problem, CLMG_NUMBERING_2LV, 1, &h, &error);
  if (status != CLMG_SUCCESS)
    fail_msg("hierarchy on the file mesh: %s", error.message);
  assert_int_equal(h.a[2].rows, 125); /* 4 x 4 x 4 cells: 5^3 vertices */
  clmg_fe_hierarchy_free(&h);
  clmg_mesh_free(&mesh);
}

/* Each malformed file is refused with its name, the line and what was wrong. */
static void test_malformed_files(void **state) {
  (void)state;
  static const struct {
    const char *name, *text, *line, *words;
  } cases[] = {
      {"truncated.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n",
       ":8:", "end of the file"},
      {"badnumber.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0.5.5 0\n$EndNodes\n",
       ":6:", "coordinate"},
      {"unknownnode.msh",
       "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n2 1 0 0\n$EndNodes\n"
       "$Elements\n1\n1 3 0 1 2 3 4\n$EndElements\n",
       ":", "node 3"},
      {"triangles.msh",
       "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n"
       "$Elements\n1\n1 2 0 1 2 3\n$EndElements\n",
       ":12:", "element type 2"},
      {"binary.msh", "$MeshFormat\n4.1 1 8\n$EndMeshFormat\n", ":2:", "binary"},
      {"version.msh", "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", ":2:", "2.2 or 4.1"},
      {"nomesh.msh", "hello\n", ":1:", "$MeshFormat"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    char *path = write_file(cases[k].name, cases[k].text);
    clmg_mesh mesh = {0};
    clmg_error error = {{0}};
    clmg_status status = clmg_mesh_read_gmsh(path, &mesh, &error);
    if (status == CLMG_SUCCESS || !strstr(error.message, cases[k].name) ||
        !strstr(error.message, cases[k].line) || !strstr(error.message, cases[k].words))
      fail_msg("%s: status %s, message '%s' (wanted '%s' and '%s')", cases[k].name,
               clmg_status_string(status), error.message, cases[k].line, cases[k].words);
    assert_int_equal(mesh.num_cells, 0); /* nothing half-read */
    assert_null(mesh.coords);
    free(path);
  }
  clmg_mesh mesh = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_mesh_read_gmsh("/nonexistent/mesh.msh", &mesh, &error), CLMG_ERROR_IO);
  assert_non_null(strstr(error.message, "/nonexistent/mesh.msh"));
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
  text[size] = '\0';
  fclose(f);
  return text;
}

/* Number of whitespace-separated entries of the DataArray named name. */
static size_t array_entries(const char *text, const char *name, long *max_value) {
  char key[64];
  snprintf(key, sizeof key, "Name=\"%s\"", name);
  const char *start = strstr(text, key);
  assert_non_null(start);
  start = strchr(start, '>') + 1;
  const char *end = strstr(start, "</DataArray>");
  size_t count = 0;
  *max_value = -1;
  for (const char *c = start; c < end;) {
    char *next = NULL;
    long value = strtol(c, &next, 10);
    if (next == c)
      break;
    count++;
    if (value > *max_value)
      *max_value = value;
    c = next;
  }
  return count;
}

static void test_write_vtu(void **state) {
  (void)state;
  clmg_mesh coarse = {0}, fine = {0};
  clmg_error error = {{0}};
  assert_int_equal(clmg_mesh_circle(&coarse, &error), CLMG_SUCCESS);
  assert_int_equal(clmg_mesh_refine(&coarse, &fine, &error), CLMG_SUCCESS);
  for (int degree = 1; degree <= 2; ++degree) {
    int32_t *cell_nodes = NULL;
    size_t num_nodes = 0;
    assert_int_equal(
        clmg_mesh_lagrange_nodes(&fine, degree, &cell_nodes, &num_nodes, NULL, NULL, &error),
        CLMG_SUCCESS);
    free(cell_nodes);
    double *u = malloc(num_nodes * sizeof *u);
    assert_non_null(u);
    for (size_t i = 0; i < num_nodes; ++i)
      u[i] = rng_uniform();
    clmg_mesh_field field = {"u", u};
    char name[32];
    snprintf(name, sizeof name, "circle-q%d.vtu", degree);
    size_t length = strlen(scratch) + strlen(name) + 2;
    char *path = malloc(length);
    assert_non_null(path);
    snprintf(path, length, "%s/%s", scratch, name);
    assert_int_equal(clmg_mesh_write_vtu(path, &fine, degree, &field, 1, &error), CLMG_SUCCESS);
    char *text = read_text(path);
    char expected[128];
    snprintf(expected, sizeof expected, "NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\"", num_nodes,
             fine.num_cells);
    assert_non_null(strstr(text, expected));
    long max_value;
    size_t per_cell = degree == 1 ? 4 : 9;
    assert_int_equal(array_entries(text, "connectivity", &max_value), per_cell * fine.num_cells);
    assert_int_equal(max_value, (long)num_nodes - 1);
    assert_int_equal(array_entries(text, "types", &max_value), fine.num_cells);
    assert_int_equal(max_value, degree == 1 ? 9 : 28);
    assert_int_equal(array_entries(text, "cell", &max_value), fine.num_cells);
    assert_non_null(strstr(text, "Name=\"u\""));
    free(text);
    free(path);
    free(u);
  }
  /* an unwritable path is an I/O error naming it */
  double u[1] = {0};
  clmg_mesh_field field = {"u", u};
  assert_int_equal(clmg_mesh_write_vtu("/nonexistent/dir/out.vtu", &fine, 1, &field, 1, &error),
                   CLMG_ERROR_IO);
  assert_non_null(strstr(error.message, "/nonexistent/dir/out.vtu"));
  clmg_mesh_free(&coarse);
  clmg_mesh_free(&fine);
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
      cmocka_unit_test(test_read_quads_both_versions),
      cmocka_unit_test(test_read_hex_and_refine),
      cmocka_unit_test(test_malformed_files),
      cmocka_unit_test(test_write_vtu),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("mesh_io", tests, setup, teardown);
}
