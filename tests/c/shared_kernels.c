/*
 * Kernels that need a block's threads to cooperate, compiled by hiprtc on the worker: a
 * tiled matrix multiply in __shared__ memory, a block reduction with __syncthreads, a
 * warp-shuffle reduction (warpSize as the device reports it), a histogram with atomics on
 * shared memory, a block reversal through dynamic shared memory (extern __shared__), and a
 * block using all the dynamic shared memory `sharedMemPerBlock` promises with no
 * hipFuncSetAttribute (HIP has no opt-in; one byte more is hipErrorOutOfMemory, as in ROCm).
 * Each result is checked against a CPU reference.
 */
#include "rtc_module.h"

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "#define TILE 16\n"
    "extern \"C\" __global__ void matmul(const float* a, const float* b, float* c, int n) {\n"
    "  __shared__ float ta[TILE][TILE];\n"
    "  __shared__ float tb[TILE][TILE];\n"
    "  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;\n"
    "  float sum = 0.0f;\n"
    "  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {\n"
    "    int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;\n"
    "    ta[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? a[row * n + ac] : 0.0f;\n"
    "    tb[threadIdx.y][threadIdx.x] = (br < n && col < n) ? b[br * n + col] : 0.0f;\n"
    "    __syncthreads();\n"
    "    for (int k = 0; k < TILE; ++k) sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (row < n && col < n) c[row * n + col] = sum;\n"
    "}\n"
    "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
    "  __shared__ int part[256];\n"
    "  part[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];\n"
    "  __syncthreads();\n"
    "  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {\n"
    "    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = part[0];\n"
    "}\n"
    "extern \"C\" __global__ void warp_sum(const float* in, float* out) {\n"
    "  float v = in[blockIdx.x * blockDim.x + threadIdx.x];\n"
    "  for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down(v, off);\n"
    "  if (threadIdx.x % warpSize == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / warpSize] = v;\n"
    "}\n"
    "extern \"C\" __global__ void histogram(const unsigned char* in, int n, unsigned int* bins) {\n"
    "  __shared__ unsigned int local[64];\n"
    "  for (int b = threadIdx.x; b < 64; b += blockDim.x) local[b] = 0;\n"
    "  __syncthreads();\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
    "    atomicAdd(&local[in[i] & 63], 1u);\n"
    "  __syncthreads();\n"
    "  for (int b = threadIdx.x; b < 64; b += blockDim.x) atomicAdd(&bins[b], local[b]);\n"
    "}\n"
    "extern \"C\" __global__ void reverse(double* data) {\n"
    "  extern __shared__ double scratch[];\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  scratch[threadIdx.x] = data[i];\n"
    "  __syncthreads();\n"
    "  data[i] = scratch[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void fill_shared(unsigned* out, unsigned words) {\n"
    "  extern __shared__ unsigned big[];\n"
    "  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) big[i] = i * 2654435761u;\n"
    "  __syncthreads();\n"
    "  unsigned sum = 0;\n"
    "  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) sum += big[words - 1 - i];\n"
    "  atomicAdd(out, sum);\n"
    "}\n";

static void* upload(const void* host, size_t len) {
  void* dev;
  CHECK(hipMalloc(&dev, len));
  CHECK(hipMemcpy(dev, host, len, hipMemcpyHostToDevice));
  return dev;
}

static void download(void* host, const void* dev, size_t len) {
  CHECK(hipMemcpy(host, dev, len, hipMemcpyDeviceToHost));
}

