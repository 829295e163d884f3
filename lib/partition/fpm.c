/* Functional performance model: sorted (x, speed) points, piecewise-linear
 * speed, constant beyond both ends, optional max_load. */
#include "fpm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

/* Index of the first point with x[i] >= x (n when none). */
static size_t lower_bound(const mlsba_model_t *m, double x) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->x[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

double mlsba__fpm_speed(const mlsba_model_t *m, double x) {
  size_t last = m->n - 1;
  if (x <= m->x[0])
    return m->s[0];
  if (x >= m->x[last])
    return m->s[last];
  size_t j = lower_bound(m, x); /* x[j-1] < x <= x[j], 1 <= j <= last */
  if (m->x[j] == x)
    return m->s[j];
  double x0 = m->x[j - 1], x1 = m->x[j];
  double s0 = m->s[j - 1], s1 = m->s[j];
  return s0 + (s1 - s0) * ((x - x0) / (x1 - x0));
}

double mlsba__fpm_time(const mlsba_model_t *m, double x) {
  if (!(x > 0))
    return 0.0;
  double t = x / mlsba__fpm_speed(m, x);
  if (m->per_unit > 0 || m->latency > 0)
    t += m->latency + m->per_unit * x;
  return t;
}

/* Where x / s(x) + c x = T on the segment from point i to i + 1, as the
 * fraction u of the segment, for c > 0: the root where
 *   g(u) = x(u) - (T - c x(u)) s(u)
 *        = c dx ds u^2 + (dx - a0 ds + c dx s_i) u + x_i - a0 s_i,
 * a0 = T - c x_i,
 * turns positive (g <= 0 is t <= T). g(0) <= 0 < g(1), so that is the
 * larger root when the parabola opens upwards, the smaller one when it
 * opens downwards. Roots by the stable form (no cancellation). */
static double segment_crossing_with_transfer(const mlsba_model_t *m, size_t i,
                                             double T) {
  double c = m->per_unit, xi = m->x[i], si = m->s[i];
  double dx = m->x[i + 1] - xi, ds = m->s[i + 1] - si, a0 = T - c * xi;
  double qa = c * dx * ds, qb = dx - a0 * ds + c * dx * si, qc = xi - a0 * si;
  if (qa == 0)
    return qb != 0 ? -qc / qb : 0;
  double disc = qb * qb - 4 * qa * qc;
  double q = -0.5 * (qb + copysign(sqrt(disc > 0 ? disc : 0), qb));
  if (q == 0)
    return 0;
  double r1 = q / qa, r2 = qc / q;
  double lo = r1 < r2 ? r1 : r2, hi = r1 < r2 ? r2 : r1;
  return qa > 0 ? hi : lo;
}

double mlsba__fpm_load_by_time(const mlsba_model_t *m, double T) {
  double x, c = m->per_unit;
  /* A device given any load pays the latency first. */
  if (m->latency > 0)
    T = T > m->latency ? T - m->latency : 0;
  if (!(T > 0)) {
    x = 0;
  } else if (m->tmin[0] > T) {
    /* Every point takes longer than T, and t is monotone on each segment,
     * so only the constant-speed stretch before the first point can
     * finish by T. */
    x = T * m->s[0] / (1 + c * m->s[0]);
  } else {
    /* i = the last point finishing by T: tmin is non-decreasing. */
    size_t lo = 0, hi = m->n - 1;
    while (lo < hi) {
      size_t mid = hi - (hi - lo) / 2;
      if (m->tmin[mid] <= T)
        lo = mid;
      else
        hi = mid - 1;
    }
    size_t i = lo;
    if (i == m->n - 1) {
      /* constant speed beyond the last point */
      x = T * m->s[i] / (1 + c * m->s[i]);
    } else if (c > 0) {
      double u = segment_crossing_with_transfer(m, i, T);
      u = !(u >= 0) ? 0 : u > 1 ? 1 : u;
      x = m->x[i] + u * (m->x[i + 1] - m->x[i]);
    } else {
      /* t(x_i) <= T < t(x_{i+1}): the line x = T s(x) crosses this segment
       * once. Solve for the fraction u of the segment; the denominator is
       * positive because the crossing goes from below to above. */
      double dx = m->x[i + 1] - m->x[i], ds = m->s[i + 1] - m->s[i];
      double u = (T * m->s[i] - m->x[i]) / (dx - T * ds);
      if (!(u >= 0))
        u = 0;
      else if (u > 1)
        u = 1;
      x = m->x[i] + u * dx;
    }
  }
  if (m->max_load >= 0 && x > (double)m->max_load)
    x = (double)m->max_load;
  /* No load beyond 2^53 units exists; clamping here also keeps a huge T
   * times a speed from reaching the callers as infinity. */
  return x < MLSBA_LOAD_MAX ? x : MLSBA_LOAD_MAX;
}

int64_t mlsba__fpm_cap(const mlsba_model_t *m, int64_t n) {
  return (m->max_load >= 0 && m->max_load < n) ? m->max_load : n;
}

int mlsba__fpm_check_usable(const mlsba_model_t *m, size_t index) {
  if (m == NULL)
    return mlsba__fail(MLSBA_EINVAL, "model %zu is NULL", index);
  if (m->n == 0)
    return mlsba__fail(MLSBA_EINVAL, "model %zu has no points", index);
  return 0;
}

/* Recompute tmin from index j down to 0 after point j was inserted or got a
 * new speed (faster or slower). Stops as soon as a value left of j comes
 * out unchanged: everything further left depends only on it. */
static void update_tmin(mlsba_model_t *m, size_t j) {
  double right = (j + 1 < m->n) ? m->tmin[j + 1] : INFINITY;
  for (size_t k = j + 1; k-- > 0;) {
    double t = m->x[k] / m->s[k] + m->per_unit * m->x[k];
    double v = t < right ? t : right;
    if (k < j && m->tmin[k] == v)
      break;
    m->tmin[k] = v;
    right = v;
  }
}

/* Grow the three arrays to hold at least want points. They share one
 * block (x, then s, then tmin), one allocation instead of three: a
 * platform file of 10^6 devices creates 10^6 models. On failure the model
 * keeps its points; a grown block is simply larger than needed. */
static int reserve(mlsba_model_t *m, size_t want) {
  if (want <= m->cap)
    return 0;
  size_t cap = m->cap ? m->cap * 2 : 8;
  while (cap < want)
    cap *= 2;
  double *block = cap <= SIZE_MAX / (3 * sizeof(double))
                      ? malloc(3 * cap * sizeof(double))
                      : NULL;
  if (block == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "model: cannot grow to %zu points", cap);
  size_t bytes = m->n * sizeof(double);
  if (bytes) {
    memcpy(block, m->x, bytes);
    memcpy(block + cap, m->s, bytes);
    memcpy(block + 2 * cap, m->tmin, bytes);
  }
  free(m->x);
  m->x = block;
  m->s = block + cap;
  m->tmin = block + 2 * cap;
  m->cap = cap;
  return 0;
}

int mlsba_model_create(mlsba_model_t **model) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_create: model is NULL");
  mlsba_model_t *m = calloc(1, sizeof *m);
  if (m == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_model_create: out of memory");
  m->max_load = MLSBA_NO_MAX_LOAD;
  *model = m;
  return 0;
}

int mlsba_model_clone(const mlsba_model_t *model, mlsba_model_t **copy) {
  if (model == NULL || copy == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_clone: %s is NULL",
                       model == NULL ? "model" : "copy");
  mlsba_model_t *m;
  int err = mlsba_model_create(&m);
  if (err)
    return err;
  if ((err = reserve(m, model->n ? model->n : 1)) != 0) {
    mlsba_model_destroy(m);
    return err;
  }
  size_t bytes = model->n * sizeof(double);
  if (bytes) {
    memcpy(m->x, model->x, bytes);
    memcpy(m->s, model->s, bytes);
    memcpy(m->tmin, model->tmin, bytes);
  }
  m->n = model->n;
  m->max_load = model->max_load;
  m->latency = model->latency;
  m->per_unit = model->per_unit;
  *copy = m;
  return 0;
}

void mlsba_model_destroy(mlsba_model_t *model) {
  if (model == NULL)
    return;
  free(model->x); /* the block of x, s and tmin (reserve) */
  free(model);
}

int mlsba_model_set_point(mlsba_model_t *model, double x, double speed) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_set_point: model is NULL");
  /* The bounds of mlsba.h: what keeps every partitioner finite and exact
   * on every model it accepts. !(a <= b) also refuses NaN. */
  if (!(x >= MLSBA_LOAD_MIN && x <= MLSBA_LOAD_MAX))
    return mlsba__fail(MLSBA_EINVAL,
                       "model point: load must be in [%g, 2^53], got %g",
                       MLSBA_LOAD_MIN, x);
  if (!(speed >= MLSBA_SPEED_MIN && speed <= MLSBA_SPEED_MAX))
    return mlsba__fail(MLSBA_EINVAL,
                       "model point at load %g: speed must be in [%g, %g], "
                       "got %g",
                       x, MLSBA_SPEED_MIN, MLSBA_SPEED_MAX, speed);
  return mlsba__fpm_set_point(model, x, speed);
}

