/* Device P1 assembly after Fu et al. 2014, section 4 (kernels in
 * cl/assembly.cl).
 *
 * Patches are contiguous row ranges, cut greedily along the numbering so
 * that each patch's columns, values, row offsets and loads fit the local
 * memory budget: then a patch's part of the CSR arrays is one contiguous
 * block (coalesced load and write-back, no per-row tables), and a vertex's
 * row in the patch is its index minus the patch's first row. The paper
 * renumbers the mesh by patches first; here the numbering is the caller's,
 * so a locality-preserving numbering gives compact patches and a scattered
 * one sends most entries through the slots (still correct).
 *
 * Cells belong to the patch of their first vertex (the paper's rule). The
 * host lays out, once per mesh, each cell's slots (for its rows outside
 * its patch) and, per CSR entry and per b row that receives slots, the list
 * of them: the second kernel then sums each entry's slots into place, one
 * work-item per entry, so neither kernel needs global atomics. The gather
 * path (no local atomics) is the same with every row "outside". */
#include "mesh/mesh_internal.h"
#include "fe/p1_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Auto patch budget: half the local memory, at most this (two work-groups
 * per compute unit on GPUs that report 48 KiB). */
#define PATCH_BYTES_MAX (24u * 1024u)

/* Target entries and their slots, grouped by target: target position[j]
 * (all of 0..count-1 when identity) sums slot_index[first[j] .. first[j+1]). */
typedef struct gather_list {
  size_t count;
  int identity;
  clmg_vector *position; /* int64; NULL when identity */
  clmg_vector *first;    /* uint32, count + 1 */
  clmg_vector *slot_index;
} gather_list;

struct clmg_p1_assembler {
  clmg_context *context;
  clmg_p1_assembler_options options;
  clmg_dtype precision;
  clmg_p1_path path;
  int dim;
  size_t num_vertices, num_cells, nnz, num_patches;
  size_t max_patch_rows, max_patch_bytes, group_size, boundary_cells, slots_count;

  /* materials: the distinct ids (sorted) and the first cell of each */
  size_t num_materials;
  double *sigma_uploaded; /* the sigma table on the device, NULL before the first */
  int32_t *material_ids;
  size_t *material_first_cell;

  /* host copies of the boundary faces and their tags (Dirichlet masks) */
  size_t num_faces;
  int32_t *faces, *face_tags;

  clmg_vector *coords;        /* real, dim * num_vertices */
  clmg_vector *cell_vertex;   /* int32, (dim + 1) * num_cells, ordered by patch */
  clmg_vector *cell_slot;     /* uint32, num_cells */
  clmg_vector *cell_material; /* int32, num_cells; NULL: one material */
  clmg_vector *first_row;     /* uint32, num_patches + 1 */
  clmg_vector *first_cell;    /* uint32, num_patches + 1 */
  clmg_vector *row_ptr;       /* int64, num_vertices + 1 */
  clmg_vector *col;           /* int32, nnz */
  clmg_vector *values;        /* real, nnz */
  clmg_vector *slots;         /* real, slots_count */
  clmg_vector *sigma_table;   /* real, num_materials */
  clmg_vector *dirichlet;     /* uint32, num_vertices: made on first use */
  int32_t *marked_tags;       /* the Dirichlet tags a->dirichlet marks (NULL: none yet) */
  size_t num_marked_tags;
  int any_marked;
  /* rows path: row v's cells, row_cells[row_cells_start[v] ..
   * row_cells_start[v + 1]) = cell * corners + v's place in the cell */
  clmg_vector *row_cells_start; /* uint32, num_vertices + 1 */
  clmg_vector *row_cells;       /* uint32, corners * num_cells */
  gather_list matrix_list, load_list;
};

const char *clmg_p1_path_name(clmg_p1_path path) {
  switch (path) {
  case CLMG_P1_PATH_AUTO:
    return "auto";
  case CLMG_P1_PATH_PATCH:
    return "patch";
  case CLMG_P1_PATH_GATHER:
    return "gather";
  case CLMG_P1_PATH_ROWS:
    return "rows";
  }
  return "unknown";
}

void clmg_p1_assembler_options_defaults(clmg_p1_assembler_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  clmg_matrix_options_defaults(&options->matrix);
  options->matrix.format = CLMG_FORMAT_CSR;
  options->path = CLMG_P1_PATH_AUTO;
}

static void gather_list_free(gather_list *list) {
  clmg_vector_destroy(list->position);
  clmg_vector_destroy(list->first);
  clmg_vector_destroy(list->slot_index);
  memset(list, 0, sizeof *list);
}

void clmg_p1_assembler_destroy(clmg_p1_assembler *a) {
  if (!a)
    return;
  clmg_vector *vectors[] = {a->coords,          a->cell_vertex, a->cell_slot,   a->cell_material,
                            a->first_row,       a->first_cell,  a->row_ptr,     a->col,
                            a->values,          a->slots,       a->sigma_table, a->dirichlet,
                            a->row_cells_start, a->row_cells};
  for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; k++)
    clmg_vector_destroy(vectors[k]);
  gather_list_free(&a->matrix_list);
  gather_list_free(&a->load_list);
  free(a->faces);
  free(a->face_tags);
  free(a->material_ids);
  free(a->material_first_cell);
  free(a->sigma_uploaded);
  free(a->marked_tags);
  free(a);
}

