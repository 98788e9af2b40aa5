/* clmg bench reports: reading them (a small recursive-descent JSON parser
 * that checks the schema as it goes, so nothing but the report's own fields
 * is ever stored), the comparison table and the HTML page. See
 * bench_report.h. */
#include "bench_report.h"
#include "perf_common.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clmg/output_file.h"

#define MAX_FILE_BYTES ((size_t)64 << 20)
#define MAX_DEPTH 64
#define REPLACEMENT_CHARACTER "\xEF\xBF\xBD" /* U+FFFD */

/* ---- messages ---- */

static void set_message(char *message, size_t size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_message(char *message, size_t size, const char *format, ...) {
  if (message == NULL || size == 0) {
    return;
  }
  va_list args;
  va_start(args, format);
  vsnprintf(message, size, format, args);
  va_end(args);
}

/* ---- UTF-8 ---- */

/* Bytes of the well-formed UTF-8 sequence at s (available bytes readable),
 * or 0 when it is not one (overlong forms and surrogates included). */
static size_t utf8_sequence_length(const unsigned char *s, size_t available) {
  if (available == 0) {
    return 0;
  }
  unsigned char c = s[0], low = 0x80, high = 0xBF;
  size_t length;
  if (c < 0x80) {
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c == 0xE0) {
    length = 3;
    low = 0xA0;
  } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
    length = 3;
  } else if (c == 0xED) {
    length = 3;
    high = 0x9F;
  } else if (c == 0xF0) {
    length = 4;
    low = 0x90;
  } else if (c >= 0xF1 && c <= 0xF3) {
    length = 4;
  } else if (c == 0xF4) {
    length = 4;
    high = 0x8F;
  } else {
    return 0;
  }
  if (available < length || s[1] < low || s[1] > high) {
    return 0;
  }
  for (size_t i = 2; i < length; i++) {
    if (s[i] < 0x80 || s[i] > 0xBF) {
      return 0;
    }
  }
  return length;
}

static size_t utf8_encode(uint32_t code_point, char bytes[4]) {
  if (code_point < 0x80) {
    bytes[0] = (char)code_point;
    return 1;
  }
  if (code_point < 0x800) {
    bytes[0] = (char)(0xC0 | (code_point >> 6));
    bytes[1] = (char)(0x80 | (code_point & 0x3F));
    return 2;
  }
  if (code_point < 0x10000) {
    bytes[0] = (char)(0xE0 | (code_point >> 12));
    bytes[1] = (char)(0x80 | ((code_point >> 6) & 0x3F));
    bytes[2] = (char)(0x80 | (code_point & 0x3F));
    return 3;
  }
  bytes[0] = (char)(0xF0 | (code_point >> 18));
  bytes[1] = (char)(0x80 | ((code_point >> 12) & 0x3F));
  bytes[2] = (char)(0x80 | ((code_point >> 6) & 0x3F));
  bytes[3] = (char)(0x80 | (code_point & 0x3F));
  return 4;
}

/* Copies length bytes of src into dst (size > 0), cut at a character
 * boundary when they do not fit. */
static void copy_text(char *dst, size_t size, const char *src, size_t length) {
  if (length >= size) {
    length = size - 1;
    while (length > 0 && ((unsigned char)src[length] & 0xC0) == 0x80) {
      length--;
    }
  }
  memcpy(dst, src, length);
  dst[length] = '\0';
}

/* The next character of the NUL-terminated s as it may be shown: control
 * characters (C0, DEL, C1), which could drive a terminal, read as a space,
 * and bytes that are not UTF-8 (a path, a struct filled by hand) as U+FFFD.
 * Returns where the character after it starts. */
static const char *safe_char(const char *s, const char **piece, size_t *length) {
  const unsigned char *u = (const unsigned char *)s;
  size_t available = 0;
  while (available < 4 && s[available] != '\0') {
    available++;
  }
  size_t n = utf8_sequence_length(u, available);
  if (u[0] < 0x20 || u[0] == 0x7F || (n == 2 && u[0] == 0xC2 && u[1] < 0xA0)) {
    *piece = " ";
    *length = 1;
    return s + (n > 0 ? n : 1);
  }
  if (n == 0) {
    *piece = REPLACEMENT_CHARACTER;
    *length = 3;
    return s + 1;
  }
  *piece = s;
  *length = n;
  return s + n;
}

/* Characters (code points) of a UTF-8 string: its width on a terminal for
 * the scripts device names and results use. */
static size_t text_width(const char *s) {
  size_t width = 0;
  for (; *s != '\0'; s++) {
    width += ((unsigned char)*s & 0xC0) != 0x80;
  }
  return width;
}

/* Byte offset of character `index` of s. */
static size_t char_offset(const char *s, size_t index) {
  size_t offset = 0;
  for (size_t seen = 0; s[offset] != '\0'; offset++) {
    if (((unsigned char)s[offset] & 0xC0) != 0x80 && seen++ == index) {
      return offset;
    }
  }
  return offset;
}

/* src made safe to show (safe_char) and cut to at most width characters,
 * the cut marked by "…" at the end or, with middle, in the middle: the tail
 * of a result's name (often its precision) says as much as its head. */
static void fit_text(char *dst, size_t size, const char *src, size_t width, int middle) {
  char clean[1024];
  size_t used = 0;
  for (const char *s = src; *s != '\0';) {
    const char *piece;
    size_t length;
    s = safe_char(s, &piece, &length);
    if (used + length >= sizeof clean) {
      break;
    }
    memcpy(clean + used, piece, length);
    used += length;
  }
  clean[used] = '\0';
  size_t chars = text_width(clean);
  if (chars <= width) {
    copy_text(dst, size, clean, used);
    return;
  }
  if (width == 0) {
    dst[0] = '\0';
    return;
  }
  size_t keep = width - 1;
  size_t head = middle ? keep - keep / 2 : keep;
  size_t tail = keep - head;
  size_t head_bytes = char_offset(clean, head);
  size_t tail_start = char_offset(clean, chars - tail);
  size_t tail_bytes = used - tail_start;
  char fitted[sizeof clean + 3];
  memcpy(fitted, clean, head_bytes);
  memcpy(fitted + head_bytes, "\xE2\x80\xA6", 3); /* … */
  memcpy(fitted + head_bytes + 3, clean + tail_start, tail_bytes);
  copy_text(dst, size, fitted, head_bytes + 3 + tail_bytes);
}

/* ---- the JSON parser ---- */

typedef enum json_kind {
  JSON_END, /* the end of the file where a value should be */
  JSON_INVALID,
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT
} json_kind;

static const char *kind_name(json_kind kind) {
  switch (kind) {
  case JSON_NULL:
    return "null";
  case JSON_BOOL:
    return "a boolean";
  case JSON_NUMBER:
    return "a number";
  case JSON_STRING:
    return "a string";
  case JSON_ARRAY:
    return "an array";
  case JSON_OBJECT:
    return "an object";
  default:
    return "not a JSON value";
  }
}

typedef struct parser {
  const char *path;
  const char *text;
  size_t length, pos;
  int depth;
  /* Malformed JSON or out of memory: parsing stops. */
  int failed;
  /* A key of the wrong type or a limit reached: parsing goes on, as a
   * syntax error or a file that is no report at all says more; the
   * message keeps the first. */
  int schema_failed;
  char *message;
  size_t message_size;
  char *scratch; /* the last string or number read, NUL-terminated */
  size_t scratch_length, scratch_capacity;
} parser;

static void syntax_error_at(parser *p, size_t pos, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void syntax_error_at(parser *p, size_t pos, const char *format, ...) {
  if (p->failed) {
    return;
  }
  p->failed = 1;
  size_t line = 1, column = 1;
  for (size_t i = 0; i < pos && i < p->length; i++) {
    unsigned char c = (unsigned char)p->text[i];
    if (c == '\n') {
      line++;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      column++;
    }
  }
  char detail[256];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof detail, format, args);
  va_end(args);
  set_message(p->message, p->message_size, "%s:%zu:%zu: %s", p->path, line, column, detail);
}

/* "expected WHAT, found X" at the current position. */
static void expected(parser *p, const char *what) {
  char found[32];
  if (p->pos >= p->length) {
    snprintf(found, sizeof found, "the end of the file");
  } else {
    unsigned char c = (unsigned char)p->text[p->pos];
    if (c >= 0x20 && c < 0x7F) {
      snprintf(found, sizeof found, "'%c'", c);
    } else if (c < 0x80) {
      snprintf(found, sizeof found, "byte 0x%02x", c);
    } else {
      snprintf(found, sizeof found, "a non-ASCII character");
    }
  }
  syntax_error_at(p, p->pos, "expected %s, found %s", what, found);
}

static void schema_error(parser *p, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void schema_error(parser *p, const char *format, ...) {
  if (p->failed || p->schema_failed) {
    return;
  }
  p->schema_failed = 1;
  char detail[512];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof detail, format, args);
  va_end(args);
  set_message(p->message, p->message_size, "%s: %s", p->path, detail);
}

static void out_of_memory(parser *p) {
  if (!p->failed) {
    p->failed = 1;
    set_message(p->message, p->message_size, "%s: out of memory", p->path);
  }
}

/* "results[3].time_s" from prefix "results[3]" and key "time_s"; either
 * may be empty or NULL. */
static void location(char *dst, size_t size, const char *prefix, const char *key) {
  if (key == NULL || key[0] == '\0') {
    snprintf(dst, size, "%s", prefix);
  } else if (prefix == NULL || prefix[0] == '\0') {
    snprintf(dst, size, "%s", key);
  } else {
    snprintf(dst, size, "%s.%s", prefix, key);
  }
}

