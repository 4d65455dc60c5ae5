/*
 * No worker at HIP_REMOTE_WORKER: calls must fail promptly with hipErrorNotInitialized (the
 * library explains why once on stderr), never hang or abort; calls that need no worker keep
 * working.
 */
#include "check.h"

int main(void) {
  begin("worker_down");
  double t0 = now_seconds();
  int count = 42;
  EXPECT_ERR(hipGetDeviceCount(&count), hipErrorNotInitialized);
  EXPECT_ERR(hipInit(0), hipErrorNotInitialized);
  void* p = NULL;
  EXPECT_ERR(hipMalloc(&p, 4096), hipErrorNotInitialized);
  size_t free_mem, total;
  EXPECT_ERR(hipMemGetInfo(&free_mem, &total), hipErrorNotInitialized);
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorNotInitialized);
  REQUIRE(hipGetLastError() == hipErrorNotInitialized, "last error");
  /* Local-only calls still work. */
  int runtime = 0;
  CHECK(hipRuntimeGetVersion(&runtime));
  REQUIRE(strcmp(hipGetErrorName(hipErrorNotInitialized), "hipErrorNotInitialized") == 0, "error name");
  double took = now_seconds() - t0;
  printf("   failed calls took %.3f s\n", took);
  REQUIRE(took < 5.0, "failing calls took %.1f s", took);
  printf("PASS worker_down\n");
  return 0;
}
