/* Platform files: devices and processing groups in JSON, parsed with
 * jansson and validated field by field, and saved back (through the one
 * atomic writer). Every error names the origin (the
 * file), the field as a path ("devices[2].speed[1]") and the problem;
 * unknown fields and duplicate keys are errors, so that a typo is reported
 * instead of silently ignored. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/atomic_file.h"
#include "../core/error.h"
#include "../partition/fpm.h"
#include "mlsba.h"
#include "platform.h"

typedef struct {
  const char *origin;
  char path[128];
  /* Device indices sorted by name (then index), for lookups by name in
   * O(log p): a linear search per name made 10^5 devices take a minute. */
  size_t *by_name;
  size_t *listed; /* listed[o] == i: device i's contends_with names o */
  const mlsba_platform_t *pl;
} ctx_t;

/* Fails with MLSBA_EFORMAT: "origin: path: message". */
static int bad(const ctx_t *c, const char *fmt, ...) MLSBA__PRINTF(2, 3);
static int bad(const ctx_t *c, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mlsba__fail(MLSBA_EFORMAT, "%s: %s%s%s", c->origin, c->path,
                     c->path[0] ? ": " : "", msg);
}

static void set_path(ctx_t *c, const char *fmt, ...) MLSBA__PRINTF(2, 3);
static void set_path(ctx_t *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->path, sizeof c->path, fmt, ap);
  va_end(ap);
}

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "an array";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
    return "an integer";
  case JSON_REAL:
    return "a number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  default:
    return "null";
  }
}

/* Rejects keys of obj outside the NULL-terminated list allowed. */
static int check_keys(ctx_t *c, json_t *obj, const char *const *allowed) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    const char *const *a = allowed;
    while (*a && strcmp(*a, key) != 0)
      a++;
    if (*a == NULL) {
      char known[160] = "";
      for (a = allowed; *a; a++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                 a == allowed ? "" : ", ", *a);
      return bad(c, "unknown field '%s' (expected: %s)", key, known);
    }
  }
  return 0;
}

/* Optional non-negative integer field; *out keeps its default if absent. */
static int get_count(ctx_t *c, json_t *obj, const char *key, int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL)
    return 0;
  if (!json_is_integer(v))
    return bad(c, "%s must be an integer, got %s", key, json_kind(v));
  if (json_integer_value(v) < 0)
    return bad(c, "%s must be >= 0, got %lld", key,
               (long long)json_integer_value(v));
  *out = json_integer_value(v);
  return 0;
}

static int parse_speed(ctx_t *c, json_t *speed, mlsba_model_t *m,
                       size_t index) {
  if (!json_is_array(speed) || json_array_size(speed) == 0)
    return bad(c, "speed must be a non-empty array of [load, speed] points");
  size_t k;
  json_t *pt;
  double prev = 0;
  json_array_foreach(speed, k, pt) {
    set_path(c, "devices[%zu].speed[%zu]", index, k);
    if (!json_is_array(pt) || json_array_size(pt) != 2 ||
        !json_is_number(json_array_get(pt, 0)) ||
        !json_is_number(json_array_get(pt, 1)))
      return bad(c, "a point must be [load, speed], two numbers");
    double x = json_number_value(json_array_get(pt, 0));
    double s = json_number_value(json_array_get(pt, 1));
    if (!(x > 0) || !isfinite(x))
      return bad(c, "load must be > 0, got %g", x);
    if (!(s > 0) || !isfinite(s))
      return bad(c, "speed must be > 0, got %g", s);
    if (k > 0 && !(x > prev))
      return bad(c, "loads must increase, got %g after %g", x, prev);
    prev = x;
    if (mlsba_model_set_point(m, x, s) != 0)
      return bad(c, "%s", mlsba_last_error()); /* the bounds, with the path */
  }
  return 0;
}

/* "kind": devices of one kind are the same hardware, whose runs the
 * balancer pools (mlsba_kinds_t). The cores of a machine are one kind
 * unless the file says otherwise; other devices are of no kind unless
 * named. */
