/* Brute-force optima that the partitioners are checked against. They use
 * only the public model API and share no code with the partitioners. */
#ifndef MLSBA_TESTS_ORACLE_H
#define MLSBA_TESTS_ORACLE_H

#include <stdint.h>

#include "mlsba.h"

/* Predicted time of device i for an integer load (public API). */
double oracle_time(const mlsba_model_t *m, int64_t load);

/* Minimal makespan over all integer loads summing to n within max_loads,
 * by enumerating every distribution. For small p and n only. Returns
 * INFINITY when no distribution fits. */
double oracle_exhaustive(const mlsba_model_t *const *models, int p, int64_t n);

/* The same optimum for large n, exact for models whose t(x) is
 * non-decreasing: the smallest double T for which the devices can hold n
 * units finishing by T, found by bisection over the bit patterns of
 * doubles, with each device's count found by integer bisection on t. */
double oracle_search(const mlsba_model_t *const *models, int p, int64_t n);

/* Minimal makespan when loads are multiples of b except one device that
 * also takes the edge n mod b; exhaustive. */
double oracle_exhaustive_blocks(const mlsba_model_t *const *models, int p,
                                int64_t n, int64_t b);

#endif
