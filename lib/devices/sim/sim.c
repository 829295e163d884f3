/* A simulated device: its speed profile gives the time of a load, in
 * virtual seconds (nothing runs, nothing sleeps); optional noise multiplies
 * each time by 1 + noise * g, g standard normal from a generator seeded by
 * the platform file, so the same file gives the same run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../partition/fpm.h"
#include "../device.h"

typedef struct {
  const mlsba_model_t *model;
  double noise;
  int64_t shares, fail_at, slow_at; /* experiments: see the platform file */
  double slow_factor;
  uint64_t state; /* splitmix64 */
  double last;    /* virtual time of the last share */
} sim_t;

static double uniform(sim_t *s) {
  uint64_t z = (s->state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) * 0x1p-53; /* in (0, 1) */
}

/* Standard normal by Box-Muller. */
static double normal(sim_t *s) {
  double u = uniform(s), v = uniform(s);
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static int sim_max_load(mlsba__device_t *d, const mlsba_load_t *w,
                        int64_t *max) {
  sim_t *s = d->state;
  *max = mlsba__fpm_cap(s->model, w->units);
  return 0;
}

static int sim_start(mlsba__device_t *d, const mlsba_load_t *w, int64_t off,
                     int64_t n, double t0) {
  (void)w;
  (void)off;
  (void)t0;
  sim_t *s = d->state;
  s->last = 0;
  if (n == 0)
    return 0;
  s->shares++;
  if (s->shares == s->fail_at)
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: simulated device failure (fail_at = %lld)", d->name,
                       (long long)s->fail_at);
  double t = mlsba__fpm_time(s->model, (double)n);
  if (s->slow_at > 0 && s->shares >= s->slow_at)
    t *= s->slow_factor;
  if (s->noise > 0 && n > 0) {
    double f = 1 + s->noise * normal(s);
    t *= f > 0.01 ? f : 0.01; /* a time stays positive */
  }
  s->last = t;
  return 0;
}

static int sim_finish(mlsba__device_t *d, double *seconds) {
  *seconds = ((sim_t *)d->state)->last;
  return 0;
}

static void sim_destroy(mlsba__device_t *d) { free(d->state); }

static void sim_ident(const mlsba__device_t *d, const char *model_name,
                      const char *driver, char *buf, size_t size) {
  (void)d;
  (void)model_name;
  (void)driver;
  snprintf(buf, size, "sim");
}

/* A device that would take t alone beside one that runs for T: t (1 + c)
 * when that ends first, else T plus what is left of its work at full
 * speed. */
double mlsba__sim_contended_time(double t, double T, double contention) {
  double f = 1 + contention;
  return t * f <= T ? t * f : T + (t - T / f);
}

static const mlsba__device_ops_t sim_ops = {
    .backend = "sim",
    .max_load = sim_max_load,
    .start = sim_start,
    .finish = sim_finish,
    .destroy = sim_destroy,
    .ident = sim_ident,
};

int mlsba__sim_device_create(const struct mlsba__pdevice_desc *desc,
                             mlsba__device_t *d) {
  const char *name = desc->name;
  sim_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", name);
  s->model = desc->model;
  s->noise = desc->noise;
  s->state = desc->seed;
  s->fail_at = desc->fail_at;
  s->slow_at = desc->slow_at;
  s->slow_factor = desc->slow_factor > 0 ? desc->slow_factor : 1;
  d->ops = &sim_ops;
  d->name = name;
  d->state = s;
  d->shares_cores = desc->contends;
  return 0;
}
