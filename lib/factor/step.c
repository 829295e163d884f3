/* A step and its next panel: what the step is, the next panel's flops and
 * time (virtual, or as the last panel measured), and its factorization on
 * the panel's core. */
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
  if (C->models.panel_flops <= 0)
    return C->models.panel_s;
  return C->models.panel_s * flops / C->models.panel_flops;
}
