#include "cli.h"

#include <stdio.h>

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
