/* Seed 001's application across ranks (issue 24): C = A x B with A
 * (N x M) sent whole to every worker, B (M x K) split by columns among
 * the workers' devices, C returned; rank 0 is the master, which holds A,
 * B and C, sends and receives, and computes nothing.
 *
 * The split comes from models: every worker times its own devices at a
 * few column counts (virtual time for simulated devices), the master
 * gathers the times, the links (a ping-pong, or each worker's platform
 * file) and partitions K by compute-only FPM, by seed 001's DLT or by FPM
 * plus communication. The delivery is the thesis's: over each worker's
 * own link A first, then one message per device, the accelerator's first
 * and then its cores', each device starting on its columns' arrival; the
 * worker returns its C in one message when its devices are done. The
 * links of different workers carry their messages at the same time.
 *
 * A worker's devices run through libmlsba's executor on a load whose
 * units are the worker's columns; its B' and C' are laid out in delivery
 * order, and the load's CPU code maps the executor's ranges onto it. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "internal.h"

enum { TAG_A = 11, TAG_B = 12, TAG_C = 13 };
/* Column counts each worker times its devices at: simulated devices cost
 * nothing to time, real ones a few small products. */
enum { PROBE_SIM = 33, PROBE_REAL = 3 };

/* What a device is to the partitioners. */
enum { DEV_CORE = 0, DEV_ACCELERATOR = 1, DEV_IDLE = 2 };

typedef struct {
  int64_t n, m;
  mlsba_precision_t prec;
  const void *a, *b; /* A (n x m), B' (m x columns), delivery order */
  void *c;           /* C' (n x columns) */
  size_t p;
  const int64_t *off, *units, *pos; /* per device: executor range, place */
} mw_kernel_t;

typedef struct {
  MPI_Comm comm;
  int rank, q, workers;
  const mlsba_mpi_mw_opts_t *o;
  size_t elem;
  /* A worker's devices. */
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  size_t p;
  int simulated;
  int *kind; /* p: DEV_* */
  /* Everyone: devices per rank (0 for the master), and every worker
   * device's kind and columns, rank after rank, file order. */
  int *ndev;
  size_t total;
  int *kind_all;
  int64_t *cols;
  mlsba_link_t *links;
  /* The master: every device's probe, npts (x, t) pairs each. */
  int npts;
  double *probe;
  char *names;
} mw_t;

/* ---- names and options ------------------------------------------------ */

static const char *const split_names[] = {"fpm", "dlt", "fpm-comm"};

const char *mlsba_mpi_mw_split_name(mlsba_mpi_mw_split_t split) {
  return (unsigned)split <= MLSBA_MPI_MW_FPM_COMM ? split_names[split] : NULL;
}

int mlsba_mpi_mw_split_from_name(const char *name,
                                 mlsba_mpi_mw_split_t *split) {
  for (int i = 0; name && split && i <= MLSBA_MPI_MW_FPM_COMM; i++)
    if (strcmp(name, split_names[i]) == 0) {
      *split = (mlsba_mpi_mw_split_t)i;
      return 0;
    }
  return mlsba__fail(MLSBA_EINVAL, "unknown split '%s' (fpm, dlt or fpm-comm)",
                     name ? name : "(null)");
}

void mlsba_mpi_mw_opts_init(mlsba_mpi_mw_opts_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->platform = "auto";
  o->n = o->m = o->k = 1024;
  o->precision = MLSBA_PRECISION_DOUBLE;
  o->split = MLSBA_MPI_MW_FPM_COMM;
  o->links = MLSBA_MPI_MW_LINKS_MEASURE;
  o->seed = 1;
  o->verify_samples = 64;
}

void mlsba_mpi_mw_result_free(mlsba_mpi_mw_result_t *r) {
  if (r == NULL)
    return;
  for (int w = 0; r->worker && w < r->workers; w++) {
    for (size_t d = 0; r->worker[w].devices && d < r->worker[w].ndevices; d++)
      free(r->worker[w].devices[d].full_name);
    free(r->worker[w].devices);
  }
  free(r->worker);
  mlsba__mpi_free(r->c);
  memset(r, 0, sizeof *r);
}

