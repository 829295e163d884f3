/* Platforms, internal view: what the executor and discovery read and
 * build. */
#ifndef MLSBA_RUNTIME_PLATFORM_H
#define MLSBA_RUNTIME_PLATFORM_H

#include "mlsba.h"

typedef struct {
  char *name;
  mlsba_device_type_t type;
  mlsba_model_t *model; /* sim: the speed profile */
  double noise;         /* sim: relative standard deviation of timings */
  uint64_t seed;        /* sim: noise generator seed */
  int64_t fail_at;      /* sim: this share fails (0: none) */
  int64_t slow_at;      /* sim: from this share on, times x slow_factor */
  double slow_factor;
  size_t *contends; /* sim: devices it slows while it runs */
  size_t ncontends;
  double contention;    /* sim: they take 1 + contention times as long */
  int64_t core;         /* cpu: core index */
  int64_t cl_platform;  /* opencl: platform index */
  int64_t cl_device;    /* opencl: device index within the platform */
  int64_t mem_limit_mb; /* opencl: -1 for none */
  char *kind;           /* devices of one kind are alike (NULL: alone) */
  char *model_name;     /* discovery: what the device reports */
  char *driver;
  unsigned compute_units;
  uint64_t memory_bytes;
} device_t;

struct mlsba_platform {
  char *name;
  device_t *dev;
  size_t ndev;
  size_t ngroups;
  size_t *group_start; /* ngroups + 1 offsets into group_dev */
  size_t *group_dev;   /* device indices, group by group */
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

#endif
