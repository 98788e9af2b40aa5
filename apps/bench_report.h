/* Reading clmg bench reports back (the JSON that `clmg bench --json` writes,
 * schema_version 1) and rendering several of them side by side: a table for
 * the terminal (`clmg bench --compare A.json B.json ...`) and a
 * self-contained HTML page with bar charts (`--html FILE`).
 *
 * Reports come from other machines, so a file is untrusted input: the reader
 * checks its syntax and every key's type, bounds what it allocates, and the
 * renderers neutralise control characters (terminal) and escape markup
 * (HTML) in every string taken from a file. */
#ifndef CLMG_BENCH_REPORT_H
#define CLMG_BENCH_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* One measurement of a report. Strings are UTF-8 without NUL (invalid bytes
 * read as U+FFFD), truncated at a character boundary to fit. */
typedef struct bench_result {
  char stage[32];
  char name[96];
  char problem[128];
  double rows, nonzeros; /* NAN when null/absent */
  double time_s, gflops, gb_s, ratio_to_copy;
  double setup_s, solve_s; /* NAN when null */
  double iterations;       /* NAN when null */
  int verified;
  char check[192];
} bench_result;

typedef struct bench_report {
  char path[256];  /* the file it came from */
  char label[160]; /* "NVIDIA H200 (OpenCL 3.0 CUDA)" style: device name + opencl_version */
  char device_name[128], platform[128], driver_version[128], opencl_version[128];
  char clmg_version[32], size[16], hostname[128], cpu[128];
  double copy_gb_s;
  double fom_bandwidth;   /* figure_of_merit.bandwidth_ratio_geomean, NAN if null */
  double fom_hpcg_gflops; /* NAN if null */
  char fom_hpcg_problem[160];
  int verified;
  size_t failure_count;
  char (*failures)[192]; /* failure_count strings */
  bench_result *results;
  size_t count;
} bench_report;

/* At most this many results, and as many failures, in one report: far more
 * than any run makes, and it bounds the memory a hostile file can claim. */
#define BENCH_REPORT_MAX_ENTRIES 100000

/* Reads a report; returns 1, or 0 with a message naming the file and, for
 * malformed JSON, the line and column and what was expected (e.g.
 * "A.json:12:5: expected ',' or '}', found ']'"), or the missing/ill-typed
 * key ("A.json: \"results\" is missing"; "A.json: results[3].time_s is a
 * string, expected a number or null"). A file that is not a clmg bench
 * report ("program" is not "clmg bench" or schema_version is not 1) is
 * refused with a message. Unknown keys are ignored; of a key given twice,
 * the last counts. A (stage, name) pair that appears twice is kept (the
 * renderers match repeats occurrence by occurrence). The JSON is parsed by
 * cJSON after a lexical check: the file may be at most 64 MiB, hold at most
 * 4 million JSON values and nest at most 64 levels deep; a number out of
 * range is refused where the report's numbers are read (as
 * "A.json: copy_gb_s is a number out of range"). On failure *report is left
 * empty (bench_report_free is harmless on it). */
int bench_report_read(const char *path, bench_report *report, char *message, size_t message_size);

/* Frees what bench_report_read allocated and empties *report. */
void bench_report_free(bench_report *report);

/* The side-by-side table of `count` reports (count >= 1) on out: a header
 * per report (lettered A, B, ...), then one row per (stage, name) found in
 * any report, grouped by stage in order of first appearance (A's order,
 * then what later reports add), with per report the time per operation, the
 * ratio to the copy bandwidth, iterations of solvers, and the speed-up
 * time_A / time_X; then the figures of merit with their ratios X / A.
 * Unverified results read FAILED, missing ones "—". Lines stay within 160
 * columns: with many reports the table repeats in blocks, each with A. */
void bench_compare_print(FILE *out, const bench_report *reports, size_t count);

/* A self-contained HTML page (no network, no scripts: inline CSS and inline
 * SVG bar charts) at path; an existing file is replaced only once the new
 * one is complete (clmg/output_file.h). Returns 1, or 0 with a message. */
int bench_html_write(const char *path, const bench_report *reports, size_t count, char *message,
                     size_t message_size);

#endif
