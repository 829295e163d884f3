/* The one writer of files, and the one check of a file to read. A regular
 * file is replaced atomically: a temporary file beside it, synced, renamed
 * over it (rename is atomic within a file system). A device or a FIFO is
 * written through, a symbolic link followed: what a path names stays
 * what it is. */
#define _XOPEN_SOURCE 700 /* realpath */
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

/* ---- what a destination is, and how it is written ---------------------- */

/* A FIFO is written only to a process that reads it: one that opens it
 * for reading within this long after the writer is ready (a shell's
 * "reader &" started just before or after the tool), else the write
 * fails rather than waiting for ever on a file left in a folder. */
enum { FIFO_WAIT_MS = 2000, FIFO_POLL_MS = 10 };

typedef struct {
  int through;  /* a character device or a FIFO: opened and written as is */
  int fifo;     /* ... a FIFO */
  int exists;   /* a regular file is there: its replacement keeps its mode */
  mode_t mode;  /* ... its permission bits */
  char *target; /* the file replaced: path, or where its symbolic links end */
} dest_t;

static int refuse(const char *path, const char *why) {
  return mlsba__fail(MLSBA_EIO, "%s: cannot write: %s", path, why);
}

/* Where a chain of symbolic links ends when that file does not exist yet
 * (a link to a file still to be made): each link's target, a relative
 * one read from the link's folder. NULL with errno set on a loop. */
static char *dangling_target(const char *path) {
  char *cur = strdup(path);
  for (int hops = 0; cur != NULL && hops < 40; hops++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
      return cur;
    char link[4096];
    ssize_t n = readlink(cur, link, sizeof link - 1);
    if (n < 0)
      break;
    link[n] = '\0';
    const char *slash = strrchr(cur, '/');
    size_t keep =
        link[0] == '/' || slash == NULL ? 0 : (size_t)(slash - cur) + 1;
    char *next = malloc(keep + (size_t)n + 1);
    if (next != NULL) {
      memcpy(next, cur, keep);
      memcpy(next + keep, link, (size_t)n + 1);
    }
    free(cur);
    cur = next;
  }
  if (cur != NULL)
    errno = ELOOP;
  free(cur);
  return NULL;
}

static const char *kind_of(mode_t mode) {
  return S_ISDIR(mode)    ? "it is a directory"
         : S_ISBLK(mode)  ? "it is a block device"
         : S_ISSOCK(mode) ? "it is a socket"
                          : "it is not a regular file";
}

/* What path names: a regular file (or none yet), replaced whole; a
 * character device or a FIFO, written through; anything else refused.
 * A symbolic link is followed: its target is what is written. */
static int dest_of(const char *path, dest_t *d) {
  memset(d, 0, sizeof *d);
  if (path[0] == '\0')
    return mlsba__fail(MLSBA_EIO, "cannot write: the path is empty");
  struct stat st, lst;
  if (stat(path, &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      d->through = 1;
      d->fifo = S_ISFIFO(st.st_mode);
      return 0;
    }
    if (!S_ISREG(st.st_mode))
      return refuse(path, kind_of(st.st_mode));
    if (access(path, W_OK) != 0)
      return refuse(path, strerror(errno));
    d->exists = 1;
    d->mode = st.st_mode & 07777;
    int link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    d->target = link ? realpath(path, NULL) : strdup(path);
  } else if (errno == ENOENT) {
    d->target = dangling_target(path);
  } else {
    return refuse(path, strerror(errno));
  }
  return d->target ? 0 : refuse(path, strerror(errno));
}

/* The folder of a file to replace or create must exist and take files:
 * the temporary file is made there. */
static int check_folder(const char *path, const char *target) {
  const char *slash = strrchr(target, '/');
  char *dir =
      slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target))
            : strdup(".");
  struct stat st;
  int err = 0;
  if (dir == NULL) {
    err = mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  } else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    err = refuse(path, "its folder does not exist");
  } else if (access(dir, W_OK | X_OK) != 0) {
    char why[160];
    snprintf(why, sizeof why, "its folder takes no new file: %s",
             strerror(errno));
    err = refuse(path, why);
  }
  free(dir);
  return err;
}

/* All of text to fd, a partial write continued. With SIGPIPE held back:
 * a FIFO whose reader left must give EPIPE, not end the host program. */
