/* One rank's devices, through libmlsba's public API: the platform file,
 * an executor, and the node kernel C' += A_(b) B_(b) as an application
 * load whose units are the columns of C' (kernel.h: BLIS with beta = 1 on
 * a core, CLBlast on an OpenCL device).
 *
 * An OpenCL device keeps its slice of C' in its memory across the steps
 * when it fits (kernel_opencl.c), so C' on the host is not current while
 * slices are out: the node places them before the first step of a
 * distribution (a run of its own, outside the step's time) and gives them
 * back (mlsba__mpi_node_flush) before the columns move to other devices,
 * before the operands change, and when the product or the node ends.
 *
 * Simulated devices in a node's platform give their speed in b x b blocks
 * of C' updated per second, their load and max_load in such blocks (one
 * step updates every block of C' once). A column of a bm-tall C' is
 * bm / b^2 blocks, so for every shape the node runs a copy of its platform
 * whose profiles are rescaled to columns: the device then takes the
 * virtual time its profile gives for the blocks it updates. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/atomic_file.h"
#include "../core/error.h"
#include "../platform/binding.h"
#include "../platform/platform.h"
#ifdef MLSBA_HAVE_OPENCL
#include "mlsba/opencl.h"
#endif
#include "internal.h"
#include "kernel.h"

struct mlsba__mpi_node {
  char path[512];
  /* The caller's model_dir ("" without one) and this rank's own folder
   * in it, where its node's balancing keeps its device models. */
  char model_root[512];
  char model_dir[600];
  mlsba_platform_t *file; /* as loaded, for names, types and checks */
  json_t *json;           /* the file's JSON, simulated nodes only */
  int simulated;
  /* Simulated without noise, faults or slow-downs: every step with the
   * same distribution takes the same virtual time, so one run stands
   * for all N/b (a thousand simulated ranks need not start a thousand
   * executor runs per step). */
  int repeatable;
  int have_step; /* time[] holds the run of the current distribution */
  size_t p;
  mlsba_mpi_node_algo_t node_algo;
  int keep_shared;
  double eps;
  unsigned max_iter;
  /* What depends on the shape: the kernel's operands among it. */
  mlsba__mpi_kernel_t k;
  mlsba_platform_t *scaled; /* simulated nodes: profiles in columns */
  mlsba_executor_t *ex;
  mlsba_load_t *load;
  int accelerators;       /* devices with memory of their own (OpenCL), which
                             may keep slices of C' */
  int placed;             /* slices of C' may be out for units on load */
  int64_t bal_bm, bal_bn; /* the shape units was balanced for */
  int64_t *units;         /* the balanced columns per device */
  double *time;           /* the last run's device times */
  double *total;          /* device times summed over steps */
};

/* The whole platform file, read once through the checked opener (a
 * regular file only: a FIFO is refused, not waited on); the platform and
 * a simulated node's JSON are both parsed from this one text, so a file
 * replaced meanwhile cannot make them disagree. NUL-terminated. */
