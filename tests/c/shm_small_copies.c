/*
 * Small synchronous copies from hipHostMalloc memory (over shm://: memory the worker shares):
 * COPIES 4 KiB hipMemcpy uploads, each source refilled with the next pattern as soon as the
 * call returns, each to its own place in device memory; then all read back and checked. A
 * copy that returned before its bytes were taken would show the next pattern.
 * tests/shm.rs runs it with HIP_REMOTE_PROFILE=1 and counts which calls waited for the worker.
 */
#include "check.h"

#define COPIES 256
#define SMALL 4096

int main(void) {
  begin("shm_small_copies");
  uint8_t *pinned = NULL, *dev = NULL;
  CHECK(hipHostMalloc((void**)&pinned, SMALL, 0));
  CHECK(hipMalloc((void**)&dev, (size_t)COPIES * SMALL));
  for (uint32_t i = 0; i < COPIES; i++) {
    fill_pattern(pinned, SMALL, i);
    CHECK(hipMemcpy(dev + (size_t)i * SMALL, pinned, SMALL, hipMemcpyHostToDevice));
  }
  uint8_t* back = xmalloc((size_t)COPIES * SMALL);
  CHECK(hipMemcpy(back, dev, (size_t)COPIES * SMALL, hipMemcpyDeviceToHost));
  for (uint32_t i = 0; i < COPIES; i++) {
    size_t at = find_mismatch(back + (size_t)i * SMALL, SMALL, i);
    REQUIRE(at == (size_t)-1, "copy %u: byte %zu differs", i, at);
  }
  /* And back into pinned memory, synchronously (a reply each). */
  for (uint32_t i = 0; i < COPIES; i += 64) {
    CHECK(hipMemcpy(pinned, dev + (size_t)i * SMALL, SMALL, hipMemcpyDeviceToHost));
    REQUIRE(find_mismatch(pinned, SMALL, i) == (size_t)-1, "download %u differs", i);
  }
  free(back);
  CHECK(hipFree(dev));
  CHECK(hipHostFree(pinned));
  printf("PASS shm_small_copies\n");
  return 0;
}
