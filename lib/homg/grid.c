/* Structured-grid kernels (cl/homg.cl): launches shared with the solvers,
 * and the public clmg_grid_* functions with their argument checks. */
#include "homg/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const grid_kernel_names[GRID_KERNEL_COUNT] = {
    "grid_jacobi",        "grid_residual_sums",    "grid_error_sums",     "restrict_full_weighting",
    "restrict_residual",  "interpolate",           "homg_step",           "stencil_apply",
    "stencil_defect",     "stencil_weighted_step", "stencil_diagonal",    "homg_variation_relax",
    "homg_variation_add", "homg_tile_step",        "homg_tile_variation", "homg_compact",
    "homg_stream_step",   "homg_stream_variation"};

/* Kernels of one side only (cl/homg.cl builds the others for CPUs). */
int grid_uses_gpu_kernels(const clmg_context *context) {
  const char *forced = getenv("CLMG_HOMG_GPU_KERNELS");
  /* the table's choice (it needs work-groups of 64 x 4) */
  return context->params.homg_tile_kernels || (forced && strcmp(forced, "1") == 0);
}

static int kernel_wanted(int id, int gpu) {
  int cpu_only = id == GRID_K_HOMG_STEP || id == GRID_K_HOMG_VARIATION_RELAX ||
                 id == GRID_K_HOMG_VARIATION_ADD;
  int gpu_only = id == GRID_K_HOMG_TILE_STEP || id == GRID_K_HOMG_TILE_VARIATION ||
                 id == GRID_K_HOMG_COMPACT || id == GRID_K_HOMG_STREAM_STEP ||
                 id == GRID_K_HOMG_STREAM_VARIATION;
  return gpu ? !cpu_only : !gpu_only;
}

clmg_status grid_kernels_load(clmg_context *context, clmg_dtype type, grid_kernels *kernels) {
  memset(kernels, 0, sizeof *kernels);
  kernels->context = context;
  kernels->type = type;
  int cpu_kernels = context->params.cpu_kernels;
  kernels->gpu = grid_uses_gpu_kernels(context);
  /* CLMG_CPU (set where the table says cpu_kernels) picks the CPU side of
   * cl/homg.cl; the launches follow kernels->gpu, so the program must too. */
  char options[192];
  snprintf(options, sizeof options, "%s%s", clmg_real_options(context, type),
           kernels->gpu && cpu_kernels     ? " -DCLMG_HOMG_GPU_KERNELS=1"
           : !kernels->gpu && !cpu_kernels ? " -DCLMG_CPU=1"
                                           : "");
  for (int id = 0; id < GRID_KERNEL_COUNT; ++id) {
    if (!kernel_wanted(id, kernels->gpu))
      continue;
    clmg_status status =
        clmg_get_kernel(context, "homg", options, grid_kernel_names[id], &kernels->kernel[id]);
    if (status != CLMG_SUCCESS)
      return status;
  }
  return CLMG_SUCCESS;
}

grid_ref grid_ref_of(const clmg_vector *vector) {
  grid_ref ref = {vector->buffer, vector->offset};
  return ref;
}

static void begin(const grid_kernels *k, grid_kernel_id id, clmg_kernel_args *args) {
  clmg_args_begin(args, k->context, k->kernel[id], grid_kernel_names[id]);
}

static void arg_uint(clmg_kernel_args *args, size_t value) {
  cl_uint v = (cl_uint)value;
  clmg_arg_raw(args, sizeof v, &v);
}

static void arg_grid(clmg_kernel_args *args, grid_ref ref) {
  clmg_arg_buffer(args, ref.buffer);
  clmg_arg_ulong(args, ref.offset);
}

/* A streaming launch over an n x n grid (FOR_EACH_POINT in cl/homg.cl): on
 * CPUs a 1-D range of contiguous chunks; on GPUs (k->gpu) a 2-D range of
 * items_per_row x rows work-items in work-groups of 64 x 4 (rows of 64 for
 * coalescing; the tile kernels require that size), rounded up. */
