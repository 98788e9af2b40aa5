/* The multigrid cycle engine (Geveler et al., section 2.1): a hierarchy of
 * levels, each {A, P, R, smoother, work vectors}, and V, W and F cycles made
 * only of operator applications and vector updates. Everything a cycle
 * needs is allocated at setup; a cycle launches kernels and never reads
 * back.
 *
 * The engine knows operators (clmg_operator), smoothers (clmg_smoother) and
 * a coarse solver (clmg_coarse_solver) only through their interfaces: it
 * assumes no diagonal, no symmetry and no scalar field, so a saddle-point
 * level with a Vanka smoother runs through the same cycle as a Poisson
 * level with Jacobi. Levels come from host CSR (uploaded here) or from
 * operators already on the device. */
#include "solve/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mg_level {
  size_t n;
  clmg_operator a;
  clmg_operator p;        /* from level - 1; empty on level 0 */
  clmg_operator r;        /* to level - 1; empty on level 0 */
  clmg_smoother smoother; /* empty on level 0 */
  clmg_vector *x, *b;     /* the level's correction problem; NULL on the finest */
  clmg_vector *work;      /* the defect */
} mg_level;

struct clmg_multigrid {
  clmg_context *context;
  clmg_multigrid_options options;
  clmg_dtype precision;
  int num_levels;
  mg_level *levels;
  clmg_coarse_solver coarse;
  clmg_vector *residual;    /* finest level, for clmg_multigrid_solve */
  clmg_coarse_tail *tail;   /* levels 0..top in one launch per cycle; NULL: none */
  clmg_fused_level **fused; /* per level: its fused kernels (lib/solve/fused_level.c); NULL: none */
};

/* ---- names and options ---- */

static const char *const cycle_names[] = {"v", "w", "f"};

const char *clmg_cycle_type_name(clmg_cycle_type type) {
  return (unsigned)type < 3 ? cycle_names[type] : "unknown";
}

static int parse_name(const char *name, const char *const *names, int count, int *index) {
  if (!name)
    return 0;
  for (int i = 0; i < count; ++i) {
    size_t k = 0;
    while (name[k] && names[i][k] && (name[k] | 0x20) == names[i][k])
      k++;
    if (name[k] == '\0' && names[i][k] == '\0') {
      *index = i;
      return 1;
    }
  }
  return 0;
}

int clmg_cycle_type_parse(const char *name, clmg_cycle_type *type) {
  int index;
  if (!type || !parse_name(name, cycle_names, 3, &index))
    return 0;
  *type = (clmg_cycle_type)index;
  return 1;
}

void clmg_multigrid_options_defaults(clmg_multigrid_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->cycle = CLMG_CYCLE_V;
  options->pre_smoothing = 4;
  options->post_smoothing = 4;
  options->smoothing_growth = 1.0;
  options->smoother = CLMG_SMOOTHER_JACOBI;
  options->omega = 0.0;
  options->chebyshev_lower_ratio = 0.3;
  options->eigen_iterations = 12;
  options->coarse = CLMG_COARSE_AUTO;
  options->direct_max_rows = 2048;
  options->coarse_relative_tolerance = 1e-2;
  options->coarse_max_iterations = 1000;
  options->tail_rows = -1;
  options->fused_restrict_rows = -1;
  options->fused_smooth_rows = -1;
  clmg_matrix_options_defaults(&options->matrix);
}

/* ---- setup ---- */

/* The levels' matrices given to clmg_multigrid_create (host CSR) or to
 * clmg_multigrid_create_from_csr_device (device arrays): one of the two. */
typedef struct level_matrices {
  const clmg_csr *a, *p, *r;
  const clmg_csr_device *device_a, *device_p, *device_r;
  /* a device matrix of a[finest_index] (the caller's, borrowed), or NULL */
  clmg_matrix *finest;
  int finest_index;
} level_matrices;

typedef struct matrix_shape {
  int present;
  size_t rows, cols;
} matrix_shape;

/* The arrays of 'a', 'p' or 'r': host CSR or device arrays (the other
 * NULL), or neither where not given. */
static void arrays_of(const level_matrices *m, char which, const clmg_csr **host,
                      const clmg_csr_device **device) {
  *host = which == 'a' ? m->a : which == 'p' ? m->p : m->r;
  *device = which == 'a' ? m->device_a : which == 'p' ? m->device_p : m->device_r;
}

/* Shape of a[l] (which 'a'), p[l] ('p') or r[l] ('r'); an absent array or
 * an empty r[l] is not present. */
static matrix_shape shape_of(const level_matrices *m, char which, int l) {
  matrix_shape shape = {0, 0, 0};
  const clmg_csr *host;
  const clmg_csr_device *device;
  arrays_of(m, which, &host, &device);
  if (host) {
    shape = (matrix_shape){host[l].row_ptr != NULL, host[l].rows, host[l].cols};
  } else if (device) {
    shape = (matrix_shape){device[l].row_ptr != NULL, device[l].rows, device[l].cols};
  }
  if (which == 'r' && shape.rows == 0)
    shape.present = 0;
  return shape;
}

static clmg_status check_shapes(clmg_context *context, int num_levels, const level_matrices *m) {
  for (int l = 0; l < num_levels; ++l) {
    matrix_shape a = shape_of(m, 'a', l);
    if (!a.present || a.rows == 0 || a.rows != a.cols)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: A is %zu x %zu; every level needs a nonempty square "
                       "matrix",
                       l, a.rows, a.cols);
    if (l == 0)
      continue;
    size_t coarse_rows = shape_of(m, 'a', l - 1).rows;
    matrix_shape p = shape_of(m, 'p', l), r = shape_of(m, 'r', l);
    if (!p.present || p.rows != a.rows || p.cols != coarse_rows)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: P is %zu x %zu, but must map level %d (%zu rows) to "
                       "level %d (%zu rows)",
                       l, p.rows, p.cols, l - 1, coarse_rows, l, a.rows);
    if (r.present && (r.rows != coarse_rows || r.cols != a.rows))
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: R is %zu x %zu, but must map level %d (%zu rows) to "
                       "level %d (%zu rows)",
                       l, r.rows, r.cols, l, a.rows, l - 1, coarse_rows);
  }
  return CLMG_SUCCESS;
}

static clmg_status check_options(clmg_context *context, const clmg_multigrid_options *o) {
  if (o->pre_smoothing < 0 || o->post_smoothing < 0 ||
      !(o->smoothing_growth == 0 || (o->smoothing_growth >= 1.0 && o->smoothing_growth <= 4.0)) ||
      (unsigned)o->cycle > CLMG_CYCLE_F ||
      (!o->smoother_factory && !clmg_builtin_smoother_factory(o->smoother)) ||
      (!o->coarse_solver.solve && (unsigned)o->coarse > CLMG_COARSE_DIRECT) || o->omega < 0 ||
      !(o->chebyshev_lower_ratio > 0 && o->chebyshev_lower_ratio < 1) || o->eigen_iterations < 1 ||
      !(o->coarse_relative_tolerance > 0) || o->coarse_max_iterations < 1)
    return clmg_fail(
        context, CLMG_ERROR_INVALID_ARGUMENT,
        "multigrid: invalid options (smoothing steps >= 0, smoothing growth 0 or in [1, 4], "
        "omega >= 0, Chebyshev "
        "ratio in (0, 1), eigen_iterations >= 1, coarse tolerance > 0, coarse "
        "iterations >= 1, known cycle, smoother and coarse solver)");
  return CLMG_SUCCESS;
}

