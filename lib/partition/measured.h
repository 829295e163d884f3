/* What was measured of a device (by the balancing routine,
 * lib/balance) or of a node (by the head of the one-dimensional INPA,
 * divide.h): points (load, mean speed) with the runs behind each and
 * their spread, from which the model is rebuilt after every run; the
 * points forgotten when a run says the machine changed; and the pooling
 * of devices of one kind (the same hardware), whose runs count for all of
 * them while they agree. Pure: no clock, no I/O. */
#ifndef MLSBA_PARTITION_MEASURED_H
#define MLSBA_PARTITION_MEASURED_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* Points kept per device; the routine stops long before. */
#define MLSBA__MAX_POINTS 64

typedef struct {
  double x[MLSBA__MAX_POINTS], speed[MLSBA__MAX_POINTS];
  double m2[MLSBA__MAX_POINTS]; /* sum of squared deviations (Welford) */
  unsigned count[MLSBA__MAX_POINTS];
  size_t n;
} mlsba__measured_t;

/* Adds a run of load units in time seconds. A run within merge (relative)
 * of the nearest point joins it: its speed becomes the mean of all the
 * runs behind it, at the newest load. */
void mlsba__measured_add(mlsba__measured_t *m, int64_t load, double time,
                         double merge);

/* The point nearest x within merge * x, or -1. */
long mlsba__measured_find(const mlsba__measured_t *m, double x, double merge);

/* Whether the point at load is known well: two runs or more, and the
 * standard error of their mean speed within tol of it. */
int mlsba__measured_known_well(const mlsba__measured_t *m, int64_t load,
                               double merge, double tol);

/* The relative standard deviation of single runs, from the points with
 * two runs or more (0 without any). */
double mlsba__measured_noise(const mlsba__measured_t *m);

/* The model through the points. */
int mlsba__measured_to_model(const mlsba__measured_t *m, mlsba_model_t *model);

/* A run of load units in time seconds checked against the model built
 * from what was measured before (linear between its points, constant
 * beyond them, as the partitioners see it): when the model's time at load
 * is further than tol (relative) from it, the machine changed (another
 * program took the core, a node slowed down or came back), every point is
 * stale and all are forgotten, so that only what is measured from now on
 * counts; returns 1 then. 0 when the run agrees, or when the model has no
 * point to contradict. pred (may be NULL) receives the model's time (0
 * without one). The run itself is not added: mlsba__measured_add. */
int mlsba__measured_forget_if_stale(mlsba__measured_t *m,
                                    const mlsba_model_t *model, int64_t load,
                                    double time, double tol, double *pred);

/* Pools the measurements of n devices of one kind into *pool, and says in
 * alike[i] whether device i's runs agree with the others' (then *pool is
 * its model's data) or not (its own are); on entry alike[i] says what it
 * was at the last pooling (1 the first time). Every point of a device is
 * compared with the others' model at its load, and the relative
 * differences are combined, weighted by their inverse variances: the
 * device stands apart when they come to more than three standard errors
 * (two for one that stood apart last time), the noise taken from all the
 * kind's repeated runs (eps until some point has two, at least eps / 10).
 * Two runs at least: one run cannot tell a different device from a
 * spike. *pool holds the runs of the alike devices only. 0, or
 * MLSBA_ENOMEM. */
int mlsba__measured_pool(const mlsba__measured_t *const *members, size_t n,
                         double merge, double eps, mlsba__measured_t *pool,
                         unsigned char *alike);

#endif
