/* What the AMG setups (lib/amg) share and do not export. */
#ifndef CLMG_AMG_INTERNAL_H
#define CLMG_AMG_INTERNAL_H

#include "clmg/amg.h"

/* One classical coarsening of the square matrix a (lib/amg/classical.c):
 * the strength graph with threshold theta (|a_ij| >= theta max_{k != i}
 * |a_ik|), a PMIS C/F splitting of it and direct interpolation. P gets
 * a->rows rows and one column per C-point (numbered in row order); a row
 * with no strong neighbour (an identity row, say) is an F-point whose row
 * of P is zero. *coarse_count 0 means no coarsening was possible. */
clmg_status clmg_amg_classical_prolongator(const clmg_csr *a, double theta, clmg_csr *p,
                                           size_t *coarse_count, clmg_error *error);
/* The C/F splitting the prolongator above is built on: is_coarse[i] 1 for
 * a C-point, 0 for an F-point (caller-allocated, a->rows); *coarse_count
 * the number of C-points. For tests and diagnostics. */
clmg_status clmg_amg_classical_splitting(const clmg_csr *a, double theta, uint8_t *is_coarse,
                                         size_t *coarse_count, clmg_error *error);

#endif
