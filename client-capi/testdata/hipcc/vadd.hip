// A tiny <<<>>> program, built by build.sh with Debian 12's hipcc (ROCm 5.2) for the fat-binary
// tests: one kernel, one device variable, launched and read back through the HIP runtime.
// On a GPU worker of a matching architecture it prints "result: ok"; on the host backend
// (architecture "host") the launch fails with hipErrorNoBinaryForGpu.
#include <hip/hip_runtime.h>
#include <stdio.h>

__device__ int scale;

__global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = scale * (a[i] + b[i]);
}

static int report(const char *what, hipError_t e) {
    printf("%s: %d %s\n", what, (int)e, hipGetErrorName(e));
    return e != hipSuccess;
}

int main(void) {
    enum { N = 64 };
    float host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (float)i;
    float *a = NULL, *c = NULL;
    if (report("malloc", hipMalloc((void **)&a, sizeof host)) || report("malloc", hipMalloc((void **)&c, sizeof host)))
        return 2;
    report("copy", hipMemcpy(a, host, sizeof host, hipMemcpyHostToDevice));
    int two = 2;
    int failed = report("symbol", hipMemcpyToSymbol(HIP_SYMBOL(scale), &two, sizeof two, 0, hipMemcpyHostToDevice));
    vadd<<<1, N>>>(a, a, c, N);
    failed |= report("launch", hipGetLastError());
    failed |= report("sync", hipDeviceSynchronize());
    if (failed) return 1;
    hipMemcpy(out, c, sizeof out, hipMemcpyDeviceToHost);
    for (int i = 0; i < N; i++)
        if (out[i] != 4.0f * i) { printf("result: wrong at %d\n", i); return 1; }
    printf("result: ok\n");
    return 0;
}
