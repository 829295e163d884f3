/* Seed 001's network-aware DLT (Elhiny §4.2, eqs. 12-37): a master that
 * does not compute broadcasts A (N x M) to every node, sends each node's
 * columns of B (M x K) over the node's own link, device after device, and
 * receives the node's columns of C back; all devices finish together.
 *
 * In a node the devices are served in a chain (eq. 21): device i of the
 * delivery order finishes at
 *   F_i = l s M K (x_0 + ... + x_i) + (i + 1) b + c_i x_i + e_i,
 * with x_i its fraction of K's columns, c_i = K (p_i N M + l_P,i s (M + N))
 * (l_P = 0 for a core) and e_i its setup. F_i = F_{i+1} gives
 *   x_{i+1} = (c_i x_i + e_i - e_{i+1} - b) / (l s M K + c_{i+1}),
 * an affine chain x_i = a_i x_0 + g_i: with the accelerator first and
 * identical cores, a_1 = Z_j, g_1 = Phi_j and a_{i+1} = X_j a_i,
 * g_{i+1} = X_j g_i + Y_j (eqs. 24-26). Summing the chain as it is built
 * gives V_j = sum a_i and W_j = sum g_i (eqs. 30-32) in Theta(n_j) with no
 * division by X_j - 1, so l = 0 (X_j = 1, where eqs. 26 and 28-32 read
 * 0/0) needs no special case. The node's time (eqs. 27, 33-35) is
 *   T_j = l s N M + b + F_0 + l s N K (V_j x_0 + W_j) + b = Q_j x_0 + R_j
 * with Q_j = l s M K + c_0 + l s N K V_j and R_j = e_0 + l s N K W_j +
 * l s N M + 3 b. Equal times and sum_j (V_j x_{j,0} + W_j) = 1 give
 *   T = (1 + sum_j (V_j R_j / Q_j - W_j)) / sum_j V_j / Q_j,
 * eq. 37 solved for the common time instead of part_{0,0} (the same
 * equation, no node singled out); x_{j,0} = (T - R_j) / Q_j is eq. 36.
 *
 * A negative part means a device too slow, or served too late, to help:
 * every such device is dropped (it gets no message) and the rest solved
 * again; each round drops at least one, and the sum of the parts is 1,
 * so some device always remains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "grouped.h"
#include "mlsba.h"

typedef struct {
  const mlsba_dlt_problem_t *pr;
  const mlsba_dlt_node_t *nodes;
  size_t e, p;
  size_t *first;         /* e: index of the node's first device in part[] */
  size_t *chain;         /* p: devices of each node in delivery order */
  size_t *len;           /* e: active devices in the node's chain */
  unsigned char *on;     /* p: the device still takes part */
  double *a, *g;         /* p: x = a x_0 + g along the chain */
  double *V, *W, *Q, *R; /* e */
  int *acc_first;        /* e */
} solver_t;

static size_t node_devices(const mlsba_dlt_node_t *n) {
  return n->cores + (n->accelerator ? 1 : 0);
}

static int check_node(const mlsba_dlt_node_t *n, size_t j) {
  const char *fn = "mlsba_partition_dlt_nodes";
  if (n->accelerator != 0 && n->accelerator != 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: nodes[%zu].accelerator must be 0 "
                       "or 1, got %d",
                       fn, j, n->accelerator);
  if (node_devices(n) == 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: nodes[%zu] has no core and no "
                       "accelerator",
                       fn, j);
  if (n->cores > 0 && !(n->core_op_time > 0 && isfinite(n->core_op_time)))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: nodes[%zu].core_op_time must be "
                       "finite and > 0, got %g",
                       fn, j, n->core_op_time);
  if (n->accelerator &&
      !(n->accelerator_op_time > 0 && isfinite(n->accelerator_op_time)))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: nodes[%zu].accelerator_op_time "
                       "must be finite and > 0, got %g",
                       fn, j, n->accelerator_op_time);
  if (!isfinite(n->core_setup) || !isfinite(n->accelerator_setup) ||
      !isfinite(n->link_latency))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: nodes[%zu]: core_setup, "
                       "accelerator_setup and link_latency must be finite",
                       fn, j);
  if (!(n->pcie_byte_time >= 0 && isfinite(n->pcie_byte_time)) ||
      !(n->link_byte_time >= 0 && isfinite(n->link_byte_time)))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: nodes[%zu]: pcie_byte_time and "
                       "link_byte_time must be finite and >= 0",
                       fn, j);
  if ((unsigned)n->order > MLSBA_DLT_ORDER_CORE_FIRST)
    return mlsba__fail(MLSBA_EINVAL, "%s: nodes[%zu].order %d is unknown", fn,
                       j, (int)n->order);
  return 0;
}

