/* Smoothed aggregation's aggregates and tentative prolongator on the device
 * (lib/amg/device_aggregation.c), the same as the host's (lib/amg/mis.c and
 * smoothed_aggregation.c) for one unknown per node and one near-nullspace
 * vector: the strength test, the roots as a distance-k maximal independent
 * set by rounds with hashed priorities, the joining sweeps, the numbering
 * of the aggregates by their first row, and the fit of the candidate per
 * aggregate; for several unknowns per node and candidates the node
 * matrix, the dissolving of small aggregates and the QR fit per aggregate.
 * Every result is independent of the order the work-items run in: atomics
 * only count or take the minimum, and what they scatter is sorted before
 * it is used. */

#define AGG_OUT 0u
#define AGG_UNDECIDED 1u
#define AGG_IN 2u
#define AGG_MAX_BLOCK 16 /* MAX_BLOCK of lib/amg/smoothed_aggregation.c */

/* MurmurHash3's finaliser, as clmg_index_priority (lib/core/parallel.c). */
inline uint agg_priority(uint i) {
  i ^= i >> 16;
  i *= 0x85ebca6bu;
  i ^= i >> 13;
  i *= 0xc2b2ae35u;
  i ^= i >> 16;
  return i;
}

inline ulong agg_tuple(uint state, ulong i) {
  return (ulong)state << 32 | (ulong)agg_priority((uint)i);
}

/* j != i is a strong neighbour of i when |a_ij| > 0 and |a_ij| >= (theta
 * s_i) s_j, s = sqrt(|diag|): the host's symmetric measure, operation for
 * operation. */
inline int agg_strong(ulong i, int j, real value, real theta_si, global const real *s) {
  const real v = fabs(value);
  return (ulong)j != i && v > 0 && v >= theta_si * s[j];
}

/* s_i = sqrt(|a_ii|) (0 where no diagonal is stored), and *missing the
 * first row with an entry off the diagonal but none on it (it would be
 * aggregated: every entry is strong against a zero diagonal), which the
 * prolongator smoothing cannot take. */
kernel void agg_diagonal_root(ulong rows, global const long *row_ptr, global const int *col,
                              global const real *val, global real *s, global uint *missing) {
  GRID_LOOP(i, rows) {
    real d = 0;
    int stored = 0, off = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (col[k] == (int)i) {
        d = val[k];
        stored = 1;
      } else {
        off |= val[k] != 0;
      }
    }
    s[i] = sqrt(fabs(d));
    if (off && !stored)
      atomic_min(missing, (uint)i);
  }
}

/* The strength of every entry (strong[k] 1 or 0, once, for the rounds and
 * sweeps after), and the first tuples: undecided, or out for a node
 * without strong neighbours (never a root). */
kernel void agg_start(ulong rows, global const long *row_ptr, global const int *col,
                      global const real *val, global const real *s, real theta,
                      global uchar *strong, global ulong *tuple) {
  GRID_LOOP(i, rows) {
    const real theta_si = theta * s[i];
    int any = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int is = agg_strong(i, col[k], val[k], theta_si, s);
      strong[k] = (uchar)is;
      any |= is;
    }
    tuple[i] = agg_tuple(any ? AGG_UNDECIDED : AGG_OUT, i);
  }
}

/* The host enqueues several rounds (and sweeps) per read of their flags:
 * flag[slot] is the flag of this one, and one whose previous round left
 * nothing undecided (or whose previous sweep changed nothing) does
 * nothing, which is what it would have done anyway. */
#define AGG_SETTLED(flag, slot) ((slot) > 0 && (flag)[(slot) - 1] == 0u)

/* out_i = the largest of in_i and in_j over i's strong neighbours j. */
kernel void agg_max_step(ulong rows, global const long *row_ptr, global const int *col,
                         global const uchar *strong, global const ulong *in,
                         global ulong *out, global const uint *undecided, uint slot) {
  if (AGG_SETTLED(undecided, slot))
    return;
  GRID_LOOP(i, rows) {
    ulong m = in[i];
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (strong[k]) {
        const ulong t = in[col[k]];
        m = t > m ? t : m;
      }
    out[i] = m;
  }
}

/* One round's decisions from the largest tuple within k edges: an
 * undecided node that is its own largest becomes a root, one that sees a
 * root goes out; undecided[slot] becomes 1 while any is left (a plain
 * store of one value: no atomic on one address from millions of
 * work-items). */
