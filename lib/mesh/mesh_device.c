/* Quadrilateral and hexahedral meshes on the device (see mesh_device.h;
 * kernels in cl/mesh_device.cl).
 *
 * The host refines a mesh in three passes over its cells and looks up
 * every edge and face in the cells around a vertex; a hierarchy of ten
 * levels spends most of its setup there (CIRCLE Q1 level 10: 89 of 290 ms
 * on the H200's host, the uploads of the levels another 30). On the device
 * each pass is a kernel over the cells: the first cell that has an entity
 * owns it, a scan over the cells' counts of owned edges and faces numbers
 * them, and the other cells read their numbers from the owner. What
 * crosses the bus per level is a few flags and totals. */
#include "mesh/mesh_device.h"

#include "fe/fe_internal.h"
#include "mesh/mesh_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t nodes_per_cell(int dim) {
  return dim == 2 ? 9 : 27;
}

static clmg_status get_kernel(clmg_context *context, int dim, const char *name,
                              clmg_kernel_args *args) {
  char options[192];
  clmg_dtype real = clmg_context_device(context)->has_fp64 ? CLMG_DOUBLE : CLMG_FLOAT;
  snprintf(options, sizeof options, "%s -DMESH_DIM=%d", clmg_real_options(context, real), dim);
  return clmg_args_for_kernel(context, "mesh_device", options, name, args);
}

int clmg_device_mesh_can_refine(const clmg_context *context) {
  return clmg_context_device((clmg_context *)context)->has_fp64;
}

clmg_status clmg_device_adjacency(clmg_context *context, int dim, const clmg_vector *targets,
                                  size_t num_targets, clmg_vector **start, clmg_vector **list) {
  *start = *list = NULL;
  size_t entries = clmg_vector_length(targets), total = 0;
  clmg_vector *count = NULL;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, num_targets, &count);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(count, 0.0);
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "adjacency_count", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, entries);
    clmg_arg_buffer(&args, targets->buffer);
    clmg_arg_buffer(&args, count->buffer);
    status = clmg_launch_args(&args, entries);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, count, start, &total);
  /* the counts are the fill's cursors, taken down to 0 */
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT64, total, list);
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "adjacency_fill", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, entries);
    clmg_arg_buffer(&args, targets->buffer);
    clmg_arg_buffer(&args, (*start)->buffer);
    clmg_arg_buffer(&args, count->buffer);
    clmg_arg_buffer(&args, (*list)->buffer);
    status = clmg_launch_args(&args, entries);
  }
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "adjacency_sort", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, num_targets);
    clmg_arg_buffer(&args, (*start)->buffer);
    clmg_arg_buffer(&args, (*list)->buffer);
    status = clmg_launch_args(&args, num_targets);
  }
  clmg_vector_destroy(count);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*start);
    clmg_vector_destroy(*list);
    *start = *list = NULL;
  }
  return status;
}

/* The shapes as cl/mesh_device.cl reads them: tag, kind (0 flat, 1
 * circle, 2 cylinder), centre, axis, radius. */
enum { SHAPE_VALUES = 9 };
static clmg_status upload_shapes(clmg_context *context, clmg_device_mesh *mesh) {
  if (mesh->num_shapes == 0)
    return CLMG_SUCCESS;
  double *values = clmg_alloc_array(mesh->num_shapes, SHAPE_VALUES * sizeof *values);
  if (!values)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for %zu shapes",
                     mesh->num_shapes);
  for (size_t s = 0; s < mesh->num_shapes; s++) {
    const clmg_boundary_shape *shape = &mesh->shapes[s];
    double *v = values + s * SHAPE_VALUES;
    v[0] = shape->tag;
    v[1] = shape->kind == CLMG_SHAPE_CIRCLE ? 1.0 : shape->kind == CLMG_SHAPE_CYLINDER ? 2.0 : 0.0;
    for (int d = 0; d < 3; d++) {
      v[2 + d] = shape->center[d];
      v[5 + d] = shape->axis[d];
    }
    v[8] = shape->radius;
  }
  clmg_status status = clmg_vector_create_from_host(
      context, CLMG_DOUBLE, mesh->num_shapes * SHAPE_VALUES, values, &mesh->shape_values);
  free(values);
  return status;
}

