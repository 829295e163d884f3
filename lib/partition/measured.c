/* Measurements behind the models of the balancing routine's devices and
 * of the one-dimensional head's nodes, and the pooling of devices of one
 * kind (measured.h). */
#include "measured.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

static void drop_point(mlsba__measured_t *m, size_t i) {
  size_t rest = m->n - i - 1;
  memmove(m->x + i, m->x + i + 1, rest * sizeof *m->x);
  memmove(m->speed + i, m->speed + i + 1, rest * sizeof *m->speed);
  memmove(m->count + i, m->count + i + 1, rest * sizeof *m->count);
  memmove(m->m2 + i, m->m2 + i + 1, rest * sizeof *m->m2);
  m->n--;
}

/* The runs of a point (x, mean speed, m2, count) join point i: Chan et
 * al.'s pairwise update of the mean and the squared deviations; the load
 * becomes the mean of the runs' loads when weighted, else stays. */
static void join(mlsba__measured_t *m, size_t i, double x, double speed,
                 double m2, unsigned count, int weighted) {
  double na = m->count[i], nb = count, n = na + nb;
  double delta = speed - m->speed[i];
  m->speed[i] += delta * nb / n;
  m->m2[i] += m2 + delta * delta * na * nb / n;
  m->count[i] += count;
  if (weighted)
    m->x[i] = (na * m->x[i] + nb * x) / n;
}

static void append(mlsba__measured_t *m, double x, double speed, double m2,
                   unsigned count) {
  if (m->n == MLSBA__MAX_POINTS) /* forget the oldest-measured: rare */
    drop_point(m, 0);
  m->x[m->n] = x;
  m->speed[m->n] = speed;
  m->m2[m->n] = m2;
  m->count[m->n++] = count;
}

static long nearest(const mlsba__measured_t *m, double x, long skip) {
  long best = -1;
  for (size_t i = 0; i < m->n; i++)
    if ((long)i != skip &&
        (best < 0 || fabs(m->x[i] - x) < fabs(m->x[best] - x)))
      best = (long)i;
  return best;
}

long mlsba__measured_find(const mlsba__measured_t *m, double x, double merge) {
  long i = nearest(m, x, -1);
  return i >= 0 && fabs(m->x[i] - x) <= merge * x ? i : -1;
}

/* Two noisy points a unit or two apart would make a steep segment that
 * turns timing noise into large swings of the next distribution; merged,
 * repeated runs near the solution wear the noise down. The nearest point
 * takes the run (the first within reach could be the farther of two), and
 * a point that moves onto another joins it. */
void mlsba__measured_add(mlsba__measured_t *m, int64_t load, double time,
                         double merge) {
  double x = (double)load, speed = x / time;
  long i = mlsba__measured_find(m, x, merge);
  if (i < 0) {
    append(m, x, speed, 0, 1);
    return;
  }
  join(m, (size_t)i, x, speed, 0, 1, 0);
  m->x[i] = x;
  long k = nearest(m, x, i);
  if (k >= 0 && fabs(m->x[k] - x) <= merge * x) {
    join(m, (size_t)i, x, m->speed[k], m->m2[k], m->count[k], 0);
    drop_point(m, (size_t)k);
  }
}

int mlsba__measured_known_well(const mlsba__measured_t *m, int64_t load,
                               double merge, double tol) {
  long i = mlsba__measured_find(m, (double)load, merge);
  if (i < 0 || m->count[i] < 2)
    return 0; /* a single run says nothing of the noise */
  double var = m->m2[i] / (m->count[i] - 1);
  return sqrt(var / m->count[i]) <= tol * m->speed[i];
}

int mlsba__measured_to_model(const mlsba__measured_t *m, mlsba_model_t *model) {
  int err = mlsba_model_clear(model);
  for (size_t i = 0; !err && i < m->n; i++)
    err = mlsba_model_set_point(model, m->x[i], m->speed[i]);
  return err;
}

int mlsba__measured_forget_if_stale(mlsba__measured_t *m,
                                    const mlsba_model_t *model, int64_t load,
                                    double time, double tol, double *pred) {
  double t = 0;
  if (pred)
    *pred = 0;
  if (load <= 0 || mlsba_model_num_points(model) == 0 ||
      mlsba_model_time(model, (double)load, &t) != 0 || !(t > 0))
    return 0;
  if (pred)
    *pred = t;
  if (!(fabs(time / t - 1) > tol))
    return 0;
  m->n = 0;
  return 1;
}

/* The relative variance of single runs, from every point with two runs or
 * more of the n devices; dof says how many degrees of freedom it has. */
static double relative_variance(const mlsba__measured_t *const *members,
                                size_t n, double *dof) {
  double sum = 0;
  *dof = 0;
  for (size_t k = 0; k < n; k++) {
    const mlsba__measured_t *m = members[k];
    for (size_t i = 0; i < m->n; i++) {
      if (m->count[i] < 2)
        continue;
      sum += m->m2[i] / (m->speed[i] * m->speed[i]);
      *dof += m->count[i] - 1;
    }
  }
  return *dof > 0 ? sum / *dof : 0;
}

double mlsba__measured_noise(const mlsba__measured_t *m) {
  double dof;
  return sqrt(relative_variance(&m, 1, &dof));
}

/* Pools m's runs; slot[i] says which point of the pool took point i. A
 * full pool takes a run into its nearest point rather than forget one. */
