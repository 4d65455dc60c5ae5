/*
 * hipMemcpyToSymbol_spt / hipMemcpyFromSymbol_spt and their Async forms with a real device
 * variable: a module compiled with hiprtc is registered the way hipcc's constructor registers
 * a fat binary (__hipRegisterFatBinary, __hipRegisterVar), so the variable's host shadow
 * names it. Values written through one form are read back through the others and through
 * hipModuleGetGlobal; offsets and sizes past the variable are refused.
 */
#include "check.h"

#include <hip/hiprtc.h>

/* What hipcc's generated code calls (not in the public headers). */
extern void** __hipRegisterFatBinary(const void* data);
extern void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext, size_t size,
                             int constant, int global);
extern void __hipUnregisterFatBinary(void** modules);

/* hipcc's __CudaFatBinaryWrapper: magic "HIPF" (little-endian 0x48495046), version, bundle. */
struct FatBinaryWrapper {
  unsigned int magic;
  unsigned int version;
  const void* binary;
  void* unused;
};

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "__device__ int table[8];\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static int shadow[8]; /* the host shadow hipcc would emit for `table` */

int main(void) {
  begin("symbols_spt");
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "table.hip", 0, NULL, NULL));
  RTC_CHECK(hiprtcCompileProgram(prog, 0, NULL));
  size_t size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &size));
  char* code = xmalloc(size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));

  struct FatBinaryWrapper wrapper = {0x48495046u, 1, code, NULL};
  void** handle = __hipRegisterFatBinary(&wrapper);
  __hipRegisterVar(handle, shadow, (char*)"table", (char*)"table", 0, sizeof shadow, 0, 0);

  step("hipMemcpyToSymbol_spt / hipMemcpyFromSymbol_spt");
  int values[8], back[8];
  for (int i = 0; i < 8; i++) values[i] = 100 + i;
  CHECK(hipMemcpyToSymbol_spt(shadow, values, sizeof values, 0, hipMemcpyHostToDevice));
  memset(back, 0, sizeof back);
  CHECK(hipMemcpyFromSymbol_spt(back, shadow, sizeof back, 0, hipMemcpyDeviceToHost));
  for (int i = 0; i < 8; i++) REQUIRE(back[i] == 100 + i, "table[%d] = %d", i, back[i]);

  step("the Async forms on the per-thread stream, with offsets");
  int two[2] = {-1, -2};
  CHECK(hipMemcpyToSymbolAsync_spt(shadow, two, sizeof two, 3 * sizeof(int), hipMemcpyHostToDevice, NULL));
  int got[3] = {0, 0, 0};
  CHECK(hipMemcpyFromSymbolAsync_spt(got, shadow, sizeof got, 2 * sizeof(int), hipMemcpyDeviceToHost, hipStreamPerThread));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  REQUIRE(got[0] == 102 && got[1] == -1 && got[2] == -2, "table[2..5] = %d %d %d", got[0], got[1], got[2]);

  step("device-to-device through the symbol, and the variable's address");
  void* addr = NULL;
  CHECK(hipGetSymbolAddress(&addr, shadow));
  int* dev = NULL;
  CHECK(hipMalloc((void**)&dev, sizeof values));
  CHECK(hipMemcpyFromSymbol_spt(dev, shadow, sizeof values, 0, hipMemcpyDeviceToDevice));
  memset(back, 0, sizeof back);
  CHECK(hipMemcpy(back, dev, sizeof back, hipMemcpyDeviceToHost));
  REQUIRE(back[3] == -1 && back[7] == 107, "copied table[3] = %d, table[7] = %d", back[3], back[7]);
  CHECK(hipMemcpy(back, addr, sizeof back, hipMemcpyDeviceToHost));
  REQUIRE(back[4] == -2, "table[4] through its address = %d", back[4]);

  step("bounds");
  EXPECT_ERR(hipMemcpyToSymbol_spt(shadow, values, sizeof values, 4, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyFromSymbol_spt(back, shadow, 4, sizeof values, hipMemcpyDeviceToHost), hipErrorInvalidValue);

  CHECK(hipFree(dev));
  __hipUnregisterFatBinary(handle);
  free(code);
  printf("PASS symbols_spt\n");
  return 0;
}