clmg_status clmg_device_mesh_upload(clmg_context *context, const clmg_mesh *mesh,
                                    clmg_dtype precision, clmg_device_mesh *out) {
  memset(out, 0, sizeof *out);
  if (mesh->cell_type != CLMG_CELL_TENSOR)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "device meshes hold quadrilaterals and hexahedra only");
  const size_t corners = clmg_mesh_vertices_per_cell(mesh),
               face_corners = clmg_mesh_vertices_per_face(mesh);
  out->dim = mesh->dim;
  out->num_vertices = mesh->num_vertices;
  out->num_cells = mesh->num_cells;
  out->num_boundary_faces = mesh->num_boundary_faces;
  out->shapes = mesh->shapes;
  out->num_shapes = mesh->shapes ? mesh->num_shapes : 0;
  clmg_status status = clmg_vector_create_from_host(
      context, precision, mesh->num_vertices * (size_t)mesh->dim, mesh->coords, &out->coords);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, mesh->num_cells * corners,
                                          mesh->cells, &out->cells);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_from_host(context, CLMG_INT32, mesh->num_boundary_faces * face_corners,
                                     mesh->boundary_faces, &out->faces);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, mesh->num_boundary_faces,
                                          mesh->boundary_face_tag, &out->face_tags);
  if (status == CLMG_SUCCESS && precision == CLMG_DOUBLE)
    status = upload_shapes(context, out);
  if (status != CLMG_SUCCESS)
    clmg_device_mesh_free(out);
  return status;
}

void clmg_device_mesh_free(clmg_device_mesh *mesh) {
  if (!mesh)
    return;
  clmg_vector_destroy(mesh->coords);
  clmg_vector_destroy(mesh->cells);
  clmg_vector_destroy(mesh->faces);
  clmg_vector_destroy(mesh->face_tags);
  clmg_vector_destroy(mesh->start);
  clmg_vector_destroy(mesh->list);
  clmg_vector_destroy(mesh->nodes);
  clmg_vector_destroy(mesh->node_coords);
  clmg_vector_destroy(mesh->shape_values);
  memset(mesh, 0, sizeof *mesh);
}

clmg_status clmg_device_mesh_adjacency(clmg_context *context, clmg_device_mesh *mesh) {
  if (mesh->start)
    return CLMG_SUCCESS;
  return clmg_device_adjacency(context, mesh->dim, mesh->cells, mesh->num_vertices, &mesh->start,
                               &mesh->list);
}

static clmg_status upload_node_table(clmg_context *context, int dim, clmg_vector **table) {
  int32_t values[CLMG_TENSOR_NODE_TABLE_SIZE];
  size_t count = clmg_tensor_node_table(dim, values);
  return clmg_vector_create_from_host(context, CLMG_INT32, count, values, table);
}

/* Offsets of per-cell counts and their total, or nothing for none (2D
 * faces). */
static clmg_status count_offsets(clmg_context *context, const clmg_vector *counts, int wanted,
                                 clmg_vector **offsets, size_t *total) {
  *offsets = NULL;
  *total = 0;
  return wanted ? clmg_offsets_from_counts(context, counts, offsets, total) : CLMG_SUCCESS;
}

