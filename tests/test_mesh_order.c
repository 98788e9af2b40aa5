/* Vertex orderings (clmg_mesh_reorder_vertices): Morton and cells-first
 * orders are permutations that move coordinates with their labels, keep
 * the mesh valid (clmg_mesh_check, volume, tags, materials), give the
 * Z-order on a small grid, leave the P1 matrix the same up to the
 * permutation (A'(i, j) = A(p(i), p(j)), b'(i) = b(p(i))), refuse bad
 * input without touching the mesh, and make the device assembler's patches
 * compact: fewer cells cross a patch boundary on Fu et al.'s Regular mesh
 * after Morton ordering (a count, not a timing). */
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

static clmg_context *ctx;

/* Total |volume| (times d!) of the simplices; every one must be positive. */
static double simplex_volume(const clmg_mesh *m) {
  size_t dim = (size_t)m->dim, corners = dim + 1;
  double sum = 0.0;
  for (size_t c = 0; c < m->num_cells; c++) {
    const int32_t *v = m->cells + c * corners;
    double e[3][3] = {{0}};
    for (size_t k = 1; k < corners; k++)
      for (size_t d = 0; d < dim; d++)
        e[k - 1][d] = m->coords[(size_t)v[k] * dim + d] - m->coords[(size_t)v[0] * dim + d];
    double det = dim == 2 ? e[0][0] * e[1][1] - e[0][1] * e[1][0]
                          : e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                                e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                                e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    if (!(det > 0))
      fail_msg("cell %zu has det %g", c, det);
    sum += det;
  }
  return sum;
}

/* Reorders a copy of m and checks it against m: a permutation, coordinates
 * moved with their labels, cells and faces relabelled in place, tags and
 * materials kept, still valid. Returns the copy; *perm (malloc'ed) gets
 * old_of_new. */
static clmg_mesh reorder_checked(const clmg_mesh *m, clmg_vertex_order order, int32_t **perm) {
  clmg_error error;
  clmg_mesh r;
  CHECK_ERROR_OK(error, clmg_mesh_copy(m, &r, &error));
  size_t n = m->num_vertices, dim = (size_t)m->dim;
  int32_t *p = malloc(n * sizeof *p);
  char *seen = calloc(n, 1);
  assert_non_null(p);
  assert_non_null(seen);
  CHECK_ERROR_OK(error, clmg_mesh_reorder_vertices(&r, order, p, &error));
  CHECK_ERROR_OK(error, clmg_mesh_check(&r, &error));
  assert_int_equal(r.num_vertices, n);
  assert_int_equal(r.num_cells, m->num_cells);
  assert_int_equal(r.num_boundary_faces, m->num_boundary_faces);
  for (size_t k = 0; k < n; k++) {
    assert_true(p[k] >= 0 && (size_t)p[k] < n);
    assert_false(seen[p[k]]);
    seen[p[k]] = 1;
    for (size_t d = 0; d < dim; d++)
      assert_true(r.coords[k * dim + d] == m->coords[(size_t)p[k] * dim + d]);
  }
  size_t corners = clmg_mesh_vertices_per_cell(m), per_face = clmg_mesh_vertices_per_face(m);
  for (size_t k = 0; k < m->num_cells * corners; k++)
    assert_int_equal(p[r.cells[k]], m->cells[k]);
  for (size_t k = 0; k < m->num_boundary_faces * per_face; k++)
    assert_int_equal(p[r.boundary_faces[k]], m->boundary_faces[k]);
  for (size_t f = 0; f < m->num_boundary_faces; f++)
    assert_int_equal(r.boundary_face_tag[f], m->boundary_face_tag[f]);
  for (size_t c = 0; c < m->num_cells; c++)
    assert_int_equal(clmg_mesh_cell_material(&r, c), clmg_mesh_cell_material(m, c));
  if (m->cell_type == CLMG_CELL_SIMPLEX) {
    double before = simplex_volume(m), after = simplex_volume(&r);
    assert_true(fabs(after - before) <= 1e-12 * before);
  }
  free(seen);
  *perm = p;
  return r;
}

