/* The run of seed 001's master-worker mode: over each worker's own link
 * A first, then one message per device, the accelerator's columns first
 * and then its cores', each device starting on its columns' arrival; the
 * worker returns its C in one message when its devices are done; the
 * links of different workers carry their messages at the same time.
 * Then the master checks sampled elements of C and every rank learns
 * every worker's times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "master_worker.h"

enum { TAG_A = 11, TAG_B = 12, TAG_C = 13 };

/* ---- the run ------------------------------------------------------------ */

/* Worker r's devices in delivery order: its accelerators first, then the
 * others in file order, those with columns only; returns how many. */
static size_t delivery_order(const mlsba__mw_t *W, size_t first, size_t n,
                             size_t order[]) {
  size_t k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t d = first; d < first + n; d++)
      if (W->cols[d] > 0 &&
          (W->kind_all[d] == MLSBA__MW_ACCELERATOR) == (pass == 0))
        order[k++] = d - first;
  return k;
}

size_t mlsba__mw_first_device(const mlsba__mw_t *W, int rank) {
  size_t first = 0;
  for (int r = 1; r < rank; r++)
    first += (size_t)W->ndev[r];
  return first;
}

int64_t mlsba__mw_worker_columns(const mlsba__mw_t *W, int rank) {
  int64_t x = 0;
  size_t first = mlsba__mw_first_device(W, rank);
  for (size_t d = first; d < first + (size_t)W->ndev[rank]; d++)
    x += W->cols[d];
  return x;
}

/* What the run needs besides the matrices, allocated before it starts:
 * a rank that failed to get it must not leave the others waiting in a
 * message. The master's per worker and device, a worker's per device. */
typedef struct {
  MPI_Request *send, *recv;
  size_t *order, *len, *next;
  int64_t *col0, *units, *pos;
  double *arrive;
} scratch_t;

static void scratch_free(scratch_t *s) {
  free(s->send);
  free(s->recv);
  free(s->order);
  free(s->len);
  free(s->next);
  free(s->col0);
  free(s->units);
  free(s->pos);
  free(s->arrive);
}

static int scratch_alloc(const mlsba__mw_t *W, scratch_t *s) {
  size_t w = (size_t)W->workers + 1, d = W->total + W->p + 1;
  s->send = calloc(w, sizeof *s->send);
  s->recv = calloc(w, sizeof *s->recv);
  s->order = calloc(d, sizeof *s->order);
  s->len = calloc(w, sizeof *s->len);
  s->next = calloc(w, sizeof *s->next);
  s->col0 = calloc(w, sizeof *s->col0);
  s->units = calloc(d, sizeof *s->units);
  s->pos = calloc(d, sizeof *s->pos);
  s->arrive = calloc(d, sizeof *s->arrive);
  return s->send && s->recv && s->order && s->len && s->next && s->col0 &&
                 s->units && s->pos && s->arrive
             ? 0
             : mlsba__fail(MLSBA_ENOMEM, "out of memory");
}

/* Per worker on the master: the times of its last B message's
 * completion and of its C's arrival. */
typedef struct {
  double sent, returned;
} master_times_t;

/* The master: A and then each device's columns over every worker's link,
 * one message at a time per link, all links at once; C back. */
