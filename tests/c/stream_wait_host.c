/*
 * A stream waiting on a word the application writes from its own host thread after the
 * stream is already blocked (ROCm hip-tests' Unit_hipStreamValue_Wait*_Blocking_* pattern):
 * the word lies in registered host memory, in device memory written by a hipStreamWriteValue
 * on another stream, or in registered memory reached through its device pointer. Stream
 * writes to registered host memory are in the application's memory once an event or stream
 * synchronisation says they are done.
 */
#include "check.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define DATA_INIT 0x1234u
#define DATA_UPDATE 0x4321u
#define WORDS 1024

enum where { HOST, DEVICE, DEVICE_TO_HOST };
static const char* where_name[] = {"registered host memory", "device memory", "registered memory through its device pointer"};

struct wait_case {
  const char* name;
  unsigned op;
  uint64_t mask, wait, fail, pass;
};

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL stream_wait_host: the waiting stream was never released (timeout)\n";
  (void)!write(1, msg, sizeof msg - 1);
  _exit(1);
}

static void set_word(enum where where, void* host, void* dev, int wide, size_t offset, uint64_t value) {
  if (where == DEVICE) {
    /* As the hip-tests do: a write on a second, non-blocking stream. */
    hipStream_t writer;
    CHECK(hipStreamCreateWithFlags(&writer, hipStreamNonBlocking));
    if (wide)
      CHECK(hipStreamWriteValue64(writer, (uint64_t*)dev + offset, value, 0));
    else
      CHECK(hipStreamWriteValue32(writer, (uint32_t*)dev + offset, (uint32_t)value, 0));
    CHECK(hipStreamSynchronize(writer));
    CHECK(hipStreamDestroy(writer));
  } else if (wide) {
    ((volatile uint64_t*)host)[offset] = value;
  } else {
    ((volatile uint32_t*)host)[offset] = (uint32_t)value;
  }
}

static void blocking_wait(const struct wait_case* tc, enum where where, int wide, size_t offset) {
  size_t word = wide ? 8 : 4;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  uint64_t* data = calloc(2, 8);
  REQUIRE(data != NULL, "calloc");
  CHECK(hipHostRegister(data, 8, 0));
  CHECK(hipHostRegister(data + 1, 8, 0));
  data[0] = data[1] = DATA_INIT;
  hipEvent_t first, second;
  CHECK(hipEventCreate(&first));
  CHECK(hipEventCreate(&second));

  void* host = NULL;
  void* target_base = NULL;
  if (where == DEVICE) {
    CHECK(hipMalloc(&target_base, WORDS * word));
    CHECK(hipMemset(target_base, 0, WORDS * word));
  } else {
    host = calloc(WORDS, word);
    REQUIRE(host != NULL, "calloc");
    CHECK(hipHostRegister(host, WORDS * word, 0));
    if (where == HOST)
      target_base = host;
    else
      CHECK(hipHostGetDevicePointer(&target_base, host, 0));
  }
  CHECK(hipDeviceSynchronize());
  void* target = (char*)target_base + offset * word;
  set_word(where, host, target_base, wide, offset, tc->fail);

  if (wide) {
    CHECK(hipStreamWriteValue64(s, &data[0], DATA_UPDATE, 0));
    CHECK(hipEventRecord(first, s));
    CHECK(hipStreamWaitValue64(s, target, tc->wait, tc->op, tc->mask));
    CHECK(hipStreamWriteValue64(s, &data[1], DATA_UPDATE, 0));
  } else {
    uint32_t* d32 = (uint32_t*)data;
    CHECK(hipStreamWriteValue32(s, &d32[0], DATA_UPDATE, 0));
    CHECK(hipEventRecord(first, s));
    CHECK(hipStreamWaitValue32(s, target, (uint32_t)tc->wait, tc->op, (uint32_t)tc->mask));
    CHECK(hipStreamWriteValue32(s, &d32[2], DATA_UPDATE, 0));
  }
  CHECK(hipEventRecord(second, s));

  uint64_t got0 = wide ? data[0] : ((uint32_t*)data)[0];
  CHECK(hipEventSynchronize(first));
  got0 = wide ? data[0] : ((uint32_t*)data)[0];
  REQUIRE(got0 == DATA_UPDATE, "%s, %s, offset %zu: the write before the wait reads %#llx", tc->name, where_name[where], offset,
          (unsigned long long)got0);
  EXPECT_ERR(hipEventQuery(second), hipErrorNotReady);
  uint64_t got1 = wide ? data[1] : ((uint32_t*)data)[2];
  REQUIRE(got1 == DATA_INIT, "%s, %s: the write after the wait ran before its release", tc->name, where_name[where]);

  set_word(where, host, target_base, wide, offset, tc->pass);
  CHECK(hipStreamSynchronize(s));
  CHECK(hipEventQuery(second));
  got1 = wide ? data[1] : ((uint32_t*)data)[2];
  REQUIRE(got1 == DATA_UPDATE, "%s, %s, offset %zu: the write after the released wait reads %#llx", tc->name, where_name[where], offset,
          (unsigned long long)got1);

  CHECK(hipEventDestroy(first));
  CHECK(hipEventDestroy(second));
  CHECK(hipHostUnregister(data));
  CHECK(hipHostUnregister(data + 1));
  free(data);
  if (where == DEVICE) {
    CHECK(hipFree(target_base));
  } else {
    CHECK(hipHostUnregister(host));
    free(host);
  }
  CHECK(hipStreamDestroy(s));
}

