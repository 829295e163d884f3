/* Atomic replacement of a file: write a temporary file beside it, sync it,
 * rename it over the target (rename is atomic within a file system). */
#include "atomic_file.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

static atomic_ulong serial;

int mlsba__write_atomic(const char *path, const char *text, size_t len) {
  size_t tlen = strlen(path) + 64;
  char *tmp = malloc(tlen);
  int err = 0;
  if (tmp == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  /* The process and a count of calls: unique among the writers of this
   * process (threads) and of others. */
  snprintf(tmp, tlen, "%s.tmp.%ld.%lu", path, (long)getpid(),
           atomic_fetch_add(&serial, 1));
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) {
    err = mlsba__fail(MLSBA_EIO, "%s: cannot write: %s", tmp, strerror(errno));
  } else {
    int bad = fwrite(text, 1, len, f) != len;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
      err =
          mlsba__fail(MLSBA_EIO, "%s: cannot save: %s", path, strerror(errno));
      remove(tmp);
    }
  }
  free(tmp);
  return err;
}
