/*
 * Reports the worker's device memory as this (fresh) session sees it:
 *
 *   meminfo               prints "FREE <bytes> TOTAL <bytes>";
 *   meminfo wait <bytes> <seconds>
 *                         polls hipMemGetInfo until free >= <bytes> (the worker releases a
 *                         dead session's memory once its connection drops), failing after
 *                         <seconds>.
 */
#include "check.h"

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  size_t free_mem = 0, total = 0;
  CHECK(hipMemGetInfo(&free_mem, &total));
  if (argc == 1) {
    printf("FREE %zu TOTAL %zu\n", free_mem, total);
    return 0;
  }
  REQUIRE(argc == 4 && strcmp(argv[1], "wait") == 0, "usage: %s [wait <bytes> <seconds>]", argv[0]);
  size_t want = (size_t)strtoull(argv[2], NULL, 10);
  double deadline = now_seconds() + atof(argv[3]);
  while (free_mem < want) {
    REQUIRE(now_seconds() < deadline, "free memory %zu still below %zu (total %zu) after %s s",
            free_mem, want, total, argv[3]);
    sleep_ms(20);
    CHECK(hipMemGetInfo(&free_mem, &total));
  }
  printf("FREE %zu TOTAL %zu\n", free_mem, total);
  return 0;
}
