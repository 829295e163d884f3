/* The platform object: devices, their processing groups, and what is
 * known of each device. Read-only once built (platform_json.c parses and
 * saves it; discover.c builds the "auto" one). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "platform.h"

struct mlsba__strings {
  mlsba__strings_t *next; /* the blocks filled before */
  size_t used, cap;
  char text[];
};

char *mlsba__platform_strdup(mlsba_platform_t *pl, const char *s) {
  size_t len = strlen(s) + 1;
  mlsba__strings_t *b = pl->strings;
  if (b == NULL || b->cap - b->used < len) {
    size_t cap = len > 65536 ? len : 65536;
    if ((b = malloc(sizeof *b + cap)) == NULL)
      return NULL;
    b->next = pl->strings;
    b->used = 0;
    b->cap = cap;
    pl->strings = b;
  }
  char *copy = memcpy(b->text + b->used, s, len);
  b->used += len;
  return copy;
}

void mlsba_platform_destroy(mlsba_platform_t *pl) {
  if (pl == NULL)
    return;
  for (size_t i = 0; pl->dev && i < pl->ndev; i++) {
    if (pl->strings == NULL) {
      free(pl->dev[i].name);
      free(pl->dev[i].kind);
    }
    free(pl->dev[i].model_name);
    free(pl->dev[i].driver);
    if (pl->dev[i].backend)
      pl->dev[i].backend->free(pl->dev[i].config);
    mlsba_model_destroy(pl->dev[i].model);
  }
  while (pl->strings) {
    mlsba__strings_t *b = pl->strings;
    pl->strings = b->next;
    free(b);
  }
  free(pl->dev);
  free(pl->name);
  free(pl->group_start);
  free(pl->group_dev);
  free(pl);
}

const char *mlsba_platform_name(const mlsba_platform_t *pl) {
  return pl ? pl->name : NULL;
}

size_t mlsba_platform_num_devices(const mlsba_platform_t *pl) {
  return pl ? pl->ndev : 0;
}

const char *mlsba_platform_device_name(const mlsba_platform_t *pl, size_t i) {
  return pl && i < pl->ndev ? pl->dev[i].name : NULL;
}

mlsba_device_type_t mlsba_platform_device_type(const mlsba_platform_t *pl,
                                               size_t i) {
  return pl && i < pl->ndev ? pl->dev[i].backend->type : MLSBA_DEVICE_SIM;
}

const mlsba_model_t *mlsba_platform_device_model(const mlsba_platform_t *pl,
                                                 size_t i) {
  return pl && i < pl->ndev ? pl->dev[i].model : NULL;
}

size_t mlsba_platform_num_groups(const mlsba_platform_t *pl) {
  return pl ? pl->ngroups : 0;
}

size_t mlsba_platform_group_size(const mlsba_platform_t *pl, size_t g) {
  return pl && g < pl->ngroups ? pl->group_start[g + 1] - pl->group_start[g]
                               : 0;
}

size_t mlsba_platform_group_device(const mlsba_platform_t *pl, size_t g,
                                   size_t k) {
  if (k >= mlsba_platform_group_size(pl, g)) /* also NULL, g out of range */
    return SIZE_MAX;
  return pl->group_dev[pl->group_start[g] + k];
}

int mlsba_platform_grouped_models(const mlsba_platform_t *pl,
                                  const mlsba_model_t *models[],
                                  size_t group_size[]) {
  if (pl == NULL || models == NULL || group_size == NULL)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_platform_grouped_models: NULL argument");
  for (size_t g = 0; g < pl->ngroups; g++)
    group_size[g] = mlsba_platform_group_size(pl, g);
  for (size_t k = 0; k < pl->ndev; k++) {
    const mlsba__platform_device_t *d = &pl->dev[pl->group_dev[k]];
    if (d->model == NULL)
      return mlsba__fail(MLSBA_EINVAL,
                         "device \"%s\" is a %s device: its model is only "
                         "known once it is measured",
                         d->name, d->backend->name);
    models[k] = d->model;
  }
  return 0;
}

