/* Prefix sums and row lists on the device (lib/la/csr_device.c:
 * clmg_scan_counts, clmg_row_list), so that the offsets of counted rows
 * never cross the bus. A scan takes three launches: each work-group sums
 * its block of counts (scan_block_totals), one work-group scans those sums
 * (scan_block_offsets), and each work-group scans its block again from its
 * block's offset (scan_blocks). A block holds SCAN_ITEMS consecutive counts
 * per work-item, so a work-item walks a contiguous run and any work-group
 * size works. Precision-free: built with the float options. */
#define SCAN_ITEMS 8

/* The exclusive prefix of `value` over the work-group in work-item order;
 * *total is the group's sum. scratch holds get_local_size(0) ulongs. Every
 * work-item must call it (Hillis-Steele: log2(size) steps, any size). */
inline ulong group_exclusive_scan(local ulong *scratch, ulong value, ulong *total) {
  const uint lid = get_local_id(0), size = get_local_size(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint offset = 1; offset < size; offset *= 2) {
    const ulong add = lid >= offset ? scratch[lid - offset] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *total = scratch[size - 1];
  const ulong inclusive = scratch[lid];
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused at once */
  return inclusive - value;
}

/* The counts of this work-item's run of its group's block: [begin, end). */
#define SCAN_ITEM_RUN(n)                                                                           \
  const ulong begin = (get_group_id(0) * get_local_size(0) + get_local_id(0)) * SCAN_ITEMS;        \
  const ulong end = min((ulong)(n), begin + SCAN_ITEMS)

/* block_totals[g] = the sum of block g's counts. */
kernel void scan_block_totals(ulong n, global const uint *counts, ulong counts_offset,
                              global ulong *block_totals, local ulong *scratch) {
  counts += counts_offset;
  SCAN_ITEM_RUN(n);
  ulong sum = 0;
  for (ulong i = begin; i < end; ++i)
    sum += counts[i];
  ulong total;
  group_exclusive_scan(scratch, sum, &total);
  if (get_local_id(0) == 0)
    block_totals[get_group_id(0)] = total;
}

/* One work-group: block_totals becomes each block's offset (exclusive
 * scan, in place) and offsets[n] the scaled sum of all counts. A work-item
 * takes a contiguous run of the blocks. */
kernel void scan_block_offsets(ulong blocks, global ulong *block_totals, ulong n, ulong scale,
                               global long *offsets, local ulong *scratch) {
  const uint lid = get_local_id(0), size = get_local_size(0);
  const ulong run = (blocks + size - 1) / size;
  const ulong begin = min(blocks, lid * run), end = min(blocks, begin + run);
  ulong sum = 0;
  for (ulong b = begin; b < end; ++b)
    sum += block_totals[b];
  ulong total;
  ulong prefix = group_exclusive_scan(scratch, sum, &total);
  for (ulong b = begin; b < end; ++b) {
    const ulong block_total = block_totals[b];
    block_totals[b] = prefix;
    prefix += block_total;
  }
  if (lid == 0)
    offsets[n] = (long)(scale * total);
}

/* offsets[i] = scale * (counts[0] + ... + counts[i - 1]) for i < n. */
kernel void scan_blocks(ulong n, global const uint *counts, ulong counts_offset,
                        global const ulong *block_offsets, ulong scale, global long *offsets,
                        local ulong *scratch) {
  counts += counts_offset;
  SCAN_ITEM_RUN(n);
  ulong sum = 0;
  for (ulong i = begin; i < end; ++i)
    sum += counts[i];
  ulong total;
  ulong prefix = block_offsets[get_group_id(0)] + group_exclusive_scan(scratch, sum, &total);
  for (ulong i = begin; i < end; ++i) {
    offsets[i] = (long)(scale * prefix);
    prefix += counts[i];
  }
}

/* ---- row lists: the rows whose value lies in a range, ascending ----
 * flag[i] = 1 for the rows taken (low < value[i] <= high, and also[i] <=
 * also_high when use_also), a scan of the flags gives each its place. */
kernel void row_list_flags(ulong n, global const uint *value, ulong value_offset, uint low,
                           uint high, global const uint *also, ulong also_offset, uint also_high,
                           uint use_also, global uint *flag) {
  value += value_offset;
  also += also_offset;
  GRID_LOOP(i, n) {
    const uint v = value[i];
    flag[i] = v > low && v <= high && (!use_also || also[i] <= also_high);
  }
}

/* list[place[i]] = i for the flagged rows (place: the flags' offsets). */
kernel void row_list_scatter(ulong n, global const long *place, global uint *list) {
  GRID_LOOP(i, n) {
    if (place[i + 1] > place[i])
      list[place[i]] = (uint)i;
  }
}
