/* Structured-grid multigrid: the five-point Laplacian on n x n grids of the
 * unit square, the classic grid transfers, and the fused step of the
 * high-occupancy multigrid (HOMG, lib/homg/homg.c).
 *
 * A grid is row-major with x fastest: point (i, j) has index j n + i. The
 * operator is (A u)_ij = (4 u_ij - u_i-1,j - u_i+1,j - u_i,j-1 - u_i,j+1) / h^2,
 * the positive definite form of -laplace(u). Kernels walk the points with
 * FOR_EACH_POINT, one launch each (lib/homg/grid.c: 2-D ranges on GPUs,
 * contiguous chunks on CPUs). Indices are 32-bit: the host limits n^2 to 2^31.
 *
 * Bytes each kernel must move at least (s = sizeof(real), N = n^2 points;
 * neighbours come from caches):
 *   grid_jacobi            3 s N  (read u and b, write out; 4 s N accumulating)
 *   grid_residual_sums     2-4 s N (read u, b; write r; read exact if given)
 *   restrict_full_weighting  s N (read fine) + s N/4 (write coarse; + s N/4 when beta != 0)
 *   restrict_residual      2 s N + s N/4
 *   interpolate            s N/4 + s N (+ s N when beta != 0)
 *   stencil_apply          2 s N (+ s N when beta != 0)
 *   stencil_defect         3 s N
 *   stencil_weighted_step  4 s N
 *   stencil_diagonal         s N
 *   homg_step, spacing l = 2^m, m >= 1: s (N + 2 M) where M ~ N / l^2 is
 *     the number of points of that level (the "marked" points): every point is
 *     written once; only the marked points of the previous iterate and their
 *     restricted source are read. A step on the finest level is grid_jacobi (3 s N).
 *   the variation step (returning schedules), s (2 N + M): every point read
 *     and written, the level's sources read. The CPU kernels' two passes
 *     move s (2 N + 4 M) (the variations written and read back); on GPUs
 *     homg_tile_variation (spacing 2) moves s (2 N + M), the two passes of
 *     homg_compact and homg_stream_variation (spacing 4 and up) about
 *     s (2 N + 3 M) and the level rows' sectors (below). */

/* The GPU kernels on a CPU device, for the tests (lib/homg/grid.c). */
#ifdef CLMG_HOMG_GPU_KERNELS
#undef CLMG_CPU
#endif

#ifdef CLMG_CPU
/* Each work-item walks a contiguous run of points; (i, j) is updated
 * incrementally, since an integer division per point would make a CPU core
 * compute-bound. The host launches these kernels in 1-D (clmg_launch_1d). */
#define FOR_EACH_POINT(n, p, i, j)                                                                 \
  const uint total_ = (n) * (n);                                                                   \
  const uint chunk_ = (total_ + (uint)get_global_size(0) - 1) / (uint)get_global_size(0);          \
  const uint begin_ = min(total_, (uint)get_global_id(0) * chunk_);                                \
  const uint end_ = min(total_, begin_ + chunk_);                                                  \
  uint i = begin_ % (n), j = begin_ / (n);                                                         \
  for (uint p = begin_; p < end_; ++p, (++i == (n)) ? (i = 0, ++j) : 0)
#define FOR_EACH_POINT_1D(n, p, i, j) FOR_EACH_POINT(n, p, i, j)
#else
/* GPUs: one work-item per point of a 2-D range (x fastest, so a warp writes
 * a contiguous row segment), without an integer division per point; the
 * host rounds the range up to whole work-groups. The body runs once, and
 * `continue` leaves it. */
#define FOR_EACH_POINT(n, p, i, j)                                                                 \
  for (uint i = get_global_id(0), j = get_global_id(1), p = j * (n) + i,                           \
            once_ = i < (n) && j < (n);                                                            \
       once_; once_ = 0)
/* Reductions keep a 1-D range of few work-groups (their partial sums are
 * read back), each work-item striding over the points. */
#define FOR_EACH_POINT_1D(n, p, i, j)                                                              \
  for (uint p = get_global_id(0), i = p % (n), j = p / (n); p < (n) * (n);                         \
       p += get_global_size(0), i = p % (n), j = p / (n))
#endif

/* Damped Jacobi sweep for A u = b with h = 1/(n-1):
 *   out = u + omega/4 (h^2 b + u_W + u_E + u_S + u_N - 4 u)   at interior points,
 *   out = u                                                    at boundary points.
 * flags: JACOBI_ZERO_INPUT takes u = 0 without reading it (the first sweep of
 * a correction); JACOBI_ACCUMULATE adds the swept interior values to out and
 * leaves out's boundary alone (the last sweep of a correction cycle adds it
 * to the solution without a separate pass). out must not alias u. */
#define JACOBI_ZERO_INPUT 1u
#define JACOBI_ACCUMULATE 2u

kernel void grid_jacobi(uint n, real h2, real omega_quarter, uint flags, global const real *u,
                        ulong u_offset, global const real *b, ulong b_offset, global real *out,
                        ulong out_offset) {
  u += u_offset;
  b += b_offset;
  out += out_offset;
  const uint last = n - 1;
  const int zero_input = (flags & JACOBI_ZERO_INPUT) != 0;
  const int accumulate = (flags & JACOBI_ACCUMULATE) != 0;
  FOR_EACH_POINT(n, p, i, j) {
    if (i == 0 || j == 0 || i == last || j == last) {
      if (!accumulate)
        out[p] = zero_input ? 0 : u[p];
      continue;
    }
    real swept = omega_quarter * h2 * b[p];
    if (!zero_input) {
      const real c = u[p];
      swept = c + omega_quarter * (h2 * b[p] + u[p - 1] + u[p + 1] + u[p - n] + u[p + n] - 4 * c);
    }
    out[p] = accumulate ? out[p] + swept : swept;
  }
}

/* r = b - A u at interior points and 0 on the boundary (written when
 * write_r), with partial sums per work-group, each in its own block of
 * `groups` entries of partials:
 *   [0] sum r^2   [1] sum b^2 (interior)   [2] sum |u - exact|   [3] sum |exact|
 * The last two only when has_exact. */
