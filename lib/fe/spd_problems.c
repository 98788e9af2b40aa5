/* The SPD test problems of include/clmg/spd_problems.h: options, names, the
 * checks of the options, and the q2-jump problem; elasticity is in
 * spd_elasticity.c, SIPG in spd_dg.c.
 *
 * q2-jump is the Poisson problem with a piecewise constant coefficient,
 * -div(k grad u) = f, k = jump on a 2 x 2 x 2 checkerboard of octants of
 * the cube and 1 elsewhere: the classic hard case of multigrid for
 * discontinuous coefficients (Alcouffe, Brandt, Dendy, Painter, SIAM J.
 * Sci. Stat. Comput. 2, 1981; in 3D with cross points where the
 * checkerboard's edges meet), here with Q2 elements on a distorted
 * hexahedral mesh. It is the library's own Q2 assembly
 * (clmg_fe_assemble_diffusion in assembly.c, what clmg_fe_assemble_poisson
 * runs with k = 1) with the coefficient given per cell. */
#include "fe/spd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const problem_names[CLMG_SPD_NUM_PROBLEMS] = {"elasticity-p1", "elasticity-p2",
                                                                 "dg-diffusion", "q2-jump"};

/* The largest level (cells per side) of each kind: far beyond what fits in
 * memory, but below the mesh generators' and the 32-bit indices' limits. */
static const int max_level[CLMG_SPD_NUM_PROBLEMS] = {160, 160, 4096, 160};

void clmg_spd_problem_options_defaults(clmg_spd_problem_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->kind = CLMG_SPD_ELASTICITY_P1;
  options->level = 8;
  options->poisson_ratio = 0.3;
  options->jump = 1e4;
  options->distortion = 0.1;
  options->seed = 1;
  options->boundary = CLMG_SPD_BOUNDARY_DEFAULT;
}

const char *clmg_spd_problem_name(clmg_spd_problem_kind kind) {
  return (int)kind >= 0 && (int)kind < CLMG_SPD_NUM_PROBLEMS ? problem_names[kind] : NULL;
}

int clmg_spd_problem_parse(const char *name, clmg_spd_problem_kind *kind) {
  if (!name)
    return 0;
  for (int k = 0; k < CLMG_SPD_NUM_PROBLEMS; k++)
    if (strcmp(name, problem_names[k]) == 0) {
      if (kind)
        *kind = (clmg_spd_problem_kind)k;
      return 1;
    }
  return 0;
}

void clmg_spd_problem_free(clmg_spd_problem *problem) {
  if (!problem)
    return;
  clmg_csr_free(&problem->a);
  free(problem->b);
  free(problem->coordinates);
  free(problem->is_dirichlet);
  memset(problem, 0, sizeof *problem);
}

static clmg_status check_options(const clmg_spd_problem_options *o, clmg_error *error) {
  if ((int)o->kind < 0 || (int)o->kind >= CLMG_SPD_NUM_PROBLEMS)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "unknown SPD problem kind %d (0 to %d: elasticity-p1, elasticity-p2, "
                          "dg-diffusion, q2-jump)",
                          (int)o->kind, CLMG_SPD_NUM_PROBLEMS - 1);
  const char *name = problem_names[o->kind];
  if (o->level < 1 || o->level > max_level[o->kind])
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "level %d is outside [1, %d] for %s (the level is the number of "
                          "cells per side of the box)",
                          o->level, max_level[o->kind], name);
  if (!(o->poisson_ratio >= 0.0 && o->poisson_ratio < 0.5))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Poisson ratio %g is outside [0, 0.5) (0.5 is incompressible)",
                          o->poisson_ratio);
  if (!(o->jump > 0.0 && isfinite(o->jump)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "coefficient jump %g is not positive and finite", o->jump);
  if (!(o->distortion >= 0.0 && o->distortion < 0.3))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "distortion %g is outside [0, 0.3) (cell widths)", o->distortion);
  if ((int)o->boundary < 0 || (int)o->boundary > (int)CLMG_SPD_BOUNDARY_NONE)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "unknown boundary %d (0: the problem's own, 1: all, 2: none)",
                          (int)o->boundary);
  if (o->boundary == CLMG_SPD_BOUNDARY_NONE && o->kind != CLMG_SPD_ELASTICITY_P1 &&
      o->kind != CLMG_SPD_ELASTICITY_P2)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s needs a boundary condition (CLMG_SPD_BOUNDARY_NONE is for "
                          "elasticity only, whose null space is the rigid-body modes)",
                          name);
  return CLMG_SUCCESS;
}

