/* High-occupancy multigrid (HOMG: Becerra-Sagredo, Málaga, Mandujano, "A
 * novel and scalable multigrid algorithm for many-core architectures") and
 * the classic V-cycle and FMG on structured grids of the unit square.
 *
 * Every solve works on corrections: r = f - A x; a cycle solves A e = r
 * approximately from e = 0 (e = 0 on the boundary, so x keeps its Dirichlet
 * values); its last sweep adds e to x in the same pass; then the residual
 * is taken again. That is the paper's restart "with the residual equation",
 * and the first cycle is no different.
 *
 * Levels. Inside this file a level is named by its spacing exponent m
 * (spacing 2^m h; m = 0 is the finest grid), which is what the kernels and
 * the pyramid index by. The public functions number levels as the
 * multigrid engine does, 0 the coarsest to L-1 the finest: public level
 * L-1-m (public_level, spacing_exponent).
 *
 * HOMG cycle (MFMG). The residual is restricted once to every level by
 * nested full-weighting reductions (the "pyramid": m = 1..L-1 stored
 * compactly in one array, a third of the grid's size for nested grids, so
 * the paper's alternative of recomputing restrictions inside the cycle in
 * one extra full-size array would save nothing). Then, from the coarsest
 * level (spacing 2^(L-1) h) to the finest, spacing 2^m h gets
 * min(2^(L-m), MaxI) steps: two on the coarsest, doubling per finer level,
 * at most MaxI. A step with m >= 1 is one launch of homg_step over the
 * whole grid (the level's points relax, all others interpolate the previous
 * step's values of the level's points); a step on the finest level (m = 0)
 * is a damped Jacobi sweep. Each step is one work unit.
 *
 * Four subdomains (n = 2^k): see cl/homg.cl. Each quadrant has its own
 * nested frame, one point wider than the grid, so its pyramid is computed
 * per frame: four pyramids, each a third of the grid.
 *
 * Classic methods (nested grids only) run the multigrid engine
 * (include/clmg/multigrid.h) on the grid's operators (lib/homg/operators.c):
 * V(pre, post) cycles with the engine's damped Jacobi, full weighting of the
 * defect, bilinear interpolation, and its direct solve of the coarsest grid
 * (3 x 3, one unknown). FMG restricts the residual to every level (the same
 * pyramid), solves the coarsest, and on each finer level interpolates the
 * solution and runs one engine V-cycle from it. Work units are counted as
 * the classic cycle's passes: a sweep, the restriction of the defect and
 * the interpolation one pass each over their level, the correction added to
 * x with the last sweep. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "homg/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOMG_MAX_LEVELS 16

struct clmg_homg {
  clmg_context *context;
  clmg_homg_options options;
  clmg_dtype type;
  size_t n, split; /* split: quadrant width (four subdomains), else n - 1 */
  int four, levels, frames;
  double h;
  grid_kernels kernels;

  clmg_vector *r;          /* level-0 source: the residual of the current cycle */
  clmg_vector *e[2];       /* level-0 correction and its partner */
  clmg_vector *sources;    /* the pyramid: m = 1..L-1, frames 0..frames-1 */
  clmg_vector *axes;       /* step tables: m = 1..L-1, n uint4 each (cl/homg.cl) */
  clmg_vector *weights;    /* ... and n interpolation weights each */
  clmg_vector *variations; /* GPUs: a level's compact arrays (HOMG_STREAM_SPACING) */
  size_t source_offset[HOMG_MAX_LEVELS][4];
  size_t source_side[HOMG_MAX_LEVELS]; /* points per side of a level's source */
  double pyramid_work_units;
  int have_source;

  /* Classic methods: the engine's hierarchy, and per engine level (0 the
   * coarsest) the correction and right-hand side FMG starts a cycle with:
   * on the finest level e[0] and r, below views of `corrections` and of the
   * pyramid (frame 0), which share one layout. */
  clmg_multigrid *engine;
  clmg_vector *corrections;
  clmg_vector *level_e[HOMG_MAX_LEVELS], *level_b[HOMG_MAX_LEVELS];
  clmg_vector *views[2 * HOMG_MAX_LEVELS];
  size_t view_count;

  int *schedule; /* spacing exponents m of one MFMG cycle's steps */
  size_t schedule_length;
};

/* Work and time of a running solve. */
typedef struct solve_state {
  clmg_vector *x;
  const clmg_vector *exact;
  clmg_homg_result *result; /* never NULL inside the solve */
  size_t steps_capacity;
  double exact_size; /* sum |u|, the L1 error's denominator */
  int cycle;
  int iterations;
  double work_units;
} solve_state;

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

const char *clmg_homg_method_name(clmg_homg_method method) {
  switch (method) {
  case CLMG_HOMG_MFMG:
    return "homg";
  case CLMG_HOMG_VCYCLE:
    return "vcycle";
  case CLMG_HOMG_FMG:
    return "fmg";
  }
  return "unknown";
}

static const char *const schedule_names[] = {"sawtooth", "ascent", "vshape"};

const char *clmg_homg_schedule_name(clmg_homg_schedule_type schedule) {
  return (unsigned)schedule < 3 ? schedule_names[schedule] : "unknown";
}

int clmg_homg_schedule_parse(const char *name, clmg_homg_schedule_type *schedule) {
  for (int k = 0; name && schedule && k < 3; k++)
    if (strcmp(name, schedule_names[k]) == 0) {
      *schedule = (clmg_homg_schedule_type)k;
      return 1;
    }
  return 0;
}

int clmg_homg_method_parse(const char *name, clmg_homg_method *method) {
  if (!name || !method)
    return 0;
  if (strcmp(name, "homg") == 0 || strcmp(name, "mfmg") == 0)
    *method = CLMG_HOMG_MFMG;
  else if (strcmp(name, "vcycle") == 0)
    *method = CLMG_HOMG_VCYCLE;
  else if (strcmp(name, "fmg") == 0)
    *method = CLMG_HOMG_FMG;
  else
    return 0;
  return 1;
}

void clmg_homg_options_defaults(clmg_homg_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->method = CLMG_HOMG_MFMG;
  options->precision = CLMG_DOUBLE;
  options->max_iterations_per_level = 32;
  /* Undamped Jacobi leaves the checkerboard mode alone, and the restarted
   * cycles stall on it (prototype: residual 0.4 after 12 cycles at n = 129);
   * 4/5 is the classic smoothing weight of the five-point Laplacian. */
  options->omega = 0.8;
  options->pre_smoothing = 2;
  options->post_smoothing = 2;
  options->max_cycles = 50;
  options->relative_tolerance = 1e-10;
  options->schedule = CLMG_HOMG_SCHEDULE_SAWTOOTH;
}

