/* Helpers shared by the test suites; see test_util.h. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_util.h"

#ifndef CLMG_TEST_TMPDIR
#define CLMG_TEST_TMPDIR "/tmp"
#endif

/* ---- random numbers ---- */

uint64_t rng_state = 0x9e3779b97f4a7c15u;

void rng_seed(uint64_t default_seed) {
  const char *seed = getenv("CLMG_TEST_SEED");
  rng_state = seed ? strtoull(seed, NULL, 0) : default_seed;
}

uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

double rng_uniform(void) {
  return (double)(rng_next() >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

size_t rng_below(size_t n) {
  return (size_t)(rng_next() % n);
}

/* ---- cmocka ---- */

void test_apply_filters(void) {
  if (getenv("CLMG_TEST_FILTER"))
    cmocka_set_test_filter(getenv("CLMG_TEST_FILTER"));
  if (getenv("CLMG_TEST_SKIP"))
    cmocka_set_skip_filter(getenv("CLMG_TEST_SKIP"));
}

/* ---- contexts ---- */

int test_open_context(clmg_context **ctx, const clmg_context_options *options, const char *tag,
                      int print_device) {
  const char *open = tag ? "[" : "", *close = tag ? "] " : "";
  if (!tag)
    tag = "";
  clmg_status status = clmg_context_create(options, ctx);
  if (status != CLMG_SUCCESS) {
    print_error("%s%s%scontext: %s: %s\n", open, tag, close, clmg_status_string(status),
                *ctx ? clmg_context_message(*ctx) : "(no context)");
    clmg_context_destroy(*ctx);
    *ctx = NULL;
    return -1;
  }
  if (print_device)
    print_message("%s%s%sdevice: %s / %s\n", open, tag, close,
                  clmg_context_device(*ctx)->platform_name, clmg_context_device(*ctx)->name);
  return 0;
}

char *test_env_set(const char *name, const char *value) {
  const char *was = getenv(name);
  char *kept = was ? strdup(was) : NULL;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  return kept;
}

void test_env_restore(const char *name, char *kept) {
  if (kept)
    setenv(name, kept, 1);
  else
    unsetenv(name);
  free(kept);
}

int test_open_context_params(clmg_context **ctx, const char *params, const char *tag,
                             int print_device) {
  char *kept = test_env_set("CLMG_DEVICE_PARAMS", params);
  int opened = test_open_context(ctx, NULL, tag, print_device);
  test_env_restore("CLMG_DEVICE_PARAMS", kept);
  return opened;
}

int test_close_context(clmg_context **ctx) {
  clmg_context_destroy(*ctx);
  *ctx = NULL;
  return 0;
}

/* ---- scratch directories ---- */

char *make_tmpdir(const char *tag) {
  char *path = malloc(strlen(CLMG_TEST_TMPDIR) + strlen(tag) + 16);
  assert_non_null(path);
  if (mkdir(CLMG_TEST_TMPDIR, 0777) != 0 && errno != EEXIST)
    fail_msg("cannot create %s: %s", CLMG_TEST_TMPDIR, strerror(errno));
  sprintf(path, "%s/%s-XXXXXX", CLMG_TEST_TMPDIR, tag);
  if (!mkdtemp(path))
    fail_msg("mkdtemp(%s): %s", path, strerror(errno));
  return path;
}

static int remove_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void remove_tree(char *path) {
  if (path)
    nftw(path, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
  free(path);
}

/* ---- host matrices ---- */

void triplets_add(triplets *t, size_t row, size_t col, double value) {
  if (t->count == t->capacity) {
    t->capacity = t->capacity ? 2 * t->capacity : 256;
    t->row = realloc(t->row, t->capacity * sizeof *t->row);
    t->col = realloc(t->col, t->capacity * sizeof *t->col);
    t->val = realloc(t->val, t->capacity * sizeof *t->val);
    assert_non_null(t->row);
    assert_non_null(t->col);
    assert_non_null(t->val);
  }
  t->row[t->count] = (int32_t)row;
  t->col[t->count] = (int32_t)col;
  t->val[t->count] = value;
  t->count++;
}

clmg_csr triplets_to_csr(triplets *t, size_t n) {
  clmg_csr a = {0};
  clmg_error error;
  clmg_status status = clmg_csr_from_triplets(n, n, t->count, t->row, t->col, t->val, &a, &error);
  if (status != CLMG_SUCCESS)
    fail_msg("clmg_csr_from_triplets: %s: %s", clmg_status_string(status), error.message);
  free(t->row);
  free(t->col);
  free(t->val);
  memset(t, 0, sizeof *t);
  return a;
}

void dense_solve_in_place(double *m, double *rhs, size_t n) {
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row)
      if (fabs(m[row * n + col]) > fabs(m[pivot * n + col]))
        pivot = row;
    if (!(fabs(m[pivot * n + col]) > 0))
      fail_msg("dense solve: the matrix is singular (column %zu)", col);
    for (size_t k = 0; k < n; ++k) {
      double t = m[col * n + k];
      m[col * n + k] = m[pivot * n + k];
      m[pivot * n + k] = t;
    }
    double t = rhs[col];
    rhs[col] = rhs[pivot];
    rhs[pivot] = t;
    for (size_t row = col + 1; row < n; ++row) {
      double factor = m[row * n + col] / m[col * n + col];
      if (factor == 0)
        continue;
      for (size_t k = col; k < n; ++k)
        m[row * n + k] -= factor * m[col * n + k];
      rhs[row] -= factor * rhs[col];
    }
  }
  for (size_t i = n; i-- > 0;) {
    double sum = rhs[i];
    for (size_t k = i + 1; k < n; ++k)
      sum -= m[i * n + k] * rhs[k];
    rhs[i] = sum / m[i * n + i];
  }
}

/* -Laplace(u) + w . grad(u) on the unit square, n x n interior points,
 * h = 1 / (n + 1), first-order upwind convection, zero Dirichlet values
 * eliminated; global Péclet number |w| (diffusion 1). The wind turns with
 * the position, so both directions of both axes occur. */
clmg_csr upwind_convection_diffusion(size_t n, double peclet) {
  double h = 1.0 / (double)(n + 1), d = 1.0 / (h * h);
  triplets t = {0};
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      double x = (double)(j + 1) * h, y = (double)(i + 1) * h;
      double wx = peclet * (y - 0.5) * 2.0, wy = peclet * (0.5 - x) * 2.0 + 0.3 * peclet;
      size_t row = i * n + j;
      double diagonal = 4.0 * d + (fabs(wx) + fabs(wy)) / h;
      triplets_add(&t, row, row, diagonal);
      /* neighbours: west, east, south, north */
      const long di[4] = {0, 0, -1, 1}, dj[4] = {-1, 1, 0, 0};
      for (int k = 0; k < 4; ++k) {
        long ni = (long)i + di[k], nj = (long)j + dj[k];
        if (ni < 0 || nj < 0 || ni >= (long)n || nj >= (long)n)
          continue;
        double value = -d;
        if (k == 0 && wx > 0)
          value -= wx / h;
        if (k == 1 && wx < 0)
          value += wx / h;
        if (k == 2 && wy > 0)
          value -= wy / h;
        if (k == 3 && wy < 0)
          value += wy / h;
        triplets_add(&t, row, (size_t)ni * n + (size_t)nj, value);
      }
    }
  return triplets_to_csr(&t, n * n);
}

