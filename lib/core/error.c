/* The error table of mlsba.h turned into names and descriptions, and the
 * thread-local last-error message. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

/* Thread-local so that concurrent callers never read each other's message
 * and no lock is needed on the failure path. */
static _Thread_local char last_error[512];

const char *mlsba_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#define MLSBA_STRERROR_CASE_(name, value, text)                                \
  case MLSBA_##name:                                                           \
    return text;
    MLSBA_ERRNO_MAP(MLSBA_STRERROR_CASE_)
#undef MLSBA_STRERROR_CASE_
  default:
    return "unknown error";
  }
}

const char *mlsba_err_name(int err) {
  switch (err) {
  case 0:
    return "MLSBA_OK";
#define MLSBA_ERR_NAME_CASE_(name, value, text)                                \
  case MLSBA_##name:                                                           \
    return "MLSBA_" #name;
    MLSBA_ERRNO_MAP(MLSBA_ERR_NAME_CASE_)
#undef MLSBA_ERR_NAME_CASE_
  default:
    return "MLSBA_EUNKNOWN";
  }
}

const char *mlsba_last_error(void) { return last_error; }

int mlsba__fail(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return err;
}
