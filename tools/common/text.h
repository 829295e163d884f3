/* Text for an 80-column terminal: paragraphs wrapped at word boundaries,
 * and whether standard output is a terminal that can redraw a line. */
#ifndef MLSBA_TOOLS_TEXT_H
#define MLSBA_TOOLS_TEXT_H

#include <stdio.h>

#include "mlsba.h"

/* Every line the tools print fits in this many columns. */
#define TEXT_COLUMNS 80

/* Prints text wrapped to TEXT_COLUMNS - 1 columns: the first line after
 * first, the others after an indent of `indent` spaces; a word longer
 * than a line is cut where the line ends. Ends with a newline. */
void text_wrap(FILE *f, const char *first, int indent, const char *text);

/* An error for a person: "prog: " and the message on stderr, wrapped as
 * text_wrap() does (a long path or library message stays within 80
 * columns). */
void text_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* snprintf into a line of at most TEXT_COLUMNS - 1 characters (with
 * "..." at the end when it was longer). */
void text_fit(char *line, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "iterations  3 (stop: fixed-point, imbalance above eps)" on stdout:
 * how many runs, and why the routine stopped by the name its report's
 * "stop" gives (mlsba_stop_reason_name()); a fixed point may leave the
 * times further apart than eps, and the line then says so. */
void text_print_stop(unsigned iterations, mlsba_stop_reason_t stop,
                     double imbalance, double eps);

#endif