/* ---- the manufactured Stokes flow ---- */

double psi_g0(double t) {
  return t * t * (1 - t) * (1 - t);
}
double psi_g1(double t) {
  return 2 * t * (1 - t) * (1 - 2 * t);
}
double psi_g2(double t) {
  return 2 - 12 * t + 12 * t * t;
}
double psi_g3(double t) {
  return -12 + 24 * t;
}

void stokes_exact_velocity(const double *x, double *u, void *data) {
  (void)data;
  u[0] = psi_g0(x[0]) * psi_g1(x[1]);
  u[1] = -psi_g1(x[0]) * psi_g0(x[1]);
}

double stokes_exact_pressure(const double *x, void *data) {
  (void)data;
  return x[0] * x[0] * x[0] + x[1] * x[1] - 7.0 / 12.0;
}

void stokes_manufactured_force(const double *x, double *f, void *data) {
  double nu = data ? *(const double *)data : 1.0;
  double laplace_u = psi_g2(x[0]) * psi_g1(x[1]) + psi_g0(x[0]) * psi_g3(x[1]);
  double laplace_v = -(psi_g3(x[0]) * psi_g0(x[1]) + psi_g1(x[0]) * psi_g2(x[1]));
  f[0] = -nu * laplace_u + 3 * x[0] * x[0];
  f[1] = -nu * laplace_v + 2 * x[1];
}

/* Five triangles around a vertex: their sharing graph is a 5-cycle, so the
 * Vanka smoother needs three colours on every level. */
