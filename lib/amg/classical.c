/* Classical (Ruge-Stueben type) coarsening of one AMG level on the host
 * (lib/amg/amg_internal.h): strength of connection, a PMIS C/F splitting
 * and extended+i or direct interpolation, for hypre (BoomerAMG) users.
 *
 * Strength. j != i is a strong neighbour of i (i strongly depends on j,
 * j in S_i) when |a_ij| > 0 and |a_ij| >= theta max_{k != i} |a_ik|: the
 * absolute-value variant (hypre_BoomerAMGCreateSabs), not hypre's default
 * test that only counts couplings of the sign opposite to the diagonal, so
 * SPD matrices that are not M-matrices (elasticity) keep their positive
 * couplings. A row whose off-diagonals are all zero has no strong neighbour.
 * S need not be symmetric; S^T_i lists the points that depend on i.
 *
 * Splitting: PMIS after De Sterck, Yang and Heys, "Reducing complexity in
 * parallel algebraic multigrid preconditioners", SIAM J. Matrix Anal. Appl.
 * 27 (2006). The measure of i is |S^T_i| plus a number in [0, 1) from a
 * hash of i (splitmix64's finaliser, 53 bits): compared exactly as the pair
 * (|S^T_i|, hash), ties (equal hashes) going to the higher index, so the
 * order is total and the same on every run, thread count and device. Points
 * with no strong connection in either direction are F-points at once.
 * Then sweeps: an undecided point whose measure exceeds that of every
 * undecided neighbour in the symmetrised graph S + S^T becomes C; an
 * undecided point next to a new C-point becomes F. Each sweep decides from
 * the previous sweep's state (the sweeps run on all host cores, the result
 * does not depend on their number). One departure from the paper, which
 * turns F only the points that depend on a new C-point: here a point that a
 * new C-point depends on becomes F as well, so no two C-points are strongly
 * connected in either direction (C is a maximal independent set of the
 * symmetrised graph, and every F-point with a strong connection has a
 * C-point as a neighbour in it). Such an F-point may depend on no C-point;
 * the second interpolation pass below serves it.
 *
 * Interpolation: C-points by identity (column = rank of the C-point in row
 * order). An F-point i with strong C-neighbours C_i = C n S_i gets direct
 * interpolation (Stueben, "A review of algebraic multigrid", J. Comput.
 * Appl. Math. 128 (2001); hypre's "direct" with positive and negative
 * couplings separated):
 *   w_ij = -alpha a_ij / a_ii  (a_ij < 0),  -beta a_ij / a_ii  (a_ij > 0),
 *   alpha = sum_{k != i, a_ik < 0} a_ik / sum_{j in C_i, a_ij < 0} a_ij,
 *   beta  = sum_{k != i, a_ik > 0} a_ik / sum_{j in C_i, a_ij > 0} a_ij;
 * when C_i has no positive coupling the positive couplings are added to the
 * diagonal instead (Stueben); when it has no negative one (possible only
 * with the absolute strength) one factor for all couplings is used,
 *   w_ij = -(sum_{k != i} a_ik / sum_{j in C_i} a_ij) a_ij / a_ii.
 * Each form makes the weights of a zero-row-sum row sum to 1, so P
 * reproduces constants there.
 * An F-point i with no strong C-neighbour gets a second, "extended" direct
 * pass (a one-step form of Stueben's standard interpolation): its row is
 * first rewritten by eliminating each strong F-neighbour k (those with
 * a_kk > 0) through k's own row, a^_i = a_i - sum_k (a_ik / a_kk) a_k (so
 * a^_ik = 0, and a^_ii gets -(a_ik / a_kk) a_ki), and the direct formulas
 * above are applied to a^_i with the interpolatory set of the C-points that
 * those k strongly depend on (distance two). When a_i and the a_k have zero
 * row sums so has a^_i: constants are still reproduced. A row whose
 * (rewritten) diagonal is not positive, or whose interpolatory set is empty
 * or has only couplings that cancel, stays empty, as do the rows of points
 * with no strong connection.
 *
 * Extended+i interpolation (De Sterck, Falgout, Nolting and Yang,
 * "Distance-two interpolation for parallel algebraic multigrid", Numer.
 * Linear Algebra Appl. 15 (2008); hypre's interp_type 6) serves every
 * F-point i the same way. Its interpolatory set C^_i is the strong
 * C-neighbours of i and those of its strong F-neighbours F^s_i, where
 * strong here also means of the sign opposite to the row's diagonal
 * (hypre's default strength; the splitting's absolute test would make the
 * positive couplings of DG and elasticity matrices interpolatory, and
 * their negative weights cost SIPG DG 386 CG iterations against direct's
 * 101 at 24,576 rows; with the sign 59). With
 * a-bar_kl = a_kl where a_kl has the sign opposite to a_kk and 0 elsewhere
 * (hypre's sign rule: only such couplings carry a distribution),
 *   w_ij = -(a_ij + sum_{k in F^s_i} a_ik a-bar_kj / s_k) / a~_ii,
 *   a~_ii = a_ii + sum_{n weak} a_in + sum_{k in F^s_i} a_ik a-bar_ki / s_k,
 *   s_k = sum_{l in C^_i u {i}} a-bar_kl,
 * for j in C^_i (a_ij = 0 when j is not a neighbour of i, and a_ij of
 * either sign is taken as it is). "Weak" are the neighbours of i in neither
 * C^_i nor F^s_i (a positive coupling of a positive diagonal's row among
 * them), lumped into the diagonal; a
 * k with s_k = 0 has a_ik lumped there too. The "+i" is the l = i term of
 * s_k: the part of a_ik that k's row sends back to i goes to the diagonal
 * instead of being lost. Every entry of row i lands in the numerators or in
 * a~_ii, and sum_{j} a-bar_kj / s_k over C^_i plus a-bar_ki / s_k is 1, so
 * for a zero row sum a~_ii = -sum_j (numerator of w_ij): the weights sum
 * to 1 and P reproduces constants, whatever the signs. A row whose a~_ii is
 * not positive, or whose C^_i is empty, stays empty.
 *
 * Truncation (hypre's P_max_elmts and trunc_factor, applied to either
 * interpolation by clmg_amg_classical_interpolation): entries smaller in
 * magnitude than the factor times the row's largest are dropped, then all
 * but the max_entries largest (ties to the lower column), and the rest are
 * scaled by (sum before) / (sum after), so row sums are kept.
 *
 * Every parallel pass over the rows writes only its own rows, from arrays
 * the pass does not change (a GPU version maps each to a kernel); S^T and
 * the prefix sums are serial. The interpolation asks about entries of A,
 * not columns: a pass flags each entry strong (and of the sign opposite to
 * its row's diagonal) once, and extended+i finds a column's place in the
 * interpolatory set through a marker array of n entries per thread
 * (hypre's P_marker), reset after each row, in place of searches. */
