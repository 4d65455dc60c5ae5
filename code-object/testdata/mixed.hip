// Kernels whose argument layouts the metadata tests check against the C ABI (build.sh).
#include <hip/hip_runtime.h>

struct Pair {
    char tag;   // offset 0
    double value; // offset 8: the struct is 16 bytes, 8-aligned
};

extern "C" __global__ void mixed(char c, short s, int i, double d, Pair p, float* out) {
    __shared__ float scratch[64];
    scratch[threadIdx.x % 64] = c + s + i + d + p.tag + p.value;
    __syncthreads();
    // blockDim makes v5 code objects carry hidden arguments (the implicit-argument block).
    out[blockIdx.x * blockDim.x + threadIdx.x] = scratch[(threadIdx.x + 1) % 64];
}

extern "C" __global__ void no_args() {}

extern "C" __global__ void tail_char(double* out, char last) { out[0] = last; }
