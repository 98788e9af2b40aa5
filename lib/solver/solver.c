/* The solver an options database describes (clmg/solver.h): the one place
 * where AUTO choices are resolved and where a Krylov method, a
 * preconditioner and a multigrid hierarchy are put together. */
#define _POSIX_C_SOURCE 200809L /* locale_t, for core/textio.h */

#include "solver/solver_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amg/amg_internal.h"
#include "core/internal.h"
#include "core/textio.h"
#include "la/internal.h"

/* A matrix is taken for symmetric when every |a_ij - a_ji| is at most this
 * much of the larger (clmg_csr_is_symmetric). */
static const double SYMMETRY_TOLERANCE = 1e-8;

/* ---- AUTO, resolved ---- */

/* ---- row checks on the host's cores (clmg_host_first_flagged) ---- */

static int diagonal_not_positive(const void *data, size_t i) {
  const clmg_csr *a = data;
  double diagonal = 0;
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
    if ((size_t)a->col[k] == i)
      diagonal = a->val[k];
  return !(diagonal > 0);
}

static int row_of_zeros(const void *data, size_t i) {
  const clmg_csr *a = data;
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
    if (a->val[k] != 0)
      return 0;
  return 1;
}

/* krylov=auto: CG when A is symmetric with a positive diagonal, else GMRES
 * (CG on anything else may break down or diverge; GMRES assumes nothing). */
static int looks_spd(const clmg_csr *a) {
  return clmg_csr_is_symmetric(a, SYMMETRY_TOLERANCE) &&
         clmg_host_first_flagged(a->rows, 16384, diagonal_not_positive, a) == a->rows;
}

clmg_krylov_method clmg_solver_auto_method(const clmg_csr *a) {
  return a && a->row_ptr && looks_spd(a) ? CLMG_KRYLOV_CG : CLMG_KRYLOV_GMRES;
}

static clmg_status fail_error(clmg_context *context, clmg_status status, const clmg_error *error) {
  return clmg_fail(context, status, "%s", error->message);
}

/* Resolves krylov, precision and tol in s->options; symmetric: what is known
 * of A (1: symmetric with a positive diagonal). */
static clmg_status resolve_common(clmg_solver *s, int symmetric) {
  clmg_error error = {{0}};
  clmg_options *o = s->options;
  clmg_status status = CLMG_SUCCESS;
  if (clmg_options_is_auto(o, "krylov"))
    status = clmg_options_resolve(o, "krylov", symmetric ? "cg" : "gmres", &error);
  s->cycles_only = clmg_options_is(o, "krylov", "none");
  if (!s->cycles_only)
    clmg_krylov_method_parse(clmg_options_get(o, "krylov"), &s->method);
  s->mixed = clmg_options_is(o, "precision", "mixed");
  s->precision = clmg_options_is(o, "precision", "float") ? CLMG_FLOAT : CLMG_DOUBLE;
  if (status == CLMG_SUCCESS && clmg_options_is_auto(o, "tol")) {
    char text[32];
    snprintf(text, sizeof text, "%g", clmg_default_tolerance(s->precision));
    status = clmg_options_resolve(o, "tol", text, &error);
  }
  if (status != CLMG_SUCCESS)
    return fail_error(s->context, status, &error);
  status = clmg_context_check_precision(s->context, s->precision);
  if (status == CLMG_SUCCESS && s->mixed)
    status = clmg_context_check_precision(s->context, CLMG_FLOAT);
  if (status != CLMG_SUCCESS)
    return status;
  clmg_krylov_options_defaults(&s->krylov);
  s->krylov.relative_tolerance = clmg_options_number(o, "tol", 1e-8);
  s->krylov.absolute_tolerance = clmg_options_number(o, "atol", 0);
  s->krylov.max_iterations = (int)clmg_options_integer(o, "maxit", 1000);
  s->krylov.gmres_restart = (int)clmg_options_integer(o, "restart", 30);
  s->krylov.keep_history = 1;
  return CLMG_SUCCESS;
}

/* precond names a built-in one or one registered on the context. */
static clmg_status check_preconditioner_name(clmg_solver *s, const char *allowed) {
  const char *name = clmg_options_get(s->options, "precond");
  void *data = NULL;
  if (clmg_option_list_has(allowed, name) ||
      clmg_registered_preconditioner(s->context, name, &data))
    return CLMG_SUCCESS;
  char registered[600];
  clmg_registered_names(s->context, 0, registered, sizeof registered);
  return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                   "precond: unknown preconditioner '%s' (valid here: %s%s%s)", name, allowed,
                   registered[0] ? "; registered: " : "", registered);
}

/* ---- the near-nullspace of amg.near_nullspace or amg.coordinates ---- */

/* A Matrix Market file as rows x cols column-major values (malloc'ed). */
static clmg_status read_dense(clmg_context *context, const char *path, size_t *rows, size_t *cols,
                              double **values) {
  clmg_csr m = {0};
  clmg_error error = {{0}};
  *values = NULL;
  clmg_status status = clmg_csr_read_matrix_market(path, &m, &error);
  if (status != CLMG_SUCCESS)
    return fail_error(context, status, &error);
  *rows = m.rows;
  *cols = m.cols;
  if (m.cols == 0 || m.cols > 16) {
    clmg_csr_free(&m);
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%.1000s has %zu columns; it should have 1 to 16", path, *cols);
  }
  *values = clmg_alloc_zeroed_array(m.rows * m.cols, sizeof **values);
  if (!*values) {
    clmg_csr_free(&m);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "no host memory for the %zu x %zu values of %.1000s", *rows, *cols, path);
  }
  for (size_t i = 0; i < m.rows; i++)
    for (int64_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; k++)
      (*values)[(size_t)m.col[k] * m.rows + i] = m.val[k];
  clmg_csr_free(&m);
  return CLMG_SUCCESS;
}

/* Fills amg's candidates (malloc'ed into *owned) and block size from the
 * files the options name. */
static clmg_status near_nullspace(clmg_solver *s, clmg_amg_options *amg, double **owned) {
  const char *nullspace = clmg_options_get(s->options, "amg.near_nullspace");
  const char *coordinates_path = clmg_options_get(s->options, "amg.coordinates");
  size_t n = s->rows, rows = 0, cols = 0;
  double *values = NULL;
  *owned = NULL;
  if (nullspace[0] && coordinates_path[0])
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "amg.near_nullspace and amg.coordinates both give the near-nullspace: "
                     "name one");
  if (nullspace[0]) {
    clmg_status status = read_dense(s->context, nullspace, &rows, &cols, &values);
    if (status == CLMG_SUCCESS && rows != n)
      status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                         "%.1000s has %zu rows; the near-nullspace needs one per row of A (%zu)",
                         nullspace, rows, n);
    if (status != CLMG_SUCCESS) {
      free(values);
      return status;
    }
    *owned = values;
    amg->candidates = values;
    amg->num_candidates = (int)cols;
    return CLMG_SUCCESS;
  }
  if (!coordinates_path[0])
    return CLMG_SUCCESS;
  clmg_status status = read_dense(s->context, coordinates_path, &rows, &cols, &values);
  if (status == CLMG_SUCCESS && ((cols != 2 && cols != 3) || rows * cols != n ||
                                 (amg->block_size > 1 && (size_t)amg->block_size != cols)))
    status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%.1000s holds %zu nodes of %zu coordinates; the rigid-body modes need 2 "
                       "or 3 coordinates per node and as many unknowns per node (A has %zu "
                       "rows%s)",
                       coordinates_path, rows, cols, n,
                       amg->block_size > 1 ? ", and amg.block_size says otherwise" : "");
  double *coordinates = NULL, *modes = NULL;
  if (status == CLMG_SUCCESS) {
    coordinates = clmg_alloc_array(rows * cols, sizeof *coordinates);
    modes = clmg_alloc_array(6 * n, sizeof *modes);
    if (!coordinates || !modes)
      status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                         "no host memory for the rigid-body modes of %zu nodes", rows);
  }
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < rows; i++)
      for (size_t d = 0; d < cols; d++)
        coordinates[i * cols + d] = values[d * rows + i];
    int count = 0;
    clmg_error error = {{0}};
    status = clmg_amg_rigid_body_modes(rows, (int)cols, coordinates, modes, &count, &error);
    if (status != CLMG_SUCCESS)
      status = clmg_fail(s->context, status, "%.1000s: %s", coordinates_path, error.message);
    amg->candidates = modes;
    amg->num_candidates = count;
    amg->block_size = (int)cols;
  }
  free(values);
  free(coordinates);
  if (status != CLMG_SUCCESS) {
    free(modes);
    amg->candidates = NULL;
    amg->num_candidates = 0;
    return status;
  }
  *owned = modes;
  return CLMG_SUCCESS;
}

