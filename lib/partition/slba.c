/* SLBA: single-level geometric bisection of Lastovetsky & Reddy (seed 002
 * §II, seed 000 GPA) with the integer refinement step, over device models,
 * in units or in blocks of units. The bisection itself is bisect.c. */
#include "slba.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "bisect.h"
#include "fpm.h"

/* One SLBA problem in block units: device i takes whole blocks of b units. */
typedef struct {
  const mlsba_model_t *const *models;
  size_t p;
  double b;     /* units per block */
  int64_t *cap; /* capacity of each device, in blocks */
} problem_t;

static int crossings(void *ctx, double T, double *x, double *sum) {
  const problem_t *P = ctx;
  mlsba__ksum_t total = {0, 0};
  for (size_t i = 0; i < P->p; i++) {
    double xi = mlsba__fpm_load_by_time(P->models[i], T) / P->b;
    double cap = (double)P->cap[i];
    x[i] = xi < cap ? xi : cap;
    mlsba__ksum_add(&total, x[i]);
  }
  *sum = mlsba__ksum(&total);
  return 0;
}

static int time_of(void *ctx, size_t i, int64_t k, double *t) {
  const problem_t *P = ctx;
  *t = mlsba__fpm_time(P->models[i], (double)k * P->b);
  return 0;
}

static const mlsba__bisect_ops_t slba_ops = {crossings, time_of};

/* SLBA for W blocks. P->cap must add up to at least W. */
static int slba_blocks(problem_t *P, mlsba__bisect_t *B, int64_t W,
                       int64_t *x) {
  /* The initial lines U and L go through the speeds of the fastest and
   * the slowest device at N/P: U is the steeper line (smaller time). */
  double tu = B->hint_tu, tl = B->hint_tl;
  B->hint_tu = B->hint_tl = 0;
  if (!(tu > 0 && tu <= tl)) {
    double x0 = (double)W / (double)P->p * P->b;
    tu = INFINITY;
    tl = 0;
    for (size_t i = 0; i < P->p; i++) {
      double t = mlsba__fpm_time(P->models[i], x0);
      tu = t < tu ? t : tu;
      tl = t > tl ? t : tl;
    }
  }
  return mlsba__bisect_run(B, &slba_ops, P, W, tu, tl, x);
}

/* max_i t_i(loads[i]): the makespan a distribution is predicted to take. */
static double max_time(const mlsba_model_t *const models[], size_t p,
                       const int64_t loads[]) {
  double t = 0;
  for (size_t i = 0; i < p; i++) {
    double ti = mlsba__fpm_time(models[i], (double)loads[i]);
    t = ti > t ? ti : t;
  }
  return t;
}

int mlsba__slba_from(const mlsba_model_t *const models[], size_t p, int64_t n,
                     const int64_t start[], int64_t loads[],
                     mlsba_partition_info_t *info, mlsba__bisect_t *ws) {
  problem_t P = {.models = models, .p = p, .b = 1, .cap = ws->cap};
  int64_t have = 0;
  for (size_t i = 0; i < p; i++) {
    P.cap[i] = mlsba__fpm_cap(models[i], n);
    loads[i] = start[i];
    have += start[i];
  }
  int err = mlsba__bisect_refine(ws, &slba_ops, &P, loads, n - have);
  if (!err && info) {
    info->makespan = max_time(models, p, loads);
    info->bisection_steps = 0;
    info->refined = n - have;
  }
  return err;
}

/* Units to blocks with a leftover edge of e units (0 < e < b): the loads
 * are whole blocks except one device that also takes the edge. SLBA for W
 * blocks, then the edge to the device that finishes it earliest.
 *
 * Exact for non-decreasing t_i. Let T* be the optimum and k_i the blocks
 * device i finishes by T*. SLBA's W-block loads x_i finish by T_W <= T*,
 * so x_i <= k_i. If sum k_i > W, some device has x_j < k_j: a whole free
 * block, so x_j b + e finishes by T*. Otherwise sum k_i = W forces x = k,
 * and the optimum itself puts the edge on a device with room for it. The
 * capacity check guarantees such a device exists. */
static int slba_with_edge(problem_t *P, mlsba__bisect_t *B, int64_t W,
                          int64_t e, int64_t *x, size_t *edge_dev) {
  int err = slba_blocks(P, B, W, x);
  if (err)
    return err;
  size_t best = P->p;
  double tbest = INFINITY;
  for (size_t i = 0; i < P->p; i++) {
    int64_t units = x[i] * (int64_t)P->b + e;
    if (units > mlsba__fpm_cap(P->models[i], INT64_MAX))
      continue;
    double t = mlsba__fpm_time(P->models[i], (double)units);
    if (t < tbest) {
      tbest = t;
      best = i;
    }
  }
  if (best == P->p)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "slba: no device has room for the edge of %lld units",
                       (long long)e);
  *edge_dev = best;
  return 0;
}

