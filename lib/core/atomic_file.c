/* Atomic replacement of a file: write a temporary file beside it, sync it,
 * rename it over the target (rename is atomic within a file system). */
#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

static atomic_ulong serial;

/* Removes what killed writers of path left: PATH.tmp.PID.N files whose
 * process is gone and that nobody touched for a minute (the age guards a
 * writer on another machine sharing the folder, whose pid means nothing
 * here). Best effort: a failure changes nothing. */
static void remove_stale_temps(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t dlen = slash ? (size_t)(slash - path) : 0;
  const char *base = slash ? slash + 1 : path;
  char *dir = slash ? strndup(path, dlen ? dlen : 1) : strdup(".");
  DIR *d = dir ? opendir(dir) : NULL;
  size_t blen = strlen(base);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    const char *n = e->d_name;
    if (strncmp(n, base, blen) != 0 || strncmp(n + blen, ".tmp.", 5) != 0)
      continue;
    char *end;
    long pid = strtol(n + blen + 5, &end, 10);
    if (*end == '.')
      strtoul(end + 1, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == (long)getpid() ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && time(NULL) - st.st_mtime > 60)
      unlinkat(dirfd(d), n, 0);
  }
  if (d)
    closedir(d);
  free(dir);
}

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
    err = mlsba__fail(MLSBA_EIO, "%s: cannot write: %s", path, strerror(errno));
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
  if (!err)
    remove_stale_temps(path);
  return err;
}

int mlsba__file_name_part(const char *name, char *out, size_t size) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = 0;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    int keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
               (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ||
               (*c == '.' && c != (const unsigned char *)name);
    if (n + (keep ? 1 : 3) >= size)
      return -1;
    if (keep) {
      out[n++] = (char)*c;
    } else {
      out[n++] = '%';
      out[n++] = hex[*c >> 4];
      out[n++] = hex[*c & 15];
    }
  }
  if (n >= size)
    return -1;
  out[n] = '\0';
  return 0;
}

int mlsba__open_regular(const char *path, FILE **file) {
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
   * writer, forever, before fstat could tell what it is. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return mlsba__fail(MLSBA_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const char *what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    close(fd);
    return mlsba__fail(MLSBA_EIO, "%s: is %s, not a regular file", path, what);
  }
  int flags = fcntl(fd, F_GETFL);
  FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0
                ? NULL
                : fdopen(fd, "rb");
  if (f == NULL) {
    int e = errno;
    close(fd);
    return mlsba__fail(MLSBA_EIO, "%s: cannot open: %s", path, strerror(e));
  }
  *file = f;
  return 0;
}