/* ---- multigrid options ---- */

/* The smoother named by mg.smoother into mg (built-in or registered); amg:
 * for an AMG hierarchy, whose auto is chebyshev and which also offers the
 * host-matrix smoothers (patch, gauss-seidel: *patch filled). Resolves
 * mg.smoother and mg.steps in options. */
static clmg_status smoother_options(clmg_context *context, clmg_options *options, int amg,
                                    clmg_multigrid_options *mg, clmg_amg_patch_smoothing *patch,
                                    int *use_patch) {
  clmg_error error = {{0}};
  clmg_status status = CLMG_SUCCESS;
  if (clmg_options_is_auto(options, "mg.smoother"))
    status = clmg_options_resolve(options, "mg.smoother", amg ? "chebyshev" : "jacobi", &error);
  const char *name = clmg_options_get(options, "mg.smoother");
  int gauss_seidel = strcmp(name, "gauss-seidel") == 0;
  int patches = strcmp(name, "patch") == 0;
  void *data = NULL;
  clmg_smoother_factory factory = clmg_registered_smoother(context, name, &data);
  int unused_store = 0;
  if (status == CLMG_SUCCESS && clmg_vanka_name_parse(name, &unused_store))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "mg.smoother: %s is the Vanka smoother of saddle-point levels "
                     "(clmg_flow_solve, clmg_options_flow), not of this hierarchy",
                     name);
  if (status == CLMG_SUCCESS && (gauss_seidel || patches) && !amg)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "mg.smoother: %s needs every level's host matrix, which only an AMG "
                     "hierarchy has (precond=amg)",
                     name);
  if (status == CLMG_SUCCESS && !gauss_seidel && !patches && !factory &&
      !clmg_smoother_type_parse(name, &mg->smoother)) {
    char registered[600];
    clmg_registered_names(context, 1, registered, sizeof registered);
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "mg.smoother: unknown smoother '%s' (valid: chebyshev, jacobi, jacobi-rho, "
                     "spai0%s%s%s)",
                     name, amg ? ", gauss-seidel, patch" : "",
                     registered[0] ? "; registered: " : "", registered);
  }
  if (factory) {
    mg->smoother_factory = factory;
    mg->smoother_factory_data = data;
  }
  if (status == CLMG_SUCCESS && clmg_options_is_auto(options, "mg.steps")) {
    const char *steps = !amg                             ? "4"
                        : gauss_seidel                   ? "1"
                        : strcmp(name, "chebyshev") == 0 ? "3"
                                                         : "2";
    status = clmg_options_resolve(options, "mg.steps", steps, &error);
  }
  if (status != CLMG_SUCCESS)
    return fail_error(context, status, &error);
  int steps = (int)clmg_options_integer(options, "mg.steps", 2);
  mg->pre_smoothing = (int)clmg_options_integer(options, "mg.pre", steps);
  mg->post_smoothing = (int)clmg_options_integer(options, "mg.post", steps);
  mg->omega = clmg_options_number(options, "mg.omega", 0);
  *use_patch = gauss_seidel || patches;
  if (patch) {
    memset(patch, 0, sizeof *patch);
    patch->inner = (int)clmg_options_integer(options, "mg.inner", 3);
    patch->omega = clmg_options_number(options, "mg.omega", 0);
    patch->gauss_seidel = gauss_seidel;
  }
  return CLMG_SUCCESS;
}

static void cycle_options(const clmg_options *options, clmg_multigrid_options *mg) {
  clmg_cycle_type_parse(clmg_options_get(options, "mg.cycle"), &mg->cycle);
  mg->coarse = clmg_options_is(options, "mg.coarse", "direct") ? CLMG_COARSE_DIRECT
               : clmg_options_is(options, "mg.coarse", "pcg")  ? CLMG_COARSE_PCG
                                                               : CLMG_COARSE_AUTO;
  mg->direct_max_rows = (size_t)clmg_options_integer(options, "mg.direct_rows", 2048);
}

