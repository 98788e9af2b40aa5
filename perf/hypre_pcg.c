/* clmg_hypre_pcg: the hypre baseline for clmg's AMG benchmark.
 *
 * Reads A (and optionally b) from Matrix Market files, builds a hypre IJ
 * (ParCSR) matrix and vectors on one MPI rank and solves A x = b with PCG
 * preconditioned by BoomerAMG, with the settings Fu et al. 2014 used for
 * their hypre baseline: PMIS coarsening, hybrid symmetric Gauss-Seidel
 * relaxation (symmetric, so CG stays valid), one V-cycle per preconditioner
 * application, strong threshold 0.25. PCG stops on ||r||_2 <= tol ||b||_2.
 * Setup (HYPRE_ParCSRPCGSetup, which includes the BoomerAMG setup) and solve
 * are timed separately with a monotonic clock; the true relative residual
 * ||b - A x|| / ||b|| is recomputed from the CSR arrays afterwards. Prints one
 * JSON object on stdout; on error a JSON object with "status": "error" and
 * exit status 1.
 *
 *   clmg_hypre_pcg A.mtx [b.mtx] [--tol 1e-8] [--maxit 500] [--threads N]
 *                  [--runs N] [--agg-levels N] [--num-functions N]
 *
 * --num-functions N: a vector problem with N unknowns a node, numbered node
 * by node (DOF i is unknown i mod N of its node, e.g. N = 3 for 3D
 * elasticity): BoomerAMG's systems AMG, unknown approach (strength only
 * between equal unknowns). --runs and --agg-levels: see GPU mode below.
 *
 * A: coordinate real or integer, general or symmetric (lower triangle stored,
 * expanded here), square; duplicate entries are summed. b: array real or
 * integer with one column (default: all ones). It is a standalone program:
 * it does not use clmg.
 *
 * It builds against an MPI hypre (Debian's libhypre-dev) or a sequential one
 * (configure --without-MPI, which defines HYPRE_SEQUENTIAL): there hypre's
 * own MPI stand-ins (_hypre_utilities.h) replace MPI's calls, one process.
 * perf/build-hypre-baseline.sh links it statically against a sequential
 * hypre, for a machine that has neither hypre nor MPI.
 *
 * GPU mode. Against a hypre built with CUDA (configure --with-cuda, which
 * defines HYPRE_USING_GPU and HYPRE_USING_CUDA; perf/build-hypre-baseline.sh
 * --gpu) the program runs everything on the GPU, as hypre's user manual
 * shows it ("GPU-supported Options" in solvers-boomeramg.rst of hypre
 * 2.32.0): HYPRE_Initialize, HYPRE_SetMemoryLocation(HYPRE_MEMORY_DEVICE),
 * HYPRE_SetExecutionPolicy(HYPRE_EXEC_DEVICE), hypre's own SpGEMM and the
 * GPU random numbers, matrix and vectors handed to the IJ interface in
 * device memory, and BoomerAMG options from the manual's list of
 * GPU-supported ones: PMIS coarsening (8), extended+i interpolation (6),
 * which hypre computes on the GPU through matrix-matrix products (the
 * manual: "a version of this interpolation based on matrix operations for
 * GPUs", Li, Sjogreen and Yang 2021), l1-Jacobi relaxation (18) in natural
 * order (the manual: relax order "must be false"), the transposes of P kept
 * (the manual: "keep transpose to avoid SpMTV"), strong threshold 0.25 and
 * at most 4 interpolation entries per row as in CPU mode; aggressive
 * coarsening on the first --agg-levels levels (default none) with the
 * GPU-supported extended second-stage interpolation (5). l1-Jacobi keeps
 * the V-cycle symmetric, so CG stays valid. Setup and solve are timed with
 * cudaDeviceSynchronize before each clock reading; the CUDA context and
 * HYPRE_Initialize are timed apart ("init_s"), and the whole setup and
 * solve run --runs times (default 2 here, 1 in CPU mode) on the same
 * matrix with x = 0 each time: the last run is reported, the first one's
 * times too ("first_setup_s", "first_solve_s": cuSPARSE and cuRAND handles,
 * the lazy loading of kernels and the memory pool's growth fall there).
 * x comes back to the host, where the residual is recomputed as in CPU
 * mode. JSON: the fields of CPU mode and "device": "gpu" with the GPU's
 * name.
 */
#define _POSIX_C_SOURCE 200809L /* getline, strcasecmp, clock_gettime */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <HYPRE_config.h>

#ifndef HYPRE_SEQUENTIAL
#include <mpi.h>
#endif

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_krylov.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_utilities.h>

#ifdef HYPRE_SEQUENTIAL
/* hypre without MPI: its stand-ins map MPI_Init, MPI_Finalize, MPI_Comm,
 * MPI_COMM_WORLD and MPI_SUCCESS to hypre_MPI_* (one process). */
#include <_hypre_utilities.h>
#define HYPRE_MPI_BUILD "none (sequential hypre)"
#else
#define HYPRE_MPI_BUILD "MPI"
#endif

#if defined(HYPRE_USING_OPENMP) && defined(_OPENMP)
#include <omp.h>
#define HAVE_HYPRE_THREADS 1
#else
#define HAVE_HYPRE_THREADS 0
#endif

#if defined(HYPRE_USING_GPU) && !defined(HYPRE_USING_CUDA)
#error "clmg_hypre_pcg's GPU mode knows CUDA builds of hypre only (HIP or SYCL: not written)"
#endif
#if defined(HYPRE_USING_CUDA)
#include <cuda_runtime_api.h>
#define GPU_MODE 1
#else
#define GPU_MODE 0
#endif

#if defined(HYPRE_COMPLEX)
#error "clmg_hypre_pcg needs a real (not complex) hypre build"
#endif

#ifdef HYPRE_RELEASE_VERSION
#define HYPRE_VERSION_STRING HYPRE_RELEASE_VERSION
#else
#define HYPRE_VERSION_STRING "unknown"
#endif

