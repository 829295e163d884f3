#include "node_shapes.h"

#include <math.h>

double node_speed(const node_t *n, double a) {
  switch (n->shape) {
  case CONSTANT:
    return n->peak;
  case RISING:
    return n->peak * a / (a + n->half);
  case CLIFF: {
    double end = (1 + n->span) * n->knee, low = n->peak / 4;
    if (a <= n->knee)
      return n->peak;
    if (a >= end)
      return low;
    return n->peak + (low - n->peak) * (a - n->knee) / (end - n->knee);
  }
  case CACHE:
    return n->peak * (1 + exp(-a / n->half)) / 2;
  }
  return 1;
}
