/* --view of a distributed hierarchy (mpirun clmg poisson), whose levels
 * the library's view cannot see whole (clmg_multigrid_view shows one
 * process's hierarchy: clmg solve and clmg poisson use it). Per level: rows,
 * nonzeros, the device format, the smoother and the coarse solver; the
 * operator complexity (the nonzeros of every level over those of the
 * finest) and the grid complexity (the same of the rows). */
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

/* Sum of the levels' nonzeros over the finest level's (the last); 0 when a
 * level's nonzeros are unknown. */
double view_operator_complexity(const view_level *levels, int count);

/* Sum of the levels' rows over the finest level's; 0 without levels. */
double view_grid_complexity(const view_level *levels, int count);

/* A table on stdout, finest level last. */
void view_print(const view_level *levels, int count);

/* "hierarchy": [{level, rows, nonzeros, format, format_description, smoother,
 * coarse_solver}, ...], "operator_complexity" and "grid_complexity" in the
 * open object. */
void view_json(json_writer *w, const view_level *levels, int count);

#endif
