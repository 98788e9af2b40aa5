/* The options database (clmg/solver.h): one table of keys, their kinds,
 * defaults and valid values; text and JSON parsers on top of it (JSON by
 * cJSON); the multigrid options a database describes. */
#define _POSIX_C_SOURCE 200809L

#include "solver/solver_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/textio.h"

/* The one table. Kinds: NAME values from `values` (an OPEN name may also be
 * a name registered on the context, checked by clmg_solver_create), NUMBER
 * a finite double in [low, high], INTEGER a whole number in [low, high],
 * STRING any text (a file path). AUTO: "auto" is valid too. */
static const clmg_option_spec SPECS[] = {
    {"krylov", CLMG_OPTION_NAME, 0, "auto", "auto,cg,bicgstab,gmres,none", 0, 0,
     "Krylov method: auto is CG when A is symmetric with a positive diagonal, else GMRES; none "
     "runs the multigrid cycle alone (precond=amg or multigrid)"},
    {"precond", CLMG_OPTION_OPEN_NAME, 0, "jacobi", "none,jacobi,amg,multigrid", 0, 0,
     "preconditioner: none, jacobi (z = D^-1 r), amg (one cycle of algebraic multigrid built "
     "from the matrix), multigrid (a hierarchy the caller built), or a registered name"},
    {"precision", CLMG_OPTION_NAME, 0, "double", "double,float,mixed", 0, 0,
     "arithmetic: double, float, or mixed (the preconditioner in float inside a double Krylov "
     "method)"},
    {"format", CLMG_OPTION_NAME, 0, "auto", "auto,csr,ellr,sell,csr-adaptive,hybrid", 0, 0,
     "device matrix format: auto chooses per device and matrix"},
    {"tol", CLMG_OPTION_NUMBER, 1, "auto", "", 0, 0.999,
     "relative tolerance ||b - A x|| <= tol ||b||: auto is 1e-8 in double and mixed, 1e-5 in "
     "float"},
    {"atol", CLMG_OPTION_NUMBER, 0, "0", "", 0, 1e300, "absolute tolerance on ||b - A x||"},
    {"maxit", CLMG_OPTION_INTEGER, 0, "1000", "", 1, 1000000000, "iteration (cycle) limit"},
    {"restart", CLMG_OPTION_INTEGER, 0, "30", "", 1, 1000,
     "GMRES(m): Krylov vectors before a restart"},
    {"mg.cycle", CLMG_OPTION_NAME, 0, "v", "v,w,f", 0, 0, "multigrid cycle"},
    {"mg.smoother", CLMG_OPTION_OPEN_NAME, 1, "auto",
     "chebyshev,jacobi,jacobi-rho,spai0,gauss-seidel,patch,vanka-si,vanka-nsi", 0, 0,
     "smoother on every level but the coarsest: auto is chebyshev for AMG (keeps the cycle SPD "
     "for CG on any SPD matrix), jacobi for a caller's hierarchy and clmg_homg, vanka-si for "
     "clmg_flow; gauss-seidel (symmetric multicolour) and patch (Fu et al.'s patch "
     "block-Jacobi) for AMG only; vanka-si and vanka-nsi (Vanka with stored or recomputed "
     "local inverses) for clmg_flow's saddle-point levels only; or a registered name"},
    {"mg.steps", CLMG_OPTION_INTEGER, 1, "auto", "", 1, 64,
     "smoothing steps before and after the coarse correction: auto is 3 for chebyshev, 1 for "
     "gauss-seidel (a forward and a backward sweep), 2 for other AMG smoothers, clmg_flow and "
     "clmg_homg, 4 in a caller's hierarchy"},
    {"mg.pre", CLMG_OPTION_INTEGER, 1, "auto", "", 0, 1000,
     "smoothing steps before the coarse correction: auto is mg.steps"},
    {"mg.post", CLMG_OPTION_INTEGER, 1, "auto", "", 0, 1000,
     "smoothing steps after the coarse correction: auto is mg.steps"},
    {"mg.omega", CLMG_OPTION_NUMBER, 1, "auto", "", 0.001, 2.0,
     "smoother damping: auto is 0.7 for jacobi (0.8 in clmg_homg, which takes 0 to 1), 1 for "
     "spai0, patch, gauss-seidel and vanka (below 2), and the scale 4/3 over rho(D^-1 A) for "
     "jacobi-rho"},
    {"mg.inner", CLMG_OPTION_INTEGER, 0, "3", "", 1, 64,
     "patch smoother: inner Jacobi iterations per patch"},
    {"mg.coarse", CLMG_OPTION_NAME, 0, "auto", "auto,pcg,direct", 0, 0,
     "coarse solver: direct (dense LU), pcg (Jacobi-preconditioned Krylov to 1e-2), auto (direct "
     "up to mg.direct_rows rows, else pcg)"},
    {"mg.direct_rows", CLMG_OPTION_INTEGER, 0, "2048", "", 1, 65536,
     "largest coarse level mg.coarse=auto solves directly"},
    {"amg.coarsening", CLMG_OPTION_NAME, 0, "sa", "sa,classical", 0, 0,
     "sa: smoothed aggregation; classical: PMIS C/F splitting and amg.interpolation"},
    {"amg.interpolation", CLMG_OPTION_NAME, 0, "extended+i", "extended+i,direct", 0, 0,
     "classical coarsening's interpolation: extended+i (distance two, hypre's interp_type 6) or "
     "direct (strong C-neighbours only)"},
    {"amg.p_max", CLMG_OPTION_INTEGER, 0, "4", "", 0, 1000000,
     "classical coarsening: each row of P keeps at most this many entries, the largest, "
     "rescaled to the row's sum (hypre's P_max_elmts); 0: no limit"},
    {"amg.truncation", CLMG_OPTION_NUMBER, 0, "0", "", 0, 0.999,
     "classical coarsening: P's entries below this times their row's largest are dropped and "
     "the rest rescaled to the row's sum (hypre's trunc_factor)"},
    {"amg.strength", CLMG_OPTION_NUMBER, 1, "auto", "", 0, 0.999,
     "strength threshold theta: auto is 0 for sa (every nonzero coupling) and 0.25 for "
     "classical"},
    {"amg.roots", CLMG_OPTION_NAME, 0, "auto", "auto,ordered,parallel", 0, 0,
     "aggregate roots: ordered (greedy in row order, on the host), parallel (a maximal "
     "independent set by rounds, the same on every device), auto (parallel where the whole "
     "setup can then run on a GPU)"},
    {"amg.block_size", CLMG_OPTION_INTEGER, 1, "auto", "", 1, 16,
     "unknowns per node, aggregated together (3 for 3D elasticity): auto is 1, or the "
     "dimension of amg.coordinates"},
    {"amg.root_distance", CLMG_OPTION_INTEGER, 0, "2", "", 1, 8,
     "aggregate roots at least this many strong edges apart plus one, on the finest level"},
    {"amg.coarse_root_distance", CLMG_OPTION_INTEGER, 0, "1", "", 1, 8,
     "the same on the coarser levels"},
    {"amg.min_aggregate_size", CLMG_OPTION_INTEGER, 0, "0", "", 0, 1000,
     "aggregates of fewer nodes are dissolved into their neighbours"},
    {"amg.coarse_rows", CLMG_OPTION_INTEGER, 0, "256", "", 1, 1000000000,
     "stop coarsening at or below this many rows"},
    {"amg.max_levels", CLMG_OPTION_INTEGER, 0, "20", "", 2, 64, "most levels"},
    {"amg.near_nullspace", CLMG_OPTION_STRING, 0, "", "", 0, 0,
     "Matrix Market file (array) of near-nullspace vectors, one column each (at most 16)"},
    {"amg.coordinates", CLMG_OPTION_STRING, 0, "", "", 0, 0,
     "Matrix Market file (array) of node coordinates, 2 or 3 columns: the rigid-body modes "
     "become the near-nullspace"},
    /* the solvers of clmg_flow (navier_stokes.h) and clmg_homg (homg.h): clmg_options_flow
     * and clmg_options_homg read them with the keys above */
    {"flow.nonlinear_tol", CLMG_OPTION_NUMBER, 0, "1e-8", "", 1e-300, 1,
     "steady flow: the relative residual of the Oseen (Picard) iteration to reach"},
    {"flow.nonlinear_maxit", CLMG_OPTION_INTEGER, 0, "50", "", 1, 100000,
     "steady flow: Oseen iterations at most"},
    {"flow.linearisation", CLMG_OPTION_NAME, 0, "picard", "picard,newton", 0, 0,
     "steady flow: picard (Oseen steps: the wind is the last iterate) or newton (the Oseen "
     "system's exact Jacobian, the upwinded convection's derivative included: fewer nonlinear "
     "iterations; docs/flow.md)"},
    {"flow.newton_start", CLMG_OPTION_NUMBER, 0, "1e-3", "", 0, 1,
     "flow.linearisation=newton: Picard steps until the nonlinear residual is at most this, "
     "then Newton steps (0: Picard throughout)"},
    {"flow.time_scheme", CLMG_OPTION_NAME, 1, "auto", "backward-euler,crank-nicolson,fs-theta,bdf2",
     0, 0,
     "unsteady flow: the time stepping: backward-euler (first order), crank-nicolson, fs-theta "
     "(the fractional-step theta scheme) or bdf2 (second order); auto is the caller's (clmg "
     "flow: docs/flow.md, the library: backward-euler)"},
    {"flow.step_iterations", CLMG_OPTION_INTEGER, 1, "auto", "", 1, 100,
     "unsteady flow, second-order schemes: linear solves per time step, each after the first "
     "a Picard iteration; auto: 2 for crank-nicolson and fs-theta, 1 for bdf2 (docs/flow.md)"},
    {"flow.upwind", CLMG_OPTION_NAME, 1, "auto", "full,samarskij,weighted", 0, 0,
     "the convection's upwinding: full (first order), samarskij (weighted by the local Peclet "
     "number) or weighted (Samarskij's with the Peclet number times flow.upwind_parameter; 0 is "
     "central differences); auto is the problem's (clmg flow: docs/flow.md)"},
    {"flow.upwind_parameter", CLMG_OPTION_NUMBER, 0, "1", "", 0, 1e6,
     "flow.upwind=weighted: the factor of the local Peclet number (0 central differences, 1 "
     "Samarskij's weighting)"},
    {"homg.method", CLMG_OPTION_NAME, 0, "homg", "homg,mfmg,vcycle,fmg", 0, 0,
     "structured-grid method: homg (MFMG cycles of high-occupancy steps; mfmg is its other "
     "name), vcycle (classic V-cycles) or fmg (full multigrid, then V-cycles)"},
    {"homg.maxi", CLMG_OPTION_INTEGER, 0, "32", "", 1, 1048576,
     "homg method: MaxI, the most relaxation steps per level of an MFMG cycle"},
    {"homg.schedule", CLMG_OPTION_NAME, 0, "sawtooth", "sawtooth,ascent,vshape", 0, 0,
     "homg method: the order of the levels in an MFMG cycle (docs/homg.md)"},
    {"homg.error_tol", CLMG_OPTION_NUMBER, 0, "0", "", 0, 1e300,
     "stop when the normalised L1 error against the exact solution is at most this (0: off)"},
    {"homg.stagnation", CLMG_OPTION_NUMBER, 1, "auto", "", 0, 1e6,
     "stop when a cycle cuts the residual by less than this factor (0: off, else above 1): auto "
     "is 1.1, or 0 when maxit is set without tol"},
};