int mlsba__check_partition_args(const char *fn,
                                const mlsba_model_t *const models[], size_t p,
                                int64_t n, const int64_t loads[]) {
  if (models == NULL || loads == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: %s is NULL", fn,
                       models == NULL ? "models" : "loads");
  if (p == 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: no devices (p = 0)", fn);
  if (n < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: load must be >= 0, got %lld", fn,
                       (long long)n);
  if (n > MLSBA__MAX_UNITS)
    return mlsba__fail(MLSBA_ERANGE, "%s: load %lld exceeds 2^53 units", fn,
                       (long long)n);
  for (size_t i = 0; i < p; i++) {
    int err = mlsba__fpm_check_usable(models[i], i);
    if (err)
      return err;
  }
  return 0;
}

int mlsba__check_loads(const char *algo, const mlsba_model_t *const models[],
                       size_t p, int64_t n, const int64_t loads[]) {
  int64_t sum = 0;
  for (size_t i = 0; i < p; i++) {
    int64_t cap = mlsba__fpm_cap(models[i], n);
    if (loads[i] < 0 || loads[i] > cap)
      return mlsba__fail(MLSBA_ENOCONV,
                         "%s gave device %zu a load of %lld units, outside "
                         "0..%lld (a bug in libmlsba: please report it)",
                         algo, i, (long long)loads[i], (long long)cap);
    sum += loads[i]; /* each <= n <= 2^53: no overflow before the check */
    if (sum > n)
      break;
  }
  if (sum != n)
    return mlsba__fail(MLSBA_ENOCONV,
                       "%s gave loads summing to %s%lld units, not %lld (a "
                       "bug in libmlsba: please report it)",
                       algo, sum > n ? "more than " : "", (long long)sum,
                       (long long)n);
  return 0;
}

int mlsba__slba(const mlsba_model_t *const models[], size_t p, int64_t n,
                const mlsba_partition_opts_t *opts, int64_t loads[],
                mlsba_partition_info_t *info, mlsba__bisect_t *ws) {
  int64_t b = opts->granularity > 1 ? opts->granularity : 1;
  int64_t W = n / b, e = n % b;
  if (info)
    memset(info, 0, sizeof *info);

  /* Capacity in blocks, and whether some device can take the edge on top
   * of a full load of blocks; sums saturate at n. */
  int64_t cap_blocks = 0, cap_units = 0;
  int edge_fits_at_full = 0;
  mlsba__bisect_t own, *B = ws ? ws : &own;
  int err = ws ? 0 : mlsba__bisect_init(&own, p, "slba");
  if (err)
    return err;
  B->steps = 0;
  B->refined = 0;
  B->bisect_angle = opts->line_search == MLSBA_LINE_BISECT_ANGLE;
  problem_t P = {.models = models, .p = p, .b = (double)b, .cap = B->cap};
  for (size_t i = 0; i < p; i++) {
    int64_t cu = mlsba__fpm_cap(models[i], n);
    P.cap[i] = cu / b;
    cap_blocks = cap_blocks + P.cap[i] < n ? cap_blocks + P.cap[i] : n;
    cap_units = cap_units + cu < n ? cap_units + cu : n;
    if (cu % b >= e)
      edge_fits_at_full = 1;
  }
  if (cap_units < n) {
    err = mlsba__fail(MLSBA_ECAPACITY,
                      "the devices can hold %lld units together (sum of "
                      "max_load), the load is %lld",
                      (long long)cap_units, (long long)n);
    goto done;
  }
  if (cap_blocks < W || (e > 0 && cap_blocks == W && !edge_fits_at_full)) {
    err = mlsba__fail(MLSBA_ECAPACITY,
                      "in blocks of %lld units the devices can hold %lld "
                      "blocks together, the load needs %lld blocks and an "
                      "edge of %lld units",
                      (long long)b, (long long)cap_blocks, (long long)W,
                      (long long)e);
    goto done;
  }

  size_t edge_dev = 0;
  err = e ? slba_with_edge(&P, B, W, e, loads, &edge_dev)
          : slba_blocks(&P, B, W, loads);
  if (!err) {
    for (size_t i = 0; i < p; i++)
      loads[i] *= b;
    loads[edge_dev] += e;
  }
  if (!err && info) {
    info->makespan = max_time(models, p, loads);
    info->bisection_steps = B->steps;
    info->refined = B->refined;
  }
done:
  if (!ws)
    mlsba__bisect_free(&own);
  return err;
}

int mlsba_partition_slba_ex(const mlsba_model_t *const models[], size_t p,
                            int64_t n, const mlsba_partition_opts_t *opts,
                            int64_t loads[], mlsba_partition_info_t *info) {
  const char *fn = "mlsba_partition_slba";
  int err = mlsba__check_partition_args(fn, models, p, n, loads);
  if (err)
    return err;
  mlsba_partition_opts_t o;
  mlsba_partition_opts_init(&o);
  if (opts)
    o = *opts;
  if (o.granularity < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: granularity must be >= 0, got %lld",
                       fn, (long long)o.granularity);
  err = mlsba__slba(models, p, n, &o, loads, info, NULL);
  return err ? err : mlsba__check_loads("slba", models, p, n, loads);
}

int mlsba_partition_slba(const mlsba_model_t *const models[], size_t p,
                         int64_t n, int64_t loads[]) {
  return mlsba_partition_slba_ex(models, p, n, NULL, loads, NULL);
}

int mlsba_partition_makespan(const mlsba_model_t *const models[], size_t p,
                             const int64_t loads[], double *makespan) {
  const char *fn = "mlsba_partition_makespan";
  if (makespan == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: makespan is NULL", fn);
  int err = mlsba__check_partition_args(fn, models, p, 0, loads);
  if (err)
    return err;
  for (size_t i = 0; i < p; i++)
    if (loads[i] < 0)
      return mlsba__fail(MLSBA_EINVAL, "%s: load %zu is negative (%lld)", fn, i,
                         (long long)loads[i]);
  *makespan = max_time(models, p, loads);
  return 0;
}
