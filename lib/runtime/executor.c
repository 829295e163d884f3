/* Running a load on the devices of a platform, in processing groups as the
 * MLSBA paper runs them.
 *
 * One thread per group, started by the first run and kept until the
 * executor is destroyed (a platform of simulated devices alone, which
 * take no wall time, runs its groups one after another in the caller's
 * thread instead). A group's thread is pinned (hwloc) to the group's
 * core when it has one; it starts its accelerators' shares (they return at
 * once, the work goes on in the accelerators' queues), computes the core's
 * own share, then waits for the accelerators. All groups start together
 * from a common instant t0, and every device's time runs from t0 to the
 * completion of its own share. In the devoted mode (SLBA) the core only
 * drives: its load must be 0. */
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/load.h"
#include "../devices/device.h"
#include "../platform/binding.h"
#include "../platform/platform.h"
#include "executor.h"

static void pool_destroy(struct mlsba__group_pool *P);

void mlsba_executor_destroy(mlsba_executor_t *ex) {
  if (ex == NULL)
    return;
  if (ex->pool)
    pool_destroy(ex->pool);
  free(ex->spare);
  pthread_mutex_destroy(&ex->spare_mu);
  for (size_t i = 0; ex->opened && i < ex->pl->ndev; i++)
    if (ex->opened[i].ops)
      ex->opened[i].ops->destroy(&ex->opened[i]);
  free(ex->opened);
  hwloc_bitmap_free(ex->bound);
  if (ex->topo)
    hwloc_topology_destroy(ex->topo);
  free(ex);
}

/* Device i computes on a host core (the one its group's thread is
 * pinned to). */
static int is_core(const mlsba_platform_t *pl, size_t i) {
  return (mlsba__platform_device_roles(pl, i) & MLSBA__ROLE_CORE) != 0;
}

/* The one core device of group g, or -1. */
static long group_core_device(const mlsba_platform_t *pl, size_t g) {
  for (size_t k = pl->group_start[g]; k < pl->group_start[g + 1]; k++)
    if (is_core(pl, pl->group_dev[k]))
      return (long)pl->group_dev[k];
  return -1;
}

int mlsba_executor_create(const mlsba_platform_t *pl, mlsba_executor_t **out) {
  if (pl == NULL || out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_executor_create: %s is NULL",
                       pl == NULL ? "platform" : "executor");
  mlsba_executor_t *ex = calloc(1, sizeof *ex);
  if (ex == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "executor: out of memory");
  ex->pl = pl;
  pthread_mutex_init(&ex->spare_mu, NULL);
  int err = 0;
  /* The topology serves only to pin cores; reading it costs tens of
   * milliseconds, which a platform of simulated devices (a thousand
   * simulated MPI ranks) need not pay. */
  int has_core = 0;
  ex->virtual_only = 1;
  for (size_t i = 0; i < pl->ndev; i++) {
    has_core |= is_core(pl, i);
    ex->virtual_only &=
        (mlsba__platform_device_roles(pl, i) & MLSBA__ROLE_VIRTUAL) != 0;
  }
  if (has_core && (hwloc_topology_init(&ex->topo) != 0 ||
                   hwloc_topology_load(ex->topo) != 0)) {
    ex->topo = NULL;
    err = mlsba__fail(MLSBA_EDEVICE, "hwloc: cannot read the topology");
    goto fail;
  }
  ex->ncores =
      has_core ? hwloc_get_nbobjs_by_type(ex->topo, HWLOC_OBJ_CORE) : 0;
  /* Pinning stays within the process's binding: what the launcher gave
   * this rank is not the library's to widen. */
  if (has_core && ((ex->bound = hwloc_bitmap_alloc()) == NULL ||
                   (err = mlsba__binding_get(ex->topo, ex->bound)) != 0)) {
    err = err ? err : mlsba__fail(MLSBA_ENOMEM, "executor: out of memory");
    goto fail;
  }
  /* A group is driven by one thread, so it can hold one core at most. */
  for (size_t g = 0; g < pl->ngroups; g++) {
    int cores = 0;
    for (size_t k = pl->group_start[g]; k < pl->group_start[g + 1]; k++)
      cores += is_core(pl, pl->group_dev[k]);
    if (cores > 1) {
      err = mlsba__fail(MLSBA_EINVAL,
                        "group %zu has %d cpu devices: a group is driven by "
                        "one core",
                        g, cores);
      goto fail;
    }
  }
  ex->opened = calloc(pl->ndev, sizeof *ex->opened);
  if (ex->opened == NULL) {
    err = mlsba__fail(MLSBA_ENOMEM, "executor: out of memory");
    goto fail;
  }
  for (size_t i = 0; i < pl->ndev; i++) {
    const mlsba__platform_device_t *d = &pl->dev[i];
    int core = mlsba__platform_core(pl, i);
    if (core >= ex->ncores) {
      err = mlsba__fail(MLSBA_EDEVICE,
                        "%s: core %lld does not exist (this machine has %d)",
                        d->name, (long long)core, ex->ncores);
      goto fail;
    }
    if (core >= 0 && !mlsba__binding_has_core(ex->topo, ex->bound, core)) {
      char have[128];
      mlsba__binding_cores_text(ex->topo, ex->bound, have, sizeof have);
      err = mlsba__fail(MLSBA_EDEVICE,
                        "%s: core %d is outside this process's binding (%s: "
                        "taskset, a cgroup or mpirun --bind-to)",
                        d->name, core, have);
      goto fail;
    }
    if ((err = d->backend->open(d->name, d->config, d->model,
                                &ex->opened[i])) != 0)
      goto fail;
    ex->opened[i].link = d->link;
  }
  *out = ex;
  return 0;
fail:
  mlsba_executor_destroy(ex);
  return err;
}

