/* The Crouzeix-Raviart Stokes hierarchy and its multigrid (Bauer, Klement,
 * Oberhuber and Zabka, section 3): uniformly refined triangle meshes, the
 * system rediscretised on every level, the P1nc/P0 prolongations between
 * them, and the engine with a Vanka smoother on every level and the dense
 * direct solve on the coarsest.
 *
 * Cycles (the manufactured flow of tests/test_flow.c from a 2 x 2 box,
 * rates per cycle on 3, 4, 5, ... levels, 2 + 2 Vanka steps): the
 * two-grid method (an exact solve one level down) holds its rate (0.20,
 * 0.21, 0.21), and so do F-cycles (0.20, 0.21, 0.23) and the variable
 * V-cycle of smoothing_growth 2 (0.20, 0.23, 0.24, 0.27, 0.27 on 3 to 7
 * levels; on the DFG channel 0.18, 0.25, 0.23, 0.23 on 2 to 5), whose
 * smoothing on triangles costs at most twice a V-cycle's. Plain V-cycles
 * lose speed (0.21, 0.41, 0.63), with 8 + 8 steps as well (0.03, 0.09,
 * 0.18, 0.26 on 3 to 6 levels): the coarse problems are not nested in the
 * fine ones (nonconforming elements, rediscretised), and the error an
 * inexact inner cycle leaves is carried up through every level, which
 * more smoothing does not remove (Brenner's analysis of nonconforming
 * multigrid leads one to expect it). The prolongation keeps each child's
 * divergence (clmg_stokes_prolongation_host); with the averaging alone the
 * rates were 0.36, 0.66, 0.98 (V) and 0.21, 0.29, 0.29 (F). Tried and
 * dropped: scaling the coarse correction by the defect-minimising step
 * (it chose 0.1-0.3 and slowed every cycle), Galerkin coarse matrices
 * (wider stencils the 7-unknown Vanka blocks do not cover), damped or
 * reversed-colour Vanka. The default is therefore the F(2,2)-cycle.
 *
 * A flow enclosed by Dirichlet walls fixes its pressure only up to a
 * constant: the coarsest matrix is then singular, and the direct solve
 * would refuse it. The engine gets, on the coarsest level only, the matrix
 * with a small multiple of the pressure Schur complement's diagonal
 * (sum_e B_Ke^2 / A_ee, times 1e-8) added to the pressure diagonal: it
 * picks one of the coarse corrections (the one of small mean pressure)
 * where any would do, and changes nothing where the pressure is fixed by
 * a natural boundary, beyond a relative 1e-8 in the coarse correction. */
#include "fe/fe_internal.h"
#include "flow/stokes_internal.h"

#include "clmg/stokes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COARSE_PRESSURE_SHIFT 1e-8

void clmg_stokes_restrict_velocity(const clmg_mesh *coarse, const clmg_triangle_edges *coarse_edges,
                                   const clmg_triangle_edges *fine_edges, const double *fine,
                                   double *out) {
  size_t ec = coarse_edges->num_edges, ef = fine_edges->num_edges;
  size_t vc = coarse->num_vertices;
  for (size_t k = 0; k < 2 * ec; k++)
    out[k] = 0;
  for (size_t f = 0; f < ef; f++) {
    size_t a = (size_t)fine_edges->edge_vertices[2 * f];
    size_t b = (size_t)fine_edges->edge_vertices[2 * f + 1];
    if (!(a < vc && b >= vc))
      continue; /* not half of a coarse edge (the smaller vertex comes first) */
    size_t e = b - vc;
    out[e] += 0.5 * fine[f];
    out[ec + e] += 0.5 * fine[ef + f];
  }
}

void clmg_stokes_hierarchy_free(clmg_stokes_hierarchy *h) {
  if (!h)
    return;
  for (int l = 0; l < h->num_levels; l++) {
    if (h->meshes)
      clmg_mesh_free(&h->meshes[l]);
    if (h->edges)
      clmg_triangle_edges_free(&h->edges[l]);
    if (h->a)
      clmg_csr_free(&h->a[l]);
    if (h->p)
      clmg_csr_free(&h->p[l]);
    if (h->cell_unknowns)
      free(h->cell_unknowns[l]);
  }
  free(h->meshes);
  free(h->edges);
  free(h->a);
  free(h->p);
  free(h->cell_unknowns);
  free(h->b);
  memset(h, 0, sizeof *h);
}

