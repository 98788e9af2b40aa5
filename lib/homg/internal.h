/* Internal interface of the structured-grid layer: the kernels of
 * cl/homg.cl and their launches, shared by grid.c (the public grid
 * functions), operators.c (the grid as clmg_operator) and homg.c (the
 * solvers). Not installed. */
#ifndef CLMG_HOMG_INTERNAL_H
#define CLMG_HOMG_INTERNAL_H

#include "clmg/homg.h"
#include "solve/internal.h"

/* Must match cl/homg.cl. */
#define GRID_JACOBI_ZERO_INPUT 1u
#define GRID_JACOBI_ACCUMULATE 2u

typedef enum grid_kernel_id {
  GRID_K_JACOBI,
  GRID_K_RESIDUAL_SUMS,
  GRID_K_ERROR_SUMS,
  GRID_K_RESTRICT,
  GRID_K_RESTRICT_RESIDUAL,
  GRID_K_INTERPOLATE,
  GRID_K_HOMG_STEP,
  GRID_K_STENCIL_APPLY,
  GRID_K_STENCIL_DEFECT,
  GRID_K_STENCIL_WEIGHTED_STEP,
  GRID_K_STENCIL_DIAGONAL,
  GRID_K_HOMG_VARIATION_RELAX,
  GRID_K_HOMG_VARIATION_ADD,
  GRID_K_HOMG_TILE_STEP, /* the GPU kernels (k->gpu) of HOMG's steps */
  GRID_K_HOMG_TILE_VARIATION,
  GRID_K_HOMG_COMPACT,
  GRID_K_HOMG_STREAM_STEP,
  GRID_K_HOMG_STREAM_VARIATION,
  GRID_KERNEL_COUNT
} grid_kernel_id;

/* The kernels of one precision, looked up once (by a solver at creation, so
 * a step costs no table search). gpu: the GPU kernels and launches (2-D
 * ranges; cl/homg.cl without CLMG_CPU; HOMG's steps in homg_tile_*, the
 * CPU ones in homg_step and homg_variation_*): where the device table says
 * homg_tile_kernels (GPUs that take work-groups of 256), and on any device
 * when the environment sets CLMG_HOMG_GPU_KERNELS=1, so that the tests
 * check them on pocl too. */
/* Whether grid_kernels_load picks the GPU kernels on this context (the
 * table's homg_tile_kernels, or CLMG_HOMG_GPU_KERNELS=1). */
int grid_uses_gpu_kernels(const clmg_context *context);

typedef struct grid_kernels {
  clmg_context *context;
  clmg_dtype type;
  int gpu;
  cl_kernel kernel[GRID_KERNEL_COUNT];
} grid_kernels;

clmg_status grid_kernels_load(clmg_context *context, clmg_dtype type, grid_kernels *kernels);

/* Part of a device buffer: an n x n grid starting at element `offset`. */
typedef struct grid_ref {
  cl_mem buffer;
  size_t offset;
} grid_ref;

grid_ref grid_ref_of(const clmg_vector *vector);

/* The kernels of cl/homg.cl; sizes are points per side. */
clmg_status grid_jacobi(const grid_kernels *k, size_t n, double h, double omega, unsigned flags,
                        grid_ref u, grid_ref b, grid_ref out);
/* sums: [0] ||r||^2 [1] ||b||^2 over interior points [2] sum |u - exact|
 * [3] sum |exact| (the last two 0 without exact). r and exact may be NULL. */
clmg_status grid_residual_sums(const grid_kernels *k, size_t n, grid_ref u, grid_ref b,
                               const grid_ref *r, const grid_ref *exact, double sums[4]);
/* *sum = sum |u + correction - exact| (correction may be NULL). */
clmg_status grid_error_sum(const grid_kernels *k, size_t n, grid_ref u, const grid_ref *correction,
                           grid_ref exact, double *sum);
/* out = alpha R in + beta out (beta == 0: out is not read). */
clmg_status grid_restrict(const grid_kernels *k, size_t nc, size_t n_in, unsigned flips,
                          double alpha, double beta, grid_ref in, grid_ref out);
clmg_status grid_restrict_residual(const grid_kernels *k, size_t nc, grid_ref u, grid_ref b,
                                   grid_ref out);
/* fine = alpha P coarse + beta fine (beta == 0: fine is not read). */
clmg_status grid_interpolate(const grid_kernels *k, size_t nc, double alpha, double beta,
                             grid_ref coarse, grid_ref fine);

/* The five-point operator with identity boundary rows (cl/homg.cl,
 * stencil_*), for lib/homg/operators.c. */
clmg_status grid_stencil_apply(const grid_kernels *k, size_t n, double alpha, grid_ref x,
                               double beta, grid_ref y);
clmg_status grid_stencil_defect(const grid_kernels *k, size_t n, grid_ref b, grid_ref x,
                                grid_ref r);
clmg_status grid_stencil_weighted_step(const grid_kernels *k, size_t n, grid_ref w, grid_ref b,
                                       grid_ref x, grid_ref x_new);
clmg_status grid_stencil_diagonal(const grid_kernels *k, size_t n, grid_ref d);

/* Must match cl/homg.cl: the codes of a step's axis table. */
#define HOMG_AXIS_FRAME 3u
#define HOMG_AXIS_BOUNDARY 4u
#define HOMG_AXIS_MINUS 8u
#define HOMG_AXIS_PLUS 16u

/* One fused HOMG step (cl/homg.cl: homg_step). sources: the level's frames,
 * nv^2 values each; axis and weight: the level's tables, n entries each. */
typedef struct homg_step_args {
  size_t n, spacing, nv;
  int zero_input;
  double hl2, omega;
  grid_ref in, out, sources, axis, weight;
} homg_step_args;

/* CPUs (!k->gpu): */
clmg_status grid_homg_step(const grid_kernels *k, const homg_step_args *a);
/* One phase of the step with variations (cl/homg.cl, homg_variation_step):
 * phase 0 writes relax(in) - in at the level's points into a->out, phase 1
 * adds a->in (those variations) there and their interpolation elsewhere
 * to a->out; zero_input: in (phase 0) or out (phase 1) is 0. */
clmg_status grid_homg_variation_step(const grid_kernels *k, int phase, const homg_step_args *a);
/* GPUs (k->gpu), spacing 2 (lib/homg/homg.c): the value step (homg_step's),
 * or with variation the variation step in one pass out of place, a->out =
 * a->in + P (relax(a->in) - a->in) (cl/homg.cl, homg_tile_*); a->in must not
 * be a->out. */
clmg_status grid_homg_tile_step(const grid_kernels *k, int variation, const homg_step_args *a);
/* GPUs (k->gpu), spacing >= 4: the value step (variation 0) or the
 * variation step (1, out of place) in two passes through d, compact arrays
 * of what the level's points give the grid (grid_homg_compact_count^2
 * values each, two for the value step; cl/homg.cl, homg_compact and
 * homg_stream_*); a->in must not be a->out. */
size_t grid_homg_compact_count(size_t spacing, size_t n);
clmg_status grid_homg_stream_step(const grid_kernels *k, int variation, const homg_step_args *a,
                                  grid_ref d);

/* Largest n: n^2 must stay below 2^31 for the kernels' 32-bit indices. */
#define GRID_MAX_N ((size_t)32769)

#endif
