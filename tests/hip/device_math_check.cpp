// hip-remote: checks device_math_impl.h (the double algorithms behind kernel math when there is
// no libdevice) against the host's libm, on the host: random arguments over each function's
// range, worst error in ulp for double and for the float results rounded from it.
// Run by tests/tests/hipcc_device.rs: c++ -O2 -std=c++17 -I client-capi/include this.cpp
#define __HIP_REMOTE_MATH_IMPL static inline
#include "hip_remote/device_math_impl.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int64_t ulps(double a, double b) {
  if ((std::isnan(a) && std::isnan(b)) || a == b) return 0;
  int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  if (ia < 0) ia = INT64_MIN - ia;
  if (ib < 0) ib = INT64_MIN - ib;
  return std::llabs(ia - ib);
}
static int64_t ulpsf(float a, float b) {
  if ((std::isnan(a) && std::isnan(b)) || a == b) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return std::llabs((int64_t)ia - ib);
}

static uint64_t state = 88172645463325252ull;
static double uniform() {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (state >> 11) * (1.0 / 9007199254740992.0);
}

struct Case {
  const char* name;
  double (*mine)(double);
  double (*ref)(double);
  double lo, hi;
  int64_t double_limit;  // ulp
};

int main() {
  const Case cases[] = {
      {"exp", __hip_remote_exp, exp, -745, 710, 2},          {"exp2", __hip_remote_exp2, exp2, -1075, 1024, 2},
      {"log", __hip_remote_log, log, 1e-310, 1e300, 2},      {"log near 1", __hip_remote_log, log, 0.5, 2, 2},
      {"log2", __hip_remote_log2, log2, 1e-300, 1e300, 3},   {"log10", __hip_remote_log10, log10, 1e-300, 1e300, 3},
      {"sin", __hip_remote_sin, sin, -1e5, 1e5, 2},          {"cos", __hip_remote_cos, cos, -1e5, 1e5, 2},
      {"sin small", __hip_remote_sin, sin, -4, 4, 2},        {"cos small", __hip_remote_cos, cos, -4, 4, 2},
      {"sin large", __hip_remote_sin, sin, -1e9, 1e9, 2},    {"tan", __hip_remote_tan, tan, -1e4, 1e4, 4},
      {"round", __hip_remote_round, round, -1e6, 1e6, 0},
  };
  int failures = 0;
  for (const Case& c : cases) {
    int64_t worst = 0, worst_float = 0;
    for (int i = 0; i < 400000; ++i) {
      double u = uniform();
      double x = (c.lo > 0 && c.hi / c.lo > 1e10) ? std::exp(std::log(c.lo) + (std::log(c.hi) - std::log(c.lo)) * u)
                                                  : c.lo + (c.hi - c.lo) * u;
      int64_t e = ulps(c.mine(x), c.ref(x));
      if (e > worst) worst = e;
      float xf = (float)x;
      if (std::isinf(xf)) continue;
      int64_t ef = ulpsf((float)c.mine(xf), (float)c.ref(xf));
      if (ef > worst_float) worst_float = ef;
    }
    bool ok = worst <= c.double_limit && worst_float <= 1;
    std::printf("%s %-10s double %lld ulp (limit %lld), float %lld ulp\n", ok ? "ok  " : "FAIL", c.name, (long long)worst,
                (long long)c.double_limit, (long long)worst_float);
    failures += !ok;
  }
  // The float functions computed in double: within 1 ulp of libm's double result rounded.
  struct FloatCase {
    const char* name;
    double (*mine)(float);
    double (*ref)(double);
    float lo, hi;
  };
  const FloatCase float_cases[] = {
      {"tanhf", __hip_remote_tanhf, tanh, -12, 12},     {"tanhf tiny", __hip_remote_tanhf, tanh, -1e-3f, 1e-3f},
      {"log1pf", __hip_remote_log1pf, log1p, -0.999f, 1e6f}, {"log1pf tiny", __hip_remote_log1pf, log1p, -1e-4f, 1e-4f},
      {"expm1f", __hip_remote_expm1f, expm1, -40, 88},  {"expm1f tiny", __hip_remote_expm1f, expm1, -1e-4f, 1e-4f},
      {"erff", __hip_remote_erff, erf, -5, 5},          {"erff tiny", __hip_remote_erff, erf, -1e-3f, 1e-3f},
  };
  for (const FloatCase& c : float_cases) {
    int64_t worst = 0;
    for (int i = 0; i < 200000; ++i) {
      float x = (float)(c.lo + (c.hi - c.lo) * uniform());
      int64_t e = ulpsf((float)c.mine(x), (float)c.ref((double)x));
      if (e > worst) worst = e;
    }
    bool ok = worst <= 1;
    std::printf("%s %-11s float %lld ulp\n", ok ? "ok  " : "FAIL", c.name, (long long)worst);
    failures += !ok;
  }
  // pow: float within 1 ulp, double within 2 ulp.
  int64_t worst_float = 0, worst_double = 0;
  double worst_rel = 0;
  for (int i = 0; i < 400000; ++i) {
    double x = std::exp((uniform() * 2 - 1) * 10), y = (uniform() * 2 - 1) * 100;
    double want = std::pow(x, y);
    if (std::isinf(want) || want == 0) continue;
    double rel = std::fabs(__hip_remote_pow(x, y) - want) / want;
    if (rel > worst_rel) worst_rel = rel;
    int64_t e = ulps(__hip_remote_pow(x, y), want);
    if (e > worst_double) worst_double = e;
    float xf = (float)x, yf = (float)y, wantf = std::pow(xf, yf);
    if (std::isinf(wantf) || wantf == 0) continue;
    int64_t ef = ulpsf((float)__hip_remote_pow(xf, yf), wantf);
    if (ef > worst_float) worst_float = ef;
  }
  bool pow_ok = worst_float <= 1 && worst_double <= 2;
  std::printf("%s pow        double %lld ulp (relative %.2e), float %lld ulp\n", pow_ok ? "ok  " : "FAIL", (long long)worst_double,
              worst_rel, (long long)worst_float);
  failures += !pow_ok;
  // Special values follow C99.
  const double specials[][2] = {{-2, 3},  {-2, 0.5},     {0, -1},  {-0.0, -3},     {-0.0, 3},  {INFINITY, -1},
                                {-INFINITY, 3}, {-1, INFINITY}, {0.5, -INFINITY}, {NAN, 0}, {1, NAN}, {-8, 1.0 / 3}};
  for (const auto& s : specials) {
    double got = __hip_remote_pow(s[0], s[1]), want = std::pow(s[0], s[1]);
    bool same = (std::isnan(got) && std::isnan(want)) ||
                (std::signbit(got) == std::signbit(want) && (got == want || std::fabs(got - want) <= 1e-15 * std::fabs(want)));
    if (!same) {
      std::printf("FAIL pow(%g, %g) = %g, want %g\n", s[0], s[1], got, want);
      ++failures;
    }
  }
  const double edges[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-320, -1.0, 709.78, -745.0, 1023.99};
  for (double x : edges) {
    const double got[] = {__hip_remote_exp(x), __hip_remote_log(x), __hip_remote_exp2(x), __hip_remote_sin(x), __hip_remote_cos(x)};
    const double want[] = {exp(x), log(x), exp2(x), sin(x), cos(x)};
    for (int k = 0; k < 5; ++k) {
      if (ulps(got[k], want[k]) > 2) {
        std::printf("FAIL edge %g function %d: %g, want %g\n", x, k, got[k], want[k]);
        ++failures;
      }
    }
  }
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
