/*
 * A client whose connection is cut (by the test's relay) in the middle of each phase: a
 * 16 MiB upload, a 16 MiB download, a storm of posted memsets and device-to-device copies,
 * and a device synchronize. Before each phase it prints "PHASE <name>" and waits for a line
 * on stdin (the relay is armed meanwhile). The session is resumed each time: every call
 * succeeds and the results match what the host computes; a memset or copy run twice would
 * leave a later value in an earlier slot.
 *
 * With argument "lost" it runs the upload only, against a cut longer than the worker's
 * resume grace period: the upload (or the synchronize after it) fails with
 * hipErrorNotInitialized, as a lost connection does, and so does every later call. Prints
 * "LOST <error name>".
 */
#include "check.h"

#define BIG ((size_t)16 << 20)
#define STORM 4000

static void wait_go(const char* phase) {
  printf("PHASE %s\n", phase);
  char line[64];
  if (!fgets(line, sizeof line, stdin)) {
    printf("FAIL no go for phase %s\n", phase);
    exit(1);
  }
}

static uint8_t pattern(size_t i) { return (uint8_t)(i * 131u + (i >> 12)); }

int main(int argc, char** argv) {
  begin("resume_cut");
  int expect_lost = argc > 1 && strcmp(argv[1], "lost") == 0;
  uint8_t* h_big = xmalloc(BIG);
  uint8_t* h_back = xmalloc(BIG);
  for (size_t i = 0; i < BIG; i++) h_big[i] = pattern(i);
  uint8_t* d_big = NULL;
  CHECK(hipMalloc((void**)&d_big, BIG));

  if (expect_lost) {
    wait_go("upload");
    hipError_t err = hipMemcpy(d_big, h_big, BIG, hipMemcpyHostToDevice);
    if (err == hipSuccess) err = hipDeviceSynchronize();
    printf("LOST %s\n", hipGetErrorName(err));
    REQUIRE(err == hipErrorNotInitialized, "expected hipErrorNotInitialized, got %s", hipGetErrorName(err));
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorNotInitialized);
    printf("PASS resume_cut\n");
    return 0;
  }

  wait_go("upload");
  CHECK(hipMemcpy(d_big, h_big, BIG, hipMemcpyHostToDevice));

  wait_go("download");
  CHECK(hipMemcpy(h_back, d_big, BIG, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < BIG; i++) REQUIRE(h_back[i] == pattern(i), "byte %zu of the download is %u, expected %u", i, h_back[i], pattern(i));

  uint8_t* d_value = NULL;
  uint8_t* d_slots = NULL;
  CHECK(hipMalloc((void**)&d_value, 4));
  CHECK(hipMalloc((void**)&d_slots, (size_t)STORM * 4));
  wait_go("storm");
  for (int i = 0; i < STORM; i++) {
    CHECK(hipMemsetAsync(d_value, i % 250 + 1, 4, 0));
    CHECK(hipMemcpyAsync(d_slots + (size_t)i * 4, d_value, 4, hipMemcpyDeviceToDevice, 0));
  }
  /* A call sends what the transport still holds of the storm (the cut comes in this phase). */
  hipError_t query = hipStreamQuery(0);
  REQUIRE(query == hipSuccess || query == hipErrorNotReady, "hipStreamQuery returned %s", hipGetErrorName(query));
  printf("STORM SENT\n");

  wait_go("sync");
  CHECK(hipDeviceSynchronize());

  uint8_t* h_slots = xmalloc((size_t)STORM * 4);
  CHECK(hipMemcpy(h_slots, d_slots, (size_t)STORM * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < STORM * 4; i++) {
    REQUIRE(h_slots[i] == i / 4 % 250 + 1, "slot byte %d is %u, expected %u", i, h_slots[i], i / 4 % 250 + 1);
  }
  /* The upload is still what it was: nothing ran twice over it. */
  memset(h_back, 0, BIG);
  CHECK(hipMemcpy(h_back, d_big, BIG, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(h_back, h_big, BIG) == 0, "the device buffer changed");
  CHECK(hipFree(d_slots));
  CHECK(hipFree(d_value));
  CHECK(hipFree(d_big));
  printf("PASS resume_cut\n");
  return 0;
}
