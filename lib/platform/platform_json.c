/* Platform files: devices and processing groups in JSON, parsed with
 * jansson and validated field by field, and saved back (through the one
 * atomic writer). Every error names the origin (the
 * file), the field as a path ("devices[2].speed[1]") and the problem;
 * unknown fields and duplicate keys are errors, so that a typo is reported
 * instead of silently ignored. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/atomic_file.h"
#include "../core/error.h"
#include "../devices/fields.h"
#include "mlsba.h"
#include "platform.h"

/* The reader's state: f is what errors name (origin, path, device;
 * devices/fields.h, whose helpers the backends share) and the rest finds
 * devices by name. */
typedef struct {
  mlsba__fields_t f;
  /* Device names hashed (open addressing, 2p..4p slots, each 0 or a
   * device index + 1), for lookups by name in O(1): a linear search per
   * name made 10^5 devices take a minute, and a sort with a binary search
   * per name was a tenth of the parse at 10^5. */
  size_t *by_name;
  size_t mask;    /* slots - 1 */
  size_t *listed; /* listed[o] == i: device i names device o (contends_with) */
  const mlsba_platform_t *pl;
} ctx_t;

/* The short names keep this reader's lines as they were. */
#define bad(c, ...) mlsba__fields_bad(&(c)->f, __VA_ARGS__)
#define set_path(c, ...) mlsba__fields_path(&(c)->f, __VA_ARGS__)
#define check_keys(c, obj, allowed)                                            \
  mlsba__fields_check_keys(&(c)->f, obj, allowed)
#define json_kind mlsba__json_kind

/* "kind": devices of one kind are the same hardware, whose runs the
 * balancer pools (mlsba_kinds_t). A device has its backend's default kind
 * (the cores of a machine are one kind) unless the file names one. */
static int parse_kind(ctx_t *c, json_t *d, const mlsba__backend_t *backend,
                      mlsba_platform_t *pl, mlsba__platform_device_t *dev) {
  json_t *kind = json_object_get(d, "kind");
  if (kind && (!json_is_string(kind) || json_string_length(kind) == 0))
    return bad(c, "kind must be a non-empty string, got %s", json_kind(kind));
  const char *k = kind      ? json_string_value(kind)
                  : backend ? backend->default_kind
                            : NULL;
  if (k && (dev->kind = mlsba__platform_strdup(pl, k)) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->f.origin);
  return 0;
}

/* A link: {"latency": seconds >= 0, "bandwidth": bytes per second > 0},
 * both required (an affine cost needs both; a link that costs nothing is
 * no "link" at all). */
static int parse_link_field(ctx_t *c, json_t *obj, const char *key,
                            mlsba_link_t *link) {
  static const char *const keys[] = {"latency", "bandwidth", NULL};
  json_t *l = json_object_get(obj, key);
  if (l == NULL)
    return 0;
  char outer[sizeof c->f.path];
  memcpy(outer, c->f.path, sizeof outer);
  int err = 0;
  set_path(c, "%s%s%s", outer, outer[0] ? "." : "", key);
  if (!json_is_object(l)) {
    err = bad(c,
              "must be an object {\"latency\": s, \"bandwidth\": bytes/s}, "
              "got %s",
              json_kind(l));
  } else if ((err = check_keys(c, l, keys)) == 0) {
    json_t *lat = json_object_get(l, "latency"),
           *bw = json_object_get(l, "bandwidth");
    if (!json_is_number(lat) || !(json_number_value(lat) >= 0) ||
        json_number_value(lat) > 1e30)
      err = bad(c, "latency must be a number of seconds in [0, 1e30], got %s",
                lat ? json_kind(lat) : "nothing");
    else if (!json_is_number(bw) || !(json_number_value(bw) > 0) ||
             json_number_value(bw) > 1e30)
      err = bad(c,
                "bandwidth must be a number of bytes per second in (0, "
                "1e30], got %s%s",
                bw ? json_kind(bw) : "nothing",
                json_is_number(bw) ? " out of range" : "");
    else
      *link = (mlsba_link_t){json_number_value(lat), json_number_value(bw)};
  }
  memcpy(c->f.path, outer, sizeof outer);
  return err;
}

/* The generic fields (name, type, kind, link) are read here; the backend named
 * by type reads its own (devices/backend.h), and its key list says which
 * fields a device of that type may have. */
