/* The options layer (clmg/solver.h): the database's checks and parsers,
 * solvers composed from options, checked against known solutions with the
 * residual recomputed on the host, AUTO's resolution, registered
 * components, and the view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clmg.h"
#include "test_util.h"

static clmg_context *ctx;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)
#define CHECK_HOST(call, error) CHECK_ERROR_OK(error, call)

static clmg_options *options_of(const char *text) {
  clmg_options *options = NULL;
  clmg_error error = {{0}};
  CHECK_HOST(clmg_options_create(&options, &error), error);
  CHECK_HOST(clmg_options_parse(options, text, &error), error);
  return options;
}

/* ---- the database ---- */

static void test_options_checked(void **state) {
  (void)state;
  clmg_options *options = options_of("krylov=cg precond=amg mg.smoother=chebyshev tol=1e-8");
  clmg_error error = {{0}};
  assert_string_equal(clmg_options_get(options, "krylov"), "cg");
  assert_string_equal(clmg_options_get(options, "tol"), "1e-8");
  assert_string_equal(clmg_options_get(options, "maxit"), "1000"); /* the default */
  assert_true(clmg_options_is_set(options, "precond"));
  assert_false(clmg_options_is_set(options, "maxit"));
  assert_null(clmg_options_get(options, "no.such.key"));

  /* an unknown key lists the valid ones (of its group when it names one) */
  assert_int_equal(clmg_options_set(options, "mg.smooth", "jacobi", &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "unknown option 'mg.smooth'"));
  assert_non_null(strstr(error.message, "mg.smoother"));
  assert_null(strstr(error.message, "amg.roots"));
  assert_int_equal(clmg_options_set(options, "solver", "cg", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "krylov"));
  assert_non_null(strstr(error.message, "amg.roots"));
  /* values: names from their list, numbers in range, integers whole */
  assert_int_equal(clmg_options_set(options, "krylov", "minres", &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "auto,cg,bicgstab,gmres,none"));
  assert_int_equal(clmg_options_set(options, "tol", "2", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_options_set(options, "tol", "nan", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_options_set(options, "tol", "1e-8x", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_options_set(options, "maxit", "2.5", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_options_set(options, "maxit", "0", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_options_set(options, "maxit", "auto", &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_options_set(options, "mg.smoother", "no way", &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  /* a refused value leaves the old one */
  assert_string_equal(clmg_options_get(options, "krylov"), "cg");
  assert_string_equal(clmg_options_get(options, "tol"), "1e-8");

  /* a text with one bad word changes nothing */
  assert_int_equal(clmg_options_parse(options, "krylov=gmres maxit=7 tol", &error),
                   CLMG_ERROR_PARSE);
  assert_non_null(strstr(error.message, "'tol' is not key=value"));
  assert_int_equal(clmg_options_parse(options, "krylov=gmres maxit=-7", &error),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_string_equal(clmg_options_get(options, "krylov"), "cg");
  assert_string_equal(clmg_options_get(options, "maxit"), "1000");
  CHECK_HOST(clmg_options_parse(options, "  krylov=gmres\tmaxit=7\n", &error), error);
  assert_string_equal(clmg_options_get(options, "krylov"), "gmres");
  assert_string_equal(clmg_options_get(options, "maxit"), "7");

  /* every key is described */
  clmg_option_info info;
  size_t count = clmg_options_key_count();
  assert_true(count > 20);
  for (size_t i = 0; i < count; i++) {
    assert_true(clmg_options_key_info(i, &info));
    assert_true(strlen(info.description) > 10);
    assert_non_null(clmg_options_get(NULL, info.key));
  }
  assert_false(clmg_options_key_info(count, &info));
  assert_true(clmg_options_builtin("mg.smoother", "gauss-seidel"));
  assert_true(clmg_options_builtin("mg.smoother", "auto"));
  assert_false(clmg_options_builtin("mg.smoother", "mine"));
  assert_true(clmg_options_builtin("tol", "1e-3"));
  assert_false(clmg_options_builtin("tol", "3"));
  assert_false(clmg_options_builtin("nokey", "3"));
  assert_true(clmg_options_builtin("amg.interpolation", "extended+i"));
  assert_false(clmg_options_builtin("amg.interpolation", "ext+i"));
  assert_false(clmg_options_builtin("amg.p_max", "-1"));
  assert_false(clmg_options_builtin("amg.truncation", "1"));
  clmg_options_destroy(options);
}

static void test_options_json(void **state) {
  (void)state;
  clmg_options *options = options_of("");
  clmg_error error = {{0}};
  CHECK_HOST(clmg_options_parse_json(options,
                                     "{\"krylov\": \"cg\", \"tol\": 1e-9, \"maxit\": 50,\n"
                                     " \"mg\": {\"smoother\": \"jacobi\", \"steps\": 2},\n"
                                     " \"amg\": {\"strength\": 0.25}}",
                                     &error),
             error);
  assert_string_equal(clmg_options_get(options, "mg.smoother"), "jacobi");
  assert_string_equal(clmg_options_get(options, "mg.steps"), "2");
  assert_true(fabs(strtod(clmg_options_get(options, "tol"), NULL) - 1e-9) < 1e-24);
  /* malformed JSON names its line; an array is not a value; an unknown key
   * in a group is refused; nothing of a refused document is kept */
  assert_int_equal(clmg_options_parse_json(options, "{\"krylov\": \"gmres\",\n\"tol\": }", &error),
                   CLMG_ERROR_PARSE);
  assert_non_null(strstr(error.message, ":2:"));
  assert_int_equal(
      clmg_options_parse_json(options, "{\"krylov\": \"gmres\", \"tol\": [1]}", &error),
      CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(
      clmg_options_parse_json(options, "{\"krylov\": \"gmres\", \"mg\": {\"x\": 1}}", &error),
      CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "mg.x"));
  assert_int_equal(clmg_options_parse_json(options, "[\"krylov\"]", &error), CLMG_ERROR_PARSE);
  assert_string_equal(clmg_options_get(options, "krylov"), "cg");

  /* to_json and back gives the same database */
  char *json = clmg_options_to_json(options, 1);
  assert_non_null(json);
  clmg_options *again = options_of("");
  CHECK_HOST(clmg_options_parse_json(again, json, &error), error);
  for (size_t i = 0; i < clmg_options_key_count(); i++) {
    clmg_option_info info;
    clmg_options_key_info(i, &info);
    const char *a = clmg_options_get(options, info.key), *b = clmg_options_get(again, info.key);
    if (strcmp(info.kind, "number") == 0 && strcmp(a, "auto") != 0)
      assert_true(strtod(a, NULL) == strtod(b, NULL));
    else
      assert_string_equal(a, b);
  }
  free(json);
  /* only what was set */
  json = clmg_options_to_json(options, 0);
  assert_non_null(strstr(json, "\"krylov\""));
  assert_null(strstr(json, "\"restart\""));
  free(json);
  clmg_options_destroy(again);

  /* files: read with a bound, errors named */
  char *dir = make_tmpdir("solver-options");
  char path[1024];
  snprintf(path, sizeof path, "%s/o.json", dir);
  FILE *file = fopen(path, "w");
  assert_non_null(file);
  fputs("{\"precond\": \"amg\",\n \"amg\": {\"coarsening\": \"classica\"}}\n", file);
  fclose(file);
  assert_int_equal(clmg_options_read_file(options, path, &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "o.json"));
  assert_non_null(strstr(error.message, "sa,classical"));
  file = fopen(path, "w");
  assert_non_null(file);
  for (int i = 0; i < (1 << 20) / 8 + 2; i++)
    fputs("        ", file);
  fclose(file);
  assert_int_equal(clmg_options_read_file(options, path, &error), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(error.message, "1 MiB"));
  snprintf(path, sizeof path, "%s/missing.json", dir);
  assert_int_equal(clmg_options_read_file(options, path, &error), CLMG_ERROR_IO);
  assert_string_equal(clmg_options_get(options, "precond"), "jacobi");
  remove_tree(dir);
  clmg_options_destroy(options);
}

/* ---- solvers ---- */

/* ||b - A x|| / ||b|| on the host (r: n scratch entries). */
static double host_relative_residual(const clmg_csr *a, const double *b, const double *x,
                                     double *r) {
  size_t n = a->rows;
  memcpy(r, b, n * sizeof *r);
  clmg_csr_spmv_host(-1.0, a, x, 1.0, r);
  double r_norm = 0, b_norm = 0;
  for (size_t i = 0; i < n; i++) {
    r_norm += r[i] * r[i];
    b_norm += b[i] * b[i];
  }
  return sqrt(r_norm / b_norm);
}

/* Solves A x = b with b = A x*, x* random, through the options; checks the
 * status, the error against x* and the residual recomputed on the host;
 * returns the iterations. */
static int solve_known(const clmg_csr *a, const char *text, double tolerance, clmg_solver **keep) {
  clmg_options *options = options_of(text);
  clmg_solver *solver = NULL;
  CHECK_OK(clmg_solver_create(ctx, a, options, &solver));
  clmg_options_destroy(options);
  size_t n = a->rows;
  double *x_star = malloc(n * sizeof *x_star), *b = malloc(n * sizeof *b);
  double *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++)
    x_star[i] = rng_uniform();
  clmg_csr_spmv_host(1.0, a, x_star, 0.0, b);
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_solver_solve_host(solver, b, x, &result));
  assert_true(result.converged);
  assert_true(host_relative_residual(a, b, x, r) <= 1.5 * tolerance);
  double e_norm = 0, x_norm = 0;
  for (size_t i = 0; i < n; i++) {
    e_norm += (x[i] - x_star[i]) * (x[i] - x_star[i]);
    x_norm += x_star[i] * x_star[i];
  }
  assert_true(sqrt(e_norm) <= 1e4 * tolerance * sqrt(x_norm));
  int iterations = result.iterations;
  clmg_krylov_result_free(&result);
  free(x_star);
  free(b);
  free(x);
  free(r);
  if (keep)
    *keep = solver;
  else
    clmg_solver_destroy(solver);
  return iterations;
}

/* The solver's setup phases in its JSON view ("solver_setup"): each a
 * number of seconds, together at most the setup's seconds (compilation is
 * in neither), the AMG setup's beside them when amg is set, its total
 * within the preconditioner phase. */
static void check_setup_phases(const char *json, int amg) {
  cJSON *view = cJSON_Parse(json);
  assert_non_null(view);
  const cJSON *phases = cJSON_GetObjectItem(view, "solver_setup");
  assert_non_null(phases);
  const char *keys[] = {"checks_s", "matrix_s", "nullspace_s", "preconditioner_s", "kernels_s"};
  double sum = 0;
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    const cJSON *phase = cJSON_GetObjectItem(phases, keys[k]);
    if (!cJSON_IsNumber(phase) || !(phase->valuedouble >= 0))
      fail_msg("solver_setup.%s is not a number of seconds", keys[k]);
    sum += phase->valuedouble;
  }
  assert_int_equal(cJSON_GetArraySize(phases), 5);
  double setup = cJSON_GetObjectItem(view, "setup_s")->valuedouble;
  if (!(sum <= setup + 1e-9))
    fail_msg("the solver's setup phases add up to %g s, more than its setup, %g s", sum, setup);
  assert_true(!amg == !cJSON_GetObjectItem(view, "amg_setup"));
  if (amg) {
    /* the AMG's setup runs inside the preconditioner phase, and both leave
     * compilation out: the AMG's total is at most that phase */
    double total =
        cJSON_GetObjectItem(cJSON_GetObjectItem(view, "amg_setup"), "total_s")->valuedouble;
    double preconditioner = cJSON_GetObjectItem(phases, "preconditioner_s")->valuedouble;
    if (!(total <= preconditioner + 1e-9))
      fail_msg("the AMG's setup, %g s, is more than the preconditioner phase around it, %g s",
               total, preconditioner);
  }
  cJSON_Delete(view);
}

static void test_solver_compositions(void **state) {
  (void)state;
  clmg_csr a = test_grid_laplacian(4); /* 33^2 rows, identity boundary rows */
  clmg_solver *solver = NULL;
  /* auto: CG on the symmetric matrix with a positive diagonal */
  int amg = solve_known(&a, "precond=amg tol=1e-9", 1e-9, &solver);
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_CG);
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "krylov"), "cg");
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "mg.smoother"), "chebyshev");
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "mg.steps"), "3");
  assert_non_null(clmg_solver_multigrid(solver));
  clmg_solver_destroy(solver);
  int jacobi = solve_known(&a, "tol=1e-9 mg.smoother=spai0 restart=5", 1e-9, &solver);
  /* what precond=jacobi and CG do not read is named */
  assert_string_equal(clmg_solver_unused_options(solver), "restart, mg.smoother");
  clmg_solver_destroy(solver);
  assert_true(amg < jacobi / 3);
  solve_known(&a, "krylov=gmres precond=amg mg.smoother=jacobi-rho mg.steps=2 tol=1e-9", 1e-9,
              NULL);
  solve_known(&a, "krylov=bicgstab precond=none format=csr tol=1e-9", 1e-9, NULL);
  solve_known(&a, "krylov=none precond=amg mg.cycle=w tol=1e-8 maxit=200", 1e-8, NULL);
  solve_known(&a, "precond=amg amg.coarsening=classical mg.smoother=gauss-seidel tol=1e-9", 1e-9,
              NULL);
  /* classical AMG's interpolations by name, in the view; its keys unused by aggregation */
  int direct = solve_known(
      &a, "precond=amg amg.coarsening=classical amg.interpolation=direct amg.p_max=0 tol=1e-9",
      1e-9, &solver);
  char *view = clmg_solver_view(solver);
  assert_non_null(view);
  assert_non_null(strstr(view, "amg.interpolation=direct amg.p_max=0 amg.truncation=0"));
  free(view);
  clmg_solver_destroy(solver);
  int extended = solve_known(
      &a, "precond=amg amg.coarsening=classical amg.p_max=3 amg.truncation=0.2 tol=1e-9", 1e-9,
      &solver);
  view = clmg_solver_view_json(solver);
  assert_non_null(view);
  assert_non_null(strstr(view, "\"interpolation\":\t\"extended+i\""));
  check_setup_phases(view, 1);
  free(view);
  assert_string_equal(clmg_solver_unused_options(solver), "");
  clmg_solver_destroy(solver);
  print_message("classical AMG-CG: direct %d, extended+i %d iterations\n", direct, extended);
  assert_true(extended <= direct);
  solve_known(&a, "precond=amg amg.interpolation=direct amg.truncation=0.1 tol=1e-9", 1e-9,
              &solver);
  assert_string_equal(clmg_solver_unused_options(solver), "amg.interpolation, amg.truncation");
  clmg_solver_destroy(solver);
  if (clmg_context_device(ctx)->has_fp64) {
    /* the cycle in float inside double CG reaches double's tolerance */
    solve_known(&a, "precision=mixed precond=amg tol=1e-10", 1e-10, NULL);
    solve_known(&a, "precision=mixed precond=jacobi tol=1e-10", 1e-10, NULL);
  }
  solve_known(&a, "precision=float precond=amg", 1e-5, &solver);
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "tol"), "1e-05");
  clmg_solver_destroy(solver);
  clmg_csr_free(&a);

  /* a nonsymmetric matrix: auto is GMRES */
  clmg_csr c = upwind_convection_diffusion(24, 50);
  solve_known(&c, "precond=jacobi tol=1e-9", 1e-9, &solver);
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_GMRES);
  clmg_solver_destroy(solver);
  clmg_csr_free(&c);
}

