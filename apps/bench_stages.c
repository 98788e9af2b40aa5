/* clmg bench: the Navier-Stokes and HOMG stages (bench.h).
 *
 * flow: the Oseen step of the lid-driven cavity that perf/flow.c measures
 * (Re 1000, a time step of 0.1, Samarskij upwinding, a vortex as the wind;
 * Crouzeix-Raviart P1nc/P0 on the 4 x 4 cavity mesh refined `level` times):
 * one Vanka sweep with stored inverses on the finest level, checked against
 * the host's Vanka step from the same iterate and by the defect it leaves;
 * one V(2,2)-cycle of the Stokes multigrid, checked by how much it cuts
 * the defect of a random iterate; the multigrid solve to a relative
 * residual of 1e-8, its residual recomputed on the host. Solvers report
 * per cycle (time, bytes, flops) as bench.c's do, the whole solve in
 * solve_s.
 *
 * homg: the paper's Poisson test (Becerra-Sagredo et al. 2011) on an n x n
 * grid: one HOMG step on the finest level (the damped Jacobi sweep of
 * clmg/homg.h), checked point by point against the host's sweep; the solve
 * with the default method and schedule to 1.1 x the discretisation error
 * (the V-cycle's error at its rounding floor, itself checked against the
 * h^2 law docs/homg.md reports), its L1 error recomputed on the host. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define PI 3.14159265358979323846

/* Solves are timed trials times (perf_timing), the fastest counting, unless
 * one takes longer than this: then once. */
#define SOLVE_REPEAT_LIMIT_S 2.0

/* Runs `call` while every step before it succeeded, naming it for the
 * report of a failure (needs `status` and `what` in scope). */
#define STEP(call, text)                                                                           \
  do {                                                                                             \
    if (status == CLMG_SUCCESS) {                                                                  \
      *what = (text);                                                                              \
      status = (call);                                                                             \
    }                                                                                              \
  } while (0)

/* ---- shared ---- */

static clmg_status no_host_memory(clmg_error *error, const char *what) {
  snprintf(error->message, sizeof error->message, "out of host memory for %s", what);
  return CLMG_ERROR_OUT_OF_HOST_MEMORY;
}

/* "<=" when value is within limit, else ">" (NaN too). */
static const char *within(double value, double limit) {
  return value <= limit ? "<=" : ">";
}