static void wrong_type(parser *p, const char *prefix, const char *key, json_kind kind,
                       const char *wanted) {
  if (kind == JSON_END || kind == JSON_INVALID) {
    return; /* not a value at all: skipping it reports the syntax error */
  }
  char where[160];
  location(where, sizeof where, prefix, key);
  schema_error(p, "%s is %s, expected %s", where, kind_name(kind), wanted);
}

static void missing(parser *p, const char *prefix, const char *key) {
  if (prefix == NULL || prefix[0] == '\0') {
    schema_error(p, "\"%s\" is missing", key);
  } else {
    schema_error(p, "%s: \"%s\" is missing", prefix, key);
  }
}

static int at(const parser *p, char c) {
  return p->pos < p->length && p->text[p->pos] == c;
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

static void skip_space(parser *p) {
  while (p->pos < p->length) {
    char c = p->text[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return;
    }
    p->pos++;
  }
}

static json_kind peek(parser *p) {
  skip_space(p);
  if (p->pos >= p->length) {
    return JSON_END;
  }
  char c = p->text[p->pos];
  switch (c) {
  case '{':
    return JSON_OBJECT;
  case '[':
    return JSON_ARRAY;
  case '"':
    return JSON_STRING;
  case 't':
  case 'f':
    return JSON_BOOL;
  case 'n':
    return JSON_NULL;
  default:
    return c == '-' || is_digit(c) ? JSON_NUMBER : JSON_INVALID;
  }
}

static int scratch_append(parser *p, const char *bytes, size_t count) {
  if (p->scratch_capacity - p->scratch_length <= count) { /* keep room for the NUL */
    size_t capacity = p->scratch_capacity > 0 ? p->scratch_capacity : 256;
    while (capacity - p->scratch_length <= count) {
      capacity *= 2;
    }
    char *grown = realloc(p->scratch, capacity);
    if (grown == NULL) {
      out_of_memory(p);
      return 0;
    }
    p->scratch = grown;
    p->scratch_capacity = capacity;
  }
  memcpy(p->scratch + p->scratch_length, bytes, count);
  p->scratch_length += count;
  p->scratch[p->scratch_length] = '\0';
  return 1;
}

static int parse_literal(parser *p, const char *word) {
  size_t length = strlen(word);
  if (p->length - p->pos < length || memcmp(p->text + p->pos, word, length) != 0) {
    expected(p, "a JSON value");
    return 0;
  }
  p->pos += length;
  return 1;
}

static int read_hex4(const parser *p, size_t start, uint32_t *value) {
  if (start > p->length || p->length - start < 4) {
    return 0;
  }
  uint32_t v = 0;
  for (size_t i = 0; i < 4; i++) {
    char c = p->text[start + i];
    uint32_t digit;
    if (is_digit(c)) {
      digit = (uint32_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = (uint32_t)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = (uint32_t)(c - 'A' + 10);
    } else {
      return 0;
    }
    v = 16 * v + digit;
  }
  *value = v;
  return 1;
}

/* The escape at the backslash under p->pos. */
static int parse_escape(parser *p, int keep) {
  size_t start = p->pos;
  const char *simple = NULL;
  char c = start + 1 < p->length ? p->text[start + 1] : '\0';
  switch (c) {
  case '"':
    simple = "\"";
    break;
  case '\\':
    simple = "\\";
    break;
  case '/':
    simple = "/";
    break;
  case 'b':
    simple = "\b";
    break;
  case 'f':
    simple = "\f";
    break;
  case 'n':
    simple = "\n";
    break;
  case 'r':
    simple = "\r";
    break;
  case 't':
    simple = "\t";
    break;
  case 'u':
    break;
  default:
    p->pos = start + 1;
    expected(p, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
    return 0;
  }
  if (simple != NULL) {
    p->pos = start + 2;
    return !keep || scratch_append(p, simple, 1);
  }
  uint32_t unit;
  if (!read_hex4(p, start + 2, &unit)) {
    syntax_error_at(p, start, "expected four hexadecimal digits after \\u");
    return 0;
  }
  p->pos = start + 6;
  uint32_t code_point = unit;
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    uint32_t low;
    if (p->pos + 1 < p->length && p->text[p->pos] == '\\' && p->text[p->pos + 1] == 'u' &&
        read_hex4(p, p->pos + 2, &low) && low >= 0xDC00 && low <= 0xDFFF) {
      code_point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
      p->pos += 6;
    } else {
      code_point = 0xFFFD; /* a lone surrogate encodes no character */
    }
  } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
    code_point = 0xFFFD;
  } else if (code_point == 0) {
    code_point = 0xFFFD; /* a C string would end there */
  }
  if (!keep) {
    return 1;
  }
  char bytes[4];
  return scratch_append(p, bytes, utf8_encode(code_point, bytes));
}

/* The string at the quote under p->pos, decoded into p->scratch when keep.
 * Bytes that are not UTF-8 read as U+FFFD, so kept strings are UTF-8. */
static int parse_string(parser *p, int keep) {
  size_t start = p->pos;
  p->pos++;
  p->scratch_length = 0;
  if (keep && !scratch_append(p, "", 0)) {
    return 0;
  }
  for (;;) {
    if (p->pos >= p->length) {
      syntax_error_at(p, start, "string not closed before the end of the file");
      return 0;
    }
    unsigned char c = (unsigned char)p->text[p->pos];
    if (c == '"') {
      p->pos++;
      return 1;
    }
    if (c < 0x20) {
      syntax_error_at(p, p->pos, "control character 0x%02x in a string (write it as an escape)", c);
      return 0;
    }
    if (c == '\\') {
      if (!parse_escape(p, keep)) {
        return 0;
      }
      continue;
    }
    size_t n = utf8_sequence_length((const unsigned char *)p->text + p->pos, p->length - p->pos);
    if (n == 0) {
      if (keep && !scratch_append(p, REPLACEMENT_CHARACTER, 3)) {
        return 0;
      }
      p->pos++;
      continue;
    }
    if (keep && !scratch_append(p, p->text + p->pos, n)) {
      return 0;
    }
    p->pos += n;
  }
}

static int parse_number(parser *p, double *value) {
  const char *t = p->text;
  size_t n = p->length, start = p->pos, i = p->pos;
  if (i < n && t[i] == '-') {
    i++;
  }
  if (i < n && t[i] == '0') {
    i++;
  } else if (i < n && is_digit(t[i])) {
    while (i < n && is_digit(t[i])) {
      i++;
    }
  } else {
    p->pos = i;
    expected(p, "a digit");
    return 0;
  }
  if (i < n && t[i] == '.') {
    i++;
    if (!(i < n && is_digit(t[i]))) {
      p->pos = i;
      expected(p, "a digit after '.'");
      return 0;
    }
    while (i < n && is_digit(t[i])) {
      i++;
    }
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    i++;
    if (i < n && (t[i] == '+' || t[i] == '-')) {
      i++;
    }
    if (!(i < n && is_digit(t[i]))) {
      p->pos = i;
      expected(p, "a digit in the exponent");
      return 0;
    }
    while (i < n && is_digit(t[i])) {
      i++;
    }
  }
  p->scratch_length = 0;
  if (!scratch_append(p, t + start, i - start)) {
    return 0;
  }
  /* strtod reads the decimal point of the locale, JSON's is always '.' */
  const char *point = localeconv()->decimal_point;
  if (point != NULL && point[0] != '\0' && point[0] != '.' && point[1] == '\0') {
    char *dot = strchr(p->scratch, '.');
    if (dot != NULL) {
      *dot = point[0];
    }
  }
  double v = strtod(p->scratch, NULL);
  if (!isfinite(v)) {
    syntax_error_at(p, start, "number out of range");
    return 0;
  }
  p->pos = i;
  *value = v;
  return 1;
}

/* Enters the object or array whose bracket is under p->pos. */
static int container_begin(parser *p) {
  if (p->depth >= MAX_DEPTH) {
    syntax_error_at(p, p->pos, "nested deeper than %d levels", MAX_DEPTH);
    return 0;
  }
  p->depth++;
  p->pos++;
  return 1;
}

static void container_end(parser *p) {
  p->depth--;
  p->pos++;
}

/* Moves to the next member of the object being read: returns 1 with its key
 * in key (NULL: not kept; "" when longer than key_size - 1: no key this
 * reader knows is that long) and p->pos at its value, or 0 after the
 * closing brace or on an error (p->failed). */
static int object_next(parser *p, int *first, char *key, size_t key_size) {
  if (p->failed) {
    return 0;
  }
  skip_space(p);
  if (*first) {
    if (at(p, '}')) {
      container_end(p);
      return 0;
    }
    if (!at(p, '"')) {
      expected(p, "a key (a string) or '}'");
      return 0;
    }
  } else if (at(p, ',')) {
    p->pos++;
    skip_space(p);
    if (!at(p, '"')) {
      expected(p, "a key (a string)");
      return 0;
    }
  } else if (at(p, '}')) {
    container_end(p);
    return 0;
  } else {
    expected(p, "',' or '}'");
    return 0;
  }
  *first = 0;
  if (!parse_string(p, key != NULL)) {
    return 0;
  }
  if (key != NULL) {
    if (p->scratch_length < key_size) {
      memcpy(key, p->scratch, p->scratch_length + 1);
    } else {
      key[0] = '\0';
    }
  }
  skip_space(p);
  if (!at(p, ':')) {
    expected(p, "':'");
    return 0;
  }
  p->pos++;
  return 1;
}

/* Moves to the next element of the array being read: 1 with p->pos at it,
 * or 0 after the closing bracket or on an error. */
static int array_next(parser *p, int *first) {
  if (p->failed) {
    return 0;
  }
  skip_space(p);
  if (at(p, ']') && *first) {
    container_end(p);
    return 0;
  }
  if (!*first) {
    if (at(p, ']')) {
      container_end(p);
      return 0;
    }
    if (!at(p, ',')) {
      expected(p, "',' or ']'");
      return 0;
    }
    p->pos++;
  }
  *first = 0;
  return 1;
}

/* Checks the value at p->pos and moves past it. */
static void skip_value(parser *p) {
  int first = 1;
  double number;
  switch (peek(p)) {
  case JSON_OBJECT:
    if (container_begin(p)) {
      while (object_next(p, &first, NULL, 0)) {
        skip_value(p);
      }
    }
    break;
  case JSON_ARRAY:
    if (container_begin(p)) {
      while (array_next(p, &first)) {
        skip_value(p);
      }
    }
    break;
  case JSON_STRING:
    parse_string(p, 0);
    break;
  case JSON_NUMBER:
    parse_number(p, &number);
    break;
  case JSON_BOOL:
    parse_literal(p, p->text[p->pos] == 't' ? "true" : "false");
    break;
  case JSON_NULL:
    parse_literal(p, "null");
    break;
  default:
    expected(p, "a JSON value");
    break;
  }
}

/* ---- the report's schema ---- */

typedef enum field_type { FIELD_STRING, FIELD_STRING_OR_NULL, FIELD_NUMBER, FIELD_BOOL } field_type;

/* A key of an object this reader knows, and where its value goes. */
typedef struct field {
  const char *key;
  field_type type;
  void *target; /* char[size], double (NAN for null) or int */
  size_t size;
  int required;
  int seen;
} field;

static void read_field(parser *p, const char *prefix, const field *f) {
  json_kind kind = peek(p);
  switch (f->type) {
  case FIELD_STRING:
  case FIELD_STRING_OR_NULL:
    if (kind == JSON_STRING) {
      if (parse_string(p, 1)) {
        copy_text(f->target, f->size, p->scratch, p->scratch_length);
      }
      return;
    }
    if (kind == JSON_NULL && f->type == FIELD_STRING_OR_NULL) {
      parse_literal(p, "null");
      ((char *)f->target)[0] = '\0';
      return;
    }
    wrong_type(p, prefix, f->key, kind, f->type == FIELD_STRING ? "a string" : "a string or null");
    break;
  case FIELD_NUMBER:
    if (kind == JSON_NUMBER) {
      parse_number(p, f->target);
      return;
    }
    if (kind == JSON_NULL) {
      parse_literal(p, "null");
      *(double *)f->target = NAN;
      return;
    }
    wrong_type(p, prefix, f->key, kind, "a number or null");
    break;
  case FIELD_BOOL:
    if (kind == JSON_BOOL) {
      int value = p->text[p->pos] == 't';
      if (parse_literal(p, value ? "true" : "false")) {
        *(int *)f->target = value;
      }
      return;
    }
    wrong_type(p, prefix, f->key, kind, "true or false");
    break;
  }
  skip_value(p);
}

/* Among fields, the one named key, or NULL. */
static field *find_field(field *fields, size_t count, const char *key) {
  for (size_t i = 0; i < count; i++) {
    if (strcmp(fields[i].key, key) == 0) {
      return &fields[i];
    }
  }
  return NULL;
}

/* The object at p->pos into fields (other keys are checked and ignored),
 * then a message for the first required one missing. */
static void read_fields(parser *p, const char *prefix, field *fields, size_t count) {
  if (!container_begin(p)) {
    return;
  }
  int first = 1;
  char key[64];
  while (object_next(p, &first, key, sizeof key)) {
    field *f = find_field(fields, count, key);
    if (f != NULL) {
      f->seen = 1;
      read_field(p, prefix, f);
    } else {
      skip_value(p);
    }
  }
  for (size_t i = 0; i < count && !p->failed; i++) {
    if (fields[i].required && !fields[i].seen) {
      missing(p, prefix, fields[i].key);
    }
  }
}

/* An object of fields under key, or null when allow_null (fields keep their
 * defaults). */
static void read_object(parser *p, const char *key, field *fields, size_t count, int allow_null) {
  json_kind kind = peek(p);
  if (kind == JSON_OBJECT) {
    read_fields(p, key, fields, count);
  } else if (kind == JSON_NULL && allow_null) {
    parse_literal(p, "null");
  } else {
    wrong_type(p, "", key, kind, allow_null ? "an object or null" : "an object");
    skip_value(p);
  }
}

#define FIELD_COUNT(fields) (sizeof(fields) / sizeof(fields)[0])

static void result_init(bench_result *r) {
  memset(r, 0, sizeof *r);
  r->rows = r->nonzeros = NAN;
  r->time_s = r->gflops = r->gb_s = r->ratio_to_copy = NAN;
  r->setup_s = r->solve_s = r->iterations = NAN;
}

static void read_result(parser *p, const char *prefix, bench_result *r) {
  field fields[] = {
      {"stage", FIELD_STRING, r->stage, sizeof r->stage, 1, 0},
      {"name", FIELD_STRING, r->name, sizeof r->name, 1, 0},
      {"problem", FIELD_STRING_OR_NULL, r->problem, sizeof r->problem, 0, 0},
      {"rows", FIELD_NUMBER, &r->rows, 0, 0, 0},
      {"nonzeros", FIELD_NUMBER, &r->nonzeros, 0, 0, 0},
      {"time_s", FIELD_NUMBER, &r->time_s, 0, 1, 0},
      {"gflops", FIELD_NUMBER, &r->gflops, 0, 0, 0},
      {"gb_s", FIELD_NUMBER, &r->gb_s, 0, 0, 0},
      {"ratio_to_copy", FIELD_NUMBER, &r->ratio_to_copy, 0, 0, 0},
      {"setup_s", FIELD_NUMBER, &r->setup_s, 0, 0, 0},
      {"solve_s", FIELD_NUMBER, &r->solve_s, 0, 0, 0},
      {"iterations", FIELD_NUMBER, &r->iterations, 0, 0, 0},
      {"verified", FIELD_BOOL, &r->verified, 0, 1, 0},
      {"check", FIELD_STRING_OR_NULL, r->check, sizeof r->check, 0, 0},
  };
  read_fields(p, prefix, fields, FIELD_COUNT(fields));
}

static void read_results(parser *p, bench_report *report) {
  json_kind kind = peek(p);
  if (kind != JSON_ARRAY) {
    wrong_type(p, "", "results", kind, "an array");
    skip_value(p);
    return;
  }
  if (!container_begin(p)) {
    return;
  }
  size_t capacity = 0;
  int first = 1;
  for (size_t index = 0; array_next(p, &first); index++) {
    char prefix[48];
    snprintf(prefix, sizeof prefix, "results[%zu]", index);
    kind = peek(p);
    if (kind != JSON_OBJECT) {
      wrong_type(p, prefix, NULL, kind, "an object");
      skip_value(p);
      continue;
    }
    if (report->count == BENCH_REPORT_MAX_ENTRIES) {
      schema_error(p, "more than %d results", BENCH_REPORT_MAX_ENTRIES);
      skip_value(p);
      continue;
    }
    if (!perf_grow_array((void **)&report->results, &capacity, report->count,
                         sizeof *report->results)) {
      out_of_memory(p);
      return;
    }
    bench_result *r = &report->results[report->count];
    result_init(r);
    read_result(p, prefix, r);
    report->count++;
  }
}

static void read_failures(parser *p, bench_report *report) {
  json_kind kind = peek(p);
  if (kind == JSON_NULL) {
    parse_literal(p, "null");
    return;
  }
  if (kind != JSON_ARRAY) {
    wrong_type(p, "", "failures", kind, "an array of strings");
    skip_value(p);
    return;
  }
  if (!container_begin(p)) {
    return;
  }
  size_t capacity = 0;
  int first = 1;
  for (size_t index = 0; array_next(p, &first); index++) {
    kind = peek(p);
    if (kind != JSON_STRING) {
      char prefix[48];
      snprintf(prefix, sizeof prefix, "failures[%zu]", index);
      wrong_type(p, prefix, NULL, kind, "a string");
      skip_value(p);
      continue;
    }
    if (!parse_string(p, 1)) {
      return;
    }
    if (report->failure_count == BENCH_REPORT_MAX_ENTRIES) {
      schema_error(p, "more than %d failures", BENCH_REPORT_MAX_ENTRIES);
      continue;
    }
    if (!perf_grow_array((void **)&report->failures, &capacity, report->failure_count,
                         sizeof *report->failures)) {
      out_of_memory(p);
      return;
    }
    copy_text(report->failures[report->failure_count], sizeof report->failures[0], p->scratch,
              p->scratch_length);
    report->failure_count++;
  }
}

/* What the top level said about itself, checked once it is all read. */
typedef struct report_keys {
  char program[64];
  double schema_version;
  int has_program, has_schema_version, has_device, has_results, has_verified;
} report_keys;

static void read_report(parser *p, bench_report *r, report_keys *keys) {
  field device[] = {
      {"name", FIELD_STRING, r->device_name, sizeof r->device_name, 1, 0},
      {"platform", FIELD_STRING_OR_NULL, r->platform, sizeof r->platform, 0, 0},
      {"driver_version", FIELD_STRING_OR_NULL, r->driver_version, sizeof r->driver_version, 0, 0},
      {"opencl_version", FIELD_STRING_OR_NULL, r->opencl_version, sizeof r->opencl_version, 0, 0},
  };
  field machine[] = {
      {"hostname", FIELD_STRING_OR_NULL, r->hostname, sizeof r->hostname, 0, 0},
      {"cpu", FIELD_STRING_OR_NULL, r->cpu, sizeof r->cpu, 0, 0},
  };
  field settings[] = {
      {"size", FIELD_STRING_OR_NULL, r->size, sizeof r->size, 0, 0},
  };
  field merit[] = {
      {"bandwidth_ratio_geomean", FIELD_NUMBER, &r->fom_bandwidth, 0, 0, 0},
      {"hpcg_like_gflops", FIELD_NUMBER, &r->fom_hpcg_gflops, 0, 0, 0},
      {"hpcg_like_problem", FIELD_STRING_OR_NULL, r->fom_hpcg_problem, sizeof r->fom_hpcg_problem,
       0, 0},
  };
  field top[] = {
      {"program", FIELD_STRING, keys->program, sizeof keys->program, 0, 0},
      {"schema_version", FIELD_NUMBER, &keys->schema_version, 0, 0, 0},
      {"clmg_version", FIELD_STRING_OR_NULL, r->clmg_version, sizeof r->clmg_version, 0, 0},
      {"copy_gb_s", FIELD_NUMBER, &r->copy_gb_s, 0, 0, 0},
      {"verified", FIELD_BOOL, &r->verified, 0, 0, 0},
  };
  if (!container_begin(p)) {
    return;
  }
  int first = 1;
  char key[64];
  while (object_next(p, &first, key, sizeof key)) {
    field *f;
    if (strcmp(key, "device") == 0) {
      keys->has_device = 1;
      read_object(p, key, device, FIELD_COUNT(device), 0);
    } else if (strcmp(key, "machine") == 0) {
      read_object(p, key, machine, FIELD_COUNT(machine), 1);
    } else if (strcmp(key, "settings") == 0) {
      read_object(p, key, settings, FIELD_COUNT(settings), 1);
    } else if (strcmp(key, "figure_of_merit") == 0) {
      read_object(p, key, merit, FIELD_COUNT(merit), 1);
    } else if (strcmp(key, "results") == 0) {
      keys->has_results = 1;
      read_results(p, r);
    } else if (strcmp(key, "failures") == 0) {
      read_failures(p, r);
    } else if ((f = find_field(top, FIELD_COUNT(top), key)) != NULL) {
      f->seen = 1;
      read_field(p, "", f);
    } else {
      skip_value(p);
    }
  }
  keys->has_program = top[0].seen;
  keys->has_schema_version = top[1].seen;
  keys->has_verified = top[4].seen;
}

static int compare_by_key(const void *a, const void *b) {
  const bench_result *x = *(const bench_result *const *)a;
  const bench_result *y = *(const bench_result *const *)b;
  int c = strcmp(x->stage, y->stage);
  if (c == 0) {
    c = strcmp(x->name, y->name);
  }
  if (c == 0) {
    c = (x > y) - (x < y); /* equal keys keep the report's order */
  }
  return c;
}

/* The report's results sorted by (stage, name), equal keys in file order
 * (malloc'ed), or NULL when out of memory. */
static const bench_result **sorted_results(const bench_report *report) {
  const bench_result **sorted = malloc((report->count > 0 ? report->count : 1) * sizeof *sorted);
  if (sorted == NULL) {
    return NULL;
  }
  for (size_t i = 0; i < report->count; i++) {
    sorted[i] = &report->results[i];
  }
  qsort(sorted, report->count, sizeof *sorted, compare_by_key);
  return sorted;
}

static int same_key(const bench_result *a, const bench_result *b) {
  return strcmp(a->stage, b->stage) == 0 && strcmp(a->name, b->name) == 0;
}

/* The whole file, NUL-terminated (malloc'ed), grown as it is read: its size
 * as the file system states it is not trusted (a FIFO, a file that grows). */
static char *read_whole_file(const char *path, size_t *length, char *message, size_t message_size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    set_message(message, message_size, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t capacity = (size_t)1 << 16, used = 0;
  char *data = malloc(capacity);
  if (data == NULL) {
    fclose(f);
    set_message(message, message_size, "%s: out of memory", path);
    return NULL;
  }
  for (;;) {
    if (used == capacity - 1) {
      /* at most one byte over the limit is ever read, to tell that it is over */
      size_t next = capacity * 2 < MAX_FILE_BYTES + 2 ? capacity * 2 : MAX_FILE_BYTES + 2;
      char *grown = realloc(data, next);
      if (grown == NULL) {
        free(data);
        fclose(f);
        set_message(message, message_size, "%s: out of memory", path);
        return NULL;
      }
      data = grown;
      capacity = next;
    }
    size_t got = fread(data + used, 1, capacity - 1 - used, f);
    used += got;
    if (used > MAX_FILE_BYTES) {
      free(data);
      fclose(f);
      set_message(message, message_size, "%s: larger than %zu MiB: not a clmg bench report", path,
                  MAX_FILE_BYTES >> 20);
      return NULL;
    }
    if (got == 0) {
      int failed = ferror(f);
      int error = errno;
      fclose(f);
      if (failed) {
        free(data);
        set_message(message, message_size, "cannot read %s: %s", path, strerror(error));
        return NULL;
      }
      break;
    }
  }
  data[used] = '\0';
  *length = used;
  return data;
}

void bench_report_free(bench_report *report) {
  if (report == NULL) {
    return;
  }
  free(report->results);
  free(report->failures);
  memset(report, 0, sizeof *report);
}

int bench_report_read(const char *path, bench_report *report, char *message, size_t message_size) {
  memset(report, 0, sizeof *report);
  report->copy_gb_s = report->fom_bandwidth = report->fom_hpcg_gflops = NAN;
  size_t length = 0;
  char *data = read_whole_file(path, &length, message, message_size);
  if (data == NULL) {
    return 0;
  }
  if (length == 0) {
    set_message(message, message_size, "%s: empty file: not a clmg bench report", path);
    free(data);
    return 0;
  }
  parser p = {0};
  p.path = path;
  p.text = data;
  p.length = length;
  p.message = message;
  p.message_size = message_size;
  if (length >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { /* a byte order mark */
    p.text += 3;
    p.length -= 3;
  }
  report_keys keys = {.schema_version = NAN};
  json_kind kind = peek(&p);
  if (kind == JSON_OBJECT) {
    read_report(&p, report, &keys);
  } else {
    skip_value(&p);
  }
  if (!p.failed) {
    skip_space(&p);
    if (p.pos < p.length) {
      expected(&p, "the end of the file");
    }
  }
  char text[128];
  if (p.failed) {
    /* the message is set */
  } else if (kind != JSON_OBJECT) {
    set_message(message, message_size, "%s: not a clmg bench report (the file holds %s)", path,
                kind_name(kind));
    p.failed = 1;
  } else if (!keys.has_program || strcmp(keys.program, "clmg bench") != 0) {
    fit_text(text, sizeof text, keys.program, 40, 0);
    if (keys.has_program && keys.program[0] != '\0') {
      set_message(message, message_size,
                  "%s: not a clmg bench report (\"program\" is \"%s\", not \"clmg bench\")", path,
                  text);
    } else {
      set_message(message, message_size,
                  "%s: not a clmg bench report (no \"program\": \"clmg bench\")", path);
    }
    p.failed = 1;
  } else if (!keys.has_schema_version || keys.schema_version != 1) {
    if (isfinite(keys.schema_version)) {
      set_message(message, message_size,
                  "%s: schema_version %g is not supported (this clmg reads schema_version 1)", path,
                  keys.schema_version);
    } else {
      set_message(message, message_size, "%s: not a clmg bench report (no schema_version)", path);
    }
    p.failed = 1;
  } else if (p.schema_failed) {
    p.failed = 1; /* the message is set */
  } else if (!keys.has_device || !keys.has_results || !keys.has_verified) {
    missing(&p, "", !keys.has_device ? "device" : !keys.has_results ? "results" : "verified");
    p.failed = 1;
  }
  free(p.scratch);
  free(data);
  if (p.failed) {
    bench_report_free(report);
    return 0;
  }
  copy_text(report->path, sizeof report->path, path, strlen(path));
  char label[sizeof report->device_name + sizeof report->opencl_version + 8];
  const char *name = report->device_name[0] != '\0' ? report->device_name : "unnamed device";
  if (report->opencl_version[0] != '\0') {
    snprintf(label, sizeof label, "%s (%s)", name, report->opencl_version);
  } else {
    snprintf(label, sizeof label, "%s", name);
  }
  copy_text(report->label, sizeof report->label, label, strlen(label));
  return 1;
}

/* ---- what the two renderers share ---- */

/* "A", "B", ..., "Z", "AA", ... */
static void report_letter(char *dst, size_t size, size_t index) {
  char reversed[16];
  size_t n = 0;
  for (index++; index > 0 && n < sizeof reversed; index /= 26) {
    index--;
    reversed[n++] = (char)('A' + index % 26);
  }
  size_t i = 0;
  for (; i < n && i + 1 < size; i++) {
    dst[i] = reversed[n - 1 - i];
  }
  dst[i] = '\0';
}

/* Three significant digits or so: 0.79, 12.3, 1234. */
static void format_number(char *dst, size_t size, double value) {
  if (!isfinite(value)) {
    snprintf(dst, size, "n/a");
  } else if (fabs(value) >= 1e15) {
    snprintf(dst, size, "%.3g", value); /* a figure this large is garbage, but keep it short */
  } else if (fabs(value) < 9.995) {
    snprintf(dst, size, "%.2f", value);
  } else if (fabs(value) < 99.95) {
    snprintf(dst, size, "%.1f", value);
  } else {
    snprintf(dst, size, "%.0f", value);
  }
}

static void format_time(char *dst, size_t size, double seconds) {
  if (!isfinite(seconds)) {
    snprintf(dst, size, "n/a");
    return;
  }
  double magnitude = fabs(seconds), scale = 1;
  const char *unit = "s";
  if (magnitude < 1e-6) {
    scale = 1e9;
    unit = "ns";
  } else if (magnitude < 1e-3) {
    scale = 1e6;
    unit = "\xC2\xB5s";
  } else if (magnitude < 1) {
    scale = 1e3;
    unit = "ms";
  }
  char number[24];
  format_number(number, sizeof number, seconds * scale);
  snprintf(dst, size, "%s %s", number, unit);
}

static int usable_time(const bench_result *r) {
  return r != NULL && r->verified && isfinite(r->time_s) && r->time_s > 0;
}

/* time_A / time_X as "1.83x", or "" when either is not a valid time or
 * the two solved problems of different sizes (reports of other --size). */
static void format_speedup(char *dst, size_t size, const bench_result *a, const bench_result *x) {
  dst[0] = '\0';
  if (usable_time(a) && usable_time(x) && isfinite(a->rows) && a->rows != x->rows) {
    snprintf(dst, size, "(size)");
    return;
  }
  if (usable_time(a) && usable_time(x)) {
    char number[24];
    format_number(number, sizeof number, a->time_s / x->time_s);
    snprintf(dst, size, "%sx", number);
  }
}

/* A figure of merit of X over A's, or "". */
static void format_merit_ratio(char *dst, size_t size, double a, double x) {
  dst[0] = '\0';
  if (isfinite(a) && isfinite(x) && a > 0) {
    char number[24];
    format_number(number, sizeof number, x / a);
    snprintf(dst, size, "%sx", number);
  }
}

/* The union of the reports' results: one row per (stage, name) in any
 * report, grouped by stage in order of first appearance, rows in order of
 * first appearance (A's order, then what later reports add). A (stage,
 * name) that a report repeats (the schema says it should not) is matched
 * occurrence by occurrence, so nothing is dropped. */
typedef struct result_table {
  size_t rows, count;
  const bench_result **cells; /* rows x count: each report's result, NULL when it has none */
} result_table;

/* The result of (key, rank) in a report's sorted results: the rank-th of
 * those with key's stage and name, or NULL. */
static const bench_result *lookup(const bench_result *const *sorted, size_t n,
                                  const bench_result *key, size_t rank) {
  size_t low = 0, high = n;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    int c = strcmp(sorted[mid]->stage, key->stage);
    if (c == 0) {
      c = strcmp(sorted[mid]->name, key->name);
    }
    if (c < 0) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low + rank < n && same_key(sorted[low + rank], key)) {
    return sorted[low + rank];
  }
  return NULL;
}

typedef struct union_row {
  const bench_result *key;
  size_t rank;  /* occurrence of the key within its report */
  size_t order; /* position in the union */
} union_row;

static int compare_rows_by_stage(const void *a, const void *b) {
  const union_row *x = a, *y = b;
  int c = strcmp(x->key->stage, y->key->stage);
  if (c == 0) {
    c = (x->order > y->order) - (x->order < y->order);
  }
  return c;
}

typedef struct stage_group {
  size_t start, length, first_order;
} stage_group;

static int compare_groups(const void *a, const void *b) {
  const stage_group *x = a, *y = b;
  return (x->first_order > y->first_order) - (x->first_order < y->first_order);
}

static void result_table_free(result_table *t) {
  free(t->cells);
  t->cells = NULL;
  t->rows = 0;
}

static int result_table_build(result_table *t, const bench_report *reports, size_t count) {
  memset(t, 0, sizeof *t);
  t->count = count;
  size_t total = 0;
  for (size_t k = 0; k < count; k++) {
    total += reports[k].count;
  }
  const bench_result ***sorted = calloc(count > 0 ? count : 1, sizeof *sorted);
  size_t **ranks = calloc(count > 0 ? count : 1, sizeof *ranks);
  union_row *rows = malloc((total > 0 ? total : 1) * sizeof *rows);
  stage_group *groups = malloc((total > 0 ? total : 1) * sizeof *groups);
  int ok = sorted != NULL && ranks != NULL && rows != NULL && groups != NULL;
  for (size_t k = 0; ok && k < count; k++) {
    sorted[k] = sorted_results(&reports[k]);
    ranks[k] = malloc((reports[k].count > 0 ? reports[k].count : 1) * sizeof **ranks);
    ok = sorted[k] != NULL && ranks[k] != NULL;
    for (size_t j = 0, rank = 0; ok && j < reports[k].count; j++) {
      rank = j > 0 && same_key(sorted[k][j], sorted[k][j - 1]) ? rank + 1 : 0;
      ranks[k][sorted[k][j] - reports[k].results] = rank;
    }
  }
  size_t n = 0;
  for (size_t k = 0; ok && k < count; k++) {
    for (size_t i = 0; i < reports[k].count; i++) {
      const bench_result *r = &reports[k].results[i];
      int known = 0;
      for (size_t j = 0; j < k && !known; j++) {
        known = lookup(sorted[j], reports[j].count, r, ranks[k][i]) != NULL;
      }
      if (!known) {
        rows[n] = (union_row){r, ranks[k][i], n};
        n++;
      }
    }
  }
  size_t group_count = 0;
  if (ok) {
    qsort(rows, n, sizeof *rows, compare_rows_by_stage);
    for (size_t i = 0; i < n; i++) {
      if (i == 0 || strcmp(rows[i].key->stage, rows[i - 1].key->stage) != 0) {
        groups[group_count++] = (stage_group){i, 0, rows[i].order};
      }
      groups[group_count - 1].length++;
    }
    qsort(groups, group_count, sizeof *groups, compare_groups);
    t->cells = malloc((n > 0 ? n : 1) * (count > 0 ? count : 1) * sizeof *t->cells);
    ok = t->cells != NULL;
  }
  if (ok) {
    size_t row = 0;
    for (size_t g = 0; g < group_count; g++) {
      for (size_t i = groups[g].start; i < groups[g].start + groups[g].length; i++, row++) {
        for (size_t k = 0; k < count; k++) {
          t->cells[row * count + k] =
              lookup(sorted[k], reports[k].count, rows[i].key, rows[i].rank);
        }
      }
    }
    t->rows = n;
  }
  for (size_t k = 0; k < count; k++) {
    free(sorted != NULL ? (void *)sorted[k] : NULL);
    free(ranks != NULL ? ranks[k] : NULL);
  }
  free(sorted);
  free(ranks);
  free(rows);
  free(groups);
  return ok;
}

/* The first result of a row (its stage and name). */
static const bench_result *row_key(const result_table *t, size_t row) {
  for (size_t k = 0; k < t->count; k++) {
    if (t->cells[row * t->count + k] != NULL) {
      return t->cells[row * t->count + k];
    }
  }
  return NULL;
}

static int is_solver(const bench_result *r) {
  return r != NULL && r->verified &&
         (!isnan(r->iterations) || !isnan(r->setup_s) || !isnan(r->solve_s));
}

/* ---- the comparison table ---- */

enum {
  NAME_WIDTH = 32,
  TIME_WIDTH = 9,
  RATIO_WIDTH = 6,
  ITERATIONS_WIDTH = 6,
  SPEEDUP_WIDTH = 9,
  REPORT_GAP = 3,
  LINE_LIMIT = 160
};

/* A line built before it is printed, so trailing blanks can go. */
typedef struct line_buffer {
  char text[4096];
  size_t length;
} line_buffer;

static void line_add(line_buffer *line, const char *text) {
  size_t n = strlen(text);
  if (n > sizeof line->text - 1 - line->length) {
    n = sizeof line->text - 1 - line->length;
  }
  memcpy(line->text + line->length, text, n);
  line->length += n;
  line->text[line->length] = '\0';
}

/* text (already safe to show) padded to width characters. */
static void line_pad(line_buffer *line, const char *text, size_t width, int right) {
  size_t shown = text_width(text);
  for (size_t i = shown; right && i < width; i++) {
    line_add(line, " ");
  }
  line_add(line, text);
  for (size_t i = shown; !right && i < width; i++) {
    line_add(line, " ");
  }
}

static void line_print(FILE *out, line_buffer *line) {
  while (line->length > 0 && line->text[line->length - 1] == ' ') {
    line->length--;
  }
  line->text[line->length] = '\0';
  fprintf(out, "%s\n", line->text);
  line->length = 0;
  line->text[0] = '\0';
}

typedef struct cell_text {
  char time[48], ratio[32], iterations[32], speedup[32];
} cell_text;

static void result_cell(cell_text *c, const bench_result *a, const bench_result *x) {
  memset(c, 0, sizeof *c);
  if (x == NULL) {
    snprintf(c->time, sizeof c->time, "\xE2\x80\x94"); /* an em dash: not in this report */
    return;
  }
  if (!x->verified) {
    snprintf(c->time, sizeof c->time, "FAILED");
    return;
  }
  format_time(c->time, sizeof c->time, x->time_s);
  if (isfinite(x->ratio_to_copy)) {
    snprintf(c->ratio, sizeof c->ratio, "%.2f", x->ratio_to_copy);
  } else {
    snprintf(c->ratio, sizeof c->ratio, "n/a");
  }
  if (isfinite(x->iterations)) {
    snprintf(c->iterations, sizeof c->iterations, "%.0f", x->iterations);
  }
  if (a != x) {
    format_speedup(c->speedup, sizeof c->speedup, a, x);
  }
}

/* One line: the first column, then the cells of the block's reports
 * (columns[0] is A, which has no speed-up). */
static void print_cells(FILE *out, const char *first_column, const cell_text *cells,
                        const size_t *columns, size_t n, int with_iterations) {
  line_buffer line = {.length = 0};
  line_pad(&line, first_column, NAME_WIDTH, 0);
  for (size_t i = 0; i < n; i++) {
    if (i > 0) {
      line_pad(&line, "", REPORT_GAP, 0);
    }
    line_pad(&line, cells[i].time, TIME_WIDTH, 1);
    line_add(&line, " ");
    line_pad(&line, cells[i].ratio, RATIO_WIDTH, 1);
    if (with_iterations) {
      line_add(&line, " ");
      line_pad(&line, cells[i].iterations, ITERATIONS_WIDTH, 1);
    }
    if (columns[i] != 0) {
      line_add(&line, " ");
      line_pad(&line, cells[i].speedup, SPEEDUP_WIDTH, 1);
    }
  }
  line_print(out, &line);
}

static void print_report_header(FILE *out, const bench_report *r, size_t index) {
  char letter[16], label[512], driver[256], version[128], size[64], host[256], cpu[256];
  char problem[512], path[1024], copy[32], bandwidth[32], hpcg[32];
  report_letter(letter, sizeof letter, index);
  fit_text(label, sizeof label, r->label, 100, 0);
  fit_text(driver, sizeof driver, r->driver_version[0] ? r->driver_version : "?", 32, 0);
  fit_text(version, sizeof version, r->clmg_version[0] ? r->clmg_version : "?", 16, 0);
  fit_text(size, sizeof size, r->size[0] ? r->size : "?", 12, 0);
  fit_text(host, sizeof host, r->hostname[0] ? r->hostname : "?", 24, 0);
  fit_text(cpu, sizeof cpu, r->cpu[0] ? r->cpu : "?", 40, 0);
  fit_text(problem, sizeof problem, r->fom_hpcg_problem, 100, 0);
  fit_text(path, sizeof path, r->path, 120, 1);
  format_number(copy, sizeof copy, r->copy_gb_s);
  format_number(bandwidth, sizeof bandwidth, r->fom_bandwidth);
  format_number(hpcg, sizeof hpcg, r->fom_hpcg_gflops);
  fprintf(out, "%-3s%s\n", letter, label);
  fprintf(out, "   driver %s, clmg %s, size %s, host %s (%s)\n", driver, version, size, host, cpu);
  if (r->verified) {
    fprintf(out,
            "   copy %s GB/s; figure of merit: bandwidth %s (geomean ratio to copy), "
            "HPCG-like %s GFLOP/s\n",
            copy, bandwidth, hpcg);
    if (problem[0] != '\0') {
      fprintf(out, "   HPCG-like problem: %s\n", problem);
    }
    fprintf(out, "   verified: yes\n");
  } else {
    fprintf(out, "   copy %s GB/s; figure of merit: none (a failed run)\n", copy);
    fprintf(out, "   verified: NO, the run FAILED (%zu failure%s)\n", r->failure_count,
            r->failure_count == 1 ? "" : "s");
    enum { FAILURES_SHOWN = 8 };
    for (size_t i = 0; i < r->failure_count && i < FAILURES_SHOWN; i++) {
      char failure[1024];
      fit_text(failure, sizeof failure, r->failures[i], 150, 0);
      fprintf(out, "     - %s\n", failure);
    }
    if (r->failure_count > FAILURES_SHOWN) {
      fprintf(out, "     ... and %zu more\n", r->failure_count - FAILURES_SHOWN);
    }
  }
  fprintf(out, "   file %s\n", path);
}

/* The table for A and the reports columns[1..n-1]. */
static void print_block(FILE *out, const bench_report *reports, const result_table *t,
                        const size_t *columns, size_t n, int with_iterations) {
  cell_text *cells = calloc(n, sizeof *cells);
  if (cells == NULL) {
    fprintf(out, "(out of memory for the table)\n");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    report_letter(cells[i].time, sizeof cells[i].time, columns[i]);
    size_t length = strlen(cells[i].time);
    snprintf(cells[i].time + length, sizeof cells[i].time - length, " time");
    snprintf(cells[i].ratio, sizeof cells[i].ratio, "ratio");
    snprintf(cells[i].iterations, sizeof cells[i].iterations, "iter");
    snprintf(cells[i].speedup, sizeof cells[i].speedup, "speed-up");
  }
  print_cells(out, "", cells, columns, n, with_iterations);
  const char *stage = NULL;
  for (size_t row = 0; row < t->rows; row++) {
    const bench_result *key = row_key(t, row);
    char text[512];
    if (stage == NULL || strcmp(stage, key->stage) != 0) {
      stage = key->stage;
      fit_text(text, sizeof text, stage[0] != '\0' ? stage : "(no stage)", NAME_WIDTH - 1, 0);
      fprintf(out, "%s\n", text);
    }
    char name[256];
    fit_text(name, sizeof name, key->name, NAME_WIDTH - 3, 1);
    snprintf(text, sizeof text, "  %s", name);
    const bench_result *a = t->cells[row * t->count];
    for (size_t i = 0; i < n; i++) {
      result_cell(&cells[i], a, t->cells[row * t->count + columns[i]]);
    }
    print_cells(out, text, cells, columns, n, with_iterations);
  }
  fprintf(out, "figure of merit\n");
  for (int metric = 0; metric < 3; metric++) {
    static const char *const names[] = {"  bandwidth (geomean ratio)", "  HPCG-like GFLOP/s",
                                        "  copy GB/s"};
    double a = 0;
    for (size_t i = 0; i < n; i++) {
      const bench_report *r = &reports[columns[i]];
      double value = metric == 0   ? r->fom_bandwidth
                     : metric == 1 ? r->fom_hpcg_gflops
                                   : r->copy_gb_s;
      int failed = metric < 2 && !r->verified;
      memset(&cells[i], 0, sizeof cells[i]);
      if (failed) {
        snprintf(cells[i].time, sizeof cells[i].time, "FAILED");
        value = NAN;
      } else {
        format_number(cells[i].time, sizeof cells[i].time, value);
      }
      if (i == 0) {
        a = value;
      } else {
        format_merit_ratio(cells[i].speedup, sizeof cells[i].speedup, a, value);
      }
    }
    print_cells(out, names[metric], cells, columns, n, with_iterations);
  }
  free(cells);
}

void bench_compare_print(FILE *out, const bench_report *reports, size_t count) {
  if (count == 0) {
    return;
  }
  fprintf(out, "clmg bench: %zu report%s\n\n", count, count == 1 ? "" : "s");
  for (size_t k = 0; k < count; k++) {
    print_report_header(out, &reports[k], k);
  }
  fputc('\n', out);
  result_table t;
  if (!result_table_build(&t, reports, count)) {
    fprintf(out, "(out of memory for the table)\n");
    return;
  }
  int with_iterations = 0;
  for (size_t i = 0; i < t.rows * count; i++) {
    with_iterations |=
        t.cells[i] != NULL && t.cells[i]->verified && isfinite(t.cells[i]->iterations);
  }
  /* A, then as many others as fit in LINE_LIMIT; more start another block. */
  size_t a_width = TIME_WIDTH + 1 + RATIO_WIDTH + (with_iterations ? 1 + ITERATIONS_WIDTH : 0);
  size_t other_width = REPORT_GAP + a_width + 1 + SPEEDUP_WIDTH;
  size_t per_block = (LINE_LIMIT - NAME_WIDTH - a_width) / other_width;
  size_t columns[16];
  if (per_block < 1) {
    per_block = 1;
  }
  if (per_block > sizeof columns / sizeof columns[0] - 1) {
    per_block = sizeof columns / sizeof columns[0] - 1;
  }
  size_t blocks = count > 1 ? (count - 1 + per_block - 1) / per_block : 1;
  for (size_t b = 0; b < blocks; b++) {
    size_t n = 1;
    columns[0] = 0;
    for (size_t k = 1 + b * per_block; k < count && n <= per_block; k++) {
      columns[n++] = k;
    }
    if (blocks > 1) {
      fprintf(out, "%sreports", b > 0 ? "\n" : "");
      for (size_t i = 0; i < n; i++) {
        char letter[16];
        report_letter(letter, sizeof letter, columns[i]);
        fprintf(out, "%s %s", i > 0 ? "," : "", letter);
      }
      fprintf(out, "\n");
    }
    print_block(out, reports, &t, columns, n, with_iterations);
  }
  result_table_free(&t);
  fprintf(out, "\ntime: per operation (kernel call, step; a solver's iteration or cycle); "
               "ratio: bandwidth / copy bandwidth.\n");
  if (count > 1) {
    fprintf(out, "speed-up: time A / time X, \"(size)\" where the problems differ in size; "
                 "figures of merit: X / A (above 1: X does better); \xE2\x80\x94: not in that "
                 "report\n");
  }
}

/* ---- the HTML page ---- */

/* Text safe inside an element or a quoted attribute. */
static void html_text(FILE *out, const char *text) {
  for (const char *s = text; *s != '\0';) {
    const char *piece;
    size_t length;
    s = safe_char(s, &piece, &length);
    switch (piece[0]) {
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
    case '\'':
      fputs("&#39;", out);
      break;
    default:
      fwrite(piece, 1, length, out);
      break;
    }
  }
}

/* text cut to width characters (safe_char applied), then escaped. */
static void html_fit(FILE *out, const char *text, size_t width) {
  char fitted[1024];
  fit_text(fitted, sizeof fitted, text, width, 1);
  html_text(out, fitted);
}

/* The reports' colours: distinct, and none of them the red of FAILED. */
static void report_colour(char *dst, size_t size, size_t index) {
  static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                        "#edc948", "#9c755f", "#ff9da7", "#bab0ac"};
  size_t n = sizeof palette / sizeof palette[0];
  if (index < n) {
    snprintf(dst, size, "%s", palette[index]);
  } else {
    snprintf(dst, size, "hsl(%d,55%%,50%%)", (int)((index * 137) % 360)); /* golden angle */
  }
}

static void html_swatch(FILE *out, size_t index) {
  char colour[32];
  report_colour(colour, sizeof colour, index);
  fprintf(out, "<span class=\"swatch\" style=\"background:%s\"></span>", colour);
}

static void html_legend(FILE *out, const bench_report *reports, size_t count) {
  fprintf(out, "<p class=\"legend\">");
  for (size_t k = 0; k < count; k++) {
    char letter[16];
    report_letter(letter, sizeof letter, k);
    fprintf(out, "<span>");
    html_swatch(out, k);
    fprintf(out, "%s: ", letter);
    html_fit(out, reports[k].label, 80);
    fprintf(out, "</span> ");
  }
  fprintf(out, "</p>\n");
}

typedef enum bar_state { BAR_SHOWN, BAR_UNKNOWN, BAR_MISSING, BAR_FAILED } bar_state;

typedef struct chart_bar {
  double value;
  bar_state state;
} chart_bar;

enum {
  CHART_LABEL = 250,
  CHART_AREA = 480,
  CHART_VALUE = 80,
  CHART_TOP = 22,
  BAR_HEIGHT = 15,
  BAR_GAP = 3,
  GROUP_GAP = 12
};

/* A horizontal bar chart: groups of `count` bars (one per report, in its
 * colour), each group labelled; failed and missing values are words, never
 * bars. reference (NAN: none) draws a dashed line, such as copy = 1. */
static void html_chart(FILE *out, const char *description, size_t groups, const char *const *labels,
                       const char *const *tooltips, const chart_bar *bars, size_t count,
                       double reference, const char *reference_label) {
  double largest = isfinite(reference) && reference > 0 ? reference : 0;
  for (size_t i = 0; i < groups * count; i++) {
    if (bars[i].state == BAR_SHOWN && bars[i].value > largest) {
      largest = bars[i].value;
    }
  }
  if (!(largest > 0)) {
    largest = 1;
  }
  int group_height = (int)count * (BAR_HEIGHT + BAR_GAP) - BAR_GAP;
  int width = CHART_LABEL + CHART_AREA + CHART_VALUE;
  int height = CHART_TOP + (int)groups * (group_height + GROUP_GAP);
  fprintf(out,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
          width, height, width, height);
  html_text(out, description);
  fprintf(out, "\">\n");
  int x0 = CHART_LABEL;
  if (isfinite(reference) && reference > 0) {
    int x = x0 + (int)lround(reference / largest * CHART_AREA);
    fprintf(out,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" "
            "stroke-dasharray=\"4 3\"/>\n<text class=\"reference\" x=\"%d\" y=\"12\" "
            "text-anchor=\"middle\">",
            x, CHART_TOP - 6, x, height, x);
    html_text(out, reference_label);
    fprintf(out, "</text>\n");
  }
  fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0,
          CHART_TOP - 6, x0, height);
  for (size_t g = 0; g < groups; g++) {
    int top = CHART_TOP + (int)g * (group_height + GROUP_GAP);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"><title>", x0 - 8,
            top + group_height / 2 + 4);
    html_text(out, tooltips[g]);
    fprintf(out, "</title>");
    html_fit(out, labels[g], 38);
    fprintf(out, "</text>\n");
    for (size_t k = 0; k < count; k++) {
      const chart_bar *bar = &bars[g * count + k];
      int y = top + (int)k * (BAR_HEIGHT + BAR_GAP);
      char letter[16], colour[32], value[32];
      report_letter(letter, sizeof letter, k);
      report_colour(colour, sizeof colour, k);
      if (bar->state != BAR_SHOWN) {
        static const char *const words[] = {"", "n/a", "\xE2\x80\x94 (not in this report)",
                                            "FAILED"};
        fprintf(out, "<text class=\"%s\" x=\"%d\" y=\"%d\">%s</text>\n",
                bar->state == BAR_FAILED ? "failed" : "missing", x0 + 4, y + BAR_HEIGHT - 3,
                words[bar->state]);
        continue;
      }
      int length = bar->value > 0 ? (int)lround(bar->value / largest * CHART_AREA) : 0;
      if (bar->value > 0 && length < 1) {
        length = 1;
      }
      format_number(value, sizeof value, bar->value);
      fprintf(out,
              "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
              "<title>%s: %s</title></rect><text x=\"%d\" y=\"%d\">%s</text>\n",
              x0, y, length, BAR_HEIGHT, colour, letter, value, x0 + length + 4, y + BAR_HEIGHT - 3,
              value);
    }
  }
  fprintf(out, "</svg>\n");
}

