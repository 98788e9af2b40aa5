/* The flow benchmark cases (include/clmg/flow.h): their scales, boundary
 * conditions and quantities of interest, in one place for `clmg flow`,
 * Python's clmg.flow and the tests. */
#include "flow/stokes_internal.h"
#include "mesh/mesh_internal.h"

#include "clmg/flow.h"
#include "clmg/navier_stokes.h"

#include <math.h>
#include <stdint.h>
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
    setup->u_peak = 1.0; /* u = (1, 0) on the inflow */
    setup->inflow_normal[0] = 1.0;
    break;
  }
  if (clmg_flow_case_has_quantities(flow)) {
    static const double dfg_points[4] = {0.15, 0.2, 0.25, 0.2};
    setup->body_tag = CLMG_DFG_CYLINDER;
    setup->has_pressure_points = 1;
    memcpy(setup->pressure_points, dfg_points, sizeof dfg_points);
  }
  setup->viscosity = setup->mean_velocity * setup->length / reynolds;
  return CLMG_SUCCESS;
}

void clmg_flow_gmsh_options_defaults(clmg_flow_gmsh_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->inflow_profile = CLMG_FLOW_INFLOW_UNIFORM;
  options->inflow_peak = 1.0;
  options->reference_length = 1.0;
}

static int mesh_has_tag(const clmg_mesh *mesh, int32_t tag) {
  for (size_t f = 0; f < mesh->num_boundary_faces; f++)
    if (mesh->boundary_face_tag[f] == tag)
      return 1;
  return 0;
}

/* The role of tag among the options' lists ("a wall", ...), or NULL. */
static const char *tag_role(const clmg_flow_gmsh_options *o, int32_t tag) {
  for (size_t k = 0; k < o->num_walls; k++)
    if (o->walls[k] == tag)
      return "a wall";
  for (size_t k = 0; k < o->num_slip; k++)
    if (o->slip[k] == tag)
      return "a slip";
  for (size_t k = 0; k < o->num_outflow; k++)
    if (o->outflow[k] == tag)
      return "an outflow";
  return tag == o->inflow_tag ? "the inflow" : NULL;
}

/* A list of tags of one role: each >= 1, on the mesh, in no earlier role
 * (those before it in walls, slip, outflow, inflow) and not twice. */
