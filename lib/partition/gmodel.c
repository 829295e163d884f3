/* Group models and Procedures 1 and 2 of MLSBA (seed 002 §IV.B). */
#include "gmodel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "slba.h"

/* A point at most this many units above a built one is reached by adding
 * the units one at a time to the distribution of that point, which is
 * cheaper than a full SLBA and as exact (see mlsba__slba_from). */
#define NEAR_UNITS 8

int mlsba__gmodel_init(mlsba__gmodel_t *g, const mlsba_model_t *const *dev,
                       size_t k, int64_t n,
                       const mlsba_partition_opts_t *opts) {
  memset(g, 0, sizeof *g);
  g->dev = dev;
  g->k = k;
  mlsba_partition_opts_init(&g->opts);
  g->opts.line_search = opts->line_search;
  for (size_t i = 0; i < k; i++) {
    int64_t c = mlsba__fpm_cap(dev[i], n);
    g->cap = g->cap + c < n ? g->cap + c : n;
  }
  if (k == 1) {
    g->model = dev[0];
    return 0;
  }
  int err = mlsba_model_create(&g->built);
  if (err)
    return err;
  g->model = g->built;
  g->built->max_load = g->cap;
  g->scratch_beta = malloc(k * sizeof *g->scratch_beta);
  if (g->scratch_beta == NULL) {
    mlsba__gmodel_free(g);
    return mlsba__fail(MLSBA_ENOMEM, "group model: out of memory");
  }
  if ((err = mlsba__bisect_init(&g->ws, k, "group model")) != 0)
    mlsba__gmodel_free(g);
  return err;
}

void mlsba__gmodel_free(mlsba__gmodel_t *g) {
  mlsba_model_destroy(g->built);
  free(g->xs);
  free(g->beta);
  free(g->time);
  free(g->scratch_beta);
  mlsba__bisect_free(&g->ws);
  memset(g, 0, sizeof *g);
}

/* First built point with xs[i] >= x. */
static size_t lower_bound(const mlsba__gmodel_t *g, int64_t x) {
  size_t lo = 0, hi = g->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (g->xs[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

long mlsba__gmodel_find(const mlsba__gmodel_t *g, int64_t x) {
  size_t i = lower_bound(g, x);
  return (i < g->n && g->xs[i] == x) ? (long)i : -1;
}

static int reserve(mlsba__gmodel_t *g) {
  if (g->n < g->room)
    return 0;
  size_t room = g->room ? 2 * g->room : 16;
  int64_t *xs = realloc(g->xs, room * sizeof *xs);
  if (xs)
    g->xs = xs;
  int64_t *beta = realloc(g->beta, room * g->k * sizeof *beta);
  if (beta)
    g->beta = beta;
  double *time = realloc(g->time, room * sizeof *time);
  if (time)
    g->time = time;
  if (!xs || !beta || !time)
    return mlsba__fail(MLSBA_ENOMEM, "group model: out of memory");
  g->room = room;
  return 0;
}

int mlsba__gmodel_insert_integer_point(mlsba__gmodel_t *g, int64_t x) {
  if (g->k == 1 || mlsba__gmodel_find(g, x) >= 0)
    return 0;
  if (x < 1 || x > g->cap)
    return mlsba__fail(MLSBA_ERANGE, "group model: point %lld outside 1..%lld",
                       (long long)x, (long long)g->cap);
  /* Step 1: the best distribution of x over the devices. Next to a built
   * point, from that point's distribution; otherwise SLBA, starting from
   * the lines of the built points around x, whose times bracket x's. */
  size_t at = lower_bound(g, x);
  mlsba_partition_info_t info;
  int err;
  if (g->plain_slba) {
    err =
        mlsba__slba(g->dev, g->k, x, &g->opts, g->scratch_beta, &info, &g->ws);
  } else if (at > 0 && x - g->xs[at - 1] <= NEAR_UNITS) {
    err = mlsba__slba_from(g->dev, g->k, x, g->beta + (at - 1) * g->k,
                           g->scratch_beta, &info, &g->ws);
  } else {
    g->ws.hint_tu = at > 0 ? g->time[at - 1] : 0;
    g->ws.hint_tl = at < g->n ? g->time[at] : 0;
    err =
        mlsba__slba(g->dev, g->k, x, &g->opts, g->scratch_beta, &info, &g->ws);
  }
  if (err)
    return err;
  /* Step 2: group speed psi_c = x / max_i t_i(beta_i); the piecewise
   * approximation around the new point follows from the sorted points. */
  if ((err = reserve(g)) != 0 ||
      (err = mlsba__fpm_set_point(g->built, (double)x,
                                  (double)x / info.makespan)) != 0)
    return err;
  size_t i = lower_bound(g, x), tail = g->n - i;
  memmove(g->xs + i + 1, g->xs + i, tail * sizeof *g->xs);
  memmove(g->time + i + 1, g->time + i, tail * sizeof *g->time);
  memmove(g->beta + (i + 1) * g->k, g->beta + i * g->k,
          tail * g->k * sizeof *g->beta);
  g->xs[i] = x;
  g->time[i] = info.makespan;
  memcpy(g->beta + i * g->k, g->scratch_beta, g->k * sizeof *g->beta);
  g->n++;
  return 0;
}

int mlsba__gmodel_insert_real_point(mlsba__gmodel_t *g, double t) {
  int64_t lo = (int64_t)floor(t), hi = (int64_t)ceil(t);
  int err = 0;
  if (lo >= 1)
    err = mlsba__gmodel_insert_integer_point(g, lo);
  if (!err && hi != lo && hi >= 1)
    err = mlsba__gmodel_insert_integer_point(g, hi);
  return err;
}

int mlsba__gmodel_time(mlsba__gmodel_t *g, int64_t x, double *t) {
  if (x == 0 || g->k == 1) {
    *t = mlsba__fpm_time(g->model, (double)x);
    return 0;
  }
  int err = mlsba__gmodel_insert_integer_point(g, x);
  if (err)
    return err;
  *t = g->time[mlsba__gmodel_find(g, x)];
  return 0;
}

int mlsba__gmodel_beta(mlsba__gmodel_t *g, int64_t x, int64_t *beta) {
  if (g->k == 1) {
    beta[0] = x;
    return 0;
  }
  if (x == 0) {
    memset(beta, 0, g->k * sizeof *beta);
    return 0;
  }
  int err = mlsba__gmodel_insert_integer_point(g, x);
  if (err)
    return err;
  memcpy(beta, g->beta + (size_t)mlsba__gmodel_find(g, x) * g->k,
         g->k * sizeof *beta);
  return 0;
}

size_t mlsba__gmodel_points(const mlsba__gmodel_t *g) {
  return g->k == 1 ? g->model->n : g->n;
}