kernel void agg_decide(ulong rows, global ulong *tuple, global const ulong *largest,
                       global uint *undecided, uint slot) {
  if (AGG_SETTLED(undecided, slot))
    return;
  GRID_LOOP(i, rows) {
    const ulong own = tuple[i];
    if ((uint)(own >> 32) != AGG_UNDECIDED)
      continue;
    const ulong m = largest[i];
    if (m == own)
      tuple[i] = agg_tuple(AGG_IN, i);
    else if ((uint)(m >> 32) == AGG_IN)
      tuple[i] = agg_tuple(AGG_OUT, i);
    else
      undecided[slot] = 1u;
  }
}

/* The roots open an aggregate each, named by the root's row (ordered as
 * the host's count of roots in row order, so ties break alike). */
kernel void agg_open(ulong rows, global const ulong *tuple, global int *aggregate) {
  GRID_LOOP(i, rows) {
    aggregate[i] = (uint)(tuple[i] >> 32) == AGG_IN ? (int)i : -1;
  }
}

/* One joining sweep, from the state before it: a node in no aggregate
 * joins the neighbouring aggregate it has the most strong edges to (ties:
 * the lower one); changed[slot] becomes 1 when one joins. The weights are
 * counted in a table of AGG_TABLE aggregates (a node rarely borders more),
 * by a second pass over the row per aggregate where it does. */
#define AGG_TABLE 8
kernel void agg_join(ulong rows, global const long *row_ptr, global const int *col,
                     global const uchar *strong, global const int *aggregate, global int *next,
                     global uint *changed, uint slot) {
  if (AGG_SETTLED(changed, slot))
    return;
  GRID_LOOP(i, rows) {
    next[i] = aggregate[i];
    if (aggregate[i] >= 0)
      continue;
    int id[AGG_TABLE], weight[AGG_TABLE], used = 0, overflow = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int c = strong[k] ? aggregate[col[k]] : -1;
      if (c < 0)
        continue;
      int t = 0;
      while (t < used && id[t] != c)
        ++t;
      if (t < used) {
        ++weight[t];
      } else if (used < AGG_TABLE) {
        id[used] = c;
        weight[used++] = 1;
      } else {
        overflow = 1;
      }
    }
    int best = -1, best_weight = 0;
    for (int t = 0; t < used; ++t)
      if (weight[t] > best_weight || (weight[t] == best_weight && id[t] < best)) {
        best = id[t];
        best_weight = weight[t];
      }
    for (long k = row_ptr[i]; overflow && k < row_ptr[i + 1]; ++k) {
      const int c = strong[k] ? aggregate[col[k]] : -1;
      if (c < 0 || c == best)
        continue;
      int w = 0;
      for (long m = row_ptr[i]; m < row_ptr[i + 1]; ++m)
        w += strong[m] && aggregate[col[m]] == c;
      if (w > best_weight || (w == best_weight && c < best)) {
        best = c;
        best_weight = w;
      }
    }
    if (best >= 0) {
      next[i] = best;
      changed[slot] = 1u;
    }
  }
}

/* first[c]: the first row of aggregate c (first holds rows beforehand). */
kernel void agg_first_row(ulong rows, global const int *aggregate, global int *first) {
  GRID_LOOP(i, rows) {
    if (aggregate[i] >= 0)
      atomic_min(&first[aggregate[i]], (int)i);
  }
}

/* flag_i = 1 where row i is its aggregate's first: their running count
 * numbers the aggregates in order of first rows, as the host's. */
kernel void agg_first_flags(ulong rows, global const int *aggregate, global const int *first,
                            global uint *flag) {
  GRID_LOOP(i, rows) {
    flag[i] = aggregate[i] >= 0 && first[aggregate[i]] == (int)i;
  }
}

kernel void agg_renumber(ulong rows, global int *aggregate, global const int *first,
                         global const long *number) {
  GRID_LOOP(i, rows) {
    if (aggregate[i] >= 0)
      aggregate[i] = (int)number[first[aggregate[i]]];
  }
}

/* size[c] += 1 per member; member_row: one entry per aggregated row. */
kernel void agg_sizes(ulong rows, global const int *aggregate, global uint *size,
                      global uint *member_row) {
  GRID_LOOP(i, rows) {
    const int c = aggregate[i];
    member_row[i] = c >= 0;
    if (c >= 0)
      atomic_inc(&size[c]);
  }
}

/* The members of each aggregate, in no order yet: cursor holds the sizes,
 * taken down to 0. */
kernel void agg_scatter(ulong rows, global const int *aggregate, global const long *start,
                        global uint *cursor, global int *members) {
  GRID_LOOP(i, rows) {
    const int c = aggregate[i];
    if (c >= 0)
      members[start[c + 1] - (long)atomic_dec(&cursor[c])] = (int)i;
  }
}

