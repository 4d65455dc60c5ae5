/*
 * Stream-ordered memory pools: the default and current pool of a device, pool attributes
 * (defaults, read-only and resettable ones, real reserved/used accounting), reuse of freed
 * blocks in stream order, hipMemPoolTrimTo, the release threshold, hipMallocAsync through
 * the current pool and hipMallocFromPoolAsync from a created one, access queries, maximum
 * pool size and the argument errors ROCm gives.
 */
#include "check.h"
#include <fcntl.h>
#include <unistd.h>

#define MiB (1024u * 1024u)

static hipStream_t stream;

static uint64_t attr_u64(hipMemPool_t pool, hipMemPoolAttr attr) {
  uint64_t v = 0xdeadbeef;
  CHECK(hipMemPoolGetAttribute(pool, attr, &v));
  return v;
}

static int attr_int(hipMemPool_t pool, hipMemPoolAttr attr) {
  int v = -7;
  CHECK(hipMemPoolGetAttribute(pool, attr, &v));
  return v;
}

static hipMemPool_t create_pool_of(size_t max_size, hipMemAllocationHandleType types) {
  hipMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = hipMemAllocationTypePinned;
  props.handleTypes = types;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  props.maxSize = max_size;
  hipMemPool_t pool = NULL;
  CHECK(hipMemPoolCreate(&pool, &props));
  REQUIRE(pool != NULL, "hipMemPoolCreate gave NULL");
  return pool;
}

static hipMemPool_t create_pool(size_t max_size) { return create_pool_of(max_size, hipMemHandleTypeNone); }

