/* The devices' models of the update: flop rates by units. A simulated
 * device's comes from its profile; a real device's from what its shares
 * took, step by step, starting from the models saved in opts.model_dir
 * (or the per-user cache), where they are saved back. The folder and
 * every file name are settled before the matrix is touched; after, a
 * problem with them is a warning, never an error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../balance/store.h"
#include "driver.h"

/* A simulated device's rate: its profile in units per second times the
 * flops of a unit of the profile. */
static int sim_rate(const mlsba_model_t *profile, double unit,
                    mlsba_model_t **out) {
  int err = mlsba_model_create(out);
  for (size_t k = 0; !err && k < mlsba_model_num_points(profile); k++) {
    double x, s;
    mlsba_model_get_point(profile, k, &x, &s);
    err = mlsba_model_set_point(*out, x, s * unit);
  }
  if (!err)
    err = mlsba_model_set_max_load(*out, mlsba_model_max_load(profile));
  return err;
}

/* ---- the folder of saved models (real devices) ------------------------ */

static const char *precision_name(const mlsba__factor_problem_t *P) {
  return P->prec == MLSBA_PRECISION_DOUBLE ? "double" : "single";
}

static void model_key(const mlsba__factor_ctx_t *C, size_t i, char *buf,
                      size_t size) {
  const mlsba__factor_problem_t *P = C->P;
  const mlsba_platform_t *pl = C->cfg.pl;
  char ident[256] = "";
  const mlsba__device_t *d = &C->cfg.ex->opened[i];
  d->ops->ident(d, pl->dev[i].model_name, pl->dev[i].driver, ident,
                sizeof ident);
  snprintf(buf, size,
           "factor %s update, flops per second by units, %s, "
           "nb=%lld, %s",
           P->ops->name, precision_name(P), (long long)P->nb, ident);
}

/* One folder made unless it is there (its parent must be). */
static int make_folder(const char *dir, mode_t mode) {
  return mkdir(dir, mode) == 0 || errno == EEXIST ? 0 : -1;
}

/* The per-user cache's folder of this host's models, as mlsba-bench
 * names it: $MLSBA_CACHE_DIR/HOST ("none": no cache), else
 * $XDG_CACHE_HOME/mlsba/HOST (an absolute one), else
 * ~/.cache/mlsba/HOST, the folders made as far as they may be (~/.cache
 * is the user's: 0700). 0 when there is none. */
static int cache_folder(char *buf, size_t size) {
  const char *env = getenv("MLSBA_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char root[4096];
  int w;
  if (env && strcmp(env, "none") == 0)
    return 0;
  if (env && *env) {
    w = snprintf(root, sizeof root, "%s", env);
  } else if (xdg && xdg[0] == '/') {
    w = snprintf(root, sizeof root, "%s/mlsba", xdg);
  } else if (home && home[0] == '/') {
    snprintf(root, sizeof root, "%s/.cache", home);
    make_folder(root, 0700);
    w = snprintf(root, sizeof root, "%s/.cache/mlsba", home);
  } else {
    return 0;
  }
  if (w < 0 || (size_t)w >= sizeof root)
    return 0;
  make_folder(root, 0755);
  /* The host as one file-name component, as the tools spell it. */
  char host[160] = "";
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
    snprintf(host, sizeof host, "localhost");
  for (char *c = host; *c; c++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                "0123456789._-",
                *c) ||
        (c == host && *c == '.'))
      *c = '_';
  w = snprintf(buf, size, "%s/%s", root, host);
  return w > 0 && (size_t)w < size && make_folder(buf, 0755) == 0;
}

/* opts.model_dir before the matrix is touched: created when only it is
 * missing (its parent must exist, so a typo makes no tree of folders),
 * refused when it is not a folder or cannot be written, since the models
 * would otherwise be lost after the whole factorization. */
static int folder_ready(const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (errno != ENOENT || mkdir(dir, 0777) != 0)
      return mlsba__fail(MLSBA_EIO, "model_dir '%s': cannot create it: %s", dir,
                         errno == ENOENT ? "its parent folder does not exist"
                                         : strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    return mlsba__fail(MLSBA_EIO, "model_dir '%s': not a folder", dir);
  }
  if (access(dir, W_OK | X_OK) != 0)
    return mlsba__fail(MLSBA_EIO, "model_dir '%s': cannot write in it: %s", dir,
                       strerror(errno));
  return 0;
}

