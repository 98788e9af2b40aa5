/* The Oseen systems of a Crouzeix-Raviart hierarchy refilled on the
 * device at every time step or Picard iteration (clmg_stokes_assembler;
 * Bauer, Klement, Oberhuber and Zabka, section 5.3). What depends only on
 * the mesh and the coefficients (viscosity, mass, pressure coupling, the
 * Dirichlet rows and the loads they move to b, the force) is the matrix
 * and right-hand side the hierarchy was built with, stored once; a step
 * copies them and adds the convection of the new wind (cl/stokes.cl),
 * triangles colour by colour as the paper does, so no two work-items of a
 * launch add into the same entry; the coarser levels' winds are restricted
 * on the device; the time term adds c M u_old to the finest right-hand
 * side. The host assembly (lib/flow/stokes.c) is the reference the tests
 * hold it to.
 *
 * Bytes per step and level (double): the copy of the values (16 per
 * entry), per triangle its 3 edges, 12 normals, 18 positions and order
 * (136) plus the wind of its edges (48, from cache at best) and the
 * read-modify-write of its 18 entries (288, no entry twice): about 1.3x the
 * copy of the matrix. */
#include "fe/fe_internal.h"
#include "flow/stokes_internal.h"
#include "solve/internal.h"

#include "clmg/stokes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Positions in the convection kernel's table: the row is Dirichlet
 * (nothing added), or the column is (the term moves to b). */
enum { ROW_DIRICHLET = -1, COLUMN_DIRICHLET = -2 };

typedef struct assembler_level {
  size_t num_edges, num_cells, nnz;
  size_t added, moved; /* convection terms added to values, and moved to b */
  int num_colours;
  size_t *colour_start; /* host: colour k's triangles are order[colour_start[k] ...] */
  clmg_vector *order, *cell_edges, *normals, *positions;
  clmg_vector *static_values, *values;
  int borrowed_static; /* static_values is the caller's (clmg_stokes_assembler_create_from) */
  /* the Newton term (clmg_stokes_problem.newton): per triangle, for
   * component c of row edge i and component d of column edge j, the
   * entry's position, ROW_DIRICHLET or COLUMN_DIRICHLET (36) */
  clmg_vector *newton_positions;
  clmg_vector *wind;   /* levels below the finest: restricted from the level above */
  clmg_vector *halves; /* levels below the finest: the 2 fine edges of each edge */
} assembler_level;

struct clmg_stokes_assembler {
  clmg_context *context;
  int num_levels;
  assembler_level *levels;
  double viscosity, delta; /* delta: the weighted upwind's parameter */
  int full_upwind;
  int newton;            /* the problem's newton flag: the tables made */
  int newton_on;         /* the next updates add the Newton term (set_newton) */
  double boundary_scale; /* the Dirichlet values' factor (1: the build's) */
  /* the finest right-hand side's force part (NULL without a force) and the
   * rest, the Dirichlet values' (static_rhs itself without a force), and
   * the Dirichlet values times boundary_scale */
  clmg_vector *force_rhs, *boundary_rhs, *scaled_dirichlet;
  /* the finest level's right-hand side: stored, current, the Dirichlet
   * values and the weights of the previous velocity */
  clmg_vector *static_rhs, *rhs, *dirichlet_value, *previous_weight;
  cl_kernel convection, restriction, previous;
};

void clmg_stokes_assembler_destroy(clmg_stokes_assembler *as) {
  if (!as)
    return;
  for (int l = 0; as->levels && l < as->num_levels; l++) {
    assembler_level *lv = &as->levels[l];
    free(lv->colour_start);
    clmg_vector_destroy(lv->order);
    clmg_vector_destroy(lv->cell_edges);
    clmg_vector_destroy(lv->normals);
    clmg_vector_destroy(lv->positions);
    clmg_vector_destroy(lv->newton_positions);
    if (!lv->borrowed_static)
      clmg_vector_destroy(lv->static_values);
    clmg_vector_destroy(lv->values);
    clmg_vector_destroy(lv->wind);
    clmg_vector_destroy(lv->halves);
  }
  free(as->levels);
  clmg_vector_destroy(as->rhs);
  clmg_vector_destroy(as->dirichlet_value);
  clmg_vector_destroy(as->previous_weight);
  clmg_vector_destroy(as->force_rhs);
  if (as->boundary_rhs != as->static_rhs)
    clmg_vector_destroy(as->boundary_rhs);
  clmg_vector_destroy(as->static_rhs);
  clmg_vector_destroy(as->scaled_dirichlet);
  free(as);
}

