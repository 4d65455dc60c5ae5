/*
 * hipMemcpy with a kind that contradicts the pointers. ROCm's runtime looks every pointer up
 * and copies by what the memory really is (clr hip_memory.cpp ihipMemcpy: the kind only
 * matters when neither pointer is device memory), so these copies succeed on a local GPU.
 * hip-remote must at least not crash: each call must either succeed with the right bytes, as
 * ROCm does, or fail with hipErrorInvalidValue.
 *
 * Argument: the case to run (0..3), so a crash names its case.
 */
#include "check.h"

#define N 4096

int main(int argc, char** argv) {
  REQUIRE(argc == 2, "usage: %s <case 0..3>", argv[0]);
  int which = atoi(argv[1]);
  begin("wrong_kind");
  uint8_t *a = NULL, *b = NULL;
  CHECK(hipMalloc((void**)&a, N));
  CHECK(hipMalloc((void**)&b, N));
  uint8_t host[N], out[N];
  fill_pattern(host, N, 5);
  CHECK(hipMemcpy(a, host, N, hipMemcpyHostToDevice));
  CHECK(hipMemset(b, 0, N));

  hipError_t e = hipSuccess;
  const char* what = "";
  switch (which) {
    case 0:
      what = "hipMemcpy(device dst, host src, HostToHost)";
      printf("-- %s\n", what);
      e = hipMemcpy(b, host, N, hipMemcpyHostToHost);
      break;
    case 1:
      what = "hipMemcpy(host dst, device src, HostToHost)";
      printf("-- %s\n", what);
      memset(out, 0, N);
      e = hipMemcpy(out, a, N, hipMemcpyHostToHost);
      if (e == hipSuccess) EXPECT_PATTERN(out, N, 5);
      break;
    case 2:
      what = "hipMemcpy(device dst, device src, DeviceToHost)";
      printf("-- %s\n", what);
      e = hipMemcpy(b, a, N, hipMemcpyDeviceToHost);
      break;
    case 3:
      what = "hipMemcpy(device dst, device src, HostToDevice)";
      printf("-- %s\n", what);
      e = hipMemcpy(b, a, N, hipMemcpyHostToDevice);
      break;
    default:
      REQUIRE(0, "no case %d", which);
  }
  printf("   %s -> %s\n", what, hipGetErrorName(e));
  REQUIRE(e == hipSuccess || e == hipErrorInvalidValue, "%s returned %s", what, hipGetErrorName(e));
  if (e == hipSuccess && which != 1) {
    memset(out, 0, N);
    CHECK(hipMemcpy(out, b, N, hipMemcpyDeviceToHost));
    EXPECT_PATTERN(out, N, 5);
  }
  (void)hipGetLastError();
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  printf("PASS wrong_kind\n");
  return 0;
}