/* The folder, settled: opts.model_dir (its problems are errors), or the
 * cache (its problems are warnings, and it is then not used). */
static int open_folder(mlsba__factor_ctx_t *C) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  mlsba__factor_models_t *M = &C->models;
  if (c->virt || c->reproducible)
    return 0;
  if (c->o.model_dir) {
    int err = folder_ready(c->o.model_dir);
    if (err)
      return err;
    M->dir = c->o.model_dir;
    M->writable = 1;
    return 0;
  }
  if (!c->model_cache)
    return 0;
  char buf[4096];
  if (!cache_folder(buf, sizeof buf)) {
    const char *env = getenv("MLSBA_CACHE_DIR");
    if (!env || strcmp(env, "none") != 0)
      mlsba__factor_warn(C, "no model cache (no folder could be made for "
                            "it): the factorization starts cold");
    return 0;
  }
  if ((M->dir_buf = strdup(buf)) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  M->dir = M->dir_buf;
  M->cache = 1;
  M->writable = access(buf, W_OK | X_OK) == 0;
  return 0;
}

/* Each device's file in the folder, its name escaped as the balancer's
 * (mlsba__model_file_path); a name too long for one fails an explicit
 * folder, and keeps that device out of the cache. */
static int open_paths(mlsba__factor_ctx_t *C) {
  const mlsba__factor_problem_t *P = C->P;
  mlsba__factor_models_t *M = &C->models;
  if (M->dir == NULL)
    return 0;
  if ((M->path = calloc(C->cfg.p, sizeof *M->path)) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  char before[128], path[4096];
  snprintf(before, sizeof before, "%s-update-%s-nb%lld-", P->ops->name,
           precision_name(P), (long long)P->nb);
  for (size_t i = 0; i < C->cfg.p; i++) {
    if (!C->dev.active[i])
      continue;
    int err = mlsba__model_file_path(path, sizeof path, M->dir, before,
                                     C->cfg.pl->dev[i].name, "");
    if (err && !M->cache)
      return err;
    if (err)
      mlsba__factor_warn(C, "%s", mlsba_last_error());
    else if ((M->path[i] = strdup(path)) == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  }
  return 0;
}

/* A saved rate that no device has: below one flop per second, or above
 * 1e20 (a hundred exaflops). Within the models' bounds, such a rate
 * still turns into speeds outside them at some step (1e-30 flops per
 * second is 1e-36 units per second), and the split then fails with the
 * matrix half done. */
static int absurd(const mlsba_model_t *m) {
  for (size_t k = 0; k < mlsba_model_num_points(m); k++) {
    double x, rate;
    mlsba_model_get_point(m, k, &x, &rate);
    if (!(x >= 1) || !(rate >= 1) || !(rate <= 1e20))
      return 1;
  }
  return 0;
}

/* The saved models of the devices in use; a device without one (or with
 * one that cannot be used) starts cold. */
static void load_saved(mlsba__factor_ctx_t *C) {
  const mlsba__factor_models_t *M = &C->models;
  for (size_t i = 0; M->path && i < C->cfg.p; i++) {
    if (M->path[i] == NULL || access(M->path[i], F_OK) != 0)
      continue;
    char key[512];
    model_key(C, i, key, sizeof key);
    mlsba_model_t *m = NULL;
    if (mlsba_model_load(M->path[i], key, &m) != 0) {
      mlsba__factor_log(C, "model %s not used: %s", M->path[i],
                        mlsba_last_error());
    } else if (absurd(m)) {
      mlsba__factor_warn(C,
                         "model %s ignored: a rate outside 1 to 1e20 flops "
                         "per second",
                         M->path[i]);
      mlsba_model_destroy(m);
    } else {
      mlsba__factor_log(C, "%s starts warm: %zu points from %s",
                        C->cfg.pl->dev[i].name, mlsba_model_num_points(m),
                        M->path[i]);
      mlsba_model_destroy(C->models.rate[i]);
      C->models.rate[i] = m;
      C->models.saved[i] = 1;
    }
  }
}

/* What device i's model holds, for the log: "x units r GFLOPS, ...". */
static void describe(const mlsba_model_t *m, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < mlsba_model_num_points(m) && n < size; k++) {
    double x, rate;
    mlsba_model_get_point(m, k, &x, &rate);
    int w = snprintf(buf + n, size - n, "%s%.0f units %.3g GFLOPS",
                     k ? ", " : "", x, rate / 1e9);
    n += w > 0 ? (size_t)w : 0;
  }
}

void mlsba__factor_models_save(const mlsba__factor_ctx_t *C) {
  const mlsba__factor_models_t *M = &C->models;
  mlsba_model_t *const *rate = C->models.rate;
  for (size_t i = 0; i < C->cfg.p; i++) {
    if (C->cfg.virt || rate[i] == NULL ||
        mlsba_model_num_points(rate[i]) == 0 || C->models.seeded[i])
      continue; /* nothing measured */
    if (mlsba__factor_logging(C)) {
      char what[512];
      describe(rate[i], what, sizeof what);
      mlsba__factor_log(C, "learnt %s: %s", C->cfg.pl->dev[i].name, what);
    }
    if (M->path == NULL || M->path[i] == NULL)
      continue;
    if (!M->writable) {
      mlsba__factor_warn(C, "models not saved: cannot write in %s", M->dir);
      return;
    }
    char key[512];
    model_key(C, i, key, sizeof key);
    if (mlsba__model_save_cache(rate[i], M->path[i], key) != 0)
      mlsba__factor_warn(C, "model not saved: %s", mlsba_last_error());
    else
      mlsba__factor_log(C, "saved %s", M->path[i]);
  }
}

/* ---- a cold core's first guess ------------------------------------------
 * Without a model, a cold call's first update was split evenly, the
 * panel's core taking as many units as the others on top of the next
 * panel: it ended last, by more than the ends of the shares the cores
 * trade (sharing.c) can even out, and the next steps were split by one
 * point each learnt from that step. Cores are not unknown: they run the
 * same kernels (the cores' kernel choice is one per process), so a cold
 * core starts from another core's saved model where one was read, else
 * from the kernel choice's GFLOPS of one core on the update's class
 * (timed in this process, or read from its cache). With every core at
 * the same speed, the per-step split takes the panel's time into account
 * from the first update, as a warm call's does. The guess is only the
 * first step's: the core's first measured point replaces it (models.c,
 * mlsba__factor_learn), so what is learnt and saved is measured, as
 * before. Only the per-step split starts from it: the slices tune from
 * measured models, the constant ratio from them, as they did. */

/* The model a cold core starts from: a warm core's, else one point at
 * the kernel choice's rate; NULL (the core stays cold) when neither is
 * known. */
static mlsba_model_t *first_guess(const mlsba__factor_ctx_t *C,
                                  const char **from) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  mlsba_model_t *m = NULL;
  for (size_t i = 0; i < c->p; i++)
    if (C->dev.active[i] && mlsba__factor_is_core(c, i) && C->models.saved[i]) {
      *from = c->pl->dev[i].name;
      return mlsba_model_clone(C->models.rate[i], &m) == 0 ? m : NULL;
    }
  double gflops = 0;
  if (mlsba_cpu_class_kernels(C->P->prec, MLSBA_CPU_CLASS_UPDATE, NULL, NULL,
                              &gflops) != 0 ||
      !(gflops * 1e9 >= 1 && gflops * 1e9 <= 1e20))
    return NULL; /* forced kernels: not timed */
  *from = "the kernel choice (update class, one core)";
  if (mlsba_model_create(&m) != 0)
    return NULL;
  if (mlsba_model_set_point(m, 1, gflops * 1e9) != 0) {
    mlsba_model_destroy(m);
    return NULL;
  }
  return m;
}

