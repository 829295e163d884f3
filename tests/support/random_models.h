/* Random functional performance models for property tests. */
#ifndef MLSBA_TESTS_RANDOM_MODELS_H
#define MLSBA_TESTS_RANDOM_MODELS_H

#include <stdint.h>

#include "mlsba.h"

/* splitmix64: small, seedable, the same sequence on every machine. */
typedef struct {
  uint64_t state;
} rng_t;

uint64_t rng_next(rng_t *r);
/* Uniform in [0, 1). */
double rng_uniform(rng_t *r);
/* Uniform integer in [lo, hi]. */
int64_t rng_range(rng_t *r, int64_t lo, int64_t hi);

/* A model of the shape the papers assume: speed rises then falls, and
 * speed / load strictly decreases, so every line through the origin crosses
 * it once (t(x) strictly increasing). 1 to max_points points spread over
 * [1, x_max], peak speeds spread over four orders of magnitude. */
mlsba_model_t *random_paper_model(rng_t *r, int max_points, double x_max);

/* A device with one constant speed (a single point at load 1). */
mlsba_model_t *constant_model(double speed);

/* A model with no shape guarantee: random speeds at random loads. */
mlsba_model_t *random_wild_model(rng_t *r, int max_points, double x_max);

#endif
