/* A step and its next panel: what the step is, the next panel's flops and
 * time (virtual, or as the last panel measured), and its factorization on
 * the panel's core. */
#include <string.h>

#include "../partition/fpm.h"
#include "driver.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

void mlsba__factor_step_init(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                             int64_t j, int64_t jb) {
  mlsba__factor_problem_t *P = C->P;
  int64_t kmax = mlsba__factor_diag(P);
  *st = (mlsba__factor_step_t){.j = j,
                               .jb = jb,
                               .P = P,
                               .cfg = &C->cfg,
                               .lay = &C->lay,
                               .shares = &C->shares,
                               .res = &C->res};
  st->units = P->ops->units(P, j, jb);
  st->unit_flops = P->ops->unit_flops(P, j, jb);
  st->jn = j + jb;
  st->jbn = st->jn < kmax ? min64(P->nb, kmax - st->jn) : 0;
  st->may_look = P->ops->lookahead && C->cfg.panel_dev >= 0;
  st->plan.ahead_dev = C->cfg.panel_dev;
  st->plan.lookahead = st->may_look;
  st->plan.need = st->plan.lookahead ? min64(st->jbn, st->units) : 0;
}

double mlsba__factor_sim_panel_time(const mlsba__factor_ctx_t *C, double flops,
                                    int64_t jb) {
  long d = C->cfg.panel_dev >= 0 ? C->cfg.panel_dev : 0;
  return flops / mlsba__fpm_speed(C->models.rate[d], (double)jb);
}

/* A split solve leaves the panel's core the diagonal block, nb^3 / 3
 * flops. */
double mlsba__factor_next_panel_flops(const mlsba__factor_ctx_t *C,
                                      const mlsba__factor_step_t *st) {
  double b = (double)st->jbn;
  return st->plan.solve_apart ? b * b * b / 3
                              : C->P->ops->panel_flops(C->P, st->jn, st->jbn);
}

int mlsba__factor_solve_splittable(const mlsba__factor_ctx_t *C,
                                   const mlsba__factor_step_t *st) {
  const mlsba__factor_problem_t *P = C->P;
  return P->ops->solve_rows && st->may_look && st->jbn > 0 &&
         P->ops->solve_rows(P, st->jn, st->jbn) > 0;
}

int mlsba__factor_panel_on_core(mlsba__factor_problem_t *P,
                                const mlsba__factor_step_t *st) {
  return st->plan.solve_apart ? P->ops->panel_diag(P, st->jn, st->jbn)
                              : P->ops->panel(P, st->jn, st->jbn);
}

/* A split solve's rows are only timed on a simulated platform: the
 * calling thread computes the panel whole. */
int mlsba__factor_panel_alone(const mlsba__factor_ctx_t *C,
                              const mlsba__factor_step_t *st) {
  return C->cfg.virt ? C->P->ops->panel(C->P, st->jn, st->jbn)
                     : mlsba__factor_panel_on_core(C->P, st);
}

/* A step without lookahead where the panel's core factorizes the next
 * panel's diagonal block inside its share: the update of that whole
 * block's lower triangle with the step's panel, jb nb (nb + 1) flops, on
 * the panel's core. */
double mlsba__factor_diag_update_time(const mlsba__factor_ctx_t *C,
                                      const mlsba__factor_step_t *st) {
  if (!st->plan.diag_first)
    return 0;
  double b = (double)st->jbn;
  return mlsba__factor_sim_panel_time(C, (double)st->jb * b * (b + 1), st->jbn);
}

/* Its share begins with the next panel's first columns, so it updates the
 * rest of the block, r = nb - x columns of it, r (r + 1) / (nb (nb + 1))
 * of the whole (their owners update those columns whole as well: counted
 * twice, not saved). */
double mlsba__factor_diag_rest_time(const mlsba__factor_ctx_t *C,
                                    const mlsba__factor_step_t *st, int64_t x) {
  double b = (double)st->jbn, r = (double)(st->jbn - x);
  return r > 0 ? mlsba__factor_diag_update_time(C, st) * r * (r + 1) /
                     (b * (b + 1))
               : 0;
}

double mlsba__factor_panel_estimate(const mlsba__factor_ctx_t *C,
                                    const mlsba__factor_step_t *st) {
  if (st->jbn == 0)
    return 0;
  double flops = mlsba__factor_next_panel_flops(C, st);
  if (C->cfg.virt)
    return mlsba__factor_sim_panel_time(C, flops, st->jbn);
  const mlsba__factor_models_t *M = &C->models;
  if (M->panel_flops <= 0)
    return M->panel_s;
  /* One panel in a call may run several times as long as the others (the
   * second, the first on the panel's core, took 18-33 ms where the rest
   * took 4-7 at n = 4096, in both precisions): planned on it alone, the
   * next step gave that core too little and it idled 15 ms. The faster of
   * the last two panels' rates plans it. */
  if (M->prev_panel_s > 0 && M->prev_panel_flops > 0 &&
      M->prev_panel_s / M->prev_panel_flops < M->panel_s / M->panel_flops)
    return M->prev_panel_s * flops / M->prev_panel_flops;
  return M->panel_s * flops / M->panel_flops;
}