kernel void grid_residual_sums(uint n, real inv_h2, global const real *u, ulong u_offset,
                               global const real *b, ulong b_offset, uint write_r, global real *r,
                               ulong r_offset, uint has_exact, global const real *exact,
                               ulong exact_offset, global real *restrict partials,
                               local real *scratch) {
  u += u_offset;
  b += b_offset;
  r += r_offset;
  exact += exact_offset;
  const uint last = n - 1;
  real rr = 0, bb = 0, error = 0, size = 0;
  FOR_EACH_POINT_1D(n, p, i, j) {
    const real c = u[p];
    if (has_exact) {
      const real e = exact[p];
      error += fabs(c - e);
      size += fabs(e);
    }
    real residual = 0;
    if (i != 0 && j != 0 && i != last && j != last) {
      const real bp = b[p];
      residual = bp - inv_h2 * (4 * c - u[p - 1] - u[p + 1] - u[p - n] - u[p + n]);
      rr += residual * residual;
      bb += bp * bp;
    }
    if (write_r)
      r[p] = residual;
  }
  const uint groups = get_num_groups(0), group = get_group_id(0);
  real total = group_sum(scratch, rr);
  if (get_local_id(0) == 0)
    partials[group] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
  total = group_sum(scratch, bb);
  if (get_local_id(0) == 0)
    partials[groups + group] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
  total = group_sum(scratch, error);
  if (get_local_id(0) == 0)
    partials[2 * groups + group] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
  total = group_sum(scratch, size);
  if (get_local_id(0) == 0)
    partials[3 * groups + group] = total;
}

/* Partial sums of |u + correction - exact| (correction skipped when
 * has_correction is 0): the error of the iterate inside a cycle. */
kernel void grid_error_sums(uint n, global const real *u, ulong u_offset, uint has_correction,
                            global const real *correction, ulong correction_offset,
                            global const real *exact, ulong exact_offset,
                            global real *restrict partials, local real *scratch) {
  u += u_offset;
  correction += correction_offset;
  exact += exact_offset;
  real error = 0;
  FOR_EACH_POINT_1D(n, p, i, j) {
    const real value = has_correction ? u[p] + correction[p] : u[p];
    error += fabs(value - exact[p]);
  }
  const real total = group_sum(scratch, error);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = total;
}

/* Full-weighting restriction to an nc x nc grid, out = alpha R v + beta out
 * (beta == 0: out is not read), R v being 0 on the boundary and
 *   (R v)(a,b) = (4 v(2a,2b) + 2 (v(2a+-1,2b) + v(2a,2b+-1)) + v(2a+-1,2b+-1)) / 16
 * inside.
 * v is the fine grid seen through a frame: the input is n_in x n_in, the
 * frame 2 nc - 1 points wide, mirrored in x and/or y (flips bit 0, bit 1)
 * and zero beyond the input (the four-subdomain grids of lib/homg/homg.c
 * are frames one point wider than the grid). A plain nested restriction has
 * n_in = 2 nc - 1 and no flips. */
inline real frame_value(global const real *in, uint n_in, uint flips, uint dx, uint dy) {
  if (dx >= n_in || dy >= n_in)
    return 0;
  const uint x = (flips & 1u) ? n_in - 1 - dx : dx;
  const uint y = (flips & 2u) ? n_in - 1 - dy : dy;
  return in[y * n_in + x];
}

kernel void restrict_full_weighting(uint nc, uint n_in, uint flips, real alpha, real beta,
                                    global const real *in, ulong in_offset, global real *out,
                                    ulong out_offset) {
  in += in_offset;
  out += out_offset;
  const uint last = nc - 1;
  FOR_EACH_POINT(nc, p, a, b) {
    if (a == 0 || b == 0 || a == last || b == last) {
      out[p] = beta == 0 ? 0 : beta * out[p];
      continue;
    }
    const uint x = 2 * a, y = 2 * b;
    real sum = 4 * frame_value(in, n_in, flips, x, y);
    sum += 2 * (frame_value(in, n_in, flips, x - 1, y) + frame_value(in, n_in, flips, x + 1, y) +
                frame_value(in, n_in, flips, x, y - 1) + frame_value(in, n_in, flips, x, y + 1));
    sum += frame_value(in, n_in, flips, x - 1, y - 1) + frame_value(in, n_in, flips, x + 1, y - 1) +
           frame_value(in, n_in, flips, x - 1, y + 1) + frame_value(in, n_in, flips, x + 1, y + 1);
    const real value = alpha * (sum * (real)0.0625);
    out[p] = beta == 0 ? value : value + beta * out[p];
  }
}

/* Full weighting of the residual b - A u of an n x n grid (n = 2 nc - 1)
 * onto nc x nc, without storing the residual: the restriction of the defect
 * of a V-cycle in one pass over u and b. */
inline real residual_at(global const real *u, global const real *b, uint n, real inv_h2, uint x,
                        uint y) {
  const uint p = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1)
    return 0;
  return b[p] - inv_h2 * (4 * u[p] - u[p - 1] - u[p + 1] - u[p - n] - u[p + n]);
}

kernel void restrict_residual(uint nc, uint n, real inv_h2, global const real *u, ulong u_offset,
                              global const real *b, ulong b_offset, global real *out,
                              ulong out_offset) {
  u += u_offset;
  b += b_offset;
  out += out_offset;
  const uint last = nc - 1;
  FOR_EACH_POINT(nc, p, a, c) {
    if (a == 0 || c == 0 || a == last || c == last) {
      out[p] = 0;
      continue;
    }
    const uint x = 2 * a, y = 2 * c;
    real sum = 4 * residual_at(u, b, n, inv_h2, x, y);
    sum += 2 * (residual_at(u, b, n, inv_h2, x - 1, y) + residual_at(u, b, n, inv_h2, x + 1, y) +
                residual_at(u, b, n, inv_h2, x, y - 1) + residual_at(u, b, n, inv_h2, x, y + 1));
    sum += residual_at(u, b, n, inv_h2, x - 1, y - 1) + residual_at(u, b, n, inv_h2, x + 1, y - 1) +
           residual_at(u, b, n, inv_h2, x - 1, y + 1) + residual_at(u, b, n, inv_h2, x + 1, y + 1);
    out[p] = sum * (real)0.0625;
  }
}

/* Bilinear interpolation of an nc x nc grid to n x n (n = 2 nc - 1) at every
 * point: fine = alpha P coarse + beta fine (beta == 0: fine is not read). */
kernel void interpolate(uint n, uint nc, real alpha, real beta, global const real *coarse,
                        ulong coarse_offset, global real *fine, ulong fine_offset) {
  coarse += coarse_offset;
  fine += fine_offset;
  FOR_EACH_POINT(n, p, i, j) {
    const uint a = i >> 1, c = j >> 1;
    const uint q = c * nc + a;
    real value;
    if ((i & 1u) == 0 && (j & 1u) == 0)
      value = coarse[q];
    else if ((j & 1u) == 0)
      value = (real)0.5 * (coarse[q] + coarse[q + 1]);
    else if ((i & 1u) == 0)
      value = (real)0.5 * (coarse[q] + coarse[q + nc]);
    else
      value = (real)0.25 * (coarse[q] + coarse[q + 1] + coarse[q + nc] + coarse[q + nc + 1]);
    value *= alpha;
    fine[p] = beta == 0 ? value : value + beta * fine[p];
  }
}

