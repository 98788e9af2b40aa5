/* The Crouzeix-Raviart P1nc/P0 discretisation of the Stokes (Oseen-step)
 * problem on triangle meshes, host side: the assembly of the saddle-point
 * system (with the upwind convection of an Oseen step and free-slip walls),
 * its refill for a new time step, its Dirichlet marks, the unknowns of each
 * triangle for Vanka smoothing, interpolation, the grid transfers between
 * uniformly refined levels and L2 errors (include/clmg/stokes.h). This
 * follows Bauer, Klement, Oberhuber and Zabka, "Implementation of the
 * Vanka-type multigrid solver for the finite element approximation of the
 * Navier-Stokes equations on GPU" (2016). Host code only: the reference for
 * device code. */
#include "flow/stokes_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clmg_stokes_problem_defaults(clmg_stokes_problem *problem) {
  if (!problem)
    return;
  memset(problem, 0, sizeof *problem);
  problem->viscosity = 1.0;
  problem->upwind = CLMG_STOKES_UPWIND_FULL;
  problem->upwind_parameter = 1.0;
}

static int tag_listed(const int32_t *tags, size_t count, int32_t tag) {
  for (size_t k = 0; k < count; k++)
    if (tags[k] == tag)
      return 1;
  return 0;
}

/* The boundary tag lists: arrays present when counted, no tag both
 * Dirichlet and free slip. */
static clmg_status check_tags(const clmg_stokes_problem *problem, clmg_error *error) {
  if (problem->num_dirichlet_tags > 0 && !problem->dirichlet_tags)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu Dirichlet tags but no dirichlet_tags array",
                          problem->num_dirichlet_tags);
  if (problem->num_slip_tags > 0 && !problem->slip_tags)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%zu free-slip tags but no slip_tags array", problem->num_slip_tags);
  for (size_t k = 0; k < problem->num_slip_tags; k++)
    if (tag_listed(problem->dirichlet_tags, problem->num_dirichlet_tags, problem->slip_tags[k]))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "boundary tag %d is both in dirichlet_tags and in slip_tags",
                            (int)problem->slip_tags[k]);
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
  if (problem->upwind != CLMG_STOKES_UPWIND_FULL &&
      problem->upwind != CLMG_STOKES_UPWIND_SAMARSKIJ &&
      problem->upwind != CLMG_STOKES_UPWIND_WEIGHTED)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "upwind scheme %d, expected CLMG_STOKES_UPWIND_FULL (%d), "
                          "CLMG_STOKES_UPWIND_SAMARSKIJ (%d) or CLMG_STOKES_UPWIND_WEIGHTED (%d)",
                          problem->upwind, CLMG_STOKES_UPWIND_FULL, CLMG_STOKES_UPWIND_SAMARSKIJ,
                          CLMG_STOKES_UPWIND_WEIGHTED);
  if (problem->upwind == CLMG_STOKES_UPWIND_WEIGHTED &&
      (!(problem->upwind_parameter >= 0.0) || !isfinite(problem->upwind_parameter)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the upwind parameter is %g; it must be finite and >= 0 (0: central "
                          "differences, 1: Samarskij's weighting)",
                          problem->upwind_parameter);
  return check_tags(problem, error);
}

/* The problem or, when NULL, the defaults (in *defaults), checked. */
/* The wind, when given, must be finite (2 * num_edges values). */
static clmg_status check_wind(const clmg_stokes_problem *problem, size_t num_edges,
                              clmg_error *error) {
  for (size_t i = 0; problem->wind && i < 2 * num_edges; i++)
    if (!isfinite(problem->wind[i]))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "the wind's %s component on edge %zu is %g; it must be finite",
                            i < num_edges ? "x" : "y", i % num_edges, problem->wind[i]);
  return CLMG_SUCCESS;
}

/* The checks every entry point makes: problem (NULL: the defaults, into
 * *defaults), the edges of the mesh, and, with_wind, a finite wind. */
static clmg_status checked_inputs(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const clmg_stokes_problem **problem,
                                  clmg_stokes_problem *defaults, int with_wind, clmg_error *error) {
  clmg_stokes_problem_defaults(defaults);
  if (!*problem)
    *problem = defaults;
  clmg_status status = check_problem(*problem, error);
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status == CLMG_SUCCESS && with_wind)
    status = check_wind(*problem, edges->num_edges, error);
  return status;
}

static int is_slip_tag(const clmg_stokes_problem *problem, int32_t tag) {
  return tag > 0 && tag_listed(problem->slip_tags, problem->num_slip_tags, tag);
}

/* No Dirichlet tags listed: every boundary edge that is not free slip. */
static int is_dirichlet_tag(const clmg_stokes_problem *problem, int32_t tag) {
  if (tag <= 0)
    return 0;
  if (problem->num_dirichlet_tags == 0)
    return !is_slip_tag(problem, tag);
  return tag_listed(problem->dirichlet_tags, problem->num_dirichlet_tags, tag);
}

/* The velocity component normal to free-slip edge e (0: x, 1: y); a slip
 * edge that is neither horizontal nor vertical (relative tolerance 1e-12)
 * is an error. */
static clmg_status slip_component(const clmg_mesh *mesh, const clmg_triangle_edges *edges, size_t e,
                                  size_t *component, clmg_error *error) {
  const int32_t v0 = edges->edge_vertices[2 * e], v1 = edges->edge_vertices[2 * e + 1];
  const double *a = mesh->coords + 2 * (size_t)v0, *b = mesh->coords + 2 * (size_t)v1;
  const double dx = b[0] - a[0], dy = b[1] - a[1], length = hypot(dx, dy);
  if (fabs(dy) <= 1e-12 * length) {
    *component = 1; /* horizontal: the normal is +-y */
    return CLMG_SUCCESS;
  }
  if (fabs(dx) <= 1e-12 * length) {
    *component = 0; /* vertical: the normal is +-x */
    return CLMG_SUCCESS;
  }
  return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                        "free-slip edge %zu (tag %d, from vertex %d (%g, %g) to vertex %d (%g, "
                        "%g)) is not axis-parallel: free slip supports only edges along x or y",
                        e, (int)edges->edge_tag[e], (int)v0, a[0], a[1], (int)v1, b[0], b[1]);
}

/* (*flags)[c * num_edges + e] = 1 where component c of the velocity on
 * edge e is Dirichlet: both components on Dirichlet tags, the normal one on
 * free-slip tags (problem NULL: none). malloc'ed; NULL on failure. */
static clmg_status dirichlet_unknowns(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      const clmg_stokes_problem *problem, uint8_t **flags,
                                      clmg_error *error) {
  const size_t num_edges = edges->num_edges;
  uint8_t *result = clmg_alloc_zeroed_array(2 * num_edges + 1, 1);
  *flags = NULL;
  if (!result)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the Dirichlet marks of %zu edges", num_edges);
  for (size_t e = 0; e < num_edges && problem; e++) {
    const int32_t tag = edges->edge_tag[e];
    if (is_dirichlet_tag(problem, tag)) {
      result[e] = result[num_edges + e] = 1;
    } else if (is_slip_tag(problem, tag)) {
      size_t component = 0;
      clmg_status status = slip_component(mesh, edges, e, &component, error);
      if (status != CLMG_SUCCESS) {
        free(result);
        return status;
      }
      result[component * num_edges + e] = 1;
    }
  }
  *flags = result;
  return CLMG_SUCCESS;
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

clmg_status clmg_stokes_cell_geometry(const clmg_mesh *mesh, size_t k, double coords[6],
                                      double *area, double grad[4][3], clmg_error *error) {
  clmg_p1_cell_coords(mesh, k, coords);
  *area = clmg_p1_simplex(2, coords, grad);
  if (!(*area > 0.0))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "cell %zu is inverted or degenerate (signed area %g): triangles must "
                          "list their vertices counter-clockwise",
                          k, *area);
  return CLMG_SUCCESS;
}

