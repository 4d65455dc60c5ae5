// First-launch cost of a hipcc-built program: the first <<<>>> launch of a fat binary loads
// its module (NVIDIA: the driver JIT-compiles the PTX or finds it in its cache; host backend
// and AMD GPUs without a code object: the worker compiles the device source or finds it in
// its compile cache), later launches do not. Prints both, in milliseconds, on one line:
//   first_launch_ms=<first launch + sync> next_launch_ms=<second launch + sync>
// Run it twice against a fresh worker: the first run pays the compile, the second hits the
// cache. See docs/BENCHMARKS.md ("First launch of a hipcc program").
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>

#define HIP_CHECK(expr)                                                                     \
  do {                                                                                      \
    hipError_t e_ = (expr);                                                                 \
    if (e_ != hipSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, hipGetErrorString(e_)); \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

// Enough device code that compiling it is not trivial: a templated tiled kernel, instanced.
template <typename T, int TILE>
__global__ void tiled_scale(const T* in, T* out, int n, T factor) {
  __shared__ T tile[TILE];
  int i = blockIdx.x * TILE + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  if (i < n) out[i] = tile[(threadIdx.x + 1) % TILE] * factor;
}

int main() {
  const int n = 1 << 12;
  float *in, *out;
  HIP_CHECK(hipMalloc(&in, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&out, n * sizeof(float)));
  HIP_CHECK(hipMemset(in, 0, n * sizeof(float)));
  HIP_CHECK(hipDeviceSynchronize());
  double ms[2];
  for (int round = 0; round < 2; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    tiled_scale<float, 128><<<n / 128, 128>>>(in, out, n, 2.0f);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    ms[round] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("first_launch_ms=%.2f next_launch_ms=%.3f\n", ms[0], ms[1]);
  HIP_CHECK(hipFree(in));
  HIP_CHECK(hipFree(out));
  return 0;
}