void test_pentagon_mesh(clmg_mesh *m) {
  memset(m, 0, sizeof *m);
  m->dim = 2;
  m->cell_type = CLMG_CELL_SIMPLEX;
  m->num_vertices = 6;
  m->num_cells = 5;
  m->num_boundary_faces = 5;
  m->coords = malloc(12 * sizeof *m->coords);
  m->cells = malloc(15 * sizeof *m->cells);
  m->boundary_faces = malloc(10 * sizeof *m->boundary_faces);
  m->boundary_face_tag = malloc(5 * sizeof *m->boundary_face_tag);
  assert_non_null(m->coords);
  assert_non_null(m->cells);
  assert_non_null(m->boundary_faces);
  assert_non_null(m->boundary_face_tag);
  m->coords[0] = 0.5;
  m->coords[1] = 0.5;
  for (int k = 0; k < 5; ++k) {
    double angle = 2 * 3.14159265358979323846 * k / 5;
    m->coords[2 + 2 * k] = 0.5 + 0.5 * cos(angle);
    m->coords[3 + 2 * k] = 0.5 + 0.5 * sin(angle);
    m->cells[3 * k] = 0;
    m->cells[3 * k + 1] = 1 + k;
    m->cells[3 * k + 2] = 1 + (k + 1) % 5;
    m->boundary_faces[2 * k] = 1 + k;
    m->boundary_faces[2 * k + 1] = 1 + (k + 1) % 5;
    m->boundary_face_tag[k] = 1;
  }
}

/* The unit square in n x n squares cut into triangles (distorted by
 * `distortion`, seeded), its sides tagged 1 (y = 0), 2 (x = 1), 3 (y = 1)
 * and 4 (x = 0). */
clmg_mesh test_side_tagged_box(int n, double distortion, uint64_t seed) {
  clmg_mesh mesh = {0};
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_mesh_box_simplices(2, n, distortion, seed, &mesh, &error));
  for (size_t f = 0; f < mesh.num_boundary_faces; f++) {
    const double *a = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f];
    const double *b = mesh.coords + 2 * (size_t)mesh.boundary_faces[2 * f + 1];
    double x = 0.5 * (a[0] + b[0]), y = 0.5 * (a[1] + b[1]);
    int32_t tag = y < 1e-12 ? 1 : x > 1.0 - 1e-12 ? 2 : y > 1.0 - 1e-12 ? 3 : 4;
    assert_true(tag != 4 || x < 1e-12);
    mesh.boundary_face_tag[f] = tag;
  }
  return mesh;
}

clmg_mesh test_refined(const clmg_mesh *coarse) {
  clmg_mesh fine = {0};
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_mesh_refine(coarse, &fine, &error));
  return fine;
}

clmg_triangle_edges test_edges_of(const clmg_mesh *mesh) {
  clmg_triangle_edges edges = {0};
  clmg_error error;
  CHECK_ERROR_OK(error, clmg_triangle_edges_create(mesh, &edges, &error));
  return edges;
}

/* ---- meshes ---- */

/* One quadrilateral with corners xy (tensor order) and its four boundary
 * faces, the bottom one of tag bottom_tag, the others of tag 1; with a
 * circle for tag shape_tag when radius > 0. */
void test_one_quadrilateral(const double xy[8], int32_t bottom_tag, int32_t shape_tag,
                            double centre_x, double centre_y, double radius, clmg_mesh *mesh) {
  static const int32_t faces[8] = {0, 1, 2, 3, 0, 2, 1, 3}; /* bottom, top, left, right */
  memset(mesh, 0, sizeof *mesh);
  mesh->dim = 2;
  mesh->num_vertices = 4;
  mesh->num_cells = 1;
  mesh->num_boundary_faces = 4;
  mesh->coords = malloc(8 * sizeof *mesh->coords);
  mesh->cells = malloc(4 * sizeof *mesh->cells);
  mesh->boundary_faces = malloc(sizeof faces);
  mesh->boundary_face_tag = malloc(4 * sizeof *mesh->boundary_face_tag);
  assert_non_null(mesh->coords);
  assert_non_null(mesh->cells);
  assert_non_null(mesh->boundary_faces);
  assert_non_null(mesh->boundary_face_tag);
  memcpy(mesh->coords, xy, 8 * sizeof *mesh->coords);
  memcpy(mesh->boundary_faces, faces, sizeof faces);
  for (int i = 0; i < 4; i++) {
    mesh->cells[i] = i;
    mesh->boundary_face_tag[i] = i == 0 ? bottom_tag : 1;
  }
  if (radius > 0.0) {
    mesh->shapes = calloc(1, sizeof *mesh->shapes);
    assert_non_null(mesh->shapes);
    mesh->num_shapes = 1;
    mesh->shapes[0].tag = shape_tag;
    mesh->shapes[0].kind = CLMG_SHAPE_CIRCLE;
    mesh->shapes[0].center[0] = centre_x;
    mesh->shapes[0].center[1] = centre_y;
    mesh->shapes[0].radius = radius;
  }
}

