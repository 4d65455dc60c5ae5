/*
 * Device, error and profiler calls beyond the basics: hipDeviceComputeCapability,
 * hipDeviceGetUuid, cache and shared-memory configuration, device flags, every
 * hipDeviceAttribute_t name ROCm 7.2 has (values that mirror a property must equal it),
 * hipDeviceGetTexture1DLinearMaxWidth, peer attributes and link type / hop count (with two
 * devices where the worker has them), hipDrvGetErrorName/String, hipExtGetLastError,
 * hipProfilerStart/Stop; argument errors in ROCm's order.
 */
#include "check.h"

#include <limits.h>

static int attr_of(hipDeviceAttribute_t attr, int dev) {
  int v = -12345;
  CHECK(hipDeviceGetAttribute(&v, attr, dev));
  return v;
}

static void compute_capability_and_uuid(int count) {
  step("hipDeviceComputeCapability / hipDeviceGetUuid");
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  int major = -1, minor = -1;
  CHECK(hipDeviceComputeCapability(&major, &minor, 0));
  REQUIRE(major == props.major && minor == props.minor, "capability %d.%d, properties %d.%d", major, minor,
          props.major, props.minor);
  EXPECT_ERR(hipDeviceComputeCapability(NULL, &minor, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceComputeCapability(&major, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceComputeCapability(&major, &minor, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceComputeCapability(&major, &minor, -1), hipErrorInvalidDevice);

  hipUUID uuid, again;
  memset(&uuid, 0, sizeof uuid);
  CHECK(hipDeviceGetUuid(&uuid, 0));
  int nonzero = 0;
  for (int i = 0; i < 16; i++) nonzero |= uuid.bytes[i] != 0;
  REQUIRE(nonzero, "device 0 has an all-zero UUID");
  CHECK(hipDeviceGetUuid(&again, 0));
  REQUIRE(memcmp(&uuid, &again, sizeof uuid) == 0, "the UUID changed between calls");
  REQUIRE(memcmp(&uuid, &props.uuid, sizeof uuid) == 0, "hipDeviceGetUuid and hipDeviceProp_t.uuid differ");
  if (count > 1) {
    CHECK(hipDeviceGetUuid(&again, 1));
    REQUIRE(memcmp(&uuid, &again, sizeof uuid) != 0, "devices 0 and 1 share a UUID");
  }
  EXPECT_ERR(hipDeviceGetUuid(NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetUuid(&uuid, count), hipErrorInvalidDevice);
}

static void configuration(int count) {
  step("cache and shared-memory configuration, device flags");
  hipFuncCache_t cache = (hipFuncCache_t)99;
  CHECK(hipDeviceGetCacheConfig(&cache));
  REQUIRE(cache == hipFuncCachePreferNone, "cache config %d", (int)cache);
  CHECK(hipDeviceSetCacheConfig(hipFuncCachePreferShared));
  CHECK(hipDeviceSetCacheConfig(hipFuncCachePreferEqual));
  EXPECT_ERR(hipDeviceSetCacheConfig((hipFuncCache_t)4), hipErrorInvalidValue);
  CHECK(hipDeviceGetCacheConfig(&cache));
  REQUIRE(cache == hipFuncCachePreferNone, "ROCm keeps no cache preference; got %d", (int)cache);
  EXPECT_ERR(hipDeviceGetCacheConfig(NULL), hipErrorInvalidValue);

  hipSharedMemConfig shared = (hipSharedMemConfig)99;
  CHECK(hipDeviceGetSharedMemConfig(&shared));
  REQUIRE(shared == hipSharedMemBankSizeFourByte, "shared memory config %d", (int)shared);
  CHECK(hipDeviceSetSharedMemConfig(hipSharedMemBankSizeEightByte));
  CHECK(hipDeviceSetSharedMemConfig(hipSharedMemBankSizeDefault));
  EXPECT_ERR(hipDeviceSetSharedMemConfig((hipSharedMemConfig)3), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetSharedMemConfig(NULL), hipErrorInvalidValue);

  unsigned flags = 0xffff;
  CHECK(hipGetDeviceFlags(&flags));
  REQUIRE(flags == hipDeviceScheduleSpin, "initial device flags %#x (ROCm starts with Spin)", flags);
  CHECK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync | hipDeviceMapHost | hipDeviceLmemResizeToMax));
  CHECK(hipGetDeviceFlags(&flags));
  REQUIRE(flags == hipDeviceScheduleBlockingSync, "flags %#x: only the scheduling part is kept", flags);
  CHECK(hipSetDeviceFlags(hipDeviceScheduleAuto));
  CHECK(hipGetDeviceFlags(&flags));
  REQUIRE(flags == hipDeviceScheduleAuto, "flags %#x after Auto", flags);
  EXPECT_ERR(hipSetDeviceFlags(hipDeviceScheduleSpin | hipDeviceScheduleYield), hipErrorInvalidValue);
  EXPECT_ERR(hipSetDeviceFlags(0x40), hipErrorInvalidValue);
  CHECK(hipGetDeviceFlags(&flags));
  REQUIRE(flags == hipDeviceScheduleAuto, "refused flags changed them to %#x", flags);
  EXPECT_ERR(hipGetDeviceFlags(NULL), hipErrorInvalidValue);
  if (count > 1) {
    CHECK(hipSetDevice(1));
    CHECK(hipGetDeviceFlags(&flags));
    REQUIRE(flags == hipDeviceScheduleSpin, "device 1's flags %#x: flags are per device", flags);
    CHECK(hipSetDevice(0));
  }
}

static void attributes(void) {
  step("every hipDeviceAttribute_t name");
  hipDeviceProp_t p;
  CHECK(hipGetDeviceProperties(&p, 0));
  REQUIRE(attr_of(hipDeviceAttributeMaxThreadsPerMultiProcessor, 0) == p.maxThreadsPerMultiProcessor, "threads/MP");
  REQUIRE(attr_of(hipDeviceAttributeMaxBlocksPerMultiProcessor, 0) == p.maxBlocksPerMultiProcessor, "blocks/MP");
  REQUIRE(attr_of(hipDeviceAttributeMaxRegistersPerMultiprocessor, 0) == p.regsPerMultiprocessor, "regs/MP");
  REQUIRE(attr_of(hipDeviceAttributeSharedMemPerMultiprocessor, 0) == (int)p.sharedMemPerMultiprocessor, "shared/MP");
  REQUIRE(attr_of(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, 0) == (int)p.maxSharedMemoryPerMultiProcessor,
          "max shared/MP");
  REQUIRE(attr_of(hipDeviceAttributeStreamPrioritiesSupported, 0) == p.streamPrioritiesSupported, "priorities");
  REQUIRE(attr_of(hipDeviceAttributeCooperativeMultiDeviceLaunch, 0) == p.cooperativeMultiDeviceLaunch, "coop multi");
  REQUIRE(attr_of(hipDeviceAttributeHostNativeAtomicSupported, 0) == p.hostNativeAtomicSupported, "host atomics");
  REQUIRE(attr_of(hipDeviceAttributePersistingL2CacheMaxSize, 0) == p.persistingL2CacheMaxSize, "persisting L2");
  /* The values themselves, from a source independent of this library's cache: on the host
   * backend its documented figures (worker/src/backend/host/properties.rs: registers and
   * blocks per core, no persisting L2, single-device cooperative launches, a 1 GHz clock64,
   * textures as large as the worker's arrays); on a GPU the worker reads them from the
   * driver (cuDeviceGetAttribute, hipGetDeviceProperties). */
  if (strcmp(p.gcnArchName, "host") == 0) {
    REQUIRE(p.regsPerMultiprocessor == 65536, "host regs/MP %d", p.regsPerMultiprocessor);
    REQUIRE(p.maxBlocksPerMultiProcessor == 1024 / p.warpSize, "host blocks/MP %d", p.maxBlocksPerMultiProcessor);
    REQUIRE(p.persistingL2CacheMaxSize == 0, "host persisting L2 %d", p.persistingL2CacheMaxSize);
    REQUIRE(p.cooperativeMultiDeviceLaunch == 0, "host multi-device cooperative launch %d", p.cooperativeMultiDeviceLaunch);
    REQUIRE(p.clockInstructionRate == 1000000, "host clock64 rate %d kHz", p.clockInstructionRate);
    REQUIRE(attr_of(hipDeviceAttributeMaxTexture1DWidth, 0) == 16384, "host 1D texture width");
    REQUIRE(attr_of(hipDeviceAttributeMaxTexture3DDepth, 0) == 8192, "host 3D texture depth");
  }
  REQUIRE(attr_of(hipDeviceAttributeClockInstructionRate, 0) == p.clockInstructionRate, "clock instruction rate");
  REQUIRE(attr_of(hipDeviceAttributeMaxTexture1DWidth, 0) == p.maxTexture1D, "1D texture width");
  REQUIRE(attr_of(hipDeviceAttributeMaxTexture2DWidth, 0) == p.maxTexture2D[0], "2D texture width");
  REQUIRE(attr_of(hipDeviceAttributeMaxTexture2DHeight, 0) == p.maxTexture2D[1], "2D texture height");
  REQUIRE(attr_of(hipDeviceAttributeMaxTexture3DWidth, 0) == p.maxTexture3D[0], "3D texture width");
  REQUIRE(attr_of(hipDeviceAttributeMaxTexture3DDepth, 0) == p.maxTexture3D[2], "3D texture depth");
  int max_pitch = attr_of(hipDeviceAttributeMaxPitch, 0);
  /* ROCm clamps both the property and the attribute to INT_MAX, so they agree as int. */
  REQUIRE(max_pitch > 0 && p.memPitch <= (size_t)INT_MAX && max_pitch == (int)p.memPitch,
          "max pitch %d, memPitch %zu (ROCm clamps both to INT_MAX)", max_pitch, p.memPitch);
  REQUIRE(attr_of(hipDeviceAttributePhysicalMultiProcessorCount, 0) >= p.multiProcessorCount, "physical MPs");

  /* The rest are the backend's: each answers, with a plausible value. */
  const hipDeviceAttribute_t from_worker[] = {
      hipDeviceAttributeAccessPolicyMaxWindowSize, hipDeviceAttributeCanUseHostPointerForRegisteredMem,
      hipDeviceAttributeComputePreemptionSupported, hipDeviceAttributeDirectManagedMemAccessFromHost,
      hipDeviceAttributeMaxSurfaceCubemapLayered, hipDeviceAttributeMaxTextureCubemapLayered,
      hipDeviceAttributePageableMemoryAccessUsesHostPageTables, hipDeviceAttributeReservedSharedMemPerBlock,
      hipDeviceAttributeVirtualMemoryManagementSupported, hipDeviceAttributeMemoryPoolSupportedHandleTypes,
      hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc, hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim,
      hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim,
      hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem, hipDeviceAttributeCanUseStreamWaitValue,
      hipDeviceAttributeMaxTexture1DLinear, hipDeviceAttributeMemoryPoolsSupported,
      hipDeviceAttributeHostRegisterSupported, hipDeviceAttributeWallClockRate, hipDeviceAttributeNumberOfXccs,
  };
  for (size_t i = 0; i < sizeof from_worker / sizeof from_worker[0]; i++) {
    int v = attr_of(from_worker[i], 0);
    REQUIRE(v >= 0, "attribute %d is %d", (int)from_worker[i], v);
    REQUIRE(attr_of(from_worker[i], 0) == v, "attribute %d changed between calls", (int)from_worker[i]);
  }
  REQUIRE(attr_of(hipDeviceAttributeNumberOfXccs, 0) >= 1, "at least one XCC");
  REQUIRE(attr_of(hipDeviceAttributeWallClockRate, 0) > 0, "a wall clock");

  int v = 0;
  EXPECT_ERR(hipDeviceGetAttribute(&v, (hipDeviceAttribute_t)9998, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetAttribute(NULL, hipDeviceAttributeMaxThreadsPerMultiProcessor, 0), hipErrorInvalidValue);

  step("hipDeviceGetTexture1DLinearMaxWidth");
  size_t limit = (size_t)attr_of(hipDeviceAttributeMaxTexture1DLinear, 0);
  hipChannelFormatDesc f32 = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  hipChannelFormatDesc f32x4 = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindFloat);
  hipChannelFormatDesc none = hipCreateChannelDesc(0, 0, 0, 0, hipChannelFormatKindNone);
  size_t width = 1;
  CHECK(hipDeviceGetTexture1DLinearMaxWidth(&width, &f32, 0));
  REQUIRE(width == limit / 4, "float texels: %zu, limit %zu bytes", width, limit);
  CHECK(hipDeviceGetTexture1DLinearMaxWidth(&width, &f32x4, 0));
  REQUIRE(width == limit / 16, "float4 texels: %zu, limit %zu bytes", width, limit);
  EXPECT_ERR(hipDeviceGetTexture1DLinearMaxWidth(&width, &none, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetTexture1DLinearMaxWidth(NULL, &f32, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetTexture1DLinearMaxWidth(&width, NULL, 0), hipErrorInvalidValue);
}

static void peers(int count) {
  step("hipDeviceGetP2PAttribute / hipExtGetLinkTypeAndHopCount");
  int v = -1;
  uint32_t link = 99, hops = 99;
  EXPECT_ERR(hipDeviceGetP2PAttribute(NULL, hipDevP2PAttrAccessSupported, 0, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, 0), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 0, &link, &hops), hipErrorInvalidValue);
  EXPECT_ERR(hipExtGetLinkTypeAndHopCount(-1, 0, &link, &hops), hipErrorInvalidValue);
  EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, count, &link, &hops), hipErrorInvalidDevice);
  EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 1, NULL, &hops), hipErrorInvalidValue);
  EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 1, &link, NULL), hipErrorInvalidValue);
  if (count < 2) return;
  int can = -1;
  CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
  CHECK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, 1));
  REQUIRE(v == can, "P2P access attribute %d, hipDeviceCanAccessPeer %d", v, can);
  CHECK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrNativeAtomicSupported, 0, 1));
  REQUIRE(v == 0 || v == 1, "native atomics %d", v);
  CHECK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrPerformanceRank, 1, 0));
  REQUIRE(v >= 0, "performance rank %d", v);
  CHECK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrHipArrayAccessSupported, 0, 1));
  REQUIRE(v == 0 || v == 1, "array access %d", v);
  EXPECT_ERR(hipDeviceGetP2PAttribute(&v, (hipDeviceP2PAttr)7, 0, 1), hipErrorInvalidValue);
  CHECK(hipExtGetLinkTypeAndHopCount(0, 1, &link, &hops));
  REQUIRE(hops >= 1 && link <= 4, "link type %u, %u hops", link, hops);
}