/* Every generator's mesh, both orders: valid permutations. */
static void test_orders_are_permutations(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh meshes[5];
  memset(meshes, 0, sizeof meshes);
  CHECK_ERROR_OK(error, clmg_mesh_regular_tetrahedra(1, &meshes[0], &error));
  CHECK_ERROR_OK(error, clmg_mesh_blobs(3, 1, &meshes[1], &error));
  CHECK_ERROR_OK(error, clmg_mesh_blobs(2, 2, &meshes[2], &error));
  CHECK_ERROR_OK(error, clmg_mesh_box_simplices(3, 6, 0.2, 7, &meshes[3], &error));
  CHECK_ERROR_OK(error, clmg_mesh_box(2, 5, 0.1, 3, &meshes[4], &error)); /* quadrilaterals */
  for (size_t i = 0; i < 5; i++)
    for (int order = 0; order < 2; order++) {
      int32_t *p = NULL;
      clmg_mesh r = reorder_checked(&meshes[i],
                                    order ? CLMG_VERTEX_ORDER_CELLS : CLMG_VERTEX_ORDER_MORTON, &p);
      if (order == 1) { /* cells-first: the first cell's vertices come first, in order */
        size_t corners = clmg_mesh_vertices_per_cell(&r);
        for (size_t k = 0; k < corners; k++)
          assert_int_equal(r.cells[k], (int32_t)k);
      }
      free(p);
      clmg_mesh_free(&r);
    }
  for (size_t i = 0; i < 5; i++)
    clmg_mesh_free(&meshes[i]);
}

/* The 3 x 3 vertices of a 2 x 2 square grid in Z-order (x the lowest bit):
 * the quadrant of the lower-left corner, then of (0.5..1, 0), then of
 * (0, 0.5..1), then the upper-right quadrant's four. */
static void test_morton_z_order(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh m;
  CHECK_ERROR_OK(error, clmg_mesh_box_simplices(2, 2, 0.0, 1, &m, &error));
  assert_int_equal(m.num_vertices, 9);
  int32_t *p = NULL;
  clmg_mesh r = reorder_checked(&m, CLMG_VERTEX_ORDER_MORTON, &p);
  static const int expected[9][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {0, 2},
                                     {1, 1}, {2, 1}, {1, 2}, {2, 2}};
  for (size_t k = 0; k < 9; k++) {
    int i = (int)lround(2 * r.coords[2 * k]), j = (int)lround(2 * r.coords[2 * k + 1]);
    if (i != expected[k][0] || j != expected[k][1])
      fail_msg("vertex %zu is at (%d, %d)/2, expected (%d, %d)/2", k, i, j, expected[k][0],
               expected[k][1]);
  }
  /* idempotent: a second Morton ordering changes nothing */
  int32_t again[9];
  CHECK_ERROR_OK(error, clmg_mesh_reorder_vertices(&r, CLMG_VERTEX_ORDER_MORTON, again, &error));
  for (int32_t k = 0; k < 9; k++)
    assert_int_equal(again[k], k);
  free(p);
  clmg_mesh_free(&r);
  clmg_mesh_free(&m);
}

/* The host P1 matrix and load of the reordered mesh are the original ones
 * permuted, with two materials and lambda > 0. */
