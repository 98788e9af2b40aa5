/* What the clmg command (clmg.c) and its subcommands (solve.c) share: exit
 * codes, the common options and small getopt_long helpers. */
#ifndef CLMG_CLI_H
#define CLMG_CLI_H

#include <getopt.h>
#include <stddef.h>

enum { EXIT_LIBRARY_FAILURE = 1, EXIT_USAGE = 2 };

/* Options that every subcommand accepts, and that may also be given before
 * the subcommand name (where they become the subcommand's defaults). */
typedef struct cli_options {
  const char *device; /* NULL: the library's default (CLMG_DEVICE, else first GPU, ...) */
  int json;           /* print one JSON object on stdout instead of text */
  int help;
} cli_options;

/* Long-only options get values outside the range of characters; a file's own
 * start at OPTION_FIRST_OWN. */
enum { OPTION_JSON = 256, OPTION_FIRST_OWN };

#define COMMON_SHORT_OPTIONS "d:h"
#define COMMON_LONG_OPTIONS                                                                        \
  {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, OPTION_JSON}, {            \
    "help", no_argument, NULL, 'h'                                                                 \
  }
#define COMMON_OPTIONS_HELP                                                                        \
  "  -d, --device STR        device: nvidia, pocl, gpu, cpu, P:D, or part of a name\n"             \
  "      --json              print a JSON object on stdout instead of text\n"                      \
  "  -h, --help              show this help\n"

/* Applies a common option returned by getopt_long; returns 0 when `option` is
 * not one of them. */
int cli_apply_common_option(int option, cli_options *options);

/* Points to --help (getopt_long has already printed what was wrong); returns
 * EXIT_USAGE. */
int cli_usage_error(const char *command);

/* Parse a number within [min, max]; print why and return 0 when it is not
 * one (option names the option in the message, e.g. "--tol"). */
int cli_parse_double(const char *command, const char *option, const char *text, double min,
                     double max, double *value);
int cli_parse_long(const char *command, const char *option, const char *text, long min, long max,
                   long *value);
int cli_parse_int(const char *command, const char *option, const char *text, int min, int max,
                  int *value);

/* The subcommands (argv[0] is "clmg NAME"). */
int run_solve(int argc, char **argv, const cli_options *defaults);   /* solve.c */
int run_poisson(int argc, char **argv, const cli_options *defaults); /* poisson.c */
int run_homg(int argc, char **argv, const cli_options *defaults);    /* homg.c */

#endif
