// hip-remote: kernel-language sample for hipcc's passes (tests/tests/hipcc_device.rs compiles it
// for the host and for NVIDIA PTX, and checks the PTX with ptxas when one is given).
#include <hip/hip_runtime.h>

#include <cassert>
#include <cmath>
#include <cstdio>
#include <vector>

// Block reduction in shared memory.
__global__ void reduce_sum(const float* in, float* out, int n) {
  __shared__ float partial[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = i < (unsigned)n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, partial[0]);
}

// Warp reduction with shuffles, votes and the lane id.
__global__ void warp_reduce(const int* in, int* out, unsigned long long* ballots) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
  double d = __shfl_xor(static_cast<double>(v), 1);
  long long wide = __shfl_up_sync(0xffffffffull, static_cast<long long>(v), 1, 16);
  float f = __shfl(static_cast<float>(d), 0);
  unsigned long long mask = __ballot(v > 0);
  if (__any(v > 1) && __all_sync(__activemask(), 1)) mask |= 1ull << 40;
  if (__lane_id() == 0) {
    atomicAdd(out, v + static_cast<int>(f) + static_cast<int>(wide));
    ballots[blockIdx.x] = mask;
  }
  __syncwarp();
  // HIP's mask-less warp operations in a divergent branch act on the active lanes (a full-warp
  // mask would hang the warp here).
  if (threadIdx.x < 8) {
    unsigned long long odd = __ballot(threadIdx.x & 1);
    int from_lane3 = __shfl(static_cast<int>(threadIdx.x) * 10, 3);
    if (threadIdx.x == 0) ballots[gridDim.x + blockIdx.x] = odd | (static_cast<unsigned long long>(from_lane3) << 32);
  }
}

// Histogram with shared-memory atomics, then global ones.
__global__ void histogram(const unsigned char* data, int n, unsigned int* bins) {
  __shared__ unsigned int local[256];
  for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

// Tiled matrix multiply (TILE x TILE blocks), dynamic shared memory for the second tile.
#define TILE 16
HIP_DYNAMIC_SHARED(float, dynamic_tile)
__global__ void __launch_bounds__(256) matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE];
  float* tb = dynamic_tile;
  int row = hipBlockIdx_y * TILE + hipThreadIdx_y;
  int col = hipBlockIdx_x * TILE + hipThreadIdx_x;
  float acc = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? a[row * n + ac] : 0.0f;
    tb[threadIdx.y * TILE + threadIdx.x] = (br < n && col < n) ? __ldg(&b[br * n + col]) : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc = fmaf(ta[threadIdx.y][k], tb[k * TILE + threadIdx.x], acc);
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}

// printf with every argument kind, and assert.
__global__ void print_and_assert(const int* p, int fail_at) {
  const char* name = "device";
  const char* none = nullptr;
  long long big = -1234567890123LL;
  printf("thread %d of %u: %f %s %p %x %lld %s %c %5.2e%%\n", static_cast<int>(threadIdx.x), blockDim.x,
         1.5f * threadIdx.x, name, p, 0xbeefu, big, none, 'k', 2.0);
  printf("no arguments\n");
  assert(static_cast<int>(threadIdx.x) != fail_at);
}

// float4 arithmetic and the make_* helpers.
__global__ void vector_math(const float4* in, float4* out, int2* ints) {
  int i = threadIdx.x;
  float4 v = in[i] * 2.0f + make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  v -= in[i] / 4.0f;
  v = -v + 0.5f * v;
  out[i] = v;
  int2 k = make_int2(i, -i);
  k = (k << 1) ^ make_int2(3, 5);
  k %= 7;
  if (k != make_int2(0, 0)) ints[i] = k;
  dim3 block = blockDim;
  uint3 idx = threadIdx;
  if (block.x == 0 || idx.z != 0) ints[i] = make_int2(-1, -1);
}

