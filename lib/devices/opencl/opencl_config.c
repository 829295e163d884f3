/* What the platform file says of an OpenCL device: its platform and
 * device indices and an optional memory limit. Built with or without
 * OpenCL, so that a platform file reads the same everywhere; opening one
 * needs OpenCL (opencl.c). */
#include <stdlib.h>

#include "../backend.h"

typedef struct {
  int64_t platform, device; /* indices, as clGetPlatformIDs/DeviceIDs list */
  int64_t mem_limit_mb;     /* -1 for none */
} opencl_config_t;

void *mlsba__opencl_config(int64_t platform, int64_t device) {
  opencl_config_t *c = calloc(1, sizeof *c);
  if (c) {
    c->platform = platform;
    c->device = device;
    c->mem_limit_mb = -1;
  }
  return c;
}

static int opencl_open(const char *name, const void *config,
                       const mlsba_model_t *model, mlsba__device_t *d) {
  (void)model;
  const opencl_config_t *c = config;
  /* A build without OpenCL has registry.c's, which says so. */
  return mlsba__opencl_device_create(name, (int)c->platform, (int)c->device,
                                     c->mem_limit_mb, d);
}

static int opencl_parse(mlsba__fields_t *c, json_t *d, void **config,
                        mlsba_model_t **model) {
  (void)model;
  opencl_config_t *cfg = mlsba__opencl_config(0, 0);
  *config = cfg;
  if (cfg == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  int err;
  if ((err = mlsba__fields_count(c, d, "platform", &cfg->platform)) != 0 ||
      (err = mlsba__fields_count(c, d, "device", &cfg->device)) != 0 ||
      (err = mlsba__fields_count(c, d, "mem_limit_mb", &cfg->mem_limit_mb)) !=
          0)
    return err;
  if (cfg->mem_limit_mb == 0)
    return mlsba__fields_bad(c, "mem_limit_mb must be > 0");
  return 0;
}

static void opencl_save(const void *config, const mlsba_model_t *model,
                        json_t *o, const mlsba__peers_t *peers) {
  (void)model;
  (void)peers;
  const opencl_config_t *c = config;
  json_object_set_new(o, "platform", json_integer(c->platform));
  json_object_set_new(o, "device", json_integer(c->device));
  if (c->mem_limit_mb > 0)
    json_object_set_new(o, "mem_limit_mb", json_integer(c->mem_limit_mb));
}

static void opencl_describe(const void *config, mlsba_device_info_t *info) {
  const opencl_config_t *c = config;
  info->cl_platform = (int)c->platform;
  info->cl_device = (int)c->device;
}

static const char *const opencl_keys[] = {
    "name", "type", "platform", "device", "kind", "mem_limit_mb", "link", NULL};

const mlsba__backend_t mlsba__opencl_backend = {
    .name = "opencl",
    .type = MLSBA_DEVICE_OPENCL,
    .roles = MLSBA__ROLE_OWN_MEMORY,
    .keys = opencl_keys,
    .parse = opencl_parse,
    .save = opencl_save,
    .describe = opencl_describe,
    .open = opencl_open,
    .free = free,
};