/* The entry's check text, "FAILED: " first when it did not pass. */
static void set_check(bench_entry *e, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void set_check(bench_entry *e, const char *format, ...) {
  int used = e->verified ? 0 : snprintf(e->check, sizeof e->check, "FAILED: ");
  va_list args;
  va_start(args, format);
  vsnprintf(e->check + used, sizeof e->check - (size_t)used, format, args);
  va_end(args);
}

/* ---- flow ---- */

enum { FLOW_CAVITY_SQUARES = 4, FLOW_BLOCK = 7 };
#define FLOW_TOLERANCE 1e-8
/* The solver (clmg/solver.h's keys): V(2,2)-cycles of Vanka with stored
 * inverses (omega 1) alone, to FLOW_TOLERANCE in at most 100 cycles. The
 * Oseen systems hold their rate per V-cycle as levels are added
 * (docs/flow.md), unlike the steady Stokes problem. clmg_options_flow
 * reads the cycle's keys into the Stokes multigrid's options,
 * clmg_solver_create_multigrid the solver's around it. */
#define FLOW_CYCLE_OPTIONS "mg.cycle=v mg.smoother=vanka-si mg.steps=2 mg.omega=1"
#define FLOW_OPTIONS "krylov=none precond=multigrid " FLOW_CYCLE_OPTIONS " tol=1e-8 maxit=100"
/* One V(2,2)-cycle from a random iterate must cut the defect at least
 * this much (docs/flow.md: 0.07-0.21 per cycle on this problem as levels are
 * added, from x = 0). */
#define FLOW_CYCLE_LIMIT 0.5
/* The device's Vanka step against the host's: the same arithmetic in
 * another order (the colours' rule makes it independent of the device). */
#define FLOW_SWEEP_TOLERANCE 1e-10

/* Refinements of the 4 x 4 cavity mesh: 8.4k, 131k, 2.1M and 8.4M unknowns. */
static int flow_level(bench_size size) {
  switch (size) {
  case BENCH_QUICK:
    return 3;
  case BENCH_SMALL:
    return 5;
  case BENCH_MEDIUM:
    return 7;
  default:
    return 8;
  }
}

static void lid(const double *x, int32_t tag, double *u, void *data) {
  (void)x;
  (void)data;
  u[0] = tag == CLMG_CAVITY_LID ? 1.0 : 0.0;
  u[1] = 0.0;
}

/* perf/flow.c's problem: Re 1000 (the lid's speed and the cavity's side
 * are 1), c = 10 (a time step of 0.1), Samarskij's upwinding. */
static void flow_problem(clmg_stokes_problem *problem) {
  clmg_stokes_problem_defaults(problem);
  problem->viscosity = 1e-3;
  problem->reaction = 10.0;
  problem->upwind = CLMG_STOKES_UPWIND_SAMARSKIJ;
  problem->boundary_velocity = lid;
}

/* The wind on the edges of the cavity mesh refined `level` times (the
 * hierarchy's finest edges: the same refinement and edge numbering): perf/flow.c's
 * vortex of unit speed, zero at the walls. Refining here spares a second
 * assembly of the whole hierarchy. */
static clmg_status cavity_wind(const clmg_mesh *coarse, int level, double **wind,
                               clmg_error *error) {
  clmg_mesh fine, next;
  clmg_triangle_edges edges;
  memset(&fine, 0, sizeof fine);
  memset(&edges, 0, sizeof edges);
  *wind = NULL;
  clmg_status status = clmg_mesh_copy(coarse, &fine, error);
  for (int l = 0; status == CLMG_SUCCESS && l < level; l++) {
    memset(&next, 0, sizeof next);
    status = clmg_mesh_refine(&fine, &next, error);
    clmg_mesh_free(&fine);
    fine = next;
  }
  if (status == CLMG_SUCCESS)
    status = clmg_triangle_edges_create(&fine, &edges, error);
  size_t count = edges.num_edges;
  double *w = status == CLMG_SUCCESS ? malloc(2 * count * sizeof *w + 1) : NULL;
  if (status == CLMG_SUCCESS && !w)
    status = no_host_memory(error, "the wind");
  for (size_t e = 0; status == CLMG_SUCCESS && e < count; e++) {
    const double *p = fine.coords;
    const int32_t *v = edges.edge_vertices + 2 * e;
    double x = 0.5 * (p[2 * v[0]] + p[2 * v[1]]), y = 0.5 * (p[2 * v[0] + 1] + p[2 * v[1] + 1]);
    w[e] = sin(PI * x) * sin(PI * x) * sin(2 * PI * y);
    w[count + e] = -sin(2 * PI * x) * sin(PI * y) * sin(PI * y);
  }
  clmg_triangle_edges_free(&edges);
  clmg_mesh_free(&fine);
  if (status == CLMG_SUCCESS)
    *wind = w;
  else
    free(w);
  return status;
}

/* ||b - A x|| on the host; work has a->rows entries. */
static double host_defect_norm(const clmg_csr *a, const double *b, const double *x, double *work) {
  clmg_csr_spmv_host(1.0, a, x, 0.0, work);
  double rr = 0;
  for (size_t i = 0; i < a->rows; i++)
    rr += (b[i] - work[i]) * (b[i] - work[i]);
  return sqrt(rr);
}

static double norm2(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += v[i] * v[i];
  return sqrt(s);
}

/* The arithmetic of one Vanka step with stored inverses, as the smoother
 * documents it: per cell, the defect of its unknowns' rows (a multiply and
 * a subtraction per entry), the stored inverse times it (block^2
 * multiplications, block (block - 1) additions) and x += omega d (2 per
 * unknown). Padding slots and the colours' bookkeeping are not counted. */
static double vanka_sweep_flops(const clmg_csr *a, size_t num_cells, const int32_t *cell_unknowns) {
  double entries = 0;
  for (size_t k = 0; k < num_cells * FLOW_BLOCK; k++) {
    int32_t u = cell_unknowns[k];
    entries += (double)(a->row_ptr[u + 1] - a->row_ptr[u]);
  }
  const double per_cell = FLOW_BLOCK * FLOW_BLOCK + FLOW_BLOCK * (FLOW_BLOCK - 1) + 2 * FLOW_BLOCK;
  return 2 * entries + (double)num_cells * per_cell;
}

/* The arithmetic of one cycle, counted as bench.c counts its geometric
 * multigrid's: per level above the coarsest, the Vanka steps
 * (vanka_sweep_flops), the defect 2 nnz(A) + n, the restriction 2 nnz(R)
 * (R = P^T), prolongation and correction 2 nnz(P) + n; the coarsest
 * level's direct solve 2 n^2. NaN when the engine dropped levels. */
static double flow_cycle_flops(const clmg_multigrid *mg, const clmg_stokes_hierarchy *h,
                               int smoothing_steps) {
  if (clmg_multigrid_levels(mg) != h->num_levels)
    return NAN;
  double flops = 0;
  for (int l = 0; l < h->num_levels; l++) {
    double n = (double)h->a[l].rows, nnz = (double)clmg_csr_nnz(&h->a[l]);
    if (l == 0) {
      flops += 2.0 * n * n;
      continue;
    }
    double p = (double)clmg_csr_nnz(&h->p[l]);
    flops +=
        smoothing_steps * vanka_sweep_flops(&h->a[l], h->meshes[l].num_cells, h->cell_unknowns[l]) +
        2.0 * nnz + n + 2.0 * p + 2.0 * p + n;
  }
  return flops;
}

/* The Stokes multigrid's options (flow->vanka, flow->multigrid) from
 * FLOW_CYCLE_OPTIONS, and the solver's options database of FLOW_OPTIONS. */
static clmg_status flow_options(clmg_flow_options *flow, clmg_options **solver, clmg_error *error) {
  clmg_flow_options_defaults(flow);
  clmg_options *cycle = NULL;
  *solver = NULL;
  clmg_status status = perf_options_parse(FLOW_CYCLE_OPTIONS, &cycle, error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_flow(cycle, flow, NULL, 0, error);
  clmg_options_destroy(cycle);
  if (status == CLMG_SUCCESS)
    status = perf_options_parse(FLOW_OPTIONS, solver, error);
  return status;
}

/* The solver of the options around the Stokes multigrid of h. */
static clmg_status flow_solver(clmg_context *context, const clmg_stokes_hierarchy *h,
                               const clmg_flow_options *flow, const clmg_options *options,
                               clmg_multigrid **mg, clmg_solver **solver) {
  clmg_status status = clmg_stokes_multigrid_create(context, h, &flow->vanka, &flow->multigrid, mg);
  if (status == CLMG_SUCCESS)
    status = clmg_solver_create_multigrid(
        context, clmg_multigrid_operator(*mg, clmg_multigrid_levels(*mg) - 1), *mg, 0, options,
        solver);
  return status;
}

/* Loads every kernel the measurements use (Vanka, transfers, the direct
 * coarse solve, defects and norms) on a two-level hierarchy of the coarse
 * mesh, so that no compilation lands in a timed setup or solve: the
 * solver's setup runs a cycle on scratch vectors. */
static clmg_status flow_warm_up(clmg_context *context, const clmg_mesh *coarse,
                                const clmg_flow_options *flow, const clmg_options *options,
                                const char **what, clmg_error *error) {
  clmg_stokes_problem problem;
  flow_problem(&problem); /* without wind: the warm-up's edges are not the finest ones */
  clmg_stokes_hierarchy h;
  memset(&h, 0, sizeof h);
  clmg_multigrid *mg = NULL;
  clmg_solver *solver = NULL;
  clmg_status status = CLMG_SUCCESS;
  STEP(clmg_stokes_hierarchy_build(coarse, 2, &problem, &h, error), "warm-up hierarchy");
  if (status == CLMG_SUCCESS)
    error->message[0] = '\0'; /* from here on the context has the messages */
  STEP(flow_solver(context, &h, flow, options, &mg, &solver), "warm-up solver");
  clmg_solver_destroy(solver);
  clmg_multigrid_destroy(mg);
  clmg_stokes_hierarchy_free(&h);
  return status;
}

/* One SI Vanka sweep on the finest level: timed, then one sweep from a
 * random iterate compared with the host's step from it, and its defect. */
static clmg_status flow_sweep(bench_run *run, const clmg_stokes_hierarchy *h, int level,
                              const char *problem, const char **what, clmg_error *error) {
  clmg_context *context = run->context;
  const clmg_csr *a = &h->a[level];
  const size_t n = a->rows, cells = h->meshes[level].num_cells;
  const int32_t *cell_unknowns = h->cell_unknowns[level];
  clmg_vanka_options vanka;
  clmg_vanka_options_defaults(&vanka); /* stored inverses (SI), omega 1 */
  clmg_matrix *matrix = NULL;
  clmg_operator op;
  clmg_smoother smoother;
  memset(&op, 0, sizeof op);
  memset(&smoother, 0, sizeof smoother);
  clmg_vector *b = NULL, *x = NULL, *r = NULL;
  double *x0 = malloc(n * sizeof *x0), *device_x = malloc(n * sizeof *device_x),
         *host_x = malloc(n * sizeof *host_x);
  clmg_status status = CLMG_SUCCESS;
  if (!x0 || !device_x || !host_x) {
    *what = "host vectors of the sweep";
    status = no_host_memory(error, "the sweep's check");
  }
  STEP(clmg_matrix_create(context, a, NULL, &matrix), "the finest matrix");
  STEP(clmg_operator_from_matrix(matrix, 0, &op), "the finest operator");
  STEP(clmg_smoother_vanka(context, a, cells, FLOW_BLOCK, cell_unknowns, &vanka, &smoother),
       "the Vanka smoother");
  STEP(smoother.setup(smoother.data, &op), "the Vanka setup (stored inverses)");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, n, &b), "the sweep's vectors");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, n, &x), "the sweep's vectors");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, n, &r), "the sweep's vectors");
  STEP(clmg_vector_upload_doubles(b, h->b), "uploading the right-hand side");
  if (x0)
    bench_random_fill(x0, n, 1);
  STEP(clmg_vector_upload_doubles(x, x0), "uploading the iterate");
  perf_sweep_operands operands = {&smoother, &op, b, x};
  double seconds = NAN;
  long reps = 0;
  STEP(perf_time_adaptive(context, &run->timing, perf_run_sweep, &operands, &reps, &seconds),
       "timing the Vanka sweep");
  /* the check, from x0 again (the timed sweeps moved x) */
  double before = NAN, after = NAN;
  STEP(clmg_vector_upload_doubles(x, x0), "uploading the iterate");
  STEP(clmg_defect(matrix, b, x, r), "the defect before the sweep");
  STEP(clmg_nrm2(r, &before), "the defect before the sweep");
  STEP(perf_run_sweep(&operands, 0), "the checked Vanka sweep");
  STEP(clmg_defect(matrix, b, x, r), "the defect after the sweep");
  STEP(clmg_nrm2(r, &after), "the defect after the sweep");
  STEP(clmg_vector_download_doubles(x, device_x), "downloading the swept iterate");
  if (status == CLMG_SUCCESS) {
    memcpy(host_x, x0, n * sizeof *host_x);
    STEP(clmg_vanka_smooth_host(a, cells, FLOW_BLOCK, cell_unknowns, vanka.omega, 1, h->b, host_x,
                                error),
         "the host's Vanka step");
  }
  if (status == CLMG_SUCCESS) {
    double scale;
    const double relative = bench_relative_difference(device_x, host_x, n, &scale);
    bench_entry e = bench_entry_start("flow", "vanka si sweep");
    snprintf(e.problem, sizeof e.problem, "%s", problem);
    e.rows = (double)n;
    e.nonzeros = (double)clmg_csr_nnz(a);
    e.time_s = seconds;
    e.flops = vanka_sweep_flops(a, cells, cell_unknowns);
    e.bytes = smoother.bytes ? smoother.bytes(smoother.data, &op, 1, 0) : NAN;
    /* NaN fails both comparisons */
    e.verified = relative <= FLOW_SWEEP_TOLERANCE && after < before;
    set_check(&e,
              "one sweep from a random x = host Vanka step to %.1e %s %.0e (of max |x| %.2g); "
              "defect %.3e -> %.3e (clmg_defect)",
              relative, within(relative, FLOW_SWEEP_TOLERANCE), FLOW_SWEEP_TOLERANCE, scale, before,
              after);
    bench_add(run, &e);
  }
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_matrix_destroy(matrix);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_vector_destroy(r);
  free(x0);
  free(device_x);
  free(host_x);
  return status;
}

