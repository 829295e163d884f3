/* One CPU core: the thread that drives the core's group is pinned to it
 * (by the executor, with hwloc) and calls the load's CPU function on the
 * core's range. */
#include <stdio.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../backend.h"
#include "cpu_blas.h"
#include "cpu_kernels.h"

typedef struct {
  int core;
  double done; /* completion time of the last share */
  double t0;
} cpu_t;

static int cpu_max_load(mlsba__device_t *d, const mlsba_load_t *w,
                        int64_t *max) {
  (void)d;
  *max = w->cpu ? w->units : 0;
  return 0;
}

static int cpu_start(mlsba__device_t *d, const mlsba_load_t *w, int64_t off,
                     int64_t n, double t0) {
  cpu_t *c = d->state;
  c->t0 = t0;
  c->done = t0;
  if (n == 0)
    return 0;
  int rc = w->cpu(w->cpu_user, off, n);
  c->done = mlsba__now();
  if (rc != 0)
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: the CPU function of load %s returned %d for units "
                       "%lld..%lld",
                       d->name, w->name, rc, (long long)(w->first_unit + off),
                       (long long)(w->first_unit + off + n - 1));
  return 0;
}

static int cpu_finish(mlsba__device_t *d, double *seconds) {
  cpu_t *c = d->state;
  *seconds = c->done - c->t0;
  return 0;
}

static void cpu_destroy(mlsba__device_t *d) { free(d->state); }

static void cpu_ident(const mlsba__device_t *d, const char *model_name,
                      const char *driver, char *buf, size_t size) {
  (void)model_name; /* a core is known by its index on this host */
  (void)driver;
  /* and by its kernels: a model measured on others is not this core's */
  char single[64], dbl[64];
  mlsba__cpu_kernel_signature(MLSBA_PRECISION_SINGLE, single, sizeof single);
  mlsba__cpu_kernel_signature(MLSBA_PRECISION_DOUBLE, dbl, sizeof dbl);
  snprintf(buf, size, "cpu core %lld, kernels %s/%s",
           (long long)((cpu_t *)d->state)->core, single, dbl);
}

static const mlsba__device_ops_t cpu_ops = {
    .backend = "cpu",
    .max_load = cpu_max_load,
    .start = cpu_start,
    .finish = cpu_finish,
    .destroy = cpu_destroy,
    .ident = cpu_ident,
};

/* The cores compute with the kernels chosen for this CPU (BLIS, and
 * OpenBLAS where a class chose it), one thread each: what discovery writes
 * as a core's driver. */
void mlsba__cpu_driver(char *buf, size_t size) {
  char kernels[256];
  mlsba__cpu_blas_describe(kernels, sizeof kernels);
  snprintf(buf, size, "%s, 1 thread per core", kernels);
}

/* What the platform file says of a core device. */
typedef struct {
  int64_t core; /* the core's index */
} cpu_config_t;

void *mlsba__cpu_config(int64_t core) {
  cpu_config_t *c = calloc(1, sizeof *c);
  if (c)
    c->core = core;
  return c;
}

static int cpu_open(const char *name, const void *config,
                    const mlsba_model_t *model, mlsba__device_t *d) {
  (void)model;
  /* Pinning is the executor's: it owns the threads. */
  d->ops = &cpu_ops;
  d->name = name;
  cpu_t *c = calloc(1, sizeof *c);
  d->state = c;
  if (c == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", name);
  c->core = (int)((const cpu_config_t *)config)->core;
  /* The kernels are chosen now, never inside a timed run. */
  (void)mlsba__cpu_kernel_context(MLSBA_PRECISION_SINGLE);
  return 0;
}

static int cpu_parse(mlsba__fields_t *c, json_t *d, void **config,
                     mlsba_model_t **model) {
  (void)model;
  if (!json_object_get(d, "core"))
    return mlsba__fields_bad(c, "a cpu device needs \"core\" (the core index)");
  cpu_config_t *cfg = mlsba__cpu_config(0);
  *config = cfg;
  if (cfg == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  return mlsba__fields_count(c, d, "core", &cfg->core);
}

static void cpu_save(const void *config, const mlsba_model_t *model, json_t *o,
                     const mlsba__peers_t *peers) {
  (void)model;
  (void)peers;
  json_object_set_new(o, "core",
                      json_integer(((const cpu_config_t *)config)->core));
}

static void cpu_describe(const void *config, mlsba_device_info_t *info) {
  info->core = (int)((const cpu_config_t *)config)->core;
}

static const char *const cpu_keys[] = {"name", "type", "core",
                                       "kind", "link", NULL};

const mlsba__backend_t mlsba__cpu_backend = {
    .name = "cpu",
    .type = MLSBA_DEVICE_CPU,
    .roles = MLSBA__ROLE_CORE,
    .keys = cpu_keys,
    .default_kind = "cpu", /* the cores of a machine are alike */
    .parse = cpu_parse,
    .save = cpu_save,
    .describe = cpu_describe,
    .open = cpu_open,
    .free = free,
};