/* Where the coupling (row, col) of a cell goes: ROW_DIRICHLET in a
 * Dirichlet row (which keeps its identity), COLUMN_DIRICHLET for a
 * Dirichlet column (moved to the right-hand side), else its entry in a
 * (-1, as ROW_DIRICHLET, where a lacks it). */
static int64_t coupling_position(const clmg_csr *a, const uint8_t *dirichlet, size_t row,
                                 size_t col) {
  return dirichlet[row]   ? ROW_DIRICHLET
         : dirichlet[col] ? COLUMN_DIRICHLET
                          : clmg_csr_find_entry(a, row, (int32_t)col);
}

/* Per triangle: |Gamma| n for its three vertices, as cell_convection in
 * lib/flow/stokes.c computes them, and the positions of its 18 velocity
 * couplings in the level's matrix. */
static clmg_status cell_tables(const clmg_stokes_hierarchy *h, const clmg_stokes_problem *problem,
                               int l, const uint8_t *dirichlet, double *normals, int32_t *positions,
                               int32_t *newton_positions, assembler_level *lv, clmg_error *error) {
  const clmg_mesh *mesh = &h->meshes[l];
  const clmg_triangle_edges *edges = &h->edges[l];
  const clmg_csr *a = &h->a[l];
  const size_t ne = edges->num_edges;
  for (size_t k = 0; k < mesh->num_cells; k++) {
    double coords[6], area, grad[4][3];
    clmg_status status = clmg_stokes_cell_geometry(mesh, k, coords, &area, grad, error);
    if (status != CLMG_SUCCESS)
      return status;
    const double centre[2] = {(coords[0] + coords[2] + coords[4]) / 3.0,
                              (coords[1] + coords[3] + coords[5]) / 3.0};
    for (size_t c = 0; c < 3; c++) {
      normals[12 * k + 2 * c] = -(coords[2 * c + 1] - centre[1]);
      normals[12 * k + 2 * c + 1] = coords[2 * c] - centre[0];
    }
    clmg_stokes_outflow_normals(problem, edges, k, coords, normals + 12 * k + 6);
    const int32_t *e = edges->cell_edges + 3 * k;
    for (size_t component = 0; component < 2; component++)
      for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
          size_t row = component * ne + (size_t)e[i], col = component * ne + (size_t)e[j];
          int64_t position = coupling_position(a, dirichlet, row, col);
          if (position == -1 && !dirichlet[row])
            return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                  "level %d: the matrix lacks the coupling (%zu, %zu) of triangle "
                                  "%zu: it is not the hierarchy's assembly",
                                  l, row, col, k);
          positions[18 * k + 9 * component + 3 * i + j] = (int32_t)position;
          lv->added += position >= 0;
          lv->moved += position == COLUMN_DIRICHLET;
        }
    for (size_t c = 0; newton_positions && c < 2; c++)
      for (size_t i = 0; i < 3; i++)
        for (size_t d = 0; d < 2; d++)
          for (size_t j = 0; j < 3; j++) {
            size_t row = c * ne + (size_t)e[i], col = d * ne + (size_t)e[j];
            int64_t position = coupling_position(a, dirichlet, row, col);
            if (position == -1 && !dirichlet[row])
              return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                    "level %d: the matrix lacks the Newton coupling (%zu, %zu) of "
                                    "triangle %zu: it is not the hierarchy's assembly with newton",
                                    l, row, col, k);
            newton_positions[36 * k + 18 * c + 6 * i + 3 * d + j] = (int32_t)position;
            lv->added += position >= 0;
            lv->moved += position == COLUMN_DIRICHLET;
          }
  }
  return CLMG_SUCCESS;
}

/* The two halves (fine edges) of every edge of level l, from level l + 1,
 * the one of the smaller number first (clmg_stokes_restrict_velocity's
 * order). */
