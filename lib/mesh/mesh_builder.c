/* A mesh under construction, shared by the generators of the benchmark
 * domains (mesh_generators.c, lib/flow/flow_meshes.c): see mesh_internal.h.
 * Host code only. */
#include "mesh/mesh_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clmg_mesh_builder_init(clmg_mesh_builder *builder, int dim, clmg_cell_type cell_type) {
  memset(builder, 0, sizeof *builder);
  builder->dim = dim;
  builder->cell_type = cell_type;
  builder->corners = cell_type == CLMG_CELL_SIMPLEX ? (size_t)dim + 1 : (size_t)1 << dim;
}

void clmg_mesh_builder_free(clmg_mesh_builder *builder) {
  free(builder->coords);
  free(builder->cells);
  builder->coords = NULL;
  builder->cells = NULL;
  builder->num_vertices = builder->vertex_capacity = 0;
  builder->num_cells = builder->cell_capacity = 0;
}

/* Makes room for `extra` more items of `item_bytes` in *array. */
static int reserve(void **array, size_t *capacity, size_t used, size_t extra, size_t item_bytes) {
  if (used + extra <= *capacity)
    return 1;
  size_t wanted = *capacity ? *capacity : 64;
  while (wanted < used + extra)
    wanted *= 2;
  if (wanted > SIZE_MAX / item_bytes)
    return 0;
  void *grown = realloc(*array, wanted * item_bytes);
  if (!grown)
    return 0;
  *array = grown;
  *capacity = wanted;
  return 1;
}

int clmg_mesh_builder_reserve(clmg_mesh_builder *builder, size_t vertices, size_t cells) {
  if (!reserve((void **)&builder->coords, &builder->vertex_capacity, builder->num_vertices,
               vertices, (size_t)builder->dim * sizeof(double)) ||
      !reserve((void **)&builder->cells, &builder->cell_capacity, builder->num_cells, cells,
               builder->corners * sizeof(int32_t))) {
    builder->out_of_memory = 1;
    return 0;
  }
  return 1;
}

int32_t clmg_mesh_builder_add_vertex(clmg_mesh_builder *builder, const double *x) {
  const size_t dim = (size_t)builder->dim;
  if (builder->out_of_memory || builder->num_vertices >= INT32_MAX ||
      !reserve((void **)&builder->coords, &builder->vertex_capacity, builder->num_vertices, 1,
               dim * sizeof(double))) {
    builder->out_of_memory = 1;
    return 0;
  }
  memcpy(builder->coords + builder->num_vertices * dim, x, dim * sizeof(double));
  return (int32_t)builder->num_vertices++;
}

int32_t clmg_mesh_builder_add_vertex_merged(clmg_mesh_builder *builder, const double *x) {
  const size_t dim = (size_t)builder->dim;
  for (size_t v = 0; v < builder->num_vertices; v++) {
    double distance = 0.0;
    for (size_t d = 0; d < dim; d++)
      distance = fmax(distance, fabs(builder->coords[v * dim + d] - x[d]));
    if (distance < 1e-9)
      return (int32_t)v;
  }
  return clmg_mesh_builder_add_vertex(builder, x);
}

void clmg_mesh_builder_add_cell(clmg_mesh_builder *builder, const int32_t *corners) {
  const size_t count = builder->corners;
  if (builder->out_of_memory || !reserve((void **)&builder->cells, &builder->cell_capacity,
                                         builder->num_cells, 1, count * sizeof(int32_t))) {
    builder->out_of_memory = 1;
    return;
  }
  memcpy(builder->cells + builder->num_cells * count, corners, count * sizeof(int32_t));
  builder->num_cells++;
}

/* ---- boundary faces ---- */

/* The faces per cell and corners per face the builder's cells have. */
static void face_shape(const clmg_mesh_builder *builder, int *faces_per_cell, int *face_corners) {
  if (builder->cell_type == CLMG_CELL_SIMPLEX) {
    *faces_per_cell = builder->dim + 1;
    *face_corners = builder->dim;
  } else {
    *faces_per_cell = 2 * builder->dim;
    *face_corners = 1 << (builder->dim - 1);
  }
}

/* The corners of local face `face` of `cell` (clmg_mesh_cell_face's
 * numbering and order). */
static void face_vertices(const clmg_mesh_builder *builder, const int32_t *cell, int face,
                          int32_t *vertices) {
  clmg_mesh shape = {0};
  shape.dim = builder->dim;
  shape.cell_type = builder->cell_type;
  clmg_mesh_cell_face(&shape, cell, face, vertices);
}

typedef struct face_record {
  int32_t key[4]; /* sorted corners, unused -1 */
  size_t slot;    /* cell * faces per cell + local face */
} face_record;

