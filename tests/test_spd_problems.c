/* Tests of the SPD test problems (include/clmg/spd_problems.h), all on the
 * host: names; sizes, symmetry (1e-12 relative) and positive definiteness
 * (a dense Cholesky factorization at the smallest levels, Poisson ratio up
 * to 0.45) of every problem; the six rigid-body modes in the null space of
 * the pure-traction elasticity matrices and not in that of the clamped
 * ones; patch tests: a linear displacement reproduced exactly by P1 and P2
 * elasticity, a quadratic one with its body force by P2 (and not by P1),
 * a linear u by SIPG; SIPG's L2 error of order 2 on a manufactured
 * solution; q2-jump with jump 1 equal to clmg_fe_assemble_poisson on the
 * same mesh, and with jump 1e4 different, SPD and converging under
 * refinement; the Matrix Market array writer of the coordinates; and bad
 * options with their status and message. Systems are solved by a
 * Jacobi-preconditioned CG on the host. */
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

#define PI 3.14159265358979323846

#define CHECK_OK(error, call) CHECK_ERROR_OK(error, call)

/* ---- helpers ---- */

static void *checked_calloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size);
  assert_non_null(p);
  return p;
}

static clmg_spd_problem make(clmg_spd_problem_kind kind, int level,
                             void (*adjust)(clmg_spd_problem_options *, void *), void *data) {
  clmg_spd_problem_options options;
  clmg_spd_problem_options_defaults(&options);
  options.kind = kind;
  options.level = level;
  if (adjust)
    adjust(&options, data);
  clmg_spd_problem problem;
  clmg_error error;
  CHECK_OK(error, clmg_spd_problem_create(&options, &problem, &error));
  return problem;
}

/* Dense Cholesky of a (small); fails the test unless every pivot is
 * positive. Returns the smallest pivot over the largest diagonal entry. */
static double cholesky_min_pivot(const clmg_csr *a) {
  size_t n = a->rows;
  double *m = checked_calloc(n * n, sizeof *m);
  double largest = 0.0;
  for (size_t i = 0; i < n; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      m[i * n + (size_t)a->col[k]] = a->val[k];
      if ((size_t)a->col[k] == i && a->val[k] > largest)
        largest = a->val[k];
    }
  double smallest = INFINITY;
  for (size_t j = 0; j < n; j++) {
    double pivot = m[j * n + j];
    for (size_t k = 0; k < j; k++)
      pivot -= m[j * n + k] * m[j * n + k];
    if (!(pivot > 0.0))
      fail_msg("Cholesky pivot %zu of %zu is %g: not positive definite", j, n, pivot);
    if (pivot < smallest)
      smallest = pivot;
    double d = sqrt(pivot);
    m[j * n + j] = d;
    for (size_t i = j + 1; i < n; i++) {
      double s = m[i * n + j];
      for (size_t k = 0; k < j; k++)
        s -= m[i * n + k] * m[j * n + k];
      m[i * n + j] = s / d;
    }
  }
  free(m);
  return smallest / largest;
}

static void check_structure(const clmg_spd_problem *p, size_t rows, int dim, int block_size) {
  assert_int_equal(p->a.rows, rows);
  assert_int_equal(p->a.cols, rows);
  assert_int_equal(p->dim, dim);
  assert_int_equal(p->block_size, block_size);
  assert_int_equal(p->num_nodes * (size_t)block_size, rows);
  assert_non_null(p->b);
  assert_non_null(p->coordinates);
  assert_non_null(p->is_dirichlet);
  for (size_t k = 0; k < p->num_nodes * (size_t)dim; k++)
    assert_true(p->coordinates[k] >= 0.0 && p->coordinates[k] <= 1.0);
  if (!clmg_csr_is_symmetric(&p->a, 1e-12))
    fail_msg("%s: the matrix is not symmetric", clmg_spd_problem_name(p->kind));
  for (size_t i = 0; i < rows; i++)
    assert_true(isfinite(p->b[i]));
}

