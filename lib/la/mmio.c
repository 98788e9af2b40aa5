/* Matrix Market I/O (the NIST format, math.nist.gov/MatrixMarket) for host
 * CSR matrices and dense vectors. Host code only (no OpenCL).
 *
 * What is read:
 *   %%MatrixMarket matrix <coordinate|array> <real|integer|pattern>
 *                         <general|symmetric|skew-symmetric>
 * then comment lines (starting with %), a size line ("rows cols entries" for
 * coordinate, "rows cols" for array) and the entries, 1-based, one per line.
 * complex and hermitian files are rejected as unsupported.
 *
 * Choices where the format leaves room or files in the wild differ:
 * - Keywords are matched ignoring case; blank lines, comment lines among the
 *   entries, leading/trailing white space and CRLF line ends are tolerated.
 * - Duplicate coordinate entries are summed (as clmg_csr_from_triplets does).
 * - Symmetric and skew-symmetric files should hold the lower triangle. An
 *   entry above the diagonal is accepted and mirrored like any other (many
 *   tools write such files): (i,j,v) gives a(i,j) = v and a(j,i) = v, or -v
 *   for skew. A file that stores both triangles therefore sums each pair,
 *   exactly as a general file with duplicates would. A diagonal entry in a
 *   skew-symmetric file is an error.
 * - Pattern entries get the value 1. Array files give a CSR matrix with every
 *   position stored, zeros included (an array file has no sparsity).
 * - Numbers are parsed and printed in the "C" numeric locale whatever the
 *   application's locale, so a decimal comma never corrupts a file.
 *
 * Every parse error reads "FILE:LINE: what was expected, what was found";
 * on any error the output is left empty. */
#define _POSIX_C_SOURCE 200809L /* getline, newlocale/uselocale, strncasecmp */

#include "la/internal.h"
#include "core/textio.h"
#include "clmg/output_file.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- errors ---- */

/* ---- reading lines ---- */

typedef struct mm_reader {
  const char *path;
  FILE *file;
  char *line; /* getline's buffer; the current line, without its line end */
  size_t capacity;
  size_t length;      /* of the current line, which may hold NUL bytes */
  size_t line_number; /* of the current line (1-based); lines read so far */
  uint64_t offset;    /* of the next byte to read */
  clmg_error *error;
} mm_reader;

