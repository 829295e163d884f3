/* A worker's devices in seed 001's master-worker mode: opened through
 * libmlsba's executor on a load whose units are the worker's columns (its
 * B' and C' laid out in delivery order, the load's CPU code mapping the
 * executor's ranges onto them), timed at a few column counts; and what
 * the master learns of every worker's devices and links. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "../platform/platform.h"
#include "master_worker.h"

typedef struct {
  int64_t n, m;
  mlsba_precision_t prec;
  const void *a, *b; /* A (n x m), B' (m x columns), delivery order */
  void *c;           /* C' (n x columns) */
  size_t p;
  const int64_t *off, *units, *pos; /* per device: executor range, place */
} mw_kernel_t;

/* ---- a worker's devices ----------------------------------------------- */

/* Its platform ("%r" expanded), its executor, and what each device is: a
 * core, an accelerator (a simulated device with a host link), or idle
 * (an OpenCL device, which this mode does not drive), by its roles. The
 * master opens nothing. */
int mlsba__mw_open_worker(mlsba__mw_t *W) {
  char path[1024];
  int local_rank = 0, local_size = 1;
  int e = mlsba__mpi_local_rank(W->comm, &local_rank, &local_size);
  int ep = mlsba_mpi_platform_path(W->comm, W->o->platform, path, sizeof path);
  int err = mlsba__mpi_agree(W->comm, e ? e : ep);
  if (err || W->rank == 0)
    return err;
  err = mlsba__mpi_platform_open(path, local_rank, local_size, &W->pl);
  int64_t m = 0, k = 0;
  if (!err && mlsba_platform_columns_of(W->pl, &m, &k) &&
      (m != W->o->n || k != W->o->m))
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: its simulated speeds count columns of a %lld x "
                      "%lld product (columns_of), this run's are %lld x %lld",
                      path, (long long)m, (long long)k, (long long)W->o->n,
                      (long long)W->o->m);
  if (!err)
    err = mlsba_executor_create(W->pl, &W->ex);
  W->p = err ? 0 : mlsba_platform_num_devices(W->pl);
  if (!err && (W->kind = calloc(W->p, sizeof *W->kind)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  size_t sims = 0, busy = 0;
  for (size_t i = 0; !err && i < W->p; i++) {
    unsigned roles = mlsba__platform_device_roles(W->pl, i);
    int virtual_time = (roles & MLSBA__ROLE_VIRTUAL) != 0;
    mlsba_link_t host = {0, 0};
    mlsba_platform_device_link(W->pl, i, &host);
    sims += (size_t)virtual_time;
    /* The load has CPU code only: a device that computes neither on a
     * core nor in virtual time (an OpenCL device) takes no columns. */
    W->kind[i] = !(roles & (MLSBA__ROLE_CORE | MLSBA__ROLE_VIRTUAL))
                     ? MLSBA__MW_IDLE
                 : virtual_time && host.bandwidth > 0 ? MLSBA__MW_ACCELERATOR
                                                      : MLSBA__MW_CORE;
    busy += W->kind[i] != MLSBA__MW_IDLE;
  }
  W->simulated = W->p > 0 && sims == W->p;
  if (!err && sims != 0 && sims != W->p)
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: mixes simulated and real devices; a worker runs "
                      "either in virtual time or in wall-clock time",
                      path);
  if (!err && busy == 0)
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: no core or simulated device (OpenCL devices take "
                      "no columns in master-worker mode)",
                      path);
  return err;
}

/* The executor's range of each device: group by group, as it lays a
 * run's units out. */
static void executor_offsets(const mlsba_platform_t *pl, const int64_t units[],
                             int64_t off[]) {
  int64_t at = 0;
  for (size_t g = 0; g < mlsba_platform_num_groups(pl); g++)
    for (size_t k = 0; k < mlsba_platform_group_size(pl, g); k++) {
      size_t i = mlsba_platform_group_device(pl, g, k);
      off[i] = at;
      at += units[i];
    }
}

/* The load's CPU code: the executor's range [first, first + count) of
 * one device, placed where that device's columns arrived. */
static int mw_cpu(void *user, int64_t first, int64_t count) {
  const mw_kernel_t *k = user;
  for (size_t i = 0; i < k->p; i++) {
    if (first < k->off[i] || first >= k->off[i] + k->units[i])
      continue;
    int64_t col = k->pos[i] + (first - k->off[i]);
    size_t e =
        k->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
    mlsba__cpu_gemm(k->prec, 'N', 'N', k->n, count, k->m, 1.0, k->a, k->n,
                    (const char *)k->b + (size_t)col * (size_t)k->m * e, k->m,
                    0.0, (char *)k->c + (size_t)col * (size_t)k->n * e, k->n,
                    1);
    return 0;
  }
  return 1; /* a range no device was given: the executor's layout moved */
}

/* Runs units[] (file order) on the worker's devices with the kernel's
 * operands (scratch while probing); time[] per device. */
