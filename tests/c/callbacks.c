/*
 * Stream callbacks and host functions: they run in order, with their user data and the
 * stream's status, on a thread that is not the caller's, while the caller is blocked in
 * hipStreamSynchronize; a callback holds its stream (later work waits for it); many
 * callbacks; the null stream and the _spt forms; argument errors; a callback calling HIP
 * gets an error instead of a deadlock.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

#define MANY 200

static pthread_t main_thread;
static atomic_int order[MANY];
static atomic_int ran;
static atomic_int on_main_thread;
static atomic_int bad_status;
static hipStream_t seen_stream;

static void record(void* user) {
  int i = (int)(intptr_t)user;
  int at = atomic_fetch_add(&ran, 1);
  if (at < MANY) atomic_store(&order[at], i);
  if (pthread_equal(pthread_self(), main_thread)) atomic_store(&on_main_thread, 1);
}


static void stream_callback(hipStream_t stream, hipError_t status, void* user) {
  if (status != hipSuccess) atomic_store(&bad_status, (int)status);
  seen_stream = stream;
  record(user);
}

static atomic_int slow_done;
static void slow_host_func(void* user) {
  (void)user;
  sleep_ms(300);
  atomic_store(&slow_done, 1);
}

static atomic_int nested_result = -1;
static void calls_hip(void* user) {
  (void)user;
  void* p = NULL;
  atomic_store(&nested_result, (int)hipMalloc(&p, 64));
}

int main(void) {
  begin("callbacks");
  main_thread = pthread_self();
  hipStream_t s;
  CHECK(hipStreamCreate(&s));

  step("argument errors");
  EXPECT_ERR(hipStreamAddCallback(s, NULL, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamAddCallback(s, stream_callback, NULL, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipLaunchHostFunc(s, NULL, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLaunchHostFunc_spt(NULL, NULL, NULL), hipErrorInvalidValue);

  step("a callback runs on another thread, with its stream, status and user data");
  CHECK(hipStreamAddCallback(s, stream_callback, (void*)(intptr_t)41, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(atomic_load(&ran) == 1, "ran %d callbacks", atomic_load(&ran));
  REQUIRE(atomic_load(&order[0]) == 41, "user data %d", atomic_load(&order[0]));
  REQUIRE(seen_stream == s, "callback got stream %p, expected %p", (void*)seen_stream, (void*)s);
  REQUIRE(atomic_load(&bad_status) == 0, "status %d", atomic_load(&bad_status));
  REQUIRE(atomic_load(&on_main_thread) == 0, "callback ran on the calling thread");

  step("a callback holds its stream: later work waits, the caller blocks in synchronize");
  uint32_t* d = NULL;
  CHECK(hipMalloc((void**)&d, 4096));
  CHECK(hipMemset(d, 0, 4096));
  double t0 = now_seconds();
  CHECK(hipLaunchHostFunc(s, slow_host_func, NULL));
  CHECK(hipMemsetAsync(d, 7, 4096, s));
  EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
  CHECK(hipStreamSynchronize(s));
  double waited = now_seconds() - t0;
  REQUIRE(atomic_load(&slow_done) == 1, "synchronize returned before the host function finished");
  REQUIRE(waited >= 0.29, "synchronize returned after %.3f s", waited);
  uint8_t host[4096];
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < sizeof host; i++) REQUIRE(host[i] == 7, "byte %zu is %u", i, host[i]);

  step("many callbacks, in order, across kinds");
  atomic_store(&ran, 0);
  for (int i = 0; i < MANY; i++) {
    if (i % 2 == 0) {
      CHECK(hipStreamAddCallback(s, stream_callback, (void*)(intptr_t)i, 0));
    } else {
      CHECK(hipLaunchHostFunc(s, record, (void*)(intptr_t)i));
    }
  }
  CHECK(hipStreamSynchronize(s));
  REQUIRE(atomic_load(&ran) == MANY, "ran %d of %d", atomic_load(&ran), MANY);
  for (int i = 0; i < MANY; i++) REQUIRE(atomic_load(&order[i]) == i, "position %d ran callback %d", i, atomic_load(&order[i]));
  REQUIRE(atomic_load(&on_main_thread) == 0, "a callback ran on the calling thread");

  step("null stream and per-thread forms");
  atomic_store(&ran, 0);
  CHECK(hipStreamAddCallback(NULL, stream_callback, (void*)(intptr_t)1, 0));
  CHECK(hipLaunchHostFunc(NULL, record, (void*)(intptr_t)2));
  CHECK(hipDeviceSynchronize());
  CHECK(hipStreamAddCallback_spt(NULL, stream_callback, (void*)(intptr_t)3, 0));
  CHECK(hipLaunchHostFunc_spt(NULL, record, (void*)(intptr_t)4));
  CHECK(hipStreamSynchronize_spt(NULL));
  REQUIRE(atomic_load(&ran) == 4, "ran %d of 4", atomic_load(&ran));
  for (int i = 0; i < 4; i++) REQUIRE(atomic_load(&order[i]) == i + 1, "position %d ran %d", i, atomic_load(&order[i]));
  REQUIRE(seen_stream == hipStreamPerThread, "the _spt callback got stream %p", (void*)seen_stream);

  step("a callback that calls HIP gets an error, not a deadlock");
  CHECK(hipLaunchHostFunc(s, calls_hip, NULL));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(atomic_load(&nested_result) == hipErrorIllegalState, "hipMalloc in a callback returned %d", atomic_load(&nested_result));

  CHECK(hipFree(d));
  CHECK(hipStreamDestroy(s));
  printf("PASS callbacks\n");
  return 0;
}
