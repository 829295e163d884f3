/* libFuzzer target: the head of the MPI divider (lib/partition/divide.h)
 * through changes of speed. The input draws 1 to 8 nodes (a constant
 * speed, or a rising profile of up to four points, speeds 10^-2 to 10^6
 * units/s), N, the algorithm, eps, max_iter and a timing noise; the head
 * balances them, then goes through up to eight drifts: some nodes turn
 * 1.5 to 10 times slower or faster, or come back to their speed, before
 * the head resumes (with the run that showed the drift, or without one,
 * at a tolerance drawn among valid and invalid ones) or while it is still
 * balancing. Promises checked at every step: every count at least one,
 * their sum N; runs per balancing within max_iter; a feed after the stop
 * refused; a bad tolerance refused with a message, the head left stopped;
 * "balanced" only with the last run within eps; every history row the
 * counts run and the spread of their times. And the recovery itself:
 * without noise, on constant speeds whose every change so far was past
 * the tolerance (so that each speed function holds only its node's
 * present speed once the change is seen), with room for eps in the
 * counts, INPA and multiple-CPM are balanced again within two runs of
 * the re-balance (the run that showed the drift and one more). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partition/divide.h"

typedef struct {
  const uint8_t *p;
  size_t left;
} bytes_t;

static uint64_t take(bytes_t *b, int nbytes) {
  uint64_t v = 0;
  for (int i = 0; i < nbytes && b->left; i++, b->p++, b->left--)
    v = v << 8 | *b->p;
  return v;
}

enum { QMAX = 8, PMAX = 4 };

/* A node's true speed profile (linear between points, constant beyond),
 * times its current factor (the drift). */
typedef struct {
  double x[PMAX], s[PMAX];
  size_t n;
  double factor;
} node_t;

static double speed_of(const node_t *nd, double c) {
  if (c <= nd->x[0] || nd->n == 1)
    return nd->s[0];
  for (size_t k = 1; k < nd->n; k++)
    if (c <= nd->x[k])
      return nd->s[k - 1] + (nd->s[k] - nd->s[k - 1]) * (c - nd->x[k - 1]) /
                                (nd->x[k] - nd->x[k - 1]);
  return nd->s[nd->n - 1];
}

/* A speed from 10^-2 to 10^6 units/s on a logarithmic scale. */
static double speed(bytes_t *b) {
  return pow(10, -2 + 8 * (double)take(b, 2) / 65535.0);
}

typedef struct {
  size_t q;
  node_t node[QMAX];
  double noise; /* relative, each time drawn from the input */
  bytes_t *b;
} world_t;

/* The times of the current counts: each node's profile at its count,
 * over its factor, with noise from the input when there is some. */
static void times(world_t *w, const int64_t *c, double *t) {
  for (size_t i = 0; i < w->q; i++) {
    const node_t *nd = &w->node[i];
    double f = 1;
    if (w->noise > 0)
      f += w->noise * ((double)take(w->b, 1) / 127.5 - 1);
    t[i] = (double)c[i] / (speed_of(nd, (double)c[i]) * nd->factor) * f;
  }
}

static double spread(const double *t, size_t q) {
  double lo = t[0], hi = t[0];
  for (size_t i = 1; i < q; i++) {
    lo = t[i] < lo ? t[i] : lo;
    hi = t[i] > hi ? t[i] : hi;
  }
  return (hi - lo) / hi;
}

static void check_counts(const mlsba__divide_t *h, size_t q, int64_t n) {
  const int64_t *c = mlsba__divide_counts(h);
  int64_t sum = 0;
  for (size_t i = 0; i < q; i++) {
    if (c[i] < 1)
      abort();
    sum += c[i];
  }
  if (sum != n)
    abort();
}

/* What the head recorded since run `from`: each row the counts run and
 * the spread of its times; a balanced stop only within eps. */
static void check_history(const mlsba__divide_t *h, size_t q, size_t from,
                          double eps) {
  size_t runs = mlsba__divide_iterations(h);
  for (size_t k = from; k < runs; k++) {
    const double *t = mlsba__divide_history_times(h, k);
    if (fabs(mlsba__divide_history_imbalance(h, k) - spread(t, q)) > 1e-12)
      abort();
  }
  if (mlsba__divide_done(h) && runs > 0) {
    mlsba_stop_reason_t s = mlsba__divide_stop(h);
    if (s == MLSBA_STOP_BALANCED &&
        !(mlsba__divide_history_imbalance(h, runs - 1) <= eps))
      abort();
    if (memcmp(mlsba__divide_history_counts(h, runs - 1),
               mlsba__divide_counts(h), q * sizeof(int64_t)))
      abort(); /* the result is the last run */
  }
}

/* Feeds runs until the head stops, drifting once mid-way when asked;
 * returns the runs fed. A run past max_iter is a broken promise. */
