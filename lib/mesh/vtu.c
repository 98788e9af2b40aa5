/* VTK XML UnstructuredGrid output (.vtu) of a mesh with fields on the nodes
 * of a Q1 or Q2 space (P1 or P2 on simplices), for ParaView and VisIt:
 * binary (raw appended data, UInt64 block headers) or ASCII. Q1 cells are
 * written as VTK_QUAD / VTK_HEXAHEDRON, Q2 cells as VTK_BIQUADRATIC_QUAD /
 * VTK_TRIQUADRATIC_HEXAHEDRON, so ParaView interpolates (and, with
 * "Nonlinear Subdivision Level", draws) the quadratic solution itself;
 * simplices as VTK_TRIANGLE / VTK_TETRA or VTK_QUADRATIC_TRIANGLE /
 * VTK_QUADRATIC_TETRA, whose node order is clmg's P2 order. Cell data: the
 * cell's index and, where the mesh has materials, its material id. */
#define _POSIX_C_SOURCE 200809L /* locale_t (core/textio.h) */

#include "mesh/mesh_internal.h"
#include "core/textio.h"
#include "clmg/output_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  VTK_TRIANGLE = 5,
  VTK_TETRA = 10,
  VTK_QUADRATIC_TRIANGLE = 22,
  VTK_QUADRATIC_TETRA = 24,
  VTK_QUAD = 9,
  VTK_HEXAHEDRON = 12,
  VTK_BIQUADRATIC_QUAD = 28,
  VTK_TRIQUADRATIC_HEXAHEDRON = 29
};

/* VTK's node order as tensor coordinates (a, b, c) in units of h = 1/degree:
 * corners counter-clockwise (bottom face, then top), then for degree 2 the
 * edge midpoints in VTK's edge order, the face centres (-x, +x, -y, +y, -z,
 * +z) and the body centre. */
