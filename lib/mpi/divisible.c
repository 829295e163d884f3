/* An application's own divisible load across ranks (<mlsba/mpi.h>): the
 * one-dimensional INPA. Rank 0 holds the head (lib/partition/divide.h);
 * every rank runs its range of the load's units on its own devices,
 * balanced with libmlsba's single-node routine, through a window load
 * whose unit 0 is the range's first.
 *
 * The application's load comes from its libmlsba; this layer's devices
 * and routine from the layer's own copy (see mpi.h). The window only
 * reads the load's callbacks, which are the application's code, so the
 * two copies never share state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/load.h"
#include "../partition/divide.h"
#include "../platform/platform.h"
#ifdef MLSBA_HAVE_OPENCL
#include "mlsba/opencl.h"
#endif
#include "internal.h"

/* Units [offset, offset + window->units) of the application's load. */
typedef struct {
  const mlsba_load_t *app;
  int64_t offset;
#ifdef MLSBA_HAVE_OPENCL
  mlsba_opencl_ops_t ops;
#endif
} window_t;

struct mlsba_mpi_divider {
  MPI_Comm comm;
  int rank, q;
  mlsba_mpi_divide_opts_t o;
  window_t win;
  mlsba_load_t *window;
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  mlsba__divide_t *head; /* rank 0 */
  int simulated;         /* this rank's devices are all simulated */
  int64_t *units;        /* this rank's device loads, balanced */
  double *dev_time;      /* their times in the last run */
  double *times;         /* every rank's time in the last run */
  /* Every rank's virtual seconds in the last run (simulated ranks: the
   * whole balancing of its devices), for the time a call took; and the
   * (time, seconds) pairs gathered from the ranks. */
  double *spent, *pairs;
  unsigned drifted; /* runs in a row with the rank times apart */
  int unfed;        /* the last run (times) is not the head's */
  /* The call under way: distributions run, and on simulated ranks the
   * virtual seconds they took (the slowest rank's, run after run). */
  unsigned call_runs;
  double call_virtual_s;
  mlsba_mpi_divide_result_t r;
};

/* ---- the window --------------------------------------------------------- */

static int window_cpu(void *user, int64_t first, int64_t count) {
  const window_t *w = user;
  return w->app->cpu(w->app->cpu_user, w->offset + first, count);
}

#ifdef MLSBA_HAVE_OPENCL
static int window_setup(void *user, mlsba_opencl_env_t *env) {
  const window_t *w = user;
  return w->app->cl->setup(w->app->cl_user, env);
}
static int window_max_units(void *user, const mlsba_opencl_env_t *env,
                            int64_t *max) {
  const window_t *w = user;
  return w->app->cl->max_units(w->app->cl_user, env, max);
}
static int window_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                          int64_t count) {
  const window_t *w = user;
  return w->app->cl->enqueue(w->app->cl_user, env, w->offset + first, count);
}
static void window_complete(void *user, mlsba_opencl_env_t *env) {
  const window_t *w = user;
  w->app->cl->complete(w->app->cl_user, env);
}
static void window_teardown(void *user, mlsba_opencl_env_t *env) {
  const window_t *w = user;
  w->app->cl->teardown(w->app->cl_user, env);
}

/* The application's OpenCL code, each hook shifted by the offset. */
static int window_opencl(mlsba_mpi_divider_t *D) {
  const mlsba_opencl_ops_t *a = D->win.app->cl;
  if (a == NULL)
    return 0;
  mlsba_opencl_ops_t *o = &D->win.ops;
  *o = (mlsba_opencl_ops_t){.source = a->source,
                            .kernel_name = a->kernel_name,
                            .build_options = a->build_options,
                            .setup = a->setup ? window_setup : NULL,
                            .max_units = a->max_units ? window_max_units : NULL,
                            .enqueue = window_enqueue,
                            .complete = a->complete ? window_complete : NULL,
                            .teardown = a->teardown ? window_teardown : NULL};
  return mlsba_load_set_opencl(D->window, o, &D->win);
}
#else
static int window_opencl(mlsba_mpi_divider_t *D) {
  (void)D;
  return 0;
}
#endif

