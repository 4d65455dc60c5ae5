/*
 * A module whose image is over 1 MiB (a kernel and a 1.5 MiB initialized device array),
 * compiled with hiprtc and loaded twice with hipModuleLoadData; each load's kernel reads the
 * array and the result is checked. tests/tests/content_modules.rs runs it with the content
 * store on and counts, in the HIP_REMOTE_PROFILE table, how each load went to the worker (by
 * hash; with the image).
 */
#include "rtc_module.h"

static const char* source =
    "#define TABLE (3 << 19)\n"
    "__device__ unsigned char table[TABLE] = {7, 1, 2, 3};\n"
    "extern \"C\" __global__ void sum_first(int* out) { out[0] = table[0] + table[1] + table[2] + table[3]; }\n";

static void load_and_run(const char* code, size_t code_size) {
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, module, "sum_first"));
  int* out = NULL;
  CHECK(hipMalloc((void**)&out, sizeof(int)));
  void* args[] = {&out};
  CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
  int got = 0;
  CHECK(hipMemcpy(&got, out, sizeof got, hipMemcpyDeviceToHost));
  REQUIRE(got == 13, "the kernel read %d from the module's table, expected 13 (image of %zu bytes)", got, code_size);
  CHECK(hipFree(out));
  CHECK(hipModuleUnload(module));
}

int main(void) {
  begin("module_by_hash");
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, source, "module_by_hash.hip", 0, NULL, NULL));
  RTC_CHECK(hiprtcCompileProgram(prog, 0, NULL));
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  REQUIRE(code_size >= ((size_t)1 << 20), "the image has %zu bytes, not the 1 MiB or more this program is about", code_size);
  char* code = malloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  load_and_run(code, code_size);
  load_and_run(code, code_size);
  free(code);
  printf("PASS module_by_hash\n");
  return 0;
}
