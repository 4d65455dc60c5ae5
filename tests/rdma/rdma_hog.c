/*
 * rdma_hog MIB [once]: allocates MIB MiB of device memory. Without "once": prints READY and
 * uploads the buffer over and over, to be SIGKILLed mid-transfer. With "once": one upload,
 * free, exit 0 — run after the kill, it only succeeds if the killed client's session (and
 * its allocation) was freed by the worker.
 */
#include "check.h"

int main(int argc, char** argv) {
  begin("rdma_hog");
  REQUIRE(argc >= 2, "usage: rdma_hog MIB [once]");
  size_t len = (size_t)atol(argv[1]) << 20;
  int once = argc >= 3 && strcmp(argv[2], "once") == 0;
  void* d = NULL;
  CHECK(hipMalloc(&d, len));
  uint8_t* h = xmalloc(len);
  memset(h, 0x3e, len);
  printf("READY %zu MiB at %p\n", len >> 20, d);
  for (int i = 0; i < (once ? 1 : 1000); i++) {
    CHECK(hipMemcpy(d, h, len, hipMemcpyHostToDevice));
    printf("COPIED %d\n", i);
  }
  if (once) {
    CHECK(hipFree(d));
    printf("PASS rdma_hog once\n");
    return 0;
  }
  printf("NOT KILLED\n");
  return 1;
}
