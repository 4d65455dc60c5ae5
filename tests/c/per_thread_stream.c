/*
 * Per-thread default streams: each thread's hipStreamPerThread is its own stream (distinct
 * ids), two threads' per-thread streams do not serialise (one held by a host function while
 * the other runs and synchronises), the _spt forms act on the calling thread's stream, and
 * the per-thread stream synchronises with the legacy null stream.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int release_a;
static atomic_int a_held_timed_out;
static atomic_int b_done;

/* Holds thread A's per-thread stream until thread B has finished its own work. */
static void hold_until_released(void* user) {
  (void)user;
  double until = now_seconds() + 10.0;
  while (!atomic_load(&release_a)) {
    if (now_seconds() > until) {
      atomic_store(&a_held_timed_out, 1);
      return;
    }
    sleep_ms(1);
  }
}

static unsigned long long thread_ids[2];

static void* thread_a(void* arg) {
  (void)arg;
  CHECK(hipStreamGetId(hipStreamPerThread, &thread_ids[0]));
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, 256));
  CHECK(hipLaunchHostFunc_spt(NULL, hold_until_released, NULL));
  CHECK(hipMemsetAsync(d, 0x11, 256, hipStreamPerThread));
  EXPECT_ERR(hipStreamQuery_spt(NULL), hipErrorNotReady);
  /* Not synchronising yet: a thread blocked in a synchronising call holds the process's one
   * connection. B's own synchronisation must not wait for this stream. */
  while (!atomic_load(&release_a) && !atomic_load(&a_held_timed_out)) sleep_ms(1);
  CHECK(hipStreamSynchronize_spt(NULL));
  uint8_t host[256];
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) REQUIRE(host[i] == 0x11, "A: byte %d is %#x", i, host[i]);
  CHECK(hipFree(d));
  return NULL;
}

static void* thread_b(void* arg) {
  (void)arg;
  CHECK(hipStreamGetId(hipStreamPerThread, &thread_ids[1]));
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, 256));
  /* Runs and completes while A's per-thread stream is held. (Nothing here needs a host
   * function or the legacy stream, which would wait for A's held blocking stream.) */
  CHECK(hipMemsetAsync(d, 0x22, 256, hipStreamPerThread));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(hipStreamQuery(hipStreamPerThread));
  atomic_store(&b_done, 1);
  atomic_store(&release_a, 1);
  uint8_t host[256];
  CHECK(hipMemcpyAsync(host, d, sizeof host, hipMemcpyDeviceToHost, hipStreamPerThread));
  CHECK(hipStreamSynchronize_spt(NULL));
  for (int i = 0; i < 256; i++) REQUIRE(host[i] == 0x22, "B: byte %d is %#x", i, host[i]);
  CHECK(hipFree(d));
  return NULL;
}

/* Uses its per-thread stream and exits: the library destroys that stream on the worker. */
static void* short_lived(void* arg) {
  (void)arg;
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  return NULL;
}

static atomic_int slow_done;
static void slow(void* user) {
  (void)user;
  sleep_ms(200);
  atomic_store(&slow_done, 1);
}

int main(void) {
  begin("per_thread_stream");

  step("queries on the per-thread stream");
  unsigned flags = 99;
  int priority = 99;
  hipDevice_t dev = -1;
  CHECK(hipStreamGetFlags_spt(NULL, &flags));
  REQUIRE(flags == 0, "per-thread stream flags %u", flags);
  CHECK(hipStreamGetPriority_spt(NULL, &priority));
  REQUIRE(priority == 0, "per-thread stream priority %d", priority);
  CHECK(hipStreamGetDevice(hipStreamPerThread, &dev));
  REQUIRE(dev == 0, "per-thread stream device %d", dev);
  EXPECT_ERR(hipStreamDestroy(hipStreamPerThread), hipErrorInvalidHandle);
  EXPECT_ERR(hipStreamDestroy(hipStreamLegacy), hipErrorInvalidHandle);
  unsigned long long main_id = 0, legacy_id = 1;
  CHECK(hipStreamGetId(hipStreamPerThread, &main_id));
  CHECK(hipStreamGetId(hipStreamLegacy, &legacy_id));
  REQUIRE(main_id != legacy_id, "the per-thread stream is the legacy stream");

  step("two threads' per-thread streams are distinct and do not serialise");
  pthread_t a, b;
  REQUIRE(pthread_create(&a, NULL, thread_a, NULL) == 0, "pthread_create");
  sleep_ms(50); /* A's stream is held before B starts */
  REQUIRE(pthread_create(&b, NULL, thread_b, NULL) == 0, "pthread_create");
  pthread_join(b, NULL);
  pthread_join(a, NULL);
  REQUIRE(atomic_load(&b_done) == 1, "B did not finish");
  REQUIRE(atomic_load(&a_held_timed_out) == 0, "B's per-thread stream waited for A's (they serialised)");
  REQUIRE(thread_ids[0] != thread_ids[1], "two threads share per-thread stream id %llu", thread_ids[0]);
  REQUIRE(thread_ids[0] != main_id && thread_ids[1] != main_id, "a thread shares the main thread's stream");

  step("_spt event and stream forms");
  hipEvent_t e;
  hipStream_t s;
  CHECK(hipEventCreate(&e));
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  atomic_store(&slow_done, 0);
  CHECK(hipLaunchHostFunc_spt(NULL, slow, NULL));
  CHECK(hipEventRecord_spt(e, NULL));
  CHECK(hipStreamWaitEvent(s, e, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(atomic_load(&slow_done) == 1, "a stream waiting for a per-thread event went on early");
  CHECK(hipStreamWaitEvent_spt(NULL, e, 0));
  CHECK(hipStreamSynchronize_spt(NULL));
  EXPECT_ERR(hipStreamWaitEvent_spt(NULL, e, 5), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamWaitEvent_spt(NULL, NULL, 0), hipErrorInvalidHandle);
  CHECK(hipEventDestroy(e));
  CHECK(hipStreamDestroy(s));

  step("the legacy null stream waits for the per-thread stream");
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, 64));
  atomic_store(&slow_done, 0);
  CHECK(hipLaunchHostFunc(hipStreamPerThread, slow, NULL));
  CHECK(hipMemsetAsync(d, 0x33, 64, hipStreamLegacy));
  CHECK(hipStreamSynchronize(hipStreamLegacy));
  REQUIRE(atomic_load(&slow_done) == 1, "legacy-stream work finished before the per-thread stream's");
  uint8_t host[64];
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) REQUIRE(host[i] == 0x33, "byte %d is %#x", i, host[i]);
  CHECK(hipFree(d));

  step("an exiting thread's per-thread stream is freed (more threads than a session may hold at once)");
  for (int i = 0; i < 300; i++) {
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, short_lived, NULL) == 0, "pthread_create");
    pthread_join(t, NULL);
  }

  printf("PASS per_thread_stream\n");
  return 0;
}