/* A device vector of n elements of `type` holding host data. */
static clmg_status upload(clmg_context *context, clmg_dtype type, size_t n, const void *host,
                          clmg_vector **out) {
  clmg_status status = clmg_vector_create(context, type, n, out);
  if (status == CLMG_SUCCESS && n > 0)
    status = clmg_vector_upload(*out, host);
  return status;
}

static int device_has_extension(const clmg_context *context, const char *name) {
  size_t size = 0;
  if (clGetDeviceInfo(context->device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS)
    return 0;
  char *text = malloc(size + 1);
  int found = 0;
  if (text &&
      clGetDeviceInfo(context->device, CL_DEVICE_EXTENSIONS, size, text, NULL) == CL_SUCCESS) {
    text[size] = '\0';
    size_t length = strlen(name);
    for (const char *p = strstr(text, name); p && !found; p = strstr(p + 1, name))
      found = (p == text || p[-1] == ' ') && (p[length] == ' ' || p[length] == '\0');
  }
  free(text);
  return found;
}

static int compare_ids(const void *left, const void *right) {
  int32_t a = *(const int32_t *)left, b = *(const int32_t *)right;
  return (a > b) - (a < b);
}

static size_t material_index(const clmg_p1_assembler *a, int32_t id) {
  size_t low = 0, high = a->num_materials;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (a->material_ids[middle] < id)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

/* The distinct material ids, the first cell of each and each cell's index
 * (cell_index, num_cells, NULL when all cells share one material). */
static clmg_status find_materials(clmg_p1_assembler *a, const clmg_mesh *mesh,
                                  int32_t **cell_index) {
  size_t n = mesh->num_cells;
  *cell_index = NULL;
  int32_t *sorted = clmg_alloc_array(n ? n : 1, sizeof *sorted);
  if (!sorted)
    return clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: material ids");
  for (size_t cell = 0; cell < n; cell++)
    sorted[cell] = clmg_mesh_cell_material(mesh, cell);
  if (n == 0)
    sorted[0] = 1;
  qsort(sorted, n ? n : 1, sizeof *sorted, compare_ids);
  size_t distinct = 0;
  for (size_t k = 0; k < (n ? n : 1); k++)
    if (k == 0 || sorted[k] != sorted[distinct - 1])
      sorted[distinct++] = sorted[k];
  a->num_materials = distinct;
  a->material_ids = sorted;
  a->material_first_cell = clmg_alloc_array(distinct, sizeof *a->material_first_cell);
  if (!a->material_first_cell)
    return clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: material ids");
  for (size_t k = 0; k < distinct; k++)
    a->material_first_cell[k] = SIZE_MAX;
  for (size_t cell = n; cell-- > 0;)
    a->material_first_cell[material_index(a, clmg_mesh_cell_material(mesh, cell))] = cell;
  if (distinct == 1)
    return CLMG_SUCCESS;
  *cell_index = clmg_alloc_array(n, sizeof **cell_index);
  if (!*cell_index)
    return clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: material ids");
  for (size_t cell = 0; cell < n; cell++)
    (*cell_index)[cell] = (int32_t)material_index(a, clmg_mesh_cell_material(mesh, cell));
  return CLMG_SUCCESS;
}

/* Local memory of a patch of `rows` rows and `entries` entries: values,
 * loads, columns, row offsets (cl/assembly.cl, p1_patch_assemble). */
static size_t patch_bytes(size_t rows, size_t entries, size_t real_size) {
  return (entries + rows) * real_size + entries * sizeof(cl_int) + (rows + 1) * sizeof(cl_uint);
}

/* Cuts the rows into patches: *first_row (malloc'ed, patches + 1 entries).
 * Returns 0 when a single row exceeds the budget (row in *bad_row). */
static int cut_patches(const clmg_csr *pattern, size_t budget, size_t real_size,
                       uint32_t *first_row, size_t *num_patches, size_t *bad_row) {
  size_t patches = 0, begin = 0;
  first_row[0] = 0;
  while (begin < pattern->rows) {
    size_t end = begin;
    while (end < pattern->rows &&
           patch_bytes(end + 1 - begin,
                       (size_t)(pattern->row_ptr[end + 1] - pattern->row_ptr[begin]),
                       real_size) <= budget)
      end++;
    if (end == begin) {
      *bad_row = begin;
      return 0;
    }
    first_row[++patches] = (uint32_t)end;
    begin = end;
  }
  *num_patches = patches;
  return 1;
}

/* Groups (target, slot) pairs by target (a counting sort over the targets
 * 0..targets-1) and uploads the list. */
static clmg_status build_gather_list(clmg_context *context, size_t targets, size_t pairs,
                                     const int64_t *target, const uint32_t *slot,
                                     gather_list *list) {
  uint32_t *count = calloc(targets + 1, sizeof *count);
  uint32_t *first = NULL, *slot_index = clmg_alloc_array(pairs, sizeof *slot_index);
  int64_t *position = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!count || !slot_index) {
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: slot lists");
    goto done;
  }
  for (size_t k = 0; k < pairs; k++)
    count[target[k] + 1]++;
  size_t used = 0;
  for (size_t t = 0; t < targets; t++)
    used += count[t + 1] > 0;
  for (size_t t = 0; t < targets; t++)
    count[t + 1] += count[t];
  first = clmg_alloc_array(used + 1, sizeof *first);
  position = clmg_alloc_array(used, sizeof *position);
  if (!first || !position) {
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: slot lists");
    goto done;
  }
  used = 0;
  first[0] = 0;
  for (size_t t = 0; t < targets; t++)
    if (count[t + 1] > count[t]) {
      position[used++] = (int64_t)t;
      first[used] = count[t + 1];
    }
  for (size_t k = 0; k < pairs; k++) /* stable: slots of a target in cell order */
    slot_index[count[target[k]]++] = slot[k];
  list->count = used;
  list->identity = used == targets;
  status = upload(context, CLMG_UINT32, used + 1, first, &list->first);
  if (status == CLMG_SUCCESS)
    status = upload(context, CLMG_UINT32, pairs, slot_index, &list->slot_index);
  if (status == CLMG_SUCCESS && !list->identity)
    status = upload(context, CLMG_INT64, used, position, &list->position);
done:
  free(count);
  free(first);
  free(slot_index);
  free(position);
  return status;
}

/* Cells by patch, their slots and the slot lists; uploads the cell arrays. */
static clmg_status lay_out_cells(clmg_p1_assembler *a, const clmg_mesh *mesh,
                                 const clmg_csr *pattern, const uint32_t *first_row,
                                 const int32_t *material_of_cell) {
  size_t n = a->num_cells, corners = (size_t)a->dim + 1, stride = corners + 1;
  size_t patches = a->num_patches;
  uint32_t *patch_of_row = clmg_alloc_array(a->num_vertices, sizeof *patch_of_row);
  uint32_t *first_cell = calloc(patches + 1, sizeof *first_cell);
  size_t *order = clmg_alloc_array(n, sizeof *order);
  int32_t *cell_vertex = clmg_alloc_array(n * corners, sizeof *cell_vertex);
  uint32_t *cell_slot = clmg_alloc_array(n, sizeof *cell_slot);
  int32_t *cell_material = material_of_cell ? clmg_alloc_array(n, sizeof *cell_material) : NULL;
  int64_t *matrix_target = NULL, *load_target = NULL;
  uint32_t *matrix_slot = NULL, *load_slot = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!patch_of_row || !first_cell || !order || !cell_vertex || !cell_slot ||
      (material_of_cell && !cell_material)) {
    status = clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: cell arrays");
    goto done;
  }
  for (size_t p = 0; p < patches; p++)
    for (uint32_t r = first_row[p]; r < first_row[p + 1]; r++)
      patch_of_row[r] = (uint32_t)p;
  /* counting sort of the cells by the patch of their first vertex */
  for (size_t cell = 0; cell < n; cell++)
    first_cell[patch_of_row[mesh->cells[cell * corners]] + 1]++;
  for (size_t p = 0; p < patches; p++)
    first_cell[p + 1] += first_cell[p];
  {
    uint32_t *fill = clmg_alloc_array(patches + 1, sizeof *fill);
    if (!fill) {
      status = clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: cell arrays");
      goto done;
    }
    memcpy(fill, first_cell, (patches + 1) * sizeof *fill);
    for (size_t cell = 0; cell < n; cell++)
      order[fill[patch_of_row[mesh->cells[cell * corners]]]++] = cell;
    free(fill);
  }
  /* slots: stride per row outside the cell's patch (every row on the
   * gather path), in local vertex order, as the kernels write them */
  int gather = a->path == CLMG_P1_PATH_GATHER;
  uint64_t slots = 0;
  size_t outside_rows = 0;
  for (size_t e = 0; e < n; e++) {
    const int32_t *v = mesh->cells + order[e] * corners;
    uint32_t patch = patch_of_row[v[0]];
    size_t outside = 0;
    for (size_t k = 0; k < corners; k++) {
      cell_vertex[k * n + e] = v[k];
      outside += gather || patch_of_row[v[k]] != patch;
    }
    if (cell_material)
      cell_material[e] = material_of_cell[order[e]];
    cell_slot[e] = (uint32_t)slots;
    slots += outside * stride;
    outside_rows += outside;
    a->boundary_cells += !gather && outside > 0;
    if (slots > UINT32_MAX) {
      status = clmg_fail(a->context, CLMG_ERROR_UNSUPPORTED,
                         "P1 assembler: more than 2^32 slots (use patches and a numbering that "
                         "keeps neighbours close)");
      goto done;
    }
  }
  a->slots_count = (size_t)slots;
  size_t matrix_pairs = outside_rows * corners;
  matrix_target = clmg_alloc_array(matrix_pairs, sizeof *matrix_target);
  matrix_slot = clmg_alloc_array(matrix_pairs, sizeof *matrix_slot);
  load_target = clmg_alloc_array(outside_rows, sizeof *load_target);
  load_slot = clmg_alloc_array(outside_rows, sizeof *load_slot);
  if (!matrix_target || !matrix_slot || !load_target || !load_slot) {
    status = clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: slot lists");
    goto done;
  }
  size_t m = 0, l = 0;
  for (size_t e = 0; e < n; e++) {
    const int32_t *v = mesh->cells + order[e] * corners;
    uint32_t patch = patch_of_row[v[0]], slot = cell_slot[e];
    for (size_t k = 0; k < corners; k++) {
      if (!gather && patch_of_row[v[k]] == patch)
        continue;
      for (size_t j = 0; j < corners; j++) {
        matrix_target[m] = clmg_csr_find_entry(pattern, (size_t)v[k], v[j]);
        matrix_slot[m++] = slot + (uint32_t)j;
      }
      load_target[l] = v[k];
      load_slot[l++] = slot + (uint32_t)corners;
      slot += (uint32_t)stride;
    }
  }
  status = build_gather_list(a->context, a->nnz, matrix_pairs, matrix_target, matrix_slot,
                             &a->matrix_list);
  if (status == CLMG_SUCCESS)
    status = build_gather_list(a->context, a->num_vertices, outside_rows, load_target, load_slot,
                               &a->load_list);
  if (status == CLMG_SUCCESS)
    status = upload(a->context, CLMG_UINT32, patches + 1, first_cell, &a->first_cell);
  if (status == CLMG_SUCCESS)
    status = upload(a->context, CLMG_INT32, n * corners, cell_vertex, &a->cell_vertex);
  if (status == CLMG_SUCCESS)
    status = upload(a->context, CLMG_UINT32, n, cell_slot, &a->cell_slot);
  if (status == CLMG_SUCCESS && cell_material)
    status = upload(a->context, CLMG_INT32, n, cell_material, &a->cell_material);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(a->context, a->precision, a->slots_count, &a->slots);
done:
  free(patch_of_row);
  free(first_cell);
  free(order);
  free(cell_vertex);
  free(cell_slot);
  free(cell_material);
  free(matrix_target);
  free(matrix_slot);
  free(load_target);
  free(load_slot);
  return status;
}

