/* A rank's trailing update split between the devices of its node
 * (factor.h: mlsba__mpi_dfac_update). Each step the rank's trailing
 * columns are the units, and lib/factor's per-step split
 * (mlsba__factor_split, the single-node factorization's own) divides them
 * by the devices' rate models at that step's size:
 *  - real cores run their columns on the node's executor, one pinned
 *    thread each, and their models learn each step's measured rate as
 *    the single-node driver's learn (mlsba__factor_learn_point), kept on
 *    this rank for the whole factorization;
 *  - simulated devices take the virtual time their profiles give (a
 *    profile counts nb x nb blocks updated by a rank-nb product per
 *    second, as mlsba-inpa's node files do), while the numbers are
 *    computed on the calling thread; under SMPI the step's longest
 *    virtual time advances the rank's simulated clock (mlsba__mpi_spend);
 *  - one core alone, or real devices under SMPI, compute on the calling
 *    thread as a single device.
 * OpenCL devices take no columns yet (their share goes to the cores).
 *
 * LU's solve of U's block row goes through the same split (a work with
 * `solve` set: each device solves its own columns). The rest of a
 * step's compute (the panel, the row copies) runs on the node's cores
 * together (the panel's GEMMs on BLIS's threads, factor_panel.c); on a
 * simulated node mlsba__mpi_dfac_charge() charges it at the speed of its
 * panel cores: the devices of the kind of its slowest one (its fastest
 * profile point the lowest: a core, where the node has one beside its
 * accelerators) that drive no accelerator, as HPL on SMPI charges each
 * BLAS call its flops at a calibrated rate; its copies at the node
 * file's host memory where it has one ("memory"). With f->skip, nothing is
 * computed at all and only the times advance the clock.
 *
 * Columns need not cost the same (Cholesky's lower triangle): a split's
 * units are then columns of the mean cost, and each device's range of
 * columns is cut where the running flops reach its share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../factor/factor.h"
#include "../factor/rhs.h"
#include "../partition/fpm.h"
#include "../platform/platform.h"
#include "factor.h"

struct mlsba__mpi_dfac_node {
  mlsba_platform_t *pl;
  mlsba_executor_t *ex; /* real devices with more than one core; else NULL */
  size_t p, q;
  size_t *group_size, *group_dev;
  int simulated;
  int skip;      /* no numbers computed (f->skip): times only */
  int on_caller; /* real, computed on the calling thread as one device */
  size_t core;   /* simulated: the device whose speed the other compute
                    takes (the slowest, a core where the node has one) */
  /* Simulated: the panel's cores, which run the other compute together
   * (mlsba__mpi_dfac_charge): the devices of core's kind alone in their
   * groups (a core that drives an accelerator keeps driving it), or core
   * alone where there is none; their count. */
  unsigned char *panel_core;
  size_t panel_cores;
  double other_s; /* simulated: the other compute's virtual time */
  /* Simulated: whether the other compute charged now runs on the core
   * beside the next update (mlsba__mpi_dfac_beside), and its seconds. */
  int beside;
  double beside_s;
  int (*progress)(void *); /* simulated: between slices of an update */
  void *progress_user;
  double unit_ref; /* flops of a simulated profile's unit: 2 nb^3 */
  unsigned char *active;
  mlsba_model_t **rate; /* real: learnt; simulated: the step's */
  int64_t *load;        /* the split's units */
  int64_t *piece;       /* a piece's units of each device (work.whole) */
  double piece_busy_s;  /* the panel's credit in the split of the pieces */
  /* Simulated pieces: each device's seconds since the step's first piece
   * (panel's credit included), and the seconds charged for them. */
  double *piece_s, piece_charged_s;
  int64_t piece_at;     /* the step's columns given in pieces so far */
  int64_t *cols;        /* the columns each device takes */
  double *flops, *time; /* of its columns; its seconds */
  int64_t *total_cols;  /* over the steps */
  double *total_s;
  double *before;      /* lcols + 1 running flops of a step's columns */
  unsigned char *done; /* lcols: the columns a run has updated */
  const mlsba__mpi_dfac_work_t *work; /* the step in flight */
  int64_t steps, split_steps, fpm_steps;
  double update_s;
  /* FIXED_SLICE: the fractions kept (p entries), once known. */
  mlsba_factor_split_t split;
  double *fraction;
  int fixed;          /* 1 once fraction holds the slice */
  int64_t tuned_cols; /* the columns of the split fraction was taken from */
  /* Per step (max_steps of them): its seconds and its update's. */
  int64_t max_steps, timed;
  double *step_s, *step_update_s;
  double mark, step_acc; /* the last step's end; this step's update */
};

/* ---- opening the node --------------------------------------------------- */