static void pool_into(mlsba__measured_t *pool, const mlsba__measured_t *m,
                      double merge, unsigned short *slot) {
  for (size_t i = 0; i < m->n; i++) {
    long k = mlsba__measured_find(pool, m->x[i], merge);
    if (k < 0 && pool->n == MLSBA__MAX_POINTS)
      k = nearest(pool, m->x[i], -1);
    if (k >= 0) {
      join(pool, (size_t)k, m->x[i], m->speed[i], m->m2[i], m->count[i], 1);
    } else {
      k = (long)pool->n;
      append(pool, m->x[i], m->speed[i], m->m2[i], m->count[i]);
    }
    slot[i] = (unsigned short)k;
  }
}

/* The other members' speed at x: their model's (linear between points,
 * constant beyond both ends, as the partitioner sees it), from the pool
 * without m's runs; *nb gets the runs behind it (the fewer of the two
 * points it lies between). 0 when nobody else has run. */
static double others_at(const mlsba__measured_t *m, const unsigned short *slot,
                        const mlsba__measured_t *pool, double x, double *nb) {
  double lo_x = -INFINITY, lo_s = 0, lo_n = 0;
  double hi_x = INFINITY, hi_s = 0, hi_n = 0;
  for (size_t j = 0; j < pool->n; j++) {
    double count = pool->count[j], sum = pool->speed[j] * count;
    for (size_t t = 0; t < m->n; t++) {
      if (slot[t] == j) { /* m's own runs out of the pool's point */
        count -= m->count[t];
        sum -= m->speed[t] * m->count[t];
      }
    }
    if (count < 0.5 || !(sum > 0))
      continue;
    if (pool->x[j] <= x && pool->x[j] > lo_x) {
      lo_x = pool->x[j];
      lo_s = sum / count;
      lo_n = count;
    }
    if (pool->x[j] >= x && pool->x[j] < hi_x) {
      hi_x = pool->x[j];
      hi_s = sum / count;
      hi_n = count;
    }
  }
  if (lo_n == 0 || hi_n == 0 || hi_x == lo_x) {
    *nb = lo_n ? lo_n : hi_n;
    return lo_n ? lo_s : hi_s;
  }
  *nb = lo_n < hi_n ? lo_n : hi_n;
  return lo_s + (hi_s - lo_s) * (x - lo_x) / (hi_x - lo_x);
}

/* How far m stands from the other members, in standard errors: the
 * relative differences of its points' speeds from the others' model at
 * the same loads, weighted by their inverse variances (a device of other
 * hardware differs by about the same factor at every load). Two runs at
 * least: one cannot tell a different device from a spike. */
static double distance(const mlsba__measured_t *m, const unsigned short *slot,
                       const mlsba__measured_t *pool, double var) {
  double num = 0, den = 0;
  unsigned runs = 0;
  for (size_t t = 0; t < m->n; t++) {
    double nb, others = others_at(m, slot, pool, m->x[t], &nb);
    if (!(others > 0))
      continue;
    double v = var * (1.0 / m->count[t] + 1 / nb);
    num += (m->speed[t] / others - 1) / v;
    den += 1 / v;
    runs += m->count[t];
  }
  return runs >= 2 && den > 0 ? fabs(num) / sqrt(den) : 0;
}

int mlsba__measured_pool(const mlsba__measured_t *const *members, size_t n,
                         double merge, double eps, mlsba__measured_t *pool,
                         unsigned char *alike) {
  double dof, var = relative_variance(members, n, &dof);
  if (dof == 0)
    var = eps * eps; /* no repeated run yet: noise of the order of eps */
  /* Without noise, differences within a few tenths of eps (loads apart on
   * a curve) are not worth a model of their own. */
  double floor = eps * eps / 100 > 1e-6 ? eps * eps / 100 : 1e-6;
  var = var > floor ? var : floor;
  unsigned short *slot = malloc((n ? n : 1) * MLSBA__MAX_POINTS * sizeof *slot);
  if (slot == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
  /* The bar is three standard errors to leave the pool, two to come
   * back: a device near the bar does not flap in and out with the noise. */
  double *bar = malloc((n ? n : 1) * sizeof *bar);
  if (bar == NULL) {
    free(slot);
    return mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
  }
  size_t left = n;
  for (size_t k = 0; k < n; k++) {
    bar[k] = alike[k] ? 3 : 2;
    alike[k] = 1;
  }
  /* The device that stands farthest past its bar is set apart first, and
   * the others are tested again without it: one fast outlier would
   * otherwise pull the others' mean away from every member. */
  for (;;) {
    memset(pool, 0, sizeof *pool);
    for (size_t k = 0; k < n; k++)
      if (alike[k])
        pool_into(pool, members[k], merge, slot + k * MLSBA__MAX_POINTS);
    if (left < 2)
      break;
    double worst = 1;
    long apart = -1;
    for (size_t k = 0; k < n; k++) {
      double z = alike[k] ? distance(members[k], slot + k * MLSBA__MAX_POINTS,
                                     pool, var)
                          : 0;
      if (z / bar[k] > worst) {
        worst = z / bar[k];
        apart = (long)k;
      }
    }
    if (apart < 0)
      break;
    alike[apart] = 0;
    left--;
  }
  free(bar);
  free(slot);
  return 0;
}
