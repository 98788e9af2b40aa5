/* CSR arrays on the device (lib/la/csr_device.c): the transpose by column
 * counts, a scatter and a per-row sort. Rows of finite-element transfers and
 * assembled matrices are short (at most a few hundred entries), so an
 * insertion sort per row is cheap, and it makes the scatter's order (which
 * depends on the order the atomics were served in) invisible: the result is
 * the same on every run and every device. */

/* count[c] += 1 for every entry of column c. */
kernel void csr_count_columns(ulong nnz, global const int *col, global uint *count) {
  GRID_LOOP(k, nnz) { atomic_inc(&count[col[k]]); }
}

/* Entry (i, c) of a goes to row c of the transpose, at a free place of it. */
kernel void csr_transpose_scatter(ulong rows, global const long *row_ptr, global const int *col,
                                  global const real *val, global const long *out_ptr,
                                  global uint *cursor, global int *out_col, global real *out_val) {
  GRID_LOOP(i, rows) {
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int c = col[k];
      const long place = out_ptr[c] + (long)atomic_inc(&cursor[c]);
      out_col[place] = (int)i;
      out_val[place] = val[k];
    }
  }
}

/* Sorts each row by column (insertion sort; the columns are unique). */
kernel void csr_sort_rows(ulong rows, global const long *row_ptr, global int *col,
                          global real *val) {
  GRID_LOOP(i, rows) {
    const long begin = row_ptr[i], end = row_ptr[i + 1];
    for (long k = begin + 1; k < end; ++k) {
      const int c = col[k];
      const real v = val[k];
      long p = k;
      while (p > begin && col[p - 1] > c) {
        col[p] = col[p - 1];
        val[p] = val[p - 1];
        --p;
      }
      col[p] = c;
      val[p] = v;
    }
  }
}

/* ---- C = A B, one row of C per work-item (Gustavson) ----
 * The row's columns are the union of the columns of B's rows that A's row
 * names: gathered into a private sorted list when there are at most
 * SPGEMM_PRIVATE of them, else found one by one as the smallest above the
 * last (no scratch, more reads). Values are summed in A's order, then B's,
 * as the host product does, so both give the same sums. */
#ifndef SPGEMM_PRIVATE
#define SPGEMM_PRIVATE 256
#endif

/* The smallest column above `last` in the rows of B that row i of A names
 * (INT_MAX when none is left). */
inline int spgemm_next(long begin, long end, global const int *a_col, global const long *b_ptr,
                       global const int *b_col, int last) {
  int next = INT_MAX;
  for (long k = begin; k < end; ++k) {
    const int m = a_col[k];
    for (long l = b_ptr[m]; l < b_ptr[m + 1]; ++l) {
      const int c = b_col[l];
      if (c > last && c < next)
        next = c;
    }
  }
  return next;
}

/* Row lengths of C (fill == 0) or its sorted columns (fill == 1); `overflow`
 * counts the rows that took the scratch-free walk. */
kernel void csr_multiply_pattern(ulong rows, global const long *a_ptr, global const int *a_col,
                                 global const long *b_ptr, global const int *b_col, uint fill,
                                 global uint *length, global const long *c_ptr, global int *c_col) {
  GRID_LOOP(i, rows) {
    const long begin = a_ptr[i], end = a_ptr[i + 1];
    int sorted[SPGEMM_PRIVATE];
    uint count = 0, fits = 1;
    for (long k = begin; k < end && fits; ++k) {
      const int m = a_col[k];
      for (long l = b_ptr[m]; l < b_ptr[m + 1] && fits; ++l) {
        const int c = b_col[l];
        uint p = count;
        while (p > 0 && sorted[p - 1] > c)
          --p;
        if (p > 0 && sorted[p - 1] == c)
          continue;
        if (count == SPGEMM_PRIVATE) {
          fits = 0;
          break;
        }
        for (uint q = count; q > p; --q)
          sorted[q] = sorted[q - 1];
        sorted[p] = c;
        ++count;
      }
    }
    if (!fits) {
      count = 0;
      int c = spgemm_next(begin, end, a_col, b_ptr, b_col, -1);
      while (c != INT_MAX) {
        if (fill)
          c_col[c_ptr[i] + count] = c;
        ++count;
        c = spgemm_next(begin, end, a_col, b_ptr, b_col, c);
      }
    } else if (fill) {
      for (uint k = 0; k < count; ++k)
        c_col[c_ptr[i] + k] = sorted[k];
    }
    if (!fill)
      length[i] = count;
  }
}

/* The values of C on its pattern: each product added at its column, found
 * by binary search in the row. */
kernel void csr_multiply_values(ulong rows, global const long *a_ptr, global const int *a_col,
                                global const real *a_val, global const long *b_ptr,
                                global const int *b_col, global const real *b_val,
                                global const long *c_ptr, global const int *c_col,
                                global real *c_val) {
  GRID_LOOP(i, rows) {
    const long c_begin = c_ptr[i], c_end = c_ptr[i + 1];
    for (long p = c_begin; p < c_end; ++p)
      c_val[p] = 0;
    for (long k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const int m = a_col[k];
      const real scale = a_val[k];
      for (long l = b_ptr[m]; l < b_ptr[m + 1]; ++l) {
        const int c = b_col[l];
        long low = c_begin, high = c_end;
        while (low < high) {
          const long middle = low + (high - low) / 2;
          if (c_col[middle] < c)
            low = middle + 1;
          else
            high = middle;
        }
        c_val[low] += scale * b_val[l];
      }
    }
  }
}