static int window_create(mlsba_mpi_divider_t *D, const mlsba_load_t *app) {
  D->win.app = app;
  int err = mlsba_load_create(app->name, app->units, &D->window);
  if (!err && app->shape[0])
    err = mlsba_load_set_shape(D->window, app->shape);
  if (!err && app->cpu)
    err = mlsba_load_set_cpu(D->window, window_cpu, &D->win);
  return err ? err : window_opencl(D);
}

/* ---- one rank ------------------------------------------------------------ */

/* Units [offset, offset + count) of the application's load: the window's
 * unit 0 is the range's first, and the devices' messages name the
 * application's units. */
static void window_place(mlsba_mpi_divider_t *D, int64_t offset,
                         int64_t count) {
  D->win.offset = offset;
  D->window->units = count; /* the window is this layer's own load */
  D->window->first_unit = offset;
}

/* Balances this rank's devices on units [offset, offset + count) and gives
 * the time of the balanced run, and in *spent the virtual seconds of the
 * whole balancing on simulated devices (every run it made), which SMPI
 * counts as the rank's time. */
static int run_node(mlsba_mpi_divider_t *D, int64_t offset, int64_t count,
                    double *time, double *spent) {
  window_place(D, offset, count);
  mlsba_balance_result_t res;
  memset(&res, 0, sizeof res);
  int err = mlsba_balance_load(D->ex, D->window, &D->o.node, &res);
  if (!err) {
    memcpy(D->units, res.load, res.p * sizeof *res.load);
    memcpy(D->dev_time, res.time, res.p * sizeof *res.time);
    *time = res.makespan;
    *spent = 0;
    for (unsigned k = 0; D->simulated && k < res.iterations; k++)
      *spent += res.history_makespan[k];
    mlsba__mpi_spend(*spent);
    mlsba_balance_result_free(&res);
  }
  return err;
}

/* Every rank's time and virtual seconds of the run just made, into
 * D->times and D->spent; the call's clock on simulated ranks moves by the
 * slowest rank's seconds, as the ranks wait for it. */
static void gather_times(mlsba_mpi_divider_t *D, double time, double spent) {
  double mine[2] = {time, spent};
  MPI_Allgather(mine, 2, MPI_DOUBLE, D->pairs, 2, MPI_DOUBLE, D->comm);
  double slowest = 0;
  for (int i = 0; i < D->q; i++) {
    D->times[i] = D->pairs[2 * i];
    D->spent[i] = D->pairs[2 * i + 1];
    slowest = D->spent[i] > slowest ? D->spent[i] : slowest;
  }
  D->call_runs++;
  D->call_virtual_s += slowest;
}

/* Every rank opens its platform (a pattern, "auto" by default) and an
 * executor; the ranks must agree on simulated or real devices. */
static int open_devices(mlsba_mpi_divider_t *D) {
  char path[1024];
  int local_rank = 0, local_size = 1;
  int e = mlsba__mpi_local_rank(D->comm, &local_rank, &local_size);
  int ep = mlsba_mpi_platform_path(
      D->comm, D->o.platform ? D->o.platform : "auto", path, sizeof path);
  int err = mlsba__mpi_agree(D->comm, e ? e : ep);
  if (err)
    return err;
  err = mlsba__mpi_platform_open(path, local_rank, local_size, &D->pl);
  if (!err)
    err = mlsba_executor_create(D->pl, &D->ex);
  size_t p = err ? 0 : mlsba_platform_num_devices(D->pl);
  if (!err && ((D->units = calloc(p, sizeof *D->units)) == NULL ||
               (D->dev_time = calloc(p, sizeof *D->dev_time)) == NULL))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
    return err;
  D->simulated = 1;
  for (size_t i = 0; i < p; i++)
    D->simulated &=
        (mlsba__platform_device_roles(D->pl, i) & MLSBA__ROLE_VIRTUAL) != 0;
  int mine = D->simulated, head = mine;
  MPI_Bcast(&head, 1, MPI_INT, 0, D->comm);
  D->r.simulated = head;
  if (mine != head)
    err = mlsba__fail(MLSBA_EINVAL,
                      "its platform has %s devices, rank 0's %s ones: rank "
                      "times would mix virtual and wall-clock seconds",
                      mine ? "simulated" : "real", head ? "simulated" : "real");
  return mlsba__mpi_agree(D->comm, err);
}

