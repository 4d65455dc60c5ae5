/*
 * A failing device-side assert: the launch ends with hipErrorAssert, latched on its stream
 * (a later synchronisation reports it again), and the worker goes on: a fresh stream runs
 * the same kernel cleanly, with results checked against a CPU reference.
 */
#include "check.h"
#include <hip/hiprtc.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "#include <assert.h>\n"
    "extern \"C\" __global__ void square_checked(const int* in, int* out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  assert(in[i] >= 0);\n"
    "  out[i] = in[i] * in[i];\n"
    "}\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

int main(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "device_assert.hip", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 0, NULL);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
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
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  hipFunction_t kernel;
  CHECK(hipModuleGetFunction(&kernel, module, "square_checked"));

  enum { N = 1000 };
  int in[N], out[N];
  for (int i = 0; i < N; i++) in[i] = i - (i == 613 ? 10000 : 0);
  int *din, *dout;
  CHECK(hipMalloc((void**)&din, sizeof in));
  CHECK(hipMalloc((void**)&dout, sizeof out));
  CHECK(hipMemcpy(din, in, sizeof in, hipMemcpyHostToDevice));
  int n = N;
  void* args[] = {&din, &dout, &n};

  hipStream_t failing;
  CHECK(hipStreamCreate(&failing));
  CHECK(hipModuleLaunchKernel(kernel, (N + 127) / 128, 1, 1, 128, 1, 1, 0, failing, args, NULL));
  EXPECT_ERR(hipStreamSynchronize(failing), hipErrorAssert);
  EXPECT_ERR(hipStreamSynchronize(failing), hipErrorAssert);
  printf("the failing assert ends the launch with hipErrorAssert (%d), latched on its stream\n", (int)hipErrorAssert);
  (void)hipStreamDestroy(failing);

  for (int i = 0; i < N; i++) in[i] = i;
  CHECK(hipMemcpy(din, in, sizeof in, hipMemcpyHostToDevice));
  hipStream_t fresh;
  CHECK(hipStreamCreate(&fresh));
  CHECK(hipModuleLaunchKernel(kernel, (N + 127) / 128, 1, 1, 128, 1, 1, 0, fresh, args, NULL));
  CHECK(hipStreamSynchronize(fresh));
  CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    if (out[i] != i * i) { printf("FAIL out[%d] = %d, want %d\n", i, out[i], i * i); return 1; }
  printf("the worker goes on: a fresh stream runs the kernel cleanly\n");
  CHECK(hipStreamDestroy(fresh));
  CHECK(hipModuleUnload(module));
  printf("PASS device_assert\n");
  return 0;
}