#include "core/internal.h"

#include "amg/amg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ROW_GRAIN = 8192 };

enum { UNDECIDED = 0, C_POINT = 1, F_POINT = 2 };

/* splitmix64's finaliser of i: 53 random bits, the fraction of the PMIS
 * measure (hash / 2^53 in [0, 1)). */
static uint64_t point_hash(size_t i) {
  uint64_t z = (uint64_t)i + 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return z >> 11;
}

/* One entry of a row being interpolated: its column, value, whether it is
 * in the interpolatory set, and its place in the row (sorting key after
 * the column, so merged sums are added in one fixed order). */
typedef struct entry {
  double value;
  int64_t order;
  int32_t col;
  int32_t interpolatory;
} entry;

/* One coupling a_kl that a strong F-neighbour k of an extended+i row
 * distributes to: its value and l's place in the interpolatory set (-1: l
 * is the row's own point). */
typedef struct share {
  double value;
  int32_t to;
} share;

typedef struct classical {
  const clmg_csr *a;
  size_t n;
  double theta;
  clmg_amg_interpolation interpolation;
  int max_entries;   /* 0: no limit */
  double truncation; /* 0: none */
  double *threshold; /* per row: theta max_{k != i} |a_ik| */
  double *diagonal;
  int64_t *bad_row;          /* per range: the first row with a value that is not finite, or -1 */
  clmg_amg_graph s, st, sym; /* S (rows sorted), S^T and S + S^T */
  uint8_t *state, *next;
  size_t undecided[CLMG_MAX_HOST_THREADS];
  int32_t *coarse; /* the C-points' columns in P, -1 for F-points */
  int64_t *bound;  /* per row: entries of its work row (an upper bound of its P row) */
  uint8_t *flag;   /* per entry of A: STRONG, OPPOSITE, OPPOSITE_C (interpolation only) */
  entry *work[CLMG_MAX_HOST_THREADS];
  /* per range, extended+i: column -> its place in the current row's
   * interpolatory set, -1 elsewhere (hypre's P_marker; n entries, 4 n bytes
   * a host thread, reset after each row for the columns it set) */
  int32_t *marker[CLMG_MAX_HOST_THREADS];
  share *shares[CLMG_MAX_HOST_THREADS]; /* per range, extended+i: a row of A's couplings */
  int32_t *p_col;                       /* rows written at bound's offsets */
  double *p_val;                        /* the same */
  int64_t *p_length;                    /* the entries each row wrote */
} classical;

/* ---- strength ---- */

/* The flags of an entry a_ij of A (c->flag): j in S_i; j in S_i with a_ij
 * of the sign opposite to a_ii (extended+i's strength); the same with j a
 * C-point (set after the splitting). */
enum { STRONG = 1, OPPOSITE = 2, OPPOSITE_C = 4 };

static void threshold_range(void *data, size_t range, size_t begin, size_t end) {
  classical *c = data;
  const clmg_csr *a = c->a;
  c->bad_row[range] = -1;
  for (size_t i = begin; i < end; i++) {
    double largest = 0, diagonal = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      if (!isfinite(a->val[k]) && c->bad_row[range] < 0)
        c->bad_row[range] = (int64_t)i;
      if ((size_t)a->col[k] == i)
        diagonal = a->val[k];
      else if (fabs(a->val[k]) > largest)
        largest = fabs(a->val[k]);
    }
    c->threshold[i] = c->theta * largest;
    c->diagonal[i] = diagonal;
  }
}

