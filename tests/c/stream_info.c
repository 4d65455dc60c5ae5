/*
 * hipStreamGetFlags, hipStreamGetPriority and hipStreamGetDevice (and the _spt forms) on
 * created, null, implicit and destroyed streams, with ROCm's error codes.
 */
#include "check.h"

int main(void) {
  begin("stream_info");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  int least = 0, greatest = 0;
  CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  printf("%d device(s), priorities %d (least) .. %d (greatest)\n", count, least, greatest);
  /* ROCm 7's range on every backend (clr hip::Stream::Priority: Low 1, High -1). */
  REQUIRE(least == 1 && greatest == -1, "priority range %d .. %d, ROCm's is 1 .. -1", least, greatest);

  step("flags");
  hipStream_t plain, nonblocking;
  CHECK(hipStreamCreate(&plain));
  CHECK(hipStreamCreateWithFlags(&nonblocking, hipStreamNonBlocking));
  unsigned flags = 99;
  CHECK(hipStreamGetFlags(plain, &flags));
  REQUIRE(flags == hipStreamDefault, "default stream flags %u", flags);
  CHECK(hipStreamGetFlags(nonblocking, &flags));
  REQUIRE(flags == hipStreamNonBlocking, "non-blocking stream flags %u", flags);
  CHECK(hipStreamGetFlags_spt(nonblocking, &flags));
  REQUIRE(flags == hipStreamNonBlocking, "_spt: non-blocking stream flags %u", flags);
  flags = 99;
  CHECK(hipStreamGetFlags(hipStreamPerThread, &flags));
  REQUIRE(flags == 0, "per-thread stream flags %u", flags);
  flags = 99;
  CHECK(hipStreamGetFlags_spt(NULL, &flags)); /* NULL means the per-thread stream here */
  REQUIRE(flags == 0, "_spt null stream flags %u", flags);
  EXPECT_ERR(hipStreamGetFlags(NULL, &flags), hipErrorInvalidValue); /* ROCm refuses it */
  EXPECT_ERR(hipStreamGetFlags(plain, NULL), hipErrorInvalidValue);

  step("priorities");
  hipStream_t high, low;
  CHECK(hipStreamCreateWithPriority(&high, hipStreamDefault, greatest));
  CHECK(hipStreamCreateWithPriority(&low, hipStreamNonBlocking, least));
  int prio = 99;
  CHECK(hipStreamGetPriority(high, &prio));
  REQUIRE(prio == greatest, "greatest-priority stream reads %d", prio);
  CHECK(hipStreamGetPriority(low, &prio));
  REQUIRE(prio == least, "least-priority stream reads %d", prio);
  CHECK(hipStreamGetFlags(low, &flags));
  REQUIRE(flags == hipStreamNonBlocking, "flags with a priority %u", flags);
  /* Out of range clamps, as at creation. */
  hipStream_t beyond;
  CHECK(hipStreamCreateWithPriority(&beyond, 0, greatest - 100));
  CHECK(hipStreamGetPriority(beyond, &prio));
  REQUIRE(prio == greatest, "priority beyond the range reads %d, not %d", prio, greatest);
  CHECK(hipStreamDestroy(beyond));
  hipStream_t normal;
  CHECK(hipStreamCreateWithPriority(&normal, 0, 0));
  CHECK(hipStreamGetPriority(normal, &prio));
  REQUIRE(prio == 0, "normal-priority stream reads %d", prio);
  CHECK(hipStreamDestroy(normal));
  prio = 99;
  CHECK(hipStreamGetPriority(NULL, &prio));
  REQUIRE(prio == 0, "null stream priority %d", prio);
  prio = 99;
  CHECK(hipStreamGetPriority_spt(NULL, &prio));
  REQUIRE(prio == 0, "_spt null stream priority %d", prio);
  EXPECT_ERR(hipStreamGetPriority(high, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamGetPriority(NULL, NULL), hipErrorInvalidValue);

  step("devices");
  hipDevice_t dev = -1;
  CHECK(hipStreamGetDevice(plain, &dev));
  REQUIRE(dev == 0, "stream of device 0 reports %d", dev);
  CHECK(hipStreamGetDevice(NULL, &dev));
  REQUIRE(dev == 0, "null stream reports %d", dev);
  /* AMD's hipGetStreamDeviceId: the stream's device, the current one for the null stream. */
  REQUIRE(hipGetStreamDeviceId(plain) == 0, "hipGetStreamDeviceId of a device-0 stream: %d", hipGetStreamDeviceId(plain));
  REQUIRE(hipGetStreamDeviceId(NULL) == 0, "hipGetStreamDeviceId of the null stream: %d", hipGetStreamDeviceId(NULL));
  if (count > 1) {
    CHECK(hipSetDevice(count - 1));
    hipStream_t other;
    CHECK(hipStreamCreate(&other));
    CHECK(hipStreamGetDevice(NULL, &dev));
    REQUIRE(dev == count - 1, "null stream follows the current device: %d", dev);
    CHECK(hipStreamGetDevice(hipStreamPerThread, &dev));
    REQUIRE(dev == count - 1, "per-thread stream follows the current device: %d", dev);
    CHECK(hipSetDevice(0));
    CHECK(hipStreamGetDevice(other, &dev));
    REQUIRE(dev == count - 1, "stream created on device %d reports %d", count - 1, dev);
    CHECK(hipStreamGetDevice(plain, &dev));
    REQUIRE(dev == 0, "stream of device 0 reports %d after switching", dev);
    CHECK(hipStreamDestroy(other));
  }
  EXPECT_ERR(hipStreamGetDevice(plain, NULL), hipErrorInvalidValue);

  step("destroyed and made-up streams");
  CHECK(hipStreamDestroy(plain));
  EXPECT_ERR(hipStreamGetFlags(plain, &flags), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipStreamGetPriority(plain, &prio), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipStreamGetDevice(plain, &dev), hipErrorContextIsDestroyed);
  hipStream_t made_up = (hipStream_t)(uintptr_t)0x1234567;
  EXPECT_ERR(hipStreamGetFlags(made_up, &flags), hipErrorContextIsDestroyed);
  hipError_t last = hipGetLastError();
  REQUIRE(last == hipErrorContextIsDestroyed, "last error %s", hipGetErrorName(last));

  CHECK(hipStreamDestroy(nonblocking));
  CHECK(hipStreamDestroy(high));
  CHECK(hipStreamDestroy(low));
  printf("PASS stream_info\n");
  return 0;
}
