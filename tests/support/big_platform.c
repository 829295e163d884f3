#include "support/big_platform.h"

#include <stdio.h>
#include <stdlib.h>

char *big_platform_json(size_t n) {
  size_t cap = 200 * n + 64, len = 0;
  char *s = malloc(cap);
  if (s == NULL)
    return NULL;
  len += (size_t)snprintf(s + len, cap - len, "{\"devices\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(
        s + len, cap - len,
        "%s{\"name\": \"d%zu\", \"type\": \"sim\", \"speed\": [[1, %zu]], "
        "\"contends_with\": [\"d%zu\"]}",
        i ? ", " : "", i, 1 + i % 7, i ^ 1);
  len += (size_t)snprintf(s + len, cap - len, "], \"groups\": [");
  for (size_t i = 0; i < n; i += 2)
    len += (size_t)snprintf(s + len, cap - len, "%s[\"d%zu\", \"d%zu\"]",
                            i ? ", " : "", i, i + 1);
  snprintf(s + len, cap - len, "]}");
  return s;
}
