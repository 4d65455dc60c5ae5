// Built by AMD's own hipcc, this program carries AMD code objects only. Against a worker
// whose device none of them is for (the host backend, an NVIDIA GPU), its first launch fails
// with hipErrorNoBinaryForGpu, reported as a HIP runtime reports it: hipGetLastError returns
// it once (and then hipSuccess), with HIP's name and description. Prints "PASS" when so.
#include <hip/hip_runtime.h>

#include <cstring>
#include <iostream>

__global__ void fill_kernel(int* out, int value)
{
    out[threadIdx.x] = value;
}

int main()
{
    int* d_out{};
    if(hipMalloc(&d_out, 64 * sizeof(int)) != hipSuccess)
    {
        std::cout << "hipMalloc failed" << std::endl;
        return 1;
    }
    fill_kernel<<<dim3(1), dim3(64), 0, hipStreamDefault>>>(d_out, 42);
    const hipError_t launched = hipGetLastError();
    const hipError_t after    = hipGetLastError();
    std::cout << "first launch: " << hipGetErrorName(launched) << " (" << static_cast<int>(launched)
              << "): " << hipGetErrorString(launched) << std::endl;
    std::cout << "hipGetLastError after it: " << hipGetErrorName(after) << std::endl;
    const bool right = launched == hipErrorNoBinaryForGpu && after == hipSuccess
                       && std::strcmp(hipGetErrorName(launched), "hipErrorNoBinaryForGpu") == 0
                       && std::strcmp(hipGetErrorString(launched), "no kernel image is available for execution on the device") == 0;
    // The memory calls still work: only the kernels cannot run here.
    const bool freed = hipFree(d_out) == hipSuccess;
    if(!right || !freed)
    {
        std::cout << "expected hipErrorNoBinaryForGpu (" << static_cast<int>(hipErrorNoBinaryForGpu)
                  << ") from the first launch, then hipSuccess, and a working hipFree" << std::endl;
        return 1;
    }
    std::cout << "PASS" << std::endl;
    return 0;
}
