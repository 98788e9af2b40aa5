/* Pictures of an n x n grid of the unit square (row-major, x fastest), for
 * clmg homg: legacy VTK files that ParaView and VisIt open, and PNG images.
 * Both replace an earlier file at the path only once complete
 * (clmg/output_file.h): a failed write leaves it as it was. */
#ifndef CLMG_GRID_OUTPUT_H
#define CLMG_GRID_OUTPUT_H

#include <stddef.h>

/* One named field of n^2 values. */
typedef struct grid_field {
  const char *name;
  const double *values;
} grid_field;

/* Writes a legacy VTK file (STRUCTURED_POINTS, binary, 32-bit floats) with
 * the fields as point data. Returns 0 with a message naming the path and
 * the reason in `error` (at most error_size bytes) on failure. */
int write_grid_vtk(const char *path, size_t n, const char *title, const grid_field *fields,
                   size_t field_count, char *error, size_t error_size);

/* Writes one field as an n x n RGB PNG, y upwards, colours from the field's
 * minimum (dark blue) to its maximum (yellow); uncompressed, so it needs no
 * zlib. Returns 0 with a message in `error` on failure. */
int write_grid_png(const char *path, size_t n, const double *values, char *error,
                   size_t error_size);

#endif
