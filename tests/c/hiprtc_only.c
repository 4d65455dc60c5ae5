/*
 * A program that calls only hiprtc (no hip* function), linked `-Wl,--as-needed -lhiprtc`:
 * libhiprtc must bring hip-remote's libamdhip64.so.7 in itself (its NEEDED entry), since
 * compilations go over libamdhip64's connection to the worker. A second program of more
 * than one control frame of source (600 KiB, beyond the 512 KiB one RtcCompile carries)
 * reaches the worker all the same, staged in bulk pieces.
 */
#include <hip/hiprtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

  /* The same kernel behind 600 KiB of comment lines. */
  const size_t padding = 600u << 10, line = 64;
  char* big = malloc(padding + 1024);
  size_t at = 0;
  while (at + line <= padding) {
    memset(big + at, ' ', line - 1);
    memcpy(big + at, "// padding", 10);
    big[at + line - 1] = '\n';
    at += line;
  }
  strcpy(big + at, SOURCE);
  RTC_CHECK(hiprtcCreateProgram(&prog, big, "big.hip", 0, NULL, NULL));
  compiled = hiprtcCompileProgram(prog, 0, NULL);
  RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
  if (compiled != HIPRTC_SUCCESS) {
    char* log = malloc(log_size + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile of %zu bytes: %s\n%s\n", strlen(big), hiprtcGetErrorString(compiled), log);
    return 1;
  }
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  if (code_size == 0) {
    printf("FAIL: the large program compiled, but no code\n");
    return 1;
  }
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  free(big);
  printf("compiled a program of %zu KiB on the worker\n", (at + strlen(SOURCE)) >> 10);
  printf("PASS hiprtc_only\n");
  return 0;
}
