/*
 * Contexts as ROCm models them (hipCtx*, hipDevicePrimaryCtx*): a context is its device, each
 * thread has a context stack, and push/pop/set move the thread's current device. Run on a
 * worker with two devices.
 */
#include "check.h"

static int current(void) {
  int dev = -1;
  CHECK(hipGetDevice(&dev));
  return dev;
}

int main(void) {
  begin("contexts");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  /* The second device where the worker has two (the test harness gives it two); with one,
   * everything runs on device 0 and the checks that need two are skipped. */
  const int other = count > 1 ? 1 : 0;

  step("primary context retain/release and state");
  unsigned flags = 99;
  int active = 99;
  CHECK(hipDevicePrimaryCtxGetState(other, &flags, &active));
  REQUIRE(flags == 0 && active == 0, "fresh primary context: flags %u active %d", flags, active);
  /* ROCm 7 (clr hip_context.cpp): the primary context is always in use. */
  EXPECT_ERR(hipDevicePrimaryCtxSetFlags(other, hipDeviceScheduleBlockingSync), hipErrorContextAlreadyInUse);
  CHECK(hipDevicePrimaryCtxGetState(other, &flags, NULL));
  REQUIRE(flags == 0, "flags %u: ROCm reports 0", flags);
  hipCtx_t primary0 = NULL, primary1 = NULL, again = NULL;
  CHECK(hipDevicePrimaryCtxRetain(&primary1, other));
  CHECK(hipDevicePrimaryCtxRetain(&again, other));
  REQUIRE(primary1 != NULL && again == primary1, "a device has one primary context (%p, %p)", (void*)primary1, (void*)again);
  CHECK(hipDevicePrimaryCtxGetState(other, NULL, &active));
  REQUIRE(active == 1, "retained primary context is active (%d)", active);
  EXPECT_ERR(hipDevicePrimaryCtxSetFlags(other, 0), hipErrorContextAlreadyInUse);
  CHECK(hipDevicePrimaryCtxRelease(other));
  CHECK(hipDevicePrimaryCtxGetState(other, NULL, &active));
  REQUIRE(active == 1, "one retain left: still active");
  CHECK(hipDevicePrimaryCtxRelease(other));
  CHECK(hipDevicePrimaryCtxGetState(other, NULL, &active));
  REQUIRE(active == 0, "released twice: inactive (%d)", active);
  EXPECT_ERR(hipDevicePrimaryCtxSetFlags(other, 0), hipErrorContextAlreadyInUse);
  CHECK(hipDevicePrimaryCtxRetain(&primary0, 0));
  REQUIRE(primary0 != NULL && (count == 1 || primary0 != primary1), "primary contexts %p %p", (void*)primary0, (void*)primary1);

  step("primary context errors");
  EXPECT_ERR(hipDevicePrimaryCtxGetState(count, &flags, &active), hipErrorInvalidDevice);
  EXPECT_ERR(hipDevicePrimaryCtxGetState(-1, &flags, &active), hipErrorInvalidDevice);
  EXPECT_ERR(hipDevicePrimaryCtxRetain(&again, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipDevicePrimaryCtxRetain(NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDevicePrimaryCtxRelease(count), hipErrorInvalidDevice);
  CHECK(hipDevicePrimaryCtxReset(count)); /* ROCm's no-op checks nothing */
  EXPECT_ERR(hipDevicePrimaryCtxSetFlags(count, 0), hipErrorInvalidDevice);
  EXPECT_ERR(hipDevicePrimaryCtxSetFlags(0, 0x100), hipErrorContextAlreadyInUse);

  step("hipDevicePrimaryCtxReset is a no-op: memory, streams and arrays stay");
  {
    uint8_t* kept = NULL;
    hipStream_t kept_stream;
    hipArray_t kept_array;
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    CHECK(hipMalloc((void**)&kept, 256));
    CHECK(hipStreamCreate(&kept_stream));
    CHECK(hipMallocArray(&kept_array, &desc, 16, 0, 0));
    CHECK(hipMemset(kept, 0x3c, 256));
    CHECK(hipDevicePrimaryCtxReset(0));
    uint8_t back[256];
    CHECK(hipMemcpyAsync(back, kept, sizeof back, hipMemcpyDeviceToHost, kept_stream));
    CHECK(hipStreamSynchronize(kept_stream));
    for (int i = 0; i < 256; i++) REQUIRE(back[i] == 0x3c, "byte %d is %#x after hipDevicePrimaryCtxReset", i, back[i]);
    float row[16] = {0};
    CHECK(hipMemcpy2DToArray(kept_array, 0, 0, row, sizeof row, sizeof row, 1, hipMemcpyHostToDevice));
    CHECK(hipFreeArray(kept_array));
    CHECK(hipStreamDestroy(kept_stream));
    CHECK(hipFree(kept));
  }

  step("push/pop/set move the current device");
  REQUIRE(current() == 0, "starts on device 0");
  hipCtx_t ctx = NULL;
  CHECK(hipCtxGetCurrent(&ctx));
  REQUIRE(ctx == primary0, "current context is device 0's");
  CHECK(hipCtxPushCurrent(primary1));
  REQUIRE(current() == other, "push makes device %d current (%d)", other, current());
  int dev = -1;
  CHECK(hipCtxGetDevice(&dev));
  REQUIRE(dev == other, "hipCtxGetDevice %d", dev);
  CHECK(hipCtxPushCurrent(primary0));
  REQUIRE(current() == 0, "second push: device 0");
  hipCtx_t popped = NULL;
  CHECK(hipCtxPopCurrent(&popped));
  REQUIRE(popped == primary0, "pop returns the top");
  REQUIRE(current() == other, "after pop: device %d again (%d)", other, current());
  CHECK(hipCtxSetCurrent(primary0));
  REQUIRE(current() == 0, "set replaces the top: device 0");
  CHECK(hipCtxPopCurrent(NULL));
  EXPECT_ERR(hipCtxPopCurrent(&popped), hipErrorInvalidContext);
  CHECK(hipCtxSetCurrent(NULL));
  EXPECT_ERR(hipCtxPushCurrent(NULL), hipErrorInvalidContext);
  EXPECT_ERR(hipCtxPushCurrent((hipCtx_t)&count), hipErrorInvalidContext);
  EXPECT_ERR(hipCtxSetCurrent((hipCtx_t)&count), hipErrorInvalidContext);
  EXPECT_ERR(hipCtxGetCurrent(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipCtxGetDevice(NULL), hipErrorInvalidValue);

  step("hipCtxCreate/Destroy");
  hipCtx_t created = NULL;
  CHECK(hipCtxCreate(&created, hipDeviceScheduleSpin, other));
  REQUIRE(created == primary1, "a context is its device");
  REQUIRE(current() == other, "create makes it current");
  unsigned ctx_flags = 99;
  EXPECT_ERR(hipCtxGetFlags(&ctx_flags), hipErrorNotSupported); /* ROCm 7 */
  active = 0;
  CHECK(hipDevicePrimaryCtxGetState(other, &flags, &active));
  REQUIRE(active == 1 && flags == 0, "created context: active %d flags %u", active, flags);
  float* on1 = NULL;
  CHECK(hipMalloc((void**)&on1, 4096));
  hipPointerAttribute_t attrs;
  CHECK(hipPointerGetAttributes(&attrs, on1));
  REQUIRE(attrs.device == other, "memory allocated under device %d's context is on device %d", other, attrs.device);
  /* Deprecated calls ROCm 7 does not implement. */
  EXPECT_ERR(hipCtxSynchronize(), hipErrorNotSupported);
  unsigned api = 0;
  EXPECT_ERR(hipCtxGetApiVersion(created, &api), hipErrorNotSupported);
  EXPECT_ERR(hipCtxCreate(&created, 0, count), hipErrorInvalidValue);
  EXPECT_ERR(hipCtxCreate(NULL, 0, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipCtxCreate(&created, 0x100, 0), hipErrorInvalidValue);
  CHECK(hipCtxPushCurrent(primary0));
  CHECK(hipCtxDestroy(primary0));  /* the top of the stack: popped */
  REQUIRE(current() == other, "destroying the top context returns to device %d (%d)", other, current());
  CHECK(hipCtxDestroy(created));
  CHECK(hipDevicePrimaryCtxGetState(other, &flags, &active));
  REQUIRE(active == 0, "destroyed: inactive (%d)", active);
  EXPECT_ERR(hipCtxPopCurrent(NULL), hipErrorInvalidContext);
  EXPECT_ERR(hipCtxDestroy(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipCtxGetFlags(NULL), hipErrorNotSupported);

  step("cache and shared memory configuration");
  hipFuncCache_t cache = 99;
  EXPECT_ERR(hipCtxGetCacheConfig(&cache), hipErrorNotSupported);
  EXPECT_ERR(hipCtxSetCacheConfig(hipFuncCachePreferL1), hipErrorNotSupported);
  EXPECT_ERR(hipCtxSetCacheConfig((hipFuncCache_t)7), hipErrorInvalidValue);
  hipSharedMemConfig bank = hipSharedMemBankSizeDefault;
  EXPECT_ERR(hipCtxSetSharedMemConfig(hipSharedMemBankSizeEightByte), hipErrorNotSupported);
  CHECK(hipCtxGetSharedMemConfig(&bank));
  REQUIRE(bank == hipSharedMemBankSizeFourByte, "banks are four bytes (%d)", (int)bank);
  EXPECT_ERR(hipCtxGetSharedMemConfig(NULL), hipErrorInvalidValue);

  step("peer access through contexts");
  CHECK(hipSetDevice(0));
  EXPECT_ERR(hipCtxEnablePeerAccess(NULL, 0), hipErrorInvalidContext);
  if (count > 1) {
    CHECK(hipCtxEnablePeerAccess(primary1, 0));
    EXPECT_ERR(hipCtxEnablePeerAccess(primary1, 0), hipErrorPeerAccessAlreadyEnabled);
    CHECK(hipCtxDisablePeerAccess(primary1));
    EXPECT_ERR(hipCtxDisablePeerAccess(primary1), hipErrorPeerAccessNotEnabled);
    EXPECT_ERR(hipCtxEnablePeerAccess(primary1, 1), hipErrorInvalidValue);
  }

  step("primary context reset keeps the device's memory (ROCm 7: a no-op)");
  CHECK(hipDevicePrimaryCtxReset(other));
  CHECK(hipPointerGetAttributes(&attrs, on1));
  REQUIRE(attrs.type == hipMemoryTypeDevice, "memory after a primary context reset is type %d", (int)attrs.type);
  CHECK(hipFree(on1));

  printf("PASS contexts\n");
  return 0;
}
