/* VTK XML UnstructuredGrid output (.vtu, ASCII) of a mesh with fields on the
 * nodes of a Q1 or Q2 space, for ParaView and VisIt. Q1 cells are written as
 * VTK_QUAD / VTK_HEXAHEDRON, Q2 cells as VTK_BIQUADRATIC_QUAD /
 * VTK_TRIQUADRATIC_HEXAHEDRON, so ParaView interpolates (and, with
 * "Nonlinear Subdivision Level", draws) the quadratic solution itself. */
#define _POSIX_C_SOURCE 200809L /* locale_t (core/textio.h) */

#include "fem/mesh_internal.h"
#include "core/textio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
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

/* Writes text as an XML attribute value (a field's name). */
static void write_escaped(FILE *out, const char *text) {
  for (const char *c = text; *c; ++c)
    switch (*c) {
    case '&':
      fputs("&amp;", out);
      break;
    case '<':
      fputs("&lt;", out);
      break;
    case '>':
      fputs("&gt;", out);
      break;
    case '"':
      fputs("&quot;", out);
      break;
    default:
      fputc(*c, out);
    }
}

/* local node indices (tensor order) of a cell in VTK order; returns the count
 */
static size_t vtk_order(int dim, int degree, int32_t *order, int *cell_type) {
  size_t per_side = (size_t)degree + 1, count = 0;
  if (dim == 2) {
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

clmg_status clmg_mesh_write_vtu(const char *path, const clmg_mesh *mesh, int degree,
                                const clmg_mesh_field *fields, size_t num_fields,
                                clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || !mesh || (mesh->dim != 2 && mesh->dim != 3) || (degree != 1 && degree != 2) ||
      (num_fields > 0 && !fields)) {
    set_error(error, path ? path : "(null)",
              "write vtu: needs a path, a 2D or 3D mesh, degree 1 or 2 and the "
              "fields");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  for (size_t f = 0; f < num_fields; ++f)
    if (!fields[f].name || !fields[f].values) {
      set_error(error, path, "write vtu: a field has no name or no values");
      return CLMG_ERROR_INVALID_ARGUMENT;
    }
  int32_t *cell_nodes = NULL;
  double *coords = NULL;
  size_t num_nodes = 0;
  clmg_error inner = {{0}};
  clmg_status status =
      clmg_mesh_lagrange_nodes(mesh, degree, &cell_nodes, &num_nodes, &coords, NULL, &inner);
  if (status != CLMG_SUCCESS) {
    set_error(error, path, inner.message);
    return status;
  }
  FILE *out = fopen(path, "w");
  if (!out) {
    if (error)
      snprintf(error->message, sizeof error->message, "cannot open %s for writing: %s", path,
               strerror(errno));
    free(cell_nodes);
    free(coords);
    return CLMG_ERROR_IO;
  }
  int32_t order[27];
  int cell_type = 0;
  size_t per_cell = vtk_order(mesh->dim, degree, order, &cell_type);
  size_t stride = (size_t)1;
  for (int d = 0; d < mesh->dim; ++d)
    stride *= (size_t)degree + 1;

  /* %.17g in the "C" locale: every double reads back bit for bit */
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  fprintf(out, "<?xml version=\"1.0\"?>\n"
               "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" "
               "byte_order=\"LittleEndian\" "
               "header_type=\"UInt64\">\n<UnstructuredGrid>\n");
  fprintf(out, "<Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n", num_nodes,
          mesh->num_cells);
  fputs("<PointData", out);
  if (num_fields > 0) { /* the first field is the one ParaView colours by */
    fputs(" Scalars=\"", out);
    write_escaped(out, fields[0].name);
    fputc('"', out);
  }
  fputs(">\n", out);
  for (size_t f = 0; f < num_fields; ++f) {
    fputs("<DataArray type=\"Float64\" Name=\"", out);
    write_escaped(out, fields[f].name);
    fputs("\" format=\"ascii\">\n", out);
    for (size_t i = 0; i < num_nodes; ++i)
      fprintf(out, "%.17g\n", fields[f].values[i]);
    fputs("</DataArray>\n", out);
  }
  fputs("</PointData>\n<CellData Scalars=\"cell\">\n"
        "<DataArray type=\"Int32\" Name=\"cell\" format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c)
    fprintf(out, "%zu\n", c);
  fputs("</DataArray>\n</CellData>\n<Points>\n"
        "<DataArray type=\"Float64\" NumberOfComponents=\"3\" "
        "format=\"ascii\">\n",
        out);
  for (size_t i = 0; i < num_nodes; ++i) {
    const double *x = coords + i * (size_t)mesh->dim;
    fprintf(out, "%.17g %.17g %.17g\n", x[0], x[1], mesh->dim == 3 ? x[2] : 0.0);
  }
  fputs("</DataArray>\n</Points>\n<Cells>\n"
        "<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c) {
    const int32_t *nodes = cell_nodes + c * stride;
    for (size_t k = 0; k < per_cell; ++k)
      fprintf(out, "%d%c", (int)nodes[order[k]], k + 1 == per_cell ? '\n' : ' ');
  }
  /* offsets: where each cell's connectivity ends */
  fputs("</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" "
        "format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c)
    fprintf(out, "%zu\n", (c + 1) * per_cell);
  fputs("</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" "
        "format=\"ascii\">\n",
        out);
  for (size_t c = 0; c < mesh->num_cells; ++c)
    fprintf(out, "%d\n", cell_type);
  fputs("</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n", out);
  /* the stream's error flag is sticky: one check covers every write */
  int failed = ferror(out), saved_errno = errno;
  clmg_leave_c_numeric_locale(&locale);
  free(cell_nodes);
  free(coords);
  return clmg_finish_text_file(out, path, failed, saved_errno, error);
}