static clmg_status parse_error(const mm_reader *reader, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static clmg_status parse_error(const mm_reader *reader, const char *format, ...) {
  va_list args;
  va_start(args, format);
  clmg_error_vset_at(reader->error, reader->path, (long)reader->line_number, format, args);
  va_end(args);
  return CLMG_ERROR_PARSE;
}

static int is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static char *skip_blanks(char *text) {
  while (is_blank(*text))
    text++;
  return text;
}

/* The longest line read: Matrix Market lines hold a few numbers (comments
 * may be longer), so a line past this is no Matrix Market (/dev/zero, a
 * binary file); the banner must fit in far less. */
enum { MM_LINE_LIMIT = 1 << 20, MM_BANNER_LIMIT = 1024 };

/* Reads the next line, of at most `limit` bytes, into reader->line, line
 * end and trailing blanks removed (a last line without a line end counts).
 * Sets *got to 0 at the end of the file. Never holds more than the limit:
 * a longer line is an error as soon as it passes it. */
static clmg_status read_line_within(mm_reader *reader, size_t limit, int *got) {
  *got = 0;
  size_t length = 0;
  int c = EOF;
  errno = 0;
  while ((c = getc_unlocked(reader->file)) != EOF) {
    reader->offset++;
    if (c == '\n')
      break;
    if (length == limit)
      return clmg_error_set(reader->error, CLMG_ERROR_PARSE,
                            "%s:%zu: expected %s of at most %zu bytes, found a longer one (no "
                            "line end: not a Matrix Market file?)",
                            reader->path, reader->line_number + 1,
                            limit == MM_BANNER_LIMIT ? "the %MatrixMarket banner line" : "a line",
                            limit);
    if (length + 1 >= reader->capacity) {
      size_t capacity = reader->capacity ? 2 * reader->capacity : 256;
      if (capacity > limit + 1)
        capacity = limit + 1;
      char *bigger = realloc(reader->line, capacity);
      if (!bigger)
        return clmg_error_set(reader->error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                              "%s:%zu: cannot hold the next line in memory", reader->path,
                              reader->line_number + 1);
      reader->line = bigger;
      reader->capacity = capacity;
    }
    reader->line[length++] = (char)c;
  }
  if (c == EOF && ferror(reader->file)) {
    int code = errno;
    return clmg_error_set(reader->error, CLMG_ERROR_IO, "%s: read error after line %zu: %s",
                          reader->path, reader->line_number,
                          code ? strerror(code) : "unknown error");
  }
  if (c == EOF && length == 0)
    return CLMG_SUCCESS; /* the end of the file */
  if (!reader->line) {   /* an empty line before any other */
    reader->line = malloc(1);
    if (!reader->line)
      return clmg_error_set(reader->error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "%s:%zu: cannot hold the next line in memory", reader->path,
                            reader->line_number + 1);
    reader->capacity = 1;
  }
  reader->line_number++;
  while (length > 0 && is_blank(reader->line[length - 1]))
    length--;
  reader->line[length] = '\0';
  reader->length = length;
  *got = 1;
  return CLMG_SUCCESS;
}

static clmg_status read_line(mm_reader *reader, int *got) {
  return read_line_within(reader, MM_LINE_LIMIT, got);
}

/* No end to the lines read: the whole file. */
#define MM_NO_END UINT64_MAX

/* Reads up to the next line that is neither blank nor a comment and starts
 * before byte `end`; *text is that line after its leading blanks, NULL at
 * the end of the file or of the range. */
static clmg_status next_data_line(mm_reader *reader, uint64_t end, char **text) {
  for (;;) {
    int got = 0;
    clmg_status status = reader->offset < end ? read_line(reader, &got) : CLMG_SUCCESS;
    if (status != CLMG_SUCCESS || !got) {
      *text = NULL;
      return status;
    }
    char *start = skip_blanks(reader->line);
    if (*start != '\0' && *start != '%') {
      /* A NUL would end the text early ("1 1 4\0.5 junk" read as 4) and
       * other control bytes are no part of a number: refuse both. */
      for (size_t k = 0; k < reader->length; ++k) {
        unsigned char byte = (unsigned char)reader->line[k];
        if ((byte < 0x20 && !is_blank((char)byte)) || byte == 0x7f)
          return parse_error(
              reader, "expected numbers, found the control byte 0x%02x at column %zu", byte, k + 1);
      }
      *text = start;
      return CLMG_SUCCESS;
    }
  }
}

/* ---- tokens ---- */

typedef struct token {
  char *start; /* NULL: no token left on the line */
  size_t length;
} token;

/* Takes the next white-space separated token from *cursor. */
static token next_token(char **cursor) {
  token result = {NULL, 0};
  char *start = skip_blanks(*cursor);
  if (*start == '\0') {
    *cursor = start;
    return result;
  }
  char *end = start;
  while (*end != '\0' && !is_blank(*end))
    end++;
  result.start = start;
  result.length = (size_t)(end - start);
  *cursor = end;
  return result;
}

static int token_is(token t, const char *word) {
  return t.start && t.length == strlen(word) && strncasecmp(t.start, word, t.length) == 0;
}

/* A printable, quoted excerpt of a token (or "end of line") for messages. */
static const char *describe_token(token t, char *buffer, size_t size) {
  if (!t.start)
    return "end of line";
  int shown = t.length > 40 ? 40 : (int)t.length;
  snprintf(buffer, size, "'%.*s%s'", shown, t.start, t.length > 40 ? "..." : "");
  return buffer;
}

/* Parses a token as a whole non-negative decimal integer. */
static int parse_unsigned(token t, unsigned long long *value) {
  if (!t.start || *t.start < '0' || *t.start > '9')
    return 0;
  char *end = NULL;
  errno = 0;
  *value = strtoull(t.start, &end, 10);
  return errno == 0 && end == t.start + t.length;
}

/* Parses a token as a whole signed decimal integer. */
static int parse_signed(token t, long long *value) {
  if (!t.start)
    return 0;
  char *end = NULL;
  errno = 0;
  *value = strtoll(t.start, &end, 10);
  return end != t.start && errno == 0 && end == t.start + t.length;
}

/* ---- the header: banner and size line ---- */

typedef clmg_mm_header mm_header;

static const char *const banner_form =
    "'%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> "
    "<general|symmetric|skew-symmetric>'";

static clmg_status read_banner(mm_reader *reader, mm_header *header) {
  int got = 0;
  clmg_status status = read_line_within(reader, MM_BANNER_LIMIT, &got);
  if (status != CLMG_SUCCESS)
    return status;
  if (!got) {
    reader->line_number = 1;
    return parse_error(reader, "expected the banner %s, found an empty file", banner_form);
  }
  char shown[64];
  char *cursor = reader->line;
  token word = next_token(&cursor);
  if (!token_is(word, "%%MatrixMarket"))
    return parse_error(reader, "expected the banner %s, found %s", banner_form,
                       describe_token(word, shown, sizeof shown));

  word = next_token(&cursor);
  if (!token_is(word, "matrix"))
    return parse_error(reader, "expected the object 'matrix', found %s",
                       describe_token(word, shown, sizeof shown));

  word = next_token(&cursor);
  if (token_is(word, "coordinate"))
    header->format = CLMG_MM_COORDINATE;
  else if (token_is(word, "array"))
    header->format = CLMG_MM_ARRAY;
  else
    return parse_error(reader, "expected the format 'coordinate' or 'array', found %s",
                       describe_token(word, shown, sizeof shown));

  word = next_token(&cursor);
  if (token_is(word, "real"))
    header->field = CLMG_MM_REAL;
  else if (token_is(word, "integer"))
    header->field = CLMG_MM_INTEGER;
  else if (token_is(word, "pattern"))
    header->field = CLMG_MM_PATTERN;
  else if (token_is(word, "complex"))
    return parse_error(reader, "the field 'complex' is unsupported: expected 'real', 'integer' or "
                               "'pattern'");
  else
    return parse_error(reader, "expected the field 'real', 'integer' or 'pattern', found %s",
                       describe_token(word, shown, sizeof shown));
  if (header->format == CLMG_MM_ARRAY && header->field == CLMG_MM_PATTERN)
    return parse_error(reader, "expected the field 'real' or 'integer' for an array file, found "
                               "'pattern' (valid for coordinate files only)");

  word = next_token(&cursor);
  if (token_is(word, "general"))
    header->symmetry = CLMG_MM_GENERAL;
  else if (token_is(word, "symmetric"))
    header->symmetry = CLMG_MM_SYMMETRIC;
  else if (token_is(word, "skew-symmetric"))
    header->symmetry = CLMG_MM_SKEW_SYMMETRIC;
  else if (token_is(word, "hermitian"))
    return parse_error(reader, "the symmetry 'hermitian' (complex) is unsupported: expected "
                               "'general', 'symmetric' or 'skew-symmetric'");
  else
    return parse_error(reader,
                       "expected the symmetry 'general', 'symmetric' or 'skew-symmetric', found %s",
                       describe_token(word, shown, sizeof shown));

  word = next_token(&cursor);
  if (word.start)
    return parse_error(reader, "expected the end of the banner after the symmetry, found %s",
                       describe_token(word, shown, sizeof shown));
  return CLMG_SUCCESS;
}

static clmg_status read_size_line(mm_reader *reader, mm_header *header) {
  const char *form =
      header->format == CLMG_MM_COORDINATE ? "'rows columns entries'" : "'rows columns'";
  char *text = NULL;
  clmg_status status = next_data_line(reader, MM_NO_END, &text);
  if (status != CLMG_SUCCESS)
    return status;
  if (!text)
    return parse_error(reader, "expected the size line %s, found the end of the file", form);

  char shown[64];
  unsigned long long numbers[3] = {0, 0, 0};
  unsigned wanted = header->format == CLMG_MM_COORDINATE ? 3 : 2;
  for (unsigned k = 0; k < wanted; k++) {
    token word = next_token(&text);
    if (!parse_unsigned(word, &numbers[k]))
      return parse_error(reader, "expected the size line %s of non-negative integers, found %s",
                         form, describe_token(word, shown, sizeof shown));
  }
  token extra = next_token(&text);
  if (extra.start)
    return parse_error(reader, "expected the end of the size line %s, found %s", form,
                       describe_token(extra, shown, sizeof shown));

  unsigned long long rows = numbers[0], cols = numbers[1];
  if (rows > INT32_MAX || cols > INT32_MAX)
    return parse_error(reader,
                       "expected at most %d rows and columns (32-bit indices), found %llu x %llu",
                       INT32_MAX, rows, cols);
  if (header->symmetry != CLMG_MM_GENERAL && rows != cols)
    return parse_error(reader, "expected a square matrix for symmetry '%s', found %llu x %llu",
                       header->symmetry == CLMG_MM_SYMMETRIC ? "symmetric" : "skew-symmetric", rows,
                       cols);
  header->rows = (size_t)rows;
  header->cols = (size_t)cols;
  header->size_line = reader->line_number;

  /* The most entries the file can hold: one per position of the stored part.
   * rows, cols < 2^31, so these products cannot overflow. */
  unsigned long long positions = rows * cols;
  if (header->symmetry == CLMG_MM_SYMMETRIC)
    positions = rows * (rows + 1) / 2;
  else if (header->symmetry == CLMG_MM_SKEW_SYMMETRIC)
    positions = rows == 0 ? 0 : rows * (rows - 1) / 2;
  if (header->format == CLMG_MM_ARRAY) {
    header->entries = (size_t)positions;
  } else {
    if (numbers[2] > positions)
      return parse_error(reader,
                         "expected at most %llu entries for a %llu x %llu matrix, found %llu",
                         positions, rows, cols, numbers[2]);
    header->entries = (size_t)numbers[2];
  }
  return CLMG_SUCCESS;
}

/* ---- the entries ---- */

/* The entries read: 64-bit indices for clmg_mm_read_entries (as the
 * distributed reader sends them), 32-bit ones (half the memory) for the
 * readers of whole files. */
typedef struct mm_triplets {
  int wide;  /* row and col are int64_t (else int32_t) */
  void *row; /* 0-based */
  void *col;
  double *val;
  size_t count;
  size_t capacity;
  size_t limit; /* the most that can be needed; capacity grows up to it */
} mm_triplets;

static void free_triplets(mm_triplets *triplets) {
  free(triplets->row);
  free(triplets->col);
  free(triplets->val);
  memset(triplets, 0, sizeof *triplets);
}

/* The arrays resized to `capacity` entries (at least 1); 0 without memory
 * (those resized so far are kept, the others as they were). */
static int resize_triplets(mm_triplets *triplets, size_t capacity) {
  size_t index_bytes = triplets->wide ? sizeof(int64_t) : sizeof(int32_t);
  size_t room = capacity ? capacity : 1;
  void *row = realloc(triplets->row, room * index_bytes);
  if (row)
    triplets->row = row;
  void *col = row ? realloc(triplets->col, room * index_bytes) : NULL;
  if (col)
    triplets->col = col;
  double *val = col ? realloc(triplets->val, room * sizeof *val) : NULL;
  if (!val)
    return 0;
  triplets->val = val;
  triplets->capacity = room;
  return 1;
}

/* Grows the arrays geometrically rather than trusting the size line with
 * one huge allocation: a truncated or corrupt file then fails with a parse
 * error instead of an allocation of what it claims. */
static clmg_status reserve_triplets(mm_reader *reader, mm_triplets *triplets, size_t wanted) {
  if (wanted <= triplets->capacity)
    return CLMG_SUCCESS;
  size_t capacity = triplets->capacity ? triplets->capacity : 4096;
  while (capacity < wanted)
    capacity = capacity > SIZE_MAX / 2 ? SIZE_MAX : 2 * capacity;
  if (capacity > triplets->limit)
    capacity = triplets->limit;
  if (capacity > SIZE_MAX / sizeof(double))
    capacity = 0;
  if (!capacity || !resize_triplets(triplets, capacity))
    return clmg_error_set(reader->error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "%s:%zu: cannot allocate room for %zu entries", reader->path,
                          reader->line_number, wanted);
  return CLMG_SUCCESS;
}

static void append_triplet(mm_triplets *triplets, size_t i, size_t j, double value) {
  if (triplets->wide) {
    ((int64_t *)triplets->row)[triplets->count] = (int64_t)i;
    ((int64_t *)triplets->col)[triplets->count] = (int64_t)j;
  } else { /* i, j < 2^31: checked against the dimensions */
    ((int32_t *)triplets->row)[triplets->count] = (int32_t)i;
    ((int32_t *)triplets->col)[triplets->count] = (int32_t)j;
  }
  triplets->val[triplets->count] = value;
  triplets->count++;
}

/* Stores a(i,j) = value (0-based) and, for a symmetric file, its mirror. */
static clmg_status add_entry(mm_reader *reader, const mm_header *header, size_t i, size_t j,
                             double value, mm_triplets *triplets) {
  int mirrored = header->symmetry != CLMG_MM_GENERAL && i != j;
  if (header->symmetry == CLMG_MM_SKEW_SYMMETRIC && i == j)
    return parse_error(reader,
                       "expected no diagonal entry in a skew-symmetric matrix, found (%zu, %zu)",
                       i + 1, j + 1);
  clmg_status status = reserve_triplets(reader, triplets, triplets->count + 1 + (size_t)mirrored);
  if (status != CLMG_SUCCESS)
    return status;
  append_triplet(triplets, i, j, value);
  if (mirrored)
    append_triplet(triplets, j, i, header->symmetry == CLMG_MM_SKEW_SYMMETRIC ? -value : value);
  return CLMG_SUCCESS;
}

/* Parses a 1-based index in [1, limit] into a 0-based one. */
static clmg_status parse_index(mm_reader *reader, char **cursor, const char *what, size_t limit,
                               size_t *index) {
  char shown[64];
  token word = next_token(cursor);
  long long value = 0;
  if (!parse_signed(word, &value))
    return parse_error(reader, "expected a %s (an integer), found %s", what,
                       describe_token(word, shown, sizeof shown));
  if (value < 1 || (unsigned long long)value > limit)
    return parse_error(reader, "expected a %s in [1, %zu], found %lld", what, limit, value);
  *index = (size_t)(value - 1);
  return CLMG_SUCCESS;
}

/* Parses the value of an entry (none for pattern files) and checks that
 * nothing follows it. */
static clmg_status parse_value(mm_reader *reader, char **cursor, clmg_mm_field field,
                               double *value) {
  char shown[64];
  if (field == CLMG_MM_PATTERN) {
    *value = 1.0;
  } else if (field == CLMG_MM_INTEGER) {
    token word = next_token(cursor);
    long long integer = 0;
    if (!parse_signed(word, &integer))
      return parse_error(reader, "expected an integer value, found %s",
                         describe_token(word, shown, sizeof shown));
    *value = (double)integer;
  } else {
    token word = next_token(cursor);
    if (!word.start)
      return parse_error(reader, "expected a real value, found end of line");
    char *end = NULL;
    errno = 0;
    *value = strtod(word.start, &end);
    if (end != word.start + word.length)
      return parse_error(reader, "expected a real value, found %s",
                         describe_token(word, shown, sizeof shown));
    /* strtod takes "nan" and "inf", which no solver can use: refuse them
     * here, where the file and line are known, not later under another
     * name. ERANGE on underflow gives a denormal, which is kept, or zero: a
     * nonzero number that became 0 changes the matrix, so it is refused
     * too; an overflow to infinity is not what the file meant. */
    if (!isfinite(*value) && errno != ERANGE)
      return parse_error(reader, "expected a finite real value, found %s",
                         describe_token(word, shown, sizeof shown));
    if (errno == ERANGE && isinf(*value))
      return parse_error(reader, "expected a real value within double range, found %s",
                         describe_token(word, shown, sizeof shown));
    if (errno == ERANGE && *value == 0)
      return parse_error(reader,
                         "expected a real value within double range, found %s, which underflows "
                         "to 0 (the smallest double is about 4.9e-324)",
                         describe_token(word, shown, sizeof shown));
  }
  token extra = next_token(cursor);
  if (extra.start)
    return parse_error(reader, "expected the end of the entry, found %s",
                       describe_token(extra, shown, sizeof shown));
  return CLMG_SUCCESS;
}

static clmg_status missing_entries(mm_reader *reader, const mm_header *header, size_t found) {
  return parse_error(reader, "expected %zu entries, file ended after %zu", header->entries, found);
}

/* Parses the entry lines that start before byte `end` (the reader is at a
 * line start), counting them in *entry_lines; more than the header's
 * entries is an error at the first line too many. */
static clmg_status read_coordinate_entries(mm_reader *reader, const mm_header *header, uint64_t end,
                                           mm_triplets *triplets, size_t *entry_lines) {
  *entry_lines = 0;
  for (;;) {
    char *text = NULL;
    clmg_status status = next_data_line(reader, end, &text);
    if (status != CLMG_SUCCESS || !text)
      return status;
    if (*entry_lines == header->entries) {
      char shown[64];
      token word = next_token(&text);
      return parse_error(reader, "expected %zu entries and then the end of the file, found %s",
                         header->entries, describe_token(word, shown, sizeof shown));
    }
    size_t i = 0, j = 0;
    double value = 0.0;
    status = parse_index(reader, &text, "row index", header->rows, &i);
    if (status == CLMG_SUCCESS)
      status = parse_index(reader, &text, "column index", header->cols, &j);
    if (status == CLMG_SUCCESS)
      status = parse_value(reader, &text, header->field, &value);
    if (status == CLMG_SUCCESS)
      status = add_entry(reader, header, i, j, value, triplets);
    if (status != CLMG_SUCCESS)
      return status;
    ++*entry_lines;
  }
}

/* Array files list the stored part column by column: everything for general
 * files, the lower triangle (skew: strictly lower) for symmetric ones. */
static clmg_status read_array_entries(mm_reader *reader, const mm_header *header,
                                      mm_triplets *triplets) {
  size_t found = 0;
  for (size_t j = 0; j < header->cols; j++) {
    size_t first_row = header->symmetry == CLMG_MM_GENERAL     ? 0
                       : header->symmetry == CLMG_MM_SYMMETRIC ? j
                                                               : j + 1;
    for (size_t i = first_row; i < header->rows; i++) {
      char *text = NULL;
      clmg_status status = next_data_line(reader, MM_NO_END, &text);
      if (status != CLMG_SUCCESS)
        return status;
      if (!text)
        return missing_entries(reader, header, found);
      double value = 0.0;
      status = parse_value(reader, &text, header->field, &value);
      if (status == CLMG_SUCCESS)
        status = add_entry(reader, header, i, j, value, triplets);
      if (status != CLMG_SUCCESS)
        return status;
      found++;
    }
  }
  return CLMG_SUCCESS;
}

/* The entry lines of a general array file that start before byte `end`
 * (the reader at a line start), as read_coordinate_entries reads a
 * coordinate file's: each value in order, its place in the file (row and
 * column) left for the caller, who knows how many lines came before. */
static clmg_status read_array_range_entries(mm_reader *reader, const mm_header *header,
                                            uint64_t end, mm_triplets *triplets,
                                            size_t *entry_lines) {
  *entry_lines = 0;
  for (;;) {
    char *text = NULL;
    clmg_status status = next_data_line(reader, end, &text);
    if (status != CLMG_SUCCESS || !text)
      return status;
    if (*entry_lines == header->entries)
      return parse_error(reader, "expected %zu entries and then the end of the file",
                         header->entries);
    double value = 0.0;
    status = parse_value(reader, &text, header->field, &value);
    if (status == CLMG_SUCCESS)
      status = reserve_triplets(reader, triplets, triplets->count + 1);
    if (status != CLMG_SUCCESS)
      return status;
    append_triplet(triplets, 0, 0, value);
    ++*entry_lines;
  }
}

/* Coordinate files: rows and columns beyond the entries read (see read_file). */
enum { MM_FREE_DIMENSION = 1 << 20, MM_DIMENSION_PER_ENTRY = 8 };

/* The dimensions a coordinate file of `entries` entries may claim. */
static int in_proportion(const mm_header *header, size_t entries) {
  size_t largest = header->rows > header->cols ? header->rows : header->cols;
  return largest <= MM_FREE_DIMENSION + MM_DIMENSION_PER_ENTRY * entries;
}

/* The shape rule for a coordinate file of `entries` entries
 * (clmg_mm_check_shape), reported at `line`; array files have theirs
 * checked with the header. */
static clmg_status check_shape(const char *path, size_t line, const mm_header *header,
                               size_t entries, int distinct, clmg_error *error) {
  if (header->format != CLMG_MM_COORDINATE || in_proportion(header, entries))
    return CLMG_SUCCESS;
  /* The result holds an array per row (CSR) or per element (vector), so
   * the size line alone would size a large allocation: the dimensions must
   * be in proportion to the entries the file really holds. */
  return clmg_error_set(error, CLMG_ERROR_PARSE,
                        "%s:%zu: the size line claims %zu x %zu, but the file holds %zu %sentries"
                        "%s: clmg accepts at most %d + %d x entries rows or columns, as a matrix "
                        "with that many empty rows is singular",
                        path, line, header->rows, header->cols, entries,
                        distinct ? "distinct " : "", distinct ? " (duplicates are summed)" : "",
                        MM_FREE_DIMENSION, MM_DIMENSION_PER_ENTRY);
}

/* Opens path for reading, the reader at its first byte. */
static clmg_status open_reader(const char *path, mm_reader *reader, clmg_error *error) {
  memset(reader, 0, sizeof *reader);
  reader->path = path;
  reader->error = error;
  reader->file = fopen(path, "rb");
  if (!reader->file)
    return clmg_error_set(error, CLMG_ERROR_IO, "cannot open %s: %s", path, strerror(errno));
  return CLMG_SUCCESS;
}

static void close_reader(mm_reader *reader) {
  free(reader->line);
  if (reader->file)
    fclose(reader->file);
  reader->line = NULL;
  reader->file = NULL;
}

/* Reads the banner and the size line, leaving the reader at the first line
 * after it. vector: only general real/integer n x 1 or 1 x n files are
 * accepted. */
static clmg_status read_header(mm_reader *reader, int vector, mm_header *header) {
  memset(header, 0, sizeof *header);
  clmg_status status = read_banner(reader, header);
  if (status == CLMG_SUCCESS && vector) {
    if (header->field == CLMG_MM_PATTERN)
      status = parse_error(reader, "expected the field 'real' or 'integer' for a vector, found "
                                   "'pattern'");
    else if (header->symmetry != CLMG_MM_GENERAL)
      status = parse_error(reader, "expected the symmetry 'general' for a vector, found '%s'",
                           header->symmetry == CLMG_MM_SYMMETRIC ? "symmetric" : "skew-symmetric");
  }
  if (status == CLMG_SUCCESS)
    status = read_size_line(reader, header);
  if (status == CLMG_SUCCESS && vector && header->rows != 1 && header->cols != 1)
    status = parse_error(reader, "expected a vector (n x 1 or 1 x n), found %zu x %zu",
                         header->rows, header->cols);
  if (status == CLMG_SUCCESS && header->format == CLMG_MM_ARRAY &&
      !in_proportion(header, header->entries))
    /* An empty shape (0 x n) holds no entries, yet reading it would walk
     * every claimed column */
    status = parse_error(reader,
                         "the size line claims a %zu x %zu array, which holds no entries: clmg "
                         "accepts at most %d rows or columns without entries",
                         header->rows, header->cols, MM_FREE_DIMENSION);
  header->data_offset = reader->offset;
  return status;
}

/* The most entries (mirrors included) that a file with this header can give. */
static size_t entry_limit(const mm_header *header) {
  return header->symmetry == CLMG_MM_GENERAL ? header->entries : 2 * header->entries;
}

/* Opens and reads a whole file into triplets (mirrors included). vector:
 * only general real/integer n x 1 or 1 x n files are accepted. */
static clmg_status read_file(const char *path, int vector, mm_header *header, mm_triplets *triplets,
                             clmg_error *error) {
  memset(triplets, 0, sizeof *triplets);
  mm_reader reader;
  clmg_status status = open_reader(path, &reader, error);
  if (status != CLMG_SUCCESS)
    return status;

  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  status = read_header(&reader, vector, header);
  if (status == CLMG_SUCCESS) {
    triplets->limit = entry_limit(header);
    if (header->format == CLMG_MM_COORDINATE) {
      size_t found = 0;
      status = read_coordinate_entries(&reader, header, MM_NO_END, triplets, &found);
      if (status == CLMG_SUCCESS && found < header->entries)
        status = missing_entries(&reader, header, found);
      if (status == CLMG_SUCCESS)
        status = check_shape(path, reader.line_number, header, triplets->count, 0, error);
    } else {
      status = read_array_entries(&reader, header, triplets);
      char *text = NULL;
      if (status == CLMG_SUCCESS)
        status = next_data_line(&reader, MM_NO_END, &text);
      if (status == CLMG_SUCCESS && text) {
        char shown[64];
        token word = next_token(&text);
        status = parse_error(&reader, "expected %zu entries and then the end of the file, found %s",
                             header->entries, describe_token(word, shown, sizeof shown));
      }
    }
  }
  clmg_leave_c_numeric_locale(&locale);
  close_reader(&reader);
  if (status != CLMG_SUCCESS)
    free_triplets(triplets);
  return status;
}

/* ---- public functions ---- */

clmg_status clmg_mm_read_header(const char *path, clmg_mm_header *header, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || !header)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path or header is NULL");
  mm_reader reader;
  clmg_status status = open_reader(path, &reader, error);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  status = read_header(&reader, 0, header);
  clmg_leave_c_numeric_locale(&locale);
  close_reader(&reader);
  return status;
}

