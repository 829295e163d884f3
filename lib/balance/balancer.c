/* The balancer object: balance once, run many times, re-balance when the
 * run drifts. */
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "balance.h"

struct mlsba_balancer {
  mlsba_platform_t *owned; /* the discovered platform of mlsba_balance() */
  const mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  mlsba__bal_ctx_t C;
  mlsba_balance_result_t r;
  unsigned drifted; /* runs in a row with imbalance above drift */
};

void mlsba_balancer_destroy(mlsba_balancer_t *b) {
  if (b == NULL)
    return;
  mlsba__bal_ctx_free(&b->C);
  mlsba_balance_result_free(&b->r);
  mlsba_executor_destroy(b->ex);
  mlsba_platform_destroy(b->owned);
  free(b);
}

int mlsba_balance_ex(const mlsba_platform_t *pl, mlsba_load_t *w,
                     const mlsba_balance_opts_t *opts, mlsba_balancer_t **out) {
  if (w == NULL || out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balance_ex: %s is NULL",
                       w == NULL ? "load" : "balancer");
  *out = NULL;
  mlsba_balancer_t *b = calloc(1, sizeof *b);
  if (b == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "balancer: out of memory");
  int err = 0;
  if (pl == NULL && (err = mlsba_platform_discover(&b->owned)) == 0)
    pl = b->owned;
  b->pl = pl;
  if (!err)
    err = mlsba_executor_create(pl, &b->ex);
  if (!err)
    err = mlsba__bal_ctx_init(&b->C, b->ex, w, opts, &b->r);
  if (!err)
    err = mlsba__bal_first(&b->C, &b->r);
  if (err) {
    mlsba_balancer_destroy(b);
    return err;
  }
  *out = b;
  return 0;
}

int mlsba_balance(mlsba_load_t *w, mlsba_balancer_t **out) {
  return mlsba_balance_ex(NULL, w, NULL, out);
}

/* A re-balancing runs at most rebalance_max_iter times: it starts from
 * models that already know every device, so a few runs settle it, and a
 * call of the application's loop must not hide twenty. */
static int rebalance_bounded(mlsba_balancer_t *b) {
  mlsba__bal_ctx_t *C = &b->C;
  unsigned max_iter = C->o.max_iter, bound = C->o.rebalance_max_iter;
  if (bound > 0 && bound < max_iter)
    C->o.max_iter = bound;
  /* Start from the models learned so far, checked against the first run
   * like stored models: a device that changed is measured afresh. */
  for (size_t j = 0; j < C->p; j++)
    C->dev.warm[j] = C->dev.use[j] ? MLSBA__WARM_LEARNED : 0;
  b->drifted = 0;
  int err = mlsba__bal_routine(C, &b->r, mlsba__bal_all_modelled(C, &b->r));
  C->o.max_iter = max_iter;
  return err;
}

int mlsba_balancer_rebalance(mlsba_balancer_t *b) {
  if (b == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balancer_rebalance: NULL");
  return rebalance_bounded(b);
}

/* The imbalance past which a run counts as drifted: the option, or with
 * MLSBA_DRIFT_AUTO one above the noise the balancing measured. The
 * imbalance of p devices whose times each vary by v (relative standard
 * deviation) is their range, about 2 v to 3 v for 3 to 8 devices: 4 v
 * above eps is rarely reached twice in a row by noise alone.
 *
 *   eps   variation   threshold
 *   5%    0 (unknown) 10% (2 eps)
 *   5%    1%          10%
 *   5%    3%          17%
 *   5%    10%         45%  */
double mlsba__bal_drift_threshold(const mlsba_balance_opts_t *o,
                                  double variation) {
  if (o->drift >= 0)
    return o->drift;
  double noisy = o->eps + 4 * variation;
  return noisy > 2 * o->eps ? noisy : 2 * o->eps;
}

int mlsba_balancer_run(mlsba_balancer_t *b, mlsba_run_info_t *info) {
  if (b == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balancer_run: balancer is NULL");
  mlsba__bal_ctx_t *C = &b->C;
  mlsba_balance_result_t *r = &b->r;
  double *time = C->scratch.time, start = mlsba__now();
  unsigned long runs = C->iter.runs;
  unsigned again;
  int rebalanced; /* a device dropped: the others took over its share */
  int err = mlsba__bal_run_until_done(C, r, time, 0, &again, &rebalanced);
  if (err)
    return err;
  double makespan = mlsba__bal_largest(time, C->p);
  double imbalance = mlsba__bal_spread(time, r->load, C->dev.max, NULL, C->p);
  double drift = mlsba__bal_drift_threshold(&C->o, r->variation);
  b->drifted = drift > 0 && imbalance > drift ? b->drifted + 1 : 0;
  if (b->drifted >= 2 || rebalanced) {
    unsigned bound = C->o.rebalance_max_iter;
    mlsba__bal_log(C,
                   "%s: imbalance %.1f%% drifted past %.1f%%: re-balancing "
                   "(at most %u runs)",
                   C->w->name, mlsba_imbalance_percent(imbalance, drift),
                   100 * drift,
                   bound > 0 && bound < C->o.max_iter ? bound : C->o.max_iter);
    if ((err = rebalance_bounded(b)) != 0)
      return err;
    rebalanced = 1;
    makespan = r->makespan;
    imbalance = r->imbalance;
  }
  if (info) {
    info->makespan = makespan;
    info->imbalance = imbalance;
    info->rebalanced = rebalanced;
    info->runs = (unsigned)(C->iter.runs - runs);
    info->wall_s = mlsba__now() - start;
    info->drift = drift;
  }
  return 0;
}

const mlsba_balance_result_t *mlsba_balancer_result(const mlsba_balancer_t *b) {
  return b ? &b->r : NULL;
}

const mlsba_platform_t *mlsba_balancer_platform(const mlsba_balancer_t *b) {
  return b ? b->pl : NULL;
}
