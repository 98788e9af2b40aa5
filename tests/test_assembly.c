/* P1 assembly of the Helmholtz problem (include/clmg/assembly.h): the host
 * reference against closed forms (single simplices, symmetry, zero row sums
 * of S, the mass and load summing to the volume, A = S + lambda M), clear
 * errors (inverted cell, unknown material id, tensor mesh), and the device
 * assembly (patch and gather paths, double and float, small patches that
 * force boundary cells, every format, in-place updates) against the host.
 *
 * The simplex meshes are built here: a Kuhn cube (6 tetrahedra per cube
 * around its main diagonal), a distorted square of triangles, random
 * renumberings and two materials split by the cells' centroids. */
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

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)

/* ---- meshes ---- */

/* Signed volume (times d!) of cell c. */
static double cell_det(const clmg_mesh *m, size_t c) {
  size_t corners = (size_t)m->dim + 1;
  const int32_t *v = m->cells + c * corners;
  const double *x0 = m->coords + (size_t)v[0] * m->dim;
  double e[3][3] = {{0}};
  for (size_t k = 1; k < corners; k++)
    for (int d = 0; d < m->dim; d++)
      e[k - 1][d] = m->coords[(size_t)v[k] * m->dim + d] - x0[d];
  if (m->dim == 2)
    return e[0][0] * e[1][1] - e[0][1] * e[1][0];
  return e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
         e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
         e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
}

/* Swaps the last two vertices of negatively oriented cells. */
static void orient(clmg_mesh *m) {
  size_t corners = (size_t)m->dim + 1;
  for (size_t c = 0; c < m->num_cells; c++)
    if (cell_det(m, c) < 0) {
      int32_t *v = m->cells + c * corners;
      int32_t t = v[corners - 1];
      v[corners - 1] = v[corners - 2];
      v[corners - 2] = t;
    }
}

/* [0, side]^3 in n^3 cubes, 6 tetrahedra each (vertices v0, v0 + e_a,
 * v0 + e_a + e_b, v7 for each order a, b, c of the axes). */