void clmg_homg_result_free(clmg_homg_result *result) {
  if (!result)
    return;
  free(result->history);
  free(result->steps);
  result->history = NULL;
  result->steps = NULL;
  result->history_length = 0;
  result->steps_length = 0;
}

void clmg_homg_paper_problem(size_t n, double *f, double *u) {
  if (n < 2)
    return;
  double h = 1.0 / (double)(n - 1);
  for (size_t j = 0; j < n; ++j) {
    /* The boundary coordinates are exact, so u and f vanish there exactly
     * where they should. */
    double y = j == n - 1 ? 1.0 : (double)j * h, y2 = y * y;
    for (size_t i = 0; i < n; ++i) {
      double x = i == n - 1 ? 1.0 : (double)i * h, x2 = x * x;
      if (u)
        u[j * n + i] = -x2 * y2 * (1 - x2) * (1 - y2);
      if (f)
        f[j * n + i] = 2 * ((1 - 6 * x2) * y2 * (1 - y2) + (1 - 6 * y2) * x2 * (1 - x2));
    }
  }
}

/* ---- creation ---- */

/* k with 2^k == v, or -1. */
static int log2_exact(size_t v) {
  if (v == 0 || (v & (v - 1)) != 0)
    return -1;
  int k = 0;
  while (((size_t)1 << k) < v)
    ++k;
  return k;
}

static clmg_status check_options(clmg_context *context, const clmg_homg_options *o) {
  if (o->method != CLMG_HOMG_MFMG && o->method != CLMG_HOMG_VCYCLE && o->method != CLMG_HOMG_FMG)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "HOMG: unknown method %d",
                     (int)o->method);
  if (o->precision != CLMG_DOUBLE && o->precision != CLMG_FLOAT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: precision must be double or float, not %s",
                     clmg_dtype_name(o->precision));
  if (o->max_iterations_per_level < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: MaxI (max_iterations_per_level) must be at least 1, not %d",
                     o->max_iterations_per_level);
  if ((unsigned)o->schedule > (unsigned)CLMG_HOMG_SCHEDULE_VSHAPE)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "HOMG: unknown schedule %d",
                     (int)o->schedule);
  if (!(o->omega > 0 && o->omega <= 1))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: omega = %g; damped Jacobi needs 0 < omega <= 1", o->omega);
  if (o->pre_smoothing < 0 || o->post_smoothing < 0 || o->pre_smoothing + o->post_smoothing < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: V-cycle smoothing (%d, %d): both >= 0 and at least one sweep in all",
                     o->pre_smoothing, o->post_smoothing);
  if (o->max_cycles < 1)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: max_cycles must be at least 1, not %d", o->max_cycles);
  if (!(o->relative_tolerance >= 0) || !(o->error_tolerance >= 0))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: tolerances must be >= 0 (relative %g, error %g)", o->relative_tolerance,
                     o->error_tolerance);
  return CLMG_SUCCESS;
}

/* The public number of the level of spacing 2^m h, and back. */
static int public_level(const clmg_homg *h, int m) {
  return h->levels - 1 - m;
}

static int spacing_exponent(const clmg_homg *h, int level) {
  return h->levels - 1 - level;
}

/* Steps at spacing 2^m h in an MFMG cycle: 2 on the coarsest level,
 * doubling per finer level, at most MaxI. */
static size_t level_steps(const clmg_homg *h, int m) {
  size_t maxi = (size_t)h->options.max_iterations_per_level;
  int doubling = h->levels - m; /* 1 on the coarsest level */
  return doubling >= 30 || maxi < ((size_t)1 << doubling) ? maxi : (size_t)1 << doubling;
}

/* The visits of one cycle (spacing exponents m, coarsest first) by the
 * schedule's pattern (include/clmg/homg.h); visits == NULL counts them. */
static size_t schedule_visits(const clmg_homg *h, int *visits) {
  const int coarsest = h->levels - 1;
  size_t count = 0;
#define VISIT(m)                                                                                   \
  do {                                                                                             \
    if (visits)                                                                                    \
      visits[count] = (m);                                                                         \
    count++;                                                                                       \
  } while (0)
  VISIT(coarsest);
  for (int k = coarsest - 1; k >= 0; --k) {
    VISIT(k);
    if (h->options.schedule == CLMG_HOMG_SCHEDULE_SAWTOOTH && k > 0) {
      VISIT(k + 1);
      VISIT(k);
    } else if (h->options.schedule == CLMG_HOMG_SCHEDULE_VSHAPE) {
      for (int m = k + 1; m <= coarsest; ++m)
        VISIT(m);
      for (int m = coarsest - 1; m >= k; --m)
        VISIT(m);
    }
  }
#undef VISIT
  return count;
}

/* The cycle's steps: each visit of level m repeated level_steps(m) times. */
static clmg_status make_schedule(clmg_homg *h) {
  size_t visits = schedule_visits(h, NULL), length = 0;
  int *visit = malloc(visits * sizeof *visit);
  if (!visit)
    return clmg_fail(h->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "HOMG schedule");
  schedule_visits(h, visit);
  for (size_t v = 0; v < visits; ++v)
    length += level_steps(h, visit[v]);
  h->schedule = malloc(length * sizeof *h->schedule);
  if (!h->schedule) {
    free(visit);
    return clmg_fail(h->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "HOMG schedule");
  }
  size_t s = 0;
  for (size_t v = 0; v < visits; ++v)
    for (size_t c = level_steps(h, visit[v]); c > 0; --c)
      h->schedule[s++] = visit[v];
  free(visit);
  h->schedule_length = length;
  return CLMG_SUCCESS;
}

