/* Geometric multigrid hierarchies assembled on the device
 * (clmg_fe_poisson_hierarchy_device; kernels in cl/fe_hierarchy.cl and
 * cl/mesh_device.cl).
 *
 * Only the coarse mesh goes up: each level's mesh is refined on the device
 * (lib/mesh/mesh_device.c), its DOFs numbered and its Dirichlet DOFs found
 * there, and the kernels build the DOF-to-cell adjacency, the pattern, the
 * values, the prolongation from the coarser level and its transpose. Row
 * offsets come from device scans (clmg_offsets_from_counts); what crosses
 * the bus per level is a few totals and flags, and at the end the finest
 * mesh, which the caller gets on the host with its space. On a device
 * without fp64 the host refines and numbers (coordinates need doubles) and
 * each level goes up as before.
 *
 * The values use the host assembly's quadrature tables and sum each entry's
 * cells in the same order, so they agree with clmg_fe_poisson_hierarchy to
 * rounding (tests/test_gmg.c compares them). */
#include "fe/fe_internal.h"
#include "mesh/mesh_device.h"
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A level's device data that the next level's prolongation reads too. */
typedef struct device_level {
  clmg_device_mesh mesh;
  size_t num_dofs;
  const clmg_vector *cell_dofs; /* int32, cells x dofs per cell: the mesh's cells (Q1) or
                                   nodes (Q2), or own_dofs */
  const clmg_vector *start;     /* int64, num_dofs + 1: DOF -> cells */
  const clmg_vector *list;      /* int64: cell * dofs per cell + local, increasing per DOF */
  clmg_vector *own_dofs, *own_start, *own_list; /* where not the mesh's */
  clmg_vector *eliminated;                      /* uint32, num_dofs: 1 on Dirichlet DOFs */
} device_level;

typedef struct builder {
  clmg_context *context;
  clmg_dtype precision;
  int dim, degree;
  size_t dofs_per_cell, children;
  char options[256];
  clmg_vector *table;    /* quadrature tables, layout of cl/fe_hierarchy.cl */
  clmg_vector *transfer; /* children x dofs x dofs coarse basis values */
} builder;

static void device_level_free(device_level *level) {
  clmg_device_mesh_free(&level->mesh);
  clmg_vector_destroy(level->own_dofs);
  clmg_vector_destroy(level->own_start);
  clmg_vector_destroy(level->own_list);
  clmg_vector_destroy(level->eliminated);
  memset(level, 0, sizeof *level);
}

/* The finest level on the device until it is fetched. */
struct clmg_fe_device_finest {
  clmg_device_mesh mesh;
  clmg_vector *eliminated;
};

static void device_finest_free(struct clmg_fe_device_finest *f) {
  if (!f)
    return;
  clmg_device_mesh_free(&f->mesh);
  clmg_vector_destroy(f->eliminated);
  free(f);
}

/* Seconds since *mark, which moves to now. */
static double lap(double *mark) {
  double now = clmg_seconds_now();
  double seconds = now - *mark;
  *mark = now;
  return seconds;
}

/* A host function's failure, as the context's status and message. */
static clmg_status host_failure(clmg_context *context, clmg_status status,
                                const clmg_error *error) {
  return clmg_fail(context, status, "%s", error->message);
}

static clmg_status get_kernel(const builder *b, const char *name, clmg_kernel_args *args) {
  return clmg_args_for_kernel(b->context, "fe_hierarchy", b->options, name, args);
}

/* The host assembly's quadrature tables and the transfer table, uploaded
 * once for all levels. */
