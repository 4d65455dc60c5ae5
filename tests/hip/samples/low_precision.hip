// hip_fp8.h, hip_fp6.h, hip_fp4.h and hip_complex.h on the device: a kernel converts a set
// of floats (every representable value, every midpoint between neighbours — the ties —,
// values just beside them, out-of-range values, infinities, NaN) into each small format,
// decodes every code of each format, and computes complex arithmetic; the host checks it all
// against an oracle written here from the formats' definitions (nearest value by search,
// ties to the even code, ROCm's overflow rules) and against exact complex results.
#include "sample_utils.hpp"

#include <hip/hip_complex.h>
#include <hip/hip_fp4.h>
#include <hip/hip_fp6.h>
#include <hip/hip_fp8.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

// Formats: 0-3 fp8 (E4M3, E5M2, E4M3 FNUZ, E5M2 FNUZ), 4 fp6 E2M3, 5 fp6 E3M2, 6 fp4 E2M1.
constexpr int formats = 7;
// Per input: the 4 fp8 formats without and with saturation, then fp6 x2, fp4.
constexpr int codes_per_input = 11;

__global__ void encode(const float* in, int n, unsigned char* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    unsigned char* o = out + i * codes_per_input;
    const __hip_fp8_interpretation_t fp8[4] = {__HIP_E4M3, __HIP_E5M2, __HIP_E4M3_FNUZ, __HIP_E5M2_FNUZ};
    for (int f = 0; f < 4; ++f) {
        o[f] = __hip_cvt_float_to_fp8(x, __HIP_NOSAT, fp8[f]);
        o[4 + f] = __hip_cvt_float_to_fp8(x, __HIP_SATFINITE, fp8[f]);
    }
    o[8] = __hip_cvt_float_to_fp6(x, __HIP_E2M3, hipRoundNearest);
    o[9] = __hip_cvt_float_to_fp6(x, __HIP_E3M2, hipRoundNearest);
    o[10] = __hip_cvt_float_to_fp4(x, __HIP_E2M1, hipRoundNearest);
}

// Every code of every format back to float, through the types and through the half path.
__global__ void decode(float* out, unsigned short* halves) {
    int code = threadIdx.x;  // 256 threads
    __hip_fp8_e4m3 a;
    __hip_fp8_e5m2 b;
    __hip_fp8_e4m3_fnuz c;
    __hip_fp8_e5m2_fnuz d;
    a.__x = b.__x = c.__x = d.__x = (__hip_fp8_storage_t)code;
    out[0 * 256 + code] = float(a);
    out[1 * 256 + code] = float(b);
    out[2 * 256 + code] = float(c);
    out[3 * 256 + code] = float(d);
    __hip_fp6_e2m3 e;
    __hip_fp6_e3m2 f;
    __hip_fp4_e2m1 g;
    e.__x = f.__x = (__hip_fp6_storage_t)(code & 0x3f);
    g.__x = (__hip_fp4_storage_t)(code & 0xf);
    out[4 * 256 + code] = float(e);
    out[5 * 256 + code] = float(f);
    out[6 * 256 + code] = float(g);
    halves[code] = __hip_cvt_fp8_to_halfraw((__hip_fp8_storage_t)code, __HIP_E4M3).x;
    halves[256 + code] = __hip_cvt_fp8x2_to_halfraw2((__hip_fp8x2_storage_t)code, __HIP_E5M2_FNUZ).x;
}

// Complex arithmetic on small integers: every result is exact in float and double.
__global__ void complex_ops(float* f, double* d) {
    hipFloatComplex p = make_hipFloatComplex(3.0f, -2.0f), q = make_hipFloatComplex(1.0f, 1.0f), r = make_hipComplex(0.5f, 4.0f);
    hipFloatComplex s = hipCaddf(p, q), t = hipCsubf(p, q), m = hipCmulf(p, q), v = hipCdivf(p, q), w = hipCfmaf(p, q, r);
    hipFloatComplex c = hipConjf(p);
    float values[] = {s.x, s.y, t.x, t.y, m.x, m.y, v.x, v.y, w.x, w.y, c.x, c.y, hipCabsf(make_hipFloatComplex(3.0f, 4.0f)),
                      hipCsqabsf(p), hipCrealf(p), hipCimagf(p)};
    for (int i = 0; i < 16; ++i) f[i] = values[i];
    hipDoubleComplex P = hipComplexFloatToDouble(p), Q = make_hipDoubleComplex(1.0, 1.0);
    hipDoubleComplex M = hipCmul(P, Q), V = hipCdiv(P, Q), W = hipCfma(P, Q, hipComplexFloatToDouble(r));
    hipFloatComplex back = hipComplexDoubleToFloat(hipCadd(P, Q));
    double dv[] = {M.x, M.y, V.x, V.y, W.x, W.y, hipCabs(make_hipDoubleComplex(5.0, 12.0)), back.x, back.y, hipCreal(hipConj(P)), hipCimag(hipConj(P)), hipCsqabs(P)};
    for (int i = 0; i < 12; ++i) d[i] = dv[i];
}

