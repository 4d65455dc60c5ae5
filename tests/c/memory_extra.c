/*
 * Allocation kinds and pointer queries: hipExtMallocWithFlags (the kinds ROCm accepts, bad
 * flags), hipPointerGetAttributes / hipPointerGetAttribute on device memory (incl. interior
 * pointers), hipHostMalloc memory and unknown host memory (ROCm 6+ answers), hipMemPtrGetInfo,
 * stream-ordered hipMallocAsync / hipFreeAsync (a freed pointer is refused afterwards), and
 * hipMemcpyPeer / hipMemcpyPeerAsync (device ids checked; across devices when there are two).
 */
#include "check.h"

#include <stdbool.h>

static hipStream_t stream;

static void ext_malloc_flags(void) {
  step("hipExtMallocWithFlags");
  const unsigned kinds[] = {hipDeviceMallocDefault, hipDeviceMallocFinegrained,
                            hipDeviceMallocUncached, hipDeviceMallocContiguous};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    void* p = NULL;
    CHECK(hipExtMallocWithFlags(&p, 4096, kinds[i]));
    REQUIRE(p != NULL, "kind %u gave a null pointer", kinds[i]);
    /* Usable like any allocation. */
    uint8_t data[4096], back[4096];
    fill_pattern(data, sizeof data, kinds[i]);
    CHECK(hipMemcpy(p, data, sizeof data, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(back, p, sizeof back, hipMemcpyDeviceToHost));
    EXPECT_PATTERN(back, sizeof back, kinds[i]);
    unsigned flags = 99;
    CHECK(hipPointerGetAttribute(&flags, HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS, p));
    REQUIRE(flags == kinds[i], "access flags %u, expected %u", flags, kinds[i]);
    hipPointerAttribute_t attr;
    CHECK(hipPointerGetAttributes(&attr, p));
    REQUIRE(attr.allocationFlags == kinds[i], "allocationFlags %u, expected %u", attr.allocationFlags, kinds[i]);
    CHECK(hipFree(p));
  }
  void* p = NULL;
  CHECK(hipExtMallocWithFlags(&p, 8, hipMallocSignalMemory));
  REQUIRE(p != NULL, "signal memory is null");
  CHECK(hipFree(p));
  EXPECT_ERR(hipExtMallocWithFlags(&p, 16, hipMallocSignalMemory), hipErrorInvalidValue);
  EXPECT_ERR(hipExtMallocWithFlags(&p, 4096, 5), hipErrorInvalidValue);
  EXPECT_ERR(hipExtMallocWithFlags(&p, 4096, 0x101), hipErrorInvalidValue);
  /* Flags are checked before the pointer, as in ROCm. */
  EXPECT_ERR(hipExtMallocWithFlags(NULL, 4096, 9), hipErrorInvalidValue);
  EXPECT_ERR(hipExtMallocWithFlags(NULL, 4096, hipDeviceMallocDefault), hipErrorInvalidValue);
  p = (void*)0x1;
  CHECK(hipExtMallocWithFlags(&p, 0, hipDeviceMallocFinegrained));
  REQUIRE(p == NULL, "zero bytes gave %p", p);
}

