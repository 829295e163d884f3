/* The check of a device that computes on the cores of others (an OpenCL
 * CPU device such as pocl, a sim device with contends_with), all in one
 * place: when to check (mlsba__bal_sharing_begin), a run without it, the
 * verdict (mlsba__bal_sharing_verdict), and the decision saved beside the
 * models and taken by the next balancing (take_saved, save). */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "balance.h"
#include "store.h"

/* Under MLSBA_SHARING_CHECK: of the loaded devices that compute on the
 * cores of others and were not checked yet, the one with the smallest
 * load; -1 when there is none or fewer than two devices are loaded. */
static long sharing_candidate(const mlsba__bal_ctx_t *C, const int64_t *load) {
  long best = -1;
  size_t loaded = 0;
  for (size_t j = 0; j < C->p; j++) {
    loaded += load[j] > 0;
    if (load[j] > 0 && C->ex->opened[j].shares_cores &&
        !C->sharing.checked[j] && (best < 0 || load[j] < load[best]))
      best = (long)j;
  }
  return C->o.sharing == MLSBA_SHARING_CHECK && loaded >= 2 ? best : -1;
}

/* The makespan of the last run's devices if they were balanced at the
 * speeds they just showed: N over the sum of their speeds. */
static double balanced_at_last_speeds(const mlsba__bal_ctx_t *C,
                                      const mlsba_balance_result_t *r) {
  double speed = 0;
  for (size_t j = 0; j < C->p; j++)
    if (r->load[j] > 0 && r->time[j] > 0)
      speed += (double)r->load[j] / r->time[j];
  return speed > 0 ? (double)C->w->units / speed : 0;
}

/* Puts device j back after a check that kept it, after one that could
 * not start, or when the others cannot hold the load without it. */
static int restore_checked(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                           size_t j) {
  r->dropped[j] = MLSBA_DROPPED_NONE;
  C->dev.max[j] = C->sharing.kept.max;
  return mlsba__bal_set_capacity(C, r);
}

/* Starts the check of device j: the next run leaves it out and the others
 * take the load from their models. The last run is kept to come back to.
 * A settled run is the bar the run without j must beat. After the first
 * run (early), nothing is balanced yet: the bar is that run balanced at
 * the speeds it showed, less 2 eps (a speed that grows with the load could
 * do better), and only a clear loss leaves j out at once; a keep then is
 * provisional, and the check comes again once the routine settles. On
 * this machine that leaves pocl out at the second run instead of the
 * tenth. Returns 1 with the distribution in next, or 0 (the others cannot
 * hold the load without it) with everything as it was. */
static int start_check(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r, size_t j,
                       int stop, int early, int64_t *next, double *overhead) {
  C->sharing.checked[j] = 1;
  C->sharing.kept.max = C->dev.max[j];
  r->dropped[j] = MLSBA_DROPPED_LEFT_OUT;
  if (mlsba__bal_set_capacity(C, r) != 0 ||
      mlsba__bal_repartition(C, r, next, overhead) != 0) {
    restore_checked(C, r, j);
    return 0;
  }
  C->sharing.checking = (long)j;
  C->sharing.early = early;
  C->sharing.bar =
      early ? (1 - 2 * C->o.eps) * balanced_at_last_speeds(C, r) : r->makespan;
  C->sharing.kept.stop = stop;
  C->sharing.kept.makespan = r->makespan;
  C->sharing.kept.imbalance = r->imbalance;
  memcpy(C->sharing.kept.load, r->load, C->p * sizeof *r->load);
  memcpy(C->sharing.kept.time, r->time, C->p * sizeof *r->time);
  return 1;
}

/* A left-out decision is kept beside the models (store.c writes it), so
 * that the next run starts warm without the device instead of learning
 * the interference again: the model file's name ending in .left-out. It
 * is not trusted forever: after LEFT_OUT_TRUST balancings have taken it,
 * or after one that found a kept device's model stale (the machine
 * changed), the next checks the device again. Deleting the file does that
 * at once. */
#define LEFT_OUT_TRUST 10u

static int left_out_file(const mlsba__bal_ctx_t *C, size_t j, char *path,
                         size_t plen, char *key, size_t klen) {
  int e = mlsba__bal_model_file(C->ex, j, C->w, C->o.model_dir, path, plen, key,
                                klen);
  size_t n = strlen(path) - strlen(".model");
  if (!e && snprintf(path + n, plen - n, ".left-out") >= (int)(plen - n))
    e = mlsba__fail(MLSBA_ERANGE, "%s: model path too long", C->o.model_dir);
  return e;
}

/* Whether a decision about device j is saved (mlsba__left_out_read). */
static int left_out_saved(const mlsba__bal_ctx_t *C, size_t j,
                          unsigned *trusted, unsigned *stale) {
  char path[1024], key[1024];
  *trusted = *stale = 0;
  if (left_out_file(C, j, path, sizeof path, key, sizeof key) != 0)
    return 0;
  return mlsba__left_out_read(path, key, trusted, stale);
}