/* A non-blocking stream waiting on device memory is released by the application's own
 * hipMemcpy and hipMemset (on the null stream, which does not wait for a non-blocking stream;
 * ROCm's test notes that with a blocking waiter hipMemcpy deadlocks, on AMD hardware too). */
static void released_by_memcpy_and_memset(void) {
  step("device memory released by hipMemcpy and hipMemset from the host thread");
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  uint32_t* word;
  CHECK(hipMalloc((void**)&word, 64));
  CHECK(hipMemset(word, 0, 64));
  uint32_t* marker = calloc(1, 4096);
  REQUIRE(marker != NULL, "calloc");
  CHECK(hipHostRegister(marker, 4096, 0));
  CHECK(hipDeviceSynchronize());

  CHECK(hipStreamWaitValue32(s, word + 5, 7, hipStreamWaitValueEq, 0xffffffff));
  CHECK(hipStreamWriteValue32(s, marker, 1, 0));
  EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
  uint32_t seven = 7;
  alarm(20);
  CHECK(hipMemcpy(word + 5, &seven, 4, hipMemcpyHostToDevice));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(*marker == 1, "the write after the wait released by hipMemcpy reads %u", *marker);

  CHECK(hipStreamWaitValue32(s, word + 9, 0x01010101, hipStreamWaitValueEq, 0xffffffff));
  CHECK(hipStreamWriteValue32(s, marker, 2, 0));
  EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
  alarm(20);
  CHECK(hipMemset(word + 8, 1, 8));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(*marker == 2, "the write after the wait released by hipMemset reads %u", *marker);
  alarm(0);

  CHECK(hipHostUnregister(marker));
  free(marker);
  CHECK(hipFree(word));
  CHECK(hipStreamDestroy(s));
}

/* Another thread releases the wait while this one is already inside a synchronising call:
 * with a plain store to registered host memory, or with its own hipStreamWriteValue32 on
 * device memory (a HIP call that must not queue behind the synchronize). */
struct releaser {
  volatile uint32_t* host_word;
  uint32_t* device_word;
  uint32_t value;
};

static void* release_later(void* arg) {
  const struct releaser* r = arg;
  struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  if (r->host_word) {
    *r->host_word = r->value;
  } else {
    hipStream_t writer;
    CHECK(hipStreamCreateWithFlags(&writer, hipStreamNonBlocking));
    CHECK(hipStreamWriteValue32(writer, r->device_word, r->value, 0));
    CHECK(hipStreamSynchronize(writer));
    CHECK(hipStreamDestroy(writer));
  }
  return NULL;
}

enum sync_kind { SYNC_STREAM, SYNC_EVENT, SYNC_DEVICE };