static clmg_status builder_init(builder *b, clmg_context *context, int dim, int degree) {
  memset(b, 0, sizeof *b);
  b->context = context;
  b->precision = clmg_context_device(context)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  b->dim = dim;
  b->degree = degree;
  b->children = (size_t)1 << dim;
  size_t per_axis = (size_t)degree + 1;
  b->dofs_per_cell = dim == 2 ? per_axis * per_axis : per_axis * per_axis * per_axis;
  clmg_fe_reference_cell *ref = clmg_fe_tabulate(dim, degree, degree + 2);
  size_t dofs = b->dofs_per_cell, points = ref ? ref->points : 0, corners = b->children;
  size_t table_size = points * (1 + dofs + dofs * (size_t)dim + corners * (size_t)dim);
  size_t transfer_size = b->children * dofs * dofs;
  double *table = clmg_alloc_array(table_size ? table_size : 1, sizeof *table);
  double *transfer = clmg_alloc_array(transfer_size, sizeof *transfer);
  clmg_status status = CLMG_SUCCESS;
  if (!ref || !table || !transfer)
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for the tables");
  if (status == CLMG_SUCCESS) {
    double *t = table;
    for (size_t q = 0; q < points; q++)
      *t++ = ref->weight[q];
    for (size_t q = 0; q < points; q++)
      for (size_t i = 0; i < dofs; i++)
        *t++ = ref->phi[q][i];
    for (size_t q = 0; q < points; q++)
      for (size_t i = 0; i < dofs * (size_t)dim; i++)
        *t++ = ref->dphi[q][i];
    for (size_t q = 0; q < points; q++)
      for (size_t i = 0; i < corners * (size_t)dim; i++)
        *t++ = ref->corner_dphi[q][i];
    /* The fine node (child, local) sits at (child offset + node) / 2 in its
     * parent's reference cell, as in lib/fe/transfer.c. */
    for (size_t child = 0; child < b->children; child++)
      for (size_t local = 0; local < dofs; local++) {
        size_t node[3] = {local % per_axis, (local / per_axis) % per_axis,
                          local / (per_axis * per_axis)};
        double xi[3];
        for (int d = 0; d < dim; d++)
          xi[d] = 0.5 * ((double)((child >> d) & 1) + (double)node[d] / degree);
        double *values = transfer + (child * dofs + local) * dofs;
        clmg_fe_basis(dim, degree, xi, values, NULL);
        for (size_t j = 0; j < dofs; j++)
          if (fabs(values[j]) < CLMG_FE_TRANSFER_DROP)
            values[j] = 0.0;
      }
    snprintf(b->options, sizeof b->options, "%s -DFE_DIM=%d -DFE_DOFS=%zu -DFE_POINTS=%zu",
             clmg_real_options(context, b->precision), dim, dofs, points);
    status = clmg_vector_create_from_host(context, b->precision, table_size, table, &b->table);
  }
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_from_host(context, b->precision, transfer_size, transfer, &b->transfer);
  free(ref);
  free(table);
  free(transfer);
  return status;
}

static void builder_free(builder *b) {
  clmg_vector_destroy(b->table);
  clmg_vector_destroy(b->transfer);
}

/* The level's DOFs: Q1's are the mesh's vertices, whose cells the mesh's
 * adjacency lists; Q2's the mesh's degree-2 nodes, numbered on the device
 * (cell_dofs given: uploaded from the host's space instead). */
