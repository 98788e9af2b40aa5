/* Gmsh .msh reader, ASCII formats 2.2 and 4.1, for meshes of 4-node
 * quadrilaterals or 3-node triangles (2D), 8-node hexahedra or 4-node
 * tetrahedra (3D).
 *
 * Choices where the format leaves room:
 * - The dimension is 3 when the file holds hexahedra or tetrahedra, else 2;
 *   a 2D mesh must lie in a plane z = const (Gmsh writes z = 0). Tensor
 *   cells and simplices of the mesh dimension do not mix: a file with both
 *   is an error.
 * - Cells get a material id: their physical group, else their elementary
 *   entity's tag (tag 0 becomes 1), as for boundary faces below.
 * - Lower-dimensional elements (lines in 2D, quadrilaterals in a hexahedral
 *   and triangles in a tetrahedral mesh) are
 *   boundary faces tagged with their physical group (2.2: the element's
 *   first tag; 4.1: the first physical tag of its entity in $Entities), else
 *   their elementary entity's tag; tag 0 becomes 1. A face listed several
 *   times (2.2 repeats an element for each of its physical groups) keeps the
 *   smallest tag. Faces of two cells (interfaces) are ignored; a listed face
 *   that is no cell's face is an error, as it means a broken file.
 * - Boundary faces (faces of exactly one cell) the file does not list get
 *   tag 1. Lines in 3D and points are ignored.
 * - Node tags may be sparse and in any order; nodes no cell uses are
 *   dropped, the others keep the file's order (vertex k is the k-th used
 *   node as $Nodes lists them), so that values written per vertex map back
 *   to the file's nodes.
 * - Cells are converted from Gmsh's counter-clockwise corner order to clmg's
 *   tensor order and mirrored where that gives a negative Jacobian;
 *   simplices with a negative volume get their first two vertices swapped
 *   (Gmsh files may list either orientation).
 * - Numbers are parsed in the "C" numeric locale.
 *
 * The file is streamed token by token (a token of at most GMSH_TOKEN bytes;
 * a NUL byte is binary data and stops the reading where it is met), each
 * token remembering its line, so every error says FILE:LINE, what was
 * expected and what was found, and nothing but the parsed data is held:
 * /dev/zero or a header followed by a gigabyte of NUL bytes fails at once.
 * On any error the output mesh is left empty. */
#define _POSIX_C_SOURCE 200809L /* locale_t (core/textio.h) */

#include "core/textio.h"
#include "mesh/mesh_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  GMSH_LINE = 1,
  GMSH_TRIANGLE = 2,
  GMSH_QUAD = 3,
  GMSH_TET = 4,
  GMSH_HEX = 5,
  GMSH_POINT = 15
};

/* ---- tokens ---- */

/* The longest token: numbers, tags and section names are far shorter. */
#define GMSH_TOKEN 255

typedef struct reader {
  const char *path;
  FILE *file;
  char token[GMSH_TOKEN + 1]; /* the last token read */
  long line;                  /* line of the last token read */
  int newline_pending;        /* the last token ended a line */
  /* a failure of the stream itself (a NUL byte, an overlong token, a read
   * error), with its message in error: it stands over later messages */
  clmg_status stream;
  clmg_error *error;
} reader;