static void destroy_levels(clmg_multigrid_level *levels, int num_levels) {
  for (int l = 0; levels && l < num_levels; ++l) {
    clmg_operator_destroy(&levels[l].a);
    clmg_operator_destroy(&levels[l].p);
    clmg_operator_destroy(&levels[l].r);
    clmg_smoother_destroy(&levels[l].smoother);
  }
}

/* Prefixes the context's message with the level it concerns. */
static clmg_status at_level(clmg_context *context, clmg_status status, int level) {
  if (status == CLMG_SUCCESS)
    return status;
  char inner[CLMG_MESSAGE_SIZE];
  snprintf(inner, sizeof inner, "%s", clmg_context_message(context));
  return clmg_fail(context, status, "multigrid level %d: %s", level, inner);
}

static clmg_status check_level_operators(clmg_context *context, int num_levels,
                                         const clmg_multigrid_level *levels) {
  clmg_dtype precision = levels[num_levels - 1].a.precision;
  for (int l = 0; l < num_levels; ++l) {
    const clmg_multigrid_level *lv = &levels[l];
    /* a process of a distributed hierarchy may own no rows of a level */
    const int empty = lv->a.rows == 0 && !clmg_context_is_distributed(context);
    if (!lv->a.apply || lv->a.context != context || empty || lv->a.rows != lv->a.cols ||
        lv->a.precision != precision)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: A is %zu x %zu %s; every level needs a nonempty square "
                       "%s operator in the hierarchy's context",
                       l, lv->a.rows, lv->a.cols, clmg_dtype_name(lv->a.precision),
                       clmg_dtype_name(precision));
    if (l == 0)
      continue;
    size_t n = lv->a.rows, nc = levels[l - 1].a.rows;
    if (!lv->p.apply || lv->p.rows != n || lv->p.cols != nc || lv->p.precision != precision ||
        lv->p.context != context)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: P is %zu x %zu, but must map level %d (%zu rows) to "
                       "level %d (%zu rows) in the same context and precision",
                       l, lv->p.rows, lv->p.cols, l - 1, nc, l, n);
    if (!lv->r.apply || lv->r.rows != nc || lv->r.cols != n || lv->r.precision != precision ||
        lv->r.context != context)
      return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: R is %zu x %zu, but must map level %d (%zu rows) to "
                       "level %d (%zu rows) in the same context and precision",
                       l, lv->r.rows, lv->r.cols, l, n, l - 1, nc);
  }
  return CLMG_SUCCESS;
}

static clmg_status make_coarse_solver(clmg_multigrid *mg) {
  const clmg_multigrid_options *o = &mg->options;
  if (o->coarse_solver.solve) {
    mg->coarse = o->coarse_solver;
    memset(&mg->options.coarse_solver, 0, sizeof mg->options.coarse_solver);
    return CLMG_SUCCESS;
  }
  clmg_coarse_solver_type type = o->coarse;
  if (type == CLMG_COARSE_AUTO)
    type = mg->levels[0].n <= o->direct_max_rows ? CLMG_COARSE_DIRECT : CLMG_COARSE_PCG;
  if (type == CLMG_COARSE_DIRECT)
    return clmg_coarse_solver_direct(mg->context, &mg->coarse);
  return clmg_coarse_solver_krylov(mg->context, o->coarse_method, o->coarse_relative_tolerance,
                                   o->coarse_max_iterations, &mg->coarse);
}

static int level_steps(const clmg_multigrid *mg, int l, int steps);

/* A level's stored entries (its matrix's nonzeros); SIZE_MAX for an
 * operator without a matrix, which the tail cannot run. */
static size_t level_entries(const mg_level *lv) {
  const clmg_matrix *a = clmg_operator_matrix(&lv->a);
  return a ? clmg_matrix_nnz(a) : SIZE_MAX;
}

/* The coarse tail (lib/solve/coarse_tail.c) over the levels of at most
 * tail_rows rows (the option, or the device's where it is negative), made
 * anew (it copies the levels' values). None where tail_rows is 0, the
 * coarsest level is larger, or the levels' smoothers, operators or coarse
 * solver are not of the kinds the tail runs. */
static clmg_status make_tail(clmg_multigrid *mg) {
  clmg_coarse_tail_destroy(mg->tail);
  mg->tail = NULL;
  int64_t option = mg->options.tail_rows;
  size_t rows = option < 0 ? mg->context->params.tail_rows : (size_t)option;
  /* each phase walks a level's entries: at most so many (the coarse
   * solve's dense inverse, n^2, included) */
  size_t per_row = mg->context->params.tail_entries_per_row;
  size_t entries = per_row && rows > SIZE_MAX / per_row ? SIZE_MAX : rows * per_row;
  size_t coarsest = mg->num_levels > 0 ? mg->levels[0].n : 0;
  int levels = 0;
  if (coarsest == 0 || coarsest <= entries / coarsest)
    while (levels < mg->num_levels && mg->levels[levels].n <= rows &&
           level_entries(&mg->levels[levels]) <= entries)
      levels++;
  if (levels == 0)
    return CLMG_SUCCESS;
  clmg_tail_level *tail = calloc((size_t)levels, sizeof *tail);
  if (!tail)
    return clmg_fail(mg->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "multigrid: coarse tail");
  for (int l = 0; l < levels; ++l) {
    mg_level *lv = &mg->levels[l];
    tail[l] = (clmg_tail_level){&lv->a,
                                &lv->p,
                                &lv->r,
                                &lv->smoother,
                                level_steps(mg, l, mg->options.pre_smoothing),
                                level_steps(mg, l, mg->options.post_smoothing)};
  }
  clmg_status status =
      clmg_coarse_tail_create(mg->context, mg->precision, levels, tail, &mg->coarse, &mg->tail);
  free(tail);
  return status;
}

static void destroy_fused(clmg_multigrid *mg) {
  for (int l = 0; mg->fused && l < mg->num_levels; ++l)
    clmg_fused_level_destroy(mg->fused[l]);
  free(mg->fused);
  mg->fused = NULL;
}

/* An option's row limit: the option, or the device's where it is negative. */
static size_t row_limit(int64_t option, size_t device) {
  return option < 0 ? device : (size_t)option;
}

/* The fused kernels (lib/solve/fused_level.c) of the levels above the tail
 * with at most fused_restrict_rows rows (the defect and the restriction in
 * one launch) or fused_smooth_rows rows (two Jacobi steps per launch), the
 * options' values or the device's; made anew (they copy the levels'
 * values). A level whose operators or smoother do not suit gets none. */
