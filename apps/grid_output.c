/* VTK and PNG pictures of structured grids: see grid_output.h. */
#include "grid_output.h"

#include <clmg.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies a library message into the caller's buffer; returns 0. */
static int fail(const clmg_error *reason, char *error, size_t error_size) {
  snprintf(error, error_size, "%s", reason->message);
  return 0;
}

static void put_be32(unsigned char *out, uint32_t v) {
  out[0] = (unsigned char)(v >> 24);
  out[1] = (unsigned char)(v >> 16);
  out[2] = (unsigned char)(v >> 8);
  out[3] = (unsigned char)v;
}

int write_grid_vtk(const char *path, size_t n, const char *title, const grid_field *fields,
                   size_t field_count, char *error, size_t error_size) {
  unsigned char *row = malloc(4 * (n ? n : 1));
  if (!row) {
    snprintf(error, error_size, "%s: out of memory for a row of %zu values", path, n);
    return 0;
  }
  /* Written beside path and renamed when complete (clmg/output_file.h), so
   * a failed write leaves an earlier file as it was. */
  clmg_error reason;
  clmg_output_file *file;
  FILE *out;
  if (clmg_output_file_open(path, "wb", &file, &out, &reason) != CLMG_SUCCESS) {
    free(row);
    return fail(&reason, error, error_size);
  }
  double h = n > 1 ? 1.0 / (double)(n - 1) : 1.0;
  /* Legacy VTK: the title line may hold up to 256 characters, no newline. */
  fprintf(out, "# vtk DataFile Version 3.0\n%.200s\nBINARY\nDATASET STRUCTURED_POINTS\n", title);
  fprintf(out, "DIMENSIONS %zu %zu 1\nORIGIN 0 0 0\nSPACING %.17g %.17g 1\nPOINT_DATA %zu\n", n, n,
          h, h, n * n);
  /* Binary legacy VTK is big-endian; one row of floats at a time. */
  int ok = 1;
  for (size_t f = 0; f < field_count && ok; ++f) {
    fprintf(out, "SCALARS %s float 1\nLOOKUP_TABLE default\n", fields[f].name);
    for (size_t j = 0; j < n && ok; ++j) {
      for (size_t i = 0; i < n; ++i) {
        float value = (float)fields[f].values[j * n + i];
        uint32_t bits;
        memcpy(&bits, &value, sizeof bits);
        put_be32(row + 4 * i, bits);
      }
      ok = fwrite(row, 4, n, out) == n;
    }
    fputc('\n', out);
  }
  /* a failed fwrite set the stream's error flag: commit reports it */
  int saved_errno = errno;
  free(row);
  errno = saved_errno;
  return clmg_output_file_commit(file, &reason) == CLMG_SUCCESS ? 1
                                                                : fail(&reason, error, error_size);
}

/* ---- PNG without zlib: deflate "stored" blocks ---- */

static uint32_t crc_table[256];

static void make_crc_table(void) {
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc_update(uint32_t crc, const unsigned char *data, size_t length) {
  for (size_t i = 0; i < length; ++i)
    crc = crc_table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

/* A PNG chunk: length, type, data, CRC of type and data. */
static int write_chunk(FILE *out, const char *type, const unsigned char *data, size_t length) {
  unsigned char header[8];
  put_be32(header, (uint32_t)length);
  memcpy(header + 4, type, 4);
  uint32_t crc = crc_update(0xffffffffu, header + 4, 4);
  crc = crc_update(crc, data, length) ^ 0xffffffffu;
  unsigned char tail[4];
  put_be32(tail, crc);
  return fwrite(header, 1, 8, out) == 8 &&
         (length == 0 || fwrite(data, 1, length, out) == length) && fwrite(tail, 1, 4, out) == 4;
}

/* Dark blue -> teal -> green -> yellow, a viridis-like ramp. */
static void colour(double t, unsigned char rgb[3]) {
  static const double stops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  if (!(t >= 0))
    t = 0;
  if (t > 1)
    t = 1;
  double x = t * 4;
  int k = x >= 4 ? 3 : (int)x;
  double w = x - k;
  for (int c = 0; c < 3; ++c)
    rgb[c] = (unsigned char)lround(stops[k][c] * (1 - w) + stops[k + 1][c] * w);
}

int write_grid_png(const char *path, size_t n, const double *values, char *error,
                   size_t error_size) {
  if (n == 0 || n > 16385) { /* one IDAT chunk holds < 2^31 bytes */
    snprintf(error, error_size, "%s: a %zu x %zu image is not supported", path, n, n);
    return 0;
  }
  make_crc_table();
  double low = INFINITY, high = -INFINITY;
  for (size_t i = 0; i < n * n; ++i) {
    low = fmin(low, values[i]);
    high = fmax(high, values[i]);
  }
  double range = high > low ? high - low : 1;
  /* The zlib stream: header, stored blocks of at most 65535 bytes, Adler-32. */
  size_t raw = n * (3 * n + 1), blocks = raw / 65535 + 1;
  size_t length = 2 + raw + 5 * blocks + 4;
  unsigned char *z = malloc(length), *line = malloc(3 * n + 1);
  if (!z || !line) {
    free(z);
    free(line);
    snprintf(error, error_size, "%s: out of memory for a %zu x %zu image", path, n, n);
    return 0;
  }
  size_t at = 0, in_block = 0, left = raw;
  uint32_t a = 1, b = 0;
  z[at++] = 0x78;
  z[at++] = 0x01;
  for (size_t row = 0; row < n; ++row) {
    size_t j = n - 1 - row; /* PNG rows go top down; y goes up */
    line[0] = 0;            /* filter: none */
    for (size_t i = 0; i < n; ++i)
      colour((values[j * n + i] - low) / range, line + 1 + 3 * i);
    for (size_t k = 0; k < 3 * n + 1; ++k) {
      if (in_block == 0) {
        size_t size = left < 65535 ? left : 65535;
        z[at++] = left <= 65535 ? 1 : 0; /* BFINAL on the last block, BTYPE 00 */
        z[at++] = (unsigned char)(size & 0xff);
        z[at++] = (unsigned char)(size >> 8);
        z[at++] = (unsigned char)(~size & 0xff);
        z[at++] = (unsigned char)((~size >> 8) & 0xff);
        in_block = size;
      }
      z[at++] = line[k];
      a = (a + line[k]) % 65521;
      b = (b + a) % 65521;
      in_block--;
      left--;
    }
  }
  put_be32(z + at, (b << 16) | a);
  at += 4;
  free(line);

  clmg_error reason;
  clmg_output_file *file;
  FILE *out;
  if (clmg_output_file_open(path, "wb", &file, &out, &reason) != CLMG_SUCCESS) {
    free(z);
    return fail(&reason, error, error_size);
  }
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  unsigned char header[13];
  put_be32(header, (uint32_t)n);
  put_be32(header + 4, (uint32_t)n);
  header[8] = 8;  /* bits per channel */
  header[9] = 2;  /* RGB */
  header[10] = 0; /* deflate */
  header[11] = 0; /* adaptive filtering */
  header[12] = 0; /* no interlace */
  /* a short fwrite sets the stream's error flag, which commit reports */
  (void)(fwrite(signature, 1, 8, out) == 8 && write_chunk(out, "IHDR", header, 13) &&
         write_chunk(out, "IDAT", z, at) && write_chunk(out, "IEND", NULL, 0));
  int saved_errno = errno;
  free(z);
  errno = saved_errno;
  return clmg_output_file_commit(file, &reason) == CLMG_SUCCESS ? 1
                                                                : fail(&reason, error, error_size);
}
