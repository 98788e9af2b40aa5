/* clmg under mpirun (a build with MPI): `mpirun -np N clmg solve ...` and
 * `mpirun -np N clmg poisson ...` split the rows over N ranks, one OpenCL
 * device per rank (distinct GPUs by the rank's place on its host when no
 * device is named, else the named one, e.g. pocl, shared), and print the
 * serial commands' summaries from rank 0 with the partition's balance.
 * The other commands refuse to run on several ranks.
 *
 * Only rank 0 writes to stdout and stderr; a failure on any rank is agreed
 * (clmg_mpi_agree, or agree_failure before a context exists), so rank 0
 * reports it and every rank exits with the same status. */
#define _POSIX_C_SOURCE 200809L
#include "distributed.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clmg/mpi.h"
#include "subcommands.h"
#include "view.h"

static int world_rank, world_size;

/* Environment variables that Open MPI's, MPICH's and PMIx launchers set. */
static int launched_by_mpirun(void) {
  const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (getenv(names[i]))
      return 1;
  return 0;
}

/* Before a context exists: every rank learns whether all succeeded; the
 * lowest failing rank's message reaches rank 0, which prints it. */
static int agree_failure(const char *command, int ok, const char *message) {
  int mine = ok ? world_size : world_rank, first = world_size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == world_size)
    return 1;
  char text[1024] = "";
  if (world_rank == first)
    snprintf(text, sizeof text, "%s", message ? message : "failed");
  MPI_Bcast(text, (int)sizeof text, MPI_CHAR, first, MPI_COMM_WORLD);
  text[sizeof text - 1] = '\0';
  cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT, "rank %d: %s", first, text);
  return 0;
}

/* The device of this rank: the one named (--device, CLMG_DEVICE), shared
 * by every rank; else the GPUs of the first GPU's platform, one per rank of
 * this host in turn; else the library's default. */
static clmg_context *open_rank_context(const char *command, const cli_options *common, int quiet) {
  cli_options options = *common;
  char chosen[32] = "";
  if (!options.device && !getenv("CLMG_DEVICE")) {
    clmg_mpi_host_device(MPI_COMM_WORLD, chosen, sizeof chosen);
    if (chosen[0])
      options.device = chosen;
  }
  return cli_open_context(command, &options, quiet || world_rank != 0);
}

/* Every rank's share of a distributed matrix, on rank 0. */
typedef struct rank_share {
  unsigned long long rows, nonzeros, ghosts, sends, neighbours;
} rank_share;

