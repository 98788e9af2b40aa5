/* Multicolour Gauss-Seidel smoothing (M. F. Adams, "A distributed memory
 * unstructured Gauss-Seidel algorithm for multigrid smoothers", SC 2001):
 * the rows are coloured so that no two rows of one colour couple, and a
 * step visits the colours in order; the rows of a colour update in
 * parallel, x_i += omega (b_i - sum_j a_ij x_j) / a_ii from the current x,
 * which is a true Gauss-Seidel sweep in colour order (no row of a colour
 * reads another's value). The symmetric form visits the colours forward,
 * then backward, so that its iteration matrix is A-symmetric and a V-cycle
 * with it stays an SPD preconditioner for CG.
 *
 * Colours: Jones and Plassmann, "A parallel graph coloring heuristic"
 * (SIAM J. Sci. Comput. 14, 1993), on the symmetrised pattern (a_ij or
 * a_ji stored: neighbours). Every row's weight is a fixed hash of its index;
 * in a round, every uncoloured row whose weight beats those of all its
 * uncoloured neighbours (ties by index) takes the smallest colour that no
 * coloured neighbour has. The rows chosen in a round do not couple, so a
 * round is one parallel step and a device version gives the same colours;
 * here the host runs it. A few rounds of Culberson's iterated greedy
 * recolouring (class by class, again one parallel step each) then cut the
 * count (2D 5-point: 5 to 4 colours; 3D 27-point: 17 to 14).
 *
 * Device layout (kernel in cl/gauss_seidel.cl): the rows in colour order
 * (rows[], colour c's from colour_start[c]), each packed row holding its
 * off-diagonal entries with those of lower colours first (lower[] counts
 * them) and its diagonal apart. From a zero guess the first forward sweep
 * then reads only the lower entries (the others multiply zeros) and never
 * reads x. The pattern is uploaded once; every setup re-reads the borrowed
 * host matrix's values into the layout and uploads them in the operator's
 * precision (clmg_multigrid_refresh after new values). A colour is one
 * launch; with omega 1 a colour just swept is not swept again at once (the
 * backward sweep's first colour, the next step's first one): its rows'
 * residuals are already zero, so the sweep would not change x. */
#include "solve/internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- colours ---- */

/* The row's weight: clmg_index_priority of its index, the same on every
 * device. */
static uint32_t row_weight(uint32_t i) {
  return clmg_index_priority(i);
}

/* Whether row i comes before row j in Jones-Plassmann's order. */
static int beats(uint32_t i, uint32_t wi, uint32_t j) {
  uint32_t wj = row_weight(j);
  return wi > wj || (wi == wj && i > j);
}

/* A well-formed square host CSR (clmg_csr_check); the failure says which
 * part is wrong, after `what`. */
static clmg_status check_matrix(const clmg_csr *a, const char *what, clmg_error *error) {
  clmg_error why = {{0}};
  clmg_status status = clmg_csr_check(a, &why);
  if (status == CLMG_SUCCESS && a->rows != a->cols)
    status = clmg_error_set(&why, CLMG_ERROR_INVALID_ARGUMENT,
                            "a square host matrix is needed (it is %zu x %zu)", a->rows, a->cols);
  return status == CLMG_SUCCESS ? status
                                : clmg_error_set(error, status, "%s: %s", what, why.message);
}

/* The symmetrised pattern without the diagonal, each neighbour once:
 * adj[start[i] .. start[i + 1]). */
