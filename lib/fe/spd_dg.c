/* The dg-diffusion problem of include/clmg/spd_problems.h: -Laplace(u) = f
 * on the unit square, u = g weakly, by the symmetric interior-penalty
 * discontinuous Galerkin method (SIPG: Arnold, SIAM J. Numer. Anal. 19,
 * 1982; Arnold, Brezzi, Cockburn, Marini, SIAM J. Numer. Anal. 39, 2002)
 * with discontinuous P1 on triangles:
 *   a(u, v) = sum_K int_K grad u . grad v
 *           - sum_F int_F ({grad u . n} [v] + {grad v . n} [u])
 *           + sum_F sigma_F int_F [u] [v],
 *   l(v)    = int f v + sum_{F on the boundary} int_F g (sigma_F v - grad v . n),
 * over every edge F, with [w] = w+ - w- and {w} = (w+ + w-) / 2 across an
 * interior edge (n pointing from + to -), [w] = w and {w} = w on the
 * boundary (n outward, the Nitsche terms), and sigma_F = 10 (p + 1)^2 / |F|
 * (p = 1): larger than the coercivity bounds of Shahbazi (J. Comput. Phys.
 * 205, 2005) on the triangles of clmg_mesh_box_simplices up to its largest
 * distortion (tests/test_spd_problems.c factors the matrices). The basis on each
 * triangle is the nodal (barycentric) one: DOF 3 cell + k is 1 at the
 * cell's vertex k. Quadrature: the edge-midpoint rule (degree 2) on the
 * triangles, 2-point Gauss on the edges (degree 3), exact for the matrix
 * and for the load of a linear f and g. The matrix is built from triplets
 * by clmg_csr_from_triplets (9 per triangle, 36 per interior edge, 9 per
 * boundary edge). */
#include "fe/p1_internal.h"
#include "fe/spd_internal.h"
#include "clmg/stokes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 10 (p + 1)^2 for p = 1 */
#define SIPG_PENALTY 40.0

typedef struct triangle_geometry {
  double area, grad[4][3], centroid[2];
} triangle_geometry;

static void triangle_at(const clmg_mesh *mesh, size_t cell, triangle_geometry *t) {
  double coords[6];
  clmg_p1_cell_coords(mesh, cell, coords);
  t->area = clmg_p1_simplex(2, coords, t->grad);
  t->centroid[0] = (coords[0] + coords[2] + coords[4]) / 3.0;
  t->centroid[1] = (coords[1] + coords[3] + coords[5]) / 3.0;
}

/* The nodal basis function k of a triangle at x (linear, 1/3 at the
 * centroid). */
static double phi_at(const triangle_geometry *t, int k, const double *x) {
  return 1.0 / 3.0 + t->grad[k][0] * (x[0] - t->centroid[0]) +
         t->grad[k][1] * (x[1] - t->centroid[1]);
}

static double scalar_field(clmg_spd_field field, const double *x, void *data, double otherwise) {
  if (!field)
    return otherwise;
  double value = 0.0;
  field(x, &value, data);
  return value;
}