static clmg_mesh kuhn_cube(int n, double side) {
  clmg_mesh m = {0};
  size_t p = (size_t)n + 1;
  m.dim = 3;
  m.cell_type = CLMG_CELL_SIMPLEX;
  m.num_vertices = p * p * p;
  m.num_cells = 6 * (size_t)n * n * n;
  m.coords = malloc(m.num_vertices * 3 * sizeof *m.coords);
  m.cells = malloc(m.num_cells * 4 * sizeof *m.cells);
  assert_non_null(m.coords);
  assert_non_null(m.cells);
  for (size_t k = 0; k < p; k++)
    for (size_t j = 0; j < p; j++)
      for (size_t i = 0; i < p; i++) {
        double *x = m.coords + 3 * (i + p * (j + p * k));
        x[0] = side * (double)i / n;
        x[1] = side * (double)j / n;
        x[2] = side * (double)k / n;
      }
  static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                   {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const size_t step[3] = {1, p, p * p};
  size_t c = 0;
  for (size_t k = 0; k < (size_t)n; k++)
    for (size_t j = 0; j < (size_t)n; j++)
      for (size_t i = 0; i < (size_t)n; i++) {
        size_t v0 = i + p * (j + p * k);
        for (int t = 0; t < 6; t++, c++) {
          int32_t *v = m.cells + 4 * c;
          v[0] = (int32_t)v0;
          v[1] = (int32_t)(v0 + step[orders[t][0]]);
          v[2] = (int32_t)(v0 + step[orders[t][0]] + step[orders[t][1]]);
          v[3] = (int32_t)(v0 + step[0] + step[1] + step[2]);
        }
      }
  orient(&m);
  return m;
}

/* [0,1]^2 in n^2 squares of two triangles, interior vertices moved at
 * random by up to 0.15 of the spacing per axis (too little to fold). */
static clmg_mesh triangle_square(int n, double distortion) {
  clmg_mesh m = {0};
  size_t p = (size_t)n + 1;
  m.dim = 2;
  m.cell_type = CLMG_CELL_SIMPLEX;
  m.num_vertices = p * p;
  m.num_cells = 2 * (size_t)n * n;
  m.coords = malloc(m.num_vertices * 2 * sizeof *m.coords);
  m.cells = malloc(m.num_cells * 3 * sizeof *m.cells);
  assert_non_null(m.coords);
  assert_non_null(m.cells);
  double h = 1.0 / n;
  for (size_t j = 0; j < p; j++)
    for (size_t i = 0; i < p; i++) {
      int interior = i > 0 && j > 0 && i < (size_t)n && j < (size_t)n;
      double *x = m.coords + 2 * (i + p * j);
      x[0] = h * (double)i + (interior ? distortion * h * rng_uniform() : 0.0);
      x[1] = h * (double)j + (interior ? distortion * h * rng_uniform() : 0.0);
    }
  size_t c = 0;
  for (size_t j = 0; j < (size_t)n; j++)
    for (size_t i = 0; i < (size_t)n; i++) {
      int32_t a = (int32_t)(i + p * j), b = a + 1, d = (int32_t)(a + p), e = d + 1;
      int32_t *v = m.cells + 3 * c++;
      v[0] = a, v[1] = b, v[2] = e;
      v = m.cells + 3 * c++;
      v[0] = a, v[1] = e, v[2] = d;
    }
  orient(&m);
  return m;
}

/* Renumbers the vertices by a random permutation. */
static void renumber(clmg_mesh *m) {
  size_t n = m->num_vertices, dim = (size_t)m->dim;
  int32_t *new_of_old = malloc(n * sizeof *new_of_old);
  double *coords = malloc(n * dim * sizeof *coords);
  assert_non_null(new_of_old);
  assert_non_null(coords);
  for (size_t i = 0; i < n; i++)
    new_of_old[i] = (int32_t)i;
  for (size_t i = n; i > 1; i--) {
    size_t j = rng_below(i);
    int32_t t = new_of_old[i - 1];
    new_of_old[i - 1] = new_of_old[j];
    new_of_old[j] = t;
  }
  for (size_t i = 0; i < n; i++)
    memcpy(coords + (size_t)new_of_old[i] * dim, m->coords + i * dim, dim * sizeof *coords);
  for (size_t k = 0; k < m->num_cells * (dim + 1); k++)
    m->cells[k] = new_of_old[m->cells[k]];
  for (size_t k = 0; k < m->num_boundary_faces * dim; k++)
    m->boundary_faces[k] = new_of_old[m->boundary_faces[k]];
  free(m->coords);
  m->coords = coords;
  free(new_of_old);
}

/* Material `low` where the cell's centroid has x < split, else `high`. */
static void two_materials(clmg_mesh *m, double split, int32_t low, int32_t high) {
  size_t corners = (size_t)m->dim + 1;
  m->cell_material = malloc(m->num_cells * sizeof *m->cell_material);
  assert_non_null(m->cell_material);
  for (size_t c = 0; c < m->num_cells; c++) {
    double x = 0.0;
    for (size_t k = 0; k < corners; k++)
      x += m->coords[(size_t)m->cells[c * corners + k] * m->dim] / (double)corners;
    m->cell_material[c] = x < split ? low : high;
  }
}

typedef struct face_key {
  int32_t v[3]; /* sorted vertices */
} face_key;

static int compare_faces(const void *left, const void *right) {
  const face_key *a = left, *b = right;
  for (int k = 0; k < 3; k++)
    if (a->v[k] != b->v[k])
      return a->v[k] < b->v[k] ? -1 : 1;
  return 0;
}

/* The boundary faces (faces of one cell only): tag 1 where every vertex has
 * x = 0, tag 2 elsewhere. */
static void add_boundary_faces(clmg_mesh *m) {
  size_t corners = (size_t)m->dim + 1, per_face = (size_t)m->dim, count = m->num_cells * corners;
  face_key *keys = calloc(count, sizeof *keys);
  assert_non_null(keys);
  for (size_t c = 0; c < m->num_cells; c++)
    for (size_t skip = 0; skip < corners; skip++) {
      face_key *key = keys + c * corners + skip;
      size_t j = 0;
      for (size_t k = 0; k < corners; k++)
        if (k != skip)
          key->v[j++] = m->cells[c * corners + k];
      for (size_t a = 1; a < per_face; a++) /* insertion sort */
        for (size_t b = a; b > 0 && key->v[b - 1] > key->v[b]; b--) {
          int32_t t = key->v[b];
          key->v[b] = key->v[b - 1];
          key->v[b - 1] = t;
        }
      if (per_face == 2)
        key->v[2] = -1;
    }
  qsort(keys, count, sizeof *keys, compare_faces);
  m->boundary_faces = malloc(count * per_face * sizeof *m->boundary_faces);
  m->boundary_face_tag = malloc(count * sizeof *m->boundary_face_tag);
  assert_non_null(m->boundary_faces);
  assert_non_null(m->boundary_face_tag);
  m->num_boundary_faces = 0;
  for (size_t k = 0; k < count;) {
    size_t same = 1;
    while (k + same < count && compare_faces(keys + k, keys + k + same) == 0)
      same++;
    if (same == 1) {
      int left = 1;
      for (size_t j = 0; j < per_face; j++) {
        m->boundary_faces[m->num_boundary_faces * per_face + j] = keys[k].v[j];
        left = left && m->coords[(size_t)keys[k].v[j] * m->dim] == 0.0;
      }
      m->boundary_face_tag[m->num_boundary_faces++] = left ? 1 : 2;
    }
    k += same;
  }
  free(keys);
}

static double mesh_volume(const clmg_mesh *m) {
  double sum = 0.0, factorial = m->dim == 2 ? 2.0 : 6.0;
  for (size_t c = 0; c < m->num_cells; c++)
    sum += cell_det(m, c) / factorial;
  return sum;
}

/* ---- host assembly ---- */

/* sigma (kept in *storage) for material 1, lambda. */
static clmg_helmholtz_problem problem_with(double sigma, double lambda, double *storage) {
  static const int32_t ids[1] = {1};
  *storage = sigma;
  clmg_helmholtz_problem p;
  clmg_helmholtz_problem_defaults(&p);
  p.material_ids = ids;
  p.sigma = storage;
  p.num_materials = 1;
  p.lambda = lambda;
  return p;
}

static clmg_csr host_assemble(const clmg_mesh *m, const clmg_helmholtz_problem *p, double **b) {
  clmg_csr a = {0};
  clmg_error error;
  *b = malloc((m->num_vertices ? m->num_vertices : 1) * sizeof **b);
  assert_non_null(*b);
  CHECK_ERROR_OK(error, clmg_p1_assemble_host(m, p, &a, *b, &error));
  return a;
}

/* The element matrices of the reference triangle and tetrahedron. */
static void test_reference_simplices(void **state) {
  (void)state;
  for (int dim = 2; dim <= 3; dim++) {
    clmg_mesh m = {0};
    double coords[12] = {0};
    int32_t cell[4] = {0, 1, 2, 3};
    m.dim = dim;
    m.cell_type = CLMG_CELL_SIMPLEX;
    m.num_vertices = (size_t)dim + 1;
    m.num_cells = 1;
    for (int k = 1; k <= dim; k++)
      coords[k * dim + (k - 1)] = 1.0; /* vertex k at the unit vector e_k */
    m.coords = coords;
    m.cells = cell;
    double volume = dim == 2 ? 0.5 : 1.0 / 6.0, lambda = 3.0, sigma = 2.0, storage;
    clmg_helmholtz_problem p = problem_with(sigma, lambda, &storage);
    double *b;
    clmg_csr a = host_assemble(&m, &p, &b);
    assert_int_equal(clmg_csr_nnz(&a), (size_t)(dim + 1) * (dim + 1));
    for (int k = 0; k <= dim; k++) {
      for (int l = 0; l <= dim; l++) {
        /* grad lambda_0 = -(1, ..., 1), grad lambda_k = e_k */
        double dot = k == 0 && l == 0 ? dim : (k == 0 || l == 0) ? -1.0 : (k == l ? 1.0 : 0.0);
        double mass = volume * (k == l ? 2.0 : 1.0) / ((dim + 1) * (dim + 2));
        double expected = sigma * volume * dot + lambda * mass;
        double got = a.val[a.row_ptr[k] + l];
        if (fabs(got - expected) > 1e-15)
          fail_msg("dim %d: A(%d,%d) = %.17g, expected %.17g", dim, k, l, got, expected);
      }
      assert_true(fabs(b[k] - volume / (dim + 1)) < 1e-16);
    }
    clmg_csr_free(&a);
    free(b);
  }
}

/* max |a_ij| over the whole matrix */
static double max_abs(const clmg_csr *a) {
  double m = 0.0;
  for (size_t k = 0; k < clmg_csr_nnz(a); k++)
    if (fabs(a->val[k]) > m)
      m = fabs(a->val[k]);
  return m;
}

static void check_host_properties(const clmg_mesh *m, const char *what) {
  double lambda = 2.5, volume = mesh_volume(m), storage[3];
  clmg_helmholtz_problem ps = problem_with(1.0, 0.0, &storage[0]),
                         pm = problem_with(0.0, 1.0, &storage[1]),
                         pa = problem_with(1.0, lambda, &storage[2]);
  double *bs, *bm, *ba;
  clmg_csr s = host_assemble(m, &ps, &bs), mass = host_assemble(m, &pm, &bm),
           a = host_assemble(m, &pa, &ba);
  size_t n = m->num_vertices;
  assert_int_equal(a.rows, n);
  assert_int_equal(clmg_csr_nnz(&a), clmg_csr_nnz(&s));
  assert_true(clmg_csr_is_symmetric(&a, 1e-13));
  double scale = max_abs(&a), mass_sum = 0.0, load_sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    double row_s = 0.0, row_m = 0.0, row_a = 0.0;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) {
      assert_int_equal(a.col[k], s.col[k]);
      if (k > a.row_ptr[i])
        assert_true(a.col[k] > a.col[k - 1]); /* sorted and unique */
      if (fabs(a.val[k] - (s.val[k] + lambda * mass.val[k])) > 1e-13 * scale)
        fail_msg("%s: A != S + lambda M at row %zu", what, i);
      row_s += s.val[k];
      row_m += mass.val[k];
      row_a += a.val[k];
    }
    if (fabs(row_s) > 1e-12 * scale)
      fail_msg("%s: row %zu of S sums to %g", what, i, row_s);
    if (fabs(row_a - lambda * row_m) > 1e-12 * scale)
      fail_msg("%s: row %zu of A sums to %.17g, lambda times M's: %.17g", what, i, row_a,
               lambda * row_m);
    mass_sum += row_m;
    load_sum += ba[i];
  }
  if (fabs(mass_sum - volume) > 1e-12 * volume || fabs(load_sum - volume) > 1e-12 * volume)
    fail_msg("%s: M sums to %.17g, b to %.17g, the volume is %.17g", what, mass_sum, load_sum,
             volume);
  clmg_csr_free(&s);
  clmg_csr_free(&mass);
  clmg_csr_free(&a);
  free(bs);
  free(bm);
  free(ba);
}

