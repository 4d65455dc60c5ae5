/*
 * A program that calls only hiprtc (no hip* function), linked `-Wl,--as-needed -lhiprtc`:
 * libhiprtc must bring hip-remote's libamdhip64.so.7 in itself (its NEEDED entry), since
 * compilations go over libamdhip64's connection to the worker.
 */
#include <hip/hiprtc.h>
#include <stdio.h>
#include <stdlib.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void twice(float* x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= 2.0f;\n"
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
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "twice.hip", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 0, NULL);
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
  if (code_size == 0) {
    printf("FAIL: compiled, but no code\n");
    return 1;
  }
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  printf("compiled %zu bytes of code on the worker\n", code_size);
  printf("PASS hiprtc_only\n");
  return 0;
}