/* ---- files ---- */

char *test_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("cannot read %s: %s", path, strerror(errno));
  size_t capacity = 4096, length = 0;
  char *data = malloc(capacity);
  assert_non_null(data);
  for (size_t got; (got = fread(data + length, 1, capacity - length - 1, f)) > 0;) {
    length += got;
    if (capacity - length < 2) {
      capacity *= 2;
      data = realloc(data, capacity);
      assert_non_null(data);
    }
  }
  fclose(f);
  data[length] = '\0';
  if (size)
    *size = length;
  return data;
}

/* ---- a hand-made 2D Poisson hierarchy ---- */

static size_t grid_side(int level) {
  return ((size_t)1 << (level + 1)) + 1;
}

static int grid_boundary(size_t i, size_t j, size_t m) {
  return i == 0 || j == 0 || i + 1 == m || j + 1 == m;
}

clmg_csr test_grid_laplacian(int level) {
  size_t m = grid_side(level);
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      size_t row = i * m + j;
      if (grid_boundary(i, j, m)) {
        triplets_add(&t, row, row, 1.0);
        continue;
      }
      triplets_add(&t, row, row, 4.0);
      const long di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
      for (int k = 0; k < 4; ++k) {
        size_t ni = (size_t)((long)i + di[k]), nj = (size_t)((long)j + dj[k]);
        if (!grid_boundary(ni, nj, m))
          triplets_add(&t, row, ni * m + nj, -1.0);
      }
    }
  return triplets_to_csr(&t, m * m);
}

clmg_csr test_grid_prolongation(int level) {
  size_t m = grid_side(level), mc = grid_side(level - 1);
  triplets t = {0};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      if (grid_boundary(i, j, m))
        continue;
      size_t ci[2] = {i / 2, (i + 1) / 2}, cj[2] = {j / 2, (j + 1) / 2};
      size_t ni = i % 2 ? 2 : 1, nj = j % 2 ? 2 : 1;
      for (size_t a = 0; a < ni; ++a)
        for (size_t b = 0; b < nj; ++b)
          if (!grid_boundary(ci[a], cj[b], mc))
            triplets_add(&t, i * m + j, ci[a] * mc + cj[b], 1.0 / (double)(ni * nj));
    }
  clmg_csr p = triplets_to_csr(&t, m * m); /* square m^2 x m^2; cut the columns */
  p.cols = mc * mc;
  return p;
}

/* ---- a checked Krylov solve ---- */

clmg_status test_solve_checked(clmg_context *ctx, const clmg_csr *a, const double *b,
                               const double *x_star, clmg_krylov_method method,
                               const clmg_preconditioner *preconditioner, double tolerance,
                               int max_iterations, const char *what, int *iterations,
                               double *error) {
  size_t n = a->rows;
  clmg_matrix *matrix = NULL;
  clmg_vector *db = NULL, *dx = NULL;
  clmg_operator op = {0};
  CHECK_CONTEXT_OK(ctx, clmg_matrix_create(ctx, a, NULL, &matrix));
  CHECK_CONTEXT_OK(ctx, clmg_operator_from_matrix(matrix, 0, &op));
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, n, &db));
  CHECK_CONTEXT_OK(ctx, clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
  CHECK_CONTEXT_OK(ctx, clmg_vector_upload_doubles(db, b));
  CHECK_CONTEXT_OK(ctx, clmg_vector_fill(dx, 0.0));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = tolerance;
  ko.max_iterations = max_iterations;
  clmg_krylov_result result = {0};
  clmg_status status = clmg_krylov_solve(method, &op, db, dx, preconditioner, &ko, &result);
  *iterations = result.iterations;
  if (status == CLMG_SUCCESS) {
    double *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
    assert_non_null(x);
    assert_non_null(r);
    CHECK_CONTEXT_OK(ctx, clmg_vector_download_doubles(dx, x));
    memcpy(r, b, n * sizeof *r);
    clmg_csr_spmv_host(-1.0, a, x, 1.0, r);
    double rr = 0, bb = 0, ee = 0, ss = 0;
    for (size_t i = 0; i < n; ++i) {
      rr += r[i] * r[i];
      bb += b[i] * b[i];
      if (x_star) {
        ee += (x[i] - x_star[i]) * (x[i] - x_star[i]);
        ss += x_star[i] * x_star[i];
      }
    }
    if (!(sqrt(rr / bb) <= tolerance))
      fail_msg("%s: true relative residual %.3e above %.1e", what, sqrt(rr / bb), tolerance);
    if (error)
      *error = x_star && ss > 0 ? sqrt(ee / ss) : 0;
    free(x);
    free(r);
  }
  clmg_krylov_result_free(&result);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  clmg_matrix_destroy(matrix);
  return status;
}