/* The device memory a solve holds above what it held before it, read at
 * every iteration (the solver's monitor). */
typedef struct bytes_watch {
  uint64_t before, most;
} bytes_watch;

static int watch_bytes(void *data, int iteration, double relative_residual) {
  (void)iteration;
  (void)relative_residual;
  bytes_watch *w = data;
  uint64_t now = clmg_context_device_bytes(ctx);
  if (now > w->before && now - w->before > w->most)
    w->most = now - w->before;
  return 0;
}

/* A solver solves again and again without allocating: CG's and GMRES's
 * work vectors are kept from the setup, so no solve holds device memory
 * beyond what the solver held before it (read at every iteration: the
 * per-solve vectors of before 2026-11-29 showed there), and a CG solve's
 * host waits are one read-back per iteration and before the first, ||b|| and
 * the residual recomputed from x with x . x (iterations + 3; the five
 * vectors CG made per solve added five, a second ||b|| and the solver's
 * ||x|| two more). Each solve's residual is checked on the host. */
static void test_solver_repeated_solves(void **state) {
  (void)state;
  clmg_csr laplacian = test_grid_laplacian(4), convection = upwind_convection_diffusion(24, 50);
  const struct {
    const clmg_csr *a;
    const char *text;
    clmg_krylov_method method;
  } cases[] = {
      {&laplacian, "precond=jacobi tol=1e-9", CLMG_KRYLOV_CG},
      {&laplacian, "precond=amg tol=1e-9", CLMG_KRYLOV_CG},
      {&laplacian, "precond=none tol=1e-9", CLMG_KRYLOV_CG},
      {&convection, "precond=jacobi tol=1e-9", CLMG_KRYLOV_GMRES},
      {&convection, "krylov=gmres precond=amg mg.smoother=jacobi-rho tol=1e-9", CLMG_KRYLOV_GMRES}};
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    const clmg_csr *a = cases[t].a;
    const char *text = cases[t].text;
    size_t n = a->rows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
    assert_true(b && x && r);
    clmg_solver *solver = NULL;
    solve_known(a, text, 1e-9, &solver);
    assert_int_equal(clmg_solver_method(solver), cases[t].method);
    clmg_vector *vb = NULL, *vx = NULL;
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &vb));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &vx));
    bytes_watch watch = {0, 0};
    clmg_solver_set_monitor(solver, watch_bytes, &watch);
    for (int round = 0; round < 3; round++) {
      for (size_t i = 0; i < n; i++) {
        b[i] = rng_uniform() - 0.5;
        x[i] = round == 2 ? rng_uniform() : 0.0; /* the last from a nonzero guess */
      }
      CHECK_OK(clmg_vector_upload_doubles(vb, b));
      CHECK_OK(clmg_vector_upload_doubles(vx, x));
      clmg_counters before, after;
      clmg_context_counters(ctx, &before);
      watch.before = clmg_context_device_bytes(ctx);
      watch.most = 0;
      clmg_krylov_result result = {0};
      CHECK_OK(clmg_solver_solve(solver, vb, vx, &result));
      clmg_context_counters(ctx, &after);
      assert_true(result.converged);
      CHECK_OK(clmg_vector_download_doubles(vx, x));
      double residual = host_relative_residual(a, b, x, r);
      if (!(residual <= 1.5e-9))
        fail_msg("%s, solve %d: residual %g relative", text, round + 1, residual);
      uint64_t waits = after.host_waits - before.host_waits;
      print_message("%-24.24s solve %d: %d iterations, %llu host waits, %llu bytes more\n", text,
                    round + 1, result.iterations, (unsigned long long)waits,
                    (unsigned long long)watch.most);
      if (watch.most != 0)
        fail_msg("%s, solve %d: %llu bytes of device memory more during the solve", text, round + 1,
                 (unsigned long long)watch.most);
      if (cases[t].method == CLMG_KRYLOV_CG && waits > (uint64_t)result.iterations + 3)
        fail_msg("%s, solve %d: %llu host waits in %d iterations (a solve allocates?)", text,
                 round + 1, (unsigned long long)waits, result.iterations);
      clmg_krylov_result_free(&result);
    }
    clmg_vector_destroy(vb);
    clmg_vector_destroy(vx);
    clmg_solver_destroy(solver);
    free(b);
    free(x);
    free(r);
  }
  clmg_csr_free(&laplacian);
  clmg_csr_free(&convection);
}

