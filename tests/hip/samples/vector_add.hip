// Vector addition: one thread per element, a grid that does not divide the size evenly.
#include "sample_utils.hpp"

#include <vector>

__global__ void vector_add_kernel(float* out, const float* a, const float* b, const unsigned int size)
{
    const unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    if(index < size)
    {
        out[index] = a[index] + b[index];
    }
}

int main()
{
    constexpr unsigned int size       = 100000;
    constexpr unsigned int block_size = 256;
    constexpr size_t       size_bytes = size * sizeof(float);

    std::vector<float> a(size), b(size), out(size);
    for(unsigned int i = 0; i < size; ++i)
    {
        a[i] = static_cast<float>(i) * 0.5f;
        b[i] = static_cast<float>(size - i) * 0.25f;
    }

    float* d_a{};
    float* d_b{};
    float* d_out{};
    HIP_CHECK(hipMalloc(&d_a, size_bytes));
    HIP_CHECK(hipMalloc(&d_b, size_bytes));
    HIP_CHECK(hipMalloc(&d_out, size_bytes));
    HIP_CHECK(hipMemcpy(d_a, a.data(), size_bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_b, b.data(), size_bytes, hipMemcpyHostToDevice));

    const unsigned int grid_size = ceiling_div(size, block_size);
    vector_add_kernel<<<dim3(grid_size), dim3(block_size), 0, hipStreamDefault>>>(d_out, d_a, d_b, size);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    HIP_CHECK(hipMemcpy(out.data(), d_out, size_bytes, hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_a));
    HIP_CHECK(hipFree(d_b));
    HIP_CHECK(hipFree(d_out));

    int errors = 0;
    for(unsigned int i = 0; i < size; ++i)
    {
        const float expected = a[i] + b[i];
        if(out[i] != expected)
        {
            if(errors++ < 10)
                std::cout << "out[" << i << "] = " << out[i] << ", expected " << expected << std::endl;
        }
    }
    std::cout << "Added two vectors of " << size << " floats in " << grid_size << " blocks of " << block_size
              << " threads." << std::endl;
    return report_validation(errors);
}
