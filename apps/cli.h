/* What the clmg command (clmg.c) and its subcommands (solve.c) share: exit
 * codes, the common options and small getopt_long helpers. */
#ifndef CLMG_CLI_H
#define CLMG_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clmg.h"

enum { EXIT_LIBRARY_FAILURE = 1, EXIT_USAGE = 2 };

/* Options that every subcommand accepts, and that may also be given before
 * the subcommand name (where they become the subcommand's defaults). */
typedef struct cli_options {
  const char *device;    /* NULL: the library's default (CLMG_DEVICE, else first GPU, ...) */
  uint64_t memory_limit; /* --memory-limit in bytes; 0: the library's (CLMG_MEMORY_LIMIT) */
  int json;              /* print one JSON object on stdout instead of text */
  int help;
} cli_options;

/* Long-only options get values outside the range of characters; a file's own
 * start at OPTION_FIRST_OWN. */
enum { OPTION_JSON = 256, OPTION_MEMORY_LIMIT, OPTION_FIRST_OWN };

#define COMMON_SHORT_OPTIONS "d:h"
#define COMMON_LONG_OPTIONS                                                                        \
  {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, OPTION_JSON},              \
      {"memory-limit", required_argument, NULL, OPTION_MEMORY_LIMIT}, {                            \
    "help", no_argument, NULL, 'h'                                                                 \
  }
#define COMMON_OPTIONS_HELP                                                                        \
  "  -d, --device STR        device: nvidia, pocl, gpu, cpu, P:D, or part of a name\n"             \
  "      --memory-limit SIZE use at most SIZE of device memory: bytes, or a number\n"              \
  "                          with K, M, G or T (powers of 1024: 512M, 1.5G); past\n"               \
  "                          it the run fails with the sizes (default:\n"                          \
  "                          $CLMG_MEMORY_LIMIT, else the device's memory)\n"                      \
  "      --json              print one JSON object on stdout instead of text (on a\n"              \
  "                          failure too: status and message)\n"                                   \
  "  -h, --help              show this help\n"

/* ---- the options layer's settings (clmg/solver.h) from a command line ---- */

/* A flag as a key ("--smoother S" is mg.smoother=S), or a --set text. */
typedef struct cli_setting {
  const char *key; /* NULL: value is a --set text of key=value words */
  const char *value;
} cli_setting;
enum { CLI_MAX_SETTINGS = 64 };
/* What a command line says of the solver's options, in order; the
 * --options file comes first when they are made. */
typedef struct cli_settings {
  const char *options_path; /* --options FILE.json, or NULL */
  int count;
  cli_setting items[CLI_MAX_SETTINGS];
} cli_settings;
/* Checks key=value (or a --set text when key is NULL) as the library does,
 * with the built-in names only (a command registers none), and keeps it:
 * 1, or -1 after a usage note naming flag. */
int cli_record_setting(const char *command, const char *flag, const char *key, const char *value,
                       cli_settings *settings);
/* The solver's options: the --options file, then the settings in order.
 * Returns 0 after reporting a failure. */
int cli_make_options(const char *command, const cli_settings *settings, clmg_options **db);
/* On a device without fp64: precision=float where precision was not given
 * (double and mixed given are refused). Returns 0 after reporting. */
int cli_choose_precision(const char *command, clmg_options *db, clmg_context *context, int quiet);

/* Applies a common option returned by getopt_long: 1 when `option` is one
 * of them, 0 when it is not, -1 when its value is bad (the reason is on
 * stderr; answer with cli_usage_error). */
int cli_apply_common_option(const char *command, int option, cli_options *options);

/* ---- errors: on stderr, and with --json as one object on stdout ----
 *
 * With --json anywhere on the command line (clmg.c sets it before parsing,
 * so even a usage error found before --json is read gives JSON), every
 * failure prints exactly one object on stdout:
 *   {"status": "usage_error" or clmg_status_string(), "message": ...,
 *    "command": "clmg NAME", "exit_code": 1 or 2}
 * and a command that prints its own report calls cli_json_done() so that no
 * second object follows. */
void cli_set_json_errors(int enabled);
void cli_set_arguments(char **argv); /* the argv getopt_long walks, for its errors */
void cli_json_done(void);

/* Where the messages of this file go: out (JSON error objects) and err
 * (everything else); NULL: stdout and stderr, the default. The option
 * parsers' fuzz target keeps them in memory to check them. */
void cli_set_streams(FILE *out, FILE *err);
/* Forgets what an earlier command line set (--json, an object already
 * printed, a pending note), for a program that parses many. */
void cli_reset(void);
/* The message of the last usage error (or of a pending cli_usage_note):
 * what the JSON error object says, for the fuzz target to check. */
const char *cli_usage_message(void);

