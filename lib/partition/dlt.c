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
 * exceeds its max_load is held at it; T solves sum_j x_j = N with those
 * limits. The seed's full model, with the links, is dlt_nodes.c
 * (mlsba_partition_dlt_nodes); with l = b = l_P = 0 and one device per node
 * it gives these shares (tests/test_dlt.c checks it). */
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
  /* The points are compute; a transfer set on the model is affine too. */
  *a += m->per_unit;
  *e += m->latency;
}

/* Sum over devices of (T - e_j) / a_j clamped to [0, cap_j]; the shares
 * into x when it is not NULL. */
static double dlt_total(const double *a, const double *e, const int64_t *cap,
                        size_t p, double T, double *x) {
  double sum = 0;
  for (size_t j = 0; j < p; j++) {
    double share = (T - e[j]) / a[j];
    share = share < 0 ? 0 : share > (double)cap[j] ? (double)cap[j] : share;
    if (x)
      x[j] = share;
    sum += share;
  }
  return sum;
}

int mlsba__dlt(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
               size_t *points) {
  size_t p = G->p;
  double *a = malloc(p * sizeof *a), *e = malloc(p * sizeof *e);
  double *x = malloc(p * sizeof *x);
  int64_t *cap = malloc(p * sizeof *cap);
  int err = 0;
  if (!a || !e || !x || !cap) {
    err = mlsba__fail(MLSBA_ENOMEM, "dlt: out of memory");
    goto done;
  }
  for (size_t j = 0; j < p; j++) {
    fit_affine(G->models[j], G->n, &a[j], &e[j]);
    cap[j] = mlsba__device_cap(G, j);
    x[j] = 0;
  }
  /* The shares at a common finish time T, each clamped to [0, cap], add up
   * to a nondecreasing function of T: the T where they reach N is found by
   * bisection. (Holding devices at 0 or at their cap one round at a time,
   * as the closed form is often applied, can hold a device at 0 that a
   * later, larger T would give work to, and then the shares miss N; the
   * fuzzer found such a case.) */
  double lo = 0, hi = 1;
  for (int k = 0; k < 2100 && dlt_total(a, e, cap, p, hi, NULL) < (double)G->n;
       k++)
    hi *= 2;
  for (int k = 0; k < 200 && hi > lo; k++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi)
      break;
    if (dlt_total(a, e, cap, p, mid, NULL) < (double)G->n)
      lo = mid;
    else
      hi = mid;
  }
  dlt_total(a, e, cap, p, hi, x);
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
  return err;
}