/* Row i of S + S^T: the merge of two sorted lists, written to out unless
 * it is NULL; returns its length. */
static int64_t merge_row(const classical *c, size_t i, int32_t *out) {
  int64_t p = c->s.start[i], p_end = c->s.start[i + 1];
  int64_t q = c->st.start[i], q_end = c->st.start[i + 1];
  int64_t count = 0;
  while (p < p_end || q < q_end) {
    int32_t value;
    if (q == q_end || (p < p_end && c->s.neighbour[p] < c->st.neighbour[q]))
      value = c->s.neighbour[p++];
    else if (p == p_end || c->st.neighbour[q] < c->s.neighbour[p])
      value = c->st.neighbour[q++];
    else {
      value = c->s.neighbour[p++];
      q++;
    }
    if (out)
      out[count] = value;
    count++;
  }
  return count;
}

static void sym_count_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  classical *c = data;
  for (size_t i = begin; i < end; i++)
    c->sym.start[i + 1] = merge_row(c, i, NULL);
}

static void sym_fill_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  classical *c = data;
  for (size_t i = begin; i < end; i++)
    merge_row(c, i, c->sym.neighbour + c->sym.start[i]);
}

/* start[1..n] holds counts: make them offsets; returns the total. */
static size_t prefix_sum(int64_t *start, size_t n) {
  start[0] = 0;
  for (size_t i = 0; i < n; i++)
    start[i + 1] += start[i];
  return (size_t)start[n];
}

static clmg_status allocate_graph(clmg_amg_graph *g, size_t entries, const char *what,
                                  clmg_error *error) {
  g->neighbour = clmg_alloc_array(entries ? entries : 1, sizeof *g->neighbour);
  if (!g->neighbour)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "classical AMG: cannot allocate %s of %zu entries", what, entries);
  return CLMG_SUCCESS;
}

/* S, S^T and S + S^T. */
static clmg_status strength(classical *c, clmg_error *error) {
  size_t n = c->n;
  clmg_host_parallel_for(n, ROW_GRAIN, threshold_range, c);
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
    if (c->bad_row[r] >= 0)
      return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                            "classical AMG: row %lld of the matrix holds a value that is not "
                            "finite",
                            (long long)c->bad_row[r]);
  clmg_status status = clmg_amg_strength_graph(c->a, c->threshold, NULL, &c->s, error);
  if (status != CLMG_SUCCESS)
    return status;

  /* S^T by a scatter in row order: its rows come out sorted */
  size_t entries = (size_t)c->s.start[n];
  memset(c->st.start, 0, (n + 1) * sizeof *c->st.start);
  for (size_t k = 0; k < entries; k++)
    c->st.start[c->s.neighbour[k] + 1]++;
  prefix_sum(c->st.start, n);
  status = allocate_graph(&c->st, entries, "the transposed strength graph", error);
  if (status != CLMG_SUCCESS)
    return status;
  for (size_t i = 0; i < n; i++)
    for (int64_t k = c->s.start[i]; k < c->s.start[i + 1]; k++)
      c->st.neighbour[c->st.start[c->s.neighbour[k]]++] = (int32_t)i;
  for (size_t i = n; i > 0; i--) /* the scatter moved each start to the next row's */
    c->st.start[i] = c->st.start[i - 1];
  c->st.start[0] = 0;

  clmg_host_parallel_for(n, ROW_GRAIN, sym_count_range, c);
  status =
      allocate_graph(&c->sym, prefix_sum(c->sym.start, n), "the symmetrised strength graph", error);
  if (status == CLMG_SUCCESS)
    clmg_host_parallel_for(n, ROW_GRAIN, sym_fill_range, c);
  return status;
}

/* ---- PMIS ---- */

/* 1 when the measure of i exceeds that of j. */
static int beats(const classical *c, size_t i, size_t j) {
  int64_t influence_i = c->st.start[i + 1] - c->st.start[i];
  int64_t influence_j = c->st.start[j + 1] - c->st.start[j];
  if (influence_i != influence_j)
    return influence_i > influence_j;
  uint64_t hash_i = point_hash(i), hash_j = point_hash(j);
  if (hash_i != hash_j)
    return hash_i > hash_j;
  return i > j;
}

/* next = state with the new C-points. */
static void select_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  classical *c = data;
  for (size_t i = begin; i < end; i++) {
    uint8_t decision = c->state[i];
    if (decision == UNDECIDED) {
      decision = C_POINT;
      for (int64_t k = c->sym.start[i]; k < c->sym.start[i + 1] && decision == C_POINT; k++) {
        size_t j = (size_t)c->sym.neighbour[k];
        if (c->state[j] == C_POINT || (c->state[j] == UNDECIDED && !beats(c, i, j)))
          decision = UNDECIDED;
      }
    }
    c->next[i] = decision;
  }
}