/* ---- the loop -------------------------------------------------------------
 */

/* Head and ranks until the head stops: it sends the counts, every rank
 * runs its range and the times come back. The last run's counts stay in
 * r.counts. */
static int divide_loop(mlsba_mpi_divider_t *D) {
  int64_t *counts = D->r.counts, *offsets = D->r.offsets;
  for (;;) {
    int done = 0;
    if (D->rank == 0) {
      done = mlsba__divide_done(D->head);
      memcpy(counts, mlsba__divide_counts(D->head),
             (size_t)D->q * sizeof *counts);
    }
    MPI_Bcast(&done, 1, MPI_INT, 0, D->comm);
    if (done)
      return 0;
    MPI_Bcast(counts, D->q, MPI_INT64_T, 0, D->comm);
    for (int i = 0; i < D->q; i++)
      offsets[i] = i == 0 ? 0 : offsets[i - 1] + counts[i - 1];
    double t = 0, spent = 0;
    int err = run_node(D, offsets[D->rank], counts[D->rank], &t, &spent);
    if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
      return err;
    gather_times(D, t, spent);
    D->unfed = 0;
    if (D->rank == 0)
      err = mlsba__divide_feed(D->head, D->times);
    if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
      return err;
  }
}

/* The head's history and stop, on every rank. */
static int share_result(mlsba_mpi_divider_t *D) {
  mlsba_mpi_divide_result_t *r = &D->r;
  size_t q = (size_t)D->q;
  unsigned long long len = D->rank == 0 ? mlsba__divide_iterations(D->head) : 0;
  int stop = D->rank == 0 ? (int)mlsba__divide_stop(D->head) : 0;
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, D->comm);
  MPI_Bcast(&stop, 1, MPI_INT, 0, D->comm);
  free(r->history_count);
  free(r->history_time);
  free(r->history_imbalance);
  r->history_len = (size_t)len;
  r->history_count = calloc(len * q + 1, sizeof *r->history_count);
  r->history_time = calloc(len * q + 1, sizeof *r->history_time);
  r->history_imbalance = calloc(len + 1, sizeof *r->history_imbalance);
  int err = r->history_count && r->history_time && r->history_imbalance
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
    return err;
  for (size_t k = 0; D->rank == 0 && k < len; k++) {
    memcpy(r->history_count + k * q, mlsba__divide_history_counts(D->head, k),
           q * sizeof *r->history_count);
    memcpy(r->history_time + k * q, mlsba__divide_history_times(D->head, k),
           q * sizeof *r->history_time);
    r->history_imbalance[k] = mlsba__divide_history_imbalance(D->head, k);
  }
  MPI_Bcast(r->history_count, (int)(len * q), MPI_INT64_T, 0, D->comm);
  MPI_Bcast(r->history_time, (int)(len * q), MPI_DOUBLE, 0, D->comm);
  MPI_Bcast(r->history_imbalance, (int)len, MPI_DOUBLE, 0, D->comm);
  r->iterations = (unsigned)len;
  r->stop = (mlsba_stop_reason_t)stop;
  r->converged = stop == MLSBA_STOP_BALANCED || stop == MLSBA_STOP_FIXED_POINT;
  r->offset = r->offsets[D->rank];
  r->count = r->counts[D->rank];
  double lo = D->times[0], hi = D->times[0];
  for (size_t i = 0; i < q; i++) {
    r->time[i] = D->times[i];
    lo = D->times[i] < lo ? D->times[i] : lo;
    hi = D->times[i] > hi ? D->times[i] : hi;
  }
  r->makespan = hi;
  r->imbalance = hi > 0 ? (hi - lo) / hi : 0;
  for (size_t i = 0; i < r->ndevices; i++) {
    r->devices[i].load = D->units[i];
    r->devices[i].time = D->dev_time[i];
  }
  return 0;
}