void clmg_stokes_outflow_normals(const clmg_stokes_problem *problem,
                                 const clmg_triangle_edges *edges, size_t k, const double coords[6],
                                 double normals[6]) {
  for (size_t i = 0; i < 3; i++) {
    const int32_t tag = edges->edge_tag[edges->cell_edges[3 * k + i]];
    const size_t a = (i + 1) % 3, b = (i + 2) % 3; /* the edge opposite vertex i */
    const int outflow = tag > 0 && !is_dirichlet_tag(problem, tag) && !is_slip_tag(problem, tag);
    /* counter-clockwise vertices: (x_b - x_a) turned by -90 degrees */
    normals[2 * i] = outflow ? coords[2 * b + 1] - coords[2 * a + 1] : 0.0;
    normals[2 * i + 1] = outflow ? coords[2 * a] - coords[2 * b] : 0.0;
  }
}

/* ---- the convection term ----
 *
 * The convection (w . grad u, v) of the Oseen step of Bauer, Klement,
 * Oberhuber and Zabka (their eq. 4), "stabilized through the upwinding" of
 * Schieweck and Tobiska, "An optimal order error estimate for an upwind
 * discretization of the Navier-Stokes equations" (1996), the lumped
 * upstream scheme of Ohmori and Ushijima, "A technique of upstream type
 * applied to a linear nonconforming finite element approximation of
 * convective diffusion equations" (1984), as written by Turek, "Efficient
 * Solvers for Incompressible Flow Problems" (1999).
 *
 * The lumping region Omega_i of edge i is the union, over the triangles K
 * of i, of the subtriangle of K spanned by i and K's barycentre S_K (area
 * |K|/3, so |Omega_i| is the lumped mass M_i). Inside K, the regions of
 * edges i and j meet on the segment Gamma_ij from S_K to the vertex shared
 * by i and j; n_ij is its unit normal pointing out of Omega_i into
 * Omega_j. The flux
 *   F_ij = integral over Gamma_ij of (w_h . n_ij) ds = -F_ji,
 * w_h the P1nc interpolant of the wind on K, is exact by the midpoint
 * rule, w_h being linear on K: at the midpoint of Gamma_ij the basis
 * functions of edges i and j are 2/3, that of the third edge k -1/3, so
 *   F_ij = |Gamma_ij| n_ij . (2 (w_i + w_j) - w_k) / 3.
 * The integral of w . grad u over Omega_i is the integral of (w . n) u over
 * its boundary less u_i times that of w . n (the discrete divergence of w,
 * subtracted so that constants are in the kernel). With the interface
 * value lambda_ij u_i + (1 - lambda_ij) u_j of u on Gamma_ij:
 *   n_h(w; u, phi_i) = sum over the triangles K of i, sum over the other
 *                      edges j of K, of F_ij (1 - lambda_ij) (u_j - u_i).
 * Full upwind (CLMG_STOKES_UPWIND_FULL): lambda_ij = 1 when F_ij >= 0
 * (the flow leaves Omega_i: u_i is upstream), 0 otherwise, so the
 * coefficient of u_j is min(F_ij, 0): nonpositive off-diagonals, a
 * nonnegative diagonal -sum min(F_ij, 0), zero row sums (an M-matrix-like
 * part). Samarskij's weighting (CLMG_STOKES_UPWIND_SAMARSKIJ), with the
 * local Peclet number r = F_ij / nu: lambda_ij = (1/2 + r)/(1 + r) for
 * r >= 0 and 1/(2 (1 - r)) for r < 0, so the coefficient is
 * F_ij nu / (2 (nu + F_ij)) for F_ij >= 0 and
 * F_ij (nu/2 - F_ij) / (nu - F_ij) for F_ij < 0 (central differences as
 * r -> 0, full upwind as |r| -> infinity, and full upwind when nu = 0).
 * The weighted upwind (CLMG_STOKES_UPWIND_WEIGHTED) takes r = delta F_ij / nu:
 * F nu / (2 (nu + delta F)) and F (nu/2 - delta F) / (nu - delta F), so
 * delta = 1 is Samarskij's (the same operations), delta = 0 central
 * differences, F/2 (also when nu = 0).
 * Its off-diagonals where the flow leaves Omega_i are positive (below
 * nu/2) and its diagonal may be negative: the viscous part has to
 * dominate them.
 * A boundary edge i, part of the boundary of Omega_i, adds nothing: u on
 * it is taken as u_i (its mean there), so its F (u - u_i) vanishes (no
 * inflow term at natural boundaries), except the directional do-nothing
 * term where the wind flows in (clmg_stokes_outflow_normals). The scheme is consistent in the weak
 * sense, not row by row: the error of n_h(w; u, v_h) against the integral
 * of (w . grad u) v for smooth v is O(h) (O(h^2) for a constant w, a
 * linear u and a uniform mesh, whose regions are point-symmetric about
 * their edge's midpoint), but even there (N u)_i / (|Omega_i| w . grad u)
 * depends on the edge's direction and not on h (tests/test_stokes.c
 * prints both). */
/* The coefficient F (1 - lambda) of a flux f (see above) and its
 * derivative by f (*slope), for the Newton term. */
static double upwind_coefficient(double f, double nu, double delta, int full, double *slope) {
  if (full) {
    *slope = f < 0.0 ? 1.0 : 0.0;
    return f < 0.0 ? f : 0.0;
  }
  if (delta == 0.0) {
    *slope = 0.5;
    return 0.5 * f;
  }
  if (f >= 0.0) {
    const double q = nu + delta * f;
    *slope = 0.5 * nu * nu / (q * q);
    return 0.5 * f * nu / q;
  }
  const double q = nu - delta * f;
  *slope = (0.5 * nu * nu - 2.0 * delta * nu * f + delta * delta * f * f) / (q * q);
  return f * (0.5 * nu - delta * f) / q;
}

/* The convection matrix n of triangle k (the rows and columns its three
 * edges, the same for both components) and, with jacobian (NULL: not
 * wanted), the Newton term (clmg_stokes_problem.newton): the derivative of
 * the convection n(w) w by the wind at w, jacobian[c][i][d][j] the one of
 * component c of row edge i by component d of the wind on edge j. The
 * flux F_ab depends on the winds of all three edges (the midpoint value
 * (2 (w_a + w_b) - w_c)/3), so its derivative couples both components on
 * every edge of K; the do-nothing term's derivative is by the edge's own
 * wind. The device kernel (cl/stokes.cl) does the same operations. */
