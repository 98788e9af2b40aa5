/* Test-matrix generators for the benchmarks: see matrices.h.
 *
 * All of them go through one builder: a generator names couplings between
 * pairs of unknowns with a positive weight w; the builder stores -w at (i, j)
 * and (j, i) and adds w to both diagonals. One end of a coupling may be an
 * eliminated Dirichlet unknown (index -1): only the other diagonal gets w.
 * That makes every matrix a symmetric, diagonally dominant M-matrix by
 * construction (a discrete diffusion operator with random coefficients), and
 * clmg_csr_from_triplets sums repeated couplings (element assembly). */
#include "matrices.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers: splitmix64, the same on every platform ---- */

typedef struct random_stream {
  uint64_t state;
} random_stream;

static random_stream random_start(uint64_t seed, uint64_t stream) {
  random_stream r = {seed ^ (stream * 0xd1b54a32d192ed03ULL)};
  return r;
}

static uint64_t random_next(random_stream *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [low, high). */
static double random_between(random_stream *r, double low, double high) {
  return low + (high - low) * ((double)(random_next(r) >> 11) * 0x1.0p-53);
}

/* Uniform in [0, n), n > 0 (the modulo bias is far below what matters here). */
static size_t random_below(random_stream *r, size_t n) {
  return (size_t)(random_next(r) % (uint64_t)n);
}

/* ---- the coupling builder ---- */

typedef struct coupling_builder {
  size_t unknowns;
  size_t count;
  size_t capacity;
  int32_t *row_index;
  int32_t *col_index;
  double *values;
  double *diagonal; /* sum of the weights of each unknown's couplings */
  int out_of_memory;
} coupling_builder;

static void builder_free(coupling_builder *b) {
  free(b->row_index);
  free(b->col_index);
  free(b->values);
  free(b->diagonal);
  memset(b, 0, sizeof *b);
}

static int builder_grow(coupling_builder *b, size_t wanted) {
  if (wanted <= b->capacity) {
    return 1;
  }
  size_t capacity = b->capacity ? b->capacity : 1024;
  while (capacity < wanted) {
    capacity *= 2;
  }
  int32_t *rows = realloc(b->row_index, capacity * sizeof *rows);
  if (rows != NULL) {
    b->row_index = rows;
  }
  int32_t *cols = realloc(b->col_index, capacity * sizeof *cols);
  if (cols != NULL) {
    b->col_index = cols;
  }
  double *values = realloc(b->values, capacity * sizeof *values);
  if (values != NULL) {
    b->values = values;
  }
  if (rows == NULL || cols == NULL || values == NULL) {
    b->out_of_memory = 1;
    return 0;
  }
  b->capacity = capacity;
  return 1;
}

/* expected_entries sizes the triplet arrays up front, so large matrices do
 * not pay for repeated reallocation; the arrays still grow if it is low. */
static clmg_status builder_init(coupling_builder *b, size_t unknowns, size_t expected_entries,
                                clmg_error *error) {
  memset(b, 0, sizeof *b);
  if (unknowns > INT32_MAX) {
    if (error != NULL) {
      snprintf(error->message, sizeof error->message, "%zu unknowns exceed the 32-bit index limit",
               unknowns);
    }
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  b->unknowns = unknowns;
  b->diagonal = calloc(unknowns ? unknowns : 1, sizeof *b->diagonal);
  if (b->diagonal == NULL || !builder_grow(b, expected_entries + unknowns)) {
    builder_free(b);
    if (error != NULL) {
      snprintf(error->message, sizeof error->message,
               "out of host memory for a matrix of %zu unknowns", unknowns);
    }
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  return CLMG_SUCCESS;
}

static void builder_push(coupling_builder *b, int64_t row, int64_t col, double value) {
  if (b->count == b->capacity && !builder_grow(b, b->count + 1)) {
    return;
  }
  b->row_index[b->count] = (int32_t)row;
  b->col_index[b->count] = (int32_t)col;
  b->values[b->count] = value;
  b->count++;
}

/* Couples unknowns i and j (either may be -1: eliminated) with weight w > 0. */
static void builder_couple(coupling_builder *b, int64_t i, int64_t j, double weight) {
  if (i >= 0) {
    b->diagonal[i] += weight;
  }
  if (j >= 0) {
    b->diagonal[j] += weight;
  }
  if (i >= 0 && j >= 0 && i != j) {
    builder_push(b, i, j, -weight);
    builder_push(b, j, i, -weight);
  }
}

/* Adds the diagonal entries and builds the CSR matrix; frees the builder. */
static clmg_status builder_finish(coupling_builder *b, clmg_csr *out, clmg_error *error) {
  for (size_t i = 0; i < b->unknowns; ++i) {
    builder_push(b, (int64_t)i, (int64_t)i, b->diagonal[i]);
  }
  clmg_status status;
  if (b->out_of_memory) {
    memset(out, 0, sizeof *out);
    if (error != NULL) {
      snprintf(error->message, sizeof error->message,
               "out of host memory for the triplets of a matrix of %zu unknowns", b->unknowns);
    }
    status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
  } else {
    status = clmg_csr_from_triplets(b->unknowns, b->unknowns, b->count, b->row_index, b->col_index,
                                    b->values, out, error);
  }
  builder_free(b);
  return status;
}

/* Refuses a size parameter outside [smallest, largest]. */
static clmg_status bad_size(const char *what, size_t value, size_t smallest, size_t largest,
                            clmg_error *error) {
  if (error != NULL) {
    snprintf(error->message, sizeof error->message,
             "%s must be in [%zu, %zu] (32-bit indices), not %zu", what, smallest, largest, value);
  }
  return CLMG_ERROR_INVALID_ARGUMENT;
}

/* ---- stencils on structured grids ---- */

typedef struct grid_offset {
  int dx, dy, dz;
} grid_offset;

/* A stencil matrix on an m^dims grid (dims 2 or 3). `half` lists one of each
 * pair of opposite neighbour offsets; every neighbour pair is coupled once
 * with a random weight in [0.5, 1.5). A neighbour outside the grid is a
 * Dirichlet point: its weight still goes to the diagonal. */
static clmg_status stencil_matrix(unsigned dims, size_t m, const grid_offset *half,
                                  size_t half_count, uint64_t seed, clmg_csr *out,
                                  clmg_error *error) {
  memset(out, 0, sizeof *out);
  const size_t largest = dims == 2 ? 46340 : 1290; /* m^dims <= INT32_MAX */
  if (m == 0 || m > largest) {
    return bad_size("the grid side", m, 1, largest, error);
  }
  const int64_t side = (int64_t)m;
  const int64_t depth = dims == 3 ? side : 1;
  size_t unknowns = (size_t)(side * side * depth);
  coupling_builder b;
  clmg_status status = builder_init(&b, unknowns, unknowns * 2 * half_count, error);
  if (status != CLMG_SUCCESS) {
    return status;
  }
  random_stream random = random_start(seed, 1);
  for (int64_t z = 0; z < depth; ++z) {
    for (int64_t y = 0; y < side; ++y) {
      for (int64_t x = 0; x < side; ++x) {
        const int64_t point = (z * side + y) * side + x;
        for (size_t k = 0; k < half_count; ++k) {
          const grid_offset o = half[k];
          const int64_t qx = x + o.dx, qy = y + o.dy, qz = z + o.dz;
          const int inside_forward =
              qx >= 0 && qx < side && qy >= 0 && qy < side && qz >= 0 && qz < depth;
          builder_couple(&b, point, inside_forward ? (qz * side + qy) * side + qx : -1,
                         random_between(&random, 0.5, 1.5));
          /* The backward neighbour, when it is inside, couples to this point
           * from its own forward offset; when outside, nobody else sees it. */
          const int64_t rx = x - o.dx, ry = y - o.dy, rz = z - o.dz;
          if (!(rx >= 0 && rx < side && ry >= 0 && ry < side && rz >= 0 && rz < depth)) {
            builder_couple(&b, -1, point, random_between(&random, 0.5, 1.5));
          }
        }
      }
    }
  }
  return builder_finish(&b, out, error);
}

clmg_status perf_laplace2d_5pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error) {
  static const grid_offset half[] = {{1, 0, 0}, {0, 1, 0}};
  return stencil_matrix(2, m, half, 2, seed, out, error);
}

clmg_status perf_laplace2d_9pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error) {
  static const grid_offset half[] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {-1, 1, 0}};
  return stencil_matrix(2, m, half, 4, seed, out, error);
}

