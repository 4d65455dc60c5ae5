// hip-remote: device math, one function per row, for checking results against a host reference
// (tests/hip/device_check.py runs it on an NVIDIA GPU; tests/tests/hipcc_device.rs compiles it).
#include <hip/hip_runtime.h>

#define FLOAT_FUNCTIONS(X)                                                                        \
  X(sqrtf(x)) X(rsqrtf(x)) X(expf(x)) X(exp2f(x)) X(logf(x)) X(log2f(x)) X(log10f(x)) X(sinf(x)) \
  X(cosf(x)) X(tanf(x)) X(powf(x, 1.7f)) X(fabsf(-x)) X(floorf(x)) X(ceilf(x)) X(roundf(x))     \
  X(truncf(x)) X(rintf(x)) X(fminf(x, 0.5f)) X(fmaxf(x, 0.5f)) X(fmaf(x, x, 1.0f))              \
  X(__expf(x)) X(__logf(x)) X(__sinf(x)) X(__cosf(x)) X(__powf(x, 1.7f)) X(std::exp(x))         \
  X(std::sin(x)) X(std::pow(x, 2.0f))
#define DOUBLE_FUNCTIONS(X)                                                                        \
  X(sqrt(x)) X(rsqrt(x)) X(exp(x)) X(exp2(x)) X(log(x)) X(log2(x)) X(log10(x)) X(sin(x))          \
  X(cos(x)) X(tan(x)) X(pow(x, 1.7)) X(fabs(-x)) X(floor(x)) X(ceil(x)) X(round(x)) X(trunc(x))   \
  X(rint(x)) X(fmin(x, 0.5)) X(fmax(x, 0.5)) X(fma(x, x, 1.0))

__global__ void float_functions(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  int row = 0;
#define STORE(expr) out[(row++) * n + i] = (expr);
  FLOAT_FUNCTIONS(STORE)
#undef STORE
}

__global__ void double_functions(const double* in, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = in[i];
  int row = 0;
#define STORE(expr) out[(row++) * n + i] = (expr);
  DOUBLE_FUNCTIONS(STORE)
#undef STORE
}