clmg_status clmg_options_multigrid(const clmg_options *options, clmg_context *context,
                                   clmg_multigrid_options *multigrid) {
  if (!context || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_error error = {{0}};
  clmg_options *copy = NULL;
  clmg_status status = clmg_options_copy(options, &copy, &error);
  if (status != CLMG_SUCCESS)
    return fail_error(context, status, &error);
  clmg_multigrid_options_defaults(multigrid);
  cycle_options(copy, multigrid);
  int use_patch = 0;
  status = smoother_options(context, copy, 0, multigrid, NULL, &use_patch);
  clmg_options_destroy(copy);
  return status;
}

/* ---- the solvers of clmg_flow and clmg_homg ---- */

/* The keys set in `given` to other than their defaults (an echoed options
 * file sets them all) that are not among `read` (NULL-ended), as "a, b"
 * into list (may be NULL). */
static void unused_keys(const clmg_options *given, const char *const *read, char *list,
                        size_t size) {
  size_t used = 0;
  if (list && size)
    list[0] = '\0';
  for (size_t i = 0; list && size && clmg_option_spec_at(i); i++) {
    const clmg_option_spec *spec = clmg_option_spec_at(i);
    if (!clmg_options_is_set(given, spec->key) ||
        strcmp(clmg_options_get(given, spec->key), spec->default_value) == 0)
      continue;
    int is_read = 0;
    for (size_t k = 0; read[k] && !is_read; k++)
      is_read = strcmp(read[k], spec->key) == 0;
    if (!is_read && used < size) {
      int n = snprintf(list + used, size - used, "%s%s", used ? ", " : "", spec->key);
      used += n > 0 ? (size_t)n : 0;
    }
  }
}

/* A key's value as read, where it was not set or is auto: the shortest of
 * 15 and 17 digits that reads back the same (in the C locale). */
static clmg_status resolve_number(clmg_options *options, const char *key, double value,
                                  clmg_error *error) {
  if (clmg_options_is_set(options, key) && !clmg_options_is_auto(options, key))
    return CLMG_SUCCESS;
  char text[40];
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  snprintf(text, sizeof text, "%.15g", value);
  if (strtod(text, NULL) != value)
    snprintf(text, sizeof text, "%.17g", value);
  clmg_leave_c_numeric_locale(&locale);
  return clmg_options_resolve(options, key, text, error);
}

/* Every name in names[] resolved to values[] (NULL-ended), then the
 * numbers; the first failure's status. */
static clmg_status resolve_all(clmg_options *options, const char *const *names,
                               const char *const *values, const char *const *number_keys,
                               const double *numbers, clmg_error *error) {
  clmg_status status = CLMG_SUCCESS;
  for (size_t k = 0; status == CLMG_SUCCESS && names[k]; k++)
    status = clmg_options_resolve(options, names[k], values[k], error);
  for (size_t k = 0; status == CLMG_SUCCESS && number_keys[k]; k++)
    status = resolve_number(options, number_keys[k], numbers[k], error);
  return status;
}

/* An integer key: its value where set (and not auto), else if_unset. */
static long integer_if_set(const clmg_options *options, const char *key, long if_unset) {
  return clmg_options_is_set(options, key) ? clmg_options_integer(options, key, if_unset)
                                           : if_unset;
}

static const char *const FLOW_KEYS[] = {"krylov",
                                        "restart",
                                        "tol",
                                        "maxit",
                                        "precision",
                                        "mg.cycle",
                                        "mg.smoother",
                                        "mg.steps",
                                        "mg.pre",
                                        "mg.post",
                                        "mg.omega",
                                        "mg.coarse",
                                        "flow.nonlinear_tol",
                                        "flow.nonlinear_maxit",
                                        "flow.linearisation",
                                        "flow.newton_start",
                                        "flow.time_scheme",
                                        "flow.step_iterations",
                                        "flow.upwind",
                                        "flow.upwind_parameter",
                                        NULL};

static const char *const UPWIND_NAMES[] = {"full", "samarskij", "weighted"};

clmg_status clmg_options_flow(clmg_options *options, clmg_flow_options *flow, char *unused,
                              size_t unused_size, clmg_error *error) {
  if (!options || !flow)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_options_flow: NULL options or flow");
  const clmg_options *o = options;
  const char *krylov = clmg_options_get(o, "krylov");
  if (strcmp(krylov, "auto") != 0 && strcmp(krylov, "gmres") != 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "krylov=%s: clmg flow solves its Oseen systems (nonsymmetric saddle "
                          "points) by GMRES: krylov=gmres (or auto)",
                          krylov);
  if (!clmg_options_is(o, "precision", "double"))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "precision=%s: clmg flow computes in double: precision=double",
                          clmg_options_get(o, "precision"));
  const char *smoother = clmg_options_get(o, "mg.smoother");
  int store_inverses = 1;
  if (strcmp(smoother, "auto") != 0 && !clmg_vanka_name_parse(smoother, &store_inverses))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "mg.smoother=%s: clmg flow's saddle-point levels take a Vanka "
                          "smoother: %s (default) or %s",
                          smoother, clmg_vanka_name(1), clmg_vanka_name(0));
  double omega = clmg_options_number(o, "mg.omega", 1.0);
  if (!(omega < 2))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "mg.omega=%g: the Vanka smoother needs 0 < omega < 2", omega);
  if (clmg_options_is(o, "mg.coarse", "pcg"))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "mg.coarse=pcg: the coarse Oseen system is nonsymmetric and indefinite, "
                          "which CG cannot solve: mg.coarse=auto (direct up to 1,000 unknowns, "
                          "else Vanka steps) or direct");
  if (clmg_options_is_set(o, "tol") && !clmg_options_is_auto(o, "tol") &&
      !(clmg_options_number(o, "tol", 0) > 0))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "tol=0: clmg flow's linear solves need a tolerance above 0 (auto: 1e-8 "
                          "for time steps, a hundredfold reduction per Oseen iteration)");
  clmg_flow_options f = *flow;
  f.vanka.store_inverses = store_inverses;
  f.vanka.omega = omega;
  clmg_multigrid_options_defaults(&f.multigrid);
  f.multigrid.cycle = CLMG_CYCLE_F; /* its rate holds as levels are added (stokes.h) */
  if (clmg_options_is_set(o, "mg.cycle"))
    clmg_cycle_type_parse(clmg_options_get(o, "mg.cycle"), &f.multigrid.cycle);
  f.multigrid.coarse =
      clmg_options_is(o, "mg.coarse", "direct") ? CLMG_COARSE_DIRECT : CLMG_COARSE_AUTO;
  int steps = (int)clmg_options_integer(o, "mg.steps", 2);
  f.multigrid.pre_smoothing = (int)clmg_options_integer(o, "mg.pre", steps);
  f.multigrid.post_smoothing = (int)clmg_options_integer(o, "mg.post", steps);
  f.linear_tolerance = clmg_options_number(o, "tol", 0); /* 0: the mode's default */
  f.max_linear = (int)integer_if_set(o, "maxit", 100);
  f.restart = (int)clmg_options_integer(o, "restart", 30);
  f.nonlinear_tolerance = clmg_options_number(o, "flow.nonlinear_tol", 1e-8);
  f.max_nonlinear = (int)clmg_options_integer(o, "flow.nonlinear_maxit", 50);
  clmg_flow_linearisation_parse(clmg_options_get(o, "flow.linearisation"), &f.linearisation);
  f.newton_start = clmg_options_number(o, "flow.newton_start", 1e-3);
  if (!clmg_options_is_auto(o, "flow.time_scheme"))
    clmg_flow_time_scheme_parse(clmg_options_get(o, "flow.time_scheme"), &f.time_scheme);
  f.step_iterations = (int)integer_if_set(o, "flow.step_iterations", f.step_iterations);
  for (int k = 0; k < 3; k++)
    if (clmg_options_is(o, "flow.upwind", UPWIND_NAMES[k]))
      f.upwind = k; /* CLMG_STOKES_UPWIND_FULL, _SAMARSKIJ, _WEIGHTED */
  if (clmg_options_is_set(o, "flow.upwind_parameter")) {
    if (f.upwind != -1 && f.upwind != CLMG_STOKES_UPWIND_WEIGHTED)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "flow.upwind_parameter is the weighted upwind's: set "
                            "flow.upwind=weighted (it is %s)",
                            UPWIND_NAMES[f.upwind]);
    f.upwind_parameter = clmg_options_number(o, "flow.upwind_parameter", 1.0);
  }
  unused_keys(o, FLOW_KEYS, unused, unused_size);
  /* what was read, as resolved; tol stays auto: the mode's default */
  const char *names[] = {
      "krylov", "precision",        "mg.cycle",    "mg.smoother",          "mg.coarse",
      "tol",    "flow.time_scheme", "flow.upwind", "flow.step_iterations", "flow.linearisation",
      NULL};
  const char *values[] = {"gmres",
                          "double",
                          clmg_cycle_type_name(f.multigrid.cycle),
                          clmg_vanka_name(store_inverses),
                          f.multigrid.coarse == CLMG_COARSE_DIRECT ? "direct" : "auto",
                          clmg_options_get(o, "tol"),
                          clmg_flow_time_scheme_name(f.time_scheme),
                          f.upwind >= 0 && f.upwind < 3 ? UPWIND_NAMES[f.upwind] : "auto",
                          clmg_options_get(o, "flow.step_iterations"),
                          clmg_flow_linearisation_name(f.linearisation)};
  const char *number_keys[] = {"restart",
                               "maxit",
                               "mg.steps",
                               "mg.pre",
                               "mg.post",
                               "mg.omega",
                               "flow.nonlinear_tol",
                               "flow.nonlinear_maxit",
                               "flow.newton_start",
                               "flow.upwind_parameter",
                               NULL};
  const double numbers[] = {f.restart,
                            f.max_linear,
                            steps,
                            f.multigrid.pre_smoothing,
                            f.multigrid.post_smoothing,
                            omega,
                            f.nonlinear_tolerance,
                            f.max_nonlinear,
                            f.newton_start,
                            f.upwind_parameter};
  /* the upwind parameter echoed with the weighted upwind only (set with
   * another it is refused) */
  if (f.upwind != CLMG_STOKES_UPWIND_WEIGHTED)
    number_keys[9] = NULL;
  clmg_status status = resolve_all(options, names, values, number_keys, numbers, error);
  if (status == CLMG_SUCCESS)
    *flow = f;
  return status;
}