clmg_status perf_laplace3d_7pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error) {
  static const grid_offset half[] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  return stencil_matrix(3, m, half, 3, seed, out, error);
}

clmg_status perf_laplace3d_27pt(size_t m, uint64_t seed, clmg_csr *out, clmg_error *error) {
  /* The 13 offsets that come first in (dz, dy, dx) order of the 26. */
  grid_offset half[13];
  size_t count = 0;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        int positive = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
        if (positive) {
          half[count++] = (grid_offset){dx, dy, dz};
        }
      }
    }
  }
  return stencil_matrix(3, m, half, count, seed, out, error);
}

/* ---- finite-element patterns on a uniform quad mesh ---- */

clmg_status perf_fe_q1(size_t elements, uint64_t seed, clmg_csr *out, clmg_error *error) {
  memset(out, 0, sizeof *out);
  if (elements < 2 || elements > 46341) {
    return bad_size("the Q1 elements per side", elements, 2, 46341, error);
  }
  const int64_t e = (int64_t)elements;
  const int64_t interior = e - 1; /* interior vertices per side: the unknowns */
  coupling_builder b;
  clmg_status status = builder_init(&b, (size_t)(interior * interior), (size_t)(12 * e * e), error);
  if (status != CLMG_SUCCESS) {
    return status;
  }
  random_stream random = random_start(seed, 2);
  for (int64_t ey = 0; ey < e; ++ey) {
    for (int64_t ex = 0; ex < e; ++ex) {
      /* Corners counter-clockwise; boundary vertices are eliminated (-1). */
      const int64_t vx[4] = {ex, ex + 1, ex + 1, ex};
      const int64_t vy[4] = {ey, ey, ey + 1, ey + 1};
      int64_t dof[4];
      for (int k = 0; k < 4; ++k) {
        int on_boundary = vx[k] == 0 || vx[k] == e || vy[k] == 0 || vy[k] == e;
        dof[k] = on_boundary ? -1 : (vy[k] - 1) * interior + (vx[k] - 1);
      }
      /* The bilinear element stiffness of -div(kappa grad u) on a square is
       * kappa/6 [4 -1 -2 -1; -1 4 -1 -2; ...]: -1/6 along edges, -1/3
       * across the diagonals, and the diagonal is the sum of the two. */
      const double kappa = random_between(&random, 0.5, 1.5);
      for (int k = 0; k < 4; ++k) {
        builder_couple(&b, dof[k], dof[(k + 1) % 4], kappa / 6.0);
      }
      builder_couple(&b, dof[0], dof[2], kappa / 3.0);
      builder_couple(&b, dof[1], dof[3], kappa / 3.0);
    }
  }
  return builder_finish(&b, out, error);
}