static clmg_status check_tags(const clmg_mesh *mesh, const clmg_flow_gmsh_options *o,
                              const int32_t *tags, size_t count, const char *role,
                              const char *const *earlier, clmg_error *error) {
  if (count > CLMG_FLOW_MAX_TAGS || (count && !tags)) {
    if (error)
      snprintf(error->message, sizeof error->message, "at most %d %s tags, given as an array",
               CLMG_FLOW_MAX_TAGS, role);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  for (size_t k = 0; k < count; k++) {
    const char *problem = NULL;
    if (tags[k] < 1)
      problem = "tags are >= 1";
    else if (!mesh_has_tag(mesh, tags[k]))
      problem = "no boundary edge of the mesh has that tag";
    for (size_t j = 0; j < k && !problem; j++)
      if (tags[j] == tags[k])
        problem = "given twice";
    const char *other = tag_role(o, tags[k]);
    if (!problem && other && earlier)
      for (size_t j = 0; earlier[j]; j++)
        if (strcmp(other, earlier[j]) == 0) {
          if (error)
            snprintf(error->message, sizeof error->message,
                     "tag %d is both %s and %s tag: give each tag one condition", (int)tags[k],
                     other, role);
          return CLMG_ERROR_INVALID_ARGUMENT;
        }
    if (problem) {
      if (error)
        snprintf(error->message, sizeof error->message, "%s tag %d: %s", role, (int)tags[k],
                 problem);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
  }
  return CLMG_SUCCESS;
}

/* The inflow boundary as one straight segment: its ends (the vertices of
 * one inflow edge each), its direction and the normal into the domain. */
static clmg_status fit_inflow(const clmg_mesh *mesh, int32_t tag, clmg_flow_case_setup *setup,
                              clmg_error *error) {
  const int per_face = clmg_mesh_vertices_per_face(mesh);
  const int per_cell = clmg_mesh_vertices_per_cell(mesh);
  int32_t ends[2] = {-1, -1};
  size_t num_ends = 0, first = SIZE_MAX;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++) {
    if (mesh->boundary_face_tag[f] != tag)
      continue;
    if (first == SIZE_MAX)
      first = f;
    for (int a = 0; a < per_face; a++) {
      int32_t v = mesh->boundary_faces[per_face * f + (size_t)a];
      size_t uses = 0;
      for (size_t g = 0; g < mesh->num_boundary_faces; g++)
        if (mesh->boundary_face_tag[g] == tag)
          for (int b = 0; b < per_face; b++)
            uses += mesh->boundary_faces[per_face * g + (size_t)b] == v;
      if (uses == 1) {
        if (num_ends < 2)
          ends[num_ends] = v;
        num_ends++;
      }
    }
  }
  if (num_ends != 2) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "the inflow tag %d's edges are not one chain with two ends (%zu ends): the inflow "
               "must be one straight segment",
               (int)tag, num_ends);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  const double *a = mesh->coords + 2 * (size_t)ends[0], *b = mesh->coords + 2 * (size_t)ends[1];
  double length = hypot(b[0] - a[0], b[1] - a[1]);
  if (!(length > 0)) {
    if (error)
      snprintf(error->message, sizeof error->message, "the inflow tag %d has length 0", (int)tag);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  double t[2] = {(b[0] - a[0]) / length, (b[1] - a[1]) / length};
  for (size_t f = 0; f < mesh->num_boundary_faces; f++)
    for (int k = 0; mesh->boundary_face_tag[f] == tag && k < per_face; k++) {
      const double *p = mesh->coords + 2 * (size_t)mesh->boundary_faces[per_face * f + (size_t)k];
      double off = fabs((p[0] - a[0]) * t[1] - (p[1] - a[1]) * t[0]);
      if (off > 1e-8 * length) {
        if (error)
          snprintf(error->message, sizeof error->message,
                   "the inflow tag %d is not straight: (%g, %g) is %g off the line from (%g, %g) "
                   "to (%g, %g)",
                   (int)tag, p[0], p[1], off, a[0], a[1], b[0], b[1]);
        return CLMG_ERROR_INVALID_ARGUMENT;
      }
    }
  /* the normal into the domain: towards the centroid of the cell of an inflow edge */
  const int32_t *edge = mesh->boundary_faces + per_face * first;
  double n[2] = {-t[1], t[0]}, side = 0;
  for (size_t c = 0; c < mesh->num_cells && side == 0; c++) {
    const int32_t *cell = mesh->cells + per_cell * c;
    int shared = 0;
    double centroid[2] = {0, 0};
    for (int k = 0; k < per_cell; k++) {
      shared += cell[k] == edge[0] || cell[k] == edge[1];
      centroid[0] += mesh->coords[2 * (size_t)cell[k]] / per_cell;
      centroid[1] += mesh->coords[2 * (size_t)cell[k] + 1] / per_cell;
    }
    if (shared == 2)
      side = (centroid[0] - a[0]) * n[0] + (centroid[1] - a[1]) * n[1];
  }
  if (side == 0)
    return invalid(error, "the inflow's first edge is the edge of no cell");
  if (side < 0) {
    n[0] = -n[0];
    n[1] = -n[1];
  }
  memcpy(setup->inflow_start, a, sizeof setup->inflow_start);
  memcpy(setup->inflow_tangent, t, sizeof t);
  memcpy(setup->inflow_normal, n, sizeof n);
  setup->inflow_extent = length;
  return CLMG_SUCCESS;
}

clmg_status clmg_flow_case_create_gmsh(const clmg_mesh *mesh, double reynolds,
                                       const clmg_flow_gmsh_options *options,
                                       clmg_flow_case_setup *setup, clmg_error *error) {
  if (!setup)
    return invalid(error, "clmg_flow_case_create_gmsh: setup must not be NULL");
  memset(setup, 0, sizeof *setup);
  if (!mesh || !options)
    return invalid(error, "clmg_flow_case_create_gmsh: mesh and options must not be NULL");
  clmg_status checked = clmg_triangle_mesh_check(mesh, error);
  if (checked != CLMG_SUCCESS)
    return checked;
  if (mesh->num_boundary_faces && (!mesh->boundary_faces || !mesh->boundary_face_tag))
    return invalid(error, "a Gmsh flow case needs the mesh's boundary edges");
  if (!(isfinite(reynolds) && reynolds > 0)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "the Reynolds number must be finite and > 0, not %g", reynolds);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  const clmg_flow_gmsh_options *o = options;
  if (o->inflow_tag < 1)
    return invalid(error, "a Gmsh flow case needs an inflow tag >= 1");
  static const char *const none[] = {NULL}, *const after_walls[] = {"a wall", NULL},
                           *const after_slip[] = {"a wall", "a slip", NULL},
                           *const after_outflow[] = {"a wall", "a slip", "an outflow", NULL};
  clmg_status status = check_tags(mesh, o, o->walls, o->num_walls, "a wall", none, error);
  if (status == CLMG_SUCCESS)
    status = check_tags(mesh, o, o->slip, o->num_slip, "a slip", after_walls, error);
  if (status == CLMG_SUCCESS)
    status = check_tags(mesh, o, o->outflow, o->num_outflow, "an outflow", after_slip, error);
  if (status == CLMG_SUCCESS)
    status = check_tags(mesh, o, &o->inflow_tag, 1, "the inflow", after_outflow, error);
  if (status != CLMG_SUCCESS)
    return status;
  for (size_t f = 0; f < mesh->num_boundary_faces; f++)
    if (!tag_role(o, mesh->boundary_face_tag[f])) {
      if (error)
        snprintf(error->message, sizeof error->message,
                 "boundary tag %d of the mesh has no condition: name it among the wall, slip, "
                 "outflow or inflow tags",
                 (int)mesh->boundary_face_tag[f]);
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
  if (o->inflow_profile != CLMG_FLOW_INFLOW_UNIFORM &&
      o->inflow_profile != CLMG_FLOW_INFLOW_PARABOLIC)
    return invalid(error, "the inflow profile is uniform or parabolic");
  if (!(isfinite(o->inflow_peak) && o->inflow_peak > 0)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "the inflow's peak must be finite and > 0, not %g", o->inflow_peak);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  if (!(isfinite(o->reference_length) && o->reference_length > 0)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "the reference length must be finite and > 0, not %g", o->reference_length);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  if (o->body_tag != 0 && (o->body_tag < 1 || !mesh_has_tag(mesh, o->body_tag))) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "the body tag %d: no boundary edge of the mesh has that tag", (int)o->body_tag);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  for (int k = 0; o->has_pressure_points && k < 4; k++)
    if (!isfinite(o->pressure_points[k]))
      return invalid(error, "the pressure points must be finite");
  status = fit_inflow(mesh, o->inflow_tag, setup, error);
  if (status != CLMG_SUCCESS)
    return status;
  setup->flow = CLMG_FLOW_GMSH;
  setup->reynolds = reynolds;
  setup->u_peak = o->inflow_peak;
  setup->inflow_parabolic = o->inflow_profile == CLMG_FLOW_INFLOW_PARABOLIC;
  setup->mean_velocity = setup->inflow_parabolic ? 2.0 / 3.0 * o->inflow_peak : o->inflow_peak;
  setup->length = o->reference_length;
  setup->viscosity = setup->mean_velocity * setup->length / reynolds;
  setup->inflow_tag = o->inflow_tag;
  if (o->num_walls)
    memcpy(setup->dirichlet, o->walls, o->num_walls * sizeof *o->walls);
  setup->num_dirichlet = o->num_walls;
  setup->dirichlet[setup->num_dirichlet++] = o->inflow_tag;
  if (o->num_slip)
    memcpy(setup->slip, o->slip, o->num_slip * sizeof *o->slip);
  setup->num_slip = o->num_slip;
  setup->body_tag = o->body_tag;
  setup->has_pressure_points = o->has_pressure_points != 0;
  if (setup->has_pressure_points)
    memcpy(setup->pressure_points, o->pressure_points, sizeof setup->pressure_points);
  return CLMG_SUCCESS;
}

int clmg_flow_case_setup_has_quantities(const clmg_flow_case_setup *setup) {
  return setup &&
         (clmg_flow_case_has_quantities(setup->flow) ||
          (setup->flow == CLMG_FLOW_GMSH && (setup->body_tag > 0 || setup->has_pressure_points)));
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
    if (tag == s->inflow_tag) {
      double speed = s->u_peak;
      if (s->inflow_parabolic) {
        double along = (x[0] - s->inflow_start[0]) * s->inflow_tangent[0] +
                       (x[1] - s->inflow_start[1]) * s->inflow_tangent[1];
        double l = s->inflow_extent;
        speed = fmax(0.0, 4.0 * s->u_peak * along * (l - along) / (l * l));
      }
      u[0] = speed * s->inflow_normal[0];
      u[1] = speed * s->inflow_normal[1];
    }
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
  if (!clmg_flow_case_setup_has_quantities(setup))
    return invalid(error, "drag, lift and the pressure difference need a DFG case, or a Gmsh "
                          "case's body tag or pressure points");
  clmg_status status = CLMG_SUCCESS;
  *drag = *lift = *pressure_difference = NAN;
  if (setup->body_tag > 0)
    status = clmg_flow_drag_lift(mesh, edges, x, setup->viscosity, setup->body_tag,
                                 setup->mean_velocity, setup->length, drag, lift, error);
  if (status != CLMG_SUCCESS || !setup->has_pressure_points)
    return status;
  double p_front = 0, p_back = 0;
  status =
      clmg_flow_pressure_at(mesh, x, edges->num_edges, setup->pressure_points, &p_front, error);
  if (status == CLMG_SUCCESS)
    status = clmg_flow_pressure_at(mesh, x, edges->num_edges, setup->pressure_points + 2, &p_back,
                                   error);
  if (status == CLMG_SUCCESS)
    *pressure_difference = p_front - p_back;
  return status;
}
