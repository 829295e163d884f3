/* A link's affine cost fitted to measured transfers, as seed 001 measured
 * its PCIe bus and its network (§5.2.3-5.2.4): least squares of the time
 * over the sizes, the slope 1 / bandwidth, the intercept the latency. */
#include <math.h>

#include "../core/error.h"
#include "mlsba.h"

int mlsba_link_fit(const double bytes[], const double seconds[], size_t n,
                   mlsba_link_t *link) {
  if (!bytes || !seconds || !link)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_link_fit: an argument is NULL");
  if (n < 2)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_link_fit: needs two transfers or more, got %zu",
                       n);
  double sx = 0, st = 0, sxx = 0, sxt = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(bytes[i] >= 0) || !isfinite(bytes[i]) || !(seconds[i] > 0) ||
        !isfinite(seconds[i]))
      return mlsba__fail(MLSBA_EINVAL,
                         "mlsba_link_fit: transfer %zu must have bytes >= 0 "
                         "and seconds > 0, got %g and %g",
                         i, bytes[i], seconds[i]);
    sx += bytes[i];
    st += seconds[i];
    sxx += bytes[i] * bytes[i];
    sxt += bytes[i] * seconds[i];
  }
  double k = (double)n, var = sxx - sx * sx / k;
  double slope = var > 0 ? (sxt - sx * st / k) / var : 0;
  double latency = (st - slope * sx) / k;
  /* A negative intercept is noise on a link whose latency is below what
   * the sizes can tell: the fit then goes through the origin. */
  if (latency < 0) {
    latency = 0;
    slope = sxx > 0 ? sxt / sxx : 0;
  }
  if (!(slope > 0))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_link_fit: the times do not grow with the size: "
                       "no bandwidth to fit");
  *link = (mlsba_link_t){latency, 1 / slope};
  return 0;
}
