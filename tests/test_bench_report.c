/* clmg bench reports read back and rendered (apps/bench_report.c): a valid
 * report reads back field by field (null as NAN, unknown keys ignored,
 * escapes decoded); malformed JSON, missing and ill-typed keys, files that
 * are no clmg bench report, the limits of nesting, size and the number of
 * values are refused with messages that say where and why; the comparison
 * table shows the union of two reports' results with "—", FAILED and
 * speed-ups; the HTML page has its charts, escapes what the files say and
 * never draws a failed result.
 * Host only: no OpenCL device. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream under -std=c11 */
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bench_report.h"
#include "test_util.h"

static char *scratch;

/* A report as clmg bench writes it, with nulls, an unknown key at the top
 * level and one inside a result; tests edit copies of it. */
static const char valid_report[] =
    "{\n"
    "  \"program\": \"clmg bench\",\n"
    "  \"schema_version\": 1,\n"
    "  \"clmg_version\": \"0.1.0\",\n"
    "  \"build\": {\"build_type\": \"Release\", \"compiler\": \"GNU 12.2.0\", \"options\": "
    "\"-O2\"},\n"
    "  \"machine\": {\"hostname\": \"gpu01\", \"os\": \"Linux 6.1 x86_64\", \"cpu\": \"Xeon\", "
    "\"cores\": 16},\n"
    "  \"device\": {\"id\": \"0:0\", \"platform\": \"NVIDIA CUDA\", \"platform_version\": "
    "\"OpenCL 3.0\", \"name\": \"NVIDIA H200\", \"vendor\": \"NVIDIA\", \"driver_version\": "
    "\"550.54\", \"opencl_version\": \"OpenCL 3.0 CUDA\", \"is_gpu\": true, \"is_cpu\": false, "
    "\"has_fp64\": true, \"compute_units\": 132, \"global_mem_bytes\": 150000000000, "
    "\"max_alloc_bytes\": 37000000000},\n"
    "  \"settings\": {\"size\": \"small\", \"quick\": true, \"min_time_s\": 0.05, \"trials\": 3},\n"
    "  \"copy_gb_s\": 76.2,\n"
    "  \"unknown_extra\": {\"nested\": [1, {\"x\": null}, \"s\"], \"more\": [[[]]]},\n"
    "  \"results\": [\n"
    "    {\"stage\": \"spmv\", \"name\": \"fe-q1 ellr double\", \"problem\": \"Q1 stiffness, "
    "1,000,000 rows\",\n"
    "     \"rows\": 1000000, \"nonzeros\": 9000000,\n"
    "     \"time_s\": 0.0012, \"gflops\": 15.0, \"gb_s\": 60.1, \"ratio_to_copy\": 0.79,\n"
    "     \"setup_s\": null, \"solve_s\": null, \"iterations\": null,\n"
    "     \"verified\": true, \"check\": \"max relative error 2e-16\", \"future_key\": [1, 2]},\n"
    "    {\"stage\": \"gmg\", \"name\": \"cg+v-cycle\", \"problem\": null,\n"
    "     \"rows\": null, \"nonzeros\": null,\n"
    "     \"time_s\": 0.5, \"gflops\": 12.5, \"gb_s\": 40, \"ratio_to_copy\": 0.52,\n"
    "     \"setup_s\": 0.25, \"solve_s\": 0.5, \"iterations\": 12,\n"
    "     \"verified\": false, \"check\": \"residual 1e-3 above 1e-8\"}\n"
    "  ],\n"
    "  \"figure_of_merit\": {\"bandwidth_ratio_geomean\": 0.61, \"results_in_mean\": 14,\n"
    "                      \"hpcg_like_gflops\": null, \"hpcg_like_problem\": \"Q1 Poisson\"},\n"
    "  \"verified\": false,\n"
    "  \"failures\": [\"gmg: residual 1e-3 above 1e-8\"]\n"
    "}\n";

/* scratch/name (malloc'ed). */
static char *scratch_path(const char *name) {
  size_t length = strlen(scratch) + strlen(name) + 2;
  char *path = malloc(length);
  assert_non_null(path);
  snprintf(path, length, "%s/%s", scratch, name);
  return path;
}