static int parse_kind(ctx_t *c, json_t *d, const char *type, device_t *dev) {
  json_t *kind = json_object_get(d, "kind");
  if (kind && (!json_is_string(kind) || json_string_length(kind) == 0))
    return bad(c, "kind must be a non-empty string, got %s", json_kind(kind));
  const char *k = kind                       ? json_string_value(kind)
                  : strcmp(type, "cpu") == 0 ? "cpu"
                                             : NULL;
  if (k && (dev->kind = strdup(k)) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  return 0;
}

static int parse_device(ctx_t *c, json_t *d, size_t index, device_t *dev) {
  static const char *const sim_keys[] = {
      "name",       "type",    "speed",   "max_load",    "noise",
      "seed",       "fail_at", "slow_at", "slow_factor", "contends_with",
      "contention", "kind",    NULL};
  static const char *const cpu_keys[] = {"name", "type", "core", "kind", NULL};
  static const char *const cl_keys[] = {
      "name", "type", "platform", "device", "kind", "mem_limit_mb", NULL};
  set_path(c, "devices[%zu]", index);
  if (!json_is_object(d))
    return bad(c, "a device must be an object, got %s", json_kind(d));
  json_t *name = json_object_get(d, "name"), *type = json_object_get(d, "type");
  if (!json_is_string(name) || json_string_length(name) == 0)
    return bad(c, "name must be a non-empty string");
  if ((dev->name = strdup(json_string_value(name))) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  set_path(c, "devices[%zu] (%s)", index, dev->name);
  if (!json_is_string(type))
    return bad(c, "type must be one of \"sim\", \"cpu\", \"opencl\"");
  const char *t = json_string_value(type);
  dev->mem_limit_mb = -1;
  int err = parse_kind(c, d, t, dev);
  if (err)
    return err;
  if (strcmp(t, "sim") == 0) {
    dev->type = MLSBA_DEVICE_SIM;
    if ((err = check_keys(c, d, sim_keys)) != 0)
      return err;
    if ((err = mlsba_model_create(&dev->model)) != 0)
      return err;
    set_path(c, "devices[%zu].speed", index);
    if ((err = parse_speed(c, json_object_get(d, "speed"), dev->model,
                           index)) != 0)
      return err;
    set_path(c, "devices[%zu] (%s)", index, dev->name);
    int64_t max_load = MLSBA_NO_MAX_LOAD, seed = 1;
    if ((err = get_count(c, d, "max_load", &max_load)) != 0 ||
        (err = get_count(c, d, "seed", &seed)) != 0)
      return err;
    if (mlsba_model_set_max_load(dev->model, max_load) != 0)
      return bad(c, "%s", mlsba_last_error()); /* past 2^53 */
    dev->seed = (uint64_t)seed;
    /* Experiments with faults and slowdowns (README, platform files). */
    if ((err = get_count(c, d, "fail_at", &dev->fail_at)) != 0 ||
        (err = get_count(c, d, "slow_at", &dev->slow_at)) != 0)
      return err;
    json_t *slow = json_object_get(d, "slow_factor");
    dev->slow_factor = 1;
    if (slow) {
      if (!json_is_number(slow))
        return bad(c, "slow_factor must be a number, got %s", json_kind(slow));
      dev->slow_factor = json_number_value(slow);
      if (!(dev->slow_factor > 0) || !isfinite(dev->slow_factor) ||
          dev->slow_factor > 1e6)
        return bad(c, "slow_factor must be in (0, 1e6], got %g",
                   dev->slow_factor);
    }
    json_t *contention = json_object_get(d, "contention");
    dev->contention = 1;
    if (contention) {
      if (!json_is_number(contention))
        return bad(c, "contention must be a number, got %s",
                   json_kind(contention));
      dev->contention = json_number_value(contention);
      if (!(dev->contention > 0) || !(dev->contention <= 1e3))
        return bad(c, "contention must be in (0, 1000], got %g",
                   dev->contention);
    }
    json_t *noise = json_object_get(d, "noise");
    if (noise) {
      if (!json_is_number(noise))
        return bad(c, "noise must be a number, got %s", json_kind(noise));
      dev->noise = json_number_value(noise);
      if (!(dev->noise >= 0) || !isfinite(dev->noise) || dev->noise > 1)
        return bad(c, "noise must be in [0, 1], got %g", dev->noise);
    }
  } else if (strcmp(t, "cpu") == 0) {
    dev->type = MLSBA_DEVICE_CPU;
    if ((err = check_keys(c, d, cpu_keys)) != 0)
      return err;
    if (!json_object_get(d, "core"))
      return bad(c, "a cpu device needs \"core\" (the core index)");
    if ((err = get_count(c, d, "core", &dev->core)) != 0)
      return err;
  } else if (strcmp(t, "opencl") == 0) {
    dev->type = MLSBA_DEVICE_OPENCL;
    if ((err = check_keys(c, d, cl_keys)) != 0 ||
        (err = get_count(c, d, "platform", &dev->cl_platform)) != 0 ||
        (err = get_count(c, d, "device", &dev->cl_device)) != 0 ||
        (err = get_count(c, d, "mem_limit_mb", &dev->mem_limit_mb)) != 0)
      return err;
    if (dev->mem_limit_mb == 0)
      return bad(c, "mem_limit_mb must be > 0");
  } else {
    return bad(c, "unknown device type \"%s\" (expected sim, cpu or opencl)",
               t);
  }
  return 0;
}

/* qsort_r is not C11: the platform being sorted is this thread's. */
static _Thread_local const mlsba_platform_t *sorting;

static int by_name(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  int c = strcmp(sorting->dev[i].name, sorting->dev[j].name);
  return c ? c : (i > j) - (i < j);
}

/* Sorts the devices by name into c->by_name and refuses a name used
 * twice, naming the first device (in file order) that repeats one. */
static int index_names(ctx_t *c, const mlsba_platform_t *pl) {
  size_t p = pl->ndev;
  c->by_name = malloc(p * sizeof *c->by_name);
  c->listed = malloc(p * sizeof *c->listed);
  if (c->by_name == NULL || c->listed == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  for (size_t i = 0; i < p; i++) {
    c->by_name[i] = i;
    c->listed[i] = SIZE_MAX;
  }
  c->pl = sorting = pl;
  qsort(c->by_name, p, sizeof *c->by_name, by_name);
  size_t repeat = p;
  for (size_t k = 1; k < p; k++) {
    size_t i = c->by_name[k];
    if (strcmp(pl->dev[c->by_name[k - 1]].name, pl->dev[i].name) == 0 &&
        i < repeat)
      repeat = i;
  }
  if (repeat < p) {
    set_path(c, "devices[%zu]", repeat);
    return bad(c, "device name \"%s\" is used twice", pl->dev[repeat].name);
  }
  return 0;
}

static long find_device(const ctx_t *c, const char *name) {
  size_t lo = 0, hi = c->pl->ndev;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int cmp = strcmp(c->pl->dev[c->by_name[mid]].name, name);
    if (cmp == 0)
      return (long)c->by_name[mid];
    if (cmp < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

/* A sim device's "contends_with": other sim devices it slows while it
 * runs (a device that computes on their cores, as pocl does). */
static int parse_contends(ctx_t *c, json_t *d, size_t i, mlsba_platform_t *pl) {
  json_t *list = json_object_get(d, "contends_with");
  device_t *dev = &pl->dev[i];
  if (list == NULL)
    return 0;
  set_path(c, "devices[%zu] (%s).contends_with", i, dev->name);
  if (!json_is_array(list))
    return bad(c, "must be an array of device names, got %s", json_kind(list));
  dev->contends = calloc(json_array_size(list) + 1, sizeof *dev->contends);
  if (dev->contends == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  size_t k;
  json_t *name;
  json_array_foreach(list, k, name) {
    long o =
        json_is_string(name) ? find_device(c, json_string_value(name)) : -1;
    if (o < 0)
      return bad(c, "no device named %s",
                 json_is_string(name) ? json_string_value(name)
                                      : "(not a string)");
    if ((size_t)o == i || pl->dev[o].type != MLSBA_DEVICE_SIM)
      return bad(c, "\"%s\" must be another sim device",
                 json_string_value(name));
    if (c->listed[o] == i)
      return bad(c, "\"%s\" is listed twice", json_string_value(name));
    c->listed[o] = i;
    dev->contends[dev->ncontends++] = (size_t)o;
  }
  return 0;
}

static int parse_groups(ctx_t *c, json_t *groups, mlsba_platform_t *pl) {
  size_t p = pl->ndev;
  unsigned char *seen = calloc(p, 1);
  pl->group_dev = malloc(p * sizeof *pl->group_dev);
  size_t q = groups ? json_array_size(groups) : p;
  pl->group_start = malloc((q + 1) * sizeof *pl->group_start);
  if (!seen || !pl->group_dev || !pl->group_start) {
    free(seen);
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  }
  int err = 0;
  size_t used = 0;
  if (groups == NULL) {
    /* No groups given: every device forms its own group. */
    for (size_t i = 0; i < p; i++) {
      pl->group_start[i] = i;
      pl->group_dev[i] = i;
    }
    used = p;
  } else {
    size_t g;
    json_t *grp;
    json_array_foreach(groups, g, grp) {
      set_path(c, "groups[%zu]", g);
      pl->group_start[g] = used;
      if (!json_is_array(grp) || json_array_size(grp) == 0) {
        err = bad(c, "a group must be a non-empty array of device names");
        goto done;
      }
      size_t k;
      json_t *name;
      json_array_foreach(grp, k, name) {
        set_path(c, "groups[%zu][%zu]", g, k);
        if (!json_is_string(name)) {
          err = bad(c, "expected a device name, got %s", json_kind(name));
          goto done;
        }
        long i = find_device(c, json_string_value(name));
        if (i < 0) {
          err = bad(c, "no device named \"%s\"", json_string_value(name));
          goto done;
        }
        if (seen[i]) {
          err = bad(c, "device \"%s\" is in more than one group",
                    json_string_value(name));
          goto done;
        }
        seen[i] = 1;
        pl->group_dev[used++] = (size_t)i;
      }
    }
    c->path[0] = '\0';
    for (size_t i = 0; i < p; i++) {
      if (!seen[i]) {
        set_path(c, "groups");
        err = bad(c, "device \"%s\" is in no group", pl->dev[i].name);
        goto done;
      }
    }
  }
  pl->group_start[q] = used;
  pl->ngroups = q;
done:
  free(seen);
  return err;
}

static int parse_platform(ctx_t *c, json_t *root, mlsba_platform_t *pl) {
  static const char *const keys[] = {"name", "devices", "groups", NULL};
  int err;
  if (!json_is_object(root))
    return bad(c, "the platform must be a JSON object, got %s",
               json_kind(root));
  if ((err = check_keys(c, root, keys)) != 0)
    return err;
  json_t *name = json_object_get(root, "name");
  if (name && !json_is_string(name)) {
    set_path(c, "name");
    return bad(c, "must be a string, got %s", json_kind(name));
  }
  const char *base = strrchr(c->origin, '/');
  pl->name = strdup(name   ? json_string_value(name)
                    : base ? base + 1
                           : c->origin);
  json_t *devices = json_object_get(root, "devices");
  set_path(c, "devices");
  if (!json_is_array(devices) || json_array_size(devices) == 0)
    return bad(c, "must be a non-empty array of devices");
  pl->ndev = json_array_size(devices);
  pl->dev = calloc(pl->ndev, sizeof *pl->dev);
  if (pl->name == NULL || pl->dev == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->origin);
  size_t i;
  json_t *d;
  json_array_foreach(devices, i, d) {
    if ((err = parse_device(c, d, i, &pl->dev[i])) != 0)
      return err;
  }
  if ((err = index_names(c, pl)) != 0)
    return err;
  json_array_foreach(devices, i, d) {
    if ((err = parse_contends(c, d, i, pl)) != 0)
      return err;
  }
  json_t *groups = json_object_get(root, "groups");
  if (groups && !json_is_array(groups)) {
    set_path(c, "groups");
    return bad(c, "must be an array of groups, got %s", json_kind(groups));
  }
  return parse_groups(c, groups, pl);
}

static int finish(json_t *root, const json_error_t *jerr, const char *origin,
                  mlsba_platform_t **platform) {
  ctx_t c = {.origin = origin};
  if (root == NULL)
    return mlsba__fail(MLSBA_EFORMAT, "%s:%d:%d: %s", origin, jerr->line,
                       jerr->column, jerr->text);
  mlsba_platform_t *pl = calloc(1, sizeof *pl);
  int err = pl ? parse_platform(&c, root, pl)
               : mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", origin);
  free(c.by_name);
  free(c.listed);
  json_decref(root);
  if (err) {
    mlsba_platform_destroy(pl);
    return err;
  }
  *platform = pl;
  return 0;
}

int mlsba_platform_parse(const char *json, const char *origin,
                         mlsba_platform_t **platform) {
  if (json == NULL || platform == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_platform_parse: %s is NULL",
                       json == NULL ? "json" : "platform");
  json_error_t jerr;
  origin = origin ? origin : "<platform>";
  return finish(json_loads(json, JSON_REJECT_DUPLICATES, &jerr), &jerr, origin,
                platform);
}

int mlsba_platform_load(const char *path, mlsba_platform_t **platform) {
  if (path == NULL || platform == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_platform_load: %s is NULL",
                       path == NULL ? "path" : "platform");
  FILE *f;
  int err = mlsba__open_regular(path, &f);
  if (err)
    return err;
  json_error_t jerr;
  json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
  int read_error = ferror(f);
  fclose(f);
  if (read_error) {
    json_decref(root);
    return mlsba__fail(MLSBA_EIO, "%s: read error", path);
  }
  return finish(root, &jerr, path, platform);
}

/* The JSON of one device, in the platform file format. */
static json_t *device_json(const mlsba_platform_t *pl, size_t i) {
  const device_t *d = &pl->dev[i];
  json_t *o = json_pack("{s:s}", "name", d->name);
  switch (d->type) {
  case MLSBA_DEVICE_SIM: {
    json_t *speed = json_array();
    for (size_t k = 0; k < d->model->n; k++)
      json_array_append_new(
          speed, json_pack("[f, f]", d->model->x[k], d->model->s[k]));
    json_object_set_new(o, "type", json_string("sim"));
    json_object_set_new(o, "speed", speed);
    if (d->model->max_load >= 0)
      json_object_set_new(o, "max_load", json_integer(d->model->max_load));
    if (d->noise > 0) {
      json_object_set_new(o, "noise", json_real(d->noise));
      json_object_set_new(o, "seed", json_integer((json_int_t)d->seed));
    }
    if (d->fail_at > 0)
      json_object_set_new(o, "fail_at", json_integer(d->fail_at));
    if (d->slow_at > 0) {
      json_object_set_new(o, "slow_at", json_integer(d->slow_at));
      json_object_set_new(o, "slow_factor", json_real(d->slow_factor));
    }
    if (d->ncontends > 0) {
      json_t *names = json_array();
      for (size_t k = 0; k < d->ncontends; k++)
        json_array_append_new(names, json_string(pl->dev[d->contends[k]].name));
      json_object_set_new(o, "contends_with", names);
      json_object_set_new(o, "contention", json_real(d->contention));
    }
    break;
  }
  case MLSBA_DEVICE_CPU:
    json_object_set_new(o, "type", json_string("cpu"));
    json_object_set_new(o, "core", json_integer(d->core));
    break;
  case MLSBA_DEVICE_OPENCL:
    json_object_set_new(o, "type", json_string("opencl"));
    json_object_set_new(o, "platform", json_integer(d->cl_platform));
    json_object_set_new(o, "device", json_integer(d->cl_device));
    if (d->mem_limit_mb > 0)
      json_object_set_new(o, "mem_limit_mb", json_integer(d->mem_limit_mb));
    break;
  }
  if (d->kind)
    json_object_set_new(o, "kind", json_string(d->kind));
  return o;
}

int mlsba_platform_save(const mlsba_platform_t *pl, const char *path) {
  if (pl == NULL || path == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_platform_save: %s is NULL",
                       pl == NULL ? "platform" : "path");
  json_t *devices = json_array(), *groups = json_array();
  for (size_t i = 0; i < pl->ndev; i++)
    json_array_append_new(devices, device_json(pl, i));
  for (size_t g = 0; g < pl->ngroups; g++) {
    json_t *grp = json_array();
    for (size_t k = pl->group_start[g]; k < pl->group_start[g + 1]; k++)
      json_array_append_new(grp, json_string(pl->dev[pl->group_dev[k]].name));
    json_array_append_new(groups, grp);
  }
  json_t *root = json_pack("{s:s, s:o, s:o}", "name", pl->name, "devices",
                           devices, "groups", groups);
  /* The one atomic writer (core/atomic_file.h): a reader sees the old file
   * or the new one, never half. */
  char *text =
      root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
  /* A text file: it ends with a newline. */
  size_t len = text ? strlen(text) : 0;
  char *lines = text ? realloc(text, len + 2) : NULL;
  if (lines) {
    lines[len++] = '\n';
    lines[len] = '\0';
    text = lines;
  }
  int err = lines ? mlsba__write_atomic(path, text, len)
                  : mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", path);
  free(text);
  json_decref(root);
  return err;
}