/* ---- host CG ---- */

int test_host_cg(const clmg_csr *a, const double *b, double *x, double rtol) {
  size_t n = a->rows;
  double *r = malloc((n ? n : 1) * sizeof *r), *z = malloc((n ? n : 1) * sizeof *z);
  double *p = malloc((n ? n : 1) * sizeof *p), *q = malloc((n ? n : 1) * sizeof *q);
  double *inverse_diagonal = malloc((n ? n : 1) * sizeof *inverse_diagonal);
  assert_true(r && z && p && q && inverse_diagonal);
  clmg_error error = {{0}};
  CHECK_ERROR_OK(error, clmg_csr_diagonal(a, inverse_diagonal, &error));
  for (size_t i = 0; i < n; i++) {
    assert_true(inverse_diagonal[i] > 0.0);
    inverse_diagonal[i] = 1.0 / inverse_diagonal[i];
  }
  double b_norm = 0.0;
  for (size_t i = 0; i < n; i++)
    b_norm += b[i] * b[i];
  b_norm = sqrt(b_norm);
  clmg_csr_spmv_host(1.0, a, x, 0.0, r);
  double rz = 0.0, r_norm = 0.0;
  for (size_t i = 0; i < n; i++) {
    r[i] = b[i] - r[i];
    z[i] = inverse_diagonal[i] * r[i];
    p[i] = z[i];
    rz += r[i] * z[i];
    r_norm += r[i] * r[i];
  }
  int iteration = 0, max_iterations = 20 * (int)n + 100;
  while (sqrt(r_norm) > rtol * b_norm && iteration < max_iterations) {
    clmg_csr_spmv_host(1.0, a, p, 0.0, q);
    double pq = 0.0;
    for (size_t i = 0; i < n; i++)
      pq += p[i] * q[i];
    assert_true(pq > 0.0);
    double alpha = rz / pq, rz_new = 0.0;
    r_norm = 0.0;
    for (size_t i = 0; i < n; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      z[i] = inverse_diagonal[i] * r[i];
      rz_new += r[i] * z[i];
      r_norm += r[i] * r[i];
    }
    for (size_t i = 0; i < n; i++)
      p[i] = z[i] + rz_new / rz * p[i];
    rz = rz_new;
    iteration++;
  }
  if (sqrt(r_norm) > rtol * b_norm)
    fail_msg("host CG: residual %g > %g x %g after %d iterations", sqrt(r_norm), rtol, b_norm,
             iteration);
  free(r);
  free(z);
  free(p);
  free(q);
  free(inverse_diagonal);
  return iteration;
}

void test_check_same_csr(const clmg_csr *x, const clmg_csr *y, double relative_tolerance,
                         const char *what, int level) {
  if (x->rows != y->rows || x->cols != y->cols || clmg_csr_nnz(x) != clmg_csr_nnz(y))
    fail_msg("%s level %d: %zu x %zu, %zu entries against %zu x %zu, %zu", what, level, x->rows,
             x->cols, clmg_csr_nnz(x), y->rows, y->cols, clmg_csr_nnz(y));
  assert_memory_equal(x->row_ptr, y->row_ptr, (x->rows + 1) * sizeof *x->row_ptr);
  assert_memory_equal(x->col, y->col, clmg_csr_nnz(x) * sizeof *x->col);
  double largest = 0, worst = 0;
  for (size_t k = 0; k < clmg_csr_nnz(x); ++k) {
    largest = fmax(largest, fabs(y->val[k]));
    worst = fmax(worst, fabs(x->val[k] - y->val[k]));
  }
  if (!(worst <= relative_tolerance * largest))
    fail_msg("%s level %d: values differ by %.3e (largest %.3e)", what, level, worst, largest);
}

int test_in_limited_child(size_t bytes, int (*body)(void *data), void *data) {
#if defined(__SANITIZE_ADDRESS__)
  return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 0;
#endif
#endif
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    struct rlimit limit = {bytes, bytes};
    _exit(setrlimit(RLIMIT_AS, &limit) != 0 ? 3 : body(data));
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) != 0)
    fail_msg("the child in %zu bytes of address space exited with %d", bytes, WEXITSTATUS(status));
  return 1;
}
