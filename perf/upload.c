/* clmg_perf_upload: host-device transfer bandwidth through the library's
 * own paths (clmg_vector_upload / _upload_async / _download, i.e.
 * clmg_write_buffer and its pinned staging, docs/devices.md "Uploads").
 * A vector of --bytes (default 400 MB) is uploaded blocking, uploaded
 * without blocking and then waited for (clmg_finish), and downloaded, each
 * --reps times after one warm-up; prints the fastest and the median in
 * GB/s (10^9 bytes a second) and the commands one transfer enqueued (1: a
 * plain write; more: staged chunks), beside two references measured in the
 * same run: the host's memcpy of the same bytes (the copy a staged transfer
 * adds, and a bound on what the host side can feed) and the device's copy
 * bandwidth (clmg_measure_copy_bandwidth, the floor the other benchmarks
 * divide by), each transfer's best as a fraction of both. Staging is the
 * device's default;
 * CLMG_DEVICE_PARAMS=staging_min_bytes=0 turns it off, staging_min_bytes=1
 * forces it (staging_chunk_bytes=N sets the chunk) to compare the two;
 * CLMG_HOST_THREADS=1 makes the staging copy serial. --output FILE writes
 * the results as JSON, --json prints them instead of the table.
 *
 *   clmg_perf_upload [--device DEV] [--bytes N] [--reps R] [--output FILE] [--json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apputil.h"
#include "clmg.h"
#include "perf_common.h"

#define PROGRAM "clmg_perf_upload"

enum { KINDS = 3 };
static const char *const kinds[KINDS] = {"upload", "upload_async", "download"};
static const char *const kind_labels[KINDS] = {"upload (blocking)", "upload (async + finish)",
                                               "download (blocking)"};

typedef struct settings {
  const char *device;
  double bytes;
  long long reps;
  perf_output output;
} settings;

typedef struct row {
  double best_gb_per_s, median_gb_per_s;
  unsigned long long commands; /* enqueued by one transfer */
} row;

/* The references of the same run, GB/s: a host memcpy of the transfer's
 * bytes (best of reps) and the device's copy kernel (read + write). */
typedef struct references {
  double host_copy, device_copy;
} references;

/* The fastest of `reps` memcpys of `bytes` from source to target (both
 * touched), in GB/s. */
static double host_copy_gb_per_s(void *target, const void *source, size_t bytes, long long reps) {
  double best = 0;
  memcpy(target, source, bytes); /* pages touched */
  for (long long r = 0; r < reps; ++r) {
    double start = apputil_now();
    memcpy(target, source, bytes);
    double elapsed = apputil_now() - start;
    if (elapsed > 0 && (best == 0 || (double)bytes / elapsed / 1e9 > best))
      best = (double)bytes / elapsed / 1e9;
  }
  return best;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: %s [--device DEV] [--bytes N] [--reps R] [--output FILE] [--json]\n"
          "  --device DEV            the OpenCL device (as CLMG_DEVICE)\n"
          "  --bytes N               bytes per transfer (4e8; a multiple of 4 is used)\n"
          "  --reps R                timed transfers of each kind after a warm-up (5)\n",
          PROGRAM);
  perf_output_help(out, 26);
  fprintf(out, "Staging: CLMG_DEVICE_PARAMS=staging_min_bytes=0 (off) or =1 (forced),\n"
               "staging_chunk_bytes=N; CLMG_HOST_THREADS=1 for a serial staging copy.\n");
}

/* 1: parsed; 0: bad (message printed); -1: --help. */
static int parse(int argc, char **argv, settings *s) {
  static const char *const value_options[] = {"--device", "--bytes", "--reps", "--output", NULL};
  for (int i = 1; i < argc; ++i) {
    char name[32];
    const char *value = NULL;
    int got = perf_next_option(PROGRAM, argc, argv, &i, value_options, name, &value);
    if (got <= 0)
      return got;
    if (perf_parse_output_option(name, value, &s->output) == 1)
      continue;
    if (strcmp(name, "--device") == 0)
      s->device = value;
    else if (strcmp(name, "--bytes") == 0) {
      if (!perf_parse_number(PROGRAM, name, value, 4, 1e12, &s->bytes))
        return 0;
    } else if (!perf_parse_integer(PROGRAM, name, value, 1, 1000, &s->reps))
      return 0;
  }
  return 1;
}

/* Times each kind of transfer of `host` (n int32) into and out of vector. */
static clmg_status measure(clmg_context *context, clmg_vector *vector, int32_t *host, size_t n,
                           long long reps, const references *ref, double *seconds,
                           row rows[KINDS]) {
  clmg_status status = CLMG_SUCCESS;
  size_t bytes = n * sizeof *host;
  for (int kind = 0; kind < KINDS && status == CLMG_SUCCESS; ++kind) {
    clmg_counters before = {0}, after = {0};
    for (long long r = -1; r < reps && status == CLMG_SUCCESS; ++r) {
      status = clmg_finish(context);
      clmg_context_counters(context, &before);
      double start = apputil_now();
      if (status == CLMG_SUCCESS)
        status = kind == 0   ? clmg_vector_upload(vector, host)
                 : kind == 1 ? clmg_vector_upload_async(vector, host)
                             : clmg_vector_download(vector, host);
      if (status == CLMG_SUCCESS && kind == 1)
        status = clmg_finish(context);
      double elapsed = apputil_now() - start;
      clmg_context_counters(context, &after);
      if (r >= 0)
        seconds[r] = elapsed;
    }
    if (status != CLMG_SUCCESS)
      break;
    qsort(seconds, (size_t)reps, sizeof *seconds, compare_doubles);
    rows[kind].best_gb_per_s = (double)bytes / seconds[0] / 1e9;
    rows[kind].median_gb_per_s = (double)bytes / seconds[reps / 2] / 1e9;
    rows[kind].commands = after.commands - before.commands;
    printf("%-26s %10.2f %10.2f %10llu %10.3f %10.4f\n", kind_labels[kind],
           rows[kind].best_gb_per_s, rows[kind].median_gb_per_s, rows[kind].commands,
           rows[kind].best_gb_per_s / ref->host_copy, rows[kind].best_gb_per_s / ref->device_copy);
  }
  return status;
}

