/* Fuzz target: the option parsers of the clmg command (apps/), on any bytes
 * split into arguments at newlines and NUL bytes: a file of one argument per
 * line is a command line.
 *
 * 1. The number and name parsers on each of the first arguments, against
 *    their contracts: a value accepted lies in the range asked for, a name
 *    accepted reads back as itself; a refusal leaves the value alone and
 *    says why.
 * 2. The arguments as the words after "clmg": the global options, then the
 *    subcommand's own parser (clmg info, solve, poisson, homg). Parsing
 *    touches no device; an accepted command line holds values in the
 *    ranges that --help documents, a refused one is a usage error (exit
 *    status 2) with a message, and with --json one JSON error object.
 * Messages go to memory (cli_set_streams) and getopt_long's own to nowhere
 * (opterr = 0), so a run prints nothing. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"
#include "subcommands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGUMENTS = 512, DIRECT_ARGUMENTS = 4, STREAM_SIZE = 1 << 16 };

/* The input as arguments (argv[0] is the program). */
static struct {
  char *text; /* the input with every separator replaced by NUL */
  size_t size;
  int argc;
  char *argv[MAX_ARGUMENTS + 2];     /* what the parsers get (and permute) */
  char *original[MAX_ARGUMENTS + 2]; /* as split, for the checks */
  unsigned char has_byte[256];       /* which bytes the input holds */
} input;

static struct {
  FILE *out, *err;
  char out_text[STREAM_SIZE + 1], err_text[STREAM_SIZE + 1];
} streams;

static void fail_with_input(const char *what, const char *detail) {
  fprintf(stderr, "command line:");
  for (int i = 1; i < input.argc; i++)
    fprintf(stderr, " [%s]", input.original[i]);
  fprintf(stderr, "\n");
  fuzz_fail(what, detail);
}

/* Starts a parse with empty streams and the messages' state forgotten. */
static void begin(void) {
  rewind(streams.out);
  rewind(streams.err);
  cli_reset();
  cli_set_streams(streams.out, streams.err);
}

/* What was written since begin(), NUL-terminated. */
static const char *written(FILE *stream, char *text) {
  fflush(stream);
  long length = ftell(stream);
  if (length < 0 || length > STREAM_SIZE)
    length = STREAM_SIZE;
  text[length] = '\0';
  return text;
}

static int in_input(const char *p) {
  return p >= input.text && p < input.text + input.size + 1;
}

/* A string that an option takes from the command line: NULL, or inside an
 * argument (optarg may start after "--mesh=" or "-o"). */
static void check_from_input(const char *p, const char *what) {
  if (p != NULL && !in_input(p))
    fail_with_input("a string option does not point into the command line", what);
}

static int is_argument(const char *text) {
  for (int i = 1; i < input.argc; i++)
    if (strcmp(input.original[i], text) == 0)
      return 1;
  return 0;
}

/* A usage error's message: non-empty, NUL-terminated, and every control
 * byte in it comes from the command line (messages quote arguments). When
 * it is getopt_long's case, the argument it quotes is one on the command
 * line, not the program's name. */
static void check_usage_message(const char *message) {
  const char *end = memchr(message, '\0', 1024); /* the notes' buffer size */
  if (!end || end == message)
    fail_with_input("a usage error without a message", "");
  for (const unsigned char *p = (const unsigned char *)message; *p; ++p)
    if ((*p < 0x20 || *p == 0x7f) && !input.has_byte[*p])
      fail_with_input("a usage message holds a control byte not from the input", message);
  static const char getopt_case[] = "unknown option, or an option without its argument: '";
  size_t prefix = sizeof getopt_case - 1;
  size_t length = (size_t)(end - message);
  if (strncmp(message, getopt_case, prefix) != 0 || length < prefix + 1 ||
      message[length - 1] != '\'' || length >= 1023)
    return; /* another message, or one cut at the end of the buffer */
  char quoted[1024];
  memcpy(quoted, message + prefix, length - prefix - 1);
  quoted[length - prefix - 1] = '\0';
  /* a short option: "-x", also "--" for the option character '-' (as in
   * "-V--device"), or "-\\xNN" for a byte that is not printable */
  size_t quoted_length = strlen(quoted);
  if (quoted[0] == '-' && (quoted_length == 2 || (quoted_length == 5 && quoted[1] == '\\'))) {
    if (quoted_length == 2 && !input.has_byte[(unsigned char)quoted[1]])
      fail_with_input("the message names a short option not on the command line", message);
  } else if (!is_argument(quoted)) {
    fail_with_input("the message quotes something that is not an argument", message);
  }
}

