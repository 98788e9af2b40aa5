/* The finite-element Poisson problem composed from an options database
 * (clmg/fe_solve.h): the one place that puts the hierarchy, the multigrid,
 * the mixed-precision outer matrix, the solver, b and x0 together, for
 * `clmg poisson`, Python's clmg.poisson and the tests. */
#include "clmg/fe_solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "solver/solver_internal.h"

struct clmg_fe_poisson {
  clmg_context *context;
  clmg_fe_poisson_spec spec;
  clmg_options *options;
  clmg_multigrid_options multigrid_options;
  clmg_fe_poisson_info info;
  clmg_fe_hierarchy hierarchy;     /* host assembly */
  clmg_fe_device_hierarchy device; /* device assembly */
  clmg_csr matrix;                 /* keep_matrix with device assembly: the finest one */
  clmg_multigrid *multigrid;
  clmg_matrix *outer_matrix; /* mixed: the finest matrix in double, for CG */
  clmg_operator outer;
  clmg_solver *solver;
  clmg_vector *b, *x;
};

void clmg_fe_poisson_spec_defaults(clmg_fe_poisson_spec *spec) {
  if (!spec)
    return;
  memset(spec, 0, sizeof *spec);
  spec->level = 1;
  spec->degree = 1;
  clmg_poisson_problem_unit_source(&spec->problem);
  spec->numbering = CLMG_NUMBERING_2LV;
  spec->assembly = CLMG_FE_ASSEMBLY_AUTO;
  spec->seed = 1;
}

void clmg_fe_poisson_result_free(clmg_fe_poisson_result *result) {
  if (!result)
    return;
  clmg_krylov_result_free(&result->solve);
  free(result->u);
  free(result->b);
  clmg_mesh_free(&result->mesh);
  clmg_csr_free(&result->matrix);
  free(result->perm);
  memset(result, 0, sizeof *result);
}

static clmg_status set_option(clmg_options *options, clmg_context *context, const char *key,
                              const char *value) {
  clmg_error error = {{0}};
  clmg_status status = clmg_options_set(options, key, value, &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "%s", error.message);
  return CLMG_SUCCESS;
}

