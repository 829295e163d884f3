/* What every 2-D block-cyclic layout promises, checked through its
 * queries alone (tests/test_layout*.c). */
#ifndef MLSBA_TESTS_LAYOUT_CHECK_H
#define MLSBA_TESTS_LAYOUT_CHECK_H

#include <stddef.h>

#include "mlsba.h"
#include "partition/layout.h"
#include "support/random_models.h"

/* Every block owned once; the owner's lists and the O(1) queries agree;
 * local <-> global both ways; local sizes in elements; the node blocks
 * add up, whole and lower triangle. Fails the running Check test. */
void check_layout_ownership(const mlsba__layout_t *layout);

/* q random node models of the papers' shape over a matrix of W blocks
 * (x_max three even shares, so the shares vary with the size). */
void draw_layout_models(rng_t *g, size_t q, double W, mlsba_model_t **m);
void free_layout_models(mlsba_model_t **m, size_t q);

#endif