static const char *const HOMG_KEYS[] = {
    "precision",       "tol",      "maxit",       "mg.smoother", "mg.steps",      "mg.pre",
    "mg.post",         "mg.omega", "homg.method", "homg.maxi",   "homg.schedule", "homg.error_tol",
    "homg.stagnation", NULL};

enum { HOMG_MAX_CYCLES = 100000 };

clmg_status clmg_options_homg(clmg_options *options, clmg_homg_options *homg, char *unused,
                              size_t unused_size, clmg_error *error) {
  if (!options || !homg)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_options_homg: NULL options or homg");
  const clmg_options *o = options;
  clmg_homg_options h = *homg;
  if (clmg_options_is(o, "precision", "mixed"))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "precision=mixed: clmg homg computes in one precision: double or float");
  h.precision = clmg_options_is(o, "precision", "float") ? CLMG_FLOAT : CLMG_DOUBLE;
  clmg_homg_method_parse(clmg_options_get(o, "homg.method"), &h.method);
  if (clmg_options_is_set(o, "homg.schedule") && h.method != CLMG_HOMG_MFMG)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "homg.schedule (--schedule) orders the steps of the homg method, not of "
                          "%s",
                          clmg_homg_method_name(h.method));
  clmg_homg_schedule_parse(clmg_options_get(o, "homg.schedule"), &h.schedule);
  const char *smoother = clmg_options_get(o, "mg.smoother");
  if (strcmp(smoother, "auto") != 0 && strcmp(smoother, "jacobi") != 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "mg.smoother=%s: clmg homg smooths by damped Jacobi: mg.smoother=jacobi "
                          "(or auto)",
                          smoother);
  h.omega = clmg_options_number(o, "mg.omega", 0.8);
  if (!(h.omega <= 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "mg.omega=%g: clmg homg's damped Jacobi needs 0 < omega <= 1", h.omega);
  int steps = (int)clmg_options_integer(o, "mg.steps", 2);
  h.pre_smoothing = (int)clmg_options_integer(o, "mg.pre", steps);
  h.post_smoothing = (int)clmg_options_integer(o, "mg.post", steps);
  if (h.pre_smoothing + h.post_smoothing < 1)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "mg.pre=0 and mg.post=0: a V-cycle needs a smoothing step");
  int cycles_set = clmg_options_is_set(o, "maxit");
  long cycles = integer_if_set(o, "maxit", 50);
  if (cycles > HOMG_MAX_CYCLES)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "maxit=%ld: clmg homg runs at most %d cycles", cycles, HOMG_MAX_CYCLES);
  h.max_cycles = (int)cycles;
  /* maxit without tol asks for exactly that many cycles */
  int tol_set = clmg_options_is_set(o, "tol") && !clmg_options_is_auto(o, "tol");
  h.relative_tolerance = tol_set                     ? clmg_options_number(o, "tol", 0)
                         : cycles_set                ? 0
                         : h.precision == CLMG_FLOAT ? 1e-6
                                                     : 1e-10;
  h.stagnation_factor =
      clmg_options_number(o, "homg.stagnation", cycles_set && !tol_set ? 0.0 : 1.1);
  if (h.stagnation_factor != 0 && !(h.stagnation_factor > 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "homg.stagnation=%g: 0 (off) or a factor above 1", h.stagnation_factor);
  h.max_iterations_per_level = (int)clmg_options_integer(o, "homg.maxi", 32);
  h.error_tolerance = clmg_options_number(o, "homg.error_tol", 0);
  unused_keys(o, HOMG_KEYS, unused, unused_size);
  const char *names[] = {"precision", "homg.method", "mg.smoother",
                         h.method == CLMG_HOMG_MFMG ? "homg.schedule" : NULL, NULL};
  const char *values[] = {clmg_dtype_name(h.precision), clmg_homg_method_name(h.method), "jacobi",
                          clmg_homg_schedule_name(h.schedule)};
  const char *number_keys[] = {"maxit",           "tol",     "mg.omega",  "mg.steps",
                               "mg.pre",          "mg.post", "homg.maxi", "homg.error_tol",
                               "homg.stagnation", NULL};
  const double numbers[] = {h.max_cycles,
                            h.relative_tolerance,
                            h.omega,
                            steps,
                            h.pre_smoothing,
                            h.post_smoothing,
                            h.max_iterations_per_level,
                            h.error_tolerance,
                            h.stagnation_factor};
  clmg_status status = resolve_all(options, names, values, number_keys, numbers, error);
  if (status == CLMG_SUCCESS)
    *homg = h;
  return status;
}

/* ---- building ---- */

/* The clock of the setup's phases: the wall time since the last lap less
 * the kernels' compile time in it, once the queue is drained. */
typedef struct phase_clock {
  clmg_context *context;
  double wall, compile;
} phase_clock;

static phase_clock clock_start(clmg_context *context, double start, double program_start) {
  phase_clock c = {context, start, program_start};
  return c;
}

/* A lap of host work alone (nothing queued since the last lap): no wait. */
static void clock_lap_host(phase_clock *c, double *phase) {
  double wall = clmg_seconds_now(), compile = clmg_context_program_seconds(c->context);
  double seconds = (wall - c->wall) - (compile - c->compile);
  *phase += seconds > 0 ? seconds : 0;
  c->wall = wall;
  c->compile = compile;
}

static void clock_lap(phase_clock *c, double *phase) {
  clmg_finish_queued(c->context);
  clock_lap_host(c, phase);
}

static clmg_status wrap_mixed(clmg_solver *s, clmg_preconditioner *inner) {
  if (!s->mixed) {
    s->preconditioner = *inner;
    return CLMG_SUCCESS;
  }
  return clmg_preconditioner_in_precision(s->context, s->rows, CLMG_DOUBLE, CLMG_FLOAT, inner,
                                          &s->preconditioner);
}

