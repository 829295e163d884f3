#include "cpu_kernel_cache.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/atomic_file.h"

/* The cache's root: MLSBA_CACHE_DIR, else $XDG_CACHE_HOME/mlsba, else
 * ~/.cache/mlsba (made, the user's own folder 0700); 0 when there is
 * none. */
static int cache_root(char *root, size_t size, const char **refused) {
  const char *env = getenv("MLSBA_CACHE_DIR");
  if (env && strcmp(env, "none") == 0)
    return 0;
  int len;
  if (env && *env) {
    len = snprintf(root, size, "%s", env);
    if (len < 0 || (size_t)len >= size) {
      *refused = "MLSBA_CACHE_DIR refused: longer than a path may be; the "
                 "choice is not cached";
      return 0;
    }
    /* Made when only it is missing, as the factorizations' model cache
     * makes it: a fresh MLSBA_CACHE_DIR=DIR was not, so the choice went
     * uncached and was timed again by every process on it (a cold and a
     * warm run of benchmarks/factor-cells both timed it). */
    mkdir(root, 0755);
    return 1;
  }
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) {
    len = snprintf(root, size, "%s/mlsba", xdg);
  } else if (home && *home) {
    /* A new account may have no ~/.cache yet: it is the user's, 0700. */
    len = snprintf(root, size, "%s/.cache", home);
    if (len > 0 && (size_t)len < size && mkdir(root, 0700) != 0 &&
        errno != EEXIST)
      return 0;
    len = snprintf(root, size, "%s/.cache/mlsba", home);
  } else {
    return 0;
  }
  if (len < 0 || (size_t)len >= size) {
    *refused = "the cache folder's path (XDG_CACHE_HOME or HOME) is longer "
               "than a path may be; the choice is not cached";
    return 0;
  }
  return mkdir(root, 0755) == 0 || errno == EEXIST;
}

int mlsba__cpu_cache_path(char *buf, size_t size, const char **refused) {
  char root[PATH_MAX];
  *refused = NULL;
  if (!cache_root(root, sizeof root, refused))
    return 0;
  char host[128] = {0};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0' ||
      strchr(host, '/') || host[0] == '.')
    snprintf(host, sizeof host, "localhost");
  int len = snprintf(buf, size, "%s/%s/cpu-kernels", root, host);
  if (len < 0 || (size_t)len >= size || (size_t)len >= PATH_MAX) {
    *refused = "MLSBA_CACHE_DIR refused: the cache file's path would be "
               "longer than a path may be; the choice is not cached";
    return 0;
  }
  /* The host's folder, then the file's path again. */
  snprintf(buf, size, "%s/%s", root, host);
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
    *refused = "the cache folder (MLSBA_CACHE_DIR, else the user's cache) "
               "cannot hold the host's folder; the choice is not cached";
    return 0;
  }
  snprintf(buf, size, "%s/%s/cpu-kernels", root, host);
  return 1;
}

/* ---- the text ---------------------------------------------------------- */

static const char *const precision_names[2] = {"single", "double"};

/* A kernel set's id from its name in a file; -1 when it names none. */
static int id_of(const char *name, int *id) {
  if (strcmp(name, "auto") == 0) {
    *id = MLSBA__CPU_KERNEL_AUTO;
    return 0;
  }
  if (strcmp(name, "openblas") == 0) {
    *id = MLSBA__CPU_KERNEL_OPENBLAS;
    return 0;
  }
  for (int i = 0; mlsba__cpu_kernel_id_name(i); i++)
    if (strcmp(mlsba__cpu_kernel_id_name(i), name) == 0) {
      *id = i;
      return 0;
    }
  return -1;
}

/* A speed as a file may give it: digits, a point and digits, positive,
 * finite and below 10^6 GFLOPS. Rejects 0, -0, NaN, inf, 1e300, "12abc". */
static int speed_of(const char *s, double *out) {
  if (*s == '\0' || strspn(s, "0123456789.") != strlen(s))
    return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end != '\0' || !isfinite(v) || !(v > 0) || v >= 1e6)
    return -1;
  *out = v;
  return 0;
}

