/* Runs a command-line tool and captures what it printed and how it ended. */
#ifndef MLSBA_TESTS_RUN_TOOL_H
#define MLSBA_TESTS_RUN_TOOL_H

#include <stddef.h>

typedef struct {
  int exited; /* 1 if it exited normally (not killed by a signal) */
  int status; /* its exit status */
  char *out;  /* standard output, NUL-terminated (caller frees) */
  char *err;  /* standard error */
} tool_run_t;

/* Runs argv[0] with argv (NULL-terminated), stdin from /dev/null. */
void run_tool(char *const argv[], tool_run_t *r);
void tool_run_free(tool_run_t *r);
/* Lines in s (a last line without newline counts). */
size_t count_lines(const char *s);
/* The tools wrap a long error to 80 columns, its continuations indented
 * by 4: s with every "\n    " read back as one space, so that a test
 * finds a sentence wherever the line broke. In place; returns s. */
char *unwrap_lines(char *s);

#endif
