/*
 * hip-remote over RDMA: HELLO (on the first call), device query, hipMalloc, host-to-device
 * and device-to-host round trips at several sizes (below, at and above the 64 KiB SEND slot
 * and the 4 MiB copy chunk), asynchronous copies on a stream, hipFree. Prints the time of
 * each round trip. Run with HIP_REMOTE_WORKER=rdma://ADDR:PORT.
 */
#include "check.h"

int main(void) {
  begin("rdma_roundtrip");
  const char* w = getenv("HIP_REMOTE_WORKER");
  printf("worker %s\n", w ? w : "(unset)");
  double t0 = now_seconds();
  int n = 0;
  CHECK(hipGetDeviceCount(&n));
  REQUIRE(n >= 1, "no device");
  printf("connect + HELLO + device count: %.3f s\n", now_seconds() - t0);

  const size_t sizes[] = {1, 4096, 65536 + 3, (size_t)1 << 20, ((size_t)4 << 20) + 5, (size_t)9 << 20};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t len = sizes[k];
    uint8_t* h = xmalloc(len);
    uint8_t* back = xmalloc(len);
    fill_pattern(h, len, (uint32_t)k + 1);
    memset(back, 0, len);
    void* d = NULL;
    CHECK(hipMalloc(&d, len));
    double t = now_seconds();
    CHECK(hipMemcpy(d, h, len, hipMemcpyHostToDevice));
    double up = now_seconds() - t;
    t = now_seconds();
    CHECK(hipMemcpy(back, d, len, hipMemcpyDeviceToHost));
    double down = now_seconds() - t;
    EXPECT_PATTERN(back, len, (uint32_t)k + 1);
    printf("size %9zu: H2D %.4f s, D2H %.4f s (%.1f MB/s up, %.1f MB/s down)\n", len, up, down,
           len / up / 1e6, len / down / 1e6);
    CHECK(hipFree(d));
    free(h);
    free(back);
  }

  step("async copies on a stream");
  size_t len = ((size_t)6 << 20) + 11;
  uint8_t* h = xmalloc(len);
  uint8_t* back = xmalloc(len);
  fill_pattern(h, len, 99);
  memset(back, 0, len);
  void *d1 = NULL, *d2 = NULL;
  CHECK(hipMalloc(&d1, len));
  CHECK(hipMalloc(&d2, len));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemcpyAsync(d1, h, len, hipMemcpyHostToDevice, s));
  CHECK(hipMemcpyAsync(d2, d1, len, hipMemcpyDeviceToDevice, s));
  CHECK(hipMemcpyAsync(back, d2, len, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamSynchronize(s));
  EXPECT_PATTERN(back, len, 99);
  CHECK(hipMemset(d1, 0x5a, 4096));
  CHECK(hipMemcpy(back, d1, 4096, hipMemcpyDeviceToHost));
  for (int i = 0; i < 4096; i++) REQUIRE(back[i] == 0x5a, "memset byte %d", i);
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(d1));
  CHECK(hipFree(d2));
  free(h);
  free(back);

  step("pinned host memory (hipHostMalloc): registered once, reused, released on free");
  for (int round = 0; round < 2; round++) {
    /* The second round allocates again after hipHostFree: often at the same address, which
       must not reuse the first buffer's registration. */
    size_t plen = (size_t)3 << 20, piece = (size_t)256 << 10;
    uint8_t *pin = NULL, *pback = NULL;
    CHECK(hipHostMalloc((void**)&pin, plen, 0));
    CHECK(hipHostMalloc((void**)&pback, plen, 0));
    fill_pattern(pin, plen, 200 + round);
    memset(pback, 0, plen);
    void* pd = NULL;
    CHECK(hipMalloc(&pd, plen));
    for (size_t off = 0; off < plen; off += piece) {
      CHECK(hipMemcpy((uint8_t*)pd + off, pin + off, piece, hipMemcpyHostToDevice));
    }
    for (size_t off = 0; off < plen; off += piece) {
      CHECK(hipMemcpy(pback + off, (uint8_t*)pd + off, piece, hipMemcpyDeviceToHost));
    }
    EXPECT_PATTERN(pback, plen, 200 + round);
    CHECK(hipFree(pd));
    CHECK(hipHostFree(pin));
    CHECK(hipHostFree(pback));
  }

  step("many small synchronous calls");
  t0 = now_seconds();
  for (int i = 0; i < 200; i++) {
    int dev = -1;
    CHECK(hipGetDevice(&dev));
    CHECK(hipDeviceSynchronize());
  }
  printf("200 hipDeviceSynchronize round trips: %.3f s (%.0f us each)\n", now_seconds() - t0,
         (now_seconds() - t0) / 200 * 1e6);
  printf("PASS rdma_roundtrip\n");
  return 0;
}
