/* FPM plus communication across nodes (issue 24): the project's own model
 * of seed 001's application. A master that does not compute sends every
 * node A (N x M) and its share of B's K columns over the node's own link,
 * and receives its columns of C back. A node's time for x columns is its
 * devices' compute, balanced by SLBA over their models (an accelerator's
 * host link folded into its model by mlsba_model_set_transfer()), plus
 * its link's affine cost of what it moves:
 *   t_j(x) = T_j(x) + l s N M + 3 b + l s (M + N) x,
 * A in, B's columns in and C's out, one message each, none of them
 * overlapping the computation. SLBA over these node models gives every
 * node's share, then SLBA inside each node its devices' columns.
 *
 * Where the node in fact serves its devices one after another and each
 * starts on its own columns' arrival (seed 001's delivery), the model
 * overestimates a node's time by the overlap it ignores, and its split
 * inside the node gives the cores columns as if they started with the
 * accelerator (0.7% slower than the DLT on the thesis's cluster under
 * SMPI, RESULTS.md). A serial node models that delivery instead, as a
 * chain like the DLT's (eq. 21) but over the devices' speed functions:
 * device i finishes at l s M (x_0 + ... + x_i) + (i + 1) b + t_i(x_i)
 * after A, every device at the same T; for a given T each x_i is the
 * largest load whose time, with l s M per column added, fits in what the
 * earlier ones leave (mlsba_model_load_by_time()), and T for x columns is
 * found by bisection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "mlsba.h"

/* Points of each node model, geometric from 1 to K columns. */
enum { NODE_POINTS = 128 };