clmg_status clmg_fe_poisson_options(clmg_options *db, clmg_context *context, int paper_smoothing,
                                    clmg_multigrid_options *mg) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!db || !mg)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_fe_poisson_options: options and multigrid must not be NULL");
  clmg_status status = CLMG_SUCCESS;
  /* precision=auto on a device without fp64 is float; double or mixed asked there fails */
  if (!clmg_context_device(context)->has_fp64) {
    if (!clmg_options_is_set(db, "precision"))
      status = set_option(db, context, "precision", "float");
    else if (strcmp(clmg_options_get(db, "precision"), "float") != 0)
      return clmg_fail(context, CLMG_ERROR_UNSUPPORTED,
                       "precision=%s: the device has no double precision (fp64): use "
                       "precision=float",
                       clmg_options_get(db, "precision"));
  }
  /* The default composition where the device has fp64 (nothing of
   * precision, krylov or the smoothing steps given): a float V(2,2) cycle
   * inside double CG. On the H200 (CIRCLE Q1 level 10, 2.1M unknowns) it
   * solved in 8.4 ms against 17.0 ms of double V(4,4) cycles alone, on pocl
   * (level 8) 50 against 79 ms, to the same tolerance, recomputed in double.
   * The paper's smoothing (the blood vessel mesh) keeps its own, and so do
   * distributed runs (the float cycle inside CG runs on one process). */
  if (status == CLMG_SUCCESS && clmg_context_device(context)->has_fp64 && !paper_smoothing &&
      !clmg_context_is_distributed(context) && !clmg_options_is_set(db, "precision") &&
      !clmg_options_is_set(db, "krylov")) {
    status = set_option(db, context, "precision", "mixed");
    if (status == CLMG_SUCCESS && !clmg_options_is_set(db, "mg.steps") &&
        !clmg_options_is_set(db, "mg.pre") && !clmg_options_is_set(db, "mg.post"))
      status = set_option(db, context, "mg.steps", "2");
  }
  const char *precision = clmg_options_get(db, "precision");
  if (status == CLMG_SUCCESS && !clmg_options_is_set(db, "krylov"))
    status = set_option(db, context, "krylov", strcmp(precision, "mixed") == 0 ? "cg" : "none");
  if (status == CLMG_SUCCESS && !clmg_options_is_set(db, "maxit"))
    status = set_option(db, context, "maxit", "200");
  if (status == CLMG_SUCCESS && paper_smoothing) {
    if (!clmg_options_is_set(db, "mg.steps") && !clmg_options_is_set(db, "mg.pre") &&
        !clmg_options_is_set(db, "mg.post"))
      status = set_option(db, context, "mg.steps", "64");
    const char *smoother = clmg_options_get(db, "mg.smoother");
    if (status == CLMG_SUCCESS && !clmg_options_is_set(db, "mg.omega") &&
        (strcmp(smoother, "auto") == 0 || strcmp(smoother, "jacobi") == 0))
      status = set_option(db, context, "mg.omega", "0.5");
  }
  if (status != CLMG_SUCCESS)
    return status;
  const char *krylov = clmg_options_get(db, "krylov");
  if (strcmp(krylov, "none") != 0 && strcmp(krylov, "cg") != 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "krylov=%s: the Poisson problem runs multigrid cycles (none) or CG (cg)",
                     krylov);
  if (strcmp(precision, "mixed") == 0 && strcmp(krylov, "none") == 0)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "precision=mixed runs the float cycle inside double CG: krylov=none has no "
                     "CG (use krylov=cg)");
  size_t coarse_max_rows = mg->coarse_max_rows;
  status = clmg_options_multigrid(db, context, mg);
  if (status != CLMG_SUCCESS)
    return status;
  mg->coarse_max_rows = coarse_max_rows;
  /* what the cycle's autos became, for the echoed options */
  char text[32];
  if (!mg->smoother_factory)
    status = set_option(db, context, "mg.smoother", clmg_smoother_type_name(mg->smoother));
  snprintf(text, sizeof text, "%d", mg->pre_smoothing);
  if (status == CLMG_SUCCESS)
    status = set_option(db, context, "mg.pre", text);
  snprintf(text, sizeof text, "%d", mg->post_smoothing);
  if (status == CLMG_SUCCESS)
    status = set_option(db, context, "mg.post", text);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_matrix_format_parse(clmg_options_get(db, "format"), &mg->matrix.format);
  mg->matrix.precision = strcmp(precision, "double") == 0 ? CLMG_DOUBLE : CLMG_FLOAT;
  return CLMG_SUCCESS;
}

void clmg_fe_poisson_destroy(clmg_fe_poisson *p) {
  if (!p)
    return;
  clmg_solver_destroy(p->solver);
  clmg_operator_destroy(&p->outer);
  clmg_vector_destroy(p->b);
  clmg_vector_destroy(p->x);
  clmg_multigrid_destroy(p->multigrid);
  clmg_matrix_destroy(p->outer_matrix);
  clmg_fe_device_hierarchy_free(&p->device);
  clmg_fe_hierarchy_free(&p->hierarchy);
  clmg_csr_free(&p->matrix);
  clmg_options_destroy(p->options);
  free(p);
}