static clmg_status make_fused(clmg_multigrid *mg) {
  destroy_fused(mg);
  const size_t restrict_rows =
      row_limit(mg->options.fused_restrict_rows, mg->context->params.fused_restrict_rows);
  const size_t smooth_rows =
      row_limit(mg->options.fused_smooth_rows, mg->context->params.fused_smooth_rows);
  const int first = mg->tail ? clmg_coarse_tail_top(mg->tail) + 1 : 1;
  clmg_status status = CLMG_SUCCESS;
  for (int l = first > 1 ? first : 1; l < mg->num_levels && status == CLMG_SUCCESS; ++l) {
    mg_level *lv = &mg->levels[l];
    const int restriction = lv->n <= restrict_rows, smoothing = lv->n <= smooth_rows;
    if (!restriction && !smoothing)
      continue;
    if (!mg->fused) {
      mg->fused = calloc((size_t)mg->num_levels, sizeof *mg->fused);
      if (!mg->fused)
        return clmg_fail(mg->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "multigrid: fused levels");
    }
    status = at_level(mg->context,
                      clmg_fused_level_create(mg->context, mg->precision, &lv->a, &lv->p, &lv->r,
                                              &lv->smoother, restriction, smoothing, &mg->fused[l]),
                      l);
  }
  return status;
}

static clmg_status make_vector(clmg_multigrid *mg, size_t n, clmg_vector **vector) {
  return clmg_vector_create(mg->context, mg->precision, n, vector);
}

/* Takes the levels over (zeroing the caller's), makes the smoothers, the
 * coarse solver and the work vectors, and runs every setup. */
static clmg_status build(clmg_context *context, int num_levels, clmg_multigrid_level *given,
                         const clmg_multigrid_options *o, clmg_multigrid **multigrid) {
  /* A distributed hierarchy's processes agree after each step that may
   * fail on one of them (clmg_context_agree_local), so that none goes on
   * to collective work (halo exchanges, global norms) alone. */
  clmg_status status =
      clmg_context_agree_local(context, check_level_operators(context, num_levels, given));
  clmg_multigrid *mg = NULL;
  mg_level *levels = NULL;
  if (status == CLMG_SUCCESS) {
    mg = calloc(1, sizeof *mg);
    levels = calloc((size_t)num_levels, sizeof *levels);
    if (!mg || !levels)
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "multigrid: no host memory");
  }
  if (status != CLMG_SUCCESS) {
    free(mg);
    free(levels);
    destroy_levels(given, num_levels);
    memset(given, 0, (size_t)num_levels * sizeof *given);
    clmg_coarse_solver taken = o->coarse_solver; /* taken over, as on success */
    clmg_coarse_solver_destroy(&taken);
    return status;
  }
  mg->context = context;
  mg->options = *o;
  mg->precision = given[num_levels - 1].a.precision;
  mg->num_levels = num_levels;
  mg->levels = levels;
  for (int l = 0; l < num_levels; ++l) {
    levels[l].n = given[l].a.rows;
    levels[l].a = given[l].a;
    levels[l].p = given[l].p;
    levels[l].r = given[l].r;
    levels[l].smoother = given[l].smoother;
    memset(&given[l], 0, sizeof given[l]);
  }
  clmg_smoother_factory factory =
      o->smoother_factory ? o->smoother_factory : clmg_builtin_smoother_factory(o->smoother);
  void *factory_data = o->smoother_factory ? o->smoother_factory_data : &mg->options;
  for (int l = 0; l < num_levels && status == CLMG_SUCCESS; ++l) {
    mg_level *lv = &levels[l];
    status = make_vector(mg, lv->n, &lv->work);
    if (status == CLMG_SUCCESS && l < num_levels - 1)
      status = make_vector(mg, lv->n, &lv->x);
    if (status == CLMG_SUCCESS && l < num_levels - 1)
      status = make_vector(mg, lv->n, &lv->b);
    status = clmg_context_agree_local(context, status);
    if (status == CLMG_SUCCESS && l > 0 && !lv->smoother.apply) {
      status = factory(factory_data, context, l, &lv->a, &lv->smoother);
      if (status == CLMG_SUCCESS && !lv->smoother.apply)
        status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                           "the smoother factory made a smoother without apply");
    }
    status = clmg_context_agree_local(context, status);
    if (status == CLMG_SUCCESS && l > 0 && lv->smoother.setup)
      status = lv->smoother.setup(lv->smoother.data, &lv->a);
    status = clmg_context_agree_local(context, at_level(context, status, l));
  }
  if (status == CLMG_SUCCESS)
    status = clmg_context_agree_local(context, at_level(context, make_coarse_solver(mg), 0));
  const int coarse_agreed = status == CLMG_SUCCESS; /* the same on every process */
  if (status == CLMG_SUCCESS && mg->coarse.setup)
    status = at_level(context, mg->coarse.setup(mg->coarse.data, &levels[0].a), 0);
  if (status == CLMG_SUCCESS)
    status = make_vector(mg, levels[num_levels - 1].n, &mg->residual);
  if (status == CLMG_SUCCESS)
    status = make_tail(mg);
  if (status == CLMG_SUCCESS)
    status = make_fused(mg);
  if (coarse_agreed)
    status = clmg_context_agree_local(context, status);
  if (status != CLMG_SUCCESS) {
    clmg_multigrid_destroy(mg);
    return status;
  }
  *multigrid = mg;
  return CLMG_SUCCESS;
}

