/* MLSBA_VERBOSE, read the same way by every layer that prints on stderr
 * (the factorizations' lines, the MPI layer's multiplier and steps). */
#ifndef MLSBA_CORE_VERBOSE_H
#define MLSBA_CORE_VERBOSE_H

#include <stdlib.h>
#include <string.h>

/* 0 where MLSBA_VERBOSE is unset, empty or "0"; 2 for "2" (every step's
 * phases, where a layer has them); else 1. */
static inline int mlsba__verbose(void) {
  const char *v = getenv("MLSBA_VERBOSE");
  if (!v || !*v || strcmp(v, "0") == 0)
    return 0;
  return strcmp(v, "2") == 0 ? 2 : 1;
}

#endif
