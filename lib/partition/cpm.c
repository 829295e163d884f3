/* Constant-performance-model baselines of Clarke et al. (seed 000 §4):
 * homogeneous, single-CPM and multiple-CPM partitioning at both levels.
 *
 * A constant model is one speed per device, measured as load / time at
 * the current distribution (at one unit for a device with no load, as
 * INPA's first step measures). Loads are shared in proportion to the
 * speeds: groups by their measured speed alpha / (slowest device time),
 * devices within a group by their own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "grouped.h"

typedef struct {
  int64_t *gcap;  /* q group capacities */
  int64_t *dcap;  /* p device capacities */
  double *gspeed; /* q */
  double *dspeed; /* p */
} cpm_t;

static void cpm_free(cpm_t *C) {
  free(C->gcap);
  free(C->dcap);
  free(C->gspeed);
  free(C->dspeed);
}

static int cpm_init(cpm_t *C, const mlsba__grouped_t *G) {
  C->gcap = calloc(G->q, sizeof *C->gcap);
  C->dcap = malloc(G->p * sizeof *C->dcap);
  C->gspeed = malloc(G->q * sizeof *C->gspeed);
  C->dspeed = malloc(G->p * sizeof *C->dspeed);
  if (!C->gcap || !C->dcap || !C->gspeed || !C->dspeed) {
    cpm_free(C);
    return mlsba__fail(MLSBA_ENOMEM, "cpm: out of memory");
  }
  for (size_t g = 0; g < G->q; g++) {
    for (size_t j = G->first[g]; j < G->first[g] + G->size[g]; j++) {
      C->dcap[j] = mlsba__device_cap(G, j);
      C->gcap[g] =
          C->gcap[g] + C->dcap[j] < G->n ? C->gcap[g] + C->dcap[j] : G->n;
    }
  }
  return 0;
}

/* alpha in proportion to the group speeds, then each group's beta in
 * proportion to its device speeds; NULL speeds mean even shares. */
static void distribute(const mlsba__grouped_t *G, const cpm_t *C,
                       const double *gspeed, const double *dspeed,
                       int64_t *alpha, int64_t *beta) {
  mlsba__proportional(gspeed, C->gcap, G->q, G->n, alpha);
  for (size_t g = 0; g < G->q; g++) {
    size_t f = G->first[g];
    mlsba__proportional(dspeed ? dspeed + f : NULL, C->dcap + f, G->size[g],
                        alpha[g], beta + f);
  }
}

/* Measures every device and group at the current distribution; returns
 * the relative spread of the times of the devices that have work. */
static double measure(const mlsba__grouped_t *G, cpm_t *C, const int64_t *alpha,
                      const int64_t *beta) {
  double tmax = 0, tmin = INFINITY;
  for (size_t g = 0; g < G->q; g++) {
    double tg = 0;
    for (size_t j = G->first[g]; j < G->first[g] + G->size[g]; j++) {
      double x = beta[j] > 0 ? (double)beta[j] : 1;
      double t = mlsba__fpm_time(G->models[j], x);
      C->dspeed[j] = C->dcap[j] > 0 ? x / t : 0;
      if (beta[j] > 0) {
        tg = t > tg ? t : tg;
        tmin = t < tmin ? t : tmin;
      }
    }
    tmax = tg > tmax ? tg : tmax;
    double gs = 0;
    if (alpha[g] > 0)
      gs = (double)alpha[g] / tg;
    else
      for (size_t j = G->first[g]; j < G->first[g] + G->size[g]; j++)
        gs += C->dspeed[j];
    C->gspeed[g] = C->gcap[g] > 0 ? gs : 0;
  }
  return tmax > 0 ? (tmax - tmin) / tmax : 0;
}

/* Homogeneous start, then up to iterations re-partitionings with the
 * speeds measured at the previous distribution, stopping early once the
 * device times are within eps of each other. */
static int cpm_iterate(const mlsba__grouped_t *G, unsigned iterations,
                       double eps, int64_t *alpha, int64_t *beta,
                       size_t *points) {
  cpm_t C;
  int err = cpm_init(&C, G);
  if (err)
    return err;
  distribute(G, &C, NULL, NULL, alpha, beta);
  for (unsigned it = 0; it < iterations; it++) {
    if (measure(G, &C, alpha, beta) <= eps)
      break;
    distribute(G, &C, C.gspeed, C.dspeed, alpha, beta);
  }
  memset(points, 0, G->q * sizeof *points);
  cpm_free(&C);
  return 0;
}

int mlsba__homogeneous(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                       size_t *points) {
  return cpm_iterate(G, 0, 0, alpha, beta, points);
}

int mlsba__single_cpm(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                      size_t *points) {
  return cpm_iterate(G, 1, -1, alpha, beta, points);
}

int mlsba__multiple_cpm(const mlsba__grouped_t *G, int64_t *alpha,
                        int64_t *beta, size_t *points) {
  return cpm_iterate(G, G->opts.cpm_max_iter, G->opts.cpm_eps, alpha, beta,
                     points);
}