/* state = next with the neighbours of the new C-points made F. */
static void settle_range(void *data, size_t range, size_t begin, size_t end) {
  classical *c = data;
  size_t undecided = 0;
  for (size_t i = begin; i < end; i++) {
    uint8_t decision = c->next[i];
    for (int64_t k = c->sym.start[i]; k < c->sym.start[i + 1] && decision == UNDECIDED; k++)
      if (c->next[c->sym.neighbour[k]] == C_POINT)
        decision = F_POINT;
    c->state[i] = decision;
    undecided += decision == UNDECIDED;
  }
  c->undecided[range] = undecided;
}

/* The splitting into c->state, the C-points' columns into c->coarse;
 * returns the number of C-points. Every sweep turns at least the undecided
 * point of the largest measure into a C-point, so the loop ends. */
static size_t pmis(classical *c) {
  size_t n = c->n, undecided = 0;
  for (size_t i = 0; i < n; i++) {
    c->state[i] = c->sym.start[i] == c->sym.start[i + 1] ? F_POINT : UNDECIDED;
    undecided += c->state[i] == UNDECIDED;
  }
  while (undecided > 0) {
    memset(c->undecided, 0, sizeof c->undecided);
    clmg_host_parallel_for(n, ROW_GRAIN, select_range, c);
    clmg_host_parallel_for(n, ROW_GRAIN, settle_range, c);
    undecided = 0;
    for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++)
      undecided += c->undecided[r];
  }
  size_t coarse = 0;
  for (size_t i = 0; i < n; i++)
    c->coarse[i] = c->state[i] == C_POINT ? (int32_t)coarse++ : -1;
  return coarse;
}

/* ---- interpolation ---- */

/* The flags of rows [begin, end) (after the splitting): S_i lists its
 * columns in A's order (a subsequence of row i), so one merge finds each
 * strong entry. */
static void flag_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  classical *c = data;
  const clmg_csr *a = c->a;
  for (size_t i = begin; i < end; i++) {
    int64_t s = c->s.start[i], s_end = c->s.start[i + 1];
    double sign = c->diagonal[i] < 0 ? -1.0 : 1.0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
      uint8_t flag = 0;
      if (s < s_end && c->s.neighbour[s] == a->col[k]) {
        s++;
        if (sign * a->val[k] < 0)
          flag =
              c->state[a->col[k]] == C_POINT ? STRONG | OPPOSITE | OPPOSITE_C : STRONG | OPPOSITE;
        else
          flag = STRONG;
      }
      c->flag[k] = flag;
    }
  }
}

/* 1 when F-point i depends strongly on a C-point. */
static int has_strong_c(const classical *c, size_t i) {
  for (int64_t k = c->s.start[i]; k < c->s.start[i + 1]; k++)
    if (c->state[c->s.neighbour[k]] == C_POINT)
      return 1;
  return 0;
}

static int64_t row_length(const clmg_csr *a, size_t i) {
  return a->row_ptr[i + 1] - a->row_ptr[i];
}

/* The entries of row i's work row (its row of A, plus the rows of its
 * strong F-neighbours when it has no strong C-neighbour): an upper bound
 * of its row of P. */
static void bound_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  classical *c = data;
  const clmg_csr *a = c->a;
  for (size_t i = begin; i < end; i++) {
    int64_t bound = 1;
    if (c->state[i] == F_POINT) {
      bound = row_length(a, i);
      if (c->interpolation == CLMG_AMG_EXTENDED_I) {
        for (int64_t k = c->s.start[i]; k < c->s.start[i + 1]; k++)
          if (c->state[c->s.neighbour[k]] == F_POINT)
            bound += row_length(a, (size_t)c->s.neighbour[k]);
      } else if (!has_strong_c(c, i))
        for (int64_t k = c->s.start[i]; k < c->s.start[i + 1]; k++)
          bound += row_length(a, (size_t)c->s.neighbour[k]);
    }
    c->bound[i + 1] = bound;
  }
}

static int entry_compare(const void *x, const void *y) {
  const entry *e = x, *f = y;
  if (e->col != f->col)
    return e->col < f->col ? -1 : 1;
  return e->order < f->order ? -1 : e->order > f->order;
}

static int entry_column_compare(const void *x, const void *y) {
  const entry *e = x, *f = y;
  return (e->col > f->col) - (e->col < f->col);
}

/* Sorts count entries by compare, a strict total order on them (so the
 * result is the one sorted sequence, whatever the method): insertion sort
 * for the few entries of most rows, qsort beyond. */
static void sort_entries(entry *e, size_t count, int (*compare)(const void *, const void *)) {
  if (count > 24) {
    qsort(e, count, sizeof *e, compare);
    return;
  }
  for (size_t k = 1; k < count; k++) {
    entry x = e[k];
    size_t m = k;
    for (; m > 0 && compare(&e[m - 1], &x) > 0; m--)
      e[m] = e[m - 1];
    e[m] = x;
  }
}

/* The row of A for direct interpolation (diagonal left out, in *diagonal);
 * returns the entries. */
static size_t direct_row(const classical *c, size_t i, entry *work) {
  const clmg_csr *a = c->a;
  size_t count = 0;
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
    size_t j = (size_t)a->col[k];
    if (j == i)
      continue;
    entry e = {a->val[k], (int64_t)count, (int32_t)j,
               c->state[j] == C_POINT && (c->flag[k] & STRONG)};
    work[count++] = e;
  }
  return count;
}