/* amg.* (but the near-nullspace keys) as clmg_amg_options. */
static void amg_options_from(const clmg_options *o, clmg_amg_options *amg) {
  clmg_amg_options_defaults(amg);
  int classical = clmg_options_is(o, "amg.coarsening", "classical");
  amg->coarsening = classical ? CLMG_AMG_CLASSICAL : CLMG_AMG_SMOOTHED_AGGREGATION;
  if (classical)
    amg->classical_threshold = clmg_options_number(o, "amg.strength", 0.25);
  else
    amg->strength_threshold = clmg_options_number(o, "amg.strength", 0);
  amg->interpolation =
      clmg_options_is(o, "amg.interpolation", "direct") ? CLMG_AMG_DIRECT : CLMG_AMG_EXTENDED_I;
  amg->interpolation_max_entries = (int)clmg_options_integer(o, "amg.p_max", 4);
  amg->interpolation_truncation = clmg_options_number(o, "amg.truncation", 0);
  amg->roots = clmg_options_is(o, "amg.roots", "ordered")    ? CLMG_AMG_ROOTS_ORDERED
               : clmg_options_is(o, "amg.roots", "parallel") ? CLMG_AMG_ROOTS_PARALLEL
                                                             : CLMG_AMG_ROOTS_AUTO;
  amg->block_size = (int)clmg_options_integer(o, "amg.block_size", 1);
  amg->root_distance = (int)clmg_options_integer(o, "amg.root_distance", 2);
  amg->coarse_root_distance = (int)clmg_options_integer(o, "amg.coarse_root_distance", 1);
  amg->min_aggregate_size = (size_t)clmg_options_integer(o, "amg.min_aggregate_size", 0);
  amg->coarse_rows = (size_t)clmg_options_integer(o, "amg.coarse_rows", 256);
  amg->max_levels = (int)clmg_options_integer(o, "amg.max_levels", 20);
}

static clmg_status amg_options_of(clmg_solver *s, clmg_amg_options *amg) {
  amg_options_from(s->options, amg);
  amg->times = &s->amg_times;
  return CLMG_SUCCESS;
}

clmg_status clmg_options_amg(const clmg_options *options, clmg_context *context,
                             clmg_amg_options *amg, clmg_multigrid_options *multigrid) {
  if (!context || !amg || !multigrid)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_error error = {{0}};
  clmg_options *copy = NULL;
  clmg_status status = clmg_options_copy(options, &copy, &error);
  if (status != CLMG_SUCCESS)
    return fail_error(context, status, &error);
  amg_options_from(copy, amg);
  clmg_multigrid_options_defaults(multigrid);
  cycle_options(copy, multigrid);
  int use_patch = 0;
  status = smoother_options(context, copy, 1, multigrid, NULL, &use_patch);
  if (status == CLMG_SUCCESS && use_patch)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "mg.smoother=%s smooths with the AMG hierarchy's host matrices, which only "
                       "clmg_solver_create's own AMG keeps",
                       clmg_options_get(copy, "mg.smoother"));
  clmg_options_destroy(copy);
  return status;
}

static clmg_status build_amg(clmg_solver *s, const clmg_csr *a, const clmg_matrix_options *matrix,
                             phase_clock *clock) {
  clmg_amg_options amg;
  amg_options_of(s, &amg);
  double *candidates = NULL;
  clmg_status status = near_nullspace(s, &amg, &candidates);
  if (status != CLMG_SUCCESS)
    return status;
  /* the host's file read and modes: their own phase, apart from the AMG's */
  if (candidates)
    clock_lap_host(clock, &s->times.nullspace_s);
  clmg_error error = {{0}};
  char text[32];
  snprintf(text, sizeof text, "%g",
           amg.coarsening == CLMG_AMG_CLASSICAL ? amg.classical_threshold : amg.strength_threshold);
  status = clmg_options_resolve(s->options, "amg.strength", text, &error);
  snprintf(text, sizeof text, "%d", amg.block_size > 0 ? amg.block_size : 1);
  if (status == CLMG_SUCCESS)
    status = clmg_options_resolve(s->options, "amg.block_size", text, &error);
  if (status != CLMG_SUCCESS) {
    free(candidates);
    return fail_error(s->context, status, &error);
  }
  clmg_multigrid_options mg;
  clmg_multigrid_options_defaults(&mg);
  cycle_options(s->options, &mg);
  clmg_amg_patch_smoothing patch;
  int use_patch = 0;
  status = smoother_options(s->context, s->options, 1, &mg, &patch, &use_patch);
  if (status == CLMG_SUCCESS) {
    mg.matrix = *matrix;
    mg.matrix.precision = s->mixed ? CLMG_FLOAT : s->precision;
    /* the solver's device matrix of a: no second upload, and the finest
     * level's operator where it suits the cycle */
    status = clmg_amg_multigrid_create_on(s->context, a, s->matrix, &amg, &mg,
                                          use_patch ? &patch : NULL, &s->multigrid);
  }
  free(candidates);
  if (status != CLMG_SUCCESS)
    return status;
  s->owns_multigrid = 1;
  s->have_amg_times = 1;
  return CLMG_SUCCESS;
}

static clmg_status build_preconditioner(clmg_solver *s, const clmg_csr *a,
                                        const clmg_matrix_options *matrix, phase_clock *clock) {
  const char *name = clmg_options_get(s->options, "precond");
  snprintf(s->preconditioner_name, sizeof s->preconditioner_name, "%s", name);
  const clmg_matrix *in_precision = s->mixed ? s->float_matrix : s->matrix;
  clmg_preconditioner inner = {0};
  clmg_status status = CLMG_SUCCESS;
  if (strcmp(name, "none") == 0)
    return CLMG_SUCCESS;
  if (strcmp(name, "jacobi") == 0) {
    status = clmg_preconditioner_jacobi(in_precision, &inner);
  } else if (strcmp(name, "amg") == 0) {
    status = build_amg(s, a, matrix, clock);
    if (status == CLMG_SUCCESS)
      status = clmg_multigrid_preconditioner(s->multigrid, &inner);
  } else {
    void *data = NULL;
    clmg_preconditioner_factory factory = clmg_registered_preconditioner(s->context, name, &data);
    status = factory(data, s->context, a, in_precision, &inner);
    if (status == CLMG_SUCCESS && !inner.apply)
      status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                         "the registered preconditioner '%s' made no apply function", name);
  }
  if (status == CLMG_SUCCESS)
    status = wrap_mixed(s, &inner);
  if (status != CLMG_SUCCESS)
    clmg_preconditioner_destroy(&inner);
  return status;
}

/* krylov=none runs cycles of a hierarchy; other combinations are refused
 * here, naming the options. */
static clmg_status check_combination(clmg_solver *s) {
  if (!s->cycles_only)
    return CLMG_SUCCESS;
  const char *precond = clmg_options_get(s->options, "precond");
  if (strcmp(precond, "amg") != 0 && strcmp(precond, "multigrid") != 0)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "krylov=none iterates a multigrid cycle alone: it needs precond=amg or "
                     "multigrid, not %s",
                     precond);
  if (s->mixed)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "precision=mixed runs the cycle in float inside a double Krylov method: it "
                     "needs a Krylov method, not krylov=none (precision=float cycles in float)");
  return CLMG_SUCCESS;
}

static clmg_status new_solver(clmg_context *context, const clmg_options *options,
                              clmg_solver **out) {
  clmg_solver *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for a solver");
  s->context = context;
  clmg_error error = {{0}};
  clmg_status status = clmg_options_copy(options, &s->options, &error);
  if (status != CLMG_SUCCESS) {
    free(s);
    return fail_error(context, status, &error);
  }
  *out = s;
  return CLMG_SUCCESS;
}

/* The keys the caller set that this solver does not read (it says so in
 * its view): the hierarchy's without one, AMG's around a caller's
 * hierarchy, GMRES's restart for another method. After resolve_common. */