clmg_status clmg_device_mesh_number_nodes(clmg_context *context, clmg_device_mesh *mesh) {
  if (mesh->nodes && mesh->node_coords)
    return CLMG_SUCCESS;
  /* (a refinement moved the coordinates to its fine mesh: number again) */
  clmg_vector_destroy(mesh->nodes);
  mesh->nodes = NULL;
  const int dim = mesh->dim;
  const size_t cells = mesh->num_cells, per_cell = nodes_per_cell(dim);
  clmg_vector *table = NULL, *owned = NULL, *edge_count = NULL, *face_count = NULL,
              *edge_start = NULL, *face_start = NULL;
  size_t edges = 0, faces = 0;
  clmg_kernel_args args;
  clmg_status status = clmg_device_mesh_adjacency(context, mesh);
  if (status == CLMG_SUCCESS)
    status = upload_node_table(context, dim, &table);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, cells, &owned);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, cells, &edge_count);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, cells, &face_count);
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "mesh_own_entities", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, cells);
    clmg_arg_buffer(&args, mesh->cells->buffer);
    clmg_arg_buffer(&args, mesh->start->buffer);
    clmg_arg_buffer(&args, mesh->list->buffer);
    clmg_arg_buffer(&args, table->buffer);
    clmg_arg_buffer(&args, owned->buffer);
    clmg_arg_buffer(&args, edge_count->buffer);
    clmg_arg_buffer(&args, face_count->buffer);
    status = clmg_launch_args(&args, cells);
  }
  if (status == CLMG_SUCCESS)
    status = count_offsets(context, edge_count, 1, &edge_start, &edges);
  if (status == CLMG_SUCCESS)
    status = count_offsets(context, face_count, dim == 3, &face_start, &faces);
  const size_t total = mesh->num_vertices + edges + faces + cells;
  if (status == CLMG_SUCCESS && total > (size_t)INT32_MAX)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "the degree-2 nodes of a mesh with %zu cells pass the 32-bit index limit %d",
                       cells, INT32_MAX);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, cells * per_cell, &mesh->nodes);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_unset(context, CLMG_DOUBLE, total * (size_t)dim, &mesh->node_coords);
  clmg_vector *head = NULL; /* the vertices keep their coordinates */
  if (status == CLMG_SUCCESS && mesh->num_vertices > 0)
    status = clmg_vector_view(mesh->node_coords, 0, mesh->num_vertices * (size_t)dim, &head);
  if (status == CLMG_SUCCESS && head)
    status = clmg_copy(mesh->coords, head);
  clmg_vector_destroy(head);
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "mesh_number_nodes", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, cells);
    clmg_arg_buffer(&args, mesh->cells->buffer);
    clmg_arg_buffer(&args, mesh->coords->buffer);
    clmg_arg_ulong(&args, mesh->num_vertices);
    clmg_arg_ulong(&args, edges);
    clmg_arg_ulong(&args, faces);
    clmg_arg_buffer(&args, owned->buffer);
    clmg_arg_buffer(&args, edge_start->buffer);
    clmg_arg_buffer(&args, (face_start ? face_start : edge_start)->buffer);
    clmg_arg_buffer(&args, table->buffer);
    clmg_arg_buffer(&args, mesh->nodes->buffer);
    clmg_arg_buffer(&args, mesh->node_coords->buffer);
    status = clmg_launch_args(&args, cells);
  }
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "mesh_resolve_nodes", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, cells);
    clmg_arg_buffer(&args, mesh->cells->buffer);
    clmg_arg_buffer(&args, mesh->start->buffer);
    clmg_arg_buffer(&args, mesh->list->buffer);
    clmg_arg_buffer(&args, owned->buffer);
    clmg_arg_buffer(&args, table->buffer);
    clmg_arg_buffer(&args, mesh->nodes->buffer);
    status = clmg_launch_args(&args, cells);
  }
  if (status == CLMG_SUCCESS)
    mesh->num_nodes = total;
  /* the kernels have read the counts and offsets before anything queued
   * after them runs: in-order queue */
  clmg_vector_destroy(table);
  clmg_vector_destroy(owned);
  clmg_vector_destroy(edge_count);
  clmg_vector_destroy(face_count);
  clmg_vector_destroy(edge_start);
  clmg_vector_destroy(face_start);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(mesh->nodes);
    clmg_vector_destroy(mesh->node_coords);
    mesh->nodes = mesh->node_coords = NULL;
  }
  return status;
}

