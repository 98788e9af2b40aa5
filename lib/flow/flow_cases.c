/* The flow benchmark cases (include/clmg/flow.h): their scales, boundary
 * conditions and quantities of interest, in one place for `clmg flow`,
 * Python's clmg.flow and the tests. */
#include "mesh/mesh_internal.h"

#include "clmg/flow.h"
#include "clmg/navier_stokes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The DFG benchmarks (Schaefer and Turek 1996): the cylinder's diameter */
#define DFG_DIAMETER 0.1
/* the canopy's power-law inflow (eq. 3): u_ref at the building height, alpha */
#define CANOPY_ALPHA 0.25
/* the weighted upwind's parameter of the unsteady DFG cases (docs/flow.md) */
#define DFG_UPWIND_PARAMETER 0.1

static const struct {
  const char *name;
  clmg_flow_case flow;
} cases[] = {{"cavity", CLMG_FLOW_CAVITY},
             {"dfg1", CLMG_FLOW_DFG1},
             {"dfg2", CLMG_FLOW_DFG2},
             {"dfg3", CLMG_FLOW_DFG3},
             {"canopy", CLMG_FLOW_CANOPY}};

int clmg_flow_case_parse(const char *name, clmg_flow_case *flow) {
  for (size_t k = 0; name && k < sizeof cases / sizeof cases[0]; k++)
    if (strcmp(name, cases[k].name) == 0) {
      if (flow)
        *flow = cases[k].flow;
      return 1;
    }
  return 0;
}

const char *clmg_flow_case_name(clmg_flow_case flow) {
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    if (cases[k].flow == flow)
      return cases[k].name;
  return flow == CLMG_FLOW_GMSH ? "gmsh" : "unknown";
}

double clmg_flow_case_reynolds(clmg_flow_case flow) {
  return flow == CLMG_FLOW_DFG1 ? 20.0 : 100.0;
}

int clmg_flow_case_steady(clmg_flow_case flow) {
  return !(flow == CLMG_FLOW_DFG2 || flow == CLMG_FLOW_DFG3 || flow == CLMG_FLOW_CANOPY);
}

int clmg_flow_case_has_quantities(clmg_flow_case flow) {
  return flow == CLMG_FLOW_DFG1 || flow == CLMG_FLOW_DFG2 || flow == CLMG_FLOW_DFG3;
}

/* DFG 2D-3's inflow: the profile of peak 1.5 times sin(pi t / 8). */
static double dfg3_scale(double t, void *data) {
  (void)data;
  return sin(3.14159265358979323846 * t / CLMG_FLOW_DFG3_END);
}

void clmg_flow_case_defaults(clmg_flow_case flow, clmg_flow_options *options) {
  if (!options)
    return;
  options->steady = clmg_flow_case_steady(flow);
  if (flow == CLMG_FLOW_DFG2 || flow == CLMG_FLOW_DFG3) {
    options->time_scheme = CLMG_FLOW_CRANK_NICOLSON;
    options->upwind = CLMG_STOKES_UPWIND_WEIGHTED;
    options->upwind_parameter = DFG_UPWIND_PARAMETER;
  } else {
    options->upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  }
  if (flow == CLMG_FLOW_DFG3) {
    options->boundary_scale = dfg3_scale;
    options->boundary_scale_data = NULL;
    options->steps = clmg_flow_case_steps(flow, options->time_step);
  }
}

int clmg_flow_case_steps(clmg_flow_case flow, double time_step) {
  if (flow != CLMG_FLOW_DFG3 || !(time_step > 0))
    return 100;
  return (int)fmin(ceil(CLMG_FLOW_DFG3_END / time_step - 1e-9), 1e8);
}

static clmg_status invalid(clmg_error *error, const char *message) {
  if (error)
    snprintf(error->message, sizeof error->message, "%s", message);
  return CLMG_ERROR_INVALID_ARGUMENT;
}