/* The step table entry of index i on level m (cl/homg.cl, homg_step). */
static void axis_entry(const clmg_homg *h, int m, size_t i, cl_uint entry[4], double *weight) {
  size_t last = h->n - 1, l = (size_t)1 << m, mask = l - 1, split = h->split;
  cl_uint code = 0;
  if (i <= split && (i & mask) == 0)
    code = 1; /* marked by the low frame */
  else if (h->four && i + 1 >= split && ((last - i) & mask) == 0)
    code = 2; /* marked by the high frame */
  if (i == 0 || i == last)
    code |= HOMG_AXIS_BOUNDARY;
  if (i >= l)
    code |= HOMG_AXIS_MINUS;
  if (i + l <= last)
    code |= HOMG_AXIS_PLUS;
  /* The own quadrant's level-m points around i, in its frame [c, c + l]. */
  int high = h->four && i >= split;
  size_t d = high ? last - i : i, c = d & ~mask;
  size_t lo = high ? last - c : c, hi = high ? last - c - l : c + l;
  if (hi > last)
    hi = lo; /* boundary indices only, never interpolated */
  size_t marked = (code & HOMG_AXIS_FRAME) == 2 ? last - i : i;
  entry[0] = code;
  entry[1] = (cl_uint)lo;
  entry[2] = (cl_uint)hi;
  entry[3] = (cl_uint)(marked >> m);
  *weight = (double)(d & mask) / (double)l;
}

static clmg_status make_tables(clmg_homg *h) {
  size_t n = h->n, levels = (size_t)(h->levels > 1 ? h->levels - 1 : 1);
  cl_uint *axes = calloc(4 * n * levels, sizeof *axes);
  double *weights = calloc(n * levels, sizeof *weights);
  float *weights_float = h->type == CLMG_FLOAT ? calloc(n * levels, sizeof *weights_float) : NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!axes || !weights || (h->type == CLMG_FLOAT && !weights_float))
    status = clmg_fail(h->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "HOMG step tables");
  for (int m = 1; m < h->levels && status == CLMG_SUCCESS; ++m)
    for (size_t i = 0; i < n; ++i) {
      size_t at = (size_t)(m - 1) * n + i;
      axis_entry(h, m, i, axes + 4 * at, weights + at);
      if (weights_float)
        weights_float[at] = (float)weights[at];
    }
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(h->context, CLMG_UINT32, 4 * n * levels, &h->axes);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(h->context, h->type, n * levels, &h->weights);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload(h->axes, axes);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload(h->weights, weights_float ? (const void *)weights_float
                                                          : (const void *)weights);
  free(axes);
  free(weights);
  free(weights_float);
  return status;
}

static clmg_status make_view(clmg_homg *h, clmg_vector *base, size_t offset, size_t length,
                             clmg_vector **view) {
  clmg_status status = clmg_vector_view(base, offset, length, view);
  if (status == CLMG_SUCCESS)
    h->views[h->view_count++] = *view;
  return status;
}

/* The pyramid's layout, level by level, frame by frame: the points per
 * side of every level (side[0] = n), each frame's offset, and the total. */
static size_t pyramid_layout(size_t n, int four, int levels, size_t side[HOMG_MAX_LEVELS],
                             size_t offset[HOMG_MAX_LEVELS][4]) {
  int frames = four ? 4 : 1;
  size_t total = 0;
  side[0] = n;
  for (int m = 1; m < levels; ++m) {
    side[m] = four ? (n >> m) + 1 : ((n - 1) >> m) + 1;
    for (int f = 0; f < 4; ++f)
      offset[m][f] = total + (f < frames ? (size_t)f : 0) * side[m] * side[m];
    total += (size_t)frames * side[m] * side[m];
  }
  return total;
}

static clmg_status allocate(clmg_homg *h) {
  size_t n = h->n, points = n * n;
  clmg_status status = CLMG_SUCCESS;
  /* e[1], the partner of e[0] in the steps' ping-pong, only for MFMG */
  clmg_vector **level0[] = {&h->r, &h->e[0], &h->e[1]};
  int finest_vectors = h->options.method == CLMG_HOMG_MFMG ? 3 : 2;
  for (int i = 0; i < finest_vectors && status == CLMG_SUCCESS; ++i)
    status = clmg_vector_create(h->context, h->type, points, level0[i]);
  if (status != CLMG_SUCCESS)
    return status;

  size_t total = pyramid_layout(n, h->four, h->levels, h->source_side, h->source_offset);
  h->pyramid_work_units = (double)total / (double)points;
  status = clmg_vector_create(h->context, h->type, total ? total : 1, &h->sources);
  if (status == CLMG_SUCCESS)
    status = make_tables(h);
  if (status != CLMG_SUCCESS || h->options.method == CLMG_HOMG_MFMG)
    return status;

  /* Classic methods: a correction per coarse level, laid out like frame 0
   * of the pyramid, whose levels are their right-hand sides. */
  status = clmg_vector_create(h->context, h->type, total ? total : 1, &h->corrections);
  for (int level = 0; level < h->levels && status == CLMG_SUCCESS; ++level) {
    int m = spacing_exponent(h, level);
    if (m == 0) {
      h->level_e[level] = h->e[0];
      h->level_b[level] = h->r;
      continue;
    }
    size_t side = h->source_side[m], offset = h->source_offset[m][0];
    status = make_view(h, h->corrections, offset, side * side, &h->level_e[level]);
    if (status == CLMG_SUCCESS)
      status = make_view(h, h->sources, offset, side * side, &h->level_b[level]);
  }
  return status;
}

/* The engine's hierarchy for the classic methods: on every level the grid
 * operator, from the second coarsest up its transfers, the engine's damped
 * Jacobi with HOMG's omega and sweeps, and its direct solve of the 3 x 3
 * coarsest grid (one unknown and the identity rows of the boundary: the
 * exact solve the classic cycle always had). */
static clmg_status build_engine(clmg_homg *h) {
  clmg_multigrid_level levels[HOMG_MAX_LEVELS];
  memset(levels, 0, sizeof levels);
  clmg_status status = CLMG_SUCCESS;
  for (int level = 0; level < h->levels && status == CLMG_SUCCESS; ++level) {
    size_t n = h->source_side[spacing_exponent(h, level)];
    status = clmg_grid_operator(h->context, n, h->type, &levels[level].a);
    if (status == CLMG_SUCCESS && level > 0)
      status = clmg_grid_interpolation_operator(h->context, n, h->type, &levels[level].p);
    if (status == CLMG_SUCCESS && level > 0)
      status = clmg_grid_restriction_operator(h->context, n, h->type, &levels[level].r);
  }
  if (status != CLMG_SUCCESS) {
    for (int level = 0; level < h->levels; ++level) {
      clmg_operator_destroy(&levels[level].a);
      clmg_operator_destroy(&levels[level].p);
      clmg_operator_destroy(&levels[level].r);
    }
    return status;
  }
  clmg_multigrid_options options;
  clmg_multigrid_options_defaults(&options);
  options.cycle = CLMG_CYCLE_V;
  options.pre_smoothing = h->options.pre_smoothing;
  options.post_smoothing = h->options.post_smoothing;
  options.smoother = CLMG_SMOOTHER_JACOBI;
  options.omega = h->options.omega;
  options.coarse = CLMG_COARSE_DIRECT;
  return clmg_multigrid_create_from_levels(h->context, h->levels, levels, &options, &h->engine);
}