clmg_status clmg_multigrid_create_from_levels(clmg_context *context, int num_levels,
                                              clmg_multigrid_level *levels,
                                              const clmg_multigrid_options *options,
                                              clmg_multigrid **multigrid) {
  if (!context || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  clmg_clear_message(context);
  clmg_multigrid_options defaults;
  clmg_multigrid_options_defaults(&defaults);
  const clmg_multigrid_options *o = options ? options : &defaults;
  clmg_status status = CLMG_SUCCESS;
  if (num_levels < 1 || !levels)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid: %d levels; a hierarchy needs at least one level", num_levels);
  if (status == CLMG_SUCCESS)
    status = check_options(context, o);
  if (status != CLMG_SUCCESS) {
    clmg_coarse_solver taken = o->coarse_solver; /* taken over, as on success */
    clmg_coarse_solver_destroy(&taken);
    if (levels && num_levels > 0) {
      destroy_levels(levels, num_levels);
      memset(levels, 0, (size_t)num_levels * sizeof *levels);
    }
    return status;
  }
  int first = 0; /* the coarse level under options->coarse_max_rows */
  for (int l = 0; o->coarse_max_rows > 0 && l < num_levels; ++l)
    if (levels[l].a.rows <= o->coarse_max_rows)
      first = l;
  destroy_levels(levels, first);
  memset(levels, 0, (size_t)first * sizeof *levels);
  return build(context, num_levels - first, levels + first, o, multigrid);
}

/* The operator of level l's a, p or r: a device matrix in options' format
 * and precision, uploaded from host CSR or made from device arrays; the
 * finest level's a borrows m->finest where given. */
static clmg_status upload_operator(clmg_context *context, const level_matrices *m, char which,
                                   int l, const clmg_matrix_options *options, clmg_operator *op) {
  const clmg_csr *host;
  const clmg_csr_device *device;
  arrays_of(m, which, &host, &device);
  if (which == 'a' && m->finest && l == m->finest_index)
    return clmg_operator_from_matrix(m->finest, 0, op);
  clmg_matrix *matrix = NULL;
  clmg_status status = host
                           ? clmg_matrix_create(context, &host[l], options, &matrix)
                           : clmg_matrix_create_from_device(context, device[l].rows, device[l].cols,
                                                            device[l].row_ptr, device[l].col,
                                                            device[l].val, options, &matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_from_matrix(matrix, 1, op);
  if (status != CLMG_SUCCESS)
    clmg_matrix_destroy(matrix);
  return status;
}

/* R = P^T where R is not given: on the host for host CSR, on the device for
 * device arrays. */
static clmg_status upload_transpose(clmg_context *context, const level_matrices *m, int l,
                                    const clmg_matrix_options *options, clmg_operator *op) {
  level_matrices transposed_level = {0};
  clmg_csr host = {0};
  clmg_csr_device device = {0};
  clmg_status status;
  if (m->p) {
    clmg_error error;
    status = clmg_csr_transpose(&m->p[l], &host, &error);
    if (status != CLMG_SUCCESS)
      return clmg_fail(context, status, "R = P^T: %s", error.message);
    transposed_level.r = &host;
  } else {
    status = clmg_csr_device_transpose(context, &m->device_p[l], &device);
    if (status != CLMG_SUCCESS)
      return status;
    transposed_level.device_r = &device;
  }
  status = upload_operator(context, &transposed_level, 'r', 0, options, op);
  clmg_csr_free(&host);
  clmg_csr_device_free(&device);
  return status;
}

/* Level l's operators; the coarsest level used needs no transfers. */
static clmg_status upload_level(clmg_context *context, int l, int coarsest, const level_matrices *m,
                                const clmg_matrix_options *options, clmg_multigrid_level *level) {
  clmg_status status = upload_operator(context, m, 'a', l, options, &level->a);
  if (status != CLMG_SUCCESS || coarsest)
    return status;
  status = upload_operator(context, m, 'p', l, options, &level->p);
  if (status != CLMG_SUCCESS)
    return status;
  if (shape_of(m, 'r', l).present)
    return upload_operator(context, m, 'r', l, options, &level->r);
  return upload_transpose(context, m, l, options, &level->r);
}

/* What clmg_multigrid_create and clmg_multigrid_create_from_csr_device
 * share: the checks, the coarse level under coarse_max_rows, the upload of
 * the levels that are used, and the engine's build. */
static clmg_status create_from_matrices(clmg_context *context, int num_levels,
                                        const level_matrices *m,
                                        const clmg_multigrid_options *options,
                                        clmg_multigrid **multigrid) {
  if (!context || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *multigrid = NULL;
  clmg_clear_message(context);
  if (num_levels < 1 || (!m->a && !m->device_a))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "multigrid: %d levels; a hierarchy needs at least one level and its "
                     "matrices",
                     num_levels);
  clmg_multigrid_options defaults;
  clmg_multigrid_options_defaults(&defaults);
  const clmg_multigrid_options *o = options ? options : &defaults;
  clmg_status status = check_options(context, o);
  if (status == CLMG_SUCCESS)
    status = check_shapes(context, num_levels, m);
  if (status != CLMG_SUCCESS)
    return status;
  int first = 0; /* the coarse level under options->coarse_max_rows */
  for (int l = 0; o->coarse_max_rows > 0 && l < num_levels; ++l)
    if (shape_of(m, 'a', l).rows <= o->coarse_max_rows)
      first = l;
  const int used = num_levels - first; /* at least 1: first < num_levels */
  /* the test of used keeps GCC from seeing a negative size */
  clmg_multigrid_level *levels = used > 0 ? calloc((size_t)used, sizeof *levels) : NULL;
  if (!levels)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "multigrid: no host memory");
  for (int l = 0; l < used && status == CLMG_SUCCESS; ++l) {
    /* level l of the hierarchy is level first + l of the matrices */
    status =
        at_level(context, upload_level(context, first + l, l == 0, m, &o->matrix, &levels[l]), l);
  }
  if (status == CLMG_SUCCESS)
    status = build(context, used, levels, o, multigrid);
  else
    destroy_levels(levels, used);
  free(levels);
  return status;
}

clmg_status clmg_multigrid_create(clmg_context *context, int num_levels, const clmg_csr *a,
                                  const clmg_csr *p, const clmg_csr *r,
                                  const clmg_multigrid_options *options,
                                  clmg_multigrid **multigrid) {
  level_matrices m = {a, p, r, NULL, NULL, NULL, NULL, 0};
  return create_from_matrices(context, num_levels, &m, options, multigrid);
}

clmg_status clmg_multigrid_create_from_csr_device(
    clmg_context *context, int num_levels, const clmg_csr_device *a, const clmg_csr_device *p,
    const clmg_csr_device *r, const clmg_multigrid_options *options, clmg_multigrid **multigrid) {
  level_matrices m = {NULL, NULL, NULL, a, p, r, NULL, 0};
  return create_from_matrices(context, num_levels, &m, options, multigrid);
}

clmg_status clmg_multigrid_create_from_csr_device_borrowing(
    clmg_context *context, int num_levels, const clmg_csr_device *a, const clmg_csr_device *p,
    const clmg_csr_device *r, clmg_matrix *finest, const clmg_multigrid_options *options,
    clmg_multigrid **multigrid) {
  clmg_multigrid_options defaults;
  clmg_multigrid_options_defaults(&defaults);
  const clmg_matrix_options *wanted = options ? &options->matrix : &defaults.matrix;
  /* the finest level in the options' precision and format, as the engine
   * would make it */
  int borrow =
      finest && a && num_levels > 0 && clmg_matrix_context(finest) == context &&
      clmg_matrix_rows(finest) == a[num_levels - 1].rows &&
      clmg_matrix_cols(finest) == a[num_levels - 1].cols &&
      clmg_matrix_precision(finest) == wanted->precision &&
      (wanted->format == CLMG_FORMAT_AUTO || wanted->format == clmg_matrix_format_of(finest));
  level_matrices m = {NULL, NULL, NULL, a, p, r, borrow ? finest : NULL, num_levels - 1};
  return create_from_matrices(context, num_levels, &m, options, multigrid);
}

clmg_status clmg_multigrid_refresh(clmg_multigrid *mg) {
  if (!mg)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(mg->context);
  clmg_status status = CLMG_SUCCESS;
  for (int l = 1; l < mg->num_levels && status == CLMG_SUCCESS; ++l) {
    mg_level *lv = &mg->levels[l];
    if (lv->smoother.setup)
      status = at_level(mg->context, lv->smoother.setup(lv->smoother.data, &lv->a), l);
  }
  if (status == CLMG_SUCCESS && mg->coarse.setup)
    status = at_level(mg->context, mg->coarse.setup(mg->coarse.data, &mg->levels[0].a), 0);
  if (status == CLMG_SUCCESS)
    status = make_tail(mg);
  return status == CLMG_SUCCESS ? make_fused(mg) : status;
}

void clmg_multigrid_destroy(clmg_multigrid *mg) {
  if (!mg)
    return;
  for (int l = 0; l < mg->num_levels; ++l) {
    mg_level *lv = &mg->levels[l];
    clmg_smoother_destroy(&lv->smoother);
    clmg_operator_destroy(&lv->a);
    clmg_operator_destroy(&lv->p);
    clmg_operator_destroy(&lv->r);
    clmg_vector_destroy(lv->x);
    clmg_vector_destroy(lv->b);
    clmg_vector_destroy(lv->work);
  }
  clmg_coarse_tail_destroy(mg->tail);
  destroy_fused(mg);
  clmg_coarse_solver_destroy(&mg->coarse);
  clmg_coarse_solver_destroy(&mg->options.coarse_solver);
  clmg_vector_destroy(mg->residual);
  free(mg->levels);
  free(mg);
}

int clmg_multigrid_levels(const clmg_multigrid *mg) {
  return mg ? mg->num_levels : 0;
}

static const mg_level *level_of(const clmg_multigrid *mg, int level) {
  return mg && level >= 0 && level < mg->num_levels ? &mg->levels[level] : NULL;
}

/* The device matrix of `level` to take new values, or NULL with the
 * context's message set. */
static clmg_matrix *matrix_to_update(clmg_multigrid *mg, int level, int have_values) {
  const mg_level *lv = level_of(mg, level);
  clmg_matrix *matrix = lv ? clmg_operator_matrix(&lv->a) : NULL;
  if (!matrix || !have_values) {
    clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
              "multigrid: level %d has no device matrix to update (or no values given)", level);
    return NULL;
  }
  return matrix;
}

