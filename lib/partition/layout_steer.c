/* One step of the walks of layout_walk.c: who gets the next block column
 * (among node columns) or block row (among a node column's nodes).
 *
 * Candidate k holds n blocks of the dimension walked in the trailing
 * matrix and should hold x E, x its fraction of the trailing extent E.
 *
 * Reverse walk (E grows by one at each step): among the candidates below
 * their target, the one whose deficit would reach a whole block first
 * as E grows, at E = (n + 1) / x. That is Balinski and Young's quota
 * method (Jefferson's divisor rule within the quota), which keeps every
 * count within one block of x E at every E when the fractions do not
 * move; "the one furthest below" does not (we measured counts 1.14
 * blocks off on random fractions; and on random node models the sum of
 * the optima over the predicted step sum fell from 0.91 to 0.72).
 * Caps can leave no candidate below its target: then the one furthest
 * below among those with room. Exact ties (equal fractions: alike
 * nodes) go to the candidate whose blocks held so far take the fewest
 * updates: the trailing block a step leaves over then passes between
 * them (0 1 1 0 0 1 1 0 ... from the end for two), where "the first"
 * gave it to the same node at every other size, which then ran the most
 * updates of all (2 equal ranks, LU at N = 8192: 5% more, its partner
 * waiting 0.17-0.61 s a run; lu32i). Block columns only: a node column's
 * rows keep "the first" (turned rows, branch lay32-rows, showed a hang
 * in Cholesky's delivery, since cut; with it, they cost Cholesky 8-9%
 * of its simulated GFLOPS on 16 and 64 Keeneland nodes, 4 x 4 and 8 x 8,
 * and gained LU 0.1-0.3%: benchmarks/RESULTS.md, hang32).
 *
 * Forward walk (E falls by one): the counts of the whole matrix first
 * (the fractions at t = 0 apportioned, within the caps), then at each
 * step the block leaving the trailing matrix is taken from a candidate
 * above its target at the next size, the one that would be a block over
 * first as E falls, at E = (n - 1) / x: the same quota method run
 * backwards, again within one block when the fractions do not move. */
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "grouped.h"
#include "layout_walk.h"

#define TIE MLSBA__WALK_TIE

/* Candidate k's fraction at t (rows: node k in its column; else node
 * column k), and the trailing extent there. */
static double fraction(const mlsba__walk_t *w, int rows, size_t k, int64_t t) {
  size_t at = w->frozen ? 0 : (size_t)t;
  return rows ? w->g[at * w->q + k] : w->f[at * w->ncols + k];
}

static int64_t extent(const mlsba__walk_t *w, int rows, int64_t t) {
  return (rows ? w->brows : w->bcols) - t;
}

typedef struct {
  size_t pick, fallback;
  double key, gap, load;
} choice_t;

#define CHOICE_INIT                                                            \
  { SIZE_MAX, SIZE_MAX, INFINITY, -INFINITY, INFINITY }

/* The updates block column t takes: those of the steps before it, each
 * over its trailing blocks there (LU: the whole trailing height;
 * Cholesky: the lower triangle's). */
static double updates(const mlsba__walk_t *w, int64_t t) {
  double T = (double)t, B = (double)w->brows;
  if (w->lower)
    return B > T ? T * (B - T) : 0;
  double S = T < B ? T : B; /* the steps before t */
  return S * (2 * B - S + 1) / 2;
}

/* Reverse: k holding n before step t. */
static void below(const mlsba__walk_t *w, choice_t *ch, int rows, size_t k,
                  int64_t n, int64_t t) {
  double x = fraction(w, rows, k, t);
  double deficit = x * (double)extent(w, rows, t) - (double)n;
  if (deficit > ch->gap + TIE) {
    ch->gap = deficit;
    ch->fallback = k;
  }
  if (deficit <= TIE)
    return;
  double due = ((double)n + 1) / x;        /* x > 0 where deficit > 0 */
  double load = rows ? 0 : w->load[k] / x; /* rows: ties to the first */
  if (due < ch->key * (1 - TIE) ||
      (due <= ch->key * (1 + TIE) && load < ch->load * (1 - TIE))) {
    ch->key = due;
    ch->load = load;
    ch->pick = k;
  }
}