/* ---- the five-point operator as a clmg_operator (lib/homg/operators.c) ----
 *
 * The grid's operator on whole vectors: the five-point Laplacian at interior
 * points (boundary neighbours included) and identity rows on the boundary,
 * so a diagonal smoother leaves a zero boundary alone, as grid_jacobi does,
 * and the coarsest grid is an invertible matrix. Each kernel is one pass;
 * neighbours come from caches. */
inline real stencil_row(global const real *x, uint n, real inv_h2, uint p, uint i, uint j) {
  if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
    return x[p];
  return inv_h2 * (4 * x[p] - x[p - 1] - x[p + 1] - x[p - n] - x[p + n]);
}

/* y = alpha A x + beta y (beta == 0: y is not read) */
kernel void stencil_apply(uint n, real inv_h2, real alpha, real beta, global const real *x,
                          ulong x_offset, global real *y, ulong y_offset) {
  x += x_offset;
  y += y_offset;
  FOR_EACH_POINT(n, p, i, j) {
    const real value = alpha * stencil_row(x, n, inv_h2, p, i, j);
    y[p] = beta == 0 ? value : value + beta * y[p];
  }
}

/* r = b - A x */
kernel void stencil_defect(uint n, real inv_h2, global const real *b, ulong b_offset,
                           global const real *x, ulong x_offset, global real *r, ulong r_offset) {
  b += b_offset;
  x += x_offset;
  r += r_offset;
  FOR_EACH_POINT(n, p, i, j) {
    r[p] = b[p] - stencil_row(x, n, inv_h2, p, i, j);
  }
}

/* x_new = x + w .* (b - A x): a diagonal smoother's step in one pass */
kernel void stencil_weighted_step(uint n, real inv_h2, global const real *w, ulong w_offset,
                                  global const real *b, ulong b_offset, global const real *x,
                                  ulong x_offset, global real *x_new, ulong x_new_offset) {
  w += w_offset;
  b += b_offset;
  x += x_offset;
  x_new += x_new_offset;
  FOR_EACH_POINT(n, p, i, j) {
    x_new[p] = x[p] + w[p] * (b[p] - stencil_row(x, n, inv_h2, p, i, j));
  }
}