void clmg_mm_entries_free(clmg_mm_entries *entries) {
  if (!entries)
    return;
  free(entries->rows);
  free(entries->cols);
  free(entries->values);
  memset(entries, 0, sizeof *entries);
}

/* Parses the entry lines of a coordinate file (or a general array file's
 * values, read_array_range_entries) that start in bytes [begin,
 * end) (begin at or past header->data_offset) into *triplets (its width and
 * limit set by the caller, empty), the first line numbered first_line (0:
 * unknown, counted from 1) in messages; *entry_lines and *lines as
 * clmg_mm_entries counts them. Opens its own stream, so ranges of one file
 * can be parsed at once on several threads. */
static clmg_status read_range(const char *path, const mm_header *header, uint64_t begin,
                              uint64_t end, size_t first_line, mm_triplets *triplets,
                              size_t *entry_lines, size_t *lines, clmg_error *error) {
  *entry_lines = *lines = 0;
  mm_reader reader;
  clmg_status status = open_reader(path, &reader, error);
  if (status != CLMG_SUCCESS)
    return status;
  /* The range's first line starts at begin when the byte before it ends a
   * line (or is the size line's end), else after the next line end. */
  int start_here = begin == header->data_offset;
  reader.offset = start_here ? begin : begin - 1;
  if (fseeko(reader.file, (off_t)reader.offset, SEEK_SET) != 0)
    status = clmg_error_set(error, CLMG_ERROR_IO, "%s: cannot seek to byte %llu: %s", path,
                            (unsigned long long)reader.offset, strerror(errno));
  if (status == CLMG_SUCCESS && !start_here) {
    int c = EOF;
    while ((c = getc_unlocked(reader.file)) != EOF) {
      reader.offset++;
      if (c == '\n')
        break;
    }
    if (c == EOF && ferror(reader.file))
      status = clmg_error_set(error, CLMG_ERROR_IO, "%s: read error near byte %llu", path,
                              (unsigned long long)reader.offset);
  }
  reader.line_number = first_line > 0 ? first_line - 1 : 0;
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  if (status == CLMG_SUCCESS)
    status = header->format == CLMG_MM_COORDINATE
                 ? read_coordinate_entries(&reader, header, end, triplets, entry_lines)
                 : read_array_range_entries(&reader, header, end, triplets, entry_lines);
  clmg_leave_c_numeric_locale(&locale);
  *lines = reader.line_number - (first_line > 0 ? first_line - 1 : 0);
  close_reader(&reader);
  return status;
}

