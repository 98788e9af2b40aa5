/* Internal interface of the solve layer (Krylov methods, the multigrid
 * engine, smoothers, coarse solvers): what its files share. Not installed. */
#ifndef CLMG_SOLVE_INTERNAL_H
#define CLMG_SOLVE_INTERNAL_H

#include "core/internal.h"

/* Appends one relative residual to result->history (capacity: its allocated
 * length, kept by the solver). */
clmg_status clmg_history_append(clmg_context *context, clmg_krylov_result *result, size_t *capacity,
                                double relative_residual);

/* ---- CG with caller-owned work vectors (lib/solve/krylov.c) ----
 * For solvers that run CG many times on one matrix (the multigrid coarse
 * solve, once per cycle): the five vectors are made once, where clmg_cg
 * makes (and zeroes, with a synchronisation each) its own on every call. */
typedef struct clmg_cg_workspace {
  clmg_vector *r, *u, *w, *p, *s;
} clmg_cg_workspace;

clmg_status clmg_cg_workspace_create(clmg_context *context, clmg_dtype type, size_t n,
                                     clmg_cg_workspace *workspace);
void clmg_cg_workspace_destroy(clmg_cg_workspace *workspace);
/* clmg_cg on the workspace's vectors (of the matrix's size and precision). */
clmg_status clmg_cg_in_workspace(const clmg_matrix *a, const clmg_vector *b, clmg_vector *x,
                                 const clmg_preconditioner *preconditioner,
                                 const clmg_krylov_options *options, clmg_krylov_result *result,
                                 clmg_cg_workspace *workspace);

#endif