/* One int32 on the device, set to INT32_MAX: a kernel's "first bad index"
 * (atomic_min). */
static clmg_status create_flags(clmg_context *context, size_t count, clmg_vector **flags) {
  clmg_status status = clmg_vector_create_unset(context, CLMG_INT32, count, flags);
  return status == CLMG_SUCCESS ? clmg_vector_fill(*flags, (double)INT32_MAX) : status;
}

/* Element `index` of an int32 device vector. */
static clmg_status read_int(const clmg_vector *vector, size_t index, int32_t *value) {
  clmg_vector *one = NULL;
  clmg_status status = clmg_vector_view((clmg_vector *)vector, index, 1, &one);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(one, value);
  clmg_vector_destroy(one);
  return status;
}

static const clmg_boundary_shape *shape_of_tag(const clmg_device_mesh *mesh, int32_t tag) {
  for (size_t s = 0; s < mesh->num_shapes; s++)
    if (mesh->shapes[s].tag == tag && mesh->shapes[s].kind != CLMG_SHAPE_NONE)
      return &mesh->shapes[s];
  return NULL;
}

/* The fine mesh's new boundary faces and projected vertices, and the
 * screen of the children; flags[0], [1] and [2] get the first bad face,
 * vertex and unclear parent. marks: per new vertex, 1 + the face whose
 * shape it goes onto (0: none). */
static clmg_status launch_refinement_checks(clmg_context *context, const clmg_device_mesh *coarse,
                                            clmg_device_mesh *fine, clmg_vector *marks,
                                            clmg_vector *flags) {
  const int dim = coarse->dim;
  const size_t faces = coarse->num_boundary_faces,
               new_vertices = fine->num_vertices - coarse->num_vertices;
  const cl_uint shapes = (cl_uint)coarse->num_shapes;
  const cl_mem shape_values = shapes ? coarse->shape_values->buffer : marks->buffer;
  clmg_kernel_args args;
  clmg_status status = CLMG_SUCCESS;
  if (faces > 0) {
    status = get_kernel(context, dim, "mesh_refine_faces", &args);
    if (status != CLMG_SUCCESS)
      return status;
    clmg_arg_ulong(&args, faces);
    clmg_arg_buffer(&args, coarse->faces->buffer);
    clmg_arg_buffer(&args, coarse->face_tags->buffer);
    clmg_arg_buffer(&args, coarse->cells->buffer);
    clmg_arg_buffer(&args, coarse->start->buffer);
    clmg_arg_buffer(&args, coarse->list->buffer);
    clmg_arg_buffer(&args, coarse->nodes->buffer);
    clmg_arg_ulong(&args, coarse->num_vertices);
    clmg_arg_buffer(&args, shape_values);
    clmg_arg_raw(&args, sizeof shapes, &shapes);
    clmg_arg_buffer(&args, fine->faces->buffer);
    clmg_arg_buffer(&args, fine->face_tags->buffer);
    clmg_arg_buffer(&args, marks->buffer);
    clmg_arg_buffer(&args, flags->buffer);
    status = clmg_launch_args(&args, faces);
  }
  if (status == CLMG_SUCCESS && shapes > 0 && faces > 0) {
    status = get_kernel(context, dim, "mesh_project", &args);
    if (status != CLMG_SUCCESS)
      return status;
    clmg_arg_ulong(&args, new_vertices);
    clmg_arg_ulong(&args, coarse->num_vertices);
    clmg_arg_buffer(&args, marks->buffer);
    clmg_arg_buffer(&args, coarse->face_tags->buffer);
    clmg_arg_buffer(&args, shape_values);
    clmg_arg_raw(&args, sizeof shapes, &shapes);
    clmg_arg_buffer(&args, fine->coords->buffer);
    clmg_arg_buffer(&args, flags->buffer);
    status = clmg_launch_args(&args, new_vertices);
  }
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "mesh_screen_children", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, coarse->num_cells);
    clmg_arg_buffer(&args, coarse->nodes->buffer);
    clmg_arg_buffer(&args, fine->coords->buffer);
    clmg_arg_buffer(&args, flags->buffer);
    status = clmg_launch_args(&args, coarse->num_cells);
  }
  return status;
}