static void test_host_properties(void **state) {
  (void)state;
  clmg_mesh cube = kuhn_cube(3, 4.0);
  assert_int_equal(cube.num_vertices, 64);
  check_host_properties(&cube, "Kuhn cube 3^3");
  renumber(&cube);
  check_host_properties(&cube, "Kuhn cube 3^3 renumbered");
  clmg_mesh square = triangle_square(7, 0.15);
  check_host_properties(&square, "distorted triangles 7^2");
  clmg_mesh_free(&cube);
  clmg_mesh_free(&square);

  /* RHS_ONES; and the Kuhn cube's pattern: an interior vertex couples with
   * itself and 14 neighbours */
  clmg_mesh m = kuhn_cube(2, 1.0);
  clmg_helmholtz_problem p;
  clmg_helmholtz_problem_defaults(&p);
  p.rhs = CLMG_RHS_ONES;
  double *b;
  clmg_csr a = host_assemble(&m, &p, &b);
  for (size_t i = 0; i < m.num_vertices; i++)
    assert_true(b[i] == 1.0);
  size_t center = 1 + 3 * (1 + 3 * 1);
  assert_int_equal(a.row_ptr[center + 1] - a.row_ptr[center], 15);
  clmg_csr pattern = {0};
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_p1_pattern(&m, &pattern, &error));
  assert_int_equal(clmg_csr_nnz(&pattern), clmg_csr_nnz(&a));
  assert_memory_equal(pattern.col, a.col, clmg_csr_nnz(&a) * sizeof *a.col);
  clmg_csr_free(&pattern);
  clmg_csr_free(&a);
  free(b);
  clmg_mesh_free(&m);
}

