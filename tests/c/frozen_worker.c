/*
 * A worker that freezes mid-session (the test stops it with SIGSTOP once this program has
 * printed "ready" and then writes a line to its stdin): the next call fails with
 * hipErrorNotInitialized within the liveness timeout the test sets, never hangs, and every
 * later call fails at once.
 */
#include "check.h"

int main(void) {
  begin("frozen_worker");
  void* p = NULL;
  CHECK(hipMalloc(&p, 1 << 20));
  printf("ready\n");
  fflush(stdout);
  char line[16];
  REQUIRE(fgets(line, sizeof line, stdin) != NULL, "no go-ahead line on stdin");
  double t0 = now_seconds();
  char host[64];
  EXPECT_ERR(hipMemcpy(host, p, sizeof host, hipMemcpyDeviceToHost), hipErrorNotInitialized);
  printf("   the call failed after %.3f s\n", now_seconds() - t0);
  double t1 = now_seconds();
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorNotInitialized);
  REQUIRE(now_seconds() - t1 < 1.0, "a call after the worker was given up waited %.1f s", now_seconds() - t1);
  printf("PASS frozen_worker\n");
  return 0;
}
