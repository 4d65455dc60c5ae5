/*
 * One client's figures against a worker, for comparing how sessions are served
 * (scripts/session-process-bench.sh): sync-call p50 (hipDeviceSynchronize with nothing
 * queued: one round trip), launch rate (empty kernels, hipModuleLaunchKernel, then one
 * synchronize; only where host code is allowed, else -1), and 256 MiB copies host-to-device and device-to-host (pageable memory, median
 * of the repetitions after one warm-up). Prints one line:
 *   sync_p50_us=... launches_per_s=... h2d_gbs=... d2h_gbs=...
 */
#define _POSIX_C_SOURCE 200809L
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(expr)                                                                    \
  do {                                                                                 \
    hipError_t e_ = (expr);                                                            \
    if (e_ != hipSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, hipGetErrorName(e_)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, n, sizeof *v, by_value);
  return v[n / 2];
}

int main(int argc, char** argv) {
  int sync_samples = argc > 1 ? atoi(argv[1]) : 2000;
  int launches = argc > 2 ? atoi(argv[2]) : 20000;
  int copy_reps = argc > 3 ? atoi(argv[3]) : 5;
  size_t big = (size_t)256 << 20;
  CHECK(hipSetDevice(0));

  double* samples = malloc(sizeof(double) * (sync_samples > copy_reps ? sync_samples : copy_reps));
  for (int i = 0; i < 100; i++) CHECK(hipDeviceSynchronize());
  for (int i = 0; i < sync_samples; i++) {
    double t = now();
    CHECK(hipDeviceSynchronize());
    samples[i] = (now() - t) * 1e6;
  }
  double sync_p50 = median(samples, sync_samples);

  /* Kernels need host code allowed (session processes): elsewhere no launch rate. */
  double launch_rate = -1;
  const char* src = "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void empty(int x) { (void)x; }\n";
  hiprtcProgram prog;
  hipModule_t module;
  if (hiprtcCreateProgram(&prog, src, "empty.hip", 0, NULL, NULL) == HIPRTC_SUCCESS && hiprtcCompileProgram(prog, 0, NULL) == HIPRTC_SUCCESS) {
    size_t code_size = 0;
    hiprtcGetCodeSize(prog, &code_size);
    char* code = malloc(code_size);
    hiprtcGetCode(prog, code);
    if (hipModuleLoadData(&module, code) == hipSuccess) {
      hipFunction_t fn;
      CHECK(hipModuleGetFunction(&fn, module, "empty"));
      int arg = 7;
      void* params[] = {&arg};
      for (int i = 0; i < 1000; i++) CHECK(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
      CHECK(hipDeviceSynchronize());
      double t = now();
      for (int i = 0; i < launches; i++) CHECK(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
      CHECK(hipDeviceSynchronize());
      launch_rate = launches / (now() - t);
    }
  }
  (void)hipGetLastError();

  char* host = malloc(big);
  memset(host, 0x5a, big);
  void* dev;
  CHECK(hipMalloc(&dev, big));
  double gbs[2];
  for (int dir = 0; dir < 2; dir++) {
    for (int i = -1; i < copy_reps; i++) {
      double s = now();
      if (dir == 0) CHECK(hipMemcpy(dev, host, big, hipMemcpyHostToDevice));
      else CHECK(hipMemcpy(host, dev, big, hipMemcpyDeviceToHost));
      if (i >= 0) samples[i] = big / (now() - s) / 1e9;
    }
    gbs[dir] = median(samples, copy_reps);
  }
  for (size_t i = 0; i < big; i += 4096) {
    if (host[i] != 0x5a) {
      fprintf(stderr, "byte %zu came back as %d\n", i, host[i]);
      return 1;
    }
  }
  /* The same copies from pinned memory (hipHostMalloc: shared registered memory over the
     same-host transport, striped TCP from the buffer itself). */
  char* pinned;
  CHECK(hipHostMalloc((void**)&pinned, big, 0));
  memset(pinned, 0x3c, big);
  double pinned_gbs[2];
  for (int dir = 0; dir < 2; dir++) {
    for (int i = -1; i < copy_reps; i++) {
      double s = now();
      if (dir == 0) CHECK(hipMemcpy(dev, pinned, big, hipMemcpyHostToDevice));
      else CHECK(hipMemcpy(pinned, dev, big, hipMemcpyDeviceToHost));
      if (i >= 0) samples[i] = big / (now() - s) / 1e9;
    }
    pinned_gbs[dir] = median(samples, copy_reps);
  }
  for (size_t i = 0; i < big; i += 4096) {
    if (pinned[i] != 0x3c) {
      fprintf(stderr, "pinned byte %zu came back as %d\n", i, pinned[i]);
      return 1;
    }
  }
  CHECK(hipHostFree(pinned));
  CHECK(hipFree(dev));
  printf("sync_p50_us=%.1f launches_per_s=%.0f h2d_gbs=%.2f d2h_gbs=%.2f pinned_h2d_gbs=%.2f pinned_d2h_gbs=%.2f\n", sync_p50, launch_rate, gbs[0],
         gbs[1], pinned_gbs[0], pinned_gbs[1]);
  return 0;
}