static void test_host_errors(void **state) {
  (void)state;
  clmg_mesh m = kuhn_cube(2, 1.0);
  clmg_csr a = {0};
  clmg_error error;
  double *b = malloc(m.num_vertices * sizeof *b);
  assert_non_null(b);

  /* inverted cell 5 */
  int32_t saved = m.cells[5 * 4 + 1];
  m.cells[5 * 4 + 1] = m.cells[5 * 4 + 2];
  m.cells[5 * 4 + 2] = saved;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_host(&m, NULL, &a, b, &error));
  CHECK_CONTAINS(error.message, "cell 5 is inverted");
  clmg_p1_assembler *assembler = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assembler_create(ctx, &m, NULL, &assembler));
  assert_null(assembler);
  CHECK_CONTAINS(clmg_context_message(ctx), "cell 5 is inverted");
  m.cells[5 * 4 + 2] = m.cells[5 * 4 + 1];
  m.cells[5 * 4 + 1] = saved;

  /* material 7 without sigma */
  two_materials(&m, 0.5, 1, 7);
  size_t first7 = 0;
  while (m.cell_material[first7] != 7)
    first7++;
  int32_t ids[1] = {1};
  double sigma[1] = {1.0};
  clmg_helmholtz_problem p;
  clmg_helmholtz_problem_defaults(&p);
  p.material_ids = ids;
  p.sigma = sigma;
  p.num_materials = 1;
  char expected[96];
  snprintf(expected, sizeof expected, "cell %zu has material id 7", first7);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_host(&m, &p, &a, b, &error));
  CHECK_CONTAINS(error.message, expected);
  CHECK_OK(clmg_p1_assembler_create(ctx, &m, NULL, &assembler));
  clmg_matrix *matrix = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_device(assembler, &p, &matrix, NULL));
  assert_null(matrix);
  CHECK_CONTAINS(clmg_context_message(ctx), expected);
  clmg_p1_assembler_destroy(assembler);

  /* negative sigma, negative lambda, a tensor mesh, an unused vertex */
  sigma[0] = -1.0;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_host(&m, &p, &a, b, &error));
  CHECK_CONTAINS(error.message, "sigma");
  clmg_helmholtz_problem_defaults(&p);
  p.lambda = -1.0;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_host(&m, &p, &a, b, &error));
  CHECK_CONTAINS(error.message, "lambda");
  m.cell_type = CLMG_CELL_TENSOR;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_host(&m, NULL, &a, b, &error));
  CHECK_CONTAINS(error.message, "triangle or tetrahedron");
  m.cell_type = CLMG_CELL_SIMPLEX;
  m.num_vertices++; /* one vertex more, in no cell */
  double *coords = realloc(m.coords, m.num_vertices * 3 * sizeof *coords);
  assert_non_null(coords);
  m.coords = coords;
  for (int d = 0; d < 3; d++) /* finite, so only the unused vertex is wrong */
    m.coords[(m.num_vertices - 1) * 3 + (size_t)d] = 0.5;
  b = realloc(b, m.num_vertices * sizeof *b);
  assert_non_null(b);
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_host(&m, NULL, &a, b, &error));
  CHECK_CONTAINS(error.message, "belongs to no cell");
  free(b);
  clmg_mesh_free(&m);
}