static clmg_status fail_line(const reader *r, long line, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static clmg_status fail_line(const reader *r, long line, const char *format, ...) {
  if (r->stream != CLMG_SUCCESS)
    return r->stream;
  va_list args;
  va_start(args, format);
  clmg_error_vset_at(r->error, r->path, line, format, args);
  va_end(args);
  return CLMG_ERROR_PARSE;
}

static void stream_failure(reader *r, clmg_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void stream_failure(reader *r, clmg_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  clmg_error_vset_at(r->error, r->path, r->line, format, args);
  va_end(args);
  r->stream = status;
}

static int is_space(int c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The next white-space separated token (in r->token), NULL at the end of
 * the file or where the stream failed (r->stream). r->line becomes the
 * token's line (the newline that ends a token is counted when the next one
 * is read); at the end, the line after the file's last line break, where
 * more was expected. */
static char *next_token(reader *r) {
  if (r->stream != CLMG_SUCCESS)
    return NULL;
  r->line += r->newline_pending;
  r->newline_pending = 0;
  int c = getc_unlocked(r->file);
  while (is_space(c)) {
    if (c == '\n')
      r->line++;
    c = getc_unlocked(r->file);
  }
  size_t length = 0;
  while (c != EOF && !is_space(c) && c != '\0') {
    if (length == GMSH_TOKEN) {
      stream_failure(r, CLMG_ERROR_PARSE,
                     "expected a number, a tag or a section name, found a token of more than "
                     "%d bytes",
                     GMSH_TOKEN);
      return NULL;
    }
    r->token[length++] = (char)c;
    c = getc_unlocked(r->file);
  }
  r->token[length] = '\0';
  if (c == '\0') {
    stream_failure(r, CLMG_ERROR_PARSE, "expected ASCII text, found a NUL byte (binary data)");
    return NULL;
  }
  if (c == EOF && ferror(r->file)) {
    stream_failure(r, CLMG_ERROR_IO, "cannot read the file: %s", strerror(errno));
    return NULL;
  }
  if (c == '\n')
    r->newline_pending = 1;
  return length > 0 ? r->token : NULL;
}

/* "'TOKEN'" (shortened) or "the end of the file", for messages. */
static const char *describe(const char *token, char *buffer, size_t size) {
  if (!token)
    return "the end of the file";
  size_t length = strlen(token);
  snprintf(buffer, size, "'%.40s%s'", token, length > 40 ? "..." : "");
  return buffer;
}

static clmg_status expected(const reader *r, const char *what, const char *token) {
  char buffer[64];
  return fail_line(r, r->line, "expected %s, found %s", what,
                   describe(token, buffer, sizeof buffer));
}

static clmg_status read_integer(reader *r, const char *what, long long min, long long max,
                                long long *value) {
  char *token = next_token(r);
  if (!token)
    return expected(r, what, token);
  char *end = NULL;
  errno = 0;
  long long parsed = strtoll(token, &end, 10);
  if (end == token || *end != '\0' || errno == ERANGE || parsed < min || parsed > max)
    return expected(r, what, token);
  *value = parsed;
  return CLMG_SUCCESS;
}

static clmg_status read_double(reader *r, const char *what, double *value) {
  char *token = next_token(r);
  if (!token)
    return expected(r, what, token);
  char *end = NULL;
  double parsed = strtod(token, &end);
  if (end == token || *end != '\0' || !isfinite(parsed))
    return expected(r, what, token);
  *value = parsed;
  return CLMG_SUCCESS;
}

static clmg_status expect_word(reader *r, const char *word) {
  char *token = next_token(r);
  return token && strcmp(token, word) == 0 ? CLMG_SUCCESS : expected(r, word, token);
}

/* Skips a section the reader does not use, up to its $End line. */
static clmg_status skip_section(reader *r, const char *name) {
  char end[80];
  snprintf(end, sizeof end, "$End%.60s", name + 1);
  for (char *token = next_token(r); token; token = next_token(r))
    if (strcmp(token, end) == 0)
      return CLMG_SUCCESS;
  return expected(r, end, NULL);
}

/* ---- what the sections hold ---- */

typedef struct tag_index {
  long long tag;
  int32_t index;
} tag_index;

typedef struct node_table {
  size_t count, tags_capacity, xyz_capacity, lines_capacity;
  long long *tags;   /* file order */
  double *xyz;       /* 3 per node */
  long *lines;       /* where each node is defined */
  tag_index *sorted; /* by tag, built at the end of $Nodes */
} node_table;

/* The elements of one type, their nodes as indices into the node table. */
typedef struct element_list {
  size_t count, nodes_capacity, tags_capacity, lines_capacity;
  int nodes_per; /* 2, 3, 4 or 8 */
  int32_t *nodes;
  int32_t *tags; /* physical (else entity) tag, >= 1 */
  long *lines;   /* where each element is listed */
} element_list;

typedef struct entity_tag {
  int dim;
  long long tag, physical; /* physical: 0 when the entity has none */
  size_t order;            /* its place in the file: the first of duplicates wins */
} entity_tag;

typedef struct msh_data {
  node_table nodes;
  element_list lines, triangles, quads, tets, hexes;
  entity_tag *entities;
  size_t num_entities, entities_capacity;
} msh_data;

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

static void msh_data_free(msh_data *data) {
  free(data->nodes.tags);
  free(data->nodes.xyz);
  free(data->nodes.lines);
  free(data->nodes.sorted);
  element_list *lists[5] = {&data->lines, &data->triangles, &data->quads, &data->tets,
                            &data->hexes};
  for (int k = 0; k < 5; ++k) {
    free(lists[k]->nodes);
    free(lists[k]->tags);
    free(lists[k]->lines);
  }
  free(data->entities);
}

static clmg_status out_of_memory(const reader *r) {
  if (r->error)
    snprintf(r->error->message, sizeof r->error->message,
             "%s: no host memory for the mesh being read", r->path);
  return CLMG_ERROR_OUT_OF_HOST_MEMORY;
}

static clmg_status add_node(reader *r, node_table *nodes, long long tag, long line) {
  size_t n = nodes->count + 1;
  if (!grow((void **)&nodes->tags, &nodes->tags_capacity, n, sizeof *nodes->tags) ||
      !grow((void **)&nodes->xyz, &nodes->xyz_capacity, 3 * n, sizeof *nodes->xyz) ||
      !grow((void **)&nodes->lines, &nodes->lines_capacity, n, sizeof *nodes->lines))
    return out_of_memory(r);
  nodes->tags[nodes->count] = tag;
  nodes->lines[nodes->count] = line;
  nodes->count = n;
  return CLMG_SUCCESS;
}

static int compare_tags(const void *a, const void *b) {
  long long x = ((const tag_index *)a)->tag, y = ((const tag_index *)b)->tag;
  return (x > y) - (x < y);
}

/* Sorts the node tags for lookups by the elements; a tag defined twice is
 * an error at its second definition. */
static clmg_status index_nodes(reader *r, node_table *nodes) {
  nodes->sorted = malloc((nodes->count ? nodes->count : 1) * sizeof *nodes->sorted);
  if (!nodes->sorted)
    return out_of_memory(r);
  for (size_t k = 0; k < nodes->count; ++k)
    nodes->sorted[k] = (tag_index){nodes->tags[k], (int32_t)k};
  qsort(nodes->sorted, nodes->count, sizeof *nodes->sorted, compare_tags);
  for (size_t k = 1; k < nodes->count; ++k)
    if (nodes->sorted[k].tag == nodes->sorted[k - 1].tag) {
      long first = nodes->lines[nodes->sorted[k - 1].index];
      long second = nodes->lines[nodes->sorted[k].index];
      return fail_line(r, first > second ? first : second,
                       "expected a new node tag, found %lld again (first "
                       "defined on line %ld)",
                       nodes->sorted[k].tag, first < second ? first : second);
    }
  return CLMG_SUCCESS;
}

static const char *element_type_name(long long type) {
  switch (type) {
  case 6:
    return "6-node prism";
  case 7:
    return "5-node pyramid";
  case 8:
    return "3-node line";
  case 9:
    return "6-node triangle";
  case 10:
    return "9-node quadrilateral";
  case 11:
    return "10-node tetrahedron";
  case 12:
    return "27-node hexahedron";
  case 13:
    return "18-node prism";
  case 14:
    return "14-node pyramid";
  case 16:
    return "8-node quadrilateral";
  case 17:
    return "20-node hexahedron";
  case 18:
    return "15-node prism";
  case 19:
    return "13-node pyramid";
  default:
    return "unknown to clmg";
  }
}

/* The error for an element type clmg does not read, on the current line. */
static clmg_status unsupported_type(const reader *r, long long type) {
  return fail_line(r, r->line,
                   "expected element type 2 (3-node triangle), 3 (4-node quadrilateral), 4 "
                   "(4-node tetrahedron) or 5 (8-node hexahedron), found element type %lld (%s): "
                   "only these linear cells are supported, with 2-node lines, 3-node "
                   "triangles or 4-node quadrilaterals as boundary faces",
                   type, element_type_name(type));
}

static int is_supported_type(long long type) {
  return type == GMSH_LINE || type == GMSH_TRIANGLE || type == GMSH_QUAD || type == GMSH_TET ||
         type == GMSH_HEX || type == GMSH_POINT;
}

/* Reads an element's node tags (the element's number or tag has just been
 * read, on `line`) into the list of its type; points are skipped. */
static clmg_status add_element(reader *r, msh_data *data, long long type, long long tag,
                               long line) {
  if (type == GMSH_POINT) {
    long long ignored;
    return read_integer(r, "a node tag", 1, INT64_MAX, &ignored);
  }
  element_list *list = type == GMSH_LINE       ? &data->lines
                       : type == GMSH_TRIANGLE ? &data->triangles
                       : type == GMSH_QUAD     ? &data->quads
                       : type == GMSH_TET      ? &data->tets
                       : type == GMSH_HEX      ? &data->hexes
                                               : NULL;
  if (!list)
    return unsupported_type(r, type);
  list->nodes_per = type == GMSH_LINE       ? 2
                    : type == GMSH_TRIANGLE ? 3
                    : type == GMSH_QUAD     ? 4
                    : type == GMSH_TET      ? 4
                                            : 8;
  size_t n = list->count + 1, per = (size_t)list->nodes_per;
  if (!grow((void **)&list->nodes, &list->nodes_capacity, n * per, sizeof *list->nodes) ||
      !grow((void **)&list->tags, &list->tags_capacity, n, sizeof *list->tags) ||
      !grow((void **)&list->lines, &list->lines_capacity, n, sizeof *list->lines))
    return out_of_memory(r);
  const node_table *nodes = &data->nodes;
  for (size_t k = 0; k < per; ++k) {
    tag_index key = {0, 0};
    clmg_status status = read_integer(r, "a node tag", 1, INT64_MAX, &key.tag);
    if (status == CLMG_SUCCESS && r->line != line) /* the tokens of an element share its line */
      status =
          fail_line(r, line, "expected %zu node tags after the element's tags, found %zu", per, k);
    if (status != CLMG_SUCCESS)
      return status;
    const tag_index *hit = bsearch(&key, nodes->sorted, nodes->count, sizeof key, compare_tags);
    if (!hit)
      return fail_line(r, r->line, "expected a node defined in $Nodes, found node %lld", key.tag);
    list->nodes[list->count * per + k] = hit->index;
  }
  list->tags[list->count] = tag > 0 && tag <= INT32_MAX ? (int32_t)tag : 1;
  list->lines[list->count] = line;
  list->count = n;
  return CLMG_SUCCESS;
}

/* ---- format 2.2 ---- */

static clmg_status read_nodes_22(reader *r, msh_data *data) {
  long long count;
  clmg_status status = read_integer(r, "the number of nodes", 0, INT32_MAX, &count);
  for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
    long long tag;
    status = read_integer(r, "a node tag", 1, INT64_MAX, &tag);
    if (status == CLMG_SUCCESS)
      status = add_node(r, &data->nodes, tag, r->line);
    for (int d = 0; d < 3 && status == CLMG_SUCCESS; ++d)
      status =
          read_double(r, "a coordinate", &data->nodes.xyz[3 * (data->nodes.count - 1) + (size_t)d]);
  }
  if (status == CLMG_SUCCESS)
    status = expect_word(r, "$EndNodes");
  return status == CLMG_SUCCESS ? index_nodes(r, &data->nodes) : status;
}

static clmg_status read_elements_22(reader *r, msh_data *data) {
  long long count;
  clmg_status status = read_integer(r, "the number of elements", 0, INT32_MAX, &count);
  for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
    long long number, type, num_tags, physical = 0, entity = 0, other;
    status = read_integer(r, "an element number", 1, INT64_MAX, &number);
    long line = r->line;
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "an element type", 1, INT32_MAX, &type);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "the number of tags", 0, 1000, &num_tags);
    for (long long t = 0; status == CLMG_SUCCESS && t < num_tags; ++t) {
      status = read_integer(r, "a tag", INT32_MIN, INT32_MAX,
                            t == 0   ? &physical
                            : t == 1 ? &entity
                                     : &other);
      if (status == CLMG_SUCCESS && r->line != line)
        status =
            fail_line(r, line, "expected %lld tags on the element's line, found %lld", num_tags, t);
    }
    if (status == CLMG_SUCCESS)
      status = add_element(r, data, type, physical > 0 ? physical : entity, line);
  }
  return status == CLMG_SUCCESS ? expect_word(r, "$EndElements") : status;
}