static void test_assembly_permuted(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh m;
  CHECK_ERROR_OK(error, clmg_mesh_blobs(3, 1, &m, &error));
  int32_t *p = NULL;
  clmg_mesh r = reorder_checked(&m, CLMG_VERTEX_ORDER_MORTON, &p);
  static const int32_t ids[2] = {1, 2};
  static const double sigma[2] = {1.0, 50.0};
  clmg_helmholtz_problem problem;
  clmg_helmholtz_problem_defaults(&problem);
  problem.material_ids = ids;
  problem.sigma = sigma;
  problem.num_materials = 2;
  problem.lambda = 1.5;
  size_t n = m.num_vertices;
  clmg_csr a = {0}, ar = {0}, permuted = {0};
  double *b = malloc(n * sizeof *b), *br = malloc(n * sizeof *br);
  assert_non_null(b);
  assert_non_null(br);
  CHECK_ERROR_OK(error, clmg_p1_assemble_host(&m, &problem, &a, b, &error));
  CHECK_ERROR_OK(error, clmg_p1_assemble_host(&r, &problem, &ar, br, &error));
  CHECK_ERROR_OK(error, clmg_csr_permute(&a, p, p, &permuted, &error));
  assert_int_equal(clmg_csr_nnz(&ar), clmg_csr_nnz(&a));
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(ar.row_ptr[i + 1], permuted.row_ptr[i + 1]);
    for (int64_t k = ar.row_ptr[i]; k < ar.row_ptr[i + 1]; k++) {
      assert_int_equal(ar.col[k], permuted.col[k]);
      if (!(fabs(ar.val[k] - permuted.val[k]) <= 1e-13 * fabs(permuted.val[k]) + 1e-300))
        fail_msg("A'(%zu, %d) = %.17g, A(p, p) = %.17g", i, (int)ar.col[k], ar.val[k],
                 permuted.val[k]);
    }
    if (!(fabs(br[i] - b[p[i]]) <= 1e-13 * fabs(b[p[i]])))
      fail_msg("b'(%zu) = %.17g, b(p(%zu)) = %.17g", i, br[i], i, b[p[i]]);
  }
  clmg_csr_free(&a);
  clmg_csr_free(&ar);
  clmg_csr_free(&permuted);
  free(b);
  free(br);
  free(p);
  clmg_mesh_free(&r);
  clmg_mesh_free(&m);
}