clmg_status clmg_multigrid_update_values(clmg_multigrid *mg, int level, const double *values) {
  if (!mg)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(mg->context);
  clmg_matrix *matrix = matrix_to_update(mg, level, values != NULL);
  return matrix ? at_level(mg->context, clmg_matrix_update_values(matrix, values), level)
                : CLMG_ERROR_INVALID_ARGUMENT;
}

clmg_status clmg_multigrid_update_values_device(clmg_multigrid *mg, int level,
                                                const clmg_vector *values) {
  if (!mg)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(mg->context);
  clmg_matrix *matrix = matrix_to_update(mg, level, values != NULL);
  return matrix ? at_level(mg->context, clmg_matrix_update_values_device(matrix, values), level)
                : CLMG_ERROR_INVALID_ARGUMENT;
}

const clmg_matrix *clmg_multigrid_matrix(const clmg_multigrid *mg, int level) {
  const mg_level *lv = level_of(mg, level);
  return lv ? clmg_operator_matrix(&lv->a) : NULL;
}

const clmg_operator *clmg_multigrid_operator(const clmg_multigrid *mg, int level) {
  const mg_level *lv = level_of(mg, level);
  return lv ? &lv->a : NULL;
}

const char *clmg_multigrid_smoother_name(const clmg_multigrid *mg, int level) {
  const mg_level *lv = level_of(mg, level);
  return lv && lv->smoother.name ? lv->smoother.name : "";
}

double clmg_multigrid_smoother_damping(const clmg_multigrid *mg, int level) {
  const mg_level *lv = level_of(mg, level);
  return lv && lv->smoother.damping ? lv->smoother.damping(lv->smoother.data) : 0.0;
}

double clmg_multigrid_lambda_max(const clmg_multigrid *mg, int level) {
  const mg_level *lv = level_of(mg, level);
  return lv && lv->smoother.parameter ? lv->smoother.parameter(lv->smoother.data) : 0.0;
}

int clmg_multigrid_tail_levels(const clmg_multigrid *mg) {
  return mg && mg->tail ? clmg_coarse_tail_top(mg->tail) + 1 : 0;
}

const char *clmg_multigrid_coarse_solver(const clmg_multigrid *mg) {
  return mg && mg->coarse.name ? mg->coarse.name : "none";
}

/* ---- the cycle ---- */

static clmg_status smooth(mg_level *lv, const clmg_vector *b, clmg_vector *x, int steps,
                          int zero_guess) {
  if (steps == 0)
    return zero_guess ? clmg_vector_fill(x, 0.0) : CLMG_SUCCESS;
  return lv->smoother.apply(lv->smoother.data, &lv->a, b, x, steps, zero_guess);
}

/* The smoothing steps on level l for `steps` on the finest: times
 * smoothing_growth per level below it (the variable V-cycle), rounded, at
 * most 64 times as many. */
static int level_steps(const clmg_multigrid *mg, int l, int steps) {
  double growth = mg->options.smoothing_growth;
  if (steps == 0 || !(growth > 1.0))
    return steps;
  double scaled = steps * pow(growth, mg->num_levels - 1 - l);
  return scaled > 64.0 * steps ? 64 * steps : (int)lround(scaled);
}

/* Pre-smoothing and the defect into lv->work, fused when the smoother can. */
static clmg_status smooth_and_defect(clmg_multigrid *mg, int l, mg_level *lv, const clmg_vector *b,
                                     clmg_vector *x, int zero_guess) {
  int steps = level_steps(mg, l, mg->options.pre_smoothing);
  if (steps > 0 && lv->smoother.apply_defect)
    return lv->smoother.apply_defect(lv->smoother.data, &lv->a, b, x, steps, zero_guess, lv->work);
  clmg_status status = clmg_hold(mg->context, smooth(lv, b, x, steps, zero_guess));
  return status == CLMG_SUCCESS ? clmg_operator_defect(&lv->a, b, x, lv->work) : status;
}

/* Pre-smoothing, the defect and its restriction into the coarse level's b,
 * with the level's fused kernels where it has them; *smoothed: where the
 * smoothed x lies (x, the fused level's partner vector, or NULL for x = 0
 * neither formed nor read). */
static clmg_status smooth_and_restrict(clmg_multigrid *mg, int l, const clmg_vector *b,
                                       clmg_vector *x, int zero_guess, clmg_vector **smoothed) {
  mg_level *lv = &mg->levels[l], *coarse = &mg->levels[l - 1];
  clmg_fused_level *f = mg->fused ? mg->fused[l] : NULL;
  const int steps = level_steps(mg, l, mg->options.pre_smoothing);
  const int restricts = clmg_fused_level_restricts(f);
  clmg_status status = CLMG_SUCCESS;
  *smoothed = x;
  if (clmg_fused_level_smooths(f) && steps > 0)
    status = clmg_fused_smooth(f, b, x, smoothed, steps, zero_guess);
  else if (restricts && steps == 0 && zero_guess)
    *smoothed = NULL;
  else if (restricts)
    status = smooth(lv, b, x, steps, zero_guess);
  else /* the defect below, fused with the smoothing where the smoother can */
    status = smooth_and_defect(mg, l, lv, b, x, zero_guess);
  /* distributed (no fused levels there), a failed step is held back
   * (clmg_hold): the restriction still exchanges its halo */
  status = clmg_hold(mg->context, status);
  if (status != CLMG_SUCCESS)
    return status;
  if (restricts)
    return clmg_fused_defect_restrict(f, b, *smoothed, coarse->b);
  if (clmg_fused_level_smooths(f) && steps > 0)
    status = clmg_operator_defect(&lv->a, b, *smoothed, lv->work);
  return status == CLMG_SUCCESS ? clmg_operator_apply(&lv->r, 1.0, lv->work, 0.0, coarse->b)
                                : status;
}