clmg_status clmg_mm_read_entries(const char *path, const clmg_mm_header *header, uint64_t begin,
                                 uint64_t end, size_t first_line, clmg_mm_entries *entries,
                                 clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!entries)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "entries is NULL");
  memset(entries, 0, sizeof *entries);
  if (!path || !header)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path or header is NULL");
  if (header->format != CLMG_MM_COORDINATE)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: an array file's entries have no indices, so a part of it cannot "
                          "be read alone: read it whole (clmg_csr_read_matrix_market)",
                          path);
  if (begin < header->data_offset)
    begin = header->data_offset;
  if (end <= begin)
    return CLMG_SUCCESS;
  if (begin > (uint64_t)INT64_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: byte %llu is past the largest file offset", path,
                          (unsigned long long)begin);
  mm_triplets triplets;
  memset(&triplets, 0, sizeof triplets);
  triplets.wide = 1;
  triplets.limit = entry_limit(header);
  clmg_status status = read_range(path, header, begin, end, first_line, &triplets,
                                  &entries->entry_lines, &entries->lines, error);
  if (status != CLMG_SUCCESS) {
    free_triplets(&triplets);
    memset(entries, 0, sizeof *entries);
    return status;
  }
  entries->rows = triplets.row;
  entries->cols = triplets.col;
  entries->values = triplets.val;
  entries->count = triplets.count;
  return CLMG_SUCCESS;
}

