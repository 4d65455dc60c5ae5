/*
 * Striped copies (run with HIP_REMOTE_STRIPES set, against a worker that grants stripes):
 * host-to-device and device-to-host copies of several sizes — at the striping threshold,
 * not a multiple of the chunk, 256 MiB — at unaligned offsets inside a larger allocation,
 * from pageable and pinned memory, synchronous and on a stream, every byte checked, and the
 * bytes around the target left untouched. A copy with a bad device pointer fails with
 * hipErrorInvalidValue and the next striped copy still works.
 */
#include "check.h"

#define MIB ((size_t)1 << 20)
#define OFFSET 77
#define GUARD 0xc5

static void round_trip(uint8_t* dev, size_t size, uint32_t seed, int pinned, hipStream_t stream) {
  uint8_t *src = NULL, *back = NULL;
  if (pinned) {
    CHECK(hipHostMalloc((void**)&src, size, 0));
    CHECK(hipHostMalloc((void**)&back, size, 0));
  } else {
    src = xmalloc(size);
    back = xmalloc(size);
  }
  fill_pattern(src, size, seed);
  memset(back, 0, size);
  if (stream) {
    CHECK(hipMemcpyAsync(dev + OFFSET, src, size, hipMemcpyHostToDevice, stream));
    CHECK(hipMemcpyAsync(back, dev + OFFSET, size, hipMemcpyDeviceToHost, stream));
    CHECK(hipStreamSynchronize(stream));
  } else {
    CHECK(hipMemcpy(dev + OFFSET, src, size, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(back, dev + OFFSET, size, hipMemcpyDeviceToHost));
  }
  size_t at = find_mismatch(back, size, seed);
  REQUIRE(at == (size_t)-1, "%zu-byte copy (pinned %d, stream %p): byte %zu is 0x%02x, expected 0x%02x", size,
          pinned, (void*)stream, at, back[at], pattern_byte(seed, at));
  /* The guard bytes around the target are untouched. */
  uint8_t around[OFFSET];
  CHECK(hipMemcpy(around, dev, OFFSET, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < OFFSET; i++) REQUIRE(around[i] == GUARD, "guard byte %zu before the target overwritten", i);
  CHECK(hipMemcpy(around, dev + OFFSET + size, OFFSET, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < OFFSET; i++) REQUIRE(around[i] == GUARD, "guard byte %zu after the target overwritten", i);
  if (pinned) {
    CHECK(hipHostFree(src));
    CHECK(hipHostFree(back));
  } else {
    free(src);
    free(back);
  }
}

int main(void) {
  begin("stripes");
  const size_t sizes[] = {8 * MIB, 8 * MIB + 1, 12 * MIB + 12345, 64 * MIB + 7, 256 * MIB};
  const size_t biggest = 256 * MIB + 2 * OFFSET;
  uint8_t* dev = NULL;
  CHECK(hipMalloc((void**)&dev, biggest));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  uint32_t seed = 1;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    CHECK(hipMemset(dev, GUARD, biggest));
    round_trip(dev, sizes[i], seed++, 0, NULL);
    round_trip(dev, sizes[i], seed++, 1, NULL);
    round_trip(dev, sizes[i], seed++, 0, stream);
  }
  /* A striped copy the worker refuses (no such allocation): the error, then the stripes
   * still carry the next copy. */
  uint8_t* host = xmalloc(16 * MIB);
  memset(host, 1, 16 * MIB);
  hipError_t e = hipMemcpy((void*)(uintptr_t)0x10, host, 16 * MIB, hipMemcpyHostToDevice);
  REQUIRE(e == hipErrorInvalidValue, "upload to a bad pointer returned %d", (int)e);
  e = hipMemcpy(host, (void*)(uintptr_t)0x10, 16 * MIB, hipMemcpyDeviceToHost);
  REQUIRE(e == hipErrorInvalidValue, "download from a bad pointer returned %d", (int)e);
  e = hipMemcpy(dev + 256 * MIB, host, 16 * MIB, hipMemcpyHostToDevice);
  REQUIRE(e == hipErrorInvalidValue, "upload past the allocation's end returned %d", (int)e);
  free(host);
  CHECK(hipMemset(dev, GUARD, biggest));
  round_trip(dev, 16 * MIB + 3, seed++, 0, NULL);
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(dev));
  printf("PASS stripes\n");
  return 0;
}
