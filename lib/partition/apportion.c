/* Turning real shares into integer loads that sum exactly and respect caps:
 * what the constant-model and DLT partitioners need after their closed
 * forms. */
#include <math.h>
#include <stdlib.h>

#include "grouped.h"

/* Fractional parts to sort by, largest first, ties to the lower index. */
typedef struct {
  double frac;
  size_t i;
} frac_t;

static int by_fraction(const void *a, const void *b) {
  const frac_t *x = a, *y = b;
  if (x->frac != y->frac)
    return x->frac < y->frac ? 1 : -1;
  return (x->i > y->i) - (x->i < y->i);
}

/* Entries by room (how much each can still give or take), smallest first. */
typedef struct {
  int64_t room;
  size_t i;
} room_t;

static int by_room(const void *a, const void *b) {
  const room_t *x = a, *y = b;
  return (x->room > y->room) - (x->room < y->room);
}

/* Move d units (sign = +1: into the entries, up to their caps; -1: out of
 * them, down to 0) in even shares, smallest room first so that an entry
 * that fills up passes its share on. One pass, O(m log m), whatever d is:
 * what rounding leaves after it (less than one unit per entry) the caller
 * places by largest remainder. Returns the units it could not move. */
static int64_t move_evenly(const int64_t *cap, size_t m, int64_t d, int sign,
                           int64_t *out) {
  room_t *r = malloc(m * sizeof *r);
  size_t k = 0;
  if (r == NULL)
    return d; /* out of memory: the caller's passes still place them */
  for (size_t i = 0; i < m; i++) {
    int64_t room = sign > 0 ? cap[i] - out[i] : out[i];
    if (room > 0)
      r[k++] = (room_t){room, i};
  }
  qsort(r, k, sizeof *r, by_room);
  for (size_t j = 0; j < k && d > 0; j++) {
    int64_t share = d / (int64_t)(k - j);
    int64_t give = share < r[j].room ? share : r[j].room;
    out[r[j].i] += sign * give;
    d -= give;
  }
  free(r);
  return d;
}

/* Largest remainder, worked (a share is clamped to its cap first; ties go
 * to the lower index):
 *
 *   x              cap     total  floors  left  out
 *   2.5 2.5 5.0    9 9 9   10     2 2 5   1     3 2 5
 *   0.4 0.4 0.2    9 9 9   1      0 0 0   1     1 0 0
 *   1.7 1.2 0.1    9 9 9   3      1 1 0   1     2 1 0
 *   4.6 4.6 0.8    4 9 9   10     4 4 0   2     4 5 1  */
void mlsba__round_shares(const double *x, const int64_t *cap, size_t m,
                         int64_t total, int64_t *out) {
  /* Shares outside [0, cap] or not numbers (a model at the edge of the
   * accepted range) are clamped before the floor, which is then exact. The
   * running sum stays far below overflow: the floors add up to total up to
   * rounding, and a sum past 2^62 can only come from such shares. */
  const int64_t limit = INT64_MAX / 2;
  int64_t sum = 0;
  for (size_t i = 0; i < m; i++) {
    double xi = x[i] > 0 ? x[i] : 0;
    xi = xi < (double)cap[i] ? xi : (double)cap[i];
    int64_t f = (int64_t)floor(xi);
    out[i] = f < limit - sum ? f : limit - sum;
    sum += out[i];
  }
  frac_t *order = malloc(m * sizeof *order);
  if (order) {
    for (size_t i = 0; i < m; i++)
      order[i] = (frac_t){x[i] > 0 ? x[i] - (double)out[i] : 0, i};
    qsort(order, m, sizeof *order, by_fraction);
  }
  /* More than one unit per entry to place or take back: the shares were
   * far off (not rounding), so spread the difference evenly first. One
   * unit per entry and pass would take time linear in total. */
  if (total - sum > (int64_t)m || sum - total > (int64_t)m) {
    int sign = total > sum ? 1 : -1;
    int64_t left =
        move_evenly(cap, m, sign > 0 ? total - sum : sum - total, sign, out);
    sum = total - sign * left;
  }
  /* Largest remainder first, one unit per entry and pass. */
  while (sum < total) {
    int64_t before = sum;
    for (size_t k = 0; k < m && sum < total; k++) {
      size_t i = order ? order[k].i : k;
      if (out[i] < cap[i]) {
        out[i]++;
        sum++;
      }
    }
    if (sum == before)
      break; /* caps add up to less than total: the caller's precondition */
  }
  while (sum > total) {
    int64_t before = sum;
    for (size_t k = m; sum > total && k-- > 0;) {
      size_t i = order ? order[k].i : k;
      if (out[i] > 0) {
        out[i]--;
        sum--;
      }
    }
    if (sum == before)
      break;
  }
  free(order);
}

void mlsba__proportional(const double *w, const int64_t *cap, size_t m,
                         int64_t total, int64_t *out) {
  double *x = malloc(m * sizeof *x);
  unsigned char *fixed = calloc(m, 1);
  if (x == NULL || fixed == NULL) {
    /* Out of memory: an even split within caps is still a valid answer. */
    for (size_t i = 0; i < m; i++)
      out[i] = 0;
    int64_t sum = 0;
    for (int progress = 1; sum < total && progress;) {
      progress = 0;
      for (size_t i = 0; i < m && sum < total; i++)
        if (out[i] < cap[i]) {
          out[i]++;
          sum++;
          progress = 1;
        }
    }
    free(x);
    free(fixed);
    return;
  }
  /* Weights that are not finite (or add up to infinity) give no shares:
   * then even shares, still a valid answer. */
  int any_weight = 0;
  double wtotal = 0;
  for (size_t i = 0; w && i < m; i++) {
    any_weight |= w[i] > 0;
    wtotal += w[i] > 0 ? w[i] : 0;
  }
  if (!isfinite(wtotal))
    any_weight = 0;
  /* Water-filling: share what is left among the entries not yet at their
   * cap; whoever would exceed the cap is fixed at it, and the rest share
   * again. Each round fixes at least one entry. */
  double left = (double)total;
  for (;;) {
    double wsum = 0;
    for (size_t i = 0; i < m; i++)
      if (!fixed[i])
        wsum += !any_weight ? 1 : w[i] > 0 ? w[i] : 0;
    int changed = 0;
    for (size_t i = 0; i < m; i++) {
      if (fixed[i])
        continue;
      double wi = !any_weight ? 1 : w[i] > 0 ? w[i] : 0;
      x[i] = wsum > 0 ? left * wi / wsum : 0;
      if (x[i] > (double)cap[i]) {
        x[i] = (double)cap[i];
        fixed[i] = 1;
        left -= x[i];
        changed = 1;
      }
    }
    if (!changed || left <= 0)
      break;
  }
  mlsba__round_shares(x, cap, m, total, out);
  free(x);
  free(fixed);
}
