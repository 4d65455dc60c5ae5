/*
 * Thread safety: 8 threads, each 50 rounds of malloc / copy in / copy out / verify / free with
 * its own patterns and sizes, all over the process's one connection.
 */
#include "check.h"

#include <pthread.h>

#define THREADS 8
#define ROUNDS 50

static void* worker(void* arg) {
  uint32_t id = (uint32_t)(uintptr_t)arg;
  size_t max = (size_t)64 << 10;
  uint8_t* in = xmalloc(max);
  uint8_t* out = xmalloc(max);
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  for (uint32_t round = 0; round < ROUNDS; round++) {
    uint32_t seed = id * 1000 + round;
    size_t n = 1 + (size_t)pattern_byte(seed, 0) * 211 + id * 37; /* 1 .. ~54 KiB, per thread */
    uint8_t* d = NULL;
    CHECK(hipMalloc((void**)&d, n));
    fill_pattern(in, n, seed);
    memset(out, 0, n);
    if (round % 2 == 0) {
      CHECK(hipMemcpy(d, in, n, hipMemcpyHostToDevice));
      CHECK(hipMemcpy(out, d, n, hipMemcpyDeviceToHost));
    } else {
      CHECK(hipMemcpyAsync(d, in, n, hipMemcpyHostToDevice, s));
      CHECK(hipMemcpyAsync(out, d, n, hipMemcpyDeviceToHost, s));
      CHECK(hipStreamSynchronize(s));
    }
    size_t at = find_mismatch(out, n, seed);
    REQUIRE(at == (size_t)-1, "thread %u round %u: byte %zu of %zu is 0x%02x, expected 0x%02x", id,
            round, at, n, out[at], pattern_byte(seed, at));
    CHECK(hipFree(d));
  }
  CHECK(hipStreamDestroy(s));
  free(in);
  free(out);
  return NULL;
}

int main(void) {
  begin("threads");
  /* No hipInit: the first call of whichever thread comes first opens the connection. */
  pthread_t threads[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    REQUIRE(pthread_create(&threads[i], NULL, worker, (void*)i) == 0, "pthread_create %zu", (size_t)i);
  for (int i = 0; i < THREADS; i++) REQUIRE(pthread_join(threads[i], NULL) == 0, "pthread_join %d", i);
  printf("   %d threads x %d rounds verified\n", THREADS, ROUNDS);
  REQUIRE(hipGetLastError() == hipSuccess, "an error was recorded on the main thread");
  printf("PASS threads\n");
  return 0;
}
