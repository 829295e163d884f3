/* Geometric bisection (Lastovetsky & Reddy; Phase 1 of MLSBA) and the
 * integer refinement (SLBA step 2; Phase 2 of MLSBA).
 *
 * Geometry: a line of slope 1/T through the origin of the (load, speed)
 * plane meets element i at c_i(T), the largest load finishing by T. Line U
 * has sum c_i <= W, line L has sum c_i >= W; a line B between them replaces
 * one of them, and they converge to the balanced distribution.
 *
 * The papers take B as the bisector of the angle between U and L. Every
 * step costs MLSBA up to two group-model points per group, so the default
 * instead takes B where the sum of crossings, interpolated linearly in T
 * between U and L, reaches W (regula falsi), with the Illinois rule that
 * halves the weight of a side kept twice in a row so that both sides
 * converge. On the seed-002 desktop this cuts the points from 124 to 103
 * and the steps of SLBA over 10^4 devices from 29 to 6
 * (benchmarks/RESULTS.md). Either way B stays strictly between U and L,
 * so the search keeps the papers' bracketing invariant. */
#include "bisect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "grouped.h"

/* Bisection steps before giving up on the float resolution; the angle
 * interval halves each step, so 256 is far beyond what doubles resolve. */
#define MAX_BISECTION_STEPS 256
/* Halvings or doublings allowed when widening the initial lines. */
#define MAX_WIDENING_STEPS 2200

int mlsba__bisect_init(mlsba__bisect_t *b, size_t p, const char *what) {
  memset(b, 0, sizeof *b);
  b->p = p;
  if (p > SIZE_MAX / (8 * sizeof(double)))
    return mlsba__fail(MLSBA_ENOMEM, "%s: %zu elements are too many", what, p);
  b->cap = malloc(p * sizeof *b->cap);
  b->scratch = malloc(4 * p * sizeof *b->scratch);
  b->heap = malloc(p * sizeof *b->heap);
  if (b->cap == NULL || b->scratch == NULL || b->heap == NULL) {
    mlsba__bisect_free(b);
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory for %zu elements", what,
                       p);
  }
  return 0;
}

void mlsba__bisect_free(mlsba__bisect_t *b) {
  free(b->cap);
  free(b->scratch);
  free(b->heap);
  b->cap = NULL;
  b->scratch = NULL;
  b->heap = NULL;
}

typedef struct {
  mlsba__bisect_t *b;
  const mlsba__bisect_ops_t *ops;
  void *ctx;
  double *key; /* refinement keys: time of the element's next unit */
} run_t;

static int converged(const double *xu, const double *xl, size_t p) {
  for (size_t i = 0; i < p; i++)
    if (xl[i] - xu[i] >= 1)
      return 0;
  return 1;
}

/* ---- refinement heap: min key first, ties to the lower index ---------- */

static int heap_less(const double *key, size_t a, size_t b) {
  return key[a] < key[b] || (key[a] == key[b] && a < b);
}

static void heap_sift_down(size_t *h, const double *key, size_t n, size_t pos) {
  for (;;) {
    size_t l = 2 * pos + 1, r = l + 1, best = pos;
    if (l < n && heap_less(key, h[l], h[best]))
      best = l;
    if (r < n && heap_less(key, h[r], h[best]))
      best = r;
    if (best == pos)
      return;
    size_t tmp = h[pos];
    h[pos] = h[best];
    h[best] = tmp;
    pos = best;
  }
}

/* Add r units one at a time, each to the element whose time after taking
 * it is smallest. With non-decreasing times this greedy keeps the makespan
 * at the integer optimum as long as it starts from loads that the optimum
 * does not undercut, which rounding down the U crossings guarantees. */
static int refine(run_t *R, int64_t *x, int64_t r) {
  R->b->refined += r;
  mlsba__bisect_t *b = R->b;
  size_t n = 0;
  int err;
  for (size_t i = 0; i < b->p; i++) {
    if (x[i] < b->cap[i]) {
      if ((err = R->ops->time_of(R->ctx, i, x[i] + 1, &R->key[i])) != 0)
        return err;
      b->heap[n++] = i;
    }
  }
  for (size_t k = n / 2; k-- > 0;)
    heap_sift_down(b->heap, R->key, n, k);
  for (; r > 0; r--) {
    if (n == 0)
      return mlsba__fail(MLSBA_ECAPACITY,
                         "refinement: no device can take another unit");
    size_t i = b->heap[0];
    x[i]++;
    if (x[i] < b->cap[i]) {
      if ((err = R->ops->time_of(R->ctx, i, x[i] + 1, &R->key[i])) != 0)
        return err;
    } else {
      b->heap[0] = b->heap[--n];
    }
    heap_sift_down(b->heap, R->key, n, 0);
  }
  return 0;
}

