/* Kernels that stand in for the host's buffer commands on Oclgrind only
 * (lib/core/memory.c, "Oclgrind's shadow memory", says why): its
 * uninitialised-value check (21.10, as 26.03.1) gives a
 * buffer a shadow of the size of each host store and keeps a released
 * buffer's shadow for the next buffer in its slot, so writes of part of a
 * buffer (fills among them) and copies run as a kernel there, and a new
 * buffer is marked unwritten by one. */

/* Bytes [target_offset, + bytes) of target become those from source_offset
 * of source, each with its own initialised or unwritten state. */
kernel void copy_bytes(global uchar *target, ulong target_offset, global const uchar *source,
                       ulong source_offset, ulong bytes) {
  GRID_LOOP(i, bytes) { target[target_offset + i] = source[source_offset + i]; }
}

/* Oclgrind only: bytes [0, bytes) of the buffer become unwritten in the
 * simulator's shadow (their values are left as they were). The copy of a
 * never-written private block is an aggregate copy, which clang emits as
 * llvm.memcpy and Oclgrind copies shadow and all without a report; a plain
 * store of an unwritten value would be reported here. It needs the kernels
 * built with -cl-opt-disable (OCLGRIND_BUILD_OPTIONS), as the check itself
 * does (21.10 stops at clang's freeze instruction): the optimiser deletes
 * the copy of a never-written block, and the buffer then counts as written,
 * so reads of bytes nothing wrote go unreported (no false report either).
 * Each loop in braces: GRID_LOOP declares its range (CLMG_CPU). */
#define UNWRITTEN_BLOCK 64
typedef struct {
  uchar byte[UNWRITTEN_BLOCK];
} unwritten_block;
typedef struct {
  uchar byte;
} unwritten_byte;

kernel void mark_unwritten(global uchar *buffer, ulong bytes) {
  const ulong blocks = bytes / UNWRITTEN_BLOCK;
  {
    GRID_LOOP(i, blocks) {
      uchar never_written[UNWRITTEN_BLOCK];
      ((global unwritten_block *)buffer)[i] = *(private unwritten_block *)never_written;
    }
  }
  {
    global unwritten_byte *tail = (global unwritten_byte *)(buffer + blocks * UNWRITTEN_BLOCK);
    GRID_LOOP(j, bytes - blocks * UNWRITTEN_BLOCK) {
      uchar never_written[1];
      tail[j] = *(private unwritten_byte *)never_written;
    }
  }
}
