/* The one writer of files: every file the library saves (models, platforms,
 * decisions) goes through it. */
#ifndef MLSBA_CORE_ATOMIC_FILE_H
#define MLSBA_CORE_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes len bytes of text to path through a temporary file of a name no
 * other writer uses (process and call), synced and renamed over it: a
 * reader sees the old file or the new, never a part, and two writers at
 * once never write into the same temporary file. */
int mlsba__write_atomic(const char *path, const char *text, size_t len);

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
