/* Pictures drawn by gnuplot, safely: names reach it only as quoted
 * strings, and it runs without a shell. */
#ifndef MLSBA_TOOLS_GNUPLOT_H
#define MLSBA_TOOLS_GNUPLOT_H

#include <stdio.h>

/* A gnuplot string that says s and nothing else: single-quoted (no
 * backquote substitution, no escapes, no macros), a quote doubled, and
 * control characters, which would end the command, shown as '?'. */
void gnuplot_string(FILE *f, const char *s);

/* dir/name opened for writing (prog heads every message: "mlsba-bench:
 * --plot"): what is written is kept in memory and
 * written whole at fclose() through the tools' writer (output.h), which
 * says on stderr why when it cannot (fclose() then fails). NULL after a
 * line when memory runs out. */
FILE *gnuplot_open_in(const char *prog, const char *dir, const char *name);

/* gnuplot in dir, no shell: dir/script on its standard input, its
 * messages into dir/gnuplot.log. 0, or -1 after a line on stderr. */
int gnuplot_run(const char *prog, const char *dir, const char *script);

#endif
