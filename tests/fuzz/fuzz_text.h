/* The fuzz input as a NUL-terminated string (malloc'd; NULL when out of
 * memory), for targets whose parsers read text. */
#ifndef MLSBA_FUZZ_TEXT_H
#define MLSBA_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text != NULL) {
    memcpy(text, data, size);
    text[size] = 0;
  }
  return text;
}

#endif