static int parse_device(ctx_t *c, json_t *d, size_t index,
                        mlsba_platform_t *pl) {
  mlsba__platform_device_t *dev = &pl->dev[index];
  c->f.index = index;
  c->f.name = NULL;
  /* Paths are formatted only where they are needed: for 10^5 devices one
   * format per device and field was a tenth of the parse. */
  if (!json_is_object(d)) {
    set_path(c, "devices[%zu]", index);
    return bad(c, "a device must be an object, got %s", json_kind(d));
  }
  json_t *name = json_object_get(d, "name"), *type = json_object_get(d, "type");
  if (!json_is_string(name) || json_string_length(name) == 0) {
    set_path(c, "devices[%zu]", index);
    return bad(c, "name must be a non-empty string");
  }
  if ((dev->name = mlsba__platform_strdup(pl, json_string_value(name))) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->f.origin);
  c->f.name = dev->name;
  mlsba__fields_at_device(&c->f);
  if (!json_is_string(type))
    return bad(c, "type must be one of \"sim\", \"cpu\", \"opencl\"");
  const char *t = json_string_value(type);
  const mlsba__backend_t *backend = mlsba__backend_find(t);
  int err = parse_kind(c, d, backend, pl, dev);
  if (err)
    return err;
  if (backend == NULL)
    return bad(c, "unknown device type \"%s\" (expected sim, cpu or opencl)",
               t);
  if ((err = check_keys(c, d, backend->keys)) != 0 ||
      (err = parse_link_field(c, d, "link", &dev->link)) != 0)
    return err;
  err = backend->parse(&c->f, d, &dev->config, &dev->model);
  /* Set even on error, so that destroying the platform frees the config. */
  dev->backend = backend;
  return err;
}

/* FNV-1a: short names, all of them read once. */
static size_t hash_name(const char *name) {
  uint64_t h = 14695981039346656037u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211u;
  return (size_t)(h ^ (h >> 32));
}

/* The slot holding name, or the empty slot where it would go. */
static size_t slot_of(const ctx_t *c, const char *name) {
  size_t k = hash_name(name) & c->mask;
  while (c->by_name[k] != 0 &&
         strcmp(c->pl->dev[c->by_name[k] - 1].name, name) != 0)
    k = (k + 1) & c->mask;
  return k;
}

/* Indexes the devices by name in file order and refuses a name used
 * twice, naming the first device (in file order) that repeats one. */
static int index_names(ctx_t *c, const mlsba_platform_t *pl) {
  size_t p = pl->ndev, slots = 16;
  while (slots < 2 * p)
    slots *= 2;
  c->by_name = calloc(slots, sizeof *c->by_name);
  c->listed = malloc(p * sizeof *c->listed);
  if (c->by_name == NULL || c->listed == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->f.origin);
  c->mask = slots - 1;
  c->pl = pl;
  for (size_t i = 0; i < p; i++) {
    c->listed[i] = SIZE_MAX;
    size_t k = slot_of(c, pl->dev[i].name);
    if (c->by_name[k] != 0) {
      set_path(c, "devices[%zu]", i);
      return bad(c, "device name \"%s\" is used twice", pl->dev[i].name);
    }
    c->by_name[k] = i + 1;
  }
  return 0;
}

static long find_device(const ctx_t *c, const char *name) {
  size_t i = c->by_name[slot_of(c, name)];
  return i ? (long)(i - 1) : -1;
}

static long peer_find(const void *c, const char *name) {
  return find_device(c, name);
}

static const char *peer_name(const void *c, size_t i) {
  return ((const ctx_t *)c)->pl->dev[i].name;
}

static const char *peer_backend(const void *c, size_t i) {
  return ((const ctx_t *)c)->pl->dev[i].backend->name;
}

static int peer_named_again(const void *ctx, size_t by, size_t o) {
  const ctx_t *c = ctx;
  if (c->listed[o] == by)
    return 1;
  c->listed[o] = by;
  return 0;
}

/* The platform's devices as the backends see them, for fields that name
 * other devices (c->pl set; find and named_again once the names are
 * indexed). */
static mlsba__peers_t peers_of(const ctx_t *c) {
  return (mlsba__peers_t){.self = c,
                          .find = peer_find,
                          .name = peer_name,
                          .backend = peer_backend,
                          .named_again = peer_named_again};
}

/* Fields that name other devices, read once every device is known. */
static int parse_links(ctx_t *c, json_t *d, size_t i, mlsba_platform_t *pl) {
  mlsba__platform_device_t *dev = &pl->dev[i];
  if (dev->backend->link == NULL)
    return 0;
  mlsba__peers_t peers = peers_of(c);
  c->f.index = i;
  c->f.name = dev->name;
  return dev->backend->link(&c->f, d, dev->config, &peers);
}

