// y = a*x + y on the device, with a template kernel and a __device__ helper; the host checks
// every element (report.cpp). Also asks hipRTC its version: the library CMake's hiprtc package
// named is loaded and answers.
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cstdio>
#include <vector>

#include "report.h"

template <typename T>
__device__ T fma_of(T a, T x, T y) { return a * x + y; }

template <typename T>
__global__ void saxpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fma_of(a, x[i], y[i]);
}

int main() {
    const int n = 10000;
    const float a = 2.5f;
    std::vector<float> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) {
        x[i] = 0.5f * i;
        y[i] = 1000.0f - i;
    }
    float *dx = nullptr, *dy = nullptr;
    check(hipMalloc(&dx, n * sizeof(float)), "hipMalloc");
    check(hipMalloc(&dy, n * sizeof(float)), "hipMalloc");
    check(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice), "hipMemcpy");
    check(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice), "hipMemcpy");
    saxpy<float><<<(n + 255) / 256, 256>>>(a, dx, dy, n);
    check(hipGetLastError(), "launch");
    check(hipMemcpy(out.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost), "hipMemcpy");
    int rtc_major = 0, rtc_minor = 0;
    if (hiprtcVersion(&rtc_major, &rtc_minor) != HIPRTC_SUCCESS) {
        std::printf("hiprtcVersion failed\n");
        return 1;
    }
    int bad = count_mismatches(a, x.data(), y.data(), out.data(), n);
    std::printf("style %s: %d of %d elements wrong; hiprtc %d.%d\n", SAXPY_STYLE, bad, n, rtc_major, rtc_minor);
    check(hipFree(dx), "hipFree");
    check(hipFree(dy), "hipFree");
    if (bad == 0) std::printf("PASSED\n");
    return bad == 0 ? 0 : 1;
}