/* The Stokes multigrid on the hierarchy: its setup, one cycle (timed, and
 * one from a random iterate checked) and the solve to 1e-8 (checked on the host). */
static clmg_status flow_multigrid(bench_run *run, const clmg_stokes_hierarchy *h, int level,
                                  const clmg_flow_options *flow, const clmg_options *solver_options,
                                  const char *problem, const char **what, clmg_error *error) {
  const clmg_multigrid_options *options = &flow->multigrid;
  clmg_context *context = run->context;
  const clmg_csr *a = &h->a[level];
  const size_t n = a->rows;
  clmg_multigrid *mg = NULL;
  clmg_solver *solver = NULL;
  clmg_vector *b = NULL, *x = NULL;
  double *host_x = malloc(n * sizeof *host_x), *work = malloc(n * sizeof *work);
  clmg_status status = CLMG_SUCCESS;
  if (!host_x || !work) {
    *what = "host vectors of the multigrid";
    status = no_host_memory(error, "the multigrid's checks");
  }
  STEP(clmg_finish(context), "the queue before the setup");
  double start = apputil_now();
  STEP(flow_solver(context, h, flow, solver_options, &mg, &solver), "the Stokes multigrid solver");
  STEP(clmg_finish(context), "the Stokes multigrid solver");
  const double setup_s = apputil_now() - start;
  STEP(clmg_vector_create(context, CLMG_DOUBLE, n, &b), "the multigrid's vectors");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, n, &x), "the multigrid's vectors");
  STEP(clmg_vector_upload_doubles(b, h->b), "uploading the right-hand side");
  STEP(clmg_vector_fill(x, 0.0), "clearing the iterate");

  /* one cycle */
  perf_cycle_operands operands = {mg, b, x};
  double cycle_s = NAN;
  long reps = 0;
  STEP(perf_time_adaptive(context, &run->timing, perf_run_cycle, &operands, &reps, &cycle_s),
       "timing the V(2,2)-cycle");
  /* the check: one cycle from a random iterate, where every error
   * component is present (from x = 0 the Dirichlet rows alone make most of
   * the residual, and the first cycle fixes them) */
  double before = NAN;
  if (status == CLMG_SUCCESS) {
    bench_random_fill(host_x, n, 3);
    before = host_defect_norm(a, h->b, host_x, work);
  }
  STEP(clmg_vector_upload_doubles(x, host_x), "uploading the iterate");
  STEP(perf_run_cycle(&operands, 0), "the checked V(2,2)-cycle");
  STEP(clmg_vector_download_doubles(x, host_x), "downloading the cycle's iterate");
  if (status == CLMG_SUCCESS) {
    double rate = host_defect_norm(a, h->b, host_x, work) / before;
    bench_entry e = bench_entry_start("flow", "v(2,2)-cycle");
    snprintf(e.problem, sizeof e.problem, "%s", problem);
    snprintf(e.options, sizeof e.options, "%s", FLOW_OPTIONS);
    e.rows = (double)n;
    e.nonzeros = (double)clmg_csr_nnz(a);
    e.time_s = cycle_s;
    e.bytes = clmg_multigrid_cycle_bytes(mg, 0);
    e.flops = flow_cycle_flops(mg, h, options->pre_smoothing + options->post_smoothing);
    e.verified = rate <= FLOW_CYCLE_LIMIT;
    set_check(&e,
              "one cycle from a random x cuts the defect %.3g x %s %.2g (recomputed on the "
              "host), %d levels, Vanka SI",
              rate, within(rate, FLOW_CYCLE_LIMIT), FLOW_CYCLE_LIMIT, h->num_levels);
    bench_add(run, &e);
  }

  /* the solve */
  clmg_krylov_result result = {0};
  double solve_s = INFINITY;
  for (long trial = 0; trial < run->timing.trials || trial == 0; trial++) {
    clmg_krylov_result_free(&result);
    STEP(clmg_vector_fill(x, 0.0), "clearing the iterate");
    STEP(clmg_finish(context), "the queue before the solve");
    start = apputil_now();
    if (status == CLMG_SUCCESS) {
      *what = "the multigrid solve";
      status = clmg_solver_solve(solver, b, x, &result);
      if (status == CLMG_ERROR_NOT_CONVERGED) /* a result: the check below fails it */
        status = CLMG_SUCCESS;
    }
    STEP(clmg_finish(context), "the multigrid solve");
    solve_s = fmin(solve_s, apputil_now() - start);
    if (status != CLMG_SUCCESS || solve_s > SOLVE_REPEAT_LIMIT_S)
      break;
  }
  STEP(clmg_vector_download_doubles(x, host_x), "downloading the solution");
  if (status == CLMG_SUCCESS) {
    double residual = host_defect_norm(a, h->b, host_x, work) / norm2(h->b, n);
    bench_entry e = bench_entry_start("flow", "v(2,2) solve");
    snprintf(e.problem, sizeof e.problem, "%.100s, to %.0e", problem, FLOW_TOLERANCE);
    snprintf(e.options, sizeof e.options, "%s", FLOW_OPTIONS);
    e.rows = (double)n;
    e.nonzeros = (double)clmg_csr_nnz(a);
    /* per cycle, as bench.c reports its solvers: a cycle with the defect
     * and its norm after it */
    e.time_s = result.iterations > 0 ? solve_s / result.iterations : NAN;
    e.setup_s = setup_s;
    e.solve_s = solve_s;
    e.iterations = result.iterations;
    e.bytes = clmg_multigrid_iteration_bytes(mg);
    e.flops = flow_cycle_flops(mg, h, options->pre_smoothing + options->post_smoothing) +
              2.0 * e.nonzeros + 3.0 * e.rows;
    /* the host sums in another order: 1% above the tolerance is rounding */
    e.verified = result.converged && residual <= 1.01 * FLOW_TOLERANCE;
    set_check(&e,
              "%s: relative residual %.3g %s %.0e (recomputed on the host), %d cycles from x = 0",
              result.converged ? "converged" : "NOT converged", residual,
              within(residual, 1.01 * FLOW_TOLERANCE), FLOW_TOLERANCE, result.iterations);
    bench_add(run, &e);
  }
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_solver_destroy(solver);
  clmg_multigrid_destroy(mg);
  free(host_x);
  free(work);
  return status;
}

