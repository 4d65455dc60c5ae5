/*
 * ROCm 7's answers (clr hipamd/src) where ROCm's own hip-tests found hip-remote's differed:
 * the tracer's API names, kernel names of module functions, the external semaphore calls'
 * argument checks, never-created stream handles, a query of the null stream, which
 * waits for the blocking streams' work, invalid asynchronous copies refused at the call,
 * asynchronous copies into pageable memory complete on return, and
 * (with two devices) peer copies past an allocation and events recorded on another device's
 * stream.
 */
#include "rtc_module.h"
#include <pthread.h>

static const char* const kSource =
    "extern \"C\" __global__ void spin(long long cycles) {\n"
    "  long long start = clock64();\n"
    "  while (clock64() - start < cycles) {}\n"
    "}\n";

/* clock64 cycles the spinning kernel runs: 1 s at the host backend's 1 GHz, less on a
 * faster GPU clock; far longer than a query takes to follow its launch. */
#define SPIN_CYCLES 1000000000LL

static void api_names(void) {
  step("hipApiName: ROCm's tracer ids, \"unknown\" for reserved and unknown ids (clr hip_prof_str.h)");
  const struct {
    uint32_t id;
    const char* name;
  } known[] = {{1, "__hipPopCallConfiguration"}, {104, "hipLaunchByPtr"}, {108, "hipMalloc"},
               {199, "hipStreamSynchronize"}, {337, "hipDeviceSetLimit"}, {460, "hipMemPrefetchBatchAsync"}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    const char* got = hipApiName(known[i].id);
    REQUIRE(got != NULL && strcmp(got, known[i].name) == 0, "hipApiName(%u) = %s, want %s", known[i].id, got ? got : "NULL", known[i].name);
  }
  const uint32_t unknown[] = {0, 50, 83, 393, 461, 1023, UINT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char* got = hipApiName(unknown[i]);
    REQUIRE(got != NULL && strcmp(got, "unknown") == 0, "hipApiName(%u) = %s, want unknown", unknown[i], got ? got : "NULL");
  }
}

static void kernel_name_ref(hipFunction_t spin) {
  step("hipKernelNameRef: a module function's name; NULL for NULL (clr hip_intercept.cpp)");
  const char* name = hipKernelNameRef(spin);
  REQUIRE(name != NULL && strcmp(name, "spin") == 0, "hipKernelNameRef = %s, want spin", name ? name : "NULL");
  REQUIRE(hipKernelNameRef(NULL) == NULL, "hipKernelNameRef(NULL) is not NULL");
  REQUIRE(hipGetLastError() == hipSuccess, "hipKernelNameRef recorded an error");
}

static void external_semaphores(void) {
  step("hipSignal/WaitExternalSemaphoresAsync check their arguments first (clr hip_memory.cpp)");
  hipExternalSemaphoreSignalParams signal = {0};
  hipExternalSemaphoreWaitParams wait = {0};
  signal.params.fence.value = 1;
  wait.params.fence.value = 1;
  hipExternalSemaphore_t none[1] = {NULL};
  hipExternalSemaphore_t foreign[1] = {(hipExternalSemaphore_t)0x1000};
  (void)hipGetLastError();
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(NULL, &signal, 1, NULL), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(NULL, &wait, 1, NULL), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(foreign, NULL, 1, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(none, &wait, 1, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(foreign, &wait, 1, (hipStream_t)0xFFFF), hipErrorInvalidValue);
  signal.flags = 1;
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(foreign, &signal, 1, NULL), hipErrorInvalidValue);
  signal.flags = 0;
  /* Nothing to do is done. */
  CHECK(hipSignalExternalSemaphoresAsync(foreign, &signal, 0, NULL));
  /* Valid arguments naming a semaphore: none can be imported here. */
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(foreign, &signal, 1, NULL), hipErrorNotSupported);
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(foreign, &wait, 1, NULL), hipErrorNotSupported);
  (void)hipGetLastError();
}

static void never_created_streams(void) {
  step("a never-created stream handle is a destroyed context to query and synchronize (clr hip::isValid)");
  hipStream_t bogus = (hipStream_t)0xFFFF;
  EXPECT_ERR(hipStreamQuery(bogus), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipStreamSynchronize(bogus), hipErrorContextIsDestroyed);
  (void)hipGetLastError();
  CHECK(hipDeviceSynchronize());
}

static void null_stream_query(hipFunction_t spin) {
  step("a query of the null stream waits for the blocking streams, not the non-blocking ones");
  long long cycles = SPIN_CYCLES;
  void* params[] = {&cycles};
  hipStream_t blocking, non_blocking;
  CHECK(hipStreamCreate(&blocking));
  CHECK(hipStreamCreateWithFlags(&non_blocking, hipStreamNonBlocking));
  CHECK(hipStreamQuery(NULL));

  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, non_blocking, params, NULL));
  EXPECT_ERR(hipStreamQuery(non_blocking), hipErrorNotReady);
  CHECK(hipStreamQuery(NULL));
  CHECK(hipStreamSynchronize(non_blocking));

  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, blocking, params, NULL));
  EXPECT_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  EXPECT_ERR(hipStreamQuery(blocking), hipErrorNotReady);
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipStreamQuery(blocking));
  CHECK(hipStreamQuery(NULL));

  /* The per-thread default stream is a blocking stream too. */
  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, hipStreamPerThread, params, NULL));
  EXPECT_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipStreamQuery(hipStreamPerThread));
  CHECK(hipStreamQuery(NULL));
  CHECK(hipStreamDestroy(blocking));
  CHECK(hipStreamDestroy(non_blocking));
}