/* ---- the public calls ------------------------------------------------------
 */

void mlsba_mpi_divide_opts_init(mlsba_mpi_divide_opts_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->platform = "auto";
  o->algorithm = MLSBA_MPI_INPA;
  o->eps = 0.05;
  o->max_iter = 20;
  o->drift = 2 * o->eps;
  mlsba_balance_opts_init(&o->node);
}

void mlsba_mpi_divide_result_free(mlsba_mpi_divide_result_t *r) {
  if (r == NULL)
    return;
  free(r->offsets);
  free(r->counts);
  free(r->time);
  free(r->history_count);
  free(r->history_time);
  free(r->history_imbalance);
  free(r->devices);
  memset(r, 0, sizeof *r);
}

void mlsba_mpi_divider_destroy(mlsba_mpi_divider_t *D) {
  if (D == NULL)
    return;
  mlsba__divide_destroy(D->head);
  mlsba_executor_destroy(D->ex);
  mlsba_platform_destroy(D->pl);
  mlsba_load_destroy(D->window);
  free(D->units);
  free(D->dev_time);
  free(D->times);
  free(D->spent);
  free(D->pairs);
  mlsba_mpi_divide_result_free(&D->r);
  if (D->comm != MPI_COMM_NULL)
    MPI_Comm_free(&D->comm);
  free(D);
}

/* What every rank checks before any device opens: its arguments (bad:
 * the caller's verdict on those it holds), then that every rank passes
 * rank 0's load (the same units: the callbacks compute global units) and
 * options (each rank decides on its own when to re-balance by drift). */
static int check_input(mlsba_mpi_divider_t *D, const mlsba_load_t *load,
                       const mlsba_mpi_divide_opts_t *o, int bad) {
  int err = bad;
  if (!err && load == NULL)
    err = mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_divide: the load is NULL");
  if (!err && (!(o->eps >= 0) || o->max_iter < 1 || !(o->drift >= 0) ||
               mlsba_mpi_algo_name(o->algorithm) == NULL))
    err = mlsba__fail(MLSBA_EINVAL,
                      "mlsba_mpi_divide: eps and drift must be >= 0, "
                      "max_iter >= 1 and the algorithm known");
  if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
    return err;
  const mlsba__mpi_value_t same[] = {
      MLSBA__MPI_TEXT_VALUE("the load's name", load->name),
      MLSBA__MPI_NUMBER("the load's unit count", load->units),
      MLSBA__MPI_TEXT_VALUE("the load's shape", load->shape),
      MLSBA__MPI_ENUM_VALUE("option algorithm", o->algorithm,
                            mlsba__mpi_spell_algo),
      MLSBA__MPI_NUMBER("option eps", o->eps),
      MLSBA__MPI_NUMBER("option max_iter", o->max_iter),
      MLSBA__MPI_NUMBER("option drift", o->drift)};
  if ((err = mlsba__mpi_agree_values(
           D->comm, same, sizeof same / sizeof *same,
           "every rank passes the same load and options")) != 0)
    return err;
  if (load->units < D->q)
    err = mlsba__fail(MLSBA_EINVAL,
                      "%lld units for %d ranks: every rank needs one",
                      (long long)load->units, D->q);
  return mlsba__mpi_agree(D->comm, err);
}