/* Checks n and the options for clmg_homg_create and clmg_homg_memory_need:
 * the number of levels and whether the grid has four subdomains. */
static clmg_status check_size(clmg_context *context, size_t n, const clmg_homg_options *options,
                              int *levels, int *four) {
  clmg_status status = check_options(context, options);
  if (status != CLMG_SUCCESS)
    return status;
  int k_nested = n >= 3 ? log2_exact(n - 1) : -1;
  int k_four = n >= 4 ? log2_exact(n) : -1;
  if (n > GRID_MAX_N || (k_nested < 1 && k_four < 2))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: n = %zu points per side; n must be 2^k + 1 (nested grids: 3, 5, 9, "
                     "..., 129, ..., %zu) or 2^k (four subdomains: 4, 8, ..., 128, ..., %zu)",
                     n, GRID_MAX_N, GRID_MAX_N - 1);
  if (k_nested < 1 && options->method != CLMG_HOMG_MFMG)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: the %s method needs nested grids of 2^k + 1 points per side; n = %zu "
                     "is a four-subdomain size (try n = %zu)",
                     clmg_homg_method_name(options->method), n, n + 1);
  if (options->precision == CLMG_DOUBLE && !clmg_context_device(context)->has_fp64)
    return clmg_fail_no_fp64(context, "HOMG");
  *four = k_nested < 1;
  *levels = *four ? k_four : k_nested;
  return CLMG_SUCCESS;
}

/* From this spacing up the steps stream through compact arrays of the
 * level's points (cl/homg.cl, homg_compact); at spacing 2 the arrays would
 * be a quarter of the grid, and the tile kernels move less. */
#define HOMG_STREAM_SPACING 4

/* The compact arrays' length: two of the finest level that streams. */
static size_t compact_points(size_t n) {
  size_t count = grid_homg_compact_count(HOMG_STREAM_SPACING, n);
  return 2 * count * count;
}

typedef struct memory_need {
  uint64_t device, largest, host;
} memory_need;

static void need_buffer(memory_need *need, uint64_t count, size_t element) {
  uint64_t bytes = (count ? count : 1) * element;
  need->device += bytes;
  if (bytes > need->largest)
    need->largest = bytes;
}

/* What clmg_homg_create allocates, buffer by buffer as allocate(),
 * make_tables() and build_engine() do; the engine's Jacobi smoother (at
 * most three vectors a level) and direct coarse solve (two probes and the
 * inverse) at their peak. */
static memory_need homg_memory_need(size_t n, const clmg_homg_options *options, int levels,
                                    int four, int gpu) {
  memory_need need = {0, 0, 0};
  size_t element = clmg_dtype_size(options->precision), points = n * n;
  int mfmg = options->method == CLMG_HOMG_MFMG;
  for (int i = 0; i < (mfmg ? 3 : 2); ++i)
    need_buffer(&need, points, element);
  size_t side[HOMG_MAX_LEVELS], offset[HOMG_MAX_LEVELS][4];
  size_t total = pyramid_layout(n, four, levels, side, offset);
  need_buffer(&need, total, element);
  size_t table_levels = (size_t)(levels > 1 ? levels - 1 : 1);
  need_buffer(&need, 4 * n * table_levels, sizeof(cl_uint));
  need_buffer(&need, n * table_levels, element);
  /* the streamed steps' compact arrays (the GPU kernels only) */
  if (gpu && levels > 1)
    need_buffer(&need, compact_points(n), element);
  need.host = n * table_levels * (4 * sizeof(cl_uint) + sizeof(double) + sizeof(float));
  if (mfmg)
    return need;
  need_buffer(&need, total, element); /* the corrections */
  for (int level = 0; level < levels; ++level) {
    uint64_t level_points = (uint64_t)side[levels - 1 - level] * side[levels - 1 - level];
    int vectors = 1 + (level < levels - 1 ? 2 : 0) + (level > 0 ? 3 : 0);
    for (int v = 0; v < vectors; ++v)
      need_buffer(&need, level_points, element);
    if (level == 0)
      for (int v = 0; v < 3; ++v)
        need_buffer(&need, level_points * level_points, element);
  }
  need_buffer(&need, points, element);      /* the engine's residual */
  need.host += 2 * points * sizeof(double); /* smoother weights of the finest level */
  return need;
}

clmg_status clmg_homg_memory_need(clmg_context *context, size_t n, const clmg_homg_options *options,
                                  uint64_t *device_bytes, uint64_t *largest_allocation,
                                  uint64_t *host_bytes) {
  if (!context || !device_bytes)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_homg_memory_need: NULL argument");
  clmg_clear_message(context);
  clmg_homg_options defaults;
  clmg_homg_options_defaults(&defaults);
  if (!options)
    options = &defaults;
  int levels = 0, four = 0;
  clmg_status status = check_size(context, n, options, &levels, &four);
  if (status != CLMG_SUCCESS)
    return status;
  memory_need need = homg_memory_need(n, options, levels, four, grid_uses_gpu_kernels(context));
  *device_bytes = need.device;
  if (largest_allocation)
    *largest_allocation = need.largest;
  if (host_bytes)
    *host_bytes = need.host;
  return CLMG_SUCCESS;
}