static void html_number_cell(FILE *out, const char *text) {
  fprintf(out, "<td class=\"number\">%s</td>", text);
}

static void html_reports_table(FILE *out, const bench_report *reports, size_t count) {
  fprintf(out, "<table>\n<tr><th></th>");
  for (size_t k = 0; k < count; k++) {
    char letter[16];
    report_letter(letter, sizeof letter, k);
    fprintf(out, "<th>");
    html_swatch(out, k);
    fprintf(out, "%s</th>", letter);
  }
  fprintf(out, "</tr>\n");
  static const char *const rows[] = {"device", "OpenCL", "platform", "driver",    "clmg",
                                     "size",   "host",   "CPU",      "copy GB/s", "file"};
  for (size_t row = 0; row < sizeof rows / sizeof rows[0]; row++) {
    fprintf(out, "<tr><th>%s</th>", rows[row]);
    for (size_t k = 0; k < count; k++) {
      const bench_report *r = &reports[k];
      const char *texts[] = {r->device_name,
                             r->opencl_version,
                             r->platform,
                             r->driver_version,
                             r->clmg_version,
                             r->size,
                             r->hostname,
                             r->cpu,
                             NULL,
                             r->path};
      fprintf(out, "<td>");
      if (texts[row] != NULL) {
        html_text(out, texts[row]);
      } else {
        char number[24];
        format_number(number, sizeof number, r->copy_gb_s);
        fputs(number, out);
      }
      fprintf(out, "</td>");
    }
    fprintf(out, "</tr>\n");
  }
  fprintf(out, "<tr><th>verified</th>");
  for (size_t k = 0; k < count; k++) {
    const bench_report *r = &reports[k];
    if (r->verified) {
      fprintf(out, "<td>yes</td>");
      continue;
    }
    fprintf(out, "<td><span class=\"failed\">FAILED</span> (%zu failure%s)", r->failure_count,
            r->failure_count == 1 ? "" : "s");
    if (r->failure_count > 0) {
      fprintf(out, "<ul>");
      for (size_t i = 0; i < r->failure_count; i++) {
        fprintf(out, "<li>");
        html_text(out, r->failures[i]);
        fprintf(out, "</li>");
      }
      fprintf(out, "</ul>");
    }
    fprintf(out, "</td>");
  }
  fprintf(out, "</tr>\n</table>\n");
}

