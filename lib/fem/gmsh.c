/* Gmsh .msh reader, ASCII formats 2.2 and 4.1, for meshes of 4-node
 * quadrilaterals (2D) or 8-node hexahedra (3D). Lower-dimensional elements
 * (lines in 2D, quadrilaterals in 3D) become boundary faces with their
 * physical tag (else their elementary entity's tag); boundary faces the file
 * does not list get tag 1, and listed faces inside the domain are ignored.
 * The file is read whole and split into tokens that remember their line, so
 * every error says FILE:LINE and what was expected. */
#include "clmg/mesh.h"
#include "mesh_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GMSH_LINE = 1, GMSH_QUAD = 3, GMSH_HEX = 5, GMSH_POINT = 15 };

typedef struct reader {
  const char *path;
  char *text;
  char *cursor;
  long line;
  int newline_pending;
  clmg_error *error;
  char token[64]; /* the last token, for messages */
} reader;

static clmg_status fail_at(reader *r, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static clmg_status fail_at(reader *r, const char *format, ...) {
  if (r->error) {
    char what[768];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    snprintf(r->error->message, sizeof r->error->message, "%s:%ld: %s", r->path, r->line, what);
  }
  return CLMG_ERROR_PARSE;
}

/* The next whitespace-separated token (NUL-terminated in place); NULL at the
 * end of the file. r->line is the token's line: a newline that ends a token
 * is counted when the next token is read. */
static char *next_token(reader *r) {
  char *c = r->cursor;
  r->line += r->newline_pending;
  r->newline_pending = 0;
  while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') {
    if (*c == '\n')
      r->line++;
    c++;
  }
  if (*c == '\0') {
    r->cursor = c;
    snprintf(r->token, sizeof r->token, "the end of the file");
    return NULL;
  }
  char *start = c;
  while (*c && *c != ' ' && *c != '\t' && *c != '\r' && *c != '\n')
    c++;
  if (*c == '\n')
    r->newline_pending = 1;
  if (*c)
    *c++ = '\0';
  r->cursor = c;
  snprintf(r->token, sizeof r->token, "'%.60s'", start);
  return start;
}

static clmg_status read_long(reader *r, const char *what, long long min, long long max,
                             long long *value) {
  char *token = next_token(r);
  if (!token)
    return fail_at(r, "expected %s, found the end of the file", what);
  char *end = NULL;
  errno = 0;
  long long parsed = strtoll(token, &end, 10);
  if (*end != '\0' || errno == ERANGE || parsed < min || parsed > max)
    return fail_at(r, "expected %s, found '%.60s'", what, token);
  *value = parsed;
  return CLMG_SUCCESS;
}

static clmg_status read_double(reader *r, const char *what, double *value) {
  char *token = next_token(r);
  if (!token)
    return fail_at(r, "expected %s, found the end of the file", what);
  char *end = NULL;
  errno = 0;
  double parsed = strtod(token, &end);
  if (*end != '\0' || !isfinite(parsed))
    return fail_at(r, "expected %s, found '%.60s'", what, token);
  *value = parsed;
  return CLMG_SUCCESS;
}

static clmg_status expect_word(reader *r, const char *word) {
  char *token = next_token(r);
  if (!token || strcmp(token, word) != 0)
    return fail_at(r, "expected %s, found %s", word, token ? r->token : "the end of the file");
  return CLMG_SUCCESS;
}

/* Skips a section up to its $End line (for sections the reader does not use). */
static clmg_status skip_section(reader *r, const char *name) {
  char end[80];
  snprintf(end, sizeof end, "$End%s", name + 1);
  for (char *token = next_token(r); token; token = next_token(r))
    if (strcmp(token, end) == 0)
      return CLMG_SUCCESS;
  return fail_at(r, "expected %s, found the end of the file", end);
}

/* ---- what is collected ---- */

typedef struct element_list {
  size_t count, nodes_capacity, tags_capacity;
  int nodes_per;    /* 2, 4 or 8 */
  long long *nodes; /* node tags */
  int32_t *tags;    /* physical (else entity) tag */
} element_list;