int main(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  const int warp = props.warpSize;
  if (warp != 32 && warp != 64) { printf("FAIL warpSize %d\n", warp); return 1; }
  hipModule_t module = rtc_module(SOURCE, "shared_kernels.hip", props.gcnArchName);
  hipFunction_t matmul, block_sum, warp_sum, histogram, reverse, fill_shared;
  CHECK(hipModuleGetFunction(&matmul, module, "matmul"));
  CHECK(hipModuleGetFunction(&block_sum, module, "block_sum"));
  CHECK(hipModuleGetFunction(&warp_sum, module, "warp_sum"));
  CHECK(hipModuleGetFunction(&histogram, module, "histogram"));
  CHECK(hipModuleGetFunction(&reverse, module, "reverse"));
  CHECK(hipModuleGetFunction(&fill_shared, module, "fill_shared"));

  /* Tiled matrix multiply, n not a multiple of the tile. Small integers: exact in float. */
  enum { N = 70 };
  static float a[N * N], b[N * N], c[N * N];
  for (int i = 0; i < N * N; i++) { a[i] = (float)(i % 7 - 3); b[i] = (float)(i % 5 - 2); }
  float *da = upload(a, sizeof a), *db = upload(b, sizeof b), *dc;
  CHECK(hipMalloc((void**)&dc, sizeof c));
  int n = N;
  void* mm_args[] = {&da, &db, &dc, &n};
  CHECK(hipModuleLaunchKernel(matmul, (N + 15) / 16, (N + 15) / 16, 1, 16, 16, 1, 0, NULL, mm_args, NULL));
  download(c, dc, sizeof c);
  for (int r = 0; r < N; r++)
    for (int col = 0; col < N; col++) {
      float want = 0.0f;
      for (int k = 0; k < N; k++) want += a[r * N + k] * b[k * N + col];
      if (c[r * N + col] != want) { printf("FAIL matmul[%d][%d] = %g, want %g\n", r, col, c[r * N + col], want); return 1; }
    }
  printf("tiled matmul %dx%d in shared memory verified\n", N, N);

  /* Block reduction. */
  enum { BLOCKS = 9, THREADS = 256 };
  static int values[BLOCKS * THREADS];
  int sums[BLOCKS];
  for (int i = 0; i < BLOCKS * THREADS; i++) values[i] = (i * 7919) % 2001 - 1000;
  int *dvalues = upload(values, sizeof values), *dsums;
  CHECK(hipMalloc((void**)&dsums, sizeof sums));
  void* bs_args[] = {&dvalues, &dsums};
  CHECK(hipModuleLaunchKernel(block_sum, BLOCKS, 1, 1, THREADS, 1, 1, 0, NULL, bs_args, NULL));
  download(sums, dsums, sizeof sums);
  for (int blk = 0; blk < BLOCKS; blk++) {
    int want = 0;
    for (int t = 0; t < THREADS; t++) want += values[blk * THREADS + t];
    if (sums[blk] != want) { printf("FAIL block_sum[%d] = %d, want %d\n", blk, sums[blk], want); return 1; }
  }
  printf("block reduction with __syncthreads verified\n");

  /* Warp-shuffle reduction: one sum per warp. */
  static float fin[BLOCKS * THREADS], fout[BLOCKS * THREADS];
  for (int i = 0; i < BLOCKS * THREADS; i++) fin[i] = (float)(i % 13) - 6.0f;
  float *dfin = upload(fin, sizeof fin), *dfout;
  CHECK(hipMalloc((void**)&dfout, sizeof fout));
  void* ws_args[] = {&dfin, &dfout};
  CHECK(hipModuleLaunchKernel(warp_sum, BLOCKS, 1, 1, THREADS, 1, 1, 0, NULL, ws_args, NULL));
  download(fout, dfout, BLOCKS * THREADS / warp * sizeof(float));
  for (int w = 0; w < BLOCKS * THREADS / warp; w++) {
    float want = 0.0f;
    for (int l = 0; l < warp; l++) want += fin[w * warp + l];
    if (fout[w] != want) { printf("FAIL warp_sum[%d] = %g, want %g\n", w, fout[w], want); return 1; }
  }
  printf("warp-shuffle reduction (warpSize %d) verified\n", warp);

  /* Histogram with shared-memory atomics. */
  enum { BYTES = 50000 };
  static unsigned char bytes[BYTES];
  unsigned int bins[64] = {0}, want_bins[64] = {0};
  for (int i = 0; i < BYTES; i++) { bytes[i] = (unsigned char)((i * 2654435761u) >> 24); want_bins[bytes[i] & 63]++; }
  unsigned char* dbytes = upload(bytes, sizeof bytes);
  unsigned int* dbins = upload(bins, sizeof bins);
  int nbytes = BYTES;
  void* h_args[] = {&dbytes, &nbytes, &dbins};
  CHECK(hipModuleLaunchKernel(histogram, 7, 1, 1, 128, 1, 1, 0, NULL, h_args, NULL));
  download(bins, dbins, sizeof bins);
  for (int i = 0; i < 64; i++)
    if (bins[i] != want_bins[i]) { printf("FAIL bin %d = %u, want %u\n", i, bins[i], want_bins[i]); return 1; }
  printf("histogram with shared atomics verified\n");

  /* Dynamic shared memory: each block reverses its slice. */
  enum { RB = 4, RT = 96 };
  static double rev[RB * RT];
  for (int i = 0; i < RB * RT; i++) rev[i] = i * 0.5;
  double* drev = upload(rev, sizeof rev);
  void* r_args[] = {&drev};
  CHECK(hipModuleLaunchKernel(reverse, RB, 1, 1, RT, 1, 1, RT * sizeof(double), NULL, r_args, NULL));
  double back[RB * RT];
  download(back, drev, sizeof back);
  for (int i = 0; i < RB * RT; i++) {
    int blk = i / RT, t = i % RT;
    if (back[i] != rev[blk * RT + RT - 1 - t]) { printf("FAIL reverse[%d] = %g\n", i, back[i]); return 1; }
  }
  printf("dynamic shared memory verified\n");

  /* All of sharedMemPerBlock, no opt-in: each thread reads words other threads wrote. */
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  unsigned words = (unsigned)(prop.sharedMemPerBlock / sizeof(unsigned));
  unsigned want_sum = 0;
  for (unsigned i = 0; i < words; i++) want_sum += i * 2654435761u;
  unsigned zero = 0;
  unsigned* dsum = upload(&zero, sizeof zero);
  void* f_args[] = {&dsum, &words};
  CHECK(hipModuleLaunchKernel(fill_shared, 1, 1, 1, 128, 1, 1, (unsigned)prop.sharedMemPerBlock, NULL, f_args, NULL));
  unsigned got_sum = 0;
  download(&got_sum, dsum, sizeof got_sum);
  REQUIRE(got_sum == want_sum, "a block using all %zu bytes of shared memory summed %u, want %u", prop.sharedMemPerBlock, got_sum, want_sum);
  EXPECT_ERR(hipModuleLaunchKernel(fill_shared, 1, 1, 1, 128, 1, 1, (unsigned)prop.sharedMemPerBlock + 1, NULL, f_args, NULL),
             hipErrorOutOfMemory);
  printf("all %zu bytes of dynamic shared memory verified, one more refused\n", prop.sharedMemPerBlock);

  CHECK(hipModuleUnload(module));
  printf("PASS shared_kernels\n");
  return 0;
}