static int node_alloc(mlsba__mpi_dfac_node_t *nd, int64_t lcols) {
  size_t p = nd->p, c = (size_t)(lcols > 0 ? lcols : 0);
  nd->group_size = calloc(nd->q ? nd->q : 1, sizeof *nd->group_size);
  nd->group_dev = calloc(p, sizeof *nd->group_dev);
  nd->active = calloc(p, 1);
  nd->panel_core = calloc(p ? p : 1, 1);
  nd->rate = calloc(p, sizeof *nd->rate);
  nd->load = calloc(p, sizeof *nd->load);
  nd->cols = calloc(p, sizeof *nd->cols);
  nd->piece = calloc(p ? p : 1, sizeof *nd->piece);
  nd->piece_s = calloc(p ? p : 1, sizeof *nd->piece_s);
  nd->flops = calloc(p, sizeof *nd->flops);
  nd->time = calloc(p, sizeof *nd->time);
  nd->total_cols = calloc(p, sizeof *nd->total_cols);
  nd->total_s = calloc(p, sizeof *nd->total_s);
  nd->before = calloc(c + 1, sizeof *nd->before);
  nd->done = calloc(c + 1, 1);
  nd->fraction = calloc(p ? p : 1, sizeof *nd->fraction);
  size_t k = (size_t)(nd->max_steps > 0 ? nd->max_steps : 1);
  nd->step_s = calloc(k, sizeof *nd->step_s);
  nd->step_update_s = calloc(k, sizeof *nd->step_update_s);
  if (!nd->fraction || !nd->step_s || !nd->step_update_s)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory for the node's split");
  if (!nd->group_size || !nd->group_dev || !nd->active || !nd->panel_core ||
      !nd->rate || !nd->load || !nd->cols || !nd->piece || !nd->piece_s ||
      !nd->flops || !nd->time || !nd->total_cols || !nd->total_s ||
      !nd->before || !nd->done)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory for the node's split");
  return 0;
}

/* A profile's fastest point. */
static double fastest(const mlsba_model_t *prof) {
  double best = 0;
  for (size_t k = 0; k < mlsba_model_num_points(prof); k++) {
    double x, s;
    mlsba_model_get_point(prof, k, &x, &s);
    best = s > best ? s : best;
  }
  return best;
}

/* A simulated node's panel cores (nd->panel_core): the devices of the
 * slowest device's kind that are alone in their groups, as seed 003's
 * hybrid HPL factors a node's panel on the cores that drive no GPU; the
 * slowest device alone where it has no kind or none of its kind is
 * free. */
static void panel_cores(mlsba__mpi_dfac_node_t *nd) {
  mlsba_device_info_t info;
  char kind[128] = "";
  if (mlsba_platform_device_info(nd->pl, nd->core, &info) == 0)
    snprintf(kind, sizeof kind, "%s", info.kind);
  nd->panel_cores = 0;
  for (size_t g = 0, at = 0; g < nd->q; g++) {
    size_t i = nd->group_dev[at];
    at += nd->group_size[g];
    if (nd->group_size[g] != 1 || kind[0] == 0 ||
        mlsba_platform_device_info(nd->pl, i, &info) != 0 ||
        strcmp(info.kind, kind) != 0)
      continue;
    nd->panel_core[i] = 1;
    nd->panel_cores++;
  }
  if (nd->panel_cores == 0) {
    nd->panel_core[nd->core] = 1;
    nd->panel_cores = 1;
  }
}

/* The devices that take columns, the groups, and the real ones' empty
 * models; a node mixing simulated and real devices is refused (it runs
 * in virtual time or in wall-clock time, not both). */
static int node_devices(mlsba__mpi_dfac_node_t *nd, const char *path) {
  size_t sims = 0, cores = 0;
  for (size_t i = 0; i < nd->p; i++) {
    mlsba_device_type_t t = mlsba_platform_device_type(nd->pl, i);
    sims += t == MLSBA_DEVICE_SIM;
    cores += t == MLSBA_DEVICE_CPU;
    nd->active[i] = t != MLSBA_DEVICE_OPENCL;
  }
  if (sims != 0 && sims != nd->p)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: mixes simulated and real devices; a node "
                       "runs either in virtual time or in wall-clock time",
                       path);
  if (sims + cores == 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: no core or simulated device to take the "
                       "update (OpenCL devices take no columns of a "
                       "factorization across ranks yet)",
                       path);
  nd->simulated = sims > 0;
  if (nd->skip && !nd->simulated)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: skip_compute needs simulated devices (real "
                       "ones take the time of the numbers they compute)",
                       path);
  for (size_t i = 0; nd->simulated && i < nd->p; i++)
    if (fastest(mlsba_platform_device_model(nd->pl, i)) <
        fastest(mlsba_platform_device_model(nd->pl, nd->core)))
      nd->core = i;
  nd->on_caller = !nd->simulated && (cores == 1 || mlsba__mpi_is_smpi());
  /* The groups cover every device once (the platform checks it). */
  for (size_t g = 0, at = 0; g < nd->q; g++) {
    nd->group_size[g] = mlsba_platform_group_size(nd->pl, g);
    for (size_t k = 0; k < nd->group_size[g] && at < nd->p; k++)
      nd->group_dev[at++] = mlsba_platform_group_device(nd->pl, g, k);
  }
  if (nd->simulated)
    panel_cores(nd);
  int err = 0;
  for (size_t i = 0; !err && i < nd->p && !nd->simulated; i++)
    err = mlsba_model_create(&nd->rate[i]);
  if (!err && !nd->simulated && !nd->on_caller)
    err = mlsba_executor_create(nd->pl, &nd->ex);
  return err;
}

