/* Helpers shared by the test suites: the random-number generator (with the
 * CLMG_TEST_SEED override), the cmocka start-up (CLMG_TEST_FILTER and
 * CLMG_TEST_SKIP), a suite's context, scratch directories, and the macros
 * that declare a test for double and for float. Built once into
 * clmg_test_util (tests/test_util.c) and linked into every suite.
 *
 * Include it after cmocka.h. */
#ifndef CLMG_TEST_UTIL_H
#define CLMG_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "clmg.h"

/* ---- random numbers (splitmix64) ---- */

/* The generator's state; a suite may save and restore it to draw a
 * reproducible side sequence. */
extern uint64_t rng_state;

/* Seeds the generator with CLMG_TEST_SEED (strtoull, any base) when set,
 * otherwise with the suite's default_seed. */
void rng_seed(uint64_t default_seed);

uint64_t rng_next(void);

/* Uniform in [-1, 1). */
double rng_uniform(void);

/* Uniform in [0, n); n > 0. */
size_t rng_below(size_t n);

/* ---- cmocka ---- */

/* Glob patterns of test names to run (CLMG_TEST_FILTER) or to skip
 * (CLMG_TEST_SKIP). */
void test_apply_filters(void);

/* Declares name_double and name_float, which call run_name(type). */
#define TYPED_TESTS(name)                                                                          \
  static void name##_double(void **state) {                                                        \
    (void)state;                                                                                   \
    run_##name(CLMG_DOUBLE);                                                                       \
  }                                                                                                \
  static void name##_float(void **state) {                                                         \
    (void)state;                                                                                   \
    run_##name(CLMG_FLOAT);                                                                        \
  }

/* The two tests of TYPED_TESTS(name), for a cmocka test table. */
#define BOTH(name) cmocka_unit_test(name##_double), cmocka_unit_test(name##_float)

/* ---- contexts ---- */

/* Creates *ctx with options (NULL: the defaults) for a group setup. On
 * failure prints the status and the context's message, destroys what was
 * created, sets *ctx to NULL and returns -1; on success prints the device
 * when print_device and returns 0. tag, when not NULL, prefixes the lines as
 * "[tag] ". */
int test_open_context(clmg_context **ctx, const clmg_context_options *options, const char *tag,
                      int print_device);

/* Sets the environment variable `name` to `value` (NULL: unsets it) and
 * returns its earlier value, a copy (NULL where it was unset), for
 * test_env_restore. */
char *test_env_set(const char *name, const char *value);

/* Gives `name` back its value from test_env_set (unset for NULL) and frees
 * the copy. */
void test_env_restore(const char *name, char *kept);

/* test_open_context without options, with CLMG_DEVICE_PARAMS set to `params`
 * while the context is made (the device table's overrides, e.g.
 * "cpu_kernels=0" for a GPU's strided walk on a CPU) and restored after. */
int test_open_context_params(clmg_context **ctx, const char *params, const char *tag,
                             int print_device);

/* Destroys *ctx (which may be NULL) and sets it to NULL; returns 0. */
int test_close_context(clmg_context **ctx);

/* ---- scratch directories ---- */

/* A new empty directory CLMG_TEST_TMPDIR/tag-XXXXXX (malloc'ed path);
 * fails the test if it cannot be made. */
char *make_tmpdir(const char *tag);

/* Removes the tree at path (if not NULL) and frees path. */
void remove_tree(char *path);
/* The whole file (malloc'ed, NUL-terminated; the test fails when it cannot
 * be read); *size its length where size is not NULL. */
char *test_read_file(const char *path, size_t *size);

/* ---- host matrices ---- */

/* Collects (row, col, value) triplets; triplets_to_csr builds the n x n CSR
 * matrix (duplicates summed), frees the triplets and fails the test on
 * error. */
typedef struct triplets {
  size_t count, capacity;
  int32_t *row, *col;
  double *val;
} triplets;
void triplets_add(triplets *t, size_t row, size_t col, double value);
clmg_csr triplets_to_csr(triplets *t, size_t n);

/* -Laplace(u) + w . grad(u) on the unit square, n x n interior points,
 * first-order upwind convection whose wind turns with the position, global
 * Peclet number `peclet`: the nonsymmetric test matrix (n^2 rows). */
clmg_csr upwind_convection_diffusion(size_t n, double peclet);

/* The 5-point Laplacian (4, -1) on the (2^(level+1) + 1)^2 grid of the
 * unit square with its boundary nodes as identity rows, and the bilinear
 * interpolation from level - 1 to level, zero on boundary rows and columns
 * (so corrections keep the Dirichlet values): a geometric hierarchy made
 * by hand, independent of the library's FE layer. */
clmg_csr test_grid_laplacian(int level);
clmg_csr test_grid_prolongation(int level);

/* Jacobi-preconditioned CG on the host for SPD a from the initial x (the
 * reference for assembled systems): fails the test on a diagonal entry
 * that is not positive, a direction of non-positive curvature, or a
 * relative residual that does not reach rtol. Returns the iterations. */
int test_host_cg(const clmg_csr *a, const double *b, double *x, double rtol);