static int read_platform_text(const char *path, char **text) {
  FILE *f;
  int err = mlsba__open_regular(path, &f);
  if (err)
    return err;
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  for (size_t got = 1; buf != NULL && got > 0;) {
    if (len + 1 == cap) {
      char *more = realloc(buf, cap *= 2);
      if (more == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = more;
    }
    got = fread(buf + len, 1, cap - 1 - len, f);
    len += got;
  }
  int read_error = ferror(f);
  fclose(f);
  if (buf == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  buf[len] = '\0';
  if (read_error || strlen(buf) != len) {
    free(buf);
    return mlsba__fail(read_error ? MLSBA_EIO : MLSBA_EFORMAT, "%s: %s", path,
                       read_error ? "read error" : "contains a NUL byte");
  }
  *text = buf;
  return 0;
}

/* The rank's own folder of models in model_root. A device model is named
 * by its device ("core0"), and the ranks of one host may name the same
 * device (two ranks sharing a core, or "auto" on every rank): in one
 * folder they would read and overwrite each other's models, each rank's
 * fitted to a share of the core the other does not get. So every rank
 * keeps its own, in a folder named by its place on the host and a hash of
 * the host's name and its platform path: the same rank of the same launch
 * finds its models again in the next job, and no other rank touches
 * them. */
static void own_model_dir(mlsba__mpi_node_t *nd, int local_rank) {
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0)
    host[0] = '\0';
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
  for (const char *s = host; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  h = (h ^ 0xffu) * 0x100000001b3ULL; /* "ab" + "c" is not "a" + "bc" */
  for (const char *s = nd->path; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  snprintf(nd->model_dir, sizeof nd->model_dir, "%s/node-l%d-%016llx",
           nd->model_root, local_rank, (unsigned long long)h);
}

int mlsba__mpi_node_open(const char *path, const mlsba_mpi_multiply_opts_t *o,
                         mlsba__mpi_node_t **out) {
  int local_rank, local_size;
  mlsba__binding_local_rank(&local_rank, &local_size);
  return mlsba__mpi_node_open_at(path, local_rank, local_size, o, out);
}

int mlsba__mpi_node_open_at(const char *path, int local_rank, int local_size,
                            const mlsba_mpi_multiply_opts_t *o,
                            mlsba__mpi_node_t **out) {
  *out = NULL;
  mlsba__mpi_node_t *nd = calloc(1, sizeof *nd);
  if (nd == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  snprintf(nd->path, sizeof nd->path, "%s", path);
  if (o->model_dir != NULL &&
      snprintf(nd->model_root, sizeof nd->model_root, "%s", o->model_dir) >=
          (int)sizeof nd->model_root) {
    free(nd);
    return mlsba__fail(MLSBA_EINVAL, "model_dir is longer than %zu bytes",
                       sizeof nd->model_root - 1);
  }
  if (o->model_dir != NULL)
    own_model_dir(nd, local_rank);
  nd->k.b = nd->k.kb = o->block;
  nd->k.prec = o->precision;
  nd->node_algo = o->node_algorithm;
  nd->keep_shared = o->keep_shared;
  nd->eps = o->eps;
  nd->max_iter = o->max_iter;
  /* A file is read once: the platform and a simulated node's JSON are
   * both parsed from that one text. */
  char *text = NULL;
  int err = 0;
  if (strcmp(path, "auto") == 0)
    err = mlsba__mpi_platform_open(path, local_rank, local_size, &nd->file);
  else if ((err = read_platform_text(path, &text)) == 0)
    err = mlsba_platform_parse(text, path, &nd->file);
  if (err)
    goto fail;
  nd->p = mlsba_platform_num_devices(nd->file);
  size_t sims = 0;
  for (size_t i = 0; i < nd->p; i++) {
    unsigned roles = mlsba__platform_device_roles(nd->file, i);
    sims += (roles & MLSBA__ROLE_VIRTUAL) != 0;
    nd->accelerators += (roles & MLSBA__ROLE_OWN_MEMORY) != 0;
  }
  nd->simulated = sims == nd->p;
  if (sims != 0 && sims != nd->p) {
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: mixes simulated and real devices; a node runs "
                      "either in virtual time or in wall-clock time",
                      path);
    goto fail;
  }
  if (!nd->simulated && mlsba__mpi_is_smpi()) {
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: has real devices; under SimGrid every device "
                      "must be simulated",
                      path);
    goto fail;
  }
  nd->k.platform = nd->file;
  nd->k.warmed = calloc(nd->p, sizeof *nd->k.warmed);
  nd->units = calloc(nd->p, sizeof *nd->units);
  nd->time = calloc(nd->p, sizeof *nd->time);
  nd->total = calloc(nd->p, sizeof *nd->total);
  if (!nd->k.warmed || !nd->units || !nd->time || !nd->total) {
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
    goto fail;
  }
  if (nd->simulated && text != NULL) { /* "auto" has no simulated device */
    json_error_t je;
    nd->json = json_loads(text, 0, &je);
    if (nd->json == NULL) { /* the platform parsed this text already */
      err = mlsba__fail(MLSBA_EFORMAT, "%s: %s", path, je.text);
      goto fail;
    }
    nd->repeatable = 1;
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(nd->json, "devices"), i, d) {
      json_t *noise = json_object_get(d, "noise");
      if ((json_is_number(noise) && json_number_value(noise) > 0) ||
          json_object_get(d, "fail_at") || json_object_get(d, "slow_at"))
        nd->repeatable = 0;
    }
  } else if ((err = mlsba_executor_create(nd->file, &nd->ex)) != 0) {
    goto fail;
  }
  free(text);
  *out = nd;
  return 0;
fail:
  free(text);
  mlsba__mpi_node_close(nd);
  return err;
}

void mlsba__mpi_node_close(mlsba__mpi_node_t *nd) {
  if (nd == NULL)
    return;
  mlsba__mpi_node_flush(nd); /* nobody is left to hear of an error */
  mlsba_load_destroy(nd->load);
  mlsba_executor_destroy(nd->ex);
  mlsba_platform_destroy(nd->scaled);
  mlsba_platform_destroy(nd->file);
  json_decref(nd->json);
  free(nd->k.warmed);
  free(nd->units);
  free(nd->time);
  free(nd->total);
  free(nd);
}

int64_t mlsba__mpi_node_capacity(const mlsba__mpi_node_t *nd, int64_t nb) {
  if (!nd->simulated)
    return -1;
  int64_t sum = 0;
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(nd->json, "devices"), i, d) {
    json_t *max = json_object_get(d, "max_load");
    if (!json_is_integer(max))
      return -1; /* a device without a limit */
    /* A device takes whole columns, floor(max_load / column) of them: up
     * to one column (at most nb / b blocks) less than its max_load. */
    int64_t column = (nb + nd->k.b - 1) / nd->k.b;
    int64_t blocks = (int64_t)json_integer_value(max) - column;
    sum += blocks > 0 ? blocks : 0;
  }
  return sum;
}