enum { SPEC_COUNT = sizeof SPECS / sizeof SPECS[0] };

static const char *const KIND_NAMES[] = {"name", "name", "number", "integer", "string"};

struct clmg_options {
  char *value[SPEC_COUNT]; /* NULL: unset */
};

size_t clmg_options_key_count(void) {
  return SPEC_COUNT;
}

const clmg_option_spec *clmg_option_spec_at(size_t index) {
  return index < SPEC_COUNT ? &SPECS[index] : NULL;
}

int clmg_options_key_info(size_t index, clmg_option_info *info) {
  if (index >= SPEC_COUNT || !info)
    return 0;
  info->key = SPECS[index].key;
  info->kind = KIND_NAMES[SPECS[index].kind];
  info->default_value = SPECS[index].default_value;
  info->values = SPECS[index].values;
  info->description = SPECS[index].description;
  return 1;
}

static long find_key(const char *key) {
  for (size_t i = 0; key && i < SPEC_COUNT; i++)
    if (strcmp(SPECS[i].key, key) == 0)
      return (long)i;
  return -1;
}

/* "a,b,c" holds word? */
int clmg_option_list_has(const char *list, const char *word) {
  size_t length = strlen(word);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == length && strncmp(p, word, n) == 0 && length > 0)
      return 1;
    if (!end)
      break;
    p = end + 1;
  }
  return 0;
}

