/* What every rank ran in the two-dimensional product, gathered into the
 * result: rectangles, times and links on every rank, the devices of every
 * rank (with their whole names) on rank 0 only. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "multiply.h"

/* What every rank reports about itself after the product. */
typedef struct {
  double w, m, n, row, col, time, comm, total, ndev;
  double latency, bandwidth, link_source, modelled;
} rank_report_t;

typedef struct {
  int64_t load;
  double time;
} dev_report_t;

/* src cut to at most cap - 1 bytes, never inside a UTF-8 character (a
 * cut one would make the name invalid UTF-8, which JSON cannot carry). */
static void copy_cut_utf8(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) {
    n = cap - 1; /* src[n] is the first byte left out: a continuation
                    byte there means its character straddles the cut */
    while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
      n--;
  }
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* This rank's device names one after another, each with its NUL. */
static char *names_of(const mlsba__mpi_node_t *node, int *len) {
  size_t p = mlsba__mpi_node_num_devices(node), total = 0;
  for (size_t i = 0; i < p; i++)
    total += strlen(mlsba__mpi_node_device_name(node, i)) + 1;
  char *all = total < INT_MAX ? malloc(total ? total : 1) : NULL;
  for (size_t i = 0, at = 0; all && i < p; i++) {
    const char *name = mlsba__mpi_node_device_name(node, i);
    memcpy(all + at, name, strlen(name) + 1);
    at += strlen(name) + 1;
  }
  *len = (int)total;
  return all;
}

/* Rank 0's devices of every rank get their whole names. */
static int fill_names(mlsba__mpi_mult_t *C, const char *all, const int *displs,
                      mlsba_mpi_result_t *r) {
  for (int i = 0; i < C->q; i++) {
    const char *name = all + displs[i];
    for (size_t k = 0; k < r->ranks[i].ndevices; k++) {
      mlsba_mpi_device_t *d = &r->ranks[i].devices[k];
      if ((d->full_name = strdup(name)) == NULL)
        return mlsba__fail(MLSBA_ENOMEM, "out of memory");
      copy_cut_utf8(d->name, sizeof d->name, name);
      name += strlen(name) + 1;
    }
  }
  return 0;
}

/* Every device's whole name, to the head only (after gather_reports),
 * and kept there for the next reports (C->names). */
static int gather_names(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r) {
  int len = 0, err = 0;
  char *mine = names_of(C->node, &len), *all = NULL;
  int *counts = C->rank == 0 ? malloc((size_t)C->q * sizeof *counts) : NULL;
  int *displs = C->rank == 0 ? malloc((size_t)C->q * sizeof *displs) : NULL;
  if (mine == NULL || (C->rank == 0 && (!counts || !displs)))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory for the device names");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, C->comm);
  int64_t total = 0;
  for (int i = 0; C->rank == 0 && i < C->q; i++) {
    displs[i] = (int)total;
    total += counts[i];
  }
  if (C->rank == 0 && (total >= INT_MAX || !(all = malloc((size_t)total + 1))))
    err = mlsba__fail(MLSBA_ENOMEM,
                      "out of memory for %lld bytes of device "
                      "names",
                      (long long)total);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Gatherv(mine, len, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, C->comm);
  if (C->rank == 0)
    err = fill_names(C, all, displs, r);
  err = mlsba__mpi_agree(C->comm, err);
  if (!err) { /* kept: the same on every rank */
    C->names = all;
    C->names_at = displs;
    C->names_kept = 1;
    all = NULL;
    displs = NULL;
  }
done:
  free(mine);
  free(all);
  free(counts);
  free(displs);
  return err;
}

