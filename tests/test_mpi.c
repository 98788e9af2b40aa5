/* clmg_mpi under mpirun (ctest runs it with 1, 2 and 4 ranks): distributed
 * products, reductions and Krylov solves against the serial library on the
 * same matrices, and failures of one rank reported on every rank.
 *
 * Not cmocka: a failed check must stop every rank (MPI_Abort), or the
 * others would wait in a collective for the one that left. Every rank
 * builds the same global matrices from the same seed and checks its share. */
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

static uint64_t random_state = 0x9e3779b97f4a7c15ull;
static double random_uniform(void) { /* xorshift64*, in [0, 1): the same sequence on every rank */
  random_state ^= random_state >> 12;
  random_state ^= random_state << 25;
  random_state ^= random_state >> 27;
  return (double)((random_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* A random nonsymmetric matrix whose rows reach far: most products cross
 * every partition. Diagonally dominant, so GMRES and BiCGStab converge. */
static void random_matrix(size_t n, clmg_csr *a) {
  size_t capacity = n * 10, count = 0;
  int32_t *rows = malloc(capacity * sizeof *rows), *cols = malloc(capacity * sizeof *cols);
  double *values = malloc(capacity * sizeof *values);
  double *row_sum = calloc(n, sizeof *row_sum);
  CHECK(rows && cols && values && row_sum, "no memory");
  for (size_t i = 0; i < n; ++i) {
    int entries = (int)(random_uniform() * 9);
    for (int k = 0; k < entries; ++k) {
      rows[count] = (int32_t)i;
      cols[count] = (int32_t)(random_uniform() * (double)n);
      values[count] = 2 * random_uniform() - 1;
      row_sum[i] += fabs(values[count++]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    rows[count] = cols[count] = (int32_t)i;
    values[count++] = row_sum[i] + 1 + random_uniform();
  }
  clmg_error error;
  CHECK(clmg_csr_from_triplets(n, n, count, rows, cols, values, a, &error) == CLMG_SUCCESS, "%s",
        error.message);
  free(rows);
  free(cols);
  free(values);
  free(row_sum);
}

/* The 5-point Laplacian on an m x m grid, its unknowns randomly renumbered
 * so that neighbours land on other ranks. */
static void renumbered_laplacian(size_t m, clmg_csr *a) {
  size_t n = m * m, count = 0;
  int32_t *rows = malloc(5 * n * sizeof *rows), *cols = malloc(5 * n * sizeof *cols);
  double *values = malloc(5 * n * sizeof *values);
  int32_t *permutation = malloc(n * sizeof *permutation);
  CHECK(rows && cols && values && permutation, "no memory");
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) {
      int32_t row = (int32_t)(i * m + j);
      const long di[] = {0, -1, 1, 0, 0}, dj[] = {0, 0, 0, -1, 1};
      for (int k = 0; k < 5; ++k) {
        long ii = (long)i + di[k], jj = (long)j + dj[k];
        if (ii < 0 || jj < 0 || ii >= (long)m || jj >= (long)m)
          continue;
        rows[count] = row;
        cols[count] = (int32_t)(ii * (long)m + jj);
        values[count++] = k == 0 ? 4.0 : -1.0;
      }
    }
  for (size_t i = 0; i < n; ++i)
    permutation[i] = (int32_t)i;
  for (size_t i = n - 1; i > 0; --i) {
    size_t j = (size_t)(random_uniform() * (double)(i + 1));
    int32_t t = permutation[i];
    permutation[i] = permutation[j];
    permutation[j] = t;
  }
  clmg_csr natural = {0};
  clmg_error error;
  CHECK(clmg_csr_from_triplets(n, n, count, rows, cols, values, &natural, &error) == CLMG_SUCCESS,
        "%s", error.message);
  CHECK(clmg_csr_permute(&natural, permutation, permutation, a, &error) == CLMG_SUCCESS, "%s",
        error.message);
  clmg_csr_free(&natural);
  free(rows);
  free(cols);
  free(values);
  free(permutation);
}

/* An uneven split: random shares, and with 3 or more ranks rank 1 owns no
 * rows (it must still take part in every reduction). */
static void uneven_rows(size_t n, uint64_t *first, uint64_t *count) {
  double *weights = malloc((size_t)world_size * sizeof *weights), total = 0;
  CHECK(weights, "no memory");
  for (int r = 0; r < world_size; ++r) {
    weights[r] = (world_size >= 3 && r == 1) ? 0 : 0.5 + random_uniform();
    total += weights[r];
  }
  uint64_t begin = 0;
  for (int r = 0; r < world_size; ++r) {
    uint64_t end = r == world_size - 1 ? n : begin + (uint64_t)(weights[r] / total * (double)n);
    if (r == world_rank) {
      *first = begin;
      *count = end - begin;
    }
    begin = end;
  }
  free(weights);
}

/* Rows [first, first + count) of a, with global columns. */
static void slice_rows(const clmg_csr *a, uint64_t first, uint64_t count, clmg_csr *out) {
  clmg_error error;
  CHECK(clmg_csr_row_block(a, first, count, out, &error) == CLMG_SUCCESS, "%s", error.message);
}

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* CIRCLE's coarse mesh and problem (Geveler et al. 2011). */
static void circle_problem(clmg_mesh *mesh, clmg_poisson_problem *problem) {
  clmg_error error;
  CHECK(clmg_mesh_circle(mesh, &error) == CLMG_SUCCESS, "%s", error.message);
  clmg_poisson_problem_circle(problem);
}

static double *random_vector(size_t n) {
  double *v = malloc((n + 1) * sizeof *v);
  CHECK(v, "no memory");
  for (size_t i = 0; i < n; ++i)
    v[i] = 2 * random_uniform() - 1;
  return v;
}

static double max_relative_difference(const double *a, const double *b, size_t n) {
  double largest = 0, difference = 0;
  for (size_t i = 0; i < n; ++i) {
    largest = fmax(largest, fabs(b[i]));
    difference = fmax(difference, fabs(a[i] - b[i]));
  }
  return largest > 0 ? difference / largest : difference;
}

static clmg_vector *local_vector(clmg_context *context, clmg_dtype type, size_t n) {
  clmg_vector *v = NULL;
  clmg_status status = clmg_vector_create(context, type, n, &v);
  CHECK_OK(status, context);
  return v;
}

/* The distributed product, defect and reductions equal the host's. */
static void test_products_and_reductions(clmg_mpi *mpi, clmg_dtype precision) {
  clmg_context *context = clmg_mpi_context(mpi);
  const size_t n = 301;
  const double tolerance = precision == CLMG_DOUBLE ? 1e-12 : 2e-5;
  clmg_csr a = {0}, mine = {0};
  random_matrix(n, &a);
  uint64_t first = 0, count = 0;
  uneven_rows(n, &first, &count);
  slice_rows(&a, first, count, &mine);
  clmg_matrix_options options;
  clmg_matrix_options_defaults(&options);
  options.precision = precision;
  clmg_mpi_matrix *matrix = NULL;
  clmg_status status = clmg_mpi_matrix_create(mpi, first, &mine, &options, &matrix);
  CHECK_OK(status, context);
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(matrix, &info);
  CHECK(info.global_rows == n && info.local_rows == count && info.first_row == first,
        "info: %llu rows, %zu local from %llu", (unsigned long long)info.global_rows,
        info.local_rows, (unsigned long long)info.first_row);
  CHECK(info.global_nonzeros == clmg_csr_nnz(&a), "nonzeros %llu of %zu",
        (unsigned long long)info.global_nonzeros, clmg_csr_nnz(&a));
  unsigned long long ghosts = info.ghosts, all_ghosts = 0, sends = info.sends, all_sends = 0;
  MPI_Allreduce(&ghosts, &all_ghosts, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&sends, &all_sends, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all_ghosts == all_sends, "%llu ghosts received, %llu sent", all_ghosts, all_sends);
  CHECK(world_size == 1 ? all_ghosts == 0 : all_ghosts > n / 4,
        "%llu ghosts: the partition should cut many rows", all_ghosts);
  /* clmg_mpi_ghost_columns: the same count, sorted, each once, outside this
   * rank's block, and every off-block column of its rows among them */
  int32_t *ghost_columns = NULL;
  size_t ghost_count = 0;
  CHECK(clmg_mpi_ghost_columns(&mine, first, count, &ghost_columns, &ghost_count) == CLMG_SUCCESS,
        "clmg_mpi_ghost_columns failed");
  CHECK(ghost_count == info.ghosts, "%zu ghost columns, the matrix receives %zu", ghost_count,
        info.ghosts);
  for (size_t k = 0; k < ghost_count; ++k)
    CHECK(((uint64_t)ghost_columns[k] < first || (uint64_t)ghost_columns[k] >= first + count) &&
              (k == 0 || ghost_columns[k] > ghost_columns[k - 1]),
          "ghost column %zu: %d", k, (int)ghost_columns[k]);
  for (size_t e = 0; e < clmg_csr_nnz(&mine); ++e) {
    int32_t column = mine.col[e];
    int inside = (uint64_t)column >= first && (uint64_t)column < first + count;
    CHECK(inside || bsearch(&column, ghost_columns, ghost_count, sizeof column, compare_int32),
          "column %d of this rank's rows is not among its ghost columns", (int)column);
  }
  free(ghost_columns);

  double *x = random_vector(n), *y = random_vector(n), *b = random_vector(n);
  double *expected = malloc(n * sizeof *expected), *got = malloc(n * sizeof *got);
  CHECK(expected && got, "no memory");
  clmg_vector *local_x = local_vector(context, precision, count);
  clmg_vector *local_y = local_vector(context, precision, count);
  clmg_vector *local_b = local_vector(context, precision, count);
  const int root = world_size - 1; /* not always rank 0 */
  CHECK_OK(clmg_mpi_vector_scatter(matrix, root, x, local_x), context);
  CHECK_OK(clmg_mpi_vector_scatter(matrix, root, y, local_y), context);
  CHECK_OK(clmg_mpi_vector_scatter(matrix, 0, b, local_b), context);
  clmg_operator op;
  CHECK_OK(clmg_mpi_matrix_operator(matrix, 0, &op), context);
  CHECK(clmg_mpi_operator_matrix(&op) == matrix && !clmg_mpi_operator_matrix(NULL),
        "the operator's distributed matrix");

  /* y = 0.7 A x - 1.3 y, twice in a row (the second reuses the halo buffers) */
  memcpy(expected, y, n * sizeof *y);
  for (int repeat = 0; repeat < 2; ++repeat) {
    clmg_csr_spmv_host(0.7, &a, x, -1.3, expected);
    CHECK_OK(clmg_operator_apply(&op, 0.7, local_x, -1.3, local_y), context);
  }
  CHECK_OK(clmg_mpi_vector_gather(matrix, 0, local_y, got), context);
  if (world_rank == 0) {
    double difference = max_relative_difference(got, expected, n);
    CHECK(difference <= tolerance, "apply: relative difference %.3e", difference);
  }
  /* r = b - A x */
  memcpy(expected, b, n * sizeof *b);
  clmg_csr_spmv_host(-1.0, &a, x, 1.0, expected);
  CHECK_OK(clmg_operator_defect(&op, local_b, local_x, local_y), context);
  CHECK_OK(clmg_mpi_vector_gather(matrix, root, local_y, got), context);
  if (world_rank == root) {
    double difference = max_relative_difference(got, expected, n);
    CHECK(difference <= tolerance, "defect: relative difference %.3e", difference);
  }

  /* dot, nrm2 and the fused reductions are global */
  double host_xb = 0, host_xx = 0, host_bb = 0;
  for (size_t i = 0; i < n; ++i) {
    host_xb += x[i] * b[i];
    host_xx += x[i] * x[i];
    host_bb += b[i] * b[i];
  }
  double dot = 0, norm = 0, xy = 0, xx = 0, ru = 0, wu = 0, rr = 0;
  CHECK_OK(clmg_dot(local_x, local_b, &dot), context);
  CHECK_OK(clmg_nrm2(local_x, &norm), context);
  CHECK_OK(clmg_dot2(local_x, local_b, &xy, &xx), context);
  CHECK_OK(clmg_dot3(local_x, local_b, local_b, &ru, &wu, &rr), context);
  const double checks[][2] = {{dot, host_xb}, {norm, sqrt(host_xx)}, {xy, host_xb}, {xx, host_xx},
                              {ru, host_xb},  {wu, host_bb},         {rr, host_xx}};
  for (size_t k = 0; k < sizeof checks / sizeof checks[0]; ++k)
    CHECK(fabs(checks[k][0] - checks[k][1]) <= tolerance * 10 * fmax(1, fabs(checks[k][1])),
          "reduction %zu: %.17g, the host %.17g", k, checks[k][0], checks[k][1]);
  /* a norm whose squares underflow takes the scaled path on every rank */
  CHECK_OK(clmg_scal(precision == CLMG_DOUBLE ? 1e-170 : 1e-25, local_x), context);
  CHECK_OK(clmg_nrm2(local_x, &norm), context);
  double scaled_expected = sqrt(host_xx) * (precision == CLMG_DOUBLE ? 1e-170 : 1e-25);
  CHECK(fabs(norm - scaled_expected) <= 1e-4 * scaled_expected, "tiny norm %.6g, expected %.6g",
        norm, scaled_expected);

  clmg_operator_destroy(&op);
  clmg_vector_destroy(local_x);
  clmg_vector_destroy(local_y);
  clmg_vector_destroy(local_b);
  clmg_mpi_matrix_destroy(matrix);
  clmg_csr_free(&a);
  clmg_csr_free(&mine);
  free(x);
  free(y);
  free(b);
  free(expected);
  free(got);
}

typedef struct solve_case {
  clmg_krylov_method method;
  int jacobi;
  const char *name;
} solve_case;

/* Solves on one rank's context without MPI: the reference. */
static int serial_solve(clmg_context *context, const clmg_csr *a, const double *b,
                        const solve_case *c, double *x) {
  clmg_matrix *matrix = NULL;
  CHECK_OK(clmg_matrix_create(context, a, NULL, &matrix), context);
  clmg_operator op;
  CHECK_OK(clmg_operator_from_matrix(matrix, 1, &op), context);
  CHECK(!clmg_mpi_operator_matrix(&op), "a local matrix's operator is not a distributed matrix");
  clmg_vector *vb = local_vector(context, CLMG_DOUBLE, a->rows);
  clmg_vector *vx = local_vector(context, CLMG_DOUBLE, a->rows);
  CHECK_OK(clmg_vector_upload_doubles(vb, b), context);
  clmg_preconditioner jacobi = {0};
  if (c->jacobi)
    CHECK_OK(clmg_preconditioner_jacobi(matrix, &jacobi), context);
  clmg_krylov_result result;
  clmg_status status =
      clmg_krylov_solve(c->method, &op, vb, vx, c->jacobi ? &jacobi : NULL, NULL, &result);
  CHECK_OK(status, context);
  CHECK_OK(clmg_vector_download_doubles(vx, x), context);
  clmg_preconditioner_destroy(&jacobi);
  clmg_vector_destroy(vb);
  clmg_vector_destroy(vx);
  clmg_operator_destroy(&op);
  clmg_krylov_result_free(&result);
  return result.iterations;
}

/* Distributed Krylov solves: the serial iteration count (+-1), the
 * tolerance met by the residual of the gathered solution, and the serial
 * solution within what the tolerance allows. */
static void test_krylov(clmg_context *context) {
  clmg_csr laplacian = {0}, nonsymmetric = {0};
  renumbered_laplacian(20, &laplacian);
  random_matrix(257, &nonsymmetric);
  const solve_case cases[] = {{CLMG_KRYLOV_CG, 0, "cg"},
                              {CLMG_KRYLOV_CG, 1, "cg + jacobi"},
                              {CLMG_KRYLOV_GMRES, 1, "gmres + jacobi"},
                              {CLMG_KRYLOV_BICGSTAB, 0, "bicgstab"}};
  const int count = (int)(sizeof cases / sizeof cases[0]);
  for (int k = 0; k < count; ++k) {
    const clmg_csr *a = cases[k].method == CLMG_KRYLOV_CG ? &laplacian : &nonsymmetric;
    const size_t n = a->rows;
    double *b = random_vector(n), *x_serial = malloc(n * sizeof(double));
    double *x = malloc(n * sizeof(double)), *residual = malloc(n * sizeof(double));
    CHECK(x_serial && x && residual, "no memory");
    int serial_iterations = serial_solve(context, a, b, &cases[k], x_serial);

    clmg_mpi *mpi = NULL;
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
    uint64_t first = 0, rows = 0;
    uneven_rows(n, &first, &rows);
    clmg_csr mine = {0};
    slice_rows(a, first, rows, &mine);
    clmg_mpi_matrix *matrix = NULL;
    CHECK_OK(clmg_mpi_matrix_create(mpi, first, &mine, NULL, &matrix), context);
    clmg_operator op;
    CHECK_OK(clmg_mpi_matrix_operator(matrix, 0, &op), context);
    clmg_vector *vb = local_vector(context, CLMG_DOUBLE, rows);
    clmg_vector *vx = local_vector(context, CLMG_DOUBLE, rows);
    CHECK_OK(clmg_mpi_vector_scatter(matrix, 0, b, vb), context);
    clmg_preconditioner jacobi = {0};
    if (cases[k].jacobi)
      CHECK_OK(clmg_mpi_preconditioner_jacobi(matrix, &jacobi), context);
    clmg_krylov_result result;
    clmg_status status = clmg_krylov_solve(cases[k].method, &op, vb, vx,
                                           cases[k].jacobi ? &jacobi : NULL, NULL, &result);
    CHECK_OK(status, context);
    CHECK(result.converged, "%s did not converge", cases[k].name);
    CHECK(abs(result.iterations - serial_iterations) <= 1, "%s: %d iterations, serial %d",
          cases[k].name, result.iterations, serial_iterations);
    CHECK_OK(clmg_mpi_vector_gather(matrix, 0, vx, x), context);
    if (world_rank == 0) {
      memcpy(residual, b, n * sizeof *b);
      clmg_csr_spmv_host(-1.0, a, x, 1.0, residual);
      double r2 = 0, b2 = 0, d2 = 0, s2 = 0;
      for (size_t i = 0; i < n; ++i) {
        r2 += residual[i] * residual[i];
        b2 += b[i] * b[i];
        d2 += (x[i] - x_serial[i]) * (x[i] - x_serial[i]);
        s2 += x_serial[i] * x_serial[i];
      }
      CHECK(sqrt(r2 / b2) <= 1.001e-8, "%s: relative residual %.3e of the gathered x",
            cases[k].name, sqrt(r2 / b2));
      CHECK(sqrt(d2 / s2) <= 1e-5, "%s: x differs from the serial x by %.3e", cases[k].name,
            sqrt(d2 / s2));
    }
    clmg_krylov_result_free(&result);
    clmg_preconditioner_destroy(&jacobi);
    clmg_vector_destroy(vb);
    clmg_vector_destroy(vx);
    clmg_operator_destroy(&op);
    clmg_mpi_matrix_destroy(matrix);
    clmg_mpi_destroy(mpi);
    clmg_csr_free(&mine);
    free(b);
    free(x_serial);
    free(x);
    free(residual);
  }
  clmg_csr_free(&laplacian);
  clmg_csr_free(&nonsymmetric);
}

/* An options database as a distributed solver (clmg_mpi_solver_create):
 * CG with Jacobi in the serial solver's iterations (+-1) to the tolerance;
 * krylov=auto for a nonsymmetric matrix is GMRES and converges; what a
 * distributed solve cannot honour is refused on every rank, naming it; a
 * zero on one rank's diagonal fails every rank, not only that one. */
static clmg_options *options_of(const char *text) {
  clmg_options *db = NULL;
  clmg_error error = {{0}};
  CHECK(clmg_options_create(&db, &error) == CLMG_SUCCESS &&
            clmg_options_parse(db, text, &error) == CLMG_SUCCESS,
        "%s: %s", text, error.message);
  return db;
}

static void test_options_solver(clmg_context *context) {
  clmg_csr laplacian = {0}, nonsymmetric = {0};
  renumbered_laplacian(20, &laplacian);
  random_matrix(257, &nonsymmetric);
  for (int k = 0; k < 2; ++k) {
    const clmg_csr *a = k == 0 ? &laplacian : &nonsymmetric;
    const size_t n = a->rows;
    double *b = random_vector(n), *x = malloc(n * sizeof(double));
    double *residual = malloc(n * sizeof(double));
    CHECK(x && residual, "no memory");
    solve_case reference = {CLMG_KRYLOV_CG, 1, "cg + jacobi"};
    /* the reference before the context is bound: its reductions local */
    int serial_iterations = k == 0 ? serial_solve(context, a, b, &reference, x) : 0;
    clmg_mpi *mpi = NULL;
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
    uint64_t first = 0, rows = 0;
    uneven_rows(n, &first, &rows);
    clmg_csr mine = {0};
    slice_rows(a, first, rows, &mine);
    clmg_mpi_matrix *matrix = NULL;
    CHECK_OK(clmg_mpi_matrix_create(mpi, first, &mine, NULL, &matrix), context);
    clmg_options *db = options_of(k == 0 ? "krylov=cg precond=jacobi tol=1e-8" : "tol=1e-8");
    clmg_solver *solver = NULL;
    /* symmetric 0: krylov=auto is GMRES */
    CHECK_OK(clmg_mpi_solver_create(mpi, matrix, NULL, 0, db, &solver), context);
    CHECK(clmg_solver_method(solver) == (k == 0 ? CLMG_KRYLOV_CG : CLMG_KRYLOV_GMRES), "method %s",
          clmg_krylov_method_name(clmg_solver_method(solver)));
    clmg_vector *vb = local_vector(context, CLMG_DOUBLE, rows);
    clmg_vector *vx = local_vector(context, CLMG_DOUBLE, rows);
    CHECK_OK(clmg_mpi_vector_scatter(matrix, 0, b, vb), context);
    CHECK_OK(clmg_vector_fill(vx, 0.0), context);
    clmg_krylov_result result;
    CHECK_OK(clmg_solver_solve(solver, vb, vx, &result), context);
    CHECK(k != 0 || abs(result.iterations - serial_iterations) <= 1,
          "cg + jacobi from options: %d iterations, serial %d", result.iterations,
          serial_iterations);
    CHECK_OK(clmg_mpi_vector_gather(matrix, 0, vx, x), context);
    if (world_rank == 0) {
      memcpy(residual, b, n * sizeof *b);
      clmg_csr_spmv_host(-1.0, a, x, 1.0, residual);
      double r2 = 0, b2 = 0;
      for (size_t i = 0; i < n; ++i) {
        r2 += residual[i] * residual[i];
        b2 += b[i] * b[i];
      }
      CHECK(sqrt(r2 / b2) <= 1.001e-8, "matrix %d from options: relative residual %.3e", k,
            sqrt(r2 / b2));
    }
    clmg_krylov_result_free(&result);
    clmg_solver_destroy(solver);
    clmg_options_destroy(db);

    /* refused on every rank, naming the key */
    const char *refused[][2] = {
        {"precond=amg", "precond=amg"},
        {"precond=multigrid", "precond=multigrid"},
        {"precision=mixed", "precision=mixed"},
        {"amg.max_levels=4 amg.strength=0.1", "amg.strength, amg.max_levels"}};
    for (size_t r = 0; k == 0 && r < sizeof refused / sizeof refused[0]; ++r) {
      db = options_of(refused[r][0]);
      clmg_error error = {{0}};
      CHECK(clmg_mpi_solver_check_options(db, 0, &error) == CLMG_ERROR_INVALID_ARGUMENT &&
                strstr(error.message, refused[r][1]),
            "%s: %s", refused[r][0], error.message);
      solver = NULL;
      clmg_status status = clmg_mpi_solver_create(mpi, matrix, NULL, 1, db, &solver);
      CHECK(status == CLMG_ERROR_INVALID_ARGUMENT && !solver &&
                strstr(clmg_context_message(context), refused[r][1]),
            "%s: %s: %s", refused[r][0], clmg_status_string(status), clmg_context_message(context));
      clmg_options_destroy(db);
    }
    clmg_vector_destroy(vb);
    clmg_vector_destroy(vx);
    clmg_mpi_matrix_destroy(matrix);
    clmg_mpi_destroy(mpi);
    clmg_csr_free(&mine);
    free(b);
    free(x);
    free(residual);
  }

  /* a zero on the last rank's diagonal: Jacobi fails there, and every rank
   * returns its message */
  clmg_csr zeroed = {0};
  clmg_error error;
  CHECK(clmg_csr_copy(&laplacian, &zeroed, &error) == CLMG_SUCCESS, "%s", error.message);
  const size_t last = zeroed.rows - 1;
  for (int64_t p = zeroed.row_ptr[last]; p < zeroed.row_ptr[last + 1]; ++p)
    if ((size_t)zeroed.col[p] == last)
      zeroed.val[p] = 0;
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  uint64_t first = 0, rows = 0;
  clmg_mpi_even_rows(mpi, zeroed.rows, &first, &rows);
  clmg_csr mine = {0};
  slice_rows(&zeroed, first, rows, &mine);
  clmg_mpi_matrix *matrix = NULL;
  CHECK_OK(clmg_mpi_matrix_create(mpi, first, &mine, NULL, &matrix), context);
  clmg_options *db = options_of("krylov=cg precond=jacobi");
  clmg_solver *solver = NULL;
  clmg_status status = clmg_mpi_solver_create(mpi, matrix, NULL, 1, db, &solver);
  char expected[32];
  snprintf(expected, sizeof expected, "rank %d: ", world_size - 1);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT && !solver &&
            strstr(clmg_context_message(context), expected) &&
            strstr(clmg_context_message(context), "zero diagonal"),
        "a zero diagonal on rank %d: %s: %s", world_size - 1, clmg_status_string(status),
        clmg_context_message(context));
  clmg_options_destroy(db);
  clmg_mpi_matrix_destroy(matrix);
  clmg_csr_free(&mine);
  clmg_csr_free(&zeroed);
  clmg_mpi_destroy(mpi);
  clmg_csr_free(&laplacian);
  clmg_csr_free(&nonsymmetric);
}

/* Geometric multigrid on CIRCLE (Q1 and Q2): the serial hierarchy's levels
 * split evenly over the ranks (every level cut: P and R exchange halos
 * too) solve in the serial number of cycles (+-1), to the tolerance, with
 * the serial solution. Also as a CG preconditioner. */
static void test_multigrid(clmg_context *context) {
  for (int degree = 1; degree <= 2; ++degree) {
    clmg_mesh circle;
    clmg_error error;
    clmg_poisson_problem problem;
    circle_problem(&circle, &problem);
    clmg_fe_hierarchy h;
    const int levels = degree == 1 ? 4 : 3;
    CHECK(clmg_fe_poisson_hierarchy(&circle, levels, degree, &problem, CLMG_NUMBERING_2LV, 1, &h,
                                    &error) == CLMG_SUCCESS,
          "%s", error.message);
    const size_t n = h.a[levels - 1].rows;
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    clmg_krylov_options solve_options;
    clmg_krylov_options_defaults(&solve_options);
    solve_options.relative_tolerance = 1e-8;

    /* serial */
    clmg_multigrid *serial = NULL;
    CHECK_OK(clmg_multigrid_create(context, levels, h.a, h.p, h.r, &options, &serial), context);
    clmg_vector *b = local_vector(context, CLMG_DOUBLE, n),
                *x = local_vector(context, CLMG_DOUBLE, n);
    CHECK_OK(clmg_vector_upload_doubles(b, h.b), context);
    CHECK_OK(clmg_vector_upload_doubles(x, h.x0), context);
    clmg_krylov_result serial_result;
    CHECK_OK(clmg_multigrid_solve(serial, b, x, &solve_options, &serial_result), context);
    double *x_serial = malloc(n * sizeof *x_serial), *x_mpi = malloc(n * sizeof *x_mpi);
    CHECK(x_serial && x_mpi, "no memory");
    CHECK_OK(clmg_vector_download_doubles(x, x_serial), context);
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_multigrid_destroy(serial);

    /* distributed */
    clmg_mpi *mpi = NULL;
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
    clmg_mpi_level_rows rows[4];
    memset(rows, 0, sizeof rows);
    uint64_t first[4], count[4];
    for (int l = 0; l < levels; ++l) {
      clmg_mpi_even_rows(mpi, h.a[l].rows, &first[l], &count[l]);
      rows[l].first_row = first[l];
      slice_rows(&h.a[l], first[l], count[l], &rows[l].a);
      if (l > 0) {
        slice_rows(&h.p[l], first[l], count[l], &rows[l].p);
        slice_rows(&h.r[l], first[l - 1], count[l - 1], &rows[l].r);
      }
    }
    clmg_multigrid *multigrid = NULL;
    CHECK_OK(clmg_mpi_multigrid_create(mpi, levels, rows, &options, &multigrid), context);
    CHECK(strcmp(clmg_multigrid_coarse_solver(multigrid), "direct (gathered)") == 0,
          "coarse solver %s", clmg_multigrid_coarse_solver(multigrid));
    const size_t mine = count[levels - 1];
    b = local_vector(context, CLMG_DOUBLE, mine);
    x = local_vector(context, CLMG_DOUBLE, mine);
    /* the hierarchy's finest matrix, borrowed: scatter and gather of the
     * finest level's vectors, the solver's operator */
    clmg_mpi_matrix *finest =
        clmg_mpi_operator_matrix(clmg_multigrid_operator(multigrid, levels - 1));
    CHECK(finest, "the finest level's operator is not a distributed matrix");
    clmg_mpi_matrix_info finest_info;
    clmg_mpi_matrix_get_info(finest, &finest_info);
    CHECK(finest_info.global_rows == n && finest_info.local_rows == mine,
          "the finest matrix has %llu rows, %zu here (expected %zu, %zu)",
          (unsigned long long)finest_info.global_rows, finest_info.local_rows, n, mine);
    CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.b, b), context);
    CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.x0, x), context);
    clmg_krylov_result result;
    CHECK_OK(clmg_multigrid_solve(multigrid, b, x, &solve_options, &result), context);
    CHECK(result.converged && abs(result.iterations - serial_result.iterations) <= 1,
          "Q%d multigrid: %d cycles, serial %d", degree, result.iterations,
          serial_result.iterations);
    CHECK_OK(clmg_mpi_vector_gather(finest, 0, x, x_mpi), context);
    if (world_rank == 0) {
      double *residual = malloc(n * sizeof *residual), r2 = 0, b2 = 0;
      CHECK(residual, "no memory");
      memcpy(residual, h.b, n * sizeof *residual);
      clmg_csr_spmv_host(-1.0, &h.a[levels - 1], x_mpi, 1.0, residual);
      for (size_t i = 0; i < n; ++i) {
        r2 += residual[i] * residual[i];
        b2 += h.b[i] * h.b[i];
      }
      CHECK(sqrt(r2 / b2) <= 1.001e-8, "Q%d multigrid: relative residual %.3e", degree,
            sqrt(r2 / b2));
      double difference = max_relative_difference(x_mpi, x_serial, n);
      CHECK(difference <= 1e-6, "Q%d multigrid: x differs from the serial x by %.3e", degree,
            difference);
      free(residual);
    }
    /* as a CG preconditioner: one cycle per iteration */
    clmg_preconditioner cycle;
    CHECK_OK(clmg_multigrid_preconditioner(multigrid, &cycle), context);
    CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.x0, x), context);
    clmg_krylov_result pcg;
    CHECK_OK(clmg_krylov_solve(CLMG_KRYLOV_CG, clmg_multigrid_operator(multigrid, levels - 1), b, x,
                               &cycle, &solve_options, &pcg),
             context);
    CHECK(pcg.converged && pcg.iterations <= result.iterations, "Q%d MG-CG: %d iterations", degree,
          pcg.iterations);
    /* the same composed from options (precond=multigrid, the default with a
     * hierarchy): as many iterations, and cycles alone with krylov=none */
    const char *texts[] = {"krylov=cg tol=1e-8", "krylov=none tol=1e-8"};
    for (int t = 0; t < 2; ++t) {
      clmg_options *db = NULL;
      CHECK(clmg_options_create(&db, NULL) == CLMG_SUCCESS &&
                clmg_options_parse(db, texts[t], NULL) == CLMG_SUCCESS,
            "options");
      clmg_solver *solver = NULL;
      CHECK_OK(clmg_mpi_solver_create(mpi, finest, multigrid, 1, db, &solver), context);
      CHECK(strcmp(clmg_options_get(clmg_solver_options(solver), "precond"), "multigrid") == 0,
            "precond %s", clmg_options_get(clmg_solver_options(solver), "precond"));
      CHECK_OK(clmg_mpi_vector_scatter(finest, 0, h.x0, x), context);
      clmg_krylov_result composed;
      CHECK_OK(clmg_solver_solve(solver, b, x, &composed), context);
      int expected = t == 0 ? pcg.iterations : result.iterations;
      CHECK(composed.converged && composed.iterations == expected,
            "Q%d %s from options: %d iterations, by hand %d", degree, texts[t], composed.iterations,
            expected);
      clmg_krylov_result_free(&composed);
      clmg_solver_destroy(solver);
      clmg_options_destroy(db);
    }

    clmg_preconditioner_destroy(&cycle);
    clmg_krylov_result_free(&pcg);
    clmg_krylov_result_free(&result);
    clmg_krylov_result_free(&serial_result);
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_multigrid_destroy(multigrid);
    clmg_mpi_destroy(mpi);
    for (int l = 0; l < levels; ++l) {
      clmg_csr_free(&rows[l].a);
      clmg_csr_free(&rows[l].p);
      clmg_csr_free(&rows[l].r);
    }
    free(x_serial);
    free(x_mpi);
    clmg_fe_hierarchy_free(&h);
    clmg_mesh_free(&circle);
  }
}

