/* Backends as components (hwloc's way): each backend folder describes
 * itself in one mlsba__backend_t, and the rest of the library reaches its
 * facts only through it: the platform file's fields of its devices (read,
 * checked and written back by the backend), what it tells of a device
 * (core, OpenCL indices), and how one is opened. A platform device keeps
 * the backend and its opaque config; the registry (registry.c) lists the
 * backends this build has. */
#ifndef MLSBA_DEVICES_BACKEND_H
#define MLSBA_DEVICES_BACKEND_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "fields.h"
#include "mlsba.h"

/* The other devices of the platform being read or written, for fields
 * that name devices (a sim device's contends_with). */
typedef struct mlsba__peers {
  const void *self; /* the platform reader's or writer's: passed back */
  long (*find)(const void *self, const char *name); /* index, -1 if none */
  const char *(*name)(const void *self, size_t i);
  const char *(*backend)(const void *self, size_t i); /* its backend's name */
  /* Notes that device by names device o; 1 when it had already, in O(1)
   * so that long lists read in linear time. */
  int (*named_again)(const void *self, size_t by, size_t o);
} mlsba__peers_t;

/* The roles of a backend's devices (StarPU's way: the layers above ask
 * what a device can do, never which backend it is). A device may have
 * none (pocl computes on the host's cores but through OpenCL: an
 * accelerator that happens to share the cores, see
 * mlsba__device_t::shares_cores). */
enum {
  /* Computes on one host core, pinned, with the CPU kernels
   * (devices/cpu/cpu_blas.h): it can take a share of any host-side kernel,
   * and the thread that drives its group is pinned to it. */
  MLSBA__ROLE_CORE = 1u << 0,
  /* An accelerator with memory of its own: its share's data moves over a
   * link, and may stay resident from run to run. */
  MLSBA__ROLE_OWN_MEMORY = 1u << 1,
  /* Computes nothing and reports virtual times: a run of such devices
   * needs no thread, clock or pinning. */
  MLSBA__ROLE_VIRTUAL = 1u << 2,
};

typedef struct mlsba__backend {
  const char *name;         /* the platform file's "type" */
  mlsba_device_type_t type; /* the public enum of its devices */
  /* What its devices are (MLSBA__ROLE_*), as the layers above ask it:
   * they ask a role, never the type. */
  unsigned roles;
  /* Every field a device of this backend may have, the generic ones
   * (name, type, kind) included, in the order unknown-field errors list
   * them. */
  const char *const *keys;
  /* The kind of its devices when the file names none (NULL: none). */
  const char *default_kind;
  /* Reads the backend's fields of one device (c->path is the device's)
   * into a new config, and the device's speed profile when the file gives
   * one (*model stays NULL otherwise). On error, what was allocated is in
   * *config and *model, for the caller to free. */
  int (*parse)(mlsba__fields_t *c, json_t *obj, void **config,
               mlsba_model_t **model);
  /* Optional: reads the fields that name other devices, once every device
   * is read. */
  int (*link)(mlsba__fields_t *c, json_t *obj, void *config,
              const mlsba__peers_t *peers);
  /* Writes the backend's fields back, in the file's order. */
  void (*save)(const void *config, const mlsba_model_t *model, json_t *obj,
               const mlsba__peers_t *peers);
  /* Fills what the config says of the device in info (core, cl_platform,
   * cl_device; the caller has set them to -1). */
  void (*describe)(const void *config, mlsba_device_info_t *info);
  /* Opens the device; name and model stay the caller's (the platform's). */
  int (*open)(const char *name, const void *config, const mlsba_model_t *model,
              mlsba__device_t *d);
  void (*free)(void *config);
} mlsba__backend_t;

extern const mlsba__backend_t mlsba__sim_backend;
extern const mlsba__backend_t mlsba__cpu_backend;
extern const mlsba__backend_t mlsba__opencl_backend;

/* The backend whose platform-file type is name; NULL when none is. */
const mlsba__backend_t *mlsba__backend_find(const char *name);

/* Configs of discovered devices (NULL when out of memory). */
void *mlsba__cpu_config(int64_t core);
void *mlsba__opencl_config(int64_t platform, int64_t device);

#endif