static int write_json(const char *path, const settings *s, const clmg_device_info *device,
                      size_t bytes, const references *ref, const row rows[KINDS]) {
  clmg_output_file *file;
  FILE *out = perf_json_open(PROGRAM, path, &file);
  if (!out)
    return 0;
  const char *params = getenv("CLMG_DEVICE_PARAMS");
  json_writer w;
  json_begin(&w, out);
  json_object_begin(&w, NULL);
  json_string(&w, "benchmark", "upload");
  json_string(&w, "clmg_version", clmg_version_string());
  json_device(&w, device);
  json_object_begin(&w, "settings");
  json_integer(&w, "bytes", (long long)bytes);
  json_integer(&w, "reps", s->reps);
  json_string(&w, "device_params", params ? params : "");
  json_object_end(&w);
  json_number(&w, "host_copy_gb_per_s", ref->host_copy);
  json_number(&w, "copy_gb_per_s", ref->device_copy);
  json_array_begin(&w, "rows");
  for (int kind = 0; kind < KINDS; ++kind) {
    json_object_begin(&w, NULL);
    json_string(&w, "transfer", kinds[kind]);
    json_number(&w, "best_gb_per_s", rows[kind].best_gb_per_s);
    json_number(&w, "median_gb_per_s", rows[kind].median_gb_per_s);
    json_integer(&w, "commands", (long long)rows[kind].commands);
    json_number(&w, "ratio_to_host_copy", rows[kind].best_gb_per_s / ref->host_copy);
    json_number(&w, "ratio_to_copy", rows[kind].best_gb_per_s / ref->device_copy);
    json_object_end(&w);
  }
  json_array_end(&w);
  json_object_end(&w);
  json_end(&w);
  return perf_json_close(PROGRAM, file);
}

int main(int argc, char **argv) {
  settings s = {NULL, 4e8, 5, {NULL, 0}};
  int parsed = parse(argc, argv, &s);
  if (parsed < 0) {
    usage(stdout);
    return 0;
  }
  if (parsed == 0)
    return 2;
  if (!perf_output_begin(PROGRAM, &s.output))
    return 1;
  size_t n = (size_t)(s.bytes / 4), bytes = n * 4;
  clmg_context *context = apputil_open_context(s.device);
  if (!context)
    return 1;
  const clmg_device_info *device = clmg_context_device(context);
  printf(PROGRAM " (clmg %s)\n", clmg_version_string());
  perf_print_device(device);
  const char *params = getenv("CLMG_DEVICE_PARAMS");
  printf("CLMG_DEVICE_PARAMS=%s, %zu bytes, fastest and median of %lld\n", params ? params : "",
         bytes, s.reps);
  int32_t *host = malloc(bytes), *scratch = malloc(bytes);
  double *seconds = malloc((size_t)s.reps * sizeof *seconds);
  clmg_vector *vector = NULL;
  clmg_status status = host && scratch && seconds
                           ? clmg_vector_create(context, CLMG_INT32, n, &vector)
                           : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  row rows[KINDS] = {{0}};
  references ref = {0, 0};
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < n; ++i) /* touched before timing */
      host[i] = (int32_t)i;
    ref.host_copy = host_copy_gb_per_s(scratch, host, bytes, s.reps);
    status = clmg_measure_copy_bandwidth(context, 0, &ref.device_copy);
  }
  if (status == CLMG_SUCCESS) {
    printf("references: host memcpy %.2f GB/s, device copy %.1f GB/s\n", ref.host_copy,
           ref.device_copy);
    printf("%-26s %10s %10s %10s %10s %10s\n", "transfer", "best GB/s", "median", "commands",
           "x memcpy", "x copy");
    status = measure(context, vector, host, n, s.reps, &ref, seconds, rows);
  }
  int failed = status != CLMG_SUCCESS;
  if (failed)
    apputil_report(context, status, "transferring");
  /* the data survived the round trips */
  for (size_t i = 0; !failed && i < n; ++i)
    if (host[i] != (int32_t)i) {
      fprintf(stderr, "%s: element %zu came back as %d\n", PROGRAM, i, host[i]);
      failed = 1;
    }
  const char *paths[2];
  for (size_t k = 0; !failed && k < perf_output_paths(&s.output, paths); ++k) {
    if (!write_json(paths[k], &s, device, bytes, &ref, rows))
      failed = 1;
    else if (strcmp(paths[k], "-") != 0)
      printf("\nJSON written to %s\n", paths[k]);
  }
  free(seconds);
  free(scratch);
  free(host);
  clmg_vector_destroy(vector);
  clmg_context_destroy(context);
  return failed ? 1 : 0;
}