/* ---- device assembly ---- */

/* The device CSR values and b equal the host's to rounding (relative to the
 * largest entry of the row); returns the assembler's info. */
static void compare_device(const clmg_mesh *m, const clmg_helmholtz_problem *p,
                           const clmg_p1_assembler_options *o, clmg_p1_assembler_info *info,
                           const char *what) {
  clmg_dtype type = o->matrix.precision;
  double tol = type == CLMG_DOUBLE ? 1e-12 : 1e-5;
  double *b_host;
  clmg_csr a = host_assemble(m, p, &b_host);
  size_t n = m->num_vertices, nnz = clmg_csr_nnz(&a);
  clmg_p1_assembler *assembler = NULL;
  CHECK_OK(clmg_p1_assembler_create(ctx, m, o, &assembler));
  CHECK_OK(clmg_p1_assembler_get_info(assembler, info));
  clmg_vector *b = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &b));
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_p1_assemble_device(assembler, p, &matrix, b));
  assert_non_null(matrix);
  assert_int_equal(clmg_matrix_nnz(matrix), nnz);
  assert_int_equal(clmg_matrix_precision(matrix), type);
  double *values = malloc(nnz * sizeof *values), *b_device = malloc(n * sizeof *b_device);
  assert_non_null(values);
  assert_non_null(b_device);
  const clmg_vector *device_values = clmg_p1_assembler_values(assembler);
  assert_int_equal(clmg_vector_length(device_values), nnz);
  CHECK_OK(clmg_vector_download_doubles(device_values, values));
  CHECK_OK(clmg_vector_download_doubles(b, b_device));
  for (size_t i = 0; i < n; i++) {
    double row_max = 0.0;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      row_max = fmax(row_max, fabs(a.val[k]));
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
      if (!(fabs(values[k] - a.val[k]) <= tol * row_max))
        fail_msg("%s (%s): A(%zu, %d) = %.17g on the device, %.17g on the host", what,
                 clmg_dtype_name(type), i, (int)a.col[k], values[k], a.val[k]);
    if (!(fabs(b_device[i] - b_host[i]) <= tol * fabs(b_host[i])))
      fail_msg("%s (%s): b(%zu) = %.17g on the device, %.17g on the host", what,
               clmg_dtype_name(type), i, b_device[i], b_host[i]);
  }
  free(values);
  free(b_device);
  clmg_matrix_destroy(matrix);
  clmg_vector_destroy(b);
  clmg_p1_assembler_destroy(assembler);
  clmg_csr_free(&a);
  free(b_host);
}

static clmg_p1_assembler_options options_for(clmg_dtype type, clmg_p1_path path) {
  clmg_p1_assembler_options o;
  clmg_p1_assembler_options_defaults(&o);
  o.matrix.precision = type;
  o.path = path;
  return o;
}

static void run_device_matches_host(clmg_dtype type) {
  clmg_p1_assembler_info info;
  const clmg_p1_path paths[3] = {CLMG_P1_PATH_AUTO, CLMG_P1_PATH_GATHER, CLMG_P1_PATH_ROWS};
  /* automatic: rows on GPUs, patches on CPUs (pocl has the local atomics) */
  const clmg_p1_path automatic =
      clmg_context_device(ctx)->is_gpu ? CLMG_P1_PATH_ROWS : CLMG_P1_PATH_PATCH;
  const clmg_p1_path taken[3] = {automatic, CLMG_P1_PATH_GATHER, CLMG_P1_PATH_ROWS};
  for (int path = 0; path < 3; path++) {
    clmg_p1_assembler_options o = options_for(type, paths[path]);
    clmg_helmholtz_problem p;
    clmg_helmholtz_problem_defaults(&p);
    p.lambda = 1.5;

    clmg_mesh m = kuhn_cube(4, 4.0);
    compare_device(&m, &p, &o, &info, "Kuhn cube 4^3");
    assert_int_equal(info.path, taken[path]);
    static const char *const names[] = {"auto", "patch", "gather", "rows"};
    assert_string_equal(clmg_p1_path_name(info.path), names[info.path]);
    assert_string_equal(clmg_p1_path_name((clmg_p1_path)99), "unknown");
    renumber(&m);
    compare_device(&m, &p, &o, &info, "Kuhn cube 4^3 renumbered");

    int32_t ids[2] = {3, 1};
    double sigma[2] = {100.0, 1.0};
    two_materials(&m, 2.0, 1, 3);
    p.material_ids = ids;
    p.sigma = sigma;
    p.num_materials = 2;
    compare_device(&m, &p, &o, &info, "Kuhn cube 4^3, sigma 1 and 100");
    clmg_mesh_free(&m);

    clmg_helmholtz_problem_defaults(&p);
    m = triangle_square(10, 0.15);
    compare_device(&m, &p, &o, &info, "distorted triangles 10^2");
    clmg_mesh_free(&m);
  }
}
TYPED_TESTS(device_matches_host)

