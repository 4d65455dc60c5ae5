/*
 * A large asynchronous device-to-host copy on a blocking stream, followed at once by a large
 * synchronous host-to-device copy, before anything synchronises the stream: the everyday
 * "download the results, upload the next input" pattern. On a local GPU it simply works.
 *
 * Arguments: <MiB> [nonblocking]
 */
#include "check.h"

int main(int argc, char** argv) {
  REQUIRE(argc >= 2, "usage: %s <MiB> [nonblocking]", argv[0]);
  size_t n = (size_t)atoi(argv[1]) << 20;
  unsigned flags = argc > 2 ? hipStreamNonBlocking : hipStreamDefault;
  begin("d2h_then_h2d");
  printf("   %zu MiB, %s stream\n", n >> 20, flags ? "non-blocking" : "blocking");
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, flags));
  uint8_t *d = NULL, *d2 = NULL;
  CHECK(hipMalloc((void**)&d, n));
  CHECK(hipMalloc((void**)&d2, n));
  uint8_t* h = xmalloc(n);
  uint8_t* out = xmalloc(n);
  fill_pattern(h, n, 1);
  CHECK(hipMemcpy(d, h, n, hipMemcpyHostToDevice));
  fill_pattern(h, n, 2);

  step("async D2H on the stream, then synchronous H2D");
  CHECK(hipMemcpyAsync(out, d, n, hipMemcpyDeviceToHost, s));
  CHECK(hipMemcpy(d2, h, n, hipMemcpyHostToDevice));
  CHECK(hipStreamSynchronize(s));
  EXPECT_PATTERN(out, n, 1);
  memset(out, 0, n);
  CHECK(hipMemcpy(out, d2, n, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(out, n, 2);

  free(h);
  free(out);
  CHECK(hipFree(d));
  CHECK(hipFree(d2));
  CHECK(hipStreamDestroy(s));
  printf("PASS d2h_then_h2d\n");
  return 0;
}
