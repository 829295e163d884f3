#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double oracle_time(const mlsba_model_t *m, int64_t load) {
  double t;
  if (mlsba_model_time(m, (double)load, &t))
    abort();
  return t;
}

static int64_t cap_of(const mlsba_model_t *m, int64_t n) {
  int64_t c = mlsba_model_max_load(m);
  return (c == MLSBA_NO_MAX_LOAD || c > n) ? n : c;
}

static void enumerate(const mlsba_model_t *const *models, int p, int i,
                      int64_t left, double worst, double *best) {
  if (worst >= *best)
    return;
  if (i == p - 1) {
    if (left <= cap_of(models[i], left)) {
      double t = oracle_time(models[i], left);
      t = t > worst ? t : worst;
      if (t < *best)
        *best = t;
    }
    return;
  }
  int64_t cap = cap_of(models[i], left);
  for (int64_t k = 0; k <= cap; k++) {
    double t = oracle_time(models[i], k);
    enumerate(models, p, i + 1, left - k, t > worst ? t : worst, best);
  }
}

double oracle_exhaustive(const mlsba_model_t *const *models, int p, int64_t n) {
  double best = INFINITY;
  enumerate(models, p, 0, n, 0, &best);
  return best;
}

/* Largest k in [0, cap] with t(k) <= T (t non-decreasing). */
static int64_t count_by_time(const mlsba_model_t *m, int64_t cap, double T) {
  int64_t lo = 0, hi = cap;
  while (lo < hi) {
    int64_t mid = hi - (hi - lo) / 2;
    if (oracle_time(m, mid) <= T)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

static int feasible(const mlsba_model_t *const *models, int p, int64_t n,
                    double T) {
  int64_t sum = 0;
  for (int i = 0; i < p && sum < n; i++)
    sum += count_by_time(models[i], cap_of(models[i], n), T);
  return sum >= n;
}

static uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static double double_of(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

double oracle_search(const mlsba_model_t *const *models, int p, int64_t n) {
  double hi_t = 0;
  for (int i = 0; i < p; i++) {
    double t = oracle_time(models[i], cap_of(models[i], n));
    hi_t = t > hi_t ? t : hi_t;
  }
  if (!feasible(models, p, n, hi_t))
    return INFINITY;
  /* Positive doubles order like their bit patterns. */
  uint64_t lo = 0, hi = bits_of(hi_t);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (feasible(models, p, n, double_of(mid)))
      hi = mid;
    else
      lo = mid + 1;
  }
  return double_of(lo);
}

static void enumerate_blocks(const mlsba_model_t *const *models, int p, int i,
                             int64_t left, int64_t b, int64_t e, int edge_dev,
                             double worst, double *best) {
  if (worst >= *best)
    return;
  if (i == p) {
    if (left == 0 && worst < *best)
      *best = worst;
    return;
  }
  int64_t extra = (i == edge_dev) ? e : 0;
  int64_t max_load = mlsba_model_max_load(models[i]);
  for (int64_t k = 0; k <= left; k++) {
    int64_t units = k * b + extra;
    if (max_load != MLSBA_NO_MAX_LOAD && units > max_load)
      break;
    double t = oracle_time(models[i], units);
    enumerate_blocks(models, p, i + 1, left - k, b, e, edge_dev,
                     t > worst ? t : worst, best);
  }
}

double oracle_exhaustive_blocks(const mlsba_model_t *const *models, int p,
                                int64_t n, int64_t b) {
  double best = INFINITY;
  int64_t e = n % b;
  for (int j = 0; j < (e ? p : 1); j++)
    enumerate_blocks(models, p, 0, n / b, b, e, e ? j : -1, 0, &best);
  return best;
}