int mlsba__platform_alloc(const char *name, size_t p, size_t q,
                          mlsba_platform_t **platform) {
  mlsba_platform_t *pl = calloc(1, sizeof *pl);
  if (pl) {
    pl->name = strdup(name);
    pl->dev = calloc(p ? p : 1, sizeof *pl->dev);
    pl->group_start = calloc(q + 1, sizeof *pl->group_start);
    pl->group_dev = calloc(p ? p : 1, sizeof *pl->group_dev);
  }
  if (!pl || !pl->name || !pl->dev || !pl->group_start || !pl->group_dev) {
    mlsba_platform_destroy(pl);
    return mlsba__fail(MLSBA_ENOMEM, "platform: out of memory");
  }
  *platform = pl;
  return 0;
}

int mlsba_platform_columns_of(const mlsba_platform_t *pl, int64_t *m,
                              int64_t *k) {
  if (pl == NULL || pl->columns_m < 1)
    return 0;
  if (m)
    *m = pl->columns_m;
  if (k)
    *k = pl->columns_k;
  return 1;
}

int mlsba_platform_device_link(const mlsba_platform_t *pl, size_t i,
                               mlsba_link_t *link) {
  if (pl == NULL || link == NULL || i >= pl->ndev)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_platform_device_link: no device %zu", i);
  *link = pl->dev[i].link;
  return 0;
}

int mlsba_platform_set_device_link(mlsba_platform_t *pl, size_t i,
                                   const mlsba_link_t *link) {
  if (pl == NULL || link == NULL || i >= pl->ndev)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_platform_set_device_link: no device %zu", i);
  if (!(link->latency >= 0) || link->latency > 1e30 ||
      !(link->bandwidth >= 0) || link->bandwidth > 1e30)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_platform_set_device_link: latency %g and "
                       "bandwidth %g must be in [0, 1e30]",
                       link->latency, link->bandwidth);
  pl->dev[i].link = *link;
  return 0;
}

int mlsba_platform_network(const mlsba_platform_t *pl, mlsba_link_t *link) {
  if (pl == NULL || link == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_platform_network: %s is NULL",
                       pl == NULL ? "platform" : "link");
  *link = pl->network;
  return 0;
}

int mlsba_platform_memory(const mlsba_platform_t *pl, mlsba_link_t *link) {
  if (pl == NULL || link == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_platform_memory: %s is NULL",
                       pl == NULL ? "platform" : "link");
  *link = pl->memory;
  return 0;
}

int mlsba_link_transfer(const mlsba_link_t *link, double unit_bytes,
                        double *latency, double *per_unit) {
  if (link == NULL || latency == NULL || per_unit == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_link_transfer: an argument is "
                                     "NULL");
  if (!(unit_bytes >= 0) || unit_bytes > 1e30)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_link_transfer: unit_bytes must "
                       "be in [0, 1e30], got %g",
                       unit_bytes);
  int none = !(link->bandwidth > 0);
  *latency = none ? 0 : link->latency;
  *per_unit = none ? 0 : unit_bytes / link->bandwidth;
  return 0;
}

int mlsba_platform_device_info(const mlsba_platform_t *pl, size_t i,
                               mlsba_device_info_t *info) {
  if (pl == NULL || info == NULL || i >= pl->ndev)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_platform_device_info: no device %zu", i);
  const mlsba__platform_device_t *d = &pl->dev[i];
  info->model = d->model_name ? d->model_name : "";
  info->driver = d->driver ? d->driver : "";
  info->kind = d->kind ? d->kind : "";
  info->compute_units = d->compute_units;
  info->memory_bytes = d->memory_bytes;
  info->core = info->cl_platform = info->cl_device = -1;
  if (d->backend)
    d->backend->describe(d->config, info);
  return 0;
}

int mlsba__platform_core(const mlsba_platform_t *pl, size_t i) {
  mlsba_device_info_t info;
  return mlsba_platform_device_info(pl, i, &info) == 0 ? info.core : -1;
}
