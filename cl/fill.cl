/* Filling a buffer with a repeated pattern by a kernel (lib/core/context.c,
 * clmg_fill_buffer), where clEnqueueFillBuffer will not do: Oclgrind's
 * uninitialised-value check (21.10) does not count what clEnqueueFillBuffer
 * wrote as initialised, so every kernel that reads zeroed counters was
 * reported (the values themselves were right). Bytes [offset, offset +
 * bytes) get byte k of the pattern at position k mod pattern_size. */
kernel void fill_pattern(global uchar *buffer, ulong offset, ulong bytes, ulong pattern,
                         uint pattern_size) {
  GRID_LOOP(i, bytes) {
    const ulong at = (offset + i) % pattern_size;
    buffer[offset + i] = (uchar)(pattern >> (8 * at));
  }
}