/* ---- format 4.1 ---- */

static int compare_entities(const void *left, const void *right) {
  const entity_tag *a = left, *b = right;
  if (a->dim != b->dim)
    return a->dim < b->dim ? -1 : 1;
  if (a->tag != b->tag)
    return a->tag < b->tag ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

static clmg_status read_entities_41(reader *r, msh_data *data) {
  long long counts[4];
  clmg_status status = CLMG_SUCCESS;
  for (int d = 0; d < 4 && status == CLMG_SUCCESS; ++d)
    status = read_integer(r, "the number of entities", 0, INT32_MAX, &counts[d]);
  for (int d = 0; d < 4 && status == CLMG_SUCCESS; ++d)
    for (long long k = 0; status == CLMG_SUCCESS && k < counts[d]; ++k) {
      long long tag, num_physical, physical = 0, other;
      double bound;
      status = read_integer(r, "an entity tag", 1, INT32_MAX, &tag);
      /* points: x y z; curves, surfaces, volumes: their bounding box */
      for (int b = 0; b < (d == 0 ? 3 : 6) && status == CLMG_SUCCESS; ++b)
        status = read_double(r, "a coordinate of the entity", &bound);
      if (status == CLMG_SUCCESS)
        status = read_integer(r, "the number of physical tags", 0, INT32_MAX, &num_physical);
      for (long long p = 0; status == CLMG_SUCCESS && p < num_physical; ++p)
        status =
            read_integer(r, "a physical tag", INT32_MIN, INT32_MAX, p == 0 ? &physical : &other);
      if (status == CLMG_SUCCESS && d > 0) {
        long long bounding;
        status = read_integer(r, "the number of bounding entities", 0, INT32_MAX, &bounding);
        for (long long b = 0; status == CLMG_SUCCESS && b < bounding; ++b)
          status = read_integer(r, "a bounding entity tag", INT32_MIN, INT32_MAX, &other);
      }
      if (status == CLMG_SUCCESS) {
        if (!grow((void **)&data->entities, &data->entities_capacity, data->num_entities + 1,
                  sizeof *data->entities))
          return out_of_memory(r);
        data->entities[data->num_entities] = (entity_tag){d, tag, physical, data->num_entities};
        data->num_entities++;
      }
    }
  /* sorted once, so that each element block finds its entity by bisection
   * (a linear search made 200,000 blocks take 66 s) */
  if (status == CLMG_SUCCESS && data->num_entities > 1)
    qsort(data->entities, data->num_entities, sizeof *data->entities, compare_entities);
  return status == CLMG_SUCCESS ? expect_word(r, "$EndEntities") : status;
}

/* The tag elements of entity (dim, tag) get: its physical tag, else its own. */
static long long entity_physical_tag(const msh_data *data, long long dim, long long tag) {
  size_t low = 0, high = data->num_entities; /* first entity not below (dim, tag) */
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    const entity_tag *e = &data->entities[middle];
    if (e->dim < dim || (e->dim == dim && e->tag < tag))
      low = middle + 1;
    else
      high = middle;
  }
  if (low < data->num_entities && data->entities[low].dim == dim && data->entities[low].tag == tag)
    return data->entities[low].physical > 0 ? data->entities[low].physical : tag;
  return tag;
}