/* ---- the panel on several cores ------------------------------------------
 * With many cores, one core's panel (and the next panel's columns it
 * updates first) is longer than the step's update shared by the others:
 * on a simulated 16-core node the panel's core ends last at half of LU's
 * steps, and from 32 cores on at every one. A team of cores then shares
 * the next panel's columns and factorizes the panel together: the parts
 * that split by rows (the recursion's products, a Cholesky panel's
 * solve) on every member, the rest (ops->panel_serial_flops: LU's
 * column-by-column leaves and their pivot search) on the panel's core,
 * the other members waiting for it. */

/* The fewest rows of the panel a member takes: fewer, and its part costs
 * less than the member's start (the MPI layer's panel says the same of
 * BLIS's threads). */
enum { TEAM_ROWS = 256 };

size_t mlsba__factor_team(const mlsba__factor_ctx_t *C, long *team) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  if (c->panel_dev < 0)
    return 0;
  const char *kind = c->pl->dev[c->panel_dev].kind;
  size_t n = 0;
  team[n++] = c->panel_dev;
  for (size_t k = 0; k < c->p; k++) {
    size_t i = c->group_dev[k];
    int alike = c->virt ? kind && c->pl->dev[i].kind &&
                              strcmp(kind, c->pl->dev[i].kind) == 0
                        : mlsba__factor_is_core(c, i);
    if ((long)i != c->panel_dev && C->dev.active[i] && alike)
      team[n++] = (long)i;
  }
  return n;
}

static double serial_flops(const mlsba__factor_ctx_t *C,
                           const mlsba__factor_step_t *st, double flops) {
  const mlsba__factor_problem_t *P = C->P;
  if (st->plan.solve_apart || !P->ops->panel_serial_flops)
    return flops;
  double s = P->ops->panel_serial_flops(P, st->jn, st->jbn);
  return s < flops ? s : flops;
}

double mlsba__factor_team_panel_time(const mlsba__factor_ctx_t *C,
                                     const mlsba__factor_step_t *st, size_t k) {
  double flops = mlsba__factor_next_panel_flops(C, st);
  if (k <= 1)
    return mlsba__factor_sim_panel_time(C, flops, st->jbn);
  double serial = serial_flops(C, st, flops);
  return mlsba__factor_sim_panel_time(C, serial, st->jbn) +
         mlsba__factor_sim_panel_time(C, flops - serial, st->jbn) / (double)k;
}

/* The next panel's columns on the panel's core alone (virtual). */
static double ahead_alone(const mlsba__factor_ctx_t *C,
                          const mlsba__factor_step_t *st) {
  double x = (double)st->plan.need;
  return x > 0 ? x * st->unit_flops /
                     mlsba__fpm_speed(C->models.rate[C->cfg.panel_dev], x)
               : 0;
}

/* The step's work, the update and the panel, spread over every device in
 * use at its speed for an even share: the time the team's chain may take
 * without making the step longer. */
static double spread_time(const mlsba__factor_ctx_t *C,
                          const mlsba__factor_step_t *st, double flops) {
  size_t used = 0;
  for (size_t i = 0; i < C->cfg.p; i++)
    used += C->dev.active[i] != 0;
  double x = used ? (double)st->units / (double)used : 0, speed = 0;
  for (size_t i = 0; x > 0 && i < C->cfg.p; i++)
    if (C->dev.active[i] && mlsba_model_num_points(C->models.rate[i]) > 0)
      speed += mlsba__fpm_speed(C->models.rate[i], x < 1 ? 1 : x);
  return speed > 0 ? ((double)st->units * st->unit_flops + flops) / speed : 0;
}

/* The fewest members whose chain (their part of the next panel's columns,
 * then the panel) fits in the step's work spread over every device: more
 * would wait longer on the panel's serial part than they save. At most
 * every core of the team, one member for TEAM_ROWS rows of the panel and
 * one for each of the next panel's columns. Simulated platforms only: a
 * real panel runs on its core alone. */
size_t mlsba__factor_team_size(const mlsba__factor_ctx_t *C,
                               const mlsba__factor_step_t *st, size_t most) {
  const mlsba__factor_plan_t *w = &st->plan;
  if (!C->cfg.virt || most < 2 || st->jbn == 0 || !w->lookahead ||
      w->need <= 0 || w->ahead_dev != C->cfg.panel_dev)
    return 1;
  size_t rows = (size_t)((C->P->m - st->jn) / TEAM_ROWS);
  size_t cap = most < rows ? most : rows;
  cap = cap < (size_t)w->need ? cap : (size_t)w->need;
  double flops = mlsba__factor_next_panel_flops(C, st);
  double limit = spread_time(C, st, flops), ahead = ahead_alone(C, st);
  for (size_t k = 1; k < cap; k++)
    if (ahead / (double)k + mlsba__factor_team_panel_time(C, st, k) <= limit)
      return k;
  return cap > 1 ? cap : 1;
}

double mlsba__factor_team_ahead_time(const mlsba__factor_ctx_t *C,
                                     const mlsba__factor_step_t *st, size_t k) {
  return k > 1 ? ahead_alone(C, st) / (double)k : 0;
}