int mlsba__bal_sharing_take_saved(mlsba__bal_ctx_t *C,
                                  mlsba_balance_result_t *r) {
  const mlsba_platform_t *pl = C->ex->pl;
  int err = 0;
  for (size_t j = 0; C->o.model_dir && j < C->p; j++) {
    unsigned trusted, stale;
    if (!C->dev.use[j] || !C->ex->opened[j].shares_cores ||
        C->o.sharing != MLSBA_SHARING_CHECK ||
        !left_out_saved(C, j, &trusted, &stale))
      continue;
    if (trusted >= LEFT_OUT_TRUST || stale) {
      if (stale)
        mlsba__bal_log(C,
                       "%s: checked again (a run before left it out, and the "
                       "last run found the others' saved models stale)",
                       pl->dev[j].name);
      else
        mlsba__bal_log(C,
                       "%s: checked again (a run before left it out, and %u "
                       "balancings have taken that since)",
                       pl->dev[j].name, trusted);
      continue;
    }
    C->sharing.kept.max = C->dev.max[j];
    r->dropped[j] = MLSBA_DROPPED_LEFT_OUT;
    C->sharing.checked[j] = C->sharing.left[j] = 1;
    if (mlsba__bal_set_capacity(C, r) !=
        0) { /* the others cannot hold it all */
      C->sharing.checked[j] = C->sharing.left[j] = 0;
      if ((err = restore_checked(C, r, j)) != 0)
        return err;
      continue;
    }
    C->sharing.trusted[j] = trusted + 1;
    r->left_out++;
    unsigned more = LEFT_OUT_TRUST - C->sharing.trusted[j];
    char when[64] = "at the next balancing";
    if (more > 0)
      snprintf(when, sizeof when, "after %u more balancing%s", more,
               more == 1 ? "" : "s");
    mlsba__bal_log(
        C,
        "%s left out, as a run before decided (checked again %s, or at "
        "the next if its .left-out file in %s is deleted)",
        pl->dev[j].name, when, C->o.model_dir);
  }
  return 0;
}

/* Writes (left) or removes (kept) the decision of a check about device j,
 * with the number of balancings that took it and whether a model kept
 * beside it was stale: one taken from a file counts one more balancing,
 * and is checked next time when a model kept beside it was stale. */
int mlsba__bal_sharing_save(const mlsba__bal_ctx_t *C,
                            const mlsba_balance_result_t *r, size_t j) {
  if (!C->sharing.checked[j])
    return 0;
  char path[1024], key[1024];
  int e = left_out_file(C, j, path, sizeof path, key, sizeof key);
  if (e)
    return e;
  if (!C->sharing.left[j])
    return mlsba__left_out_remove(path);
  return mlsba__left_out_write(path, key, C->sharing.trusted[j],
                               C->sharing.trusted[j] && r->stale);
}

int mlsba__bal_sharing_verdict(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                               unsigned it, double makespan, int *verdict) {
  const mlsba_platform_t *pl = C->ex->pl;
  mlsba__bal_sharing_t *S = &C->sharing;
  long cj = S->checking;
  S->checking = -1;
  *verdict = MLSBA__BAL_NO_CHECK;
  if (cj < 0)
    return 0;
  if (!(makespan < S->bar)) {
    /* The device pays its way: back to the run with it. This run is not
     * added to the models: the others ran alone, faster than beside it. */
    mlsba__bal_log(C, "%s kept%s: %.4f s without it, %.4f s with it%s",
                   pl->dev[cj].name, S->early ? " for now" : "", makespan,
                   S->bar, S->early ? " if balanced at its first speeds" : "");
    S->checked[cj] = !S->early;
    int err = restore_checked(C, r, (size_t)cj);
    if (err)
      return err;
    memcpy(r->load, S->kept.load, C->p * sizeof *r->load);
    memcpy(r->time, S->kept.time, C->p * sizeof *r->time);
    r->makespan = S->kept.makespan;
    r->imbalance = S->kept.imbalance;
    *verdict = MLSBA__BAL_KEPT;
    return 0;
  }
  /* Faster without it: it stays out, and what the others measured beside
   * it no longer holds. Its own runs (beside the others, as it would run
   * again) are kept and saved, so that the balancing that checks it again
   * starts warm. */
  r->left_out++;
  S->left[cj] = 1;
  mlsba__bal_log(C,
                 "%s left out: it computes on the others' cores, and they "
                 "take %.4f s without it, %.4f s with it%s",
                 pl->dev[cj].name, makespan, S->bar,
                 S->early ? " if balanced at its first speeds" : "");
  for (size_t j = 0; j < C->p; j++)
    if (j != (size_t)cj)
      C->dev.measured[j].n = 0;
  C->iter.cycle_from = it;
  *verdict = MLSBA__BAL_LEFT_OUT;
  return 0;
}

/* After the first run (early), once settled, or half-way without
 * settling: check that a device which computes on the others' cores pays
 * its way (mlsba_sharing_t, start_check). */
int mlsba__bal_sharing_begin(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                             unsigned it, int stop, int64_t *proposal,
                             double *overhead) {
  int early = it == 1 && stop < 0;
  long check = proposal && (stop >= 0 || early || it == (C->o.max_iter + 1) / 2)
                   ? sharing_candidate(C, r->load)
                   : -1;
  if (check < 0 ||
      !start_check(C, r, (size_t)check, stop, early, proposal, overhead))
    return 0;
  mlsba__bal_log(C, "%s computes on the cores of others: a run without it",
                 C->ex->pl->dev[check].name);
  return 1;
}
