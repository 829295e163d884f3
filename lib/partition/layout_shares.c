/* The node models' optimum at one trailing size and the fractions per
 * dimension it gives node columns and ranks. See layout_shares.h. */
#include "layout_shares.h"

#include <math.h>

#include "../core/error.h"
#include "fpm.h"

void mlsba__layout_caps(const mlsba_model_t *const models[], size_t q,
                        const int64_t *caps, int64_t cap[]) {
  for (size_t i = 0; i < q; i++) {
    int64_t c = mlsba_model_max_load(models[i]);
    if (caps && caps[i] >= 0 && (c < 0 || caps[i] < c))
      c = caps[i];
    cap[i] = c;
  }
}

/* What node i runs by time T: its model's load by time, within its cap. */
static double load_at(const mlsba_model_t *m, int64_t cap, double T) {
  double x = mlsba__fpm_load_by_time(m, T);
  return cap >= 0 && x > (double)cap ? (double)cap : x;
}

static double loads_at(const mlsba_model_t *const models[], const int64_t cap[],
                       size_t q, double T) {
  double sum = 0;
  for (size_t i = 0; i < q; i++)
    sum += load_at(models[i], cap[i], T);
  return sum;
}

int mlsba__layout_optimum(const mlsba_model_t *const models[],
                          const int64_t cap[], size_t q, double W,
                          double area[], double *T) {
  /* By the time each node takes for all it can hold of W, every node
   * runs that much, so together at least W when the caps allow it. */
  double hold = 0, hi = 0;
  for (size_t i = 0; i < q; i++) {
    double most = cap[i] >= 0 && (double)cap[i] < W ? (double)cap[i] : W;
    double t = most > 0 ? mlsba__fpm_time(models[i], most) : 0;
    hold += most;
    hi = t > hi ? t : hi;
  }
  if (hold < W)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "layout: the nodes' caps hold %.0f blocks, fewer "
                       "than the %.0f asked",
                       hold, W);
  /* Models of other shapes than the papers' may run less by that time:
   * widen until they run W. */
  for (int k = 0; k < 2100 && loads_at(models, cap, q, hi) < W; k++)
    hi = hi > 0 ? 2 * hi : 1e-300;
  double lo = 0;
  for (int k = 0; k < 2200; k++) {
    double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi) || hi - lo <= 1e-14 * hi)
      break;
    if (loads_at(models, cap, q, mid) >= W)
      hi = mid;
    else
      lo = mid;
  }
  /* Interpolate node by node between the bracket's ends, so that the
   * areas add up to W exactly and stay within what each runs by hi. */
  double slo = loads_at(models, cap, q, lo), shi = loads_at(models, cap, q, hi);
  double lambda = shi > slo ? (W - slo) / (shi - slo) : 1;
  for (size_t i = 0; i < q; i++) {
    double xl = load_at(models[i], cap[i], lo);
    double xh = load_at(models[i], cap[i], hi);
    area[i] = xl + lambda * (xh - xl);
  }
  *T = hi;
  return 0;
}

void mlsba__layout_fractions(size_t ranks, size_t columns,
                             const size_t rank_column[],
                             const size_t column_size[],
                             const double rank_area[], double f[], double g[]) {
  double total = 0;
  for (size_t c = 0; c < columns; c++)
    f[c] = 0;
  for (size_t r = 0; r < ranks; r++) {
    f[rank_column[r]] += rank_area[r];
    total += rank_area[r];
  }
  for (size_t r = 0; r < ranks; r++) {
    double S = f[rank_column[r]];
    g[r] = S > 0 ? rank_area[r] / S : 1.0 / (double)column_size[rank_column[r]];
  }
  for (size_t c = 0; c < columns; c++)
    f[c] = total > 0 ? f[c] / total : 1.0 / (double)columns;
}

double mlsba__layout_trailing_area(int64_t brows, int64_t bcols, int64_t t,
                                   int lower) {
  double R = (double)(brows - t), C = (double)(bcols - t);
  return lower ? R * (R + 1) / 2 : R * C;
}