clmg_status perf_fe_q2(size_t elements, uint64_t seed, clmg_csr *out, clmg_error *error) {
  memset(out, 0, sizeof *out);
  if (elements < 1 || elements > 23170) { /* (2e-1)^2 <= INT32_MAX */
    return bad_size("the Q2 elements per side", elements, 1, 23170, error);
  }
  const int64_t e = (int64_t)elements;
  /* Kept DOFs by block: interior vertices (e-1)^2, horizontal edges not on
   * the bottom or top side e*(e-1), vertical edges not on the left or right
   * side (e-1)*e, cells e^2. */
  const int64_t vertex_base = 0;
  const int64_t horizontal_base = vertex_base + (e - 1) * (e - 1);
  const int64_t vertical_base = horizontal_base + e * (e - 1);
  const int64_t cell_base = vertical_base + (e - 1) * e;
  const int64_t unknowns = cell_base + e * e;
  coupling_builder b;
  clmg_status status = builder_init(&b, (size_t)unknowns, (size_t)(72 * e * e), error);
  if (status != CLMG_SUCCESS) {
    return status;
  }
  random_stream random = random_start(seed, 3);
  for (int64_t ey = 0; ey < e; ++ey) {
    for (int64_t ex = 0; ex < e; ++ex) {
      int64_t dof[9];
      int count = 0;
      /* Vertex (vx, vy), 0 <= vx, vy <= e: kept when interior. */
      for (int k = 0; k < 4; ++k) {
        int64_t vx = ex + (k == 1 || k == 2), vy = ey + (k >= 2);
        int on_boundary = vx == 0 || vx == e || vy == 0 || vy == e;
        dof[count++] = on_boundary ? -1 : vertex_base + (vy - 1) * (e - 1) + (vx - 1);
      }
      /* Horizontal edge (hx, hy) joins vertices (hx, hy) and (hx+1, hy):
       * bottom hy = ey, top hy = ey+1; kept when 0 < hy < e. */
      for (int64_t hy = ey; hy <= ey + 1; ++hy) {
        dof[count++] = (hy == 0 || hy == e) ? -1 : horizontal_base + (hy - 1) * e + ex;
      }
      /* Vertical edge (vx, vy) joins vertices (vx, vy) and (vx, vy+1): left
       * vx = ex, right vx = ex+1; kept when 0 < vx < e. */
      for (int64_t vx = ex; vx <= ex + 1; ++vx) {
        dof[count++] = (vx == 0 || vx == e) ? -1 : vertical_base + ey * (e - 1) + (vx - 1);
      }
      dof[count++] = cell_base + ey * e + ex;
      /* Every pair of the element's 9 DOFs couples, with a per-element
       * coefficient times a per-pair factor. */
      const double kappa = random_between(&random, 0.5, 1.5);
      for (int i = 0; i < 9; ++i) {
        for (int j = i + 1; j < 9; ++j) {
          builder_couple(&b, dof[i], dof[j], kappa * random_between(&random, 0.1, 1.0));
        }
      }
    }
  }
  return builder_finish(&b, out, error);
}