static clmg_status launch_2d(const grid_kernels *k, clmg_kernel_args *args, size_t n,
                             size_t items_per_row, size_t rows) {
  clmg_status status = clmg_args_end(args);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_context *context = args->context;
  if (!k->gpu) {
    size_t global, local;
    clmg_launch_1d(context, n * n, 0, &global, &local);
    return clmg_enqueue_1d(context, args->kernel, args->name, global, local, NULL);
  }
  size_t local[2] = {64, 4};
  size_t global[2] = {(items_per_row + local[0] - 1) / local[0] * local[0],
                      (rows + local[1] - 1) / local[1] * local[1]};
  cl_event *profiled = clmg_profile_event_slot(context, args->name, global[0] * global[1]);
  cl_int error = clEnqueueNDRangeKernel(context->queue, args->kernel, 2, NULL, global, local, 0,
                                        NULL, profiled);
  clmg_launch_commit(context, profiled, error == CL_SUCCESS);
  if (error == CL_SUCCESS)
    return CLMG_SUCCESS;
  char what[160];
  snprintf(what, sizeof what, "launching kernel %s (global %zu x %zu, local %zu x %zu)", args->name,
           global[0], global[1], local[0], local[1]);
  return clmg_fail_cl(context, error, what);
}

static clmg_status launch(const grid_kernels *k, clmg_kernel_args *args, size_t n) {
  return launch_2d(k, args, n, n, n);
}

/* A reduction launch: `results` partial sums per work-group, added on the
 * host in double precision. */
static clmg_status launch_reduction(clmg_kernel_args *args, clmg_dtype type, size_t points,
                                    unsigned results, double *sums) {
  clmg_reduction r;
  clmg_status status = clmg_reduction_begin(args->context, type, points, results, &r);
  return status == CLMG_SUCCESS ? clmg_reduction_finish(args, type, &r, sums) : status;
}

clmg_status grid_jacobi(const grid_kernels *k, size_t n, double h, double omega, unsigned flags,
                        grid_ref u, grid_ref b, grid_ref out) {
  clmg_kernel_args args;
  begin(k, GRID_K_JACOBI, &args);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, h * h);
  clmg_arg_real(&args, k->type, 0.25 * omega);
  arg_uint(&args, flags);
  /* A zero input is never read; any buffer fills the argument. */
  arg_grid(&args, (flags & GRID_JACOBI_ZERO_INPUT) ? b : u);
  arg_grid(&args, b);
  arg_grid(&args, out);
  return launch(k, &args, n);
}

clmg_status grid_residual_sums(const grid_kernels *k, size_t n, grid_ref u, grid_ref b,
                               const grid_ref *r, const grid_ref *exact, double sums[4]) {
  double h = 1.0 / (double)(n - 1);
  clmg_kernel_args args;
  begin(k, GRID_K_RESIDUAL_SUMS, &args);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, 1.0 / (h * h));
  arg_grid(&args, u);
  arg_grid(&args, b);
  arg_uint(&args, r != NULL);
  arg_grid(&args, r ? *r : u);
  arg_uint(&args, exact != NULL);
  arg_grid(&args, exact ? *exact : u);
  return launch_reduction(&args, k->type, n * n, 4, sums);
}

clmg_status grid_error_sum(const grid_kernels *k, size_t n, grid_ref u, const grid_ref *correction,
                           grid_ref exact, double *sum) {
  clmg_kernel_args args;
  begin(k, GRID_K_ERROR_SUMS, &args);
  arg_uint(&args, n);
  arg_grid(&args, u);
  arg_uint(&args, correction != NULL);
  arg_grid(&args, correction ? *correction : u);
  arg_grid(&args, exact);
  return launch_reduction(&args, k->type, n * n, 1, sum);
}

clmg_status grid_restrict(const grid_kernels *k, size_t nc, size_t n_in, unsigned flips,
                          double alpha, double beta, grid_ref in, grid_ref out) {
  clmg_kernel_args args;
  begin(k, GRID_K_RESTRICT, &args);
  arg_uint(&args, nc);
  arg_uint(&args, n_in);
  arg_uint(&args, flips);
  clmg_arg_real(&args, k->type, alpha);
  clmg_arg_real(&args, k->type, beta);
  arg_grid(&args, in);
  arg_grid(&args, out);
  return launch(k, &args, nc);
}

clmg_status grid_restrict_residual(const grid_kernels *k, size_t nc, grid_ref u, grid_ref b,
                                   grid_ref out) {
  size_t n = 2 * nc - 1;
  double h = 1.0 / (double)(n - 1);
  clmg_kernel_args args;
  begin(k, GRID_K_RESTRICT_RESIDUAL, &args);
  arg_uint(&args, nc);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, 1.0 / (h * h));
  arg_grid(&args, u);
  arg_grid(&args, b);
  arg_grid(&args, out);
  return launch(k, &args, nc);
}

