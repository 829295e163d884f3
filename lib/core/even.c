/* One formula where the cores' and the nodes' even splits were each
 * written out by their callers. */
#include "even.h"

int64_t mlsba__even_share(int64_t n, int64_t parts, int64_t k) {
  if (n <= 0 || parts <= 0 || k < 0 || k >= parts)
    return 0;
  return n / parts + (k < n % parts);
}