void *mlsba__executor_spare_take(mlsba_executor_t *ex, size_t bytes,
                                 size_t *got) {
  void *p = NULL;
  pthread_mutex_lock(&ex->spare_mu);
  if (ex->spare && ex->spare_bytes >= bytes) {
    p = ex->spare;
    *got = ex->spare_bytes;
    ex->spare = NULL;
    ex->spare_bytes = 0;
  }
  pthread_mutex_unlock(&ex->spare_mu);
  return p;
}

void mlsba__executor_spare_keep(mlsba_executor_t *ex, void *p, size_t bytes) {
  if (p == NULL)
    return;
  pthread_mutex_lock(&ex->spare_mu);
  if (ex->spare == NULL || ex->spare_bytes < bytes) {
    void *old = ex->spare;
    ex->spare = p;
    ex->spare_bytes = bytes;
    p = old;
  }
  pthread_mutex_unlock(&ex->spare_mu);
  free(p);
}

int mlsba_executor_max_units(mlsba_executor_t *ex, const mlsba_load_t *w,
                             int64_t max_units[]) {
  if (ex == NULL || w == NULL || max_units == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_executor_max_units: NULL argument");
  int err = 0;
  for (size_t i = 0; !err && i < ex->pl->ndev; i++) {
    mlsba__device_t *d = &ex->opened[i];
    err = d->ops->max_load(d, w, &max_units[i]);
  }
  return err;
}

int mlsba_executor_device_shares_cores(const mlsba_executor_t *ex, size_t i) {
  if (ex == NULL || i >= ex->pl->ndev)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_executor_device_shares_cores: "
                       "no executor or no device %zu",
                       i);
  return ex->opened[i].shares_cores != 0;
}

int mlsba_executor_measure_links(mlsba_executor_t *ex, mlsba_link_t links[]) {
  if (ex == NULL || links == NULL)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_executor_measure_links: NULL argument");
  int err = 0;
  for (size_t i = 0; !err && i < ex->pl->ndev; i++) {
    mlsba__device_t *d = &ex->opened[i];
    links[i] = (mlsba_link_t){0, 0};
    if (d->ops->measure_link)
      err = d->ops->measure_link(d, &links[i]);
  }
  return err;
}

int mlsba_executor_max_loads(mlsba_executor_t *ex, const mlsba_gemm_t *g,
                             int64_t max_load[]) {
  mlsba_load_t *w = NULL;
  int err = mlsba_load_gemm(g, &w);
  if (!err)
    err = mlsba_executor_max_units(ex, w, max_load);
  mlsba_load_destroy(w);
  return err;
}

/* ---- one run ---------------------------------------------------------- */

typedef struct run run_t;

typedef struct {
  run_t *run;
  size_t g;
  int err;
  long failed;   /* the device whose error err is, or -1 */
  char msg[512]; /* the thread's error message, for the caller's thread */
} group_job_t;