/* ---- a whole coordinate or general array file on the host's cores ----
 * A file of at least MM_PARALLEL_MIN_BYTES of entry lines is cut into byte
 * ranges of at least MM_RANGE_MIN_BYTES, one per host thread, each parsed
 * into its own triplets (read_range) and joined in file order: the serial
 * reader's triplets, entry for entry (an array's entries numbered in file
 * order once joined, column by column: the coordinates of elasticity's
 * rigid-body modes, 118k nodes, took 50-100 ms serially). Anything but a clean read (a parse
 * error, too many or too few entry lines, no memory) is left to the serial
 * reader, which gives its message with the right line number. */
enum { MM_PARALLEL_MIN_BYTES = 4 << 20, MM_RANGE_MIN_BYTES = 1 << 20 };

typedef struct mm_range {
  uint64_t begin, end;
  mm_triplets triplets;
  size_t entry_lines, lines;
  clmg_status status;
  clmg_error error;
} mm_range;

typedef struct mm_parallel {
  const char *path;
  const mm_header *header;
  mm_range *ranges;
} mm_parallel;

static void parse_ranges(void *data, size_t thread, size_t first, size_t last) {
  (void)thread;
  mm_parallel *job = data;
  for (size_t r = first; r < last; r++) {
    mm_range *range = &job->ranges[r];
    range->status = read_range(job->path, job->header, range->begin, range->end, 0,
                               &range->triplets, &range->entry_lines, &range->lines, &range->error);
  }
}