// ---- the oracle -------------------------------------------------------------------------
struct format {
    int e, m, bias;
    bool ieee_inf, e4m3_nan, fnuz;
    int bits() const { return 1 + e + m; }
};
const format formats_table[formats] = {
    {4, 3, 7, false, true, false},  {5, 2, 15, true, false, false}, {4, 3, 8, false, false, true}, {5, 2, 16, false, false, true},
    {2, 3, 1, false, false, false}, {3, 2, 3, false, false, false}, {2, 1, 1, false, false, false},
};

// NaN for NaN codes, +-infinity for infinity codes, else the value.
double oracle_decode(const format& f, unsigned code) {
    unsigned sign = code >> (f.e + f.m), exp = (code >> f.m) & ((1u << f.e) - 1), man = code & ((1u << f.m) - 1);
    if (f.fnuz && sign && exp == 0 && man == 0) return std::numeric_limits<double>::quiet_NaN();
    if (f.ieee_inf && exp == (1u << f.e) - 1) return man ? std::numeric_limits<double>::quiet_NaN() : (sign ? -INFINITY : INFINITY);
    if (f.e4m3_nan && exp == (1u << f.e) - 1 && man == (1u << f.m) - 1) return std::numeric_limits<double>::quiet_NaN();
    double v = exp == 0 ? std::ldexp((double)man, 1 - f.bias - f.m) : std::ldexp((double)((1u << f.m) | man), (int)exp - f.bias - f.m);
    return sign ? -v : v;
}
// The largest finite magnitude's code.
unsigned oracle_max(const format& f) {
    unsigned best = 0;
    for (unsigned c = 0; c < (1u << (f.bits() - 1)); ++c) {
        double v = oracle_decode(f, c);
        if (std::isfinite(v) && v > oracle_decode(f, best)) best = c;
    }
    return best;
}
unsigned oracle_encode(const format& f, double x, bool saturate) {
    unsigned sign_bit = 1u << (f.e + f.m), sign = std::signbit(x) ? sign_bit : 0, max = oracle_max(f);
    bool has_nan = f.fnuz || f.ieee_inf || f.e4m3_nan;
    unsigned nan = f.fnuz ? sign_bit : (sign | (sign_bit - 1));
    unsigned overflow = !has_nan || saturate ? (sign | max) : f.ieee_inf ? (sign | (((1u << f.e) - 1) << f.m)) : nan;
    if (std::isnan(x)) return has_nan ? nan : (sign | max);
    if (std::isinf(x)) return f.ieee_inf ? (sign | (((1u << f.e) - 1) << f.m)) : has_nan ? nan : (sign | max);
    double a = std::fabs(x);
    if (a > oracle_decode(f, max)) return overflow;
    unsigned best = 0;
    for (unsigned c = 0; c <= max; ++c) {
        double db = std::fabs(oracle_decode(f, best) - a), dc = std::fabs(oracle_decode(f, c) - a);
        if (dc < db || (dc == db && (c & 1) == 0 && (best & 1) == 1)) best = c;
    }
    if (best == 0) return f.fnuz ? 0 : sign;
    return sign | best;
}

