/* Platforms, internal view: what the executor and discovery read and
 * build. */
#ifndef MLSBA_PLATFORM_PLATFORM_H
#define MLSBA_PLATFORM_PLATFORM_H

#include "../devices/backend.h"
#include "mlsba.h"

/* A platform device, as the platform describes it (pl->dev[j]); opened by
 * an executor it becomes an mlsba__device_t (ex->opened[j],
 * devices/device.h). What every device has. What only its backend knows
 * (a core's index, OpenCL indices, a sim device's noise and faults) is in
 * config, which the backend reads, writes back and opens
 * (devices/backend.h). */
typedef struct {
  char *name;
  const mlsba__backend_t *backend; /* its type: backend->type */
  void *config;                    /* the backend's */
  mlsba_model_t *model; /* its speed profile when known (sim: given) */
  char *kind;           /* devices of one kind are alike (NULL: alone) */
  char *model_name;     /* discovery: what the device reports */
  char *driver;
  unsigned compute_units;
  uint64_t memory_bytes;
  mlsba_link_t link; /* its host link ("link"; bandwidth 0: none given) */
} mlsba__platform_device_t;

/* A block of device names and kinds (platform files): one allocation for
 * thousands of strings instead of two per device. */
typedef struct mlsba__strings mlsba__strings_t;

struct mlsba_platform {
  char *name;
  mlsba__platform_device_t *dev;
  /* When set, every device's name and kind is in these blocks, freed with
   * them (mlsba__platform_strdup); else each is its own allocation. */
  mlsba__strings_t *strings;
  size_t ndev;
  size_t ngroups;
  size_t *group_start; /* ngroups + 1 offsets into group_dev */
  size_t *group_dev;   /* device indices, group by group */
  /* "columns_of": the product whose columns simulated speeds count, m x k
   * (0 when the file does not say). */
  int64_t columns_m, columns_k;
  mlsba_link_t network; /* the rank's link ("network"; bandwidth 0: none) */
  /* The rank's host memory ("memory": a copy of b bytes within it takes
   * latency + b / bandwidth; bandwidth 0: none given). */
  mlsba_link_t memory;
};

/* Whether the k-th entry of group_dev (a device of group g) drives the
 * group's other devices: the first device of a group that has more than
 * one. In the devoted mode (SLBA's way) it computes nothing. */
static inline int mlsba__platform_is_driver(const mlsba_platform_t *pl,
                                            size_t g, size_t k) {
  return pl->group_start[g + 1] - pl->group_start[g] > 1 &&
         k == pl->group_start[g];
}

/* An empty platform with room for p devices and q groups, to be filled
 * by discovery; the caller sets ndev, ngroups, group_start and group_dev. */
int mlsba__platform_alloc(const char *name, size_t p, size_t q,
                          mlsba_platform_t **pl);

/* A copy of s kept in pl->strings, or NULL when out of memory. */
char *mlsba__platform_strdup(mlsba_platform_t *pl, const char *s);

/* The roles of device i (MLSBA__ROLE_*, devices/backend.h): what the
 * layers above ask of a device instead of its type. */
static inline unsigned mlsba__platform_device_roles(const mlsba_platform_t *pl,
                                                    size_t i) {
  return pl->dev[i].backend->roles;
}

/* The core of device i when it is a cpu device, else -1. */
int mlsba__platform_core(const mlsba_platform_t *pl, size_t i);

/* Discovery (the "auto" platform) for the process of rank local_rank among
 * local_size processes of this host, which share out its accelerators:
 * the MPI layer passes the ranks of its shared-memory communicator;
 * mlsba_platform_discover() the launcher's environment. */
int mlsba__platform_discover_local(int local_rank, int local_size,
                                   mlsba_platform_t **platform);
/* The same with the cores only: no OpenCL device, and OpenCL not asked
 * (what a caller that gives accelerators no work needs; enumerating them
 * through pocl costs a tenth of a second). */
int mlsba__platform_discover_cores(mlsba_platform_t **platform);

#endif
