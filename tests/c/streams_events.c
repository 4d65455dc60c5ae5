/*
 * Streams and events: in-order execution on a non-blocking stream, stream queries,
 * cross-stream dependencies through hipStreamWaitEvent, event record/synchronize/query/
 * elapsed time, hipEventDisableTiming, and asynchronous device-to-host copies landing by the
 * time of the synchronising call.
 */
#include "check.h"

#define BIG ((size_t)64 << 20)

static void expect_bytes(const uint8_t* buf, size_t n, uint8_t value, const char* what) {
  for (size_t i = 0; i < n; i++)
    REQUIRE(buf[i] == value, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, buf[i], value);
}

static void ordering_on_one_stream(void) {
  step("copy -> memset -> copy on one non-blocking stream");
  const size_t n = ((size_t)1 << 20) + 7;
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, n));
  uint8_t* a = xmalloc(n);
  uint8_t* b = xmalloc(n);
  uint8_t* out = xmalloc(n);
  fill_pattern(a, n, 1);
  fill_pattern(b, n, 2);
  memset(out, 0, n);

  CHECK(hipMemcpyAsync(d, a, n, hipMemcpyHostToDevice, s));
  CHECK(hipMemsetAsync(d, 0x6b, n, s));
  CHECK(hipMemcpyAsync(out, d, n, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamSynchronize(s));
  expect_bytes(out, n, 0x6b, "D2H after H2D then memset");

  CHECK(hipMemcpyAsync(d, b, n, hipMemcpyHostToDevice, s));
  CHECK(hipMemcpyAsync(out, d, n, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamSynchronize(s));
  EXPECT_PATTERN(out, n, 2);

  /* Many small dependent operations interleaved. */
  for (int i = 0; i < 32; i++) {
    CHECK(hipMemsetD32Async(d, 0x01010101 * (uint32_t)i, 1024, s));
    CHECK(hipMemcpyAsync(out + 4096 * (size_t)i, d, 4096, hipMemcpyDeviceToHost, s));
  }
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < 32; i++) expect_bytes(out + 4096 * (size_t)i, 4096, (uint8_t)i, "interleaved memset/copy");

  free(a);
  free(b);
  free(out);
  CHECK(hipFree(d));
  CHECK(hipStreamDestroy(s));
}

static void stream_query(void) {
  step("hipStreamQuery");
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipStreamQuery(s)); /* idle stream */
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, BIG));
  uint8_t* h = xmalloc(BIG);
  fill_pattern(h, BIG, 3);
  CHECK(hipMemcpyAsync(d, h, BIG, hipMemcpyHostToDevice, s));
  CHECK(hipMemsetAsync(d, 1, BIG, s));
  double deadline = now_seconds() + 30.0;
  int not_ready = 0;
  for (;;) {
    hipError_t e = hipStreamQuery(s);
    if (e == hipSuccess) break;
    REQUIRE(e == hipErrorNotReady, "hipStreamQuery returned %s", hipGetErrorName(e));
    not_ready++;
    REQUIRE(now_seconds() < deadline, "stream still busy after 30 s");
    sleep_ms(1);
  }
  printf("   complete after %d not-ready answers\n", not_ready);
  (void)hipGetLastError(); /* see not_ready.c for what the last error should be */
  CHECK(hipStreamQuery(NULL));
  CHECK(hipStreamSynchronize(s));
  free(h);
  CHECK(hipFree(d));
  CHECK(hipStreamDestroy(s));
}

static void wait_event_across_streams(void) {
  step("hipStreamWaitEvent across two streams");
  const size_t n = (size_t)8 << 20;
  hipStream_t producer, consumer;
  CHECK(hipStreamCreateWithFlags(&producer, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&consumer, hipStreamNonBlocking));
  hipEvent_t ready;
  CHECK(hipEventCreateWithFlags(&ready, hipEventDisableTiming));
  uint8_t *src = NULL, *dst = NULL;
  CHECK(hipMalloc((void**)&src, n));
  CHECK(hipMalloc((void**)&dst, n));
  CHECK(hipMemset(dst, 0, n));
  uint8_t* h = xmalloc(n);
  uint8_t* out = xmalloc(n);

  for (uint32_t round = 0; round < 3; round++) {
    fill_pattern(h, n, 10 + round);
    memset(out, 0, n);
    /* producer: upload then overwrite a prefix; consumer must see both. */
    CHECK(hipMemcpyAsync(src, h, n, hipMemcpyHostToDevice, producer));
    CHECK(hipMemsetAsync(src, 0xab, 4096, producer));
    CHECK(hipEventRecord(ready, producer));
    CHECK(hipStreamWaitEvent(consumer, ready, 0));
    CHECK(hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, consumer));
    CHECK(hipMemcpyAsync(out, dst, n, hipMemcpyDeviceToHost, consumer));
    CHECK(hipStreamSynchronize(consumer));
    expect_bytes(out, 4096, 0xab, "consumer prefix");
    for (size_t i = 4096; i < n; i++)
      REQUIRE(out[i] == pattern_byte(10 + round, i), "round %u: consumer byte %zu is 0x%02x", round, i, out[i]);
  }
  CHECK(hipStreamSynchronize(producer));
  free(h);
  free(out);
  CHECK(hipFree(src));
  CHECK(hipFree(dst));
  CHECK(hipEventDestroy(ready));
  CHECK(hipStreamDestroy(producer));
  CHECK(hipStreamDestroy(consumer));
}