clmg_status clmg_spd_dg_diffusion(const clmg_spd_problem_options *options, clmg_spd_problem *out,
                                  clmg_error *error) {
  clmg_mesh mesh = {0};
  clmg_triangle_edges edges = {0};
  int32_t *row = NULL, *col = NULL;
  double *val = NULL;
  clmg_status status =
      clmg_mesh_box_simplices(2, options->level, options->distortion, options->seed, &mesh, error);
  if (status != CLMG_SUCCESS)
    goto done;
  status = clmg_triangle_edges_create(&mesh, &edges, error);
  if (status != CLMG_SUCCESS)
    goto done;
  size_t cells = mesh.num_cells, rows = 3 * cells, boundary = 0;
  for (size_t e = 0; e < edges.num_edges; e++)
    boundary += edges.edge_cells[2 * e + 1] < 0;
  size_t count = 9 * cells + 36 * (edges.num_edges - boundary) + 9 * boundary;
  row = clmg_alloc_array(count, sizeof *row);
  col = clmg_alloc_array(count, sizeof *col);
  val = clmg_alloc_array(count, sizeof *val);
  out->b = clmg_alloc_zeroed_array(rows, sizeof *out->b);
  out->is_dirichlet = clmg_alloc_zeroed_array(rows, 1);
  out->coordinates = clmg_alloc_array(rows, 2 * sizeof *out->coordinates);
  if (!row || !col || !val || !out->b || !out->is_dirichlet || !out->coordinates) {
    status =
        clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate the %zu triplets of the %zu-row DG matrix", count, rows);
    goto done;
  }
  size_t k = 0;

  /* the cells: stiffness, load and nodal points */
  for (size_t cell = 0; cell < cells; cell++) {
    triangle_geometry t;
    triangle_at(&mesh, cell, &t);
    const int32_t *vertices = mesh.cells + 3 * cell;
    for (int i = 0; i < 3; i++) {
      const double *x = mesh.coords + 2 * (size_t)vertices[i];
      out->coordinates[2 * (3 * cell + (size_t)i)] = x[0];
      out->coordinates[2 * (3 * cell + (size_t)i) + 1] = x[1];
    }
    for (int m = 0; m < 3; m++) {
      /* the midpoint of the edge opposite vertex m: basis values 1/2, 1/2, 0 */
      const double *p = mesh.coords + 2 * (size_t)vertices[(m + 1) % 3];
      const double *q = mesh.coords + 2 * (size_t)vertices[(m + 2) % 3];
      double x[2] = {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1])};
      double f = scalar_field(options->source, x, options->data, 1.0) * t.area / 3.0;
      out->b[3 * cell + (size_t)(m + 1) % 3] += 0.5 * f;
      out->b[3 * cell + (size_t)(m + 2) % 3] += 0.5 * f;
    }
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        int low = i < j ? i : j, high = i < j ? j : i;
        row[k] = (int32_t)(3 * cell + (size_t)i);
        col[k] = (int32_t)(3 * cell + (size_t)j);
        val[k++] = t.area * (t.grad[low][0] * t.grad[high][0] + t.grad[low][1] * t.grad[high][1]);
      }
  }

  /* the edges: consistency, symmetry and penalty terms */
  const double gauss[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
  for (size_t e = 0; e < edges.num_edges; e++) {
    const double *p = mesh.coords + 2 * (size_t)edges.edge_vertices[2 * e];
    const double *q = mesh.coords + 2 * (size_t)edges.edge_vertices[2 * e + 1];
    double length = hypot(q[0] - p[0], q[1] - p[1]);
    double sigma = SIPG_PENALTY / length;
    int32_t cell_of[2] = {edges.edge_cells[2 * e], edges.edge_cells[2 * e + 1]};
    int sides = cell_of[1] < 0 ? 1 : 2;
    triangle_geometry t[2];
    for (int s = 0; s < sides; s++)
      triangle_at(&mesh, (size_t)cell_of[s], &t[s]);
    /* n: the unit normal out of the first cell */
    double n[2] = {(q[1] - p[1]) / length, -(q[0] - p[0]) / length};
    if (n[0] * (0.5 * (p[0] + q[0]) - t[0].centroid[0]) +
            n[1] * (0.5 * (p[1] + q[1]) - t[0].centroid[1]) <
        0.0) {
      n[0] = -n[0];
      n[1] = -n[1];
    }
    /* local DOF a = 3 s + i: its jump [phi] at the points and its mean flux {grad phi . n} */
    double jump[6][2], flux[6];
    int32_t dof[6];
    double average = sides == 2 ? 0.5 : 1.0;
    for (int s = 0; s < sides; s++)
      for (int i = 0; i < 3; i++) {
        int a = 3 * s + i;
        dof[a] = 3 * cell_of[s] + i;
        flux[a] = average * (t[s].grad[i][0] * n[0] + t[s].grad[i][1] * n[1]);
        for (int g = 0; g < 2; g++) {
          double x[2] = {p[0] + gauss[g] * (q[0] - p[0]), p[1] + gauss[g] * (q[1] - p[1])};
          jump[a][g] = (s == 0 ? 1.0 : -1.0) * phi_at(&t[s], i, x);
        }
      }
    int local = 3 * sides;
    double m[6][6];
    for (int a = 0; a < local; a++)
      for (int c = a; c < local; c++) {
        double sum = 0.0;
        for (int g = 0; g < 2; g++)
          sum += 0.5 * length *
                 (sigma * jump[a][g] * jump[c][g] - (flux[c] * jump[a][g] + flux[a] * jump[c][g]));
        m[a][c] = sum;
        m[c][a] = sum;
      }
    for (int a = 0; a < local; a++)
      for (int c = 0; c < local; c++) {
        row[k] = dof[a];
        col[k] = dof[c];
        val[k++] = m[a][c];
      }
    if (sides == 1)
      for (int g = 0; g < 2; g++) {
        double x[2] = {p[0] + gauss[g] * (q[0] - p[0]), p[1] + gauss[g] * (q[1] - p[1])};
        double value = scalar_field(options->boundary_value, x, options->data, 0.0);
        for (int a = 0; a < 3; a++)
          out->b[dof[a]] += 0.5 * length * value * (sigma * jump[a][g] - flux[a]);
      }
  }
  status = clmg_csr_from_triplets(rows, rows, k, row, col, val, &out->a, error);
  if (status != CLMG_SUCCESS)
    goto done;
  out->dim = 2;
  out->block_size = 1;
  out->num_nodes = rows;

done:
  clmg_mesh_free(&mesh);
  clmg_triangle_edges_free(&edges);
  free(row);
  free(col);
  free(val);
  return status;
}
