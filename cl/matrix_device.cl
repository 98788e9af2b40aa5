/* Device matrices built from, and updated by, CSR arrays that live on the
 * device (lib/la/matrix.c: clmg_matrix_create_from_device). The layout of
 * every format depends only on the row lengths, and it is made here from
 * the row offsets: a summary (the checks, the longest row, the long rows)
 * that the host reads, then each format's arrays, identical to those
 * lib/la/matrix.c lays out from host CSR. The *_map kernels write the map
 * once: map[p] = k + 1 when stored entry p holds CSR entry k, 0 for
 * padding. Columns and values then move on the device only, through the
 * map; CSR, whose map would be the identity, copies them. */

/* The summary of the row offsets (matrix.c's offsets_summary): uints, then
 * at SUMMARY_ENDS the first and the last offsets as two longs. */
#define SUMMARY_FIRST_BAD_ROW 0 /* UINT_MAX when none */
#define SUMMARY_LONGEST_ROW 1
#define SUMMARY_LONG_ROWS 2     /* rows longer than the long-row threshold */
#define SUMMARY_LONG_SEGMENTS 3 /* their segments of segment_length entries */
#define SUMMARY_BAD_COLUMN 4    /* 1 if some column lies outside [0, cols) */
#define SUMMARY_ENDS 8

/* The summary's counters, first per work-group in local memory (one global
 * atomic per group and counter) and on the host's initial values. A row
 * is bad when its offsets decrease or it has more entries than columns. */
kernel void csr_offsets_summary(ulong rows, global const long *row_ptr, ulong row_ptr_offset,
                                ulong cols, ulong long_row_threshold, ulong segment_length,
                                global uint *summary) {
  local uint first_bad, longest, long_rows, segments;
  row_ptr += row_ptr_offset;
  if (get_local_id(0) == 0) {
    first_bad = UINT_MAX;
    longest = long_rows = segments = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint my_first_bad = UINT_MAX, my_longest = 0, my_long_rows = 0, my_segments = 0;
  GRID_LOOP(i, rows) {
    const long length = row_ptr[i + 1] - row_ptr[i];
    if (length < 0 || (ulong)length > cols) {
      my_first_bad = min(my_first_bad, (uint)i);
    } else {
      my_longest = max(my_longest, (uint)length);
      if ((ulong)length > long_row_threshold) {
        ++my_long_rows;
        my_segments += (uint)(((ulong)length + segment_length - 1) / segment_length);
      }
    }
  }
  atomic_min(&first_bad, my_first_bad);
  atomic_max(&longest, my_longest);
  atomic_add(&long_rows, my_long_rows);
  atomic_add(&segments, my_segments);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) {
    atomic_min(&summary[SUMMARY_FIRST_BAD_ROW], first_bad);
    atomic_max(&summary[SUMMARY_LONGEST_ROW], longest);
    atomic_add(&summary[SUMMARY_LONG_ROWS], long_rows);
    atomic_add(&summary[SUMMARY_LONG_SEGMENTS], segments);
  }
  if (get_global_id(0) == 0) {
    global long *ends = (global long *)(summary + SUMMARY_ENDS);
    ends[0] = row_ptr[0];
    ends[1] = row_ptr[rows];
  }
}

/* length[i] = the length of row i (ELLPACK-R's row lengths, the long-row
 * search of CSR). */
kernel void csr_row_lengths(uint rows, global const long *row_ptr, global uint *length) {
  GRID_LOOP(i, rows) {
    length[i] = (uint)(row_ptr[i + 1] - row_ptr[i]);
  }
}

/* start[i] = 1 where row i starts a CSR-Adaptive row block, else 0: the
 * rule of matrix.c's adaptive_block_starts (which says why), row by row. */
kernel void csr_adaptive_block_starts(uint rows, global const long *row_ptr, ulong short_max,
                                      ulong bin, uint block_rows, global uint *start) {
  GRID_LOOP(i, rows) {
    uint starts = i == 0 || i % block_rows == 0;
    if (!starts) {
      const long previous = row_ptr[i - 1], here = row_ptr[i], next = row_ptr[i + 1];
      starts = (ulong)(here - previous) > short_max || (ulong)(next - here) > short_max ||
               (ulong)previous / bin != (ulong)here / bin;
    }
    start[i] = starts;
  }
}

/* CSR's long rows (long_rows, ascending), cut into segments of
 * segment_length entries: each row's segment count, then (from their
 * offsets) its first segment and the segments' [begin, end) in the CSR
 * arrays, as matrix.c's build_csr writes them. */