static void events(void) {
  step("events: record, synchronize, query, elapsed time");
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipEvent_t start, stop, untimed;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreateWithFlags(&stop, 0));
  CHECK(hipEventCreateWithFlags(&untimed, hipEventDisableTiming));
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, BIG));
  uint8_t* h = xmalloc(BIG);
  fill_pattern(h, BIG, 5);

  CHECK(hipEventRecord(start, s));
  CHECK(hipMemcpyAsync(d, h, BIG, hipMemcpyHostToDevice, s));
  CHECK(hipEventRecord(stop, s));
  CHECK(hipEventRecord(untimed, s));
  CHECK(hipEventSynchronize(stop));
  CHECK(hipEventQuery(stop));
  CHECK(hipEventQuery(start));
  float ms = -1.0f;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  printf("   64 MiB host-to-device copy: %.3f ms\n", ms);
  REQUIRE(ms >= 0.0f, "elapsed time %f < 0", (double)ms);
  float back = 1.0f;
  CHECK(hipEventElapsedTime(&back, stop, start));
  REQUIRE(back <= 0.0f, "reverse elapsed time %f > 0", (double)back);

  CHECK(hipEventSynchronize(untimed));
  CHECK(hipEventQuery(untimed));
  EXPECT_ERR(hipEventElapsedTime(&ms, start, untimed), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventElapsedTime(&ms, untimed, stop), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventElapsedTime(NULL, start, stop), hipErrorInvalidValue);

  /* Record on the null stream too. */
  CHECK(hipEventRecord(start, NULL));
  CHECK(hipEventRecord(stop, NULL));
  CHECK(hipEventSynchronize(stop));
  CHECK(hipEventElapsedTime(&ms, start, stop));
  REQUIRE(ms >= 0.0f, "null-stream elapsed %f", (double)ms);

  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipEventDestroy(untimed));
  free(h);
  CHECK(hipFree(d));
  CHECK(hipStreamDestroy(s));
}

static void async_d2h_lands(void) {
  step("async D2H lands by hipStreamSynchronize / hipEventSynchronize");
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipEvent_t done;
  CHECK(hipEventCreate(&done));
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, BIG));
  uint8_t* h = xmalloc(BIG);
  uint8_t* out = xmalloc(BIG);

  /* Stream synchronize. */
  fill_pattern(h, BIG, 7);
  CHECK(hipMemcpy(d, h, BIG, hipMemcpyHostToDevice));
  memset(out, 0, BIG);
  CHECK(hipMemcpyDtoHAsync(out, d, BIG, s));
  CHECK(hipStreamSynchronize(s));
  EXPECT_PATTERN(out, BIG, 7);

  /* Event synchronize (no stream synchronize at all). */
  fill_pattern(h, BIG, 8);
  CHECK(hipMemcpyAsync(d, h, BIG, hipMemcpyHostToDevice, s));
  memset(out, 0, BIG);
  CHECK(hipMemcpyAsync(out, d, BIG, hipMemcpyDeviceToHost, s));
  CHECK(hipEventRecord(done, s));
  CHECK(hipEventSynchronize(done));
  EXPECT_PATTERN(out, BIG, 8);

  /* Event query polling until complete, then the data must be there. */
  fill_pattern(h, (size_t)4 << 20, 9);
  memset(out, 0, (size_t)4 << 20);
  CHECK(hipMemcpyAsync(d, h, (size_t)4 << 20, hipMemcpyHostToDevice, s));
  CHECK(hipMemcpyAsync(out, d, (size_t)4 << 20, hipMemcpyDeviceToHost, s));
  CHECK(hipEventRecord(done, s));
  double deadline = now_seconds() + 30.0;
  for (;;) {
    hipError_t e = hipEventQuery(done);
    if (e == hipSuccess) break;
    REQUIRE(e == hipErrorNotReady, "hipEventQuery returned %s", hipGetErrorName(e));
    REQUIRE(now_seconds() < deadline, "event not reached after 30 s");
    sleep_ms(1);
  }
  (void)hipGetLastError(); /* see not_ready.c */
  CHECK(hipEventSynchronize(done));
  EXPECT_PATTERN(out, (size_t)4 << 20, 9);

  /* Device synchronize. */
  memset(out, 0, 4096);
  CHECK(hipMemcpyAsync(out, d, 4096, hipMemcpyDeviceToHost, s));
  CHECK(hipDeviceSynchronize());
  EXPECT_PATTERN(out, 4096, 9);

  free(h);
  free(out);
  CHECK(hipFree(d));
  CHECK(hipEventDestroy(done));
  CHECK(hipStreamDestroy(s));
}

int main(void) {
  begin("streams_events");
  ordering_on_one_stream();
  stream_query();
  wait_event_across_streams();
  events();
  async_d2h_lands();
  printf("PASS streams_events\n");
  return 0;
}
