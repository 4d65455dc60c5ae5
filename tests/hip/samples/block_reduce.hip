// Sum of an array in two launches: the first reduces each block's part in shared memory (a tree
// of halving steps separated by __syncthreads) to one partial sum per block; the second, a
// single block, reduces the partial sums.
#include "sample_utils.hpp"

#include <numeric>
#include <vector>

constexpr unsigned int block_size = 256;

__global__ void block_reduce_kernel(const unsigned int* input, unsigned int* block_sums, unsigned int size)
{
    __shared__ unsigned int partial[block_size];

    // Each thread first adds up a strided set of items, so any size fits any grid.
    unsigned int sum = 0;
    for(unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x)
    {
        sum += input[i];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();

    for(unsigned int active = blockDim.x / 2; active > 0; active /= 2)
    {
        if(threadIdx.x < active)
        {
            partial[threadIdx.x] += partial[threadIdx.x + active];
        }
        __syncthreads();
    }
    if(threadIdx.x == 0)
    {
        block_sums[blockIdx.x] = partial[0];
    }
}

int main()
{
    constexpr unsigned int size      = 200003;
    constexpr unsigned int grid_size = 97;

    std::vector<unsigned int> input(size);
    for(unsigned int i = 0; i < size; ++i)
        input[i] = (i * 2654435761u) % 1000;

    unsigned int* d_input{};
    unsigned int* d_block_sums{};
    unsigned int* d_total{};
    HIP_CHECK(hipMalloc(&d_input, size * sizeof(unsigned int)));
    HIP_CHECK(hipMalloc(&d_block_sums, grid_size * sizeof(unsigned int)));
    HIP_CHECK(hipMalloc(&d_total, sizeof(unsigned int)));
    HIP_CHECK(hipMemcpy(d_input, input.data(), size * sizeof(unsigned int), hipMemcpyHostToDevice));

    block_reduce_kernel<<<dim3(grid_size), dim3(block_size), 0, hipStreamDefault>>>(d_input, d_block_sums, size);
    HIP_CHECK(hipGetLastError());
    block_reduce_kernel<<<dim3(1), dim3(block_size), 0, hipStreamDefault>>>(d_block_sums, d_total, grid_size);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    std::vector<unsigned int> block_sums(grid_size);
    unsigned int              total{};
    HIP_CHECK(hipMemcpy(block_sums.data(), d_block_sums, grid_size * sizeof(unsigned int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(&total, d_total, sizeof(unsigned int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_input));
    HIP_CHECK(hipFree(d_block_sums));
    HIP_CHECK(hipFree(d_total));

    // The CPU reference follows the same split into blocks, so each partial sum is checked.
    int errors = 0;
    for(unsigned int block = 0; block < grid_size; ++block)
    {
        unsigned int expected = 0;
        for(unsigned int i = block * block_size; i < size; i += grid_size * block_size)
            for(unsigned int j = i; j < i + block_size && j < size; ++j)
                expected += input[j];
        if(block_sums[block] != expected)
        {
            if(errors++ < 10)
                std::cout << "block " << block << " sum " << block_sums[block] << ", expected " << expected << std::endl;
        }
    }
    const unsigned int expected_total = std::accumulate(input.begin(), input.end(), 0u);
    if(total != expected_total)
    {
        std::cout << "total " << total << ", expected " << expected_total << std::endl;
        ++errors;
    }
    std::cout << "Sum of " << size << " items: " << total << " (" << grid_size << " partial sums, then one)."
              << std::endl;
    return report_validation(errors);
}