static clmg_status read_nodes_41(reader *r, msh_data *data) {
  long long blocks, total, min_tag, max_tag;
  clmg_status status = read_integer(r, "the number of node blocks", 0, INT32_MAX, &blocks);
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the number of nodes", 0, INT32_MAX, &total);
  long announced = r->line;
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the smallest node tag", 0, INT64_MAX, &min_tag);
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the largest node tag", 0, INT64_MAX, &max_tag);
  node_table *nodes = &data->nodes;
  for (long long b = 0; status == CLMG_SUCCESS && b < blocks; ++b) {
    long long dim, tag, parametric = 0, count = 0;
    status = read_integer(r, "an entity dimension (0 to 3)", 0, 3, &dim);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "an entity tag", INT32_MIN, INT32_MAX, &tag);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "0 (no parametric coordinates)", 0, 0, &parametric);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "the number of nodes in the block", 0, total, &count);
    /* a block lists its node tags, then their coordinates */
    size_t first = nodes->count;
    for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
      long long node_tag;
      status = read_integer(r, "a node tag", 1, INT64_MAX, &node_tag);
      if (status == CLMG_SUCCESS)
        status = add_node(r, nodes, node_tag, r->line);
    }
    for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k)
      for (int d = 0; d < 3 && status == CLMG_SUCCESS; ++d)
        status = read_double(r, "a coordinate", &nodes->xyz[3 * (first + (size_t)k) + (size_t)d]);
    if (status == CLMG_SUCCESS && nodes->count > (size_t)total)
      status = fail_line(r, r->line,
                         "expected %lld nodes in all (as announced on line %ld), found %zu so far",
                         total, announced, nodes->count);
  }
  if (status == CLMG_SUCCESS && nodes->count != (size_t)total)
    status = fail_line(r, r->line, "expected %lld nodes (as announced on line %ld), found %zu",
                       total, announced, nodes->count);
  if (status == CLMG_SUCCESS)
    status = expect_word(r, "$EndNodes");
  return status == CLMG_SUCCESS ? index_nodes(r, nodes) : status;
}

