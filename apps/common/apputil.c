/* Helpers shared by the clmg command and the benchmarks: see apputil.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "apputil.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double apputil_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void apputil_report(const clmg_context *context, clmg_status status, const char *what) {
  const char *message = context != NULL ? clmg_context_message(context) : NULL;
  /* Keep stdout and stderr in the order the user would expect on a terminal. */
  fflush(stdout);
  fprintf(stderr, "clmg: %s: %s", what != NULL ? what : "error", clmg_status_string(status));
  if (message != NULL && message[0] != '\0') {
    fprintf(stderr, ": %s", message);
  }
  fputc('\n', stderr);
}

void apputil_old_spelling(const char *command, const char *old_name, const char *new_name) {
  fprintf(stderr,
          "%s: %s is now %s (every command's name for it); the old spelling goes in 0.3.0\n",
          command, old_name, new_name);
}

void apputil_announce_compiling(const clmg_program_event *event, void *data) {
  static int said = 0;
  (void)data;
  if (event->kind != CLMG_PROGRAM_COMPILE_START || said) {
    return;
  }
  said = 1;
  fflush(stdout);
  if (event->cache_dir != NULL) {
    fprintf(stderr, "clmg: compiling OpenCL kernels for %s (first run; cached in %s)...\n",
            event->device, event->cache_dir);
  } else if (event->cache_off_reason != NULL) {
    fprintf(stderr, "clmg: compiling OpenCL kernels for %s (not cached: %s)...\n", event->device,
            event->cache_off_reason);
  } else {
    fprintf(stderr, "clmg: compiling OpenCL kernels for %s (the binary cache is off)...\n",
            event->device);
  }
}

clmg_context *apputil_open_context(const char *device) {
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  options.device = device;

  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(&options, &context);
  if (status == CLMG_SUCCESS) {
    status = clmg_context_set_program_callback(context, apputil_announce_compiling, NULL);
  }
  if (status == CLMG_SUCCESS) {
    return context;
  }

  char what[256];
  if (device != NULL) {
    snprintf(what, sizeof what, "cannot open device '%s'", device);
  } else {
    snprintf(what, sizeof what, "cannot open the default device");
  }
  /* On failure the library may hand back a context that only carries the
   * message (see clmg_context_create). */
  apputil_report(context, status, what);
  clmg_context_destroy(context);
  return NULL;
}

/* ---- JSON writer ----
 *
 * need_comma[d] describes the container open at depth d: bit 0 says a value has
 * already been written in it (so the next one needs a comma), bit 1 says it is
 * an array (so keys are not written). Depth 0 is the top level. */

enum { JSON_HAS_VALUE = 1, JSON_IS_ARRAY = 2 };
#define JSON_MAX_SLOT ((int)(sizeof(((json_writer *)0)->need_comma) / sizeof(int)) - 1)

/* Nesting deeper than need_comma can track shares its last slot: the brackets
 * stay balanced, only the commas of those deep levels may be off. */
static int *json_slot(json_writer *w) {
  int depth = w->depth < 0 ? 0 : w->depth;
  return &w->need_comma[depth > JSON_MAX_SLOT ? JSON_MAX_SLOT : depth];
}

static void json_indent(json_writer *w) {
  fputc('\n', w->out);
  for (int level = 0; level < w->depth; level++) {
    fputs("  ", w->out);
  }
}

static void json_write_string(FILE *out, const char *text) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
    switch (*c) {
    case '"':
      fputs("\\\"", out);
      break;
    case '\\':
      fputs("\\\\", out);
      break;
    case '\n':
      fputs("\\n", out);
      break;
    case '\r':
      fputs("\\r", out);
      break;
    case '\t':
      fputs("\\t", out);
      break;
    default:
      if (*c < 0x20) {
        fprintf(out, "\\u%04x", (unsigned)*c);
      } else {
        fputc(*c, out); /* bytes >= 0x80 pass through: UTF-8 stays UTF-8 */
      }
    }
  }
  fputc('"', out);
}

/* Writes what comes before a value: the comma, the line break and indent, and
 * the key when the enclosing container is an object. */
static void json_value_prefix(json_writer *w, const char *key) {
  int *slot = json_slot(w);
  if (w->depth == 0) {
    if (*slot & JSON_HAS_VALUE) {
      fputc('\n', w->out); /* several top-level values: one per line */
    }
  } else {
    if (*slot & JSON_HAS_VALUE) {
      fputc(',', w->out);
    }
    json_indent(w);
    if (!(*slot & JSON_IS_ARRAY)) {
      /* A missing key inside an object is a caller bug; "" keeps the JSON valid. */
      json_write_string(w->out, key != NULL ? key : "");
      fputs(": ", w->out);
    }
  }
  *slot |= JSON_HAS_VALUE;
}

void json_begin(json_writer *w, FILE *out) {
  memset(w, 0, sizeof *w);
  w->out = out;
}

void json_end(json_writer *w) {
  fputc('\n', w->out);
  fflush(w->out);
}

static void json_container_begin(json_writer *w, const char *key, char open, int kind) {
  json_value_prefix(w, key);
  fputc(open, w->out);
  w->depth++;
  *json_slot(w) = kind;
}

