/* The Crouzeix-Raviart Stokes system's CSR pattern and constant values
 * made on the device (clmg_stokes_system_device; kernels in
 * cl/stokes_system.cl): the cells of each edge by the device adjacency
 * (lib/mesh/mesh_device.c), each triangle's area and gradients, then one
 * work-item per row counts its entries, a device scan makes the offsets,
 * and the same rows write their sorted columns and values. The arrays are
 * clmg_stokes_assemble_host's bit for bit (the same arithmetic, each entry
 * summed over its cells in the host's order). What crosses the bus: the
 * coordinates, cells, cell edges and Dirichlet flags up, the entry count
 * and two failure flags down. */
#include "flow/stokes_internal.h"
#include "la/internal.h"
#include "mesh/mesh_device.h"

#include <limits.h>
#include <stdlib.h>

/* Kernel arguments from stokes_system_rows's row launch. */
typedef struct system_rows {
  size_t n, num_edges;
  const clmg_vector *start, *list, *cell_edges, *dirichlet, *geometry;
  int newton;
  double viscosity, reaction;
  clmg_vector *too_many;
} system_rows;

static clmg_status launch_rows(clmg_context *context, const char *options, const system_rows *r,
                               unsigned fill, clmg_vector *length, const clmg_csr_device *a) {
  clmg_kernel_args args;
  clmg_status status =
      clmg_args_for_kernel(context, "stokes_system", options, "stokes_system_rows", &args);
  if (status != CLMG_SUCCESS)
    return status;
  unsigned newton = r->newton != 0;
  clmg_arg_ulong(&args, r->n);
  clmg_arg_ulong(&args, r->num_edges);
  clmg_arg_buffer(&args, r->start->buffer);
  clmg_arg_buffer(&args, r->list->buffer);
  clmg_arg_buffer(&args, r->cell_edges->buffer);
  clmg_arg_buffer(&args, r->dirichlet->buffer);
  clmg_arg_raw(&args, sizeof(cl_uint), &newton);
  clmg_arg_raw(&args, sizeof(cl_uint), &fill);
  clmg_arg_buffer(&args, length->buffer);
  clmg_arg_buffer(&args, fill ? a->row_ptr->buffer : length->buffer);
  clmg_arg_buffer(&args, fill ? a->col->buffer : length->buffer);
  clmg_arg_buffer(&args, fill ? a->val->buffer : r->geometry->buffer);
  clmg_arg_buffer(&args, r->geometry->buffer);
  clmg_arg_real(&args, CLMG_DOUBLE, r->viscosity);
  clmg_arg_real(&args, CLMG_DOUBLE, r->reaction);
  clmg_arg_buffer(&args, r->too_many->buffer);
  return clmg_launch_args(&args, r->n);
}

/* Reads a device flag (an int32 left at INT_MAX when nothing was flagged). */
static clmg_status read_flag(const clmg_vector *flag, int32_t *value) {
  return clmg_vector_download(flag, value);
}