static clmg_status read_elements_41(reader *r, msh_data *data) {
  long long blocks, total, min_tag, max_tag, found = 0;
  clmg_status status = read_integer(r, "the number of element blocks", 0, INT32_MAX, &blocks);
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the number of elements", 0, INT32_MAX, &total);
  long announced = r->line;
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the smallest element tag", 0, INT64_MAX, &min_tag);
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the largest element tag", 0, INT64_MAX, &max_tag);
  for (long long b = 0; status == CLMG_SUCCESS && b < blocks; ++b) {
    long long dim = 0, tag = 0, type = 0, count = 0;
    status = read_integer(r, "an entity dimension (0 to 3)", 0, 3, &dim);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "an entity tag", INT32_MIN, INT32_MAX, &tag);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "an element type", 1, INT32_MAX, &type);
    if (status == CLMG_SUCCESS && !is_supported_type(type))
      status = unsupported_type(r, type);
    if (status == CLMG_SUCCESS)
      status = read_integer(r, "the number of elements in the block", 0, INT64_MAX, &count);
    if (status == CLMG_SUCCESS && count > total - found)
      status = fail_line(r, r->line,
                         "expected at most %lld elements in this block (the total on line %ld "
                         "is %lld, and %lld came before), found %lld",
                         total - found, announced, total, found, count);
    long long physical = entity_physical_tag(data, dim, tag);
    for (long long k = 0; status == CLMG_SUCCESS && k < count; ++k) {
      long long element_tag;
      status = read_integer(r, "an element tag", 1, INT64_MAX, &element_tag);
      if (status == CLMG_SUCCESS)
        status = add_element(r, data, type, physical, r->line);
    }
    found += count;
  }
  if (status == CLMG_SUCCESS && found != total)
    status = fail_line(r, r->line, "expected %lld elements (as announced on line %ld), found %lld",
                       total, announced, found);
  return status == CLMG_SUCCESS ? expect_word(r, "$EndElements") : status;
}

/* ---- building the mesh ---- */

/* A face (2 or 4 vertices, sorted) and where it comes from. */
typedef struct face_record {
  int32_t key[4];
  int32_t tag;    /* file faces: their tag; cell faces: INT32_MAX */
  int32_t cell;   /* cell faces: the cell; file faces: -1 */
  int32_t origin; /* cell faces: the local face; file faces: the element */
} face_record;

static int compare_keys(const int32_t *x, const int32_t *y, int count) {
  for (int k = 0; k < count; ++k)
    if (x[k] != y[k])
      return (x[k] > y[k]) - (x[k] < y[k]);
  return 0;
}

/* By vertices, then file faces (smallest tag first), then cell faces. */
static int compare_faces(const void *a, const void *b) {
  const face_record *x = a, *y = b;
  int order = compare_keys(x->key, y->key, 4);
  if (order)
    return order;
  if (x->tag != y->tag)
    return (x->tag > y->tag) - (x->tag < y->tag);
  return (x->cell > y->cell) - (x->cell < y->cell);
}

static void sort_small(int32_t *values, int count) {
  for (int k = 1; k < count; ++k)
    for (int j = k; j > 0 && values[j - 1] > values[j]; --j) {
      int32_t swap = values[j];
      values[j] = values[j - 1];
      values[j - 1] = swap;
    }
}

static face_record make_face(const int32_t *vertices, int count, int32_t tag, int32_t cell,
                             int32_t origin) {
  face_record f = {{INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX}, tag, cell, origin};
  memcpy(f.key, vertices, (size_t)count * sizeof *vertices);
  sort_small(f.key, count);
  return f;
}

/* A cell's sorted vertices, to find cells listed twice. */
typedef struct cell_record {
  int32_t key[8];
  int32_t cell;
} cell_record;

static int compare_cells(const void *a, const void *b) {
  const cell_record *x = a, *y = b;
  int order = compare_keys(x->key, y->key, 8);
  return order ? order : (x->cell > y->cell) - (x->cell < y->cell);
}

static const char *cell_name(int dim, int simplex) {
  return dim == 3 ? (simplex ? "tetrahedron" : "hexahedron")
                  : (simplex ? "triangle" : "quadrilateral");
}

/* Error for a cell whose corners do not span a cell of either orientation. */
static clmg_status folded_cell(const reader *r, const element_list *cells, size_t e, int dim,
                               double quality) {
  return fail_line(r, cells->lines[e],
                   "expected a %s with corners in Gmsh's order (counter-clockwise%s), found "
                   "one "
                   "that is folded or degenerate (smallest corner quality %.3g)",
                   dim == 3 ? "hexahedron" : "quadrilateral",
                   dim == 3 ? " at the bottom, then the top" : "", quality);
}

/* Error for a simplex of (nearly) no volume in either orientation. */
static clmg_status degenerate_simplex(const reader *r, const element_list *cells, size_t e, int dim,
                                      double volume, double quality) {
  return fail_line(r, cells->lines[e],
                   "expected a %s of positive %s (in either vertex order), found a degenerate "
                   "one (%s %.3g, corner quality %.3g)",
                   dim == 3 ? "tetrahedron" : "triangle", dim == 3 ? "volume" : "area",
                   dim == 3 ? "volume" : "area", volume, quality);
}

/* Orients a simplex: its first two vertices are swapped where its volume is
 * negative. */
static clmg_status orient_simplex(const reader *r, const element_list *cells, size_t e, int dim,
                                  const double *coords, int32_t *cell) {
  double volume;
  double quality = clmg_mesh_simplex_quality(dim, coords, cell, NULL, &volume);
  if (quality < 0) {
    int32_t swap = cell[0];
    cell[0] = cell[1];
    cell[1] = swap;
    quality = clmg_mesh_simplex_quality(dim, coords, cell, NULL, &volume);
  }
  if (!(quality > CLMG_MESH_MIN_CELL_QUALITY))
    return degenerate_simplex(r, cells, e, dim, volume, quality);
  return CLMG_SUCCESS;
}