typedef struct entity_tag {
  int dim;
  long long tag, physical;
} entity_tag;

typedef struct collected {
  size_t num_nodes, tags_capacity, xyz_capacity; /* capacities in elements of each array */
  long long *node_tags;
  double *node_xyz;
  element_list lines, quads, hexes;
  entity_tag *entities;
  size_t num_entities, entity_capacity;
} collected;

static int grow(void **array, size_t *capacity, size_t needed, size_t size) {
  if (needed <= *capacity)
    return 1;
  size_t grown = *capacity ? *capacity : 64;
  while (grown < needed)
    grown *= 2;
  void *bigger = realloc(*array, grown * size);
  if (!bigger)
    return 0;
  *array = bigger;
  *capacity = grown;
  return 1;
}

static void collected_free(collected *c) {
  free(c->node_tags);
  free(c->node_xyz);
  element_list *lists[3] = {&c->lines, &c->quads, &c->hexes};
  for (int k = 0; k < 3; ++k) {
    free(lists[k]->nodes);
    free(lists[k]->tags);
  }
  free(c->entities);
}

static clmg_status out_of_memory(reader *r) {
  if (r->error)
    snprintf(r->error->message, sizeof r->error->message,
             "%s: no host memory for the mesh being read", r->path);
  return CLMG_ERROR_OUT_OF_HOST_MEMORY;
}

static clmg_status add_node(reader *r, collected *c, long long tag, const double xyz[3]) {
  if (!grow((void **)&c->node_tags, &c->tags_capacity, c->num_nodes + 1, sizeof *c->node_tags) ||
      !grow((void **)&c->node_xyz, &c->xyz_capacity, 3 * (c->num_nodes + 1), sizeof *c->node_xyz))
    return out_of_memory(r);
  c->node_tags[c->num_nodes] = tag;
  memcpy(c->node_xyz + 3 * c->num_nodes, xyz, 3 * sizeof *xyz);
  c->num_nodes++;
  return CLMG_SUCCESS;
}

/* Reads an element's node tags into the list for its type; other types are
 * an error, points are skipped. */
static clmg_status add_element(reader *r, collected *c, long long type, int32_t tag) {
  element_list *list = type == GMSH_LINE   ? &c->lines
                       : type == GMSH_QUAD ? &c->quads
                       : type == GMSH_HEX  ? &c->hexes
                                           : NULL;
  if (type == GMSH_POINT) {
    long long ignored;
    return read_long(r, "a node tag", 1, INT64_MAX, &ignored);
  }
  if (!list)
    return fail_at(r,
                   "element type %lld is not supported: clmg reads 4-node quadrilaterals (3), "
                   "8-node hexahedra (5), lines (1) and points (15)",
                   type);
  list->nodes_per = type == GMSH_LINE ? 2 : type == GMSH_QUAD ? 4 : 8;
  if (!grow((void **)&list->nodes, &list->nodes_capacity,
            (list->count + 1) * (size_t)list->nodes_per, sizeof *list->nodes) ||
      !grow((void **)&list->tags, &list->tags_capacity, list->count + 1, sizeof *list->tags))
    return out_of_memory(r);
  for (int k = 0; k < list->nodes_per; ++k) {
    clmg_status status = read_long(r, "a node tag", 1, INT64_MAX,
                                   &list->nodes[list->count * (size_t)list->nodes_per + (size_t)k]);
    if (status != CLMG_SUCCESS)
      return status;
  }
  list->tags[list->count++] = tag > 0 ? tag : 1;
  return CLMG_SUCCESS;
}

/* ---- format 2.2 ---- */

static clmg_status read_nodes_22(reader *r, collected *c) {
  long long count;
  clmg_status status = read_long(r, "the number of nodes", 0, INT32_MAX, &count);
  for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
    long long tag;
    double xyz[3];
    status = read_long(r, "a node tag", 1, INT64_MAX, &tag);
    for (int d = 0; d < 3 && status == CLMG_SUCCESS; ++d)
      status = read_double(r, "a coordinate", &xyz[d]);
    if (status == CLMG_SUCCESS)
      status = add_node(r, c, tag, xyz);
  }
  return status == CLMG_SUCCESS ? expect_word(r, "$EndNodes") : status;
}