#define PROGRAM "clmg_hypre_pcg"
#define STRONG_THRESHOLD 0.25
#define COARSEN_TYPE 8 /* PMIS */
#if GPU_MODE
#define DEVICE_NAME "gpu"
#define RELAX_TYPE 18     /* l1-Jacobi */
#define INTERP_TYPE 6     /* extended+i, by matrix-matrix products on the GPU */
#define AGG_INTERP_TYPE 5 /* extended, for aggressive coarsening's second stage */
#define P_MAX_ELMTS 4
#define DEFAULT_RUNS 2
#define SETTINGS                                                                                   \
  "GPU: PMIS coarsening, extended+i interpolation (matrix-based), l1-Jacobi relaxation, "          \
  "strong threshold 0.25, at most 4 entries per row of P, P^T kept, one V-cycle"
#else
#define DEVICE_NAME "cpu"
#define RELAX_TYPE 6 /* hybrid symmetric Gauss-Seidel */
#define DEFAULT_RUNS 1
#define SETTINGS                                                                                   \
  "PMIS coarsening, hybrid symmetric Gauss-Seidel, strong threshold 0.25, one V-cycle"
#endif

/* ---------------------------------------------------------------- errors */

static char error_message[1024];

/* Records the first error (later ones are usually consequences). */
static void fail(const char *fmt, ...) {
  if (error_message[0] != '\0') {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_message, sizeof error_message, fmt, ap);
  va_end(ap);
}

static void json_string(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\') {
      printf("\\%c", *p);
    } else if (*p < 0x20) {
      printf("\\u%04x", *p);
    } else {
      putchar(*p);
    }
  }
  putchar('"');
}

/* A JSON number, or null when it is not finite. */
static void json_number(const char *fmt, double v) {
  if (isfinite(v)) {
    printf(fmt, v);
  } else {
    fputs("null", stdout);
  }
}

/* Set on MPI ranks other than 0, which print nothing. */
static bool quiet;

static void print_error_json(void) {
  if (quiet) {
    return;
  }
  fputs("{\"solver\": \"hypre BoomerAMG-PCG\", \"status\": \"error\", \"message\": ", stdout);
  json_string(error_message[0] != '\0' ? error_message : "unknown error");
  fputs("}\n", stdout);
  fflush(stdout);
}

/* Checks a hypre return code; on failure records what failed. */
static bool hypre_ok(HYPRE_Int ierr, const char *what) {
  if (ierr == 0) {
    return true;
  }
  char descr[256] = "";
  HYPRE_DescribeError(ierr, descr);
  fail("%s failed (hypre error %d: %s)", what, (int)ierr, descr);
  return false;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------- Matrix Market input */

typedef struct {
  FILE *f;
  const char *path;
  char *line;
  size_t cap;
  long lineno;
} reader;

static bool reader_open(reader *r, const char *path) {
  memset(r, 0, sizeof *r);
  r->path = path;
  r->f = fopen(path, "r");
  if (r->f == NULL) {
    fail("%s: cannot open: %s", path, strerror(errno));
    return false;
  }
  return true;
}

static void reader_close(reader *r) {
  if (r->f != NULL) {
    fclose(r->f);
  }
  free(r->line);
  r->f = NULL;
  r->line = NULL;
}

static bool blank(const char *s) {
  for (; *s != '\0'; s++) {
    if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') {
      return false;
    }
  }
  return true;
}

/* The next line that is neither blank nor a % comment; false at the end of
 * the file (with *eof set) or on a read error. */
static bool next_data_line(reader *r, bool *eof) {
  *eof = false;
  for (;;) {
    errno = 0;
    ssize_t len = getline(&r->line, &r->cap, r->f);
    if (len < 0) {
      if (ferror(r->f)) {
        fail("%s: read error after line %ld: %s", r->path, r->lineno, strerror(errno));
      } else {
        *eof = true;
      }
      return false;
    }
    r->lineno++;
    if ((size_t)len != strlen(r->line)) {
      fail("%s:%ld: NUL byte in the file", r->path, r->lineno);
      return false;
    }
    while (len > 0 && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r')) {
      r->line[--len] = '\0';
    }
    if (r->line[0] != '%' && !blank(r->line)) {
      return true;
    }
  }
}

/* Parses an integer in [lo, hi] at *s and advances *s past it. */
static bool parse_long(reader *r, char **s, long long lo, long long hi, const char *what,
                       long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(*s, &end, 10);
  if (end == *s) {
    fail("%s:%ld: expected %s", r->path, r->lineno, what);
    return false;
  }
  if (errno == ERANGE) {
    fail("%s:%ld: %s overflows", r->path, r->lineno, what);
    return false;
  }
  if (v < lo || v > hi) {
    fail("%s:%ld: %s %lld out of range [%lld, %lld]", r->path, r->lineno, what, v, lo, hi);
    return false;
  }
  *s = end;
  *out = v;
  return true;
}

static bool parse_value(reader *r, char **s, bool integer_field, double *out) {
  char *end;
  double v;
  errno = 0;
  if (integer_field) {
    long long i = strtoll(*s, &end, 10);
    v = (double)i;
  } else {
    v = strtod(*s, &end);
  }
  if (end == *s) {
    fail("%s:%ld: expected a value", r->path, r->lineno);
    return false;
  }
  if ((integer_field && errno == ERANGE) || !isfinite(v)) {
    fail("%s:%ld: value out of range or not finite", r->path, r->lineno);
    return false;
  }
  *s = end;
  *out = v;
  return true;
}

static bool at_line_end(reader *r, const char *s) {
  if (!blank(s)) {
    fail("%s:%ld: unexpected text '%.40s'", r->path, r->lineno, s);
    return false;
  }
  return true;
}

typedef struct {
  bool coordinate; /* else array */
  bool integer;    /* else real */
  bool symmetric;  /* else general */
} mm_header;

