/* Functional performance model, internal view.
 *
 * The public API (mlsba_model_*) validates its arguments; the partitioners
 * call the mlsba__fpm_* functions below on models they have already
 * checked, in their inner loops, without re-validating. */
#ifndef MLSBA_PARTITION_FPM_H
#define MLSBA_PARTITION_FPM_H

#include "mlsba.h"

struct mlsba_model {
  size_t n;   /* points in use */
  size_t cap; /* allocated points */
  double *x;  /* loads, strictly increasing, > 0 */
  double *s;  /* speeds at x, > 0 */
  /* tmin[j] = min over i >= j of x[i] / s[i]. Non-decreasing in j, so the
   * last point finishing by a time T is found by binary search even when a
   * measured model breaks the single-crossing shape (see load_by_time).
   * With a transfer, the times are x[i] / s[i] + per_unit x[i]. */
  double *tmin;
  /* The transfer added to t(x) for x > 0 (mlsba_model_set_transfer). */
  double latency, per_unit;
  int64_t max_load; /* MLSBA_NO_MAX_LOAD or >= 0 */
};

/* mlsba_model_set_point() without the bounds of mlsba.h, for the group
 * models the partitioners build: a group of k devices can be up to k times
 * faster than MLSBA_SPEED_MAX. x and speed must be finite and > 0. */
int mlsba__fpm_set_point(mlsba_model_t *m, double x, double speed);
/* s(x) of a model with at least one point. */
double mlsba__fpm_speed(const mlsba_model_t *m, double x);
/* t(x) = x / s(x) plus the transfer; t(0) = 0. */
double mlsba__fpm_time(const mlsba_model_t *m, double x);
/* max { x in [0, max_load] : t(x) <= T } for T >= 0. */
double mlsba__fpm_load_by_time(const mlsba_model_t *m, double T);
/* The most units the device may take out of n: min(max_load, n). */
int64_t mlsba__fpm_cap(const mlsba_model_t *m, int64_t n);
/* Check that a model can be used by a partitioner; index names it in the
 * error message. */
int mlsba__fpm_check_usable(const mlsba_model_t *m, size_t index);

#endif
