/* The nodes' capacities in INPA's head: see inpa_caps.h. */
#include "inpa_caps.h"

void mlsba__inpa_even_split(size_t q, int64_t W, const int64_t *cap,
                            int64_t *w) {
  int64_t left = W;
  size_t open = q;
  for (size_t i = 0; i < q; i++)
    w[i] = -1; /* not given yet */
  for (int capped = 1; capped && open > 0;) {
    capped = 0;
    int64_t share = left / (int64_t)open;
    for (size_t i = 0; i < q; i++)
      if (w[i] < 0 && cap[i] < share + 1) {
        w[i] = cap[i];
        left -= cap[i];
        open--;
        capped = 1;
      }
  }
  int64_t share = open ? left / (int64_t)open : 0;
  int64_t extra = open ? left % (int64_t)open : 0;
  for (size_t i = 0; i < q; i++)
    if (w[i] < 0)
      w[i] = share + (extra-- > 0 ? 1 : 0);
}

void mlsba__inpa_shares_within_caps(size_t q, const int64_t *cap, double *speed,
                                    int64_t *w) {
  int64_t excess = 0;
  for (size_t i = 0; i < q; i++)
    if (w[i] > cap[i]) {
      excess += w[i] - cap[i];
      w[i] = cap[i];
    }
  while (excess > 0) {
    size_t best = q;
    for (size_t i = 0; i < q; i++)
      if (w[i] < cap[i] && (best == q || speed[i] > speed[best]))
        best = i;
    if (best == q)
      return; /* cannot happen: the caps sum to W or more */
    int64_t room = cap[best] - w[best], give = room < excess ? room : excess;
    w[best] += give;
    excess -= give;
    speed[best] = -1; /* full or done: not picked again */
  }
}

/* The rows of each column laid out again from the top, in their order,
 * after heights changed (a column's heights still sum to nb); row is
 * scratch of q. */
static void restack(size_t q, mlsba__cma_rect_t *r, int64_t *row) {
  for (size_t i = 0; i < q; i++) {
    row[i] = 0; /* the heights of the nodes above i in its column */
    for (size_t j = 0; j < q; j++)
      if (r[j].column == r[i].column && r[j].row < r[i].row)
        row[i] += r[j].m;
  }
  for (size_t i = 0; i < q; i++)
    r[i].row = row[i];
}

void mlsba__inpa_rects_within_caps(size_t q, const int64_t *cap,
                                   mlsba__cma_rect_t *r, int64_t *scratch) {
  int moved = 0;
  for (size_t i = 0; i < q; i++) {
    while (r[i].m > 1 && r[i].m * r[i].n > cap[i]) {
      size_t to = q;
      int64_t room = -1;
      for (size_t j = 0; j < q; j++) {
        int64_t left = cap[j] - (r[j].m + 1) * r[j].n;
        if (j != i && r[j].column == r[i].column && left > room) {
          to = j;
          room = left;
        }
      }
      if (to == q || room < 0)
        break;
      r[i].m--;
      r[to].m++;
      moved = 1;
    }
  }
  if (moved)
    restack(q, r, scratch);
}
