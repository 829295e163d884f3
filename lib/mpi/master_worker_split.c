/* The master's three splits of K in seed 001's master-worker mode:
 * compute-only FPM (SLBA over every worker device's probe), seed 001's
 * network-aware DLT (a line fitted to each device's probe, the links),
 * and FPM plus communication (each worker's devices and link). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "master_worker.h"

/* ---- the three splits (the master) ------------------------------------ */

/* Device d's probe: its cap (0: none) and its points, those whose count
 * grew (a capped device repeats its largest). Returns how many. */
static int probe_points(const mlsba__mw_t *W, size_t d, double *cap,
                        const double **pt, int keep[]) {
  const double *p = W->probe + d * (2 * (size_t)W->npts + 1);
  int n = 0;
  *cap = p[0];
  *pt = p + 1;
  for (int i = 0; i < W->npts; i++) {
    keep[i] = p[1 + 2 * i] > 0 && (i == 0 || p[1 + 2 * i] > p[2 * i - 1]);
    n += keep[i];
  }
  return n;
}

/* A device's probe as a model of compute (its host link included). */
static int probe_model(const mlsba__mw_t *W, size_t d, mlsba_model_t **out) {
  int keep[MLSBA__MW_PROBE_SIM];
  double cap;
  const double *pt;
  probe_points(W, d, &cap, &pt, keep);
  int err = mlsba_model_create(out);
  for (int i = 0; i < W->npts && !err; i++)
    if (keep[i])
      err = mlsba_model_set_point(*out, pt[2 * i], pt[2 * i] / pt[2 * i + 1]);
  if (!err && cap > 0)
    err = mlsba_model_set_max_load(*out, (int64_t)cap);
  return err;
}

/* Least squares of t = c x + e over a device's probe. */
static void probe_line(const mlsba__mw_t *W, size_t d, double *c, double *e) {
  int keep[MLSBA__MW_PROBE_SIM];
  double cap;
  const double *pt;
  double k = probe_points(W, d, &cap, &pt, keep);
  double sx = 0, st = 0, sxx = 0, sxt = 0;
  for (int i = 0; i < W->npts; i++) {
    if (!keep[i])
      continue;
    sx += pt[2 * i];
    st += pt[2 * i + 1];
    sxx += pt[2 * i] * pt[2 * i];
    sxt += pt[2 * i] * pt[2 * i + 1];
  }
  double var = k > 0 ? sxx - sx * sx / k : 0;
  *c = var > 0 ? (sxt - sx * st / k) / var : (sx > 0 ? st / sx : 0);
  *e = k > 0 ? (st - *c * sx) / k : 0;
  if (!(*c > 0)) { /* times that do not grow: a constant speed */
    *c = sx > 0 ? st / sx : 1;
    *e = 0;
  }
}

/* Worker w's node in seed 001's model: its accelerator and its cores
 * (their mean line: the model's cores are identical), each a line fitted
 * to its probe, and its link. MLSBA_EINVAL for a node the model cannot
 * describe (two accelerators). first: its first device in the flat
 * order. */
static int dlt_node(const mlsba__mw_t *W, int rank, size_t first,
                    mlsba_dlt_node_t *nd) {
  double NM = (double)W->o->n * (double)W->o->m, cs = 0, es = 0;
  memset(nd, 0, sizeof *nd);
  for (size_t d = first; d < first + (size_t)W->ndev[rank]; d++) {
    double c, e;
    if (W->kind_all[d] == MLSBA__MW_IDLE)
      continue;
    probe_line(W, d, &c, &e);
    if (W->kind_all[d] == MLSBA__MW_CORE) {
      nd->cores++;
      cs += c;
      es += e;
    } else if (nd->accelerator) {
      return mlsba__fail(MLSBA_EINVAL,
                         "rank %d has two accelerators; seed 001's DLT "
                         "takes at most one a node",
                         rank);
    } else {
      nd->accelerator = 1;
      nd->accelerator_op_time = c / NM;
      nd->accelerator_setup = e;
    }
  }
  if (nd->cores > 0) {
    nd->core_op_time = cs / (double)nd->cores / NM;
    nd->core_setup = es / (double)nd->cores;
  }
  const mlsba_link_t *l = &W->links[rank];
  nd->link_byte_time = l->bandwidth > 0 ? 1 / l->bandwidth : 0;
  nd->link_latency = l->bandwidth > 0 ? l->latency : 0;
  nd->order = MLSBA_DLT_ORDER_ACCELERATOR_FIRST;
  return 0;
}

