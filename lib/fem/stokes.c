/* The Crouzeix-Raviart P1nc/P0 discretisation of the Stokes (Oseen-step)
 * problem on triangle meshes, host side: the assembly of the saddle-point
 * system, its Dirichlet marks, the unknowns of each triangle for Vanka
 * smoothing, interpolation, the grid transfers between uniformly refined
 * levels and L2 errors (include/clmg/stokes.h). This follows Bauer, Klement,
 * Oberhuber and Zabka, "Implementation of the Vanka-type multigrid solver
 * for the finite element approximation of the Navier-Stokes equations on
 * GPU" (2016). Host code only: the reference for device code. */
#include "fem/stokes_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clmg_stokes_problem_defaults(clmg_stokes_problem *problem) {
  if (!problem)
    return;
  memset(problem, 0, sizeof *problem);
  problem->viscosity = 1.0;
}

static clmg_status check_dirichlet_tags(const clmg_stokes_problem *problem, clmg_error *error) {
  if (problem->num_dirichlet_tags > 0 && !problem->dirichlet_tags)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu Dirichlet tags but no dirichlet_tags array",
                          problem->num_dirichlet_tags);
  return CLMG_SUCCESS;
}

static clmg_status check_problem(const clmg_stokes_problem *problem, clmg_error *error) {
  if (!(problem->viscosity >= 0.0) || !isfinite(problem->viscosity))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the viscosity is %g; it must be finite and >= 0", problem->viscosity);
  if (!(problem->reaction >= 0.0) || !isfinite(problem->reaction))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the reaction (mass) coefficient is %g; it must be finite and >= 0",
                          problem->reaction);
  if (problem->viscosity == 0.0 && problem->reaction == 0.0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the viscosity and the reaction coefficient are both 0: the velocity "
                          "block would vanish");
  return check_dirichlet_tags(problem, error);
}

/* The problem or, when NULL, the defaults (in *defaults), checked. */
static clmg_status problem_or_defaults(const clmg_stokes_problem **problem,
                                       clmg_stokes_problem *defaults, clmg_error *error) {
  clmg_stokes_problem_defaults(defaults);
  if (!*problem)
    *problem = defaults;
  return check_problem(*problem, error);
}

static int is_dirichlet_tag(const clmg_stokes_problem *problem, int32_t tag) {
  if (tag <= 0)
    return 0;
  if (problem->num_dirichlet_tags == 0)
    return 1;
  for (size_t k = 0; k < problem->num_dirichlet_tags; k++)
    if (problem->dirichlet_tags[k] == tag)
      return 1;
  return 0;
}

/* mask[e] = 1 on the edges with Dirichlet velocity (problem NULL: none). */
static uint8_t *dirichlet_edges(const clmg_triangle_edges *edges,
                                const clmg_stokes_problem *problem, clmg_error *error) {
  uint8_t *mask = clmg_alloc_zeroed_array(edges->num_edges, 1);
  if (!mask) {
    clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                   "cannot allocate the Dirichlet marks of %zu edges", edges->num_edges);
    return NULL;
  }
  for (size_t e = 0; e < edges->num_edges && problem; e++)
    mask[e] = (uint8_t)is_dirichlet_tag(problem, edges->edge_tag[e]);
  return mask;
}

/* The midpoint of edge e, summed in sorted vertex order (the same bits
 * from both of its cells). */
static void edge_midpoint(const clmg_mesh *mesh, const clmg_triangle_edges *edges, size_t e,
                          double *x) {
  const double *a = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e];
  const double *b = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e + 1];
  x[0] = 0.5 * (a[0] + b[0]);
  x[1] = 0.5 * (a[1] + b[1]);
}

/* Area and barycentric gradients of cell k; an inverted or degenerate cell
 * is an error. */
static clmg_status cell_geometry(const clmg_mesh *mesh, size_t k, double coords[6], double *area,
                                 double grad[4][3], clmg_error *error) {
  clmg_p1_cell_coords(mesh, k, coords);
  *area = clmg_p1_simplex(2, coords, grad);
  if (!(*area > 0.0))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cell %zu is inverted or degenerate (signed area %g): triangles must "
                          "list their vertices counter-clockwise",
                          k, *area);
  return CLMG_SUCCESS;
}