/* The messages of the host's refinement for a bad face or vertex. */
static clmg_status refinement_failure(clmg_context *context, const clmg_device_mesh *coarse,
                                      const clmg_vector *marks, const int32_t *bad) {
  const size_t face_corners = (size_t)1 << (coarse->dim - 1);
  if (bad[0] != INT32_MAX) {
    int32_t first_vertex = -1;
    clmg_status status = read_int(coarse->faces, (size_t)bad[0] * face_corners, &first_vertex);
    return status != CLMG_SUCCESS
               ? status
               : clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                           "boundary face %d (first vertex %d) is not a face of any cell",
                           (int)bad[0], (int)first_vertex);
  }
  int32_t mark = 0, tag = 0;
  clmg_status status = read_int(marks, (size_t)bad[1] - coarse->num_vertices, &mark);
  if (status == CLMG_SUCCESS)
    status = read_int(coarse->face_tags, (size_t)(mark - 1), &tag);
  if (status != CLMG_SUCCESS)
    return status;
  const clmg_boundary_shape *shape = shape_of_tag(coarse, tag);
  return clmg_fail(
      context, CLMG_ERROR_INVALID_ARGUMENT,
      "new vertex %d lies on the %s of the shape of tag %d and cannot be projected onto it",
      (int)bad[1], shape && shape->kind == CLMG_SHAPE_CIRCLE ? "centre" : "axis", (int)tag);
}

/* The host's full check of the children from `first`, the first parent
 * the device's screen did not clear: rare (strongly curved or distorted
 * cells), so the fine mesh comes to the host only then. */
static clmg_status check_children_on_host(clmg_context *context, const clmg_device_mesh *coarse,
                                          const clmg_device_mesh *fine, size_t first) {
  clmg_mesh host = {0};
  int32_t *nodes = clmg_alloc_array(coarse->num_cells, nodes_per_cell(coarse->dim) * sizeof *nodes);
  clmg_status status = nodes ? clmg_device_mesh_download(context, fine, NULL, 0, &host)
                             : clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                         "no host memory to check the refined cells");
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(coarse->nodes, nodes);
  if (status == CLMG_SUCCESS) {
    clmg_error error = {{0}};
    status = clmg_mesh_check_refined_cells(coarse->num_cells, coarse->num_shapes > 0, &host, nodes,
                                           first, &error);
    if (status != CLMG_SUCCESS)
      status = clmg_fail(context, status, "%s", error.message);
  }
  free(nodes);
  clmg_mesh_free(&host);
  return status;
}

