/* A simulated device: its speed profile gives the time of a load, in
 * virtual seconds (nothing runs, nothing sleeps); optional noise multiplies
 * each time by 1 + noise * g, g standard normal from a generator seeded by
 * the platform file, so the same file gives the same run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../partition/fpm.h"
#include "../backend.h"

/* What the platform file says of a sim device beyond its speed profile. */
typedef struct {
  double noise;  /* relative standard deviation of timings */
  uint64_t seed; /* noise generator seed */
  /* Experiments: the fail_at-th share fails; from the slow_at-th on, times
   * are slow_factor times longer (0: never), up to the slow_until-th,
   * from which they are as before (0: the slowdown never ends). */
  int64_t fail_at, slow_at, slow_until;
  double slow_factor;
  size_t *contends; /* devices it slows while it runs */
  size_t ncontends;
  double contention; /* they take 1 + contention times as long */
} sim_config_t;

/* An open sim device: the platform's model and config (not owned) and
 * what changes as it runs. */
typedef struct {
  const mlsba_model_t *model;
  const sim_config_t *config;
  int64_t shares; /* started so far, for fail_at and slow_at */
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
  (void)off;
  (void)t0;
  sim_t *s = d->state;
  const sim_config_t *c = s->config;
  s->last = 0;
  if (n == 0)
    return 0;
  s->shares++;
  if (s->shares == c->fail_at)
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: simulated device failure (fail_at = %lld)", d->name,
                       (long long)c->fail_at);
  double t = mlsba__fpm_time(s->model, (double)n);
  if (c->slow_at > 0 && s->shares >= c->slow_at &&
      (c->slow_until == 0 || s->shares < c->slow_until))
    t *= c->slow_factor;
  /* Its share crosses its host link first: the speed profile is compute. */
  if (d->link.bandwidth > 0 && w->unit_bytes > 0)
    t += d->link.latency + (double)n * w->unit_bytes / d->link.bandwidth;
  if (c->noise > 0 && n > 0) {
    double f = 1 + c->noise * normal(s);
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
static double contended_time(double t, double T, double contention) {
  double f = 1 + contention;
  return t * f <= T ? t * f : T + (t - T / f);
}

/* While a sim device with contends_with runs, the devices it names compute
 * 1 + contention times slower (a device without one slows none). */
static void sim_contend(const mlsba__device_t *d, size_t self,
                        const int64_t *load, double *time) {
  const sim_config_t *c = ((const sim_t *)d->state)->config;
  if (load[self] == 0)
    return;
  double T = time[self];
  for (size_t k = 0; k < c->ncontends; k++) {
    double *t = &time[c->contends[k]];
    if (load[c->contends[k]] > 0)
      *t = contended_time(*t, T, c->contention);
  }
}

static const mlsba__device_ops_t sim_ops = {
    .backend = "sim",
    .max_load = sim_max_load,
    .start = sim_start,
    .finish = sim_finish,
    .destroy = sim_destroy,
    .ident = sim_ident,
    .contend = sim_contend,
};

static int sim_open(const char *name, const void *config,
                    const mlsba_model_t *model, mlsba__device_t *d) {
  const sim_config_t *c = config;
  sim_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", name);
  s->model = model;
  s->config = c; /* its slow_factor is in (0, 1e6]: sim_parse checks */
  s->state = c->seed;
  d->ops = &sim_ops;
  d->name = name;
  d->state = s;
  /* It computes on the cores of the devices it slows. */
  d->shares_cores = c->ncontends > 0;
  return 0;
}

/* The path of point k, set only when it is wrong: formatting it for every
 * point was a tenth of the parse of 10^5 devices. */
static void at_point(mlsba__fields_t *c, size_t k) {
  mlsba__fields_path(c, "devices[%zu].speed[%zu]", c->index, k);
}

static int parse_speed(mlsba__fields_t *c, json_t *speed, mlsba_model_t *m) {
  if (!json_is_array(speed) || json_array_size(speed) == 0) {
    mlsba__fields_path(c, "devices[%zu].speed", c->index);
    return mlsba__fields_bad(
        c, "speed must be a non-empty array of [load, speed] points");
  }
  size_t k;
  json_t *pt;
  double prev = 0;
  json_array_foreach(speed, k, pt) {
    if (!json_is_array(pt) || json_array_size(pt) != 2 ||
        !json_is_number(json_array_get(pt, 0)) ||
        !json_is_number(json_array_get(pt, 1))) {
      at_point(c, k);
      return mlsba__fields_bad(c, "a point must be [load, speed], two numbers");
    }
    double x = json_number_value(json_array_get(pt, 0));
    double s = json_number_value(json_array_get(pt, 1));
    if (!(x > 0) || !isfinite(x)) {
      at_point(c, k);
      return mlsba__fields_bad(c, "load must be > 0, got %g", x);
    }
    if (!(s > 0) || !isfinite(s)) {
      at_point(c, k);
      return mlsba__fields_bad(c, "speed must be > 0, got %g", s);
    }
    if (k > 0 && !(x > prev)) {
      at_point(c, k);
      return mlsba__fields_bad(c, "loads must increase, got %g after %g", x,
                               prev);
    }
    if (mlsba_model_set_point(m, x, s) != 0) {
      at_point(c, k);
      return mlsba__fields_bad(c, "%s", mlsba_last_error()); /* the bounds */
    }
    prev = x;
  }
  return 0;
}

/* An optional number field; *out keeps its default when absent. */
static int get_number(mlsba__fields_t *c, json_t *obj, const char *key,
                      double *out) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL)
    return 0;
  if (!json_is_number(v))
    return mlsba__fields_bad(c, "%s must be a number, got %s", key,
                             mlsba__json_kind(v));
  *out = json_number_value(v);
  return 0;
}

