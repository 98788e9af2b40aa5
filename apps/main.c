/* main() of the clmg command; everything else is in clmg.c and the files of
 * the subcommands, which the option parsers' fuzz target links too. */
#include <stdio.h>
#include <stdlib.h>

#include "subcommands.h"
#ifdef CLMG_CLI_MPI
#include "distributed.h"
#endif

int main(int argc, char **argv) {
#ifdef CLMG_CLI_MPI
  int code = distributed_cli_main(argc, argv);
#else
  int code = cli_main(argc, argv);
#endif
  /* A full disk or a closed pipe must not look like success. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fputs("clmg: error writing to standard output\n", stderr);
    return code == EXIT_SUCCESS ? EXIT_LIBRARY_FAILURE : code;
  }
  return code;
}