clmg_status clmg_device_mesh_refine(clmg_context *context, clmg_device_mesh *coarse,
                                    clmg_device_mesh *fine) {
  memset(fine, 0, sizeof *fine);
  const int dim = coarse->dim;
  const size_t children = (size_t)1 << dim, face_children = (size_t)1 << (dim - 1);
  if (coarse->num_cells > (size_t)INT32_MAX / children)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "refining %zu cells gives more than %d cells (the 32-bit index limit)",
                     coarse->num_cells, INT32_MAX);
  clmg_status status = clmg_device_mesh_number_nodes(context, coarse);
  if (status != CLMG_SUCCESS)
    return status;
  fine->dim = dim;
  fine->num_vertices = coarse->num_nodes;
  fine->num_cells = coarse->num_cells * children;
  fine->num_boundary_faces = coarse->num_boundary_faces * face_children;
  fine->shapes = coarse->shapes;
  fine->num_shapes = coarse->num_shapes;
  fine->coords = coarse->node_coords;
  coarse->node_coords = NULL;
  clmg_vector *table = NULL, *flags = NULL, *marks = NULL;
  clmg_kernel_args args;
  status = upload_node_table(context, dim, &table);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_unset(context, CLMG_INT32, fine->num_cells * children, &fine->cells);
  if (status == CLMG_SUCCESS)
    status = get_kernel(context, dim, "mesh_children", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_ulong(&args, coarse->num_cells);
    clmg_arg_buffer(&args, coarse->nodes->buffer);
    clmg_arg_buffer(&args, table->buffer);
    clmg_arg_buffer(&args, fine->cells->buffer);
    status = clmg_launch_args(&args, coarse->num_cells);
  }
  const size_t face_corners = (size_t)1 << (dim - 1),
               new_vertices = fine->num_vertices - coarse->num_vertices;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, fine->num_boundary_faces * face_corners,
                                      &fine->faces);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_unset(context, CLMG_INT32, fine->num_boundary_faces, &fine->face_tags);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_INT32, new_vertices ? new_vertices : 1, &marks);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(marks, 0.0);
  if (status == CLMG_SUCCESS)
    status = create_flags(context, 3, &flags);
  if (status == CLMG_SUCCESS)
    status = launch_refinement_checks(context, coarse, fine, marks, flags);
  int32_t bad[3] = {INT32_MAX, INT32_MAX, INT32_MAX};
  if (status == CLMG_SUCCESS)
    status = clmg_vector_download(flags, bad);
  if (status == CLMG_SUCCESS && (bad[0] != INT32_MAX || bad[1] != INT32_MAX))
    status = refinement_failure(context, coarse, marks, bad);
  if (status == CLMG_SUCCESS && bad[2] != INT32_MAX)
    status = check_children_on_host(context, coarse, fine, (size_t)bad[2]);
  if (status == CLMG_SUCCESS)
    status = upload_shapes(context, fine);
  clmg_vector_destroy(table);
  clmg_vector_destroy(flags);
  clmg_vector_destroy(marks);
  if (status != CLMG_SUCCESS)
    clmg_device_mesh_free(fine);
  return status;
}

clmg_status clmg_device_mesh_download(clmg_context *context, const clmg_device_mesh *mesh,
                                      const clmg_mesh *origin, int refinements, clmg_mesh *out) {
  memset(out, 0, sizeof *out);
  const int dim = mesh->dim;
  out->dim = dim;
  out->cell_type = CLMG_CELL_TENSOR;
  out->num_vertices = mesh->num_vertices;
  out->num_cells = mesh->num_cells;
  out->num_boundary_faces = mesh->num_boundary_faces;
  out->num_shapes = origin ? origin->num_shapes : 0;
  const int materials = origin && origin->cell_material;
  clmg_status status = CLMG_SUCCESS;
  if (!clmg_mesh_allocate_arrays(out, materials))
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "no host memory for a mesh of %zu cells and %zu vertices", mesh->num_cells,
                       mesh->num_vertices);
  if (status == CLMG_SUCCESS && mesh->num_vertices)
    status = clmg_vector_download_doubles(mesh->coords, out->coords);
  if (status == CLMG_SUCCESS && mesh->num_cells)
    status = clmg_vector_download(mesh->cells, out->cells);
  if (status == CLMG_SUCCESS && mesh->num_boundary_faces)
    status = clmg_vector_download(mesh->faces, out->boundary_faces);
  if (status == CLMG_SUCCESS && mesh->num_boundary_faces)
    status = clmg_vector_download(mesh->face_tags, out->boundary_face_tag);
  if (status == CLMG_SUCCESS && out->shapes)
    memcpy(out->shapes, origin->shapes, origin->num_shapes * sizeof *out->shapes);
  /* children are numbered parent 2^dim + child at every refinement */
  const unsigned shift = (unsigned)(dim * refinements);
  for (size_t k = 0; status == CLMG_SUCCESS && materials && k < mesh->num_cells; k++)
    out->cell_material[k] = origin->cell_material[k >> shift];
  if (status != CLMG_SUCCESS)
    clmg_mesh_free(out);
  return status;
}