clmg_status grid_interpolate(const grid_kernels *k, size_t nc, double alpha, double beta,
                             grid_ref coarse, grid_ref fine) {
  size_t n = 2 * nc - 1;
  clmg_kernel_args args;
  begin(k, GRID_K_INTERPOLATE, &args);
  arg_uint(&args, n);
  arg_uint(&args, nc);
  clmg_arg_real(&args, k->type, alpha);
  clmg_arg_real(&args, k->type, beta);
  arg_grid(&args, coarse);
  arg_grid(&args, fine);
  return launch(k, &args, n);
}

static double inverse_h2(size_t n) {
  return (double)(n - 1) * (double)(n - 1);
}

clmg_status grid_stencil_apply(const grid_kernels *k, size_t n, double alpha, grid_ref x,
                               double beta, grid_ref y) {
  clmg_kernel_args args;
  begin(k, GRID_K_STENCIL_APPLY, &args);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, inverse_h2(n));
  clmg_arg_real(&args, k->type, alpha);
  clmg_arg_real(&args, k->type, beta);
  arg_grid(&args, x);
  arg_grid(&args, y);
  return launch(k, &args, n);
}

clmg_status grid_stencil_defect(const grid_kernels *k, size_t n, grid_ref b, grid_ref x,
                                grid_ref r) {
  clmg_kernel_args args;
  begin(k, GRID_K_STENCIL_DEFECT, &args);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, inverse_h2(n));
  arg_grid(&args, b);
  arg_grid(&args, x);
  arg_grid(&args, r);
  return launch(k, &args, n);
}

clmg_status grid_stencil_weighted_step(const grid_kernels *k, size_t n, grid_ref w, grid_ref b,
                                       grid_ref x, grid_ref x_new) {
  clmg_kernel_args args;
  begin(k, GRID_K_STENCIL_WEIGHTED_STEP, &args);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, inverse_h2(n));
  arg_grid(&args, w);
  arg_grid(&args, b);
  arg_grid(&args, x);
  arg_grid(&args, x_new);
  return launch(k, &args, n);
}

clmg_status grid_stencil_diagonal(const grid_kernels *k, size_t n, grid_ref d) {
  clmg_kernel_args args;
  begin(k, GRID_K_STENCIL_DIAGONAL, &args);
  arg_uint(&args, n);
  clmg_arg_real(&args, k->type, inverse_h2(n));
  arg_grid(&args, d);
  return launch(k, &args, n);
}

/* The arguments every kernel that relaxes a level's points starts with (cl/homg.cl:
 * n, spacing, h_l^2, omega / 4, zero_input). */
static void arg_relaxation(clmg_kernel_args *args, const grid_kernels *k, const homg_step_args *a) {
  arg_uint(args, a->n);
  arg_uint(args, a->spacing);
  clmg_arg_real(args, k->type, a->hl2);
  clmg_arg_real(args, k->type, 0.25 * a->omega);
  arg_uint(args, a->zero_input != 0);
}

clmg_status grid_homg_step(const grid_kernels *k, const homg_step_args *a) {
  clmg_kernel_args args;
  begin(k, GRID_K_HOMG_STEP, &args);
  arg_relaxation(&args, k, a);
  arg_grid(&args, a->zero_input ? a->out : a->in);
  arg_grid(&args, a->out);
  arg_grid(&args, a->sources);
  arg_uint(&args, a->nv);
  arg_grid(&args, a->axis);
  arg_grid(&args, a->weight);
  return launch(k, &args, a->n);
}

/* Points of spacing `spacing` along one axis that some frame marks
 * (cl/homg.cl, variation_marked_count). */
static size_t marked_count(size_t spacing, size_t n) {
  size_t last = n - 1, four = (n & 1) == 0, split = four ? n / 2 : last;
  return split / spacing + 1 + (four ? (last - (split - 1)) / spacing + 1 : 0);
}

clmg_status grid_homg_variation_step(const grid_kernels *k, int phase, const homg_step_args *a) {
  clmg_kernel_args args;
  if (phase == 0) {
    begin(k, GRID_K_HOMG_VARIATION_RELAX, &args);
    arg_relaxation(&args, k, a);
    arg_grid(&args, a->in);
    arg_grid(&args, a->out);
    arg_grid(&args, a->sources);
    arg_uint(&args, a->nv);
    arg_grid(&args, a->axis);
    arg_grid(&args, a->weight);
    size_t count = marked_count(a->spacing, a->n);
    return launch(k, &args, count);
  }
  begin(k, GRID_K_HOMG_VARIATION_ADD, &args);
  arg_uint(&args, a->n);
  arg_uint(&args, a->spacing);
  arg_uint(&args, a->zero_input != 0);
  arg_grid(&args, a->in);
  arg_grid(&args, a->out);
  arg_grid(&args, a->axis);
  arg_grid(&args, a->weight);
  return launch(k, &args, a->n);
}