static int check_args(const mlsba_dlt_problem_t *pr,
                      const mlsba_dlt_node_t *nodes, size_t e,
                      const double *part) {
  const char *fn = "mlsba_partition_dlt_nodes";
  if (!pr || !nodes || !part)
    return mlsba__fail(MLSBA_EINVAL, "%s: %s is NULL", fn,
                       !pr      ? "problem"
                       : !nodes ? "nodes"
                                : "part");
  if (e == 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: no nodes (e = 0)", fn);
  if (pr->n < 1 || pr->m < 1 || pr->k < 1 || pr->element_size < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: n, m, k and element_size must be "
                       ">= 1, got %lld, %lld, %lld, %zu",
                       fn, (long long)pr->n, (long long)pr->m, (long long)pr->k,
                       pr->element_size);
  for (size_t j = 0; j < e; j++) {
    int err = check_node(&nodes[j], j);
    if (err)
      return err;
  }
  return 0;
}

/* Per-column cost c_i of device d of node j (local 0 is the accelerator
 * when the node has one) and its setup. */
static void device_cost(const solver_t *S, size_t j, size_t local, double *c,
                        double *setup) {
  const mlsba_dlt_node_t *n = &S->nodes[j];
  double N = (double)S->pr->n, M = (double)S->pr->m, K = (double)S->pr->k;
  double s = (double)S->pr->element_size;
  if (n->accelerator && local == 0) {
    *c = K * (n->accelerator_op_time * N * M + n->pcie_byte_time * s * (M + N));
    *setup = n->accelerator_setup;
  } else {
    *c = K * n->core_op_time * N * M;
    *setup = n->core_setup;
  }
}

/* Eq. 20's rule: t(1) - t(2), accelerator first minus core first, has the
 * sign of ((b p0 - b p1) M + b l_P s) N + ((e1 - e0) l + b l_P) s M, its
 * numerator (the denominator is positive). Written without dividing by b,
 * so b = 0 is no special case. */
static int rule_says_accelerator_first(const mlsba_dlt_problem_t *pr,
                                       const mlsba_dlt_node_t *n) {
  double N = (double)pr->n, M = (double)pr->m, s = (double)pr->element_size;
  double b = n->link_latency, l = n->link_byte_time, lp = n->pcie_byte_time;
  double p0 = n->accelerator_op_time, p1 = n->core_op_time;
  double e0 = n->accelerator_setup, e1 = n->core_setup;
  double num = ((b * p0 - b * p1) * M + b * lp * s) * N +
               ((e1 - e0) * l + b * lp) * s * M;
  return num <= 0;
}

/* The node's active devices in delivery order into S->chain. */
static void build_chain(solver_t *S, size_t j) {
  const mlsba_dlt_node_t *n = &S->nodes[j];
  size_t f = S->first[j], *out = S->chain + f, len = 0;
  int acc_on = n->accelerator && S->on[f];
  size_t first_core = f + (n->accelerator ? 1 : 0), cores_on = 0;
  for (size_t d = first_core; d < f + node_devices(n); d++)
    cores_on += S->on[d];
  int acc_first = 1;
  if (acc_on && cores_on > 0) {
    if (n->order == MLSBA_DLT_ORDER_RULE)
      acc_first = rule_says_accelerator_first(S->pr, n);
    else
      acc_first = n->order == MLSBA_DLT_ORDER_ACCELERATOR_FIRST;
  }
  S->acc_first[j] = acc_first;
  if (acc_on && acc_first)
    out[len++] = f;
  for (size_t d = first_core; d < f + node_devices(n); d++) {
    if (!S->on[d])
      continue;
    out[len++] = d;
    if (acc_on && !acc_first && len == 1)
      out[len++] = f;
  }
  S->len[j] = len;
}

/* The chain's coefficients a_i, g_i and the node's V, W, Q, R. */
static void node_constants(solver_t *S, size_t j) {
  const mlsba_dlt_node_t *n = &S->nodes[j];
  double N = (double)S->pr->n, M = (double)S->pr->m, K = (double)S->pr->k;
  double s = (double)S->pr->element_size;
  double l = n->link_byte_time, b = n->link_latency;
  double lsMK = l * s * M * K, lsNK = l * s * N * K;
  const size_t *ch = S->chain + S->first[j];
  double c0, e0;
  device_cost(S, j, ch[0] - S->first[j], &c0, &e0);
  double c = c0, setup = e0, V = 1, W = 0;
  S->a[ch[0]] = 1;
  S->g[ch[0]] = 0;
  for (size_t i = 1; i < S->len[j]; i++) {
    double cn, en;
    device_cost(S, j, ch[i] - S->first[j], &cn, &en);
    double den = lsMK + cn;
    S->a[ch[i]] = c * S->a[ch[i - 1]] / den;
    S->g[ch[i]] = (c * S->g[ch[i - 1]] + setup - en - b) / den;
    V += S->a[ch[i]];
    W += S->g[ch[i]];
    c = cn;
    setup = en;
  }
  S->V[j] = V;
  S->W[j] = W;
  S->Q[j] = lsMK + c0 + lsNK * V;
  S->R[j] = e0 + lsNK * W + l * s * N * M + 3 * b;
}

/* One closed-form solve over the active devices: the parts into part[]
 * (0 for a dropped device) and the common time; returns the number of
 * negative parts, which the caller drops. */
static size_t solve_once(solver_t *S, double *part, double *time) {
  double num = 1, den = 0;
  for (size_t j = 0; j < S->e; j++) {
    build_chain(S, j);
    if (S->len[j] == 0)
      continue;
    node_constants(S, j);
    num += S->V[j] * S->R[j] / S->Q[j] - S->W[j];
    den += S->V[j] / S->Q[j];
  }
  double T = num / den;
  size_t negative = 0;
  memset(part, 0, S->p * sizeof *part);
  for (size_t j = 0; j < S->e; j++) {
    if (S->len[j] == 0)
      continue;
    double x0 = (T - S->R[j]) / S->Q[j];
    for (size_t i = 0; i < S->len[j]; i++) {
      size_t d = S->chain[S->first[j] + i];
      part[d] = S->a[d] * x0 + S->g[d];
      negative += part[d] < 0;
    }
  }
  *time = T;
  return negative;
}

static void solver_free(solver_t *S) {
  free(S->first);
  free(S->chain);
  free(S->len);
  free(S->on);
  free(S->a);
  free(S->g);
  free(S->V);
  free(S->W);
  free(S->Q);
  free(S->R);
  free(S->acc_first);
}

static int solver_init(solver_t *S, const mlsba_dlt_problem_t *pr,
                       const mlsba_dlt_node_t *nodes, size_t e) {
  memset(S, 0, sizeof *S);
  S->pr = pr;
  S->nodes = nodes;
  S->e = e;
  for (size_t j = 0; j < e; j++) {
    if (nodes[j].cores > SIZE_MAX / 4 - S->p)
      return mlsba__fail(MLSBA_ERANGE, "mlsba_partition_dlt_nodes: too many "
                                       "devices");
    S->p += node_devices(&nodes[j]);
  }
  S->first = malloc(e * sizeof *S->first);
  S->chain = malloc(S->p * sizeof *S->chain);
  S->len = malloc(e * sizeof *S->len);
  S->on = malloc(S->p);
  S->a = malloc(S->p * sizeof *S->a);
  S->g = malloc(S->p * sizeof *S->g);
  S->V = malloc(e * sizeof *S->V);
  S->W = malloc(e * sizeof *S->W);
  S->Q = malloc(e * sizeof *S->Q);
  S->R = malloc(e * sizeof *S->R);
  S->acc_first = malloc(e * sizeof *S->acc_first);
  if (!S->first || !S->chain || !S->len || !S->on || !S->a || !S->g || !S->V ||
      !S->W || !S->Q || !S->R || !S->acc_first) {
    solver_free(S);
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_partition_dlt_nodes: out of "
                                     "memory");
  }
  for (size_t j = 0, f = 0; j < e; f += node_devices(&nodes[j++]))
    S->first[j] = f;
  memset(S->on, 1, S->p);
  return 0;
}