/* Vertices and cells: nodes that cells use, in the file's order;
 * corners to tensor order, mirrored where the Jacobian is negative
 * (simplices: reoriented); materials from the cells' tags. mesh->dim and
 * mesh->cell_type are set. */
static clmg_status build_cells(const reader *r, const msh_data *data, const element_list *cells,
                               int32_t *new_index, clmg_mesh *mesh) {
  const int dim = mesh->dim, simplex = mesh->cell_type == CLMG_CELL_SIMPLEX;
  const node_table *nodes = &data->nodes;
  const size_t per_cell = clmg_mesh_vertices_per_cell(mesh);
  size_t used = 0;
  /* the nodes cells use (marked -2), numbered in the file's order */
  for (size_t k = 0; k < nodes->count; ++k)
    new_index[k] = -1;
  for (size_t k = 0; k < cells->count * per_cell; ++k)
    new_index[cells->nodes[k]] = -2;
  for (size_t k = 0; k < nodes->count; ++k)
    if (new_index[k] == -2)
      new_index[k] = (int32_t)used++;
  if (dim == 2) {
    size_t first = (size_t)cells->nodes[0];
    double z0 = nodes->xyz[3 * first + 2];
    for (size_t k = 0; k < nodes->count; ++k)
      if (new_index[k] >= 0 && fabs(nodes->xyz[3 * k + 2] - z0) > 1e-12 * (1 + fabs(z0)))
        return fail_line(r, nodes->lines[k],
                         "expected z = %.17g (a 2D mesh lies in a plane z = const, as node "
                         "%lld on line %ld), found z = %.17g at node %lld",
                         z0, nodes->tags[first], nodes->lines[first], nodes->xyz[3 * k + 2],
                         nodes->tags[k]);
  }
  mesh->num_vertices = used;
  mesh->num_cells = cells->count;
  mesh->coords = malloc(used * (size_t)dim * sizeof *mesh->coords);
  mesh->cells = malloc(cells->count * per_cell * sizeof *mesh->cells);
  mesh->cell_material = malloc((cells->count ? cells->count : 1) * sizeof *mesh->cell_material);
  if (!mesh->coords || !mesh->cells || !mesh->cell_material)
    return out_of_memory(r);
  memcpy(mesh->cell_material, cells->tags, cells->count * sizeof *mesh->cell_material);
  for (size_t k = 0; k < nodes->count; ++k)
    if (new_index[k] >= 0)
      memcpy(mesh->coords + (size_t)new_index[k] * (size_t)dim, nodes->xyz + 3 * k,
             (size_t)dim * sizeof(double));
  /* tensor corner t sits at Gmsh corner from_gmsh[t]; flip_x mirrors i */
  static const int from_gmsh[8] = {0, 1, 3, 2, 4, 5, 7, 6};
  static const int flip_x[8] = {1, 0, 3, 2, 5, 4, 7, 6};
  for (size_t e = 0; e < cells->count; ++e) {
    int32_t *cell = mesh->cells + e * per_cell;
    if (simplex) {
      for (size_t k = 0; k < per_cell; ++k)
        cell[k] = new_index[cells->nodes[e * per_cell + k]];
      clmg_status status = orient_simplex(r, cells, e, dim, mesh->coords, cell);
      if (status != CLMG_SUCCESS)
        return status;
      continue;
    }
    for (size_t k = 0; k < per_cell; ++k)
      cell[k] = new_index[cells->nodes[e * per_cell + (size_t)from_gmsh[k]]];
    double quality = clmg_mesh_cell_quality(dim, mesh->coords, cell, NULL, NULL);
    if (quality < 0) { /* listed clockwise (or left-handed): mirror */
      int32_t mirrored[8];
      for (size_t k = 0; k < per_cell; ++k)
        mirrored[k] = cell[flip_x[k]];
      memcpy(cell, mirrored, per_cell * sizeof *cell);
      quality = clmg_mesh_cell_quality(dim, mesh->coords, cell, NULL, NULL);
    }
    if (!(quality > CLMG_MESH_MIN_CELL_QUALITY))
      return folded_cell(r, cells, e, dim, quality);
  }
  /* a cell listed twice would hide the boundary between its copies */
  cell_record *records = malloc((cells->count ? cells->count : 1) * sizeof *records);
  if (!records)
    return out_of_memory(r);
  for (size_t e = 0; e < cells->count; ++e) {
    cell_record *c = &records[e];
    for (int k = 0; k < 8; ++k)
      c->key[k] = (size_t)k < per_cell ? mesh->cells[e * per_cell + (size_t)k] : INT32_MAX;
    sort_small(c->key, 8);
    c->cell = (int32_t)e;
  }
  qsort(records, cells->count, sizeof *records, compare_cells);
  for (size_t k = 1; k < cells->count; ++k)
    if (compare_keys(records[k].key, records[k - 1].key, 8) == 0) {
      long first = cells->lines[records[k - 1].cell], again = cells->lines[records[k].cell];
      free(records);
      return fail_line(r, again,
                       "expected a new cell, found the nodes of the cell on "
                       "line %ld again (a "
                       "surface or volume in two physical groups?)",
                       first);
    }
  free(records);
  return CLMG_SUCCESS;
}