/* A value's text for messages: at most 60 characters, printable. */
static void quote_value(const char *value, char *out, size_t size) {
  snprintf(out, size, "%.60s%s", value, strlen(value) > 60 ? "..." : "");
  clmg_message_sanitize(out, size);
}

static int valid_name_syntax(const char *value) {
  size_t n = strlen(value);
  if (n == 0 || n > 31)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)value[i]) && value[i] != '-' && value[i] != '_')
      return 0;
  return 1;
}

static clmg_status check_value(const clmg_option_spec *spec, const char *value, clmg_error *error) {
  char shown[80];
  quote_value(value, shown, sizeof shown);
  if (spec->accepts_auto && strcmp(value, "auto") == 0)
    return CLMG_SUCCESS;
  switch (spec->kind) {
  case CLMG_OPTION_NAME:
    if (clmg_option_list_has(spec->values, value))
      return CLMG_SUCCESS;
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: unknown value '%s' (valid: %s%s)", spec->key, shown,
                          spec->accepts_auto ? "auto, " : "", spec->values);
  case CLMG_OPTION_OPEN_NAME:
    if (valid_name_syntax(value))
      return CLMG_SUCCESS;
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: '%s' is not a name (built-in: %s%s; or a registered name of "
                          "letters, digits, '-' and '_')",
                          spec->key, shown, spec->accepts_auto ? "auto, " : "", spec->values);
  case CLMG_OPTION_NUMBER:
  case CLMG_OPTION_INTEGER: {
    clmg_numeric_locale locale;
    clmg_enter_c_numeric_locale(&locale);
    char *end = NULL;
    errno = 0;
    double x = strtod(value, &end);
    int range_error = errno == ERANGE;
    clmg_leave_c_numeric_locale(&locale);
    if (end == value || *end != '\0' || isspace((unsigned char)value[0]))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "%s: '%s' is not %s%s", spec->key,
                            shown, spec->kind == CLMG_OPTION_INTEGER ? "an integer" : "a number",
                            spec->accepts_auto ? " or auto" : "");
    if (!isfinite(x) || range_error || x < spec->low || x > spec->high ||
        (spec->kind == CLMG_OPTION_INTEGER && x != floor(x)))
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "%s: %s is outside its range (%s %g to %g%s)", spec->key, shown,
                            spec->kind == CLMG_OPTION_INTEGER ? "integers" : "numbers from",
                            spec->low, spec->high, spec->accepts_auto ? ", or auto" : "");
    return CLMG_SUCCESS;
  }
  case CLMG_OPTION_STRING:
    if (strlen(value) < 4096)
      return CLMG_SUCCESS;
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: a value of %zu bytes is too long", spec->key, strlen(value));
  }
  return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "%s: unknown kind", spec->key);
}

