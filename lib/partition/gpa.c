/* GPA over node models (Clarke et al., seed 000: INPA's step 7 and the
 * one-dimensional head's): the nodes' blocks from their speed functions,
 * every node given at least one, with or without each node's modelled
 * communication. Pure, as every partitioner is. */
#include "gpa.h"

#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "fpm.h"
#include "slba.h"

/* The node that the models expect to finish last among those that can
 * give a block away (w > 1); q <= sum w guarantees one. */
static size_t latest_donor(const mlsba_model_t *const models[], size_t q,
                           const int64_t w[]) {
  size_t best = q;
  double tbest = -1;
  for (size_t j = 0; j < q; j++) {
    if (w[j] <= 1)
      continue;
    double t = mlsba__fpm_time(models[j], (double)w[j]);
    if (t > tbest) {
      tbest = t;
      best = j;
    }
  }
  return best;
}

/* Node i's time for an area a with its communication, the area taken
 * as a square (half-perimeter 2 sqrt(a), the least any rectangle of it
 * has): what GPA balances before CMA and the fit choose the shapes. */
static double square_time(const mlsba_model_t *m, const mlsba__comm_model_t *c,
                          size_t i, double a) {
  if (a <= 0)
    return 0;
  double t = mlsba__fpm_time(m, a);
  return c ? t + c->fixed[i] + c->per_block[i] * 2 * sqrt(a) : t;
}

/* The most blocks node i can run by T with its communication: the
 * largest a in [0, cap] with a <= L(T - fixed - per_block 2 sqrt(a)),
 * L its model's load by time (a prefix of 0..cap, so bisection). */
static int64_t area_by_time(const mlsba_model_t *m,
                            const mlsba__comm_model_t *c, size_t i, double T,
                            int64_t cap) {
  int64_t lo = 0, hi = cap;
  while (lo < hi) {
    int64_t mid = hi - (hi - lo) / 2;
    double left = T - c->fixed[i] - c->per_block[i] * 2 * sqrt((double)mid);
    if (left >= 0 && (double)mid <= mlsba__fpm_load_by_time(m, left))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

static int64_t areas_by_time(const mlsba_model_t *const models[],
                             const mlsba__comm_model_t *c, size_t q, int64_t W,
                             double T, int64_t *x) {
  int64_t sum = 0;
  for (size_t i = 0; i < q; i++) {
    x[i] = area_by_time(models[i], c, i, T, mlsba__fpm_cap(models[i], W));
    sum += x[i];
  }
  return sum;
}

/* GPA with communication: the least T by which the nodes together run W
 * blocks (bisection), each node's area what it runs by the largest T
 * below that, and the few blocks left to the nodes that gain them
 * exactly at T. x is scratch of q. */
static int gpa_comm(const mlsba_model_t *const models[],
                    const mlsba__comm_model_t *c, size_t q, int64_t W,
                    int64_t w[], int64_t *x) {
  double hi = 0;
  for (size_t i = 0; i < q; i++) {
    double t =
        square_time(models[i], c, i, (double)mlsba__fpm_cap(models[i], W));
    hi = t > hi ? t : hi;
  }
  for (int k = 0; k < 64 && areas_by_time(models, c, q, W, hi, x) < W; k++)
    hi = hi > 0 ? 2 * hi : 1;
  if (areas_by_time(models, c, q, W, hi, x) < W)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "gpa: the nodes cannot hold %lld blocks", (long long)W);
  double lo = 0;
  for (int k = 0; k < 200; k++) {
    double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi))
      break;
    if (areas_by_time(models, c, q, W, mid, x) >= W)
      hi = mid;
    else
      lo = mid;
  }
  int64_t left = W - areas_by_time(models, c, q, W, lo, w);
  areas_by_time(models, c, q, W, hi, x);
  for (size_t i = 0; i < q && left > 0; i++) {
    int64_t add = x[i] - w[i] < left ? x[i] - w[i] : left;
    w[i] += add;
    left -= add;
  }
  return 0;
}

/* The node whose time with its communication is the latest among those
 * that can give a block away. */
static size_t latest_donor_comm(const mlsba_model_t *const models[],
                                const mlsba__comm_model_t *c, size_t q,
                                const int64_t w[]) {
  size_t best = q;
  double tbest = -1;
  for (size_t j = 0; j < q; j++) {
    double t = w[j] > 1 ? square_time(models[j], c, j, (double)w[j]) : -1;
    if (t > tbest) {
      tbest = t;
      best = j;
    }
  }
  return best;
}

int mlsba__gpa_nodes(const mlsba_model_t *const models[], size_t q, int64_t W,
                     int64_t w[], double *makespan) {
  return mlsba__gpa_nodes_comm(models, NULL, q, W, w, makespan);
}

int mlsba__gpa_nodes_comm(const mlsba_model_t *const models[],
                          const mlsba__comm_model_t *comm, size_t q, int64_t W,
                          int64_t w[], double *makespan) {
  int err = mlsba__check_partition_args("gpa", models, q, W, w);
  if (err)
    return err;
  if ((uint64_t)q > (uint64_t)W)
    return mlsba__fail(MLSBA_EINVAL,
                       "gpa: %zu nodes but %lld blocks: every node needs one",
                       q, (long long)W);
  for (size_t i = 0; i < q; i++)
    if (mlsba__fpm_cap(models[i], W) < 1)
      return mlsba__fail(MLSBA_EINVAL,
                         "gpa: node %zu cannot hold a block (max_load 0)", i);
  if (comm) {
    int64_t *x = malloc(q * sizeof *x);
    err = x ? gpa_comm(models, comm, q, W, w, x)
            : mlsba__fail(MLSBA_ENOMEM, "gpa: out of memory");
    free(x);
  } else {
    mlsba_partition_opts_t opts;
    mlsba_partition_opts_init(&opts);
    err = mlsba__slba(models, q, W, &opts, w, NULL, NULL);
  }
  if (err)
    return err;
  /* CMA gives every node a rectangle of at least one block, so a node
   * that SLBA leaves idle (too slow to help) still gets one; it comes from
   * the node the models expect to finish last, which can only gain. */
  for (size_t i = 0; i < q; i++) {
    if (w[i] >= 1)
      continue;
    size_t j = comm ? latest_donor_comm(models, comm, q, w)
                    : latest_donor(models, q, w);
    w[j]--;
    w[i] = 1;
  }
  if (makespan) {
    double worst = 0;
    for (size_t i = 0; i < q; i++) {
      double t = square_time(models[i], comm, i, (double)w[i]);
      worst = t > worst ? t : worst;
    }
    *makespan = worst;
  }
  return 0;
}
