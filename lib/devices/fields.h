/* Reading a platform file's fields from JSON, shared by the platform
 * reader (platform/platform_json.c) and the backends, which each read their
 * own fields: every error names the origin (the file), the field as a path
 * ("devices[2].speed[1]") and the problem. */
#ifndef MLSBA_DEVICES_FIELDS_H
#define MLSBA_DEVICES_FIELDS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/error.h"

typedef struct mlsba__fields {
  const char *origin; /* the file, or "<platform>" */
  char path[128];     /* the field being read ("" at the top) */
  size_t index;       /* the device being read: devices[index] */
  const char *name;   /* its name (NULL until read) */
} mlsba__fields_t;

/* Fails with MLSBA_EFORMAT: "origin: path: message". */
int mlsba__fields_bad(const mlsba__fields_t *c, const char *fmt, ...)
    MLSBA__PRINTF(2, 3);
void mlsba__fields_path(mlsba__fields_t *c, const char *fmt, ...)
    MLSBA__PRINTF(2, 3);
/* The path of the device itself: "devices[i] (name)". */
void mlsba__fields_at_device(mlsba__fields_t *c);
/* "an object", "a string", ...: what v is, for messages. */
const char *mlsba__json_kind(const json_t *v);
/* Rejects keys of obj outside the NULL-terminated list allowed. */
int mlsba__fields_check_keys(mlsba__fields_t *c, json_t *obj,
                             const char *const *allowed);
/* Optional non-negative integer field; *out keeps its default if absent. */
int mlsba__fields_count(mlsba__fields_t *c, json_t *obj, const char *key,
                        int64_t *out);

#endif