static void cell_convection(const clmg_stokes_problem *problem, const clmg_triangle_edges *edges,
                            size_t k, const double coords[6], double n[3][3],
                            double jacobian[2][3][2][3]) {
  const size_t num_edges = edges->num_edges;
  const int32_t *e = edges->cell_edges + 3 * k;
  const double centre[2] = {(coords[0] + coords[2] + coords[4]) / 3.0,
                            (coords[1] + coords[3] + coords[5]) / 3.0};
  const double nu = problem->viscosity;
  const double delta = clmg_stokes_upwind_delta(problem);
  const int full = clmg_stokes_full_upwind(problem);
  double w[3][2];
  for (size_t i = 0; i < 3; i++) {
    w[i][0] = problem->wind[e[i]];
    w[i][1] = problem->wind[num_edges + (size_t)e[i]];
  }
  for (size_t i = 0; i < 3; i++)
    for (size_t j = 0; j < 3; j++)
      n[i][j] = 0.0;
  if (jacobian)
    memset(jacobian, 0, 36 * sizeof(double));
  /* The vertices c, a = c + 1, b = c + 2 run counter-clockwise; the edges
   * a and b (opposite vertices a and b) share vertex c, Omega_a lies on
   * vertex b's side of Gamma_ab = [S, x_c], Omega_b on vertex a's, and
   * rotating x_c - S by +90 degrees gives |Gamma_ab| n_ab. */
  for (size_t c = 0; c < 3; c++) {
    const size_t a = (c + 1) % 3, b = (c + 2) % 3;
    const double d[2] = {coords[2 * c] - centre[0], coords[2 * c + 1] - centre[1]};
    const double normal[2] = {-d[1], d[0]};
    double wind[2];
    for (size_t m = 0; m < 2; m++)
      wind[m] = (2.0 * (w[a][m] + w[b][m]) - w[c][m]) / 3.0;
    const double flux = wind[0] * normal[0] + wind[1] * normal[1]; /* F_ab */
    const double fluxes[2] = {flux, -flux};                        /* F_ab, F_ba */
    const size_t from[2] = {a, b}, to[2] = {b, a};
    for (size_t s = 0; s < 2; s++) {
      const double f = fluxes[s];
      double slope;
      const double coefficient = upwind_coefficient(f, nu, delta, full, &slope);
      n[from[s]][to[s]] += coefficient;
      n[from[s]][from[s]] -= coefficient;
      if (!jacobian)
        continue;
      /* d/dw of coefficient (w_to - w_from): dF/dw_m on edge j is +-normal_m
       * times 2/3 (j = a, b) or -1/3 (j = c) */
      for (size_t comp = 0; comp < 2; comp++) {
        const double difference = w[to[s]][comp] - w[from[s]][comp];
        for (size_t m = 0; m < 2; m++) {
          const double g = slope * (s ? -normal[m] : normal[m]) * difference;
          for (size_t j = 0; j < 3; j++)
            jacobian[comp][from[s]][m][j] += g * (j == c ? -1.0 : 2.0) / 3.0;
        }
      }
    }
  }
  /* the directional do-nothing term (stokes_internal.h) */
  double outflow[6];
  clmg_stokes_outflow_normals(problem, edges, k, coords, outflow);
  for (size_t i = 0; i < 3; i++) {
    const double flux = w[i][0] * outflow[2 * i] + w[i][1] * outflow[2 * i + 1];
    if (flux < 0.0) {
      n[i][i] -= 0.5 * flux;
      for (size_t comp = 0; jacobian && comp < 2; comp++)
        for (size_t m = 0; m < 2; m++)
          jacobian[comp][i][m][i] -= 0.5 * outflow[2 * i + m] * w[i][comp];
    }
  }
}

/* ---- assembly ----
 *
 * The pattern comes from the cells of each edge (stokes_pattern); one
 * element loop adds the values into a CSR matrix of that pattern and the
 * loads into b. clmg_stokes_assemble_host and clmg_stokes_update_values_host
 * both run it, so the two give the same bits. */

/* What the element loop writes into: the Dirichlet data (per velocity
 * unknown: flag and value), the CSR pattern, its values, the marks of the
 * entries written and b. */
typedef struct stokes_sink {
  size_t num_edges;
  const uint8_t *dirichlet;
  const double *value;
  const clmg_csr *pattern;
  double *values;
  uint8_t *written;
  double *b;
  size_t missing_row, missing_col; /* the first coupling the pattern lacks */
  int missing;
} stokes_sink;

static inline int unknown_is_dirichlet(const stokes_sink *s, size_t i) {
  return i < 2 * s->num_edges && s->dirichlet[i];
}

static inline void store_entry(stokes_sink *s, size_t row, size_t col, double value) {
  if (!s->pattern)
    return; /* the right-hand side only (clmg_stokes_rhs_host) */
  int64_t k = clmg_csr_find_entry(s->pattern, row, (int32_t)col);
  if (k < 0) {
    if (!s->missing) {
      s->missing = 1;
      s->missing_row = row;
      s->missing_col = col;
    }
    return;
  }
  s->values[k] += value;
  s->written[k] = 1;
}

/* A(row, col) += value with the elimination of Dirichlet unknowns: nothing
 * in their rows, their columns moved to b. */
static inline void add_entry(stokes_sink *s, size_t row, size_t col, double value) {
  if (unknown_is_dirichlet(s, row))
    return;
  if (unknown_is_dirichlet(s, col)) {
    s->b[row] -= value * s->value[col];
  } else {
    store_entry(s, row, col, value);
  }
}

static clmg_status assemble_cell(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                 const clmg_stokes_problem *problem, size_t k, stokes_sink *s,
                                 clmg_error *error) {
  const size_t num_edges = edges->num_edges, pressure = 2 * num_edges + k;
  double coords[6], area, grad[4][3];
  clmg_status status = clmg_stokes_cell_geometry(mesh, k, coords, &area, grad, error);
  if (status != CLMG_SUCCESS)
    return status;
  const int32_t *e = edges->cell_edges + 3 * k;
  const double nu = problem->viscosity, c = problem->reaction, mass = area / 3.0;
  double convection[3][3] = {{0.0}}, jacobian[2][3][2][3] = {{{{0.0}}}};
  if (problem->wind)
    cell_convection(problem, edges, k, coords, convection, problem->newton ? jacobian : NULL);
  for (size_t i = 0; i < 3; i++) {
    const size_t ux = (size_t)e[i], uy = num_edges + (size_t)e[i];
    /* grad phi_i = -2 grad lambda_i */
    for (size_t j = 0; j < 3; j++) {
      double value = 4.0 * nu * area * (grad[i][0] * grad[j][0] + grad[i][1] * grad[j][1]);
      if (i == j)
        value += c * mass;
      if (problem->wind)
        value += convection[i][j];
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
    if (!unknown_is_dirichlet(s, ux))
      s->b[ux] += load_x;
    if (!unknown_is_dirichlet(s, uy))
      s->b[uy] += load_y;
  }
  /* the Newton term J into the matrix (every component pair of the cell's
   * edges: zeros without a wind, so the pattern's entries are all written)
   * and J w into the right-hand side of the free rows */
  for (size_t comp = 0; problem->newton && comp < 2; comp++)
    for (size_t i = 0; i < 3; i++) {
      const size_t row = comp * num_edges + (size_t)e[i];
      double load = 0.0;
      for (size_t m = 0; m < 2; m++)
        for (size_t j = 0; j < 3; j++) {
          const size_t col = m * num_edges + (size_t)e[j];
          add_entry(s, row, col, jacobian[comp][i][m][j]);
          if (problem->wind)
            load += jacobian[comp][i][m][j] * problem->wind[col];
        }
      if (!unknown_is_dirichlet(s, row))
        s->b[row] += load;
    }
  return CLMG_SUCCESS;
}

/* b zeroed, every cell, then the identity rows of the Dirichlet unknowns
 * (b set to their values); a coupling the pattern lacks is an error. */
static clmg_status assemble_pass(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                 const clmg_stokes_problem *problem, stokes_sink *s,
                                 clmg_error *error) {
  const size_t n = 2 * edges->num_edges + mesh->num_cells;
  for (size_t i = 0; i < n; i++)
    s->b[i] = 0.0;
  clmg_status status = CLMG_SUCCESS;
  for (size_t k = 0; k < mesh->num_cells && status == CLMG_SUCCESS; k++)
    status = assemble_cell(mesh, edges, problem, k, s, error);
  for (size_t i = 0; i < 2 * edges->num_edges && status == CLMG_SUCCESS; i++)
    if (s->dirichlet[i]) {
      store_entry(s, i, i, 1.0);
      s->b[i] = s->value[i];
    }
  if (status == CLMG_SUCCESS && s->missing)
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "the matrix has no entry (%zu, %zu): its pattern is not the one "
                            "clmg_stokes_assemble_host gives this mesh and these Dirichlet and "
                            "free-slip tags",
                            s->missing_row, s->missing_col);
  return status;
}

