/* The view of a multigrid hierarchy (clmg_multigrid_view, _json) and what
 * the solver's view adds to it: per level rows, nonzeros, the device format,
 * the smoother and its damping, the coarse solver; the operator complexity
 * (the nonzeros of every level over those of the finest) and the grid
 * complexity (the same of the rows); the AMG setup's phases. */
#include "solver/solver_internal.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

typedef struct level_view {
  size_t rows, nonzeros; /* nonzeros 0: not a stored matrix */
  const char *format, *format_description, *smoother, *coarse_solver;
  double damping;
} level_view;

static level_view *levels_of(const clmg_multigrid *multigrid, int *count) {
  int n = clmg_multigrid_levels(multigrid);
  level_view *levels = calloc(n > 0 ? (size_t)n : 1, sizeof *levels);
  for (int l = 0; levels && l < n; l++) {
    const clmg_matrix *matrix = clmg_multigrid_matrix(multigrid, l);
    const clmg_operator *op = clmg_multigrid_operator(multigrid, l);
    level_view *v = &levels[l];
    v->rows = op ? op->rows : 0;
    if (matrix) {
      v->nonzeros = clmg_matrix_nnz(matrix);
      v->format = clmg_matrix_format_name(clmg_matrix_format_of(matrix));
      v->format_description = clmg_matrix_describe(matrix);
    } else if (op) {
      v->format = v->format_description = op->name; /* "block", "stencil5", ... */
    }
    if (l > 0) {
      v->smoother = clmg_multigrid_smoother_name(multigrid, l);
      v->damping = clmg_multigrid_smoother_damping(multigrid, l);
    } else {
      v->coarse_solver = clmg_multigrid_coarse_solver(multigrid);
    }
  }
  *count = levels ? n : 0;
  return levels;
}

static double operator_complexity(const level_view *levels, int count) {
  double total = 0.0;
  for (int l = 0; l < count; l++) {
    if (levels[l].nonzeros == 0)
      return 0.0;
    total += (double)levels[l].nonzeros;
  }
  return count > 0 ? total / (double)levels[count - 1].nonzeros : 0.0;
}

static double grid_complexity(const level_view *levels, int count) {
  double total = 0.0;
  for (int l = 0; l < count; l++)
    total += (double)levels[l].rows;
  return count > 0 && levels[count - 1].rows > 0 ? total / (double)levels[count - 1].rows : 0.0;
}

int clmg_multigrid_view_add(cJSON *object, const clmg_multigrid *multigrid,
                            const clmg_amg_setup_times *times) {
  int count = 0, ok = 1;
  level_view *levels = multigrid ? levels_of(multigrid, &count) : NULL;
  if (multigrid && !levels)
    return 0;
  if (multigrid) {
    cJSON *array = cJSON_AddArrayToObject(object, "hierarchy");
    ok = array != NULL;
    for (int l = 0; ok && l < count; l++) {
      const level_view *v = &levels[l];
      cJSON *level = cJSON_CreateObject();
      ok = level && cJSON_AddItemToArray(array, level);
      ok = ok && cJSON_AddNumberToObject(level, "level", l);
      ok = ok && cJSON_AddNumberToObject(level, "rows", (double)v->rows);
      ok = ok && (v->nonzeros ? cJSON_AddNumberToObject(level, "nonzeros", (double)v->nonzeros)
                              : cJSON_AddNullToObject(level, "nonzeros"));
      ok = ok && (v->format ? cJSON_AddStringToObject(level, "format", v->format)
                            : cJSON_AddNullToObject(level, "format"));
      ok = ok && (v->format_description
                      ? cJSON_AddStringToObject(level, "format_description", v->format_description)
                      : cJSON_AddNullToObject(level, "format_description"));
      ok = ok && (v->smoother ? cJSON_AddStringToObject(level, "smoother", v->smoother)
                              : cJSON_AddNullToObject(level, "smoother"));
      ok = ok && (v->damping > 0 ? cJSON_AddNumberToObject(level, "damping", v->damping)
                                 : cJSON_AddNullToObject(level, "damping"));
      ok = ok &&
           (v->coarse_solver ? cJSON_AddStringToObject(level, "coarse_solver", v->coarse_solver)
                             : cJSON_AddNullToObject(level, "coarse_solver"));
    }
    double complexity = operator_complexity(levels, count);
    ok = ok && (complexity > 0 ? cJSON_AddNumberToObject(object, "operator_complexity", complexity)
                               : cJSON_AddNullToObject(object, "operator_complexity"));
    ok = ok && cJSON_AddNumberToObject(object, "grid_complexity", grid_complexity(levels, count));
  }
  if (ok && times) {
    cJSON *phases = cJSON_AddObjectToObject(object, "amg_setup");
    ok = phases != NULL;
#define ADD_PHASE(field, label) ok = ok && cJSON_AddNumberToObject(phases, #field, times->field);
    CLMG_AMG_SETUP_PHASES(ADD_PHASE)
#undef ADD_PHASE
    ok = ok && cJSON_AddNumberToObject(phases, "total_s", times->total_s);
  }
  free(levels);
  return ok;
}

