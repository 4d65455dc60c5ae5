// printf from a kernel: a few threads of each block print a line; the device's output reaches
// the program's standard output by the time hipDeviceSynchronize returns. Lines of one block
// come in no guaranteed order.
#include "sample_utils.hpp"

__global__ void print_kernel(int tag)
{
    const unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    if(threadIdx.x % 20 == 0)
    {
        printf("block %u thread %u: tag %d, %s %.2f, 0x%x\n",
               static_cast<unsigned int>(blockIdx.x),
               static_cast<unsigned int>(threadIdx.x),
               tag,
               "quarter",
               static_cast<float>(index) * 0.25f,
               index * 17u);
    }
}

int main()
{
    std::cout << "Launching 3 blocks of 64 threads; every 20th thread prints:" << std::endl;
    print_kernel<<<dim3(3), dim3(64), 0, hipStreamDefault>>>(7);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    std::cout << "The kernel's output came first." << std::endl;
    std::cout << "PASS" << std::endl;
    return 0;
}
