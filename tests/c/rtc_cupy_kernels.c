/*
 * CuPy's kernels through hiprtc, compiled as CuPy for ROCm compiles them: its generated
 * source (the preamble of <cupy/...> includes, then `extern "C"` kernels) with
 * `-I<cupy/_core/include>` (argv[1]: a directory on this client only) and CuPy's
 * `-fcuda-flush-denormals-to-zero`. An elementwise kernel on CArray/CIndexer and a reduction-
 * style one compile and are found by name; a kernel mixing CuPy's complex<double>, float16 and
 * its own atomicAdd(long long*) runs and its results are checked.
 * Usage: rtc_cupy_kernels CUPY_INCLUDE_DIR
 */
#include "rtc_module.h"

#define CUPY_PREAMBLE                \
  "#include <cupy/complex.cuh>\n"     \
  "#include <cupy/carray.cuh>\n"      \
  "#include <cupy/atomics.cuh>\n"     \
  "#include <cupy/math_constants.h>\n" \
  "#include <cupy/hip_workaround.cuh>\n"

static const char* SOURCE =
    CUPY_PREAMBLE
    "#include <cupy/float16.cuh>\n"
    "typedef float in0_type;\n"
    "typedef float in1_type;\n"
    "typedef float out0_type;\n"
    "extern \"C\" __global__ void cupy_add__float32_float32_float32(const CArray<float, 1, true, true> _raw_in0,\n"
    "    const CArray<float, 1, true, true> _raw_in1, CArray<float, 1, true, true> _raw_out0, CIndexer<1, true> _ind) {\n"
    "  CUPY_FOR(i, _ind.size()) {\n"
    "    _ind.set(i);\n"
    "    const in0_type in0(_raw_in0[_ind.get()]);\n"
    "    const in1_type in1(_raw_in1[_ind.get()]);\n"
    "    out0_type &out0 = _raw_out0[_ind.get()];\n"
    "    out0 = in0 + in1;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void cupy_sum_like(const CArray<double, 2, true, true> _raw_in0, CArray<double, 1, true, true> _raw_out0,\n"
    "    CIndexer<2, true> _in_ind, CIndexer<1, true> _out_ind) {\n"
    "  CUPY_FOR(j, _out_ind.size()) {\n"
    "    double acc = 0;\n"
    "    for (ptrdiff_t i = 0; i < _in_ind.size() / _out_ind.size(); ++i) {\n"
    "      ptrdiff_t idx[] = {i, j};\n"
    "      acc += _raw_in0[idx];\n"
    "    }\n"
    "    _raw_out0[j] = acc;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void cupy_mix(const float* x, float* y, double* re, long long* count, int n) {\n"
    "  CUPY_FOR(i, n) {\n"
    "    complex<double> z(x[i], 1.0);\n"
    "    complex<double> w = z * conj(z) + thrust::exp(complex<double>(0.0, 0.0));\n"
    "    re[i] = w.real();\n"
    "    float16 h(x[i]);\n"
    "    y[i] = float(h + float16(1.0f));\n"
    "    atomicAdd(count, 1LL);\n"
    "  }\n"
    "}\n";

int main(int argc, char** argv) {
  if (argc < 2) {
    printf("FAIL usage: rtc_cupy_kernels CUPY_INCLUDE_DIR\n");
    return 1;
  }
  char include_option[4200];
  snprintf(include_option, sizeof include_option, "-I%s", argv[1]);
  const char* opts[] = {"-fcuda-flush-denormals-to-zero", include_option};
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "cupy_kernels.cu", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 2, opts);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
    char* log = malloc(log_size + 1);
    RTC_CHECK(hiprtcGetProgramLog(prog, log));
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    return 1;
  }
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = malloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  hipFunction_t add, sum_like, mix;
  CHECK(hipModuleGetFunction(&add, module, "cupy_add__float32_float32_float32"));
  CHECK(hipModuleGetFunction(&sum_like, module, "cupy_sum_like"));
  CHECK(hipModuleGetFunction(&mix, module, "cupy_mix"));

  enum { N = 100 };
  float x[N], y[N];
  double re[N];
  for (int i = 0; i < N; ++i) x[i] = 0.25f * (float)(i - 50);
  float *d_x, *d_y;
  double* d_re;
  long long* d_count;
  CHECK(hipMalloc((void**)&d_x, sizeof x));
  CHECK(hipMalloc((void**)&d_y, sizeof y));
  CHECK(hipMalloc((void**)&d_re, sizeof re));
  CHECK(hipMalloc((void**)&d_count, sizeof(long long)));
  CHECK(hipMemcpy(d_x, x, sizeof x, hipMemcpyHostToDevice));
  CHECK(hipMemset(d_count, 0, sizeof(long long)));
  int n = N;
  void* args[] = {&d_x, &d_y, &d_re, &d_count, &n};
  CHECK(hipModuleLaunchKernel(mix, 2, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
  CHECK(hipDeviceSynchronize());
  long long count = 0;
  CHECK(hipMemcpy(y, d_y, sizeof y, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(re, d_re, sizeof re, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&count, d_count, sizeof count, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) {
    /* Quarters in [-12.5, 12.25] and 1 added are exact in half precision. */
    double want_re = (double)x[i] * x[i] + 1.0 + 1.0;
    if (y[i] != x[i] + 1.0f || re[i] != want_re) {
      printf("FAIL at %d: y %g (want %g), re %g (want %g)\n", i, y[i], x[i] + 1.0f, re[i], want_re);
      return 1;
    }
  }
  if (count != N) {
    printf("FAIL atomicAdd(long long*) counted %lld, want %d\n", count, N);
    return 1;
  }
  CHECK(hipModuleUnload(module));
  printf("PASS rtc_cupy_kernels\n");
  return 0;
}