static clmg_status neighbours(const clmg_csr *a, int64_t **start_out, int32_t **adj_out) {
  size_t n = a->rows, nnz = clmg_csr_nnz(a);
  int64_t *start = clmg_alloc_zeroed_array(n + 1, sizeof *start);
  int64_t *cursor = clmg_alloc_array(n + 1, sizeof *cursor);
  int32_t *raw = clmg_alloc_array(2 * nnz + 1, sizeof *raw);
  int32_t *mark = clmg_alloc_array(n + 1, sizeof *mark);
  clmg_status status = CLMG_SUCCESS;
  if (!start || !cursor || !raw || !mark) {
    status = CLMG_ERROR_OUT_OF_HOST_MEMORY;
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
      if ((size_t)a->col[e] != i) {
        start[i + 1]++;
        start[a->col[e] + 1]++;
      }
  for (size_t i = 0; i < n; ++i)
    start[i + 1] += start[i];
  memcpy(cursor, start, (n + 1) * sizeof *cursor);
  for (size_t i = 0; i < n; ++i)
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) {
      int32_t j = a->col[e];
      if ((size_t)j == i)
        continue;
      raw[cursor[i]++] = j;
      raw[cursor[j]++] = (int32_t)i;
    }
  /* drop repeated neighbours in place (a_ij and a_ji both stored) */
  for (size_t i = 0; i < n; ++i)
    mark[i] = -1;
  int64_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t begin = start[i], end = start[i + 1];
    start[i] = kept;
    for (int64_t e = begin; e < end; ++e)
      if (mark[raw[e]] != (int32_t)i) {
        mark[raw[e]] = (int32_t)i;
        raw[kept++] = raw[e];
      }
  }
  start[n] = kept;
done:
  free(cursor);
  free(mark);
  if (status != CLMG_SUCCESS) {
    free(start);
    free(raw);
    start = NULL;
    raw = NULL;
  }
  *start_out = start;
  *adj_out = raw;
  return status;
}

/* Iterated greedy recolouring (Culberson, "Iterated greedy graph
 * coloring and the difficulty landscape", 1992): the classes are visited
 * in some order, each row taking the smallest colour that its neighbours
 * visited before it hold. The rows of one class do not couple, so a class
 * is one parallel step, and a class order never yields more colours than
 * before. Orders alternate: reverse, then largest class first (ties by
 * colour); rounds stop when two in a row gain nothing. rows, start, fresh
 * and taken: scratch of n, n + 1, n and n + 2 entries (taken zeroed). */
enum { RECOLOUR_ROUNDS = 12 };
static void recolour(size_t n, const int64_t *adj_start, const int32_t *adj, int32_t *colour,
                     int32_t *colours, uint32_t *rows, size_t *start, size_t *cursor,
                     int32_t *order, int32_t *fresh, uint64_t *taken) {
  int idle = 0;
  for (int round = 0; round < RECOLOUR_ROUNDS && idle < 2 && *colours > 1; ++round) {
    size_t k = (size_t)*colours;
    /* the rows by class: class c at rows[start[c] .. start[c + 1]) */
    memset(start, 0, (k + 1) * sizeof *start);
    for (size_t i = 0; i < n; ++i)
      start[colour[i] + 1]++;
    for (size_t c = 0; c < k; ++c)
      start[c + 1] += start[c];
    memcpy(cursor, start, k * sizeof *cursor);
    for (size_t i = 0; i < n; ++i)
      rows[cursor[colour[i]]++] = (uint32_t)i;
    for (size_t c = 0; c < k; ++c)
      order[c] = round % 2 == 0 ? (int32_t)(k - 1 - c) : (int32_t)c;
    if (round % 2 == 1) /* largest class first (stable: ties by colour) */
      for (size_t c = 1; c < k; ++c) {
        int32_t moving = order[c];
        size_t size = start[moving + 1] - start[moving], at = c;
        while (at > 0 && start[order[at - 1] + 1] - start[order[at - 1]] < size) {
          order[at] = order[at - 1];
          at--;
        }
        order[at] = moving;
      }
    for (size_t i = 0; i < n; ++i)
      fresh[i] = -1;
    int32_t made = 0;
    for (size_t c = 0; c < k; ++c)
      for (size_t p = start[order[c]]; p < start[order[c] + 1]; ++p) {
        uint32_t i = rows[p];
        /* taken[q] == stamp: a neighbour visited before holds colour q */
        uint64_t stamp = (uint64_t)(round + 1) * n + i + 1;
        for (int64_t e = adj_start[i]; e < adj_start[i + 1]; ++e)
          if (fresh[adj[e]] >= 0)
            taken[fresh[adj[e]]] = stamp;
        int32_t pick = 0;
        while (taken[pick] == stamp)
          pick++;
        fresh[i] = pick;
        if (pick + 1 > made)
          made = pick + 1;
      }
    memcpy(colour, fresh, n * sizeof *colour);
    idle = made < *colours ? 0 : idle + 1;
    *colours = made;
  }
}