/* Writes text to scratch/name; returns the path (malloc'ed). */
static char *write_text(const char *name, const char *text) {
  char *path = scratch_path(name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
  return path;
}

/* valid_report with `from` replaced by `to` (which must occur). */
static char *edited_report(const char *from, const char *to) {
  const char *hit = strstr(valid_report, from);
  assert_non_null(hit);
  size_t length = strlen(valid_report) - strlen(from) + strlen(to) + 1;
  char *text = malloc(length);
  assert_non_null(text);
  snprintf(text, length, "%.*s%s%s", (int)(hit - valid_report), valid_report, to,
           hit + strlen(from));
  return text;
}

/* Reading text must fail with a message that contains each of the
 * NULL-terminated fragments. */
static void expect_refused(const char *name, const char *text, ...) {
  char *path = write_text(name, text);
  bench_report report;
  char message[512] = "";
  int ok = bench_report_read(path, &report, message, sizeof message);
  if (ok) {
    fail_msg("%s was read, expected a refusal", name);
  }
  assert_null(report.results);
  assert_int_equal(report.count, 0);
  va_list args;
  va_start(args, text);
  for (const char *fragment; (fragment = va_arg(args, const char *)) != NULL;) {
    if (strstr(message, fragment) == NULL) {
      fail_msg("message \"%s\" lacks \"%s\"", message, fragment);
    }
  }
  va_end(args);
  bench_report_free(&report);
  free(path);
}

static size_t occurrences(const char *text, const char *pattern) {
  size_t n = 0;
  for (const char *s = strstr(text, pattern); s != NULL; s = strstr(s + 1, pattern)) {
    n++;
  }
  return n;
}

static void assert_contains(const char *text, const char *pattern) {
  if (strstr(text, pattern) == NULL) {
    fail_msg("\"%s\" not found in:\n%s", pattern, text);
  }
}

static int setup(void **state) {
  (void)state;
  scratch = make_tmpdir("bench_report");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  remove_tree(scratch);
  scratch = NULL;
  return 0;
}

/* ---- reading ---- */

static void reads_a_valid_report(void **state) {
  (void)state;
  char *path = write_text("valid.json", valid_report);
  bench_report r;
  char message[256] = "";
  if (!bench_report_read(path, &r, message, sizeof message)) {
    fail_msg("%s", message);
  }
  assert_string_equal(r.path, path);
  assert_string_equal(r.label, "NVIDIA H200 (OpenCL 3.0 CUDA)");
  assert_string_equal(r.device_name, "NVIDIA H200");
  assert_string_equal(r.platform, "NVIDIA CUDA");
  assert_string_equal(r.driver_version, "550.54");
  assert_string_equal(r.opencl_version, "OpenCL 3.0 CUDA");
  assert_string_equal(r.clmg_version, "0.1.0");
  assert_string_equal(r.size, "small");
  assert_string_equal(r.hostname, "gpu01");
  assert_string_equal(r.cpu, "Xeon");
  assert_true(r.copy_gb_s == 76.2);
  assert_true(r.fom_bandwidth == 0.61);
  assert_true(isnan(r.fom_hpcg_gflops));
  assert_string_equal(r.fom_hpcg_problem, "Q1 Poisson");
  assert_false(r.verified);
  assert_int_equal(r.failure_count, 1);
  assert_string_equal(r.failures[0], "gmg: residual 1e-3 above 1e-8");
  assert_int_equal(r.count, 2);

  const bench_result *spmv = &r.results[0];
  assert_string_equal(spmv->stage, "spmv");
  assert_string_equal(spmv->name, "fe-q1 ellr double");
  assert_string_equal(spmv->problem, "Q1 stiffness, 1,000,000 rows");
  assert_true(spmv->rows == 1e6);
  assert_true(spmv->nonzeros == 9e6);
  assert_true(spmv->time_s == 0.0012);
  assert_true(spmv->gflops == 15.0);
  assert_true(spmv->gb_s == 60.1);
  assert_true(spmv->ratio_to_copy == 0.79);
  assert_true(isnan(spmv->setup_s));
  assert_true(isnan(spmv->solve_s));
  assert_true(isnan(spmv->iterations));
  assert_true(spmv->verified);
  assert_string_equal(spmv->check, "max relative error 2e-16");

  const bench_result *gmg = &r.results[1];
  assert_string_equal(gmg->stage, "gmg");
  assert_string_equal(gmg->problem, "");
  assert_true(isnan(gmg->rows));
  assert_true(isnan(gmg->nonzeros));
  assert_true(gmg->setup_s == 0.25);
  assert_true(gmg->solve_s == 0.5);
  assert_true(gmg->iterations == 12);
  assert_false(gmg->verified);
  assert_string_equal(gmg->check, "residual 1e-3 above 1e-8");

  bench_report_free(&r);
  assert_null(r.results);
  assert_null(r.failures);
  bench_report_free(&r); /* harmless twice */
  free(path);
}

static void decodes_escapes(void **state) {
  (void)state;
  char *text = edited_report("\"name\": \"fe-q1 ellr double\"",
                             "\"name\": \"a\\\"b\\\\c\\nd\\u00e9\\/\\ud83d\\ude00\\t\"");
  char *path = write_text("escapes.json", text);
  bench_report r;
  char message[256] = "";
  if (!bench_report_read(path, &r, message, sizeof message)) {
    fail_msg("%s", message);
  }
  assert_string_equal(r.results[0].name, "a\"b\\c\nd\xC3\xA9/\xF0\x9F\x98\x80\t");
  bench_report_free(&r);
  free(path);
  free(text);

  /* \u0000 cannot live in a C string, a lone surrogate is no character, and
   * bytes that are not UTF-8 are replaced: all read as U+FFFD */
  text = edited_report("\"name\": \"fe-q1 ellr double\"", "\"name\": \"x\\u0000y\\ud800z\xFF\"");
  path = write_text("replaced.json", text);
  if (!bench_report_read(path, &r, message, sizeof message)) {
    fail_msg("%s", message);
  }
  assert_string_equal(r.results[0].name, "x\xEF\xBF\xBDy\xEF\xBF\xBDz\xEF\xBF\xBD");
  bench_report_free(&r);
  free(path);
  free(text);

  /* a string longer than its field is cut at a character boundary */
  char long_name[400] = "\"name\": \"";
  for (int i = 0; i < 60; i++) {
    strcat(long_name, "\xC3\xA9");
  }
  strcat(long_name, "\"");
  text = edited_report("\"name\": \"fe-q1 ellr double\"", long_name);
  path = write_text("long.json", text);
  if (!bench_report_read(path, &r, message, sizeof message)) {
    fail_msg("%s", message);
  }
  assert_int_equal(strlen(r.results[0].name), 94); /* 47 characters of two bytes in 95 */
  bench_report_free(&r);
  free(path);
  free(text);
}

static void refuses_malformed_json(void **state) {
  (void)state;
  /* line 3 column 5: a member where ',' or '}' should be */
  expect_refused("A.json", "{\n  \"program\": \"clmg bench\"\n    \"schema_version\": 1}\n",
                 "A.json:3:5: expected ',' or '}'", NULL);
  char *text = edited_report("\"copy_gb_s\": 76.2,", "\"copy_gb_s\": 76.2,,");
  expect_refused("comma.json", text, "comma.json:9:21: expected a key", NULL);
  free(text);
  /* cJSON reads "76." as 76: a sign without digits is malformed */
  text = edited_report("\"copy_gb_s\": 76.2", "\"copy_gb_s\": - 76.2");
  expect_refused("number.json", text, "number.json:9:17: expected a digit, found ' '", NULL);
  free(text);
  text = edited_report("\"trials\": 3}", "\"trials\": 3]");
  expect_refused("bracket.json", text, "bracket.json:8:", "expected ',' or '}', found ']'", NULL);
  free(text);
  expect_refused("unterminated.json", "{\"program\": \"clmg bench",
                 "unterminated.json:1:13:", "not closed", NULL);
  expect_refused("escape.json", "{\"program\": \"clmg\\q\"}",
                 "escape.json:1:19:", "expected an escape", NULL);
  expect_refused("control.json", "{\"program\": \"a\tb\"}",
                 "control.json:1:15:", "control character", NULL);
  expect_refused("literal.json", "{\"program\": nul}",
                 "literal.json:1:13:", "expected a JSON value", NULL);
  expect_refused("range.json", "{\"schema_version\": 1e999}",
                 "range.json: schema_version is a number out of range", NULL);
  expect_refused("trailing.json", "{} {}", "trailing.json:1:4:", "expected the end of the file",
                 NULL);
  expect_refused("glued.json", "{}x", "glued.json:1:3: expected the end of the file, found 'x'",
                 NULL);
  expect_refused("stray.json", "{\"program\": \"clmg bench\"}\n\x01",
                 "stray.json:2:1:", "control character 0x01 outside a string", NULL);
  expect_refused("empty.json", "", "empty.json", "empty", NULL);
  expect_refused("blank.json", " \n", "blank.json:2:1:", "expected a JSON value",
                 "the end of the file", NULL);

  /* nesting: 64 levels are read, 65 are refused */
  char deep[400];
  strcpy(deep, "{\"x\": ");
  for (int i = 0; i < 63; i++) {
    strcat(deep, "[");
  }
  for (int i = 0; i < 63; i++) {
    strcat(deep, "]");
  }
  strcat(deep, "}");
  expect_refused("deep64.json", deep, "not a clmg bench report", NULL);
  strcpy(deep, "{\"x\": ");
  for (int i = 0; i < 64; i++) {
    strcat(deep, "[");
  }
  for (int i = 0; i < 64; i++) {
    strcat(deep, "]");
  }
  strcat(deep, "}");
  expect_refused("deep65.json", deep, "deep65.json:1:70:", "nested deeper than 64", NULL);
}

static void refuses_missing_and_ill_typed_keys(void **state) {
  (void)state;
  char *text = edited_report("\"results\": [", "\"other_results\": [");
  expect_refused("A.json", text, "A.json: \"results\" is missing", NULL);
  free(text);
  text = edited_report("\"time_s\": 0.5,", "\"time_s\": \"fast\",");
  expect_refused("A.json", text, "A.json: results[1].time_s is a string, expected a number or null",
                 NULL);
  free(text);
  text = edited_report("\"stage\": \"gmg\",", "");
  expect_refused("A.json", text, "A.json: results[1]: \"stage\" is missing", NULL);
  free(text);
  text = edited_report("\"verified\": true, \"check\"", "\"verified\": 1, \"check\"");
  expect_refused("A.json", text, "results[0].verified is a number, expected true or false", NULL);
  free(text);
  text = edited_report("\"name\": \"NVIDIA H200\"", "\"name\": [\"NVIDIA H200\"]");
  expect_refused("A.json", text, "device.name is an array, expected a string", NULL);
  free(text);
  text = edited_report("\"results\": [", "\"results\": 3, \"x\": [");
  expect_refused("A.json", text, "results is a number, expected an array", NULL);
  free(text);
  text = edited_report("[\"gmg: residual 1e-3 above 1e-8\"]", "[\"gmg\", 4]");
  expect_refused("A.json", text, "failures[1] is a number, expected a string", NULL);
  free(text);
  text = edited_report("\"verified\": false,\n  \"failures\"", "\"failures\"");
  expect_refused("A.json", text, "A.json: \"verified\" is missing", NULL);
  free(text);
}

static void refuses_other_json(void **state) {
  (void)state;
  char *text = edited_report("\"program\": \"clmg bench\"", "\"program\": \"other \\u001b[31m\"");
  expect_refused("other.json", text, "other.json: not a clmg bench report", "\"other  [31m\"",
                 NULL);
  free(text);
  text = edited_report("\"program\": \"clmg bench\",", "");
  expect_refused("noprogram.json", text, "not a clmg bench report", NULL);
  free(text);
  text = edited_report("\"schema_version\": 1", "\"schema_version\": 2");
  expect_refused("v2.json", text, "v2.json: schema_version 2 is not supported", NULL);
  free(text);
  /* no other check speaks first: a JSON file of another program with a
   * "results" of its own kind */
  expect_refused("package.json", "{\"name\": \"x\", \"results\": \"none\", \"version\": 1}",
                 "package.json: not a clmg bench report", NULL);
  expect_refused("array.json", "[1, 2, 3]", "not a clmg bench report", "an array", NULL);
  expect_refused("object.json", "{}", "not a clmg bench report", NULL);

  bench_report r;
  char message[256] = "";
  char *path = scratch_path("does-not-exist.json");
  assert_false(bench_report_read(path, &r, message, sizeof message));
  assert_non_null(strstr(message, "cannot open"));
  assert_non_null(strstr(message, "does-not-exist.json"));
  free(path);
  assert_false(bench_report_read(scratch, &r, message, sizeof message)); /* a directory */
  assert_non_null(strstr(message, scratch));
}

static void refuses_files_over_64_mib(void **state) {
  (void)state;
  char *path = scratch_path("huge.json");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs("{\"program\": \"clmg bench\", \"x\": \"", f);
  assert_int_equal(fseek(f, (64L << 20) + 16, SEEK_SET), 0); /* sparse: quick to make */
  fputs("\"}", f);
  assert_int_equal(fclose(f), 0);
  bench_report r;
  char message[256] = "";
  assert_false(bench_report_read(path, &r, message, sizeof message));
  assert_non_null(strstr(message, "larger than 64 MiB"));
  free(path);
}

/* cJSON's tree takes 80 to 110 bytes a value: an 8 MB file of more than
 * 4 million values is refused, and its tree never built beyond that. */
static void refuses_too_many_values(void **state) {
  (void)state;
  char *path = scratch_path("many.json");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs("{\"program\": \"clmg bench\", \"x\": [0", f);
  for (int i = 0; i < 4000000; i++) {
    fputs(",0", f);
  }
  fputs("]}", f);
  assert_int_equal(fclose(f), 0);
  bench_report r;
  char message[256] = "";
  assert_false(bench_report_read(path, &r, message, sizeof message));
  assert_non_null(strstr(message, "many.json:1:"));
  assert_non_null(strstr(message, "more than 4000000 JSON values"));
  free(path);
}

/* ---- rendering ---- */

/* Two reports: B lacks spmv "only-a", has "new" that A lacks, failed "cg",
 * and is twice as fast on "shared". */
static const char report_a[] =
    "{\"program\": \"clmg bench\", \"schema_version\": 1, \"clmg_version\": \"0.1.0\",\n"
    " \"device\": {\"name\": \"Device <b>&\", \"opencl_version\": \"OpenCL 3.0\", "
    "\"driver_version\": \"1.0\"},\n"
    " \"settings\": {\"size\": \"small\"}, \"copy_gb_s\": 100,\n"
    " \"results\": [\n"
    "  {\"stage\": \"spmv\", \"name\": \"shared\", \"time_s\": 0.002, \"ratio_to_copy\": 0.8, "
    "\"verified\": true},\n"
    "  {\"stage\": \"spmv\", \"name\": \"only-a\", \"time_s\": 3e-6, \"ratio_to_copy\": 0.5, "
    "\"verified\": true},\n"
    "  {\"stage\": \"gmg\", \"name\": \"cg\", \"time_s\": 0.25, \"ratio_to_copy\": 0.4, "
    "\"iterations\": 17, \"setup_s\": 0.1, \"solve_s\": 0.25, \"verified\": true},\n"
    "  {\"stage\": \"spmv\", \"name\": \"<b>&\", \"time_s\": 1e-3, \"ratio_to_copy\": 0.3, "
    "\"verified\": true}\n"
    " ],\n"
    " \"figure_of_merit\": {\"bandwidth_ratio_geomean\": 0.5, \"hpcg_like_gflops\": 10},\n"
    " \"verified\": true, \"failures\": []}\n";

static const char report_b[] =
    "{\"program\": \"clmg bench\", \"schema_version\": 1, \"clmg_version\": \"0.1.0\",\n"
    " \"device\": {\"name\": \"Other GPU\", \"opencl_version\": \"OpenCL 2.1\"},\n"
    " \"copy_gb_s\": 200,\n"
    " \"results\": [\n"
    "  {\"stage\": \"gmg\", \"name\": \"cg\", \"time_s\": 0.1, \"ratio_to_copy\": 0.9, "
    "\"iterations\": 17, \"verified\": false, \"check\": \"residual too large\"},\n"
    "  {\"stage\": \"spmv\", \"name\": \"shared\", \"time_s\": 0.001, \"ratio_to_copy\": 0.7, "
    "\"verified\": true},\n"
    "  {\"stage\": \"blas1\", \"name\": \"new\", \"time_s\": 2.5e-5, \"ratio_to_copy\": 0.95, "
    "\"verified\": true},\n"
    "  {\"stage\": \"spmv\", \"name\": \"<b>&\", \"time_s\": 2e-3, \"ratio_to_copy\": 0.2, "
    "\"verified\": true}\n"
    " ],\n"
    " \"figure_of_merit\": {\"bandwidth_ratio_geomean\": 0.6, \"hpcg_like_gflops\": 25},\n"
    " \"verified\": false, \"failures\": [\"gmg: residual too large <script>\"]}\n";

static void read_pair(bench_report reports[2]) {
  const char *texts[2] = {report_a, report_b};
  const char *names[2] = {"A.json", "B.json"};
  for (int k = 0; k < 2; k++) {
    char *path = write_text(names[k], texts[k]);
    char message[256] = "";
    if (!bench_report_read(path, &reports[k], message, sizeof message)) {
      fail_msg("%s", message);
    }
    free(path);
  }
}

/* The line of text that contains pattern (static). */
static const char *line_with(const char *text, const char *pattern) {
  static char line[1024];
  const char *hit = strstr(text, pattern);
  if (hit == NULL) {
    fail_msg("\"%s\" not found in:\n%s", pattern, text);
  }
  const char *start = hit, *end = hit;
  while (start > text && start[-1] != '\n') {
    start--;
  }
  while (*end != '\0' && *end != '\n') {
    end++;
  }
  snprintf(line, sizeof line, "%.*s", (int)(end - start), start);
  return line;
}

static void compares_two_reports(void **state) {
  (void)state;
  bench_report reports[2];
  read_pair(reports);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  assert_non_null(out);
  bench_compare_print(out, reports, 2);
  assert_int_equal(fclose(out), 0);
  fputs(text, stdout); /* for the log: what a user sees */
  fflush(stdout);

  /* the header */
  assert_contains(text, "A  Device <b>& (OpenCL 3.0)");
  assert_contains(text, "B  Other GPU (OpenCL 2.1)");
  assert_contains(text, "copy 100 GB/s");
  assert_contains(text, "bandwidth 0.50");
  assert_contains(text, "HPCG-like 10.0 GFLOP/s");
  assert_contains(text, "verified: yes");
  assert_contains(text, "FAILED (1 failure)");
  assert_contains(text, "gmg: residual too large <script>");

  /* the union, grouped by stage in order of first appearance */
  const char *spmv = strstr(text, "\nspmv\n"), *gmg = strstr(text, "\ngmg\n");
  const char *blas1 = strstr(text, "\nblas1\n");
  assert_non_null(spmv);
  assert_non_null(gmg);
  assert_non_null(blas1);
  assert_true(spmv < gmg && gmg < blas1);
  const char *shared = strstr(text, "  shared "), *only_a = strstr(text, "  only-a ");
  assert_non_null(shared);
  assert_non_null(only_a);
  assert_true(spmv < shared && shared < only_a && only_a < gmg);

  const char *line = line_with(text, "  shared ");
  assert_contains(line, "2.00 ms");
  assert_contains(line, "1.00 ms");
  assert_contains(line, "0.80");
  assert_contains(line, "0.70");
  assert_contains(line, "2.00x"); /* time A / time B */
  line = line_with(text, "  only-a ");
  assert_contains(line, "3.00 \xC2\xB5s");
  assert_contains(line, "\xE2\x80\x94"); /* not in B */
  line = line_with(text, "  new ");
  assert_contains(line, "\xE2\x80\x94"); /* not in A */
  assert_contains(line, "25.0 \xC2\xB5s");
  assert_null(strstr(line, "x ")); /* no speed-up without A */
  line = line_with(text, "  cg ");
  assert_contains(line, "250 ms");
  assert_contains(line, "17"); /* A's iterations */
  assert_contains(line, "FAILED");
  assert_null(strstr(line, "0.90")); /* B's figures are not shown */
  assert_null(strstr(line, "100 ms"));
  line = line_with(text, "  <b>& ");
  assert_contains(line, "0.50x");

  /* the figures of merit: B failed, so only the copy bandwidth compares */
  line = line_with(text, "  bandwidth (geomean ratio)");
  assert_contains(line, "0.50");
  assert_contains(line, "FAILED");
  line = line_with(text, "  copy GB/s");
  assert_contains(line, "2.00x");

  /* every line fits a 160-column terminal */
  for (const char *s = text; *s != '\0';) {
    const char *end = strchr(s, '\n');
    assert_non_null(end);
    size_t width = 0;
    for (const char *c = s; c < end; c++) {
      width += ((unsigned char)*c & 0xC0) != 0x80;
    }
    assert_true(width <= 160);
    s = end + 1;
  }
  free(text);
  bench_report_free(&reports[0]);
  bench_report_free(&reports[1]);
}

/* Reports of two --size values: a result's speed-up is shown only where
 * both solved a problem of one size; otherwise "(size)". */
static void compare_marks_different_sizes(void **state) {
  (void)state;
  static const char *const texts[2] = {
      "{\"program\": \"clmg bench\", \"schema_version\": 1, \"device\": {\"name\": \"A\"},\n"
      " \"results\": [{\"stage\": \"spmv\", \"name\": \"same\", \"rows\": 100, \"time_s\": 2e-3,\n"
      "  \"verified\": true}, {\"stage\": \"spmv\", \"name\": \"grown\", \"rows\": 100,\n"
      "  \"time_s\": 3e-3, \"verified\": true}], \"verified\": true}\n",
      "{\"program\": \"clmg bench\", \"schema_version\": 1, \"device\": {\"name\": \"B\"},\n"
      " \"results\": [{\"stage\": \"spmv\", \"name\": \"same\", \"rows\": 100, \"time_s\": 1e-3,\n"
      "  \"verified\": true}, {\"stage\": \"spmv\", \"name\": \"grown\", \"rows\": 800,\n"
      "  \"time_s\": 1e-3, \"verified\": true}], \"verified\": true}\n"};
  bench_report reports[2];
  for (int k = 0; k < 2; k++) {
    char *path = write_text(k ? "sizes_b.json" : "sizes_a.json", texts[k]);
    char message[256] = "";
    if (!bench_report_read(path, &reports[k], message, sizeof message))
      fail_msg("%s", message);
    free(path);
  }
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  assert_non_null(out);
  bench_compare_print(out, reports, 2);
  assert_int_equal(fclose(out), 0);
  const char *line = line_with(text, "  same ");
  assert_contains(line, "2.00x");
  line = line_with(text, "  grown ");
  assert_contains(line, "(size)");
  assert_null(strstr(line, "3.00x"));
  free(text);
  bench_report_free(&reports[0]);
  bench_report_free(&reports[1]);
}

static void compares_many_reports_in_blocks(void **state) {
  (void)state;
  enum { COUNT = 6 };
  bench_report reports[COUNT];
  char *path = write_text("one.json", report_a);
  char message[256] = "";
  for (int k = 0; k < COUNT; k++) {
    if (!bench_report_read(path, &reports[k], message, sizeof message)) {
      fail_msg("%s", message);
    }
  }
  free(path);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  assert_non_null(out);
  bench_compare_print(out, reports, COUNT);
  assert_int_equal(fclose(out), 0);
  assert_contains(text, "reports A, B, C\n");
  assert_contains(text, "reports A, F\n");
  for (const char *s = text; *s != '\0';) {
    const char *end = strchr(s, '\n');
    assert_non_null(end);
    size_t width = 0;
    for (const char *c = s; c < end; c++) {
      width += ((unsigned char)*c & 0xC0) != 0x80;
    }
    assert_true(width <= 160);
    s = end + 1;
  }
  free(text);
  for (int k = 0; k < COUNT; k++) {
    bench_report_free(&reports[k]);
  }
}

/* A terminal is never sent the control characters a file may hold. */
static void compare_neutralises_control_characters(void **state) {
  (void)state;
  char *text =
      edited_report("\"name\": \"fe-q1 ellr double\"", "\"name\": \"evil\\u001b]0;x\\u0007\"");
  char *path = write_text("evil.json", text);
  free(text);
  bench_report r;
  char message[256] = "";
  if (!bench_report_read(path, &r, message, sizeof message)) {
    fail_msg("%s", message);
  }
  free(path);
  char *output = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&output, &size);
  assert_non_null(out);
  bench_compare_print(out, &r, 1);
  assert_int_equal(fclose(out), 0);
  assert_null(strchr(output, '\x1b'));
  assert_null(strchr(output, '\x07'));
  assert_contains(output, "evil ]0;x");
  free(output);
  bench_report_free(&r);
}

