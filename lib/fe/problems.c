/* The Poisson benchmark problems of Geveler et al. 2011 (section 4.2), for its meshes
 * (clmg_mesh_circle, clmg_mesh_blood): one definition for the app, the
 * benchmark and the tests. */
#include "mesh/mesh_internal.h"

#include <string.h>

/* CIRCLE: u = 1 on the circle (tag 2), 0 on the square (tag 1). */
static double circle_boundary(const double *x, int32_t tag, void *data) {
  (void)x;
  (void)data;
  return tag == 2 ? 1.0 : 0.0;
}

static double boundary_one(const double *x, int32_t tag, void *data) {
  (void)x;
  (void)tag;
  (void)data;
  return 1.0;
}

void clmg_poisson_problem_circle(clmg_poisson_problem *problem) {
  if (!problem)
    return;
  memset(problem, 0, sizeof *problem);
  problem->source_constant = 1.0;
  problem->dirichlet = circle_boundary;
}

void clmg_poisson_problem_blood(clmg_poisson_problem *problem) {
  if (!problem)
    return;
  memset(problem, 0, sizeof *problem);
  problem->dirichlet = boundary_one;
}

void clmg_poisson_problem_unit_source(clmg_poisson_problem *problem) {
  if (!problem)
    return;
  memset(problem, 0, sizeof *problem);
  problem->source_constant = 1.0;
}