clmg_status clmg_device_mesh_dirichlet(clmg_context *context, clmg_device_mesh *mesh,
                                       const clmg_vector *cell_dofs, int degree, size_t num_dofs,
                                       const clmg_poisson_problem *problem, clmg_vector **mask,
                                       clmg_vector **tag_of) {
  *mask = NULL;
  if (tag_of)
    *tag_of = NULL;
  clmg_vector *tags = NULL, *first_cell = NULL, *first_side = NULL;
  const int32_t every_tag = 0;
  const cl_uint num_tags = problem->dirichlet_tags ? (cl_uint)problem->num_dirichlet_tags : 0;
  const cl_uint per_axis = (cl_uint)degree + 1;
  const int passes = tag_of ? 3 : 1;
  clmg_status status = clmg_device_mesh_adjacency(context, mesh);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(context, CLMG_INT32, num_tags ? num_tags : 1,
                                          num_tags ? problem->dirichlet_tags : &every_tag, &tags);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, num_dofs, mask);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(*mask, 0.0);
  if (status == CLMG_SUCCESS)
    status = create_flags(context, num_dofs ? num_dofs : 1, &first_cell);
  if (status == CLMG_SUCCESS && tag_of)
    status = create_flags(context, num_dofs ? num_dofs : 1, &first_side);
  if (status == CLMG_SUCCESS && tag_of)
    status = clmg_vector_create_unset(context, CLMG_INT32, num_dofs, tag_of);
  if (status == CLMG_SUCCESS && tag_of)
    status = clmg_vector_fill(*tag_of, 0.0);
  for (cl_uint pass = 0;
       pass < (cl_uint)passes && status == CLMG_SUCCESS && mesh->num_boundary_faces > 0; pass++) {
    clmg_kernel_args args;
    status = get_kernel(context, mesh->dim, "mesh_dirichlet_dofs", &args);
    if (status != CLMG_SUCCESS)
      break;
    clmg_arg_raw(&args, sizeof pass, &pass);
    clmg_arg_ulong(&args, mesh->num_boundary_faces);
    clmg_arg_buffer(&args, mesh->faces->buffer);
    clmg_arg_buffer(&args, mesh->face_tags->buffer);
    clmg_arg_buffer(&args, tags->buffer);
    clmg_arg_raw(&args, sizeof num_tags, &num_tags);
    clmg_arg_buffer(&args, mesh->cells->buffer);
    clmg_arg_buffer(&args, mesh->start->buffer);
    clmg_arg_buffer(&args, mesh->list->buffer);
    clmg_arg_buffer(&args, cell_dofs->buffer);
    clmg_arg_raw(&args, sizeof per_axis, &per_axis);
    clmg_arg_buffer(&args, (*mask)->buffer);
    clmg_arg_buffer(&args, first_cell->buffer);
    clmg_arg_buffer(&args, (first_side ? first_side : first_cell)->buffer);
    clmg_arg_buffer(&args, (tag_of ? *tag_of : first_cell)->buffer);
    status = clmg_launch_args(&args, mesh->num_boundary_faces);
  }
  clmg_vector_destroy(tags);
  clmg_vector_destroy(first_cell);
  clmg_vector_destroy(first_side);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*mask);
    *mask = NULL;
    if (tag_of) {
      clmg_vector_destroy(*tag_of);
      *tag_of = NULL;
    }
  }
  return status;
}