clmg_status clmg_homg_create(clmg_context *context, size_t n, const clmg_homg_options *options,
                             clmg_homg **out) {
  if (!out)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_homg_create: NULL output");
  *out = NULL;
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  clmg_homg_options defaults;
  clmg_homg_options_defaults(&defaults);
  if (!options)
    options = &defaults;
  int levels = 0, four = 0;
  clmg_status status = check_size(context, n, options, &levels, &four);
  if (status != CLMG_SUCCESS)
    return status;
  /* All of it, once, before the first allocation: a grid that does not fit
   * fails here with the total, not after gigabytes were allocated. */
  memory_need need = homg_memory_need(n, options, levels, four, grid_uses_gpu_kernels(context));
  char what[128];
  snprintf(what, sizeof what, "HOMG on an n = %zu grid (%s, %s)", n,
           clmg_homg_method_name(options->method), clmg_dtype_name(options->precision));
  status = clmg_memory_check(context, need.device, need.largest, need.host, 1, what);
  if (status != CLMG_SUCCESS)
    return status;

  clmg_homg *h = calloc(1, sizeof *h);
  if (!h)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "HOMG solver");
  h->context = context;
  h->options = *options;
  h->type = options->precision;
  h->n = n;
  h->four = four;
  h->levels = levels;
  h->split = h->four ? n / 2 : n - 1;
  h->frames = h->four ? 4 : 1;
  h->h = 1.0 / (double)(n - 1);
  status = make_schedule(h);
  if (status == CLMG_SUCCESS)
    status = allocate(h);
  if (status == CLMG_SUCCESS)
    status = grid_kernels_load(context, h->type, &h->kernels);
  if (status == CLMG_SUCCESS && h->kernels.gpu && levels > 1)
    status = clmg_vector_create(context, h->type, compact_points(n), &h->variations);
  if (status == CLMG_SUCCESS && options->method != CLMG_HOMG_MFMG)
    status = build_engine(h);
  if (status != CLMG_SUCCESS) {
    clmg_homg_destroy(h);
    return status;
  }
  *out = h;
  return CLMG_SUCCESS;
}

void clmg_homg_destroy(clmg_homg *h) {
  if (!h)
    return;
  clmg_multigrid_destroy(h->engine);
  for (size_t i = 0; i < h->view_count; ++i)
    clmg_vector_destroy(h->views[i]);
  clmg_vector_destroy(h->corrections);
  clmg_vector_destroy(h->sources);
  clmg_vector_destroy(h->axes);
  clmg_vector_destroy(h->weights);
  clmg_vector_destroy(h->variations);
  clmg_vector_destroy(h->r);
  clmg_vector_destroy(h->e[0]);
  clmg_vector_destroy(h->e[1]);
  free(h->schedule);
  free(h);
}

clmg_status clmg_homg_get_info(const clmg_homg *h, clmg_homg_info *info) {
  if (!h || !info)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(info, 0, sizeof *info);
  info->n = h->n;
  info->h = h->h;
  info->levels = h->levels;
  info->four_subdomains = h->four;
  info->steps_per_cycle = h->options.method == CLMG_HOMG_MFMG ? (int)h->schedule_length : 0;
  size_t element = clmg_dtype_size(h->type);
  const clmg_vector *owned[] = {h->r,       h->e[0],        h->e[1], h->sources,
                                h->weights, h->corrections, h->axes, h->variations};
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
    if (owned[i])
      info->device_bytes +=
          (uint64_t)clmg_vector_length(owned[i]) * (owned[i] == h->axes ? 4 : element);
  return CLMG_SUCCESS;
}

clmg_status clmg_homg_schedule(const clmg_homg *h, int *levels, size_t capacity, size_t *count) {
  if (!h || !count)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *count = h->schedule_length;
  for (size_t s = 0; levels && s < capacity && s < h->schedule_length; ++s)
    levels[s] = public_level(h, h->schedule[s]);
  return CLMG_SUCCESS;
}

/* ---- the HOMG pieces ---- */

static grid_ref source_ref(const clmg_homg *h, int m, int frame) {
  grid_ref ref = {h->sources->buffer, h->sources->offset + h->source_offset[m][frame]};
  return ref;
}

/* Restricts r to every level of every frame. */
static clmg_status build_pyramid(clmg_homg *h) {
  clmg_status status = CLMG_SUCCESS;
  for (int f = 0; f < h->frames && status == CLMG_SUCCESS; ++f) {
    for (int m = 1; m < h->levels && status == CLMG_SUCCESS; ++m) {
      /* Level 1 reads the grid through the frame (mirrored for the high
       * quadrants, one ghost point wider for four subdomains). */
      if (m == 1)
        status = grid_restrict(&h->kernels, h->source_side[1], h->n, (unsigned)f, 1.0, 0.0,
                               grid_ref_of(h->r), source_ref(h, 1, f));
      else
        status = grid_restrict(&h->kernels, h->source_side[m], h->source_side[m - 1], 0, 1.0, 0.0,
                               source_ref(h, m - 1, f), source_ref(h, m, f));
    }
  }
  return status;
}

/* The arguments of a step at spacing 2^m h (m >= 1) from `in` (NULL:
 * zero) to `out`. */
static homg_step_args step_args(const clmg_homg *h, int m, const clmg_vector *in,
                                clmg_vector *out) {
  homg_step_args a;
  memset(&a, 0, sizeof a);
  a.n = h->n;
  a.spacing = (size_t)1 << m;
  a.zero_input = in == NULL;
  double spacing = (double)a.spacing * h->h;
  a.hl2 = spacing * spacing;
  a.omega = h->options.omega;
  a.in = grid_ref_of(in ? in : out);
  a.out = grid_ref_of(out);
  a.sources = source_ref(h, m, 0);
  a.nv = h->source_side[m];
  size_t table = (size_t)(m - 1) * h->n;
  grid_ref axis = {h->axes->buffer, h->axes->offset / 4 + table};
  grid_ref weight = {h->weights->buffer, h->weights->offset + table};
  a.axis = axis;
  a.weight = weight;
  return a;
}

/* GPUs run the tile kernels: the value step, and the variation step in
 * one pass out of place (cl/homg.cl, homg_tile_*). */
static int fused_steps(const clmg_homg *h) {
  return h->kernels.gpu;
}

/* A step on GPUs at spacing 2^m h (m >= 1), out of place: the value step
 * or the variation step; from spacing HOMG_STREAM_SPACING up in two passes
 * through the compact arrays, below in one tile pass (cl/homg.cl). */
static clmg_status fused_step(clmg_homg *h, int m, int variation, const clmg_vector *in,
                              clmg_vector *out) {
  homg_step_args a = step_args(h, m, in, out);
  if (((size_t)1 << m) < HOMG_STREAM_SPACING)
    return grid_homg_tile_step(&h->kernels, variation, &a);
  return grid_homg_stream_step(&h->kernels, variation, &a, grid_ref_of(h->variations));
}