/* u = 0 on the faces of tag 1 (x = 0): identity rows and columns there, b
 * = 0, the other entries those of the natural problem; the device agrees. */
static void run_dirichlet(clmg_dtype type) {
  for (int dim = 2; dim <= 3; dim++) {
    clmg_mesh m = dim == 2 ? triangle_square(6, 0.1) : kuhn_cube(3, 1.0);
    add_boundary_faces(&m);
    int32_t tags[1] = {1};
    clmg_helmholtz_problem natural, p;
    clmg_helmholtz_problem_defaults(&natural);
    p = natural;
    p.dirichlet_tags = tags;
    p.num_dirichlet_tags = 1;
    double *b0, *b;
    clmg_csr a0 = host_assemble(&m, &natural, &b0), a = host_assemble(&m, &p, &b);
    assert_true(clmg_csr_is_symmetric(&a, 1e-13));
    size_t fixed = 0;
    for (size_t i = 0; i < m.num_vertices; i++) {
      int on = m.coords[i * (size_t)dim] == 0.0;
      fixed += on;
      if (on)
        assert_true(b[i] == 0.0);
      else
        assert_true(b[i] == b0[i]);
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) {
        int other = m.coords[(size_t)a.col[k] * dim] == 0.0;
        double expected = on || other ? ((size_t)a.col[k] == i ? 1.0 : 0.0) : a0.val[k];
        if (a.val[k] != expected)
          fail_msg("dim %d: A(%zu, %d) = %g, expected %g", dim, i, (int)a.col[k], a.val[k],
                   expected);
      }
    }
    assert_int_equal(fixed, dim == 2 ? 7 : 16);
    clmg_p1_assembler_info info;
    const clmg_p1_path paths[3] = {CLMG_P1_PATH_PATCH, CLMG_P1_PATH_GATHER, CLMG_P1_PATH_ROWS};
    for (int path = 0; path < 3; path++) {
      clmg_p1_assembler_options o = options_for(type, paths[path]);
      o.patch_local_bytes = 2048;
      compare_device(&m, &p, &o, &info, dim == 2 ? "triangles, Dirichlet" : "Kuhn, Dirichlet");
    }
    clmg_csr_free(&a0);
    clmg_csr_free(&a);
    free(b0);
    free(b);
    clmg_mesh_free(&m);
  }
}
TYPED_TESTS(dirichlet)

/* One assembler, the Dirichlet tags changing between assemblies (1, 2, 1:
 * the left face, the rest, the left face again): each assembly equals the
 * host's for its tags, so the marks the device keeps follow the tags. */
static void test_dirichlet_tags_change(void **state) {
  (void)state;
  clmg_mesh m = kuhn_cube(3, 1.0);
  add_boundary_faces(&m);
  const clmg_p1_path paths[2] = {CLMG_P1_PATH_PATCH, CLMG_P1_PATH_ROWS};
  for (int path = 0; path < 2; path++) {
    clmg_p1_assembler_options o = options_for(CLMG_DOUBLE, paths[path]);
    clmg_p1_assembler *assembler = NULL;
    CHECK_OK(clmg_p1_assembler_create(ctx, &m, &o, &assembler));
    clmg_matrix *matrix = NULL;
    clmg_vector *b = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, m.num_vertices, &b));
    double *values =
        malloc(clmg_vector_length(clmg_p1_assembler_values(assembler)) * sizeof *values);
    double *b_device = malloc(m.num_vertices * sizeof *b_device);
    assert_non_null(values);
    assert_non_null(b_device);
    const int32_t order[3] = {1, 2, 1};
    for (int round = 0; round < 3; round++) {
      clmg_helmholtz_problem p;
      clmg_helmholtz_problem_defaults(&p);
      p.dirichlet_tags = &order[round];
      p.num_dirichlet_tags = 1;
      double *b_host;
      clmg_csr a = host_assemble(&m, &p, &b_host);
      CHECK_OK(clmg_p1_assemble_device(assembler, &p, &matrix, b));
      CHECK_OK(clmg_vector_download_doubles(clmg_p1_assembler_values(assembler), values));
      CHECK_OK(clmg_vector_download_doubles(b, b_device));
      for (size_t k = 0; k < clmg_csr_nnz(&a); k++)
        if (!(fabs(values[k] - a.val[k]) <= 1e-12 * (1.0 + fabs(a.val[k]))))
          fail_msg("path %d, tag %d: entry %zu = %.17g on the device, %.17g on the host", path,
                   order[round], k, values[k], a.val[k]);
      for (size_t i = 0; i < m.num_vertices; i++)
        if (!(fabs(b_device[i] - b_host[i]) <= 1e-12 * (1.0 + fabs(b_host[i]))))
          fail_msg("path %d, tag %d: b(%zu) = %.17g on the device, %.17g on the host", path,
                   order[round], i, b_device[i], b_host[i]);
      clmg_csr_free(&a);
      free(b_host);
    }
    free(values);
    free(b_device);
    clmg_vector_destroy(b);
    clmg_matrix_destroy(matrix);
    clmg_p1_assembler_destroy(assembler);
  }
  clmg_mesh_free(&m);
}

