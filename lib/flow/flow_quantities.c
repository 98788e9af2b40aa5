/* Quantities of interest of a Crouzeix-Raviart P1nc/P0 flow solution
 * (include/clmg/flow.h): drag and lift by the volume integral of John,
 * "Reference values for drag and lift of a two-dimensional time-dependent
 * flow around a cylinder" (2004), and Braack and Richter, "Solutions of 3D
 * Navier-Stokes benchmark problems with adaptive finite elements" (2006);
 * pressure and velocity at a point (the DFG pressure difference, the
 * cavity's centreline profiles) and the velocity of each cell. The
 * discretisation is that of lib/flow/stokes.c (Bauer, Klement, Oberhuber and
 * Zabka, "Implementation of the Vanka-type multigrid solver for the finite
 * element approximation of the Navier-Stokes equations on GPU", 2016).
 * Host code only. */
#include "flow/stokes_internal.h"
#include "clmg/flow.h"

#include <math.h>
#include <string.h>

/* ---- drag and lift ---- */

clmg_status clmg_flow_drag_lift(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                const double *x, double viscosity, int32_t body_tag,
                                double mean_velocity, double diameter, double *drag_coefficient,
                                double *lift_coefficient, clmg_error *error) {
  clmg_error_clear(error);
  if (!x || !drag_coefficient || !lift_coefficient)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "x, drag_coefficient and lift_coefficient must not be NULL");
  *drag_coefficient = *lift_coefficient = 0.0;
  if (!(viscosity >= 0.0) || !isfinite(viscosity))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the viscosity is %g; it must be finite and >= 0", viscosity);
  if (!(mean_velocity > 0.0) || !isfinite(mean_velocity) || !(diameter > 0.0) ||
      !isfinite(diameter))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the mean velocity %g and the diameter %g of the drag and lift "
                          "coefficients must be finite and > 0",
                          mean_velocity, diameter);
  if (body_tag < 1)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the body tag is %d; boundary tags are >= 1", (int)body_tag);
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  const double *ux = x, *uy = x + num_edges, *pressure = x + 2 * num_edges;
  /* force[0]: with v_d (the x component), force[1]: with v_l (y) */
  double force[2] = {0.0, 0.0};
  size_t body_edges = 0;
  for (size_t e = 0; e < num_edges; e++)
    body_edges += edges->edge_tag[e] == body_tag;
  if (body_edges == 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "no edge of the mesh carries the body tag %d", (int)body_tag);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *e = edges->cell_edges + 3 * k;
    int on_body[3], any = 0;
    for (size_t i = 0; i < 3; i++) {
      on_body[i] = edges->edge_tag[e[i]] == body_tag;
      any |= on_body[i];
    }
    if (!any)
      continue; /* v_d and v_l vanish on the triangle */
    double coords[6], area, grad[4][3];
    status = clmg_stokes_cell_geometry(mesh, k, coords, &area, grad, error);
    if (status != CLMG_SUCCESS)
      return status;
    /* The P1nc function of edge i (opposite vertex i) is 1 - 2 lambda_i:
     * gradient -2 grad lambda_i. gu[c][d] = d u_c / d x_d; gv the gradient
     * of the scalar v = sum of the body edges' functions (v_d = (v, 0),
     * v_l = (0, v)). */
    double gu[2][2] = {{0.0, 0.0}, {0.0, 0.0}}, gv[2] = {0.0, 0.0};
    for (size_t i = 0; i < 3; i++)
      for (size_t d = 0; d < 2; d++) {
        gu[0][d] -= 2.0 * ux[e[i]] * grad[i][d];
        gu[1][d] -= 2.0 * uy[e[i]] * grad[i][d];
        if (on_body[i])
          gv[d] -= 2.0 * grad[i][d];
      }
    for (size_t c = 0; c < 2; c++) {
      /* nu (grad u_c, grad v)_K: both gradients constant */
      double viscous = viscosity * area * (gu[c][0] * gv[0] + gu[c][1] * gv[1]);
      /* (u . grad u_c, v)_K by the edge-midpoint rule (exact for
       * quadratics): |K|/3 times the sum over the midpoints, where u is
       * the edge's value and v is 1 on the body edges, 0 on the others */
      double convective = 0.0;
      for (size_t i = 0; i < 3; i++)
        if (on_body[i])
          convective += ux[e[i]] * gu[c][0] + uy[e[i]] * gu[c][1];
      convective *= area / 3.0;
      /* (p, div v)_K: div v_d = dv/dx, div v_l = dv/dy */
      double pressure_term = pressure[k] * area * gv[c];
      force[c] -= viscous + convective - pressure_term;
    }
  }
  const double scale = 2.0 / (mean_velocity * mean_velocity * diameter);
  *drag_coefficient = scale * force[0];
  *lift_coefficient = scale * force[1];
  return CLMG_SUCCESS;
}

/* ---- point values ---- */

/* Barycentric coordinates of a point in the triangle with these corners
 * are accepted down to -POINT_TOLERANCE: points on edges and vertices
 * belong to every triangle that has them. */
#define POINT_TOLERANCE 1e-10

/* What the triangles containing a point add up. */
typedef struct point_sum {
  size_t count;
  double pressure;
  double u[2];
} point_sum;

