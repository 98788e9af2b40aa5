#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cli_apply_common_option(int option, cli_options *options) {
  switch (option) {
  case 'd':
    options->device = optarg;
    return 1;
  case OPTION_JSON:
    options->json = 1;
    return 1;
  case 'h':
    options->help = 1;
    return 1;
  default:
    return 0;
  }
}

int cli_usage_error(const char *command) {
  fprintf(stderr, "Try '%s --help' for more information.\n", command);
  return EXIT_USAGE;
}

int cli_parse_double(const char *command, const char *option, const char *text, double min,
                     double max, double *value) {
  char *end = NULL;
  errno = 0;
  double parsed = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !(parsed >= min) || !(parsed <= max)) {
    fprintf(stderr, "%s: %s needs a number from %g to %g, not '%s'\n", command, option, min, max,
            text);
    return 0;
  }
  *value = parsed;
  return 1;
}

int cli_parse_long(const char *command, const char *option, const char *text, long min, long max,
                   long *value) {
  char *end = NULL;
  errno = 0;
  long parsed = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || parsed < min || parsed > max) {
    fprintf(stderr, "%s: %s needs a whole number from %ld to %ld, not '%s'\n", command, option, min,
            max, text);
    return 0;
  }
  *value = parsed;
  return 1;
}

int cli_parse_int(const char *command, const char *option, const char *text, int min, int max,
                  int *value) {
  long parsed;
  if (!cli_parse_long(command, option, text, min, max, &parsed))
    return 0;
  *value = (int)parsed;
  return 1;
}