int main() {
    // Inputs: each format's values, midpoints and near-midpoints, scaled copies, specials.
    std::vector<float> in = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e30f, -1e30f, 1e-30f, -1e-30f, 449.0f, 464.0f, 480.0f, -470.0f,
                             57344.0f, 61000.0f, 61440.0f, 65000.0f, 241.0f, 247.0f, 248.0f, 7.6f, 7.75f, 28.5f, 30.0f, 6.5f, 7.0f};
    for (const format& f : formats_table) {
        std::vector<double> values;
        for (unsigned c = 0; c <= oracle_max(f); ++c) values.push_back(oracle_decode(f, c));
        for (size_t k = 0; k < values.size(); ++k) {
            double v = values[k], next = k + 1 < values.size() ? values[k + 1] : v * 1.25;
            double mid = (v + next) / 2;
            for (double x : {v, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9)}) {
                in.push_back((float)x);
                in.push_back((float)-x);
            }
        }
    }
    const int n = (int)in.size();
    float *din, *ddecoded, *dcf;
    double* dcd;
    unsigned char* dcodes;
    unsigned short* dhalves;
    HIP_CHECK(hipMalloc(&din, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dcodes, n * codes_per_input));
    HIP_CHECK(hipMalloc(&ddecoded, formats * 256 * sizeof(float)));
    HIP_CHECK(hipMalloc(&dhalves, 512 * sizeof(unsigned short)));
    HIP_CHECK(hipMalloc(&dcf, 16 * sizeof(float)));
    HIP_CHECK(hipMalloc(&dcd, 12 * sizeof(double)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
    encode<<<ceiling_div(n, 128), 128>>>(din, n, dcodes);
    decode<<<1, 256>>>(ddecoded, dhalves);
    complex_ops<<<1, 1>>>(dcf, dcd);
    HIP_CHECK(hipGetLastError());
    std::vector<unsigned char> codes(n * codes_per_input);
    std::vector<float> decoded(formats * 256);
    std::vector<unsigned short> halves(512);
    float cf[16];
    double cd[12];
    HIP_CHECK(hipMemcpy(codes.data(), dcodes, codes.size(), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(decoded.data(), ddecoded, decoded.size() * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(halves.data(), dhalves, halves.size() * sizeof(unsigned short), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(cf, dcf, sizeof cf, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(cd, dcd, sizeof cd, hipMemcpyDeviceToHost));

    int errors = 0;
    auto fail = [&](const char* what, int a, int b, double x, unsigned got, unsigned want) {
        if (errors++ < 20) std::printf("%s format %d (%d): input %.9g gives 0x%02x, expected 0x%02x\n", what, a, b, x, got, want);
    };
    const int encode_slot[formats][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 8}, {9, 9}, {10, 10}};
    for (int i = 0; i < n; ++i) {
        for (int f = 0; f < formats; ++f) {
            for (int sat = 0; sat < 2; ++sat) {
                unsigned want = oracle_encode(formats_table[f], in[i], sat == 1 || f >= 4);
                unsigned got = codes[i * codes_per_input + encode_slot[f][sat]];
                if (got != want) fail("encode", f, sat, in[i], got, want);
            }
        }
    }
    for (int f = 0; f < formats; ++f) {
        for (unsigned c = 0; c < (1u << formats_table[f].bits()); ++c) {
            double want = oracle_decode(formats_table[f], c);
            float got = decoded[f * 256 + c];
            if (!(std::isnan(want) ? std::isnan(got) : (double)got == want)) fail("decode", f, 0, c, (unsigned)got, (unsigned)want);
        }
    }
    for (unsigned c = 0; c < 256; ++c) {
        float e4m3 = (float)oracle_decode(formats_table[0], c), e5m2_fnuz = (float)oracle_decode(formats_table[3], c);
        if (__half_as_ushort(__float2half(e4m3)) != halves[c]) fail("to half", 0, 0, c, halves[c], __half_as_ushort(__float2half(e4m3)));
        if (__half_as_ushort(__float2half(e5m2_fnuz)) != halves[256 + c] && !std::isnan(e5m2_fnuz))
            fail("to half", 3, 0, c, halves[256 + c], __half_as_ushort(__float2half(e5m2_fnuz)));
    }
    // p = 3-2i, q = 1+i, r = 0.5+4i: p+q, p-q, p*q = 5+i, p/q = 0.5-2.5i, p*q+r = 5.5+5i, conj p, |3+4i| = 5, |p|^2 = 13.
    const float fexpect[16] = {4, -1, 2, -3, 5, 1, 0.5f, -2.5f, 5.5f, 5, 3, 2, 5, 13, 3, -2};
    for (int i = 0; i < 16; ++i)
        if (cf[i] != fexpect[i]) fail("complex float", i, 0, 0, (unsigned)cf[i], (unsigned)fexpect[i]);
    const double dexpect[12] = {5, 1, 0.5, -2.5, 5.5, 5, 13, 4, -1, 3, 2, 13};
    for (int i = 0; i < 12; ++i)
        if (cd[i] != dexpect[i]) fail("complex double", i, 0, 0, (unsigned)cd[i], (unsigned)dexpect[i]);
    std::printf("%d conversions, %d codes and 28 complex results checked\n", n * formats * 2, formats * 256);
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(dcodes));
    HIP_CHECK(hipFree(ddecoded));
    HIP_CHECK(hipFree(dhalves));
    HIP_CHECK(hipFree(dcf));
    HIP_CHECK(hipFree(dcd));
    return report_validation(errors);
}