kernel void csr_long_row_segment_counts(uint count, global const uint *long_rows,
                                        global const long *row_ptr, ulong segment_length,
                                        global uint *segments) {
  GRID_LOOP(k, count) {
    const uint row = long_rows[k];
    const ulong length = (ulong)(row_ptr[row + 1] - row_ptr[row]);
    segments[k] = (uint)((length + segment_length - 1) / segment_length);
  }
}

kernel void csr_long_row_segments(uint count, global const uint *long_rows,
                                  global const long *row_ptr, global const long *segment_offsets,
                                  ulong segment_length, global uint *first_segment,
                                  global long *bounds) {
  GRID_LOOP(k, (ulong)count + 1) {
    long segment = segment_offsets[k];
    first_segment[k] = (uint)segment;
    if (k == count)
      continue;
    const uint row = long_rows[k];
    const long end = row_ptr[row + 1];
    for (long begin = row_ptr[row]; begin < end; begin += (long)segment_length, ++segment) {
      bounds[2 * segment] = begin;
      bounds[2 * segment + 1] = end - begin < (long)segment_length ? end : begin + (long)segment_length;
    }
  }
}

/* ---- SELL-C-sigma's row order: within each window of sigma rows (the
 * last one shorter), the rows by decreasing length, ties in row order (the
 * stable sort of matrix.c's sort_window). Runs of SELL_RUN rows are sorted
 * by a work-item each, then pairs of runs merged until a run is a window.
 * keys[i] is the length of the row order[i]: SELL's row lengths. */
#define SELL_RUN 16

kernel void sell_sort_runs(uint rows, uint sigma, global const long *row_ptr, global uint *keys,
                           global uint *order) {
  const ulong runs_per_window = ((ulong)sigma + SELL_RUN - 1) / SELL_RUN;
  const ulong windows = ((ulong)rows + sigma - 1) / sigma;
  GRID_LOOP(r, windows * runs_per_window) {
    const ulong window = r / runs_per_window;
    const ulong window_end = min((ulong)rows, (window + 1) * sigma);
    const ulong begin = window * sigma + (r % runs_per_window) * SELL_RUN;
    if (begin >= window_end)
      continue;
    const uint count = (uint)min((ulong)SELL_RUN, window_end - begin);
    uint key[SELL_RUN], row[SELL_RUN];
    for (uint k = 0; k < count; ++k) { /* insertion sort: stable */
      const uint i = (uint)begin + k;
      const uint length = (uint)(row_ptr[i + 1] - row_ptr[i]);
      uint p = k;
      while (p > 0 && key[p - 1] < length) {
        key[p] = key[p - 1];
        row[p] = row[p - 1];
        --p;
      }
      key[p] = length;
      row[p] = i;
    }
    for (uint k = 0; k < count; ++k) {
      keys[begin + k] = key[k];
      order[begin + k] = row[k];
    }
  }
}

/* Merges each pair of sorted runs of `run` rows within a window: a row's
 * place is its place in its own run plus the rows of the other run that
 * go first: longer ones for a row of the first run, at least as long ones
 * for a row of the second (so ties keep their order). */
kernel void sell_merge_runs(uint rows, uint sigma, uint run, global const uint *keys,
                            global const uint *order, global uint *merged_keys,
                            global uint *merged_order) {
  GRID_LOOP(p, rows) {
    const ulong window_begin = p / sigma * sigma;
    const ulong window_end = min((ulong)rows, window_begin + sigma);
    const ulong pair_size = 2 * (ulong)run;
    const ulong pair = window_begin + (p - window_begin) / pair_size * pair_size;
    const ulong middle = min(window_end, pair + run), end = min(window_end, pair + pair_size);
    const uint key = keys[p];
    const int first_run = p < middle;
    /* the rows of the other run that go first: a prefix of it */
    ulong low = first_run ? middle : pair, high = first_run ? end : middle;
    while (low < high) {
      const ulong probe = low + (high - low) / 2;
      if (first_run ? keys[probe] > key : keys[probe] >= key)
        low = probe + 1;
      else
        high = probe;
    }
    const ulong place = first_run ? p + (low - middle) : p - middle + low;
    merged_keys[place] = key;
    merged_order[place] = order[p];
  }
}

