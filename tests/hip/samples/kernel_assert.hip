// A device-side assert that fails: the launch itself succeeds, and the failure is reported at
// the next synchronization as hipErrorAssert, as a HIP runtime reports a device assert.
#include "sample_utils.hpp"

#include <cassert>
#include <vector>

__global__ void checked_square_kernel(const int* input, int* output, unsigned int size)
{
    const unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    if(index < size)
    {
        assert(input[index] >= 0);
        output[index] = input[index] * input[index];
    }
}

int main()
{
    constexpr unsigned int size       = 1000;
    constexpr unsigned int block_size = 128;
    constexpr unsigned int bad_index  = 613;

    std::vector<int> input(size);
    for(unsigned int i = 0; i < size; ++i)
        input[i] = i == bad_index ? -1 : static_cast<int>(i);

    int* d_input{};
    int* d_output{};
    HIP_CHECK(hipMalloc(&d_input, size * sizeof(int)));
    HIP_CHECK(hipMalloc(&d_output, size * sizeof(int)));
    HIP_CHECK(hipMemcpy(d_input, input.data(), size * sizeof(int), hipMemcpyHostToDevice));

    checked_square_kernel<<<dim3(ceiling_div(size, block_size)), dim3(block_size), 0, hipStreamDefault>>>(d_input,
                                                                                                          d_output,
                                                                                                          size);
    HIP_CHECK(hipGetLastError());
    const hipError_t synchronized = hipDeviceSynchronize();
    std::cout << "hipDeviceSynchronize returned " << hipGetErrorName(synchronized) << " ("
              << static_cast<int>(synchronized) << "): " << hipGetErrorString(synchronized) << std::endl;
    if(synchronized != hipErrorAssert)
    {
        std::cout << "Expected hipErrorAssert (" << static_cast<int>(hipErrorAssert) << ") from the failed assert."
                  << std::endl;
        return error_exit_code;
    }
    // After a device assert the device is unusable (on GPUs the error is sticky): stop here.
    std::cout << "PASS" << std::endl;
    return 0;
}
