/* What the tools do with bad input: one line naming the problem on
 * stderr, a pointer to --help, exit status 2. */
#ifndef MLSBA_TOOLS_CLI_H
#define MLSBA_TOOLS_CLI_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_EXIT_USAGE 2

/* Writes "prog: text" on stderr wrapped to 79 columns, continuations
 * indented by 4 (as tools/common/text.c wraps; here for the programs that
 * take only this header). */
static inline void cli_error_text(const char *prog, const char *text) {
  int col = fprintf(stderr, "%s:", prog);
  for (const char *s = text; *s;) {
    if (*s == ' ') {
      s++;
      continue;
    }
    int word = (int)strcspn(s, " ");
    if (col > 4 && col + 1 + word > 79) {
      fputs("\n   ", stderr);
      col = 3;
    }
    col += fprintf(stderr, " %.*s", word, s);
    s += word;
  }
  fputc('\n', stderr);
}

/* Prints "prog: <what><arg>" (wrapped) and the pointer to --help;
 * returns 2. */
static inline int cli_usage_error(const char *prog, const char *what,
                                  const char *arg) {
  char text[1024];
  snprintf(text, sizeof text, "%s%s", what, arg);
  cli_error_text(prog, text);
  fprintf(stderr, "Try '%s --help'.\n", prog);
  return CLI_EXIT_USAGE;
}

/* Whether everything printed on stdout reached it: a table written to a
 * full disk (/dev/full) must not end with status 0. Prints the error and
 * returns 1, or returns 0. */
static inline int cli_finish_stdout(const char *prog) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "%s: cannot write the output: %s\n", prog, strerror(errno));
    return 1;
  }
  return 0;
}

/* A whole number of units: decimal digits only (no sign, space or empty
 * string), at most max. 0, or -1 for anything else. */
static inline int cli_parse_units(const char *s, int64_t max, int64_t *out) {
  if (s == NULL || *s == '\0' || strspn(s, "0123456789") != strlen(s))
    return -1;
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  if (errno == ERANGE || v > (unsigned long long)max)
    return -1;
  *out = (int64_t)v;
  return 0;
}

/* A finite real number in [lo, hi], the whole string and nothing else:
 * "" (which strtod reads as 0), trailing junk, leading space, inf and nan
 * are refused. 0, or -1. */
static inline int cli_parse_double(const char *s, double lo, double hi,
                                   double *out) {
  if (s == NULL || *s == '\0' || strchr(" \t\n\v\f\r", *s) != NULL)
    return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) ||
      !(v >= lo && v <= hi))
    return -1;
  *out = v;
  return 0;
}

#endif
