/* The tools' files through the library's writer. The tools are built
 * with the library's sources at hand and link it statically, so they use
 * its internal writer rather than a second copy of the rules. */
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "mlsba.h"
#include "text.h"

int output_write(const char *prog, const char *option, const char *path,
                 const char *text, size_t len) {
  if (strcmp(path, "-") == 0) {
    fwrite(text, 1, len, stdout);
    return 0;
  }
  if (mlsba__write_atomic(path, text, len) != 0) {
    if (option)
      text_error(prog, "%s: %s", option, mlsba_last_error());
    else
      text_error(prog, "%s", mlsba_last_error());
    return 1;
  }
  return 0;
}

int output_json(const char *prog, const char *option, const char *path,
                const json_t *doc, size_t flags) {
  char *text = doc ? json_dumps(doc, flags) : NULL;
  size_t len = text ? strlen(text) : 0;
  char *lines = text ? realloc(text, len + 2) : NULL;
  if (lines == NULL) {
    free(text);
    text_error(prog, "%s: the report cannot be written as JSON", option);
    return 1;
  }
  lines[len++] = '\n';
  lines[len] = '\0';
  int status = output_write(prog, option, path, lines, len);
  free(lines);
  return status;
}