static const unsigned char quad_q1[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
static const unsigned char quad_q2[9][2] = {{0, 0}, {2, 0}, {2, 2}, {0, 2}, {1, 0},
                                            {2, 1}, {1, 2}, {0, 1}, {1, 1}};
static const unsigned char hex_q1[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                           {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
static const unsigned char hex_q2[27][3] = {
    {0, 0, 0}, {2, 0, 0}, {2, 2, 0}, {0, 2, 0}, {0, 0, 2}, {2, 0, 2},
    {2, 2, 2}, {0, 2, 2}, /* corners */
    {1, 0, 0}, {2, 1, 0}, {1, 2, 0}, {0, 1, 0}, {1, 0, 2}, {2, 1, 2},
    {1, 2, 2}, {0, 1, 2}, {0, 0, 1}, {2, 0, 1}, {2, 2, 1}, {0, 2, 1}, /* edges */
    {0, 1, 1}, {2, 1, 1}, {1, 0, 1}, {1, 2, 1}, {1, 1, 0}, {1, 1, 2}, /* faces */
    {1, 1, 1}};

static void set_error(clmg_error *error, const char *path, const char *what) {
  if (error)
    snprintf(error->message, sizeof error->message, "%.200s: %.800s", path, what);
}

/* local node indices (tensor order) of a cell in VTK order; returns the count
 */
static size_t vtk_order(const clmg_mesh *mesh, int degree, int32_t *order, int *cell_type) {
  const int dim = mesh->dim;
  size_t per_side = (size_t)degree + 1, count = 0;
  if (mesh->cell_type == CLMG_CELL_SIMPLEX) { /* clmg's P1/P2 order is VTK's */
    count = (size_t)dim + 1 + (degree == 2 ? (size_t)clmg_simplex_num_edges(dim) : 0);
    for (size_t k = 0; k < count; ++k)
      order[k] = (int32_t)k;
    *cell_type = dim == 2 ? (degree == 1 ? VTK_TRIANGLE : VTK_QUADRATIC_TRIANGLE)
                          : (degree == 1 ? VTK_TETRA : VTK_QUADRATIC_TETRA);
  } else if (dim == 2) {
    const unsigned char(*nodes)[2] = degree == 1 ? quad_q1 : quad_q2;
    count = degree == 1 ? 4 : 9;
    for (size_t k = 0; k < count; ++k)
      order[k] = (int32_t)(nodes[k][0] + per_side * nodes[k][1]);
    *cell_type = degree == 1 ? VTK_QUAD : VTK_BIQUADRATIC_QUAD;
  } else {
    const unsigned char(*nodes)[3] = degree == 1 ? hex_q1 : hex_q2;
    count = degree == 1 ? 8 : 27;
    for (size_t k = 0; k < count; ++k)
      order[k] = (int32_t)(nodes[k][0] + per_side * (nodes[k][1] + per_side * nodes[k][2]));
    *cell_type = degree == 1 ? VTK_HEXAHEDRON : VTK_TRIQUADRATIC_HEXAHEDRON;
  }
  return count;
}

/* What one file needs: the nodes, the cells in VTK order and the fields. */
typedef struct vtu_data {
  const clmg_mesh *mesh;
  /* the fields in file order: the node fields, then the cell fields */
  const clmg_vtu_field **fields;
  size_t num_fields, num_point_fields;
  int32_t *cell_nodes;
  double *coords;
  size_t num_nodes;
  int32_t order[27];
  size_t per_cell, stride;
  int cell_type;
} vtu_data;

static const char *host_byte_order(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1 ? "LittleEndian" : "BigEndian";
}

/* Values a node or cell of field f has in the file: 1 or 3. */
static size_t field_width(const clmg_vtu_field *f) {
  return f->components >= 2 ? 3 : 1;
}

/* Nodes or cells field f has values on. */
static size_t field_tuples(const vtu_data *d, const clmg_vtu_field *f) {
  return f->on_cells ? d->mesh->num_cells : d->num_nodes;
}

/* The XML up to the opening <PointData ...> tag. */
static void write_header(FILE *out, const vtu_data *d) {
  fprintf(out,
          "<?xml version=\"1.0\"?>\n"
          "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"%s\" "
          "header_type=\"UInt64\">\n<UnstructuredGrid>\n",
          host_byte_order());
  fprintf(out, "<Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n", d->num_nodes,
          d->mesh->num_cells);
  fputs("<PointData", out);
  if (d->num_point_fields > 0) { /* the first field is the one ParaView colours by */
    fputs(field_width(d->fields[0]) == 1 ? " Scalars=\"" : " Vectors=\"", out);
    clmg_output_xml_text(out, d->fields[0]->name);
    fputc('"', out);
  }
  fputs(">\n", out);
}

/* The DataArray tag of field f up to its format. */
static void open_field(FILE *out, const clmg_vtu_field *f) {
  fputs("<DataArray type=\"Float64\" Name=\"", out);
  clmg_output_xml_text(out, f->name);
  fputc('"', out);
  if (field_width(f) == 3)
    fputs(" NumberOfComponents=\"3\"", out);
}

/* Value k (of field_tuples * field_width) as written: 2-vectors get z = 0. */
static double field_value(const clmg_vtu_field *f, size_t k) {
  if (f->components != 2)
    return f->values[k];
  return k % 3 == 2 ? 0.0 : f->values[(k / 3) * 2 + k % 3];
}

/* ---- ASCII ---- */

static void write_ascii(FILE *out, const vtu_data *d) {
  const clmg_mesh *mesh = d->mesh;
  /* %.17g in the "C" locale: every double reads back bit for bit */
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  write_header(out, d);
  for (size_t f = 0; f < d->num_fields; ++f) {
    const clmg_vtu_field *field = d->fields[f];
    if (f == d->num_point_fields)
      fputs("</PointData>\n<CellData Scalars=\"cell\">\n", out);
    open_field(out, field);
    fputs(" format=\"ascii\">\n", out);
    size_t width = field_width(field), count = field_tuples(d, field) * width;
    for (size_t k = 0; k < count; ++k)
      fprintf(out, "%.17g%c", field_value(field, k), (k + 1) % width == 0 ? '\n' : ' ');
    fputs("</DataArray>\n", out);
  }
  if (d->num_fields == d->num_point_fields)
    fputs("</PointData>\n<CellData Scalars=\"cell\">\n", out);
  fputs("<DataArray type=\"Int32\" Name=\"cell\" format=\"ascii\">\n", out);
  for (size_t c = 0; c < mesh->num_cells; ++c)
    fprintf(out, "%zu\n", c);
  if (mesh->cell_material) {
    fputs("</DataArray>\n<DataArray type=\"Int32\" Name=\"material\" format=\"ascii\">\n", out);
    for (size_t c = 0; c < mesh->num_cells; ++c)
      fprintf(out, "%d\n", (int)mesh->cell_material[c]);
  }
  fputs("</DataArray>\n</CellData>\n<Points>\n"
        "<DataArray type=\"Float64\" NumberOfComponents=\"3\" "
        "format=\"ascii\">\n",
        out);
  for (size_t i = 0; i < d->num_nodes; ++i) {
    const double *x = d->coords + i * (size_t)mesh->dim;
    fprintf(out, "%.17g %.17g %.17g\n", x[0], x[1], mesh->dim == 3 ? x[2] : 0.0);
  }
  fputs("</DataArray>\n</Points>\n<Cells>\n"
        "<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c) {
    const int32_t *nodes = d->cell_nodes + c * d->stride;
    for (size_t k = 0; k < d->per_cell; ++k)
      fprintf(out, "%d%c", (int)nodes[d->order[k]], k + 1 == d->per_cell ? '\n' : ' ');
  }
  /* offsets: where each cell's connectivity ends */
  fputs("</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" "
        "format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c)
    fprintf(out, "%zu\n", (c + 1) * d->per_cell);
  fputs("</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" "
        "format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c)
    fprintf(out, "%d\n", d->cell_type);
  fputs("</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n", out);
  clmg_leave_c_numeric_locale(&locale);
}

/* ---- binary: raw appended data ----
 *
 * Every array is a block in <AppendedData encoding="raw">, after the "_"
 * that starts it: a UInt64 byte count, then the values in the host's byte
 * order (byte_order says which). A DataArray's offset is where its block
 * starts, counted from the byte after the "_". */

enum { CHUNK = 4096 };

/* Offsets (the end of each cell's connectivity) as Int32 when they fit. */
static unsigned offset_bytes(const vtu_data *d) {
  return (uint64_t)d->mesh->num_cells * d->per_cell > INT32_MAX ? 8u : 4u;
}

/* The arrays in file order: fields, cell, material (where the mesh has
 * materials), points, connectivity, offsets, types. */
static uint64_t block_bytes(const vtu_data *d, size_t array) {
  size_t cells = d->mesh->num_cells;
  if (array < d->num_fields)
    return (uint64_t)field_tuples(d, d->fields[array]) * field_width(d->fields[array]) * 8u;
  size_t kind = array - d->num_fields;
  if (kind >= 1 && !d->mesh->cell_material)
    kind++; /* no material block */
  switch (kind) {
  case 0:
  case 1:
    return (uint64_t)cells * 4u; /* cell, material: Int32 */
  case 2:
    return (uint64_t)d->num_nodes * 24u; /* points: 3 x Float64 */
  case 3:
    return (uint64_t)cells * d->per_cell * 4u; /* connectivity: Int32 (node indices are) */
  case 4:
    return (uint64_t)cells * offset_bytes(d); /* offsets: Int32 or Int64 */
  default:
    return (uint64_t)cells; /* types: UInt8 */
  }
}

/* The offset of the next array's block, counted past it. */
static unsigned long long next_offset(const vtu_data *d, size_t *array, uint64_t *offset) {
  uint64_t here = *offset;
  *offset += 8u + block_bytes(d, (*array)++);
  return (unsigned long long)here;
}

static void write_block_header(FILE *out, uint64_t bytes) {
  fwrite(&bytes, sizeof bytes, 1, out);
}

static void write_binary(FILE *out, const vtu_data *d) {
  const clmg_mesh *mesh = d->mesh;
  const size_t cells = mesh->num_cells;
  uint64_t offset = 0;
  size_t array = 0;
  write_header(out, d);
  for (size_t f = 0; f < d->num_fields; ++f) {
    if (f == d->num_point_fields)
      fputs("</PointData>\n<CellData Scalars=\"cell\">\n", out);
    open_field(out, d->fields[f]);
    fprintf(out, " format=\"appended\" offset=\"%llu\"/>\n", next_offset(d, &array, &offset));
  }
  if (d->num_fields == d->num_point_fields)
    fputs("</PointData>\n<CellData Scalars=\"cell\">\n", out);
  fprintf(out, "<DataArray type=\"Int32\" Name=\"cell\" format=\"appended\" offset=\"%llu\"/>\n",
          next_offset(d, &array, &offset));
  if (mesh->cell_material)
    fprintf(out,
            "<DataArray type=\"Int32\" Name=\"material\" format=\"appended\" "
            "offset=\"%llu\"/>\n",
            next_offset(d, &array, &offset));
  fprintf(out,
          "</CellData>\n<Points>\n"
          "<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"appended\" "
          "offset=\"%llu\"/>\n",
          next_offset(d, &array, &offset));
  fprintf(out,
          "</Points>\n<Cells>\n"
          "<DataArray type=\"Int32\" Name=\"connectivity\" format=\"appended\" "
          "offset=\"%llu\"/>\n",
          next_offset(d, &array, &offset));
  fprintf(out, "<DataArray type=\"%s\" Name=\"offsets\" format=\"appended\" offset=\"%llu\"/>\n",
          offset_bytes(d) == 4 ? "Int32" : "Int64", next_offset(d, &array, &offset));
  fprintf(out, "<DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"%llu\"/>\n",
          next_offset(d, &array, &offset));
  fputs("</Cells>\n</Piece>\n</UnstructuredGrid>\n<AppendedData encoding=\"raw\">\n_", out);

  for (size_t f = 0; f < d->num_fields; ++f) {
    const clmg_vtu_field *field = d->fields[f];
    write_block_header(out, block_bytes(d, f));
    size_t count = field_tuples(d, field) * field_width(field);
    if (field->components != 2) {
      fwrite(field->values, sizeof(double), count, out);
      continue;
    }
    double chunk[3 * CHUNK];
    for (size_t k0 = 0; k0 < count; k0 += 3 * CHUNK) {
      size_t n = count - k0 < 3 * CHUNK ? count - k0 : 3 * CHUNK;
      for (size_t k = 0; k < n; ++k)
        chunk[k] = field_value(field, k0 + k);
      fwrite(chunk, sizeof chunk[0], n, out);
    }
  }
  size_t block = d->num_fields; /* the next block, in block_bytes' order */
  int32_t index[CHUNK];
  write_block_header(out, block_bytes(d, block++));
  for (size_t c0 = 0; c0 < cells; c0 += CHUNK) {
    size_t n = cells - c0 < CHUNK ? cells - c0 : CHUNK;
    for (size_t k = 0; k < n; ++k)
      index[k] = (int32_t)(c0 + k);
    fwrite(index, sizeof index[0], n, out);
  }
  if (mesh->cell_material) {
    write_block_header(out, block_bytes(d, block++));
    fwrite(mesh->cell_material, sizeof *mesh->cell_material, cells, out);
  }
  double xyz[3 * CHUNK];
  write_block_header(out, block_bytes(d, block++));
  for (size_t i0 = 0; i0 < d->num_nodes; i0 += CHUNK) {
    size_t n = d->num_nodes - i0 < CHUNK ? d->num_nodes - i0 : CHUNK;
    for (size_t k = 0; k < n; ++k) {
      const double *x = d->coords + (i0 + k) * (size_t)mesh->dim;
      xyz[3 * k] = x[0];
      xyz[3 * k + 1] = x[1];
      xyz[3 * k + 2] = mesh->dim == 3 ? x[2] : 0.0;
    }
    fwrite(xyz, sizeof xyz[0], 3 * n, out);
  }
  write_block_header(out, block_bytes(d, block++));
  size_t used = 0;
  for (size_t c = 0; c < cells; ++c) {
    const int32_t *nodes = d->cell_nodes + c * d->stride;
    for (size_t k = 0; k < d->per_cell; ++k) {
      index[used++] = nodes[d->order[k]];
      if (used == CHUNK) {
        fwrite(index, sizeof index[0], used, out);
        used = 0;
      }
    }
  }
  fwrite(index, sizeof index[0], used, out);
  int64_t wide[CHUNK];
  int narrow = offset_bytes(d) == 4;
  write_block_header(out, block_bytes(d, block++));
  for (size_t c0 = 0; c0 < cells; c0 += CHUNK) {
    size_t n = cells - c0 < CHUNK ? cells - c0 : CHUNK;
    for (size_t k = 0; k < n; ++k) {
      if (narrow)
        index[k] = (int32_t)((c0 + k + 1) * d->per_cell);
      else
        wide[k] = (int64_t)((c0 + k + 1) * d->per_cell);
    }
    if (narrow)
      fwrite(index, sizeof index[0], n, out);
    else
      fwrite(wide, sizeof wide[0], n, out);
  }
  unsigned char types[CHUNK];
  memset(types, d->cell_type, sizeof types);
  write_block_header(out, block_bytes(d, block));
  for (size_t c0 = 0; c0 < cells; c0 += CHUNK)
    fwrite(types, 1, cells - c0 < CHUNK ? cells - c0 : CHUNK, out);
  fputs("\n</AppendedData>\n</VTKFile>\n", out);
}

/* ---- the file ---- */

clmg_status clmg_mesh_write_vtu(const char *path, const clmg_mesh *mesh, int degree,
                                const clmg_mesh_field *fields, size_t num_fields,
                                clmg_error *error) {
  return clmg_mesh_write_vtu_encoded(path, mesh, degree, fields, num_fields, CLMG_VTU_BINARY,
                                     error);
}

clmg_status clmg_mesh_write_vtu_encoded(const char *path, const clmg_mesh *mesh, int degree,
                                        const clmg_mesh_field *fields, size_t num_fields,
                                        clmg_vtu_encoding encoding, clmg_error *error) {
  clmg_vtu_field *all = calloc(num_fields ? num_fields : 1, sizeof *all);
  if (!all) {
    set_error(error, path ? path : "(null)", "write vtu: no host memory");
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t f = 0; fields && f < num_fields; ++f) {
    all[f].name = fields[f].name;
    all[f].values = fields[f].values;
  }
  clmg_status status = clmg_mesh_write_vtu_fields(path, mesh, degree, fields ? all : NULL,
                                                  num_fields, encoding, error);
  free(all);
  return status;
}

clmg_status clmg_mesh_write_vtu_fields(const char *path, const clmg_mesh *mesh, int degree,
                                       const clmg_vtu_field *fields, size_t num_fields,
                                       clmg_vtu_encoding encoding, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || !mesh || (mesh->dim != 2 && mesh->dim != 3) || (degree != 1 && degree != 2) ||
      (num_fields > 0 && !fields) || (encoding != CLMG_VTU_BINARY && encoding != CLMG_VTU_ASCII)) {
    set_error(error, path ? path : "(null)",
              "write vtu: needs a path, a 2D or 3D mesh, degree 1 or 2, the fields and "
              "CLMG_VTU_BINARY or CLMG_VTU_ASCII");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  for (size_t f = 0; f < num_fields; ++f)
    if (!fields[f].name || !fields[f].values || fields[f].components < 0 ||
        fields[f].components > 3) {
      set_error(error, path,
                "write vtu: a field has no name, no values or other than 0 to 3 components");
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
  vtu_data d;
  memset(&d, 0, sizeof d);
  d.mesh = mesh;
  d.num_fields = num_fields;
  d.fields = malloc((num_fields ? num_fields : 1) * sizeof *d.fields);
  if (!d.fields) {
    set_error(error, path, "write vtu: no host memory");
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t f = 0; f < num_fields; ++f)
    if (!fields[f].on_cells)
      d.fields[d.num_point_fields++] = &fields[f];
  for (size_t f = 0, k = d.num_point_fields; f < num_fields; ++f)
    if (fields[f].on_cells)
      d.fields[k++] = &fields[f];
  clmg_error inner = {{0}};
  clmg_status status =
      clmg_mesh_lagrange_nodes(mesh, degree, &d.cell_nodes, &d.num_nodes, &d.coords, NULL, &inner);
  if (status != CLMG_SUCCESS) {
    free(d.fields);
    set_error(error, path, inner.message);
    return status;
  }
  d.per_cell = vtk_order(mesh, degree, d.order, &d.cell_type);
  d.stride = d.per_cell; /* every node of a cell is written */

  /* Replaces an earlier file at path only once complete (clmg/output_file.h). */
  clmg_output_file *file;
  FILE *out;
  status = clmg_output_file_open(path, "wb", &file, &out, error);
  if (status != CLMG_SUCCESS) {
    free(d.cell_nodes);
    free(d.coords);
    free(d.fields);
    return status;
  }
  if (encoding == CLMG_VTU_ASCII)
    write_ascii(out, &d);
  else
    write_binary(out, &d);
  /* the stream's error flag is sticky: commit's one check covers every
   * write; errno is kept across the frees for its message */
  int saved_errno = errno;
  free(d.cell_nodes);
  free(d.coords);
  free(d.fields);
  errno = saved_errno;
  return clmg_output_file_commit(file, error);
}

clmg_status clmg_write_pvd(const char *path, const char *const *files, const double *times,
                           size_t count, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || (count > 0 && (!files || !times))) {
    set_error(error, path ? path : "(null)", "write pvd: needs a path, the files and times");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  clmg_output_file *file;
  FILE *out;
  clmg_status status = clmg_output_file_open(path, "w", &file, &out, error);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n<Collection>\n",
        out);
  for (size_t k = 0; k < count; ++k) {
    fprintf(out, "<DataSet timestep=\"%.17g\" part=\"0\" file=\"", times[k]);
    clmg_output_xml_text(out, files[k]);
    fputs("\"/>\n", out);
  }
  fputs("</Collection>\n</VTKFile>\n", out);
  clmg_leave_c_numeric_locale(&locale);
  return clmg_output_file_commit(file, error);
}