/* The split asked for: FPM, or FIXED_SLICE with fractions that make
 * sense for this node (one per device, >= 0, some active one > 0). */
static int node_split(mlsba__mpi_dfac_node_t *nd,
                      const mlsba_mpi_factor_opts_t *opts, const char *path) {
  nd->split = opts ? opts->split : MLSBA_FACTOR_SPLIT_FPM;
  if (nd->split != MLSBA_FACTOR_SPLIT_FPM &&
      nd->split != MLSBA_FACTOR_SPLIT_FIXED_SLICE)
    return mlsba__fail(MLSBA_EINVAL,
                       "split %d: across ranks the update is split per step "
                       "(MLSBA_FACTOR_SPLIT_FPM) or by a fixed slice "
                       "(MLSBA_FACTOR_SPLIT_FIXED_SLICE)",
                       (int)nd->split);
  if (nd->split != MLSBA_FACTOR_SPLIT_FIXED_SLICE || !opts->fraction)
    return 0;
  double sum = 0;
  for (size_t i = 0; i < nd->p; i++) {
    double x = opts->fraction[i];
    if (!(x >= 0) || x > 1e300)
      return mlsba__fail(MLSBA_EINVAL,
                         "%s: fraction[%zu] is %g; a device's share is a "
                         "finite number >= 0",
                         path, i, x);
    nd->fraction[i] = nd->active[i] ? x : 0;
    sum += nd->fraction[i];
  }
  if (!(sum > 0))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: the fractions give the devices that take "
                       "columns nothing (%zu devices, OpenCL ones take none)",
                       path, nd->p);
  nd->fixed = 1;
  return 0;
}