int mlsba__mpi_node_network(const mlsba__mpi_node_t *nd, mlsba_link_t *link) {
  return mlsba_platform_network(nd->file, link);
}

int mlsba__mpi_node_simulated(const mlsba__mpi_node_t *nd) {
  return nd->simulated;
}

size_t mlsba__mpi_node_num_devices(const mlsba__mpi_node_t *nd) {
  return nd->p;
}

int mlsba__mpi_node_cores(const mlsba__mpi_node_t *nd, int *cores, size_t n) {
  if (nd->simulated || nd->accelerators || n < nd->p)
    return -1;
  for (size_t i = 0; i < nd->p; i++) {
    mlsba_device_info_t info;
    if (mlsba_platform_device_type(nd->file, i) != MLSBA_DEVICE_CPU ||
        mlsba_platform_device_info(nd->file, i, &info) != 0 || info.core < 0)
      return -1;
    cores[i] = info.core;
  }
  return 0;
}

const char *mlsba__mpi_node_device_name(const mlsba__mpi_node_t *nd, size_t i) {
  return mlsba_platform_device_name(nd->file, i);
}

/* The node's platform with every simulated profile turned from blocks
 * into columns of a bm-tall C': x columns are x bm / b^2 blocks. */
static int scaled_platform(mlsba__mpi_node_t *nd, mlsba_platform_t **out) {
  double per_column = (double)nd->k.bm / ((double)nd->k.b * (double)nd->k.b);
  json_t *copy = json_deep_copy(nd->json);
  if (copy == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(copy, "devices"), i, d) {
    size_t k;
    json_t *pt;
    json_array_foreach(json_object_get(d, "speed"), k, pt) {
      double x = json_number_value(json_array_get(pt, 0));
      double s = json_number_value(json_array_get(pt, 1));
      json_array_set_new(pt, 0, json_real(x / per_column));
      json_array_set_new(pt, 1, json_real(s / per_column));
    }
    /* A limit of more columns than int64 counts is no limit (the cast
     * of such a double is undefined). */
    json_t *max = json_object_get(d, "max_load");
    double cols = json_is_number(max) ? json_number_value(max) / per_column : 0;
    if (json_is_number(max))
      json_object_set_new(d, "max_load",
                          json_integer(cols < MLSBA_LOAD_MAX
                                           ? (json_int_t)cols
                                           : (json_int_t)MLSBA_LOAD_MAX));
  }
  char *text = json_dumps(copy, JSON_COMPACT);
  json_decref(copy);
  if (text == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  int err = mlsba_platform_parse(text, nd->path, out);
  free(text);
  /* The file was valid in blocks (it was loaded): only the rescaling can
   * have left a bound, and the message says so in the file's terms. */
  char why[400];
  snprintf(why, sizeof why, "%s", mlsba_last_error());
  if (err)
    err = mlsba__fail(err,
                      "%s: in columns of this rank's %lld-tall C' (a column "
                      "is %g blocks of %lld x %lld), a speed point leaves "
                      "the bounds of a model: %s",
                      nd->path, (long long)nd->k.bm, per_column,
                      (long long)nd->k.b, (long long)nd->k.b, why);
  return err;
}

/* A run of the load with the balanced distribution that moves slices of
 * C' and computes nothing. */
static int move_slices(mlsba__mpi_node_t *nd, mlsba__mpi_run_t run) {
  nd->k.run = run;
  int err = mlsba_executor_run(nd->ex, nd->load, nd->units, MLSBA_DRIVE_SHARED,
                               nd->time, NULL);
  nd->k.run = MLSBA__MPI_RUN_STEP;
  return err;
}

int mlsba__mpi_node_flush(mlsba__mpi_node_t *nd) {
  if (!nd->placed)
    return 0;
  /* Whether or not it worked, the slices are no longer the node's: C' is
   * the caller's to free after this. */
  nd->placed = 0;
  return move_slices(nd, MLSBA__MPI_RUN_FLUSH);
}

int mlsba__mpi_node_shape(mlsba__mpi_node_t *nd, int64_t bm, int64_t bn,
                          void *a, void *b, void *c) {
  int err = mlsba__mpi_node_flush(nd); /* into the old C', still valid */
  if (err)
    return err;
  /* A simulated node's profiles depend on bm only: the same height keeps
   * its executor, and with it its devices' state (a slow-down that
   * starts at a device's n-th share counts the shares of every run). */
  int rescale = nd->simulated && (nd->ex == NULL || bm != nd->k.bm);
  nd->k.bm = bm;
  nd->k.bn = bn;
  nd->k.kb = nd->k.b;
  nd->k.a = a;
  nd->k.bp = b;
  nd->k.c = c;
  mlsba_load_destroy(nd->load);
  nd->load = NULL;
  if (rescale) {
    mlsba_executor_destroy(nd->ex);
    nd->ex = NULL;
    mlsba_platform_destroy(nd->scaled);
    nd->scaled = NULL;
    if ((err = scaled_platform(nd, &nd->scaled)) != 0 ||
        (err = mlsba_executor_create(nd->scaled, &nd->ex)) != 0)
      return err;
  }
  char shape[96];
  snprintf(shape, sizeof shape, "bm=%lld b=%lld %s", (long long)bm,
           (long long)nd->k.b,
           nd->k.prec == MLSBA_PRECISION_DOUBLE ? "double" : "single");
  if ((err = mlsba_load_create("inpa-step", bn, &nd->load)) != 0 ||
      (err = mlsba_load_set_cpu(nd->load, mlsba__mpi_kernel_cpu, &nd->k)) !=
          0 ||
      (err = mlsba_load_set_shape(nd->load, shape)) != 0)
    return err;
#ifdef MLSBA_HAVE_OPENCL
  if ((err = mlsba_load_set_opencl(nd->load, mlsba__mpi_kernel_opencl_ops(),
                                   &nd->k)) != 0)
    return err;
#endif
  memset(nd->total, 0, nd->p * sizeof *nd->total);
  nd->have_step = 0;
  return 0;
}

/* Whether units were balanced for the current shape. */
static int balanced(const mlsba__mpi_node_t *nd) {
  return nd->bal_bm == nd->k.bm && nd->bal_bn == nd->k.bn;
}

int mlsba__mpi_node_balance(mlsba__mpi_node_t *nd, mlsba_mpi_algo_t algo,
                            double *step_time) {
  /* The columns are about to move between devices. */
  int err = mlsba__mpi_node_flush(nd);
  if (err)
    return err;
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.eps = nd->eps;
  o.max_iter = nd->max_iter;
  o.sharing = nd->keep_shared ? MLSBA_SHARING_KEEP : MLSBA_SHARING_CHECK;
  o.grouping = nd->node_algo == MLSBA_MPI_NODE_IDPA ? MLSBA_GROUPING_FLAT
                                                    : MLSBA_GROUPING_PLATFORM;
  /* Each baseline of the paper replaces the inter-device step too. */
  switch (algo) {
  case MLSBA_MPI_MULTIPLE_CPM:
    o.algorithm = MLSBA_ALGO_MULTIPLE_CPM;
    break;
  case MLSBA_MPI_SINGLE_CPM:
    o.algorithm = MLSBA_ALGO_SINGLE_CPM;
    break;
  case MLSBA_MPI_HOMOGENEOUS:
    o.algorithm = MLSBA_ALGO_HOMOGENEOUS;
    break;
  default:
    o.algorithm = nd->node_algo == MLSBA_MPI_NODE_IDPA ? MLSBA_ALGO_SLBA
                                                       : MLSBA_ALGO_MLSBA;
  }
  o.model_dir = nd->model_dir[0] ? nd->model_dir : NULL;
  /* The rank's folder is made by the balancing, one level only: its
   * parent, the caller's model_dir, first (the balancing names the
   * problem when it cannot be made). */
  if (o.model_dir != NULL)
    (void)mkdir(nd->model_root, 0777);
  mlsba_balance_result_t r;
  memset(&r, 0, sizeof r);
  nd->k.kb = nd->k.b; /* a step's work: a full panel */
  nd->k.run = MLSBA__MPI_RUN_BALANCE;
  nd->k.overwrite = 0;
  err = mlsba_balance_load(nd->ex, nd->load, &o, &r);
  nd->k.run = MLSBA__MPI_RUN_STEP;
  if (!err) {
    nd->bal_bm = nd->k.bm;
    nd->bal_bn = nd->k.bn;
    memcpy(nd->units, r.load, nd->p * sizeof *nd->units);
    memcpy(nd->time, r.time, nd->p * sizeof *nd->time);
    *step_time = r.makespan;
  }
  mlsba_balance_result_free(&r);
  return err;
}

int mlsba__mpi_node_take_whole(mlsba__mpi_node_t *nd) {
  if (nd->p != 1 || nd->accelerators || nd->load == NULL)
    return 0;
  nd->units[0] = nd->k.bn;
  nd->time[0] = 0;
  nd->bal_bm = nd->k.bm;
  nd->bal_bn = nd->k.bn;
  return 1;
}

void mlsba__mpi_node_panels(mlsba__mpi_node_t *nd, const void *a, const void *b,
                            int64_t kb) {
  nd->k.a = a;
  nd->k.bp = b;
  /* A simulated node's repeated step stands for a full panel: its caller
   * scales the time, and no device sees the narrower one. */
  nd->k.kb = kb > 0 && kb < nd->k.b ? kb : nd->k.b;
}

void mlsba__mpi_node_whole(mlsba__mpi_node_t *nd, const void *a, const void *b,
                           int64_t k) {
  nd->k.a = a;
  nd->k.bp = b;
  nd->k.kb = k;
}

int mlsba__mpi_node_accelerators(const mlsba__mpi_node_t *nd) {
  return nd->accelerators;
}

int mlsba__mpi_node_can_overwrite(const mlsba__mpi_node_t *nd) {
  return !nd->accelerators && !nd->simulated;
}

void mlsba__mpi_node_overwrite_next(mlsba__mpi_node_t *nd, int overwrite) {
  nd->k.overwrite = overwrite && mlsba__mpi_node_can_overwrite(nd);
}

int mlsba__mpi_node_step(mlsba__mpi_node_t *nd, double *step_time) {
  /* Balancing here would run its trial distributions on the caller's C'
   * and leave their sums in it: a step must follow a balancing of its
   * shape (the product runs the rectangle INPA ran last). */
  if (!balanced(nd))
    return mlsba__fail(MLSBA_EINVAL,
                       "node: a step of %lld x %lld before its devices were "
                       "balanced for that shape",
                       (long long)nd->k.bm, (long long)nd->k.bn);
  int err = 0;
  /* The slices of C' go out before the timed run, so that its time is a
   * step's (the product's clock sees the placement: it happens once). */
  if (nd->accelerators && !nd->placed) {
    nd->placed = 1;
    if ((err = move_slices(nd, MLSBA__MPI_RUN_PLACE)) != 0)
      return err;
  }
  if (!(nd->repeatable && nd->have_step)) {
    err = mlsba_executor_run(nd->ex, nd->load, nd->units, MLSBA_DRIVE_SHARED,
                             nd->time, NULL);
    nd->k.overwrite = 0; /* the steps after add to C' */
    if (err)
      return err;
    nd->have_step = 1;
  }
  double mk = 0;
  for (size_t i = 0; i < nd->p; i++) {
    nd->total[i] += nd->time[i];
    if (nd->units[i] > 0 && nd->time[i] > mk)
      mk = nd->time[i];
  }
  *step_time = mk;
  return 0;
}

void mlsba__mpi_node_device(const mlsba__mpi_node_t *nd, size_t i,
                            int64_t *load, double *time) {
  *load = nd->units[i];
  *time = nd->total[i];
}
