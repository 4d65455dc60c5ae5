/*
 * A client whose worker is SIGKILLed in the middle of a large copy. Allocates 256 MiB on the
 * device and 256 MiB of host memory (pinned; `pageable` as argument: malloc), prints "READY",
 * then uploads the whole buffer until a copy fails (bounded, so a test that forgets to kill
 * the worker still ends). A lost worker must fail the copy with hipErrorNotInitialized, and
 * later calls too, and must not change the application's SIGPIPE disposition: it stays at
 * the default, so a SIGPIPE raised by one of the library's socket writes kills this program.
 * Prints "LOST <error name>" and exits 0.
 */
#include "check.h"
#include <signal.h>

#define SIZE ((size_t)256 << 20)

static int sigpipe_is_default(void) {
  struct sigaction now;
  if (sigaction(SIGPIPE, NULL, &now) != 0) return 0;
  return now.sa_handler == SIG_DFL;
}

int main(int argc, char** argv) {
  begin("worker_dies_midcopy");
  /* As a C program starts: whatever its parent left, SIGPIPE kills it. */
  signal(SIGPIPE, SIG_DFL);
  int pageable = argc > 1 && strcmp(argv[1], "pageable") == 0;
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, SIZE));
  uint8_t* h = NULL;
  if (pageable) {
    h = xmalloc(SIZE);
  } else {
    CHECK(hipHostMalloc((void**)&h, SIZE, hipHostMallocDefault));
  }
  memset(h, 0x3e, SIZE);
  REQUIRE(sigpipe_is_default(), "the library changed the SIGPIPE disposition while connecting");
  printf("READY\n");
  hipError_t err = hipSuccess;
  for (int i = 0; i < 2000 && err == hipSuccess; i++) {
    err = hipMemcpy(d, h, SIZE, hipMemcpyHostToDevice);
    if (err == hipSuccess) printf("COPIED %d\n", i);
  }
  REQUIRE(err != hipSuccess, "2000 copies succeeded: the worker was never killed");
  printf("LOST %s\n", hipGetErrorName(err));
  REQUIRE(err == hipErrorNotInitialized, "the copy failed with %s, expected hipErrorNotInitialized", hipGetErrorName(err));
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorNotInitialized);
  REQUIRE(sigpipe_is_default(), "the library changed the SIGPIPE disposition");
  printf("PASS worker_dies_midcopy\n");
  return 0;
}
