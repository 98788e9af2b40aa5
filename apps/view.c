/* --view: see view.h. */
#include "view.h"

#include <stdlib.h>

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
  printf("\n  %5s %12s %14s  %-12s %-12s %s\n", "level", "rows", "nonzeros", "format", "smoother",
         "coarse solver");
  for (int l = count - 1; l >= 0; l--) {
    const view_level *v = &levels[l];
    char nonzeros[32];
    if (v->nonzeros > 0) {
      snprintf(nonzeros, sizeof nonzeros, "%zu", v->nonzeros);
    } else {
      snprintf(nonzeros, sizeof nonzeros, "-");
    }
    printf("  %5d %12zu %14s  %-12s %-12s %s\n", l, v->rows, nonzeros, or_dash(v->format),
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
