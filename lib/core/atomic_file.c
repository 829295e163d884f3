/* Atomic replacement of a file: write a temporary file beside it, sync it,
 * rename it over the target (rename is atomic within a file system). */
#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

/* Whether name is a temporary file of this writer: NAME.tmp.PID.N (or
 * NAME.tmp.PID, as earlier versions wrote), with its pid. Every file the
 * library saves ends in an extension, so no saved file ends this way. */
static int temp_name(const char *n, long *pid) {
  const char *t = NULL;
  for (const char *s = strstr(n, ".tmp."); s; s = strstr(s + 1, ".tmp."))
    t = s;
  if (t == NULL || t == n)
    return 0;
  char *end;
  *pid = strtol(t + 5, &end, 10);
  if (end == t + 5)
    return 0;
  if (*end == '.' && end[1] >= '0' && end[1] <= '9')
    strtoul(end + 1, &end, 10);
  return *end == '\0' && *pid > 0;
}

/* Removes what killed writers left in dir: temporary files whose process
 * is gone and that nobody touched for a minute (the age guards a writer
 * on another machine sharing the folder, whose pid means nothing here).
 * Best effort: a failure changes nothing. */
static void remove_stale_temps(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    const char *n = e->d_name;
    long pid;
    if (!temp_name(n, &pid) || pid == (long)getpid() ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && time(NULL) - st.st_mtime > 60)
      unlinkat(dirfd(d), n, 0);
  }
  if (d)
    closedir(d);
}

/* The folders this process has cleaned: each once, at its first save.
 * Scanning at every save made saving n models into a folder of n files
 * quadratic (4,000 devices: 4.3 s; 10^5: minutes); temporaries of writers
 * killed later are the next process's to clean. */
static pthread_mutex_t cleaned_lock = PTHREAD_MUTEX_INITIALIZER;
static char **cleaned;
static size_t ncleaned, cap_cleaned;

/* 1 when dir was not cleaned yet (and is now marked as cleaned). */
static int first_save_in(const char *dir) {
  int first = 1;
  pthread_mutex_lock(&cleaned_lock);
  for (size_t i = 0; i < ncleaned && first; i++)
    first = strcmp(cleaned[i], dir) != 0;
  if (first && ncleaned == cap_cleaned) {
    size_t cap = cap_cleaned ? 2 * cap_cleaned : 8;
    char **more = realloc(cleaned, cap * sizeof *more);
    if (more) {
      cleaned = more;
      cap_cleaned = cap;
    }
  }
  char *copy = first && ncleaned < cap_cleaned ? strdup(dir) : NULL;
  if (copy)
    cleaned[ncleaned++] = copy;
  pthread_mutex_unlock(&cleaned_lock);
  return first;
}

/* After a save of path: its folder cleaned, once per process. */
static void clean_folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t dlen = slash ? (size_t)(slash - path) : 0;
  char *dir = slash ? strndup(path, dlen ? dlen : 1) : strdup(".");
  if (dir && first_save_in(dir))
    remove_stale_temps(dir);
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
    clean_folder_of(path);
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
