/* Platform files of many simulated devices, for the parser's scaling test
 * and benchmark. */
#ifndef MLSBA_TESTS_BIG_PLATFORM_H
#define MLSBA_TESTS_BIG_PLATFORM_H

#include <stddef.h>

/* JSON text of n sim devices "d0".."d(n-1)" (n even) in groups of two,
 * each contending with its partner, so that every name is looked up twice.
 * malloc'd (the caller frees); NULL when out of memory. */
char *big_platform_json(size_t n);

#endif
