/* Every on-disk format of the balancer. Device models: versioned text a
 * person can read, checked by a checksum, written atomically; a file that
 * fails any check is reported and ignored, never trusted. Left-out
 * decisions: a few lines beside a model. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/atomic_file.h"
#include "../core/error.h"
#include "../partition/fpm.h"
#include "store.h"

#define MAGIC "mlsba-model"
#define VERSION 1
#define MAX_FILE (1 << 20)

int mlsba__model_file_path(char *path, size_t size, const char *dir,
                           const char *before, const char *name,
                           const char *after) {
  char part[512];
  if (mlsba__file_name_part(name, part, sizeof part) != 0)
    return mlsba__fail(MLSBA_ERANGE,
                       "device name '%.64s...' too long for a model file "
                       "name",
                       name);
  int n = snprintf(path, size, "%s/%s%s%s.model", dir, before, part, after);
  return n < 0 || (size_t)n >= size
             ? mlsba__fail(MLSBA_ERANGE, "%s: model path too long", dir)
             : 0;
}

/* FNV-1a, 64 bits: enough to tell a damaged file from a good one. */
static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= UINT64_C(1099511628211);
  }
  return h;
}

int mlsba_model_save(const mlsba_model_t *m, const char *path,
                     const char *key) {
  return mlsba__model_save_stats(m, path, key, NULL, NULL);
}

static int save_model(const mlsba_model_t *m, const char *path, const char *key,
                      const unsigned *runs, const double *sd, int cache);

int mlsba__model_save_stats(const mlsba_model_t *m, const char *path,
                            const char *key, const unsigned *runs,
                            const double *sd) {
  return save_model(m, path, key, runs, sd, 0);
}

int mlsba__model_save_cache(const mlsba_model_t *m, const char *path,
                            const char *key) {
  return save_model(m, path, key, NULL, NULL, 1);
}

/* The file's text, then the one writer: synced, or as a cache. */
static int save_model(const mlsba_model_t *m, const char *path, const char *key,
                      const unsigned *runs, const double *sd, int cache) {
  if (m == NULL || path == NULL || key == NULL || strchr(key, '\n'))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_model_save: model, path and a one-line key are "
                       "needed");
  size_t cap = 256 + strlen(key) + 96 * m->n, len = 0;
  char *text = malloc(cap);
  if (text == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  len += (size_t)snprintf(text + len, cap - len,
                          "%s %d\nkey %s\nmax_load %lld\npoints %zu\n", MAGIC,
                          VERSION, key, (long long)m->max_load, m->n);
  for (size_t i = 0; i < m->n; i++) {
    if (runs && sd)
      len += (size_t)snprintf(text + len, cap - len, "%.17g %.17g %u %.17g\n",
                              m->x[i], m->s[i], runs[i], sd[i]);
    else
      len += (size_t)snprintf(text + len, cap - len, "%.17g %.17g\n", m->x[i],
                              m->s[i]);
  }
  len += (size_t)snprintf(text + len, cap - len, "checksum %016" PRIx64 "\n",
                          fnv1a(text, len));
  int err = cache ? mlsba__write_cache(path, text, len)
                  : mlsba__write_atomic(path, text, len);
  free(text);
  return err;
}