/* Joins the ranges' triplets into the first one's arrays, freeing each
 * other range's as it goes; 0 without memory. */
static int join_ranges(mm_range *ranges, size_t count, mm_triplets *out) {
  size_t total = 0;
  for (size_t r = 0; r < count; r++)
    total += ranges[r].triplets.count;
  mm_triplets *first = &ranges[0].triplets;
  size_t index_bytes = first->wide ? sizeof(int64_t) : sizeof(int32_t);
  if (!resize_triplets(first, total))
    return 0;
  for (size_t r = 1; r < count; r++) {
    mm_triplets *t = &ranges[r].triplets;
    if (t->count) {
      memcpy((char *)first->row + first->count * index_bytes, t->row, t->count * index_bytes);
      memcpy((char *)first->col + first->count * index_bytes, t->col, t->count * index_bytes);
      memcpy(first->val + first->count, t->val, t->count * sizeof *t->val);
      first->count += t->count;
    }
    free_triplets(t);
  }
  *out = *first;
  memset(first, 0, sizeof *first);
  return 1;
}

/* The whole-file read of path's coordinate entries on the host's threads
 * where the file is large enough: *read 1 and the triplets (mirrors
 * included) in *out; *read 0 (nothing held) where it was not tried or did
 * not read cleanly, for the serial reader. */