/* (row, column, value) triplets for clmg_csr_from_triplets. */
typedef struct triplet_list {
  size_t count;
  int32_t *row, *col;
  double *val;
} triplet_list;

static clmg_status triplets_allocate(triplet_list *t, size_t capacity, clmg_error *error) {
  memset(t, 0, sizeof *t);
  t->row = clmg_alloc_array(capacity, sizeof *t->row);
  t->col = clmg_alloc_array(capacity, sizeof *t->col);
  t->val = clmg_alloc_array(capacity, sizeof *t->val);
  if (!t->row || !t->col || !t->val)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate %zu matrix entries", capacity);
  return CLMG_SUCCESS;
}

static void triplets_free(triplet_list *t) {
  free(t->row);
  free(t->col);
  free(t->val);
  memset(t, 0, sizeof *t);
}

static inline void triplets_add(triplet_list *t, size_t row, size_t col, double value) {
  t->row[t->count] = (int32_t)row;
  t->col[t->count] = (int32_t)col;
  t->val[t->count] = value;
  t->count++;
}

/* ---- assembly ---- */

/* What the element loop writes into: the triplets, b and the Dirichlet
 * data (dirichlet per edge, value per velocity unknown). */
typedef struct stokes_sink {
  size_t num_edges;
  const uint8_t *dirichlet;
  const double *value;
  triplet_list *entries;
  double *b;
} stokes_sink;

static inline int unknown_is_dirichlet(const stokes_sink *s, size_t i) {
  if (i >= 2 * s->num_edges)
    return 0;
  return s->dirichlet[i < s->num_edges ? i : i - s->num_edges];
}

/* A(row, col) += value with the symmetric elimination of Dirichlet
 * unknowns: nothing in their rows, their columns moved to b. */
static inline void add_entry(stokes_sink *s, size_t row, size_t col, double value) {
  if (unknown_is_dirichlet(s, row))
    return;
  if (unknown_is_dirichlet(s, col))
    s->b[row] -= value * s->value[col];
  else
    triplets_add(s->entries, row, col, value);
}