int mlsba__mw_run_devices(mlsba__mw_t *W, const int64_t units[],
                          const int64_t pos[], const void *a, const void *b,
                          void *c, double time[]) {
  int64_t total = 0;
  for (size_t i = 0; i < W->p; i++) {
    total += units[i];
    time[i] = 0;
  }
  if (total == 0) /* a worker given nothing */
    return 0;
  int64_t *off = malloc(W->p * sizeof *off);
  mlsba_load_t *load = NULL;
  if (off == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  executor_offsets(W->pl, units, off);
  mw_kernel_t k = {.n = W->o->n,
                   .m = W->o->m,
                   .prec = W->o->precision,
                   .a = a,
                   .b = b,
                   .c = c,
                   .p = W->p,
                   .off = off,
                   .units = units,
                   .pos = pos};
  char shape[96];
  snprintf(shape, sizeof shape, "n=%lld m=%lld %s", (long long)W->o->n,
           (long long)W->o->m,
           W->o->precision == MLSBA_PRECISION_DOUBLE ? "double" : "single");
  int err = mlsba_load_create("master-worker", total, &load);
  if (!err)
    err = mlsba_load_set_cpu(load, mw_cpu, &k);
  if (!err)
    err = mlsba_load_set_shape(load, shape);
  /* A column moves a column of B in and of C out of an accelerator. */
  if (!err)
    err = mlsba_load_set_unit_bytes(load, (double)(W->o->n + W->o->m) *
                                              (double)W->elem);
  if (!err)
    err =
        mlsba_executor_run(W->ex, load, units, MLSBA_DRIVE_SHARED, time, NULL);
  mlsba_load_destroy(load);
  free(off);
  return err;
}

/* The column counts a worker times its devices at, increasing: geometric
 * from 1 to K for simulated devices (or 1, 2, ..., K for a small K),
 * three small products for real ones. */
static void probe_counts(const mlsba__mw_t *W, int64_t xs[]) {
  int64_t K = W->o->k;
  for (int i = 0; i < W->npts; i++) {
    int64_t x;
    if (!W->simulated) {
      int64_t c = K / (16 * (int64_t)W->workers);
      x = (c > 1 ? c : 1) << i;
    } else {
      x = W->npts > 1 ? (int64_t)ceil(pow((double)K, i / (W->npts - 1.0))) : K;
      if (i > 0 && x <= xs[i - 1])
        x = xs[i - 1] + 1;
      x = x < K ? x : K;
    }
    xs[i] = x;
  }
}

/* The most columns device i holds: a simulated device's max_load; none
 * (0) for the others. */
static int64_t device_cap(const mlsba__mw_t *W, size_t i) {
  int64_t cap = mlsba_model_max_load(mlsba_platform_device_model(W->pl, i));
  return cap == MLSBA_NO_MAX_LOAD ? 0 : cap;
}

/* Every busy device timed at each probe count (within what it holds),
 * all devices at once; device i's block of out is its cap, then npts
 * pairs (x, t). */
static int probe_devices(mlsba__mw_t *W, double *out) {
  size_t per = 2 * (size_t)W->npts + 1, busy = 0;
  int64_t *xs = calloc((size_t)W->npts + 1, sizeof *xs);
  int64_t *units = calloc(W->p + 1, sizeof *units),
          *pos = calloc(W->p + 1, sizeof *pos);
  double *t = calloc(W->p + 1, sizeof *t);
  if (!xs || !units || !pos || !t) {
    free(xs);
    free(units);
    free(pos);
    free(t);
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  probe_counts(W, xs);
  for (size_t i = 0; i < W->p; i++)
    busy += W->kind[i] != MLSBA__MW_IDLE;
  size_t cols = (size_t)xs[W->npts - 1] * busy;
  void *a = NULL, *b = NULL, *c = NULL;
  int err = 0;
  if (!W->simulated) {
    a = calloc((size_t)(W->o->n * W->o->m), W->elem);
    b = calloc(cols * (size_t)W->o->m, W->elem);
    c = calloc(cols * (size_t)W->o->n, W->elem);
    if (!a || !b || !c)
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory while timing the "
                                      "devices");
  }
  for (size_t i = 0; i < W->p; i++)
    out[i * per] = (double)device_cap(W, i);
  for (int k = 0; k < W->npts && !err; k++) {
    int64_t at = 0;
    for (size_t i = 0; i < W->p; i++) {
      int64_t cap = device_cap(W, i);
      units[i] = W->kind[i] == MLSBA__MW_IDLE ? 0
                 : cap > 0 && cap < xs[k]     ? cap
                                              : xs[k];
      pos[i] = at;
      at += units[i];
    }
    err = mlsba__mw_run_devices(W, units, pos, a, b, c, t);
    for (size_t i = 0; i < W->p && !err; i++) {
      out[i * per + 1 + 2 * (size_t)k] = (double)units[i];
      out[i * per + 2 + 2 * (size_t)k] = t[i];
      if (W->kind[i] != MLSBA__MW_IDLE && units[i] > 0 && !(t[i] > 0))
        err = mlsba__fail(MLSBA_EDEVICE,
                          "%s took no time for %lld columns: no model to "
                          "partition with",
                          mlsba_platform_device_name(W->pl, i),
                          (long long)units[i]);
    }
  }
  free(a);
  free(b);
  free(c);
  free(xs);
  free(units);
  free(pos);
  free(t);
  return err;
}

/* ---- what the master learns ------------------------------------------- */

/* Gathers every worker's device count, kinds, names and probe times on
 * the master, and the counts and kinds on every rank. */
int mlsba__mw_gather_devices(mlsba__mw_t *W) {
  int mine = (int)W->p, sim = W->simulated, err = 0;
  W->ndev = calloc((size_t)W->q, sizeof *W->ndev);
  int *sims = calloc((size_t)W->q, sizeof *sims);
  if (!W->ndev || !sims)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(W->comm, err)) != 0) {
    free(sims);
    return err;
  }
  MPI_Allgather(&mine, 1, MPI_INT, W->ndev, 1, MPI_INT, W->comm);
  MPI_Allgather(&sim, 1, MPI_INT, sims, 1, MPI_INT, W->comm);
  W->total = 0;
  for (int r = 1; r < W->q; r++)
    W->total += (size_t)W->ndev[r];
  for (int r = 2; r < W->q && !err; r++)
    if (sims[r] != sims[1])
      err = mlsba__fail(MLSBA_EINVAL,
                        "rank %d's devices are %s, rank 1's %s: worker times "
                        "would mix virtual and wall-clock seconds",
                        r, sims[r] ? "simulated" : "real",
                        sims[1] ? "simulated" : "real");
  W->simulated = sims[1];
  W->npts = W->simulated ? MLSBA__MW_PROBE_SIM : MLSBA__MW_PROBE_REAL;
  if (W->o->k < MLSBA__MW_PROBE_SIM && W->simulated)
    W->npts = (int)W->o->k; /* 1, 2, ..., K */
  free(sims);
  if ((err = mlsba__mpi_agree(W->comm, err)) != 0)
    return err;
  int *counts = calloc((size_t)W->q, sizeof *counts);
  int *displs = calloc((size_t)W->q, sizeof *displs);
  size_t per = 2 * (size_t)W->npts + 1;
  double *mine_probe = calloc(W->p * per + 1, sizeof *mine_probe);
  W->kind_all = calloc(W->total + 1, sizeof *W->kind_all);
  W->probe = calloc(W->total * per + 1, sizeof *W->probe);
  W->names = calloc(W->total * 64 + 1, 1);
  char *my_names = calloc(W->p * 64 + 1, 1);
  if (!counts || !displs || !mine_probe || !W->kind_all || !W->probe ||
      !W->names || !my_names)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if (!err && W->rank != 0)
    err = probe_devices(W, mine_probe);
  for (size_t i = 0; !err && i < W->p; i++)
    snprintf(my_names + 64 * i, 64, "%s", mlsba_platform_device_name(W->pl, i));
  if ((err = mlsba__mpi_agree(W->comm, err)) == 0) {
    for (int r = 0, at = 0; r < W->q; at += W->ndev[r], r++) {
      counts[r] = W->ndev[r];
      displs[r] = at;
    }
    MPI_Allgatherv(W->kind, (int)W->p, MPI_INT, W->kind_all, counts, displs,
                   MPI_INT, W->comm);
    for (int r = 0; r < W->q; r++) {
      counts[r] = W->ndev[r] * (int)per;
      displs[r] *= (int)per;
    }
    MPI_Gatherv(mine_probe, (int)(W->p * per), MPI_DOUBLE, W->probe, counts,
                displs, MPI_DOUBLE, 0, W->comm);
    for (int r = 0; r < W->q; r++) {
      counts[r] = W->ndev[r] * 64;
      displs[r] = displs[r] / (int)per * 64;
    }
    MPI_Gatherv(my_names, (int)W->p * 64, MPI_CHAR, W->names, counts, displs,
                MPI_CHAR, 0, W->comm);
  }
  free(counts);
  free(displs);
  free(mine_probe);
  free(my_names);
  return err;
}

/* Every worker's link from the master: measured, or its platform's. */
int mlsba__mw_find_links(mlsba__mw_t *W) {
  int err = 0;
  if ((W->links = calloc((size_t)W->q, sizeof *W->links)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(W->comm, err)) != 0)
    return err;
  if (W->o->links == MLSBA_MPI_MW_LINKS_MEASURE)
    return mlsba__mpi_agree(W->comm,
                            mlsba_mpi_measure_links(W->comm, 0, W->links));
  mlsba_link_t mine = {0, 0};
  if (W->rank != 0)
    mlsba_platform_network(W->pl, &mine);
  double pair[2] = {mine.latency, mine.bandwidth};
  double *all = malloc(2 * (size_t)W->q * sizeof *all);
  if (all == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(W->comm, err)) == 0) {
    MPI_Allgather(pair, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, W->comm);
    for (int r = 0; r < W->q; r++)
      W->links[r] = (mlsba_link_t){all[2 * r], all[2 * r + 1]};
  }
  free(all);
  return err;
}