static int sim_parse(mlsba__fields_t *c, json_t *d, void **config,
                     mlsba_model_t **model) {
  sim_config_t *cfg = calloc(1, sizeof *cfg);
  *config = cfg;
  if (cfg == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  int err = mlsba_model_create(model);
  if (err)
    return err;
  /* The path is the device's (platform_json.c) and stays so unless a
   * point is wrong. */
  if ((err = parse_speed(c, json_object_get(d, "speed"), *model)) != 0)
    return err;
  int64_t max_load = MLSBA_NO_MAX_LOAD, seed = 1;
  if ((err = mlsba__fields_count(c, d, "max_load", &max_load)) != 0 ||
      (err = mlsba__fields_count(c, d, "seed", &seed)) != 0)
    return err;
  if (mlsba_model_set_max_load(*model, max_load) != 0)
    return mlsba__fields_bad(c, "%s", mlsba_last_error()); /* past 2^53 */
  cfg->seed = (uint64_t)seed;
  /* Experiments with faults and slowdowns (README, platform files). */
  if ((err = mlsba__fields_count(c, d, "fail_at", &cfg->fail_at)) != 0 ||
      (err = mlsba__fields_count(c, d, "slow_at", &cfg->slow_at)) != 0 ||
      (err = mlsba__fields_count(c, d, "slow_until", &cfg->slow_until)) != 0)
    return err;
  if (cfg->slow_until > 0 &&
      (cfg->slow_at == 0 || cfg->slow_until <= cfg->slow_at))
    return mlsba__fields_bad(c,
                             "slow_until (%lld) must come after a slow_at "
                             "(%lld): the slowdown ends after it starts",
                             (long long)cfg->slow_until,
                             (long long)cfg->slow_at);
  cfg->slow_factor = 1;
  if ((err = get_number(c, d, "slow_factor", &cfg->slow_factor)) != 0)
    return err;
  if (!(cfg->slow_factor > 0) || !isfinite(cfg->slow_factor) ||
      cfg->slow_factor > 1e6)
    return mlsba__fields_bad(c, "slow_factor must be in (0, 1e6], got %g",
                             cfg->slow_factor);
  cfg->contention = 1;
  if ((err = get_number(c, d, "contention", &cfg->contention)) != 0)
    return err;
  if (!(cfg->contention > 0) || !(cfg->contention <= 1e3))
    return mlsba__fields_bad(c, "contention must be in (0, 1000], got %g",
                             cfg->contention);
  if ((err = get_number(c, d, "noise", &cfg->noise)) != 0)
    return err;
  if (!(cfg->noise >= 0) || !isfinite(cfg->noise) || cfg->noise > 1)
    return mlsba__fields_bad(c, "noise must be in [0, 1], got %g", cfg->noise);
  return 0;
}

static void at_contends(mlsba__fields_t *c) {
  mlsba__fields_path(c, "devices[%zu] (%s).contends_with", c->index, c->name);
}

/* "contends_with": other sim devices it slows while it runs (a device that
 * computes on their cores, as pocl does). */
static int sim_link(mlsba__fields_t *c, json_t *d, void *config,
                    const mlsba__peers_t *peers) {
  sim_config_t *cfg = config;
  json_t *list = json_object_get(d, "contends_with");
  if (list == NULL)
    return 0;
  /* The path is set only for an error (one format per device was a
   * visible part of the parse of 10^5 devices). */
  if (!json_is_array(list)) {
    at_contends(c);
    return mlsba__fields_bad(c, "must be an array of device names, got %s",
                             mlsba__json_kind(list));
  }
  cfg->contends = calloc(json_array_size(list) + 1, sizeof *cfg->contends);
  if (cfg->contends == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  size_t k;
  json_t *name;
  json_array_foreach(list, k, name) {
    long o = json_is_string(name)
                 ? peers->find(peers->self, json_string_value(name))
                 : -1;
    if (o < 0) {
      at_contends(c);
      return mlsba__fields_bad(c, "no device named %s",
                               json_is_string(name) ? json_string_value(name)
                                                    : "(not a string)");
    }
    if ((size_t)o == c->index ||
        strcmp(peers->backend(peers->self, (size_t)o), "sim") != 0) {
      at_contends(c);
      return mlsba__fields_bad(c, "\"%s\" must be another sim device",
                               json_string_value(name));
    }
    if (peers->named_again(peers->self, c->index, (size_t)o)) {
      at_contends(c);
      return mlsba__fields_bad(c, "\"%s\" is listed twice",
                               json_string_value(name));
    }
    cfg->contends[cfg->ncontends++] = (size_t)o;
  }
  return 0;
}

static void sim_save(const void *config, const mlsba_model_t *model, json_t *o,
                     const mlsba__peers_t *peers) {
  const sim_config_t *c = config;
  json_t *speed = json_array();
  for (size_t k = 0; k < model->n; k++)
    json_array_append_new(speed, json_pack("[f, f]", model->x[k], model->s[k]));
  json_object_set_new(o, "speed", speed);
  if (model->max_load >= 0)
    json_object_set_new(o, "max_load", json_integer(model->max_load));
  if (c->noise > 0) {
    json_object_set_new(o, "noise", json_real(c->noise));
    json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
  }
  if (c->fail_at > 0)
    json_object_set_new(o, "fail_at", json_integer(c->fail_at));
  if (c->slow_at > 0) {
    json_object_set_new(o, "slow_at", json_integer(c->slow_at));
    json_object_set_new(o, "slow_factor", json_real(c->slow_factor));
    if (c->slow_until > 0)
      json_object_set_new(o, "slow_until", json_integer(c->slow_until));
  }
  if (c->ncontends > 0) {
    json_t *names = json_array();
    for (size_t k = 0; k < c->ncontends; k++)
      json_array_append_new(
          names, json_string(peers->name(peers->self, c->contends[k])));
    json_object_set_new(o, "contends_with", names);
    json_object_set_new(o, "contention", json_real(c->contention));
  }
}

static void sim_describe(const void *config, mlsba_device_info_t *info) {
  (void)config; /* a sim device has no core and no OpenCL indices */
  (void)info;
}

static void sim_free(void *config) {
  sim_config_t *c = config;
  if (c)
    free(c->contends);
  free(c);
}

static const char *const sim_keys[] = {
    "name",          "type",       "speed",   "max_load",   "noise",
    "seed",          "fail_at",    "slow_at", "slow_until", "slow_factor",
    "contends_with", "contention", "kind",    "link",       NULL};

const mlsba__backend_t mlsba__sim_backend = {
    .name = "sim",
    .type = MLSBA_DEVICE_SIM,
    .roles = MLSBA__ROLE_VIRTUAL,
    .keys = sim_keys,
    .parse = sim_parse,
    .link = sim_link,
    .save = sim_save,
    .describe = sim_describe,
    .open = sim_open,
    .free = sim_free,
};