static clmg_status assemble_cell(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                 const clmg_stokes_problem *problem, size_t k, stokes_sink *s,
                                 clmg_error *error) {
  const size_t num_edges = edges->num_edges, pressure = 2 * num_edges + k;
  double coords[6], area, grad[4][3];
  clmg_status status = cell_geometry(mesh, k, coords, &area, grad, error);
  if (status != CLMG_SUCCESS)
    return status;
  const int32_t *e = edges->cell_edges + 3 * k;
  const double nu = problem->viscosity, c = problem->reaction, mass = area / 3.0;
  for (size_t i = 0; i < 3; i++) {
    const size_t ux = (size_t)e[i], uy = num_edges + (size_t)e[i];
    /* grad phi_i = -2 grad lambda_i */
    for (size_t j = 0; j < 3; j++) {
      double value = 4.0 * nu * area * (grad[i][0] * grad[j][0] + grad[i][1] * grad[j][1]);
      if (i == j)
        value += c * mass;
      add_entry(s, ux, (size_t)e[j], value);
      add_entry(s, uy, num_edges + (size_t)e[j], value);
    }
    /* B_{K,e} = -integral over K of dphi_e/dx = 2 |K| dlambda_i/dx */
    double bx = 2.0 * area * grad[i][0], by = 2.0 * area * grad[i][1];
    add_entry(s, ux, pressure, bx);
    add_entry(s, uy, pressure, by);
    add_entry(s, pressure, ux, bx);
    add_entry(s, pressure, uy, by);
    /* (f, phi_i)_K = |K|/3 f(m_i): the edge-midpoint rule */
    double f[2] = {0.0, 0.0};
    if (problem->force) {
      double x[2];
      edge_midpoint(mesh, edges, (size_t)e[i], x);
      problem->force(x, f, problem->force_data);
    }
    double load_x = mass * f[0], load_y = mass * f[1];
    if (problem->previous) {
      load_x += c * mass * problem->previous[ux];
      load_y += c * mass * problem->previous[uy];
    }
    if (!unknown_is_dirichlet(s, ux)) {
      s->b[ux] += load_x;
      s->b[uy] += load_y;
    }
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_assemble_host(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      const clmg_stokes_problem *problem, clmg_csr *a, double *b,
                                      clmg_error *error) {
  clmg_error_clear(error);
  if (!a || !b)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output %s is NULL",
                          !a ? "matrix" : "right-hand side b");
  memset(a, 0, sizeof *a);
  clmg_stokes_problem defaults;
  clmg_status status = problem_or_defaults(&problem, &defaults, error);
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges, n = 2 * num_edges + mesh->num_cells;
  uint8_t *dirichlet = NULL;
  double *value = NULL;
  triplet_list entries = {0};
  /* per cell: 2 x 9 of A, 2 x 6 of B and B^T; per edge: 2 identity rows */
  status = triplets_allocate(&entries, 30 * mesh->num_cells + 2 * num_edges, error);
  if (status != CLMG_SUCCESS)
    goto done;
  dirichlet = dirichlet_edges(edges, problem, error);
  value = clmg_alloc_zeroed_array(2 * num_edges, sizeof *value);
  if (!dirichlet || !value) {
    status = dirichlet
                 ? clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                  "cannot allocate the Dirichlet values of %zu edges", num_edges)
                 : CLMG_ERROR_OUT_OF_HOST_MEMORY;
    goto done;
  }
  for (size_t e = 0; e < num_edges; e++) {
    if (!dirichlet[e] || !problem->boundary_velocity)
      continue;
    double x[2], u[2] = {0.0, 0.0};
    edge_midpoint(mesh, edges, e, x);
    problem->boundary_velocity(x, edges->edge_tag[e], u, problem->boundary_data);
    value[e] = u[0];
    value[num_edges + e] = u[1];
  }
  for (size_t i = 0; i < n; i++)
    b[i] = 0.0;
  stokes_sink sink = {num_edges, dirichlet, value, &entries, b};
  for (size_t k = 0; k < mesh->num_cells && status == CLMG_SUCCESS; k++)
    status = assemble_cell(mesh, edges, problem, k, &sink, error);
  if (status != CLMG_SUCCESS)
    goto done;
  for (size_t e = 0; e < num_edges; e++)
    if (dirichlet[e])
      for (size_t component = 0; component < 2; component++) {
        size_t i = component * num_edges + e;
        triplets_add(&entries, i, i, 1.0);
        b[i] = value[i];
      }
  status =
      clmg_csr_from_triplets(n, n, entries.count, entries.row, entries.col, entries.val, a, error);

done:
  triplets_free(&entries);
  free(dirichlet);
  free(value);
  return status;
}

clmg_status clmg_stokes_dirichlet_mask(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                       const clmg_stokes_problem *problem, uint8_t **mask,
                                       clmg_error *error) {
  clmg_error_clear(error);
  if (!mask)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output mask is NULL");
  *mask = NULL;
  clmg_stokes_problem defaults;
  clmg_status status = problem_or_defaults(&problem, &defaults, error);
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  uint8_t *result = clmg_alloc_zeroed_array(2 * num_edges + mesh->num_cells, 1);
  if (!result)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the Dirichlet marks of %zu unknowns",
                          2 * num_edges + mesh->num_cells);
  for (size_t e = 0; e < num_edges; e++)
    result[e] = result[num_edges + e] = (uint8_t)is_dirichlet_tag(problem, edges->edge_tag[e]);
  *mask = result;
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_cell_unknowns(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      int32_t **cell_unknowns, clmg_error *error) {
  clmg_error_clear(error);
  if (!cell_unknowns)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output cell_unknowns is NULL");
  *cell_unknowns = NULL;
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  int32_t *result = clmg_alloc_array(mesh->num_cells, 7 * sizeof *result);
  if (!result)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the unknowns of %zu triangles", mesh->num_cells);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    int32_t *out = result + 7 * k;
    for (size_t i = 0; i < 3; i++) {
      out[i] = edges->cell_edges[3 * k + i];
      out[3 + i] = (int32_t)num_edges + edges->cell_edges[3 * k + i];
    }
    out[6] = (int32_t)(2 * num_edges + k);
  }
  *cell_unknowns = result;
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_interpolate(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                    void (*exact_u)(const double *x, double *u, void *data),
                                    double (*exact_p)(const double *x, void *data), void *data,
                                    double *x, clmg_error *error) {
  clmg_error_clear(error);
  if (!x)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output x is NULL");
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  for (size_t e = 0; e < num_edges; e++) {
    double point[2], u[2] = {0.0, 0.0};
    edge_midpoint(mesh, edges, e, point);
    if (exact_u)
      exact_u(point, u, data);
    x[e] = u[0];
    x[num_edges + e] = u[1];
  }
  for (size_t k = 0; k < mesh->num_cells; k++) {
    double coords[6];
    clmg_p1_cell_coords(mesh, k, coords);
    double centroid[2] = {(coords[0] + coords[2] + coords[4]) / 3.0,
                          (coords[1] + coords[3] + coords[5]) / 3.0};
    x[2 * num_edges + k] = exact_p ? exact_p(centroid, data) : 0.0;
  }
  return CLMG_SUCCESS;
}

