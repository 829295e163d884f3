/* A panel's solve split between the devices after the update (where the
 * operation has one, ops->solve, and the plan splits it): a row is a
 * unit of nb^2 flops, any row any other's equal, split by the same rule
 * as the update. Simulated devices take it in virtual time; a simulated
 * device that fails is dropped and the rows split again. */
#include <stdlib.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "driver.h"

typedef mlsba__factor_step_t step_t;

/* A core's rows of the split solve (units are rows, as the executor
 * numbers them). */
static int solve_rows(void *user, int64_t first, int64_t count) {
  const step_t *st = user;
  st->P->ops->solve(st->P, st->jn, st->jbn, first, first + count);
  return 0;
}

static int real_solve(mlsba__factor_ctx_t *C, step_t *st, int64_t rows,
                      const int64_t *load, double *t, long *failed) {
  mlsba_load_t *w = NULL;
  int err = mlsba_load_create(C->P->ops->solve_load, rows, &w);
  if (!err)
    err = mlsba_load_set_cpu(w, solve_rows, st);
  if (!err)
    err = mlsba_executor_run(C->cfg.ex, w, load, MLSBA_DRIVE_SHARED, t, failed);
  mlsba_load_destroy(w);
  return err;
}

/* Splits and runs the rows between the devices `able`; *seconds: the
 * solve's time. */
static int run_solve(mlsba__factor_ctx_t *C, step_t *st, int64_t rows,
                     unsigned char *able, int64_t *load, double *t,
                     double *seconds) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  double b = (double)st->jbn;
  for (;;) {
    double t0 = mlsba__now(), first_t;
    int err = mlsba__factor_split_solve(C, &C->plan, st, able, load, NULL);
    C->R->overhead_s += mlsba__now() - t0;
    if (err)
      return err;
    long failed = -1;
    t0 = mlsba__now();
    err = c->virt
              ? mlsba__factor_sim_shares(C, load, -1, 0, t, &first_t, &failed)
              : real_solve(C, st, rows, load, t, &failed);
    if (!err) {
      double longest = 0;
      for (size_t i = 0; i < c->p; i++)
        longest = t[i] > longest ? t[i] : longest;
      *seconds = c->virt ? longest * b * b / c->unit_ref : mlsba__now() - t0;
      return 0;
    }
    if (!c->virt || failed == c->panel_dev ||
        !mlsba__factor_drop_sim(C, failed))
      return err;
    able[failed] = 0;
  }
}

int mlsba__factor_solve_step(mlsba__factor_ctx_t *C, step_t *st,
                             double *seconds) {
  *seconds = 0;
  int64_t rows = st->plan.solve_apart && !st->stop
                     ? C->P->ops->solve_rows(C->P, st->jn, st->jbn)
                     : 0;
  if (rows == 0)
    return 0;
  size_t p = C->cfg.p;
  unsigned char *able = calloc(p, 1);
  int64_t *load = calloc(p, sizeof *load);
  double *t = calloc(p, sizeof *t);
  int err = able && load && t
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if (!err) {
    mlsba__factor_solve_devices(C, able);
    err = run_solve(C, st, rows, able, load, t, seconds);
  }
  free(able);
  free(load);
  free(t);
  return err;
}