static int node_open(const mlsba__mpi_dfac_t *f, const char *path,
                     mlsba__mpi_dfac_node_t **out) {
  mlsba__mpi_dfac_node_t *nd = calloc(1, sizeof *nd);
  if (nd == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory for the node");
  *out = nd;
  int64_t kmax = f->m < f->n ? f->m : f->n;
  nd->max_steps = (kmax + f->nb - 1) / f->nb;
  /* "auto": the cores alone, for OpenCL devices take no columns here and
   * asking OpenCL for them (pocl) costs a tenth of a second a call. */
  int err = strcmp(path, "auto") == 0 ? mlsba__platform_discover_cores(&nd->pl)
                                      : mlsba_platform_load(path, &nd->pl);
  if (err)
    return err;
  nd->p = mlsba_platform_num_devices(nd->pl);
  nd->q = mlsba_platform_num_groups(nd->pl);
  nd->skip = f->skip;
  double nb = (double)f->nb;
  nd->unit_ref = 2 * nb * nb * nb;
  if ((err = node_alloc(nd, f->lcols)) != 0)
    return err;
  return node_devices(nd, path);
}

static void node_free(mlsba__mpi_dfac_node_t *nd) {
  if (nd == NULL)
    return;
  for (size_t i = 0; nd->rate && i < nd->p; i++)
    mlsba_model_destroy(nd->rate[i]);
  mlsba_executor_destroy(nd->ex);
  mlsba_platform_destroy(nd->pl);
  free(nd->group_size);
  free(nd->group_dev);
  free(nd->active);
  free(nd->panel_core);
  free(nd->rate);
  free(nd->load);
  free(nd->cols);
  free(nd->piece);
  free(nd->piece_s);
  free(nd->flops);
  free(nd->time);
  free(nd->total_cols);
  free(nd->total_s);
  free(nd->before);
  free(nd->done);
  free(nd->fraction);
  free(nd->step_s);
  free(nd->step_update_s);
  free(nd);
}

int mlsba__mpi_dfac_node_open(mlsba__mpi_dfac_t *f,
                              const mlsba_mpi_factor_opts_t *opts,
                              const char *call) {
  const char *pattern = opts && opts->platform ? opts->platform : "auto";
  char path[1024];
  /* Collective: every rank calls it whatever its options. */
  int err = mlsba_mpi_platform_path(f->comm, pattern, path, sizeof path);
  if (!err)
    err = node_open(f, path, &f->node);
  if (!err)
    err = node_split(f->node, opts, path);
  if (err) {
    char why[600];
    snprintf(why, sizeof why, "%s", mlsba_last_error());
    err = mlsba__fail(err, "%s: the node's platform: %s", call, why);
  }
  if ((err = mlsba__mpi_agree(f->comm, err)) != 0) {
    node_free(f->node);
    f->node = NULL;
  } else
    f->node->mark = MPI_Wtime();
  return err;
}

void mlsba__mpi_dfac_node_step_done(const mlsba__mpi_dfac_t *f) {
  mlsba__mpi_dfac_node_t *nd = f->node;
  if (nd == NULL)
    return;
  double now = MPI_Wtime();
  if (nd->timed < nd->max_steps) {
    nd->step_s[nd->timed] = now - nd->mark;
    nd->step_update_s[nd->timed] = nd->step_acc;
    nd->timed++;
  }
  nd->mark = now;
  nd->step_acc = 0;
  nd->beside_s = 0; /* a panel beside no update: nothing to credit */
  nd->fixed |= nd->tuned_cols > 0; /* the slice, from now on */
}

void mlsba__mpi_dfac_node_close(mlsba__mpi_dfac_t *f,
                                mlsba_mpi_factor_report_t *report) {
  mlsba__mpi_dfac_node_t *nd = f->node;
  if (report) {
    memset(report, 0, sizeof *report);
    size_t p = nd ? nd->p : 0;
    report->columns = calloc(p ? p : 1, sizeof *report->columns);
    report->seconds = calloc(p ? p : 1, sizeof *report->seconds);
    if (nd && report->columns && report->seconds) {
      report->num_devices = p;
      memcpy(report->columns, nd->total_cols, p * sizeof *nd->total_cols);
      memcpy(report->seconds, nd->total_s, p * sizeof *nd->total_s);
      report->steps = nd->steps;
      report->split_steps = nd->split_steps;
      report->fpm_steps = nd->fpm_steps;
      report->update_s = nd->update_s;
      report->simulated = nd->simulated;
      report->split = nd->split;
      size_t k = (size_t)(nd->timed ? nd->timed : 1);
      report->step_s = malloc(k * sizeof *report->step_s);
      report->step_update_s = malloc(k * sizeof *report->step_update_s);
      report->fraction =
          nd->fixed ? malloc((p ? p : 1) * sizeof *report->fraction) : NULL;
      if (report->step_s && report->step_update_s) {
        report->timed_steps = nd->timed;
        memcpy(report->step_s, nd->step_s, (size_t)nd->timed * sizeof(double));
        memcpy(report->step_update_s, nd->step_update_s,
               (size_t)nd->timed * sizeof(double));
      }
      if (report->fraction)
        memcpy(report->fraction, nd->fraction, p * sizeof *nd->fraction);
      report->other_s = nd->other_s;
    }
    report->total_s = mlsba__mpi_dfac_clock() - f->t0;
    report->panel_s = f->phase[MLSBA__MPI_PANEL];
    report->wait_s = f->phase[MLSBA__MPI_WAIT];
    report->swap_s = f->phase[MLSBA__MPI_SWAP];
    report->update_wall_s = f->phase[MLSBA__MPI_UPDATE];
  }
  if (f->verbose)
    fprintf(stderr,
            "mlsba: rank %d: %.4f s: panel %.4f wait %.4f swap %.4f update "
            "%.4f other %.4f s\n",
            f->me, mlsba__mpi_dfac_clock() - f->t0, f->phase[MLSBA__MPI_PANEL],
            f->phase[MLSBA__MPI_WAIT], f->phase[MLSBA__MPI_SWAP],
            f->phase[MLSBA__MPI_UPDATE], f->phase[MLSBA__MPI_OTHER]);
  node_free(nd);
  f->node = NULL;
}

void mlsba_mpi_factor_report_free(mlsba_mpi_factor_report_t *report) {
  if (report == NULL)
    return;
  free(report->columns);
  free(report->seconds);
  free(report->step_s);
  free(report->step_update_s);
  free(report->fraction);
  report->columns = NULL;
  report->seconds = NULL;
  report->step_s = NULL;
  report->step_update_s = NULL;
  report->fraction = NULL;
  report->num_devices = 0;
  report->timed_steps = 0;
}

/* ---- one step ------------------------------------------------------------ */

/* A simulated device's rate at this step: its profile's blocks per second
 * times the flops of a block, against columns of unit_flops each. */
static int sim_rate(const mlsba__mpi_dfac_node_t *nd, size_t i,
                    double unit_flops, mlsba_model_t **out) {
  const mlsba_model_t *prof = mlsba_platform_device_model(nd->pl, i);
  double per_block = nd->unit_ref / unit_flops; /* columns in a block */
  int err = mlsba_model_create(out);
  for (size_t k = 0; !err && k < mlsba_model_num_points(prof); k++) {
    double x, s;
    mlsba_model_get_point(prof, k, &x, &s);
    double cols = x * per_block;
    err = mlsba_model_set_point(*out, cols < 1e-6 ? 1e-6 : cols,
                                s * nd->unit_ref);
  }
  int64_t cap = mlsba_model_max_load(prof);
  if (!err && cap >= 0) {
    double c = (double)cap * per_block;
    err = mlsba_model_set_max_load(
        *out, c < MLSBA_LOAD_MAX ? (int64_t)c : (int64_t)MLSBA_LOAD_MAX);
  }
  return err;
}

/* The running flops of the step's columns into nd->before. */
static void running_flops(mlsba__mpi_dfac_node_t *nd,
                          const mlsba__mpi_dfac_work_t *w) {
  nd->before[0] = 0;
  for (int64_t c = 0; c < w->cols; c++)
    nd->before[c + 1] =
        nd->before[c] +
        (w->column_flops ? w->column_flops(w->user, c) : w->unit_flops);
}

/* The first column whose running flops reach t. */
static int64_t cut_at(const mlsba__mpi_dfac_node_t *nd, int64_t cols,
                      double t) {
  int64_t lo = 0, hi = cols;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (nd->before[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Each device's columns from its units, cut group by group (the order in
 * which the executor lays out its ranges) where the running flops reach
 * its share. */
static void cut_columns(mlsba__mpi_dfac_node_t *nd,
                        const mlsba__mpi_dfac_work_t *w, const int64_t *load,
                        double unit_flops) {
  int64_t units = 0, at = 0, cols = w->cols;
  for (size_t k = 0; k < nd->p; k++) {
    size_t i = nd->group_dev[k];
    units += load[i];
    /* Columns of one cost are the units themselves. */
    int64_t end = units >= cols ? cols
                  : !w->column_flops
                      ? units
                      : cut_at(nd, cols, (double)units * unit_flops);
    if (end < at || load[i] == 0)
      end = at;
    nd->cols[i] = end - at;
    nd->flops[i] = nd->before[end] - nd->before[at];
    at = end;
  }
}

/* Each device's units of the piece [at, at + cols) of a step's units:
 * its share of the whole (nd->load) up to the piece's end less its share
 * up to its start, each rounded, so that a device's pieces add up to its
 * share of the whole (rounded a piece at a time, a core due 1.9 columns
 * a piece took 2 every piece and ran longer than its share); the
 * device with the largest share takes what the rounding leaves over. */
static void piece_units(mlsba__mpi_dfac_node_t *nd, int64_t at, int64_t cols,
                        int64_t units) {
  int64_t given = 0;
  size_t big = 0;
  for (size_t i = 0; i < nd->p; i++) {
    double share = (double)nd->load[i] / (double)units;
    nd->piece[i] = (int64_t)floor(share * (double)(at + cols) + 0.5) -
                   (int64_t)floor(share * (double)at + 0.5);
    given += nd->piece[i];
    big = nd->load[i] > nd->load[big] ? i : big;
  }
  nd->piece[big] += cols - given;
  if (nd->piece[big] < 0) { /* never on sane shares; keep it whole */
    for (size_t i = 0; i < nd->p; i++)
      nd->piece[i] = i == big ? cols : 0;
  }
}

/* Whether w starts a step: a call of its own, or a step's first piece. */
static int starts_step(const mlsba__mpi_dfac_work_t *w) {
  return w->whole <= w->cols || w->first;
}

/* The executor's CPU function: the columns [first, first + count). */
static int run_columns(void *user, int64_t first, int64_t count) {
  mlsba__mpi_dfac_node_t *nd = user;
  nd->work->run(nd->work->user, first, first + count);
  memset(nd->done + first, 1, (size_t)count);
  return 0;
}

/* The real devices' run, then whatever columns it left (a device that
 * failed: nothing is lost, the calling thread updates them). */
static int run_real(mlsba__mpi_dfac_node_t *nd,
                    const mlsba__mpi_dfac_work_t *w) {
  mlsba_load_t *load = NULL;
  nd->work = w;
  memset(nd->done, 0, (size_t)w->cols);
  int err = mlsba_load_create("mpi-factor-update", w->cols, &load);
  if (!err)
    err = mlsba_load_set_cpu(load, run_columns, nd);
  if (!err)
    err = mlsba_executor_run(nd->ex, load, nd->cols, MLSBA_DRIVE_SHARED,
                             nd->time, NULL);
  mlsba_load_destroy(load);
  for (int64_t c = 0; c < w->cols;) {
    int64_t e = c;
    while (e < w->cols && !nd->done[e])
      e++;
    if (e > c)
      w->run(w->user, c, e);
    c = e + 1;
  }
  return err;
}

/* A panel core's rate for the split while the panel's busy_s seconds
 * run on it: x units take x w / s(x) + busy_s (lib/factor's panel
 * device, for every panel core), sampled at the rate's points and on a
 * doubling grid up to units, so that the model keeps that shape. */
static int busy_model(const mlsba_model_t *rate, double w, double busy_s,
                      int64_t units, mlsba_model_t **out) {
  int err = mlsba_model_create(out);
  for (size_t k = 0; !err && k < mlsba_model_num_points(rate); k++) {
    double x, s;
    mlsba_model_get_point(rate, k, &x, &s);
    if (s > 0)
      err = mlsba_model_set_point(*out, x, x * w / (x * w / s + busy_s));
  }
  for (int64_t x = 1; !err && x <= units; x *= 2) {
    double s = mlsba__fpm_speed(rate, (double)x);
    if (s > 0)
      err = mlsba_model_set_point(*out, (double)x,
                                  (double)x * w / ((double)x * w / s + busy_s));
  }
  if (!err)
    err = mlsba_model_set_max_load(*out, mlsba_model_max_load(rate));
  return err;
}

/* The split of this step: the models' (lib/factor's), or, where it
 * cannot be made, every column on the calling thread. */
static int split(mlsba__mpi_dfac_node_t *nd, const mlsba__mpi_dfac_work_t *w,
                 int64_t units, double unit_flops, double busy_s, int *fpm) {
  int err = 0;
  mlsba_model_t **busy = NULL;
  /* Seed 004's slice is fixed, whatever the core does beside it (its
   * tuning step included): only the models' split makes room for it. */
  if (nd->split == MLSBA_FACTOR_SPLIT_FIXED_SLICE)
    busy_s = 0;
  for (size_t i = 0; nd->simulated && !err && i < nd->p; i++) {
    mlsba_model_destroy(nd->rate[i]);
    nd->rate[i] = NULL;
    err = sim_rate(nd, i, unit_flops, &nd->rate[i]);
  }
  /* The panel ran on every panel core beside this update (simulated
   * nodes only): each of them starts its columns that much later. */
  if (!err && nd->simulated && busy_s > 0) {
    busy = calloc(nd->p, sizeof *busy);
    err = busy ? 0 : MLSBA_ENOMEM;
    for (size_t i = 0; !err && i < nd->p; i++)
      err = nd->panel_core[i]
                ? busy_model(nd->rate[i], unit_flops, busy_s, units, &busy[i])
                : mlsba_model_clone(nd->rate[i], &busy[i]);
  }
  mlsba__factor_split_in_t in = {
      .split =
          nd->fixed ? MLSBA_FACTOR_SPLIT_FIXED_SLICE : MLSBA_FACTOR_SPLIT_FPM,
      .fraction = nd->fixed ? nd->fraction : NULL,
      .p = nd->p,
      .q = nd->q,
      .group_size = nd->group_size,
      .group_dev = nd->group_dev,
      .rate = (const mlsba_model_t *const *)(busy ? busy : nd->rate),
      .active = nd->active,
      .units = units,
      .unit_flops = unit_flops,
      .panel_dev = -1,
      .ahead_dev = -1};
  if (!err)
    err = mlsba__factor_split(&in, nd->load, fpm);
  for (size_t i = 0; busy && i < nd->p; i++)
    mlsba_model_destroy(busy[i]);
  free(busy);
  /* Seed 004's slice, tuned once: the models' split of the first step
   * they decide, kept as fractions from the next step on. A step's update
   * can come in two calls (the next panel's columns first, a block's
   * width): the slice is the one of more columns, the finer. */
  if (!err && *fpm && nd->split == MLSBA_FACTOR_SPLIT_FIXED_SLICE &&
      !nd->fixed && !w->solve && units > nd->tuned_cols) {
    for (size_t i = 0; i < nd->p; i++)
      nd->fraction[i] = (double)nd->load[i] / (double)units;
    nd->tuned_cols = units;
  }
  return err;
}

/* The update's simulated seconds spent in slices, the progress hook
 * called after each (the messages a rank forwards leave mid-update, as
 * a real rank's do between the pieces of its columns): slices of at most
 * FINE_S while the hook says forwards are still to post, the rest in one
 * once it says none are. In eighths of the update, a forward waited up
 * to an eighth (0.15 s of a 1.2 s step on 64 Keeneland nodes at nb =
 * 960) after its rows had come, at every hop of the rows' tree and down
 * the node column. */
static void spend(mlsba__mpi_dfac_node_t *nd, double seconds) {
  static const double FINE_S = 0.002;
  if (nd->progress == NULL || !(seconds > 0)) {
    mlsba__mpi_spend(seconds);
    return;
  }
  double left = seconds;
  while (left > 0) {
    double t = left < FINE_S ? left : FINE_S;
    mlsba__mpi_spend(t);
    left -= t;
    if (!nd->progress(nd->progress_user)) {
      mlsba__mpi_spend(left);
      return;
    }
  }
}

/* Adds the step to the report and teaches the real devices' models; a
 * solve (w->solve) is the other compute's, and teaches nothing (its rate
 * is a TRSM's). busy_s: simulated seconds the panel cores spent before
 * the update beside it (already on the clock). */
static void account(mlsba__mpi_dfac_node_t *nd, const mlsba__mpi_dfac_work_t *w,
                    int fpm, double busy_s) {
  double longest = busy_s;
  int used = 0;
  for (size_t i = 0; i < nd->p; i++) {
    if (nd->cols[i] == 0)
      continue;
    used++;
    if (w->solve) {
      longest = nd->time[i] > longest ? nd->time[i] : longest;
      continue;
    }
    nd->total_cols[i] += nd->cols[i];
    nd->total_s[i] += nd->time[i] - (nd->panel_core[i] ? busy_s : 0);
    longest = nd->time[i] > longest ? nd->time[i] : longest;
    double rate = nd->time[i] > 0 ? nd->flops[i] / nd->time[i] : 0;
    if (!nd->simulated && rate >= MLSBA_SPEED_MIN && rate <= MLSBA_SPEED_MAX)
      mlsba__factor_learn_point(nd->rate[i], (double)nd->load[i], rate);
  }
  longest -= busy_s;
  /* A simulated piece of a step: each device runs its pieces one after
   * another, so the clock moves on by how far the busiest device's
   * running total passed what is charged already, not by this piece's
   * longest time (a barrier a piece, which the columns' rounding to a
   * piece would pay every piece: a core's one column more). A device
   * behind does its backlog after the waits for the next pieces, never
   * during them. */
  if (nd->simulated && !w->solve && w->whole > w->cols) {
    if (w->first) {
      memset(nd->piece_s, 0, nd->p * sizeof *nd->piece_s);
      nd->piece_charged_s = busy_s;
    }
    double top = nd->piece_charged_s;
    for (size_t i = 0; i < nd->p; i++) {
      nd->piece_s[i] += nd->cols[i] > 0 ? nd->time[i] : 0;
      top = nd->piece_s[i] > top ? nd->piece_s[i] : top;
    }
    longest = top - nd->piece_charged_s;
    nd->piece_charged_s = top;
  }
  if (w->solve)
    nd->other_s += nd->simulated ? longest : 0;
  else {
    int step = starts_step(w);
    nd->steps += step;
    nd->split_steps += step && used > 1;
    nd->fpm_steps += step && fpm;
    nd->update_s += longest;
    nd->step_acc += longest;
  }
  if (nd->simulated)
    spend(nd, longest);
}

/* The whole step on the calling thread, as one device (the first that
 * takes columns). */
static void on_caller(mlsba__mpi_dfac_node_t *nd,
                      const mlsba__mpi_dfac_work_t *w) {
  double t0 = mlsba__now();
  w->run(w->user, 0, w->cols);
  double t = mlsba__now() - t0;
  if (w->solve)
    return;
  size_t first = 0;
  while (first + 1 < nd->p && !nd->active[first])
    first++;
  nd->total_cols[first] += w->cols;
  nd->total_s[first] += t;
  nd->steps += starts_step(w);
  nd->update_s += t;
  nd->step_acc += t;
}

void mlsba__mpi_dfac_update(const mlsba__mpi_dfac_t *f,
                            const mlsba__mpi_dfac_work_t *w) {
  mlsba__mpi_dfac_node_t *nd = f->node;
  if (w->cols <= 0)
    return;
  if (nd == NULL || nd->on_caller) {
    if (nd)
      on_caller(nd, w);
    else
      w->run(w->user, 0, w->cols);
    return;
  }
  running_flops(nd, w);
  double unit_flops = nd->before[w->cols] / (double)w->cols;
  int fpm = 0, others = 0;
  for (size_t i = 0; i < nd->p; i++)
    others += nd->active[i] && !nd->panel_core[i];
  /* The panel cores' compute since mlsba__mpi_dfac_beside() (the next
   * panel) ran while the node's other devices began this update: the
   * split gives those cores that much less, and the clock, which has it
   * already, moves on by the rest of the longest device's time. A solve
   * leaves that credit to the update after it. */
  double busy_s = 0;
  if (!w->solve && starts_step(w)) {
    busy_s = nd->simulated && others > 0 ? nd->beside_s : 0;
    nd->beside_s = 0;
    nd->beside = 0;
  }
  /* A piece of a step's update: the whole's split (the panel's credit
   * the first piece's), cut to the piece in proportion. */
  int64_t units = w->whole > w->cols ? w->whole : w->cols;
  if (units > w->cols && w->first)
    nd->piece_busy_s = busy_s;
  double split_busy_s = units > w->cols ? nd->piece_busy_s : busy_s;
  if (!(unit_flops > 0) ||
      split(nd, w, units, unit_flops, split_busy_s, &fpm) != 0) {
    on_caller(nd, w);
    return;
  }
  if (units > w->cols) {
    nd->piece_at = w->first ? 0 : nd->piece_at;
    piece_units(nd, nd->piece_at, w->cols, units);
    nd->piece_at += w->cols;
  }
  cut_columns(nd, w, units > w->cols ? nd->piece : nd->load, unit_flops);
  if (nd->simulated) {
    if (!nd->skip)
      w->run(w->user, 0, w->cols); /* the numbers; the time is virtual */
    for (size_t i = 0; i < nd->p; i++)
      nd->time[i] = nd->cols[i] > 0
                        ? nd->flops[i] /
                              mlsba__fpm_speed(nd->rate[i], (double)nd->load[i])
                        : 0;
    for (size_t i = 0; busy_s > 0 && i < nd->p; i++)
      if (nd->panel_core[i] && nd->cols[i] > 0)
        nd->time[i] += busy_s;
  } else if (run_real(nd, w) != 0) {
    /* The columns are right (run_real updated what was left); a step
     * whose times cannot be trusted teaches nothing. */
    nd->steps += !w->solve && starts_step(w);
    return;
  }
  account(nd, w, fpm, busy_s);
}

unsigned mlsba__mpi_dfac_threads(const mlsba__mpi_dfac_t *f) {
  return f->node && f->node->ex ? mlsba__solve_threads(f->node->ex) : 1;
}

void mlsba__mpi_dfac_beside(const mlsba__mpi_dfac_t *f, int on) {
  if (f->node != NULL && f->node->simulated)
    f->node->beside = on;
}

void mlsba__mpi_dfac_progress(const mlsba__mpi_dfac_t *f, int (*fn)(void *),
                              void *user) {
  if (f->node != NULL && f->node->simulated) {
    f->node->progress = fn;
    f->node->progress_user = user;
  }
}

/* ---- the other compute ----------------------------------------------------
 */

/* t seconds of the other compute on the simulated clock. */
static void other(mlsba__mpi_dfac_node_t *nd, double t) {
  nd->other_s += t;
  if (nd->beside)
    nd->beside_s += t;
  mlsba__mpi_spend(t);
}

void mlsba__mpi_dfac_charge(const mlsba__mpi_dfac_t *f, double flops,
                            double rows) {
  mlsba__mpi_dfac_node_t *nd = f->node;
  if (nd == NULL || !nd->simulated || !(flops > 0))
    return;
  /* The profile's load: blocks of nb x nb updated, here the rows x nb
   * the operation sweeps, one block at least (its smallest point). The
   * node's panel cores share the rows, a block each at least (the rows
   * of a real panel split between BLIS's threads). */
  double load = rows / (double)f->nb, used = (double)nd->panel_cores;
  if (load < used)
    used = load > 1 ? floor(load) : 1;
  double rate = used *
                mlsba__fpm_speed(mlsba_platform_device_model(nd->pl, nd->core),
                                 load / used > 1 ? load / used : 1) *
                nd->unit_ref;
  other(nd, flops / rate);
}

void mlsba__mpi_dfac_charge_copy(const mlsba__mpi_dfac_t *f, double elements) {
  mlsba__mpi_dfac_node_t *nd = f->node;
  if (nd == NULL || !nd->simulated || !(elements > 0))
    return;
  /* The node file's host memory where it gives one (a node with no core
   * among its devices still copies in its host's memory, not on its
   * accelerator's ramp); else two flops an element on a panel core. */
  if (nd->pl->memory.bandwidth > 0)
    other(nd, nd->pl->memory.latency +
                  elements * (double)f->es / nd->pl->memory.bandwidth);
  else
    mlsba__mpi_dfac_charge(f, 2 * elements, 0);
}