/* A count as a file may give it: digits only, lo..hi. */
static int count_of(const char *s, int lo, int hi, int *out) {
  if (*s == '\0' || strlen(s) > 6 || strspn(s, "0123456789") != strlen(s))
    return -1;
  int v = atoi(s);
  if (v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

/* A load average or a share: digits, a point and digits, below 10^6 (0
 * allowed: a quiet machine's load). */
static int fraction_of(const char *s, double *out) {
  if (*s == '\0' || *s == '.' || strspn(s, "0123456789.") != strlen(s))
    return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end != '\0' || !isfinite(v) || v < 0 || v >= 1e6)
    return -1;
  *out = v;
  return 0;
}

/* "measured load 1.71 cpus 2 share 0.98 close 0 tries 1 settled 0"; 0 when
 * it reads so, every value in its range. */
static int parse_measured(const char *line, mlsba__cpu_measured_t *m) {
  char w[6][16], v[6][32], extra[2];
  static const char *const words[6] = {"load",  "cpus",  "share",
                                       "close", "tries", "settled"};
  if (sscanf(line,
             "measured %15s %31s %15s %31s %15s %31s %15s %31s %15s %31s "
             "%15s %31s %1s",
             w[0], v[0], w[1], v[1], w[2], v[2], w[3], v[3], w[4], v[4], w[5],
             v[5], extra) != 12 ||
      strncmp(line, "measured ", 9) != 0)
    return -1;
  for (int i = 0; i < 6; i++)
    if (strcmp(w[i], words[i]) != 0)
      return -1;
  if (fraction_of(v[0], &m->load) != 0 ||
      count_of(v[1], 1, 1 << 20, &m->cpus) != 0 ||
      fraction_of(v[2], &m->share) != 0 || m->share > 1 ||
      count_of(v[3], 0, 2 * MLSBA__CPU_CLASSES, &m->close) != 0 ||
      count_of(v[4], 1, MLSBA__CPU_CACHE_TRIES, &m->tries) != 0 ||
      count_of(v[5], 0, 1, &m->settled) != 0)
    return -1;
  return 0;
}

/* One line "single product skx 174.2 skx 174.2"; 0 when it reads so. */
static int parse_line(const char *line, int prec, mlsba__cpu_class_t c,
                      int (*runnable)(int), mlsba__cpu_pick_t *pick) {
  char p[16], cls[16], names[2][32], speeds[2][32], extra[2];
  if (sscanf(line, "%15s %15s %31s %31s %31s %31s %1s", p, cls, names[0],
             speeds[0], names[1], speeds[1], extra) != 6)
    return -1;
  if (strcmp(p, precision_names[prec]) != 0 ||
      strcmp(cls, mlsba__cpu_class_name(c)) != 0)
    return -1;
  if (id_of(names[0], &pick->kernel) != 0 ||
      id_of(names[1], &pick->blis) != 0 ||
      speed_of(speeds[0], &pick->gflops) != 0 ||
      speed_of(speeds[1], &pick->blis_gflops) != 0)
    return -1;
  /* The BLIS one is BLIS, equal to the choice unless that is OpenBLAS;
   * both run on this CPU. */
  if (pick->blis == MLSBA__CPU_KERNEL_OPENBLAS ||
      (pick->kernel != MLSBA__CPU_KERNEL_OPENBLAS &&
       (pick->kernel != pick->blis || pick->gflops != pick->blis_gflops)))
    return -1;
  return runnable(pick->kernel) && runnable(pick->blis) ? 0 : -1;
}

int mlsba__cpu_cache_parse(const char *text, const char *key,
                           int (*runnable)(int id), mlsba__cpu_picks_t *out) {
  char head[64];
  snprintf(head, sizeof head, "mlsba cpu-kernels %d\nkey ",
           MLSBA__CPU_CACHE_VERSION);
  size_t hl = strlen(head), kl = strlen(key);
  if (strncmp(text, head, hl) != 0 || strncmp(text + hl, key, kl) != 0 ||
      text[hl + kl] != '\n')
    return -1;
  const char *line = text + hl + kl + 1;
  mlsba__cpu_picks_t picks;
  const char *end = strchr(line, '\n');
  char one[160];
  if (end == NULL || (size_t)(end - line) >= sizeof one)
    return -1;
  memcpy(one, line, (size_t)(end - line));
  one[end - line] = '\0';
  if (parse_measured(one, &picks.how) != 0)
    return -1;
  line = end + 1;
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
      end = strchr(line, '\n');
      if (end == NULL || (size_t)(end - line) >= sizeof one)
        return -1;
      memcpy(one, line, (size_t)(end - line));
      one[end - line] = '\0';
      if (parse_line(one, p, (mlsba__cpu_class_t)c, runnable,
                     &picks.pick[p][c]) != 0)
        return -1;
      line = end + 1;
    }
  if (*line != '\0') /* nothing after the last class */
    return -1;
  *out = picks;
  return 0;
}

int mlsba__cpu_cache_format(const char *key, const mlsba__cpu_picks_t *picks,
                            char *buf, size_t size) {
  const mlsba__cpu_measured_t *m = &picks->how;
  int len = snprintf(buf, size,
                     "mlsba cpu-kernels %d\nkey %s\nmeasured load %.2f cpus %d "
                     "share %.2f close %d tries %d settled %d\n",
                     MLSBA__CPU_CACHE_VERSION, key, m->load, m->cpus, m->share,
                     m->close, m->tries, m->settled);
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
      const mlsba__cpu_pick_t *k = &picks->pick[p][c];
      if (len < 0 || (size_t)len >= size)
        return -1;
      len += snprintf(buf + len, size - (size_t)len, "%s %s %s %.1f %s %.1f\n",
                      precision_names[p],
                      mlsba__cpu_class_name((mlsba__cpu_class_t)c),
                      mlsba__cpu_kernel_id_name(k->kernel), k->gflops,
                      mlsba__cpu_kernel_id_name(k->blis), k->blis_gflops);
    }
  return len < 0 || (size_t)len >= size ? -1 : len;
}

/* ---- the file ---------------------------------------------------------- */

int mlsba__cpu_cache_read(const char *path, const char *key,
                          int (*runnable)(int id), mlsba__cpu_picks_t *out) {
  FILE *f = NULL;
  if (mlsba__open_regular(path, &f) != 0)
    return -1;
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  int whole = n < sizeof text - 1 && !ferror(f);
  fclose(f);
  text[n] = '\0';
  if (!whole || strlen(text) != n) /* too long, or a NUL inside */
    return -1;
  return mlsba__cpu_cache_parse(text, key, runnable, out);
}

void mlsba__cpu_cache_write(const char *path, const char *key,
                            const mlsba__cpu_picks_t *picks) {
  char text[4096];
  int len = mlsba__cpu_cache_format(key, picks, text, sizeof text);
  if (len > 0)
    (void)mlsba__write_atomic(path, text, (size_t)len);
}
