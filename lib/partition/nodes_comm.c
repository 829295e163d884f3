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
 * overestimates a node's time by the overlap it ignores; both nodes are
 * overestimated alike, so the split stays within a fraction of a percent
 * of the network-aware DLT's on the thesis's cluster (RESULTS.md). */
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "mlsba.h"

/* Points of each node model, geometric from 1 to K columns. */
enum { NODE_POINTS = 48 };

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

/* Node j's model: its compute at NODE_POINTS loads plus its link. */
static int node_model(const mlsba_dlt_problem_t *pr,
                      const mlsba_comm_node_t *nd, mlsba_model_t **out) {
  mlsba_model_t *m = NULL;
  int err = mlsba_model_create(&m);
  int64_t last = 0;
  for (int i = 0; i <= NODE_POINTS && !err; i++) {
    int64_t x = (int64_t)ceil(pow((double)pr->k, i / (double)NODE_POINTS));
    if (x <= last)
      continue;
    last = x;
    double t = 0;
    err = node_compute(nd, x, NULL, &t);
    if (!err && !(t > 0))
      err = mlsba__fail(MLSBA_EINVAL,
                        "mlsba_partition_nodes_comm: a node's devices take "
                        "no time for %lld columns",
                        (long long)x);
    if (!err)
      err = mlsba_model_set_point(m, (double)x, (double)x / t);
  }
  double fixed, per_column;
  node_link_cost(pr, &nd->link, &fixed, &per_column);
  if (!err)
    err = mlsba_model_set_transfer(m, fixed, per_column);
  if (err) {
    mlsba_model_destroy(m);
    return err;
  }
  *out = m;
  return 0;
}

int mlsba_partition_nodes_comm(const mlsba_dlt_problem_t *problem,
                               const mlsba_comm_node_t nodes[], size_t e,
                               int64_t share[], int64_t columns[],
                               double *makespan) {
  int err = check_args(problem, nodes, e, share, columns);
  if (err)
    return err;
  mlsba_model_t **nm = calloc(e, sizeof *nm);
  if (nm == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  for (size_t j = 0; j < e && !err; j++)
    err = node_model(problem, &nodes[j], &nm[j]);
  if (!err)
    err = mlsba_partition_slba((const mlsba_model_t *const *)nm, e, problem->k,
                               share);
  double worst = 0;
  for (size_t j = 0, first = 0; j < e && !err; first += nodes[j].devices, j++) {
    double t = 0;
    if (share[j] == 0) {
      for (size_t d = 0; d < nodes[j].devices; d++)
        columns[first + d] = 0;
      continue;
    }
    err = node_compute(&nodes[j], share[j], columns + first, &t);
    double fixed, per_column;
    node_link_cost(problem, &nodes[j].link, &fixed, &per_column);
    t += fixed + per_column * (double)share[j];
    worst = t > worst ? t : worst;
  }
  for (size_t j = 0; j < e; j++)
    mlsba_model_destroy(nm[j]);
  free(nm);
  if (!err && makespan)
    *makespan = worst;
  return err;
}