static int compare_face_records(const void *a, const void *b) {
  const face_record *x = a, *y = b;
  for (int i = 0; i < 4; i++)
    if (x->key[i] != y->key[i])
      return x->key[i] < y->key[i] ? -1 : 1;
  return 0;
}

clmg_status clmg_mesh_builder_finish(clmg_mesh_builder *builder, clmg_face_tagger tag_face,
                                     const void *context, const clmg_boundary_shape *shapes,
                                     size_t num_shapes, const char *name, clmg_mesh *out,
                                     clmg_error *error) {
  const int dim = builder->dim;
  int faces_per_cell, face_corners;
  face_shape(builder, &faces_per_cell, &face_corners);
  const size_t num_slots = builder->num_cells * (size_t)faces_per_cell;
  face_record *records = NULL;
  unsigned char *on_boundary = NULL;
  clmg_mesh mesh = {0};
  clmg_status status = CLMG_SUCCESS;
  if (builder->out_of_memory) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the %s mesh being generated", name);
    goto done;
  }
  records = clmg_alloc_array(num_slots, sizeof *records);
  on_boundary = clmg_alloc_zeroed_array(num_slots, 1);
  if (!records || !on_boundary) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot allocate the faces of %zu generated cells (%s mesh)",
                            builder->num_cells, name);
    goto done;
  }
  for (size_t slot = 0; slot < num_slots; slot++) {
    const int32_t *cell = builder->cells + slot / (size_t)faces_per_cell * builder->corners;
    face_record *record = &records[slot];
    for (int m = 0; m < 4; m++)
      record->key[m] = -1;
    face_vertices(builder, cell, (int)(slot % (size_t)faces_per_cell), record->key);
    for (int i = 1; i < face_corners; i++)
      for (int j = i; j > 0 && record->key[j - 1] > record->key[j]; j--) {
        int32_t swap = record->key[j];
        record->key[j] = record->key[j - 1];
        record->key[j - 1] = swap;
      }
    record->slot = slot;
  }
  qsort(records, num_slots, sizeof *records, compare_face_records);
  size_t num_faces = 0;
  for (size_t i = 0; i < num_slots;) {
    size_t run = 1;
    while (i + run < num_slots && compare_face_records(&records[i], &records[i + run]) == 0)
      run++;
    if (run == 1) {
      on_boundary[records[i].slot] = 1;
      num_faces++;
    }
    i += run;
  }

  mesh.dim = dim;
  mesh.cell_type = builder->cell_type;
  mesh.num_vertices = builder->num_vertices;
  mesh.num_cells = builder->num_cells;
  mesh.num_boundary_faces = num_faces;
  mesh.boundary_faces =
      clmg_alloc_array(num_faces, (size_t)face_corners * sizeof *mesh.boundary_faces);
  mesh.boundary_face_tag = clmg_alloc_array(num_faces, sizeof *mesh.boundary_face_tag);
  mesh.num_shapes = num_shapes;
  mesh.shapes = num_shapes ? malloc(num_shapes * sizeof *shapes) : NULL;
  if (!mesh.boundary_faces || !mesh.boundary_face_tag || (num_shapes && !mesh.shapes)) {
    status =
        clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "cannot allocate the %zu boundary faces of the %s mesh", num_faces, name);
    goto done;
  }
  if (num_shapes)
    memcpy(mesh.shapes, shapes, num_shapes * sizeof *shapes);
  size_t face = 0;
  for (size_t slot = 0; slot < num_slots; slot++) {
    if (!on_boundary[slot])
      continue;
    const int32_t *cell = builder->cells + slot / (size_t)faces_per_cell * builder->corners;
    int32_t *vertices = mesh.boundary_faces + face * (size_t)face_corners;
    face_vertices(builder, cell, (int)(slot % (size_t)faces_per_cell), vertices);
    const double *positions[4];
    for (int m = 0; m < face_corners; m++)
      positions[m] = builder->coords + (size_t)vertices[m] * (size_t)dim;
    int32_t tag = tag_face(context, positions, face_corners);
    if (tag < 1) {
      /* a bug of the construction, not of the caller */
      status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "generating the %s mesh: boundary face %zu (from vertex %d at "
                              "(%g, %g)) lies on no part of the domain's boundary",
                              name, face, (int)vertices[0], positions[0][0], positions[0][1]);
      goto done;
    }
    mesh.boundary_face_tag[face] = tag;
    face++;
  }
  /* The builder's arrays become the mesh's. */
  mesh.coords = builder->coords;
  mesh.cells = builder->cells;
  builder->coords = NULL;
  builder->cells = NULL;
  status = clmg_mesh_check(&mesh, error);

done:
  free(records);
  free(on_boundary);
  clmg_mesh_builder_free(builder);
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(&mesh);
    return status;
  }
  *out = mesh;
  return CLMG_SUCCESS;
}