/* ---- the pattern, straight from the cells of each edge ---- */

/* What the pattern's two passes read: the cells of each edge (from
 * cell_edges, in increasing order), the Dirichlet marks, per-thread
 * scratch for a row's columns, and the CSR arrays being filled. */
typedef struct pattern_job {
  size_t num_edges;
  const int32_t *cell_edges;
  const int64_t *edge_first; /* the cells of edge e: edge_cell[edge_first[e] .. edge_first[e+1]) */
  const int32_t *edge_cell;
  const uint8_t *dirichlet;
  int newton;       /* u_x and u_y of an edge coupled (clmg_stokes_problem.newton) */
  int32_t *scratch; /* capacity per thread */
  size_t capacity;
  int64_t *row_ptr; /* the count pass writes row lengths at i + 1 */
  int32_t *col;     /* the fill pass writes from row_ptr[i] */
} pattern_job;

/* Row i's columns, sorted and distinct, in out (capacity entries at
 * least); their count. The couplings are those assemble_cell stores: a
 * Dirichlet velocity row has its diagonal only; a velocity row couples
 * with the same component on the edges of its cells and with their
 * pressures; a pressure row with both components on its three edges;
 * Dirichlet velocity columns are left out; with newton, a velocity row
 * also couples with the other component on the edges of its cells. */
static size_t pattern_row(const pattern_job *job, size_t i, int32_t *out) {
  const size_t ne = job->num_edges;
  size_t count = 0;
  if (i < 2 * ne) {
    if (job->dirichlet[i]) {
      out[0] = (int32_t)i;
      return 1;
    }
    const size_t component = i >= ne, e = i - component * ne;
    for (int64_t q = job->edge_first[e]; q < job->edge_first[e + 1]; q++) {
      const size_t k = (size_t)job->edge_cell[q];
      for (size_t j = 0; j < 3; j++) {
        const size_t col = component * ne + (size_t)job->cell_edges[3 * k + j];
        if (!job->dirichlet[col])
          out[count++] = (int32_t)col;
      }
      out[count++] = (int32_t)(2 * ne + k);
    }
    /* the Newton term: also the other component on the edges of its cells */
    for (int64_t q = job->edge_first[e]; job->newton && q < job->edge_first[e + 1]; q++) {
      const size_t k = (size_t)job->edge_cell[q];
      for (size_t j = 0; j < 3; j++) {
        const size_t col = (1 - component) * ne + (size_t)job->cell_edges[3 * k + j];
        if (!job->dirichlet[col])
          out[count++] = (int32_t)col;
      }
    }
  } else {
    const size_t k = i - 2 * ne;
    for (size_t component = 0; component < 2; component++)
      for (size_t j = 0; j < 3; j++) {
        const size_t col = component * ne + (size_t)job->cell_edges[3 * k + j];
        if (!job->dirichlet[col])
          out[count++] = (int32_t)col;
      }
  }
  /* insertion sort, then the repeats dropped (rows are short) */
  for (size_t a = 1; a < count; a++) {
    int32_t v = out[a];
    size_t b = a;
    for (; b > 0 && out[b - 1] > v; b--)
      out[b] = out[b - 1];
    out[b] = v;
  }
  size_t distinct = 0;
  for (size_t a = 0; a < count; a++)
    if (distinct == 0 || out[distinct - 1] != out[a])
      out[distinct++] = out[a];
  return distinct;
}

static void pattern_count_range(void *data, size_t range, size_t begin, size_t end) {
  const pattern_job *job = data;
  int32_t *scratch = job->scratch + range * job->capacity;
  for (size_t i = begin; i < end; i++)
    job->row_ptr[i + 1] = (int64_t)pattern_row(job, i, scratch);
}

static void pattern_fill_range(void *data, size_t range, size_t begin, size_t end) {
  const pattern_job *job = data;
  int32_t *scratch = job->scratch + range * job->capacity;
  for (size_t i = begin; i < end; i++) {
    size_t count = pattern_row(job, i, scratch);
    memcpy(job->col + job->row_ptr[i], scratch, count * sizeof *scratch);
  }
}

enum { PATTERN_GRAIN = 16384 };

/* a's CSR pattern (values 0), the one the cells' couplings give with the
 * Dirichlet unknowns eliminated: the rows split over the host's cores,
 * each row sorted, the same arrays on any number of threads. */
static clmg_status stokes_pattern(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const uint8_t *dirichlet, int newton, clmg_csr *a,
                                  clmg_error *error) {
  const size_t ne = edges->num_edges, nc = mesh->num_cells, n = 2 * ne + nc;
  const size_t threads = clmg_host_threads();
  pattern_job job = {
      .num_edges = ne, .cell_edges = edges->cell_edges, .dirichlet = dirichlet, .newton = newton};
  int64_t *edge_first = clmg_alloc_zeroed_array(ne + 1, sizeof *edge_first);
  int32_t *edge_cell = clmg_alloc_array(3 * nc + 1, sizeof *edge_cell);
  int64_t *row_ptr = clmg_alloc_array(n + 1, sizeof *row_ptr);
  int32_t *scratch = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!edge_first || !edge_cell || !row_ptr) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the pattern of %zu unknowns", n);
    goto done;
  }
  /* the cells of each edge by a counting sort of cell_edges: in increasing
   * cell order */
  size_t most = 0;
  for (size_t q = 0; q < 3 * nc; q++)
    edge_first[edges->cell_edges[q] + 1]++;
  for (size_t e = 0; e < ne; e++) {
    if ((size_t)edge_first[e + 1] > most)
      most = (size_t)edge_first[e + 1];
    edge_first[e + 1] += edge_first[e];
  }
  for (size_t q = 0; q < 3 * nc; q++) {
    const size_t e = (size_t)edges->cell_edges[q];
    edge_cell[edge_first[e]++] = (int32_t)(q / 3);
  }
  for (size_t e = ne; e > 0; e--) /* the cursors back to the starts */
    edge_first[e] = edge_first[e - 1];
  edge_first[0] = 0;
  job.capacity = 7 * most > 6 ? 7 * most : 6;
  scratch = clmg_alloc_array(threads * job.capacity, sizeof *scratch);
  if (!scratch) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the pattern's scratch (%zu columns)", job.capacity);
    goto done;
  }
  job.edge_first = edge_first;
  job.edge_cell = edge_cell;
  job.scratch = scratch;
  job.row_ptr = row_ptr;
  row_ptr[0] = 0;
  clmg_host_parallel_for(n, PATTERN_GRAIN, pattern_count_range, &job);
  for (size_t i = 0; i < n; i++)
    row_ptr[i + 1] += row_ptr[i];
  const size_t nnz = (size_t)row_ptr[n];
  job.col = clmg_alloc_array(nnz + 1, sizeof *job.col);
  double *val = clmg_alloc_zeroed_array(nnz + 1, sizeof *val);
  if (!job.col || !val) {
    free(job.col);
    free(val);
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate %zu matrix entries", nnz);
    goto done;
  }
  clmg_host_parallel_for(n, PATTERN_GRAIN, pattern_fill_range, &job);
  *a = (clmg_csr){n, n, row_ptr, job.col, val};
  row_ptr = NULL;