static void invalid_async_copies(void) {
  step("invalid asynchronous copies are refused at the call with ROCm's codes (clr hip_memory.cpp)");
  enum { W = 64, H = 8 };
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  float* device;
  size_t pitch;
  CHECK(hipMallocPitch((void**)&device, &pitch, W * sizeof(float), H));
  static float host[W * H];

  /* The driver descriptor: a row wider than a pitch is an invalid value (validateMemoryObject). */
  hip_Memcpy2D desc;
  memset(&desc, 0, sizeof desc);
  desc.srcMemoryType = hipMemoryTypeDevice;
  desc.srcDevice = (hipDeviceptr_t)device;
  desc.srcPitch = pitch;
  desc.dstMemoryType = hipMemoryTypeHost;
  desc.dstHost = host;
  desc.dstPitch = W * sizeof(float);
  desc.WidthInBytes = pitch + 1;
  desc.Height = H;
  (void)hipGetLastError();
  EXPECT_ERR(hipMemcpyParam2DAsync(&desc, stream), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  CHECK(hipGetLastError());
  /* The runtime API's 2D copy answers the same row as an invalid pitch (ihipMemcpy2D). */
  EXPECT_ERR(hipMemcpy2DAsync(host, W * sizeof(float), device, pitch, pitch + 1, H, hipMemcpyDeviceToHost, stream),
             hipErrorInvalidPitchValue);
  (void)hipGetLastError();
  desc.WidthInBytes = W * sizeof(float);
  CHECK(hipMemcpyParam2DAsync(&desc, stream));

  /* A box deeper than the array (validateImageObject). */
  enum { AW = 10, AH = 10, AD = 2 };
  static int volume[AW * AH * 10];
  for (int i = 0; i < AW * AH * 10; i++) volume[i] = i;
  hipChannelFormatDesc channel = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
  hipArray_t array;
  CHECK(hipMalloc3DArray(&array, &channel, make_hipExtent(AW, AH, AD), hipArrayDefault));
  hipMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_hipPitchedPtr(volume, AW * sizeof(int), AW, AH);
  p.dstArray = array;
  p.extent = make_hipExtent(AW, AH, 10);
  p.kind = hipMemcpyHostToDevice;
  EXPECT_ERR(hipMemcpy3DAsync(&p, stream), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  p.extent = make_hipExtent(AW + 1, AH, AD);
  EXPECT_ERR(hipMemcpy3DAsync(&p, stream), hipErrorInvalidValue);
  p.dstPos = make_hipPos(0, 1, 0);
  p.extent = make_hipExtent(AW, AH, AD);
  EXPECT_ERR(hipMemcpy3DAsync(&p, stream), hipErrorInvalidValue);
  (void)hipGetLastError();
  /* The box that fits goes, and comes back whole. */
  p.dstPos = make_hipPos(0, 0, 0);
  CHECK(hipMemcpy3DAsync(&p, stream));
  static int back[AW * AH * AD];
  hipMemcpy3DParms q;
  memset(&q, 0, sizeof q);
  q.srcArray = array;
  q.dstPtr = make_hipPitchedPtr(back, AW * sizeof(int), AW, AH);
  q.extent = make_hipExtent(AW, AH, AD);
  q.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3DAsync(&q, stream));
  CHECK(hipStreamSynchronize(stream));
  for (int i = 0; i < AW * AH * AD; i++) REQUIRE(back[i] == i, "element %d came back %d", i, back[i]);
  CHECK(hipFreeArray(array));
  CHECK(hipFree(device));
  CHECK(hipStreamDestroy(stream));
}

struct pageable_check {
  const int* data;
  int want;
  int count;
  int seen_ok;
};

static void check_pageable(void* arg) {
  struct pageable_check* c = arg;
  int ok = 1;
  for (int i = 0; i < c->count; i++) ok = ok && c->data[i] == c->want;
  c->seen_ok = ok;
}

static void pageable_downloads(void) {
  step("an async copy into pageable memory is complete on return (ROCm: isAsync = false for host memory)");
  enum { N = 1 << 16 };
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  int* device;
  CHECK(hipMalloc((void**)&device, N * sizeof(int)));
  int* pageable = malloc(N * sizeof(int));
  REQUIRE(pageable != NULL, "malloc failed");
  for (int round = 1; round <= 2; round++) {
    const int want = 0x1000 + round;
    memset(pageable, 0, N * sizeof(int));
    CHECK(hipMemsetD32Async((hipDeviceptr_t)device, want, N, stream));
    CHECK(hipMemcpyAsync(pageable, device, N * sizeof(int), hipMemcpyDeviceToHost, stream));
    /* No synchronisation yet: the bytes are there. */
    for (int i = 0; i < N; i++) REQUIRE(pageable[i] == want, "element %d is %#x right after hipMemcpyAsync, want %#x", i, pageable[i], want);
    /* hip-tests' pattern: a host function queued after the copy reads its result. */
    struct pageable_check check = {pageable, want, N, 0};
    CHECK(hipLaunchHostFunc(stream, check_pageable, &check));
    CHECK(hipStreamSynchronize(stream));
    REQUIRE(check.seen_ok, "the host function saw the copy incomplete");
  }
  free(pageable);
  CHECK(hipFree(device));
  CHECK(hipStreamDestroy(stream));
}

static void* malloc_async_on_fresh_per_thread_stream(void* result) {
  void* p = NULL;
  hipError_t* err = result;
  *err = hipMallocAsync(&p, 4096, hipStreamPerThread);
  if (*err == hipSuccess) *err = hipFreeAsync(p, hipStreamPerThread);
  if (*err == hipSuccess) *err = hipStreamSynchronize(hipStreamPerThread);
  return NULL;
}

static void per_thread_stream_first_use(void) {
  step("hipMallocAsync may be a thread's first use of hipStreamPerThread (hip-tests' hipLaunchHostFunc_streams)");
  pthread_t thread;
  hipError_t err = hipErrorUnknown;
  REQUIRE(pthread_create(&thread, NULL, malloc_async_on_fresh_per_thread_stream, &err) == 0, "pthread_create failed");
  REQUIRE(pthread_join(thread, NULL) == 0, "pthread_join failed");
  REQUIRE(err == hipSuccess, "hipMallocAsync/hipFreeAsync on a fresh per-thread stream: %s", hipGetErrorName(err));
}

/* Checks that need two devices; returns whether they ran. */
static int two_devices(void) {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  if (count < 2) {
    printf("  (one device: the two-device checks did not run)\n");
    return 0;
  }
  step("a peer copy past an allocation is an invalid value at the call (ihipMemcpy_validate)");
  enum { N = 1024 };
  int *a, *b;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc((void**)&a, N * sizeof(int)));
  CHECK(hipSetDevice(1));
  CHECK(hipMalloc((void**)&b, N * sizeof(int)));
  CHECK(hipSetDevice(0));
  hipStream_t stream0;
  CHECK(hipStreamCreate(&stream0));
  (void)hipGetLastError();
  EXPECT_ERR(hipMemcpyPeerAsync(b, 1, a, 0, 2 * N * sizeof(int), stream0), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  CHECK(hipGetLastError());
  EXPECT_ERR(hipMemcpyPeer(b, 1, a, 0, N * sizeof(int) + 1), hipErrorInvalidValue);
  (void)hipGetLastError();
  CHECK(hipMemsetD32Async((hipDeviceptr_t)a, 0x5eed, N, stream0));
  CHECK(hipMemcpyPeerAsync(b, 1, a, 0, N * sizeof(int), stream0));
  CHECK(hipStreamSynchronize(stream0));
  static int got[N];
  CHECK(hipMemcpy(got, b, sizeof got, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(got[i] == 0x5eed, "element %d of the peer copy is %#x", i, got[i]);

  step("an event is recorded only on a stream of its own device (clr hipEventRecord_common)");
  hipEvent_t event0;
  CHECK(hipEventCreate(&event0));
  CHECK(hipSetDevice(1));
  hipStream_t stream1;
  CHECK(hipStreamCreate(&stream1));
  EXPECT_ERR(hipEventRecord(event0, NULL), hipErrorInvalidHandle);
  REQUIRE(hipGetLastError() == hipErrorInvalidHandle, "the last error is not hipErrorInvalidHandle");
  EXPECT_ERR(hipEventRecord(event0, stream1), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventRecord(event0, hipStreamPerThread), hipErrorInvalidHandle);
  (void)hipGetLastError();
  /* Its own device's stream, named while device 1 is current, records. */
  CHECK(hipEventRecord(event0, stream0));
  CHECK(hipEventSynchronize(event0));
  CHECK(hipStreamDestroy(stream1));
  CHECK(hipSetDevice(0));
  CHECK(hipEventRecord(event0, NULL));
  CHECK(hipEventSynchronize(event0));
  CHECK(hipEventDestroy(event0));
  CHECK(hipStreamDestroy(stream0));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  return 1;
}

int main(void) {
  begin("hip_tests_answers");
  CHECK(hipSetDevice(0));
  hipModule_t module = rtc_module(kSource, "spin.hip", NULL);
  hipFunction_t spin;
  CHECK(hipModuleGetFunction(&spin, module, "spin"));
  api_names();
  kernel_name_ref(spin);
  external_semaphores();
  never_created_streams();
  null_stream_query(spin);
  invalid_async_copies();
  pageable_downloads();
  per_thread_stream_first_use();
  if (two_devices()) printf("two-device checks ran\n");
  CHECK(hipModuleUnload(module));
  printf("PASS hip_tests_answers\n");
  return 0;
}