/* ---- q2-jump ---- */

/* The coefficient of a cell whose centroid is c: jump in the octants where
 * floor(2x) + floor(2y) + floor(2z) is odd. */
static double checkerboard(const double *c, double jump) {
  int parity = 0;
  for (int d = 0; d < 3; d++)
    parity += c[d] >= 0.5;
  return parity % 2 ? jump : 1.0;
}

static double source_adapter(const double *x, void *data) {
  const clmg_spd_problem_options *o = data;
  double value = 0.0;
  o->source(x, &value, o->data);
  return value;
}

static double boundary_adapter(const double *x, int32_t tag, void *data) {
  (void)tag;
  const clmg_spd_problem_options *o = data;
  double value = 0.0;
  o->boundary_value(x, &value, o->data);
  return value;
}

static clmg_status q2_jump(const clmg_spd_problem_options *o, clmg_spd_problem *out,
                           clmg_error *error) {
  clmg_mesh mesh = {0};
  clmg_fe_space space = {0};
  double *coefficient = NULL;
  clmg_status status = clmg_mesh_box(3, o->level, o->distortion, o->seed, &mesh, error);
  if (status != CLMG_SUCCESS)
    goto done;
  status = clmg_fe_space_create_checked_input(&mesh, 2, &space, error);
  if (status != CLMG_SUCCESS)
    goto done;
  size_t rows = space.num_dofs;
  coefficient = clmg_alloc_array(mesh.num_cells, sizeof *coefficient);
  out->b = clmg_alloc_zeroed_array(rows, sizeof *out->b);
  out->is_dirichlet = clmg_alloc_zeroed_array(rows, 1);
  if (!coefficient || !out->b || !out->is_dirichlet) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the right-hand side of %zu rows", rows);
    goto done;
  }
  for (size_t cell = 0; cell < mesh.num_cells; cell++) {
    double centroid[3] = {0.0, 0.0, 0.0};
    for (size_t v = 0; v < 8; v++)
      for (size_t d = 0; d < 3; d++)
        centroid[d] += 0.125 * mesh.coords[3 * (size_t)mesh.cells[8 * cell + v] + d];
    coefficient[cell] = checkerboard(centroid, o->jump);
  }
  /* whole boundary (no tags), f = 1 and g = 0 unless given */
  clmg_poisson_problem problem = {0};
  problem.source_constant = 1.0;
  if (o->source) {
    problem.source = source_adapter;
    problem.source_data = (void *)o;
  }
  if (o->boundary_value) {
    problem.dirichlet = boundary_adapter;
    problem.dirichlet_data = (void *)o;
  }
  status = clmg_fe_assemble_diffusion(&space, &problem, coefficient, &out->a, out->b,
                                      out->is_dirichlet, error);
  if (status != CLMG_SUCCESS)
    goto done;
  out->dim = 3;
  out->block_size = 1;
  out->num_nodes = rows;
  out->coordinates = space.dof_coords;
  space.dof_coords = NULL;

done:
  clmg_fe_space_free(&space);
  clmg_mesh_free(&mesh);
  free(coefficient);
  return status;
}

/* ---- public ---- */

clmg_status clmg_spd_problem_create(const clmg_spd_problem_options *options, clmg_spd_problem *out,
                                    clmg_error *error) {
  clmg_error_clear(error);
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  clmg_spd_problem_options defaults;
  if (!options) {
    clmg_spd_problem_options_defaults(&defaults);
    options = &defaults;
  }
  clmg_status status = check_options(options, error);
  if (status != CLMG_SUCCESS)
    return status;
  out->kind = options->kind;
  switch (options->kind) {
  case CLMG_SPD_ELASTICITY_P1:
    status = clmg_spd_elasticity(options, 1, out, error);
    break;
  case CLMG_SPD_ELASTICITY_P2:
    status = clmg_spd_elasticity(options, 2, out, error);
    break;
  case CLMG_SPD_DG_DIFFUSION:
    status = clmg_spd_dg_diffusion(options, out, error);
    break;
  default:
    status = q2_jump(options, out, error);
    break;
  }
  if (status != CLMG_SUCCESS)
    clmg_spd_problem_free(out);
  return status;
}