static clmg_status number_level(const builder *b, const int32_t *host_cell_dofs,
                                size_t host_num_dofs, device_level *level) {
  clmg_context *context = b->context;
  clmg_device_mesh *mesh = &level->mesh;
  clmg_status status = CLMG_SUCCESS;
  if (b->degree == 1) {
    status = clmg_device_mesh_adjacency(context, mesh);
    level->num_dofs = mesh->num_vertices;
    level->cell_dofs = mesh->cells;
    level->start = mesh->start;
    level->list = mesh->list;
    return status;
  }
  if (host_cell_dofs) {
    level->num_dofs = host_num_dofs;
    status = clmg_vector_create_from_host(context, CLMG_INT32, mesh->num_cells * b->dofs_per_cell,
                                          host_cell_dofs, &level->own_dofs);
    level->cell_dofs = level->own_dofs;
  } else {
    status = clmg_device_mesh_number_nodes(context, mesh);
    level->num_dofs = mesh->num_nodes;
    level->cell_dofs = mesh->nodes;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_device_adjacency(context, mesh->dim, level->cell_dofs, level->num_dofs,
                                   &level->own_start, &level->own_list);
  level->start = level->own_start;
  level->list = level->own_list;
  return status;
}

/* The host's Dirichlet mask on the device. */
static clmg_status upload_mask(clmg_context *context, const uint8_t *mask, device_level *level) {
  size_t n = level->num_dofs;
  uint32_t *eliminated = clmg_alloc_array(n ? n : 1, sizeof *eliminated);
  if (!eliminated)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory for the Dirichlet mask of %zu DOFs", n);
  for (size_t i = 0; i < n; i++)
    eliminated[i] = mask[i];
  clmg_status status =
      clmg_vector_create_from_host(context, CLMG_UINT32, n, eliminated, &level->eliminated);
  free(eliminated);
  return status;
}

/* What fe_poisson_rows reads besides the level: the element matrices and,
 * on the finest level (g not NULL), what b and x0 are made of. */
typedef struct rows_input {
  const device_level *level;
  const clmg_vector *elements, *g, *load;
  clmg_vector *b, *x0;
} rows_input;

static void rows_arguments(clmg_kernel_args *args, const void *data, cl_uint fill, cl_mem length,
                           cl_mem row_ptr, cl_mem col, cl_mem val) {
  const rows_input *in = data;
  const device_level *level = in->level;
  /* vectors a level does not use: any buffer stands in */
  cl_mem unused = in->elements->buffer;
  cl_uint want_b = in->g != NULL, has_load = in->load != NULL;
  clmg_arg_ulong(args, level->num_dofs);
  clmg_arg_buffer(args, level->start->buffer);
  clmg_arg_buffer(args, level->list->buffer);
  clmg_arg_buffer(args, level->cell_dofs->buffer);
  clmg_arg_buffer(args, level->eliminated->buffer);
  clmg_arg_raw(args, sizeof fill, &fill);
  clmg_arg_buffer(args, length);
  clmg_arg_buffer(args, row_ptr);
  clmg_arg_buffer(args, col);
  clmg_arg_buffer(args, val);
  clmg_arg_buffer(args, in->elements->buffer);
  clmg_arg_buffer(args, in->g ? in->g->buffer : unused);
  clmg_arg_raw(args, sizeof want_b, &want_b);
  clmg_arg_raw(args, sizeof has_load, &has_load);
  clmg_arg_buffer(args, in->load ? in->load->buffer : unused);
  clmg_arg_buffer(args, in->b ? in->b->buffer : unused);
  clmg_arg_buffer(args, in->x0 ? in->x0->buffer : unused);
}

/* Every cell's element stiffness matrix (upper triangle) and load vector,
 * FE_RECORD reals a cell (cl/fe_hierarchy.cl), and whether a cell has a
 * non-positive Jacobian determinant. */
static clmg_status element_matrices(const builder *b, const device_level *level, double source,
                                    clmg_vector **elements) {
  clmg_context *context = b->context;
  const clmg_device_mesh *mesh = &level->mesh;
  size_t cells = mesh->num_cells, dofs = b->dofs_per_cell;
  size_t record = dofs * (dofs + 1) / 2 + dofs;
  clmg_vector *bad = NULL;
  /* the kernel writes every record */
  clmg_status status = clmg_vector_create_unset(context, b->precision, cells * record, elements);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, 1, &bad);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(bad, 0.0);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = get_kernel(b, "fe_element_matrices", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, cells);
    clmg_arg_buffer(&args, mesh->cells->buffer);
    clmg_arg_buffer(&args, mesh->coords->buffer);
    clmg_arg_buffer(&args, b->table->buffer);
    clmg_arg_real(&args, b->precision, source);
    clmg_arg_buffer(&args, (*elements)->buffer);
    clmg_arg_buffer(&args, bad->buffer);
    status = clmg_launch_args(&args, cells);
  }
  int32_t inverted = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(bad, &inverted);
  if (status == CLMG_SUCCESS && inverted)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "a cell of the %zu-cell mesh has a non-positive Jacobian determinant at a "
                       "quadrature point: inverted or degenerate cell",
                       cells);
  clmg_vector_destroy(bad);
  return status;
}

/* The level's matrix (element matrices, then the rows: lengths, then
 * columns and values) and, for the finest level (g given: g on Dirichlet
 * DOFs, 0 elsewhere, on the device), b and x0. load: the source function's
 * integrals, or NULL. */