/* The rewritten row a^_i = a_i - sum_k (a_ik / a_kk) a_k over the strong
 * F-neighbours k of i (a_kk > 0), merged by column; the interpolatory set:
 * the C-points that those k strongly depend on. *diagonal becomes a^_ii;
 * returns the entries (diagonal left out). */
static size_t extended_row(const classical *c, size_t i, entry *work, double *diagonal) {
  const clmg_csr *a = c->a;
  size_t count = 0;
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
    entry e = {a->val[k], (int64_t)count, a->col[k], 0};
    work[count++] = e;
  }
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
    size_t m = (size_t)a->col[k];
    if (m == i || !(c->flag[k] & STRONG) || c->diagonal[m] <= 0)
      continue;
    double factor = a->val[k] / c->diagonal[m];
    entry cancel = {-a->val[k], (int64_t)count, (int32_t)m, 0}; /* a^_im is exactly 0 */
    work[count++] = cancel;
    for (int64_t q = a->row_ptr[m]; q < a->row_ptr[m + 1]; q++) {
      size_t j = (size_t)a->col[q];
      if (j == m)
        continue;
      entry e = {-factor * a->val[q], (int64_t)count, (int32_t)j,
                 c->state[j] == C_POINT && (c->flag[q] & STRONG)};
      work[count++] = e;
    }
  }
  sort_entries(work, count, entry_compare);
  size_t merged = 0;
  *diagonal = 0;
  for (size_t k = 0; k < count;) {
    entry sum = work[k];
    for (k++; k < count && work[k].col == sum.col; k++) {
      sum.value += work[k].value;
      sum.interpolatory |= work[k].interpolatory;
    }
    if ((size_t)sum.col == i)
      *diagonal = sum.value;
    else
      work[merged++] = sum;
  }
  return merged;
}

/* The direct-interpolation weights of a row (entries sorted by column,
 * diagonal apart) written to col/val; returns their number (0: an empty
 * row). */
static size_t weights(const classical *c, const entry *row, size_t count, double diagonal,
                      int32_t *col, double *val) {
  double negative = 0, positive = 0, c_negative = 0, c_positive = 0;
  for (size_t k = 0; k < count; k++) {
    double v = row[k].value;
    if (v < 0)
      negative += v;
    else
      positive += v;
    if (row[k].interpolatory && v < 0)
      c_negative += v;
    else if (row[k].interpolatory && v > 0)
      c_positive += v;
  }
  double alpha, beta;
  if (c_negative < 0) {
    if (c_positive > 0) {
      beta = positive / c_positive;
    } else {
      diagonal += positive; /* Stueben: positive couplings to the diagonal */
      beta = 0;
    }
    alpha = negative / c_negative;
  } else if (c_positive > 0) {
    alpha = beta = (negative + positive) / c_positive;
  } else {
    return 0;
  }
  if (!(diagonal > 0) || !isfinite(alpha) || !isfinite(beta))
    return 0;
  size_t written = 0;
  for (size_t k = 0; k < count; k++) {
    double v = row[k].value;
    if (!row[k].interpolatory || v == 0)
      continue;
    double w = -(v < 0 ? alpha : beta) * v / diagonal;
    if (w == 0 || !isfinite(w))
      continue;
    col[written] = c->coarse[row[k].col];
    val[written++] = w;
  }
  return written;
}

/* 1 when F-point k is a strong F-neighbour of i (entry q of row i). */
static int strong_f(const classical *c, size_t i, int64_t q) {
  size_t k = (size_t)c->a->col[q];
  return k != i && c->state[k] == F_POINT && (c->flag[q] & OPPOSITE);
}

/* Adds C-point j to the interpolatory set in work (count entries) unless
 * it is there. */
static void add_interpolatory(entry *work, size_t *count, int32_t *marker, int32_t j) {
  if (marker[j] >= 0)
    return;
  marker[j] = (int32_t)*count;
  entry e = {0, 0, j, 1};
  work[(*count)++] = e;
}

/* The extended+i row of F-point i (the comment at the top): C^_i sorted by
 * column in work with the weights' numerators -(a_ij + ...) negated, that
 * is a_ij + sum_k a_ik a-bar_kj / s_k, in value; *diagonal a~_ii. marker
 * (-1 on every column) maps C^_i's columns to their places while the row
 * is made and is -1 again on return. Returns |C^_i|. */
