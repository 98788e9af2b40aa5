/* The solver an options database describes (clmg/solver.h) on distributed
 * operators: a Krylov method with none, Jacobi or a distributed hierarchy's
 * cycle (a geometric one, or the distributed AMG for precond=amg), composed
 * by clmg_solver_create_multigrid around the distributed matrix's
 * operator. */
#include "mpi/mpi_internal.h"

#include <stdio.h>
#include <string.h>

/* precond as the solver will read it: multigrid, unset, with a hierarchy */
static const char *precond_of(const clmg_options *options, int with_hierarchy) {
  return with_hierarchy && !clmg_options_is_set(options, "precond")
             ? "multigrid"
             : clmg_options_get(options, "precond");
}

/* Whether options has key set to other than its default (an echoed
 * options file sets them all: a key at its default changes nothing). */
static int changed(const clmg_options *options, const char *key, const char *default_value) {
  return clmg_options_is_set(options, key) &&
         strcmp(clmg_options_get(options, key), default_value) != 0;
}

clmg_status clmg_mpi_solver_check_options(const clmg_options *options, int with_hierarchy,
                                          clmg_error *error) {
  const char *precond = precond_of(options, with_hierarchy);
  const int amg = strcmp(precond, "amg") == 0;
  const char *allowed = with_hierarchy ? "none, jacobi, multigrid, amg" : "none, jacobi";
  if (amg && !with_hierarchy) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "precond=amg: distributed, the AMG hierarchy comes from "
               "clmg_mpi_amg_multigrid_create (pass it to clmg_mpi_solver_create)");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  if (strcmp(precond, "none") != 0 && strcmp(precond, "jacobi") != 0 && !amg &&
      !(with_hierarchy && strcmp(precond, "multigrid") == 0)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "precond=%.64s runs on one process only (%s); distributed, the preconditioners "
               "are %s",
               precond,
               strcmp(precond, "multigrid") == 0
                   ? "a hierarchy on distributed levels comes from clmg_mpi_multigrid_create"
                   : "a registered preconditioner is made from the whole matrix",
               allowed);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  if (strcmp(clmg_options_get(options, "precision"), "mixed") == 0) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "precision=mixed runs on one process only; distributed, a solve runs in double "
               "or in float");
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  const char *smoother = clmg_options_get(options, "mg.smoother");
  if (amg && (strcmp(smoother, "patch") == 0 || strcmp(smoother, "gauss-seidel") == 0)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "mg.smoother=%s smooths with every level's host matrix, which runs on one "
               "process only; distributed AMG smooths with chebyshev, jacobi, jacobi-rho or spai0",
               smoother);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  /* AMG's keys: read by precond=amg, which cannot honour the classical
   * coarsening, block sizes and near-nullspace vectors (distributed AMG,
   * clmg_mpi_amg_levels_create, is scalar smoothed aggregation) */
  char keys[512] = "";
  size_t used = 0;
  clmg_option_info info;
  for (size_t k = 0; clmg_options_key_info(k, &info); k++) {
    if (strncmp(info.key, "amg.", 4) != 0 || !changed(options, info.key, info.default_value))
      continue;
    const char *value = clmg_options_get(options, info.key);
    int refused =
        !amg || (strcmp(info.key, "amg.coarsening") == 0 && strcmp(value, "classical") == 0) ||
        (strcmp(info.key, "amg.block_size") == 0 && strcmp(value, "1") != 0) ||
        strcmp(info.key, "amg.near_nullspace") == 0 || strcmp(info.key, "amg.coordinates") == 0;
    if (!refused)
      continue;
    int n = amg ? snprintf(keys + used, sizeof keys - used, "%s%s=%.64s", used ? ", " : "",
                           info.key, value)
                : snprintf(keys + used, sizeof keys - used, "%s%s", used ? ", " : "", info.key);
    used = n > 0 && (size_t)n < sizeof keys - used ? used + (size_t)n : used;
  }
  if (used > 0) {
    if (error && amg)
      snprintf(error->message, sizeof error->message,
               "%s: distributed AMG is smoothed aggregation of scalar rows with the constant "
               "as near-nullspace; classical coarsening, block sizes and near-nullspace "
               "vectors run on one process",
               keys);
    else if (error)
      snprintf(error->message, sizeof error->message,
               "%s: distributed, the AMG keys are read by precond=amg only, and precond is %s",
               keys, precond);
    return CLMG_ERROR_INVALID_ARGUMENT;
  }
  return CLMG_SUCCESS;
}

clmg_status clmg_mpi_solver_create(clmg_mpi *mpi, clmg_mpi_matrix *matrix,
                                   clmg_multigrid *multigrid, int symmetric,
                                   const clmg_options *options, clmg_solver **solver) {
  if (!solver)
    return mpi ? clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                                   "clmg_mpi_solver_create: NULL solver")
               : CLMG_ERROR_INVALID_ARGUMENT;
  *solver = NULL;
  if (!mpi)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_context *context = mpi->context;
  clmg_error error = {{0}};
  clmg_status status = CLMG_SUCCESS;
  if (!matrix)
    status = clmg_context_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                               "clmg_mpi_solver_create: no matrix");
  if (status == CLMG_SUCCESS) {
    status = clmg_mpi_solver_check_options(options, multigrid != NULL, &error);
    if (status != CLMG_SUCCESS)
      clmg_context_fail(context, status, "%s", error.message);
  }
  /* what the solver's setup could refuse on one rank alone (its device's
   * precision, a zero on its rows' diagonal) is agreed first: that rank
   * would leave the others waiting in the setup's first iteration */
  if (status == CLMG_SUCCESS)
    status = clmg_context_check_precision(
        context,
        strcmp(clmg_options_get(options, "precision"), "float") == 0 ? CLMG_FLOAT : CLMG_DOUBLE);
  if (status == CLMG_SUCCESS && strcmp(precond_of(options, multigrid != NULL), "jacobi") == 0) {
    clmg_preconditioner probe = {0};
    status = clmg_mpi_preconditioner_jacobi(matrix, &probe);
    clmg_preconditioner_destroy(&probe);
  }
  clmg_operator op = {0};
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_matrix_operator(matrix, 0, &op);
  status = clmg_mpi_agree(mpi, status);
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_multigrid(context, &op, multigrid, symmetric, options, solver);
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS) {
    clmg_solver_destroy(*solver);
    *solver = NULL;
  }
  return status;
}
