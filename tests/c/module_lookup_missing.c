/*
 * hipModuleGetFunction of a name the module lacks answers hipErrorNotFound at the lookup, as
 * HIP does, by default (lookups of kernels the module shows go without waiting): a name never
 * declared, a __device__ variable and a __device__ function are no kernels; nothing is left
 * for a later call to report; the kernel the module holds is found and runs, arguments and
 * all, with its results checked.
 */
#include "rtc_module.h"

#define N 1024

static const char* source =
    "__device__ int counter;\n"
    "__device__ __attribute__((noinline)) int helper(int v) { return v + 1; }\n"
    "extern \"C\" __global__ void add_one(int* p, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = helper(p[i]); }\n";

int main(void) {
  begin("module_lookup_missing");
  hipModule_t module = rtc_module(source, "lookup_missing.hip", NULL);
  hipFunction_t f = (hipFunction_t)0x1;
  const char* missing[] = {"no_such_kernel", "counter", "helper", "add_on", "add_one2"};
  for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
    EXPECT_ERR(hipModuleGetFunction(&f, module, missing[i]), hipErrorNotFound);
    REQUIRE(f == (hipFunction_t)0x1, "a failed lookup of %s wrote its output", missing[i]);
  }
  REQUIRE(hipGetLastError() == hipErrorNotFound, "the last error is the lookup's");
  REQUIRE(hipGetLastError() == hipSuccess, "hipGetLastError resets it");
  /* Nothing was posted for the missing names: no error waits for the next synchronising call. */
  CHECK(hipDeviceSynchronize());

  CHECK(hipModuleGetFunction(&f, module, "add_one"));
  int host[N];
  for (int i = 0; i < N; i++) host[i] = i;
  int* d = NULL;
  CHECK(hipMalloc((void**)&d, sizeof host));
  CHECK(hipMemcpy(d, host, sizeof host, hipMemcpyHostToDevice));
  int n = N;
  void* params[] = {&d, &n};
  CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == i + 1, "element %d is %d, expected %d", i, host[i], i + 1);
  CHECK(hipFree(d));
  CHECK(hipModuleUnload(module));
  REQUIRE(hipGetLastError() == hipSuccess, "an error was recorded");
  printf("   5 missing names: hipErrorNotFound at the lookup; add_one found and verified\n");
  printf("PASS module_lookup_missing\n");
  return 0;
}
