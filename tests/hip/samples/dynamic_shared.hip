// Dynamic shared memory, sized at launch: each block reverses its segment of an array through
// shared memory. One kernel declares the memory as `extern __shared__`, the other with
// HIP_DYNAMIC_SHARED; both run with two block sizes, so two sizes of shared memory.
#include "sample_utils.hpp"

#include <vector>

__global__ void reverse_extern_shared_kernel(const int* input, int* output, unsigned int size)
{
    extern __shared__ int segment[];
    const unsigned int    base = blockIdx.x * blockDim.x;
    const unsigned int    used = size - base < blockDim.x ? size - base : blockDim.x;
    if(threadIdx.x < used)
    {
        segment[threadIdx.x] = input[base + threadIdx.x];
    }
    __syncthreads();
    if(threadIdx.x < used)
    {
        output[base + threadIdx.x] = segment[used - 1 - threadIdx.x];
    }
}

__global__ void reverse_hip_dynamic_shared_kernel(const int* input, int* output, unsigned int size)
{
    HIP_DYNAMIC_SHARED(int, segment)
    const unsigned int base = blockIdx.x * blockDim.x;
    const unsigned int used = size - base < blockDim.x ? size - base : blockDim.x;
    if(threadIdx.x < used)
    {
        segment[threadIdx.x] = input[base + threadIdx.x];
    }
    __syncthreads();
    if(threadIdx.x < used)
    {
        output[base + threadIdx.x] = segment[used - 1 - threadIdx.x];
    }
}

int main()
{
    constexpr unsigned int size = 3000;

    std::vector<int> input(size);
    for(unsigned int i = 0; i < size; ++i)
        input[i] = static_cast<int>(i * 7 + 3);

    int* d_input{};
    int* d_output{};
    HIP_CHECK(hipMalloc(&d_input, size * sizeof(int)));
    HIP_CHECK(hipMalloc(&d_output, size * sizeof(int)));
    HIP_CHECK(hipMemcpy(d_input, input.data(), size * sizeof(int), hipMemcpyHostToDevice));

    int errors = 0;
    for(const bool hip_macro : {false, true})
    {
        for(const unsigned int block_size : {64u, 256u})
        {
            HIP_CHECK(hipMemset(d_output, 0, size * sizeof(int)));
            const dim3   grid_dim(ceiling_div(size, block_size));
            const size_t shared_bytes = block_size * sizeof(int);
            if(hip_macro)
                reverse_hip_dynamic_shared_kernel<<<grid_dim, dim3(block_size), shared_bytes, hipStreamDefault>>>(
                    d_input, d_output, size);
            else
                reverse_extern_shared_kernel<<<grid_dim, dim3(block_size), shared_bytes, hipStreamDefault>>>(
                    d_input, d_output, size);
            HIP_CHECK(hipGetLastError());
            HIP_CHECK(hipDeviceSynchronize());

            std::vector<int> output(size);
            HIP_CHECK(hipMemcpy(output.data(), d_output, size * sizeof(int), hipMemcpyDeviceToHost));
            int wrong = 0;
            for(unsigned int base = 0; base < size; base += block_size)
            {
                const unsigned int used = size - base < block_size ? size - base : block_size;
                for(unsigned int i = 0; i < used; ++i)
                {
                    if(output[base + i] != input[base + used - 1 - i] && wrong++ < 5)
                        std::cout << "output[" << base + i << "] = " << output[base + i] << ", expected "
                                  << input[base + used - 1 - i] << std::endl;
                }
            }
            std::cout << (hip_macro ? "HIP_DYNAMIC_SHARED" : "extern __shared__") << " with " << shared_bytes
                      << " bytes per block of " << block_size << ": " << (wrong == 0 ? "correct" : "WRONG")
                      << std::endl;
            errors += wrong;
        }
    }
    HIP_CHECK(hipFree(d_input));
    HIP_CHECK(hipFree(d_output));
    return report_validation(errors);
}
