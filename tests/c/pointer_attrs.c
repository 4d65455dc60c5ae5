/*
 * Pointer attributes for every kind of memory this library can make (device, hipMallocAsync,
 * hipExtMallocWithFlags, pinned host; managed, registered host and VMM-mapped memory where the
 * library supports them), unknown pointers, hipDrvPointerGetAttributes, hipPointerSetAttribute,
 * hipMemGetAddressRange and their argument errors, with ROCm's answers.
 */
#include "check.h"

#include <stdbool.h>

static hipMemoryType attr_type(const void* p) {
  unsigned int type = 0xdead;
  hipError_t e = hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)p);
  REQUIRE(e == hipSuccess, "MEMORY_TYPE of %p: %s", p, hipGetErrorName(e));
  return (hipMemoryType)type;
}

/* Checks every attribute of `inner`, a pointer `offset` bytes into an allocation of `size`
 * bytes at `base` of the given kind. */
static void check_kind(const char* what, char* base, size_t offset, size_t size, hipMemoryType struct_type,
                       hipMemoryType attr_type_want, int host_side, int managed, int device) {
  printf("-- kind %s\n", what);
  char* inner = base + offset;
  hipPointerAttribute_t a;
  memset(&a, 0x5a, sizeof a);
  CHECK(hipPointerGetAttributes(&a, inner));
  REQUIRE(a.type == struct_type, "%s: type %d, want %d", what, (int)a.type, (int)struct_type);
  REQUIRE(a.device == device, "%s: device %d", what, a.device);
  REQUIRE(a.devicePointer == inner, "%s: devicePointer %p, want %p", what, a.devicePointer, (void*)inner);
  REQUIRE(a.hostPointer == (host_side ? (void*)inner : NULL), "%s: hostPointer %p", what, a.hostPointer);
  REQUIRE(a.isManaged == managed, "%s: isManaged %d", what, a.isManaged);

  REQUIRE(attr_type(inner) == attr_type_want, "%s: attribute type %d", what, (int)attr_type(inner));
  void* p = (void*)1;
  CHECK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, (hipDeviceptr_t)inner));
  REQUIRE(p == inner, "%s: DEVICE_POINTER %p", what, p);
  p = (void*)1;
  if (host_side) {
    CHECK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_HOST_POINTER, (hipDeviceptr_t)inner));
    REQUIRE(p == inner, "%s: HOST_POINTER %p", what, p);
  } else {
    EXPECT_ERR(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_HOST_POINTER, (hipDeviceptr_t)inner), hipErrorInvalidValue);
    REQUIRE(p == NULL, "%s: HOST_POINTER of device memory written as NULL (%p)", what, p);
  }
  p = NULL;
  CHECK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, (hipDeviceptr_t)inner));
  REQUIRE(p == base, "%s: RANGE_START_ADDR %p, want %p", what, p, (void*)base);
  unsigned int range_size = 0;
  CHECK(hipPointerGetAttribute(&range_size, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, (hipDeviceptr_t)inner));
  REQUIRE(range_size == size, "%s: RANGE_SIZE %u, want %zu", what, range_size, size);
  int ordinal = -7;
  CHECK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (hipDeviceptr_t)inner));
  REQUIRE(ordinal == device, "%s: DEVICE_ORDINAL %d", what, ordinal);
  bool flag = true;
  CHECK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_IS_MANAGED, (hipDeviceptr_t)inner));
  REQUIRE(flag == (managed != 0), "%s: IS_MANAGED %d", what, (int)flag);
  flag = false;
  CHECK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_MAPPED, (hipDeviceptr_t)inner));
  REQUIRE(flag, "%s: MAPPED", what);
  unsigned int id = 0, id_base = 0;
  CHECK(hipPointerGetAttribute(&id, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)inner));
  CHECK(hipPointerGetAttribute(&id_base, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)base));
  REQUIRE(id != 0 && id == id_base, "%s: BUFFER_ID %u / %u", what, id, id_base);

  /* SYNC_MEMOPS: off until set, then on, then off again. */
  flag = true;
  CHECK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)inner));
  REQUIRE(!flag, "%s: SYNC_MEMOPS starts off", what);
  unsigned int one = 1, zero = 0;
  CHECK(hipPointerSetAttribute(&one, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)inner));
  CHECK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)base));
  REQUIRE(flag, "%s: SYNC_MEMOPS set on the allocation", what);
  CHECK(hipPointerSetAttribute(&zero, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)base));
  CHECK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)inner));
  REQUIRE(!flag, "%s: SYNC_MEMOPS cleared", what);

  /* Several at once. */
  hipPointer_attribute which[4] = {HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, HIP_POINTER_ATTRIBUTE_BUFFER_ID};
  unsigned int type = 0, buffer = 0;
  void* start = NULL;
  int dev = -9;
  void* data[4] = {&type, &start, &dev, &buffer};
  CHECK(hipDrvPointerGetAttributes(4, which, data, (hipDeviceptr_t)inner));
  REQUIRE(type == (unsigned)attr_type_want && start == base && dev == device && buffer == id,
          "%s: hipDrvPointerGetAttributes type %u start %p device %d id %u", what, type, start, dev, buffer);

  /* The containing allocation. */
  hipDeviceptr_t range_base = NULL;
  size_t range_bytes = 0;
  CHECK(hipMemGetAddressRange(&range_base, &range_bytes, (hipDeviceptr_t)inner));
  REQUIRE(range_base == base && range_bytes == size, "%s: address range %p+%zu", what, range_base, range_bytes);
  CHECK(hipMemGetAddressRange(NULL, &range_bytes, (hipDeviceptr_t)(base + size - 1)));
  REQUIRE(range_bytes == size, "%s: last byte's range %zu", what, range_bytes);
}

