/* Every on-disk format of the balancer. Models on disk with what the
 * balancing routine knows of each point: the runs behind it and the spread
 * of their speeds (the points are stored sorted by load, and the arrays
 * follow that order); and the decision to leave a device out. */
#ifndef MLSBA_BALANCE_STORE_H
#define MLSBA_BALANCE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* runs and sd: NULL, or one entry per point of m. */
int mlsba__model_save_stats(const mlsba_model_t *m, const char *path,
                            const char *key, const unsigned *runs,
                            const double *sd);
/* As mlsba_model_save, through mlsba__write_cache (not synced): for the
 * models a call saves every time it runs, which a torn file (refused by
 * its checksum) only sends back to a cold start. */
int mlsba__model_save_cache(const mlsba_model_t *m, const char *path,
                            const char *key);
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

/* Where a device's model file lives: dir/<before><name><after>.model,
 * the device's name escaped as one file-name component
 * (mlsba__file_name_part), so that a name such as "x/../../o" or
 * "core/0" names a file inside dir. The balancer's models and the
 * factorizations' take their names here, and only here. 0, or
 * MLSBA_ERANGE with a message when path (size bytes) cannot hold it. */
int mlsba__model_file_path(char *path, size_t size, const char *dir,
                           const char *before, const char *name,
                           const char *after);

/* The checksum of a model file's body (FNV-1a, 64 bits). */
uint64_t mlsba__model_checksum(const char *text, size_t len);

/* A left-out decision beside a model (its file name ends in .left-out):
 * the device was left out because the others ran faster without it.
 * read: 1 when path holds a decision for key, with how many balancings
 * have taken it (*trusted; 0 in files written before the count was) and
 * whether the last found a kept device's model stale (*stale); 0 when
 * there is none or it is about another key. */
int mlsba__left_out_read(const char *path, const char *key, unsigned *trusted,
                         unsigned *stale);
int mlsba__left_out_write(const char *path, const char *key, unsigned trusted,
                          int stale);
/* Removes a decision; no error when there is none. */
int mlsba__left_out_remove(const char *path);

#endif
