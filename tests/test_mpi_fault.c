/* Failures on one rank inside distributed solves (ctest runs it with 1, 2
 * and 4 ranks): a caller's preconditioner, operator, smoother or coarse
 * solver that fails on the last rank only, and a device allocation refused
 * by a memory limit on that rank only, end the solve on every rank with
 * the failing rank's status and message ("rank R: ..."); nothing hangs,
 * and a second solve on the same communicator converges.
 *
 * Not cmocka: a failed check must stop every rank (MPI_Abort), or the
 * others would wait in a collective for the one that left. Without the
 * agreement inside the solves the ranks that did not fail wait for the
 * failing one's halo messages or reductions: ctest's timeout. */
#define _POSIX_C_SOURCE 200809L
#include "clmg/fem.h"
#include "clmg/mesh.h"
#include "clmg/mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_mpi_util.h"

/* The rank that fails, and the text its failures carry. */
#define FAILING_RANK (world_size - 1)
#define ON_PURPOSE "failing on purpose"

/* Every rank returned `expected` with "rank R: " (R the failing rank) and
 * the failing rank's own text in its message. */
static void check_agreed(clmg_status status, clmg_status expected, clmg_mpi *mpi, const char *what,
                         const char *text) {
  clmg_context *context = clmg_mpi_context(mpi);
  const char *message = clmg_context_message(context);
  char prefix[32];
  snprintf(prefix, sizeof prefix, "rank %d: ", FAILING_RANK);
  CHECK(status == expected, "%s: status %s, expected %s (%s)", what, clmg_status_string(status),
        clmg_status_string(expected), message);
  CHECK(strncmp(message, prefix, strlen(prefix)) == 0 && strstr(message, text) != NULL,
        "%s: the message '%s' is not the failing rank's ('%s...%s')", what, message, prefix, text);
  /* the communicator is clean: the next collective call matches on every rank */
  CHECK(clmg_mpi_agree(mpi, CLMG_SUCCESS) == CLMG_SUCCESS, "%s: a collective call after it fails",
        what);
}

/* The 5-point Laplacian on an m x m grid. */
static void laplacian(size_t m, clmg_csr *a) {
  size_t n = m * m, count = 0;
  int32_t *rows = malloc(5 * n * sizeof *rows), *cols = malloc(5 * n * sizeof *cols);
  double *values = malloc(5 * n * sizeof *values);
  CHECK(rows && cols && values, "no memory");
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      const long di[] = {0, -1, 1, 0, 0}, dj[] = {0, 0, 0, -1, 1};
      for (int k = 0; k < 5; ++k) {
        long ii = (long)i + di[k], jj = (long)j + dj[k];
        if (ii < 0 || jj < 0 || ii >= (long)m || jj >= (long)m)
          continue;
        rows[count] = (int32_t)(i * m + j);
        cols[count] = (int32_t)(ii * (long)m + jj);
        values[count++] = k == 0 ? 4.0 : -1.0;
      }
    }
  clmg_error error;
  CHECK(clmg_csr_from_triplets(n, n, count, rows, cols, values, a, &error) == CLMG_SUCCESS, "%s",
        error.message);
  free(rows);
  free(cols);
  free(values);
}

/* A distributed problem A x = b with a known solution. */
typedef struct problem {
  clmg_mpi_matrix *matrix;
  clmg_operator op;
  clmg_preconditioner jacobi;
  clmg_vector *b, *x;
  double *solution; /* global, on rank 0 */
  size_t n;
} problem;

static void problem_create(clmg_mpi *mpi, size_t m, problem *p) {
  clmg_context *context = clmg_mpi_context(mpi);
  memset(p, 0, sizeof *p);
  clmg_csr a = {0};
  laplacian(m, &a);
  p->n = a.rows;
  CHECK_OK(clmg_mpi_matrix_scatter(mpi, 0, &a, NULL, &p->matrix), context);
  CHECK_OK(clmg_mpi_matrix_operator(p->matrix, 0, &p->op), context);
  CHECK_OK(clmg_mpi_preconditioner_jacobi(p->matrix, &p->jacobi), context);
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(p->matrix, &info);
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, info.local_rows, &p->b), context);
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, info.local_rows, &p->x), context);
  /* x* = sin(i), b = A x* */
  p->solution = malloc(p->n * sizeof *p->solution);
  double *b = malloc(p->n * sizeof *b);
  CHECK(p->solution && b, "no memory");
  for (size_t i = 0; i < p->n; ++i)
    p->solution[i] = sin((double)i + 1.0);
  clmg_csr_spmv_host(1.0, &a, p->solution, 0.0, b);
  CHECK_OK(clmg_mpi_vector_scatter(p->matrix, 0, b, p->b), context);
  free(b);
  clmg_csr_free(&a);
}