/* Fu et al.'s Regular mesh before refinement: [0,4]^3, 8^3 cubes. */
static void test_device_regular_mesh(void **state) {
  (void)state;
  clmg_mesh m = kuhn_cube(8, 4.0);
  assert_int_equal(m.num_vertices, 729);
  assert_int_equal(m.num_cells, 3072);
  clmg_helmholtz_problem p;
  clmg_helmholtz_problem_defaults(&p);
  clmg_p1_assembler_options o = options_for(CLMG_DOUBLE, CLMG_P1_PATH_PATCH);
  clmg_p1_assembler_info info;
  compare_device(&m, &p, &o, &info, "Kuhn cube 8^3");
  assert_true(info.num_patches >= 1);
  clmg_mesh_free(&m);
}

/* Small patches: many of them, many boundary cells, still the host's A. */
static void run_small_patches(clmg_dtype type) {
  clmg_p1_assembler_options o = options_for(type, CLMG_P1_PATH_PATCH);
  o.patch_local_bytes = 1024;
  o.work_group_size = 16;
  clmg_helmholtz_problem p;
  clmg_helmholtz_problem_defaults(&p);
  clmg_p1_assembler_info info;
  clmg_mesh m = kuhn_cube(4, 1.0);
  two_materials(&m, 0.5, 1, 2);
  int32_t ids[2] = {1, 2};
  double sigma[2] = {1.0, 100.0};
  p.material_ids = ids;
  p.sigma = sigma;
  p.num_materials = 2;
  compare_device(&m, &p, &o, &info, "Kuhn cube 4^3, 1 KiB patches");
  assert_true(info.num_patches > 10);
  assert_true(info.boundary_cells > 0);
  assert_true(info.max_patch_local_bytes <= 1024);
  assert_true(info.gathered_entries > 0);
  /* patches of several planes of rows: some cells lie inside */
  o.patch_local_bytes = 8192;
  compare_device(&m, &p, &o, &info, "Kuhn cube 4^3, 8 KiB patches");
  assert_true(info.num_patches > 1);
  assert_true(info.boundary_cells > 0 && info.boundary_cells < m.num_cells);
  o.patch_local_bytes = 1024;
  renumber(&m);
  compare_device(&m, &p, &o, &info, "Kuhn cube 4^3 renumbered, 1 KiB patches");
  clmg_mesh_free(&m);
  m = triangle_square(9, 0.1);
  clmg_helmholtz_problem_defaults(&p);
  compare_device(&m, &p, &o, &info, "triangles 9^2, 1 KiB patches");
  assert_true(info.num_patches > 5);
  clmg_mesh_free(&m);
}
TYPED_TESTS(small_patches)

/* Every format through the same call, on the patch and the rows paths: y =
 * A x against the host, after the first assembly and after an in-place
 * update with other coefficients (lambda and sigma); RHS_ONES gives b = 1. */
