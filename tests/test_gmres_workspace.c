/* GMRES in a workspace kept across solves (clmg_gmres_in_workspace,
 * lib/solve/gmres.c), as the flow solver runs it: every solve gives the
 * iterate of clmg_krylov_solve's GMRES bit for bit, meets the tolerance in
 * the residual recomputed on the host, and a solve of the workspace's
 * shape makes and zeroes no vectors (fewer commands and host waits than
 * the plain solve); another shape (restart, preconditioner) remakes it; an
 * iteration waits for the host once (CGS2's sums kept on the device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "clmg.h"
#include "solve/internal.h"
#include "test_util.h"

static clmg_context *ctx;

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    clmg_status s_ = (call);                                                                       \
    if (s_ != CLMG_SUCCESS)                                                                        \
      fail_msg("%s: %s: %s", #call, clmg_status_string(s_), clmg_context_message(ctx));            \
  } while (0)

typedef struct gmres_system {
  clmg_csr a;
  clmg_matrix *matrix;
  clmg_operator op;
  clmg_preconditioner jacobi;
  clmg_vector *b, *x;
} gmres_system;

/* One solve from x = 0; returns its iterations, *x_out the iterate and
 * *counts its commands and host waits. workspace NULL: clmg_krylov_solve. */
static int solve(gmres_system *s, const double *b, int restart, int precondition,
                 clmg_gmres_workspace *workspace, double *x_out, clmg_counters *counts) {
  size_t n = s->a.rows;
  CHECK_OK(clmg_vector_upload_doubles(s->b, b));
  CHECK_OK(clmg_vector_fill(s->x, 0.0));
  clmg_krylov_options ko;
  clmg_krylov_options_defaults(&ko);
  ko.relative_tolerance = 1e-10;
  ko.max_iterations = 2000;
  ko.gmres_restart = restart;
  clmg_krylov_result result;
  clmg_counters before, after;
  clmg_context_counters(ctx, &before);
  const clmg_preconditioner *m = precondition ? &s->jacobi : NULL;
  clmg_status status =
      workspace ? clmg_gmres_in_workspace(&s->op, s->b, s->x, m, &ko, &result, workspace)
                : clmg_krylov_solve(CLMG_KRYLOV_GMRES, &s->op, s->b, s->x, m, &ko, &result);
  clmg_context_counters(ctx, &after);
  if (status != CLMG_SUCCESS)
    fail_msg("gmres(%d)%s: %s: %s", restart, workspace ? " in a workspace" : "",
             clmg_status_string(status), clmg_context_message(ctx));
  counts->commands = after.commands - before.commands;
  counts->host_waits = after.host_waits - before.host_waits;
  assert_true(result.converged);
  CHECK_OK(clmg_vector_download_doubles(s->x, x_out));
  /* the residual of x, recomputed on the host */
  double *r = malloc(n * sizeof *r);
  assert_non_null(r);
  memcpy(r, b, n * sizeof *r);
  clmg_csr_spmv_host(-1.0, &s->a, x_out, 1.0, r);
  double rr = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    rr += r[i] * r[i];
    bb += b[i] * b[i];
  }
  free(r);
  if (!(isfinite(rr) && sqrt(rr) <= 1.01e-10 * sqrt(bb)))
    fail_msg("gmres(%d): host residual %.3e relative", restart, sqrt(rr / bb));
  int iterations = result.iterations;
  clmg_krylov_result_free(&result);
  return iterations;
}