static int master_run(mlsba__mw_t *W, const void *A, const void *B, void *C,
                      double t0, scratch_t *sc, master_times_t *mt) {
  int w = W->workers;
  MPI_Request *send = sc->send, *recv = sc->recv;
  size_t *order = sc->order, *len = sc->len, *next = sc->next;
  int64_t *col0 = sc->col0;
  size_t N = (size_t)W->o->n, M = (size_t)W->o->m, e = W->elem;
  int64_t at = 0;
  for (int j = 0; j < w; j++) {
    size_t first = mlsba__mw_first_device(W, j + 1);
    len[j] = delivery_order(W, first, (size_t)W->ndev[j + 1], order + first);
    col0[j] = at;
    int64_t x = mlsba__mw_worker_columns(W, j + 1);
    send[j] = recv[j] = MPI_REQUEST_NULL;
    if (x == 0) /* a worker given nothing is sent nothing, A included */
      continue;
    MPI_Irecv((char *)C + (size_t)at * N * e, (int)((size_t)x * N),
              W->o->precision == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE
                                                        : MPI_FLOAT,
              j + 1, TAG_C, W->comm, &recv[j]);
    MPI_Isend(A, (int)(N * M),
              W->o->precision == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE
                                                        : MPI_FLOAT,
              j + 1, TAG_A, W->comm, &send[j]);
    at += x;
  }
  MPI_Datatype type =
      W->o->precision == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
  /* next[j]: B messages posted so far; col0[j] walks the columns. */
  for (int left = w; left > 0;) {
    int j;
    MPI_Waitany(w, send, &j, MPI_STATUS_IGNORE);
    if (j == MPI_UNDEFINED)
      break;
    size_t first = mlsba__mw_first_device(W, j + 1);
    if (next[j] == len[j]) {
      mt[j].sent = MPI_Wtime() - t0;
      left--;
      continue;
    }
    int64_t x = W->cols[first + order[first + next[j]]];
    MPI_Isend((const char *)B + (size_t)col0[j] * M * e, (int)((size_t)x * M),
              type, j + 1, TAG_B, W->comm, &send[j]);
    col0[j] += x;
    next[j]++;
  }
  for (int k = 0; k < w; k++) {
    int j;
    MPI_Waitany(w, recv, &j, MPI_STATUS_IGNORE);
    if (j != MPI_UNDEFINED)
      mt[j].returned = MPI_Wtime() - t0;
  }
  return 0;
}

/* What a worker measured of its run. */
typedef struct {
  double a_arrived; /* A arrived */
  double arrived;   /* its last columns arrived */
  double finished;  /* its devices done, C about to go */
} worker_times_t;

/* A worker: A, then its devices' columns in delivery order (each
 * device's arrival noted), the devices, C back. Simulated devices start
 * on their own columns' arrival: the rank's clock then waits for the
 * last to finish. A device error still sends C, so that no rank waits. */
static int worker_run(mlsba__mw_t *W, void *A, void *B, void *C, double t0,
                      scratch_t *sc, double dev_time[], worker_times_t *wt) {
  size_t first = mlsba__mw_first_device(W, W->rank);
  size_t *order = sc->order;
  int64_t *units = sc->units, *pos = sc->pos;
  double *arrive = sc->arrive;
  int err = 0;
  size_t N = (size_t)W->o->n, M = (size_t)W->o->m, e = W->elem;
  MPI_Datatype type =
      W->o->precision == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
  int64_t x = mlsba__mw_worker_columns(W, W->rank);
  if (x == 0) /* given nothing: sent nothing */
    return 0;
  /* The messages come whatever happened here: receive them all. */
  MPI_Recv(A, (int)(N * M), type, 0, TAG_A, W->comm, MPI_STATUS_IGNORE);
  wt->a_arrived = MPI_Wtime() - t0;
  size_t n = delivery_order(W, first, W->p, order);
  int64_t at = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = order[k];
    units[i] = W->cols[first + i];
    pos[i] = at;
    MPI_Recv((char *)B + (size_t)at * M * e, (int)((size_t)units[i] * M), type,
             0, TAG_B, W->comm, MPI_STATUS_IGNORE);
    arrive[i] = MPI_Wtime() - t0;
    at += units[i];
  }
  wt->arrived = MPI_Wtime() - t0;
  if (!err)
    err = mlsba__mw_run_devices(W, units, pos, A, B, C, dev_time);
  double finish = MPI_Wtime() - t0;
  if (!err && W->simulated) {
    finish = wt->arrived;
    for (size_t i = 0; i < W->p; i++)
      if (units[i] > 0 && arrive[i] + dev_time[i] > finish)
        finish = arrive[i] + dev_time[i];
    mlsba__mpi_spend(finish - (MPI_Wtime() - t0));
  }
  wt->finished = finish;
  MPI_Send(C, (int)((size_t)x * N), type, 0, TAG_C, W->comm);
  return err;
}

/* ---- operands, check, report ------------------------------------------ */