static void problem_destroy(problem *p) {
  clmg_vector_destroy(p->b);
  clmg_vector_destroy(p->x);
  clmg_preconditioner_destroy(&p->jacobi);
  clmg_operator_destroy(&p->op);
  clmg_mpi_matrix_destroy(p->matrix);
  free(p->solution);
}

/* x solves the problem: the residual recomputed from x meets the
 * tolerance, and x is the known solution to the conditioning's accuracy. */
static void check_solved(clmg_context *context, problem *p, double tolerance, const char *what) {
  clmg_vector *r = NULL;
  double r_norm = 0, b_norm = 0;
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, clmg_vector_length(p->x), &r), context);
  CHECK_OK(clmg_operator_defect(&p->op, p->b, p->x, r), context);
  CHECK_OK(clmg_nrm2(r, &r_norm), context);
  CHECK_OK(clmg_nrm2(p->b, &b_norm), context);
  clmg_vector_destroy(r);
  CHECK(isfinite(r_norm) && r_norm <= 1.01 * tolerance * b_norm, "%s: relative residual %.3e", what,
        r_norm / b_norm);
  double *x = malloc(p->n * sizeof *x);
  CHECK(x, "no memory");
  CHECK_OK(clmg_mpi_vector_gather(p->matrix, 0, p->x, x), context);
  if (world_rank == 0) {
    double error = 0;
    for (size_t i = 0; i < p->n; ++i)
      error = fmax(error, fabs(x[i] - p->solution[i]));
    CHECK(error <= 1e-5, "%s: x differs from the solution by %.3e", what, error);
  }
  free(x);
}

/* ---- a caller's preconditioner and operator that fail on one rank ---- */

typedef struct failing_preconditioner {
  const clmg_preconditioner *inner;
  clmg_context *context;
  int calls, fail_at; /* fail_at 0: never */
} failing_preconditioner;

static clmg_status failing_preconditioner_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  failing_preconditioner *f = data;
  clmg_status status = f->inner->apply(f->inner->data, r, z);
  if (status == CLMG_SUCCESS && world_rank == FAILING_RANK && ++f->calls == f->fail_at)
    return clmg_context_fail(f->context, CLMG_ERROR_OPENCL,
                             "test preconditioner: " ON_PURPOSE " at application %d", f->calls);
  return status;
}

/* The operator's apply, failing on one rank after its halo exchange: a
 * caller's operator that communicates takes part in its exchanges. */
typedef struct failing_operator {
  const clmg_operator *inner;
  clmg_context *context;
  int calls, fail_at;
} failing_operator;

static clmg_status failing_operator_apply(void *data, double alpha, const clmg_vector *x,
                                          double beta, clmg_vector *y) {
  failing_operator *f = data;
  clmg_status status = clmg_operator_apply(f->inner, alpha, x, beta, y);
  if (status == CLMG_SUCCESS && world_rank == FAILING_RANK && ++f->calls == f->fail_at)
    return clmg_context_fail(f->context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                             "test operator: " ON_PURPOSE " at product %d", f->calls);
  return status;
}

static const clmg_krylov_method methods[] = {CLMG_KRYLOV_CG, CLMG_KRYLOV_GMRES,
                                             CLMG_KRYLOV_BICGSTAB};