static clmg_status read_elements_22(reader *r, collected *c) {
  long long count;
  clmg_status status = read_long(r, "the number of elements", 0, INT32_MAX, &count);
  for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
    long long id, type, num_tags, physical = 0, entity = 0, extra;
    status = read_long(r, "an element number", 1, INT64_MAX, &id);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "an element type", 1, 1000, &type);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "the number of tags", 0, 100, &num_tags);
    for (long long t = 0; status == CLMG_SUCCESS && t < num_tags; ++t)
      status = read_long(r, "a tag", INT32_MIN, INT32_MAX,
                         t == 0   ? &physical
                         : t == 1 ? &entity
                                  : &extra);
    if (status == CLMG_SUCCESS)
      status = add_element(r, c, type, (int32_t)(physical > 0 ? physical : entity));
  }
  return status == CLMG_SUCCESS ? expect_word(r, "$EndElements") : status;
}

/* ---- format 4.1 ---- */

static clmg_status read_entities_41(reader *r, collected *c) {
  long long counts[4];
  clmg_status status = CLMG_SUCCESS;
  for (int d = 0; d < 4 && status == CLMG_SUCCESS; ++d)
    status = read_long(r, "an entity count", 0, INT32_MAX, &counts[d]);
  for (int d = 0; d < 4 && status == CLMG_SUCCESS; ++d)
    for (long long k = 0; status == CLMG_SUCCESS && k < counts[d]; ++k) {
      long long tag, num_physical, physical = 0, value;
      double box;
      status = read_long(r, "an entity tag", 1, INT32_MAX, &tag);
      for (int b = 0; b < (d == 0 ? 3 : 6) && status == CLMG_SUCCESS; ++b)
        status = read_double(r, "a coordinate of the entity", &box);
      if (status == CLMG_SUCCESS)
        status = read_long(r, "the number of physical tags", 0, 1000, &num_physical);
      for (long long p = 0; status == CLMG_SUCCESS && p < num_physical; ++p)
        status = read_long(r, "a physical tag", INT32_MIN, INT32_MAX, p == 0 ? &physical : &value);
      if (status == CLMG_SUCCESS && d > 0) {
        long long bounding;
        status = read_long(r, "the number of bounding entities", 0, INT32_MAX, &bounding);
        for (long long b = 0; status == CLMG_SUCCESS && b < bounding; ++b)
          status = read_long(r, "a bounding entity tag", INT32_MIN, INT32_MAX, &value);
      }
      if (status == CLMG_SUCCESS) {
        if (!grow((void **)&c->entities, &c->entity_capacity, c->num_entities + 1,
                  sizeof *c->entities))
          return out_of_memory(r);
        c->entities[c->num_entities++] = (entity_tag){d, tag, physical};
      }
    }
  return status == CLMG_SUCCESS ? expect_word(r, "$EndEntities") : status;
}

static long long physical_of(const collected *c, int dim, long long tag) {
  for (size_t k = 0; k < c->num_entities; ++k)
    if (c->entities[k].dim == dim && c->entities[k].tag == tag)
      return c->entities[k].physical > 0 ? c->entities[k].physical : tag;
  return tag;
}