/* ---- the hierarchy built in parts (clmg_mpi_poisson_levels_create) ---- */

typedef struct point_key {
  long long q[3];
  size_t index;
} point_key;

static int compare_points(const void *a, const void *b) {
  const point_key *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x->q[k] != y->q[k])
      return x->q[k] < y->q[k] ? -1 : 1;
  return 0;
}

/* serial_of[i]: the row of the whole hierarchy's finest level at the point
 * of distributed row i (points compared on a 1e-9 grid). */
static size_t *match_points(const double *dist, const double *serial, size_t n, int dim) {
  point_key *a = calloc(n + 1, sizeof *a), *b = calloc(n + 1, sizeof *b);
  size_t *serial_of = malloc((n + 1) * sizeof *serial_of);
  CHECK(a && b && serial_of, "no memory");
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < dim; ++k) {
      a[i].q[k] = llround(dist[i * (size_t)dim + (size_t)k] * 1e9);
      b[i].q[k] = llround(serial[i * (size_t)dim + (size_t)k] * 1e9);
    }
    a[i].index = b[i].index = i;
  }
  qsort(a, n, sizeof *a, compare_points);
  qsort(b, n, sizeof *b, compare_points);
  for (size_t i = 0; i < n; ++i) {
    CHECK(compare_points(&a[i], &b[i]) == 0, "distributed row %zu has no serial DOF at its point",
          a[i].index);
    serial_of[a[i].index] = b[i].index;
  }
  free(a);
  free(b);
  return serial_of;
}