/* Elasticity with its rigid-body modes from a coordinates file: the file's
 * read and the modes are a phase of their own (nullspace_s), beside the
 * other phases in the view, which together stay within the setup's wall
 * time, the AMG's setup within the preconditioner phase; without
 * amg.coordinates the phase is there and 0. */
static void test_solver_nullspace_phase(void **state) {
  (void)state;
  clmg_spd_problem_options po;
  clmg_spd_problem_options_defaults(&po);
  po.kind = CLMG_SPD_ELASTICITY_P1;
  po.level = 6;
  clmg_spd_problem p = {0};
  clmg_error error = {{0}};
  CHECK_OK(clmg_spd_problem_create(&po, &p, &error));
  char *dir = make_tmpdir("nullspace_phase");
  char path[512], text[700];
  snprintf(path, sizeof path, "%s/coords.mtx", dir);
  assert_int_equal(
      clmg_write_matrix_market_array(path, p.coordinates, p.num_nodes, (size_t)p.dim, &error),
      CLMG_SUCCESS);
  /* the setup on the device, as a GPU runs it, on a context of its own:
   * the AMG's kernels are loaded inside the AMG's setup, whose phases leave
   * that out as the preconditioner phase does */
  clmg_context *shared = ctx;
  assert_int_equal(
      test_open_context_params(&ctx, "amg_setup_on_device=1,cpu_kernels=0", "nullspace_phase", 0),
      0);
  for (int with = 0; with < 2; with++) {
    snprintf(text, sizeof text, "precond=amg tol=1e-8%s%s", with ? " amg.coordinates=" : "",
             with ? path : "");
    clmg_solver *solver = NULL;
    solve_known(&p.a, text, 1e-8, &solver);
    assert_string_equal(clmg_options_get(clmg_solver_options(solver), "amg.block_size"),
                        with ? "3" : "1");
    char *json = clmg_solver_view_json(solver);
    assert_non_null(json);
    check_setup_phases(json, 1);
    cJSON *view = cJSON_Parse(json);
    assert_non_null(view);
    const cJSON *phase =
        cJSON_GetObjectItem(cJSON_GetObjectItem(view, "solver_setup"), "nullspace_s");
    assert_true(cJSON_IsNumber(phase));
    /* a file read takes time; no file, no time */
    if (with)
      assert_true(phase->valuedouble > 0);
    else
      assert_true(phase->valuedouble == 0);
    cJSON_Delete(view);
    free(json);
    char *printed = clmg_solver_view(solver);
    assert_non_null(printed);
    assert_non_null(strstr(printed, "the near-nullspace"));
    free(printed);
    clmg_solver_destroy(solver);
  }
  test_close_context(&ctx);
  ctx = shared;
  remove_tree(dir);
  clmg_spd_problem_free(&p);
}