static void released_by_another_thread(int host, enum sync_kind how) {
  static const char* how_name[] = {"hipStreamSynchronize", "hipEventSynchronize", "hipDeviceSynchronize"};
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipEvent_t done;
  CHECK(hipEventCreate(&done));
  uint32_t* page = aligned_alloc(4096, 4096);
  REQUIRE(page != NULL, "aligned_alloc");
  memset(page, 0, 4096);
  CHECK(hipHostRegister(page, 4096, 0));
  uint32_t* device_word = NULL;
  CHECK(hipMalloc((void**)&device_word, 4));
  CHECK(hipMemset(device_word, 0, 4));
  CHECK(hipDeviceSynchronize());

  uint32_t* target = host ? &page[100] : device_word;
  CHECK(hipStreamWaitValue32(s, target, 3, hipStreamWaitValueGte, 0xffffffff));
  CHECK(hipStreamWriteValue32(s, &page[0], 0xfeed, 0));
  CHECK(hipEventRecord(done, s));
  struct releaser r = {host ? (volatile uint32_t*)&page[100] : NULL, device_word, 5};
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, release_later, &r) == 0, "pthread_create");
  alarm(20);
  if (how == SYNC_STREAM)
    CHECK(hipStreamSynchronize(s));
  else if (how == SYNC_EVENT)
    CHECK(hipEventSynchronize(done));
  else
    CHECK(hipDeviceSynchronize());
  alarm(0);
  REQUIRE(pthread_join(thread, NULL) == 0, "pthread_join");
  REQUIRE(page[0] == 0xfeed, "%s word, %s: the write after the wait reads %#x", host ? "host" : "device", how_name[how], page[0]);

  CHECK(hipHostUnregister(page));
  free(page);
  CHECK(hipFree(device_word));
  CHECK(hipEventDestroy(done));
  CHECK(hipStreamDestroy(s));
}

int main(void) {
  begin("stream_wait_host");
  signal(SIGALRM, on_alarm);
  static const struct wait_case cases32[] = {
      {"32-bit masked GTE", hipStreamWaitValueGte, 0xF, 0x4, 0x3, 0x6},
      {"32-bit masked EQ", hipStreamWaitValueEq, 0x0000FFFF, 0x1, 0x0FFF0000, 0x0FFF0001},
      {"32-bit masked AND", hipStreamWaitValueAnd, 0xFF, 0xF4A, 0xF35, 0x02},
      {"32-bit NOR", hipStreamWaitValueNor, 0xFFFFFFFF, 0x7AAAAAAA, 0x85555555, 0x9AAAAAAA},
  };
  static const struct wait_case cases64[] = {
      {"64-bit GTE", hipStreamWaitValueGte, ~0ull, 0x7FFFFFFF00000001ull, 0x7FFFFFFF00000000ull, 0x7FFFFFFF00000010ull},
      {"64-bit masked EQ", hipStreamWaitValueEq, 0xFFFFFFFFull, 0x11ull, 0xABCD000000000025ull, 0xABCD000000000011ull},
  };
  static const size_t offsets[] = {0, 3, 1023};
  for (int where = HOST; where <= DEVICE_TO_HOST; where++) {
    step(where_name[where]);
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
      for (size_t i = 0; i < sizeof cases32 / sizeof cases32[0]; i++) {
        alarm(20);
        blocking_wait(&cases32[i], (enum where)where, 0, offsets[o]);
      }
      for (size_t i = 0; i < sizeof cases64 / sizeof cases64[0]; i++) {
        alarm(20);
        blocking_wait(&cases64[i], (enum where)where, 1, offsets[o]);
      }
    }
  }
  alarm(0);
  released_by_memcpy_and_memset();
  step("released by another thread during hipStreamSynchronize, hipEventSynchronize, hipDeviceSynchronize");
  for (int how = SYNC_STREAM; how <= SYNC_DEVICE; how++) {
    released_by_another_thread(1, (enum sync_kind)how);
    released_by_another_thread(0, (enum sync_kind)how);
  }
  printf("PASS stream_wait_host\n");
  return 0;
}