clmg_status clmg_device_mesh_boundary_values(clmg_context *context, const clmg_device_mesh *mesh,
                                             const clmg_vector *dof_coords, const clmg_vector *mask,
                                             const clmg_vector *tag_of,
                                             const clmg_poisson_problem *problem, clmg_vector **g) {
  const int dim = mesh->dim;
  const size_t n = clmg_vector_length(mask);
  clmg_vector *list = NULL, *points = NULL, *values = NULL;
  size_t count = 0;
  double *host = NULL;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_DOUBLE, n, g);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(*g, 0.0);
  if (status == CLMG_SUCCESS && problem->dirichlet)
    status = clmg_row_list(context, mask, 0, 1, NULL, 0, &list, &count);
  if (status == CLMG_SUCCESS && count > 0)
    status = clmg_vector_create_unset(context, CLMG_DOUBLE, count * (size_t)(dim + 1), &points);
  if (status == CLMG_SUCCESS && count > 0)
    status = get_kernel(context, dim, "mesh_dof_points", &args);
  if (status == CLMG_SUCCESS && count > 0) {
    clmg_arg_ulong(&args, count);
    clmg_arg_buffer(&args, list->buffer);
    clmg_arg_buffer(&args, dof_coords->buffer);
    clmg_arg_buffer(&args, tag_of->buffer);
    clmg_arg_buffer(&args, points->buffer);
    status = clmg_launch_args(&args, count);
  }
  if (status == CLMG_SUCCESS && count > 0) {
    host = clmg_alloc_array(count, (size_t)(dim + 1) * sizeof *host);
    if (!host)
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                         "no host memory for %zu Dirichlet DOFs", count);
  }
  if (status == CLMG_SUCCESS && count > 0)
    status = clmg_vector_download(points, host);
  /* g at each point, in place: the point's first value becomes g */
  for (size_t k = 0; status == CLMG_SUCCESS && k < count; k++) {
    const double *point = host + k * (size_t)(dim + 1);
    host[k] = problem->dirichlet(point, (int32_t)point[dim], problem->dirichlet_data);
  }
  if (status == CLMG_SUCCESS && count > 0)
    status = clmg_vector_create_from_host(context, CLMG_DOUBLE, count, host, &values);
  if (status == CLMG_SUCCESS && count > 0)
    status = get_kernel(context, dim, "mesh_scatter", &args);
  if (status == CLMG_SUCCESS && count > 0) {
    clmg_arg_ulong(&args, count);
    clmg_arg_buffer(&args, list->buffer);
    clmg_arg_buffer(&args, values->buffer);
    clmg_arg_buffer(&args, (*g)->buffer);
    status = clmg_launch_args(&args, count);
  }
  free(host);
  clmg_vector_destroy(list);
  clmg_vector_destroy(points);
  clmg_vector_destroy(values);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(*g);
    *g = NULL;
  }
  return status;
}

clmg_status clmg_mesh_refine_on_device(clmg_context *context, const clmg_mesh *coarse, int times,
                                       clmg_mesh *fine) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (!fine)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "the fine mesh is NULL");
  if (coarse == fine)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "the fine mesh must not be the coarse mesh");
  memset(fine, 0, sizeof *fine);
  if (!coarse)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "the coarse mesh is NULL");
  if (times < 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "refinements: %d (0 or more expected)",
                     times);
  clmg_error error = {{0}};
  clmg_status status = clmg_mesh_check(coarse, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "%s", error.message);
  if (coarse->cell_type != CLMG_CELL_TENSOR)
    return clmg_fail(context, CLMG_ERROR_UNSUPPORTED,
                     "refinement on the device takes quadrilaterals and hexahedra; this mesh has "
                     "%s (clmg_mesh_refine refines them on the host)",
                     coarse->dim == 2 ? "triangles" : "tetrahedra");
  if (!clmg_device_mesh_can_refine(context))
    return clmg_fail_no_fp64(context, "refinement on the device (double coordinates)");
  clmg_device_mesh levels[2];
  status = clmg_device_mesh_upload(context, coarse, CLMG_DOUBLE, &levels[0]);
  memset(&levels[1], 0, sizeof levels[1]);
  for (int k = 0; k < times && status == CLMG_SUCCESS; k++) {
    clmg_device_mesh *from = &levels[k % 2], *to = &levels[(k + 1) % 2];
    status = clmg_device_mesh_refine(context, from, to);
    clmg_device_mesh_free(from);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_device_mesh_download(context, &levels[times % 2], coarse, times, fine);
  clmg_device_mesh_free(&levels[0]);
  clmg_device_mesh_free(&levels[1]);
  return status;
}
