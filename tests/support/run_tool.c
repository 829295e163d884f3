#include "run_tool.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  char *buf;
  size_t len, cap;
} sink_t;

static void sink_add(sink_t *s, const char *data, size_t n) {
  if (s->len + n + 1 > s->cap) {
    s->cap = (s->len + n + 1) * 2;
    s->buf = realloc(s->buf, s->cap);
    if (s->buf == NULL)
      abort();
  }
  memcpy(s->buf + s->len, data, n);
  s->len += n;
  s->buf[s->len] = '\0';
}

void run_tool(char *const argv[], tool_run_t *r) {
  int out[2], err[2];
  memset(r, 0, sizeof *r);
  if (pipe(out) || pipe(err))
    abort();
  pid_t pid = fork();
  if (pid < 0)
    abort();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  sink_t so = {0}, se = {0};
  sink_add(&so, "", 0);
  sink_add(&se, "", 0);
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0)
      abort();
    for (int k = 0; k < 2; k++) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP)))
        continue;
      char chunk[4096];
      ssize_t n = read(fds[k].fd, chunk, sizeof chunk);
      if (n <= 0) {
        close(fds[k].fd);
        fds[k].fd = -1;
        open_fds--;
      } else {
        sink_add(k ? &se : &so, chunk, (size_t)n);
      }
    }
  }
  int wstatus;
  waitpid(pid, &wstatus, 0);
  r->exited = WIFEXITED(wstatus);
  r->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  r->out = so.buf;
  r->err = se.buf;
}

void tool_run_free(tool_run_t *r) {
  free(r->out);
  free(r->err);
}

size_t count_lines(const char *s) {
  size_t n = 0;
  for (const char *p = s; *p; p++)
    n += *p == '\n';
  if (*s && s[strlen(s) - 1] != '\n')
    n++;
  return n;
}

char *unwrap_lines(char *s) {
  char *out = s;
  for (const char *in = s; *in;) {
    if (in[0] == '\n' && strncmp(in + 1, "    ", 4) == 0) {
      *out++ = ' ';
      in += 5;
    } else {
      *out++ = *in++;
    }
  }
  *out = '\0';
  return s;
}
