/*
 * Device-visible host memory as AMD's samples use it: register a malloc'd buffer, get its
 * device pointer, let a kernel read and write it, synchronise, see the result in the buffer;
 * the bytes around the registered range (same pages, not registered) stay the application's;
 * hipHostMalloc with hipHostMallocMapped; flags; unregister; argument errors.
 */
#include "check.h"
#include <hip/hiprtc.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void triple(int* a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) a[i] *= 3;\n"
    "}\n"
    "extern \"C\" __global__ void fill(int* out, const int* in, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = in[i] + 1;\n"
    "}\n";

#define N 5000

static hipFunction_t triple_fn, fill_fn;

static void build_kernels(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  if (hiprtcCreateProgram(&prog, SOURCE, "host_register.hip", 0, NULL, NULL) != HIPRTC_SUCCESS) { printf("FAIL create\n"); exit(1); }
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  if (hiprtcCompileProgram(prog, 1, opts) != HIPRTC_SUCCESS) { printf("FAIL compile\n"); exit(1); }
  size_t size = 0;
  hiprtcGetCodeSize(prog, &size);
  char* code = malloc(size);
  hiprtcGetCode(prog, code);
  hiprtcDestroyProgram(&prog);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  CHECK(hipModuleGetFunction(&triple_fn, module, "triple"));
  CHECK(hipModuleGetFunction(&fill_fn, module, "fill"));
}

int main(void) {
  int can_map = 0;
  CHECK(hipDeviceGetAttribute(&can_map, hipDeviceAttributeCanMapHostMemory, 0));
  REQUIRE(can_map == 1, "canMapHostMemory %d", can_map);
  build_kernels();

  /* A malloc'd buffer, registered from 12 bytes in: its first and last pages are shared
   * with bytes that are not registered. */
  char* raw = malloc(N * sizeof(int) + 64);
  int* h = (int*)(raw + 12);
  memset(raw, 0x5A, 12);
  for (int i = 0; i < N; i++) h[i] = i;
  CHECK(hipHostRegister(h, N * sizeof(int), hipHostRegisterMapped));
  int* d = NULL;
  CHECK(hipHostGetDevicePointer((void**)&d, h, 0));
  REQUIRE(d != NULL, "no device pointer");
  unsigned int flags = 99;
  CHECK(hipHostGetFlags(&flags, h));
  REQUIRE(flags == hipHostRegisterMapped, "flags %u", flags);
  int* d_mid = NULL;
  CHECK(hipHostGetDevicePointer((void**)&d_mid, h + 100, 0));
  REQUIRE(d_mid == d + 100, "interior device pointer %p vs %p", (void*)d_mid, (void*)(d + 100));

  int n = N;
  void* params[] = {&d, &n};
  CHECK(hipModuleLaunchKernel(triple_fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  /* The application writes next to the registered range while the kernel runs. */
  memset(raw, 0x6B, 12);
  memset(raw + 12 + N * sizeof(int), 0x6C, 52);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < N; i++) REQUIRE(h[i] == 3 * i, "h[%d] = %d", i, h[i]);
  for (int i = 0; i < 12; i++) REQUIRE(raw[i] == 0x6B, "byte %d before the range became %#x", i, raw[i]);
  for (int i = 0; i < 52; i++) REQUIRE(raw[12 + N * sizeof(int) + i] == 0x6C, "byte %d after the range changed", i);
  printf("a kernel tripled registered memory through its device pointer; neighbours untouched\n");

  /* The CPU writes again, the device reads it (into device memory), copies see it. */
  for (int i = 0; i < N; i++) h[i] = -i;
  int* dev;
  CHECK(hipMalloc((void**)&dev, N * sizeof(int)));
  void* fparams[] = {&dev, &d, &n};
  CHECK(hipModuleLaunchKernel(fill_fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, fparams, NULL));
  int back[N];
  CHECK(hipMemcpy(back, dev, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == 1 - i, "device read back[%d] = %d", i, back[i]);
  CHECK(hipMemcpy(h, dev, N * sizeof(int), hipMemcpyDefault));
  REQUIRE(h[10] == -9, "copy into registered memory: %d", h[10]);

  /* Errors. */
  EXPECT_ERR(hipHostRegister(NULL, 16, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipHostRegister(h, 0, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipHostRegister(back, sizeof back, 0x100), hipErrorInvalidValue);
  EXPECT_ERR(hipHostRegister(h, N * sizeof(int), 0), hipErrorHostMemoryAlreadyRegistered);
  EXPECT_ERR(hipHostRegister(h + 10, 16, 0), hipErrorHostMemoryAlreadyRegistered);
  EXPECT_ERR(hipHostGetDevicePointer((void**)&d, h, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipHostGetDevicePointer(NULL, h, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipHostGetDevicePointer((void**)&d, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipHostGetDevicePointer((void**)&d, back, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipHostGetFlags(NULL, h), hipErrorInvalidValue);
  EXPECT_ERR(hipHostGetFlags(&flags, back), hipErrorInvalidValue);

  CHECK(hipHostUnregister(h));
  EXPECT_ERR(hipHostUnregister(h), hipErrorHostMemoryNotRegistered);
  EXPECT_ERR(hipHostUnregister(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipHostGetDevicePointer((void**)&d, h, 0), hipErrorInvalidValue);
  /* Registered again after unregistering: fine. */
  CHECK(hipHostRegister(h, 64, hipHostRegisterDefault));
  CHECK(hipHostUnregister(h));
  free(raw);

  /* hipHostMalloc(hipHostMallocMapped): device-addressable pinned memory. */
  int* m;
  CHECK(hipHostMalloc((void**)&m, N * sizeof(int), hipHostMallocMapped));
  int* dm;
  CHECK(hipHostGetDevicePointer((void**)&dm, m, 0));
  CHECK(hipHostGetFlags(&flags, m));
  REQUIRE(flags == hipHostMallocMapped, "mapped flags %u", flags);
  for (int i = 0; i < N; i++) m[i] = 2 * i;
  void* mparams[] = {&dm, &n};
  CHECK(hipModuleLaunchKernel(triple_fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, mparams, NULL));
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < N; i++) REQUIRE(m[i] == 6 * i, "m[%d] = %d", i, m[i]);
  CHECK(hipHostFree(m));

  /* Plain pinned memory is device-addressable too once its device pointer is asked for
   * (ROCm maps all pinned memory). */
  int* plain;
  CHECK(hipHostMalloc((void**)&plain, 64 * sizeof(int), hipHostMallocDefault));
  CHECK(hipHostGetFlags(&flags, plain));
  REQUIRE(flags == hipHostMallocDefault, "default flags %u", flags);
  for (int i = 0; i < 64; i++) plain[i] = i + 1;
  int* dplain;
  CHECK(hipHostGetDevicePointer((void**)&dplain, plain + 8, 0));
  int n8 = 8;
  void* pparams[] = {&dplain, &n8};
  CHECK(hipModuleLaunchKernel(triple_fn, 1, 1, 1, 32, 1, 1, 0, NULL, pparams, NULL));
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 64; i++) REQUIRE(plain[i] == (i >= 8 && i < 16 ? 3 * (i + 1) : i + 1), "plain[%d] = %d", i, plain[i]);
  CHECK(hipHostFree(plain));
  CHECK(hipFree(dev));
  printf("PASS host_register\n");
  return 0;
}
