#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "output.h"

extern char **environ;

void gnuplot_string(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\'')
      fputs("''", f);
    else
      fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
  }
  fputc('\'', f);
}

/* A file of the pictures' folder being written: its text gathered in
 * memory, then written whole at fclose() through the tools' writer (a
 * symbolic link, a device or a FIFO there kept as it is, a directory
 * refused), which says what went wrong. */
typedef struct {
  const char *prog;
  char *path, *text;
  size_t len, cap;
} pending_t;

static ssize_t pending_write(void *cookie, const char *buf, size_t size) {
  pending_t *p = cookie;
  if (p->len + size > p->cap) {
    size_t cap = p->cap ? p->cap : 4096;
    while (cap < p->len + size)
      cap *= 2;
    char *more = realloc(p->text, cap);
    if (more == NULL)
      return -1;
    p->text = more;
    p->cap = cap;
  }
  memcpy(p->text + p->len, buf, size);
  p->len += size;
  return (ssize_t)size;
}

static int pending_close(void *cookie) {
  pending_t *p = cookie;
  int status =
      output_write(p->prog, NULL, p->path, p->text ? p->text : "", p->len);
  free(p->path);
  free(p->text);
  free(p);
  return status ? -1 : 0;
}

FILE *gnuplot_open_in(const char *prog, const char *dir, const char *name) {
  pending_t *p = calloc(1, sizeof *p);
  size_t n = strlen(dir) + strlen(name) + 2;
  char *path = p ? malloc(n) : NULL;
  FILE *f = NULL;
  if (path) {
    snprintf(path, n, "%s/%s", dir, name);
    *p = (pending_t){.prog = prog, .path = path};
    cookie_io_functions_t io = {.write = pending_write, .close = pending_close};
    f = fopencookie(p, "w", io);
  }
  if (f == NULL) {
    fprintf(stderr, "%s: --plot: out of memory\n", prog);
    free(path);
    free(p);
  }
  return f;
}

static int spawn_in(const char *dir, const char *script, pid_t *pid) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, script);
  posix_spawn_file_actions_t fa;
  int err = posix_spawn_file_actions_init(&fa);
  if (err)
    return err;
  err = posix_spawn_file_actions_addopen(&fa, 0, path, O_RDONLY, 0);
  if (!err)
    err = posix_spawn_file_actions_addchdir_np(&fa, dir);
  if (!err)
    err = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (!err)
    /* O_NONBLOCK: a FIFO of that name without a reader fails the start
     * rather than hanging it. */
    err = posix_spawn_file_actions_addopen(
        &fa, 2, "gnuplot.log",
        O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY, 0666);
  char arg0[] = "gnuplot";
  char *argv[] = {arg0, NULL};
  if (!err)
    err = posix_spawnp(pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return err;
}

int gnuplot_run(const char *prog, const char *dir, const char *script) {
  pid_t pid;
  int err = spawn_in(dir, script, &pid);
  if (err) {
    fprintf(stderr, "%s: cannot start gnuplot: %s%s\n", prog, strerror(err),
            err == ENOENT ? " (Debian: gnuplot-nox)" : "");
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "%s: waiting for gnuplot: %s\n", prog, strerror(errno));
      return -1;
    }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s: gnuplot failed (see %s/gnuplot.log)\n", prog, dir);
    return -1;
  }
  return 0;
}