/* The rows path's arrays: the cells (structure of arrays, in the mesh's
 * order), their material indices and each vertex's list of (cell, place),
 * in increasing cell order: the order the host reference adds them in. */
static clmg_status lay_out_rows(clmg_p1_assembler *a, const clmg_mesh *mesh,
                                const int32_t *material_of_cell) {
  size_t n = a->num_cells, corners = (size_t)a->dim + 1, vertices = a->num_vertices;
  if (n * corners > UINT32_MAX)
    return clmg_fail(a->context, CLMG_ERROR_UNSUPPORTED,
                     "P1 assembler: %zu cells; the rows path indexes up to 2^32 (cell, corner) "
                     "pairs",
                     n);
  int32_t *cell_vertex = clmg_alloc_array(n * corners, sizeof *cell_vertex);
  uint32_t *start = calloc(vertices + 1, sizeof *start);
  uint32_t *fill = clmg_alloc_array(vertices + 1, sizeof *fill);
  uint32_t *row_cells = clmg_alloc_array(n * corners, sizeof *row_cells);
  clmg_status status = CLMG_SUCCESS;
  if (!cell_vertex || !start || !fill || !row_cells)
    status = clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: row lists");
  if (status == CLMG_SUCCESS) {
    for (size_t k = 0; k < n * corners; k++)
      start[mesh->cells[k] + 1]++;
    for (size_t v = 0; v < vertices; v++)
      start[v + 1] += start[v];
    memcpy(fill, start, (vertices + 1) * sizeof *fill);
    for (size_t e = 0; e < n; e++)
      for (size_t k = 0; k < corners; k++) {
        int32_t v = mesh->cells[e * corners + k];
        cell_vertex[k * n + e] = v;
        row_cells[fill[v]++] = (uint32_t)(e * corners + k);
      }
    status = upload(a->context, CLMG_INT32, n * corners, cell_vertex, &a->cell_vertex);
  }
  if (status == CLMG_SUCCESS)
    status = upload(a->context, CLMG_UINT32, vertices + 1, start, &a->row_cells_start);
  if (status == CLMG_SUCCESS)
    status = upload(a->context, CLMG_UINT32, n * corners, row_cells, &a->row_cells);
  if (status == CLMG_SUCCESS && material_of_cell)
    status = upload(a->context, CLMG_INT32, n, material_of_cell, &a->cell_material);
  free(cell_vertex);
  free(start);
  free(fill);
  free(row_cells);
  return status;
}

