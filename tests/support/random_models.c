#include "random_models.h"

#include <math.h>
#include <stdlib.h>

uint64_t rng_next(rng_t *r) {
  uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

double rng_uniform(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }

int64_t rng_range(rng_t *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* k distinct sorted loads in [1, x_max], half of them integers. */
static int random_loads(rng_t *r, int max_points, double x_max, double *x) {
  int k = (int)rng_range(r, 1, max_points);
  for (int j = 0; j < k; j++) {
    x[j] = 1 + rng_uniform(r) * (x_max - 1);
    if (rng_uniform(r) < 0.5)
      x[j] = floor(x[j]) > 0 ? floor(x[j]) : 1;
  }
  qsort(x, (size_t)k, sizeof *x, cmp_double);
  int n = 0;
  for (int j = 0; j < k; j++)
    if (n == 0 || x[j] > x[n - 1])
      x[n++] = x[j];
  return n;
}

mlsba_model_t *random_paper_model(rng_t *r, int max_points, double x_max) {
  double x[64];
  if (max_points > 64)
    max_points = 64;
  int k = random_loads(r, max_points, x_max, x);
  /* s(x) = S x / (x + h) exp(-x / d): s(x)/x = S exp(-x/d) / (x + h)
   * decreases strictly; it rises while x is small against d. */
  double S = pow(10, 4 * rng_uniform(r));
  double h = x_max * (0.001 + 0.3 * rng_uniform(r));
  double d = x_max * (0.2 + 5 * rng_uniform(r));
  mlsba_model_t *m = NULL;
  if (mlsba_model_create(&m))
    abort();
  double prev_ratio = INFINITY;
  for (int j = 0; j < k; j++) {
    double s = S * x[j] / (x[j] + h) * exp(-x[j] / d);
    s *= 1 + 0.1 * (rng_uniform(r) - 0.5); /* measurement-like jitter */
    /* Keep s/x strictly decreasing despite the jitter. */
    if (s / x[j] >= prev_ratio)
      s = prev_ratio * x[j] * (1 - 1e-6);
    prev_ratio = s / x[j];
    if (mlsba_model_set_point(m, x[j], s))
      abort();
  }
  return m;
}

mlsba_model_t *random_wild_model(rng_t *r, int max_points, double x_max) {
  double x[64];
  if (max_points > 64)
    max_points = 64;
  int k = random_loads(r, max_points, x_max, x);
  mlsba_model_t *m = NULL;
  if (mlsba_model_create(&m))
    abort();
  for (int j = 0; j < k; j++)
    if (mlsba_model_set_point(m, x[j], pow(10, 4 * rng_uniform(r))))
      abort();
  return m;
}

mlsba_model_t *constant_model(double speed) {
  mlsba_model_t *m = NULL;
  if (mlsba_model_create(&m) || mlsba_model_set_point(m, 1, speed))
    abort();
  return m;
}
