/* Warm start and saving: the models saved for a load (store.c's format)
 * seed the routine, and what it learned is saved back, with the runs
 * behind each point. The left-out decisions saved beside them are the
 * sharing check's (sharing.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/atomic_file.h"
#include "../core/error.h"
#include "../platform/platform.h"
#include "balance.h"
#include "store.h"

/* Seeds the measurements of a device from a stored model, with the runs
 * and spread saved with each point. */
static void seed_from(mlsba__measured_t *m, const mlsba_model_t *stored,
                      const unsigned *runs, const double *sd) {
  m->n = 0;
  for (size_t i = 0;
       i < mlsba_model_num_points(stored) && i < MLSBA__MAX_POINTS; i++) {
    mlsba_model_get_point(stored, i, &m->x[i], &m->speed[i]);
    m->count[i] = runs[i] ? runs[i] : 1;
    m->m2[i] = sd[i] * sd[i] * (m->count[i] - 1);
    m->n++;
  }
}

/* Saves a device's own measurements (not its kind's pool): the points
 * sorted by load, with the runs and spread behind each. */
static int save_measured(const mlsba__measured_t *m, int64_t max_load,
                         const char *path, const char *key) {
  unsigned runs[MLSBA__MAX_POINTS];
  double sd[MLSBA__MAX_POINTS];
  mlsba_model_t *own = NULL;
  int err = mlsba_model_create(&own);
  if (!err && (err = mlsba__measured_to_model(m, own)) == 0)
    err = mlsba_model_set_max_load(own, max_load);
  size_t n = err ? 0 : mlsba_model_num_points(own);
  for (size_t i = 0; i < n && i < MLSBA__MAX_POINTS; i++) {
    double x;
    mlsba_model_get_point(own, i, &x, NULL);
    runs[i] = 1;
    sd[i] = 0;
    for (size_t k = 0; k < m->n; k++) {
      if (m->x[k] == x) {
        runs[i] = m->count[k];
        sd[i] = m->count[k] > 1 ? sqrt(m->m2[k] / (m->count[k] - 1)) : 0;
      }
    }
  }
  if (!err)
    err = mlsba__model_save_stats(own, path, key, runs, sd);
  mlsba_model_destroy(own);
  return err;
}

/* Where a device's model lives, and the key that says what it is for:
 * host, device identity and driver, kernel, and the load's shape (for
 * GEMM the precision and the dimensions that are not partitioned). */
int mlsba__bal_model_file(const mlsba_executor_t *ex, size_t j,
                          const mlsba_load_t *w, const char *dir, char *path,
                          size_t plen, char *key, size_t klen) {
  const mlsba__platform_device_t *d = &ex->pl->dev[j];
  const mlsba__device_t *dev = &ex->opened[j];
  char host[128] = "unknown";
  gethostname(host, sizeof host - 1);
  char ident[384];
  dev->ops->ident(dev, d->model_name, d->driver, ident, sizeof ident);
  char after[sizeof w->tag + 1];
  snprintf(after, sizeof after, ".%s", w->tag);
  int e = mlsba__model_file_path(path, plen, dir, "", d->name, after);
  if (e)
    return e;
  int b = snprintf(key, klen, "host=%s device=%s [%s] kernel=%s%s%s", host,
                   d->name, ident, w->name, w->shape[0] ? " " : "", w->shape);
  for (char *c = key; *c; c++)
    if (*c == '\n')
      *c = ' ';
  return b < 0 || (size_t)b >= klen
             ? mlsba__fail(MLSBA_ERANGE, "%s: model key too long", dir)
             : 0;
}

/* The model folder, before any run: created when only it is missing, as
 * the tools do with --models DIR (its parent must exist, so a typo in a
 * path makes no tree of folders); refused when it cannot be a folder. A
 * folder that cannot be written is kept: its models still start the
 * routine warm, and the save says it failed. */
