// A kernel writing through a wild pointer (docs/ISOLATION.md): the fault must reach this
// client as an error, stay reported on every later call (a GPU context is lost after such a
// fault; a host-backend session process dies), and leave other clients of the worker alone.
// Prints "FAULT <sync error>" and "STICKY <error of a later copy> <error of a later malloc>",
// then "PASS"; exits 1 when a wild write, or a call after it, reports success.
#include <hip/hip_runtime.h>
#include <stdint.h>
#include <stdio.h>

__global__ void scribble(int* target) {
    target[threadIdx.x] = 42;
}

int main() {
    int* d = nullptr;
    if (hipMalloc(&d, 4096) != hipSuccess) {
        printf("FAIL: hipMalloc before the fault\n");
        return 1;
    }
    // An address no allocation covers.
    int* wild = reinterpret_cast<int*>(static_cast<uintptr_t>(0x10));
    scribble<<<1, 32>>>(wild);
    hipError_t launched = hipGetLastError();
    hipError_t synced = hipDeviceSynchronize();
    printf("LAUNCH %s\n", hipGetErrorName(launched));
    if (synced == hipSuccess && launched == hipSuccess) {
        printf("FAIL: a write through a wild pointer reported success\n");
        return 1;
    }
    printf("FAULT %s: %s\n", hipGetErrorName(synced), hipGetErrorString(synced));
    int host[4] = {0};
    hipError_t copied = hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost);
    int* more = nullptr;
    hipError_t allocated = hipMalloc(&more, 64);
    printf("STICKY %s %s\n", hipGetErrorName(copied), hipGetErrorName(allocated));
    if (copied == hipSuccess || allocated == hipSuccess) {
        printf("FAIL: a call after the fault reported success\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