static int check_args(const mlsba_dlt_problem_t *pr,
                      const mlsba_comm_node_t nodes[], size_t e,
                      const int64_t share[], const int64_t columns[]) {
  const char *fn = "mlsba_partition_nodes_comm";
  if (!pr || !nodes || !share || !columns)
    return mlsba__fail(MLSBA_EINVAL, "%s: an argument is NULL", fn);
  if (e == 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: no node", fn);
  if (pr->n < 1 || pr->m < 1 || pr->k < 1 || pr->element_size < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: n, m, k and element_size must be >= 1", fn);
  for (size_t j = 0; j < e; j++) {
    const mlsba_comm_node_t *nd = &nodes[j];
    if (nd->devices == 0 || nd->models == NULL)
      return mlsba__fail(MLSBA_EINVAL, "%s: nodes[%zu] has no device", fn, j);
    for (size_t d = 0; d < nd->devices; d++)
      if (mlsba_model_num_points(nd->models[d]) == 0)
        return mlsba__fail(MLSBA_EINVAL,
                           "%s: nodes[%zu]: device %zu's model has no point",
                           fn, j, d);
    if (!(nd->link.latency >= 0) || !isfinite(nd->link.latency) ||
        !(nd->link.bandwidth >= 0) || !isfinite(nd->link.bandwidth))
      return mlsba__fail(MLSBA_EINVAL,
                         "%s: nodes[%zu]: link latency and bandwidth must be "
                         "finite and >= 0",
                         fn, j);
  }
  return 0;
}

/* The node's devices balanced on x columns (cols may be NULL): their
 * makespan, transfers to accelerators included. */
static int node_compute(const mlsba_comm_node_t *nd, int64_t x, int64_t *cols,
                        double *time) {
  int64_t *own = cols ? cols : malloc(nd->devices * sizeof *own);
  if (own == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  mlsba_partition_info_t info;
  int err =
      mlsba_partition_slba_ex(nd->models, nd->devices, x, NULL, own, &info);
  if (!err)
    *time = info.makespan;
  if (own != cols)
    free(own);
  return err;
}

/* The link's cost as the node model's transfer: A's message as a fixed
 * cost, B's columns in and C's out per column, three latencies. */
static void node_link_cost(const mlsba_dlt_problem_t *pr,
                           const mlsba_link_t *link, double *fixed,
                           double *per_column) {
  double s = (double)pr->element_size, N = (double)pr->n, M = (double)pr->m;
  double l = link->bandwidth > 0 ? 1 / link->bandwidth : 0;
  double b = link->bandwidth > 0 ? link->latency : 0;
  *fixed = l * s * N * M + 3 * b;
  *per_column = l * s * (M + N);
}

/* ---- serial delivery -------------------------------------------------- */

/* A serial node's device models with B's link cost per column added (its
 * columns' own message: l s M a column): clones, the caller's to destroy. */
static int serial_models(const mlsba_dlt_problem_t *pr,
                         const mlsba_comm_node_t *nd, mlsba_model_t **out) {
  double fixed, per_column, lsM;
  node_link_cost(pr, &nd->link, &fixed, &per_column);
  lsM = per_column * (double)pr->m / (double)(pr->m + pr->n);
  int err = 0;
  for (size_t d = 0; d < nd->devices && !err; d++) {
    double lat = 0, unit = 0;
    err = mlsba_model_clone(nd->models[d], &out[d]);
    if (!err)
      err = mlsba_model_get_transfer(out[d], &lat, &unit);
    if (!err)
      err = mlsba_model_set_transfer(out[d], lat, unit + lsM);
  }
  return err;
}

/* The columns x[] (real) the devices take when all finish at T after A:
 * each in turn the largest load that fits in what the earlier devices'
 * messages leave. Returns their sum. */
static double serial_chain(mlsba_model_t *const *m, size_t p, double lsM,
                           double b, double T, double *x) {
  double prefix = 0;
  size_t served = 0;
  for (size_t i = 0; i < p; i++) {
    double budget = T - lsM * prefix - (double)(served + 1) * b;
    x[i] = 0;
    if (budget > 0 && mlsba_model_load_by_time(m[i], budget, &x[i]) != 0)
      x[i] = 0;
    if (x[i] > 0) {
      served++;
      prefix += x[i];
    }
  }
  return prefix;
}

/* T for x columns (the chain's common finish after A), by bisection. */
static double serial_finish(mlsba_model_t *const *m, size_t p, double lsM,
                            double b, double x, double *parts) {
  double lo = 0, hi = 1e-6;
  for (int i = 0; i < 400 && serial_chain(m, p, lsM, b, hi, parts) < x; i++)
    hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    double mid = (lo + hi) / 2;
    if (serial_chain(m, p, lsM, b, mid, parts) < x)
      lo = mid;
    else
      hi = mid;
  }
  serial_chain(m, p, lsM, b, hi, parts);
  return hi;
}

/* The chain's finish (after A) of whole columns cols[]: its latest
 * device. */
static int chain_time(const mlsba_model_t *const *m, size_t p, double lsM,
                      double b, const int64_t *cols, double *T) {
  double prefix = 0;
  size_t served = 0;
  *T = 0;
  for (size_t d = 0; d < p; d++) {
    double t = 0;
    if (cols[d] == 0)
      continue;
    prefix += (double)cols[d];
    served++;
    int err = mlsba_model_time(m[d], (double)cols[d], &t);
    if (err)
      return err;
    t += lsM * prefix + (double)served * b;
    *T = t > *T ? t : *T;
  }
  return 0;
}

/* Rounding the chain's real parts can leave a device one column that
 * costs it its whole setup, or a late device starved: moves of one column
 * between any two devices, each kept only when the chain ends earlier
 * (as MLSBA's Phase 2 refines integers), until none helps. */
static int refine_whole_columns(const mlsba_model_t *const *m, size_t p,
                                double lsM, double b, int64_t *cols,
                                double *T) {
  int err = chain_time(m, p, lsM, b, cols, T);
  for (int moved = 1, round = 0; !err && moved && round < 1000; round++) {
    moved = 0;
    for (size_t from = 0; from < p && !err; from++)
      for (size_t to = 0; to < p && !err && cols[from] > 0; to++) {
        double t;
        if (to == from)
          continue;
        cols[from]--;
        cols[to]++;
        err = chain_time(m, p, lsM, b, cols, &t);
        if (!err && t < *T * (1 - 1e-12)) {
          *T = t;
          moved = 1;
        } else {
          cols[from]++;
          cols[to]--;
        }
      }
  }
  return err;
}

/* The node's time for x columns delivered serially, A and C included:
 * with cols NULL, of the chain's real-valued parts (a smooth model);
 * else of whole columns (summing to x) into cols. */
static int serial_node(const mlsba_dlt_problem_t *pr,
                       const mlsba_comm_node_t *nd, int64_t x, int64_t *cols,
                       double *time) {
  size_t p = nd->devices;
  mlsba_model_t **m = calloc(p, sizeof *m);
  double *parts = calloc(p, sizeof *parts);
  int64_t *own = cols;
  int err = m && parts ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if (!err)
    err = serial_models(pr, nd, m);
  double fixed, per_column;
  node_link_cost(pr, &nd->link, &fixed, &per_column);
  double lsM = per_column * (double)pr->m / (double)(pr->m + pr->n);
  double lsN = per_column - lsM;
  double b = nd->link.bandwidth > 0 ? nd->link.latency : 0;
  if (!err && cols == NULL) { /* a model point: the continuous chain */
    double T = serial_finish(m, p, lsM, b, (double)x, parts);
    *time = (fixed - 3 * b) + b + T + lsN * (double)x + b;
  } else if (!err) {
    serial_finish(m, p, lsM, b, (double)x, parts);
    /* Whole columns: floors, then the rest to the largest remainders.
     * The chain's parts may add up to more than x (a device joining the
     * chain jumps from none to some columns, and the bisection ends
     * above x): the floors then lose the smallest remainders first. */
    int64_t left = x;
    for (size_t d = 0; d < p; d++)
      left -= own[d] = (int64_t)floor(parts[d]);
    while (left < 0) {
      size_t cut = p;
      for (size_t d = 0; d < p; d++)
        if (own[d] > 0 && (cut == p || parts[d] - (double)own[d] <
                                           parts[cut] - (double)own[cut]))
          cut = d;
      own[cut]--;
      left++;
    }
    while (left > 0) {
      size_t best = 0;
      for (size_t d = 1; d < p; d++)
        if (parts[d] - (double)own[d] > parts[best] - (double)own[best])
          best = d;
      own[best]++;
      parts[best] = (double)own[best]; /* its remainder is spent */
      left--;
    }
    double T = 0;
    err = refine_whole_columns(nd->models, p, lsM, b, own, &T);
    /* A and its latency, the chain, then C. */
    *time = (fixed - 3 * b) + b + T + lsN * (double)x + b;
  }
  for (size_t d = 0; m && d < p; d++)
    mlsba_model_destroy(m[d]);
  free(m);
  free(parts);
  return err;
}

/* Node j's model: its compute at NODE_POINTS loads plus its link. */
static int node_model(const mlsba_dlt_problem_t *pr,
                      const mlsba_comm_node_t *nd, mlsba_model_t **out) {
  mlsba_model_t *m = NULL;
  int err = mlsba_model_create(&m);
  int64_t last = 0;
  double fixed, per_column;
  node_link_cost(pr, &nd->link, &fixed, &per_column);
  /* A's message: what a serial node's time has that is not per column. */
  double a_cost = fixed - 2 * (nd->link.bandwidth > 0 ? nd->link.latency : 0);
  for (int i = 0; i <= NODE_POINTS && !err; i++) {
    int64_t x = (int64_t)ceil(pow((double)pr->k, i / (double)NODE_POINTS));
    if (x <= last)
      continue;
    last = x;
    double t = 0;
    err = nd->serial ? serial_node(pr, nd, x, NULL, &t)
                     : node_compute(nd, x, NULL, &t);
    if (nd->serial)
      t -= a_cost; /* the model's fixed cost, below */
    if (!err && !(t > 0))
      err = mlsba__fail(MLSBA_EINVAL,
                        "mlsba_partition_nodes_comm: a node's devices take "
                        "no time for %lld columns",
                        (long long)x);
    if (!err)
      err = mlsba_model_set_point(m, (double)x, (double)x / t);
  }
  /* A serial node's points are its time less A's message, which is its
   * fixed cost (t(0) = 0: a node given nothing is sent nothing). */
  if (!err)
    err = nd->serial ? mlsba_model_set_transfer(m, a_cost, 0)
                     : mlsba_model_set_transfer(m, fixed, per_column);
  if (err) {
    mlsba_model_destroy(m);
    return err;
  }
  *out = m;
  return 0;
}

/* Node j's time for x whole columns, its devices' columns into cols. */
static int node_whole_time(const mlsba_dlt_problem_t *pr,
                           const mlsba_comm_node_t *nd, int64_t x,
                           int64_t *cols, double *t) {
  *t = 0;
  if (x == 0) { /* sent nothing, A included */
    for (size_t d = 0; d < nd->devices; d++)
      cols[d] = 0;
    return 0;
  }
  if (nd->serial)
    return serial_node(pr, nd, x, cols, t);
  double fixed, per_column;
  int err = node_compute(nd, x, cols, t);
  node_link_cost(pr, &nd->link, &fixed, &per_column);
  *t += fixed + per_column * (double)x;
  return err;
}

static size_t slowest(const double *t, size_t e) {
  size_t s = 0;
  for (size_t j = 1; j < e; j++)
    s = t[j] > t[s] ? j : s;
  return s;
}

/* The node models are sampled, and their points are of real-valued
 * splits inside the node: whole columns can do better. Moves one column
 * at a time from the slowest node to another while the two of them end
 * earlier than it did, each time with the nodes' whole-column times. */
static int refine_shares(const mlsba_dlt_problem_t *pr,
                         const mlsba_comm_node_t nodes[], size_t e,
                         const size_t first[], int64_t share[],
                         int64_t columns[], double t[], int64_t *scratch) {
  int err = 0;
  for (int moved = 1, round = 0; !err && moved && round < 100000; round++) {
    moved = 0;
    size_t s = slowest(t, e);
    for (size_t j = 0; j < e && !err && !moved && share[s] > 0; j++) {
      double ts, tj;
      if (j == s)
        continue;
      err = node_whole_time(pr, &nodes[s], share[s] - 1, scratch, &ts);
      if (!err)
        err = node_whole_time(pr, &nodes[j], share[j] + 1,
                              scratch + nodes[s].devices, &tj);
      if (err || !((ts > tj ? ts : tj) < t[s] * (1 - 1e-12)))
        continue;
      share[s]--;
      share[j]++;
      t[s] = ts;
      t[j] = tj;
      memcpy(columns + first[s], scratch, nodes[s].devices * sizeof *scratch);
      memcpy(columns + first[j], scratch + nodes[s].devices,
             nodes[j].devices * sizeof *scratch);
      moved = 1;
    }
  }
  return err;
}

int mlsba_partition_nodes_comm(const mlsba_dlt_problem_t *problem,
                               const mlsba_comm_node_t nodes[], size_t e,
                               int64_t share[], int64_t columns[],
                               double *makespan) {
  int err = check_args(problem, nodes, e, share, columns);
  if (err)
    return err;
  size_t most = 0;
  for (size_t j = 0; j < e; j++) {

    most = nodes[j].devices > most ? nodes[j].devices : most;
  }
  mlsba_model_t **nm = calloc(e + 1, sizeof *nm); /* e >= 1: checked */
  size_t *first = calloc(e, sizeof *first);
  double *t = calloc(e, sizeof *t);
  int64_t *scratch = calloc(2 * most, sizeof *scratch);
  if (!nm || !first || !t || !scratch)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  for (size_t j = 0; j < e && !err; j++)
    err = node_model(problem, &nodes[j], &nm[j]);
  if (!err)
    err = mlsba_partition_slba((const mlsba_model_t *const *)nm, e, problem->k,
                               share);
  for (size_t j = 0, at = 0; j < e && !err; at += nodes[j].devices, j++) {
    first[j] = at;
    err = node_whole_time(problem, &nodes[j], share[j], columns + at, &t[j]);
  }
  if (!err)
    err = refine_shares(problem, nodes, e, first, share, columns, t, scratch);
  if (!err && makespan)
    *makespan = t[slowest(t, e)];
  for (size_t j = 0; nm && j < e; j++)
    mlsba_model_destroy(nm[j]);
  free(nm);
  free(first);
  free(t);
  free(scratch);
  return err;
}
