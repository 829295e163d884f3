#include "text.h"

#include <stdarg.h>
#include <string.h>

void text_wrap(FILE *f, const char *first, int indent, const char *text) {
  const int width = TEXT_COLUMNS - 1;
  int col = (int)strlen(first), space = 0;
  if (indent > width / 2)
    indent = width / 2;
  fputs(first, f);
  for (const char *s = text; *s;) {
    if (*s == ' ') {
      s++;
      continue;
    }
    int word = (int)strcspn(s, " ");
    if (space && col + 1 + word > width) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
      space = 0;
    }
    if (space) {
      fputc(' ', f);
      col++;
    }
    /* A word longer than a whole line goes out in pieces. */
    while (word > width - col) {
      int room = width - col > 0 ? width - col : 0;
      fprintf(f, "%.*s\n%*s", room, s, indent, "");
      s += room;
      word -= room;
      col = indent;
    }
    fprintf(f, "%.*s", word, s);
    s += word;
    col += word;
    space = 1;
  }
  fputc('\n', f);
}

void text_fit(char *line, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, size, fmt, ap);
  va_end(ap);
  size_t max = TEXT_COLUMNS - 1 < size ? TEXT_COLUMNS - 1 : size - 1;
  if (n > 0 && (size_t)n > max && max > 3)
    memcpy(line + max - 3, "...", 4);
}

void text_error(const char *prog, const char *fmt, ...) {
  char text[4096], head[64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  snprintf(head, sizeof head, "%s: ", prog);
  fflush(stdout); /* the table so far, then the error */
  text_wrap(stderr, head, 4, text);
}

void text_print_stop(unsigned iterations, mlsba_stop_reason_t stop,
                     double imbalance, double eps) {
  const char *name = mlsba_stop_reason_name(stop);
  printf("\niterations  %u (stop: %s%s)\n", iterations, name ? name : "?",
         stop == MLSBA_STOP_FIXED_POINT && imbalance > eps
             ? ", imbalance above eps"
             : "");
}