static size_t drive(mlsba__divide_t *h, world_t *w, int64_t n, unsigned max,
                    double eps, int drift_midway) {
  double t[QMAX];
  size_t runs = 0;
  while (!mlsba__divide_done(h)) {
    check_counts(h, w->q, n);
    if (++runs > max)
      abort();
    if (drift_midway && runs == 2)
      w->node[take(w->b, 1) % w->q].factor *= 3;
    times(w, mlsba__divide_counts(h), t);
    if (mlsba__divide_feed(h, t) != 0)
      abort(); /* valid times, a running head */
  }
  check_counts(h, w->q, n);
  if (mlsba__divide_feed(h, t) != MLSBA_EINVAL)
    abort();
  (void)eps;
  return runs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes_t b = {data, size};
  world_t w = {.q = 1 + take(&b, 1) % QMAX, .b = &b};
  int constant = 1;
  for (size_t i = 0; i < w.q; i++) {
    node_t *nd = &w.node[i];
    nd->n = 1 + take(&b, 1) % PMAX;
    double x = 1;
    for (size_t k = 0; k < nd->n; k++) {
      x *= 1 + (double)(take(&b, 1) % 64);
      nd->x[k] = x + (double)k;
      nd->s[k] = speed(&b);
    }
    nd->factor = 1;
    constant &= nd->n == 1;
  }
  uint64_t nsel = take(&b, 1);
  int64_t n = nsel % 4 == 0   ? (int64_t)(take(&b, 2) % 5000)
              : nsel % 4 == 1 ? (int64_t)(take(&b, 3) % 2000000)
              : nsel % 4 == 2 ? (INT64_C(1) << 53) - (int64_t)take(&b, 1)
                              : (int64_t)take(&b, 8) >> (nsel % 64);
  static const double eps_of[] = {0, 0.01, 0.05, 0.1, 0.25, 1};
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  uint64_t sel = take(&b, 1);
  o.algo = (mlsba__inpa_algo_t)(sel % MLSBA__INPA_ALGO_COUNT);
  o.eps = eps_of[sel / 4 % 6];
  o.max_iter = 1 + (unsigned)(take(&b, 1) % 30);
  uint64_t noisy = take(&b, 1);
  w.noise = noisy % 4 == 0 ? 0.02 * (double)(noisy / 4 % 8) : 0;

  mlsba__divide_t *h = NULL;
  int err = mlsba__divide_create(w.q, n, &o, &h);
  if ((err == 0) != (n >= (int64_t)w.q && n <= (INT64_C(1) << 53)))
    abort();
  if (err)
    return 0;
  drive(h, &w, n, o.max_iter, o.eps, 0);
  check_history(h, w.q, 0, o.eps);
  /* Whether every speed function holds its node's present speed only
   * once the changes so far are seen: constant speeds, no noise, and
   * every change seen past the tolerance. */
  int clean = constant && w.noise == 0;

  static const double factor_of[] = {0.1, 0.25, 0.5, 1 / 1.5, 1.5, 2, 4, 10};
  static const double tol_of[] = {0.05, 0.1, 0.25, 0.3, 0, -1, NAN, INFINITY};
  for (unsigned episode = 0; episode < 8 && b.left > 0; episode++) {
    /* Some nodes change: slower, faster, or back to their speed. */
    uint64_t who = take(&b, 1), how = take(&b, 1);
    double tol = tol_of[take(&b, 1) % 8];
    int changed = 0, seen = 1;
    for (size_t i = 0; i < w.q; i++) {
      if (!(who >> i & 1))
        continue;
      node_t *nd = &w.node[i];
      double before = nd->factor;
      nd->factor = how & 1 ? 1 : factor_of[(how >> 1) % 8];
      changed |= nd->factor != before;
      /* The run's time over the function's: past tol, the points go. */
      seen &= nd->factor == before || fabs(before / nd->factor - 1) > tol;
    }
    int with_run = (how >> 4 & 1) == 0, midway = (how >> 5 & 3) == 0;
    double t[QMAX];
    times(&w, mlsba__divide_counts(h), t);
    size_t before = mlsba__divide_iterations(h);
    err = mlsba__divide_resume(h, with_run ? t : NULL, tol);
    if (!(tol > 0) || !isfinite(tol)) {
      if (err != MLSBA_EINVAL || !mlsba__divide_done(h) ||
          mlsba_last_error()[0] == 0)
        abort();
      clean &= !changed; /* the change is not seen */
      continue;
    }
    if (err != 0)
      abort(); /* GPA over models that all have points */
    size_t runs =
        (size_t)with_run +
        drive(h, &w, n, o.max_iter - (unsigned)with_run, o.eps, midway);
    if (mlsba__divide_iterations(h) != before + runs)
      abort();
    check_history(h, w.q, before, o.eps);
    clean &= seen && !midway;
    /* The recovery, where nothing but the drift stands in its way: clean
     * speed functions, and every count large enough that one unit is
     * within eps / 8 of a node's time. */
    if (!clean || !with_run || !changed || o.eps < 0.05 || o.max_iter < 3 ||
        (o.algo != MLSBA__INPA_FPM && o.algo != MLSBA__INPA_MULTIPLE_CPM))
      continue;
    double total = 0, least = INFINITY;
    for (size_t i = 0; i < w.q; i++)
      total += w.node[i].s[0] * w.node[i].factor;
    for (size_t i = 0; i < w.q; i++) {
      double share = (double)n * w.node[i].s[0] * w.node[i].factor / total;
      least = share < least ? share : least;
    }
    if (least < 8 / o.eps || (double)n > 1e12)
      continue;
    if (mlsba__divide_stop(h) != MLSBA_STOP_BALANCED || runs > 2)
      abort();
  }
  mlsba__divide_destroy(h);
  return 0;
}
