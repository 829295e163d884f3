/* The cache of the kernels' choice: one text file per host
 * (docs/cpu-kernels.md shows it line by line), read strictly, so that a
 * file of another version, another machine or a bad hand never decides
 * what runs. */
#ifndef MLSBA_DEVICES_CPU_CPU_KERNEL_CACHE_H
#define MLSBA_DEVICES_CPU_CPU_KERNEL_CACHE_H

#include <stddef.h>

#include "cpu_kernels.h"

/* The version the first line names; a file of another version (the
 * one-shape format 1, the format 2 without how the choice was timed, the
 * format 3 whose rounds let a class decided early stop running, so that
 * the classes still timed ran back to back and the choice leaned against
 * what a round of every class measures, the format 4 whose classes could
 * stop after an odd count of rounds, most of them in one order, and lean
 * the way that order does, the format 5 whose product class was timed
 * on 768 x 256 x 768, in the caches, where BLIS's zen3 won choices and
 * then ran a 4096 product's blocks 5-10% behind OpenBLAS, the format 6,
 * which a process where OpenBLAS did not load wrote as the machine's
 * choice) is timed again and replaced. */
#define MLSBA__CPU_CACHE_VERSION 7

/* The cache file, DIR/HOST/cpu-kernels, made room for (the folders it
 * may make); 0 when there is none: MLSBA_CACHE_DIR=none, no home, or a
 * path too long for the system (then *refused says why: a path is never
 * cut short). */
int mlsba__cpu_cache_path(char *buf, size_t size, const char **refused);

/* The choice a file's text holds for `key`, into *out (how it was timed
 * too); 0, or -1 when the text is not exactly a cache of this version for
 * this key, names a kernel set unknown or not runnable here (runnable(id)
 * says), carries a speed that is not a positive finite number below 10^6
 * GFLOPS, or a measured line out of its ranges. Pure. */
int mlsba__cpu_cache_parse(const char *text, const char *key,
                           int (*runnable)(int id), mlsba__cpu_picks_t *out);

/* The text of a cache for key and picks, into buf; its length, or -1
 * when it does not fit. Pure. */
int mlsba__cpu_cache_format(const char *key, const mlsba__cpu_picks_t *picks,
                            char *buf, size_t size);

/* The file read (a regular file of at most 4 KiB) and parsed; 0 or -1. */
int mlsba__cpu_cache_read(const char *path, const char *key,
                          int (*runnable)(int id), mlsba__cpu_picks_t *out);

/* Written atomically; a cache, so a failure is ignored. */
void mlsba__cpu_cache_write(const char *path, const char *key,
                            const mlsba__cpu_picks_t *picks);

#endif