char *clmg_multigrid_view_json(const clmg_multigrid *multigrid, const clmg_amg_setup_times *times) {
  cJSON *object = cJSON_CreateObject();
  char *text =
      object && clmg_multigrid_view_add(object, multigrid, times) ? cJSON_Print(object) : NULL;
  cJSON_Delete(object);
  return text;
}

/* ---- text ---- */

typedef struct text_buffer {
  char *text;
  size_t length, capacity;
  int failed;
} text_buffer;

static void append(text_buffer *b, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void append(text_buffer *b, const char *format, ...) {
  if (b->failed)
    return;
  for (;;) {
    va_list args;
    va_start(args, format);
    size_t room = b->capacity - b->length;
    int n = b->text ? vsnprintf(b->text + b->length, room, format, args) : -1;
    va_end(args);
    if (n >= 0 && (size_t)n < room) {
      b->length += (size_t)n;
      return;
    }
    size_t capacity = b->capacity ? 2 * b->capacity : 1024;
    while (n >= 0 && capacity - b->length <= (size_t)n)
      capacity *= 2;
    char *grown = realloc(b->text, capacity);
    if (!grown) {
      b->failed = 1;
      return;
    }
    b->text = grown;
    b->capacity = capacity;
  }
}

static const char *or_dash(const char *text) {
  return text && text[0] ? text : "-";
}

static void append_multigrid(text_buffer *b, const clmg_multigrid *multigrid,
                             const clmg_amg_setup_times *times) {
  int count = 0;
  level_view *levels = multigrid ? levels_of(multigrid, &count) : NULL;
  if (multigrid && !levels) {
    b->failed = 1;
    return;
  }
  if (multigrid) {
    append(b, "  %5s %12s %14s  %-12s %-12s %-7s %s\n", "level", "rows", "nonzeros", "format",
           "smoother", "damping", "coarse solver");
    for (int l = count - 1; l >= 0; l--) {
      const level_view *v = &levels[l];
      char nonzeros[32] = "-", damping[32] = "-";
      if (v->nonzeros > 0)
        snprintf(nonzeros, sizeof nonzeros, "%zu", v->nonzeros);
      if (v->damping > 0)
        snprintf(damping, sizeof damping, "%.3g", v->damping);
      append(b, "  %5d %12zu %14s  %-12s %-12s %-7s %s\n", l, v->rows, nonzeros, or_dash(v->format),
             or_dash(v->smoother), damping, or_dash(v->coarse_solver));
    }
    double complexity = operator_complexity(levels, count);
    if (complexity > 0)
      append(b, "  operator complexity %.4f (nonzeros of all levels / of the finest)\n",
             complexity);
    else
      append(b, "  operator complexity unknown (a level is not a stored matrix)\n");
    if (count > 1)
      append(b, "  grid complexity %.4f (rows of all levels / of the finest)\n",
             grid_complexity(levels, count));
  }
  if (times) {
    append(b, "  AMG setup, %.4f s, where it went:\n", times->total_s);
#define PRINT_PHASE(field, label) append(b, "  %10.4f s  %s\n", times->field, label);
    CLMG_AMG_SETUP_PHASES(PRINT_PHASE)
#undef PRINT_PHASE
  }
  free(levels);
}

char *clmg_multigrid_view(const clmg_multigrid *multigrid, const clmg_amg_setup_times *times) {
  text_buffer b = {0};
  append_multigrid(&b, multigrid, times);
  if (b.failed || !b.text) {
    free(b.text);
    return b.failed ? NULL : calloc(1, 1);
  }
  return b.text;
}

/* ---- the solver ---- */

static const char *method_text(const clmg_solver *s, char *text, size_t size) {
  if (s->cycles_only)
    snprintf(text, size, "%s-cycles", clmg_options_get(s->options, "mg.cycle"));
  else if (s->method == CLMG_KRYLOV_GMRES)
    snprintf(text, size, "gmres(%d)", s->krylov.gmres_restart);
  else
    snprintf(text, size, "%s", clmg_krylov_method_name(s->method));
  return text;
}

char *clmg_solver_view(const clmg_solver *s) {
  if (!s)
    return NULL;
  text_buffer b = {0};
  char method[32];
  append(&b, "%-12s %s, preconditioner %s%s, tolerance %g, at most %d iterations\n", "solver",
         method_text(s, method, sizeof method), s->preconditioner_name,
         s->mixed && strcmp(s->preconditioner_name, "none") != 0 ? " in float" : "",
         s->krylov.relative_tolerance, s->krylov.max_iterations);
  append(&b, "%-12s %zu rows", "operator", s->rows);
  if (s->matrix)
    append(&b, ", %zu nonzeros, %s", clmg_matrix_nnz(s->matrix), clmg_matrix_describe(s->matrix));
  else
    append(&b, ", %s", s->op.name ? s->op.name : "a caller's operator");
  append(&b, ", %s\n",
         s->mixed ? "double (preconditioner in float)" : clmg_dtype_name(s->precision));
  append(&b, "%-12s", "options");
  for (size_t i = 0; clmg_option_spec_at(i); i++) {
    const char *key = clmg_option_spec_at(i)->key, *value = clmg_options_get(s->options, key);
    if (value[0] && (clmg_options_is_set(s->options, key) || strncmp(key, "amg.", 4) != 0 ||
                     strcmp(s->preconditioner_name, "amg") == 0))
      append(&b, " %s=%s", key, value);
  }
  if (s->unused[0])
    append(&b, "\n%-12s %s (set, but this solver does not read them)", "unused", s->unused);
  append(&b, "\n%-12s %.4f s (kernels compiled or loaded: %.4f s more)\n", "setup", s->setup_s,
         s->compile_s);
  if (s->have_times) {
    append(&b, "  solver setup, where it went (without compiling):\n");
#define PRINT_PHASE(field, label) append(&b, "  %10.4f s  %s\n", s->times.field, label);
    CLMG_SOLVER_SETUP_PHASES(PRINT_PHASE)
#undef PRINT_PHASE
  }
  if (s->multigrid)
    append_multigrid(&b, s->multigrid, s->have_amg_times ? &s->amg_times : NULL);
  if (b.failed) {
    free(b.text);
    return NULL;
  }
  return b.text;
}

char *clmg_solver_view_json(const clmg_solver *s) {
  if (!s)
    return NULL;
  cJSON *object = cJSON_CreateObject();
  char method[32];
  int ok = object != NULL;
  cJSON *options = ok ? clmg_options_to_cjson(s->options, 1) : NULL;
  ok = ok && options && cJSON_AddItemToObject(object, "options", options);
  if (!ok)
    cJSON_Delete(options);
  ok = ok && cJSON_AddStringToObject(object, "method", method_text(s, method, sizeof method));
  ok = ok && cJSON_AddStringToObject(object, "preconditioner", s->preconditioner_name);
  ok = ok && cJSON_AddStringToObject(object, "precision",
                                     s->mixed ? "mixed" : clmg_dtype_name(s->precision));
  ok = ok && cJSON_AddNumberToObject(object, "rows", (double)s->rows);
  if (s->matrix) {
    ok = ok && cJSON_AddNumberToObject(object, "nonzeros", (double)clmg_matrix_nnz(s->matrix));
    ok = ok && cJSON_AddStringToObject(object, "format",
                                       clmg_matrix_format_name(clmg_matrix_format_of(s->matrix)));
    ok = ok &&
         cJSON_AddStringToObject(object, "format_description", clmg_matrix_describe(s->matrix));
  }
  ok = ok && cJSON_AddStringToObject(object, "unused_options", s->unused);
  ok = ok && cJSON_AddNumberToObject(object, "setup_s", s->setup_s);
  ok = ok && cJSON_AddNumberToObject(object, "compile_s", s->compile_s);
  if (ok && s->have_times) {
    cJSON *phases = cJSON_AddObjectToObject(object, "solver_setup");
    ok = phases != NULL;
#define ADD_PHASE(field, label) ok = ok && cJSON_AddNumberToObject(phases, #field, s->times.field);
    CLMG_SOLVER_SETUP_PHASES(ADD_PHASE)
#undef ADD_PHASE
  }
  ok =
      ok && clmg_multigrid_view_add(object, s->multigrid, s->have_amg_times ? &s->amg_times : NULL);
  if (ok && !s->multigrid && s->matrix) {
    /* one level: what the method works on is A */
    cJSON *array = cJSON_AddArrayToObject(object, "hierarchy"), *level = cJSON_CreateObject();
    ok = array && level && cJSON_AddItemToArray(array, level);
    ok = ok && cJSON_AddNumberToObject(level, "level", 0);
    ok = ok && cJSON_AddNumberToObject(level, "rows", (double)s->rows);
    ok = ok && cJSON_AddNumberToObject(level, "nonzeros", (double)clmg_matrix_nnz(s->matrix));
    ok = ok && cJSON_AddStringToObject(level, "format",
                                       clmg_matrix_format_name(clmg_matrix_format_of(s->matrix)));
    ok =
        ok && cJSON_AddStringToObject(level, "format_description", clmg_matrix_describe(s->matrix));
    ok = ok && cJSON_AddNullToObject(level, "smoother");
    ok = ok && cJSON_AddNullToObject(level, "damping");
    ok = ok && cJSON_AddNullToObject(level, "coarse_solver");
    ok = ok && cJSON_AddNumberToObject(object, "operator_complexity", 1.0);
    ok = ok && cJSON_AddNumberToObject(object, "grid_complexity", 1.0);
  }
  char *text = ok ? cJSON_Print(object) : NULL;
  cJSON_Delete(object);
  return text;
}