/* What one run asks of the groups; t0 is the common start. */
struct run {
  mlsba_executor_t *ex;
  const mlsba_load_t *work;
  const int64_t *load, *offset;
  double *time;
  double t0;
};

static int pin_to_core(mlsba_executor_t *ex, int core) {
  hwloc_obj_t obj =
      hwloc_get_obj_by_type(ex->topo, HWLOC_OBJ_CORE, (unsigned)core);
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int err = obj == NULL || set == NULL;
  if (!err) {
    /* The core's processing units that the process may use: an SMT
     * sibling outside the binding stays out. */
    hwloc_bitmap_and(set, obj->cpuset, ex->bound);
    err = hwloc_set_cpubind(ex->topo, set, HWLOC_CPUBIND_THREAD) != 0;
  }
  hwloc_bitmap_free(set);
  return err ? mlsba__fail(MLSBA_EDEVICE, "core %d: hwloc_set_cpubind failed",
                           core)
             : 0;
}

/* Starts the shares of the group's devices of one kind: accelerators
 * (and simulated devices) first, the core last. */
static int start_devices(group_job_t *job, int core_share) {
  job->failed = -1;
  run_t *R = job->run;
  const mlsba_platform_t *pl = R->ex->pl;
  for (size_t k = pl->group_start[job->g]; k < pl->group_start[job->g + 1];
       k++) {
    size_t i = pl->group_dev[k];
    if (is_core(pl, i) != core_share)
      continue;
    mlsba__device_t *d = &R->ex->opened[i];
    int err = d->ops->start(d, R->work, R->offset[i], R->load[i], R->t0);
    if (err) {
      job->failed = (long)i;
      return err;
    }
  }
  return 0;
}

/* Prepares the group's devices that have a share (before the gate). */
static int prepare_group(group_job_t *job) {
  run_t *R = job->run;
  const mlsba_platform_t *pl = R->ex->pl;
  int err = 0;
  job->failed = -1;
  for (size_t k = pl->group_start[job->g];
       !err && k < pl->group_start[job->g + 1]; k++) {
    size_t i = pl->group_dev[k];
    mlsba__device_t *d = &R->ex->opened[i];
    if (R->load[i] > 0 && d->ops->prepare &&
        (err = d->ops->prepare(d, R->work)) != 0)
      job->failed = (long)i;
  }
  return err;
}

/* Runs the group's shares (after the gate) and records the outcome. */
static void run_group(group_job_t *job, int err) {
  run_t *R = job->run;
  const mlsba_platform_t *pl = R->ex->pl;
  if (!err)
    err = start_devices(job, 0); /* accelerators: enqueue and return */
  if (!err)
    err = start_devices(job, 1); /* the core computes its own share */
  /* Wait for every device of the group, even after an error, so that no
   * device still writes into C when the run returns. */
  for (size_t k = pl->group_start[job->g]; k < pl->group_start[job->g + 1];
       k++) {
    size_t i = pl->group_dev[k];
    int e = R->ex->opened[i].ops->finish(&R->ex->opened[i], &R->time[i]);
    if (e && !err)
      job->failed = (long)i;
    err = err ? err : e;
  }
  if (err)
    snprintf(job->msg, sizeof job->msg, "%s", mlsba_last_error());
  job->err = err;
}

/* Devices in virtual time take no wall time, so their groups run one
 * after another in the caller's thread: a thousand simulated MPI ranks
 * would otherwise start a thread per group for every run. */
static void run_inline(run_t *R, group_job_t *jobs, size_t q) {
  for (size_t g = 0; g < q; g++) {
    jobs[g] = (group_job_t){.run = R, .g = g};
    run_group(&jobs[g], prepare_group(&jobs[g]));
  }
}

/* ---- the groups' threads ------------------------------------------------ */

/* One thread per group, started once and kept: starting and pinning
 * threads for every run cost about 0.2 ms, a run per step of a
 * factorization. Between runs they sleep on a condition variable. */
typedef struct group_thread {
  struct mlsba__group_pool *pool;
  pthread_t thread;
  int pinned;
  group_job_t job; /* this run's outcome */
} group_thread_t;

/* A run goes through the pool in three moves, each made under mu: the
 * caller posts it (posted++); every group readies itself (pins its thread
 * the first time, prepares its devices) and reports ready; the last one
 * ready sets t0 and opens the gate (gate_open = posted), so that every
 * group starts from it; the caller waits until every group is done. */