static void default_pool(void) {
  step("default and current pool");
  hipMemPool_t def = NULL, cur = NULL;
  CHECK(hipDeviceGetDefaultMemPool(&def, 0));
  CHECK(hipDeviceGetMemPool(&cur, 0));
  REQUIRE(def != NULL && def == cur, "default %p, current %p", (void*)def, (void*)cur);
  EXPECT_ERR(hipDeviceGetDefaultMemPool(NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetDefaultMemPool(&def, 99), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGetDefaultMemPool(&def, -1), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGetMemPool(NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetMemPool(&cur, 99), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceSetMemPool(0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceSetMemPool(99, def), hipErrorInvalidValue);
  /* The default pool cannot be destroyed. */
  EXPECT_ERR(hipMemPoolDestroy(def), hipErrorInvalidValue);

  step("default attributes");
  REQUIRE(attr_int(def, hipMemPoolReuseFollowEventDependencies) == 1, "follow event dependencies");
  REQUIRE(attr_int(def, hipMemPoolReuseAllowOpportunistic) == 1, "opportunistic");
  REQUIRE(attr_int(def, hipMemPoolReuseAllowInternalDependencies) == 1, "internal dependencies");
  REQUIRE(attr_u64(def, hipMemPoolAttrReleaseThreshold) == 0, "threshold");
  REQUIRE(attr_u64(def, hipMemPoolAttrReservedMemCurrent) == 0, "reserved");
  REQUIRE(attr_u64(def, hipMemPoolAttrUsedMemCurrent) == 0, "used");

  step("hipMallocAsync from the default pool");
  void* p = NULL;
  CHECK(hipMallocAsync(&p, 3 * MiB, stream));
  REQUIRE(p != NULL, "null allocation");
  REQUIRE(attr_u64(def, hipMemPoolAttrUsedMemCurrent) == 3 * MiB, "used %llu",
          (unsigned long long)attr_u64(def, hipMemPoolAttrUsedMemCurrent));
  REQUIRE(attr_u64(def, hipMemPoolAttrReservedMemCurrent) == 3 * MiB, "reserved");
  CHECK(hipFreeAsync(p, stream));
  CHECK(hipStreamSynchronize(stream));
  /* Threshold 0: the memory goes back once the stream is done. */
  REQUIRE(attr_u64(def, hipMemPoolAttrUsedMemCurrent) == 0, "used after free");
  REQUIRE(attr_u64(def, hipMemPoolAttrReservedMemCurrent) == 0, "reserved after free, threshold 0");
  REQUIRE(attr_u64(def, hipMemPoolAttrUsedMemHigh) == 3 * MiB, "used high");
  REQUIRE(attr_u64(def, hipMemPoolAttrReservedMemHigh) == 3 * MiB, "reserved high");
  uint64_t zero = 0;
  CHECK(hipMemPoolSetAttribute(def, hipMemPoolAttrUsedMemHigh, &zero));
  CHECK(hipMemPoolSetAttribute(def, hipMemPoolAttrReservedMemHigh, &zero));
  REQUIRE(attr_u64(def, hipMemPoolAttrUsedMemHigh) == 0, "used high after reset");
  REQUIRE(attr_u64(def, hipMemPoolAttrReservedMemHigh) == 0, "reserved high after reset");

  p = (void*)0x1;
  CHECK(hipMallocAsync(&p, 0, stream));
  REQUIRE(p == NULL, "zero bytes gave %p", p);
  EXPECT_ERR(hipMallocAsync(NULL, 16, stream), hipErrorInvalidValue);
}

static void attribute_errors(void) {
  step("attribute errors");
  hipMemPool_t def = NULL;
  CHECK(hipDeviceGetDefaultMemPool(&def, 0));
  uint64_t v = 5;
  EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrReservedMemCurrent, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrUsedMemCurrent, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrUsedMemHigh, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrReservedMemHigh, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolSetAttribute(def, (hipMemPoolAttr)99, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolGetAttribute(def, (hipMemPoolAttr)99, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrReleaseThreshold, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolGetAttribute(def, hipMemPoolAttrReleaseThreshold, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolGetAttribute(NULL, hipMemPoolAttrReleaseThreshold, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolTrimTo(NULL, 0), hipErrorInvalidValue);
  /* A reuse policy turned off and back on. */
  int off = 0, on = 1;
  CHECK(hipMemPoolSetAttribute(def, hipMemPoolReuseAllowOpportunistic, &off));
  REQUIRE(attr_int(def, hipMemPoolReuseAllowOpportunistic) == 0, "opportunistic off");
  CHECK(hipMemPoolSetAttribute(def, hipMemPoolReuseAllowOpportunistic, &on));
  REQUIRE(attr_int(def, hipMemPoolReuseAllowOpportunistic) == 1, "opportunistic on");
}

static void create_errors(void) {
  step("hipMemPoolCreate errors");
  hipMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  hipMemPool_t pool = NULL;
  EXPECT_ERR(hipMemPoolCreate(NULL, &props), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolCreate(&pool, NULL), hipErrorInvalidValue);
  props.allocType = hipMemAllocationTypeInvalid;
  EXPECT_ERR(hipMemPoolCreate(&pool, &props), hipErrorInvalidValue);
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeHost;
  EXPECT_ERR(hipMemPoolCreate(&pool, &props), hipErrorInvalidValue);
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 99;
  EXPECT_ERR(hipMemPoolCreate(&pool, &props), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolDestroy(NULL), hipErrorInvalidValue);
}

static void reuse_and_trim(void) {
  step("created pool: reuse of freed blocks, accounting, trim");
  hipMemPool_t pool = create_pool(0);
  uint64_t keep_all = UINT64_MAX;
  CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep_all));
  REQUIRE(attr_u64(pool, hipMemPoolAttrReleaseThreshold) == UINT64_MAX, "threshold");

  uint8_t* a = NULL;
  CHECK(hipMallocFromPoolAsync((void**)&a, 2 * MiB, pool, stream));
  REQUIRE(a != NULL, "null allocation");
  static uint8_t data[2 * MiB], back[2 * MiB];
  fill_pattern(data, sizeof data, 11);
  CHECK(hipMemcpyAsync(a, data, sizeof data, hipMemcpyHostToDevice, stream));
  CHECK(hipMemcpyAsync(back, a, sizeof back, hipMemcpyDeviceToHost, stream));
  CHECK(hipStreamSynchronize(stream));
  EXPECT_PATTERN(back, sizeof back, 11);
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemCurrent) == 2 * MiB, "used");
  REQUIRE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) == 2 * MiB, "reserved");

  CHECK(hipFreeAsync(a, stream));
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemCurrent) == 0, "used after free");
  REQUIRE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) == 2 * MiB, "the freed block stays reserved");
  /* The freed address is no longer usable. */
  EXPECT_ERR(hipMemcpy(back, a, 16, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipFreeAsync(a, stream), hipErrorInvalidValue);

  /* The next allocation on the same stream takes the cached block. */
  uint8_t* b = NULL;
  CHECK(hipMallocFromPoolAsync((void**)&b, 2 * MiB, pool, stream));
  REQUIRE(b == a, "cached block not reused: %p then %p", (void*)a, (void*)b);
  REQUIRE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) == 2 * MiB, "reserved after reuse");
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemCurrent) == 2 * MiB, "used after reuse");
  /* A second allocation needs new memory. */
  uint8_t* c = NULL;
  CHECK(hipMallocFromPoolAsync((void**)&c, MiB, pool, stream));
  REQUIRE(c != NULL && c != b, "second block %p", (void*)c);
  REQUIRE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) == 3 * MiB, "reserved with two blocks");
  /* The reused block is bounds-checked at the requested size. */
  CHECK(hipMemsetAsync(c, 0x3c, MiB, stream));
  EXPECT_ERR(hipMemcpy(back, c, MiB + 1, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  CHECK(hipFreeAsync(b, stream));
  CHECK(hipFreeAsync(c, stream));
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) == 3 * MiB, "both cached");
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemHigh) == 3 * MiB, "used high");

  /* Trim releases cached blocks (largest first) until the pool reserves at most 2 MiB. */
  CHECK(hipMemPoolTrimTo(pool, 2 * MiB));
  uint64_t reserved = attr_u64(pool, hipMemPoolAttrReservedMemCurrent);
  REQUIRE(reserved <= 2 * MiB && reserved > 0, "reserved %llu after trim to 2 MiB", (unsigned long long)reserved);
  CHECK(hipMemPoolTrimTo(pool, 0));
  REQUIRE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) == 0, "reserved after trim to 0");

  step("another stream reuses a block behind the freeing stream's work");
  hipStream_t other;
  CHECK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
  CHECK(hipMallocFromPoolAsync((void**)&a, MiB, pool, stream));
  CHECK(hipMemsetAsync(a, 0x11, MiB, stream));
  CHECK(hipFreeAsync(a, stream));
  CHECK(hipMallocFromPoolAsync((void**)&b, MiB, pool, other));
  REQUIRE(b == a, "internal dependencies allow reuse across streams: %p then %p", (void*)a, (void*)b);
  CHECK(hipMemsetAsync(b, 0x22, MiB, other));
  CHECK(hipMemcpyAsync(back, b, MiB, hipMemcpyDeviceToHost, other));
  CHECK(hipStreamSynchronize(other));
  for (size_t i = 0; i < MiB; i++) REQUIRE(back[i] == 0x22, "byte %zu is %#x", i, back[i]);
  CHECK(hipFreeAsync(b, other));
  /* With internal dependencies off, a block freed on another stream is not taken. */
  int off = 0;
  CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowInternalDependencies, &off));
  CHECK(hipMallocFromPoolAsync((void**)&c, MiB, pool, stream));
  REQUIRE(c != b, "block freed on another stream reused without internal dependencies");
  CHECK(hipFreeAsync(c, stream));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipStreamSynchronize(other));
  CHECK(hipStreamDestroy(other));

  EXPECT_ERR(hipMallocFromPoolAsync((void**)&a, 16, NULL, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocFromPoolAsync(NULL, 16, pool, stream), hipErrorInvalidValue);
  CHECK(hipMemPoolDestroy(pool));
  /* A destroyed pool is refused. */
  EXPECT_ERR(hipMemPoolTrimTo(pool, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolDestroy(pool), hipErrorInvalidValue);
}

static void current_pool(void) {
  step("hipDeviceSetMemPool: hipMallocAsync uses the current pool");
  hipMemPool_t def = NULL, cur = NULL;
  CHECK(hipDeviceGetDefaultMemPool(&def, 0));
  hipMemPool_t pool = create_pool(0);
  CHECK(hipDeviceSetMemPool(0, pool));
  CHECK(hipDeviceGetMemPool(&cur, 0));
  REQUIRE(cur == pool, "current pool %p, set %p", (void*)cur, (void*)pool);
  void* p = NULL;
  CHECK(hipMallocAsync(&p, MiB, stream));
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemCurrent) == MiB, "the current pool served hipMallocAsync");
  REQUIRE(attr_u64(def, hipMemPoolAttrUsedMemCurrent) == 0, "the default pool did not");
  /* Null stream too. */
  void* q = NULL;
  CHECK(hipMallocAsync(&q, MiB, NULL));
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemCurrent) == 2 * MiB, "null-stream hipMallocAsync");
  CHECK(hipFreeAsync(q, NULL));
  /* hipFree takes a pool block back too. */
  CHECK(hipFree(p));
  REQUIRE(attr_u64(pool, hipMemPoolAttrUsedMemCurrent) == 0, "used after hipFree");
  CHECK(hipMemPoolDestroy(pool));
  CHECK(hipDeviceGetMemPool(&cur, 0));
  REQUIRE(cur == def, "destroying the current pool makes the default current again");
}