/* A x = b on ctx's device (double matrix and vectors) by `method` with
 * `preconditioner` (NULL: none), from x = 0 to the relative tolerance in
 * at most max_iterations. Returns the solver's status (the context's
 * message says why) and its iterations in *iterations. On success the
 * true residual is recomputed on the host and fails the test above the
 * tolerance; with x_star (the known solution) *error gets the relative
 * 2-norm error (error may be NULL). `what` names the case in messages. */
clmg_status test_solve_checked(clmg_context *ctx, const clmg_csr *a, const double *b,
                               const double *x_star, clmg_krylov_method method,
                               const clmg_preconditioner *preconditioner, double tolerance,
                               int max_iterations, const char *what, int *iterations,
                               double *error);

/* Solves the dense n x n system m x = rhs in place (row-major m is
 * destroyed, rhs becomes x) by Gaussian elimination with partial pivoting;
 * fails the test on a zero pivot. The host reference for direct solves. */
void dense_solve_in_place(double *m, double *rhs, size_t n);

/* ---- a manufactured Stokes flow on the unit square ----
 * u = curl(psi), psi = g0(x) g0(y) with g0(t) = t^2 (1-t)^2 (zero with its
 * normal derivative on the boundary, divergence-free); p = x^3 + y^2 - 7/12
 * (mean 0); f = -nu Laplace u + grad p. g1, g2, g3 are g0's derivatives. */
double psi_g0(double t);
double psi_g1(double t);
double psi_g2(double t);
double psi_g3(double t);
void stokes_exact_velocity(const double *x, double *u, void *data); /* data unused */
double stokes_exact_pressure(const double *x, void *data);          /* data unused */
/* f for the viscosity *(const double *)data (NULL: 1). */
void stokes_manufactured_force(const double *x, double *f, void *data);

/* Triangle meshes of the Stokes tests: five triangles around a vertex
 * (their sharing graph a 5-cycle: three colours on every level, all
 * boundary tag 1), and the unit square with its sides tagged 1 (y = 0),
 * 2 (x = 1), 3 (y = 1), 4 (x = 0). */
void test_pentagon_mesh(clmg_mesh *mesh);
/* One quadrilateral with corners xy (tensor order) and its four boundary
 * faces, the bottom one of tag bottom_tag, the others of tag 1; with a
 * circle of tag shape_tag, centre (centre_x, centre_y), when radius > 0. */
void test_one_quadrilateral(const double xy[8], int32_t bottom_tag, int32_t shape_tag,
                            double centre_x, double centre_y, double radius, clmg_mesh *mesh);
clmg_mesh test_side_tagged_box(int n, double distortion, uint64_t seed);
/* clmg_mesh_refine and clmg_triangle_edges_create, failing the test on an
 * error. */
clmg_mesh test_refined(const clmg_mesh *coarse);
clmg_triangle_edges test_edges_of(const clmg_mesh *mesh);

/* ---- checks with the library's own message ---- */

/* A call that must succeed; the failure shows the context's message. */
#define CHECK_CONTEXT_OK(context, call)                                                            \
  do {                                                                                             \
    clmg_status check_status_ = (call);                                                            \
    if (check_status_ != CLMG_SUCCESS)                                                             \
      fail_msg("%s -> %s: %s", #call, clmg_status_string(check_status_),                           \
               clmg_context_message(context));                                                     \
  } while (0)

/* A host call (clmg_error) that must succeed; the failure shows the message. */
#define CHECK_ERROR_OK(error, call)                                                                \
  do {                                                                                             \
    clmg_status check_status_ = (call);                                                            \
    if (check_status_ != CLMG_SUCCESS)                                                             \
      fail_msg("%s -> %s: %s", #call, clmg_status_string(check_status_), (error).message);         \
  } while (0)

/* ---- shared checks ---- */

/* x and y are the same CSR matrix: the same dimensions and pattern, values
 * within relative_tolerance of y's largest (fails naming what and level). */
void test_check_same_csr(const clmg_csr *x, const clmg_csr *y, double relative_tolerance,
                         const char *what, int level);

/* Runs body(data) in a child process whose address space is limited to
 * `bytes` (RLIMIT_AS) and fails the test unless it returns 0 (its value is
 * the child's exit status; 3: the limit could not be set). Does nothing
 * under AddressSanitizer, which reserves far more address space than any
 * such limit; returns whether it ran. */
int test_in_limited_child(size_t bytes, int (*body)(void *data), void *data);

/* A call that must return exactly `expected`. */
#define CHECK_STATUS(expected, call)                                                               \
  do {                                                                                             \
    clmg_status check_status_ = (call);                                                            \
    if (check_status_ != (expected))                                                               \
      fail_msg("%s -> %s, expected %s", #call, clmg_status_string(check_status_),                  \
               clmg_status_string(expected));                                                      \
  } while (0)

/* A message that must name something. */
#define CHECK_CONTAINS(text, part)                                                                 \
  do {                                                                                             \
    if (!strstr((text), (part)))                                                                   \
      fail_msg("message \"%s\" does not contain \"%s\"", (text), (part));                          \
  } while (0)

#endif