static clmg_status read_nodes_41(reader *r, collected *c) {
  long long blocks, total, min_tag, max_tag;
  clmg_status status = read_long(r, "the number of node blocks", 0, INT32_MAX, &blocks);
  if (status == CLMG_SUCCESS)
    status = read_long(r, "the number of nodes", 0, INT32_MAX, &total);
  if (status == CLMG_SUCCESS)
    status = read_long(r, "the smallest node tag", 0, INT64_MAX, &min_tag);
  if (status == CLMG_SUCCESS)
    status = read_long(r, "the largest node tag", 0, INT64_MAX, &max_tag);
  for (long long b = 0; status == CLMG_SUCCESS && b < blocks; ++b) {
    long long dim = 0, tag = 0, parametric = 0, count = 0;
    status = read_long(r, "an entity dimension", 0, 3, &dim);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "an entity tag", INT32_MIN, INT32_MAX, &tag);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "0 or 1 (parametric)", 0, 1, &parametric);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "the number of nodes in the block", 0, INT32_MAX, &count);
    if (status == CLMG_SUCCESS && parametric)
      return fail_at(r, "parametric node blocks are not supported (save without parametric "
                        "coordinates)");
    size_t first = c->num_nodes;
    double origin[3] = {0, 0, 0};
    for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
      long long node_tag;
      status = read_long(r, "a node tag", 1, INT64_MAX, &node_tag);
      if (status == CLMG_SUCCESS)
        status = add_node(r, c, node_tag, origin);
    }
    for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k)
      for (int d = 0; d < 3 && status == CLMG_SUCCESS; ++d)
        status = read_double(r, "a coordinate", &c->node_xyz[3 * (first + (size_t)k) + (size_t)d]);
  }
  if (status == CLMG_SUCCESS && (long long)c->num_nodes != total)
    return fail_at(r, "the node blocks hold %zu nodes, but the header announced %lld", c->num_nodes,
                   total);
  return status == CLMG_SUCCESS ? expect_word(r, "$EndNodes") : status;
}

static clmg_status read_elements_41(reader *r, collected *c) {
  long long blocks, total, min_tag, max_tag;
  clmg_status status = read_long(r, "the number of element blocks", 0, INT32_MAX, &blocks);
  if (status == CLMG_SUCCESS)
    status = read_long(r, "the number of elements", 0, INT32_MAX, &total);
  if (status == CLMG_SUCCESS)
    status = read_long(r, "the smallest element tag", 0, INT64_MAX, &min_tag);
  if (status == CLMG_SUCCESS)
    status = read_long(r, "the largest element tag", 0, INT64_MAX, &max_tag);
  for (long long b = 0; status == CLMG_SUCCESS && b < blocks; ++b) {
    long long dim = 0, tag = 0, type = 0, count = 0;
    status = read_long(r, "an entity dimension", 0, 3, &dim);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "an entity tag", INT32_MIN, INT32_MAX, &tag);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "an element type", 1, 1000, &type);
    if (status == CLMG_SUCCESS)
      status = read_long(r, "the number of elements in the block", 0, INT32_MAX, &count);
    int32_t physical = (int32_t)physical_of(c, (int)dim, tag);
    for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
      long long element_tag;
      status = read_long(r, "an element tag", 1, INT64_MAX, &element_tag);
      if (status == CLMG_SUCCESS)
        status = add_element(r, c, type, physical);
    }
  }
  return status == CLMG_SUCCESS ? expect_word(r, "$EndElements") : status;
}

/* ---- building the mesh ---- */

typedef struct tag_index {
  long long tag;
  int32_t index;
} tag_index;

static int compare_tags(const void *a, const void *b) {
  long long x = ((const tag_index *)a)->tag, y = ((const tag_index *)b)->tag;
  return (x > y) - (x < y);
}

/* A face (2 or 4 vertices, sorted) with where it came from. */
typedef struct face_record {
  int32_t key[4];
  int32_t tag;  /* file faces: their tag; cell faces: -1 */
  int32_t cell; /* cell faces: the cell; file faces: -1 */
  int32_t local;
} face_record;

static int compare_faces(const void *a, const void *b) {
  const face_record *x = a, *y = b;
  for (int k = 0; k < 4; ++k)
    if (x->key[k] != y->key[k])
      return (x->key[k] > y->key[k]) - (x->key[k] < y->key[k]);
  return (x->cell > y->cell) - (x->cell < y->cell); /* file faces (-1) first */
}