static void writes_html(void **state) {
  (void)state;
  bench_report reports[2];
  read_pair(reports);
  char *path = scratch_path("report.html");
  free(write_text("report.html", "an earlier page\n")); /* replaced once complete */
  char message[256] = "";
  if (!bench_html_write(path, reports, 2, message, sizeof message)) {
    fail_msg("%s", message);
  }
  char *html = test_read_file(path, NULL);
  assert_contains(html, "<!DOCTYPE html>");
  assert_contains(html, "<title>clmg bench</title>");
  assert_contains(html, "<svg");
  assert_contains(html, "</html>\n");
  assert_null(strstr(html, "<script")); /* no scripts: the failure text is escaped */
  assert_contains(html, "gmg: residual too large &lt;script&gt;");
  assert_null(strstr(html, "src=")); /* nothing to fetch: it renders offline */
  assert_null(strstr(html, "href="));
  /* names and labels escaped */
  assert_contains(html, "&lt;b&gt;&amp;");
  assert_null(strstr(html, "<b>&"));
  assert_contains(html, "Device &lt;b&gt;&amp; (OpenCL 3.0)");
  /* one section per stage */
  assert_contains(html, "<h2>spmv</h2>");
  assert_contains(html, "<h2>gmg</h2>");
  assert_contains(html, "<h2>blas1</h2>");
  /* bars: spmv 3 results x 2 reports less the missing one (5), gmg A only
   * (B failed), blas1 B only, figures of merit A only (B failed): 9 */
  assert_int_equal(occurrences(html, "class=\"bar\""), 5 + 1 + 1 + 2);
  assert_contains(html, "class=\"failed\" x=");              /* FAILED in the chart ... */
  assert_contains(html, "<td class=\"failed\">FAILED</td>"); /* ... and in the table */
  assert_true(occurrences(html, ">FAILED<") >= 4); /* gmg chart and table, two merit charts */
  assert_contains(html, "residual too large");
  /* B's failed cg is no bar: the only gmg bar is A's */
  const char *gmg = strstr(html, "<h2>gmg</h2>");
  const char *blas1 = strstr(html, "<h2>blas1</h2>");
  assert_non_null(gmg);
  assert_non_null(blas1);
  size_t gmg_bars = 0;
  for (const char *s = strstr(gmg, "class=\"bar\""); s != NULL && s < blas1;
       s = strstr(s + 1, "class=\"bar\"")) {
    gmg_bars++;
  }
  assert_int_equal(gmg_bars, 1);
  free(html);

  /* a directory that does not exist: refused with a message, nothing written */
  char *bad = scratch_path("no-such-dir/report.html");
  assert_false(bench_html_write(bad, reports, 2, message, sizeof message));
  assert_non_null(strstr(message, "no-such-dir"));
  free(bad);
  free(path);
  bench_report_free(&reports[0]);
  bench_report_free(&reports[1]);
}

int main(void) {
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reads_a_valid_report),
      cmocka_unit_test(decodes_escapes),
      cmocka_unit_test(refuses_malformed_json),
      cmocka_unit_test(refuses_missing_and_ill_typed_keys),
      cmocka_unit_test(refuses_other_json),
      cmocka_unit_test(refuses_files_over_64_mib),
      cmocka_unit_test(refuses_too_many_values),
      cmocka_unit_test(compares_two_reports),
      cmocka_unit_test(compares_many_reports_in_blocks),
      cmocka_unit_test(compare_marks_different_sizes),
      cmocka_unit_test(compare_neutralises_control_characters),
      cmocka_unit_test(writes_html),
  };
  return cmocka_run_group_tests_name("bench_report", tests, setup, teardown);
}