/* Reads the whole file, at most MAX_FILE bytes. */
static int read_file(const char *path, char **out, size_t *len) {
  FILE *f;
  int err = mlsba__open_regular(path, &f);
  if (err)
    return err;
  char *buf = malloc(MAX_FILE + 1);
  size_t n = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
  int read_error = ferror(f);
  fclose(f);
  if (buf == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  if (read_error) {
    free(buf);
    return mlsba__fail(MLSBA_EIO, "%s: read error", path);
  }
  if (n > MAX_FILE) {
    free(buf);
    return mlsba__fail(MLSBA_EFORMAT, "%s: larger than a model file can be",
                       path);
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* The next line of [*p, end), NUL-terminated in place; NULL at the end. */
static char *next_line(char **p, char *end) {
  if (*p >= end)
    return NULL;
  char *line = *p, *nl = memchr(line, '\n', (size_t)(end - line));
  if (nl == NULL)
    return NULL; /* every line, the last included, ends with a newline */
  *nl = '\0';
  *p = nl + 1;
  return line;
}

/* Parses the body (everything before the checksum line) into a model and,
 * where the points carry them, the runs behind each and their spread. */
static int parse_body(const char *path, const char *key, char *p, char *end,
                      mlsba_model_t *m, unsigned *runs, double *sd,
                      size_t room) {
  char *magic = next_line(&p, end), *keyline = next_line(&p, end);
  char *maxline = next_line(&p, end), *countline = next_line(&p, end);
  int version;
  long long max_load;
  size_t n;
  if (magic == NULL || sscanf(magic, MAGIC " %d", &version) != 1)
    return mlsba__fail(MLSBA_EFORMAT, "%s: not a libmlsba model file", path);
  if (version != VERSION)
    return mlsba__fail(MLSBA_EFORMAT,
                       "%s: model format version %d, this libmlsba reads %d",
                       path, version, VERSION);
  if (keyline == NULL || strncmp(keyline, "key ", 4) != 0 ||
      (key != NULL && strcmp(keyline + 4, key) != 0))
    return mlsba__fail(MLSBA_EFORMAT,
                       "%s: saved for another device or problem (key "
                       "differs)",
                       path);
  if (maxline == NULL || sscanf(maxline, "max_load %lld", &max_load) != 1 ||
      countline == NULL || sscanf(countline, "points %zu", &n) != 1 || n == 0 ||
      n > MAX_FILE / 4 || mlsba_model_set_max_load(m, max_load) != 0)
    return mlsba__fail(MLSBA_EFORMAT, "%s: bad max_load or points line", path);
  for (size_t i = 0; i < n; i++) {
    char *line = next_line(&p, end);
    double x, sp, dev = 0;
    unsigned count = 1;
    int fields =
        line ? sscanf(line, "%lf %lf %u %lf", &x, &sp, &count, &dev) : 0;
    if (fields != 2 && (fields != 4 || count < 1 || !(dev >= 0)))
      return mlsba__fail(MLSBA_EFORMAT, "%s: point %zu is missing or bad", path,
                         i);
    if (runs && i < room) {
      runs[i] = count;
      sd[i] = dev;
    }
    if (mlsba_model_set_point(m, x, sp) != 0) {
      /* A copy: the message is formatted into the buffer it reads. */
      char why[256];
      snprintf(why, sizeof why, "%s", mlsba_last_error());
      return mlsba__fail(MLSBA_EFORMAT, "%s: point %zu: %s", path, i, why);
    }
  }
  if (p != end || mlsba_model_num_points(m) != n)
    return mlsba__fail(MLSBA_EFORMAT,
                       "%s: extra lines, or points that repeat a load", path);
  return 0;
}

int mlsba_model_load(const char *path, const char *key, mlsba_model_t **model) {
  return mlsba__model_load_stats(path, key, model, NULL, NULL, 0);
}

int mlsba__model_parse_text(const char *path, const char *key, char *text,
                            size_t len, mlsba_model_t **model, unsigned *runs,
                            double *sd, size_t room) {
  /* The last line is the checksum of everything before it. */
  char *sum = NULL;
  uint64_t want;
  int err = 0;
  if (len > 1 && text[len - 1] == '\n') {
    sum = text + len - 1; /* back to the start of the last line */
    while (sum > text && sum[-1] != '\n')
      sum--;
  }
  mlsba_model_t *m = NULL;
  if (sum == NULL || sscanf(sum, "checksum %" SCNx64, &want) != 1)
    err = mlsba__fail(MLSBA_EFORMAT, "%s: truncated (no checksum line)", path);
  else if (fnv1a(text, (size_t)(sum - text)) != want)
    err = mlsba__fail(MLSBA_EFORMAT, "%s: corrupted (checksum mismatch)", path);
  else if ((err = mlsba_model_create(&m)) == 0)
    err = parse_body(path, key, text, sum, m, runs, sd, room);
  if (err) {
    mlsba_model_destroy(m);
    return err;
  }
  *model = m;
  return 0;
}

uint64_t mlsba__model_checksum(const char *text, size_t len) {
  return fnv1a(text, len);
}

int mlsba__model_load_stats(const char *path, const char *key,
                            mlsba_model_t **model, unsigned *runs, double *sd,
                            size_t room) {
  if (path == NULL || model == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_model_load: NULL argument");
  char *text = NULL;
  size_t len = 0;
  int err = read_file(path, &text, &len);
  if (err)
    return err;
  err = mlsba__model_parse_text(path, key, text, len, model, runs, sd, room);
  free(text);
  return err;
}

/* ---- the left-out decision (sharing.c says when it is taken) ---- */

/* Text a person can read: the magic line, the key of the device's model
 * (a decision about another device or driver is not taken), why, how many
 * balancings have taken it, and whether the last one found a kept
 * device's model stale. */
#define LEFT_OUT_MAGIC "mlsba-left-out 1"

int mlsba__left_out_read(const char *path, const char *key, unsigned *trusted,
                         unsigned *stale) {
  char line[1200];
  *trusted = *stale = 0;
  FILE *f;
  if (mlsba__open_regular(path, &f) != 0) /* a FIFO would block */
    return 0;
  int ok = fgets(line, sizeof line, f) &&
           strcmp(line, LEFT_OUT_MAGIC "\n") == 0 &&
           fgets(line, sizeof line, f) && strncmp(line, "key ", 4) == 0;
  if (ok) {
    line[strcspn(line, "\n")] = '\0';
    ok = strcmp(line + 4, key) == 0;
  }
  while (ok && fgets(line, sizeof line, f))
    if (sscanf(line, "trusted %u", trusted) != 1)
      sscanf(line, "stale %u", stale);
  fclose(f);
  return ok;
}

int mlsba__left_out_write(const char *path, const char *key, unsigned trusted,
                          int stale) {
  char text[1200];
  int n = snprintf(text, sizeof text,
                   "%s\nkey %s\nreason the other devices ran faster "
                   "without it\ntrusted %u\nstale %d\n",
                   LEFT_OUT_MAGIC, key, trusted, stale);
  if (n < 0 || (size_t)n >= sizeof text)
    return mlsba__fail(MLSBA_ERANGE, "%s: model key too long", path);
  return mlsba__write_atomic(path, text, (size_t)n);
}

int mlsba__left_out_remove(const char *path) {
  return unlink(path) == 0 || errno == ENOENT
             ? 0
             : mlsba__fail(MLSBA_EIO, "%s: cannot remove: %s", path,
                           strerror(errno));
}