done:
  free(edge_first);
  free(edge_cell);
  free(row_ptr);
  free(scratch);
  return status;
}

/* The Dirichlet flags and values of the velocity unknowns (2E each): both
 * components from boundary_velocity at the midpoint of a Dirichlet edge,
 * the normal component 0 on a free-slip edge. */
static clmg_status dirichlet_data(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                  const clmg_stokes_problem *problem, uint8_t **dirichlet,
                                  double **value, clmg_error *error) {
  const size_t num_edges = edges->num_edges;
  *value = NULL;
  clmg_status status = dirichlet_unknowns(mesh, edges, problem, dirichlet, error);
  if (status != CLMG_SUCCESS)
    return status;
  *value = clmg_alloc_zeroed_array(2 * num_edges + 1, sizeof **value);
  if (!*value)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate the Dirichlet values of %zu edges", num_edges);
  for (size_t e = 0; e < num_edges; e++) {
    if (!problem->boundary_velocity || !is_dirichlet_tag(problem, edges->edge_tag[e]))
      continue;
    double x[2], u[2] = {0.0, 0.0};
    edge_midpoint(mesh, edges, e, x);
    problem->boundary_velocity(x, edges->edge_tag[e], u, problem->boundary_data);
    (*value)[e] = u[0];
    (*value)[num_edges + e] = u[1];
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
  clmg_status status = checked_inputs(mesh, edges, &problem, &defaults, 1, error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  uint8_t *dirichlet = NULL, *written = NULL;
  double *value = NULL;
  status = dirichlet_data(mesh, edges, problem, &dirichlet, &value, error);
  if (status == CLMG_SUCCESS)
    status = stokes_pattern(mesh, edges, dirichlet, problem->newton != 0, a, error);
  if (status != CLMG_SUCCESS)
    goto done;
  written = clmg_alloc_zeroed_array(clmg_csr_nnz(a) + 1, 1);
  if (!written) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the marks of %zu matrix entries", clmg_csr_nnz(a));
    goto done;
  }
  stokes_sink values = {.num_edges = num_edges,
                        .dirichlet = dirichlet,
                        .value = value,
                        .pattern = a,
                        .values = a->val,
                        .written = written,
                        .b = b};
  status = assemble_pass(mesh, edges, problem, &values, error);

done:
  if (status != CLMG_SUCCESS)
    clmg_csr_free(a);
  free(dirichlet);
  free(value);
  free(written);
  return status;
}

clmg_status clmg_stokes_rhs_host(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                 const clmg_stokes_problem *problem, double *b, clmg_error *error) {
  clmg_error_clear(error);
  if (!b)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the right-hand side b is NULL");
  clmg_stokes_problem defaults;
  clmg_status status = checked_inputs(mesh, edges, &problem, &defaults, 1, error);
  if (status != CLMG_SUCCESS)
    return status;
  uint8_t *dirichlet = NULL;
  double *value = NULL;
  status = dirichlet_data(mesh, edges, problem, &dirichlet, &value, error);
  if (status == CLMG_SUCCESS) {
    stokes_sink rhs = {
        .num_edges = edges->num_edges, .dirichlet = dirichlet, .value = value, .b = b};
    status = assemble_pass(mesh, edges, problem, &rhs, error);
  }
  free(dirichlet);
  free(value);
  return status;
}

clmg_status clmg_stokes_update_values_host(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                           const clmg_stokes_problem *problem, const clmg_csr *a,
                                           double *values, double *b, clmg_error *error) {
  clmg_error_clear(error);
  if (!a || !values || !b)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the %s is NULL",
                          !a        ? "matrix"
                          : !values ? "output values"
                                    : "right-hand side b");
  clmg_stokes_problem defaults;
  clmg_status status = checked_inputs(mesh, edges, &problem, &defaults, 1, error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges, n = 2 * num_edges + mesh->num_cells;
  if (a->rows != n || a->cols != n || !a->row_ptr || (clmg_csr_nnz(a) > 0 && !a->col))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the matrix (%zu x %zu%s) is not a Stokes matrix of this mesh "
                          "(%zu x %zu)",
                          a->rows, a->cols, a->row_ptr ? "" : ", no row offsets", n, n);
  const size_t nnz = clmg_csr_nnz(a);
  /* the searches need offsets in range and sorted columns */
  for (size_t i = 0; i < n; i++) {
    const int64_t begin = a->row_ptr[i], end = a->row_ptr[i + 1];
    if (begin < 0 || end < begin || (size_t)end > nnz)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "the matrix's row %zu has offsets %lld to %lld, outside 0 to %zu", i,
                            (long long)begin, (long long)end, nnz);
    for (int64_t k = begin; k < end; k++)
      if (a->col[k] < 0 || (size_t)a->col[k] >= n || (k > begin && a->col[k] <= a->col[k - 1]))
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "the matrix's row %zu has column %d at entry %lld: columns must be "
                              "in range and sorted",
                              i, (int)a->col[k], (long long)k);
  }
  uint8_t *dirichlet = NULL, *written = NULL;
  double *value = NULL;
  status = dirichlet_data(mesh, edges, problem, &dirichlet, &value, error);
  if (status != CLMG_SUCCESS)
    goto done;
  written = clmg_alloc_zeroed_array(nnz + 1, 1);
  if (!written) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the marks of %zu matrix entries", nnz);
    goto done;
  }
  for (size_t k = 0; k < nnz; k++)
    values[k] = 0.0;
  stokes_sink sink = {.num_edges = num_edges,
                      .dirichlet = dirichlet,
                      .value = value,
                      .pattern = a,
                      .values = values,
                      .written = written,
                      .b = b};
  status = assemble_pass(mesh, edges, problem, &sink, error);
  /* every entry of a must be a coupling: then the patterns are equal */
  for (size_t i = 0; i < n && status == CLMG_SUCCESS; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      if (!written[k]) {
        status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "the matrix's entry (%zu, %d) is no coupling of this problem: its "
                                "pattern is not the one clmg_stokes_assemble_host gives this mesh "
                                "and these Dirichlet and free-slip tags",
                                i, (int)a->col[k]);
        break;
      }