void bench_stage_flow(bench_run *run) {
  const int level = flow_level(run->size);
  clmg_error error = {{0}};
  clmg_mesh coarse;
  clmg_stokes_hierarchy h;
  memset(&coarse, 0, sizeof coarse);
  memset(&h, 0, sizeof h);
  double *wind = NULL;
  clmg_stokes_problem problem;
  flow_problem(&problem);
  clmg_flow_options flow;
  clmg_options *options = NULL;
  if (run->device && !run->device->has_fp64) {
    /* the Stokes hierarchy and its checks are double precision */
    bench_progress(run, "flow: skipped: the device has no double precision");
    return;
  }
  bench_progress(run, "flow: Oseen step of the lid-driven cavity (Re 1000), level %d", level);

  const char *failed = "the solver's options " FLOW_OPTIONS, **what = &failed;
  clmg_status status = flow_options(&flow, &options, &error);
  STEP(clmg_mesh_cavity(FLOW_CAVITY_SQUARES, &coarse, &error), "the cavity mesh");
  if (status == CLMG_SUCCESS)
    status = flow_warm_up(run->context, &coarse, &flow, options, what, &error);
  STEP(cavity_wind(&coarse, level, &wind, &error), "the wind");
  problem.wind = wind;
  STEP(clmg_stokes_hierarchy_build(&coarse, level + 1, &problem, &h, &error), "the hierarchy");
  char text[128] = "";
  if (status == CLMG_SUCCESS) {
    const size_t n = h.a[level].rows;
    snprintf(text, sizeof text,
             "Oseen step, cavity Re 1000, P1nc/P0 level %d: %zu unknowns, %zu triangles", level, n,
             h.meshes[level].num_cells);
    bench_progress(run, "flow: %zu unknowns on %d levels", n, level + 1);
  }
  STEP(flow_sweep(run, &h, level, text, what, &error), "the Vanka sweep");
  STEP(flow_multigrid(run, &h, level, &flow, options, text, what, &error), "the multigrid");
  if (status != CLMG_SUCCESS)
    bench_fail_error(run, "flow", failed, status, &error);
  clmg_options_destroy(options);
  clmg_stokes_hierarchy_free(&h);
  clmg_mesh_free(&coarse);
  free(wind);
}

