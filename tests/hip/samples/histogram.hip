// A 256-bin histogram of bytes: each block counts its part into a histogram in shared memory
// (atomicAdd on shared memory), then adds it into the global one (atomicAdd on global memory).
#include "sample_utils.hpp"

#include <vector>

constexpr unsigned int bin_count = 256;

__global__ void histogram_kernel(const unsigned char* data, unsigned int size, unsigned int* histogram)
{
    __shared__ unsigned int block_histogram[bin_count];
    for(unsigned int bin = threadIdx.x; bin < bin_count; bin += blockDim.x)
    {
        block_histogram[bin] = 0;
    }
    __syncthreads();

    for(unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x)
    {
        atomicAdd(&block_histogram[data[i]], 1u);
    }
    __syncthreads();

    for(unsigned int bin = threadIdx.x; bin < bin_count; bin += blockDim.x)
    {
        if(block_histogram[bin] != 0)
        {
            atomicAdd(&histogram[bin], block_histogram[bin]);
        }
    }
}

int main()
{
    constexpr unsigned int size       = 100000;
    constexpr unsigned int block_size = 128;
    constexpr unsigned int grid_size  = 24;

    // Skewed data, so some bins see many more collisions than others.
    std::vector<unsigned char> data(size);
    unsigned int               state = 12345;
    for(unsigned int i = 0; i < size; ++i)
    {
        state   = state * 1103515245u + 12345u;
        data[i] = static_cast<unsigned char>((state >> 16) % (i % 3 == 0 ? 16 : 256));
    }

    unsigned char* d_data{};
    unsigned int*  d_histogram{};
    HIP_CHECK(hipMalloc(&d_data, size));
    HIP_CHECK(hipMalloc(&d_histogram, bin_count * sizeof(unsigned int)));
    HIP_CHECK(hipMemcpy(d_data, data.data(), size, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(d_histogram, 0, bin_count * sizeof(unsigned int)));

    histogram_kernel<<<dim3(grid_size), dim3(block_size), 0, hipStreamDefault>>>(d_data, size, d_histogram);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    std::vector<unsigned int> histogram(bin_count);
    HIP_CHECK(hipMemcpy(histogram.data(), d_histogram, bin_count * sizeof(unsigned int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_data));
    HIP_CHECK(hipFree(d_histogram));

    std::vector<unsigned int> expected(bin_count, 0);
    for(unsigned char byte : data)
        ++expected[byte];
    int errors = 0;
    for(unsigned int bin = 0; bin < bin_count; ++bin)
    {
        if(histogram[bin] != expected[bin])
        {
            if(errors++ < 10)
                std::cout << "bin " << bin << ": " << histogram[bin] << ", expected " << expected[bin] << std::endl;
        }
    }
    std::cout << "Counted " << size << " bytes into " << bin_count << " bins." << std::endl;
    return report_validation(errors);
}