/* Whether a forward candidate due at `due` (>= 0) goes before the one
 * picked: a larger due, ties to the first. */
static int sooner(double due, const choice_t *ch) {
  if (ch->pick == SIZE_MAX)
    return 1;
  if (isinf(ch->key))
    return 0;
  return isinf(due) || due > ch->key * (1 + TIE);
}

/* Forward: k holding n > 0 at step t, of which one leaves. The largest
 * (n - 1) / x goes first; x = 0 (a target of nothing) before any. */
static void above(const mlsba__walk_t *w, choice_t *ch, int rows, size_t k,
                  int64_t n, int64_t t) {
  int64_t E = extent(w, rows, t + 1);
  double x = E > 0 ? fraction(w, rows, k, t + 1) : 0;
  double excess = (double)n - x * (double)E;
  if (excess > ch->gap + TIE) {
    ch->gap = excess;
    ch->fallback = k;
  }
  double due = x > 0 ? ((double)n - 1) / x : INFINITY;
  if (excess > TIE && sooner(due, ch)) {
    ch->key = due;
    ch->pick = k;
  }
}

static size_t chosen(const choice_t *ch) {
  return ch->pick != SIZE_MAX ? ch->pick : ch->fallback;
}

/* ---- caps ------------------------------------------------------------ */

/* The most block rows node i may hold at node column width `width` (LU:
 * every row is that wide), or brows when it has no cap. */
static int64_t rows_within(const mlsba__walk_t *w, size_t i, int64_t width) {
  if (w->cap[i] < 0 || width == 0)
    return w->brows;
  int64_t r = w->cap[i] / width;
  return r < w->brows ? r : w->brows;
}

/* Whether node column c can hold `width` block columns within its nodes'
 * caps: for LU, its nodes hold all brows rows of that width; for
 * Cholesky, together the lower-triangle blocks `tri` of those columns
 * (the row walk then checks each node). */
static int column_fits(const mlsba__walk_t *w, size_t c, int64_t width,
                       int64_t tri) {
  int64_t held = 0;
  for (size_t i = 0; i < w->q && held < (w->lower ? tri : w->brows); i++) {
    if (w->node_column[i] != c)
      continue;
    if (w->cap[i] < 0)
      return 1;
    held += w->lower ? w->cap[i] : rows_within(w, i, width);
  }
  return held >= (w->lower ? tri : w->brows);
}

static int no_room(const char *what, long long t, size_t c) {
  return mlsba__fail(MLSBA_ECAPACITY,
                     "layout: the caps are too small: no %s%zu holds block "
                     "%s %lld within its caps",
                     what[0] == 'c' ? "node column " : "node of node column ",
                     c, what[0] == 'c' ? "column" : "row", t);
}

/* ---- reverse --------------------------------------------------------- */

int mlsba__walk_reverse_columns(mlsba__walk_t *w) {
  for (int64_t t = w->bcols - 1; t >= 0; t--) {
    choice_t ch = CHOICE_INIT;
    int64_t rows_below = w->brows > t ? w->brows - t : 0;
    for (size_t c = 0; c < w->ncols; c++)
      if (column_fits(w, c, w->width[c] + 1, w->tri[c] + rows_below))
        below(w, &ch, 0, c, w->width[c], t);
    size_t pick = chosen(&ch);
    if (pick == SIZE_MAX)
      return no_room("column", (long long)t, 0);
    w->bcol_column[t] = pick;
    w->width[pick]++;
    w->tri[pick] += rows_below;
    w->load[pick] += updates(w, t);
  }
  return 0;
}

/* For Cholesky, row t of node column c holds the column's block columns
 * at or left of t; for LU all of them. */
static int64_t row_cost(const mlsba__walk_t *w, size_t c, int64_t left) {
  return w->lower ? left : w->width[c];
}