/* The message for an unknown key: every valid one, or those of its group
 * when the key names one ("mg.smooth" lists mg.*). */
static clmg_status unknown_key(const char *key, clmg_error *error) {
  char shown[80], list[2048] = "";
  quote_value(key, shown, sizeof shown);
  const char *dot = strchr(key, '.');
  size_t group = dot ? (size_t)(dot - key) + 1 : 0;
  int group_known = 0;
  for (size_t i = 0; group && i < SPEC_COUNT; i++)
    group_known |= strncmp(SPECS[i].key, key, group) == 0;
  for (size_t i = 0; i < SPEC_COUNT; i++) {
    if (group_known && strncmp(SPECS[i].key, key, group) != 0)
      continue;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", SPECS[i].key);
  }
  return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "unknown option '%s' (valid%s: %s)",
                        shown, group_known ? " in its group" : "", list);
}

clmg_status clmg_options_create(clmg_options **options, clmg_error *error) {
  if (!options)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "clmg_options_create: NULL options");
  *options = calloc(1, sizeof **options);
  if (!*options)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "no host memory for an options database");
  return CLMG_SUCCESS;
}

void clmg_options_destroy(clmg_options *options) {
  if (!options)
    return;
  for (size_t i = 0; i < SPEC_COUNT; i++)
    free(options->value[i]);
  free(options);
}