static clmg_status assemble_level(const builder *b, const device_level *level, double source,
                                  const clmg_vector *g, const double *load, clmg_csr_device *a,
                                  clmg_vector **rhs, clmg_vector **x0) {
  clmg_context *context = b->context;
  size_t n = level->num_dofs;
  clmg_vector *elements = NULL, *load_device = NULL;
  clmg_status status = element_matrices(b, level, source, &elements);
  if (status == CLMG_SUCCESS && load)
    status = clmg_vector_create_from_host(context, b->precision, n, load, &load_device);
  /* the rows' kernel writes every element of b and x0 */
  if (status == CLMG_SUCCESS && g)
    status = clmg_vector_create_unset(context, b->precision, n, rhs);
  if (status == CLMG_SUCCESS && g)
    status = clmg_vector_create_unset(context, b->precision, n, x0);
  if (status == CLMG_SUCCESS) {
    const rows_input in = {.level = level,
                           .elements = elements,
                           .g = g,
                           .load = load_device,
                           .b = g ? *rhs : NULL,
                           .x0 = g ? *x0 : NULL};
    status = clmg_csr_device_build_rows(context, "fe_hierarchy", b->options, "fe_poisson_rows", n,
                                        n, b->precision, rows_arguments, &in, a);
  }
  /* the element arrays are freed once the rows have read them */
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  clmg_vector_destroy(elements);
  clmg_vector_destroy(load_device);
  if (status != CLMG_SUCCESS)
    clmg_csr_device_free(a);
  return status;
}

typedef struct transfer_levels {
  const builder *b;
  const device_level *coarse, *fine;
} transfer_levels;

static void prolongation_arguments(clmg_kernel_args *args, const void *data, cl_uint fill,
                                   cl_mem length, cl_mem row_ptr, cl_mem col, cl_mem val) {
  const transfer_levels *t = data;
  clmg_arg_ulong(args, t->fine->num_dofs);
  clmg_arg_buffer(args, t->fine->start->buffer);
  clmg_arg_buffer(args, t->fine->list->buffer);
  clmg_arg_buffer(args, t->fine->eliminated->buffer);
  clmg_arg_buffer(args, t->coarse->cell_dofs->buffer);
  clmg_arg_buffer(args, t->coarse->eliminated->buffer);
  clmg_arg_buffer(args, t->b->transfer->buffer);
  clmg_arg_raw(args, sizeof fill, &fill);
  clmg_arg_buffer(args, length);
  clmg_arg_buffer(args, row_ptr);
  clmg_arg_buffer(args, col);
  clmg_arg_buffer(args, val);
}

/* g on the finest level's Dirichlet DOFs (0 elsewhere), uploaded, and, for
 * a source function, its load vector: host work over the boundary and, for
 * the load, the cells of the finest level only (the host path, without
 * fp64). */
static clmg_status finest_level_data(const builder *b, const clmg_fe_space *space,
                                     const clmg_poisson_problem *problem, const uint8_t *mask,
                                     const int32_t *tag_of, clmg_vector **g, double **load) {
  clmg_context *context = b->context;
  size_t n = space->num_dofs, dim = (size_t)space->mesh->dim;
  double *host_g = calloc(n ? n : 1, sizeof *host_g);
  *load = problem->source ? clmg_alloc_array(n ? n : 1, sizeof **load) : NULL;
  if (!host_g || (problem->source && !*load)) {
    free(host_g);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory for the right-hand side of %zu DOFs", n);
  }
  for (size_t i = 0; i < n && problem->dirichlet; i++)
    if (mask[i])
      host_g[i] =
          problem->dirichlet(space->dof_coords + i * dim, tag_of[i], problem->dirichlet_data);
  clmg_status status = clmg_vector_create_from_host(context, b->precision, n, host_g, g);
  free(host_g);
  if (status != CLMG_SUCCESS || !problem->source)
    return status;
  clmg_error error = {{0}};
  status = clmg_fe_load_vector(space, problem, *load, &error);
  return status == CLMG_SUCCESS ? status : host_failure(context, status, &error);
}

void clmg_fe_device_hierarchy_free(clmg_fe_device_hierarchy *h) {
  if (!h)
    return;
  for (int level = 0; level < h->num_levels; level++) {
    if (h->a)
      clmg_csr_device_free(&h->a[level]);
    if (h->p)
      clmg_csr_device_free(&h->p[level]);
    if (h->r)
      clmg_csr_device_free(&h->r[level]);
    if (h->spaces)
      clmg_fe_space_free(&h->spaces[level]);
    if (h->meshes)
      clmg_mesh_free(&h->meshes[level]);
  }
  free(h->meshes);
  free(h->spaces);
  free(h->a);
  free(h->p);
  free(h->r);
  clmg_vector_destroy(h->b);
  clmg_vector_destroy(h->x0);
  free(h->is_dirichlet);
  device_finest_free(h->device_finest);
  memset(h, 0, sizeof *h);
}