static clmg_status edge_halves(const clmg_stokes_hierarchy *h, int l, int32_t *halves,
                               clmg_error *error) {
  const size_t ec = h->edges[l].num_edges, vc = h->meshes[l].num_vertices;
  const clmg_triangle_edges *fine = &h->edges[l + 1];
  for (size_t e = 0; e < 2 * ec; e++)
    halves[e] = -1;
  for (size_t f = 0; f < fine->num_edges; f++) {
    size_t a = (size_t)fine->edge_vertices[2 * f], b = (size_t)fine->edge_vertices[2 * f + 1];
    if (!(a < vc && b >= vc))
      continue;
    size_t e = b - vc;
    if (e >= ec || halves[2 * e + 1] >= 0)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "level %d: fine edge %zu is no half of an edge: the levels are not "
                            "refinements",
                            l + 1, f);
    halves[2 * e + (halves[2 * e] >= 0)] = (int32_t)f;
  }
  for (size_t e = 0; e < ec; e++)
    if (halves[2 * e + 1] < 0)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "level %d: edge %zu has no two halves on level %d", l, e, l + 1);
  return CLMG_SUCCESS;
}

/* The finest right-hand side's force part, (f, phi_e)_K = |K|/3 f(m_e) on
 * the free velocity rows as the host assembly integrates it, and the rest
 * (the Dirichlet values' part, which clmg_stokes_assembler_set_boundary_scale
 * scales) on the device. A host failure goes to *status. */
static clmg_status split_force(clmg_stokes_assembler *as, const clmg_stokes_hierarchy *h, int l,
                               const uint8_t *dirichlet, const clmg_stokes_problem *problem,
                               clmg_error *error, clmg_status *status) {
  const clmg_mesh *mesh = &h->meshes[l];
  const clmg_triangle_edges *edges = &h->edges[l];
  const size_t n = h->a[l].rows, ne = edges->num_edges;
  double *part = calloc(n, sizeof *part);
  if (!part) {
    *status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory");
    return CLMG_SUCCESS;
  }
  for (size_t k = 0; k < mesh->num_cells; k++) {
    double coords[6], area, grad[4][3];
    clmg_stokes_cell_geometry(mesh, k, coords, &area, grad, NULL);
    for (size_t i = 0; i < 3; i++) {
      size_t e = (size_t)edges->cell_edges[3 * k + i];
      const double *a = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e];
      const double *b = mesh->coords + 2 * (size_t)edges->edge_vertices[2 * e + 1];
      double x[2] = {0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])}, f[2] = {0.0, 0.0};
      problem->force(x, f, problem->force_data);
      for (size_t d = 0; d < 2; d++)
        if (!dirichlet[d * ne + e])
          part[d * ne + e] += area / 3.0 * f[d];
    }
  }
  clmg_status device =
      clmg_vector_create_from_host(as->context, CLMG_DOUBLE, n, part, &as->force_rhs);
  as->boundary_rhs = NULL;
  if (device == CLMG_SUCCESS)
    device = clmg_vector_create(as->context, CLMG_DOUBLE, n, &as->boundary_rhs);
  if (device == CLMG_SUCCESS)
    device = clmg_waxpby(1.0, as->static_rhs, -1.0, as->force_rhs, as->boundary_rhs);
  free(part);
  return device;
}

