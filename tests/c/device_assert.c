/*
 * A failing device-side assert: the launch ends with hipErrorAssert, latched on its stream
 * (a later synchronisation reports it again), and the worker goes on: a fresh stream runs
 * the same kernel cleanly, with results checked against a CPU reference.
 */
#include "rtc_module.h"

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "#include <assert.h>\n"
    "extern \"C\" __global__ void square_checked(const int* in, int* out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  assert(in[i] >= 0);\n"
    "  out[i] = in[i] * in[i];\n"
    "}\n";

int main(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hipModule_t module = rtc_module(SOURCE, "device_assert.hip", NULL);
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