/* The level's mesh on the device: the coarse mesh uploaded, or the
 * previous level's refined there (no fp64: refined on the host into
 * h->meshes[level] and uploaded). */
static clmg_status level_mesh(const builder *b, clmg_fe_device_hierarchy *h, size_t level,
                              int on_device, device_level *previous, device_level *current) {
  clmg_context *context = b->context;
  clmg_error error = {{0}};
  if (level == 0) {
    clmg_status status = clmg_mesh_check(&h->meshes[0], &error);
    return status != CLMG_SUCCESS
               ? host_failure(context, status, &error)
               : clmg_device_mesh_upload(context, &h->meshes[0], b->precision, &current->mesh);
  }
  if (on_device)
    return clmg_device_mesh_refine(context, &previous->mesh, &current->mesh);
  /* a mesh from clmg_mesh_refine needs no second check */
  clmg_status status =
      clmg_mesh_refine_checked_input(&h->meshes[level - 1], &h->meshes[level], &error);
  if (status != CLMG_SUCCESS)
    return host_failure(context, status, &error);
  return clmg_device_mesh_upload(context, &h->meshes[level], b->precision, &current->mesh);
}

/* The finest level's mesh, space and mask on the host, from its device
 * mesh and mask (whatever of them is not there yet). */
static clmg_status host_finest(clmg_context *context, clmg_fe_device_hierarchy *h,
                               const clmg_device_mesh *mesh, const clmg_vector *eliminated) {
  const int finest = h->num_levels - 1;
  clmg_status status = CLMG_SUCCESS;
  if (finest > 0 && h->meshes[finest].num_cells == 0)
    status = clmg_device_mesh_download(context, mesh, &h->meshes[0], finest, &h->meshes[finest]);
  clmg_error error = {{0}};
  clmg_fe_space *space = &h->spaces[finest];
  const size_t n = clmg_vector_length(eliminated);
  if (status == CLMG_SUCCESS && !space->cell_dofs) {
    status = clmg_fe_space_create_checked_input(&h->meshes[finest], h->degree, space, &error);
    if (status != CLMG_SUCCESS)
      return host_failure(context, status, &error);
    if (space->num_dofs != n)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "the device numbered %zu DOFs, the host %zu", n, space->num_dofs);
  }
  if (status != CLMG_SUCCESS || h->is_dirichlet)
    return status;
  uint32_t *mask = clmg_alloc_array(n ? n : 1, sizeof *mask);
  uint8_t *is_dirichlet = clmg_alloc_array(n ? n : 1, 1);
  if (!mask || !is_dirichlet)
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "no host memory for the Dirichlet mask of %zu DOFs", n);
  if (status == CLMG_SUCCESS && n)
    status = clmg_vector_download(eliminated, mask);
  for (size_t i = 0; status == CLMG_SUCCESS && i < n; i++)
    is_dirichlet[i] = (uint8_t)mask[i];
  free(mask);
  if (status == CLMG_SUCCESS)
    h->is_dirichlet = is_dirichlet;
  else
    free(is_dirichlet);
  return status;
}

clmg_status clmg_fe_device_hierarchy_fetch_finest(clmg_context *context,
                                                  clmg_fe_device_hierarchy *h) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (!h || h->num_levels < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "no device hierarchy to fetch from");
  if (!h->device_finest)
    return CLMG_SUCCESS;
  clmg_status status =
      host_finest(context, h, &h->device_finest->mesh, h->device_finest->eliminated);
  if (status == CLMG_SUCCESS) {
    device_finest_free(h->device_finest);
    h->device_finest = NULL;
  }
  return status;
}