static rank_share *gather_shares(const clmg_mpi_matrix *matrix) {
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(matrix, &info);
  rank_share mine = {info.local_rows, info.local_nonzeros, info.ghosts, info.sends,
                     (unsigned long long)info.receive_neighbours};
  rank_share *all = world_rank == 0 ? calloc((size_t)world_size, sizeof *all) : NULL;
  MPI_Gather(&mine, 5, MPI_UNSIGNED_LONG_LONG, all, 5, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return all;
}

/* "min / max" of one field over the ranks. */
/* Prints "name min / max" over the ranks for each field of records of
 * `fields` unsigned long longs (one record per rank, on rank 0). */
static void print_ranges(const unsigned long long *records, size_t fields, const char **names) {
  for (size_t f = 0; f < fields; ++f) {
    unsigned long long low = ~0ull, high = 0;
    for (int r = 0; r < world_size; ++r) {
      unsigned long long value = records[(size_t)r * fields + f];
      low = value < low ? value : low;
      high = value > high ? value : high;
    }
    printf("%s %s %llu / %llu", f ? "," : "", names[f], low, high);
  }
  printf("\n");
}

static void print_partition(const rank_share *shares) {
  const char *names[] = {"rows", "nonzeros", "halo in", "halo out", "neighbours"};
  printf("%-18s %d ranks (min / max per rank):", "partition", world_size);
  print_ranges((const unsigned long long *)shares, 5, names);
}

static void json_partition(json_writer *w, const rank_share *shares) {
  json_integer(w, "ranks", world_size);
  json_array_begin(w, "partition");
  for (int r = 0; r < world_size; ++r) {
    json_object_begin(w, NULL);
    json_integer(w, "rank", r);
    json_integer(w, "rows", (long long)shares[r].rows);
    json_integer(w, "nonzeros", (long long)shares[r].nonzeros);
    json_integer(w, "halo_in", (long long)shares[r].ghosts);
    json_integer(w, "halo_out", (long long)shares[r].sends);
    json_integer(w, "neighbours", (long long)shares[r].neighbours);
    json_object_end(w);
  }
  json_array_end(w);
}

/* The exit status every rank returns: the worst. */
static int agree_exit(int code) {
  int worst = code;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

/* ---- the solver's options on every rank ---- */

/* The options database of the command line, made on every rank (the same
 * arguments, the same --options file) and agreed; then what a distributed
 * solve cannot honour is refused (exit status 2, as bad usage). Returns 0
 * and sets *code after reporting. */
static int make_distributed_options(const char *command, const cli_settings *settings,
                                    clmg_options **db, int *code) {
  int ok = cli_make_options(command, settings, db), all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (ok)
      cli_failure(command, CLMG_ERROR_IO, "another rank cannot make the solver's options");
    clmg_options_destroy(*db);
    *db = NULL;
    *code = EXIT_LIBRARY_FAILURE;
    return 0;
  }
  return 1;
}

/* The keys a distributed solver cannot honour (clmg_mpi_solver_check_options):
 * a usage error naming them. */
static int refuse_options(const char *command, const clmg_options *db, int with_hierarchy,
                          int *code) {
  clmg_error error = {{0}};
  if (clmg_mpi_solver_check_options(db, with_hierarchy, &error) == CLMG_SUCCESS)
    return 1;
  *code = cli_usage(command, "%s (started on %d ranks)", error.message, world_size);
  return 0;
}

/* The device matrices' format and precision the options name. */
static void matrix_options_of(const clmg_options *db, clmg_matrix_options *matrix) {
  clmg_matrix_options_defaults(matrix);
  clmg_matrix_format_parse(clmg_options_get(db, "format"), &matrix->format);
  matrix->precision =
      strcmp(clmg_options_get(db, "precision"), "float") == 0 ? CLMG_FLOAT : CLMG_DOUBLE;
}

/* ---- clmg solve ---- */

typedef struct distributed_solve {
  clmg_csr a;         /* this rank's rows until the matrix is made */
  uint64_t first_row; /* the global row of a's first */
  double *b_whole;    /* rank 0 */
  double *x_whole;    /* rank 0 */
  clmg_options *db;
  clmg_context *context;
  clmg_mpi *mpi;
  clmg_mpi_matrix *matrix;
  clmg_multigrid *amg; /* precond=amg: the distributed AMG hierarchy */
  clmg_operator op;
  clmg_vector *b, *x, *residual;
  clmg_solver *solver;
  rank_share *shares;
} distributed_solve;

/* precond=amg: the solver's preconditioner is the distributed AMG */
static int wants_amg(const clmg_options *db) {
  return strcmp(clmg_options_get(db, "precond"), "amg") == 0;
}

static void release_solve(distributed_solve *s) {
  clmg_solver_destroy(s->solver);
  clmg_multigrid_destroy(s->amg);
  clmg_operator_destroy(&s->op);
  clmg_vector_destroy(s->b);
  clmg_vector_destroy(s->x);
  clmg_vector_destroy(s->residual);
  clmg_mpi_matrix_destroy(s->matrix);
  clmg_mpi_destroy(s->mpi);
  clmg_context_destroy(s->context);
  clmg_options_destroy(s->db);
  clmg_csr_free(&s->a);
  free(s->b_whole);
  free(s->x_whole);
  free(s->shares);
}

/* Every rank reads its part of A (clmg_mpi_csr_read_matrix_market), the
 * ranks check A as the serial command does (where krylov=cg, and for
 * krylov=auto: symmetric with a positive diagonal), rank 0 reads b. Every
 * rank learns the outcome; rank 0 reports a failure. */
static int read_in_parts(const char *command, const solve_options *options, distributed_solve *s,
                         int *symmetric) {
  clmg_status status =
      clmg_mpi_csr_read_matrix_market(s->mpi, 0, options->matrix_path, &s->first_row, &s->a);
  if (status != CLMG_SUCCESS) {
    if (world_rank == 0)
      cli_failure(command, status, "cannot read the matrix: %s: %s", clmg_status_string(status),
                  clmg_context_message(s->context));
    return 0;
  }
  int ok = 1;
  *symmetric = 0;
  const char *krylov = clmg_options_get(s->db, "krylov");
  if (strcmp(krylov, "cg") == 0 || strcmp(krylov, "auto") == 0) {
    clmg_mpi_symmetry found;
    status =
        clmg_mpi_csr_check_symmetric(s->mpi, s->first_row, &s->a, solve_symmetry_tolerance, &found);
    if (status != CLMG_SUCCESS) {
      if (world_rank == 0)
        cli_failure(command, status, "cannot check the matrix: %s: %s", clmg_status_string(status),
                    clmg_context_message(s->context));
      return 0;
    }
    *symmetric = found.symmetric && found.nonpositive_diagonal == 0;
    if (strcmp(krylov, "cg") == 0 && world_rank == 0)
      ok = solve_check_spd(command, options, found.symmetric, (size_t)found.nonpositive_diagonal,
                           (size_t)found.first_nonpositive, found.first_diagonal);
  }
  size_t rows = s->a.cols; /* square: the global size */
  if (world_rank == 0 && ok && options->rhs_path) {
    size_t length = 0;
    clmg_error error;
    status = clmg_read_matrix_market_vector(options->rhs_path, &s->b_whole, &length, &error);
    if (status != CLMG_SUCCESS)
      ok = !cli_failure(command, status, "cannot read the right-hand side: %s: %s",
                        clmg_status_string(status), error.message);
    else if (length != rows)
      ok = !cli_failure(command, CLMG_ERROR_INVALID_ARGUMENT,
                        "%s has %zu entries but %s has %zu rows", options->rhs_path, length,
                        options->matrix_path, rows);
  }
  if (world_rank == 0 && ok) {
    s->x_whole = calloc(rows + 1, sizeof *s->x_whole);
    if (!s->x_whole)
      ok = !cli_failure(command, CLMG_ERROR_OUT_OF_HOST_MEMORY, "out of memory for x");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok;
}

/* The distributed matrix, b (scattered, or A*1), x = 0 and the solver the
 * options describe (clmg_mpi_solver_create, whose setup compiles the
 * kernels). */
static clmg_status build_solve(const solve_options *options, distributed_solve *s, int symmetric,
                               const char **step) {
  clmg_matrix_options matrix_options;
  matrix_options_of(s->db, &matrix_options);
  *step = "making the distributed matrix";
  const uint64_t first_row = s->first_row;
  clmg_csr rows = s->a; /* this rank's rows, read in parts; freed below */
  memset(&s->a, 0, sizeof s->a);
  clmg_status status = CLMG_SUCCESS;
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_matrix_create(s->mpi, first_row, &rows, &matrix_options, &s->matrix);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_matrix_operator(s->matrix, 0, &s->op);
  if (status == CLMG_SUCCESS && wants_amg(s->db)) {
    /* the hierarchy built from the ranks' rows (clmg_mpi_amg_multigrid_create) */
    *step = "setting up the distributed AMG";
    clmg_amg_options amg;
    clmg_multigrid_options mg;
    status = clmg_mpi_agree(s->mpi, clmg_options_amg(s->db, s->context, &amg, &mg));
    mg.matrix = matrix_options;
    if (status == CLMG_SUCCESS)
      status = clmg_mpi_amg_multigrid_create(s->mpi, first_row, &rows, &amg, &mg, &s->amg);
  }
  clmg_csr_free(&rows);
  if (status != CLMG_SUCCESS)
    return status;
  *step = "creating the vectors";
  clmg_vector **vectors[] = {&s->b, &s->x, &s->residual};
  for (int i = 0; i < 3 && status == CLMG_SUCCESS; ++i)
    status = clmg_vector_create(s->context, matrix_options.precision, s->op.rows, vectors[i]);
  status = clmg_mpi_agree(s->mpi, status);
  if (status == CLMG_SUCCESS && options->rhs_path) {
    *step = "sending b";
    status = clmg_mpi_vector_scatter(s->matrix, 0, s->b_whole, s->b);
  } else if (status == CLMG_SUCCESS) {
    *step = "b = A*1";
    status = clmg_vector_fill(s->x, 1.0);
    if (status == CLMG_SUCCESS)
      status = clmg_operator_apply(&s->op, 1.0, s->x, 0.0, s->b);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_fill(s->x, 0.0);
    status = clmg_mpi_agree(s->mpi, status);
  }
  if (status == CLMG_SUCCESS) {
    *step = "setting up the solver";
    status = clmg_mpi_solver_create(s->mpi, s->matrix, s->amg, symmetric, s->db, &s->solver);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_agree(s->mpi, clmg_finish(s->context));
  return status;
}

static void print_solve_text(const solve_options *options, const distributed_solve *s,
                             const solve_report *r) {
  const clmg_krylov_result *result = &r->result;
  if (!options->quiet)
    solve_print_history(result);
  solve_print_outcome(r);
  print_partition(s->shares);
  printf("%-18s %.4f (read in parts %.4f, build %.4f)\n", "setup_s", r->read_s + r->build_s,
         r->read_s, r->build_s);
  printf("%-18s %.4f\n", "kernels_s", r->kernels_s);
  printf("%-18s %.4f", "solve_s", r->solve_s);
  if (result->iterations > 0)
    printf(" (%.3f ms per iteration)", 1e3 * r->solve_s / result->iterations);
  printf("\n");
}

static void print_solve_json(const solve_options *options, const distributed_solve *s,
                             const solve_report *r, const clmg_mpi_matrix_info *info) {
  const clmg_options *db = clmg_solver_options(s->solver);
  clmg_krylov_method method = clmg_solver_method(s->solver);
  json_writer w;
  json_result_begin(&w, stdout, "solve");
  json_string(&w, "matrix", options->matrix_path);
  json_string(&w, "rhs", options->rhs_path ? options->rhs_path : "A*ones");
  json_integer(&w, "unknowns", (long long)info->global_rows);
  json_integer(&w, "rows", (long long)info->global_rows);
  json_integer(&w, "nonzeros", (long long)info->global_nonzeros);
  json_string(&w, "iteration_kind", "krylov");
  json_string(&w, "format", clmg_options_get(db, "format"));
  json_string(&w, "precision", clmg_options_get(db, "precision"));
  json_string(&w, "method", clmg_krylov_method_name(method));
  json_integer(&w, "restart",
               method == CLMG_KRYLOV_GMRES ? atoll(clmg_options_get(db, "restart")) : 0);
  json_string(&w, "preconditioner", clmg_options_get(db, "precond"));
  json_device(&w, r->device);
  json_partition(&w, s->shares);
  json_number(&w, "relative_tolerance", strtod(clmg_options_get(db, "tol"), NULL));
  json_integer(&w, "max_iterations", atoll(clmg_options_get(db, "maxit")));
  /* the options as resolved: --options takes them back */
  char *echo = clmg_options_to_json(db, 1);
  json_raw(&w, "options", echo);
  free(echo);
  solve_json_outcome(&w, r);
  json_object_end(&w);
  json_end(&w);
}

/* The true residual, x on rank 0 and its error against ones. */
static clmg_status evaluate_solve(const solve_options *options, distributed_solve *s,
                                  solve_report *r) {
  double residual_norm = 0, b_norm = 0;
  clmg_status status = clmg_operator_defect(&s->op, s->b, s->x, s->residual);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(s->residual, &residual_norm);
  if (status == CLMG_SUCCESS)
    status = clmg_nrm2(s->b, &b_norm);
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_vector_gather(s->matrix, 0, s->x, s->x_whole);
  if (status != CLMG_SUCCESS)
    return status;
  r->true_relative_residual = b_norm > 0 ? residual_norm / b_norm : residual_norm;
  if (!options->rhs_path && world_rank == 0) {
    clmg_mpi_matrix_info info;
    clmg_mpi_matrix_get_info(s->matrix, &info);
    double max_error = 0, sum_squares = 0;
    for (uint64_t i = 0; i < info.global_rows; ++i) {
      double e = fabs(s->x_whole[i] - 1.0);
      max_error = e > max_error || isnan(e) ? e : max_error;
      sum_squares += e * e;
    }
    r->have_error_vs_ones = 1;
    r->error_max = max_error;
    r->error_relative = info.global_rows > 0 ? sqrt(sum_squares / (double)info.global_rows) : 0;
  }
  return CLMG_SUCCESS;
}

static int solve_command(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  solve_options options;
  int code = solve_parse_options(argc, argv, defaults, &options);
  if (code != 0)
    return code;
  if (options.common.help) {
    solve_print_usage(stdout);
    return EXIT_SUCCESS;
  }
  distributed_solve s = {0};
  if (!make_distributed_options(command, &options.settings, &s.db, &code) ||
      !refuse_options(command, s.db, wants_amg(s.db), &code)) {
    release_solve(&s);
    return code;
  }
  solve_report report = {0};
  cli_progress_begin(options.quiet || world_rank != 0);
  int symmetric = 0;
  s.context = open_rank_context(command, &options.common, options.quiet);
  const char *precision = clmg_options_get(s.db, "precision");
  char message[512] = "";
  if (!s.context)
    snprintf(message, sizeof message, "cannot open the OpenCL device");
  else if (strcmp(precision, "double") == 0 &&
           clmg_context_check_precision(s.context, CLMG_DOUBLE) != CLMG_SUCCESS)
    snprintf(message, sizeof message, "%s (try --precision float)",
             clmg_context_message(s.context));
  if (!agree_failure(command, message[0] == '\0', message)) {
    release_solve(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  clmg_status status = clmg_mpi_create(s.context, MPI_COMM_WORLD, &s.mpi);
  if (!agree_failure(command, status == CLMG_SUCCESS, clmg_context_message(s.context))) {
    release_solve(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  report.device = clmg_context_device(s.context);
  double start = apputil_now();
  if (!read_in_parts(command, &options, &s, &symmetric)) {
    release_solve(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  report.read_s = apputil_now() - start;
  start = apputil_now();
  const char *step = "";
  status = build_solve(&options, &s, symmetric, &step);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s.context, status, step);
    release_solve(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  /* the solver's setup ran one iteration: the kernels' compilation */
  report.kernels_s = clmg_solver_compile_seconds(s.solver);
  report.build_s = apputil_now() - start - report.kernels_s;
  if (world_rank == 0)
    solve_warn_unused(command, s.solver);
  s.shares = gather_shares(s.matrix);
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(s.matrix, &info);
  const clmg_options *db = clmg_solver_options(s.solver);
  if (!options.common.json && world_rank == 0) {
    clmg_krylov_method method = clmg_solver_method(s.solver);
    char name[48];
    if (method == CLMG_KRYLOV_GMRES)
      snprintf(name, sizeof name, "gmres(%s)", clmg_options_get(db, "restart"));
    else
      snprintf(name, sizeof name, "%s", clmg_krylov_method_name(method));
    printf("%-18s %s\n", "matrix", options.matrix_path);
    printf("%-18s %llu\n", "rows", (unsigned long long)info.global_rows);
    printf("%-18s %llu\n", "nonzeros", (unsigned long long)info.global_nonzeros);
    printf("%-18s %s\n", "right-hand side",
           options.rhs_path ? options.rhs_path : "b = A*1 (the exact solution is all ones)");
    printf("%-18s rank 0: %s (%s), %d ranks\n", "device", report.device->name,
           report.device->platform_name, world_size);
    printf("%-18s %s, %s\n", "format", clmg_options_get(db, "format"),
           clmg_options_get(db, "precision"));
    printf("%-18s %s, preconditioner %s, tolerance %s, at most %s iterations\n", "method", name,
           clmg_options_get(db, "precond"), clmg_options_get(db, "tol"),
           clmg_options_get(db, "maxit"));
    fflush(stdout);
  }
  solve_progress live = {!options.quiet && world_rank == 0, apputil_now(), apputil_now()};
  clmg_solver_set_monitor(s.solver, solve_print_progress, &live);
  start = apputil_now();
  report.status = clmg_solver_solve(s.solver, s.b, s.x, &report.result);
  report.solve_s = apputil_now() - start;
  char solver_message[1024];
  snprintf(solver_message, sizeof solver_message, "%s", clmg_context_message(s.context));
  report.message = solver_message;
  status = evaluate_solve(&options, &s, &report);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s.context, status, "reading back the solution");
    clmg_krylov_result_free(&report.result);
    release_solve(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  code = report.status == CLMG_SUCCESS ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE;
  if (world_rank == 0) {
    int x_is_useful = report.status == CLMG_SUCCESS || report.status == CLMG_ERROR_NOT_CONVERGED;
    char output_message[1200] = "";
    if (options.output_path && x_is_useful) {
      clmg_error error;
      clmg_status written =
          clmg_write_matrix_market_vector(options.output_path, s.x_whole, info.global_rows, &error);
      if (written != CLMG_SUCCESS) {
        snprintf(output_message, sizeof output_message, "cannot write the solution: %s: %s",
                 clmg_status_string(written), error.message);
        if (report.status == CLMG_SUCCESS) {
          report.status = written;
          report.message = output_message;
        }
        code = EXIT_LIBRARY_FAILURE;
      }
    }
    if (options.common.json) {
      print_solve_json(&options, &s, &report, &info);
      cli_json_done();
    } else {
      print_solve_text(&options, &s, &report);
      if (options.output_path && !output_message[0] && x_is_useful && !options.quiet)
        printf("%-18s %s\n", "solution written", options.output_path);
    }
    fflush(stdout);
    if (report.status != CLMG_SUCCESS)
      fprintf(stderr, "%s: %s: %s\n", command, clmg_status_string(report.status), report.message);
  }
  clmg_krylov_result_free(&report.result);
  release_solve(&s);
  return agree_exit(code);
}

/* ---- clmg poisson ---- */

typedef struct distributed_view {
  view_level *levels;
  unsigned long long *halo; /* per level, over all ranks; 0 where gathered */
  int count;
} distributed_view;

typedef struct distributed_poisson {
  clmg_mesh coarse;
  clmg_mpi_poisson_levels levels; /* this rank's rows of every level */
  clmg_context *context;
  clmg_mpi *mpi;
  clmg_options *db;
  clmg_multigrid *multigrid;
  clmg_mpi_matrix
      *finest; /* the hierarchy's finest A (borrowed): the Krylov method's, its halo figures */
  clmg_solver *solver; /* CG or cycles around the hierarchy */
  clmg_vector *b, *x;
  rank_share *shares;
  struct piece_share *pieces;
  double *phases;         /* rank 0: every rank's setup phases (gather_setup_phases) */
  distributed_view *view; /* --view */
} distributed_poisson;

static void release_poisson(distributed_poisson *s) {
  clmg_solver_destroy(s->solver);
  clmg_vector_destroy(s->b);
  clmg_vector_destroy(s->x);
  clmg_multigrid_destroy(s->multigrid);     /* and s->finest, its finest level's matrix */
  clmg_mpi_poisson_levels_free(&s->levels); /* its finest rows may be device vectors */
  clmg_mpi_destroy(s->mpi);
  clmg_context_destroy(s->context);
  clmg_options_destroy(s->db);
  clmg_mesh_free(&s->coarse);
  free(s->shares);
  free(s->pieces);
  free(s->phases);
  if (s->view) {
    free(s->view->levels);
    free(s->view->halo);
    free(s->view);
  }
}

/* What every rank built of the hierarchy, on rank 0: its cells of the
 * partition level, the cells it refined (with the layer around them) and
 * its DOFs on the finest level. */
typedef struct piece_share {
  unsigned long long owned_cells, piece_cells, piece_dofs;
} piece_share;

static void print_pieces(const piece_share *pieces) {
  const char *names[] = {"cells of the partition level", "cells refined", "finest DOFs assembled"};
  printf("%-18s min / max per rank:", "pieces");
  print_ranges((const unsigned long long *)pieces, 3, names);
}

static void json_pieces(json_writer *w, int partition_level, size_t global_cells,
                        const piece_share *pieces) {
  json_integer(w, "partition_level", partition_level);
  json_integer(w, "partition_cells", (long long)global_cells);
  json_array_begin(w, "pieces");
  for (int r = 0; r < world_size; ++r) {
    json_object_begin(w, NULL);
    json_integer(w, "rank", r);
    json_integer(w, "owned_cells", (long long)pieces[r].owned_cells);
    json_integer(w, "piece_cells", (long long)pieces[r].piece_cells);
    json_integer(w, "piece_dofs", (long long)pieces[r].piece_dofs);
    json_object_end(w);
  }
  json_array_end(w);
}

/* Each rank's seconds in the steps of the setup, for --json's setup_phases. */
enum { SETUP_PHASES = 14 };
static const char *const setup_phase_names[SETUP_PHASES] = {
    "hierarchy_s",      "whole_s",        "piece_s",     "piece_assembly_s", "piece_fetch_s",
    "piece_download_s", "piece_meshes_s", "numbering_s", "rows_s",           "matrices_s",
    "matrix_check_s",   "matrix_split_s", "halo_plan_s", "matrix_device_s"};

/* Collective: every rank's phases on rank 0 (SETUP_PHASES per rank), NULL elsewhere. */
static double *gather_setup_phases(const clmg_mpi_poisson_levels *levels, const clmg_mpi *mpi,
                                   double matrices_s) {
  clmg_mpi_matrix_times t;
  clmg_mpi_matrix_times_get(mpi, &t);
  double mine[SETUP_PHASES] = {levels->setup_s,
                               levels->whole_s,
                               levels->piece_s,
                               levels->piece_assembly_s,
                               levels->piece_fetch_s,
                               levels->piece_download_s,
                               levels->piece_meshes_s,
                               levels->numbering_s,
                               levels->rows_s,
                               matrices_s,
                               t.check_s,
                               t.split_s,
                               t.plan_s,
                               t.device_s};
  double *all = world_rank == 0 ? calloc((size_t)world_size * SETUP_PHASES, sizeof *all) : NULL;
  MPI_Gather(mine, SETUP_PHASES, MPI_DOUBLE, all, SETUP_PHASES, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

static void json_setup_phases(json_writer *w, const double *phases) {
  json_array_begin(w, "setup_phases");
  for (int r = 0; phases && r < world_size; ++r) {
    json_object_begin(w, NULL);
    json_integer(w, "rank", r);
    for (int k = 0; k < SETUP_PHASES; ++k)
      json_number(w, setup_phase_names[k], phases[(size_t)r * SETUP_PHASES + k]);
    json_object_end(w);
  }
  json_array_end(w);
}

static piece_share *gather_pieces(const clmg_mpi_poisson_levels *levels) {
  piece_share mine = {levels->owned_cells, levels->piece_cells, levels->piece_dofs};
  piece_share *all = world_rank == 0 ? calloc((size_t)world_size, sizeof *all) : NULL;
  MPI_Gather(&mine, 3, MPI_UNSIGNED_LONG_LONG, all, 3, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return all;
}

/* --view under mpirun: every level of the hierarchy with its rows and
 * nonzeros over all ranks and the values its products exchange (the
 * columns of a rank's rows that other ranks own); the levels gathered onto
 * every rank run whole there. Collective; rank 0 gets the table. */
static distributed_view *view_distributed(const clmg_mpi_level_rows *rows, int count,
                                          const clmg_multigrid *multigrid,
                                          const clmg_matrix_options *matrix) {
  distributed_view *view = calloc(1, sizeof *view);
  distributed_view v = {calloc((size_t)count, sizeof *v.levels),
                        calloc((size_t)count, sizeof *v.halo), count};
  /* on the stack: every rank must reach the reduction below */
  unsigned long long sums[3 * POISSON_MAX_LEVEL + 3] = {0};
  count = count < POISSON_MAX_LEVEL + 1 ? count : POISSON_MAX_LEVEL + 1;
  const int engine_coarsest = count - clmg_multigrid_levels(multigrid);
  for (int l = 0; l < count; ++l) {
    const clmg_csr *a = &rows[l].a;
    sums[3 * l] = a->rows;
    if (!a->row_ptr) { /* rows kept on the device: the engine's matrix says what it holds */
      clmg_mpi_matrix_info info;
      clmg_mpi_matrix_get_info(
          clmg_mpi_operator_matrix(clmg_multigrid_operator(multigrid, l - engine_coarsest)), &info);
      sums[3 * l + 1] = clmg_csr_device_nnz(&rows[l].a_device);
      sums[3 * l + 2] = info.ghosts;
      continue;
    }
    sums[3 * l + 1] = clmg_csr_nnz(a);
    if (l < engine_coarsest)
      continue;
    int32_t *ghosts = NULL;
    size_t ghost_count = 0;
    if (clmg_mpi_ghost_columns(a, rows[l].first_row, a->rows, &ghosts, &ghost_count) ==
        CLMG_SUCCESS)
      sums[3 * l + 2] = ghost_count;
    free(ghosts);
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 3 * count, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int l = 0; v.levels && v.halo && l < count; ++l) {
    view_level *level = &v.levels[l];
    level->rows = (size_t)sums[3 * l];
    level->nonzeros = (size_t)sums[3 * l + 1];
    v.halo[l] = sums[3 * l + 2];
    level->format = clmg_matrix_format_name(matrix->format);
    level->format_description = l < engine_coarsest ? "gathered: whole on every rank"
                                                    : "distributed: local + off-process blocks";
    if (l < engine_coarsest) /* the serial engine's cycle, on every rank */
      level->smoother = "(gathered)";
    if (l == engine_coarsest)
      level->coarse_solver = clmg_multigrid_coarse_solver(multigrid);
    else if (l > engine_coarsest)
      level->smoother = clmg_multigrid_smoother_name(multigrid, l - engine_coarsest);
  }
  if (!view || !v.levels || !v.halo) { /* no table, nothing else lost */
    free(v.levels);
    free(v.halo);
    free(view);
    return NULL;
  }
  *view = v;
  return view;
}

static void print_halos(const distributed_view *v) {
  printf("%-18s", "halo per product");
  for (int l = 0; l < v->count; ++l)
    if (v->halo[l] > 0)
      printf(" L%d %llu", l, v->halo[l]);
  printf(" (values over all ranks; gathered levels exchange none)\n");
}

static int poisson_command(int argc, char **argv, const cli_options *defaults) {
  const char *command = argv[0];
  poisson_options o;
  int code = poisson_parse_options(argc, argv, defaults, &o);
  if (code != 0)
    return code;
  if (o.common.help) {
    poisson_print_usage(stdout);
    return EXIT_SUCCESS;
  }
  if (o.vtk_path)
    return cli_usage(command, "--vtk runs on one process only (started on %d ranks)", world_size);
  if (o.profile > 0)
    return cli_usage(command, "--profile runs on one process only (started on %d ranks)",
                     world_size);
  distributed_poisson s = {0};
  if (!make_distributed_options(command, &o.settings, &s.db, &code) ||
      !refuse_options(command, s.db, 1, &code)) {
    release_poisson(&s);
    return code;
  }
  /* contiguous blocks of a banded numbering are compact pieces of the
   * domain: small halos (2LV's blocks are scattered over it) */
  if (!o.numbering_given)
    o.numbering = CLMG_NUMBERING_CM;
  cli_progress_begin(o.quiet || world_rank != 0);
  s.context = open_rank_context(command, &o.common, o.quiet);
  char message[512] = "";
  if (!s.context)
    snprintf(message, sizeof message, "cannot open the OpenCL device");
  else if (strcmp(clmg_options_get(s.db, "precision"), "float") != 0 &&
           clmg_context_check_precision(s.context, CLMG_DOUBLE) != CLMG_SUCCESS)
    snprintf(message, sizeof message, "%s (try --precision float)",
             clmg_context_message(s.context));
  if (!agree_failure(command, message[0] == '\0', message) ||
      !agree_failure(command, clmg_mpi_create(s.context, MPI_COMM_WORLD, &s.mpi) == CLMG_SUCCESS,
                     clmg_context_message(s.context))) {
    release_poisson(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  /* the hierarchy's options and the solver's from the database, as one
   * process makes them (the same on every rank) */
  int ok = poisson_solver_options(command, &o, s.db, s.context), all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    release_poisson(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  /* the levels up to the partition level whole on every rank, the finer
   * ones from each rank's part of the domain */
  double start = apputil_now();
  clmg_error error = {{0}};
  clmg_status status = poisson_load_coarse_mesh(&o, &s.coarse, &error);
  if (status == CLMG_SUCCESS)
    status = clmg_mesh_check(&s.coarse, &error);
  if (status != CLMG_SUCCESS)
    clmg_context_fail(s.context, status, "the coarse mesh '%s': %s", o.mesh_name, error.message);
  status = clmg_mpi_agree(s.mpi, status);
  clmg_poisson_problem problem;
  poisson_problem_of(&o, &problem);
  clmg_mpi_poisson_options piece_options;
  clmg_mpi_poisson_options_defaults(&piece_options);
  piece_options.degree = o.degree;
  piece_options.numbering = o.numbering;
  piece_options.seed = o.seed;
  piece_options.cells_per_process = o.cells_per_rank;
  piece_options.device_setup = !o.assembly_given || o.assembly_on_device;
  piece_options.device_rows = !o.rows_on_host;
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_poisson_levels_create(s.mpi, &s.coarse, o.level - 1, &problem, &piece_options,
                                            &s.levels);
  double assembly_s = apputil_now() - start;
  /* the slowest rank's piece and whether every piece was built on its device */
  double piece_s = 0;
  int pieces_on_device = 0;
  MPI_Allreduce(&s.levels.piece_s, &piece_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&s.levels.piece_on_device, &pieces_on_device, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int levels = o.level;
  start = apputil_now();
  if (status == CLMG_SUCCESS)
    status = clmg_mpi_multigrid_create(s.mpi, levels, s.levels.levels, &o.multigrid, &s.multigrid);
  const clmg_mpi_level_rows *finest = status == CLMG_SUCCESS ? &s.levels.levels[levels - 1] : NULL;
  /* the solver's operator is the hierarchy's finest matrix (borrowed): no
   * second copy of the largest matrix */
  if (status == CLMG_SUCCESS) {
    s.finest = clmg_mpi_operator_matrix(
        clmg_multigrid_operator(s.multigrid, clmg_multigrid_levels(s.multigrid) - 1));
    if (!s.finest)
      status = clmg_context_fail(s.context, CLMG_ERROR_INVALID_ARGUMENT,
                                 "the hierarchy's finest level is not a distributed matrix");
  }
  clmg_dtype precision = o.multigrid.matrix.precision;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s.context, precision, finest->a.rows, &s.b);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(s.context, precision, finest->a.rows, &s.x);
  if (status == CLMG_SUCCESS && finest->a.rows > 0)
    status = clmg_vector_upload_doubles(s.b, s.levels.b);
  if (status == CLMG_SUCCESS && finest->a.rows > 0)
    status = clmg_vector_upload_doubles(s.x, s.levels.x0);
  if (s.mpi)
    status = clmg_mpi_agree(s.mpi, status);
  const double matrices_s = apputil_now() - start; /* the distributed matrices and vectors */
  if (status != CLMG_SUCCESS) {
    cli_report(command, s.context, status, "building the distributed hierarchy");
    release_poisson(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  /* CG or cycles around the hierarchy, whose setup runs one iteration:
   * the kernels' compilation, so that solve_s is the solve alone */
  status = clmg_mpi_solver_create(s.mpi, s.finest, s.multigrid, 1, s.db, &s.solver);
  if (status != CLMG_SUCCESS) {
    cli_report(command, s.context, status, "setting up the solver");
    release_poisson(&s);
    return EXIT_LIBRARY_FAILURE;
  }
  double kernels_s = clmg_solver_compile_seconds(s.solver);
  double build_s = apputil_now() - start - kernels_s;
  s.shares = gather_shares(s.finest);
  s.pieces = gather_pieces(&s.levels);
  s.phases = gather_setup_phases(&s.levels, s.mpi, matrices_s);
  clmg_mpi_matrix_info info;
  clmg_mpi_matrix_get_info(s.finest, &info);
  /* the engine's coarsest level: level 0, or the finest of the levels gathered */
  const int engine_coarsest = levels - clmg_multigrid_levels(s.multigrid);
  unsigned long long coarse_rows = 0, my_coarse_rows = s.levels.levels[engine_coarsest].a.rows;
  MPI_Allreduce(&my_coarse_rows, &coarse_rows, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  const int partition_level = s.levels.partition_level + 1; /* as --level counts */
  if (o.view)
    s.view = view_distributed(s.levels.levels, levels, s.multigrid, &o.multigrid.matrix);
  if (!o.common.json && world_rank == 0) {
    const clmg_device_info *device = clmg_context_device(s.context);
    printf("%-18s %s, Q%d, level %d (%d levels)\n", "problem", o.mesh_name, o.degree, o.level,
           levels);
    printf("%-18s %llu\n", "unknowns", (unsigned long long)info.global_rows);
    printf("%-18s %llu\n", "nonzeros", (unsigned long long)info.global_nonzeros);
    printf("%-18s %s; levels 1 to %d built whole on every rank, level %d's %zu cells split "
           "into %d parts\n",
           "numbering", clmg_numbering_name(o.numbering), partition_level, partition_level,
           s.levels.global_cells,
           s.levels.global_cells < (size_t)world_size ? (int)s.levels.global_cells : world_size);
    printf("%-18s rank 0: %s (%s)\n", "device", device->name, device->platform_name);
    printf("%-18s %s-cycle, %s %d+%d, coarse %s (%llu unknowns)%s\n", "multigrid",
           clmg_cycle_type_name(o.multigrid.cycle), clmg_smoother_type_name(o.multigrid.smoother),
           o.multigrid.pre_smoothing, o.multigrid.post_smoothing,
           clmg_multigrid_coarse_solver(s.multigrid), coarse_rows,
           o.use_cg ? ", as a CG preconditioner" : "");
    printf("%-18s %g\n", "tolerance", o.tolerance);
    fflush(stdout);
  }
  clmg_krylov_result result = {0};
  start = apputil_now();
  clmg_status solved = clmg_solver_solve(s.solver, s.b, s.x, &result);
  double solve_s = apputil_now() - start;
  if (world_rank == 0) {
    const char *unit = o.use_cg ? "CG iterations" : "cycles";
    if (o.common.json) {
      json_writer w;
      json_result_begin(&w, stdout, "poisson");
      json_string(&w, "mesh", o.mesh_name);
      json_string(&w, "element", o.degree == 1 ? "q1" : "q2");
      json_integer(&w, "level", o.level);
      json_integer(&w, "levels", levels);
      json_integer(&w, "unknowns", (long long)info.global_rows);
      json_integer(&w, "nonzeros", (long long)info.global_nonzeros);
      json_device(&w, clmg_context_device(s.context));
      json_partition(&w, s.shares);
      if (s.view) {
        view_json(&w, s.view->levels, s.view->count);
        json_array_begin(&w, "halo_per_level");
        for (int l = 0; l < s.view->count; ++l)
          json_integer(&w, NULL, (long long)s.view->halo[l]);
        json_array_end(&w);
      }
      json_pieces(&w, partition_level, s.levels.global_cells, s.pieces);
      json_string(&w, "coarse_solver", clmg_multigrid_coarse_solver(s.multigrid));
      json_bool(&w, "converged", result.converged);
      json_string(&w, "status", clmg_status_string(solved));
      json_string(&w, "message", solved != CLMG_SUCCESS ? clmg_context_message(s.context) : "");
      json_integer(&w, "iterations", result.iterations);
      json_string(&w, "iteration_kind", o.use_cg ? "krylov" : "cycle");
      json_number(&w, "relative_residual", result.relative_residual);
      json_number(&w, "assembly_s", assembly_s);
      json_string(&w, "piece_assembly",
                  s.levels.partition_level == levels - 1 ? "none"
                  : pieces_on_device                     ? "device"
                                                         : "host");
      json_number(&w, "piece_s", piece_s);
      json_number(&w, "build_s", build_s);
      /* build_s in two: the distributed matrices, and the solver's setup
       * (its one iteration, compilation excluded) */
      json_number(&w, "matrices_s", matrices_s);
      json_number(&w, "solver_s", build_s - matrices_s);
      json_number(&w, "setup_s", assembly_s + build_s);
      json_setup_phases(&w, s.phases);
      json_number(&w, "kernels_s", kernels_s); /* compile_s's old name, for one release */
      json_number(&w, "compile_s", kernels_s);
      json_number(&w, "solve_s", solve_s);
      json_number(&w, "cycle_s", result.iterations > 0 ? solve_s / result.iterations : 0);
      /* the options as resolved: --options takes them back */
      char *echo = clmg_options_to_json(clmg_solver_options(s.solver), 1);
      json_raw(&w, "options", echo);
      free(echo);
      json_array_begin(&w, "history");
      for (size_t k = 0; k < result.history_length; k++)
        json_number(&w, NULL, result.history[k]);
      json_array_end(&w);
      json_object_end(&w);
      json_end(&w);
      cli_json_done();
    } else {
      printf("%-18s %s\n", "converged", result.converged ? "yes" : "no");
      printf("%-18s %d %s\n", "iterations", result.iterations, unit);
      printf("%-18s %.3e\n", "relative residual", result.relative_residual);
      print_partition(s.shares);
      if (s.view) {
        view_print(s.view->levels, s.view->count);
        print_halos(s.view);
      }
      if (s.levels.partition_level < levels - 1)
        print_pieces(s.pieces);
      else
        printf("%-18s none: the finest level is the partition level, every level was built "
               "whole on every rank\n",
               "pieces");
      printf("%-18s %.4f (the hierarchy in parts %.4f, distributed matrices %.4f, the solver's "
             "setup %.4f: one iteration)\n",
             "setup_s", assembly_s + build_s, assembly_s, matrices_s, build_s - matrices_s);
      if (s.levels.partition_level < levels - 1)
        printf("%-18s %.4f (the slowest rank's piece, built on the %s)\n", "piece_s", piece_s,
               pieces_on_device ? "device" : "host");
      printf("%-18s %.4f\n", "kernels_s", kernels_s);
      printf("%-18s %.4f\n", "solve_s", solve_s);
      if (result.iterations > 0)
        printf("%-18s %.6f (%.3f ms)\n", o.use_cg ? "iteration_s" : "cycle_s",
               solve_s / result.iterations, 1e3 * solve_s / result.iterations);
    }
    fflush(stdout);
    if (solved != CLMG_SUCCESS)
      fprintf(stderr, "%s: %s: %s\n", command, clmg_status_string(solved),
              clmg_context_message(s.context));
  }
  clmg_krylov_result_free(&result);
  release_poisson(&s);
  return agree_exit(solved == CLMG_SUCCESS ? EXIT_SUCCESS : EXIT_LIBRARY_FAILURE);
}

int distributed_cli_main(int argc, char **argv) {
  if (!launched_by_mpirun())
    return cli_main(argc, argv);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  /* pocl builds kernels in files under POCL_CACHE_DIR named by the
   * program; with its kernel cache off, ranks compiling one program at
   * once remove each other's files (pocl then aborts): one directory each */
  const char *pocl_cache = getenv("POCL_CACHE_DIR");
  if (pocl_cache && *pocl_cache) {
    char directory[4096];
    snprintf(directory, sizeof directory, "%s/rank%d", pocl_cache, world_rank);
    mkdir(directory, 0777);
    setenv("POCL_CACHE_DIR", directory, 1);
  }
  if (world_rank != 0) { /* rank 0 speaks for all */
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
      MPI_Abort(MPI_COMM_WORLD, EXIT_LIBRARY_FAILURE);
  }
  cli_distributed runners = {world_size, solve_command, poisson_command};
  cli_set_distributed(&runners);
  int code = cli_main(argc, argv);
  fflush(stdout);
  MPI_Finalize();
  return code;
}
