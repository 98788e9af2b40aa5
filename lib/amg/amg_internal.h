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

/* The roots of the aggregates (is_root[i] 1 or 0, caller-allocated, g->n):
 * a distance-`distance` maximal independent set of g by rounds with the
 * fixed priorities above, nodes without neighbours never roots; *rounds
 * (may be NULL) gets the rounds it took. The same set as the device's
 * (lib/amg/device_aggregation.c). */
clmg_status clmg_amg_mis_roots(const clmg_amg_graph *g, int distance, uint8_t *is_root, int *rounds,
                               clmg_error *error);

/* Smoothed aggregation's tentative prolongator on the device for one
 * unknown per node and one near-nullspace vector b (a's precision, a->rows
 * entries): the strength test with threshold theta, the parallel roots
 * `distance` apart (the set clmg_amg_mis_roots chooses), the joining
 * sweeps and the numbering of aggregates by first row, as the host's, then
 * P~ (a->rows x *count, one entry per aggregated row) and the coarse
 * candidate (*count entries). *count 0: no aggregate (nothing made).
 * *rounds (may be NULL): the independent set's rounds; aggregate (may be
 * NULL; a->rows entries): each row's aggregate or -1, downloaded. Failures
 * through the context (lib/amg/device_aggregation.c). */
clmg_status clmg_amg_device_tentative(clmg_context *context, const clmg_csr_device *a, double theta,
                                      int distance, const clmg_vector *b,
                                      clmg_csr_device *tentative, clmg_vector **coarse_b,
                                      size_t *count, int *rounds, int32_t *aggregate);

/* Smoothed aggregation's aggregates on the device for `block` unknowns per
 * node (1 to 16; a node's rows consecutive): for block > 1 the node matrix
 * (entry (I, J) the Frobenius norm of A's block of node rows I and columns
 * J, the host's node_matrix bit for bit), then on it (or on a) the strength
 * test with threshold theta, the parallel roots `distance` apart, the
 * joining sweeps, the dissolving of aggregates below max(min_size,
 * min_fit) nodes and the giving up of those below min_fit, as the host's
 * aggregate_graph with parallel roots; each row's aggregate (or -1) is
 * downloaded into aggregate (a->rows entries; may be NULL), *count the
 * aggregates; aggregate_device (may be NULL) gets them on the device too
 * (the caller destroys it). a's rows hold their columns in order (as every
 * CSR matrix here). An aggregated row without a stored diagonal entry is
 * refused (the prolongator smoothing divides by it), as on the host.
 * Failures through the context (lib/amg/device_aggregation.c). */
clmg_status clmg_amg_device_aggregate_rows(clmg_context *context, const clmg_csr_device *a,
                                           size_t block, double theta, int distance,
                                           size_t min_size, size_t min_fit, int32_t *aggregate,
                                           size_t *count, clmg_vector **aggregate_device);

/* The near-nullspace fit on the device (the host's fit_candidates within
 * rounding, one work-item per aggregate): aggregate (int32, a row's
 * aggregate or -1) from clmg_amg_device_aggregate_rows' aggregate_device,
 * count aggregates, b the k candidates (n x k column-major, n the
 * aggregate's length, in the hierarchy's precision) into P~ (n x count k,
 * k entries per aggregated row) and the coarse candidates (count k x k
 * column-major). Failures through the context. */
clmg_status clmg_amg_device_fit(clmg_context *context, const clmg_vector *aggregate, size_t count,
                                const clmg_vector *b, size_t k, clmg_csr_device *tentative,
                                clmg_vector **coarse_b);

/* The estimate of lambda_max(D^-1 A) that smooths the prolongator: the
 * largest Rayleigh quotient of 20 power steps from a fixed start, on the
 * host, or on the device with the steps' sums kept there and read once
 * (the same estimate within rounding; lib/amg/smoothed_aggregation.c). */
clmg_status clmg_amg_rho_host(const clmg_csr *a, double *rho, clmg_error *error);
clmg_status clmg_amg_rho_device(clmg_context *context, const clmg_csr_device *a, double *rho);

/* clmg_amg_multigrid_create for a caller that already holds a as the
 * device matrix `matrix` (may be NULL; it must outlive the multigrid): on
 * the device path the finest level's arrays are views of matrix's CSR
 * arrays where it is stored as CSR in the hierarchy's precision (no second
 * upload), and the engine's finest operator borrows matrix where it is in
 * mg_options' precision and format (no second layout of the finest level).
 * The hierarchy is the same as without it. */
clmg_status clmg_amg_multigrid_create_on(clmg_context *context, const clmg_csr *a,
                                         clmg_matrix *matrix, const clmg_amg_options *amg_options,
                                         const clmg_multigrid_options *mg_options,
                                         const clmg_amg_patch_smoothing *patch,
                                         clmg_multigrid **multigrid);

#endif