/* Boundary faces: the faces of exactly one cell, tagged from the file's
 * faces (smallest tag), else 1. */
static clmg_status build_boundary(const reader *r, const msh_data *data, const element_list *cells,
                                  const element_list *faces, const int32_t *new_index,
                                  clmg_mesh *mesh) {
  const int dim = mesh->dim;
  const size_t per_cell = clmg_mesh_vertices_per_cell(mesh);
  const size_t per_face = clmg_mesh_vertices_per_face(mesh);
  const int faces_per_cell = (int)clmg_mesh_faces_per_cell(mesh);
  const int simplex = mesh->cell_type == CLMG_CELL_SIMPLEX;
  size_t n = 0, capacity = faces->count + (size_t)faces_per_cell * mesh->num_cells;
  face_record *records = malloc((capacity ? capacity : 1) * sizeof *records);
  if (!records)
    return out_of_memory(r);
  for (size_t f = 0; f < faces->count; ++f) {
    int32_t vertices[4];
    for (size_t k = 0; k < per_face; ++k)
      vertices[k] = new_index[faces->nodes[f * per_face + k]];
    /* a face on a node no cell uses (-1) matches no cell face below */
    records[n++] = make_face(vertices, (int)per_face, faces->tags[f], -1, (int32_t)f);
  }
  for (size_t e = 0; e < mesh->num_cells; ++e)
    for (int local = 0; local < faces_per_cell; ++local) {
      int32_t vertices[4];
      clmg_mesh_cell_face(mesh, mesh->cells + e * per_cell, local, vertices);
      records[n++] = make_face(vertices, (int)per_face, INT32_MAX, (int32_t)e, local);
    }
  qsort(records, n, sizeof *records, compare_faces);
  mesh->boundary_faces = malloc((n ? n : 1) * per_face * sizeof *mesh->boundary_faces);
  mesh->boundary_face_tag = malloc((n ? n : 1) * sizeof *mesh->boundary_face_tag);
  if (!mesh->boundary_faces || !mesh->boundary_face_tag) {
    free(records);
    return out_of_memory(r);
  }
  size_t boundary = 0;
  clmg_status status = CLMG_SUCCESS;
  for (size_t k = 0; k < n && status == CLMG_SUCCESS;) {
    size_t end = k, cell_faces = 0, cell_at = 0;
    while (end < n && compare_keys(records[end].key, records[k].key, 4) == 0) {
      if (records[end].cell >= 0 && cell_faces++ == 0)
        cell_at = end;
      end++;
    }
    const face_record *first = &records[k]; /* the file face with the smallest tag, if any */
    if (cell_faces == 0) {
      const int32_t *face_nodes = faces->nodes + (size_t)first->origin * per_face;
      char listed[128];
      int length = 0;
      for (size_t v = 0; v < per_face && length >= 0 && (size_t)length < sizeof listed; ++v)
        length += snprintf(listed + length, sizeof listed - (size_t)length, " %lld",
                           data->nodes.tags[face_nodes[v]]);
      status = fail_line(r, faces->lines[first->origin],
                         "expected a %s that is a face of a %s, found one on "
                         "nodes%s that is not",
                         dim == 2  ? "line"
                         : simplex ? "triangle"
                                   : "quadrilateral",
                         cell_name(dim, simplex), listed);
    } else if (cell_faces > 2) {
      status = fail_line(r, cells->lines[records[end - 1].cell],
                         "expected each face to be shared by at most 2 cells, "
                         "found one shared "
                         "by %zu",
                         cell_faces);
    } else if (cell_faces == 1) {
      const face_record *face = &records[cell_at];
      clmg_mesh_cell_face(mesh, mesh->cells + (size_t)face->cell * per_cell, face->origin,
                          mesh->boundary_faces + boundary * per_face);
      mesh->boundary_face_tag[boundary++] = first->cell < 0 ? first->tag : 1;
    }
    k = end;
  }
  free(records);
  mesh->num_boundary_faces = boundary;
  return status;
}

/* Error for a file with cells (or boundary faces) of two kinds. */
static clmg_status mixed_kinds(const reader *r, const element_list *first, const char *first_name,
                               const element_list *second, const char *second_name,
                               const char *why) {
  long a = first->lines[0], b = second->lines[0];
  return fail_line(r, a > b ? a : b,
                   "expected cells of one kind, found %s (line %ld) and %s (line %ld): %s",
                   first_name, a, second_name, b, why);
}

static clmg_status build_mesh(const reader *r, const msh_data *data, long elements_line,
                              clmg_mesh *mesh) {
  const int dim = data->hexes.count > 0 || data->tets.count > 0 ? 3 : 2;
  const element_list *tensor = dim == 3 ? &data->hexes : &data->quads;
  const element_list *simplices = dim == 3 ? &data->tets : &data->triangles;
  if (tensor->count == 0 && simplices->count == 0)
    return fail_line(r, elements_line,
                     "expected 3-node triangles, 4-node quadrilaterals, 4-node tetrahedra or "
                     "8-node hexahedra in $Elements, found none");
  if (tensor->count > 0 && simplices->count > 0)
    return mixed_kinds(r, tensor, dim == 3 ? "8-node hexahedra" : "4-node quadrilaterals",
                       simplices, dim == 3 ? "4-node tetrahedra" : "3-node triangles",
                       "a clmg mesh holds tensor cells or simplices, not both");
  const int simplex = simplices->count > 0;
  if (dim == 3) { /* boundary faces of the other kind belong to no cell */
    const element_list *wrong = simplex ? &data->quads : &data->triangles;
    if (wrong->count > 0)
      return fail_line(r, wrong->lines[0], "expected %s as boundary faces of %s, found a %s",
                       simplex ? "triangles" : "quadrilaterals",
                       simplex ? "tetrahedra" : "hexahedra",
                       simplex ? "4-node quadrilateral" : "3-node triangle");
  }
  mesh->dim = dim;
  mesh->cell_type = simplex ? CLMG_CELL_SIMPLEX : CLMG_CELL_TENSOR;
  const element_list *cells = simplex ? simplices : tensor;
  const element_list *faces = dim == 2 ? &data->lines : simplex ? &data->triangles : &data->quads;
  int32_t *new_index = malloc((data->nodes.count ? data->nodes.count : 1) * sizeof *new_index);
  if (!new_index)
    return out_of_memory(r);
  clmg_status status = build_cells(r, data, cells, new_index, mesh);
  if (status == CLMG_SUCCESS)
    status = build_boundary(r, data, cells, faces, new_index, mesh);
  free(new_index);
  return status;
}