int mlsba__fpm_set_point(mlsba_model_t *model, double x, double speed) {
  if (!(x > 0 && x <= MLSBA_LOAD_MAX) || !(speed > 0) || !isfinite(speed))
    return mlsba__fail(MLSBA_ERANGE,
                       "model point at load %g: speed %g is out of range", x,
                       speed);
  size_t j = lower_bound(model, x);
  if (j < model->n && model->x[j] == x) {
    model->s[j] = speed;
    update_tmin(model, j);
    return 0;
  }
  int err = reserve(model, model->n + 1);
  if (err)
    return err;
  size_t tail = (model->n - j) * sizeof(double);
  memmove(model->x + j + 1, model->x + j, tail);
  memmove(model->s + j + 1, model->s + j, tail);
  memmove(model->tmin + j + 1, model->tmin + j, tail);
  model->x[j] = x;
  model->s[j] = speed;
  model->n++;
  update_tmin(model, j);
  return 0;
}

int mlsba_model_set_transfer(mlsba_model_t *model, double latency,
                             double per_unit) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_set_transfer: model is NULL");
  /* Within the bounds, a time stays far from overflow (see mlsba.h). */
  if (!(latency >= 0 && latency <= 1e30) ||
      !(per_unit >= 0 && per_unit <= 1e30))
    return mlsba__fail(MLSBA_EINVAL,
                       "model transfer: latency and per_unit must be in [0, "
                       "1e30] seconds, got %g and %g",
                       latency, per_unit);
  model->latency = latency;
  model->per_unit = per_unit;
  if (model->n > 0) { /* every time changed: tmin from the right end */
    for (size_t k = model->n; k-- > 0;) {
      double t = model->x[k] / model->s[k] + per_unit * model->x[k];
      double right = k + 1 < model->n ? model->tmin[k + 1] : INFINITY;
      model->tmin[k] = t < right ? t : right;
    }
  }
  return 0;
}