static void test_solver_refusals(void **state) {
  (void)state;
  clmg_csr a = test_grid_laplacian(2);
  clmg_solver *solver = NULL;
  const char *refused[][2] = {
      {"krylov=none precond=jacobi", "krylov=none"},
      {"krylov=none precond=amg precision=mixed", "precision=mixed"},
      {"precond=multigrid", "unknown preconditioner 'multigrid'"},
      {"precond=mine", "unknown preconditioner 'mine'"},
      {"precond=amg mg.smoother=mine", "unknown smoother 'mine'"},
      {"precond=amg amg.near_nullspace=/nonexistent.mtx", "nonexistent"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    clmg_options *options = options_of(refused[i][0]);
    assert_int_not_equal(clmg_solver_create(ctx, &a, options, &solver), CLMG_SUCCESS);
    assert_null(solver);
    if (!strstr(clmg_context_message(ctx), refused[i][1]))
      fail_msg("%s: the message '%s' does not name '%s'", refused[i][0], clmg_context_message(ctx),
               refused[i][1]);
    clmg_options_destroy(options);
  }
  /* a row of zeros is singular */
  for (int64_t k = a.row_ptr[5]; k < a.row_ptr[6]; k++)
    a.val[k] = 0;
  assert_int_equal(clmg_solver_create(ctx, &a, NULL, &solver), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "row 6"));
  clmg_csr_free(&a);
  /* over many rows the scan runs on the host's threads: the lowest empty row
   * is named whichever range finds it, and a diagonal that is not positive
   * anywhere makes krylov=auto take GMRES */
  clmg_csr big = test_grid_laplacian(7); /* 66,049 rows */
  for (size_t r = 0; r < 2; r++) {
    size_t row = r ? 20000 : 50000;
    for (int64_t k = big.row_ptr[row]; k < big.row_ptr[row + 1]; k++)
      big.val[k] = 0;
  }
  assert_int_equal(clmg_solver_create(ctx, &big, NULL, &solver), CLMG_ERROR_INVALID_ARGUMENT);
  if (!strstr(clmg_context_message(ctx), "row 20001 of"))
    fail_msg("the lowest empty row is 20001: %s", clmg_context_message(ctx));
  clmg_csr_free(&big);
  big = test_grid_laplacian(7);
  assert_int_equal(clmg_solver_auto_method(&big), CLMG_KRYLOV_CG);
  for (int64_t k = big.row_ptr[60000]; k < big.row_ptr[60001]; k++)
    if (big.col[k] == 60000)
      big.val[k] = -big.val[k];
  assert_int_equal(clmg_solver_auto_method(&big), CLMG_KRYLOV_GMRES);
  clmg_csr_free(&big);

  /* an x of Inf is never a success */
  clmg_csr t = test_grid_laplacian(1);
  CHECK_OK(clmg_solver_create(ctx, &t, NULL, &solver));
  double *b = calloc(t.rows, sizeof *b), *x = calloc(t.rows, sizeof *x);
  for (size_t i = 0; i < t.rows; i++)
    b[i] = 1e308;
  clmg_status status = clmg_solver_solve_host(solver, b, x, NULL);
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < t.rows; i++)
      assert_true(isfinite(x[i]));
  }
  free(b);
  free(x);
  clmg_solver_destroy(solver);
  clmg_csr_free(&t);
}

/* clmg_solver_set_limits: later solves take the new tolerance and limit,
 * the resolved options show them, bad values leave the solver as it was. */