static void seed_cold_cores(mlsba__factor_ctx_t *C) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  if (c->virt || c->reproducible || c->split != MLSBA_FACTOR_SPLIT_FPM ||
      c->tunes_slice)
    return;
  const char *from = NULL;
  mlsba_model_t *guess = NULL;
  for (size_t i = 0; i < c->p; i++) {
    if (!C->dev.active[i] || !mlsba__factor_is_core(c, i) ||
        C->models.saved[i] || mlsba_model_num_points(C->models.rate[i]) > 0)
      continue;
    if (guess == NULL && (guess = first_guess(C, &from)) == NULL)
      return;
    mlsba_model_t *m = NULL;
    if (mlsba_model_clone(guess, &m) != 0)
      break;
    mlsba_model_destroy(C->models.rate[i]);
    C->models.rate[i] = m;
    C->models.seeded[i] = 1;
    if (mlsba__factor_logging(C)) {
      double s = 0;
      mlsba_model_speed(m, 1, &s);
      mlsba__factor_log(C, "%s starts cold from %s: %.3g GFLOPS",
                        c->pl->dev[i].name, from, s / 1e9);
    }
  }
  mlsba_model_destroy(guess);
}

int mlsba__factor_models_open(mlsba__factor_ctx_t *C) {
  int err = 0;
  const mlsba__factor_cfg_t *c = &C->cfg;
  for (size_t i = 0; !err && i < c->p; i++)
    err = c->virt ? sim_rate(mlsba_platform_device_model(c->pl, i), c->unit_ref,
                             &C->models.rate[i])
                  : mlsba_model_create(&C->models.rate[i]);
  if (!err)
    err = open_folder(C);
  if (!err)
    err = open_paths(C);
  if (!err) {
    load_saved(C);
    seed_cold_cores(C);
  }
  /* How the call starts: each device in use warm from a saved model, or
   * cold, learning its model inside the call. */
  for (size_t i = 0; !err && !c->virt && !c->reproducible && i < c->p; i++)
    if (C->dev.active[i] && C->models.saved[i])
      C->R->models_warm++;
    else if (C->dev.active[i])
      C->R->models_cold++;
  return err;
}

