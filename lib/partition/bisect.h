/* The geometric bisection engine shared by SLBA and MLSBA.
 *
 * Both algorithms search for the line through the origin that crosses the
 * speed functions of p elements (devices for SLBA, processing groups for
 * MLSBA) at loads summing to W, then round down and refine to integers.
 * They differ only in how a crossing and an integer time are obtained:
 * SLBA reads its device models; MLSBA reads partial group models and builds
 * the points it needs while reading (Procedures 1 and 2). The engine calls
 * back for exactly those two things. */
#ifndef MLSBA_PARTITION_BISECT_H
#define MLSBA_PARTITION_BISECT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mlsba__bisect_ops {
  /* Crossings of the line of slope 1/T with every element, each limited to
   * the element's capacity, into x[0..p-1]; their sum into *sum. */
  int (*crossings)(void *ctx, double T, double *x, double *sum);
  /* Predicted time of element i for an integer load (load <= its cap). */
  int (*time_of)(void *ctx, size_t i, int64_t load, double *t);
} mlsba__bisect_ops_t;

typedef struct mlsba__bisect {
  size_t p;
  int bisect_angle; /* choose line B as the angle bisector (the papers'),
                       else by Illinois regula falsi on the crossing sum */
  int64_t *cap;     /* capacity of each element, set by the caller */
  double *scratch;  /* crossings of U, L, B and refinement keys: 4 p */
  size_t *heap;
  /* Optional times of lines known to bracket the next solution (0: none),
   * e.g. from neighbouring group points; used once, then cleared. */
  double hint_tu, hint_tl;
  unsigned steps;  /* out: bisection steps, summed over runs */
  int64_t refined; /* out: units handed out by the refinement, summed */
} mlsba__bisect_t;

/* Compensated (Neumaier) sum of the crossings: a plain sum of 10^6
 * crossings near 2^53 can be off by many units, and each unit the sum
 * misses costs the rounding a pass over the elements. */
typedef struct {
  double sum, c;
} mlsba__ksum_t;

static inline void mlsba__ksum_add(mlsba__ksum_t *k, double v) {
  double t = k->sum + v;
  if (fabs(k->sum) >= fabs(v))
    k->c += (k->sum - t) + v;
  else
    k->c += (v - t) + k->sum;
  k->sum = t;
}

static inline double mlsba__ksum(const mlsba__ksum_t *k) {
  return k->sum + k->c;
}

/* Allocate the capacity array and scratch for p elements; what names the
 * caller in the error message. */
int mlsba__bisect_init(mlsba__bisect_t *b, size_t p, const char *what);
void mlsba__bisect_free(mlsba__bisect_t *b);

/* Distribute W units: lines U (time tu) and L (time tl) bracket the
 * solution after widening, a line B between them replaces U or L until
 * every element's crossings differ by less than one unit, the U crossings are
 * rounded down, and the rest is handed out one unit at a time to the
 * element that finishes it earliest. x receives the p integer loads. */
int mlsba__bisect_run(mlsba__bisect_t *b, const mlsba__bisect_ops_t *ops,
                      void *ctx, int64_t W, double tu, double tl, int64_t *x);

/* The refinement alone: add r units to x one at a time, each to the
 * element that finishes it earliest (within b->cap). Optimal for
 * non-decreasing times when x itself is an optimal distribution of fewer
 * units, or lies below one of the target. */
int mlsba__bisect_refine(mlsba__bisect_t *b, const mlsba__bisect_ops_t *ops,
                         void *ctx, int64_t *x, int64_t r);

#endif
