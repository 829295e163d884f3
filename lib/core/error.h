/* Internal error helpers: set the thread's last-error message and return
 * the code, so a failing path reads `return mlsba__fail(MLSBA_EINVAL, ...)`. */
#ifndef MLSBA_CORE_ERROR_H
#define MLSBA_CORE_ERROR_H

#include "mlsba.h"

#if defined(__GNUC__) || defined(__clang__)
#define MLSBA__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MLSBA__PRINTF(f, a)
#endif

/* Record "<message>" as the calling thread's last error and return err. */
int mlsba__fail(int err, const char *fmt, ...) MLSBA__PRINTF(2, 3);

#endif