static void html_merit(FILE *out, const bench_report *reports, size_t count) {
  chart_bar *bars = malloc(count * sizeof *bars);
  if (bars == NULL) {
    fprintf(out, "<p>(out of memory for this chart)</p>\n");
    return;
  }
  fprintf(out, "<section id=\"figure-of-merit\">\n<h2>Figure of merit</h2>\n");
  html_legend(out, reports, count);
  for (int metric = 0; metric < 2; metric++) {
    for (size_t k = 0; k < count; k++) {
      double value = metric == 0 ? reports[k].fom_bandwidth : reports[k].fom_hpcg_gflops;
      bars[k].value = value;
      bars[k].state = !reports[k].verified ? BAR_FAILED : isfinite(value) ? BAR_SHOWN : BAR_UNKNOWN;
    }
    const char *label = metric == 0 ? "bandwidth: geomean ratio to copy" : "HPCG-like GFLOP/s";
    const char *tooltip = "geometric mean over the results of bandwidth / copy bandwidth";
    for (size_t k = 0; metric == 1 && k < count; k++) {
      tooltip = reports[k].fom_hpcg_problem; /* the first report's that names it */
      if (tooltip[0] != '\0') {
        break;
      }
    }
    if (tooltip[0] == '\0') {
      tooltip = label;
    }
    html_chart(out, label, 1, &label, &tooltip, bars, count, metric == 0 ? 1.0 : NAN, "copy = 1");
  }
  fprintf(out, "<table>\n<tr><th>report</th><th>bandwidth (geomean ratio to copy)</th>"
               "<th>vs A</th><th>HPCG-like GFLOP/s</th><th>vs A</th><th>HPCG-like problem</th>"
               "</tr>\n");
  for (size_t k = 0; k < count; k++) {
    const bench_report *r = &reports[k];
    char letter[16], text[32];
    report_letter(letter, sizeof letter, k);
    fprintf(out, "<tr><td>");
    html_swatch(out, k);
    fprintf(out, "%s</td>", letter);
    for (int metric = 0; metric < 2; metric++) {
      double value = metric == 0 ? r->fom_bandwidth : r->fom_hpcg_gflops;
      double a = metric == 0 ? reports[0].fom_bandwidth : reports[0].fom_hpcg_gflops;
      if (!r->verified) {
        fprintf(out, "<td class=\"failed\">FAILED</td><td></td>");
        continue;
      }
      format_number(text, sizeof text, value);
      html_number_cell(out, text);
      text[0] = '\0';
      if (k > 0 && reports[0].verified) {
        format_merit_ratio(text, sizeof text, a, value);
      }
      html_number_cell(out, text);
    }
    fprintf(out, "<td>");
    html_text(out, r->fom_hpcg_problem);
    fprintf(out, "</td></tr>\n");
  }
  fprintf(out, "</table>\n</section>\n");
  free(bars);
}