/* ---- homg ---- */

/* The solve's target: this factor times the discretisation error (the
 * factor perf/homg.c uses). */
#define HOMG_ERROR_FACTOR 1.1
/* docs/homg.md: the discretisation error (L1, normalised) falls as h^2,
 * 1.23 h^2 from n = 129 to 1025; the reference must lie within 10% of it. */
#define HOMG_ERROR_CONSTANT 1.23
#define HOMG_LAW_TOLERANCE 0.1
/* The device's Jacobi sweep against the host's, relative to the largest
 * value: the same arithmetic, perhaps fused or reordered. */
#define HOMG_STEP_TOLERANCE 1e-12
enum { HOMG_WARM_UP_N = 17 };

/* Points per side (nested grids, 2^k + 1): 4.2k, 263k, 1.05M, 16.8M points. */
static size_t homg_points_per_side(bench_size size) {
  switch (size) {
  case BENCH_QUICK:
    return 65;
  case BENCH_SMALL:
    return 513;
  case BENCH_MEDIUM:
    return 1025;
  default:
    return 4097;
  }
}

/* The solvers' options strings (clmg/solver.h's keys, as `clmg homg --set`
 * takes them): the warm-up's single cycle of each method; the reference,
 * V-cycles until the residual stops falling; the solve with the default
 * method and schedule to an error (homg.error_tol, appended at run time),
 * no residual test or stagnation stop. */
#define HOMG_WARM_UP_OPTIONS "maxit=1 homg.method="
#define HOMG_REFERENCE_OPTIONS "homg.method=vcycle maxit=200 tol=1e-12 homg.stagnation=1.1"
#define HOMG_SOLVE_OPTIONS                                                                         \
  "homg.method=homg homg.schedule=sawtooth maxit=200 tol=0 homg.stagnation=0 homg.error_tol="

