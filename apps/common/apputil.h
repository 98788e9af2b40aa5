/* Helpers shared by the clmg command and the benchmarks in perf/: a small
 * JSON writer, wall-clock time, and printing a context's failure. Not part of
 * the installed library (the library itself never prints). */
#ifndef CLMG_APPUTIL_H
#define CLMG_APPUTIL_H

#include <stdio.h>

#include "clmg.h"

/* Seconds since an arbitrary fixed point (monotonic clock). */
double apputil_now(void);

/* Prints "clmg: <what>: <status string>: <context message>" to stderr. */
void apputil_report(const clmg_context *context, clmg_status status, const char *what);

/* An old spelling of an option, still taken for one release (the clmg
 * command's and the perf programs'): a note on stderr ("clmg flow:
 * --max-iterations is now --maxit (...); the old spelling goes in 0.3.0"). */
void apputil_old_spelling(const char *command, const char *old_name, const char *new_name);

/* Creates a context on `device` (NULL: default), printing the reason and
 * returning NULL on failure. The context announces its first kernel
 * compilation on stderr (apputil_announce_compiling). */
clmg_context *apputil_open_context(const char *device);

/* Before a command refines `coarse` `refinements` times (each splitting a
 * cell into 2^dim), the memory its finest level will take is checked, so
 * that a run that cannot fit fails at once instead of after minutes and
 * gigabytes: the finest cells times unknowns_per_cell, times
 * bytes_per_unknown (measured per command on pocl, where device memory is
 * host memory: all levels, matrices, vectors and the mesh together), half
 * counted as device and half as host memory, the largest allocation the
 * finest matrix's values (entries_per_unknown doubles a row), through
 * clmg_context_check_memory. `what` names the run in the message. The
 * status (the context has the message). */
clmg_status apputil_check_refined_size(clmg_context *context, const clmg_mesh *coarse,
                                       int refinements, double unknowns_per_cell,
                                       double bytes_per_unknown, double entries_per_unknown,
                                       const char *what);

/* A program callback (clmg_context_set_program_callback) that prints, once
 * per process and only when kernels are compiled rather than loaded from the
 * cache, "clmg: compiling OpenCL kernels for DEVICE (first run; cached in
 * DIR)..." on stderr. data is not used. */
void apputil_announce_compiling(const clmg_program_event *event, void *data);

/* A streaming JSON writer with correct commas, indentation and string
 * escaping. Non-finite numbers are written as null. Usage:
 *   json_writer w; json_begin(&w, stdout);
 *   json_object_begin(&w, NULL); json_number(&w, "n", 3); json_object_end(&w);
 *   json_end(&w);
 * Inside an object each value needs a key; inside an array the key is NULL. */
typedef struct json_writer {
  FILE *out;
  int depth;
  int need_comma[64];
} json_writer;

void json_begin(json_writer *w, FILE *out);
void json_end(json_writer *w); /* writes the final newline */
void json_object_begin(json_writer *w, const char *key);
void json_object_end(json_writer *w);
void json_array_begin(json_writer *w, const char *key);
void json_array_end(json_writer *w);
void json_string(json_writer *w, const char *key, const char *value);
void json_number(json_writer *w, const char *key, double value);
void json_integer(json_writer *w, const char *key, long long value);
void json_bool(json_writer *w, const char *key, int value);
/* A value written verbatim: JSON text the library made (a view, the
 * options); NULL writes null. */
void json_raw(json_writer *w, const char *key, const char *value);
/* Every member of the JSON object text `object` into the open object; 0
 * (nothing written) when it is not an object. */
int json_members(json_writer *w, const char *object);
/* The version of the result schema every command's JSON follows
 * (docs/result.schema.json). */
enum { JSON_RESULT_SCHEMA_VERSION = 1 };
/* json_begin, the top-level object, and the keys every result starts with:
 * schema_version, clmg_version and command ("solve" of "clmg solve"). */
void json_result_begin(json_writer *w, FILE *out, const char *command);
/* The object and the writer's end. */
void json_result_end(json_writer *w);

/* The "device" object: id (P:D), platform, name, vendor, versions, type,
 * fp64, compute units and memory. */
void json_device(json_writer *w, const clmg_device_info *device);

/* key: {upload_s, ..., engine_s, total_s} in the open object. */
void json_amg_setup_times(json_writer *w, const char *key, const clmg_amg_setup_times *times);

#endif