/* Node j's time for given parts: its devices with a part in delivery
 * order (into S->chain), each finishing at F_i (eq. 21's terms), the node
 * at eq. 27. */
static double node_time_of(solver_t *S, size_t j, const double *part,
                           int acc_first) {
  const mlsba_dlt_node_t *n = &S->nodes[j];
  double N = (double)S->pr->n, M = (double)S->pr->m, K = (double)S->pr->k;
  double s = (double)S->pr->element_size;
  double l = n->link_byte_time, b = n->link_latency;
  size_t f = S->first[j], *chain = S->chain + f, len = 0;
  int acc = n->accelerator && part[f] > 0;
  if (acc && acc_first)
    chain[len++] = f;
  for (size_t d = f + (n->accelerator ? 1 : 0); d < f + node_devices(n); d++) {
    if (!(part[d] > 0))
      continue;
    chain[len++] = d;
    if (acc && !acc_first && len == 1)
      chain[len++] = f;
  }
  if (acc && !acc_first && len == 0)
    chain[len++] = f;
  if (len == 0)
    return 0;
  double sum = 0, finish = -INFINITY;
  for (size_t i = 0; i < len; i++) {
    double c, setup;
    device_cost(S, j, chain[i] - f, &c, &setup);
    sum += part[chain[i]];
    double F =
        l * s * M * K * sum + (double)(i + 1) * b + c * part[chain[i]] + setup;
    finish = F > finish ? F : finish;
  }
  return l * s * N * M + b + finish + l * s * N * K * sum + b;
}

