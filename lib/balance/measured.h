/* What the balancing routine has measured on a device: points (load, mean
 * speed) with the runs behind each and their spread, from which the
 * device's model is rebuilt after every run; and the pooling of devices of
 * one kind (the same hardware), whose runs count for all of them while
 * they agree. */
#ifndef MLSBA_BALANCE_MEASURED_H
#define MLSBA_BALANCE_MEASURED_H

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