/* One level's tables on the device. */
static clmg_status make_level(clmg_stokes_assembler *as, const clmg_stokes_hierarchy *h,
                              const clmg_stokes_problem *problem, int l,
                              const clmg_csr_device *device_a, clmg_error *error) {
  clmg_context *context = as->context;
  assembler_level *lv = &as->levels[l];
  lv->num_edges = h->edges[l].num_edges;
  lv->num_cells = h->meshes[l].num_cells;
  const size_t cells = lv->num_cells ? lv->num_cells : 1, nnz = clmg_csr_nnz(&h->a[l]);
  lv->nnz = nnz;
  if (h->a[l].rows != clmg_stokes_num_unknowns(&h->meshes[l], &h->edges[l]) || !h->a[l].val)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "level %d: the matrix is not the level's Stokes system", l);
  uint8_t *dirichlet = NULL;
  int32_t *order = clmg_alloc_array(cells, sizeof *order);
  int32_t *positions = clmg_alloc_array(18 * cells, sizeof *positions);
  double *normals = clmg_alloc_array(12 * cells, sizeof *normals);
  int32_t *newton_positions =
      problem->newton ? clmg_alloc_array(36 * cells, sizeof(int32_t)) : NULL;
  int32_t *halves =
      l + 1 < h->num_levels ? clmg_alloc_array(2 * lv->num_edges + 1, sizeof *halves) : NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!order || !positions || !normals || (l + 1 < h->num_levels && !halves) ||
      (problem->newton && !newton_positions))
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "no host memory for the tables of %zu triangles", lv->num_cells);
  if (status == CLMG_SUCCESS)
    status = clmg_stokes_dirichlet_mask(&h->meshes[l], &h->edges[l], problem, &dirichlet, error);
  if (status == CLMG_SUCCESS)
    status = clmg_cells_by_colour(h->a[l].rows, lv->num_cells, 7, h->cell_unknowns[l],
                                  &lv->num_colours, &lv->colour_start, order, error);
  if (status == CLMG_SUCCESS)
    status = cell_tables(h, problem, l, dirichlet, normals, positions, newton_positions, lv, error);
  if (status == CLMG_SUCCESS && halves)
    status = edge_halves(h, l, halves, error);
  /* the device tables; their failures are the context's */
  clmg_status device = CLMG_SUCCESS;
  if (status == CLMG_SUCCESS)
    device = clmg_vector_create_from_host(context, CLMG_INT32, cells, order, &lv->order);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS)
    device = clmg_vector_create_from_host(context, CLMG_INT32, 3 * cells, h->edges[l].cell_edges,
                                          &lv->cell_edges);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS)
    device = clmg_vector_create_from_host(context, CLMG_DOUBLE, 12 * cells, normals, &lv->normals);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS)
    device =
        clmg_vector_create_from_host(context, CLMG_INT32, 18 * cells, positions, &lv->positions);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS && newton_positions)
    device = clmg_vector_create_from_host(context, CLMG_INT32, 36 * cells, newton_positions,
                                          &lv->newton_positions);
  if (status == CLMG_SUCCESS && device_a) {
    lv->static_values = device_a[l].val; /* the same values, made on the device */
    lv->borrowed_static = 1;
    if (!lv->static_values || clmg_vector_length(lv->static_values) != (nnz ? nnz : 1) ||
        device_a[l].rows != h->a[l].rows)
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "level %d: the device matrix is not the hierarchy's", l);
  } else if (status == CLMG_SUCCESS && device == CLMG_SUCCESS) {
    device = clmg_vector_create_from_host(context, CLMG_DOUBLE, nnz ? nnz : 1, h->a[l].val,
                                          &lv->static_values);
  }
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS)
    device = clmg_vector_create(context, CLMG_DOUBLE, nnz ? nnz : 1, &lv->values);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS)
    device = clmg_copy(lv->static_values, lv->values);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS && halves)
    device = clmg_vector_create_from_host(context, CLMG_INT32, 2 * lv->num_edges + 1, halves,
                                          &lv->halves);
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS && halves)
    device = clmg_vector_create(context, CLMG_DOUBLE, 2 * lv->num_edges + 1, &lv->wind);
  /* the finest level's right-hand side parts */
  if (status == CLMG_SUCCESS && device == CLMG_SUCCESS && l + 1 == h->num_levels) {
    const size_t n = h->a[l].rows, velocities = 2 * lv->num_edges;
    double *value = clmg_alloc_array(velocities + 1, sizeof *value);
    double *weight = calloc(velocities + 1, sizeof *weight);
    if (!value || !weight) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory");
    } else {
      /* the lumped mass of an edge: |K| / 3 from each of its triangles */
      for (size_t k = 0; k < lv->num_cells; k++) {
        double coords[6], area, grad[4][3];
        clmg_stokes_cell_geometry(&h->meshes[l], k, coords, &area, grad, NULL);
        for (size_t i = 0; i < 3; i++) {
          size_t e = (size_t)h->edges[l].cell_edges[3 * k + i];
          weight[e] += problem->reaction * area / 3.0;
        }
      }
      for (size_t i = 0; i < velocities; i++) {
        if (i >= lv->num_edges)
          weight[i] = weight[i - lv->num_edges];
        value[i] = dirichlet[i] ? h->b[i] : 0.0;
      }
      for (size_t i = 0; i < velocities; i++)
        weight[i] = dirichlet[i] ? 0.0 : weight[i];
      device = clmg_vector_create_from_host(context, CLMG_DOUBLE, velocities + 1, value,
                                            &as->dirichlet_value);
      if (device == CLMG_SUCCESS)
        device = clmg_vector_create_from_host(context, CLMG_DOUBLE, velocities + 1, weight,
                                              &as->previous_weight);
      if (device == CLMG_SUCCESS)
        device = clmg_vector_create_from_host(context, CLMG_DOUBLE, n, h->b, &as->static_rhs);
      if (device == CLMG_SUCCESS)
        device = clmg_vector_create(context, CLMG_DOUBLE, n, &as->rhs);
      if (device == CLMG_SUCCESS)
        device = clmg_copy(as->static_rhs, as->rhs);
      if (device == CLMG_SUCCESS)
        device = clmg_vector_create(context, CLMG_DOUBLE, velocities + 1, &as->scaled_dirichlet);
      as->boundary_rhs = as->static_rhs;
      if (device == CLMG_SUCCESS && problem->force)
        device = split_force(as, h, l, dirichlet, problem, error, &status);
    }
    free(value);
    free(weight);
  }
  free(dirichlet);
  free(order);
  free(positions);
  free(normals);
  free(newton_positions);
  free(halves);
  if (status == CLMG_SUCCESS && device != CLMG_SUCCESS)
    status = clmg_error_set(error, device, "%s", clmg_context_message(context));
  return status;
}

