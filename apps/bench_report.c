/* clmg bench reports: reading them (cJSON parses, after a lexical pass for
 * what cJSON leaves to its caller; the schema is checked on cJSON's tree and
 * only the report's own fields are kept), the comparison table and the HTML
 * page. See bench_report.h. */
#include "bench_report.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "clmg/output_file.h"

#define MAX_FILE_BYTES ((size_t)64 << 20)
#define MAX_DEPTH 64
#define MAX_VALUES 4000000 /* 300 to 450 MB of cJSON's tree: 80 to 110 bytes a value */
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

/* The length bytes of src as UTF-8 in dst (size > 0): bytes that are not
 * UTF-8 read as U+FFFD; cut at a character boundary when they do not fit. */
static void copy_text(char *dst, size_t size, const char *src, size_t length) {
  size_t used = 0;
  for (size_t i = 0; i < length;) {
    size_t n = utf8_sequence_length((const unsigned char *)src + i, length - i);
    const char *piece = n > 0 ? src + i : REPLACEMENT_CHARACTER;
    size_t bytes = n > 0 ? n : 3;
    if (used + bytes >= size) {
      break;
    }
    memcpy(dst + used, piece, bytes);
    used += bytes;
    i += n > 0 ? n : 1;
  }
  dst[used] = '\0';
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

/* ---- reading: cJSON, and what it leaves to its caller ---- */

/* A lexical pass over the text before cJSON parses it, for what cJSON does
 * not check or cannot say: the nesting depth (cJSON allows 1000 levels)
 * and the number of values (MAX_VALUES); control characters, which cJSON
 * takes raw in strings and as white space outside them; the place and
 * nature of a string's errors, which cJSON places a byte off; and, run
 * again up to where cJSON stopped, what was expected there. It also
 * rewrites in place, six bytes for six, the escapes \u0000 (cJSON would
 * end the C string there) and lone surrogates (cJSON refuses them) to
 * \ufffd: both read as U+FFFD. Numbers and literals are cJSON's, which
 * reads "76." and "01" as numbers and 1e999 as infinity (refused where a
 * report's number is read). */
typedef struct scan {
  size_t pos, values;
  int depth;
  char open[MAX_DEPTH]; /* '{' or '[' of each level */
  /* the last token: 0 (none yet), a bracket, ',', ':', 'k' (a key) or 'v'
   * (another value, or where cJSON stopped, a part of one) */
  char last;
} scan;

/* JSON's white space. */
static int is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* "found 'x'" for the byte at pos of text (length bytes). */
static void found_at(char *found, size_t size, const char *text, size_t length, size_t pos) {
  unsigned char c = pos < length ? (unsigned char)text[pos] : 0;
  if (pos >= length) {
    snprintf(found, size, "found the end of the file");
  } else if (c >= 0x20 && c < 0x7F) {
    snprintf(found, size, "found '%c'", c);
  } else if (c < 0x80) {
    snprintf(found, size, "found byte 0x%02x", c);
  } else {
    snprintf(found, size, "found a non-ASCII character");
  }
}

static int hex4(const char *text, size_t length, size_t at, unsigned *value) {
  *value = 0;
  for (size_t i = at; i < at + 4; i++) {
    if (i >= length || !isxdigit((unsigned char)text[i])) {
      return 0;
    }
    int c = tolower((unsigned char)text[i]);
    *value = 16 * *value + (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
  }
  return 1;
}

/* The string whose quote is at text[*pos]: 1 with *pos past it, or 0 with
 * *pos at the problem, described in detail. */
static int scan_string(char *text, size_t length, size_t *pos, char *detail, size_t size) {
  size_t start = *pos;
  for (size_t i = start + 1;;) {
    unsigned char c = i < length ? (unsigned char)text[i] : 0;
    unsigned unit, low;
    if (i >= length) {
      *pos = start;
      snprintf(detail, size, "string not closed before the end of the file");
      return 0;
    } else if (c == '"') {
      *pos = i + 1;
      return 1;
    } else if (c < 0x20) {
      *pos = i;
      snprintf(detail, size, "control character 0x%02x in a string (write it as an escape)", c);
      return 0;
    } else if (c != '\\') {
      i++;
    } else if (i + 1 < length && text[i + 1] == 'u') {
      if (!hex4(text, length, i + 2, &unit)) {
        *pos = i;
        snprintf(detail, size, "expected four hexadecimal digits after \\u");
        return 0;
      }
      if (unit >= 0xD800 && unit <= 0xDBFF && i + 7 < length && text[i + 6] == '\\' &&
          text[i + 7] == 'u' && hex4(text, length, i + 8, &low) && low >= 0xDC00 && low <= 0xDFFF) {
        i += 12; /* a surrogate pair */
        continue;
      }
      if (unit == 0 || (unit >= 0xD800 && unit <= 0xDFFF)) {
        memcpy(text + i + 2, "fffd", 4);
      }
      i += 6;
    } else if (i + 1 < length && text[i + 1] != '\0' && strchr("\"\\/bfnrt", text[i + 1])) {
      i += 2;
    } else {
      char found[48];
      found_at(found, sizeof found, text, length, i + 1);
      *pos = i + 1;
      snprintf(detail, size,
               "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX), %s", found);
      return 0;
    }
  }
}

/* Scans from s->pos up to stop: 1, or 0 at the first problem with *token
 * where its token starts, *at the problem itself and detail what it is. */
static int scan_text(scan *s, char *text, size_t length, size_t stop, size_t *token, size_t *at,
                     char *detail, size_t size) {
  while (s->pos < stop) {
    size_t i = s->pos;
    unsigned char c = (unsigned char)text[i];
    if (is_space(c)) {
      s->pos++;
      continue;
    }
    *token = *at = i;
    if (c == '"') {
      int key = s->depth > 0 && s->open[s->depth - 1] == '{' && (s->last == '{' || s->last == ',');
      if (!scan_string(text, length, &s->pos, detail, size)) {
        *at = s->pos;
        return 0;
      }
      s->last = key ? 'k' : 'v';
      continue;
    }
    if (c < 0x20) {
      snprintf(detail, size, "control character 0x%02x outside a string", c);
      return 0;
    }
    if ((c == '[' || c == '{') && s->depth == MAX_DEPTH) {
      snprintf(detail, size, "nested deeper than %d levels", MAX_DEPTH);
      return 0;
    }
    if ((c == '[' || c == '{' || c == ',') && ++s->values > MAX_VALUES) {
      snprintf(detail, size, "more than %d JSON values: not a clmg bench report", MAX_VALUES);
      return 0;
    }
    if (c == '[' || c == '{') {
      s->open[s->depth++] = (char)c;
    } else if ((c == ']' || c == '}') && s->depth > 0) {
      s->depth--;
    }
    s->last = strchr("[]{},:", c) != NULL ? (char)c : 'v';
    s->pos++;
  }
  return 1;
}

/* What the JSON grammar allows after the tokens scanned. */
static const char *expectation(const scan *s) {
  char open = s->depth > 0 ? s->open[s->depth - 1] : 0;
  switch (s->last) {
  case 0:
  case ':':
    return "a JSON value";
  case '[':
    return "a JSON value or ']'";
  case '{':
    return "a key (a string) or '}'";
  case ',':
    return open == '{' ? "a key (a string)" : "a JSON value";
  case 'k':
    return "':'";
  default:
    return open == '{' ? "',' or '}'" : open == '[' ? "',' or ']'" : "the end of the file";
  }
}

/* Whether a key should start at text[pos], after the tokens scanned, and
 * something else does: cJSON then points one byte past it, whereas it
 * points at every other thing it stops on. */
static int past_a_key(const scan *s, const char *text, size_t pos) {
  unsigned char c = (unsigned char)text[pos];
  int key_wanted = s->pos == pos && s->depth > 0 && s->open[s->depth - 1] == '{' &&
                   (s->last == '{' || s->last == ',');
  return key_wanted && !is_space(c) && c != '"' && !(c == '}' && s->last == '{');
}

/* Whether c (where a lexical problem's token starts: a quote, a bracket,
 * a comma or a control character) may come after the tokens scanned: if
 * not, the syntax error there is the one to report. */
static int may_follow(const scan *s, unsigned char c) {
  char open = s->depth > 0 ? s->open[s->depth - 1] : 0;
  int value = s->last == 0 || s->last == ':' || s->last == '[' || (s->last == ',' && open == '[');
  int key = s->last == '{' || (s->last == ',' && open == '{');
  if (c == '"') {
    return value || key;
  } else if (c == '[' || c == '{') {
    return value;
  } else if (c == ',') {
    return !value && !key && s->last != 'k' && open != 0;
  }
  return 1;
}

/* "PATH:LINE:COLUMN: DETAIL" for byte pos of text; columns count
 * characters. */
static void message_at(char *message, size_t message_size, const char *path, const char *text,
                       size_t pos, const char *detail) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < pos; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\n') {
      line++;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      column++;
    }
  }
  set_message(message, message_size, "%s:%zu:%zu: %s", path, line, column, detail);
}