clmg_status clmg_gauss_seidel_colour(const clmg_csr *a, int32_t *colour, int *num_colours,
                                     clmg_error *error) {
  clmg_error_clear(error);
  if (!colour || !num_colours)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Gauss-Seidel colours: colour or num_colours is NULL");
  *num_colours = 0;
  clmg_status status = check_matrix(a, "Gauss-Seidel colours", error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t n = a->rows;
  int64_t *start = NULL;
  int32_t *adj = NULL;
  uint32_t *pending = clmg_alloc_array(n + 1, sizeof *pending);
  uint32_t *chosen = clmg_alloc_array(n + 1, sizeof *chosen);
  /* taken[c] == i + 1: colour c is a coloured neighbour's of row i */
  uint64_t *taken = clmg_alloc_zeroed_array(n + 2, sizeof *taken);
  size_t *class_start = clmg_alloc_array(n + 2, sizeof *class_start);
  size_t *cursor = clmg_alloc_array(n + 1, sizeof *cursor);
  int32_t *order = clmg_alloc_array(n + 1, sizeof *order);
  int32_t *fresh = clmg_alloc_array(n + 1, sizeof *fresh);
  if (!pending || !chosen || !taken || !class_start || !cursor || !order || !fresh ||
      neighbours(a, &start, &adj) != CLMG_SUCCESS) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "Gauss-Seidel colours: no host memory for %zu rows", n);
    goto done;
  }
  for (size_t i = 0; i < n; ++i) {
    colour[i] = -1;
    pending[i] = (uint32_t)i;
  }
  size_t left = n;
  int32_t colours = 0;
  while (left > 0) {
    /* the round's choice, from the state before it: rows that beat every
     * uncoloured neighbour (no two of them couple) */
    size_t count = 0;
    for (size_t p = 0; p < left; ++p) {
      uint32_t i = pending[p], wi = row_weight(i);
      int best = 1;
      for (int64_t e = start[i]; e < start[i + 1] && best; ++e)
        if (colour[adj[e]] < 0 && !beats(i, wi, (uint32_t)adj[e]))
          best = 0;
      if (best)
        chosen[count++] = i;
    }
    /* each takes the smallest colour its coloured neighbours leave (they
     * were coloured in earlier rounds: the order within a round is free) */
    for (size_t p = 0; p < count; ++p) {
      uint32_t i = chosen[p];
      for (int64_t e = start[i]; e < start[i + 1]; ++e)
        if (colour[adj[e]] >= 0)
          taken[colour[adj[e]]] = i + 1;
      int32_t pick = 0;
      while (taken[pick] == i + 1)
        pick++;
      colour[i] = pick;
      if (pick + 1 > colours)
        colours = pick + 1;
    }
    size_t kept = 0;
    for (size_t p = 0; p < left; ++p)
      if (colour[pending[p]] < 0)
        pending[kept++] = pending[p];
    left = kept;
  }
  recolour(n, start, adj, colour, &colours, pending, class_start, cursor, order, fresh, taken);
  *num_colours = (int)colours;
done:
  free(start);
  free(adj);
  free(pending);
  free(chosen);
  free(taken);
  free(class_start);
  free(cursor);
  free(order);
  free(fresh);
  return status;
}

/* ---- the host reference ---- */

/* The diagonal of row i (repeated entries summed); 0 when not stored. */
static double row_diagonal(const clmg_csr *a, size_t i) {
  double d = 0;
  for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
    if ((size_t)a->col[e] == i)
      d += a->val[e];
  return d;
}

/* The first row whose diagonal is zero or not finite, else SIZE_MAX. */
static size_t first_bad_diagonal(const clmg_csr *a) {
  for (size_t i = 0; i < a->rows; ++i) {
    double d = row_diagonal(a, i);
    if (d == 0 || !isfinite(d))
      return i;
  }
  return SIZE_MAX;
}

