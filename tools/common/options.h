/* The tools' command lines, read by one parser from a table that each
 * tool declares: an option's name, the kind and range of its value, where
 * the value goes (a member of the tool's own struct) and what a value
 * must be. Every tool gets the same rules: options in any order, the last
 * of a repeated option wins, --help (-h) and --version end the reading,
 * and bad input one message that names the option and the value, then
 * exit status 2 with a pointer to --help. */
#ifndef MLSBA_TOOLS_OPTIONS_H
#define MLSBA_TOOLS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "common/cli.h"

/* What an option's value is. */
typedef enum {
  OPT_FLAG,   /* no value: sets its int to 1 */
  OPT_TEXT,   /* the argument itself (a const char *), "" refused when
                 nonempty is set */
  OPT_UNITS,  /* a whole number, digits only, in [lo, hi]: an integer of
                 4 or 8 bytes (int64_t, unsigned, uint64_t...) */
  OPT_REAL,   /* a finite double in [min, max], or [min, max) when
                 below_max is set */
  OPT_CHOICE, /* one of choices[] (NULL-terminated): its index, an int
                 (an enum) */
  OPT_CUSTOM, /* parse() reads it */
} opt_kind_t;

/* One option of a tool. Where its value goes is an offset into the
 * struct the tool passes to opts_parse() (OPT_AT). */
typedef struct {
  const char *name; /* "--size", "-m" */
  opt_kind_t kind;
  size_t at, size;            /* the member: offset and size */
  int64_t lo, hi;             /* OPT_UNITS */
  double min, max;            /* OPT_REAL */
  int below_max;              /* OPT_REAL: max itself refused */
  int nonempty;               /* OPT_TEXT */
  const char *const *choices; /* OPT_CHOICE */
  /* OPT_CUSTOM: 0, or nonzero for a bad value, with the whole message in
   * why (size bytes) or why left empty for the usual one. */
  int (*parse)(const char *value, void *to, char *why, size_t size);
  /* What a value must be, as the message for a bad one says it: "NAME
   * must be <must>, got VALUE"; NULL: "bad value for NAME: VALUE". */
  const char *must;
} opt_t;

/* Where an option's value goes: member of the struct of type T. A row
 * reads {"--size", OPT_UNITS, OPT_AT(args_t, n), .lo = 1, .hi = 1 << 30,
 * .must = "a whole number from 1 to 2^30"}. */
#define OPT_AT(T, member)                                                      \
  .at = offsetof(T, member), .size = sizeof(((T *)0)->member)

/* What a command line asks for: the same values as the MPI tools'
 * outcomes (tools/mpi_cli.h), so that their ranks agree on one. */
enum {
  OPTS_RUN = 0,
  OPTS_HELP = 1,
  OPTS_USAGE = CLI_EXIT_USAGE,
  OPTS_VERSION = 3
};

/* A tool's table. */
typedef struct {
  const opt_t *opts;
  size_t count;
} opts_table_t;

#define OPTS_TABLE(rows)                                                       \
  { (rows), sizeof(rows) / sizeof *(rows) }

/* Reads argv[1..argc-1] left to right into `into` (the struct the table's
 * offsets are in): OPTS_RUN, OPTS_HELP or OPTS_VERSION (at the first
 * --help, -h or --version), or OPTS_USAGE with the reason in why (size
 * bytes): "unknown option --x", "unexpected argument x", "a value is
 * missing after --size", "--size must be ..., got 12x", "bad value for
 * --eps: \"\"". Prints nothing: the ranks of an MPI tool agree on the
 * outcome first. */
int opts_parse(const opts_table_t *table, int argc, char **argv, void *into,
               char *why, size_t size);

/* opts_parse() for a tool of one process, which prints what it found:
 * --help's text (help, as paths_print_help() gives it), the version, or
 * the reason of a usage error wrapped to 80 columns with the pointer to
 * --help. OPTS_RUN to go on; otherwise the tool ends with *status (0
 * after --help or --version, 1 when stdout could not take them, 2 for
 * bad input). */
int opts_read(const char *prog, const char *help, const opts_table_t *table,
              int argc, char **argv, void *into, int *status);

/* "prog (libmlsba) VERSION" on stdout, as every tool's --version says. */
void opts_print_version(const char *prog);

#endif