static void test_solver_limits(void **state) {
  (void)state;
  clmg_csr a = test_grid_laplacian(3);
  clmg_solver *solver = NULL;
  int loose = solve_known(&a, "precond=jacobi tol=1e-4", 1e-4, &solver);
  size_t n = a.rows;
  double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++)
    b[i] = rng_uniform() - 0.5;
  CHECK_OK(clmg_solver_set_limits(solver, 1e-10, 1000));
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "maxit"), "1000");
  assert_true(strtod(clmg_options_get(clmg_solver_options(solver), "tol"), NULL) == 1e-10);
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_solver_solve_host(solver, b, x, &result));
  assert_true(host_relative_residual(&a, b, x, r) <= 1.5e-10);
  assert_true(result.iterations > loose);
  clmg_krylov_result_free(&result);
  /* three iterations are not enough: the last iterate, not converged */
  CHECK_OK(clmg_solver_set_limits(solver, 1e-12, 3));
  memset(x, 0, n * sizeof *x);
  assert_int_equal(clmg_solver_solve_host(solver, b, x, &result), CLMG_ERROR_NOT_CONVERGED);
  assert_int_equal(result.iterations, 3);
  clmg_krylov_result_free(&result);
  const double bad_tolerance[] = {0, -1e-8, NAN, INFINITY, 1e-8};
  const int bad_iterations[] = {10, 10, 10, 10, 0};
  for (size_t i = 0; i < sizeof bad_iterations / sizeof bad_iterations[0]; i++) {
    assert_int_equal(clmg_solver_set_limits(solver, bad_tolerance[i], bad_iterations[i]),
                     CLMG_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clmg_context_message(ctx), "clmg_solver_set_limits"));
  }
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "maxit"), "3");
  assert_int_equal(clmg_solver_set_limits(NULL, 1e-8, 10), CLMG_ERROR_INVALID_ARGUMENT);
  free(b);
  free(x);
  free(r);
  clmg_solver_destroy(solver);
  clmg_csr_free(&a);
}

/* A matrix already on the device, borrowed; the host copy optional. */
static void test_device_matrix(void **state) {
  (void)state;
  clmg_csr a = test_grid_laplacian(3);
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &matrix));
  clmg_solver *solver = NULL;
  clmg_options *options = options_of("precond=jacobi tol=1e-9");
  CHECK_OK(clmg_solver_create_device(ctx, matrix, NULL, NULL, 1, options, &solver));
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_CG);
  assert_ptr_equal(clmg_solver_matrix(solver), matrix);
  size_t n = a.rows;
  double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x), *ones = malloc(n * sizeof *b);
  for (size_t i = 0; i < n; i++)
    ones[i] = 1.0;
  clmg_csr_spmv_host(1.0, &a, ones, 0.0, b);
  CHECK_OK(clmg_solver_solve_host(solver, b, x, NULL));
  for (size_t i = 0; i < n; i++)
    assert_true(fabs(x[i] - 1.0) < 1e-6);
  clmg_solver_destroy(solver); /* the matrix stays */
  assert_int_equal(clmg_matrix_rows(matrix), n);
  /* without the host copy auto trusts `symmetric`; AMG needs the host copy */
  CHECK_OK(clmg_solver_create_device(ctx, matrix, NULL, NULL, 0, options, &solver));
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_GMRES);
  clmg_solver_destroy(solver);
  CHECK_HOST(clmg_options_parse(options, "precond=amg", &(clmg_error){{0}}), (clmg_error){{0}});
  assert_int_equal(clmg_solver_create_device(ctx, matrix, NULL, NULL, 1, options, &solver),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "host"));
  CHECK_OK(clmg_solver_create_device(ctx, matrix, NULL, &a, 0, options, &solver));
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_CG); /* a was tested */
  clmg_solver_destroy(solver);
  clmg_options_destroy(options);
  clmg_matrix_destroy(matrix);
  clmg_csr_free(&a);
  free(b);
  free(x);
  free(ones);
}

/* ---- registrations ---- */

static int factory_calls;

static clmg_status my_jacobi(void *data, clmg_context *context, const clmg_csr *a,
                             const clmg_matrix *matrix, clmg_preconditioner *preconditioner) {
  (void)context;
  (void)a;
  factory_calls += *(int *)data;
  return clmg_preconditioner_jacobi(matrix, preconditioner);
}

static clmg_status my_smoother(void *data, clmg_context *context, int level, const clmg_operator *a,
                               clmg_smoother *smoother) {
  (void)level;
  (void)a;
  factory_calls += *(int *)data;
  return clmg_smoother_jacobi(context, 0.6, smoother);
}

static void test_registered(void **state) {
  (void)state;
  static int one = 1;
  factory_calls = 0;
  CHECK_OK(clmg_register_preconditioner(ctx, "my-jacobi", my_jacobi, &one));
  CHECK_OK(clmg_register_smoother(ctx, "my_smoother", my_smoother, &one));
  assert_int_equal(clmg_register_preconditioner(ctx, "my-jacobi", my_jacobi, &one),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_register_preconditioner(ctx, "amg", my_jacobi, &one),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_register_smoother(ctx, "bad name", my_smoother, &one),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clmg_register_smoother(ctx, "x", NULL, &one), CLMG_ERROR_INVALID_ARGUMENT);

  clmg_csr a = test_grid_laplacian(3);
  uint64_t seed = rng_state; /* the same x* for both */
  int builtin = solve_known(&a, "precond=jacobi tol=1e-9", 1e-9, NULL);
  rng_state = seed;
  int mine = solve_known(&a, "precond=my-jacobi tol=1e-9", 1e-9, NULL);
  assert_int_equal(builtin, mine);
  assert_int_equal(factory_calls, 1);
  clmg_solver *solver = NULL;
  solve_known(&a, "precond=amg mg.smoother=my_smoother tol=1e-9", 1e-9, &solver);
  int levels = clmg_multigrid_levels(clmg_solver_multigrid(solver));
  assert_int_equal(factory_calls, 1 + levels - 1); /* every level but the coarsest */
  assert_string_equal(clmg_multigrid_smoother_name(clmg_solver_multigrid(solver), levels - 1),
                      "jacobi");
  clmg_solver_destroy(solver);
  /* the refusal names what is registered */
  clmg_options *options = options_of("precond=yours");
  assert_int_equal(clmg_solver_create(ctx, &a, options, &solver), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "registered: my-jacobi"));
  clmg_options_destroy(options);
  clmg_csr_free(&a);
}

/* Around a caller's operator without a hierarchy (a matrix-free or
 * distributed one): precond=jacobi from the operator's diagonal solves in
 * the iterations of the same solver made from the matrix; a zero on the
 * diagonal, precond=multigrid without a hierarchy, AMG and mixed Jacobi are
 * refused with their names. */
