// Warp-level sums with __shfl_down: each warp adds up its lanes' values without shared memory.
// The warp size is the device's (hipDeviceProp_t::warpSize on the host, warpSize in the kernel):
// 32 on NVIDIA GPUs, 64 on most AMD ones; the program is right for either.
#include "sample_utils.hpp"

#include <vector>

__global__ void warp_reduce_kernel(const int* input, int* warp_sums, unsigned int size)
{
    const unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    int                value = index < size ? input[index] : 0;
    // After the step with offset 1, lane 0 holds the sum of all lanes of its warp.
    for(int offset = warpSize / 2; offset > 0; offset /= 2)
    {
        value += __shfl_down(value, offset);
    }
    if(threadIdx.x % warpSize == 0)
    {
        warp_sums[index / warpSize] = value;
    }
}

int main()
{
    hipDeviceProp_t props;
    HIP_CHECK(hipGetDeviceProperties(&props, 0));
    const unsigned int warp_size = props.warpSize;
    if(warp_size == 0 || (warp_size & (warp_size - 1)) != 0)
    {
        std::cout << "The device reports an impossible warp size " << warp_size << "." << std::endl;
        return error_exit_code;
    }

    constexpr unsigned int size       = 10000;
    const unsigned int     block_size = 4 * warp_size;
    const unsigned int     grid_size  = ceiling_div(size, block_size);
    const unsigned int     warps      = grid_size * block_size / warp_size;

    std::vector<int> input(size);
    for(unsigned int i = 0; i < size; ++i)
        input[i] = static_cast<int>((i * 37) % 101) - 50;

    int* d_input{};
    int* d_warp_sums{};
    HIP_CHECK(hipMalloc(&d_input, size * sizeof(int)));
    HIP_CHECK(hipMalloc(&d_warp_sums, warps * sizeof(int)));
    HIP_CHECK(hipMemcpy(d_input, input.data(), size * sizeof(int), hipMemcpyHostToDevice));

    warp_reduce_kernel<<<dim3(grid_size), dim3(block_size), 0, hipStreamDefault>>>(d_input, d_warp_sums, size);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    std::vector<int> warp_sums(warps);
    HIP_CHECK(hipMemcpy(warp_sums.data(), d_warp_sums, warps * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_input));
    HIP_CHECK(hipFree(d_warp_sums));

    int errors = 0;
    for(unsigned int warp = 0; warp < warps; ++warp)
    {
        int expected = 0;
        for(unsigned int i = warp * warp_size; i < (warp + 1) * warp_size && i < size; ++i)
            expected += input[i];
        if(warp_sums[warp] != expected)
        {
            if(errors++ < 10)
                std::cout << "warp " << warp << " sum " << warp_sums[warp] << ", expected " << expected << std::endl;
        }
    }
    std::cout << "Summed " << size << " items in " << warps << " warps of " << warp_size << " lanes." << std::endl;
    return report_validation(errors);
}