/* One step at spacing 2^m h from `in` (NULL: zero) to `out`; accumulate
 * (m = 0 only) adds the result to out instead. */
static clmg_status homg_step(clmg_homg *h, int m, const clmg_vector *in, clmg_vector *out,
                             int accumulate) {
  if (m == 0) {
    unsigned flags = (in ? 0 : GRID_JACOBI_ZERO_INPUT) | (accumulate ? GRID_JACOBI_ACCUMULATE : 0);
    return grid_jacobi(&h->kernels, h->n, h->h, h->options.omega, flags,
                       grid_ref_of(in ? in : h->r), grid_ref_of(h->r), grid_ref_of(out));
  }
  if (fused_steps(h))
    return fused_step(h, m, 0, in, out);
  homg_step_args a = step_args(h, m, in, out);
  return grid_homg_step(&h->kernels, &a);
}

/* e += P (relax(e) - e) at spacing 2^m h (m >= 1), in place; e_is_zero:
 * e holds 0 (not read). scratch takes the variations. */
static clmg_status variation_step(clmg_homg *h, int m, clmg_vector *e, int e_is_zero,
                                  clmg_vector *scratch) {
  homg_step_args a = step_args(h, m, e_is_zero ? NULL : e, scratch);
  clmg_status status = grid_homg_variation_step(&h->kernels, 0, &a);
  if (status != CLMG_SUCCESS)
    return status;
  a.zero_input = e_is_zero;
  a.in = grid_ref_of(scratch);
  a.out = grid_ref_of(e);
  return grid_homg_variation_step(&h->kernels, 1, &a);
}

static clmg_status check_grid_vector(const clmg_homg *h, const clmg_vector *v, const char *what) {
  if (!v)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT, "HOMG: %s is NULL", what);
  if (v->context != h->context)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT, "HOMG: %s belongs to another context",
                     what);
  if (v->type != h->type)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: %s is a %s vector; the solver was created for %s", what,
                     clmg_dtype_name(v->type), clmg_dtype_name(h->type));
  if (v->length != h->n * h->n)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "HOMG: %s has %zu elements; an n = %zu grid has %zu", what, v->length, h->n,
                     h->n * h->n);
  return CLMG_SUCCESS;
}

clmg_status clmg_homg_set_source(clmg_homg *h, const clmg_vector *source) {
  if (!h)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(h->context);
  clmg_status status = check_grid_vector(h, source, "the source");
  if (status == CLMG_SUCCESS)
    status = clmg_copy(source, h->r);
  if (status == CLMG_SUCCESS)
    status = build_pyramid(h);
  h->have_source = status == CLMG_SUCCESS;
  return status;
}

clmg_status clmg_homg_step(clmg_homg *h, int level, const clmg_vector *in, clmg_vector *out) {
  if (!h)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(h->context);
  if (level < 0 || level >= h->levels)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_homg_step: level %d; this grid has levels 0 to %d", level,
                     h->levels - 1);
  if (!h->have_source)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_homg_step: no source yet (clmg_homg_set_source)");
  clmg_status status = in ? check_grid_vector(h, in, "the input") : CLMG_SUCCESS;
  if (status == CLMG_SUCCESS)
    status = check_grid_vector(h, out, "the output");
  if (status != CLMG_SUCCESS)
    return status;
  if (in && in->buffer == out->buffer && in->offset == out->offset)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_homg_step: out must not be in (a step reads in's neighbours)");
  return homg_step(h, spacing_exponent(h, level), in, out, 0);
}

clmg_status clmg_homg_variation_step(clmg_homg *h, int level, const clmg_vector *in,
                                     clmg_vector *out) {
  if (!h)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(h->context);
  if (level < 0 || level >= h->levels - 1)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_homg_variation_step: level %d; this grid's coarse levels are 0 to %d",
                     level, h->levels - 2);
  if (!h->have_source)
    return clmg_fail(h->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_homg_variation_step: no source yet (clmg_homg_set_source)");
  clmg_status status = in ? check_grid_vector(h, in, "the input") : CLMG_SUCCESS;
  if (status == CLMG_SUCCESS)
    status = check_grid_vector(h, out, "the output");
  int in_place = in && in->buffer == out->buffer && in->offset == out->offset;
  if (status != CLMG_SUCCESS)
    return status;
  int m = spacing_exponent(h, level);
  if (fused_steps(h)) {
    /* out of place: in place goes through e[1] */
    status = fused_step(h, m, 1, in, in_place ? h->e[1] : out);
    return status == CLMG_SUCCESS && in_place ? clmg_copy(h->e[1], out) : status;
  }
  if (in && !in_place)
    status = clmg_copy(in, out);
  if (status == CLMG_SUCCESS)
    status = variation_step(h, m, out, in == NULL, h->e[1]);
  return status;
}

/* Interior points of level m (spacing 2^m h): (n/l)^2 with four
 * subdomains (n/(2l) per frame and side, two frames per side), (side - 2)^2
 * on nested grids. */
static uint64_t level_points(const clmg_homg *h, int m) {
  uint64_t per_side = h->four ? (uint64_t)(h->n >> m) : (uint64_t)h->source_side[m] - 2;
  return per_side * per_side;
}

clmg_status clmg_homg_step_bytes(const clmg_homg *h, int level, uint64_t *bytes) {
  if (!h || !bytes || level < 0 || level >= h->levels)
    return CLMG_ERROR_INVALID_ARGUMENT;
  int m = spacing_exponent(h, level);
  uint64_t points = (uint64_t)h->n * h->n, element = clmg_dtype_size(h->type);
  *bytes = m == 0 ? 3 * points * element : (points + 2 * level_points(h, m)) * element;
  return CLMG_SUCCESS;
}

clmg_status clmg_homg_variation_step_bytes(const clmg_homg *h, int level, uint64_t *bytes) {
  if (!h || !bytes || level < 0 || level >= h->levels - 1)
    return CLMG_ERROR_INVALID_ARGUMENT;
  int m = spacing_exponent(h, level);
  uint64_t points = (uint64_t)h->n * h->n, element = clmg_dtype_size(h->type);
  *bytes = (2 * points + level_points(h, m)) * element;
  return CLMG_SUCCESS;
}

/* ---- solving ---- */

