/*
 * What one HIP call costs the client, in instructions: the hot calls of `hip-remote bench`
 * (a kernel launch, hipDeviceSynchronize, a 4 KiB copy each way) repeated COUNT times inside
 * a callgrind instrumentation window (every thread of the process counts while it is open), so `scripts/call-instructions.sh` can subtract a run with
 * COUNT/10 and divide: setup, connection and teardown cancel out. Instruction counts do not
 * depend on the machine's load, which wall time on a shared machine does.
 *
 *   call_cost MODE COUNT     MODE: launch | launch_args | sync | h2d | d2h
 *
 * Outside callgrind the window macros do nothing and the program prints its wall time per
 * call (a rough figure only). The kernel is compiled on the worker through hiprtc.
 */
#define _POSIX_C_SOURCE 200809L

#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include "rtc_module.h" /* tests/c: CHECK, RTC_CHECK, rtc_module() */

static const char* SOURCE =
    "extern \"C\" __global__ void empty() {}\n"
    "extern \"C\" __global__ void axpy(float* x, float* y, int n, float a) {}\n";

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s launch|launch_args|sync|h2d|d2h COUNT\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  long count = atol(argv[2]);
  hipModule_t module = rtc_module(SOURCE, "call_cost.hip", NULL);
  hipFunction_t empty, axpy;
  CHECK(hipModuleGetFunction(&empty, module, "empty"));
  CHECK(hipModuleGetFunction(&axpy, module, "axpy"));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  enum { COPY = 4096 };
  void* dev;
  CHECK(hipMalloc(&dev, COPY));
  char* host = calloc(COPY, 1);
  float* x = (float*)dev;
  float* y = (float*)dev + 16;
  int n = 16;
  float a = 2.0f;
  void* args[] = {&x, &y, &n, &a};
  /* Warm: the first launch of each kernel reads its layout, the first copies set up paths. */
  CHECK(hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
  CHECK(hipModuleLaunchKernel(axpy, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL));
  CHECK(hipMemcpy(dev, host, COPY, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(host, dev, COPY, hipMemcpyDeviceToHost));
  CHECK(hipDeviceSynchronize());

  double t0 = now_s();
  CALLGRIND_START_INSTRUMENTATION;
  if (!strcmp(mode, "launch") || !strcmp(mode, "launch_args")) {
    int with_args = !strcmp(mode, "launch_args");
    for (long i = 0; i < count; i++) {
      CHECK(hipModuleLaunchKernel(with_args ? axpy : empty, 1, 1, 1, 1, 1, 1, 0, stream, with_args ? args : NULL, NULL));
    }
    CHECK(hipStreamSynchronize(stream));
  } else if (!strcmp(mode, "sync")) {
    for (long i = 0; i < count; i++) CHECK(hipDeviceSynchronize());
  } else if (!strcmp(mode, "h2d")) {
    for (long i = 0; i < count; i++) CHECK(hipMemcpy(dev, host, COPY, hipMemcpyHostToDevice));
  } else if (!strcmp(mode, "d2h")) {
    for (long i = 0; i < count; i++) CHECK(hipMemcpy(host, dev, COPY, hipMemcpyDeviceToHost));
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  CALLGRIND_STOP_INSTRUMENTATION;
  double t = now_s() - t0;
  printf("%s x%ld: %.2f us per call (wall, rough)\n", mode, count, t / (double)count * 1e6);

  CHECK(hipFree(dev));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipModuleUnload(module));
  free(host);
  return 0;
}