/* The level's space on the host (h->meshes[level]) and its DOFs uploaded. */
static clmg_status host_numbering(const builder *b, clmg_fe_device_hierarchy *h, size_t level,
                                  device_level *current) {
  clmg_error error = {{0}};
  clmg_fe_space *space = &h->spaces[level];
  clmg_status status =
      level > 0 ? clmg_fe_space_create_checked_input(&h->meshes[level], b->degree, space, &error)
                : clmg_fe_space_create(&h->meshes[level], b->degree, space, &error);
  if (status != CLMG_SUCCESS)
    return host_failure(b->context, status, &error);
  return number_level(b, space->cell_dofs, space->num_dofs, current);
}

/* The level's Dirichlet DOFs on the device and, on the finest level, g
 * there (*g) and, for a source function, the finest mesh and space on the
 * host and the load vector (*load). */
static clmg_status device_dirichlet(const builder *b, clmg_fe_device_hierarchy *h,
                                    const clmg_poisson_problem *problem, int finest,
                                    device_level *current, clmg_vector **g, double **load) {
  clmg_context *context = b->context;
  clmg_vector *tags = NULL;
  clmg_status status = clmg_device_mesh_dirichlet(context, &current->mesh, current->cell_dofs,
                                                  b->degree, current->num_dofs, problem,
                                                  &current->eliminated, finest ? &tags : NULL);
  if (status != CLMG_SUCCESS || !finest)
    return status;
  const clmg_vector *dof_coords = b->degree == 1 ? current->mesh.coords : current->mesh.node_coords;
  status = clmg_device_mesh_boundary_values(context, &current->mesh, dof_coords,
                                            current->eliminated, tags, problem, g);
  clmg_vector_destroy(tags);
  if (status != CLMG_SUCCESS || !problem->source)
    return status;
  status = host_finest(context, h, &current->mesh, current->eliminated);
  const clmg_fe_space *space = &h->spaces[h->num_levels - 1];
  *load = status == CLMG_SUCCESS
              ? clmg_alloc_array(space->num_dofs ? space->num_dofs : 1, sizeof **load)
              : NULL;
  if (status == CLMG_SUCCESS && !*load)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory for the load vector of %zu DOFs", space->num_dofs);
  clmg_error error = {{0}};
  if (status == CLMG_SUCCESS)
    status = clmg_fe_load_vector(space, problem, *load, &error);
  return status == CLMG_SUCCESS || error.message[0] == 0 ? status
                                                         : host_failure(context, status, &error);
}

