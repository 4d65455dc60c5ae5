/*
 * ROCm's hip-tests block a stream with a host callback that spins until the test's own thread
 * releases it (HipTest::BlockingContext), queue a kernel and an asynchronous device-to-host
 * copy into hipHostMalloc memory behind it, check that the copy has not landed, release the
 * callback and synchronize. The asynchronous copy must return while the stream is blocked:
 * a copy that waits for the stream waits for a release that only comes after it returns.
 * Over the same-host transport hipHostMalloc memory is shared with the worker, the path
 * where the copy once waited (on the null stream after a launch, and on created streams).
 */
#include "rtc_module.h"
#include <stdatomic.h>
#include <time.h>

static const char* const kSource =
    "extern \"C\" __global__ void count_up(int* p, int n) {\n"
    "  if (threadIdx.x == 0) for (int i = 0; i < n; i++) p[0] += 1;\n"
    "}\n";

#define COPY_BYTES (4u << 20)
#define COUNT 1000
/* How long a blocking callback waits for its release before it gives up (the copy that
 * should have returned at once did not): far beyond any copy's enqueue, bounded so a
 * regression fails instead of hanging. */
#define RELEASE_WAIT_S 20

struct blocker {
  atomic_int blocked;
  atomic_int timed_out;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void block_until_released(hipStream_t stream, hipError_t status, void* data) {
  (void)stream;
  (void)status;
  struct blocker* b = data;
  double give_up = now_s() + RELEASE_WAIT_S;
  while (atomic_load(&b->blocked)) {
    if (now_s() > give_up) {
      atomic_store(&b->timed_out, 1);
      return;
    }
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
}

static void blocked_copy(hipFunction_t count_up, hipStream_t stream, const char* what) {
  step(what);
  int *host, *device;
  CHECK(hipHostMalloc((void**)&host, COPY_BYTES, hipHostMallocDefault));
  CHECK(hipMalloc((void**)&device, COPY_BYTES));
  memset(host, 0, COPY_BYTES);
  host[0] = 1;
  CHECK(hipMemcpyAsync(device, host, COPY_BYTES, hipMemcpyHostToDevice, stream));
  struct blocker b = {1, 0};
  CHECK(hipStreamAddCallback(stream, block_until_released, &b, 0));
  EXPECT_ERR(hipStreamQuery(stream), hipErrorNotReady);
  int n = COUNT;
  void* params[] = {&device, &n};
  CHECK(hipModuleLaunchKernel(count_up, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
  double start = now_s();
  CHECK(hipMemcpyAsync(host, device, COPY_BYTES, hipMemcpyDeviceToHost, stream));
  double took = now_s() - start;
  int blocked_then = atomic_load(&b.blocked);
  REQUIRE(host[0] == 1, "the copy landed (%d) while its stream was blocked", host[0]);
  atomic_store(&b.blocked, 0);
  CHECK(hipDeviceSynchronize());
  REQUIRE(!atomic_load(&b.timed_out), "hipMemcpyAsync waited %.1f s for the blocked stream", took);
  REQUIRE(blocked_then, "the callback was released before the copy returned");
  REQUIRE(host[0] == 1 + COUNT, "after the release the copy brought %d, want %d", host[0], 1 + COUNT);
  CHECK(hipFree(device));
  CHECK(hipHostFree(host));
}

/* ROCm's hip-tests launch a kernel for the first time after blocking the stream: its module
 * is loaded and its function looked up while a host callback holds the stream. */
static void first_launch_while_blocked(const char* code) {
  step("a created stream: a module loaded and launched for the first time while a callback holds the stream");
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  int *host, *device;
  CHECK(hipHostMalloc((void**)&host, sizeof(int), hipHostMallocDefault));
  CHECK(hipMalloc((void**)&device, sizeof(int)));
  CHECK(hipMemset(device, 0, sizeof(int)));
  host[0] = -1;
  struct blocker b = {1, 0};
  CHECK(hipStreamAddCallback(stream, block_until_released, &b, 0));
  hipModule_t module;
  hipFunction_t count_up;
  CHECK(hipModuleLoadData(&module, code));
  CHECK(hipModuleGetFunction(&count_up, module, "count_up"));
  int n = COUNT;
  void* params[] = {&device, &n};
  CHECK(hipModuleLaunchKernel(count_up, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
  CHECK(hipMemcpyAsync(host, device, sizeof(int), hipMemcpyDeviceToHost, stream));
  EXPECT_ERR(hipStreamQuery(stream), hipErrorNotReady);
  int blocked_then = atomic_load(&b.blocked);
  atomic_store(&b.blocked, 0);
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(!atomic_load(&b.timed_out), "loading or launching waited for the blocked stream");
  REQUIRE(blocked_then, "the callback was released before the launch returned");
  REQUIRE(host[0] == COUNT, "the kernel counted %d, want %d", host[0], COUNT);
  CHECK(hipModuleUnload(module));
  CHECK(hipFree(device));
  CHECK(hipHostFree(host));
  CHECK(hipStreamDestroy(stream));
}

int main(void) {
  begin("blocked_stream_copies");
  CHECK(hipSetDevice(0));
  /* Compiled before any stream is blocked (the worker compiles it). */
  char* code = rtc_code(kSource, "count_up.hip", NULL);
  first_launch_while_blocked(code);
  hipModule_t module = rtc_module(kSource, "count_up.hip", NULL);
  hipFunction_t count_up;
  CHECK(hipModuleGetFunction(&count_up, module, "count_up"));
  blocked_copy(count_up, NULL, "the null stream: an async copy behind a launch and a blocking callback returns");
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  blocked_copy(count_up, stream, "a created stream: an async copy behind a launch and a blocking callback returns");
  CHECK(hipStreamDestroy(stream));
  CHECK(hipModuleUnload(module));
  free(code);
  printf("PASS blocked_stream_copies\n");
  return 0;
}
