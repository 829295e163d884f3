/* MLSBA: simultaneous multi-level divisible load balancing (Ilic & Sousa,
 * seed 002 §IV.B). MLFBA2 (mlfba.c) runs the same search over full group
 * models.
 *
 * Phase 1 is the geometric bisection of bisect.c over the q group models,
 * where reading a crossing of a multi-device group makes floor and ceil of
 * the crossing exact points (Procedure 2, steps 4a/4b/6a). Phase 2 is the
 * refinement of bisect.c, where reading the time of alpha_l + 1 builds that
 * point (Procedure 1). Deviations from the paper's text, and why:
 *
 *  - Step 4a/6a call Procedure 2 when floor or ceil is missing (the paper:
 *    when both are). With both exact, the crossing lies on a segment with
 *    no integer inside, so points built later for other lines cannot move
 *    it: the crossings of U and L need no recomputation (the paper's
 *    "repeat step 4" is then a no-op), and the integer loads around every
 *    crossing are exact rather than interpolated.
 *  - Step 8 rounds the U crossings down, not up: ceil can overshoot N,
 *    and Phase 2 only ever adds units. The floors sum to at most N, are
 *    exact points that finish by the time of U, and so never undercut the
 *    optimum; Phase 2 then adds the fewer than 2q missing units one at a
 *    time, which reaches the integer optimum.
 *  - The initial point is N/q (the paper writes N/P). With q groups, lines
 *    through the fastest and slowest group at N/q bracket the solution,
 *    as in SLBA, which MLSBA generalises. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "bisect.h"
#include "fpm.h"
#include "gmodel.h"
#include "grouped.h"

/* Procedure 2 moves a crossing to a segment between exact points; a few
 * rounds suffice in practice, this bounds shapes outside the papers'. */
#define MAX_EXACT_ROUNDS 64

typedef struct {
  mlsba__gmodel_t *g;
  size_t q;
} groups_t;

/* Midpoint of the built points that bracket x (0 stands for the origin),
 * or 0 when x lies beyond the last point or the bracket has no interior. */
static int64_t bracket_midpoint(const mlsba__gmodel_t *g, double x) {
  int64_t a = 0, b = -1;
  for (size_t i = 0; i < g->n; i++) {
    if ((double)g->xs[i] <= x) {
      a = g->xs[i];
    } else {
      b = g->xs[i];
      break;
    }
  }
  return b - a >= 2 ? a + (b - a) / 2 : 0;
}

/* Crossing of the line of slope 1/T with group g, limited to its cap,
 * with floor and ceil of the crossing exact points.
 *
 * Procedure 2 at the crossing is a secant step: where the interpolation
 * between distant points is poor, the recomputed crossing can creep one
 * unit per round, two points each. From the fourth round on, every other
 * round therefore bisects the pair of built points around the crossing
 * instead (Procedure 1 at their midpoint), as Dekker's method safeguards
 * the secant method: the rounds stay logarithmic in the gap, and the usual
 * case still takes one or two secant rounds. On 300 random platforms this
 * cut the worst group from 342 to 212 points at N = 10^9 and the total
 * by 3% (benchmarks/RESULTS.md). */
static int group_crossing(mlsba__gmodel_t *g, double T, double *x) {
  if (g->cap == 0) {
    *x = 0;
    return 0;
  }
  for (int round = 0;; round++) {
    double c = mlsba__fpm_load_by_time(g->model, T);
    *x = c < (double)g->cap ? c : (double)g->cap;
    if (g->k == 1 || round == MAX_EXACT_ROUNDS)
      return 0;
    int64_t lo = (int64_t)floor(*x), hi = (int64_t)ceil(*x);
    if ((lo == 0 || mlsba__gmodel_find(g, lo) >= 0) &&
        (hi == 0 || mlsba__gmodel_find(g, hi) >= 0))
      return 0;
    int64_t mid = round >= 2 && round % 2 ? bracket_midpoint(g, *x) : 0;
    int err = mid ? mlsba__gmodel_insert_integer_point(g, mid)
                  : mlsba__gmodel_insert_real_point(g, *x);
    if (err)
      return err;
  }
}