clmg_status clmg_options_copy(const clmg_options *from, clmg_options **to, clmg_error *error) {
  clmg_status status = clmg_options_create(to, error);
  for (size_t i = 0; status == CLMG_SUCCESS && from && i < SPEC_COUNT; i++) {
    if (from->value[i] && !((*to)->value[i] = strdup(from->value[i])))
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for options");
  }
  if (status != CLMG_SUCCESS && to) {
    clmg_options_destroy(*to);
    *to = NULL;
  }
  return status;
}

/* Moves every value of `from` that is set into `to` (from is emptied). */
static void commit(clmg_options *to, clmg_options *from) {
  for (size_t i = 0; i < SPEC_COUNT; i++)
    if (from->value[i]) {
      free(to->value[i]);
      to->value[i] = from->value[i];
      from->value[i] = NULL;
    }
}

clmg_status clmg_options_set(clmg_options *options, const char *key, const char *value,
                             clmg_error *error) {
  if (!options || !key || !value)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_options_set: NULL options, key or value");
  long index = find_key(key);
  if (index < 0)
    return unknown_key(key, error);
  clmg_status status = check_value(&SPECS[index], value, error);
  if (status != CLMG_SUCCESS)
    return status;
  char *copy = strdup(value);
  if (!copy)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for option %s",
                          key);
  free(options->value[index]);
  options->value[index] = copy;
  return CLMG_SUCCESS;
}

clmg_status clmg_options_parse(clmg_options *options, const char *text, clmg_error *error) {
  if (!options || !text)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_options_parse: NULL options or text");
  clmg_options staged = {{0}};
  clmg_status status = CLMG_SUCCESS;
  const char *p = text;
  while (status == CLMG_SUCCESS) {
    while (isspace((unsigned char)*p))
      p++;
    if (!*p)
      break;
    const char *end = p;
    while (*end && !isspace((unsigned char)*end))
      end++;
    size_t length = (size_t)(end - p);
    char *word = malloc(length + 1);
    if (!word) {
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for options");
      break;
    }
    memcpy(word, p, length);
    word[length] = '\0';
    char *equals = strchr(word, '=');
    if (!equals || equals == word) {
      char shown[80];
      quote_value(word, shown, sizeof shown);
      status = clmg_error_set(error, CLMG_ERROR_PARSE,
                              "'%s' is not key=value (e.g. krylov=cg precond=amg tol=1e-8)", shown);
    } else {
      *equals = '\0';
      status = clmg_options_set(&staged, word, equals + 1, error);
    }
    free(word);
    p = end;
  }
  if (status == CLMG_SUCCESS)
    commit(options, &staged);
  for (size_t i = 0; i < SPEC_COUNT; i++)
    free(staged.value[i]);
  return status;
}

/* One JSON member: an object recurses with its name as a prefix; a string,
 * number or boolean is set. */