/* Chooses the path and cuts the patches (*first_row, malloc'ed). */
static clmg_status plan_patches(clmg_p1_assembler *a, const clmg_csr *pattern,
                                uint32_t **first_row) {
  size_t real_size = clmg_dtype_size(a->precision);
  int atomics =
      a->precision == CLMG_FLOAT || device_has_extension(a->context, "cl_khr_int64_base_atomics");
  a->path = a->options.path;
  if (a->path == CLMG_P1_PATH_PATCH && !atomics)
    return clmg_fail(a->context, CLMG_ERROR_UNSUPPORTED,
                     "P1 assembler: the patch path assembles doubles with 64-bit local atomics, "
                     "and %s lacks cl_khr_int64_base_atomics (use the gather path)",
                     a->context->info.name);
  /* the device table's p1_rows: GPUs rows (on the H200 at Regular level 3,
   * 0.96 ms warm and 0.28 s of setup against patch's 1.33 ms and 0.79 s);
   * CPUs patches, where rows' recomputed element matrices cost most (pocl:
   * 12.3 ms against 7.1 ms), or the gather without the atomics */
  if (a->path == CLMG_P1_PATH_AUTO)
    a->path = a->context->params.p1_rows ? CLMG_P1_PATH_ROWS
              : atomics                  ? CLMG_P1_PATH_PATCH
                                         : CLMG_P1_PATH_GATHER;
  if (a->path == CLMG_P1_PATH_ROWS)
    return CLMG_SUCCESS; /* no patches */
  *first_row = clmg_alloc_array(a->num_vertices + 1, sizeof **first_row);
  if (!*first_row)
    return clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: patches");
  if (a->path == CLMG_P1_PATH_GATHER) { /* one patch: every cell in it, all rows outside */
    (*first_row)[0] = 0;
    (*first_row)[1] = (uint32_t)a->num_vertices;
    a->num_patches = 1;
    a->max_patch_rows = a->num_vertices;
    return CLMG_SUCCESS;
  }
  size_t local = (size_t)a->context->info.local_mem_bytes;
  size_t budget = a->options.patch_local_bytes;
  if (budget == 0)
    budget = local / 2 < PATCH_BYTES_MAX ? local / 2 : PATCH_BYTES_MAX;
  if (budget > local)
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "P1 assembler: patches of %zu bytes of local memory, but %s has %zu", budget,
                     a->context->info.name, local);
  size_t bad_row = 0;
  if (!cut_patches(pattern, budget, real_size, *first_row, &a->num_patches, &bad_row))
    return clmg_fail(
        a->context, CLMG_ERROR_INVALID_ARGUMENT,
        "P1 assembler: row %zu alone (%lld entries) needs more than the %zu bytes of "
        "local memory a patch may use",
        bad_row, (long long)(pattern->row_ptr[bad_row + 1] - pattern->row_ptr[bad_row]), budget);
  for (size_t p = 0; p < a->num_patches; p++) {
    size_t rows = (*first_row)[p + 1] - (*first_row)[p];
    size_t entries =
        (size_t)(pattern->row_ptr[(*first_row)[p + 1]] - pattern->row_ptr[(*first_row)[p]]);
    size_t bytes = patch_bytes(rows, entries, real_size);
    if (rows > a->max_patch_rows)
      a->max_patch_rows = rows;
    if (bytes > a->max_patch_bytes)
      a->max_patch_bytes = bytes;
  }
  size_t group = a->options.work_group_size ? a->options.work_group_size
                                            : a->context->params.assembly_group_size;
  if (group > a->context->info.max_work_group_size)
    group = a->context->info.max_work_group_size;
  a->group_size = group;
  return CLMG_SUCCESS;
}

