/* Mandelbrot escape-time counts for rows of an image, one work-item per
 * pixel: global size (width, rows). Row j of the share is image row
 * (row0 + j * stride) mod height; its counts go to out[j * width + x].
 *
 * The same arithmetic as cl/mandelbrot_cpu.c, in double precision and
 * without contraction (no fused multiply-add), so that a device and a
 * core give the same counts for the same pixel. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

__kernel void mandelbrot_rows(long width, long height, long row0, long stride,
                              double x0, double y0, double dx, double dy,
                              int max_iter, __global int *out) {
  long x = get_global_id(0), j = get_global_id(1);
  if (x >= width)
    return;
  long row = (row0 + j * stride) % height;
  double cx = x0 + dx * ((double)x + 0.5);
  double cy = y0 + dy * ((double)row + 0.5);
  double zr = 0.0, zi = 0.0;
  int i = 0;
  while (i < max_iter) {
    double zr2 = zr * zr, zi2 = zi * zi;
    if (zr2 + zi2 > 4.0)
      break;
    zi = 2.0 * zr * zi + cy;
    zr = zr2 - zi2 + cx;
    i++;
  }
  out[j * width + x] = i;
}