/* At most one JSON object, with no raw control byte but the line ends. */
static void check_json_stream(const char *out) {
  for (const unsigned char *p = (const unsigned char *)out; *p; ++p)
    if (*p < 0x20 && *p != '\n')
      fail_with_input("a control byte in JSON output", out);
  size_t length = strlen(out);
  const char *end = strstr(out, "\n}\n");
  if (length > 0 && (out[0] != '{' || end == NULL || end + 3 != out + length))
    fail_with_input("the JSON output is not one object", out);
}

/* "--json" before any "--": the documented switch to JSON errors. */
static int json_asked(void) {
  for (int i = 1; i < input.argc && strcmp(input.original[i], "--") != 0; i++)
    if (strcmp(input.original[i], "--json") == 0)
      return 1;
  return 0;
}

/* A refused command line. */
static void check_refusal(int exit_code, const char *what) {
  if (exit_code != EXIT_USAGE)
    fail_with_input("a parser returned neither 0 nor the usage exit status", what);
  check_usage_message(cli_usage_message());
  const char *out = written(streams.out, streams.out_text);
  check_json_stream(out);
  if (json_asked() && out[0] == '\0')
    fail_with_input("a usage error with --json printed no JSON object", what);
  if (out[0] != '\0' && (!strstr(out, "\"status\": \"usage_error\"") ||
                         !strstr(out, "\"exit_code\": 2") || !strstr(out, "\"message\": \"")))
    fail_with_input("the JSON error object lacks its keys", out);
  if (!strstr(written(streams.err, streams.err_text), "--help' for more information"))
    fail_with_input("a usage error does not point to --help", what);
}

/* An accepted command line's common options. With --json (or what
 * getopt_long takes for it), errors found later are JSON objects too: a
 * probe error must print one. */
static void check_common(const cli_options *options) {
  check_from_input(options->device, "--device");
  if (options->json) {
    cli_usage(input.argv[0], "a probe");
    const char *out = written(streams.out, streams.out_text);
    if (out[0] != '{')
      fail_with_input("--json is on but errors are not JSON objects", out);
    check_json_stream(out);
  }
}

static void check_range(double value, double min, double max, const char *what) {
  if (!(value >= min && value <= max)) {
    char detail[160];
    snprintf(detail, sizeof detail, "%s = %.17g, outside [%g, %g]", what, value, min, max);
    fail_with_input("an accepted option is outside its range", detail);
  }
}

/* ---- 1. the number and name parsers, directly ---- */

static void direct_refusal(const char *what) {
  check_usage_message(cli_usage_message());
  cli_reset(); /* the pending note must not reach the next parse */
  (void)what;
}

/* Every byte after leading blanks and one sign is a digit. */
static void check_whole_number_text(const char *text, const char *what) {
  const char *p = text;
  while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
    p++;
  if (*p == '+' || *p == '-')
    p++;
  if (*p == '\0')
    fail_with_input("an empty whole number was accepted", what);
  for (; *p; p++)
    if (*p < '0' || *p > '9')
      fail_with_input("a whole number with other characters was accepted", what);
}