/* The prolongation x += P x_c of the smoothed x and post-smoothing, with
 * the level's fused kernels where it has them: the prolongation then
 * writes where the fused steps' last lands in x. */
static clmg_status prolong_and_smooth(clmg_multigrid *mg, int l, const clmg_vector *b,
                                      clmg_vector *x, clmg_vector *smoothed) {
  mg_level *lv = &mg->levels[l], *coarse = &mg->levels[l - 1];
  clmg_fused_level *f = mg->fused ? mg->fused[l] : NULL;
  const int steps = level_steps(mg, l, mg->options.post_smoothing);
  if (!clmg_fused_level_smooths(f)) {
    /* smoothed is x, or NULL for x = 0 */
    clmg_status status = clmg_hold(
        mg->context, clmg_operator_apply(&lv->p, 1.0, coarse->x, smoothed ? 1.0 : 0.0, x));
    return status == CLMG_SUCCESS ? smooth(lv, b, x, steps, 0) : status;
  }
  clmg_vector *target =
      clmg_fused_smoothing_launches(steps, 0) % 2 == 0 ? x : clmg_fused_level_partner(f);
  clmg_status status = clmg_fused_prolong(f, coarse->x, smoothed, target);
  if (status == CLMG_SUCCESS && steps > 0)
    status = clmg_fused_smooth(f, b, x, &target, steps, 0);
  if (status == CLMG_SUCCESS && target != x)
    status = clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid level %d: the fused smoothing did not end in x", l);
  return status;
}

/* One cycle of `type` on level l for A_l x = b; zero_guess: x is taken as 0
 * and not read. */
static clmg_status cycle(clmg_multigrid *mg, int l, clmg_cycle_type type, const clmg_vector *b,
                         clmg_vector *x, int zero_guess) {
  if (mg->tail && l <= clmg_coarse_tail_top(mg->tail))
    return clmg_coarse_tail_cycle(mg->tail, l, type, b, x, zero_guess);
  /* Distributed, each step's failure on this process is held back
   * (clmg_hold): the cycle goes on through every halo exchange the others
   * make, and the next reduction (the method's) ends the solve everywhere. */
  if (l == 0)
    return clmg_hold(mg->context, mg->coarse.solve(mg->coarse.data, &mg->levels[0].a, b, x));
  mg_level *coarse = &mg->levels[l - 1];
  clmg_vector *smoothed = x;
  clmg_status status =
      clmg_hold(mg->context, smooth_and_restrict(mg, l, b, x, zero_guess, &smoothed));
  if (status == CLMG_SUCCESS) {
    switch (type) {
    case CLMG_CYCLE_V:
      status = cycle(mg, l - 1, CLMG_CYCLE_V, coarse->b, coarse->x, 1);
      break;
    case CLMG_CYCLE_W:
      status = cycle(mg, l - 1, CLMG_CYCLE_W, coarse->b, coarse->x, 1);
      if (status == CLMG_SUCCESS && l - 1 > 0)
        status = cycle(mg, l - 1, CLMG_CYCLE_W, coarse->b, coarse->x, 0);
      break;
    case CLMG_CYCLE_F:
      status = cycle(mg, l - 1, CLMG_CYCLE_F, coarse->b, coarse->x, 1);
      if (status == CLMG_SUCCESS && l - 1 > 0)
        status = cycle(mg, l - 1, CLMG_CYCLE_V, coarse->b, coarse->x, 0);
      break;
    }
  }
  return status == CLMG_SUCCESS ? clmg_hold(mg->context, prolong_and_smooth(mg, l, b, x, smoothed))
                                : status;
}

static clmg_status check_finest_vector(clmg_multigrid *mg, const clmg_vector *v, const char *what,
                                       const char *caller) {
  const mg_level *finest = &mg->levels[mg->num_levels - 1];
  if (!v)
    return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller, what);
  if (clmg_vector_context(v) != mg->context || clmg_vector_length(v) != finest->n ||
      clmg_vector_type(v) != mg->precision)
    return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: %s must be a %s vector of %zu entries in the hierarchy's context (it "
                     "has %zu %s entries)",
                     caller, what, clmg_dtype_name(mg->precision), finest->n, clmg_vector_length(v),
                     clmg_dtype_name(clmg_vector_type(v)));
  return CLMG_SUCCESS;
}