static void test_operator_alone(void **state) {
  (void)state;
  clmg_csr a = test_grid_laplacian(3);
  size_t n = a.rows;
  uint64_t seed = rng_state; /* the same x* for both */
  int from_matrix = solve_known(&a, "krylov=cg precond=jacobi tol=1e-9", 1e-9, NULL);
  rng_state = seed;
  double *x_star = malloc(n * sizeof *x_star), *b = malloc(n * sizeof *b);
  double *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++)
    x_star[i] = rng_uniform();
  clmg_csr_spmv_host(1.0, &a, x_star, 0.0, b);
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &matrix));
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 0, &op));
  clmg_options *options = options_of("tol=1e-9"); /* precond: jacobi, its default */
  clmg_solver *solver = NULL;
  CHECK_OK(clmg_solver_create_multigrid(ctx, &op, NULL, 1, options, &solver));
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_CG);
  assert_string_equal(clmg_options_get(clmg_solver_options(solver), "precond"), "jacobi");
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_solver_solve_host(solver, b, x, &result));
  assert_int_equal(result.iterations, from_matrix);
  assert_true(host_relative_residual(&a, b, x, r) <= 1.5e-9);
  clmg_krylov_result_free(&result);
  clmg_solver_destroy(solver);
  clmg_options_destroy(options);
  const char *refused[][2] = {{"precond=multigrid", "precond=multigrid"},
                              {"precond=amg", "precond=amg"},
                              {"precision=mixed precond=jacobi", "precision=mixed"}};
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
    options = options_of(refused[k][0]);
    solver = NULL;
    assert_int_equal(clmg_solver_create_multigrid(ctx, &op, NULL, 1, options, &solver),
                     CLMG_ERROR_INVALID_ARGUMENT);
    assert_null(solver);
    assert_non_null(strstr(clmg_context_message(ctx), refused[k][1]));
    clmg_options_destroy(options);
  }
  clmg_operator_destroy(&op);
  clmg_matrix_destroy(matrix);
  /* a zero on the diagonal: the row is named */
  for (int64_t k = a.row_ptr[5]; k < a.row_ptr[6]; k++)
    if (a.col[k] == 5)
      a.val[k] = 0;
  CHECK_OK(clmg_matrix_create(ctx, &a, NULL, &matrix));
  CHECK_OK(clmg_operator_from_matrix(matrix, 0, &op));
  options = options_of("krylov=gmres");
  assert_int_equal(clmg_solver_create_multigrid(ctx, &op, NULL, 0, options, &solver),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "row 6 of the operator has a zero diagonal"));
  clmg_options_destroy(options);
  clmg_operator_destroy(&op);
  clmg_matrix_destroy(matrix);
  free(x_star);
  free(b);
  free(x);
  free(r);
  clmg_csr_free(&a);
}

/* A caller's geometric hierarchy with the cycle from the options. */
static void test_caller_hierarchy(void **state) {
  (void)state;
  enum { LEVELS = 4 };
  clmg_csr a[LEVELS], p[LEVELS];
  for (int l = 0; l < LEVELS; l++) {
    a[l] = test_grid_laplacian(l + 1);
    p[l] = l > 0 ? test_grid_prolongation(l + 1) : (clmg_csr){0};
  }
  clmg_options *options = options_of("mg.smoother=chebyshev mg.steps=2 mg.cycle=v tol=1e-9");
  clmg_multigrid_options mg;
  CHECK_OK(clmg_options_multigrid(options, ctx, &mg));
  assert_int_equal(mg.smoother, CLMG_SMOOTHER_CHEBYSHEV);
  assert_int_equal(mg.pre_smoothing, 2);
  clmg_multigrid *multigrid = NULL;
  CHECK_OK(clmg_multigrid_create(ctx, LEVELS, a, p, NULL, &mg, &multigrid));
  clmg_solver *solver = NULL;
  const clmg_operator *fine = clmg_multigrid_operator(multigrid, LEVELS - 1);
  CHECK_OK(clmg_solver_create_multigrid(ctx, fine, multigrid, 1, options, &solver));
  assert_int_equal(clmg_solver_method(solver), CLMG_KRYLOV_CG);
  size_t n = a[LEVELS - 1].rows;
  double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x), *x_star = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x_star[i] = rng_uniform();
  clmg_csr_spmv_host(1.0, &a[LEVELS - 1], x_star, 0.0, b);
  clmg_krylov_result result = {0};
  CHECK_OK(clmg_solver_solve_host(solver, b, x, &result));
  assert_true(result.iterations < 20);
  double e = 0, s = 0;
  for (size_t i = 0; i < n; i++) {
    e += (x[i] - x_star[i]) * (x[i] - x_star[i]);
    s += x_star[i] * x_star[i];
  }
  assert_true(sqrt(e / s) < 1e-6);
  clmg_krylov_result_free(&result);

  /* the view: resolved options, the hierarchy, complexities */
  char *json = clmg_solver_view_json(solver);
  assert_non_null(json);
  cJSON *view = cJSON_Parse(json);
  assert_non_null(view);
  cJSON *options_used = cJSON_GetObjectItem(view, "options");
  assert_string_equal(cJSON_GetObjectItem(options_used, "krylov")->valuestring, "cg");
  assert_string_equal(cJSON_GetObjectItem(options_used, "precond")->valuestring, "multigrid");
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(view, "hierarchy")), LEVELS);
  assert_true(cJSON_GetObjectItem(view, "operator_complexity")->valuedouble > 1.0);
  cJSON_Delete(view);
  check_setup_phases(json, 0);
  free(json);
  char *text = clmg_solver_view(solver);
  assert_non_null(strstr(text, "krylov=cg"));
  assert_non_null(strstr(text, "grid complexity"));
  free(text);
  clmg_solver_destroy(solver);

  /* the host-matrix smoothers belong to AMG */
  clmg_options *patch = options_of("mg.smoother=patch");
  assert_int_equal(clmg_options_multigrid(patch, ctx, &mg), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "precond=amg"));
  clmg_options_destroy(patch);
  clmg_multigrid_destroy(multigrid);
  free(b);
  free(x);
  free(x_star);
  clmg_options_destroy(options);
  for (int l = 0; l < LEVELS; l++) {
    clmg_csr_free(&a[l]);
    clmg_csr_free(&p[l]);
  }
}

/* ---- the solvers of clmg_flow and clmg_homg from options ---- */

/* clmg_options_homg: its keys as the fields, the autos resolved in the
 * database, the refusals (which change nothing) and the unused keys; then
 * a solve with the options it gives, checked on the host against the
 * five-point equations, and its echo read back into the same options. */