static size_t extended_i_row(const classical *c, size_t i, entry *work, int32_t *marker,
                             share *shares, double *diagonal) {
  const clmg_csr *a = c->a;
  size_t count = 0;
  for (int64_t q = a->row_ptr[i]; q < a->row_ptr[i + 1]; q++) {
    size_t j = (size_t)a->col[q];
    if (j == i || !(c->flag[q] & OPPOSITE))
      continue;
    if (c->state[j] == C_POINT) {
      add_interpolatory(work, &count, marker, (int32_t)j);
    } else if (c->state[j] == F_POINT) {
      for (int64_t r = a->row_ptr[j]; r < a->row_ptr[j + 1]; r++)
        if (c->flag[r] & OPPOSITE_C)
          add_interpolatory(work, &count, marker, a->col[r]);
    }
  }
  sort_entries(work, count, entry_column_compare);
  for (size_t k = 0; k < count; k++)
    marker[work[k].col] = (int32_t)k;

  double d = c->diagonal[i];
  for (int64_t q = a->row_ptr[i]; q < a->row_ptr[i + 1]; q++) {
    size_t k = (size_t)a->col[q];
    if (k == i)
      continue;
    double a_ik = a->val[q];
    int32_t at = marker[k];
    if (at >= 0) {
      work[at].value += a_ik;
      continue;
    }
    if (!strong_f(c, i, q)) {
      d += a_ik; /* weak: lumped */
      continue;
    }
    /* distribute a_ik over C^_i u {i} along k's couplings of the sign
     * opposite to a_kk (i, an F-point, is not in C^_i: marker[i] is -1),
     * in k's order: first their sum s_k, then the shares */
    double sign = c->diagonal[k] < 0 ? -1.0 : 1.0, sum = 0;
    size_t couplings = 0;
    for (int64_t r = a->row_ptr[k]; r < a->row_ptr[k + 1]; r++) {
      size_t l = (size_t)a->col[r];
      if (l == k || !(sign * a->val[r] < 0) || (l != i && marker[l] < 0))
        continue;
      sum += a->val[r];
      share e = {a->val[r], l == i ? -1 : marker[l]};
      shares[couplings++] = e;
    }
    if (sum == 0) {
      d += a_ik;
      continue;
    }
    double part = a_ik / sum;
    for (size_t r = 0; r < couplings; r++) {
      if (shares[r].to < 0)
        d += part * shares[r].value;
      else
        work[shares[r].to].value += part * shares[r].value;
    }
  }
  for (size_t k = 0; k < count; k++)
    marker[work[k].col] = -1;
  *diagonal = d;
  return count;
}

/* The extended+i weights w_ij = -value / a~_ii written to col/val;
 * returns their number (0: an empty row). */
static size_t extended_i_weights(const classical *c, const entry *row, size_t count,
                                 double diagonal, int32_t *col, double *val) {
  if (!(diagonal > 0))
    return 0;
  size_t written = 0;
  for (size_t k = 0; k < count; k++) {
    double w = -row[k].value / diagonal;
    if (w == 0 || !isfinite(w))
      continue;
    col[written] = c->coarse[row[k].col];
    val[written++] = w;
  }
  return written;
}

/* 1 when entry x (value the magnitude, order the place) goes before y:
 * larger first, ties to the earlier place. */
static int magnitude_compare(const void *x, const void *y) {
  const entry *e = x, *f = y;
  if (e->value != f->value)
    return e->value > f->value ? -1 : 1;
  return (e->order > f->order) - (e->order < f->order);
}

static int place_compare(const void *x, const void *y) {
  const entry *e = x, *f = y;
  return (e->order > f->order) - (e->order < f->order);
}

/* Truncates a row of P (col/val, count entries) by the factor and the
 * largest count, rescaling the kept entries to the row's sum (when theirs
 * is not zero); scratch holds count entries. Returns the kept entries, in
 * their order. */
static size_t truncate_row(const classical *c, int32_t *col, double *val, size_t count,
                           entry *scratch) {
  if (count == 0 ||
      (c->truncation <= 0 && (c->max_entries <= 0 || count <= (size_t)c->max_entries)))
    return count;
  double total = 0, largest = 0;
  for (size_t k = 0; k < count; k++) {
    total += val[k];
    largest = fmax(largest, fabs(val[k]));
  }
  size_t candidates = 0;
  for (size_t k = 0; k < count; k++)
    if (fabs(val[k]) >= c->truncation * largest) {
      entry e = {fabs(val[k]), (int64_t)k, 0, 0};
      scratch[candidates++] = e;
    }
  if (c->max_entries > 0 && candidates > (size_t)c->max_entries) {
    sort_entries(scratch, candidates, magnitude_compare);
    candidates = (size_t)c->max_entries;
  }
  sort_entries(scratch, candidates, place_compare); /* back to row order */
  double kept = 0;
  for (size_t k = 0; k < candidates; k++) {
    size_t from = (size_t)scratch[k].order;
    col[k] = col[from]; /* from >= k: the places are increasing */
    val[k] = val[from];
    kept += val[k];
  }
  if (candidates < count && kept != 0 && isfinite(total / kept))
    for (size_t k = 0; k < candidates; k++)
      val[k] *= total / kept;
  return candidates;
}

static void interpolate_range(void *data, size_t range, size_t begin, size_t end) {
  classical *c = data;
  entry *work = c->work[range];
  for (size_t i = begin; i < end; i++) {
    int32_t *col = c->p_col + c->bound[i];
    double *val = c->p_val + c->bound[i];
    size_t written = 0;
    if (c->state[i] == C_POINT) {
      col[0] = c->coarse[i];
      val[0] = 1.0;
      written = 1;
    } else if (c->interpolation == CLMG_AMG_EXTENDED_I) {
      double diagonal = 0;
      size_t count = extended_i_row(c, i, work, c->marker[range], c->shares[range], &diagonal);
      written = extended_i_weights(c, work, count, diagonal, col, val);
    } else {
      double diagonal = c->diagonal[i];
      size_t count =
          has_strong_c(c, i) ? direct_row(c, i, work) : extended_row(c, i, work, &diagonal);
      written = weights(c, work, count, diagonal, col, val);
    }
    written = truncate_row(c, col, val, written, work);
    c->p_length[i + 1] = (int64_t)written;
  }
}

