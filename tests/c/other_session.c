/*
 * Session isolation, as two processes:
 *
 *   other_session hold           allocates, fills, prints "PTR <address>", waits for a line on
 *                                stdin, then checks its data is intact and frees it;
 *   other_session attack <addr>  tries to read, write, memset and free the other session's
 *                                pointer: every attempt must fail with hipErrorInvalidValue.
 */
#include "check.h"

#define SIZE ((size_t)1 << 20)
#define SEED 777

static int hold(void) {
  begin("other_session hold");
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, SIZE));
  uint8_t* buf = xmalloc(SIZE);
  fill_pattern(buf, SIZE, SEED);
  CHECK(hipMemcpy(d, buf, SIZE, hipMemcpyHostToDevice));
  printf("PTR %p\n", (void*)d);
  fflush(stdout);

  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) printf("   stdin closed\n");

  memset(buf, 0, SIZE);
  CHECK(hipMemcpy(buf, d, SIZE, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(buf, SIZE, SEED);
  printf("   data intact\n");
  CHECK(hipFree(d));
  free(buf);
  printf("PASS other_session hold\n");
  return 0;
}

static int attack(const char* addr) {
  begin("other_session attack");
  void* theirs = NULL;
  REQUIRE(sscanf(addr, "%p", &theirs) == 1 && theirs != NULL, "cannot parse pointer \"%s\"", addr);
  printf("   target %p\n", theirs);
  uint8_t* buf = xmalloc(SIZE);
  memset(buf, 0x55, SIZE);

  EXPECT_ERR(hipMemcpy(theirs, buf, 4096, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(buf, theirs, 4096, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(theirs, buf, SIZE, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyHtoD(theirs, buf, 16), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyDtoH(buf, theirs, 16), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset(theirs, 0, SIZE), hipErrorInvalidValue);
  EXPECT_ERR(hipMemsetD32(theirs, 0, 16), hipErrorInvalidValue);

  /* Device-to-device involving one of our own allocations, both ways. */
  uint8_t* mine = NULL;
  CHECK(hipMalloc((void**)&mine, SIZE));
  EXPECT_ERR(hipMemcpy(mine, theirs, 4096, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy(theirs, mine, 4096, hipMemcpyDeviceToDevice), hipErrorInvalidValue);

  /* Asynchronous forms report the failure by the next synchronising call at the latest. */
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipError_t e1 = hipMemcpyAsync(theirs, buf, 4096, hipMemcpyHostToDevice, s);
  hipError_t e2 = hipStreamSynchronize(s);
  REQUIRE(e1 == hipErrorInvalidValue || e2 == hipErrorInvalidValue,
          "async copy into another session's memory: %s then %s", hipGetErrorName(e1), hipGetErrorName(e2));
  CHECK(hipStreamSynchronize(s)); /* reported once */
  CHECK(hipStreamDestroy(s));

  EXPECT_ERR(hipFree(theirs), hipErrorInvalidValue);
  CHECK(hipFree(mine));
  free(buf);
  (void)hipGetLastError();
  printf("PASS other_session attack\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "hold") == 0) return hold();
  if (argc == 3 && strcmp(argv[1], "attack") == 0) return attack(argv[2]);
  printf("usage: %s hold | attack <pointer>\n", argv[0]);
  return 2;
}