static void read_file_parallel(const char *path, mm_header *header, mm_triplets *out, int *read) {
  *read = 0;
  memset(out, 0, sizeof *out);
  size_t threads = clmg_host_threads();
  if (threads < 2)
    return;
  clmg_error error = {{0}};
  mm_reader reader;
  if (open_reader(path, &reader, &error) != CLMG_SUCCESS)
    return;
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  clmg_status status = read_header(&reader, 0, header);
  clmg_leave_c_numeric_locale(&locale);
  off_t size = -1;
  if (status == CLMG_SUCCESS && fseeko(reader.file, 0, SEEK_END) == 0)
    size = ftello(reader.file);
  close_reader(&reader);
  int array = header->format == CLMG_MM_ARRAY && header->symmetry == CLMG_MM_GENERAL;
  if (status != CLMG_SUCCESS || (header->format != CLMG_MM_COORDINATE && !array) || size < 0 ||
      (uint64_t)size < header->data_offset ||
      (uint64_t)size - header->data_offset < MM_PARALLEL_MIN_BYTES)
    return;
  uint64_t bytes = (uint64_t)size - header->data_offset;
  size_t count = (size_t)(bytes / MM_RANGE_MIN_BYTES);
  if (count > threads)
    count = threads;
  mm_range *ranges = calloc(count, sizeof *ranges);
  if (!ranges)
    return;
  for (size_t r = 0; r < count; r++) {
    ranges[r].begin = header->data_offset + bytes / count * r;
    ranges[r].end = r + 1 == count ? (uint64_t)size : header->data_offset + bytes / count * (r + 1);
    ranges[r].triplets.wide = 0; /* the serial reader's width: indices below 2^31 */
    ranges[r].triplets.limit = entry_limit(header);
  }
  mm_parallel job = {path, header, ranges};
  clmg_host_parallel_for(count, 1, parse_ranges, &job);
  int clean = 1;
  size_t entry_lines = 0;
  for (size_t r = 0; r < count; r++) {
    clean = clean && ranges[r].status == CLMG_SUCCESS;
    entry_lines += ranges[r].entry_lines;
  }
  if (clean && entry_lines == header->entries && join_ranges(ranges, count, out)) {
    /* an array's k-th entry is (k mod rows, k / rows): below 2^31 each, as
     * the dimensions were checked */
    for (size_t k = 0; array && k < out->count; k++) {
      ((int32_t *)out->row)[k] = (int32_t)(k % header->rows);
      ((int32_t *)out->col)[k] = (int32_t)(k / header->rows);
    }
    size_t lines = 0;
    for (size_t r = 0; r < count; r++)
      lines += ranges[r].lines;
    /* the shape's rule, as the serial reader applies it at its last line */
    if (check_shape(path, header->size_line + lines, header, out->count, 0, &error) == CLMG_SUCCESS)
      *read = 1;
    else
      free_triplets(out);
  }
  for (size_t r = 0; r < count; r++)
    free_triplets(&ranges[r].triplets);
  free(ranges);
}