/* Level l's matrix made on the device (kept in *device) and its host copy
 * in *a; b (NULL: not wanted) from the host's element loop. */
static clmg_status device_level(clmg_context *context, const clmg_mesh *mesh,
                                const clmg_triangle_edges *edges,
                                const clmg_stokes_problem *problem, clmg_csr_device *device,
                                clmg_csr *a, double *b, clmg_error *error) {
  clmg_status status = clmg_stokes_system_device(context, mesh, edges, problem, device);
  if (status != CLMG_SUCCESS)
    return clmg_error_set(error, status, "%s", clmg_context_message(context));
  status = clmg_csr_device_download(device, a, error);
  if (status == CLMG_SUCCESS && b)
    status = clmg_stokes_rhs_host(mesh, edges, problem, b, error);
  return status;
}

/* clmg_stokes_hierarchy_build; with a context, the matrices of a problem
 * without wind made on the device (device_a[l], the caller's), the host
 * copies downloaded and only the finest right-hand side assembled. */
static clmg_status build_hierarchy(clmg_context *context, const clmg_mesh *coarse, int num_levels,
                                   const clmg_stokes_problem *problem, clmg_stokes_hierarchy *out,
                                   clmg_csr_device *device_a, clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!coarse || num_levels < 1 || num_levels > 16)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Stokes hierarchy: a coarse mesh and 1 to 16 levels are needed (got %d)",
                          num_levels);
  size_t levels = (size_t)num_levels;
  clmg_stokes_hierarchy h = {.num_levels = num_levels,
                             .meshes = calloc(levels, sizeof(clmg_mesh)),
                             .edges = calloc(levels, sizeof(clmg_triangle_edges)),
                             .a = calloc(levels, sizeof(clmg_csr)),
                             .p = calloc(levels, sizeof(clmg_csr)),
                             .cell_unknowns = calloc(levels, sizeof(int32_t *))};
  if (!h.meshes || !h.edges || !h.a || !h.p || !h.cell_unknowns) {
    clmg_stokes_hierarchy_free(&h);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Stokes hierarchy: no memory");
  }
  clmg_stokes_problem level_problem;
  if (problem)
    level_problem = *problem;
  else
    clmg_stokes_problem_defaults(&level_problem);
  /* the meshes, edges, cell unknowns and transfers first: the winds of the
   * coarse levels are the finest one restricted */
  clmg_status status = clmg_mesh_copy(coarse, &h.meshes[0], error);
  for (int l = 0; status == CLMG_SUCCESS && l < num_levels; l++) {
    if (l > 0)
      status = clmg_mesh_refine(&h.meshes[l - 1], &h.meshes[l], error);
    if (status == CLMG_SUCCESS)
      status = clmg_triangle_edges_create(&h.meshes[l], &h.edges[l], error);
    if (status == CLMG_SUCCESS)
      status = clmg_stokes_cell_unknowns(&h.meshes[l], &h.edges[l], &h.cell_unknowns[l], error);
    if (status == CLMG_SUCCESS && l > 0)
      status = clmg_stokes_prolongation_host(&h.meshes[l - 1], &h.edges[l - 1], &h.meshes[l],
                                             &h.edges[l], &level_problem, &h.p[l], error);
  }
  double **winds = calloc(levels, sizeof *winds);
  if (status == CLMG_SUCCESS && !winds)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Stokes hierarchy: no memory");
  if (status == CLMG_SUCCESS && level_problem.wind) {
    winds[num_levels - 1] = (double *)level_problem.wind; /* read only */
    for (int l = num_levels - 2; status == CLMG_SUCCESS && l >= 0; l--) {
      winds[l] = clmg_alloc_array(2 * h.edges[l].num_edges + 1, sizeof(double));
      if (!winds[l])
        status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                "Stokes hierarchy: no memory for level %d's wind", l);
      else
        clmg_stokes_restrict_velocity(&h.meshes[l], &h.edges[l], &h.edges[l + 1], winds[l + 1],
                                      winds[l]);
    }
  }
  /* the previous velocity belongs to the finest level only */
  const double *previous = level_problem.previous;
  for (int l = 0; status == CLMG_SUCCESS && l < num_levels; l++) {
    size_t n = clmg_stokes_num_unknowns(&h.meshes[l], &h.edges[l]);
    double *b = clmg_alloc_array(n ? n : 1, sizeof *b);
    if (!b) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "Stokes hierarchy: no memory for level %d's %zu unknowns", l, n);
      break;
    }
    level_problem.previous = l == num_levels - 1 ? previous : NULL;
    level_problem.wind = winds[l];
    if (context && device_a && !winds[l])
      status = device_level(context, &h.meshes[l], &h.edges[l], &level_problem, &device_a[l],
                            &h.a[l], l == num_levels - 1 ? b : NULL, error);
    else
      status =
          clmg_stokes_assemble_host(&h.meshes[l], &h.edges[l], &level_problem, &h.a[l], b, error);
    if (status == CLMG_SUCCESS && l == num_levels - 1) {
      h.b = b;
      b = NULL;
    }
    free(b);
  }
  for (int l = 0; winds && l < num_levels - 1; l++)
    free(winds[l]);
  free(winds);
  if (status != CLMG_SUCCESS) {
    clmg_stokes_hierarchy_free(&h);
    for (int l = 0; device_a && l < num_levels; l++)
      clmg_csr_device_free(&device_a[l]);
    return status;
  }
  *out = h;
  return CLMG_SUCCESS;
}