/* The JSON text (length bytes and a NUL) parsed, or NULL with the message
 * of its first error. */
static cJSON *parse_json(const char *path, char *text, size_t length, char *message,
                         size_t message_size) {
  scan s = {.values = 1};
  size_t token = length, at = length;
  char detail[160] = "";
  if (scan_text(&s, text, length, length, &token, &at, detail, sizeof detail)) {
    token = at = length;
  }
  /* cJSON reads up to the first lexical problem, so that a syntax error
   * before it is the one reported, and never builds more than the limits
   * allow */
  char saved = text[token];
  text[token] = '\0';
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, token + 1, &end, 1);
  text[token] = saved;
  if (root != NULL && token == length) {
    return root;
  }
  cJSON_Delete(root);
  /* Where cJSON stopped (or just before, past a key that is no string), and
   * what was expected there; a lexical problem before it comes first */
  size_t stop = end != NULL ? (size_t)(end - text) : 0, where = stop > 0 ? stop - 1 : 0, unused;
  scan context = {.values = 1};
  char scratch[160];
  scan_text(&context, text, length, where, &unused, &unused, scratch, sizeof scratch);
  if (stop == 0 || !past_a_key(&context, text, where)) {
    scan_text(&context, text, length, stop, &unused, &unused, scratch, sizeof scratch);
    where = stop;
  }
  if (token < length && where == token && may_follow(&context, (unsigned char)text[token])) {
    message_at(message, message_size, path, text, at, detail);
    return NULL;
  }
  const char *wanted = expectation(&context);
  if (strncmp(wanted, "a JSON value", 12) == 0 && text[where] == '-') {
    wanted = "a digit"; /* cJSON refuses a number there only when no digit follows its '-' */
    where++;
  }
  char found[48];
  found_at(found, sizeof found, text, length, where);
  snprintf(detail, sizeof detail, "expected %s, %s", wanted, found);
  message_at(message, message_size, path, text, where, detail);
  return NULL;
}

