// The seed's vector add, as HIP kernel source. build.sh turns it into the code object each
// kind of worker runs: PTX for NVIDIA (clang, no CUDA install needed), and the host backend's
// module format is written by hand in vadd_host.c (see docs/HOST_MODULES.md).
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