static int model_dir_ready(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0)
    return S_ISDIR(st.st_mode)
               ? 0
               : mlsba__fail(MLSBA_EIO, "model_dir '%s': not a folder", dir);
  if (errno == ENOENT && mkdir(dir, 0777) == 0)
    return 0;
  return mlsba__fail(MLSBA_EIO, "model_dir '%s': cannot create it: %s", dir,
                     errno == ENOENT ? "its parent folder does not exist"
                                     : strerror(errno));
}

/* Seeds the models from the files saved for this load; true when every
 * device in use has one. */
int mlsba__bal_load_stored(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                           int *all) {
  char path[1024], key[1024];
  size_t warm = 0, used = 0;
  int err = 0;
  if (C->o.model_dir && (err = model_dir_ready(C->o.model_dir)) != 0)
    return err;
  /* Devices a run before found not worth keeping stay out, for a while. */
  if ((err = mlsba__bal_sharing_take_saved(C, r)) != 0)
    return err;
  for (size_t j = 0; !err && C->o.model_dir && j < C->p; j++) {
    if (!C->dev.use[j])
      continue;
    used++;
    mlsba_model_t *stored = NULL;
    unsigned runs[MLSBA__MAX_POINTS];
    double sd[MLSBA__MAX_POINTS];
    if (mlsba__bal_model_file(C->ex, j, C->w, C->o.model_dir, path, sizeof path,
                              key, sizeof key) != 0)
      continue;
    int e = mlsba__model_load_stats(path, key, &stored, runs, sd,
                                    MLSBA__MAX_POINTS);
    if (e == 0) {
      seed_from(&C->dev.measured[j], stored, runs, sd);
      mlsba_model_destroy(stored);
      C->dev.warm[j] = MLSBA__WARM_SAVED;
      warm++;
    } else if (e != MLSBA_EIO) {
      r->ignored++; /* corrupt, foreign or of another version */
      mlsba__bal_log(C, "model file ignored: %s", mlsba_last_error());
    }
  }
  r->warm = (unsigned)warm;
  *all = used > 0 && warm == used;
  return err || warm == 0 ? err : mlsba__bal_rebuild_models(C, r);
}

/* Saves what was learned; a failed save is reported, the result stands. */
void mlsba__bal_save_models(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r) {
  char path[1024], key[1024];
  for (size_t j = 0; C->o.model_dir && j < C->p; j++) {
    /* The decision of a check, either way (sharing.c). */
    int e = mlsba__bal_sharing_save(C, r, j);
    int out = C->sharing.left[j] &&
              C->dev.measured[j].n > 0; /* left out, runs kept */
    if (!e &&
        ((C->dev.use[j] && mlsba_model_num_points(r->models[j]) > 0) || out)) {
      e = mlsba__bal_model_file(C->ex, j, C->w, C->o.model_dir, path,
                                sizeof path, key, sizeof key);
      if (!e)
        e = save_measured(&C->dev.measured[j], C->dev.max[j], path, key);
    }
    if (e && !r->save_error) {
      r->save_error = e;
      mlsba__bal_log(C, "models not saved in '%s': %s", C->o.model_dir,
                     mlsba_last_error());
    }
  }
}

int mlsba_model_load_ex(const char *path, const char *key,
                        mlsba_model_t **model, unsigned *runs, double *sd,
                        size_t room) {
  if ((runs == NULL || sd == NULL) && room > 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_model_load_ex: runs and sd NULL with room %zu",
                       room);
  return mlsba__model_load_stats(path, key, model, runs, sd, room);
}

int mlsba_model_load_saved(mlsba_executor_t *ex, size_t device,
                           const mlsba_load_t *load, const char *model_dir,
                           mlsba_model_t **model, char *path,
                           size_t path_size) {
  if (ex == NULL || load == NULL || model == NULL || model_dir == NULL ||
      device >= ex->pl->ndev || (path == NULL && path_size > 0))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_model_load_saved: NULL argument or no device "
                       "%zu",
                       device);
  char file[1024], key[1024];
  int err = mlsba__bal_model_file(ex, device, load, model_dir, file,
                                  sizeof file, key, sizeof key);
  if (path_size > 0)
    snprintf(path, path_size, "%s", err ? "" : file);
  return err ? err : mlsba_model_load(file, key, model);
}
