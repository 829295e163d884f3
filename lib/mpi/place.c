/* Where a rank runs: its rank on its host (the ranks of an MPI
 * shared-memory communicator), its host's name, and the platform that
 * follows from them: "auto", the devices the rank is bound to and its
 * share of the host's accelerators, or a file named by a pattern. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "internal.h"

int mlsba__mpi_local_rank(MPI_Comm comm, int *local_rank, int *local_size) {
  MPI_Comm host;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                          &host) != MPI_SUCCESS)
    return mlsba__fail(MLSBA_EINVAL,
                       "MPI_Comm_split_type: cannot tell the ranks of this "
                       "host");
  MPI_Comm_rank(host, local_rank);
  MPI_Comm_size(host, local_size);
  MPI_Comm_free(&host);
  return 0;
}

/* Appends piece to out[*len..cap). */
static int append(char *out, size_t cap, size_t *len, const char *piece,
                  const char *pattern) {
  size_t l = strlen(piece);
  if (*len + l >= cap)
    return mlsba__fail(MLSBA_EINVAL, "platform path too long: %s", pattern);
  memcpy(out + *len, piece, l);
  *len += l;
  out[*len] = '\0';
  return 0;
}

int mlsba_mpi_platform_path(MPI_Comm comm, const char *pattern, char *path,
                            size_t size) {
  /* Collective whatever the pattern: every rank takes part in the split. */
  int rank, local_rank = 0, local_size = 1, len_host = 0;
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  MPI_Comm_rank(comm, &rank);
  int err = mlsba__mpi_local_rank(comm, &local_rank, &local_size);
  MPI_Get_processor_name(host, &len_host);
  if (err)
    return err;
  if (pattern == NULL || path == NULL || size == 0)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_platform_path: NULL argument");
  size_t len = 0;
  path[0] = '\0';
  for (const char *s = pattern; !err && *s; s++) {
    char piece[MPI_MAX_PROCESSOR_NAME + 16] = {s[0], '\0'};
    if (s[0] == '%' && s[1] != '\0' && strchr("rhl%", s[1])) {
      switch (*++s) {
      case 'r':
        snprintf(piece, sizeof piece, "%d", rank);
        break;
      case 'l':
        snprintf(piece, sizeof piece, "%d", local_rank);
        break;
      case 'h':
        snprintf(piece, sizeof piece, "%s", host);
        break;
      default: /* "%%" */
        break;
      }
    }
    err = append(path, size, &len, piece, pattern);
  }
  return err;
}

int mlsba__mpi_platform_open(const char *path, int local_rank, int local_size,
                             mlsba_platform_t **pl) {
  if (strcmp(path, "auto") == 0)
    return mlsba__platform_discover_local(local_rank, local_size, pl);
  return mlsba_platform_load(path, pl);
}