/* The DLT's parts are node by node, the accelerator and then the cores;
 * maps them to (or from, back != 0) devices in file order. */
static void dlt_map(const mlsba__mw_t *W, double *dlt_part, double *flat,
                    int back) {
  size_t at = 0, first = 0;
  for (int r = 1; r < W->q; first += (size_t)W->ndev[r], r++) {
    for (int pass = 0; pass < 2; pass++)
      for (size_t d = first; d < first + (size_t)W->ndev[r]; d++)
        if (W->kind_all[d] ==
            (pass == 0 ? MLSBA__MW_ACCELERATOR : MLSBA__MW_CORE)) {
          if (back)
            dlt_part[at++] = flat[d];
          else
            flat[d] = dlt_part[at++];
        }
  }
}

static mlsba_dlt_problem_t dlt_problem(const mlsba__mw_t *W) {
  return (mlsba_dlt_problem_t){
      .n = W->o->n, .m = W->o->m, .k = W->o->k, .element_size = W->elem};
}

/* Seed 001's model: every worker as a DLT node (NULL nodes: some worker
 * does not fit it). */
static mlsba_dlt_node_t *dlt_nodes(const mlsba__mw_t *W) {
  mlsba_dlt_node_t *nd = calloc((size_t)W->workers, sizeof *nd);
  size_t first = 0;
  for (int r = 1; nd && r < W->q; first += (size_t)W->ndev[r], r++)
    if (dlt_node(W, r, first, &nd[r - 1]) != 0) {
      free(nd);
      return NULL;
    }
  return nd;
}