static void pointer_attributes(void) {
  step("hipPointerGetAttributes: device memory");
  int device = -1;
  CHECK(hipGetDevice(&device));
  uint8_t* dev = NULL;
  CHECK(hipMalloc((void**)&dev, 1000));
  hipPointerAttribute_t attr;
  memset(&attr, 0x5a, sizeof attr);
  CHECK(hipPointerGetAttributes(&attr, dev + 10));
  REQUIRE(attr.type == hipMemoryTypeDevice, "type %d", (int)attr.type);
  REQUIRE(attr.device == device, "device %d, expected %d", attr.device, device);
  REQUIRE(attr.devicePointer == dev + 10, "devicePointer %p, expected %p", attr.devicePointer, (void*)(dev + 10));
  REQUIRE(attr.hostPointer == NULL, "hostPointer %p", attr.hostPointer);
  REQUIRE(attr.isManaged == 0 && attr.allocationFlags == 0, "managed %d flags %u", attr.isManaged, attr.allocationFlags);

  step("hipPointerGetAttribute: device memory");
  unsigned u = 0;
  int i = -7;
  void* ptr = NULL;
  bool b = false;
  CHECK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + 999));
  REQUIRE(u == hipMemoryTypeDevice, "memory type %u", u);
  CHECK(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, dev + 5));
  REQUIRE(ptr == dev + 5, "device pointer %p", ptr);
  CHECK(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, dev + 500));
  REQUIRE(ptr == dev, "range start %p, expected %p", ptr, (void*)dev);
  CHECK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, dev + 500));
  REQUIRE(u == 1000, "range size %u", u);
  CHECK(hipPointerGetAttribute(&i, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dev));
  REQUIRE(i == device, "ordinal %d", i);
  b = true;
  CHECK(hipPointerGetAttribute(&b, HIP_POINTER_ATTRIBUTE_IS_MANAGED, dev));
  REQUIRE(!b, "device memory reported managed");
  CHECK(hipPointerGetAttribute(&b, HIP_POINTER_ATTRIBUTE_MAPPED, dev));
  REQUIRE(b, "device memory not reported mapped");
  unsigned id1 = 0, id2 = 0;
  CHECK(hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, dev));
  CHECK(hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, dev + 999));
  REQUIRE(id1 != 0 && id1 == id2, "buffer ids %u / %u", id1, id2);
  uint8_t* other = NULL;
  CHECK(hipMalloc((void**)&other, 16));
  CHECK(hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, other));
  REQUIRE(id2 != id1, "two allocations share buffer id %u", id1);
  CHECK(hipFree(other));
  ptr = (void*)0x1;
  EXPECT_ERR(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_HOST_POINTER, dev), hipErrorInvalidValue);
  REQUIRE(ptr == NULL, "host pointer of device memory %p", ptr);
  EXPECT_ERR(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_CONTEXT, dev), hipErrorNotSupported);
  EXPECT_ERR(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_P2P_TOKENS, dev), hipErrorNotSupported);
  EXPECT_ERR(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, dev), hipErrorNotSupported);
  EXPECT_ERR(hipPointerGetAttribute(&ptr, (hipPointer_attribute)99, dev), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttribute(NULL, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, dev), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, NULL), hipErrorInvalidValue);

  step("hipMemPtrGetInfo");
  size_t size = 0;
  CHECK(hipMemPtrGetInfo(dev, &size));
  REQUIRE(size == 1000, "size %zu", size);
  CHECK(hipMemPtrGetInfo(dev + 999, &size));
  REQUIRE(size == 1000, "interior size %zu", size);
  EXPECT_ERR(hipMemPtrGetInfo(dev + 1000, &size), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPtrGetInfo(NULL, &size), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPtrGetInfo(dev, NULL), hipErrorInvalidValue);

  step("pinned host memory");
  uint8_t* pinned = NULL;
  CHECK(hipHostMalloc((void**)&pinned, 300, hipHostMallocMapped));
  memset(&attr, 0x5a, sizeof attr);
  CHECK(hipPointerGetAttributes(&attr, pinned + 3));
  REQUIRE(attr.type == hipMemoryTypeHost, "pinned type %d", (int)attr.type);
  REQUIRE(attr.hostPointer == pinned + 3, "pinned hostPointer %p", attr.hostPointer);
  REQUIRE(attr.devicePointer == pinned + 3, "pinned devicePointer %p", attr.devicePointer);
  REQUIRE(attr.device == device && attr.isManaged == 0, "pinned device %d managed %d", attr.device, attr.isManaged);
  REQUIRE(attr.allocationFlags == hipHostMallocMapped, "pinned flags %u", attr.allocationFlags);
  CHECK(hipPointerGetAttribute(&ptr, HIP_POINTER_ATTRIBUTE_HOST_POINTER, pinned + 7));
  REQUIRE(ptr == pinned + 7, "host pointer %p", ptr);
  CHECK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, pinned));
  REQUIRE(u == hipMemoryTypeHost, "pinned memory type %u", u);
  CHECK(hipMemPtrGetInfo(pinned + 299, &size));
  REQUIRE(size == 300, "pinned size %zu", size);
  CHECK(hipHostFree(pinned));

  step("unknown host memory");
  int local = 0;
  memset(&attr, 0x5a, sizeof attr);
  CHECK(hipPointerGetAttributes(&attr, &local));
  REQUIRE(attr.type == hipMemoryTypeUnregistered, "type %d", (int)attr.type);
  REQUIRE(attr.device == hipInvalidDeviceId, "device %d", attr.device);
  REQUIRE(attr.devicePointer == NULL && attr.hostPointer == NULL, "pointers %p %p", attr.devicePointer, attr.hostPointer);
  REQUIRE(attr.isManaged == 0 && attr.allocationFlags == 0, "managed %d flags %u", attr.isManaged, attr.allocationFlags);
  u = 77;
  EXPECT_ERR(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, &local), hipErrorInvalidValue);
  REQUIRE(u == 0, "memory type of unknown memory %u", u);
  i = 5;
  EXPECT_ERR(hipPointerGetAttribute(&i, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, &local), hipErrorInvalidValue);
  REQUIRE(i == -2, "ordinal of unknown memory %d", i);
  u = 77;
  CHECK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS, &local));
  REQUIRE(u == 0, "access flags of unknown memory %u", u);
  EXPECT_ERR(hipMemPtrGetInfo(&local, &size), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttributes(NULL, dev), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttributes(&attr, NULL), hipErrorInvalidValue);

  step("freed memory is unknown");
  CHECK(hipFree(dev));
  CHECK(hipPointerGetAttributes(&attr, dev));
  REQUIRE(attr.type == hipMemoryTypeUnregistered, "freed memory type %d", (int)attr.type);
}

