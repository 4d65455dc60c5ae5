/*
 * A client to be SIGKILLed in the middle of a copy: allocates 256 MiB, prints "READY", then
 * uploads the whole buffer over and over (up to a bound, so a test that forgets to kill it
 * still ends).
 */
#include "check.h"

#define SIZE ((size_t)256 << 20)

int main(void) {
  begin("kill_midcopy");
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, SIZE));
  uint8_t* h = xmalloc(SIZE);
  memset(h, 0x3e, SIZE);
  printf("READY %p\n", (void*)d);
  for (int i = 0; i < 200; i++) {
    CHECK(hipMemcpy(d, h, SIZE, hipMemcpyHostToDevice));
    printf("COPIED %d\n", i);
  }
  printf("NOT KILLED\n");
  return 0;
}
