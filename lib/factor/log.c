/* What a factorization tells: the report's warnings (problems that did
 * not stop it) and the lines of opts.log, or of stderr where
 * MLSBA_VERBOSE asks for them. Nothing is printed otherwise. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/verbose.h"
#include "driver.h"

/* MLSBA_VERBOSE's lines: to stderr, one at a time. */
static void to_stderr(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "mlsba: %s\n", line);
}

void mlsba__factor_log_open(mlsba__factor_cfg_t *c) {
  c->log = c->o.log;
  c->log_ctx = c->o.log_ctx;
  if (c->log == NULL && mlsba__verbose())
    c->log = to_stderr;
}

int mlsba__factor_logging(const mlsba__factor_ctx_t *C) {
  return C->cfg.log != NULL;
}

__attribute__((format(printf, 2, 0))) static void
vlog(const mlsba__factor_ctx_t *C, const char *fmt, va_list ap) {
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  C->cfg.log(C->cfg.log_ctx, line);
}

void mlsba__factor_log(const mlsba__factor_ctx_t *C, const char *fmt, ...) {
  if (C->cfg.log == NULL)
    return;
  va_list ap;
  va_start(ap, fmt);
  vlog(C, fmt, ap);
  va_end(ap);
}

void mlsba__factor_warn(const mlsba__factor_ctx_t *C, const char *fmt, ...) {
  mlsba_factor_report_t *R = C->R;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (R->warnings++ == 0) { /* cut to the report's room */
    size_t len = strnlen(msg, sizeof R->warning - 1);
    memcpy(R->warning, msg, len);
    R->warning[len] = '\0';
  }
  mlsba__factor_log(C, "warning: %s", msg);
}