/* ---- an irregular matrix ---- */

clmg_status perf_irregular(size_t rows, size_t dense_rows, uint64_t seed, clmg_csr *out,
                           clmg_error *error) {
  memset(out, 0, sizeof *out);
  if (rows < 2 || rows > INT32_MAX) {
    return bad_size("the rows of the irregular matrix", rows, 2, INT32_MAX, error);
  }
  if (dense_rows > rows) {
    dense_rows = rows;
  }
  const size_t dense_length = rows / 10 > 0 ? rows / 10 : 1;
  coupling_builder b;
  clmg_status status = builder_init(&b, rows, rows * 9 + 2 * dense_rows * dense_length, error);
  if (status != CLMG_SUCCESS) {
    return status;
  }
  random_stream random = random_start(seed, 4);
  const size_t near_window = 256;
  for (size_t i = 0; i < rows; ++i) {
    size_t partners = 1 + random_below(&random, 8);
    for (size_t k = 0; k < partners; ++k) {
      size_t j;
      if (random_below(&random, 2) == 0) {
        /* Near the diagonal, as after a bandwidth-reducing ordering. */
        j = i + 1 + random_below(&random, near_window);
        if (j >= rows) {
          j = random_below(&random, rows);
        }
      } else {
        j = random_below(&random, rows);
      }
      if (j != i) { /* a repeated pair just sums */
        builder_couple(&b, (int64_t)i, (int64_t)j, random_between(&random, 0.1, 1.0));
      }
    }
  }
  /* Dense rows spread evenly; each takes one column out of every ten,
   * at a random place in the ten, so the columns are distinct and sorted. */
  for (size_t d = 0; d < dense_rows; ++d) {
    const size_t row = (2 * d + 1) * rows / (2 * dense_rows);
    for (size_t t = 0; t < dense_length; ++t) {
      size_t j = 10 * t + random_below(&random, 10);
      if (j < rows && j != row) {
        builder_couple(&b, (int64_t)row, (int64_t)j, random_between(&random, 0.1, 1.0));
      }
    }
  }
  /* A graph Laplacian is singular: shift the diagonal. */
  for (size_t i = 0; i < rows; ++i) {
    b.diagonal[i] += random_between(&random, 0.1, 0.2);
  }
  return builder_finish(&b, out, error);
}

/* ---- sizing by a target nonzero count ---- */

/* Nonzero counts as functions of the size parameter. Along a line of m grid
 * points a 3-wide stencil has 3m - 2 (point, neighbour-or-self) pairs (the two
 * ends miss one each); a box stencil multiplies the dimensions: (3m-2)^d. The
 * 5- and 7-point stars add the lines: 5m^2 - 4m and 7m^3 - 6m^2. */
static double nnz_lap2d5(double m) {
  return 5 * m * m - 4 * m;
}
static double nnz_lap2d9(double m) {
  return (3 * m - 2) * (3 * m - 2);
}
static double nnz_lap3d7(double m) {
  return 7 * m * m * m - 6 * m * m;
}
static double nnz_lap3d27(double m) {
  return (3 * m - 2) * (3 * m - 2) * (3 * m - 2);
}
static double nnz_q1(double elements) {
  return nnz_lap2d9(elements - 1); /* the pattern of the interior vertices */
}
static double nnz_q2(double elements) {
  /* 25, 2 x 15 and 9 entries per element, less the eliminated boundary
   * DOFs' columns (fitted: exact within 0.1% from 10 elements on). */
  return 64 * elements * elements - 143 * elements;
}

/* The size parameter n >= smallest whose nonzero count is closest to target
 * (the counts grow with n). */
static size_t closest_size(double target, double (*nnz_of)(double), size_t smallest) {
  size_t n = smallest;
  while (nnz_of((double)(n + 1)) <= target) {
    n = n < 16 ? n + 1 : n + n / 16; /* coarse steps first, refined below */
  }
  while (n > smallest && nnz_of((double)n) > target) {
    --n;
  }
  while (nnz_of((double)(n + 1)) <= target) {
    ++n;
  }
  if (fabs(nnz_of((double)(n + 1)) - target) < fabs(nnz_of((double)n) - target)) {
    ++n;
  }
  return n;
}

