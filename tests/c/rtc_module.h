/*
 * hiprtc helpers of the C test programs whose kernels are HIP source compiled on the worker:
 * RTC_CHECK for hiprtc calls, rtc_code() compiling a source into a code object and rtc_module()
 * into a loaded module (a failed compile prints the compiler's log and exits 1).
 */
#ifndef HIP_REMOTE_TEST_RTC_MODULE_H
#define HIP_REMOTE_TEST_RTC_MODULE_H

#include "check.h"
#include <hip/hiprtc.h>

/* A hiprtc call that must succeed. */
#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

/* Compiles `source` (named `name` in logs) for `arch_name` (NULL: the worker's default
 * target): its code object, malloc'd. */
static inline char* rtc_code(const char* source, const char* name, const char* arch_name) {
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, source, name, 0, NULL, NULL));
  char arch[300];
  const char* opts[1];
  int num_opts = 0;
  if (arch_name != NULL) {
    snprintf(arch, sizeof arch, "--offload-arch=%s", arch_name);
    opts[num_opts++] = arch;
  }
  hiprtcResult compiled = hiprtcCompileProgram(prog, num_opts, opts);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
    char* log = malloc(log_size + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    exit(1);
  }
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = malloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  return code;
}

/* rtc_code() loaded as a module. */
static inline hipModule_t rtc_module(const char* source, const char* name, const char* arch_name) {
  char* code = rtc_code(source, name, arch_name);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  return module;
}

#endif