/* Reads and checks the %%MatrixMarket banner. */
static bool read_banner(reader *r, mm_header *h) {
  errno = 0;
  if (getline(&r->line, &r->cap, r->f) < 0) {
    fail("%s: empty file or read error (not a Matrix Market file)", r->path);
    return false;
  }
  r->lineno = 1;
  char banner[32], object[32], format[32], field[32], symmetry[32];
  if (sscanf(r->line, "%31s %31s %31s %31s %31s", banner, object, format, field, symmetry) != 5 ||
      strcmp(banner, "%%MatrixMarket") != 0) {
    fail("%s:1: not a Matrix Market banner (expected '%%%%MatrixMarket matrix FORMAT FIELD "
         "SYMMETRY')",
         r->path);
    return false;
  }
  if (strcasecmp(object, "matrix") != 0) {
    fail("%s:1: object '%s' is not supported (only 'matrix')", r->path, object);
    return false;
  }
  if (strcasecmp(format, "coordinate") == 0) {
    h->coordinate = true;
  } else if (strcasecmp(format, "array") == 0) {
    h->coordinate = false;
  } else {
    fail("%s:1: unknown format '%s'", r->path, format);
    return false;
  }
  if (strcasecmp(field, "real") == 0 || strcasecmp(field, "double") == 0) {
    h->integer = false;
  } else if (strcasecmp(field, "integer") == 0) {
    h->integer = true;
  } else {
    fail("%s:1: field '%s' is not supported (only real or integer)", r->path, field);
    return false;
  }
  if (strcasecmp(symmetry, "general") == 0) {
    h->symmetric = false;
  } else if (strcasecmp(symmetry, "symmetric") == 0) {
    h->symmetric = true;
  } else {
    fail("%s:1: symmetry '%s' is not supported (only general or symmetric)", r->path, symmetry);
    return false;
  }
  return true;
}

/* A sparse matrix in CSR form, with hypre's index and value types. */
typedef struct {
  HYPRE_Int n;
  size_t nnz;
  size_t *row_ptr;     /* n + 1 */
  HYPRE_Int *row_len;  /* n, for HYPRE_IJMatrixSetValues */
  HYPRE_BigInt *col;   /* nnz */
  HYPRE_Real *val;     /* nnz */
  HYPRE_BigInt *index; /* 0 .. n-1, row and vector indices */
} csr;

static void csr_free(csr *a) {
  free(a->row_ptr);
  free(a->row_len);
  free(a->col);
  free(a->val);
  free(a->index);
  memset(a, 0, sizeof *a);
}

typedef struct {
  HYPRE_BigInt col;
  HYPRE_Real val;
} col_val;

static int cmp_col(const void *a, const void *b) {
  HYPRE_BigInt x = ((const col_val *)a)->col, y = ((const col_val *)b)->col;
  return (x > y) - (x < y);
}

typedef struct {
  int row, col; /* 0-based */
  double val;
} triplet;

/* Reads A. Storage grows with the entries actually read, so a header's
 * counts alone never size an allocation. */
static bool read_matrix(const char *path, csr *a) {
  reader r;
  triplet *t = NULL;
  col_val *cv = NULL;
  size_t *fill = NULL;
  bool ok = false;
  memset(a, 0, sizeof *a);
  if (!reader_open(&r, path)) {
    return false;
  }
  mm_header h;
  if (!read_banner(&r, &h)) {
    goto out;
  }
  if (!h.coordinate) {
    fail("%s: A must be a sparse (coordinate) Matrix Market matrix", path);
    goto out;
  }
  bool eof;
  if (!next_data_line(&r, &eof)) {
    if (eof) {
      fail("%s: no size line after the banner", path);
    }
    goto out;
  }
  /* hypre's local sizes are HYPRE_Int; keep n + 1 representable too. */
  const long long max_n = (long long)INT_MAX - 1;
  long long rows, cols, entries;
  char *s = r.line;
  if (!parse_long(&r, &s, 1, max_n, "row count", &rows) ||
      !parse_long(&r, &s, 1, max_n, "column count", &cols) ||
      !parse_long(&r, &s, 0, LLONG_MAX, "entry count", &entries) || !at_line_end(&r, s)) {
    goto out;
  }
  if (rows != cols) {
    fail("%s: A is %lld x %lld; it must be square", path, rows, cols);
    goto out;
  }
  size_t count = 0, cap = 0, expanded = 0;
  while (next_data_line(&r, &eof)) {
    if ((long long)count == entries) {
      fail("%s:%ld: more entries than the %lld the size line announces", path, r.lineno, entries);
      goto out;
    }
    long long i, j;
    double v;
    s = r.line;
    if (!parse_long(&r, &s, 1, rows, "row index", &i) ||
        !parse_long(&r, &s, 1, cols, "column index", &j) || !parse_value(&r, &s, h.integer, &v) ||
        !at_line_end(&r, s)) {
      goto out;
    }
    if (h.symmetric && j > i) {
      fail("%s:%ld: entry (%lld, %lld) above the diagonal in a symmetric file (only the lower "
           "triangle may be stored)",
           path, r.lineno, i, j);
      goto out;
    }
    if (count == cap) {
      size_t ncap = cap == 0 ? 1024 : 2 * cap;
      triplet *nt = realloc(t, ncap * sizeof *t);
      if (nt == NULL) {
        fail("%s: out of memory after %zu entries", path, count);
        goto out;
      }
      t = nt;
      cap = ncap;
    }
    t[count++] = (triplet){(int)(i - 1), (int)(j - 1), v};
    expanded += (h.symmetric && i != j) ? 2 : 1;
  }
  if (!eof) {
    goto out;
  }
  if ((long long)count != entries) {
    fail("%s: the size line announces %lld entries but the file has %zu", path, entries, count);
    goto out;
  }
  if (expanded > (size_t)INT_MAX) {
    fail("%s: %zu nonzeros is more than hypre's local index type holds", path, expanded);
    goto out;
  }
  /* A nonsingular matrix has an entry in every row, so n <= expanded; this
   * also bounds the per-row arrays by what the file holds. */
  if ((size_t)rows > expanded) {
    fail("%s: %lld rows but only %zu nonzeros: some row is empty, so A is singular", path, rows,
         expanded);
    goto out;
  }
  const size_t n = (size_t)rows;
  a->n = (HYPRE_Int)n;
  a->row_ptr = calloc(n + 1, sizeof *a->row_ptr);
  fill = malloc(n * sizeof *fill);
  cv = malloc(expanded * sizeof *cv);
  if (a->row_ptr == NULL || fill == NULL || cv == NULL) {
    fail("%s: out of memory for %zu rows and %zu nonzeros", path, n, expanded);
    goto out;
  }
  for (size_t k = 0; k < count; k++) {
    a->row_ptr[t[k].row + 1]++;
    if (h.symmetric && t[k].row != t[k].col) {
      a->row_ptr[t[k].col + 1]++;
    }
  }
  for (size_t i = 0; i < n; i++) {
    a->row_ptr[i + 1] += a->row_ptr[i];
    fill[i] = a->row_ptr[i];
  }
  for (size_t k = 0; k < count; k++) {
    cv[fill[t[k].row]++] = (col_val){t[k].col, (HYPRE_Real)t[k].val};
    if (h.symmetric && t[k].row != t[k].col) {
      cv[fill[t[k].col]++] = (col_val){t[k].row, (HYPRE_Real)t[k].val};
    }
  }
  free(t);
  t = NULL;
  /* Sort each row by column and sum duplicates, compacting in place. */
  size_t out_k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t b = a->row_ptr[i], e = a->row_ptr[i + 1];
    if (b == e) {
      fail("%s: row %zu has no entries, so A is singular", path, i + 1);
      goto out;
    }
    qsort(cv + b, e - b, sizeof *cv, cmp_col);
    a->row_ptr[i] = out_k;
    for (size_t k = b; k < e; k++) {
      if (k > b && cv[k].col == cv[out_k - 1].col) {
        cv[out_k - 1].val += cv[k].val;
      } else {
        cv[out_k++] = cv[k];
      }
    }
  }
  a->row_ptr[n] = out_k;
  a->nnz = out_k;
  a->row_len = malloc(n * sizeof *a->row_len);
  a->index = malloc(n * sizeof *a->index);
  a->col = malloc(out_k * sizeof *a->col);
  a->val = malloc(out_k * sizeof *a->val);
  if (a->row_len == NULL || a->index == NULL || a->col == NULL || a->val == NULL) {
    fail("%s: out of memory for %zu rows and %zu nonzeros", path, n, out_k);
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    a->row_len[i] = (HYPRE_Int)(a->row_ptr[i + 1] - a->row_ptr[i]);
    a->index[i] = (HYPRE_BigInt)i;
  }
  for (size_t k = 0; k < out_k; k++) {
    a->col[k] = cv[k].col;
    a->val[k] = cv[k].val;
  }
  ok = true;