/* ---- the file ---- */

/* $MeshFormat: version 2.2 or 4.1, ASCII. */
static clmg_status read_header(reader *r, int *version) {
  clmg_status status = expect_word(r, "$MeshFormat");
  char *token = status == CLMG_SUCCESS ? next_token(r) : NULL;
  if (status == CLMG_SUCCESS) {
    if (token && strcmp(token, "2.2") == 0)
      *version = 22;
    else if (token && strcmp(token, "4.1") == 0)
      *version = 41;
    else
      status = expected(r, "the format version 2.2 or 4.1", token);
  }
  long long file_type = 0, data_size = 0;
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the file type 0 (ASCII) or 1 (binary)", 0, 1, &file_type);
  if (status == CLMG_SUCCESS && file_type != 0)
    status = fail_line(r, r->line,
                       "expected file type 0 (ASCII), found 1 (binary): clmg reads ASCII .msh "
                       "files (save with Mesh.Binary = 0)");
  if (status == CLMG_SUCCESS)
    status = read_integer(r, "the data size", 1, 16, &data_size);
  return status == CLMG_SUCCESS ? expect_word(r, "$EndMeshFormat") : status;
}

static clmg_status parse(reader *r, clmg_mesh *out) {
  int version = 0;
  clmg_status status = read_header(r, &version);
  if (status != CLMG_SUCCESS)
    return status;
  msh_data data;
  memset(&data, 0, sizeof data);
  int have_nodes = 0, have_elements = 0, have_entities = 0;
  long elements_line = 0; /* where $Elements starts */
  char *token = NULL;
  while (status == CLMG_SUCCESS && (token = next_token(r)) != NULL) {
    if (strcmp(token, "$Nodes") == 0) {
      if (have_nodes)
        status = fail_line(r, r->line, "expected one $Nodes section, found a second");
      else
        status = version == 22 ? read_nodes_22(r, &data) : read_nodes_41(r, &data);
      have_nodes = 1;
    } else if (strcmp(token, "$Elements") == 0) {
      elements_line = r->line;
      if (!have_nodes || have_elements)
        status = fail_line(r, r->line, "expected %s, found %s",
                           have_elements ? "one $Elements section" : "$Nodes before $Elements",
                           have_elements ? "a second" : "$Elements");
      else
        status = version == 22 ? read_elements_22(r, &data) : read_elements_41(r, &data);
      have_elements = 1;
    } else if (strcmp(token, "$Entities") == 0 && version == 41) {
      if (have_nodes || have_entities)
        status = fail_line(r, r->line, "expected one $Entities section, before $Nodes, found %s",
                           have_entities ? "a second" : "one after $Nodes");
      else
        status = read_entities_41(r, &data);
      have_entities = 1;
    } else if (token[0] == '$' && strncmp(token, "$End", 4) != 0 &&
               strcmp(token, "$MeshFormat") != 0) {
      char name[64];
      snprintf(name, sizeof name, "%.60s", token);
      status = skip_section(r, name);
    } else {
      char buffer[64];
      status = fail_line(r, r->line, "expected a section such as $Nodes, found %s",
                         describe(token, buffer, sizeof buffer));
    }
  }
  if (status == CLMG_SUCCESS)
    status = r->stream; /* the loop ends at the end of the file or where the stream failed */
  if (status == CLMG_SUCCESS && !have_elements)
    status = expected(r, have_nodes ? "$Elements" : "$Nodes", NULL);
  if (status == CLMG_SUCCESS)
    status = build_mesh(r, &data, elements_line, out);
  msh_data_free(&data);
  return status;
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
    if (error) {
      snprintf(error->message, sizeof error->message, "cannot open %s: %s", path, strerror(errno));
      clmg_message_sanitize(error->message, sizeof error->message);
    }
    return CLMG_ERROR_IO;
  }
  reader r = {.path = path, .file = file, .line = 1, .error = error};
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  clmg_status status = parse(&r, out);
  clmg_leave_c_numeric_locale(&locale);
  fclose(file);
  if (status == CLMG_SUCCESS) { /* a last guard: what is returned is a valid mesh */
    clmg_error check = {{0}};
    if (clmg_mesh_check(out, &check) != CLMG_SUCCESS) {
      status = CLMG_ERROR_PARSE;
      if (error)
        snprintf(error->message, sizeof error->message, "%.200s: the mesh is not valid: %.700s",
                 path, check.message);
    }
  }
  if (status != CLMG_SUCCESS) {
    clmg_mesh_free(out);
    if (error) /* paths and file contents reach the message verbatim */
      clmg_message_sanitize(error->message, sizeof error->message);
  }
  return status;
}
