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

void mlsba__round_shares(const double *x, const int64_t *cap, size_t m,
                         int64_t total, int64_t *out) {
  int64_t sum = 0;
  for (size_t i = 0; i < m; i++) {
    int64_t f = (int64_t)floor(x[i] > 0 ? x[i] : 0);
    out[i] = f < cap[i] ? f : cap[i];
    sum += out[i];
  }
  frac_t *order = malloc(m * sizeof *order);
  if (order) {
    for (size_t i = 0; i < m; i++)
      order[i] = (frac_t){x[i] - (double)out[i], i};
    qsort(order, m, sizeof *order, by_fraction);
  }
  /* Largest remainder first; more passes only if rounding errors in the
   * shares left more than one unit per entry to place. */
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
  for (size_t k = m; sum > total && k-- > 0;) {
    size_t i = order ? order[k].i : k;
    if (out[i] > 0) {
      out[i]--;
      sum--;
    }
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
  int any_weight = 0;
  for (size_t i = 0; w && i < m; i++)
    any_weight |= w[i] > 0;
  /* Water-filling: share what is left among the entries not yet at their
   * cap; whoever would exceed the cap is fixed at it, and the rest share
   * again. Each round fixes at least one entry. */
  double left = (double)total;
  for (;;) {
    double wsum = 0;
    for (size_t i = 0; i < m; i++)
      if (!fixed[i])
        wsum += any_weight ? w[i] : 1;
    int changed = 0;
    for (size_t i = 0; i < m; i++) {
      if (fixed[i])
        continue;
      double wi = any_weight ? w[i] : 1;
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
