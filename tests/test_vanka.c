/* The Vanka smoother (clmg_smoother_vanka, cl/vanka.cl): its colours (no
 * two cells of a colour share an unknown; two colours where the cells allow
 * it, more where they do not), and its device steps against the host
 * reference clmg_vanka_smooth_host on random saddle-point systems (zero
 * pressure diagonal), with stored and recomputed local inverses, from a
 * random and from a zero guess; a cell whose pressure meets no velocity
 * leaves it unmoved; bad input gets a message; the one-group path of a
 * small smoother (vanka_sweeps) gives the launches' x bit for bit. */
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
#include "test_util.h"

static clmg_context *ctx;

#define CHECK_OK(call) CHECK_CONTEXT_OK(ctx, call)
#define CHECK_HOST(call, error) CHECK_ERROR_OK(error, call)

/* A saddle-point system of `cells` cells, each with 3 velocity unknowns
 * and a pressure unknown of its own (block 4). Chain: cell c has velocities
 * 2c, 2c+1, 2c+2 (neighbours share one: two colours); overlapping: c, c+1,
 * c+2 (three cells share c+2: a triangle in the sharing graph). Values are
 * assembled cell by cell: a random nonsymmetric velocity block (as
 * convection makes it) made diagonally dominant, and random
 * velocity-pressure couplings, symmetric; no pressure diagonal. With `lonely`, cell 0's pressure
 * couples to nothing. */
typedef struct saddle {
  clmg_csr a;
  size_t n, cells;
  int32_t *unknowns;
} saddle;

static saddle make_saddle(size_t cells, int overlapping, int lonely) {
  saddle s = {0};
  size_t velocities = overlapping ? cells + 2 : 2 * cells + 1;
  s.cells = cells;
  s.n = velocities + cells;
  s.unknowns = malloc(cells * 4 * sizeof *s.unknowns);
  assert_non_null(s.unknowns);
  triplets t = {0};
  for (size_t c = 0; c < cells; ++c) {
    int32_t *u = s.unknowns + 4 * c;
    for (int j = 0; j < 3; ++j)
      u[j] = (int32_t)(overlapping ? c + (size_t)j : 2 * c + (size_t)j);
    u[3] = (int32_t)(velocities + c);
    for (int i = 0; i < 3; ++i) {
      triplets_add(&t, (size_t)u[i], (size_t)u[i], 4.0 + rng_uniform());
      for (int j = i + 1; j < 3; ++j) {
        triplets_add(&t, (size_t)u[i], (size_t)u[j], 2 * rng_uniform() - 1);
        triplets_add(&t, (size_t)u[j], (size_t)u[i], 2 * rng_uniform() - 1);
      }
      if (!(lonely && c == 0)) {
        double b = 2 * rng_uniform() - 1;
        triplets_add(&t, (size_t)u[i], (size_t)u[3], b);
        triplets_add(&t, (size_t)u[3], (size_t)u[i], b);
      }
    }
  }
  /* a lonely pressure still needs its row: a zero entry on the diagonal */
  if (lonely)
    triplets_add(&t, (size_t)s.unknowns[3], (size_t)s.unknowns[3], 0.0);
  s.a = triplets_to_csr(&t, s.n);
  return s;
}

static void free_saddle(saddle *s) {
  clmg_csr_free(&s->a);
  free(s->unknowns);
}

static void random_vector(double *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    x[i] = 2 * rng_uniform() - 1;
}

/* ---- colours ---- */

static void check_colours(const saddle *s, int expected_at_least, int expected_at_most) {
  int32_t *colour = malloc(s->cells * sizeof *colour);
  assert_non_null(colour);
  int count = 0;
  clmg_error error = {{0}};
  CHECK_HOST(clmg_vanka_colour_cells(s->n, s->cells, 4, s->unknowns, colour, &count, &error),
             error);
  assert_true(count >= expected_at_least && count <= expected_at_most);
  /* no unknown in two cells of one colour */
  for (size_t c = 0; c < s->cells; ++c) {
    assert_true(colour[c] >= 0 && colour[c] < count);
    for (size_t d = c + 1; d < s->cells; ++d) {
      if (colour[c] != colour[d])
        continue;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          assert_int_not_equal(s->unknowns[4 * c + (size_t)i], s->unknowns[4 * d + (size_t)j]);
    }
  }
  free(colour);
}

