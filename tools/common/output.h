/* Every file a tool writes goes through libmlsba's one writer
 * (lib/core/atomic_file.h), so that the tools keep the library's promise
 * about what a path is: a regular file replaced whole (a reader never sees
 * half a report, a failed run leaves the old one), a symbolic link
 * followed and kept, a device or a FIFO written through and never
 * replaced, a directory refused. paths_check_output_file() checks a
 * destination with the same rules before anything runs. */
#ifndef MLSBA_TOOLS_OUTPUT_H
#define MLSBA_TOOLS_OUTPUT_H

#include <jansson.h>
#include <stddef.h>

/* text (len bytes) to path, or to standard output for "-" (whose errors
 * cli_finish_stdout() reports). 0, or 1 after one line "prog: option:
 * PATH: cannot write: why" (option may be NULL: "prog: PATH: ..."). */
int output_write(const char *prog, const char *option, const char *path,
                 const char *text, size_t len);

/* doc as JSON text (json_dumps flags) and a newline, as output_write()
 * writes it; a NULL doc or one JSON cannot hold (a number that is not
 * finite) is 1 after a line saying so. */
int output_json(const char *prog, const char *option, const char *path,
                const json_t *doc, size_t flags);

#endif
