/* Multi-level balancing with full group models (seed 002 §IV.A).
 *
 * MLFBA2 builds every group model point x = 1..N with SLBA over the
 * group's devices, then runs SLBA over the group models. MLFBA1 finds each
 * group point by exhaustive search over the device distributions, then
 * the group loads by exhaustive search too: exponential, kept as the test
 * oracle for tiny problems. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "grouped.h"

int mlsba__mlfba2(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                  size_t *points) {
  return mlsba__grouped_bisection(G, 1, alpha, beta, points);
}

#define MLFBA1_MAX_N 200
#define MLFBA1_MAX_GROUP 4

/* Exhaustive search for the best distribution of x units over the devices
 * of one group. */
typedef struct {
  const mlsba__grouped_t *G;
  size_t g;
  double best;
  int64_t beta[MLFBA1_MAX_GROUP];
  int64_t trial[MLFBA1_MAX_GROUP];
} search_t;

static void search(search_t *S, size_t d, int64_t left, double worst) {
  if (worst >= S->best)
    return;
  size_t k = S->G->size[S->g], j = S->G->first[S->g] + d;
  const mlsba_model_t *m = S->G->models[j];
  int64_t cap = mlsba__device_cap(S->G, j);
  if (d == k - 1) {
    if (left > cap)
      return;
    double t = mlsba__fpm_time(m, (double)left);
    t = t > worst ? t : worst;
    if (t < S->best) {
      S->best = t;
      S->trial[d] = left;
      memcpy(S->beta, S->trial, k * sizeof *S->beta);
    }
    return;
  }
  for (int64_t b = 0; b <= left && b <= cap; b++) {
    double t = mlsba__fpm_time(m, (double)b);
    S->trial[d] = b;
    search(S, d + 1, left - b, t > worst ? t : worst);
  }
}

int mlsba__mlfba1(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                  double *makespan) {
  int64_t n = G->n;
  size_t q = G->q;
  if (n > MLFBA1_MAX_N)
    return mlsba__fail(MLSBA_ERANGE, "mlfba1: n = %lld, at most %d",
                       (long long)n, MLFBA1_MAX_N);
  for (size_t g = 0; g < q; g++)
    if (G->size[g] > MLFBA1_MAX_GROUP)
      return mlsba__fail(MLSBA_ERANGE, "mlfba1: group %zu has %zu devices", g,
                         G->size[g]);
  size_t w = (size_t)n + 1;
  /* Full group models: T[g w + x] is the best time of group g for x units,
   * with distribution B[(g w + x) MAX ...]. */
  double *T = malloc(q * w * sizeof *T);
  int64_t *B = malloc(q * w * MLFBA1_MAX_GROUP * sizeof *B);
  /* best[g w + m]: least makespan of groups 0..g holding m units, taking
   * choice[g w + m] units in group g. */
  double *best = calloc(q * w, sizeof *best);
  int64_t *choice = malloc(q * w * sizeof *choice);
  int err = 0;
  if (!T || !B || !best || !choice) {
    err = mlsba__fail(MLSBA_ENOMEM, "mlfba1: out of memory");
    goto done;
  }
  for (size_t g = 0; g < q; g++) {
    for (size_t x = 0; x < w; x++) {
      search_t S = {.G = G, .g = g, .best = INFINITY};
      search(&S, 0, (int64_t)x, 0);
      T[g * w + x] = S.best;
      memcpy(B + (g * w + x) * MLFBA1_MAX_GROUP, S.beta, sizeof S.beta);
    }
  }
  for (size_t g = 0; g < q; g++) {
    for (size_t m = 0; m < w; m++) {
      double bm = INFINITY;
      int64_t bc = 0;
      for (size_t a = 0; a <= m; a++) {
        double prev = g ? best[(g - 1) * w + m - a] : (m == a ? 0 : INFINITY);
        double t = T[g * w + a] > prev ? T[g * w + a] : prev;
        if (t < bm) {
          bm = t;
          bc = (int64_t)a;
        }
      }
      best[g * w + m] = bm;
      choice[g * w + m] = bc;
    }
  }
  *makespan = best[(q - 1) * w + (size_t)n];
  if (isinf(*makespan)) {
    err = mlsba__fail(MLSBA_ECAPACITY, "mlfba1: no distribution fits");
    goto done;
  }
  for (size_t g = q, m = (size_t)n; g-- > 0;) {
    alpha[g] = choice[g * w + m];
    memcpy(beta + G->first[g],
           B + (g * w + (size_t)alpha[g]) * MLFBA1_MAX_GROUP,
           G->size[g] * sizeof *beta);
    m -= (size_t)alpha[g];
  }
done:
  free(T);
  free(B);
  free(best);
  free(choice);
  return err;
}