static void find_unused(clmg_solver *s, const clmg_options *given) {
  const char *precond = clmg_options_get(s->options, "precond");
  int amg = strcmp(precond, "amg") == 0, caller = strcmp(precond, "multigrid") == 0;
  int classical = clmg_options_is(s->options, "amg.coarsening", "classical");
  size_t used = 0;
  s->unused[0] = '\0';
  for (size_t i = 0; clmg_option_spec_at(i); i++) {
    const char *key = clmg_option_spec_at(i)->key;
    /* a key set to its default changes nothing (an echoed options file
     * sets them all) */
    if (!clmg_options_is_set(given, key) ||
        strcmp(clmg_options_get(given, key), clmg_option_spec_at(i)->default_value) == 0)
      continue;
    int unused =
        (strncmp(key, "mg.", 3) == 0 && !amg && !caller) ||
        (strncmp(key, "amg.", 4) == 0 && !amg) ||
        ((strcmp(key, "amg.interpolation") == 0 || strcmp(key, "amg.p_max") == 0 ||
          strcmp(key, "amg.truncation") == 0) &&
         !classical) ||
        (strcmp(key, "restart") == 0 && (s->cycles_only || s->method != CLMG_KRYLOV_GMRES));
    if (unused && used < sizeof s->unused) {
      int n = snprintf(s->unused + used, sizeof s->unused - used, "%s%s", used ? ", " : "", key);
      used += n > 0 ? (size_t)n : 0;
    }
  }
}

/* The Krylov method on s->op. CG and GMRES run in the solver's kept work
 * vectors (s->cg_work, s->gmres_work, made on first use: the setup's
 * warm-up iteration): on a GPU a solve's allocations, zero-fills and frees
 * cost about as much as a cycle of a small problem (0.7 ms of CIRCLE level
 * 10's 9 ms on the H200). */
static clmg_status krylov_solve(clmg_solver *s, const clmg_vector *b, clmg_vector *x,
                                const clmg_preconditioner *preconditioner,
                                const clmg_krylov_options *options, clmg_krylov_result *result) {
  if (s->method == CLMG_KRYLOV_GMRES) {
    if (!s->gmres_work && clmg_gmres_workspace_create(&s->gmres_work) != CLMG_SUCCESS) {
      memset(result, 0, sizeof *result);
      return clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "gmres: no host memory for its workspace");
    }
    return clmg_gmres_in_workspace(&s->op, b, x, preconditioner, options, result, s->gmres_work);
  }
  if (s->method != CLMG_KRYLOV_CG)
    return clmg_krylov_solve(s->method, &s->op, b, x, preconditioner, options, result);
  if (!s->have_cg_work) {
    /* agreed across processes, as CG's own allocations are */
    clmg_context_enter(s->context);
    clmg_status status =
        clmg_cg_workspace_create(s->context, s->op.precision, s->op.rows, &s->cg_work);
    status = clmg_context_leave(s->context, clmg_hold(s->context, status));
    if (status != CLMG_SUCCESS) {
      memset(result, 0, sizeof *result);
      return status;
    }
    s->have_cg_work = 1;
  }
  return clmg_cg_in_workspace(&s->op, b, x, preconditioner, options, result, &s->cg_work);
}

/* One iteration from x = 0 on scratch vectors, so that the kernels of the
 * solve are compiled (or loaded) in the setup and a solve's time is the
 * solve's; its outcome does not matter (a breakdown recurs in the solve). */
static clmg_status prepare_kernels(clmg_solver *s) {
  clmg_vector *b = NULL, *x = NULL;
  clmg_status status = clmg_vector_create(s->context, s->precision, s->rows, &b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s->context, s->precision, s->rows, &x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(b, 1.0);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_fill(x, 0.0);
  if (status == CLMG_SUCCESS) {
    clmg_krylov_options once = s->krylov;
    once.max_iterations = 1;
    once.keep_history = 0;
    once.monitor = NULL;
    const clmg_preconditioner *preconditioner = s->preconditioner.apply ? &s->preconditioner : NULL;
    clmg_krylov_result result = {0};
    clmg_status ran = s->cycles_only ? clmg_multigrid_solve(s->multigrid, b, x, &once, &result)
                                     : krylov_solve(s, b, x, preconditioner, &once, &result);
    clmg_krylov_result_free(&result);
    status =
        ran == CLMG_ERROR_NOT_CONVERGED || ran == CLMG_ERROR_INVALID_ARGUMENT ? CLMG_SUCCESS : ran;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_finish(s->context);
  clmg_vector_destroy(x);
  clmg_vector_destroy(b);
  return status;
}

/* The end of every create: the solve's kernels made ready, the times, the
 * solver handed over, or everything released on a failure. */
static clmg_status finish_create(clmg_solver *s, clmg_status status, double start,
                                 double program_start, phase_clock *clock, clmg_solver **solver) {
  if (status == CLMG_SUCCESS)
    status = prepare_kernels(s);
  if (status == CLMG_SUCCESS && clock) {
    clock_lap(clock, &s->times.kernels_s);
    s->have_times = 1;
  }
  if (status != CLMG_SUCCESS) {
    clmg_solver_destroy(s);
    return status;
  }
  s->compile_s = clmg_context_program_seconds(s->context) - program_start;
  s->setup_s = clmg_seconds_now() - start - s->compile_s;
  if (s->setup_s < 0)
    s->setup_s = 0;
  *solver = s;
  return CLMG_SUCCESS;
}

/* A square matrix without a row of zeros (such a row makes it singular). */
static clmg_status check_matrix(clmg_context *context, const clmg_csr *a) {
  if (!a || !a->row_ptr)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_solver_create: no matrix");
  if (a->rows != a->cols)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "a %zu x %zu matrix: Krylov methods solve square systems only", a->rows,
                     a->cols);
  size_t empty = clmg_host_first_flagged(a->rows, 16384, row_of_zeros, a);
  if (empty < a->rows)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "row %zu of the matrix has no nonzero entry: the matrix is singular",
                     empty + 1);
  return CLMG_SUCCESS;
}

/* Both entry points from a matrix: a on the host (may be NULL with a device
 * matrix given), the device matrices borrowed when given. */