int mlsba_dlt_nodes_time(const mlsba_dlt_problem_t *problem,
                         const mlsba_dlt_node_t nodes[], size_t e,
                         const double part[], const int accelerator_first[],
                         double node_time[], double *time) {
  int err = check_args(problem, nodes, e, part);
  if (!err && time == NULL)
    err = mlsba__fail(MLSBA_EINVAL, "mlsba_dlt_nodes_time: time is NULL");
  solver_t S;
  if (!err)
    err = solver_init(&S, problem, nodes, e);
  if (err)
    return err;
  for (size_t d = 0; d < S.p && !err; d++)
    if (!(part[d] >= 0) || !isfinite(part[d]))
      err = mlsba__fail(MLSBA_EINVAL,
                        "mlsba_dlt_nodes_time: part[%zu] must "
                        "be finite and >= 0, got %g",
                        d, part[d]);
  double worst = 0;
  for (size_t j = 0; j < e && !err; j++) {
    int acc_first = 1;
    if (accelerator_first)
      acc_first = accelerator_first[j] != 0;
    else if (nodes[j].order == MLSBA_DLT_ORDER_RULE)
      acc_first = !nodes[j].accelerator || nodes[j].cores == 0 ||
                  rule_says_accelerator_first(problem, &nodes[j]);
    else
      acc_first = nodes[j].order == MLSBA_DLT_ORDER_ACCELERATOR_FIRST;
    double t = node_time_of(&S, j, part, acc_first);
    if (node_time)
      node_time[j] = t;
    worst = t > worst ? t : worst;
  }
  if (!err)
    *time = worst;
  solver_free(&S);
  return err;
}

/* Parts to whole columns summing to K, by largest remainder. */
static int round_columns(const solver_t *S, const double *part,
                         int64_t *columns) {
  double *x = malloc(S->p * sizeof *x);
  int64_t *cap = malloc(S->p * sizeof *cap);
  if (!x || !cap) {
    free(x);
    free(cap);
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_partition_dlt_nodes: out of "
                                     "memory");
  }
  double sum = 0;
  for (size_t d = 0; d < S->p; d++)
    sum += part[d];
  for (size_t d = 0; d < S->p; d++) {
    x[d] = part[d] / sum * (double)S->pr->k;
    cap[d] = S->on[d] ? S->pr->k : 0;
  }
  mlsba__round_shares(x, cap, S->p, S->pr->k, columns);
  free(x);
  free(cap);
  return 0;
}

int mlsba_partition_dlt_nodes(const mlsba_dlt_problem_t *problem,
                              const mlsba_dlt_node_t nodes[], size_t e,
                              double part[], int64_t columns[],
                              int accelerator_first[], mlsba_dlt_info_t *info) {
  int err = check_args(problem, nodes, e, part);
  if (err)
    return err;
  solver_t S;
  err = solver_init(&S, problem, nodes, e);
  if (err)
    return err;
  double T = 0;
  size_t dropped = 0;
  while (solve_once(&S, part, &T) > 0) {
    for (size_t d = 0; d < S.p; d++) {
      if (S.on[d] && part[d] < 0) {
        S.on[d] = 0;
        part[d] = 0;
        dropped++;
      }
    }
  }
  if (!isfinite(T))
    err = mlsba__fail(MLSBA_ERANGE,
                      "mlsba_partition_dlt_nodes: the common "
                      "time overflows (%g): the parameters are out of range",
                      T);
  if (!err && columns)
    err = round_columns(&S, part, columns);
  if (!err && accelerator_first)
    memcpy(accelerator_first, S.acc_first, e * sizeof *accelerator_first);
  if (!err && info) {
    info->time = T;
    info->dropped = dropped;
  }
  solver_free(&S);
  return err;
}