static void test_options_homg(void **state) {
  (void)state;
  clmg_error error = {{0}};
  char unused[256];
  clmg_homg_options h;
  clmg_homg_options_defaults(&h);
  h.record_steps = 1; /* not the options' */
  clmg_options *o = options_of("");
  CHECK_HOST(clmg_options_homg(o, &h, unused, sizeof unused, &error), error);
  assert_int_equal(h.method, CLMG_HOMG_MFMG);
  assert_int_equal(h.precision, CLMG_DOUBLE);
  assert_int_equal(h.max_iterations_per_level, 32);
  assert_int_equal(h.schedule, CLMG_HOMG_SCHEDULE_SAWTOOTH);
  assert_true(h.omega == 0.8 && h.relative_tolerance == 1e-10 && h.stagnation_factor == 1.1);
  assert_int_equal(h.pre_smoothing, 2);
  assert_int_equal(h.post_smoothing, 2);
  assert_int_equal(h.max_cycles, 50);
  assert_int_equal(h.record_steps, 1);
  assert_string_equal(unused, "");
  assert_string_equal(clmg_options_get(o, "tol"), "1e-10");
  assert_string_equal(clmg_options_get(o, "maxit"), "50");
  assert_string_equal(clmg_options_get(o, "mg.smoother"), "jacobi");
  assert_string_equal(clmg_options_get(o, "homg.stagnation"), "1.1");
  assert_false(clmg_options_is_set(o, "krylov")); /* not read: not resolved */
  clmg_options_destroy(o);

  /* maxit alone: exactly that many cycles; with tol: a limit */
  o = options_of("maxit=3 homg.method=mfmg precision=float");
  CHECK_HOST(clmg_options_homg(o, &h, NULL, 0, &error), error);
  assert_true(h.max_cycles == 3 && h.relative_tolerance == 0 && h.stagnation_factor == 0);
  assert_int_equal(h.precision, CLMG_FLOAT);
  assert_string_equal(clmg_options_get(o, "homg.method"), "homg");
  clmg_options_destroy(o);
  o = options_of("maxit=3 tol=1e-7 mg.steps=3 mg.post=1 mg.omega=0.6 homg.maxi=4 "
                 "homg.schedule=vshape homg.error_tol=0.02 homg.stagnation=2");
  CHECK_HOST(clmg_options_homg(o, &h, NULL, 0, &error), error);
  assert_true(h.relative_tolerance == 1e-7 && h.stagnation_factor == 2 && h.omega == 0.6);
  assert_true(h.error_tolerance == 0.02);
  assert_int_equal(h.pre_smoothing, 3);
  assert_int_equal(h.post_smoothing, 1);
  assert_int_equal(h.max_iterations_per_level, 4);
  assert_int_equal(h.schedule, CLMG_HOMG_SCHEDULE_VSHAPE);
  clmg_options_destroy(o);

  /* what it cannot use is refused, naming the key; nothing changes */
  static const struct {
    const char *text, *says;
  } refused[] = {{"homg.method=fmg homg.schedule=ascent", "homg.schedule"},
                 {"mg.smoother=chebyshev", "damped Jacobi"},
                 {"mg.omega=1.5", "omega <= 1"},
                 {"mg.pre=0 mg.post=0", "smoothing step"},
                 {"precision=mixed", "double or float"},
                 {"maxit=100001", "100000"},
                 {"homg.stagnation=1", "above 1"}};
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
    o = options_of(refused[k].text);
    clmg_homg_options before = h;
    assert_int_equal(clmg_options_homg(o, &h, NULL, 0, &error), CLMG_ERROR_INVALID_ARGUMENT);
    if (!strstr(error.message, refused[k].says))
      fail_msg("%s: '%s' does not say '%s'", refused[k].text, error.message, refused[k].says);
    assert_memory_equal(&before, &h, sizeof h);
    assert_false(clmg_options_is_set(o, "homg.maxi"));
    clmg_options_destroy(o);
  }

  /* keys it does not read are named; a key at its default changes nothing */
  o = options_of("krylov=cg precond=jacobi amg.coarsening=classical");
  CHECK_HOST(clmg_options_homg(o, &h, unused, sizeof unused, &error), error);
  assert_string_equal(unused, "krylov, amg.coarsening");
  clmg_options_destroy(o);

  /* a V-cycle solve on the paper's problem with the options' solver */
  enum { N = 17 };
  o = options_of("homg.method=vcycle mg.pre=1 mg.post=1 tol=1e-9");
  clmg_homg_options_defaults(&h);
  CHECK_HOST(clmg_options_homg(o, &h, NULL, 0, &error), error);
  double *f = malloc(N * N * sizeof *f), *u = malloc(N * N * sizeof *u);
  double *x = calloc(N * N, sizeof *x);
  assert_non_null(f);
  assert_non_null(u);
  assert_non_null(x);
  clmg_homg_paper_problem(N, f, u);
  clmg_homg *homg = NULL;
  clmg_vector *fd = NULL, *xd = NULL;
  CHECK_OK(clmg_homg_create(ctx, N, &h, &homg));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, N * N, &fd));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, N * N, &xd));
  CHECK_OK(clmg_vector_upload_doubles(fd, f));
  CHECK_OK(clmg_vector_fill(xd, 0.0));
  clmg_homg_result result = {0};
  CHECK_OK(clmg_homg_solve(homg, fd, xd, NULL, &result));
  assert_true(result.converged);
  CHECK_OK(clmg_vector_download_doubles(xd, x));
  /* -laplace(x) = f on the interior (x = 0 on the boundary), h = 1/(n-1) */
  double hh = 1.0 / (N - 1), rr = 0, ff = 0;
  for (size_t i = 1; i + 1 < N; i++)
    for (size_t j = 1; j + 1 < N; j++) {
      size_t k = i * N + j;
      double ax = (4 * x[k] - x[k - 1] - x[k + 1] - x[k - N] - x[k + N]) / (hh * hh);
      rr += (f[k] - ax) * (f[k] - ax);
      ff += f[k] * f[k];
    }
  if (!(sqrt(rr / ff) <= 1e-8))
    fail_msg("the host residual is %.3g of f, the tolerance 1e-9", sqrt(rr / ff));
  double e = 0, s = 0;
  for (size_t k = 0; k < N * N; k++) {
    e += fabs(x[k] - u[k]);
    s += fabs(u[k]);
  }
  assert_true(e / s < 0.1); /* the discretisation error of a 17 x 17 grid */
  clmg_homg_result_free(&result);
  clmg_vector_destroy(fd);
  clmg_vector_destroy(xd);
  clmg_homg_destroy(homg);
  free(f);
  free(u);
  free(x);

  /* the resolved options, as JSON, give the same solver again */
  char *json = clmg_options_to_json(o, 0);
  assert_non_null(json);
  clmg_options *again = options_of("");
  CHECK_HOST(clmg_options_parse_json(again, json, &error), error);
  clmg_homg_options h2;
  clmg_homg_options_defaults(&h2);
  CHECK_HOST(clmg_options_homg(again, &h2, NULL, 0, &error), error);
  assert_memory_equal(&h, &h2, sizeof h);
  free(json);
  clmg_options_destroy(again);
  clmg_options_destroy(o);
}

/* clmg_options_flow: the keys as the fields (the problem's fields kept),
 * flow's defaults where a key is not set, the refusals and unused keys. */
