/* Failures. A simulated device that fails is dropped before anything of
 * its step was computed, and the step is split again. A real
 * accelerator's failure may leave its columns half written: the
 * streamed columns go back to the copy made before the step, the
 * resident ones are replayed on the host, and the cores do the units of
 * the accelerators and of the cores that did not finish again. A core
 * that fails stops the factorization (its columns may be half done). */
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "driver.h"

int mlsba__factor_drop_sim(mlsba__factor_ctx_t *C, long failed) {
  if (failed < 0 || failed == C->cfg.panel_dev || !C->dev.active[failed])
    return 0;
  C->dev.active[failed] = 0;
  C->R->dropped[failed] = 1;
  C->R->lost++;
  mlsba__factor_plan_forget(&C->plan, (size_t)failed);
  return 1;
}

void mlsba__factor_drop_accel(mlsba__factor_ctx_t *C, size_t i) {
  C->dev.active[i] = 0;
  C->R->dropped[i] = 1;
  C->R->lost++;
}

void mlsba__factor_drop_lost(mlsba__factor_ctx_t *C) {
  for (size_t i = 0; i < C->cfg.p; i++)
    if (C->res.lost[i]) {
      C->res.lost[i] = 0;
      mlsba__factor_drop_accel(C, i);
    }
}

/* Where trailing column c (relative) of the step begins, from the
 * panel's first row. */
static char *trailing_column(const mlsba__factor_ctx_t *C,
                             const mlsba__factor_step_t *st, int64_t c) {
  return mlsba__factor_at(C->P, st->j, st->j + st->jb + c);
}

int mlsba__factor_backup(const mlsba__factor_ctx_t *C,
                         const mlsba__factor_step_t *st, void **copy) {
  *copy = NULL;
  int streams = 0;
  for (size_t i = 0; i < C->cfg.p; i++)
    streams |= C->res.streams[i];
  if (!streams)
    return 0;
  const mlsba__factor_problem_t *P = C->P;
  size_t es = mlsba__factor_esize(P);
  size_t rows = (size_t)(P->m - st->j);
  size_t cols = (size_t)(P->n - st->j - st->jb);
  char *b = malloc(rows * cols * es);
  if (b == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  for (size_t c = 0; c < cols; c++)
    memcpy(b + c * rows * es, trailing_column(C, st, (int64_t)c), rows * es);
  *copy = b;
  return 0;
}

/* Puts back the columns of the logical units [lo, hi) from the copy. */
static void restore_units(const mlsba__factor_ctx_t *C,
                          const mlsba__factor_step_t *st, const void *copy,
                          int64_t lo, int64_t hi) {
  const mlsba__factor_problem_t *P = C->P;
  size_t es = mlsba__factor_esize(P), rows = (size_t)(P->m - st->j);
  int64_t N = P->n - st->j - st->jb, cols[2];
  for (int64_t u = lo; u < hi; u++)
    for (int k = 0, n = P->ops->unit_columns(N, u, cols); k < n; k++)
      memcpy(trailing_column(C, st, cols[k]),
             (const char *)copy + (size_t)cols[k] * rows * es, rows * es);
}

/* The logical units the cores do again into remap: every accelerator's
 * (its streamed columns put back first) and those of the cores that did
 * not finish; their count. */
static int64_t units_to_redo(mlsba__factor_ctx_t *C,
                             const mlsba__factor_step_t *st, const void *copy,
                             int64_t *remap) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  const mlsba__factor_layout_t *lay = &C->lay;
  int64_t n = 0;
  for (size_t k = 0; k < c->p; k++) {
    size_t i = c->group_dev[k];
    int accel = mlsba__factor_is_accel(c, i);
    if (lay->load[i] == 0 || (!accel && st->done[i]))
      continue;
    if (accel && C->res.streams[i])
      restore_units(C, st, copy, lay->log_off[i],
                    lay->log_off[i] + lay->load[i]);
    for (int64_t u = 0; u < lay->load[i]; u++)
      remap[n++] = lay->log_off[i] + u;
  }
  memset(C->res.streams, 0, c->p);
  return n;
}

/* The accelerators' resident columns are replayed on the host up to this
 * step (their device copies cannot be trusted), then the units are done
 * again by the cores, then the next panel if its core did not factorize
 * it. */
int mlsba__factor_redo(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                       long failed, const void *copy) {
  int64_t *remap = malloc((size_t)st->units * sizeof *remap);
  if (remap == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  mlsba__factor_drop_accel(C, (size_t)failed);
  for (size_t i = 0; i < C->cfg.p; i++)
    if (C->res.lo[i] < C->res.hi[i])
      mlsba__factor_replay(C, i, st->j);
  int64_t n = units_to_redo(C, st, copy, remap);
  int err = 0;
  if (n > 0) {
    err = mlsba__factor_plan_redo(C, n, st->unit_flops, C->lay.load);
    mlsba__factor_lay_out(&C->cfg, &st->plan, &C->lay);
    st->remap = remap;
    long again = -1;
    if (!err)
      err = mlsba__factor_real_run(C, st, n, &again);
    st->remap = NULL;
  }
  if (!err && st->plan.lookahead && st->jbn > 0 && !st->panel_done) {
    double t = mlsba__now();
    st->stop = mlsba__factor_panel_on_core(C->P, st);
    st->panel_s = mlsba__now() - t;
  }
  free(remap);
  return err;
}