static int parse_groups(ctx_t *c, json_t *groups, mlsba_platform_t *pl) {
  size_t p = pl->ndev;
  unsigned char *seen = calloc(p, 1);
  pl->group_dev = malloc(p * sizeof *pl->group_dev);
  size_t q = groups ? json_array_size(groups) : p;
  pl->group_start = malloc((q + 1) * sizeof *pl->group_start);
  if (!seen || !pl->group_dev || !pl->group_start) {
    free(seen);
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->f.origin);
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
      pl->group_start[g] = used;
      if (!json_is_array(grp) || json_array_size(grp) == 0) {
        set_path(c, "groups[%zu]", g);
        err = bad(c, "a group must be a non-empty array of device names");
        goto done;
      }
      size_t k;
      json_t *name;
      json_array_foreach(grp, k, name) {
        /* The path of a name only for an error (see parse_device). */
        if (!json_is_string(name)) {
          set_path(c, "groups[%zu][%zu]", g, k);
          err = bad(c, "expected a device name, got %s", json_kind(name));
          goto done;
        }
        long i = find_device(c, json_string_value(name));
        if (i < 0) {
          set_path(c, "groups[%zu][%zu]", g, k);
          err = bad(c, "no device named \"%s\"", json_string_value(name));
          goto done;
        }
        if (seen[i]) {
          set_path(c, "groups[%zu][%zu]", g, k);
          err = bad(c, "device \"%s\" is in more than one group",
                    json_string_value(name));
          goto done;
        }
        seen[i] = 1;
        pl->group_dev[used++] = (size_t)i;
      }
    }
    c->f.path[0] = '\0';
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

/* "columns_of": {"m": M, "k": K}, the product whose columns the simulated
 * speeds count (a column of B and C costs 2 m k flops). */
static int parse_columns_of(ctx_t *c, json_t *root, mlsba_platform_t *pl) {
  static const char *const keys[] = {"m", "k", NULL};
  json_t *o = json_object_get(root, "columns_of");
  if (o == NULL)
    return 0;
  set_path(c, "columns_of");
  if (!json_is_object(o))
    return bad(c, "must be an object {\"m\": M, \"k\": K}, got %s",
               json_kind(o));
  int err = check_keys(c, o, keys);
  if (!err)
    err = mlsba__fields_count(&c->f, o, "m", &pl->columns_m);
  if (!err)
    err = mlsba__fields_count(&c->f, o, "k", &pl->columns_k);
  set_path(c, "columns_of");
  if (!err && (pl->columns_m < 1 || pl->columns_k < 1))
    return bad(c, "needs both m and k, at least 1 each");
  return err;
}

static int parse_platform(ctx_t *c, json_t *root, mlsba_platform_t *pl) {
  static const char *const keys[] = {
      "name", "network", "memory", "devices", "groups", "columns_of", NULL};
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
  if ((err = parse_columns_of(c, root, pl)) != 0)
    return err;
  c->f.path[0] = '\0';
  if ((err = parse_link_field(c, root, "network", &pl->network)) != 0 ||
      (err = parse_link_field(c, root, "memory", &pl->memory)) != 0)
    return err;
  const char *base = strrchr(c->f.origin, '/');
  pl->name = strdup(name   ? json_string_value(name)
                    : base ? base + 1
                           : c->f.origin);
  json_t *devices = json_object_get(root, "devices");
  set_path(c, "devices");
  if (!json_is_array(devices) || json_array_size(devices) == 0)
    return bad(c, "must be a non-empty array of devices");
  pl->ndev = json_array_size(devices);
  pl->dev = calloc(pl->ndev, sizeof *pl->dev);
  if (pl->name == NULL || pl->dev == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", c->f.origin);
  size_t i;
  json_t *d;
  json_array_foreach(devices, i, d) {
    if ((err = parse_device(c, d, i, pl)) != 0)
      return err;
  }
  if ((err = index_names(c, pl)) != 0)
    return err;
  json_array_foreach(devices, i, d) {
    if ((err = parse_links(c, d, i, pl)) != 0)
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
  ctx_t c = {.f.origin = origin};
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

static json_t *link_json(const mlsba_link_t *l) {
  return json_pack("{s:f, s:f}", "latency", l->latency, "bandwidth",
                   l->bandwidth);
}

/* The JSON of one device, in the platform file format: name and type,
 * the backend's fields, then kind. */
static json_t *device_json(const mlsba_platform_t *pl, size_t i) {
  const mlsba__platform_device_t *d = &pl->dev[i];
  json_t *o = json_pack("{s:s}", "name", d->name);
  json_object_set_new(o, "type", json_string(d->backend->name));
  ctx_t c = {.pl = pl}; /* for names only: nothing is looked up */
  mlsba__peers_t peers = peers_of(&c);
  d->backend->save(d->config, d->model, o, &peers);
  if (d->kind)
    json_object_set_new(o, "kind", json_string(d->kind));
  if (d->link.bandwidth > 0)
    json_object_set_new(o, "link", link_json(&d->link));
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
  json_t *root = json_pack("{s:s}", "name", pl->name);
  if (root && pl->columns_m > 0)
    json_object_set_new(root, "columns_of",
                        json_pack("{s:I, s:I}", "m", (json_int_t)pl->columns_m,
                                  "k", (json_int_t)pl->columns_k));
  if (root && pl->network.bandwidth > 0)
    json_object_set_new(root, "network", link_json(&pl->network));
  if (root && pl->memory.bandwidth > 0)
    json_object_set_new(root, "memory", link_json(&pl->memory));
  if (root) {
    json_object_set_new(root, "devices", devices);
    json_object_set_new(root, "groups", groups);
  } else {
    json_decref(devices);
    json_decref(groups);
  }
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
