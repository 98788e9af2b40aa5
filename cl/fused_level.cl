/* Fused kernels of a multigrid level above the coarse tail
 * (lib/solve/fused_level.c): fewer launches per cycle on levels small
 * enough that a launch costs more than the bytes it would save. Each
 * recomputes what the unfused kernels would have stored and read back
 * (a neighbour's defect or its first smoothing step), so it reads some
 * matrix rows more than once: the engine uses them only on levels of at
 * most the device's fused_restrict_rows / fused_smooth_rows rows
 * (lib/core/device_params.c gives the byte count behind those).
 *
 * The level's A and R are CSR copies with 32-bit offsets (the level is
 * small). The arithmetic is the unfused kernels' (spmv.cl's defect and
 * OP_JACOBI step, in the same order for CSR with one work-item per row),
 * so results agree within rounding, bit for bit where the compiler
 * contracts the same way. */

/* Row i of the CSR matrix (row_ptr, col, val) times v. */
inline real csr_row_times(global const int *row_ptr, global const int *col, global const real *val,
                          ulong i, global const real *v) {
  real sum = 0;
  for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
    sum += val[k] * v[col[k]];
  return sum;
}

/* The restriction of the defect in one pass, one coarse row per
 * work-item: bc_i = sum_j r_ij (b_j - (A x)_j), the defect of every fine
 * row j recomputed where a coarse row reads it (with x_zero, x is taken as
 * 0 and not read: bc = R b). The unfused pair stores the defect d = b - A x
 * and reads it back in the restriction. */
kernel void defect_restrict(ulong coarse_rows, global const int *r_ptr, global const int *r_col,
                            global const real *r_val, global const int *a_ptr,
                            global const int *a_col, global const real *a_val,
                            global const real *b, ulong b_offset, global const real *x,
                            ulong x_offset, uint x_zero, global real *bc, ulong bc_offset) {
  b += b_offset;
  x += x_offset;
  bc += bc_offset;
  GRID_LOOP(i, coarse_rows) {
    real sum = 0;
    for (int k = r_ptr[i]; k < r_ptr[i + 1]; ++k) {
      const int j = r_col[k];
      const real ax = x_zero ? 0 : csr_row_times(a_ptr, a_col, a_val, j, x);
      sum += r_val[k] * (-ax + b[j]);
    }
    bc[i] = sum;
  }
}

/* The input of the steps at row j: x_j, or from zero the first step's
 * w_j b_j (x not read). */
#define INPUT(j) (from_zero ? w[j] * b[j] : x[j])

/* x_j after one weighted Jacobi step from the input. */
inline real first_step(global const int *a_ptr, global const int *a_col, global const real *a_val,
                       global const real *w, global const real *b, global const real *x,
                       uint from_zero, ulong j) {
  real sum = 0;
  for (int k = a_ptr[j]; k < a_ptr[j + 1]; ++k)
    sum += a_val[k] * INPUT(a_col[k]);
  return INPUT(j) + w[j] * (b[j] - sum);
}

/* Weighted Jacobi steps x <- x + w .* (b - A x) in one pass, out of place
 * (out does not alias x): with two_steps 0 one step, else two, the first
 * step's x_j recomputed for every row that reads it (a row of A each). With
 * from_zero x is taken as 0 and not read, and the step from zero (w .* b)
 * comes first, formed where it is read: two steps in all with two_steps 0,
 * three with 1. */
kernel void jacobi_steps(ulong n, global const int *a_ptr, global const int *a_col,
                         global const real *a_val, global const real *w, ulong w_offset,
                         global const real *b, ulong b_offset, global const real *x,
                         ulong x_offset, uint from_zero, uint two_steps, global real *out,
                         ulong out_offset) {
  w += w_offset;
  b += b_offset;
  x += x_offset;
  out += out_offset;
  GRID_LOOP(i, n) {
    real xi, sum = 0;
    if (!two_steps) {
      xi = INPUT(i);
      for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        sum += a_val[k] * INPUT(a_col[k]);
    } else {
      xi = first_step(a_ptr, a_col, a_val, w, b, x, from_zero, i);
      for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        sum += a_val[k] * first_step(a_ptr, a_col, a_val, w, b, x, from_zero, a_col[k]);
    }
    out[i] = xi + w[i] * (b[i] - sum);
  }
}
