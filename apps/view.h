/* --view: the levels a solver works on, for clmg poisson and clmg solve. Per
 * level: rows, nonzeros, the device format, the smoother and the coarse
 * solver; the operator complexity (the nonzeros of every level over those
 * of the finest) and the grid complexity (the same of the rows); and for
 * AMG where the setup's time went. */
#ifndef CLMG_VIEW_H
#define CLMG_VIEW_H

#include "apputil.h"

/* One level of what a solver works on. Strings may be NULL (not used on that
 * level); nonzeros is 0 for an operator that is not a stored matrix. */
typedef struct view_level {
  size_t rows, nonzeros;
  const char *format;             /* clmg_matrix_format_name, e.g. "sell" */
  const char *format_description; /* clmg_matrix_describe */
  const char *smoother;
  const char *coarse_solver;
} view_level;

/* The levels of a multigrid hierarchy, coarsest first (malloc'ed, *count of
 * them); NULL when out of memory. */
view_level *view_multigrid_levels(const clmg_multigrid *multigrid, int *count);

/* Sum of the levels' nonzeros over the finest level's (the last); 0 when a
 * level's nonzeros are unknown. */
double view_operator_complexity(const view_level *levels, int count);

/* Sum of the levels' rows over the finest level's; 0 without levels. */
double view_grid_complexity(const view_level *levels, int count);

/* A table on stdout, finest level last. */
void view_print(const view_level *levels, int count);

/* The AMG setup's phases (clmg_amg_setup_times): a table on stdout, or
 * "amg_setup": {strength_s, ...} in the open object. */
void view_amg_times_print(const clmg_amg_setup_times *times);
void view_amg_times_json(json_writer *w, const clmg_amg_setup_times *times);

/* "hierarchy": [{level, rows, nonzeros, format, format_description, smoother,
 * coarse_solver}, ...], "operator_complexity" and "grid_complexity" in the
 * open object. */
void view_json(json_writer *w, const view_level *levels, int count);

#endif