/* Prints "COMMAND: MESSAGE" on stderr and keeps MESSAGE for the JSON error of
 * the next cli_usage_error. */
void cli_usage_note(const char *command, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Points to --help (what was wrong is already on stderr: from
 * cli_usage_note or getopt_long); with --json also prints the error object.
 * Returns EXIT_USAGE. */
int cli_usage_error(const char *command);

/* cli_usage_note, then cli_usage_error. */
int cli_usage(const char *command, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A failure that is not bad usage (unreadable input, a library error):
 * prints "COMMAND: MESSAGE" on stderr and, with --json, the error object with
 * clmg_status_string(status). Returns EXIT_LIBRARY_FAILURE. */
int cli_failure(const char *command, clmg_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Only the JSON error object (with --json), for a failure whose words are
 * already on stderr. */
void cli_json_error(const char *command, clmg_status status, const char *message);

/* A failed library call: "clmg: WHAT: STATUS: CONTEXT MESSAGE" on stderr
 * (apputil_report) and the JSON error object. Returns EXIT_LIBRARY_FAILURE. */
int cli_report(const char *command, const clmg_context *context, clmg_status status,
               const char *what);

/* ---- feedback on stderr (never stdout, which may hold JSON) ---- */

/* Opens a context on the device of the common options (NULL: the default)
 * with their memory limit. Unless quiet, the first kernel compilation of the
 * run prints "clmg: compiling OpenCL kernels for DEVICE (first run; cached
 * in DIR)..." on stderr; programs from the cache print nothing. On failure
 * reports (cli_report) and returns NULL. */
clmg_context *cli_open_context(const char *command, const cli_options *options, int quiet);

/* Whether a command computes in double on this device. `asked` is the
 * --precision the user gave that needs double ("double", "mixed"), NULL
 * when double is only the default. Returns 1 when the device has fp64, 0
 * when it has none and double was only the default (the command computes
 * in float; a note on stderr unless quiet), and -1 after reporting (exit
 * status EXIT_LIBRARY_FAILURE) that the asked precision needs fp64, with the
 * hint --precision float. */
int cli_double_precision(const char *command, clmg_context *context, const char *asked, int quiet);

/* Setup progress: cli_progress_begin starts the clock; cli_progress prints
 * "clmg: STEP (T s)" on stderr once the setup has taken about a second or
 * more, so short setups stay silent. Nothing when quiet. */
void cli_progress_begin(int quiet);
void cli_progress(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Parse a number within [min, max]; print why and return 0 when it is not
 * one (option names the option in the message, e.g. "--tol"). */
int cli_parse_double(const char *command, const char *option, const char *text, double min,
                     double max, double *value);
int cli_parse_long(const char *command, const char *option, const char *text, long min, long max,
                   long *value);
int cli_parse_int(const char *command, const char *option, const char *text, int min, int max,
                  int *value);
/* A whole number from 0 to max, without a sign. */
int cli_parse_count(const char *command, const char *option, const char *text,
                    unsigned long long max, unsigned long long *value);

/* The subcommands (argv[0] is "clmg NAME"). */
/* "1,3,7": up to max boundary tags >= 1 into tags (*count of them; at least
 * one); 0 after a usage note naming `option`. */
int cli_parse_tags(const char *command, const char *option, const char *text, int32_t *tags,
                   size_t max, size_t *count);

/* 1 when both paths name one existing file (the same device and inode: a
 * link or another spelling included), for an output that would overwrite
 * an input. */
int cli_same_file(const char *a, const char *b);

/* Every tag an option named must be the tag of a boundary face of the mesh
 * (a tag that matches none would silently do nothing: no wall, no inflow,
 * no Dirichlet condition). Prints "OPTION TAG: no boundary face of MESH has
 * that tag (its tags: ...)" and returns 0 otherwise (exit status 2). */
int cli_check_tags(const char *command, const char *option, const char *mesh_name,
                   const clmg_mesh *mesh, const int32_t *tags, size_t count);

/* Under mpirun with several ranks (main.c, distributed.c): the commands
 * that run distributed, and a usage error for the others. */
typedef int (*cli_runner)(int argc, char **argv, const cli_options *defaults);
typedef struct cli_distributed {
  int ranks;
  cli_runner solve, poisson;
} cli_distributed;
void cli_set_distributed(const cli_distributed *runners);

int run_solve(int argc, char **argv, const cli_options *defaults);     /* solve.c */
int run_poisson(int argc, char **argv, const cli_options *defaults);   /* poisson.c */
int run_homg(int argc, char **argv, const cli_options *defaults);      /* homg.c */
int run_helmholtz(int argc, char **argv, const cli_options *defaults); /* helmholtz.c */
int run_flow(int argc, char **argv, const cli_options *defaults);      /* flow.c */
int run_bench(int argc, char **argv, const cli_options *defaults);     /* bench.c */

#endif