out:
  free(t);
  free(cv);
  free(fill);
  reader_close(&r);
  if (!ok) {
    csr_free(a);
  }
  return ok;
}

/* Reads b, a dense (array) vector of n entries. */
static bool read_vector(const char *path, size_t n, HYPRE_Real *b) {
  reader r;
  bool ok = false;
  if (!reader_open(&r, path)) {
    return false;
  }
  mm_header h;
  if (!read_banner(&r, &h)) {
    goto out;
  }
  if (h.coordinate || h.symmetric) {
    fail("%s: b must be a dense Matrix Market vector ('array real general')", path);
    goto out;
  }
  bool eof;
  if (!next_data_line(&r, &eof)) {
    if (eof) {
      fail("%s: no size line after the banner", path);
    }
    goto out;
  }
  long long rows, cols;
  char *s = r.line;
  if (!parse_long(&r, &s, 1, LLONG_MAX, "row count", &rows) ||
      !parse_long(&r, &s, 1, LLONG_MAX, "column count", &cols) || !at_line_end(&r, s)) {
    goto out;
  }
  if (cols != 1 || (unsigned long long)rows != (unsigned long long)n) {
    fail("%s: b is %lld x %lld; it must be %zu x 1 to match A", path, rows, cols, n);
    goto out;
  }
  size_t count = 0;
  while (next_data_line(&r, &eof)) {
    if (count == n) {
      fail("%s:%ld: more than the %zu values the size line announces", path, r.lineno, n);
      goto out;
    }
    double v;
    s = r.line;
    if (!parse_value(&r, &s, h.integer, &v) || !at_line_end(&r, s)) {
      goto out;
    }
    b[count++] = (HYPRE_Real)v;
  }
  if (!eof) {
    goto out;
  }
  if (count != n) {
    fail("%s: the size line announces %zu values but the file has %zu", path, n, count);
    goto out;
  }
  ok = true;
out:
  reader_close(&r);
  return ok;
}

/* ------------------------------------------------------------ arguments */

typedef struct {
  const char *a_path, *b_path;
  double tol;
  long maxit;
  long threads;    /* 0: the default */
  long runs;       /* setup and solve this often; the last is reported */
  long agg_levels; /* GPU mode: levels of aggressive coarsening */
  long functions;  /* unknowns per node (systems AMG), interleaved */
} options;

static const char usage[] = "usage: " PROGRAM " A.mtx [b.mtx] [--tol 1e-8] [--maxit 500] "
                            "[--threads N] [--runs N] [--agg-levels N] [--num-functions N]";

static bool value_option(const char *arg) {
  static const char *const names[] = {"--tol",        "--maxit",         "--threads", "--runs",
                                      "--agg-levels", "--num-functions", NULL};
  for (int k = 0; names[k] != NULL; k++) {
    if (strcmp(arg, names[k]) == 0) {
      return true;
    }
  }
  return false;
}

