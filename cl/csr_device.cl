/* CSR arrays on the device (lib/la/csr_device.c): the transpose by column
 * counts, a scatter and a per-row sort, which makes the scatter's order
 * (which depends on the order the atomics were served in) invisible: the
 * result is the same on every run and every device. The same sorts order
 * the gather of listed rows with renamed columns; the split by columns
 * keeps each row's order. */

/* count[c] += 1 for every entry of column c. */
kernel void csr_count_columns(ulong nnz, global const int *col, global uint *count) {
  GRID_LOOP(k, nnz) {
    atomic_inc(&count[col[k]]);
  }
}

/* Entry (i, c) of a goes to row c of the transpose, at a free place of it:
 * cursor holds the column counts, taken down to 0 (no second zeroing), and
 * a place counts back from the end of the row. */
kernel void csr_transpose_scatter(ulong rows, global const long *row_ptr, global const int *col,
                                  global const real *val, global const long *out_ptr,
                                  global uint *cursor, global int *out_col, global real *out_val) {
  GRID_LOOP(i, rows) {
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int c = col[k];
      const long place = out_ptr[c + 1] - (long)atomic_dec(&cursor[c]);
      out_col[place] = (int)i;
      out_val[place] = val[k];
    }
  }
}

/* Rows are sorted by column (the columns of a row are unique): rows of at
 * most SORT_SHORT entries by a work-item each (insertion sort), longer rows
 * up to SORT_GROUP entries by a work-group each (bitonic sort in local
 * memory: the transposes of AMG prolongators have rows of hundreds), and
 * rows longer still (a vector problem's coarse columns: tens of thousands)
 * by a merge sort: their chunks of SORT_GROUP entries sorted by a
 * work-group each, then passes that merge pairs of sorted runs. */
#define SORT_SHORT 32
#define SORT_GROUP 2048

