/* Running and measuring: one run of the load, outliers re-measured
 * against the models, a device that fails dropped, and the metrics of a
 * run (makespan, spread, balanced at both levels). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "balance.h"

/* (max - min) / max of the times of the loaded devices among idx[0..n-1]
 * (or of all n when idx is NULL); 0 when fewer than two. A device held at
 * what it can hold (cap, may be NULL) finishes early by necessity, as it
 * does in the optimum: it counts for the max, not for the min. */
double mlsba__bal_spread(const double *time, const int64_t *load,
                         const int64_t *cap, const size_t *idx, size_t n) {
  double lo = INFINITY, hi = 0;
  for (size_t k = 0; k < n; k++) {
    size_t j = idx ? idx[k] : k;
    if (load[j] == 0)
      continue;
    if (!cap || load[j] < cap[j])
      lo = time[j] < lo ? time[j] : lo;
    hi = time[j] > hi ? time[j] : hi;
  }
  return hi > 0 && lo < INFINITY ? (hi - lo) / hi : 0;
}

/* Balanced at both levels: the groups' times (their slowest device) agree
 * within eps, and so do the devices inside every group; and over all
 * devices too, since the result's imbalance is taken over all of them and
 * both levels within eps can still leave up to 2 eps between a device of
 * one group and the slowest of another (7.4% at eps 5% on the noisy sim
 * desktop). With flat grouping every device is a group of its own: one
 * level. */
int mlsba__bal_balanced(const mlsba_platform_t *pl, int flat,
                        const int64_t *load, const int64_t *cap,
                        const double *time, double eps, double *group_time,
                        int64_t *group_load, int64_t *group_cap) {
  if (flat)
    return mlsba__bal_spread(time, load, cap, NULL, pl->ndev) <= eps;
  for (size_t g = 0; g < pl->ngroups; g++) {
    const size_t *idx = pl->group_dev + pl->group_start[g];
    size_t n = pl->group_start[g + 1] - pl->group_start[g];
    if (mlsba__bal_spread(time, load, cap, idx, n) > eps)
      return 0;
    group_time[g] = 0;
    group_load[g] = 0;
    group_cap[g] = 0;
    for (size_t k = 0; k < n; k++) {
      group_load[g] += load[idx[k]];
      group_cap[g] += cap[idx[k]];
      if (load[idx[k]] > 0 && time[idx[k]] > group_time[g])
        group_time[g] = time[idx[k]];
    }
  }
  return mlsba__bal_spread(group_time, group_load, group_cap, NULL,
                           pl->ngroups) <= eps &&
         mlsba__bal_spread(time, load, cap, NULL, pl->ndev) <= eps;
}

/* The largest of the p times: a run's makespan. */
double mlsba__bal_largest(const double *time, size_t p) {
  double worst = 0;
  for (size_t j = 0; j < p; j++)
    worst = time[j] > worst ? time[j] : worst;
  return worst;
}

/* One run; a device failure under MLSBA_ON_FAULT_CONTINUE is reported
 * through *failed (the device) with the error. */
static int run_once(mlsba__bal_ctx_t *C, const int64_t *load, double *time,
                    long *failed) {
  C->iter.runs++;
  return mlsba_executor_run(C->ex, C->w, load, C->o.drive, time, failed);
}

/* Runs the loads, re-measuring outliers against the models; returns the
 * number of repeated runs in *again. */
static int measure(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                   const int64_t *load, double *time, unsigned *again,
                   long *failed) {
  int err = run_once(C, load, time, failed);
  *again = 0;
  if (err)
    return err;
  int outliers = 0;
  double *pred = C->scratch.time, *second = C->scratch.time + C->p;
  for (size_t j = 0; j < C->p; j++) {
    pred[j] = 0;
    if (load[j] == 0 || mlsba_model_num_points(r->models[j]) == 0)
      continue;
    mlsba_model_time(r->models[j], (double)load[j], &pred[j]);
    outliers |= fabs(time[j] / pred[j] - 1) > C->o.outlier;
  }
  if (!outliers)
    return 0;
  *again = 1;
  if ((err = run_once(C, load, second, failed)) != 0)
    return err;
  for (size_t j = 0; j < C->p; j++) {
    if (pred[j] == 0)
      continue;
    if (fabs(second[j] / time[j] - 1) <= C->o.outlier)
      time[j] = 0.5 * (time[j] + second[j]); /* confirmed: a real change */
    else if (fabs(second[j] / pred[j] - 1) < fabs(time[j] / pred[j] - 1))
      time[j] = second[j]; /* the first was a spike */
  }
  return 0;
}

/* A device failed in a run: under MLSBA_ON_FAULT_CONTINUE it is dropped
 * and the load goes to the others; returns 0 when the run may be retried
 * with *load redistributed. */