static void coords_by_axis(const clmg_mesh *mesh, double *out) {
  size_t n = mesh->num_vertices, dim = (size_t)mesh->dim;
  for (size_t v = 0; v < n; v++)
    for (size_t c = 0; c < dim; c++)
      out[c * n + v] = mesh->coords[v * dim + c];
}

clmg_status clmg_p1_assembler_create(clmg_context *context, const clmg_mesh *mesh,
                                     const clmg_p1_assembler_options *options,
                                     clmg_p1_assembler **assembler) {
  if (!context || !assembler)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *assembler = NULL;
  clmg_clear_message(context);
  clmg_p1_assembler_options defaults;
  clmg_p1_assembler_options_defaults(&defaults);
  const clmg_p1_assembler_options *o = options ? options : &defaults;
  if (o->matrix.precision != CLMG_DOUBLE && o->matrix.precision != CLMG_FLOAT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "P1 assembler: precision %s (double or float expected)",
                     clmg_dtype_name(o->matrix.precision));
  if (o->path != CLMG_P1_PATH_AUTO && o->path != CLMG_P1_PATH_PATCH &&
      o->path != CLMG_P1_PATH_GATHER && o->path != CLMG_P1_PATH_ROWS)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "P1 assembler: unknown path %d",
                     (int)o->path);
  clmg_error error;
  clmg_csr pattern = {0};
  if (mesh && clmg_mesh_check_scale(mesh, &error) != CLMG_SUCCESS)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s", error.message);
  clmg_status status = clmg_p1_pattern(mesh, &pattern, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "P1 assembler: %s", error.message);

  clmg_p1_assembler *a = calloc(1, sizeof *a);
  uint32_t *first_row = NULL;
  int32_t *material_of_cell = NULL;
  double *coords = NULL;
  if (!a) {
    clmg_csr_free(&pattern);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler");
  }
  a->context = context;
  a->options = *o;
  a->precision = o->matrix.precision;
  a->dim = mesh->dim;
  a->num_vertices = mesh->num_vertices;
  a->num_cells = mesh->num_cells;
  a->nnz = clmg_csr_nnz(&pattern);
  if (a->nnz > UINT32_MAX)
    status = clmg_fail(context, CLMG_ERROR_UNSUPPORTED,
                       "P1 assembler: %zu matrix entries; the kernels index up to 2^32", a->nnz);
  if (status == CLMG_SUCCESS)
    status = find_materials(a, mesh, &material_of_cell);
  if (status == CLMG_SUCCESS)
    status = plan_patches(a, &pattern, &first_row);
  if (status == CLMG_SUCCESS && a->path == CLMG_P1_PATH_ROWS)
    status = lay_out_rows(a, mesh, material_of_cell);
  else if (status == CLMG_SUCCESS)
    status = lay_out_cells(a, mesh, &pattern, first_row, material_of_cell);
  if (status == CLMG_SUCCESS && first_row)
    status = upload(context, CLMG_UINT32, a->num_patches + 1, first_row, &a->first_row);
  if (status == CLMG_SUCCESS)
    status = upload(context, CLMG_INT64, a->num_vertices + 1, pattern.row_ptr, &a->row_ptr);
  if (status == CLMG_SUCCESS)
    status = upload(context, CLMG_INT32, a->nnz, pattern.col, &a->col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, a->precision, a->nnz, &a->values);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, a->precision, a->num_materials, &a->sigma_table);
  if (status == CLMG_SUCCESS && mesh->num_boundary_faces > 0 && mesh->boundary_faces &&
      mesh->boundary_face_tag) {
    size_t per_face = (size_t)mesh->dim;
    a->num_faces = mesh->num_boundary_faces;
    a->faces = clmg_alloc_array(a->num_faces * per_face, sizeof *a->faces);
    a->face_tags = clmg_alloc_array(a->num_faces, sizeof *a->face_tags);
    if (!a->faces || !a->face_tags)
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: boundary faces");
    else {
      memcpy(a->faces, mesh->boundary_faces, a->num_faces * per_face * sizeof *a->faces);
      memcpy(a->face_tags, mesh->boundary_face_tag, a->num_faces * sizeof *a->face_tags);
    }
  }
  if (status == CLMG_SUCCESS) {
    coords = clmg_alloc_array(a->num_vertices * (size_t)a->dim, sizeof *coords);
    if (!coords)
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembler: coordinates");
  }
  if (status == CLMG_SUCCESS) {
    coords_by_axis(mesh, coords);
    status =
        clmg_vector_create(context, a->precision, a->num_vertices * (size_t)a->dim, &a->coords);
    if (status == CLMG_SUCCESS && a->num_vertices > 0)
      status = clmg_vector_upload_doubles(a->coords, coords);
  }
  free(coords);
  free(first_row);
  free(material_of_cell);
  clmg_csr_free(&pattern);
  if (status != CLMG_SUCCESS) {
    clmg_p1_assembler_destroy(a);
    return status;
  }
  *assembler = a;
  return CLMG_SUCCESS;
}

