/* What the MPI tools (mlsba-inpa, mlsba-master-worker) share about their
 * command lines: every rank parses its own, and all agree on the outcome
 * before anything else (tools/mpi_cli.c). */
#ifndef MLSBA_TOOLS_MPI_CLI_H
#define MLSBA_TOOLS_MPI_CLI_H

#include <mpi.h>
#include <stddef.h>

#include "common/cli.h"

/* A rank's parse: run, --help, --version, or a usage error. */
enum { RUN = 0, HELP = 1, VERSION = 3, USAGE = CLI_EXIT_USAGE };

/* Why a rank's command line was refused: the same size on every rank, as
 * the first failing rank's reason is broadcast to all. */
enum { WHY_SIZE = 320 };

/* why = what arg; returns USAGE. */
int mpi_cli_usage(char *why, const char *what, const char *arg);

/* Rank 0 writes the report: a destination that cannot take it is refused
 * before the run, not after it, by the rules of the tools' writer
 * (common/output.h), and a FIFO too (its reader would have to be there
 * when the run ends, the other ranks waiting). RUN, or USAGE with why
 * set. */
int mpi_cli_check_json(const char *path, char *why);

/* Collective. A usage error on any rank, or ranks that disagree on --help
 * or --version, end every rank with USAGE; rank 0 prints the first such
 * rank's reason as prog's. Returns the common outcome. */
int mpi_cli_agree(MPI_Comm comm, int outcome, char *why, const char *prog);

/* Collective. Ends a command line the ranks agreed not to run (HELP,
 * VERSION or USAGE): rank 0 prints help or the version, and every rank
 * returns the same exit status. */
int mpi_cli_finish(MPI_Comm comm, int outcome, const char *prog,
                   const char *help);

/* Collective. --platform as the other tools take it, for this rank: "%r",
 * "%h" and "%l" expanded (mlsba_mpi_platform_path), then a sample
 * platform's name (inpa-node%r) looked up where they look. 0 with the
 * path in out; otherwise -1, and the library opens the pattern as given
 * and reports, collectively, the file that is not there. */
int mpi_cli_platform(MPI_Comm comm, const char *pattern, char *out,
                     size_t size);

#endif
