/* Group performance model psi_g(x, beta) of seed 002 §IV.B: the speed of a
 * processing group as a function of its load, where every point carries
 * the distribution beta over the group's devices that produced it. */
#ifndef MLSBA_PARTITION_GMODEL_H
#define MLSBA_PARTITION_GMODEL_H

#include "bisect.h"
#include "mlsba.h"

typedef struct mlsba__gmodel {
  const mlsba_model_t *const *dev; /* the group's device models */
  size_t k;                        /* number of devices */
  int64_t cap;                     /* units the group can hold (<= n) */
  /* What the partitioners read. For a single-device group, the device
   * model itself (Phase 1, step 1); otherwise the points built so far. */
  const mlsba_model_t *model;
  mlsba_model_t *built;        /* multi-device groups: the partial model */
  int64_t *xs;                 /* integer loads of the built points, sorted */
  int64_t *beta;               /* k loads per built point, in the order of xs */
  double *time;                /* group time at each built point */
  size_t n, room;              /* built points, allocated points */
  int64_t *scratch_beta;       /* k loads for Procedure 1 */
  mlsba_partition_opts_t opts; /* how Procedure 1 runs SLBA */
  /* Run SLBA afresh for every point, as MLFBA2 is defined, rather than
   * from neighbouring points. */
  int plain_slba;
  mlsba__bisect_t ws; /* SLBA workspace for k devices, reused */
} mlsba__gmodel_t;

/* A group over k device models (already checked usable), for a problem
 * of n units; Procedure 1 runs SLBA with the line search of opts. */
int mlsba__gmodel_init(mlsba__gmodel_t *g, const mlsba_model_t *const *dev,
                       size_t k, int64_t n, const mlsba_partition_opts_t *opts);
void mlsba__gmodel_free(mlsba__gmodel_t *g);

/* Index of the built point at exactly x, or -1. */
long mlsba__gmodel_find(const mlsba__gmodel_t *g, int64_t x);

/* Procedure 1: the group point at integer x (1 <= x <= cap) from SLBA over
 * the device models; the group speed is x / (largest device time). No-op
 * when the point exists. */
int mlsba__gmodel_insert_integer_point(mlsba__gmodel_t *g, int64_t x);

/* Procedure 2: make floor(t) and ceil(t) exact points (Procedure 1 for
 * each that is missing; 0 needs no point). */
int mlsba__gmodel_insert_real_point(mlsba__gmodel_t *g, double t);

/* Exact group time at integer x (0 <= x <= cap), building the point with
 * Procedure 1 if needed. For a single-device group, the device time. */
int mlsba__gmodel_time(mlsba__gmodel_t *g, int64_t x, double *t);

/* The distribution over the group's devices at integer x, into beta[k]:
 * from the exact point (built on demand), x itself for a single device,
 * zeros for x = 0. */
int mlsba__gmodel_beta(mlsba__gmodel_t *g, int64_t x, int64_t *beta);

/* Points of the group model: those built, or for a single-device group the
 * device model's points (which the group model is). */
size_t mlsba__gmodel_points(const mlsba__gmodel_t *g);

#endif
