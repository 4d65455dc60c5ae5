/*
 * Shared registered host memory over shm:// (hipHostMalloc memory the worker shares): copies
 * both ways from and to it at odd offsets and sizes (1 byte to 48 MiB + 3), synchronous and on
 * a stream, every byte checked and the bytes around the target untouched; large pageable
 * copies (staged through the connection's shared staging regions), both ways; hipHostFree
 * then a new allocation reused; hipHostGetFlags and pointer attributes as for any
 * hipHostMalloc memory; a bad device pointer refused, the next copy fine.
 * With "hold": then holds a 256 MiB pinned buffer, prints "READY" and copies through it
 * until killed (tests/shm.rs: a client killed mid-transfer leaves nothing behind).
 */
#include "check.h"

#define MIB ((size_t)1 << 20)
#define GUARD 0x5a
#define DEV_OFFSET 4093

static void check_guards(uint8_t* dev, size_t size) {
  uint8_t around[DEV_OFFSET];
  CHECK(hipMemcpy(around, dev, DEV_OFFSET, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < DEV_OFFSET; i++) REQUIRE(around[i] == GUARD, "guard byte %zu before the target overwritten", i);
  CHECK(hipMemcpy(around, dev + DEV_OFFSET + size, DEV_OFFSET, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < DEV_OFFSET; i++) REQUIRE(around[i] == GUARD, "guard byte %zu after the target overwritten", i);
}

/* `src` and `back` hold at least `size` bytes from the offsets given. */
static void round_trip(uint8_t* dev, uint8_t* src, uint8_t* back, size_t size, uint32_t seed, hipStream_t stream) {
  CHECK(hipMemset(dev, GUARD, size + 2 * DEV_OFFSET));
  fill_pattern(src, size, seed);
  memset(back, 0, size);
  if (stream) {
    CHECK(hipMemcpyAsync(dev + DEV_OFFSET, src, size, hipMemcpyHostToDevice, stream));
    CHECK(hipMemcpyAsync(back, dev + DEV_OFFSET, size, hipMemcpyDeviceToHost, stream));
    CHECK(hipStreamSynchronize(stream));
  } else {
    CHECK(hipMemcpy(dev + DEV_OFFSET, src, size, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(back, dev + DEV_OFFSET, size, hipMemcpyDeviceToHost));
  }
  size_t at = find_mismatch(back, size, seed);
  REQUIRE(at == (size_t)-1, "%zu-byte copy (stream %p): byte %zu is 0x%02x, expected 0x%02x", size, (void*)stream, at,
          back[at], pattern_byte(seed, at));
  check_guards(dev, size);
}

int main(int argc, char** argv) {
  begin("shm_shared");
  const size_t biggest = 48 * MIB + 3;
  uint8_t* dev = NULL;
  CHECK(hipMalloc((void**)&dev, biggest + 2 * DEV_OFFSET));
  CHECK(hipMemset(dev, GUARD, biggest + 2 * DEV_OFFSET));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));

  step("pinned both ways, odd offsets and sizes");
  uint8_t *pinned = NULL, *pinned_back = NULL;
  CHECK(hipHostMalloc((void**)&pinned, biggest + 100, 0));
  CHECK(hipHostMalloc((void**)&pinned_back, biggest + 100, hipHostMallocPortable));
  unsigned flags = 99;
  CHECK(hipHostGetFlags(&flags, pinned_back));
  REQUIRE(flags == hipHostMallocPortable, "hipHostGetFlags gave %#x", flags);
  hipPointerAttribute_t attrs;
  CHECK(hipPointerGetAttributes(&attrs, pinned + 17));
  REQUIRE(attrs.type == hipMemoryTypeHost, "pointer attributes: type %d, expected host", (int)attrs.type);
  const size_t sizes[] = {1, 4097, 256 * 1024 - 1, 3 * MIB + 5, biggest};
  uint32_t seed = 1;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t off = (i * 37) % 97;
    if (sizes[i] + off > biggest + 100) off = 0;
    round_trip(dev, pinned + off, pinned_back + (off ^ 5), sizes[i], seed++, NULL);
    round_trip(dev, pinned + off, pinned_back + (off ^ 5), sizes[i], seed++, stream);
  }

  step("pageable, staged both ways");
  uint8_t* pageable = xmalloc(biggest);
  uint8_t* pageable_back = xmalloc(biggest);
  const size_t staged[] = {256 * 1024, 16 * MIB, 16 * MIB + 1, 33 * MIB + 12345, biggest};
  for (size_t i = 0; i < sizeof staged / sizeof staged[0]; i++) {
    round_trip(dev, pageable, pageable_back, staged[i], seed++, NULL);
    round_trip(dev, pageable, pageable_back, staged[i], seed++, stream);
  }
  /* Pinned source, pageable destination and back. */
  round_trip(dev, pinned + 3, pageable_back, 20 * MIB + 1, seed++, NULL);
  round_trip(dev, pageable, pinned_back + 9, 20 * MIB + 1, seed++, stream);

  step("a bad device pointer is refused, the next copy works");
  EXPECT_ERR(hipMemcpy((void*)(uintptr_t)0x10, pinned, 4096, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(pinned_back, (void*)(uintptr_t)0x10, 4096, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  round_trip(dev, pinned, pinned_back, 5000, seed++, NULL);

  step("hipHostFree, then new memory reused");
  CHECK(hipHostFree(pinned));
  CHECK(hipHostFree(pinned_back));
  for (int round = 0; round < 3; round++) {
    uint8_t *a = NULL, *b = NULL;
    CHECK(hipHostMalloc((void**)&a, 2 * MIB + round, 0));
    CHECK(hipHostMalloc((void**)&b, 2 * MIB + round, 0));
    round_trip(dev, a + round, b, 2 * MIB - 1, seed++, round % 2 ? stream : NULL);
    CHECK(hipHostFree(a));
    CHECK(hipHostFree(b));
  }
  CHECK(hipHostFree(NULL));

  if (argc > 1 && strcmp(argv[1], "hold") == 0) {
    /* A pinned buffer held while the caller looks, then copied until killed. */
    uint8_t* held = NULL;
    CHECK(hipHostMalloc((void**)&held, 256 * MIB, 0));
    memset(held, 0x3e, 256 * MIB);
    printf("READY\n");
    fflush(stdout);
    for (int i = 0; i < 400; i++) {
      CHECK(hipMemcpy(dev, held, biggest, hipMemcpyHostToDevice));
      CHECK(hipMemcpyAsync(held, dev, biggest, hipMemcpyDeviceToHost, stream));
    }
    printf("NOT KILLED\n");
    return 0;
  }
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(dev));
  free(pageable);
  free(pageable_back);
  printf("PASS shm_shared\n");
  return 0;
}
