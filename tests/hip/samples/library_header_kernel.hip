// A kernel file that includes a HIP library's header, as llama.cpp's ggml does
// (`vendors/hip.h` includes <hipblas/hipblas.h> in every kernel file), and uses its types in
// device code: the worker compiling the device source must have the header too.
#include "sample_utils.hpp"

#include <hipblas/hipblas.h>

#include <vector>

// out = op(in) for a rows x cols row-major matrix, op chosen by hipBLAS's own enumeration.
__global__ void apply_op(float* out, const float* in, int rows, int cols, hipblasOperation_t op)
{
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if(r >= rows || c >= cols)
        return;
    if(op == HIPBLAS_OP_T)
        out[c * rows + r] = in[r * cols + c];
    else
        out[r * cols + c] = in[r * cols + c];
}

// Element size of a hipBLAS 2 data type (HIPBLAS_R_*, hipDataType's values), on the device.
__global__ void element_sizes(int* out)
{
    const hipblasDatatype_t types[3] = {HIPBLAS_R_16F, HIPBLAS_R_32F, HIPBLAS_R_64F};
    const hipblasDatatype_t t = types[threadIdx.x];
    out[threadIdx.x] = t == HIPBLAS_R_16F ? 2 : t == HIPBLAS_R_32F ? 4 : t == HIPBLAS_R_64F ? 8 : -1;
}

int main()
{
    constexpr int rows = 37, cols = 53;
    std::vector<float> in(rows * cols), out(rows * cols);
    for(int i = 0; i < rows * cols; ++i)
        in[i] = static_cast<float>(i) * 0.5f;
    float* d_in{};
    float* d_out{};
    int*   d_sizes{};
    HIP_CHECK(hipMalloc(&d_in, in.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&d_out, out.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&d_sizes, 3 * sizeof(int)));
    HIP_CHECK(hipMemcpy(d_in, in.data(), in.size() * sizeof(float), hipMemcpyHostToDevice));

    const dim3 block(16, 16);
    const dim3 grid(ceiling_div(cols, 16), ceiling_div(rows, 16));
    apply_op<<<grid, block>>>(d_out, d_in, rows, cols, HIPBLAS_OP_T);
    HIP_CHECK(hipGetLastError());
    element_sizes<<<1, 3>>>(d_sizes);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    int sizes[3] = {};
    HIP_CHECK(hipMemcpy(out.data(), d_out, out.size() * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(sizes, d_sizes, sizeof sizes, hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_in));
    HIP_CHECK(hipFree(d_out));
    HIP_CHECK(hipFree(d_sizes));

    int errors = 0;
    for(int r = 0; r < rows; ++r)
        for(int c = 0; c < cols; ++c)
            if(out[c * rows + r] != in[r * cols + c] && errors++ < 10)
                std::cout << "out[" << c << "][" << r << "] = " << out[c * rows + r] << ", expected "
                          << in[r * cols + c] << std::endl;
    const int expected_sizes[3] = {2, 4, 8};
    for(int i = 0; i < 3; ++i)
        if(sizes[i] != expected_sizes[i] && errors++ < 10)
            std::cout << "element size " << i << " = " << sizes[i] << ", expected " << expected_sizes[i] << std::endl;
    std::cout << "Transposed a " << rows << "x" << cols << " matrix chosen by hipblasOperation_t." << std::endl;
    return report_validation(errors);
}