/* Per aggregate: its members sorted by row, then the fit of the candidate b
 * (fit_candidates with one vector): q_i = b_i / ||b_c||, the coarse
 * candidate ||b_c||; an aggregate where b vanishes gets the unit vector of
 * its first row and 0. q goes to P~'s value of each member's row. */
kernel void agg_fit(ulong count, global const long *start, global int *members,
                    global const real *b, global const long *p_ptr, global real *p_val,
                    global int *p_col, global real *coarse_b) {
  GRID_LOOP(c, count) {
    const long begin = start[c], end = start[c + 1];
    for (long t = begin + 1; t < end; ++t) {
      const int row = members[t];
      long u = t;
      while (u > begin && members[u - 1] > row) {
        members[u] = members[u - 1];
        --u;
      }
      members[u] = row;
    }
    real norm = 0;
    for (long t = begin; t < end; ++t)
      norm += b[members[t]] * b[members[t]];
    norm = sqrt(norm);
    const int fitted = norm > (real)1e-10 * norm && norm > (real)1e-300;
    for (long t = begin; t < end; ++t) {
      const int row = members[t];
      p_col[p_ptr[row]] = (int)c;
      p_val[p_ptr[row]] = fitted ? b[row] / norm : (t == begin ? 1 : 0);
    }
    coarse_b[c] = fitted ? norm : 0;
  }
}

/* ---- vector problems: the node matrix and the aggregates' sizes ---- */

#pragma OPENCL FP_CONTRACT OFF

/* The node matrix of A with `block` unknowns per node (node I's rows are
 * block I .. block I + block - 1, each with its columns in order, as
 * agg_rows_sorted checks): count[I] = how many node columns J = col /
 * block its rows touch (a merge of the rows). */
kernel void agg_node_count(ulong nodes, ulong block, global const long *row_ptr,
                           global const int *col, global uint *count) {
  GRID_LOOP(node, nodes) {
    long cursor[AGG_MAX_BLOCK], end[AGG_MAX_BLOCK];
    for (uint b = 0; b < block; ++b) {
      cursor[b] = row_ptr[node * block + b];
      end[b] = row_ptr[node * block + b + 1];
    }
    uint found = 0;
    for (;;) {
      int next = INT_MAX;
      for (uint b = 0; b < block; ++b)
        if (cursor[b] < end[b] && col[cursor[b]] / (int)block < next)
          next = col[cursor[b]] / (int)block;
      if (next == INT_MAX)
        break;
      ++found;
      for (uint b = 0; b < block; ++b)
        while (cursor[b] < end[b] && col[cursor[b]] / (int)block == next)
          ++cursor[b];
    }
    count[node] = found;
  }
}

/* The node matrix's entries: (I, J) = the Frobenius norm of A's block of
 * node rows I and node columns J, the squares summed in the host's order
 * (row by row, each row's entries in order) without contraction, so the
 * value is the host's bit for bit (lib/amg/smoothed_aggregation.c,
 * node_matrix). */
kernel void agg_node_fill(ulong nodes, ulong block, global const long *row_ptr,
                          global const int *col, global const real *val,
                          global const long *node_ptr, global int *node_col,
                          global real *node_val) {
  GRID_LOOP(node, nodes) {
    long cursor[AGG_MAX_BLOCK], end[AGG_MAX_BLOCK];
    for (uint b = 0; b < block; ++b) {
      cursor[b] = row_ptr[node * block + b];
      end[b] = row_ptr[node * block + b + 1];
    }
    long out = node_ptr[node];
    for (;;) {
      int next = INT_MAX;
      for (uint b = 0; b < block; ++b)
        if (cursor[b] < end[b] && col[cursor[b]] / (int)block < next)
          next = col[cursor[b]] / (int)block;
      if (next == INT_MAX)
        break;
      real sum = 0;
      for (uint b = 0; b < block; ++b)
        while (cursor[b] < end[b] && col[cursor[b]] / (int)block == next) {
          const real v = val[cursor[b]];
          const real square = v * v;
          sum = sum + square;
          ++cursor[b];
        }
      node_col[out] = next;
      node_val[out] = sqrt(sum);
      ++out;
    }
  }
}

/* size[c] += 1 per member of aggregate c. */
kernel void agg_count_sizes(ulong rows, global const int *aggregate, global uint *size) {
  GRID_LOOP(i, rows) {
    if (aggregate[i] >= 0)
      atomic_inc(&size[aggregate[i]]);
  }
}

/* *kept = how many of the count aggregates have at least min_size members. */
kernel void agg_count_kept(ulong count, global const uint *size, ulong min_size,
                           global uint *kept) {
  GRID_LOOP(c, count) {
    if (size[c] >= min_size)
      atomic_inc(kept);
  }
}