/* Bad input: an error that names the problem, and the mesh as it was. */
static void test_errors(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh m;
  CHECK_ERROR_OK(error, clmg_mesh_box_simplices(2, 2, 0.0, 1, &m, &error));
  clmg_mesh before;
  CHECK_ERROR_OK(error, clmg_mesh_copy(&m, &before, &error));
  assert_int_equal(clmg_mesh_reorder_vertices(NULL, CLMG_VERTEX_ORDER_MORTON, NULL, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_mesh_reorder_vertices(&m, (clmg_vertex_order)7, NULL, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "unknown vertex order"));
  m.cells[4] = 9;
  assert_int_equal(clmg_mesh_reorder_vertices(&m, CLMG_VERTEX_ORDER_MORTON, NULL, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "cell 1 has vertex index 9"));
  m.cells[4] = before.cells[4];
  m.boundary_faces[1] = -1;
  assert_int_equal(clmg_mesh_reorder_vertices(&m, CLMG_VERTEX_ORDER_CELLS, NULL, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "boundary face 0"));
  m.boundary_faces[1] = before.boundary_faces[1];
  m.coords[3] = NAN;
  assert_int_equal(clmg_mesh_reorder_vertices(&m, CLMG_VERTEX_ORDER_MORTON, NULL, &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "vertex 1"));
  m.coords[3] = before.coords[3];
  assert_memory_equal(m.coords, before.coords, m.num_vertices * 2 * sizeof *m.coords);
  assert_memory_equal(m.cells, before.cells, m.num_cells * 3 * sizeof *m.cells);
  assert_memory_equal(m.boundary_faces, before.boundary_faces,
                      m.num_boundary_faces * 2 * sizeof *m.boundary_faces);
  clmg_mesh_free(&before);
  clmg_mesh_free(&m);
}

static void patch_info(const clmg_mesh *m, clmg_dtype type, clmg_p1_assembler_info *info) {
  clmg_p1_assembler_options o;
  clmg_p1_assembler_options_defaults(&o);
  o.matrix.precision = type;
  o.path = CLMG_P1_PATH_PATCH;
  o.patch_local_bytes = 24 * 1024; /* the GPU default, whatever this device has */
  clmg_p1_assembler *assembler = NULL;
  CHECK_CONTEXT_OK(ctx, clmg_p1_assembler_create(ctx, m, &o, &assembler));
  CHECK_CONTEXT_OK(ctx, clmg_p1_assembler_get_info(assembler, info));
  clmg_p1_assembler_destroy(assembler);
}

/* Regular level 1 (4,913 vertices, 24,576 tetrahedra): refinement appends
 * the edge midpoints after the coarse vertices, so most cells (78%) cross a
 * patch boundary; after Morton ordering a patch (~200 rows, a block of
 * about 6^3 vertices) is compact and far fewer do (45%: the rest touch the
 * block's surface), and fewer slots are needed. The device assembly on the
 * reordered mesh still matches the host. */
static void test_patch_boundary_cells(void **state) {
  (void)state;
  clmg_error error;
  clmg_mesh m;
  CHECK_ERROR_OK(error, clmg_mesh_regular_tetrahedra(1, &m, &error));
  clmg_dtype type = clmg_context_device(ctx)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  clmg_p1_assembler_info native, morton, cells;
  patch_info(&m, CLMG_FLOAT, &native); /* float: the patch path needs no 64-bit atomics */
  int32_t *p = NULL;
  clmg_mesh r = reorder_checked(&m, CLMG_VERTEX_ORDER_MORTON, &p);
  patch_info(&r, CLMG_FLOAT, &morton);
  free(p);
  clmg_mesh rc = reorder_checked(&m, CLMG_VERTEX_ORDER_CELLS, &p);
  patch_info(&rc, CLMG_FLOAT, &cells);
  free(p);
  printf("Regular level 1, %zu cells, patches of 24 KiB: boundary cells native %zu (%zu "
         "patches, %zu slots), Morton %zu (%zu, %zu), cells-first %zu (%zu, %zu)\n",
         m.num_cells, native.boundary_cells, native.num_patches, native.slots,
         morton.boundary_cells, morton.num_patches, morton.slots, cells.boundary_cells,
         cells.num_patches, cells.slots);
  assert_true(native.boundary_cells > m.num_cells / 2);
  assert_true(3 * morton.boundary_cells < 2 * native.boundary_cells);
  assert_true(morton.slots < native.slots);

  /* the reordered mesh assembles on the device as on the host */
  clmg_csr a = {0};
  double *b_host = malloc(r.num_vertices * sizeof *b_host);
  assert_non_null(b_host);
  CHECK_ERROR_OK(error, clmg_p1_assemble_host(&r, NULL, &a, b_host, &error));
  clmg_p1_assembler_options o;
  clmg_p1_assembler_options_defaults(&o);
  o.matrix.precision = type;
  clmg_p1_assembler *assembler = NULL;
  clmg_matrix *matrix = NULL;
  CHECK_CONTEXT_OK(ctx, clmg_p1_assembler_create(ctx, &r, &o, &assembler));
  CHECK_CONTEXT_OK(ctx, clmg_p1_assemble_device(assembler, NULL, &matrix, NULL));
  size_t nnz = clmg_csr_nnz(&a);
  double *values = malloc(nnz * sizeof *values);
  assert_non_null(values);
  CHECK_CONTEXT_OK(ctx, clmg_vector_download_doubles(clmg_p1_assembler_values(assembler), values));
  double tol = type == CLMG_DOUBLE ? 1e-12 : 1e-5, largest = 0.0;
  for (size_t k = 0; k < nnz; k++)
    largest = fmax(largest, fabs(a.val[k]));
  for (size_t k = 0; k < nnz; k++)
    if (!(fabs(values[k] - a.val[k]) <= tol * largest))
      fail_msg("entry %zu: %.17g on the device, %.17g on the host", k, values[k], a.val[k]);
  free(values);
  clmg_matrix_destroy(matrix);
  clmg_p1_assembler_destroy(assembler);
  clmg_csr_free(&a);
  free(b_host);
  clmg_mesh_free(&rc);
  clmg_mesh_free(&r);
  clmg_mesh_free(&m);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "mesh_order", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(20140302);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_orders_are_permutations), cmocka_unit_test(test_morton_z_order),
      cmocka_unit_test(test_assembly_permuted),       cmocka_unit_test(test_errors),
      cmocka_unit_test(test_patch_boundary_cells),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("mesh_order", tests, setup, teardown);
}
