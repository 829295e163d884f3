/* The MPI tools' command lines, agreed on by every rank. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/options.h"
#include "common/paths.h"
#include "core/atomic_file.h"
#include "mlsba.h"
#include "mlsba/mpi.h"
#include "mpi_cli.h"

int mpi_cli_usage(char *why, const char *what, const char *arg) {
  snprintf(why, WHY_SIZE, "%s%s", what, arg);
  return USAGE;
}

int mpi_cli_check_json(const char *path, char *why) {
  struct stat st;
  if (!strcmp(path, "-"))
    return RUN;
  /* Rank 0 writes after the run, the others waiting: a FIFO, whose
   * reader may never come, is refused here rather than waited for. */
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
    return mpi_cli_usage(why, "--json: not a regular file: ", path);
  /* The rest by the rules of the writer (tools/common/output.h). */
  return mlsba__write_check(path) == 0
             ? RUN
             : mpi_cli_usage(why, "--json: ", mlsba_last_error());
}

static const char *outcome_words(int outcome) {
  return outcome == HELP      ? "was given --help"
         : outcome == VERSION ? "was given --version"
                              : "was given a run";
}

/* Collective: the lowest rank that passes differs != 0, or the size. */
static int first_rank(MPI_Comm comm, int differs) {
  int rank, size, first;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = differs ? rank : size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  return first;
}

/* Every rank parses its own command line (an MPMD launch or a wrapper
 * script can give them different ones), so before anything else all
 * agree on the outcome: a rank that stopped alone would leave the others
 * waiting in their first collective. */
int mpi_cli_agree(MPI_Comm comm, int outcome, char *why, const char *prog) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = first_rank(comm, outcome == USAGE);
  if (first == size) {
    int head = outcome;
    MPI_Bcast(&head, 1, MPI_INT, 0, comm);
    first = first_rank(comm, outcome != head);
    if (first == size)
      return outcome;
    if (rank == first)
      snprintf(why, WHY_SIZE,
               "%s, rank 0 %s: every rank must be given the same options",
               outcome_words(outcome), outcome_words(head));
  }
  MPI_Bcast(why, WHY_SIZE, MPI_CHAR, first, comm);
  if (rank == 0)
    fprintf(stderr, "%s: rank %d: %s\nTry '%s --help'.\n", prog, first, why,
            prog);
  return USAGE;
}

int mpi_cli_finish(MPI_Comm comm, int outcome, const char *prog,
                   const char *help) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && outcome == HELP)
    paths_print_help(stdout, help);
  if (rank == 0 && outcome == VERSION)
    opts_print_version(prog);
  int status = outcome == USAGE ? USAGE
               : rank == 0      ? cli_finish_stdout(prog)
                                : 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  return status;
}

int mpi_cli_platform(MPI_Comm comm, const char *pattern, char *out,
                     size_t size) {
  char expanded[4096];
  int err = mlsba_mpi_platform_path(comm, pattern, expanded, sizeof expanded);
  return err || strchr(expanded, '%') ||
                 paths_find_platform(expanded, out, size) != 0
             ? -1
             : 0;
}
