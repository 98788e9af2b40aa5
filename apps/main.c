/* main() of the clmg command; everything else is in clmg.c and the files of
 * the subcommands, which the option parsers' fuzz target links too. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "subcommands.h"
#ifdef CLMG_CLI_MPI
#include "distributed.h"
#endif

/* SIGINT, SIGTERM, SIGHUP: the temporaries of the files being written go,
 * then the signal ends the program as it would have (its exit status says
 * so): an interrupted --vtk or --csv leaves the earlier file and no
 * PATH.PID.XXXXXX.tmp. */
static void interrupted(int signal_number) {
  clmg_output_file_remove_temporaries();
  struct sigaction default_action;
  sigemptyset(&default_action.sa_mask);
  default_action.sa_flags = 0;
  default_action.sa_handler = SIG_DFL;
  sigaction(signal_number, &default_action, NULL);
  raise(signal_number);
}

static void remove_temporaries_on_signals(void) {
  const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t k = 0; k < sizeof signals / sizeof signals[0]; ++k) {
    struct sigaction action, previous;
    /* a signal the shell ignores (nohup, a background job) stays ignored */
    if (sigaction(signals[k], NULL, &previous) == 0 && previous.sa_handler == SIG_IGN)
      continue;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    action.sa_handler = interrupted;
    sigaction(signals[k], &action, NULL);
  }
}

int main(int argc, char **argv) {
  remove_temporaries_on_signals();
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