/* 1 when the matrix has a positive off-diagonal entry (not an M-matrix). */
static int has_positive_offdiagonal(const clmg_csr *a) {
  for (size_t i = 0; i < a->rows; i++)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
      if ((size_t)a->col[k] != i && a->val[k] > 1e-12)
        return 1;
  return 0;
}

static void set_poisson_ratio(clmg_spd_problem_options *o, void *data) {
  o->poisson_ratio = *(const double *)data;
}

/* ---- names ---- */

static void test_names(void **state) {
  (void)state;
  const char *names[] = {"elasticity-p1", "elasticity-p2", "dg-diffusion", "q2-jump"};
  for (int k = 0; k < 4; k++) {
    assert_string_equal(clmg_spd_problem_name((clmg_spd_problem_kind)k), names[k]);
    clmg_spd_problem_kind kind = (clmg_spd_problem_kind)99;
    assert_int_equal(clmg_spd_problem_parse(names[k], &kind), 1);
    assert_int_equal(kind, k);
  }
  clmg_spd_problem_kind kind = CLMG_SPD_Q2_JUMP;
  assert_int_equal(clmg_spd_problem_parse("elasticity", &kind), 0);
  assert_int_equal(clmg_spd_problem_parse(NULL, &kind), 0);
  assert_int_equal(kind, CLMG_SPD_Q2_JUMP);
  assert_null(clmg_spd_problem_name((clmg_spd_problem_kind)4));
  assert_null(clmg_spd_problem_name((clmg_spd_problem_kind)-1));
}

/* ---- sizes, symmetry, definiteness ---- */