clmg_status clmg_flow_case_create(clmg_flow_case flow, double reynolds, const int32_t *walls,
                                  size_t num_walls, int32_t inflow_tag, clmg_flow_case_setup *setup,
                                  clmg_error *error) {
  if (!setup)
    return invalid(error, "clmg_flow_case_create: setup must not be NULL");
  memset(setup, 0, sizeof *setup);
  if (flow < CLMG_FLOW_CAVITY || flow > CLMG_FLOW_GMSH)
    return invalid(error, "clmg_flow_case_create: unknown case");
  if (!(isfinite(reynolds) && reynolds > 0)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "the Reynolds number must be finite and > 0, not %g", reynolds);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  if (flow == CLMG_FLOW_GMSH) {
    if (!walls || num_walls < 1 || num_walls > CLMG_FLOW_MAX_TAGS || inflow_tag < 1)
      return invalid(error, "a Gmsh case needs 1 to 64 wall tags and an inflow tag >= 1");
    for (size_t k = 0; k < num_walls; k++)
      if (walls[k] < 1)
        return invalid(error, "wall tags are >= 1");
  }
  setup->flow = flow;
  setup->reynolds = reynolds;
  setup->mean_velocity = 1.0;
  setup->length = 1.0;
  setup->inflow_tag = inflow_tag;
  switch (flow) {
  case CLMG_FLOW_DFG1:
  case CLMG_FLOW_DFG2:
  case CLMG_FLOW_DFG3:
    setup->u_peak = flow == CLMG_FLOW_DFG1 ? 0.3 : 1.5;
    setup->mean_velocity = 2.0 / 3.0 * setup->u_peak;
    setup->length = DFG_DIAMETER;
    setup->dirichlet[setup->num_dirichlet++] = CLMG_DFG_INFLOW;
    setup->dirichlet[setup->num_dirichlet++] = CLMG_DFG_WALLS;
    setup->dirichlet[setup->num_dirichlet++] = CLMG_DFG_CYLINDER;
    break;
  case CLMG_FLOW_CAVITY:
    break; /* every wall: the defaults */
  case CLMG_FLOW_CANOPY:
    setup->u_peak = 1.0;
    setup->dirichlet[setup->num_dirichlet++] = CLMG_CANOPY_INFLOW;
    setup->dirichlet[setup->num_dirichlet++] = CLMG_CANOPY_TERRAIN;
    setup->slip[setup->num_slip++] = CLMG_CANOPY_TOP;
    break;
  case CLMG_FLOW_GMSH:
    memcpy(setup->dirichlet, walls, num_walls * sizeof *walls);
    setup->num_dirichlet = num_walls;
    setup->dirichlet[setup->num_dirichlet++] = inflow_tag;
    break;
  }
  setup->viscosity = setup->mean_velocity * setup->length / reynolds;
  return CLMG_SUCCESS;
}

clmg_status clmg_flow_case_mesh(clmg_flow_case flow, const char *path, clmg_mesh *out,
                                clmg_error *error) {
  switch (flow) {
  case CLMG_FLOW_DFG1:
  case CLMG_FLOW_DFG2:
  case CLMG_FLOW_DFG3:
    return clmg_mesh_dfg_channel(out, error);
  case CLMG_FLOW_CAVITY:
    return clmg_mesh_cavity(4, out, error);
  case CLMG_FLOW_CANOPY:
    return clmg_mesh_canopy(out, error);
  case CLMG_FLOW_GMSH:
    if (!path)
      return invalid(error, "a Gmsh case needs the mesh file's path");
    return clmg_mesh_read_gmsh(path, out, error);
  }
  return invalid(error, "clmg_flow_case_mesh: unknown case");
}

static void boundary_velocity(const double *x, int32_t tag, double *u, void *data) {
  const clmg_flow_case_setup *s = data;
  u[0] = u[1] = 0.0;
  switch (s->flow) {
  case CLMG_FLOW_DFG1:
  case CLMG_FLOW_DFG2:
  case CLMG_FLOW_DFG3:
    if (tag == CLMG_DFG_INFLOW)
      u[0] = clmg_dfg_inflow_u(x[1], s->u_peak);
    break;
  case CLMG_FLOW_CAVITY:
    if (tag == CLMG_CAVITY_LID)
      u[0] = 1.0;
    break;
  case CLMG_FLOW_CANOPY:
    if (tag == CLMG_CANOPY_INFLOW)
      u[0] = clmg_canopy_inflow_u(x[1], s->u_peak, 1.0, CANOPY_ALPHA);
    break;
  case CLMG_FLOW_GMSH:
    if (tag == s->inflow_tag)
      u[0] = 1.0;
    break;
  }
}

void clmg_flow_case_problem(const clmg_flow_case_setup *setup, clmg_stokes_problem *problem) {
  if (!problem)
    return;
  clmg_stokes_problem_defaults(problem);
  if (!setup)
    return;
  problem->viscosity = setup->viscosity;
  problem->boundary_velocity = boundary_velocity;
  problem->boundary_data = (void *)setup;
  problem->dirichlet_tags = setup->num_dirichlet ? setup->dirichlet : NULL;
  problem->num_dirichlet_tags = setup->num_dirichlet;
  if (setup->num_slip) {
    problem->slip_tags = setup->slip;
    problem->num_slip_tags = setup->num_slip;
  }
}

clmg_status clmg_flow_case_quantities(const clmg_flow_case_setup *setup, const clmg_mesh *mesh,
                                      const clmg_triangle_edges *edges, const double *x,
                                      double *drag, double *lift, double *pressure_difference,
                                      clmg_error *error) {
  if (!setup || !mesh || !edges || !x || !drag || !lift || !pressure_difference)
    return invalid(error, "clmg_flow_case_quantities: an argument is NULL");
  if (!clmg_flow_case_has_quantities(setup->flow))
    return invalid(error, "drag, lift and the pressure difference are the DFG cases' quantities");
  clmg_status status = clmg_flow_drag_lift(mesh, edges, x, setup->viscosity, CLMG_DFG_CYLINDER,
                                           setup->mean_velocity, setup->length, drag, lift, error);
  const double front[2] = {0.15, 0.2}, back[2] = {0.25, 0.2};
  double p_front = 0, p_back = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_flow_pressure_at(mesh, x, edges->num_edges, front, &p_front, error);
  if (status == CLMG_SUCCESS)
    status = clmg_flow_pressure_at(mesh, x, edges->num_edges, back, &p_back, error);
  *pressure_difference = p_front - p_back;
  return status;
}