/* The level's Dirichlet DOFs on the host and the mask uploaded. */
static clmg_status host_dirichlet(const builder *b, const clmg_fe_space *space,
                                  const clmg_poisson_problem *problem, device_level *current,
                                  uint8_t **mask, int32_t **tag_of) {
  size_t n = space->num_dofs;
  free(*mask);
  free(*tag_of);
  *mask = clmg_alloc_array(n ? n : 1, 1);
  *tag_of = clmg_alloc_array(n ? n : 1, sizeof **tag_of);
  if (!*mask || !*tag_of)
    return clmg_fail(b->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory for the Dirichlet DOFs of %zu DOFs", n);
  clmg_error error = {{0}};
  clmg_status status = clmg_fe_mark_dirichlet(space, problem, *mask, *tag_of, &error);
  if (status != CLMG_SUCCESS)
    return host_failure(b->context, status, &error);
  return upload_mask(b->context, *mask, current);
}

clmg_status clmg_fe_poisson_hierarchy_device(clmg_context *context, const clmg_mesh *coarse,
                                             int num_levels, int degree,
                                             const clmg_poisson_problem *problem,
                                             clmg_fe_device_hierarchy *out) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (!out)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  clmg_error error = {{0}};
  if (!coarse)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "the coarse mesh is NULL");
  if (coarse->cell_type != CLMG_CELL_TENSOR) {
    clmg_status refused = clmg_fe_refuse_simplices(
        coarse, "clmg_fe_poisson_hierarchy_device (Q1/Q2 elements)", &error);
    return host_failure(context, refused, &error);
  }
  if (num_levels < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "num_levels is %d (at least 1 expected)",
                     num_levels);
  clmg_status scale = clmg_mesh_check_scale(coarse, &error);
  if (scale != CLMG_SUCCESS)
    return host_failure(context, scale, &error);
  if (degree != 1 && degree != 2)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "degree %d is not supported (1 or 2 expected)", degree);
  if (coarse->dim != 2 && coarse->dim != 3)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "the mesh is %dD (2 or 3 expected)",
                     coarse->dim);
  const clmg_poisson_problem no_problem = {0};
  if (!problem)
    problem = &no_problem;

  size_t levels = (size_t)num_levels;
  clmg_fe_device_hierarchy h = {0};
  h.num_levels = num_levels;
  h.degree = degree;
  h.meshes = calloc(levels, sizeof *h.meshes);
  h.spaces = calloc(levels, sizeof *h.spaces);
  h.a = calloc(levels, sizeof *h.a);
  h.p = calloc(levels, sizeof *h.p);
  h.r = calloc(levels, sizeof *h.r);
  builder b;
  clmg_status status = builder_init(&b, context, coarse->dim, degree);
  /* doubles for the coordinates, or the host refines and numbers */
  const int on_device = clmg_device_mesh_can_refine(context);
  device_level previous = {0}, current = {0};
  uint8_t *mask = NULL;
  int32_t *tag_of = NULL;
  clmg_vector *g = NULL; /* on the finest level's DOFs */
  double *load = NULL;
  if (status == CLMG_SUCCESS && (!h.meshes || !h.spaces || !h.a || !h.p || !h.r))
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate a hierarchy of %d levels", num_levels);
  if (status == CLMG_SUCCESS) {
    status = clmg_mesh_copy(coarse, &h.meshes[0], &error);
    if (status != CLMG_SUCCESS)
      status = host_failure(context, status, &error);
  }
  double mark = clmg_seconds_now(); /* the end of the last phase timed */
  for (size_t level = 0; level < levels && status == CLMG_SUCCESS; level++) {
    const int finest = level + 1 == levels;
    status = level_mesh(&b, &h, level, on_device, &previous, &current);
    h.refine_s += lap(&mark);
    if (status == CLMG_SUCCESS)
      status =
          on_device ? number_level(&b, NULL, 0, &current) : host_numbering(&b, &h, level, &current);
    h.number_s += lap(&mark);
    if (status == CLMG_SUCCESS && on_device)
      status = device_dirichlet(&b, &h, problem, finest, &current, &g, &load);
    if (status == CLMG_SUCCESS && !on_device)
      status = host_dirichlet(&b, &h.spaces[level], problem, &current, &mask, &tag_of);
    if (status == CLMG_SUCCESS && !on_device && finest)
      status = finest_level_data(&b, &h.spaces[level], problem, mask, tag_of, &g, &load);
    h.dirichlet_s += lap(&mark);
    if (status == CLMG_SUCCESS)
      status = assemble_level(&b, &current, problem->source ? 0.0 : problem->source_constant,
                              finest ? g : NULL, load, &h.a[level], &h.b, &h.x0);
    if (status == CLMG_SUCCESS && level > 0) {
      transfer_levels t = {&b, &previous, &current};
      status = clmg_csr_device_build_rows(context, "fe_hierarchy", b.options, "fe_prolongation",
                                          current.num_dofs, previous.num_dofs, b.precision,
                                          prolongation_arguments, &t, &h.p[level]);
      if (status == CLMG_SUCCESS)
        status = clmg_csr_device_transpose(context, &h.p[level], &h.r[level]);
    }
    device_level_free(&previous);
    previous = current;
    memset(&current, 0, sizeof current);
    if (status == CLMG_SUCCESS) /* the level's kernels, before the next refinement */
      status = clmg_finish(context);
    h.device_s += lap(&mark);
  }
  /* the finest level stays on the device until it is fetched */
  if (status == CLMG_SUCCESS && on_device) {
    h.device_finest = calloc(1, sizeof *h.device_finest);
    if (!h.device_finest) {
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory");
    } else {
      h.device_finest->mesh = previous.mesh;
      h.device_finest->eliminated = previous.eliminated;
      memset(&previous.mesh, 0, sizeof previous.mesh);
      previous.eliminated = NULL;
    }
  }
  device_level_free(&previous);
  device_level_free(&current);
  builder_free(&b);
  free(tag_of);
  clmg_vector_destroy(g);
  free(load);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  if (status != CLMG_SUCCESS) {
    free(mask);
    clmg_fe_device_hierarchy_free(&h);
    return status;
  }
  if (!on_device)
    h.is_dirichlet = mask;
  else
    free(mask);
  *out = h;
  return CLMG_SUCCESS;
}