/* The master's A and B: the application's, or made from the seed. */
static int fill_operands(const mlsba__mw_t *W, void *A, void *B) {
  const mlsba_mpi_master_worker_opts_t *o = W->o;
  if (o->fill == NULL) {
    mlsba__mpi_fill(A, o->seed, 0, 0, 0, o->n, o->m, o->precision);
    mlsba__mpi_fill(B, o->seed, 1, 0, 0, o->m, o->k, o->precision);
    return 0;
  }
  if (o->fill(o->fill_user, 0, 0, 0, o->n, o->m, A, o->n) != 0 ||
      o->fill(o->fill_user, 1, 0, 0, o->m, o->k, B, o->m) != 0)
    return mlsba__fail(MLSBA_EINVAL, "rank 0: the application's fill failed");
  return 0;
}

static double element(const void *x, size_t i, mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? ((const double *)x)[i]
                                        : (double)((const float *)x)[i];
}

/* Sampled elements of C against long-double sums over A and B: the
 * corners, then elements spread by a multiplicative hash. */
static void check_c(const mlsba__mw_t *W, const void *A, const void *B,
                    const void *C, mlsba_mpi_mw_result_t *r) {
  const mlsba_mpi_master_worker_opts_t *o = W->o;
  double u = o->precision == MLSBA_PRECISION_DOUBLE ? 0x1.0p-53 : 0x1.0p-24;
  size_t N = (size_t)o->n, M = (size_t)o->m, K = (size_t)o->k;
  r->verified = 1;
  r->max_rel_error = 0;
  for (unsigned s = 0; s < o->verify_samples; s++) {
    uint64_t h = (s + 1) * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = s < 4 ? (s & 1 ? N - 1 : 0) : (size_t)(h % N);
    size_t j = s < 4 ? (s & 2 ? K - 1 : 0) : (size_t)((h >> 29) % K);
    long double ref = 0, mag = 0;
    for (size_t k = 0; k < M; k++) {
      long double p = (long double)element(A, k * N + i, o->precision) *
                      element(B, j * M + k, o->precision);
      ref += p;
      mag += fabsl(p);
    }
    double got = element(C, j * N + i, o->precision);
    double err = (double)(fabsl((long double)got - ref) / (mag > 0 ? mag : 1));
    if (!(err <= 4.0 * (double)M * u))
      r->verified = 0;
    if (!(err <= r->max_rel_error))
      r->max_rel_error = err;
  }
}

/* Every rank learns every worker's times; the master its devices. */
static int report(mlsba__mw_t *W, const master_times_t *mt,
                  const worker_times_t *wt, const double dev_time[],
                  mlsba_mpi_mw_result_t *r) {
  int w = W->workers;
  double mine[3] = {wt->a_arrived, wt->arrived, wt->finished};
  double *all = calloc(3 * (size_t)W->q, sizeof *all);
  double *m2 = calloc(2 * (size_t)w + 1, sizeof *m2);
  double *dev_all = calloc(W->total + 1, sizeof *dev_all);
  int *counts = calloc((size_t)W->q, sizeof *counts);
  int *displs = calloc((size_t)W->q, sizeof *displs);
  r->worker = calloc((size_t)w, sizeof *r->worker);
  int err = all && m2 && dev_all && counts && displs && r->worker
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(W->comm, err)) == 0) {
    MPI_Allgather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, W->comm);
    for (int j = 0; W->rank == 0 && j < w; j++) {
      m2[2 * j] = mt[j].sent;
      m2[2 * j + 1] = mt[j].returned;
    }
    MPI_Bcast(m2, 2 * w, MPI_DOUBLE, 0, W->comm);
    for (int rk = 0, at = 0; rk < W->q; at += W->ndev[rk], rk++) {
      counts[rk] = W->ndev[rk];
      displs[rk] = at;
    }
    MPI_Gatherv(dev_time, (int)W->p, MPI_DOUBLE, dev_all, counts, displs,
                MPI_DOUBLE, 0, W->comm);
  }
  int64_t col0 = 0;
  for (int j = 0; !err && j < w; j++) {
    mlsba_mpi_mw_worker_t *x = &r->worker[j];
    size_t first = mlsba__mw_first_device(W, j + 1);
    x->rank = j + 1;
    x->col0 = col0;
    x->columns = mlsba__mw_worker_columns(W, j + 1);
    col0 += x->columns;
    x->link = W->links[j + 1];
    x->a_arrived = all[3 * (j + 1)];
    x->arrived = all[3 * (j + 1) + 1];
    x->finished = all[3 * (j + 1) + 2];
    x->sent = m2[2 * j];
    x->returned = m2[2 * j + 1];
    x->ndevices = (size_t)W->ndev[j + 1];
    if (W->rank != 0)
      continue;
    if ((x->devices = calloc(x->ndevices + 1, sizeof *x->devices)) == NULL) {
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
      break;
    }
    for (size_t d = 0; d < x->ndevices; d++) {
      mlsba_mpi_device_t *dv = &x->devices[d];
      snprintf(dv->name, sizeof dv->name, "%s", W->names + 64 * (first + d));
      dv->full_name = strdup(dv->name);
      dv->load = W->cols[first + d];
      dv->time = dv->load > 0 ? dev_all[first + d] : 0;
    }
  }
  free(all);
  free(m2);
  free(dev_all);
  free(counts);
  free(displs);
  return mlsba__mpi_agree(W->comm, err);
}