static face_record make_face(const int32_t *vertices, int count, int32_t tag, int32_t cell,
                             int32_t local) {
  face_record f = {{INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX}, tag, cell, local};
  for (int k = 0; k < count; ++k) {
    int32_t v = vertices[k];
    int j = k;
    while (j > 0 && f.key[j - 1] > v) {
      f.key[j] = f.key[j - 1];
      j--;
    }
    f.key[j] = v;
  }
  return f;
}

/* Local vertices (tensor order) of face `local` = 2 * axis + side. */
static void face_vertices(int dim, const int32_t *cell, int local, int32_t *out) {
  int axis = local / 2, side = local % 2, k = 0;
  for (int corner = 0; corner < (1 << dim); ++corner)
    if (((corner >> axis) & 1) == side)
      out[k++] = cell[corner];
}

static clmg_status build_mesh(reader *r, collected *c, clmg_mesh *mesh) {
  int dim = c->hexes.count > 0 ? 3 : 2;
  element_list *cells = dim == 3 ? &c->hexes : &c->quads;
  element_list *faces = dim == 3 ? &c->quads : &c->lines;
  if (cells->count == 0)
    return fail_at(r, "the file holds no quadrilaterals or hexahedra");
  /* node tags -> dense indices, in file order, only for nodes cells use */
  tag_index *sorted = malloc(c->num_nodes * sizeof *sorted);
  int32_t *new_index = malloc(c->num_nodes * sizeof *new_index);
  if (!sorted || !new_index) {
    free(sorted);
    free(new_index);
    return out_of_memory(r);
  }
  for (size_t k = 0; k < c->num_nodes; ++k) {
    sorted[k] = (tag_index){c->node_tags[k], (int32_t)k};
    new_index[k] = -1;
  }
  qsort(sorted, c->num_nodes, sizeof *sorted, compare_tags);
  clmg_status status = CLMG_SUCCESS;
  for (size_t k = 1; k < c->num_nodes; ++k)
    if (sorted[k].tag == sorted[k - 1].tag) {
      status = fail_at(r, "node tag %lld appears twice in $Nodes", sorted[k].tag);
      break;
    }
  /* resolve element node tags to file-order indices in place */
  element_list *lists[2] = {cells, faces};
  for (int l = 0; l < 2 && status == CLMG_SUCCESS; ++l)
    for (size_t k = 0; k < lists[l]->count * (size_t)lists[l]->nodes_per; ++k) {
      tag_index key = {lists[l]->nodes[k], 0};
      tag_index *hit = bsearch(&key, sorted, c->num_nodes, sizeof *sorted, compare_tags);
      if (!hit) {
        status =
            fail_at(r, "an element refers to node %lld, which $Nodes does not define", key.tag);
        break;
      }
      lists[l]->nodes[k] = hit->index;
    }
  free(sorted);
  size_t vertices_per_cell = (size_t)1 << dim, vertices_per_face = vertices_per_cell / 2;
  size_t used = 0;
  for (size_t k = 0; status == CLMG_SUCCESS && k < cells->count * vertices_per_cell; ++k)
    if (new_index[cells->nodes[k]] < 0)
      new_index[cells->nodes[k]] = (int32_t)used++;
  if (status == CLMG_SUCCESS && dim == 2) {
    double z0 = c->node_xyz[3 * (size_t)cells->nodes[0] + 2];
    for (size_t k = 0; k < c->num_nodes; ++k)
      if (new_index[k] >= 0 && fabs(c->node_xyz[3 * k + 2] - z0) > 1e-12 * (1 + fabs(z0))) {
        status = fail_at(r,
                         "a 2D mesh of quadrilaterals must lie in a plane z = const; node "
                         "%lld has z = %g, others z = %g",
                         c->node_tags[k], c->node_xyz[3 * k + 2], z0);
        break;
      }
  }
  if (status != CLMG_SUCCESS) {
    free(new_index);
    return status;
  }
  mesh->dim = dim;
  mesh->num_vertices = used;
  mesh->num_cells = cells->count;
  mesh->coords = malloc(used * (size_t)dim * sizeof *mesh->coords);
  mesh->cells = malloc(cells->count * vertices_per_cell * sizeof *mesh->cells);
  if (!mesh->coords || !mesh->cells) {
    free(new_index);
    return out_of_memory(r);
  }
  for (size_t k = 0; k < c->num_nodes; ++k)
    if (new_index[k] >= 0)
      memcpy(mesh->coords + (size_t)new_index[k] * (size_t)dim, c->node_xyz + 3 * k,
             (size_t)dim * sizeof(double));
  /* Gmsh lists corners counter-clockwise (bottom, then top): to tensor order */
  static const int from_gmsh[8] = {0, 1, 3, 2, 4, 5, 7, 6};
  static const int flip_x[8] = {1, 0, 3, 2, 5, 4, 7, 6};
  for (size_t e = 0; e < cells->count; ++e) {
    int32_t *cell = mesh->cells + e * vertices_per_cell;
    for (size_t k = 0; k < vertices_per_cell; ++k)
      cell[k] = new_index[cells->nodes[e * vertices_per_cell + (size_t)from_gmsh[k]]];
    if (clmg_mesh_cell_quality(dim, mesh->coords, cell, NULL, NULL) <= 0) {
      int32_t flipped[8];
      for (size_t k = 0; k < vertices_per_cell; ++k)
        flipped[k] = cell[flip_x[k]];
      memcpy(cell, flipped, vertices_per_cell * sizeof *cell);
    }
  }
  /* boundary faces: cell faces met once; tags from the file's faces */
  size_t num_records = faces->count + 2 * (size_t)dim * cells->count;
  face_record *records = malloc(num_records * sizeof *records);
  if (!records) {
    free(new_index);
    return out_of_memory(r);
  }
  size_t n = 0;
  for (size_t f = 0; f < faces->count; ++f) {
    int32_t vertices[4];
    int valid = 1;
    for (size_t k = 0; k < vertices_per_face; ++k) {
      int32_t v = new_index[faces->nodes[f * vertices_per_face + k]];
      valid &= v >= 0;
      vertices[k] = v;
    }
    if (valid) /* faces on nodes no cell uses cannot be boundary faces */
      records[n++] = make_face(vertices, (int)vertices_per_face, faces->tags[f], -1, -1);
  }
  free(new_index);
  for (size_t e = 0; e < cells->count; ++e)
    for (int local = 0; local < 2 * dim; ++local) {
      int32_t vertices[4];
      face_vertices(dim, mesh->cells + e * vertices_per_cell, local, vertices);
      records[n++] = make_face(vertices, (int)vertices_per_face, -1, (int32_t)e, local);
    }
  qsort(records, n, sizeof *records, compare_faces);
  mesh->boundary_faces = malloc(n * vertices_per_face * sizeof *mesh->boundary_faces);
  mesh->boundary_face_tag = malloc(n * sizeof *mesh->boundary_face_tag);
  if (!mesh->boundary_faces || !mesh->boundary_face_tag) {
    free(records);
    return out_of_memory(r);
  }
  size_t boundary = 0;
  for (size_t k = 0; k < n;) {
    size_t end = k;
    int32_t tag = 1;
    size_t cell_faces = 0, cell_record = 0;
    while (end < n && memcmp(records[end].key, records[k].key, sizeof records[k].key) == 0) {
      if (records[end].cell < 0) {
        tag = records[end].tag;
      } else {
        cell_faces++;
        cell_record = end;
      }
      end++;
    }
    if (cell_faces == 1) {
      face_vertices(dim, mesh->cells + (size_t)records[cell_record].cell * vertices_per_cell,
                    records[cell_record].local,
                    mesh->boundary_faces + boundary * vertices_per_face);
      mesh->boundary_face_tag[boundary++] = tag;
    }
    k = end;
  }
  free(records);
  mesh->num_boundary_faces = boundary;
  return CLMG_SUCCESS;
}