static int split_dlt(const mlsba__mw_t *W, double *predicted) {
  mlsba_dlt_node_t *nd = dlt_nodes(W);
  double *part = calloc(W->total + 1, sizeof *part);
  double *flat = calloc(W->total + 1, sizeof *flat);
  int64_t *cols = calloc(W->total + 1, sizeof *cols);
  int err = 0;
  if (nd == NULL) {
    size_t first = 0; /* the reason, again, as the error */
    mlsba_dlt_node_t one;
    for (int r = 1; r < W->q && !err; first += (size_t)W->ndev[r], r++)
      err = dlt_node(W, r, first, &one);
    if (!err)
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  } else if (!part || !flat || !cols) {
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  mlsba_dlt_problem_t pr = dlt_problem(W);
  mlsba_dlt_info_t info;
  if (!err)
    err = mlsba_partition_dlt_nodes(&pr, nd, (size_t)W->workers, part, cols,
                                    NULL, &info);
  if (!err) {
    /* columns[] comes in the parts' layout too. */
    double *as_double = part;
    for (size_t i = 0; i < W->total; i++)
      as_double[i] = (double)cols[i];
    dlt_map(W, as_double, flat, 0);
    for (size_t d = 0; d < W->total; d++)
      W->cols[d] = (int64_t)flat[d];
    *predicted = info.time;
  }
  free(nd);
  free(part);
  free(flat);
  free(cols);
  return err;
}

static int split_fpm(const mlsba__mw_t *W, double *predicted) {
  mlsba_model_t **m = calloc(W->total + 1, sizeof *m);
  const mlsba_model_t **busy = calloc(W->total + 1, sizeof *busy);
  int64_t *loads = calloc(W->total + 1, sizeof *loads);
  int err = m && busy && loads ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  size_t nb = 0;
  for (size_t d = 0; d < W->total && !err; d++)
    if (W->kind_all[d] != MLSBA__MW_IDLE &&
        (err = probe_model(W, d, &m[d])) == 0)
      busy[nb++] = m[d];
  mlsba_partition_info_t info;
  if (!err)
    err = mlsba_partition_slba_ex(busy, nb, W->o->k, NULL, loads, &info);
  for (size_t d = 0, i = 0; d < W->total && !err; d++)
    W->cols[d] = W->kind_all[d] == MLSBA__MW_IDLE ? 0 : loads[i++];
  if (!err)
    *predicted = info.makespan;
  for (size_t d = 0; m && d < W->total; d++)
    mlsba_model_destroy(m[d]);
  free(m);
  free(busy);
  free(loads);
  return err;
}

/* FPM plus communication with seed 001's delivery: each worker's device
 * models in delivery order (its accelerator first), served one after
 * another over its link (mlsba_comm_node_t::serial). */
static int split_fpm_comm(const mlsba__mw_t *W, double *predicted) {
  mlsba_model_t **m = calloc(W->total + 1, sizeof *m);
  const mlsba_model_t **busy = calloc(W->total + 1, sizeof *busy);
  size_t *which = calloc(W->total + 1, sizeof *which);
  int64_t *cols = calloc(W->total + 1, sizeof *cols);
  int64_t *share = calloc((size_t)W->workers, sizeof *share);
  mlsba_comm_node_t *cn = calloc((size_t)W->workers, sizeof *cn);
  int err = m && busy && which && cols && share && cn
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  size_t nb = 0, first = 0;
  for (int r = 1; r < W->q && !err; first += (size_t)W->ndev[r], r++) {
    cn[r - 1].models = busy + nb;
    cn[r - 1].link = W->links[r];
    cn[r - 1].serial = 1;
    for (int pass = 0; pass < 2; pass++)
      for (size_t d = first; d < first + (size_t)W->ndev[r] && !err; d++) {
        if (W->kind_all[d] !=
            (pass == 0 ? MLSBA__MW_ACCELERATOR : MLSBA__MW_CORE))
          continue;
        if ((err = probe_model(W, d, &m[d])) == 0) {
          which[nb] = d;
          busy[nb++] = m[d];
        }
      }
    cn[r - 1].devices = (size_t)(busy + nb - cn[r - 1].models);
  }
  mlsba_dlt_problem_t pr = dlt_problem(W);
  if (!err)
    err = mlsba_partition_nodes_comm(&pr, cn, (size_t)W->workers, share, cols,
                                     predicted);
  for (size_t i = 0; i < nb && !err; i++)
    W->cols[which[i]] = cols[i];
  for (size_t d = 0; m && d < W->total; d++)
    mlsba_model_destroy(m[d]);
  free(m);
  free(busy);
  free(which);
  free(cols);
  free(share);
  free(cn);
  return err;
}

/* Seed 001's model's time of the split chosen (NaN when a worker does not
 * fit the model). */
static double dlt_model_time(const mlsba__mw_t *W) {
  mlsba_dlt_node_t *nd = dlt_nodes(W);
  double *part = calloc(W->total + 1, sizeof *part);
  double *flat = calloc(W->total + 1, sizeof *flat);
  double t = NAN;
  mlsba_dlt_problem_t pr = dlt_problem(W);
  if (nd && part && flat) {
    for (size_t d = 0; d < W->total; d++)
      flat[d] = (double)W->cols[d] / (double)W->o->k;
    dlt_map(W, part, flat, 1);
    if (mlsba_dlt_nodes_time(&pr, nd, (size_t)W->workers, part, NULL, NULL,
                             &t) != 0)
      t = NAN;
  }
  free(nd);
  free(part);
  free(flat);
  return t;
}

/* The master partitions; every rank learns every device's columns. */
int mlsba__mw_partition(mlsba__mw_t *W, mlsba_mpi_mw_result_t *r) {
  int err = 0;
  if ((W->cols = calloc(W->total + 1, sizeof *W->cols)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  double times[2] = {NAN, NAN};
  if (!err && W->rank == 0) {
    err = W->o->split == MLSBA_MPI_MW_DLT   ? split_dlt(W, &times[0])
          : W->o->split == MLSBA_MPI_MW_FPM ? split_fpm(W, &times[0])
                                            : split_fpm_comm(W, &times[0]);
    int64_t sum = 0;
    for (size_t d = 0; !err && d < W->total; d++)
      sum += W->cols[d];
    if (!err && sum != W->o->k) /* every message is sized by it */
      err = mlsba__fail(MLSBA_EINVAL,
                        "the %s split gave %lld columns, not K = %lld",
                        mlsba_mpi_mw_split_name(W->o->split), (long long)sum,
                        (long long)W->o->k);
    if (!err)
      times[1] = dlt_model_time(W);
  }
  if ((err = mlsba__mpi_agree(W->comm, err)) != 0)
    return err;
  MPI_Bcast(W->cols, (int)W->total, MPI_INT64_T, 0, W->comm);
  r->predicted_s = times[0];
  r->dlt_model_s = times[1];
  const mlsba__mpi_value_t predicted[] = {
      MLSBA__MPI_NUMBER("predicted_s", r->predicted_s),
      MLSBA__MPI_NUMBER("dlt_model_s", r->dlt_model_s)};
  mlsba__mpi_share_values(W->comm, 0, predicted, 2);
  return 0;
}