int mlsba__walk_reverse_rows(mlsba__walk_t *w, size_t c) {
  int64_t left = w->width[c];
  for (int64_t j = w->brows; j < w->bcols; j++)
    left -= w->bcol_column[j] == c;
  for (size_t i = 0; i < w->q; i++)
    w->count[i] = 0;
  for (int64_t t = w->brows - 1; t >= 0; t--) {
    int64_t cost = row_cost(w, c, left);
    choice_t ch = CHOICE_INIT;
    for (size_t i = 0; i < w->q; i++)
      if (w->node_column[i] == c &&
          (w->cap[i] < 0 || w->used[i] + cost <= w->cap[i]))
        below(w, &ch, 1, i, w->count[i], t);
    size_t pick = chosen(&ch);
    if (pick == SIZE_MAX)
      return no_room("row", (long long)t, c);
    w->row_owner[c * (size_t)w->brows + (size_t)t] = pick;
    w->count[pick]++;
    w->used[pick] += cost;
    if (t < w->bcols && w->bcol_column[t] == c)
      left--;
  }
  return 0;
}

/* ---- forward --------------------------------------------------------- */

/* The widest width at which node column c fits (bisection: the rows its
 * nodes hold only fall as the width grows). */
static int64_t widest(const mlsba__walk_t *w, size_t c) {
  if (w->lower)
    return w->bcols;
  int64_t lo = 0, hi = w->bcols;
  while (lo < hi) {
    int64_t mid = hi - (hi - lo) / 2;
    if (column_fits(w, c, mid, 0))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int mlsba__walk_forward_columns(mlsba__walk_t *w) {
  int64_t room = 0;
  for (size_t c = 0; c < w->ncols; c++) {
    w->scratch_cap[c] = widest(w, c);
    w->scratch[c] = fraction(w, 0, c, 0);
    room += w->scratch_cap[c];
  }
  if (room < w->bcols)
    return no_room("column", (long long)(w->bcols - 1), 0);
  mlsba__proportional(w->scratch, w->scratch_cap, w->ncols, w->bcols, w->width);
  for (size_t c = 0; c < w->ncols; c++)
    w->count[c] = w->width[c];
  for (int64_t t = 0; t < w->bcols; t++) {
    choice_t ch = CHOICE_INIT;
    for (size_t c = 0; c < w->ncols; c++)
      if (w->count[c] > 0)
        above(w, &ch, 0, c, w->count[c], t);
    size_t pick = chosen(&ch);
    w->bcol_column[t] = pick;
    w->count[pick]--;
    w->tri[pick] += w->brows > t ? w->brows - t : 0;
  }
  for (size_t c = 0; c < w->ncols; c++)
    if (w->lower && !column_fits(w, c, w->width[c], w->tri[c]))
      return no_room("column", (long long)(w->bcols - 1), c);
  return 0;
}

int mlsba__walk_forward_rows(mlsba__walk_t *w, size_t c) {
  size_t k = 0;
  for (size_t i = 0; i < w->q; i++)
    if (w->node_column[i] == c) {
      w->scratch[k] = fraction(w, 1, i, 0);
      w->scratch_cap[k++] = rows_within(w, i, w->lower ? 0 : w->width[c]);
    }
  int64_t held = 0;
  for (size_t e = 0; e < k; e++)
    held += w->scratch_cap[e];
  if (held < w->brows)
    return no_room("row", (long long)(w->brows - 1), c);
  int64_t *rows = malloc(k * sizeof *rows);
  if (!rows)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  mlsba__proportional(w->scratch, w->scratch_cap, k, w->brows, rows);
  for (size_t i = 0, e = 0; i < w->q; i++)
    w->count[i] = w->node_column[i] == c ? rows[e++] : 0;
  free(rows);
  int64_t left = 0;
  for (int64_t t = 0; t < w->brows; t++) {
    left += t < w->bcols && w->bcol_column[t] == c;
    int64_t cost = row_cost(w, c, left);
    choice_t ch = CHOICE_INIT;
    for (size_t i = 0; i < w->q; i++)
      if (w->node_column[i] == c && w->count[i] > 0 &&
          (w->cap[i] < 0 || w->used[i] + cost <= w->cap[i]))
        above(w, &ch, 1, i, w->count[i], t);
    size_t pick = chosen(&ch);
    if (pick == SIZE_MAX)
      return no_room("row", (long long)t, c);
    w->row_owner[c * (size_t)w->brows + (size_t)t] = pick;
    w->count[pick]--;
    w->used[pick] += cost;
  }
  return 0;
}
