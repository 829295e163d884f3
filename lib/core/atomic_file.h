/* The one writer of files: every file the library saves (models, platforms,
 * left-out decisions, the kernel cache) and every file a tool writes
 * (reports, plot scripts and data) goes through it. */
#ifndef MLSBA_CORE_ATOMIC_FILE_H
#define MLSBA_CORE_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes len bytes of text to path, keeping what path is:
 * - a regular file, or none yet: replaced whole through a temporary file
 *   of a name no other writer uses (process and call), synced and renamed
 *   over it; a reader sees the old file or the new, never a part, and the
 *   file keeps its permission bits (one the caller may not write is
 *   refused, as a shell's '>' refuses it);
 * - a symbolic link: followed; its target (where the chain ends, made if
 *   it does not exist) is the file replaced, and the link stays;
 * - a character device (/dev/null, /dev/full, a terminal) or a FIFO:
 *   written through, never replaced; a FIFO must have a reader within
 *   2 s (one that opens it just after is waited for, none at all is an
 *   error rather than a hang); a reader gone mid-write is an error, never
 *   a SIGPIPE to the host program;
 * - a directory, a block device or a socket: refused, MLSBA_EIO.
 * Every message reads "PATH: cannot write: why" ("cannot write: why" for
 * an empty or NULL path). */
int mlsba__write_atomic(const char *path, const char *text, size_t len);

/* As mlsba__write_atomic, for a file that is a cache the library checks
 * as it reads it (a saved model's checksum): the temporary file is not
 * synced before the rename. Readers still see the old file or the new;
 * after a crash the file may be empty or torn, which its reader refuses
 * and learns again. A factorization saves its devices' models on every
 * call: the sync took 0.5-6 ms a file on the project's VM (3.4 ms median
 * while the disk was busy, 0.3 ms without it), as much as 20% of an
 * n = 2048 single-precision LU. */
int mlsba__write_cache(const char *path, const char *text, size_t len);

/* Whether mlsba__write_atomic(path) could write, checked before anything
 * runs (the tools check their destinations up front): 0, or MLSBA_EIO
 * with the same message it would give (a directory, a block device, a
 * folder that does not exist or takes no files, a file or device that
 * cannot be written). A full disk shows only when written. */
int mlsba__write_check(const char *path);

/* A name (a device's, as its platform file spells it) as one file-name
 * component: letters, digits, '-' and '_' kept, '.' kept except first,
 * every other byte as %XX. Injective, so two devices never share a file;
 * never '/', never a leading '.', so the file stays in its folder and in
 * sight. -1 when out (size bytes) cannot hold it: never cut short. */
int mlsba__file_name_part(const char *name, char *out, size_t size);

/* Opens path for reading only if it is a regular file, without blocking
 * on a FIFO; otherwise MLSBA_EIO naming what it is (a directory, a FIFO, a
 * character device such as /dev/zero). Every file the library reads goes
 * through it. */
int mlsba__open_regular(const char *path, FILE **file);

#endif