static clmg_status set_json(clmg_options *staged, const cJSON *item, const char *prefix,
                            clmg_error *error) {
  char key[128];
  snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", item->string ? item->string : "");
  if (cJSON_IsObject(item)) {
    if (strlen(key) > 64)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "option groups nest too deep");
    for (const cJSON *child = item->child; child; child = child->next) {
      clmg_status status = set_json(staged, child, key, error);
      if (status != CLMG_SUCCESS)
        return status;
    }
    return CLMG_SUCCESS;
  }
  char text[64];
  const char *value = NULL;
  if (cJSON_IsString(item)) {
    value = item->valuestring;
  } else if (cJSON_IsBool(item)) {
    value = cJSON_IsTrue(item) ? "true" : "false";
  } else if (cJSON_IsNumber(item)) {
    /* the shortest of 15 and 17 digits that reads back the same: 1e-08,
     * not 1.0000000000000001e-08 */
    clmg_numeric_locale locale;
    clmg_enter_c_numeric_locale(&locale);
    snprintf(text, sizeof text, "%.15g", item->valuedouble);
    if (strtod(text, NULL) != item->valuedouble)
      snprintf(text, sizeof text, "%.17g", item->valuedouble);
    clmg_leave_c_numeric_locale(&locale);
    value = text;
  } else {
    long index = find_key(key);
    if (index < 0)
      return unknown_key(key, error);
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: a JSON %s is not a value (a string, number or boolean is)", key,
                          cJSON_IsArray(item) ? "array" : "null");
  }
  return clmg_options_set(staged, key, value, error);
}

/* The line of byte `offset` in text (1-based). */
static long line_of(const char *text, size_t offset) {
  long line = 1;
  for (size_t i = 0; i < offset && text[i]; i++)
    line += text[i] == '\n';
  return line;
}

static clmg_status parse_json_named(clmg_options *options, const char *json, const char *path,
                                    clmg_error *error) {
  if (!options || !json)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_options_parse_json: NULL options or text");
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
  const char *where = path ? path : "options";
  if (!root) {
    size_t offset = end ? (size_t)(end - json) : 0;
    return clmg_error_set(error, CLMG_ERROR_PARSE, "%.1000s:%ld: malformed JSON near byte %zu",
                          where, line_of(json, offset), offset + 1);
  }
  clmg_status status = CLMG_SUCCESS;
  if (!cJSON_IsObject(root))
    status = clmg_error_set(
        error, CLMG_ERROR_PARSE,
        "%.1000s: the options must be a JSON object ({\"krylov\": \"cg\", ...})", where);
  clmg_options staged = {{0}};
  for (const cJSON *item = root->child; status == CLMG_SUCCESS && item; item = item->next)
    status = set_json(&staged, item, "", error);
  if (status != CLMG_SUCCESS && path && error) {
    char message[sizeof error->message];
    snprintf(message, sizeof message, "%.200s: %.800s", path, error->message);
    memcpy(error->message, message, sizeof message);
  }
  if (status == CLMG_SUCCESS)
    commit(options, &staged);
  for (size_t i = 0; i < SPEC_COUNT; i++)
    free(staged.value[i]);
  cJSON_Delete(root);
  return status;
}

clmg_status clmg_options_parse_json(clmg_options *options, const char *json, clmg_error *error) {
  return parse_json_named(options, json, NULL, error);
}

enum { OPTIONS_FILE_LIMIT = 1 << 20 };

clmg_status clmg_options_read_file(clmg_options *options, const char *path, clmg_error *error) {
  if (!options || !path)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "clmg_options_read_file: NULL options or path");
  FILE *file = fopen(path, "rb");
  if (!file)
    return clmg_error_set(error, CLMG_ERROR_IO, "cannot open %.1000s: %s", path, strerror(errno));
  char *text = malloc(OPTIONS_FILE_LIMIT + 1);
  if (!text) {
    fclose(file);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory to read %.1000s",
                          path);
  }
  /* one byte past the limit tells a file that is too large */
  size_t length = fread(text, 1, OPTIONS_FILE_LIMIT + 1, file);
  int failed = ferror(file);
  fclose(file);
  clmg_status status = CLMG_SUCCESS;
  if (failed)
    status = clmg_error_set(error, CLMG_ERROR_IO, "cannot read %.1000s", path);
  else if (length > OPTIONS_FILE_LIMIT)
    status = clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "%.1000s is larger than an options file may be (1 MiB)", path);
  else if (memchr(text, '\0', length))
    status = clmg_error_set(error, CLMG_ERROR_PARSE, "%.1000s:%ld: a NUL byte in JSON", path,
                            line_of(text, (size_t)((char *)memchr(text, '\0', length) - text)));
  if (status == CLMG_SUCCESS) {
    text[length] = '\0';
    status = parse_json_named(options, text, path, error);
  }
  free(text);
  return status;
}