static clmg_status create_from_matrix(clmg_context *context, const clmg_csr *a, clmg_matrix *matrix,
                                      clmg_matrix *float_matrix, int symmetric,
                                      const clmg_options *options, double start,
                                      double program_start, clmg_solver **solver) {
  phase_clock clock = clock_start(context, start, program_start);
  clmg_solver *s = NULL;
  clmg_status status = new_solver(context, options, &s);
  if (status != CLMG_SUCCESS)
    return status;
  s->rows = a ? a->rows : clmg_matrix_rows(matrix);
  s->borrows_matrix = matrix != NULL;
  s->matrix = matrix;
  s->float_matrix = float_matrix;
  if (a && clmg_options_is_auto(s->options, "krylov"))
    symmetric = looks_spd(a);
  status = resolve_common(s, symmetric);
  if (status == CLMG_SUCCESS)
    find_unused(s, options);
  if (status == CLMG_SUCCESS)
    status = check_preconditioner_name(s, "none,jacobi,amg");
  if (status == CLMG_SUCCESS)
    status = check_combination(s);
  const char *precond = clmg_options_get(s->options, "precond");
  if (status == CLMG_SUCCESS && !a && strcmp(precond, "none") != 0 &&
      strcmp(precond, "jacobi") != 0)
    status =
        clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                  "precond=%s builds from the matrix on the host, which was not given", precond);
  if (status == CLMG_SUCCESS && matrix && clmg_matrix_precision(matrix) != s->precision)
    status = clmg_fail(
        context, CLMG_ERROR_INVALID_ARGUMENT, "precision=%s, but the device matrix is in %s",
        clmg_options_get(s->options, "precision"), clmg_dtype_name(clmg_matrix_precision(matrix)));
  if (status == CLMG_SUCCESS)
    clock_lap(&clock, &s->times.checks_s);
  clmg_matrix_options matrix_options;
  clmg_matrix_options_defaults(&matrix_options);
  clmg_matrix_format_parse(clmg_options_get(s->options, "format"), &matrix_options.format);
  matrix_options.precision = s->precision;
  if (status == CLMG_SUCCESS && !s->matrix)
    status = clmg_matrix_create(context, a, &matrix_options, &s->matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_operator_from_matrix(s->matrix, 0, &s->op);
  int needs_float = s->mixed && strcmp(precond, "none") != 0 && strcmp(precond, "amg") != 0;
  if (status == CLMG_SUCCESS && needs_float && !s->float_matrix) {
    clmg_matrix_options in_float = matrix_options;
    in_float.precision = CLMG_FLOAT;
    status = a ? clmg_matrix_create(context, a, &in_float, &s->float_matrix)
               : clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                           "precision=mixed needs the preconditioner's matrix in float, or the "
                           "matrix on the host to make it");
    s->owns_float_matrix = status == CLMG_SUCCESS;
  }
  if (status == CLMG_SUCCESS) {
    clock_lap(&clock, &s->times.matrix_s);
    status = build_preconditioner(s, a, &matrix_options, &clock);
  }
  if (status == CLMG_SUCCESS)
    clock_lap(&clock, &s->times.preconditioner_s);
  return finish_create(s, status, start, program_start, &clock, solver);
}

clmg_status clmg_solver_create(clmg_context *context, const clmg_csr *a,
                               const clmg_options *options, clmg_solver **solver) {
  if (!context || !solver)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *solver = NULL;
  double start = clmg_seconds_now(), program_start = clmg_context_program_seconds(context);
  clmg_status status = check_matrix(context, a);
  return status == CLMG_SUCCESS
             ? create_from_matrix(context, a, NULL, NULL, 0, options, start, program_start, solver)
             : status;
}

clmg_status clmg_solver_create_device(clmg_context *context, clmg_matrix *matrix,
                                      clmg_matrix *float_matrix, const clmg_csr *a, int symmetric,
                                      const clmg_options *options, clmg_solver **solver) {
  if (!context || !solver)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *solver = NULL;
  double start = clmg_seconds_now(), program_start = clmg_context_program_seconds(context);
  if (!matrix)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_solver_create_device: no matrix");
  if (clmg_matrix_rows(matrix) != clmg_matrix_cols(matrix) ||
      (a && (a->rows != clmg_matrix_rows(matrix) || a->cols != clmg_matrix_cols(matrix))))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_solver_create_device: a %zu x %zu device matrix%s",
                     clmg_matrix_rows(matrix), clmg_matrix_cols(matrix),
                     a ? " and a host matrix of other sizes" : " is not square");
  clmg_status status = a ? check_matrix(context, a) : CLMG_SUCCESS;
  return status == CLMG_SUCCESS ? create_from_matrix(context, a, matrix, float_matrix, symmetric,
                                                     options, start, program_start, solver)
                                : status;
}

/* precond=jacobi around a caller's operator: z = D^-1 r with the
 * operator's own diagonal. */
static clmg_status jacobi_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  return clmg_pointwise_multiply((const clmg_vector *)data, r, z);
}

static void jacobi_destroy(void *data) {
  clmg_vector_destroy(data);
}

static clmg_status operator_jacobi(clmg_solver *s) {
  const clmg_operator *a = &s->op;
  if (!a->diagonal || a->rows != a->cols)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "precond=jacobi needs the operator's diagonal, which the operator '%s' "
                     "does not give",
                     a->name ? a->name : "of the caller");
  clmg_vector *diagonal = NULL, *inverse = NULL;
  clmg_status status = clmg_vector_create(s->context, s->precision, s->rows, &diagonal);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s->context, s->precision, s->rows, &inverse);
  if (status == CLMG_SUCCESS)
    status = a->diagonal(a->data, diagonal);
  size_t zero_row = SIZE_MAX;
  if (status == CLMG_SUCCESS && s->rows > 0)
    status = clmg_quotient(1.0, NULL, diagonal, inverse, &zero_row);
  if (status == CLMG_SUCCESS && zero_row != SIZE_MAX)
    status = clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "precond=jacobi: row %zu of the operator has a zero diagonal entry",
                       zero_row + 1);
  clmg_vector_destroy(diagonal);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(inverse);
    return status;
  }
  s->preconditioner.apply = jacobi_apply;
  s->preconditioner.data = inverse;
  s->preconditioner.destroy = jacobi_destroy;
  s->preconditioner.name = "jacobi";
  return CLMG_SUCCESS;
}

clmg_status clmg_solver_create_multigrid(clmg_context *context, const clmg_operator *a,
                                         clmg_multigrid *multigrid, int symmetric,
                                         const clmg_options *options, clmg_solver **solver) {
  if (!context || !solver)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *solver = NULL;
  if (!a || !a->apply)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_solver_create_multigrid: no operator");
  double start = clmg_seconds_now(), program_start = clmg_context_program_seconds(context);
  phase_clock clock = clock_start(context, start, program_start);
  clmg_solver *s = NULL;
  clmg_status status = new_solver(context, options, &s);
  if (status != CLMG_SUCCESS)
    return status;
  s->rows = a->rows;
  s->op = *a;
  s->op.destroy = NULL; /* borrowed */
  s->multigrid = multigrid;
  clmg_error error = {{0}};
  if (multigrid && !clmg_options_is_set(s->options, "precond"))
    status = clmg_options_resolve(s->options, "precond", "multigrid", &error);
  if (status != CLMG_SUCCESS)
    status = fail_error(context, status, &error);
  if (status == CLMG_SUCCESS)
    status = resolve_common(s, symmetric);
  if (status == CLMG_SUCCESS)
    find_unused(s, options);
  /* the built-in ones only: a registered preconditioner is made from a
   * matrix, which a solver around an operator has not */
  const char *allowed = multigrid ? "none,jacobi,multigrid,amg" : "none,jacobi";
  const char *name = clmg_options_get(s->options, "precond");
  if (status == CLMG_SUCCESS && !clmg_option_list_has(allowed, name))
    status = clmg_fail(
        context, CLMG_ERROR_INVALID_ARGUMENT, "precond=%s: around %s the preconditioners are %s",
        name, multigrid ? "an operator and a hierarchy" : "an operator without a hierarchy",
        allowed);
  if (status == CLMG_SUCCESS)
    status = check_combination(s);
  if (status == CLMG_SUCCESS && s->precision != a->precision)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "precision=%s, but the operator works in %s",
                       clmg_options_get(s->options, "precision"), clmg_dtype_name(a->precision));
  if (status == CLMG_SUCCESS && s->mixed && strcmp(name, "jacobi") == 0)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "precision=mixed runs the preconditioner in float: around an operator, "
                       "only a float hierarchy (precond=multigrid) can, not precond=jacobi");
  if (status == CLMG_SUCCESS) {
    snprintf(s->preconditioner_name, sizeof s->preconditioner_name, "%s", name);
    clock_lap(&clock, &s->times.checks_s);
  }
  if (status == CLMG_SUCCESS && strcmp(name, "jacobi") == 0)
    status = operator_jacobi(s);
  /* precond=amg: the caller's hierarchy is the AMG of amg.* (a distributed
   * one, say: clmg_mpi_amg_multigrid_create), its cycle the preconditioner */
  if (status == CLMG_SUCCESS && (strcmp(name, "multigrid") == 0 || strcmp(name, "amg") == 0)) {
    clmg_preconditioner cycle;
    const clmg_operator *fine =
        clmg_multigrid_operator(multigrid, clmg_multigrid_levels(multigrid) - 1);
    int mixed_cycle = s->mixed && fine && fine->precision == CLMG_FLOAT;
    status = clmg_multigrid_preconditioner(multigrid, &cycle);
    if (status == CLMG_SUCCESS && mixed_cycle)
      status = clmg_preconditioner_in_precision(context, s->rows, CLMG_DOUBLE, CLMG_FLOAT, &cycle,
                                                &s->preconditioner);
    else if (status == CLMG_SUCCESS)
      s->preconditioner = cycle;
  }
  if (status == CLMG_SUCCESS)
    clock_lap(&clock, &s->times.preconditioner_s);
  return finish_create(s, status, start, program_start, &clock, solver);
}

