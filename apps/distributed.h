/* clmg under mpirun (apps/distributed.c, built with MPI only). */
#ifndef CLMG_DISTRIBUTED_H
#define CLMG_DISTRIBUTED_H

/* cli_main, but when mpirun started this process: MPI is initialised,
 * solve and poisson run distributed over the ranks (rank 0 prints), the
 * other commands refuse several ranks, and MPI is finalised. */
int distributed_cli_main(int argc, char **argv);

#endif
