/* --view: see view.h. */
#include "view.h"

#include <stdlib.h>

view_level *view_multigrid_levels(const clmg_multigrid *multigrid, int *count) {
  int n = clmg_multigrid_levels(multigrid);
  view_level *levels = calloc(n > 0 ? (size_t)n : 1, sizeof *levels);
  if (levels == NULL) {
    return NULL;
  }
  for (int l = 0; l < n; l++) {
    const clmg_matrix *matrix = clmg_multigrid_matrix(multigrid, l);
    const clmg_operator *op = clmg_multigrid_operator(multigrid, l);
    view_level *v = &levels[l];
    v->rows = op != NULL ? op->rows : 0;
    if (matrix != NULL) {
      v->nonzeros = clmg_matrix_nnz(matrix);
      v->format = clmg_matrix_format_name(clmg_matrix_format_of(matrix));
      v->format_description = clmg_matrix_describe(matrix);
    } else if (op != NULL) {
      v->format = op->name; /* "block", "stencil5", ...: no stored entries to count */
      v->format_description = op->name;
    }
    if (l > 0) {
      v->smoother = clmg_multigrid_smoother_name(multigrid, l);
    } else {
      v->coarse_solver = clmg_multigrid_coarse_solver(multigrid);
    }
  }
  *count = n;
  return levels;
}

double view_operator_complexity(const view_level *levels, int count) {
  if (count < 1 || levels[count - 1].nonzeros == 0) {
    return 0.0;
  }
  double total = 0.0;
  for (int l = 0; l < count; l++) {
    if (levels[l].nonzeros == 0) {
      return 0.0;
    }
    total += (double)levels[l].nonzeros;
  }
  return total / (double)levels[count - 1].nonzeros;
}

double view_grid_complexity(const view_level *levels, int count) {
  if (count < 1 || levels[count - 1].rows == 0) {
    return 0.0;
  }
  double total = 0.0;
  for (int l = 0; l < count; l++) {
    total += (double)levels[l].rows;
  }
  return total / (double)levels[count - 1].rows;
}

static const char *or_dash(const char *text) {
  return text != NULL && text[0] != '\0' ? text : "-";
}

void view_print(const view_level *levels, int count) {
  printf("\n  %5s %12s %14s  %-8s %-12s %s\n", "level", "rows", "nonzeros", "format", "smoother",
         "coarse solver");
  for (int l = count - 1; l >= 0; l--) {
    const view_level *v = &levels[l];
    char nonzeros[32];
    if (v->nonzeros > 0) {
      snprintf(nonzeros, sizeof nonzeros, "%zu", v->nonzeros);
    } else {
      snprintf(nonzeros, sizeof nonzeros, "-");
    }
    printf("  %5d %12zu %14s  %-8s %-12s %s\n", l, v->rows, nonzeros, or_dash(v->format),
           or_dash(v->smoother), or_dash(v->coarse_solver));
  }
  double complexity = view_operator_complexity(levels, count);
  if (complexity > 0) {
    printf("  operator complexity %.4f (nonzeros of all levels / of the finest)\n", complexity);
  } else {
    printf("  operator complexity unknown (a level is not a stored matrix)\n");
  }
  if (count > 1) {
    printf("  grid complexity %.4f (rows of all levels / of the finest)\n",
           view_grid_complexity(levels, count));
  }
  printf("\n");
  fflush(stdout);
}

void view_amg_times_print(const clmg_amg_setup_times *t) {
  printf("  AMG setup, %.4f s, where it went:\n", t->total_s);
#define PRINT_PHASE(field, label) printf("  %10.4f s  %s\n", t->field, label);
  CLMG_AMG_SETUP_PHASES(PRINT_PHASE)
#undef PRINT_PHASE
  fflush(stdout);
}

void view_amg_times_json(json_writer *w, const clmg_amg_setup_times *t) {
  json_amg_setup_times(w, "amg_setup", t);
}

void view_json(json_writer *w, const view_level *levels, int count) {
  json_array_begin(w, "hierarchy");
  for (int l = 0; l < count; l++) {
    const view_level *v = &levels[l];
    json_object_begin(w, NULL);
    json_integer(w, "level", l);
    json_integer(w, "rows", (long long)v->rows);
    if (v->nonzeros > 0) {
      json_integer(w, "nonzeros", (long long)v->nonzeros);
    } else {
      json_string(w, "nonzeros", NULL);
    }
    json_string(w, "format", v->format);
    json_string(w, "format_description", v->format_description);
    json_string(w, "smoother", v->smoother);
    json_string(w, "coarse_solver", v->coarse_solver);
    json_object_end(w);
  }
  json_array_end(w);
  double complexity = view_operator_complexity(levels, count);
  if (complexity > 0) {
    json_number(w, "operator_complexity", complexity);
  } else {
    json_string(w, "operator_complexity", NULL);
  }
  if (count > 1) {
    json_number(w, "grid_complexity", view_grid_complexity(levels, count));
  }
}