static void access_and_limits(void) {
  step("access and maximum size");
  hipMemPool_t pool = create_pool(2 * MiB);
  hipMemAccessFlags flags = (hipMemAccessFlags)77;
  hipMemLocation loc = {hipMemLocationTypeDevice, 0};
  CHECK(hipMemPoolGetAccess(&flags, pool, &loc));
  REQUIRE(flags == hipMemAccessFlagsProtReadWrite, "own device access %d", (int)flags);
  hipMemAccessDesc desc = {{hipMemLocationTypeDevice, 0}, hipMemAccessFlagsProtReadWrite};
  CHECK(hipMemPoolSetAccess(pool, &desc, 1));
  desc.location.type = hipMemLocationTypeHost;
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidValue);
  desc.location.type = hipMemLocationTypeDevice;
  desc.location.id = 99;
  /* ROCm 7 (clr hipMemPoolSetAccess): a device out of range is an invalid device here, an
   * invalid value in hipMemPoolGetAccess below. */
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidDevice);
  desc.location.id = 0;
  desc.flags = (hipMemAccessFlags)7;
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolSetAccess(pool, NULL, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolGetAccess(NULL, pool, &loc), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolGetAccess(&flags, pool, NULL), hipErrorInvalidValue);
  loc.type = hipMemLocationTypeHost;
  EXPECT_ERR(hipMemPoolGetAccess(&flags, pool, &loc), hipErrorInvalidValue);
  loc.type = hipMemLocationTypeDevice;
  loc.id = 99;
  EXPECT_ERR(hipMemPoolGetAccess(&flags, pool, &loc), hipErrorInvalidValue);

  void* p = NULL;
  CHECK(hipMallocFromPoolAsync(&p, MiB, pool, stream));
  void* q = NULL;
  EXPECT_ERR(hipMallocFromPoolAsync(&q, 2 * MiB, pool, stream), hipErrorOutOfMemory);
  CHECK(hipFreeAsync(p, stream));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipMemPoolDestroy(pool));
}