clmg_status clmg_stokes_system_device(clmg_context *context, const clmg_mesh *mesh,
                                      const clmg_triangle_edges *edges,
                                      const clmg_stokes_problem *problem, clmg_csr_device *out) {
  if (!context || !out)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *out = (clmg_csr_device){0};
  clmg_clear_message(context);
  clmg_error error = {{0}};
  clmg_stokes_problem defaults;
  if (!problem) {
    clmg_stokes_problem_defaults(&defaults);
    problem = &defaults;
  }
  clmg_status status = clmg_triangle_edges_check(mesh, edges, "the edges", &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "Stokes system on the device: %s", error.message);
  if (!clmg_context_device(context)->has_fp64)
    return clmg_fail(context, CLMG_ERROR_UNSUPPORTED,
                     "Stokes system on the device: the device has no double precision");
  const size_t ne = edges->num_edges, nc = mesh->num_cells, n = 2 * ne + nc;
  if (nc == 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Stokes system on the device: the mesh has no cells");
  uint8_t *mask = NULL;
  status = clmg_stokes_dirichlet_mask(mesh, edges, problem, &mask, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "Stokes system on the device: %s", error.message);
  uint32_t *flags = clmg_alloc_array(2 * ne + 1, sizeof *flags);
  if (!flags) {
    free(mask);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "Stokes system on the device: no host memory for %zu flags", 2 * ne);
  }
  for (size_t i = 0; i < 2 * ne; i++)
    flags[i] = mask[i];
  free(mask);

  const char *options = clmg_real_options(context, CLMG_DOUBLE);
  const int32_t none = INT32_MAX;
  clmg_vector *coords = NULL, *cells = NULL, *cell_edges = NULL, *dirichlet = NULL;
  clmg_vector *geometry = NULL, *bad = NULL, *too_many = NULL, *start = NULL, *list = NULL;
  clmg_vector *length = NULL;
  clmg_csr_device a = {.rows = n, .cols = n};
  status = clmg_vector_create_from_host(context, CLMG_DOUBLE, 2 * mesh->num_vertices, mesh->coords,
                                        &coords);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, 3 * nc, mesh->cells, &cells);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_from_host(context, CLMG_INT32, 3 * nc, edges->cell_edges, &cell_edges);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_UINT32, 2 * ne + 1, flags, &dirichlet);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, 1, &none, &bad);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, 1, &none, &too_many);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_DOUBLE, 7 * nc, &geometry);
  if (status == CLMG_SUCCESS) {
    clmg_kernel_args args;
    status = clmg_args_for_kernel(context, "stokes_system", options, "stokes_cell_geometry", &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, nc);
      clmg_arg_buffer(&args, cells->buffer);
      clmg_arg_buffer(&args, coords->buffer);
      clmg_arg_buffer(&args, geometry->buffer);
      clmg_arg_buffer(&args, bad->buffer);
      status = clmg_launch_args(&args, nc);
    }
  }
  /* the cells of each edge, ascending (entries 3 cell + local) */
  if (status == CLMG_SUCCESS)
    status = clmg_device_adjacency(context, 2, cell_edges, ne, &start, &list);
  system_rows rows = {.n = n,
                      .num_edges = ne,
                      .start = start,
                      .list = list,
                      .cell_edges = cell_edges,
                      .dirichlet = dirichlet,
                      .geometry = geometry,
                      .newton = problem->newton,
                      .viscosity = problem->viscosity,
                      .reaction = problem->reaction,
                      .too_many = too_many};
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, n, &length);
  if (status == CLMG_SUCCESS)
    status = launch_rows(context, options, &rows, 0, length, NULL);
  int32_t bad_cell = none, bad_edge = none;
  if (status == CLMG_SUCCESS)
    status = read_flag(bad, &bad_cell);
  if (status == CLMG_SUCCESS)
    status = read_flag(too_many, &bad_edge);
  if (status == CLMG_SUCCESS && bad_cell != none)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "Stokes system on the device: cell %d is inverted or degenerate: "
                       "triangles must list their vertices counter-clockwise",
                       (int)bad_cell);
  if (status == CLMG_SUCCESS && bad_edge != none)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "Stokes system on the device: edge %d has more than two triangles",
                       (int)bad_edge);
  size_t nnz = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, length, &a.row_ptr, &nnz);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, nnz ? nnz : 1, &a.col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_DOUBLE, nnz ? nnz : 1, &a.val);
  if (status == CLMG_SUCCESS)
    status = launch_rows(context, options, &rows, 1, length, &a);
  clmg_vector_destroy(coords);
  clmg_vector_destroy(cells);
  clmg_vector_destroy(cell_edges);
  clmg_vector_destroy(dirichlet);
  clmg_vector_destroy(geometry);
  clmg_vector_destroy(bad);
  clmg_vector_destroy(too_many);
  clmg_vector_destroy(start);
  clmg_vector_destroy(list);
  clmg_vector_destroy(length);
  free(flags);
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&a);
    return status;
  }
  *out = a;
  return CLMG_SUCCESS;
}
