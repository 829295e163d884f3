/* Platform-file fields: the helpers the platform reader and the backends
 * share, so that every field error reads the same way. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"

int mlsba__fields_bad(const mlsba__fields_t *c, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mlsba__fail(MLSBA_EFORMAT, "%s: %s%s%s", c->origin, c->path,
                     c->path[0] ? ": " : "", msg);
}

void mlsba__fields_path(mlsba__fields_t *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->path, sizeof c->path, fmt, ap);
  va_end(ap);
}

void mlsba__fields_at_device(mlsba__fields_t *c) {
  mlsba__fields_path(c, "devices[%zu] (%s)", c->index, c->name);
}

const char *mlsba__json_kind(const json_t *v) {
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

int mlsba__fields_check_keys(mlsba__fields_t *c, json_t *obj,
                             const char *const *allowed) {
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
      return mlsba__fields_bad(c, "unknown field '%s' (expected: %s)", key,
                               known);
    }
  }
  return 0;
}

int mlsba__fields_count(mlsba__fields_t *c, json_t *obj, const char *key,
                        int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL)
    return 0;
  if (!json_is_integer(v))
    return mlsba__fields_bad(c, "%s must be an integer, got %s", key,
                             mlsba__json_kind(v));
  if (json_integer_value(v) < 0)
    return mlsba__fields_bad(c, "%s must be >= 0, got %lld", key,
                             (long long)json_integer_value(v));
  *out = json_integer_value(v);
  return 0;
}