done:
  free(dirichlet);
  free(value);
  free(written);
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
  clmg_status status = checked_inputs(mesh, edges, &problem, &defaults, 0, error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges, n = 2 * num_edges + mesh->num_cells;
  uint8_t *velocity = NULL;
  status = dirichlet_unknowns(mesh, edges, problem, &velocity, error);
  if (status != CLMG_SUCCESS)
    return status;
  uint8_t *result = clmg_alloc_zeroed_array(n, 1);
  if (!result)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the Dirichlet marks of %zu unknowns", n);
  else
    memcpy(result, velocity, 2 * num_edges);
  free(velocity);
  *mask = result;
  return status;
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

/* A row's entries in the order they were added, sorted by column (stably)
 * with the repeats summed in that order: clmg_csr_from_triplets's row, bit
 * for bit. The count kept. */
static size_t merge_row(int32_t *col, double *val, size_t count) {
  clmg_sort_row_entries(col, val, count);
  size_t kept = 0;
  for (size_t a = 0; a < count; a++) {
    if (kept > 0 && col[kept - 1] == col[a]) {
      val[kept - 1] += val[a];
    } else {
      col[kept] = col[a];
      val[kept++] = val[a];
    }
  }
  return kept;
}

/* The prolongation's passes over fine edges, coarse cells and rows, each
 * split over the host's cores: the averaging prolongation, the flux
 * corrections of the corner children, then their sum. A range that fails
 * keeps its first error; the lowest range's is the serial loop's. */
enum { TRANSFER_GRAIN = 4096, DEFICIT_MAX = 2 * 9, AVERAGE_MAX = 6 };

typedef struct transfer_job {
  const clmg_mesh *coarse, *fine;
  const clmg_triangle_edges *coarse_edges, *fine_edges;
  const uint8_t *fine_dirichlet, *coarse_dirichlet; /* NULL: none */
  int filling;                                      /* 0: the count pass, 1: the fill pass */
  clmg_csr average;                                 /* the averaging prolongation */
  /* per corner child s = 3 k + c: its inner edge, and per component
   * (slot 2 s + component) its corrections, DEFICIT_MAX places each */
  int32_t *inner;
  uint32_t *slot_count;
  int32_t *slot_col;
  double *slot_val;
  int64_t *row_slot_ptr; /* the slots of each row, in the children's order */
  int64_t *row_slot;
  clmg_csr out;
  size_t capacity; /* per thread, of scratch_col and scratch_val */
  int32_t *scratch_col;
  double *scratch_val;
  clmg_status status[CLMG_MAX_HOST_THREADS];
  clmg_error errors[CLMG_MAX_HOST_THREADS];
} transfer_job;

static clmg_status first_failure(const transfer_job *job, clmg_error *error) {
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
    if (job->status[r] != CLMG_SUCCESS) {
      if (error)
        *error = job->errors[r];
      return job->status[r];
    }
  return CLMG_SUCCESS;
}

/* The coarse P1nc functions of coarse cell k (1 - 2 lambda_i) at the
 * midpoint of fine edge f, times weight: its barycentric coordinates are
 * exact (quarters). */
static clmg_status coarse_cell_weights(const transfer_job *job, size_t f, size_t k, double weight,
                                       double w[3], clmg_error *error) {
  int32_t nodes[6] = {-1, -1, -1, -1, -1, -1};
  clmg_status status = coarse_cell_nodes(job->coarse, job->fine, k, nodes, error);
  if (status != CLMG_SUCCESS)
    return status;
  const int32_t *ends = job->fine_edges->edge_vertices + 2 * f;
  double lambda[3] = {0.0, 0.0, 0.0};
  for (size_t end = 0; end < 2; end++) {
    size_t j = 0;
    while (j < 6 && nodes[j] != ends[end])
      j++;
    if (j == 6)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "fine edge %zu (vertices %d and %d) does not lie in coarse cell %zu: "
                            "the fine edges do not match the fine mesh",
                            f, (int)ends[0], (int)ends[1], k);
    for (size_t i = 0; i < 3; i++)
      lambda[i] += 0.5 * node_barycentric[j][i];
  }
  for (size_t i = 0; i < 3; i++)
    w[i] = weight * (1.0 - 2.0 * lambda[i]);
  return CLMG_SUCCESS;
}

/* The averaging prolongation's rows of fine edge f, per velocity
 * component: on a coarse edge between two coarse cells their mean, inside
 * a coarse cell or on the boundary its functions; nothing in a row of a
 * fine Dirichlet unknown or a column of a coarse one. */
static clmg_status average_rows(const transfer_job *job, size_t f, size_t count[2],
                                int32_t col[2][AVERAGE_MAX], double val[2][AVERAGE_MAX],
                                clmg_error *error) {
  const size_t fine_count = job->fine_edges->num_edges, coarse_count = job->coarse_edges->num_edges;
  const int32_t *sides = job->fine_edges->edge_cells + 2 * f;
  size_t cells[2] = {(size_t)sides[0] / 4, 0}, used = 1;
  double weight = 1.0;
  if (sides[1] >= 0 && (size_t)sides[1] / 4 != cells[0]) {
    cells[used++] = (size_t)sides[1] / 4;
    weight = 0.5;
  }
  count[0] = count[1] = 0;
  for (size_t q = 0; q < used; q++) {
    double w[3] = {0.0, 0.0, 0.0};
    clmg_status status = coarse_cell_weights(job, f, cells[q], weight, w, error);
    if (status != CLMG_SUCCESS)
      return status;
    for (size_t i = 0; i < 3; i++) {
      const size_t e = (size_t)job->coarse_edges->cell_edges[3 * cells[q] + i];
      for (size_t component = 0; component < 2 && w[i] != 0.0; component++) {
        const size_t row = component * fine_count + f, column = component * coarse_count + e;
        if ((job->fine_dirichlet && job->fine_dirichlet[row]) ||
            (job->coarse_dirichlet && job->coarse_dirichlet[column]))
          continue;
        col[component][count[component]] = (int32_t)column;
        val[component][count[component]++] = w[i];
      }
    }
  }
  for (size_t component = 0; component < 2; component++)
    count[component] = merge_row(col[component], val[component], count[component]);
  return CLMG_SUCCESS;
}

static void average_range(void *data, size_t range, size_t begin, size_t end) {
  transfer_job *job = data;
  clmg_csr *p = &job->average;
  const size_t fine_count = job->fine_edges->num_edges;
  for (size_t f = begin; f < end; f++) {
    int32_t col[2][AVERAGE_MAX];
    double val[2][AVERAGE_MAX];
    size_t count[2];
    clmg_status status = average_rows(job, f, count, col, val, &job->errors[range]);
    if (status != CLMG_SUCCESS) {
      job->status[range] = status;
      return;
    }
    for (size_t component = 0; component < 2; component++) {
      const size_t row = component * fine_count + f;
      if (!job->filling) {
        p->row_ptr[row + 1] = (int64_t)count[component];
        continue;
      }
      memcpy(p->col + p->row_ptr[row], col[component], count[component] * sizeof(int32_t));
      memcpy(p->val + p->row_ptr[row], val[component], count[component] * sizeof(double));
    }
  }
}

/* The fine flux out of corner child t (= 4 k + c) of coarse cell k under
 * the averaging prolongation, minus a quarter of the coarse cell's flux
 * (both as rows over the coarse velocity unknowns, the coarse Dirichlet
 * ones left out as the averaging leaves them out), then made up on the
 * child's inner edge (the one opposite its corner c) by a velocity along
 * the edge's normal: after it the divergence of every child is the coarse
 * cell's. The deficit has at most 2 x 9 columns (the edges of k and of its
 * three neighbours). Its entries, per component of the inner edge's rows,
 * in the order of the deficit's columns. */
