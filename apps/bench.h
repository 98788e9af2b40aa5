/* clmg bench (bench.c): what its stages share. A stage measures one kernel
 * family on the run's device, checks every result it times against a host
 * reference or a recomputed residual, and adds one bench_entry per
 * measurement; a failed check is recorded (verified 0, with the reason)
 * and makes the whole run fail, never a figure. */
#ifndef CLMG_BENCH_H
#define CLMG_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "clmg.h"
#include "perf_common.h"

/* Problem sizes: quick (CI, a laptop CPU: the whole run in about a
 * minute), then small, medium, large by the device's memory. */
typedef enum bench_size { BENCH_QUICK, BENCH_SMALL, BENCH_MEDIUM, BENCH_LARGE } bench_size;

/* One measurement. NAN for what does not apply (flops of a copy, setup of
 * a kernel); iterations < 0 for a kernel. */
typedef struct bench_entry {
  char stage[32];    /* copy, blas1, spmv, gmg, amg, assembly, vanka, flow, homg */
  char name[96];     /* unique within the stage */
  char problem[128]; /* what was solved or multiplied, with its size */
  double rows, nonzeros;
  double time_s;  /* per operation: a kernel call, a step; a solver's iteration or cycle */
  double flops;   /* per operation; NAN: not counted */
  double bytes;   /* per operation: the fewest bytes it must move (its floor) */
  double setup_s; /* solvers */
  double solve_s;
  int iterations;
  int verified;
  int in_mean; /* counts in the figure of merit's geometric mean */
  char check[192];
  /* a solver's options string (clmg/solver.h) that built it, which `clmg
   * solve --set` or `clmg poisson --set` takes back; "" for a kernel */
  char options[192];
} bench_entry;

typedef struct bench_run {
  clmg_context *context;
  const clmg_device_info *device;
  bench_size size;
  perf_timing timing;
  double copy_gb_s;
  int fault;        /* test hook (--inject-fault): corrupt one input after its reference */
  const char *only; /* NULL, or the one stage to run (--stage) */
  bench_entry *entries;
  size_t count, capacity;
  int failures;
} bench_run;

/* Adds a copy of *entry (failing the run when it is unverified); returns 0
 * when out of memory. */
int bench_add(bench_run *run, const bench_entry *entry);

/* A fresh entry of `stage` and `name` (printf format): NAN numbers,
 * iterations -1, verified 0, in_mean 1. */
bench_entry bench_entry_start(const char *stage, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The progress line of a stage on stderr ("bench: spmv ...") */
void bench_progress(const bench_run *run, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Records a failure of the library (status with the context's message) in
 * an unverified entry named after what failed. */
void bench_fail(bench_run *run, const char *stage, const char *what, clmg_status status);
/* The same for a failure a host function reported through error (a
 * generator, a host assembly); an empty message means the context's. */
void bench_fail_error(bench_run *run, const char *stage, const char *what, clmg_status status,
                      const clmg_error *error);

/* The larger of a check's running maximum error and one more error, NaN
 * sticking (fmax would drop it): a result that holds NaN fails its check. */
double bench_worse(double worst, double error);

/* max |got - want| over max |want| (max |got - want| when want is all
 * zero; NaN sticking), with max |want| in *scale: the checks' measure. */
double bench_relative_difference(const double *got, const double *want, size_t n, double *scale);

/* n uniform numbers in [-1, 1) from seed: the same on every host, so the
 * checks and the work are the same on every device. */
void bench_random_fill(double *v, size_t n, uint64_t seed);

/* The stages in bench_stages.c (Navier-Stokes and HOMG). */
void bench_stage_flow(bench_run *run);
void bench_stage_homg(bench_run *run);

#endif
