// Tiled matrix multiplication C = A * B: each block computes one tile of C, staging tiles of A
// and B in shared memory; sizes are not multiples of the tile, so edge tiles are padded with
// zeros.
#include "sample_utils.hpp"

#include <vector>

constexpr unsigned int tile_size = 16;

// A is m x k, B is k x n, C is m x n, all row-major.
__global__ void matmul_tiled_kernel(const float* a, const float* b, float* c, unsigned int m, unsigned int n, unsigned int k)
{
    __shared__ float tile_a[tile_size][tile_size];
    __shared__ float tile_b[tile_size][tile_size];

    const unsigned int row = blockIdx.y * tile_size + threadIdx.y;
    const unsigned int col = blockIdx.x * tile_size + threadIdx.x;

    float sum = 0.f;
    for(unsigned int tile = 0; tile < (k + tile_size - 1) / tile_size; ++tile)
    {
        const unsigned int a_col = tile * tile_size + threadIdx.x;
        const unsigned int b_row = tile * tile_size + threadIdx.y;
        tile_a[threadIdx.y][threadIdx.x] = (row < m && a_col < k) ? a[row * k + a_col] : 0.f;
        tile_b[threadIdx.y][threadIdx.x] = (b_row < k && col < n) ? b[b_row * n + col] : 0.f;
        // Every thread's element of both tiles is written before anyone reads them.
        __syncthreads();
        for(unsigned int i = 0; i < tile_size; ++i)
        {
            sum += tile_a[threadIdx.y][i] * tile_b[i][threadIdx.x];
        }
        // Nobody overwrites the tiles while another thread still reads them.
        __syncthreads();
    }
    if(row < m && col < n)
    {
        c[row * n + col] = sum;
    }
}

int main()
{
    constexpr unsigned int m = 100;
    constexpr unsigned int n = 75;
    constexpr unsigned int k = 130;

    std::vector<float> a(m * k), b(k * n), c(m * n);
    for(unsigned int i = 0; i < m * k; ++i)
        a[i] = static_cast<float>((i * 7) % 13) - 6.f;
    for(unsigned int i = 0; i < k * n; ++i)
        b[i] = static_cast<float>((i * 5) % 11) * 0.5f - 2.f;

    float* d_a{};
    float* d_b{};
    float* d_c{};
    HIP_CHECK(hipMalloc(&d_a, a.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&d_b, b.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&d_c, c.size() * sizeof(float)));
    HIP_CHECK(hipMemcpy(d_a, a.data(), a.size() * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_b, b.data(), b.size() * sizeof(float), hipMemcpyHostToDevice));

    const dim3 block_dim(tile_size, tile_size);
    const dim3 grid_dim(ceiling_div(n, tile_size), ceiling_div(m, tile_size));
    matmul_tiled_kernel<<<grid_dim, block_dim, 0, hipStreamDefault>>>(d_a, d_b, d_c, m, n, k);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(c.data(), d_c, c.size() * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_a));
    HIP_CHECK(hipFree(d_b));
    HIP_CHECK(hipFree(d_c));

    int errors = 0;
    for(unsigned int row = 0; row < m; ++row)
    {
        for(unsigned int col = 0; col < n; ++col)
        {
            double expected = 0.0;
            for(unsigned int i = 0; i < k; ++i)
                expected += static_cast<double>(a[row * k + i]) * b[i * n + col];
            if(!nearly_equal(c[row * n + col], expected, 1e-4))
            {
                if(errors++ < 10)
                    std::cout << "C[" << row << "][" << col << "] = " << c[row * n + col] << ", expected "
                              << expected << std::endl;
            }
        }
    }
    std::cout << "Multiplied a " << m << "x" << k << " by a " << k << "x" << n << " matrix in " << grid_dim.x << "x"
              << grid_dim.y << " tiles of " << tile_size << "x" << tile_size << "." << std::endl;
    return report_validation(errors);
}