static void record_step(clmg_homg *h, solve_state *s, int step, int m,
                        const clmg_vector *correction, clmg_status *status) {
  if (h->options.monitor) {
    clmg_homg_step_info info = {s->cycle, step, (int)h->schedule_length, public_level(h, m),
                                s->work_units};
    h->options.monitor(h->options.monitor_data, &info, s->x, correction);
  }
  clmg_homg_result *result = s->result;
  if (!h->options.record_steps || !s->exact || s->cycle != 1 ||
      result->steps_length >= s->steps_capacity)
    return;
  grid_ref c = correction ? grid_ref_of(correction) : grid_ref_of(s->x);
  double sum = 0;
  *status = grid_error_sum(&h->kernels, h->n, grid_ref_of(s->x), correction ? &c : NULL,
                           grid_ref_of(s->exact), &sum);
  if (*status != CLMG_SUCCESS)
    return;
  clmg_homg_record *r = &result->steps[result->steps_length++];
  r->cycle = s->cycle;
  r->iterations = s->iterations;
  r->work_units = s->work_units;
  r->l1_error = s->exact_size > 0 ? sum / s->exact_size : sum;
  r->relative_residual = NAN;
  r->seconds = NAN;
}

/* A cycle of value steps (the ascent): ping-pong between e[0] and e[1]. */
static clmg_status value_cycle(clmg_homg *h, solve_state *s) {
  clmg_status status = CLMG_SUCCESS;
  int current = 0;
  for (size_t step = 0; step < h->schedule_length && status == CLMG_SUCCESS; ++step) {
    int m = h->schedule[step];
    int first = step == 0, last = step + 1 == h->schedule_length;
    const clmg_vector *in = first ? NULL : h->e[current];
    /* The last step is on the finest level and adds the correction to x. */
    clmg_vector *out = last ? s->x : h->e[1 - current];
    status = homg_step(h, m, in, out, last);
    if (!last)
      current = 1 - current;
    s->iterations++;
    s->work_units += 1;
    if (status == CLMG_SUCCESS)
      record_step(h, s, (int)step + 1, m, last ? NULL : h->e[current], &status);
  }
  return status;
}

static double level_work(const clmg_homg *h, size_t nc);

/* A cycle of variation steps (returning schedules): a step on a coarser
 * level goes from e[current] to the other array in one pass on GPUs
 * (fused_steps), or updates e[current] in place on CPUs (the other array
 * takes the variations: a pass over the level's points, then one over the
 * grid); a step on the finest level is a Jacobi sweep into the other
 * array, the last one into x. */
static clmg_status variation_cycle(clmg_homg *h, solve_state *s) {
  clmg_status status = CLMG_SUCCESS;
  int current = 0, zero = 1;
  for (size_t step = 0; step < h->schedule_length && status == CLMG_SUCCESS; ++step) {
    int m = h->schedule[step];
    int last = step + 1 == h->schedule_length;
    if (m == 0) {
      clmg_vector *out = last ? s->x : h->e[1 - current];
      status = homg_step(h, 0, zero ? NULL : h->e[current], out, last);
      if (!last)
        current = 1 - current;
      s->work_units += 1;
    } else if (fused_steps(h)) {
      status = fused_step(h, m, 1, zero ? NULL : h->e[current], h->e[1 - current]);
      current = 1 - current;
      s->work_units += 1 + level_work(h, h->source_side[m]);
    } else {
      status = variation_step(h, m, h->e[current], zero, h->e[1 - current]);
      s->work_units += 1 + level_work(h, h->source_side[m]);
    }
    zero = 0;
    s->iterations++;
    if (status == CLMG_SUCCESS)
      record_step(h, s, (int)step + 1, m, last ? NULL : h->e[current], &status);
  }
  return status;
}

static clmg_status mfmg_cycle(clmg_homg *h, solve_state *s) {
  clmg_status status = build_pyramid(h);
  s->work_units += h->pyramid_work_units;
  if (status != CLMG_SUCCESS)
    return status;
  return h->options.schedule == CLMG_HOMG_SCHEDULE_ASCENT ? value_cycle(h, s)
                                                          : variation_cycle(h, s);
}

/* The fraction of a whole-grid pass that a kernel on an nc x nc grid is. */
static double level_work(const clmg_homg *h, size_t nc) {
  return (double)(nc * nc) / (double)(h->n * h->n);
}

/* Counts the work of an engine V-cycle started on engine level `level`, in
 * the order the classic cycle did its passes: pre-sweeps, the restriction of
 * the defect, the cycle below, the interpolation, post-sweeps; the coarsest
 * grid one sweep (its solve). adds_to_x: the cycle's correction goes to x,
 * which the last post-sweep did in the same pass (without post-sweeps, an
 * extra pass). */
static void count_vcycle(const clmg_homg *h, solve_state *s, int level, int adds_to_x) {
  double pass = level_work(h, h->source_side[spacing_exponent(h, level)]);
  const clmg_homg_options *o = &h->options;
  s->iterations += level == 0 ? 1 : o->pre_smoothing + o->post_smoothing;
  if (level == 0) {
    s->work_units += pass;
    return;
  }
  for (int k = 0; k < o->pre_smoothing; ++k)
    s->work_units += pass;
  s->work_units += pass;
  count_vcycle(h, s, level - 1, 0);
  s->work_units += pass;
  for (int k = 0; k < o->post_smoothing; ++k)
    s->work_units += pass;
  if (adds_to_x && o->post_smoothing == 0)
    s->work_units += 1;
}

/* One V-cycle of the engine on A e = r from e = 0, then x += e. */
static clmg_status classic_vcycle(clmg_homg *h, solve_state *s) {
  int finest = h->levels - 1;
  clmg_status status = clmg_multigrid_cycle_level(h->engine, finest, h->r, h->e[0], 1);
  if (status == CLMG_SUCCESS)
    status = clmg_axpy(1.0, h->e[0], s->x);
  count_vcycle(h, s, finest, 1);
  return status;
}

/* Full multigrid on A e = r: the coarsest level solved, then on each finer
 * level the interpolated solution of the level below improved by one
 * engine V-cycle, each level's right-hand side from the pyramid; x += e. */