static clmg_status create_assembler(clmg_context *context, const clmg_stokes_hierarchy *h,
                                    const clmg_stokes_problem *problem,
                                    const clmg_csr_device *device_a, clmg_stokes_assembler **out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  clmg_clear_message(context);
  if (!h || h->num_levels < 1 || !h->a || !h->b || !problem)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes assembler: a built hierarchy and its problem are needed");
  if (problem->wind || problem->previous)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes assembler: the problem's wind and previous velocity must be NULL "
                     "(they are given to each update; the hierarchy holds the rest)");
  clmg_stokes_assembler *as = calloc(1, sizeof *as);
  if (as)
    as->levels = calloc((size_t)h->num_levels, sizeof *as->levels);
  if (!as || !as->levels) {
    free(as);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Stokes assembler: no host memory");
  }
  as->context = context;
  as->num_levels = h->num_levels;
  as->viscosity = problem->viscosity;
  as->full_upwind = clmg_stokes_full_upwind(problem);
  as->delta = clmg_stokes_upwind_delta(problem);
  as->newton = as->newton_on = problem->newton != 0;
  as->boundary_scale = 1.0;
  clmg_error error = {{0}};
  clmg_status status = CLMG_SUCCESS;
  for (int l = 0; l < h->num_levels && status == CLMG_SUCCESS; l++)
    status = make_level(as, h, problem, l, device_a, &error);
  if (status != CLMG_SUCCESS) {
    clmg_stokes_assembler_destroy(as);
    return clmg_fail(context, status, "Stokes assembler: %s", error.message);
  }
  const char *options = clmg_real_options(context, CLMG_DOUBLE);
  status = clmg_get_kernel(context, "stokes", options, "stokes_convection", &as->convection);
  if (status == CLMG_SUCCESS)
    status =
        clmg_get_kernel(context, "stokes", options, "stokes_restrict_velocity", &as->restriction);
  if (status == CLMG_SUCCESS)
    status = clmg_get_kernel(context, "stokes", options, "stokes_add_previous", &as->previous);
  if (status != CLMG_SUCCESS) {
    clmg_stokes_assembler_destroy(as);
    return status;
  }
  *out = as;
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_assembler_create(clmg_context *context, const clmg_stokes_hierarchy *h,
                                         const clmg_stokes_problem *problem,
                                         clmg_stokes_assembler **out) {
  return create_assembler(context, h, problem, NULL, out);
}