static int divider_init(mlsba_mpi_divider_t *D, mlsba_load_t *load) {
  size_t q = (size_t)D->q;
  mlsba_mpi_divide_result_t *r = &D->r;
  r->nodes = D->q;
  r->offsets = calloc(q, sizeof *r->offsets);
  r->counts = calloc(q, sizeof *r->counts);
  r->time = calloc(q, sizeof *r->time);
  D->times = calloc(q, sizeof *D->times);
  D->spent = calloc(q, sizeof *D->spent);
  D->pairs = calloc(2 * q, sizeof *D->pairs);
  if (!r->offsets || !r->counts || !r->time || !D->times || !D->spent ||
      !D->pairs)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  int err = window_create(D, load);
  if (!err && D->rank == 0) {
    mlsba__inpa_opts_t io;
    mlsba__inpa_opts_init(&io);
    io.algo = (mlsba__inpa_algo_t)D->o.algorithm;
    io.eps = D->o.eps;
    io.max_iter = D->o.max_iter;
    err = mlsba__divide_create(q, load->units, &io, &D->head);
  }
  size_t p = D->pl ? mlsba_platform_num_devices(D->pl) : 0;
  if (!err && (r->devices = calloc(p + 1, sizeof *r->devices)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  r->ndevices = err ? 0 : p;
  for (size_t i = 0; i < r->ndevices; i++)
    snprintf(r->devices[i].name, sizeof r->devices[i].name, "%s",
             mlsba_platform_device_name(D->pl, i));
  return err;
}

/* Collective, whatever this rank's arguments: bad is its verdict on
 * those only the public call holds (NULL result or divider). */
static int create(MPI_Comm comm, mlsba_load_t *load,
                  const mlsba_mpi_divide_opts_t *opts, int bad,
                  mlsba_mpi_divider_t **out) {
  if (comm == MPI_COMM_NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_divide: comm is "
                                     "MPI_COMM_NULL");
  mlsba_mpi_divider_t *D = calloc(1, sizeof *D);
  int err = D ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(comm, err)) != 0) {
    free(D);
    return err;
  }
  D->comm = MPI_COMM_NULL;
  MPI_Comm_dup(comm, &D->comm);
  MPI_Comm_rank(D->comm, &D->rank);
  MPI_Comm_size(D->comm, &D->q);
  if (opts)
    D->o = *opts;
  else
    mlsba_mpi_divide_opts_init(&D->o);
  err = check_input(D, load, &D->o, bad);
  if (!err)
    err = open_devices(D);
  if (!err)
    err = mlsba__mpi_agree(D->comm, divider_init(D, load));
  if (!err)
    err = divide_loop(D);
  if (!err)
    err = share_result(D);
  if (err) {
    mlsba_mpi_divider_destroy(D);
    return err;
  }
  *out = D;
  return 0;
}

int mlsba_mpi_divider_create(MPI_Comm comm, mlsba_load_t *load,
                             const mlsba_mpi_divide_opts_t *opts,
                             mlsba_mpi_divider_t **out) {
  mlsba_mpi_divider_t *D = NULL;
  int bad = out == NULL ? mlsba__fail(MLSBA_EINVAL,
                                      "mlsba_mpi_divider_create: divider is "
                                      "NULL")
                        : 0;
  if (out)
    *out = NULL;
  int err = create(comm, load, opts, bad, &D);
  if (!err)
    *out = D;
  return err;
}

/* The drift tolerance: past it, the ranks' times have drifted apart, and
 * a rank whose time is that far from its speed function has changed. */
static double drift_tolerance(const mlsba_mpi_divide_opts_t *o) {
  if (o->drift > 0)
    return o->drift;
  return o->eps > 0 ? 2 * o->eps : 0.1;
}

/* A re-balance: the head resumes from the run just made when it has not
 * seen it (the run in which the drift showed: the re-balance's first,
 * checked against the speed functions), else from its functions, and the
 * ranks run what it asks until it stops. */