static clmg_status flux_correction(const transfer_job *job, size_t k, size_t c, size_t *inner,
                                   size_t count[2], int32_t out_col[2][DEFICIT_MAX],
                                   double out_val[2][DEFICIT_MAX], clmg_error *error) {
  double coords[6], coarse_area, fine_area, coarse_grad[4][3], fine_grad[4][3];
  clmg_status status =
      clmg_stokes_cell_geometry(job->coarse, k, coords, &coarse_area, coarse_grad, error);
  if (status == CLMG_SUCCESS)
    status = clmg_stokes_cell_geometry(job->fine, 4 * k + c, coords, &fine_area, fine_grad, error);
  if (status != CLMG_SUCCESS)
    return status;
  const clmg_csr *p = &job->average;
  const size_t fine_count = job->fine_edges->num_edges, coarse_count = job->coarse_edges->num_edges;
  int32_t column[DEFICIT_MAX];
  double deficit[DEFICIT_MAX];
  size_t used = 0;
  /* B_{K,e_i} = 2 |K| grad lambda_i per component (a quarter of it per child) */
  for (size_t i = 0; i < 3; i++)
    for (size_t component = 0; component < 2; component++) {
      size_t col = component * coarse_count + (size_t)job->coarse_edges->cell_edges[3 * k + i];
      if (job->coarse_dirichlet && job->coarse_dirichlet[col])
        continue;
      column[used] = (int32_t)col;
      deficit[used++] = 0.5 * coarse_area * coarse_grad[i][component];
    }
  const int32_t *child_edges = job->fine_edges->cell_edges + 3 * (4 * k + c);
  for (size_t i = 0; i < 3; i++)
    for (size_t component = 0; component < 2; component++) {
      size_t row = component * fine_count + (size_t)child_edges[i];
      double b = 2.0 * fine_area * fine_grad[i][component];
      for (int64_t q = p->row_ptr[row]; q < p->row_ptr[row + 1]; q++) {
        size_t j = 0;
        while (j < used && column[j] != p->col[q])
          j++;
        if (j == used) {
          if (used == DEFICIT_MAX)
            return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                  "child %zu of coarse cell %zu: its edges reach more than %d "
                                  "coarse velocity unknowns",
                                  c, k, DEFICIT_MAX);
          column[used] = p->col[q];
          deficit[used++] = 0.0;
        }
        deficit[j] -= b * p->val[q];
      }
    }
  /* a velocity s grad lambda_c on the inner edge adds 2 |t| s |grad lambda_c|^2 */
  const double *normal = fine_grad[c];
  const double scale = 1.0 / (2.0 * fine_area * (normal[0] * normal[0] + normal[1] * normal[1]));
  *inner = (size_t)child_edges[c];
  count[0] = count[1] = 0;
  for (size_t j = 0; j < used; j++)
    for (size_t component = 0; component < 2; component++)
      if (deficit[j] != 0.0 && normal[component] != 0.0) {
        out_col[component][count[component]] = column[j];
        out_val[component][count[component]++] = deficit[j] * scale * normal[component];
      }
  return CLMG_SUCCESS;
}

static void correction_range(void *data, size_t range, size_t begin, size_t end) {
  transfer_job *job = data;
  for (size_t k = begin; k < end; k++)
    for (size_t c = 0; c < 3; c++) {
      int32_t col[2][DEFICIT_MAX];
      double val[2][DEFICIT_MAX];
      size_t count[2] = {0, 0}, inner = 0, s = 3 * k + c;
      clmg_status status = flux_correction(job, k, c, &inner, count, col, val, &job->errors[range]);
      if (status != CLMG_SUCCESS) {
        job->status[range] = status;
        return;
      }
      job->inner[s] = (int32_t)inner;
      for (size_t component = 0; component < 2; component++) {
        const size_t slot = 2 * s + component;
        /* sorted (its columns are distinct): the rows merge in one sweep */
        count[component] = merge_row(col[component], val[component], count[component]);
        job->slot_count[slot] = (uint32_t)count[component];
        memcpy(job->slot_col + slot * DEFICIT_MAX, col[component],
               count[component] * sizeof(int32_t));
        memcpy(job->slot_val + slot * DEFICIT_MAX, val[component],
               count[component] * sizeof(double));
      }
    }
}

/* Row i of the prolongation: the averaging's entries, then the row's
 * corrections in the children's order, merged (the triplets' order). */
static void corrected_range(void *data, size_t range, size_t begin, size_t end) {
  transfer_job *job = data;
  int32_t *col = job->scratch_col + range * job->capacity;
  double *val = job->scratch_val + range * job->capacity;
  const clmg_csr *p = &job->average;
  for (size_t i = begin; i < end; i++) {
    const int64_t first = p->row_ptr[i];
    size_t count = (size_t)(p->row_ptr[i + 1] - first);
    if (job->row_slot_ptr[i] == job->row_slot_ptr[i + 1]) { /* the averaging's row */
      if (!job->filling)
        job->out.row_ptr[i + 1] = (int64_t)count;
      else {
        memcpy(job->out.col + job->out.row_ptr[i], p->col + first, count * sizeof *col);
        memcpy(job->out.val + job->out.row_ptr[i], p->val + first, count * sizeof *val);
      }
      continue;
    }
    if (job->row_slot_ptr[i + 1] - job->row_slot_ptr[i] == 1) {
      /* one child's corrections (always, on a refined mesh): the two sorted
       * rows merged, the averaging's value first where both have a column */
      const size_t slot = (size_t)job->row_slot[job->row_slot_ptr[i]];
      const int32_t *add_col = job->slot_col + slot * DEFICIT_MAX;
      const double *add_val = job->slot_val + slot * DEFICIT_MAX;
      const size_t length = job->slot_count[slot];
      int32_t *out_col = job->filling ? job->out.col + job->out.row_ptr[i] : col;
      double *out_val = job->filling ? job->out.val + job->out.row_ptr[i] : val;
      size_t a = 0, b = 0, kept = 0;
      while (a < count || b < length) {
        if (b == length || (a < count && p->col[first + a] < add_col[b])) {
          out_col[kept] = p->col[first + a];
          out_val[kept++] = p->val[first + a++];
        } else if (a == count || add_col[b] < p->col[first + a]) {
          out_col[kept] = add_col[b];
          out_val[kept++] = add_val[b++];
        } else {
          out_col[kept] = add_col[b];
          out_val[kept++] = p->val[first + a++] + add_val[b++];
        }
      }
      if (!job->filling)
        job->out.row_ptr[i + 1] = (int64_t)kept;
      continue;
    }
    memcpy(col, p->col + first, count * sizeof *col);
    memcpy(val, p->val + first, count * sizeof *val);
    for (int64_t q = job->row_slot_ptr[i]; q < job->row_slot_ptr[i + 1]; q++) {
      const size_t slot = (size_t)job->row_slot[q], length = job->slot_count[slot];
      memcpy(col + count, job->slot_col + slot * DEFICIT_MAX, length * sizeof *col);
      memcpy(val + count, job->slot_val + slot * DEFICIT_MAX, length * sizeof *val);
      count += length;
    }
    count = merge_row(col, val, count);
    if (!job->filling) {
      job->out.row_ptr[i + 1] = (int64_t)count;
      continue;
    }
    memcpy(job->out.col + job->out.row_ptr[i], col, count * sizeof *col);
    memcpy(job->out.val + job->out.row_ptr[i], val, count * sizeof *val);
  }
}

/* row_ptr[1..rows] holds counts: the offsets. */
static void counts_to_offsets(int64_t *row_ptr, size_t rows) {
  row_ptr[0] = 0;
  for (size_t i = 0; i < rows; i++)
    row_ptr[i + 1] += row_ptr[i];
}

static clmg_status transfer_no_memory(clmg_error *error, const char *what) {
  return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "prolongation: cannot allocate %s",
                        what);
}