/* Adds up, over the triangles containing point, their pressure (where
 * pressure, one value per triangle, is not NULL) and their P1nc velocity
 * there (where edges is not NULL; x in the layout of clmg/stokes.h). */
static clmg_status locate(const clmg_mesh *mesh, const double *point, const double *pressure,
                          const clmg_triangle_edges *edges, const double *x, point_sum *sum,
                          clmg_error *error) {
  memset(sum, 0, sizeof *sum);
  if (!isfinite(point[0]) || !isfinite(point[1]))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the point (%g, %g) is not finite",
                          point[0], point[1]);
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *cell = mesh->cells + 3 * k;
    const double *corner[3];
    for (size_t i = 0; i < 3; i++) {
      if (cell[i] < 0 || (size_t)cell[i] >= mesh->num_vertices)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "cell %zu has vertex %d, outside [0, %zu)", k, (int)cell[i],
                              mesh->num_vertices);
      corner[i] = mesh->coords + 2 * (size_t)cell[i];
    }
    /* a cheap rejection by the bounding box, with room for the tolerance */
    double low[2], high[2];
    for (size_t d = 0; d < 2; d++) {
      low[d] = fmin(corner[0][d], fmin(corner[1][d], corner[2][d]));
      high[d] = fmax(corner[0][d], fmax(corner[1][d], corner[2][d]));
    }
    double slack = 1e-6 * fmax(high[0] - low[0], high[1] - low[1]);
    if (point[0] < low[0] - slack || point[0] > high[0] + slack || point[1] < low[1] - slack ||
        point[1] > high[1] + slack)
      continue;
    const double ax = corner[1][0] - corner[0][0], ay = corner[1][1] - corner[0][1];
    const double bx = corner[2][0] - corner[0][0], by = corner[2][1] - corner[0][1];
    const double px = point[0] - corner[0][0], py = point[1] - corner[0][1];
    const double det = ax * by - ay * bx;
    if (!(det > 0.0))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "cell %zu is inverted or degenerate (twice its signed area is %g): "
                            "triangles must list their vertices counter-clockwise",
                            k, det);
    double lambda[3];
    lambda[1] = (px * by - py * bx) / det;
    lambda[2] = (ax * py - ay * px) / det;
    lambda[0] = 1.0 - lambda[1] - lambda[2];
    if (lambda[0] < -POINT_TOLERANCE || lambda[1] < -POINT_TOLERANCE ||
        lambda[2] < -POINT_TOLERANCE)
      continue;
    sum->count++;
    if (pressure)
      sum->pressure += pressure[k];
    if (edges)
      for (size_t i = 0; i < 3; i++) {
        const size_t e = (size_t)edges->cell_edges[3 * k + i];
        const double phi = 1.0 - 2.0 * lambda[i];
        sum->u[0] += phi * x[e];
        sum->u[1] += phi * x[edges->num_edges + e];
      }
  }
  if (sum->count == 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "the point (%.17g, %.17g) lies in no triangle of the mesh (outside the "
                          "domain or in a hole)",
                          point[0], point[1]);
  return CLMG_SUCCESS;
}

clmg_status clmg_flow_pressure_at(const clmg_mesh *mesh, const double *x, size_t num_edges,
                                  const double *point, double *pressure, clmg_error *error) {
  clmg_error_clear(error);
  if (!x || !point || !pressure)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "x, point and pressure must not be NULL");
  *pressure = 0.0;
  clmg_status status = clmg_triangle_mesh_check(mesh, error);
  if (status != CLMG_SUCCESS)
    return status;
  point_sum sum;
  status = locate(mesh, point, x + 2 * num_edges, NULL, NULL, &sum, error);
  if (status != CLMG_SUCCESS)
    return status;
  *pressure = sum.pressure / (double)sum.count;
  return CLMG_SUCCESS;
}

clmg_status clmg_flow_sample_velocity(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                      const double *x, const double *point, double *u,
                                      clmg_error *error) {
  clmg_error_clear(error);
  if (!x || !point || !u)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "x, point and u must not be NULL");
  u[0] = u[1] = 0.0;
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  point_sum sum;
  status = locate(mesh, point, NULL, edges, x, &sum, error);
  if (status != CLMG_SUCCESS)
    return status;
  u[0] = sum.u[0] / (double)sum.count;
  u[1] = sum.u[1] / (double)sum.count;
  return CLMG_SUCCESS;
}

clmg_status clmg_flow_cell_velocity(const clmg_mesh *mesh, const clmg_triangle_edges *edges,
                                    const double *x, double *cell_u, clmg_error *error) {
  clmg_error_clear(error);
  if (!x || !cell_u)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "x and cell_u must not be NULL");
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", error);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t num_edges = edges->num_edges;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    const int32_t *e = edges->cell_edges + 3 * k;
    cell_u[2 * k] = (x[e[0]] + x[e[1]] + x[e[2]]) / 3.0;
    cell_u[2 * k + 1] =
        (x[num_edges + (size_t)e[0]] + x[num_edges + (size_t)e[1]] + x[num_edges + (size_t)e[2]]) /
        3.0;
  }
  return CLMG_SUCCESS;
}