static int rebalance(mlsba_mpi_divider_t *D) {
  int err = 0;
  if (D->rank == 0)
    err = mlsba__divide_resume(D->head, D->unfed ? D->times : NULL,
                               drift_tolerance(&D->o));
  if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
    return err;
  D->unfed = 0;
  D->drifted = 0;
  return (err = divide_loop(D)) != 0 ? err : share_result(D);
}

/* The clock of a call: wall-clock seconds on real ranks and under SMPI
 * (whose clock is the simulation's), the virtual seconds of the runs
 * on simulated ranks under mpirun, where nothing waits. */
static int virtual_clock(const mlsba_mpi_divider_t *D) {
  return D->simulated && !mlsba__mpi_is_smpi();
}

static double call_start(mlsba_mpi_divider_t *D) {
  D->call_runs = 0;
  D->call_virtual_s = 0;
  return virtual_clock(D) ? 0 : MPI_Wtime();
}

static double call_seconds(const mlsba_mpi_divider_t *D, double start) {
  return virtual_clock(D) ? D->call_virtual_s : MPI_Wtime() - start;
}

int mlsba_mpi_divider_rebalance(mlsba_mpi_divider_t *D) {
  if (D == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_divider_rebalance: NULL");
  call_start(D);
  return rebalance(D);
}

/* One run of this rank's share with its balanced devices: its time, and
 * every rank's in D->times. */
static int run_share(mlsba_mpi_divider_t *D) {
  window_place(D, D->r.offset, D->r.count);
  int err = mlsba_executor_run(D->ex, D->window, D->units, D->o.node.drive,
                               D->dev_time, NULL);
  double t = 0;
  for (size_t i = 0; !err && i < D->r.ndevices; i++)
    t = D->dev_time[i] > t ? D->dev_time[i] : t;
  mlsba__mpi_spend(!err && D->simulated ? t : 0);
  if ((err = mlsba__mpi_agree(D->comm, err)) != 0)
    return err;
  gather_times(D, t, D->simulated ? t : 0);
  D->unfed = 1;
  return 0;
}

int mlsba_mpi_divider_run(mlsba_mpi_divider_t *D, mlsba_run_info_t *info) {
  if (D == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_divider_run: NULL");
  double start = call_start(D);
  int err = run_share(D);
  if (err)
    return err;
  double lo = D->times[0], hi = D->times[0];
  for (int i = 0; i < D->q; i++) {
    lo = D->times[i] < lo ? D->times[i] : lo;
    hi = D->times[i] > hi ? D->times[i] : hi;
  }
  double imbalance = hi > 0 ? (hi - lo) / hi : 0;
  D->drifted = D->o.drift > 0 && imbalance > D->o.drift ? D->drifted + 1 : 0;
  int rebalanced = D->drifted >= 2;
  if (rebalanced) {
    if ((err = rebalance(D)) != 0)
      return err;
    hi = D->r.makespan;
    imbalance = D->r.imbalance;
  }
  if (info)
    *info = (mlsba_run_info_t){.makespan = hi,
                               .imbalance = imbalance,
                               .rebalanced = rebalanced,
                               .runs = D->call_runs,
                               .wall_s = call_seconds(D, start),
                               .drift = D->o.drift};
  return 0;
}

const mlsba_mpi_divide_result_t *
mlsba_mpi_divider_result(const mlsba_mpi_divider_t *D) {
  return D ? &D->r : NULL;
}

int mlsba_mpi_divide(MPI_Comm comm, mlsba_load_t *load,
                     const mlsba_mpi_divide_opts_t *opts,
                     mlsba_mpi_divide_result_t *result) {
  int bad = result == NULL
                ? mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_divide: result is NULL")
                : 0;
  if (result)
    memset(result, 0, sizeof *result);
  mlsba_mpi_divider_t *D = NULL;
  int err = create(comm, load, opts, bad, &D);
  if (err)
    return err;
  *result = D->r; /* the arrays move to the caller */
  memset(&D->r, 0, sizeof D->r);
  mlsba_mpi_divider_destroy(D);
  return 0;
}
