/*
 * Kernels end to end, the same program on every backend: HIP kernel source compiled by
 * hiprtc *on the worker* (host backend: the system C++ compiler; cuda backend: NVRTC), loaded
 * with hipModuleLoadData, launched with kernelParams and with `extra`. One kernel takes
 * char, short, int, float, double, pointer and struct-by-value arguments and writes each back,
 * so any argument packed at the wrong offset or size shows.
 */
#include "check.h"
#include <hip/hiprtc.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "struct Pair { int a; double b; };\n"
    "extern \"C\" __global__ void args(char c, short s, int i, float f, double d, double* out, struct Pair p) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) {\n"
    "    out[0] = c; out[1] = s; out[2] = i; out[3] = f; out[4] = d; out[5] = p.a; out[6] = p.b;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

struct Pair { int a; double b; };

int main(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  printf("device: %s (%s)\n", props.name, props.gcnArchName);

  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "kernels.hip", 0, NULL, NULL));
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch, "-O3"};
  hiprtcResult compiled = hiprtcCompileProgram(prog, 2, opts);
  size_t log_size = 0;
  RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
  if (compiled != HIPRTC_SUCCESS) {
    char* log = malloc(log_size + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    return 1;
  }
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = malloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  printf("compiled %zu bytes of code on the worker\n", code_size);

  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  hipFunction_t args_fn, vadd_fn;
  CHECK(hipModuleGetFunction(&args_fn, module, "args"));
  CHECK(hipModuleGetFunction(&vadd_fn, module, "vadd"));

  /* Exact argument marshalling through kernelParams. */
  double* d_out;
  CHECK(hipMalloc((void**)&d_out, 7 * sizeof(double)));
  char c = -7; short s = -1234; int i = 123456789; float f = 1.5f; double d = -2.25;
  struct Pair p = {42, 6.5};
  void* params[] = {&c, &s, &i, &f, &d, &d_out, &p};
  CHECK(hipModuleLaunchKernel(args_fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
  double out[7];
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  double want[7] = {-7, -1234, 123456789, 1.5, -2.25, 42, 6.5};
  for (int k = 0; k < 7; k++) {
    if (out[k] != want[k]) { printf("FAIL argument %d: got %g want %g\n", k, out[k], want[k]); return 1; }
  }
  printf("char/short/int/float/double/pointer/struct arguments arrive exactly\n");

  /* Vector add launched with `extra` (one packed buffer, as hip-python passes it). */
  enum { N = 100000 };
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)), *r = malloc(N * sizeof(float));
  for (int k = 0; k < N; k++) { a[k] = (float)k; b[k] = 0.5f * (float)k; }
  float *da, *db, *dc;
  CHECK(hipMalloc((void**)&da, N * sizeof(float)));
  CHECK(hipMalloc((void**)&db, N * sizeof(float)));
  CHECK(hipMalloc((void**)&dc, N * sizeof(float)));
  CHECK(hipMemcpy(da, a, N * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b, N * sizeof(float), hipMemcpyHostToDevice));
  struct { float* a; float* b; float* c; int n; } packed = {da, db, dc, N};
  size_t packed_size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size, HIP_LAUNCH_PARAM_END};
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  CHECK(hipModuleLaunchKernel(vadd_fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, stream, NULL, extra));
  CHECK(hipMemcpyAsync(r, dc, N * sizeof(float), hipMemcpyDeviceToHost, stream));
  CHECK(hipStreamSynchronize(stream));
  for (int k = 0; k < N; k++) {
    if (r[k] != a[k] + b[k]) { printf("FAIL vadd[%d] = %g, want %g\n", k, r[k], a[k] + b[k]); return 1; }
  }
  printf("vector add of %d elements verified\n", N);

  /* Launch throughput: many small fire-and-forget launches, one synchronisation. */
  for (int k = 0; k < 1000; k++) {
    CHECK(hipModuleLaunchKernel(vadd_fn, 1, 1, 1, 64, 1, 1, 0, stream, NULL, extra));
  }
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipGetLastError());

  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(da)); CHECK(hipFree(db)); CHECK(hipFree(dc)); CHECK(hipFree(d_out));
  CHECK(hipModuleUnload(module));
  printf("PASS kernels\n");
  return 0;
}