kernel void csr_sort_rows(ulong rows, global const long *row_ptr, global int *col,
                          global real *val) {
  GRID_LOOP(i, rows) {
    const long begin = row_ptr[i], end = row_ptr[i + 1];
    if (end - begin > SORT_SHORT)
      continue;
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

/* Sorts the `length` (at most SORT_GROUP) entries from `begin` by a
 * work-group: bitonic sort in local memory over the next power of two. */
inline void sort_in_group(long begin, long length, global int *col, global real *val,
                          local int *keys, local real *values) {
  const uint lid = get_local_id(0), size = get_local_size(0);
  uint slots = 2 * SORT_SHORT;
  while (slots < length)
    slots *= 2;
  for (uint s = lid; s < slots; s += size) {
    keys[s] = s < length ? col[begin + s] : INT_MAX;
    values[s] = s < length ? val[begin + s] : 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint block = 2; block <= slots; block *= 2)
    for (uint stride = block / 2; stride > 0; stride /= 2) {
      for (uint t = lid; t < slots; t += size) {
        const uint partner = t ^ stride;
        if (partner > t) {
          const int x = keys[t], y = keys[partner];
          if ((x > y) == ((t & block) == 0)) {
            const real v = values[t];
            keys[t] = y;
            keys[partner] = x;
            values[t] = values[partner];
            values[partner] = v;
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  for (uint s = lid; s < length; s += size) {
    col[begin + s] = keys[s];
    val[begin + s] = values[s];
  }
}

/* One work-group per row of `rows_list` (rows of SORT_SHORT + 1 to
 * SORT_GROUP entries, listed by the host): no loop or early exit around the
 * barriers, which some OpenCL CPU compilers refuse. */
kernel void csr_sort_rows_group(global const uint *rows_list, global const long *row_ptr,
                                global int *col, global real *val) {
  local int keys[SORT_GROUP];
  local real values[SORT_GROUP];
  const ulong i = rows_list[get_group_id(0)];
  const long begin = row_ptr[i];
  sort_in_group(begin, row_ptr[i + 1] - begin, col, val, keys, values);
}

/* The longest of the listed rows, into *longest (0 before). */
kernel void csr_rows_longest(ulong count, global const uint *rows_list, global const long *row_ptr,
                             global uint *longest) {
  GRID_LOOP(k, count) {
    const uint i = rows_list[k];
    atomic_max(longest, (uint)(row_ptr[i + 1] - row_ptr[i]));
  }
}

/* Work-group g sorts chunk g % chunks (SORT_GROUP entries) of listed row
 * g / chunks; a chunk past the row's end sorts nothing, without leaving
 * before the barriers. */
kernel void csr_sort_chunks(global const uint *rows_list, ulong chunks, global const long *row_ptr,
                            global int *col, global real *val) {
  local int keys[SORT_GROUP];
  local real values[SORT_GROUP];
  const ulong g = get_group_id(0), i = rows_list[g / chunks];
  const long first = (long)(g % chunks) * SORT_GROUP;
  const long length = row_ptr[i + 1] - row_ptr[i];
  const long count = length - first < 0 ? 0 : min(length - first, (long)SORT_GROUP);
  sort_in_group(row_ptr[i] + first, count, col, val, keys, values);
}

/* One merge pass over each listed row: the row is runs of `width` sorted
 * entries; run r and run r ^ 1 merge into one. An entry's place is its
 * place in its run plus the entries of the partner run below it (a binary
 * search; the columns of a row are unique). From (col, val) to (out_col,
 * out_val), at the same offsets. */
kernel void csr_merge_runs(global const uint *rows_list, global const long *row_ptr,
                           global const int *col, global const real *val, ulong width,
                           global int *out_col, global real *out_val) {
  const ulong i = rows_list[get_group_id(0)];
  const long begin = row_ptr[i], length = row_ptr[i + 1] - begin;
  for (long t = get_local_id(0); t < length; t += get_local_size(0)) {
    const int key = col[begin + t];
    const long run = t / (long)width, partner = run ^ 1;
    long low = partner * (long)width, high = min(low + (long)width, length);
    const long partner_begin = low;
    if (low > length)
      low = high = length;
    while (low < high) {
      const long mid = low + (high - low) / 2;
      if (col[begin + mid] < key)
        low = mid + 1;
      else
        high = mid;
    }
    const long below = low - min(partner_begin, length);
    const long place = min(run, partner) * (long)width + (t - run * (long)width) + below;
    out_col[begin + place] = key;
    out_val[begin + place] = val[begin + t];
  }
}

/* ---- C = A B (Gustavson) ----
 * A row of C has as columns the union of the columns of B's rows that A's
 * row names. Rows with few products (at most SPGEMM_LONG) take one
 * work-item each: the columns gathered into a private sorted list when
 * there are at most SPGEMM_PRIVATE of them, else found one by one as the
 * smallest above the last (no scratch, more reads). Rows with more products
 * (the Galerkin products of AMG's coarse levels: thousands per row) take a
 * work-group each: their columns go into a hash table in local memory, then
 * a bitonic sort; a row with more than SPGEMM_GROUP_COLUMNS columns (the
 * coarse Galerkin products of vector problems: rigid-body modes make rows
 * of thousands) takes a work-group that walks its columns in windows of
 * SPGEMM_TABLE (csr_multiply_pattern_wide; csr_multiply_values_group takes
 * them in windows too). Values are summed
 * in A's order, then B's, on every path, as the host product does, so all
 * give the same sums. */
#ifndef SPGEMM_PRIVATE
#define SPGEMM_PRIVATE 256
#endif
#define SPGEMM_LONG 128u
#define SPGEMM_TABLE 2048u
#define SPGEMM_GROUP_COLUMNS (SPGEMM_TABLE / 2)
#define SPGEMM_EMPTY INT_MAX
#define SPGEMM_OVERFLOW UINT_MAX

/* The products row i of A makes with B: the lengths of the rows it names. */
inline ulong spgemm_products(long begin, long end, global const int *a_col,
                             global const long *b_ptr) {
  ulong products = 0;
  for (long k = begin; k < end; ++k)
    products += (ulong)(b_ptr[a_col[k] + 1] - b_ptr[a_col[k]]);
  return products;
}

/* Whether row i is the work-group kernels' (fill == 0: by its products;
 * fill == 1: also its column count, known by then, within their tables). */
inline int spgemm_group_row(ulong products, uint fill, global const long *c_ptr, ulong i) {
  return products > SPGEMM_LONG && (!fill || c_ptr[i + 1] - c_ptr[i] <= SPGEMM_GROUP_COLUMNS);
}

/* products[i]: the products row i of A makes with B (capped at UINT_MAX),
 * from which the host lists the work-group kernels' rows. */
kernel void csr_multiply_products(ulong rows, global const long *a_ptr, global const int *a_col,
                                  global const long *b_ptr, global uint *products) {
  GRID_LOOP(i, rows) {
    const ulong p = spgemm_products(a_ptr[i], a_ptr[i + 1], a_col, b_ptr);
    products[i] = p > UINT_MAX ? UINT_MAX : (uint)p;
  }
}

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

/* Row lengths of C (fill == 0) or its sorted columns (fill == 1) for the
 * rows the work-group kernel leaves (it runs first: a row it marked
 * SPGEMM_OVERFLOW is counted here); `length` holds the row lengths. */
kernel void csr_multiply_pattern(ulong rows, global const long *a_ptr, global const int *a_col,
                                 global const long *b_ptr, global const int *b_col, uint fill,
                                 global uint *length, global const long *c_ptr, global int *c_col) {
  GRID_LOOP(i, rows) {
    const long begin = a_ptr[i], end = a_ptr[i + 1];
    /* rows of more products are the work-group kernels' (group or wide) */
    if (spgemm_products(begin, end, a_col, b_ptr) > SPGEMM_LONG)
      continue;
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

/* The same for rows with more than SPGEMM_LONG products, a work-group per
 * row of `rows_list` (listed by the host; no loop or early exit around the
 * barriers, which some OpenCL CPU compilers refuse): each column goes into a hash table in local
 * memory (open addressing, slots at least twice the products up to SPGEMM_TABLE). Counting
 * (csr_multiply_count_group) writes the row's length, or SPGEMM_OVERFLOW when the row has more
 * than SPGEMM_GROUP_COLUMNS columns; filling (csr_multiply_pattern_group) packs the occupied
 * slots (at most SPGEMM_GROUP_COLUMNS there) and sorts those alone (bitonic over the power of two
 * above the count, padded with INT_MAX), where sorting the whole table took twice the slots'
 * stages: an AMG level's Galerkin rows hold tens of columns in a table of 256 to 2,048 slots.
 * The counting kernel holds the table alone in local memory (8 KB), so that more work-groups fit
 * on a compute unit than with the filling kernel's packed columns beside it. */

/* Row i's columns into `table` (its slot count returned); *count the
 * distinct columns, *full set where a column found no slot. Ends with a
 * barrier. */
inline uint spgemm_hash_row(ulong i, global const long *a_ptr, global const int *a_col,
                            global const long *b_ptr, global const int *b_col, local int *table,
                            local uint *count, local uint *full) {
  const uint lid = get_local_id(0), size = get_local_size(0);
  const long begin = a_ptr[i], end = a_ptr[i + 1];
  const ulong products = spgemm_products(begin, end, a_col, b_ptr);
  uint slots = 2 * SPGEMM_LONG;
  while (slots < 2 * products && slots < SPGEMM_TABLE)
    slots *= 2;
  for (uint s = lid; s < slots; s += size)
    table[s] = SPGEMM_EMPTY;
  if (lid == 0) {
    *count = 0;
    *full = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long k = begin; k < end; ++k) {
    const int m = a_col[k];
    for (long l = b_ptr[m] + lid; l < b_ptr[m + 1]; l += size) {
      const int c = b_col[l];
      uint h = ((uint)c * 0x9e3779b1u) & (slots - 1), probe = 0;
      for (; probe < slots; ++probe) {
        const int seen = atomic_cmpxchg(&table[h], SPGEMM_EMPTY, c);
        if (seen == SPGEMM_EMPTY)
          atomic_inc(count);
        if (seen == SPGEMM_EMPTY || seen == c)
          break;
        h = (h + 1) & (slots - 1);
      }
      if (probe == slots)
        *full = 1;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return slots;
}

/* The counting pass (fill is 0; c_ptr and c_col are not read: the pattern
 * kernels' arguments). */
kernel void csr_multiply_count_group(global const uint *rows_list, global const long *a_ptr,
                                     global const int *a_col, global const long *b_ptr,
                                     global const int *b_col, uint fill, global uint *length,
                                     global const long *c_ptr, global int *c_col) {
  local int table[SPGEMM_TABLE];
  local uint count, full;
  const ulong i = rows_list[get_group_id(0)];
  spgemm_hash_row(i, a_ptr, a_col, b_ptr, b_col, table, &count, &full);
  if (get_local_id(0) == 0)
    length[i] = full || count > SPGEMM_GROUP_COLUMNS ? SPGEMM_OVERFLOW : count;
}

/* The filling pass (fill is 1), on rows of at most SPGEMM_GROUP_COLUMNS
 * columns. */
kernel void csr_multiply_pattern_group(global const uint *rows_list, global const long *a_ptr,
                                       global const int *a_col, global const long *b_ptr,
                                       global const int *b_col, uint fill, global uint *length,
                                       global const long *c_ptr, global int *c_col) {
  local int table[SPGEMM_TABLE];
  local int packed[SPGEMM_GROUP_COLUMNS];
  local uint count, full, packed_count;
  const uint lid = get_local_id(0), size = get_local_size(0);
  const ulong i = rows_list[get_group_id(0)];
  if (lid == 0)
    packed_count = 0;
  const uint slots = spgemm_hash_row(i, a_ptr, a_col, b_ptr, b_col, table, &count, &full);
  /* the occupied slots packed, padded to a power of two and sorted */
  for (uint s = lid; s < slots; s += size) {
    const int c = table[s];
    if (c != SPGEMM_EMPTY) {
      const uint at = atomic_inc(&packed_count);
      if (at < SPGEMM_GROUP_COLUMNS)
        packed[at] = c;
    }
  }
  uint width = 1;
  while (width < count && width < SPGEMM_GROUP_COLUMNS)
    width *= 2;
  for (uint s = count + lid; s < width; s += size)
    packed[s] = INT_MAX;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint block = 2; block <= width; block *= 2)
    for (uint stride = block / 2; stride > 0; stride /= 2) {
      for (uint t = lid; t < width; t += size) {
        const uint partner = t ^ stride;
        if (partner > t) {
          const int x = packed[t], y = packed[partner];
          if ((x > y) == ((t & block) == 0)) {
            packed[t] = y;
            packed[partner] = x;
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  for (uint s = lid; s < count && s < SPGEMM_GROUP_COLUMNS; s += size)
    c_col[c_ptr[i] + s] = packed[s];
}

/* The place of column c in a sorted row (c is there). */
#define SPGEMM_FIND(columns, low_start, high_start, c, place)                                      \
  do {                                                                                             \
    long low = (low_start), high = (high_start);                                                   \
    while (low < high) {                                                                           \
      const long middle = low + (high - low) / 2;                                                  \
      if ((columns)[middle] < (c))                                                                 \
        low = middle + 1;                                                                          \
      else                                                                                         \
        high = middle;                                                                             \
    }                                                                                              \
    (place) = low;                                                                                 \
  } while (0)

/* The values of C on its pattern, for the rows the work-group kernel
 * leaves: each product added at its column, found by binary search. A row
 * of at most SPGEMM_VALUES_PRIVATE columns sums in private memory and
 * writes each value once (a GPU caches private memory in L1, where a sum in
 * global memory went to L2 for every product); longer rows sum in place.
 * Either way each sum starts at 0 and takes its products in A's order, then
 * B's, with the same expression: the same bits. */
#define SPGEMM_VALUES_PRIVATE 64

kernel void csr_multiply_values(ulong rows, global const long *a_ptr, global const int *a_col,
                                global const real *a_val, global const long *b_ptr,
                                global const int *b_col, global const real *b_val,
                                global const long *c_ptr, global const int *c_col,
                                global real *c_val) {
  GRID_LOOP(i, rows) {
    if (spgemm_products(a_ptr[i], a_ptr[i + 1], a_col, b_ptr) > SPGEMM_LONG)
      continue;
    const long c_begin = c_ptr[i], c_end = c_ptr[i + 1];
    if (c_end - c_begin <= SPGEMM_VALUES_PRIVATE) {
      real sums[SPGEMM_VALUES_PRIVATE];
      const int n = (int)(c_end - c_begin);
      for (int p = 0; p < n; ++p)
        sums[p] = 0;
      for (long k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
        const int m = a_col[k];
        const real scale = a_val[k];
        for (long l = b_ptr[m]; l < b_ptr[m + 1]; ++l) {
          long place;
          SPGEMM_FIND(c_col, c_begin, c_end, b_col[l], place);
          sums[place - c_begin] += scale * b_val[l];
        }
      }
      for (int p = 0; p < n; ++p)
        c_val[c_begin + p] = sums[p];
      continue;
    }
    for (long p = c_begin; p < c_end; ++p)
      c_val[p] = 0;
    for (long k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const int m = a_col[k];
      const real scale = a_val[k];
      for (long l = b_ptr[m]; l < b_ptr[m + 1]; ++l) {
        long place;
        SPGEMM_FIND(c_col, c_begin, c_end, b_col[l], place);
        c_val[place] += scale * b_val[l];
      }
    }
  }
}

/* ---- rows of more than SPGEMM_GROUP_COLUMNS columns: windows ----
 * A work-group a listed row. The pattern: the row's columns are walked in
 * windows of SPGEMM_TABLE consecutive column numbers, each a table of flags
 * in local memory that every product in it sets; a window's count is a sum
 * of the flags, and filling writes them in order (so sorted, with no sort).
 * Each pass over the products also finds the smallest column beyond the
 * window, where the next one starts: empty stretches of columns cost
 * nothing, and a row of W columns in all takes at most W / SPGEMM_TABLE + 1
 * windows that hold some. The loops run the same number of times on every
 * work-item (their bounds are in local memory), around their barriers. */
#define SPGEMM_WIDE_PARTS 1024

kernel void csr_multiply_pattern_wide(global const uint *rows_list, global const long *a_ptr,
                                      global const int *a_col, global const long *b_ptr,
                                      global const int *b_col, uint fill, global uint *length,
                                      global const long *c_ptr, global int *c_col) {
  local uint flags[SPGEMM_TABLE];
  local uint part[SPGEMM_WIDE_PARTS];
  local int base_shared, next_shared, last_shared;
  local uint total;
  const uint lid = get_local_id(0), size = get_local_size(0);
  const ulong i = rows_list[get_group_id(0)];
  const long begin = a_ptr[i], end = a_ptr[i + 1];
  if (lid == 0) {
    base_shared = INT_MAX;
    last_shared = -1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int first = INT_MAX, last = -1;
  for (long k = begin; k < end; ++k) {
    const int m = a_col[k];
    for (long l = b_ptr[m] + lid; l < b_ptr[m + 1]; l += size) {
      first = min(first, b_col[l]);
      last = max(last, b_col[l]);
    }
  }
  atomic_min(&base_shared, first);
  atomic_max(&last_shared, last);
  barrier(CLK_LOCAL_MEM_FENCE);
  /* at most this many windows, whatever the gaps */
  const uint windows = (uint)((last_shared - base_shared) / (int)SPGEMM_TABLE) + 1;
  const uint chunk = (SPGEMM_TABLE + size - 1) / size;
  uint written = 0;
  for (uint w = 0; w < windows; ++w) {
    const int base = base_shared; /* INT_MAX: the row is done, the window empty */
    for (uint s = lid; s < SPGEMM_TABLE; s += size)
      flags[s] = 0;
    if (lid == 0)
      next_shared = INT_MAX;
    barrier(CLK_LOCAL_MEM_FENCE);
    int next = INT_MAX;
    if (base != INT_MAX)
      for (long k = begin; k < end; ++k) {
        const int m = a_col[k];
        for (long l = b_ptr[m] + lid; l < b_ptr[m + 1]; l += size) {
          const int c = b_col[l];
          if (c >= base && c - base < (int)SPGEMM_TABLE)
            flags[c - base] = 1;
          else if (c > base && c < next)
            next = c;
        }
      }
    atomic_min(&next_shared, next);
    barrier(CLK_LOCAL_MEM_FENCE);
    /* a contiguous chunk of flags a work-item: its count, then the offsets */
    uint count = 0;
    for (uint s = lid * chunk; s < (lid + 1) * chunk && s < SPGEMM_TABLE; ++s)
      count += flags[s];
    part[lid] = count;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      uint sum = 0;
      for (uint t = 0; t < size; ++t) {
        const uint here = part[t];
        part[t] = sum;
        sum += here;
      }
      total = sum;
      base_shared = next_shared;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (fill) {
      uint place = written + part[lid];
      for (uint s = lid * chunk; s < (lid + 1) * chunk && s < SPGEMM_TABLE; ++s)
        if (flags[s])
          c_col[c_ptr[i] + place++] = base + (int)s;
    }
    written += total;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (!fill && lid == 0)
    length[i] = written;
}

/* The values of the rows of more than SPGEMM_LONG products (rows_list), a
 * work-group a row: C's columns (known now) in windows of
 * SPGEMM_GROUP_COLUMNS positions (one window for the rows the hash table
 * took, several for the wide ones), each a table of columns and sums in
 * local memory. The group takes A's entries in order (a barrier after each)
 * and shares out the entries of each B row, whose columns are distinct, so
 * no two work-items add to one sum at once and every sum is formed in the
 * order of the work-item kernel. */
kernel void csr_multiply_values_group(global const uint *rows_list, global const long *a_ptr,
                                     global const int *a_col, global const real *a_val,
                                     global const long *b_ptr, global const int *b_col,
                                     global const real *b_val, global const long *c_ptr,
                                     global const int *c_col, global real *c_val) {
  local int columns[SPGEMM_GROUP_COLUMNS];
  local real sums[SPGEMM_GROUP_COLUMNS];
  const uint lid = get_local_id(0), size = get_local_size(0);
  const ulong i = rows_list[get_group_id(0)];
  const long begin = a_ptr[i], end = a_ptr[i + 1];
  const long c_begin = c_ptr[i];
  const long length = c_ptr[i + 1] - c_begin;
  const long windows = (length + SPGEMM_GROUP_COLUMNS - 1) / SPGEMM_GROUP_COLUMNS;
  for (long w = 0; w < windows; ++w) {
    const long start = w * SPGEMM_GROUP_COLUMNS;
    const long n = min((long)SPGEMM_GROUP_COLUMNS, length - start);
    for (long s = lid; s < n; s += size) {
      columns[s] = c_col[c_begin + start + s];
      sums[s] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int low = columns[0], high = columns[n - 1];
    for (long k = begin; k < end; ++k) {
      const int m = a_col[k];
      const real scale = a_val[k];
      for (long l = b_ptr[m] + lid; l < b_ptr[m + 1]; l += size) {
        const int c = b_col[l];
        if (c < low || c > high)
          continue;
        long place;
        SPGEMM_FIND(columns, 0, n, c, place);
        sums[place] += scale * b_val[l];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (long s = lid; s < n; s += size)
      c_val[c_begin + start + s] = sums[s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* ---- C = A B where the rows of B that A names hold at most one entry ----
 * (the tentative prolongator of one candidate: row i of C is row i of A,
 * each column k replaced by the column of B's row k, each value a_ik b_k,
 * entries whose B row is empty dropped and repeated columns summed.) A
 * work-item a row keeps the row's columns sorted in private memory
 * (insertion, at most SPGEMM_SINGLE of them) with their sums, each formed
 * from 0 in A's order with the expression csr_multiply_values adds with,
 * so the result is the general path's bit for bit. fill == 0 counts each
 * row's columns into `length` and sets *refused where a row names a B row
 * of more entries or has more than SPGEMM_SINGLE columns (then the host
 * takes the general path for the whole product); fill == 1 writes the
 * columns and values at c_ptr. One pass each, no products pass, no search
 * per product. */
#define SPGEMM_SINGLE 64

kernel void csr_multiply_single(ulong rows, global const long *a_ptr, global const int *a_col,
                                global const real *a_val, global const long *b_ptr,
                                global const int *b_col, global const real *b_val, uint fill,
                                global uint *length, global uint *refused,
                                global const long *c_ptr, global int *c_col,
                                global real *c_val) {
  GRID_LOOP(i, rows) {
    int columns[SPGEMM_SINGLE];
    real sums[SPGEMM_SINGLE];
    uint count = 0, fits = 1;
    for (long k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const int m = a_col[k];
      const long l = b_ptr[m], l_end = b_ptr[m + 1];
      if (l == l_end)
        continue;
      if (l_end - l > 1) {
        fits = 0;
        break;
      }
      const int c = b_col[l];
      uint p = count;
      while (p > 0 && columns[p - 1] > c)
        --p;
      if (p > 0 && columns[p - 1] == c) {
        if (fill)
          sums[p - 1] += a_val[k] * b_val[l];
        continue;
      }
      if (count == SPGEMM_SINGLE) {
        fits = 0;
        break;
      }
      for (uint q = count; q > p; --q) {
        columns[q] = columns[q - 1];
        if (fill)
          sums[q] = sums[q - 1];
      }
      columns[p] = c;
      if (fill) {
        real sum = 0;
        sum += a_val[k] * b_val[l];
        sums[p] = sum;
      }
      ++count;
    }
    if (!fill) {
      length[i] = fits ? count : 0;
      if (!fits)
        *refused = 1;
    } else {
      const long c_begin = c_ptr[i];
      for (uint q = 0; q < count; ++q) {
        c_col[c_begin + q] = columns[q];
        c_val[c_begin + q] = sums[q];
      }
    }
  }
}

/* The listed rows of a matrix with a column map (clmg_csr_device_gather_rows):
 * length[k], the entries of row rows[k]; a row outside 0..a_rows - 1 gets
 * none and lowers *bad to k (bad: the lowest faulty k, INT_MAX for none). */
kernel void csr_gather_lengths(ulong count, global const int *rows, ulong a_rows,
                               global const long *row_ptr, global uint *length, global int *bad) {
  GRID_LOOP(k, count) {
    const int i = rows[k];
    if (i < 0 || (ulong)i >= a_rows) {
      length[k] = 0;
      atomic_min(bad, (int)k);
    } else {
      length[k] = (uint)(row_ptr[i + 1] - row_ptr[i]);
    }
  }
}

/* Row k of the gather: row rows[k]'s entries in their order, column c
 * renamed map[c] (sorted afterwards by the row sorts above); a name outside
 * 0..cols - 1 lowers *bad to k. */
kernel void csr_gather_fill(ulong count, global const int *rows, ulong a_rows,
                            global const long *row_ptr, global const int *col,
                            global const real *val, global const int *map, long cols,
                            global const long *out_ptr, global int *out_col, global real *out_val,
                            global int *bad) {
  GRID_LOOP(k, count) {
    const int i = rows[k];
    if (i < 0 || (ulong)i >= a_rows)
      continue;
    long at = out_ptr[k];
    for (long e = row_ptr[i]; e < row_ptr[i + 1]; ++e, ++at) {
      const int c = map[col[e]];
      if (c < 0 || c >= cols)
        atomic_min(bad, (int)k);
      out_col[at] = c;
      out_val[at] = val[e];
    }
  }
}

/* The split of each row by its columns (clmg_csr_device_split_columns):
 * the entries with columns in [begin, end) and the others. */
kernel void csr_split_count(ulong rows, global const long *row_ptr, global const int *col,
                            long begin, long end, global uint *inside, global uint *outside) {
  GRID_LOOP(i, rows) {
    uint in = 0;
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      in += col[k] >= begin && col[k] < end;
    inside[i] = in;
    outside[i] = (uint)(row_ptr[i + 1] - row_ptr[i]) - in;
  }
}

/* Each row's entries in their order: those inside with columns - begin,
 * the others with their own. */
kernel void csr_split_fill(ulong rows, global const long *row_ptr, global const int *col,
                           global const real *val, long begin, long end,
                           global const long *inside_ptr, global int *inside_col,
                           global real *inside_val, global const long *outside_ptr,
                           global int *outside_col, global real *outside_val) {
  GRID_LOOP(i, rows) {
    long in = inside_ptr[i], out = outside_ptr[i];
    for (long k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int c = col[k];
      if (c >= begin && c < end) {
        inside_col[in] = (int)(c - begin);
        inside_val[in++] = val[k];
      } else {
        outside_col[out] = c;
        outside_val[out++] = val[k];
      }
    }
  }
}
