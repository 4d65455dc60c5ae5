/*
 * Device control calls, with ROCm's error codes: hipSetValidDevices, hipDeviceGet,
 * hipDeviceCanAccessPeer, hipDeviceGetPCIBusId / hipDeviceGetByPCIBusId, hipDeviceGetLimit /
 * hipDeviceSetLimit, hipChooseDevice (both property layouts) and hipCreateChannelDesc. Runs on
 * any number of devices; with two or more the peer and per-device checks cover them all.
 */
#include "check.h"

static int count;
static int on_host; /* the host backend: exact limit values are known */

static void valid_devices(void) {
  step("hipSetValidDevices");
  /* Before any hipSetDevice, the first listed device becomes current (ROCm). */
  int last = count - 1, cur = -1;
  CHECK(hipSetValidDevices(&last, 1));
  CHECK(hipGetDevice(&cur));
  REQUIRE(cur == last, "hipSetValidDevices made device %d current, expected %d", cur, last);
  CHECK(hipSetValidDevices(NULL, 0)); /* empty list: nothing to do */
  EXPECT_ERR(hipSetValidDevices(NULL, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipSetValidDevices(&last, -1), hipErrorInvalidValue);
  int too_many[64] = {0};
  EXPECT_ERR(hipSetValidDevices(too_many, count + 1), hipErrorInvalidValue);
  /* Every entry is checked (the list may be at most as long as the device count). */
  int bad[2] = {0, count};
  int n = count > 1 ? 2 : 1;
  if (n == 1) bad[0] = count;
  EXPECT_ERR(hipSetValidDevices(bad, n), hipErrorInvalidDevice);
  bad[n - 1] = -1;
  EXPECT_ERR(hipSetValidDevices(bad, n), hipErrorInvalidDevice);
  /* After hipSetDevice the list no longer changes the current device. */
  CHECK(hipSetDevice(0));
  CHECK(hipSetValidDevices(&last, 1));
  CHECK(hipGetDevice(&cur));
  REQUIRE(cur == 0, "hipSetValidDevices after hipSetDevice moved to device %d", cur);
}

static void device_get(void) {
  step("hipDeviceGet");
  for (int i = 0; i < count; i++) {
    hipDevice_t d = -1;
    CHECK(hipDeviceGet(&d, i));
    REQUIRE(d == i, "hipDeviceGet(%d) gave %d", i, d);
  }
  hipDevice_t d;
  EXPECT_ERR(hipDeviceGet(&d, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGet(&d, -1), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGet(NULL, 0), hipErrorInvalidValue);
}

static void peers(void) {
  step("hipDeviceCanAccessPeer");
  int can = -1;
  CHECK(hipDeviceCanAccessPeer(&can, 0, 0));
  REQUIRE(can == 0, "a device is its own peer (%d)", can);
  can = -1;
  CHECK(hipDeviceCanAccessPeer(&can, count + 3, count + 3)); /* ROCm: same id first, success */
  REQUIRE(can == 0, "same out-of-range id gave %d", can);
  EXPECT_ERR(hipDeviceCanAccessPeer(NULL, 0, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceCanAccessPeer(&can, 0, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceCanAccessPeer(&can, -1, 0), hipErrorInvalidDevice);
  for (int i = 0; i < count; i++) {
    for (int j = 0; j < count; j++) {
      if (i == j) continue;
      int ij = -1, ji = -1;
      CHECK(hipDeviceCanAccessPeer(&ij, i, j));
      CHECK(hipDeviceCanAccessPeer(&ji, j, i));
      REQUIRE(ij == 0 || ij == 1, "canAccessPeer(%d, %d) = %d", i, j, ij);
      REQUIRE(ij == ji, "peer access is not symmetric: %d->%d %d, %d->%d %d", i, j, ij, j, i, ji);
      /* Emulated devices share one address space. */
      if (on_host) REQUIRE(ij == 1, "host devices %d and %d are not peers", i, j);
      printf("device %d -> %d: peer access %d\n", i, j, ij);
    }
  }
}

static void pci_bus_ids(void) {
  step("hipDeviceGetPCIBusId / hipDeviceGetByPCIBusId");
  char ids[16][16];
  for (int i = 0; i < count && i < 16; i++) {
    memset(ids[i], 0x55, sizeof ids[i]);
    CHECK(hipDeviceGetPCIBusId(ids[i], 13, i));
    REQUIRE(strlen(ids[i]) == 12, "bus id \"%s\" is not domain:bus:device.function", ids[i]);
    REQUIRE(ids[i][4] == ':' && ids[i][7] == ':' && ids[i][10] == '.', "bus id \"%s\"", ids[i]);
    hipDeviceProp_t p;
    CHECK(hipGetDeviceProperties(&p, i));
    char want[32];
    snprintf(want, sizeof want, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    REQUIRE(strcmp(ids[i], want) == 0, "bus id \"%s\", properties say \"%s\"", ids[i], want);
    int back = -1;
    CHECK(hipDeviceGetByPCIBusId(&back, ids[i]));
    REQUIRE(back == i, "bus id %s maps back to device %d, not %d", ids[i], back, i);
    for (int j = 0; j < i; j++) REQUIRE(strcmp(ids[i], ids[j]) != 0, "devices %d and %d share bus id %s", j, i, ids[i]);
    printf("device %d: %s\n", i, ids[i]);
  }
  /* Upper-case hex and trailing text parse as sscanf does. */
  char upper[32];
  snprintf(upper, sizeof upper, "%sX", ids[0]);
  for (char* c = upper; *c; c++) if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
  int back = -1;
  CHECK(hipDeviceGetByPCIBusId(&back, upper));
  REQUIRE(back == 0, "\"%s\" maps to %d", upper, back);

  /* A buffer too short: ROCm writes what fits and answers hipErrorInvalidValue. */
  char small[12];
  memset(small, 0x55, sizeof small);
  EXPECT_ERR(hipDeviceGetPCIBusId(small, 12, 0), hipErrorInvalidValue);
  REQUIRE(strlen(small) == 11 && strncmp(small, ids[0], 11) == 0, "truncated id \"%s\"", small);
  EXPECT_ERR(hipDeviceGetPCIBusId(small, 0, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetPCIBusId(NULL, 13, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetPCIBusId(small, 12, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGetPCIBusId(NULL, 13, -1), hipErrorInvalidDevice); /* device checked first */
  EXPECT_ERR(hipDeviceGetByPCIBusId(NULL, ids[0]), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetByPCIBusId(&back, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetByPCIBusId(&back, "not a bus id"), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetByPCIBusId(&back, "0000:03:00"), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetByPCIBusId(&back, "fffe:fe:1e.7"), hipErrorInvalidValue);
}

static void limits(void) {
  step("hipDeviceGetLimit / hipDeviceSetLimit");
  size_t v = 0;
  /* Read the stack size and ask for a little more (hip-tests' set-get pattern): every backend
   * must honour its own default plus a few bytes. */
  size_t stack = 0;
  CHECK(hipDeviceGetLimit(&stack, hipLimitStackSize));
  REQUIRE(stack > 0, "the stack limit reads 0");
  CHECK(hipDeviceSetLimit(hipLimitStackSize, stack + 8));
  CHECK(hipDeviceGetLimit(&v, hipLimitStackSize));
  REQUIRE(v >= stack + 8, "stack limit set to %zu reads %zu", stack + 8, v);
  /* ROCm 7 (clr hip_device_runtime.cpp) reads and sets the stack and heap sizes. */
  const hipLimit_t supported[] = {hipLimitStackSize, hipLimitMallocHeapSize};
  const size_t wanted[] = {2048, (size_t)32 << 20};
  for (int i = 0; i < 2; i++) {
    CHECK(hipDeviceGetLimit(&v, supported[i]));
    printf("limit %d: %zu\n", (int)supported[i], v);
    CHECK(hipDeviceSetLimit(supported[i], wanted[i]));
    CHECK(hipDeviceGetLimit(&v, supported[i]));
    /* A backend may round up (CUDA's stack granularity), never down. */
    REQUIRE(v >= wanted[i] && v < wanted[i] * 2, "limit %d set to %zu reads %zu", (int)supported[i], wanted[i], v);
  }
  /* It answers hipErrorUnsupportedLimit for the printf FIFO size, both ways, and never sets
   * the scratch bounds; the scratch limits themselves exist on AMD GPUs only. */
  EXPECT_ERR(hipDeviceGetLimit(&v, hipLimitPrintfFifoSize), hipErrorUnsupportedLimit);
  EXPECT_ERR(hipDeviceSetLimit(hipLimitPrintfFifoSize, (size_t)2 << 20), hipErrorUnsupportedLimit);
  EXPECT_ERR(hipDeviceSetLimit(hipExtLimitScratchMin, 0), hipErrorUnsupportedLimit);
  EXPECT_ERR(hipDeviceSetLimit(hipExtLimitScratchMax, 0), hipErrorUnsupportedLimit);
  if (on_host) {
    EXPECT_ERR(hipDeviceGetLimit(&v, hipExtLimitScratchMax), hipErrorUnsupportedLimit);
    EXPECT_ERR(hipDeviceSetLimit(hipExtLimitScratchCurrent, 0), hipErrorUnsupportedLimit);
  }
  if (on_host) {
    CHECK(hipDeviceGetLimit(&v, hipLimitStackSize));
    REQUIRE(v == 2048, "host stack limit reads %zu", v);
    EXPECT_ERR(hipDeviceSetLimit(hipLimitStackSize, (size_t)1 << 30), hipErrorInvalidValue);
    CHECK(hipDeviceGetLimit(&v, hipLimitStackSize));
    REQUIRE(v == 2048, "a refused stack limit changed it to %zu", v);
  }
  /* Limits belong to a device. */
  if (count > 1) {
    size_t before = 0, other = 0;
    CHECK(hipSetDevice(1));
    CHECK(hipDeviceGetLimit(&before, hipLimitMallocHeapSize));
    CHECK(hipDeviceSetLimit(hipLimitMallocHeapSize, (size_t)48 << 20));
    CHECK(hipSetDevice(0));
    CHECK(hipDeviceGetLimit(&other, hipLimitMallocHeapSize));
    REQUIRE(other >= wanted[1] && other < (size_t)48 << 20, "device 1's heap limit leaked to device 0 (%zu)", other);
    CHECK(hipSetDevice(1));
    CHECK(hipDeviceSetLimit(hipLimitMallocHeapSize, before));
    CHECK(hipSetDevice(0));
  }
  EXPECT_ERR(hipDeviceGetLimit(NULL, hipLimitStackSize), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetLimit(&v, hipLimitRange), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetLimit(&v, (hipLimit_t)7), hipErrorUnsupportedLimit);
  EXPECT_ERR(hipDeviceSetLimit(hipLimitRange, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceSetLimit((hipLimit_t)3, 1), hipErrorUnsupportedLimit);
  hipError_t last = hipGetLastError();
  REQUIRE(last == hipErrorUnsupportedLimit, "last error %s", hipGetErrorName(last));
}

static void choose(void) {
  step("hipChooseDevice");
  hipDeviceProp_t mine;
  CHECK(hipGetDeviceProperties(&mine, count - 1));
  hipDeviceProp_t want;
  memset(&want, 0, sizeof want);
  int dev = -1;
  CHECK(hipChooseDevice(&dev, &want)); /* nothing asked: device 0 */
  REQUIRE(dev == 0, "empty request chose %d", dev);
  want.major = mine.major;
  want.totalGlobalMem = mine.totalGlobalMem;
  want.multiProcessorCount = mine.multiProcessorCount;
  CHECK(hipChooseDevice(&dev, &want));
  hipDeviceProp_t got;
  CHECK(hipGetDeviceProperties(&got, dev));
  REQUIRE(got.major >= want.major && got.totalGlobalMem >= want.totalGlobalMem &&
              got.multiProcessorCount >= want.multiProcessorCount,
          "device %d does not meet the request", dev);
  want.totalGlobalMem = (size_t)-1; /* nobody has that much: device 0 */
  CHECK(hipChooseDevice(&dev, &want));
  REQUIRE(dev == 0, "an impossible request chose %d", dev);
  EXPECT_ERR(hipChooseDevice(NULL, &want), hipErrorInvalidValue);
  EXPECT_ERR(hipChooseDevice(&dev, NULL), hipErrorInvalidValue);

  /* The legacy layout, through its own entry point. */
  hipDeviceProp_tR0000 old;
  memset(&old, 0, sizeof old);
  old.warpSize = mine.warpSize;
  old.maxThreadsPerBlock = mine.maxThreadsPerBlock;
  dev = -1;
  CHECK(hipChooseDeviceR0000(&dev, &old));
  REQUIRE(dev >= 0 && dev < count, "R0000 chose %d", dev);
  old.maxThreadsPerBlock = 1 << 30;
  CHECK(hipChooseDeviceR0000(&dev, &old));
  REQUIRE(dev == 0, "an impossible R0000 request chose %d", dev);
}

static void channel_desc(void) {
  step("hipCreateChannelDesc");
  hipChannelFormatDesc d = hipCreateChannelDesc(8, 16, 32, 0, hipChannelFormatKindFloat);
  REQUIRE(d.x == 8 && d.y == 16 && d.z == 32 && d.w == 0 && d.f == hipChannelFormatKindFloat,
          "got {%d, %d, %d, %d, %d}", d.x, d.y, d.z, d.w, (int)d.f);
  d = hipCreateChannelDesc(-1, 0, 0, 7, hipChannelFormatKindSigned);
  REQUIRE(d.x == -1 && d.w == 7 && d.f == hipChannelFormatKindSigned, "got {%d, .., %d, %d}", d.x, d.w, (int)d.f);
}

int main(void) {
  begin("device_control");
  CHECK(hipGetDeviceCount(&count));
  hipDeviceProp_t p;
  CHECK(hipGetDeviceProperties(&p, 0));
  on_host = strcmp(p.gcnArchName, "host") == 0;
  printf("%d device(s), %s\n", count, p.gcnArchName);
  valid_devices();
  device_get();
  peers();
  pci_bus_ids();
  limits();
  choose();
  channel_desc();
  printf("PASS device_control\n");
  return 0;
}