/* Whether the next sweep of `colour` may be left out, the previous sweep
 * having been of the same colour with omega 1: the rows' residuals are
 * zero already. */
static int sweep_is_repeat(int colour, int previous, double omega) {
  return colour == previous && omega == 1.0;
}

clmg_status clmg_gauss_seidel_smooth_host(const clmg_csr *a, const int32_t *colour, int num_colours,
                                          int symmetric, double omega, int steps, const double *b,
                                          double *x, clmg_error *error) {
  clmg_error_clear(error);
  const char *what = "Gauss-Seidel";
  clmg_status status = check_matrix(a, what, error);
  if (status != CLMG_SUCCESS)
    return status;
  size_t n = a->rows;
  if ((n > 0 && (!colour || !b || !x || !a->val)) || num_colours < 0 || steps < 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "%s: colours, b, x and values are needed (%d colours, %d steps)", what,
                          num_colours, steps);
  omega = omega == 0 ? 1.0 : omega;
  if (!(omega > 0 && omega < 2))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "%s: omega %g; it must lie in (0, 2)",
                          what, omega);
  for (size_t i = 0; i < n; ++i) {
    if (colour[i] < 0 || colour[i] >= num_colours)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "%s: row %zu has colour %d, outside [0, %d)", what, i + 1,
                            (int)colour[i], num_colours);
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
      if ((size_t)a->col[e] != i && colour[a->col[e]] == colour[i])
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "%s: rows %zu and %d couple and share colour %d", what, i + 1,
                              (int)a->col[e] + 1, (int)colour[i]);
  }
  size_t bad = first_bad_diagonal(a);
  if (bad != SIZE_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "row %zu has a zero or non-finite diagonal entry (%g); the %s smoother "
                          "needs a nonzero diagonal",
                          bad + 1, row_diagonal(a, bad), what);
  /* the rows by colour, ascending within a colour */
  size_t *start = calloc((size_t)num_colours + 2, sizeof *start);
  size_t *next = calloc((size_t)num_colours + 1, sizeof *next);
  uint32_t *rows = clmg_alloc_array(n + 1, sizeof *rows);
  if (!start || !next || !rows) {
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "%s: no host memory for %zu rows",
                            what, n);
    goto done;
  }
  for (size_t i = 0; i < n; ++i)
    start[colour[i] + 1]++;
  for (int c = 0; c < num_colours; ++c)
    start[c + 1] += start[c];
  memcpy(next, start, (size_t)num_colours * sizeof *next);
  for (size_t i = 0; i < n; ++i)
    rows[next[colour[i]]++] = (uint32_t)i;
  for (int step = 0; step < steps; ++step)
    for (int pass = 0; pass < (symmetric ? 2 : 1); ++pass)
      for (int k = 0; k < num_colours; ++k) {
        int c = pass == 0 ? k : num_colours - 1 - k;
        for (size_t p = start[c]; p < start[c + 1]; ++p) {
          size_t i = rows[p];
          double r = b[i], d = 0;
          for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) {
            r -= a->val[e] * x[a->col[e]];
            if ((size_t)a->col[e] == i)
              d += a->val[e];
          }
          x[i] += omega * r / d;
        }
      }
done:
  free(start);
  free(next);
  free(rows);
  return status;
}

/* ---- the smoother ---- */

typedef struct gs_smoother {
  clmg_context *context;
  const clmg_csr *a; /* borrowed: its pattern, and its values at every setup */
  size_t n, nnz, packed_nnz;
  int symmetric, num_colours;
  double omega;
  /* the layout: colour c's rows at rows[colour_start[c] ..), packed row p
   * of row rows[p] with entries ptr[p] .. ptr[p + 1], the first lower[p]
   * of lower colours; each CSR entry's place in it (-1: diagonal) */
  size_t *colour_start;
  uint32_t *rows, *lower;
  int64_t *ptr, *place;
  int32_t *col;
  double *val, *diagonal; /* refilled at every setup */
  /* per colour, for the traffic model: entries, lower entries, distinct
   * columns read (all, lower only) */
  double *entries, *lower_entries, *columns, *lower_columns;
  /* device copies; val and diagonal in the operator's precision */
  clmg_vector *d_rows, *d_lower, *d_ptr, *d_col, *d_val, *d_diagonal;
  cl_kernel kernel; /* the program manager's */
} gs_smoother;

