/* Row interchanges of columns held on a device, as LAPACK's ?laswp with
 * incx = 1: one work-item per column, which applies k interchanges in
 * order, row i with row piv[i] (0-based, counted from the first row at
 * a + off). Elements are moved as bits (ulong for double, uint for float),
 * so the program builds on a device without doubles. Work-items past the
 * last column (the global size rounded up to the work-group's) do nothing:
 * one work-group size for every launch, so that an implementation that
 * compiles a kernel per work-group size (pocl) compiles it once. The CPU
 * twin is cl/laswp_cpu.c. */
__kernel void laswp_cols_64(__global ulong *a, ulong off, ulong ld, int k,
                            __global const int *piv, ulong cols) {
  if (get_global_id(0) >= cols)
    return;
  __global ulong *x = a + off + get_global_id(0) * ld;
  for (int i = 0; i < k; i++) {
    int r = piv[i];
    ulong t = x[i];
    x[i] = x[r];
    x[r] = t;
  }
}

__kernel void laswp_cols_32(__global uint *a, ulong off, ulong ld, int k,
                            __global const int *piv, ulong cols) {
  if (get_global_id(0) >= cols)
    return;
  __global uint *x = a + off + get_global_id(0) * ld;
  for (int i = 0; i < k; i++) {
    int r = piv[i];
    uint t = x[i];
    x[i] = x[r];
    x[r] = t;
  }
}
