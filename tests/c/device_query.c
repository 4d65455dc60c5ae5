/*
 * Device queries: initialisation, device selection, properties (both struct layouts),
 * attributes, memory information, versions, error strings, synchronisation.
 */
#include "check.h"

#include <limits.h>

static int clamp_int(size_t v) { return v > (size_t)INT_MAX ? INT_MAX : (int)v; }

static void expect_attr(hipDeviceAttribute_t attr, const char* name, int want, int dev) {
  int value = -12345;
  CHECK(hipDeviceGetAttribute(&value, attr, dev));
  printf("   attribute %-40s = %d\n", name, value);
  REQUIRE(value == want, "attribute %s is %d, properties say %d", name, value, want);
}
#define EXPECT_ATTR(attr, want) expect_attr(attr, #attr, (want), 0)

int main(void) {
  begin("device_query");

  step("hipInit");
  CHECK(hipInit(0));
  EXPECT_ERR(hipInit(1), hipErrorInvalidValue);

  step("hipGetDeviceCount");
  int count = -1;
  CHECK(hipGetDeviceCount(&count));
  printf("   %d device(s)\n", count);
  REQUIRE(count >= 1, "device count %d", count);

  step("hipGetDevice / hipSetDevice");
  int dev = -1;
  CHECK(hipGetDevice(&dev));
  REQUIRE(dev == 0, "initial device %d", dev);
  CHECK(hipSetDevice(count - 1));
  CHECK(hipGetDevice(&dev));
  REQUIRE(dev == count - 1, "device after hipSetDevice(%d) is %d", count - 1, dev);
  CHECK(hipSetDevice(0));
  EXPECT_ERR(hipSetDevice(count), hipErrorInvalidDevice);
  EXPECT_ERR(hipSetDevice(-1), hipErrorInvalidDevice);
  EXPECT_ERR(hipSetDevice(1 << 20), hipErrorInvalidDevice);
  CHECK(hipGetDevice(&dev));
  REQUIRE(dev == 0, "a failed hipSetDevice changed the device to %d", dev);
  (void)hipGetLastError();

  step("hipGetDeviceProperties (R0600 via the header macro)");
  hipDeviceProp_t props;
  memset(&props, 0xa5, sizeof props);
  CHECK(hipGetDeviceProperties(&props, 0));
  REQUIRE(props.name[0] != '\0', "empty device name");
  REQUIRE(memchr(props.name, '\0', sizeof props.name) != NULL, "name not NUL-terminated");
  REQUIRE(props.totalGlobalMem > 0, "totalGlobalMem 0");
  REQUIRE(props.warpSize > 0, "warpSize %d", props.warpSize);
  REQUIRE(props.maxThreadsPerBlock > 0, "maxThreadsPerBlock %d", props.maxThreadsPerBlock);
  REQUIRE(props.multiProcessorCount > 0, "multiProcessorCount %d", props.multiProcessorCount);
  printf("   name \"%s\" arch \"%s\" totalGlobalMem %zu warpSize %d CUs %d cc %d.%d\n", props.name,
         props.gcnArchName, props.totalGlobalMem, props.warpSize, props.multiProcessorCount,
         props.major, props.minor);
  EXPECT_ERR(hipGetDeviceProperties(&props, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipGetDeviceProperties(NULL, 0), hipErrorInvalidValue);

  step("hipGetDevicePropertiesR0000 (pre-ROCm-6 layout)");
  hipDeviceProp_tR0000 old;
  memset(&old, 0xa5, sizeof old);
  CHECK(hipGetDevicePropertiesR0000(&old, 0));
  REQUIRE(strcmp(old.name, props.name) == 0, "R0000 name \"%s\" vs R0600 \"%s\"", old.name, props.name);
  REQUIRE(old.totalGlobalMem == props.totalGlobalMem, "R0000 totalGlobalMem %zu vs %zu",
          old.totalGlobalMem, props.totalGlobalMem);
  REQUIRE(old.warpSize == props.warpSize, "R0000 warpSize %d vs %d", old.warpSize, props.warpSize);
  REQUIRE(old.maxThreadsPerBlock == props.maxThreadsPerBlock, "R0000 maxThreadsPerBlock %d vs %d",
          old.maxThreadsPerBlock, props.maxThreadsPerBlock);
  REQUIRE(old.multiProcessorCount == props.multiProcessorCount, "R0000 CUs %d vs %d",
          old.multiProcessorCount, props.multiProcessorCount);
  REQUIRE(old.major == props.major && old.minor == props.minor, "R0000 cc %d.%d vs %d.%d",
          old.major, old.minor, props.major, props.minor);
  EXPECT_ERR(hipGetDevicePropertiesR0000(&old, count), hipErrorInvalidDevice);

  step("hipDeviceGetName");
  char name[256];
  CHECK(hipDeviceGetName(name, (int)sizeof name, 0));
  REQUIRE(strcmp(name, props.name) == 0, "hipDeviceGetName \"%s\" vs props \"%s\"", name, props.name);
  char tiny[4] = {'x', 'x', 'x', 'x'};
  CHECK(hipDeviceGetName(tiny, (int)sizeof tiny, 0));
  REQUIRE(tiny[3] == '\0' && strncmp(tiny, props.name, 3) == 0, "truncated name \"%.4s\"", tiny);
  EXPECT_ERR(hipDeviceGetName(name, (int)sizeof name, count), hipErrorInvalidDevice);

  step("hipDeviceGetAttribute");
  EXPECT_ATTR(hipDeviceAttributeWarpSize, props.warpSize);
  EXPECT_ATTR(hipDeviceAttributeMultiprocessorCount, props.multiProcessorCount);
  EXPECT_ATTR(hipDeviceAttributeMaxThreadsPerBlock, props.maxThreadsPerBlock);
  EXPECT_ATTR(hipDeviceAttributeComputeCapabilityMajor, props.major);
  EXPECT_ATTR(hipDeviceAttributeComputeCapabilityMinor, props.minor);
  EXPECT_ATTR(hipDeviceAttributeClockRate, props.clockRate);
  EXPECT_ATTR(hipDeviceAttributeL2CacheSize, props.l2CacheSize);
  EXPECT_ATTR(hipDeviceAttributeMaxSharedMemoryPerBlock, clamp_int(props.sharedMemPerBlock));
  EXPECT_ATTR(hipDeviceAttributeTotalGlobalMem, clamp_int(props.totalGlobalMem));
  /* ROCm fills both from one value (hip-tests' CheckAttrValues); a CUDA device answers the
   * attribute from CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT. */
  EXPECT_ATTR(hipDeviceAttributeTexturePitchAlignment, clamp_int(props.texturePitchAlignment));
  EXPECT_ATTR(hipDeviceAttributeTextureAlignment, clamp_int(props.textureAlignment));
  /* AMD's HDP flush registers: ROCm writes the properties' pointer through the int*
   * (hip-tests' CheckAttrValues); a remote device's registers are mapped nowhere here. */
  unsigned int* hdp = (unsigned int*)&hdp;
  CHECK(hipDeviceGetAttribute((int*)&hdp, hipDeviceAttributeHdpMemFlushCntl, 0));
  REQUIRE(hdp == props.hdpMemFlushCntl, "HdpMemFlushCntl %p, properties %p", (void*)hdp, (void*)props.hdpMemFlushCntl);
  hdp = (unsigned int*)&hdp;
  CHECK(hipDeviceGetAttribute((int*)&hdp, hipDeviceAttributeHdpRegFlushCntl, 0));
  REQUIRE(hdp == props.hdpRegFlushCntl, "HdpRegFlushCntl %p, properties %p", (void*)hdp, (void*)props.hdpRegFlushCntl);
  int value = 0;
  EXPECT_ERR(hipDeviceGetAttribute(&value, hipDeviceAttributeWarpSize, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGetAttribute(NULL, hipDeviceAttributeWarpSize, 0), hipErrorInvalidValue);

  step("hipDeviceTotalMem");
  size_t total_mem = 0;
  CHECK(hipDeviceTotalMem(&total_mem, 0));
  REQUIRE(total_mem == props.totalGlobalMem, "hipDeviceTotalMem %zu vs props %zu", total_mem,
          props.totalGlobalMem);

  step("versions");
  int driver = 0, runtime = 0;
  CHECK(hipDriverGetVersion(&driver));
  CHECK(hipRuntimeGetVersion(&runtime));
  printf("   driver %d runtime %d\n", driver, runtime);
  REQUIRE(driver > 0, "driver version %d", driver);
  REQUIRE(runtime > 0, "runtime version %d", runtime);
  EXPECT_ERR(hipDriverGetVersion(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipRuntimeGetVersion(NULL), hipErrorInvalidValue);

  step("hipMemGetInfo");
  size_t free_mem = 0, total = 0;
  CHECK(hipMemGetInfo(&free_mem, &total));
  printf("   free %zu total %zu\n", free_mem, total);
  REQUIRE(total > 0, "total 0");
  REQUIRE(free_mem <= total, "free %zu > total %zu", free_mem, total);
  REQUIRE(total == props.totalGlobalMem, "hipMemGetInfo total %zu vs props %zu", total,
          props.totalGlobalMem);

  step("hipGetErrorName / hipGetErrorString");
  struct {
    hipError_t code;
    const char* name;
  } names[] = {
      {hipSuccess, "hipSuccess"},
      {hipErrorInvalidValue, "hipErrorInvalidValue"},
      {hipErrorOutOfMemory, "hipErrorOutOfMemory"},
      {hipErrorNotInitialized, "hipErrorNotInitialized"},
      {hipErrorInvalidDevice, "hipErrorInvalidDevice"},
      {hipErrorInvalidHandle, "hipErrorInvalidHandle"},
      {hipErrorNotReady, "hipErrorNotReady"},
      {hipErrorNotSupported, "hipErrorNotSupported"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char* n = hipGetErrorName(names[i].code);
    const char* s = hipGetErrorString(names[i].code);
    REQUIRE(n != NULL && strcmp(n, names[i].name) == 0, "hipGetErrorName(%d) = \"%s\", expected \"%s\"",
            (int)names[i].code, n ? n : "(null)", names[i].name);
    REQUIRE(s != NULL && s[0] != '\0', "hipGetErrorString(%d) is empty", (int)names[i].code);
  }

  step("hipDeviceSynchronize");
  CHECK(hipDeviceSynchronize());

  /* Everything above that was expected to fail did; the last error is one of them. */
  REQUIRE(hipGetLastError() != hipSuccess, "expected failures left no last error");
  REQUIRE(hipGetLastError() == hipSuccess, "hipGetLastError did not reset");

  printf("PASS device_query\n");
  return 0;
}
