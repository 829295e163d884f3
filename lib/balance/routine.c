/* The self-adaptive iterative routine of seed 002 §V.A: run, measure, add
 * one point per device to its model, re-partition, run again.
 *
 * The runtime never decides a distribution: the partitioner does, from the
 * models measured so far. What the routine adds:
 *  - the first run gives every device N/P units, within what it can hold;
 *  - a measured time far from its model's prediction is re-measured: a
 *    second measurement that agrees with it is trusted (the device really
 *    changed), one that does not replaces it (a timing spike);
 *  - devices of one kind share one model built from all their runs while
 *    their runs agree (lib/partition/measured.c);
 *  - it stops when the device times agree within eps at both levels, or
 *    when the next distribution moves no device by more than eps of its
 *    load (under timing noise the spread may never fall below eps while
 *    the models already know the best distribution), or when a
 *    distribution comes back (a cycle), or at max_iter; the last two are
 *    reported as not converged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "balance.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The next distribution from the models, into proposal; *stop becomes
 * MLSBA_STOP_FIXED_POINT or MLSBA_STOP_CYCLE when the routine should end
 * there instead. */
static int propose(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r, unsigned it,
                   int64_t *proposal, double *overhead, int *stop) {
  const mlsba_balance_opts_t *o = &C->o;
  memcpy(proposal, r->load, C->p * sizeof *proposal);
  int err = mlsba__bal_repartition(C, r, proposal, overhead);
  if (err)
    return err;
  /* A fixed point: the proposal moves no device by more than eps of its
   * load, and the models expect it to gain less than eps over the loads
   * just run (a small move of a large load can still be worth more). Both
   * makespans come from the same models: the measured one is biased up
   * by noise (it is the largest of several noisy times). And every
   * loaded device's point at its load is known well: two runs or more,
   * with a standard error of their mean within eps / 2. With timing
   * noise of a few percent one run per point misplaces some device by
   * more than eps about one time in four; the routine measures how noisy
   * its devices are and averages until it is not. (The measurements
   * behind these choices are in benchmarks/RESULTS.md.) */
  int moved = 0;
  double now_pred = 0, next_pred = 0, next_min = INFINITY, t;
  for (size_t j = 0; j < C->p; j++) {
    double tol = o->eps * (double)r->load[j];
    moved |= fabs((double)(proposal[j] - r->load[j])) > (tol > 1 ? tol : 1);
    if (proposal[j] > 0 &&
        mlsba_model_time(r->models[j], (double)proposal[j], &t) == 0) {
      next_pred = t > next_pred ? t : next_pred;
      if (proposal[j] < C->dev.max[j]) /* a capped device may finish early */
        next_min = t < next_min ? t : next_min;
    }
    if (r->load[j] > 0 &&
        mlsba_model_time(r->models[j], (double)r->load[j], &t) == 0)
      now_pred = t > now_pred ? t : now_pred;
  }
  /* ... and the models themselves must call the proposal balanced: an
   * algorithm that ignores them (homogeneous) repeats itself without
   * converging. */
  int settled =
      !moved && next_pred > (1 - o->eps) * now_pred &&
      (next_min == INFINITY || next_pred - next_min <= o->eps * next_pred);
  if (settled && mlsba__bal_all_known_well(C, r->load)) {
    *stop = MLSBA_STOP_FIXED_POINT;
    return 0;
  }
  /* A distribution run before (since the last device left) comes back.
   * The one just run, proposed again and settled, is a repeat that
   * averages its points (until they are known well, or max_iter); an
   * algorithm that repeats a distribution its models call unbalanced
   * (homogeneous) has cycled. */
  if (settled && !memcmp(r->load, proposal, C->p * sizeof *proposal))
    return 0;
  for (unsigned k = C->iter.cycle_from; k + 1 < it; k++) {
    if (!memcmp(r->history_load + k * C->p, proposal,
                C->p * sizeof *proposal)) {
      *stop = MLSBA_STOP_CYCLE;
      return 0;
    }
  }
  return 0;
}

/* Counts one partitioning call's time for the result. */
static void count_call(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                       double overhead) {
  C->iter.calls[C->iter.ncalls++] = overhead;
  C->iter.overhead = overhead;
  r->overhead_total_s += overhead;
}

