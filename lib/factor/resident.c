/* The columns OpenCL devices keep in their memory from step to step
 * (cl_*.c sends them and reads them back): before a run, what each device
 * keeps of its share and what comes back; after a step without
 * lookahead, what the next panel reads; at the end, everything. Where a
 * device cannot give its columns back, the host replays the updates they
 * missed from their checkpoint (their host copies, untouched since they
 * were sent). */
#include "driver.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Runs of columns sent at the same step together; upper Cholesky on the
 * rows from top_row down (above it they came back already). */
void mlsba__factor_replay(mlsba__factor_ctx_t *C, size_t i, int64_t j_stop) {
  mlsba__factor_problem_t *P = C->P;
  mlsba__factor_residency_t *r = &C->res;
  int64_t kmax = mlsba__factor_diag(P);
  for (int64_t c = r->lo[i]; c < r->hi[i];) {
    int64_t e = c, from = r->sent_row[c];
    while (e < r->hi[i] && r->sent_row[e] == from)
      e++;
    for (int64_t j = from; j < j_stop; j += P->nb)
      P->ops->replay(P, j, min64(P->nb, kmax - j), c, e, r->top_row);
    c = e;
  }
  r->lo[i] = r->hi[i] = 0;
}

/* Device i's resident columns outside [lo, hi) come back to the host. */
static int fetch_outside(mlsba__factor_ctx_t *C, size_t i, int64_t lo,
                         int64_t hi) {
  mlsba__factor_residency_t *r = &C->res;
  int64_t rlo = r->lo[i], rhi = r->hi[i];
  int err = 0;
  if (rlo < rhi && rlo < lo)
    err = mlsba__factor_cl_fetch(r, C->P, i, rlo, min64(rhi, lo));
  if (!err && rlo < rhi && rhi > hi)
    err = mlsba__factor_cl_fetch(r, C->P, i, rlo > hi ? rlo : hi, rhi);
  if (!err) {
    r->lo[i] = rlo > lo ? rlo : lo;
    r->hi[i] = min64(rhi, hi);
    if (r->lo[i] >= r->hi[i])
      r->lo[i] = r->hi[i] = 0;
  }
  return err;
}

long mlsba__factor_settle(mlsba__factor_ctx_t *C,
                          const mlsba__factor_step_t *st) {
  mlsba__factor_residency_t *r = &C->res;
  const mlsba__factor_layout_t *lay = &C->lay;
  for (size_t i = 0; i < C->cfg.p; i++) {
    if (!mlsba__factor_is_accel(&C->cfg, i))
      continue;
    int64_t lo = lay->log_off[i], hi = lo + lay->load[i];
    int keep = lay->load[i] > 0 && mlsba__factor_cl_resident(st, i, &lo, &hi);
    r->streams[i] = lay->load[i] > 0 && !keep;
    if (!keep)
      lo = hi = 0;
    if (r->lo[i] < r->hi[i] && fetch_outside(C, i, lo, hi) != 0) {
      mlsba__factor_replay(C, i, st->j);
      return (long)i;
    }
  }
  return -1;
}

/* Upper Cholesky: the next panel's block row of every resident column,
 * and its own columns are the host's from then on; otherwise the next
 * panel's columns. */
void mlsba__factor_return_next_panel(mlsba__factor_ctx_t *C,
                                     const mlsba__factor_step_t *st) {
  mlsba__factor_residency_t *r = &C->res;
  int64_t end = st->jn + st->jbn;
  int rows = C->P->ops->returns_block_row;
  for (size_t i = 0; st->jbn > 0 && i < C->cfg.p; i++) {
    if (r->lo[i] >= r->hi[i] || (!rows && r->lo[i] >= end))
      continue;
    int64_t c1 = min64(r->hi[i], end);
    if (rows ? mlsba__factor_cl_fetch_rows(r, C->P, i, st->jn, end) != 0
             : mlsba__factor_cl_fetch(r, C->P, i, r->lo[i], c1) != 0) {
      mlsba__factor_replay(C, i, st->j + st->jb);
      r->lost[i] = 1;
      continue;
    }
    r->lo[i] = c1 > r->lo[i] ? c1 : r->lo[i];
    if (c1 >= r->hi[i])
      r->lo[i] = r->hi[i] = 0;
  }
  r->top_row = end;
}

void mlsba__factor_flush_resident(mlsba__factor_ctx_t *C) {
  mlsba__factor_residency_t *r = &C->res;
  for (size_t i = 0; i < C->cfg.p; i++) {
    if (r->lo[i] >= r->hi[i])
      continue;
    if (mlsba__factor_cl_fetch(r, C->P, i, r->lo[i], r->hi[i]) == 0)
      r->lo[i] = r->hi[i] = 0;
    else
      mlsba__factor_replay(C, i, r->applied);
  }
}

void mlsba__factor_release_resident(mlsba__factor_ctx_t *C) {
  mlsba__factor_residency_t *r = &C->res;
  for (size_t i = 0; r->env && i < C->cfg.p; i++)
    if (r->env[i])
      mlsba__factor_cl_release(r, i);
  mlsba_load_destroy(r->work);
  r->work = NULL;
}