static bool parse_args(int argc, char **argv, options *o) {
  *o = (options){NULL, NULL, 1e-8, 500, 0, DEFAULT_RUNS, 0, 1};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (value_option(arg)) {
      if (i + 1 >= argc) {
        fail("%s needs a value; %s", arg, usage);
        return false;
      }
      const char *v = argv[++i];
      char *end;
      errno = 0;
      if (strcmp(arg, "--tol") == 0) {
        o->tol = strtod(v, &end);
        if (end == v || *end != '\0' || errno == ERANGE || !(o->tol > 0.0 && o->tol < 1.0)) {
          fail("--tol '%s': expected a number in (0, 1)", v);
          return false;
        }
      } else {
        const long lo = strcmp(arg, "--agg-levels") == 0 ? 0 : 1;
        long x = strtol(v, &end, 10);
        if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > 1000000) {
          fail("%s '%s': expected an integer in [%ld, 1000000]", arg, v, lo);
          return false;
        }
        if (strcmp(arg, "--maxit") == 0) {
          o->maxit = x;
        } else if (strcmp(arg, "--threads") == 0) {
          o->threads = x;
        } else if (strcmp(arg, "--runs") == 0) {
          o->runs = x;
        } else if (strcmp(arg, "--num-functions") == 0) {
          o->functions = x;
        } else {
          o->agg_levels = x;
        }
      }
    } else if (arg[0] == '-' && arg[1] != '\0') {
      fail("unknown option '%s'; %s", arg, usage);
      return false;
    } else if (o->a_path == NULL) {
      o->a_path = arg;
    } else if (o->b_path == NULL) {
      o->b_path = arg;
    } else {
      fail("too many arguments ('%s'); %s", arg, usage);
      return false;
    }
  }
  if (o->a_path == NULL) {
    fail("no matrix given; %s", usage);
    return false;
  }
  if (!GPU_MODE && o->agg_levels > 0) {
    fail("--agg-levels is for GPU mode (a hypre built with CUDA); this one runs on the CPU");
    return false;
  }
  return true;
}

/* ----------------------------------------------------------------- solve */

typedef struct {
  int threads;
  double init_s;                       /* GPU mode: CUDA context and HYPRE_Initialize */
  double setup_s, solve_s;             /* the last run */
  double first_setup_s, first_solve_s; /* the first run */
  HYPRE_Int iterations;
  HYPRE_Real hypre_rel_res;
  double true_rel_res;
  bool converged;
  char gpu_name[256];
} result;

/* ||b - A x||_2 / ||b||_2 from the CSR arrays, in double. */
static double relative_residual(const csr *a, const HYPRE_Real *b, const HYPRE_Real *x) {
  double rr = 0.0, bb = 0.0;
  for (HYPRE_Int i = 0; i < a->n; i++) {
    double ax = 0.0;
    for (size_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      ax += (double)a->val[k] * (double)x[a->col[k]];
    }
    double r = (double)b[i] - ax;
    rr += r * r;
    bb += (double)b[i] * (double)b[i];
  }
  return sqrt(rr) / sqrt(bb);
}

#if GPU_MODE
static bool cuda_ok(cudaError_t err, const char *what) {
  if (err == cudaSuccess) {
    return true;
  }
  fail("%s failed (CUDA error %d: %s)", what, (int)err, cudaGetErrorString(err));
  return false;
}

/* A device copy of bytes at host (NULL and false on failure). */
static void *to_device(const void *host, size_t bytes, const char *what) {
  void *dev = NULL;
  if (!cuda_ok(cudaMalloc(&dev, bytes), what)) {
    return NULL;
  }
  if (!cuda_ok(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), what)) {
    cudaFree(dev);
    return NULL;
  }
  return dev;
}
#endif

/* Waits for the device (GPU mode), so that a clock reading after it counts
 * the work queued before it. */
static bool device_sync(void) {
#if GPU_MODE
  return cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
  return true;
#endif
}

/* The IJ matrix and vectors of the system. The arrays handed to hypre's IJ
 * interface live where hypre's objects do: on the host in CPU mode, in
 * device memory in GPU mode (hypre's manual: with HYPRE_MEMORY_DEVICE the
 * IJ interface takes "GPU pointers"). */
typedef struct {
  HYPRE_IJMatrix ij_a;
  HYPRE_IJVector ij_b, ij_x;
  HYPRE_ParCSRMatrix par_a;
  HYPRE_ParVector par_b, par_x;
  const HYPRE_BigInt *index; /* 0 .. n-1 where the vectors live */
  HYPRE_Real *x_values;      /* room for x where the vectors live */
#if GPU_MODE
  void *dev[6]; /* device memory: row_len, index, col, val, b, x */
#endif
} ij_system;

static void system_free(ij_system *s) {
  if (s->ij_x != NULL) {
    HYPRE_IJVectorDestroy(s->ij_x);
  }
  if (s->ij_b != NULL) {
    HYPRE_IJVectorDestroy(s->ij_b);
  }
  if (s->ij_a != NULL) {
    HYPRE_IJMatrixDestroy(s->ij_a);
  }
#if GPU_MODE
  for (int k = 0; k < 6; k++) {
    cudaFree(s->dev[k]);
  }
#endif
  memset(s, 0, sizeof *s);
}

static bool system_build(const csr *a, HYPRE_Real *b, HYPRE_Real *x, ij_system *s) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const HYPRE_BigInt last = (HYPRE_BigInt)a->n - 1;
  HYPRE_Int *row_len = a->row_len;
  HYPRE_BigInt *index = a->index, *col = a->col;
  HYPRE_Real *val = a->val, *b_values = b;
  memset(s, 0, sizeof *s);
  s->x_values = x;
#if GPU_MODE
  const size_t n = (size_t)a->n;
  if ((row_len = s->dev[0] = to_device(a->row_len, n * sizeof *row_len, "copying A")) == NULL ||
      (index = s->dev[1] = to_device(a->index, n * sizeof *index, "copying A")) == NULL ||
      (col = s->dev[2] = to_device(a->col, a->nnz * sizeof *col, "copying A")) == NULL ||
      (val = s->dev[3] = to_device(a->val, a->nnz * sizeof *val, "copying A")) == NULL ||
      (b_values = s->dev[4] = to_device(b, n * sizeof *b, "copying b")) == NULL ||
      !cuda_ok(cudaMalloc(&s->dev[5], n * sizeof *x), "cudaMalloc for x")) {
    return false;
  }
  s->x_values = s->dev[5];
