/*
 * The devices HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES leave, in
 * their order (tests/tests/c_programs.rs and multi_worker.rs start this program with the
 * variables set, as hip-tests' Unit_hipGetDeviceCount_HideDevices starts its child).
 *
 * Arguments: the devices the program must see, in order, each `BUS:MIB` (the host worker's
 * pciBusID of the device, which is its index on that worker, and its memory in MiB; 0: not
 * checked). No argument: no device may be visible (hipErrorNoDevice, count 0). `uuids`: prints
 * each visible device's UUID as `UUID GPU-<32 hex digits>` (for entries naming devices so)
 * and its pciBusID as `BUS <device> <pciBusID>` (scripts/device-multi-gpu.sh reads both).
 *
 * Every call taking or answering a device speaks the visible numbering: properties and
 * attributes, hipSetDevice/hipGetDevice, memory's pointer attributes, a stream's device,
 * peer queries; one past the last visible device is hipErrorInvalidDevice.
 */
#include "check.h"

#define MAX_DEVICES 16

static int print_uuids(void) {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  for (int d = 0; d < count; d++) {
    hipUUID uuid;
    CHECK(hipDeviceGetUuid(&uuid, d));
    printf("UUID GPU-");
    for (int i = 0; i < 16; i++) printf("%02x", (unsigned char)uuid.bytes[i]);
    printf("\n");
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, d));
    printf("BUS %d %d\n", d, prop.pciBusID);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "uuids") == 0) return print_uuids();
  int want = argc - 1;
  REQUIRE(want <= MAX_DEVICES, "at most %d devices", MAX_DEVICES);
  int bus[MAX_DEVICES];
  size_t mib[MAX_DEVICES];
  for (int i = 0; i < want; i++) {
    REQUIRE(sscanf(argv[i + 1], "%d:%zu", &bus[i], &mib[i]) == 2, "argument %s is not BUS:MIB", argv[i + 1]);
  }

  int count = -1;
  if (want == 0) {
    EXPECT_ERR(hipGetDeviceCount(&count), hipErrorNoDevice);
    REQUIRE(count == 0, "no visible device, but the count is %d", count);
    printf("PASS visible_devices (no device)\n");
    return 0;
  }
  CHECK(hipGetDeviceCount(&count));
  REQUIRE(count == want, "%d devices visible, expected %d", count, want);

  for (int d = 0; d < want; d++) {
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, d));
    REQUIRE(prop.pciBusID == bus[d], "device %d has pciBusID %d, expected %d", d, prop.pciBusID, bus[d]);
    REQUIRE(mib[d] == 0 || prop.totalGlobalMem == mib[d] << 20, "device %d has %zu bytes, expected %zu MiB", d, prop.totalGlobalMem,
            mib[d]);
    int attr = -1;
    CHECK(hipDeviceGetAttribute(&attr, hipDeviceAttributePciBusId, d));
    REQUIRE(attr == bus[d], "device %d: attribute pciBusId %d, expected %d", d, attr, bus[d]);
  }

  /* One past the last visible device does not exist, whatever the worker serves. */
  hipDeviceProp_t past;
  EXPECT_ERR(hipGetDeviceProperties(&past, want), hipErrorInvalidDevice);
  EXPECT_ERR(hipSetDevice(want), hipErrorInvalidDevice);
  EXPECT_ERR(hipSetDevice(-1), hipErrorInvalidDevice);
  int can = -1;
  EXPECT_ERR(hipDeviceCanAccessPeer(&can, 0, want), hipErrorInvalidDevice);
  size_t free_bytes = 0, total_bytes = 0;

  for (int d = 0; d < want; d++) {
    CHECK(hipSetDevice(d));
    int current = -1;
    CHECK(hipGetDevice(&current));
    REQUIRE(current == d, "hipGetDevice answers %d after hipSetDevice(%d)", current, d);
    CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
    REQUIRE(mib[d] == 0 || total_bytes == mib[d] << 20, "device %d: hipMemGetInfo total %zu, expected %zu MiB", d, total_bytes, mib[d]);

    unsigned *dev = NULL;
    CHECK(hipMalloc((void **)&dev, 4096));
    hipPointerAttribute_t attrs;
    CHECK(hipPointerGetAttributes(&attrs, dev));
    REQUIRE(attrs.device == d, "memory allocated on device %d reports device %d", d, attrs.device);
    CHECK(hipMemset(dev, 0x5a, 4096));
    unsigned back[1024];
    CHECK(hipMemcpy(back, dev, sizeof back, hipMemcpyDeviceToHost));
    REQUIRE(back[1023] == 0x5a5a5a5au, "device %d: memset reads back %08x", d, back[1023]);

    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    int stream_device = -1;
    CHECK(hipStreamGetDevice(stream, &stream_device));
    REQUIRE(stream_device == d, "a stream created on device %d is on device %d", d, stream_device);
    CHECK(hipStreamDestroy(stream));
    CHECK(hipFree(dev));

    for (int peer = 0; peer < want; peer++) {
      CHECK(hipDeviceCanAccessPeer(&can, d, peer));
    }
  }
  printf("PASS visible_devices (%d devices)\n", want);
  return 0;
}