static void fuzz_number_parsers(const char *text) {
  static const double double_ranges[][2] = {{0, 1}, {1e-3, 2}, {-1e300, 1e300}};
  for (size_t r = 0; r < sizeof double_ranges / sizeof double_ranges[0]; r++) {
    double value = -7.25; /* a sentinel outside no range: refusals must keep it */
    begin();
    if (cli_parse_double("t", "--d", text, double_ranges[r][0], double_ranges[r][1], &value)) {
      check_range(value, double_ranges[r][0], double_ranges[r][1], "cli_parse_double");
    } else {
      if (memcmp(&value, &(double){-7.25}, sizeof value) != 0)
        fail_with_input("cli_parse_double changed the value of a refusal", text);
      direct_refusal("cli_parse_double");
    }
  }
  static const long long_ranges[][2] = {{1, INT_MAX}, {3, 32769}, {LONG_MIN, LONG_MAX}};
  for (size_t r = 0; r < sizeof long_ranges / sizeof long_ranges[0]; r++) {
    long value = 12345;
    begin();
    if (cli_parse_long("t", "--l", text, long_ranges[r][0], long_ranges[r][1], &value)) {
      check_range((double)value, (double)long_ranges[r][0], (double)long_ranges[r][1],
                  "cli_parse_long");
      if (value < long_ranges[r][0] || value > long_ranges[r][1])
        fail_with_input("cli_parse_long accepted a value outside its range", text);
      check_whole_number_text(text, "cli_parse_long");
    } else {
      if (value != 12345)
        fail_with_input("cli_parse_long changed the value of a refusal", text);
      direct_refusal("cli_parse_long");
    }
  }
  static const int int_ranges[][2] = {{0, 1000}, {INT_MIN, INT_MAX}};
  for (size_t r = 0; r < sizeof int_ranges / sizeof int_ranges[0]; r++) {
    int value = 12345;
    begin();
    if (cli_parse_int("t", "--i", text, int_ranges[r][0], int_ranges[r][1], &value)) {
      if (value < int_ranges[r][0] || value > int_ranges[r][1])
        fail_with_input("cli_parse_int accepted a value outside its range", text);
      check_whole_number_text(text, "cli_parse_int");
    } else {
      if (value != 12345)
        fail_with_input("cli_parse_int changed the value of a refusal", text);
      direct_refusal("cli_parse_int");
    }
  }
  static const unsigned long long count_max[] = {0, SIZE_MAX >> 20, ULLONG_MAX};
  for (size_t r = 0; r < sizeof count_max / sizeof count_max[0]; r++) {
    unsigned long long value = 12345;
    begin();
    if (cli_parse_count("t", "--c", text, count_max[r], &value)) {
      if (value > count_max[r])
        fail_with_input("cli_parse_count accepted a value above its maximum", text);
      for (const char *p = text; *p; p++) /* no sign, no blank: digits only */
        if (*p < '0' || *p > '9')
          fail_with_input("cli_parse_count accepted more than digits", text);
    } else {
      if (value != 12345)
        fail_with_input("cli_parse_count changed the value of a refusal", text);
      direct_refusal("cli_parse_count");
    }
  }
}

/* A name accepted reads back as the same value from the library's name for
 * it, which is not "unknown". */
