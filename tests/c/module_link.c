/*
 * The linker: two hiprtc pieces compiled with -fgpu-rdc (one calls a __device__ function and
 * reads a __device__ variable the other defines), linked on the worker with hipLinkCreate /
 * hipLinkAddData / hipLinkAddFile / hipLinkComplete, loaded and launched; the result is
 * checked numerically, the global found in the linked module is written and read back
 * through the kernel; a link with an unresolved symbol fails with its log; argument errors.
 */
#include "check.h"
#include <hip/hiprtc.h>
#include <unistd.h>

static const char* PIECE_A =
    "#include <hip/hip_runtime.h>\n"
    "extern __device__ int scale(int x);\n"
    "extern \"C\" __global__ void apply(int* out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = scale(i);\n"
    "}\n";

static const char* PIECE_B =
    "#include <hip/hip_runtime.h>\n"
    "__device__ int factor = 3;\n"
    "__device__ int scale(int x) { return x * factor + 1; }\n"
    "extern \"C\" __global__ void twice(int* out) { out[threadIdx.x] *= 2; }\n";

#define N 64

static char* compile_rdc(const char* source, const char* name, size_t* size) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, source, name, 0, NULL, NULL) == HIPRTC_SUCCESS, "create %s", name);
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch, "-fgpu-rdc"};
  if (hiprtcCompileProgram(prog, 2, opts) != HIPRTC_SUCCESS) {
    size_t n = 0;
    hiprtcGetProgramLogSize(prog, &n);
    char* log = malloc(n + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile %s:\n%s\n", name, log);
    exit(1);
  }
  REQUIRE(hiprtcGetCodeSize(prog, size) == HIPRTC_SUCCESS, "code size");
  char* code = malloc(*size);
  REQUIRE(hiprtcGetCode(prog, code) == HIPRTC_SUCCESS, "code");
  hiprtcDestroyProgram(&prog);
  return code;
}

/* What the worker's hiprtc produced for -fgpu-rdc: an ELF relocatable object (host backend),
 * LLVM bitcode (AMD) or PTX (NVIDIA). */
static hipJitInputType input_type(const char* code, size_t size) {
  if (size > 18 && !memcmp(code, "\x7f" "ELF", 4)) return code[16] == 1 ? hipJitInputObject : hipJitInputCubin;
  if (size > 4 && !memcmp(code, "BC\xc0\xde", 4)) return hipJitInputLLVMBitcode;
  return hipJitInputPtx;
}