clmg_status clmg_mm_check_shape(const char *path, const clmg_mm_header *header, size_t entries,
                                int distinct, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || !header)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path or header is NULL");
  return check_shape(path, header->size_line, header, entries, distinct, error);
}

clmg_status clmg_csr_read_matrix_market(const char *path, clmg_csr *out, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!out)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!path)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path is NULL");
  mm_header header;
  mm_triplets triplets;
  int read = 0;
  read_file_parallel(path, &header, &triplets, &read);
  clmg_status status = read ? CLMG_SUCCESS : read_file(path, 0, &header, &triplets, error);
  if (status != CLMG_SUCCESS)
    return status;
  status = clmg_csr_from_triplets(header.rows, header.cols, triplets.count, triplets.row,
                                  triplets.col, triplets.val, out, error);
  free_triplets(&triplets);
  /* The rule again for the entries left once duplicates are summed: what
   * clmg_csr_write_matrix_market writes of this matrix must read back. */
  if (status == CLMG_SUCCESS) {
    status = check_shape(path, header.size_line, &header, clmg_csr_nnz(out), 1, error);
    if (status != CLMG_SUCCESS)
      clmg_csr_free(out);
  }
  return status;
}

clmg_status clmg_read_matrix_market_vector(const char *path, double **values, size_t *n,
                                           clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!values || !n)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "values or n is NULL");
  *values = NULL;
  *n = 0;
  if (!path)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path is NULL");
  mm_header header;
  mm_triplets triplets;
  clmg_status status = read_file(path, 1, &header, &triplets, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t length = header.rows * header.cols; /* one of them is 1 (or 0) */
  double *dense = calloc(length ? length : 1, sizeof *dense);
  if (!dense) {
    free_triplets(&triplets);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "cannot allocate a vector of %zu values", length);
  }
  /* For n x 1 the column index is 0 and for 1 x n the row index is, so their
   * sum is the position; coordinate duplicates are summed. */
  for (size_t k = 0; k < triplets.count; k++)
    dense[(size_t)((int32_t *)triplets.row)[k] + (size_t)((int32_t *)triplets.col)[k]] +=
        triplets.val[k];
  free_triplets(&triplets);
  *values = dense;
  *n = length;
  return CLMG_SUCCESS;
}

/* Commits a written file: the old one at path is replaced only when every
 * write succeeded. A failed fprintf normally sets the stream's error flag,
 * which commit sees; one that failed before writing (EOVERFLOW) does not. */
static clmg_status finish_output(clmg_output_file *output, FILE *file, const char *path, int failed,
                                 int saved_errno, clmg_error *error) {
  if (failed && !ferror(file)) {
    clmg_output_file_discard(output);
    return clmg_error_set(error, CLMG_ERROR_IO, "cannot write %s: %s", path,
                          strerror(saved_errno ? saved_errno : EIO));
  }
  errno = saved_errno;
  return clmg_output_file_commit(output, error);
}

clmg_status clmg_csr_write_matrix_market(const char *path, const clmg_csr *a, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || !a)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path or matrix is NULL");
  if (!a->row_ptr || (clmg_csr_nnz(a) > 0 && (!a->col || !a->val)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "the %zu x %zu matrix has no arrays",
                          a->rows, a->cols);
  clmg_output_file *output;
  FILE *file;
  clmg_status status = clmg_output_file_open(path, "w", &output, &file, error);
  if (status != CLMG_SUCCESS)
    return status;

  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  int failed = fprintf(file,
                       "%%%%MatrixMarket matrix coordinate real general\n"
                       "%% written by clmg %s\n%zu %zu %zu\n",
                       clmg_version_string(), a->rows, a->cols, clmg_csr_nnz(a)) < 0;
  /* %.17g: enough digits that every double reads back bit for bit. */
  for (size_t i = 0; i < a->rows && !failed; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1] && !failed; k++)
      failed = fprintf(file, "%zu %d %.17g\n", i + 1, (int)a->col[k] + 1, a->val[k]) < 0;
  int saved_errno = errno;
  clmg_leave_c_numeric_locale(&locale);
  return finish_output(output, file, path, failed, saved_errno, error);
}

clmg_status clmg_write_matrix_market_vector(const char *path, const double *values, size_t n,
                                            clmg_error *error) {
  return clmg_write_matrix_market_array(path, values, n, 1, error);
}

clmg_status clmg_write_matrix_market_array(const char *path, const double *values, size_t rows,
                                           size_t cols, clmg_error *error) {
  if (error)
    error->message[0] = '\0';
  if (!path || (rows > 0 && cols > 0 && !values))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "path or values is NULL");
  clmg_output_file *output;
  FILE *file;
  clmg_status status = clmg_output_file_open(path, "w", &output, &file, error);
  if (status != CLMG_SUCCESS)
    return status;

  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  int failed = fprintf(file,
                       "%%%%MatrixMarket matrix array real general\n"
                       "%% written by clmg %s\n%zu %zu\n",
                       clmg_version_string(), rows, cols) < 0;
  /* Array files list the entries column by column; values are row-major. */
  for (size_t j = 0; j < cols && !failed; j++)
    for (size_t i = 0; i < rows && !failed; i++)
      failed = fprintf(file, "%.17g\n", values[i * cols + j]) < 0;
  int saved_errno = errno;
  clmg_leave_c_numeric_locale(&locale);
  return finish_output(output, file, path, failed, saved_errno, error);
}