/* cl/homg.cl: rows per work-item of homg_tile_step and homg_tile_variation */
#define HOMG_VALUE_ROWS 8
#define HOMG_VARIATION_ROWS 4

clmg_status grid_homg_tile_step(const grid_kernels *k, int variation, const homg_step_args *a) {
  clmg_kernel_args args;
  begin(k, variation ? GRID_K_HOMG_TILE_VARIATION : GRID_K_HOMG_TILE_STEP, &args);
  arg_relaxation(&args, k, a);
  arg_grid(&args, a->zero_input ? a->out : a->in);
  arg_grid(&args, a->out);
  arg_grid(&args, a->sources);
  arg_uint(&args, a->nv);
  /* one work-item per column and `rows` rows */
  size_t rows = variation ? HOMG_VARIATION_ROWS : HOMG_VALUE_ROWS;
  return launch_2d(k, &args, a->n, a->n, (a->n + rows - 1) / rows);
}

size_t grid_homg_compact_count(size_t spacing, size_t n) {
  return marked_count(spacing, n);
}

/* cl/homg.cl: rows per work-item of homg_stream_* */
#define HOMG_STREAM_ROWS 8

clmg_status grid_homg_stream_step(const grid_kernels *k, int variation, const homg_step_args *a,
                                  grid_ref d) {
  clmg_kernel_args args;
  begin(k, GRID_K_HOMG_COMPACT, &args);
  arg_relaxation(&args, k, a);
  arg_uint(&args, variation != 0);
  arg_grid(&args, a->zero_input ? a->out : a->in);
  arg_grid(&args, d);
  arg_grid(&args, a->sources);
  arg_uint(&args, a->nv);
  clmg_status status = launch(k, &args, marked_count(a->spacing, a->n));
  if (status != CLMG_SUCCESS)
    return status;
  begin(k, variation ? GRID_K_HOMG_STREAM_VARIATION : GRID_K_HOMG_STREAM_STEP, &args);
  arg_uint(&args, a->n);
  arg_uint(&args, a->spacing);
  arg_uint(&args, a->zero_input != 0);
  arg_grid(&args, a->zero_input ? a->out : a->in);
  arg_grid(&args, d);
  arg_grid(&args, a->out);
  /* one work-item per column and HOMG_STREAM_ROWS rows */
  return launch_2d(k, &args, a->n, a->n, (a->n + HOMG_STREAM_ROWS - 1) / HOMG_STREAM_ROWS);
}

/* ---- the public functions ---- */

/* Checks the vectors of a grid call: present, one context, double or float,
 * one type, and each of the length in `lengths`; loads the kernels. */
static clmg_status check_grid_call(const char *op, unsigned count, const clmg_vector *const *v,
                                   const size_t *lengths, grid_kernels *kernels) {
  const clmg_vector *any = NULL;
  for (unsigned i = 0; i < count && !any; ++i)
    any = v[i];
  if (!any)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context *context = any->context;
  clmg_clear_message(context);
  for (unsigned i = 0; i < count; ++i) {
    if (!v[i])
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s: vector argument %u is NULL", op,
                       i + 1);
    if (v[i]->context != context)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s: vectors belong to different contexts", op);
    if (v[i]->type != CLMG_DOUBLE && v[i]->type != CLMG_FLOAT)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s needs double or float vectors, not %s", op, clmg_dtype_name(v[i]->type));
    if (v[i]->type != any->type)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s: vector types differ (%s and %s)",
                       op, clmg_dtype_name(any->type), clmg_dtype_name(v[i]->type));
    if (v[i]->length != lengths[i])
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s: vector argument %u has %zu elements, the grid needs %zu", op, i + 1,
                       v[i]->length, lengths[i]);
  }
  return grid_kernels_load(context, any->type, kernels);
}

static clmg_status check_size(const clmg_vector *any, const char *op, size_t n, int odd) {
  if (n >= 3 && n <= GRID_MAX_N && (!odd || n % 2 == 1))
    return CLMG_SUCCESS;
  clmg_context *context = any ? any->context : NULL;
  return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                   "%s: a grid of n = %zu points per side; n must be %sfrom 3 to %zu", op, n,
                   odd ? "odd and " : "", GRID_MAX_N);
}

