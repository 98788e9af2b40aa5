/* What the AMG setups (lib/amg) share and do not export. */
#ifndef CLMG_AMG_INTERNAL_H
#define CLMG_AMG_INTERNAL_H

#include "clmg/amg.h"

/* A graph in CSR form: row i lists its neighbours
 * neighbour[start[i] .. start[i + 1]). */
typedef struct clmg_amg_graph {
  size_t n;
  int64_t *start; /* n + 1 */
  int32_t *neighbour;
} clmg_amg_graph;

void clmg_amg_graph_free(clmg_amg_graph *g);

/* The strength graph of the square matrix a (lib/amg/strength.c): row i
 * lists, in a's order, the columns j != i with |a_ij| > 0 and |a_ij| >=
 * row_scale[i] col_scale[j] (col_scale NULL: 1), built on all host cores. */
clmg_status clmg_amg_strength_graph(const clmg_csr *a, const double *row_scale,
                                    const double *col_scale, clmg_amg_graph *g, clmg_error *error);

#endif
