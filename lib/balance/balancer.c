/* The balancer object: balance once, run many times, re-balance when the
 * run drifts. */
#include <stdlib.h>
#include <string.h>

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

int mlsba_balancer_rebalance(mlsba_balancer_t *b) {
  if (b == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balancer_rebalance: NULL");
  /* Start from the models learned so far, checked against the first run
   * like stored models: a device that changed is measured afresh. */
  memcpy(b->C.dev.warm, b->C.dev.use, b->C.p);
  b->drifted = 0;
  return mlsba__bal_routine(&b->C, &b->r,
                            mlsba__bal_all_modelled(&b->C, &b->r));
}

int mlsba_balancer_run(mlsba_balancer_t *b, mlsba_run_info_t *info) {
  if (b == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balancer_run: balancer is NULL");
  mlsba__bal_ctx_t *C = &b->C;
  mlsba_balance_result_t *r = &b->r;
  double *time = C->scratch.time;
  unsigned again;
  int rebalanced; /* a device dropped: the others took over its share */
  int err = mlsba__bal_run_until_done(C, r, time, 0, &again, &rebalanced);
  if (err)
    return err;
  double makespan = mlsba__bal_largest(time, C->p);
  double imbalance = mlsba__bal_spread(time, r->load, C->dev.max, NULL, C->p);
  b->drifted = C->o.drift > 0 && imbalance > C->o.drift ? b->drifted + 1 : 0;
  if (b->drifted >= 2 || rebalanced) {
    mlsba__bal_log(C, "%s: imbalance %.1f%% drifted past %.1f%%: re-balancing",
                   C->w->name, mlsba_imbalance_percent(imbalance, C->o.drift),
                   100 * C->o.drift);
    if ((err = mlsba_balancer_rebalance(b)) != 0)
      return err;
    rebalanced = 1;
    makespan = r->makespan;
    imbalance = r->imbalance;
  }
  if (info) {
    info->makespan = makespan;
    info->imbalance = imbalance;
    info->rebalanced = rebalanced;
  }
  return 0;
}

const mlsba_balance_result_t *mlsba_balancer_result(const mlsba_balancer_t *b) {
  return b ? &b->r : NULL;
}

const mlsba_platform_t *mlsba_balancer_platform(const mlsba_balancer_t *b) {
  return b ? b->pl : NULL;
}