static void free_values(gs_smoother *s) {
  clmg_vector_destroy(s->d_val);
  clmg_vector_destroy(s->d_diagonal);
  s->d_val = s->d_diagonal = NULL;
  s->kernel = NULL;
}

static void gs_destroy(void *data) {
  gs_smoother *s = data;
  if (!s)
    return;
  free_values(s);
  clmg_vector_destroy(s->d_rows);
  clmg_vector_destroy(s->d_lower);
  clmg_vector_destroy(s->d_ptr);
  clmg_vector_destroy(s->d_col);
  free(s->colour_start);
  free(s->rows);
  free(s->lower);
  free(s->ptr);
  free(s->place);
  free(s->col);
  free(s->val);
  free(s->diagonal);
  free(s->entries);
  free(s->lower_entries);
  free(s->columns);
  free(s->lower_columns);
  free(s);
}

/* The rows by colour and the packed pattern, from a's colours. */
static clmg_status build_layout(gs_smoother *s, const int32_t *colour) {
  const clmg_csr *a = s->a;
  size_t n = s->n, k = (size_t)s->num_colours;
  /* mark[j] == c: column j counted for colour c (mark[n + j]: lower) */
  int32_t *mark = clmg_alloc_array(2 * n + 1, sizeof *mark);
  size_t *cursor = calloc(k + 1, sizeof *cursor);
  s->colour_start = calloc(k + 1, sizeof *s->colour_start);
  s->rows = clmg_alloc_array(n + 1, sizeof *s->rows);
  s->lower = clmg_alloc_array(n + 1, sizeof *s->lower);
  s->ptr = clmg_alloc_array(n + 1, sizeof *s->ptr);
  s->place = clmg_alloc_array(s->nnz + 1, sizeof *s->place);
  s->diagonal = clmg_alloc_array(n + 1, sizeof *s->diagonal);
  s->entries = calloc(k + 1, sizeof *s->entries);
  s->lower_entries = calloc(k + 1, sizeof *s->lower_entries);
  s->columns = calloc(k + 1, sizeof *s->columns);
  s->lower_columns = calloc(k + 1, sizeof *s->lower_columns);
  clmg_status status = CLMG_SUCCESS;
  if (!mark || !cursor || !s->colour_start || !s->rows || !s->lower || !s->ptr || !s->place ||
      !s->diagonal || !s->entries || !s->lower_entries || !s->columns || !s->lower_columns) {
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "Gauss-Seidel smoother: no host memory for the layout of %zu rows", n);
    goto done;
  }
  /* counting sort by colour: rows ascending within a colour */
  for (size_t i = 0; i < n; ++i)
    s->colour_start[colour[i] + 1]++;
  for (size_t c = 0; c < k; ++c)
    s->colour_start[c + 1] += s->colour_start[c];
  memcpy(cursor, s->colour_start, k * sizeof *cursor);
  for (size_t i = 0; i < n; ++i)
    s->rows[cursor[colour[i]]++] = (uint32_t)i;
  /* the packed rows: off-diagonal entries, lower colours first */
  int64_t packed = 0;
  for (size_t p = 0; p < n; ++p) {
    size_t i = s->rows[p];
    s->ptr[p] = packed;
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e)
      packed += (size_t)a->col[e] != i;
  }
  s->ptr[n] = packed;
  s->packed_nnz = (size_t)packed;
  s->col = clmg_alloc_array(s->packed_nnz + 1, sizeof *s->col);
  s->val = clmg_alloc_array(s->packed_nnz + 1, sizeof *s->val);
  if (!s->col || !s->val) {
    status = clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "Gauss-Seidel smoother: no host memory for %zu entries", s->packed_nnz);
    goto done;
  }
  for (size_t i = 0; i < 2 * n; ++i)
    mark[i] = -1;
  for (size_t c = 0; c < k; ++c)
    for (size_t p = s->colour_start[c]; p < s->colour_start[c + 1]; ++p) {
      size_t i = s->rows[p];
      int64_t at = s->ptr[p];
      uint32_t lower = 0;
      for (int pass = 0; pass < 2; ++pass) /* lower colours, then higher */
        for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) {
          int32_t j = a->col[e];
          if ((size_t)j == i) {
            s->place[e] = -1;
            continue;
          }
          if ((colour[j] < (int32_t)c) != (pass == 0))
            continue;
          s->place[e] = at;
          s->col[at++] = j;
          s->entries[c] += 1;
          if (mark[j] != (int32_t)c) {
            mark[j] = (int32_t)c;
            s->columns[c] += 1;
          }
          if (pass == 0) {
            lower++;
            s->lower_entries[c] += 1;
            if (mark[n + (size_t)j] != (int32_t)c) {
              mark[n + (size_t)j] = (int32_t)c;
              s->lower_columns[c] += 1;
            }
          }
        }
      s->lower[p] = lower;
    }