/* The options of clmg_homg_create that text describes (clmg_options_homg
 * from the defaults). */
static clmg_status homg_options_of(const char *text, clmg_homg_options *homg, clmg_error *error) {
  clmg_homg_options_defaults(homg);
  clmg_options *options = NULL;
  clmg_status status = perf_options_parse(text, &options, error);
  if (status == CLMG_SUCCESS)
    status = clmg_options_homg(options, homg, NULL, 0, error);
  clmg_options_destroy(options);
  return status;
}

/* The paper's f and u on the device (f, u: n^2 host values). */
static clmg_status homg_upload(clmg_context *context, size_t n, const double *f, const double *u,
                               clmg_vector **df, clmg_vector **du) {
  clmg_status status = clmg_vector_create(context, CLMG_DOUBLE, n * n, df);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_DOUBLE, n * n, du);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(*df, f);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(*du, u);
  return status;
}

/* Solves the paper's problem from x = 0; *solve_s (may be NULL) the wall
 * time of clmg_homg_solve alone. CLMG_ERROR_NOT_CONVERGED is returned as it
 * came (result filled). */
static clmg_status homg_solve(clmg_homg *homg, const clmg_vector *f, const clmg_vector *u,
                              clmg_vector *x, clmg_homg_result *result, double *solve_s) {
  clmg_context *context = clmg_vector_context(x);
  clmg_status status = clmg_vector_fill(x, 0.0);
  if (status == CLMG_SUCCESS)
    status = clmg_finish(context);
  double start = apputil_now();
  if (status == CLMG_SUCCESS)
    status = clmg_homg_solve(homg, f, x, u, result);
  clmg_status finished = clmg_finish(context);
  if (solve_s)
    *solve_s = apputil_now() - start;
  if (status == CLMG_SUCCESS || status == CLMG_ERROR_NOT_CONVERGED)
    status = finished == CLMG_SUCCESS ? status : finished;
  return status;
}

/* A solver made and run once from x = 0 (the warm-up, the reference). */
static clmg_status homg_solve_once(clmg_context *context, size_t n,
                                   const clmg_homg_options *options, const clmg_vector *f,
                                   const clmg_vector *u, clmg_vector *x, clmg_homg_result *result) {
  clmg_homg *homg = NULL;
  clmg_status status = clmg_homg_create(context, n, options, &homg);
  if (status == CLMG_SUCCESS)
    status = homg_solve(homg, f, u, x, result, NULL);
  clmg_homg_destroy(homg);
  return status;
}

/* Loads the kernels of the MFMG solve and of the V-cycle on a small grid,
 * so that no compilation lands in a timed setup or solve. */
static clmg_status homg_warm_up(clmg_context *context, const char **what, clmg_error *error) {
  const size_t n = HOMG_WARM_UP_N;
  double *f = malloc(n * n * sizeof *f), *u = malloc(n * n * sizeof *u);
  clmg_vector *df = NULL, *du = NULL, *x = NULL;
  clmg_status status = CLMG_SUCCESS;
  if (!f || !u) {
    *what = "warm-up grids";
    status = no_host_memory(error, "the warm-up grids");
  }
  if (status == CLMG_SUCCESS)
    clmg_homg_paper_problem(n, f, u);
  STEP(homg_upload(context, n, f, u, &df, &du), "warm-up grids");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, n * n, &x), "warm-up grids");
  const char *const methods[2] = {"homg", "vcycle"};
  for (int m = 0; m < 2 && status == CLMG_SUCCESS; m++) {
    char text[64];
    snprintf(text, sizeof text, HOMG_WARM_UP_OPTIONS "%s", methods[m]);
    clmg_homg_options options;
    *what = "the warm-up's options";
    status = homg_options_of(text, &options, error);
    if (status != CLMG_SUCCESS)
      break;
    clmg_homg_result result;
    memset(&result, 0, sizeof result);
    *what = "warm-up solve";
    status = homg_solve_once(context, n, &options, df, du, x, &result);
    clmg_homg_result_free(&result);
  }
  clmg_vector_destroy(df);
  clmg_vector_destroy(du);
  clmg_vector_destroy(x);
  free(f);
  free(u);
  return status;
}

/* sum |x - u| / sum |u|: the paper's eq. 7, as clmg_homg_result reports it. */
static double host_l1_error(size_t points, const double *x, const double *u) {
  double error = 0, size = 0;
  for (size_t i = 0; i < points; i++) {
    error += fabs(x[i] - u[i]);
    size += fabs(u[i]);
  }
  return error / size;
}

/* clmg_grid_jacobi's sweep as clmg/homg.h states it: at interior points
 * J(u) = u + omega/4 (h^2 b + u_W + u_E + u_S + u_N - 4 u), J(u) = u on
 * the boundary. */
static void host_jacobi(size_t n, double omega, const double *u, const double *b, double *out) {
  const double h = 1.0 / (double)(n - 1), h2 = h * h;
  for (size_t j = 0; j < n; j++)
    for (size_t i = 0; i < n; i++) {
      size_t p = j * n + i;
      if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
        out[p] = u[p];
        continue;
      }
      out[p] =
          u[p] + omega / 4 * (h2 * b[p] + u[p - 1] + u[p + 1] + u[p - n] + u[p + n] - 4 * u[p]);
    }
}