static int check_opts(const mlsba_mpi_mw_opts_t *o, int q) {
  if (q < 2)
    return mlsba__fail(MLSBA_EINVAL,
                       "master-worker needs a master and at least one "
                       "worker: 2 ranks or more, got %d",
                       q);
  if (o->n < 1 || o->m < 1 || o->k < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "N, M and K must be >= 1, got %lld, "
                       "%lld, %lld",
                       (long long)o->n, (long long)o->m, (long long)o->k);
  if (o->k < q - 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "K = %lld columns for %d workers: every worker needs "
                       "at least one",
                       (long long)o->k, q - 1);
  /* Every message is one MPI call with an int count of elements. */
  if (o->n > INT_MAX / o->m || o->n > INT_MAX / o->k || o->m > INT_MAX / o->k)
    return mlsba__fail(MLSBA_EINVAL,
                       "N x M, N x K or M x K above %d elements: too large "
                       "for this layer's single messages",
                       INT_MAX);
  if ((unsigned)o->split > MLSBA_MPI_MW_FPM_COMM ||
      (unsigned)o->links > MLSBA_MPI_MW_LINKS_PLATFORM)
    return mlsba__fail(MLSBA_EINVAL, "unknown split or links");
  if (o->precision != MLSBA_PRECISION_DOUBLE &&
      o->precision != MLSBA_PRECISION_SINGLE)
    return mlsba__fail(MLSBA_EINVAL, "unknown precision");
  if (o->platform == NULL || o->platform[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "no platform given");
  return 0;
}

/* The options every rank must share, as rank 0 has them. */
enum { SHARED = 9 };
static const char *const shared_names[SHARED] = {"n",
                                                 "m",
                                                 "k",
                                                 "precision",
                                                 "split",
                                                 "links",
                                                 "seed",
                                                 "verify_samples",
                                                 "fill (set or not)"};

static int agree_on_opts(MPI_Comm comm, const mlsba_mpi_mw_opts_t *o) {
  int64_t mine[SHARED] = {o->n,
                          o->m,
                          o->k,
                          (int64_t)o->precision,
                          (int64_t)o->split,
                          (int64_t)o->links,
                          (int64_t)o->seed,
                          (int64_t)o->verify_samples,
                          o->fill != NULL},
          head[SHARED];
  memcpy(head, mine, sizeof head);
  MPI_Bcast(head, SHARED, MPI_INT64_T, 0, comm);
  int err = 0;
  for (int i = 0; i < SHARED && !err; i++)
    if (mine[i] != head[i])
      err =
          mlsba__fail(MLSBA_EINVAL,
                      "option %s is %lld here, %lld on rank 0: every rank "
                      "must pass the same options",
                      shared_names[i], (long long)mine[i], (long long)head[i]);
  return mlsba__mpi_agree(comm, err);
}

/* ---- a worker's devices ----------------------------------------------- */

/* Its platform ("%r" expanded), its executor, and what each device is: a
 * core, an accelerator (a simulated device with a host link), or idle
 * (an OpenCL device, which this mode does not drive). The master opens
 * nothing. */
static int open_worker(mw_t *W) {
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
    mlsba_device_type_t t = mlsba_platform_device_type(W->pl, i);
    mlsba_link_t host = {0, 0};
    mlsba_platform_device_link(W->pl, i, &host);
    sims += t == MLSBA_DEVICE_SIM;
    W->kind[i] = t == MLSBA_DEVICE_OPENCL                      ? DEV_IDLE
                 : t == MLSBA_DEVICE_SIM && host.bandwidth > 0 ? DEV_ACCELERATOR
                                                               : DEV_CORE;
    busy += W->kind[i] != DEV_IDLE;
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
static int run_devices(mw_t *W, const int64_t units[], const int64_t pos[],
                       const void *a, const void *b, void *c, double time[]) {
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
static void probe_counts(const mw_t *W, int64_t xs[]) {
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
static int64_t device_cap(const mw_t *W, size_t i) {
  int64_t cap = mlsba_model_max_load(mlsba_platform_device_model(W->pl, i));
  return cap == MLSBA_NO_MAX_LOAD ? 0 : cap;
}

/* Every busy device timed at each probe count (within what it holds),
 * all devices at once; device i's block of out is its cap, then npts
 * pairs (x, t). */
static int probe_devices(mw_t *W, double *out) {
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
    busy += W->kind[i] != DEV_IDLE;
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
      units[i] = W->kind[i] == DEV_IDLE   ? 0
                 : cap > 0 && cap < xs[k] ? cap
                                          : xs[k];
      pos[i] = at;
      at += units[i];
    }
    err = run_devices(W, units, pos, a, b, c, t);
    for (size_t i = 0; i < W->p && !err; i++) {
      out[i * per + 1 + 2 * (size_t)k] = (double)units[i];
      out[i * per + 2 + 2 * (size_t)k] = t[i];
      if (W->kind[i] != DEV_IDLE && units[i] > 0 && !(t[i] > 0))
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
static int gather_devices(mw_t *W) {
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
  W->npts = W->simulated ? PROBE_SIM : PROBE_REAL;
  if (W->o->k < PROBE_SIM && W->simulated)
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
static int find_links(mw_t *W) {
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

/* ---- the three splits (the master) ------------------------------------ */

/* Device d's probe: its cap (0: none) and its points, those whose count
 * grew (a capped device repeats its largest). Returns how many. */
static int probe_points(const mw_t *W, size_t d, double *cap, const double **pt,
                        int keep[]) {
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
static int probe_model(const mw_t *W, size_t d, mlsba_model_t **out) {
  int keep[PROBE_SIM];
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
static void probe_line(const mw_t *W, size_t d, double *c, double *e) {
  int keep[PROBE_SIM];
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
static int dlt_node(const mw_t *W, int rank, size_t first,
                    mlsba_dlt_node_t *nd) {
  double NM = (double)W->o->n * (double)W->o->m, cs = 0, es = 0;
  memset(nd, 0, sizeof *nd);
  for (size_t d = first; d < first + (size_t)W->ndev[rank]; d++) {
    double c, e;
    if (W->kind_all[d] == DEV_IDLE)
      continue;
    probe_line(W, d, &c, &e);
    if (W->kind_all[d] == DEV_CORE) {
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
static void dlt_map(const mw_t *W, double *dlt_part, double *flat, int back) {
  size_t at = 0, first = 0;
  for (int r = 1; r < W->q; first += (size_t)W->ndev[r], r++) {
    for (int pass = 0; pass < 2; pass++)
      for (size_t d = first; d < first + (size_t)W->ndev[r]; d++)
        if (W->kind_all[d] == (pass == 0 ? DEV_ACCELERATOR : DEV_CORE)) {
          if (back)
            dlt_part[at++] = flat[d];
          else
            flat[d] = dlt_part[at++];
        }
  }
}

static mlsba_dlt_problem_t dlt_problem(const mw_t *W) {
  return (mlsba_dlt_problem_t){
      .n = W->o->n, .m = W->o->m, .k = W->o->k, .element_size = W->elem};
}

/* Seed 001's model: every worker as a DLT node (NULL nodes: some worker
 * does not fit it). */
static mlsba_dlt_node_t *dlt_nodes(const mw_t *W) {
  mlsba_dlt_node_t *nd = calloc((size_t)W->workers, sizeof *nd);
  size_t first = 0;
  for (int r = 1; nd && r < W->q; first += (size_t)W->ndev[r], r++)
    if (dlt_node(W, r, first, &nd[r - 1]) != 0) {
      free(nd);
      return NULL;
    }
  return nd;
}

static int split_dlt(const mw_t *W, double *predicted) {
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

static int split_fpm(const mw_t *W, double *predicted) {
  mlsba_model_t **m = calloc(W->total + 1, sizeof *m);
  const mlsba_model_t **busy = calloc(W->total + 1, sizeof *busy);
  int64_t *loads = calloc(W->total + 1, sizeof *loads);
  int err = m && busy && loads ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  size_t nb = 0;
  for (size_t d = 0; d < W->total && !err; d++)
    if (W->kind_all[d] != DEV_IDLE && (err = probe_model(W, d, &m[d])) == 0)
      busy[nb++] = m[d];
  mlsba_partition_info_t info;
  if (!err)
    err = mlsba_partition_slba_ex(busy, nb, W->o->k, NULL, loads, &info);
  for (size_t d = 0, i = 0; d < W->total && !err; d++)
    W->cols[d] = W->kind_all[d] == DEV_IDLE ? 0 : loads[i++];
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
static int split_fpm_comm(const mw_t *W, double *predicted) {
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
        if (W->kind_all[d] != (pass == 0 ? DEV_ACCELERATOR : DEV_CORE))
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
static double dlt_model_time(const mw_t *W) {
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
static int partition(mw_t *W, mlsba_mpi_mw_result_t *r) {
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
  MPI_Bcast(times, 2, MPI_DOUBLE, 0, W->comm);
  r->predicted_s = times[0];
  r->dlt_model_s = times[1];
  return 0;
}

/* ---- the run ------------------------------------------------------------ */

/* Worker r's devices in delivery order: its accelerators first, then the
 * others in file order, those with columns only; returns how many. */
static size_t delivery_order(const mw_t *W, size_t first, size_t n,
                             size_t order[]) {
  size_t k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t d = first; d < first + n; d++)
      if (W->cols[d] > 0 && (W->kind_all[d] == DEV_ACCELERATOR) == (pass == 0))
        order[k++] = d - first;
  return k;
}

static size_t first_device(const mw_t *W, int rank) {
  size_t first = 0;
  for (int r = 1; r < rank; r++)
    first += (size_t)W->ndev[r];
  return first;
}

static int64_t worker_columns(const mw_t *W, int rank) {
  int64_t x = 0;
  size_t first = first_device(W, rank);
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

static int scratch_alloc(const mw_t *W, scratch_t *s) {
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
static int master_run(mw_t *W, const void *A, const void *B, void *C, double t0,
                      scratch_t *sc, master_times_t *mt) {
  int w = W->workers;
  MPI_Request *send = sc->send, *recv = sc->recv;
  size_t *order = sc->order, *len = sc->len, *next = sc->next;
  int64_t *col0 = sc->col0;
  size_t N = (size_t)W->o->n, M = (size_t)W->o->m, e = W->elem;
  int64_t at = 0;
  for (int j = 0; j < w; j++) {
    size_t first = first_device(W, j + 1);
    len[j] = delivery_order(W, first, (size_t)W->ndev[j + 1], order + first);
    col0[j] = at;
    int64_t x = worker_columns(W, j + 1);
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
    size_t first = first_device(W, j + 1);
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
static int worker_run(mw_t *W, void *A, void *B, void *C, double t0,
                      scratch_t *sc, double dev_time[], worker_times_t *wt) {
  size_t first = first_device(W, W->rank);
  size_t *order = sc->order;
  int64_t *units = sc->units, *pos = sc->pos;
  double *arrive = sc->arrive;
  int err = 0;
  size_t N = (size_t)W->o->n, M = (size_t)W->o->m, e = W->elem;
  MPI_Datatype type =
      W->o->precision == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
  int64_t x = worker_columns(W, W->rank);
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
    err = run_devices(W, units, pos, A, B, C, dev_time);
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
static int fill_operands(const mw_t *W, void *A, void *B) {
  const mlsba_mpi_mw_opts_t *o = W->o;
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
static void check_c(const mw_t *W, const void *A, const void *B, const void *C,
                    mlsba_mpi_mw_result_t *r) {
  const mlsba_mpi_mw_opts_t *o = W->o;
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
static int report(mw_t *W, const master_times_t *mt, const worker_times_t *wt,
                  const double dev_time[], mlsba_mpi_mw_result_t *r) {
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
    size_t first = first_device(W, j + 1);
    x->rank = j + 1;
    x->col0 = col0;
    x->columns = worker_columns(W, j + 1);
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
static int allocate(mw_t *W, void **A, void **B, void **C) {
  size_t N = (size_t)W->o->n, M = (size_t)W->o->m, K = (size_t)W->o->k;
  size_t x = W->rank == 0 ? K : (size_t)worker_columns(W, W->rank);
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

static int run(mw_t *W, mlsba_mpi_mw_result_t *r) {
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
  double v[2] = {r->verified, r->max_rel_error};
  if (!err) {
    MPI_Bcast(v, 2, MPI_DOUBLE, 0, W->comm);
    r->verified = (int)v[0];
    r->max_rel_error = v[1];
  }
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

int mlsba_mpi_master_worker(MPI_Comm comm, const mlsba_mpi_mw_opts_t *opts,
                            mlsba_mpi_mw_result_t *result) {
  if (result)
    memset(result, 0, sizeof *result);
  mw_t W = {.comm = comm, .o = opts};
  MPI_Comm_rank(comm, &W.rank);
  MPI_Comm_size(comm, &W.q);
  W.workers = W.q - 1;
  int err = opts == NULL || result == NULL
                ? mlsba__fail(MLSBA_EINVAL, "opts or result is NULL")
                : check_opts(opts, W.q);
  if ((err = mlsba__mpi_agree(comm, err)) == 0)
    err = agree_on_opts(comm, opts);
  if (!err) {
    W.elem = mlsba__mpi_elem(opts->precision);
    result->workers = W.workers;
    result->split = opts->split;
    err = open_worker(&W);
    err = mlsba__mpi_agree(comm, err);
  }
  if (!err)
    err = gather_devices(&W);
  if (!err)
    err = find_links(&W);
  if (!err)
    err = partition(&W, result);
  if (!err) {
    result->simulated = W.simulated;
    err = run(&W, result);
  }
  mlsba_executor_destroy(W.ex);
  mlsba_platform_destroy(W.pl);
  free(W.kind);
  free(W.ndev);
  free(W.kind_all);
  free(W.cols);
  free(W.links);
  free(W.probe);
  free(W.names);
  if (err && result)
    mlsba_mpi_mw_result_free(result);
  return err;
}