done:
  free(mark);
  free(cursor);
  return status;
}

/* The packed values and diagonals from a's current values; fails naming
 * the first row (in row order) whose diagonal is zero or not finite. */
static clmg_status fill_values(gs_smoother *s) {
  const clmg_csr *a = s->a;
  size_t bad = SIZE_MAX;
  for (size_t p = 0; p < s->n; ++p) {
    size_t i = s->rows[p];
    double d = 0;
    for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) {
      if (s->place[e] < 0)
        d += a->val[e];
      else
        s->val[s->place[e]] = a->val[e];
    }
    s->diagonal[p] = d;
    if ((d == 0 || !isfinite(d)) && (bad == SIZE_MAX || i < bad))
      bad = i;
  }
  if (bad != SIZE_MAX)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "row %zu has a zero or non-finite diagonal entry (%g); the Gauss-Seidel "
                     "smoother needs a nonzero diagonal",
                     bad + 1, row_diagonal(a, bad));
  return CLMG_SUCCESS;
}

/* The first setup uploads the pattern; every setup reads a's values and
 * uploads them in the operator's precision (new arrays and kernel when the
 * precision changed). */
static clmg_status gs_setup(void *data, const clmg_operator *a) {
  gs_smoother *s = data;
  if (a->rows != s->n || a->cols != s->n)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Gauss-Seidel smoother: made for %zu rows, the operator is %zu x %zu", s->n,
                     a->rows, a->cols);
  if (s->a->rows != s->n || clmg_csr_nnz(s->a) != s->nnz || (s->nnz > 0 && !s->a->val))
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Gauss-Seidel smoother: its matrix has %zu rows and %zu entries, it was made "
                     "with %zu and %zu (new values must keep the pattern)",
                     s->a->rows, clmg_csr_nnz(s->a), s->n, s->nnz);
  clmg_dtype real = a->precision;
  if (real != CLMG_DOUBLE && real != CLMG_FLOAT)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Gauss-Seidel smoother: the operator's precision is %s; double or float "
                     "is needed",
                     clmg_dtype_name(real));
  if (real == CLMG_DOUBLE && !s->context->info.has_fp64)
    return clmg_fail_no_fp64(s->context, "a double vector");
  clmg_status status = fill_values(s);
  if (status != CLMG_SUCCESS)
    return status;
  if (!s->d_rows) {
    status = clmg_vector_create_from_host(s->context, CLMG_UINT32, s->n + 1, s->rows, &s->d_rows);
    if (status == CLMG_SUCCESS)
      status =
          clmg_vector_create_from_host(s->context, CLMG_UINT32, s->n + 1, s->lower, &s->d_lower);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create_from_host(s->context, CLMG_INT64, s->n + 1, s->ptr, &s->d_ptr);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create_from_host(s->context, CLMG_INT32, s->packed_nnz + 1, s->col,
                                            &s->d_col);
    if (status != CLMG_SUCCESS) {
      clmg_vector_destroy(s->d_rows);
      clmg_vector_destroy(s->d_lower);
      clmg_vector_destroy(s->d_ptr);
      clmg_vector_destroy(s->d_col);
      s->d_rows = s->d_lower = s->d_ptr = s->d_col = NULL;
      return status;
    }
  }
  if (s->d_val && clmg_vector_type(s->d_val) != real)
    free_values(s);
  if (!s->d_val) {
    status = clmg_vector_create_unset(s->context, real, s->packed_nnz + 1, &s->d_val);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create_unset(s->context, real, s->n + 1, &s->d_diagonal);
    if (status == CLMG_SUCCESS)
      status = clmg_get_kernel(s->context, "gauss_seidel", clmg_real_options(s->context, real),
                               "gauss_seidel_sweep", &s->kernel);
    if (status != CLMG_SUCCESS) {
      free_values(s);
      return status;
    }
  }
  /* (the arrays' last slot is padding for empty ones; it is uploaded too) */
  s->val[s->packed_nnz] = 0;
  s->diagonal[s->n] = 1;
  status = clmg_vector_upload_doubles(s->d_val, s->val);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_upload_doubles(s->d_diagonal, s->diagonal);
  return status;
}