clmg_status clmg_stokes_hierarchy_build(const clmg_mesh *coarse, int num_levels,
                                        const clmg_stokes_problem *problem,
                                        clmg_stokes_hierarchy *out, clmg_error *error) {
  return build_hierarchy(NULL, coarse, num_levels, problem, out, NULL, error);
}

clmg_status clmg_stokes_hierarchy_build_device(clmg_context *context, const clmg_mesh *coarse,
                                               int num_levels, const clmg_stokes_problem *problem,
                                               clmg_stokes_hierarchy *out,
                                               clmg_csr_device *device_a, clmg_error *error) {
  for (int l = 0; device_a && l < num_levels && l < 16; l++)
    device_a[l] = (clmg_csr_device){0};
  if (!context || !device_a) {
    clmg_error_clear(error);
    if (out)
      memset(out, 0, sizeof *out);
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Stokes hierarchy on the device: a context and the device arrays are "
                          "needed");
  }
  return build_hierarchy(context, coarse, num_levels, problem, out, device_a, error);
}

/* ---- the engine ---- */

typedef struct vanka_levels {
  const clmg_stokes_hierarchy *hierarchy;
  const clmg_stokes_assembler *assembler; /* NULL: the hierarchy's host values */
  clmg_vanka_options options;
} vanka_levels;

/* The Vanka smoother of hierarchy level l, on the assembler's device
 * values when there is one. */
static clmg_status level_vanka(clmg_context *context, const vanka_levels *v, int l,
                               clmg_smoother *smoother) {
  const clmg_stokes_hierarchy *h = v->hierarchy;
  const clmg_vector *values = v->assembler ? clmg_stokes_assembler_values(v->assembler, l) : NULL;
  return clmg_smoother_vanka_device(context, &h->a[l], values, h->meshes[l].num_cells, 7,
                                    h->cell_unknowns[l], &v->options, smoother);
}

/* The engine's level is found by its size: levels under coarse_max_rows
 * may have been dropped, which shifts the engine's numbers. */
static clmg_status vanka_factory(void *data, clmg_context *context, int level,
                                 const clmg_operator *a, clmg_smoother *smoother) {
  (void)level;
  const vanka_levels *v = data;
  const clmg_stokes_hierarchy *h = v->hierarchy;
  for (int l = 0; l < h->num_levels; l++)
    if (h->a[l].rows == a->rows)
      return level_vanka(context, v, l, smoother);
  memset(smoother, 0, sizeof *smoother);
  return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                   "Stokes multigrid: no level of the hierarchy has %zu unknowns", a->rows);
}

/* a with COARSE_PRESSURE_SHIFT times the estimate sum_e B_Ke^2 / |A_ee| of
 * the Schur complement's diagonal added on the pressure rows (a pressure
 * row stores no diagonal entry: it is put in, in column order); the
 * pressures start at first_pressure. */
