/* Divisible load theory baseline (seed 001 §4.2): closed-form partitioning
 * with affine cost models, all devices finishing at the same time.
 *
 * The paper models device j's time for a part of the load as a latency
 * plus a cost per unit, with link terms for a master distributing B over a
 * network and over PCIe. Here the device models already measure the whole
 * time of a device (transfers included, the psi_t of seed 002), so the
 * link terms fold into each device's affine fit t_j(x) = e_j + a_j x and
 * the closed form (eqs. 36-37 with l = b = 0) becomes
 *   T = (N + sum_j e_j / a_j) / sum_j 1 / a_j,   x_j = (T - e_j) / a_j.
 * A device whose latency exceeds T gets nothing, and one whose share
 * exceeds its max_load is held at it; T is then solved again for the
 * rest. */
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "fpm.h"
#include "grouped.h"

/* Least-squares affine fit of t(x) = e + a x over the model's points up to
 * n (at least the first two), with a > 0 and e >= 0: a negative latency or
 * a falling time is unphysical, and then the fit goes through the origin. */
static void fit_affine(const mlsba_model_t *m, int64_t n, double *a,
                       double *e) {
  size_t k = 0;
  while (k < m->n && (k < 2 || m->x[k] <= (double)n))
    k++;
  double sx = 0, st = 0, sxx = 0, sxt = 0;
  for (size_t i = 0; i < k; i++) {
    double x = m->x[i], t = x / m->s[i];
    sx += x;
    st += t;
    sxx += x * x;
    sxt += x * t;
  }
  double kk = (double)k, var = sxx - sx * sx / kk;
  *a = k > 1 && var > 0 ? (sxt - sx * st / kk) / var : 0;
  *e = (st - *a * sx) / kk;
  if (!(*a > 0) || !(*e >= 0)) {
    *a = sxt / sxx;
    *e = 0;
  }
}

int mlsba__dlt(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
               size_t *points) {
  size_t p = G->p;
  double *a = malloc(p * sizeof *a), *e = malloc(p * sizeof *e);
  double *x = malloc(p * sizeof *x);
  int64_t *cap = malloc(p * sizeof *cap);
  unsigned char *out = calloc(p, 1); /* held at 0 or at the cap */
  int err = 0;
  if (!a || !e || !x || !cap || !out) {
    err = mlsba__fail(MLSBA_ENOMEM, "dlt: out of memory");
    goto done;
  }
  for (size_t j = 0; j < p; j++) {
    fit_affine(G->models[j], G->n, &a[j], &e[j]);
    cap[j] = mlsba__device_cap(G, j);
    x[j] = 0;
    out[j] = cap[j] == 0;
  }
  /* Each round holds at least one more device, so p + 1 rounds suffice. */
  for (size_t round = 0; round <= p; round++) {
    double left = (double)G->n, inv = 0, lat = 0;
    for (size_t j = 0; j < p; j++) {
      if (out[j]) {
        left -= x[j];
      } else {
        inv += 1 / a[j];
        lat += e[j] / a[j];
      }
    }
    if (inv == 0)
      break;
    double T = (left + lat) / inv;
    int changed = 0;
    for (size_t j = 0; j < p; j++) {
      if (out[j])
        continue;
      x[j] = (T - e[j]) / a[j];
      if (x[j] < 0 || x[j] > (double)cap[j]) {
        x[j] = x[j] < 0 ? 0 : (double)cap[j];
        out[j] = 1;
        changed = 1;
      }
    }
    if (!changed)
      break;
  }
  mlsba__round_shares(x, cap, p, G->n, beta);
  for (size_t g = 0; g < G->q; g++) {
    alpha[g] = 0;
    for (size_t j = G->first[g]; j < G->first[g] + G->size[g]; j++)
      alpha[g] += beta[j];
    points[g] = 0;
  }
done:
  free(a);
  free(e);
  free(x);
  free(cap);
  free(out);
  return err;
}