/* Calls visit(colour, from_zero) for every sweep of `steps` steps: colours
 * forward (then backward when symmetric), a colour just swept left out
 * with omega 1; from_zero on the first forward sweep from a zero guess. */
typedef clmg_status (*sweep_visit)(void *data, int colour, int from_zero);
static clmg_status for_each_sweep(const gs_smoother *s, int steps, int x_is_zero, sweep_visit visit,
                                  void *data) {
  int k = s->num_colours, previous = -1;
  clmg_status status = CLMG_SUCCESS;
  for (int step = 0; step < steps && status == CLMG_SUCCESS; ++step)
    for (int pass = 0; pass < (s->symmetric ? 2 : 1) && status == CLMG_SUCCESS; ++pass)
      for (int j = 0; j < k && status == CLMG_SUCCESS; ++j) {
        int c = pass == 0 ? j : k - 1 - j;
        if (sweep_is_repeat(c, previous, s->omega))
          continue;
        previous = c;
        status = visit(data, c, x_is_zero && step == 0 && pass == 0);
      }
  return status;
}

typedef struct apply_job {
  gs_smoother *s;
  clmg_dtype real;
  const clmg_vector *b;
  clmg_vector *x;
  double bytes; /* the traffic model's sum */
} apply_job;

static clmg_status launch_sweep(void *data, int colour, int from_zero) {
  apply_job *job = data;
  gs_smoother *s = job->s;
  uint64_t first = s->colour_start[colour], count = s->colour_start[colour + 1] - first;
  cl_uint zero = (cl_uint)from_zero;
  clmg_kernel_args args;
  clmg_args_begin(&args, s->context, s->kernel, "gauss_seidel_sweep");
  clmg_arg_ulong(&args, first);
  clmg_arg_ulong(&args, count);
  clmg_arg_buffer(&args, s->d_rows->buffer);
  clmg_arg_buffer(&args, s->d_lower->buffer);
  clmg_arg_buffer(&args, s->d_ptr->buffer);
  clmg_arg_buffer(&args, s->d_col->buffer);
  clmg_arg_buffer(&args, s->d_val->buffer);
  clmg_arg_buffer(&args, s->d_diagonal->buffer);
  clmg_arg_vector(&args, job->b);
  clmg_arg_vector(&args, job->x);
  clmg_arg_real(&args, job->real, s->omega);
  clmg_arg_raw(&args, sizeof zero, &zero);
  return clmg_launch_args(&args, count);
}

static clmg_status gs_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                            clmg_vector *x, int steps, int x_is_zero) {
  gs_smoother *s = data;
  if (!s->d_val)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Gauss-Seidel smoother: applied before its setup");
  if (a->precision != clmg_vector_type(s->d_val) || clmg_vector_length(b) != s->n ||
      clmg_vector_length(x) != s->n || clmg_vector_type(b) != a->precision ||
      clmg_vector_type(x) != a->precision)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Gauss-Seidel smoother: set up for %zu rows in %s; b has %zu %s, x %zu %s, "
                     "the operator is %s",
                     s->n, clmg_dtype_name(clmg_vector_type(s->d_val)), clmg_vector_length(b),
                     clmg_dtype_name(clmg_vector_type(b)), clmg_vector_length(x),
                     clmg_dtype_name(clmg_vector_type(x)), clmg_dtype_name(a->precision));
  apply_job job = {.s = s, .real = a->precision, .b = b, .x = x};
  return for_each_sweep(s, steps, x_is_zero, launch_sweep, &job);
}

