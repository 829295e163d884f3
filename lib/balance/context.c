/* The context of the balancing routine: every part of it allocated at
 * once and freed at once, and the devices in use with what they hold. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "balance.h"

void mlsba__bal_log(const mlsba__bal_ctx_t *C, const char *fmt, ...)
    MLSBA__PRINTF(2, 3);
void mlsba__bal_log(const mlsba__bal_ctx_t *C, const char *fmt, ...) {
  if (C->o.log == NULL)
    return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  C->o.log(C->o.log_ctx, line);
}

void mlsba__bal_ctx_free(mlsba__bal_ctx_t *C) {
  mlsba__bal_devices_t *d = &C->dev;
  free(d->max);
  free(d->use);
  free(d->measured);
  free(d->warm);
  mlsba__bal_problem_t *part = &C->part;
  free((void *)part->models);
  free(part->dev);
  free(part->size);
  free(part->alpha);
  free(part->beta);
  free(part->points);
  mlsba__bal_kinds_t *k = &C->kinds;
  free(k->next);
  free(k->pool);
  free(k->lead);
  free(k->apart);
  free(k->pools);
  free((void *)k->basis);
  free((void *)k->members);
  free(k->member_dev);
  free(k->alike);
  mlsba__bal_sharing_t *s = &C->sharing;
  free(s->checked);
  free(s->left);
  free(s->trusted);
  free(s->kept.load);
  free(s->kept.time);
  free(C->scratch.time);
  free(C->scratch.gload);
  free(C->scratch.gcap);
  free(C->iter.calls);
  memset(C, 0, sizeof *C);
}

/* calloc(n, sizeof *ptr) into ptr, or on to the one cleanup label. */
#define ALLOC(ptr, n)                                                          \
  do {                                                                         \
    if (((ptr) = calloc((n), sizeof *(ptr))) == NULL)                          \
      goto nomem;                                                              \
  } while (0)

/* Every array of the result and of the context; on failure, what was
 * allocated is freed by the caller (mlsba__bal_ctx_free and
 * mlsba_balance_result_free). */
static int ctx_alloc(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r) {
  size_t p = C->p, q = C->q, iters = C->o.max_iter;
  r->p = p;
  r->q = q;
  ALLOC(r->models, p);
  ALLOC(r->load, p);
  ALLOC(r->time, p);
  ALLOC(r->alpha, q);
  ALLOC(r->points, q);
  ALLOC(r->history_load, iters * p);
  ALLOC(r->history_makespan, iters);
  ALLOC(r->history_imbalance, iters);
  ALLOC(r->history_time, iters * p);
  ALLOC(r->dropped, p);
  mlsba__bal_devices_t *d = &C->dev;
  ALLOC(d->max, p);
  ALLOC(d->use, p);
  ALLOC(d->measured, p);
  ALLOC(d->warm, p);
  mlsba__bal_problem_t *part = &C->part;
  ALLOC(part->models, p);
  ALLOC(part->dev, p);
  ALLOC(part->size, p);
  ALLOC(part->alpha, p);
  ALLOC(part->beta, p);
  ALLOC(part->points, p);
  mlsba__bal_kinds_t *k = &C->kinds;
  ALLOC(k->next, p);
  ALLOC(k->pool, p);
  ALLOC(k->lead, p);
  ALLOC(k->apart, p);
  ALLOC(k->basis, p);
  ALLOC(k->members, p);
  ALLOC(k->member_dev, p);
  ALLOC(k->alike, p);
  mlsba__bal_sharing_t *s = &C->sharing;
  ALLOC(s->checked, p);
  ALLOC(s->left, p);
  ALLOC(s->trusted, p);
  ALLOC(s->kept.load, p);
  ALLOC(s->kept.time, p);
  ALLOC(C->scratch.time, 2 * p);
  ALLOC(C->scratch.gload, q);
  ALLOC(C->scratch.gcap, q);
  ALLOC(C->iter.calls, 2 * iters + 1); /* <= 2 a run */
  for (size_t j = 0; j < p; j++)
    if (mlsba_model_create(&r->models[j]) != 0)
      goto nomem;
  return 0;
nomem:
  return mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
}

/* The devices in use and what they hold; MLSBA_ECAPACITY when those left
 * cannot hold the load together. */
int mlsba__bal_set_capacity(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r) {
  const mlsba_platform_t *pl = C->ex->pl;
  int64_t capacity = 0;
  for (size_t gi = 0; gi < pl->ngroups; gi++) {
    for (size_t k = pl->group_start[gi]; k < pl->group_start[gi + 1]; k++) {
      size_t j = pl->group_dev[k];
      int devoted = C->o.drive == MLSBA_DRIVE_DEVOTED &&
                    mlsba__platform_is_driver(pl, gi, k);
      C->dev.use[j] = C->dev.max[j] > 0 && !devoted && !r->dropped[j];
      C->dev.max[j] = C->dev.use[j] ? C->dev.max[j] : 0;
      mlsba_model_set_max_load(r->models[j], C->dev.max[j]);
      /* Saturating at the load: a device may hold INT64_MAX units. */
      capacity = C->dev.max[j] < C->w->units - capacity
                     ? capacity + C->dev.max[j]
                     : C->w->units;
    }
  }
  if (capacity < C->w->units)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "balance: the devices %scan hold %lld units of %s "
                       "together, it has %lld",
                       r->lost ? "left " : "", (long long)capacity, C->w->name,
                       (long long)C->w->units);
  return 0;
}

int mlsba__bal_ctx_init(mlsba__bal_ctx_t *C, mlsba_executor_t *ex,
                        const mlsba_load_t *w, const mlsba_balance_opts_t *opts,
                        mlsba_balance_result_t *r) {
  memset(C, 0, sizeof *C);
  memset(r, 0, sizeof *r);
  mlsba_balance_opts_init(&C->o);
  if (opts)
    C->o = *opts;
  int err = mlsba__bal_check_opts(&C->o);
  if (err)
    return err;
  C->ex = ex;
  C->w = w;
  C->p = ex->pl->ndev;
  C->q = ex->pl->ngroups;
  if ((err = ctx_alloc(C, r)) == 0 && (err = mlsba__bal_set_kinds(C)) == 0 &&
      (err = mlsba_executor_max_units(ex, w, C->dev.max)) == 0)
    err = mlsba__bal_set_capacity(C, r);
  for (size_t j = 0; !err && j < C->p; j++)
    C->kinds.basis[j] = &C->dev.measured[j];
  return err;
}