typedef struct mlsba__group_pool {
  mlsba_executor_t *ex;
  size_t q;
  pthread_mutex_t mu;
  pthread_cond_t to_groups; /* a run posted, the gate open, or stop */
  pthread_cond_t to_caller; /* every group done */
  run_t *run;               /* the run in flight */
  /* Written under mu, read without it by a thread that spins. */
  atomic_ulong posted;    /* runs posted so far */
  atomic_ulong gate_open; /* the run whose gate is open */
  atomic_ulong done;      /* groups done with the run in flight */
  size_t ready;
  size_t started;           /* threads started */
  unsigned long generation; /* the process's, at the start (forks) */
  int stop;
  group_thread_t *threads;
} group_pool_t;

static atomic_uint thread_fault; /* mlsba__executor_inject_thread_fault */

void mlsba__executor_inject_thread_fault(unsigned nth) {
  atomic_store(&thread_fault, nth);
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
  unsigned n = atomic_load(&thread_fault);
  while (n > 0 && !atomic_compare_exchange_weak(&thread_fault, &n, n - 1))
    ;
  if (n == 1)
    return EAGAIN;
  return pthread_create(t, NULL, fn, arg);
}

/* Pins the thread (once: the pin lasts), then prepares the devices. */
static int ready_group(group_thread_t *t) {
  run_t *R = t->job.run;
  const mlsba_platform_t *pl = R->ex->pl;
  long core_dev = group_core_device(pl, t->job.g);
  int err = 0;
  if (core_dev >= 0 && !t->pinned) {
    err = pin_to_core(R->ex, mlsba__platform_core(pl, (size_t)core_dev));
    t->pinned = !err;
  }
  return err ? err : prepare_group(&t->job);
}

/* How long a group that is ready spins for the others before it sleeps:
 * they were woken together and are due within microseconds, and waking a
 * sleeper costs tens of them (a no-op run on two cores here: 27 us with
 * the spin, 47-72 without). Spinning elsewhere did not pay: the caller's
 * thread and a group's between runs would take a core from the others. */
#define GATE_SPIN 20e-6

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

/* Spins for up to seconds until *word == want: whether it came. */
static int spin_for(atomic_ulong *word, unsigned long want, double seconds) {
  double end = mlsba__now() + seconds;
  do {
    for (int i = 0; i < 64; i++) {
      if (atomic_load_explicit(word, memory_order_acquire) == want)
        return 1;
      cpu_relax();
    }
  } while (mlsba__now() < end);
  return 0;
}

/* Called and returning with P->mu held: waits until *word == want or
 * stop, spinning first (without the lock) for up to spin seconds, then
 * asleep on cv. */
static void await(group_pool_t *P, pthread_cond_t *cv, atomic_ulong *word,
                  unsigned long want, double spin) {
  if (spin > 0 && atomic_load(word) != want) {
    pthread_mutex_unlock(&P->mu);
    spin_for(word, want, spin);
    pthread_mutex_lock(&P->mu);
  }
  while (!P->stop && atomic_load(word) != want)
    pthread_cond_wait(cv, &P->mu);
}

/* Under P->mu: this group is ready; the last one opens the gate. */
static void report_ready(group_pool_t *P, unsigned long run) {
  if (++P->ready < P->q) {
    await(P, &P->to_groups, &P->gate_open, run, GATE_SPIN);
    return;
  }
  P->run->t0 = mlsba__now();
  atomic_store(&P->gate_open, run);
  pthread_cond_broadcast(&P->to_groups);
}

static void *group_main(void *arg) {
  group_thread_t *t = arg;
  group_pool_t *P = t->pool;
  size_t g = (size_t)(t - P->threads);
  unsigned long seen = 0;
  pthread_mutex_lock(&P->mu);
  for (;;) {
    await(P, &P->to_groups, &P->posted, seen + 1, 0);
    if (P->stop)
      break;
    seen = atomic_load(&P->posted);
    t->job = (group_job_t){.run = P->run, .g = g};
    pthread_mutex_unlock(&P->mu);
    int err = ready_group(t);
    pthread_mutex_lock(&P->mu);
    report_ready(P, seen);
    pthread_mutex_unlock(&P->mu);
    run_group(&t->job, err);
    pthread_mutex_lock(&P->mu);
    if (atomic_fetch_add(&P->done, 1) + 1 == P->q)
      pthread_cond_signal(&P->to_caller);
  }
  pthread_mutex_unlock(&P->mu);
  return NULL;
}