static void stream_ordered(void) {
  step("hipMallocAsync / hipFreeAsync");
  uint8_t* p = NULL;
  CHECK(hipMallocAsync((void**)&p, 1 << 20, stream));
  REQUIRE(p != NULL, "null allocation");
  uint8_t* data = xmalloc(1 << 20);
  uint8_t* back = xmalloc(1 << 20);
  fill_pattern(data, 1 << 20, 40);
  CHECK(hipMemcpyAsync(p, data, 1 << 20, hipMemcpyHostToDevice, stream));
  CHECK(hipMemcpyAsync(back, p, 1 << 20, hipMemcpyDeviceToHost, stream));
  /* Freed behind the copies: they still complete. */
  CHECK(hipFreeAsync(p, stream));
  CHECK(hipStreamSynchronize(stream));
  EXPECT_PATTERN(back, 1 << 20, 40);
  /* The pointer is gone: refused from now on. */
  EXPECT_ERR(hipMemcpy(p, data, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipFreeAsync(p, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipFree(p), hipErrorInvalidValue);
  hipPointerAttribute_t attr;
  CHECK(hipPointerGetAttributes(&attr, p));
  REQUIRE(attr.type == hipMemoryTypeUnregistered, "async-freed memory type %d", (int)attr.type);

  /* The null stream, and hipFree of stream-ordered memory. */
  CHECK(hipMallocAsync((void**)&p, 4096, NULL));
  int device = -1, ordinal = -1;
  CHECK(hipGetDevice(&device));
  CHECK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
  REQUIRE(ordinal == device, "async allocation on device %d, expected %d", ordinal, device);
  CHECK(hipMemset(p, 7, 4096));
  CHECK(hipFree(p));
  CHECK(hipMallocAsync((void**)&p, 4096, NULL));
  CHECK(hipFreeAsync(p, NULL));
  CHECK(hipDeviceSynchronize());

  /* Errors. */
  p = (uint8_t*)0x1;
  CHECK(hipMallocAsync((void**)&p, 0, stream));
  REQUIRE(p == NULL, "zero bytes gave %p", (void*)p);
  EXPECT_ERR(hipMallocAsync(NULL, 16, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipFreeAsync(NULL, stream), hipErrorInvalidValue);
  uint8_t* q = NULL;
  CHECK(hipMalloc((void**)&q, 64));
  EXPECT_ERR(hipFreeAsync(q + 1, stream), hipErrorInvalidValue);
  hipStream_t dead;
  CHECK(hipStreamCreate(&dead));
  CHECK(hipStreamDestroy(dead));
  EXPECT_ERR(hipMallocAsync((void**)&p, 16, dead), hipErrorInvalidHandle);
  EXPECT_ERR(hipFreeAsync(q, dead), hipErrorInvalidHandle);
  CHECK(hipFree(q));
  free(data);
  free(back);
}

static void peer_copies(void) {
  step("hipMemcpyPeer");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  int other = count > 1 ? 1 : 0;
  uint8_t *a = NULL, *b = NULL;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc((void**)&a, 65536));
  CHECK(hipSetDevice(other));
  CHECK(hipMalloc((void**)&b, 65536));
  CHECK(hipSetDevice(0));
  int ordinal = -1;
  CHECK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b));
  REQUIRE(ordinal == other, "b lives on device %d, expected %d", ordinal, other);
  uint8_t* data = xmalloc(65536);
  uint8_t* back = xmalloc(65536);
  fill_pattern(data, 65536, 50);
  CHECK(hipMemcpy(a, data, 65536, hipMemcpyHostToDevice));
  CHECK(hipMemcpyPeer(b, other, a, 0, 65536));
  memset(back, 0, 65536);
  CHECK(hipMemcpy(back, b, 65536, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(back, 65536, 50);

  step("hipMemcpyPeerAsync");
  fill_pattern(data, 65536, 51);
  CHECK(hipMemcpy(b, data, 65536, hipMemcpyHostToDevice));
  CHECK(hipMemcpyPeerAsync(a + 100, 0, b, other, 1000, stream));
  CHECK(hipStreamSynchronize(stream));
  memset(back, 0, 65536);
  CHECK(hipMemcpy(back, a + 100, 1000, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(back, 1000, 51);

  step("hipMemcpyPeer errors");
  EXPECT_ERR(hipMemcpyPeer(b, count, a, 0, 16), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemcpyPeer(b, other, a, -1, 16), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemcpyPeerAsync(b, -1, a, 0, 16, stream), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemcpyPeerAsync(b, other, a, count + 3, 16, stream), hipErrorInvalidDevice);
  CHECK(hipMemcpyPeer(b, other, a, 0, 0));
  /* Ranges past the end, and host memory. */
  EXPECT_ERR(hipMemcpyPeer(b, other, a, 0, 65537), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyPeer(data, other, a, 0, 16), hipErrorInvalidValue);
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  free(data);
  free(back);
}

int main(void) {
  begin("memory_extra");
  CHECK(hipStreamCreate(&stream));
  ext_malloc_flags();
  pointer_attributes();
  stream_ordered();
  peer_copies();
  CHECK(hipStreamDestroy(stream));
  printf("PASS memory_extra\n");
  return 0;
}