/* Phase 1: the first distribution, from the models (warm) or N/P. */
static int begin(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                 int start_warm) {
  r->iterations = 0;
  r->overhead_total_s = 0;
  r->overhead_per_call_s = 0;
  C->sharing.checking = -1;
  C->iter.cycle_from = 0;
  C->iter.ncalls = 0;
  C->iter.overhead = 0;
  if (!start_warm) {
    mlsba__bal_even_start(C, r->load);
    return 0;
  }
  double overhead;
  int err = mlsba__bal_repartition(C, r, r->load, &overhead);
  if (!err)
    count_call(C, r, overhead);
  return err;
}

/* Phase 2: runs r->load (outliers re-measured, a failed device dropped)
 * and records the run: its history row, its log line, the progress. */
static int run_and_record(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                          unsigned it, double *makespan, double *imbalance) {
  const mlsba_balance_opts_t *o = &C->o;
  unsigned again;
  int dropped;
  int err = mlsba__bal_run_until_done(C, r, r->time, 1, &again, &dropped);
  if (err)
    return err;
  r->iterations = it;
  *makespan = mlsba__bal_largest(r->time, C->p);
  *imbalance = mlsba__bal_spread(r->time, r->load, C->dev.max, NULL, C->p);
  memcpy(r->history_load + (it - 1) * C->p, r->load, C->p * sizeof *r->load);
  memcpy(r->history_time + (it - 1) * C->p, r->time, C->p * sizeof *r->time);
  r->history_makespan[it - 1] = *makespan;
  r->history_imbalance[it - 1] = *imbalance;
  mlsba__bal_log(C, "%s: iteration %u: makespan %.4f s, imbalance %.1f%%%s",
                 C->w->name, it, *makespan,
                 mlsba_imbalance_percent(*imbalance, o->eps),
                 again ? " (outlier re-measured)" : "");
  if (o->progress) {
    mlsba_iteration_t info = {it,         r->load,          r->time, *makespan,
                              *imbalance, C->iter.overhead, again};
    o->progress(o->progress_ctx, &info);
  }
  return 0;
}

/* Phase 3: what the run taught. Each loaded device's time is a point of
 * its model. A model the first run contradicts (measure() has already
 * confirmed the time with a second run) is stale: the machine changed,
 * and only what is measured now is kept. */
static int learn(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r, unsigned it) {
  const mlsba_platform_t *pl = C->ex->pl;
  for (size_t j = 0; j < C->p; j++) {
    if (r->load[j] == 0)
      continue;
    double pred;
    if (it == 1 && C->dev.warm[j] &&
        mlsba__measured_forget_if_stale(&C->dev.measured[j], r->models[j],
                                        r->load[j], r->time[j], C->o.outlier,
                                        &pred)) {
      int saved = C->dev.warm[j] == MLSBA__WARM_SAVED;
      r->stale += (unsigned)saved;
      mlsba__bal_log(C,
                     "%s: the %s model is stale (predicted %.4f s, "
                     "measured %.4f s); measuring afresh",
                     pl->dev[j].name, saved ? "saved" : "learned", pred,
                     r->time[j]);
    }
    mlsba__measured_add(&C->dev.measured[j], r->load[j], r->time[j], C->o.eps);
  }
  int err = mlsba__bal_rebuild_models(C, r);
  memset(C->dev.warm, 0, C->p);
  return err;
}

/* Phase 4: where to go: stop balanced, at max_iter, at a fixed point or
 * a cycle (*stop), or on with the next distribution, in proposal (the
 * history's next row; NULL at max_iter). */
static int decide(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r, unsigned it,
                  int64_t *proposal, int *stop) {
  const mlsba_platform_t *pl = C->ex->pl;
  int flat = C->o.grouping == MLSBA_GROUPING_FLAT;
  *stop = -1;
  if (mlsba__bal_balanced(pl, flat, r->load, C->dev.max, r->time, C->o.eps,
                          C->scratch.time + C->p, C->scratch.gload,
                          C->scratch.gcap) &&
      mlsba__bal_all_known_well(C, r->load))
    *stop = MLSBA_STOP_BALANCED;
  else if (proposal == NULL)
    *stop = MLSBA_STOP_MAX_ITER;
  if (*stop >= 0)
    return 0;
  double overhead;
  int err = propose(C, r, it, proposal, &overhead, stop);
  if (!err)
    count_call(C, r, overhead);
  return err;
}