static clmg_status run_cycle(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x,
                             int zero_guess, const char *caller) {
  clmg_status status = check_finest_vector(mg, b, "b", caller);
  if (status == CLMG_SUCCESS)
    status = check_finest_vector(mg, x, "x", caller);
  if (status == CLMG_SUCCESS && b == x)
    status = clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: b and x are the same vector",
                       caller);
  if (status != CLMG_SUCCESS)
    return status;
  status = cycle(mg, mg->num_levels - 1, mg->options.cycle, b, x, zero_guess);
  if (status != CLMG_SUCCESS && !clmg_failure_agreed(mg->context)) {
    char inner[CLMG_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", clmg_context_message(mg->context));
    return clmg_fail(mg->context, status, "%s: %s", caller, inner);
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_multigrid_cycle(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x) {
  if (!mg)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(mg->context);
  clmg_context_enter(mg->context);
  return clmg_context_leave(mg->context, run_cycle(mg, b, x, 0, "multigrid cycle"));
}

static clmg_status cycle_level(clmg_multigrid *mg, int level, const clmg_vector *b, clmg_vector *x,
                               int x_is_zero);

clmg_status clmg_multigrid_cycle_level(clmg_multigrid *mg, int level, const clmg_vector *b,
                                       clmg_vector *x, int x_is_zero) {
  if (!mg)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context_enter(mg->context);
  return clmg_context_leave(mg->context, cycle_level(mg, level, b, x, x_is_zero));
}

static clmg_status cycle_level(clmg_multigrid *mg, int level, const clmg_vector *b, clmg_vector *x,
                               int x_is_zero) {
  clmg_clear_message(mg->context);
  if (level < 0 || level >= mg->num_levels)
    return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "multigrid cycle: level %d; the hierarchy has levels 0 (coarsest) to %d",
                     level, mg->num_levels - 1);
  mg_level *lv = &mg->levels[level];
  const clmg_vector *v[] = {b, x};
  const char *names[] = {"b", "x"};
  for (int i = 0; i < 2; ++i)
    if (!v[i] || clmg_vector_context(v[i]) != mg->context || clmg_vector_length(v[i]) != lv->n ||
        clmg_vector_type(v[i]) != mg->precision)
      return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "multigrid cycle: %s must be a %s vector of level %d's %zu entries in the "
                       "hierarchy's context",
                       names[i], clmg_dtype_name(mg->precision), level, lv->n);
  if (b == x)
    return clmg_fail(mg->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "multigrid cycle: b and x are the same vector");
  clmg_status status = cycle(mg, level, mg->options.cycle, b, x, x_is_zero);
  if (status != CLMG_SUCCESS && !clmg_failure_agreed(mg->context)) {
    char inner[CLMG_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", clmg_context_message(mg->context));
    return clmg_fail(mg->context, status, "multigrid cycle on level %d: %s", level, inner);
  }
  return CLMG_SUCCESS;
}

static clmg_status multigrid_solve(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x,
                                   const clmg_krylov_options *options, clmg_krylov_result *result);

clmg_status clmg_multigrid_solve(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x,
                                 const clmg_krylov_options *options, clmg_krylov_result *result) {
  if (!mg || !result)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context_enter(mg->context);
  return clmg_context_leave(mg->context, multigrid_solve(mg, b, x, options, result));
}

/* Distributed, a step that fails on one process is held back (clmg_hold)
 * until the residual's norm, whose reduction ends the solve everywhere. */
static clmg_status multigrid_solve(clmg_multigrid *mg, const clmg_vector *b, clmg_vector *x,
                                   const clmg_krylov_options *options, clmg_krylov_result *result) {
  memset(result, 0, sizeof *result);
  clmg_context *context = mg->context;
  clmg_clear_message(context);
  clmg_krylov_options defaults;
  clmg_krylov_options_defaults(&defaults);
  if (mg->precision == CLMG_FLOAT)
    defaults.relative_tolerance = CLMG_FLOAT_DEFAULT_TOLERANCE;
  const clmg_krylov_options *o = options ? options : &defaults;
  const mg_level *finest = &mg->levels[mg->num_levels - 1];
  clmg_status status = check_finest_vector(mg, b, "b", "multigrid solve");
  if (status == CLMG_SUCCESS)
    status = check_finest_vector(mg, x, "x", "multigrid solve");
  double b_norm = 0, r_norm = 0;
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(b, &b_norm);
  if (status == CLMG_SUCCESS)
    status = clmg_hold(context, clmg_operator_defect(&finest->a, b, x, mg->residual));
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(mg->residual, &r_norm);
  if (status != CLMG_SUCCESS)
    return status;
  double reference = b_norm > 0 ? b_norm : r_norm;
  double target = fmax(o->relative_tolerance * reference, o->absolute_tolerance);
  size_t history_capacity = 0;
  result->initial_residual = r_norm;
  result->final_residual = r_norm;
  result->relative_residual = reference > 0 ? r_norm / reference : 0;
  if (o->keep_history)
    status = clmg_hold(context, clmg_history_append(context, result, &history_capacity,
                                                    result->relative_residual));
  /* the residuals of the last STALL_WINDOW cycles, for the stagnation test */
  enum { STALL_WINDOW = 5 };
  double recent[STALL_WINDOW] = {0};
  recent[0] = r_norm;
  while (status == CLMG_SUCCESS && r_norm > target && result->iterations < o->max_iterations) {
    status = clmg_hold(context, run_cycle(mg, b, x, 0, "multigrid solve"));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_operator_defect(&finest->a, b, x, mg->residual));
    if (status == CLMG_SUCCESS)
      status = clmg_nrm2(mg->residual, &r_norm);
    if (status != CLMG_SUCCESS)
      break;
    result->iterations++;
    result->final_residual = r_norm;
    result->relative_residual = r_norm / reference;
    if (!isfinite(r_norm) || r_norm > 1e6 * fmax(result->initial_residual, reference))
      return clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                       "multigrid solve: diverged: the relative residual became %.3e in cycle %d "
                       "(try a smaller omega or more smoothing)",
                       result->relative_residual, result->iterations);
    /* Less than 10% gained over the last STALL_WINDOW cycles: the iteration
     * has stalled, at the precision's rounding floor or because the cycle
     * does not reduce this error; more cycles would not help. */
    double before = recent[result->iterations % STALL_WINDOW];
    if (result->iterations >= STALL_WINDOW && r_norm > 0.9 * before && r_norm > target) {
      if (o->keep_history)
        clmg_history_append(context, result, &history_capacity, result->relative_residual);
      return clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                       "multigrid solve: stalled at relative residual %.3e after %d cycles "
                       "(%.3e %d cycles before; tolerance %.3e). %s",
                       result->relative_residual, result->iterations, before / reference,
                       STALL_WINDOW, o->relative_tolerance,
                       mg->precision == CLMG_FLOAT
                           ? "This is float's rounding floor: use a tolerance of 1e-5 or more, or "
                             "double or mixed precision"
                           : "The cycle no longer reduces the error: check the smoother and its "
                             "steps, or the tolerance against the rounding floor");
    }
    recent[result->iterations % STALL_WINDOW] = r_norm;
    if (o->keep_history)
      status = clmg_hold(context, clmg_history_append(context, result, &history_capacity,
                                                      result->relative_residual));
    if (status == CLMG_SUCCESS && o->monitor &&
        o->monitor(o->monitor_data, result->iterations, result->relative_residual))
      break;
  }
  if (status != CLMG_SUCCESS)
    return status;
  result->converged = r_norm <= target;
  if (!result->converged)
    return clmg_fail(context, CLMG_ERROR_NOT_CONVERGED,
                     "multigrid solve: relative residual %.3e after %d cycles "
                     "(the iteration limit), tolerance %.3e",
                     result->relative_residual, result->iterations, o->relative_tolerance);
  return CLMG_SUCCESS;
}

/* ---- as a preconditioner ---- */

static clmg_status multigrid_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  clmg_multigrid *mg = data;
  clmg_context_enter(mg->context); /* agreed as it returns when applied alone */
  return clmg_context_leave(mg->context, run_cycle(mg, r, z, 1, "multigrid preconditioner"));
}

/* The A-energy x.(A x) of x (work: a vector of the level). */
static clmg_status energy(const mg_level *level, const clmg_vector *x, clmg_vector *work,
                          double *value) {
  clmg_status status = clmg_operator_apply(&level->a, 1.0, x, 0.0, work);
  return status == CLMG_SUCCESS ? clmg_dot(x, work, value) : status;
}

enum { GROWTH_ROUNDS = 12 };

/* One level's smoothing as an error propagator: from a pseudo-random
 * error e (b = 0), rounds of the pre- and post-smoothing steps of a cycle;
 * *growth is sqrt(e'.A e' / e.A e) of the last round, which a convergent
 * smoother keeps below 1, and
 * *before the energy e.A e (not positive: the level's matrix is not
 * positive definite). */