/* The averaging prolongation (job->average): both passes over the fine
 * edges, the pressure rows (the coarse cell's pressure) serially. */
static clmg_status average_prolongation(transfer_job *job, size_t rows, size_t cols,
                                        clmg_error *error) {
  const size_t fine_count = job->fine_edges->num_edges, cells = job->fine->num_cells;
  clmg_csr *p = &job->average;
  *p = (clmg_csr){rows, cols, clmg_alloc_zeroed_array(rows + 1, sizeof(int64_t)), NULL, NULL};
  if (!p->row_ptr)
    return transfer_no_memory(error, "the row offsets");
  job->filling = 0;
  clmg_host_parallel_for(fine_count, TRANSFER_GRAIN, average_range, job);
  clmg_status status = first_failure(job, error);
  if (status != CLMG_SUCCESS)
    return status;
  for (size_t t = 0; t < cells; t++)
    p->row_ptr[2 * fine_count + t + 1] = 1;
  counts_to_offsets(p->row_ptr, rows);
  const size_t nnz = (size_t)p->row_ptr[rows];
  p->col = clmg_alloc_array(nnz + 1, sizeof *p->col);
  p->val = clmg_alloc_array(nnz + 1, sizeof *p->val);
  if (!p->col || !p->val)
    return transfer_no_memory(error, "the averaging's entries");
  job->filling = 1;
  clmg_host_parallel_for(fine_count, TRANSFER_GRAIN, average_range, job);
  const size_t coarse_count = job->coarse_edges->num_edges;
  for (size_t t = 0; t < cells; t++) {
    const int64_t at = p->row_ptr[2 * fine_count + t];
    p->col[at] = (int32_t)(2 * coarse_count + t / 4);
    p->val[at] = 1.0;
  }
  return CLMG_SUCCESS;
}

/* The flux corrections of every corner child (one pass over the coarse
 * cells), then the slots of each row in the children's order. */
static clmg_status flux_corrections(transfer_job *job, clmg_error *error) {
  const size_t children = 3 * job->coarse->num_cells, rows = job->average.rows;
  const size_t fine_count = job->fine_edges->num_edges;
  job->inner = clmg_alloc_array(children + 1, sizeof *job->inner);
  job->slot_count = clmg_alloc_array(2 * children + 1, sizeof *job->slot_count);
  job->slot_col = clmg_alloc_array(2 * children * DEFICIT_MAX + 1, sizeof *job->slot_col);
  job->slot_val = clmg_alloc_array(2 * children * DEFICIT_MAX + 1, sizeof *job->slot_val);
  job->row_slot_ptr = clmg_alloc_zeroed_array(rows + 1, sizeof *job->row_slot_ptr);
  job->row_slot = clmg_alloc_array(2 * children + 1, sizeof *job->row_slot);
  int64_t *cursor = clmg_alloc_array(rows + 1, sizeof *cursor);
  if (!job->inner || !job->slot_count || !job->slot_col || !job->slot_val || !job->row_slot_ptr ||
      !job->row_slot || !cursor) {
    free(cursor);
    return transfer_no_memory(error, "the flux corrections");
  }
  clmg_host_parallel_for(job->coarse->num_cells, TRANSFER_GRAIN / 4, correction_range, job);
  clmg_status status = first_failure(job, error);
  if (status == CLMG_SUCCESS) {
    for (size_t s = 0; s < children; s++)
      for (size_t component = 0; component < 2; component++)
        job->row_slot_ptr[component * fine_count + (size_t)job->inner[s] + 1]++;
    counts_to_offsets(job->row_slot_ptr, rows);
    memcpy(cursor, job->row_slot_ptr, (rows + 1) * sizeof *cursor);
    for (size_t s = 0; s < children; s++)
      for (size_t component = 0; component < 2; component++)
        job->row_slot[cursor[component * fine_count + (size_t)job->inner[s]]++] =
            (int64_t)(2 * s + component);
  }
  free(cursor);
  return status;
}

/* The prolongation (job->out): the averaging's rows with their
 * corrections. */
static clmg_status corrected_prolongation(transfer_job *job, clmg_error *error) {
  const clmg_csr *p = &job->average;
  const size_t rows = p->rows;
  size_t longest = 1;
  for (size_t i = 0; i < rows; i++) {
    size_t length = (size_t)(p->row_ptr[i + 1] - p->row_ptr[i]);
    for (int64_t q = job->row_slot_ptr[i]; q < job->row_slot_ptr[i + 1]; q++)
      length += job->slot_count[job->row_slot[q]];
    if (length > longest)
      longest = length;
  }
  job->capacity = longest;
  const size_t threads = clmg_host_threads();
  job->scratch_col = clmg_alloc_array(threads * longest, sizeof *job->scratch_col);
  job->scratch_val = clmg_alloc_array(threads * longest, sizeof *job->scratch_val);
  job->out = (clmg_csr){rows, p->cols, clmg_alloc_array(rows + 1, sizeof(int64_t)), NULL, NULL};
  if (!job->scratch_col || !job->scratch_val || !job->out.row_ptr)
    return transfer_no_memory(error, "the prolongation's rows");
  job->filling = 0;
  clmg_host_parallel_for(rows, TRANSFER_GRAIN, corrected_range, job);
  counts_to_offsets(job->out.row_ptr, rows);
  const size_t nnz = (size_t)job->out.row_ptr[rows];
  job->out.col = clmg_alloc_array(nnz + 1, sizeof *job->out.col);
  job->out.val = clmg_alloc_array(nnz + 1, sizeof *job->out.val);
  if (!job->out.col || !job->out.val)
    return transfer_no_memory(error, "the prolongation's entries");
  job->filling = 1;
  clmg_host_parallel_for(rows, TRANSFER_GRAIN, corrected_range, job);
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
  /* only the Dirichlet and free-slip tags matter here */
  clmg_status status = problem ? check_tags(problem, error) : CLMG_SUCCESS;
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
  transfer_job *job = calloc(1, sizeof *job);
  if (!job)
    return transfer_no_memory(error, "its work");
  /* the Dirichlet marks per velocity unknown: fine rows and coarse columns
   * of Dirichlet components are left out */
  if (problem)
    status = dirichlet_unknowns(fine, fine_edges, problem, &fine_dirichlet, error);
  if (status == CLMG_SUCCESS && problem)
    status = dirichlet_unknowns(coarse, coarse_edges, problem, &coarse_dirichlet, error);
  *job = (transfer_job){.coarse = coarse,
                        .fine = fine,
                        .coarse_edges = coarse_edges,
                        .fine_edges = fine_edges,
                        .fine_dirichlet = fine_dirichlet,
                        .coarse_dirichlet = coarse_dirichlet};
  if (status == CLMG_SUCCESS)
    status = average_prolongation(job, rows, cols, error);
  if (status == CLMG_SUCCESS)
    status = flux_corrections(job, error);
  if (status == CLMG_SUCCESS)
    status = corrected_prolongation(job, error);
  if (status == CLMG_SUCCESS) {
    *p = job->out;
    memset(&job->out, 0, sizeof job->out);
  }
  clmg_csr_free(&job->out);
  clmg_csr_free(&job->average);
  free(job->inner);
  free(job->slot_count);
  free(job->slot_col);
  free(job->slot_val);
  free(job->row_slot_ptr);
  free(job->row_slot);
  free(job->scratch_col);
  free(job->scratch_val);
  free(job);
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
    status = clmg_stokes_cell_geometry(mesh, k, coords, &area, grad, error);
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