clmg_status clmg_stokes_assembler_create_from(clmg_context *context, const clmg_stokes_hierarchy *h,
                                              const clmg_stokes_problem *problem,
                                              const clmg_csr_device *device_a,
                                              clmg_stokes_assembler **out) {
  if (context && out && !device_a) {
    *out = NULL;
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "Stokes assembler: no device matrices");
  }
  return create_assembler(context, h, problem, device_a, out);
}

/* The convection of `wind` on level l, colour by colour; b: the finest
 * right-hand side or NULL. */
static clmg_status add_convection(clmg_stokes_assembler *as, int l, const clmg_vector *wind,
                                  clmg_vector *b) {
  assembler_level *lv = &as->levels[l];
  clmg_status status = CLMG_SUCCESS;
  for (int k = 0; k < lv->num_colours && status == CLMG_SUCCESS; k++) {
    uint64_t first = lv->colour_start[k], count = lv->colour_start[k + 1] - first;
    clmg_kernel_args args;
    clmg_args_begin(&args, as->context, as->convection, "stokes_convection");
    clmg_arg_ulong(&args, first);
    clmg_arg_ulong(&args, count);
    clmg_arg_buffer(&args, lv->order->buffer);
    clmg_arg_buffer(&args, lv->cell_edges->buffer);
    clmg_arg_ulong(&args, lv->num_edges);
    clmg_arg_buffer(&args, lv->normals->buffer);
    clmg_arg_buffer(&args, lv->positions->buffer);
    clmg_arg_vector(&args, wind);
    clmg_arg_real(&args, CLMG_DOUBLE, as->viscosity);
    cl_int full = as->full_upwind, with_rhs = b != NULL;
    clmg_arg_raw(&args, sizeof full, &full);
    clmg_arg_real(&args, CLMG_DOUBLE, as->delta);
    clmg_arg_buffer(&args, as->boundary_scale == 1.0 ? as->dirichlet_value->buffer
                                                     : as->scaled_dirichlet->buffer);
    clmg_arg_raw(&args, sizeof with_rhs, &with_rhs);
    cl_int newton = as->newton_on;
    clmg_arg_raw(&args, sizeof newton, &newton);
    /* not read without newton */
    clmg_arg_buffer(&args, newton ? lv->newton_positions->buffer : lv->positions->buffer);
    clmg_arg_vector(&args, lv->values);
    clmg_arg_vector(&args, b ? b : lv->values); /* not written without with_rhs */
    status = clmg_launch_args(&args, count);
  }
  return status;
}

