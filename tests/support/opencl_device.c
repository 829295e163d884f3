#include "opencl_device.h"

#include <sys/wait.h>
#include <unistd.h>

#include "mlsba.h"

int have_opencl_device(void) {
  pid_t pid = fork();
  if (pid == 0) {
    mlsba_platform_t *pl = NULL;
    int found = 0;
    if (mlsba_platform_discover(&pl) == 0)
      for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++)
        found |= mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_OPENCL;
    _exit(found ? 0 : 1);
  }
  int status;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}