typedef struct step_operands {
  clmg_homg *homg;
  int level;
  clmg_vector *a, *b;
} step_operands;

/* Alternates a -> b and b -> a, as a cycle's steps do (perf/homg.c). */
static clmg_status one_step(const void *data, long iteration) {
  const step_operands *s = data;
  return iteration % 2 == 0 ? clmg_homg_step(s->homg, s->level, s->a, s->b)
                            : clmg_homg_step(s->homg, s->level, s->b, s->a);
}

/* The fewest bytes of one MFMG cycle, perf/homg.c's model from the
 * library's step figures: every step of the schedule (the returning
 * schedules' coarse steps are variation steps), the restriction pyramid
 * of the residual (each frame reads the grid and writes its levels). */
static double homg_cycle_bytes(const clmg_homg *homg, const clmg_homg_options *options) {
  clmg_homg_info info;
  size_t count = 0;
  if (clmg_homg_get_info(homg, &info) != CLMG_SUCCESS ||
      clmg_homg_schedule(homg, NULL, 0, &count) != CLMG_SUCCESS)
    return NAN;
  int *levels = malloc((count ? count : 1) * sizeof *levels);
  if (!levels || clmg_homg_schedule(homg, levels, count, &count) != CLMG_SUCCESS) {
    free(levels);
    return NAN;
  }
  const int variations = options->schedule != CLMG_HOMG_SCHEDULE_ASCENT;
  double bytes = 0;
  for (size_t k = 0; k < count; k++) {
    uint64_t step = 0;
    clmg_status status = variations && levels[k] < info.levels - 1
                             ? clmg_homg_variation_step_bytes(homg, levels[k], &step)
                             : clmg_homg_step_bytes(homg, levels[k], &step);
    bytes += status == CLMG_SUCCESS ? (double)step : NAN;
  }
  free(levels);
  const double n = (double)info.n, frames = info.four_subdomains ? 4 : 1;
  double pyramid = 0;
  for (int m = 1; m < info.levels; m++) {
    double side = info.four_subdomains ? n / (double)(1 << m) + 1 : (n - 1) / (1 << m) + 1;
    pyramid += side * side;
  }
  return bytes + sizeof(double) * frames * (n * n + 2 * pyramid);
}