static int crossings(void *ctx, double T, double *x, double *sum) {
  groups_t *G = ctx;
  mlsba__ksum_t total = {0, 0};
  for (size_t i = 0; i < G->q; i++) {
    int err = group_crossing(&G->g[i], T, &x[i]);
    if (err)
      return err;
    mlsba__ksum_add(&total, x[i]);
  }
  *sum = mlsba__ksum(&total);
  return 0;
}

static int time_of(void *ctx, size_t i, int64_t load, double *t) {
  groups_t *G = ctx;
  return mlsba__gmodel_time(&G->g[i], load, t);
}

static const mlsba__bisect_ops_t group_ops = {crossings, time_of};

int mlsba__grouped_bisection(const mlsba__grouped_t *G, int full_models,
                             int64_t *alpha, int64_t *beta, size_t *points) {
  size_t q = G->q;
  mlsba__bisect_t B;
  groups_t GG = {.q = q, .g = calloc(q, sizeof(mlsba__gmodel_t))};
  int err = mlsba__bisect_init(&B, q, "mlsba");
  if (!err && GG.g == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "mlsba: out of memory for %zu groups", q);
  size_t ready = 0;
  for (; !err && ready < q; ready++)
    err = mlsba__gmodel_init(&GG.g[ready], G->models + G->first[ready],
                             G->size[ready], G->n, &G->opts);
  if (err)
    goto done;

  B.bisect_angle = G->opts.line_search == MLSBA_LINE_BISECT_ANGLE;
  size_t active = 0;
  for (size_t i = 0; i < q; i++) {
    B.cap[i] = GG.g[i].cap;
    active += GG.g[i].cap > 0;
  }
  /* MLFBA2's first step, as the paper defines it: SLBA for every point. */
  for (size_t i = 0; full_models && !err && i < q; i++) {
    GG.g[i].plain_slba = 1;
    for (int64_t x = 1; !err && GG.g[i].k > 1 && x <= GG.g[i].cap; x++)
      err = mlsba__gmodel_insert_integer_point(&GG.g[i], x);
  }

  /* Step 1 is gmodel's: a single device's model is its group's model.
   * Step 2: every group's performance at N/q (an exact point). Step 3:
   * lines U and L through the fastest and the slowest group there. */
  int64_t x0 = active ? G->n / (int64_t)active : 0;
  x0 = x0 > 1 ? x0 : 1;
  double tu = INFINITY, tl = 0;
  for (size_t i = 0; !err && i < q; i++) {
    mlsba__gmodel_t *g = &GG.g[i];
    if (g->cap == 0)
      continue;
    err = mlsba__gmodel_insert_integer_point(g, x0 < g->cap ? x0 : g->cap);
    if (err)
      break; /* the group model is still empty: nothing to read */
    double t = mlsba__fpm_time(g->model, (double)x0);
    tu = t < tu ? t : tu;
    tl = t > tl ? t : tl;
  }
  /* Steps 4-7 (Phase 1) and Phase 2. */
  if (!err && G->n > 0)
    err = mlsba__bisect_run(&B, &group_ops, &GG, G->n, tu, tl, alpha);
  else if (!err)
    memset(alpha, 0, q * sizeof *alpha);
  for (size_t i = 0; !err && i < q; i++)
    err = mlsba__gmodel_beta(&GG.g[i], alpha[i], beta + G->first[i]);
  for (size_t i = 0; !err && i < q; i++)
    points[i] = mlsba__gmodel_points(&GG.g[i]);
done:
  for (size_t i = 0; i < ready; i++)
    mlsba__gmodel_free(&GG.g[i]);
  free(GG.g);
  mlsba__bisect_free(&B);
  return err;
}

int mlsba__mlsba(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                 size_t *points) {
  return mlsba__grouped_bisection(G, 0, alpha, beta, points);
}