/* Lines U and L of the search: their times, their crossings and the sums
 * of those; B's crossings are scratch. */
typedef struct {
  double tu, tl, su, sl;
  double *xu, *xl, *xb;
} lines_t;

/* Phase 1: widen U and L until they bracket W, where the papers'
 * assumptions fail: a max_load below N/P pulls L's crossings in (the
 * memory-limited case), and a model that breaks the single-crossing shape
 * can push U's crossings out. */
static int bracket(run_t *R, int64_t W, lines_t *L) {
  const mlsba__bisect_ops_t *ops = R->ops;
  int err;
  if ((err = ops->crossings(R->ctx, L->tu, L->xu, &L->su)) != 0 ||
      (err = ops->crossings(R->ctx, L->tl, L->xl, &L->sl)) != 0)
    return err;
  for (int k = 0; L->su > (double)W && k < MAX_WIDENING_STEPS; k++)
    if ((err = ops->crossings(R->ctx, L->tu *= 0.5, L->xu, &L->su)) != 0)
      return err;
  for (int k = 0; L->sl < (double)W && k < MAX_WIDENING_STEPS; k++)
    if ((err = ops->crossings(R->ctx, L->tl *= 2, L->xl, &L->sl)) != 0)
      return err;
  if (L->su > (double)W || L->sl < (double)W || !isfinite(L->tl))
    return mlsba__fail(MLSBA_ENOCONV,
                       "bisection: cannot bound the solution for %lld units",
                       (long long)W);
  return 0;
}

/* Line B's time between U and L: the angle bisector (the papers'), or
 * regula falsi on the excesses fu = W - su >= 0 and fl = W - sl <= 0.
 * Worked cases of regula falsi, tb = tu + fu (tl - tu) / (fu - fl):
 *
 *   tu  tl  su  sl   W   fu   fl    tb
 *   1   3   6   14  10   4   -4     2     (halfway: sums symmetric)
 *   1   3   9   13  10   1   -3     1.5   (W near U's sum: B near U)
 *   1   3   9   13  10   1   -1.5   1.8   (L kept twice: fl halved)
 *
 * Angles are measured with the speed axis scaled by sigma so that U and L
 * sit either side of 45 degrees: the paper's bisection under a choice of
 * axis units that keeps the angles away from 90 degrees, where doubles
 * would lose the lines. */
static double line_b(const mlsba__bisect_t *b, const lines_t *L, double sigma,
                     double fu, double fl) {
  double tb;
  if (b->bisect_angle) {
    /* The bisector of lines with slopes u = tan(a) and v = tan(b) has
     * slope tan((a + b) / 2) = (u cv + v cu) / (cu + cv), where
     * cu = sqrt(1 + u^2) = 1 / cos(a): the same angle without
     * trigonometry, which otherwise dominates the cost of a step. */
    double u = sigma / L->tu, v = sigma / L->tl;
    double cu = sqrt(1 + u * u), cv = sqrt(1 + v * v);
    tb = sigma * (cu + cv) / (u * cv + v * cu);
  } else {
    tb = L->tu + fu * (L->tl - L->tu) / (fu - fl);
  }
  if (!(tb > L->tu && tb < L->tl))
    tb = L->tu + 0.5 * (L->tl - L->tu);
  return tb;
}

/* Phase 2: a line B between U and L replaces one of them until every
 * element's crossings differ by less than one unit (or U and L are
 * adjacent doubles, or the step limit). B always stays strictly between
 * them: the papers' bracketing invariant. */
static int narrow(run_t *R, int64_t W, lines_t *L) {
  mlsba__bisect_t *b = R->b;
  double sigma = sqrt(L->tu * L->tl);
  double fu = (double)W - L->su, fl = (double)W - L->sl;
  int kept = 0; /* 1: U was kept last step, -1: L, 0: neither yet */
  while (b->steps < MAX_BISECTION_STEPS && !converged(L->xu, L->xl, b->p)) {
    double tb = line_b(b, L, sigma, fu, fl), sb;
    if (!(tb > L->tu && tb < L->tl))
      break; /* U and L are adjacent doubles */
    int err = R->ops->crossings(R->ctx, tb, L->xb, &sb);
    if (err)
      return err;
    double *crossed = L->xb;
    b->steps++;
    if (sb <= (double)W) { /* B replaces U */
      if (kept == -1)
        fl *= 0.5; /* L kept twice in a row: pull B towards it */
      kept = -1;
      fu = (double)W - sb;
      L->su = sb;
      L->tu = tb;
      L->xb = L->xu;
      L->xu = crossed;
    } else { /* B replaces L */
      if (kept == 1)
        fu *= 0.5;
      kept = 1;
      fl = (double)W - sb;
      L->sl = sb;
      L->tl = tb;
      L->xb = L->xl;
      L->xl = crossed;
    }
  }
  return 0;
}