static void test_options_flow(void **state) {
  (void)state;
  clmg_error error = {{0}};
  char unused[256];
  clmg_flow_options f, defaults;
  clmg_flow_options_defaults(&defaults);
  f = defaults;
  f.levels = 3;
  f.steady = 0;
  f.time_step = 0.5;
  clmg_options *o = options_of("");
  CHECK_HOST(clmg_options_flow(o, &f, unused, sizeof unused, &error), error);
  assert_int_equal(f.levels, 3);
  assert_int_equal(f.steady, 0);
  assert_true(f.time_step == 0.5);
  assert_int_equal(f.multigrid.cycle, CLMG_CYCLE_F);
  assert_int_equal(f.multigrid.pre_smoothing, 2);
  assert_int_equal(f.multigrid.post_smoothing, 2);
  assert_int_equal(f.multigrid.coarse, CLMG_COARSE_AUTO);
  assert_int_equal(f.vanka.store_inverses, 1);
  assert_true(f.vanka.omega == 1 && f.linear_tolerance == 0);
  assert_true(f.nonlinear_tolerance == 1e-8);
  assert_int_equal(f.max_linear, 100);
  assert_int_equal(f.max_nonlinear, 50);
  assert_int_equal(f.restart, 30);
  assert_string_equal(unused, "");
  assert_string_equal(clmg_options_get(o, "krylov"), "gmres");
  assert_string_equal(clmg_options_get(o, "mg.cycle"), "f");
  assert_string_equal(clmg_options_get(o, "mg.smoother"), "vanka-si");
  assert_string_equal(clmg_options_get(o, "maxit"), "100");
  assert_string_equal(clmg_options_get(o, "tol"), "auto");
  clmg_options_destroy(o);

  o = options_of("mg.smoother=vanka-nsi mg.cycle=v mg.steps=1 mg.pre=3 mg.omega=0.8 "
                 "mg.coarse=direct tol=1e-6 maxit=7 restart=5 flow.nonlinear_tol=1e-5 "
                 "flow.nonlinear_maxit=9 atol=1");
  CHECK_HOST(clmg_options_flow(o, &f, unused, sizeof unused, &error), error);
  assert_int_equal(f.vanka.store_inverses, 0);
  assert_int_equal(f.multigrid.cycle, CLMG_CYCLE_V);
  assert_int_equal(f.multigrid.pre_smoothing, 3);
  assert_int_equal(f.multigrid.post_smoothing, 1);
  assert_int_equal(f.multigrid.coarse, CLMG_COARSE_DIRECT);
  assert_true(f.vanka.omega == 0.8 && f.linear_tolerance == 1e-6);
  assert_true(f.nonlinear_tolerance == 1e-5);
  assert_int_equal(f.max_linear, 7);
  assert_int_equal(f.restart, 5);
  assert_int_equal(f.max_nonlinear, 9);
  assert_string_equal(unused, "atol");
  assert_int_equal(f.time_scheme, CLMG_FLOW_BACKWARD_EULER); /* auto: as it was */
  assert_int_equal(f.upwind, -1);
  clmg_options_destroy(o);

  o = options_of("flow.time_scheme=fs-theta flow.upwind=weighted flow.upwind_parameter=0.25");
  CHECK_HOST(clmg_options_flow(o, &f, unused, sizeof unused, &error), error);
  assert_int_equal(f.time_scheme, CLMG_FLOW_FS_THETA);
  assert_int_equal(f.upwind, CLMG_STOKES_UPWIND_WEIGHTED);
  assert_true(f.upwind_parameter == 0.25);
  assert_string_equal(unused, "");
  assert_string_equal(clmg_options_get(o, "flow.time_scheme"), "fs-theta");
  assert_int_equal(f.linearisation, CLMG_FLOW_PICARD); /* the default */
  clmg_options_destroy(o);
  o = options_of("flow.linearisation=newton flow.newton_start=0.01");
  CHECK_HOST(clmg_options_flow(o, &f, unused, sizeof unused, &error), error);
  assert_int_equal(f.linearisation, CLMG_FLOW_NEWTON);
  assert_true(f.newton_start == 0.01);
  assert_string_equal(unused, "");
  assert_string_equal(clmg_options_get(o, "flow.linearisation"), "newton");
  clmg_options_destroy(o);
  o = options_of("flow.upwind=samarskij flow.time_scheme=crank-nicolson");
  CHECK_HOST(clmg_options_flow(o, &f, unused, sizeof unused, &error), error);
  assert_int_equal(f.upwind, CLMG_STOKES_UPWIND_SAMARSKIJ);
  assert_int_equal(f.time_scheme, CLMG_FLOW_CRANK_NICOLSON);
  assert_int_equal(f.step_iterations, 0); /* auto: the scheme's */
  clmg_options_destroy(o);
  o = options_of("flow.step_iterations=3");
  CHECK_HOST(clmg_options_flow(o, &f, unused, sizeof unused, &error), error);
  assert_int_equal(f.step_iterations, 3);
  assert_string_equal(unused, "");
  clmg_options_destroy(o);

  static const struct {
    const char *text, *says;
  } refused[] = {{"krylov=cg", "GMRES"},
                 {"precision=float", "double"},
                 {"mg.smoother=jacobi", "vanka-nsi"},
                 {"mg.omega=2", "omega < 2"},
                 {"mg.coarse=pcg", "direct"},
                 {"tol=0", "above 0"},
                 {"flow.upwind=full flow.upwind_parameter=0.5", "flow.upwind=weighted"}};
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
    o = options_of(refused[k].text);
    clmg_flow_options before = f;
    assert_int_equal(clmg_options_flow(o, &f, NULL, 0, &error), CLMG_ERROR_INVALID_ARGUMENT);
    if (!strstr(error.message, refused[k].says))
      fail_msg("%s: '%s' does not say '%s'", refused[k].text, error.message, refused[k].says);
    assert_memory_equal(&before, &f, sizeof f);
    assert_false(clmg_options_is_set(o, "flow.nonlinear_maxit"));
    clmg_options_destroy(o);
  }

  /* the Vanka smoothers are the saddle-point levels' only */
  o = options_of("mg.smoother=vanka-si");
  clmg_multigrid_options mg;
  assert_int_equal(clmg_options_multigrid(o, ctx, &mg), CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "saddle-point"));
  clmg_options_destroy(o);
}

static int setup(void **state) {
  (void)state;
  rng_seed(3232);
  return test_open_context(&ctx, NULL, "solver", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_checked),        cmocka_unit_test(test_options_json),
      cmocka_unit_test(test_solver_compositions),    cmocka_unit_test(test_solver_nullspace_phase),
      cmocka_unit_test(test_solver_refusals),        cmocka_unit_test(test_registered),
      cmocka_unit_test(test_caller_hierarchy),       cmocka_unit_test(test_operator_alone),
      cmocka_unit_test(test_device_matrix),          cmocka_unit_test(test_options_homg),
      cmocka_unit_test(test_options_flow),           cmocka_unit_test(test_solver_limits),
      cmocka_unit_test(test_solver_repeated_solves),
  };
  test_apply_filters();
  return cmocka_run_group_tests(tests, setup, teardown);
}