/* The hierarchy on the device or the host, and its sizes. */
static clmg_status build_hierarchy(clmg_fe_poisson *p) {
  const clmg_fe_poisson_spec *s = &p->spec;
  clmg_fe_poisson_info *info = &p->info;
  double start = clmg_seconds_now();
  clmg_status status;
  if (info->on_device) {
    status = clmg_fe_poisson_hierarchy_device(p->context, s->coarse, s->level, s->degree,
                                              &s->problem, &p->device);
    if (status != CLMG_SUCCESS)
      return status;
    const clmg_fe_device_hierarchy *h = &p->device;
    info->unknowns = h->a[h->num_levels - 1].rows;
    info->nonzeros = clmg_csr_device_nnz(&h->a[h->num_levels - 1]);
    info->levels = h->num_levels;
    info->refine_s = h->refine_s;
    info->numbering_s = h->number_s;
    info->dirichlet_s = h->dirichlet_s;
    info->device_assembly_s = h->device_s;
    if (s->keep_matrix) {
      clmg_error error = {{0}};
      status = clmg_csr_device_download(&h->a[h->num_levels - 1], &p->matrix, &error);
      if (status != CLMG_SUCCESS)
        return clmg_fail(p->context, status, "downloading the finest matrix: %s", error.message);
    }
  } else {
    clmg_error error = {{0}};
    status = clmg_fe_poisson_hierarchy(s->coarse, s->level, s->degree, &s->problem, s->numbering,
                                       s->seed, &p->hierarchy, &error);
    if (status != CLMG_SUCCESS)
      return clmg_fail(p->context, status, "%s", error.message);
    const clmg_fe_hierarchy *h = &p->hierarchy;
    info->unknowns = h->a[h->num_levels - 1].rows;
    info->nonzeros = clmg_csr_nnz(&h->a[h->num_levels - 1]);
    info->levels = h->num_levels;
  }
  info->coarse_unknowns = info->direct_rows =
      info->on_device ? p->device.a[0].rows : p->hierarchy.a[0].rows;
  for (int l = 0; l < info->levels && s->coarse_max_rows > 0; l++) {
    size_t rows = info->on_device ? p->device.a[l].rows : p->hierarchy.a[l].rows;
    if (rows <= s->coarse_max_rows)
      info->direct_rows = rows;
  }
  info->assembly_s = clmg_seconds_now() - start;
  return CLMG_SUCCESS;
}

clmg_status clmg_fe_poisson_create(clmg_context *context, const clmg_fe_poisson_spec *spec,
                                   const clmg_options *options, clmg_fe_poisson **out) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  if (!out || !spec || !spec->coarse)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_fe_poisson_create: spec, its coarse mesh and out must not be NULL");
  *out = NULL;
  if (spec->level < 1 || spec->level > 16)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "level must be 1 to 16, not %d",
                     spec->level);
  if (spec->degree != 1 && spec->degree != 2)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "the element is Q1 or Q2 (degree 1 or 2), not %d", spec->degree);
  if (spec->assembly != CLMG_FE_ASSEMBLY_AUTO && spec->assembly != CLMG_FE_ASSEMBLY_DEVICE &&
      spec->assembly != CLMG_FE_ASSEMBLY_HOST)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "unknown assembly %d",
                     (int)spec->assembly);
  int on_device = spec->assembly == CLMG_FE_ASSEMBLY_AUTO
                      ? spec->numbering == CLMG_NUMBERING_2LV
                      : spec->assembly == CLMG_FE_ASSEMBLY_DEVICE;
  if (on_device && spec->numbering != CLMG_NUMBERING_2LV)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "assembly on the device builds the 2lv numbering only; assemble on the host "
                     "for the numbering '%s'",
                     clmg_numbering_name(spec->numbering));
  clmg_fe_poisson *p = calloc(1, sizeof *p);
  if (!p)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for the problem");
  p->context = context;
  p->spec = *spec;
  p->info.on_device = on_device;
  p->info.refine_s = p->info.numbering_s = p->info.dirichlet_s = p->info.device_assembly_s = NAN;
  clmg_error error = {{0}};
  clmg_status status = options ? clmg_options_copy(options, &p->options, &error)
                               : clmg_options_create(&p->options, &error);
  if (status != CLMG_SUCCESS) {
    clmg_fe_poisson_destroy(p);
    return clmg_fail(context, status, "%s", error.message);
  }
  p->multigrid_options.coarse_max_rows = spec->coarse_max_rows;
  status =
      clmg_fe_poisson_options(p->options, context, spec->paper_smoothing, &p->multigrid_options);
  if (status == CLMG_SUCCESS) {
    clmg_fe_poisson_info *info = &p->info;
    const clmg_options *db = p->options;
    info->mixed = strcmp(clmg_options_get(db, "precision"), "mixed") == 0;
    info->use_cg = strcmp(clmg_options_get(db, "krylov"), "cg") == 0;
    info->tolerance = strcmp(clmg_options_get(db, "tol"), "auto") == 0
                          ? clmg_default_tolerance(
                                info->mixed ? CLMG_DOUBLE : p->multigrid_options.matrix.precision)
                          : strtod(clmg_options_get(db, "tol"), NULL);
    status = build_hierarchy(p);
  }
  if (status != CLMG_SUCCESS) {
    clmg_fe_poisson_destroy(p);
    return status;
  }
  *out = p;
  return CLMG_SUCCESS;
}