/* A sweep of a colour reads its rows' indices, offsets, diagonals and b,
 * its packed entries (column and value) and x at their distinct columns
 * once at best, and reads and writes x on its rows; the first forward
 * sweep from a zero guess reads only the lower entries, their columns' x
 * and the split, and writes x without reading it. */
static clmg_status count_sweep(void *data, int colour, int from_zero) {
  apply_job *job = data;
  const gs_smoother *s = job->s;
  double real = (double)clmg_dtype_size(job->real);
  double rows = (double)(s->colour_start[colour + 1] - s->colour_start[colour]);
  double per_row = 4.0 + 8.0 + 2.0 * real; /* row index, offset, diagonal, b */
  if (from_zero)
    job->bytes += rows * (per_row + 4.0 + real) + 8.0 + s->lower_entries[colour] * (4.0 + real) +
                  s->lower_columns[colour] * real;
  else
    job->bytes += rows * (per_row + 2.0 * real) + 8.0 + s->entries[colour] * (4.0 + real) +
                  s->columns[colour] * real;
  return CLMG_SUCCESS;
}

static double gs_bytes(void *data, const clmg_operator *a, int steps, int x_is_zero) {
  apply_job job = {.s = data, .real = a->precision};
  for_each_sweep(data, steps, x_is_zero, count_sweep, &job);
  return job.bytes;
}

static double gs_damping(void *data) {
  return ((gs_smoother *)data)->omega;
}

clmg_status clmg_smoother_gauss_seidel(clmg_context *context, const clmg_csr *a, int symmetric,
                                       double omega, clmg_smoother *smoother) {
  if (!context || !smoother)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(smoother, 0, sizeof *smoother);
  clmg_clear_message(context);
  clmg_error error = {{0}};
  clmg_status status = check_matrix(a, "Gauss-Seidel smoother", &error);
  if (status != CLMG_SUCCESS)
    return clmg_fail(context, status, "%s", error.message);
  omega = omega == 0 ? 1.0 : omega;
  if (!(omega > 0 && omega < 2))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Gauss-Seidel smoother: omega %g; it must lie in (0, 2)", omega);
  size_t bad = first_bad_diagonal(a);
  if (bad != SIZE_MAX)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "row %zu has a zero or non-finite diagonal entry (%g); the Gauss-Seidel "
                     "smoother needs a nonzero diagonal",
                     bad + 1, row_diagonal(a, bad));
  gs_smoother *s = calloc(1, sizeof *s);
  int32_t *colour = clmg_alloc_array(a->rows + 1, sizeof *colour);
  if (!s || !colour) {
    free(s);
    free(colour);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "Gauss-Seidel smoother: no host memory for %zu rows", a->rows);
  }
  s->context = context;
  s->a = a;
  s->n = a->rows;
  s->nnz = clmg_csr_nnz(a);
  s->symmetric = symmetric != 0;
  s->omega = omega;
  status = clmg_gauss_seidel_colour(a, colour, &s->num_colours, &error);
  if (status != CLMG_SUCCESS)
    status = clmg_fail(context, status, "%s", error.message);
  if (status == CLMG_SUCCESS)
    status = build_layout(s, colour);
  free(colour);
  if (status != CLMG_SUCCESS) {
    gs_destroy(s);
    return status;
  }
  smoother->data = s;
  smoother->name = s->symmetric ? "symmetric-gauss-seidel" : "gauss-seidel";
  smoother->setup = gs_setup;
  smoother->apply = gs_apply;
  smoother->bytes = gs_bytes;
  smoother->damping = gs_damping;
  smoother->destroy = gs_destroy;
  return CLMG_SUCCESS;
}