void clmg_solver_destroy(clmg_solver *s) {
  if (!s)
    return;
  clmg_preconditioner_destroy(&s->preconditioner);
  if (s->have_cg_work)
    clmg_cg_workspace_destroy(&s->cg_work);
  clmg_gmres_workspace_destroy(s->gmres_work);
  if (s->owns_multigrid)
    clmg_multigrid_destroy(s->multigrid);
  if (s->matrix)
    clmg_operator_destroy(&s->op);
  if (s->owns_float_matrix)
    clmg_matrix_destroy(s->float_matrix);
  if (!s->borrows_matrix)
    clmg_matrix_destroy(s->matrix);
  clmg_options_destroy(s->options);
  free(s);
}

void clmg_solver_set_monitor(clmg_solver *s, clmg_krylov_monitor monitor, void *data) {
  if (!s)
    return;
  s->krylov.monitor = monitor;
  s->krylov.monitor_data = data;
}

clmg_status clmg_solver_set_limits(clmg_solver *s, double tolerance, int max_iterations) {
  if (!s)
    return CLMG_ERROR_INVALID_ARGUMENT;
  if (!(tolerance > 0) || !isfinite(tolerance) || max_iterations < 1)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_solver_set_limits: the tolerance must be finite and above 0 and "
                     "the iterations at least 1, not %g and %d",
                     tolerance, max_iterations);
  /* the resolved options echo what later solves use */
  char tol_text[32], maxit_text[32];
  snprintf(tol_text, sizeof tol_text, "%.17g", tolerance);
  snprintf(maxit_text, sizeof maxit_text, "%d", max_iterations);
  clmg_error error = {{0}};
  clmg_status status = clmg_options_set(s->options, "tol", tol_text, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_set(s->options, "maxit", maxit_text, &error);
  if (status != CLMG_SUCCESS)
    return fail_error(s->context, status, &error);
  s->krylov.relative_tolerance = tolerance;
  s->krylov.max_iterations = max_iterations;
  return CLMG_SUCCESS;
}

/* ---- solving ---- */

clmg_status clmg_solver_solve(clmg_solver *s, const clmg_vector *b, clmg_vector *x,
                              clmg_krylov_result *result) {
  if (!s)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_krylov_result local = {0};
  clmg_krylov_result *r = result ? result : &local;
  memset(r, 0, sizeof *r);
  const clmg_preconditioner *preconditioner = s->preconditioner.apply ? &s->preconditioner : NULL;
  clmg_status status = s->cycles_only ? clmg_multigrid_solve(s->multigrid, b, x, &s->krylov, r)
                                      : krylov_solve(s, b, x, preconditioner, &s->krylov, r);
  /* success only with a finite x whose recomputed residual is finite: an x
   * of Inf can leave a residual the method read as small (CG checks x . x
   * with its recomputed residual, in the same read-back) */
  if (status == CLMG_SUCCESS && (s->cycles_only || s->method != CLMG_KRYLOV_CG)) {
    double x_norm = 0;
    clmg_status checked = clmg_nrm2(x, &x_norm);
    if (checked != CLMG_SUCCESS)
      status = checked;
    else if (!isfinite(x_norm) || !isfinite(r->final_residual)) {
      r->converged = 0;
      status = clmg_fail(s->context, CLMG_ERROR_NOT_CONVERGED,
                         isfinite(x_norm) ? "the method reported convergence, but the residual "
                                            "recomputed from x is not finite (A x overflows)"
                                          : "the method reported convergence, but x is not "
                                            "finite");
    }
  }
  if (!result)
    clmg_krylov_result_free(&local);
  return status;
}

clmg_status clmg_solver_solve_host(clmg_solver *s, const double *b, double *x,
                                   clmg_krylov_result *result) {
  if (!s || !b || !x)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_vector *device_b = NULL, *device_x = NULL;
  clmg_status status = clmg_vector_create(s->context, s->precision, s->rows, &device_b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s->context, s->precision, s->rows, &device_x);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(device_b, b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(device_x, x);
  clmg_status solved =
      status == CLMG_SUCCESS ? clmg_solver_solve(s, device_b, device_x, result) : status;
  /* the last iterate of an unfinished solve is still the best there is */
  if (status == CLMG_SUCCESS && (solved == CLMG_SUCCESS || solved == CLMG_ERROR_NOT_CONVERGED)) {
    char message[CLMG_MESSAGE_SIZE];
    snprintf(message, sizeof message, "%s", clmg_context_message(s->context));
    status = clmg_vector_download_doubles(device_x, x);
    if (status == CLMG_SUCCESS && solved != CLMG_SUCCESS)
      clmg_fail(s->context, solved, "%s", message);
  }
  clmg_vector_destroy(device_x);
  clmg_vector_destroy(device_b);
  return status != CLMG_SUCCESS ? status : solved;
}

/* ---- what it is made of ---- */

const clmg_operator *clmg_solver_operator(const clmg_solver *s) {
  return s ? &s->op : NULL;
}
const clmg_matrix *clmg_solver_matrix(const clmg_solver *s) {
  return s ? s->matrix : NULL;
}
clmg_multigrid *clmg_solver_multigrid(const clmg_solver *s) {
  return s ? s->multigrid : NULL;
}
clmg_krylov_method clmg_solver_method(const clmg_solver *s) {
  return s && !s->cycles_only ? s->method : CLMG_KRYLOV_AUTO;
}
clmg_dtype clmg_solver_precision(const clmg_solver *s) {
  return s ? s->precision : CLMG_DOUBLE;
}
const clmg_options *clmg_solver_options(const clmg_solver *s) {
  return s ? s->options : NULL;
}
double clmg_solver_setup_seconds(const clmg_solver *s) {
  return s ? s->setup_s : 0.0;
}
double clmg_solver_compile_seconds(const clmg_solver *s) {
  return s ? s->compile_s : 0.0;
}

const char *clmg_solver_unused_options(const clmg_solver *s) {
  return s ? s->unused : "";
}
