/* The coarse tail (lib/solve/coarse_tail.c): a whole multigrid sub-cycle
 * over the levels 0..top in ONE work-group, the phases (smoothing steps,
 * defect, restriction, coarse solve, prolongation) apart by barriers. Below
 * the size where a device is latency-bound every kernel of the cycle costs
 * a launch; here the levels cost one launch per cycle.
 *
 * The levels' A, P and R are CSR, packed: `index` holds every matrix's row
 * offsets (local to the matrix) and columns, `values` every matrix's values,
 * each level's smoother diagonal W and its step coefficients; `work` each
 * level's x, b and d (the smoother's direction, then the defect). meta holds
 * per level the offsets below (TAIL_* names them). The cycle is the
 * engine's (lib/solve/multigrid.c, cycle()) unrolled on the host into a
 * program of operations (OP_*), one loop over it here with one barrier
 * after each: every work-item reads the same program, so the whole group
 * reaches every barrier, and the loop is the only one around a barrier. */

#define TAIL_N 0
#define TAIL_A 1 /* row offsets, columns (index), values: 3 entries */
#define TAIL_P 4
#define TAIL_R 7
#define TAIL_W 10    /* values: the smoother's diagonal */
#define TAIL_COEF 11 /* values: alpha_k, beta_k of step k at 2k, 2k + 1 */
#define TAIL_X 12    /* work: x, b, d */
#define TAIL_B 13
#define TAIL_D 14
#define TAIL_META 15

/* The operations of a cycle's program, four ints each: code, level, step */
#define OP_END 0
#define OP_ZERO 1      /* x = 0 */
#define OP_FIRST 2     /* from x = 0: d = alpha W b, x = d */
#define OP_DIRECTION 3 /* d = beta d + alpha W (b - A x) */
#define OP_UPDATE 4    /* x += d */
#define OP_DEFECT 5    /* d = b - A x */
#define OP_RESTRICT 6  /* b of level - 1 = R d */
#define OP_COARSE 7    /* x = A^-1 b on level 0 */
#define OP_PROLONG 8   /* x += P x of level - 1 */
#define TAIL_OP 4

/* Row i of the CSR matrix whose offsets start at meta[m] times v. */
inline real row_times(global const int *meta, int m, global const int *index,
                      global const real *values, ulong i, global const real *v) {
  global const int *row_ptr = index + meta[m];
  global const int *col = index + meta[m + 1];
  global const real *val = values + meta[m + 2];
  real sum = 0;
  for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
    sum += val[k] * v[col[k]];
  return sum;
}

/* Runs the program from `start` to its OP_END, one barrier after each
 * operation; the cycle starts on level `top`, whose b and x are the
 * caller's vectors (the other levels' are in work). */
kernel void coarse_tail_cycle(int top, int start, global const int *program,
                              global const int *meta, global const int *index,
                              global const real *values, global real *work,
                              global const real *inverse, global const real *b_top,
                              ulong b_offset, global real *x_top, ulong x_offset) {
  b_top += b_offset;
  x_top += x_offset;
  for (int pc = start;; pc += TAIL_OP) {
    const int op = program[pc], l = program[pc + 1], k = program[pc + 2];
    if (op == OP_END)
      break;
    global const int *m = meta + l * TAIL_META;
    global const real *b = l == top ? b_top : work + m[TAIL_B];
    global real *x = l == top ? x_top : work + m[TAIL_X];
    global real *d = work + m[TAIL_D];
    global const real *w = values + m[TAIL_W];
    global const real *coef = values + m[TAIL_COEF] + 2 * k; /* smoothing operations only */
    const ulong n = (ulong)m[TAIL_N];
    if (op == OP_ZERO) {
      GRID_LOOP(i, n) { x[i] = 0; }
    } else if (op == OP_FIRST) {
      const real alpha = coef[0];
      GRID_LOOP(i, n) {
        const real step = alpha * w[i] * b[i];
        d[i] = step;
        x[i] = step;
      }
    } else if (op == OP_DIRECTION) {
      const real alpha = coef[0], beta = coef[1];
      GRID_LOOP(i, n) {
        const real r = b[i] - row_times(m, TAIL_A, index, values, i, x);
        d[i] = beta == 0 ? alpha * w[i] * r : beta * d[i] + alpha * w[i] * r;
      }
    } else if (op == OP_UPDATE) {
      GRID_LOOP(i, n) { x[i] += d[i]; }
    } else if (op == OP_DEFECT) {
      GRID_LOOP(i, n) { d[i] = b[i] - row_times(m, TAIL_A, index, values, i, x); }
    } else if (op == OP_RESTRICT) {
      global const int *mc = m - TAIL_META;
      global real *bc = work + mc[TAIL_B];
      const ulong nc = (ulong)mc[TAIL_N];
      GRID_LOOP(i, nc) { bc[i] = row_times(m, TAIL_R, index, values, i, d); }
    } else if (op == OP_COARSE) {
      GRID_LOOP(i, n) {
        global const real *row = inverse + i * n;
        real sum = 0;
        for (ulong j = 0; j < n; ++j)
          sum += row[j] * b[j];
        x[i] = sum;
      }
    } else if (op == OP_PROLONG) {
      global const real *xc = work + (m - TAIL_META)[TAIL_X];
      GRID_LOOP(i, n) { x[i] += row_times(m, TAIL_P, index, values, i, xc); }
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  }
}
