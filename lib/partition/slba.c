/* SLBA: single-level geometric bisection of Lastovetsky & Reddy (seed 002
 * §II, seed 000 GPA) with the integer refinement step, and the block
 * granularity wrapper.
 *
 * Geometry: the optimal distribution lies on a line through the origin of
 * the (load, speed) plane that crosses every speed function; a line of
 * slope 1/T meets device i at the largest load finishing by T, c_i(T). The
 * solution space is bounded by an upper line U (sum of crossings <= N) and
 * a lower line L (sum >= N) and bisected by angle until every device's
 * crossings differ by less than one unit. The floors of the U crossings
 * then leave fewer than p units, which the refinement hands out one at a
 * time to the device that would finish its next unit earliest. */
#include "slba.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"

/* Bisection steps before giving up on the float resolution; the angle
 * interval halves each step, so 256 is far beyond what doubles resolve. */
#define MAX_BISECTION_STEPS 256
/* Halvings or doublings allowed when widening the initial lines. */
#define MAX_WIDENING_STEPS 2200

/* One SLBA problem in block units: device i takes whole blocks of b units. */
typedef struct {
  const mlsba_model_t *const *models;
  size_t p;
  double b;     /* units per block */
  int64_t *cap; /* capacity of each device, in blocks */
  double *xu;   /* crossings of the upper line U, in blocks */
  double *xl;   /* crossings of the lower line L */
  double *xb;   /* crossings of the bisecting line B */
  size_t *heap; /* refinement heap of device indices */
  double *key;  /* refinement keys: time of the device's next block */
} problem_t;

static double blocks_by_time(const problem_t *P, size_t i, double T) {
  double x = mlsba__fpm_load_by_time(P->models[i], T) / P->b;
  double cap = (double)P->cap[i];
  return x < cap ? x : cap;
}

static double time_of_blocks(const problem_t *P, size_t i, int64_t k) {
  return mlsba__fpm_time(P->models[i], (double)k * P->b);
}

/* Crossings of the line of slope 1/T with every model; returns their sum. */
static double crossings(const problem_t *P, double T, double *x) {
  double sum = 0;
  for (size_t i = 0; i < P->p; i++) {
    x[i] = blocks_by_time(P, i, T);
    sum += x[i];
  }
  return sum;
}

static int converged(const problem_t *P) {
  for (size_t i = 0; i < P->p; i++)
    if (P->xl[i] - P->xu[i] >= 1)
      return 0;
  return 1;
}

/* ---- refinement heap: min key first, ties to the lower device index ---- */

static int heap_less(const problem_t *P, size_t a, size_t b) {
  double ka = P->key[a], kb = P->key[b];
  return ka < kb || (ka == kb && a < b);
}

static void heap_sift_down(const problem_t *P, size_t n, size_t pos) {
  size_t *h = P->heap;
  for (;;) {
    size_t l = 2 * pos + 1, r = l + 1, best = pos;
    if (l < n && heap_less(P, h[l], h[best]))
      best = l;
    if (r < n && heap_less(P, h[r], h[best]))
      best = r;
    if (best == pos)
      return;
    size_t tmp = h[pos];
    h[pos] = h[best];
    h[best] = tmp;
    pos = best;
  }
}

/* Refinement (SLBA step 2, MLSBA Phase 2): add r blocks one at a time, each
 * to the device whose time after taking it is smallest. With non-decreasing
 * t_i this greedy keeps the makespan at the integer optimum as long as it
 * starts from loads that the optimum does not undercut. */
static int refine(problem_t *P, int64_t *x, int64_t r) {
  size_t n = 0;
  for (size_t i = 0; i < P->p; i++) {
    if (x[i] < P->cap[i]) {
      P->key[i] = time_of_blocks(P, i, x[i] + 1);
      P->heap[n++] = i;
    }
  }
  for (size_t k = n / 2; k-- > 0;)
    heap_sift_down(P, n, k);
  for (; r > 0; r--) {
    if (n == 0)
      return mlsba__fail(MLSBA_ECAPACITY,
                         "slba: no device can take another block");
    size_t i = P->heap[0];
    x[i]++;
    if (x[i] < P->cap[i]) {
      P->key[i] = time_of_blocks(P, i, x[i] + 1);
    } else {
      P->heap[0] = P->heap[--n];
    }
    heap_sift_down(P, n, 0);
  }
  return 0;
}