#define CHECK_NAME_PARSER(type, parse, name, text)                                                 \
  do {                                                                                             \
    type value_, again_;                                                                           \
    if (parse(text, &value_)) {                                                                    \
      const char *name_ = name(value_);                                                            \
      if (!name_ || strcmp(name_, "unknown") == 0 || !parse(name_, &again_) || again_ != value_)   \
        fail_with_input(#parse " accepted a name that does not read back", text);                  \
    }                                                                                              \
  } while (0)

static void fuzz_name_parsers(const char *text) {
  CHECK_NAME_PARSER(clmg_numbering, clmg_numbering_parse, clmg_numbering_name, text);
  CHECK_NAME_PARSER(clmg_cycle_type, clmg_cycle_type_parse, clmg_cycle_type_name, text);
  CHECK_NAME_PARSER(clmg_smoother_type, clmg_smoother_type_parse, clmg_smoother_type_name, text);
  CHECK_NAME_PARSER(clmg_homg_method, clmg_homg_method_parse, clmg_homg_method_name, text);
  CHECK_NAME_PARSER(clmg_krylov_method, clmg_krylov_method_parse, clmg_krylov_method_name, text);
  CHECK_NAME_PARSER(clmg_matrix_format, clmg_matrix_format_parse, clmg_matrix_format_name, text);
}

/* ---- 2. whole command lines ---- */

static int valid_format(clmg_matrix_format format) {
  clmg_matrix_format again;
  return clmg_matrix_format_parse(clmg_matrix_format_name(format), &again) && again == format;
}

static int valid_precision(clmg_dtype precision) {
  return precision == CLMG_DOUBLE || precision == CLMG_FLOAT;
}

static void check_info(const info_options *o) {
  check_range((double)o->bandwidth_mib, 0, (double)(SIZE_MAX >> 20), "--bandwidth-mib");
}

/* Whether the options layer takes key=value (key NULL: value is "k=v ..."),
 * with only built-in names. */
static int library_takes(const char *key, const char *value) {
  clmg_options *scratch = NULL;
  clmg_error error = {{0}};
  clmg_status status = clmg_options_create(&scratch, &error);
  if (status == CLMG_SUCCESS)
    status = key ? clmg_options_set(scratch, key, value, &error)
                 : clmg_options_parse(scratch, value, &error);
  clmg_option_info info;
  for (size_t i = 0; status == CLMG_SUCCESS && clmg_options_key_info(i, &info); i++)
    if (clmg_options_is_set(scratch, info.key) &&
        !clmg_options_builtin(info.key, clmg_options_get(scratch, info.key)))
      status = CLMG_ERROR_INVALID_ARGUMENT;
  clmg_options_destroy(scratch);
  return status == CLMG_SUCCESS;
}

/* The solver settings clmg solve and clmg helmholtz share. */
static void check_solve_settings(const solve_options *o, const char *command) {
  (void)command;
  /* every recorded option is one the library takes, with built-in names */
  if (o->settings.count < 0 || o->settings.count > CLI_MAX_SETTINGS)
    fail_with_input("solve: settings out of range", "");
  for (int k = 0; k < o->settings.count; k++) {
    const cli_setting *setting = &o->settings.items[k];
    check_from_input(setting->value, "a solver option");
    if (!library_takes(setting->key, setting->value))
      fail_with_input("solve: a recorded option the library refuses", setting->value);
  }
  check_from_input(o->settings.options_path, "--options");
  /* the settings in order make the solver's database (as cli_make_options
   * does after the --options file), with tol and maxit in the library's
   * ranges (tol 0: the precision's default) */
  clmg_options *db = NULL;
  clmg_status status = clmg_options_create(&db, NULL);
  for (int k = 0; status == CLMG_SUCCESS && k < o->settings.count; k++) {
    const cli_setting *setting = &o->settings.items[k];
    status = setting->key ? clmg_options_set(db, setting->key, setting->value, NULL)
                          : clmg_options_parse(db, setting->value, NULL);
  }
  if (status != CLMG_SUCCESS)
    fail_with_input("solve: the recorded settings do not make an options database", "");
  if (clmg_options_is_set(db, "tol") && strcmp(clmg_options_get(db, "tol"), "auto") != 0) {
    double tol = strtod(clmg_options_get(db, "tol"), NULL);
    if (!(tol >= 0 && tol < 1))
      fail_with_input("solve: tol outside [0, 1)", clmg_options_get(db, "tol"));
  }
  check_range(strtod(clmg_options_get(db, "maxit"), NULL), 1, INT_MAX, "--maxit");
  clmg_options_destroy(db);
}

static void check_solve(const solve_options *o) {
  check_solve_settings(o, "solve");
  if (!o->matrix_path)
    fail_with_input("solve: accepted without A.mtx", "");
  check_from_input(o->matrix_path, "A.mtx");
  check_from_input(o->rhs_path, "b.mtx");
  check_from_input(o->output_path, "--output");
}

static void check_helmholtz(const helmholtz_options *o) {
  check_solve_settings(&o->solver, "helmholtz");
  if (strcmp(o->mesh_spec, "regular:1") != 0) /* the default */
    check_from_input(o->mesh_spec, "--mesh");
  if (o->mesh != MESH_GMSH)
    check_range(o->level, 0, 6, "--mesh LEVEL");
  if (!(o->lambda >= 0) || !isfinite(o->lambda))
    fail_with_input("helmholtz: lambda not finite and >= 0", "");
  if (o->num_materials > HELMHOLTZ_MAX_MATERIALS ||
      o->num_dirichlet_tags > HELMHOLTZ_MAX_DIRICHLET_TAGS)
    fail_with_input("helmholtz: too many materials or tags", "");
  for (size_t k = 0; k < o->num_materials; ++k)
    if (o->material_ids[k] < 1 || !(o->sigma[k] >= 0) || !isfinite(o->sigma[k]))
      fail_with_input("helmholtz: a material id < 1 or a sigma not finite and >= 0", "");
  for (size_t k = 0; k < o->num_dirichlet_tags; ++k)
    if (o->dirichlet_tags[k] < 1)
      fail_with_input("helmholtz: a Dirichlet tag < 1", "");
  if (o->rhs != CLMG_RHS_SOURCE_ONE && o->rhs != CLMG_RHS_ONES)
    fail_with_input("helmholtz: not a right-hand side", "");
  check_from_input(o->write_matrix_path, "--write-matrix");
  check_from_input(o->write_rhs_path, "--write-rhs");
  check_from_input(o->vtk_path, "--vtk");
  check_from_input(o->solver.output_path, "--output");
}

static void check_poisson(const poisson_options *o) {
  if (strcmp(o->mesh_name, "circle") != 0)
    check_from_input(o->mesh_name, "--mesh");
  mesh_kind expected = strcmp(o->mesh_name, "circle") == 0  ? MESH_CIRCLE
                       : strcmp(o->mesh_name, "blood") == 0 ? MESH_BLOOD
                                                            : MESH_FILE;
  if (o->mesh != expected)
    fail_with_input("poisson: the mesh kind does not match its name", o->mesh_name);
  if (o->degree != 1 && o->degree != 2)
    fail_with_input("poisson: --element is neither q1 nor q2", "");
  check_range(o->level, 1, POISSON_MAX_LEVEL, "--level");
  if (strcmp(clmg_numbering_name(o->numbering), "unknown") == 0)
    fail_with_input("poisson: not a numbering", "");
  clmg_smoother_type smoother;
  if (!clmg_smoother_type_parse(clmg_smoother_type_name(o->multigrid.smoother), &smoother) ||
      smoother != o->multigrid.smoother)
    fail_with_input("poisson: not a smoother", "");
  clmg_cycle_type cycle;
  if (!clmg_cycle_type_parse(clmg_cycle_type_name(o->multigrid.cycle), &cycle) ||
      cycle != o->multigrid.cycle)
    fail_with_input("poisson: not a cycle", "");
  check_range(o->multigrid.pre_smoothing, 0, 1000, "--pre");
  check_range(o->multigrid.post_smoothing, 0, 1000, "--post");
  if (o->mesh == MESH_BLOOD && !o->smoothing_given &&
      (o->multigrid.pre_smoothing != 64 || o->multigrid.post_smoothing != 64))
    fail_with_input("poisson: blood without --pre/--post does not smooth 64+64", "");
  if (o->omega_given)
    check_range(o->multigrid.omega, 1e-3, 2.0, "--omega");
  if (o->multigrid.coarse != CLMG_COARSE_AUTO && o->multigrid.coarse != CLMG_COARSE_DIRECT &&
      o->multigrid.coarse != CLMG_COARSE_PCG)
    fail_with_input("poisson: not a coarse solver", "");
  if (o->multigrid.coarse_max_rows != 0)
    check_range((double)o->multigrid.coarse_max_rows, 1, 16384, "--coarse-rows");
  clmg_dtype precision = o->multigrid.matrix.precision;
  if (o->tolerance != clmg_default_tolerance(o->mixed ? CLMG_DOUBLE : precision))
    check_range(o->tolerance, 1e-15, 0.5, "--tol");
  check_range(o->max_iterations, 1, 1000000, "--maxit");
  if (!valid_format(o->multigrid.matrix.format) || !valid_precision(precision))
    fail_with_input("poisson: not a format or precision", "");
  if (o->mixed && (!o->use_cg || precision != CLMG_FLOAT))
    fail_with_input("poisson: --precision mixed is not float multigrid in CG", "");
  if (o->vtk_encoding != CLMG_VTU_BINARY && o->vtk_encoding != CLMG_VTU_ASCII)
    fail_with_input("poisson: not a VTK format", "");
  check_from_input(o->vtk_path, "--vtk");
  check_range((double)o->seed, 0, INT_MAX, "--seed");
}

static void check_flow(const flow_options *o) {
  if ((unsigned)o->flow > CLMG_FLOW_GMSH || !o->case_spec)
    fail_with_input("flow: not a case", "");
  check_range(o->level, 0, 10, "--level");
  check_range(o->re, 1e-6, 1e9, "--re");
  check_range(o->dt, 1e-12, 1e6, "--dt");
  check_range(o->steps, 1, 100000000, "--steps");
  check_range(o->solver.nonlinear_tolerance, 1e-300, 1.0, "--tol");
  check_range(o->solver.max_nonlinear, 1, 100000, "--maxit");
  int store_inverses;
  if (!clmg_vanka_name_parse(clmg_vanka_name(o->solver.vanka.store_inverses), &store_inverses))
    fail_with_input("flow: not a Vanka smoother", "");
  if (!(o->solver.vanka.omega > 0 && o->solver.vanka.omega < 2))
    fail_with_input("flow: a Vanka omega outside (0, 2)", "");
  check_range(o->solver.max_linear, 1, 1000000000, "maxit");
  check_range(o->solver.restart, 1, 1000, "restart");
  if (o->flow == CLMG_FLOW_GMSH && (o->num_walls == 0 || o->inflow_tag < 1))
    fail_with_input("flow: a .msh case without --walls and --inflow", "");
  if (o->profile_path && o->flow != CLMG_FLOW_CAVITY)
    fail_with_input("flow: --profile accepted for another case", o->case_spec);
  for (size_t k = 0; k < o->num_walls; ++k)
    check_range(o->walls[k], 1, INT32_MAX, "--walls");
}

static void check_bench(const bench_options *o) {
  check_range(o->trials, 1, 100, "--trials");
  if (o->min_time != 0)
    check_range(o->min_time, 1e-300, 60, "--min-time");
  const char *sizes[] = {"small", "medium", "large", "auto"};
  int known = 0;
  for (size_t k = 0; k < 4; k++)
    known |= strcmp(o->size, sizes[k]) == 0;
  if (!known)
    fail_with_input("bench: not a size", o->size);
  if (o->compare != (o->file_count > 0))
    fail_with_input("bench: reports without --compare, or --compare without reports", "");
  if (!o->compare && o->html_path && !o->json_path)
    fail_with_input("bench: --html with a run but no --json FILE", "");
  check_from_input(o->json_path, "--json");
  check_from_input(o->html_path, "--html");
  check_from_input(o->stage, "--stage");
}

static void check_homg(const homg_options *o) {
  check_range((double)o->n, 3, 32769, "--n");
  const clmg_homg_options *h = &o->solver;
  clmg_homg_method method;
  if (!clmg_homg_method_parse(clmg_homg_method_name(h->method), &method) || method != h->method)
    fail_with_input("homg: not a method", "");
  if (!valid_precision(h->precision))
    fail_with_input("homg: not a precision", "");
  check_range(h->max_iterations_per_level, 1, 1 << 20, "--maxi");
  check_range(h->max_cycles, 1, 100000, "--maxit");
  check_range(h->relative_tolerance, 0, 1, "--tol");
  check_range(h->error_tolerance, 0, 1e300, "--error-tol");
  if (h->stagnation_factor != 0)
    check_range(h->stagnation_factor, nextafter(1.0, 2.0), 1e6, "--stagnation");
  check_range(h->omega, 1e-6, 1, "--omega");
  check_range(h->pre_smoothing, 0, 1000, "--smoothing PRE");
  check_range(h->post_smoothing, 0, 1000, "--smoothing POST");
  if (h->pre_smoothing + h->post_smoothing < 1)
    fail_with_input("homg: --smoothing 0,0 accepted", "");
  if (strcmp(o->snapshot_format, "vtk") != 0 && strcmp(o->snapshot_format, "png") != 0)
    fail_with_input("homg: not a snapshot format", o->snapshot_format);
  if ((o->steps || o->snapshot_prefix) && h->method != CLMG_HOMG_MFMG)
    fail_with_input("homg: --steps or --snapshots with another method than homg", "");
  check_from_input(o->vtk_path, "--vtk");
  check_from_input(o->png_path, "--png");
  check_from_input(o->snapshot_prefix, "--snapshots");
}

static void fuzz_command_line(void) {
  begin();
  cli_invocation invocation;
  int exit_code = cli_parse_main(input.argc, input.argv, &invocation);
  if (exit_code != 0) {
    check_refusal(exit_code, "the global options");
    return;
  }
  if (invocation.command == NULL) {
    check_common(&invocation.options); /* --help, "help" or -V: no more to parse */
    return;
  }
  if (strcmp(invocation.argv[0], invocation.name) != 0 ||
      strncmp(invocation.name, "clmg ", 5) != 0 ||
      strcmp(invocation.name + 5, invocation.command) != 0)
    fail_with_input("the subcommand's argv[0] is not \"clmg NAME\"", invocation.name);

  /* The subcommand's parser, in the state cli_parse_main left, as cli_main
   * calls it. */
  const char *name = invocation.command;
  int argc = invocation.argc;
  char **argv = invocation.argv;
  const cli_options *defaults = &invocation.options;
  const cli_options *common = NULL;
  union {
    info_options info;
    solve_options solve;
    poisson_options poisson;
    homg_options homg;
    helmholtz_options helmholtz;
    flow_options flow;
    bench_options bench;
  } o;
  if (strcmp(name, "info") == 0) {
    exit_code = info_parse_options(argc, argv, defaults, &o.info);
    common = &o.info.common;
    if (!exit_code && !common->help)
      check_info(&o.info);
  } else if (strcmp(name, "solve") == 0) {
    exit_code = solve_parse_options(argc, argv, defaults, &o.solve);
    common = &o.solve.common;
    if (!exit_code && !common->help)
      check_solve(&o.solve);
  } else if (strcmp(name, "poisson") == 0) {
    exit_code = poisson_parse_options(argc, argv, defaults, &o.poisson);
    common = &o.poisson.common;
    if (!exit_code && !common->help)
      check_poisson(&o.poisson);
  } else if (strcmp(name, "helmholtz") == 0) {
    exit_code = helmholtz_parse_options(argc, argv, defaults, &o.helmholtz);
    common = &o.helmholtz.solver.common;
    if (!exit_code && !common->help)
      check_helmholtz(&o.helmholtz);
  } else if (strcmp(name, "flow") == 0) {
    exit_code = flow_parse_options(argc, argv, defaults, &o.flow);
    common = &o.flow.common;
    if (!exit_code && !common->help)
      check_flow(&o.flow);
  } else if (strcmp(name, "homg") == 0) {
    exit_code = homg_parse_options(argc, argv, defaults, &o.homg);
    common = &o.homg.common;
    if (!exit_code && !common->help)
      check_homg(&o.homg);
  } else if (strcmp(name, "bench") == 0) {
    exit_code = bench_parse_options(argc, argv, defaults, &o.bench);
    common = &o.bench.common;
    if (!exit_code && !common->help)
      check_bench(&o.bench);
  } else {
    fail_with_input("cli_parse_main found a subcommand this target does not know", name);
  }
  if (exit_code != 0) {
    check_refusal(exit_code, name);
    return;
  }
  if (written(streams.out, streams.out_text)[0] != '\0' ||
      written(streams.err, streams.err_text)[0] != '\0')
    fail_with_input("an accepted command line printed something", streams.err_text);
  check_common(common);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!streams.out) {
    streams.out = fmemopen(streams.out_text, STREAM_SIZE, "w");
    streams.err = fmemopen(streams.err_text, STREAM_SIZE, "w");
    if (!streams.out || !streams.err)
      fuzz_fail("fmemopen failed", "");
    opterr = 0; /* getopt_long's messages would flood the fuzzer's output */
  }
  /* The arguments, each its own NUL-terminated piece of one copy. */
  input.text = malloc(size + 1);
  if (!input.text)
    return 0;
  memcpy(input.text, data, size);
  input.text[size] = '\0';
  input.size = size;
  memset(input.has_byte, 0, sizeof input.has_byte);
  for (size_t i = 0; i < size; i++)
    input.has_byte[data[i]] = 1;
  /* Separators end arguments: "a\nb\n" is two, "a\n\nb" three (one empty). */
  static char program[] = "clmg";
  input.argv[0] = program;
  input.argc = 1;
  char *start = input.text;
  for (size_t i = 0; i < size && input.argc <= MAX_ARGUMENTS; i++) {
    if (input.text[i] == '\n' || input.text[i] == '\0') {
      input.text[i] = '\0';
      input.argv[input.argc++] = start;
      start = input.text + i + 1;
    }
  }
  if (start < input.text + size && input.argc <= MAX_ARGUMENTS)
    input.argv[input.argc++] = start;
  input.argv[input.argc] = NULL;
  memcpy(input.original, input.argv, sizeof input.original);

  for (int i = 1; i < input.argc && i <= DIRECT_ARGUMENTS; i++) {
    fuzz_number_parsers(input.argv[i]);
    fuzz_name_parsers(input.argv[i]);
  }
  fuzz_command_line();
  cli_set_streams(NULL, NULL);
  free(input.text);
  return 0;
}