/* The members of aggregates of fewer than min_size members leave them. */
kernel void agg_dissolve(ulong rows, global int *aggregate, global const uint *size,
                         ulong min_size) {
  GRID_LOOP(i, rows) {
    if (aggregate[i] >= 0 && size[aggregate[i]] < min_size)
      aggregate[i] = -1;
  }
}

/* The rows' aggregates from their nodes' (block rows per node). */
kernel void agg_expand(ulong rows, ulong block, global const int *node_aggregate,
                       global int *aggregate) {
  GRID_LOOP(i, rows) {
    aggregate[i] = node_aggregate[i / block];
  }
}

/* The near-nullspace fit of k candidates per aggregate (the host's
 * fit_candidates, operation for operation, one work-item per aggregate):
 * the members sorted by row, the candidates' rows of the aggregate (b is
 * n x k column-major) orthonormalised by modified Gram-Schmidt with a
 * second pass, a column dependent on the earlier ones replaced by the next
 * unit vector (R keeping its zero), Q to P~'s k entries of each member's
 * row (columns j k .. j k + k - 1), R to the coarse candidates r (count k x
 * k column-major: R_j(a, c) at r[c count k + j k + a]). q: k scratch
 * entries per member. */
kernel void agg_fit_block(ulong count, ulong k, ulong n, global const long *start,
                          global int *members, global const real *b, global const long *p_ptr,
                          global int *p_col, global real *p_val, global real *q_all,
                          global real *r) {
  GRID_LOOP(j, count) {
    const long begin = start[j], end = start[j + 1];
    for (long t = begin + 1; t < end; ++t) {
      const int row = members[t];
      long u = t;
      while (u > begin && members[u - 1] > row) {
        members[u] = members[u - 1];
        --u;
      }
      members[u] = row;
    }
    const ulong m = (ulong)(end - begin), nc = count * k;
    global const int *rows = members + begin;
    global real *q = q_all + begin * (long)k;
    global real *rj = r + j * k;
    for (ulong c = 0; c < k; ++c)
      for (ulong a = 0; a < k; ++a)
        rj[c * nc + a] = 0;
    ulong unit = 0;
    for (ulong c = 0; c < k; ++c) {
      global real *qc = q + c * m;
      real norm0 = 0;
      for (ulong t = 0; t < m; ++t) {
        const real v = b[c * n + (ulong)rows[t]];
        qc[t] = v;
        const real square = v * v;
        norm0 = norm0 + square;
      }
      norm0 = sqrt(norm0);
      int replaced = 0;
      for (;;) {
        for (int pass = 0; pass < 2; ++pass)
          for (ulong e = 0; e < c; ++e) {
            global const real *qe = q + e * m;
            real dot = 0;
            for (ulong t = 0; t < m; ++t) {
              const real product = qe[t] * qc[t];
              dot = dot + product;
            }
            for (ulong t = 0; t < m; ++t) {
              const real product = dot * qe[t];
              qc[t] = qc[t] - product;
            }
            if (!replaced)
              rj[c * nc + e] += dot;
          }
        real norm = 0;
        for (ulong t = 0; t < m; ++t) {
          const real square = qc[t] * qc[t];
          norm = norm + square;
        }
        norm = sqrt(norm);
        if (norm > (real)1e-10 * norm0 && norm > (real)1e-300) {
          if (!replaced)
            rj[c * nc + c] = norm;
          for (ulong t = 0; t < m; ++t)
            qc[t] /= norm;
          break;
        }
        replaced = 1;
        if (unit >= m) {
          for (ulong t = 0; t < m; ++t)
            qc[t] = 0;
          break;
        }
        for (ulong t = 0; t < m; ++t)
          qc[t] = t == unit ? 1 : 0;
        norm0 = 1;
        ++unit;
      }
    }
    for (ulong t = 0; t < m; ++t) {
      const long at = p_ptr[rows[t]];
      for (ulong c = 0; c < k; ++c) {
        p_col[at + (long)c] = (int)(j * k + c);
        p_val[at + (long)c] = q[c * m + t];
      }
    }
  }
}

/* *missing = the first row in an aggregate without a stored diagonal entry
 * (the host's check_aggregated_diagonals; *missing holds rows beforehand). */
kernel void agg_missing_diagonal(ulong rows, global const long *row_ptr, global const int *col,
                                 global const int *aggregate, global uint *missing) {
  GRID_LOOP(i, rows) {
    if (aggregate[i] < 0)
      continue;
    int stored = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1] && !stored; ++k)
      stored = col[k] == (int)i;
    if (!stored)
      atomic_min(missing, (uint)i);
  }
}
