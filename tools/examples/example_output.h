/* What the examples print of the balancing: a line per run, the routine's
 * decisions, the library's lines wrapped at word boundaries to fit an
 * 80-column terminal. The tools wrap the same way in tools/common/text.c,
 * but that is not installed: the examples build alone from an installed
 * prefix (cc x.c $(pkg-config ... mlsba)), so they keep this small header
 * beside them, shared by both. */
#ifndef EXAMPLES_EXAMPLE_OUTPUT_H
#define EXAMPLES_EXAMPLE_OUTPUT_H

#include <mlsba.h>
#include <stdio.h>
#include <string.h>

/* `first` starts the first line; the others start with `indent` spaces.
 * A word longer than a line is printed whole on a line of its own. */
static void print_wrapped(const char *first, int indent, const char *text) {
  const int width = 79;
  int col = printf("%s", first);
  int fresh = 1; /* nothing on this line yet after the prefix */
  while (*text) {
    while (*text == ' ')
      text++;
    int word = (int)strcspn(text, " ");
    if (word == 0)
      break;
    if (!fresh && col + 1 + word > width) {
      col = printf("\n%*s", indent, "") - 1;
      fresh = 1;
    }
    col += printf("%s%.*s", fresh ? "" : " ", word, text);
    fresh = 0;
    text += word;
  }
  printf("\n");
}

/* A line per run (opts.progress; ctx points at the options' eps, so that
 * the imbalance is rounded on eps's side: 4.96% is not 5.0%). */
static void on_run(void *ctx, const mlsba_iteration_t *it) {
  const double *eps = ctx;
  printf("  run %u: %.4f s, imbalance %.1f%%\n", it->iteration, it->makespan,
         mlsba_imbalance_percent(it->imbalance, *eps));
}

/* What the routine decided (opts.log): a device left out, a device
 * dropped after a fault. Its line per run is on_run's; its last line, the
 * example's own. */
static void on_log(void *ctx, const char *line) {
  (void)ctx;
  if (strstr(line, ": iteration ") == NULL &&
      strstr(line, ": balanced in ") == NULL &&
      strstr(line, ": not balanced") == NULL)
    print_wrapped("  - ", 4, line);
}

#endif
