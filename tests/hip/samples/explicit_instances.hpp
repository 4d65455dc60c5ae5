// Host function templates that launch kernels and are instantiated explicitly, as ggml's CUDA
// back end writes them (mmq.cuh, mmf.cuh and their template-instances/*.cu): the header
// declares each instance `extern` through a macro, and one source file defines it with the
// same macro. The device source keeps the templates defined (their host bodies never run on
// the worker), so both kinds of explicit instantiation still compile there.
#pragma once

#include <hip/hip_runtime.h>

namespace instances {

template <typename T, int factor>
__global__ void scale_kernel(const T* x, T* y, int n)
{
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if(index < n)
    {
        y[index] = x[index] * static_cast<T>(factor);
    }
}

// A host template (it launches; the worker never runs it), defined in the header.
template <typename T, int factor>
void scale_on_device(const T* x, T* y, int n, hipStream_t stream)
{
    constexpr int block_size = 128;
    scale_kernel<T, factor><<<(n + block_size - 1) / block_size, block_size, 0, stream>>>(x, y, n);
}

// A host member template defined out of line, and one with a return value.
struct Offsetter
{
    template <typename T>
    void add_on_device(T* y, T offset, int n, hipStream_t stream) const;
    template <typename T>
    int blocks_for(int n) const
    {
        return (n + 127) / 128;
    }
};

template <typename T>
__global__ void offset_kernel(T* y, T offset, int n)
{
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if(index < n)
    {
        // `__align__` after `const`, as ggml's fattn-tile.cuh writes it (GNU's attribute may
        // stand there; C++'s `alignas` may not).
        const __align__(16) T offsets[4] = {offset, offset, offset, offset};
        y[index] += offsets[index % 4];
    }
}

template <typename T>
void Offsetter::add_on_device(T* y, T offset, int n, hipStream_t stream) const
{
    offset_kernel<T><<<blocks_for<T>(n), 128, 0, stream>>>(y, offset, n);
}

#define DECL_SCALE_CASE(T, factor) template void scale_on_device<T, factor>(const T* x, T* y, int n, hipStream_t stream)

extern DECL_SCALE_CASE(float, 3);
extern DECL_SCALE_CASE(int, 5);
extern template void Offsetter::add_on_device<float>(float*, float, int, hipStream_t) const;
extern template int Offsetter::blocks_for<float>(int) const;

} // namespace instances