static void test_colours(void **state) {
  (void)state;
  saddle chain = make_saddle(40, 0, 0), overlapping = make_saddle(40, 1, 0);
  check_colours(&chain, 2, 2);
  check_colours(&overlapping, 3, 4);
  free_saddle(&chain);
  free_saddle(&overlapping);
}

/* ---- device steps against the host ---- */

/* `steps` steps of the smoother on the device against the host reference,
 * from x0 (NULL: a zero guess). */
static void compare_steps(const saddle *s, const clmg_vanka_options *options, int steps,
                          const double *x0) {
  size_t n = s->n;
  double *b = malloc(n * sizeof *b), *host = malloc(n * sizeof *host),
         *device = malloc(n * sizeof *device);
  assert_non_null(b);
  assert_non_null(host);
  assert_non_null(device);
  random_vector(b, n);
  for (size_t i = 0; i < n; ++i)
    host[i] = x0 ? x0[i] : 0.0;
  clmg_error error = {{0}};
  CHECK_HOST(clmg_vanka_smooth_host(&s->a, s->cells, 4, s->unknowns, options->omega, steps, b, host,
                                    &error),
             error);
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(ctx, &s->a, NULL, &matrix));
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op));
  clmg_smoother smoother;
  CHECK_OK(clmg_smoother_vanka(ctx, &s->a, s->cells, 4, s->unknowns, options, &smoother));
  CHECK_OK(smoother.setup(smoother.data, &op));
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &db));
  CHECK_OK(clmg_vector_create(ctx, CLMG_DOUBLE, n, &dx));
  CHECK_OK(clmg_vector_upload_doubles(db, b));
  if (x0)
    CHECK_OK(clmg_vector_upload_doubles(dx, x0));
  else
    CHECK_OK(clmg_vector_fill(dx, 1e30)); /* x_is_zero must not read x */
  CHECK_OK(smoother.apply(smoother.data, &op, db, dx, steps, x0 == NULL));
  CHECK_OK(clmg_vector_download_doubles(dx, device));
  double largest = 0, worst = 0, moved = 0;
  for (size_t i = 0; i < n; ++i) {
    assert_true(isfinite(device[i]));
    largest = fmax(largest, fabs(host[i]));
    worst = fmax(worst, fabs(device[i] - host[i]));
    moved = fmax(moved, fabs(host[i] - (x0 ? x0[i] : 0.0)));
  }
  if (!(worst <= 1e-12 * largest))
    fail_msg("Vanka (%s, omega %g, %d steps): device differs from host by %.3e (largest %.3e)",
             options->store_inverses ? "SI" : "NSI", options->omega, steps, worst, largest);
  assert_true(moved > 1e-3); /* the steps did something */
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
  free(b);
  free(host);
  free(device);
}

static void test_device_against_host(void **state) {
  (void)state;
  for (int overlapping = 0; overlapping <= 1; ++overlapping) {
    saddle s = make_saddle(57, overlapping, 0);
    double *x0 = malloc(s.n * sizeof *x0);
    assert_non_null(x0);
    random_vector(x0, s.n);
    for (int stored = 0; stored <= 1; ++stored) {
      clmg_vanka_options options;
      clmg_vanka_options_defaults(&options);
      options.store_inverses = stored;
      options.omega = 0.8;
      compare_steps(&s, &options, 2, x0);
      compare_steps(&s, &options, 1, NULL);
    }
    free(x0);
    free_saddle(&s);
  }
}

/* One step solves a single cell's system exactly: the local solve itself. */
static void test_single_cell_exact(void **state) {
  (void)state;
  saddle s = make_saddle(1, 0, 0);
  double x[4] = {0}, b[4], r[4];
  random_vector(b, 4);
  clmg_error error = {{0}};
  CHECK_HOST(clmg_vanka_smooth_host(&s.a, 1, 4, s.unknowns, 1.0, 1, b, x, &error), error);
  clmg_csr_spmv_host(1.0, &s.a, x, 0.0, r);
  for (int i = 0; i < 4; ++i)
    assert_true(fabs(r[i] - b[i]) <= 1e-12 * (1 + fabs(b[i])));
  free_saddle(&s);
}

