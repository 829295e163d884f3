/* The cores' function of the update, and how cores share the ends of
 * their shares. The models split a step before it runs; a core still ends
 * before or after the other by a few percent (a step that another process
 * or the panel's time made longer, a model point a tenth off): 55 ms of a
 * 0.6 s LU at n = 4096 here, one core idle at the end of every step. So a
 * core updates its share in pieces from its front, a large one first (all
 * but an eighth), then halves, and a core whose share is done takes half
 * of what another core has not begun, from its end. Every extra piece
 * packs the panel's operand again (as much as 11 columns' update, 3968
 * rows), so no piece is smaller than SHARE_PIECE units unless it is all
 * that is left. */
#include "../core/clock.h"
#include "driver.h"

typedef mlsba__factor_step_t step_t;

enum { SHARE_PIECE = 32 };

/* Each core's range of logical units, the next panel's units excepted
 * (the panel's core updates them first, then factorizes the panel).
 * Sharing needs two cores and no redo (a redo's units are remapped). */
void mlsba__factor_open_shares(step_t *st) {
  const mlsba__factor_cfg_t *c = st->cfg;
  const mlsba__factor_layout_t *lay = st->lay;
  mlsba__factor_shares_t *s = st->shares;
  size_t cores = 0;
  for (size_t i = 0; i < c->p; i++) {
    int core = lay->load[i] > 0 && mlsba__factor_is_core(c, i);
    int64_t ahead = (long)i == c->panel_dev && st->plan.lookahead && st->jbn > 0
                        ? st->plan.need
                        : 0;
    s->next[i] = core ? lay->log_off[i] + ahead : 0;
    s->end[i] = core ? lay->log_off[i] + lay->load[i] : 0;
    s->did[i] = core ? ahead : lay->load[i]; /* the others keep theirs */
    s->started[i] = 0;
    cores += (size_t)core;
  }
  st->sharing = cores >= 2 && st->remap == NULL;
}

/* The next piece of core i's own share: *n units from *u (0: none left). */
static void take_own(const step_t *st, size_t i, int64_t *u, int64_t *n) {
  mlsba__factor_shares_t *s = st->shares;
  pthread_mutex_lock(&s->mu);
  int64_t rest = s->end[i] - s->next[i];
  *n = !st->sharing || rest < 2 * SHARE_PIECE ? rest
       : rest / 8 >= SHARE_PIECE              ? rest - rest / 8
                                              : rest / 2;
  *u = s->next[i];
  s->next[i] += *n;
  s->did[i] += *n;
  pthread_mutex_unlock(&s->mu);
}

/* Half of what the core furthest from its end has not begun, from that
 * end, for core i: 0 when no core has two pieces left. A core that has
 * not begun is left alone: if its group fails before it does, a redo
 * takes its whole share. */
static int take_other(const step_t *st, size_t i, int64_t *u, int64_t *n) {
  mlsba__factor_shares_t *s = st->shares;
  size_t p = st->cfg->p;
  pthread_mutex_lock(&s->mu);
  size_t from = p;
  int64_t most = 2 * SHARE_PIECE - 1;
  for (size_t v = 0; v < p; v++)
    if (v != i && s->started[v] && s->end[v] - s->next[v] > most) {
      most = s->end[v] - s->next[v];
      from = v;
    }
  if (from < p) {
    *n = most / 2;
    s->end[from] -= *n;
    *u = s->end[from];
    s->did[i] += *n;
  }
  pthread_mutex_unlock(&s->mu);
  return from < p;
}

/* A core's units after the next panel's: its own in pieces, then, when
 * the step shares, what it can take from the others. */
static void update_shared(const step_t *st, size_t i) {
  const mlsba__factor_problem_t *P = st->P;
  int64_t u, n;
  for (take_own(st, i, &u, &n); n > 0; take_own(st, i, &u, &n))
    P->ops->update(P, st->j, st->jb, u, u + n);
  while (st->sharing && take_other(st, i, &u, &n))
    P->ops->update(P, st->j, st->jb, u, u + n);
}

/* A redo's units [u0, u1) through its remap, run by run of consecutive
 * logical units. */
static void update_remapped(const step_t *st, int64_t u0, int64_t u1) {
  const mlsba__factor_problem_t *P = st->P;
  while (u0 < u1) {
    int64_t run = 1;
    while (u0 + run < u1 && st->remap[u0 + run] == st->remap[u0] + run)
      run++;
    P->ops->update(P, st->j, st->jb, st->remap[u0], st->remap[u0] + run);
    u0 += run;
  }
}

/* A core's share of the step: units [first, first + count) as the
 * executor numbers them, the next panel factorized after its units. */
int mlsba__factor_core_units(void *user, int64_t first, int64_t count) {
  step_t *st = user;
  mlsba__factor_problem_t *P = st->P;
  long i = mlsba__factor_share_device(st->lay, first);
  if (i < 0)
    return 1; /* not a range this step gave out */
  if (st->remap) {
    update_remapped(st, first, first + count);
    st->done[i] = 1;
    return 0;
  }
  pthread_mutex_lock(&st->shares->mu);
  st->shares->started[i] = 1;
  pthread_mutex_unlock(&st->shares->mu);
  int64_t lo = st->lay->log_off[i];
  if (i == st->cfg->panel_dev && st->plan.lookahead && st->jbn > 0) {
    P->ops->update(P, st->j, st->jb, lo, lo + st->plan.need);
    double t = mlsba__now();
    st->stop = mlsba__factor_panel_on_core(P, st);
    st->panel_s = mlsba__now() - t;
    st->panel_done = 1;
  }
  update_shared(st, (size_t)i);
  st->done[i] = 1;
  return 0;
}