/* The multigrid (and, for mixed precision, the finest matrix in double for
 * CG) from the assembled levels, whose matrices it then holds alone. */
static clmg_status create_multigrid(clmg_fe_poisson *p) {
  const clmg_multigrid_options *mg = &p->multigrid_options;
  clmg_matrix_options outer = mg->matrix;
  outer.precision = CLMG_DOUBLE;
  if (!p->info.on_device) {
    const clmg_fe_hierarchy *h = &p->hierarchy;
    clmg_status status =
        clmg_multigrid_create(p->context, h->num_levels, h->a, h->p, h->r, mg, &p->multigrid);
    if (status == CLMG_SUCCESS && p->info.mixed)
      status = clmg_matrix_create(p->context, &h->a[h->num_levels - 1], &outer, &p->outer_matrix);
    return status;
  }
  clmg_fe_device_hierarchy *h = &p->device;
  clmg_status status = clmg_multigrid_create_from_csr_device(p->context, h->num_levels, h->a, h->p,
                                                             h->r, mg, &p->multigrid);
  const clmg_csr_device *finest = &h->a[h->num_levels - 1];
  if (status == CLMG_SUCCESS && p->info.mixed)
    status = clmg_matrix_create_from_device(p->context, finest->rows, finest->cols, finest->row_ptr,
                                            finest->col, finest->val, &outer, &p->outer_matrix);
  for (int l = 0; l < h->num_levels; l++) {
    clmg_csr_device_free(&h->a[l]);
    clmg_csr_device_free(&h->p[l]);
    clmg_csr_device_free(&h->r[l]);
  }
  return status;
}

