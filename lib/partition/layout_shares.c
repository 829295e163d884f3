/* The node models' optimum at one trailing size and the fractions per
 * dimension it gives node columns and ranks. See layout_shares.h. */
#include "layout_shares.h"

#include <math.h>
#include <stdlib.h>

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

/* order[q]: the nodes by descending speed, ties by ascending index (an
 * insertion sort, stable: no state outside the call, and q is a count
 * of nodes). */
static void sort_by_speed(const double speed[], size_t q, size_t order[]) {
  for (size_t i = 0; i < q; i++) {
    size_t k = i;
    for (; k > 0 && speed[order[k - 1]] < speed[i]; k--)
      order[k] = order[k - 1];
    order[k] = i;
  }
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The group order[lo, hi)'s mean model, one copy a node. */
static int pool_group(const mlsba_model_t *const models[], const size_t *order,
                      size_t lo, size_t hi, mlsba_model_t *pooled[]) {
  size_t points = 0;
  for (size_t k = lo; k < hi; k++)
    points += mlsba_model_num_points(models[order[k]]);
  double *x = malloc((points ? points : 1) * sizeof *x);
  double *s = malloc((points ? points : 1) * sizeof *s);
  int err = x && s ? 0 : MLSBA_ENOMEM;
  size_t n = 0;
  for (size_t k = lo; !err && k < hi; k++)
    for (size_t p = 0; p < mlsba_model_num_points(models[order[k]]); p++) {
      double sp;
      mlsba_model_get_point(models[order[k]], p, &x[n], &sp);
      n++;
    }
  if (!err)
    qsort(x, n, sizeof *x, by_value);
  size_t u = 0;
  for (size_t p = 0; !err && p < n; p++)
    if (u == 0 || x[p] != x[u - 1])
      x[u++] = x[p];
  for (size_t p = 0; !err && p < u; p++) {
    double sum = 0;
    for (size_t k = lo; k < hi; k++)
      sum += mlsba__fpm_speed(models[order[k]], x[p]);
    s[p] = sum / (double)(hi - lo);
  }
  for (size_t k = lo; !err && k < hi; k++) {
    const mlsba_model_t *own = models[order[k]];
    mlsba_model_t **to = &pooled[order[k]];
    double lat = 0, per = 0;
    err = mlsba_model_create(to);
    for (size_t p = 0; !err && p < u; p++)
      err = mlsba__fpm_set_point(*to, x[p], s[p]);
    if (!err)
      err = mlsba_model_set_max_load(*to, mlsba_model_max_load(own));
    if (!err)
      mlsba_model_get_transfer(own, &lat, &per);
    if (!err && (lat > 0 || per > 0))
      err = mlsba_model_set_transfer(*to, lat, per);
  }
  free(x);
  free(s);
  return err;
}

/* Groups of list[n] (by descending speed) pooled, from the fastest down:
 * a group takes the next node while its fastest is at most 1 + tol times
 * that node's speed. */
static int pool_groups(const mlsba_model_t *const models[], const double *speed,
                       const size_t *list, size_t n, double tol,
                       mlsba_model_t *pooled[]) {
  int err = 0;
  for (size_t lo = 0, hi; !err && lo < n; lo = hi) {
    double top = speed[list[lo]];
    for (hi = lo + 1; hi < n && top > 0 && speed[list[hi]] > 0 &&
                      top <= (1 + tol) * speed[list[hi]];
         hi++)
      ;
    if (hi - lo > 1)
      err = pool_group(models, list, lo, hi, pooled);
  }
  return err;
}

int mlsba__layout_pool_alike(const mlsba_model_t *const models[],
                             const int64_t cap[], size_t q, double W,
                             double alike, const size_t kin[], double kin_alike,
                             mlsba_model_t *pooled[]) {
  for (size_t i = 0; i < q; i++)
    pooled[i] = NULL;
  size_t room = q ? q : 1;
  double *area = malloc(room * sizeof *area),
         *speed = malloc(room * sizeof *speed);
  size_t *order = malloc(room * sizeof *order),
         *list = malloc(room * sizeof *list);
  int err = area && speed && order && list ? 0 : MLSBA_ENOMEM;
  double T;
  if (!err)
    err = mlsba__layout_optimum(models, cap, q, W, area, &T);
  /* A node given nothing at the optimum (capped at 0) is told apart by
   * its cap: it stays alone (speed 0, last). */
  for (size_t i = 0; !err && i < q; i++) {
    double t = area[i] > 0 ? mlsba__fpm_time(models[i], area[i]) : 0;
    speed[i] = t > 0 ? area[i] / t : 0;
  }
  if (!err)
    sort_by_speed(speed, q, order);
  /* First the nodes of one kin among themselves, within kin_alike (each
   * kin once: at the first node of it in the order)... */
  for (size_t a = 0; !err && kin && a < q; a++) {
    size_t v = kin[order[a]], n = 0, seen = 0;
    for (size_t b = 0; b < a && !seen; b++)
      seen = kin[order[b]] == v;
    if (v == 0 || seen)
      continue;
    for (size_t b = a; b < q; b++)
      if (kin[order[b]] == v)
        list[n++] = order[b];
    err = pool_groups(models, speed, list, n, kin_alike, pooled);
  }
  /* ...then every node not pooled yet, within alike. */
  size_t n = 0;
  for (size_t a = 0; !err && alike > 0 && a < q; a++)
    if (pooled[order[a]] == NULL)
      list[n++] = order[a];
  if (!err)
    err = pool_groups(models, speed, list, n, alike, pooled);
  if (err == MLSBA_ENOMEM)
    mlsba__fail(err, "layout: out of memory");
  if (err)
    for (size_t i = 0; i < q; i++) {
      mlsba_model_destroy(pooled[i]);
      pooled[i] = NULL;
    }
  free(area);
  free(speed);
  free(order);
  free(list);
  return err;
}