/* Phase 3, when the lines stopped apart with crossings jumping by far
 * more than the refinement should hand out one unit at a time (a model far
 * from the papers' shape): that would take time linear in W. The loads
 * between U and L whose sum is W, rounded by largest remainder, are valid,
 * within caps, found in O(p log p), and as balanced as the lines could
 * tell. 1 when it took this way. */
static int stopped_apart(const mlsba__bisect_t *b, int64_t W, lines_t *L,
                         int64_t *x) {
  size_t p = b->p;
  if (converged(L->xu, L->xl, p) || L->sl - L->su <= 4.0 * (double)p + 1024)
    return 0;
  double lam = L->sl > L->su ? ((double)W - L->su) / (L->sl - L->su) : 0;
  lam = lam > 0 ? (lam < 1 ? lam : 1) : 0;
  for (size_t i = 0; i < p; i++)
    L->xb[i] = L->xu[i] + lam * (L->xl[i] - L->xu[i]);
  mlsba__round_shares(L->xb, b->cap, p, W, x);
  return 1;
}

/* Phase 3: integer loads from U's crossings, rounded down. The check
 * against tu guards the floor against a crossing computed one rounding
 * error too high, so that the refinement starts at or below the integer
 * optimum. The sum of the loads into *sum. */
static int floor_crossings(run_t *R, const lines_t *L, int64_t *x,
                           int64_t *sum) {
  *sum = 0;
  for (size_t i = 0; i < R->b->p; i++) {
    int64_t k = (int64_t)floor(L->xu[i]);
    if (k > R->b->cap[i])
      k = R->b->cap[i];
    for (int d = 0; d < 2 && k > 0; d++) {
      double t;
      int err = R->ops->time_of(R->ctx, i, k, &t);
      if (err)
        return err;
      if (t <= L->tu)
        break;
      k--;
    }
    x[i] = k;
    *sum += k;
  }
  return 0;
}

/* Sum of floors <= sum of crossings <= W; hands back any excess a rounded
 * sum let through, from the element that finishes last. */
static int give_back_excess(run_t *R, int64_t W, int64_t *x, int64_t *sum) {
  while (*sum > W) {
    size_t worst = R->b->p;
    double tw = -1, t;
    for (size_t i = 0; i < R->b->p; i++) {
      if (x[i] == 0)
        continue;
      int err = R->ops->time_of(R->ctx, i, x[i], &t);
      if (err)
        return err;
      if (t > tw) {
        tw = t;
        worst = i;
      }
    }
    x[worst]--;
    (*sum)--;
  }
  return 0;
}

/* The search, phase by phase: bracket, narrow, then integers (from the
 * lines stopped apart, or U's floors less any excess, refined one unit at
 * a time). */
int mlsba__bisect_run(mlsba__bisect_t *b, const mlsba__bisect_ops_t *ops,
                      void *ctx, int64_t W, double tu, double tl, int64_t *x) {
  size_t p = b->p;
  lines_t L = {.tu = tu, .tl = tl, .xu = b->scratch};
  L.xl = L.xu + p;
  L.xb = L.xl + p;
  run_t R = {.b = b, .ops = ops, .ctx = ctx, .key = L.xb + p};
  if (W == 0) {
    memset(x, 0, p * sizeof *x);
    return 0;
  }
  int64_t sum;
  int err = bracket(&R, W, &L);
  if (!err)
    err = narrow(&R, W, &L);
  if (err || stopped_apart(b, W, &L, x))
    return err;
  if ((err = floor_crossings(&R, &L, x, &sum)) != 0 ||
      (err = give_back_excess(&R, W, x, &sum)) != 0)
    return err;
  return refine(&R, x, W - sum);
}

int mlsba__bisect_refine(mlsba__bisect_t *b, const mlsba__bisect_ops_t *ops,
                         void *ctx, int64_t *x, int64_t r) {
  run_t R = {.b = b, .ops = ops, .ctx = ctx, .key = b->scratch + 3 * b->p};
  return refine(&R, x, r);
}
