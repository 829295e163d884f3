/* Whether this machine has an OpenCL device, for suites that skip without
 * one. */
#ifndef MLSBA_TESTS_OPENCL_DEVICE_H
#define MLSBA_TESTS_OPENCL_DEVICE_H

/* 1 when discovery finds an OpenCL device (never in a build without
 * OpenCL). Asked in a child process: an OpenCL implementation initialised
 * in the test process would not survive the fork of every test (pocl's
 * worker threads stay in the parent, and the child's queues would wait
 * for them forever). */
int have_opencl_device(void);

#endif
