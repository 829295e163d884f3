/* Divisible loads: a number of units and the code that every kind of
 * device runs on a range of them. */
#include "load.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static atomic_ulong next_serial = 1;

/* Whether a name is safe in a file name and a key line. */
static int name_ok(const char *s) {
  if (s == NULL || *s == 0 || strlen(s) >= 64)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
      return 0;
  return 1;
}

/* name, then the shape with every run of unsafe characters as one '-'. */
static void make_tag(mlsba_load_t *load) {
  size_t n = (size_t)snprintf(load->tag, sizeof load->tag, "%s", load->name);
  int dash = 1;
  for (const char *c = load->shape; *c && n + 2 < sizeof load->tag; c++) {
    int safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
               (*c >= '0' && *c <= '9') || *c == '.' || *c == '_';
    if (safe) {
      if (dash)
        load->tag[n++] = '-';
      load->tag[n++] = *c;
      dash = 0;
    } else {
      dash = 1;
    }
  }
  load->tag[n] = 0;
}

int mlsba_load_create(const char *name, int64_t units, mlsba_load_t **out) {
  if (out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_load_create: load is NULL");
  *out = NULL;
  if (!name_ok(name))
    return mlsba__fail(MLSBA_EINVAL,
                       "load name \"%s\": 1 to 63 letters, digits, '-', '_' "
                       "or '.'",
                       name ? name : "(null)");
  /* 2^53: the most units a partitioner can place exactly (mlsba.h). */
  if (units < 1 || units > (int64_t)MLSBA_LOAD_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "load %s: units must be in 1..2^53, got %lld", name,
                       (long long)units);
  mlsba_load_t *load = calloc(1, sizeof *load);
  if (load == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "load %s: out of memory", name);
  snprintf(load->name, sizeof load->name, "%s", name);
  load->units = units;
  load->serial = atomic_fetch_add(&next_serial, 1);
  make_tag(load);
  *out = load;
  return 0;
}

void mlsba_load_destroy(mlsba_load_t *load) {
  if (load == NULL)
    return;
  free(load->kept);
  free(load);
}

int mlsba_load_set_cpu(mlsba_load_t *load, mlsba_cpu_fn fn, void *user) {
  if (load == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_load_set_cpu: load is NULL");
  load->cpu = fn;
  load->cpu_user = user;
  return 0;
}

int mlsba_load_set_unit_bytes(mlsba_load_t *load, double bytes) {
  if (load == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_load_set_unit_bytes: load is NULL");
  if (!(bytes >= 0) || bytes > 1e30)
    return mlsba__fail(MLSBA_EINVAL,
                       "load %s: unit bytes must be in [0, 1e30], got %g",
                       load->name, bytes);
  load->unit_bytes = bytes;
  return 0;
}

int mlsba_load_set_shape(mlsba_load_t *load, const char *shape) {
  if (load == NULL || shape == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_load_set_shape: %s is NULL",
                       load ? "shape" : "load");
  if (strlen(shape) >= sizeof load->shape || strpbrk(shape, "\r\n"))
    return mlsba__fail(MLSBA_EINVAL,
                       "load %s: the shape must be one line of at most %zu "
                       "characters",
                       load->name, sizeof load->shape - 1);
  snprintf(load->shape, sizeof load->shape, "%s", shape);
  make_tag(load);
  return 0;
}

void mlsba__load_set_tag(mlsba_load_t *load, const char *tag) {
  snprintf(load->tag, sizeof load->tag, "%s", tag);
}

int64_t mlsba_load_units(const mlsba_load_t *load) {
  return load ? load->units : 0;
}

const char *mlsba_load_name(const mlsba_load_t *load) {
  return load ? load->name : "";
}

void *mlsba__load_keep(mlsba_load_t *load, const void *data, size_t size) {
  free(load->kept);
  load->kept = malloc(size);
  if (load->kept)
    memcpy(load->kept, data, size);
  return load->kept;
}

int mlsba__load_create_kept(const char *caller, const char *name, int64_t units,
                            const void *data, size_t size, mlsba_load_t **out,
                            void **copy) {
  int err = mlsba_load_create(name, units, out);
  if (err)
    return err;
  if ((*copy = mlsba__load_keep(*out, data, size)) == NULL) {
    mlsba_load_destroy(*out);
    *out = NULL;
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", caller);
  }
  return 0;
}