/* ---- the report's schema ---- */

typedef struct reader {
  const char *path;
  /* Out of memory or a number out of range: reading stops. */
  int failed;
  /* A key of the wrong type or a limit reached: reading goes on, as a file
   * that is no report at all says more; the message keeps the first. */
  int schema_failed;
  char *message;
  size_t message_size;
} reader;

static const char *kind_name(const cJSON *item) {
  return cJSON_IsNull(item)     ? "null"
         : cJSON_IsBool(item)   ? "a boolean"
         : cJSON_IsNumber(item) ? "a number"
         : cJSON_IsString(item) ? "a string"
         : cJSON_IsArray(item)  ? "an array"
                                : "an object";
}

static void schema_error(reader *r, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void schema_error(reader *r, const char *format, ...) {
  if (r->failed || r->schema_failed) {
    return;
  }
  r->schema_failed = 1;
  char detail[512];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof detail, format, args);
  va_end(args);
  set_message(r->message, r->message_size, "%s: %s", r->path, detail);
}

static void out_of_memory(reader *r) {
  if (!r->failed) {
    r->failed = 1;
    set_message(r->message, r->message_size, "%s: out of memory", r->path);
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

static void wrong_type(reader *r, const char *prefix, const char *key, const cJSON *item,
                       const char *wanted) {
  char where[160];
  location(where, sizeof where, prefix, key);
  schema_error(r, "%s is %s, expected %s", where, kind_name(item), wanted);
}

static void missing(reader *r, const char *prefix, const char *key) {
  if (prefix == NULL || prefix[0] == '\0') {
    schema_error(r, "\"%s\" is missing", key);
  } else {
    schema_error(r, "%s: \"%s\" is missing", prefix, key);
  }
}

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

static void out_of_range(reader *r, const char *prefix, const char *key) {
  if (!r->failed) {
    r->failed = 1;
    char where[160];
    location(where, sizeof where, prefix, key);
    set_message(r->message, r->message_size, "%s: %s is a number out of range", r->path, where);
  }
}

static void read_field(reader *r, const char *prefix, const field *f, const cJSON *item) {
  if (f->type == FIELD_STRING || f->type == FIELD_STRING_OR_NULL) {
    if (cJSON_IsString(item)) {
      copy_text(f->target, f->size, item->valuestring, strlen(item->valuestring));
    } else if (cJSON_IsNull(item) && f->type == FIELD_STRING_OR_NULL) {
      ((char *)f->target)[0] = '\0';
    } else {
      wrong_type(r, prefix, f->key, item,
                 f->type == FIELD_STRING ? "a string" : "a string or null");
    }
  } else if (f->type == FIELD_NUMBER) {
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble)) {
      out_of_range(r, prefix, f->key); /* cJSON reads 1e999 as infinity */
    } else if (cJSON_IsNumber(item) || cJSON_IsNull(item)) {
      *(double *)f->target = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    } else {
      wrong_type(r, prefix, f->key, item, "a number or null");
    }
  } else if (cJSON_IsBool(item)) {
    *(int *)f->target = cJSON_IsTrue(item);
  } else {
    wrong_type(r, prefix, f->key, item, "true or false");
  }
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

/* The members of object into fields (other keys are ignored; of a key
 * given twice, the last counts), then a message for the first required one
 * missing. */
static void read_fields(reader *r, const char *prefix, field *fields, size_t count,
                        const cJSON *object) {
  for (const cJSON *item = object->child; item != NULL; item = item->next) {
    field *f = find_field(fields, count, item->string);
    if (f != NULL) {
      f->seen = 1;
      read_field(r, prefix, f, item);
    }
  }
  for (size_t i = 0; i < count; i++) {
    if (fields[i].required && !fields[i].seen) {
      missing(r, prefix, fields[i].key);
    }
  }
}

/* An object of fields under key, or null when allow_null (fields keep their
 * defaults). */
static void read_object(reader *r, const char *key, field *fields, size_t count, int allow_null,
                        const cJSON *item) {
  if (cJSON_IsObject(item)) {
    read_fields(r, key, fields, count, item);
  } else if (!(cJSON_IsNull(item) && allow_null)) {
    wrong_type(r, "", key, item, allow_null ? "an object or null" : "an object");
  }
}

#define FIELD_COUNT(fields) (sizeof(fields) / sizeof(fields)[0])

static void result_init(bench_result *r) {
  memset(r, 0, sizeof *r);
  r->rows = r->nonzeros = NAN;
  r->time_s = r->gflops = r->gb_s = r->ratio_to_copy = NAN;
  r->setup_s = r->solve_s = r->iterations = NAN;
}

static void read_result(reader *r, const char *prefix, bench_result *x, const cJSON *object) {
  field fields[] = {
      {"stage", FIELD_STRING, x->stage, sizeof x->stage, 1, 0},
      {"name", FIELD_STRING, x->name, sizeof x->name, 1, 0},
      {"problem", FIELD_STRING_OR_NULL, x->problem, sizeof x->problem, 0, 0},
      {"rows", FIELD_NUMBER, &x->rows, 0, 0, 0},
      {"nonzeros", FIELD_NUMBER, &x->nonzeros, 0, 0, 0},
      {"time_s", FIELD_NUMBER, &x->time_s, 0, 1, 0},
      {"gflops", FIELD_NUMBER, &x->gflops, 0, 0, 0},
      {"gb_s", FIELD_NUMBER, &x->gb_s, 0, 0, 0},
      {"ratio_to_copy", FIELD_NUMBER, &x->ratio_to_copy, 0, 0, 0},
      {"setup_s", FIELD_NUMBER, &x->setup_s, 0, 0, 0},
      {"solve_s", FIELD_NUMBER, &x->solve_s, 0, 0, 0},
      {"iterations", FIELD_NUMBER, &x->iterations, 0, 0, 0},
      {"verified", FIELD_BOOL, &x->verified, 0, 1, 0},
      {"check", FIELD_STRING_OR_NULL, x->check, sizeof x->check, 0, 0},
  };
  read_fields(r, prefix, fields, FIELD_COUNT(fields), object);
}

/* The length of the array under key, or 0 with a message when it is none
 * or longer than the limit. */
static int array_length(reader *r, const char *key, const cJSON *array, const char *wanted,
                        size_t *length) {
  if (!cJSON_IsArray(array)) {
    wrong_type(r, "", key, array, wanted);
    return 0;
  }
  *length = (size_t)cJSON_GetArraySize(array);
  if (*length > BENCH_REPORT_MAX_ENTRIES) {
    schema_error(r, "more than %d %s", BENCH_REPORT_MAX_ENTRIES, key);
    return 0;
  }
  return 1;
}

static void read_results(reader *r, bench_report *report, const cJSON *array) {
  size_t length;
  if (!array_length(r, "results", array, "an array", &length)) {
    return;
  }
  free(report->results); /* a key given twice: the last counts */
  report->count = 0;
  report->results = calloc(length > 0 ? length : 1, sizeof *report->results);
  if (report->results == NULL) {
    out_of_memory(r);
    return;
  }
  size_t index = 0;
  for (const cJSON *item = array->child; item != NULL; item = item->next, index++) {
    char prefix[48];
    snprintf(prefix, sizeof prefix, "results[%zu]", index);
    if (!cJSON_IsObject(item)) {
      wrong_type(r, prefix, NULL, item, "an object");
      continue;
    }
    bench_result *x = &report->results[report->count++];
    result_init(x);
    read_result(r, prefix, x, item);
  }
}

static void read_failures(reader *r, bench_report *report, const cJSON *array) {
  size_t length;
  if (cJSON_IsNull(array) || !array_length(r, "failures", array, "an array of strings", &length)) {
    return;
  }
  free(report->failures);
  report->failure_count = 0;
  report->failures = calloc(length > 0 ? length : 1, sizeof *report->failures);
  if (report->failures == NULL) {
    out_of_memory(r);
    return;
  }
  size_t index = 0;
  for (const cJSON *item = array->child; item != NULL; item = item->next, index++) {
    if (!cJSON_IsString(item)) {
      char prefix[48];
      snprintf(prefix, sizeof prefix, "failures[%zu]", index);
      wrong_type(r, prefix, NULL, item, "a string");
      continue;
    }
    copy_text(report->failures[report->failure_count++], sizeof report->failures[0],
              item->valuestring, strlen(item->valuestring));
  }
}

/* What the top level said about itself, checked once it is all read. */
typedef struct report_keys {
  char program[64];
  double schema_version;
  int has_program, has_schema_version, has_device, has_results, has_verified;
} report_keys;

static void read_report(reader *r, bench_report *x, report_keys *keys, const cJSON *root) {
  field device[] = {
      {"name", FIELD_STRING, x->device_name, sizeof x->device_name, 1, 0},
      {"platform", FIELD_STRING_OR_NULL, x->platform, sizeof x->platform, 0, 0},
      {"driver_version", FIELD_STRING_OR_NULL, x->driver_version, sizeof x->driver_version, 0, 0},
      {"opencl_version", FIELD_STRING_OR_NULL, x->opencl_version, sizeof x->opencl_version, 0, 0},
  };
  field machine[] = {
      {"hostname", FIELD_STRING_OR_NULL, x->hostname, sizeof x->hostname, 0, 0},
      {"cpu", FIELD_STRING_OR_NULL, x->cpu, sizeof x->cpu, 0, 0},
  };
  field settings[] = {
      {"size", FIELD_STRING_OR_NULL, x->size, sizeof x->size, 0, 0},
  };
  field merit[] = {
      {"bandwidth_ratio_geomean", FIELD_NUMBER, &x->fom_bandwidth, 0, 0, 0},
      {"hpcg_like_gflops", FIELD_NUMBER, &x->fom_hpcg_gflops, 0, 0, 0},
      {"hpcg_like_problem", FIELD_STRING_OR_NULL, x->fom_hpcg_problem, sizeof x->fom_hpcg_problem,
       0, 0},
  };
  field top[] = {
      {"program", FIELD_STRING, keys->program, sizeof keys->program, 0, 0},
      {"schema_version", FIELD_NUMBER, &keys->schema_version, 0, 0, 0},
      {"clmg_version", FIELD_STRING_OR_NULL, x->clmg_version, sizeof x->clmg_version, 0, 0},
      {"copy_gb_s", FIELD_NUMBER, &x->copy_gb_s, 0, 0, 0},
      {"verified", FIELD_BOOL, &x->verified, 0, 0, 0},
  };
  for (const cJSON *item = root->child; item != NULL && !r->failed; item = item->next) {
    const char *key = item->string;
    field *f;
    if (strcmp(key, "device") == 0) {
      keys->has_device = 1;
      read_object(r, key, device, FIELD_COUNT(device), 0, item);
    } else if (strcmp(key, "machine") == 0) {
      read_object(r, key, machine, FIELD_COUNT(machine), 1, item);
    } else if (strcmp(key, "settings") == 0) {
      read_object(r, key, settings, FIELD_COUNT(settings), 1, item);
    } else if (strcmp(key, "figure_of_merit") == 0) {
      read_object(r, key, merit, FIELD_COUNT(merit), 1, item);
    } else if (strcmp(key, "results") == 0) {
      keys->has_results = 1;
      read_results(r, x, item);
    } else if (strcmp(key, "failures") == 0) {
      read_failures(r, x, item);
    } else if ((f = find_field(top, FIELD_COUNT(top), key)) != NULL) {
      f->seen = 1;
      read_field(r, "", f, item);
    }
  }
  keys->has_program = top[0].seen;
  keys->has_schema_version = top[1].seen;
  keys->has_verified = top[4].seen;
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
  char *text = data;
  if (length >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { /* a byte order mark */
    text += 3;
    length -= 3;
  }
  cJSON *root = parse_json(path, text, length, message, message_size);
  free(data);
  if (root == NULL) {
    return 0;
  }
  reader r = {.path = path, .message = message, .message_size = message_size};
  report_keys keys = {.schema_version = NAN};
  if (cJSON_IsObject(root)) {
    read_report(&r, report, &keys, root);
  }
  char shown[128];
  int ok = 0;
  if (r.failed) {
    /* the message is set */
  } else if (!cJSON_IsObject(root)) {
    set_message(message, message_size, "%s: not a clmg bench report (the file holds %s)", path,
                kind_name(root));
  } else if (!keys.has_program || strcmp(keys.program, "clmg bench") != 0) {
    fit_text(shown, sizeof shown, keys.program, 40, 0);
    if (keys.has_program && keys.program[0] != '\0') {
      set_message(message, message_size,
                  "%s: not a clmg bench report (\"program\" is \"%s\", not \"clmg bench\")", path,
                  shown);
    } else {
      set_message(message, message_size,
                  "%s: not a clmg bench report (no \"program\": \"clmg bench\")", path);
    }
  } else if (!keys.has_schema_version || keys.schema_version != 1) {
    if (isfinite(keys.schema_version)) {
      set_message(message, message_size,
                  "%s: schema_version %g is not supported (this clmg reads schema_version 1)", path,
                  keys.schema_version);
    } else {
      set_message(message, message_size, "%s: not a clmg bench report (no schema_version)", path);
    }
  } else if (r.schema_failed) {
    /* the message is set */
  } else if (!keys.has_device || !keys.has_results || !keys.has_verified) {
    missing(&r, "", !keys.has_device ? "device" : !keys.has_results ? "results" : "verified");
  } else {
    ok = 1;
  }
  cJSON_Delete(root);
  if (!ok) {
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

/* text cut to width characters, then escaped. */
static void html_fit(FILE *out, const char *text, size_t width) {
  char fitted[1024];
  fit_text(fitted, sizeof fitted, text, width, 1);
  clmg_output_xml_text(out, fitted);
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
  clmg_output_xml_text(out, description);
  fprintf(out, "\">\n");
  int x0 = CHART_LABEL;
  if (isfinite(reference) && reference > 0) {
    int x = x0 + (int)lround(reference / largest * CHART_AREA);
    fprintf(out,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" "
            "stroke-dasharray=\"4 3\"/>\n<text class=\"reference\" x=\"%d\" y=\"12\" "
            "text-anchor=\"middle\">",
            x, CHART_TOP - 6, x, height, x);
    clmg_output_xml_text(out, reference_label);
    fprintf(out, "</text>\n");
  }
  fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0,
          CHART_TOP - 6, x0, height);
  for (size_t g = 0; g < groups; g++) {
    int top = CHART_TOP + (int)g * (group_height + GROUP_GAP);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"><title>", x0 - 8,
            top + group_height / 2 + 4);
    clmg_output_xml_text(out, tooltips[g]);
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
        clmg_output_xml_text(out, texts[row]);
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
        clmg_output_xml_text(out, r->failures[i]);
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
    clmg_output_xml_text(out, r->fom_hpcg_problem);
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
  clmg_output_xml_text(out, first->stage[0] ? first->stage : "(no stage)");
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
        clmg_output_xml_text(out, key->name);
        if (key->problem[0] != '\0') {
          fprintf(out, "<br><small>");
          clmg_output_xml_text(out, key->problem);
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
      clmg_output_xml_text(out, r->check);
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