int main(void) {
  begin("module_link");
  size_t size_a = 0, size_b = 0;
  char* a = compile_rdc(PIECE_A, "piece_a.hip", &size_a);
  char* b = compile_rdc(PIECE_B, "piece_b.hip", &size_b);
  hipJitInputType type_a = input_type(a, size_a), type_b = input_type(b, size_b);
  printf("relocatable pieces: %zu and %zu bytes, hipJitInputType %d\n", size_a, size_b, (int)type_a);

  step("link two pieces (one from memory, one from a file)");
  char error_log[8192] = {0}, info_log[8192] = {0};
  hipJitOption options[] = {hipJitOptionErrorLogBuffer, hipJitOptionErrorLogBufferSizeBytes, hipJitOptionInfoLogBuffer,
                            hipJitOptionInfoLogBufferSizeBytes};
  void* values[] = {error_log, (void*)(uintptr_t)sizeof error_log, info_log, (void*)(uintptr_t)sizeof info_log};
  hipLinkState_t link;
  CHECK(hipLinkCreate(4, options, values, &link));
  CHECK(hipLinkAddData(link, type_a, a, size_a, "piece_a", 0, NULL, NULL));
  char path[] = "/tmp/module_link_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0, "mkstemp");
  REQUIRE(write(fd, b, size_b) == (ssize_t)size_b, "write");
  close(fd);
  CHECK(hipLinkAddFile(link, type_b, path, 0, NULL, NULL));
  unlink(path);
  void* image = NULL;
  size_t image_size = 0;
  hipError_t linked = hipLinkComplete(link, &image, &image_size);
  if (linked != hipSuccess) printf("link log:\n%s\n", error_log);
  CHECK(linked);
  REQUIRE(image != NULL && image_size > 0, "linked image %p of %zu bytes", image, image_size);
  printf("linked image: %zu bytes\n", image_size);

  hipModule_t module;
  CHECK(hipModuleLoadData(&module, image));
  unsigned count = 0;
  CHECK(hipModuleGetFunctionCount(&count, module));
  REQUIRE(count == 2, "the linked module has %u kernels, want apply and twice", count);
  hipFunction_t apply, twice;
  CHECK(hipModuleGetFunction(&apply, module, "apply"));
  CHECK(hipModuleGetFunction(&twice, module, "twice"));
  int* d_out;
  CHECK(hipMalloc((void**)&d_out, N * sizeof(int)));
  int n = N;
  void* params[] = {&d_out, &n};
  CHECK(hipModuleLaunchKernel(apply, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
  int out[N];
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(out[i] == i * 3 + 1, "out[%d] = %d, want %d (a device function of the other piece)", i, out[i], i * 3 + 1);
  void* twice_params[] = {&d_out};
  CHECK(hipModuleLaunchKernel(twice, 1, 1, 1, N, 1, 1, 0, NULL, twice_params, NULL));
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(out[i] == 2 * (i * 3 + 1), "twice: out[%d] = %d", i, out[i]);

  step("the other piece's global, found in the linked module");
  hipDeviceptr_t factor;
  size_t factor_size = 0;
  CHECK(hipModuleGetGlobal(&factor, &factor_size, module, "factor"));
  REQUIRE(factor_size == sizeof(int), "factor is %zu bytes", factor_size);
  int five = 5;
  CHECK(hipMemcpyHtoD(factor, &five, sizeof five));
  CHECK(hipModuleLaunchKernel(apply, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(out[i] == i * 5 + 1, "after factor = 5: out[%d] = %d", i, out[i]);
  CHECK(hipModuleUnload(module));
  CHECK(hipFree(d_out));
  CHECK(hipLinkDestroy(link));
  EXPECT_ERR(hipLinkDestroy(link), hipErrorInvalidHandle);

  step("an unresolved symbol fails the link, with a log");
  memset(error_log, 0, sizeof error_log);
  CHECK(hipLinkCreate(2, options, values, &link));
  CHECK(hipLinkAddData(link, type_a, a, size_a, "piece_a", 0, NULL, NULL));
  EXPECT_ERR(hipLinkComplete(link, &image, &image_size), hipErrorInvalidImage);
  REQUIRE(strlen(error_log) > 0, "no error log for the failed link");
  printf("failed link's log (first line): %.120s\n", error_log);
  CHECK(hipLinkDestroy(link));

  step("argument errors");
  EXPECT_ERR(hipLinkCreate(0, NULL, NULL, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkCreate(2, NULL, NULL, &link), hipErrorInvalidValue);
  CHECK(hipLinkCreate(0, NULL, NULL, &link));
  EXPECT_ERR(hipLinkComplete(link, &image, &image_size), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkAddData(link, type_a, NULL, size_a, "a", 0, NULL, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkAddData(link, type_a, a, 0, "a", 0, NULL, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkAddData(link, (hipJitInputType)999, a, size_a, "a", 0, NULL, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkAddData((hipLinkState_t)0x4321, type_a, a, size_a, "a", 0, NULL, NULL), hipErrorInvalidHandle);
  EXPECT_ERR(hipLinkAddFile(link, type_a, "/nonexistent/piece.o", 0, NULL, NULL), hipErrorFileNotFound);
  EXPECT_ERR(hipLinkAddFile(link, type_a, NULL, 0, NULL, NULL), hipErrorInvalidValue);
  CHECK(hipLinkAddData(link, type_a, a, size_a, "a", 0, NULL, NULL));
  EXPECT_ERR(hipLinkComplete(link, NULL, &image_size), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkComplete(link, &image, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLinkComplete((hipLinkState_t)0x4321, &image, &image_size), hipErrorInvalidHandle);
  CHECK(hipLinkDestroy(link));
  EXPECT_ERR(hipLinkDestroy((hipLinkState_t)0x4321), hipErrorInvalidHandle);
  free(a);
  free(b);
  printf("PASS module_link\n");
  return 0;
}