static int gather_reports(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                          const mlsba__mpi_product_stats_t *st,
                          mlsba_mpi_result_t *r) {
  size_t p = mlsba__mpi_node_num_devices(C->node);
  /* The rank's rectangle of C in blocks (the last ones may be partial). */
  const mlsba__mpi_part_t *x = &lay->part[C->rank];
  int64_t b = lay->b, bm = (x->rows + b - 1) / b, bn = (x->cols + b - 1) / b;
  rank_report_t me = {(double)(bm * bn),
                      (double)bm,
                      (double)bn,
                      (double)(x->row0 / b),
                      (double)(x->col0 / b),
                      st->compute,
                      st->comm,
                      st->total,
                      (double)p,
                      0,
                      0,
                      0,
                      0};
  if (C->links) {
    mlsba_link_t l = C->links[C->rank];
    double fixed, per;
    mlsba__mpi_mult_comm_cost(C, C->rank, &fixed, &per);
    me.latency = l.latency;
    me.bandwidth = l.bandwidth;
    me.link_source = C->link_source[C->rank];
    me.modelled = fixed + per * (double)(C->mine.m + C->mine.n); /* cells */
  }
  rank_report_t *all = malloc((size_t)C->q * sizeof *all);
  dev_report_t *mine = calloc(p ? p : 1, sizeof *mine);
  int *counts = malloc((size_t)C->q * sizeof *counts);
  int *displs = malloc((size_t)C->q * sizeof *displs);
  r->ranks = calloc((size_t)C->q, sizeof *r->ranks);
  int err = 0;
  if (!all || !mine || !counts || !displs || !r->ranks)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Allgather(&me, (int)(sizeof me / sizeof(double)), MPI_DOUBLE, all,
                (int)(sizeof me / sizeof(double)), MPI_DOUBLE, C->comm);
  for (size_t i = 0; i < p; i++)
    mlsba__mpi_node_device(C->node, i, &mine[i].load, &mine[i].time);
  double max_total = 0, sum_total = 0, sum_comm = 0;
  int bytes_total = 0;
  for (int i = 0; i < C->q; i++) {
    mlsba_mpi_rank_t *rk = &r->ranks[i];
    rk->w = (int64_t)all[i].w;
    rk->m = (int64_t)all[i].m;
    rk->n = (int64_t)all[i].n;
    rk->row = (int64_t)all[i].row;
    rk->col = (int64_t)all[i].col;
    rk->time = all[i].time;
    rk->comm = all[i].comm;
    rk->ndevices = (size_t)all[i].ndev;
    rk->link = (mlsba_link_t){all[i].latency, all[i].bandwidth};
    rk->link_source = (int)all[i].link_source;
    rk->comm_modelled = all[i].modelled;
    max_total = all[i].total > max_total ? all[i].total : max_total;
    sum_total += all[i].total;
    sum_comm += all[i].comm;
    counts[i] = (int)(rk->ndevices * sizeof(dev_report_t));
    displs[i] = bytes_total;
    bytes_total += counts[i];
  }
  r->makespan_s = max_total;
  r->comm_share = sum_total > 0 ? sum_comm / sum_total : 0;
  double flops = 2.0 * (double)lay->m * (double)lay->n * (double)lay->k;
  r->gflops = max_total > 0 ? flops / max_total * 1e-9 : 0;
  /* The devices of every rank, to the head only: with a thousand ranks
   * nobody else needs them. */
  dev_report_t *devs = NULL;
  if (C->rank == 0 && (devs = malloc((size_t)bytes_total + 1)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Gatherv(mine, (int)(p * sizeof *mine), MPI_BYTE, devs, counts, displs,
              MPI_BYTE, 0, C->comm);
  for (int i = 0; C->rank == 0 && i < C->q && !err; i++) {
    mlsba_mpi_rank_t *rk = &r->ranks[i];
    rk->devices = calloc(rk->ndevices ? rk->ndevices : 1, sizeof *rk->devices);
    if (rk->devices == NULL) {
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
      break;
    }
    const dev_report_t *d =
        (const dev_report_t *)((const char *)devs + displs[i]);
    for (size_t k = 0; k < rk->ndevices; k++) {
      rk->devices[k].load = d[k].load;
      rk->devices[k].time = d[k].time;
    }
  }
  free(devs);
  err = mlsba__mpi_agree(C->comm, err);
done:
  free(all);
  free(mine);
  free(counts);
  free(displs);
  return err;
}

int mlsba__mpi_mult_report(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                           const mlsba__mpi_product_stats_t *st,
                           mlsba_mpi_result_t *r, int *late) {
  *late = 0;
  int err = gather_reports(C, lay, st, r);
  if (err || !C->names_kept)
    return err ? err : gather_names(C, r);
  /* The names as the first report gathered them: five collectives fewer
   * a run (each a few ms on ranks that share a core under load). */
  if (C->rank == 0)
    *late = fill_names(C, C->names, C->names_at, r);
  return 0;
}