static void test_symmetric_positive_definite(void **state) {
  (void)state;
  /* the smallest levels for the dense factorization, n cells per side */
  struct {
    clmg_spd_problem_kind kind;
    int level;
    size_t rows;
    int dim, block_size;
  } cases[] = {
      {CLMG_SPD_ELASTICITY_P1, 4, 3 * 125, 3, 3},
      {CLMG_SPD_ELASTICITY_P2, 2, 3 * 125, 3, 3},
      {CLMG_SPD_DG_DIFFUSION, 6, 6 * 36, 2, 1},
      {CLMG_SPD_Q2_JUMP, 3, 343, 3, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double ratios[] = {0.3, 0.45};
    for (int r = 0; r < 2; r++) {
      clmg_spd_problem p = make(cases[c].kind, cases[c].level, set_poisson_ratio, &ratios[r]);
      check_structure(&p, cases[c].rows, cases[c].dim, cases[c].block_size);
      double pivot = cholesky_min_pivot(&p.a);
      assert_true(pivot > 1e-10);
      /* what the set is for: not M-matrices (q2 and DG have positive
       * couplings as well) */
      assert_true(has_positive_offdiagonal(&p.a));
      clmg_spd_problem_free(&p);
    }
  }
  /* the clamped face: x = 0 exactly, 3 DOFs per clamped node */
  clmg_spd_problem p = make(CLMG_SPD_ELASTICITY_P2, 2, NULL, NULL);
  size_t clamped = 0;
  for (size_t i = 0; i < p.num_nodes; i++) {
    int on_face = p.coordinates[3 * i] == 0.0;
    for (int c = 0; c < 3; c++)
      assert_int_equal(p.is_dirichlet[3 * i + (size_t)c], on_face);
    clamped += (size_t)on_face;
  }
  assert_int_equal(clamped, 25); /* (2 n + 1)^2 */
  clmg_spd_problem_free(&p);
  /* a larger case of each: symmetric, CG converges */
  clmg_spd_problem_kind kinds[] = {CLMG_SPD_ELASTICITY_P1, CLMG_SPD_ELASTICITY_P2,
                                   CLMG_SPD_DG_DIFFUSION, CLMG_SPD_Q2_JUMP};
  int levels[] = {8, 4, 20, 6};
  size_t rows[] = {3 * 729, 3 * 729, 6 * 400, 2197};
  for (int k = 0; k < 4; k++) {
    p = make(kinds[k], levels[k], NULL, NULL);
    check_structure(&p, rows[k], kinds[k] == CLMG_SPD_DG_DIFFUSION ? 2 : 3,
                    kinds[k] <= CLMG_SPD_ELASTICITY_P2 ? 3 : 1);
    double *x = checked_calloc(p.a.rows, sizeof *x);
    test_host_cg(&p.a, p.b, x, 1e-8);
    free(x);
    clmg_spd_problem_free(&p);
  }
}

/* ---- rigid-body modes ---- */

static void rigid_body_mode(int mode, const double *x, double *u) {
  u[0] = u[1] = u[2] = 0.0;
  if (mode < 3) {
    u[mode] = 1.0;
  } else if (mode == 3) {
    u[1] = -x[2];
    u[2] = x[1];
  } else if (mode == 4) {
    u[0] = x[2];
    u[2] = -x[0];
  } else {
    u[0] = -x[1];
    u[1] = x[0];
  }
}

static void set_boundary(clmg_spd_problem_options *o, void *data) {
  o->boundary = *(const clmg_spd_boundary *)data;
}

/* max |A r| / (max |A| max |r|) over the six modes r */
static double worst_mode_residual(const clmg_spd_problem *p) {
  size_t n = p->a.rows;
  double *r = checked_calloc(n, sizeof *r), *ar = checked_calloc(n, sizeof *ar);
  double a_max = 0.0, worst = 0.0;
  for (size_t k = 0; k < clmg_csr_nnz(&p->a); k++)
    a_max = fmax(a_max, fabs(p->a.val[k]));
  for (int mode = 0; mode < 6; mode++) {
    double r_max = 0.0, ar_max = 0.0;
    for (size_t i = 0; i < p->num_nodes; i++) {
      rigid_body_mode(mode, p->coordinates + 3 * i, r + 3 * i);
      for (int c = 0; c < 3; c++)
        r_max = fmax(r_max, fabs(r[3 * i + (size_t)c]));
    }
    clmg_csr_spmv_host(1.0, &p->a, r, 0.0, ar);
    for (size_t i = 0; i < n; i++)
      ar_max = fmax(ar_max, fabs(ar[i]));
    worst = fmax(worst, ar_max / (a_max * r_max));
  }
  free(r);
  free(ar);
  return worst;
}

static void test_rigid_body_modes(void **state) {
  (void)state;
  clmg_spd_boundary none = CLMG_SPD_BOUNDARY_NONE;
  for (int kind = CLMG_SPD_ELASTICITY_P1; kind <= CLMG_SPD_ELASTICITY_P2; kind++) {
    clmg_spd_problem p = make((clmg_spd_problem_kind)kind, 3, set_boundary, &none);
    for (size_t i = 0; i < p.a.rows; i++)
      assert_int_equal(p.is_dirichlet[i], 0);
    double residual = worst_mode_residual(&p);
    if (!(residual < 1e-13))
      fail_msg("%s: |A r| = %g relative for a rigid-body mode r", clmg_spd_problem_name(p.kind),
               residual);
    clmg_spd_problem_free(&p);
    /* clamped: no mode survives */
    p = make((clmg_spd_problem_kind)kind, 3, NULL, NULL);
    assert_true(worst_mode_residual(&p) > 1e-3);
    clmg_spd_problem_free(&p);
  }
}

/* ---- patch tests ---- */

typedef struct field_data {
  double lambda, mu; /* elasticity's Lame parameters */
} field_data;

static void linear_displacement(const double *x, double *u, void *data) {
  (void)data;
  u[0] = 0.1 + 0.3 * x[0] - 0.2 * x[1] + 0.5 * x[2];
  u[1] = -0.2 + 0.1 * x[0] + 0.4 * x[1] - 0.3 * x[2];
  u[2] = 0.3 - 0.6 * x[0] + 0.2 * x[1] + 0.7 * x[2];
}

static void zero_force(const double *x, double *f, void *data) {
  (void)x;
  (void)data;
  f[0] = f[1] = f[2] = 0.0;
}

/* u = (x^2 + y z, y z - x y, x y + z^2), whose body force is
 * f = -div sigma(u) = -(mu Laplace u + (lambda + mu) grad div u). */
static void quadratic_displacement(const double *x, double *u, void *data) {
  (void)data;
  u[0] = x[0] * x[0] + x[1] * x[2];
  u[1] = x[1] * x[2] - x[0] * x[1];
  u[2] = x[0] * x[1] + x[2] * x[2];
}

static void quadratic_force(const double *x, double *f, void *data) {
  (void)x;
  const field_data *d = data;
  /* Laplace u = (2, 0, 2); div u = 2x + (z - x) + 2z = x + 3z, grad = (1, 0, 3) */
  double laplace[3] = {2.0, 0.0, 2.0}, grad_div[3] = {1.0, 0.0, 3.0};
  for (int c = 0; c < 3; c++)
    f[c] = -(d->mu * laplace[c] + (d->lambda + d->mu) * grad_div[c]);
}

typedef struct patch {
  double nu;
  clmg_spd_field u, f;
  field_data fields;
} patch;

static void set_patch(clmg_spd_problem_options *o, void *data) {
  patch *p = data;
  o->poisson_ratio = p->nu;
  o->boundary = CLMG_SPD_BOUNDARY_ALL;
  o->boundary_value = p->u;
  o->source = p->f;
  o->data = &p->fields;
  o->distortion = 0.2;
}

/* The largest nodal error of the discrete solution against u. */
static double patch_error(clmg_spd_problem_kind kind, int level, patch *setup) {
  setup->fields.lambda = setup->nu / ((1.0 + setup->nu) * (1.0 - 2.0 * setup->nu));
  setup->fields.mu = 1.0 / (2.0 * (1.0 + setup->nu));
  clmg_spd_problem p = make(kind, level, set_patch, setup);
  double *x = checked_calloc(p.a.rows, sizeof *x);
  test_host_cg(&p.a, p.b, x, 1e-13);
  double worst = 0.0;
  for (size_t i = 0; i < p.num_nodes; i++) {
    double u[3];
    setup->u(p.coordinates + 3 * i, u, &setup->fields);
    for (int c = 0; c < 3; c++)
      worst = fmax(worst, fabs(x[3 * i + (size_t)c] - u[c]));
  }
  free(x);
  clmg_spd_problem_free(&p);
  return worst;
}

static void test_elasticity_patch(void **state) {
  (void)state;
  double ratios[] = {0.3, 0.45};
  for (int r = 0; r < 2; r++) {
    patch linear = {.nu = ratios[r], .u = linear_displacement, .f = zero_force};
    double e1 = patch_error(CLMG_SPD_ELASTICITY_P1, 4, &linear);
    double e2 = patch_error(CLMG_SPD_ELASTICITY_P2, 2, &linear);
    patch quadratic = {.nu = ratios[r], .u = quadratic_displacement, .f = quadratic_force};
    double e3 = patch_error(CLMG_SPD_ELASTICITY_P2, 3, &quadratic);
    double e4 = patch_error(CLMG_SPD_ELASTICITY_P1, 4, &quadratic);
    if (!(e1 < 1e-9 && e2 < 1e-9 && e3 < 1e-9))
      fail_msg("nu %g: patch errors P1 linear %g, P2 linear %g, P2 quadratic %g", ratios[r], e1, e2,
               e3);
    /* P1 cannot reproduce the quadratic field: the test can tell */
    assert_true(e4 > 1e-4);
  }
}

/* ---- SIPG ---- */

static void linear_scalar(const double *x, double *u, void *data) {
  (void)data;
  u[0] = 0.3 + 1.7 * x[0] - 0.9 * x[1];
}

static void zero_scalar(const double *x, double *f, void *data) {
  (void)x;
  (void)data;
  f[0] = 0.0;
}

static void sine_solution(const double *x, double *u, void *data) {
  (void)data;
  u[0] = sin(PI * x[0]) * sin(PI * x[1]);
}

static void sine_source(const double *x, double *f, void *data) {
  (void)data;
  f[0] = 2.0 * PI * PI * sin(PI * x[0]) * sin(PI * x[1]);
}

typedef struct scalar_setup {
  clmg_spd_field u, f, g;
  double jump, distortion;
} scalar_setup;

static void set_scalar(clmg_spd_problem_options *o, void *data) {
  const scalar_setup *s = data;
  o->source = s->f;
  o->boundary_value = s->g;
  o->jump = s->jump > 0.0 ? s->jump : o->jump;
  o->distortion = s->distortion;
}

/* The L2 error of the DG solution x against u (quadrature of degree 4 on
 * each triangle of nodal points coordinates[3 cell + k]). */
static double dg_l2_error(const clmg_spd_problem *p, const double *x, clmg_spd_field u) {
  /* Strang-Fix 6-point rule, degree 4 */
  const double a = 0.445948490915965, b = 0.091576213509771;
  const double wa = 0.223381589678011, wb = 0.109951743655322;
  const double points[6][3] = {{a, a, 1 - 2 * a}, {a, 1 - 2 * a, a}, {1 - 2 * a, a, a},
                               {b, b, 1 - 2 * b}, {b, 1 - 2 * b, b}, {1 - 2 * b, b, b}};
  double sum = 0.0;
  for (size_t cell = 0; cell < p->num_nodes / 3; cell++) {
    const double *v = p->coordinates + 6 * cell;
    double area = 0.5 * fabs((v[2] - v[0]) * (v[5] - v[1]) - (v[4] - v[0]) * (v[3] - v[1]));
    for (int q = 0; q < 6; q++) {
      double point[2] = {0.0, 0.0}, value = 0.0, exact;
      for (int k = 0; k < 3; k++) {
        point[0] += points[q][k] * v[2 * k];
        point[1] += points[q][k] * v[2 * k + 1];
        value += points[q][k] * x[3 * cell + (size_t)k];
      }
      u(point, &exact, NULL);
      sum += (q < 3 ? wa : wb) * area * (value - exact) * (value - exact);
    }
  }
  return sqrt(sum);
}

static void test_dg(void **state) {
  (void)state;
  /* a linear u is reproduced exactly (SIPG is consistent) */
  scalar_setup linear = {
      .u = linear_scalar, .f = zero_scalar, .g = linear_scalar, .distortion = 0.2};
  clmg_spd_problem p = make(CLMG_SPD_DG_DIFFUSION, 6, set_scalar, &linear);
  double *x = checked_calloc(p.a.rows, sizeof *x);
  test_host_cg(&p.a, p.b, x, 1e-13);
  for (size_t i = 0; i < p.num_nodes; i++) {
    double u;
    linear_scalar(p.coordinates + 2 * i, &u, NULL);
    if (!(fabs(x[i] - u) < 1e-9))
      fail_msg("DOF %zu: %.17g, expected %.17g", i, x[i], u);
  }
  free(x);
  clmg_spd_problem_free(&p);

  /* order 2 in L2 for a smooth solution */
  scalar_setup sine = {.u = sine_solution, .f = sine_source, .g = NULL, .distortion = 0.1};
  double errors[3];
  int levels[3] = {8, 16, 32};
  for (int l = 0; l < 3; l++) {
    p = make(CLMG_SPD_DG_DIFFUSION, levels[l], set_scalar, &sine);
    x = checked_calloc(p.a.rows, sizeof *x);
    test_host_cg(&p.a, p.b, x, 1e-11);
    errors[l] = dg_l2_error(&p, x, sine_solution);
    free(x);
    clmg_spd_problem_free(&p);
  }
  for (int l = 1; l < 3; l++) {
    double order = log2(errors[l - 1] / errors[l]);
    if (!(order > 1.8 && order < 2.3))
      fail_msg("L2 errors %g, %g, %g: order %g between levels %d and %d", errors[0], errors[1],
               errors[2], order, levels[l - 1], levels[l]);
  }
}

/* ---- q2-jump ---- */

static void test_q2_jump_one_is_poisson(void **state) {
  (void)state;
  clmg_spd_problem_options options;
  clmg_spd_problem_options_defaults(&options);
  options.kind = CLMG_SPD_Q2_JUMP;
  options.level = 3;
  options.jump = 1.0;
  options.distortion = 0.2;
  options.seed = 7;
  clmg_spd_problem p;
  clmg_error error;
  CHECK_OK(error, clmg_spd_problem_create(&options, &p, &error));

  clmg_mesh mesh;
  clmg_fe_space space;
  clmg_poisson_problem poisson;
  clmg_poisson_problem_unit_source(&poisson);
  CHECK_OK(error, clmg_mesh_box(3, 3, 0.2, 7, &mesh, &error));
  CHECK_OK(error, clmg_fe_space_create(&mesh, 2, &space, &error));
  clmg_csr a;
  double *b = checked_calloc(space.num_dofs, sizeof *b);
  CHECK_OK(error, clmg_fe_assemble_poisson(&space, &poisson, &a, b, NULL, &error));
  assert_int_equal(a.rows, p.a.rows);
  assert_int_equal(clmg_csr_nnz(&a), clmg_csr_nnz(&p.a));
  assert_memory_equal(a.row_ptr, p.a.row_ptr, (a.rows + 1) * sizeof *a.row_ptr);
  assert_memory_equal(a.col, p.a.col, clmg_csr_nnz(&a) * sizeof *a.col);
  for (size_t k = 0; k < clmg_csr_nnz(&a); k++)
    assert_true(a.val[k] == p.a.val[k]);
  for (size_t i = 0; i < a.rows; i++) {
    assert_true(b[i] == p.b[i]);
    for (int d = 0; d < 3; d++)
      assert_true(space.dof_coords[3 * i + (size_t)d] == p.coordinates[3 * i + (size_t)d]);
  }
  clmg_spd_problem_free(&p);

  /* with the jump the matrix differs: rows inside the octants scale by it */
  options.jump = 1e4;
  CHECK_OK(error, clmg_spd_problem_create(&options, &p, &error));
  /* entries of couplings inside one material: 1e4 times or equal to
   * Poisson's; those across the interfaces in between */
  size_t scaled = 0, same = 0;
  for (size_t k = 0; k < clmg_csr_nnz(&a); k++) {
    scaled += fabs(p.a.val[k] - 1e4 * a.val[k]) <= 1e-10 * fabs(p.a.val[k]);
    same += p.a.val[k] == a.val[k] && p.a.col[k] != 0;
  }
  if (!(scaled > clmg_csr_nnz(&a) / 10 && same > clmg_csr_nnz(&a) / 10))
    fail_msg("%zu entries scaled by the jump, %zu the same, of %zu", scaled, same,
             clmg_csr_nnz(&a));
  clmg_spd_problem_free(&p);
  free(b);
  clmg_csr_free(&a);
  clmg_fe_space_free(&space);
  clmg_mesh_free(&mesh);
}

/* The solution at the nodes of the level-2 mesh (no distortion: they are
 * nodes of every finer mesh, found by their coordinates). */
static void coarse_node_values(int level, const scalar_setup *setup, double *values,
                               size_t *count) {
  clmg_spd_problem p = make(CLMG_SPD_Q2_JUMP, level, set_scalar, (void *)setup);
  double *x = checked_calloc(p.a.rows, sizeof *x);
  test_host_cg(&p.a, p.b, x, 1e-11);
  *count = 0;
  for (size_t i = 0; i < p.num_nodes; i++) {
    const double *c = p.coordinates + 3 * i;
    int on_coarse = 1;
    for (int d = 0; d < 3; d++) {
      double scaled = c[d] * 4.0;
      on_coarse &= fabs(scaled - round(scaled)) < 1e-9;
    }
    if (on_coarse) {
      size_t key =
          (size_t)round(c[0] * 4) + 5 * (size_t)round(c[1] * 4) + 25 * (size_t)round(c[2] * 4);
      values[key] = x[i];
      (*count)++;
    }
  }
  free(x);
  clmg_spd_problem_free(&p);
}

static void test_q2_jump_converges(void **state) {
  (void)state;
  scalar_setup setup = {.jump = 1e4, .distortion = 0.0};
  clmg_spd_problem p = make(CLMG_SPD_Q2_JUMP, 2, set_scalar, &setup);
  check_structure(&p, 125, 3, 1);
  assert_true(cholesky_min_pivot(&p.a) > 0.0);
  clmg_spd_problem_free(&p);
  double values[3][125];
  int levels[3] = {2, 4, 8};
  for (int l = 0; l < 3; l++) {
    size_t count = 0;
    coarse_node_values(levels[l], &setup, values[l], &count);
    assert_int_equal(count, 125);
  }
  double d1 = 0.0, d2 = 0.0, scale = 0.0;
  for (int k = 0; k < 125; k++) {
    d1 = fmax(d1, fabs(values[1][k] - values[0][k]));
    d2 = fmax(d2, fabs(values[2][k] - values[1][k]));
    scale = fmax(scale, fabs(values[2][k]));
  }
  /* the differences between successive levels shrink: a Cauchy sequence */
  if (!(d2 < 0.5 * d1 && d1 < 0.5 * scale))
    fail_msg("max |u_4 - u_2| = %g, max |u_8 - u_4| = %g, max |u_8| = %g", d1, d2, scale);
}

/* ---- the coordinates' Matrix Market array ---- */

static void test_coordinates_file(void **state) {
  (void)state;
  clmg_spd_problem p = make(CLMG_SPD_DG_DIFFUSION, 2, NULL, NULL);
  char *dir = make_tmpdir("spd");
  char path[4096];
  snprintf(path, sizeof path, "%s/coords.mtx", dir);
  clmg_error error;
  CHECK_OK(error, clmg_write_matrix_market_array(path, p.coordinates, p.num_nodes, 2, &error));
  clmg_csr read;
  CHECK_OK(error, clmg_csr_read_matrix_market(path, &read, &error));
  assert_int_equal(read.rows, p.num_nodes);
  assert_int_equal(read.cols, 2);
  for (size_t i = 0; i < p.num_nodes; i++)
    for (int d = 0; d < 2; d++) {
      int64_t k = -1;
      for (int64_t q = read.row_ptr[i]; q < read.row_ptr[i + 1]; q++)
        if (read.col[q] == d)
          k = q;
      double value = k >= 0 ? read.val[k] : 0.0;
      assert_true(value == p.coordinates[2 * i + (size_t)d]);
    }
  clmg_csr_free(&read);
  remove_tree(dir);
  clmg_spd_problem_free(&p);
}

/* ---- bad options ---- */

static void check_refused(const clmg_spd_problem_options *options, const char *part) {
  clmg_spd_problem p;
  memset(&p, 0xab, sizeof p);
  clmg_error error;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_spd_problem_create(options, &p, &error));
  CHECK_CONTAINS(error.message, part);
  assert_null(p.b);
  assert_null(p.a.row_ptr);
  assert_null(p.coordinates);
}

