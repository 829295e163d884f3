/* One run of a step's units on real devices: the factorization's one load
 * (the cores' function, sharing.c, and the OpenCL half, cl_*.c), set for
 * this step and run on the layout's shares. */
#include <string.h>

#include "driver.h"

static int has_accelerator(const mlsba__factor_cfg_t *c) {
  for (size_t i = 0; i < c->p; i++)
    if (mlsba__factor_is_accel(c, i))
      return 1;
  return 0;
}

/* An OpenCL device keeps its state (and columns) while it runs the same
 * load. Its OpenCL code is set on every platform with an OpenCL device,
 * dropped or not, so that the step it sees is this one; an operation
 * without an OpenCL half (ops->cl NULL: its OpenCL devices take no units)
 * has none to set. */
int mlsba__factor_work_load(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                            int64_t units) {
  mlsba__factor_residency_t *r = &C->res;
  int err =
      r->work ? 0 : mlsba_load_create(C->P->ops->update_load, units, &r->work);
  if (err)
    return err;
  r->work->units = units;
  err = mlsba_load_set_cpu(r->work, mlsba__factor_core_units, st);
  if (!err && has_accelerator(&C->cfg) && C->P->ops->cl)
    err = mlsba__factor_set_opencl(r->work, st);
  return err;
}

int mlsba__factor_real_run(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                           int64_t units, long *failed) {
  size_t p = C->cfg.p;
  memset(st->done, 0, p);
  mlsba__factor_open_shares(st);
  int err = mlsba__factor_work_load(C, st, units);
  if (!err)
    err = mlsba_executor_run(C->cfg.ex, C->res.work, C->lay.load,
                             MLSBA_DRIVE_SHARED, C->scratch.time, failed);
  if (!err && st->sharing) /* what each core updated: its point's load */
    memcpy(C->lay.load, C->shares.did, p * sizeof *C->lay.load);
  return err;
}