// Math functions: the C and C++ names, float and double, and the fast intrinsics.
__device__ float float_math(float x) {
  return sqrtf(x) + rsqrtf(x + 1.0f) + expf(x) + logf(x + 1.0f) + sinf(x) + cosf(x) + powf(x, 1.5f) + fabsf(-x) +
         fminf(x, 1.0f) + fmaxf(x, 2.0f) + floorf(x) + ceilf(x) + fmaf(x, x, x) + __expf(x) + __logf(x + 1.0f) +
         __sinf(x) + __cosf(x) + __powf(x, 2.0f) + __fdividef(x, 3.0f) + tanf(x) + exp2f(x) + log2f(x + 1.0f) +
         log10f(x + 1.0f) + roundf(x) + truncf(x) + std::exp(x) + std::sin(x) + std::sqrt(x) + std::pow(x, 2.0f) +
         std::log(x + 1.0f) + std::fabs(x) + std::floor(x);
}
__device__ double double_math(double x) {
  return sqrt(x) + rsqrt(x + 1.0) + exp(x) + log(x + 1.0) + sin(x) + cos(x) + pow(x, 1.5) + fabs(-x) + fmin(x, 1.0) +
         fmax(x, 2.0) + floor(x) + ceil(x) + fma(x, x, x) + tan(x) + std::exp(x) + std::cos(x) + std::pow(x, 3.0) +
         __dsqrt_rn(x) + __fma_rn(x, 2.0, 1.0) + round(x) + copysign(x, -1.0);
}
__global__ void math_kernel(const float* in, float* out, double* dout, unsigned long long* bits) {
  int i = threadIdx.x;
  out[i] = float_math(in[i]);
  dout[i] = double_math(static_cast<double>(in[i]));
  bits[i] = static_cast<unsigned long long>(__popc(i) + __popcll(~0ull) + __clz(i) + __ffs(i) + __clzll(i)) +
            __brev(static_cast<unsigned int>(i)) + __brevll(static_cast<unsigned long long>(i)) + clock64() +
            static_cast<unsigned long long>(__float_as_int(in[i]));
}

// Atomics of every kind, on global and shared memory, including the scoped forms.
__global__ void atomics(int* gi, unsigned int* gu, unsigned long long* gull, float* gf, double* gd) {
  __shared__ int si;
  __shared__ double sd;
  if (threadIdx.x == 0) {
    si = 0;
    sd = 0.0;
  }
  __syncthreads();
  atomicAdd(&si, 1);
  atomicAdd(&sd, 0.5);
  atomicSub(gi, 1);
  atomicExch(gf, 2.0f);
  atomicMin(gi + 1, -3);
  atomicMax(gu, 7u);
  atomicMin(gf + 1, 1.0f);
  atomicMax(gd + 1, 3.0);
  atomicInc(gu + 1, 100u);
  atomicDec(gu + 2, 100u);
  atomicCAS(gi + 2, 0, 5);
  atomicCAS(gull, 0ull, 9ull);
  atomicAnd(gu + 3, 0xf0u);
  atomicOr(gu + 3, 0x01u);
  atomicXor(gull + 1, 0xffull);
  atomicAdd(gull + 2, 1ull);
  atomicAdd(gd, 1.0);
  atomicAdd_system(gi + 3, 1);
  atomicAdd_block(gf + 2, 1.0f);
  atomicOr_system(gu + 5, 2u);
  atomicMax_block(gi + 5, 3);
  atomicCAS_system(gu + 4, 0u, 1u);
  atomicExch_block(gull + 3, 4ull);
  __threadfence();
  __threadfence_block();
  __threadfence_system();
  int all = __syncthreads_count(si > 0) + __syncthreads_and(1) + __syncthreads_or(0);
  if (threadIdx.x == 0) gi[4] = all;
}

// A template kernel launched with explicit arguments and through hipLaunchKernelGGL.
template <typename T, int Scale>
__global__ void scale(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * static_cast<T>(Scale);
}

int main() {
  const int n = 1024;
  std::vector<float> host(n, 1.0f);
  float* d = nullptr;
  if (hipMalloc(reinterpret_cast<void**>(&d), n * sizeof(float)) != hipSuccess) return 1;
  hipMemcpy(d, host.data(), n * sizeof(float), hipMemcpyHostToDevice);
  float* sum = nullptr;
  hipMalloc(reinterpret_cast<void**>(&sum), sizeof(float));
  reduce_sum<<<n / 256, 256>>>(d, sum, n);
  scale<float, 3><<<dim3(n / 256), dim3(256), 0, 0>>>(d, n);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float, 2>), dim3(n / 256), dim3(256), 0, 0, d, n);
  hipLaunchKernelGGL(matmul, dim3(1, 1), dim3(TILE, TILE), TILE * TILE * sizeof(float), nullptr, d, d, d, 16);
  hipLaunchKernelGGL(print_and_assert, dim3(1), dim3(4), 0, 0, nullptr, -1);
  hipDeviceSynchronize();
  hipMemcpy(host.data(), d, n * sizeof(float), hipMemcpyDeviceToHost);
  float4 on_host = make_float4(1.0f, 2.0f, 3.0f, 4.0f) * 2.0f - make_float4(0.5f, 0.5f, 0.5f, 0.5f);
  printf("host printf still works: %f, host vector operators too: %f\n", host[0], on_host.w);
  hipFree(d);
  hipFree(sum);
  return 0;
}