static clmg_status check_velocity(clmg_stokes_assembler *as, const clmg_vector *v,
                                  const char *what) {
  size_t needed = 2 * as->levels[as->num_levels - 1].num_edges;
  if (v && (clmg_vector_context(v) != as->context || clmg_vector_type(v) != CLMG_DOUBLE ||
            clmg_vector_length(v) < needed))
    return clmg_fail(as->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes assembler: the %s must be a double vector of at least %zu entries "
                     "(2 per finest edge) in the assembler's context",
                     what, needed);
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_assembler_update(clmg_stokes_assembler *as, const clmg_vector *wind,
                                         const clmg_vector *previous) {
  if (!as)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(as->context);
  clmg_status status = check_velocity(as, wind, "wind");
  if (status == CLMG_SUCCESS)
    status = check_velocity(as, previous, "previous velocity");
  const int finest = as->num_levels - 1;
  if (status == CLMG_SUCCESS)
    status = clmg_copy(as->static_rhs, as->rhs);
  if (status == CLMG_SUCCESS && as->boundary_scale != 1.0) {
    /* rhs = force part + scale * the rest; the moved terms' values scaled */
    status = as->force_rhs
                 ? clmg_waxpby(as->boundary_scale, as->boundary_rhs, 1.0, as->force_rhs, as->rhs)
                 : clmg_scal(as->boundary_scale, as->rhs);
    if (status == CLMG_SUCCESS)
      status = clmg_copy(as->dirichlet_value, as->scaled_dirichlet);
    if (status == CLMG_SUCCESS)
      status = clmg_scal(as->boundary_scale, as->scaled_dirichlet);
  }
  if (status == CLMG_SUCCESS && previous) {
    clmg_kernel_args args;
    clmg_args_begin(&args, as->context, as->previous, "stokes_add_previous");
    clmg_arg_ulong(&args, 2 * as->levels[finest].num_edges);
    clmg_arg_buffer(&args, as->previous_weight->buffer);
    clmg_arg_vector(&args, previous);
    clmg_arg_vector(&args, as->rhs);
    status = clmg_launch_args(&args, 2 * as->levels[finest].num_edges);
  }
  for (int l = finest; l >= 0 && status == CLMG_SUCCESS; l--) {
    assembler_level *lv = &as->levels[l];
    status = clmg_copy(lv->static_values, lv->values);
    if (status != CLMG_SUCCESS || !wind)
      continue;
    const clmg_vector *level_wind = wind;
    if (l < finest) {
      const clmg_vector *fine = l + 1 == finest ? wind : as->levels[l + 1].wind;
      clmg_kernel_args args;
      clmg_args_begin(&args, as->context, as->restriction, "stokes_restrict_velocity");
      clmg_arg_ulong(&args, lv->num_edges);
      clmg_arg_buffer(&args, lv->halves->buffer);
      clmg_arg_ulong(&args, as->levels[l + 1].num_edges);
      clmg_arg_vector(&args, fine);
      clmg_arg_vector(&args, lv->wind);
      status = clmg_launch_args(&args, lv->num_edges);
      level_wind = lv->wind;
    }
    if (status == CLMG_SUCCESS)
      status = add_convection(as, l, level_wind, l == finest ? as->rhs : NULL);
  }
  return status;
}

clmg_status clmg_stokes_assembler_set_newton(clmg_stokes_assembler *as, int on) {
  if (!as)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(as->context);
  if (on && !as->newton)
    return clmg_fail(as->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes assembler: the Newton term needs a hierarchy built with the "
                     "problem's newton flag (its pattern)");
  as->newton_on = on != 0;
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_assembler_set_boundary_scale(clmg_stokes_assembler *as, double scale) {
  if (!as)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(as->context);
  if (!isfinite(scale))
    return clmg_fail(as->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes assembler: the boundary scale is %g; it must be finite", scale);
  as->boundary_scale = scale;
  return CLMG_SUCCESS;
}

double clmg_stokes_assembler_bytes(const clmg_stokes_assembler *as, int with_wind,
                                   int with_previous) {
  if (!as)
    return 0;
  const int finest = as->num_levels - 1;
  const double word = sizeof(double), index = sizeof(int32_t);
  const assembler_level *top = &as->levels[finest];
  const double n = (double)(2 * top->num_edges + top->num_cells);
  double bytes = 2 * n * word; /* the stored right-hand side copied */
  if (with_previous)           /* weight, previous, b read and written */
    bytes += 2.0 * (double)top->num_edges * 4 * word;
  for (int l = 0; l <= finest; l++) {
    const assembler_level *lv = &as->levels[l];
    const double edges = (double)lv->num_edges, cells = (double)lv->num_cells;
    bytes += 2 * (double)lv->nnz * word; /* the stored values copied */
    if (!with_wind)
      continue;
    /* per triangle: order, edges, positions, normals; the wind once per
     * edge; each added term read and written; each moved one a b entry
     * read and written and a Dirichlet value read */
    bytes += cells * (index * (1 + 3 + 18) + 6 * word) + 2 * edges * word;
    bytes += 2 * (double)lv->added * word;
    if (l == finest)
      bytes += 3 * (double)lv->moved * word;
    if (l < finest) /* the restriction: halves, the fine wind, the coarse written */
      bytes +=
          edges * 2 * index + 2 * (double)as->levels[l + 1].num_edges * word + 2 * edges * word;
  }
  return bytes;
}

const clmg_vector *clmg_stokes_assembler_values(const clmg_stokes_assembler *as, int level) {
  return as && level >= 0 && level < as->num_levels ? as->levels[level].values : NULL;
}

const clmg_vector *clmg_stokes_assembler_rhs(const clmg_stokes_assembler *as) {
  return as ? as->rhs : NULL;
}
