// One kernel template, y = a * x + y, instantiated and launched for float and for double.
#include "sample_utils.hpp"

#include <iomanip>
#include <vector>

template<typename T>
__global__ void axpy_kernel(T a, const T* x, T* y, unsigned int size)
{
    const unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    if(index < size)
    {
        y[index] = a * x[index] + y[index];
    }
}

// Runs axpy for T on the device and checks it against the same computation on the host.
template<typename T>
int run_axpy(const char* type_name, T a, double tolerance)
{
    constexpr unsigned int size       = 5000;
    constexpr unsigned int block_size = 128;

    std::vector<T> x(size), y(size);
    for(unsigned int i = 0; i < size; ++i)
    {
        x[i] = static_cast<T>(i) / static_cast<T>(3);
        y[i] = static_cast<T>(size - i) / static_cast<T>(7);
    }

    T* d_x{};
    T* d_y{};
    HIP_CHECK(hipMalloc(&d_x, size * sizeof(T)));
    HIP_CHECK(hipMalloc(&d_y, size * sizeof(T)));
    HIP_CHECK(hipMemcpy(d_x, x.data(), size * sizeof(T), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_y, y.data(), size * sizeof(T), hipMemcpyHostToDevice));

    axpy_kernel<T><<<dim3(ceiling_div(size, block_size)), dim3(block_size), 0, hipStreamDefault>>>(a, d_x, d_y, size);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    std::vector<T> result(size);
    HIP_CHECK(hipMemcpy(result.data(), d_y, size * sizeof(T), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_x));
    HIP_CHECK(hipFree(d_y));

    int errors = 0;
    for(unsigned int i = 0; i < size; ++i)
    {
        const double product  = static_cast<double>(a) * x[i];
        const double expected = product + y[i];
        // Relative to the terms, not the sum: a GPU may fuse the multiply and the add (one
        // rounding instead of two), which matters where the terms nearly cancel.
        if(std::fabs(result[i] - expected) > tolerance * (std::fabs(product) + std::fabs(y[i])))
        {
            if(errors++ < 10)
                std::cout << std::setprecision(17) << type_name << " y[" << i << "] = " << result[i] << ", expected "
                          << expected << std::endl;
        }
    }
    std::cout << "axpy<" << type_name << "> on " << size << " items: " << (errors == 0 ? "correct" : "WRONG")
              << std::endl;
    return errors;
}

int main()
{
    int errors = run_axpy<float>("float", 2.5f, 1e-6);
    errors += run_axpy<double>("double", -1.25, 1e-14);
    return report_validation(errors);
}
