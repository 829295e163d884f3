/* Models on disk with what the balancing routine knows of each point: the
 * runs behind it and the spread of their speeds. The points are stored
 * sorted by load, and the arrays follow that order. */
#ifndef MLSBA_RUNTIME_STORE_H
#define MLSBA_RUNTIME_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* runs and sd: NULL, or one entry per point of m. */
int mlsba__model_save_stats(const mlsba_model_t *m, const char *path,
                            const char *key, const unsigned *runs,
                            const double *sd);
/* runs and sd: NULL, or room entries, filled for the points in the file
 * that carry them (1 and 0 for those that do not). */
int mlsba__model_load_stats(const char *path, const char *key,
                            mlsba_model_t **model, unsigned *runs, double *sd,
                            size_t room);

/* The same from text in memory (writable, NUL-terminated, len bytes):
 * what the file reader and the fuzzer share. */
int mlsba__model_parse_text(const char *path, const char *key, char *text,
                            size_t len, mlsba_model_t **model, unsigned *runs,
                            double *sd, size_t room);

/* The checksum of a model file's body (FNV-1a, 64 bits). */
uint64_t mlsba__model_checksum(const char *text, size_t len);

#endif