static int write_all(int fd, const char *text, size_t len) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE);
  int err = 0;
  while (len > 0 && !err) {
    ssize_t n = write(fd, text, len);
    if (n > 0) {
      text += n;
      len -= (size_t)n;
    } else if (n < 0 && errno != EINTR) {
      err = errno;
    }
  }
  if (err == EPIPE && !was_pending) {
    /* The signal this write raised, taken back before it is let through. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = err;
  return err ? -1 : 0;
}

/* Opens a character device or a FIFO for writing without blocking; a
 * FIFO without a reader is waited for, FIFO_WAIT_MS at most. */
static int open_through(const char *path, int fifo) {
  int waited = 0;
  for (;;) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0 || !fifo || errno != ENXIO || waited >= FIFO_WAIT_MS)
      return fd;
    struct timespec pause = {0, FIFO_POLL_MS * 1000000L};
    nanosleep(&pause, NULL);
    waited += FIFO_POLL_MS;
  }
}

/* A device or a FIFO keeps what it is: written through, never replaced
 * (a rename over /dev/null would break it for the whole machine). */
static int write_through(const char *path, int fifo, const char *text,
                         size_t len) {
  int fd = open_through(path, fifo);
  if (fd < 0)
    return fifo && errno == ENXIO
               ? mlsba__fail(MLSBA_EIO,
                             "%s: cannot write: a FIFO that no process "
                             "opened for reading within %d s",
                             path, FIFO_WAIT_MS / 1000)
               : refuse(path, strerror(errno));
  struct stat st;
  int flags = fcntl(fd, F_GETFL);
  int err = 0;
  if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
    err = refuse(path, "it changed while it was opened");
  else if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
           write_all(fd, text, len) != 0)
    err = refuse(path, strerror(errno));
  if (close(fd) != 0 && !err && errno != EINTR)
    err = refuse(path, strerror(errno));
  return err;
}

/* A regular file (or a new one) replaced whole: a temporary file beside
 * it of a name no other writer uses (process and call), synced, then
 * renamed over it. A reader sees the old file or the new, never a part,
 * and two writers at once never write into the same temporary file. */
static int replace(const char *path, const dest_t *d, const char *text,
                   size_t len, int sync) {
  size_t tlen = strlen(d->target) + 64;
  char *tmp = malloc(tlen);
  if (tmp == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  snprintf(tmp, tlen, "%s.tmp.%ld.%lu", d->target, (long)getpid(),
           atomic_fetch_add(&serial, 1));
  /* O_EXCL | O_NOFOLLOW: never through something already of that name. */
  int fd =
      open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    int e = errno;
    int err = e == ENOENT || e == EACCES ? check_folder(path, d->target) : 0;
    free(tmp);
    return err ? err : refuse(path, strerror(e));
  }
  int e = 0;
  if ((d->exists && fchmod(fd, d->mode) != 0) ||
      write_all(fd, text, len) != 0 || (sync && fsync(fd) != 0))
    e = errno;
  if (close(fd) != 0 && e == 0)
    e = errno;
  if (e == 0 && rename(tmp, d->target) != 0)
    e = errno;
  if (e != 0)
    unlink(tmp);
  free(tmp);
  return e ? refuse(path, strerror(e)) : 0;
}

static int write_file(const char *path, const char *text, size_t len,
                      int sync) {
  if (path == NULL)
    return mlsba__fail(MLSBA_EINVAL, "cannot write: the path is NULL");
  dest_t d;
  int err = dest_of(path, &d);
  if (!err && d.through)
    err = write_through(path, d.fifo, text, len);
  else if (!err)
    err = replace(path, &d, text, len, sync);
  if (!err && !d.through)
    clean_folder_of(d.target);
  free(d.target);
  return err;
}

int mlsba__write_atomic(const char *path, const char *text, size_t len) {
  return write_file(path, text, len, 1);
}

int mlsba__write_cache(const char *path, const char *text, size_t len) {
  return write_file(path, text, len, 0);
}

int mlsba__write_check(const char *path) {
  if (path == NULL)
    return mlsba__fail(MLSBA_EINVAL, "cannot write: the path is NULL");
  dest_t d;
  int err = dest_of(path, &d);
  if (!err && d.through && access(path, W_OK) != 0)
    err = refuse(path, strerror(errno));
  else if (!err && !d.through)
    err = check_folder(path, d.target);
  free(d.target);
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
