#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

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

FILE *gnuplot_open_in(const char *prog, const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL)
    fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
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
    err = posix_spawn_file_actions_addopen(&fa, 2, "gnuplot.log",
                                           O_WRONLY | O_CREAT | O_TRUNC, 0666);
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
    fprintf(stderr, "%s: cannot start gnuplot: %s (Debian: gnuplot-nox)\n",
            prog, strerror(err));
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
