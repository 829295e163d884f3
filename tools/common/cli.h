/* What the tools do with bad input: one line naming the problem on
 * stderr, a pointer to --help, exit status 2. */
#ifndef MLSBA_TOOLS_CLI_H
#define MLSBA_TOOLS_CLI_H

#include <stdio.h>

#define CLI_EXIT_USAGE 2

/* Prints "prog: <what><arg>" and the pointer to --help; returns 2. */
static inline int cli_usage_error(const char *prog, const char *what,
                                  const char *arg) {
  fprintf(stderr, "%s: %s%s\nTry '%s --help'.\n", prog, what, arg, prog);
  return CLI_EXIT_USAGE;
}

#endif