clmg_status clmg_fe_poisson_setup(clmg_fe_poisson *p) {
  if (!p)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (p->solver)
    return clmg_fail(p->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_fe_poisson_setup: the problem is set up already");
  clmg_clear_message(p->context);
  clmg_fe_poisson_info *info = &p->info;
  clmg_dtype precision = info->mixed ? CLMG_DOUBLE : p->multigrid_options.matrix.precision;
  double start = clmg_seconds_now();
  clmg_status status = create_multigrid(p);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(p->context, precision, info->unknowns, &p->b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(p->context, precision, info->unknowns, &p->x);
  if (status == CLMG_SUCCESS)
    status = info->on_device ? clmg_vector_convert(p->device.b, p->b)
                             : clmg_vector_upload_doubles(p->b, p->hierarchy.b);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(p->context);
  info->upload_s = clmg_seconds_now() - start;
  if (status != CLMG_SUCCESS)
    return status;
  /* the solver, whose setup runs one iteration on scratch vectors: every
   * kernel of the solve is compiled (or loaded) here */
  start = clmg_seconds_now();
  const clmg_operator *fine =
      clmg_multigrid_operator(p->multigrid, clmg_multigrid_levels(p->multigrid) - 1);
  if (info->mixed) {
    status = clmg_operator_from_matrix(p->outer_matrix, 0, &p->outer);
    fine = &p->outer;
  }
  if (status == CLMG_SUCCESS)
    status =
        clmg_solver_create_multigrid(p->context, fine, p->multigrid, 1, p->options, &p->solver);
  if (status == CLMG_SUCCESS) /* the initial guess: g on Dirichlet DOFs, 0 elsewhere */
    status = info->on_device ? clmg_vector_convert(p->device.x0, p->x)
                             : clmg_vector_upload_doubles(p->x, p->hierarchy.x0);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(p->context);
  info->kernels_s = clmg_seconds_now() - start;
  if (status == CLMG_SUCCESS) { /* coarse_max_rows may have dropped levels */
    info->levels = clmg_multigrid_levels(p->multigrid);
    info->coarse_unknowns = clmg_multigrid_operator(p->multigrid, 0)->rows;
  }
  return status;
}

clmg_status clmg_fe_poisson_solve(clmg_fe_poisson *p, clmg_krylov_monitor monitor,
                                  void *monitor_data, clmg_fe_poisson_result *result) {
  if (!p)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!result || !p->solver)
    return clmg_fail(p->context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_fe_poisson_solve: %s",
                     !result ? "result must not be NULL" : "set the problem up first");
  clmg_krylov_result_free(&result->solve);
  clmg_solver_set_monitor(p->solver, monitor, monitor_data);
  clmg_counters before;
  clmg_context_counters(p->context, &before);
  double start = clmg_seconds_now();
  clmg_status status = clmg_solver_solve(p->solver, p->b, p->x, &result->solve);
  clmg_context_counters(p->context, &result->counts);
  result->counts.commands -= before.commands;
  result->counts.host_waits -= before.host_waits;
  /* the solver's message, before clmg_finish clears it */
  snprintf(result->message, sizeof result->message, "%s",
           status == CLMG_SUCCESS ? "" : clmg_context_message(p->context));
  result->status = status;
  clmg_status finished = CLMG_SUCCESS;
  if (status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED)
    finished = clmg_finish(p->context);
  result->solve_s = clmg_seconds_now() - start;
  clmg_solver_set_monitor(p->solver, NULL, NULL);
  result->info = p->info;
  if (finished != CLMG_SUCCESS) {
    result->status = finished;
    snprintf(result->message, sizeof result->message, "%s", clmg_context_message(p->context));
    return finished;
  }
  if (status != CLMG_SUCCESS && status != CLMG_ERROR_NOT_CONVERGED)
    return status;
  if (status == CLMG_ERROR_NOT_CONVERGED) /* the message again for the caller's report */
    clmg_fail(p->context, status, "%s", result->message);
  return status;
}

clmg_status clmg_fe_poisson_fetch(clmg_fe_poisson *p, clmg_fe_poisson_result *result) {
  if (!p)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!result || !p->x)
    return clmg_fail(p->context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_fe_poisson_fetch: %s",
                     !result ? "result must not be NULL" : "set the problem up and solve first");
  clmg_clear_message(p->context);
  free(result->u);
  free(result->b);
  free(result->perm);
  clmg_mesh_free(&result->mesh);
  clmg_csr_free(&result->matrix);
  result->u = result->b = NULL;
  result->perm = NULL;
  size_t n = clmg_vector_length(p->x);
  result->n = n;
  int on_device = p->info.on_device;
  double *numbered = malloc((n ? n : 1) * sizeof *numbered);
  result->u = malloc((n ? n : 1) * sizeof *result->u);
  result->b = malloc((n ? n : 1) * sizeof *result->b);
  if (!numbered || !result->u || !result->b) {
    free(numbered);
    return clmg_fail(p->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory for the solution (%zu values)", n);
  }
  clmg_status status = clmg_vector_download_doubles(p->x, numbered);
  if (status == CLMG_SUCCESS && on_device) { /* 2LV: the mesh's own numbering */
    memcpy(result->u, numbered, n * sizeof *numbered);
    status = clmg_vector_download_doubles(p->b, result->b);
    if (status == CLMG_SUCCESS)
      status = clmg_fe_device_hierarchy_fetch_finest(p->context, &p->device);
  } else if (status == CLMG_SUCCESS) {
    clmg_fe_hierarchy_unpermute(&p->hierarchy, numbered, result->u);
    clmg_fe_hierarchy_unpermute(&p->hierarchy, p->hierarchy.b, result->b);
  }
  free(numbered);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_error error = {{0}};
  const clmg_mesh *finest = on_device ? &p->device.meshes[p->device.num_levels - 1]
                                      : &p->hierarchy.meshes[p->hierarchy.num_levels - 1];
  status = clmg_mesh_copy(finest, &result->mesh, &error);
  if (status == CLMG_SUCCESS && p->spec.keep_matrix) {
    if (on_device) {
      status = clmg_csr_copy(&p->matrix, &result->matrix, &error);
    } else {
      const clmg_fe_hierarchy *h = &p->hierarchy;
      status = clmg_csr_copy(&h->a[h->num_levels - 1], &result->matrix, &error);
      result->perm = status == CLMG_SUCCESS ? malloc((n ? n : 1) * sizeof *result->perm) : NULL;
      if (status == CLMG_SUCCESS && !result->perm) {
        status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
        snprintf(error.message, sizeof error.message, "no host memory for the permutation");
      }
      if (result->perm)
        memcpy(result->perm, h->perm[h->num_levels - 1], n * sizeof *result->perm);
    }
  }
  if (status != CLMG_SUCCESS)
    return clmg_fail(p->context, status, "%s", error.message);
  return CLMG_SUCCESS;
}

const clmg_fe_poisson_info *clmg_fe_poisson_get_info(const clmg_fe_poisson *p) {
  return p ? &p->info : NULL;
}

const clmg_options *clmg_fe_poisson_options_used(const clmg_fe_poisson *p) {
  return p ? p->options : NULL;
}

const clmg_multigrid_options *clmg_fe_poisson_multigrid_options(const clmg_fe_poisson *p) {
  return p ? &p->multigrid_options : NULL;
}

clmg_multigrid *clmg_fe_poisson_multigrid(const clmg_fe_poisson *p) {
  return p ? p->multigrid : NULL;
}

clmg_solver *clmg_fe_poisson_solver(const clmg_fe_poisson *p) {
  return p ? p->solver : NULL;
}

clmg_status clmg_poisson_problem_solve(clmg_context *context, const clmg_fe_poisson_spec *spec,
                                       const clmg_options *options, clmg_krylov_monitor monitor,
                                       void *monitor_data, clmg_fe_poisson_result *result) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!result)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_poisson_problem_solve: result must not be NULL");
  memset(result, 0, sizeof *result);
  clmg_fe_poisson *p = NULL;
  clmg_status status = clmg_fe_poisson_create(context, spec, options, &p);
  if (status == CLMG_SUCCESS)
    status = clmg_fe_poisson_setup(p);
  clmg_status solved = CLMG_SUCCESS;
  if (status == CLMG_SUCCESS) {
    solved = clmg_fe_poisson_solve(p, monitor, monitor_data, result);
    status = solved == CLMG_ERROR_NOT_CONVERGED ? CLMG_SUCCESS : solved;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_fe_poisson_fetch(p, result);
  clmg_fe_poisson_destroy(p);
  if (status != CLMG_SUCCESS) {
    clmg_fe_poisson_result_free(result);
    return status;
  }
  if (solved != CLMG_SUCCESS)
    clmg_fail(context, solved, "%s", result->message);
  return solved;
}
