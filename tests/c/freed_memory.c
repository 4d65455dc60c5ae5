/*
 * Memory handed between tenants: `fill` allocates FREED_MEMORY_BUFFERS buffers, fills them
 * with a pattern, synchronizes and frees them (then exits); `scan` (another process, another
 * session) allocates the same sizes and checks none of its new buffers shows the pattern:
 * a worker must never hand one session memory still holding another's data.
 */
#include "check.h"

#include <string.h>

#define FREED_MEMORY_BUFFERS 8
#define FREED_MEMORY_BYTES ((size_t)16 << 20)
#define FREED_MEMORY_PATTERN 0xAB

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "fill") != 0 && strcmp(argv[1], "scan") != 0)) {
    printf("usage: freed_memory fill|scan\n");
    return 2;
  }
  int fill = strcmp(argv[1], "fill") == 0;
  void* buffers[FREED_MEMORY_BUFFERS];
  unsigned char* host = xmalloc(FREED_MEMORY_BYTES);
  size_t tainted = 0;
  for (int i = 0; i < FREED_MEMORY_BUFFERS; i++) {
    CHECK(hipMalloc(&buffers[i], FREED_MEMORY_BYTES));
    if (fill) {
      CHECK(hipMemset(buffers[i], FREED_MEMORY_PATTERN, FREED_MEMORY_BYTES));
    } else {
      CHECK(hipMemcpy(host, buffers[i], FREED_MEMORY_BYTES, hipMemcpyDeviceToHost));
      for (size_t b = 0; b < FREED_MEMORY_BYTES; b++) tainted += host[b] == FREED_MEMORY_PATTERN;
    }
  }
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < FREED_MEMORY_BUFFERS; i++) CHECK(hipFree(buffers[i]));
  if (!fill && tainted != 0) {
    printf("FAIL %zu bytes of new buffers hold the pattern another session wrote and freed\n", tainted);
    return 1;
  }
  printf(fill ? "FILLED\n" : "PASS no byte of another session's freed memory\n");
  return 0;
}