int mlsba_model_get_transfer(const mlsba_model_t *model, double *latency,
                             double *per_unit) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_get_transfer: model is NULL");
  if (latency)
    *latency = model->latency;
  if (per_unit)
    *per_unit = model->per_unit;
  return 0;
}

int mlsba_model_clear(mlsba_model_t *model) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_clear: model is NULL");
  model->n = 0;
  return 0;
}

int mlsba_model_set_max_load(mlsba_model_t *model, int64_t max_load) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_set_max_load: model is NULL");
  if ((max_load < 0 && max_load != MLSBA_NO_MAX_LOAD) ||
      max_load > (int64_t)MLSBA_LOAD_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "max_load must be in [0, 2^53] or MLSBA_NO_MAX_LOAD, "
                       "got %lld",
                       (long long)max_load);
  model->max_load = max_load;
  return 0;
}

int64_t mlsba_model_max_load(const mlsba_model_t *model) {
  return model ? model->max_load : MLSBA_NO_MAX_LOAD;
}

size_t mlsba_model_num_points(const mlsba_model_t *model) {
  return model ? model->n : 0;
}

int mlsba_model_get_point(const mlsba_model_t *model, size_t i, double *x,
                          double *speed) {
  if (model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_get_point: model is NULL");
  if (i >= model->n)
    return mlsba__fail(MLSBA_ERANGE,
                       "model point %zu requested, the model has %zu", i,
                       model->n);
  if (x)
    *x = model->x[i];
  if (speed)
    *speed = model->s[i];
  return 0;
}

/* Common checks of the evaluation calls. */
static int check_eval(const mlsba_model_t *model, double arg, const void *out,
                      const char *fn, const char *argname) {
  if (model == NULL || out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: %s is NULL", fn,
                       model == NULL ? "model" : "output");
  if (model->n == 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the model has no points", fn);
  if (!isfinite(arg) || arg < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: %s must be finite and >= 0, got %g",
                       fn, argname, arg);
  return 0;
}

int mlsba_model_speed(const mlsba_model_t *model, double x, double *speed) {
  int err = check_eval(model, x, speed, "mlsba_model_speed", "load");
  if (err)
    return err;
  *speed = mlsba__fpm_speed(model, x);
  return 0;
}

int mlsba_model_time(const mlsba_model_t *model, double x, double *time) {
  int err = check_eval(model, x, time, "mlsba_model_time", "load");
  if (err)
    return err;
  *time = mlsba__fpm_time(model, x);
  return 0;
}

int mlsba_model_load_by_time(const mlsba_model_t *model, double time,
                             double *load) {
  int err = check_eval(model, time, load, "mlsba_model_load_by_time", "time");
  if (err)
    return err;
  *load = mlsba__fpm_load_by_time(model, time);
  return 0;
}