/* width[s] = the longest (sorted) row of slice s. */
kernel void sell_slice_widths(uint rows, uint height, global const uint *keys,
                              global uint *width) {
  GRID_LOOP(s, ((ulong)rows + height - 1) / height) {
    const ulong end = min((ulong)rows, (s + 1) * height);
    uint longest = 0;
    for (ulong i = s * height; i < end; ++i)
      longest = max(longest, keys[i]);
    width[s] = longest;
  }
}

/* ELLPACK-R(-T): entry j of row r at ((j / lanes) * stride + r) * lanes +
 * j % lanes (lib/la/matrix.c: build_ellr). */
kernel void ellr_map(uint rows, global const long *row_ptr, ulong stride, uint lanes,
                     global long *map) {
  GRID_LOOP(r, rows) {
    const long begin = row_ptr[r], length = row_ptr[r + 1] - begin;
    for (long j = 0; j < length; ++j)
      map[(((ulong)j / lanes) * stride + r) * lanes + (ulong)j % lanes] = begin + j + 1;
  }
}

/* SELL-C-sigma: the row at sorted place i (row order[i]) has its entry j at
 * slice_ptr[i / height] + j * height + i % height (build_sell). */
kernel void sell_map(uint rows, global const long *row_ptr, uint height,
                     global const long *slice_ptr, global const uint *order, global long *map) {
  GRID_LOOP(i, rows) {
    const uint row = order[i];
    const long begin = row_ptr[row], length = row_ptr[row + 1] - begin;
    const long base = slice_ptr[i / height] + (long)(i % height);
    for (long j = 0; j < length; ++j)
      map[base + j * (long)height] = begin + j + 1;
  }
}

/* Stored entries from CSR entries; columns only when write_columns. */
kernel void csr_gather_stored(ulong stored, global const long *map, global const int *csr_col,
                              ulong csr_col_offset, global const real *csr_val,
                              ulong csr_val_offset, global int *columns, global real *values,
                              uint write_columns) {
  csr_col += csr_col_offset;
  csr_val += csr_val_offset;
  GRID_LOOP(p, stored) {
    const long m = map[p];
    if (m > 0) {
      const ulong k = (ulong)(m - 1);
      if (write_columns)
        columns[p] = csr_col[k];
      values[p] = csr_val[k];
    }
  }
}

/* The same for CSR, whose map is the identity: a copy without the map's
 * reads (8 bytes an entry). */
kernel void csr_copy_stored(ulong stored, global const int *csr_col, ulong csr_col_offset,
                            global const real *csr_val, ulong csr_val_offset, global int *columns,
                            global real *values, uint write_columns) {
  csr_col += csr_col_offset;
  csr_val += csr_val_offset;
  GRID_LOOP(p, stored) {
    if (write_columns)
      columns[p] = csr_col[p];
    values[p] = csr_val[p];
  }
}

/* The reverse of csr_gather_stored: each stored entry's value back to its
 * place in CSR order (padding, map 0, goes nowhere). */
kernel void stored_scatter_csr(ulong stored, global const long *map, global const real *values,
                               global real *csr_val, ulong csr_val_offset) {
  csr_val += csr_val_offset;
  GRID_LOOP(p, stored) {
    const long m = map[p];
    if (m > 0)
      csr_val[m - 1] = values[p];
  }
}

/* Per row: the diagonal entry (summed if repeated, 0 if absent) and the sum
 * of squares of the row. */
kernel void csr_diagonal_and_row_squares(ulong rows, global const long *row_ptr,
                                         ulong row_ptr_offset, global const int *csr_col,
                                         ulong csr_col_offset, global const real *csr_val,
                                         ulong csr_val_offset, global real *diagonal,
                                         ulong diagonal_offset, global real *row_squares,
                                         ulong row_squares_offset) {
  diagonal += diagonal_offset;
  row_squares += row_squares_offset;
  row_ptr += row_ptr_offset;
  csr_col += csr_col_offset;
  csr_val += csr_val_offset;
  GRID_LOOP(i, rows) {
    real d = 0, s = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const real v = csr_val[k];
      if (csr_col[k] == (int)i)
        d += v;
      s += v * v;
    }
    diagonal[i] = d;
    row_squares[i] = s;
  }
}

/* The summary's SUMMARY_BAD_COLUMN = 1 if some column lies outside
 * [0, cols). */
kernel void csr_check_columns(ulong nnz, global const int *csr_col, ulong csr_col_offset, int cols,
                              global uint *summary) {
  csr_col += csr_col_offset;
  GRID_LOOP(k, nnz) {
    if (csr_col[k] < 0 || csr_col[k] >= cols)
      summary[SUMMARY_BAD_COLUMN] = 1;
  }
}
