#include "mlsba.h"

#define MLSBA_STR_(x) #x
#define MLSBA_STR(x) MLSBA_STR_(x)

unsigned int mlsba_version(void) { return MLSBA_VERSION_HEX; }

const char *mlsba_version_string(void) {
  return MLSBA_STR(MLSBA_VERSION_MAJOR) "." MLSBA_STR(
      MLSBA_VERSION_MINOR) "." MLSBA_STR(MLSBA_VERSION_PATCH);
}
