/** @file
 * clmg output files: a file is written under a temporary name beside its
 * target and renamed over the target only once it is complete, so a failed
 * write (a full disk, a file size limit, a crash) never leaves a truncated
 * file and never destroys the file that was there before. Every file the
 * library and the clmg command write goes through this (Matrix Market, VTU,
 * VTK, PNG, the program-binary cache, benchmark JSON).
 *
 *   clmg_output_file *file;
 *   FILE *out;
 *   if (clmg_output_file_open(path, "w", &file, &out, &error) != CLMG_SUCCESS)
 *     return ...;                          // error names path and the reason
 *   fprintf(out, ...);                     // write with any stdio call
 *   return clmg_output_file_commit(file, &error);  // or _discard(file)
 *
 * The temporary is PATH.PID.XXXXXX.tmp (or DIR/.clmg.PID.XXXXXX.tmp when
 * that name is too long), created exclusively so that two writers never
 * share one, with the mode fopen would give: the old file's permissions when
 * it is replaced, else 0666 less the umask. The target is replaced by a new
 * file: hard links to the old one keep the old contents; a symbolic link to a
 * regular file is followed and its target replaced. Paths that are not
 * regular files (/dev/stdout, a FIFO, /dev/null, a dangling symbolic link)
 * cannot be replaced and are written directly, as fopen would. Replacing a
 * file needs permission to create one in its directory. No fsync:
 * this guards against failed writes, not against a power cut.
 *
 * clmg_output_xml_text is the one XML escaping of the library and the clmg
 * command (VTU and PVD attributes, the HTML page of clmg bench). */
#ifndef CLMG_OUTPUT_FILE_H
#define CLMG_OUTPUT_FILE_H

#include <stdio.h>

#include "clmg/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A file being written under a temporary name beside its target (opaque). */
typedef struct clmg_output_file clmg_output_file;

/** Starts writing path; mode is "w" or "wb" (the same on POSIX). On success
 * *stream is the stream to write to (until commit or discard, which close
 * it) and *file the handle to finish with. On failure both are NULL, nothing
 * was created, and error (may be NULL) reads "cannot open PATH for writing:
 * REASON": CLMG_ERROR_IO, or CLMG_ERROR_INVALID_ARGUMENT for a NULL argument
 * or another mode. An existing regular file that may not be written (its
 * permissions) is refused here, as fopen would. */
CLMG_API clmg_status clmg_output_file_open(const char *path, const char *mode,
                                           clmg_output_file **file, FILE **stream,
                                           clmg_error *error);

/** Finishes the file: flushes and closes the stream and renames the
 * temporary over the target. Fails with CLMG_ERROR_IO and "cannot write
 * PATH: REASON" when any write failed (the stream's error flag), or the
 * flush, close or rename did; then the temporary is removed and the target
 * is as it was before open. The reason of a write that failed before commit
 * is errno as the write left it: call commit straight after the writes.
 * Always releases file (NULL: CLMG_ERROR_INVALID_ARGUMENT). */
CLMG_API clmg_status clmg_output_file_commit(clmg_output_file *file, clmg_error *error);

/** Abandons the file (the writer failed on its own account): closes the
 * stream, removes the temporary and releases file; the target is untouched
 * (a directly written path keeps what was written). NULL does nothing;
 * errno is preserved, so the caller may still report it. */
CLMG_API void clmg_output_file_discard(clmg_output_file *file);

/** Removes the temporaries of every output file not yet committed or
 * discarded; their targets stay as they were. Async-signal-safe (unlink
 * only): for a program's SIGINT / SIGTERM handler, which then ends the
 * program, so that an interrupted write leaves no PATH.PID.XXXXXX.tmp
 * behind (the clmg command does this). */
CLMG_API void clmg_output_file_remove_temporaries(void);

/** Writes text to out as XML (or HTML) character data that is also safe in a
 * quoted attribute, whatever the bytes: & < > " ' as entity references,
 * control characters (C0, DEL, C1; XML 1.0 allows none but tab and newline,
 * which an attribute reads as spaces anyway) as spaces, and bytes that are
 * not UTF-8 as U+FFFD. A NULL out or text writes nothing. */
CLMG_API void clmg_output_xml_text(FILE *out, const char *text);

#ifdef __cplusplus
}
#endif

#endif
