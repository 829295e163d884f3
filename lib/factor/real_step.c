/* The real step's executor: the accelerators' columns settled (kept or
 * streamed, what they no longer need back on the host), the run, and
 * after an accelerator failed, the redo on the cores. */
#include <stdlib.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "driver.h"

typedef mlsba__factor_step_t step_t;

int mlsba__factor_real_caps(mlsba__factor_ctx_t *C, step_t *st) {
  size_t p = C->cfg.p;
  int64_t *max = calloc(p, sizeof *max);
  int err = max ? mlsba__factor_work_load(C, st, st->units)
                : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if (!err)
    err = mlsba_executor_max_units(C->cfg.ex, C->res.work, max);
  for (size_t i = 0; !err && i < p; i++) {
    mlsba_model_set_max_load(C->models.rate[i],
                             max[i] >= st->units ? MLSBA_NO_MAX_LOAD : max[i]);
    C->res.cap[i] = max[i];
  }
  free(max);
  return err;
}

/* An accelerator whose columns could not come back was dropped: the step
 * is split again without it. */
static int settle(mlsba__factor_ctx_t *C, step_t *st) {
  for (long lost; (lost = mlsba__factor_settle(C, st)) >= 0;) {
    mlsba__factor_drop_accel(C, (size_t)lost);
    double t0 = mlsba__now();
    int err = mlsba__factor_replan(C, &C->plan, st, C->lay.load);
    C->R->overhead_s += mlsba__now() - t0;
    if (err)
      return err;
    mlsba__factor_lay_out(&C->cfg, &st->plan, &C->lay);
  }
  return 0;
}

int mlsba__factor_real_step(mlsba__factor_ctx_t *C, step_t *st, long *failed) {
  int err = settle(C, st);
  if (err)
    return err;
  void *copy = NULL;
  unsigned char *done = calloc(C->cfg.p, 1);
  err = done ? mlsba__factor_backup(C, st, &copy)
             : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  st->done = done;
  st->panel_done = 0;
  if (!err)
    err = mlsba__factor_real_run(C, st, st->units, failed);
  long f = *failed;
  if (err && f >= 0 && mlsba__factor_is_accel(&C->cfg, (size_t)f) &&
      (copy || !C->res.streams[f])) {
    *failed = -1;
    err = mlsba__factor_redo(C, st, f, copy);
  }
  if (!err) {
    C->res.applied = st->j + st->jb;
    mlsba__factor_return_next_panel(C, st);
    mlsba__factor_drop_lost(C);
  }
  st->done = NULL;
  free(done);
  free(copy);
  return err;
}