/* A process forked after the threads started has none of them (only the
 * thread that called fork() goes on in the child): the child's executor
 * leaves the parent's pool alone and starts its own. */
static atomic_ulong fork_generation;
static pthread_once_t fork_watch_once = PTHREAD_ONCE_INIT;

static void count_fork(void) { atomic_fetch_add(&fork_generation, 1); }

static void watch_forks(void) { pthread_atfork(NULL, NULL, count_fork); }

static int pool_forked(const group_pool_t *P) {
  return P->generation != atomic_load(&fork_generation);
}

/* Stops the pool's threads (idle between runs) and frees it; in a forked
 * child, where its threads do not exist and its lock may be held, only
 * frees it. */
static void pool_destroy(group_pool_t *P) {
  if (pool_forked(P)) {
    free(P->threads);
    free(P);
    return;
  }
  pthread_mutex_lock(&P->mu);
  P->stop = 1;
  pthread_cond_broadcast(&P->to_groups);
  pthread_mutex_unlock(&P->mu);
  for (size_t g = 0; g < P->started; g++)
    pthread_join(P->threads[g].thread, NULL);
  pthread_cond_destroy(&P->to_caller);
  pthread_cond_destroy(&P->to_groups);
  pthread_mutex_destroy(&P->mu);
  free(P->threads);
  free(P);
}

/* Starts a pool for ex. A thread that cannot start calls it off (the
 * others are stopped), so that the next run tries again. */
static int pool_start(mlsba_executor_t *ex, group_pool_t **out) {
  pthread_once(&fork_watch_once, watch_forks);
  size_t q = ex->pl->ngroups;
  group_pool_t *P = calloc(1, sizeof *P);
  group_thread_t *threads = calloc(q, sizeof *threads);
  if (P == NULL || threads == NULL) {
    free(P);
    free(threads);
    return mlsba__fail(MLSBA_ENOMEM, "executor: out of memory");
  }
  *P = (group_pool_t){.ex = ex,
                      .q = q,
                      .generation = atomic_load(&fork_generation),
                      .threads = threads};
  pthread_mutex_init(&P->mu, NULL);
  pthread_cond_init(&P->to_groups, NULL);
  pthread_cond_init(&P->to_caller, NULL);
  for (size_t g = 0; g < q; g++) {
    threads[g].pool = P;
    int rc = start_thread(&threads[g].thread, group_main, &threads[g]);
    if (rc != 0) {
      pool_destroy(P);
      return mlsba__fail(MLSBA_EDEVICE,
                         "executor: cannot start the thread of group %zu (%s)",
                         g, strerror(rc));
    }
    P->started++;
  }
  *out = ex->pool = P;
  return 0;
}

/* The pool of ex, started on the first threaded run (or the first in a
 * forked child). */
static int pool_get(mlsba_executor_t *ex, group_pool_t **out) {
  if ((*out = ex->pool) != NULL && !pool_forked(ex->pool))
    return 0;
  /* The parent's pool is freed after the new one is made: at its address
   * helgrind would take the new pool's lock for the parent's. */
  group_pool_t *parents = ex->pool;
  ex->pool = NULL;
  int err = pool_start(ex, out);
  if (parents)
    pool_destroy(parents);
  return err;
}

/* Every group on its own thread, started together at the gate. */
static int run_threads(run_t *R, group_job_t *jobs, size_t q) {
  group_pool_t *P = NULL;
  int err = pool_get(R->ex, &P);
  if (err)
    return err;
  pthread_mutex_lock(&P->mu);
  P->run = R;
  P->ready = 0;
  atomic_store(&P->done, 0);
  atomic_fetch_add(&P->posted, 1);
  pthread_cond_broadcast(&P->to_groups);
  await(P, &P->to_caller, &P->done, q, 0);
  P->run = NULL;
  pthread_mutex_unlock(&P->mu);
  for (size_t g = 0; g < q; g++)
    jobs[g] = P->threads[g].job;
  return 0;
}

/* A device that slows others while it runs (a sim device with
 * contends_with) makes their times longer, by its backend's rule. */
static void apply_contention(const mlsba_executor_t *ex, const int64_t *load,
                             double *time) {
  for (size_t j = 0; j < ex->pl->ndev; j++)
    if (ex->opened[j].ops->contend)
      ex->opened[j].ops->contend(&ex->opened[j], j, load, time);
}