/* ---- grid transfers ---- */

/* The six nodes of coarse cell k in the fine mesh (v0, v1, v2, m01, m12,
 * m02), read from its children, which must be those of clmg_mesh_refine:
 * child i < 3 keeps vertex i and the midpoints of its edges in the parent's
 * vertex order, child 3 is (m01, m12, m02). */
static clmg_status coarse_cell_nodes(const clmg_mesh *coarse, const clmg_mesh *fine, size_t k,
                                     int32_t nodes[6], clmg_error *error) {
  const int32_t *v = coarse->cells + 3 * k, *middle = fine->cells + 3 * (4 * k + 3);
  const int32_t m01 = middle[0], m12 = middle[1], m02 = middle[2];
  const int32_t expected[4][3] = {
      {v[0], m01, m02}, {m01, v[1], m12}, {m02, m12, v[2]}, {m01, m12, m02}};
  for (size_t c = 0; c < 3; c++)
    for (size_t i = 0; i < 3; i++)
      if (fine->cells[3 * (4 * k + c) + i] != expected[c][i])
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "the fine mesh is not clmg_mesh_refine of the coarse mesh: child %zu "
                              "of coarse cell %zu (fine cell %zu) has vertex %d at corner %zu, "
                              "expected %d",
                              c, k, 4 * k + c, (int)fine->cells[3 * (4 * k + c) + i], i,
                              (int)expected[c][i]);
  nodes[0] = v[0];
  nodes[1] = v[1];
  nodes[2] = v[2];
  nodes[3] = m01;
  nodes[4] = m12;
  nodes[5] = m02;
  return CLMG_SUCCESS;
}

/* Barycentric coordinates of the six nodes of coarse_cell_nodes. */
static const double node_barycentric[6][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0},
                                              {0.5, 0.5, 0.0}, {0.0, 0.5, 0.5}, {0.5, 0.0, 0.5}};

/* The rows of fine edge f from coarse cell k, scaled by `weight`: the
 * coarse P1nc functions of k (1 - 2 lambda_i) at the fine midpoint, whose
 * barycentric coordinates are exact (quarters). */
