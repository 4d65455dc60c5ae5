/*
 * hipErrorNotReady from hipStreamQuery / hipEventQuery is a status, not an error: ROCm does
 * not record it as the thread's last error (clr hip_internal.hpp HIP_UPDATE_ERROR_STATE skips
 * hipSuccess and hipErrorNotReady), so hipGetLastError / hipPeekAtLastError stay hipSuccess.
 */
#include "check.h"

#define BIG ((size_t)64 << 20)

int main(void) {
  begin("not_ready");
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipEvent_t ev;
  CHECK(hipEventCreate(&ev));
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, BIG));
  uint8_t* h = xmalloc(BIG);
  memset(h, 1, BIG);
  REQUIRE(hipGetLastError() == hipSuccess, "an error before the test");

  int seen = 0;
  for (int attempt = 0; attempt < 5 && !seen; attempt++) {
    CHECK(hipMemcpyAsync(d, h, BIG, hipMemcpyHostToDevice, s));
    for (int i = 0; i < 8; i++) CHECK(hipMemsetAsync(d, i, BIG, s));
    CHECK(hipEventRecord(ev, s));
    hipError_t q = hipStreamQuery(s);
    hipError_t e = hipEventQuery(ev);
    printf("   attempt %d: hipStreamQuery %s, hipEventQuery %s\n", attempt, hipGetErrorName(q), hipGetErrorName(e));
    REQUIRE(q == hipSuccess || q == hipErrorNotReady, "hipStreamQuery %s", hipGetErrorName(q));
    REQUIRE(e == hipSuccess || e == hipErrorNotReady, "hipEventQuery %s", hipGetErrorName(e));
    seen = q == hipErrorNotReady || e == hipErrorNotReady;
    hipError_t peek = hipPeekAtLastError();
    hipError_t last = hipGetLastError();
    REQUIRE(peek == hipSuccess, "hipPeekAtLastError after a not-ready query: %s", hipGetErrorName(peek));
    REQUIRE(last == hipSuccess, "hipGetLastError after a not-ready query: %s", hipGetErrorName(last));
    CHECK(hipStreamSynchronize(s));
  }
  if (!seen) printf("   (never saw hipErrorNotReady; nothing checked)\n");

  free(h);
  CHECK(hipFree(d));
  CHECK(hipEventDestroy(ev));
  CHECK(hipStreamDestroy(s));
  printf("PASS not_ready\n");
  return 0;
}