/* The buffers of the run: the master's A, B, C, a worker's A, B', C'. */
static int allocate(mlsba__mw_t *W, void **A, void **B, void **C) {
  size_t N = (size_t)W->o->n, M = (size_t)W->o->m, K = (size_t)W->o->k;
  size_t x = W->rank == 0 ? K : (size_t)mlsba__mw_worker_columns(W, W->rank);
  *A = mlsba__mpi_alloc(N * M * W->elem);
  *B = mlsba__mpi_alloc(M * x * W->elem);
  *C = mlsba__mpi_alloc(N * x * W->elem);
  int err = *A && *B && *C ? 0
                           : mlsba__fail(MLSBA_ENOMEM,
                                         "out of memory for the matrices "
                                         "(%zu x %zu, %zu x %zu, %zu x %zu)",
                                         N, M, M, x, N, x);
  if (!err && W->rank == 0 && !W->simulated)
    err = fill_operands(W, *A, *B);
  return err;
}

int mlsba__mw_run(mlsba__mw_t *W, mlsba_mpi_mw_result_t *r) {
  void *A = NULL, *B = NULL, *C = NULL;
  double *dev_time = calloc(W->p + 1, sizeof *dev_time);
  master_times_t *mt = calloc((size_t)W->workers, sizeof *mt);
  worker_times_t wt = {0, 0, 0};
  scratch_t sc = {0};
  int err = dev_time && mt ? scratch_alloc(W, &sc)
                           : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if (!err)
    err = allocate(W, &A, &B, &C);
  if ((err = mlsba__mpi_agree(W->comm, err)) == 0) {
    MPI_Barrier(W->comm);
    double t0 = MPI_Wtime();
    err = W->rank == 0 ? master_run(W, A, B, C, t0, &sc, mt)
                       : worker_run(W, A, B, C, t0, &sc, dev_time, &wt);
    double end = MPI_Wtime() - t0;
    MPI_Bcast(&end, 1, MPI_DOUBLE, 0, W->comm);
    r->makespan_s = end;
    err = mlsba__mpi_agree(W->comm, err);
  }
  if (!err)
    err = report(W, mt, &wt, dev_time, r);
  r->verified = -1;
  if (!err && W->rank == 0 && !W->simulated && W->o->verify_samples > 0)
    check_c(W, A, B, C, r);
  const mlsba__mpi_value_t check[] = {
      MLSBA__MPI_NUMBER("verified", r->verified),
      MLSBA__MPI_NUMBER("max_rel_error", r->max_rel_error)};
  if (!err) /* the master's check, for every rank */
    mlsba__mpi_share_values(W->comm, 0, check, 2);
  if (!err && W->rank == 0 && !W->simulated) {
    r->c = C; /* the result owns it now */
    C = NULL;
  }
  mlsba__mpi_free(A);
  mlsba__mpi_free(B);
  mlsba__mpi_free(C);
  free(dev_time);
  free(mt);
  scratch_free(&sc);
  return err;
}