static clmg_status add_from_coarse_cell(const clmg_mesh *coarse,
                                        const clmg_triangle_edges *coarse_edges,
                                        const clmg_mesh *fine,
                                        const clmg_triangle_edges *fine_edges, size_t f, size_t k,
                                        double weight, const uint8_t *coarse_dirichlet,
                                        triplet_list *entries, clmg_error *error) {
  int32_t nodes[6] = {-1, -1, -1, -1, -1, -1};
  clmg_status status = coarse_cell_nodes(coarse, fine, k, nodes, error);
  if (status != CLMG_SUCCESS)
    return status;
  double lambda[3] = {0.0, 0.0, 0.0};
  for (size_t end = 0; end < 2; end++) {
    int32_t vertex = fine_edges->edge_vertices[2 * f + end];
    size_t j = 0;
    while (j < 6 && nodes[j] != vertex)
      j++;
    if (j == 6)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "fine edge %zu (vertices %d and %d) does not lie in coarse cell %zu: "
                            "the fine edges do not match the fine mesh",
                            f, (int)fine_edges->edge_vertices[2 * f],
                            (int)fine_edges->edge_vertices[2 * f + 1], k);
    for (size_t i = 0; i < 3; i++)
      lambda[i] += 0.5 * node_barycentric[j][i];
  }
  const size_t fine_count = fine_edges->num_edges, coarse_count = coarse_edges->num_edges;
  for (size_t i = 0; i < 3; i++) {
    double w = weight * (1.0 - 2.0 * lambda[i]);
    size_t e = (size_t)coarse_edges->cell_edges[3 * k + i];
    if (w == 0.0 || (coarse_dirichlet && coarse_dirichlet[e]))
      continue;
    triplets_add(entries, f, e, w);
    triplets_add(entries, fine_count + f, coarse_count + e, w);
  }
  return CLMG_SUCCESS;
}

clmg_status
clmg_stokes_prolongation_host(const clmg_mesh *coarse, const clmg_triangle_edges *coarse_edges,
                              const clmg_mesh *fine, const clmg_triangle_edges *fine_edges,
                              const clmg_stokes_problem *problem, clmg_csr *p, clmg_error *error) {
  clmg_error_clear(error);
  if (!p)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the output matrix is NULL");
  memset(p, 0, sizeof *p);
  /* only the Dirichlet tags matter here */
  clmg_status status = problem ? check_dirichlet_tags(problem, error) : CLMG_SUCCESS;
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_check(coarse, coarse_edges, "the coarse edges", error);
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_check(fine, fine_edges, "the fine edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  if (fine->num_cells != 4 * coarse->num_cells || fine->num_vertices < coarse->num_vertices)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the fine mesh (%zu cells, %zu vertices) is not clmg_mesh_refine of the "
                          "coarse mesh (%zu cells, %zu vertices)",
                          fine->num_cells, fine->num_vertices, coarse->num_cells,
                          coarse->num_vertices);
  const size_t fine_count = fine_edges->num_edges, coarse_count = coarse_edges->num_edges;
  const size_t rows = 2 * fine_count + fine->num_cells, cols = 2 * coarse_count + coarse->num_cells;
  uint8_t *fine_dirichlet = NULL, *coarse_dirichlet = NULL;
  triplet_list entries = {0};
  /* per fine edge: up to 2 coarse cells x 3 edges x 2 components */
  status = triplets_allocate(&entries, 12 * fine_count + fine->num_cells, error);
  if (status == CLMG_SUCCESS && problem) {
    fine_dirichlet = dirichlet_edges(fine_edges, problem, error);
    coarse_dirichlet = fine_dirichlet ? dirichlet_edges(coarse_edges, problem, error) : NULL;
    if (!coarse_dirichlet)
      status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t f = 0; f < fine_count && status == CLMG_SUCCESS; f++) {
    if (fine_dirichlet && fine_dirichlet[f])
      continue;
    const int32_t *sides = fine_edges->edge_cells + 2 * f;
    size_t k0 = (size_t)sides[0] / 4;
    if (sides[1] >= 0 && (size_t)sides[1] / 4 != k0) {
      /* on a coarse edge between two coarse cells: their mean */
      status = add_from_coarse_cell(coarse, coarse_edges, fine, fine_edges, f, k0, 0.5,
                                    coarse_dirichlet, &entries, error);
      if (status == CLMG_SUCCESS)
        status = add_from_coarse_cell(coarse, coarse_edges, fine, fine_edges, f,
                                      (size_t)sides[1] / 4, 0.5, coarse_dirichlet, &entries, error);
    } else {
      /* inside a coarse cell, or on the boundary */
      status = add_from_coarse_cell(coarse, coarse_edges, fine, fine_edges, f, k0, 1.0,
                                    coarse_dirichlet, &entries, error);
    }
  }
  for (size_t t = 0; t < fine->num_cells && status == CLMG_SUCCESS; t++)
    triplets_add(&entries, 2 * fine_count + t, 2 * coarse_count + t / 4, 1.0);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_from_triplets(rows, cols, entries.count, entries.row, entries.col,
                                    entries.val, p, error);
  triplets_free(&entries);
  free(fine_dirichlet);
  free(coarse_dirichlet);
  return status;
}