static clmg_status shifted_coarse(const clmg_csr *a, size_t first_pressure, clmg_csr *out,
                                  clmg_error *error) {
  size_t n = a->rows, nnz = clmg_csr_nnz(a);
  clmg_csr s = {n, n, clmg_alloc_array(n + 1, sizeof(int64_t)),
                clmg_alloc_array(nnz + n + 1, sizeof(int32_t)),
                clmg_alloc_array(nnz + n + 1, sizeof(double))};
  double *diagonal = clmg_alloc_array(n ? n : 1, sizeof *diagonal);
  if (!s.row_ptr || !s.col || !s.val || !diagonal) {
    clmg_csr_free(&s);
    free(diagonal);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "Stokes multigrid: no memory for the coarse matrix");
  }
  clmg_csr_diagonal(a, diagonal, NULL);
  int64_t k = 0;
  s.row_ptr[0] = 0;
  for (size_t i = 0; i < n; i++) {
    double shift = 0;
    for (int64_t e = a->row_ptr[i]; i >= first_pressure && e < a->row_ptr[i + 1]; e++) {
      size_t j = (size_t)a->col[e];
      if (j < first_pressure && diagonal[j] != 0)
        shift += COARSE_PRESSURE_SHIFT * a->val[e] * a->val[e] / fabs(diagonal[j]);
    }
    /* a pressure row always gets its diagonal entry, 0 or not, so the
     * pattern stays that of the first setup for value updates */
    int placed = i < first_pressure;
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; e++) {
      if (!placed && (size_t)a->col[e] > i) {
        s.col[k] = (int32_t)i;
        s.val[k++] = shift;
        placed = 1;
      }
      s.col[k] = a->col[e];
      s.val[k] = a->val[e];
      if (!placed && (size_t)a->col[e] == i) {
        s.val[k] += shift;
        placed = 1;
      }
      k++;
    }
    if (!placed) {
      s.col[k] = (int32_t)i;
      s.val[k++] = shift;
    }
    s.row_ptr[i + 1] = k;
  }
  free(diagonal);
  *out = s;
  return CLMG_SUCCESS;
}

/* The coarse solve on a coarse mesh too large for the dense inverse (its
 * setup, per Oseen step, grows with the cube of the unknowns: 0.75 s on the
 * DFG mesh's 1,470 where a cycle takes milliseconds): Vanka steps from
 * zero, a fixed number, on the coarsest level (clmg_coarse_solver_smoother). */
enum { COARSE_DIRECT_MAX = 1000, COARSE_VANKA_STEPS = 16 };

static clmg_status vanka_coarse_solver(clmg_context *context, const vanka_levels *v, int level,
                                       clmg_coarse_solver *solver) {
  clmg_smoother smoother;
  clmg_status status = level_vanka(context, v, level, &smoother);
  if (status != CLMG_SUCCESS)
    return status; /* its message is the context's */
  status = clmg_coarse_solver_smoother(&smoother, COARSE_VANKA_STEPS, solver);
  if (status != CLMG_SUCCESS) {
    clmg_smoother_destroy(&smoother);
    return clmg_fail(context, status, "Stokes multigrid: no memory for the coarse solve");
  }
  return CLMG_SUCCESS;
}

