/* Simulated nodes whose speed depends on the area they run, of the
 * shapes INPA's tests and bench-inpa-clusters draw. */
#ifndef MLSBA_TESTS_NODE_SHAPES_H
#define MLSBA_TESTS_NODE_SHAPES_H

/* A node's speed in blocks per second as a function of the area a (in
 * blocks) it runs:
 *   CONSTANT  s = peak;
 *   RISING    s = peak a / (a + half): small problems underuse the node;
 *   CLIFF     s = peak up to knee blocks, then falls linearly to peak / 4
 *             at (1 + span) knee and stays there (an accelerator whose
 *             memory runs out, as the seed's GPUs without an out-of-core
 *             code);
 *   CACHE     s = peak (1 + e^{-a / half}) / 2: faster while it fits in
 *             cache. */
typedef enum { CONSTANT, RISING, CLIFF, CACHE } shape_t;

typedef struct {
  shape_t shape;
  double peak, half, knee, span;
} node_t;

/* Blocks per second for an area of a blocks. */
double node_speed(const node_t *n, double a);

#endif
