/* Prints a line of the library (a log line, a result in words) wrapped at
 * word boundaries to fit an 80-column terminal. The tools have the same
 * in tools/common/text.c, but that is not installed: the examples build
 * alone from an installed prefix (cc x.c $(pkg-config ... mlsba)), so they
 * keep this small copy beside them, shared by both. */
#ifndef EXAMPLES_WRAP_H
#define EXAMPLES_WRAP_H

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

#endif