#endif
  s->index = index;
  if (!hypre_ok(HYPRE_IJMatrixCreate(comm, 0, last, 0, last, &s->ij_a), "HYPRE_IJMatrixCreate") ||
      !hypre_ok(HYPRE_IJMatrixSetObjectType(s->ij_a, HYPRE_PARCSR),
                "HYPRE_IJMatrixSetObjectType") ||
      (!GPU_MODE && /* the host path's allocation hint */
       !hypre_ok(HYPRE_IJMatrixSetRowSizes(s->ij_a, a->row_len), "HYPRE_IJMatrixSetRowSizes")) ||
      !hypre_ok(HYPRE_IJMatrixInitialize(s->ij_a), "HYPRE_IJMatrixInitialize") ||
      !hypre_ok(HYPRE_IJMatrixSetValues(s->ij_a, a->n, row_len, index, col, val),
                "HYPRE_IJMatrixSetValues") ||
      !hypre_ok(HYPRE_IJMatrixAssemble(s->ij_a), "HYPRE_IJMatrixAssemble") ||
      !hypre_ok(HYPRE_IJMatrixGetObject(s->ij_a, (void **)&s->par_a), "HYPRE_IJMatrixGetObject")) {
    return false;
  }
  HYPRE_IJVector *vecs[2] = {&s->ij_b, &s->ij_x};
  HYPRE_Real *vals[2] = {b_values, NULL};
  HYPRE_ParVector *pars[2] = {&s->par_b, &s->par_x};
  for (int v = 0; v < 2; v++) {
    if (!hypre_ok(HYPRE_IJVectorCreate(comm, 0, last, vecs[v]), "HYPRE_IJVectorCreate") ||
        !hypre_ok(HYPRE_IJVectorSetObjectType(*vecs[v], HYPRE_PARCSR),
                  "HYPRE_IJVectorSetObjectType") ||
        !hypre_ok(HYPRE_IJVectorInitialize(*vecs[v]), "HYPRE_IJVectorInitialize") ||
        (vals[v] != NULL && !hypre_ok(HYPRE_IJVectorSetValues(*vecs[v], a->n, index, vals[v]),
                                      "HYPRE_IJVectorSetValues")) ||
        !hypre_ok(HYPRE_IJVectorAssemble(*vecs[v]), "HYPRE_IJVectorAssemble") ||
        !hypre_ok(HYPRE_IJVectorGetObject(*vecs[v], (void **)pars[v]), "HYPRE_IJVectorGetObject")) {
      return false;
    }
  }
  return device_sync();
}

/* One setup and solve from x = 0 with fresh PCG and BoomerAMG objects: the
 * times, iterations and residuals into *res, x (where the vectors live)
 * into s->x_values. */
static bool run_once(const options *o, const ij_system *s, HYPRE_Int n, result *res) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  HYPRE_Solver pcg = NULL, amg = NULL;
  bool ok = false;
  if (!hypre_ok(HYPRE_ParVectorSetConstantValues(s->par_x, 0.0),
                "HYPRE_ParVectorSetConstantValues")) {
    goto out;
  }
  /* PCG: two-norm, relative tolerance, no absolute floor; quiet. */
  if (!hypre_ok(HYPRE_ParCSRPCGCreate(comm, &pcg), "HYPRE_ParCSRPCGCreate") ||
      !hypre_ok(HYPRE_ParCSRPCGSetTol(pcg, o->tol), "HYPRE_ParCSRPCGSetTol") ||
      !hypre_ok(HYPRE_ParCSRPCGSetAbsoluteTol(pcg, 0.0), "HYPRE_ParCSRPCGSetAbsoluteTol") ||
      !hypre_ok(HYPRE_ParCSRPCGSetMaxIter(pcg, (HYPRE_Int)o->maxit), "HYPRE_ParCSRPCGSetMaxIter") ||
      !hypre_ok(HYPRE_ParCSRPCGSetTwoNorm(pcg, 1), "HYPRE_ParCSRPCGSetTwoNorm") ||
      !hypre_ok(HYPRE_ParCSRPCGSetRelChange(pcg, 0), "HYPRE_ParCSRPCGSetRelChange") ||
      !hypre_ok(HYPRE_ParCSRPCGSetLogging(pcg, 1), "HYPRE_ParCSRPCGSetLogging") ||
      !hypre_ok(HYPRE_ParCSRPCGSetPrintLevel(pcg, 0), "HYPRE_ParCSRPCGSetPrintLevel")) {
    goto out;
  }
  /* BoomerAMG as a preconditioner: one V-cycle, no tolerance, one sweep,
   * PMIS (8), strong threshold 0.25. CPU mode (Fu et al. 2014): hybrid
   * symmetric Gauss-Seidel (6) in natural order, everything else at
   * hypre's defaults. GPU mode: the GPU-supported options of the header
   * comment. */
  if (!hypre_ok(HYPRE_BoomerAMGCreate(&amg), "HYPRE_BoomerAMGCreate") ||
      !hypre_ok(HYPRE_BoomerAMGSetCoarsenType(amg, COARSEN_TYPE),
                "HYPRE_BoomerAMGSetCoarsenType") ||
      !hypre_ok(HYPRE_BoomerAMGSetRelaxType(amg, RELAX_TYPE), "HYPRE_BoomerAMGSetRelaxType") ||
      !hypre_ok(HYPRE_BoomerAMGSetRelaxOrder(amg, 0), "HYPRE_BoomerAMGSetRelaxOrder") ||
      !hypre_ok(HYPRE_BoomerAMGSetNumSweeps(amg, 1), "HYPRE_BoomerAMGSetNumSweeps") ||
      !hypre_ok(HYPRE_BoomerAMGSetStrongThreshold(amg, STRONG_THRESHOLD),
                "HYPRE_BoomerAMGSetStrongThreshold") ||
      !hypre_ok(HYPRE_BoomerAMGSetCycleType(amg, 1), "HYPRE_BoomerAMGSetCycleType") ||
      !hypre_ok(HYPRE_BoomerAMGSetMaxIter(amg, 1), "HYPRE_BoomerAMGSetMaxIter") ||
      !hypre_ok(HYPRE_BoomerAMGSetTol(amg, 0.0), "HYPRE_BoomerAMGSetTol") ||
      !hypre_ok(HYPRE_BoomerAMGSetPrintLevel(amg, 0), "HYPRE_BoomerAMGSetPrintLevel")) {
    goto out;
  }