/* Checks the loads and lays the slices out group by group. */
static int check_loads(mlsba_executor_t *ex, const mlsba_load_t *w,
                       const int64_t *load, mlsba_drive_t drive,
                       int64_t *offset) {
  const mlsba_platform_t *pl = ex->pl;
  int64_t *max = malloc(pl->ndev * sizeof *max);
  if (max == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "executor: out of memory");
  int err = mlsba_executor_max_units(ex, w, max);
  int64_t off = 0;
  for (size_t gi = 0; !err && gi < pl->ngroups; gi++) {

    for (size_t k = pl->group_start[gi]; !err && k < pl->group_start[gi + 1];
         k++) {
      size_t i = pl->group_dev[k];
      const char *name = pl->dev[i].name;
      if (load[i] < 0 || load[i] > max[i])
        err = mlsba__fail(MLSBA_EINVAL,
                          "%s: load %lld outside 0..%lld (what it can hold)",
                          name, (long long)load[i], (long long)max[i]);
      else if (drive == MLSBA_DRIVE_DEVOTED &&
               mlsba__platform_is_driver(pl, gi, k) && load[i] != 0)
        err = mlsba__fail(MLSBA_EINVAL,
                          "%s: a devoted core only drives its accelerators, "
                          "its load must be 0 (got %lld)",
                          name, (long long)load[i]);
      else if (load[i] > w->units - off) /* 0 <= off <= units: no overflow */
        err = mlsba__fail(MLSBA_EINVAL,
                          "the loads add up to more than the %lld units of "
                          "%s (at %s)",
                          (long long)w->units, w->name, name);
      offset[i] = off;
      off += err ? 0 : load[i];
    }
  }
  if (!err && off != w->units)
    err = mlsba__fail(MLSBA_EINVAL,
                      "the loads add up to %lld, not the %lld units of %s",
                      (long long)off, (long long)w->units, w->name);
  free(max);
  return err;
}

/* One run of an executor that is not running already. */
static int run_once(mlsba_executor_t *ex, const mlsba_load_t *w,
                    const int64_t load[], mlsba_drive_t drive, double time[],
                    long *failed) {
  int err = 0;
  const mlsba_platform_t *pl = ex->pl;
  size_t q = pl->ngroups;
  int64_t *offset = malloc(pl->ndev * sizeof *offset);
  group_job_t *jobs = calloc(q, sizeof *jobs);
  if (offset == NULL || jobs == NULL) {
    free(offset);
    free(jobs);
    return mlsba__fail(MLSBA_ENOMEM, "executor: out of memory");
  }
  if ((err = check_loads(ex, w, load, drive, offset)) != 0)
    goto done;
  run_t R = {.ex = ex, .work = w, .load = load, .offset = offset, .time = time};
  if (ex->virtual_only)
    run_inline(&R, jobs, q);
  else
    err = run_threads(&R, jobs, q);
  for (size_t i = 0; i < q && !err; i++) {
    if (jobs[i].err) {
      err = mlsba__fail(jobs[i].err, "%s", jobs[i].msg);
      if (failed)
        *failed = jobs[i].failed;
    }
  }
  if (!err)
    apply_contention(ex, load, time);
done:
  free(offset);
  free(jobs);
  return err;
}

int mlsba_executor_run(mlsba_executor_t *ex, const mlsba_load_t *w,
                       const int64_t load[], mlsba_drive_t drive, double time[],
                       long *failed) {
  if (failed)
    *failed = -1;
  if (ex == NULL || w == NULL || load == NULL || time == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_executor_run: NULL argument");
  /* A second run would wait for the groups' threads that run the first:
   * from a CPU function of the first, for ever. */
  if (atomic_exchange(&ex->running, 1))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_executor_run: the executor is running a load "
                       "already (one run at a time; a CPU function must not "
                       "run the executor that calls it)");
  int err = run_once(ex, w, load, drive, time, failed);
  atomic_store(&ex->running, 0);
  return err;
}

int mlsba_executor_run_gemm(mlsba_executor_t *ex, const mlsba_gemm_t *g,
                            const int64_t load[], mlsba_drive_t drive,
                            double time[]) {
  mlsba_load_t *w = NULL;
  int err = mlsba_load_gemm(g, &w);
  if (!err)
    err = mlsba_executor_run(ex, w, load, drive, time, NULL);
  mlsba_load_destroy(w);
  return err;
}