clmg_status clmg_mesh_read_gmsh(const char *path, clmg_mesh *out, clmg_error *error) {
  if (out)
    memset(out, 0, sizeof *out);
  if (error)
    error->message[0] = '\0';
  if (!path || !out) {
    if (error)
      snprintf(error->message, sizeof error->message, "read gmsh: NULL %s",
               path ? "output mesh" : "path");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  FILE *file = fopen(path, "rb");
  if (!file) {
    if (error)
      snprintf(error->message, sizeof error->message, "%s: cannot open: %s", path, strerror(errno));
    return CLMG_ERROR_IO;
  }
  reader r = {path, NULL, NULL, 1, 0, error, ""};
  size_t size = 0, capacity = 0;
  for (;;) {
    if (!grow((void **)&r.text, &capacity, size + 65536, 1)) {
      fclose(file);
      free(r.text);
      return out_of_memory(&r);
    }
    size_t got = fread(r.text + size, 1, capacity - size - 1, file);
    size += got;
    if (got == 0)
      break;
  }
  int read_failed = ferror(file);
  fclose(file);
  if (read_failed) {
    free(r.text);
    if (error)
      snprintf(error->message, sizeof error->message, "%s: read error", path);
    return CLMG_ERROR_IO;
  }
  r.text[size] = '\0';
  if (memchr(r.text, '\0', size)) {
    free(r.text);
    r.line = 1;
    return fail_at(&r, "binary data: clmg reads ASCII .msh files (save with Binary = 0)");
  }
  r.cursor = r.text;

  collected c;
  memset(&c, 0, sizeof c);
  clmg_status status = expect_word(&r, "$MeshFormat");
  double version = 0;
  long long file_type = 0, data_size = 0;
  if (status == CLMG_SUCCESS)
    status = read_double(&r, "the format version (2.2 or 4.1)", &version);
  if (status == CLMG_SUCCESS && version != 2.2 && version != 4.1)
    status = fail_at(&r, "expected format version 2.2 or 4.1, found %g", version);
  if (status == CLMG_SUCCESS)
    status = read_long(&r, "the file type (0 = ASCII)", 0, 1, &file_type);
  if (status == CLMG_SUCCESS && file_type != 0)
    status = fail_at(&r, "binary .msh files are not supported (save with Binary = 0)");
  if (status == CLMG_SUCCESS)
    status = read_long(&r, "the data size", 1, 16, &data_size);
  if (status == CLMG_SUCCESS)
    status = expect_word(&r, "$EndMeshFormat");
  int have_nodes = 0, have_elements = 0;
  for (char *token = NULL; status == CLMG_SUCCESS && (token = next_token(&r)) != NULL;) {
    if (strcmp(token, "$Nodes") == 0) {
      status = version == 2.2 ? read_nodes_22(&r, &c) : read_nodes_41(&r, &c);
      have_nodes = 1;
    } else if (strcmp(token, "$Elements") == 0) {
      if (!have_nodes)
        status = fail_at(&r, "$Elements before $Nodes");
      else
        status = version == 2.2 ? read_elements_22(&r, &c) : read_elements_41(&r, &c);
      have_elements = 1;
    } else if (strcmp(token, "$Entities") == 0 && version == 4.1) {
      status = read_entities_41(&r, &c);
    } else if (token[0] == '$' && strncmp(token, "$End", 4) != 0) {
      char name[64];
      snprintf(name, sizeof name, "%s", token);
      status = skip_section(&r, name);
    } else {
      status = fail_at(&r, "expected a section such as $Nodes or $Elements, found '%.60s'", token);
    }
  }
  if (status == CLMG_SUCCESS && (!have_nodes || !have_elements))
    status = fail_at(&r, "the file has no %s section", have_nodes ? "$Elements" : "$Nodes");
  if (status == CLMG_SUCCESS)
    status = build_mesh(&r, &c, out);
  collected_free(&c);
  free(r.text);
  if (status == CLMG_SUCCESS) {
    clmg_error check = {{0}};
    status = clmg_mesh_check(out, &check);
    if (status != CLMG_SUCCESS && error)
      snprintf(error->message, sizeof error->message, "%.200s: the mesh is not valid: %.700s", path,
               check.message);
  }
  if (status != CLMG_SUCCESS)
    clmg_mesh_free(out);
  return status;
}