static void test_krylov(clmg_mpi *mpi) {
  clmg_context *context = clmg_mpi_context(mpi);
  problem p;
  problem_create(mpi, 40, &p);
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = 1e-10;
  for (int k = 0; k < 3; ++k) {
    const char *name = clmg_krylov_method_name(methods[k]);
    char what[96];
    /* the preconditioner fails at its 3rd application, on one rank */
    failing_preconditioner fp = {&p.jacobi, context, 0, 3};
    clmg_preconditioner failing = {0};
    failing.data = &fp;
    failing.apply = failing_preconditioner_apply;
    failing.name = "test preconditioner";
    CHECK_OK(clmg_vector_fill(p.x, 0.0), context);
    clmg_krylov_result result;
    clmg_status status =
        clmg_krylov_solve(methods[k], &p.op, p.b, p.x, &failing, &options, &result);
    snprintf(what, sizeof what, "%s, failing preconditioner", name);
    check_agreed(status, CLMG_ERROR_OPENCL, mpi, what, ON_PURPOSE " at application 3");
    CHECK(!result.converged, "%s: converged", what);
    clmg_krylov_result_free(&result);

    /* the operator's product fails at its 4th application, on one rank */
    failing_operator fo = {&p.op, context, 0, 4};
    clmg_operator op = {0};
    op.data = &fo;
    op.context = context;
    op.rows = p.op.rows;
    op.cols = p.op.cols;
    op.precision = p.op.precision;
    op.name = "test operator";
    op.apply = failing_operator_apply;
    CHECK_OK(clmg_vector_fill(p.x, 0.0), context);
    status = clmg_krylov_solve(methods[k], &op, p.b, p.x, &p.jacobi, &options, &result);
    snprintf(what, sizeof what, "%s, failing operator", name);
    check_agreed(status, CLMG_ERROR_OUT_OF_DEVICE_MEMORY, mpi, what, ON_PURPOSE " at product 4");
    clmg_krylov_result_free(&result);

    /* the same communicator, the same matrix: a solve that converges */
    CHECK_OK(clmg_vector_fill(p.x, 0.0), context);
    CHECK_OK(clmg_krylov_solve(methods[k], &p.op, p.b, p.x, &p.jacobi, &options, &result), context);
    snprintf(what, sizeof what, "%s after the failures", name);
    CHECK(result.converged, "%s: not converged", what);
    check_solved(context, &p, options.relative_tolerance, what);
    clmg_krylov_result_free(&result);
  }
  problem_destroy(&p);
}

/* ---- a device allocation refused on one rank ---- */

/* The last rank's context may hold little more than the problem: the
 * solve's work vectors exceed its memory limit there only (a real
 * CLMG_ERROR_OUT_OF_DEVICE_MEMORY of the library's allocator). */
static void test_memory_limit(void) {
  const uint64_t limit = 64ull << 20;
  clmg_context_options context_options;
  clmg_context_options_defaults(&context_options);
  context_options.memory_limit_bytes = world_rank == FAILING_RANK ? limit : 0;
  clmg_context *context = NULL;
  CHECK_OK(clmg_context_create(&context_options, &context), context);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  problem p;
  problem_create(mpi, 40, &p);
  clmg_krylov_options options;
  clmg_krylov_options_defaults(&options);
  options.relative_tolerance = 1e-10;
  /* the limit less what the problem holds, less two of its vectors: the
   * third work vector does not fit */
  const size_t local = clmg_vector_length(p.x);
  clmg_vector *padding = NULL;
  if (world_rank == FAILING_RANK) {
    uint64_t held = clmg_context_device_bytes(context);
    uint64_t room = 2 * local * sizeof(double) + local * sizeof(double) / 2;
    CHECK(held + room < limit, "the problem holds %llu bytes", (unsigned long long)held);
    size_t pad = (size_t)((limit - held - room) / sizeof(double));
    CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, pad, &padding), context);
  }
  for (int k = 0; k < 3; ++k) {
    char what[96];
    snprintf(what, sizeof what, "%s over the memory limit", clmg_krylov_method_name(methods[k]));
    CHECK_OK(clmg_vector_fill(p.x, 0.0), context);
    clmg_krylov_result result;
    clmg_status status =
        clmg_krylov_solve(methods[k], &p.op, p.b, p.x, &p.jacobi, &options, &result);
    check_agreed(status, CLMG_ERROR_OUT_OF_DEVICE_MEMORY, mpi, what, "memory_limit_bytes");
    clmg_krylov_result_free(&result);
  }
  clmg_vector_destroy(padding);
  for (int k = 0; k < 3; ++k) {
    CHECK_OK(clmg_vector_fill(p.x, 0.0), context);
    clmg_krylov_result result;
    CHECK_OK(clmg_krylov_solve(methods[k], &p.op, p.b, p.x, &p.jacobi, &options, &result), context);
    check_solved(context, &p, options.relative_tolerance, "a solve within the memory limit");
    clmg_krylov_result_free(&result);
  }
  problem_destroy(&p);
  clmg_mpi_destroy(mpi);
  clmg_context_destroy(context);
}