static void json_container_end(json_writer *w, char close) {
  int had_values = *json_slot(w) & JSON_HAS_VALUE;
  if (w->depth > 0) {
    w->depth--;
  }
  if (had_values) {
    json_indent(w);
  }
  fputc(close, w->out);
}

void json_object_begin(json_writer *w, const char *key) {
  json_container_begin(w, key, '{', 0);
}

void json_object_end(json_writer *w) {
  json_container_end(w, '}');
}

void json_array_begin(json_writer *w, const char *key) {
  json_container_begin(w, key, '[', JSON_IS_ARRAY);
}

void json_array_end(json_writer *w) {
  json_container_end(w, ']');
}

void json_string(json_writer *w, const char *key, const char *value) {
  json_value_prefix(w, key);
  if (value == NULL) {
    fputs("null", w->out);
  } else {
    json_write_string(w->out, value);
  }
}

void json_result_begin(json_writer *w, FILE *out, const char *command) {
  json_begin(w, out);
  json_object_begin(w, NULL);
  json_integer(w, "schema_version", JSON_RESULT_SCHEMA_VERSION);
  json_string(w, "clmg_version", clmg_version_string());
  if (command != NULL && strncmp(command, "clmg ", 5) == 0)
    command += 5;
  json_string(w, "command", command);
}

void json_result_end(json_writer *w) {
  json_object_end(w);
  json_end(w);
}

void json_raw(json_writer *w, const char *key, const char *value) {
  json_value_prefix(w, key);
  fputs(value != NULL ? value : "null", w->out);
}

int json_members(json_writer *w, const char *object) {
  cJSON *root = object ? cJSON_Parse(object) : NULL;
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return 0;
  }
  int ok = 1;
  for (const cJSON *item = root->child; item && ok; item = item->next) {
    char *text = cJSON_PrintUnformatted(item);
    ok = text != NULL;
    if (ok)
      json_raw(w, item->string, text);
    free(text);
  }
  cJSON_Delete(root);
  return ok;
}

void json_number(json_writer *w, const char *key, double value) {
  json_value_prefix(w, key);
  if (!isfinite(value)) {
    fputs("null", w->out); /* JSON has no inf or nan */
    return;
  }
  /* The shortest of %.15g..%.17g that reads back as the same double: exact,
   * yet 0.1 prints as 0.1 and not 0.10000000000000001. %g output (including
   * exponents such as 1e+20 and -0) is valid JSON. */
  char text[32];
  for (int precision = 15; precision <= 17; precision++) {
    snprintf(text, sizeof text, "%.*g", precision, value);
    if (strtod(text, NULL) == value) {
      break;
    }
  }
  fputs(text, w->out);
}

void json_integer(json_writer *w, const char *key, long long value) {
  json_value_prefix(w, key);
  fprintf(w->out, "%lld", value);
}

void json_bool(json_writer *w, const char *key, int value) {
  json_value_prefix(w, key);
  fputs(value ? "true" : "false", w->out);
}

void json_amg_setup_times(json_writer *w, const char *key, const clmg_amg_setup_times *t) {
  json_object_begin(w, key);
#define JSON_PHASE(field, label) json_number(w, #field, t->field);
  CLMG_AMG_SETUP_PHASES(JSON_PHASE)
#undef JSON_PHASE
  json_number(w, "total_s", t->total_s);
  json_object_end(w);
}

void json_device(json_writer *w, const clmg_device_info *device) {
  char id[32];
  snprintf(id, sizeof id, "%u:%u", device->platform_index, device->device_index);
  json_object_begin(w, "device");
  json_string(w, "id", id);
  json_string(w, "platform", device->platform_name);
  json_string(w, "platform_version", device->platform_version);
  json_string(w, "name", device->name);
  json_string(w, "vendor", device->vendor);
  json_string(w, "driver_version", device->driver_version);
  json_string(w, "opencl_version", device->opencl_version);
  json_bool(w, "is_gpu", device->is_gpu);
  json_bool(w, "is_cpu", device->is_cpu);
  json_bool(w, "has_fp64", device->has_fp64);
  json_integer(w, "compute_units", device->compute_units);
  json_integer(w, "global_mem_bytes", (long long)device->global_mem_bytes);
  json_integer(w, "max_alloc_bytes", (long long)device->max_alloc_bytes);
  json_object_end(w);
}

clmg_status apputil_check_refined_size(clmg_context *context, const clmg_mesh *coarse,
                                       int refinements, double unknowns_per_cell,
                                       double bytes_per_unknown, double entries_per_unknown,
                                       const char *what) {
  double unknowns =
      (double)coarse->num_cells * ldexp(1.0, coarse->dim * refinements) * unknowns_per_cell;
  double total = unknowns * bytes_per_unknown, largest = unknowns * entries_per_unknown * 8;
  /* clamped where they pass 2^63: no machine has that */
  const double cap = ldexp(1.0, 63);
  uint64_t half = (uint64_t)(fmin(total, cap) / 2), biggest = (uint64_t)fmin(largest, cap);
  char described[256];
  snprintf(described, sizeof described, "%s (about %.3g unknowns on the finest level)", what,
           unknowns);
  return clmg_context_check_memory(context, half, biggest, half, described);
}