/* Cell 0's pressure meets no velocity: its pivot vanishes, the pressure
 * stays, the velocities still move, nothing is NaN (host and device). */
static void test_lonely_pressure(void **state) {
  (void)state;
  saddle s = make_saddle(9, 0, 1);
  double *x0 = malloc(s.n * sizeof *x0), *x = malloc(s.n * sizeof *x), *b = malloc(s.n * sizeof *b);
  assert_non_null(x0);
  assert_non_null(x);
  assert_non_null(b);
  random_vector(x0, s.n);
  random_vector(b, s.n);
  memcpy(x, x0, s.n * sizeof *x);
  clmg_error error = {{0}};
  CHECK_HOST(clmg_vanka_smooth_host(&s.a, s.cells, 4, s.unknowns, 1.0, 1, b, x, &error), error);
  int32_t pressure = s.unknowns[3];
  assert_true(x[pressure] == x0[pressure]);
  assert_true(fabs(x[0] - x0[0]) > 0);
  for (size_t i = 0; i < s.n; ++i)
    assert_true(isfinite(x[i]));
  clmg_vanka_options options;
  clmg_vanka_options_defaults(&options);
  compare_steps(&s, &options, 1, x0);
  options.store_inverses = 0;
  compare_steps(&s, &options, 1, x0);
  free(x0);
  free(x);
  free(b);
  free_saddle(&s);
}

/* ---- one launch of one work-group against the launches ----
 * A smoother of at most the device's tail_rows cells runs every
 * application as one launch of vanka_sweeps in one work-group (the
 * colours' barriers in place of the launches); its x must be that of the
 * two launches a colour, bit for bit. */

/* `steps` steps in `context`, from x0 (NULL: a zero guess, x filled with
 * 1e30 that must not be read); *commands: the application's. */
static void steps_in(clmg_context *context, const saddle *s, const clmg_vanka_options *options,
                     int steps, const double *b, const double *x0, double *x, uint64_t *commands) {
  size_t n = s->n;
  clmg_matrix *matrix = NULL;
  CHECK_CONTEXT_OK(context, clmg_matrix_create(context, &s->a, NULL, &matrix));
  clmg_operator op;
  CHECK_CONTEXT_OK(context, clmg_operator_from_matrix(matrix, 1, &op));
  clmg_smoother smoother;
  CHECK_CONTEXT_OK(
      context, clmg_smoother_vanka(context, &s->a, s->cells, 4, s->unknowns, options, &smoother));
  CHECK_CONTEXT_OK(context, smoother.setup(smoother.data, &op));
  clmg_vector *db = NULL, *dx = NULL;
  CHECK_CONTEXT_OK(context, clmg_vector_create(context, CLMG_DOUBLE, n, &db));
  CHECK_CONTEXT_OK(context, clmg_vector_create(context, CLMG_DOUBLE, n, &dx));
  CHECK_CONTEXT_OK(context, clmg_vector_upload_doubles(db, b));
  if (x0)
    CHECK_CONTEXT_OK(context, clmg_vector_upload_doubles(dx, x0));
  else
    CHECK_CONTEXT_OK(context, clmg_vector_fill(dx, 1e30));
  clmg_counters before, after;
  clmg_context_counters(context, &before);
  CHECK_CONTEXT_OK(context, smoother.apply(smoother.data, &op, db, dx, steps, x0 == NULL));
  clmg_context_counters(context, &after);
  *commands = after.commands - before.commands;
  CHECK_CONTEXT_OK(context, clmg_vector_download_doubles(dx, x));
  clmg_smoother_destroy(&smoother);
  clmg_operator_destroy(&op);
  clmg_vector_destroy(db);
  clmg_vector_destroy(dx);
}