static clmg_status classic_fmg(clmg_homg *h, solve_state *s) {
  clmg_status status = build_pyramid(h);
  s->work_units += h->pyramid_work_units;
  if (status == CLMG_SUCCESS)
    status = clmg_multigrid_cycle_level(h->engine, 0, h->level_b[0], h->level_e[0], 1);
  count_vcycle(h, s, 0, 0);
  int finest = h->levels - 1;
  for (int level = 1; level <= finest && status == CLMG_SUCCESS; ++level) {
    size_t coarse_side = h->source_side[spacing_exponent(h, level - 1)];
    status = grid_interpolate(&h->kernels, coarse_side, 1.0, 0.0,
                              grid_ref_of(h->level_e[level - 1]), grid_ref_of(h->level_e[level]));
    s->work_units += level_work(h, h->source_side[spacing_exponent(h, level)]);
    if (status == CLMG_SUCCESS)
      status =
          clmg_multigrid_cycle_level(h->engine, level, h->level_b[level], h->level_e[level], 0);
    count_vcycle(h, s, level, level == finest);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_axpy(1.0, h->e[0], s->x);
  return status;
}

/* r = f - A x and the record of the state after cycle s->cycle. */
static clmg_status evaluate(clmg_homg *h, solve_state *s, const clmg_vector *f, double start_time,
                            double *f_norm) {
  grid_ref r = grid_ref_of(h->r), exact = s->exact ? grid_ref_of(s->exact) : r;
  double sums[4];
  clmg_status status = grid_residual_sums(&h->kernels, h->n, grid_ref_of(s->x), grid_ref_of(f), &r,
                                          s->exact ? &exact : NULL, sums);
  s->work_units += 1;
  if (status != CLMG_SUCCESS)
    return status;
  if (s->cycle == 0) {
    *f_norm = sqrt(sums[1]);
    s->exact_size = sums[3];
  }
  double residual = sqrt(sums[0]);
  clmg_homg_result *result = s->result;
  if (s->cycle == 0)
    result->initial_residual = residual;
  double scale = *f_norm > 0 ? *f_norm : result->initial_residual;
  clmg_homg_record *record = &result->history[result->history_length++];
  record->cycle = s->cycle;
  record->iterations = s->iterations;
  record->work_units = s->work_units;
  record->relative_residual = scale > 0 ? residual / scale : residual;
  record->l1_error = !s->exact ? NAN : s->exact_size > 0 ? sums[2] / s->exact_size : sums[2];
  record->seconds = now_seconds() - start_time;
  return CLMG_SUCCESS;
}

static int tolerance_met(const clmg_homg_options *o, const clmg_homg_record *r) {
  if (o->relative_tolerance > 0 && r->relative_residual <= o->relative_tolerance)
    return 1;
  return o->error_tolerance > 0 && r->l1_error <= o->error_tolerance;
}

clmg_status clmg_homg_solve(clmg_homg *h, const clmg_vector *f, clmg_vector *x,
                            const clmg_vector *exact, clmg_homg_result *result) {
  clmg_homg_result own;
  if (!result)
    result = &own;
  memset(result, 0, sizeof *result);
  if (!h)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(h->context);
  clmg_status status = check_grid_vector(h, f, "f");
  if (status == CLMG_SUCCESS)
    status = check_grid_vector(h, x, "x");
  if (status == CLMG_SUCCESS && exact)
    status = check_grid_vector(h, exact, "the exact solution");
  if (status != CLMG_SUCCESS)
    return status;
  const clmg_homg_options *o = &h->options;
  result->history = calloc((size_t)o->max_cycles + 1, sizeof *result->history);
  size_t steps_capacity =
      o->record_steps && exact && o->method == CLMG_HOMG_MFMG ? h->schedule_length : 0;
  if (steps_capacity)
    result->steps = calloc(steps_capacity, sizeof *result->steps);
  if (!result->history || (steps_capacity && !result->steps)) {
    clmg_homg_result_free(result);
    return clmg_fail(h->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "HOMG history");
  }

  double start = now_seconds(), f_norm = 0;
  solve_state s = {x, exact, result, steps_capacity, 0, 0, 0, 0};
  status = evaluate(h, &s, f, start, &f_norm);
  h->have_source = 0; /* r changes from cycle to cycle */
  int converged = status == CLMG_SUCCESS && tolerance_met(o, &result->history[0]);
  while (status == CLMG_SUCCESS && !converged && s.cycle < o->max_cycles) {
    s.cycle++;
    if (o->method == CLMG_HOMG_MFMG) {
      status = mfmg_cycle(h, &s);
    } else if (o->method == CLMG_HOMG_FMG && s.cycle == 1) {
      status = classic_fmg(h, &s);
    } else {
      status = classic_vcycle(h, &s);
    }
    if (status == CLMG_SUCCESS)
      status = evaluate(h, &s, f, start, &f_norm);
    if (status != CLMG_SUCCESS)
      break;
    const clmg_homg_record *last = &result->history[result->history_length - 1];
    if (!isfinite(last->relative_residual)) {
      status = clmg_fail(h->context, CLMG_ERROR_NOT_CONVERGED,
                         "HOMG: the %s solve diverged in cycle %d (residual not finite)",
                         clmg_homg_method_name(o->method), s.cycle);
      break;
    }
    converged = tolerance_met(o, last);
    /* from the second cycle on: a first cycle from the initial guess may
     * cut the error thirtyfold and hardly the residual (the interpolations'
     * high frequencies, which its last steps only begin to smooth) */
    if (!converged && o->stagnation_factor > 1 && s.cycle >= 2 &&
        last->relative_residual * o->stagnation_factor > last[-1].relative_residual) {
      converged = 1;
      result->stagnated = 1;
    }
  }
  result->time_s = now_seconds() - start;
  result->cycles = s.cycle;
  result->iterations = s.iterations;
  result->work_units = s.work_units;
  result->converged = converged;
  if (result->history_length > 0) {
    const clmg_homg_record *last = &result->history[result->history_length - 1];
    result->l1_error = last->l1_error;
    result->relative_residual = last->relative_residual;
  }
  if (status == CLMG_SUCCESS && !converged &&
      (o->relative_tolerance > 0 || (o->error_tolerance > 0 && exact)))
    status = clmg_fail(h->context, CLMG_ERROR_NOT_CONVERGED,
                       "HOMG: %s met no tolerance in %d cycles: relative residual %.3e "
                       "(tolerance %g), L1 error %.3e (tolerance %g)",
                       clmg_homg_method_name(o->method), s.cycle, result->relative_residual,
                       o->relative_tolerance, result->l1_error, o->error_tolerance);
  if (result == &own)
    clmg_homg_result_free(result);
  return status;
}