/* A chart label's tooltip: the name and the problem. */
#define TOOLTIP_SIZE (sizeof((bench_result *)0)->name + sizeof((bench_result *)0)->problem + 8)

/* The section of the table's rows [start, end), all of one stage. */
static int html_stage(FILE *out, const bench_report *reports, const result_table *t, size_t start,
                      size_t end, size_t section) {
  size_t count = t->count, groups = end - start;
  chart_bar *bars = malloc(groups * count * sizeof *bars);
  const char **labels = malloc(groups * sizeof *labels);
  const char **tooltips = malloc(groups * sizeof *tooltips);
  char(*tips)[TOOLTIP_SIZE] = malloc(groups * sizeof *tips);
  if (bars == NULL || labels == NULL || tooltips == NULL || tips == NULL) {
    free(bars);
    free(labels);
    free(tooltips);
    free(tips);
    return 0;
  }
  const bench_result *first = row_key(t, start);
  int solvers = 0;
  for (size_t g = 0; g < groups; g++) {
    const bench_result *key = row_key(t, start + g);
    labels[g] = key->name;
    snprintf(tips[g], sizeof tips[g], "%s%s%s", key->name, key->problem[0] ? ": " : "",
             key->problem);
    tooltips[g] = tips[g];
    for (size_t k = 0; k < count; k++) {
      const bench_result *r = t->cells[(start + g) * count + k];
      chart_bar *bar = &bars[g * count + k];
      bar->value = r != NULL ? r->ratio_to_copy : NAN;
      bar->state = r == NULL                    ? BAR_MISSING
                   : !r->verified               ? BAR_FAILED
                   : isfinite(r->ratio_to_copy) ? BAR_SHOWN
                                                : BAR_UNKNOWN;
      solvers |= is_solver(r);
    }
  }
  fprintf(out, "<section id=\"stage-%zu\">\n<h2>", section);
  html_text(out, first->stage[0] ? first->stage : "(no stage)");
  fprintf(out, "</h2>\n<p>Ratio of each result's bandwidth to the copy bandwidth of its "
               "device (higher is better).</p>\n");
  html_legend(out, reports, count);
  char description[160];
  fit_text(description, sizeof description, first->stage, 60, 0);
  size_t used = strlen(description);
  snprintf(description + used, sizeof description - used, ": ratio to copy");
  html_chart(out, description, groups, labels, tooltips, bars, count, 1.0, "copy = 1");
  fprintf(out, "<table>\n<tr><th>result</th><th>report</th><th>time</th><th>GB/s</th>"
               "<th>GFLOP/s</th><th>ratio to copy</th><th>speed-up vs A</th>");
  if (solvers) {
    fprintf(out, "<th>iterations</th><th>setup</th><th>solve</th>");
  }
  fprintf(out, "<th>check</th></tr>\n");
  for (size_t g = 0; g < groups; g++) {
    const bench_result *key = row_key(t, start + g);
    const bench_result *a = t->cells[(start + g) * count];
    for (size_t k = 0; k < count; k++) {
      const bench_result *r = t->cells[(start + g) * count + k];
      char letter[16], text[48];
      report_letter(letter, sizeof letter, k);
      fprintf(out, "<tr>");
      if (k == 0) {
        fprintf(out, "<td rowspan=\"%zu\">", count);
        html_text(out, key->name);
        if (key->problem[0] != '\0') {
          fprintf(out, "<br><small>");
          html_text(out, key->problem);
          fprintf(out, "</small>");
        }
        fprintf(out, "</td>");
      }
      fprintf(out, "<td>");
      html_swatch(out, k);
      fprintf(out, "%s</td>", letter);
      int blanks = 4 + (solvers ? 3 : 0);
      if (r == NULL) {
        fprintf(out, "<td class=\"missing\">\xE2\x80\x94</td>");
        for (int i = 0; i < blanks + 1; i++) {
          fprintf(out, "<td></td>");
        }
        fprintf(out, "</tr>\n");
        continue;
      }
      if (!r->verified) {
        fprintf(out, "<td class=\"failed\">FAILED</td>");
        for (int i = 0; i < blanks; i++) {
          fprintf(out, "<td></td>");
        }
      } else {
        format_time(text, sizeof text, r->time_s);
        html_number_cell(out, text);
        format_number(text, sizeof text, r->gb_s);
        html_number_cell(out, text);
        format_number(text, sizeof text, r->gflops);
        html_number_cell(out, text);
        format_number(text, sizeof text, r->ratio_to_copy);
        html_number_cell(out, text);
        text[0] = '\0';
        if (k > 0) {
          format_speedup(text, sizeof text, a, r);
        }
        html_number_cell(out, text);
        if (solvers) {
          text[0] = '\0';
          if (isfinite(r->iterations)) {
            snprintf(text, sizeof text, "%.0f", r->iterations);
          }
          html_number_cell(out, text);
          text[0] = '\0';
          if (isfinite(r->setup_s)) {
            format_time(text, sizeof text, r->setup_s);
          }
          html_number_cell(out, text);
          text[0] = '\0';
          if (isfinite(r->solve_s)) {
            format_time(text, sizeof text, r->solve_s);
          }
          html_number_cell(out, text);
        }
      }
      fprintf(out, "<td%s>", r->verified ? "" : " class=\"failed-check\"");
      html_text(out, r->check);
      fprintf(out, "</td></tr>\n");
    }
  }
  fprintf(out, "</table>\n</section>\n");
  free(bars);
  free(labels);
  free(tooltips);
  free(tips);
  return 1;
}