clmg_status clmg_grid_jacobi(size_t n, double omega, const clmg_vector *u, const clmg_vector *b,
                             int accumulate, clmg_vector *out) {
  const clmg_vector *any = b ? b : out;
  clmg_status status = check_size(any, "clmg_grid_jacobi", n, 0);
  if (status != CLMG_SUCCESS)
    return status;
  size_t lengths[] = {n * n, n * n, n * n};
  grid_kernels k;
  const clmg_vector *v[] = {b, out, u ? u : b};
  status = check_grid_call("clmg_grid_jacobi", 3, v, lengths, &k);
  if (status != CLMG_SUCCESS)
    return status;
  if (u && u->buffer == out->buffer && u->offset == out->offset)
    return clmg_fail(out->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_grid_jacobi: out must not be u (a sweep reads u's neighbours)");
  if (!(omega > 0 && omega <= 1))
    return clmg_fail(out->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_grid_jacobi: omega = %g; damped Jacobi needs 0 < omega <= 1", omega);
  unsigned flags = (u ? 0 : GRID_JACOBI_ZERO_INPUT) | (accumulate ? GRID_JACOBI_ACCUMULATE : 0);
  return grid_jacobi(&k, n, 1.0 / (double)(n - 1), omega, flags, grid_ref_of(u ? u : b),
                     grid_ref_of(b), grid_ref_of(out));
}

clmg_status clmg_grid_residual(size_t n, const clmg_vector *u, const clmg_vector *b, clmg_vector *r,
                               double *norm) {
  clmg_status status = check_size(u ? u : b, "clmg_grid_residual", n, 0);
  if (status != CLMG_SUCCESS)
    return status;
  size_t lengths[] = {n * n, n * n, n * n};
  grid_kernels k;
  const clmg_vector *v[] = {u, b, r ? r : u};
  status = check_grid_call("clmg_grid_residual", 3, v, lengths, &k);
  if (status != CLMG_SUCCESS)
    return status;
  grid_ref r_ref = r ? grid_ref_of(r) : grid_ref_of(u);
  double sums[4];
  status = grid_residual_sums(&k, n, grid_ref_of(u), grid_ref_of(b), r ? &r_ref : NULL, NULL, sums);
  if (status == CLMG_SUCCESS && norm)
    *norm = sqrt(sums[0]);
  return status;
}

clmg_status clmg_grid_restrict(size_t n, const clmg_vector *fine, clmg_vector *coarse) {
  clmg_status status = check_size(fine, "clmg_grid_restrict", n, 1);
  if (status != CLMG_SUCCESS)
    return status;
  size_t nc = (n + 1) / 2;
  size_t lengths[] = {n * n, nc * nc};
  grid_kernels k;
  const clmg_vector *v[] = {fine, coarse};
  status = check_grid_call("clmg_grid_restrict", 2, v, lengths, &k);
  if (status != CLMG_SUCCESS)
    return status;
  return grid_restrict(&k, nc, n, 0, 1.0, 0.0, grid_ref_of(fine), grid_ref_of(coarse));
}

clmg_status clmg_grid_restrict_residual(size_t n, const clmg_vector *u, const clmg_vector *b,
                                        clmg_vector *coarse) {
  clmg_status status = check_size(u, "clmg_grid_restrict_residual", n, 1);
  if (status != CLMG_SUCCESS)
    return status;
  size_t nc = (n + 1) / 2;
  size_t lengths[] = {n * n, n * n, nc * nc};
  grid_kernels k;
  const clmg_vector *v[] = {u, b, coarse};
  status = check_grid_call("clmg_grid_restrict_residual", 3, v, lengths, &k);
  if (status != CLMG_SUCCESS)
    return status;
  return grid_restrict_residual(&k, nc, grid_ref_of(u), grid_ref_of(b), grid_ref_of(coarse));
}

clmg_status clmg_grid_interpolate(size_t nc, const clmg_vector *coarse, int accumulate,
                                  clmg_vector *fine) {
  if (nc < 2 || nc > (GRID_MAX_N + 1) / 2)
    return clmg_fail(coarse ? coarse->context : NULL, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_grid_interpolate: a coarse grid of nc = %zu points per side; nc must be "
                     "from 2 to %zu",
                     nc, (GRID_MAX_N + 1) / 2);
  size_t n = 2 * nc - 1;
  size_t lengths[] = {nc * nc, n * n};
  grid_kernels k;
  const clmg_vector *v[] = {coarse, fine};
  clmg_status status = check_grid_call("clmg_grid_interpolate", 2, v, lengths, &k);
  if (status != CLMG_SUCCESS)
    return status;
  return grid_interpolate(&k, nc, 1.0, accumulate ? 1.0 : 0.0, grid_ref_of(coarse),
                          grid_ref_of(fine));
}