/* d = diag(A): 4 / h^2 inside, 1 on the boundary */
kernel void stencil_diagonal(uint n, real inv_h2, global real *d, ulong d_offset) {
  d += d_offset;
  FOR_EACH_POINT(n, p, i, j) {
    d[p] = (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1 : 4 * inv_h2;
  }
}

/* ---- the fused HOMG step ----
 *
 * Levels here are named by their spacing exponent m (spacing l = 2^m grid
 * points; m = 0 is the finest grid, public level numbers count from the
 * coarsest: include/clmg/homg.h). One step at level m >= 1 over the whole
 * grid: the points of level m ("marked") take a damped Jacobi sweep of the level-m
 * equation (neighbours at distance l, spacing l h, the level's restricted
 * source); every other point takes the bilinear interpolation of the marked
 * points' previous values. Both read only the previous iterate, so one
 * launch does both and every work-item has work.
 *
 * Nested grids (n = 2^k + 1): point (i, j) is marked when l divides i and j.
 * Four subdomains (n = 2^k, Becerra-Sagredo et al. 2011, section 3): the grid is cut into
 * quadrants of split = n/2 points per side; each sees the grid from its own
 * outer corner (frame coordinate d = i or n-1-i per side), and its level-m
 * points are those with l dividing d, for d = 0 .. split, the last of which
 * lie just outside the quadrant, near the centre. Per side, a point is marked
 * by the low frame when i <= split and l | i, or by the high frame when
 * i >= split - 1 and l | (n-1-i); for l >= 2 never both. A marked point
 * relaxes in its frame (neighbours at +-l; 0 beyond the grid, where the
 * frame's coarse grid extends one spacing h past the far boundary) with the
 * frame's source; other points interpolate inside their own quadrant from
 * that quadrant's level-m points, never across subdomains.
 *
 * All of that is separable, so the host tabulates it per level and axis
 * (lib/homg/homg.c: axis_entry): axis[i] = (code, lo, hi, source index) and
 * weight[i], for i = 0 .. n-1, where code holds the marking frame (0 none,
 * 1 low, 2 high), whether i is on the boundary and whether i - l and i + l
 * lie in the grid; lo and hi are the indices of the own quadrant's level-m
 * points around i and weight[i] that of hi; source index = frame coordinate
 * / l. A point then costs two cached table reads instead of the integer
 * logic above (which made the step compute-bound on CPUs). GPUs work the
 * entries out (axis_at) once per work-item column and per tile instead:
 * homg_tile below.
 *
 * The sources: level m of frame f (0..3 = low/high x + 2 low/high y) is an
 * nv x nv grid at sources + f nv^2. zero_input: the previous iterate is 0
 * (the first step of a cycle). */
#define AXIS_FRAME 3u
#define AXIS_BOUNDARY 4u
#define AXIS_MINUS 8u
#define AXIS_PLUS 16u

/* Bilinear interpolation at a point whose axes are ax (column) and rows r0,
 * r1 (= lo, hi of its row's axis entry, times n), with weights tx, ty. The
 * four reads are unconditional (a zero weight reads a cached neighbour), so
 * a row of such points is a branch-free loop a CPU can vectorise. */
inline real interpolate_point(global const real *in, uint4 ax, real tx, uint r0, uint r1, real ty) {
  const real a = in[r0 + ax.y], b = in[r0 + ax.z], c = in[r1 + ax.y], d = in[r1 + ax.z];
  const real low = a + tx * (b - a), high = c + tx * (d - c);
  return low + ty * (high - low);
}

/* The relaxation of a marked point p = (i, j) in frame (fx, fy). */
inline real relax_point(global const real *in, uint p, uint l, uint row, uint4 ax, uint4 ay,
                        global const real *sources, uint nv, real hl2, real omega_quarter,
                        uint zero_input) {
  const uint frame = ((ax.x & AXIS_FRAME) - 1) + 2 * ((ay.x & AXIS_FRAME) - 1);
  const real f = sources[(frame * nv + ay.w) * nv + ax.w];
  if (zero_input)
    return omega_quarter * hl2 * f;
  const real c = in[p];
  const real around = ((ax.x & AXIS_MINUS) ? in[p - l] : 0) + ((ax.x & AXIS_PLUS) ? in[p + l] : 0) +
                      ((ay.x & AXIS_MINUS) ? in[p - row] : 0) +
                      ((ay.x & AXIS_PLUS) ? in[p + row] : 0);
  return c + omega_quarter * (hl2 * f + around - 4 * c);
}

/* The index along one axis of the k-th point of level spacing l marked by
 * some frame (low frame: 0, l, ... up to split; high frame, four
 * subdomains: last, last - l, ... down to split - 1), and how many there are
 * (variation_marked_count): phase 0 (CPUs) and the compact arrays (GPUs,
 * homg_compact) run over those points only. */
inline uint variation_marked_count(uint l, uint n) {
  const uint last = n - 1, four = (n & 1u) == 0, split = four ? n >> 1 : last;
  return split / l + 1 + (four ? (last - (split - 1)) / l + 1 : 0);
}

inline uint variation_marked_index(uint k, uint l, uint n) {
  const uint last = n - 1, four = (n & 1u) == 0, split = four ? n >> 1 : last;
  const uint low = split / l + 1;
  return k < low ? k * l : last - (k - low) * l;
}

#ifdef CLMG_CPU
/* The steps on CPUs, with the tables (on GPUs: homg_tile below). */
kernel void homg_step(uint n, uint l, real hl2, real omega_quarter, uint zero_input,
                      global const real *in, ulong in_offset, global real *out, ulong out_offset,
                      global const real *sources, ulong sources_offset, uint nv,
                      global const uint4 *axis, ulong axis_offset, global const real *weight,
                      ulong weight_offset) {
  in += in_offset;
  out += out_offset;
  sources += sources_offset;
  axis += axis_offset;
  weight += weight_offset;
  const uint row = l * n;
  /* Row by row: a row's axis entry is read once, and the rows without level
   * points (all but every l-th) interpolate in a branch-free inner loop. */
  const uint total = n * n;
  const uint chunk = (total + (uint)get_global_size(0) - 1) / (uint)get_global_size(0);
  const uint begin = min(total, (uint)get_global_id(0) * chunk);
  const uint end = min(total, begin + chunk);
  for (uint p = begin; p < end;) {
    const uint j = p / n, row_end = min(end, (j + 1) * n);
    const uint4 ay = axis[j];
    const real ty = weight[j];
    const uint r0 = ay.y * n, r1 = ay.z * n;
    if ((ay.x & AXIS_BOUNDARY) != 0 || (zero_input && (ay.x & AXIS_FRAME) == 0)) {
      for (; p < row_end; ++p)
        out[p] = 0;
      continue;
    }
    uint i = p - j * n;
    if ((ay.x & AXIS_FRAME) == 0) {
      for (; p < row_end; ++p, ++i) {
        const uint4 ax = axis[i];
        const real value = interpolate_point(in, ax, weight[i], r0, r1, ty);
        out[p] = (ax.x & AXIS_BOUNDARY) ? 0 : value;
      }
      continue;
    }
    for (; p < row_end; ++p, ++i) {
      const uint4 ax = axis[i];
      real value = 0;
      if ((ax.x & AXIS_BOUNDARY) != 0)
        value = 0;
      else if ((ax.x & AXIS_FRAME) != 0)
        value = relax_point(in, p, l, row, ax, ay, sources, nv, hl2, omega_quarter, zero_input);
      else if (!zero_input)
        value = interpolate_point(in, ax, weight[i], r0, r1, ty);
      out[p] = value;
    }
  }
}

/* ---- the step with variations (returning schedules) ----
 *
 * A schedule that goes back to a coarser level after a finer one (the
 * paper's section 2: "go back to a coarser level or descend to a finer
 * level in a chosen pattern") must not overwrite the finer points with
 * interpolated coarse values, which would undo the finer relaxations: the
 * non-marked points take the interpolated variation of the marked points
 * instead, e += P (relax(e) - e), in two passes. Phase 0 writes
 * d = relax(in) - in at the marked points (0 on the boundary; other points
 * are not written), phase 1 adds d to out at the marked points and the
 * bilinear interpolation of d (from the own quadrant's marked points, as
 * homg_step interpolates) at the others; zero_input (phase 0: in = 0,
 * phase 1: out = 0) skips the reads of a zero iterate. The axis entries are
 * homg_step's tables. GPUs run this step in one pass out of place instead
 * (homg_tile below). */
inline uint4 variation_axis(uint i, global const uint4 *axis, global const real *weight, real *w) {
  *w = weight[i];
  return axis[i];
}

/* Phase 0 over the level's points: d = relax(in) - in there, 0 on the
 * boundary (launched over variation_marked_count^2 work-items). */
kernel void homg_variation_relax(uint n, uint l, real hl2, real omega_quarter, uint zero_input,
                                 global const real *in, ulong in_offset, global real *out,
                                 ulong out_offset, global const real *sources,
                                 ulong sources_offset, uint nv, global const uint4 *axis,
                                 ulong axis_offset, global const real *weight,
                                 ulong weight_offset) {
  in += in_offset;
  out += out_offset;
  sources += sources_offset;
  axis += axis_offset;
  weight += weight_offset;
  const uint row = l * n, count = variation_marked_count(l, n);
  FOR_EACH_POINT(count, q, a, b) {
    const uint i = variation_marked_index(a, l, n), j = variation_marked_index(b, l, n);
    real tx, ty;
    const uint4 ax = variation_axis(i, axis, weight, &tx);
    const uint4 ay = variation_axis(j, axis, weight, &ty);
    const uint p = j * n + i;
    if (((ax.x | ay.x) & AXIS_BOUNDARY) != 0)
      out[p] = 0;
    else
      out[p] = relax_point(in, p, l, row, ax, ay, sources, nv, hl2, omega_quarter, zero_input) -
               (zero_input ? 0 : in[p]);
  }
}

/* Phase 1 over the grid: out += d at the level's points, += P d elsewhere
 * (out = ... when zero_input), 0 on the boundary. */
kernel void homg_variation_add(uint n, uint l, uint zero_input, global const real *in,
                               ulong in_offset, global real *out, ulong out_offset,
                               global const uint4 *axis, ulong axis_offset,
                               global const real *weight, ulong weight_offset) {
  in += in_offset;
  out += out_offset;
  axis += axis_offset;
  weight += weight_offset;
  FOR_EACH_POINT(n, p, i, j) {
    real tx, ty;
    const uint4 ax = variation_axis(i, axis, weight, &tx);
    const uint4 ay = variation_axis(j, axis, weight, &ty);
    if (((ax.x | ay.x) & AXIS_BOUNDARY) != 0) {
      out[p] = 0;
    } else {
      const uint marked = (ax.x & AXIS_FRAME) != 0 && (ay.x & AXIS_FRAME) != 0;
      const real variation =
          marked ? in[p] : interpolate_point(in, ax, tx, ay.y * n, ay.z * n, ty);
      out[p] = (zero_input ? 0 : out[p]) + variation;
    }
  }
}

#else
/* The axis entry of index i at spacing l = 2^m on an n-point side, as
 * lib/homg/homg.c's axis_entry tabulates it (inv_l = 1 / l): nested grids
 * (n odd) have one frame; four-subdomain grids (n even) split at n/2. Shifts
 * and masks only: a division per point made the step compute-bound. */
inline uint4 axis_at(uint i, uint l, uint m, uint n, real inv_l, real *weight) {
  const uint last = n - 1, mask = l - 1, four = (n & 1u) == 0, split = four ? n >> 1 : last;
  uint code = 0;
  if (i <= split && (i & mask) == 0)
    code = 1;
  else if (four && i + 1 >= split && ((last - i) & mask) == 0)
    code = 2;
  if (i == 0 || i == last)
    code |= AXIS_BOUNDARY;
  if (i >= l)
    code |= AXIS_MINUS;
  if (i + l <= last)
    code |= AXIS_PLUS;
  const uint high = four && i >= split;
  const uint d = high ? last - i : i, c = d & ~mask;
  const uint lo = high ? last - c : c;
  uint hi = high ? last - c - l : c + l;
  if (high ? c + l > last : hi > last)
    hi = lo;
  const uint marked = (code & AXIS_FRAME) == 2 ? last - i : i;
  *weight = (real)(d & mask) * inv_l;
  return (uint4)(code, lo, hi, marked >> m);
}

/* ---- the steps on GPUs ----
 *
 * At spacing 2 (lib/homg/homg.c; from 4 up: homg_compact and
 * homg_stream_* below) both steps run in one pass over the grid, a
 * work-group per tile of HOMG_TILE_X columns and HOMG_TILE_Y * R rows,
 * each work-item one column of R consecutive rows (R = HOMG_VALUE_ROWS or
 * HOMG_VARIATION_ROWS; a warp stores 32 columns of a row, 256 contiguous
 * bytes):
 *   homg_tile_step       the value step (homg_step's): out = relax(in) at
 *                        the level's points, P(in at the level's points)
 *                        elsewhere;
 *   homg_tile_variation  the variation step out of place: out = in + P d,
 *                        d = relax(in) - in at the level's points (0 on the
 *                        boundary), where homg_variation_relax/add take two
 *                        passes in place and move d through memory.
 * The level points a tile interpolates from (its own and the next ones
 * out) are worked out once per work-group into local memory: the
 * variations d, or the values of in and their relaxations. Each is relaxed
 * by one work-item, not by each of its neighbours, and a point costs its
 * own read (variation step), a few local reads and its store. Along a
 * column the x axis entry is fixed (worked out once per work-item) and the
 * rows between two level rows share their interpolation along x (the `low`
 * and `high` of interpolate_point), so a row costs one FMA. The arithmetic
 * is homg_step's and homg_variation_relax/add's: results agree to rounding.
 *
 * Bytes (s = sizeof(real), N = n^2, M level points; the floors
 * clmg_homg_step_bytes and clmg_homg_variation_step_bytes count s (N + 2 M)
 * and s (2 N + 4 M)): the value step writes N and reads the level points
 * and their sources (whole 32-byte sectors of the level rows at l = 2, 4:
 * s N/2, s N/4); the variation step reads and writes N and reads the
 * sources (M), its level points coming from caches.
 *
 * Level points are indexed by their quadrant coordinate q (i, or n - 1 - i
 * in the high quadrant of a four-subdomain grid): slot (q >> m) - base. A
 * tile that straddles the split of a four-subdomain grid (n < 128 only)
 * runs homg_columns instead, which works out the corners of each work-item
 * itself. The level points next to the split that the other quadrant's
 * frame marks (q & mask != 0) are relaxed where they are needed.
 *
 * Measured on the H200 at n = 8193 (perf/homg.c), as x its floor per level
 * from spacing 2 to 4096: the variation step 1.08-1.51 with R = 4 (1.19-1.62
 * with R = 8, 1.39-2.0 with R = 2), the value step 1.18-1.90 with R = 8
 * (1.65-2.38 with R = 4: the barrier stalls a tile that has no reads of its
 * own in flight). Corners worked out per work-item without tiles
 * (homg_columns alone): variation 1.20-2.78, value 1.04-2.73, worst on the
 * fine levels, where neighbours relaxed the same level points again. */
#define HOMG_TILE_X 64u
#define HOMG_TILE_Y 4u
#define HOMG_VALUE_ROWS 8u
#define HOMG_VARIATION_ROWS 4u
#define HOMG_TILE_ROWS_MAX 8u

/* The row loops unrolled (own[k] in registers). The GPU kernels built on a
 * CPU for the tests (CLMG_HOMG_GPU_KERNELS): pocl cannot fully unroll them
 * and warns. */
#ifdef CLMG_HOMG_GPU_KERNELS
#define HOMG_UNROLL
#else
#define HOMG_UNROLL _Pragma("unroll")
#endif

/* The variation d = relax(in) - in at level point (x, y) whose axis entries
 * are axx, axy (0 on the boundary). */
inline real column_variation(global const real *in, uint n, uint l, uint x, uint y, uint4 axx,
                             uint4 axy, global const real *sources, uint nv, real hl2,
                             real omega_quarter, uint zero_input) {
  if (((axx.x | axy.x) & AXIS_BOUNDARY) != 0)
    return 0;
  const uint p = y * n + x;
  return relax_point(in, p, l, l * n, axx, axy, sources, nv, hl2, omega_quarter, zero_input) -
         (zero_input ? 0 : in[p]);
}

/* The column's value at level row y, interpolated along x between the
 * level columns x0 and x1 (entries ax0, ax1) with weight tx: of in (the
 * value step) or of d (the variation step). */
inline real column_corner_row(global const real *in, uint n, uint l, uint m, real inv_l, uint y,
                              uint x0, uint x1, uint4 ax0, uint4 ax1, real tx,
                              global const real *sources, uint nv, real hl2, real omega_quarter,
                              uint zero_input, const uint variation) {
  real a, b;
  if (variation) {
    real unused;
    const uint4 ay = axis_at(y, l, m, n, inv_l, &unused);
    a = column_variation(in, n, l, x0, y, ax0, ay, sources, nv, hl2, omega_quarter, zero_input);
    b = column_variation(in, n, l, x1, y, ax1, ay, sources, nv, hl2, omega_quarter, zero_input);
  } else {
    a = in[y * n + x0];
    b = in[y * n + x1];
  }
  return a + tx * (b - a);
}

/* The value at level point (i, j) of the column: relax(in) (the value
 * step) or d (the variation step). */
inline real column_level_point(global const real *in, uint n, uint l, uint m, real inv_l, uint i,
                               uint j, uint4 ax, global const real *sources, uint nv, real hl2,
                               real omega_quarter, uint zero_input, const uint variation) {
  real unused;
  const uint4 ay = axis_at(j, l, m, n, inv_l, &unused);
  if (variation)
    return column_variation(in, n, l, i, j, ax, ay, sources, nv, hl2, omega_quarter, zero_input);
  return relax_point(in, j * n + i, l, l * n, ax, ay, sources, nv, hl2, omega_quarter, zero_input);
}

/* A step without a tile (the work-items of a tile that straddles the split):
 * each work-item works out the corners it interpolates from itself, per
 * chunk of min(l, R) rows. */
inline void homg_columns(uint n, uint l, real hl2, real omega_quarter, uint zero_input,
                         global const real *restrict in, global real *restrict out,
                         global const real *restrict sources, uint nv, const uint variation,
                         const uint R) {
  const uint i = get_global_id(0), j0 = get_global_id(1) * R;
  if (i >= n || j0 >= n)
    return;
  const uint rows = min(R, n - j0);
  const uint last = n - 1, mask = l - 1, m = 31 - clz(l), four = (n & 1u) == 0;
  const uint split = four ? n >> 1 : last;
  const real inv_l = (real)1 / (real)l;
  global real *column = out + j0 * n + i;
  real tx;
  const uint4 ax = axis_at(i, l, m, n, inv_l, &tx);
  if ((ax.x & AXIS_BOUNDARY) != 0) {
    for (uint k = 0; k < rows; ++k)
      column[k * n] = 0; /* the correction is 0 on the Dirichlet boundary */
    return;
  }
  /* The variation step reads every point: all loads first, so a work-item
   * has its rows in flight at once, as a copy has. */
  real own[HOMG_TILE_ROWS_MAX];
  const int reads_own = variation && !zero_input;
  HOMG_UNROLL
  for (uint k = 0; k < R; ++k)
    own[k] = reads_own && k < rows ? in[(j0 + k) * n + i] : 0;
  real unused;
  const uint x0 = ax.y, x1 = ax.z, x_level = (ax.x & AXIS_FRAME) != 0;
  uint4 ax0 = (uint4)(0), ax1 = (uint4)(0);
  if (variation) {
    ax0 = axis_at(x0, l, m, n, inv_l, &unused);
    ax1 = axis_at(x1, l, m, n, inv_l, &unused);
  }
  const int interpolates = variation || !zero_input;
  uint y0 = UINT_MAX, y1 = UINT_MAX; /* the level rows `low` and `high` belong to */
  real low = 0, high = 0;
  /* Chunks of min(l, R) rows, aligned, share one interval between level
   * rows (in either quadrant), whose level rows can only be a chunk's first
   * or last row; the corners and level points are worked out per chunk, so
   * the unrolled row loop holds no relaxation. */
  const uint chunk = min(l, R);
  for (uint k0 = 0; k0 < rows; k0 += chunk) {
    const uint ja = j0 + k0, jb = j0 + min(rows, k0 + chunk) - 1;
    const uint high_half = four && ja >= split, mirror = high_half ? last : 0;
    if (interpolates && ja != last) {
      const uint d = high_half ? last - ja : ja, c = d & ~mask;
      const uint lo = high_half ? last - c : c, hi = high_half ? lo - l : lo + l;
      if (lo != y0 || hi != y1) {
        const real new_low =
            lo == y0   ? low
            : lo == y1 ? high
                       : column_corner_row(in, n, l, m, inv_l, lo, x0, x1, ax0, ax1, tx, sources,
                                           nv, hl2, omega_quarter, zero_input, variation);
        const real new_high =
            hi == y1   ? high
            : hi == y0 ? low
                       : column_corner_row(in, n, l, m, inv_l, hi, x0, x1, ax0, ax1, tx, sources,
                                           nv, hl2, omega_quarter, zero_input, variation);
        low = new_low;
        high = new_high;
        y0 = lo;
        y1 = hi;
      }
    }
    /* level rows: quadrant coordinate a multiple of l, or the rows either
     * side of the split (four subdomains), marked by the other frame */
    const uint da = high_half ? last - ja : ja, db = high_half ? last - jb : jb;
    const int level_a = x_level && ja != 0 && ja != last &&
                        ((da & mask) == 0 || (four && (ja == split || ja + 1 == split)));
    const int level_b = x_level && jb != ja && jb != last &&
                        ((db & mask) == 0 || (four && (jb == split || jb + 1 == split)));
    real value_a = 0, value_b = 0;
    if (level_a)
      value_a = column_level_point(in, n, l, m, inv_l, i, ja, ax, sources, nv, hl2, omega_quarter,
                                   zero_input, variation);
    if (level_b)
      value_b = column_level_point(in, n, l, m, inv_l, i, jb, ax, sources, nv, hl2, omega_quarter,
                                   zero_input, variation);
    HOMG_UNROLL
    for (uint k = 0; k < R; ++k) {
      const uint j = j0 + k;
      if (k < k0 || j > jb)
        continue;
      real value = 0;
      if (j == 0 || j == last)
        value = 0;
      else if (j == ja && level_a)
        value = own[k] + value_a;
      else if (j == jb && level_b)
        value = own[k] + value_b;
      else if (interpolates) {
        const real ty = (real)((mirror ? mirror - j : j) & mask) * inv_l;
        value = own[k] + (low + ty * (high - low));
      }
      column[k * n] = value;
    }
  }
}


/* Local memory per tile: level points per axis at most (extent / 2 + 2). */
#define HOMG_TILE_SLOTS ((HOMG_TILE_X / 2 + 2) * (HOMG_TILE_Y * HOMG_TILE_ROWS_MAX / 2 + 2))

inline void homg_tile(uint n, uint l, real hl2, real omega_quarter, uint zero_input,
                      global const real *restrict in, global real *restrict out,
                      global const real *restrict sources, uint nv, const uint variation,
                      local real *tile, local real *tile_relaxed, const uint R) {
  const uint last = n - 1, mask = l - 1, m = 31 - clz(l), four = (n & 1u) == 0;
  const uint split = four ? n >> 1 : last;
  const uint gx0 = get_group_id(0) * HOMG_TILE_X, gy0 = get_group_id(1) * HOMG_TILE_Y * R;
  const uint gx1 = min(last, gx0 + HOMG_TILE_X - 1), gy1 = min(last, gy0 + HOMG_TILE_Y * R - 1);
  if (four && ((gx0 < split && gx1 >= split) || (gy0 < split && gy1 >= split))) {
    homg_columns(n, l, hl2, omega_quarter, zero_input, in, out, sources, nv, variation, R);
    return; /* the whole work-group: no barrier below is reached */
  }
  const real inv_l = (real)1 / (real)l;
  const uint i = get_global_id(0), j0 = get_global_id(1) * R;
  const uint rows = j0 < n ? min(R, n - j0) : 0;
  const uint active = i < n && rows > 0;
  /* The variation step reads every point: all loads first. */
  real own[HOMG_TILE_ROWS_MAX];
  const int reads_own = variation && !zero_input && active;
  HOMG_UNROLL
  for (uint k = 0; k < R; ++k)
    own[k] = reads_own && k < rows ? in[(j0 + k) * n + i] : 0;

  /* the tile's level points: slots 0 .. cx - 1 (x) and 0 .. cy - 1 (y) */
  const uint high_x = four && gx0 >= split, high_y = four && gy0 >= split;
  const uint qx_min = high_x ? last - gx1 : gx0, qx_max = high_x ? last - gx0 : gx1;
  const uint qy_min = high_y ? last - gy1 : gy0, qy_max = high_y ? last - gy0 : gy1;
  const uint bx = qx_min >> m, by = qy_min >> m;
  const uint cx = (qx_max >> m) - bx + 2, cy = (qy_max >> m) - by + 2;
  const uint lid = get_local_id(1) * HOMG_TILE_X + get_local_id(0);
  for (uint t = lid; t < cx * cy; t += HOMG_TILE_X * HOMG_TILE_Y) {
    const uint sy = t / cx, sx = t - sy * cx;
    const uint qx = (bx + sx) << m, qy = (by + sy) << m;
    real value = 0, relaxed = 0;
    if (qx <= last && qy <= last) { /* beyond the grid: never interpolated from */
      const uint x = high_x ? last - qx : qx, y = high_y ? last - qy : qy;
      real unused;
      const uint4 axx = axis_at(x, l, m, n, inv_l, &unused);
      const uint4 axy = axis_at(y, l, m, n, inv_l, &unused);
      if (variation) {
        value = column_variation(in, n, l, x, y, axx, axy, sources, nv, hl2, omega_quarter,
                                 zero_input);
      } else {
        const uint p = y * n + x;
        value = zero_input ? 0 : in[p];
        if (((axx.x | axy.x) & AXIS_BOUNDARY) == 0)
          relaxed = relax_point(in, p, l, l * n, axx, axy, sources, nv, hl2, omega_quarter,
                                zero_input);
      }
    }
    tile[t] = value;
    if (!variation)
      tile_relaxed[t] = relaxed;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!active)
    return;

  global real *column = out + j0 * n + i;
  if (i == 0 || i == last) {
    for (uint k = 0; k < rows; ++k)
      column[k * n] = 0; /* the correction is 0 on the Dirichlet boundary */
    return;
  }
  const uint qx = high_x ? last - i : i, sx = (qx >> m) - bx;
  const real tx = (real)(qx & mask) * inv_l;
  /* level columns: q a multiple of l, or next to the split (marked by the
   * other quadrant's frame, not in the tile) */
  const uint x_special = four && (i == split || i + 1 == split);
  const uint x_level = (qx & mask) == 0 || x_special;
  real tx_unused;
  const uint4 ax = x_level ? axis_at(i, l, m, n, inv_l, &tx_unused) : (uint4)(0);
  uint sy_cached = UINT_MAX;
  real low = 0, high = 0;
  HOMG_UNROLL
  for (uint k = 0; k < R; ++k) {
    if (k >= rows)
      break;
    const uint j = j0 + k;
    real value = 0;
    if (j != 0 && j != last) {
      const uint qy = high_y ? last - j : j, sy = (qy >> m) - by;
      const uint y_special = four && (j == split || j + 1 == split);
      const uint y_level = (qy & mask) == 0 || y_special;
      if (x_level && y_level && (x_special || y_special)) {
        value = own[k] + column_level_point(in, n, l, m, inv_l, i, j, ax, sources, nv, hl2,
                                            omega_quarter, zero_input, variation);
      } else if (!variation && x_level && y_level) {
        value = tile_relaxed[sy * cx + sx];
      } else if (variation || !zero_input) {
        if (sy != sy_cached) {
          const local real *r0 = tile + sy * cx + sx;
          low = r0[0] + tx * (r0[1] - r0[0]);
          high = r0[cx] + tx * (r0[cx + 1] - r0[cx]);
          sy_cached = sy;
        }
        const real ty = (real)(qy & mask) * inv_l;
        value = own[k] + (low + ty * (high - low));
      }
    }
    column[k * n] = value;
  }
}

__attribute__((reqd_work_group_size(HOMG_TILE_X, HOMG_TILE_Y, 1))) kernel void
homg_tile_step(uint n, uint l, real hl2, real omega_quarter, uint zero_input, global const real *in,
               ulong in_offset, global real *out, ulong out_offset, global const real *sources,
               ulong sources_offset, uint nv) {
  local real tile[HOMG_TILE_SLOTS], tile_relaxed[HOMG_TILE_SLOTS];
  homg_tile(n, l, hl2, omega_quarter, zero_input, in + in_offset, out + out_offset,
            sources + sources_offset, nv, 0, tile, tile_relaxed, HOMG_VALUE_ROWS);
}

__attribute__((reqd_work_group_size(HOMG_TILE_X, HOMG_TILE_Y, 1))) kernel void
homg_tile_variation(uint n, uint l, real hl2, real omega_quarter, uint zero_input,
                    global const real *in, ulong in_offset, global real *out, ulong out_offset,
                    global const real *sources, ulong sources_offset, uint nv) {
  local real tile[HOMG_TILE_SLOTS];
  homg_tile(n, l, hl2, omega_quarter, zero_input, in + in_offset, out + out_offset,
            sources + sources_offset, nv, 1, tile, tile, HOMG_VARIATION_ROWS);
}
/* ---- the steps in two passes through compact arrays (spacing >= 4) ----
 *
 * homg_compact works out, per level point (a, b) (the points of
 * variation_marked_index, K = variation_marked_count per axis), what the
 * grid's points need from it, into K x K arrays d (index b K + a): for the
 * variation step d = relax(in) - in (0 on the boundary); for the value step
 * d = in and d[K^2 + ...] = relax(in) (0 on the boundary). homg_stream
 * then streams the grid, each work-item one column of R rows, its corners
 * read from d: K^2 ~ N / l^2 values, which the caches hold and neighbouring
 * work-items share. The streaming pass has no barrier and no relaxation
 * (the tile kernels hold a tile's stores behind its relaxations, whose
 * neighbours lie l rows away): a work-item's reads are all in flight at
 * once, as in a copy
 * (variation step: out = in + P d) or a fill (value step: out = relax(in)
 * at the level's points, P in elsewhere).
 *
 * Bytes (s = sizeof(real), N = n^2, M ~ N / l^2 level points): the compact
 * pass reads the level rows in whole 32-byte sectors (s N / 4 at l = 4,
 * s N / 16 at l = 8 in double, less above) and the sources (s M), and
 * writes s M (value step: 2 s M); the streaming pass reads in (variation
 * step) and d once more, and writes out. At l = 2 the arrays would be a
 * quarter of the grid and the compact pass half a grid's reads: the tile
 * kernels move less there (and measured 1.52 against 1.55-1.62 streamed).
 *
 * Measured on the H200 at n = 8193 (nested; four subdomains alike or
 * lower), x the floor, spacing 4 8 16 32 64 ... 4096:
 *   variation step  1.19 1.07 1.02 0.99 0.99 0.98 ... 0.98
 *                   (homg_tile_variation: 1.51 1.40 1.45 1.52 1.40 1.35 1.21 1.18 1.12 1.10 1.10)
 *   value step      1.78 1.43 1.25 1.15 1.09 1.08 1.06 ... 1.06
 *                   (homg_tile_step: 1.77 1.75 1.61 1.57 1.49 1.45 1.38 1.27 1.24 1.22 1.22)
 * The variation step with R = 4 rows: 0.02-0.06 more, R = 2: 0.09-0.12
 * more, R = 16: 0.02-0.10 more. Rows shifted by j n mod 4 columns, so that
 * on rows of 2^k + 1 points a warp's accesses cover whole sectors: 0.02-0.04
 * less at spacing 16-128 with R = 8, more elsewhere and on four-subdomain
 * grids (its axis terms worked out per row). */
#define HOMG_STREAM_ROWS 8u

kernel void homg_compact(uint n, uint l, real hl2, real omega_quarter, uint zero_input,
                         uint variation, global const real *in, ulong in_offset, global real *d,
                         ulong d_offset, global const real *sources, ulong sources_offset,
                         uint nv) {
  in += in_offset;
  d += d_offset;
  sources += sources_offset;
  const uint count = variation_marked_count(l, n), m = 31 - clz(l);
  const real inv_l = (real)1 / (real)l;
  FOR_EACH_POINT(count, q, a, b) {
    const uint x = variation_marked_index(a, l, n), y = variation_marked_index(b, l, n);
    real unused;
    const uint4 axx = axis_at(x, l, m, n, inv_l, &unused);
    const uint4 axy = axis_at(y, l, m, n, inv_l, &unused);
    if (variation) {
      d[q] =
          column_variation(in, n, l, x, y, axx, axy, sources, nv, hl2, omega_quarter, zero_input);
    } else {
      const uint p = y * n + x;
      d[q] = zero_input ? 0 : in[p];
      d[count * count + q] =
          ((axx.x | axy.x) & AXIS_BOUNDARY) != 0
              ? 0
              : relax_point(in, p, l, l * n, axx, axy, sources, nv, hl2, omega_quarter, zero_input);
    }
  }
}

/* The compact index of coordinate c (quadrant coordinate qc) at a level
 * point: its own frame's, or for the points next to the split, the other
 * frame's, which marks them. */
inline uint compact_index(uint c, uint qc, uint m, uint n, uint low_count, uint count) {
  const uint four = (n & 1u) == 0, split = n >> 1;
  if (four && c == split)
    return low_count - 1; /* the low frame's point at split */
  if (four && c + 1 == split)
    return count - 1; /* the high frame's point at n - 1 - split */
  return (four && c >= split ? low_count : 0) + (qc >> m);
}

inline void homg_stream(uint n, uint l, uint zero_input, global const real *restrict in,
                        global const real *restrict d, global real *restrict out,
                        const uint variation) {
  const uint R = HOMG_STREAM_ROWS;
  const uint i = get_global_id(0), j0 = get_global_id(1) * R;
  if (i >= n || j0 >= n)
    return;
  const uint rows = min(R, n - j0);
  const uint last = n - 1, mask = l - 1, m = 31 - clz(l), four = (n & 1u) == 0;
  const uint split = four ? n >> 1 : last;
  const uint low_count = (split >> m) + 1, count = four ? 2 * low_count : low_count;
  const real inv_l = (real)1 / (real)l;
  global real *column = out + j0 * n + i;
  if (i == 0 || i == last) {
    for (uint k = 0; k < rows; ++k)
      column[k * n] = 0; /* the correction is 0 on the Dirichlet boundary */
    return;
  }
  /* all loads of in first, so a work-item has its rows in flight at once */
  real own[HOMG_STREAM_ROWS];
  const int reads_own = variation && !zero_input;
  HOMG_UNROLL
  for (uint k = 0; k < R; ++k)
    own[k] = reads_own && k < rows ? in[(j0 + k) * n + i] : 0;
  const global real *level_values = variation ? d : d + count * count;
  const int interpolates = variation || !zero_input;
  const uint high_x = four && i >= split, qx = high_x ? last - i : i;
  const uint x_level = (qx & mask) == 0 || (four && (i == split || i + 1 == split));
  const uint kx = compact_index(i, qx, m, n, low_count, count);
  const uint kx0 = (high_x ? low_count : 0) + (qx >> m);
  const real tx = (real)(qx & mask) * inv_l;
  /* Chunks of min(l, R) rows, aligned, lie between the same two level rows
   * (in either quadrant): one pair of corners per chunk. The loop runs over
   * constant k, so own[] stays in registers. */
  const uint chunk = min(l, R);
  uint high_y = 0;
  real low = 0, high = 0;
  HOMG_UNROLL
  for (uint k = 0; k < R; ++k) {
    if (k >= rows)
      break;
    const uint j = j0 + k;
    if ((k & (chunk - 1)) == 0) {
      high_y = four && j >= split;
      const uint qa = high_y ? last - j : j;
      if (interpolates && j != last) { /* the last row of a nested grid has no level row above */
        const global real *r0 = d + ((high_y ? low_count : 0) + (qa >> m)) * count + kx0;
        low = r0[0] + tx * (r0[1] - r0[0]);
        high = r0[count] + tx * (r0[count + 1] - r0[count]);
      }
    }
    real value = 0;
    if (j != 0 && j != last) {
      const uint qy = high_y ? last - j : j;
      const uint y_level = (qy & mask) == 0 || (four && (j == split || j + 1 == split));
      if (x_level && y_level) {
        value = own[k] + level_values[compact_index(j, qy, m, n, low_count, count) * count + kx];
      } else if (interpolates) {
        const real ty = (real)(qy & mask) * inv_l;
        value = own[k] + (low + ty * (high - low));
      }
    }
    column[k * n] = value;
  }
}

kernel void homg_stream_step(uint n, uint l, uint zero_input, global const real *in,
                             ulong in_offset, global const real *d, ulong d_offset,
                             global real *out, ulong out_offset) {
  homg_stream(n, l, zero_input, in + in_offset, d + d_offset, out + out_offset, 0);
}

kernel void homg_stream_variation(uint n, uint l, uint zero_input, global const real *in,
                                  ulong in_offset, global const real *d, ulong d_offset,
                                  global real *out, ulong out_offset) {
  homg_stream(n, l, zero_input, in + in_offset, d + d_offset, out + out_offset, 1);
}

#endif
