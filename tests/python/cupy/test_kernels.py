"""User-defined kernels, the examples of CuPy's guide "User-Defined Kernels"."""
import cupy
import numpy as np

ADD_SOURCE = r"""
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
"""


def test_elementwise_kernel_squared_diff():
    squared_diff = cupy.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff"
    )
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    y = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(squared_diff(cupy.asarray(x), cupy.asarray(y)).get(), (x - y) ** 2)
    # A scalar argument and an output array given by the caller.
    z = cupy.empty((2, 5), dtype=np.float32)
    squared_diff(cupy.asarray(x), 5, z)
    np.testing.assert_array_equal(z.get(), (x - 5) ** 2)


def test_elementwise_kernel_generic_types_and_raw():
    squared_diff_generic = cupy.ElementwiseKernel(
        "T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic"
    )
    x = np.arange(6, dtype=np.int64)
    np.testing.assert_array_equal(squared_diff_generic(cupy.asarray(x), cupy.asarray(x[::-1])).get(), (x - x[::-1]) ** 2)
    add_reverse = cupy.ElementwiseKernel(
        "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse"
    )
    a = np.arange(5, dtype=np.float64)
    np.testing.assert_array_equal(add_reverse(cupy.asarray(a), cupy.asarray(a)).get(), a + a[::-1])


def test_reduction_kernel_l2norm():
    l2norm = cupy.ReductionKernel(
        "T x",  # input params
        "T y",  # output params
        "x * x",  # map
        "a + b",  # reduce
        "y = sqrt(a)",  # post-reduction map
        "0",  # identity value
        "l2norm",  # kernel name
    )
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_allclose(l2norm(cupy.asarray(x), axis=1).get(), np.linalg.norm(x, axis=1), rtol=1e-6)
    big = np.random.default_rng(5).standard_normal(100_000)
    np.testing.assert_allclose(float(l2norm(cupy.asarray(big))), np.linalg.norm(big), rtol=1e-10)


def test_raw_kernel():
    add_kernel = cupy.RawKernel(ADD_SOURCE, "my_add")
    x1 = cupy.arange(25, dtype=cupy.float32).reshape(5, 5)
    x2 = cupy.arange(25, dtype=cupy.float32).reshape(5, 5)
    y = cupy.zeros((5, 5), dtype=cupy.float32)
    add_kernel((5,), (5,), (x1, x2, y))  # grid, block and arguments
    np.testing.assert_array_equal(y.get(), 2 * np.arange(25, dtype=np.float32).reshape(5, 5))
    assert add_kernel.attributes["max_threads_per_block"] > 0


def test_raw_kernel_shared_memory_and_sync():
    # A block-wide reduction in dynamic shared memory: __syncthreads and extern __shared__.
    block_sum = cupy.RawKernel(
        r"""
extern "C" __global__ void block_sum(const int* x, int* out) {
    extern __shared__ int buf[];
    unsigned t = threadIdx.x;
    buf[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}
""",
        "block_sum",
    )
    x = np.arange(8 * 128, dtype=np.int32)
    out = cupy.zeros(8, dtype=cupy.int32)
    block_sum((8,), (128,), (cupy.asarray(x), out), shared_mem=128 * 4)
    np.testing.assert_array_equal(out.get(), x.reshape(8, 128).sum(axis=1))


def test_raw_module_with_templates_and_name_expressions():
    code = r"""
template<typename T>
__global__ void fx3(T* arr, int N) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < N) arr[tid] = arr[tid] * 3;
}
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] + x2[tid];
}
"""
    name_exp = ["fx3<float>", "fx3<double>"]
    mod = cupy.RawModule(code=code, options=("-std=c++11",), name_expressions=name_exp)
    for name, dtype in zip(name_exp, (np.float32, np.float64)):
        arr = cupy.arange(10, dtype=dtype)
        mod.get_function(name)((1,), (10,), (arr, np.int32(10)))
        np.testing.assert_array_equal(arr.get(), np.arange(10, dtype=dtype) * 3)
    test_sum = mod.get_function("test_sum")
    n = 1000
    x1 = cupy.asarray(np.arange(n, dtype=np.float32))
    x2 = cupy.asarray(np.ones(n, dtype=np.float32))
    y = cupy.zeros(n, dtype=cupy.float32)
    test_sum(((n + 255) // 256,), (256,), (x1, x2, y, np.uint32(n)))
    np.testing.assert_array_equal(y.get(), np.arange(n, dtype=np.float32) + 1)