#if GPU_MODE
  if (!hypre_ok(HYPRE_BoomerAMGSetInterpType(amg, INTERP_TYPE), "HYPRE_BoomerAMGSetInterpType") ||
      !hypre_ok(HYPRE_BoomerAMGSetPMaxElmts(amg, P_MAX_ELMTS), "HYPRE_BoomerAMGSetPMaxElmts") ||
      !hypre_ok(HYPRE_BoomerAMGSetKeepTranspose(amg, 1), "HYPRE_BoomerAMGSetKeepTranspose") ||
      !hypre_ok(HYPRE_BoomerAMGSetRAP2(amg, 0), "HYPRE_BoomerAMGSetRAP2") ||
      !hypre_ok(HYPRE_BoomerAMGSetAggNumLevels(amg, (HYPRE_Int)o->agg_levels),
                "HYPRE_BoomerAMGSetAggNumLevels") ||
      !hypre_ok(HYPRE_BoomerAMGSetAggInterpType(amg, AGG_INTERP_TYPE),
                "HYPRE_BoomerAMGSetAggInterpType")) {
    goto out;
  }
#endif
  /* A vector problem (--num-functions N, e.g. 3 for 3D elasticity): hypre's
   * systems AMG, unknown approach (DOF i is function i mod N), which its
   * GPU strength kernels support too. */
  if (o->functions > 1 && !hypre_ok(HYPRE_BoomerAMGSetNumFunctions(amg, (HYPRE_Int)o->functions),
                                    "HYPRE_BoomerAMGSetNumFunctions")) {
    goto out;
  }
  if (!hypre_ok(HYPRE_ParCSRPCGSetPrecond(pcg, HYPRE_BoomerAMGSolve, HYPRE_BoomerAMGSetup, amg),
                "HYPRE_ParCSRPCGSetPrecond") ||
      !device_sync()) {
    goto out;
  }

  double t0 = now_s();
  if (!hypre_ok(HYPRE_ParCSRPCGSetup(pcg, s->par_a, s->par_b, s->par_x), "HYPRE_ParCSRPCGSetup") ||
      !device_sync()) {
    goto out;
  }
  double t1 = now_s();
  HYPRE_Int ierr = HYPRE_ParCSRPCGSolve(pcg, s->par_a, s->par_b, s->par_x);
  if (!device_sync()) {
    goto out;
  }
  double t2 = now_s();
  res->setup_s = t1 - t0;
  res->solve_s = t2 - t1;
  bool conv_error = false;
  if (ierr != 0 && HYPRE_CheckError(ierr, HYPRE_ERROR_CONV)) {
    /* Not converged within maxit (or stagnated): a result, not an error. */
    conv_error = true;
    ierr &= ~(HYPRE_Int)HYPRE_ERROR_CONV;
    HYPRE_ClearAllErrors();
  }
  if (!hypre_ok(ierr, "HYPRE_ParCSRPCGSolve") ||
      !hypre_ok(HYPRE_ParCSRPCGGetNumIterations(pcg, &res->iterations),
                "HYPRE_ParCSRPCGGetNumIterations") ||
      !hypre_ok(HYPRE_ParCSRPCGGetFinalRelativeResidualNorm(pcg, &res->hypre_rel_res),
                "HYPRE_ParCSRPCGGetFinalRelativeResidualNorm") ||
      !hypre_ok(HYPRE_IJVectorGetValues(s->ij_x, n, s->index, s->x_values),
                "HYPRE_IJVectorGetValues")) {
    goto out;
  }
  HYPRE_Int converged = 0;
  if (!hypre_ok(HYPRE_PCGGetConverged(pcg, &converged), "HYPRE_PCGGetConverged")) {
    goto out;
  }
  res->converged = converged != 0 && !conv_error;
  ok = true;
out:
  if (pcg != NULL) {
    HYPRE_ParCSRPCGDestroy(pcg);
  }
  if (amg != NULL) {
    HYPRE_BoomerAMGDestroy(amg);
  }
  return ok;
}

/* Builds the system, runs o->runs setups and solves (the last one is
 * reported, the first one's times too), and recomputes the residual of the
 * last x on the host. */
static bool solve(const options *o, const csr *a, HYPRE_Real *b, HYPRE_Real *x, result *res) {
  ij_system s;
  bool ok = false;
  if (!system_build(a, b, x, &s)) {
    goto out;
  }
  for (long r = 0; r < o->runs; r++) {
    if (!run_once(o, &s, a->n, res)) {
      goto out;
    }
    if (r == 0) {
      res->first_setup_s = res->setup_s;
      res->first_solve_s = res->solve_s;
    }
  }
#if GPU_MODE
  if (!cuda_ok(cudaMemcpy(x, s.x_values, (size_t)a->n * sizeof *x, cudaMemcpyDeviceToHost),
               "copying x to the host")) {
    goto out;
  }
#endif
  res->true_rel_res = relative_residual(a, b, x);
  ok = true;
out:
  system_free(&s);
  return ok;
}

/* GPU mode: the CUDA context (cudaSetDevice creates the primary context
 * since CUDA 12; cudaFree(0) makes sure of it), then hypre, timed together
 * so that they fall outside setup. hypre's manual: bind the GPU first,
 * HYPRE_Initialize before any other HYPRE_ call, then the memory location
 * and execution policy. */