static void run_formats_and_update(clmg_dtype type) {
  double tol = type == CLMG_DOUBLE ? 1e-12 : 1e-5;
  clmg_mesh m = kuhn_cube(3, 1.0);
  size_t n = m.num_vertices;
  const clmg_matrix_format formats[] = {CLMG_FORMAT_CSR, CLMG_FORMAT_ELLR, CLMG_FORMAT_SELL};
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *y_host = malloc(n * sizeof *y);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(y_host);
  for (size_t i = 0; i < n; i++)
    x[i] = rng_uniform();
  clmg_vector *xd = NULL, *yd = NULL, *b = NULL;
  CHECK_OK(clmg_vector_create(ctx, type, n, &xd));
  CHECK_OK(clmg_vector_create(ctx, type, n, &yd));
  CHECK_OK(clmg_vector_create(ctx, type, n, &b));
  CHECK_OK(clmg_vector_upload_doubles(xd, x));
  for (size_t run = 0; run < 6; run++) {
    size_t f = run % 3;
    clmg_p1_assembler_options o =
        options_for(type, run < 3 ? CLMG_P1_PATH_AUTO : CLMG_P1_PATH_ROWS);
    o.matrix.format = formats[f];
    o.patch_local_bytes = 2048;
    clmg_p1_assembler *assembler = NULL;
    CHECK_OK(clmg_p1_assembler_create(ctx, &m, &o, &assembler));
    clmg_matrix *matrix = NULL;
    for (int round = 0; round < 2; round++) {
      clmg_helmholtz_problem p;
      clmg_helmholtz_problem_defaults(&p);
      p.lambda = round ? 0.25 : 1.0;
      p.rhs = CLMG_RHS_ONES;
      const int32_t material = 1; /* kuhn_cube's cells' material id */
      const double sigma = 3.0;
      if (round) {
        p.material_ids = &material;
        p.sigma = &sigma;
        p.num_materials = 1;
      }
      clmg_matrix *before = matrix;
      CHECK_OK(clmg_p1_assemble_device(assembler, &p, &matrix, b));
      if (round)
        assert_ptr_equal(matrix, before);
      assert_int_equal(clmg_matrix_format_of(matrix), formats[f]);
      double *b_host;
      clmg_csr a = host_assemble(&m, &p, &b_host);
      clmg_csr_spmv_host(1.0, &a, x, 0.0, y_host);
      CHECK_OK(clmg_spmv(1.0, matrix, xd, 0.0, yd));
      CHECK_OK(clmg_vector_download_doubles(yd, y));
      double scale = 0.0;
      for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(y_host[i]));
      for (size_t i = 0; i < n; i++)
        if (!(fabs(y[i] - y_host[i]) <= 10 * tol * scale))
          fail_msg("%s, round %d: (A x)(%zu) = %.17g on the device, %.17g on the host",
                   clmg_matrix_format_name(formats[f]), round, i, y[i], y_host[i]);
      CHECK_OK(clmg_vector_download_doubles(b, y));
      for (size_t i = 0; i < n; i++)
        assert_true(y[i] == 1.0);
      clmg_csr_free(&a);
      free(b_host);
    }
    clmg_matrix_destroy(matrix);
    clmg_p1_assembler_destroy(assembler);
  }
  clmg_vector_destroy(xd);
  clmg_vector_destroy(yd);
  clmg_vector_destroy(b);
  free(x);
  free(y);
  free(y_host);
  clmg_mesh_free(&m);
}
TYPED_TESTS(formats_and_update)

/* Wrong b, a foreign matrix, a budget beyond the device's local memory. */
static void test_device_errors(void **state) {
  (void)state;
  clmg_mesh m = kuhn_cube(2, 1.0);
  clmg_p1_assembler *assembler = NULL;
  clmg_p1_assembler_options o = options_for(CLMG_DOUBLE, CLMG_P1_PATH_PATCH);
  o.patch_local_bytes = 64; /* less than one row */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assembler_create(ctx, &m, &o, &assembler));
  CHECK_CONTAINS(clmg_context_message(ctx), "needs more than the 64 bytes");
  CHECK_OK(clmg_p1_assembler_create(ctx, &m, NULL, &assembler));
  clmg_vector *b = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, m.num_vertices + 1, &b));
  clmg_matrix *matrix = NULL;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_p1_assemble_device(assembler, NULL, &matrix, b));
  CHECK_CONTAINS(clmg_context_message(ctx), "b must hold 27 double");
  clmg_csr identity = {0};
  triplets t = {0};
  for (size_t i = 0; i < 5; i++)
    triplets_add(&t, i, i, 1.0);
  identity = triplets_to_csr(&t, 5);
  CHECK_OK(clmg_matrix_create(ctx, &identity, NULL, &matrix));
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_p1_assemble_device(assembler, NULL, &matrix, NULL));
  CHECK_CONTAINS(clmg_context_message(ctx), "not a matrix of this assembler");
  clmg_matrix_destroy(matrix);
  clmg_csr_free(&identity);
  clmg_vector_destroy(b);
  clmg_p1_assembler_destroy(assembler);
  clmg_mesh_free(&m);
}

static int setup(void **state) {
  (void)state;
  return test_open_context(&ctx, NULL, "assembly", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  rng_seed(20140301);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_simplices),
      cmocka_unit_test(test_host_properties),
      cmocka_unit_test(test_host_errors),
      BOTH(device_matches_host),
      cmocka_unit_test(test_device_regular_mesh),
      BOTH(small_patches),
      BOTH(formats_and_update),
      BOTH(dirichlet),
      cmocka_unit_test(test_dirichlet_tags_change),
      cmocka_unit_test(test_device_errors),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("assembly", tests, setup, teardown);
}