void bench_stage_homg(bench_run *run) {
  clmg_context *context = run->context;
  const size_t n = homg_points_per_side(run->size), points = n * n;
  clmg_error error = {{0}};
  const char *failed = "", **what = &failed;
  if (run->device && !run->device->has_fp64) {
    /* the discretisation error check needs double precision */
    bench_progress(run, "homg: skipped: the device has no double precision");
    return;
  }
  bench_progress(run, "homg: the paper's Poisson test on a %zu x %zu grid", n, n);
  double *f = malloc(points * sizeof *f), *u = malloc(points * sizeof *u),
         *in = malloc(points * sizeof *in), *out = malloc(points * sizeof *out),
         *expected = malloc(points * sizeof *expected);
  clmg_vector *df = NULL, *du = NULL, *x = NULL, *a = NULL, *b = NULL;
  clmg_homg *homg = NULL;
  clmg_homg_result result;
  memset(&result, 0, sizeof result);
  clmg_status status = CLMG_SUCCESS;
  if (!f || !u || !in || !out || !expected) {
    *what = "host grids";
    status = no_host_memory(&error, "the host grids");
  }
  STEP(homg_warm_up(context, what, &error), "the warm-up");
  if (status == CLMG_SUCCESS) {
    clmg_homg_paper_problem(n, f, u);
    bench_random_fill(in, points, 2);
  }
  STEP(homg_upload(context, n, f, u, &df, &du), "the problem's grids");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, points, &x), "the solution grid");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, points, &a), "the step's grids");
  STEP(clmg_vector_create(context, CLMG_DOUBLE, points, &b), "the step's grids");
  char text[128];
  snprintf(text, sizeof text, "Poisson (Becerra-Sagredo et al. 2011), five-point, %zu x %zu grid",
           n, n);

  /* The discretisation error: V-cycles until the residual stops falling
   * (perf/homg.c's reference), an independent method from HOMG's steps. */
  double discretisation = NAN;
  clmg_homg_options reference;
  memset(&reference, 0, sizeof reference);
  STEP(homg_options_of(HOMG_REFERENCE_OPTIONS, &reference, &error), "the reference's options");
  if (status == CLMG_SUCCESS) {
    *what = "the V-cycle reference solve";
    status = homg_solve_once(context, n, &reference, df, du, x, &result);
    clmg_homg_result_free(&result);
    if (status == CLMG_ERROR_NOT_CONVERGED)
      snprintf(error.message, sizeof error.message,
               "the V-cycle reached no rounding floor in %d cycles", reference.max_cycles);
  }
  STEP(clmg_vector_download_doubles(x, out), "downloading the reference solution");
  if (status == CLMG_SUCCESS)
    discretisation = host_l1_error(points, out, u);
  const double h = 1.0 / (double)(n - 1), law = HOMG_ERROR_CONSTANT * h * h;

  /* the solver with the default method and schedule, to the target error */
  char solve_options[192];
  snprintf(solve_options, sizeof solve_options, HOMG_SOLVE_OPTIONS "%.17g",
           HOMG_ERROR_FACTOR * discretisation);
  clmg_homg_options options;
  memset(&options, 0, sizeof options);
  STEP(homg_options_of(solve_options, &options, &error), "the solve's options");
  STEP(clmg_finish(context), "the queue before the setup");
  double start = apputil_now();
  STEP(clmg_homg_create(context, n, &options, &homg), "the HOMG solver");
  STEP(clmg_finish(context), "the HOMG solver");
  const double setup_s = apputil_now() - start;
  clmg_homg_info info;
  memset(&info, 0, sizeof info);
  STEP(clmg_homg_get_info(homg, &info), "the HOMG solver's levels");
  const int finest = info.levels - 1;

  /* one step on the finest level: timed, then checked from a random grid */
  STEP(clmg_homg_set_source(homg, df), "the source");
  STEP(clmg_vector_upload_doubles(a, in), "uploading the step's grid");
  step_operands operands = {homg, finest, a, b};
  double step_s = NAN;
  long reps = 0;
  STEP(perf_time_adaptive(context, &run->timing, one_step, &operands, &reps, &step_s),
       "timing the HOMG step");
  uint64_t step_bytes = 0;
  STEP(clmg_homg_step_bytes(homg, finest, &step_bytes), "the HOMG step's bytes");
  STEP(clmg_vector_upload_doubles(a, in), "uploading the step's grid");
  STEP(one_step(&operands, 0), "the checked HOMG step");
  STEP(clmg_vector_download_doubles(b, out), "downloading the step's result");
  if (status == CLMG_SUCCESS) {
    host_jacobi(n, options.omega, in, f, expected);
    double scale;
    const double relative = bench_relative_difference(out, expected, points, &scale);
    bench_entry e = bench_entry_start("homg", "jacobi step (finest)");
    snprintf(e.problem, sizeof e.problem, "%s", text);
    snprintf(e.options, sizeof e.options, "%s", solve_options);
    e.rows = (double)points;
    e.time_s = step_s;
    /* the stated formula: h^2 b, four neighbours, 4 u, the difference, omega/4, + u */
    e.flops = 9.0 * (double)(n - 2) * (double)(n - 2);
    e.bytes = (double)step_bytes;
    e.verified = relative <= HOMG_STEP_TOLERANCE;
    set_check(&e,
              "one step from a random grid = host damped Jacobi (omega %.2g) to %.1e %s %.0e (of "
              "max %.2g), all %zu points",
              options.omega, relative, within(relative, HOMG_STEP_TOLERANCE), HOMG_STEP_TOLERANCE,
              scale, points);
    bench_add(run, &e);
  }

  /* the solve to the target error, with the same solver (a solve sets its
   * own source and pyramid) */
  double solve_s = INFINITY;
  int converged = 0;
  for (long trial = 0; status == CLMG_SUCCESS && (trial < run->timing.trials || trial == 0);
       trial++) {
    clmg_homg_result_free(&result);
    double seconds = NAN;
    *what = "the HOMG solve";
    status = homg_solve(homg, df, du, x, &result, &seconds);
    converged = status == CLMG_SUCCESS && result.converged;
    if (status == CLMG_ERROR_NOT_CONVERGED) /* a result: the check below fails it */
      status = CLMG_SUCCESS;
    solve_s = fmin(solve_s, seconds);
    if (solve_s > SOLVE_REPEAT_LIMIT_S)
      break;
  }
  STEP(clmg_vector_download_doubles(x, out), "downloading the solution");
  if (status == CLMG_SUCCESS) {
    double l1 = host_l1_error(points, out, u);
    bench_entry e =
        bench_entry_start("homg", "mfmg %s solve", clmg_homg_schedule_name(options.schedule));
    snprintf(e.problem, sizeof e.problem, "%.80s, to %.1fx the discretisation error", text,
             HOMG_ERROR_FACTOR);
    snprintf(e.options, sizeof e.options, "%s", solve_options);
    e.rows = (double)points;
    /* per cycle, as bench.c reports its solvers: the cycle and the fused
     * residual and error pass after it (x, f and u read, r written); the
     * pass before the first cycle is not counted */
    e.time_s = result.cycles > 0 ? solve_s / result.cycles : NAN;
    e.setup_s = setup_s;
    e.solve_s = solve_s;
    e.iterations = result.cycles;
    e.bytes = homg_cycle_bytes(homg, &options) + 4.0 * sizeof(double) * (double)points;
    const double ratio = discretisation / law;
    const int lawful = fabs(ratio - 1) <= HOMG_LAW_TOLERANCE;
    e.verified = converged && l1 <= HOMG_ERROR_FACTOR * discretisation && lawful;
    set_check(&e,
              "%sL1 error %.4g %s %.1fx discretisation error %.4g (V-cycle: %.3g h^2, docs %.2f "
              "h^2 +-%.0f%%), host-recomputed; %d cycles, MaxI %d",
              converged ? "" : "NOT converged: ", l1,
              within(l1, HOMG_ERROR_FACTOR * discretisation), HOMG_ERROR_FACTOR, discretisation,
              discretisation / (h * h), HOMG_ERROR_CONSTANT, 100 * HOMG_LAW_TOLERANCE,
              result.cycles, options.max_iterations_per_level);
    bench_add(run, &e);
  }
  if (status != CLMG_SUCCESS)
    bench_fail_error(run, "homg", failed, status, &error);
  clmg_homg_result_free(&result);
  clmg_homg_destroy(homg);
  clmg_vector_destroy(df);
  clmg_vector_destroy(du);
  clmg_vector_destroy(x);
  clmg_vector_destroy(a);
  clmg_vector_destroy(b);
  free(f);
  free(u);
  free(in);
  free(out);
  free(expected);
}
