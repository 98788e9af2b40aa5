/* main() of the clmg command; everything else is in clmg.c and the files of
 * the subcommands, which the option parsers' fuzz target links too. */
#include <stdio.h>
#include <stdlib.h>

#include "subcommands.h"

int main(int argc, char **argv) {
  int code = cli_main(argc, argv);
  /* A full disk or a closed pipe must not look like success. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fputs("clmg: error writing to standard output\n", stderr);
    return code == EXIT_SUCCESS ? EXIT_LIBRARY_FAILURE : code;
  }
  return code;
}
