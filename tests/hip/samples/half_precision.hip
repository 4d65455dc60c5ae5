// hip_fp16.h and hip_bf16.h on the device: __half, half2 and __hip_bfloat16 arithmetic and
// conversions computed by a kernel and checked on the host against float arithmetic (inputs
// chosen so every exact result is representable, so the oracle is exact), plus the rounding
// of known values against their IEEE bit patterns.
#include "sample_utils.hpp"

#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>

#include <cstdio>
#include <vector>

constexpr int n = 256;
// Per element: 0 a+b, 1 a*b, 2 a-b, 3 max, 4 fma(a,b,a), 5 half2 low lane of (a,b)*(b,a) + (a,a),
// 6 high lane, 7 bf16 a+b, 8 bf16 a*b, 9 __low2float of make_half2, 10 __hmin2 high lane.
constexpr int results = 11;

__global__ void half_ops(const float* a, const float* b, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half ha = __float2half(a[i]), hb = __float2half(b[i]);
    float* o = out + i * results;
    o[0] = __half2float(__hadd(ha, hb));
    o[1] = __half2float(__hmul(ha, hb));
    o[2] = __half2float(__hsub(ha, hb));
    o[3] = __half2float(__hmax(ha, hb));
    o[4] = __half2float(__hfma(ha, hb, ha));
    half2 p = make_half2(ha, hb), q = make_half2(hb, ha);
    half2 r = __hmul2(p, q) + __half2half2(ha);
    float2 rf = __half22float2(r);
    o[5] = rf.x;
    o[6] = __high2float(r);
    __hip_bfloat16 ba = __float2bfloat16(a[i]), bb = __float2bfloat16(b[i]);
    o[7] = __bfloat162float(__hadd(ba, bb));
    o[8] = __bfloat162float(__hmul(ba, bb));
    o[9] = __low2float(make_half2(hb, ha));
    o[10] = __high2float(__hmin2(p, q));
}

// Rounding of known values: bit patterns from IEEE 754 binary16 and bfloat16.
__global__ void roundings(unsigned short* out) {
    out[0] = __half_as_ushort(__float2half(1.0f));                 // 0x3c00
    out[1] = __half_as_ushort(__float2half(65504.0f));             // 0x7bff, the largest half
    out[2] = __half_as_ushort(__float2half(1.0e-7f));              // 0x0002, a subnormal
    out[3] = __half_as_ushort(__float2half(1.0f + 1.0f / 2048));   // 0x3c00: a tie, to even
    out[4] = __half_as_ushort(__float2half(1.0f + 3.0f / 2048));   // 0x3c02: a tie, to even
    out[5] = __half_as_ushort(__float2half(70000.0f));             // 0x7c00, infinity
    out[6] = __bfloat16_as_ushort(__float2bfloat16(1.0f));         // 0x3f80
    out[7] = __bfloat16_as_ushort(__float2bfloat16(3.140625f));    // 0x4049
    out[8] = __bfloat16_as_ushort(__float2bfloat16(1.0f + 1.0f / 256)); // 0x3f80: a tie, to even
    out[9] = __bfloat16_as_ushort(__float2bfloat16(1.0f + 3.0f / 256)); // 0x3f82: a tie, to even
}

int main() {
    std::vector<float> a(n), b(n), out(n * results);
    for (int i = 0; i < n; ++i) {
        a[i] = (i % 32) * 0.25f - 3.0f;  // quarters in [-3, 4.75]
        b[i] = (i / 32) * 0.5f + 0.5f;   // halves in [0.5, 4]
    }
    float *da, *db, *dout;
    unsigned short* dround;
    HIP_CHECK(hipMalloc(&da, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&db, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dout, out.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&dround, 10 * sizeof(unsigned short)));
    HIP_CHECK(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
    half_ops<<<n / 64, 64>>>(da, db, dout);
    roundings<<<1, 1>>>(dround);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), dout, out.size() * sizeof(float), hipMemcpyDeviceToHost));
    unsigned short round[10];
    HIP_CHECK(hipMemcpy(round, dround, sizeof round, hipMemcpyDeviceToHost));

    int errors = 0;
    for (int i = 0; i < n; ++i) {
        float x = a[i], y = b[i];
        // Quarters times halves are eighths below 40: exact in half and in bfloat16 (8 bits).
        const float expected[results] = {x + y, x * y, x - y, x < y ? y : x, x * y + x, x * y + x, y * x + x,
                                         x + y, x * y, y, x < y ? x : y};
        for (int k = 0; k < results; ++k) {
            if (out[i * results + k] != expected[k]) {
                if (errors < 10) std::printf("element %d result %d: %g, expected %g\n", i, k, out[i * results + k], expected[k]);
                ++errors;
            }
        }
    }
    const unsigned short bits[10] = {0x3c00, 0x7bff, 0x0002, 0x3c00, 0x3c02, 0x7c00, 0x3f80, 0x4049, 0x3f80, 0x3f82};
    for (int k = 0; k < 10; ++k) {
        if (round[k] != bits[k]) {
            std::printf("rounding %d: 0x%04x, expected 0x%04x\n", k, round[k], bits[k]);
            ++errors;
        }
    }
    HIP_CHECK(hipFree(da));
    HIP_CHECK(hipFree(db));
    HIP_CHECK(hipFree(dout));
    HIP_CHECK(hipFree(dround));
    return report_validation(errors);
}