clmg_status clmg_p1_assembler_get_info(const clmg_p1_assembler *a, clmg_p1_assembler_info *info) {
  if (!a || !info)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(info, 0, sizeof *info);
  info->path = a->path;
  info->num_patches = a->num_patches;
  info->max_patch_rows = a->max_patch_rows;
  info->max_patch_local_bytes = a->max_patch_bytes;
  info->boundary_cells = a->boundary_cells;
  info->slots = a->slots_count;
  info->gathered_entries = a->matrix_list.count + a->load_list.count;
  const clmg_vector *vectors[] = {a->coords,          a->cell_vertex, a->cell_slot,
                                  a->cell_material,   a->first_row,   a->first_cell,
                                  a->row_ptr,         a->col,         a->values,
                                  a->slots,           a->sigma_table, a->dirichlet,
                                  a->row_cells_start, a->row_cells};
  const gather_list *lists[] = {&a->matrix_list, &a->load_list};
  for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; k++)
    if (vectors[k])
      info->device_bytes += clmg_vector_length(vectors[k]) * clmg_dtype_size(vectors[k]->type);
  for (size_t k = 0; k < 2; k++) {
    const clmg_vector *parts[] = {lists[k]->position, lists[k]->first, lists[k]->slot_index};
    for (size_t j = 0; j < 3; j++)
      if (parts[j])
        info->device_bytes += clmg_vector_length(parts[j]) * clmg_dtype_size(parts[j]->type);
  }
  return CLMG_SUCCESS;
}

const clmg_vector *clmg_p1_assembler_values(const clmg_p1_assembler *a) {
  return a ? a->values : NULL;
}

static clmg_status get_assembly_kernel(clmg_p1_assembler *a, const char *name,
                                       clmg_kernel_args *args) {
  char options[256];
  snprintf(options, sizeof options, "%s -DP1_DIM=%d%s", clmg_real_options(a->context, a->precision),
           a->dim, a->path == CLMG_P1_PATH_PATCH ? " -DP1_LOCAL_ATOMICS" : "");
  return clmg_args_for_kernel(a->context, "assembly", options, name, args);
}