static clmg_status create_multigrid(clmg_context *context, const clmg_stokes_hierarchy *h,
                                    const clmg_stokes_assembler *assembler,
                                    const clmg_csr_device *given_a, const clmg_vanka_options *vanka,
                                    const clmg_multigrid_options *mg_options,
                                    clmg_multigrid **multigrid) {
  if (!context || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  if (!h || h->num_levels < 1 || !h->a)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes multigrid: the hierarchy is empty");
  clmg_multigrid_options options;
  if (mg_options) {
    options = *mg_options;
  } else {
    clmg_multigrid_options_defaults(&options);
    options.cycle = CLMG_CYCLE_F;
    options.pre_smoothing = options.post_smoothing = 2;
  }
  vanka_levels levels = {.hierarchy = h, .assembler = assembler};
  if (vanka)
    levels.options = *vanka;
  else
    clmg_vanka_options_defaults(&levels.options);
  options.smoother_factory = vanka_factory;
  options.smoother_factory_data = &levels;
  /* the engine's levels: the coarsest one shifted (see the top) */
  clmg_csr *a = calloc((size_t)h->num_levels, sizeof *a);
  if (!a)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Stokes multigrid: no memory");
  int coarsest = 0;
  for (int l = 0; options.coarse_max_rows > 0 && l < h->num_levels; l++)
    if (h->a[l].rows <= options.coarse_max_rows)
      coarsest = l;
  clmg_status status = CLMG_SUCCESS;
  if (!options.coarse_solver.solve && options.coarse == CLMG_COARSE_AUTO &&
      h->a[coarsest].rows > COARSE_DIRECT_MAX) {
    status = vanka_coarse_solver(context, &levels, coarsest, &options.coarse_solver);
    if (status != CLMG_SUCCESS) {
      free(a);
      return status;
    }
  }
  clmg_error error = {{0}};
  status = shifted_coarse(&h->a[coarsest], 2 * h->edges[coarsest].num_edges, &a[coarsest], &error);
  if (status != CLMG_SUCCESS) {
    free(a);
    clmg_coarse_solver_destroy(&options.coarse_solver);
    return clmg_fail(context, status, "%s", error.message);
  }
  for (int l = 0; l < h->num_levels; l++)
    if (l != coarsest)
      a[l] = h->a[l]; /* borrowed */
  /* from device arrays: the engine's matrices then take new values
   * (clmg_stokes_multigrid_update) */
  clmg_dtype precision = options.matrix.precision == CLMG_FLOAT ? CLMG_FLOAT : CLMG_DOUBLE;
  clmg_csr_device *device_a = calloc((size_t)h->num_levels, sizeof *device_a);
  clmg_csr_device *device_p = calloc((size_t)h->num_levels, sizeof *device_p);
  /* R = P^T: on a CPU device the host's counting transpose of its copy of
   * P (one pass, rows sorted) costs less than the device's count, scatter
   * and row sorts, which there run on the same cores (dfg2 level 5 on
   * pocl: 0.24 s); the same arrays either way */
  const clmg_device_info *device = clmg_context_device(context);
  const int host_transpose = device && device->is_cpu && !device->is_gpu;
  clmg_csr_device *device_r =
      host_transpose ? calloc((size_t)h->num_levels, sizeof *device_r) : NULL;
  if (!device_a || !device_p || (host_transpose && !device_r))
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Stokes multigrid: no memory");
  /* the matrices made on the device, borrowed (not the coarsest: shifted) */
  const int borrow = given_a && precision == CLMG_DOUBLE;
  for (int l = 0; status == CLMG_SUCCESS && l < h->num_levels; l++) {
    if (borrow && l != coarsest)
      device_a[l] = given_a[l];
    else
      status = clmg_csr_device_upload(context, &a[l], precision, &device_a[l]);
    if (status == CLMG_SUCCESS && l > 0)
      status = clmg_csr_device_upload(context, &h->p[l], precision, &device_p[l]);
    if (status == CLMG_SUCCESS && l > 0 && device_r) {
      clmg_csr r = {0};
      status = clmg_csr_transpose(&h->p[l], &r, &error);
      if (status != CLMG_SUCCESS)
        status = clmg_fail(context, status, "Stokes multigrid: R = P^T: %s", error.message);
      else
        status = clmg_csr_device_upload(context, &r, precision, &device_r[l]);
      clmg_csr_free(&r);
    }
  }
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_create_from_csr_device(context, h->num_levels, device_a, device_p,
                                                   device_r, &options, multigrid);
  else
    clmg_coarse_solver_destroy(&options.coarse_solver);
  for (int l = 0; l < h->num_levels; l++) {
    if (device_a && !(borrow && l != coarsest))
      clmg_csr_device_free(&device_a[l]);
    if (device_p)
      clmg_csr_device_free(&device_p[l]);
    if (device_r)
      clmg_csr_device_free(&device_r[l]);
  }
  free(device_a);
  free(device_p);
  free(device_r);
  clmg_csr_free(&a[coarsest]);
  free(a);
  return status;
}

clmg_status clmg_stokes_multigrid_create(clmg_context *context, const clmg_stokes_hierarchy *h,
                                         const clmg_vanka_options *vanka,
                                         const clmg_multigrid_options *mg_options,
                                         clmg_multigrid **multigrid) {
  return create_multigrid(context, h, NULL, NULL, vanka, mg_options, multigrid);
}

clmg_status clmg_stokes_multigrid_create_device(clmg_context *context,
                                                const clmg_stokes_hierarchy *h,
                                                const clmg_stokes_assembler *assembler,
                                                const clmg_vanka_options *vanka,
                                                const clmg_multigrid_options *mg_options,
                                                clmg_multigrid **multigrid) {
  if (context && multigrid && !assembler) {
    *multigrid = NULL;
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "Stokes multigrid: no assembler");
  }
  return create_multigrid(context, h, assembler, NULL, vanka, mg_options, multigrid);
}