int main(void) {
  begin("pointer_attrs");
  const size_t size = 3 * 4096 + 40;

  char* device_mem = NULL;
  CHECK(hipMalloc((void**)&device_mem, size));
  check_kind("hipMalloc", device_mem, 100, size, hipMemoryTypeDevice, hipMemoryTypeDevice, 0, 0, 0);

  char* ext = NULL;
  CHECK(hipExtMallocWithFlags((void**)&ext, size, hipDeviceMallocFinegrained));
  check_kind("hipExtMallocWithFlags", ext, 8, size, hipMemoryTypeDevice, hipMemoryTypeDevice, 0, 0, 0);
  hipPointerAttribute_t a;
  CHECK(hipPointerGetAttributes(&a, ext));
  REQUIRE(a.allocationFlags == hipDeviceMallocFinegrained, "allocationFlags %u", a.allocationFlags);
  unsigned int access = 99;
  CHECK(hipPointerGetAttribute(&access, HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS, (hipDeviceptr_t)ext));
  REQUIRE(access == hipDeviceMallocFinegrained, "ACCESS_FLAGS %u", access);

  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  char* pool_mem = NULL;
  CHECK(hipMallocAsync((void**)&pool_mem, size, stream));
  CHECK(hipStreamSynchronize(stream));
  check_kind("hipMallocAsync", pool_mem, size - 1, size, hipMemoryTypeDevice, hipMemoryTypeDevice, 0, 0, 0);
  CHECK(hipFreeAsync(pool_mem, stream));
  CHECK(hipStreamSynchronize(stream));

  char* pinned = NULL;
  CHECK(hipHostMalloc((void**)&pinned, size, hipHostMallocDefault));
  check_kind("hipHostMalloc", pinned, 4096, size, hipMemoryTypeHost, hipMemoryTypeHost, 1, 0, 0);
  CHECK(hipHostFree(pinned));

  /* Kinds other parts of the library make, checked where this build supports them. */
  char* managed = NULL;
  hipError_t e = hipMallocManaged((void**)&managed, size, hipMemAttachGlobal);
  if (e == hipSuccess) {
    check_kind("hipMallocManaged", managed, 12, size, hipMemoryTypeManaged, hipMemoryTypeHost, 1, 1, 0);
    CHECK(hipFree(managed));
  } else {
    REQUIRE(e == hipErrorNotSupported, "hipMallocManaged: %s", hipGetErrorName(e));
    step("hipMallocManaged not supported by this build: skipped");
  }
  char* registered = (char*)aligned_alloc(4096, 4 * 4096);
  e = hipHostRegister(registered, 4 * 4096, hipHostRegisterMapped);
  if (e == hipSuccess) {
    void* dev_alias = NULL;
    CHECK(hipHostGetDevicePointer(&dev_alias, registered, 0));
    CHECK(hipPointerGetAttributes(&a, registered));
    REQUIRE(a.type == hipMemoryTypeHost, "registered memory type %d", (int)a.type);
    REQUIRE(a.hostPointer == registered, "registered hostPointer %p", a.hostPointer);
    CHECK(hipHostUnregister(registered));
  } else {
    REQUIRE(e == hipErrorNotSupported, "hipHostRegister: %s", hipGetErrorName(e));
    step("hipHostRegister not supported by this build: skipped");
  }
  free(registered);

  step("unknown pointers");
  int on_stack = 0;
  memset(&a, 0x5a, sizeof a);
  CHECK(hipPointerGetAttributes(&a, &on_stack));
  REQUIRE(a.type == hipMemoryTypeUnregistered && a.device == hipInvalidDeviceId && a.devicePointer == NULL &&
              a.hostPointer == NULL && a.isManaged == 0 && a.allocationFlags == 0,
          "unknown pointer: type %d device %d", (int)a.type, a.device);
  unsigned int type = 77;
  EXPECT_ERR(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)&on_stack), hipErrorInvalidValue);
  REQUIRE(type == 0, "unknown MEMORY_TYPE written as 0 (%u)", type);
  int ordinal = 0;
  EXPECT_ERR(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (hipDeviceptr_t)&on_stack), hipErrorInvalidValue);
  REQUIRE(ordinal == -2, "unknown DEVICE_ORDINAL is -2 (%d)", ordinal);
  unsigned int access_unknown = 5;
  CHECK(hipPointerGetAttribute(&access_unknown, HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS, (hipDeviceptr_t)&on_stack));
  REQUIRE(access_unknown == 0, "unknown ACCESS_FLAGS %u", access_unknown);
  /* Several at once: success, with the defaults. */
  hipPointer_attribute which[2] = {HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  type = 9;
  ordinal = 9;
  void* data[2] = {&type, &ordinal};
  CHECK(hipDrvPointerGetAttributes(2, which, data, (hipDeviceptr_t)&on_stack));
  REQUIRE(type == 0 && ordinal == -2, "defaults for unknown memory: %u %d", type, ordinal);
  hipDeviceptr_t base = NULL;
  size_t bytes = 0;
  EXPECT_ERR(hipMemGetAddressRange(&base, &bytes, (hipDeviceptr_t)&on_stack), hipErrorNotFound);
  unsigned int one = 1;
  EXPECT_ERR(hipPointerSetAttribute(&one, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)&on_stack), hipErrorInvalidDevicePointer);
  /* Memory freed is unknown again. */
  char* freed = NULL;
  CHECK(hipMalloc((void**)&freed, 64));
  CHECK(hipFree(freed));
  CHECK(hipPointerGetAttributes(&a, freed));
  REQUIRE(a.type == hipMemoryTypeUnregistered, "freed memory is unregistered (%d)", (int)a.type);
  EXPECT_ERR(hipMemGetAddressRange(&base, &bytes, (hipDeviceptr_t)freed), hipErrorNotFound);

  step("argument errors");
  EXPECT_ERR(hipPointerGetAttributes(NULL, device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttributes(&a, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttribute(NULL, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttribute(&type, (hipPointer_attribute)1000, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_CONTEXT, (hipDeviceptr_t)device_mem), hipErrorNotSupported);
  EXPECT_ERR(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_P2P_TOKENS, (hipDeviceptr_t)device_mem), hipErrorNotSupported);
  EXPECT_ERR(hipDrvPointerGetAttributes(0, which, data, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipDrvPointerGetAttributes(2, NULL, data, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipDrvPointerGetAttributes(2, which, NULL, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipDrvPointerGetAttributes(2, which, data, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerSetAttribute(NULL, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerSetAttribute(&one, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipPointerSetAttribute(&one, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);
  unsigned int two = 2;
  EXPECT_ERR(hipPointerSetAttribute(&two, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, (hipDeviceptr_t)device_mem), hipErrorInvalidValue);

  CHECK(hipFree(device_mem));
  CHECK(hipFree(ext));
  CHECK(hipStreamDestroy(stream));
  printf("PASS pointer_attrs\n");
  return 0;
}