static void test_workspace_matches_plain_solves(void **state) {
  (void)state;
  gmres_system s = {0};
  s.a = upwind_convection_diffusion(12, 10);
  size_t n = s.a.rows;
  CHECK_OK(clmg_matrix_create(ctx, &s.a, NULL, &s.matrix));
  CHECK_OK(clmg_operator_from_matrix(s.matrix, 0, &s.op));
  CHECK_OK(clmg_preconditioner_jacobi(s.matrix, &s.jacobi));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &s.b));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &s.x));
  double *b = malloc(n * sizeof *b), *plain = malloc(n * sizeof *plain),
         *kept = malloc(n * sizeof *kept);
  assert_non_null(b);
  assert_non_null(plain);
  assert_non_null(kept);
  clmg_gmres_workspace *workspace = NULL;
  CHECK_OK(clmg_gmres_workspace_create(&workspace));
  /* three right-hand sides in one shape, then other shapes and back */
  const struct {
    int restart, precondition;
  } shapes[] = {{20, 1}, {20, 1}, {20, 1}, {10, 1}, {10, 0}, {20, 1}, {20, 1}};
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k) {
    for (size_t i = 0; i < n; ++i)
      b[i] = rng_uniform() - 0.5;
    clmg_counters plain_counts, kept_counts;
    int plain_iterations =
        solve(&s, b, shapes[k].restart, shapes[k].precondition, NULL, plain, &plain_counts);
    int kept_iterations =
        solve(&s, b, shapes[k].restart, shapes[k].precondition, workspace, kept, &kept_counts);
    print_message(
        "solve %zu gmres(%d)%s: %d iterations; plain %llu commands %llu waits, in the "
        "workspace %llu commands %llu waits\n",
        k, shapes[k].restart, shapes[k].precondition ? " + jacobi" : "", kept_iterations,
        (unsigned long long)plain_counts.commands, (unsigned long long)plain_counts.host_waits,
        (unsigned long long)kept_counts.commands, (unsigned long long)kept_counts.host_waits);
    assert_int_equal(kept_iterations, plain_iterations);
    /* in double on one process, one host wait an iteration (both
     * Gram-Schmidt passes' sums in one read-back), a few a restart */
    const uint64_t restarts = (uint64_t)kept_iterations / (uint64_t)shapes[k].restart + 1;
    if (kept_counts.host_waits > (uint64_t)kept_iterations + 3 * restarts + 8)
      fail_msg("%llu host waits in %d iterations", (unsigned long long)kept_counts.host_waits,
               kept_iterations);
    assert_memory_equal(kept, plain, n * sizeof *kept);
    /* a solve of the workspace's last shape makes no vectors: the plain
     * solve's five (the bases, the residual, the coefficients, the
     * Gram-Schmidt sums) and their fills fewer, and no more waits (a new
     * vector's fill is waited for only where it commits memory: CPU
     * drivers, 1 MiB or more, clmg_vector_create) */
    const int same_shape = k > 0 && shapes[k].restart == shapes[k - 1].restart &&
                           shapes[k].precondition == shapes[k - 1].precondition;
    if (same_shape) {
      assert_true(kept_counts.host_waits <= plain_counts.host_waits);
      assert_int_equal(kept_counts.commands + 5, plain_counts.commands);
    } else {
      assert_int_equal(kept_counts.host_waits, plain_counts.host_waits);
    }
  }
  /* a NULL workspace is refused with a message */
  clmg_krylov_result result;
  assert_int_equal(clmg_gmres_in_workspace(&s.op, s.b, s.x, NULL, NULL, &result, NULL),
                   CLMG_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(clmg_context_message(ctx), "workspace"));
  clmg_gmres_workspace_destroy(workspace);
  clmg_gmres_workspace_destroy(NULL);
  free(b);
  free(plain);
  free(kept);
  clmg_preconditioner_destroy(&s.jacobi);
  clmg_vector_destroy(s.b);
  clmg_vector_destroy(s.x);
  clmg_operator_destroy(&s.op);
  clmg_matrix_destroy(s.matrix);
  clmg_csr_free(&s.a);
}

/* The Gram-Schmidt sums kept on the device (clmg_multi_dot_to_device) are
 * clmg_multi_dot's host sums bit for bit in double, at sizes of one and of
 * many work-groups, and zeros for empty vectors. */
static void test_device_sums_match_host(void **state) {
  (void)state;
  const size_t sizes[] = {0, 1, 37, 5000, 300000};
  const int k = 7;
  for (size_t c = 0; c < sizeof sizes / sizeof *sizes; ++c) {
    size_t n = sizes[c], stride = n + 3;
    double *basis = malloc((stride * (size_t)k + 1) * sizeof *basis),
           *w = malloc((n + 1) * sizeof *w), host[8], device[11];
    assert_non_null(basis);
    assert_non_null(w);
    for (size_t i = 0; i < stride * (size_t)k; ++i)
      basis[i] = rng_uniform() - 0.5;
    for (size_t i = 0; i < n; ++i)
      w[i] = rng_uniform() - 0.5;
    clmg_vector *db = NULL, *dw = NULL, *sums = NULL;
    CHECK_OK(clmg_vector_create_from_host(ctx, CLMG_DOUBLE, stride * (size_t)k, basis, &db));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dw));
    if (n > 0)
      CHECK_OK(clmg_vector_upload_doubles(dw, w));
    CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, 11, &sums));
    CHECK_OK(clmg_vector_fill(sums, -1.0));
    CHECK_OK(clmg_multi_dot(db, stride, k, dw, host));
    CHECK_OK(clmg_multi_dot_to_device(db, stride, k, dw, sums, 2));
    CHECK_OK(clmg_vector_download_doubles(sums, device));
    assert_true(device[0] == -1.0 && device[1] == -1.0 && device[10] == -1.0);
    assert_memory_equal(device + 2, host, (size_t)(k + 1) * sizeof *host);
    for (int j = 0; j <= k && n == 0; ++j)
      assert_true(device[2 + j] == 0.0);
    /* a slot past the end is refused */
    assert_int_equal(clmg_multi_dot_to_device(db, stride, k, dw, sums, 4),
                     CLMG_ERROR_INVALID_ARGUMENT);
    clmg_vector_destroy(db);
    clmg_vector_destroy(dw);
    clmg_vector_destroy(sums);
    free(basis);
    free(w);
  }
}

static int setup(void **state) {
  (void)state;
  rng_seed(20261129);
  return test_open_context(&ctx, NULL, "gmres_workspace", 0);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_sums_match_host),
      cmocka_unit_test(test_workspace_matches_plain_solves),
  };
  test_apply_filters();
  return cmocka_run_group_tests(tests, setup, teardown);
}