clmg_status clmg_stokes_multigrid_create_from(clmg_context *context, const clmg_stokes_hierarchy *h,
                                              const clmg_stokes_assembler *assembler,
                                              const clmg_csr_device *device_a,
                                              const clmg_vanka_options *vanka,
                                              const clmg_multigrid_options *mg_options,
                                              clmg_multigrid **multigrid) {
  if (context && multigrid && (!assembler || !device_a)) {
    *multigrid = NULL;
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes multigrid: no assembler or device matrices");
  }
  return create_multigrid(context, h, assembler, device_a, vanka, mg_options, multigrid);
}

/* The coarsest engine level's new values: level `level`'s values (host, in
 * its CSR order), shifted (see the top). */
static clmg_status update_coarsest(clmg_multigrid *mg, const clmg_stokes_hierarchy *h, int level,
                                   const double *values) {
  clmg_context *context = clmg_multigrid_operator(mg, 0)->context;
  clmg_csr a = h->a[level];
  a.val = (double *)values; /* the pattern borrowed, not freed */
  clmg_csr shifted = {0};
  clmg_error error = {{0}};
  clmg_status status = shifted_coarse(&a, 2 * h->edges[level].num_edges, &shifted, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "%s", error.message);
  status = clmg_multigrid_update_values(mg, 0, shifted.val);
  clmg_csr_free(&shifted);
  return status;
}

/* Every engine level's new values, from the hierarchy's host matrices or,
 * with an assembler, its device values; then the refresh. */
static clmg_status update_levels(clmg_multigrid *mg, const clmg_stokes_hierarchy *h,
                                 const clmg_stokes_assembler *assembler) {
  if (!mg || !h || h->num_levels < 1)
    return CLMG_ERROR_INVALID_ARGUMENT;
  const clmg_operator *finest = clmg_multigrid_operator(mg, clmg_multigrid_levels(mg) - 1);
  clmg_context *context = finest->context;
  clmg_status status = CLMG_SUCCESS;
  for (int l = 0; status == CLMG_SUCCESS && l < clmg_multigrid_levels(mg); l++) {
    size_t rows = clmg_multigrid_operator(mg, l)->rows;
    int level = -1;
    for (int k = 0; k < h->num_levels && level < 0; k++)
      if (h->a[k].rows == rows)
        level = k;
    if (level < 0)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "Stokes multigrid update: no level of the hierarchy has %zu unknowns", rows);
    const clmg_vector *values = assembler ? clmg_stokes_assembler_values(assembler, level) : NULL;
    if (l > 0) {
      status = values ? clmg_multigrid_update_values_device(mg, l, values)
                      : clmg_multigrid_update_values(mg, l, h->a[level].val);
      continue;
    }
    if (!values) {
      status = update_coarsest(mg, h, level, h->a[level].val);
      continue;
    }
    double *host = clmg_alloc_array(clmg_csr_nnz(&h->a[level]) + 1, sizeof *host);
    if (!host)
      return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Stokes multigrid: no memory");
    status = clmg_vector_download_doubles(values, host);
    if (status == CLMG_SUCCESS)
      status = update_coarsest(mg, h, level, host);
    free(host);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_refresh(mg);
  return status;
}

clmg_status clmg_stokes_multigrid_update(clmg_multigrid *mg, const clmg_stokes_hierarchy *h) {
  return update_levels(mg, h, NULL);
}

clmg_status clmg_stokes_multigrid_update_device(clmg_multigrid *mg, const clmg_stokes_hierarchy *h,
                                                const clmg_stokes_assembler *assembler) {
  if (mg && !assembler)
    return clmg_fail(clmg_multigrid_operator(mg, 0)->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes multigrid update: no assembler");
  return update_levels(mg, h, assembler);
}
