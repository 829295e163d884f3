/* mlsba-inpa --load NAME: an application's divisible load balanced across
 * the ranks with the one-dimensional API of <mlsba/mpi.h> instead of the
 * two-dimensional product (tools/inpa_load.c). */
#ifndef MLSBA_TOOLS_INPA_LOAD_H
#define MLSBA_TOOLS_INPA_LOAD_H

/* Whether the command line asks for --load. */
int inpa_load_wanted(int argc, char **argv);
/* The whole run on every rank (MPI initialised); the exit status. help:
 * mlsba-inpa's --help text. */
int inpa_load_main(int argc, char **argv, const char *help);

#endif