static bool initialize(result *res) {
  double t0 = now_s();
#if GPU_MODE
  struct cudaDeviceProp prop;
  if (!cuda_ok(cudaSetDevice(0), "cudaSetDevice(0)") || !cuda_ok(cudaFree(NULL), "cudaFree(0)") ||
      !cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) {
    return false;
  }
  snprintf(res->gpu_name, sizeof res->gpu_name, "%s", prop.name);
  if (!hypre_ok(HYPRE_Initialize(), "HYPRE_Initialize") ||
      !hypre_ok(HYPRE_SetMemoryLocation(HYPRE_MEMORY_DEVICE), "HYPRE_SetMemoryLocation") ||
      !hypre_ok(HYPRE_SetExecutionPolicy(HYPRE_EXEC_DEVICE), "HYPRE_SetExecutionPolicy") ||
      /* hypre's own SpGEMM and cuRAND, as the manual's GPU example sets them */
      !hypre_ok(HYPRE_SetSpGemmUseVendor(0), "HYPRE_SetSpGemmUseVendor") ||
      !hypre_ok(HYPRE_SetUseGpuRand(1), "HYPRE_SetUseGpuRand") || !device_sync()) {
    return false;
  }
#else
  if (!hypre_ok(HYPRE_Init(), "HYPRE_Init")) {
    return false;
  }
#endif
  res->init_s = now_s() - t0;
  return true;
}

static void print_result_json(const options *o, const csr *a, const result *r) {
  printf("{\"solver\": \"hypre BoomerAMG-PCG\", \"status\": \"ok\", \"hypre_version\": ");
  json_string(HYPRE_VERSION_STRING);
  printf(", \"device\": \"" DEVICE_NAME "\"");
#if GPU_MODE
  printf(", \"gpu_name\": ");
  json_string(r->gpu_name);
  printf(", \"cuda_runtime\": %d", (int)CUDART_VERSION);
#endif
  printf(", \"settings\": ");
  json_string(SETTINGS);
  printf(", \"strong_threshold\": %g, \"coarsen_type\": %d, \"relax_type\": %d", STRONG_THRESHOLD,
         COARSEN_TYPE, RELAX_TYPE);
#if GPU_MODE
  printf(", \"interp_type\": %d, \"p_max_elmts\": %d, \"keep_transpose\": 1"
         ", \"agg_num_levels\": %ld, \"agg_interp_type\": %d",
         INTERP_TYPE, P_MAX_ELMTS, o->agg_levels, AGG_INTERP_TYPE);
#endif
  printf(", \"num_functions\": %ld, \"matrix\": ", o->functions);
  json_string(o->a_path);
  printf(", \"rhs\": ");
  if (o->b_path != NULL) {
    json_string(o->b_path);
  } else {
    printf("\"ones\"");
  }
  printf(", \"rows\": %d, \"nonzeros\": %zu, \"mpi\": ", (int)a->n, a->nnz);
  json_string(HYPRE_MPI_BUILD);
  printf(", \"mpi_ranks\": 1, \"threads\": %d", r->threads);
  printf(", \"tol\": %g, \"maxit\": %ld, \"runs\": %ld, \"init_s\": ", o->tol, o->maxit, o->runs);
  json_number("%.6f", r->init_s);
  printf(", \"first_setup_s\": ");
  json_number("%.6f", r->first_setup_s);
  printf(", \"first_solve_s\": ");
  json_number("%.6f", r->first_solve_s);
  printf(", \"setup_s\": ");
  json_number("%.6f", r->setup_s);
  printf(", \"solve_s\": ");
  json_number("%.6f", r->solve_s);
  printf(", \"iterations\": %d, \"relative_residual\": ", (int)r->iterations);
  json_number("%.6e", r->true_rel_res);
  printf(", \"hypre_relative_residual\": ");
  json_number("%.6e", (double)r->hypre_rel_res);
  printf(", \"converged\": %s}\n", r->converged ? "true" : "false");
  fflush(stdout);
}

int main(int argc, char **argv) {
  options o;
  csr a = {0};
  HYPRE_Real *b = NULL, *x = NULL;
  result res = {0};
  bool ok = false, mpi = false, hypre = false;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      puts(usage);
      return 0;
    }
  }
  if (!parse_args(argc, argv, &o)) {
    print_error_json();
    return 1;
  }
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fail("MPI_Init failed");
    goto out;
  }
  mpi = true;
#ifdef HYPRE_SEQUENTIAL
  int nranks = 1, rank = 0; /* no MPI: one process */
#else
  int nranks = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
  quiet = rank != 0;
  if (nranks != 1) {
    fail("run on one MPI rank (got %d): the baseline builds the whole matrix on rank 0", nranks);
    goto out;
  }
#if HAVE_HYPRE_THREADS
  if (o.threads > 0) {
    omp_set_num_threads((int)o.threads);
  }
  res.threads = omp_get_max_threads();
#else
  if (o.threads > 1) {
    fprintf(stderr, PROGRAM ": this hypre is built without OpenMP; --threads %ld ignored\n",
            o.threads);
  }
  res.threads = 1;
#endif
  if (!initialize(&res)) {
    goto out;
  }
  hypre = true;

  if (!read_matrix(o.a_path, &a)) {
    goto out;
  }
  const size_t n = (size_t)a.n;
  if (n % (size_t)o.functions != 0) {
    fail("--num-functions %ld: A's %zu rows are not a whole number of nodes", o.functions, n);
    goto out;
  }
  b = malloc(n * sizeof *b);
  x = calloc(n, sizeof *x);
  if (b == NULL || x == NULL) {
    fail("out of memory for vectors of %zu entries", n);
    goto out;
  }
  if (o.b_path != NULL) {
    if (!read_vector(o.b_path, n, b)) {
      goto out;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      b[i] = 1.0;
    }
  }
  double bb = 0.0;
  for (size_t i = 0; i < n; i++) {
    bb += (double)b[i] * (double)b[i];
  }
  if (!(bb > 0.0)) {
    fail("b is zero: the solution is x = 0 and a relative residual is undefined");
    goto out;
  }
  if (!solve(&o, &a, b, x, &res)) {
    goto out;
  }
  print_result_json(&o, &a, &res);
  ok = true;
out:
  if (!ok) {
    print_error_json();
  }
  free(b);
  free(x);
  csr_free(&a);
  if (hypre) {
    HYPRE_Finalize();
  }
  if (mpi) {
    MPI_Finalize();
  }
  return ok ? 0 : 1;
}
