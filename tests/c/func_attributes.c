/*
 * hipFuncSetAttribute on a kernel compiled by hiprtc on the worker: ROCm's argument checks,
 * hipFuncGetAttributes reporting the new values, and launches held to the maximum dynamic
 * shared memory set.
 */
#include "check.h"
#include <hip/hiprtc.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void touch(int* out, int v) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = v;\n"
    "}\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static hipError_t launch(hipFunction_t fn, int* d_out, int v, unsigned shared) {
  void* params[] = {&d_out, &v};
  hipError_t e = hipModuleLaunchKernel(fn, 1, 1, 1, 32, 1, 1, shared, NULL, params, NULL);
  /* Launches are queued; a refused one reports at the next synchronisation. */
  return e != hipSuccess ? e : hipDeviceSynchronize();
}

int main(void) {
  begin("func_attributes");
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "func_attributes.hip", 0, NULL, NULL));
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  RTC_CHECK(hiprtcCompileProgram(prog, 1, opts));
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = malloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, "touch"));
  const void* f = (const void*)fn;
  int* d_out;
  CHECK(hipMalloc((void**)&d_out, sizeof(int)));

  step("attributes before");
  hipFuncAttributes a;
  CHECK(hipFuncGetAttributes(&a, f));
  printf("maxDynamicSharedSizeBytes %d, preferredShmemCarveout %d, sharedMemPerBlockOptin %zu\n",
         a.maxDynamicSharedSizeBytes, a.preferredShmemCarveout, props.sharedMemPerBlockOptin);
  REQUIRE(a.maxDynamicSharedSizeBytes > 1024, "only %d bytes of dynamic shared memory", a.maxDynamicSharedSizeBytes);
  CHECK(launch(fn, d_out, 1, 2048));

  step("max dynamic shared memory");
  CHECK(hipFuncSetAttribute(f, hipFuncAttributeMaxDynamicSharedMemorySize, 1024));
  CHECK(hipFuncGetAttributes(&a, f));
  REQUIRE(a.maxDynamicSharedSizeBytes == 1024, "after setting 1024 it reads %d", a.maxDynamicSharedSizeBytes);
  CHECK(launch(fn, d_out, 2, 1024));
  int out = 0;
  CHECK(hipMemcpy(&out, d_out, sizeof out, hipMemcpyDeviceToHost));
  REQUIRE(out == 2, "the launch within the limit wrote %d", out);
  EXPECT_ERR(launch(fn, d_out, 3, 1025), hipErrorInvalidValue);
  CHECK(hipMemcpy(&out, d_out, sizeof out, hipMemcpyDeviceToHost));
  REQUIRE(out == 2, "the refused launch ran (wrote %d)", out);
  hipError_t last = hipGetLastError();
  REQUIRE(last == hipErrorInvalidValue, "last error %s", hipGetErrorName(last));
  int optin = (int)props.sharedMemPerBlockOptin;
  EXPECT_ERR(hipFuncSetAttribute(f, hipFuncAttributeMaxDynamicSharedMemorySize, optin + 1), hipErrorInvalidValue);
  EXPECT_ERR(hipFuncSetAttribute(f, hipFuncAttributeMaxDynamicSharedMemorySize, -1), hipErrorInvalidValue);
  CHECK(hipFuncGetAttributes(&a, f));
  REQUIRE(a.maxDynamicSharedSizeBytes == 1024, "a refused value changed it to %d", a.maxDynamicSharedSizeBytes);
  CHECK(hipFuncSetAttribute(f, hipFuncAttributeMaxDynamicSharedMemorySize, 4096));
  CHECK(launch(fn, d_out, 4, 4096));

  step("preferred carveout");
  CHECK(hipFuncSetAttribute(f, hipFuncAttributePreferredSharedMemoryCarveout, 50));
  CHECK(hipFuncGetAttributes(&a, f));
  REQUIRE(a.preferredShmemCarveout == 50, "carveout reads %d", a.preferredShmemCarveout);
  CHECK(hipFuncSetAttribute(f, hipFuncAttributePreferredSharedMemoryCarveout, -1));
  EXPECT_ERR(hipFuncSetAttribute(f, hipFuncAttributePreferredSharedMemoryCarveout, 101), hipErrorInvalidValue);
  EXPECT_ERR(hipFuncSetAttribute(f, hipFuncAttributePreferredSharedMemoryCarveout, -2), hipErrorInvalidValue);

  step("arguments");
  EXPECT_ERR(hipFuncSetAttribute(NULL, hipFuncAttributeMaxDynamicSharedMemorySize, 0), hipErrorInvalidDeviceFunction);
  static int not_a_kernel;
  EXPECT_ERR(hipFuncSetAttribute(&not_a_kernel, hipFuncAttributeMaxDynamicSharedMemorySize, 0), hipErrorInvalidDeviceFunction);
  EXPECT_ERR(hipFuncSetAttribute(f, (hipFuncAttribute)(hipFuncAttributeMax + 1), 0), hipErrorInvalidValue);
  CHECK(hipFuncSetAttribute(f, hipFuncAttributeMax, 0)); /* ROCm accepts and ignores it */

  CHECK(hipFree(d_out));
  CHECK(hipModuleUnload(module));
  EXPECT_ERR(hipFuncSetAttribute(f, hipFuncAttributeMaxDynamicSharedMemorySize, 0), hipErrorInvalidDeviceFunction);
  free(code);
  printf("PASS func_attributes\n");
  return 0;
}