/* P from the splitting: rows written at their bounds' offsets, then packed
 * into p. */
static clmg_status interpolation(classical *c, size_t coarse, clmg_csr *p, clmg_error *error) {
  size_t n = c->n;
  clmg_host_parallel_for(n, ROW_GRAIN, bound_range, c);
  int64_t largest = 0;
  for (size_t i = 0; i < n; i++)
    if (c->bound[i + 1] > largest)
      largest = c->bound[i + 1];
  size_t total = prefix_sum(c->bound, n);
  c->p_col = clmg_alloc_array(total ? total : 1, sizeof *c->p_col);
  c->p_val = clmg_alloc_array(total ? total : 1, sizeof *c->p_val);
  size_t ranges = clmg_host_threads();
  int ok = c->p_col && c->p_val;
  for (size_t r = 0; r < ranges && ok; r++) {
    c->work[r] = clmg_alloc_array(largest ? (size_t)largest : 1, sizeof *c->work[r]);
    ok = c->work[r] != NULL;
  }
  if (!ok)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "classical AMG: cannot allocate the interpolation's %zu entries", total);
  size_t nonzeros = clmg_csr_nnz(c->a);
  c->flag = clmg_alloc_array(nonzeros ? nonzeros : 1, sizeof *c->flag);
  if (!c->flag)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "classical AMG: cannot allocate the strength flags of %zu entries",
                          nonzeros);
  for (size_t r = 0; c->interpolation == CLMG_AMG_EXTENDED_I && r < ranges; r++) {
    c->marker[r] = clmg_alloc_array(n ? n : 1, sizeof *c->marker[r]);
    c->shares[r] = clmg_alloc_array(largest ? (size_t)largest : 1, sizeof *c->shares[r]);
    if (!c->marker[r] || !c->shares[r])
      return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "classical AMG: cannot allocate extended+i interpolation's column "
                            "markers, %zu bytes for each of %zu host threads "
                            "(CLMG_HOST_THREADS=1 needs one)",
                            n * sizeof *c->marker[r], ranges);
    memset(c->marker[r], 0xff, n * sizeof *c->marker[r]); /* -1 everywhere */
  }
  clmg_host_parallel_for(n, ROW_GRAIN, flag_range, c);
  clmg_host_parallel_for(n, ROW_GRAIN, interpolate_range, c);

  size_t entries = prefix_sum(c->p_length, n);
  p->row_ptr = clmg_alloc_array(n + 1, sizeof *p->row_ptr);
  p->col = clmg_alloc_array(entries ? entries : 1, sizeof *p->col);
  p->val = clmg_alloc_array(entries ? entries : 1, sizeof *p->val);
  if (!p->row_ptr || !p->col || !p->val) {
    clmg_csr_free(p);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "classical AMG: cannot allocate a prolongator of %zu entries", entries);
  }
  p->rows = n;
  p->cols = coarse;
  memcpy(p->row_ptr, c->p_length, (n + 1) * sizeof *p->row_ptr);
  for (size_t i = 0; i < n; i++) {
    size_t length = (size_t)(c->p_length[i + 1] - c->p_length[i]);
    memcpy(p->col + p->row_ptr[i], c->p_col + c->bound[i], length * sizeof *p->col);
    memcpy(p->val + p->row_ptr[i], c->p_val + c->bound[i], length * sizeof *p->val);
  }
  return CLMG_SUCCESS;
}

/* ---- entry point ---- */