static const char html_style[] =
    "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,Helvetica,Arial,sans-serif;"
    "margin:2em auto;max-width:1200px;padding:0 1em;color:#222;background:#fff}\n"
    "h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}\n"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\n"
    "th{background:#f4f4f4}\n"
    "td.number{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".failed{color:#c00;font-weight:bold}\n"
    "td.failed-check{color:#c00}\n"
    ".missing{color:#888}\n"
    ".swatch{display:inline-block;width:.9em;height:.9em;margin-right:.35em;"
    "vertical-align:-.1em;border-radius:2px}\n"
    ".legend>span{margin-right:1.6em;white-space:nowrap}\n"
    "svg{display:block;max-width:100%;height:auto;margin:.4em 0}\n"
    "svg text{font-size:12px;fill:#222}\n"
    "svg text.failed{fill:#c00;font-weight:bold}\n"
    "svg text.missing,svg text.reference{fill:#888}\n"
    "ul{margin:.3em 0;padding-left:1.2em}\n";

static void html_page(FILE *out, const bench_report *reports, size_t count, const result_table *t,
                      int *complete) {
  fprintf(out,
          "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>clmg bench</title>\n<style>\n%s</style>\n</head>\n<body>\n"
          "<h1>clmg bench</h1>\n",
          html_style);
  fprintf(out,
          "<p>%zu report%s. Time is per operation (kernel call, step; a solver's iteration or "
          "cycle); ratio to copy is a result's bandwidth over the copy bandwidth of its device; "
          "speed-up is time A / time X, only between problems of one size. Results whose check "
          "failed read <span class=\"failed\">FAILED"
          "</span> and are never drawn.</p>\n",
          count, count == 1 ? "" : "s");
  fprintf(out, "<section id=\"reports\">\n<h2>Reports</h2>\n");
  html_reports_table(out, reports, count);
  fprintf(out, "</section>\n");
  html_merit(out, reports, count);
  size_t section = 0;
  for (size_t start = 0; start < t->rows; section++) {
    const char *stage = row_key(t, start)->stage;
    size_t end = start + 1;
    while (end < t->rows && strcmp(row_key(t, end)->stage, stage) == 0) {
      end++;
    }
    if (!html_stage(out, reports, t, start, end, section)) {
      *complete = 0;
      return;
    }
    start = end;
  }
  fprintf(out, "</body>\n</html>\n");
}

int bench_html_write(const char *path, const bench_report *reports, size_t count, char *message,
                     size_t message_size) {
  if (count == 0) {
    set_message(message, message_size, "no reports to write to %s", path);
    return 0;
  }
  result_table t;
  if (!result_table_build(&t, reports, count)) {
    set_message(message, message_size, "cannot write %s: out of memory", path);
    return 0;
  }
  clmg_output_file *file = NULL;
  FILE *out = NULL;
  clmg_error error = {{0}};
  if (clmg_output_file_open(path, "w", &file, &out, &error) != CLMG_SUCCESS) {
    set_message(message, message_size, "%s", error.message);
    result_table_free(&t);
    return 0;
  }
  int complete = 1;
  html_page(out, reports, count, &t, &complete);
  result_table_free(&t);
  if (!complete) {
    clmg_output_file_discard(file);
    set_message(message, message_size, "cannot write %s: out of memory", path);
    return 0;
  }
  if (clmg_output_file_commit(file, &error) != CLMG_SUCCESS) {
    set_message(message, message_size, "%s", error.message);
    return 0;
  }
  return 1;
}