static clmg_status smoother_growth(clmg_multigrid *mg, int l, double *before, double *growth) {
  mg_level *level = &mg->levels[l];
  size_t n = level->n;
  clmg_vector *e = NULL, *zero = NULL, *work = NULL;
  clmg_status status = clmg_vector_create_unset(mg->context, mg->precision, n, &e);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill_pseudo_random(e, 0x2545f4914f6cdd1dull + (uint64_t)n, 0, -1.0, 1.0);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(mg->context, mg->precision, n, &zero);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(mg->context, mg->precision, n, &work);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(zero, 0.0);
  double energy_now = 0, after = 0;
  if (status == CLMG_SUCCESS)
    status = energy(level, e, work, before);
  energy_now = *before;
  *growth = 0;
  /* power steps on the propagator: the growth of the last round
   * approaches that of its dominant mode (a single round of a random e
   * hides a few diverging modes among many damped ones) */
  int steps[2] = {mg->options.pre_smoothing, mg->options.post_smoothing};
  for (int round = 0; round < GROWTH_ROUNDS && status == CLMG_SUCCESS && energy_now > 0; ++round) {
    for (int k = 0; k < 2 && status == CLMG_SUCCESS; ++k)
      if (steps[k] > 0)
        status = level->smoother.apply(level->smoother.data, &level->a, zero, e, steps[k], 0);
    if (status == CLMG_SUCCESS)
      status = energy(level, e, work, &after);
    if (status != CLMG_SUCCESS)
      break;
    *growth = after >= 0 && isfinite(after) ? sqrt(after / energy_now) : NAN;
    if (!(*growth < 1) || !(after > 0))
      break;
    status = clmg_scal(1.0 / sqrt(after), e);
    energy_now = 1;
  }
  clmg_vector_destroy(e);
  clmg_vector_destroy(zero);
  clmg_vector_destroy(work);
  return status;
}

/* The preconditioner's explain: the first level, from the finest down,
 * whose matrix is not positive definite or whose smoothing does not
 * contract the error in the energy norm; else what else breaks symmetry. */
static void multigrid_explain(void *data, char *text, size_t size) {
  clmg_multigrid *mg = data;
  const char *advice = "try a smoother that keeps the cycle SPD on any SPD matrix: jacobi-rho "
                       "(omega from an estimate of rho(D^-1 A)), chebyshev or gauss-seidel";
  for (int l = mg->num_levels - 1; l >= 1; --l) {
    double before = 0, growth = 0;
    const char *name = mg->levels[l].smoother.name ? mg->levels[l].smoother.name : "smoother";
    if (smoother_growth(mg, l, &before, &growth) != CLMG_SUCCESS) {
      clmg_clear_message(mg->context);
      break;
    }
    if (!(before > 0)) {
      snprintf(text, size,
               "level %d (%zu rows, 0 the coarsest) has a matrix that is not positive definite "
               "(e.(A e) = %g for a random e)",
               l, mg->levels[l].n, before);
      return;
    }
    if (!(growth < 1)) {
      snprintf(text, size,
               "the %s smoother on level %d (%zu rows, 0 the coarsest) does not converge: %d + "
               "%d steps multiply the error's energy norm by %.3g; %s",
               name, l, mg->levels[l].n, mg->options.pre_smoothing, mg->options.post_smoothing,
               growth, advice);
      return;
    }
  }
  if (mg->options.pre_smoothing != mg->options.post_smoothing)
    snprintf(text, size, "%d pre- against %d post-smoothing steps make the cycle nonsymmetric",
             mg->options.pre_smoothing, mg->options.post_smoothing);
  else
    snprintf(text, size,
             "every level's smoothing contracts the error, so a nonsymmetric smoother or coarse "
             "solve (an inexact Krylov one) is the likely cause; %s, or a direct coarse solve",
             advice);
}

clmg_status clmg_multigrid_preconditioner(clmg_multigrid *mg, clmg_preconditioner *preconditioner) {
  if (!mg || !preconditioner)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(preconditioner, 0, sizeof *preconditioner);
  preconditioner->apply = multigrid_apply;
  preconditioner->data = mg;
  preconditioner->destroy = NULL;
  preconditioner->name = "multigrid";
  preconditioner->explain = multigrid_explain;
  return CLMG_SUCCESS;
}

/* ---- traffic ---- */

/* How often a cycle of `type` started on level l visits each level, and
 * how many of those visits start from x = 0 (the first below each level
 * visit; the finest as the caller says). */
static void count_visits(int l, clmg_cycle_type type, int x_is_zero, double *visits,
                         double *zero_visits) {
  visits[l] += 1;
  zero_visits[l] += x_is_zero;
  if (l == 0)
    return;
  switch (type) {
  case CLMG_CYCLE_V:
    count_visits(l - 1, CLMG_CYCLE_V, 1, visits, zero_visits);
    break;
  case CLMG_CYCLE_W:
    count_visits(l - 1, CLMG_CYCLE_W, 1, visits, zero_visits);
    if (l - 1 > 0)
      count_visits(l - 1, CLMG_CYCLE_W, 0, visits, zero_visits);
    break;
  case CLMG_CYCLE_F:
    count_visits(l - 1, CLMG_CYCLE_F, 1, visits, zero_visits);
    if (l - 1 > 0)
      count_visits(l - 1, CLMG_CYCLE_V, 0, visits, zero_visits);
    break;
  }
}

double clmg_multigrid_cycle_bytes(const clmg_multigrid *mg, int x_is_zero) {
  if (!mg)
    return 0;
  double *visits = calloc(2 * (size_t)mg->num_levels, sizeof *visits);
  if (!visits)
    return 0;
  double *zero_visits = visits + mg->num_levels;
  count_visits(mg->num_levels - 1, mg->options.cycle, x_is_zero != 0, visits, zero_visits);
  double real = (double)clmg_dtype_size(mg->precision);
  double bytes = 0;
  for (int l = 1; l < mg->num_levels; ++l) {
    const mg_level *lv = &mg->levels[l];
    double n = (double)lv->n, n_coarse = (double)mg->levels[l - 1].n;
    const int pre = level_steps(mg, l, mg->options.pre_smoothing),
              post = level_steps(mg, l, mg->options.post_smoothing);
    if (lv->smoother.bytes) {
      void *data = lv->smoother.data;
      if (pre > 0)
        bytes += zero_visits[l] * lv->smoother.bytes(data, &lv->a, pre, 1) +
                 (visits[l] - zero_visits[l]) * lv->smoother.bytes(data, &lv->a, pre, 0);
      if (post > 0)
        bytes += visits[l] * lv->smoother.bytes(data, &lv->a, post, 0);
    }
    double level = clmg_operator_bytes(&lv->a) + 3 * n * real;        /* defect */
    level += clmg_operator_bytes(&lv->r) + (n + n_coarse) * real;     /* restrict */
    level += clmg_operator_bytes(&lv->p) + (n_coarse + 2 * n) * real; /* prolong */
    bytes += visits[l] * level;
  }
  const mg_level *c = &mg->levels[0];
  if (mg->coarse.bytes)
    bytes += visits[0] * mg->coarse.bytes(mg->coarse.data, &c->a);
  free(visits);
  return bytes;
}

double clmg_multigrid_iteration_bytes(const clmg_multigrid *mg) {
  if (!mg)
    return 0;
  const mg_level *finest = &mg->levels[mg->num_levels - 1];
  double real = (double)clmg_dtype_size(mg->precision);
  return clmg_multigrid_cycle_bytes(mg, 0) + clmg_operator_bytes(&finest->a) +
         4 * (double)finest->n * real; /* the defect and its norm */
}