static void sharing_in_one_process(void) {
  step("pool export and import, pointers");
  hipMemPool_t plain = create_pool(0);
  int fd = -1;
  EXPECT_ERR(hipMemPoolExportToShareableHandle(&fd, plain, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  void* p = NULL;
  CHECK(hipMallocFromPoolAsync(&p, 4096, plain, stream));
  hipMemPoolPtrExportData data;
  EXPECT_ERR(hipMemPoolExportPointer(&data, p), hipErrorInvalidValue); /* pool not shareable */
  EXPECT_ERR(hipMemPoolExportPointer(NULL, p), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolExportPointer(&data, NULL), hipErrorInvalidValue);
  CHECK(hipFreeAsync(p, stream));
  CHECK(hipMemPoolDestroy(plain));

  hipMemPool_t pool = create_pool_of(0, hipMemHandleTypePosixFileDescriptor);
  EXPECT_ERR(hipMemPoolExportToShareableHandle(NULL, pool, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolExportToShareableHandle(&fd, NULL, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  CHECK(hipMemPoolExportToShareableHandle(&fd, pool, hipMemHandleTypePosixFileDescriptor, 0));
  hipMemPool_t imported = NULL;
  EXPECT_ERR(hipMemPoolImportFromShareableHandle(NULL, (void*)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  CHECK(hipMemPoolImportFromShareableHandle(&imported, (void*)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
  close(fd);
  REQUIRE(imported != NULL && imported != pool, "imported pool %p", (void*)imported);
  /* An imported pool does not allocate. */
  EXPECT_ERR(hipMallocFromPoolAsync(&p, 4096, imported, stream), hipErrorInvalidValue);

  uint8_t* block = NULL;
  CHECK(hipMallocFromPoolAsync((void**)&block, 8192, pool, stream));
  CHECK(hipMemsetAsync(block, 0x5e, 8192, stream));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipMemPoolExportPointer(&data, block));
  void* q = NULL;
  EXPECT_ERR(hipMemPoolImportPointer(&q, pool, &data), hipErrorInvalidValue); /* not an imported pool */
  hipMemPoolPtrExportData junk;
  memset(&junk, 0x42, sizeof junk);
  EXPECT_ERR(hipMemPoolImportPointer(&q, imported, &junk), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPoolImportPointer(NULL, imported, &data), hipErrorInvalidValue);
  CHECK(hipMemPoolImportPointer(&q, imported, &data));
  REQUIRE(q == block, "imported %p, exported %p", q, (void*)block);
  uint8_t back[16];
  CHECK(hipMemcpy(back, q, sizeof back, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < sizeof back; i++) REQUIRE(back[i] == 0x5e, "byte %zu is %#x", i, back[i]);
  /* Imported by its own session, it is the same allocation: freed once, by its owner. */
  CHECK(hipFreeAsync(block, stream));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipMemPoolDestroy(imported));
  CHECK(hipMemPoolDestroy(pool));
}

/* Two-process halves: the exporter shares a pool and one of its blocks, the importer reads
   the block and writes its own bytes, the exporter checks them. */
static int pool_exporter(void) {
  begin("mempool export");
  CHECK(hipStreamCreate(&stream));
  hipMemPool_t pool = create_pool_of(0, hipMemHandleTypePosixFileDescriptor);
  uint8_t* block = NULL;
  CHECK(hipMallocFromPoolAsync((void**)&block, MiB, pool, stream));
  static uint8_t data[MiB];
  fill_pattern(data, MiB, 31);
  CHECK(hipMemcpyAsync(block, data, MiB, hipMemcpyHostToDevice, stream));
  CHECK(hipStreamSynchronize(stream));
  int fd = -1;
  CHECK(hipMemPoolExportToShareableHandle(&fd, pool, hipMemHandleTypePosixFileDescriptor, 0));
  hipMemPoolPtrExportData export_data;
  CHECK(hipMemPoolExportPointer(&export_data, block));
  printf("SHARE /proc/%d/fd/%d ", (int)getpid(), fd);
  for (size_t i = 0; i < sizeof export_data.reserved; i++) printf("%02x", export_data.reserved[i]);
  printf("\n");
  char line[64];
  REQUIRE(fgets(line, sizeof line, stdin) != NULL, "no go line");
  CHECK(hipMemcpy(data, block, MiB, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(data, MiB, 32);
  CHECK(hipFreeAsync(block, stream));
  CHECK(hipStreamSynchronize(stream));
  printf("importer's bytes arrived\n");
  return 0;
}

static int pool_importer(const char* path, const char* hex) {
  begin("mempool import");
  CHECK(hipStreamCreate(&stream));
  int fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0, "open %s", path);
  hipMemPool_t pool = NULL;
  CHECK(hipMemPoolImportFromShareableHandle(&pool, (void*)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
  close(fd);
  hipMemPoolPtrExportData export_data;
  REQUIRE(strlen(hex) == 2 * sizeof export_data.reserved, "export data %s", hex);
  for (size_t i = 0; i < sizeof export_data.reserved; i++) {
    unsigned v;
    sscanf(hex + 2 * i, "%2x", &v);
    export_data.reserved[i] = (unsigned char)v;
  }
  uint8_t* block = NULL;
  CHECK(hipMemPoolImportPointer((void**)&block, pool, &export_data));
  static uint8_t data[MiB];
  CHECK(hipMemcpy(data, block, MiB, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(data, MiB, 31);
  fill_pattern(data, MiB, 32);
  CHECK(hipMemcpy(block, data, MiB, hipMemcpyHostToDevice));
  CHECK(hipFreeAsync(block, stream));
  CHECK(hipStreamSynchronize(stream));
  /* Freed here: this process can no longer reach it. */
  EXPECT_ERR(hipMemcpy(data, block, 16, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  CHECK(hipMemPoolDestroy(pool));
  printf("PASS mempool import\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "export") == 0) return pool_exporter();
  if (argc == 4 && strcmp(argv[1], "import") == 0) return pool_importer(argv[2], argv[3]);
  begin("mempool");
  CHECK(hipSetDevice(0));
  CHECK(hipStreamCreate(&stream));
  default_pool();
  attribute_errors();
  create_errors();
  reuse_and_trim();
  current_pool();
  access_and_limits();
  sharing_in_one_process();
  CHECK(hipStreamDestroy(stream));
  printf("PASS mempool\n");
  return 0;
}
