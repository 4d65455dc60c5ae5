/* hiprtc example: HIP kernel source compiled at run time *on the worker* for its own device
 * (NVRTC on NVIDIA, the system C++ compiler on the host backend; hipcc/clang on AMD), then
 * loaded and launched. Nothing but the drop-in libraries is needed on the client.
 *   cc saxpy.c -I client-capi/include -lhiprtc -lamdhip64                              */
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <stdio.h>
#include <stdlib.h>

static const char* SAXPY =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, size_t n) {\n"
    "  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  fprintf(stderr, "%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)
#define RTC(x) do { hiprtcResult r_ = (x); if (r_ != HIPRTC_SUCCESS) { \
  fprintf(stderr, "%s failed: %s\n", #x, hiprtcGetErrorString(r_)); return 1; } } while (0)

int main(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  RTC(hiprtcCreateProgram(&prog, SAXPY, "saxpy.hip", 0, NULL, NULL));
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  hiprtcResult compiled = hiprtcCompileProgram(prog, 1, opts);
  size_t log_size;
  RTC(hiprtcGetProgramLogSize(prog, &log_size));
  if (log_size > 1) {
    char* log = malloc(log_size);
    RTC(hiprtcGetProgramLog(prog, log));
    printf("compiler log:\n%s\n", log);
    free(log);
  }
  RTC(compiled);
  size_t code_size;
  RTC(hiprtcGetCodeSize(prog, &code_size));
  char* code = malloc(code_size);
  RTC(hiprtcGetCode(prog, code));
  RTC(hiprtcDestroyProgram(&prog));
  printf("worker compiled saxpy for %s: %zu bytes\n", props.gcnArchName, code_size);

  hipModule_t module;
  hipFunction_t saxpy;
  CHECK(hipModuleLoadData(&module, code));
  CHECK(hipModuleGetFunction(&saxpy, module, "saxpy"));
  size_t n = 1 << 20;
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) { x[i] = 1.0f; y[i] = (float)i; }
  float *dx, *dy;
  CHECK(hipMalloc((void**)&dx, n * sizeof(float)));
  CHECK(hipMalloc((void**)&dy, n * sizeof(float)));
  CHECK(hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y, n * sizeof(float), hipMemcpyHostToDevice));
  float a = 3.0f;
  void* args[] = {&a, &dx, &dy, &n};
  CHECK(hipModuleLaunchKernel(saxpy, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK(hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) {
    if (y[i] != 3.0f + (float)i) { fprintf(stderr, "y[%zu] = %f\n", i, y[i]); return 1; }
  }
  printf("saxpy of %zu elements: correct\n", n);
  CHECK(hipFree(dx)); CHECK(hipFree(dy));
  CHECK(hipModuleUnload(module));
  return 0;
}