static clmg_status sized_lap2d5(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                                size_t detail_size, clmg_error *error) {
  size_t m = closest_size((double)target, nnz_lap2d5, 2);
  snprintf(detail, detail_size, "2D 5-point, %zu x %zu grid", m, m);
  return perf_laplace2d_5pt(m, seed, out, error);
}

static clmg_status sized_lap2d9(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                                size_t detail_size, clmg_error *error) {
  size_t m = closest_size((double)target, nnz_lap2d9, 2);
  snprintf(detail, detail_size, "2D 9-point, %zu x %zu grid", m, m);
  return perf_laplace2d_9pt(m, seed, out, error);
}

static clmg_status sized_lap3d7(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                                size_t detail_size, clmg_error *error) {
  size_t m = closest_size((double)target, nnz_lap3d7, 2);
  snprintf(detail, detail_size, "3D 7-point, %zu^3 grid", m);
  return perf_laplace3d_7pt(m, seed, out, error);
}

static clmg_status sized_lap3d27(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                                 size_t detail_size, clmg_error *error) {
  size_t m = closest_size((double)target, nnz_lap3d27, 2);
  snprintf(detail, detail_size, "3D 27-point, %zu^3 grid", m);
  return perf_laplace3d_27pt(m, seed, out, error);
}

static clmg_status sized_q1(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                            size_t detail_size, clmg_error *error) {
  size_t elements = closest_size((double)target, nnz_q1, 3);
  snprintf(detail, detail_size, "Q1 stiffness, %zu x %zu quads", elements, elements);
  return perf_fe_q1(elements, seed, out, error);
}

static clmg_status sized_q2(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                            size_t detail_size, clmg_error *error) {
  size_t elements = closest_size((double)target, nnz_q2, 3);
  snprintf(detail, detail_size, "Q2 pattern, %zu x %zu quads, vertex/edge/cell order", elements,
           elements);
  return perf_fe_q2(elements, seed, out, error);
}

static clmg_status sized_irregular(size_t target, uint64_t seed, clmg_csr *out, char *detail,
                                   size_t detail_size, clmg_error *error) {
  /* About 10 entries per row, and 4 dense rows of rows/10 entries that also
   * add an entry to as many other rows: 10.8 per row on average. */
  const size_t dense_rows = 4;
  size_t rows = (size_t)llround((double)target / 10.8);
  if (rows < 100) {
    rows = 100;
  }
  snprintf(detail, detail_size, "random rows of ~10, %zu dense rows of %zu", dense_rows, rows / 10);
  return perf_irregular(rows, dense_rows, seed, out, error);
}

static const perf_matrix_kind kinds[] = {
    {"lap2d5", "2D Poisson, 5-point stencil, random coefficients", sized_lap2d5},
    {"lap2d9", "2D 9-point stencil, random coefficients", sized_lap2d9},
    {"lap3d7", "3D Poisson, 7-point stencil, random coefficients", sized_lap3d7},
    {"lap3d27", "3D 27-point stencil, random coefficients", sized_lap3d27},
    {"q1", "Q1 Poisson stiffness, random element coefficients", sized_q1},
    {"q2", "Q2 stiffness pattern (rows 9/15/25), random couplings", sized_q2},
    {"irregular", "random sparse rows (~10) plus 4 dense rows (n/10)", sized_irregular},
};

const perf_matrix_kind *perf_matrix_kinds(size_t *count) {
  *count = sizeof kinds / sizeof kinds[0];
  return kinds;
}

const perf_matrix_kind *perf_matrix_find(const char *name) {
  for (size_t i = 0; name != NULL && i < sizeof kinds / sizeof kinds[0]; ++i) {
    if (strcmp(kinds[i].name, name) == 0) {
      return &kinds[i];
    }
  }
  return NULL;
}

perf_row_lengths perf_matrix_row_lengths(const clmg_csr *a) {
  perf_row_lengths lengths = {0, 0, 0};
  if (a->rows == 0 || a->row_ptr == NULL) {
    return lengths;
  }
  lengths.min = SIZE_MAX;
  for (size_t i = 0; i < a->rows; ++i) {
    size_t length = (size_t)(a->row_ptr[i + 1] - a->row_ptr[i]);
    lengths.min = length < lengths.min ? length : lengths.min;
    lengths.max = length > lengths.max ? length : lengths.max;
  }
  lengths.mean = (double)clmg_csr_nnz(a) / (double)a->rows;
  return lengths;
}