/* Phase 4, after a run without a device that shares the others' cores
 * when the routine goes back to the run with it (sharing.c): the stop
 * that run had, or the next distribution from it. */
static int decide_after_kept(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                             unsigned it, int64_t *proposal, int *stop) {
  *stop = C->sharing.kept.stop;
  if (*stop < 0 && proposal == NULL)
    *stop = MLSBA_STOP_MAX_ITER;
  if (*stop >= 0)
    return 0;
  double overhead;
  int err = propose(C, r, it, proposal, &overhead, stop);
  if (!err && *stop < 0)
    count_call(C, r, overhead);
  return err;
}

/* Phase 5: the result: converged or not, the median partitioning time,
 * the groups' loads, the run-to-run variation, a line that says how it
 * went (and why, at max_iter), and the models saved. */
static void finish(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r) {
  const mlsba_platform_t *pl = C->ex->pl;
  r->converged =
      r->stop == MLSBA_STOP_BALANCED || r->stop == MLSBA_STOP_FIXED_POINT;
  if (C->iter.ncalls) {
    qsort(C->iter.calls, C->iter.ncalls, sizeof *C->iter.calls, cmp_double);
    r->overhead_per_call_s = C->iter.calls[C->iter.ncalls / 2];
  }
  for (size_t gi = 0; gi < pl->ngroups; gi++) {
    r->alpha[gi] = 0;
    for (size_t k = pl->group_start[gi]; k < pl->group_start[gi + 1]; k++)
      r->alpha[gi] += r->load[pl->group_dev[k]];
  }
  long at;
  r->eps = C->o.eps;
  r->variation = mlsba__bal_variation(C, r, &at);
  char how[512];
  mlsba_balance_result_describe(r, how, sizeof how);
  mlsba__bal_log(C, "%s: %s", C->w->name, how);
  if (r->stop == MLSBA_STOP_MAX_ITER)
    mlsba__bal_explain_noise(C, r);
  mlsba__bal_save_models(C, r);
}

/* The iterative routine (seed 002 §V.A) from the current models: warm
 * starts from them when start_warm, else from N/P. Every run goes through
 * the phases above, as libuv's uv_run goes through its: run and record,
 * then either learn and decide, or, right after a run without a device
 * that shares the others' cores that did not pay (sharing.c), decide from
 * the run with it; then stop, or adopt the next distribution. */
int mlsba__bal_routine(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                       int start_warm) {
  int err = begin(C, r, start_warm);
  for (unsigned it = 1; !err; it++) {
    int64_t *proposal = it < C->o.max_iter ? r->history_load + it * C->p : NULL;
    double makespan, imbalance, overhead;
    int stop, verdict;
    if ((err = run_and_record(C, r, it, &makespan, &imbalance)) != 0 ||
        (err = mlsba__bal_sharing_verdict(C, r, it, makespan, &verdict)) != 0)
      break;
    if (verdict == MLSBA__BAL_KEPT) {
      err = decide_after_kept(C, r, it, proposal, &stop);
    } else if ((err = learn(C, r, it)) == 0) {
      r->makespan = makespan;
      r->imbalance = imbalance;
      err = decide(C, r, it, proposal, &stop);
      /* A device that computes on the others' cores may be checked now
       * (sharing.c): the next run leaves it out, whatever the stop. */
      if (!err &&
          mlsba__bal_sharing_begin(C, r, it, stop, proposal, &overhead)) {
        count_call(C, r, overhead); /* the partitioning without it */
        stop = -1;
      }
    }
    if (err)
      break;
    if (stop >= 0) {
      r->stop = (mlsba_stop_reason_t)stop;
      finish(C, r);
      return 0;
    }
    memcpy(r->load, proposal, C->p * sizeof *proposal);
  }
  return err;
}

/* Cold or warm start of a fresh context. */
int mlsba__bal_first(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r) {
  int all_warm = 0;
  int err = mlsba__bal_load_stored(C, r, &all_warm);
  return err ? err : mlsba__bal_routine(C, r, all_warm);
}