static void test_one_group_matches_launches(void **state) {
  (void)state;
  /* groups of 1024 (a cell a work-item) and of 16 (each walks several
   * cells of a colour), against launches (tail_rows=0: on GPUs the default
   * takes the one group for small smoothers) */
  const char *params[] = {"tail_rows=100000", "tail_rows=100000,tail_group_size=16"};
  clmg_context *launching = NULL;
  assert_int_equal(test_open_context_params(&launching, "tail_rows=0", "vanka launches", 0), 0);
  for (int g = 0; g < 2; ++g) {
    clmg_context *grouped = NULL;
    assert_int_equal(test_open_context_params(&grouped, params[g], "vanka one group", 0), 0);
    for (int overlapping = 0; overlapping <= 1; ++overlapping) {
      saddle s = make_saddle(301, overlapping, 0);
      double *b = malloc(s.n * sizeof *b), *x0 = malloc(s.n * sizeof *x0),
             *launched = malloc(s.n * sizeof *launched), *one = malloc(s.n * sizeof *one);
      assert_non_null(b);
      assert_non_null(x0);
      assert_non_null(launched);
      assert_non_null(one);
      random_vector(b, s.n);
      random_vector(x0, s.n);
      for (int stored = 0; stored <= 1; ++stored)
        for (int zero = 0; zero <= 1; ++zero) {
          clmg_vanka_options options;
          clmg_vanka_options_defaults(&options);
          options.store_inverses = stored;
          options.omega = 0.9;
          uint64_t launches = 0, one_launch = 0;
          steps_in(launching, &s, &options, 3, b, zero ? NULL : x0, launched, &launches);
          steps_in(grouped, &s, &options, 3, b, zero ? NULL : x0, one, &one_launch);
          print_message("%s, %s, %s%s guess: %llu commands, one group %llu\n", params[g],
                        overlapping ? "overlapping" : "chain", stored ? "SI" : "NSI",
                        zero ? ", zero" : ", random", (unsigned long long)launches,
                        (unsigned long long)one_launch);
          assert_int_equal(one_launch, 1);
          assert_true(launches >= 3 * 2 * 2);
          double moved = 0;
          for (size_t i = 0; i < s.n; ++i) {
            assert_true(isfinite(one[i]));
            moved = fmax(moved, fabs(one[i] - (zero ? 0.0 : x0[i])));
          }
          assert_true(moved > 1e-3);
          assert_memory_equal(one, launched, s.n * sizeof *one);
        }
      free(b);
      free(x0);
      free(launched);
      free(one);
      free_saddle(&s);
    }
    assert_int_equal(test_close_context(&grouped), 0);
  }
  assert_int_equal(test_close_context(&launching), 0);
}

static void test_bad_input(void **state) {
  (void)state;
  saddle s = make_saddle(4, 0, 0);
  clmg_smoother smoother;
  s.unknowns[5] = (int32_t)s.n; /* cell 1 names an unknown past the end */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_smoother_vanka(ctx, &s.a, s.cells, 4, s.unknowns, NULL, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "cell 1 names unknown");
  s.unknowns[5] = s.unknowns[4]; /* twice in one cell */
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_smoother_vanka(ctx, &s.a, s.cells, 4, s.unknowns, NULL, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "twice");
  s.unknowns[5] = s.unknowns[4] + 1;
  clmg_vanka_options options;
  clmg_vanka_options_defaults(&options);
  options.omega = 2.5;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT,
               clmg_smoother_vanka(ctx, &s.a, s.cells, 4, s.unknowns, &options, &smoother));
  CHECK_CONTAINS(clmg_context_message(ctx), "omega");
  free_saddle(&s);
}

static int setup(void **state) {
  (void)state;
  rng_seed(1986);
  return test_open_context(&ctx, NULL, "vanka", 1);
}

static int teardown(void **state) {
  (void)state;
  return test_close_context(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_colours),           cmocka_unit_test(test_device_against_host),
      cmocka_unit_test(test_single_cell_exact), cmocka_unit_test(test_lonely_pressure),
      cmocka_unit_test(test_bad_input),         cmocka_unit_test(test_one_group_matches_launches),
  };
  test_apply_filters();
  return cmocka_run_group_tests_name("vanka", tests, setup, teardown);
}