int clmg_options_builtin(const char *key, const char *value) {
  long index = find_key(key);
  if (index < 0 || !value || check_value(&SPECS[index], value, NULL) != CLMG_SUCCESS)
    return 0;
  const clmg_option_spec *spec = &SPECS[index];
  return spec->kind != CLMG_OPTION_OPEN_NAME ||
         (spec->accepts_auto && strcmp(value, "auto") == 0) ||
         clmg_option_list_has(spec->values, value);
}

const char *clmg_options_get(const clmg_options *options, const char *key) {
  long index = find_key(key);
  if (index < 0)
    return NULL;
  return options && options->value[index] ? options->value[index] : SPECS[index].default_value;
}

int clmg_options_is_set(const clmg_options *options, const char *key) {
  long index = find_key(key);
  return options && index >= 0 && options->value[index] != NULL;
}

/* ---- typed reads for the library (values were checked when set) ---- */

int clmg_options_is_auto(const clmg_options *options, const char *key) {
  const char *value = clmg_options_get(options, key);
  return value && strcmp(value, "auto") == 0;
}

double clmg_options_number(const clmg_options *options, const char *key, double if_auto) {
  const char *value = clmg_options_get(options, key);
  if (!value || strcmp(value, "auto") == 0 || !*value)
    return if_auto;
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  double x = strtod(value, NULL);
  clmg_leave_c_numeric_locale(&locale);
  return x;
}

long clmg_options_integer(const clmg_options *options, const char *key, long if_auto) {
  return (long)clmg_options_number(options, key, (double)if_auto);
}

int clmg_options_is(const clmg_options *options, const char *key, const char *value) {
  const char *got = clmg_options_get(options, key);
  return got && strcmp(got, value) == 0;
}

clmg_status clmg_options_resolve(clmg_options *options, const char *key, const char *value,
                                 clmg_error *error) {
  long index = find_key(key);
  if (index < 0)
    return unknown_key(key, error);
  char *copy = strdup(value);
  if (!copy)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for options");
  free(options->value[index]);
  options->value[index] = copy;
  return CLMG_SUCCESS;
}

/* ---- JSON out ---- */

/* The object of a key's group ("mg" of "mg.cycle"), made on first use. */
static cJSON *group_of(cJSON *root, const char *key, const char **leaf) {
  const char *dot = strchr(key, '.');
  if (!dot) {
    *leaf = key;
    return root;
  }
  char group[32];
  snprintf(group, sizeof group, "%.*s", (int)(dot - key), key);
  *leaf = dot + 1;
  cJSON *object = cJSON_GetObjectItemCaseSensitive(root, group);
  return object ? object : cJSON_AddObjectToObject(root, group);
}

cJSON *clmg_options_to_cjson(const clmg_options *options, int all_keys) {
  cJSON *root = cJSON_CreateObject();
  for (size_t i = 0; root && i < SPEC_COUNT; i++) {
    if (!all_keys && !(options && options->value[i]))
      continue;
    const char *value = clmg_options_get(options, SPECS[i].key);
    const char *leaf = NULL;
    cJSON *group = group_of(root, SPECS[i].key, &leaf);
    int numeric = (SPECS[i].kind == CLMG_OPTION_NUMBER || SPECS[i].kind == CLMG_OPTION_INTEGER) &&
                  strcmp(value, "auto") != 0;
    cJSON *item = !group    ? NULL
                  : numeric ? cJSON_AddNumberToObject(group, leaf,
                                                      clmg_options_number(options, SPECS[i].key, 0))
                            : cJSON_AddStringToObject(group, leaf, value);
    if (!item) {
      cJSON_Delete(root);
      return NULL;
    }
  }
  return root;
}

char *clmg_options_to_json(const clmg_options *options, int all_keys) {
  cJSON *root = clmg_options_to_cjson(options, all_keys);
  if (!root)
    return NULL;
  clmg_numeric_locale locale;
  clmg_enter_c_numeric_locale(&locale);
  char *text = cJSON_Print(root);
  clmg_leave_c_numeric_locale(&locale);
  cJSON_Delete(root);
  return text;
}
