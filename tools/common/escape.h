/* Names the tools did not write (device names from a platform file or a
 * driver) made safe to print: on a terminal a newline would forge a table
 * line and an escape sequence would reach the terminal; in JSON a byte
 * that is not UTF-8 would make the report unwritable. Header-only, so
 * that every tool (and the smpicc build of mlsba-inpa) can use it. */
#ifndef MLSBA_TOOLS_ESCAPE_H
#define MLSBA_TOOLS_ESCAPE_H

#include <stdio.h>
#include <string.h>

/* in, with control characters (below 0x20, and 0x7f), a backslash and,
 * when high is nonzero, every byte from 0x80 written as \xNN (a backslash
 * as \\). UTF-8 passes as it is when high is 0. out gets at most size - 1
 * bytes and a NUL; an escape is never cut. */
static inline void escape_bytes(char *out, size_t size, const char *in,
                                int high) {
  size_t n = 0;
  for (const unsigned char *s = (const unsigned char *)in; *s; s++) {
    char piece[5] = {(char)*s, '\0'};
    if (*s < 0x20 || *s == 0x7f || (high && *s >= 0x80))
      snprintf(piece, sizeof piece, "\\x%02x", *s);
    else if (*s == '\\')
      snprintf(piece, sizeof piece, "\\\\");
    size_t len = strlen(piece);
    if (n + len + 1 > size)
      break;
    memcpy(out + n, piece, len);
    n += len;
  }
  if (size > 0)
    out[n] = '\0';
}

#endif