int mlsba__factor_models_forget(mlsba__factor_ctx_t *C) {
  for (size_t i = 0; i < C->cfg.p; i++) {
    mlsba_model_t *m = NULL;
    int err = C->cfg.virt ? sim_rate(mlsba_platform_device_model(C->cfg.pl, i),
                                     C->cfg.unit_ref, &m)
                          : mlsba_model_create(&m);
    if (err)
      return err;
    int64_t cap = mlsba_model_max_load(C->models.rate[i]);
    if (!C->cfg.virt && cap >= 0)
      mlsba_model_set_max_load(m, cap);
    mlsba_model_destroy(C->models.rate[i]);
    C->models.rate[i] = m;
    C->models.saved[i] = 0;
    C->models.seeded[i] = 0;
  }
  return 0;
}

void mlsba__factor_models_close(mlsba__factor_ctx_t *C) {
  for (size_t i = 0; C->models.rate && i < C->cfg.p; i++)
    mlsba_model_destroy(C->models.rate[i]);
  for (size_t i = 0; C->models.path && i < C->cfg.p; i++)
    free(C->models.path[i]);
  free(C->models.path);
  free(C->models.dir_buf);
  free(C->models.rate);
  free(C->models.warm);
  free(C->models.saved);
  free(C->models.seeded);
}

/* ---- what a real step teaches ------------------------------------------ */

/* A measured point joins the one within a tenth of its load (their mean
 * at the older load): steps of nearby sizes follow each other, and one
 * noisy step on a shared machine would otherwise swing the next split.
 * Another process only ever makes a step slower: a rate far below the
 * point's counts a quarter (a 50 ms stall of one core at n = 4096 halved
 * its rate, and the mean then misled five further steps by 14-18%). */
void mlsba__factor_learn_point(mlsba_model_t *m, double x, double rate) {
  for (size_t k = 0; k < mlsba_model_num_points(m); k++) {
    double px, ps;
    mlsba_model_get_point(m, k, &px, &ps);
    if (px >= 0.9 * x && px <= 1.1 * x) {
      double w = rate < 0.75 * ps ? 0.25 : 0.5;
      mlsba_model_set_point(m, px, (1 - w) * ps + w * rate);
      return;
    }
  }
  mlsba_model_set_point(m, x, rate);
}

/* How far a device's first measured rate may be from its saved model's
 * before the model is taken for another machine's or another time's (a
 * model saved under load, a cache in a home shared between machines):
 * faster by more than STALE_FASTER (interference never makes a device
 * faster than it is, so a model that slow was measured while something
 * else ran), or slower by more than STALE_SLOWER (a stall of another
 * process halved one step's rate here; a third is more than a stall).
 * Merged point by point, such a model would keep its other loads' rates,
 * and those would go on deciding the device's share at those loads. */