/* output: the prolongator or the splitting array */
static clmg_status check_input(const clmg_csr *a, double theta, const void *output,
                               const size_t *coarse_count, clmg_error *error) {
  if (!output || !coarse_count)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: an output (prolongator, splitting or coarse count) "
                          "is NULL");
  if (!a || !a->row_ptr || (clmg_csr_nnz(a) > 0 && (!a->col || !a->val)))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: the matrix is missing");
  if (a->rows != a->cols)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG needs a square matrix, not %zu x %zu", a->rows, a->cols);
  if (a->rows > INT32_MAX)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: %zu rows exceed the 32-bit index range", a->rows);
  if (!(theta >= 0 && theta <= 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: strength threshold %g is outside [0, 1]", theta);
  return CLMG_SUCCESS;
}

static void classical_free(classical *c) {
  free(c->threshold);
  free(c->diagonal);
  free(c->bad_row);
  clmg_amg_graph_free(&c->s);
  clmg_amg_graph_free(&c->st);
  clmg_amg_graph_free(&c->sym);
  free(c->state);
  free(c->next);
  free(c->coarse);
  free(c->bound);
  free(c->p_length);
  free(c->p_col);
  free(c->p_val);
  free(c->flag);
  for (size_t r = 0; r < CLMG_MAX_HOST_THREADS; r++) {
    free(c->work[r]);
    free(c->marker[r]);
    free(c->shares[r]);
  }
  memset(c, 0, sizeof *c);
}

/* The strength graphs and the splitting of a (checked) into c; *coarse the
 * number of C-points. */
static clmg_status split(const clmg_csr *a, double theta, classical *c, size_t *coarse,
                         clmg_error *error) {
  size_t n = a->rows, slots = n ? n : 1;
  clmg_status status = CLMG_SUCCESS;
  c->a = a;
  c->n = n;
  c->theta = theta;
  c->threshold = clmg_alloc_array(slots, sizeof *c->threshold);
  c->diagonal = clmg_alloc_array(slots, sizeof *c->diagonal);
  c->bad_row = clmg_alloc_array(CLMG_MAX_HOST_THREADS, sizeof *c->bad_row);
  c->st.start = clmg_alloc_zeroed_array(n + 1, sizeof *c->st.start);
  c->sym.start = clmg_alloc_zeroed_array(n + 1, sizeof *c->sym.start);
  c->state = clmg_alloc_array(slots, sizeof *c->state);
  c->next = clmg_alloc_array(slots, sizeof *c->next);
  c->coarse = clmg_alloc_array(slots, sizeof *c->coarse);
  c->bound = clmg_alloc_zeroed_array(n + 1, sizeof *c->bound);
  c->p_length = clmg_alloc_zeroed_array(n + 1, sizeof *c->p_length);
  if (!c->threshold || !c->diagonal || !c->bad_row || !c->st.start || !c->sym.start || !c->state ||
      !c->next || !c->coarse || !c->bound || !c->p_length)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "classical AMG: cannot allocate the coarsening of %zu rows", n);
  for (size_t r = 0; status == CLMG_SUCCESS && r < CLMG_MAX_HOST_THREADS; r++)
    c->bad_row[r] = -1;
  if (status == CLMG_SUCCESS)
    status = strength(c, error);
  if (status == CLMG_SUCCESS)
    *coarse = pmis(c);
  return status;
}

clmg_status clmg_amg_classical_splitting(const clmg_csr *a, double theta, uint8_t *is_coarse,
                                         size_t *coarse_count, clmg_error *error) {
  clmg_error_clear(error);
  clmg_status status = check_input(a, theta, is_coarse, coarse_count, error);
  if (status != CLMG_SUCCESS)
    return status;
  *coarse_count = 0;
  classical c = {0};
  size_t coarse = 0;
  status = split(a, theta, &c, &coarse, error);
  if (status == CLMG_SUCCESS) {
    for (size_t i = 0; i < a->rows; i++)
      is_coarse[i] = c.state[i] == C_POINT;
    *coarse_count = coarse;
  }
  classical_free(&c);
  return status;
}

/* The prolongator with c's interpolation settings. */
static clmg_status prolongator(const clmg_csr *a, double theta, classical *c, clmg_csr *p,
                               size_t *coarse_count, clmg_error *error) {
  memset(p, 0, sizeof *p);
  *coarse_count = 0;
  size_t coarse = 0;
  clmg_status status = split(a, theta, c, &coarse, error);
  if (status == CLMG_SUCCESS)
    status = interpolation(c, coarse, p, error);
  if (status == CLMG_SUCCESS)
    *coarse_count = coarse;
  classical_free(c);
  return status;
}

clmg_status clmg_amg_classical_prolongator(const clmg_csr *a, double theta, clmg_csr *p,
                                           size_t *coarse_count, clmg_error *error) {
  clmg_error_clear(error);
  clmg_status status = check_input(a, theta, p, coarse_count, error);
  if (status != CLMG_SUCCESS)
    return status;
  classical c = {0};
  c.interpolation = CLMG_AMG_DIRECT;
  return prolongator(a, theta, &c, p, coarse_count, error);
}

clmg_status clmg_amg_classical_interpolation(const clmg_csr *a, const clmg_amg_options *options,
                                             clmg_csr *p, size_t *coarse_count, clmg_error *error) {
  clmg_error_clear(error);
  clmg_amg_options defaults;
  if (!options) {
    clmg_amg_options_defaults(&defaults);
    options = &defaults;
  }
  double theta = options->classical_threshold > 0 ? options->classical_threshold : 0.25;
  clmg_status status = check_input(a, theta, p, coarse_count, error);
  if (status != CLMG_SUCCESS)
    return status;
  if (options->interpolation != CLMG_AMG_EXTENDED_I && options->interpolation != CLMG_AMG_DIRECT)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: interpolation %d is not a clmg_amg_interpolation",
                          (int)options->interpolation);
  if (options->interpolation_max_entries < 0)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: at most %d entries a row of P (give 0 for no limit)",
                          options->interpolation_max_entries);
  if (!(options->interpolation_truncation >= 0 && options->interpolation_truncation < 1))
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "classical AMG: interpolation truncation %g is outside [0, 1)",
                          options->interpolation_truncation);
  classical c = {0};
  c.interpolation = options->interpolation;
  c.max_entries = options->interpolation_max_entries;
  c.truncation = options->interpolation_truncation;
  return prolongator(a, theta, &c, p, coarse_count, error);
}