/* ---- multigrid: a caller's smoother or coarse solver failing on one rank ---- */

typedef struct smoother_factory {
  int calls, fail_at; /* shared by the levels' smoothers; fail_at 0: never */
} smoother_factory;

typedef struct failing_smoother {
  clmg_smoother inner; /* the library's Jacobi */
  clmg_context *context;
  smoother_factory *factory;
} failing_smoother;

static clmg_status failing_smoother_setup(void *data, const clmg_operator *a) {
  failing_smoother *s = data;
  return s->inner.setup ? s->inner.setup(s->inner.data, a) : CLMG_SUCCESS;
}

/* The library's smoothing (with its halo exchanges) first, then the failure. */
static clmg_status failing_smoother_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                                          clmg_vector *x, int steps, int x_is_zero) {
  failing_smoother *s = data;
  clmg_status status = s->inner.apply(s->inner.data, a, b, x, steps, x_is_zero);
  if (status == CLMG_SUCCESS && world_rank == FAILING_RANK &&
      ++s->factory->calls == s->factory->fail_at)
    return clmg_context_fail(s->context, CLMG_ERROR_OPENCL,
                             "test smoother: " ON_PURPOSE " at smoothing %d", s->factory->calls);
  return status;
}

static void failing_smoother_destroy(void *data) {
  failing_smoother *s = data;
  clmg_smoother_destroy(&s->inner);
  free(s);
}

static clmg_status make_failing_smoother(void *factory_data, clmg_context *context, int level,
                                         const clmg_operator *a, clmg_smoother *smoother) {
  (void)level;
  (void)a;
  smoother_factory *factory = factory_data;
  failing_smoother *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_context_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "test smoother");
  clmg_status status = clmg_smoother_jacobi(context, 0.0, &s->inner);
  if (status != CLMG_SUCCESS) {
    free(s);
    return status;
  }
  s->context = context;
  s->factory = factory;
  memset(smoother, 0, sizeof *smoother);
  smoother->data = s;
  smoother->name = "test smoother";
  smoother->setup = failing_smoother_setup;
  smoother->apply = failing_smoother_apply;
  smoother->destroy = failing_smoother_destroy;
  return CLMG_SUCCESS;
}

/* A coarse solver: Jacobi sweeps of the library's smoother (an inexact
 * solve, with its halo exchanges), failing at its fail_at-th solve on one
 * rank. */
typedef struct failing_coarse {
  clmg_context *context;
  clmg_smoother sweeps;
  int calls, fail_at;
} failing_coarse;

static clmg_status failing_coarse_setup(void *data, const clmg_operator *a) {
  failing_coarse *c = data;
  clmg_smoother_destroy(&c->sweeps);
  clmg_status status = clmg_smoother_jacobi(c->context, 0.0, &c->sweeps);
  return status == CLMG_SUCCESS ? c->sweeps.setup(c->sweeps.data, a) : status;
}

static clmg_status failing_coarse_solve(void *data, const clmg_operator *a, const clmg_vector *b,
                                        clmg_vector *x) {
  failing_coarse *c = data;
  clmg_status status = c->sweeps.apply(c->sweeps.data, a, b, x, 20, 1);
  if (status == CLMG_SUCCESS && world_rank == FAILING_RANK && ++c->calls == c->fail_at)
    return clmg_context_fail(c->context, CLMG_ERROR_OPENCL,
                             "test coarse solver: " ON_PURPOSE " at solve %d", c->calls);
  return status;
}