static void errors_and_profiler(void) {
  step("hipDrvGetErrorName / hipDrvGetErrorString");
  const char* s = NULL;
  CHECK(hipDrvGetErrorName(hipErrorInvalidValue, &s));
  REQUIRE(s && strcmp(s, "hipErrorInvalidValue") == 0, "name %s", s ? s : "(null)");
  CHECK(hipDrvGetErrorString(hipErrorOutOfMemory, &s));
  REQUIRE(s && strcmp(s, hipGetErrorString(hipErrorOutOfMemory)) == 0, "string %s", s ? s : "(null)");
  CHECK(hipDrvGetErrorName(hipErrorUnknown, &s));
  REQUIRE(strcmp(s, "hipErrorUnknown") == 0, "name of hipErrorUnknown: %s", s);
  s = NULL;
  EXPECT_ERR(hipDrvGetErrorName((hipError_t)12345, &s), hipErrorInvalidValue);
  REQUIRE(s && strcmp(s, "hipErrorUnknown") == 0, "an unknown code reads hipErrorUnknown, got %s", s ? s : "(null)");
  EXPECT_ERR(hipDrvGetErrorString((hipError_t)12345, &s), hipErrorInvalidValue);
  EXPECT_ERR(hipDrvGetErrorName(hipSuccess, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipDrvGetErrorString(hipSuccess, NULL), hipErrorInvalidValue);
  /* As in ROCm they are not HIP calls that record a last error. */
  (void)hipGetLastError();
  EXPECT_ERR(hipDrvGetErrorName(hipSuccess, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGetLastError(), hipSuccess);

  step("hipExtGetLastError: the previous call's result, successes included");
  int count = 0;
  EXPECT_ERR(hipSetDevice(999), hipErrorInvalidDevice);
  EXPECT_ERR(hipExtGetLastError(), hipErrorInvalidDevice);
  EXPECT_ERR(hipExtGetLastError(), hipSuccess); /* reset by reading */
  EXPECT_ERR(hipSetDevice(999), hipErrorInvalidDevice);
  CHECK(hipGetDeviceCount(&count));
  EXPECT_ERR(hipExtGetLastError(), hipSuccess); /* the last call succeeded ... */
  EXPECT_ERR(hipGetLastError(), hipErrorInvalidDevice); /* ... the last error is still there */

  step("hipProfilerStart / hipProfilerStop");
  CHECK(hipProfilerStart());
  CHECK(hipProfilerStop());
}

int main(void) {
  begin("device_extra");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  printf("   %d device(s)\n", count);
  compute_capability_and_uuid(count);
  configuration(count);
  attributes();
  peers(count);
  errors_and_profiler();
  printf("PASS device_extra\n");
  return 0;
}