#define STALE_FASTER 1.5
#define STALE_SLOWER 3.0

/* Device i's saved model, against its first measured rate at x units:
 * when the two disagree as above, the model is replaced by an empty one
 * (its cap kept) that the point then starts, and the log says so. Checked
 * once, at the first step that measures the device. */
static void check_saved(mlsba__factor_ctx_t *C, size_t i, double x,
                        double rate) {
  mlsba__factor_models_t *M = &C->models;
  M->saved[i] = 0;
  double predicted = 0;
  mlsba_model_t *fresh = NULL;
  if (mlsba_model_speed(M->rate[i], x, &predicted) != 0 || !(predicted > 0) ||
      (rate <= STALE_FASTER * predicted && rate * STALE_SLOWER >= predicted))
    return;
  if (mlsba_model_create(&fresh) != 0)
    return; /* out of memory: the point joins the old model instead */
  int64_t cap = mlsba_model_max_load(M->rate[i]);
  if (cap >= 0)
    mlsba_model_set_max_load(fresh, cap);
  mlsba_model_destroy(M->rate[i]);
  M->rate[i] = fresh;
  mlsba__factor_log(C,
                    "%s: the saved model is stale (step %zu: %.3g GFLOPS "
                    "predicted at %.0f units, %.3g measured): replaced by "
                    "what is measured from this step on",
                    C->cfg.pl->dev[i].name, C->step, predicted / 1e9, x,
                    rate / 1e9);
}

/* Device i's first guess replaced by an empty model (its cap kept),
 * which its first measured point then starts. */
static void drop_guess(mlsba__factor_ctx_t *C, size_t i) {
  mlsba__factor_models_t *M = &C->models;
  mlsba_model_t *fresh = NULL;
  if (mlsba_model_create(&fresh) != 0)
    return; /* out of memory: the point joins the guess instead */
  int64_t cap = mlsba_model_max_load(M->rate[i]);
  if (cap >= 0)
    mlsba_model_set_max_load(fresh, cap);
  mlsba_model_destroy(M->rate[i]);
  M->rate[i] = fresh;
  M->seeded[i] = 0;
}

/* Every device's point: its share's flops over its time (the panel's
 * time taken out of the core that factorized it). */
void mlsba__factor_learn(mlsba__factor_ctx_t *C,
                         const mlsba__factor_step_t *st) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  const int64_t *load = C->lay.load;
  /* An accelerator's first share compiles its kernels (CLBlast's, on first
   * use in the process) on the thread of its group's core: neither's
   * speed. A model that slow would give them nothing again, and nothing
   * would correct it, so that step teaches nothing. */
  int warming = 0;
  for (size_t i = 0; i < c->p; i++)
    if (load[i] > 0 && mlsba__factor_is_accel(c, i) && !C->models.warm[i])
      warming = C->models.warm[i] = 1;
  for (size_t i = 0; i < c->p && !warming; i++) {
    if (load[i] <= 0)
      continue;
    double t = C->scratch.time[i];
    if ((long)i == c->panel_dev && st->plan.lookahead)
      t -= st->panel_s;
    double rate = (double)load[i] * st->unit_flops / t;
    if (!(t > 0 && rate >= MLSBA_SPEED_MIN && rate <= MLSBA_SPEED_MAX))
      continue;
    if (C->models.saved[i])
      check_saved(C, i, (double)load[i], rate);
    if (C->models.seeded[i])
      drop_guess(C, i);
    mlsba__factor_learn_point(C->models.rate[i], (double)load[i], rate);
  }
}

/* The panel's time, measured or virtual, for the next panel's estimate
 * (mlsba__factor_panel_estimate), the one before it kept. */
void mlsba__factor_learn_panel(mlsba__factor_ctx_t *C,
                               const mlsba__factor_step_t *st) {
  if (st->panel_s > 0) {
    C->models.prev_panel_s = C->models.panel_s;
    C->models.prev_panel_flops = C->models.panel_flops;
    C->models.panel_s = st->panel_s;
    C->models.panel_flops = mlsba__factor_next_panel_flops(C, st);
  }
}