static void test_bad_options(void **state) {
  (void)state;
  clmg_spd_problem_options o;
  clmg_spd_problem_options_defaults(&o);
  assert_int_equal(o.kind, CLMG_SPD_ELASTICITY_P1);
  assert_int_equal(o.level, 8);
  assert_true(o.poisson_ratio == 0.3 && o.jump == 1e4);

  clmg_error error;
  CHECK_STATUS(CLMG_ERROR_INVALID_ARGUMENT, clmg_spd_problem_create(&o, NULL, &error));
  CHECK_CONTAINS(error.message, "out is NULL");

  o.kind = (clmg_spd_problem_kind)4;
  check_refused(&o, "unknown SPD problem kind 4");
  o.kind = (clmg_spd_problem_kind)-1;
  check_refused(&o, "unknown SPD problem kind -1");
  int bad_levels[] = {0, -3, 161};
  for (int k = 0; k < 3; k++) {
    clmg_spd_problem_options_defaults(&o);
    o.kind = CLMG_SPD_ELASTICITY_P2;
    o.level = bad_levels[k];
    char expected[64];
    snprintf(expected, sizeof expected, "level %d is outside [1, 160] for elasticity-p2",
             bad_levels[k]);
    check_refused(&o, expected);
  }
  clmg_spd_problem_options_defaults(&o);
  o.kind = CLMG_SPD_DG_DIFFUSION;
  o.level = 4097;
  check_refused(&o, "outside [1, 4096] for dg-diffusion");
  double bad_ratios[] = {0.5, -0.1, NAN, 0.7};
  for (int k = 0; k < 4; k++) {
    clmg_spd_problem_options_defaults(&o);
    o.poisson_ratio = bad_ratios[k];
    check_refused(&o, "Poisson ratio");
    check_refused(&o, "outside [0, 0.5)");
  }
  double bad_jumps[] = {0.0, -1.0, NAN, INFINITY};
  for (int k = 0; k < 4; k++) {
    clmg_spd_problem_options_defaults(&o);
    o.kind = CLMG_SPD_Q2_JUMP;
    o.jump = bad_jumps[k];
    check_refused(&o, "coefficient jump");
  }
  clmg_spd_problem_options_defaults(&o);
  o.distortion = 0.3;
  check_refused(&o, "distortion 0.3 is outside [0, 0.3)");
  o.distortion = -0.01;
  check_refused(&o, "distortion -0.01");
  clmg_spd_problem_options_defaults(&o);
  o.boundary = (clmg_spd_boundary)3;
  check_refused(&o, "unknown boundary 3");
  o.boundary = CLMG_SPD_BOUNDARY_NONE;
  o.kind = CLMG_SPD_DG_DIFFUSION;
  check_refused(&o, "dg-diffusion needs a boundary condition");
  o.kind = CLMG_SPD_Q2_JUMP;
  check_refused(&o, "q2-jump needs a boundary condition");

  /* NULL options: the defaults (elasticity-p1, level 8) */
  clmg_spd_problem p;
  CHECK_OK(error, clmg_spd_problem_create(NULL, &p, &error));
  assert_int_equal(p.a.rows, 3 * 729);
  assert_int_equal(p.kind, CLMG_SPD_ELASTICITY_P1);
  clmg_spd_problem_free(&p);
  clmg_spd_problem_free(&p); /* zeroed: fine */
  clmg_spd_problem_free(NULL);
}

int main(void) {
  rng_seed(0x5bd0123456789abcu);
  test_apply_filters();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_symmetric_positive_definite),
      cmocka_unit_test(test_rigid_body_modes),
      cmocka_unit_test(test_elasticity_patch),
      cmocka_unit_test(test_dg),
      cmocka_unit_test(test_q2_jump_one_is_poisson),
      cmocka_unit_test(test_q2_jump_converges),
      cmocka_unit_test(test_coordinates_file),
      cmocka_unit_test(test_bad_options),
  };
  return cmocka_run_group_tests_name("spd_problems", tests, NULL, NULL);
}