/* Adds (or, without accumulate, writes) each target's slots into target. */
static clmg_status gather(clmg_p1_assembler *a, const gather_list *list, const clmg_vector *target,
                          int accumulate) {
  if (list->count == 0)
    return CLMG_SUCCESS;
  clmg_kernel_args args;
  clmg_status status = get_assembly_kernel(a, "p1_gather", &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_uint identity = (cl_uint)list->identity, add = (cl_uint)accumulate;
  clmg_arg_ulong(&args, list->count);
  /* identity: the position argument is never read, any buffer will do */
  clmg_arg_buffer(&args, (list->position ? list->position : list->first)->buffer);
  clmg_arg_raw(&args, sizeof identity, &identity);
  clmg_arg_buffer(&args, list->first->buffer);
  clmg_arg_buffer(&args, list->slot_index->buffer);
  clmg_arg_buffer(&args, a->slots->buffer);
  clmg_arg_vector(&args, target);
  clmg_arg_raw(&args, sizeof add, &add);
  return clmg_launch_args(&args, list->count);
}

/* The cell arguments every element kernel starts with. */
static void cell_arguments(clmg_p1_assembler *a, clmg_kernel_args *args, double lambda) {
  cl_uint has_material = a->cell_material != NULL;
  clmg_arg_ulong(args, a->num_cells);
  clmg_arg_buffer(args, a->cell_vertex->buffer);
  /* the rows path has no slots, one material no index array: never read
   * then, any buffer will do */
  clmg_arg_buffer(args, (a->cell_slot ? a->cell_slot : a->cell_vertex)->buffer);
  clmg_arg_buffer(args, (a->cell_material ? a->cell_material : a->cell_vertex)->buffer);
  clmg_arg_raw(args, sizeof has_material, &has_material);
  clmg_arg_buffer(args, a->sigma_table->buffer);
  clmg_arg_real(args, a->precision, lambda);
  clmg_arg_buffer(args, a->coords->buffer);
  clmg_arg_ulong(args, a->num_vertices);
}

static clmg_status run_cells(clmg_p1_assembler *a, double lambda, clmg_vector *b, int compute_b) {
  clmg_kernel_args args;
  clmg_status status;
  if (a->path == CLMG_P1_PATH_ROWS) {
    if (a->num_vertices == 0)
      return CLMG_SUCCESS;
    status = get_assembly_kernel(a, "p1_rows", &args);
    if (status != CLMG_SUCCESS)
      return status;
    cl_uint with_b = (cl_uint)compute_b;
    cell_arguments(a, &args, lambda);
    clmg_arg_buffer(&args, a->row_cells_start->buffer);
    clmg_arg_buffer(&args, a->row_cells->buffer);
    clmg_arg_buffer(&args, a->row_ptr->buffer);
    clmg_arg_buffer(&args, a->col->buffer);
    clmg_arg_buffer(&args, a->values->buffer);
    /* without b: the load argument is never written, any buffer will do */
    clmg_arg_vector(&args, compute_b ? b : a->values);
    clmg_arg_raw(&args, sizeof with_b, &with_b);
    return clmg_launch_args(&args, a->num_vertices);
  }
  if (a->path == CLMG_P1_PATH_GATHER) {
    if (a->num_cells == 0)
      return CLMG_SUCCESS;
    status = get_assembly_kernel(a, "p1_cell_slots", &args);
    if (status != CLMG_SUCCESS)
      return status;
    cell_arguments(a, &args, lambda);
    clmg_arg_buffer(&args, a->slots->buffer);
    return clmg_launch_args(&args, a->num_cells);
  }
  if (a->num_patches == 0)
    return CLMG_SUCCESS;
  status = get_assembly_kernel(a, "p1_patch_assemble", &args);
  if (status != CLMG_SUCCESS)
    return status;
  size_t real_size = clmg_dtype_size(a->precision);
  size_t group = a->group_size, kernel_limit = 0;
  if (clGetKernelWorkGroupInfo(args.kernel, a->context->device, CL_KERNEL_WORK_GROUP_SIZE,
                               sizeof kernel_limit, &kernel_limit, NULL) == CL_SUCCESS &&
      kernel_limit > 0 && kernel_limit < group)
    group = kernel_limit;
  cl_uint with_b = (cl_uint)compute_b;
  clmg_arg_buffer(&args, a->first_row->buffer);
  clmg_arg_buffer(&args, a->first_cell->buffer);
  cell_arguments(a, &args, lambda);
  clmg_arg_buffer(&args, a->row_ptr->buffer);
  clmg_arg_buffer(&args, a->col->buffer);
  clmg_arg_buffer(&args, a->values->buffer);
  /* without b: the load arguments are never written, any buffer will do */
  clmg_arg_vector(&args, compute_b ? b : a->values);
  clmg_arg_raw(&args, sizeof with_b, &with_b);
  clmg_arg_buffer(&args, a->slots->buffer);
  /* whole words, never 0 bytes (OpenCL refuses that) */
  size_t words = (a->max_patch_bytes + real_size - 1) / real_size;
  clmg_arg_local(&args, (words ? words : 1) * real_size);
  status = clmg_args_end(&args);
  if (status != CLMG_SUCCESS)
    return status;
  return clmg_enqueue_1d(a->context, args.kernel, args.name, a->num_patches * group, group, NULL);
}

/* sigma per distinct material of the mesh, uploaded. */
static clmg_status upload_sigma(clmg_p1_assembler *a, const clmg_helmholtz_problem *problem) {
  double *table = clmg_alloc_array(a->num_materials, sizeof *table);
  if (!table)
    return clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembly: sigma table");
  clmg_status status = CLMG_SUCCESS;
  for (size_t k = 0; k < a->num_materials && status == CLMG_SUCCESS; k++)
    if (!clmg_p1_find_sigma(problem, a->material_ids[k], &table[k]))
      status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                         "P1 assembly: cell %zu has material id %d, for which the problem gives "
                         "no sigma",
                         a->material_first_cell[k], (int)a->material_ids[k]);
  /* unchanged sigma (the common repeated assembly): no blocking upload */
  if (status == CLMG_SUCCESS && a->sigma_uploaded &&
      memcmp(a->sigma_uploaded, table, a->num_materials * sizeof *table) == 0) {
    free(table);
    return CLMG_SUCCESS;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(a->sigma_table, table);
  free(a->sigma_uploaded);
  a->sigma_uploaded = status == CLMG_SUCCESS ? table : NULL;
  if (status != CLMG_SUCCESS)
    free(table);
  return status;
}

/* The Dirichlet marks of the problem's tags on the device (a->dirichlet),
 * made once per set of tags: a time step that assembles again with the same
 * tags finds them there, with no host pass over the vertices and no
 * blocking upload. *any: some vertex is marked. */
static clmg_status dirichlet_marks(clmg_p1_assembler *a, const clmg_helmholtz_problem *problem,
                                   int *any) {
  size_t tags = problem->num_dirichlet_tags;
  if (a->marked_tags && a->num_marked_tags == tags &&
      memcmp(a->marked_tags, problem->dirichlet_tags, tags * sizeof *a->marked_tags) == 0) {
    *any = a->any_marked;
    return CLMG_SUCCESS;
  }
  free(a->marked_tags);
  a->marked_tags = NULL;
  uint8_t *mask = clmg_alloc_array(a->num_vertices, 1);
  uint32_t *words = clmg_alloc_array(a->num_vertices, sizeof *words);
  int32_t *kept = clmg_alloc_array(tags, sizeof *kept);
  size_t count = 0;
  clmg_error error;
  clmg_status status = CLMG_SUCCESS;
  if (!mask || !words || !kept)
    status = clmg_fail(a->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "P1 assembly: Dirichlet marks");
  else if ((status = clmg_p1_dirichlet_mask(problem, a->num_vertices, (size_t)a->dim, a->num_faces,
                                            a->faces, a->face_tags, mask, &count, &error)) !=
           CLMG_SUCCESS)
    status = clmg_fail(a->context, status, "P1 assembly: %s", error.message);
  if (status == CLMG_SUCCESS && count > 0) {
    for (size_t v = 0; v < a->num_vertices; v++)
      words[v] = mask[v];
    if (!a->dirichlet)
      status = clmg_vector_create(a->context, CLMG_UINT32, a->num_vertices, &a->dirichlet);
    if (status == CLMG_SUCCESS) /* blocking: words may be freed afterwards */
      status = clmg_vector_upload(a->dirichlet, words);
  }
  if (status == CLMG_SUCCESS) {
    memcpy(kept, problem->dirichlet_tags, tags * sizeof *kept);
    a->marked_tags = kept;
    a->num_marked_tags = tags;
    a->any_marked = count > 0;
    kept = NULL;
  }
  *any = count > 0;
  free(mask);
  free(words);
  free(kept);
  return status;
}

/* Symmetric elimination of u = 0 on the Dirichlet vertices, on the device. */
static clmg_status eliminate_dirichlet(clmg_p1_assembler *a, const clmg_helmholtz_problem *problem,
                                       clmg_vector *b) {
  int any = 0;
  clmg_status status = dirichlet_marks(a, problem, &any);
  if (status != CLMG_SUCCESS || !any)
    return status;
  clmg_kernel_args args;
  status = get_assembly_kernel(a, "p1_dirichlet", &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_uint has_b = b != NULL;
  clmg_arg_ulong(&args, a->num_vertices);
  clmg_arg_buffer(&args, a->row_ptr->buffer);
  clmg_arg_buffer(&args, a->col->buffer);
  clmg_arg_buffer(&args, a->dirichlet->buffer);
  clmg_arg_buffer(&args, a->values->buffer);
  clmg_arg_vector(&args, b ? b : a->values); /* without b: never written */
  clmg_arg_raw(&args, sizeof has_b, &has_b);
  return clmg_launch_args(&args, a->num_vertices);
}

clmg_status clmg_p1_assemble_device(clmg_p1_assembler *a, const clmg_helmholtz_problem *problem,
                                    clmg_matrix **a_out, clmg_vector *b) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(a->context);
  if (!a_out)
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT, "P1 assembly: NULL matrix output");
  clmg_helmholtz_problem defaults;
  clmg_helmholtz_problem_defaults(&defaults);
  if (!problem)
    problem = &defaults;
  clmg_error error;
  clmg_status status = clmg_p1_check_problem(problem, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(a->context, status, "P1 assembly: %s", error.message);
  if (b && (clmg_vector_context(b) != a->context || clmg_vector_length(b) != a->num_vertices ||
            clmg_vector_type(b) != a->precision))
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "P1 assembly: b must hold %zu %s in the assembler's context (has %zu %s)",
                     a->num_vertices, clmg_dtype_name(a->precision), clmg_vector_length(b),
                     clmg_dtype_name(clmg_vector_type(b)));
  clmg_matrix *m = *a_out;
  if (m && (clmg_matrix_context(m) != a->context || clmg_matrix_rows(m) != a->num_vertices ||
            clmg_matrix_cols(m) != a->num_vertices || clmg_matrix_nnz(m) != a->nnz))
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "P1 assembly: *a_out is not a matrix of this assembler (%zu x %zu, %zu "
                     "entries; expected %zu x %zu, %zu)",
                     clmg_matrix_rows(m), clmg_matrix_cols(m), clmg_matrix_nnz(m), a->num_vertices,
                     a->num_vertices, a->nnz);
  int compute_b = b && problem->rhs == CLMG_RHS_SOURCE_ONE;
  status = upload_sigma(a, problem);
  if (status == CLMG_SUCCESS)
    status = run_cells(a, problem->lambda, b, compute_b);
  /* on the patch path every row was written by its patch: the slots add;
   * on the gather path the slots are all there is */
  int accumulate = a->path == CLMG_P1_PATH_PATCH;
  if (status == CLMG_SUCCESS)
    status = gather(a, &a->matrix_list, a->values, accumulate);
  if (status == CLMG_SUCCESS && compute_b)
    status = gather(a, &a->load_list, b, accumulate);
  if (status == CLMG_SUCCESS && b && !compute_b)
    status = clmg_vector_fill(b, 1.0);
  if (status == CLMG_SUCCESS && problem->num_dirichlet_tags > 0)
    status = eliminate_dirichlet(a, problem, b);
  if (status != CLMG_SUCCESS)
    return status;
  if (m)
    return clmg_matrix_update_values_device(m, a->values);
  return clmg_matrix_create_from_device(a->context, a->num_vertices, a->num_vertices, a->row_ptr,
                                        a->col, a->values, &a->options.matrix, a_out);
}