static void failing_coarse_destroy(void *data) {
  clmg_smoother_destroy(&((failing_coarse *)data)->sweeps);
}

/* Each rank's rows of the Q1 CIRCLE hierarchy's levels. */
static void split_levels(clmg_mpi *mpi, const clmg_fe_hierarchy *h, int levels,
                         clmg_mpi_level_rows *rows, uint64_t *first, uint64_t *count) {
  memset(rows, 0, (size_t)levels * sizeof *rows);
  clmg_error error;
  for (int l = 0; l < levels; ++l) {
    clmg_mpi_even_rows(mpi, h->a[l].rows, &first[l], &count[l]);
    rows[l].first_row = first[l];
    CHECK(clmg_csr_row_block(&h->a[l], first[l], count[l], &rows[l].a, &error) == CLMG_SUCCESS,
          "%s", error.message);
    if (l > 0) {
      CHECK(clmg_csr_row_block(&h->p[l], first[l], count[l], &rows[l].p, &error) == CLMG_SUCCESS,
            "%s", error.message);
      CHECK(clmg_csr_row_block(&h->r[l], first[l - 1], count[l - 1], &rows[l].r, &error) ==
                CLMG_SUCCESS,
            "%s", error.message);
    }
  }
}

static void test_multigrid(clmg_mpi *mpi) {
  clmg_context *context = clmg_mpi_context(mpi);
  enum { LEVELS = 4 };
  clmg_mesh circle;
  clmg_error error;
  clmg_poisson_problem poisson;
  CHECK(clmg_mesh_circle(&circle, &error) == CLMG_SUCCESS, "%s", error.message);
  clmg_poisson_problem_circle(&poisson);
  clmg_fe_hierarchy h;
  CHECK(clmg_fe_poisson_hierarchy(&circle, LEVELS, 1, &poisson, CLMG_NUMBERING_2LV, 1, &h,
                                  &error) == CLMG_SUCCESS,
        "%s", error.message);
  clmg_mpi_level_rows rows[LEVELS];
  uint64_t first[LEVELS], count[LEVELS];
  split_levels(mpi, &h, LEVELS, rows, first, count);
  clmg_mpi_matrix *finest = NULL;
  CHECK_OK(clmg_mpi_matrix_create(mpi, first[LEVELS - 1], &rows[LEVELS - 1].a, NULL, &finest),
           context);
  clmg_vector *b = NULL, *x = NULL;
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, count[LEVELS - 1], &b), context);
  CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, count[LEVELS - 1], &x), context);
  CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.b, b), context);
  clmg_krylov_options solve_options;
  clmg_krylov_options_defaults(&solve_options);
  solve_options.relative_tolerance = 1e-8;
  solve_options.max_iterations = 200;

  for (int variant = 0; variant < 2; ++variant) {
    /* 0: the smoothers fail at their 7th smoothing (the second cycle's);
     * 1: the coarse solver at its 2nd solve */
    smoother_factory factory = {0, 3};
    failing_coarse coarse = {context, {0}, 0, 2};
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    if (variant == 0) {
      options.smoother_factory = make_failing_smoother;
      options.smoother_factory_data = &factory;
    } else {
      options.coarse_solver.data = &coarse;
      options.coarse_solver.name = "test coarse solver";
      options.coarse_solver.setup = failing_coarse_setup;
      options.coarse_solver.solve = failing_coarse_solve;
      options.coarse_solver.destroy = failing_coarse_destroy;
    }
    const char *text = variant == 0 ? ON_PURPOSE " at smoothing 3" : ON_PURPOSE " at solve 2";
    clmg_multigrid *multigrid = NULL;
    CHECK_OK(clmg_mpi_multigrid_create(mpi, LEVELS, rows, &options, &multigrid), context);

    /* cycles alone: their convergence check is the only reduction */
    clmg_krylov_result result;
    CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.x0, x), context);
    clmg_status status = clmg_multigrid_solve(multigrid, b, x, &solve_options, &result);
    check_agreed(status, CLMG_ERROR_OPENCL, mpi, "multigrid solve", text);
    clmg_krylov_result_free(&result);

    /* one cycle alone, no reduction at all: agreed before it returns */
    factory.calls = 0;
    factory.fail_at = variant == 0 ? 1 : 0;
    coarse.calls = 0;
    coarse.fail_at = variant == 0 ? 0 : 1;
    const char *cycle_text = variant == 0 ? ON_PURPOSE " at smoothing 1" : ON_PURPOSE " at solve 1";
    status = clmg_multigrid_cycle(multigrid, b, x);
    check_agreed(status, CLMG_ERROR_OPENCL, mpi, "multigrid cycle", cycle_text);

    /* as the preconditioner of the solver an options database makes */
    const char *solver_text =
        variant == 0 ? ON_PURPOSE " at smoothing 3" : ON_PURPOSE " at solve 2";
    const char *krylov[] = {"krylov=cg tol=1e-8", "krylov=gmres tol=1e-8",
                            "krylov=bicgstab tol=1e-8"};
    for (int k = 0; k < 3; ++k) {
      clmg_options *db = NULL;
      CHECK(clmg_options_create(&db, NULL) == CLMG_SUCCESS &&
                clmg_options_parse(db, krylov[k], NULL) == CLMG_SUCCESS,
            "options");
      clmg_solver *solver = NULL;
      factory.fail_at = coarse.fail_at = 0; /* the solver's setup runs one iteration */
      CHECK_OK(clmg_mpi_solver_create(mpi, finest, multigrid, 1, db, &solver), context);
      factory.calls = coarse.calls = 0;
      factory.fail_at = variant == 0 ? 3 : 0;
      coarse.fail_at = variant == 0 ? 0 : 2;
      CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.x0, x), context);
      status = clmg_solver_solve(solver, b, x, &result);
      char what[96];
      snprintf(what, sizeof what, "%s, multigrid preconditioner", krylov[k]);
      check_agreed(status, CLMG_ERROR_OPENCL, mpi, what, solver_text);
      clmg_krylov_result_free(&result);
      clmg_solver_destroy(solver);
      clmg_options_destroy(db);
    }

    /* a second solve on the same hierarchy and communicator converges */
    factory.fail_at = coarse.fail_at = 0;
    CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.x0, x), context);
    CHECK_OK(clmg_multigrid_solve(multigrid, b, x, &solve_options, &result), context);
    CHECK(result.converged, "multigrid after the failures: not converged");
    clmg_vector *r = NULL;
    double r_norm = 0, b_norm = 0;
    clmg_operator op;
    CHECK_OK(clmg_mpi_matrix_operator(finest, 0, &op), context);
    CHECK_OK(clmg_vector_create(context, CLMG_DOUBLE, count[LEVELS - 1], &r), context);
    CHECK_OK(clmg_operator_defect(&op, b, x, r), context);
    CHECK_OK(clmg_nrm2(r, &r_norm), context);
    CHECK_OK(clmg_nrm2(b, &b_norm), context);
    CHECK(isfinite(r_norm) && r_norm <= 1.01e-8 * b_norm,
          "multigrid after the failures: relative residual %.3e", r_norm / b_norm);
    clmg_vector_destroy(r);
    clmg_operator_destroy(&op);
    clmg_krylov_result_free(&result);
    clmg_multigrid_destroy(multigrid);
  }
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_mpi_matrix_destroy(finest);
  for (int l = 0; l < LEVELS; ++l) {
    clmg_csr_free(&rows[l].a);
    clmg_csr_free(&rows[l].p);
    clmg_csr_free(&rows[l].r);
  }
  clmg_fe_hierarchy_free(&h);
  clmg_mesh_free(&circle);
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  clmg_context *context = NULL;
  CHECK_OK(clmg_context_create(NULL, &context), context);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  test_krylov(mpi);
  test_multigrid(mpi);
  clmg_mpi_destroy(mpi);
  clmg_context_destroy(context);
  test_memory_limit();
  if (world_rank == 0)
    printf("test_mpi_fault: all checks passed on %d rank%s\n", world_size,
           world_size == 1 ? "" : "s");
  MPI_Finalize();
  return 0;
}