static int drop_failed(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r, int err,
                       long failed, int64_t *load) {
  if (C->o.on_fault != MLSBA_ON_FAULT_CONTINUE || failed < 0 ||
      (err != MLSBA_EDEVICE && err != MLSBA_EDEVMEM))
    return err;
  char why[512];
  snprintf(why, sizeof why, "%s", mlsba_last_error());
  r->dropped[failed] = MLSBA_DROPPED_FAULT;
  r->lost++;
  mlsba__bal_log(C, "%s dropped after a fault, the others take its share: %s",
                 C->ex->pl->dev[failed].name, why);
  int e = mlsba__bal_set_capacity(C, r);
  if (e)
    return e;
  double seconds;
  if (!mlsba__bal_all_modelled(C, r) ||
      mlsba__bal_repartition(C, r, load, &seconds) != 0)
    mlsba__bal_even_start(C, load);
  return 0;
}

/* Runs r->load until a run completes (measure(), re-measuring outliers,
 * when remeasure; else one run per try): a device that fails is dropped
 * (drop_failed) and the others run its share, at most once per device.
 * *dropped says whether one was. */
int mlsba__bal_run_until_done(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                              double *time, int remeasure, unsigned *again,
                              int *dropped) {
  *dropped = 0;
  /* What a drop changes, to put back when every device has failed: then
   * the fault is not a device's (the function fails everywhere, the
   * machine is out of memory...), so the devices are kept and the
   * function's own error is returned; the next run, or a rebalance, works
   * once the cause is gone. */
  size_t p = C->p, lost = r->lost;
  unsigned char *was_dropped = malloc(p), *was_used = malloc(p);
  int64_t *was_max = malloc(p * sizeof *was_max),
          *was_load = malloc(p * sizeof *was_load);
  int err;
  if (!was_dropped || !was_used || !was_max || !was_load) {
    err = mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
    goto done;
  }
  memcpy(was_dropped, r->dropped, p);
  memcpy(was_used, C->dev.use, p);
  memcpy(was_max, C->dev.max, p * sizeof *was_max);
  memcpy(was_load, r->load, p * sizeof *was_load);
  for (unsigned retries = 0;; retries++) {
    long failed;
    *again = 0;
    err = remeasure ? measure(C, r, r->load, time, again, &failed)
                    : run_once(C, r->load, time, &failed);
    if (err == 0)
      break;
    char why[512];
    snprintf(why, sizeof why, "%s", mlsba_last_error());
    int e = retries >= C->p ? err : drop_failed(C, r, err, failed, r->load);
    if (e == 0) {
      *dropped = 1;
      continue;
    }
    if (r->lost > lost) {
      /* A drop was made and this one failed too (no device left to run,
       * or none left that can hold the load): every device failed. */
      memcpy(r->dropped, was_dropped, p);
      memcpy(C->dev.use, was_used, p);
      memcpy(C->dev.max, was_max, p * sizeof *was_max);
      memcpy(r->load, was_load, p * sizeof *was_load);
      r->lost = lost;
      *dropped = 0;
      for (size_t j = 0; j < p; j++)
        mlsba_model_set_max_load(r->models[j], C->dev.max[j]);
      mlsba__bal_log(C, "every device failed: they are kept, the run fails: %s",
                     why);
      err = mlsba__fail(err, "%s", why);
    } else {
      err = e;
    }
    break;
  }
done:
  free(was_dropped);
  free(was_used);
  free(was_max);
  free(was_load);
  return err;
}

double mlsba__bal_variation(const mlsba__bal_ctx_t *C,
                            const mlsba_balance_result_t *r, long *at) {
  double worst = 0;
  *at = -1;
  for (size_t j = 0; j < C->p; j++) {
    double noise =
        r->load[j] > 0 ? mlsba__measured_noise(C->kinds.basis[j]) : 0;
    if (noise > worst) {
      worst = noise;
      *at = (long)j;
    }
  }
  return worst;
}

/* After max_iter: when the device times vary from run to run by more
 * than eps / 2, that is why (a point is known well once the standard
 * error of its runs is within eps / 2), and the log says so, with what
 * would let the routine settle. */
void mlsba__bal_explain_noise(const mlsba__bal_ctx_t *C,
                              const mlsba_balance_result_t *r) {
  long at;
  double worst = mlsba__bal_variation(C, r, &at);
  double tol = C->o.eps / 2;
  if (at < 0 || worst <= tol)
    return;
  double runs = ceil(worst * worst / (tol * tol));
  mlsba__bal_log(
      C,
      "%s's times vary by %.1f%% from run to run (the most of the devices "
      "in use): a point is known within eps/2 after about %.0f runs of it. "
      "A larger eps or max_iter, or a quieter machine, lets the routine "
      "settle",
      C->ex->pl->dev[at].name, 100 * worst, runs);
}