/* SLBA for W blocks. P->cap must add up to at least W. */
static int slba_blocks(problem_t *P, int64_t W, int64_t *x,
                       mlsba_partition_info_t *info) {
  size_t p = P->p;
  if (W == 0) {
    memset(x, 0, p * sizeof *x);
    return 0;
  }
  /* Phase 1 of the papers: lines U and L through the speeds of the fastest
   * and the slowest device at N/P. U is the steeper line (smaller time). */
  double x0 = (double)W / (double)p * P->b;
  double tu = INFINITY, tl = 0;
  for (size_t i = 0; i < p; i++) {
    double t = mlsba__fpm_time(P->models[i], x0);
    tu = t < tu ? t : tu;
    tl = t > tl ? t : tl;
  }
  /* Widen the lines where the papers' assumptions fail: a max_load below
   * N/P pulls L's crossings in (the memory-limited case), and a model that
   * breaks the single-crossing shape can push U's crossings out. */
  double su = crossings(P, tu, P->xu), sl = crossings(P, tl, P->xl);
  for (int k = 0; su > (double)W && k < MAX_WIDENING_STEPS; k++)
    su = crossings(P, tu *= 0.5, P->xu);
  for (int k = 0; sl < (double)W && k < MAX_WIDENING_STEPS; k++)
    sl = crossings(P, tl *= 2, P->xl);
  if (su > (double)W || sl < (double)W || !isfinite(tl))
    return mlsba__fail(MLSBA_ENOCONV,
                       "slba: cannot bound the solution for %lld blocks",
                       (long long)W);

  /* Bisect the angle between U and L. Angles are measured with the speed
   * axis scaled by sigma so that U and L sit either side of 45 degrees:
   * the paper's bisection under a choice of axis units that keeps the
   * angles away from 90 degrees, where doubles would lose the lines. */
  double sigma = sqrt(tu * tl);
  unsigned steps = 0;
  while (steps < MAX_BISECTION_STEPS && !converged(P)) {
    double bisector = 0.5 * (atan(sigma / tu) + atan(sigma / tl));
    double tb = sigma / tan(bisector);
    if (!(tb > tu && tb < tl))
      tb = tu + 0.5 * (tl - tu);
    if (!(tb > tu && tb < tl))
      break; /* U and L are adjacent doubles */
    double sb = crossings(P, tb, P->xb);
    double *tmp = P->xb;
    steps++;
    if (sb <= (double)W) {
      tu = tb;
      P->xb = P->xu;
      P->xu = tmp;
    } else {
      tl = tb;
      P->xb = P->xl;
      P->xl = tmp;
    }
  }

  /* Integer loads from U's crossings. The check against tu guards the
   * floor against a crossing computed one rounding error too high, so that
   * the refinement starts at or below the integer optimum. */
  int64_t sum = 0;
  for (size_t i = 0; i < p; i++) {
    int64_t k = (int64_t)floor(P->xu[i]);
    if (k > P->cap[i])
      k = P->cap[i];
    for (int d = 0; d < 2 && k > 0 && time_of_blocks(P, i, k) > tu; d++)
      k--;
    x[i] = k;
    sum += k;
  }
  /* Sum of floors <= sum of crossings <= W; hand back any excess a rounded
   * sum let through, from the device that finishes last. */
  while (sum > W) {
    size_t worst = p;
    double tw = -1;
    for (size_t i = 0; i < p; i++) {
      double t = time_of_blocks(P, i, x[i]);
      if (x[i] > 0 && t > tw) {
        tw = t;
        worst = i;
      }
    }
    x[worst]--;
    sum--;
  }
  if (info) {
    info->bisection_steps += steps;
    info->refined += W - sum;
  }
  return refine(P, x, W - sum);
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
static int slba_with_edge(problem_t *P, int64_t W, int64_t e, int64_t *x,
                          mlsba_partition_info_t *info, size_t *edge_dev) {
  int err = slba_blocks(P, W, x, info);
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

int mlsba__slba(const mlsba_model_t *const models[], size_t p, int64_t n,
                int64_t granularity, int64_t loads[],
                mlsba_partition_info_t *info) {
  int64_t b = granularity > 1 ? granularity : 1;
  int64_t W = n / b, e = n % b;
  if (info)
    memset(info, 0, sizeof *info);

  /* Capacity in blocks, and whether some device can take the edge on top
   * of a full load of blocks; sums saturate at n. */
  int64_t cap_blocks = 0, cap_units = 0;
  int edge_fits_at_full = 0;
  problem_t P = {.models = models, .p = p, .b = (double)b};
  if (p > SIZE_MAX / (8 * sizeof(double)))
    return mlsba__fail(MLSBA_ENOMEM, "slba: %zu devices are too many", p);
  P.cap = malloc(p * sizeof(int64_t));
  double *dbl = malloc(4 * p * sizeof(double));
  P.heap = malloc(p * sizeof(size_t));
  int err = 0;
  if (P.cap == NULL || dbl == NULL || P.heap == NULL) {
    err = mlsba__fail(MLSBA_ENOMEM, "slba: out of memory for %zu devices", p);
    goto done;
  }
  P.xu = dbl;
  P.xl = dbl + p;
  P.xb = dbl + 2 * p;
  P.key = dbl + 3 * p;
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
  err = e ? slba_with_edge(&P, W, e, loads, info, &edge_dev)
          : slba_blocks(&P, W, loads, info);
  if (!err) {
    for (size_t i = 0; i < p; i++)
      loads[i] *= b;
    loads[edge_dev] += e;
  }
  if (!err && info)
    info->makespan = max_time(models, p, loads);
done:
  free(P.cap);
  free(dbl);
  free(P.heap);
  return err;
}

void mlsba_partition_opts_init(mlsba_partition_opts_t *opts) {
  if (opts)
    memset(opts, 0, sizeof *opts);
}

int mlsba_partition_slba_ex(const mlsba_model_t *const models[], size_t p,
                            int64_t n, const mlsba_partition_opts_t *opts,
                            int64_t loads[], mlsba_partition_info_t *info) {
  const char *fn = "mlsba_partition_slba";
  int err = mlsba__check_partition_args(fn, models, p, n, loads);
  if (err)
    return err;
  int64_t granularity = opts ? opts->granularity : 0;
  if (granularity < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: granularity must be >= 0, got %lld",
                       fn, (long long)granularity);
  return mlsba__slba(models, p, n, granularity, loads, info);
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