/* ---- errors ---- */

/* The 7-point degree-5 rule of Radon on a triangle: barycentric points and
 * weights (summing to 1, times the area). */
typedef struct triangle_rule {
  double point[7][3];
  double weight[7];
} triangle_rule;

static void radon_rule(triangle_rule *rule) {
  const double s = sqrt(15.0);
  const double a = (6.0 - s) / 21.0, b = (6.0 + s) / 21.0;
  const double wa = (155.0 - s) / 1200.0, wb = (155.0 + s) / 1200.0;
  const double points[7][3] = {{1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0},
                               {a, a, 1.0 - 2.0 * a},
                               {a, 1.0 - 2.0 * a, a},
                               {1.0 - 2.0 * a, a, a},
                               {b, b, 1.0 - 2.0 * b},
                               {b, 1.0 - 2.0 * b, b},
                               {1.0 - 2.0 * b, b, b}};
  const double weights[7] = {9.0 / 40.0, wa, wa, wa, wb, wb, wb};
  memcpy(rule->point, points, sizeof points);
  memcpy(rule->weight, weights, sizeof weights);
}

clmg_status clmg_stokes_l2_errors(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const double *x,
                                  void (*exact_u)(const double *x, double *u, void *data),
                                  double (*exact_p)(const double *x, void *data), void *data,
                                  double *u_error, double *p_error, clmg_error *error) {
  clmg_error_clear(error);
  if (!x || !exact_u || !u_error || !p_error)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "x, exact_u, u_error and p_error must not be NULL");
  *u_error = *p_error = 0.0;
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  const double *pressure = x + 2 * num_edges;
  triangle_rule rule;
  radon_rule(&rule);
  /* first pass: the velocity error and both pressure means */
  double u_sum = 0.0, volume = 0.0, discrete_mean = 0.0, exact_mean = 0.0;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    double coords[6], area, grad[4][3];
    status = cell_geometry(mesh, k, coords, &area, grad, error);
    if (status != CLMG_SUCCESS)
      return status;
    const int32_t *e = edges->cell_edges + 3 * k;
    volume += area;
    discrete_mean += area * pressure[k];
    for (size_t q = 0; q < 7; q++) {
      const double *lambda = rule.point[q];
      double point[2] = {0.0, 0.0}, uh[2] = {0.0, 0.0}, u[2] = {0.0, 0.0};
      for (size_t i = 0; i < 3; i++) {
        point[0] += lambda[i] * coords[2 * i];
        point[1] += lambda[i] * coords[2 * i + 1];
        double phi = 1.0 - 2.0 * lambda[i];
        uh[0] += phi * x[e[i]];
        uh[1] += phi * x[num_edges + (size_t)e[i]];
      }
      exact_u(point, u, data);
      double dx = u[0] - uh[0], dy = u[1] - uh[1];
      u_sum += rule.weight[q] * area * (dx * dx + dy * dy);
      if (exact_p)
        exact_mean += rule.weight[q] * area * exact_p(point, data);
    }
  }
  *u_error = sqrt(u_sum);
  if (!exact_p || !(volume > 0.0))
    return CLMG_SUCCESS;
  discrete_mean /= volume;
  exact_mean /= volume;
  double p_sum = 0.0;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    double coords[6];
    clmg_p1_cell_coords(mesh, k, coords);
    double area = clmg_p1_simplex(2, coords, NULL);
    for (size_t q = 0; q < 7; q++) {
      const double *lambda = rule.point[q];
      double point[2] = {0.0, 0.0};
      for (size_t i = 0; i < 3; i++) {
        point[0] += lambda[i] * coords[2 * i];
        point[1] += lambda[i] * coords[2 * i + 1];
      }
      double d = (exact_p(point, data) - exact_mean) - (pressure[k] - discrete_mean);
      p_sum += rule.weight[q] * area * d * d;
    }
  }
  *p_error = sqrt(p_sum);
  return CLMG_SUCCESS;
}
