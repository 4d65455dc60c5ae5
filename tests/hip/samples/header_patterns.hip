// Header patterns of real projects in a kernel file, as llama.cpp's ggml has them:
// - a HIP library's header (`vendors/hip.h` includes <hipblas/hipblas.h> in every kernel file)
//   whose types device code uses: the worker compiling the device source must have it too;
// - host declarations wrapped in a function-like attribute macro (ggml.h's GGML_DEPRECATED):
//   hipcc's device source must remove the whole use of the macro, arguments included;
// - a host declaration after a leading attribute (`GGML_NORETURN void ggml_abort(...)`): the
//   attribute goes with it;
// - a class template's host members calling host declarations and a plain struct's pure
//   virtual members (ggml's `ggml_cuda_pool_alloc<T>` over `ggml_cuda_pool`): those
//   declarations stay in the device source, so the template still compiles there.
#include "sample_utils.hpp"

#include <hipblas/hipblas.h>

#define SAMPLE_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#define SAMPLE_API extern

SAMPLE_DEPRECATED(SAMPLE_API int old_host_api(int first,
                                              int second),
                  "use new_host_api (a parenthesis in the hint: (x))");
SAMPLE_API int new_host_api(int first, int second);

#define SAMPLE_NORETURN [[noreturn]]
SAMPLE_NORETURN void sample_abort(const char* why);
[[noreturn]] void sample_abort_plain(const char* why);

struct sample_pool
{
    virtual ~sample_pool()                 = default;
    virtual void* alloc(size_t size)       = 0;
    virtual void  release(void* ptr)       = 0;
};

template<typename T>
struct sample_pool_alloc
{
    sample_pool* pool = nullptr;
    T*           ptr  = nullptr;
    T*           alloc(size_t count)
    {
        if(pool == nullptr)
            sample_abort("no pool");
        ptr = static_cast<T*>(pool->alloc(count * sizeof(T)));
        return ptr;
    }
    ~sample_pool_alloc()
    {
        if(ptr != nullptr)
            pool->release(ptr);
    }
};

#include <vector>

// HIP's platform macro, as hip_common.h defines it, in the device source too (ggml's
// vendors/hip.h stops with an #error without it).
#if !defined(__HIP_PLATFORM_AMD__)
#error "__HIP_PLATFORM_AMD__ is not defined"
#endif

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