/* Every rank's rows of a local array (count values per row) on rank 0. */
static double *gather_rows(const double *mine, size_t rows, size_t per_row, size_t total) {
  int *counts = calloc((size_t)world_size, sizeof *counts);
  int *starts = calloc((size_t)world_size, sizeof *starts);
  double *all = world_rank == 0 ? malloc((total * per_row + 1) * sizeof *all) : NULL;
  CHECK(counts && starts && (world_rank != 0 || all), "no memory");
  int my_count = (int)(rows * per_row);
  MPI_Gather(&my_count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < world_size; ++r)
    starts[r] = starts[r - 1] + counts[r - 1];
  MPI_Gatherv(mine, my_count, MPI_DOUBLE, all, counts, starts, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  free(counts);
  free(starts);
  return all;
}

typedef struct partition_case {
  const char *name;
  int dim, degree, finest;
  size_t cells_per_process;
  int device_setup; /* the pieces built on the device (pocl has fp64) or on the host */
} partition_case;

/* One case: the distributed rows against the whole hierarchy built by one
 * process (finest A and b entry by entry, one V-cycle on a random vector,
 * which reaches A, P and R of every level), then a solve. */
static void check_partitioned_case(clmg_context *context, const partition_case *c) {
  clmg_mesh coarse;
  clmg_error error;
  clmg_poisson_problem problem;
  if (c->dim == 2) {
    circle_problem(&coarse, &problem);
  } else {
    CHECK(clmg_mesh_box(3, 4, 0.1, 7, &coarse, &error) == CLMG_SUCCESS, "%s", error.message);
    clmg_poisson_problem_unit_source(&problem);
  }
  clmg_multigrid_options mg;
  clmg_multigrid_options_defaults(&mg);
  clmg_krylov_options solve_options;
  clmg_krylov_options_defaults(&solve_options);
  solve_options.relative_tolerance = 1e-8;

  /* distributed */
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  clmg_mpi_poisson_options options;
  clmg_mpi_poisson_options_defaults(&options);
  options.degree = c->degree;
  options.cells_per_process = c->cells_per_process;
  options.device_setup = c->device_setup;
  clmg_mpi_poisson_levels levels;
  CHECK_OK(clmg_mpi_poisson_levels_create(mpi, &coarse, c->finest, &problem, &options, &levels),
           context);
  const int on_device = c->device_setup && clmg_context_device(context)->has_fp64;
  CHECK(levels.piece_on_device == (levels.partition_level < c->finest && on_device),
        "%s: piece on the device %d, expected %d", c->name, levels.piece_on_device,
        levels.partition_level < c->finest && on_device);
  const int finest = c->finest;
  const clmg_mpi_level_rows *top = &levels.levels[finest];
  const size_t mine = top->a.rows, dim = (size_t)c->dim;
  uint64_t n = 0, owned_cells = 0, my_owned = levels.owned_cells;
  MPI_Allreduce(&(uint64_t){mine}, &n, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&my_owned, &owned_cells, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (levels.partition_level < finest) {
    CHECK(owned_cells == levels.global_cells, "%s: parts own %llu of %zu cells", c->name,
          (unsigned long long)owned_cells, levels.global_cells);
    CHECK(world_size == 1 || levels.piece_dofs < n,
          "%s: a piece of %zu finest DOFs on %d ranks, the whole has %llu", c->name,
          levels.piece_dofs, world_size, (unsigned long long)n);
  }
  clmg_multigrid *multigrid = NULL;
  CHECK_OK(clmg_mpi_multigrid_create(mpi, levels.num_levels, levels.levels, &mg, &multigrid),
           context);
  /* one cycle on a random vector, the same global vector on every rank */
  double *r_global = random_vector(n);
  clmg_vector *r = local_vector(context, CLMG_DOUBLE, mine),
              *z = local_vector(context, CLMG_DOUBLE, mine),
              *b = local_vector(context, CLMG_DOUBLE, mine),
              *x = local_vector(context, CLMG_DOUBLE, mine);
  if (mine > 0) {
    CHECK_OK(clmg_vector_upload_doubles(r, r_global + top->first_row), context);
    CHECK_OK(clmg_vector_upload_doubles(b, levels.b), context);
    CHECK_OK(clmg_vector_upload_doubles(x, levels.x0), context);
  }
  clmg_preconditioner cycle;
  CHECK_OK(clmg_multigrid_preconditioner(multigrid, &cycle), context);
  CHECK_OK(cycle.apply(cycle.data, r, z), context);
  clmg_krylov_result result;
  CHECK_OK(clmg_multigrid_solve(multigrid, b, x, &solve_options, &result), context);
  double *z_mine = malloc((mine + 1) * sizeof *z_mine),
         *x_mine = malloc((mine + 1) * sizeof *x_mine);
  CHECK(z_mine && x_mine, "no memory");
  if (mine > 0) {
    CHECK_OK(clmg_vector_download_doubles(z, z_mine), context);
    CHECK_OK(clmg_vector_download_doubles(x, x_mine), context);
  }
  /* the finest A as rows of (row, column, value) triplets on rank 0 */
  size_t my_entries = clmg_csr_nnz(&top->a), entries = 0;
  double *triplets = malloc((3 * my_entries + 1) * sizeof *triplets);
  CHECK(triplets, "no memory");
  for (size_t i = 0; i < mine; ++i)
    for (int64_t e = top->a.row_ptr[i]; e < top->a.row_ptr[i + 1]; ++e) {
      triplets[3 * e] = (double)(top->first_row + i);
      triplets[3 * e + 1] = top->a.col[e];
      triplets[3 * e + 2] = top->a.val[e];
    }
  MPI_Allreduce(&my_entries, &entries, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
  double *all_triplets = gather_rows(triplets, my_entries, 3, entries);
  double *all_coords = gather_rows(levels.coords, mine, dim, n);
  double *all_b = gather_rows(levels.b, mine, 1, n);
  double *all_z = gather_rows(z_mine, mine, 1, n);
  double *all_x = gather_rows(x_mine, mine, 1, n);
  int distributed_cycles = result.iterations;
  clmg_preconditioner_destroy(&cycle);
  clmg_krylov_result_free(&result);
  clmg_vector_destroy(r);
  clmg_vector_destroy(z);
  clmg_vector_destroy(b);
  clmg_vector_destroy(x);
  clmg_multigrid_destroy(multigrid);
  int partition_level = levels.partition_level;
  uint64_t *rows_of_rank =
      world_rank == 0 ? malloc((size_t)world_size * sizeof *rows_of_rank) : NULL;
  MPI_Gather(&(uint64_t){mine}, 1, MPI_UINT64_T, rows_of_rank, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  clmg_mpi_poisson_levels_free(&levels);
  clmg_mpi_destroy(mpi); /* rank 0's serial run below must not reduce over ranks */

  if (world_rank == 0) {
    clmg_fe_hierarchy h;
    CHECK(clmg_fe_poisson_hierarchy(&coarse, finest + 1, c->degree, &problem, CLMG_NUMBERING_2LV, 1,
                                    &h, &error) == CLMG_SUCCESS,
          "%s", error.message);
    const clmg_csr *a = &h.a[finest];
    CHECK(a->rows == n, "%s: %llu distributed rows, the whole hierarchy has %zu", c->name,
          (unsigned long long)n, a->rows);
    double *serial_coords = malloc((n * dim + 1) * sizeof *serial_coords);
    CHECK(serial_coords, "no memory");
    for (size_t i = 0; i < n; ++i)
      memcpy(serial_coords + i * dim, h.spaces[finest].dof_coords + (size_t)h.perm[finest][i] * dim,
             dim * sizeof *serial_coords);
    size_t *serial_of = match_points(all_coords, serial_coords, n, c->dim);
    /* each rank owns the finest DOFs whose lowest-numbered cell descends
     * from a cell of its part of the partition level (refinement numbers
     * child j of cell k as k 2^dim + j) */
    {
      const clmg_mesh *level_p = &h.meshes[partition_level];
      const clmg_fe_space *space = &h.spaces[finest];
      const int parts =
          level_p->num_cells < (size_t)world_size ? (int)level_p->num_cells : world_size;
      int32_t *part = malloc((level_p->num_cells + 1) * sizeof *part);
      int32_t *lowest = malloc((space->num_dofs + 1) * sizeof *lowest);
      uint64_t *expected = calloc((size_t)world_size, sizeof *expected);
      CHECK(part && lowest && expected, "no memory");
      CHECK(clmg_mesh_partition(level_p, parts, part, &error) == CLMG_SUCCESS, "%s", error.message);
      for (size_t d = 0; d < space->num_dofs; ++d)
        lowest[d] = -1;
      for (size_t k = 0; k < space->mesh->num_cells; ++k)
        for (size_t m = 0; m < space->dofs_per_cell; ++m)
          if (lowest[space->cell_dofs[k * space->dofs_per_cell + m]] < 0)
            lowest[space->cell_dofs[k * space->dofs_per_cell + m]] = (int32_t)k;
      const int shift = c->dim * (finest - partition_level);
      for (size_t d = 0; d < space->num_dofs; ++d)
        ++expected[part[(size_t)lowest[d] >> shift]];
      for (int rank = 0; rank < world_size; ++rank)
        CHECK(rows_of_rank[rank] == expected[rank],
              "%s: rank %d owns %llu finest rows, the lowest cells give it %llu", c->name, rank,
              (unsigned long long)rows_of_rank[rank], (unsigned long long)expected[rank]);
      free(part);
      free(lowest);
      free(expected);
    }
    /* A and b entry by entry */
    CHECK(clmg_csr_nnz(a) == entries, "%s: %zu entries, the whole A has %zu", c->name, entries,
          clmg_csr_nnz(a));
    double a_scale = 0, worst = 0;
    for (size_t e = 0; e < clmg_csr_nnz(a); ++e)
      a_scale = fmax(a_scale, fabs(a->val[e]));
    for (size_t t = 0; t < entries; ++t) {
      size_t i = serial_of[(size_t)all_triplets[3 * t]],
             j = serial_of[(size_t)all_triplets[3 * t + 1]];
      double value = NAN;
      for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
        if ((size_t)a->col[e] == j)
          value = a->val[e];
      worst = fmax(worst, isnan(value) ? INFINITY : fabs(value - all_triplets[3 * t + 2]));
    }
    CHECK(worst <= 1e-12 * a_scale, "%s: A differs from the whole A by %.3e (scale %.3e)", c->name,
          worst, a_scale);
    double *permuted = malloc((n + 1) * sizeof *permuted);
    CHECK(permuted, "no memory");
    for (size_t i = 0; i < n; ++i)
      permuted[i] = h.b[serial_of[i]];
    double difference = max_relative_difference(all_b, permuted, n);
    CHECK(difference <= 1e-12, "%s: b differs from the whole b by %.3e", c->name, difference);

    /* one cycle and a solve of the whole hierarchy, in its numbering */
    clmg_multigrid *serial = NULL;
    CHECK_OK(clmg_multigrid_create(context, finest + 1, h.a, h.p, h.r, &mg, &serial), context);
    clmg_vector *rs = local_vector(context, CLMG_DOUBLE, n),
                *zs = local_vector(context, CLMG_DOUBLE, n);
    for (size_t i = 0; i < n; ++i)
      permuted[serial_of[i]] = r_global[i];
    CHECK_OK(clmg_vector_upload_doubles(rs, permuted), context);
    CHECK_OK(clmg_multigrid_preconditioner(serial, &cycle), context);
    CHECK_OK(cycle.apply(cycle.data, rs, zs), context);
    double *zs_host = malloc((n + 1) * sizeof *zs_host);
    CHECK(zs_host, "no memory");
    CHECK_OK(clmg_vector_download_doubles(zs, zs_host), context);
    for (size_t i = 0; i < n; ++i)
      permuted[i] = zs_host[serial_of[i]];
    difference = max_relative_difference(all_z, permuted, n);
    CHECK(difference <= 1e-10, "%s: one V-cycle differs from the whole hierarchy's by %.3e",
          c->name, difference);
    CHECK_OK(clmg_vector_upload_doubles(rs, h.b), context);
    CHECK_OK(clmg_vector_upload_doubles(zs, h.x0), context);
    clmg_krylov_result serial_result;
    CHECK_OK(clmg_multigrid_solve(serial, rs, zs, &solve_options, &serial_result), context);
    CHECK(abs(distributed_cycles - serial_result.iterations) <= 1,
          "%s: %d cycles distributed, %d whole", c->name, distributed_cycles,
          serial_result.iterations);
    CHECK_OK(clmg_vector_download_doubles(zs, zs_host), context);
    for (size_t i = 0; i < n; ++i)
      permuted[i] = zs_host[serial_of[i]];
    difference = max_relative_difference(all_x, permuted, n);
    CHECK(difference <= 1e-6, "%s: x differs from the whole hierarchy's by %.3e", c->name,
          difference);
    printf("test_mpi: %s on %d ranks: partition level %d, %llu unknowns, %d cycles (whole: %d)\n",
           c->name, world_size, partition_level, (unsigned long long)n, distributed_cycles,
           serial_result.iterations);
    clmg_preconditioner_destroy(&cycle);
    clmg_krylov_result_free(&serial_result);
    clmg_vector_destroy(rs);
    clmg_vector_destroy(zs);
    clmg_multigrid_destroy(serial);
    free(zs_host);
    free(permuted);
    free(serial_of);
    free(rows_of_rank);
    free(serial_coords);
    clmg_fe_hierarchy_free(&h);
  }
  free(r_global);
  free(z_mine);
  free(x_mine);
  free(triplets);
  free(all_triplets);
  free(all_coords);
  free(all_b);
  free(all_z);
  free(all_x);
  clmg_mesh_free(&coarse);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_partitioned_hierarchy(clmg_context *context) {
  const partition_case cases[] = {
      {"CIRCLE Q1 level 4, partitioned on level 0", 2, 1, 4, 1, 0},
      {"CIRCLE Q2 level 3, partitioned on level 0 or 1", 2, 2, 3, 8, 0},
      {"3D box Q1 level 2, partitioned on level 0", 3, 1, 2, 1, 0},
      {"3D box Q2 level 1, partitioned on level 0", 3, 2, 1, 1, 0},
      {"CIRCLE Q1 level 4, pieces on the device", 2, 1, 4, 1, 1},
      {"CIRCLE Q2 level 3, pieces on the device", 2, 2, 3, 8, 1},
      {"3D box Q1 level 2, pieces on the device", 3, 1, 2, 1, 1},
      {"3D box Q2 level 1, pieces on the device", 3, 2, 1, 1, 1},
      {"CIRCLE Q1 level 3, built whole (partition level = finest)", 2, 1, 3, 1000000, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    check_partitioned_case(context, &cases[k]);
}

/* The levels below coarse_max_rows gathered onto every rank: the same cycle
 * (mathematically; to rounding) as the distributed levels all the way down,
 * with some levels gathered and with all but the finest. */
static void test_gathered_levels(clmg_context *context) {
  clmg_mesh coarse;
  clmg_poisson_problem problem;
  circle_problem(&coarse, &problem);
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  clmg_mpi_poisson_options options;
  clmg_mpi_poisson_options_defaults(&options);
  options.cells_per_process = 1;
  clmg_mpi_poisson_levels levels; /* rows 16, 48, 160, 576, 2176 */
  CHECK_OK(clmg_mpi_poisson_levels_create(mpi, &coarse, 4, &problem, &options, &levels), context);
  const size_t mine = levels.levels[4].a.rows;
  uint64_t n = 0;
  MPI_Allreduce(&(uint64_t){mine}, &n, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  double *r_global = random_vector(n);
  /* each precision's first case gathers nothing: the others are compared
   * with it (in float, the gathered right-hand sides travel in float) */
  const struct {
    clmg_dtype precision;
    size_t coarse_max_rows;
    const char *coarse_solver;
    int engine_levels; /* the finest level is never gathered */
    double tolerance, cycle_difference;
  } cases[] = {
      {CLMG_DOUBLE, 0, "direct (gathered)", 5, 1e-8, 0},
      {CLMG_DOUBLE, 600, "multigrid (gathered levels)", 2, 1e-8, 1e-10},
      {CLMG_DOUBLE, 1000000, "multigrid (gathered levels)", 2, 1e-8, 1e-10},
      {CLMG_FLOAT, 0, "direct (gathered)", 5, 1e-5, 0},
      {CLMG_FLOAT, 600, "multigrid (gathered levels)", 2, 1e-5, 1e-4},
  };
  double *z_first = malloc((mine + 1) * sizeof *z_first), *z = malloc((mine + 1) * sizeof *z);
  CHECK(z_first && z, "no memory");
  int first_cycles = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const int reference = cases[k].coarse_max_rows == 0;
    clmg_multigrid_options mg;
    clmg_multigrid_options_defaults(&mg);
    mg.matrix.precision = cases[k].precision;
    mg.coarse_max_rows = cases[k].coarse_max_rows;
    clmg_multigrid *multigrid = NULL;
    CHECK_OK(clmg_mpi_multigrid_create(mpi, levels.num_levels, levels.levels, &mg, &multigrid),
             context);
    CHECK(strcmp(clmg_multigrid_coarse_solver(multigrid), cases[k].coarse_solver) == 0,
          "case %zu: coarse solver %s", k, clmg_multigrid_coarse_solver(multigrid));
    CHECK(clmg_multigrid_levels(multigrid) == cases[k].engine_levels,
          "case %zu: %d levels in the engine", k, clmg_multigrid_levels(multigrid));
    clmg_vector *r = local_vector(context, cases[k].precision, mine),
                *zv = local_vector(context, cases[k].precision, mine),
                *b = local_vector(context, cases[k].precision, mine),
                *x = local_vector(context, cases[k].precision, mine);
    if (mine > 0) {
      CHECK_OK(clmg_vector_upload_doubles(r, r_global + levels.levels[4].first_row), context);
      CHECK_OK(clmg_vector_upload_doubles(b, levels.b), context);
      CHECK_OK(clmg_vector_upload_doubles(x, levels.x0), context);
    }
    clmg_preconditioner cycle;
    CHECK_OK(clmg_multigrid_preconditioner(multigrid, &cycle), context);
    CHECK_OK(cycle.apply(cycle.data, r, zv), context);
    if (mine > 0)
      CHECK_OK(clmg_vector_download_doubles(zv, reference ? z_first : z), context);
    if (!reference) {
      double difference = max_relative_difference(z, z_first, mine), worst = 0;
      MPI_Allreduce(&difference, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      CHECK(worst <= cases[k].cycle_difference, "case %zu: the cycle differs by %.3e", k, worst);
    }
    clmg_krylov_options solve_options;
    clmg_krylov_options_defaults(&solve_options);
    solve_options.relative_tolerance = cases[k].tolerance;
    clmg_krylov_result result;
    CHECK_OK(clmg_multigrid_solve(multigrid, b, x, &solve_options, &result), context);
    if (reference)
      first_cycles = result.iterations;
    CHECK(result.iterations == first_cycles, "case %zu: %d cycles, %d without gathering", k,
          result.iterations, first_cycles);
    clmg_preconditioner_destroy(&cycle);
    clmg_krylov_result_free(&result);
    clmg_vector_destroy(r);
    clmg_vector_destroy(zv);
    clmg_vector_destroy(b);
    clmg_vector_destroy(x);
    clmg_multigrid_destroy(multigrid);
  }
  /* a W-cycle visits its coarse level twice: nothing is gathered */
  clmg_multigrid_options w;
  clmg_multigrid_options_defaults(&w);
  w.cycle = CLMG_CYCLE_W;
  w.coarse_max_rows = 600;
  clmg_multigrid *w_cycle = NULL;
  CHECK_OK(clmg_mpi_multigrid_create(mpi, levels.num_levels, levels.levels, &w, &w_cycle), context);
  CHECK(clmg_multigrid_levels(w_cycle) == 5 &&
            strcmp(clmg_multigrid_coarse_solver(w_cycle), "direct (gathered)") == 0,
        "a W-cycle with coarse_max_rows 600: %d levels in the engine, coarse solver %s",
        clmg_multigrid_levels(w_cycle), clmg_multigrid_coarse_solver(w_cycle));
  clmg_multigrid_destroy(w_cycle);
  free(z_first);
  free(z);
  free(r_global);
  clmg_mpi_poisson_levels_free(&levels);
  clmg_mpi_destroy(mpi);
  clmg_mesh_free(&coarse);
}

/* Every rank returns `expected` with the failing rank's message. */
static void check_agreed_failure(clmg_status status, clmg_status expected, clmg_context *context,
                                 int failing_rank, const char *needle) {
  const char *message = clmg_context_message(context);
  CHECK(status == expected, "status %s, expected %s (%s)", clmg_status_string(status),
        clmg_status_string(expected), message);
  char prefix[32];
  snprintf(prefix, sizeof prefix, "rank %d: ", failing_rank);
  CHECK(strncmp(message, prefix, strlen(prefix)) == 0, "message \"%s\" should start \"%s\"",
        message, prefix);
  CHECK(strstr(message, needle) != NULL, "message \"%s\" should name \"%s\"", message, needle);
}

static void test_failures(clmg_context *context, const char *scratch) {
  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  const int last = world_size - 1;

  /* a malformed file, its header read by the last rank: line 5 has a row
   * past 3. The ranks parse even shares of its 16 bytes of entries: line
   * 5 (their byte 8) is the share of rank size / 2, which reports it. */
  char path[512];
  snprintf(path, sizeof path, "%s/bad.mtx", scratch);
  if (world_rank == last) {
    FILE *file = fopen(path, "w");
    CHECK(file, "cannot write %s", path);
    fputs("%%MatrixMarket matrix coordinate real general\n%\n3 3 2\n1 1 1.0\n9 1 2.0\n", file);
    fclose(file);
  }
  clmg_mpi_matrix *matrix = NULL;
  clmg_status status = clmg_mpi_matrix_read_matrix_market(mpi, last, path, NULL, &matrix);
  check_agreed_failure(status, CLMG_ERROR_PARSE, context, world_size / 2, "bad.mtx:5");
  CHECK(matrix == NULL, "no matrix after a failure");

  /* a missing file */
  snprintf(path, sizeof path, "%s/missing.mtx", scratch);
  status = clmg_mpi_matrix_read_matrix_market(mpi, 0, path, NULL, &matrix);
  check_agreed_failure(status, CLMG_ERROR_IO, context, 0, "missing.mtx");

  /* one rank's column outside the matrix */
  clmg_csr a = {0}, mine = {0};
  random_matrix(40, &a);
  uint64_t first = 0, count = 0;
  clmg_mpi_even_rows(mpi, 40, &first, &count);
  slice_rows(&a, first, count, &mine);
  if (world_rank == last && clmg_csr_nnz(&mine) > 0)
    mine.col[clmg_csr_nnz(&mine) - 1] = 40;
  status = clmg_mpi_matrix_create(mpi, first, &mine, NULL, &matrix);
  check_agreed_failure(status, CLMG_ERROR_INVALID_ARGUMENT, context, last, "column 40");
  clmg_csr_free(&mine);

  /* two faulty rows on the last rank, far apart (the check scans ranges of
   * rows on the host's threads): the lower one is named, as the serial
   * scan names it */
  {
    clmg_csr big = {0}, rows = {0};
    const size_t n = 20000 * (size_t)world_size;
    uint64_t big_first = 0, big_count = 0;
    random_matrix(n, &big);
    clmg_mpi_even_rows(mpi, n, &big_first, &big_count);
    slice_rows(&big, big_first, big_count, &rows);
    size_t unsorted = big_count / 4, outside = 3 * big_count / 4;
    while (rows.row_ptr[unsorted + 1] - rows.row_ptr[unsorted] < 2)
      ++unsorted;
    if (world_rank == last) {
      int64_t k = rows.row_ptr[unsorted];
      int32_t column = rows.col[k];
      rows.col[k] = rows.col[k + 1];
      rows.col[k + 1] = column;
      rows.col[rows.row_ptr[outside + 1] - 1] = (int32_t)n;
    }
    status = clmg_mpi_matrix_create(mpi, big_first, &rows, NULL, &matrix);
    char needle[64];
    snprintf(needle, sizeof needle, "local row %zu's columns are not sorted", unsorted);
    check_agreed_failure(status, CLMG_ERROR_INVALID_ARGUMENT, context, last, needle);
    clmg_csr_free(&rows);
    clmg_csr_free(&big);
  }

  /* blocks that do not tile the rows */
  slice_rows(&a, first, count, &mine);
  status =
      clmg_mpi_matrix_create(mpi, world_rank == last ? first + 1 : first, &mine, NULL, &matrix);
  CHECK(status == CLMG_ERROR_INVALID_ARGUMENT &&
            strstr(clmg_context_message(context), "do not tile"),
        "tiling: %s: %s", clmg_status_string(status), clmg_context_message(context));
  clmg_mpi_destroy(mpi);

  /* a zero diagonal on the last rank's rows of the finest level, under the
   * Chebyshev smoother whose setup then estimates an eigenvalue
   * collectively: that rank fails before the estimate, and every rank must
   * stop with its message instead of waiting in the estimate's reductions */
  {
    clmg_mesh circle;
    clmg_poisson_problem problem;
    clmg_fe_hierarchy h;
    clmg_error mesh_error;
    circle_problem(&circle, &problem);
    CHECK(clmg_fe_poisson_hierarchy(&circle, 3, 1, &problem, CLMG_NUMBERING_CM, 1, &h,
                                    &mesh_error) == CLMG_SUCCESS,
          "%s", mesh_error.message);
    CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
    clmg_mpi_level_rows rows[3];
    memset(rows, 0, sizeof rows);
    uint64_t level_first[3], level_count[3];
    for (int l = 0; l < 3; ++l) {
      clmg_mpi_even_rows(mpi, h.a[l].rows, &level_first[l], &level_count[l]);
      rows[l].first_row = level_first[l];
      slice_rows(&h.a[l], level_first[l], level_count[l], &rows[l].a);
      if (l > 0) {
        slice_rows(&h.p[l], level_first[l], level_count[l], &rows[l].p);
        slice_rows(&h.r[l], level_first[l - 1], level_count[l - 1], &rows[l].r);
      }
    }
    if (world_rank == last) { /* the diagonal entry of this rank's last finest row */
      clmg_csr *finest = &rows[2].a;
      size_t row = finest->rows - 1;
      for (int64_t k = finest->row_ptr[row]; k < finest->row_ptr[row + 1]; ++k)
        if ((uint64_t)finest->col[k] == level_first[2] + row)
          finest->val[k] = 0.0;
    }
    clmg_multigrid_options options;
    clmg_multigrid_options_defaults(&options);
    options.smoother = CLMG_SMOOTHER_CHEBYSHEV;
    clmg_multigrid *multigrid = NULL;
    status = clmg_mpi_multigrid_create(mpi, 3, rows, &options, &multigrid);
    check_agreed_failure(status, CLMG_ERROR_INVALID_ARGUMENT, context, last, "zero diagonal");
    CHECK(multigrid == NULL, "no hierarchy after a failure");
    for (int l = 0; l < 3; ++l) {
      clmg_csr_free(&rows[l].a);
      clmg_csr_free(&rows[l].p);
      clmg_csr_free(&rows[l].r);
    }
    clmg_mpi_destroy(mpi);
    clmg_fe_hierarchy_free(&h);
    clmg_mesh_free(&circle);
  }

  /* out of memory on the last rank only: a context with a 4 KiB limit and
   * a matrix of about 100 KiB per rank */
  clmg_context_options options;
  clmg_context_options_defaults(&options);
  if (world_rank == last)
    options.memory_limit_bytes = 4096;
  clmg_context *small = NULL;
  status = clmg_context_create(&options, &small);
  CHECK_OK(status, small);
  CHECK_OK(clmg_mpi_create(small, MPI_COMM_WORLD, &mpi), small);
  clmg_csr_free(&a);
  clmg_csr_free(&mine);
  const size_t n = 2000 * (size_t)world_size;
  random_matrix(n, &a);
  clmg_mpi_even_rows(mpi, n, &first, &count);
  slice_rows(&a, first, count, &mine);
  status = clmg_mpi_matrix_create(mpi, first, &mine, NULL, &matrix);
  check_agreed_failure(status, CLMG_ERROR_OUT_OF_DEVICE_MEMORY, small, last, "limit");
  clmg_mpi_destroy(mpi);
  clmg_context_destroy(small);
  clmg_csr_free(&a);
  clmg_csr_free(&mine);
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  clmg_context *context = NULL;
  clmg_status status = clmg_context_create(NULL, &context);
  CHECK_OK(status, context);
  const char *scratch = getenv("CLMG_TEST_TMPDIR");
#ifdef CLMG_TEST_TMPDIR
  if (!scratch)
    scratch = CLMG_TEST_TMPDIR;
#endif
  if (!scratch)
    scratch = "/tmp";

  /* the host's device for this rank: none without a GPU, else a GPU */
  char device[32];
  clmg_mpi_host_device(MPI_COMM_WORLD, device, sizeof device);
  clmg_device_info *devices = NULL;
  size_t device_count = 0;
  CHECK(clmg_list_devices(&devices, &device_count, NULL, 0) == CLMG_SUCCESS, "no device list");
  int has_gpu = 0;
  for (size_t i = 0; i < device_count; ++i)
    has_gpu |= devices[i].is_gpu;
  free(devices);
  if (!has_gpu) {
    CHECK(device[0] == '\0', "host device '%s' on a host without a GPU", device);
  } else {
    clmg_context_options gpu_options;
    clmg_context_options_defaults(&gpu_options);
    gpu_options.device = device;
    clmg_context *gpu = NULL;
    CHECK_OK(clmg_context_create(&gpu_options, &gpu), gpu);
    CHECK(clmg_context_device(gpu)->is_gpu, "host device '%s' is not a GPU", device);
    clmg_context_destroy(gpu);
  }

  clmg_mpi *mpi = NULL;
  CHECK_OK(clmg_mpi_create(context, MPI_COMM_WORLD, &mpi), context);
  CHECK(clmg_context_is_distributed(context), "the context has no reducer");
  test_products_and_reductions(mpi, CLMG_DOUBLE);
  test_products_and_reductions(mpi, CLMG_FLOAT);
  clmg_mpi_destroy(mpi);
  CHECK(!clmg_context_is_distributed(context), "the reducer outlived clmg_mpi_destroy");
  test_krylov(context);
  test_options_solver(context);
  test_multigrid(context);
  test_partitioned_hierarchy(context);
  test_gathered_levels(context);
  test_failures(context, scratch);

  clmg_context_destroy(context);
  if (world_rank == 0)
    printf("test_mpi: all checks passed on %d rank%s\n", world_size, world_size == 1 ? "" : "s");
  MPI_Finalize();
  return 0;
}
