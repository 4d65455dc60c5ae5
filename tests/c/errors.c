/*
 * Exact HIP error codes for bad arguments, and the last-error machinery. Afterwards the
 * worker must still serve this process normally.
 */
#include "check.h"

static void expect_last(hipError_t want, const char* what) {
  hipError_t peek = hipPeekAtLastError();
  REQUIRE(peek == want, "%s: hipPeekAtLastError %s, expected %s", what, hipGetErrorName(peek),
          hipGetErrorName(want));
  hipError_t last = hipGetLastError();
  REQUIRE(last == want, "%s: hipGetLastError %s, expected %s", what, hipGetErrorName(last),
          hipGetErrorName(want));
  last = hipGetLastError();
  REQUIRE(last == hipSuccess, "%s: second hipGetLastError %s", what, hipGetErrorName(last));
}

int main(void) {
  begin("errors");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  REQUIRE(hipGetLastError() == hipSuccess, "last error set before any failure");

  step("out-of-range device");
  EXPECT_ERR(hipSetDevice(count), hipErrorInvalidDevice);
  expect_last(hipErrorInvalidDevice, "hipSetDevice");
  hipDeviceProp_t props;
  EXPECT_ERR(hipGetDeviceProperties(&props, count + 7), hipErrorInvalidDevice);
  int value;
  EXPECT_ERR(hipDeviceGetAttribute(&value, hipDeviceAttributeWarpSize, -1), hipErrorInvalidDevice);
  size_t bytes;
  EXPECT_ERR(hipDeviceTotalMem(&bytes, count), hipErrorInvalidDevice);

  step("huge allocation");
  void* p = (void*)0x1234;
  EXPECT_ERR(hipMalloc(&p, (size_t)1 << 50), hipErrorOutOfMemory);
  expect_last(hipErrorOutOfMemory, "hipMalloc(1<<50)");
  EXPECT_ERR(hipMalloc(&p, SIZE_MAX), hipErrorOutOfMemory);
  (void)hipGetLastError();

  step("NULL pointer arguments");
  uint8_t host[64] = {0};
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, 4096));
  EXPECT_ERR(hipMalloc(NULL, 16), hipErrorInvalidValue);
  EXPECT_ERR(hipGetDeviceCount(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGetDevice(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetInfo(NULL, &bytes), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(NULL, host, sizeof host, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(d, NULL, sizeof host, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(NULL, d, sizeof host, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset(NULL, 0, 16), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamCreate(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipEventCreate(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipHostMalloc(NULL, 16, 0), hipErrorInvalidValue);
  expect_last(hipErrorInvalidValue, "NULL arguments");

  step("hipFree of freed and made-up pointers");
  uint8_t* gone = NULL;
  CHECK(hipMalloc((void**)&gone, 4096));
  CHECK(hipFree(gone));
  EXPECT_ERR(hipFree(gone), hipErrorInvalidValue);
  EXPECT_ERR(hipFree((void*)(uintptr_t)0x12345678), hipErrorInvalidValue);
  EXPECT_ERR(hipFree(d + 16), hipErrorInvalidValue); /* inside an allocation, not its start */
  EXPECT_ERR(hipFree(host), hipErrorInvalidValue);   /* a host address */
  expect_last(hipErrorInvalidValue, "hipFree");

  step("copies to and from freed and made-up device pointers");
  void* bogus = (void*)(uintptr_t)0x7777000;
  EXPECT_ERR(hipMemcpy(gone, host, sizeof host, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(host, gone, sizeof host, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(bogus, host, sizeof host, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(host, bogus, sizeof host, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(d, bogus, sizeof host, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(bogus, d, sizeof host, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyHtoD(gone, host, sizeof host), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset(gone, 0, 16), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset(bogus, 0, 16), hipErrorInvalidValue);
  /* Running off the end of a live allocation. */
  EXPECT_ERR(hipMemcpy(d + 4090, host, sizeof host, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(host, d + 4090, sizeof host, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  expect_last(hipErrorInvalidValue, "bad copies");

  step("bad handles and directions");
  /* ROCm's hip::isValid: a stream never created is a destroyed context (hip-tests'
   * Unit_hipStreamSynchronize_UninitializedStream). */
  EXPECT_ERR(hipStreamSynchronize((hipStream_t)(uintptr_t)0xdead0), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipEventSynchronize((hipEvent_t)(uintptr_t)0xdead0), hipErrorInvalidHandle);
  EXPECT_ERR(hipMemcpy(host, host + 32, 16, (hipMemcpyKind)77), hipErrorInvalidMemcpyDirection);
  (void)hipGetLastError();

  step("last-error semantics");
  EXPECT_ERR(hipSetDevice(-1), hipErrorInvalidDevice);
  CHECK(hipGetDeviceCount(&count)); /* a success does not clear the last error */
  REQUIRE(hipPeekAtLastError() == hipErrorInvalidDevice, "peek after a success: %s",
          hipGetErrorName(hipPeekAtLastError()));
  REQUIRE(hipPeekAtLastError() == hipErrorInvalidDevice, "peek reset the last error");
  EXPECT_ERR(hipMalloc(NULL, 1), hipErrorInvalidValue); /* the latest error wins */
  expect_last(hipErrorInvalidValue, "latest error");

  step("the worker still serves");
  uint8_t in[4096], out[4096];
  fill_pattern(in, sizeof in, 99);
  CHECK(hipMemcpy(d, in, sizeof in, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(out, sizeof out, 99);
  uint8_t* fresh = NULL;
  CHECK(hipMalloc((void**)&fresh, (size_t)1 << 20));
  CHECK(hipMemset(fresh, 0x42, (size_t)1 << 20));
  CHECK(hipMemcpy(out, fresh + 1000, sizeof out, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < sizeof out; i++) REQUIRE(out[i] == 0x42, "byte %zu is 0x%02x", i, out[i]);
  CHECK(hipFree(fresh));
  CHECK(hipFree(d));
  CHECK(hipDeviceSynchronize());
  REQUIRE(hipGetLastError() == hipSuccess, "successful calls left an error");

  printf("PASS errors\n");
  return 0;
}
